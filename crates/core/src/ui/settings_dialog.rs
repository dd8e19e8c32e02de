//! The settings dialog (prefix+c), in the manner of pi's SettingsList: every setting in one list,
//! grouped by area, each row showing its value and where the value comes from.
//!
//! Keys: ↑/↓ move (wrapping; group headers are not selectable), Home/End jump; Enter or Space
//! (Space only while the filter is empty) flips a toggle or cycles a choice, and opens the inline
//! editor on a number, the prefix key or a text; in the editor Enter checks the value (a refused value keeps
//! the editor open with the reason), Esc leaves it. Any other printable key types into the filter,
//! Backspace edits it, Ctrl+U clears it; Esc and Ctrl+C close the dialog whatever the filter holds.
//! Ctrl+S saves as project default, Ctrl+G as global default; the two "Save as" rows do the same.
//!
//! The filter and the editor hold at most [`MAX_FILTER_CHARS`] characters, and pasted text arrives
//! whole through [`SettingsDialog::paste`]: the list is filtered once per key press or paste, so no
//! amount of typed or pasted text makes the dialog slow.
//!
//! The dialog keeps a copy of the values it shows. Every change is returned at once as
//! [`DialogOutcome::Changed`]; the caller applies it to `Settings` and may call [`SettingsDialog::sync`].

mod editor;
mod render;
mod rows;

use std::collections::BTreeMap;
use std::path::PathBuf;

use crate::input::key::{KeyCode, KeyEvent, KeyEventKind, KeyModifiers};

use crate::config::schema::{self, KeyId, ValueKind};
use crate::config::{
    Change, ConfigWarning, SaveError, SaveReport, SettingValue, Settings, Source, exclusive,
};

pub use editor::Editor;
pub use rows::{DialogAction, Row, RowKind, Section, Visible};

/// The longest filter (and editor text) the dialog keeps; anything typed or pasted beyond is dropped.
/// No label or key name comes near this length, so a longer filter could never match anything.
pub const MAX_FILTER_CHARS: usize = 200;

/// What a key press did, for the caller to act on.
#[derive(Clone, Debug, PartialEq)]
pub enum DialogOutcome {
    /// Nothing for the caller to do (moved, typed into the filter, opened the editor, …).
    None,
    /// Values changed in the session layer: the asked-for one first, then any POKE-C6 implies.
    Changed(Vec<Change>),
    SaveProject,
    SaveGlobal,
    Close,
}

/// A line shown under the list until the next key press.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum DialogMessage {
    Info(String),
    Error(String),
}

pub struct SettingsDialog {
    rows: Vec<Row>,
    filter: String,
    visible: Vec<Visible>,
    /// Index into `visible`.
    selected: usize,
    editor: Option<Editor>,
    message: Option<DialogMessage>,
    /// Per-key warnings shown in the description area (e.g. pi's tool timeout racing the threshold).
    notes: BTreeMap<KeyId, Vec<String>>,
    project_file: PathBuf,
    global_file: PathBuf,
    row_filter: rows::RowFilter,
    /// How many times the list was filtered, so tests can tell the work stays bounded.
    refilters: u64,
}

impl SettingsDialog {
    pub fn new(settings: &Settings) -> Self {
        let mut dialog = SettingsDialog {
            rows: Vec::new(),
            filter: String::new(),
            visible: Vec::new(),
            selected: 0,
            editor: None,
            message: None,
            notes: BTreeMap::new(),
            project_file: PathBuf::new(),
            global_file: PathBuf::new(),
            row_filter: rows::RowFilter::new(),
            refilters: 0,
        };
        dialog.sync(settings);
        dialog
    }

    /// Takes the values, sources and warnings from `settings`, keeping filter, selection and editor.
    pub fn sync(&mut self, settings: &Settings) {
        let selected = self.selected_row();
        self.rows = rows::build(settings);
        self.project_file = settings.paths().project_settings();
        self.global_file = settings.paths().global_settings();
        self.notes = notes_by_key(&settings.warnings());
        self.refilter();
        if let Some(kind) = selected {
            self.select_kind(kind);
        }
    }

    /// Shows the result of a save (call after `Settings::save_session`).
    pub fn report_save(&mut self, result: &Result<SaveReport, SaveError>) {
        self.message = Some(match result {
            Ok(report) => {
                let n = report.written.len();
                let mut text = format!("saved {n} setting{} to {}", plural(n), report.path.display());
                if !report.still_in_session.is_empty() {
                    let k = report.still_in_session.len();
                    text.push_str(&format!(
                        "; {k} still overridden by a project file, kept for this session"
                    ));
                }
                DialogMessage::Info(text)
            }
            Err(e) => DialogMessage::Error(e.to_string()),
        });
    }

    pub fn handle_key(&mut self, key: KeyEvent) -> DialogOutcome {
        if key.kind == KeyEventKind::Release {
            return DialogOutcome::None;
        }
        self.message = None;
        if self.editor.is_some() {
            return self.handle_editor_key(key);
        }
        let ctrl = key.modifiers.contains(KeyModifiers::CONTROL);
        let alt = key.modifiers.contains(KeyModifiers::ALT);
        match key.code {
            KeyCode::Char('c') if ctrl => DialogOutcome::Close,
            KeyCode::Char('s') if ctrl => DialogOutcome::SaveProject,
            KeyCode::Char('g') if ctrl => DialogOutcome::SaveGlobal,
            KeyCode::Up => self.move_by(-1),
            KeyCode::Down => self.move_by(1),
            KeyCode::Home => self.move_to(0),
            KeyCode::End => self.move_to(self.visible.len().saturating_sub(1)),
            KeyCode::Enter => self.activate(),
            KeyCode::Char(' ') if self.filter.is_empty() && !ctrl && !alt => self.activate(),
            KeyCode::Esc => DialogOutcome::Close,
            KeyCode::Char('u') if ctrl => {
                self.set_filter(String::new());
                DialogOutcome::None
            }
            KeyCode::Backspace => {
                let mut filter = self.filter.clone();
                filter.pop();
                self.set_filter(filter);
                DialogOutcome::None
            }
            KeyCode::Char(c) if !ctrl && !alt => {
                self.type_text(&c.to_string());
                DialogOutcome::None
            }
            _ => DialogOutcome::None,
        }
    }

    /// Takes pasted text whole: into the editor when it is open, else into the filter, filtering the
    /// list once. Control characters (line breaks, tabs, escapes) are dropped.
    pub fn paste(&mut self, text: &str) {
        self.message = None;
        if let Some(editor) = self.editor.as_mut() {
            for c in text.chars().filter(|c| !c.is_control()) {
                if editor.text.chars().count() >= MAX_FILTER_CHARS {
                    break;
                }
                editor.push(c);
            }
            return;
        }
        self.type_text(text);
    }

    /// Appends to the filter up to its limit, saying so when text is dropped.
    fn type_text(&mut self, text: &str) {
        let room = MAX_FILTER_CHARS.saturating_sub(self.filter.chars().count());
        let mut typed = text.chars().filter(|c| !c.is_control());
        let mut filter = self.filter.clone();
        filter.extend(typed.by_ref().take(room));
        if typed.next().is_some() {
            self.message = Some(DialogMessage::Info(format!(
                "the filter holds at most {MAX_FILTER_CHARS} characters; the rest was dropped"
            )));
        }
        self.set_filter(filter);
    }

    fn handle_editor_key(&mut self, key: KeyEvent) -> DialogOutcome {
        let Some(editor) = self.editor.as_mut() else {
            return DialogOutcome::None;
        };
        let ctrl = key.modifiers.contains(KeyModifiers::CONTROL);
        match key.code {
            KeyCode::Esc => self.editor = None,
            KeyCode::Char('c') if ctrl => self.editor = None,
            KeyCode::Char('u') if ctrl => editor.clear(),
            KeyCode::Backspace => editor.backspace(),
            KeyCode::Enter => {
                let key = editor.key;
                if let Some(value) = editor.submit() {
                    self.editor = None;
                    return self.set_value(key, value);
                }
            }
            KeyCode::Char(c)
                if !ctrl
                    && !key.modifiers.contains(KeyModifiers::ALT)
                    && editor.text.chars().count() < MAX_FILTER_CHARS =>
            {
                editor.push(c)
            }
            _ => {}
        }
        DialogOutcome::None
    }

    fn activate(&mut self) -> DialogOutcome {
        let Some(row) = self.visible.get(self.selected).and_then(|v| self.rows.get(v.row)) else {
            return DialogOutcome::None;
        };
        let (key, current) = match (&row.kind, &row.value) {
            (RowKind::Action(DialogAction::SaveProject), _) => return DialogOutcome::SaveProject,
            (RowKind::Action(DialogAction::SaveGlobal), _) => return DialogOutcome::SaveGlobal,
            (RowKind::Setting(key), Some((value, _))) => (*key, value.clone()),
            (RowKind::Setting(_), None) => return DialogOutcome::None,
        };
        match (schema::spec(key).kind, &current) {
            (ValueKind::Bool, SettingValue::Bool(b)) => self.set_value(key, SettingValue::Bool(!b)),
            (ValueKind::Choice(choices), SettingValue::Choice(c)) => {
                let next = choices
                    .iter()
                    .position(|x| x == c)
                    .map_or(0, |i| (i + 1) % choices.len());
                match choices.get(next) {
                    Some(next) => self.set_value(key, SettingValue::Choice(next)),
                    None => DialogOutcome::None,
                }
            }
            _ => {
                self.editor = Some(Editor::open(key, &current));
                DialogOutcome::None
            }
        }
    }

    /// Records a new value (and what it implies) as a session value and reports the changes.
    fn set_value(&mut self, key: KeyId, value: SettingValue) -> DialogOutcome {
        if self.value_of(key) == Some(&value) {
            return DialogOutcome::None;
        }
        let changes = exclusive::with_implied(key, value, |k| {
            self.value_of(k).cloned().unwrap_or(SettingValue::Bool(false))
        });
        for change in &changes {
            if let Some(row) = self
                .rows
                .iter_mut()
                .find(|r| r.kind == RowKind::Setting(change.key))
            {
                row.value = Some((change.value.clone(), Source::Session));
            }
        }
        DialogOutcome::Changed(changes)
    }

    fn value_of(&self, key: KeyId) -> Option<&SettingValue> {
        let row = self.rows.iter().find(|r| r.kind == RowKind::Setting(key))?;
        row.value.as_ref().map(|(v, _)| v)
    }

    fn move_by(&mut self, delta: isize) -> DialogOutcome {
        let n = self.visible.len();
        if n > 0 {
            self.selected = (self.selected as isize + delta).rem_euclid(n as isize) as usize;
        }
        DialogOutcome::None
    }

    fn move_to(&mut self, index: usize) -> DialogOutcome {
        self.selected = index.min(self.visible.len().saturating_sub(1));
        DialogOutcome::None
    }

    fn set_filter(&mut self, filter: String) {
        if filter == self.filter {
            return;
        }
        let before = self.selected_row();
        self.filter = filter;
        self.refilter();
        if self.filter.is_empty() {
            // Leaving the filter keeps the row the user was on.
            if let Some(kind) = before {
                self.select_kind(kind);
            }
        } else {
            // The best match is selected; on a tie the first in the list.
            let best = self
                .visible
                .iter()
                .enumerate()
                .max_by_key(|(i, v)| (v.score, std::cmp::Reverse(*i)));
            self.selected = best.map_or(0, |(i, _)| i);
        }
    }

    fn refilter(&mut self) {
        self.refilters += 1;
        self.visible = self.row_filter.apply(&self.rows, &self.filter);
        self.selected = self.selected.min(self.visible.len().saturating_sub(1));
    }

    fn select_kind(&mut self, kind: RowKind) {
        if let Some(i) = self.visible.iter().position(|v| self.rows[v.row].kind == kind) {
            self.selected = i;
        }
    }

    /// The selected row's kind, if any row is visible.
    pub fn selected_row(&self) -> Option<RowKind> {
        self.visible.get(self.selected).map(|v| self.rows[v.row].kind)
    }

    pub fn filter(&self) -> &str {
        &self.filter
    }

    /// How many times the list has been filtered since the dialog opened.
    pub fn refilter_count(&self) -> u64 {
        self.refilters
    }

    pub fn editor(&self) -> Option<&Editor> {
        self.editor.as_ref()
    }

    pub fn message(&self) -> Option<&DialogMessage> {
        self.message.as_ref()
    }

    /// The visible rows in order.
    pub fn visible_rows(&self) -> impl Iterator<Item = (&Row, &Visible)> {
        self.visible.iter().map(|v| (&self.rows[v.row], v))
    }

    /// The value and source the dialog shows for `key`.
    pub fn shown(&self, key: KeyId) -> Option<&(SettingValue, Source)> {
        self.rows
            .iter()
            .find(|r| r.kind == RowKind::Setting(key))
            .and_then(|r| r.value.as_ref())
    }
}

fn notes_by_key(warnings: &[ConfigWarning]) -> BTreeMap<KeyId, Vec<String>> {
    let mut notes: BTreeMap<KeyId, Vec<String>> = BTreeMap::new();
    for w in warnings {
        if let Some(spec) = w.key().and_then(schema::find_full) {
            notes.entry(spec.id).or_default().push(w.to_string());
        }
    }
    notes
}

fn plural(n: usize) -> &'static str {
    if n == 1 { "" } else { "s" }
}
