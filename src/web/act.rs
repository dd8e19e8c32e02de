//! The capability links' pages (`/act/TOKEN`): a GET shows what the link would do and one button (a
//! link preview or a prefetch never acts); a POST, from that button or straight from ntfy's action
//! button, uses the link and passes the act to the server, which carries it out only if the event is
//! still the session's open one. No login: the link is the capability (docs/away.md).

use std::time::Instant;

use axum::Router;
use axum::extract::Path;
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::get;

use super::links::{Grant, LINKS, Refused};
use super::upstream::Upstream;
use pokeshell_core::wire::{Down, Up};

/// These pages post their own form and nothing else: no script, no other site.
const CSP: &str = "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'; base-uri 'none'; \
                   frame-ancestors 'none'";

/// A browser sends `Origin: null` with a form's POST from a page whose referrer policy is
/// `no-referrer`, and the guard refuses a foreign origin: these pages' policy is `same-origin`,
/// so that their button's POST says it comes from the web view itself. The page has no link to
/// anywhere else, so the link's token still goes to no other site.
const REFERRER: &str = "same-origin";

/// A token is 64 hex digits; anything else is refused before it is compared.
const TOKEN_LEN: usize = 64;

pub fn routes<S: Clone + Send + Sync + 'static>() -> Router<S> {
    Router::new().route("/act/{token}", get(look).post(act))
}

async fn look(Path(token): Path<String>) -> Response {
    match lookup(&token, false) {
        Ok(grant) => {
            let body = format!(
                "<p>{}</p><form method=\"post\"><button type=\"submit\">{}</button></form>\
                 <p class=\"small\">One tap sends it; the link then works no more.</p>",
                escape(&grant.about),
                escape(grant.act.label()),
            );
            page(StatusCode::OK, &grant.label, &body)
        }
        Err(refused) => refused_page(refused),
    }
}

async fn act(Path(token): Path<String>) -> Response {
    let grant = match lookup(&token, true) {
        Ok(g) => g,
        Err(refused) => return refused_page(refused),
    };
    match pass_on(&grant).await {
        Ok(message) => page(
            StatusCode::OK,
            &grant.label,
            &format!("<p>Done. {}</p>", escape(&message)),
        ),
        Err(Some(message)) => page(
            StatusCode::CONFLICT,
            &grant.label,
            &format!("<p>Refused: {}.</p>", escape(&message)),
        ),
        Err(None) => page(
            StatusCode::SERVICE_UNAVAILABLE,
            &grant.label,
            "<p>The pokeshell server could not be reached; nothing was sent.</p>",
        ),
    }
}

fn lookup(token: &str, take: bool) -> Result<Grant, Refused> {
    if token.len() != TOKEN_LEN || !token.bytes().all(|b| b.is_ascii_hexdigit()) {
        return Err(Refused::Unknown);
    }
    let mut links = LINKS.lock().map_err(|_| Refused::Unknown)?;
    if take {
        links.take(token, Instant::now())
    } else {
        links.look(token, Instant::now())
    }
}

/// The act, to the server over its own socket as any client asks: its answer, or its refusal
/// (`Some`), or `None` when it could not be asked.
async fn pass_on(grant: &Grant) -> Result<String, Option<String>> {
    let mut up = Upstream::connect().await.map_err(|_| None)?;
    let ask = Up::Act {
        session: grant.session,
        event: grant.event,
        act: grant.act,
    };
    up.send(&ask).await.map_err(|_| None)?;
    let answer = tokio::time::timeout(std::time::Duration::from_secs(10), async {
        loop {
            match up.next().await {
                Ok(Some(Down::Acted { message })) => return Ok(message),
                Ok(Some(Down::Error { message })) => return Err(Some(message)),
                Ok(Some(_)) => continue,
                Ok(None) | Err(_) => return Err(None),
            }
        }
    })
    .await
    .map_err(|_| None)?;
    let _ = up.send(&Up::Detach).await;
    answer
}

fn refused_page(refused: Refused) -> Response {
    let status = match refused {
        Refused::Unknown => StatusCode::NOT_FOUND,
        Refused::Used | Refused::Expired => StatusCode::GONE,
    };
    page(
        status,
        "pokeshell",
        &format!("<p>{} Nothing was sent.</p>", refused.words()),
    )
}

fn page(status: StatusCode, title: &str, body: &str) -> Response {
    let html = format!(
        "<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\">\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\
         <meta name=\"referrer\" content=\"{REFERRER}\"><title>{t}</title>\
         <style>body{{font:17px/1.4 system-ui,sans-serif;max-width:32em;margin:2em auto;padding:0 1em}}\
         button{{font-size:1.2em;padding:.6em 1.4em}}.small{{color:#666;font-size:.85em}}\
         p{{white-space:pre-wrap}}</style></head><body><h1>{t}</h1>{body}</body></html>",
        t = escape(title),
    );
    let mut res = (status, [(header::CONTENT_TYPE, "text/html; charset=utf-8")], html).into_response();
    res.headers_mut()
        .insert(header::CONTENT_SECURITY_POLICY, HeaderValue::from_static(CSP));
    res.headers_mut()
        .insert(header::REFERRER_POLICY, HeaderValue::from_static(REFERRER));
    res
}

/// Text for HTML: the five characters that could start markup or end an attribute.
fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_cannot_become_markup() {
        assert_eq!(escape("<b a=\"1\">'&"), "&lt;b a=&quot;1&quot;&gt;&#39;&amp;");
    }

    #[test]
    fn a_token_of_another_shape_is_unknown_without_a_lookup() {
        assert_eq!(lookup("../../etc", true), Err(Refused::Unknown));
        assert_eq!(lookup(&"g".repeat(64), true), Err(Refused::Unknown));
    }
}
