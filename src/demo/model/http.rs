//! Just enough HTTP/1.1 for the scripted model: one request at a time per connection (keep-alive),
//! bodies by Content-Length or chunked transfer coding, JSON answers and chunked SSE streams.

use std::io::{self, BufRead, Read, Write};

const MAX_HEAD_BYTES: usize = 64 * 1024;
const MAX_BODY_BYTES: usize = 32 * 1024 * 1024;

/// A parsed request. Header names are lower-cased.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Request {
    pub method: String,
    pub target: String,
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
}

#[derive(Debug)]
pub enum ReadError {
    /// The client closed the connection before sending a new request.
    Closed,
    /// The bytes are not a request we understand; the text says why.
    Malformed(String),
    Io(io::Error),
}

impl From<io::Error> for ReadError {
    fn from(e: io::Error) -> ReadError {
        ReadError::Io(e)
    }
}

impl Request {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }

    /// The path without the query string.
    pub fn path(&self) -> &str {
        self.target.split('?').next().unwrap_or("")
    }

    pub fn wants_close(&self) -> bool {
        self.header("connection")
            .is_some_and(|v| v.eq_ignore_ascii_case("close"))
    }
}

/// Reads one request. `interim` receives a `100 Continue` when the client asks for one.
pub fn read_request(reader: &mut impl BufRead, interim: &mut impl Write) -> Result<Request, ReadError> {
    let mut head_budget = MAX_HEAD_BYTES;
    let request_line = loop {
        match read_line(reader, &mut head_budget)? {
            None => return Err(ReadError::Closed),
            // Tolerate stray empty lines between requests (RFC 9112 §2.2).
            Some(line) if line.is_empty() => continue,
            Some(line) => break line,
        }
    };
    let mut parts = request_line.split(' ');
    let (Some(method), Some(target), Some(version), None) =
        (parts.next(), parts.next(), parts.next(), parts.next())
    else {
        return Err(malformed(format!("bad request line {request_line:?}")));
    };
    if !version.starts_with("HTTP/1.") || method.is_empty() || !target.starts_with('/') {
        return Err(malformed(format!("bad request line {request_line:?}")));
    }
    let mut headers = Vec::new();
    loop {
        let line =
            read_line(reader, &mut head_budget)?.ok_or_else(|| malformed("connection closed in headers"))?;
        if line.is_empty() {
            break;
        }
        let (name, value) = line
            .split_once(':')
            .ok_or_else(|| malformed(format!("bad header line {line:?}")))?;
        if name.is_empty() || name.contains(char::is_whitespace) {
            return Err(malformed(format!("bad header name {name:?}")));
        }
        headers.push((name.to_ascii_lowercase(), value.trim().to_string()));
    }
    let mut request = Request {
        method: method.to_string(),
        target: target.to_string(),
        headers,
        body: Vec::new(),
    };
    if request
        .header("expect")
        .is_some_and(|v| v.eq_ignore_ascii_case("100-continue"))
    {
        interim.write_all(b"HTTP/1.1 100 Continue\r\n\r\n")?;
        interim.flush()?;
    }
    let chunked = request
        .header("transfer-encoding")
        .is_some_and(|v| v.to_ascii_lowercase().contains("chunked"));
    request.body = if chunked {
        read_chunked_body(reader)?
    } else if let Some(len) = request.header("content-length") {
        let len: usize = len
            .parse()
            .map_err(|_| malformed(format!("bad content-length {len:?}")))?;
        if len > MAX_BODY_BYTES {
            return Err(malformed(format!("body of {len} bytes is too large")));
        }
        let mut body = vec![0; len];
        reader
            .read_exact(&mut body)
            .map_err(|e| eof_is_malformed(e, "body shorter than content-length"))?;
        body
    } else {
        Vec::new()
    };
    Ok(request)
}

fn read_chunked_body(reader: &mut impl BufRead) -> Result<Vec<u8>, ReadError> {
    let mut body = Vec::new();
    let mut budget = MAX_HEAD_BYTES;
    loop {
        let line =
            read_line(reader, &mut budget)?.ok_or_else(|| malformed("connection closed in chunked body"))?;
        let size_text = line.split(';').next().unwrap_or("").trim();
        let size = usize::from_str_radix(size_text, 16)
            .map_err(|_| malformed(format!("bad chunk size {line:?}")))?;
        if size == 0 {
            // Trailer fields, up to the empty line.
            loop {
                let trailer = read_line(reader, &mut budget)?;
                match trailer {
                    None => return Err(malformed("connection closed in trailers")),
                    Some(line) if line.is_empty() => break,
                    Some(_) => {}
                }
            }
            return Ok(body);
        }
        if body.len() + size > MAX_BODY_BYTES {
            return Err(malformed("chunked body is too large"));
        }
        let start = body.len();
        body.resize(start + size, 0);
        reader
            .read_exact(&mut body[start..])
            .map_err(|e| eof_is_malformed(e, "chunk shorter than its size"))?;
        let mut crlf = [0u8; 2];
        reader
            .read_exact(&mut crlf)
            .map_err(|e| eof_is_malformed(e, "chunk without CRLF"))?;
        if &crlf != b"\r\n" {
            return Err(malformed("chunk data not followed by CRLF"));
        }
    }
}

/// One line without its line ending; `None` on a clean end of stream before any byte.
fn read_line(reader: &mut impl BufRead, budget: &mut usize) -> Result<Option<String>, ReadError> {
    let mut line = Vec::new();
    let limit = (*budget as u64).saturating_add(1);
    let n = reader.by_ref().take(limit).read_until(b'\n', &mut line)?;
    if n == 0 {
        return Ok(None);
    }
    if n > *budget {
        return Err(malformed("request head too large"));
    }
    *budget -= n;
    if line.pop() != Some(b'\n') {
        return Err(malformed("connection closed mid-line"));
    }
    if line.last() == Some(&b'\r') {
        line.pop();
    }
    String::from_utf8(line)
        .map(Some)
        .map_err(|_| malformed("request head is not UTF-8"))
}

fn malformed(why: impl Into<String>) -> ReadError {
    ReadError::Malformed(why.into())
}

fn eof_is_malformed(e: io::Error, why: &str) -> ReadError {
    if e.kind() == io::ErrorKind::UnexpectedEof {
        malformed(why)
    } else {
        ReadError::Io(e)
    }
}

pub fn reason(status: u16) -> &'static str {
    match status {
        200 => "OK",
        400 => "Bad Request",
        401 => "Unauthorized",
        403 => "Forbidden",
        404 => "Not Found",
        405 => "Method Not Allowed",
        408 => "Request Timeout",
        413 => "Content Too Large",
        429 => "Too Many Requests",
        500 => "Internal Server Error",
        502 => "Bad Gateway",
        503 => "Service Unavailable",
        504 => "Gateway Timeout",
        529 => "Site Overloaded",
        _ => "Status",
    }
}

/// A complete answer with a JSON body.
pub fn write_json(
    w: &mut impl Write,
    status: u16,
    body: &serde_json::Value,
    keep_alive: bool,
) -> io::Result<()> {
    write_json_with(w, status, &[], body, keep_alive)
}

/// A complete answer with a JSON body and extra header lines (checked when the step was read).
pub fn write_json_with(
    w: &mut impl Write,
    status: u16,
    headers: &[(String, String)],
    body: &serde_json::Value,
    keep_alive: bool,
) -> io::Result<()> {
    let body = body.to_string();
    let connection = if keep_alive { "keep-alive" } else { "close" };
    write!(w, "HTTP/1.1 {status} {}\r\n", reason(status))?;
    for (name, value) in headers {
        write!(w, "{name}: {value}\r\n")?;
    }
    write!(
        w,
        "content-type: application/json\r\ncontent-length: {}\r\nconnection: {connection}\r\n\r\n{body}",
        body.len()
    )?;
    w.flush()
}

/// The head of a streamed answer; the body follows as chunks (`write_chunk`, `end_chunks`).
pub fn write_sse_head(w: &mut impl Write) -> io::Result<()> {
    w.write_all(
        b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ncache-control: no-cache\r\n\
          transfer-encoding: chunked\r\nconnection: keep-alive\r\n\r\n",
    )?;
    w.flush()
}

pub fn write_chunk(w: &mut impl Write, data: &[u8]) -> io::Result<()> {
    if data.is_empty() {
        return Ok(());
    }
    write!(w, "{:x}\r\n", data.len())?;
    w.write_all(data)?;
    w.write_all(b"\r\n")?;
    w.flush()
}

pub fn end_chunks(w: &mut impl Write) -> io::Result<()> {
    w.write_all(b"0\r\n\r\n")?;
    w.flush()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::BufReader;

    fn parse(raw: &[u8]) -> (Result<Request, ReadError>, Vec<u8>) {
        let mut interim = Vec::new();
        let result = read_request(&mut BufReader::new(raw), &mut interim);
        (result, interim)
    }

    #[test]
    fn content_length_body_and_headers() {
        let raw = b"POST /v1/chat/completions?x=1 HTTP/1.1\r\nHost: a\r\nContent-Length: 7\r\nConnection: close\r\n\r\n{\"a\":1}";
        let req = parse(raw).0.unwrap();
        assert_eq!(req.method, "POST");
        assert_eq!(req.path(), "/v1/chat/completions");
        assert_eq!(req.header("host"), Some("a"));
        assert!(req.wants_close());
        assert_eq!(req.body, b"{\"a\":1}");
    }

    #[test]
    fn chunked_body_with_extension_and_trailer() {
        let raw = b"POST /p HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n4;ext=1\r\n{\"a\"\r\n3\r\n:1}\r\n0\r\nX-T: y\r\n\r\nNEXT";
        let mut reader = BufReader::new(&raw[..]);
        let req = read_request(&mut reader, &mut Vec::new()).unwrap();
        assert_eq!(req.body, b"{\"a\":1}");
        let mut rest = String::new();
        reader.read_to_string(&mut rest).unwrap();
        assert_eq!(rest, "NEXT", "the parser must stop right after the body");
    }

    #[test]
    fn two_requests_on_one_connection() {
        let raw = b"GET /a HTTP/1.1\r\n\r\nGET /b HTTP/1.1\r\ncontent-length: 0\r\n\r\n";
        let mut reader = BufReader::new(&raw[..]);
        assert_eq!(read_request(&mut reader, &mut Vec::new()).unwrap().target, "/a");
        assert_eq!(read_request(&mut reader, &mut Vec::new()).unwrap().target, "/b");
        assert!(matches!(
            read_request(&mut reader, &mut Vec::new()),
            Err(ReadError::Closed)
        ));
    }

    #[test]
    fn expect_continue_gets_an_interim_answer() {
        let (req, interim) =
            parse(b"POST /p HTTP/1.1\r\nExpect: 100-continue\r\nContent-Length: 2\r\n\r\nhi");
        assert_eq!(req.unwrap().body, b"hi");
        assert_eq!(interim, b"HTTP/1.1 100 Continue\r\n\r\n");
    }

    #[test]
    fn malformed_requests_are_reported_not_panicked() {
        let cases: [&[u8]; 8] = [
            b"garbage\r\n\r\n",
            b"GET /a\r\n\r\n",
            b"GET a HTTP/1.1\r\n\r\n",
            b"GET /a HTTP/1.1\r\nno colon here\r\n\r\n",
            b"POST /a HTTP/1.1\r\ncontent-length: ten\r\n\r\n",
            b"POST /a HTTP/1.1\r\ncontent-length: 10\r\n\r\nshort",
            b"POST /a HTTP/1.1\r\ntransfer-encoding: chunked\r\n\r\nzz\r\n",
            b"GET /\xff HTTP/1.1\r\n\r\n",
        ];
        for raw in cases {
            let (result, _) = parse(raw);
            assert!(
                matches!(result, Err(ReadError::Malformed(_))),
                "{:?}: {result:?}",
                String::from_utf8_lossy(raw)
            );
        }
    }

    #[test]
    fn oversized_head_is_malformed() {
        let mut raw = b"GET /a HTTP/1.1\r\nx: ".to_vec();
        raw.extend(std::iter::repeat_n(b'a', MAX_HEAD_BYTES + 10));
        raw.extend(b"\r\n\r\n");
        assert!(matches!(parse(&raw).0, Err(ReadError::Malformed(_))));
    }

    #[test]
    fn json_and_chunk_writers() {
        let mut out = Vec::new();
        write_json(&mut out, 404, &serde_json::json!({"e":1}), true).unwrap();
        assert_eq!(
            String::from_utf8(out).unwrap(),
            "HTTP/1.1 404 Not Found\r\ncontent-type: application/json\r\ncontent-length: 7\r\nconnection: keep-alive\r\n\r\n{\"e\":1}"
        );
        let mut out = Vec::new();
        let headers = [("retry-after".to_string(), "25".to_string())];
        write_json_with(&mut out, 529, &headers, &serde_json::json!({}), false).unwrap();
        assert_eq!(
            String::from_utf8(out).unwrap(),
            "HTTP/1.1 529 Site Overloaded\r\nretry-after: 25\r\ncontent-type: application/json\r\ncontent-length: 2\r\nconnection: close\r\n\r\n{}"
        );
        let mut out = Vec::new();
        write_chunk(&mut out, b"hello world!").unwrap();
        write_chunk(&mut out, b"").unwrap();
        end_chunks(&mut out).unwrap();
        assert_eq!(out, b"c\r\nhello world!\r\n0\r\n\r\n");
    }

    proptest::proptest! {
        /// Whatever arrives, the parser answers with a request or a reason, never a panic; reading
        /// from memory never fails with an I/O error.
        #[test]
        fn arbitrary_bytes_never_panic(bytes in proptest::collection::vec(proptest::prelude::any::<u8>(), 0..600)) {
            let result = read_request(&mut BufReader::new(&bytes[..]), &mut Vec::new());
            proptest::prop_assert!(!matches!(result, Err(ReadError::Io(_))));
        }

        #[test]
        fn near_valid_heads_never_panic(
            head in "[A-Z]{0,6} /[!-~]{0,12} HTTP/1\\.[01]\r\n([a-zA-Z-]{0,12}:[ -~]{0,16}\r?\n){0,4}\r?\n[0-9a-f;\r\n]{0,30}"
        ) {
            let result = read_request(&mut BufReader::new(head.as_bytes()), &mut Vec::new());
            proptest::prop_assert!(!matches!(result, Err(ReadError::Io(_))));
        }
    }
}
