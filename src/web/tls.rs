//! The web view's own HTTPS (`pokeshell.webTlsCert`, `pokeshell.webTlsKey`): rustls with the ring
//! provider, the certificate chain and key read from PEM files when the web view starts. A phone's
//! browser gives a page a service worker (and so Web Push) only over HTTPS.
//!
//! Each handshake runs on its connection's own task ([`super::listener`]), bounded in time, and the
//! connection counts against the listener's bound meanwhile: a client that never finishes one
//! holds up nobody.

use std::os::unix::fs::MetadataExt;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use rustls::ServerConfig;
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};
use tokio::io::{AsyncRead, AsyncWrite};
pub use tokio_rustls::TlsAcceptor;
use tokio_rustls::server::TlsStream;

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

/// How long a client may take over its handshake.
pub const HANDSHAKE: Duration = Duration::from_secs(10);

/// The TLS side of one accepted connection, within [`HANDSHAKE`]; `None` when the client did not
/// finish it in time or it failed.
pub async fn accept<I>(acceptor: &TlsAcceptor, io: I) -> Option<TlsStream<I>>
where
    I: AsyncRead + AsyncWrite + Unpin,
{
    match tokio::time::timeout(HANDSHAKE, acceptor.accept(io)).await {
        Ok(Ok(stream)) => Some(stream),
        _ => None,
    }
}
