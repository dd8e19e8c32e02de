//! Scripts and agents driving sessions, as the server's core keeps it: the messages on their way to
//! pi (each numbered, a marker, so that a wait after it waits for the run it started), the waits
//! and when each is over, the reads in flight, the clients following events, and the bounds on what
//! an agent inside a session may do (docs/driving.md).

use std::collections::{BTreeMap, BTreeSet, VecDeque};

use super::{Client, Run, ServerEffect, ServerState, SessionMsg, SessionSpec};
use crate::brief::Attention;
use crate::drive::{self, Event, Marks, Outcome, ToSession, Until};
use crate::supervisor::Now;
use crate::wire::Up;

/// What the core keeps for those who drive sessions.
pub(crate) struct Drive {
    /// Per session: its messages and where its runs stand.
    pub(super) tracks: BTreeMap<u32, Track>,
    /// Messages on their way to pi: (session, marker) → who sent it.
    pub(super) sending: BTreeMap<(u32, u64), Sending>,
    /// Clients waiting for a session's state: id → (session, until).
    pub(super) waiting: BTreeMap<u64, (u32, Until)>,
    /// Reads in flight: the client's id is the ticket → the session.
    pub(super) reading: BTreeMap<u64, u32>,
    /// Reviews handed to sessions, by ticket, until the session says whether pi has them.
    pub(super) reviewing: BTreeMap<u64, super::review::Reviewing>,
    /// The last review ticket given.
    pub(super) review_ticket: u64,
    /// Clients following events: id → the sessions (`None`: all, those to come too).
    pub(super) following: BTreeMap<u64, Option<BTreeSet<u32>>>,
    /// Sessions that ended lately (or are being ended), newest last: a wait for the end of one
    /// that just went is over at once, not an error.
    pub(super) gone: VecDeque<Gone>,
    /// Sessions started by agents that may run at once.
    pub(crate) bound: usize,
}

/// How many ended sessions are remembered.
const GONE_KEPT: usize = 64;

pub(super) struct Gone {
    pub(super) number: u32,
    pub(super) label: String,
    /// `None` while it is being ended.
    pub(super) code: Option<i32>,
}

impl Default for Drive {
    fn default() -> Self {
        Self {
            tracks: BTreeMap::new(),
            sending: BTreeMap::new(),
            waiting: BTreeMap::new(),
            reading: BTreeMap::new(),
            reviewing: BTreeMap::new(),
            review_ticket: 0,
            following: BTreeMap::new(),
            gone: VecDeque::new(),
            bound: drive::DEFAULT_AGENT_SESSIONS,
        }
    }
}

/// One session's messages and runs.
#[derive(Default)]
pub(super) struct Track {
    /// The last marker given.
    pub(super) last: u64,
    /// The highest marker pi took.
    pub(super) delivered: u64,
    /// As the session last reported.
    pub(super) marks: Marks,
    pub(super) attention: Option<Attention>,
    pub(super) state: String,
    pub(super) at_ms: u64,
}

pub(super) struct Sending {
    pub(super) client: u64,
    pub(super) from: Option<String>,
    pub(super) bytes: usize,
}

impl Drive {
    /// Session `number` is going, or gone with `code`.
    pub(super) fn went(&mut self, number: u32, label: String, code: Option<i32>) {
        self.gone.retain(|g| g.number != number);
        self.gone.push_back(Gone { number, label, code });
        if self.gone.len() > GONE_KEPT {
            self.gone.pop_front();
        }
    }

    /// A session that went lately, by name, number or label (the newest first).
    pub(super) fn gone_find(&self, name: &str) -> Option<&Gone> {
        self.gone.iter().rev().find(|g| {
            g.label == name
                || g.label
                    .split_once(':')
                    .is_some_and(|(n, bare)| n == name || bare == name)
        })
    }

    /// The client's connection is gone: nothing more is told it.
    pub(super) fn forget(&mut self, id: u64) {
        self.waiting.remove(&id);
        self.reading.remove(&id);
        self.following.remove(&id);
        self.sending.retain(|_, s| s.client != id);
        self.reviewing.retain(|_, r| r.client != id);
    }
}

/// The session a `pokeshell` run inside a session speaks for: `$POKESHELL_SESSION` in its
/// environment.
pub(super) fn origin(env: &[(String, String)]) -> Option<String> {
    env.iter()
        .find(|(k, v)| k == drive::SESSION_ENV && !v.is_empty())
        .map(|(_, v)| v.clone())
}

impl ServerState {
    /// A session by name, number, or `number:name` as `ls` labels it.
    pub(super) fn drive_find(&self, name: &str) -> Result<u32, String> {
        self.table.find(Some(name)).or_else(|e| {
            name.split_once(':')
                .and_then(|(n, rest)| Some((n.parse::<u32>().ok()?, rest)))
                .filter(|(n, rest)| self.table.get(*n).is_some_and(|e| e.spec.name == *rest))
                .map(|(n, _)| n)
                .ok_or(e)
        })
    }

    /// A running session by name, for a driver.
    fn running(&self, name: &str) -> Result<u32, String> {
        let n = self.drive_find(name)?;
        match self.runs.get(&n) {
            Some(Run::Running) => Ok(n),
            _ => Err(format!(
                "session {} is still starting; try again in a moment",
                self.label(n)
            )),
        }
    }

    /// The session of `from`, if it names one that runs.
    fn origin_number(&self, from: Option<&str>) -> Option<u32> {
        from.and_then(|f| self.table.find(Some(f)).ok())
    }

    /// A new session asked for by `client`: when an agent inside a session asks, the agents'
    /// sessions must have room for one more. Returns the asking session, the new one's parent.
    pub(super) fn admit_agent_session(&self, client: Option<&Client>) -> Result<Option<String>, String> {
        let Some(parent) = client.and_then(|c| origin(&c.env)) else {
            return Ok(None);
        };
        let theirs: Vec<String> = self
            .table
            .entries()
            .filter(|e| e.spec.parent.is_some())
            .map(|e| format!("{}:{}", e.spec.number, e.spec.name))
            .collect();
        if theirs.len() >= self.drive.bound {
            return Err(format!(
                "agents may run at most {} sessions of their own at once (pokeshell.maxAgentSessions), \
                 and {} run: {}. End one first (pokeshell kill NAME), or raise the setting",
                self.drive.bound,
                theirs.len(),
                theirs.join(", ")
            ));
        }
        Ok(Some(parent))
    }

    /// A session was made: its messages start counting (a first prompt on pi's command line is the
    /// first), followers hear of it. Returns the spec to start it with.
    pub(super) fn drive_created(
        &mut self,
        mut spec: SessionSpec,
        now: Now,
        fx: &mut Vec<ServerEffect>,
    ) -> SessionSpec {
        spec.prompted = spec.first_prompt();
        if let Some(e) = self.table.get_mut(spec.number) {
            e.spec.parent = spec.parent.clone();
        }
        let first = u64::from(spec.prompted);
        let track = Track {
            last: first,
            delivered: first,
            ..Default::default()
        };
        self.drive.tracks.insert(spec.number, track);
        let event = Event {
            kind: "started".into(),
            by: spec.parent.clone(),
            ..self.event_of(spec.number, now.wall_ms)
        };
        self.tell_followers(event, fx);
        spec
    }

    /// Kill, send, wait, read and events.
    pub(super) fn on_drive(&mut self, id: u64, up: Up, fx: &mut Vec<ServerEffect>) {
        let result = match up {
            Up::Kill { name, from } => self.drive_find(&name).map(|n| {
                if let Some(by) = from {
                    let ev = SessionMsg::Drive(ToSession::Killed { by });
                    fx.push(ServerEffect::ToSession { number: n, ev });
                }
                let label = self.label(n);
                self.kill(id, n, fx);
                if self.runs.contains_key(&n) {
                    self.drive.went(n, label, None);
                }
            }),
            Up::Send {
                session,
                text,
                steer,
                from,
            } => self.send(id, &session, text, steer, from, fx),
            Up::Wait { session, until, from } => self.wait(id, &session, until, from.as_deref(), fx),
            Up::Read { session, last } => self.running(&session).map(|n| {
                self.drive.reading.insert(id, n);
                let ev = SessionMsg::Drive(ToSession::Read { ticket: id, last });
                fx.push(ServerEffect::ToSession { number: n, ev });
            }),
            Up::Events { sessions } => sessions
                .iter()
                .map(|s| self.drive_find(s))
                .collect::<Result<BTreeSet<u32>, String>>()
                .map(|set| {
                    let only = (!sessions.is_empty()).then_some(set);
                    self.drive.following.insert(id, only);
                }),
            _ => Ok(()),
        };
        if let Err(message) = result {
            self.refused(id, message, fx);
        }
    }

    fn send(
        &mut self,
        id: u64,
        session: &str,
        text: String,
        steer: bool,
        from: Option<String>,
        fx: &mut Vec<ServerEffect>,
    ) -> Result<(), String> {
        let n = self.running(session)?;
        drive::check_text(&text)?;
        let text = drive::defused(&text);
        if self.origin_number(from.as_deref()) == Some(n) {
            return Err(format!(
                "session {} cannot send a message to itself",
                self.label(n)
            ));
        }
        let track = self.drive.tracks.entry(n).or_default();
        track.last += 1;
        let marker = track.last;
        let sending = Sending {
            client: id,
            from: from.clone(),
            bytes: text.len(),
        };
        self.drive.sending.insert((n, marker), sending);
        let ev = SessionMsg::Drive(ToSession::Send {
            marker,
            text,
            steer,
            from,
        });
        fx.push(ServerEffect::ToSession { number: n, ev });
        Ok(())
    }

    fn wait(
        &mut self,
        id: u64,
        session: &str,
        until: Until,
        from: Option<&str>,
        fx: &mut Vec<ServerEffect>,
    ) -> Result<(), String> {
        let n = match self.drive_find(session) {
            Ok(n) => n,
            // Gone (or going) lately: its end is waited for, or told at once.
            Err(e) => match self.drive.gone_find(session).filter(|_| until == Until::Exited) {
                Some(g) if g.code.is_none() => g.number,
                Some(g) => {
                    let down = self.reached_end(g.label.clone(), Outcome::Reached, g.code);
                    fx.push(ServerEffect::Tell { id, down });
                    return Ok(());
                }
                None => return Err(e),
            },
        };
        if until != Until::Exited && self.origin_number(from) == Some(n) {
            return Err(format!(
                "session {} cannot wait for itself to be {}: it would wait for ever",
                self.label(n),
                until.word()
            ));
        }
        self.drive.waiting.insert(id, (n, until));
        self.check_waits(n, fx);
        Ok(())
    }
}
