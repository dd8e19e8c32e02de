//! How a browser reaches the web view, from the global settings read when it starts: the address
//! every link carries (`pokeshell.webPublicUrl`), the host names it answers to besides addresses
//! (`pokeshell.webHosts` and the public address's name), and its own TLS (`pokeshell.webTlsCert`,
//! `pokeshell.webTlsKey`). docs/web.md has the set-ups these serve.

use std::path::{Path, PathBuf};

use axum::http::Uri;
use pokeshell_core::config::KeyId;

use super::guard;

/// The web view's reach, checked.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Reach {
    /// `scheme://host[:port]/`, when set.
    pub public_url: Option<String>,
    /// Allowed host names (the public address's included).
    pub names: Vec<String>,
    /// The certificate and key files of the built-in TLS.
    pub tls: Option<(PathBuf, PathBuf)>,
}

/// A public address as links use it: http or https, a host, maybe a port, nothing after the `/`
/// (the page's paths start at the root).
pub fn parse_public_url(text: &str) -> Result<String, String> {
    let bad = |why: &str| {
        format!("pokeshell.webPublicUrl: {text:?} {why} (an address such as https://box.tailnet.ts.net/)")
    };
    let uri: Uri = text.parse().map_err(|_| bad("is not an address"))?;
    let scheme = uri
        .scheme_str()
        .filter(|s| *s == "http" || *s == "https")
        .ok_or_else(|| bad("does not start with https:// or http://"))?;
    let host = uri
        .host()
        .filter(|h| !h.is_empty())
        .ok_or_else(|| bad("names no host"))?;
    if !uri.path().trim_end_matches('/').is_empty() || uri.query().is_some() {
        return Err(bad(
            "has a path: the web view is served at the root of its address",
        ));
    }
    if uri.authority().is_some_and(|a| a.as_str().contains('@')) {
        return Err(bad("carries a user name"));
    }
    let port = uri.port_u16().map(|p| format!(":{p}")).unwrap_or_default();
    Ok(format!("{scheme}://{}{port}/", guard::normal_name(host)))
}

/// `~` and `~/…` as the home directory.
fn expand(path: &str, home: Option<&Path>) -> PathBuf {
    match (path.strip_prefix('~'), home) {
        (Some(rest), Some(home)) if rest.is_empty() || rest.starts_with('/') => {
            home.join(rest.trim_start_matches('/'))
        }
        _ => PathBuf::from(path),
    }
}

impl Reach {
    /// From the settings' values (`get` gives a key's text).
    pub fn from_values(get: impl Fn(KeyId) -> String, home: Option<&Path>) -> Result<Reach, String> {
        let public = get(KeyId::WebPublicUrl);
        let public_url = match public.trim() {
            "" => None,
            p => Some(parse_public_url(p)?),
        };
        let mut names = guard::parse_names(&get(KeyId::WebHosts))?;
        if let Some(url) = &public_url
            && let Ok(uri) = url.parse::<Uri>()
            && let Some(host) = uri.host()
            && host.parse::<std::net::IpAddr>().is_err()
            && !host.starts_with('[')
        {
            let host = guard::normal_name(host);
            if !names.contains(&host) {
                names.push(host);
            }
        }
        let (cert, key) = (get(KeyId::WebTlsCert), get(KeyId::WebTlsKey));
        let tls = match (cert.trim(), key.trim()) {
            ("", "") => None,
            (c, k) if !c.is_empty() && !k.is_empty() => Some((expand(c, home), expand(k, home))),
            _ => {
                return Err(
                    "pokeshell.webTlsCert and pokeshell.webTlsKey go together: set both files, or neither"
                        .to_string(),
                );
            }
        };
        Ok(Reach {
            public_url,
            names,
            tls,
        })
    }

    /// From the global settings as they are now.
    pub fn read() -> Result<Reach, String> {
        let cli = crate::cli::Cli::try_parse_from_argv(&[]).map_err(|e| e.to_string())?;
        let settings = crate::cli::launch::settings_here(&cli)?;
        Reach::from_values(|k| settings.get(k).edit_text(), std::env::home_dir().as_deref())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn values(pairs: &[(KeyId, &str)]) -> impl Fn(KeyId) -> String {
        let pairs: Vec<(KeyId, String)> = pairs.iter().map(|(k, v)| (*k, v.to_string())).collect();
        move |k| {
            pairs
                .iter()
                .find(|(id, _)| *id == k)
                .map(|(_, v)| v.clone())
                .unwrap_or_default()
        }
    }

    #[test]
    fn nothing_set_is_the_plain_web_view() {
        assert_eq!(Reach::from_values(values(&[]), None), Ok(Reach::default()));
    }

    #[test]
    fn the_public_address_is_checked_and_its_name_allowed() {
        let r = Reach::from_values(
            values(&[
                (KeyId::WebPublicUrl, "https://Box.Tailnet.ts.net"),
                (KeyId::WebHosts, "proxy.example.org"),
            ]),
            None,
        )
        .unwrap();
        assert_eq!(r.public_url.as_deref(), Some("https://box.tailnet.ts.net/"));
        assert_eq!(r.names, vec!["proxy.example.org", "box.tailnet.ts.net"]);
        assert_eq!(
            parse_public_url("http://100.64.0.9:7878/").as_deref(),
            Ok("http://100.64.0.9:7878/")
        );
        for bad in [
            "box.ts.net",
            "ftp://box/",
            "https:///",
            "https://box/pokeshell/",
            "https://u@box/",
        ] {
            assert!(parse_public_url(bad).is_err(), "{bad}");
        }
        let by_address =
            Reach::from_values(values(&[(KeyId::WebPublicUrl, "https://100.64.0.9:8443/")]), None).unwrap();
        assert!(by_address.names.is_empty(), "an address needs no allowing");
    }

    #[test]
    fn tls_needs_both_files_and_home_is_expanded() {
        let r = Reach::from_values(
            values(&[
                (KeyId::WebTlsCert, "~/certs/box.crt"),
                (KeyId::WebTlsKey, "/k/box.key"),
            ]),
            Some(Path::new("/home/me")),
        )
        .unwrap();
        assert_eq!(
            r.tls,
            Some((
                PathBuf::from("/home/me/certs/box.crt"),
                PathBuf::from("/k/box.key")
            ))
        );
        let half = Reach::from_values(values(&[(KeyId::WebTlsCert, "/c")]), None);
        assert!(half.unwrap_err().contains("go together"));
    }
}
