//! OSC 7501, the program-status protocol: a program tells its terminal whether it is working,
//! blocked on the user, done, failed or idle. pi (1.1 and newer) sends
//! `ESC ] 7501 ; state=S : app=pi [: kind=K] [: msg=BASE64] ESC \` once the terminal answered its
//! query `ESC ] 7501 ; ? ESC \` with a reply of the same shape. The mirror answers the query, reads
//! every report into a [`ProgramStatus`] and, when the host terminal itself speaks the protocol,
//! passes the report on unchanged.

/// The state a report announces.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ProgramState {
    Working,
    /// Waiting for the user (a dialog); `kind` may say what for.
    Blocked,
    Done,
    Error,
    Idle,
    /// The program withdrew its status (pi sends it when it stops).
    Clear,
}

impl ProgramState {
    fn parse(s: &[u8]) -> Option<ProgramState> {
        Some(match s {
            b"working" => ProgramState::Working,
            b"blocked" => ProgramState::Blocked,
            b"done" => ProgramState::Done,
            b"error" => ProgramState::Error,
            b"idle" => ProgramState::Idle,
            b"clear" => ProgramState::Clear,
            _ => return None,
        })
    }
}

/// One report, decoded.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProgramStatus {
    pub state: ProgramState,
    /// `app=`: who reported (pi says `pi`).
    pub app: Option<String>,
    /// `kind=`: what a `blocked` program waits for.
    pub kind: Option<String>,
    /// `msg=` decoded: the session name, a dialog's title or the first line of an error. Control
    /// characters are replaced, so it can be shown as it is.
    pub msg: Option<String>,
}

/// The reply to the query: "this terminal reads program-status reports".
pub const QUERY_REPLY: &[u8] = b"\x1b]7501;?\x1b\\";

/// The longest `msg` kept, in bytes once decoded (pi never sends more than 2048).
const MAX_MSG_BYTES: usize = 2048;
/// The longest `app` or `kind` kept.
const MAX_NAME_CHARS: usize = 32;

/// What an OSC 7501 body (the part after `7501;`) is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Osc7501 {
    /// `?` with optional pairs after it: the feature query.
    Query,
    Report(ProgramStatus),
    /// Not a report we understand (unknown or missing state); ignored.
    Malformed,
}

/// Reads the body of an OSC 7501 sequence. Unknown pairs are skipped (later revisions of the
/// protocol may add some); a bad `msg` is dropped but the state is kept.
pub fn parse(body: &[u8]) -> Osc7501 {
    if body.first() == Some(&b'?') {
        return Osc7501::Query;
    }
    let mut state = None;
    let mut app = None;
    let mut kind = None;
    let mut msg = None;
    for pair in body.split(|b| *b == b':') {
        let Some(eq) = pair.iter().position(|b| *b == b'=') else {
            continue;
        };
        let (key, value) = (&pair[..eq], &pair[eq + 1..]);
        match key {
            b"state" => state = ProgramState::parse(value),
            b"app" => app = name(value),
            b"kind" => kind = name(value),
            b"msg" => msg = decode_base64(value).map(|bytes| clean_text(&bytes)),
            _ => {}
        }
    }
    match state {
        Some(state) => Osc7501::Report(ProgramStatus {
            state,
            app,
            kind,
            msg: msg.filter(|m| !m.is_empty()),
        }),
        None => Osc7501::Malformed,
    }
}

/// A short identifier (`pi`, `confirm` ...): printable ASCII without separators, bounded.
fn name(value: &[u8]) -> Option<String> {
    let ok = !value.is_empty()
        && value.len() <= MAX_NAME_CHARS
        && value
            .iter()
            .all(|b| b.is_ascii_alphanumeric() || b"_.+-".contains(b));
    ok.then(|| String::from_utf8_lossy(value).into_owned())
}

/// UTF-8 (lossy), control characters as spaces, at most `MAX_MSG_BYTES`, trimmed.
fn clean_text(bytes: &[u8]) -> String {
    let bytes = &bytes[..bytes.len().min(MAX_MSG_BYTES + 4)];
    // A character cut by the length bound is dropped, not shown as a replacement character.
    let whole = match std::str::from_utf8(bytes) {
        Err(e) if e.error_len().is_none() => &bytes[..e.valid_up_to()],
        _ => bytes,
    };
    let text = String::from_utf8_lossy(whole);
    let mut out = String::new();
    for c in text.chars() {
        if out.len() + c.len_utf8() > MAX_MSG_BYTES {
            break;
        }
        out.push(if c.is_control() { ' ' } else { c });
    }
    out.trim().to_string()
}

/// Standard base64 with or without padding; `None` on any other byte. Only what a message of
/// `MAX_MSG_BYTES` needs is decoded.
fn decode_base64(text: &[u8]) -> Option<Vec<u8>> {
    let limit = (MAX_MSG_BYTES + 4).div_ceil(3) * 4;
    let text = if text.len() > limit { &text[..limit] } else { text };
    let text = text
        .strip_suffix(b"==")
        .or_else(|| text.strip_suffix(b"="))
        .unwrap_or(text);
    if text.len() % 4 == 1 {
        return None;
    }
    let value = |c: u8| -> Option<u32> {
        Some(match c {
            b'A'..=b'Z' => c - b'A',
            b'a'..=b'z' => c - b'a' + 26,
            b'0'..=b'9' => c - b'0' + 52,
            b'+' => 62,
            b'/' => 63,
            _ => return None,
        } as u32)
    };
    let mut out = Vec::with_capacity(text.len() * 3 / 4);
    for group in text.chunks(4) {
        let mut acc = 0u32;
        for (i, c) in group.iter().enumerate() {
            acc |= value(*c)? << (18 - 6 * i);
        }
        let bytes = acc.to_be_bytes();
        out.extend_from_slice(&bytes[1..group.len()]);
    }
    Some(out)
}

impl ProgramState {
    fn word(self) -> &'static str {
        match self {
            ProgramState::Working => "working",
            ProgramState::Blocked => "blocked",
            ProgramState::Done => "done",
            ProgramState::Error => "error",
            ProgramState::Idle => "idle",
            ProgramState::Clear => "clear",
        }
    }
}

/// The report as a whole OSC 7501 sequence, the way pi writes one (ST-terminated, `msg` in padded
/// base64); the message is cut to the length the parser keeps.
pub fn encode(status: &ProgramStatus) -> Vec<u8> {
    let mut out = format!("\x1b]7501;state={}", status.state.word()).into_bytes();
    for (key, value) in [("app", &status.app), ("kind", &status.kind)] {
        if let Some(v) = value.as_deref().and_then(|v| name(v.as_bytes())) {
            out.extend_from_slice(format!(":{key}={v}").as_bytes());
        }
    }
    if let Some(msg) = status
        .msg
        .as_deref()
        .map(|m| clean_text(m.as_bytes()))
        .filter(|m| !m.is_empty())
    {
        out.extend_from_slice(b":msg=");
        out.extend_from_slice(&encode_base64(msg.as_bytes()));
    }
    out.extend_from_slice(b"\x1b\\");
    out
}

fn encode_base64(bytes: &[u8]) -> Vec<u8> {
    const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = Vec::with_capacity(bytes.len().div_ceil(3) * 4);
    for group in bytes.chunks(3) {
        let acc = group
            .iter()
            .enumerate()
            .fold(0u32, |acc, (i, b)| acc | u32::from(*b) << (16 - 8 * i));
        for i in 0..4 {
            out.push(if i <= group.len() {
                ALPHABET[(acc >> (18 - 6 * i) & 63) as usize]
            } else {
                b'='
            });
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_encoded_report_reads_back_the_same() {
        for msg in [
            None,
            Some("a"),
            Some("ab"),
            Some("abc"),
            Some("limit: resuming in 0:24 — é"),
        ] {
            let status = ProgramStatus {
                state: ProgramState::Blocked,
                app: Some("pokeshell".into()),
                kind: Some("question".into()),
                msg: msg.map(str::to_string),
            };
            let bytes = super::encode(&status);
            let body = &bytes[b"\x1b]7501;".len()..bytes.len() - 2];
            assert_eq!(report(body), status, "{}", String::from_utf8_lossy(&bytes));
        }
        let pi = b"state=error:app=pi:msg=NDI5OiBiYWQ=";
        assert_eq!(
            super::encode(&report(pi)),
            [b"\x1b]7501;".as_slice(), pi, b"\x1b\\"].concat()
        );
    }

    fn report(body: &[u8]) -> ProgramStatus {
        match parse(body) {
            Osc7501::Report(status) => status,
            other => panic!("not a report: {other:?}"),
        }
    }

    #[test]
    fn reads_the_reports_pi_sends() {
        assert_eq!(
            report(b"state=working:app=pi"),
            ProgramStatus {
                state: ProgramState::Working,
                app: Some("pi".into()),
                kind: None,
                msg: None
            }
        );
        // "Compacting context" and a blocked dialog with a UTF-8 title.
        assert_eq!(
            report(b"state=working:app=pi:msg=Q29tcGFjdGluZyBjb250ZXh0")
                .msg
                .as_deref(),
            Some("Compacting context")
        );
        let blocked = report(b"state=blocked:app=pi:kind=confirm:msg=w4p0ZXMtdm91cyBzw7tyID8=");
        assert_eq!(blocked.state, ProgramState::Blocked);
        assert_eq!(blocked.kind.as_deref(), Some("confirm"));
        assert_eq!(blocked.msg.as_deref(), Some("Êtes-vous sûr ?"));
        for (body, state) in [
            (&b"state=done:app=pi"[..], ProgramState::Done),
            (b"state=error:app=pi:msg=NDI5", ProgramState::Error),
            (b"state=idle:app=pi", ProgramState::Idle),
            (b"state=clear", ProgramState::Clear),
        ] {
            assert_eq!(report(body).state, state);
        }
    }

    #[test]
    fn the_query_in_any_revision_is_a_query() {
        assert_eq!(parse(b"?"), Osc7501::Query);
        assert_eq!(parse(b"?v=2"), Osc7501::Query);
    }

    #[test]
    fn malformed_reports_are_rejected_or_trimmed_never_panicked() {
        assert_eq!(parse(b""), Osc7501::Malformed);
        assert_eq!(parse(b"state=sleeping:app=pi"), Osc7501::Malformed);
        assert_eq!(parse(b"app=pi"), Osc7501::Malformed);
        assert_eq!(parse(b"state"), Osc7501::Malformed);
        let bad_msg = report(b"state=done:msg=not*base64:app=bad app:kind=");
        assert_eq!((bad_msg.msg, bad_msg.app, bad_msg.kind), (None, None, None));
        // Control characters in a message (ESC, newline) become spaces.
        assert_eq!(report(b"state=error:msg=YQpiG2M=").msg.as_deref(), Some("a b c"));
        // Unknown pairs are skipped.
        assert_eq!(report(b"x=1:state=idle:y").state, ProgramState::Idle);
    }

    #[test]
    fn base64_with_and_without_padding() {
        assert_eq!(decode_base64(b"").as_deref(), Some(&b""[..]));
        assert_eq!(decode_base64(b"YQ==").as_deref(), Some(&b"a"[..]));
        assert_eq!(decode_base64(b"YWI").as_deref(), Some(&b"ab"[..]));
        assert_eq!(decode_base64(b"YWJj").as_deref(), Some(&b"abc"[..]));
        assert_eq!(decode_base64(b"Y"), None);
        assert_eq!(decode_base64(b"YW=j"), None);
    }

    #[test]
    fn a_long_message_is_cut_on_a_character_boundary() {
        let long = "é".repeat(3000);
        let encoded = encode(long.as_bytes());
        let status = report(format!("state=done:msg={encoded}").as_bytes());
        let msg = status.msg.unwrap_or_default();
        assert!(
            msg.len() <= MAX_MSG_BYTES && msg.len() > MAX_MSG_BYTES - 4,
            "{}",
            msg.len()
        );
        assert!(msg.chars().all(|c| c == 'é'));
    }

    fn encode(bytes: &[u8]) -> String {
        const ALPHABET: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
        let mut out = String::new();
        for group in bytes.chunks(3) {
            let mut acc = 0u32;
            for (i, b) in group.iter().enumerate() {
                acc |= u32::from(*b) << (16 - 8 * i);
            }
            for i in 0..=group.len() {
                out.push(ALPHABET[(acc >> (18 - 6 * i) & 63) as usize] as char);
            }
        }
        out
    }

    proptest::proptest! {
        #[test]
        fn arbitrary_bodies_never_panic(body in proptest::collection::vec(proptest::prelude::any::<u8>(), 0..200)) {
            let _ = parse(&body);
        }

        #[test]
        fn near_valid_bodies_never_panic(body in "(state|app|kind|msg|x)=[A-Za-z0-9+/=é?]{0,12}(:(state|app|kind|msg)=[A-Za-z0-9+/=]{0,12}){0,4}") {
            let _ = parse(body.as_bytes());
        }
    }
}
