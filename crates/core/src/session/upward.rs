//! What the terminal around pokeshell learns of the session: a program-status report (OSC 7501)
//! that merges pi's own reports with what only pokeshell knows (a provider limit being waited
//! out, a stall being recovered, a supervisor that gave up, another session waiting for the user),
//! and the window title (OSC 2) with the session's name and state.
//!
//! The session decides what to say (pure, here); the loop sends the report only to terminals that
//! answered the program-status query in their start-up probe, each client for itself.

use super::{Effect, Session};
use crate::brief::Attention;
use crate::screen::program_status::{self, ProgramState, ProgramStatus};
use crate::supervisor::Now;

/// What was last said upward.
#[derive(Debug, Clone, Default, PartialEq)]
pub(super) struct Upward {
    status: Option<ProgramStatus>,
    title: Option<String>,
    /// The program in the pane set a window title of its own: `windowTitle: auto` then leaves the
    /// title to it.
    pi_title_seen: bool,
}

impl Upward {
    /// pi's output for the host: a title in it means pi names its window itself.
    pub fn note_host_bytes(&mut self, bytes: &[u8]) -> bool {
        let titled = bytes.windows(4).any(|w| w == b"\x1b]2;" || w == b"\x1b]0;");
        if titled && !self.pi_title_seen {
            self.pi_title_seen = true;
            return true;
        }
        false
    }
}

/// `bytes` without the clipboard writes (OSC 52) in them, as the mirror's tracker writes them
/// (`ESC ] 52 ; … BEL`): `pokeshell.clipboard` is off, so no hosted program sets the clipboard of
/// the terminals attached to it. `None`: there was none.
pub(super) fn without_clipboard_writes(bytes: &[u8]) -> Option<Vec<u8>> {
    const START: &[u8] = b"\x1b]52;";
    let mut rest = bytes;
    let mut out = Vec::new();
    let mut found = false;
    while let Some(at) = rest.windows(START.len()).position(|w| w == START) {
        found = true;
        out.extend_from_slice(&rest[..at]);
        let after = &rest[at + START.len()..];
        // The tracker always ends it with BEL; one cut short is dropped whole.
        rest = match after.iter().position(|b| *b == 0x07) {
            Some(end) => &after[end + 1..],
            None => &[],
        };
    }
    out.extend_from_slice(rest);
    found.then_some(out)
}

/// `m:ss` for a countdown.
fn countdown(ms: u64) -> String {
    let secs = ms.div_ceil(1000);
    format!("{}:{:02}", secs / 60, secs % 60)
}

fn own(state: ProgramState, kind: Option<&str>, msg: String) -> Option<ProgramStatus> {
    Some(ProgramStatus {
        state,
        app: Some("pokeshell".into()),
        kind: kind.map(str::to_string),
        msg: Some(msg),
    })
}

impl Session {
    /// The report for the terminal around pokeshell: pokeshell's own knowledge where it matters
    /// more than pi's report, else pi's report as it sent it.
    pub fn upward_status(&self, now: Now) -> Option<ProgramStatus> {
        let view = self.supervisor_view(now);
        let (attention, state) = self.attention(&view, now);
        match attention {
            Attention::GaveUp => return own(ProgramState::Error, None, state),
            Attention::Limit => {
                if let Some(wait) = &view.limit_wait {
                    let msg = format!("{}: resuming in {}", wait.kind, countdown(wait.remaining_ms));
                    return own(ProgramState::Blocked, Some("limit"), msg);
                }
            }
            Attention::Stalled => return own(ProgramState::Working, None, format!("{state}, recovering")),
            _ => {}
        }
        if attention != Attention::Question
            && let Some(other) = self
                .sessions
                .iter()
                .find(|b| b.number != self.opts.spec.number && b.attention == Attention::Question)
        {
            let msg = format!("session {} needs you: {}", other.name, other.state);
            return own(ProgramState::Blocked, Some("question"), msg);
        }
        self.pi.program_status.clone()
    }

    /// The window title: the session's name and a few words of state.
    pub fn upward_title(&self, now: Now) -> String {
        let view = self.supervisor_view(now);
        let (_, state) = self.attention(&view, now);
        let name = if self.opts.spec.name.is_empty() {
            &self.opts.label
        } else {
            &self.opts.spec.name
        };
        format!("{name} — {state}")
    }

    /// Says upward what changed since last time.
    pub(super) fn sync_upward(&mut self, now: Now, fx: &mut Vec<Effect>) {
        let want = self.upward_status(now);
        if want != self.upward.status {
            // A report withdrawn (pokeshell's wait is over, pi said nothing since): clear it.
            let report = want.clone().unwrap_or(ProgramStatus {
                state: ProgramState::Clear,
                app: Some("pokeshell".into()),
                kind: None,
                msg: None,
            });
            fx.push(Effect::StatusReport(program_status::encode(&report)));
            self.upward.status = want;
        }
        // `auto`: pi (1.6.0 and every version since its titles came) names its window as it
        // starts; a hosted program may not, and is left alone once it does.
        let on = match self.settings.get().effective().display.window_title {
            "on" => true,
            "off" => false,
            _ => self.opts.bridge.is_none() && !self.upward.pi_title_seen,
        };
        let title = on.then(|| self.upward_title(now));
        if title != self.upward.title {
            if let Some(t) = &title {
                let clean: String = t.chars().filter(|c| !c.is_control()).collect();
                fx.push(Effect::ToHost(format!("\x1b]2;{clean}\x07").into_bytes()));
            }
            self.upward.title = title;
        }
    }
}
