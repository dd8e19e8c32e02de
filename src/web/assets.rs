//! The page's files, inside the binary: the page itself and the terminal widget (xterm.js, from its
//! package `@xterm/xterm` at the version `scripts/fetch-xterm.sh` pins, with its licence beside it
//! in assets/web/xterm/). Nothing is fetched from elsewhere when the page loads.

/// A file the page loads: its bytes and content type.
pub struct Asset {
    pub bytes: &'static [u8],
    pub content_type: &'static str,
}

const JS: &str = "text/javascript; charset=utf-8";
const CSS: &str = "text/css; charset=utf-8";

pub const INDEX: &str = include_str!("../../assets/web/index.html");
pub const LOGIN: &str = include_str!("../../assets/web/login.html");

/// The files at the root, served without a login: the service worker (its scope is the directory
/// it is served from, so the whole web view), the manifest and the icons a browser fetches on its
/// own (a manifest is fetched without cookies). Nothing in them is secret.
pub fn public(name: &str) -> Option<Asset> {
    let (bytes, content_type): (&'static [u8], &str) = match name {
        "sw.js" => (include_bytes!("../../assets/web/sw.js"), JS),
        "manifest.webmanifest" => (
            include_bytes!("../../assets/web/manifest.webmanifest"),
            "application/manifest+json",
        ),
        "icon-192.png" => (include_bytes!("../../assets/web/icon-192.png"), "image/png"),
        "icon-512.png" => (include_bytes!("../../assets/web/icon-512.png"), "image/png"),
        "icon.svg" => (include_bytes!("../../assets/web/icon.svg"), "image/svg+xml"),
        _ => return None,
    };
    Some(Asset { bytes, content_type })
}

/// The file at `/assets/<name>`, if there is one.
pub fn get(name: &str) -> Option<Asset> {
    let (bytes, content_type): (&'static [u8], &str) = match name {
        "app.js" => (include_bytes!("../../assets/web/app.js"), JS),
        "term.js" => (include_bytes!("../../assets/web/term.js"), JS),
        "list.js" => (include_bytes!("../../assets/web/list.js"), JS),
        "visible.js" => (include_bytes!("../../assets/web/visible.js"), JS),
        "guard.js" => (include_bytes!("../../assets/web/guard.js"), JS),
        "changes.js" => (include_bytes!("../../assets/web/changes.js"), JS),
        "changes.css" => (include_bytes!("../../assets/web/changes.css"), CSS),
        "login.js" => (include_bytes!("../../assets/web/login.js"), JS),
        "talk.js" => (include_bytes!("../../assets/web/talk.js"), JS),
        "push.js" => (include_bytes!("../../assets/web/push.js"), JS),
        "app.css" => (include_bytes!("../../assets/web/app.css"), CSS),
        "xterm.js" => (include_bytes!("../../assets/web/xterm/xterm.js"), JS),
        "xterm.css" => (include_bytes!("../../assets/web/xterm/xterm.css"), CSS),
        _ => return None,
    };
    Some(Asset { bytes, content_type })
}
