//! ntfy's access token, kept out of every settings file (a repository could hold one): the
//! environment variable `POKESHELL_NTFY_TOKEN`, else the file `ntfy-token` in pokeshell's config
//! directory (`$XDG_CONFIG_HOME/pokeshell/`, else `~/.config/pokeshell/`), which must be the user's
//! own and readable by nobody else (mode 0600). Never logged.

use std::os::unix::fs::MetadataExt;
use std::path::PathBuf;

pub const TOKEN_ENV: &str = "POKESHELL_NTFY_TOKEN";
pub const TOKEN_FILE: &str = "ntfy-token";

/// The token file's path.
pub fn path() -> Option<PathBuf> {
    let base = match std::env::var_os("XDG_CONFIG_HOME").filter(|v| !v.is_empty()) {
        Some(dir) => PathBuf::from(dir),
        None => std::env::home_dir()?.join(".config"),
    };
    Some(base.join("pokeshell").join(TOKEN_FILE))
}

/// The token, if one is kept; an error says why one that is there cannot be used (the token itself
/// never in it).
pub fn read() -> Result<Option<String>, String> {
    if let Some(t) = std::env::var_os(TOKEN_ENV) {
        let t = t.to_string_lossy().trim().to_string();
        return Ok((!t.is_empty()).then_some(t));
    }
    let Some(path) = path() else {
        return Ok(None);
    };
    let meta = match std::fs::metadata(&path) {
        Ok(m) => m,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(format!("cannot read {}: {e}", path.display())),
    };
    // SAFETY: getuid cannot fail.
    let me = unsafe { libc::getuid() };
    if meta.uid() != me {
        return Err(format!("{} is not yours: it is not used", path.display()));
    }
    if meta.mode() & 0o077 != 0 {
        return Err(format!(
            "{} may be read by others (mode {:o}): it is not used; `chmod 600` it",
            path.display(),
            meta.mode() & 0o777
        ));
    }
    let text = std::fs::read_to_string(&path).map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    let t = text.trim().to_string();
    Ok((!t.is_empty()).then_some(t))
}

#[cfg(test)]
mod tests {
    /// The hosted programs' environment drops the token's variable (second red-team pass).
    #[test]
    fn the_token_variable_is_kept_from_hosted_programs() {
        assert!(crate::term::pty::SECRET_ENV.contains(&super::TOKEN_ENV));
    }
}
