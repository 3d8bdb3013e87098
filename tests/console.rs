//! The controller's console over HTTP against the real binaries (a controller, P1 and P2 of
//! the paper's workflow, its A2 a manual activity named `<script>alert(1)</script>` so the
//! instance holds still on P1's worklist): no session is told how to sign in (401); a link
//! from `mobiwf-controller login-link` is exchanged for a strict, HttpOnly cookie; the
//! instances page lists the instance (and finds it by id); its page draws each activity with
//! its `data-state` and shows the markup name as text; an operator interrupts and resumes it
//! through the page's forms with the CSRF token (and not without it); a viewer sees no
//! buttons and is refused (403) when posting by hand; the page's live stream sends what the
//! page shows and then, without a reload, A2 succeeded once P1 reports it (the graph alone,
//! the stream's fallback, too); one stream more than `MAX_STREAMS_PER_SESSION` for one session,
//! or than `MAX_CONSOLE_STREAMS` in all, is refused (503).
//! The organisation page, reached from the navigation, says how to apply an organisation
//! while there is none, then shows each user with their roles, department, teams and device
//! and whether they are offered work (alice away after `mobiwf-node disconnect`, carol on
//! leave, dave's device never registered), the roles, departments and teams with their
//! members, and the registered devices. A failed instance's page gives an operator a Rerun
//! button for its failed activity (a viewer none, and 403 by hand); without the CSRF token
//! nothing happens, with it the activity runs again and the instance succeeds, after which
//! the button is gone and a rerun by hand is refused with the controller's reason (409).
//!
//! Nothing waits for luck: every expectation that takes a moment is awaited with a deadline.
#![allow(clippy::unwrap_used, clippy::expect_used)]
#![allow(clippy::too_many_lines)] // an end-to-end scenario reads best from top to bottom

#[path = "web/pages.rs"]
mod pages;

use std::time::Duration;

use mobiwf_tests::harness::{
    CLI_TIMEOUT, Controller, paper_mesh, paper_workflow_with, status_activity,
    wait_deployed_and_offered, wait_for,
};
use mobiwf_tests::scratch;
use pages::Browser;

/// The activity name the pages must show as text.
const MARKUP_NAME: &str = "<script>alert(1)</script>";

/// `mobiwf-controller login-link [--role R]`: the URL it prints.
fn login_link(controller: &Controller, role: Option<&str>) -> String {
    let mut args = vec!["login-link"];
    if let Some(role) = role {
        args.extend(["--role", role]);
    }
    let out = controller.cli(&args, CLI_TIMEOUT);
    out.expect_code(0, "login-link");
    let url = out.stdout.trim().to_owned();
    let api = format!("http://{}/login?code=mwf_login_", controller.api);
    assert!(url.starts_with(&api), "login-link printed {url:?}");
    url
}

/// A browser signed in to the console with `role`'s link (none: the default, viewer).
async fn signed_in(controller: &Controller, role: Option<&str>) -> Browser {
    let mut browser = Browser::at(&controller.api);
    let signed = browser.open(&login_link(controller, role)).await;
    assert_eq!(signed.status, 303, "{signed:?}");
    assert_eq!(signed.header("location"), "/");
    let cookie = signed.header("set-cookie");
    for part in ["HttpOnly", "SameSite=Strict", "Path=/"] {
        assert!(cookie.contains(part), "{part} in {cookie}");
    }
    browser
}

/// Instance of the paper's workflow held still: A2 (17), named [`MARKUP_NAME`], on P1's
/// worklist.
fn held_still(
    dir: &std::path::Path,
    controller: &Controller,
    p1: &mobiwf_tests::harness::Node,
) -> u64 {
    let xml = paper_workflow_with(|id| {
        if id == 17 {
            "<kind>manual</kind>".to_owned()
        } else {
            String::new()
        }
    })
    .replace("<timeToWait>20</timeToWait>", "<timeToWait>0</timeToWait>")
    .replace(
        "<nameActivity>A2</nameActivity>",
        "<nameActivity>&lt;script&gt;alert(1)&lt;/script&gt;</nameActivity>",
    );
    let file = dir.join("workflow.xml");
    std::fs::write(&file, xml).unwrap();
    let id = controller.submit(&file);
    wait_deployed_and_offered(controller, p1, id);
    wait_for(
        "A2 (17) ready at the controller",
        Duration::from_secs(30),
        || (status_activity(&controller.status(id), 17)["state"] == "ready").then_some(()),
    );
    id
}

/// Waits until the controller says instance `id` is in `state`.
fn wait_state(controller: &Controller, id: u64, state: &str) {
    wait_for(
        format!("instance {id} {state}"),
        Duration::from_secs(30),
        || (controller.status(id)["state"] == state).then_some(()),
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_operator_watches_and_controls_an_instance_in_the_console() {
    let dir = scratch("console").unwrap();
    let (controller, p1, _p2) = paper_mesh(&dir);
    let id = held_still(&dir, &controller, &p1);
    let page = format!("/console/instances/{id}");

    // No session: how to sign in, nothing of the instances.
    let anonymous = Browser::at(&controller.api);
    for path in ["/", page.as_str()] {
        let answer = anonymous.get(path).await;
        assert_eq!(answer.status, 401, "{path}: {answer:?}");
        assert!(answer.body.contains("login-link"), "{}", answer.body);
        assert!(!answer.body.contains("alert(1)"), "{}", answer.body);
    }
    let refused = anonymous
        .post(&format!("{page}/interrupt"), &[("csrf", "x")])
        .await;
    assert_eq!(refused.status, 401, "{refused:?}");

    // The viewer (the default role): the list, the page, no buttons, 403 on a hand post.
    let viewer = signed_in(&controller, None).await;
    let list = viewer.get("/").await;
    assert_eq!(list.status, 200, "{list:?}");
    assert!(
        list.header("content-security-policy")
            .contains("script-src 'self'"),
        "{list:?}"
    );
    let row = format!("href=\"/console/instances/{id}\"");
    assert!(list.body.contains(&row), "{}", list.body);
    let found = viewer.get(&format!("/?id={id}&state=running")).await;
    assert!(found.body.contains(&row), "{}", found.body);
    let filtered = viewer.get("/?state=succeeded").await;
    assert!(!filtered.body.contains(&row), "{}", filtered.body);
    let bad = viewer.get("/?state=nope").await;
    assert_eq!(bad.status, 400, "{bad:?}");

    let shown = viewer.get(&page).await;
    assert_eq!(shown.status, 200, "{shown:?}");
    for activity in [16, 17, 18, 19, 20] {
        let drawn = format!("data-activity=\"{activity}\" data-state=\"");
        assert!(shown.body.contains(&drawn), "{drawn}: {}", shown.body);
    }
    assert!(
        shown
            .body
            .contains("data-activity=\"17\" data-state=\"ready\""),
        "{}",
        shown.body
    );
    assert!(!shown.body.contains(MARKUP_NAME), "{}", shown.body);
    assert!(
        shown.body.contains("&lt;script&gt;alert(1)&lt;/script&gt;"),
        "{}",
        shown.body
    );
    // The only script element is the asset: nothing inline.
    assert_eq!(shown.body.matches("<script").count(), 1, "{}", shown.body);
    assert!(!shown.body.contains("/interrupt\""), "{}", shown.body);
    let csrf = shown.csrf();
    let refused = viewer
        .post(&format!("{page}/interrupt"), &[("csrf", &csrf)])
        .await;
    assert_eq!(refused.status, 403, "{refused:?}");
    assert_eq!(controller.status(id)["state"], "running");

    // The operator: the buttons; without the CSRF token nothing happens.
    let operator = signed_in(&controller, Some("operator")).await;
    let shown = operator.get(&page).await;
    assert!(
        shown.body.contains(&format!("action=\"{page}/interrupt\"")),
        "{}",
        shown.body
    );
    assert!(
        shown.body.contains(&format!("action=\"{page}/resume\"")),
        "{}",
        shown.body
    );
    let csrf = shown.csrf();
    let forged = operator.post(&format!("{page}/interrupt"), &[]).await;
    assert_eq!(forged.status, 403, "{forged:?}");
    assert_eq!(controller.status(id)["state"], "running");

    let interrupted = operator
        .post(&format!("{page}/interrupt"), &[("csrf", &csrf)])
        .await;
    assert_eq!(interrupted.status, 303, "{interrupted:?}");
    assert_eq!(interrupted.header("location"), page);
    wait_state(&controller, id, "interrupted");
    let shown = operator.get(&page).await;
    assert!(
        shown.body.contains("data-state=\"interrupted\""),
        "{}",
        shown.body
    );
    // Interrupting again does not apply: said, with the API's status.
    let again = operator
        .post(&format!("{page}/interrupt"), &[("csrf", &csrf)])
        .await;
    assert_eq!(again.status, 409, "{again:?}");

    let resumed = operator
        .post(&format!("{page}/resume"), &[("csrf", &csrf)])
        .await;
    assert_eq!(resumed.status, 303, "{resumed:?}");
    wait_state(&controller, id, "running");

    // The history shows both, in the page's timeline.
    let shown = operator.get(&page).await;
    assert!(shown.body.contains("class=\"timeline\""), "{}", shown.body);
    let history = controller.cli(&["history", &id.to_string()], CLI_TIMEOUT);
    history.expect_code(0, "history");
    assert!(history.stdout.contains("interrupt"), "{}", history.stdout);

    // Live: the page names its stream, which sends the part the page shows (at once to a
    // page that shows an older one), then again, without a reload, once P1 reports A2
    // succeeded; each event is news (its id differs from the one before).
    let events = format!("{page}/events");
    assert!(
        shown.body.contains(&format!("data-live=\"{events}\"")),
        "{}",
        shown.body
    );
    assert!(shown.body.contains("data-since=\""), "{}", shown.body);
    assert_eq!(anonymous.get(&events).await.status, 401);
    let gone = viewer.get("/console/instances/987654/events").await;
    assert_eq!(gone.status, 404, "a stream of no instance ends: {gone:?}");
    let mut live = viewer.events_at(&format!("{events}?since=0"), None).await;
    let first = live.next(Duration::from_secs(30)).await;
    assert_eq!(first.kind, "instance", "{first:?}");
    assert!(
        first
            .data
            .contains("data-activity=\"17\" data-state=\"ready\""),
        "{first:?}"
    );
    assert!(!first.data.contains(MARKUP_NAME), "{first:?}");
    assert!(!first.data.contains("csrf"), "{first:?}");
    p1.cli(&["complete", &id.to_string(), "17"])
        .expect_code(0, "complete A2");
    let mut last = first;
    let deadline = tokio::time::Instant::now() + Duration::from_secs(60);
    while !last
        .data
        .contains("data-activity=\"17\" data-state=\"succeeded\"")
    {
        let left = deadline.saturating_duration_since(tokio::time::Instant::now());
        let next = live.next(left).await;
        assert_ne!(next.id, last.id, "an event that is no news: {next:?}");
        last = next;
    }
    drop(live);

    // The graph alone, which the page's script fetches again only when the stream cannot be
    // had.
    let fragment = format!("{page}/graph");
    assert!(
        shown.body.contains(&format!("data-refresh=\"{fragment}\"")),
        "{}",
        shown.body
    );
    assert_eq!(anonymous.get(&fragment).await.status, 401);
    let deadline = tokio::time::Instant::now() + Duration::from_secs(60);
    loop {
        let graph = viewer.get(&fragment).await;
        assert_eq!(graph.status, 200, "{graph:?}");
        assert!(graph.body.starts_with("<svg"), "{}", graph.body);
        if graph
            .body
            .contains("data-activity=\"17\" data-state=\"succeeded\"")
        {
            break;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "A2 never drawn succeeded: {}",
            graph.body
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }

    // At most MAX_STREAMS_PER_SESSION live pages for one session and MAX_CONSOLE_STREAMS in
    // all: one more is refused, clearly (503, naming the limit).
    let max = mobiwf_controller::console::live::MAX_CONSOLE_STREAMS;
    let per_session = mobiwf_runtime::web::streams::MAX_STREAMS_PER_SESSION;
    let mut open = Vec::new();
    let mut sessions = Vec::new();
    while open.len() < max {
        let session = signed_in(&controller, None).await;
        for _ in 0..per_session.min(max - open.len()) {
            open.push(session.events_at(&events, None).await);
        }
        sessions.push(session);
    }
    let full = sessions[0].get(&events).await;
    assert_eq!(full.status, 503, "{full:?}");
    assert!(
        full.body.contains("MAX_STREAMS_PER_SESSION"),
        "{}",
        full.body
    );
    let over = viewer.get(&events).await;
    assert_eq!(over.status, 503, "{over:?}");
    assert!(over.body.contains("MAX_CONSOLE_STREAMS"), "{}", over.body);
    drop(open);
}

/// The organisation the organisation page is read with: alice on P1 (to be away), bob on P2,
/// carol on leave, dave on a device that never registered; a markup name.
const ORGANISATION: &str = r#"<organisation>
  <roles><role id="tech" name="Technician"/><role id="supervisor"/></roles>
  <departments><department id="ops"/><department id="field" parent="ops"/></departments>
  <teams><team id="valves"/></teams>
  <users>
    <user id="alice" name="Alice" department="field" team="valves" device="P1"><role id="tech"/></user>
    <user id="bob" name="&lt;i&gt;Bob&lt;/i&gt;" department="field" device="P2"><role id="tech" priority="2"/></user>
    <user id="carol" name="Carol" department="ops" device="P2" onLeave="true"><role id="supervisor"/></user>
    <user id="dave" name="Dave" device="D9"><role id="tech"/></user>
  </users>
</organisation>"#;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_organisation_page_shows_who_works_where_and_who_gets_no_work() {
    let dir = scratch("console-org").unwrap();
    let (controller, p1, _p2) = paper_mesh(&dir);

    let anonymous = Browser::at(&controller.api);
    let refused = anonymous.get("/console/org").await;
    assert_eq!(refused.status, 401, "{refused:?}");
    assert!(!refused.body.contains("data-user"), "{}", refused.body);

    // Before an organisation is applied: how to apply one; the navigation leads here.
    let viewer = signed_in(&controller, None).await;
    let list = viewer.get("/").await;
    assert!(list.body.contains("href=\"/console/org\""), "{}", list.body);
    let empty = viewer.get("/console/org").await;
    assert_eq!(empty.status, 200, "{empty:?}");
    assert!(empty.body.contains("org apply"), "{}", empty.body);
    assert!(
        empty
            .body
            .contains("href=\"/console/org\" aria-current=\"page\""),
        "{}",
        empty.body
    );

    let file = dir.join("organisation.xml");
    std::fs::write(&file, ORGANISATION).unwrap();
    controller
        .cli(&["org", "apply", &file.display().to_string()], CLI_TIMEOUT)
        .expect_code(0, "org apply");
    p1.cli(&["disconnect", "--user", "alice", "--max-wait", "30"])
        .expect_code(0, "alice disconnects");
    wait_for(
        "the controller to mark alice away",
        Duration::from_secs(30),
        || {
            let org = controller.cli(&["org", "show", "--json"], CLI_TIMEOUT);
            org.stdout.contains("\"away\"").then_some(())
        },
    );

    let page = viewer.get("/console/org").await;
    assert_eq!(page.status, 200, "{page:?}");
    let row = |user: &str, state: &str| format!("data-user=\"{user}\" data-state=\"{state}\"");
    for (user, state) in [
        ("alice", "not-offered"),
        ("bob", "available"),
        ("carol", "not-offered"),
        ("dave", "not-offered"),
    ] {
        assert!(
            page.body.contains(&row(user, state)),
            "{user}: {}",
            page.body
        );
    }
    for why in [
        "away",
        "on leave",
        "device not registered",
        "tech (priority 2)",
    ] {
        assert!(page.body.contains(why), "{why}: {}", page.body);
    }
    for group in [
        "role:tech",
        "role:supervisor",
        "department:field",
        "team:valves",
    ] {
        let marked = format!("data-group=\"{group}\"");
        assert!(page.body.contains(&marked), "{group}: {}", page.body);
    }
    assert!(page.body.contains("alice, bob, dave"), "{}", page.body);
    assert!(page.body.contains("(part of ops)"), "{}", page.body);
    for device in ["P1", "P2"] {
        let marked = format!("data-device=\"{device}\"");
        assert!(page.body.contains(&marked), "{device}: {}", page.body);
    }
    // Names are text, never markup.
    assert!(!page.body.contains("<i>Bob"), "{}", page.body);
    assert!(page.body.contains("&lt;i&gt;Bob"), "{}", page.body);
}

/// A1 on P1, then A2 on P2 (contingency -1), which fails until the file `ok` exists.
fn fails_until(ok: &std::path::Path) -> String {
    let test = mobiwf_tests::harness::xml_text(&format!("test -f '{}'", ok.display()));
    format!(
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<workflow id=\"1\">\
         <description>rerun in the console</description><activities>\
         <activity id=\"1\"><nameActivity>A1</nameActivity><activityTypeId>1</activityTypeId>\
         <contingencyActivityId>-1</contingencyActivityId><preconditions/>\
         <command>true</command></activity>\
         <activity id=\"2\"><nameActivity>A2</nameActivity><activityTypeId>1</activityTypeId>\
         <contingencyActivityId>-1</contingencyActivityId>\
         <preconditions><preconditionId>1</preconditionId></preconditions>\
         <command>{test}</command></activity></activities>\
         <activityTypes><activityType id=\"1\"/></activityTypes><partitions>\
         <partition id=\"1\"><partnerId>1</partnerId><activityId>1</activityId></partition>\
         <partition id=\"2\"><partnerId>2</partnerId><activityId>2</activityId></partition>\
         </partitions><partners>\
         <partner id=\"1\"><name>P1</name><skills><activityTypeId>1</activityTypeId></skills></partner>\
         <partner id=\"2\"><name>P2</name><skills><activityTypeId>1</activityTypeId></skills></partner>\
         </partners></workflow>"
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_operator_reruns_a_failed_activity_from_its_instance_page() {
    let dir = scratch("console-rerun").unwrap();
    let ok = dir.join("ok");
    let file = dir.join("rerun.xml");
    std::fs::write(&file, fails_until(&ok)).unwrap();
    let (controller, _p1, _p2) = paper_mesh(&dir);
    let id = controller.submit(&file);
    controller
        .wait(id, 60)
        .expect_code(1, "wait for the failure");
    assert_eq!(controller.status(id)["state"], "failed");
    let page = format!("/console/instances/{id}");
    let rerun = format!("{page}/activities/2/rerun");
    let form = format!("action=\"{rerun}\"");

    // A viewer: no button, and 403 when posting by hand.
    let viewer = signed_in(&controller, None).await;
    let shown = viewer.get(&page).await;
    assert_eq!(shown.status, 200, "{shown:?}");
    assert!(!shown.body.contains("/rerun\""), "{}", shown.body);
    let refused = viewer.post(&rerun, &[("csrf", &shown.csrf())]).await;
    assert_eq!(refused.status, 403, "{refused:?}");

    // An operator: a button for the failed A2 only; without the CSRF token nothing happens.
    let operator = signed_in(&controller, Some("operator")).await;
    let shown = operator.get(&page).await;
    assert!(shown.body.contains(&form), "{}", shown.body);
    assert!(shown.body.contains("Rerun A2 (2)"), "{}", shown.body);
    assert!(
        !shown.body.contains(&format!("{page}/activities/1/rerun")),
        "{}",
        shown.body
    );
    let forged = operator.post(&rerun, &[]).await;
    assert_eq!(forged.status, 403, "{forged:?}");
    assert_eq!(controller.status(id)["state"], "failed");

    std::fs::write(&ok, "").unwrap();
    let csrf = shown.csrf();
    let done = operator.post(&rerun, &[("csrf", &csrf)]).await;
    assert_eq!(done.status, 303, "{done:?}");
    assert_eq!(done.header("location"), page);
    wait_state(&controller, id, "succeeded");
    let history = controller.cli(&["history", &id.to_string()], CLI_TIMEOUT);
    history.expect_code(0, "history");
    assert!(
        history.stdout.contains("rerun of A2 (2) by an operator"),
        "{}",
        history.stdout
    );

    // Succeeded: no button, and a rerun by hand is refused with the controller's reason.
    let shown = operator.get(&page).await;
    assert!(!shown.body.contains(&form), "{}", shown.body);
    let again = operator.post(&rerun, &[("csrf", &csrf)]).await;
    assert_eq!(again.status, 409, "{again:?}");
    assert!(
        again.body.contains("only a failed instance is rerun"),
        "{}",
        again.body
    );
}
