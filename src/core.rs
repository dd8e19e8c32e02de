//! The pure core: events and time in, effects out. Nothing here reads a clock, a file or the
//! environment: one pi session (`session`), its supervisor, the keys, the drawing, the settings, and what a
//! session shows of itself to the others (`brief`).

pub mod brief;
pub mod config;
pub mod format;
pub mod input;
pub mod session;
pub mod spec;
pub mod supervisor;
pub mod ui;
pub mod workspace;
