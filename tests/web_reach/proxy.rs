//! A reverse proxy for the tests, on loopback, as nginx or Caddy stands in front of the web view:
//! it ends TLS with a certificate of the test's own, passes each request on over plain HTTP to the
//! web view (its `Host` kept, as Caddy and `proxy_set_header Host $host` do, or replaced by the
//! upstream's address, as nginx does by default), and then copies both ways, a WebSocket's frames
//! included. One request per connection (`Connection: close`), so that each request's head is
//! the proxy's to rewrite.

use std::net::SocketAddr;
use std::sync::Arc;

use rustls::ServerConfig;
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

/// What the proxy does with the `Host` header.
#[derive(Clone, Copy, PartialEq)]
pub enum HostHeader {
    /// Passed on as the browser sent it.
    Keep,
    /// Replaced by the upstream's address.
    Upstream,
}

/// Listens on `listener` and proxies to `upstream` until the test's runtime ends.
pub fn start(listener: TcpListener, cert_pem: &str, key_pem: &str, upstream: SocketAddr, host: HostHeader) {
    let chain = vec![CertificateDer::from_pem_slice(cert_pem.as_bytes()).expect("the test certificate")];
    let key = PrivateKeyDer::from_pem_slice(key_pem.as_bytes()).expect("the test key");
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let mut config = ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .expect("TLS versions")
        .with_no_client_auth()
        .with_single_cert(chain, key)
        .expect("a TLS identity");
    config.alpn_protocols = vec![b"http/1.1".to_vec()];
    let acceptor = tokio_rustls::TlsAcceptor::from(Arc::new(config));
    tokio::spawn(async move {
        while let Ok((tcp, _)) = listener.accept().await {
            let acceptor = acceptor.clone();
            tokio::spawn(async move {
                if let Ok(tls) = acceptor.accept(tcp).await {
                    let _ = pass(tls, upstream, host).await;
                }
            });
        }
    });
}

async fn pass(
    mut client: tokio_rustls::server::TlsStream<TcpStream>,
    upstream: SocketAddr,
    host: HostHeader,
) -> std::io::Result<()> {
    let mut head = Vec::new();
    let mut byte = [0u8; 1];
    while !head.ends_with(b"\r\n\r\n") {
        if client.read(&mut byte).await? == 0 || head.len() > 64 << 10 {
            return Ok(());
        }
        head.push(byte[0]);
    }
    let text = String::from_utf8_lossy(&head).into_owned();
    let upgrade = text.to_ascii_lowercase().contains("\r\nupgrade:");
    let mut out = String::new();
    for (i, line) in text.trim_end().split("\r\n").enumerate() {
        let name = line.split(':').next().unwrap_or_default().to_ascii_lowercase();
        if i > 0 && name == "host" && host == HostHeader::Upstream {
            out.push_str(&format!("Host: {upstream}\r\n"));
        } else if i > 0 && name == "connection" && !upgrade {
            continue;
        } else {
            out.push_str(line);
            out.push_str("\r\n");
        }
    }
    if !upgrade {
        out.push_str("Connection: close\r\n");
    }
    out.push_str("X-Forwarded-Proto: https\r\n\r\n");
    let mut server = TcpStream::connect(upstream).await?;
    server.write_all(out.as_bytes()).await?;
    tokio::io::copy_bidirectional(&mut client, &mut server).await?;
    Ok(())
}
