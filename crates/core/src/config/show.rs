//! The text of `--show-config`: one key per line with its value (as JSON, ready to copy into a
//! settings file) and its source, then the files read and the warnings.

use std::fmt::Write;

use super::files::{FileFormat, FileState, TOOL_TIMEOUT_KEY};
use super::schema::KEYS;
use super::settings::Settings;
use super::source::Scope;

const NAME_WIDTH: usize = 36;
const VALUE_WIDTH: usize = 10;

impl Settings {
    pub fn show_config(&self) -> String {
        let mut out = String::new();
        let _ = writeln!(
            out,
            "pokeshell settings (priority: command line > session > project > global > default)"
        );
        out.push('\n');
        for spec in &KEYS {
            let r = self.resolved(spec.id);
            let value = r.value.to_json().to_string();
            let _ = writeln!(
                out,
                "{:<NAME_WIDTH$} {value:<VALUE_WIDTH$} {}",
                spec.full_name(),
                r.source
            );
        }
        let timeout = match self.tool_timeout() {
            Some((ms, path)) => format!("{ms:<VALUE_WIDTH$} {}", path.display()),
            None => "not set".to_string(),
        };
        let _ = writeln!(
            out,
            "{:<NAME_WIDTH$} {timeout}",
            format!("(pi) {TOOL_TIMEOUT_KEY}")
        );
        out.push_str("\nfiles, lowest priority first:\n");
        for f in self.files() {
            let scope = match f.file.scope {
                Scope::Global => "global",
                Scope::Project => "project",
            };
            let what = match f.file.format {
                FileFormat::PiSettings => "",
                FileFormat::LegacyPiSettings => " (pi-poke's legacy path, poke block only)",
                FileFormat::Flat(_) => "",
            };
            let state = match f.state {
                _ if f.file.scope == Scope::Project && !self.project_trusted() => {
                    "not used: pi does not trust this folder"
                }
                FileState::Missing => "not found",
                FileState::Read => "read",
                FileState::Malformed => "NOT VALID JSON, ignored",
                FileState::Unreadable => "unreadable, ignored",
            };
            let _ = writeln!(out, "  {scope:<8}{}{what}: {state}", f.file.path.display());
        }
        let warnings = self.warnings();
        if warnings.is_empty() {
            out.push_str("\nno warnings\n");
        } else {
            out.push_str("\nwarnings:\n");
            for w in warnings {
                let _ = writeln!(out, "  {w}");
            }
        }
        out
    }
}
