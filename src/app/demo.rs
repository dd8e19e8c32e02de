//! The app's side of `pokeshell demo`: what pi and the supervisor report becomes the director's cues,
//! and the director's acts become effects: keys typed into pi, settings changed through the settings
//! dialog's path, scripted answers queued on the model.

use std::sync::Arc;
use std::time::{Duration, Instant};

use super::{App, Effect};
use crate::bridge::protocol::PiEvent;
use crate::bridge::server::BridgeEvent;
use crate::config::Change;
use crate::demo::director::{Act, Cue, Director, Narration};
use crate::demo::model::ModelServer;
use crate::supervisor::LedgerRecord;
use crate::ui::theme::Tone;

/// What `run` needs to play a demo: the director for the app, the model for the event loop.
pub struct DemoRun {
    pub director: Director,
    pub model: Arc<ModelServer>,
}

pub(super) struct DemoState {
    director: Director,
    /// The values a chapter's settings replaced, to put back when it ends.
    saved: Vec<Change>,
}

/// The director's cue in a bridge event, if it holds one.
pub fn cue_of(event: &BridgeEvent) -> Option<Cue> {
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

impl App {
    /// Plays a tour: the side pane narrates it and the director drives pi.
    pub fn enable_demo(&mut self, director: Director) {
        self.demo = Some(DemoState {
            director,
            saved: Vec::new(),
        });
    }

    pub fn demo_narration(&self) -> Option<Narration> {
        self.demo.as_ref().map(|d| d.director.narration())
    }

    /// A bridge event, after the app itself handled it.
    pub fn demo_bridge_event(&mut self, event: &BridgeEvent, now: Instant) -> Vec<Effect> {
        match cue_of(event) {
            Some(cue) => self.demo_cue(cue, now),
            None => Vec::new(),
        }
    }

    /// A supervisor record on its way to the ledger.
    pub fn demo_record(&mut self, record: &LedgerRecord, now: Instant) -> Vec<Effect> {
        self.demo_cue(
            Cue::Record {
                rule: record.rule.to_string(),
                kind: record.kind,
                reason: record.reason.clone(),
            },
            now,
        )
    }

    fn demo_cue(&mut self, cue: Cue, now: Instant) -> Vec<Effect> {
        let at = self.now(now).mono_ms;
        let acts = match &mut self.demo {
            Some(d) => d.director.handle(cue, at),
            None => return Vec::new(),
        };
        self.demo_acts(acts, now)
    }

    pub(super) fn demo_tick(&mut self, now: Instant) -> Vec<Effect> {
        let at = self.now(now).mono_ms;
        let acts = match &mut self.demo {
            Some(d) if d.director.next_deadline().is_some_and(|due| due <= at) => d.director.tick(at),
            _ => return Vec::new(),
        };
        self.demo_acts(acts, now)
    }

    pub(super) fn demo_deadline(&self) -> Option<Instant> {
        let due = self.demo.as_ref()?.director.next_deadline()?;
        Some(self.started + Duration::from_millis(due))
    }

    fn demo_acts(&mut self, acts: Vec<Act>, now: Instant) -> Vec<Effect> {
        let mut effects = Vec::new();
        for act in acts {
            match act {
                Act::ApplySettings(changes) => {
                    let saved: Vec<Change> = changes
                        .iter()
                        .map(|c| Change {
                            key: c.key,
                            value: self.settings.get(c.key).clone(),
                        })
                        .collect();
                    if let Some(d) = &mut self.demo {
                        d.saved = saved;
                    }
                    self.demo_settings(&changes, now, &mut effects);
                }
                Act::RestoreSettings => {
                    let saved = self.demo.as_mut().map(|d| std::mem::take(&mut d.saved));
                    if let Some(saved) = saved.filter(|s| !s.is_empty()) {
                        self.demo_settings(&saved, now, &mut effects);
                    }
                }
                Act::Queue(scenario) => effects.push(Effect::DemoModel(scenario)),
                Act::Type(text) => effects.push(Effect::ToChild(text.into_bytes())),
                Act::Enter => effects.push(Effect::ToChild(b"\r".to_vec())),
            }
        }
        effects.push(Effect::Redraw);
        effects
    }

    /// The same path as a change made in the settings dialog: session layer, supervisor, display,
    /// and a session entry in pi.
    fn demo_settings(&mut self, changes: &[Change], now: Instant, effects: &mut Vec<Effect>) {
        if let Err(e) = self.settings.apply_session_changes(changes) {
            self.flash(format!("demo settings: {e}"), Tone::Error, now);
        }
        self.after_settings_change(now, effects);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::app::AppOptions;
    use crate::config::{ConfigPaths, KeyId, SettingValue, Settings};
    use crate::demo::director::Pace;
    use crate::demo::tour::Tour;
    use crate::supervisor::LedgerKind;

    fn app_with_tour(range: &str) -> (App, Instant) {
        let paths = ConfigPaths::resolve(
            Some(std::path::Path::new("/nonexistent/home")),
            None,
            std::path::Path::new("/nonexistent/work"),
        )
        .unwrap();
        let t0 = Instant::now();
        let mut app = App::new(
            AppOptions::default(),
            Settings::from_loaded(paths, Vec::new()),
            120,
            40,
            t0,
        );
        let tour = Tour::built_in().unwrap();
        let plans = tour.plans(Some(range.parse().unwrap())).unwrap();
        app.enable_demo(Director::new("tour", plans, 7, Pace::default()));
        (app, t0)
    }

    fn session_start() -> BridgeEvent {
        let event: PiEvent = serde_json::from_value(serde_json::json!({
            "type": "session_start", "reason": "startup", "sessionId": "s1"
        }))
        .unwrap();
        BridgeEvent::Event {
            conn: 1,
            seq: 1,
            at: 0,
            event,
        }
    }

    #[test]
    fn the_chapter_queues_its_answers_and_types_its_prompt_into_pi() {
        let (mut app, t0) = app_with_tour("1");
        let effects = app.demo_bridge_event(&session_start(), t0);
        assert!(
            effects
                .iter()
                .any(|e| matches!(e, Effect::DemoModel(s) if s.steps.len() == 2)),
            "{effects:?}"
        );
        let later = t0 + Duration::from_secs(10);
        assert_eq!(app.next_tick(t0).map(|t| t <= later), Some(true));
        let typed: Vec<u8> = app
            .on_tick(later)
            .into_iter()
            .filter_map(|e| match e {
                Effect::ToChild(b) => Some(b),
                _ => None,
            })
            .flatten()
            .collect();
        assert_eq!(typed, b"Run the test suite and tell me how it went.");
        let narration = app.demo_narration().unwrap();
        assert_eq!(narration.heading, "chapter 1/7");
    }

    #[test]
    fn chapter_settings_go_through_the_session_layer_and_come_back_after() {
        let (mut app, t0) = app_with_tour("2");
        assert_eq!(
            app.settings().get(KeyId::PokeAutoAbort),
            &SettingValue::Bool(false)
        );
        app.demo_bridge_event(&session_start(), t0);
        assert_eq!(
            app.settings().get(KeyId::PokeAutoAbort),
            &SettingValue::Bool(true)
        );
        assert_eq!(
            app.settings().get(KeyId::PokeAutoPoke),
            &SettingValue::Bool(false)
        );
        assert!(
            app.supervisor.config().poke.auto_abort,
            "the supervisor follows at once"
        );

        // The prompt is typed and submitted, the run starts, pokeshell aborts it and pi settles.
        let mut t = t0;
        for _ in 0..40 {
            t += Duration::from_millis(250);
            app.on_tick(t);
        }
        let agent_start: PiEvent =
            serde_json::from_value(serde_json::json!({"type": "agent_start"})).unwrap();
        app.demo_bridge_event(
            &BridgeEvent::Event {
                conn: 1,
                seq: 2,
                at: 0,
                event: agent_start,
            },
            t,
        );
        let record = LedgerRecord {
            wall_ms: 0,
            session_id: None,
            rule: "POKE-M3",
            kind: LedgerKind::Action,
            reason: "aborted".into(),
            sent: None,
        };
        app.demo_record(&record, t);
        let settled: PiEvent =
            serde_json::from_value(serde_json::json!({"type": "agent_settled", "aborted": true})).unwrap();
        app.demo_bridge_event(
            &BridgeEvent::Event {
                conn: 1,
                seq: 3,
                at: 0,
                event: settled,
            },
            t,
        );
        app.on_tick(t + Duration::from_secs(10));
        assert_eq!(
            app.settings().get(KeyId::PokeAutoAbort),
            &SettingValue::Bool(false)
        );
        assert_eq!(app.settings().get(KeyId::PokeAutoPoke), &SettingValue::Bool(true));
        assert!(!app.supervisor.config().poke.auto_abort);
    }
}
