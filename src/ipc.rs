//! How a client and the server reach each other, imported by both sides and owned by neither: the
//! framed messages themselves are the pure crate's (`pokeshell_core::wire`, each declared once); here
//! are where the server listens, with its token and the check of who may connect (`socket`), frames
//! read from an async stream (`frame_async`), a socket split into halves that wake only for their own
//! work (`halves`), a client's socket written by the session it follows (`outbox`), and a client's
//! terminal, which the server reads and writes itself when it can (`terminal`). docs/protocol.md
//! describes the frames.

pub mod frame_async;
pub mod halves;
pub mod outbox;
pub mod socket;
pub mod terminal;
