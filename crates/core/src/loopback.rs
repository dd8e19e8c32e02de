//! Which hosts are this machine. Plain http is acceptable only to them: an ntfy server whose token
//! would otherwise cross the network in the clear (`config::warning`), a push service of one's own
//! (`web::push` in the binary). One rule for both, so the two cannot drift apart.

use core::net::IpAddr;

/// Whether `host` (a URL's host: a name, an IPv4 address, or an IPv6 address with or without its
/// brackets) names this machine: `localhost`, 127.0.0.0/8, `::1`, or 127.0.0.0/8 written as an
/// IPv4-mapped IPv6 address, which reaches the same loopback interface.
pub fn is_this_machine(host: &str) -> bool {
    let bare = host
        .strip_prefix('[')
        .and_then(|h| h.strip_suffix(']'))
        .unwrap_or(host);
    bare.eq_ignore_ascii_case("localhost")
        || bare.parse::<IpAddr>().is_ok_and(|ip| match ip {
            IpAddr::V4(v4) => v4.is_loopback(),
            IpAddr::V6(v6) => v6.is_loopback() || v6.to_ipv4_mapped().is_some_and(|v4| v4.is_loopback()),
        })
}

#[cfg(test)]
mod tests {
    use super::is_this_machine;

    #[test]
    fn loopback_names_and_addresses_are_this_machine_and_nothing_else_is() {
        for ours in [
            "localhost",
            "LocalHost",
            "127.0.0.1",
            "127.9.9.9",
            "::1",
            "[::1]",
            "::ffff:127.0.0.1",
            "[::ffff:127.0.0.1]",
        ] {
            assert!(is_this_machine(ours), "{ours}");
        }
        for theirs in [
            "",
            "localhost.example",
            "127.0.0.1.example",
            "10.0.0.2",
            "0.0.0.0",
            "::",
            "[2001:db8::1]",
            "::ffff:10.0.0.2",
            "[::1",
        ] {
            assert!(!is_this_machine(theirs), "{theirs}");
        }
    }
}
