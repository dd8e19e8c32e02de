//! The promise pokes' episode [PROM-B1]: how many were sent since the user last typed or a run last
//! ended without a promise, whether the give-up was told already, and the second opinion being asked
//! [PROM-A1].

/// A question to the model waiting for its answer.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Asking {
    pub ask_id: u64,
    pub step: String,
    pub due_mono: u64,
}

#[derive(Debug, Default)]
pub(crate) struct PromiseEpisode {
    pokes: u32,
    gave_up: bool,
    asking: Option<Asking>,
    last_ask_id: u64,
}

impl PromiseEpisode {
    pub(crate) fn pokes(&self) -> u32 {
        self.pokes
    }

    pub(crate) fn count_poke(&mut self) {
        self.pokes = self.pokes.saturating_add(1);
    }

    /// The give-up is told once per episode; returns whether this is the first time.
    pub(crate) fn give_up(&mut self) -> bool {
        !std::mem::replace(&mut self.gave_up, true)
    }

    /// The user typed, or a run ended without a promise. A question in flight is the caller's to cancel.
    pub(crate) fn end(&mut self) {
        self.pokes = 0;
        self.gave_up = false;
    }

    /// Starts a question; returns its id.
    pub(crate) fn ask(&mut self, step: String, due_mono: u64) -> u64 {
        self.last_ask_id += 1;
        self.asking = Some(Asking {
            ask_id: self.last_ask_id,
            step,
            due_mono,
        });
        self.last_ask_id
    }

    /// The question `ask_id`, if it is still the one waiting.
    pub(crate) fn answered(&mut self, ask_id: u64) -> Option<Asking> {
        if self.asking.as_ref().is_some_and(|asking| asking.ask_id == ask_id) {
            self.asking.take()
        } else {
            None
        }
    }

    pub(crate) fn drop_ask(&mut self) -> Option<Asking> {
        self.asking.take()
    }

    /// The question waiting past its time, if any.
    pub(crate) fn expired(&mut self, now_mono: u64) -> Option<Asking> {
        if self.ask_deadline().is_some_and(|due| now_mono >= due) {
            self.asking.take()
        } else {
            None
        }
    }

    pub(crate) fn ask_deadline(&self) -> Option<u64> {
        self.asking.as_ref().map(|asking| asking.due_mono)
    }
}
