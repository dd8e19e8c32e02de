//! The checks every request passes before anything else, in one place: its `Host` must name this
//! server (no DNS rebinding: a foreign name pointed at this machine is refused), and its `Origin`,
//! when it has one (always on a WebSocket upgrade), must be this same server's page (no cross-site
//! WebSocket hijacking). Addresses and `localhost` are this server with its own port; the names the
//! user allowed (`pokeshell.webHosts`, the host of `pokeshell.webPublicUrl`) with any port or none,
//! since a reverse proxy or `tailscale serve` answers for them on 443 and passes them on.

use std::net::IpAddr;

/// Who this server is, as the requests may name it.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Allowed {
    /// The port the web view listens on.
    pub port: u16,
    /// Host names allowed besides addresses and `localhost`: lowercase, no trailing dot.
    pub names: Vec<String>,
}

/// A host name as it is compared: lowercase, without the dot that ends a fully qualified name.
pub fn normal_name(name: &str) -> String {
    name.trim_end_matches('.').to_ascii_lowercase()
}

/// `name` (of `Host` or an origin) and its port, if it names one; an IPv6 address keeps no brackets.
fn split_port(authority: &str) -> Option<(&str, Option<&str>)> {
    if let Some(rest) = authority.strip_prefix('[') {
        let (addr, after) = rest.split_once(']')?;
        return match after {
            "" => Some((addr, None)),
            p => Some((addr, Some(p.strip_prefix(':')?))),
        };
    }
    match authority.rsplit_once(':') {
        Some((name, port)) => Some((name, Some(port))),
        None => Some((authority, None)),
    }
}

impl Allowed {
    /// Whether `name` is one the user allowed.
    fn named(&self, name: &str) -> bool {
        let name = normal_name(name);
        !name.is_empty() && self.names.contains(&name)
    }

    /// Whether `host` (the `Host` header) names this server.
    pub fn host(&self, host: &str) -> bool {
        let Some((name, port)) = split_port(host) else {
            return false;
        };
        if port.is_some_and(|p| p.parse::<u16>().is_err()) {
            return false;
        }
        if self.named(name) {
            return true;
        }
        let ours = port.and_then(|p| p.parse::<u16>().ok()) == Some(self.port);
        ours && (name.eq_ignore_ascii_case("localhost") || name.parse::<IpAddr>().is_ok())
    }

    /// Whether `origin` (the `Origin` header) is this server's own page, reached as `host`: the
    /// same scheme-less authority as the request's `Host` (default ports aside), or an allowed name.
    pub fn origin(&self, origin: &str, host: &str) -> bool {
        let (scheme, authority) = match origin.split_once("://") {
            Some((s, a)) if s.eq_ignore_ascii_case("http") || s.eq_ignore_ascii_case("https") => (s, a),
            _ => return false,
        };
        let default = if scheme.eq_ignore_ascii_case("https") {
            "443"
        } else {
            "80"
        };
        let strip = |a: &str| -> Option<(String, Option<String>)> {
            let (name, port) = split_port(a)?;
            let port = port.filter(|p| *p != default).map(str::to_string);
            Some((normal_name(name), port))
        };
        let Some(from) = strip(authority) else {
            return false;
        };
        if self.named(&from.0) {
            return true;
        }
        self.host(host) && strip(host) == Some(from)
    }
}

/// The names of `pokeshell.webHosts`: separated by commas or spaces, each a DNS name (letters,
/// digits, `-`, `.`; no port, no address: addresses are always allowed with the web view's port).
pub fn parse_names(text: &str) -> Result<Vec<String>, String> {
    let mut names = Vec::new();
    for word in text
        .split(|c: char| c == ',' || c.is_whitespace())
        .filter(|w| !w.is_empty())
    {
        let name = normal_name(word);
        let good = !name.is_empty()
            && name.len() <= 253
            && name.split('.').all(|l| {
                !l.is_empty() && l.len() <= 63 && l.chars().all(|c| c.is_ascii_alphanumeric() || c == '-')
            });
        if !good || name.parse::<IpAddr>().is_ok() {
            return Err(format!(
                "pokeshell.webHosts: {word:?} is not a host name (a name such as box.tailnet.ts.net, without a port)"
            ));
        }
        if !names.contains(&name) {
            names.push(name);
        }
    }
    Ok(names)
}

#[cfg(test)]
mod tests;
