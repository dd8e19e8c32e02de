//! `pokeshell send`, `wait`, `read` and `events`: the commands over [`super::drive`], what they print
//! and their exit statuses. A session named `DEST:NAME` is on another machine: the same command runs
//! there through ssh (`ssh -T DEST pokeshell …`), its output and status passed on.

use std::io::{Read, Write};
use std::time::Duration;

use super::drive::{self, WaitEnd, printable};
use crate::cli::drive_args::{EventsArgs, ReadArgs, SendArgs, UntilArg, WaitArgs};
use crate::machines::ssh;
use pokeshell_core::drive::{Event, MAX_TEXT_BYTES, Message, Until};
use pokeshell_core::safe_text::escape;

fn fail(message: &str) -> i32 {
    eprintln!("pokeshell: {}", escape(message));
    1
}

impl From<UntilArg> for Until {
    fn from(u: UntilArg) -> Until {
        match u {
            UntilArg::Idle => Until::Idle,
            UntilArg::NeedsYou => Until::NeedsYou,
            UntilArg::Exited => Until::Exited,
        }
    }
}

/// Runs `pokeshell WORDS` on `dest` through ssh, with `input` on its standard input; its status.
/// What the other machine prints is passed on line by line as it comes (`events` follows), with
/// anything a terminal would act on written out: that machine's text is not this terminal's
/// master.
fn remote(dest: &str, words: &[String], input: Option<String>) -> i32 {
    let mut all = vec!["pokeshell".to_string()];
    all.extend(words.iter().cloned());
    let mut cmd = ssh::interactive(dest, &ssh::command_line(&all), false);
    if input.is_some() {
        cmd.stdin(std::process::Stdio::piped());
    }
    cmd.stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped());
    let mut child = match cmd.spawn() {
        Ok(c) => c,
        Err(e) => return fail(&format!("cannot run {}: {e}", ssh::ssh_words()[0])),
    };
    let relays = [
        child.stdout.take().map(|o| relay(o, false)),
        child.stderr.take().map(|e| relay(e, true)),
    ];
    if let (Some(text), Some(mut stdin)) = (input, child.stdin.take()) {
        let _ = stdin.write_all(text.as_bytes());
    }
    let status = child.wait().map(|s| s.code());
    for relay in relays.into_iter().flatten() {
        let _ = relay.join();
    }
    match status {
        Ok(Some(255)) => {
            eprintln!(
                "pokeshell: ssh to {} failed (see its message above)",
                escape(dest)
            );
            255
        }
        Ok(Some(c)) => c,
        Ok(None) | Err(_) => 1,
    }
}

/// Copies `from` to this process's standard output (or error), a line at a time, made safe.
fn relay(from: impl Read + Send + 'static, to_stderr: bool) -> std::thread::JoinHandle<()> {
    std::thread::spawn(move || {
        use std::io::BufRead;
        for line in std::io::BufReader::new(from).split(b'\n') {
            let Ok(line) = line else { return };
            let text = pokeshell_core::safe_text::escape_line(&String::from_utf8_lossy(&line), false);
            let written = if to_stderr {
                writeln!(std::io::stderr(), "{text}")
            } else {
                let mut out = std::io::stdout().lock();
                writeln!(out, "{text}").and_then(|()| out.flush())
            };
            if written.is_err() {
                return;
            }
        }
    })
}

/// The text of `send`: its words, or standard input for `-` (at most one byte past the bound is
/// read, so that an endless pipe is refused rather than swallowed).
fn text_of(words: &[String]) -> Result<String, String> {
    if words != ["-"] {
        return Ok(words.join(" "));
    }
    let mut bytes = Vec::new();
    std::io::stdin()
        .take(MAX_TEXT_BYTES as u64 + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| format!("cannot read standard input: {e}"))?;
    String::from_utf8(bytes).map_err(|_| "standard input is not UTF-8 text".to_string())
}

/// `pokeshell send SESSION TEXT...`.
pub fn send(args: &SendArgs) -> i32 {
    let text = match text_of(&args.text).and_then(|t| {
        pokeshell_core::drive::check_text(&t)?;
        Ok(t)
    }) {
        Ok(t) => t,
        Err(e) => return fail(&e),
    };
    if let Some((dest, name)) = ssh::split_target(&args.session) {
        let mut words = vec!["send".to_string(), name.to_string()];
        if args.steer {
            words.push("--steer".into());
        }
        words.push("-".into());
        return remote(dest, &words, Some(text));
    }
    match drive::send(&args.session, text, args.steer) {
        Ok(_) => 0,
        Err(e) => fail(&e),
    }
}

/// The longest `--timeout` kept as one: a hundred years.
const LONGEST_TIMEOUT: Duration = Duration::from_secs(100 * 365 * 24 * 3600);

/// `pokeshell wait SESSION [--until …] [--timeout SECS]`.
pub fn wait(args: &WaitArgs) -> i32 {
    let timeout = match args.timeout {
        Some(t) if !(t.is_finite() && t >= 0.0) => {
            return fail(&format!("--timeout {t}: give a number of seconds, 0 or more"));
        }
        // A timeout past a century is no timeout (and would not fit a deadline).
        t => t
            .and_then(|t| Duration::try_from_secs_f64(t).ok())
            .filter(|d| *d <= LONGEST_TIMEOUT),
    };
    let until = Until::from(args.until);
    if let Some((dest, name)) = ssh::split_target(&args.session) {
        let mut words = vec![
            "wait".to_string(),
            name.to_string(),
            "--until".into(),
            until.word().into(),
        ];
        if let Some(t) = args.timeout {
            words.extend(["--timeout".to_string(), t.to_string()]);
        }
        return remote(dest, &words, None);
    }
    match drive::wait(&args.session, until, timeout) {
        Ok(end) => {
            match &end {
                WaitEnd::TimedOut => eprintln!(
                    "pokeshell: {} was not {} within {} s",
                    escape(&args.session),
                    until.word(),
                    args.timeout.unwrap_or_default()
                ),
                WaitEnd::Told { session, state, .. } if end.status() != 0 => {
                    eprintln!("pokeshell: {}: {}", escape(session), escape(state))
                }
                WaitEnd::Told { .. } => {}
            }
            i32::from(end.status())
        }
        Err(e) => fail(&e),
    }
}

/// One message as `read --last` prints it: a header line, the text, the tool calls.
fn message_text(m: &Message) -> String {
    let mut head = match (m.role.as_str(), &m.tool_name) {
        ("tool_result", Some(tool)) => format!("── tool result: {} ", escape(tool)),
        (role, _) => format!("── {role} "),
    };
    if m.is_error == Some(true) {
        head.push_str("(error) ");
    }
    head.push_str("──");
    let mut out = vec![head];
    if !m.text.is_empty() {
        out.push(printable(&m.text));
    }
    for call in &m.tool_calls {
        out.push(format!(
            "→ {} {}",
            escape(&call.name),
            escape(&call.arguments.to_string())
        ));
    }
    if let Some(error) = &m.error {
        out.push(format!("error: {}", escape(error)));
    }
    out.join("\n")
}

/// Messages as `read --last` prints them, oldest first; `truncated` says older ones are gone.
pub fn messages_text(messages: &[Message], truncated: bool) -> String {
    let mut text: Vec<String> = Vec::new();
    if truncated {
        text.push("(older messages are no longer kept)".into());
    }
    text.extend(messages.iter().map(message_text));
    text.join("\n")
}

/// Writes `text` and a newline to stdout; a closed pipe ends quietly.
fn out(text: &str) -> bool {
    let mut stdout = std::io::stdout().lock();
    writeln!(stdout, "{text}").and_then(|()| stdout.flush()).is_ok()
}

/// `pokeshell read SESSION [--json] [--last N]`.
pub fn read(args: &ReadArgs) -> i32 {
    if let Some((dest, name)) = ssh::split_target(&args.session) {
        let mut words = vec!["read".to_string(), name.to_string()];
        if args.json {
            words.push("--json".into());
        }
        if let Some(n) = args.last {
            words.extend(["--last".to_string(), n.to_string()]);
        }
        return remote(dest, &words, None);
    }
    let doc = match drive::read(&args.session, args.last) {
        Ok(d) => d,
        Err(e) => return fail(&e),
    };
    if args.json {
        return match serde_json::to_string(&doc) {
            Ok(text) => {
                out(&text);
                0
            }
            Err(e) => fail(&e.to_string()),
        };
    }
    if args.last.is_some() {
        out(&messages_text(&doc.messages, doc.truncated));
        return 0;
    }
    match &doc.reply {
        Some(reply) => {
            out(&printable(reply));
            0
        }
        None => fail(&format!("{} has no reply yet ({})", doc.session, doc.state)),
    }
}

/// One event as a line of text: the local time, the session, what happened.
fn event_line(e: &Event) -> String {
    let offset = crate::server::event_loop::clock::system_offset_secs(e.at_ms);
    format!(
        "{} {} {}",
        pokeshell_core::format::clock(e.at_ms, offset),
        escape(&e.session),
        escape(&e.line())
    )
}

/// `pokeshell events [--json] [SESSION...]`.
pub fn events(args: &EventsArgs) -> i32 {
    let dests: Vec<(&str, &str)> = args
        .sessions
        .iter()
        .filter_map(|s| ssh::split_target(s))
        .collect();
    if let Some((dest, _)) = dests.first() {
        if dests.len() != args.sessions.len() || dests.iter().any(|(d, _)| d != dest) {
            return fail("`events` follows one machine at a time: name sessions of one machine only");
        }
        let mut words = vec!["events".to_string()];
        if args.json {
            words.push("--json".into());
        }
        words.extend(dests.iter().map(|(_, n)| n.to_string()));
        return remote(dest, &words, None);
    }
    let json = args.json;
    let result = drive::events(&args.sessions, |e| {
        let line = if json {
            serde_json::to_string(&e).unwrap_or_default()
        } else {
            event_line(&e)
        };
        out(&line)
    });
    match result {
        Ok(()) => 0,
        Err(e) => fail(&e),
    }
}
