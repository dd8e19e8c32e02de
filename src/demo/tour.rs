//! The demo's script: a scenario file (docs/scenario-format.md) that may also carry chapters. A
//! chapter is one stall played on real pi: the settings pokeshell uses for it, the prompt typed into
//! pi, the scripted model's answers, and the supervisor records that show the recovery happened.
//!
//! The built-in tour is such a file (`assets/demo/tour.json`), so the format is proven by the default.

use std::path::Path;

use anyhow::Context;
use serde::Deserialize;
use serde_json::{Map, Value};

use super::model::{Scenario, Step};
use crate::cli::ChapterRange;
use pokeshell_core::config::Change;
use pokeshell_core::config::schema::{self, Block};
use pokeshell_core::supervisor::LedgerKind;
use pokeshell_core::supervisor::ledger::rule;

/// The tour `pokeshell demo` plays when no `--script` is given.
pub const BUILT_IN: &str = include_str!("../../assets/demo/tour.json");

/// How long a chapter may wait for its expected records when it does not say.
pub const DEFAULT_TIMEOUT_SECONDS: u64 = 45;

/// The rule IDs a chapter may expect: the supervisor's ledger rules.
pub const KNOWN_RULES: [&str; 33] = [
    rule::POKE_BREACH,
    rule::POKE_AUTO_ABORT,
    rule::POKE_ORPHAN,
    rule::POKE_WAKE_ARM,
    rule::POKE_WAKE,
    rule::POKE_MANUAL,
    rule::POKE_INPUT,
    rule::POKE_CONFIG,
    rule::SAR_RETRY,
    rule::SAR_RETRY_GIVE_UP,
    rule::SAR_LOOP,
    rule::WAK_SCHEDULE,
    rule::WAK_CANCEL,
    rule::WAK_FIRE,
    rule::WAK_RESTORE,
    rule::HO_AUTO,
    rule::HO_MANUAL,
    rule::ARB_ABORTED,
    rule::ARB_COMPACTION_HOLD,
    rule::RESTART_FROZEN,
    rule::RESTART_ABORT,
    rule::RESTART_DIED,
    rule::RESTART_LIMIT,
    rule::RESTART_RESUME,
    rule::STALL_STREAM,
    rule::STALL_RUN,
    rule::STALL_FROZEN,
    rule::LIMIT_WAIT,
    rule::LIMIT_NOTIFY,
    rule::LIMIT_RESTORE,
    rule::PROM_DETECT,
    rule::PROM_POKE,
    rule::PROM_LIMIT,
];

/// A scenario file as `pokeshell demo --script` reads it.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Tour {
    /// Shown at the top of the side pane's demo section.
    #[serde(default)]
    pub title: Option<String>,
    /// Merged into the demo agent dir's `settings.json` (pi's own keys and pokeshell's blocks).
    #[serde(default)]
    pub settings: Map<String, Value>,
    /// Queued before any chapter (the plain scenario format).
    #[serde(default)]
    pub steps: Vec<Step>,
    #[serde(default)]
    pub summaries: Vec<Step>,
    /// The answer whenever nothing is queued.
    #[serde(default)]
    pub default: Option<Step>,
    #[serde(default)]
    pub chapters: Vec<Chapter>,
}

/// One stall of the tour, as written in the file.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Chapter {
    pub title: String,
    /// What is about to happen, shown before the prompt is typed.
    pub about: String,
    /// What to look at while it plays.
    #[serde(default)]
    pub watch: Option<String>,
    /// Shown once every expected record has come.
    #[serde(default)]
    pub done: Option<String>,
    /// Typed into pi's editor and submitted, like a user would.
    pub prompt: String,
    /// pokeshell's blocks (`poke`, `stalledAgentRecovery`, `handoff`, `pokeshell`) for this chapter
    /// only; applied when it starts, undone when it ends.
    #[serde(default)]
    pub settings: Map<String, Value>,
    /// The scripted model's answers; whatever the previous chapter left queued is dropped first.
    #[serde(default)]
    pub steps: Vec<Step>,
    #[serde(default)]
    pub summaries: Vec<Step>,
    /// Ledger records that show the recovery happened, in any order.
    #[serde(default)]
    pub expect: Vec<Expect>,
    /// How long to wait for them after pi took the prompt.
    #[serde(default)]
    pub timeout_seconds: Option<u64>,
}

/// A ledger record a chapter waits for.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Expect {
    pub rule: String,
    #[serde(default)]
    pub kind: ExpectKind,
    /// Text the record's reason must contain, when the rule and kind alone do not tell (a handoff
    /// that finished from one that failed).
    #[serde(default)]
    pub text: Option<String>,
}

impl Expect {
    pub fn matches(&self, rule: &str, kind: LedgerKind, reason: &str) -> bool {
        self.rule == rule
            && self.kind.matches(kind)
            && self.text.as_deref().is_none_or(|t| reason.contains(t))
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ExpectKind {
    #[default]
    Action,
    Declined,
    Outcome,
}

impl ExpectKind {
    pub fn matches(self, kind: LedgerKind) -> bool {
        matches!(
            (self, kind),
            (ExpectKind::Action, LedgerKind::Action)
                | (ExpectKind::Declined, LedgerKind::Declined)
                | (ExpectKind::Outcome, LedgerKind::Outcome)
        )
    }
}

/// A chapter ready to play: settings checked, steps gathered, numbered within its tour.
#[derive(Debug, Clone, PartialEq)]
pub struct ChapterPlan {
    /// 1-based position in the whole tour (a `--chapters` range keeps the numbers).
    pub number: usize,
    pub title: String,
    pub about: String,
    pub watch: Option<String>,
    pub done: Option<String>,
    pub prompt: String,
    pub changes: Vec<Change>,
    pub scenario: Scenario,
    pub expect: Vec<Expect>,
    pub timeout_ms: u64,
}

impl Tour {
    /// The built-in tour. It is tested to parse, so a failure here is a build defect, reported as
    /// an error all the same.
    pub fn built_in() -> anyhow::Result<Tour> {
        Tour::from_json(BUILT_IN).context("the built-in tour is broken")
    }

    /// Parses and checks a tour (or a plain scenario).
    pub fn from_json(text: &str) -> anyhow::Result<Tour> {
        let tour: Tour = serde_json::from_str(text)?;
        tour.check()?;
        Ok(tour)
    }

    /// Reads a scenario file; errors name the file.
    pub fn from_file(path: &Path) -> anyhow::Result<Tour> {
        let text = std::fs::read_to_string(path)
            .with_context(|| format!("cannot read the scenario file {}", path.display()))?;
        Tour::from_json(&text).with_context(|| format!("{} is not a valid scenario", path.display()))
    }

    fn check(&self) -> anyhow::Result<()> {
        for block in Block::ALL {
            if let Some(value) = self.settings.get(block.json_name()) {
                block_changes(block, value).with_context(|| "in the top-level \"settings\"".to_string())?;
            }
        }
        for (i, chapter) in self.chapters.iter().enumerate() {
            chapter
                .plan(i + 1)
                .with_context(|| format!("in chapter {} ({:?})", i + 1, chapter.title))?;
        }
        Ok(())
    }

    /// What the model server loads before any chapter.
    pub fn opening(&self) -> Scenario {
        Scenario {
            steps: self.steps.clone(),
            summaries: self.summaries.clone(),
            default: self.default.clone(),
        }
    }

    /// The chapters to play, all of them or those in `range`.
    pub fn plans(&self, range: Option<ChapterRange>) -> anyhow::Result<Vec<ChapterPlan>> {
        let total = self.chapters.len();
        let (first, last) = match range {
            None => (1, total),
            Some(r) if r.last <= total => (r.first, r.last),
            Some(r) => anyhow::bail!(
                "there is no chapter {} in this tour: it has {total} chapter{}",
                r.last,
                if total == 1 { "" } else { "s" }
            ),
        };
        self.chapters
            .iter()
            .enumerate()
            .skip(first.saturating_sub(1))
            .take(last + 1 - first.max(1))
            .map(|(i, c)| c.plan(i + 1))
            .collect()
    }
}

impl Chapter {
    fn plan(&self, number: usize) -> anyhow::Result<ChapterPlan> {
        let prompt = self.prompt.trim();
        anyhow::ensure!(!prompt.is_empty(), "the prompt is empty");
        // Typed bytes reach pi as keys: a newline or an escape would act instead of being text.
        anyhow::ensure!(
            !prompt.chars().any(char::is_control),
            "the prompt must be one line of text, without control characters"
        );
        anyhow::ensure!(
            !prompt.starts_with('/') && !prompt.starts_with('!'),
            "the prompt must not start with / or ! (pi would take it as a command)"
        );
        let mut changes = Vec::new();
        for (name, value) in &self.settings {
            let block = Block::ALL
                .into_iter()
                .find(|b| b.json_name() == name)
                .with_context(|| {
                    format!(
                        "\"settings\" may hold only pokeshell's blocks (poke, stalledAgentRecovery, \
                         handoff, pokeshell), not {name:?}"
                    )
                })?;
            changes.extend(block_changes(block, value)?);
        }
        for e in &self.expect {
            anyhow::ensure!(
                KNOWN_RULES.contains(&e.rule.as_str()),
                "unknown rule {:?} in \"expect\"; known rules: {}",
                e.rule,
                KNOWN_RULES.join(", ")
            );
        }
        let timeout_seconds = self.timeout_seconds.unwrap_or(DEFAULT_TIMEOUT_SECONDS);
        anyhow::ensure!(
            (1..=3600).contains(&timeout_seconds),
            "\"timeout_seconds\" must be from 1 to 3600"
        );
        Ok(ChapterPlan {
            number,
            title: self.title.clone(),
            about: self.about.clone(),
            watch: self.watch.clone(),
            done: self.done.clone(),
            prompt: prompt.to_string(),
            changes,
            scenario: Scenario {
                steps: self.steps.clone(),
                summaries: self.summaries.clone(),
                default: None,
            },
            expect: self.expect.clone(),
            timeout_ms: timeout_seconds * 1000,
        })
    }
}

/// The settings of one block, checked against the schema like a settings file's.
fn block_changes(block: Block, value: &Value) -> anyhow::Result<Vec<Change>> {
    let Value::Object(keys) = value else {
        anyhow::bail!("\"{}\" must be a JSON object", block.json_name());
    };
    keys.iter()
        .map(|(name, value)| {
            let spec = schema::find(block, name)
                .with_context(|| format!("{}.{name} is not a pokeshell setting", block.json_name()))?;
            let value = spec
                .parse_json(value)
                .map_err(|e| anyhow::anyhow!("{}: {e}", spec.full_name()))?;
            Ok(Change { key: spec.id, value })
        })
        .collect()
}

#[cfg(test)]
mod tests;
