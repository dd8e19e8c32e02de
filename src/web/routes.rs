//! The HTTP side: which paths exist, who may have them, and the headers every answer carries.
//!
//! Every request first passes [`guard`]: a `Host` that names this server, an `Origin` (when sent)
//! that is this server. `/login?token=…` turns a one-time token into the session cookie; the page,
//! its files and the WebSocket need that cookie.

use std::sync::{Arc, Mutex};
use std::time::Instant;

use axum::Router;
use axum::extract::{Path, Query, Request, State, WebSocketUpgrade};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::middleware::{self, Next};
use axum::response::{Html, IntoResponse, Redirect, Response};
use axum::routing::get;
use serde::Deserialize;

use super::auth::{self, Auth};
use super::guard;
use super::listing::Feed;
use super::page_msg::MAX_PAGE_MESSAGE;
use super::{assets, page_socket};

/// What the routes share.
#[derive(Clone)]
pub struct Shared {
    pub auth: Arc<Mutex<Auth>>,
    /// Who this server is, as requests may name it (the Host and Origin checks).
    pub allowed: Arc<guard::Allowed>,
    pub feed: Feed,
    pub home: String,
}

/// Scripts and styles from this server only; no inline script, no frames, no other site.
/// xterm.js sets styles on its own elements, hence `'unsafe-inline'` for styles alone.
const CSP: &str = "default-src 'none'; script-src 'self'; style-src 'self' 'unsafe-inline'; \
                   connect-src 'self'; img-src 'self' data:; font-src 'self'; manifest-src 'self'; \
                   worker-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

pub fn router(shared: Shared) -> Router {
    Router::new()
        .route("/", get(index))
        .route("/login", get(login))
        .route("/assets/{name}", get(asset))
        .route("/{name}", get(public_asset))
        .route("/ws", get(socket))
        .fallback(|| async {
            plain(
                StatusCode::NOT_FOUND,
                "pokeshell: there is nothing at this address.",
            )
        })
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
    if !shared.allowed.host(host) {
        return plain(
            StatusCode::MISDIRECTED_REQUEST,
            "pokeshell: refused: the Host of this request does not name this server (reach it by its address, localhost, or a name in pokeshell.webHosts).",
        );
    }
    if let Some(origin) = header_str(headers, header::ORIGIN)
        && !shared.allowed.origin(origin, host)
    {
        return plain(
            StatusCode::FORBIDDEN,
            "pokeshell: refused: this request comes from another site's page.",
        );
    }
    let mut res = next.run(req).await;
    let h = res.headers_mut();
    h.insert(header::CONTENT_SECURITY_POLICY, HeaderValue::from_static(CSP));
    h.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
    h.insert(header::REFERRER_POLICY, HeaderValue::from_static("no-referrer"));
    h.insert(header::X_FRAME_OPTIONS, HeaderValue::from_static("DENY"));
    h.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    res
}

fn logged_in(shared: &Shared, headers: &HeaderMap) -> bool {
    let Some(value) = header_str(headers, header::COOKIE).and_then(auth::cookie_value) else {
        return false;
    };
    shared
        .auth
        .lock()
        .map(|mut a| a.check(value, Instant::now()))
        .unwrap_or(false)
}

const LOG_IN_FIRST: &str =
    "pokeshell: log in first: run `pokeshell web` in a terminal and open the link it prints.";

async fn index(State(shared): State<Shared>, headers: HeaderMap) -> Response {
    if !logged_in(&shared, &headers) {
        return plain(StatusCode::UNAUTHORIZED, LOG_IN_FIRST);
    }
    Html(assets::INDEX).into_response()
}

#[derive(Deserialize)]
struct LoginQuery {
    token: Option<String>,
}

async fn login(State(shared): State<Shared>, Query(q): Query<LoginQuery>) -> Response {
    let cookie = match auth::random_token() {
        Ok(c) => c,
        Err(e) => return plain(StatusCode::INTERNAL_SERVER_ERROR, &format!("pokeshell: {e}")),
    };
    let token = q.token.unwrap_or_default();
    let outcome = shared
        .auth
        .lock()
        .map_err(|_| auth::Refused::BadToken)
        .and_then(|mut a| a.log_in(&token, cookie, Instant::now()));
    match outcome {
        Ok(cookie) => {
            let mut res = Redirect::to("/").into_response();
            if let Ok(v) = HeaderValue::from_str(&auth::set_cookie(&cookie)) {
                res.headers_mut().insert(header::SET_COOKIE, v);
            }
            res
        }
        Err(auth::Refused::BadToken) => plain(
            StatusCode::FORBIDDEN,
            "pokeshell: refused: this login link is wrong, was used already or is too old. Run `pokeshell web` again for a new one.",
        ),
    }
}

async fn asset(State(shared): State<Shared>, headers: HeaderMap, Path(name): Path<String>) -> Response {
    if !logged_in(&shared, &headers) {
        return plain(StatusCode::UNAUTHORIZED, LOG_IN_FIRST);
    }
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

async fn socket(State(shared): State<Shared>, headers: HeaderMap, ws: WebSocketUpgrade) -> Response {
    // The guard checked an Origin that was sent; an upgrade must send one.
    if header_str(&headers, header::ORIGIN).is_none() {
        return plain(
            StatusCode::FORBIDDEN,
            "pokeshell: refused: a WebSocket without an Origin.",
        );
    }
    if !logged_in(&shared, &headers) {
        return plain(StatusCode::UNAUTHORIZED, LOG_IN_FIRST);
    }
    let feed = shared.feed.clone();
    let home = shared.home.clone();
    // The WebSocket layer's own bound is twice the page's: a message between the two is refused by
    // the page's socket with a clean close (1009) that says why; beyond, the connection just ends.
    ws.max_message_size(2 * MAX_PAGE_MESSAGE)
        .max_frame_size(2 * MAX_PAGE_MESSAGE)
        .on_upgrade(move |ws| page_socket::run(ws, feed, home))
}
