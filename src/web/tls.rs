//! The web view's own HTTPS (`pokeshell.webTlsCert`, `pokeshell.webTlsKey`): rustls with the ring
//! provider, the certificate chain and key read from PEM files when the web view starts. A phone's
//! browser gives a page a service worker (and so Web Push) only over HTTPS.
//!
//! Handshakes run on tasks of their own, each bounded in time and in number, so a client that
//! never finishes one holds up nobody; axum serves the streams whose handshake ended.

use std::io;
use std::net::SocketAddr;
use std::os::unix::fs::MetadataExt;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use rustls::ServerConfig;
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{Semaphore, mpsc};
use tokio_rustls::TlsAcceptor;
use tokio_rustls::server::TlsStream;

/// How long a client may take over its handshake.
const HANDSHAKE: Duration = Duration::from_secs(10);
/// Handshakes under way at once; past them, new connections wait to be accepted.
const HANDSHAKES: usize = 64;

/// The server's TLS from the two files; the errors say which file and what is wrong.
pub fn config(cert: &Path, key: &Path) -> Result<Arc<ServerConfig>, String> {
    let chain: Vec<CertificateDer<'static>> = CertificateDer::pem_file_iter(cert)
        .and_then(|certs| certs.collect::<Result<_, _>>())
        .map_err(|e| format!("pokeshell.webTlsCert: cannot read {}: {e}", cert.display()))?;
    if chain.is_empty() {
        return Err(format!(
            "pokeshell.webTlsCert: {} holds no PEM certificate",
            cert.display()
        ));
    }
    let meta = std::fs::metadata(key)
        .map_err(|e| format!("pokeshell.webTlsKey: cannot read {}: {e}", key.display()))?;
    if meta.mode() & 0o077 != 0 {
        return Err(format!(
            "pokeshell.webTlsKey: {} can be read by other users; make it yours alone (chmod 600)",
            key.display()
        ));
    }
    let secret = PrivateKeyDer::from_pem_file(key).map_err(|e| {
        format!(
            "pokeshell.webTlsKey: cannot read a PEM private key from {}: {e}",
            key.display()
        )
    })?;
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let mut config = ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|e| format!("TLS: {e}"))?
        .with_no_client_auth()
        .with_single_cert(chain, secret)
        .map_err(|e| format!("pokeshell.webTlsCert and webTlsKey do not make a TLS identity: {e}"))?;
    // The WebSocket needs HTTP/1.1's upgrade.
    config.alpn_protocols = vec![b"http/1.1".to_vec()];
    Ok(Arc::new(config))
}

/// TCP connections that became TLS streams, for `axum::serve`.
pub struct TlsListener {
    streams: mpsc::Receiver<(TlsStream<TcpStream>, SocketAddr)>,
    local: SocketAddr,
}

impl TlsListener {
    /// Accepts on `tcp` (on the current runtime) and shakes hands with `config`.
    pub fn new(tcp: TcpListener, config: Arc<ServerConfig>) -> io::Result<TlsListener> {
        let local = tcp.local_addr()?;
        let (tx, streams) = mpsc::channel(HANDSHAKES);
        let acceptor = TlsAcceptor::from(config);
        let room = Arc::new(Semaphore::new(HANDSHAKES));
        tokio::spawn(async move {
            loop {
                let Ok(permit) = room.clone().acquire_owned().await else {
                    return;
                };
                let (tcp, peer) = match tcp.accept().await {
                    Ok(c) => c,
                    Err(_) => {
                        // Out of files, say: let it pass rather than spin.
                        tokio::time::sleep(Duration::from_millis(50)).await;
                        continue;
                    }
                };
                if tx.is_closed() {
                    return;
                }
                // Keys and frames are small writes (see `web::start`).
                let _ = tcp.set_nodelay(true);
                let (acceptor, tx) = (acceptor.clone(), tx.clone());
                tokio::spawn(async move {
                    let shaken = tokio::time::timeout(HANDSHAKE, acceptor.accept(tcp)).await;
                    drop(permit);
                    if let Ok(Ok(stream)) = shaken {
                        let _ = tx.send((stream, peer)).await;
                    }
                });
            }
        });
        Ok(TlsListener { streams, local })
    }
}

impl axum::serve::Listener for TlsListener {
    type Io = TlsStream<TcpStream>;
    type Addr = SocketAddr;

    async fn accept(&mut self) -> (Self::Io, Self::Addr) {
        match self.streams.recv().await {
            Some(s) => s,
            // The acceptor ended (the runtime is going): nothing will come.
            None => std::future::pending().await,
        }
    }

    fn local_addr(&self) -> io::Result<Self::Addr> {
        Ok(self.local)
    }
}
