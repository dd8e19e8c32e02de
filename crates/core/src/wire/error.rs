//! Why a frame could not be read or a message not decoded ([`WireError`]), and how it reads.

use std::fmt;
use std::io;

use super::kind;

/// Why a frame could not be read or a message not decoded. Any of them leaves the stream of frames
/// out of step or the peer untrustworthy: the connection should end.
#[derive(Debug)]
pub enum WireError {
    /// A header announced more than [`MAX_FRAME`](super::MAX_FRAME) bytes.
    TooLong { len: usize },
    /// A header announced 0 bytes: not even a kind byte.
    Empty,
    /// The stream ended inside a frame.
    Truncated,
    /// No message of this direction has this kind.
    UnknownKind { kind: u8 },
    /// The payload does not fit the kind.
    BadMessage { kind: u8, reason: String },
    /// Reading failed.
    Io(io::Error),
}

impl fmt::Display for WireError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            WireError::TooLong { len } => write!(f, "frame of {len} bytes exceeds the 1 MiB limit"),
            WireError::Empty => write!(f, "frame of 0 bytes: every frame has at least its kind byte"),
            WireError::Truncated => write!(f, "the peer closed the connection in the middle of a frame"),
            WireError::UnknownKind { kind } => {
                write!(
                    f,
                    "bad message of kind {kind:#04x}: no message of this kind goes this way"
                )
            }
            WireError::BadMessage { kind, reason } => match kind::name(*kind) {
                Some(name) => write!(f, "bad message of kind {kind:#04x} ({name}): {reason}"),
                None => write!(f, "bad message of kind {kind:#04x}: {reason}"),
            },
            WireError::Io(e) => write!(f, "reading the connection failed: {e}"),
        }
    }
}

impl std::error::Error for WireError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            WireError::Io(e) => Some(e),
            _ => None,
        }
    }
}

impl From<WireError> for io::Error {
    fn from(e: WireError) -> io::Error {
        match e {
            WireError::Io(e) => e,
            WireError::Truncated => io::Error::new(io::ErrorKind::UnexpectedEof, e.to_string()),
            other => io::Error::new(io::ErrorKind::InvalidData, other.to_string()),
        }
    }
}
