//! Deploying and starting a definition in the controller's console, in a real browser
//! (headless Chromium through chromedriver): an operator signed in with a login link opens
//! the definitions page from the navigation, pastes the paper's workflow (its A2 named
//! `<script>alert(1)</script>`) with a precondition that names no activity, and Check shows
//! the validator's problem at its line and column with the document's lines around it, the
//! offending one marked, what was pasted kept and nothing deployed. Fixed, Deploy says
//! "Deployed NAME version 1" and links the definition's page, whose document shows the
//! markup name as text; its Start form starts an instance by name and the browser lands on
//! the instance's page. A viewer sees the definition but no deploy or start form, and both
//! posts made by hand with the page's own CSRF token are refused (403).
//!
//! Skipped, saying so, when `chromedriver` is not installed (`scripts/setup` installs
//! `chromium chromium-driver`). Nothing waits for luck: each expectation is polled with a
//! deadline.
#![allow(clippy::unwrap_used, clippy::expect_used)]
#![allow(clippy::too_many_lines)] // an end-to-end scenario reads best from top to bottom

#[path = "web/driver.rs"]
mod driver;

use driver::{
    SKIPPED, browser, chromedriver, console_link, forged_post, has, paste, shoot, start_driver,
    text, until, value,
};
use fantoccini::{Client, Locator};
use mobiwf_tests::harness::{paper_mesh, paper_workflow_with};
use serde_json::json;

/// The name the definition is deployed under.
const NAME: &str = "console-paper";

async fn click(client: &Client, css: &str) {
    client
        .find(Locator::Css(css))
        .await
        .unwrap()
        .click()
        .await
        .unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_operator_fixes_a_document_deploys_it_and_starts_it_by_name() {
    let Some(binary) = chromedriver() else {
        eprintln!("{SKIPPED}");
        return;
    };
    let dir = mobiwf_tests::scratch("console-deploy").unwrap();
    let (controller, _p1, _p2) = paper_mesh(&dir);
    // Every activity ends at once; A2's name is markup.
    let good = paper_workflow_with(|_| "<command>true</command>".to_owned())
        .replace("<timeToWait>20</timeToWait>", "<timeToWait>0</timeToWait>")
        .replace(
            "<nameActivity>A2</nameActivity>",
            "<nameActivity>&lt;script&gt;alert(1)&lt;/script&gt;</nameActivity>",
        );
    let precondition = "<preconditionId>16</preconditionId>";
    assert_eq!(good.matches(precondition).count(), 1, "A2's precondition");
    let bad = good.replace(precondition, "<preconditionId>99</preconditionId>");
    let line = bad
        .lines()
        .position(|l| l.contains("<preconditionId>99"))
        .unwrap()
        + 1;
    let column = bad.lines().nth(line - 1).unwrap().find("99").unwrap() + 1;

    let driver = start_driver(&binary);
    let operator = browser(&driver).await;
    operator
        .goto(&console_link(&controller, "operator", "/"))
        .await
        .unwrap();
    until(&operator, "nav.sections", true, "the console's navigation").await;
    click(&operator, r#"nav.sections a[href="/console/definitions"]"#).await;
    until(&operator, "form.deploy textarea", true, "the deploy form").await;
    assert!(has(&operator, "p.empty").await, "nothing is deployed yet");

    // The document with a problem: Check shows it at its line, keeps the text.
    paste(&operator, "form.deploy textarea", &bad).await;
    paste(&operator, r#"form.deploy input[name="name"]"#, NAME).await;
    click(&operator, r#"form.deploy button[value="check"]"#).await;
    let at = format!(r#"li.diagnostic[data-line="{line}"][data-column="{column}"]"#);
    until(&operator, &at, true, "the problem at its line").await;
    let message = text(&operator, &format!("{at} .message")).await;
    assert!(
        message.as_str().unwrap().contains("precondition 99"),
        "{message}"
    );
    assert_eq!(
        text(&operator, &format!("{at} code.at")).await,
        json!(format!("{line}:{column}"))
    );
    let marked = format!(r#"{at} pre.excerpt .offending[data-line="{line}"] mark"#);
    assert_eq!(text(&operator, &marked).await, json!("9"), "the 9 of 99");
    let around = text(&operator, &format!("{at} pre.excerpt")).await;
    for n in [line - 2, line - 1, line + 1, line + 2] {
        let numbered = format!("{n} | {}", bad.lines().nth(n - 1).unwrap());
        assert!(
            around.as_str().unwrap().contains(&numbered),
            "{numbered} in {around}"
        );
    }
    // The browser sends lines ended by CRLF: compare what was pasted line by line.
    let kept = value(&operator, "form.deploy textarea").await;
    let kept: Vec<&str> = kept.as_str().unwrap().lines().collect();
    assert_eq!(kept, bad.lines().collect::<Vec<_>>(), "the document kept");
    assert!(has(&operator, "p.empty").await, "a check deploys nothing");
    shoot(&operator, "console-deploy-problem").await;

    // A document that reads but names a class the controller does not have: Check says what
    // the deploy would refuse, and deploys nothing.
    let press = std::fs::read_to_string(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../examples/classes/press.workflow.xml"),
    )
    .unwrap();
    paste(&operator, "form.deploy textarea", &press).await;
    click(&operator, r#"form.deploy button[value="check"]"#).await;
    until(&operator, "p.refused", true, "the check's refusal").await;
    let refused = text(&operator, "p.refused").await;
    assert!(
        refused.as_str().unwrap().contains(
            "activity 1 names class press, which the controller's class document does not have"
        ),
        "{refused}"
    );
    assert!(has(&operator, "p.empty").await, "a check deploys nothing");

    // Fixed and deployed: the page says so and links the definition.
    paste(&operator, "form.deploy textarea", &good).await;
    click(&operator, r#"form.deploy button[value="deploy"]"#).await;
    until(&operator, "p.done a.deployed", true, "the deploy said").await;
    let said = text(&operator, "p.done").await;
    assert!(
        said.as_str()
            .unwrap()
            .contains(&format!("Deployed {NAME} version 1")),
        "{said}"
    );
    let row = format!(r#"table.definitions tr[data-definition="{NAME}"]"#);
    assert!(has(&operator, &row).await, "the list shows it");
    shoot(&operator, "console-deploy-done").await;

    // Its page: the document as text, the Start form; started by name.
    click(&operator, "p.done a.deployed").await;
    until(&operator, "form.start button", true, "the start form").await;
    let document = text(&operator, "pre.document").await;
    assert!(
        document
            .as_str()
            .unwrap()
            .contains("<nameActivity>&lt;script&gt;alert(1)&lt;/script&gt;</nameActivity>"),
        "the markup name is text: {document}"
    );
    assert!(
        !has(&operator, "main script").await,
        "no script from a document"
    );
    shoot(&operator, "console-definition").await;
    click(&operator, "form.start button").await;
    until(&operator, "#graph", true, "the new instance's page").await;
    let url = operator.current_url().await.unwrap();
    assert!(
        url.path().starts_with("/console/instances/"),
        "landed on {url}"
    );
    let id: u64 = url.path().rsplit('/').next().unwrap().parse().unwrap();
    let status = controller.status(id);
    assert_eq!(status["definition"]["name"], json!(NAME), "{status:#}");
    shoot(&operator, "console-started").await;

    // A viewer: the definition, no forms; posts by hand refused.
    let viewer = browser(&driver).await;
    viewer
        .goto(&console_link(&controller, "viewer", "/console/definitions"))
        .await
        .unwrap();
    until(&viewer, &row, true, "the viewer's list").await;
    assert!(
        !has(&viewer, "form.deploy").await,
        "a viewer may not deploy"
    );
    assert_eq!(
        forged_post(&viewer, "/console/definitions").await,
        json!(403),
        "a viewer's deploy is refused"
    );
    let page = format!("/console/definitions/{NAME}");
    viewer
        .goto(&format!("http://{}{page}", controller.api))
        .await
        .unwrap();
    until(
        &viewer,
        "pre.document",
        true,
        "the viewer's definition page",
    )
    .await;
    assert!(!has(&viewer, "form.start").await, "a viewer may not start");
    assert_eq!(
        forged_post(&viewer, &format!("{page}/start")).await,
        json!(403),
        "a viewer's start is refused"
    );

    for client in [operator, viewer] {
        client.close().await.unwrap();
    }
}
