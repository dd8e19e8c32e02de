//! A layer above the workspace that watches what goes in and comes out, and may add inputs of its
//! own: `pokeshell demo`'s director is one. The session does not know a layer exists.

use crate::core::session::{Effect, Input, Session};
use crate::core::supervisor::Now;
use crate::core::ui::side::Section;

pub trait Layer {
    /// Sees an input before the workspace takes it.
    fn observe(&mut self, _input: &Input) {}
    /// Sees an effect as the loop performs it.
    fn observe_effect(&mut self, _effect: &Effect) {}
    /// After the workspace acted: the inputs the layer adds now (its time may have come, or what it
    /// saw may call for something).
    fn act(&mut self, _now: Now, _session: &Session) -> Vec<Input> {
        Vec::new()
    }
    /// When [`Layer::act`] must run next (mono ms), if ever.
    fn next_deadline(&self) -> Option<u64> {
        None
    }
    /// A section for the top of the side pane.
    fn section(&self) -> Option<Section> {
        None
    }
}

/// No layer: a plain pokeshell run.
pub struct NoLayer;

impl Layer for NoLayer {}
