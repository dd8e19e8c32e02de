//! The pure core: events and time in, effects out. Nothing here reads a clock, a file or the
//! environment: one pi session (`session`), its supervisor, the keys, the drawing, the settings.

pub mod config;
pub mod input;
pub mod session;
pub mod supervisor;
pub mod ui;
pub mod workspace;
