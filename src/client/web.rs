//! `pokeshell web`: asks the server (started if none runs) to serve the web view and prints the
//! one-time login link, also as a QR code for a phone.

use std::io::Write;

use pokeshell_core::wire::{Down, Up};

/// Runs the command; returns the exit code.
pub fn run(listen: Option<String>) -> i32 {
    match ask(listen) {
        Ok((url, login, exposed)) => {
            print!(
                "{}",
                announce(
                    &url,
                    &login,
                    exposed,
                    std::io::IsTerminal::is_terminal(&std::io::stdout())
                )
            );
            let _ = std::io::stdout().flush();
            0
        }
        Err(e) => {
            eprintln!("pokeshell: {e}");
            1
        }
    }
}

/// `pokeshell web --logout-all`: ends every login, every one-tap link and every Web Push
/// subscription; never starts a server (logins and links end with it).
pub fn logout_all() -> i32 {
    let limit = crate::client::deadline::ANSWER_LIMIT;
    match crate::client::ask(&Up::WebLogoutAll, false, "`web --logout-all`", limit) {
        Ok(Down::Done { message }) => {
            println!("{}", pokeshell_core::safe_text::escape(&message));
            0
        }
        Ok(Down::Error { message }) => {
            eprintln!("pokeshell: {}", pokeshell_core::safe_text::escape(&message));
            1
        }
        Ok(other) => {
            eprintln!("pokeshell: unexpected answer {other:?}");
            1
        }
        Err(_) if crate::client::connect::connect().is_err() => {
            // No login outlives the server, nor a one-tap link; push subscriptions are on disk.
            let forgot = crate::web::push::Store::here().and_then(|s| s.remove_all());
            match forgot {
                Ok(n) => {
                    let subs = if n == 1 {
                        "1 device's Web Push subscription".to_string()
                    } else {
                        format!("{n} devices' Web Push subscriptions")
                    };
                    println!(
                        "no pokeshell server runs: no browser is logged in (logins end with the server); forgot {subs}"
                    );
                    0
                }
                Err(e) => {
                    eprintln!("pokeshell: {}", pokeshell_core::safe_text::escape(&e));
                    1
                }
            }
        }
        Err(e) => {
            eprintln!("pokeshell: {e}");
            1
        }
    }
}

fn ask(listen: Option<String>) -> Result<(String, String, bool), String> {
    // Starting the listener may wait on the server's start: the deadline of a new session.
    let limit = crate::client::deadline::OPEN_LIMIT;
    match crate::client::ask(&Up::Web { listen }, true, "the web view", limit)? {
        Down::WebLogin { url, login, exposed } => Ok((url, login, exposed)),
        Down::Error { message } => Err(message),
        other => Err(format!("unexpected answer {other:?}")),
    }
}

/// What the user reads: the address, the login link, its QR code (on a terminal), a warning when
/// the web view is reachable beyond this machine.
pub fn announce(url: &str, login: &str, exposed: bool, qr: bool) -> String {
    let link = format!("{url}login#token={login}");
    let mut out = format!(
        "pokeshell's web view runs at {url}\n\
         Open this link to log in (it works once, within 15 minutes):\n\n  {link}\n\n"
    );
    if qr && let Some(code) = crate::web::qr::render(&link) {
        out.push_str(&code);
        out.push('\n');
    }
    if exposed {
        out.push_str(
            "WARNING: the web view listens beyond this machine. Whoever reaches it and logs in can make \
             your agents run commands.",
        );
        // Over the built-in TLS (or a public https address in front) the traffic is encrypted.
        out.push_str(if url.starts_with("https://") {
            "\n"
        } else {
            " Traffic is not encrypted: prefer an SSH tunnel, a private network or HTTPS (docs/web.md).\n"
        });
    }
    out.push_str("`pokeshell web` again gives a new login link.\n");
    out
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_announcement_has_the_link_and_warns_when_exposed() {
        let text = super::announce("http://127.0.0.1:7878/", "abc", false, false);
        assert!(text.contains("http://127.0.0.1:7878/login#token=abc"));
        assert!(!text.contains("WARNING"));
        let text = super::announce("http://0.0.0.0:7878/", "abc", true, true);
        assert!(text.contains("WARNING") && text.contains("run commands"));
        assert!(text.lines().count() > 15, "with the QR code");
        assert!(text.contains("not encrypted"));
        let text = super::announce("https://box.tailnet.ts.net/", "abc", true, false);
        assert!(text.contains("https://box.tailnet.ts.net/login#token=abc"));
        assert!(text.contains("WARNING") && !text.contains("not encrypted"));
    }
}
