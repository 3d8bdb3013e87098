//! The node's pages in a real browser (headless Chromium through chromedriver, at phone
//! width): alice on D1 and bob on D2 both see an offered item on their own node's page; alice
//! selects it on hers; bob's page drops the item without a reload (the live worklist), and
//! bob's stale Select button, on the item's page he had open, says "no longer available".
//! Screenshots of the pages (PNG) go to `target/<profile>/screenshots/`.
//!
//! Skipped, saying so, when `chromedriver` is not installed (`scripts/setup` installs
//! `chromium chromium-driver`). Nothing waits for luck: each expectation is polled with a
//! deadline.
#![allow(clippy::unwrap_used, clippy::expect_used)]
#![allow(clippy::too_many_lines)] // end-to-end scenarios read best from top to bottom

#[path = "people/documents.rs"]
mod documents;
#[path = "people/mesh.rs"]
mod mesh;
#[path = "web/pages.rs"]
mod pages;

use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use documents::{TECH, workflow};
use fantoccini::{Client, ClientBuilder, Locator};
use mesh::{Mesh, SOON};
use serde_json::json;

/// alice on D1, bob on D2, both in role tech.
const USERS: &str = r#"    <user id="alice" name="Alice" device="D1"><role id="tech"/></user>
    <user id="bob" name="Bob" device="D2"><role id="tech"/></user>"#;

/// How often a page is looked at while waiting for it to change.
const POLL: Duration = Duration::from_millis(25);

/// chromedriver, killed when dropped.
struct Driver {
    child: Child,
    url: String,
}

impl Drop for Driver {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The chromedriver on the PATH, if there is one.
fn chromedriver() -> Option<PathBuf> {
    std::env::var_os("PATH")?
        .to_str()?
        .split(':')
        .map(|dir| PathBuf::from(dir).join("chromedriver"))
        .find(|p| p.is_file())
}

/// Starts chromedriver on a free port and waits until it answers.
fn start_driver(binary: &PathBuf) -> Driver {
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
async fn browser(driver: &Driver) -> Client {
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

/// Where the screenshots go: `screenshots/` beside the test binaries' `deps/`.
fn screenshots() -> PathBuf {
    let exe = std::env::current_exe().unwrap();
    let profile = exe.parent().and_then(|d| d.parent()).unwrap();
    let dir = profile.join("screenshots");
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

async fn shoot(client: &Client, name: &str) {
    let png = client.screenshot().await.unwrap();
    assert!(png.starts_with(b"\x89PNG"), "a screenshot is a PNG");
    let file = screenshots().join(format!("{name}.png"));
    std::fs::write(&file, png).unwrap();
    eprintln!("screenshot: {}", file.display());
}

/// Whether the page has an element matching `css`.
async fn has(client: &Client, css: &str) -> bool {
    let script = format!("return document.querySelector({}) !== null;", json!(css));
    client.execute(&script, vec![]).await.unwrap() == json!(true)
}

/// Waits until `has(css) == present`; how long it took.
async fn until(client: &Client, css: &str, present: bool, what: &str) -> Duration {
    let start = Instant::now();
    while has(client, css).await != present {
        assert!(start.elapsed() < SOON, "{what}: not within {SOON:?}");
        tokio::time::sleep(POLL).await;
    }
    start.elapsed()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_select_on_one_device_drops_the_item_from_the_other_without_a_reload() {
    let Some(binary) = chromedriver() else {
        eprintln!(
            "skipped: chromedriver is not installed (apt-get install chromium chromium-driver, \
             as scripts/setup does)"
        );
        return;
    };
    let mesh = Mesh::start("web-browser", USERS);
    let (d1, d2) = (mesh.node("D1"), mesh.node("D2"));
    let file = mesh.write(
        "inspect.xml",
        &workflow(&[(1, "", &[]), (2, TECH, &[1]), (3, "", &[2])]).replace(
            "<nameActivity>A2</nameActivity>",
            "<nameActivity>Inspect valve V-12</nameActivity>",
        ),
    );
    let id = mesh.controller.submit(&file);
    mesh.wait_item("alice", id, 2, "offered");
    mesh.wait_item("bob", id, 2, "offered");
    let line = format!(r#"li[data-item="{id}/2"]"#);

    let driver = start_driver(&binary);
    let alice = browser(&driver).await;
    let bob = browser(&driver).await;
    let bobs_item = browser(&driver).await;
    let item_path = format!("/items/{id}/2");

    alice
        .goto(&pages::login_link(d1, "alice", None))
        .await
        .unwrap();
    until(&alice, &line, true, "alice's worklist shows the item").await;
    shoot(&alice, "worklist-alice").await;
    bob.goto(&pages::login_link(d2, "bob", None)).await.unwrap();
    until(&bob, &line, true, "bob's worklist shows the item").await;
    bobs_item
        .goto(&pages::login_link(d2, "bob", Some(&item_path)))
        .await
        .unwrap();
    until(
        &bobs_item,
        r#"button[value="select"]"#,
        true,
        "bob's item page",
    )
    .await;
    // A mark that a reload would wipe out.
    bob.execute("window.mobiwfMark = 42; return true;", vec![])
        .await
        .unwrap();

    alice
        .goto(&format!("http://{}{item_path}", d1.api))
        .await
        .unwrap();
    shoot(&alice, "item-alice").await;
    alice
        .find(Locator::Css(r#"button[value="select"]"#))
        .await
        .unwrap()
        .click()
        .await
        .unwrap();
    let selected = Instant::now();
    until(
        &alice,
        ".holder",
        true,
        "alice's page shows her holding the item",
    )
    .await;
    shoot(&alice, "selected-alice").await;

    until(&bob, &line, false, "bob's worklist drops the item").await;
    let took = selected.elapsed();
    eprintln!(
        "bob's page dropped the item {} ms after alice's select",
        took.as_millis()
    );
    let mark = bob
        .execute("return window.mobiwfMark;", vec![])
        .await
        .unwrap();
    assert_eq!(mark, json!(42), "bob's page was not reloaded");
    assert!(
        has(&bob, ".empty").await,
        "bob's worklist says there is nothing to do"
    );
    shoot(&bob, "worklist-bob-after").await;

    bobs_item
        .find(Locator::Css(r#"button[value="select"]"#))
        .await
        .unwrap()
        .click()
        .await
        .unwrap();
    until(&bobs_item, ".gone", true, "bob's stale select is answered").await;
    let said = bobs_item
        .find(Locator::Css(".gone"))
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    assert!(
        said.contains("no longer available"),
        "bob's stale button says: {said}"
    );
    shoot(&bobs_item, "stale-select-bob").await;

    for client in [alice, bob, bobs_item] {
        client.close().await.unwrap();
    }
}
