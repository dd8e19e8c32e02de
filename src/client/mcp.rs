//! `pokeshell mcp`: a Model Context Protocol server on standard input and output, so that an agent
//! (pi, with `pi mcp add pokeshell --exposure direct -- pokeshell mcp`) drives sessions through tools instead of shell
//! commands. Each tool does what its command does, with the same checks: sending, waiting, reading
//! and ending go through [`super::drive`] as the commands do, a new session is `pokeshell new -d`
//! itself, and a session on another machine is the command run there through ssh. Built on `rmcp`,
//! the protocol's official Rust SDK (docs/driving.md says why).

use std::process::{Command, Stdio};
use std::time::Duration;

use rmcp::handler::server::router::tool::ToolRouter;
use rmcp::handler::server::wrapper::Parameters;
use rmcp::model::{CallToolResult, ContentBlock, ProgressNotificationParam, RequestMetaObject};
use rmcp::{
    ErrorData, Peer, RoleServer, ServerHandler, ServiceExt, schemars, tool, tool_handler, tool_router,
};
use serde::Deserialize;

use super::drive::{self, WaitEnd};
use crate::machines::ssh;
use pokeshell_core::drive::{Outcome, Until};

/// A wait with no timeout asked for ends after this long: pi gives up on a tool call after 60 s
/// unless progress keeps it waiting (the server sends some while it waits, when the client asks).
const WAIT_DEFAULT: Duration = Duration::from_secs(50);
/// The longest wait one call may ask for.
const WAIT_MAX: Duration = Duration::from_secs(3600);
/// How often a long wait tells the client it is still waiting.
const PROGRESS_EVERY: Duration = Duration::from_secs(15);

#[derive(Debug, Deserialize, schemars::JsonSchema)]
pub struct ListSessions {
    /// Another machine's sessions (an SSH destination of `pokeshell.machines`); this machine's
    /// when left out.
    #[serde(default)]
    pub machine: Option<String>,
}

#[derive(Debug, Deserialize, schemars::JsonSchema)]
pub struct NewSession {
    /// The directory the agent works in (default: where this server runs).
    #[serde(default)]
    pub directory: Option<String>,
    /// The session's name (default: the branch's, or the directory's).
    #[serde(default)]
    pub name: Option<String>,
    /// Run the agent in a git worktree of this branch beside the repository (created, or reused).
    #[serde(default)]
    pub worktree: Option<String>,
    /// The agent's first prompt: its work starts at once.
    #[serde(default)]
    pub prompt: Option<String>,
    /// Start it on another machine (an SSH destination).
    #[serde(default)]
    pub machine: Option<String>,
}

#[derive(Debug, Deserialize, schemars::JsonSchema)]
pub struct SendMessage {
    /// The session: its name, its number, or DEST:NAME on another machine.
    pub session: String,
    /// The prompt for its agent.
    pub text: String,
    /// While the agent works, steer the message in at once instead of after its current work.
    #[serde(default)]
    pub steer: bool,
}

/// What to wait for.
#[derive(Debug, Clone, Copy, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum UntilParam {
    /// The run is over (after a message: the run that message started).
    Idle,
    /// The session needs a person: a question, a rule that gave up, a provider limit, a stall.
    NeedsYou,
    /// The session ended.
    Exited,
}

#[derive(Debug, Deserialize, schemars::JsonSchema)]
pub struct WaitFor {
    /// The session: its name, its number, or DEST:NAME on another machine.
    pub session: String,
    /// What to wait for (default: idle).
    #[serde(default)]
    pub until: Option<UntilParam>,
    /// Give up after this many seconds (default 50, at most 3600); call again to go on waiting.
    #[serde(default)]
    pub timeout_seconds: Option<f64>,
}

#[derive(Debug, Deserialize, schemars::JsonSchema)]
pub struct ReadReply {
    /// The session: its name, its number, or DEST:NAME on another machine.
    pub session: String,
    /// The last N messages (tool calls and results included) instead of the last reply.
    #[serde(default)]
    pub last: Option<u32>,
}

#[derive(Debug, Deserialize, schemars::JsonSchema)]
pub struct KillSession {
    /// The session: its name, its number, or DEST:NAME on another machine.
    pub session: String,
}

/// The MCP server: its tools, routed by `rmcp`.
#[derive(Clone)]
pub struct Pokeshell {
    tool_router: ToolRouter<Self>,
}

impl Default for Pokeshell {
    fn default() -> Self {
        Self {
            tool_router: Self::tool_router(),
        }
    }
}

fn text(result: Result<String, String>) -> Result<CallToolResult, ErrorData> {
    Ok(match result {
        Ok(t) => CallToolResult::success(vec![ContentBlock::text(t)]),
        Err(e) => CallToolResult::error(vec![ContentBlock::text(e)]),
    })
}

/// Runs a blocking call off the protocol's thread.
async fn blocking<T: Send + 'static>(
    f: impl FnOnce() -> Result<T, String> + Send + 'static,
) -> Result<T, String> {
    tokio::task::spawn_blocking(f)
        .await
        .unwrap_or_else(|e| Err(format!("the call failed: {e}")))
}

/// `pokeshell ARGS` itself (the same checks as the command), its standard input closed: what it
/// printed, or why it failed.
fn pokeshell(args: &[String], input: Option<&str>) -> Result<String, String> {
    let (code, out, err) = pokeshell_run(args, input)?;
    if code == 0 { Ok(out) } else { Err(err) }
}

/// [`pokeshell`]'s exit status, what it printed and what it complained of.
fn pokeshell_run(args: &[String], input: Option<&str>) -> Result<(i32, String, String), String> {
    let exe = std::env::current_exe().map_err(|e| format!("cannot find pokeshell's own program: {e}"))?;
    let mut child = Command::new(exe)
        .args(args)
        .stdin(if input.is_some() {
            Stdio::piped()
        } else {
            Stdio::null()
        })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| format!("cannot run pokeshell: {e}"))?;
    if let (Some(text), Some(mut stdin)) = (input, child.stdin.take()) {
        use std::io::Write;
        let _ = stdin.write_all(text.as_bytes());
    }
    let out = child
        .wait_with_output()
        .map_err(|e| format!("cannot run pokeshell: {e}"))?;
    let said = |b: &[u8]| String::from_utf8_lossy(b).trim().replace("pokeshell: ", "");
    Ok((
        out.status.code().unwrap_or(1),
        said(&out.stdout),
        said(&out.stderr),
    ))
}

/// A session on another machine (`DEST:NAME`): the command goes there through ssh.
fn remote(session: &str) -> bool {
    ssh::split_target(session).is_some()
}

/// What a wait's end says to the agent.
fn said_of(end: &WaitEnd, session: &str, until: Until, waited: Duration) -> String {
    match end {
        WaitEnd::TimedOut => format!(
            "{session} was not {} within {} s; call wait_for again to go on waiting",
            until.word(),
            waited.as_secs()
        ),
        WaitEnd::Told {
            outcome,
            session,
            state,
            ..
        } => match outcome {
            Outcome::Reached => format!("{session} is {}: {state}", until.word()),
            Outcome::Stopped => format!("{session} stopped and needs a person: {state}"),
            Outcome::Ended => format!("{session} ended: {state}"),
        },
    }
}

#[tool_router]
impl Pokeshell {
    #[tool(
        description = "List the pokeshell sessions (agents) with their state, running tool, branch, \
                       directory, tokens and cost, as JSON."
    )]
    async fn list_sessions(
        &self,
        Parameters(p): Parameters<ListSessions>,
    ) -> Result<CallToolResult, ErrorData> {
        text(
            blocking(move || match p.machine {
                // That machine's listing, asked as `ls --all` asks it.
                Some(m) => {
                    let answer = crate::machines::ask::ask(&m, Duration::from_secs(10));
                    let doc = answer.result.map_err(|e| format!("{m}: {e}"))?;
                    serde_json::to_string(&doc).map_err(|e| e.to_string())
                }
                None => pokeshell(&["ls".to_string(), "--json".to_string()], None),
            })
            .await,
        )
    }

    #[tool(
        description = "Start a new agent session, detached: in a directory, optionally in a git worktree \
                       of a branch of its own, with a first prompt that starts its work at once. \
                       Returns the session's number and name."
    )]
    async fn new_session(&self, Parameters(p): Parameters<NewSession>) -> Result<CallToolResult, ErrorData> {
        if let Some(prompt) = &p.prompt
            && let Err(e) = pokeshell_core::drive::check_text(prompt)
        {
            return text(Err(e));
        }
        let mut args = vec!["new".to_string(), "-d".to_string()];
        let mut opt = |flag: &str, v: Option<String>| {
            if let Some(v) = v {
                args.extend([flag.to_string(), v]);
            }
        };
        opt("--dir", p.directory);
        opt("--name", p.name);
        opt("--worktree", p.worktree);
        opt("--on", p.machine);
        if let Some(prompt) = p.prompt.as_deref().map(pokeshell_core::drive::defused) {
            args.push("--".into());
            // pi reads a word starting with a dash as an option: its own `--` ends them.
            if prompt.starts_with('-') {
                args.push("--".into());
            }
            args.push(prompt);
        }
        text(blocking(move || pokeshell(&args, None)).await)
    }

    #[tool(
        description = "Give a session's agent a prompt. While it works, the message waits until its \
                       current work is done (steer: true to steer it in at once). Returns once the \
                       agent has it; then wait_for and read_reply."
    )]
    async fn send_message(
        &self,
        Parameters(p): Parameters<SendMessage>,
    ) -> Result<CallToolResult, ErrorData> {
        text(
            blocking(move || {
                if remote(&p.session) {
                    let mut args = vec!["send".to_string(), p.session.clone()];
                    if p.steer {
                        args.push("--steer".into());
                    }
                    args.push("-".into());
                    return pokeshell(&args, Some(&p.text)).map(|_| format!("{} has the message", p.session));
                }
                drive::send(&p.session, p.text, p.steer).map(|_| format!("{} has the message", p.session))
            })
            .await,
        )
    }

    #[tool(
        description = "Wait until a session is idle (the run the last message started is over), needs a \
                       person, or has exited. Returns what it reached, or that the time ran out."
    )]
    async fn wait_for(
        &self,
        Parameters(p): Parameters<WaitFor>,
        meta: RequestMetaObject,
        client: Peer<RoleServer>,
    ) -> Result<CallToolResult, ErrorData> {
        let until = match p.until.unwrap_or(UntilParam::Idle) {
            UntilParam::Idle => Until::Idle,
            UntilParam::NeedsYou => Until::NeedsYou,
            UntilParam::Exited => Until::Exited,
        };
        let timeout = match p.timeout_seconds {
            Some(t) if !(t.is_finite() && t >= 0.0) => {
                return text(Err(format!(
                    "timeout_seconds {t}: give a number of seconds, 0 or more"
                )));
            }
            // Finite and not negative, but perhaps past what a Duration holds (1e308).
            Some(t) => Duration::try_from_secs_f64(t).map_or(WAIT_MAX, |d| d.min(WAIT_MAX)),
            None => WAIT_DEFAULT,
        };
        let session = p.session.clone();
        let waiting = blocking(move || {
            if !remote(&session) {
                let end = drive::wait(&session, until, Some(timeout))?;
                return Ok(said_of(&end, &session, until, timeout));
            }
            let secs = timeout.as_secs_f64().to_string();
            let args = ["wait", &session, "--until", until.word(), "--timeout", &secs].map(String::from);
            let (code, _, err) = pokeshell_run(&args, None)?;
            match u8::try_from(code) {
                Ok(0) => Ok(format!("{session} is {}", until.word())),
                Ok(drive::TIMED_OUT) => Ok(said_of(&WaitEnd::TimedOut, &session, until, timeout)),
                Ok(drive::STOPPED) => Ok(format!("stopped and needs a person: {err}")),
                Ok(drive::ENDED) => Ok(format!("ended: {err}")),
                _ => Err(err),
            }
        });
        // While it waits, the client hears that it does (when it gave a progress token).
        let token = meta.get_progress_token();
        let progress = async {
            let Some(token) = token else {
                return std::future::pending().await;
            };
            let mut ticks = 0.0;
            loop {
                tokio::time::sleep(PROGRESS_EVERY).await;
                ticks += 1.0;
                let note = ProgressNotificationParam::new(token.clone(), ticks).with_message("still waiting");
                let _ = client.notify_progress(note).await;
            }
        };
        let end = tokio::select! {
            end = waiting => end,
            () = progress => unreachable!("progress never ends"),
        };
        text(end)
    }

    #[tool(
        description = "Read a session's last reply, or its last N messages (with their tool calls and \
                       results)."
    )]
    async fn read_reply(&self, Parameters(p): Parameters<ReadReply>) -> Result<CallToolResult, ErrorData> {
        text(
            blocking(move || {
                if remote(&p.session) {
                    let mut args = vec!["read".to_string(), p.session.clone()];
                    if let Some(n) = p.last {
                        args.extend(["--last".to_string(), n.to_string()]);
                    }
                    return pokeshell(&args, None);
                }
                let doc = drive::read(&p.session, p.last)?;
                if p.last.is_some() {
                    return Ok(super::drive_cli::messages_text(&doc.messages, doc.truncated));
                }
                doc.reply
                    .ok_or_else(|| format!("{} has no reply yet ({})", doc.session, doc.state))
            })
            .await,
        )
    }

    #[tool(description = "End a session: its agent is asked to quit, and stopped after a grace.")]
    async fn kill_session(
        &self,
        Parameters(p): Parameters<KillSession>,
    ) -> Result<CallToolResult, ErrorData> {
        text(
            blocking(move || {
                if remote(&p.session) {
                    return pokeshell(&["kill".to_string(), p.session], None);
                }
                drive::kill(&p.session)
            })
            .await,
        )
    }
}

#[tool_handler(
    router = self.tool_router,
    name = "pokeshell",
    instructions = "Drive other pokeshell sessions (pi agents): start one per task, in a worktree of its \
                    own, give it work, wait for it, read its answer, end it. Sessions you start are \
                    bounded; you cannot message or wait for your own session."
)]
impl ServerHandler for Pokeshell {}

/// Serves MCP on standard input and output until the client closes it; the exit code.
pub fn run() -> i32 {
    let rt = match tokio::runtime::Builder::new_current_thread().enable_all().build() {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("pokeshell: cannot start the async runtime: {e}");
            return 1;
        }
    };
    let served = rt.block_on(async {
        let service = Pokeshell::default()
            .serve(rmcp::transport::stdio())
            .await
            .map_err(|e| e.to_string())?;
        service.waiting().await.map(|_| ()).map_err(|e| e.to_string())
    });
    match served {
        Ok(()) => 0,
        Err(e) => {
            eprintln!("pokeshell mcp: {e}");
            1
        }
    }
}
