//! What one session shows of itself to the others: the side pane's session list, the switcher,
//! `pokeshell ls` and the web page read it. A session makes its own (`Session::brief`); the server
//! passes every session's to every other.

/// What one session shows of itself to the others (the side pane list, the switcher, `pokeshell ls`).
#[derive(Debug, Clone, PartialEq)]
pub struct SessionBrief {
    /// Stable, 1-based, given at creation (prefix+1…9 use it).
    pub number: u32,
    pub name: String,
    pub dir: String,
    pub attention: Attention,
    /// A few words: "working", "waiting for you: <question>", "gave up: …", "idle", …
    pub state: String,
    /// The running tool's name and when it started (wall ms: sessions have different mono clocks).
    pub tool: Option<(String, u64)>,
    pub last_intervention: Option<String>,
    pub created_wall_ms: u64,
    /// How many clients show this session; filled by the server (the session leaves 0).
    pub attached: usize,
    /// Tokens and cost since the session started.
    pub spend: Spend,
    /// The branch of the git checkout `dir` is in, and whether it has uncommitted changes; filled by
    /// the server's observer (the git watch of the binary crate), the session leaves them None.
    pub branch: Option<String>,
    pub dirty: Option<bool>,
    /// The SSH destination of a session on another machine (the server lists them, see
    /// the remote list of the binary crate); None for this machine's.
    pub machine: Option<String>,
    /// The share of pi's context window in use (0–100), when pi said.
    pub context_percent: Option<f64>,
    /// While a guard rail pauses the session: what allowing more grants ("allow $25.00 more").
    pub offer: Option<String>,
}

impl SessionBrief {
    /// A session known by these few words only: no tool, no intervention, nothing spent, no branch
    /// or machine, not attached (what a list, or a test of one, starts from).
    pub fn new(number: u32, name: &str, dir: &str, attention: Attention, state: &str) -> SessionBrief {
        SessionBrief {
            number,
            name: name.into(),
            dir: dir.into(),
            attention,
            state: state.into(),
            tool: None,
            last_intervention: None,
            created_wall_ms: 0,
            attached: 0,
            spend: Spend::default(),
            branch: None,
            dirty: None,
            machine: None,
            context_percent: None,
            offer: None,
        }
    }
}

/// How much a session needs the user. Ordered: the ones needing the user first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Attention {
    /// A guard rail stopped its run and asks the person (its budget, the day's budget, the call cap,
    /// no progress): first, because nothing happens there until the person answers.
    Paused,
    Question,
    GaveUp,
    Limit,
    Stalled,
    Working,
    Idle,
    Exited,
}

impl Attention {
    /// Its keyword in `ls --json` and the lists (docs/machines.md).
    pub fn keyword(self) -> &'static str {
        match self {
            Attention::Paused => "paused",
            Attention::Question => "question",
            Attention::GaveUp => "gave_up",
            Attention::Limit => "limit",
            Attention::Stalled => "stalled",
            Attention::Working => "working",
            Attention::Idle => "idle",
            Attention::Exited => "exited",
        }
    }
}

/// Sorts briefs the way every list shows them: the ones needing the user first, then by number.
pub fn order_briefs(briefs: &mut [SessionBrief]) {
    briefs.sort_by_key(|b| (b.attention, b.number));
}

/// Tokens and cost summed over some replies.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Spend {
    /// Prompt tokens not read from the cache.
    pub input: u64,
    pub output: u64,
    pub cache_read: u64,
    pub cache_write: u64,
    /// In US dollars, as pi priced the replies.
    pub cost_usd: f64,
    /// Some reply had a price: pi knows the model's prices (a model without them reports 0, which
    /// must not read as "free").
    pub priced: bool,
    /// How many replies were counted.
    pub replies: u64,
}

impl Spend {
    /// The cost in dollars, when pi priced any reply.
    pub fn cost(&self) -> Option<f64> {
        self.priced.then_some(self.cost_usd)
    }

    /// For the narrow side pane: tokens in (cache reads included) and out, and the cost:
    /// "20.3k/450 · $0.0123".
    pub fn short(&self) -> String {
        let input = self.input.saturating_add(self.cache_read);
        let mut out = format!("{}/{}", tokens(input), tokens(self.output));
        if let Some(cost) = self.cost() {
            out.push_str(&format!(" · {}", dollars(cost)));
        }
        out
    }

    /// One line: "12.3k in · 450 out · 8.1k cached · $0.0123".
    pub fn line(&self) -> String {
        let mut out = format!("{} in · {} out", tokens(self.input), tokens(self.output));
        if self.cache_read > 0 {
            out.push_str(&format!(" · {} cached", tokens(self.cache_read)));
        }
        if let Some(cost) = self.cost() {
            out.push_str(&format!(" · {}", dollars(cost)));
        }
        out
    }
}

/// A token count in a few characters: 950, 12.3k, 4.1M.
pub fn tokens(n: u64) -> String {
    match n {
        n if n < 1000 => n.to_string(),
        n if n < 100_000 => format!("{:.1}k", n as f64 / 1000.0),
        n if n < 1_000_000 => format!("{}k", n / 1000),
        n => format!("{:.1}M", n as f64 / 1e6),
    }
}

/// Dollars with the precision small sums need: $0.0042, $1.27.
pub fn dollars(usd: f64) -> String {
    if usd < 1.0 {
        format!("${usd:.4}")
    } else {
        format!("${usd:.2}")
    }
}

mod need;
pub use need::{Finished, Need, NeedKind};
