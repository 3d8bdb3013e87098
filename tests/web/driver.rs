//! A real browser for the browser tests: chromedriver on a free port (killed when dropped),
//! headless Chromium sessions at phone width, screenshots beside the test binaries, and
//! waiting for a page to show something with a deadline (never for luck).
// Shared by the `browser` and `browser_deploy` test binaries: each uses a part.
#![allow(dead_code)]

use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use fantoccini::{Client, ClientBuilder};
use mobiwf_tests::harness::{CLI_TIMEOUT, Controller};
use serde_json::json;

/// How long a page may take to show what is awaited.
pub(crate) const SOON: Duration = Duration::from_secs(30);

/// How often a page is looked at while waiting for it to change.
pub(crate) const POLL: Duration = Duration::from_millis(25);

/// What a test says when it is skipped for want of chromedriver.
pub(crate) const SKIPPED: &str = "skipped: chromedriver is not installed (apt-get install \
                                  chromium chromium-driver, as scripts/setup does)";

/// chromedriver, killed when dropped.
pub(crate) struct Driver {
    child: Child,
    pub(crate) url: String,
}

impl Drop for Driver {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The chromedriver on the PATH, if there is one.
pub(crate) fn chromedriver() -> Option<PathBuf> {
    std::env::var_os("PATH")?
        .to_str()?
        .split(':')
        .map(|dir| PathBuf::from(dir).join("chromedriver"))
        .find(|p| p.is_file())
}

/// Starts chromedriver on a free port and waits until it answers.
pub(crate) fn start_driver(binary: &PathBuf) -> Driver {
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let child = Command::new(binary)
        .arg(format!("--port={port}"))
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let driver = Driver {
        child,
        url: format!("http://127.0.0.1:{port}"),
    };
    mobiwf_tests::harness::wait_for("chromedriver to listen", SOON, || {
        std::net::TcpStream::connect(("127.0.0.1", port)).ok()
    });
    driver
}

/// A new headless browser at phone width.
pub(crate) async fn browser(driver: &Driver) -> Client {
    let mut options = json!({
        "args": ["--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage"],
        "mobileEmulation": { "deviceMetrics": { "width": 390, "height": 844, "pixelRatio": 1 } },
    });
    if std::path::Path::new("/usr/bin/chromium").exists() {
        options["binary"] = json!("/usr/bin/chromium");
    }
    let mut caps = serde_json::Map::new();
    caps.insert("goog:chromeOptions".to_owned(), options);
    let connector = hyper_util::client::legacy::connect::HttpConnector::new();
    ClientBuilder::new(connector)
        .capabilities(caps)
        .connect(&driver.url)
        .await
        .expect("a chromedriver session")
}

/// `mobiwf-controller login-link --role ROLE --path PATH`: the URL it prints.
pub(crate) fn console_link(controller: &Controller, role: &str, path: &str) -> String {
    let out = controller.cli(&["login-link", "--role", role, "--path", path], CLI_TIMEOUT);
    out.expect_code(0, &format!("login-link --role {role}"));
    out.stdout.trim().to_owned()
}

/// Where the screenshots go: `screenshots/` beside the test binaries' `deps/`.
fn screenshots() -> PathBuf {
    let exe = std::env::current_exe().unwrap();
    let profile = exe.parent().and_then(|d| d.parent()).unwrap();
    let dir = profile.join("screenshots");
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// A screenshot of `client`'s page as `NAME.png`.
pub(crate) async fn shoot(client: &Client, name: &str) {
    let png = client.screenshot().await.unwrap();
    assert!(png.starts_with(b"\x89PNG"), "a screenshot is a PNG");
    let file = screenshots().join(format!("{name}.png"));
    std::fs::write(&file, png).unwrap();
    eprintln!("screenshot: {}", file.display());
}

/// Whether the page has an element matching `css`.
pub(crate) async fn has(client: &Client, css: &str) -> bool {
    let script = format!("return document.querySelector({}) !== null;", json!(css));
    client.execute(&script, vec![]).await.unwrap() == json!(true)
}

/// Waits until `has(css) == present`; how long it took.
pub(crate) async fn until(client: &Client, css: &str, present: bool, what: &str) -> Duration {
    let start = Instant::now();
    while has(client, css).await != present {
        assert!(start.elapsed() < SOON, "{what}: not within {SOON:?}");
        tokio::time::sleep(POLL).await;
    }
    start.elapsed()
}

/// The value of `attribute` of the first element matching `css` (null when none).
pub(crate) async fn attribute(client: &Client, css: &str, attribute: &str) -> serde_json::Value {
    let script = format!(
        "var el = document.querySelector({}); return el ? el.getAttribute({}) : null;",
        json!(css),
        json!(attribute)
    );
    client.execute(&script, vec![]).await.unwrap()
}

/// The text of the first element matching `css` (null when none).
pub(crate) async fn text(client: &Client, css: &str) -> serde_json::Value {
    let script = format!(
        "var el = document.querySelector({}); return el ? el.textContent : null;",
        json!(css)
    );
    client.execute(&script, vec![]).await.unwrap()
}

/// The value of the first form field matching `css` (null when none).
pub(crate) async fn value(client: &Client, css: &str) -> serde_json::Value {
    let script = format!(
        "var el = document.querySelector({}); return el ? el.value : null;",
        json!(css)
    );
    client.execute(&script, vec![]).await.unwrap()
}

/// Sets the value of the first form field matching `css`, as a paste does.
pub(crate) async fn paste(client: &Client, css: &str, text: &str) {
    let script = format!(
        "var el = document.querySelector({}); el.value = arguments[0]; return true;",
        json!(css)
    );
    let done = client.execute(&script, vec![json!(text)]).await.unwrap();
    assert_eq!(done, json!(true), "pasted into {css}");
}

/// A form post made by hand from the page (`fetch`, the session's cookie, the page's own CSRF
/// token from its `csrf-token` meta): the status it is answered with.
pub(crate) async fn forged_post(client: &Client, path: &str) -> serde_json::Value {
    let forged = format!(
        "var done = arguments[arguments.length - 1]; \
         var csrf = document.querySelector('meta[name=\"csrf-token\"]').content; \
         fetch({}, {{ method: 'POST', credentials: 'same-origin', \
           headers: {{ 'content-type': 'application/x-www-form-urlencoded' }}, \
           body: 'csrf=' + encodeURIComponent(csrf) }}) \
           .then(function (r) {{ done(r.status); }}, function (e) {{ done(String(e)); }});",
        json!(path)
    );
    client.execute_async(&forged, vec![]).await.unwrap()
}
