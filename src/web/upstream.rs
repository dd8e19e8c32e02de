//! The web view's way into the server: a connection to the server's own socket, with the hello
//! every terminal says. A browser's page is then one more client, speaking the same wire protocol.

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::UnixStream;

use crate::ipc::socket;
use pokeshell_core::wire::{self, Down, FrameBuf, Up};

/// One client connection to the server, with what it read and has not handed out yet.
pub struct Upstream {
    stream: UnixStream,
    frames: FrameBuf,
    buf: Vec<u8>,
}

impl Upstream {
    /// Connects and says hello (the token is read from the server's private directory).
    pub async fn connect() -> Result<Upstream, String> {
        let path = socket::socket_path().map_err(|e| format!("cannot find the server's socket: {e}"))?;
        let token = socket::read_token().map_err(|e| format!("cannot read the server's token: {e}"))?;
        let stream = UnixStream::connect(&path)
            .await
            .map_err(|e| format!("cannot reach the pokeshell server: {e}"))?;
        let mut up = Upstream {
            stream,
            frames: FrameBuf::new(),
            buf: vec![0; 64 << 10],
        };
        up.send(&Up::Hello {
            token,
            protocol: wire::PROTOCOL,
        })
        .await?;
        match up.next().await? {
            Some(Down::Welcome { .. }) => Ok(up),
            Some(Down::Error { message }) => Err(message),
            other => Err(format!("the server answered the hello with {other:?}")),
        }
    }

    pub async fn send(&mut self, up: &Up) -> Result<(), String> {
        self.stream
            .write_all(&wire::encode_up(up))
            .await
            .map_err(|e| format!("cannot talk to the pokeshell server: {e}"))
    }

    /// Whatever whole messages arrived, waiting for at least one; empty: the server closed the
    /// connection. Cancellation safe: bytes read are kept until their frame is whole.
    pub async fn read(&mut self) -> Result<Vec<Down>, String> {
        let mut out = Vec::new();
        loop {
            while let Some((kind, payload)) = self.frames.next().map_err(|e| e.to_string())? {
                out.push(wire::decode_down(kind, &payload).map_err(|e| e.to_string())?);
            }
            if !out.is_empty() {
                return Ok(out);
            }
            let n = self
                .stream
                .read(&mut self.buf)
                .await
                .map_err(|e| format!("reading the server failed: {e}"))?;
            if n == 0 {
                return Ok(out);
            }
            self.frames.push(&self.buf[..n]);
        }
    }

    /// The next message; `None` when the server closed the connection.
    pub async fn next(&mut self) -> Result<Option<Down>, String> {
        if let Some((kind, payload)) = self.frames.next().map_err(|e| e.to_string())? {
            return wire::decode_down(kind, &payload)
                .map(Some)
                .map_err(|e| e.to_string());
        }
        loop {
            let n = self
                .stream
                .read(&mut self.buf)
                .await
                .map_err(|e| format!("reading the server failed: {e}"))?;
            if n == 0 {
                return Ok(None);
            }
            self.frames.push(&self.buf[..n]);
            if let Some((kind, payload)) = self.frames.next().map_err(|e| e.to_string())? {
                return wire::decode_down(kind, &payload)
                    .map(Some)
                    .map_err(|e| e.to_string());
            }
        }
    }
}
