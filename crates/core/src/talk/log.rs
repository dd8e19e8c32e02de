//! The conversation's last items, numbered, bounded in count and in bytes, and what happened after
//! a given one.

use std::collections::VecDeque;

use serde::{Deserialize, Serialize};

use super::{Entry, Said};

/// At most this many items are kept for a session (the oldest go first).
pub const MAX_ENTRIES: usize = 200;
/// At most this many bytes of text (the oldest items go first).
pub const MAX_BYTES: usize = 256 << 10;
/// The interventions a digest quotes (the last ones).
const QUOTED: usize = 3;

/// One session's log. `epoch` names this log: after a server restart the numbers start again, and
/// a page that remembers an item of another log asks for everything.
#[derive(Debug, Clone, PartialEq)]
pub struct Talk {
    epoch: u64,
    next: u64,
    entries: VecDeque<Entry>,
    bytes: usize,
}

/// What happened after an item, in a few numbers and words: for a page that was away.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Digest {
    pub epoch: u64,
    /// The newest item's number (0: none yet).
    pub seq: u64,
    pub prompts: u32,
    pub replies: u32,
    pub tool_calls: u32,
    pub tool_errors: u32,
    pub runs: u32,
    pub interventions: u32,
    /// The last few interventions' words, oldest first.
    pub quoted: Vec<String>,
    /// What the runs that ended meanwhile cost; `None` when none was priced.
    pub cost_usd: Option<f64>,
    /// Older items were dropped from the log: there was more than it says.
    pub partial: bool,
}

impl Talk {
    /// An empty log named `epoch` (the wall clock when it began, in ms: unique enough per session).
    pub fn new(epoch: u64) -> Talk {
        Talk {
            epoch,
            next: 1,
            entries: VecDeque::new(),
            bytes: 0,
        }
    }

    pub fn epoch(&self) -> u64 {
        self.epoch
    }

    /// The newest item's number (0 when none).
    pub fn last_seq(&self) -> u64 {
        self.next - 1
    }

    /// Adds an item said at `at_ms`; the entry as kept.
    pub fn push(&mut self, said: Said, at_ms: u64) -> Entry {
        let entry = Entry {
            seq: self.next,
            at_ms,
            said,
        };
        self.next += 1;
        self.bytes += entry.said.weight();
        self.entries.push_back(entry.clone());
        while self.entries.len() > MAX_ENTRIES || (self.bytes > MAX_BYTES && self.entries.len() > 1) {
            if let Some(old) = self.entries.pop_front() {
                self.bytes -= old.said.weight();
            }
        }
        entry
    }

    /// The items after `seq` of log `epoch`; all that is kept when `epoch` names another log.
    pub fn since(&self, epoch: u64, seq: u64) -> Vec<Entry> {
        let after = if epoch == self.epoch { seq } else { 0 };
        self.entries.iter().filter(|e| e.seq > after).cloned().collect()
    }

    /// What happened after item `seq` of log `epoch` (everything kept, for another log).
    pub fn digest(&self, epoch: u64, seq: u64) -> Digest {
        let after = if epoch == self.epoch { seq } else { 0 };
        let oldest = self.entries.front().map_or(self.next, |e| e.seq);
        let mut d = Digest {
            epoch: self.epoch,
            seq: self.last_seq(),
            partial: after + 1 < oldest,
            ..Digest::default()
        };
        let mut quoted = VecDeque::new();
        for e in self.entries.iter().filter(|e| e.seq > after) {
            match &e.said {
                Said::Prompt { .. } => d.prompts += 1,
                Said::Reply { tools, .. } => {
                    d.replies += 1;
                    d.tool_calls += u32::try_from(tools.len()).unwrap_or(u32::MAX);
                }
                Said::Result { ok, .. } => d.tool_errors += u32::from(!ok),
                Said::Intervention { text, .. } => {
                    d.interventions += 1;
                    if quoted.len() == QUOTED {
                        quoted.pop_front();
                    }
                    quoted.push_back(text.clone());
                }
                Said::RunEnd { cost_usd, .. } => {
                    d.runs += 1;
                    if let Some(c) = cost_usd {
                        *d.cost_usd.get_or_insert(0.0) += c;
                    }
                }
            }
        }
        d.quoted = quoted.into();
        d
    }
}
