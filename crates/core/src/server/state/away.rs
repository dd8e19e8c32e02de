//! The server's state and the list of events that need the person (`server::away`): what sessions
//! report feeds it, who follows and types where tells it who is away, and a capability link's use
//! is checked against it before it reaches the session.

use super::{AwayAnswer, Run, ServerEffect, ServerState, SessionMsg};
use crate::brief::Attention;
use crate::server::away::{Act, AwayEvent, EventKind, Presence};
use crate::server::state::Report;
use crate::supervisor::Now;
use crate::wire::Down;

impl ServerState {
    /// The clients that show session `n`.
    fn followers(&self, n: u32) -> Vec<u64> {
        self.clients
            .iter()
            .filter(|(_, c)| c.session == Some(n))
            .map(|(id, _)| *id)
            .collect()
    }

    fn presence(&self, n: u32) -> Presence {
        self.away.presence(n, &self.followers(n))
    }

    pub(super) fn away_report(&mut self, number: u32, report: &Report, now: Now, fx: &mut Vec<ServerEffect>) {
        if self.table.get(number).is_none() {
            return;
        }
        let working = report
            .brief
            .as_ref()
            .is_some_and(|b| b.attention == Attention::Working);
        let (label, presence) = (self.label(number), self.presence(number));
        self.away.report(
            number,
            &label,
            report.need.as_ref(),
            &report.finished,
            working,
            report.push,
            presence,
            now,
        );
        self.away_look(now, fx);
    }

    /// Session `number` ended: on its own unless it was killed or the server ends.
    pub(super) fn away_ended(
        &mut self,
        number: u32,
        code: i32,
        shutdown: bool,
        now: Now,
        fx: &mut Vec<ServerEffect>,
    ) {
        let on_its_own = !shutdown && !self.shutting_down && !self.killing.contains(&number);
        let (label, presence) = (self.label(number), self.presence(number));
        // The person who typed `/quit` was there: an end they saw is no news.
        let seen = presence.visible || presence.typed_mono.is_some();
        let code = (on_its_own && !seen).then_some(code);
        self.away.ended(number, &label, code, presence, now);
        self.away_look(now, fx);
    }

    /// A page says whether it is visible (the list looks again after the event).
    pub(super) fn page_visible(&mut self, id: u64, visible: bool) {
        self.away.visible(id, visible);
    }

    /// A capability link's act for `event` of session `number`, as the web view passes it on.
    pub(super) fn on_act(
        &mut self,
        id: u64,
        number: u32,
        event: u64,
        act: Act,
        now: Now,
        fx: &mut Vec<ServerEffect>,
    ) {
        let label = self.label(number);
        let running = self.runs.get(&number) == Some(&Run::Running) && self.table.get(number).is_some();
        match self.away.act(number, event, act, running) {
            Ok(answered) => {
                let answer = AwayAnswer {
                    act,
                    event,
                    about: about(&answered),
                    refused: None,
                };
                fx.push(ServerEffect::ToSession {
                    number,
                    ev: SessionMsg::Away(answer),
                });
                fx.push(ServerEffect::Log(format!(
                    "session {label}: a link from a push answered event {event} with {}",
                    act.keyword()
                )));
                let message = match act.answer() {
                    Some(text) => format!("Sent \u{201c}{text}\u{201d} to session {label}."),
                    None => format!("{} — sent to session {label}.", act.label()),
                };
                fx.push(ServerEffect::Tell {
                    id,
                    down: Down::Acted { message },
                });
            }
            Err(refusal) => {
                let message = refusal.words(&label);
                fx.push(ServerEffect::Log(format!(
                    "session {label}: a link from a push ({}, event {event}) was refused: {message}",
                    act.keyword()
                )));
                if running {
                    let answer = AwayAnswer {
                        act,
                        event,
                        about: String::new(),
                        refused: Some(message.clone()),
                    };
                    fx.push(ServerEffect::ToSession {
                        number,
                        ev: SessionMsg::Away(answer),
                    });
                }
                fx.push(ServerEffect::Tell {
                    id,
                    down: Down::Error { message },
                });
            }
        }
        self.away_look(now, fx);
    }

    /// Pushes what is due, and asks to be woken when the list next wants to look.
    pub(super) fn away_look(&mut self, now: Now, fx: &mut Vec<ServerEffect>) {
        let clients = &self.clients;
        let followers = |n: u32| -> Vec<u64> {
            clients
                .iter()
                .filter(|(_, c)| c.session == Some(n))
                .map(|(id, _)| *id)
                .collect()
        };
        for push in self.away.evaluate(now, &followers) {
            fx.push(ServerEffect::Log(format!(
                "session {}: pushing event {} ({})",
                push.event.label,
                push.event.id,
                push.event.kind.class()
            )));
            fx.push(ServerEffect::Push(push));
        }
        if let Some(due) = self.away.timer_change() {
            fx.push(ServerEffect::AwayTimer(due));
        }
    }
}

/// What an answered event was about, for the session's ledger.
fn about(event: &AwayEvent) -> String {
    let what = match event.kind {
        EventKind::Dialog => "the dialog",
        EventKind::Question { .. } => "the question",
        EventKind::GaveUp => "the give-up",
        EventKind::LimitBegan { .. } | EventKind::LimitEnded => "the provider-limit wait",
        EventKind::Ended { .. } => "the end",
        EventKind::Finished => "the finished run",
        EventKind::Paused => "the guard rail's pause",
    };
    let last = event.quote.lines().last().unwrap_or_default().trim();
    if last.is_empty() {
        what.to_string()
    } else {
        format!("{what}: {last}")
    }
}
