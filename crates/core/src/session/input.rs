//! What the user's input does: bytes routed to pi or to pokeshell, the overlays' keys, and the
//! commands after the prefix (declared once in `ui::commands`).

use crate::input::key::{KeyCode, KeyEvent, KeyEventKind};

use super::child::is_suspend_key;
use super::keyboards::ClientId;
use super::{Effect, Overlay, Session, mouse, view};
use crate::input::keys;
use crate::input::prefix::PrefixKey;
use crate::input::router::{Routed, Router};
use crate::input::tokenizer::{Token, Tokenizer};
use crate::supervisor::{Event as SupEvent, Now};
use crate::ui::changes_view::{ChangesOutcome, ChangesView};
use crate::ui::commands::{self, CommandId, Dispatch};
use crate::ui::prompt::{LinePrompt, PromptOutcome};
use crate::ui::settings_dialog::{DialogOutcome, SettingsDialog};
use crate::ui::status_overlay::StatusOverlay;

/// The keyboard's path into the session: whole sequences out of the byte stream, then pi's or ours.
#[derive(Debug)]
pub struct KeyInput {
    prefix: PrefixKey,
    tokenizer: Tokenizer,
    router: Router,
}

impl KeyInput {
    pub fn new(prefix: PrefixKey) -> Self {
        Self {
            prefix,
            tokenizer: Tokenizer::new(),
            router: Router::new(prefix),
        }
    }

    #[cfg(test)]
    pub fn prefix(&self) -> PrefixKey {
        self.prefix
    }

    /// A new prefix key from the settings; an unchanged one keeps the router's state.
    pub fn set_prefix(&mut self, prefix: PrefixKey) {
        if prefix != self.prefix {
            self.prefix = prefix;
            self.router = Router::new(prefix);
        }
    }

    pub fn feed(&mut self, bytes: &[u8]) -> Vec<Token> {
        self.tokenizer.feed(bytes)
    }

    pub fn flush(&mut self) -> Vec<Token> {
        self.tokenizer.flush()
    }

    /// True while bytes are held back waiting for the rest of a sequence.
    pub fn pending(&self) -> bool {
        self.tokenizer.has_pending()
    }

    pub fn is_armed(&self) -> bool {
        self.router.is_armed()
    }

    /// Keeps release reports of pokeshell's own keys away from pi when the host sends them.
    pub fn set_release_events(&mut self, on: bool) {
        self.router.set_release_events(on);
    }

    pub(super) fn route(&mut self, token: Token) -> Option<Routed> {
        self.router.route(token)
    }
}

impl Session {
    /// True while the client's bytes are held back waiting for the rest of a sequence: the loop
    /// sends [`super::Input::InputIdle`] for it when no more come.
    pub fn input_pending(&self, client: ClientId) -> bool {
        self.keys.pending(client)
    }

    pub(super) fn on_tokens(&mut self, client: ClientId, tokens: Vec<Token>, now: Now, fx: &mut Vec<Effect>) {
        let mut out: Vec<u8> = Vec::new();
        for token in tokens {
            if self.keys.overlay(client).is_some() {
                self.overlay_input(client, &token, now, fx);
                continue;
            }
            match self.keys.of(client).keys.route(token) {
                None => {}
                Some(Routed::Child(tok)) => {
                    if let Token::Key(b) = &tok
                        && keys::decode(b).is_some_and(|k| is_suspend_key(&k))
                    {
                        self.child.note_suspend_key(now);
                    }
                    if let Token::Key(b) = &tok
                        && keys::decode_sgr_mouse(b).is_none()
                        && !keys::is_focus_report(b)
                    {
                        self.note_typing(now, fx);
                    }
                    self.forward(tok, &mut out)
                }
                Some(Routed::PrefixArmed) => fx.push(Effect::Redraw),
                Some(Routed::Command { key, raw }) => {
                    // Keep byte order: what was typed before the command goes first.
                    if !out.is_empty() {
                        fx.push(Effect::ToChild(std::mem::take(&mut out)));
                    }
                    self.command(client, key, raw, now, fx);
                    fx.push(Effect::Redraw);
                }
            }
        }
        if !out.is_empty() {
            fx.push(Effect::ToChild(out));
        }
    }

    /// Adapts a token to what the child asked for: paste markers only if it enabled bracketed
    /// paste, mouse reports only if it asked for them, in its encoding and pane coordinates.
    fn forward(&self, token: Token, out: &mut Vec<u8>) {
        let child = self.child.modes();
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

    fn overlay_input(&mut self, client: ClientId, token: &Token, now: Now, fx: &mut Vec<Effect>) {
        // A paste goes into the settings dialog whole: one filter pass, however long it is.
        if let (Token::PasteData(d), Some(Overlay::Settings(dialog))) = (token, self.keys.overlay_mut(client))
        {
            dialog.paste(&String::from_utf8_lossy(d));
            fx.push(Effect::Redraw);
            return;
        }
        let keys: Vec<KeyEvent> = match token {
            Token::Key(b) => keys::decode(b).into_iter().collect(),
            // Pasted text goes into the handoff prompt one character at a time.
            Token::PasteData(d) => String::from_utf8_lossy(d)
                .chars()
                .filter(|c| !c.is_control())
                .map(|c| KeyEvent::from(KeyCode::Char(c)))
                .collect(),
            Token::PasteStart | Token::PasteEnd => Vec::new(),
        };
        for key in keys.into_iter().filter(|k| k.kind != KeyEventKind::Release) {
            let outcome = match self.keys.overlay_mut(client) {
                Some(Overlay::Settings(d)) => d.handle_key(key),
                Some(Overlay::Handoff(p)) => {
                    match p.handle_key(key) {
                        PromptOutcome::None => {}
                        PromptOutcome::Cancel => self.keys.set_overlay(client, None),
                        PromptOutcome::Submit(focus) => {
                            self.keys.set_overlay(client, None);
                            let focus = (!focus.is_empty()).then_some(focus);
                            self.supervise(SupEvent::ManualHandoff { focus }, now, fx);
                        }
                    }
                    DialogOutcome::None
                }
                Some(Overlay::Changes(view)) => {
                    match view.handle_key(key) {
                        ChangesOutcome::None => {}
                        ChangesOutcome::Close => self.keys.set_overlay(client, None),
                        ChangesOutcome::Refresh => self.read_changes(client, fx),
                    }
                    DialogOutcome::None
                }
                Some(Overlay::Switcher(_) | Overlay::NewSession(_)) => {
                    self.workspace_overlay_key(client, key, now, fx);
                    DialogOutcome::None
                }
                Some(Overlay::Help | Overlay::Status(_)) | None => DialogOutcome::Close,
            };
            self.dialog_outcome(client, outcome, now, fx);
            fx.push(Effect::Redraw);
        }
    }

    fn dialog_outcome(&mut self, client: ClientId, outcome: DialogOutcome, now: Now, fx: &mut Vec<Effect>) {
        use crate::config::Scope;
        match outcome {
            DialogOutcome::None => {}
            DialogOutcome::Close => self.keys.set_overlay(client, None),
            DialogOutcome::Changed(changes) => self.apply_changes(&changes, now, fx),
            DialogOutcome::SaveProject => self.save_settings(client, Scope::Project, now, fx),
            DialogOutcome::SaveGlobal => self.save_settings(client, Scope::Global, now, fx),
        }
    }

    fn command(&mut self, client: ClientId, key: KeyEvent, raw: Vec<u8>, now: Now, fx: &mut Vec<Effect>) {
        let context = commands::Context {
            bridge_connected: self.pi.status == view::BridgeStatus::Connected,
        };
        let id = match commands::dispatch(&key, self.keys.prefix(), context) {
            Dispatch::Run(id) => id,
            // A relaunch that waits for its directory: the poke tries it again, with no bridge.
            Dispatch::Refuse { .. }
                if self.watch.not_started.is_some()
                    && matches!(
                        commands::dispatch(
                            &key,
                            self.keys.prefix(),
                            commands::Context {
                                bridge_connected: true
                            }
                        ),
                        Dispatch::Run(CommandId::Poke)
                    ) =>
            {
                CommandId::Poke
            }
            Dispatch::Refuse { text, tone } => return self.flash.show(text, tone, now),
        };
        match id {
            CommandId::SendPrefix => fx.push(Effect::ToChild(raw)),
            CommandId::ToggleSide => {
                self.layout.toggle_side();
                self.relayout(fx);
            }
            CommandId::Help => self.keys.set_overlay(client, Some(Overlay::Help)),
            CommandId::Settings => {
                let dialog = SettingsDialog::new(self.settings.get());
                self.keys
                    .set_overlay(client, Some(Overlay::Settings(Box::new(dialog))));
            }
            CommandId::Status => {
                let live = self.live_lines(now);
                let status = StatusOverlay::new(self.settings.get(), &live);
                self.keys
                    .set_overlay(client, Some(Overlay::Status(Box::new(status))));
            }
            CommandId::Cancel => {}
            CommandId::Switcher | CommandId::SwitchTo | CommandId::NewSession | CommandId::Detach => {
                self.workspace_command(client, id, &key, now, fx)
            }
            CommandId::Poke => {
                if !self.start_again_after_refusal(fx) {
                    self.supervise(SupEvent::ManualPoke, now, fx)
                }
            }
            CommandId::Allow => self.supervise(SupEvent::GuardAllow { usd: None }, now, fx),
            CommandId::Leave => self.supervise(SupEvent::GuardLeave, now, fx),
            CommandId::Changes => {
                let label = self.label();
                self.keys.set_overlay(
                    client,
                    Some(Overlay::Changes(Box::new(ChangesView::reading(&label)))),
                );
                self.read_changes(client, fx);
            }
            CommandId::Handoff => {
                let prompt = LinePrompt::new(
                    "Handoff now",
                    "Optional focus for the handoff document. Enter compacts now · Esc cancels",
                );
                self.keys.set_overlay(client, Some(Overlay::Handoff(prompt)));
            }
        }
    }
}

impl Session {
    /// Asks the world for the session's changes, for `client`'s overlay.
    /// What was shown stays until the new reading comes.
    fn read_changes(&self, client: ClientId, fx: &mut Vec<Effect>) {
        fx.push(Effect::ReadChanges {
            client,
            dir: self.opts.spec.dir.clone(),
            base: self.opts.spec.base.clone(),
        });
    }

    /// The changes a client's overlay asked for came.
    pub(super) fn changes_arrived(
        &mut self,
        client: ClientId,
        result: Result<crate::diff::Changes, String>,
        fx: &mut Vec<Effect>,
    ) {
        if let Some(Overlay::Changes(view)) = self.keys.overlay_mut(client) {
            view.arrived(result);
            fx.push(Effect::Redraw);
        }
    }

    /// "3:api", as the user sees the session named (its name alone when it runs by itself).
    pub(super) fn label(&self) -> String {
        let spec = &self.opts.spec;
        if spec.number == 0 {
            spec.name.clone()
        } else {
            format!("{}:{}", spec.number, spec.name)
        }
    }
}
