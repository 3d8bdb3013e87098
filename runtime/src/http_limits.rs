//! Limits of the daemons' HTTP APIs against exhaustion: at most [`MAX_API_CONNECTIONS`]
//! connections are held at once (one more is closed at once: a crowd of idle or slow
//! strangers cannot take the file descriptors the mesh and the store need), a client has
//! [`API_HEADER_READ_TIMEOUT`] to send a request's header (a slow-loris connection is closed),
//! and at most [`MAX_HTTP_IN_FLIGHT`] requests are served at once (one more is answered 503 at
//! once, so a flood of requests cannot queue without bound or starve the actor). Body sizes
//! are limited per route by the APIs themselves (`MAX_DOCUMENT_BYTES` for definitions,
//! `MAX_COMPLETION_BODY_BYTES` for completions, axum's 2 MiB elsewhere). The connection limits
//! are applied by the API's accept loop (`crate::daemon::serve_api`).

use std::sync::Arc;
use std::time::Duration;

use axum::extract::Request;
use axum::http::StatusCode;
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use tokio::sync::Semaphore;

/// The most HTTP requests one daemon serves at once (long waits such as `GET
/// /instances/{id}/wait` included); one more gets 503 and `Retry-After: 1`.
pub const MAX_HTTP_IN_FLIGHT: usize = 1024;

/// The most connections one daemon's HTTP API holds at once, TLS handshakes under way
/// included; one more is closed as soon as it is accepted (and the refusals are logged, at
/// most every few seconds). Above [`MAX_HTTP_IN_FLIGHT`], so that a crowd of real requests
/// is answered 503 (a client knows to come back) before connections are closed; the daemon
/// raises its open-files limit to make room for them next to the mesh's and RocksDB's
/// ([`raise_open_files`]).
pub const MAX_API_CONNECTIONS: usize = 2 * MAX_HTTP_IN_FLIGHT;

/// Open files a daemon wants: the API's connections and as many again for the mesh's
/// connections, RocksDB's files and the rest.
pub const OPEN_FILES_WANTED: u64 = 2 * MAX_API_CONNECTIONS as u64;

/// The most this process raises its soft limit of open files to: commands a node starts
/// inherit it, and an unlimited hard limit (macOS) cannot be a soft one.
pub const OPEN_FILES_RAISED_TO: u64 = 16 * OPEN_FILES_WANTED;

/// Raises this process's soft limit of open files towards its hard limit (at most
/// [`OPEN_FILES_RAISED_TO`]), as Go's runtime does for every program: the common soft default
/// (1024) is below what [`MAX_API_CONNECTIONS`] assumes. Says so when the limit stays below
/// [`OPEN_FILES_WANTED`]. Returns the soft limit now in force (None when it cannot be read).
pub fn raise_open_files() -> Option<u64> {
    use nix::sys::resource::{Resource, getrlimit, setrlimit};
    let (soft, hard) = match getrlimit(Resource::RLIMIT_NOFILE) {
        Ok(limits) => limits,
        Err(e) => {
            tracing::warn!("cannot read the limit of open files: {e}");
            return None;
        }
    };
    let target = hard.min(OPEN_FILES_RAISED_TO);
    let now = if soft < target {
        match setrlimit(Resource::RLIMIT_NOFILE, target, hard) {
            Ok(()) => target,
            Err(e) => {
                tracing::warn!("cannot raise the limit of open files from {soft} to {target}: {e}");
                soft
            }
        }
    } else {
        soft
    };
    if now < OPEN_FILES_WANTED {
        tracing::warn!(
            "this process may open only {now} files, fewer than the {OPEN_FILES_WANTED} its \
             limits assume (MAX_API_CONNECTIONS connections and as many again for the mesh and \
             the store): raise it (`ulimit -n`, or LimitNOFILE= in a systemd unit)"
        );
    }
    Some(now)
}

/// How long a client of an HTTP API has to send a whole request header (from the connection's
/// start, or from the end of its previous answer on a kept-alive connection) before its
/// connection is closed: a client sending its header a byte at a time, or nothing, does not
/// hold a connection for ever. An idle kept-alive connection is closed after as long.
pub const API_HEADER_READ_TIMEOUT: Duration = Duration::from_secs(10);

/// The limits an API's accept loop applies to its connections.
#[derive(Debug, Clone, Copy)]
pub(crate) struct ConnectionLimits {
    /// The most connections held at once.
    pub max_connections: usize,
    /// How long a request header may take.
    pub header_read_timeout: Duration,
}

impl ConnectionLimits {
    /// A daemon's: [`MAX_API_CONNECTIONS`], [`API_HEADER_READ_TIMEOUT`].
    pub const API: ConnectionLimits = ConnectionLimits {
        max_connections: MAX_API_CONNECTIONS,
        header_read_timeout: API_HEADER_READ_TIMEOUT,
    };
}

/// `router` behind the in-flight limit.
pub fn limited(router: axum::Router) -> axum::Router {
    limited_to(router, MAX_HTTP_IN_FLIGHT)
}

fn limited_to(router: axum::Router, most: usize) -> axum::Router {
    let slots = Arc::new(Semaphore::new(most));
    router.layer(axum::middleware::from_fn(
        move |request: Request, next: Next| {
            let slots = slots.clone();
            async move {
                match slots.try_acquire_owned() {
                    Ok(_slot) => next.run(request).await,
                    Err(_) => busy(),
                }
            }
        },
    ))
}

fn busy() -> Response {
    (
        StatusCode::SERVICE_UNAVAILABLE,
        [(axum::http::header::RETRY_AFTER, "1")],
        axum::Json(serde_json::json!({
            "error": format!(
                "busy: {MAX_HTTP_IN_FLIGHT} requests are under way (MAX_HTTP_IN_FLIGHT); try again"
            )
        })),
    )
        .into_response()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_open_files_limit_is_raised_towards_the_hard_one() {
        use nix::sys::resource::{Resource, getrlimit};
        let (before, hard) = getrlimit(Resource::RLIMIT_NOFILE).expect("readable");
        let now = raise_open_files().expect("the limit is readable");
        let (soft, _) = getrlimit(Resource::RLIMIT_NOFILE).expect("readable");
        let expected = before.max(hard.min(OPEN_FILES_RAISED_TO));
        assert_eq!((now, soft), (expected, expected));
    }

    #[tokio::test]
    async fn past_the_limit_requests_are_answered_busy_at_once() {
        let (gate, held) = tokio::sync::watch::channel(false);
        let entered = Arc::new(std::sync::atomic::AtomicUsize::new(0));
        let inside = entered.clone();
        let router = axum::Router::new().route(
            "/slow",
            axum::routing::get(move || {
                let mut held = held.clone();
                inside.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                async move {
                    let _ = held.wait_for(|open| *open).await;
                    "done"
                }
            }),
        );
        let router = limited_to(router, 4);
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        tokio::spawn(async move { axum::serve(listener, router).await });
        let url = format!("http://{addr}/slow");
        let waiting: Vec<_> = (0..4)
            .map(|_| tokio::spawn(reqwest_get(url.clone())))
            .collect();
        // Once every slot is taken, one more is refused at once.
        while entered.load(std::sync::atomic::Ordering::SeqCst) < 4 {
            tokio::time::sleep(std::time::Duration::from_millis(5)).await;
        }
        assert_eq!(reqwest_get(url.clone()).await, 503);
        gate.send_replace(true);
        for w in waiting {
            assert_eq!(w.await.unwrap(), 200);
        }
    }

    async fn reqwest_get(url: String) -> u16 {
        use tokio::io::{AsyncReadExt, AsyncWriteExt};
        let addr = url
            .trim_start_matches("http://")
            .split('/')
            .next()
            .unwrap()
            .to_owned();
        let mut stream = tokio::net::TcpStream::connect(addr).await.unwrap();
        stream
            .write_all(b"GET /slow HTTP/1.1\r\nhost: x\r\nconnection: close\r\n\r\n")
            .await
            .unwrap();
        let mut head = [0u8; 12];
        stream.read_exact(&mut head).await.unwrap();
        std::str::from_utf8(&head[9..12]).unwrap().parse().unwrap()
    }
}
