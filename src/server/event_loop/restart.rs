//! The loop's side of a relaunch of pi (`Effect::Respawn`): the old child is ended (SIGTERM to its
//! group, SIGKILL after a grace) and, once it has exited, the new one starts in the same pane with a
//! fresh mirror; the bridge server and its token stay, so the new pi's bridge connects to them. Also
//! the loop's own absences: a wake far later than planned means pokeshell did not run meanwhile.

use std::sync::atomic::Ordering;
use std::time::Duration;

use anyhow::Result;
use tokio::sync::mpsc::UnboundedReceiver;
use tokio::time::Instant;

use super::{Bridge, Child, Layer, Loop, Screen, WorldEvent, lock};
use crate::term::pty::{ChildExit, DirUnusable, PtyEvent};
use pokeshell_core::session::Input;
use pokeshell_core::supervisor::ledger::rule;
use pokeshell_core::supervisor::{LedgerKind, LedgerRecord};
use pokeshell_core::ui::theme::Tone;

/// A child being replaced gets this long after SIGTERM before it is killed.
const RESTART_GRACE: Duration = Duration::from_secs(3);
/// What a killed pi left running gets this long to end after SIGTERM.
const ORPHAN_GRACE: Duration = Duration::from_secs(2);
/// A killed child not reaped this long after SIGKILL is left behind and the new one starts: SIGKILL
/// cannot be caught, so a child still there is held by a tracer or stuck in the kernel, and may stay
/// so for good (as systemd, the relaunch gives up after a bound).
pub const REAP_GIVE_UP: Duration = Duration::from_secs(5);
/// A wake this much later than planned counts as time away.
const AWAY_SLACK: Duration = Duration::from_millis(500);

impl<S: Screen, C: Child, B: Bridge, L: Layer> Loop<S, C, B, L> {
    /// The session wants pi relaunched with `args`.
    pub(super) fn ask_respawn(&mut self, args: Vec<String>) -> Result<()> {
        if self.shutting_down {
            return Ok(());
        }
        self.respawn = Some(args);
        if self.child_alive {
            self.child.signal(libc::SIGTERM);
            self.kill_due = Some(Instant::now() + RESTART_GRACE);
            Ok(())
        } else {
            self.start_again()
        }
    }

    /// The child exited. Returns the exit when the loop ends with it; `None` when a new child runs.
    pub(super) fn child_exited(&mut self, exit: ChildExit) -> Result<Option<ChildExit>> {
        self.child_alive = false;
        self.last_exit = exit;
        if self.shutting_down {
            return Ok(Some(exit));
        }
        if self.respawn.is_some() {
            self.start_again()?;
            return Ok(None);
        }
        // The session may relaunch a pi that died mid-run: then a new child runs already.
        self.input(Input::ChildExited {
            code: exit.code,
            signal: exit.signal,
        })?;
        // A relaunch that could not start (its directory is gone) waits for the user's poke.
        Ok((!self.child_alive && self.not_started.is_none()).then_some(exit))
    }

    /// The kill after the grace; a relaunch waits for the killed child only so long.
    pub(super) fn kill_timers(&mut self, now: Instant) -> Result<()> {
        if self.kill_due.is_some_and(|d| d <= now) {
            self.kill_due = None;
            self.child.signal(libc::SIGKILL);
            if self.respawn.is_some() && !self.shutting_down {
                self.reap_due = Some(now + REAP_GIVE_UP);
            }
        }
        if self.reap_due.is_some_and(|d| d <= now) {
            self.reap_due = None;
            self.give_up_reaping()?;
        }
        Ok(())
    }

    /// The killed child is still not reaped: it is left to be reaped in the background, the ledger
    /// and the side pane say so, and the new child starts.
    pub(super) fn give_up_reaping(&mut self) -> Result<()> {
        if !self.child_alive || self.respawn.is_none() || self.shutting_down {
            return Ok(());
        }
        self.child.abandon();
        self.child_alive = false;
        let reason = format!(
            "the old pi was not reaped {} s after SIGKILL (held by a debugger, or stuck in the \
             kernel): it is left to be reaped in the background and a new pi starts",
            REAP_GIVE_UP.as_secs()
        );
        let at = self.clock.now(Instant::now());
        self.ledger.append(&LedgerRecord {
            wall_ms: at.wall_ms,
            session_id: None,
            rule: rule::RESTART_UNREAPED,
            kind: LedgerKind::Action,
            reason: reason.clone(),
            sent: None,
        });
        self.input(Input::Notice {
            text: reason,
            tone: Tone::Error,
        })?;
        self.start_again()
    }

    fn start_again(&mut self) -> Result<()> {
        let Some(args) = self.respawn.take() else {
            return Ok(());
        };
        self.kill_due = None;
        self.reap_due = None;
        lock(&self.mirror).reset();
        self.output_pending.store(false, Ordering::Release);
        self.output_closed = false;
        let pid = match self.child.respawn(args) {
            Ok(pid) => pid,
            // Never anywhere else: the session says why and waits for a poke to try again.
            Err(e) => match e.downcast_ref::<DirUnusable>() {
                Some(why) => {
                    // What the killed pi left running is ended all the same.
                    tokio::task::spawn_blocking(|| crate::term::reaper::end_orphans(ORPHAN_GRACE));
                    self.not_started = Some(self.last_exit);
                    self.dirty = true;
                    return self.input(Input::ChildNotStarted { why: why.to_string() });
                }
                None => return Err(e),
            },
        };
        self.not_started = None;
        self.child_alive = true;
        if self.gate_each_start {
            self.typing.hold_until_ready(std::time::Instant::now());
        }
        // Killed, the old pi could not end its tools; the new one's are its own children.
        tokio::task::spawn_blocking(|| crate::term::reaper::end_orphans(ORPHAN_GRACE));
        self.dirty = true;
        self.input(Input::ChildStarted { pid })
    }

    /// After the child's exit: its last output may still be on the way (the exit can overtake it);
    /// waits for the reader to finish, briefly, so the final screen is whole.
    pub async fn drain_output(&mut self, rx: &mut UnboundedReceiver<WorldEvent>) {
        let until = Instant::now() + Duration::from_millis(300);
        while !self.output_closed {
            match tokio::time::timeout_at(until, rx.recv()).await {
                Ok(Some(WorldEvent::Pty(PtyEvent::Closed))) | Ok(None) | Err(_) => self.output_closed = true,
                Ok(Some(_)) => {}
            }
        }
    }

    /// One event from the world; the exit to end with when the session was ended while no child
    /// runs (a relaunch that could not start): there is nothing to wait for.
    pub(super) fn on_world_then_end(&mut self, ev: WorldEvent) -> Result<Option<ChildExit>> {
        self.on_world(ev)?;
        Ok(self.not_started.filter(|_| self.shutting_down))
    }

    /// Tells the session how long the loop did not run, when it woke far later than `planned`.
    pub(super) fn note_away(&mut self, planned: Instant, now: Instant) -> Result<()> {
        let late = now.saturating_duration_since(planned);
        if late > AWAY_SLACK {
            self.input(Input::LoopAway {
                ms: late.as_millis() as u64,
            })?;
        }
        Ok(())
    }
}
