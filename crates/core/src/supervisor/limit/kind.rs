//! What kind of provider error a text describes: its HTTP status where one is written, then
//! phrase lists checked in a fixed order (the first list that matches decides).

use super::ErrorKind;
use super::scan::{Cur, contains, find_words};

/// Quota, plan and billing limits: retrying soon cannot help, only the reset (or the user) can.
const USAGE: &[&str] = &[
    "insufficient_quota",
    "exceeded your current quota",
    "exceeded your quota",
    "quota exceeded",
    "quota_exceeded",
    "quota will reset",
    "usage limit",
    "usage_limit",
    "usagelimit",
    "limit exhausted",
    "insufficient balance",
    "insufficient_balance",
    "credit balance is too low",
    "insufficient credits",
    "out of credits",
    "out of budget",
    "available balance",
    "billing",
    "hard limit",
    "spending limit",
    "per day",
    "perday",
    "per-day",
    "daily limit",
    "daily quota",
    "weekly limit",
    "monthly limit",
    "monthly quota",
    "monthly spend",
    "session limit",
    "hit your limit",
    "exhausted your capacity",
];

/// Errors that waiting cannot fix: the request, the key or the model is wrong.
const FATAL: &[&str] = &[
    "context length",
    "context_length",
    "context window",
    "context_window",
    "maximum context",
    "context size",
    "prompt is too long",
    "prompt too long",
    "input is too long",
    "too large for model",
    "request_too_large",
    "reduce the length of the messages",
    "invalid api key",
    "invalid_api_key",
    "incorrect api key",
    "invalid x-api-key",
    "api key not valid",
    "no api key",
    "authentication_error",
    "authentication failed",
    "invalid authentication",
    "unauthorized",
    "permission_error",
    "permission denied",
    "forbidden",
    "model not found",
    "model_not_found",
    "not_found_error",
    "no such model",
    "unknown model",
    "does not exist",
    "no models loaded",
];

const OVERLOADED: &[&str] = &[
    "overloaded",
    "capacity",
    "server_busy",
    "servers are currently busy",
    "high demand",
    "service unavailable",
    "service_unavailable",
    "temporarily unavailable",
    "unavailable_error",
    "loading model",
];

const RATE: &[&str] = &[
    "rate limit",
    "rate_limit",
    "ratelimit",
    "rate-limit",
    "too many requests",
    "too_many_requests",
    "resource_exhausted",
    "resource exhausted",
    "resource has been exhausted",
    "throttl",
    "concurrency",
    "requests per",
    "tokens per",
];

const SERVER: &[&str] = &[
    "internal server error",
    "internal_server_error",
    "internal error",
    "internal_error",
    "server error",
    "server_error",
    "api_error",
    "bad gateway",
    "gateway timeout",
    "upstream error",
    "provider returned error",
];

const NETWORK: &[&str] = &[
    "fetch failed",
    "connection error",
    "connection refused",
    "connection reset",
    "connection closed",
    "connection lost",
    "network error",
    "socket hang up",
    "other side closed",
    "socket connection was closed",
    "econnreset",
    "econnrefused",
    "econnaborted",
    "etimedout",
    "epipe",
    "enotfound",
    "eai_again",
    "getaddrinfo",
    "timed out",
    "timeout",
    "terminated",
    "ended without",
    "stream ended",
    "upstream connect",
    "reset before headers",
    "websocket closed",
];

fn any(text: &[u8], phrases: &[&str]) -> bool {
    phrases.iter().any(|p| contains(text, p.as_bytes()))
}

pub(super) fn classify(text: &[u8], status: Option<u16>) -> ErrorKind {
    let status_in = |codes: &[u16]| status.is_some_and(|s| codes.contains(&s));
    let zai_plan_limit = [b"1308" as &[u8], b"1310"]
        .iter()
        .any(|c| find_words(text, c, true).next().is_some());
    if any(text, USAGE) || zai_plan_limit || status_in(&[402]) {
        ErrorKind::UsageLimit
    } else if any(text, FATAL) {
        ErrorKind::Fatal
    } else if status_in(&[503, 529]) || any(text, OVERLOADED) {
        ErrorKind::Overloaded
    } else if status_in(&[429]) || any(text, RATE) {
        ErrorKind::RateLimit
    } else if status.is_some_and(|s| (500..600).contains(&s)) || any(text, SERVER) {
        ErrorKind::ServerError
    } else if status.is_some_and(|s| (400..500).contains(&s)) {
        ErrorKind::Fatal
    } else if any(text, NETWORK) {
        ErrorKind::Network
    } else {
        ErrorKind::Unknown
    }
}

/// The HTTP status the text reports: a leading `429:` / `529 {...}` (after pi's own "Error:" and
/// "Retry failed after N attempts:" prefixes), an `(429)` after "error", or a number after a
/// status-like key (`status: 429`, `Error code: 429`, `"code": 503`).
pub(super) fn status(text: &[u8]) -> Option<u16> {
    let mut cur = Cur::at(text, 0);
    strip_prefixes(&mut cur);
    if let Some(code) = three_digits(&mut cur).filter(|c| (100..600).contains(c)) {
        return Some(code);
    }
    for pos in find_words(text, b"error", false) {
        let mut cur = Cur::at(text, pos + 5);
        cur.skip_spaces();
        if cur.eat(b"(")
            && let Some(code) = three_digits(&mut cur).filter(|c| (400..600).contains(c))
            && cur.eat(b")")
        {
            return Some(code);
        }
    }
    const KEYS: &[&[u8]] = &[
        b"status code",
        b"status_code",
        b"statuscode",
        b"status",
        b"error code",
        b"http/2",
        b"http/1.1",
        b"code",
    ];
    KEYS.iter().find_map(|key| {
        find_words(text, key, true).find_map(|pos| {
            let mut cur = Cur::at(text, pos + key.len());
            cur.skip_while(|b| matches!(b, b' ' | b':' | b'=' | b'"' | b'\'' | b'\\'), 6);
            three_digits(&mut cur).filter(|c| (400..600).contains(c))
        })
    })
}

fn strip_prefixes(cur: &mut Cur) {
    for _ in 0..4 {
        cur.skip_while(|b| b.is_ascii_whitespace(), 16);
        if cur.eat(b"error:") || cur.eat(b"api error:") {
            continue;
        }
        if cur.eat(b"retry failed after ") {
            cur.digits(6);
            cur.skip_spaces();
            if cur.eat(b"attempts:") || cur.eat(b"attempt:") {
                continue;
            }
        }
        break;
    }
    cur.skip_while(|b| b.is_ascii_whitespace(), 16);
}

/// Exactly three digits that are not part of a longer number or word.
fn three_digits(cur: &mut Cur) -> Option<u16> {
    let start = *cur;
    let code = cur.fixed_digits(3)?;
    if cur.peek().is_some_and(|b| b.is_ascii_alphabetic() || b == b'_') {
        *cur = start;
        return None;
    }
    u16::try_from(code).ok()
}
