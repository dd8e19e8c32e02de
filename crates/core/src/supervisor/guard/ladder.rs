//! The escalation ladder [GUARD-E1, GUARD-E2, GUARD-E3] every no-progress rail climbs: first a
//! message that names the repetition and asks for another approach or a short report; then a handoff
//! to a fresh context; then the run is stopped and the person asked. After each step the rails count
//! from zero again, so the next step needs the whole threshold once more. The person's word (a typed
//! prompt, allowing the agent to go on) puts the ladder back at its foot.

use super::texts::short;

/// A repetition a no-progress rail found, with its evidence.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Repeat {
    /// GUARD-L1.
    SameCall { call: String, count: u32 },
    /// GUARD-L2.
    Alternating { a: String, b: String, cycles: u32 },
    /// GUARD-L3.
    SameReply { quote: String, count: u32 },
    /// GUARD-L4.
    IdlePokes { count: u32 },
}

impl Repeat {
    pub fn rule(&self) -> &'static str {
        use crate::supervisor::ledger::rule;
        match self {
            Repeat::SameCall { .. } => rule::GUARD_SAME_CALL,
            Repeat::Alternating { .. } => rule::GUARD_ALTERNATING,
            Repeat::SameReply { .. } => rule::GUARD_SAME_REPLY,
            Repeat::IdlePokes { .. } => rule::GUARD_IDLE_POKES,
        }
    }

    /// The evidence in a few words, for the ledger, the side pane and the messages.
    pub fn evidence(&self) -> String {
        match self {
            Repeat::SameCall { call, count } => {
                format!(
                    "the same call `{}` {count} times in a row with the same result",
                    short(call)
                )
            }
            Repeat::Alternating { a, b, cycles } => format!(
                "two calls taking turns, `{}` and `{}`, {cycles} rounds with unchanged results",
                short(a),
                short(b)
            ),
            Repeat::SameReply { quote, count } => {
                format!("the same reply {count} times in a row (\"{quote}\")")
            }
            Repeat::IdlePokes { count } => {
                format!("{count} pokes in a row that brought no new tool call")
            }
        }
    }
}

/// A rung of the ladder.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Step {
    /// GUARD-E1: a message naming the repetition.
    Message,
    /// GUARD-E2: a handoff to a fresh context.
    Handoff,
    /// GUARD-E3: stop the run and ask the person.
    Stop,
}

impl Step {
    pub fn rule(self) -> &'static str {
        use crate::supervisor::ledger::rule;
        match self {
            Step::Message => rule::GUARD_STEP_MESSAGE,
            Step::Handoff => rule::GUARD_STEP_HANDOFF,
            Step::Stop => rule::GUARD_STEP_STOP,
        }
    }

    /// 1, 2 or 3.
    pub fn number(self) -> u8 {
        match self {
            Step::Message => 1,
            Step::Handoff => 2,
            Step::Stop => 3,
        }
    }
}

#[derive(Debug, Default)]
pub struct Ladder {
    /// Steps taken since the person's last word.
    taken: u8,
}

impl Ladder {
    /// The next rung, taken now. Past the top it stays there: the run is stopped again.
    pub fn climb(&mut self) -> Step {
        self.taken = self.taken.saturating_add(1).min(3);
        match self.taken {
            1 => Step::Message,
            2 => Step::Handoff,
            _ => Step::Stop,
        }
    }

    /// The rung the next repetition would take, for the side pane.
    pub fn taken(&self) -> u8 {
        self.taken
    }

    pub fn reset(&mut self) {
        self.taken = 0;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn guard_e1_e3_the_ladder_goes_message_handoff_stop_and_stays_at_the_top() {
        let mut ladder = Ladder::default();
        assert_eq!(
            [ladder.climb(), ladder.climb(), ladder.climb(), ladder.climb()],
            [Step::Message, Step::Handoff, Step::Stop, Step::Stop]
        );
        ladder.reset();
        assert_eq!(ladder.taken(), 0);
        assert_eq!(
            ladder.climb(),
            Step::Message,
            "the person's word puts it at its foot"
        );
    }

    #[test]
    fn guard_l1_l4_each_repetition_names_its_rule_and_its_evidence() {
        let same = Repeat::SameCall {
            call: "bash {\"command\":\"ls\"}".into(),
            count: 5,
        };
        assert_eq!(same.rule(), "GUARD-L1");
        assert!(
            same.evidence().contains("5 times") && same.evidence().contains("ls"),
            "{}",
            same.evidence()
        );
        let alt = Repeat::Alternating {
            a: "read a".into(),
            b: "read b".into(),
            cycles: 4,
        };
        assert_eq!(alt.rule(), "GUARD-L2");
        assert!(alt.evidence().contains("read a") && alt.evidence().contains("4 rounds"));
        let reply = Repeat::SameReply {
            quote: "Done.".into(),
            count: 3,
        };
        assert_eq!(reply.rule(), "GUARD-L3");
        assert!(reply.evidence().contains("\"Done.\""));
        assert_eq!(Repeat::IdlePokes { count: 3 }.rule(), "GUARD-L4");
    }
}
