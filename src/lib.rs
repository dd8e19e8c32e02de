//! pokeshell: hosts the pi coding agent in a pseudo-terminal, mirrors its screen beside a side pane and
//! a footer, and supervises it through a bridge extension loaded into pi.

pub mod cli;
pub mod client;
pub mod demo;
pub mod git;
pub mod ipc;
pub mod machines;
pub mod pi;
pub mod server;
pub mod term;
pub mod web;
