//! What a client and the server say to each other, imported by both sides and owned by neither: the
//! framed messages (`wire`, each declared once) and where the server listens, with its token and the
//! check of who may connect (`socket`), a socket split into halves that wake only for their own work
//! (`halves`), and a client's socket written by the session it follows (`outbox`). docs/protocol.md
//! describes the frames.

pub mod halves;
pub mod outbox;
pub mod socket;
pub mod wire;
