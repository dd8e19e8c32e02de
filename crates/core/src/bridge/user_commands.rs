//! pi commands the bridge registers for the user (`/poke`, `/handoff`, `/wakeups`): the bridge
//! parses what was typed and sends a `user_command` event; pokeshell acts as if the matching key was
//! pressed and answers with a `command_answer` command carrying the same `requestId` and the text
//! pi shows.

use serde::{Deserialize, Serialize};

/// A pi command the user typed, already parsed by the bridge.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct UserCommand {
    /// Numbers the bridge's questions; the answer carries it back.
    pub request_id: u64,
    #[serde(flatten)]
    pub request: UserRequest,
}

/// What the user asked for; `name` on the wire.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "name", rename_all = "snake_case")]
pub enum UserRequest {
    /// `/poke`: a manual poke, as prefix+p.
    Poke,
    /// `/poke status`: the live status lines, as prefix+i shows them.
    PokeStatus,
    /// `/poke on`: supervision on, as the settings dialog would set it.
    PokeOn,
    /// `/poke off`: supervision off.
    PokeOff,
    /// `/handoff [focus]`: a handoff now, as prefix+h.
    Handoff {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        focus: Option<String>,
    },
    /// `/wakeups`: the pending wakeups.
    Wakeups,
    /// `/wakeups cancel ID`.
    WakeupCancel { id: String },
    /// A guard rail's pause answered: allow more (`usd`, else what was offered) and go on, as
    /// prefix+a (GUARD-A1). Asked by the web view's button; the bridge registers no command for it.
    GuardAllow {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        usd: Option<f64>,
    },
    /// Leave the paused session stopped, as prefix+x (GUARD-A2).
    GuardLeave,
    /// A request this pokeshell does not know (a newer bridge); answered as such.
    #[serde(other)]
    Unknown,
}

#[cfg(test)]
mod tests {
    use super::super::{FromBridge, PiEvent, parse_from_bridge};
    use super::*;

    fn parse(line: &str) -> UserCommand {
        match parse_from_bridge(line.as_bytes()) {
            Ok(FromBridge::Event {
                event: PiEvent::UserCommand(c),
                ..
            }) => c,
            other => panic!("not a user command: {other:?}"),
        }
    }

    #[test]
    fn parses_user_commands_as_the_bridge_writes_them() {
        let line = |fields: &str| {
            format!(
                r#"{{"type":"event","seq":3,"at":1,"event":{{"type":"user_command","requestId":7,{fields}}}}}"#
            )
        };
        assert_eq!(
            parse(&line(r#""name":"poke""#)),
            UserCommand {
                request_id: 7,
                request: UserRequest::Poke
            }
        );
        assert_eq!(parse(&line(r#""name":"poke_off""#)).request, UserRequest::PokeOff);
        assert_eq!(
            parse(&line(r#""name":"handoff","focus":"the parser""#)).request,
            UserRequest::Handoff {
                focus: Some("the parser".into())
            }
        );
        assert_eq!(
            parse(&line(r#""name":"handoff""#)).request,
            UserRequest::Handoff { focus: None }
        );
        assert_eq!(
            parse(&line(r#""name":"wakeup_cancel","id":"wake-2""#)).request,
            UserRequest::WakeupCancel { id: "wake-2".into() }
        );
        assert_eq!(
            parse(&line(r#""name":"something_newer","x":1"#)).request,
            UserRequest::Unknown
        );
    }

    #[test]
    fn a_user_command_round_trips() {
        let msg = FromBridge::Event {
            seq: 1,
            at: 2,
            event: PiEvent::UserCommand(UserCommand {
                request_id: 4,
                request: UserRequest::WakeupCancel { id: "wake-1".into() },
            }),
        };
        let line = serde_json::to_string(&msg).unwrap();
        assert!(line.contains(r#""requestId":4"#) && line.contains(r#""name":"wakeup_cancel""#));
        assert_eq!(parse_from_bridge(line.as_bytes()).unwrap(), msg);
    }
}
