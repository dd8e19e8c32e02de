//! How pokeshell calls `ssh`: the command (the user's `ssh`, or `$POKESHELL_SSH`), the options every
//! call gets, and the quoting of a remote command line.

use std::process::Command;
use std::time::Duration;

/// The environment variable that replaces `ssh`: words separated by spaces, e.g.
/// `ssh -F /path/to/config` (no quoting: a word cannot hold a space).
pub const SSH_ENV: &str = "POKESHELL_SSH";

/// The ssh program and its first arguments.
pub fn ssh_words() -> Vec<String> {
    let words: Vec<String> = std::env::var(SSH_ENV)
        .unwrap_or_default()
        .split_whitespace()
        .map(str::to_string)
        .collect();
    if words.is_empty() {
        vec!["ssh".to_string()]
    } else {
        words
    }
}

/// `ssh` for a question with no one to answer a prompt: BatchMode (no password or host-key
/// question), no terminal, and a connect timeout a second past `timeout`, the caller's own deadline,
/// at which it ends ssh. So a machine that does not answer is told one way whatever stage it hangs
/// in: with both at the same second, ssh's "timed out during banner exchange" and the deadline's
/// message raced, and either could be shown. ssh's timeout stays as a backstop.
pub fn batch(dest: &str, remote: &str, timeout: Duration) -> Command {
    let words = ssh_words();
    let mut cmd = Command::new(&words[0]);
    cmd.args(&words[1..]).args([
        "-T",
        "-o",
        "BatchMode=yes",
        "-o",
        &format!("ConnectTimeout={}", timeout.as_secs() + 1),
        "--",
        dest,
        remote,
    ]);
    cmd
}

/// `ssh -t` for a session the user looks at.
pub fn interactive(dest: &str, remote: &str, tty: bool) -> Command {
    let words = ssh_words();
    let mut cmd = Command::new(&words[0]);
    cmd.args(&words[1..])
        .arg(if tty { "-t" } else { "-T" })
        .args(["--", dest, remote]);
    cmd
}

/// One word for the remote shell: as is when it is plainly safe, else in single quotes.
pub fn quote(word: &str) -> String {
    let plain = !word.is_empty()
        && word
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_./=:@%+,".contains(c));
    if plain {
        word.to_string()
    } else {
        format!("'{}'", word.replace('\'', r"'\''"))
    }
}

/// A remote command line from its words.
pub fn command_line<S: AsRef<str>>(words: &[S]) -> String {
    words
        .iter()
        .map(|w| quote(w.as_ref()))
        .collect::<Vec<_>>()
        .join(" ")
}

/// `DEST:NAME` read as a session on another machine. A number before the colon is this machine's
/// `number:name` label, as `ls` prints it; an empty part on either side is no destination.
pub fn split_target(target: &str) -> Option<(&str, &str)> {
    let (dest, name) = target.split_once(':')?;
    if dest.is_empty() || name.is_empty() || dest.parse::<u32>().is_ok() {
        return None;
    }
    Some((dest, name))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quoting_survives_the_remote_shell() {
        assert_eq!(quote("api"), "api");
        assert_eq!(quote("a b"), "'a b'");
        assert_eq!(quote("it's"), r"'it'\''s'");
        assert_eq!(quote(""), "''");
        assert_eq!(quote("$(rm -rf ~)"), "'$(rm -rf ~)'");
        assert_eq!(
            command_line(&["pokeshell", "attach", "x;y"]),
            "pokeshell attach 'x;y'"
        );
        // What sh makes of it is the words again.
        let line = command_line(&["printf", "%s|", "a b", "it's", "$HOME", "*"]);
        let out = std::process::Command::new("sh")
            .args(["-c", &line])
            .output()
            .unwrap();
        assert_eq!(String::from_utf8_lossy(&out.stdout), "a b|it's|$HOME|*|");
    }

    #[test]
    fn a_destination_is_told_from_a_local_label() {
        assert_eq!(split_target("gpu:api"), Some(("gpu", "api")));
        assert_eq!(split_target("me@gpu:2:api"), Some(("me@gpu", "2:api")));
        assert_eq!(split_target("2:api"), None);
        assert_eq!(split_target("api"), None);
        assert_eq!(split_target(":api"), None);
        assert_eq!(split_target("gpu:"), None);
    }
}
