//! Two terminals on one session: each keeps its own half-typed prefix, sequence and overlay (as
//! tmux keeps one key table per client), and a request goes out for the terminal that asked.

use super::tests::{numbered, t};
use super::*;

const A: ClientId = 7;
const B: ClientId = 9;

fn keys(s: &mut Session, client: ClientId, bytes: &[u8]) -> Vec<Effect> {
    s.handle(
        Input::Stdin {
            client,
            bytes: bytes.to_vec(),
        },
        t(),
    )
}

fn requests(fx: &[Effect]) -> Vec<(ClientId, WorkspaceRequest)> {
    fx.iter()
        .filter_map(|e| match e {
            Effect::Workspace { client, req } => Some((*client, req.clone())),
            _ => None,
        })
        .collect()
}

#[test]
fn a_prefix_pressed_in_one_terminal_does_not_take_the_next_key_of_another() {
    let mut s = numbered();
    let fx = keys(&mut s, A, b"\x1d");
    assert!(child_bytes(&fx).is_empty());
    assert_eq!(
        s.own_views(),
        vec![A],
        "A's footer shows its prefix armed, B's does not"
    );
    assert!(s.footer_view(t(), Some(A)).armed);
    assert!(!s.footer_view(t(), Some(B)).armed);

    let fx = keys(&mut s, B, b"d");
    assert_eq!(child_bytes(&fx), b"d", "B's d is a key for pi");
    assert!(requests(&fx).is_empty(), "B is not detached");

    let fx = keys(&mut s, A, b"d");
    assert_eq!(
        requests(&fx),
        vec![(A, WorkspaceRequest::Detach)],
        "A, only A, detaches"
    );
    assert!(child_bytes(&fx).is_empty());
    assert!(s.own_views().is_empty());
}

#[test]
fn an_overlay_belongs_to_the_terminal_that_opened_it() {
    let mut s = numbered();
    keys(&mut s, A, b"\x1d?");
    assert_eq!(s.overlay(A), Some(OverlayKind::Help));
    assert_eq!(s.overlay(B), None);
    assert_eq!(s.own_views(), vec![A]);
    let fx = keys(&mut s, B, b"hi");
    assert_eq!(child_bytes(&fx), b"hi", "B types into pi while A reads the help");
    assert_eq!(s.overlay(A), Some(OverlayKind::Help));
    // Each opens its own switcher; choosing in one switches that terminal only.
    keys(&mut s, B, b"\x1dw");
    assert_eq!(s.overlay(B), Some(OverlayKind::Switcher));
    let fx = keys(&mut s, B, b"\x1b");
    assert!(requests(&fx).is_empty());
    assert_eq!(s.overlay(B), None);
    assert_eq!(s.overlay(A), Some(OverlayKind::Help), "A's help stays open");
}

#[test]
fn a_terminal_that_leaves_takes_its_prefix_and_overlay_with_it() {
    let mut s = numbered();
    keys(&mut s, A, b"\x1d");
    keys(&mut s, B, b"\x1di");
    assert_eq!(s.overlay(B), Some(OverlayKind::Status));
    let fx = s.handle(Input::ClientLeft { client: A }, t());
    assert!(fx.contains(&Effect::Redraw));
    s.handle(Input::ClientLeft { client: B }, t());
    assert!(s.own_views().is_empty());
    // Were the ids used again, nothing of the old terminals would be left.
    let fx = keys(&mut s, A, b"d");
    assert_eq!(child_bytes(&fx), b"d");
    assert_eq!(s.overlay(B), None);
}

#[test]
fn a_half_typed_sequence_waits_for_its_own_terminal_only() {
    let mut s = numbered();
    let fx = keys(&mut s, A, b"\x1b[1;");
    assert!(child_bytes(&fx).is_empty());
    assert!(s.input_pending(A));
    assert!(!s.input_pending(B));
    let fx = keys(&mut s, B, b"x");
    assert_eq!(child_bytes(&fx), b"x", "B's key is not glued to A's sequence");
    let fx = keys(&mut s, A, b"5A");
    assert_eq!(child_bytes(&fx), b"\x1b[1;5A", "A's sequence arrives whole");
    let fx = keys(&mut s, B, b"\x1b[2");
    assert!(child_bytes(&fx).is_empty());
    let fx = s.handle(Input::InputIdle { client: A }, t());
    assert!(child_bytes(&fx).is_empty(), "A's pause does not cut B's sequence");
    let fx = s.handle(Input::InputIdle { client: B }, t());
    assert_eq!(
        child_bytes(&fx),
        b"\x1b[2",
        "B's sequence goes out as it is when B pauses"
    );
}

#[test]
fn a_settings_change_in_one_terminal_shows_in_the_dialog_open_in_another() {
    let mut s = numbered();
    keys(&mut s, A, b"\x1dc");
    keys(&mut s, B, b"\x1dc");
    assert_eq!(s.overlay(A), Some(OverlayKind::Settings));
    assert_eq!(s.overlay(B), Some(OverlayKind::Settings));
    let before = s.settings().effective().display.prefix_key.clone();
    s.handle(
        Input::ApplySettings(vec![crate::config::Change {
            key: crate::config::KeyId::PrefixKey,
            value: crate::config::SettingValue::Text("ctrl+a".into()),
        }]),
        t(),
    );
    assert_ne!(s.settings().effective().display.prefix_key, before);
    // The new prefix is every terminal's: ctrl+a then ? opens A's help (Esc leaves the dialog).
    keys(&mut s, A, b"\x1b");
    keys(&mut s, A, b"\x01?");
    assert_eq!(s.overlay(A), Some(OverlayKind::Help));
    assert_eq!(s.overlay(B), Some(OverlayKind::Settings));
}
