//! One session as `ls` and the web view's list show it ([`Listing`]).

use serde::{Deserialize, Serialize};

/// One session in a [`super::Down::Listing`].
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Listing {
    pub name: String,
    pub dir: String,
    pub state: String,
    pub tool: Option<String>,
    /// How long the running tool has run, in seconds, as `tool` says it (a page counts on from it).
    #[serde(default)]
    pub tool_secs: Option<u64>,
    pub last_intervention: Option<String>,
    pub age_secs: u64,
    /// How many clients are attached.
    pub attached: usize,
    /// Tokens since the session started: prompt tokens not from the cache, output, cache reads.
    #[serde(default)]
    pub tokens_in: u64,
    #[serde(default)]
    pub tokens_out: u64,
    #[serde(default)]
    pub cache_read: u64,
    /// US dollars, as pi priced the replies; `None` when pi has no prices for the model.
    #[serde(default)]
    pub cost_usd: Option<f64>,
    /// How much it needs the user (`crate::machines::schema::ATTENTION`); empty while starting.
    #[serde(default)]
    pub attention: String,
    /// Filled by the client from `dir` (`crate::git::worktree`), never sent by the server.
    #[serde(default, skip)]
    pub branch: Option<String>,
    #[serde(default, skip)]
    pub dirty: Option<bool>,
    /// The share of pi's context window in use, 0–100.
    #[serde(default)]
    pub context_percent: Option<f64>,
    /// While a guard rail pauses the session: what allowing more grants ("allow $25.00 more").
    #[serde(default)]
    pub offer: Option<String>,
    /// The commit the session's changes are read against (see `SessionSpec::base`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub base: Option<String>,
    /// Changes whenever the files of the session's checkout change (as the server's watch last saw
    /// them): a Changes view reads the diff again when it does.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub changes: Option<String>,
}

impl Listing {
    /// Whether the user means this session by `name`: its name, its number or `number:name`.
    pub fn answers_to(&self, name: &str) -> bool {
        let (number, bare) = self.name.split_once(':').unwrap_or(("", self.name.as_str()));
        self.name == name || bare == name || number == name
    }
}
