//! A field user's offline day in a real browser (headless Chromium through chromedriver, at
//! phone width), on the device's own pages: alice's device D1 runs in a network namespace, and
//! so do her browser and its chromedriver (the test drives chromedriver over a second link of
//! its own, which no node uses). On the worklist page she locks an item, sees the link
//! connected, disconnects (the page tells what was kept on the device); her link to the host H
//! is cut; the page still loads from D1; she completes the locked item on it (it waits for the
//! host, and the page's link says so); the link returns, she reconnects on
//! the page, and her completion reaches the item's successor: the controller's status says the
//! instance succeeded, its successor started only after the link came back.
//!
//! Needs root and `ip netns` (skipped otherwise, failing with `MOBIWF_REQUIRE_NETNS=1` as in
//! CI) and chromedriver (skipped, saying so, as `browser` is). Nothing waits for luck: each
//! expectation is polled with a deadline.
#![allow(clippy::unwrap_used, clippy::expect_used)]
#![allow(clippy::too_many_lines)] // end-to-end scenarios read best from top to bottom

#[path = "people/documents.rs"]
mod documents;
#[path = "web/pages.rs"]
mod pages;

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use documents::{TECH, organisation, workflow};
use fantoccini::{Client, ClientBuilder, Locator};
use mobiwf_tests::harness::{CLI_TIMEOUT, Controller, Netns, Node, NodeSpec, ip, wait_for};
use mobiwf_tests::scratch;
use serde_json::{Value, json};

/// alice on D1, in role tech.
const USERS: &str = r#"    <user id="alice" name="Alice" device="D1"><role id="tech"/></user>"#;

/// How long the test waits for something that should happen at once.
const SOON: Duration = Duration::from_secs(30);

/// How long a link break may take to be found: three failed tries over a connection that went
/// silent, each waiting out the 10 s request timeout (as in `offline`).
const BREAK_FOUND: Duration = Duration::from_secs(90);

/// How often a page is looked at while waiting for it to change.
const POLL: Duration = Duration::from_millis(100);

/// A second veth link into the namespace, for the test's talk with chromedriver only: no node
/// listens or dials on it, so cutting the namespace's own link cuts every node's traffic and
/// leaves the test's. Removed when dropped.
struct ControlLink {
    host_veth: String,
    /// The host's address on it.
    host_ip: String,
    /// The namespace's address on it.
    ns_ip: String,
}

impl ControlLink {
    fn create(net: &Netns) -> ControlLink {
        let pid = std::process::id();
        let n = pid % 200 + 20;
        let link = ControlLink {
            host_veth: format!("mwcw{pid}"),
            host_ip: format!("10.232.{n}.1"),
            ns_ip: format!("10.232.{n}.2"),
        };
        let ns_veth = format!("mwcn{pid}");
        let (host_addr, ns_addr) = (format!("{}/24", link.host_ip), format!("{}/24", link.ns_ip));
        let in_ns = |args: &[&str]| {
            let mut all = vec!["netns", "exec", net.name.as_str(), "ip"];
            all.extend_from_slice(args);
            ip(&all).unwrap();
        };
        // From here on, Drop cleans up.
        let veth = [
            "link",
            "add",
            &link.host_veth,
            "type",
            "veth",
            "peer",
            "name",
            &ns_veth,
        ];
        ip(&veth).unwrap();
        ip(&["link", "set", &ns_veth, "netns", &net.name]).unwrap();
        ip(&["addr", "add", &host_addr, "dev", &link.host_veth]).unwrap();
        ip(&["link", "set", &link.host_veth, "up"]).unwrap();
        in_ns(&["addr", "add", &ns_addr, "dev", &ns_veth]);
        in_ns(&["link", "set", &ns_veth, "up"]);
        link
    }
}

impl Drop for ControlLink {
    fn drop(&mut self) {
        // Deleting one end of a veth pair deletes both.
        let _ = Command::new("ip")
            .args(["link", "del", &self.host_veth])
            .output();
    }
}

/// chromedriver in the namespace, killed when dropped.
struct Driver {
    child: Child,
    url: String,
}

impl Drop for Driver {
    fn drop(&mut self) {
        // `ip netns exec` execs chromedriver: the child is chromedriver itself.
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

/// Starts chromedriver in the namespace, reachable from the test over `control`, and waits
/// until it answers.
fn start_driver(binary: &Path, net: &Netns, control: &ControlLink) -> Driver {
    // A port free here is as good a guess as any in a namespace that runs little.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let child = Command::new("ip")
        .args(["netns", "exec", &net.name])
        .arg(binary)
        .arg(format!("--port={port}"))
        .arg(format!("--allowed-ips={}", control.host_ip))
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let driver = Driver {
        child,
        url: format!("http://{}:{port}", control.ns_ip),
    };
    let at: std::net::SocketAddr = format!("{}:{port}", control.ns_ip).parse().unwrap();
    wait_for("chromedriver to listen in the namespace", SOON, || {
        std::net::TcpStream::connect_timeout(&at, Duration::from_secs(1)).ok()
    });
    driver
}

/// A new headless browser at phone width (in the namespace, as its chromedriver is).
async fn browser(driver: &Driver) -> Client {
    let mut options = json!({
        "args": ["--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage"],
        "mobileEmulation": { "deviceMetrics": { "width": 390, "height": 844, "pixelRatio": 1 } },
    });
    if Path::new("/usr/bin/chromium").exists() {
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

/// The text of the first element matching `css`, if there is one.
async fn text(client: &Client, css: &str) -> Option<String> {
    let script = format!(
        "var e = document.querySelector({}); return e === null ? null : e.textContent;",
        json!(css)
    );
    client
        .execute(&script, vec![])
        .await
        .unwrap()
        .as_str()
        .map(str::to_owned)
}

/// Waits until an element matching `css` is on the page, up to `within`; its text.
async fn until(client: &Client, css: &str, within: Duration, what: &str) -> String {
    let start = Instant::now();
    loop {
        if let Some(found) = text(client, css).await {
            return found;
        }
        assert!(
            start.elapsed() < within,
            "{what}: no {css} within {within:?}; the page:\n{}",
            client.source().await.unwrap_or_default()
        );
        tokio::time::sleep(POLL).await;
    }
}

async fn click(client: &Client, css: &str) {
    client
        .find(Locator::Css(css))
        .await
        .unwrap_or_else(|e| panic!("no {css} to click: {e}"))
        .click()
        .await
        .unwrap();
}

/// A controller and the host H outside, alice's device D1 in the namespace; the organisation
/// applied everywhere.
fn field_mesh(net: &Netns, dir: &Path) -> (Controller, Node, Node) {
    let on_host = format!("/ip4/{}/tcp/0", net.host_ip);
    let controller = Controller::start(&dir.join("controller"), &on_host);
    let mut h_spec = NodeSpec::loopback(&dir.join("h"), "H", "1", &controller.address);
    h_spec.listen = on_host;
    let h = Node::start(h_spec);
    let mut d1_spec = NodeSpec::loopback(&dir.join("d1"), "D1", "99", &controller.address);
    d1_spec.listen = format!("/ip4/{}/tcp/0", net.ns_ip);
    d1_spec.api = format!("{}:0", net.ns_ip);
    d1_spec.netns = Some(net.name.clone());
    let d1 = Node::start(d1_spec);
    controller.wait_registered(&["H", "D1"]);
    let file = dir.join("organisation.xml");
    std::fs::write(&file, organisation(USERS)).unwrap();
    controller
        .cli(&["org", "apply", &file.display().to_string()], CLI_TIMEOUT)
        .expect_code(0, "org apply");
    for node in [&h, &d1] {
        wait_for("every node to hold the directory", SOON, || {
            (node.directory_version()? >= 1).then_some(())
        });
    }
    (controller, h, d1)
}

/// alice's item of instance `id` as D1's CLI lists it.
fn item(d1: &Node, id: u64) -> Option<Value> {
    let out = d1.cli(&["worklist", "--user", "alice", "--json"]);
    out.expect_code(0, "worklist --user alice");
    serde_json::from_str::<Value>(&out.stdout)
        .unwrap()
        .as_array()?
        .iter()
        .find(|i| i["instance"].as_u64() == Some(id))
        .cloned()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_person_disconnects_works_offline_and_reconnects_on_the_device_s_page() {
    let Some(net) = Netns::create_or_skip("w") else {
        return;
    };
    let Some(binary) = chromedriver() else {
        eprintln!(
            "skipped: chromedriver is not installed (apt-get install chromium chromium-driver, \
             as scripts/setup does)"
        );
        return;
    };
    let dir = scratch("web-offline").unwrap();
    let (controller, _h, d1) = field_mesh(&net, &dir);
    let file = dir.join("lockable.xml");
    let lockable = format!("{TECH}\n      <disconnected>true</disconnected>");
    std::fs::write(&file, workflow(&[(1, &lockable, &[]), (2, "", &[1])])).unwrap();
    let id = controller.submit(&file);
    wait_for("alice's item on D1", SOON, || {
        item(&d1, id).filter(|i| i["state"] == "offered")
    });

    let control = ControlLink::create(&net);
    let driver = start_driver(&binary, &net, &control);
    let alice = browser(&driver).await;
    let item_path = format!("/items/{id}/1");
    alice
        .goto(&pages::login_link(&d1, "alice", Some(&item_path)))
        .await
        .unwrap();
    click(&alice, r#"button[value="lock"]"#).await;
    wait_for("the lock to be answered by H", SOON, || {
        item(&d1, id).filter(|i| i["state"] == "locked")
    });

    // The worklist: connected to H, a Disconnect button; the page disconnects her.
    let home = format!("http://{}/", d1.api);
    alice.goto(&home).await.unwrap();
    until(
        &alice,
        r#"[data-link="connected"]"#,
        SOON,
        "connected before the cut",
    )
    .await;
    let host = until(
        &alice,
        r#"li[data-host-link="connected"]"#,
        SOON,
        "H's line",
    )
    .await;
    assert!(host.contains("host H: connected"), "{host}");
    click(&alice, "form.disconnect button").await;
    let told = until(&alice, ".told", SOON, "the disconnection's answer").await;
    assert!(
        told.contains("Disconnected: 1 locked item(s) kept on this device"),
        "the page tells what was kept: {told}"
    );
    until(&alice, r#"[data-link="away"]"#, SOON, "alice away").await;
    until(&alice, "form.reconnect", SOON, "a Reconnect button").await;
    wait_for("the controller to mark alice away", SOON, || {
        let org = controller
            .cli(&["org", "show", "--json"], CLI_TIMEOUT)
            .stdout;
        org.contains("\"away\"").then_some(())
    });

    // The link is cut; the device's pages still load, and her locked item is worked on them.
    net.link(false);
    alice.goto(&home).await.unwrap();
    let line = format!(r#"li[data-item="{id}/1"]"#);
    until(&alice, &line, SOON, "the locked item, offline").await;
    alice
        .goto(&format!("http://{}{item_path}", d1.api))
        .await
        .unwrap();
    click(&alice, "form.complete button.primary").await;
    let waits = until(&alice, ".pending", SOON, "the completion waiting for H").await;
    assert!(!waits.is_empty(), "the page says the completion waits");
    // While she is away her actions wait on the device: nothing goes to H, so the page says
    // what waits, not that H is cut off (that takes failed deliveries: `web.rs`, unit tests).
    alice.goto(&home).await.unwrap();
    let waiting = until(
        &alice,
        r#"li[data-host-link="reconnecting"]"#,
        SOON,
        "the page to say an action waits for H",
    )
    .await;
    assert!(waiting.contains("1 action not answered yet"), "{waiting}");
    let status = controller.status(id);
    assert_ne!(
        status["state"], "succeeded",
        "nothing got through: {status:#}"
    );

    // The link returns; she reconnects on the page; her completion reaches the successor.
    let link_back_ms = mobiwf_runtime::process::now_ms();
    net.link(true);
    click(&alice, "form.reconnect button").await;
    let told = until(&alice, ".told", SOON, "the reconnection's answer").await;
    // Her completion goes through the device's outbox as soon as the link is back, which may
    // be before or after the reconnection counts what is on its way (1 action, or 0).
    assert!(
        told.contains("Reconnected") && told.contains("done while away"),
        "the page tells what goes on: {told}"
    );
    let status = wait_for("the instance to succeed", BREAK_FOUND, || {
        let status = controller.status(id);
        (status["state"] == "succeeded").then_some(status)
    });
    let started = status["activities"]
        .as_array()
        .and_then(|acts| acts.iter().find(|a| a["id"] == 2))
        .and_then(|a| a["started_ms"].as_u64())
        .unwrap_or_else(|| panic!("no start of the successor in {status:#}"));
    assert!(
        started >= link_back_ms,
        "the successor started at {started}, before the link came back at {link_back_ms}"
    );
    // Her page comes back to connected: nothing waits, nothing is cut off. Without a reload:
    // the host's answer may reach the device only after the Reconnect's page was drawn (it
    // then counted her completion as not answered yet), and the page fetches its link again.
    until(
        &alice,
        r#"[data-link="connected"]"#,
        BREAK_FOUND,
        "the page to say connected again",
    )
    .await;
    alice.close().await.unwrap();
}
