//! pokeshell: hosts the pi coding agent in a pseudo-terminal, mirrors its screen beside a side pane and
//! a footer, and supervises it through a bridge extension loaded into pi.

pub mod bounded_run;
pub mod bridge;
pub mod cli;
pub mod client;
pub mod config;
pub mod demo;
pub mod event_loop;
pub mod host;
pub mod input;
pub mod install;
pub mod launch;
pub mod ledger;
pub mod locate;
pub mod notify;
pub mod notify_command;
pub mod passthrough;
pub mod pty;
pub mod reaper;
pub mod safe_text;
pub mod screen;
pub mod server;
pub mod server_store;
pub mod session;
pub mod supervisor;
pub mod ui;
pub mod workspace;
