//! What a client and the server say to each other, imported by both sides and owned by neither: the
//! framed messages (`wire`, each declared once) and where the server listens, with its token and the
//! check of who may connect (`socket`), a socket split into halves that wake only for their own work
//! (`halves`), a client's socket written by the session it follows (`outbox`), and a client's
//! terminal, which the server reads and writes itself when it can (`terminal`). docs/protocol.md
//! describes the frames.

pub mod halves;
pub mod outbox;
pub mod socket;
pub mod terminal;
pub mod wire;
