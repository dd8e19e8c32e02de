//! Pokes that bring nothing [GUARD-L4]: pokeshell's own messages (resumes, promise pokes, the
//! ladder's own message) after which the agent made no tool call, or only calls it had already made
//! with the same results. Each rule that pokes has its own bound per episode; this one sees them
//! chained, one after another, with nothing coming of them. Not counted: a provider limit's resume
//! (the provider, not the agent, decides what comes of it), the empty-reply retry and the failing-call
//! loop guard (each bounded and giving up on its own), and wakeups (the agent's own plan).

#[derive(Debug, Default)]
pub struct IdlePokes {
    /// A poke went out and its outcome is not judged yet: whether a new call came since.
    pending: Option<bool>,
    /// Pokes in a row that brought nothing.
    count: u32,
}

impl IdlePokes {
    /// One of pokeshell's own messages went out.
    pub fn poked(&mut self) {
        self.pending.get_or_insert(false);
    }

    /// The agent made a call; `new`: one it had not made with that result in this stretch.
    pub fn call(&mut self, new: bool) {
        if new && let Some(progress) = &mut self.pending {
            *progress = true;
        }
    }

    /// pi settled: judges the last poke, if one waits; returns the pokes in a row that brought nothing
    /// when this one did not.
    pub fn settled(&mut self) -> Option<u32> {
        let progress = self.pending.take()?;
        if progress {
            self.count = 0;
            None
        } else {
            self.count = self.count.saturating_add(1);
            Some(self.count)
        }
    }

    /// The person spoke, or a ladder step was taken: the count starts again.
    pub fn clear(&mut self) {
        *self = Self::default();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn guard_l4_pokes_answered_without_a_new_call_are_counted_in_a_row() {
        let mut p = IdlePokes::default();
        for expected in 1..=3 {
            p.poked();
            p.call(false); // the same call again, with the same result
            assert_eq!(p.settled(), Some(expected));
        }
    }

    #[test]
    fn guard_l4_healthy_twin_a_poke_that_brings_a_new_call_starts_the_count_again() {
        let mut p = IdlePokes::default();
        p.poked();
        assert_eq!(p.settled(), Some(1), "answered with text only");
        p.poked();
        p.call(true);
        assert_eq!(p.settled(), None, "the agent did something new");
        p.poked();
        assert_eq!(p.settled(), Some(1), "counted from 1 again");
    }

    #[test]
    fn guard_l4_settles_without_a_poke_judge_nothing() {
        let mut p = IdlePokes::default();
        assert_eq!(p.settled(), None);
        p.call(false);
        assert_eq!(p.settled(), None, "the agent's own run, not a poke's");
        p.poked();
        p.poked();
        assert_eq!(
            p.settled(),
            Some(1),
            "two messages before one settle are one poke"
        );
    }
}
