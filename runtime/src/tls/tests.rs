//! A router served over TLS with a self-signed certificate (made by `rcgen`): a client that
//! trusts it is answered, one that does not is refused; handshakes that stall or fail hold
//! no other connection; bad certificate, key and CA files are refused naming the file.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::net::SocketAddr;
use std::path::{Path, PathBuf};

use axum::Extension;
use axum::routing::get;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

use super::*;
use crate::daemon::{Api, serve_api};

/// A self-signed certificate for `localhost` and 127.0.0.1, and its key, in a directory of
/// their own.
struct Pki {
    dir: tempfile::TempDir,
    cert: PathBuf,
    key: PathBuf,
}

fn self_signed() -> Pki {
    let dir = tempfile::tempdir().unwrap();
    let made =
        rcgen::generate_simple_self_signed(vec!["localhost".into(), "127.0.0.1".into()]).unwrap();
    let (cert, key) = (dir.path().join("cert.pem"), dir.path().join("key.pem"));
    std::fs::write(&cert, made.cert.pem()).unwrap();
    std::fs::write(&key, made.key_pair.serialize_pem()).unwrap();
    Pki { dir, cert, key }
}

/// Serves a router whose `/served` says how it is served, over TLS with `pki`'s certificate.
async fn serve_tls(pki: &Pki) -> SocketAddr {
    let router = axum::Router::new().route(
        "/served",
        get(|Extension(served): Extension<Served>| async move { format!("tls={}", served.tls) }),
    );
    let api = Api {
        addr: "127.0.0.1:0".parse().unwrap(),
        tls: Some(ServerTls::load(&pki.cert, &pki.key).unwrap()),
        router,
    };
    serve_api(api).await.unwrap().0
}

fn client(ca: Option<&Path>) -> reqwest::Client {
    client_builder(ca).unwrap().build().unwrap()
}

#[tokio::test]
async fn a_client_trusting_the_certificate_is_answered_and_one_that_does_not_is_refused() {
    let pki = self_signed();
    let addr = serve_tls(&pki).await;
    let trusting = client(Some(&pki.cert));
    for url in [
        format!("https://{addr}/served"),
        format!("https://localhost:{}/served", addr.port()),
    ] {
        let answer = trusting.get(&url).send().await.unwrap();
        assert_eq!(answer.status(), 200, "{url}");
        assert_eq!(answer.text().await.unwrap(), "tls=true", "{url}");
    }
    let stranger = client(None);
    let refused = stranger
        .get(format!("https://{addr}/served"))
        .send()
        .await
        .expect_err("a certificate nobody vouches for is not trusted");
    assert!(refused.is_connect(), "{refused:?}");
    // Nothing is answered in clear text on the TLS port.
    let plain = trusting.get(format!("http://{addr}/served")).send().await;
    assert!(plain.is_err(), "{plain:?}");
}

#[tokio::test]
async fn handshakes_that_stall_or_fail_hold_no_other_connection() {
    let pki = self_signed();
    let addr = serve_tls(&pki).await;
    // One client says nothing; another speaks HTTP where TLS is expected.
    let silent = tokio::net::TcpStream::connect(addr).await.unwrap();
    let mut wrong = tokio::net::TcpStream::connect(addr).await.unwrap();
    wrong
        .write_all(b"GET /served HTTP/1.1\r\nhost: x\r\n\r\n")
        .await
        .unwrap();
    let answer = client(Some(&pki.cert))
        .get(format!("https://{addr}/served"))
        .send()
        .await
        .unwrap();
    assert_eq!(answer.status(), 200);
    let mut rest = Vec::new();
    let _ = wrong.read_to_end(&mut rest).await;
    assert!(
        !String::from_utf8_lossy(&rest).contains("tls="),
        "a failed handshake was answered: {rest:?}"
    );
    // The silent one was not served first and dropped: it is still waiting, open (its
    // HANDSHAKE_TIMEOUT is far from over), while the others were answered.
    let mut byte = [0u8; 1];
    let waiting = silent.try_read(&mut byte);
    assert!(
        matches!(&waiting, Err(e) if e.kind() == std::io::ErrorKind::WouldBlock),
        "the silent connection: {waiting:?}"
    );
}

#[tokio::test(flavor = "current_thread", start_paused = true)]
async fn a_handshake_not_done_in_time_is_dropped() {
    let pki = self_signed();
    let addr = serve_tls(&pki).await;
    let mut silent = tokio::net::TcpStream::connect(addr).await.unwrap();
    let mut byte = [0u8; 1];
    // Paused time: the clock jumps to the next timer, the server's handshake timeout before
    // this one.
    let read = tokio::time::timeout(HANDSHAKE_TIMEOUT * 3, silent.read(&mut byte)).await;
    match read {
        Ok(Ok(0) | Err(_)) => {}
        other => panic!("the silent connection was not closed: {other:?}"),
    }
}

#[test]
fn bad_certificate_and_key_files_are_refused_naming_them() {
    let pki = self_signed();
    let other = self_signed();
    let garbage = pki.dir.path().join("garbage.pem");
    std::fs::write(&garbage, "not a key at all\n").unwrap();
    let cut = pki.dir.path().join("cut.pem");
    std::fs::write(&cut, "-----BEGIN PRIVATE KEY-----\nMIIB\n").unwrap();
    let missing = pki.dir.path().join("missing.pem");
    let refusal = |cert: &Path, key: &Path| ServerTls::load(cert, key).unwrap_err().to_string();
    let cases = [
        (refusal(&pki.cert, &garbage), &garbage, "no PEM private key"),
        (
            refusal(&pki.cert, &pki.cert),
            &pki.cert,
            "no PEM private key",
        ),
        (refusal(&pki.cert, &cut), &cut, "not a PEM file"),
        (refusal(&pki.key, &pki.key), &pki.key, "no PEM certificate"),
        (refusal(&pki.cert, &other.key), &other.key, "does not match"),
        (refusal(&missing, &pki.key), &missing, "cannot open"),
    ];
    for (error, file, why) in cases {
        assert!(
            error.contains(&file.display().to_string()) && error.contains(why),
            "{error}"
        );
    }
    assert!(ServerTls::load(&pki.cert, &pki.key).is_ok());
    let half = TlsArgs {
        tls_cert: Some(pki.cert.clone()),
        tls_key: None,
    };
    assert!(half.load().unwrap_err().to_string().contains("--tls-key"));
    assert!(TlsArgs::default().load().unwrap().is_none());
}

#[test]
fn an_api_ca_file_is_read_at_once_and_refused_naming_it() {
    let pki = self_signed();
    let error = client_config(Some(&pki.key)).unwrap_err().to_string();
    assert!(
        error.contains(&pki.key.display().to_string()) && error.contains("no PEM certificate"),
        "{error}"
    );
    let missing = pki.dir.path().join("missing.pem");
    let error = client_config(Some(&missing)).unwrap_err().to_string();
    assert!(
        error.contains("--api-ca") && error.contains("missing.pem"),
        "{error}"
    );
    assert!(client_config(Some(&pki.cert)).is_ok());
    assert!(client_config(None).is_ok());
}

#[test]
fn only_plain_http_off_loopback_is_in_clear_text() {
    let at = |addr: &str| addr.parse::<SocketAddr>().unwrap();
    assert!(crate::daemon::in_clear_text(at("0.0.0.0:7700"), false));
    assert!(crate::daemon::in_clear_text(at("[::]:7700"), false));
    assert!(crate::daemon::in_clear_text(at("192.0.2.7:7700"), false));
    assert!(!crate::daemon::in_clear_text(at("127.0.0.1:7700"), false));
    assert!(!crate::daemon::in_clear_text(at("[::1]:7700"), false));
    assert!(!crate::daemon::in_clear_text(at("0.0.0.0:7700"), true));
    assert_eq!(Served { tls: true }.scheme(), "https");
    assert_eq!(Served::default().scheme(), "http");
}
