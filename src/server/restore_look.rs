//! What is left on disk of a saved session, looked at before the core plans its restore (the core
//! does no I/O).

use pokeshell_core::server::restore_plan::Found;
use pokeshell_core::server::saved_session::SavedSession;

/// Looks at `saved`'s directory and session file.
pub fn look(saved: &SavedSession) -> Found {
    let dir = match std::fs::metadata(&saved.spec.dir) {
        Ok(m) if m.is_dir() => Ok(()),
        Ok(_) => Err("it is not a directory".to_string()),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Err("it is gone".to_string()),
        Err(e) => Err(e.to_string()),
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
}
