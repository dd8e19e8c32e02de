//! Rendering: the pi pane, the side pane, the footer and the overlays drawn on top.

pub mod footer;
pub mod help;
pub mod layout;
pub mod pane;
pub mod side;
pub mod theme;
