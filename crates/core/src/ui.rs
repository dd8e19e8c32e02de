//! Rendering: the pi pane, the side pane, the footer and the overlays drawn on top; and the list of
//! commands after the prefix key that the help, the footer and the app's dispatch share.

pub mod changes_view;
pub mod commands;
pub mod footer;
pub mod help;
pub mod layout;
pub mod overlay;
pub mod pane;
pub mod prompt;
pub mod settings_dialog;
pub mod side;
pub mod side_sessions;
pub mod status_overlay;
pub mod switcher;
pub mod theme;
