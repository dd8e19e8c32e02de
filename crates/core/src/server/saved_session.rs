//! One session of the saved list, as the server's state keeps it and the binary writes it
//! (`server::store`).

use serde::{Deserialize, Serialize};

use crate::spec::SessionSpec;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SavedSession {
    /// Number, name, directory and command line (`args`).
    #[serde(flatten)]
    pub spec: SessionSpec,
    /// pi's session file, once pi reported it.
    #[serde(default)]
    pub session_file: Option<String>,
    /// The agent was in a run when last saved.
    #[serde(default)]
    pub mid_run: bool,
}
