//! What the user's input does: bytes routed to pi or to pokeshell, the overlays' keys, and the
//! commands after the prefix (declared in `ui::commands`).

use std::time::Instant;

use crossterm::event::{KeyCode, KeyEvent, KeyEventKind};

use super::{App, Effect, Overlay, is_suspend_key, mouse, view};
use crate::config::Scope;
use crate::input::keys;
use crate::input::router::Routed;
use crate::input::tokenizer::Token;
use crate::screen::ChildModes;
use crate::supervisor::Event as SupEvent;
use crate::ui::commands::{self, CommandId, Dispatch};
use crate::ui::prompt::{LinePrompt, PromptOutcome};
use crate::ui::settings_dialog::{DialogOutcome, SettingsDialog};
use crate::ui::status_overlay::StatusOverlay;
use crate::ui::theme::Tone;

impl App {
    /// True while bytes are held back waiting for the rest of a sequence.
    pub fn input_pending(&self) -> bool {
        self.tokenizer.has_pending()
    }

    /// Host input: routes every token to pi or to pokeshell.
    pub fn on_stdin(&mut self, bytes: &[u8], child: &ChildModes, now: Instant) -> Vec<Effect> {
        let tokens = self.tokenizer.feed(bytes);
        self.on_tokens(tokens, child, now)
    }

    /// No more input came for a while: release a held partial sequence as it is.
    pub fn on_input_idle(&mut self, child: &ChildModes, now: Instant) -> Vec<Effect> {
        let tokens = self.tokenizer.flush();
        self.on_tokens(tokens, child, now)
    }

    fn on_tokens(&mut self, tokens: Vec<Token>, child: &ChildModes, now: Instant) -> Vec<Effect> {
        let mut effects = Vec::new();
        let mut out: Vec<u8> = Vec::new();
        for token in tokens {
            if self.overlay.is_some() {
                self.overlay_input(&token, now, &mut effects);
                continue;
            }
            match self.router.route(token) {
                None => {}
                Some(Routed::Child(tok)) => {
                    if let Token::Key(b) = &tok
                        && keys::decode(b).is_some_and(|k| is_suspend_key(&k))
                    {
                        self.suspend_key_at = Some(now);
                    }
                    self.forward(tok, child, &mut out)
                }
                Some(Routed::PrefixArmed) => effects.push(Effect::Redraw),
                Some(Routed::Command { key, raw }) => {
                    // Keep byte order: what was typed before the command goes first.
                    if !out.is_empty() {
                        effects.push(Effect::ToChild(std::mem::take(&mut out)));
                    }
                    self.command(key, raw, now, &mut effects);
                    effects.push(Effect::Redraw);
                }
            }
        }
        if !out.is_empty() {
            effects.push(Effect::ToChild(out));
        }
        effects
    }

    /// Adapts a token to what the child asked for: paste markers only if it enabled bracketed
    /// paste, mouse reports only if it asked for them, in its encoding and pane coordinates.
    fn forward(&self, token: Token, child: &ChildModes, out: &mut Vec<u8>) {
        match token {
            Token::PasteStart if child.bracketed_paste => out.extend_from_slice(b"\x1b[200~"),
            Token::PasteEnd if child.bracketed_paste => out.extend_from_slice(b"\x1b[201~"),
            Token::PasteStart | Token::PasteEnd => {}
            Token::PasteData(d) => out.extend_from_slice(&d),
            Token::Key(b) => {
                if let Some(m) = keys::decode_sgr_mouse(&b) {
                    if let Some(bytes) = mouse::translate(m, self.pane(), child.mouse, child.mouse_encoding) {
                        out.extend_from_slice(&bytes);
                    }
                } else if keys::is_focus_report(&b) {
                    if child.focus_reports {
                        out.extend_from_slice(&b);
                    }
                } else {
                    out.extend_from_slice(&b);
                }
            }
        }
    }

    fn overlay_input(&mut self, token: &Token, now: Instant, effects: &mut Vec<Effect>) {
        let keys: Vec<KeyEvent> = match token {
            Token::Key(b) => keys::decode(b).into_iter().collect(),
            // Pasted text goes into the dialog's filter or editor, one character at a time.
            Token::PasteData(d) => String::from_utf8_lossy(d)
                .chars()
                .filter(|c| !c.is_control())
                .map(|c| KeyEvent::from(KeyCode::Char(c)))
                .collect(),
            Token::PasteStart | Token::PasteEnd => Vec::new(),
        };
        for key in keys.into_iter().filter(|k| k.kind != KeyEventKind::Release) {
            let outcome = match &mut self.overlay {
                Some(Overlay::Settings(d)) => d.handle_key(key),
                Some(Overlay::Handoff(p)) => {
                    match p.handle_key(key) {
                        PromptOutcome::None => {}
                        PromptOutcome::Cancel => self.overlay = None,
                        PromptOutcome::Submit(focus) => {
                            self.overlay = None;
                            let focus = (!focus.is_empty()).then_some(focus);
                            self.supervise(SupEvent::ManualHandoff { focus }, now, effects);
                        }
                    }
                    DialogOutcome::None
                }
                Some(Overlay::Help | Overlay::Status(_)) | None => DialogOutcome::Close,
            };
            self.dialog_outcome(outcome, now, effects);
            effects.push(Effect::Redraw);
        }
    }

    fn dialog_outcome(&mut self, outcome: DialogOutcome, now: Instant, effects: &mut Vec<Effect>) {
        match outcome {
            DialogOutcome::None => {}
            DialogOutcome::Close => self.overlay = None,
            DialogOutcome::Changed(changes) => {
                if let Err(e) = self.settings.apply_session_changes(&changes) {
                    self.flash(format!("settings: {e}"), Tone::Error, now);
                }
                self.after_settings_change(now, effects);
            }
            DialogOutcome::SaveProject | DialogOutcome::SaveGlobal => {
                let scope = if outcome == DialogOutcome::SaveProject {
                    Scope::Project
                } else {
                    Scope::Global
                };
                let result = self.settings.save_session(scope);
                if let Some(Overlay::Settings(d)) = &mut self.overlay {
                    d.report_save(&result);
                }
                self.after_settings_change(now, effects);
            }
        }
    }

    pub(super) fn after_settings_change(&mut self, now: Instant, effects: &mut Vec<Effect>) {
        if let Some(Overlay::Settings(d)) = &mut self.overlay {
            d.sync(&self.settings);
        }
        self.settings_applied(now, effects);
        self.persist_settings(effects);
    }

    /// The effective settings may have changed: the display and the supervisor follow at once.
    pub(super) fn settings_applied(&mut self, now: Instant, effects: &mut Vec<Effect>) {
        self.apply_display_settings(effects);
        let config = self.settings.effective().supervisor();
        let actions = self.supervisor.set_config(config, self.now(now));
        self.perform(actions, now, effects);
        effects.push(Effect::Redraw);
    }

    fn command(&mut self, key: KeyEvent, raw: Vec<u8>, now: Instant, effects: &mut Vec<Effect>) {
        let context = commands::Context {
            bridge_connected: self.pi.status == view::BridgeStatus::Connected,
        };
        let id = match commands::dispatch(&key, self.prefix, context) {
            Dispatch::Run(id) => id,
            Dispatch::Refuse { text, tone } => return self.flash(text, tone, now),
        };
        match id {
            CommandId::SendPrefix => effects.push(Effect::ToChild(raw)),
            CommandId::ToggleSide => {
                let visible = self.areas().side.is_some();
                self.side_mode = self.side_mode.toggled(visible);
                effects.push(Effect::Relayout);
            }
            CommandId::Help => self.overlay = Some(Overlay::Help),
            CommandId::Settings => {
                self.overlay = Some(Overlay::Settings(Box::new(SettingsDialog::new(&self.settings))))
            }
            CommandId::Status => {
                let live = self.live_lines(now);
                self.overlay = Some(Overlay::Status(Box::new(StatusOverlay::new(
                    &self.settings,
                    &live,
                ))));
            }
            CommandId::Cancel => {}
            CommandId::Poke => self.supervise(SupEvent::ManualPoke, now, effects),
            CommandId::Handoff => {
                self.overlay = Some(Overlay::Handoff(LinePrompt::new(
                    "Handoff now",
                    "Optional focus for the handoff document. Enter compacts now · Esc cancels",
                )))
            }
        }
    }
}
