//! One keyboard per client, as tmux has one key table per client: each terminal attached to the
//! session has its own half-typed sequence, its own prefix state and its own overlay. What they
//! type into pi goes to the one PTY they share.

use std::collections::BTreeMap;

use super::input::KeyInput;
use super::{Overlay, OverlayKind};
use crate::input::prefix::PrefixKey;
use crate::ui::settings_dialog::SettingsDialog;

/// Which terminal an input came from: the server's connection id for the client.
pub type ClientId = u64;

/// One client's keyboard.
pub struct Keyboard {
    pub keys: KeyInput,
    pub overlay: Option<Overlay>,
}

impl Keyboard {
    /// Whether this client sees something the others do not (an overlay, an armed prefix).
    fn own_view(&self) -> bool {
        self.overlay.is_some() || self.keys.is_armed()
    }
}

/// Every client's keyboard, made when its first key comes and dropped when it leaves.
pub struct Keyboards {
    /// The session's prefix key (from its settings), every client's.
    prefix: PrefixKey,
    /// The host reports key releases (pi's kitty flags, mirrored on every client's terminal).
    release_events: bool,
    by_client: BTreeMap<ClientId, Keyboard>,
}

impl Keyboards {
    pub fn new(prefix: PrefixKey) -> Self {
        Self {
            prefix,
            release_events: false,
            by_client: BTreeMap::new(),
        }
    }

    pub fn prefix(&self) -> PrefixKey {
        self.prefix
    }

    /// A new prefix key from the settings, for every client (an unchanged one keeps their state).
    pub fn set_prefix(&mut self, prefix: PrefixKey) {
        self.prefix = prefix;
        for kb in self.by_client.values_mut() {
            kb.keys.set_prefix(prefix);
        }
    }

    pub fn set_release_events(&mut self, on: bool) {
        self.release_events = on;
        for kb in self.by_client.values_mut() {
            kb.keys.set_release_events(on);
        }
    }

    /// The client's keyboard, made fresh for a client not seen yet.
    pub fn of(&mut self, client: ClientId) -> &mut Keyboard {
        let (prefix, release) = (self.prefix, self.release_events);
        self.by_client.entry(client).or_insert_with(|| {
            let mut keys = KeyInput::new(prefix);
            keys.set_release_events(release);
            Keyboard { keys, overlay: None }
        })
    }

    pub fn get(&self, client: ClientId) -> Option<&Keyboard> {
        self.by_client.get(&client)
    }

    /// The client left: its half-typed keys, prefix and overlay go with it.
    pub fn leave(&mut self, client: ClientId) -> bool {
        self.by_client.remove(&client).is_some()
    }

    pub fn overlay(&self, client: ClientId) -> Option<OverlayKind> {
        self.get(client)
            .and_then(|kb| kb.overlay.as_ref())
            .map(Overlay::kind)
    }

    pub fn overlay_mut(&mut self, client: ClientId) -> Option<&mut Overlay> {
        self.by_client.get_mut(&client).and_then(|kb| kb.overlay.as_mut())
    }

    pub fn set_overlay(&mut self, client: ClientId, overlay: Option<Overlay>) {
        self.of(client).overlay = overlay;
    }

    /// True while the client's bytes are held back waiting for the rest of a sequence.
    pub fn pending(&self, client: ClientId) -> bool {
        self.get(client).is_some_and(|kb| kb.keys.pending())
    }

    pub fn is_armed(&self, client: ClientId) -> bool {
        self.get(client).is_some_and(|kb| kb.keys.is_armed())
    }

    /// The clients that see something of their own: each needs a frame of its own.
    pub fn own_views(&self) -> Vec<ClientId> {
        self.by_client
            .iter()
            .filter(|(_, kb)| kb.own_view())
            .map(|(id, _)| *id)
            .collect()
    }

    /// Every open settings dialog, to follow settings that changed.
    pub fn dialogs_mut(&mut self) -> impl Iterator<Item = &mut SettingsDialog> {
        self.by_client
            .values_mut()
            .filter_map(|kb| match &mut kb.overlay {
                Some(Overlay::Settings(d)) => Some(d.as_mut()),
                _ => None,
            })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_client_leaving_takes_its_half_typed_prefix_and_overlay_with_it() {
        let mut k = Keyboards::new(PrefixKey::default());
        k.of(1).keys.feed(b"\x1b[1;");
        assert!(k.pending(1));
        assert!(!k.pending(2), "another client holds nothing");
        k.set_overlay(1, Some(Overlay::Help));
        assert_eq!(k.own_views(), vec![1]);
        assert!(k.leave(1));
        assert!(!k.pending(1));
        assert_eq!(k.overlay(1), None);
        assert!(k.own_views().is_empty());
        assert!(!k.leave(1), "nothing left to drop");
    }

    #[test]
    fn a_new_prefix_key_reaches_every_client_and_those_not_seen_yet() {
        let mut k = Keyboards::new(PrefixKey::default());
        k.of(1);
        let other: PrefixKey = "ctrl+a".parse().expect("a prefix key");
        k.set_prefix(other);
        assert_eq!(k.of(1).keys.prefix(), other);
        assert_eq!(k.of(2).keys.prefix(), other);
    }
}
