//! pokeshell's configuration: one schema of keys, resolved per key from defaults, pi's global and
//! project settings files (and the extensions' own files), the pi session and the command line;
//! validated with warnings. Files come in as text and go out as text: reading and writing them is the
//! binary crate's (`pi::settings_files`). See docs/configuration.md.

pub mod effective;
pub mod exclusive;
pub mod files;
pub mod hours;
mod ordered;
pub mod paths;
pub mod schema;
pub mod session;
pub mod settings;
pub mod show;
pub mod source;
pub mod value;
pub mod warning;
pub mod write;

pub use effective::{
    DisplaySettings, EffectiveSettings, HandoffSettings, PokeSettings, RecoverySettings, SidePaneMode,
    WakeupSettings,
};
pub use files::LoadedFile;
pub use paths::ConfigPaths;
pub use schema::{Block, Group, KEYS, KeyId, KeySpec, ValueKind};
pub use session::SESSION_ENTRY_TYPE;
pub use settings::{Change, Resolved, SaveReport, Settings};
pub use source::{Scope, Source};
pub use value::{Layer, SettingValue};
pub use warning::{ConfigWarning, Origin, WarningKind};
pub use write::SaveError;
