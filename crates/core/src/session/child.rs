//! What the session knows of its child process: its pid and exit, the input modes it asked for, the
//! host modes that follow from them, and whether a Ctrl+Z it was sent is making it suspend.

use crate::input::key::{KeyCode, KeyEvent, KeyEventKind, KeyModifiers};

use crate::screen::ChildModes;
use crate::screen::HostModes;
use crate::supervisor::Now;

/// After Ctrl+Z, how long pi has to show that it is suspending (it turns bracketed paste off).
const SUSPEND_WINDOW_MS: u64 = 1000;

pub fn is_suspend_key(k: &KeyEvent) -> bool {
    k.code == KeyCode::Char('z') && k.modifiers == KeyModifiers::CONTROL && k.kind == KeyEventKind::Press
}

#[derive(Debug)]
pub struct ChildState {
    pub pid: Option<i32>,
    pub exit: Option<i32>,
    modes: ChildModes,
    host_kitty: bool,
    /// The host modes the child's modes call for, as last asked of the loop.
    wanted: HostModes,
    /// When Ctrl+Z last went to the child (mono ms).
    suspend_key_at: Option<u64>,
}

impl ChildState {
    pub fn new(host_kitty: bool) -> Self {
        Self {
            pid: None,
            exit: None,
            modes: ChildModes::default(),
            host_kitty,
            wanted: HostModes::default(),
            suspend_key_at: None,
        }
    }

    pub fn modes(&self) -> &ChildModes {
        &self.modes
    }

    pub fn wanted_host_modes(&self) -> HostModes {
        self.wanted
    }

    pub fn note_suspend_key(&mut self, now: Now) {
        self.suspend_key_at = Some(now.mono_ms);
    }

    /// Takes the child's new modes. Returns the host modes to set when they changed, and whether pi
    /// is suspending itself: pi handles Ctrl+Z by stopping its TUI and sending itself SIGTSTP, which
    /// is discarded inside pokeshell (pi's process group has no parent in its session), so pokeshell
    /// suspends in its place when Ctrl+Z went to pi and pi then turned bracketed paste off.
    pub fn update(&mut self, modes: ChildModes, now: Now) -> (Option<HostModes>, bool) {
        let recent = self
            .suspend_key_at
            .is_some_and(|t| now.mono_ms.saturating_sub(t) <= SUSPEND_WINDOW_MS);
        let suspend = recent && self.modes.bracketed_paste && !modes.bracketed_paste;
        if suspend {
            self.suspend_key_at = None;
        }
        self.modes = modes;
        let want = HostModes::for_child(&modes, self.host_kitty);
        let changed = want != self.wanted;
        self.wanted = want;
        (changed.then_some(want), suspend)
    }
}
