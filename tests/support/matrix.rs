//! The stall matrix's harness: pokeshell hosting real pi against the scripted model, with the timers
//! shortened through pokeshell's documented settings, a private intervention ledger, and helpers that
//! read the three places a row asserts on: the outer screen (footer, side pane), the requests the
//! model received, and the ledger.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use pokeshell::demo::model::RequestKind;
use serde_json::{Value, json};
use tempfile::TempDir;

use super::pi::PiEnv;
use super::pty::Pty;
use super::shell::{footer, side, submit};
use super::{ModelServer, RecordedRequest, START_WAIT, Step, WAIT};

pub const ROWS: u16 = 50;
pub const COLS: u16 = 150;

/// What every row starts from: short cooldowns (pokeshell's settings allow 0–1 s) and a wide side
/// pane, so ledger lines wrap less.
pub fn fast_settings() -> Value {
    json!({
        "poke": { "postCompactCooldownSeconds": 1 },
        "pokeshell": { "injectionCooldownSeconds": 1, "sidePaneWidth": 48 }
    })
}

/// A text of about `chars` characters, for history that compaction can cut.
pub fn long_text(label: &str, chars: usize) -> String {
    let mut text = format!("{label}: ");
    let mut n = 0;
    while text.len() < chars {
        n += 1;
        text.push_str(&format!("line {n} of the scripted notes about the build. "));
    }
    text
}

/// The whitespace-collapsed side pane, so a wrapped ledger line reads as one sentence.
pub fn side_flat(s: &vt100::Screen) -> String {
    side(s).split_whitespace().collect::<Vec<_>>().join(" ")
}

pub struct Matrix {
    pub server: ModelServer,
    pub env: PiEnv,
    pub pty: Pty,
    state: TempDir,
}

pub struct MatrixBuilder {
    settings: Value,
    model: Option<String>,
    pi_args: Vec<String>,
    extension: Option<String>,
    env: Vec<(String, String)>,
    /// US dollars per million tokens in, out and read from the cache.
    prices: Option<(f64, f64, f64)>,
}

impl MatrixBuilder {
    /// An extra variable in pokeshell's (and so pi's) environment.
    pub fn env(mut self, key: &str, value: &str) -> Self {
        self.env.push((key.to_string(), value.to_string()));
        self
    }

    /// Merged over [`fast_settings`] into the agent dir's settings.json (pi's and pokeshell's).
    pub fn settings(mut self, patch: Value) -> Self {
        pokeshell::demo::pi_files::merge_json(&mut self.settings, &patch);
        self
    }

    /// Every scripted model priced (US dollars per million tokens in, out, read from the cache).
    pub fn prices(mut self, input: f64, output: f64, cache_read: f64) -> Self {
        self.prices = Some((input, output, cache_read));
        self
    }

    /// `mock/mock-tiny`: the 16k window whose compaction threshold is 8000 tokens.
    pub fn tiny(mut self) -> Self {
        self.model = Some("mock/mock-tiny".into());
        self
    }

    /// An extra pi extension (TypeScript source) loaded next to the bridge.
    pub fn extension(mut self, source: &str) -> Self {
        self.extension = Some(source.to_string());
        self
    }

    /// Starts the server, the environment and pokeshell, and waits until pi and the bridge are up.
    pub fn start(self, server: ModelServer) -> Matrix {
        let state = tempfile::Builder::new()
            .prefix("pokeshell-state-")
            .tempdir()
            .expect("temp dir for the ledger");
        let mut builder = PiEnv::builder(&server.base_url())
            .settings(self.settings)
            .env("XDG_STATE_HOME", &state.path().to_string_lossy());
        if let Some(model) = &self.model {
            builder = builder.model(model);
        }
        if let Some((input, output, cache_read)) = self.prices {
            builder = builder.prices(input, output, cache_read);
        }
        for (key, value) in &self.env {
            builder = builder.env(key, value);
        }
        if let Some(source) = &self.extension {
            let path = state.path().join("matrix-extension.ts");
            std::fs::write(&path, source).expect("write the test extension");
            builder = builder.args(["-e".to_string(), path.to_string_lossy().into_owned()]);
        }
        let env = builder.args(self.pi_args).build();
        let pty = spawn_pokeshell(&env, &[]);
        Matrix {
            server,
            env,
            pty,
            state,
        }
    }
}

fn spawn_pokeshell(env: &PiEnv, pi_args: &[&str]) -> Pty {
    let pty = Pty::spawn(env.pokeshell_command(&[], pi_args), ROWS, COLS);
    wait_ready(&pty);
    pty
}

/// pi is up inside pokeshell and the bridge has connected (any model).
#[track_caller]
fn wait_ready(pty: &Pty) {
    pty.wait_until(
        "pi's footer, pokeshell's footer and a connected bridge",
        START_WAIT,
        |s| {
            let text = s.contents();
            text.contains("mock-") && footer(s).contains("📌 p:") && side_flat(s).contains("bridge connected")
        },
    );
}

impl Matrix {
    pub fn builder() -> MatrixBuilder {
        MatrixBuilder {
            settings: fast_settings(),
            model: None,
            pi_args: Vec::new(),
            extension: None,
            env: Vec::new(),
            prices: None,
        }
    }

    /// Types `prompt` and submits it; returns once the model has the request.
    #[track_caller]
    pub fn submit(&mut self, prompt: &str) {
        submit(&mut self.pty, &self.server, prompt);
    }

    /// Waits until pi shows `text` in its pane.
    #[track_caller]
    pub fn wait_text(&self, text: &str) {
        self.pty.wait_for_text(text, WAIT);
    }

    #[track_caller]
    pub fn wait_footer(&self, what: &str) {
        self.pty
            .wait_until(&format!("{what:?} in the footer"), WAIT, |s| {
                footer(s).contains(what)
            });
    }

    #[track_caller]
    pub fn wait_side(&self, what: &str) {
        self.pty
            .wait_until(&format!("{what:?} in the side pane"), WAIT, |s| {
                side_flat(s).contains(what)
            });
    }

    /// Ends pokeshell (SIGTERM, as a user closing the terminal would) and starts it again in the same
    /// environment with `pi_args` (e.g. `--continue`).
    #[track_caller]
    pub fn restart(&mut self, pi_args: &[&str]) {
        // As a user ends a session for good: pi is asked to quit, its client ends with pi's code.
        let home = self.pty.home().expect("the harness gave pokeshell a home");
        let out = home.pokeshell(&["kill", "1"]);
        assert!(out.status.success(), "pokeshell kill: {out:?}");
        let code = self.pty.wait_exit(WAIT);
        assert_eq!(code, 0, "pokeshell passes pi's clean exit on");
        self.pty = spawn_pokeshell(&self.env, pi_args);
        wait_ready(&self.pty);
    }

    // ---------------------------------------------------------------- what the model received

    /// Ordinary chat requests (no compaction summaries), in order.
    pub fn chat(&self) -> Vec<RecordedRequest> {
        self.server.chat_requests()
    }

    /// The text of every chat request's final message when that is a user message (what a hidden
    /// custom message, a wakeup or a typed prompt looks like to the model), one entry per request.
    pub fn trailing_user_texts(&self) -> Vec<String> {
        self.chat().iter().filter_map(trailing_user_text).collect()
    }

    /// The requests a poke started: their final message is the `[Poke]` text.
    pub fn pokes(&self) -> Vec<String> {
        self.trailing_user_texts()
            .into_iter()
            .filter(|t| t.starts_with("[Poke]"))
            .collect()
    }

    /// Waits until `n` chat requests arrived.
    #[track_caller]
    pub fn wait_chats(&self, n: usize) -> Vec<RecordedRequest> {
        let result = self
            .server
            .wait_until(&format!("{n} chat requests"), WAIT, |reqs| {
                reqs.iter().filter(|r| r.kind == RequestKind::Chat).count() >= n
            });
        match result {
            Ok(_) => self.chat(),
            Err(e) => self.pty.fail(&e.to_string()),
        }
    }

    /// Waits until a chat request ends with a user message containing `text`; returns its index.
    #[track_caller]
    pub fn wait_trailing(&self, text: &str) -> usize {
        self.wait_trailing_within(text, WAIT)
    }

    /// [`Matrix::wait_trailing`] with a deadline of its own, for a request that is due only after a
    /// wait longer than the usual one (a provider's reset time).
    pub fn wait_trailing_within(&self, text: &str, deadline: Duration) -> usize {
        let found = self
            .server
            .wait_until(&format!("a request ending with {text:?}"), deadline, |reqs| {
                reqs.iter()
                    .filter_map(trailing_user_text)
                    .any(|t| t.contains(text))
            });
        if let Err(e) = found {
            self.pty
                .fail(&format!("{e}; trailing texts: {:?}", self.trailing_user_texts()));
        }
        self.chat()
            .iter()
            .position(|r| trailing_user_text(r).is_some_and(|t| t.contains(text)))
            .unwrap_or_default()
    }

    /// Asserts that the model receives no further request (chat or summary) for `quiet`.
    #[track_caller]
    pub fn assert_model_quiet(&self, quiet: Duration) {
        let seen = self.server.model_requests().len();
        if let Ok(reqs) = self.server.wait_for_requests(seen + 1, quiet) {
            let last = reqs.last().and_then(trailing_user_text).unwrap_or_default();
            self.pty.fail(&format!(
                "the model received another request ({} in all) where silence was expected; its last user text: {last:?}",
                reqs.len()
            ));
        }
    }

    // ---------------------------------------------------------------- the ledger

    pub fn ledger_path(&self) -> PathBuf {
        self.state.path().join("pokeshell/interventions.jsonl")
    }

    /// Every ledger record so far.
    pub fn ledger(&self) -> Vec<Value> {
        read_ledger(&self.ledger_path())
    }

    /// Records of `rule` and `kind` (`action`, `declined`, `outcome`).
    pub fn records(&self, rule: &str, kind: &str) -> Vec<Value> {
        self.ledger()
            .into_iter()
            .filter(|r| r["rule"] == rule && r["kind"] == kind)
            .collect()
    }

    /// Waits for a record of `rule` and `kind` whose reason contains `reason`; returns it.
    #[track_caller]
    pub fn wait_record(&self, rule: &str, kind: &str, reason: &str) -> Value {
        let deadline = Instant::now() + WAIT;
        loop {
            if let Some(r) = self
                .records(rule, kind)
                .into_iter()
                .find(|r| r["reason"].as_str().is_some_and(|t| t.contains(reason)))
            {
                return r;
            }
            if Instant::now() >= deadline {
                let all: Vec<String> = self.ledger().iter().map(Value::to_string).collect();
                self.pty.fail(&format!(
                    "no ledger record {rule}/{kind} with {reason:?}; the ledger:\n{}",
                    all.join("\n")
                ));
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }
}

/// The final message's text when the request ends with a user message.
pub fn trailing_user_text(r: &RecordedRequest) -> Option<String> {
    let last = r.messages().last()?;
    if last["role"] != "user" {
        return None;
    }
    Some(match &last["content"] {
        Value::String(s) => s.clone(),
        Value::Array(parts) => parts
            .iter()
            .filter_map(|p| p["text"].as_str())
            .collect::<Vec<_>>()
            .join("\n"),
        _ => String::new(),
    })
}

pub fn read_ledger(path: &Path) -> Vec<Value> {
    std::fs::read_to_string(path)
        .unwrap_or_default()
        .lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect()
}

/// The two prompts of docs/scenario-format.md that end in a mid-run compaction: a first answer with
/// some history, then a `bash` call whose 9000 reported tokens cross mock-tiny's threshold. Queues
/// the model's side; the caller submits the prompts.
pub fn queue_compaction_history(server: &ModelServer) {
    server.push(Step::text(long_text("Notes", 1600)).with_prompt_tokens(2000));
    server.push(Step::bash("seq 1 600").with_prompt_tokens(9000));
}
