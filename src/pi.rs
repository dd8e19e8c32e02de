//! What pokeshell knows of pi: the bridge extension and its socket, installing and finding pi,
//! one-shot runs passed straight to pi, the intervention ledger, notifications.

pub mod bridge;
pub mod install;
pub mod ledger;
pub mod locate;

pub mod notify_command;
pub mod passthrough;
pub mod private_file;
pub mod settings_files;
