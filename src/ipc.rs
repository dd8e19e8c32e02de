//! How a client and the server reach each other, imported by both sides and owned by neither: the
//! framed messages themselves are the pure crate's (`pokeshell_core::wire`, each declared once); here
//! are where the server listens, with its token and the check of who may connect (`socket`), frames
//! read from an async stream (`frame_async`), a descriptor (a socket, a terminal) split into halves
//! that wake only for their own work (`halves`), and a client's terminal, which the server opens to
//! read and write it itself when it can (`terminal`). docs/protocol.md describes the frames.

pub mod frame_async;
pub mod halves;
pub mod socket;
pub mod terminal;
