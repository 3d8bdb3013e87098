//! Serving a router over TLS: `axum::serve` speaks only plain TCP, so this loop accepts,
//! hands each connection to a task of its own that does the handshake (under
//! [`HANDSHAKE_TIMEOUT`]) and then serves HTTP/1.1 on it with hyper-util's connection
//! builder. A client that never finishes its handshake holds only its own task, never the
//! accept loop. As `axum::serve` does, the connections are closed gracefully (the request
//! under way answered first) once the loop is stopped (its task aborted).

use std::net::SocketAddr;
use std::time::Duration;

use hyper_util::rt::{TokioExecutor, TokioIo};
use hyper_util::server::conn::auto::Builder;
use hyper_util::service::TowerToHyperService;
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::watch;
use tokio_rustls::TlsAcceptor;

use super::ServerTls;

/// How long a client has to finish its TLS handshake before its connection is dropped.
pub const HANDSHAKE_TIMEOUT: Duration = Duration::from_secs(10);

/// How long the loop waits after accepting failed (out of file descriptors), as
/// `axum::serve` does, so that the error is not retried in a busy loop.
const ACCEPT_ERROR_PAUSE: Duration = Duration::from_secs(1);

/// Serves `router` over TLS with `tls` on `listener`, until the task running it is aborted.
pub(crate) async fn serve(listener: TcpListener, router: axum::Router, tls: &ServerTls) {
    let acceptor = TlsAcceptor::from(tls.config());
    // Every connection holds a sender; when this loop is dropped, its receiver goes with it
    // and each connection closes gracefully.
    let (stopping, _running) = watch::channel(());
    loop {
        let (tcp, peer) = match listener.accept().await {
            Ok(accepted) => accepted,
            Err(e) => {
                tracing::warn!("the HTTP API cannot accept a connection: {e}");
                tokio::time::sleep(ACCEPT_ERROR_PAUSE).await;
                continue;
            }
        };
        let connection = Connection {
            acceptor: acceptor.clone(),
            router: router.clone(),
            stopping: stopping.clone(),
            peer,
        };
        tokio::spawn(connection.serve(tcp));
    }
}

/// One accepted connection, and what it is served with.
struct Connection {
    acceptor: TlsAcceptor,
    router: axum::Router,
    /// Closed when the accept loop stops.
    stopping: watch::Sender<()>,
    peer: SocketAddr,
}

impl Connection {
    /// The handshake, then HTTP until the client closes or the loop stops.
    async fn serve(self, tcp: TcpStream) {
        let handshake = tokio::time::timeout(HANDSHAKE_TIMEOUT, self.acceptor.accept(tcp));
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
        let service = TowerToHyperService::new(self.router);
        let builder = Builder::new(TokioExecutor::new());
        let connection = builder.serve_connection_with_upgrades(TokioIo::new(stream), service);
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
