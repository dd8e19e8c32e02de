//! The rails that span sessions, heard and answered by the core (docs/supervision.md, "Guard
//! rails"): the day's budget (GUARD-B2) is summed from every session's priced replies and told to
//! every session; a provider failure (GUARD-K1..K3) goes to the circuit breaker, whose orders go to
//! the sessions it names. A pause's answer from a client without keys (the web view's buttons, a
//! notification's action) goes to the session it names.

use super::{Run, ServerEffect, ServerState, SessionMsg};
use crate::bridge::UserRequest;
use crate::server::guards::{DailyAnswer, DailyNews, GuardNote, GuardOrder};
use crate::supervisor::Now;
use crate::wire::{Down, GuardAnswer};

impl ServerState {
    /// What session `number` met.
    pub(super) fn on_guard(&mut self, number: u32, note: GuardNote, now: Now, fx: &mut Vec<ServerEffect>) {
        match note {
            GuardNote::Spent {
                usd,
                daily_limit_usd,
                utc_offset_secs,
            } => {
                let changed = self
                    .daily
                    .spent(usd, daily_limit_usd, utc_offset_secs, now.wall_ms);
                if let Some(state) = changed {
                    let news = match state {
                        Some(state) => {
                            fx.push(ServerEffect::Log(format!(
                                "the day's budget is spent ({:.4} of {:.4} USD): every session is stopped",
                                state.spent_usd, state.limit_usd
                            )));
                            DailyNews::Spent(state)
                        }
                        None => DailyNews::NewDay,
                    };
                    self.tell_every_session(GuardOrder::Daily(news), fx);
                }
            }
            GuardNote::Daily(DailyAnswer::Allow { usd }) => {
                let news = match self.daily.allow(usd, now.wall_ms) {
                    Some(None) => DailyNews::Allowed,
                    Some(Some(state)) => DailyNews::Spent(state),
                    // Still spent, more allowed: the sessions hear the new limit.
                    None => match self.daily.state() {
                        Some(state) => DailyNews::Spent(state),
                        None => DailyNews::Allowed,
                    },
                };
                self.tell_every_session(GuardOrder::Daily(news), fx);
            }
            GuardNote::Daily(DailyAnswer::Leave) => {
                self.tell_every_session(GuardOrder::Daily(DailyNews::LeftStopped), fx);
            }
            GuardNote::Failed { key, until_wall_ms } => {
                let table = &self.table;
                let label = |n: u32| {
                    table
                        .get(n)
                        .map_or_else(|| n.to_string(), |e| format!("{}:{}", e.spec.number, e.spec.name))
                };
                let orders = self.breakers.failed(number, &key, until_wall_ms, label);
                self.send_breaker_orders(orders, fx);
            }
            GuardNote::Recovered { key } => {
                let orders = self.breakers.recovered(number, &key);
                if !orders.is_empty() {
                    fx.push(ServerEffect::Log(format!(
                        "session {} got past the {key}: {} held session(s) resume",
                        self.label(number),
                        orders.len()
                    )));
                }
                self.send_breaker_orders(orders, fx);
            }
            GuardNote::Left { key } => {
                let orders = self.breakers.left(number, &key);
                self.send_breaker_orders(orders, fx);
            }
        }
    }

    fn send_breaker_orders(
        &self,
        orders: crate::server::guards::breaker::Orders,
        fx: &mut Vec<ServerEffect>,
    ) {
        for (number, order) in orders {
            let ev = SessionMsg::Guard(GuardOrder::Breaker(order));
            fx.push(ServerEffect::ToSession { number, ev });
        }
    }

    fn tell_every_session(&self, order: GuardOrder, fx: &mut Vec<ServerEffect>) {
        for (&number, run) in &self.runs {
            if *run == Run::Running {
                let ev = SessionMsg::Guard(order.clone());
                fx.push(ServerEffect::ToSession { number, ev });
            }
        }
    }

    /// A session is up: while the day's budget is spent, it hears so at once.
    pub(super) fn guard_session_up(&self, number: u32, fx: &mut Vec<ServerEffect>) {
        if let Some(state) = self.daily.state() {
            let ev = SessionMsg::Guard(GuardOrder::Daily(DailyNews::Spent(state)));
            fx.push(ServerEffect::ToSession { number, ev });
        }
    }

    /// A session ended: it leaves the circuit it was in; the next in line probes.
    pub(super) fn guard_session_ended(&mut self, number: u32, fx: &mut Vec<ServerEffect>) {
        let orders = self.breakers.ended(number);
        self.send_breaker_orders(orders, fx);
    }

    /// A pause answered by a client without keys, for session `session` (a name or number).
    pub(super) fn on_guard_answer(
        &mut self,
        id: u64,
        session: &str,
        answer: GuardAnswer,
        fx: &mut Vec<ServerEffect>,
    ) {
        let number = match self.table.find(Some(session)) {
            Ok(n) if self.runs.get(&n) == Some(&Run::Running) => n,
            Ok(n) => {
                let message = format!("session {} is not running", self.label(n));
                fx.push(ServerEffect::Tell {
                    id,
                    down: Down::Error { message },
                });
                return;
            }
            Err(message) => {
                fx.push(ServerEffect::Tell {
                    id,
                    down: Down::Error { message },
                });
                return;
            }
        };
        let (request, what) = match answer {
            GuardAnswer::Allow { usd } => (UserRequest::GuardAllow { usd }, "to go on"),
            GuardAnswer::Leave => (UserRequest::GuardLeave, "to stay stopped"),
        };
        self.table.touch(number);
        let ev = SessionMsg::Request(request);
        fx.push(ServerEffect::ToSession { number, ev });
        let message = format!("told session {} {what}", self.label(number));
        fx.push(ServerEffect::Tell {
            id,
            down: Down::Done { message },
        });
    }
}
