//! The core hearing the rails that span sessions: the day's budget summed over every session and told
//! to each [GUARD-B2], the circuit breaker's orders going to the sessions they name [GUARD-K1..K3],
//! a pause answered from a client without keys [GUARD-A1, GUARD-A2].

use super::tests::{client_with_session, now, server, told, up};
use super::*;
use crate::server::guards::{BreakerOrder, DailyAnswer, DailyNews, GuardNote, GuardOrder};
use crate::wire::{GuardAnswer, Up};

fn note(s: &mut ServerState, number: u32, note: GuardNote) -> Vec<ServerEffect> {
    s.handle(ServerEvent::Guard { number, note }, now())
}

fn spent(usd: f64) -> GuardNote {
    GuardNote::Spent {
        usd,
        daily_limit_usd: 1.0,
        utc_offset_secs: 0,
    }
}

/// The guard orders each session got.
fn orders(fx: &[ServerEffect]) -> Vec<(u32, GuardOrder)> {
    fx.iter()
        .filter_map(|e| match e {
            ServerEffect::ToSession {
                number,
                ev: SessionMsg::Guard(order),
            } => Some((*number, order.clone())),
            _ => None,
        })
        .collect()
}

#[test]
fn guard_b2_the_sessions_spend_is_summed_and_every_session_told_once_it_is_spent() {
    let mut s = server();
    let a = client_with_session(&mut s, 1, "api");
    let b = client_with_session(&mut s, 2, "web");
    assert!(
        orders(&note(&mut s, a, spent(0.6))).is_empty(),
        "under the day's budget"
    );
    let fx = note(&mut s, b, spent(0.4));
    let told: Vec<u32> = orders(&fx)
        .into_iter()
        .filter(|(_, o)| matches!(o, GuardOrder::Daily(DailyNews::Spent(_))))
        .map(|(n, _)| n)
        .collect();
    assert_eq!(told, vec![a, b], "every session stops");
    // A session started now hears it at once.
    let c = client_with_session(&mut s, 3, "docs");
    assert_eq!(s.daily.state().map(|d| d.limit_usd), Some(1.0));
    let fx = note(&mut s, a, GuardNote::Daily(DailyAnswer::Allow { usd: 0.5 }));
    let allowed: Vec<u32> = orders(&fx)
        .into_iter()
        .filter(|(_, o)| *o == GuardOrder::Daily(DailyNews::Allowed))
        .map(|(n, _)| n)
        .collect();
    assert_eq!(allowed, vec![a, b, c], "more allowed, for every session");
}

#[test]
fn guard_b2_leaving_it_stopped_answers_the_question_in_every_session() {
    let mut s = server();
    let a = client_with_session(&mut s, 1, "api");
    let b = client_with_session(&mut s, 2, "web");
    note(&mut s, a, spent(2.0));
    let fx = note(&mut s, b, GuardNote::Daily(DailyAnswer::Leave));
    assert_eq!(
        orders(&fx),
        vec![
            (a, GuardOrder::Daily(DailyNews::LeftStopped)),
            (b, GuardOrder::Daily(DailyNews::LeftStopped))
        ]
    );
}

#[test]
fn guard_k1_k3_the_breakers_orders_go_to_the_sessions_it_names() {
    let mut s = server();
    let numbers: Vec<u32> = ["a", "b", "c"]
        .iter()
        .enumerate()
        .map(|(i, name)| client_with_session(&mut s, i as u64 + 1, name))
        .collect();
    let key = "mock · overload".to_string();
    let failed = |until| GuardNote::Failed {
        key: key.clone(),
        until_wall_ms: until,
    };
    assert!(orders(&note(&mut s, numbers[0], failed(5000))).is_empty());
    let fx = note(&mut s, numbers[1], failed(9000));
    assert_eq!(
        orders(&fx),
        vec![(
            numbers[1],
            GuardOrder::Breaker(BreakerOrder::Hold {
                until_wall_ms: 5000,
                prober: "1:a".into()
            })
        )]
    );
    note(&mut s, numbers[2], failed(9000));
    // The probing session ends: the next in line probes.
    let fx = s.handle(
        ServerEvent::Ended {
            number: numbers[0],
            code: 0,
            shutdown: false,
            farewell: Vec::new(),
        },
        now(),
    );
    assert_eq!(
        orders(&fx),
        vec![(numbers[1], GuardOrder::Breaker(BreakerOrder::Probe))]
    );
    let fx = note(&mut s, numbers[1], GuardNote::Recovered { key: key.clone() });
    assert_eq!(
        orders(&fx),
        vec![(
            numbers[2],
            GuardOrder::Breaker(BreakerOrder::Resume {
                after_ms: crate::server::guards::breaker::STAGGER_MS
            })
        )]
    );
}

#[test]
fn guard_a1_a2_a_pause_answered_from_the_web_view_goes_to_the_session_it_names() {
    let mut s = server();
    let a = client_with_session(&mut s, 1, "api");
    s.handle(ServerEvent::Connected { id: 7 }, now());
    let fx = up(
        &mut s,
        7,
        Up::Guard {
            session: "api".into(),
            answer: GuardAnswer::Allow { usd: Some(3.0) },
        },
    );
    assert!(fx.iter().any(|e| matches!(
        e,
        ServerEffect::ToSession { number, ev: SessionMsg::Request(crate::bridge::UserRequest::GuardAllow { usd: Some(u) }) }
            if *number == a && *u == 3.0
    )));
    assert!(
        matches!(told(&fx, 7).as_slice(), [crate::wire::Down::Done { message }] if message.contains("1:api"))
    );
    let fx = up(
        &mut s,
        7,
        Up::Guard {
            session: "nope".into(),
            answer: GuardAnswer::Leave,
        },
    );
    assert!(matches!(
        told(&fx, 7).as_slice(),
        [crate::wire::Down::Error { .. }]
    ));
}
