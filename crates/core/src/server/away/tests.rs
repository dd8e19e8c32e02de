//! The list and its pushes, driven by reports and time, with the healthy twins: a person typing at
//! the session or a page showing it gets no push.

use super::*;
use crate::brief::NeedKind;
use crate::config::hours::QuietHours;

const WALL: u64 = 1_700_000_000_000;

fn at(ms: u64) -> Now {
    Now {
        mono_ms: ms,
        wall_ms: WALL + ms,
    }
}

fn question(text: &str) -> Need {
    Need {
        kind: NeedKind::Answer { yes_no: true },
        quote: text.to_string(),
    }
}

fn limit(until_ms: u64) -> Need {
    Need {
        kind: NeedKind::Limit {
            until_wall_ms: WALL + until_ms,
        },
        quote: "rate limit: 429".to_string(),
    }
}

/// Session 1 ("1:api"), followed by `followers`, with its policy.
struct World {
    away: Away,
    followers: Vec<u64>,
    policy: PushPolicy,
    finished: Finished,
}

impl World {
    fn new() -> World {
        World {
            away: Away::default(),
            followers: Vec::new(),
            policy: PushPolicy::default(),
            finished: Finished::default(),
        }
    }

    fn report(&mut self, need: Option<Need>, working: bool, ms: u64) -> Vec<Push> {
        let presence = self.away.presence(1, &self.followers);
        let finished = self.finished.clone();
        self.away.report(
            1,
            "1:api",
            need.as_ref(),
            &finished,
            working,
            self.policy,
            presence,
            at(ms),
        );
        self.look(ms)
    }

    fn look(&mut self, ms: u64) -> Vec<Push> {
        let followers = self.followers.clone();
        self.away.evaluate(at(ms), &move |_| followers.clone())
    }
}

fn paused() -> Need {
    Need {
        kind: NeedKind::Paused,
        quote: "paused by its budget: $1.20 of $1.00.\nAllow more: allow $1.00 more; or leave it stopped."
            .to_string(),
    }
}

fn kinds(pushes: &[Push]) -> Vec<EventKind> {
    pushes.iter().map(|p| p.event.kind).collect()
}

#[test]
fn a_question_while_nobody_is_there_is_pushed_at_once_with_its_quote_and_answers() {
    let mut w = World::new();
    assert!(w.report(None, true, 0).is_empty());
    let pushes = w.report(Some(question("Should I migrate the old rows?")), false, 1000);
    assert_eq!(kinds(&pushes), [EventKind::Question { yes_no: true }]);
    let e = &pushes[0].event;
    assert_eq!((e.session, e.label.as_str()), (1, "1:api"));
    assert_eq!(e.quote, "Should I migrate the old rows?");
    assert_eq!(e.acts, [Act::Yes, Act::No]);
    assert_eq!(w.away.open_event(1).map(|e| e.id), Some(e.id));
    assert!(w.look(2000).is_empty(), "pushed once");
}

/// Issue 33: a guard rail's pause is pushed while the person is away, with "allow more" and "leave it
/// stopped"; one answer closes it. Its healthy twin: a session under its budget reports no need
/// (`session::brief_tests`), and a session that works on, needing nothing, is never pushed.
#[test]
fn a_guard_rails_pause_is_pushed_with_allow_and_leave_and_one_answer_closes_it() {
    let mut w = World::new();
    let pushes = w.report(Some(paused()), false, 1000);
    assert_eq!(kinds(&pushes), [EventKind::Paused]);
    let e = &pushes[0].event;
    assert_eq!(e.acts, [Act::Allow, Act::Leave]);
    assert!(e.quote.contains("allow $1.00 more"), "{}", e.quote);
    assert_eq!(
        w.away.act(1, e.id, Act::Allow, true).map(|a| a.kind),
        Ok(EventKind::Paused)
    );
    assert_eq!(w.away.act(1, e.id, Act::Leave, true), Err(Refusal::MovedOn));
    assert!(w.report(None, true, 2000).is_empty(), "allowed: it works again");
}

#[test]
fn healthy_twin_a_session_under_its_budget_working_on_is_never_pushed() {
    let mut w = World::new();
    for ms in (0..20).map(|i| i * 60_000) {
        assert!(w.report(None, true, ms).is_empty());
    }
    assert_eq!(w.away.open_event(1), None);
}

#[test]
fn healthy_twin_a_person_typing_at_the_session_gets_no_push_until_they_are_away() {
    let mut w = World::new();
    w.followers = vec![7];
    w.away.typed(7, 1, at(500));
    let pushes = w.report(Some(question("Shall I go on?")), false, 1000);
    assert!(pushes.is_empty(), "they are typing: no push");
    assert_eq!(
        w.away.due(),
        Some(500 + w.policy.away_after_ms),
        "looked at again once away"
    );
    // Keys typed just before it came, told late, are no sign they saw it.
    w.away.typed(7, 1, at(1500));
    // They typed well after it came: they saw it, and it is never pushed.
    w.away.typed(7, 1, at(1000 + SEEN_AFTER_MS));
    assert!(w.look(3000 + w.policy.away_after_ms + 1).is_empty());
}

#[test]
fn a_person_who_stops_typing_without_seeing_it_gets_it_once_away() {
    let mut w = World::new();
    w.followers = vec![7];
    w.away.typed(7, 1, at(500));
    assert!(w.report(Some(question("Shall I go on?")), false, 1000).is_empty());
    // The prompt's last keys, told a moment late.
    w.away.typed(7, 1, at(1800));
    let away = 1800 + w.policy.away_after_ms;
    assert!(w.look(away - 1).is_empty());
    assert_eq!(kinds(&w.look(away)), [EventKind::Question { yes_no: true }]);
}

#[test]
fn healthy_twin_a_visible_page_gets_no_push_and_the_event_counts_as_seen() {
    let mut w = World::new();
    w.followers = vec![9];
    w.away.visible(9, true);
    assert!(w.report(Some(question("Shall I go on?")), false, 1000).is_empty());
    assert_eq!(
        w.away.due(),
        None,
        "nothing to wait for while the page is visible"
    );
    w.away.visible(9, false);
    assert!(w.look(60 * 60_000).is_empty(), "it was seen when it came");
    // The same page hidden from the start: the next question is pushed.
    let pushes = w.report(Some(question("And the logs too?")), false, 61 * 60_000);
    assert_eq!(pushes.len(), 1);
}

#[test]
fn a_terminal_that_left_the_session_does_not_count_as_there() {
    let mut w = World::new();
    w.followers = vec![7];
    w.away.typed(7, 1, at(500));
    w.away.left(7);
    w.followers.clear();
    assert_eq!(w.report(Some(question("Shall I?")), false, 1000).len(), 1);
}

#[test]
fn push_when_never_pushes_nothing_and_always_pushes_even_to_a_typing_person() {
    let mut w = World::new();
    w.policy.when = PushWhen::Never;
    assert!(w.report(Some(question("A?")), false, 1000).is_empty());
    let mut w = World::new();
    w.policy.when = PushWhen::Always;
    w.followers = vec![7];
    w.away.typed(7, 1, at(900));
    assert_eq!(w.report(Some(question("A?")), false, 1000).len(), 1);
}

#[test]
fn quiet_hours_hold_a_push_until_they_end_and_drop_it_if_it_is_over_by_then() {
    let mut w = World::new();
    // WALL is 22:13:20 UTC: quiet from 22:00 to 23:00.
    w.policy.quiet = QuietHours::parse("22:00-23:00").unwrap();
    assert!(w.report(Some(question("A?")), false, 0).is_empty());
    let end = w.away.due().expect("looked at again at the end");
    assert_eq!(WALL + end, WALL - (WALL % 3_600_000) + 3_600_000, "23:00");
    assert_eq!(w.look(end).len(), 1);
    // Over before the end: nothing.
    let mut w = World::new();
    w.policy.quiet = QuietHours::parse("22:00-23:00").unwrap();
    w.report(Some(question("A?")), false, 0);
    w.report(None, true, 1000);
    assert!(w.look(3_600_000).is_empty());
}

#[test]
fn pushes_of_one_session_and_kind_are_coalesced_and_an_answer_starts_afresh() {
    let mut w = World::new();
    assert_eq!(w.report(Some(question("A?")), false, 0).len(), 1);
    w.report(None, true, 1000);
    assert!(
        w.report(Some(question("B?")), false, 2000).is_empty(),
        "within the window"
    );
    assert_eq!(w.away.due(), Some(COALESCE_MS));
    let later = w.look(COALESCE_MS);
    assert_eq!(later.len(), 1);
    assert_eq!(later[0].event.quote, "B?", "the one still waiting");
    // Answered from the phone: the next question is news at once.
    let id = later[0].event.id;
    assert!(w.away.act(1, id, Act::Yes, true).is_ok());
    w.report(None, true, COALESCE_MS + 1000);
    assert_eq!(w.report(Some(question("C?")), false, COALESCE_MS + 2000).len(), 1);
}

#[test]
fn a_link_acts_once_for_the_open_event_only() {
    let mut w = World::new();
    let pushes = w.report(Some(question("A?")), false, 0);
    let id = pushes[0].event.id;
    assert_eq!(w.away.act(1, id, Act::Continue, true), Err(Refusal::NotOffered));
    assert_eq!(
        w.away.act(1, id + 100, Act::Yes, true),
        Err(Refusal::MovedOn),
        "another event"
    );
    assert_eq!(
        w.away.act(2, id, Act::Yes, true),
        Err(Refusal::Ended),
        "another session"
    );
    assert_eq!(
        w.away.act(1, id, Act::Yes, false),
        Err(Refusal::Ended),
        "not running"
    );
    assert!(w.away.act(1, id, Act::Yes, true).is_ok());
    assert_eq!(
        w.away.act(1, id, Act::No, true),
        Err(Refusal::MovedOn),
        "answered already"
    );
    // A newer event: the old one's links are refused.
    let pushes = w.report(Some(question("B?")), false, COALESCE_MS + 1);
    assert_eq!(w.away.act(1, id, Act::Yes, true), Err(Refusal::MovedOn));
    assert!(w.away.act(1, pushes[0].event.id, Act::No, true).is_ok());
}

#[test]
fn a_limit_wait_is_pushed_with_its_reset_and_its_end_follows() {
    let mut w = World::new();
    let pushes = w.report(Some(limit(3_600_000)), false, 0);
    assert_eq!(
        kinds(&pushes),
        [EventKind::LimitBegan {
            until_wall_ms: WALL + 3_600_000
        }]
    );
    assert_eq!(pushes[0].event.acts, [Act::ResumeNow, Act::Stop]);
    // The same wait reported again is no news.
    assert!(w.report(Some(limit(3_600_000)), false, 1000).is_empty());
    let ended = w.report(None, true, COALESCE_MS + 5000);
    assert_eq!(kinds(&ended), [EventKind::LimitEnded]);
}

#[test]
fn healthy_twin_a_limit_wait_nobody_was_told_of_ends_in_silence() {
    let mut w = World::new();
    w.followers = vec![7];
    w.away.typed(7, 1, at(0));
    assert!(w.report(Some(limit(60_000)), false, 100).is_empty());
    assert!(w.report(None, true, 60_000).is_empty());
    w.away.left(7);
    w.followers.clear();
    assert!(w.look(10 * 60_000).is_empty());
}

#[test]
fn finished_runs_are_pushed_only_when_asked_and_only_once_they_stay_finished() {
    let mut w = World::new();
    w.report(None, true, 0);
    w.finished = Finished {
        runs: 1,
        quote: "All green.".into(),
    };
    assert!(w.report(None, false, 1000).is_empty());
    assert!(w.look(10_000).is_empty(), "off by default");
    let mut w = World::new();
    w.policy.finished = true;
    w.report(None, true, 0);
    w.finished.runs = 1;
    assert!(w.report(None, false, 1000).is_empty(), "held a moment");
    assert_eq!(kinds(&w.look(1000 + FINISH_HOLD_MS)), [EventKind::Finished]);
    // Poked on at once: no news.
    w.finished.runs = 2;
    w.report(None, false, 20_000);
    w.report(None, true, 20_500);
    assert!(w.look(30_000).is_empty());
}

#[test]
fn a_session_that_ends_on_its_own_is_pushed_and_one_killed_is_not() {
    let mut w = World::new();
    w.report(None, true, 0);
    w.away.ended(1, "1:api", Some(0), Presence::default(), at(1000));
    let pushes = w.look(1000);
    assert_eq!(kinds(&pushes), [EventKind::Ended { code: 0 }]);
    assert!(pushes[0].event.acts.is_empty());
    let mut w = World::new();
    w.report(Some(question("A?")), false, 0);
    w.away.ended(1, "1:api", None, Presence::default(), at(1000));
    assert!(w.look(COALESCE_MS * 2).is_empty());
    assert!(w.away.open_event(1).is_none());
}

#[test]
fn a_person_back_at_the_session_hears_of_the_next_question_at_once_after_they_leave() {
    let mut w = World::new();
    assert_eq!(w.report(Some(question("A?")), false, 0).len(), 1);
    // They come back, answer at the terminal, and leave again.
    w.followers = vec![7];
    w.away.typed(7, 1, at(60_000));
    w.report(None, true, 61_000);
    w.away.left(7);
    w.followers.clear();
    assert_eq!(
        w.report(Some(question("B?")), false, 120_000).len(),
        1,
        "not held as a repeat"
    );
}

#[test]
fn a_pages_input_is_no_typing_its_visibility_is_its_presence() {
    let mut w = World::new();
    w.followers = vec![9];
    w.away.visible(9, false);
    // The page's terminal widget answers pi's queries: input, but not the person's typing.
    w.away.typed(9, 1, at(900));
    assert_eq!(w.report(Some(question("A?")), false, 1000).len(), 1);
}
