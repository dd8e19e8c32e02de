//! pokeshell: hosts the pi coding agent in a pseudo-terminal, mirrors its screen beside a side pane and
//! a footer, and supervises it through a bridge extension loaded into pi.

pub mod about;
pub mod cli;
pub mod cli_config;
pub mod client;
pub mod completions;

pub mod demo;
pub mod event_loop;
pub mod ipc;
pub mod launch;
pub mod machines;
pub mod pi;
pub mod server;
pub mod server_store;
pub mod term;
pub mod web;
pub mod worktree;
