//! The user's real terminal: entering and restoring it (on every exit path, panics included),
//! probing what it supports, and mirroring the child's input modes onto it.

pub mod probe;
pub mod start_gate;
pub mod test_hook;
pub mod watchdog;

use std::io::Write;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Mutex, Once};
use std::time::Duration;

use anyhow::{Context, Result};

pub use pokeshell_core::screen::HostModes;

static ACTIVE: AtomicBool = AtomicBool::new(false);
static KITTY_PUSHED: AtomicBool = AtomicBool::new(false);
static MODIFY_OTHER_KEYS_SET: AtomicBool = AtomicBool::new(false);
/// The terminal's settings before raw mode, for a restore that cannot go through crossterm.
static SAVED_TERMIOS: Mutex<Option<libc::termios>> = Mutex::new(None);

/// Everything that undoes what pokeshell (or pi through it) turned on, in reverse order.
fn restore_sequence() -> Vec<u8> {
    let mut s = Vec::new();
    if KITTY_PUSHED.swap(false, Ordering::SeqCst) {
        s.extend_from_slice(b"\x1b[<u");
    }
    if MODIFY_OTHER_KEYS_SET.swap(false, Ordering::SeqCst) {
        s.extend_from_slice(b"\x1b[>4;0m");
    }
    s.extend_from_slice(b"\x1b[?1000l\x1b[?1002l\x1b[?1003l\x1b[?1006l\x1b[?1004l\x1b[?2004l\x1b[?1l");
    s.extend_from_slice(b"\x1b[0 q\x1b[0m\x1b[?25h\x1b[?1049l");
    s
}

/// Puts the terminal back as it was. Idempotent; safe to call from a panic hook.
pub fn restore() {
    if !ACTIVE.swap(false, Ordering::SeqCst) {
        return;
    }
    let mut out = std::io::stdout().lock();
    let _ = out.write_all(&restore_sequence());
    let _ = out.flush();
    quit_shield(true);
    let _ = crossterm::terminal::disable_raw_mode();
}

extern "C" fn ignore_signal(_: libc::c_int) {}

/// While the terminal is not in raw mode (start-up, after the restore at exit, while suspended) a
/// Ctrl+\ typed there is a SIGQUIT for pokeshell: it must not end pokeshell and leave pi without its
/// host or lose pi's exit code, so it is caught and does nothing. In raw mode the terminal sends no
/// SIGQUIT: one then comes from `kill` and keeps its default action (a core dump, for debugging). A
/// caught signal, unlike an ignored one, gets its default action back in programs pokeshell starts.
pub fn quit_shield(on: bool) {
    let handler = if on {
        ignore_signal as extern "C" fn(libc::c_int) as libc::sighandler_t
    } else {
        libc::SIG_DFL
    };
    // SAFETY: a zeroed sigaction with an empty handler or the default action, for a plain signal.
    unsafe {
        let mut act: libc::sigaction = std::mem::zeroed();
        act.sa_sigaction = handler;
        act.sa_flags = libc::SA_RESTART;
        libc::sigemptyset(&mut act.sa_mask);
        libc::sigaction(libc::SIGQUIT, &act, std::ptr::null_mut());
    }
}

/// [`restore`] for a thread other than the loop's, which may be stuck holding stdout's lock or in a
/// write the terminal does not take: the bytes go straight to fd 1 from a helper thread that is
/// given a moment and then left behind, and the saved terminal settings are put back with
/// `tcsetattr`, which does not wait for output to drain.
pub(crate) fn restore_from_any_thread() {
    if !ACTIVE.swap(false, Ordering::SeqCst) {
        return;
    }
    let bytes = restore_sequence();
    let (done_tx, done_rx) = std::sync::mpsc::channel();
    let writer = std::thread::Builder::new().spawn(move || {
        let mut rest = &bytes[..];
        while !rest.is_empty() {
            // SAFETY: writing from a live slice of the given length.
            let n = unsafe { libc::write(1, rest.as_ptr().cast(), rest.len()) };
            if n <= 0 {
                break;
            }
            rest = &rest[n as usize..];
        }
        let _ = done_tx.send(());
    });
    if writer.is_ok() {
        let _ = done_rx.recv_timeout(Duration::from_millis(500));
    }
    quit_shield(true);
    let saved = *SAVED_TERMIOS
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    if let Some(termios) = saved {
        // SAFETY: tcsetattr reads the termios we saved from the same descriptor.
        unsafe { libc::tcsetattr(0, libc::TCSANOW, &termios) };
    }
}

/// Keeps the terminal's settings from before the first switch to raw mode.
fn save_termios() {
    let mut saved = SAVED_TERMIOS
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    if saved.is_some() {
        return;
    }
    // SAFETY: tcgetattr writes only into the zeroed struct it is given.
    unsafe {
        let mut t: libc::termios = std::mem::zeroed();
        if libc::tcgetattr(0, &mut t) == 0 {
            *saved = Some(t);
        }
    }
}

/// A client writes what the server drew: the kitty keyboard and modifyOtherKeys modes it turns on
/// there are noted as if set here, so that restoring the terminal turns them off.
pub fn note_modes_in(bytes: &[u8]) {
    let (kitty, modify_other_keys) = modes_in(bytes);
    if kitty {
        note_kitty_pushed();
    }
    if let Some(on) = modify_other_keys {
        note_modify_other_keys(on);
    }
}

/// Whether `bytes` push a kitty keyboard mode, and the last modifyOtherKeys level they set (on or
/// off), if any.
fn modes_in(bytes: &[u8]) -> (bool, Option<bool>) {
    let (mut kitty, mut modify_other_keys) = (false, None);
    let mut rest = bytes;
    while let Some(i) = rest.windows(3).position(|w| w == b"\x1b[>") {
        rest = &rest[i + 3..];
        let digits = rest.iter().take_while(|b| b.is_ascii_digit()).count();
        match rest.get(digits) {
            Some(b'u') if digits > 0 => kitty = true,
            Some(b';') if &rest[..digits] == b"4" => {
                let value = &rest[digits + 1..];
                let len = value.iter().take_while(|b| b.is_ascii_digit()).count();
                if value.get(len) == Some(&b'm') {
                    modify_other_keys = Some(value[..len].iter().any(|b| *b != b'0'));
                }
            }
            _ => {}
        }
    }
    (kitty, modify_other_keys)
}

pub(crate) fn note_kitty_pushed() {
    KITTY_PUSHED.store(true, Ordering::SeqCst);
}

pub(crate) fn note_modify_other_keys(on: bool) {
    if on {
        MODIFY_OTHER_KEYS_SET.store(true, Ordering::SeqCst);
    }
}

/// Owns the terminal while pokeshell runs; dropping it restores the terminal.
pub struct TerminalGuard(());

/// Raw mode, alternate screen, bracketed paste (kept on for pokeshell's own dialogs).
fn take_terminal() -> Result<()> {
    save_termios();
    crossterm::terminal::enable_raw_mode().context("cannot switch the terminal to raw mode")?;
    quit_shield(false);
    ACTIVE.store(true, Ordering::SeqCst);
    let mut out = std::io::stdout().lock();
    out.write_all(b"\x1b[?1049h\x1b[?2004h\x1b[?25l\x1b[2J")
        .and_then(|()| out.flush())
        .context("cannot write to the terminal")
}

impl TerminalGuard {
    pub fn enter() -> Result<Self> {
        // The pane shows the child's own colours, which NO_COLOR does not govern (pi ignores it);
        // with it set crossterm would write every colour change as SGR 0 and drop them all.
        crossterm::style::Colored::set_ansi_color_disabled(false);
        install_panic_hook();
        take_terminal()?;
        Ok(Self(()))
    }

    /// Job control: gives the terminal back, stops pokeshell as the shell's Ctrl+Z would, and takes
    /// the terminal again once the shell continues it (`fg`). The caller re-applies its modes and
    /// redraws everything.
    pub fn suspend(&self) -> Result<()> {
        restore();
        // SAFETY: raise(2) with a plain signal number. SIGTSTP's default action stops the process
        // until SIGCONT; in an orphaned process group the kernel discards it and raise returns at once.
        unsafe {
            libc::raise(libc::SIGTSTP);
        }
        take_terminal()
    }
}

impl Drop for TerminalGuard {
    fn drop(&mut self) {
        restore();
    }
}

pub(crate) fn install_panic_hook() {
    static HOOK: Once = Once::new();
    HOOK.call_once(|| {
        let previous = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            if crate::term::screen::contain::parsing() {
                // Caught where it happened; the session goes on (see `screen::contain`).
                eprintln!("pokeshell: the screen parser failed on the child's output, the pane starts afresh: {info}");
                return;
            }
            restore();
            stop_child_after_panic();
            previous(info);
            // A panic in any thread leaves pokeshell unable to serve pi: end the whole process.
            std::process::exit(101);
        }));
    });
}

/// pi saves its session on SIGHUP; give it a moment before making sure nothing is left running.
fn stop_child_after_panic() {
    if crate::term::pty::live_child_pid().is_none() {
        return;
    }
    crate::term::pty::signal_child(libc::SIGHUP);
    for _ in 0..20 {
        if crate::term::pty::live_child_pid().is_none() {
            return;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    crate::term::pty::signal_child(libc::SIGKILL);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn quit_handler() -> libc::sighandler_t {
        // SAFETY: sigaction with a null new action only reads the current one into the local.
        unsafe {
            let mut old: libc::sigaction = std::mem::zeroed();
            libc::sigaction(libc::SIGQUIT, std::ptr::null(), &mut old);
            old.sa_sigaction
        }
    }

    #[test]
    fn a_sigquit_while_the_terminal_is_not_raw_does_nothing() {
        quit_shield(false);
        assert_eq!(quit_handler(), libc::SIG_DFL, "raw mode: the default action");
        quit_shield(true);
        assert_ne!(quit_handler(), libc::SIG_DFL);
        assert_ne!(
            quit_handler(),
            libc::SIG_IGN,
            "caught, so that a program started gets the default"
        );
        // SAFETY: raise with a plain signal number; the shield's handler does nothing.
        let sent = unsafe { libc::raise(libc::SIGQUIT) };
        assert_eq!(sent, 0, "and the test process is still here");
    }

    #[test]
    fn a_client_notes_the_keyboard_modes_it_passes_on() {
        assert_eq!(modes_in(b"plain text \x1b[>1;2m and \x1b[?1049h"), (false, None));
        assert_eq!(modes_in(b"\x1b[>4;0m"), (false, Some(false)), "turned off");
        assert_eq!(modes_in(b"frame\x1b[>4;2mframe\x1b[>5u"), (true, Some(true)));
        assert_eq!(
            modes_in(b"\x1b[>4;2m\x1b[>4;0m"),
            (false, Some(false)),
            "the last one counts"
        );
        assert_eq!(modes_in(b"\x1b[>u\x1b[>4;"), (false, None), "cut short: nothing");
    }
}
