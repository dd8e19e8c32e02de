//! The settings dialog driven by key events (outcomes and state), and its snapshots.

use std::path::{Path, PathBuf};

use pokeshell_core::config::files::{self, ConfigFile, FileFormat};
use pokeshell_core::config::{
    Change, ConfigPaths, KeyId, SaveError, SaveReport, Scope, SettingValue, Settings, Source,
};
use pokeshell_core::input::key::{KeyCode, KeyEvent, KeyEventKind, KeyModifiers};
use pokeshell_core::ui::settings_dialog::{
    DialogAction, DialogMessage, DialogOutcome, RowKind, SettingsDialog,
};
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use ratatui::style::{Color, Modifier};

const GLOBAL: &str = "/home/u/.pi/agent/settings.json";
const PROJECT: &str = "/work/app/.pi/settings.json";

/// Settings with fixed paths and no disk access: a global and a project file, as given.
fn settings(global: &str, project: &str) -> Settings {
    let paths = ConfigPaths::resolve(Some(Path::new("/home/u")), None, Path::new("/work/app")).unwrap();
    let file = |path: &str, scope, text: &str| {
        files::parse(
            ConfigFile {
                path: PathBuf::from(path),
                scope,
                format: FileFormat::PiSettings,
            },
            text,
        )
    };
    Settings::from_loaded(
        paths,
        vec![
            file(GLOBAL, Scope::Global, global),
            file(PROJECT, Scope::Project, project),
        ],
    )
}

fn plain() -> Settings {
    settings("{}", "{}")
}

fn key(code: KeyCode) -> KeyEvent {
    KeyEvent::new(code, KeyModifiers::NONE)
}

fn ctrl(c: char) -> KeyEvent {
    KeyEvent::new(KeyCode::Char(c), KeyModifiers::CONTROL)
}

fn press(d: &mut SettingsDialog, code: KeyCode) -> DialogOutcome {
    d.handle_key(key(code))
}

fn type_text(d: &mut SettingsDialog, text: &str) {
    for c in text.chars() {
        assert_eq!(d.handle_key(key(KeyCode::Char(c))), DialogOutcome::None);
    }
}

fn select(d: &mut SettingsDialog, target: KeyId) {
    for _ in 0..40 {
        if d.selected_row() == Some(RowKind::Setting(target)) {
            return;
        }
        press(d, KeyCode::Down);
    }
    panic!("{target:?} not reachable");
}

fn change(key: KeyId, value: SettingValue) -> Change {
    Change { key, value }
}

#[test]
fn arrows_move_over_rows_only_and_wrap() {
    let mut d = SettingsDialog::new(&plain());
    assert_eq!(d.selected_row(), Some(RowKind::Setting(KeyId::PokeEnabled)));
    for _ in 0..11 {
        press(&mut d, KeyCode::Down);
    }
    // Eleven poke rows, then the "Recovery" header is skipped.
    assert_eq!(
        d.selected_row(),
        Some(RowKind::Setting(KeyId::RecoveryMaxRetries))
    );
    press(&mut d, KeyCode::Home);
    press(&mut d, KeyCode::Up);
    assert_eq!(d.selected_row(), Some(RowKind::Action(DialogAction::SaveGlobal)));
    press(&mut d, KeyCode::Down);
    assert_eq!(d.selected_row(), Some(RowKind::Setting(KeyId::PokeEnabled)));
}

#[test]
fn enter_and_space_flip_a_toggle_at_once() {
    let mut d = SettingsDialog::new(&plain());
    let out = press(&mut d, KeyCode::Enter);
    assert_eq!(
        out,
        DialogOutcome::Changed(vec![change(KeyId::PokeEnabled, SettingValue::Bool(false))])
    );
    assert_eq!(
        d.shown(KeyId::PokeEnabled),
        Some(&(SettingValue::Bool(false), Source::Session))
    );
    let out = press(&mut d, KeyCode::Char(' '));
    assert_eq!(
        out,
        DialogOutcome::Changed(vec![change(KeyId::PokeEnabled, SettingValue::Bool(true))])
    );
}

#[test]
fn poke_c6_auto_abort_and_auto_poke_exclude_each_other() {
    let mut d = SettingsDialog::new(&plain());
    select(&mut d, KeyId::PokeAutoAbort);
    assert_eq!(
        press(&mut d, KeyCode::Enter),
        DialogOutcome::Changed(vec![
            change(KeyId::PokeAutoAbort, SettingValue::Bool(true)),
            change(KeyId::PokeAutoPoke, SettingValue::Bool(false)),
        ])
    );
    assert_eq!(
        d.shown(KeyId::PokeAutoPoke).map(|(v, _)| v),
        Some(&SettingValue::Bool(false))
    );
    press(&mut d, KeyCode::Down);
    assert_eq!(
        press(&mut d, KeyCode::Enter),
        DialogOutcome::Changed(vec![
            change(KeyId::PokeAutoPoke, SettingValue::Bool(true)),
            change(KeyId::PokeAutoAbort, SettingValue::Bool(false)),
        ])
    );
    // Turning one off implies nothing.
    assert_eq!(
        press(&mut d, KeyCode::Enter),
        DialogOutcome::Changed(vec![change(KeyId::PokeAutoPoke, SettingValue::Bool(false))])
    );
}

#[test]
fn a_choice_cycles_through_its_values() {
    let mut d = SettingsDialog::new(&plain());
    select(&mut d, KeyId::SidePaneVisibility);
    let mut seen = Vec::new();
    for _ in 0..3 {
        match press(&mut d, KeyCode::Enter) {
            DialogOutcome::Changed(c) => seen.push(c[0].value.clone()),
            other => panic!("{other:?}"),
        }
    }
    let expected = ["shown", "hidden", "auto"].map(SettingValue::Choice).to_vec();
    assert_eq!(seen, expected);
}

#[test]
fn poke_c5_number_editor_checks_on_enter_and_stays_open_on_error() {
    let mut d = SettingsDialog::new(&plain());
    select(&mut d, KeyId::PokeThresholdSeconds);
    assert_eq!(press(&mut d, KeyCode::Enter), DialogOutcome::None);
    assert_eq!(
        d.editor().map(|e| e.text.as_str()),
        Some("30"),
        "pre-filled with the value"
    );
    press(&mut d, KeyCode::Backspace);
    press(&mut d, KeyCode::Backspace);
    type_text(&mut d, "0");
    assert_eq!(press(&mut d, KeyCode::Enter), DialogOutcome::None);
    let editor = d.editor().expect("still editing");
    assert_eq!(
        editor.error.as_deref(),
        Some("enter a whole number from 1 to 86400")
    );
    // Typing clears the error; a valid value closes the editor and applies at once.
    press(&mut d, KeyCode::Backspace);
    type_text(&mut d, "45");
    assert_eq!(d.editor().and_then(|e| e.error.clone()), None);
    assert_eq!(
        press(&mut d, KeyCode::Enter),
        DialogOutcome::Changed(vec![change(KeyId::PokeThresholdSeconds, SettingValue::Int(45))])
    );
    assert!(d.editor().is_none());
    assert_eq!(
        d.shown(KeyId::PokeThresholdSeconds),
        Some(&(SettingValue::Int(45), Source::Session))
    );
}

#[test]
fn esc_leaves_the_editor_without_a_change_and_keeps_the_dialog() {
    let mut d = SettingsDialog::new(&plain());
    select(&mut d, KeyId::PokePostCompactMaxPokes);
    press(&mut d, KeyCode::Enter);
    type_text(&mut d, "7");
    assert_eq!(press(&mut d, KeyCode::Esc), DialogOutcome::None);
    assert!(d.editor().is_none());
    assert_eq!(
        d.shown(KeyId::PokePostCompactMaxPokes),
        Some(&(SettingValue::Int(2), Source::Default))
    );
    // Re-entering the same value is not a change.
    press(&mut d, KeyCode::Enter);
    assert_eq!(press(&mut d, KeyCode::Enter), DialogOutcome::None);
}

#[test]
fn the_prefix_key_is_edited_and_checked_too() {
    let mut d = SettingsDialog::new(&plain());
    select(&mut d, KeyId::PrefixKey);
    press(&mut d, KeyCode::Enter);
    d.handle_key(ctrl('u'));
    type_text(&mut d, "x");
    press(&mut d, KeyCode::Enter);
    assert!(
        d.editor()
            .and_then(|e| e.error.as_ref())
            .is_some_and(|e| e.contains("use ctrl+<key>"))
    );
    d.handle_key(ctrl('u'));
    type_text(&mut d, "Ctrl+A");
    assert_eq!(
        press(&mut d, KeyCode::Enter),
        DialogOutcome::Changed(vec![change(
            KeyId::PrefixKey,
            SettingValue::Text("ctrl+a".to_string())
        )])
    );
}

#[test]
fn the_notify_command_is_edited_as_text_and_a_long_one_keeps_its_row() {
    let mut d = SettingsDialog::new(&plain());
    select(&mut d, KeyId::NotifyCommand);
    press(&mut d, KeyCode::Enter);
    assert_eq!(d.editor().map(|e| e.text.as_str()), Some(""));
    let long = "notify-send --urgency=critical --app-name=pokeshell --expire-time=0 attention";
    d.paste(long);
    assert_eq!(
        press(&mut d, KeyCode::Enter),
        DialogOutcome::Changed(vec![change(
            KeyId::NotifyCommand,
            SettingValue::Text(long.to_string())
        )])
    );
    let mut s = plain();
    s.apply_session_changes(&[change(KeyId::NotifyCommand, SettingValue::Text(long.into()))])
        .unwrap();
    let d = SettingsDialog::new(&s);
    let terminal = draw(&d, 80, 56);
    let row = (0..56)
        .map(|y| {
            (0..80)
                .map(|x| terminal.backend().buffer()[(x, y)].symbol().to_string())
                .collect::<String>()
        })
        .find(|line| line.contains("Command when detached"))
        .expect("the row is drawn");
    assert!(row.contains("notify-send…") && row.contains("session"), "{row}");
}

#[test]
fn typing_filters_backspace_edits_ctrl_u_clears_esc_closes() {
    let mut d = SettingsDialog::new(&plain());
    let every_row = d.visible_rows().count();
    type_text(&mut d, "thr");
    assert_eq!(d.filter(), "thr");
    assert_eq!(
        d.selected_row(),
        Some(RowKind::Setting(KeyId::PokeThresholdSeconds))
    );
    let shown: Vec<_> = d.visible_rows().map(|(r, _)| r.kind).collect();
    assert!(shown.len() < 25 && shown.contains(&RowKind::Setting(KeyId::PokeThresholdSeconds)));
    for (row, visible) in d.visible_rows() {
        // Rows matched through the key's name in the file have nothing to highlight in the label.
        let label: Vec<char> = row.label.to_lowercase().chars().collect();
        let hit: String = visible.matched.iter().map(|&i| label[i as usize]).collect();
        assert!(hit == "thr" || hit.is_empty(), "{}: {hit}", row.label);
        if row.kind == RowKind::Setting(KeyId::PokeThresholdSeconds) {
            assert_eq!(hit, "thr");
        }
    }
    press(&mut d, KeyCode::Backspace);
    assert_eq!(d.filter(), "th");
    assert_eq!(d.handle_key(ctrl('u')), DialogOutcome::None);
    assert_eq!(d.filter(), "");
    assert_eq!(
        d.visible_rows().count(),
        every_row,
        "an empty filter shows every row again"
    );
    assert_eq!(
        d.selected_row(),
        Some(RowKind::Setting(KeyId::PokeThresholdSeconds)),
        "selection kept"
    );
    assert_eq!(press(&mut d, KeyCode::Esc), DialogOutcome::Close);
}

#[test]
fn space_types_into_a_non_empty_filter() {
    let mut d = SettingsDialog::new(&plain());
    type_text(&mut d, "side pane");
    assert_eq!(d.filter(), "side pane");
    assert_eq!(
        d.selected_row().map(|k| matches!(
            k,
            RowKind::Setting(KeyId::SidePaneWidth | KeyId::SidePaneVisibility)
        )),
        Some(true)
    );
}

#[test]
fn the_filter_also_matches_the_key_name_in_the_file() {
    let mut d = SettingsDialog::new(&plain());
    type_text(&mut d, "autoabort");
    assert_eq!(d.selected_row(), Some(RowKind::Setting(KeyId::PokeAutoAbort)));
}

#[test]
fn no_match_shows_nothing_and_enter_does_nothing() {
    let mut d = SettingsDialog::new(&plain());
    type_text(&mut d, "zzzz");
    assert_eq!(d.visible_rows().count(), 0);
    assert_eq!(d.selected_row(), None);
    assert_eq!(press(&mut d, KeyCode::Enter), DialogOutcome::None);
    assert_eq!(press(&mut d, KeyCode::Down), DialogOutcome::None);
}

#[test]
fn save_actions_by_row_and_by_key() {
    let mut d = SettingsDialog::new(&plain());
    assert_eq!(d.handle_key(ctrl('s')), DialogOutcome::SaveProject);
    assert_eq!(d.handle_key(ctrl('g')), DialogOutcome::SaveGlobal);
    press(&mut d, KeyCode::End);
    assert_eq!(press(&mut d, KeyCode::Enter), DialogOutcome::SaveGlobal);
    press(&mut d, KeyCode::Up);
    assert_eq!(press(&mut d, KeyCode::Enter), DialogOutcome::SaveProject);
    assert_eq!(d.handle_key(ctrl('c')), DialogOutcome::Close);
}

#[test]
fn key_releases_are_ignored() {
    let mut d = SettingsDialog::new(&plain());
    let mut release = key(KeyCode::Enter);
    release.kind = KeyEventKind::Release;
    assert_eq!(d.handle_key(release), DialogOutcome::None);
    assert_eq!(
        d.shown(KeyId::PokeEnabled).map(|(_, s)| s),
        Some(&Source::Default)
    );
}

#[test]
fn outcomes_applied_to_settings_and_synced_back() {
    let mut s = settings(r#"{"poke": {"thresholdSeconds": 40}}"#, "{}");
    let mut d = SettingsDialog::new(&s);
    assert_eq!(
        d.shown(KeyId::PokeThresholdSeconds).map(|(_, src)| src.label()),
        Some("global")
    );
    select(&mut d, KeyId::PokeAutoAbort);
    let DialogOutcome::Changed(changes) = press(&mut d, KeyCode::Enter) else {
        panic!("no change")
    };
    s.apply_session_changes(&changes).unwrap();
    d.sync(&s);
    assert_eq!(
        d.shown(KeyId::PokeAutoPoke),
        Some(&(SettingValue::Bool(false), Source::Session))
    );
    assert_eq!(
        d.selected_row(),
        Some(RowKind::Setting(KeyId::PokeAutoAbort)),
        "sync keeps the selection"
    );
    assert!(s.effective().poke.auto_abort && !s.effective().poke.auto_poke);
}

#[test]
fn save_results_are_shown_until_the_next_key() {
    let mut d = SettingsDialog::new(&plain());
    let ok = Ok(SaveReport {
        path: PathBuf::from(PROJECT),
        written: vec![KeyId::Bell, KeyId::PokeEnabled],
        still_in_session: vec![],
    });
    d.report_save(&ok);
    assert_eq!(
        d.message(),
        Some(&DialogMessage::Info(format!("saved 2 settings to {PROJECT}")))
    );
    press(&mut d, KeyCode::Down);
    assert_eq!(d.message(), None);
    d.report_save(&Err(SaveError::NothingToSave));
    assert!(matches!(d.message(), Some(DialogMessage::Error(t)) if t.contains("nothing to save")));
}

// ---- snapshots -------------------------------------------------------------------------------

fn draw(d: &SettingsDialog, width: u16, height: u16) -> Terminal<TestBackend> {
    let mut terminal = Terminal::new(TestBackend::new(width, height)).unwrap();
    terminal.draw(|f| f.render_widget(d, f.area())).unwrap();
    terminal
}

fn sample() -> Settings {
    settings(
        r#"{"poke": {"thresholdSeconds": 45, "autoAbort": "yes"}, "pokeshell": {"bell": false}}"#,
        r#"{"handoff": {"percent": 70}, "stalledAgentRecovery": {"maxRetries": 2}}"#,
    )
}

#[test]
fn snapshot_the_whole_list() {
    let mut s = sample();
    s.apply_session_changes(&[change(KeyId::PokePostCompactMaxPokes, SettingValue::Int(3))])
        .unwrap();
    let d = SettingsDialog::new(&s);
    insta::assert_snapshot!(draw(&d, 80, 46).backend());
}

#[test]
fn snapshot_a_filter_with_highlights() {
    let mut d = SettingsDialog::new(&sample());
    type_text(&mut d, "pok");
    let terminal = draw(&d, 80, 24);
    insta::assert_snapshot!(terminal.backend());

    // The matched characters of each label are highlighted, the others are not.
    let buf = terminal.backend().buffer();
    let row_y = (0..buf.area.height)
        .find(|&y| {
            (0..buf.area.width)
                .map(|x| buf[(x, y)].symbol())
                .collect::<String>()
                .contains("Pokes per stall")
        })
        .expect("row drawn");
    let line: Vec<_> = (0..buf.area.width).map(|x| &buf[(x, row_y)]).collect();
    let start = line
        .windows(5)
        .position(|w| w.iter().map(|c| c.symbol()).collect::<String>() == "Pokes")
        .unwrap();
    for (offset, should) in [(0, true), (1, true), (2, true), (3, false), (4, false)] {
        let cell = line[start + offset];
        let lit = cell.fg == Color::Yellow && cell.modifier.contains(Modifier::BOLD | Modifier::UNDERLINED);
        assert_eq!(lit, should, "cell {offset} '{}'", cell.symbol());
    }
}

#[test]
fn snapshot_the_number_editor_showing_an_error() {
    let mut d = SettingsDialog::new(&sample());
    select(&mut d, KeyId::PokeThresholdSeconds);
    press(&mut d, KeyCode::Enter);
    d.handle_key(ctrl('u'));
    type_text(&mut d, "soon");
    press(&mut d, KeyCode::Enter);
    insta::assert_snapshot!(draw(&d, 80, 24).backend());
}

#[test]
fn snapshot_a_narrow_terminal_keeps_the_selection_in_view() {
    let mut d = SettingsDialog::new(&sample());
    press(&mut d, KeyCode::End);
    let terminal = draw(&d, 50, 16);
    insta::assert_snapshot!(terminal.backend());
}

// ---- robustness -------------------------------------------------------------------------------

fn any_key() -> impl proptest::strategy::Strategy<Value = KeyEvent> {
    use proptest::prelude::*;
    prop_oneof![
        Just(key(KeyCode::Up)),
        Just(key(KeyCode::Down)),
        Just(key(KeyCode::End)),
        Just(key(KeyCode::Enter)),
        Just(key(KeyCode::Char(' '))),
        Just(key(KeyCode::Esc)),
        Just(key(KeyCode::Backspace)),
        Just(ctrl('u')),
        Just(ctrl('s')),
        proptest::sample::select(vec!['a', 't', 'p', '0', '5', '9', '-', '.', '%', ']', 'é'])
            .prop_map(|c| key(KeyCode::Char(c))),
    ]
}

proptest::proptest! {
    #[test]
    fn random_keys_never_panic_and_every_change_is_valid(
        keys in proptest::collection::vec(any_key(), 0..60),
        width in 1u16..100,
        height in 1u16..50,
    ) {
        let mut s = sample();
        let mut d = SettingsDialog::new(&s);
        for k in keys {
            match d.handle_key(k) {
                DialogOutcome::Changed(changes) => {
                    proptest::prop_assert!(s.apply_session_changes(&changes).is_ok(), "{changes:?}");
                    d.sync(&s);
                }
                DialogOutcome::Close => break,
                _ => {}
            }
            let visible = d.visible_rows().count();
            proptest::prop_assert_eq!(d.selected_row().is_some(), visible > 0);
        }
        draw(&d, width, height);
    }
}
