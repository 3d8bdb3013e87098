//! The API's door for request bodies: a body over the document limit is refused with 413 and
//! a JSON error that says the limit and why, whether the request declares its length
//! (`Content-Length`, refused before the body is read) or not (a chunked body, refused as it is
//! read past the limit, where axum's own answer would be a bare "length limit exceeded").

use axum::Json;
use axum::Router;
use axum::extract::{DefaultBodyLimit, Request};
use axum::http::{StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};

use crate::daemon::DocumentLimit;

/// `router` with its request bodies held to `limit`.
pub fn hold_to<S: Clone + Send + Sync + 'static>(
    router: Router<S>,
    limit: DocumentLimit,
) -> Router<S> {
    router
        .layer(DefaultBodyLimit::max(limit.bytes))
        .layer(axum::middleware::from_fn(move |request, next| {
            refuse_oversize(limit, request, next)
        }))
}

async fn refuse_oversize(limit: DocumentLimit, request: Request, next: Next) -> Response {
    if let Some(length) = declared_length(&request).filter(|l| *l > limit.bytes as u64) {
        return too_large(limit.refusal(Some(length)));
    }
    let response = next.run(request).await;
    // A handler's own 413 says why in JSON already; axum's, for a body read past the limit,
    // is plain text.
    if response.status() == StatusCode::PAYLOAD_TOO_LARGE && !is_json(&response) {
        return too_large(limit.refusal(None));
    }
    response
}

fn too_large(why: String) -> Response {
    (
        StatusCode::PAYLOAD_TOO_LARGE,
        Json(serde_json::json!({ "error": why })),
    )
        .into_response()
}

fn is_json(response: &Response) -> bool {
    response
        .headers()
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.starts_with("application/json"))
}

/// The body's length as the request declares it (`Content-Length`).
fn declared_length(request: &Request) -> Option<u64> {
    request
        .headers()
        .get(header::CONTENT_LENGTH)?
        .to_str()
        .ok()?
        .parse()
        .ok()
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use axum::routing::post;
    use tokio::io::{AsyncReadExt, AsyncWriteExt};

    use super::*;

    /// Serves a route that reads its body whole, held to 100 bytes; answers `request` (raw
    /// HTTP/1.1) with the whole response.
    async fn exchange(request: &[u8]) -> String {
        let limit = DocumentLimit {
            bytes: 100,
            store_write: None,
        };
        let app = hold_to(
            Router::new().route(
                "/in",
                post(|body: String| async move { body.len().to_string() }),
            ),
            limit,
        );
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let at = listener.local_addr().unwrap();
        tokio::spawn(async move { axum::serve(listener, app).await });
        let mut stream = tokio::net::TcpStream::connect(at).await.unwrap();
        stream.write_all(request).await.unwrap();
        let mut answer = Vec::new();
        // Bounded: a server that kept the connection open would fail the test, not hang it.
        tokio::time::timeout(
            std::time::Duration::from_secs(30),
            stream.read_to_end(&mut answer),
        )
        .await
        .expect("the server answers and closes")
        .unwrap();
        String::from_utf8(answer).unwrap()
    }

    fn chunked(body: &str) -> Vec<u8> {
        format!(
            "POST /in HTTP/1.1\r\nhost: x\r\nconnection: close\r\ntransfer-encoding: chunked\r\n\r\n{:x}\r\n{body}\r\n0\r\n\r\n",
            body.len()
        )
        .into_bytes()
    }

    #[tokio::test]
    async fn a_chunked_body_over_the_limit_is_refused_in_json_naming_the_limit() {
        let answer = exchange(&chunked(&"x".repeat(150))).await;
        assert!(answer.starts_with("HTTP/1.1 413"), "{answer}");
        assert!(answer.contains("application/json"), "{answer}");
        assert!(
            answer.contains("documents are at most 100 bytes (MAX_DOCUMENT_BYTES)"),
            "{answer}"
        );
        let answer = exchange(&chunked(&"x".repeat(80))).await;
        assert!(answer.starts_with("HTTP/1.1 200"), "{answer}");
        assert!(answer.ends_with("80"), "{answer}");
    }

    #[tokio::test]
    async fn a_declared_length_over_the_limit_is_refused_before_the_body_is_read() {
        // The body is never sent: the answer comes from the headers alone.
        let answer = exchange(
            b"POST /in HTTP/1.1\r\nhost: x\r\nconnection: close\r\ncontent-length: 5000\r\n\r\n",
        )
        .await;
        assert!(answer.starts_with("HTTP/1.1 413"), "{answer}");
        assert!(
            answer.contains("the request's body is 5000 bytes"),
            "{answer}"
        );
    }
}
