//! A raw client of the server that floods it with input, through the real socket protocol.
#![allow(dead_code)]

use std::io::Write;
use std::os::unix::net::UnixStream;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use pokeshell_core::wire::{self, Down};

use super::common::Home;

/// A client attached to a session, its messages from the server collected by a thread of its own
/// (only the server's own messages are kept: the pane's bytes are read and let go).
pub struct RawClient {
    pub stream: UnixStream,
    pub heard: Arc<Mutex<Vec<Down>>>,
}

impl RawClient {
    /// Hello, then an attach to `name`.
    pub fn attach(home: &Home, name: &str) -> RawClient {
        let stream = home.open_attached(name, None);
        let heard: Arc<Mutex<Vec<Down>>> = Arc::default();
        let (mut reader, kept) = (stream.try_clone().unwrap(), heard.clone());
        std::thread::spawn(move || {
            while let Ok(Some((kind, payload))) = wire::read_frame(&mut reader) {
                match wire::decode_down(kind, &payload) {
                    Ok(Down::Output(_)) | Err(_) => {}
                    Ok(down) => kept.lock().unwrap().push(down),
                }
            }
        });
        RawClient { stream, heard }
    }

    /// Writes input frames of 64 KiB until `total` bytes went out or the socket took nothing for
    /// `stall`; returns how many bytes the server took.
    pub fn flood(&mut self, total: usize, stall: Duration) -> usize {
        let frame = wire::encode_input(&vec![b'x'; 64 * 1024]);
        self.stream.set_write_timeout(Some(stall)).unwrap();
        let mut sent = 0;
        while sent < total {
            match self.stream.write(&frame) {
                Ok(n) => {
                    // The rest of a partial frame, or the stream would be out of step.
                    if n < frame.len() && self.stream.write_all(&frame[n..]).is_err() {
                        return sent + n;
                    }
                    sent += frame.len();
                }
                Err(_) => return sent,
            }
        }
        sent
    }

    /// The server's error messages to this client so far.
    pub fn errors(&self) -> Vec<String> {
        self.heard
            .lock()
            .unwrap()
            .iter()
            .filter_map(|d| match d {
                Down::Error { message } => Some(message.clone()),
                _ => None,
            })
            .collect()
    }
}
