//! Asks other machines for their sessions: `ssh DEST pokeshell ls --json`, all of them at once, each
//! with its own deadline and a bound on what it may answer.

use std::time::{Duration, Instant};

use super::schema::{self, LsJson};
use super::ssh;
use crate::term::bounded_command::{self, Ran};

/// The most a machine's listing may be; a longer answer is not a listing.
pub const ANSWER_LIMIT: usize = 4 << 20;

/// The remote command line.
pub const REMOTE_LS: &str = "pokeshell ls --json";

/// One machine's answer.
#[derive(Debug)]
pub struct Answer {
    pub dest: String,
    pub result: Result<LsJson, String>,
    pub took: Duration,
}

/// Asks one machine.
pub fn ask(dest: &str, timeout: Duration) -> Answer {
    let started = Instant::now();
    let result = match bounded_command::run(ssh::batch(dest, REMOTE_LS, timeout), timeout, ANSWER_LIMIT) {
        Ok(ran) => judge(&ran, timeout),
        Err(e) => Err(format!("cannot run {}: {e}", ssh::ssh_words()[0])),
    };
    Answer {
        dest: dest.to_string(),
        result,
        took: started.elapsed(),
    }
}

/// Asks every machine in parallel; the answers come in the order of `dests`.
pub fn ask_all(dests: &[String], timeout: Duration) -> Vec<Answer> {
    let handles: Vec<_> = dests
        .iter()
        .map(|d| {
            let d = d.clone();
            std::thread::spawn(move || ask(&d, timeout))
        })
        .collect();
    handles
        .into_iter()
        .zip(dests)
        .map(|(h, d)| {
            h.join().unwrap_or_else(|_| Answer {
                dest: d.clone(),
                result: Err("the question failed inside pokeshell".to_string()),
                took: Duration::ZERO,
            })
        })
        .collect()
}

/// What an ssh run says about the machine.
pub fn judge(ran: &Ran, timeout: Duration) -> Result<LsJson, String> {
    if ran.timed_out {
        return Err(format!("no answer within {} s", timeout.as_secs_f32()));
    }
    if ran.overflowed {
        return Err(format!(
            "it answered more than {} MiB, which is no listing",
            ANSWER_LIMIT >> 20
        ));
    }
    let code = ran.status.and_then(|s| s.code());
    let said = ran.stderr_line();
    match code {
        Some(0) => schema::read(&ran.stdout).map_err(|e| e.to_string()),
        Some(255) => Err(format!("ssh failed: {}", or_unknown(&said))),
        Some(127) => Err(
            "pokeshell is not installed there (or not on the PATH of a non-interactive ssh session)"
                .to_string(),
        ),
        _ if said.contains("--json") => Err(
            "its pokeshell does not know `ls --json`: an older version; install the same version on both"
                .to_string(),
        ),
        Some(c) => Err(format!(
            "`{REMOTE_LS}` failed there with code {c}: {}",
            or_unknown(&said)
        )),
        None => Err(format!("ssh was killed by a signal: {}", or_unknown(&said))),
    }
}

fn or_unknown(s: &str) -> &str {
    if s.is_empty() { "it said nothing" } else { s }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::process::Command;

    fn ran(script: &str) -> Ran {
        let mut c = Command::new("sh");
        c.args(["-c", script]);
        bounded_command::run(c, Duration::from_secs(10), 1000).unwrap()
    }

    const T: Duration = Duration::from_secs(5);

    #[test]
    fn each_failure_gets_its_own_words() {
        let refused = judge(
            &ran("echo 'ssh: connect to host x port 22: Connection refused' >&2; exit 255"),
            T,
        );
        assert_eq!(
            refused.unwrap_err(),
            "ssh failed: ssh: connect to host x port 22: Connection refused"
        );
        let missing = judge(&ran("echo 'sh: pokeshell: not found' >&2; exit 127"), T).unwrap_err();
        assert!(missing.contains("not installed"), "{missing}");
        let old = judge(
            &ran("echo \"error: unexpected argument '--json' found\" >&2; exit 2"),
            T,
        );
        assert!(old.unwrap_err().contains("older version"));
        let garbage = judge(&ran("echo Welcome to my shell"), T).unwrap_err();
        assert!(garbage.contains("answered something else"), "{garbage}");
        let flood = judge(&ran("yes"), T).unwrap_err();
        assert!(flood.contains("more than"), "{flood}");
        let good = judge(&ran(r#"echo '{"schema":1,"sessions":[]}'"#), T).unwrap();
        assert!(good.sessions.is_empty());
    }
}
