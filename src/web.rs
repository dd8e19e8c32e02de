//! The web view: pokeshell's sessions in a browser (docs/web.md). It runs inside the server's
//! process, started by `pokeshell web`, and serves HTTP and WebSocket with axum. Each page's
//! WebSocket becomes a client of the server's own socket speaking the wire protocol, so a browser is
//! a client like a terminal: the same frames, the same keyboard, counted in `pokeshell ls`.

mod act;
mod assets;
pub mod auth;
mod changes;
pub mod guard;
pub mod links;
mod listener;
mod listing;
pub mod new_session;
pub mod page_msg;
mod page_socket;
pub mod push;
pub mod qr;
pub mod reach;
mod routes;
mod tls;
mod upstream;

use std::net::SocketAddr;
use std::sync::{Arc, Mutex};

use auth::Logins;
use reach::Reach;

pub use pokeshell_core::config::schema::DEFAULT_LISTEN;

/// A one-time login for the web view.
#[derive(Debug, Clone)]
pub struct Login {
    pub url: String,
    pub token: String,
    pub exposed: bool,
}

struct Running {
    addr: SocketAddr,
    logins: Arc<Logins>,
    /// Where links point and whether the web view speaks TLS itself.
    reach: Reach,
}

/// One web view per server process.
static RUNNING: Mutex<Option<Running>> = Mutex::new(None);

/// Starts the web view on `listen` (or [`DEFAULT_LISTEN`]) when it does not run yet, and gives a
/// new one-time login token. Must run inside the server's tokio runtime.
pub fn serve_here(listen: Option<&str>) -> Result<Login, String> {
    let mut running = RUNNING
        .lock()
        .map_err(|_| "the web view's state is broken".to_string())?;
    let wanted = listen
        .map(|l| {
            l.parse::<SocketAddr>()
                .map_err(|e| format!("{l:?} is not an address and port such as 127.0.0.1:7878 ({e})"))
        })
        .transpose()?;
    if let (Some(r), Some(w)) = (running.as_ref(), wanted)
        && r.addr != w
    {
        return Err(format!(
            "the web view already listens on {}; it listens on one address until the server ends",
            r.addr
        ));
    }
    if running.is_none() {
        let addr = match wanted {
            Some(a) => a,
            None => DEFAULT_LISTEN
                .parse()
                .map_err(|e| format!("bad default address: {e}"))?,
        };
        *running = Some(start(addr, Reach::read()?)?);
    }
    let r = running.as_ref().ok_or("the web view did not start")?;
    let token = auth::random_token().map_err(|e| format!("cannot make a login token: {e}"))?;
    r.logins.add_login(token.clone());
    Ok(Login {
        url: url(r.addr, &r.reach),
        token,
        exposed: !r.addr.ip().is_loopback(),
    })
}

/// Where the web view is reached, for the links sent out, while it runs: the same as
/// [`link_base`] (the public address when one is set).
pub fn base_url() -> Option<String> {
    link_base()
}

/// What "log out everywhere" ended.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Ended {
    /// Browsers' logins; `None` when the web view does not run (then no browser is logged in).
    pub logins: Option<usize>,
    /// One-tap links from pushes, not used yet.
    pub links: usize,
    /// Browsers' Web Push subscriptions.
    pub subscriptions: usize,
}

/// Ends everything a browser or a phone holds: every login to the web view (every browser's, and
/// every login link not used yet; every open page's socket closes), every one-tap link a push
/// carried, and every Web Push subscription (a lost phone's notifications are news to nobody else,
/// and their buttons act). The pushes' subscriptions are kept on disk, so they end even when the
/// web view does not run.
pub fn logout_all() -> Ended {
    let logins = RUNNING
        .lock()
        .ok()
        .and_then(|running| running.as_ref().map(|r| r.logins.log_out_all()));
    let links = links::LINKS.lock().map(|mut l| l.forget_all()).unwrap_or(0);
    let subscriptions = match push::Store::here().and_then(|s| s.remove_all()) {
        Ok(n) => n,
        Err(e) => {
            eprintln!("pokeshell server: web push: {e}");
            0
        }
    };
    Ended {
        logins,
        links,
        subscriptions,
    }
}

impl Ended {
    /// What ended, in words.
    pub fn said(&self) -> String {
        let plural = |n: usize, one: &str, many: &str| {
            if n == 1 {
                format!("1 {one}")
            } else {
                format!("{n} {many}")
            }
        };
        let logins = match self.logins {
            Some(n) => format!(
                "ended {} to the web view (its pages are logged out)",
                plural(n, "login", "logins")
            ),
            None => "the web view does not run: no browser is logged in".to_string(),
        };
        format!(
            "{logins}; forgot {} and {}",
            plural(
                self.links,
                "one-tap link from a push",
                "one-tap links from pushes"
            ),
            plural(
                self.subscriptions,
                "device's Web Push subscription",
                "devices' Web Push subscriptions"
            ),
        )
    }
}

/// Where every link to the web view starts (`https://box.tailnet.ts.net/`), while it runs: the
/// public address when one is set, else the address it listens on.
pub fn link_base() -> Option<String> {
    let running = RUNNING.lock().ok()?;
    running.as_ref().map(|r| url(r.addr, &r.reach))
}

/// The address a browser uses: the public one when set; else the listening one, an unspecified
/// one (all interfaces) shown as loopback.
fn url(addr: SocketAddr, reach: &Reach) -> String {
    if let Some(public) = &reach.public_url {
        return public.clone();
    }
    let scheme = if reach.tls.is_some() { "https" } else { "http" };
    if addr.ip().is_unspecified() {
        format!("{scheme}://127.0.0.1:{}/", addr.port())
    } else {
        format!("{scheme}://{addr}/")
    }
}

fn start(addr: SocketAddr, reach: Reach) -> Result<Running, String> {
    // The files are read before anything listens: a bad one is said and nothing starts.
    let tls = match &reach.tls {
        Some((cert, key)) => Some(tls::config(cert, key)?),
        None => None,
    };
    let std_listener = std::net::TcpListener::bind(addr)
        .map_err(|e| format!("the web view cannot listen on {addr}: {e}"))?;
    std_listener
        .set_nonblocking(true)
        .map_err(|e| format!("the web view cannot listen on {addr}: {e}"))?;
    let addr = std_listener.local_addr().unwrap_or(addr);
    let listener = tokio::net::TcpListener::from_std(std_listener)
        .map_err(|e| format!("the web view cannot listen on {addr}: {e}"))?;
    let logins = Arc::new(Logins::default());
    let shared = routes::Shared {
        logins: logins.clone(),
        allowed: Arc::new(guard::Allowed {
            port: addr.port(),
            names: reach.names.clone(),
        }),
        feed: listing::start(),
        home: std::env::var("HOME").unwrap_or_else(|_| "/".to_string()),
    };
    let app = routes::router(shared);
    tokio::spawn(listener::serve(listener, app, tls));
    let scheme = if reach.tls.is_some() { "https" } else { "http" };
    eprintln!("pokeshell web: listening on {addr} ({scheme})");
    Ok(Running { addr, logins, reach })
}
