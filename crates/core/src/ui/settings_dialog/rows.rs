//! The dialog's rows (one per setting, then the save actions) and the fuzzy filter over them.

use nucleo_matcher::pattern::{AtomKind, CaseMatching, Normalization, Pattern};
use nucleo_matcher::{Config, Matcher, Utf32Str};

use crate::config::schema::{Group, KEYS, KeyId};
use crate::config::{SettingValue, Settings, Source};

/// What Enter on an action row asks for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DialogAction {
    SaveProject,
    SaveGlobal,
}

/// The part of the list a row sits in; a header is drawn above each section.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Section {
    Settings(Group),
    Actions,
}

impl Section {
    pub fn title(self) -> &'static str {
        match self {
            Section::Settings(g) => g.title(),
            Section::Actions => "Save",
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RowKind {
    Setting(KeyId),
    Action(DialogAction),
}

#[derive(Clone, Debug)]
pub struct Row {
    pub kind: RowKind,
    pub section: Section,
    pub label: &'static str,
    /// The key's name in its block (e.g. `thresholdSeconds`), matched when the label does not match.
    pub file_name: &'static str,
    /// Current value and source (settings rows only).
    pub value: Option<(SettingValue, Source)>,
}

pub fn build(settings: &Settings) -> Vec<Row> {
    let mut rows: Vec<Row> = KEYS
        .iter()
        .map(|spec| Row {
            kind: RowKind::Setting(spec.id),
            section: Section::Settings(spec.group),
            label: spec.label,
            file_name: spec.name,
            value: Some((settings.get(spec.id).clone(), settings.source(spec.id).clone())),
        })
        .collect();
    for (action, label, name) in [
        (
            DialogAction::SaveProject,
            "Save as project default",
            "save project",
        ),
        (DialogAction::SaveGlobal, "Save as global default", "save global"),
    ] {
        rows.push(Row {
            kind: RowKind::Action(action),
            section: Section::Actions,
            label,
            file_name: name,
            value: None,
        });
    }
    rows
}

/// A row that passes the filter, with the label's matched character positions.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Visible {
    pub row: usize,
    pub matched: Vec<u32>,
    pub score: u32,
}

/// Fuzzy filter with nucleo-matcher. Rows keep their order (and so their grouping).
pub struct RowFilter {
    matcher: Matcher,
    buf: Vec<char>,
}

impl RowFilter {
    pub fn new() -> Self {
        RowFilter {
            matcher: Matcher::new(Config::DEFAULT),
            buf: Vec::new(),
        }
    }

    /// The rows matching `query`: by label (with highlights), else by the key's file name.
    pub fn apply(&mut self, rows: &[Row], query: &str) -> Vec<Visible> {
        if query.trim().is_empty() {
            return (0..rows.len())
                .map(|row| Visible {
                    row,
                    matched: Vec::new(),
                    score: 0,
                })
                .collect();
        }
        let pattern = Pattern::new(query, CaseMatching::Ignore, Normalization::Smart, AtomKind::Fuzzy);
        let mut out = Vec::new();
        for (i, row) in rows.iter().enumerate() {
            let mut matched = Vec::new();
            let by_label = pattern.indices(
                Utf32Str::new(row.label, &mut self.buf),
                &mut self.matcher,
                &mut matched,
            );
            let found = match by_label {
                Some(score) => Some(score),
                None => {
                    matched.clear();
                    pattern.score(Utf32Str::new(row.file_name, &mut self.buf), &mut self.matcher)
                }
            };
            if let Some(score) = found {
                matched.sort_unstable();
                matched.dedup();
                out.push(Visible {
                    row: i,
                    matched,
                    score,
                });
            }
        }
        out
    }
}
