//! Where a resolved value came from.

use std::fmt;
use std::path::PathBuf;

/// The layer a value was taken from, lowest priority first.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Source {
    Default,
    Global(PathBuf),
    Project(PathBuf),
    /// Changed in the settings dialog, kept in the pi session.
    Session,
    /// A command-line flag, for this run only.
    CommandLine,
}

impl Source {
    /// The short word the dialog shows.
    pub fn label(&self) -> &'static str {
        match self {
            Source::Default => "default",
            Source::Global(_) => "global",
            Source::Project(_) => "project",
            Source::Session => "session",
            Source::CommandLine => "cli",
        }
    }
}

impl fmt::Display for Source {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Source::Global(p) | Source::Project(p) => write!(f, "{} {}", self.label(), p.display()),
            Source::CommandLine => f.write_str("command line"),
            _ => f.write_str(self.label()),
        }
    }
}

/// Which settings file "save as … default" writes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Scope {
    Global,
    Project,
}
