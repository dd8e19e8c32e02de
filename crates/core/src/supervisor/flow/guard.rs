//! The guard rails' side of each event [GUARD-B1, GUARD-B2, GUARD-C1, GUARD-A1, GUARD-A2]: what a
//! session spent and how many model calls it made without its person; the pause that stops the run and
//! asks; what holds every automatic message while a limit holds; the person's answers. The
//! no-progress rails and their ladder are in `guard_ladder.rs`, the circuit breaker in
//! `guard_circuit.rs`.

use crate::supervisor::Supervisor;
use crate::supervisor::action::{Action, DeliverAs, NotifyLevel};
use crate::supervisor::arbiter::StopCause;
use crate::supervisor::delivery::Sent;
use crate::supervisor::guard::circuit::{DailyAnswer, DailyNews};
use crate::supervisor::guard::halt::{Allowance, Halt, HaltCause};
use crate::supervisor::guard::texts::{self, ALLOW_KEY, LEAVE_KEY};
use crate::supervisor::ledger::{LedgerKind, rule};
use crate::supervisor::time::Now;

impl Supervisor {
    /// A model call finished: the budget (GUARD-B1) and the call cap (GUARD-C1) are looked at.
    pub(in crate::supervisor) fn guard_model_call(
        &mut self,
        session_cost_usd: Option<f64>,
        now: Now,
        out: &mut Vec<Action>,
    ) {
        self.guard.spend.call(session_cost_usd);
        if self.guard.halt.is_some() {
            return;
        }
        if let Some((cause, offer)) = self.limit_reached() {
            self.halt(cause, offer, now, out);
        }
    }

    /// The limit the session is at, if any, and what allowing more would grant.
    fn limit_reached(&self) -> Option<(HaltCause, Allowance)> {
        let config = &self.config.guard;
        if let Some(reached) = self.guard.spend.reached(config.budget_usd) {
            let cause = HaltCause::Budget {
                spent_usd: reached.spent_usd,
                limit_usd: reached.limit_usd,
            };
            return Some((cause, Allowance::Usd(config.budget_usd)));
        }
        if let Some(daily) = self.guard.daily {
            let cause = HaltCause::Daily {
                spent_usd: daily.spent_usd,
                limit_usd: daily.limit_usd,
            };
            return Some((cause, Allowance::Usd(self.daily_offer(daily.limit_usd))));
        }
        let cap = config.max_calls_per_run;
        if self.guard.spend.calls_reached(cap) {
            let cause = HaltCause::Calls {
                calls: self.guard.spend.calls(),
                cap,
            };
            return Some((cause, Allowance::Calls(cap)));
        }
        None
    }

    /// What the day's pause offers: the day's budget again (the setting, else the core's limit).
    fn daily_offer(&self, limit_usd: f64) -> f64 {
        let setting = self.config.guard.daily_budget_usd;
        if setting.is_finite() && setting > 0.0 {
            setting
        } else {
            limit_usd
        }
    }

    /// Why every automatic message is held by a rail, if it is: a pause waits for the person's answer,
    /// or a limit is spent.
    pub(in crate::supervisor) fn guard_holds(&self) -> Option<&'static str> {
        if self.guard.halt.is_some() {
            return Some("a guard rail paused the session; it waits for your answer");
        }
        match self.limit_reached()?.0 {
            HaltCause::Budget { .. } => Some("the session's budget is spent"),
            HaltCause::Daily { .. } => Some("the day's budget is spent"),
            HaltCause::Calls { .. } => Some("the call cap is reached; it waits until you type"),
            HaltCause::Runaway(_) => None,
        }
    }

    /// Stops the run, holds everything automatic, and asks the person.
    pub(in crate::supervisor) fn halt(
        &mut self,
        cause: HaltCause,
        offer: Allowance,
        now: Now,
        out: &mut Vec<Action>,
    ) {
        let rule = cause.rule();
        let state = cause.state();
        if !self.config.poke.enabled {
            let reason = format!("{state}, but supervision is off: the run goes on");
            self.record(out, now, rule, LedgerKind::Declined, reason, None);
            return;
        }
        let running = !self.run.settled_phase();
        if running && self.connected {
            out.push(Action::Abort);
            self.arbiter.self_aborted(StopCause::Guard);
        }
        let why = "a guard rail paused the session";
        self.cancel_deferred(why, now, out);
        self.cancel_limit_wait(why, now, out);
        self.cancel_promise_ask(why, now, out);
        self.post_compact.drop_wake();
        let stopped_run = running || matches!(cause, HaltCause::Runaway(_));
        let stopped = if running {
            "stopped the run"
        } else {
            "keeps the agent stopped"
        };
        let reason = format!(
            "{state}: {stopped} and asks you to {} or leave it stopped",
            offer.label()
        );
        self.guard.last = Some((rule, state));
        self.record(out, now, rule, LedgerKind::Action, reason, None);
        out.push(Action::Notify {
            level: NotifyLevel::Error,
            text: texts::notify_paused(&cause, offer, ALLOW_KEY, LEAVE_KEY),
            desktop: true,
        });
        self.guard.halt = Some(Halt {
            cause,
            offer,
            stopped_run,
            since_wall_ms: now.wall_ms,
        });
    }

    /// A run starts while a limit is spent (the person typed a prompt, say): it is stopped at once, before
    /// it costs more, and the pause asks again.
    pub(in crate::supervisor) fn guard_agent_start(&mut self, now: Now, out: &mut Vec<Action>) {
        if !self.config.poke.enabled || !self.connected {
            return;
        }
        let Some((cause, offer)) = self.limit_reached() else {
            return;
        };
        out.push(Action::Abort);
        self.arbiter.self_aborted(StopCause::Guard);
        let reason = format!("a run started while {}: stopped at once", cause.state());
        self.record(out, now, cause.rule(), LedgerKind::Action, reason, None);
        out.push(Action::Notify {
            level: NotifyLevel::Warning,
            text: texts::notify_over_budget(&cause, ALLOW_KEY),
            desktop: false,
        });
        if self.guard.halt.is_none() {
            self.guard.halt = Some(Halt {
                cause,
                offer,
                stopped_run: false,
                since_wall_ms: now.wall_ms,
            });
        }
    }

    /// The pause the person answers: the one asked, else the limit that is still spent.
    fn question(&self) -> Option<Halt> {
        self.guard.halt.clone().or_else(|| {
            let (cause, offer) = self.limit_reached()?;
            Some(Halt {
                cause,
                offer,
                stopped_run: false,
                since_wall_ms: 0,
            })
        })
    }

    /// GUARD-A1: the person allows `usd` more (else what was offered) and lets the agent go on.
    pub(in crate::supervisor) fn guard_allow(&mut self, usd: Option<f64>, now: Now, out: &mut Vec<Action>) {
        let Some(halt) = self.question() else {
            self.refuse(out, now, rule::GUARD_ALLOW, texts::notify_nothing_paused());
            return;
        };
        let usd = |offer: f64| usd.filter(|u| u.is_finite() && *u > 0.0).unwrap_or(offer);
        let granted = match (&halt.cause, halt.offer) {
            (HaltCause::Daily { .. }, offer) => {
                let usd = usd(match offer {
                    Allowance::Usd(offer) => offer,
                    _ => self.config.guard.daily_budget_usd,
                });
                out.push(Action::Daily(DailyAnswer::Allow { usd }));
                let reason = format!(
                    "you allowed {} more for today: every session is told",
                    crate::brief::dollars(usd)
                );
                self.record(out, now, rule::GUARD_ALLOW, LedgerKind::Action, reason, None);
                // The pause is lifted when the server's core says so, in every session at once.
                return;
            }
            (HaltCause::Budget { .. }, offer) => {
                let usd = usd(match offer {
                    Allowance::Usd(offer) => offer,
                    _ => self.config.guard.budget_usd,
                });
                self.guard.spend.allow_usd(usd);
                Allowance::Usd(usd)
            }
            (HaltCause::Calls { cap, .. }, _) => {
                self.guard.spend.reset_calls();
                Allowance::Calls(*cap)
            }
            (HaltCause::Runaway(_), _) => {
                self.guard.ladder.reset();
                self.guard.restart_counts();
                Allowance::GoOn
            }
        };
        self.lift(halt, granted, now, out);
    }

    /// The pause is over because the person allowed more: the run it stopped goes on.
    fn lift(&mut self, halt: Halt, granted: Allowance, now: Now, out: &mut Vec<Action>) {
        self.guard.halt = None;
        if self.arbiter.stopped() == Some(StopCause::Guard) {
            self.arbiter.lift_stop();
        }
        let reason = format!("you chose to {} ({})", granted.label(), halt.cause.state());
        out.push(Action::Notify {
            level: NotifyLevel::Info,
            text: texts::notify_allowed(granted),
            desktop: false,
        });
        if !(halt.stopped_run && self.connected) {
            self.record(out, now, rule::GUARD_ALLOW, LedgerKind::Action, reason, None);
            return;
        }
        let text = texts::resume_after_allow(&halt.cause, granted);
        let rule = rule::GUARD_ALLOW;
        let send_id = self.send(
            out,
            crate::supervisor::texts::CT_POKE,
            text.clone(),
            false,
            DeliverAs::Steer,
            Sent::Resume { rule },
        );
        self.outcomes
            .expect(rule, send_id, self.run.awaiting_start(), now.mono_ms);
        let reason = format!("{reason}: resumed the stopped run");
        self.record(out, now, rule, LedgerKind::Action, reason, Some(text));
    }

    /// GUARD-A2: the person leaves it stopped. The question goes; a spent limit still holds.
    pub(in crate::supervisor) fn guard_leave(&mut self, now: Now, out: &mut Vec<Action>) {
        let Some(halt) = self.guard.halt.take() else {
            self.refuse(out, now, rule::GUARD_LEAVE, texts::notify_nothing_paused());
            return;
        };
        if matches!(halt.cause, HaltCause::Daily { .. }) {
            out.push(Action::Daily(DailyAnswer::Leave));
        }
        let reason = format!("you left it stopped ({})", halt.cause.state());
        self.record(out, now, rule::GUARD_LEAVE, LedgerKind::Action, reason, None);
        out.push(Action::Notify {
            level: NotifyLevel::Info,
            text: texts::notify_left_stopped(),
            desktop: false,
        });
    }

    /// The server's core on the day's budget (GUARD-B2).
    pub(in crate::supervisor) fn guard_daily(&mut self, news: DailyNews, now: Now, out: &mut Vec<Action>) {
        match news {
            DailyNews::Spent(state) => {
                self.guard.daily = Some(state);
                if self.guard.halt.is_none()
                    && let Some((cause, offer)) = self.limit_reached()
                {
                    self.halt(cause, offer, now, out);
                }
            }
            DailyNews::Allowed | DailyNews::NewDay => {
                self.guard.daily = None;
                let Some(halt) = self
                    .guard
                    .halt
                    .take_if(|h| matches!(h.cause, HaltCause::Daily { .. }))
                else {
                    return;
                };
                if news == DailyNews::Allowed {
                    let offer = halt.offer;
                    self.lift(halt, offer, now, out);
                } else {
                    if self.arbiter.stopped() == Some(StopCause::Guard) {
                        self.arbiter.lift_stop();
                    }
                    let reason = "a new day began: the day's budget no longer holds; nothing stopped is \
                                  resumed on its own"
                        .to_string();
                    self.record(out, now, rule::GUARD_DAILY, LedgerKind::Action, reason, None);
                }
            }
            DailyNews::LeftStopped => {
                if self
                    .guard
                    .halt
                    .take_if(|h| matches!(h.cause, HaltCause::Daily { .. }))
                    .is_some()
                {
                    let reason = "the day's pause was answered: left stopped".to_string();
                    self.record(out, now, rule::GUARD_LEAVE, LedgerKind::Action, reason, None);
                }
            }
        }
    }
}
