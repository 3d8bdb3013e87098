//! The accept loop through a real listener on 127.0.0.1: a header never finished, or never
//! begun, is closed after the header timeout; a whole request is answered; past the cap a
//! connection is closed at once while those before it are served, and its slot comes back.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::net::SocketAddr;
use std::time::Duration;

use axum::Extension;
use axum::routing::get;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio::sync::{mpsc, watch};

use super::*;
use crate::daemon::{Api, serve_api};
use crate::tls::Served;

/// Far longer than anything here should take: only a server that never acts reaches it.
const GENEROUS: Duration = Duration::from_secs(20);

/// Serves `router` plainly within `limits`, on a port of its own.
async fn serve_within(router: axum::Router, limits: ConnectionLimits) -> SocketAddr {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(serve(listener, router, None, limits));
    addr
}

/// Everything the server sends until it closes `stream`; fails if it keeps it open.
async fn until_closed(stream: &mut TcpStream) -> String {
    let mut got = Vec::new();
    let read = tokio::time::timeout(GENEROUS, stream.read_to_end(&mut got)).await;
    match read {
        // A reset (the server closing with our bytes unread) is a close too.
        Ok(_) => String::from_utf8_lossy(&got).into_owned(),
        Err(_) => panic!("the server kept the connection open: {got:?}"),
    }
}

/// `GET path` on a connection of its own, closed after the answer.
async fn get_once(addr: SocketAddr, path: &str) -> String {
    let mut stream = TcpStream::connect(addr).await.unwrap();
    let request = format!("GET {path} HTTP/1.1\r\nhost: x\r\nconnection: close\r\n\r\n");
    stream.write_all(request.as_bytes()).await.unwrap();
    until_closed(&mut stream).await
}

fn hello() -> axum::Router {
    axum::Router::new().route("/hello", get(|| async { "hello" }))
}

#[tokio::test]
async fn a_header_never_finished_or_never_begun_is_closed_after_the_timeout() {
    let limits = ConnectionLimits {
        max_connections: 16,
        header_read_timeout: Duration::from_millis(200),
    };
    let addr = serve_within(hello(), limits).await;
    let mut loris = TcpStream::connect(addr).await.unwrap();
    for byte in b"GET /hello HTTP/1.1\r\nhost: x\r\nx-slow: " {
        loris.write_all(&[*byte]).await.unwrap();
    }
    let mut silent = TcpStream::connect(addr).await.unwrap();
    // Meanwhile a whole request is answered.
    assert!(get_once(addr, "/hello").await.ends_with("hello"));
    let answered = until_closed(&mut loris).await;
    assert!(!answered.contains("hello"), "{answered}");
    assert!(!until_closed(&mut silent).await.contains("hello"));
}

#[tokio::test]
async fn a_plain_api_answers_with_how_it_is_served() {
    let router = axum::Router::new().route(
        "/served",
        get(|Extension(served): Extension<Served>| async move { format!("tls={}", served.tls) }),
    );
    let api = Api {
        addr: "127.0.0.1:0".parse().unwrap(),
        tls: None,
        router,
    };
    let (addr, serving) = serve_api(api).await.unwrap();
    let client = crate::tls::client_builder(None).unwrap().build().unwrap();
    let answer = client
        .get(format!("http://{addr}/served"))
        .send()
        .await
        .unwrap();
    assert_eq!(answer.status(), 200);
    assert_eq!(answer.text().await.unwrap(), "tls=false");
    serving.abort();
}

#[tokio::test]
async fn past_the_cap_a_connection_is_closed_at_once_while_earlier_ones_are_served() {
    let (entered, mut inside) = mpsc::unbounded_channel();
    let (gate, held) = watch::channel(false);
    let router = hello().route(
        "/slow",
        get(move || {
            let (entered, mut held) = (entered.clone(), held.clone());
            async move {
                entered.send(()).unwrap();
                let _ = held.wait_for(|open| *open).await;
                "slow"
            }
        }),
    );
    let limits = ConnectionLimits {
        max_connections: 2,
        // Long: only the cap may close a connection here.
        header_read_timeout: Duration::from_secs(3600),
    };
    let addr = serve_within(router, limits).await;
    let held: Vec<_> = (0..2)
        .map(|_| tokio::spawn(get_once(addr, "/slow")))
        .collect();
    // Both slots are taken once both requests are inside.
    for _ in 0..2 {
        inside.recv().await.unwrap();
    }
    let mut third = TcpStream::connect(addr).await.unwrap();
    assert_eq!(until_closed(&mut third).await, "");
    gate.send_replace(true);
    for answer in held {
        assert!(answer.await.unwrap().ends_with("slow"));
    }
    // The slots come back as their connections end (just after the client saw the close).
    let served = tokio::time::timeout(GENEROUS, async {
        loop {
            let answer = get_once(addr, "/hello").await;
            if answer.ends_with("hello") {
                return answer;
            }
            tokio::task::yield_now().await;
        }
    });
    assert!(served.await.is_ok(), "no slot came back");
}
