//! The page's "new session" form, as `pokeshell new` would take it: a directory, a name and a
//! worktree branch. Checked here before the server is asked, each with an error that says what to
//! fix; the name's rules and whether it is free are the server's own (its session table), so a
//! taken name comes back from the server as a clear error too.

use std::path::{Path, PathBuf};

use pokeshell_core::wire::Target;

/// Longest directory and branch the form takes (a path beyond is no path anyone typed).
const MAX_DIR: usize = 4096;
const MAX_BRANCH: usize = 255;

/// The form as the page sends it.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Form {
    pub dir: String,
    pub name: Option<String>,
    pub worktree: Option<String>,
}

/// The form with its words made into a directory, a name and a branch, or why it cannot be.
#[derive(Debug, PartialEq)]
pub struct Plan {
    pub dir: PathBuf,
    pub name: Option<String>,
    pub worktree: Option<String>,
}

fn filled(field: &Option<String>) -> Option<String> {
    field
        .as_deref()
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(str::to_string)
}

/// Reads the form without touching the disk: `~` and a relative directory are under `home` (a page
/// has no current directory); an empty name or branch is none.
pub fn plan(form: &Form, home: &str) -> Result<Plan, String> {
    let dir = form.dir.trim();
    if dir.len() > MAX_DIR {
        return Err(format!(
            "the directory is too long ({} bytes, at most {MAX_DIR})",
            dir.len()
        ));
    }
    if dir.chars().any(char::is_control) {
        return Err("the directory holds control characters".to_string());
    }
    let dir = match dir {
        "" | "~" => PathBuf::from(home),
        d => match d.strip_prefix("~/") {
            Some(rest) => Path::new(home).join(rest),
            None => Path::new(home).join(d),
        },
    };
    let name = filled(&form.name);
    if let Some(n) = &name {
        pokeshell_core::safe_text::check_name(n)?;
    }
    let worktree = filled(&form.worktree);
    if let Some(b) = &worktree
        && (b.len() > MAX_BRANCH || b.chars().any(char::is_control))
    {
        return Err(format!(
            "a branch name is at most {MAX_BRANCH} bytes with no control characters"
        ));
    }
    Ok(Plan { dir, name, worktree })
}

/// Checks the directory and makes (or finds) the worktree: the session to ask the server for.
/// Blocking (git runs): call it off the page's task.
pub fn prepare(plan: Plan) -> Result<Target, String> {
    let Plan {
        mut dir,
        mut name,
        worktree,
    } = plan;
    match std::fs::metadata(&dir) {
        Ok(m) if m.is_dir() => {}
        Ok(_) => return Err(format!("{} is not a directory", dir.display())),
        Err(e) => return Err(format!("cannot use the directory {}: {e}", dir.display())),
    }
    let mut base = None;
    if let Some(branch) = &worktree {
        // The name is checked before git makes anything: a refused one leaves nothing behind.
        let would = name
            .clone()
            .unwrap_or_else(|| crate::git::worktree::session_name(branch));
        pokeshell_core::safe_text::check_name(&would)?;
        let ensured = crate::git::worktree::ensure(&dir, branch)?;
        // Without it, the session records the commit checked out as it starts: the same for a
        // worktree just made.
        base = crate::git::changes::base::of_worktree(&ensured.path, ensured.created)
            .ok()
            .flatten();
        dir = ensured.path;
        name = name.or_else(|| Some(crate::git::worktree::session_name(branch)));
    }
    Ok(Target::New {
        name,
        dir: dir.to_string_lossy().into_owned(),
        args: Vec::new(),
        base,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn form(dir: &str, name: &str, worktree: &str) -> Form {
        Form {
            dir: dir.into(),
            name: Some(name.into()),
            worktree: Some(worktree.into()),
        }
    }

    #[test]
    fn directories_are_under_home_and_empty_fields_are_none() {
        let p = plan(&form(" ~/src ", " ", ""), "/h").unwrap();
        assert_eq!(
            p,
            Plan {
                dir: "/h/src".into(),
                name: None,
                worktree: None
            }
        );
        assert_eq!(plan(&form("", "", ""), "/h").unwrap().dir, PathBuf::from("/h"));
        assert_eq!(
            plan(&form("src/app", "", ""), "/h").unwrap().dir,
            PathBuf::from("/h/src/app")
        );
        assert_eq!(
            plan(&form("/srv/x", "api", "feat"), "/h")
                .unwrap()
                .name
                .as_deref(),
            Some("api")
        );
    }

    #[test]
    fn bad_fields_say_what_is_wrong() {
        assert!(
            plan(&form("a\u{7}b", "", ""), "/h")
                .unwrap_err()
                .contains("control")
        );
        assert!(
            plan(&form(&"x".repeat(5000), "", ""), "/h")
                .unwrap_err()
                .contains("too long")
        );
        assert!(
            plan(&form("", "x\u{1b}y", ""), "/h")
                .unwrap_err()
                .contains("control characters")
        );
        assert!(
            plan(&form("", &"n".repeat(200), ""), "/h")
                .unwrap_err()
                .contains("at most")
        );
        assert!(
            plan(&form("", "", &"b".repeat(300)), "/h")
                .unwrap_err()
                .contains("branch")
        );
    }

    #[test]
    fn a_missing_or_plain_file_directory_is_refused_and_a_real_one_is_asked_for() {
        let t = tempfile::tempdir().unwrap();
        let missing = t.path().join("nope");
        let err = prepare(Plan {
            dir: missing.clone(),
            name: None,
            worktree: None,
        })
        .unwrap_err();
        assert!(
            err.contains("cannot use the directory") && err.contains("nope"),
            "{err}"
        );
        let file = t.path().join("f");
        std::fs::write(&file, "").unwrap();
        let err = prepare(Plan {
            dir: file,
            name: None,
            worktree: None,
        })
        .unwrap_err();
        assert!(err.contains("is not a directory"), "{err}");
        let ok = prepare(Plan {
            dir: t.path().to_path_buf(),
            name: Some("x".into()),
            worktree: None,
        })
        .unwrap();
        assert_eq!(
            ok,
            Target::New {
                name: Some("x".into()),
                dir: t.path().to_string_lossy().into_owned(),
                args: vec![],
                base: None,
            }
        );
    }

    #[test]
    fn a_worktree_outside_a_repository_is_a_clear_error() {
        let t = tempfile::tempdir().unwrap();
        let err = prepare(Plan {
            dir: t.path().to_path_buf(),
            name: None,
            worktree: Some("feat".into()),
        })
        .unwrap_err();
        assert!(err.contains("not in a git repository"), "{err}");
    }
}
