//! The node's pages in a real browser (headless Chromium through chromedriver, at phone
//! width): alice on D1 and bob on D2 both see an offered item on their own node's page; alice
//! selects it on hers; bob's page drops the item without a reload (the live worklist), and so
//! does its link to the hosts (fetched again); bob's stale Select button, on the item's page he
//! had open, says "no longer available".
//! The controller's console too: an operator signed in with a login link opens an instance
//! whose A2 waits for a file the test makes, and sees A2 drawn succeeded without a reload
//! once it ran (the page's live stream); the nodes page lists the partners; a viewer's page
//! has no control buttons, and a control posted from it by hand is refused (403).
//! Screenshots of the pages (PNG) go to `target/<profile>/screenshots/`.
//!
//! Skipped, saying so, when `chromedriver` is not installed (`scripts/setup` installs
//! `chromium chromium-driver`). Nothing waits for luck: each expectation is polled with a
//! deadline.
#![allow(clippy::unwrap_used, clippy::expect_used)]
#![allow(clippy::too_many_lines)] // end-to-end scenarios read best from top to bottom

#[path = "people/documents.rs"]
mod documents;
#[path = "web/driver.rs"]
mod driver;
#[path = "people/mesh.rs"]
mod mesh;
#[path = "web/pages.rs"]
mod pages;

use std::time::Instant;

use documents::{TECH, workflow};
use driver::{
    SKIPPED, attribute, browser, chromedriver, console_link, forged_post, has, shoot, start_driver,
    until,
};
use fantoccini::Locator;
use mesh::Mesh;
use mobiwf_tests::harness::{paper_mesh, paper_workflow_with, xml_text};
use serde_json::json;

/// alice on D1, bob on D2, both in role tech.
const USERS: &str = r#"    <user id="alice" name="Alice" device="D1"><role id="tech"/></user>
    <user id="bob" name="Bob" device="D2"><role id="tech"/></user>"#;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_select_on_one_device_drops_the_item_from_the_other_without_a_reload() {
    let Some(binary) = chromedriver() else {
        eprintln!("{SKIPPED}");
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
    let host_line = "li[data-host-link]";
    assert!(
        has(&bob, host_line).await,
        "bob's link lists the item's host"
    );
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
    // The page's link to the hosts follows too (fetched again, not streamed): the host of an
    // item he no longer has is no longer listed.
    until(&bob, host_line, false, "bob's link drops the item's host").await;
    assert_eq!(
        bob.execute("return window.mobiwfMark;", vec![])
            .await
            .unwrap(),
        json!(42),
        "bob's page was not reloaded"
    );

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

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_operator_sees_an_activity_end_in_the_console_without_a_reload() {
    let Some(binary) = chromedriver() else {
        eprintln!("{SKIPPED}");
        return;
    };
    let dir = mobiwf_tests::scratch("console-browser").unwrap();
    let (controller, _p1, _p2) = paper_mesh(&dir);
    // A2 (17) runs until the test makes `go`; the others at once. A2 ends in another
    // partition's precondition (A4's), so its node reports it at once (`responseImmediate`).
    let go = dir.join("go");
    let xml = paper_workflow_with(|id| {
        let command = if id == 17 {
            format!("while [ ! -e '{}' ]; do sleep 0.05; done", go.display())
        } else {
            "true".to_owned()
        };
        format!("<command>{}</command>", xml_text(&command))
    })
    .replace("<timeToWait>20</timeToWait>", "<timeToWait>0</timeToWait>");
    let file = dir.join("workflow.xml");
    std::fs::write(&file, xml).unwrap();
    let id = controller.submit(&file);
    let page = format!("/console/instances/{id}");
    let a2 = r#"#graph g[data-activity="17"]"#;
    let a2_done = r#"#graph g[data-activity="17"][data-state="succeeded"]"#;

    let driver = start_driver(&binary);
    let operator = browser(&driver).await;
    operator
        .goto(&console_link(&controller, "operator", &page))
        .await
        .unwrap();
    until(&operator, a2, true, "the operator's page draws A2").await;
    assert!(
        has(
            &operator,
            &format!(r#"form[action="{page}/interrupt"] button"#)
        )
        .await,
        "the operator may interrupt"
    );
    assert!(
        !has(&operator, a2_done).await,
        "A2 cannot have ended before the test made {}",
        go.display()
    );
    let since = attribute(&operator, "[data-live]", "data-since").await;
    assert!(
        since.is_string(),
        "the live part says what it shows: {since}"
    );
    shoot(&operator, "console-instance-running").await;
    // At phone width the graph is drawn whole, at the page's width: no sideways scrolling.
    let fits = operator
        .execute(
            "const g = document.querySelector('#graph'); \
             return [g.scrollWidth, g.clientWidth, g.querySelector('svg').getAttribute('width')];",
            vec![],
        )
        .await
        .unwrap();
    let (scroll, client) = (fits[0].as_u64().unwrap(), fits[1].as_u64().unwrap());
    assert!(
        scroll <= client && client > 0,
        "the graph fits the page's width (scroll, client, drawn width): {fits}"
    );
    // A mark that a reload would wipe out.
    operator
        .execute("window.mobiwfMark = 42; return true;", vec![])
        .await
        .unwrap();

    std::fs::write(&go, "").unwrap();
    until(&operator, a2_done, true, "the page draws A2 succeeded").await;
    let mark = operator
        .execute("return window.mobiwfMark;", vec![])
        .await
        .unwrap();
    assert_eq!(mark, json!(42), "the operator's page was not reloaded");
    assert_ne!(
        attribute(&operator, "[data-live]", "data-since").await,
        since,
        "the live stream, not the graph's fallback, brought the change"
    );
    shoot(&operator, "console-instance-succeeded").await;

    // The nodes page, from the console's navigation.
    operator
        .find(Locator::Css(r#"nav.sections a[href="/console/nodes"]"#))
        .await
        .unwrap()
        .click()
        .await
        .unwrap();
    for name in ["P1", "P2"] {
        let row = format!(r#"tr[data-node="{name}"][data-state="answering"]"#);
        until(
            &operator,
            &row,
            true,
            &format!("the nodes page lists {name}"),
        )
        .await;
    }
    shoot(&operator, "console-nodes").await;

    // A viewer: no control buttons; a control posted by hand, with the page's own CSRF
    // token, is refused.
    let viewer = browser(&driver).await;
    viewer
        .goto(&console_link(&controller, "viewer", &page))
        .await
        .unwrap();
    until(&viewer, a2_done, true, "the viewer's page draws A2").await;
    for action in ["interrupt", "resume", "cancel"] {
        let button = format!(r#"form[action="{page}/{action}"]"#);
        assert!(!has(&viewer, &button).await, "a viewer sees no {action}");
    }
    let status = forged_post(&viewer, &format!("{page}/cancel")).await;
    assert_eq!(status, json!(403), "a viewer's control is refused");
    shoot(&viewer, "console-instance-viewer").await;

    for client in [operator, viewer] {
        client.close().await.unwrap();
    }
}
