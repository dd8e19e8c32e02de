//! The promise pokes' episode [PROM-B1]: how many were sent since the user last typed or a run last
//! ended without a promise, and whether the give-up was told already.

#[derive(Debug, Default)]
pub(crate) struct PromiseEpisode {
    pokes: u32,
    gave_up: bool,
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

    /// The user typed, or a run ended without a promise.
    pub(crate) fn end(&mut self) {
        *self = Self::default();
    }
}
