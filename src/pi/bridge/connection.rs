//! One accepted connection: peer check, handshake, then lines to the hub until either side ends it.

use std::sync::Arc;
use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::UnixStream;
use tokio::net::unix::{OwnedReadHalf, OwnedWriteHalf};
use tokio::sync::{mpsc, oneshot};
use tokio::time::Instant;

use super::auth;
use super::hub::HubMsg;
use super::lines::{Line, LineSplitter};
use pokeshell_core::bridge::{
    FromBridge, Hello, MAX_LINE_BYTES, PROTOCOL_VERSION, ToBridge, encode_to_bridge, parse_from_bridge,
};

pub struct ConnConfig {
    pub token: String,
    pub our_uid: u32,
    pub hello_timeout: Duration,
}

/// Commands queued for one connection before the hub reports the bridge as not reading.
const WRITER_QUEUE: usize = 1024;

pub async fn serve(conn: u64, stream: UnixStream, config: Arc<ConnConfig>, hub: mpsc::Sender<HubMsg>) {
    let peer = match stream.peer_cred() {
        Ok(cred) => auth::check_peer_uid(cred.uid(), config.our_uid).map(|()| cred.pid()),
        Err(e) => Err(format!("cannot read the peer's credentials: {e}")),
    };
    let peer_pid = match peer {
        Ok(pid) => pid,
        Err(reason) => {
            let _ = hub
                .send(HubMsg::Rejected {
                    reason: format!("refused a bridge connection: {reason}"),
                })
                .await;
            return;
        }
    };
    let (mut reader, mut writer) = stream.into_split();
    let mut splitter = LineSplitter::new(MAX_LINE_BYTES);
    let mut lines = Vec::new();

    let hello = match read_hello(&mut reader, &mut splitter, &mut lines, &config).await {
        Ok(hello) => hello,
        Err(reason) => {
            let _ = reject(&mut writer, &reason).await;
            let _ = hub
                .send(HubMsg::Rejected {
                    reason: format!("refused a bridge connection: {reason}"),
                })
                .await;
            return;
        }
    };

    // The hub answers with the welcome, or with a refusal when another process holds the live connection.
    let (writer_tx, writer_rx) = mpsc::channel(WRITER_QUEUE);
    tokio::spawn(write_loop(writer, writer_rx));
    let (close_tx, mut close_rx) = oneshot::channel();
    let authenticated = HubMsg::Authenticated {
        conn,
        peer_pid,
        hello: Box::new(hello),
        writer: writer_tx,
        close: close_tx,
    };
    if hub.send(authenticated).await.is_err() {
        return;
    }

    // Lines that arrived together with the hello.
    if !forward(conn, std::mem::take(&mut lines), &hub).await {
        return;
    }
    let mut buf = vec![0u8; 64 * 1024];
    loop {
        let read = tokio::select! {
            read = reader.read(&mut buf) => read,
            _ = &mut close_rx => return,
        };
        let reason = match read {
            Ok(0) => "the bridge closed the connection".to_owned(),
            Ok(n) => {
                splitter.push(&buf[..n], &mut lines);
                if !forward(conn, std::mem::take(&mut lines), &hub).await {
                    return;
                }
                continue;
            }
            Err(e) => format!("reading from the bridge failed: {e}"),
        };
        let cut = splitter.pending_bytes();
        if cut > 0 {
            let warning = format!("the connection ended in the middle of a line; {cut} bytes discarded");
            let _ = hub
                .send(HubMsg::Warning {
                    conn,
                    reason: warning,
                })
                .await;
        }
        let _ = hub.send(HubMsg::Closed { conn, reason }).await;
        return;
    }
}

/// Reads lines until the first one, which must be a valid hello. Returns why it is refused otherwise.
async fn read_hello(
    reader: &mut OwnedReadHalf,
    splitter: &mut LineSplitter,
    lines: &mut Vec<Line>,
    config: &ConnConfig,
) -> Result<Hello, String> {
    let deadline = Instant::now() + config.hello_timeout;
    let mut buf = vec![0u8; 16 * 1024];
    while lines.is_empty() {
        let n = match tokio::time::timeout_at(deadline, reader.read(&mut buf)).await {
            Err(_) => return Err(format!("no hello within {} ms", config.hello_timeout.as_millis())),
            Ok(Err(e)) => return Err(format!("reading the hello failed: {e}")),
            Ok(Ok(0)) => return Err("the peer closed the connection before its hello".to_owned()),
            Ok(Ok(n)) => n,
        };
        splitter.push(&buf[..n], lines);
    }
    let first = lines.remove(0);
    let line = match first {
        Line::Oversized { bytes } => return Err(format!("the hello line is {bytes} bytes, over the limit")),
        Line::Complete(line) => line,
    };
    let hello = match parse_from_bridge(&line) {
        Ok(FromBridge::Hello(hello)) => hello,
        Ok(_) => return Err("the first line is not a hello".to_owned()),
        Err(e) => return Err(format!("the first line is not a valid hello: {e}")),
    };
    if !auth::token_matches(&config.token, &hello.token) {
        return Err("wrong token".to_owned());
    }
    if hello.protocol != PROTOCOL_VERSION {
        return Err(format!(
            "the bridge speaks protocol {}, this pokeshell speaks {PROTOCOL_VERSION}",
            hello.protocol
        ));
    }
    Ok(hello)
}

/// Parses and hands lines to the hub; false when the hub is gone.
async fn forward(conn: u64, lines: Vec<Line>, hub: &mpsc::Sender<HubMsg>) -> bool {
    for line in lines {
        let msg = match line {
            Line::Oversized { bytes } => HubMsg::Warning {
                conn,
                reason: format!("skipped a line of {bytes} bytes (limit {MAX_LINE_BYTES})"),
            },
            Line::Complete(line) if line.iter().all(u8::is_ascii_whitespace) => continue,
            Line::Complete(line) => match parse_from_bridge(&line) {
                Ok(msg) => HubMsg::Line {
                    conn,
                    msg: Box::new(msg),
                },
                Err(e) => HubMsg::Warning {
                    conn,
                    reason: format!("skipped a malformed line ({e}): {}", preview(&line)),
                },
            },
        };
        if hub.send(msg).await.is_err() {
            return false;
        }
    }
    true
}

fn preview(line: &[u8]) -> String {
    const MAX: usize = 120;
    let text = String::from_utf8_lossy(&line[..line.len().min(MAX)]).into_owned();
    if line.len() > MAX {
        format!("{text}…")
    } else {
        text
    }
}

async fn reject(writer: &mut OwnedWriteHalf, reason: &str) -> std::io::Result<()> {
    let msg = ToBridge::Rejected {
        reason: reason.to_owned(),
    };
    let line = encode_to_bridge(&msg).map_err(std::io::Error::other)?;
    // A peer that does not read must not hold the connection task.
    let write = async {
        writer.write_all(line.as_bytes()).await?;
        writer.shutdown().await
    };
    tokio::time::timeout(Duration::from_secs(1), write)
        .await
        .map_err(std::io::Error::other)?
}

async fn write_loop(mut writer: OwnedWriteHalf, mut lines: mpsc::Receiver<String>) {
    while let Some(line) = lines.recv().await {
        if writer.write_all(line.as_bytes()).await.is_err() {
            return;
        }
    }
    let _ = writer.shutdown().await;
}
