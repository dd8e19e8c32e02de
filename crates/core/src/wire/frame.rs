//! Frames on a byte stream: writing them, and reading them from a blocking reader or bytes handed over
//! piecemeal by a non-blocking one (the binary's `ipc::frame_async` reads them from an async one).

use std::io::{self, Read};

use serde::Serialize;

use super::{MAX_FRAME, WireError};

/// The bytes of a frame's length.
pub const HEADER: usize = 4;

/// Appends one frame. `payload` must be shorter than [`MAX_FRAME`] for the peer to accept it.
pub(super) fn push_frame(out: &mut Vec<u8>, kind: u8, payload: &[u8]) {
    out.reserve(HEADER + 1 + payload.len());
    out.extend_from_slice(&frame_len(payload.len()).to_be_bytes());
    out.push(kind);
    out.extend_from_slice(payload);
}

/// Appends one frame whose payload is `body` as JSON.
pub(super) fn push_json_frame(out: &mut Vec<u8>, kind: u8, body: &impl Serialize) {
    let start = out.len();
    out.extend_from_slice(&[0; HEADER]);
    out.push(kind);
    // The bodies are plain structs of strings, numbers and lists, which always serialize. Were one
    // ever to fail, `null` goes out and the peer reports a bad message of this kind.
    if serde_json::to_writer(&mut *out, body).is_err() {
        out.truncate(start + HEADER + 1);
        out.extend_from_slice(b"null");
    }
    let len = frame_len(out.len() - start - HEADER - 1);
    out[start..start + HEADER].copy_from_slice(&len.to_be_bytes());
}

/// The header's N for a payload: the kind byte plus the payload. Beyond u32 it saturates, which the
/// peer refuses as too long like any other oversized frame.
fn frame_len(payload: usize) -> u32 {
    u32::try_from(payload + 1).unwrap_or(u32::MAX)
}

/// The frame's N when it is acceptable.
pub fn checked_len(header: [u8; HEADER]) -> Result<usize, WireError> {
    let len = u32::from_be_bytes(header);
    let len = usize::try_from(len).unwrap_or(usize::MAX);
    if len == 0 {
        Err(WireError::Empty)
    } else if len > MAX_FRAME {
        Err(WireError::TooLong { len })
    } else {
        Ok(len)
    }
}

/// A read that ended early ends the frame early.
pub fn truncated_on_eof(e: io::Error) -> WireError {
    if e.kind() == io::ErrorKind::UnexpectedEof {
        WireError::Truncated
    } else {
        WireError::Io(e)
    }
}

/// Reads one frame: `Ok(None)` when the stream ends cleanly between frames.
pub fn read_frame(r: &mut impl Read) -> Result<Option<(u8, Vec<u8>)>, WireError> {
    let mut header = [0u8; HEADER];
    let mut got = 0;
    while got < HEADER {
        match r.read(&mut header[got..]) {
            Ok(0) if got == 0 => return Ok(None),
            Ok(0) => return Err(WireError::Truncated),
            Ok(n) => got += n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(WireError::Io(e)),
        }
    }
    let len = checked_len(header)?;
    let mut kind = [0u8; 1];
    r.read_exact(&mut kind).map_err(truncated_on_eof)?;
    let mut payload = vec![0u8; len - 1];
    r.read_exact(&mut payload).map_err(truncated_on_eof)?;
    Ok(Some((kind[0], payload)))
}

/// Collects bytes as they arrive and hands out whole frames. A header is checked as soon as its four
/// bytes are in, before the rest of its frame. After an error the stream is out of step: every later
/// [`FrameBuf::next`] gives the same error.
#[derive(Debug, Default)]
pub struct FrameBuf {
    buf: Vec<u8>,
    /// Where the unread bytes start in `buf`; the bytes before it are dropped lazily.
    start: usize,
}

impl FrameBuf {
    pub fn new() -> FrameBuf {
        FrameBuf::default()
    }

    pub fn push(&mut self, bytes: &[u8]) {
        // Dropping the read bytes only once they are at least half the buffer keeps the copying
        // proportional to the bytes pushed.
        if self.start > 0 && self.start * 2 >= self.buf.len() {
            self.buf.drain(..self.start);
            self.start = 0;
        }
        self.buf.extend_from_slice(bytes);
    }

    /// The next whole frame, or `Ok(None)` until more bytes arrive.
    #[allow(clippy::should_implement_trait)] // an iterator could not say "not yet" apart from "never"
    pub fn next(&mut self) -> Result<Option<(u8, Vec<u8>)>, WireError> {
        let unread = &self.buf[self.start..];
        let Some(header) = unread.first_chunk::<HEADER>() else {
            return Ok(None);
        };
        let len = checked_len(*header)?;
        let Some(frame) = unread.get(HEADER..HEADER + len) else {
            return Ok(None);
        };
        let found = (frame[0], frame[1..].to_vec());
        self.start += HEADER + len;
        if self.start == self.buf.len() {
            self.buf.clear();
            self.start = 0;
        }
        Ok(Some(found))
    }

    /// The kind of the next whole frame, left in the buffer; `Ok(None)` until it is whole.
    pub fn peek_kind(&self) -> Result<Option<u8>, WireError> {
        let unread = &self.buf[self.start..];
        let Some(header) = unread.first_chunk::<HEADER>() else {
            return Ok(None);
        };
        let len = checked_len(*header)?;
        Ok(unread.get(HEADER + len - 1).and(unread.get(HEADER).copied()))
    }

    /// Puts a frame taken out back in front of what is unread.
    pub fn unread(&mut self, frame: &[u8]) {
        self.buf.splice(self.start..self.start, frame.iter().copied());
    }

    /// How many bytes wait for the rest of their frame.
    pub fn buffered(&self) -> usize {
        self.buf.len() - self.start
    }

    /// For the end of the stream: an error when it ended inside a frame.
    pub fn finish(&self) -> Result<(), WireError> {
        if self.buffered() == 0 {
            Ok(())
        } else {
            Err(WireError::Truncated)
        }
    }
}
