//! The outgoing notification as a plain value (every way of pushing sends this same value: ntfy, Web
//! Push), and its shape in ntfy's JSON publishing API.

use serde::Serialize;
use serde_json::{Value, json};

use super::event::{Act, AwayEvent, EventKind};
use crate::format::{clock, duration};

/// The longest title and message sent (characters); the quotes are shorter already.
const TITLE_MAX: usize = 120;
const MESSAGE_MAX: usize = 1000;

/// One push.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Notification {
    /// Names the session as `pokeshell ls` does, and says what happened.
    pub title: String,
    /// What the person needs to decide: the question's last lines, the give-up's reason, the reset.
    pub message: String,
    /// ntfy's scale: 1 (min) to 5 (max), 3 the default.
    pub priority: u8,
    /// ntfy's tags: the first that names an emoji shows as one.
    pub tags: Vec<String>,
    /// The session in the web view (it still needs the login), when the web view runs.
    pub click: Option<String>,
    /// Same for the same session and kind: a receiver that can replaces the older one with it.
    pub tag: String,
    /// The buttons, at most three.
    pub actions: Vec<NoteAction>,
}

/// A button: a capability link that acts with a POST, or "open", a plain link to the session page.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct NoteAction {
    pub label: String,
    pub url: String,
    /// A plain link to open in the browser (`false`: a POST to the capability link acts).
    pub open: bool,
}

/// Where the event's buttons lead: the session page, and a capability link for each act.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Links {
    pub open: Option<String>,
    pub acts: Vec<(Act, String)>,
}

/// The notification for `event`; times are shown `utc_offset_secs` east of UTC.
pub fn build(event: &AwayEvent, links: &Links, now_wall_ms: u64, utc_offset_secs: i32) -> Notification {
    let (what, priority, tag) = match event.kind {
        EventKind::Dialog => ("pi waits in a dialog".to_string(), 4, "question"),
        EventKind::Question { .. } => ("the agent asks you".to_string(), 4, "question"),
        EventKind::GaveUp => ("pokeshell gave up".to_string(), 4, "warning"),
        EventKind::LimitBegan { until_wall_ms } => {
            let at = &clock(until_wall_ms, utc_offset_secs)[..5];
            (format!("provider limit until {at}"), 3, "hourglass_flowing_sand")
        }
        EventKind::LimitEnded => ("resumed after the limit".to_string(), 2, "arrow_forward"),
        EventKind::Ended { code: 0 } => ("pi ended".to_string(), 3, "checkered_flag"),
        EventKind::Ended { code } => (format!("pi ended with code {code}"), 3, "stop_sign"),
        EventKind::Finished => ("the run finished".to_string(), 2, "white_check_mark"),
        EventKind::Paused => ("a guard rail paused it".to_string(), 4, "no_entry"),
    };
    let mut message = clean(&event.quote);
    if let EventKind::LimitBegan { until_wall_ms } = event.kind {
        let at = &clock(until_wall_ms, utc_offset_secs)[..5];
        let left = duration(until_wall_ms.saturating_sub(now_wall_ms));
        let resume = format!("pokeshell resumes the agent at {at} (in {left}) unless you stop it.");
        message = if message.is_empty() {
            resume
        } else {
            format!("{message}\n{resume}")
        };
    }
    if message.is_empty() {
        message = what.clone();
    }
    let mut actions: Vec<NoteAction> = links
        .acts
        .iter()
        .filter(|(act, _)| event.acts.contains(act))
        .take(2)
        .map(|(act, url)| NoteAction {
            label: act.label().to_string(),
            url: url.clone(),
            open: false,
        })
        .collect();
    if let Some(url) = &links.open {
        actions.push(NoteAction {
            label: "Open".to_string(),
            url: url.clone(),
            open: true,
        });
    }
    Notification {
        title: bounded(&format!("{}: {what}", event.label), TITLE_MAX),
        message: bounded(&message, MESSAGE_MAX),
        priority,
        tags: vec![
            tag.to_string(),
            "pokeshell".to_string(),
            event.kind.class().to_string(),
        ],
        click: links.open.clone(),
        tag: format!("pokeshell-{}-{}", event.session, event.kind.class()),
        actions,
    }
}

/// The body of a POST to ntfy's root URL (its JSON publishing): `topic` is the topic's name.
pub fn ntfy_json(n: &Notification, topic: &str) -> Value {
    let actions: Vec<Value> = n
        .actions
        .iter()
        .map(|a| {
            if a.open {
                json!({"action": "view", "label": a.label, "url": a.url, "clear": false})
            } else {
                // The app sends the POST itself; the notification goes once it acted.
                json!({"action": "http", "label": a.label, "url": a.url, "method": "POST", "clear": true})
            }
        })
        .collect();
    let mut body = json!({
        "topic": topic,
        "title": n.title,
        "message": n.message,
        "priority": n.priority,
        "tags": n.tags,
        "actions": actions,
    });
    if let (Some(click), Some(map)) = (&n.click, body.as_object_mut()) {
        map.insert("click".to_string(), Value::String(click.clone()));
    }
    body
}

/// Control characters out (line breaks kept): the text is shown on a lock screen.
fn clean(text: &str) -> String {
    text.chars()
        .filter(|c| *c == '\n' || !c.is_control())
        .collect::<String>()
        .trim()
        .to_string()
}

fn bounded(text: &str, max: usize) -> String {
    if text.chars().count() <= max {
        return text.to_string();
    }
    let mut out: String = text.chars().take(max - 1).collect();
    out.push('…');
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn event(kind: EventKind, quote: &str) -> AwayEvent {
        AwayEvent {
            id: 7,
            session: 3,
            label: "3:api".into(),
            kind,
            quote: quote.into(),
            at_wall_ms: 0,
            acts: kind.acts(),
        }
    }

    fn links() -> Links {
        Links {
            open: Some("https://box.example/?session=3".into()),
            acts: vec![
                (Act::Yes, "https://box.example/act/y".into()),
                (Act::No, "https://box.example/act/n".into()),
            ],
        }
    }

    #[test]
    fn a_question_names_the_session_quotes_it_and_offers_its_answers_and_open() {
        let e = event(EventKind::Question { yes_no: true }, "Migrate\u{7} the old rows?");
        let n = build(&e, &links(), 0, 0);
        assert_eq!(n.title, "3:api: the agent asks you");
        assert_eq!(n.message, "Migrate the old rows?", "no control characters");
        assert_eq!(n.priority, 4);
        assert_eq!(n.tags[0], "question");
        assert_eq!(n.click.as_deref(), Some("https://box.example/?session=3"));
        let labels: Vec<&str> = n.actions.iter().map(|a| a.label.as_str()).collect();
        assert_eq!(labels, ["Yes", "No", "Open"]);
        let body = ntfy_json(&n, "secret-topic");
        assert_eq!(body["topic"], "secret-topic");
        assert_eq!(body["actions"][0]["action"], "http");
        assert_eq!(body["actions"][0]["method"], "POST");
        assert_eq!(body["actions"][0]["url"], "https://box.example/act/y");
        assert_eq!(body["actions"][2]["action"], "view");
        assert_eq!(body["click"], "https://box.example/?session=3");
    }

    #[test]
    fn a_limit_says_when_it_resumes_and_links_for_other_acts_are_left_out() {
        // 10:00 UTC, resuming at 12:30 UTC, shown an hour east.
        let now = 36_000_000;
        let e = event(
            EventKind::LimitBegan {
                until_wall_ms: now + 9_000_000,
            },
            "rate limit: 429",
        );
        let n = build(&e, &links(), now, 3600);
        assert_eq!(n.title, "3:api: provider limit until 13:30");
        assert!(n.message.contains("rate limit: 429"), "{}", n.message);
        assert!(n.message.contains("at 13:30 (in 2h 30m)"), "{}", n.message);
        assert_eq!(n.actions.len(), 1, "yes and no are not this event's: only open");
    }

    #[test]
    fn a_guard_rails_pause_quotes_the_limit_and_offers_allow_and_leave() {
        let quote =
            "paused by its budget: $20.03 of $20.00.\nAllow more: allow $20.00 more; or leave it stopped.";
        let e = event(EventKind::Paused, quote);
        let links = Links {
            open: Some("https://box.example/?session=3".into()),
            acts: vec![
                (Act::Allow, "https://box.example/act/a".into()),
                (Act::Leave, "https://box.example/act/l".into()),
            ],
        };
        let n = build(&e, &links, 0, 0);
        assert_eq!(n.title, "3:api: a guard rail paused it");
        assert_eq!(n.message, quote);
        assert_eq!((n.priority, n.tags[0].as_str()), (4, "no_entry"));
        assert_eq!(n.tag, "pokeshell-3-paused");
        let labels: Vec<&str> = n.actions.iter().map(|a| a.label.as_str()).collect();
        assert_eq!(labels, ["Allow more", "Leave it stopped", "Open"]);
        assert!(!n.actions[0].open && n.actions[2].open);
    }

    #[test]
    fn without_the_web_view_there_are_no_buttons_and_no_click() {
        let e = event(EventKind::GaveUp, "the same call failed 5 times");
        let n = build(&e, &Links::default(), 0, 0);
        assert!(n.actions.is_empty() && n.click.is_none());
        let body = ntfy_json(&n, "t");
        assert!(body.get("click").is_none());
        assert_eq!(body["message"], "the same call failed 5 times");
    }
}
