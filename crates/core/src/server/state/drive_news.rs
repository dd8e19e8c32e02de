//! What sessions tell those who drive them, as the server's core hears it: pi took a message, a
//! transcript, an intervention, a new state, the end. Waits that are over are told, followers hear
//! each event (docs/driving.md).

use std::collections::BTreeMap;

use super::{ServerEffect, ServerState};
use crate::drive::{self, Event, FromSession, Outcome, Until, Verdict};
use crate::wire::Down;

impl ServerState {
    /// A session answered.
    pub(super) fn on_session_answer(&mut self, number: u32, out: FromSession, fx: &mut Vec<ServerEffect>) {
        match out {
            FromSession::Delivered { marker, error } => {
                let Some(sending) = self.drive.sending.remove(&(number, marker)) else {
                    return;
                };
                let session = self.label(number);
                let down = match error {
                    Some(why) => Down::Error {
                        message: format!("{session} did not take the message: {why}"),
                    },
                    None => {
                        let track = self.drive.tracks.entry(number).or_default();
                        track.delivered = track.delivered.max(marker);
                        let event = Event {
                            kind: "message".into(),
                            text: Some(format!("{} bytes", sending.bytes)),
                            by: sending.from,
                            ..self.event_of(number, self.wall_ms)
                        };
                        self.tell_followers(event, fx);
                        Down::Sent { session, marker }
                    }
                };
                fx.push(ServerEffect::Tell {
                    id: sending.client,
                    down,
                });
            }
            FromSession::Transcript { ticket, transcript } => {
                if self.drive.reading.remove(&ticket) == Some(number) {
                    let down = Down::Transcript { transcript };
                    fx.push(ServerEffect::Tell { id: ticket, down });
                }
            }
            FromSession::Reviewed { ticket, error } => self.reviewed(number, ticket, error, fx),
            FromSession::Intervention { rule, text } => {
                let event = Event {
                    kind: "intervention".into(),
                    rule: Some(rule),
                    text: Some(text),
                    ..self.event_of(number, self.wall_ms)
                };
                self.tell_followers(event, fx);
            }
        }
    }

    /// What a session reported of itself: waits may be over, followers hear of a new state.
    pub(super) fn drive_report(&mut self, number: u32, report: &super::Report, fx: &mut Vec<ServerEffect>) {
        let Some(brief) = &report.brief else {
            return;
        };
        let track = self.drive.tracks.entry(number).or_default();
        let changed = track.attention != Some(brief.attention);
        track.attention = Some(brief.attention);
        track.state = brief.state.clone();
        track.marks = report.drive;
        track.at_ms = report.at_ms;
        if changed {
            let event = Event {
                kind: "state".into(),
                attention: Some(brief.attention.keyword().into()),
                state: Some(brief.state.clone()),
                ..self.event_of(number, report.at_ms)
            };
            self.tell_followers(event, fx);
        }
        self.check_waits(number, fx);
    }

    /// The session ended (or never started): its waits are over, what was on its way is refused.
    pub(super) fn drive_ended(&mut self, number: u32, code: Option<i32>, fx: &mut Vec<ServerEffect>) {
        // A session being killed has left the table: the name it had is remembered.
        let label = match self.drive.gone.iter().find(|g| g.number == number) {
            Some(g) if self.table.get(number).is_none() => g.label.clone(),
            _ => self.label(number),
        };
        if code.is_some() {
            self.drive.went(number, label.clone(), code);
        }
        let waits: Vec<(u64, Until)> = self
            .drive
            .waiting
            .iter()
            .filter(|(_, (n, _))| *n == number)
            .map(|(id, (_, until))| (*id, *until))
            .collect();
        for (id, until) in waits {
            self.drive.waiting.remove(&id);
            let outcome = if until == Until::Exited {
                Outcome::Reached
            } else {
                Outcome::Ended
            };
            let down = self.reached_end(label.clone(), outcome, code);
            fx.push(ServerEffect::Tell { id, down });
        }
        let mut refused = let_go(&mut self.drive.sending, |(n, _), s| {
            (*n == number).then_some(s.client)
        });
        refused.extend(let_go(&mut self.drive.reading, |id, n| {
            (*n == number).then_some(*id)
        }));
        for id in refused {
            let message = format!("session {label} ended before it answered");
            fx.push(ServerEffect::Tell {
                id,
                down: Down::Error { message },
            });
        }
        let unsent = let_go(&mut self.drive.reviewing, |_, r| {
            (r.number == number).then_some(r.client)
        });
        for id in unsent {
            let message = format!("session {label} ended: the review was not sent");
            fx.push(ServerEffect::Tell {
                id,
                down: Down::Error { message },
            });
        }
        if let Some(code) = code {
            let event = Event {
                kind: "ended".into(),
                code: Some(code),
                ..self.event_of(number, self.wall_ms)
            };
            self.tell_followers(event, fx);
        }
        self.drive.tracks.remove(&number);
    }

    /// The answer to a wait that the session's end ended.
    pub(super) fn reached_end(&self, session: String, outcome: Outcome, code: Option<i32>) -> Down {
        Down::Reached {
            session,
            outcome,
            attention: "exited".into(),
            state: code.map_or("did not start".into(), |c| format!("exited (code {c})")),
            code,
            at_ms: self.wall_ms,
        }
    }

    /// Tells the waits on session `n` that are over.
    pub(super) fn check_waits(&mut self, n: u32, fx: &mut Vec<ServerEffect>) {
        let Some(track) = self.drive.tracks.get(&n) else {
            return;
        };
        let (attention, state, at_ms) = (track.attention, track.state.clone(), track.at_ms);
        let over: Vec<(u64, Outcome)> = self
            .drive
            .waiting
            .iter()
            .filter(|(_, (s, _))| *s == n)
            .filter_map(|(id, (_, until))| {
                match drive::verdict(*until, track.attention, track.marks, track.delivered) {
                    Verdict::Waiting => None,
                    Verdict::Reached => Some((*id, Outcome::Reached)),
                    Verdict::Stopped => Some((*id, Outcome::Stopped)),
                }
            })
            .collect();
        for (id, outcome) in over {
            self.drive.waiting.remove(&id);
            let down = Down::Reached {
                session: self.label(n),
                outcome,
                attention: attention.map_or("", |a| a.keyword()).to_string(),
                state: state.clone(),
                code: None,
                at_ms,
            };
            fx.push(ServerEffect::Tell { id, down });
        }
    }

    /// An event about session `n`, its kind and details left to fill.
    pub(super) fn event_of(&self, n: u32, at_ms: u64) -> Event {
        Event {
            schema: drive::SCHEMA,
            at_ms,
            session: self.label(n),
            number: n,
            name: self.table.get(n).map(|e| e.spec.name.clone()).unwrap_or_default(),
            ..Default::default()
        }
    }

    pub(super) fn tell_followers(&self, event: Event, fx: &mut Vec<ServerEffect>) {
        for (&id, only) in &self.drive.following {
            if only.as_ref().is_none_or(|set| set.contains(&event.number)) {
                let down = Down::Event { event: event.clone() };
                fx.push(ServerEffect::Tell { id, down });
            }
        }
    }
}

/// Takes out of `map` every entry `waiting_client` names a client for (those of a session that
/// ended); those clients, to be told.
fn let_go<K: Ord, V>(map: &mut BTreeMap<K, V>, waiting_client: impl Fn(&K, &V) -> Option<u64>) -> Vec<u64> {
    let mut clients = Vec::new();
    map.retain(|k, v| match waiting_client(k, v) {
        Some(client) => {
            clients.push(client);
            false
        }
        None => true,
    });
    clients
}
