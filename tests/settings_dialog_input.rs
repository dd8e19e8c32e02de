//! The settings dialog stays cheap whatever is typed or pasted into it: the filter and the editor
//! are bounded, a paste filters the list once, and Esc closes the dialog whatever the filter holds.

use std::path::Path;

use pokeshell_core::config::{ConfigPaths, KeyId, Settings};
use pokeshell_core::input::key::{KeyCode, KeyEvent, KeyModifiers};
use pokeshell_core::ui::settings_dialog::{
    DialogMessage, DialogOutcome, MAX_FILTER_CHARS, RowKind, SettingsDialog,
};

fn plain() -> Settings {
    let paths = ConfigPaths::resolve(Some(Path::new("/home/u")), None, Path::new("/work/app")).unwrap();
    Settings::from_loaded(paths, Vec::new())
}

fn key(code: KeyCode) -> KeyEvent {
    KeyEvent::new(code, KeyModifiers::NONE)
}

/// A small deterministic generator, so the test needs no seed handling.
fn random_chars(n: usize) -> Vec<char> {
    let mut state: u64 = 0x9e37_79b9_7f4a_7c15;
    (0..n)
        .map(|_| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            // Printable ASCII and a slice of the wider planes, as random bytes decode to.
            let pick = (state % 0x3000) as u32 + 0x20;
            char::from_u32(pick).unwrap_or('x')
        })
        .collect()
}

#[test]
fn a_megabyte_paste_filters_the_list_once_and_keeps_a_bounded_filter() {
    let mut d = SettingsDialog::new(&plain());
    let before = d.refilter_count();
    let text: String = "thr".chars().cycle().take(1 << 20).collect();
    d.paste(&text);
    assert_eq!(d.refilter_count(), before + 1, "one refilter for the whole paste");
    assert_eq!(d.filter().chars().count(), MAX_FILTER_CHARS);
    assert!(
        matches!(d.message(), Some(DialogMessage::Info(m)) if m.contains("at most 200 characters")),
        "the dialog says the rest was dropped: {:?}",
        d.message()
    );
}

#[test]
fn a_paste_drops_control_characters() {
    let mut d = SettingsDialog::new(&plain());
    d.paste("thr\n\t\x1b");
    assert_eq!(d.filter(), "thr");
    assert_eq!(
        d.selected_row(),
        Some(RowKind::Setting(KeyId::PokeThresholdSeconds))
    );
}

#[test]
fn a_hundred_thousand_random_keys_do_bounded_work() {
    let mut d = SettingsDialog::new(&plain());
    let before = d.refilter_count();
    for c in random_chars(100_000) {
        assert_eq!(d.handle_key(key(KeyCode::Char(c))), DialogOutcome::None);
        assert!(d.filter().chars().count() <= MAX_FILTER_CHARS);
    }
    assert_eq!(d.filter().chars().count(), MAX_FILTER_CHARS);
    // Once the filter is full a typed key changes nothing and so filters nothing.
    assert_eq!(d.refilter_count() - before, MAX_FILTER_CHARS as u64);
    assert_eq!(d.handle_key(key(KeyCode::Esc)), DialogOutcome::Close);
}

#[test]
fn esc_closes_at_once_with_a_filter_typed() {
    let mut d = SettingsDialog::new(&plain());
    d.paste("side pane");
    assert_eq!(d.handle_key(key(KeyCode::Esc)), DialogOutcome::Close);
}

#[test]
fn a_paste_into_the_editor_is_bounded_and_does_not_refilter() {
    let mut d = SettingsDialog::new(&plain());
    d.paste("threshold");
    assert_eq!(
        d.selected_row(),
        Some(RowKind::Setting(KeyId::PokeThresholdSeconds))
    );
    assert_eq!(d.handle_key(key(KeyCode::Enter)), DialogOutcome::None);
    assert!(d.editor().is_some());
    let before = d.refilter_count();
    d.paste(&"9".repeat(1 << 20));
    assert_eq!(d.refilter_count(), before);
    let editor = d.editor().map(|e| e.text.chars().count());
    assert_eq!(editor, Some(MAX_FILTER_CHARS));
    for _ in 0..1000 {
        d.handle_key(key(KeyCode::Char('9')));
    }
    assert_eq!(d.editor().map(|e| e.text.chars().count()), Some(MAX_FILTER_CHARS));
}
