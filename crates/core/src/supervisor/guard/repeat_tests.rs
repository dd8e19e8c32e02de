use super::*;

fn call(signature: &str, result: &str) -> Call {
    Call::new(signature, Some(result), signature.to_string(), false)
}

fn slow(signature: &str, result: &str) -> Call {
    Call::new(signature, Some(result), signature.to_string(), true)
}

fn history(calls: impl IntoIterator<Item = Call>) -> CallHistory {
    let mut h = CallHistory::default();
    for c in calls {
        h.push(c);
    }
    h
}

#[test]
fn guard_l1_the_same_call_with_the_same_result_five_times_is_found() {
    let mut h = history((0..4).map(|_| call("bash ls", "a b c")));
    assert_eq!(h.found(5, 4), None, "four times is below the threshold");
    h.push(call("bash ls", "a b c"));
    assert_eq!(
        h.found(5, 4),
        Some(Found::Same {
            call: "bash ls".into(),
            count: 5
        })
    );
}

#[test]
fn guard_l1_a_successful_call_repeated_is_found() {
    // The SAR loop guard counts failures; this rail counts the successes that change nothing.
    let h = history((0..3).map(|_| call("read x", "{\"ok\":true}")));
    assert_eq!(
        h.found(3, 0),
        Some(Found::Same {
            call: "read x".into(),
            count: 3
        })
    );
}

#[test]
fn guard_l1_healthy_twin_a_long_build_with_varied_calls_is_left_alone() {
    // Edit, build, test, read, over and over: the build's output changes with each edit, and no call
    // repeats its result in a row.
    let mut h = CallHistory::default();
    for round in 0..40 {
        h.push(call(&format!("edit src/lib.rs #{round}"), "ok"));
        h.push(call("bash cargo build", &format!("warning count {}", round % 7)));
        h.push(call("bash cargo test", &format!("{} passed", 100 + round)));
        h.push(call(&format!("read src/file{round}.rs"), "fn main() {}"));
        assert_eq!(h.found(5, 4), None, "round {round}");
    }
}

#[test]
fn guard_l1_a_changed_result_breaks_the_count() {
    let mut h = history((0..4).map(|_| call("bash make", "error 1")));
    h.push(call("bash make", "error 2"));
    assert_eq!(h.same_count(false), Some(("bash make".into(), 1)));
    let h = history([
        call("bash date", "12:00:01"),
        call("bash date", "12:00:02"),
        call("bash date", "12:00:03"),
    ]);
    assert_eq!(h.found(2, 2), None, "time stamps that differ are not a repeat");
}

#[test]
fn guard_l1_a_call_without_a_result_digest_never_repeats() {
    let h = history((0..10).map(|_| Call::new("bash ls", None, "ls".into(), false)));
    assert_eq!(h.found(2, 2), None);
}

#[test]
fn guard_l2_two_calls_taking_turns_with_unchanged_results_are_found() {
    let mut h = CallHistory::default();
    for _ in 0..3 {
        h.push(call("read a", "A"));
        h.push(call("read b", "B"));
    }
    assert_eq!(h.found(5, 4), None, "three rounds");
    h.push(call("read a", "A"));
    assert_eq!(h.found(5, 4), None, "a half round is not a round");
    h.push(call("read b", "B"));
    assert_eq!(
        h.found(5, 4),
        Some(Found::Alternating {
            a: "read a".into(),
            b: "read b".into(),
            cycles: 4
        })
    );
}

#[test]
fn guard_l2_healthy_twin_alternating_calls_whose_results_change_are_left_alone() {
    // Edit a file, run the tests, edit, run: the test output changes as the fix takes shape.
    let mut h = CallHistory::default();
    for round in 0..10 {
        h.push(call(&format!("edit lib.rs v{round}"), "ok"));
        h.push(call("bash cargo test", &format!("{} failed", 10 - round)));
    }
    assert_eq!(h.found(5, 4), None);
}

#[test]
fn guard_p1_healthy_twin_a_requested_poll_with_sleeps_between_checks_is_left_alone() {
    // "Wait for CI": sleep, check, sleep, check, with the check saying "pending" every time.
    let mut h = CallHistory::default();
    let mut polls = Vec::new();
    for _ in 0..12 {
        h.push(slow("bash sleep 30", ""));
        h.push(call("bash gh run view", "status: in_progress"));
        assert_eq!(h.found(5, 4), None);
        polls.push(h.poll(5, 4));
    }
    let said: Vec<_> = polls.iter().flatten().collect();
    assert_eq!(
        said,
        vec![&Found::Alternating {
            a: "bash sleep 30".into(),
            b: "bash gh run view".into(),
            cycles: 4
        }],
        "the poll is noted once, when it would have reached the threshold"
    );
}

#[test]
fn guard_p1_healthy_twin_a_check_that_waits_itself_is_a_poll() {
    // `sleep 60 && gh run view`: one call, the same result, but each call waited.
    let mut h = CallHistory::default();
    for _ in 0..20 {
        h.push(slow("bash sleep 60 && gh run view", "pending"));
        assert_eq!(h.found(5, 4), None);
    }
}

#[test]
fn guard_p1_healthy_twin_checks_after_wakeups_are_a_poll() {
    let mut h = CallHistory::default();
    for _ in 0..10 {
        h.push(call("bash gh run view", "pending"));
        h.wait();
    }
    h.push(call("bash gh run view", "pending"));
    assert_eq!(h.found(2, 2), None);
    assert_eq!(
        h.poll(5, 4),
        None,
        "past the threshold by now: said when it reached it"
    );
}

#[test]
fn guard_p1_a_loop_after_a_poll_counts_from_the_last_wait() {
    let mut h = history([slow("bash sleep 30", ""), call("bash gh run view", "done")]);
    for _ in 0..4 {
        h.push(call("bash gh run view", "done"));
    }
    assert_eq!(
        h.found(5, 4),
        Some(Found::Same {
            call: "bash gh run view".into(),
            count: 5
        }),
        "five quick checks after the last wait"
    );
}

#[test]
fn guard_l1_restart_forgets_the_count_but_not_what_was_seen() {
    let mut h = history((0..5).map(|_| call("bash ls", "x")));
    h.restart();
    assert_eq!(h.found(5, 4), None);
    assert!(!h.push(call("bash ls", "x")), "seen before the restart");
    h.clear();
    assert!(h.push(call("bash ls", "x")), "the person's word forgets it");
}

#[test]
fn guard_l1_the_history_stays_bounded() {
    let mut h = CallHistory::default();
    for i in 0..5000 {
        h.push(call(&format!("read {i}"), "x"));
    }
    assert!(h.recent.len() <= KEPT_CALLS);
    assert!(h.seen.len() <= KEPT_SEEN && h.seen_order.len() <= KEPT_SEEN);
}

#[test]
fn guard_l1_a_repeated_failure_is_left_to_the_loop_guard() {
    let h = history((0..8).map(|_| call("bash make", "error: missing file").failed()));
    assert_eq!(h.found(5, 4), None, "SAR-L4 nudges about this one");
    let mut h = CallHistory::default();
    for _ in 0..6 {
        h.push(call("read a", "A"));
        h.push(call("bash make", "error").failed());
    }
    assert_eq!(
        h.found(5, 4),
        None,
        "a round with a failure is the loop guard's too"
    );
}

#[test]
fn guard_p1_a_poll_is_noted_once_from_either_phase() {
    let mut h = CallHistory::default();
    let mut said = 0;
    for _ in 0..10 {
        h.push(slow("bash sleep 30", ""));
        said += usize::from(h.poll(5, 4).is_some());
        h.push(call("bash gh run view", "pending"));
        said += usize::from(h.poll(5, 4).is_some());
    }
    assert_eq!(said, 1);
}
