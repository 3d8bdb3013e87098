//! The node's pages over HTTP against the real binaries (a controller, the host H, the devices
//! D1 and D2): a login link from `mobiwf-node login-link` is exchanged once for a strict,
//! HttpOnly session cookie; the worklist page carries the security headers and shows an
//! activity's name as text, markup and all; a form without the session's CSRF token is refused
//! (403) and nothing happens; a session acts only as its user (another user's item is 403, the
//! cookie is no session on another node); a select through the page takes the item off the
//! other device's live worklist, which resumes after a reconnect from the last event it saw;
//! the other user's stale select says "no longer available"; the page shows the link to the
//! host connected and refuses a disconnection while alice holds a selected item, saying why; a
//! completion through the page ends the instance; signing out ends the session.
//!
//! Nothing waits for luck: every expectation that takes a moment is awaited with a deadline.
#![allow(clippy::unwrap_used, clippy::expect_used)]
#![allow(clippy::too_many_lines)] // end-to-end scenarios read best from top to bottom

#[path = "people/documents.rs"]
mod documents;
#[path = "people/mesh.rs"]
mod mesh;
#[path = "web/pages.rs"]
mod pages;

use documents::{TECH, workflow};
use mesh::{Mesh, SOON, WAIT_SECS};
use pages::Browser;

/// alice (tech) and erin (clerk) on D1, bob (tech) on D2.
const USERS: &str = r#"    <user id="alice" name="Alice" device="D1"><role id="tech"/></user>
    <user id="erin" name="Erin" device="D1"><role id="clerk"/></user>
    <user id="bob" name="Bob" device="D2"><role id="tech"/></user>"#;

/// The activity name the pages must show as text.
const MARKUP_NAME: &str = "<script>alert(1)</script>";

/// A workflow whose manual activity 2 (role tech) is named [`MARKUP_NAME`].
fn markup_workflow() -> String {
    workflow(&[(1, "", &[]), (2, TECH, &[1]), (3, "", &[2])]).replace(
        "<nameActivity>A2</nameActivity>",
        "<nameActivity>&lt;script&gt;alert(1)&lt;/script&gt;</nameActivity>",
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_person_works_their_worklist_in_the_browser() {
    let mesh = Mesh::start("web-pages", USERS);
    let d1 = mesh.node("D1");
    let d2 = mesh.node("D2");

    // Not signed in: the page says how to sign in.
    let anonymous = Browser::on(d1).get("/").await;
    assert_eq!(anonymous.status, 401, "{anonymous:?}");
    assert!(anonymous.body.contains("login-link"), "{}", anonymous.body);

    // A login link works once: a strict, HttpOnly cookie, then the worklist.
    let mut alice = Browser::on(d1);
    let link = pages::login_link(d1, "alice", None);
    let signed = alice.open(&link).await;
    assert_eq!(signed.status, 303, "{signed:?}");
    assert_eq!(signed.header("location"), "/");
    let cookie = signed.header("set-cookie");
    for part in ["HttpOnly", "SameSite=Strict", "Path=/", "Max-Age="] {
        assert!(
            cookie.contains(part),
            "the session cookie has {part}: {cookie}"
        );
    }
    assert!(
        !cookie.contains("Secure"),
        "no TLS here, no Secure: {cookie}"
    );
    let again = Browser::on(d1).open(&link).await;
    assert_eq!(again.status, 400, "a used code opens nothing: {again:?}");
    assert!(again.body.contains("used already"), "{}", again.body);
    assert!(again.header("set-cookie").is_empty(), "{again:?}");

    let id = mesh
        .controller
        .submit(&mesh.write("markup.xml", &markup_workflow()));
    mesh.wait_item("alice", id, 2, "offered");
    mesh.wait_item("bob", id, 2, "offered");

    let page = alice.get("/").await;
    assert_eq!(page.status, 200, "{page:?}");
    let csp = page.header("content-security-policy");
    for part in [
        "default-src 'self'",
        "frame-ancestors 'none'",
        "script-src 'self'",
    ] {
        assert!(csp.contains(part), "the CSP has {part}: {csp}");
    }
    assert!(!csp.contains("unsafe-inline"), "{csp}");
    assert_eq!(page.header("x-content-type-options"), "nosniff");
    assert_eq!(page.header("referrer-policy"), "no-referrer");
    assert_eq!(page.header("cache-control"), "no-store");
    assert!(
        page.body.contains("&lt;script&gt;alert(1)&lt;/script&gt;"),
        "the activity's name shows as text:\n{}",
        page.body
    );
    assert!(!page.body.contains(MARKUP_NAME), "{}", page.body);
    assert_eq!(
        page.body.matches("<script").count(),
        1,
        "only the asset: {}",
        page.body
    );
    for order in ["arrival", "priority", "deadline", "size"] {
        let listed = alice.get(&format!("/?order={order}")).await;
        assert_eq!(listed.status, 200, "order {order}: {listed:?}");
        assert!(
            listed.body.contains(&format!("/items/{id}/2")),
            "{}",
            listed.body
        );
    }
    let item = alice.get(&format!("/items/{id}/2")).await;
    assert_eq!(item.status, 200, "{item:?}");
    assert!(item.body.contains("&lt;script&gt;alert(1)&lt;/script&gt;"));
    assert!(
        item.body.contains(&format!("/items/{id}/2/select")),
        "{}",
        item.body
    );
    let csrf = item.csrf();

    // Without the session's CSRF token: 403, and the item is still only offered.
    let select = format!("/items/{id}/2/select");
    let forged = alice.post(&select, &[]).await;
    assert_eq!(forged.status, 403, "no CSRF token: {forged:?}");
    let wrong = alice
        .post(&select, &[("csrf", "0".repeat(64).as_str())])
        .await;
    assert_eq!(wrong.status, 403, "a wrong CSRF token: {wrong:?}");
    let unsigned = Browser::on(d1).post(&select, &[("csrf", &csrf)]).await;
    assert_eq!(unsigned.status, 401, "no session: {unsigned:?}");
    assert_eq!(mesh.item("alice", id, 2).unwrap()["state"], "offered");

    // A session acts only as its user: erin (not offered the item) is refused; alice's
    // cookie is no session on D2.
    let erin = Browser::signed_in(d1, "erin").await;
    let erins_csrf = erin.get("/").await.csrf();
    let not_hers = erin.post(&select, &[("csrf", &erins_csrf)]).await;
    assert_eq!(not_hers.status, 403, "{not_hers:?}");
    assert!(
        not_hers.body.contains("not offered to you"),
        "{}",
        not_hers.body
    );
    let mut elsewhere = Browser::on(d2);
    elsewhere.cookie.clone_from(&alice.cookie);
    assert_eq!(elsewhere.get("/").await.status, 401, "D1's session on D2");
    assert_eq!(mesh.item("alice", id, 2).unwrap()["state"], "offered");

    // bob follows his worklist live; alice selects through the page.
    let bob = Browser::signed_in(d2, "bob").await;
    let bobs_page = bob.get(&format!("/items/{id}/2")).await;
    let bobs_csrf = bobs_page.csrf();
    let mut live = bob.events(None).await;
    let first = live.next(SOON).await;
    assert_eq!(first.kind, "worklist");
    assert!(first.data.contains(&format!("/items/{id}/2")), "{first:?}");
    let selected = alice.post(&select, &[("csrf", &csrf)]).await;
    assert_eq!(selected.status, 303, "{selected:?}");
    assert_eq!(selected.header("location"), format!("/items/{id}/2"));
    let dropped = live.next(SOON).await;
    assert!(
        !dropped.data.contains(&format!("/items/{id}/2")),
        "bob's live worklist loses the item alice selected: {dropped:?}"
    );
    assert_ne!(dropped.id, first.id);
    drop(live);

    // The link: connected to H. Holding a selected item, alice cannot disconnect: the page
    // says why, with the API's status, and she stays connected; without the CSRF token
    // nothing is tried.
    let link = alice.get("/link").await;
    assert_eq!(link.status, 200, "{link:?}");
    assert!(
        link.body.contains(r#"data-link="connected""#) && link.body.contains("host H: connected"),
        "{}",
        link.body
    );
    let forged = alice.post("/disconnect", &[("max_wait_secs", "30")]).await;
    assert_eq!(
        forged.status, 403,
        "a disconnection without the CSRF token: {forged:?}"
    );
    let refused = alice
        .post("/disconnect", &[("csrf", &csrf), ("max_wait_secs", "30")])
        .await;
    assert_eq!(refused.status, 409, "{refused:?}");
    assert!(
        refused
            .body
            .contains("Not disconnected: you hold a selected item"),
        "{}",
        refused.body
    );
    assert!(
        refused.body.contains(r#"data-link="connected""#)
            && refused.body.contains(r#"action="/disconnect""#),
        "{}",
        refused.body
    );

    // A reconnect from an old event gets the list at once; from the last one, only news.
    let mut resumed = bob.events(Some(&first.id)).await;
    let caught_up = resumed.next(SOON).await;
    assert_eq!(caught_up.id, dropped.id, "{caught_up:?}");
    drop(resumed);
    let mut quiet = bob.events(Some(&dropped.id)).await;
    let second = mesh
        .controller
        .submit(&mesh.write("second.xml", &markup_workflow()));
    let news = quiet.next(SOON).await;
    assert!(
        news.data.contains(&format!("/items/{second}/2")),
        "the first event after resuming is the news, not the list bob had: {news:?}"
    );
    drop(quiet);

    // bob's stale button: "no longer available" where the action was, not an error page.
    let stale = bob.post(&select, &[("csrf", &bobs_csrf)]).await;
    assert_eq!(stale.status, 409, "{stale:?}");
    assert!(stale.body.contains("no longer available"), "{}", stale.body);
    assert!(
        stale.body.contains("Back to the worklist"),
        "{}",
        stale.body
    );

    // alice completes through the page's form; the instance goes on to succeed.
    let held = alice.get(&format!("/items/{id}/2")).await;
    assert!(held.body.contains("held by alice"), "{}", held.body);
    let complete = format!("/items/{id}/2/complete");
    let forged = alice.post_multipart(&complete, &[("detail", "x")]).await;
    assert_eq!(
        forged.status, 403,
        "a completion without the CSRF token: {forged:?}"
    );
    let done = alice
        .post_multipart(
            &complete,
            &[
                ("csrf", &csrf),
                ("outcome", "succeeded"),
                ("detail", "seal replaced"),
            ],
        )
        .await;
    assert_eq!(done.status, 303, "{done:?}");
    assert_eq!(mesh.controller.wait(id, WAIT_SECS).code, Some(0));
    let history = mesh.controller.history(id);
    assert!(
        history
            .iter()
            .any(|e| e.to_string().contains("completed by alice")),
        "{history:?}"
    );

    // Signing out ends the session (the CSRF token is needed for that too).
    assert_eq!(alice.post("/logout", &[]).await.status, 403);
    let out = alice.post("/logout", &[("csrf", &csrf)]).await;
    assert_eq!(out.status, 200, "{out:?}");
    assert!(out.header("set-cookie").contains("Max-Age=0"), "{out:?}");
    assert_eq!(alice.get("/").await.status, 401, "the session ended");
}
