//! A raw HTTP/1.1 client for the scripted model server: every byte the server sends is checked.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpStream};

use serde_json::{Value, json};

use crate::support::WAIT;

/// One HTTP answer as the client saw it.
#[derive(Debug)]
pub struct Answer {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
}

impl Answer {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    pub fn json(&self) -> Value {
        serde_json::from_slice(&self.body).expect("JSON body")
    }

    /// The `data:` payloads of an SSE body, JSON-parsed (`[DONE]` as a string).
    pub fn sse(&self) -> Vec<Value> {
        String::from_utf8_lossy(&self.body)
            .split("\n\n")
            .filter_map(|event| event.strip_prefix("data: "))
            .map(|d| serde_json::from_str(d).unwrap_or_else(|_| Value::String(d.to_string())))
            .collect()
    }

    /// The concatenated `delta.content` of an SSE body.
    pub fn streamed_text(&self) -> String {
        self.sse()
            .iter()
            .filter_map(|e| e["choices"][0]["delta"]["content"].as_str())
            .collect()
    }
}

pub struct Client {
    pub reader: BufReader<TcpStream>,
    writer: TcpStream,
}

impl Client {
    pub fn connect(addr: SocketAddr) -> Client {
        let stream = TcpStream::connect(addr).expect("connect to the model server");
        stream.set_read_timeout(Some(WAIT)).unwrap();
        Client {
            reader: BufReader::new(stream.try_clone().unwrap()),
            writer: stream,
        }
    }

    pub fn send_raw(&mut self, bytes: &[u8]) {
        self.writer.write_all(bytes).unwrap();
    }

    pub fn post(&mut self, path: &str, body: &Value) -> Answer {
        let body = body.to_string();
        let head = format!(
            "POST {path} HTTP/1.1\r\nhost: x\r\nauthorization: Bearer anything\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\r\n",
            body.len()
        );
        self.send_raw(head.as_bytes());
        self.send_raw(body.as_bytes());
        self.read_answer()
    }

    pub fn get(&mut self, path: &str) -> Answer {
        self.send_raw(format!("GET {path} HTTP/1.1\r\nhost: x\r\n\r\n").as_bytes());
        self.read_answer()
    }

    pub fn line(&mut self) -> String {
        let mut line = String::new();
        self.reader
            .read_line(&mut line)
            .expect("read a line of the answer");
        line.trim_end_matches(['\r', '\n']).to_string()
    }

    /// The status line and the header lines of an answer.
    pub fn read_head(&mut self) -> Answer {
        let status_line = self.line();
        let status = status_line
            .split(' ')
            .nth(1)
            .and_then(|s| s.parse().ok())
            .expect("status line");
        let mut headers = Vec::new();
        loop {
            let line = self.line();
            if line.is_empty() {
                break;
            }
            let (n, v) = line.split_once(':').expect("header line");
            headers.push((n.to_string(), v.trim().to_string()));
        }
        Answer {
            status,
            headers,
            body: Vec::new(),
        }
    }

    /// The next chunk of a chunked body; `None` at the terminating chunk.
    pub fn next_chunk(&mut self) -> Option<Vec<u8>> {
        let size = usize::from_str_radix(&self.line(), 16).expect("chunk size");
        if size == 0 {
            assert_eq!(self.line(), "", "end of chunked body");
            return None;
        }
        let mut chunk = vec![0; size + 2];
        self.reader.read_exact(&mut chunk).expect("chunk data");
        assert_eq!(&chunk[size..], b"\r\n", "chunk data ends with CRLF");
        chunk.truncate(size);
        Some(chunk)
    }

    pub fn read_answer(&mut self) -> Answer {
        let mut answer = self.read_head();
        if answer.header("transfer-encoding") == Some("chunked") {
            while let Some(chunk) = self.next_chunk() {
                answer.body.extend_from_slice(&chunk);
            }
        } else {
            let len: usize = answer
                .header("content-length")
                .expect("content-length")
                .parse()
                .unwrap();
            answer.body.resize(len, 0);
            self.reader.read_exact(&mut answer.body).expect("body");
        }
        answer
    }

    /// True when the server closed the connection (EOF within the wait bound).
    pub fn closed(&mut self) -> bool {
        let mut buf = [0u8; 64];
        matches!(self.reader.read(&mut buf), Ok(0))
    }
}

pub fn chat(prompt: &str) -> Value {
    json!({
        "model": "mock-model",
        "stream": true,
        "messages": [
            {"role": "system", "content": "You are a coding assistant"},
            {"role": "user", "content": [{"type": "text", "text": prompt}]}
        ],
        "tools": [{"type": "function", "function": {"name": "bash", "parameters": {}}}]
    })
}

pub fn summary_request() -> Value {
    json!({
        "model": "mock-tiny",
        "messages": [
            {"role": "system", "content": "You are a context summarization assistant. Summarize."},
            {"role": "user", "content": [{"type": "text", "text": "<conversation>..."}]}
        ]
    })
}
