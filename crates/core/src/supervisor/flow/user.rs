//! The user's own input and manual poke [POKE-E11, POKE-P1]: the user taking over ends whatever
//! pokeshell was doing on its own.

use crate::supervisor::Supervisor;
use crate::supervisor::action::{Action, DeliverAs, NotifyLevel};
use crate::supervisor::delivery::Sent;
use crate::supervisor::event::InputSource;
use crate::supervisor::ledger::{LedgerKind, rule};
use crate::supervisor::texts;
use crate::supervisor::time::Now;

impl Supervisor {
    /// POKE-E11 as fixed upstream (N1, fix B1): only the user's own input cancels and resets.
    pub(in crate::supervisor) fn on_input(&mut self, source: InputSource, now: Now, out: &mut Vec<Action>) {
        if !source.is_user() {
            return;
        }
        // The person's word: the guard rails count a new unattended stretch (GUARD-C1, GUARD-L1..L4).
        self.guard.person_spoke();
        if self.post_compact.drop_wake() {
            let reason = "you typed: the pending post-compaction resume is cancelled".to_string();
            self.record(out, now, rule::POKE_INPUT, LedgerKind::Declined, reason, None);
        }
        self.post_compact.end_episode();
        self.stall.end_episode();
        self.cancel_promise_ask("you typed", now, out);
        self.promise.end();
        self.provider.end_streak();
        self.cancel_limit_wait("you typed", now, out);
        self.arbiter.lift_stop();
        self.lift_saved_stop(out);
        self.arbiter.hide_resume();
        // Fix B8: the dead run's stop reason is no stall evidence once the user took over.
        self.run.forget_stop();
        self.cancel_deferred("you typed", now, out);
        self.abandon_outcome("you typed before the agent settled", now, out);
    }

    /// POKE-P1: works whatever the toggles say; cancels the wake and resets the episode counter.
    pub(in crate::supervisor) fn on_manual_poke(&mut self, now: Now, out: &mut Vec<Action>) {
        if let Some(why) = self.guard_holds() {
            let text = format!(
                "No poke sent: {why}. {} allows more, {} leaves it stopped.",
                crate::supervisor::guard::texts::ALLOW_KEY,
                crate::supervisor::guard::texts::LEAVE_KEY
            );
            self.refuse(out, now, rule::POKE_MANUAL, text);
            return;
        }
        self.post_compact.drop_wake();
        self.post_compact.end_episode();
        self.arbiter.lift_stop();
        self.lift_saved_stop(out);
        self.stall.end_episode();
        // A poke by hand probes the provider for the sessions held behind this one (GUARD-K1): the
        // session stays in its circuit.
        let circuit = self.guard.circuit.take();
        self.cancel_limit_wait("you poked by hand: your poke resumes the agent now", now, out);
        self.guard.circuit = circuit;
        self.cancel_deferred("you poked by hand", now, out);
        if !self.connected {
            let text = texts::notify_not_connected("No poke sent");
            self.refuse(out, now, rule::POKE_MANUAL, text);
            return;
        }
        if self.compaction.active() {
            self.held_manual_poke = Some(now.mono_ms);
            let reason = "manual poke held until the running compaction ends".to_string();
            self.record(out, now, rule::POKE_MANUAL, LedgerKind::Declined, reason, None);
            out.push(Action::Notify {
                level: NotifyLevel::Info,
                text: texts::notify_manual_poke_held(),
                desktop: false,
            });
            return;
        }
        self.send_manual_poke(now, out);
    }

    fn send_manual_poke(&mut self, now: Now, out: &mut Vec<Action>) {
        // ARB-ONE: one poke per request; a poke still held from before goes out as this one.
        self.held_manual_poke = None;
        let text = texts::manual_poke();
        self.send(
            out,
            texts::CT_POKE,
            text.clone(),
            false,
            DeliverAs::Steer,
            Sent::ManualPoke,
        );
        let reason = "you poked the agent".to_string();
        self.record(
            out,
            now,
            rule::POKE_MANUAL,
            LedgerKind::Action,
            reason,
            Some(text),
        );
        out.push(Action::Notify {
            level: NotifyLevel::Info,
            text: texts::notify_manual_poke(),
            desktop: false,
        });
    }

    /// Tick: a manual poke held by a compaction goes out once the compaction is over.
    pub(in crate::supervisor) fn held_manual_poke_tick(&mut self, now: Now, out: &mut Vec<Action>) {
        if self.held_manual_poke_deadline().is_none() {
            return;
        }
        self.held_manual_poke = None;
        if self.connected {
            self.send_manual_poke(now, out);
        } else {
            let text = texts::notify_not_connected("The held poke was dropped");
            self.refuse(out, now, rule::POKE_MANUAL, text);
        }
    }

    pub(in crate::supervisor) fn held_manual_poke_deadline(&self) -> Option<u64> {
        if self.compaction.active() {
            None
        } else {
            self.held_manual_poke
        }
    }

    pub(in crate::supervisor) fn drop_held_manual_poke(
        &mut self,
        why: &str,
        now: Now,
        out: &mut Vec<Action>,
    ) {
        if self.held_manual_poke.take().is_some() {
            let reason = format!("the held manual poke was dropped: {why}");
            self.record(out, now, rule::POKE_MANUAL, LedgerKind::Declined, reason, None);
        }
    }
}
