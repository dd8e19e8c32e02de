//! The invariants, checked as things happen: at most one message of pokeshell's own per settle,
//! none after the user's Esc until the user acts, none while a compaction pokeshell was told of
//! runs, every resume's outcome recorded, a saved list that matches the living sessions, no
//! deadline left in the past and no timer left behind, every prompt the user typed reaching the
//! model exactly once.

use std::collections::{BTreeMap, BTreeSet};

use pokeshell_core::bridge::{BridgeEvent, PiEvent, SendMessage};
use pokeshell_core::supervisor::{LedgerKind, LedgerRecord, texts};

use super::world::World;

#[derive(Default)]
pub struct Check {
    pub failure: Option<String>,
    /// Conversations (pi's session files) whose run the user's Esc stopped: pi's relaunches and the
    /// server's keep the stop, as they keep the conversation.
    pub stopped: BTreeSet<String>,
    /// Prompts typed: how many times each reached the model, and whether pi died before reading it.
    prompts: BTreeMap<u64, (usize, bool)>,
}

impl Check {
    pub fn fail(&mut self, why: String) {
        self.failure.get_or_insert(why);
    }

    pub fn typed(&mut self, prompt: u64) {
        self.prompts.insert(prompt, (0, false));
    }

    pub fn delivered(&mut self, prompt: u64, copies: usize) {
        let seen = self.prompts.entry(prompt).or_default();
        seen.0 += 1;
        if seen.0 > 1 || copies > 1 {
            let why = format!("prompt {prompt} reached the model twice");
            self.fail(why);
        }
    }

    pub fn lost(&mut self, prompt: u64) {
        if let Some(seen) = self.prompts.get_mut(&prompt) {
            seen.1 = true;
        }
    }

    /// How many prompts were typed, reached the model, and died unread with their pi.
    pub fn prompt_counts(&self) -> (usize, usize, usize) {
        let delivered = self.prompts.values().filter(|p| p.0 == 1).count();
        let lost = self.prompts.values().filter(|p| p.0 == 0 && p.1).count();
        (self.prompts.len(), delivered, lost)
    }

    fn unanswered_prompts(&self) -> Vec<u64> {
        self.prompts
            .iter()
            .filter(|(_, (n, lost))| *n == 0 && !lost)
            .map(|(id, _)| *id)
            .collect()
    }
}

/// One session's thread's view of what it sent and heard.
pub struct SessionCheck {
    own_in_window: usize,
    pub stopped: bool,
    knows_compaction: bool,
    /// Resumes sent whose outcome record has not come yet (by rule).
    pub awaiting: Vec<&'static str>,
    /// The session said it will not restart pi (RST-B1: the hourly bound, no session file).
    pub restart_refused: bool,
}

impl SessionCheck {
    pub fn new(stopped: bool) -> Self {
        Self {
            own_in_window: 0,
            stopped,
            knows_compaction: false,
            awaiting: Vec::new(),
            restart_refused: false,
        }
    }

    /// What the session hears from the bridge.
    pub fn heard(&mut self, ev: &BridgeEvent) {
        let BridgeEvent::Event { event, .. } = ev else {
            return;
        };
        match event {
            PiEvent::AgentSettled(_) | PiEvent::TurnEnd(_) | PiEvent::SessionStart(_) => {
                self.own_in_window = 0
            }
            PiEvent::SessionBeforeCompact(_) => self.knows_compaction = true,
            PiEvent::SessionCompact(_) | PiEvent::SessionCompactFailed(_) => self.knows_compaction = false,
            _ => {}
        }
    }

    pub fn child_started(&mut self) {
        self.knows_compaction = false;
    }

    /// The user typed a prompt or poked by hand.
    pub fn user_acted(&mut self) {
        self.stopped = false;
    }

    /// The session sends a message to pi.
    pub fn sent(&mut self, m: &SendMessage) -> Result<(), String> {
        if m.content == texts::manual_poke() {
            return Ok(());
        }
        let kind = &m.custom_type;
        if self.stopped {
            return Err(format!(
                "a message of pokeshell's own ({kind}) after the user's Esc"
            ));
        }
        if self.knows_compaction {
            return Err(format!("a message ({kind}) while a compaction runs"));
        }
        self.own_in_window += 1;
        if self.own_in_window > 1 {
            return Err(format!(
                "two messages of pokeshell's own within one settle (the second: {kind})"
            ));
        }
        Ok(())
    }

    /// A ledger record: a resume's action waits for its outcome record.
    pub fn ledger(&mut self, r: &LedgerRecord) -> Result<(), String> {
        if r.rule == "RST-B1" {
            self.restart_refused = true;
        }
        let expects =
            r.kind == LedgerKind::Action && r.sent.is_some() && !matches!(r.rule, "WAK-T3" | "POKE-P1");
        let resolves = r.kind == LedgerKind::Outcome
            || (r.kind == LedgerKind::Declined && r.reason.starts_with("pi refused the message"));
        if resolves && let Some(i) = self.awaiting.iter().position(|rule| *rule == r.rule) {
            self.awaiting.remove(i);
        }
        if expects {
            if let Some(before) = self.awaiting.first() {
                return Err(format!(
                    "the outcome of a {before} resume was never recorded: a {} resume went out first",
                    r.rule
                ));
            }
            self.awaiting.push(r.rule);
        }
        Ok(())
    }
}

impl World {
    /// After every event: the saved list, once every save asked for is on disk.
    pub fn check_quiet_point(&mut self) {
        let Some(server) = &self.server else { return };
        if server.save_asked != server.save_done || !server.to_restore.is_empty() || server.stopping {
            return;
        }
        let Some(list) = &self.disk else { return };
        let saved: BTreeSet<u32> = list.iter().map(|s| s.spec.number).collect();
        let living: BTreeSet<u32> = server
            .sims
            .iter()
            .filter(|(_, s)| !s.killed)
            .map(|(n, _)| *n)
            .collect();
        if saved != living {
            let why = format!("the saved list holds sessions {saved:?}, the living ones are {living:?}");
            return self.check.fail(why);
        }
        for entry in list {
            let Some(sim) = server.sims.get(&entry.spec.number) else {
                continue;
            };
            if sim.heard && sim.pi.alive && entry.session_file.as_deref() != Some(sim.pi.file.as_str()) {
                let why = format!(
                    "session {}: the saved list names pi's file {:?}, pi runs on {}",
                    entry.spec.number, entry.session_file, sim.pi.file
                );
                return self.check.fail(why);
            }
            if sim.pi.connected() && sim.pi.run_since().is_some() && !entry.mid_run {
                let why = format!(
                    "session {}: pi is in a run but the saved list says it is not: a crash now would not resume it",
                    entry.spec.number
                );
                return self.check.fail(why);
            }
        }
    }

    /// After the quiet end of a history: nothing owed is left.
    pub fn check_end(&mut self) {
        if self.check.failure.is_some() {
            return;
        }
        let missing = self.check.unanswered_prompts();
        if !missing.is_empty() {
            return self
                .check
                .fail(format!("prompts {missing:?} never reached the model"));
        }
        let Some(server) = &self.server else { return };
        if server.sims.is_empty() && self.clients.is_empty() {
            return self
                .check
                .fail("the server has no session and no client left, yet it does not end".into());
        }
        let mut why = None;
        for (n, sim) in &server.sims {
            if !sim.pi.alive || sim.pi.frozen {
                continue;
            }
            if let Some(rule) = sim.check.awaiting.first() {
                why = Some(format!(
                    "session {n}: the outcome of a {rule} resume was never recorded"
                ));
                break;
            }
            let supervisor = sim.session.supervisor();
            let deadline = supervisor.next_deadline();
            // A wakeup the agent asked for, or a planned resume, is a timer that is owed.
            let owed = supervisor.state_size().wakeups > 0 || supervisor.limit_wait_pending();
            if sim.pi.editable() && deadline.is_some() && !owed {
                let view = supervisor.state_size();
                why = Some(format!(
                    "session {n}: a timer left behind ({} ms from now) on an idle pi: {view:?}",
                    deadline.unwrap_or(0) as i64 - self.now as i64
                ));
                break;
            }
        }
        if let Some(why) = why {
            self.check.fail(why);
        }
    }
}

#[cfg(test)]
mod tests {
    use pokeshell_core::bridge::SendMessage;

    use super::{Check, SessionCheck};

    fn message(custom_type: &str, content: &str) -> SendMessage {
        SendMessage {
            custom_type: custom_type.into(),
            content: content.into(),
            display: false,
            trigger_turn: true,
            deliver_as: None,
            details: None,
        }
    }

    #[test]
    fn the_checker_catches_a_prompt_given_twice_and_one_never_given() {
        let mut c = Check::default();
        c.typed(1);
        c.delivered(1, 1);
        assert!(c.failure.is_none());
        c.delivered(1, 2);
        assert!(
            c.failure.as_deref().is_some_and(|f| f.contains("twice")),
            "{:?}",
            c.failure
        );
        let mut c = Check::default();
        c.typed(2);
        assert_eq!(c.unanswered_prompts(), vec![2]);
        c.lost(2);
        assert!(c.unanswered_prompts().is_empty(), "pi died before reading it");
    }

    #[test]
    fn the_checker_catches_two_messages_in_a_settle_one_after_esc_and_a_lost_outcome() {
        let mut s = SessionCheck::new(false);
        assert!(s.sent(&message("poke", "resume")).is_ok());
        assert!(s.sent(&message("wakeup", "wake")).is_err(), "two in one settle");
        assert!(
            s.sent(&message(
                "poke",
                &pokeshell_core::supervisor::texts::manual_poke()
            ))
            .is_ok(),
            "the user's own poke is not pokeshell's"
        );
        let mut stopped = SessionCheck::new(true);
        assert!(stopped.sent(&message("poke", "resume")).is_err(), "after Esc");
        stopped.user_acted();
        assert!(stopped.sent(&message("poke", "resume")).is_ok());
        let record =
            |kind, rule: &'static str, sent: Option<&str>| pokeshell_core::supervisor::LedgerRecord {
                wall_ms: 0,
                session_id: None,
                rule,
                kind,
                reason: "r".into(),
                sent: sent.map(String::from),
            };
        use pokeshell_core::supervisor::LedgerKind;
        let mut o = SessionCheck::new(false);
        assert!(
            o.ledger(&record(LedgerKind::Action, "STALL-S1", Some("x")))
                .is_ok()
        );
        assert!(
            o.ledger(&record(LedgerKind::Action, "LIMIT-W1", Some("y")))
                .is_err(),
            "the first was never judged"
        );
        let mut o = SessionCheck::new(false);
        assert!(
            o.ledger(&record(LedgerKind::Action, "STALL-S1", Some("x")))
                .is_ok()
        );
        assert!(o.ledger(&record(LedgerKind::Outcome, "STALL-S1", None)).is_ok());
        assert!(
            o.ledger(&record(LedgerKind::Action, "LIMIT-W1", Some("y")))
                .is_ok()
        );
    }
}
