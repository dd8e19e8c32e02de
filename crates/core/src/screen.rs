//! What pokeshell knows of the hosted program's terminal without parsing it: the modes it asked for,
//! the modes set on the user's terminal to match, its status reports (OSC 7501), and which rows its
//! output changed. The parser itself (the mirror) lives in the binary crate.

pub mod host_modes;
pub mod program_status;
pub mod row_changes;

use vt100::{MouseProtocolEncoding, MouseProtocolMode};

pub use host_modes::HostModes;
pub use program_status::{ProgramState, ProgramStatus};

/// The terminal modes the child has asked for that pokeshell mirrors onto the host terminal.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ChildModes {
    pub kitty_flags: u16,
    pub modify_other_keys: u16,
    pub bracketed_paste: bool,
    pub mouse: MouseProtocolMode,
    pub mouse_encoding: MouseProtocolEncoding,
    pub focus_reports: bool,
    pub application_cursor: bool,
    /// The host terminal speaks the kitty keyboard protocol (false until its probe answered).
    pub host_kitty: bool,
}

impl Default for ChildModes {
    fn default() -> Self {
        Self {
            kitty_flags: 0,
            modify_other_keys: 0,
            bracketed_paste: false,
            mouse: MouseProtocolMode::None,
            mouse_encoding: MouseProtocolEncoding::Default,
            focus_reports: false,
            application_cursor: false,
            host_kitty: false,
        }
    }
}
