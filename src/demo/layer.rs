//! `pokeshell demo` as a layer above the session: what pi and the supervisor report (bridge events
//! going in, ledger records coming out) becomes the director's cues, and the director's acts become
//! inputs for the session: keys typed into pi, settings changed through the settings dialog's path.
//! Scripted answers are queued on the model server the layer holds. The session knows nothing of it.

use std::sync::Arc;

use ratatui::text::{Line, Span};

use crate::demo::director::{Act, Cue, Director, Narration, Stage};
use crate::demo::model::ModelServer;
use crate::pi::bridge::server::BridgeEvent;
use crate::server::event_loop::Layer;
use pokeshell_core::bridge::PiEvent;
use pokeshell_core::config::Change;
use pokeshell_core::session::{Effect, Input, Session};
use pokeshell_core::supervisor::Now;
use pokeshell_core::ui::side::Section;
use pokeshell_core::ui::theme::Tone;

pub struct DemoLayer {
    director: Director,
    /// `None` in tests that only look at the acts.
    model: Option<Arc<ModelServer>>,
    /// Cues seen since the layer last acted, in order.
    cues: Vec<Cue>,
    /// The values a chapter's settings replaced, to put back when it ends.
    saved: Vec<Change>,
}

/// The director's cue in a bridge event, if it holds one.
fn cue_of(event: &BridgeEvent) -> Option<Cue> {
    let BridgeEvent::Event { event, .. } = event else {
        return None;
    };
    Some(match event {
        PiEvent::SessionStart(_) => Cue::PiReady,
        PiEvent::AgentStart => Cue::AgentStart,
        PiEvent::AgentSettled(_) => Cue::AgentSettled,
        PiEvent::SessionBeforeCompact(_) => Cue::Compaction { running: true },
        PiEvent::SessionCompact(_) | PiEvent::SessionCompactFailed(_) => Cue::Compaction { running: false },
        _ => return None,
    })
}

impl DemoLayer {
    pub fn new(director: Director, model: Option<Arc<ModelServer>>) -> Self {
        Self {
            director,
            model,
            cues: Vec::new(),
            saved: Vec::new(),
        }
    }

    pub fn narration(&self) -> Narration {
        self.director.narration()
    }

    fn perform(&mut self, acts: Vec<Act>, session: &Session, out: &mut Vec<Input>) {
        for act in acts {
            match act {
                Act::ApplySettings(changes) => {
                    self.saved = changes
                        .iter()
                        .map(|c| Change {
                            key: c.key,
                            value: session.settings().get(c.key).clone(),
                        })
                        .collect();
                    out.push(Input::ApplySettings(changes));
                }
                Act::RestoreSettings => {
                    let saved = std::mem::take(&mut self.saved);
                    if !saved.is_empty() {
                        out.push(Input::ApplySettings(saved));
                    }
                }
                Act::Queue(scenario) => {
                    if let Some(model) = &self.model {
                        model.replace(*scenario);
                    }
                }
                Act::Type(text) => out.push(Input::TypeIntoChild(text.into_bytes())),
                Act::Enter => out.push(Input::TypeIntoChild(b"\r".to_vec())),
            }
        }
    }
}

impl Layer for DemoLayer {
    fn observe(&mut self, input: &Input) {
        if let Input::Bridge(ev) = input
            && let Some(cue) = cue_of(ev)
        {
            self.cues.push(cue);
        }
    }

    fn observe_effect(&mut self, effect: &Effect) {
        if let Effect::Ledger(record) = effect {
            self.cues.push(Cue::Record {
                rule: record.rule.to_string(),
                kind: record.kind,
                reason: record.reason.clone(),
            });
        }
    }

    /// The director hears of an event after the session has acted on it.
    fn act(&mut self, now: Now, session: &Session) -> Vec<Input> {
        let mut out = Vec::new();
        let mut acted = false;
        for cue in std::mem::take(&mut self.cues) {
            let acts = self.director.handle(cue, now.mono_ms);
            self.perform(acts, session, &mut out);
            acted = true;
        }
        if self
            .director
            .next_deadline()
            .is_some_and(|due| due <= now.mono_ms)
        {
            let acts = self.director.tick(now.mono_ms);
            self.perform(acts, session, &mut out);
            acted = true;
        }
        if acted {
            // The narration may have changed: the side pane shows it.
            out.push(Input::Redraw);
        }
        out
    }

    fn next_deadline(&self) -> Option<u64> {
        self.director.next_deadline()
    }

    fn section(&self) -> Option<Section> {
        Some(demo_section(self.director.narration()))
    }
}

/// The demo's narration: where the tour is, what happens, what to watch, and how to leave.
fn demo_section(n: Narration) -> Section {
    let tone = match n.stage {
        Stage::Recovered => Tone::Ok,
        Stage::Missed => Tone::Error,
        Stage::Playing => Tone::Accent,
        _ => Tone::Plain,
    };
    let mut lines = Vec::new();
    if let Some(title) = n.title {
        lines.push(Line::from(Span::styled(
            title,
            Tone::Plain.style().add_modifier(ratatui::style::Modifier::BOLD),
        )));
    }
    lines.push(Line::from(Span::styled(n.text, tone.style())));
    lines.push(Line::from(Span::styled(
        "leave: /quit, or Ctrl+D on an empty line",
        Tone::Dim.style(),
    )));
    Section {
        title: format!("demo · {}", n.heading),
        lines,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::demo::director::Pace;
    use crate::demo::tour::Tour;
    use pokeshell_core::config::{ConfigPaths, KeyId, SettingValue, Settings};
    use pokeshell_core::session::SessionOptions;
    use pokeshell_core::supervisor::{LedgerKind, LedgerRecord};

    fn at(ms: u64) -> Now {
        Now::new(ms, ms)
    }

    fn with_tour(range: &str) -> (Session, DemoLayer) {
        let paths = ConfigPaths::resolve(
            Some(std::path::Path::new("/nonexistent/home")),
            None,
            std::path::Path::new("/nonexistent/work"),
        )
        .unwrap();
        let settings = Settings::from_loaded(paths, Vec::new());
        let session = Session::new(SessionOptions::default(), settings, 120, 40, at(0));
        let tour = Tour::built_in().unwrap();
        let plans = tour.plans(Some(range.parse().unwrap())).unwrap();
        let model = Arc::new(ModelServer::start().unwrap());
        let layer = DemoLayer::new(Director::new("tour", plans, 7, Pace::default()), Some(model));
        (session, layer)
    }

    fn pi_event(value: serde_json::Value, seq: u64) -> Input {
        let event: PiEvent = serde_json::from_value(value).unwrap();
        Input::Bridge(BridgeEvent::Event {
            conn: 1,
            seq,
            at: 0,
            event,
        })
    }

    /// What the loop does with one input: the layer sees it, the session takes it, the layer acts,
    /// and its inputs go to the session too. Returns the session's effects.
    fn feed(session: &mut Session, layer: &mut DemoLayer, input: Input, now: Now) -> Vec<Effect> {
        layer.observe(&input);
        let mut effects = session.handle(input, now);
        for e in &effects {
            layer.observe_effect(e);
        }
        for input in layer.act(now, session) {
            effects.extend(session.handle(input, now));
        }
        effects
    }

    #[test]
    fn the_chapter_queues_its_answers_and_types_its_prompt_into_pi() {
        let (mut session, mut layer) = with_tour("1");
        let start = json_start();
        feed(&mut session, &mut layer, start, at(0));
        let model = layer.model.clone().unwrap();
        assert_eq!(model.pending().0, 2, "the chapter's two answers are queued");
        let due = layer.next_deadline().expect("the prompt is typed later");
        assert!(due <= 10_000);
        let effects = feed(&mut session, &mut layer, Input::Tick, at(10_000));
        assert_eq!(
            pokeshell_core::session::child_bytes(&effects),
            b"Run the test suite and tell me how it went."
        );
        assert_eq!(layer.narration().heading, "chapter 1/7");
        assert!(layer.section().is_some_and(|s| s.title == "demo · chapter 1/7"));
    }

    fn json_start() -> Input {
        pi_event(
            serde_json::json!({"type": "session_start", "reason": "startup", "sessionId": "s1"}),
            1,
        )
    }

    #[test]
    fn chapter_settings_go_through_the_session_layer_and_come_back_after() {
        let (mut session, mut layer) = with_tour("2");
        assert_eq!(
            session.settings().get(KeyId::PokeAutoAbort),
            &SettingValue::Bool(false)
        );
        feed(&mut session, &mut layer, json_start(), at(0));
        assert_eq!(
            session.settings().get(KeyId::PokeAutoAbort),
            &SettingValue::Bool(true)
        );
        assert_eq!(
            session.settings().get(KeyId::PokeAutoPoke),
            &SettingValue::Bool(false)
        );
        assert!(
            session.supervisor().config().poke.auto_abort,
            "the supervisor follows at once"
        );

        // The prompt is typed and submitted, the run starts, pokeshell aborts it and pi settles.
        let mut t = 0;
        for _ in 0..40 {
            t += 250;
            feed(&mut session, &mut layer, Input::Tick, at(t));
        }
        feed(
            &mut session,
            &mut layer,
            pi_event(serde_json::json!({"type": "agent_start"}), 2),
            at(t),
        );
        let record = LedgerRecord {
            wall_ms: 0,
            session_id: None,
            rule: "POKE-M3",
            kind: LedgerKind::Action,
            reason: "aborted".into(),
            sent: None,
        };
        layer.observe_effect(&Effect::Ledger(record));
        feed(
            &mut session,
            &mut layer,
            pi_event(serde_json::json!({"type": "agent_settled", "aborted": true}), 3),
            at(t),
        );
        feed(&mut session, &mut layer, Input::Tick, at(t + 10_000));
        assert_eq!(
            session.settings().get(KeyId::PokeAutoAbort),
            &SettingValue::Bool(false)
        );
        assert_eq!(
            session.settings().get(KeyId::PokeAutoPoke),
            &SettingValue::Bool(true)
        );
        assert!(!session.supervisor().config().poke.auto_abort);
    }
}
