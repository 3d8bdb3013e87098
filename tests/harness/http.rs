//! Asking a daemon's HTTP API, and reading its Prometheus metrics.

use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::time::Duration;

/// The API token files of the daemons this test started, by their API address: what
/// [`http_get`] shows (the controller's `operator.token`, a node's `api.token`).
static API_TOKENS: std::sync::Mutex<Vec<(String, PathBuf)>> = std::sync::Mutex::new(Vec::new());

/// Remembers that the daemon serving its API on `api` keeps its administrator's token in
/// `file`.
pub fn remember_api_token(api: &str, file: &Path) {
    let mut known = API_TOKENS.lock().unwrap();
    known.retain(|(a, _)| a != api);
    known.push((api.to_owned(), file.to_owned()));
}

/// The administrator's token of the daemon serving on `api`, if this test started it.
pub fn api_token_of(api: &str) -> Option<String> {
    let file = API_TOKENS
        .lock()
        .unwrap()
        .iter()
        .find(|(a, _)| a == api)
        .map(|(_, f)| f.clone())?;
    std::fs::read_to_string(file)
        .ok()
        .map(|t| t.trim().to_owned())
}

/// An HTTP answer: its status, its head (status line and headers) and its body.
#[derive(Debug)]
pub struct HttpAnswer {
    /// The status code.
    pub status: u16,
    /// The status line and headers, as sent.
    pub head: String,
    /// The body (de-chunked).
    pub body: String,
}

/// A plain HTTP/1.1 request: `method path` on `addr` (HOST:PORT), with `Authorization:
/// Bearer TOKEN` when `token` is given, and a JSON `body` when given.
pub fn http_request(
    addr: &str,
    method: &str,
    path: &str,
    token: Option<&str>,
    body: Option<&str>,
) -> Result<HttpAnswer, String> {
    use std::net::{TcpStream, ToSocketAddrs};
    let sock = addr
        .to_socket_addrs()
        .map_err(|e| format!("{addr}: {e}"))?
        .next()
        .ok_or_else(|| format!("{addr}: no address"))?;
    let mut stream = TcpStream::connect_timeout(&sock, Duration::from_secs(5))
        .map_err(|e| format!("connect {addr}: {e}"))?;
    stream
        .set_read_timeout(Some(Duration::from_secs(10)))
        .map_err(|e| e.to_string())?;
    let auth = token.map_or(String::new(), |t| format!("Authorization: Bearer {t}\r\n"));
    let content = body.map_or(String::new(), |b| {
        format!(
            "Content-Type: application/json\r\nContent-Length: {}\r\n",
            b.len()
        )
    });
    write!(
        stream,
        "{method} {path} HTTP/1.1\r\nHost: {addr}\r\n{auth}{content}Connection: close\r\n\r\n{}",
        body.unwrap_or("")
    )
    .map_err(|e| format!("write to {addr}: {e}"))?;
    let mut raw = String::new();
    stream
        .read_to_string(&mut raw)
        .map_err(|e| format!("read from {addr}: {e}"))?;
    let (head, body) = raw
        .split_once("\r\n\r\n")
        .ok_or_else(|| format!("no HTTP answer: {raw:?}"))?;
    let status = head
        .split_whitespace()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .ok_or_else(|| format!("no HTTP status: {head:?}"))?;
    let body = if head
        .to_ascii_lowercase()
        .contains("transfer-encoding: chunked")
    {
        dechunk(body)
    } else {
        body.to_owned()
    };
    Ok(HttpAnswer {
        status,
        head: head.to_owned(),
        body,
    })
}

/// A plain HTTP/1.1 GET of `path` on `addr` (HOST:PORT), showing the token of the daemon
/// there when this test started it; the body on a 2xx answer.
pub fn http_get(addr: &str, path: &str) -> Result<String, String> {
    let token = api_token_of(addr);
    let answer = http_request(addr, "GET", path, token.as_deref(), None)?;
    if !(200..300).contains(&answer.status) {
        return Err(format!("GET {path} on {addr}: {}", answer.head));
    }
    Ok(answer.body)
}

fn dechunk(mut body: &str) -> String {
    let mut out = String::new();
    while let Some((size, rest)) = body.split_once("\r\n") {
        let Ok(n) = usize::from_str_radix(size.trim(), 16) else {
            break;
        };
        if n == 0 || rest.len() < n {
            break;
        }
        out.push_str(&rest[..n]);
        body = rest[n..].trim_start_matches("\r\n");
    }
    out
}

/// The sum of the samples of metric `name` (e.g. `mobiwf_send_failures_total`) whose labels
/// include every one of `labels`, in a Prometheus text page. 0 when there are none.
pub fn metric(page: &str, name: &str, labels: &[(&str, &str)]) -> f64 {
    let mut total = 0.0;
    for line in page.lines() {
        if line.starts_with('#') {
            continue;
        }
        let Some((series, value)) = line.rsplit_once(' ') else {
            continue;
        };
        let (metric_name, label_text) = match series.split_once('{') {
            Some((n, rest)) => (n, rest.trim_end_matches('}')),
            None => (series, ""),
        };
        if metric_name != name {
            continue;
        }
        let matches = labels.iter().all(|(k, v)| {
            label_text
                .split(',')
                .any(|pair| pair == format!("{k}=\"{v}\""))
        });
        if matches {
            total += value.parse::<f64>().unwrap_or(0.0);
        }
    }
    total
}
