//! Proves the people side of the mesh on the real binaries: a controller, a host
//! node H that runs every activity (skills 1), and two field devices D1 and D2 (a skill no
//! workflow uses) as separate processes. The controller's organisation directory reaches every
//! node; a manual activity for a role is offered on the worklists of its users' devices; the
//! first select wins and the others lose the item ("no longer available", exit 4), also when
//! twenty selects race and when the host is SIGKILLed right after a select; lock, release,
//! unlock, delegation, the administrator's insert and remove, and the responsible user's
//! notices work. (Assignment and bad documents: `people_assignment.rs`.)
//!
//! Nothing waits for luck: every expectation that takes a moment is polled with a deadline.
#![allow(clippy::unwrap_used, clippy::expect_used)]
#![allow(clippy::too_many_lines)] // end-to-end scenarios read best from top to bottom

#[path = "people/documents.rs"]
mod documents;
#[path = "people/mesh.rs"]
mod mesh;

use std::collections::BTreeSet;
use std::process::Command;

use documents::{TECH, single, workflow};
use mesh::{Mesh, SOON, WAIT_SECS};
use mobiwf_tests::harness::{
    CLI_TIMEOUT, CmdOutput, api_token_of, assert_all_succeeded, http_request, run_together,
    wait_for,
};
use serde_json::Value;

/// alice on D1 and bob on D2 in role tech; carol (tech, on leave) on D2; dave, an
/// administrator, on D1.
const TWO_TECHS: &str = r#"    <user id="alice" name="Alice" department="field" team="north" device="D1"><role id="tech" priority="2"/></user>
    <user id="bob" name="Bob" department="field" device="D2"><role id="tech" priority="1"/></user>
    <user id="carol" name="Carol" department="field" device="D2" onLeave="true"><role id="tech"/></user>
    <user id="dave" name="Dave" device="D1"><role id="administrator"/></user>"#;

/// Two users of a role on two devices, the item hosted on a third node: both see it; one
/// selects; the other's list loses it, their select exits 4 "no longer available" and they are
/// told; the holder completes and the instance goes on to succeed.
#[test]
fn first_select_wins_and_the_other_device_loses_the_item() {
    let mesh = Mesh::start("people-fcfa", TWO_TECHS);
    // A worklist lives on its user's device only.
    let elsewhere = mesh.d2.cli(&["worklist", "--user", "alice", "--json"]);
    elsewhere.expect_code(1, "alice's worklist asked of D2, which is not her device");

    let file = mesh.write(
        "fcfa.xml",
        &workflow(&[(1, "", &[]), (2, TECH, &[1]), (3, "", &[2])]),
    );
    let id = mesh.controller.submit(&file);

    let a = mesh.wait_item("alice", id, 2, "offered");
    let b = mesh.wait_item("bob", id, 2, "offered");
    for (user, item) in [("alice", &a), ("bob", &b)] {
        assert_eq!(item["host"], "H", "{user}'s item is hosted on H: {item:#}");
        assert_eq!(item["kind"], "manual", "{user}'s item: {item:#}");
        assert_eq!(item["name"], "A2", "{user}'s item: {item:#}");
    }
    assert_eq!(
        mesh.offered_to(id),
        ["alice", "bob"],
        "fcfa with policy all offers the item to every on-duty member of tech (not carol, on leave)"
    );
    mesh.assert_empty("carol", "she is on leave");
    mesh.wait_notice("alice", id, "offered");

    mesh.ok("alice", "select", id, 2, &[]);
    let held = mesh.wait_item("alice", id, 2, "selected");
    assert_eq!(
        held["holder"], "alice",
        "alice holds what she selected: {held:#}"
    );
    mesh.wait_gone("bob", id, 2);

    let late = mesh.act("bob", "select", id, 2, &[]);
    late.expect_code(4, "bob selects an item alice holds");
    assert!(
        late.stderr.contains("no longer available"),
        "bob's refused select should say \"no longer available\":\n{}",
        late.stderr
    );
    let revoked = mesh.wait_notice("bob", id, "revoked");
    assert!(
        revoked["text"]
            .as_str()
            .is_some_and(|t| t.contains("no longer available")),
        "bob's revocation notice should say the item is no longer available: {revoked:#}"
    );
    let not_holder = mesh.act("bob", "complete", id, 2, &[]);
    not_holder.expect_code(1, "bob, who does not hold the item, cannot complete it");
    assert!(
        not_holder
            .stderr
            .contains("you (bob) do not hold activity 2")
            && not_holder.stderr.contains("403"),
        "{}",
        not_holder.stderr
    );

    mesh.ok("alice", "complete", id, 2, &["--detail", "leak contained"]);
    mesh.succeeded(id);
    assert_all_succeeded(&mesh.controller.status(id), &[(1, "H"), (2, "H"), (3, "H")]);
    mesh.wait_gone("alice", id, 2);
    mesh.wait_history(id, "selected by alice");
    mesh.wait_history(id, "completed by alice");
    let events = mesh.controller.history(id);
    assert!(
        !events.iter().any(|e| e["what"]
            .as_str()
            .is_some_and(|w| w.contains("selected by bob"))),
        "bob's select was refused, yet the history shows it: {events:#?}"
    );
    mesh.assert_empty("carol", "after the instance");
}

/// Twenty selects from ten users of the role, all at once: exactly one user wins, everyone
/// else is told "no longer available" (exit 4), and only the winner's worklist keeps the item.
#[test]
fn twenty_concurrent_selects_have_exactly_one_winner() {
    let users: Vec<String> = (1..=10).map(|i| format!("t{i:02}")).collect();
    let lines: Vec<String> = users
        .iter()
        .enumerate()
        .map(|(i, u)| {
            let device = if i % 2 == 0 { "D1" } else { "D2" };
            format!(r#"    <user id="{u}" device="{device}"><role id="tech"/></user>"#)
        })
        .collect();
    let mesh = Mesh::start("people-race", &lines.join("\n"));
    let file = mesh.write("race.xml", &single(TECH));
    let id = mesh.controller.submit(&file);
    for u in &users {
        mesh.wait_item(u, id, 1, "offered");
    }

    let (ids, act) = (id.to_string(), "1".to_owned());
    let racers: Vec<&String> = users.iter().chain(users.iter()).collect();
    let commands: Vec<Command> = racers
        .iter()
        .map(|u| {
            mesh.device(u)
                .command(&["select", &ids, &act, "--user", u.as_str()])
        })
        .collect();
    let outputs = run_together(commands, CLI_TIMEOUT);
    let results: Vec<(&str, &CmdOutput)> = racers
        .iter()
        .map(|u| u.as_str())
        .zip(outputs.iter())
        .collect();
    let shown = || {
        results
            .iter()
            .map(|(u, o)| format!("{u}: exit {:?} {}", o.code, o.stderr.trim()))
            .collect::<Vec<_>>()
            .join("\n")
    };
    let winners: BTreeSet<&str> = results
        .iter()
        .filter(|(_, o)| o.code == Some(0))
        .map(|(u, _)| *u)
        .collect();
    assert_eq!(
        winners.len(),
        1,
        "exactly one user should win the item; the selects ended:\n{}",
        shown()
    );
    let winner = *winners.first().unwrap();
    for (u, o) in &results {
        if *u == winner {
            assert!(
                matches!(o.code, Some(0 | 4)),
                "the winner's other select ends 0 or 4:\n{}",
                shown()
            );
        } else {
            assert_eq!(o.code, Some(4), "every loser exits 4:\n{}", shown());
            assert!(
                o.stderr.contains("no longer available"),
                "{u}'s refusal should say \"no longer available\":\n{}",
                shown()
            );
        }
    }

    let held = mesh.wait_item(winner, id, 1, "selected");
    assert_eq!(held["holder"], winner, "{held:#}");
    for u in users.iter().filter(|u| u.as_str() != winner) {
        mesh.wait_gone(u, id, 1);
    }
    mesh.wait_history(id, &format!("selected by {winner}"));
    let events = mesh.controller.history(id);
    let selections: Vec<&str> = events
        .iter()
        .filter_map(|e| e["what"].as_str())
        .filter(|w| w.contains("selected by"))
        .collect();
    assert_eq!(
        selections.len(),
        1,
        "the history should show one select: {selections:#?}"
    );
    mesh.ok(winner, "complete", id, 1, &[]);
    mesh.succeeded(id);
}

/// The host is SIGKILLed right after acknowledging a select and restarted: it still knows the
/// holder (the other user's select still exits 4), the holder's device, killed and restarted
/// too, still shows the item selected, and the holder completes it.
#[test]
fn a_host_killed_right_after_a_select_keeps_the_holder() {
    let mut mesh = Mesh::start("people-host-crash", TWO_TECHS);
    let file = mesh.write(
        "crash.xml",
        &workflow(&[(1, "", &[]), (2, TECH, &[1]), (3, "", &[2])]),
    );
    let id = mesh.controller.submit(&file);
    mesh.wait_item("alice", id, 2, "offered");
    mesh.wait_item("bob", id, 2, "offered");

    mesh.ok("alice", "select", id, 2, &[]);
    mesh.h.kill();
    mesh.h.restart();

    let held = mesh.wait_item("alice", id, 2, "selected");
    assert_eq!(held["holder"], "alice", "{held:#}");
    mesh.wait_gone("bob", id, 2);
    // Bob's claim may wait for the restarted host to be reachable again (exit 3); once it is
    // answered, it is refused.
    let late = wait_for("bob's select to be answered by the host", SOON, || {
        let out = mesh.act("bob", "select", id, 2, &[]);
        (out.code != Some(3)).then_some(out)
    });
    late.expect_code(
        4,
        "bob selects after the host restarted: alice still holds it",
    );
    assert!(
        late.stderr.contains("no longer available"),
        "{}",
        late.stderr
    );

    // The device keeps its worklist across its own crash.
    mesh.d1.kill();
    mesh.d1.restart();
    let held = mesh.wait_item("alice", id, 2, "selected");
    assert_eq!(held["holder"], "alice", "after D1's restart: {held:#}");

    let done = mesh.act("alice", "complete", id, 2, &[]);
    assert!(
        matches!(done.code, Some(0 | 3)),
        "alice completes what she holds (exit 0, or 3 while the host is being reached): {done:?}"
    );
    mesh.succeeded(id);
    assert_all_succeeded(&mesh.controller.status(id), &[(1, "H"), (2, "H"), (3, "H")]);
    let events = mesh.controller.history(id);
    let selections: Vec<&str> = events
        .iter()
        .filter_map(|e| e["what"].as_str())
        .filter(|w| w.contains("selected by"))
        .collect();
    assert!(
        selections.len() == 1 && selections[0].contains("selected by alice"),
        "the history should show one select, alice's, across the host's crash: {events:#?}"
    );
}

/// alice and bob in tech; carol (a clerk, not in tech) on D2; dave, an administrator, on D1.
const ADMIN_USERS: &str = r#"    <user id="alice" name="Alice" department="field" device="D1"><role id="tech"/></user>
    <user id="bob" name="Bob" department="field" device="D2"><role id="tech"/></user>
    <user id="carol" name="Carol" device="D2"><role id="clerk"/></user>
    <user id="dave" name="Dave" device="D1"><role id="administrator"/></user>"#;

/// Delegation by the holder (and by the controller), the administrator's insert and remove,
/// and the notices of the instance's responsible user when it fails.
#[test]
fn delegation_insert_remove_and_notices_to_the_responsible_user() {
    let mesh = Mesh::start("people-admin", ADMIN_USERS);
    let file = mesh.write("tech.xml", &single(TECH));

    // Delegation: alice selects, hands it to bob, who sees it selected with alice as grantor.
    let id = mesh.controller.submit(&file);
    mesh.wait_item("alice", id, 1, "offered");
    mesh.wait_item("bob", id, 1, "offered");
    mesh.ok("alice", "select", id, 1, &[]);
    mesh.wait_gone("bob", id, 1);
    mesh.ok("alice", "delegate", id, 1, &["--to", "bob"]);
    let given = mesh.wait_item("bob", id, 1, "selected");
    assert_eq!(
        given["holder"], "bob",
        "bob holds the delegated item: {given:#}"
    );
    assert_eq!(given["grantor"], "alice", "alice delegated it: {given:#}");
    mesh.wait_gone("alice", id, 1);
    let out = mesh.act("alice", "complete", id, 1, &[]);
    out.expect_code(1, "alice gave the item away and can no longer complete it");
    assert!(
        out.stderr.contains("you (alice) do not hold activity 1") && out.stderr.contains("403"),
        "{}",
        out.stderr
    );
    mesh.ok("bob", "complete", id, 1, &[]);
    mesh.succeeded(id);
    mesh.wait_history(id, "delegated by alice to bob");
    mesh.wait_history(id, "completed by bob");

    // The controller delegates a held item.
    let id = mesh.controller.submit(&file);
    mesh.wait_item("alice", id, 1, "offered");
    mesh.ok("alice", "select", id, 1, &[]);
    mesh.wait_item("alice", id, 1, "selected");
    let ids = id.to_string();
    mesh.controller
        .cli(
            &[
                "worklist", "delegate", &ids, "1", "--user", "alice", "--to", "bob",
            ],
            CLI_TIMEOUT,
        )
        .expect_code(0, "controller worklist delegate of alice's item to bob");
    let given = mesh.wait_item("bob", id, 1, "selected");
    assert_eq!(given["holder"], "bob", "{given:#}");
    mesh.wait_gone("alice", id, 1);
    mesh.ok("bob", "complete", id, 1, &[]);
    mesh.succeeded(id);

    // Insert and remove: carol, not in tech, gets the item; bob loses it.
    let id = mesh.controller.submit(&file);
    let ids = id.to_string();
    mesh.wait_item("alice", id, 1, "offered");
    mesh.wait_item("bob", id, 1, "offered");
    mesh.assert_empty("carol", "she is not in role tech");
    mesh.controller
        .cli(
            &["worklist", "insert", &ids, "1", "--user", "carol"],
            CLI_TIMEOUT,
        )
        .expect_code(0, "controller worklist insert for carol");
    mesh.wait_item("carol", id, 1, "offered");
    mesh.wait_history(id, "inserted for carol");
    mesh.controller
        .cli(
            &["worklist", "remove", &ids, "1", "--user", "bob"],
            CLI_TIMEOUT,
        )
        .expect_code(0, "controller worklist remove for bob");
    mesh.wait_gone("bob", id, 1);
    mesh.wait_history(id, "removed for bob");
    let out = mesh.act("bob", "select", id, 1, &[]);
    assert_ne!(
        out.code,
        Some(0),
        "bob was removed from the item and cannot select it: {out:?}"
    );
    mesh.work("carol", id, 1);
    mesh.wait_history(id, "completed by carol");

    // The responsible user is told of the start, the failure and the end.
    let id = mesh
        .controller
        .submit_with(&file, &["--responsible", "dave"]);
    mesh.wait_notice("dave", id, "started");
    mesh.wait_item("alice", id, 1, "offered");
    mesh.ok("alice", "select", id, 1, &[]);
    mesh.ok(
        "alice",
        "complete",
        id,
        1,
        &["--failed", "--detail", "the pump is broken"],
    );
    mesh.controller.wait(id, WAIT_SECS).expect_code(
        1,
        "the instance fails: its only activity failed (contingency -1)",
    );
    mesh.wait_notice("dave", id, "failed");
    mesh.wait_notice("dave", id, "ended");
    let others = mesh.notices("alice");
    assert!(
        !others
            .iter()
            .any(|n| n["instance"].as_u64() == Some(id) && n["kind"] == "failed"),
        "only the responsible user is told of the failure: {others:#?}"
    );
}

/// Lock (only where `<disconnected>true`), release and unlock: a held item leaves the others'
/// worklists and comes back to them when given back.
#[test]
fn lock_release_and_unlock_give_the_item_back_to_everyone() {
    let mesh = Mesh::start("people-lock", TWO_TECHS);
    let bogus = mesh.d1.cli(&[
        "worklist", "--user", "alice", "--order", "sideways", "--json",
    ]);
    bogus.expect_code(1, "worklist with an unknown --order");

    // An item without <disconnected>: lock is invalid (exit 1); select then release.
    let plain = mesh.write("plain.xml", &single(TECH));
    let id = mesh.controller.submit(&plain);
    mesh.wait_item("alice", id, 1, "offered");
    mesh.wait_item("bob", id, 1, "offered");
    mesh.act("alice", "lock", id, 1, &[]).expect_code(
        1,
        "lock of an item whose activity is not <disconnected>true",
    );
    mesh.wait_item("alice", id, 1, "offered");
    assert!(
        mesh.item("bob", id, 1).is_some(),
        "a refused lock leaves the item offered to bob"
    );
    mesh.ok("alice", "select", id, 1, &[]);
    mesh.wait_gone("bob", id, 1);
    mesh.ok("alice", "release", id, 1, &[]);
    mesh.wait_item("bob", id, 1, "offered");
    mesh.wait_item("alice", id, 1, "offered");
    mesh.wait_history(id, "released by alice");
    mesh.work("bob", id, 1);

    // An item with <disconnected>true: lock, unlock, lock by the other user.
    let disconnected = mesh.write(
        "disconnected.xml",
        &single(&format!("{TECH}\n      <disconnected>true</disconnected>")),
    );
    let id = mesh.controller.submit(&disconnected);
    let item = mesh.wait_item("alice", id, 1, "offered");
    assert_eq!(item["disconnected"], true, "{item:#}");
    mesh.wait_item("bob", id, 1, "offered");
    mesh.ok("alice", "lock", id, 1, &[]);
    let held = mesh.wait_item("alice", id, 1, "locked");
    assert_eq!(held["holder"], "alice", "{held:#}");
    mesh.wait_gone("bob", id, 1);
    mesh.act("bob", "lock", id, 1, &[])
        .expect_code(4, "bob locks an item alice has locked");
    mesh.ok("alice", "unlock", id, 1, &[]);
    mesh.wait_item("bob", id, 1, "offered");
    mesh.ok("bob", "lock", id, 1, &[]);
    mesh.wait_gone("alice", id, 1);
    mesh.ok("bob", "complete", id, 1, &[]);
    mesh.succeeded(id);
    for what in [
        "item: locked by alice",
        "item: unlocked by alice",
        "item: locked by bob",
        "item: completed by bob",
    ] {
        mesh.wait_history(id, what);
    }
}

/// A manual activity is `ready` while offered and `running` once selected: a
/// dependency rule on another node that names its `RUNNING` releases its activity when alice
/// selects, not before, and not only when she completes.
#[test]
fn a_rule_on_another_node_follows_the_selection_of_a_work_item() {
    let mesh = Mesh::start("people-rule-running", TWO_TECHS);
    let xml = workflow(&[(1, TECH, &[])])
        .replace(
            "    </activity>\n  </activities>",
            r#"    </activity>
    <activity id="2">
      <nameActivity>A2</nameActivity>
      <activityTypeId>99</activityTypeId>
      <preconditions/>
      <depends><term activity="1" state="RUNNING"/></depends>
    </activity>
  </activities>"#,
        )
        .replace(
            "<activityType id=\"1\"><description>Field work</description></activityType>",
            "<activityType id=\"1\"><description>Field work</description></activityType>\
             <activityType id=\"99\"/>",
        )
        .replace(
            "    </partition>\n  </partitions>",
            "    </partition>\n    <partition id=\"2\"><partnerId>2</partnerId><activityId>2</activityId></partition>\n  </partitions>",
        )
        .replace(
            "    </partner>\n  </partners>",
            "    </partner>\n    <partner id=\"2\"><name>D1</name><skills><activityTypeId>99</activityTypeId></skills></partner>\n  </partners>",
        );
    let file = mesh.write("rule-running.xml", &xml);
    let id = mesh.controller.submit(&file);
    mesh.wait_item("alice", id, 1, "offered");
    let state = |a: u64| {
        let status = mesh.controller.status(id);
        status["activities"]
            .as_array()
            .unwrap()
            .iter()
            .find(|x| x["id"].as_u64() == Some(a))
            .map(|x| x["state"].as_str().unwrap_or_default().to_owned())
            .unwrap()
    };
    wait_for("1 ready at the controller", SOON, || {
        (state(1) == "ready").then_some(())
    });
    mesh.ok("alice", "select", id, 1, &[]);
    wait_for("2 ran on D1 once alice selected 1", SOON, || {
        (mesh.d1.state_of(id, 2).as_deref() == Some("succeeded")).then_some(())
    });
    wait_for("1 running at the controller", SOON, || {
        (state(1) == "running").then_some(())
    });
    mesh.ok("alice", "complete", id, 1, &[]);
    mesh.succeeded(id);
    // 2 waited while 1 was only offered: it started after the host applied alice's select.
    let selected_ms = mesh
        .controller
        .history(id)
        .iter()
        .find(|e| {
            e["what"]
                .as_str()
                .is_some_and(|w| w.contains("selected by alice"))
        })
        .and_then(|e| e["at_ms"].as_u64())
        .expect("the history tells alice's select");
    let started_ms = mesh.controller.status(id)["activities"]
        .as_array()
        .and_then(|acts| acts.iter().find(|a| a["id"] == 2))
        .and_then(|a| a["started_ms"].as_u64())
        .expect("2 started");
    assert!(
        started_ms >= selected_ms,
        "2 started at {started_ms}, before alice selected 1 at {selected_ms}"
    );
}

/// A person's completion on their device carries instance data to the item's host:
/// a value of the wrong type is refused with the reason; a value and a file over the inline
/// limit (fetched by the host from the device) reach the next activity's command.
#[test]
fn a_completion_on_a_device_carries_values_and_files_to_the_host() {
    let mesh = Mesh::start("people-data", TWO_TECHS);
    let log = mesh.write("ran.log", "");
    let check = format!(
        "<command>test \"$(cat \"$MOBIWF_DATA_DIR/reading\")\" = 5 &amp;&amp; \
         test $(wc -c &lt; \"$MOBIWF_DATA_DIR/photo\") = 400000 &amp;&amp; \
         echo \"$MOBIWF_INSTANCE read\" &gt;&gt; '{}'</command><reads>reading photo</reads>",
        log.display()
    );
    let writes = format!("{TECH}\n      <writes>reading photo</writes>");
    let doc = workflow(&[(1, &writes, &[]), (2, &check, &[1])]).replace(
        "</partners>",
        r#"</partners><data><value name="reading" type="number"/><file name="photo"/></data>"#,
    );
    let id = mesh.controller.submit(&mesh.write("data.xml", &doc));
    mesh.wait_item("alice", id, 1, "offered");
    mesh.ok("alice", "select", id, 1, &[]);
    let refused = mesh.act("alice", "complete", id, 1, &["--set", "reading=five"]);
    refused.expect_code(1, "a value of the wrong type");
    assert!(refused.stderr.contains("400"), "{}", refused.stderr);
    assert!(
        refused.stderr.contains("`reading` is a number"),
        "{}",
        refused.stderr
    );
    let photo = mesh.write("photo.jpg", &"x".repeat(400_000));
    let file = format!("photo={}", photo.display());
    mesh.ok(
        "alice",
        "complete",
        id,
        1,
        &["--set", "reading=5", "--file", &file],
    );
    mesh.succeeded(id);
    let ran = std::fs::read_to_string(&log).unwrap();
    assert_eq!(ran.trim(), format!("{id} read"));
    // The controller heard of the completion without the values (only the refusal's reason
    // names the refused one); the host fetched the photo while A2 was synchronizing.
    let history = mesh.controller.history(id);
    let text = serde_json::to_string(&history).unwrap();
    assert!(text.contains("completed by alice"), "{text}");
    assert!(
        !text.contains("photo") && !text.contains("values"),
        "values never reach the controller: {text}"
    );
    assert!(mesh.h.log_tail(400).contains("file fetched"));
}

/// A worklist answered by the API in pages: `?limit=` items a page, the whole count in
/// `X-Total-Count`, the next page named in `Link` while more follow, a page number or size
/// that cannot be read refused with what to give; the CLI lists them all.
#[test]
fn the_worklist_api_answers_in_pages_and_the_cli_reads_them_all() {
    let mesh = Mesh::start("people-pages", TWO_TECHS);
    let file = mesh.write("pages.xml", &single(TECH));
    let ids: Vec<u64> = (0..5).map(|_| mesh.controller.submit(&file)).collect();
    for id in &ids {
        mesh.wait_item("alice", *id, 1, "offered");
    }
    let listed: BTreeSet<u64> = mesh
        .worklist("alice")
        .iter()
        .filter_map(|i| i["instance"].as_u64())
        .collect();
    assert_eq!(
        listed,
        ids.iter().copied().collect(),
        "the CLI lists every item"
    );

    let token = api_token_of(&mesh.d1.api);
    let get = |query: &str| {
        let path = format!("/users/alice/worklist?{query}");
        http_request(&mesh.d1.api, "GET", &path, token.as_deref(), None).unwrap()
    };
    let mut paged = Vec::new();
    for (page, count, next) in [(1, 2, true), (2, 2, true), (3, 1, false)] {
        let answer = get(&format!("order=priority&page={page}&limit=2"));
        assert_eq!(answer.status, 200, "{answer:?}");
        let head = answer.head.to_ascii_lowercase();
        assert!(head.contains("x-total-count: 5"), "{}", answer.head);
        let link = format!(
            "</users/alice/worklist?order=priority&page={}&limit=2>; rel=\"next\"",
            page + 1
        );
        assert_eq!(head.contains(&link), next, "page {page}: {}", answer.head);
        let entries: Vec<Value> = serde_json::from_str(&answer.body).unwrap();
        assert_eq!(entries.len(), count, "page {page}: {}", answer.body);
        paged.extend(entries.iter().filter_map(|i| i["instance"].as_u64()));
    }
    let whole: Vec<u64> = {
        let out = mesh.d1.cli(&[
            "worklist", "--user", "alice", "--order", "priority", "--json",
        ]);
        out.expect_code(0, "worklist --order priority");
        let items: Vec<Value> = serde_json::from_str(&out.stdout).unwrap();
        items
            .iter()
            .filter_map(|i| i["instance"].as_u64())
            .collect()
    };
    assert_eq!(paged, whole, "the pages are the whole list, in its order");
    for bad in ["limit=0", "limit=501", "page=0", "page=two"] {
        let answer = get(bad);
        assert_eq!(answer.status, 400, "{bad}: {answer:?}");
        assert!(
            answer.body.contains("whole number"),
            "{bad}: {}",
            answer.body
        );
    }
}
