//! pokeshell's own user interface: overlays drawn over the main layout.

pub mod overlay;
pub mod settings_dialog;
pub mod status_overlay;
