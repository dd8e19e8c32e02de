//! pokeshell's pure core: events and time in, effects out. Nothing here reads a clock, a file, the
//! environment or a socket, starts a process or a thread: one pi session (`session`), its supervisor,
//! the keys, the drawing into a buffer, the settings resolved from given text, what a session shows of
//! itself to the others (`brief`), the bridge's wire types (`bridge`), the server's state
//! (`server`) and who the web view lets in when connections are many (`admission`). The binary
//! crate performs the effects. `tests/layers.rs` there keeps it so.

pub mod admission;
pub mod away;
pub mod bridge;
pub mod brief;
pub mod config;
pub mod diff;
pub mod drive;
pub mod format;
pub mod input;
pub mod loopback;
pub mod notify;
pub mod pi_args;
pub mod safe_text;
pub mod screen;
pub mod server;
pub mod session;
pub mod spec;
pub mod supervisor;
pub mod talk;
pub mod ui;
pub mod wire;
pub mod workspace;
