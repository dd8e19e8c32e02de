//! What is left on disk of a saved session, looked at before the core plans its restore (the core
//! does no I/O).

use std::path::Path;

use pokeshell_core::server::restore_plan::Found;
use pokeshell_core::server::saved_session::SavedSession;

use crate::term::pty::why_unusable;

/// Looks at `saved`'s directory and session file.
pub fn look(saved: &SavedSession) -> Found {
    let dir = match why_unusable(
        Path::new(&saved.spec.dir),
        saved.spec.real_dir.as_deref().map(Path::new),
    ) {
        None => Ok(()),
        Some(why) => Err(format!("it {why}")),
    };
    let session_file = saved
        .session_file
        .as_deref()
        .map(|f| std::fs::metadata(f).is_ok_and(|m| m.is_file()));
    Found { dir, session_file }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pokeshell_core::spec::SessionSpec;

    fn saved(file: &str) -> SavedSession {
        SavedSession {
            spec: SessionSpec::default(),
            session_file: Some(file.to_string()),
            mid_run: true,
        }
    }

    #[test]
    fn look_reads_the_file_system() {
        let tmp = tempfile::tempdir().unwrap();
        let file = tmp.path().join("s.jsonl");
        std::fs::write(&file, "").unwrap();
        let mut s = saved(&file.to_string_lossy());
        s.spec.dir = tmp.path().to_string_lossy().into_owned();
        let there = Found {
            dir: Ok(()),
            session_file: Some(true),
        };
        assert_eq!(look(&s), there);
        s.spec.dir = tmp.path().join("gone").to_string_lossy().into_owned();
        s.session_file = Some(tmp.path().join("none").to_string_lossy().into_owned());
        let gone = Found {
            dir: Err("it is gone".into()),
            session_file: Some(false),
        };
        assert_eq!(look(&s), gone);
    }

    /// Issue 34, low 10: a link pointed at another tree while no server ran is not used.
    #[test]
    fn a_directory_that_now_leads_elsewhere_is_not_used() {
        let trees = crate::term::pty::LinkedTrees::in_temp_dir();
        let mut s = saved("/none");
        s.spec.dir = trees.link.to_string_lossy().into_owned();
        s.spec.real_dir = crate::term::pty::resolve(&trees.link);
        assert_eq!(look(&s).dir, Ok(()), "it still leads to a");
        trees.repoint();
        let why = look(&s).dir.expect_err("it leads to b now");
        let (a, b) = (
            trees.first.canonicalize().unwrap(),
            trees.second.canonicalize().unwrap(),
        );
        assert!(
            why.contains(&format!("now leads to {}", b.display())) && why.contains(&a.display().to_string()),
            "{why}"
        );
        // A list from before the directory was recorded is taken as it is.
        s.spec.real_dir = None;
        assert_eq!(look(&s).dir, Ok(()));
    }
}
