use super::*;

fn plain(port: u16) -> Allowed {
    Allowed {
        port,
        names: Vec::new(),
    }
}

fn named() -> Allowed {
    Allowed {
        port: 7878,
        names: vec!["box.tailnet.ts.net".into(), "pokeshell.example.org".into()],
    }
}

#[test]
fn hosts_by_address_or_localhost_with_our_port() {
    let a = plain(7878);
    assert!(a.host("127.0.0.1:7878"));
    assert!(a.host("localhost:7878"));
    assert!(a.host("[::1]:7878"));
    assert!(a.host("100.64.1.2:7878"));
    assert!(!a.host("127.0.0.1:7879"), "another port");
    assert!(!a.host("evil.example:7878"), "a name anyone can point here");
    assert!(!a.host("127.0.0.1"), "no port: not this server's");
    assert!(!a.host("[::1]"));
    assert!(!a.host(""));
    assert!(!a.host("127.0.0.1:x"));
}

#[test]
fn allowed_names_pass_with_any_port_or_none_and_all_others_are_refused() {
    let a = named();
    assert!(a.host("box.tailnet.ts.net"), "behind tailscale serve on 443");
    assert!(
        a.host("BOX.tailnet.ts.net.:443"),
        "case and the final dot do not matter"
    );
    assert!(a.host("pokeshell.example.org:8443"));
    assert!(a.host("127.0.0.1:7878"), "addresses still pass");
    assert!(!a.host("evil.example"), "a name not allowed");
    assert!(
        !a.host("tailnet.ts.net"),
        "a parent of an allowed name is another name"
    );
    assert!(!a.host("x.box.tailnet.ts.net"), "and so is a child");
    assert!(!a.host("box.tailnet.ts.net:99999"));
}

#[test]
fn origins_must_be_the_page_itself() {
    let a = plain(7878);
    assert!(a.origin("http://127.0.0.1:7878", "127.0.0.1:7878"));
    assert!(
        a.origin("https://127.0.0.1:7878", "127.0.0.1:7878"),
        "the built-in TLS's page"
    );
    assert!(!a.origin("http://evil.example", "127.0.0.1:7878"));
    assert!(
        !a.origin("http://localhost:7878", "127.0.0.1:7878"),
        "another origin"
    );
    assert!(!a.origin("null", "127.0.0.1:7878"));
    assert!(!a.origin("ftp://127.0.0.1:7878", "127.0.0.1:7878"));
    assert!(
        !a.origin("http://127.0.0.1:7878", "evil.example:7878"),
        "nor with a bad Host"
    );
}

#[test]
fn behind_a_proxy_the_origin_is_the_allowed_name_whatever_the_host_became() {
    let a = named();
    // A proxy that passes the name on, on the default port.
    assert!(a.origin("https://box.tailnet.ts.net", "box.tailnet.ts.net"));
    assert!(a.origin("https://box.tailnet.ts.net", "box.tailnet.ts.net:443"));
    // A proxy that sends the upstream's address as Host.
    assert!(a.origin("https://pokeshell.example.org", "127.0.0.1:7878"));
    assert!(!a.origin("https://evil.example", "box.tailnet.ts.net"));
    assert!(!a.origin("https://box.tailnet.ts.net.evil.example", "box.tailnet.ts.net"));
}

#[test]
fn the_names_setting_is_read_and_checked() {
    assert_eq!(
        parse_names(" Box.Tailnet.ts.net., proxy.example.org  box.tailnet.ts.net"),
        Ok(vec![
            "box.tailnet.ts.net".to_string(),
            "proxy.example.org".to_string()
        ])
    );
    assert_eq!(parse_names(""), Ok(vec![]));
    assert!(parse_names("box:443").unwrap_err().contains("without a port"));
    assert!(parse_names("10.0.0.1").is_err(), "addresses need no allowing");
    assert!(parse_names("a..b").is_err());
    assert!(parse_names("ex ample/").is_err());
}
