//! The accept loop of a daemon's HTTP API, plain or over TLS (`axum::serve` has no header
//! timeout and no connection cap): each connection takes one of
//! [`MAX_API_CONNECTIONS`](crate::http_limits::MAX_API_CONNECTIONS) slots (none free: it is
//! closed at once), is served by a task of its own (over TLS, after a handshake under
//! [`HANDSHAKE_TIMEOUT`]), with HTTP/1.1 by hyper, which closes it when a request header takes
//! longer than [`API_HEADER_READ_TIMEOUT`](crate::http_limits::API_HEADER_READ_TIMEOUT). A
//! slow client holds only its own task and slot, never the accept loop. Only the header is
//! timed: a body sent slowly or an answer never read holds its slot, and no cap per source
//! address keeps one host from holding them all. As `axum::serve`
//! does, the connections are closed gracefully (the request under way answered first) once
//! the loop is stopped (its task aborted).

#[cfg(test)]
mod tests;

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::{Duration, Instant};

use hyper::server::conn::http1;
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::service::TowerToHyperService;
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{OwnedSemaphorePermit, Semaphore, watch};
use tokio_rustls::TlsAcceptor;

use crate::http_limits::ConnectionLimits;
use crate::tls::HANDSHAKE_TIMEOUT;

/// How long the loop waits after accepting failed (out of file descriptors), as
/// `axum::serve` does, so that the error is not retried in a busy loop.
const ACCEPT_ERROR_PAUSE: Duration = Duration::from_secs(1);

/// The least time between two warnings of connections refused past the cap: a flood of them
/// must not flood the log too.
const REFUSED_WARNING_EVERY: Duration = Duration::from_secs(10);

/// Serves `router` on `listener` (over TLS when given an acceptor) within `limits`, until the
/// task running it is aborted.
pub(crate) async fn serve(
    listener: TcpListener,
    router: axum::Router,
    tls: Option<TlsAcceptor>,
    limits: ConnectionLimits,
) {
    // Every connection holds a sender; when this loop is dropped, its receiver goes with it
    // and each connection closes gracefully.
    let (stopping, _running) = watch::channel(());
    let slots = Arc::new(Semaphore::new(limits.max_connections));
    let mut http = http1::Builder::new();
    http.timer(TokioTimer::new())
        .header_read_timeout(limits.header_read_timeout);
    let mut refused = Refused::default();
    loop {
        let (tcp, peer) = match listener.accept().await {
            Ok(accepted) => accepted,
            // One client's failure (reset before it was accepted): none of the loop's.
            Err(e) if is_connection_error(&e) => continue,
            Err(e) => {
                tracing::warn!("the HTTP API cannot accept a connection: {e}");
                tokio::time::sleep(ACCEPT_ERROR_PAUSE).await;
                continue;
            }
        };
        // Closed at once rather than queued: a queue would hold the descriptors all the same.
        let Ok(slot) = slots.clone().try_acquire_owned() else {
            drop(tcp);
            refused.count(limits.max_connections);
            continue;
        };
        let connection = Connection {
            http: http.clone(),
            router: router.clone(),
            stopping: stopping.clone(),
            peer,
            _slot: slot,
        };
        tokio::spawn(connection.serve(tcp, tls.clone()));
    }
}

/// Whether accepting failed for the connection's own sake, as `axum::serve` tells.
fn is_connection_error(e: &std::io::Error) -> bool {
    use std::io::ErrorKind::{ConnectionAborted, ConnectionRefused, ConnectionReset};
    matches!(
        e.kind(),
        ConnectionAborted | ConnectionRefused | ConnectionReset
    )
}

/// The connections refused past the cap since the last warning of them.
#[derive(Default)]
struct Refused {
    since_warned: u64,
    warned_at: Option<Instant>,
}

impl Refused {
    /// Counts one more, and warns of them unless a warning was given lately.
    fn count(&mut self, cap: usize) {
        self.since_warned += 1;
        if self
            .warned_at
            .is_some_and(|at| at.elapsed() < REFUSED_WARNING_EVERY)
        {
            return;
        }
        tracing::warn!(
            "the HTTP API holds {cap} connections (MAX_API_CONNECTIONS): {} more closed at once",
            self.since_warned
        );
        self.since_warned = 0;
        self.warned_at = Some(Instant::now());
    }
}

/// One accepted connection, and what it is served with.
struct Connection {
    http: http1::Builder,
    router: axum::Router,
    /// Closed when the accept loop stops.
    stopping: watch::Sender<()>,
    peer: SocketAddr,
    /// Its place among the connections held, given back when it ends.
    _slot: OwnedSemaphorePermit,
}

impl Connection {
    /// The handshake if over TLS, then HTTP until the client closes or the loop stops.
    async fn serve(self, tcp: TcpStream, tls: Option<TlsAcceptor>) {
        let Some(acceptor) = tls else {
            return self.http(tcp).await;
        };
        let handshake = tokio::time::timeout(HANDSHAKE_TIMEOUT, acceptor.accept(tcp));
        let stream = tokio::select! {
            done = handshake => match done {
                Ok(Ok(stream)) => stream,
                Ok(Err(e)) => {
                    tracing::debug!("TLS handshake with {} failed: {e}", self.peer);
                    return;
                }
                Err(_) => {
                    tracing::debug!(
                        "TLS handshake with {} not done within {HANDSHAKE_TIMEOUT:?}: dropped",
                        self.peer
                    );
                    return;
                }
            },
            () = self.stopping.closed() => return,
        };
        self.http(stream).await;
    }

    /// HTTP/1.1 on `stream` (upgrades allowed, as `axum::serve` does). hyper's own builder
    /// rather than hyper-util's `auto` one: that one first reads for an HTTP/2 preface with no
    /// timeout, where a silent client would stay for ever.
    async fn http(self, stream: impl AsyncRead + AsyncWrite + Unpin + Send + 'static) {
        let service = TowerToHyperService::new(self.router);
        let connection = self
            .http
            .serve_connection(TokioIo::new(stream), service)
            .with_upgrades();
        tokio::pin!(connection);
        tokio::select! {
            done = connection.as_mut() => {
                if let Err(e) = done {
                    tracing::trace!("HTTP connection with {} ended: {e}", self.peer);
                }
            }
            () = self.stopping.closed() => {
                connection.as_mut().graceful_shutdown();
                let _ = connection.await;
            }
        }
    }
}
