//! The demo's director: plays a tour's chapters on real pi, one after the other.
//!
//! Pure, like the supervisor: cues (what pi and the supervisor reported) and the time go in, acts come
//! out as data, and the app performs them. A chapter goes through these stages:
//!
//! 1. **Intro**: its settings are applied and its scripted answers queued; the side pane tells what is
//!    about to happen. Once pi is idle and the reader had `lead_ms`, the prompt is typed into pi's
//!    editor, as a user would.
//! 2. **Typed**: `type_ms` later Enter is pressed, again every `enter_retry_ms` until the run starts
//!    (pi ignores Enter while it is still starting up), at most `enter_tries` times.
//! 3. **Playing**: the run is on; the chapter waits for the supervisor's records it expects.
//! 4. **Recovered** (or **Missed**, when they did not come in time): the chapter ends once pi has been
//!    idle, with no compaction running, for `quiet_ms` (so a resume that waits out a cooldown is not
//!    cut short); its settings are undone and the next chapter starts.

use super::model::Scenario;
use super::tour::ChapterPlan;
use pokeshell_core::config::Change;
use pokeshell_core::supervisor::LedgerKind;

/// The director's timing, in milliseconds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Pace {
    /// Reading time between a chapter's introduction and its prompt.
    pub lead_ms: u64,
    /// How long the typed prompt stays in pi's editor before Enter.
    pub type_ms: u64,
    /// Enter again after this long when the run has not started.
    pub enter_retry_ms: u64,
    /// How many times Enter is pressed before the chapter counts as missed.
    pub enter_tries: u32,
    /// Quiet time after a chapter's last activity before the next one starts.
    pub quiet_ms: u64,
}

impl Default for Pace {
    fn default() -> Self {
        Pace {
            lead_ms: 3000,
            type_ms: 800,
            enter_retry_ms: 1500,
            enter_tries: 6,
            quiet_ms: 2500,
        }
    }
}

/// What the director hears about.
#[derive(Debug, Clone, PartialEq)]
pub enum Cue {
    /// pi's session started: its editor takes typing.
    PiReady,
    AgentStart,
    AgentSettled,
    /// A compaction began (`true`) or ended, failed or not (`false`).
    Compaction {
        running: bool,
    },
    /// A supervisor ledger record.
    Record {
        rule: String,
        kind: LedgerKind,
        /// The record's reason, in plain words.
        reason: String,
    },
}

/// What the director asks the app to do.
#[derive(Debug, Clone, PartialEq)]
pub enum Act {
    /// Change these settings for the chapter, through the settings dialog's path.
    ApplySettings(Vec<Change>),
    /// Put back the values the last `ApplySettings` replaced.
    RestoreSettings,
    /// Drop what the scripted model still has queued, then queue this.
    Queue(Box<Scenario>),
    /// Type this text into pi.
    Type(String),
    /// Press Enter in pi.
    Enter,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stage {
    /// pi is starting.
    Waiting,
    Intro,
    Typed,
    Submitted,
    Playing,
    Recovered,
    Missed,
    /// No chapter left: the user types freely.
    Finished,
}

/// What the side pane's demo section says.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Narration {
    /// `chapter 2/7`, or the tour's title before and after the chapters.
    pub heading: String,
    /// The chapter's title, if one is playing.
    pub title: Option<String>,
    pub stage: Stage,
    pub text: String,
}

#[derive(Debug)]
pub struct Director {
    title: String,
    chapters: Vec<ChapterPlan>,
    /// Chapters in the whole tour (a `--chapters` range plays fewer).
    total: usize,
    pace: Pace,
    current: usize,
    stage: Stage,
    /// When the current stage's next step is due (mono ms).
    due: Option<u64>,
    /// When a playing chapter stops waiting for its records.
    deadline: Option<u64>,
    enters: u32,
    seen: Vec<bool>,
    busy: bool,
    compacting: bool,
    /// Chapter numbers that did not recover.
    missed: Vec<usize>,
    /// Why the current chapter was missed.
    miss_reason: Option<String>,
}

impl Director {
    /// `total` is the tour's chapter count, for the `n/total` heading.
    pub fn new(title: impl Into<String>, chapters: Vec<ChapterPlan>, total: usize, pace: Pace) -> Self {
        Director {
            title: title.into(),
            total: total.max(chapters.len()),
            chapters,
            pace,
            current: 0,
            stage: Stage::Waiting,
            due: None,
            deadline: None,
            enters: 0,
            seen: Vec::new(),
            busy: false,
            compacting: false,
            missed: Vec::new(),
            miss_reason: None,
        }
    }

    pub fn stage(&self) -> Stage {
        self.stage
    }

    /// The chapter being played, if any.
    pub fn chapter(&self) -> Option<&ChapterPlan> {
        match self.stage {
            Stage::Waiting | Stage::Finished => None,
            _ => self.chapters.get(self.current),
        }
    }

    /// Chapter numbers that ended without their expected records.
    pub fn missed(&self) -> &[usize] {
        &self.missed
    }

    pub fn handle(&mut self, cue: Cue, now_ms: u64) -> Vec<Act> {
        let mut acts = Vec::new();
        match cue {
            Cue::PiReady => {
                self.busy = false;
                if self.stage == Stage::Waiting {
                    self.start_chapter(0, now_ms, &mut acts);
                }
            }
            Cue::AgentStart => {
                self.busy = true;
                if self.stage == Stage::Submitted {
                    let timeout = self.chapters.get(self.current).map_or(0, |c| c.timeout_ms);
                    self.stage = Stage::Playing;
                    self.due = None;
                    self.deadline = Some(now_ms + timeout);
                }
                self.extend_quiet(now_ms);
            }
            Cue::AgentSettled => {
                self.busy = false;
                let expects_nothing = self
                    .chapters
                    .get(self.current)
                    .is_some_and(|c| c.expect.is_empty());
                if self.stage == Stage::Playing && expects_nothing {
                    self.recovered(now_ms);
                }
                self.extend_quiet(now_ms);
            }
            Cue::Compaction { running } => {
                self.compacting = running;
                self.extend_quiet(now_ms);
            }
            Cue::Record { rule, kind, reason } => {
                if matches!(self.stage, Stage::Submitted | Stage::Playing) {
                    self.note_record(&rule, kind, &reason, now_ms);
                }
                self.extend_quiet(now_ms);
            }
        }
        self.advance(now_ms, &mut acts);
        acts
    }

    /// Time passed: performs what has come due.
    pub fn tick(&mut self, now_ms: u64) -> Vec<Act> {
        let mut acts = Vec::new();
        self.advance(now_ms, &mut acts);
        acts
    }

    /// When `tick` must run next, if ever (it may already have passed). A stage that waits for pi to
    /// be idle has none while pi is busy: the cue that ends the wait moves it on.
    pub fn next_deadline(&self) -> Option<u64> {
        let waits_for_idle = matches!(self.stage, Stage::Intro | Stage::Recovered | Stage::Missed);
        let due = if waits_for_idle && !self.idle() {
            None
        } else {
            self.due
        };
        [due, self.deadline].into_iter().flatten().min()
    }

    fn idle(&self) -> bool {
        !self.busy && !self.compacting
    }

    fn start_chapter(&mut self, index: usize, now_ms: u64, acts: &mut Vec<Act>) {
        self.current = index;
        self.deadline = None;
        self.enters = 0;
        self.miss_reason = None;
        let Some(chapter) = self.chapters.get(index) else {
            self.stage = Stage::Finished;
            self.due = None;
            return;
        };
        if !chapter.changes.is_empty() {
            acts.push(Act::ApplySettings(chapter.changes.clone()));
        }
        acts.push(Act::Queue(Box::new(chapter.scenario.clone())));
        self.seen = vec![false; chapter.expect.len()];
        self.stage = Stage::Intro;
        self.due = Some(now_ms + self.pace.lead_ms);
    }

    fn note_record(&mut self, rule: &str, kind: LedgerKind, reason: &str, now_ms: u64) {
        let Some(chapter) = self.chapters.get(self.current) else {
            return;
        };
        for (seen, expect) in self.seen.iter_mut().zip(&chapter.expect) {
            if expect.matches(rule, kind, reason) {
                *seen = true;
            }
        }
        if !self.seen.is_empty() && self.seen.iter().all(|s| *s) {
            self.recovered(now_ms);
        }
    }

    fn recovered(&mut self, now_ms: u64) {
        self.stage = Stage::Recovered;
        self.deadline = None;
        self.due = Some(now_ms + self.pace.quiet_ms);
    }

    fn missed_now(&mut self, why: String, now_ms: u64) {
        self.stage = Stage::Missed;
        self.deadline = None;
        self.due = Some(now_ms + self.pace.quiet_ms);
        self.miss_reason = Some(why);
        if let Some(c) = self.chapters.get(self.current) {
            self.missed.push(c.number);
        }
    }

    /// Activity after the recovery restarts the quiet period.
    fn extend_quiet(&mut self, now_ms: u64) {
        if matches!(self.stage, Stage::Recovered | Stage::Missed) {
            self.due = Some(now_ms + self.pace.quiet_ms);
        }
    }

    fn advance(&mut self, now_ms: u64, acts: &mut Vec<Act>) {
        if self.stage == Stage::Playing && self.deadline.is_some_and(|d| now_ms >= d) {
            let why = self.chapters.get(self.current).map_or_else(String::new, |c| {
                let rules: Vec<&str> = c
                    .expect
                    .iter()
                    .zip(&self.seen)
                    .filter(|(_, seen)| !**seen)
                    .map(|(e, _)| e.rule.as_str())
                    .collect();
                format!(
                    "pokeshell recorded no {} within {} s",
                    rules.join(" or "),
                    c.timeout_ms / 1000
                )
            });
            self.missed_now(why, now_ms);
        }
        let due = self.due.is_some_and(|d| now_ms >= d);
        match self.stage {
            Stage::Intro if due && self.idle() => {
                if let Some(c) = self.chapters.get(self.current) {
                    acts.push(Act::Type(c.prompt.clone()));
                }
                self.stage = Stage::Typed;
                self.due = Some(now_ms + self.pace.type_ms);
            }
            Stage::Typed | Stage::Submitted if due => {
                if self.enters >= self.pace.enter_tries {
                    self.missed_now("pi did not take the prompt".to_string(), now_ms);
                    return;
                }
                self.enters += 1;
                acts.push(Act::Enter);
                self.stage = Stage::Submitted;
                self.due = Some(now_ms + self.pace.enter_retry_ms);
            }
            Stage::Recovered | Stage::Missed if due && self.idle() => {
                let had_settings = self
                    .chapters
                    .get(self.current)
                    .is_some_and(|c| !c.changes.is_empty());
                if had_settings {
                    acts.push(Act::RestoreSettings);
                }
                self.start_chapter(self.current + 1, now_ms, acts);
            }
            _ => {}
        }
    }

    pub fn narration(&self) -> Narration {
        let chapter = self.chapter();
        let heading = match chapter {
            Some(c) => format!("chapter {}/{}", c.number, self.total),
            None => self.title.clone(),
        };
        let text = match (self.stage, chapter) {
            (Stage::Waiting, _) => "pi is starting…".to_string(),
            (Stage::Intro | Stage::Typed | Stage::Submitted, Some(c)) => c.about.clone(),
            (Stage::Playing, Some(c)) => match &c.watch {
                Some(w) => format!("👀 {w}"),
                None => c.about.clone(),
            },
            (Stage::Recovered, Some(c)) => format!(
                "✔ {}",
                c.done
                    .as_deref()
                    .unwrap_or("pokeshell did what this chapter is about.")
            ),
            (Stage::Missed, Some(_)) => format!(
                "✘ {}. This stall was not handled as it should be: please report it (docs/demo.md says how).",
                self.miss_reason
                    .as_deref()
                    .unwrap_or("the chapter did not go as scripted")
            ),
            (Stage::Finished, _) => self.finished_text(),
            (_, None) => String::new(),
        };
        Narration {
            heading,
            title: chapter.map(|c| c.title.clone()),
            stage: self.stage,
            text,
        }
    }

    fn finished_text(&self) -> String {
        let played = self.chapters.len();
        if played == 0 {
            return "Type a prompt: the scripted model answers with the script's next step, or plainly \
                    once the script is used up."
                .to_string();
        }
        let recovered = played - self.missed.len();
        let missed = if self.missed.is_empty() {
            String::new()
        } else {
            let list: Vec<String> = self.missed.iter().map(|n| n.to_string()).collect();
            format!(" (not handled: chapter {})", list.join(", "))
        };
        format!(
            "Tour over: {recovered} of {played} stalls handled{missed}. Type your own prompts: the scripted \
             model answers plainly."
        )
    }
}

#[cfg(test)]
mod tests;
