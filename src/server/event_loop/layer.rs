//! A layer above the workspace that watches what goes in and comes out, and may add inputs of its
//! own: the server's observer is one, `pokeshell demo`'s director another (they stack). The session
//! does not know a layer exists.

use pokeshell_core::session::{Effect, Input, Session};
use pokeshell_core::supervisor::Now;
use pokeshell_core::ui::side::Section;

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

/// A layer chosen at run time (a session kind's, `server::kind`).
impl Layer for Box<dyn Layer> {
    fn observe(&mut self, input: &Input) {
        (**self).observe(input);
    }

    fn observe_effect(&mut self, effect: &Effect) {
        (**self).observe_effect(effect);
    }

    fn act(&mut self, now: Now, session: &Session) -> Vec<Input> {
        (**self).act(now, session)
    }

    fn next_deadline(&self) -> Option<u64> {
        (**self).next_deadline()
    }

    fn section(&self) -> Option<Section> {
        (**self).section()
    }
}

/// A layer that may be missing (a session without the demo's director).
impl<L: Layer> Layer for Option<L> {
    fn observe(&mut self, input: &Input) {
        if let Some(l) = self {
            l.observe(input);
        }
    }

    fn observe_effect(&mut self, effect: &Effect) {
        if let Some(l) = self {
            l.observe_effect(effect);
        }
    }

    fn act(&mut self, now: Now, session: &Session) -> Vec<Input> {
        self.as_mut().map_or_else(Vec::new, |l| l.act(now, session))
    }

    fn next_deadline(&self) -> Option<u64> {
        self.as_ref().and_then(Layer::next_deadline)
    }

    fn section(&self) -> Option<Section> {
        self.as_ref().and_then(Layer::section)
    }
}

/// Two layers, one above the other: both see every input and effect, the first acts first, and
/// the side pane shows the first section either has.
impl<A: Layer, B: Layer> Layer for (A, B) {
    fn observe(&mut self, input: &Input) {
        self.0.observe(input);
        self.1.observe(input);
    }

    fn observe_effect(&mut self, effect: &Effect) {
        self.0.observe_effect(effect);
        self.1.observe_effect(effect);
    }

    fn act(&mut self, now: Now, session: &Session) -> Vec<Input> {
        let mut inputs = self.0.act(now, session);
        inputs.extend(self.1.act(now, session));
        inputs
    }

    fn next_deadline(&self) -> Option<u64> {
        match (self.0.next_deadline(), self.1.next_deadline()) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    fn section(&self) -> Option<Section> {
        self.0.section().or_else(|| self.1.section())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pokeshell_core::config::{ConfigPaths, Settings};
    use pokeshell_core::session::SessionOptions;

    /// Records what it saw under a name, acts with a notice of its name, has a deadline.
    struct Named {
        name: &'static str,
        seen: Vec<String>,
        due: Option<u64>,
    }

    impl Layer for Named {
        fn observe(&mut self, input: &Input) {
            self.seen.push(format!("{input:?}").chars().take(4).collect());
        }

        fn act(&mut self, _now: Now, _session: &Session) -> Vec<Input> {
            vec![Input::Notice {
                text: self.name.to_string(),
                tone: pokeshell_core::ui::theme::Tone::Plain,
            }]
        }

        fn next_deadline(&self) -> Option<u64> {
            self.due
        }

        fn section(&self) -> Option<Section> {
            Some(Section {
                title: self.name.to_string(),
                lines: Vec::new(),
            })
        }
    }

    fn named(name: &'static str, due: Option<u64>) -> Named {
        Named {
            name,
            seen: Vec::new(),
            due,
        }
    }

    fn session() -> Session {
        let paths = ConfigPaths::resolve(
            Some(std::path::Path::new("/nonexistent/home")),
            None,
            std::path::Path::new("/nonexistent/work"),
        )
        .unwrap();
        let settings = Settings::from_loaded(paths, Vec::new());
        Session::new(SessionOptions::default(), settings, 120, 40, Now::new(0, 0))
    }

    fn names(inputs: &[Input]) -> Vec<String> {
        inputs
            .iter()
            .map(|i| match i {
                Input::Notice { text, .. } => text.clone(),
                other => format!("{other:?}"),
            })
            .collect()
    }

    #[test]
    fn stacked_layers_both_see_everything_and_the_first_acts_first() {
        let mut both = (named("observer", Some(900)), Some(named("director", Some(300))));
        both.observe(&Input::Tick);
        assert_eq!(both.0.seen.len(), 1);
        assert_eq!(both.1.as_ref().unwrap().seen.len(), 1);
        let acted = both.act(Now::new(0, 0), &session());
        assert_eq!(names(&acted), ["observer", "director"]);
        assert_eq!(both.next_deadline(), Some(300), "the sooner of the two");
        assert_eq!(both.section().map(|s| s.title), Some("observer".into()));
    }

    #[test]
    fn a_missing_layer_does_nothing_and_leaves_the_other_in_charge() {
        let mut one = (named("observer", None), None::<Named>);
        let acted = one.act(Now::new(0, 0), &session());
        assert_eq!(names(&acted), ["observer"]);
        assert_eq!(one.next_deadline(), None);
        let other = (NoLayer, Some(named("director", Some(5))));
        assert_eq!(other.next_deadline(), Some(5));
        assert_eq!(other.section().map(|s| s.title), Some("director".into()));
    }
}
