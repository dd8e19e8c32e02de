//! Shared by the integration tests (`mod support;`). A `mod.rs` on purpose: a `tests/support.rs`
//! would be built as one more, empty, test target.
#![allow(dead_code)]

pub mod bridge;
pub mod browser;
pub mod fixtures;
pub mod matrix;
pub mod pi;
pub mod procs;
pub mod pty;
pub mod shell;
pub mod snapshot;

use std::time::Duration;

#[allow(unused_imports)]
pub use pokeshell::demo::model::{ModelServer, RecordedRequest, Reply, Scenario, Step, ToolCall};

/// The usual bound for one wait in these tests: generous for a loaded 2-core machine, far below
/// the 30 s a test may take.
pub const WAIT: Duration = Duration::from_secs(15);

/// The bound for pi's start (node loading pi, the bridge connecting): the slowest step when several
/// test binaries start pis at once on two cores. Only a failing test waits it out.
pub const START_WAIT: Duration = Duration::from_secs(40);

pub fn secs(s: u64) -> Duration {
    Duration::from_secs(s)
}

/// A server for one test; panics (the test fails) when it cannot start.
pub fn model_server() -> ModelServer {
    ModelServer::start().expect("the scripted model server should start on 127.0.0.1")
}
