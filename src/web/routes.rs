//! The HTTP side: which paths exist, who may have them, and the headers every answer carries.
//!
//! Every request first passes [`guard`]: a `Host` that names this server, an `Origin` (when sent)
//! that is this server. The page and its files are the same for everyone and hold nothing secret:
//! they are served to anyone who reaches the web view. What acts or shows a session needs a login
//! ([`auth::LoggedIn`]): the WebSocket, logging out. `/login` is the login page; its script posts the
//! one-time token from the link to `/login` and keeps the credential it gets back (docs/web.md).

use std::sync::Arc;

use axum::extract::{DefaultBodyLimit, FromRef, Path, Request, State, WebSocketUpgrade};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::middleware::{self, Next};
use axum::response::{Html, IntoResponse, Response};
use axum::routing::get;
use axum::{Json, Router};
use serde::Deserialize;
use serde_json::json;

use super::auth::{self, LoggedIn, Logins};
use super::guard;
use super::listing::Feed;
use super::page_msg::MAX_PAGE_MESSAGE;
use super::{assets, page_socket};

/// What the routes share.
#[derive(Clone)]
pub struct Shared {
    pub logins: Arc<Logins>,
    /// Who this server is, as requests may name it (the Host and Origin checks).
    pub allowed: Arc<guard::Allowed>,
    pub feed: Feed,
    pub home: String,
}

impl FromRef<Shared> for Arc<Logins> {
    fn from_ref(shared: &Shared) -> Self {
        shared.logins.clone()
    }
}

/// The largest request body taken (the login's token, a logout): small on purpose.
const MAX_BODY: usize = 4096;

/// Scripts and styles from this server only; no inline script, no frames, no other site.
/// xterm.js sets styles on its own elements, hence `'unsafe-inline'` for styles alone.
const CSP: &str = "default-src 'none'; script-src 'self'; style-src 'self' 'unsafe-inline'; \
                   connect-src 'self'; img-src 'self' data:; font-src 'self'; manifest-src 'self'; \
                   worker-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

pub fn router(shared: Shared) -> Router {
    Router::new()
        .route("/", get(index))
        .route("/login", get(login_page).post(login))
        .route("/auth", get(check))
        .route("/logout", axum::routing::post(logout))
        .route("/logout-all", axum::routing::post(logout_all))
        .route("/assets/{name}", get(asset))
        .route("/{name}", get(public_asset))
        .route("/ws", get(socket))
        .merge(super::act::routes())
        .fallback(|| async {
            plain(
                StatusCode::NOT_FOUND,
                "pokeshell: there is nothing at this address.",
            )
        })
        .layer(DefaultBodyLimit::max(MAX_BODY))
        .layer(middleware::from_fn_with_state(shared.clone(), guard))
        .with_state(shared)
}

fn plain(status: StatusCode, text: &str) -> Response {
    (
        status,
        [(header::CONTENT_TYPE, "text/plain; charset=utf-8")],
        text.to_string(),
    )
        .into_response()
}

fn header_str(headers: &HeaderMap, name: header::HeaderName) -> Option<&str> {
    headers.get(name).and_then(|v| v.to_str().ok())
}

async fn guard(State(shared): State<Shared>, req: Request, next: Next) -> Response {
    let headers = req.headers();
    let host = header_str(headers, header::HOST).unwrap_or("");
    let mut res = if !shared.allowed.host(host) {
        plain(
            StatusCode::MISDIRECTED_REQUEST,
            "pokeshell: refused: the Host of this request does not name this server (reach it by its address, localhost, or a name in pokeshell.webHosts).",
        )
    } else if let Some(origin) = header_str(headers, header::ORIGIN)
        && !shared.allowed.origin(origin, host)
    {
        plain(
            StatusCode::FORBIDDEN,
            "pokeshell: refused: this request comes from another site's page.",
        )
    } else {
        next.run(req).await
    };
    harden(res.headers_mut());
    res
}

/// The headers every answer carries, refusals included: the policy and the referrer policy
/// (unless a page brings its own: the links' pages post their one form), no sniffing, no frames,
/// no caching.
pub(super) fn harden(h: &mut HeaderMap) {
    if !h.contains_key(header::CONTENT_SECURITY_POLICY) {
        h.insert(header::CONTENT_SECURITY_POLICY, HeaderValue::from_static(CSP));
    }
    if !h.contains_key(header::REFERRER_POLICY) {
        h.insert(header::REFERRER_POLICY, HeaderValue::from_static("no-referrer"));
    }
    h.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
    h.insert(header::X_FRAME_OPTIONS, HeaderValue::from_static("DENY"));
    h.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
}

/// Older versions kept the login in a cookie, which every port of the host received: forget it.
const FORGET_OLD_COOKIE: &str = "pokeshell_session=; Path=/; Max-Age=0; HttpOnly; SameSite=Strict";

fn page(html: &'static str) -> Response {
    let mut res = Html(html).into_response();
    res.headers_mut()
        .insert(header::SET_COOKIE, HeaderValue::from_static(FORGET_OLD_COOKIE));
    res
}

/// The page: the same for everyone; its script shows nothing without a login.
async fn index() -> Response {
    page(assets::INDEX)
}

/// The login page: its script reads the token from the link and posts it. A GET uses nothing up, so
/// a link preview or a prefetch cannot spend the token.
async fn login_page() -> Response {
    page(assets::LOGIN)
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct LoginBody {
    token: String,
}

/// A one-time token for a credential, which the page keeps in its own storage.
async fn login(State(shared): State<Shared>, body: Option<Json<LoginBody>>) -> Response {
    let token = body.map(|Json(b)| b.token).unwrap_or_default();
    match shared.logins.log_in(&token) {
        Ok(credential) => Json(json!({ "credential": credential })).into_response(),
        Err(auth::Refused::BadToken) => (
            StatusCode::FORBIDDEN,
            Json(json!({ "error": "pokeshell: refused: this login link is wrong, was used already or is too old. Run `pokeshell web` again for a new one." })),
        )
            .into_response(),
    }
}

/// Whether the credential sent still logs in (the page asks when its socket would not open).
async fn check(LoggedIn(_): LoggedIn) -> StatusCode {
    StatusCode::NO_CONTENT
}

/// Ends this login; its sockets close, and the push subscriptions its pages handed over are
/// forgotten (a browser logged out of hears nothing more).
async fn logout(State(shared): State<Shared>, LoggedIn(id): LoggedIn) -> StatusCode {
    let pushes = shared.logins.log_out(id);
    if !pushes.is_empty() {
        let forgot = tokio::task::spawn_blocking(move || {
            let store = super::push::Store::here()?;
            pushes.iter().try_for_each(|e| store.remove(e).map(|_| ()))
        })
        .await;
        if let Ok(Err(e)) = forgot {
            eprintln!("pokeshell web: web push: {e}");
        }
    }
    StatusCode::NO_CONTENT
}

/// Ends every login (every browser, this one too), every login link not used yet, every one-tap
/// link from a push and every Web Push subscription (`super::logout_all`).
async fn logout_all(State(shared): State<Shared>, LoggedIn(_): LoggedIn) -> Response {
    let ended = tokio::task::spawn_blocking(super::logout_all)
        .await
        .unwrap_or_default();
    // This web view is the running one; its logins ended there (or just now, here).
    let logins = ended.logins.unwrap_or_else(|| shared.logins.log_out_all());
    Json(json!({ "ended": logins, "links": ended.links, "subscriptions": ended.subscriptions }))
        .into_response()
}

async fn asset(Path(name): Path<String>) -> Response {
    match assets::get(&name) {
        Some(a) => ([(header::CONTENT_TYPE, a.content_type)], a.bytes).into_response(),
        None => plain(StatusCode::NOT_FOUND, "pokeshell: no such file."),
    }
}

async fn public_asset(Path(name): Path<String>) -> Response {
    match assets::public(&name) {
        Some(a) => ([(header::CONTENT_TYPE, a.content_type)], a.bytes).into_response(),
        None => plain(
            StatusCode::NOT_FOUND,
            "pokeshell: there is nothing at this address.",
        ),
    }
}

async fn socket(
    State(shared): State<Shared>,
    headers: HeaderMap,
    LoggedIn(login): LoggedIn,
    ws: WebSocketUpgrade,
) -> Response {
    // The guard checked an Origin that was sent; an upgrade must send one.
    if header_str(&headers, header::ORIGIN).is_none() {
        return plain(
            StatusCode::FORBIDDEN,
            "pokeshell: refused: a WebSocket without an Origin.",
        );
    }
    let feed = shared.feed.clone();
    let home = shared.home.clone();
    let logins = shared.logins.clone();
    // The WebSocket layer's own bound is twice the page's: a message between the two is refused by
    // the page's socket with a clean close (1009) that says why; beyond, the connection just ends.
    // The answer names only the plain protocol, never the one carrying the credential.
    ws.protocols([auth::PROTOCOL])
        .max_message_size(2 * MAX_PAGE_MESSAGE)
        .max_frame_size(2 * MAX_PAGE_MESSAGE)
        .on_upgrade(move |ws| page_socket::run(ws, feed, home, page_socket::Login { id: login, logins }))
}
