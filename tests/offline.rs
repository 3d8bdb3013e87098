//! Proves a field user's day on the real binaries (WorkToDo's disconnected work): alice's
//! device D1 runs in a network namespace; she locks two items, cannot disconnect while she
//! holds a selected one (exit 5), disconnects, her link is cut, she completes both offline
//! (nothing runs anywhere meanwhile), bob takes her third, unlocked item; the link returns,
//! she reconnects: each successor runs exactly once, the history says she worked offline, and
//! her select of the item bob took says "no longer available". Also: a disconnection whose copy
//! cannot fit its wait is refused with the time it needs (exit 3), one with time enough copies
//! what the item reads onto the device (the user reads it there), and with prefetch a device
//! copies a lockable item's data and files ahead and says it is ready to go offline.
//!
//! The namespace tests need root and `ip netns`; they skip otherwise (`scripts/test` lists
//! the skips; with `MOBIWF_REQUIRE_NETNS=1`, as in CI, they fail).
#![allow(clippy::unwrap_used, clippy::expect_used)]
#![allow(clippy::too_many_lines)] // end-to-end scenarios read best from top to bottom

#[path = "people/documents.rs"]
mod documents;

use std::path::Path;
use std::time::{Duration, Instant};

use documents::{TECH, organisation, workflow};
use mobiwf_tests::harness::{
    CLI_TIMEOUT, Controller, Netns, Node, NodeSpec, metric, start_nodes, wait_for,
};
use mobiwf_tests::scratch;
use serde_json::Value;

/// alice on D1 and bob on D2, both in role tech.
const USERS: &str = r#"    <user id="alice" name="Alice" device="D1"><role id="tech"/></user>
    <user id="bob" name="Bob" device="D2"><role id="tech"/></user>"#;

/// How long the test waits for something that should happen at once.
const SOON: Duration = Duration::from_secs(30);

/// How long a link break may take to be found: three failed tries over a connection that went
/// silent, each waiting out the 10 s request timeout.
const BREAK_FOUND: Duration = Duration::from_secs(90);

/// A manual item for tech that may be taken offline, then an automatic successor.
fn lockable() -> String {
    let item = format!("{TECH}\n      <disconnected>true</disconnected>");
    workflow(&[(1, &item, &[]), (2, "", &[1])])
}

fn apply_org(controller: &Controller, dir: &Path, nodes: &[&Node]) {
    let file = dir.join("organisation.xml");
    std::fs::write(&file, organisation(USERS)).unwrap();
    controller
        .cli(&["org", "apply", &file.display().to_string()], CLI_TIMEOUT)
        .expect_code(0, "org apply");
    let version = serde_json::from_str::<Value>(
        &controller
            .cli(&["org", "show", "--json"], CLI_TIMEOUT)
            .stdout,
    )
    .unwrap()["version"]
        .as_u64()
        .unwrap();
    for node in nodes {
        wait_for("every node to hold the directory", SOON, || {
            (node.directory_version()? >= version).then_some(())
        });
    }
}

fn worklist(device: &Node, user: &str) -> Vec<Value> {
    let out = device.cli(&["worklist", "--user", user, "--json"]);
    out.expect_code(0, &format!("worklist --user {user}"));
    serde_json::from_str::<Value>(&out.stdout)
        .unwrap()
        .as_array()
        .cloned()
        .unwrap()
}

fn item(device: &Node, user: &str, id: u64) -> Option<Value> {
    worklist(device, user)
        .into_iter()
        .find(|i| i["instance"].as_u64() == Some(id) && i["activity"] == 1)
}

fn wait_item(device: &Node, user: &str, id: u64, state: &str) -> Value {
    wait_for(
        format!("{user}'s item of instance {id} to be {state}"),
        SOON,
        || item(device, user, id).filter(|i| i["state"] == state),
    )
}

fn act(device: &Node, user: &str, action: &str, id: u64) -> mobiwf_tests::harness::CmdOutput {
    device.cli(&[action, &id.to_string(), "1", "--user", user])
}

/// A controller, host H and device D2 (bob) on the host's side, device D1 (alice) in the
/// namespace `net`; the organisation applied.
fn field_mesh(net: &Netns, dir: &Path) -> (Controller, Node, Node, Node) {
    let on_host = format!("/ip4/{}/tcp/0", net.host_ip);
    let controller = Controller::start(&dir.join("controller"), &on_host);
    let mut h_spec = NodeSpec::loopback(&dir.join("h"), "H", "1", &controller.address);
    h_spec.listen = on_host.clone();
    let h = Node::start(h_spec);
    let mut d1_spec = NodeSpec::loopback(&dir.join("d1"), "D1", "99", &controller.address);
    d1_spec.listen = format!("/ip4/{}/tcp/0", net.ns_ip);
    d1_spec.api = format!("{}:0", net.ns_ip);
    d1_spec.netns = Some(net.name.clone());
    let d1 = Node::start(d1_spec);
    let mut d2_spec = NodeSpec::loopback(&dir.join("d2"), "D2", "99", &controller.address);
    d2_spec.listen = on_host.clone();
    let d2 = Node::start(d2_spec);
    controller.wait_registered(&["H", "D1", "D2"]);
    apply_org(&controller, dir, &[&h, &d1, &d2]);
    (controller, h, d1, d2)
}

#[test]
fn a_field_user_locks_disconnects_works_offline_and_reconnects() {
    let Some(net) = Netns::create_or_skip("o") else {
        return;
    };
    let dir = scratch("offline-day").unwrap();
    let (controller, h, d1, d2) = field_mesh(&net, &dir);
    let file = dir.join("lockable.xml");
    std::fs::write(&file, lockable()).unwrap();
    let ids: Vec<u64> = (0..3).map(|_| controller.submit(&file)).collect();
    let (first, second, third) = (ids[0], ids[1], ids[2]);
    for id in &ids {
        wait_item(&d1, "alice", *id, "offered");
    }

    // A selected item stays with its host: no disconnection while alice holds one.
    act(&d1, "alice", "select", first).expect_code(0, "alice selects the first item");
    let refused = d1.cli(&["disconnect", "--user", "alice", "--max-wait", "30"]);
    refused.expect_code(5, "disconnect while holding a selected item");
    assert!(
        refused.stderr.contains("selected"),
        "the refusal says why: {}",
        refused.stderr
    );
    act(&d1, "alice", "release", first).expect_code(0, "alice releases it");
    act(&d1, "alice", "lock", first).expect_code(0, "alice locks the first item");
    act(&d1, "alice", "lock", second).expect_code(0, "alice locks the second item");
    wait_item(&d1, "alice", second, "locked");

    d1.cli(&["disconnect", "--user", "alice", "--max-wait", "30"])
        .expect_code(0, "alice disconnects with two locked items");
    // Away: only the locked items show on her device; the controller knows.
    let offline_list = worklist(&d1, "alice");
    let shown: Vec<u64> = offline_list
        .iter()
        .filter_map(|i| i["instance"].as_u64())
        .collect();
    assert_eq!(
        shown,
        [first, second],
        "only locked items while away: {offline_list:#?}"
    );
    wait_for("the controller to mark alice away", SOON, || {
        let org = controller
            .cli(&["org", "show", "--json"], CLI_TIMEOUT)
            .stdout;
        org.contains("\"away\"").then_some(())
    });

    net.link(false);
    for id in [first, second] {
        let out = act(&d1, "alice", "complete", id);
        assert_eq!(
            out.code,
            Some(3),
            "an offline completion waits for the host (exit 3): {out:?}"
        );
    }
    // Bob takes the item alice left unlocked while she is away.
    act(&d2, "bob", "select", third).expect_code(0, "bob selects the third item");
    act(&d2, "bob", "complete", third).expect_code(0, "bob completes it");
    controller
        .wait(third, 30)
        .expect_code(0, "bob's instance succeeds while alice is away");
    // Nothing of alice's work may run anywhere while her link is down: checked below from
    // when each successor started.
    let link_back_ms = mobiwf_runtime::process::now_ms();
    net.link(true);
    let back = Instant::now();
    d1.cli(&["reconnect", "--user", "alice"])
        .expect_code(0, "alice reconnects");
    for id in [first, second] {
        controller
            .wait(id, 60)
            .expect_code(0, "each offline completion carries its instance on");
    }
    eprintln!(
        "both successors ran {:?} after the link came back",
        back.elapsed()
    );
    for id in [first, second] {
        let status = controller.status(id);
        let started = status["activities"]
            .as_array()
            .and_then(|acts| acts.iter().find(|a| a["id"] == 2))
            .and_then(|a| a["started_ms"].as_u64())
            .unwrap_or_else(|| panic!("no start of the successor in {status:#}"));
        assert!(
            started >= link_back_ms,
            "the successor of instance {id} started at {started}, before alice's link came \
             back at {link_back_ms}"
        );
    }
    // Exactly once each: H started A1 and A2 of each of the three instances once, and the
    // first instance's A1 once more (alice selected it, released it, then locked it).
    let page = wait_for("H's /metrics", SOON, || h.metrics().ok());
    let started = metric(&page, "mobiwf_activities_started_total", &[]);
    assert_eq!(started, 7.0, "no activity on H ran twice:\n{page}");
    let history = serde_json::to_string(&controller.history(first)).unwrap();
    assert!(
        history.contains("completed by alice offline at"),
        "the history tells the offline completion and its delivery: {history}"
    );
    // The item bob took while she was away is gone; claiming it says so.
    let taken = act(&d1, "alice", "select", third);
    taken.expect_code(4, "alice selects the item bob took while she was away");
    assert!(
        taken.stderr.contains("no longer available"),
        "{}",
        taken.stderr
    );
}

/// A link that breaks without a disconnection: D1 cannot reach its host H,
/// so H's items are disabled on D1 (a claim is refused at once with why); H cannot reach D1,
/// so alice is inactive there and a new item goes to bob only; when the link returns, the
/// claim waiting in D1's outbox gets through, everything is enabled, and alice has the item H
/// offered her before it found D1 gone, not the one it offered while she was inactive.
#[test]
fn a_broken_link_disables_the_host_s_items_and_makes_the_device_s_users_inactive() {
    let Some(net) = Netns::create_or_skip("b") else {
        return;
    };
    let dir = scratch("offline-link").unwrap();
    let (controller, h, d1, d2) = field_mesh(&net, &dir);
    let file = dir.join("lockable.xml");
    std::fs::write(&file, lockable()).unwrap();
    let first = controller.submit(&file);
    wait_item(&d1, "alice", first, "offered");

    net.link(false);
    // alice's select waits in D1's outbox; its failed deliveries tell D1 the host is gone.
    let pending = act(&d1, "alice", "select", first);
    assert_eq!(
        pending.code,
        Some(3),
        "the select waits for the host: {pending:?}"
    );
    wait_for("H's item to be disabled on D1", BREAK_FOUND, || {
        item(&d1, "alice", first).filter(|i| i["disabled"].is_string())
    });
    let refused = act(&d1, "alice", "lock", first);
    refused.expect_code(1, "a claim on a disabled item is refused at once");
    assert!(
        refused.stderr.contains("cannot be reached"),
        "{}",
        refused.stderr
    );

    // H cannot deliver the next item to D1: alice is inactive there, bob is offered it.
    let second = controller.submit(&file);
    wait_item(&d2, "bob", second, "offered");
    wait_for("H to find D1 unreachable", BREAK_FOUND, || {
        let directory: Value =
            serde_json::from_str(&mobiwf_tests::harness::http_get(&h.api, "/directory").ok()?)
                .ok()?;
        directory["unreachable"]
            .as_array()?
            .iter()
            .any(|d| d == "D1")
            .then_some(())
    });
    let third = controller.submit(&file);
    wait_item(&d2, "bob", third, "offered");

    net.link(true);
    // The waiting select gets through: alice holds the first item, nothing is disabled; the
    // second item's offer, waiting in H's outbox, arrives; the third was never hers.
    wait_item(&d1, "alice", first, "selected");
    wait_item(&d1, "alice", second, "offered");
    assert!(
        item(&d1, "alice", third).is_none(),
        "{:#?}",
        worklist(&d1, "alice")
    );
    assert!(
        worklist(&d1, "alice")
            .iter()
            .all(|i| i["disabled"].is_null()),
        "{:#?}",
        worklist(&d1, "alice")
    );
    let directory: Value =
        serde_json::from_str(&mobiwf_tests::harness::http_get(&h.api, "/directory").unwrap())
            .unwrap();
    assert_eq!(
        directory["unreachable"],
        serde_json::json!([]),
        "{directory}"
    );
}

/// A locked item reading a 3 MB file its device has not copied (`--no-prefetch`): a
/// disconnection with `--max-wait 0` is refused with the time the copy needs (exit 3); one that
/// allows the time copies it and goes; on a device with prefetch, the worklist says the item
/// is ready for offline work before anyone locks it.
#[test]
fn a_copy_that_cannot_fit_the_wait_is_refused_and_prefetch_copies_ahead() {
    let dir = scratch("offline-copy").unwrap();
    let controller = Controller::start(&dir.join("controller"), "/ip4/127.0.0.1/tcp/0");
    let mut nodes = start_nodes(&dir, &controller, &[("H", "1"), ("D2", "99")]).into_iter();
    let (Some(h), Some(d2)) = (nodes.next(), nodes.next()) else {
        unreachable!("two nodes were started")
    };
    let mut d1_spec = NodeSpec::loopback(&dir.join("d1"), "D1", "99", &controller.address);
    d1_spec.extra = vec!["--no-prefetch".to_owned()];
    let d1 = Node::start(d1_spec);
    controller.wait_registered(&["D1"]);
    apply_org(&controller, &dir, &[&h, &d1, &d2]);

    let writer = "<command>head -c 3000000 /dev/zero | tr '\\0' x &gt; \"$MOBIWF_DATA_DIR/photo\"</command><writes>photo</writes>";
    let item = format!("{TECH}\n      <disconnected>true</disconnected><reads>photo</reads>");
    let doc = workflow(&[(1, writer, &[]), (2, &item, &[1])]).replace(
        "</partners>",
        r#"</partners><data><file name="photo"/></data>"#,
    );
    let file = dir.join("photo.xml");
    std::fs::write(&file, doc).unwrap();
    let id = controller.submit(&file);
    let on_d2 = wait_for("bob's device to copy the item ahead", SOON, || {
        worklist(&d2, "bob")
            .into_iter()
            .find(|i| i["instance"].as_u64() == Some(id) && i["offline"] == "ready")
    });
    assert_eq!(on_d2["activity"], 2, "{on_d2:#}");
    let on_d1 = wait_for("alice's item", SOON, || {
        worklist(&d1, "alice")
            .into_iter()
            .find(|i| i["instance"].as_u64() == Some(id))
    });
    assert_eq!(
        on_d1["offline"], "not_copied",
        "no prefetch on D1: {on_d1:#}"
    );

    d1.cli(&["lock", &id.to_string(), "2", "--user", "alice"])
        .expect_code(0, "alice locks the item");
    let refused = d1.cli(&["disconnect", "--user", "alice", "--max-wait", "0"]);
    refused.expect_code(3, "a 3 MB copy does not fit a wait of 0 s");
    assert!(
        refused.stderr.contains("needs about") && refused.stderr.contains("3000000 bytes"),
        "the refusal says what and how long: {}",
        refused.stderr
    );
    d1.cli(&["disconnect", "--user", "alice", "--max-wait", "60"])
        .expect_code(0, "with time enough the copy is made and alice goes");
    let locked = worklist(&d1, "alice");
    assert_eq!(locked.len(), 1, "{locked:#?}");
    assert_eq!(locked[0]["offline"], "ready", "{locked:#?}");
    // What the item reads is on her device: she sees it offline.
    let saved = dir.join("saved");
    d1.cli(&[
        "data",
        &id.to_string(),
        "--save",
        &saved.display().to_string(),
    ])
    .expect_code(0, "alice saves what her item reads");
    let photo = std::fs::metadata(saved.join("photo")).expect("the photo was saved");
    assert_eq!(photo.len(), 3_000_000);
    // Away, with her link up: the host answers her completion at once.
    let away = d1.cli(&["complete", &id.to_string(), "2", "--user", "alice"]);
    away.expect_code(0, "alice completes while away, her link up");
    assert!(away.stdout.contains("done"), "{}", away.stdout);
    d1.cli(&["reconnect", "--user", "alice"])
        .expect_code(0, "alice reconnects");
    controller
        .wait(id, 60)
        .expect_code(0, "her offline completion carries the instance to its end");
}
