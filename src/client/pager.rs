//! Long output through a pager, as git does it: `$GIT_PAGER`, else `$PAGER`, else `less` (with
//! `LESS=FRX` when `LESS` is not set: quit when it fits on one screen, pass colours, leave the
//! screen as it was). An empty pager or `cat` writes straight out.

use std::io::Write;
use std::process::{Command, Stdio};

/// The pager's command line, from the environment as git reads it.
pub fn chosen(git_pager: Option<String>, pager: Option<String>) -> Option<String> {
    let line = git_pager.or(pager).unwrap_or_else(|| "less".to_string());
    let line = line.trim();
    (!line.is_empty() && line != "cat").then(|| line.to_string())
}

/// Writes `text` to standard output, through the pager when `page`. Returns when the pager ends
/// (the user quit it) or the text is written; a pager that cannot be started is passed over.
pub fn show(text: &str, page: bool) -> std::io::Result<()> {
    let pager = page
        .then(|| chosen(std::env::var("GIT_PAGER").ok(), std::env::var("PAGER").ok()))
        .flatten();
    if let Some(line) = pager {
        let mut cmd = Command::new("/bin/sh");
        cmd.args(["-c", &line]).stdin(Stdio::piped());
        if std::env::var_os("LESS").is_none() {
            cmd.env("LESS", "FRX");
        }
        if std::env::var_os("LV").is_none() {
            cmd.env("LV", "-c");
        }
        if let Ok(mut child) = cmd.spawn() {
            if let Some(mut stdin) = child.stdin.take() {
                // The user may quit the pager before reading it all: a closed pipe is no error.
                match stdin.write_all(text.as_bytes()) {
                    Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => return Err(e),
                    _ => {}
                }
            }
            child.wait()?;
            return Ok(());
        }
    }
    let mut out = std::io::stdout().lock();
    match out.write_all(text.as_bytes()).and_then(|()| out.flush()) {
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(()),
        other => other,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn git_pager_wins_then_pager_then_less_and_cat_means_none() {
        assert_eq!(
            chosen(Some("most".into()), Some("more".into())).as_deref(),
            Some("most")
        );
        assert_eq!(chosen(None, Some("more -s".into())).as_deref(), Some("more -s"));
        assert_eq!(chosen(None, None).as_deref(), Some("less"));
        assert_eq!(chosen(Some("cat".into()), Some("more".into())), None);
        assert_eq!(chosen(Some(String::new()), None), None);
    }
}
