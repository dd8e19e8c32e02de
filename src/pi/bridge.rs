//! The bridge between pokeshell and pi: a TypeScript extension loaded into pi (embedded in this binary)
//! talks to a Unix socket server here, in versioned JSON lines. Events flow from pi to pokeshell,
//! commands flow back. The bridge holds no policy: every decision is made by the supervisor.
//!
//! Start-up, as the app wires it:
//! 1. [`asset::install_bridge`] writes the extension into the private runtime dir and returns its path
//!    (pass it to pi as `-e <path>`).
//! 2. [`server::BridgeServer::start`] listens on a fresh socket and returns a [`server::BridgeHandle`]
//!    plus the receiver of [`server::BridgeEvent`]s; [`server::BridgeHandle::env`] gives the variables
//!    to set in pi's environment.
//! 3. [`version::probe`] says whether the installed pi is new enough to load the bridge.

pub mod asset;
pub(crate) mod auth;
mod connection;
mod hub;
pub mod lines;

pub(crate) mod runtime_dir;
pub mod server;
pub mod version;

pub use pokeshell_core::bridge::{Command, FromBridge, Hello, PiEvent, ToBridge};
pub use server::{BridgeEvent, BridgeHandle, BridgeServer, SendError};
