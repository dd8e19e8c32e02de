//! pokeshell: hosts the pi coding agent in a pseudo-terminal, mirrors its screen beside a side pane and
//! a footer, and supervises it through a bridge extension loaded into pi.

pub mod bridge;
pub mod supervisor;
