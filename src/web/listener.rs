//! The web view's listener: accepts connections within a bound and serves HTTP on each with
//! deadlines, so that connections that never finish cannot use up the server. The web view lives in
//! the server's process: every file it holds is one the server's own socket and the sessions' PTYs
//! cannot have. So:
//!
//! * at most [`web_connection_cap`] connections (an eighth of the process's open files, at most
//!   256); when full, the oldest one that has not proved a login is closed to make room
//!   ([`pokeshell_core::admission`]), and when all are logged in the newcomer is closed at once;
//! * a connection must send a whole request header within [`HEADER_READ`] of opening or of its last
//!   answer (hyper's header timeout: it covers a slow header and an idle kept-alive connection);
//! * an answer (reading the request's body included) must be ready within [`REQUEST`];
//! * a TLS handshake (built-in HTTPS) must end within [`super::tls::HANDSHAKE`];
//! * an error accepting (no file left) waits a moment instead of spinning, and is logged once.
//!
//! A WebSocket outlives its request: its connection stays counted until the socket ends
//! ([`Counted`] leaves the table when its file is closed).

use std::collections::HashMap;
use std::convert::Infallible;
use std::io;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::Duration;

use axum::Router;
use axum::body::Body;
use axum::http::{Request, Response, StatusCode};
use hyper::body::Incoming;
use hyper_util::rt::{TokioIo, TokioTimer};
use pokeshell_core::admission::{Admission, Admit, web_connection_cap};
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::Notify;
use tower::ServiceExt;

/// A connection must have sent a whole request header this long after it opened or after its last
/// answer, or it is closed.
pub const HEADER_READ: Duration = Duration::from_secs(10);
/// An answer must be ready this long after its header arrived (a body sent slowly counts).
pub const REQUEST: Duration = Duration::from_secs(30);
/// After an error accepting (typically no file left), the listener waits this long before trying again.
const ACCEPT_PAUSE: Duration = Duration::from_millis(50);

/// The connections held, and how to close one to make room.
struct Table {
    admission: Mutex<Admission>,
    closers: Mutex<HashMap<u64, Arc<Notify>>>,
}

impl Table {
    fn left(&self, id: u64) {
        if let Ok(mut a) = self.admission.lock() {
            a.left(id);
        }
        if let Ok(mut c) = self.closers.lock() {
            c.remove(&id);
        }
    }
}

/// The connection a request came on, in the request's extensions: a request that proved a login
/// marks its connection trusted ([`super::auth`] does, in its one check).
#[derive(Clone)]
pub struct ConnTag {
    id: u64,
    table: Arc<Table>,
}

impl ConnTag {
    pub fn trust(&self) {
        if let Ok(mut a) = self.table.admission.lock() {
            a.trust(self.id);
        }
    }
}

/// The process's limit on open files (the soft one), or 1024 when it cannot be read.
pub fn open_file_limit() -> u64 {
    let mut lim = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: getrlimit writes into the struct given, nothing else.
    if unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut lim) } != 0 {
        return 1024;
    }
    lim.rlim_cur
}

/// Serves `app` on `listener` until the process ends; over TLS when `tls` is given (the handshake
/// on each connection's own task, within [`super::tls::HANDSHAKE`]).
pub async fn serve(listener: TcpListener, app: Router, tls: Option<Arc<rustls::ServerConfig>>) {
    let acceptor = tls.map(super::tls::TlsAcceptor::from);
    let cap = web_connection_cap(open_file_limit());
    let table = Arc::new(Table {
        admission: Mutex::new(Admission::new(cap)),
        closers: Mutex::new(HashMap::new()),
    });
    let mut failing = false;
    loop {
        let stream = match listener.accept().await {
            Ok((stream, _)) => stream,
            Err(e) => {
                if !failing {
                    eprintln!("pokeshell web: cannot accept a connection ({e}); trying again");
                    failing = true;
                }
                tokio::time::sleep(ACCEPT_PAUSE).await;
                continue;
            }
        };
        if failing {
            eprintln!("pokeshell web: accepting connections again");
            failing = false;
        }
        let admit = match table.admission.lock() {
            Ok(mut a) => a.admit(),
            Err(_) => Admit::Refused,
        };
        let id = match admit {
            Admit::In { id } => id,
            Admit::Replacing { id, close } => {
                if let Some(closer) = table.closers.lock().ok().and_then(|c| c.get(&close).cloned()) {
                    closer.notify_one();
                }
                id
            }
            // Dropping the stream closes it.
            Admit::Refused => continue,
        };
        let closer = Arc::new(Notify::new());
        if let Ok(mut c) = table.closers.lock() {
            c.insert(id, closer.clone());
        }
        // Keys and frames are small writes: Nagle's algorithm would hold them for the peer's
        // delayed acknowledgement (up to 40 ms).
        let _ = stream.set_nodelay(true);
        let io = Counted {
            stream,
            id,
            table: table.clone(),
        };
        let tag = ConnTag {
            id,
            table: table.clone(),
        };
        let app = app.clone();
        match acceptor.clone() {
            None => {
                tokio::spawn(serve_one(io, tag, app, closer));
            }
            Some(acceptor) => {
                tokio::spawn(async move {
                    let shaken = tokio::select! {
                        s = super::tls::accept(&acceptor, io) => s,
                        () = closer.notified() => None,
                    };
                    if let Some(stream) = shaken {
                        serve_one(stream, tag, app, closer).await;
                    }
                });
            }
        }
    }
}

/// Serves HTTP on one connection until it ends, or until it is closed to make room.
async fn serve_one<I>(io: I, tag: ConnTag, app: Router, closer: Arc<Notify>)
where
    I: AsyncRead + AsyncWrite + Unpin + Send + 'static,
{
    let service = hyper::service::service_fn(move |mut req: Request<Incoming>| {
        req.extensions_mut().insert(tag.clone());
        let app = app.clone();
        async move {
            let answer = tokio::time::timeout(REQUEST, app.oneshot(req.map(Body::new))).await;
            Ok::<_, Infallible>(match answer {
                Ok(Ok(res)) => res,
                Ok(Err(never)) => match never {},
                Err(_) => too_slow(),
            })
        }
    });
    let mut http = hyper::server::conn::http1::Builder::new();
    http.timer(TokioTimer::new()).header_read_timeout(HEADER_READ);
    let conn = http.serve_connection(TokioIo::new(io), service).with_upgrades();
    tokio::select! {
        _ = conn => {}
        () = closer.notified() => {}
    }
}

fn too_slow() -> Response<Body> {
    let mut res = Response::new(Body::from("pokeshell: this request took too long to arrive."));
    *res.status_mut() = StatusCode::REQUEST_TIMEOUT;
    res.headers_mut().insert(
        axum::http::header::CONTENT_TYPE,
        axum::http::HeaderValue::from_static("text/plain; charset=utf-8"),
    );
    super::routes::harden(res.headers_mut());
    res
}

/// A TCP connection counted in the table until its file is closed, wherever it went (hyper's
/// connection, then a WebSocket's task).
struct Counted {
    stream: TcpStream,
    id: u64,
    table: Arc<Table>,
}

impl Drop for Counted {
    fn drop(&mut self) {
        self.table.left(self.id);
    }
}

impl AsyncRead for Counted {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        Pin::new(&mut self.stream).poll_read(cx, buf)
    }
}

impl AsyncWrite for Counted {
    fn poll_write(mut self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &[u8]) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.stream).poll_write(cx, buf)
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.stream).poll_write_vectored(cx, bufs)
    }

    fn is_write_vectored(&self) -> bool {
        self.stream.is_write_vectored()
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.stream).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.stream).poll_shutdown(cx)
    }
}
