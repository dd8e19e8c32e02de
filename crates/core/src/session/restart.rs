//! Keeping pi alive: a pi that stopped answering (no heartbeat from its bridge and no screen output
//! for `poke.unresponsiveSeconds`), that ignores an automatic abort for 30 s, or that dies mid-run is
//! relaunched on its session file, at most `poke.maxRestartsPerHour` times an hour. The time
//! pokeshell itself did not run (it was stopped, or its loop was held up) is not silence of pi's: the
//! loop reports it as [`super::Input::LoopAway`] and the watch moves its marks forward by as much.
//! A session that a restarted pokeshell server brought back while its agent was mid-run is treated
//! like one of these restarts at its first child (RST-S1), without counting against the hourly bound.

use super::{Effect, Session};
use crate::bridge::Hello;
use crate::config::KeyId;
use crate::pi_args::TAKES_NEXT;
use crate::supervisor::ledger::rule;
use crate::supervisor::{self as sup, Now};
use crate::ui::theme::Tone;

/// An automatic abort that has not settled after this long means pi cannot stop its run.
pub const ABORT_SETTLE_MS: u64 = 30_000;
/// The window `poke.maxRestartsPerHour` counts in.
const HOUR_MS: u64 = 3_600_000;

/// Why pi is restarted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RestartCause {
    /// Neither a heartbeat nor screen output for this long.
    Frozen { silent_ms: u64 },
    /// An automatic abort did not settle within [`ABORT_SETTLE_MS`].
    AbortIgnored,
    /// pi exited mid-run: by this signal, or with this code.
    Died { code: i32, signal: Option<i32> },
    /// pokeshell's server was restarted while the agent was mid-run; this pi is its relaunch.
    ServerRestarted,
}

impl RestartCause {
    pub fn rule(self) -> &'static str {
        match self {
            Self::Frozen { .. } => rule::RESTART_FROZEN,
            Self::AbortIgnored => rule::RESTART_ABORT,
            Self::Died { .. } => rule::RESTART_DIED,
            Self::ServerRestarted => rule::RESTART_SERVER,
        }
    }

    /// What happened, in a few words (the ledger, the side pane and the message to the model).
    pub fn describe(self) -> String {
        match self {
            Self::Frozen { silent_ms } => {
                format!("pi stopped responding for {} s", silent_ms / 1000)
            }
            Self::AbortIgnored => format!(
                "pi did not stop its run within {} s of an automatic abort",
                ABORT_SETTLE_MS / 1000
            ),
            Self::Died {
                signal: Some(sig), ..
            } => format!("pi was killed by signal {sig}"),
            Self::Died { code, .. } => format!("pi exited with code {code}"),
            Self::ServerRestarted => {
                "pokeshell's server was restarted while the agent was mid-run".to_string()
            }
        }
    }
}

/// Signals no program ends on by choice: SIGKILL (the OOM killer, a `kill -9`) and the crashes
/// (SIGILL, SIGABRT, SIGBUS, SIGFPE, SIGSEGV), as Linux numbers them. TERM, HUP and INT ask a program
/// to end; an idle pi that obeys one is not brought back.
fn killed_outright(signal: i32) -> bool {
    matches!(signal, 4 | 6 | 7 | 8 | 9 | 11)
}

/// The watch over one pi and the restarts it led to.
#[derive(Debug, Default)]
pub struct Watch {
    /// The last sign of life (mono ms): a bridge line, screen output, the child's start.
    alive_at: Option<u64>,
    /// This child's bridge said hello, so heartbeats are due every few seconds.
    heartbeats: bool,
    /// The child has exited (and no new one started).
    exited: bool,
    /// The agent is in a run, as the bridge last told.
    pub mid_run: bool,
    /// When an automatic abort went out that has not settled yet (mono ms).
    abort_at: Option<u64>,
    /// pi's session file, from its bridge's hello.
    session_file: Option<String>,
    /// When each restart happened (mono ms).
    restarts: Vec<u64>,
    /// A relaunch was asked for and the new child has not started yet.
    pub restarting: Option<RestartCause>,
    /// The last restart (or refusal) in words, for the side pane.
    pub last: Option<(String, Tone)>,
    /// A relaunch that could not start, and why: pi's directory cannot be used. A poke tries again.
    pub not_started: Option<(RestartCause, String)>,
}

impl Watch {
    pub fn child_started(&mut self, now: Now) {
        self.alive_at = Some(now.mono_ms);
        self.heartbeats = false;
        self.exited = false;
        self.abort_at = None;
        self.restarting = None;
        self.not_started = None;
    }

    pub fn alive(&mut self, now: Now) {
        self.alive_at = Some(now.mono_ms);
    }

    pub fn connected(&mut self, hello: &Hello, now: Now) {
        self.heartbeats = true;
        if hello.session_file.is_some() {
            self.session_file = hello.session_file.clone();
        }
        self.alive(now);
    }

    /// pi started a session in this file (`None`: an in-memory one; the last file is kept).
    pub fn session_started(&mut self, file: Option<&str>) {
        if let Some(file) = file {
            self.session_file = Some(file.to_string());
        }
    }

    /// The bridge went away: no heartbeats are due until it says hello again. A frozen pi keeps its
    /// connection open; one that lost it for another reason is not taken for frozen.
    pub fn disconnected(&mut self) {
        self.heartbeats = false;
    }

    /// No restart now: the watch waits for pi's next sign of life.
    pub fn stand_down(&mut self) {
        self.alive_at = None;
        self.abort_at = None;
    }

    pub fn exited(&mut self) {
        self.exited = true;
    }

    pub fn abort_sent(&mut self, now: Now) {
        self.abort_at.get_or_insert(now.mono_ms);
    }

    /// The run started, settled or a new session began: no abort is waiting any more.
    pub fn settled(&mut self) {
        self.mid_run = false;
        self.abort_at = None;
    }

    /// pokeshell did not run for about `ms` (the loop only knows it to within its wake interval):
    /// none of that time counts as pi's silence, and since pi may have been blocked on a terminal
    /// nobody read meanwhile, it gets the whole limit again from pokeshell's return.
    pub fn away(&mut self, ms: u64, now: Now) {
        if let Some(t) = &mut self.alive_at {
            *t = now.mono_ms;
        }
        if let Some(t) = &mut self.abort_at {
            *t = (*t + ms).min(now.mono_ms);
        }
    }

    /// Restarts within the last hour.
    pub fn recent(&self, now: Now) -> usize {
        self.restarts
            .iter()
            .filter(|t| now.mono_ms.saturating_sub(**t) < HOUR_MS)
            .count()
    }

    pub fn total(&self) -> usize {
        self.restarts.len()
    }

    /// Whether pi should be restarted now, and why (`limit_ms`: `poke.unresponsiveSeconds` in ms, 0
    /// for off).
    pub fn due(&self, limit_ms: u64, now: Now) -> Option<RestartCause> {
        if self.exited || self.restarting.is_some() {
            return None;
        }
        if self
            .abort_at
            .is_some_and(|t| now.mono_ms.saturating_sub(t) >= ABORT_SETTLE_MS)
        {
            return Some(RestartCause::AbortIgnored);
        }
        let silent_ms = now.mono_ms.saturating_sub(self.alive_at?);
        (limit_ms > 0 && self.heartbeats && silent_ms >= limit_ms)
            .then_some(RestartCause::Frozen { silent_ms })
    }

    /// When [`Watch::due`] may first say yes (mono ms).
    pub fn deadline(&self, limit_ms: u64) -> Option<u64> {
        if self.exited || self.restarting.is_some() {
            return None;
        }
        let abort = self.abort_at.map(|t| t + ABORT_SETTLE_MS);
        let frozen = (limit_ms > 0 && self.heartbeats)
            .then_some(self.alive_at)
            .flatten()
            .map(|t| t + limit_ms);
        abort.into_iter().chain(frozen).min()
    }
}

/// pi's command line for a relaunch on `session_file`: every option the user gave is kept, except
/// those that choose a session (`--session`, `--fork`, `--session-id`, `--continue`, `--resume`);
/// messages and `@file` arguments are dropped (they were sent once already).
pub fn relaunch_args(args: &[String], session_file: &str) -> Vec<String> {
    const SESSION_VALUE: [&str; 3] = ["--session", "--fork", "--session-id"];
    const SESSION_SWITCH: [&str; 4] = ["--continue", "-c", "--resume", "-r"];
    let mut out = Vec::new();
    let mut i = 0;
    while i < args.len() {
        let arg = args[i].as_str();
        let next = args.get(i + 1);
        if SESSION_VALUE.contains(&arg) {
            i += 2;
            continue;
        }
        if TAKES_NEXT.contains(&arg) && next.is_some() {
            out.extend([args[i].clone(), args[i + 1].clone()]);
            i += 2;
            continue;
        }
        let chooses_session = SESSION_SWITCH.contains(&arg)
            || SESSION_VALUE
                .iter()
                .any(|o| arg.strip_prefix(o).is_some_and(|rest| rest.starts_with('=')));
        if arg.starts_with('-') && !chooses_session {
            out.push(args[i].clone());
        }
        i += 1;
    }
    out.extend(["--session".to_string(), session_file.to_string()]);
    out
}

impl Session {
    /// pi's session file, as its bridge last said.
    pub fn pi_session_file(&self) -> Option<&str> {
        self.watch.session_file.as_deref()
    }

    /// The agent is in a run, as the bridge last told, or a relaunched pi's run is still to be
    /// resumed.
    pub fn mid_run(&self) -> bool {
        self.watch.mid_run || self.supervisor.resume_pending()
    }

    /// The agent is mid-run, or pokeshell has its next step planned (RST-D1).
    pub fn work_left(&self) -> bool {
        self.watch.mid_run || self.supervisor.work_planned()
    }

    /// `pokeshell.notifyCommand` as the session's settings have it now.
    pub fn notify_command(&self) -> String {
        self.settings.get().get(KeyId::NotifyCommand).edit_text()
    }

    fn unresponsive_ms(&self) -> u64 {
        self.setting(KeyId::PokeUnresponsiveSeconds) * 1000
    }

    pub(super) fn setting(&self, key: KeyId) -> u64 {
        self.settings
            .get()
            .get(key)
            .as_int()
            .and_then(|i| u64::try_from(i).ok())
            .unwrap_or(0)
    }

    /// When the watch next needs a tick (mono ms).
    pub(super) fn watch_deadline(&self) -> Option<u64> {
        self.watch.deadline(self.unresponsive_ms())
    }

    /// Tick: restart a pi that froze or ignores an abort.
    pub(super) fn watch_tick(&mut self, now: Now, fx: &mut Vec<Effect>) {
        if let Some(cause) = self.watch.due(self.unresponsive_ms(), now) {
            self.restart(cause, now, fx);
        }
    }

    /// The child exited (RST-D1): a death mid-run, or while pokeshell has the next step planned (a
    /// provider limit's resume, a wakeup, a resume waiting for its moment), or by a signal no
    /// program chooses to end on, is a restart; a quit (code 0), or an idle pi ended politely or
    /// failing with nothing planned, ends pokeshell as before.
    pub(super) fn on_child_exited(&mut self, code: i32, signal: Option<i32>, now: Now, fx: &mut Vec<Effect>) {
        self.child.exit = Some(code);
        self.watch.exited();
        if self.watch.restarting.is_some() || !self.opts.bridge.as_ref().is_some_and(Result::is_ok) {
            return;
        }
        let failed = signal.is_some() || code != 0;
        // Soak seed 20261203: a pi killed while its session waited out a rate limit ended the
        // session, and the planned resume and the rest of the task list with it.
        if failed && (self.work_left() || signal.is_some_and(killed_outright)) {
            self.restart(RestartCause::Died { code, signal }, now, fx);
        }
    }

    /// RST-D2: the relaunch did not start, as pi's directory cannot be used; pi is started nowhere
    /// else. The session says why and how to go on; the run stays to be resumed once pi starts.
    pub(super) fn on_child_not_started(&mut self, why: String, now: Now, fx: &mut Vec<Effect>) {
        let Some(cause) = self.watch.restarting.take() else {
            return;
        };
        self.watch.not_started = Some((cause, why.clone()));
        self.watch.last = Some((format!("pi not started again: {why}"), Tone::Error));
        let reason = format!(
            "{}; pi was not started again because {why}, and pokeshell starts it nowhere else: \
             once the directory is back as it was, poke the session (the prefix key, then p) to \
             start pi there",
            cause.describe()
        );
        let event = sup::Event::RestartRefused {
            rule: rule::RESTART_NO_DIR,
            reason,
        };
        self.supervise(event, now, fx);
        fx.push(Effect::Redraw);
    }

    /// The user's poke after [`Self::on_child_not_started`]: the relaunch is tried again (its
    /// directory is checked again). `false`: no relaunch was waiting.
    pub(super) fn start_again_after_refusal(&mut self, fx: &mut Vec<Effect>) -> bool {
        let (Some((cause, _)), None, Some(file)) = (
            &self.watch.not_started,
            self.watch.restarting,
            self.watch.session_file.as_deref(),
        ) else {
            return false;
        };
        let cause = *cause;
        let args = relaunch_args(&self.opts.child_args, file);
        self.watch.restarting = Some(cause);
        self.watch.last = Some(("starting pi again, as asked".to_string(), Tone::Warn));
        fx.push(Effect::Respawn { args });
        fx.push(Effect::Redraw);
        true
    }

    /// RST-S1: the first child of a session that a restarted server relaunched mid-run. The supervisor
    /// hears of it as of a restart, so the new session's start resumes the run through the arbiter.
    /// The server did the relaunch, not this session's watch: it is not counted against
    /// `poke.maxRestartsPerHour`.
    pub(super) fn resume_after_server_restart(&mut self, now: Now, fx: &mut Vec<Effect>) {
        let asked = std::mem::take(&mut self.opts.spec.resume);
        if !asked || !self.opts.bridge.as_ref().is_some_and(Result::is_ok) {
            return;
        }
        let cause = RestartCause::ServerRestarted;
        let reason = cause.describe();
        self.watch.last = Some((format!("restarted: {reason}"), Tone::Warn));
        let event = sup::Event::PiRestarted {
            rule: cause.rule(),
            reason,
            resume: true,
        };
        self.supervise(event, now, fx);
    }

    /// Relaunches pi on its session, within the hourly bound; the supervisor resumes the run.
    fn restart(&mut self, cause: RestartCause, now: Now, fx: &mut Vec<Effect>) {
        let max = self.setting(KeyId::PokeMaxRestartsPerHour) as usize;
        let refusal = if max == 0 {
            Some(format!(
                "{}; pokeshell does not restart it: restarts are off (poke.maxRestartsPerHour is 0)",
                cause.describe()
            ))
        } else if self.watch.recent(now) >= max {
            Some(format!(
                "{}; pokeshell does not restart it: {} restart(s) in the last hour is the limit \
                 (poke.maxRestartsPerHour)",
                cause.describe(),
                max
            ))
        } else if self.watch.session_file.is_none() {
            Some(format!(
                "{}; pokeshell does not restart it: pi has no session file to resume",
                cause.describe()
            ))
        } else {
            None
        };
        if let Some(reason) = refusal {
            // Refused once: the watch stands down until pi shows a sign of life again.
            self.watch.stand_down();
            self.watch.last = Some((reason.clone(), Tone::Error));
            let event = sup::Event::RestartRefused {
                rule: rule::RESTART_LIMIT,
                reason,
            };
            self.supervise(event, now, fx);
            return;
        }
        let file = self.watch.session_file.clone().unwrap_or_default();
        let args = relaunch_args(&self.opts.child_args, &file);
        self.watch.restarts.push(now.mono_ms);
        self.watch.restarting = Some(cause);
        let resume = self.watch.mid_run;
        self.watch.settled();
        let reason = cause.describe();
        self.watch.last = Some((format!("restarted: {reason}"), Tone::Warn));
        self.pi.restarting();
        let event = sup::Event::PiRestarted {
            rule: cause.rule(),
            reason,
            resume,
        };
        self.supervise(event, now, fx);
        fx.push(Effect::Respawn { args });
    }
}

#[cfg(test)]
mod tests;
