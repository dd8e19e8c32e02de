//! The operating system's side: the host terminal, pi's pseudo-terminal, the mirror of pi's screen,
//! text made safe to print, child processes run with bounds, the reaper of orphaned processes.

pub mod bounded_command;
pub mod bounded_run;
pub mod host;
pub mod pty;
pub mod reaper;

pub mod screen;
