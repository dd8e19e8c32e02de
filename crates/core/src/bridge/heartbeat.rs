//! The bridge's heartbeat, and the numbering that lets pokeshell see lost lines: every line the bridge
//! sends after its hello carries `seq`, one counter per extension instance, so a gap is a lost line.

use serde::{Deserialize, Serialize};

/// Sent by a connected bridge every few seconds (5 s unless `POKESHELL_HEARTBEAT_MS` says otherwise).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Heartbeat {
    pub seq: u64,
    /// pi's wall clock, milliseconds since the Unix epoch.
    pub at: u64,
    /// `ctx.isIdle()`; None when pi could not say.
    pub idle: Option<bool>,
    /// `ctx.hasPendingMessages()`; None when pi could not say.
    pub pending_messages: Option<bool>,
    /// Tool call ids between their `tool_execution_start` and `tool_execution_end`, oldest first.
    #[serde(default)]
    pub running_tools: Vec<String>,
}

/// Counts the lines missing from one connection's numbering. The first number seen sets the start:
/// lines lost between connections are what the hello's `dropped` reports.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct SeqGaps {
    last: Option<u64>,
    missed: u64,
}

impl SeqGaps {
    pub fn note(&mut self, seq: u64) {
        match self.last {
            Some(last) if seq <= last => {}
            Some(last) => {
                self.missed += seq - last - 1;
                self.last = Some(seq);
            }
            None => self.last = Some(seq),
        }
    }

    /// Lines missed since the previous call.
    pub fn take_missed(&mut self) -> u64 {
        std::mem::take(&mut self.missed)
    }
}

#[cfg(test)]
mod tests {
    use super::super::{FromBridge, parse_from_bridge};
    use super::*;

    #[test]
    fn parses_a_heartbeat_as_the_bridge_writes_it() {
        let line = br#"{"type":"heartbeat","seq":42,"at":1700000000000,"idle":false,"pendingMessages":null,
            "runningTools":["call_1","call_2"]}"#;
        let FromBridge::Heartbeat(h) = parse_from_bridge(line).unwrap() else {
            panic!("not a heartbeat")
        };
        assert_eq!(
            h,
            Heartbeat {
                seq: 42,
                at: 1_700_000_000_000,
                idle: Some(false),
                pending_messages: None,
                running_tools: vec!["call_1".into(), "call_2".into()],
            }
        );
        let bare = br#"{"type":"heartbeat","seq":1,"at":2,"idle":true,"pendingMessages":false}"#;
        let FromBridge::Heartbeat(h) = parse_from_bridge(bare).unwrap() else {
            panic!("not a heartbeat")
        };
        assert!(h.running_tools.is_empty());
        assert!(
            parse_from_bridge(br#"{"type":"heartbeat","at":2}"#).is_err(),
            "seq is required"
        );
    }

    #[test]
    fn a_heartbeat_round_trips() {
        let msg = FromBridge::Heartbeat(Heartbeat {
            seq: 9,
            at: 3,
            idle: None,
            pending_messages: Some(true),
            running_tools: vec!["a".into()],
        });
        let line = serde_json::to_string(&msg).unwrap();
        assert!(line.contains(r#""runningTools":["a"]"#) && line.contains(r#""pendingMessages":true"#));
        assert_eq!(parse_from_bridge(line.as_bytes()).unwrap(), msg);
    }

    #[test]
    fn replies_carry_their_number_and_older_ones_parse_without() {
        let FromBridge::Reply(r) =
            parse_from_bridge(br#"{"type":"reply","seq":5,"id":1,"ok":true}"#).unwrap()
        else {
            panic!("not a reply")
        };
        assert_eq!(r.seq, Some(5));
        let FromBridge::Reply(r) = parse_from_bridge(br#"{"type":"reply","id":1,"ok":true}"#).unwrap() else {
            panic!("not a reply")
        };
        assert_eq!(r.seq, None);
    }

    #[test]
    fn gaps_count_the_missing_numbers_within_a_connection() {
        let mut gaps = SeqGaps::default();
        gaps.note(40);
        assert_eq!(gaps.take_missed(), 0, "the first number only sets the start");
        gaps.note(41);
        gaps.note(44);
        gaps.note(45);
        gaps.note(49);
        assert_eq!(gaps.take_missed(), 5);
        assert_eq!(gaps.take_missed(), 0, "taking resets");
        gaps.note(45);
        gaps.note(50);
        assert_eq!(gaps.take_missed(), 0, "an old number changes nothing");
    }
}
