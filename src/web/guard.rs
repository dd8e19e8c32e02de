//! The checks every request passes before anything else: its `Host` must name this server (no DNS
//! rebinding: a foreign name pointed at 127.0.0.1 is refused), and its `Origin`, when it has one
//! (always on a WebSocket upgrade), must be this same server (no cross-site WebSocket hijacking).

/// Whether `host` (the `Host` header) names this server listening on `port`: `localhost`, or an IP
/// address (loopback, or the one a named listen address reaches), with the port. Names other than
/// `localhost` are refused: a DNS name can be pointed at this machine by anyone.
pub fn host_ok(host: &str, port: u16) -> bool {
    let Some((name, p)) = host.rsplit_once(':') else {
        return false;
    };
    if p.parse::<u16>() != Ok(port) {
        return false;
    }
    let bare = name
        .strip_prefix('[')
        .and_then(|n| n.strip_suffix(']'))
        .unwrap_or(name);
    name.eq_ignore_ascii_case("localhost") || bare.parse::<std::net::IpAddr>().is_ok()
}

/// Whether `origin` (the `Origin` header) is this server's own page, reached as `host`.
pub fn origin_ok(origin: &str, host: &str) -> bool {
    origin
        .strip_prefix("http://")
        .is_some_and(|rest| rest.eq_ignore_ascii_case(host))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hosts_by_address_or_localhost_with_our_port() {
        assert!(host_ok("127.0.0.1:7878", 7878));
        assert!(host_ok("localhost:7878", 7878));
        assert!(host_ok("[::1]:7878", 7878));
        assert!(host_ok("100.64.1.2:7878", 7878));
        assert!(!host_ok("127.0.0.1:7879", 7878), "another port");
        assert!(
            !host_ok("evil.example:7878", 7878),
            "a name anyone can point here"
        );
        assert!(!host_ok("127.0.0.1", 7878));
        assert!(!host_ok("", 7878));
    }

    #[test]
    fn origins_must_be_the_page_itself() {
        assert!(origin_ok("http://127.0.0.1:7878", "127.0.0.1:7878"));
        assert!(!origin_ok("http://evil.example", "127.0.0.1:7878"));
        assert!(!origin_ok("https://127.0.0.1:7878", "127.0.0.1:7878"));
        assert!(!origin_ok("null", "127.0.0.1:7878"));
    }
}
