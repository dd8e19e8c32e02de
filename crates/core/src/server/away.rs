//! The one list of events that need the person (a question, a dialog, a give-up, a provider limit
//! and its end, a session that ended on its own, and — off by default — a run that finished), kept
//! by the server's core from what its sessions report, and the decision of when each is pushed to
//! the person's phone: only while they are away (unless `pokeshell.pushWhen` says otherwise), never
//! during their quiet hours, at most once per session and kind in [`COALESCE_MS`]. Every way of
//! telling (ntfy, Web Push) is a subscriber of the pushes this list asks for; capability links
//! answer its events, and are refused once the agent moved on. Pure: events and the time in,
//! pushes out (docs/away.md).

pub mod event;
pub mod notification;
#[cfg(test)]
mod tests;

use std::collections::{BTreeMap, VecDeque};

pub use self::event::{Act, AwayEvent, EventKind};
pub use self::notification::{Links, NoteAction, Notification};
pub use crate::away::{Presence, PushPolicy, PushWhen};
use crate::brief::{Finished, Need};
use crate::supervisor::Now;

/// Pushes of one session and kind closer than this are coalesced: the later one waits for the end
/// of the window, and goes only if it still needs the person then.
pub const COALESCE_MS: u64 = 10 * 60_000;
/// A finished run is pushed only once it stayed finished this long (the supervisor may carry it on).
pub const FINISH_HOLD_MS: u64 = 5_000;
/// Typing counts as having seen an event only this long after the event came: keys typed just
/// before it (the prompt's Enter) are told to the core up to a second late.
pub const SEEN_AFTER_MS: u64 = 2_000;
/// Events kept per session: the open one and those still waiting to be pushed.
const KEPT: usize = 8;

/// A push the list asks for.
#[derive(Debug, Clone, PartialEq)]
pub struct Push {
    pub event: AwayEvent,
    /// The session's time zone, for the times the notification names.
    pub utc_offset_secs: i32,
}

/// Why a capability link's act was refused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Refusal {
    /// The session is gone.
    Ended,
    /// A newer event, or the agent runs again: the link answered something that is over.
    MovedOn,
    /// The event never offered this act.
    NotOffered,
}

impl Refusal {
    pub fn words(&self, label: &str) -> String {
        match self {
            Refusal::Ended => format!("session {label} has ended; nothing was sent"),
            Refusal::MovedOn => {
                format!("session {label} has moved on since this was sent; nothing was sent")
            }
            Refusal::NotOffered => {
                format!("that answer was not offered for session {label}; nothing was sent")
            }
        }
    }
}

struct Tracked {
    event: AwayEvent,
    /// Still worth pushing (a need that is over, or answered, is not).
    wanted: bool,
    /// Capability links still answer it.
    open: bool,
    pushed: bool,
    /// The person saw it: a page showing the session was visible when it came, or a terminal on
    /// the session typed after it came. Never pushed then.
    seen: bool,
    opened_mono: u64,
}

#[derive(Default)]
struct Watch {
    label: String,
    policy: PushPolicy,
    events: VecDeque<Tracked>,
    /// The need the open event was made from (a change makes a new event).
    need: Option<Need>,
    finished_runs: Option<u64>,
    /// When a push of each kind last went (mono ms), for coalescing.
    last_push: BTreeMap<&'static str, u64>,
    /// The session ended: its watch goes once nothing of it waits to be pushed.
    ended: bool,
}

/// The list, with who is where.
#[derive(Default)]
pub struct Away {
    next_id: u64,
    watches: BTreeMap<u32, Watch>,
    /// Per client: the session it typed into, and when (mono ms). Dropped when it leaves that session.
    typed: BTreeMap<u64, (u32, u64)>,
    /// Pages (clients that say whether they are visible), and whether they are. A page's presence
    /// is its visibility alone: its terminal widget answers pi's queries with input that is no
    /// typing of the person's.
    pages: BTreeMap<u64, bool>,
    /// When the list next wants to look again (mono ms), as last computed.
    due: Option<u64>,
    /// The time to look again last asked of the world.
    told: Option<u64>,
    /// Who is where changed since the last look: a push held for them may be due.
    moved: bool,
}

impl Away {
    /// The person's presence at session `n`, which `followers` show.
    pub fn presence(&self, n: u32, followers: &[u64]) -> Presence {
        Presence {
            visible: followers.iter().any(|id| self.pages.get(id) == Some(&true)),
            typed_mono: followers
                .iter()
                .filter_map(|id| self.typed.get(id))
                .filter(|(s, _)| *s == n)
                .map(|(_, at)| *at)
                .max(),
        }
    }

    /// Client `id` typed into session `n`: whatever waits there was seen, and the coalescing of
    /// the session's pushes starts afresh.
    pub fn typed(&mut self, id: u64, n: u32, now: Now) {
        if self.pages.contains_key(&id) {
            return;
        }
        self.typed.insert(id, (n, now.mono_ms));
        if let Some(w) = self.watches.get_mut(&n) {
            // They are back at it: what comes after they leave again is news, not a repeat.
            w.last_push.clear();
            let seen = |t: &&mut Tracked| t.opened_mono.saturating_add(SEEN_AFTER_MS) <= now.mono_ms;
            for t in w.events.iter_mut().filter(seen) {
                t.seen = true;
            }
        }
    }

    /// Client `id` (a page) is visible or not.
    pub fn visible(&mut self, id: u64, visible: bool) {
        self.moved = true;
        self.pages.insert(id, visible);
        self.typed.remove(&id);
    }

    /// Client `id` no longer shows the session it typed into (it left it, or is gone).
    pub fn left(&mut self, id: u64) {
        self.moved |= self.typed.remove(&id).is_some() || self.pages.get(&id) == Some(&true);
    }

    pub fn forget(&mut self, id: u64) {
        self.moved |= self.typed.remove(&id).is_some();
        self.moved |= self.pages.remove(&id) == Some(true);
    }

    /// Whether who is where changed since the last look (and then a look is due).
    pub fn moved(&mut self) -> bool {
        std::mem::take(&mut self.moved)
    }

    /// Session `n` reported itself: what it needs the person for now, its finished runs, whether it
    /// works, and its push settings. A changed need closes the open event and opens another.
    #[allow(clippy::too_many_arguments)]
    pub fn report(
        &mut self,
        n: u32,
        label: &str,
        need: Option<&Need>,
        finished: &Finished,
        working: bool,
        policy: PushPolicy,
        presence: Presence,
        now: Now,
    ) {
        let w = self.watches.entry(n).or_default();
        w.label = label.to_string();
        w.policy = policy;
        let finished_more = w.finished_runs.is_some_and(|runs| finished.runs > runs);
        w.finished_runs = Some(finished.runs);
        if w.need.as_ref() != need {
            let limit_pushed = w
                .events
                .iter()
                .any(|t| t.open && t.pushed && matches!(t.event.kind, EventKind::LimitBegan { .. }));
            close_open(w);
            w.need = need.cloned();
            if let Some(need) = need {
                let quote = need.quote.clone();
                self.open(n, EventKind::of(need), quote, true, presence, now);
            } else if limit_pushed {
                // The person was told of the wait: they hear that it is over.
                self.open(n, EventKind::LimitEnded, String::new(), false, presence, now);
            }
        } else if working {
            // The agent runs again (a finished run poked on): a finish is no news any more.
            let w = self.watches.entry(n).or_default();
            for t in w
                .events
                .iter_mut()
                .filter(|t| t.event.kind == EventKind::Finished)
            {
                (t.open, t.wanted) = (false, false);
            }
        }
        if finished_more && need.is_none() && !working {
            let quote = finished.quote.clone();
            self.open(n, EventKind::Finished, quote, true, presence, now);
        }
    }

    /// Session `n` ended: on its own (`code`), or because it was killed or the server ends (`None`).
    pub fn ended(&mut self, n: u32, label: &str, code: Option<i32>, presence: Presence, now: Now) {
        let Some(w) = self.watches.get_mut(&n) else {
            return;
        };
        close_open(w);
        w.ended = true;
        w.label = label.to_string();
        if let Some(code) = code {
            self.open(n, EventKind::Ended { code }, String::new(), false, presence, now);
        }
    }

    fn open(&mut self, n: u32, kind: EventKind, quote: String, open: bool, presence: Presence, now: Now) {
        self.next_id += 1;
        let id = self.next_id;
        let Some(w) = self.watches.get_mut(&n) else {
            return;
        };
        let event = AwayEvent {
            id,
            session: n,
            label: w.label.clone(),
            kind,
            quote,
            at_wall_ms: now.wall_ms,
            acts: if open { kind.acts() } else { Vec::new() },
        };
        w.events.push_back(Tracked {
            event,
            wanted: true,
            open,
            pushed: false,
            seen: presence.visible,
            opened_mono: now.mono_ms,
        });
        while w.events.len() > KEPT {
            w.events.pop_front();
        }
    }

    /// The event of session `n` capability links answer now, if any.
    pub fn open_event(&self, n: u32) -> Option<&AwayEvent> {
        let w = self.watches.get(&n)?;
        w.events.iter().rev().find(|t| t.open).map(|t| &t.event)
    }

    /// A capability link asks to answer `event` of session `n` with `act`; `running`: the session
    /// still runs. On success the event is answered (no other link answers it) and the session's
    /// coalescing starts afresh: the next thing it needs the person for is news.
    pub fn act(&mut self, n: u32, event: u64, act: Act, running: bool) -> Result<AwayEvent, Refusal> {
        let w = self
            .watches
            .get_mut(&n)
            .filter(|w| running && !w.ended)
            .ok_or(Refusal::Ended)?;
        let t = w
            .events
            .iter_mut()
            .rev()
            .find(|t| t.open)
            .filter(|t| t.event.id == event)
            .ok_or(Refusal::MovedOn)?;
        if !t.event.acts.contains(&act) {
            return Err(Refusal::NotOffered);
        }
        (t.open, t.wanted) = (false, false);
        let answered = t.event.clone();
        w.last_push.clear();
        Ok(answered)
    }

    /// What is to be pushed now; the time to look again is kept for [`Away::due`]. `followers`
    /// gives the clients showing a session.
    pub fn evaluate(&mut self, now: Now, followers: &dyn Fn(u32) -> Vec<u64>) -> Vec<Push> {
        let mut pushes = Vec::new();
        let mut due: Option<u64> = None;
        let presences: BTreeMap<u32, Presence> = self
            .watches
            .keys()
            .map(|&n| (n, self.presence(n, &followers(n))))
            .collect();
        for (n, w) in &mut self.watches {
            let presence = presences.get(n).copied().unwrap_or_default();
            for i in 0..w.events.len() {
                match decide(w, &w.events[i], presence, now) {
                    Decision::Now => {
                        let t = &mut w.events[i];
                        t.pushed = true;
                        w.last_push.insert(t.event.kind.class(), now.mono_ms);
                        pushes.push(Push {
                            event: t.event.clone(),
                            utc_offset_secs: w.policy.utc_offset_secs,
                        });
                    }
                    Decision::At(at) => due = Some(due.map_or(at, |d| d.min(at))),
                    Decision::No => {}
                }
            }
        }
        // An ended session's watch goes once nothing of it waits.
        self.watches
            .retain(|_, w| !w.ended || w.events.iter().any(|t| t.wanted && !t.pushed && !t.seen));
        self.due = due;
        pushes
    }

    /// When the list wants to look again (mono ms), as of the last [`Away::evaluate`].
    pub fn due(&self) -> Option<u64> {
        self.due
    }

    /// The time to look again, when it differs from what the world was last asked.
    pub fn timer_change(&mut self) -> Option<Option<u64>> {
        (self.due != self.told).then(|| {
            self.told = self.due;
            self.due
        })
    }
}

/// Everything still open of a session is over.
fn close_open(w: &mut Watch) {
    for t in w.events.iter_mut().filter(|t| t.open) {
        (t.open, t.wanted) = (false, false);
    }
}

enum Decision {
    Now,
    /// Not yet: look again then (mono ms).
    At(u64),
    No,
}

fn decide(w: &Watch, t: &Tracked, presence: Presence, now: Now) -> Decision {
    let policy = &w.policy;
    if !t.wanted || t.pushed || t.seen || policy.when == PushWhen::Never {
        return Decision::No;
    }
    if t.event.kind == EventKind::Finished {
        if !policy.finished {
            return Decision::No;
        }
        let held = t.opened_mono.saturating_add(FINISH_HOLD_MS);
        if now.mono_ms < held {
            return Decision::At(held);
        }
    }
    if policy.when == PushWhen::Away {
        if presence.visible {
            // Looked at again when the page is hidden or leaves.
            return Decision::No;
        }
        if let Some(until) = presence.typing_until(policy, now.mono_ms) {
            return Decision::At(until);
        }
    }
    if let Some(left) = policy.quiet_left_ms(now.wall_ms) {
        return Decision::At(now.mono_ms.saturating_add(left.max(1)));
    }
    if let Some(last) = w.last_push.get(t.event.kind.class()) {
        let free = last.saturating_add(COALESCE_MS);
        if now.mono_ms < free {
            return Decision::At(free);
        }
    }
    Decision::Now
}
