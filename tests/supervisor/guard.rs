//! The guard rails' budget, call cap and pause, through the whole supervisor [GUARD-B1, GUARD-B2,
//! GUARD-C1, GUARD-A1, GUARD-A2, GUARD-K1..K3]: the run is stopped at the limit, nothing automatic
//! goes out while it holds, and the person's answer lifts it. Healthy twins: a session under its
//! budget, a budget of 0.

use pokeshell_core::supervisor::event::ToolOutcome;
use pokeshell_core::supervisor::guard::DailyState;
use pokeshell_core::supervisor::guard::circuit::{BreakerNote, BreakerOrder, DailyAnswer, DailyNews};
use pokeshell_core::supervisor::{Action, Event, LedgerKind, StopReason};
use serde_json::json;

use super::sim::Sim;

impl Sim {
    /// One model call of the run, the session having cost `total_usd` after it.
    pub fn model_call(&mut self, total_usd: Option<f64>) -> &mut Self {
        self.event(Event::ModelCall {
            session_cost_usd: total_usd,
        })
    }

    /// A tool call that ran `ms` and returned `result` (its digest stands for it).
    pub fn call(&mut self, id: &str, name: &str, command: &str, result: &str, ms: u64) -> &mut Self {
        self.event(Event::ToolStart {
            id: id.into(),
            name: name.into(),
            args_preview: command.into(),
            args: json!({ "command": command }),
        });
        self.advance_ms(ms);
        self.event(Event::ToolEnd {
            id: id.into(),
            outcome: ToolOutcome {
                is_error: false,
                duration_ms: Some(ms),
                result_digest: Some(format!("digest of {result}")),
            },
        })
    }

    pub fn breaker_notes(&self) -> Vec<BreakerNote> {
        self.actions
            .iter()
            .filter_map(|action| match action {
                Action::Breaker(note) => Some(note.clone()),
                _ => None,
            })
            .collect()
    }

    pub fn daily_answers(&self) -> Vec<DailyAnswer> {
        self.actions
            .iter()
            .filter_map(|action| match action {
                Action::Daily(answer) => Some(answer.clone()),
                _ => None,
            })
            .collect()
    }
}

fn budget(usd: f64) -> Sim {
    Sim::configured(|c| c.guard.budget_usd = usd)
}

#[test]
fn guard_b1_the_run_is_stopped_at_the_call_that_reaches_the_budget_and_the_person_asked() {
    let mut sim = budget(0.30);
    sim.agent_start();
    sim.model_call(Some(0.10)).model_call(Some(0.20));
    assert_eq!(sim.aborts(), 0, "under the budget");
    sim.model_call(Some(0.30));
    assert_eq!(sim.aborts(), 1, "stopped at the call that reached it");
    let view = sim.view();
    let halt = view.guard.halt.expect("paused");
    assert_eq!(halt.cause.state(), "paused by its budget: $0.3000 of $0.3000");
    assert!(sim.footer().contains("⛔ budget"), "{}", sim.footer());
    assert_eq!(sim.records("GUARD-B1", LedgerKind::Action).len(), 1);
    let asked = sim.notifications();
    let (_, text, desktop) = asked.last().expect("asked");
    assert!(
        *desktop && text.contains("prefix+a to allow $0.3000 more"),
        "{text}"
    );
    // The aborted settle resumes nothing; nor does anything later.
    sim.agent_end(StopReason::Aborted).settle_aborted();
    sim.run_for(600);
    assert!(sim.sent().is_empty(), "{:?}", sim.sent());
}

#[test]
fn guard_b1_healthy_twin_under_the_budget_and_without_one_nothing_is_stopped() {
    let mut sim = budget(1.0);
    sim.agent_start();
    for cost in [0.1, 0.3, 0.9] {
        sim.model_call(Some(cost));
    }
    assert_eq!(sim.aborts(), 0);
    assert!(sim.view().guard.halt.is_none());
    let mut none = budget(0.0);
    none.agent_start().model_call(Some(1000.0));
    assert_eq!(none.aborts(), 0, "0 is no budget");
}

#[test]
fn guard_b1_while_over_budget_no_poke_goes_out_and_a_run_the_person_starts_is_stopped_at_once() {
    let mut sim = budget(0.5);
    sim.agent_start().model_call(Some(0.6));
    sim.agent_end(StopReason::Aborted).settle_aborted();
    // Left stopped: the question goes, the budget still holds.
    sim.event(Event::GuardLeave);
    assert!(sim.view().guard.halt.is_none());
    assert_eq!(sim.records("GUARD-A2", LedgerKind::Action).len(), 1);
    let aborts = sim.aborts();
    sim.user_types().agent_start();
    assert_eq!(
        sim.aborts(),
        aborts + 1,
        "the person's own run is stopped before it costs more"
    );
    assert!(sim.view().guard.halt.is_some(), "and asked again");
    sim.manual_poke();
    assert!(
        sim.sent().is_empty(),
        "a manual poke is refused while over budget"
    );
}

#[test]
fn guard_a1_allowing_more_resumes_the_stopped_run_until_the_new_limit() {
    let mut sim = budget(0.5);
    sim.agent_start().model_call(Some(0.5));
    sim.agent_end(StopReason::Aborted).settle_aborted();
    sim.event(Event::GuardAllow { usd: None });
    let sent = sim.sent();
    assert_eq!(sent.len(), 1, "the stopped run resumes");
    assert!(sent[0].text.contains("allow $0.5000 more"), "{}", sent[0].text);
    assert!(sim.view().guard.halt.is_none());
    assert_eq!(sim.view().guard.budget_usd, Some(1.0));
    sim.agent_start().model_call(Some(0.9));
    assert_eq!(sim.aborts(), 1, "under the new limit");
    sim.model_call(Some(1.0));
    assert_eq!(sim.aborts(), 2, "stopped again at it");
}

#[test]
fn guard_c1_the_call_cap_stops_a_run_and_the_persons_word_starts_it_again() {
    let mut sim = Sim::configured(|c| c.guard.max_calls_per_run = 3);
    sim.agent_start();
    sim.model_call(Some(0.0)).model_call(Some(0.0));
    assert_eq!(sim.aborts(), 0);
    sim.model_call(Some(0.0));
    assert_eq!(sim.aborts(), 1);
    assert!(sim.view().guard.halt.is_some());
    sim.agent_end(StopReason::Aborted).settle_aborted();
    sim.event(Event::GuardAllow { usd: None });
    assert_eq!(sim.sent().len(), 1, "resumed");
    sim.agent_start().model_call(Some(0.0)).model_call(Some(0.0));
    assert_eq!(sim.aborts(), 1, "three more allowed");
    // Typing is the person's word too: the count starts again.
    sim.user_types();
    sim.agent_start().model_call(Some(0.0)).model_call(Some(0.0));
    assert_eq!(sim.aborts(), 1);
}

#[test]
fn guard_c1_healthy_twin_a_long_run_the_person_keeps_talking_to_is_never_capped() {
    let mut sim = Sim::configured(|c| c.guard.max_calls_per_run = 5);
    for _ in 0..10 {
        sim.user_types().agent_start();
        for _ in 0..4 {
            sim.model_call(None);
        }
        sim.agent_end(StopReason::Stop).settle();
    }
    assert_eq!(sim.aborts(), 0);
}

#[test]
fn guard_b1_with_supervision_off_the_budget_is_only_recorded() {
    let mut sim = Sim::configured(|c| {
        c.guard.budget_usd = 0.1;
        c.poke.enabled = false;
    });
    sim.agent_start().model_call(Some(0.2));
    assert_eq!(sim.aborts(), 0);
    assert_eq!(sim.records("GUARD-B1", LedgerKind::Declined).len(), 1);
}

#[test]
fn guard_b2_the_days_budget_stops_the_run_and_its_answers_go_to_the_server() {
    let mut sim = Sim::new();
    sim.agent_start();
    let state = DailyState {
        spent_usd: 100.2,
        limit_usd: 100.0,
    };
    sim.event(Event::Daily(DailyNews::Spent(state)));
    assert_eq!(sim.aborts(), 1);
    let halt = sim.view().guard.halt.expect("paused");
    assert!(
        halt.cause.state().contains("$100.20 of $100.00 today"),
        "{}",
        halt.cause.state()
    );
    sim.agent_end(StopReason::Aborted).settle_aborted();
    sim.event(Event::GuardAllow { usd: Some(20.0) });
    assert_eq!(sim.daily_answers(), vec![DailyAnswer::Allow { usd: 20.0 }]);
    assert!(
        sim.sent().is_empty(),
        "the core lifts it, for every session at once"
    );
    sim.event(Event::Daily(DailyNews::Allowed));
    assert!(sim.view().guard.halt.is_none());
    assert_eq!(sim.sent().len(), 1, "the stopped run resumes");
}

#[test]
fn guard_b2_a_new_day_lifts_the_pause_but_resumes_nothing() {
    let mut sim = Sim::new();
    let state = DailyState {
        spent_usd: 5.0,
        limit_usd: 5.0,
    };
    sim.event(Event::Daily(DailyNews::Spent(state)));
    assert!(sim.view().guard.halt.is_some());
    sim.event(Event::Daily(DailyNews::NewDay));
    assert!(sim.view().guard.halt.is_none());
    assert!(sim.sent().is_empty());
}

fn rate_limited(sim: &mut Sim) {
    sim.user_types().agent_start();
    sim.event(Event::AgentEnd {
        stop_reason: Some(StopReason::Error),
        error_message: Some("429 Too Many Requests: try again in 30s".into()),
    });
    let mut tail = vec![pokeshell_core::supervisor::Message::user("go")];
    tail.push(
        pokeshell_core::supervisor::Message::assistant(StopReason::Error, vec![])
            .with_error("429 Too Many Requests: try again in 30s"),
    );
    sim.settle_with(tail);
}

#[test]
fn guard_k1_a_session_held_behind_another_ones_probe_does_not_resume_on_its_own() {
    let mut sim = Sim::new();
    rate_limited(&mut sim);
    assert!(matches!(
        sim.breaker_notes().as_slice(),
        [BreakerNote::Failed {
            kind: "rate limit",
            ..
        }]
    ));
    let until = sim.now.wall_ms + 60_000;
    sim.event(Event::Breaker(BreakerOrder::Hold {
        until_wall_ms: until,
        prober: "1:api".into(),
    }));
    let wait = sim.view().limit_wait.expect("waiting");
    assert_eq!(wait.probe_by.as_deref(), Some("1:api"));
    assert_eq!(wait.at_wall_ms, until, "the shared countdown");
    sim.run_for(120);
    assert!(sim.sent().is_empty(), "held past its own reset time");
    sim.event(Event::Breaker(BreakerOrder::Resume { after_ms: 4000 }));
    sim.run_for(3);
    assert!(sim.sent().is_empty(), "staggered");
    sim.run_for(2);
    assert_eq!(sim.sent().len(), 1, "resumed once the probe got through");
    assert_eq!(sim.records("GUARD-K3", LedgerKind::Action).len(), 1);
    // Its run gets through: the core hears it.
    sim.agent_start().agent_end(StopReason::Stop).settle();
    assert!(matches!(
        sim.breaker_notes().last(),
        Some(BreakerNote::Recovered { kind: "rate limit" })
    ));
}

#[test]
fn guard_k1_typing_leaves_the_circuit_and_a_poke_by_hand_stays_in_it() {
    let mut sim = Sim::new();
    rate_limited(&mut sim);
    sim.manual_poke();
    assert_eq!(
        sim.breaker_notes().len(),
        1,
        "the poke probes for the others: still in the circuit"
    );
    sim.agent_start().agent_end(StopReason::Stop).settle();
    assert!(matches!(
        sim.breaker_notes().last(),
        Some(BreakerNote::Recovered { .. })
    ));
    let mut sim = Sim::new();
    rate_limited(&mut sim);
    sim.event(Event::UserTyped);
    assert!(matches!(
        sim.breaker_notes().last(),
        Some(BreakerNote::Left { .. })
    ));
}

#[test]
fn guard_a1_an_answer_with_nothing_paused_says_so() {
    let mut sim = Sim::new();
    sim.event(Event::GuardAllow { usd: None });
    sim.event(Event::GuardLeave);
    assert_eq!(sim.records("GUARD-A1", LedgerKind::Declined).len(), 1);
    assert_eq!(sim.records("GUARD-A2", LedgerKind::Declined).len(), 1);
    assert!(sim.sent().is_empty());
}
