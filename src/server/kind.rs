//! Kinds of session the server runs besides its own (pi, or the program `--command` names): a kind
//! claims a session by its command line and prepares it on the session's thread. The server knows no
//! kind by name; the binary's entry point hands it the list (`pokeshell demo`'s is the one there is).

use std::any::Any;
use std::sync::Arc;

use super::event_loop::Layer;
use super::event_loop::build::SessionConfig;
use pokeshell_core::server::state::SessionSpec;

/// A session a kind prepared: what runs, a layer over its loop (beside the server's observer), and
/// what must live as long as the session (dropped once it ended, before the server hears the end).
pub struct Prepared {
    pub config: SessionConfig,
    pub layer: Box<dyn Layer>,
    pub keep: Box<dyn Any>,
    /// What the program left on its main screen goes to the client at the end (pi's resume hint).
    pub farewell: bool,
}

/// Prepares a claimed session, on the session's own thread (a kind may start helpers there).
pub type Prepare = Box<dyn FnOnce(&SessionSpec) -> Result<Prepared, String> + Send>;

pub trait SessionKind: Send + Sync {
    /// How to prepare a session with this command line (pokeshell's, without the program's name),
    /// when this kind runs it.
    fn claim(&self, argv: &[String]) -> Option<Prepare>;
}

/// The kinds a server knows, shared by its session threads.
pub type Kinds = Arc<[Box<dyn SessionKind>]>;
