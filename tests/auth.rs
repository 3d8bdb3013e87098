//! Who may use the HTTP APIs, through the real binaries: without a token or with
//! a wrong one the controller and the nodes answer 401, a token without the role 403 (the CLI
//! exits 6 and says why); an operator submits, a viewer only reads; an administrator makes
//! and revokes tokens with the CLI (a revoked token is 401 at once); a node's user token
//! reaches its user's own worklist and no one else's; `--insecure-no-auth` serves without
//! tokens, only when asked.
#![allow(clippy::unwrap_used, clippy::expect_used)]
#![allow(clippy::too_many_lines)] // end-to-end scenarios read best from top to bottom

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::Command;

use mobiwf_tests::binary;
use mobiwf_tests::harness::{
    CLI_TIMEOUT, CmdOutput, Controller, HttpAnswer, Node, NodeSpec, api_token_of, http_request,
    metric, run, wait_for,
};
use mobiwf_tests::{repo_root, scratch};

/// The token check's exit code (`EXIT_NOT_AUTHORISED`).
const NOT_AUTHORISED: i32 = 6;

/// `mobiwf-controller ARGS --api API` with `--token-file FILE` only (no token from the
/// environment).
fn controller_as(controller: &Controller, token: Option<&Path>, args: &[&str]) -> CmdOutput {
    let mut cmd = Command::new(binary("mobiwf-controller").unwrap());
    cmd.args(args)
        .args(["--api", &controller.api])
        .env_remove("MOBIWF_TOKEN_FILE")
        .env_remove("MOBIWF_TOKEN");
    if let Some(file) = token {
        cmd.arg("--token-file").arg(file);
    }
    run(&mut cmd, CLI_TIMEOUT)
}

/// `mobiwf-node ARGS --api API --token-file FILE`.
fn node_as(node: &Node, token: &Path, args: &[&str]) -> CmdOutput {
    let mut cmd = Command::new(binary("mobiwf-node").unwrap());
    cmd.args(args)
        .args(["--api", &node.api])
        .arg("--token-file")
        .arg(token)
        .env_remove("MOBIWF_NODE_TOKEN_FILE")
        .env_remove("MOBIWF_NODE_TOKEN");
    run(&mut cmd, CLI_TIMEOUT)
}

/// Saves the token a `create` printed to `dir/name`.
fn save(out: &CmdOutput, dir: &Path, name: &str) -> PathBuf {
    out.expect_code(0, &format!("api-tokens create ({name})"));
    let token = out.stdout.trim();
    assert!(token.starts_with("mwf_api_"), "create printed {token:?}");
    let file = dir.join(name);
    std::fs::write(&file, token).unwrap();
    file
}

fn token(file: &Path) -> String {
    std::fs::read_to_string(file).unwrap().trim().to_owned()
}

/// Asserts that `answer` is the token check's refusal with `status` and a JSON error.
fn refused(answer: &HttpAnswer, status: u16, what: &str) {
    assert_eq!(answer.status, status, "{what}: {answer:?}");
    assert!(
        answer
            .head
            .to_ascii_lowercase()
            .contains("www-authenticate: bearer"),
        "{what}: no WWW-Authenticate: {answer:?}"
    );
    let body: serde_json::Value = serde_json::from_str(&answer.body)
        .unwrap_or_else(|e| panic!("{what}: not JSON ({e}): {answer:?}"));
    assert!(body["error"].is_string(), "{what}: {answer:?}");
}

#[test]
fn the_controller_api_needs_a_token_with_the_role() {
    let dir = scratch("auth-controller").unwrap();
    let controller = Controller::start(&dir.join("controller"), "/ip4/127.0.0.1/tcp/0");
    let node = Node::start(NodeSpec::loopback(
        &dir.join("p1"),
        "P1",
        "1,2,3",
        &controller.address,
    ));
    controller.wait_registered(&["P1"]);
    let admin_file = controller.token_file();
    let mode = std::fs::metadata(&admin_file).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o600, "operator.token is the owner's only");
    let api = controller.api.as_str();

    // No token, a wrong one: 401, saying where the administrator's token is.
    let none = http_request(api, "GET", "/instances", None, None).unwrap();
    refused(&none, 401, "no token");
    assert!(none.body.contains("operator.token"), "{}", none.body);
    let wrong = http_request(api, "GET", "/instances", Some("mwf_api_0000"), None).unwrap();
    refused(&wrong, 401, "a wrong token");
    let out = controller_as(&controller, None, &["list"]);
    out.expect_code(NOT_AUTHORISED, "list without a token");
    assert!(out.stderr.contains("needs a token"), "{}", out.stderr);

    // The administrator makes a viewer's and an operator's token with the CLI.
    let viewer = save(
        &controller.cli(
            &[
                "api-tokens",
                "create",
                "--role",
                "viewer",
                "--label",
                "dashboard",
            ],
            CLI_TIMEOUT,
        ),
        &dir,
        "viewer.token",
    );
    let operator = save(
        &controller.cli(&["api-tokens", "create", "--role", "operator"], CLI_TIMEOUT),
        &dir,
        "operator-role.token",
    );
    let bad = controller.cli(&["api-tokens", "create", "--role", "root"], CLI_TIMEOUT);
    bad.expect_code(1, "a role that does not exist");
    assert!(bad.stderr.contains("viewer"), "{}", bad.stderr);

    // A viewer reads, and may not submit or make tokens: 403, exit 6.
    controller_as(&controller, Some(&viewer), &["list"]).expect_code(0, "a viewer lists");
    controller_as(&controller, Some(&viewer), &["nodes"]).expect_code(0, "a viewer's nodes");
    let paper = repo_root().join("examples/paper/workflow.xml");
    let paper = paper.to_str().unwrap();
    let out = controller_as(&controller, Some(&viewer), &["submit", paper]);
    out.expect_code(NOT_AUTHORISED, "a viewer submits");
    assert!(out.stderr.contains("the operator role"), "{}", out.stderr);
    let xml = std::fs::read_to_string(repo_root().join("examples/paper/workflow.xml")).unwrap();
    let post = http_request(api, "POST", "/instances", Some(&token(&viewer)), Some(&xml));
    refused(&post.unwrap(), 403, "a viewer's POST /instances");

    // An operator submits (201) and controls, and may not manage tokens or the mesh.
    let post = http_request(
        api,
        "POST",
        "/instances",
        Some(&token(&operator)),
        Some(&xml),
    );
    let post = post.unwrap();
    assert_eq!(post.status, 201, "an operator submits: {post:?}");
    let out = controller_as(&controller, Some(&operator), &["submit", paper]);
    out.expect_code(0, "an operator submits with the CLI");
    let id = out.stdout.trim().to_owned();
    let out = controller_as(
        &controller,
        Some(&operator),
        &["wait", &id, "--timeout", "30"],
    );
    out.expect_code(0, "the operator's instance succeeds");
    for args in [
        &["api-tokens", "list"][..],
        &["tokens", "create"][..],
        &[
            "nodes",
            "allow",
            "12D3KooWDpJ7As7BWAwRMfu1VU2WCqNjvq387JEYKDBj4kx6nXTN",
        ][..],
    ] {
        let out = controller_as(&controller, Some(&operator), args);
        out.expect_code(NOT_AUTHORISED, &format!("an operator's {args:?}"));
        assert!(out.stderr.contains("administrator"), "{}", out.stderr);
    }

    // MOBIWF_TOKEN works as well as a file.
    let mut cmd = Command::new(binary("mobiwf-controller").unwrap());
    cmd.args(["list", "--api", api])
        .env_remove("MOBIWF_TOKEN_FILE")
        .env("MOBIWF_TOKEN", token(&viewer));
    run(&mut cmd, CLI_TIMEOUT).expect_code(0, "list with MOBIWF_TOKEN");

    // The list shows ids, roles and labels, never a token; revoking is immediate.
    let out = controller.cli(&["api-tokens", "list", "--json"], CLI_TIMEOUT);
    out.expect_code(0, "api-tokens list");
    assert!(!out.stdout.contains(&token(&viewer)), "{}", out.stdout);
    let listed: serde_json::Value = serde_json::from_str(&out.stdout).unwrap();
    let viewer_id = listed["tokens"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["label"] == "dashboard")
        .and_then(|t| t["id"].as_str())
        .expect("the viewer's token is listed")
        .to_owned();
    assert_eq!(listed["enforced"], true);
    controller
        .cli(&["api-tokens", "revoke", &viewer_id], CLI_TIMEOUT)
        .expect_code(0, "revoke the viewer's token");
    let after = http_request(api, "GET", "/instances", Some(&token(&viewer)), None).unwrap();
    refused(&after, 401, "a revoked token");
    controller_as(&controller, Some(&viewer), &["list"])
        .expect_code(NOT_AUTHORISED, "list with a revoked token");
    controller
        .cli(&["api-tokens", "revoke", &viewer_id], CLI_TIMEOUT)
        .expect_code(1, "revoke it again");

    // Every refusal is counted.
    let page = mobiwf_tests::harness::http_get(api, "/metrics").unwrap();
    let counted = |status| metric(&page, "mobiwf_api_refused_total", &[("status", status)]);
    assert!(counted("401") >= 4.0, "401s counted:\n{page}");
    assert!(counted("403") >= 5.0, "403s counted:\n{page}");

    // A restarted controller keeps the tokens and its operator.token.
    let before = token(&admin_file);
    let mut controller = controller;
    controller.restart();
    assert_eq!(
        token(&admin_file),
        before,
        "operator.token kept across a restart"
    );
    controller_as(&controller, Some(&operator), &["list"]).expect_code(0, "after a restart");
    controller_as(&controller, Some(&viewer), &["list"])
        .expect_code(NOT_AUTHORISED, "still revoked after a restart");
    drop(node);
}

#[test]
fn a_node_api_needs_a_token_and_a_user_token_reaches_only_its_user() {
    let dir = scratch("auth-node").unwrap();
    let controller = Controller::start(&dir.join("controller"), "/ip4/127.0.0.1/tcp/0");
    // examples/organisation.xml: alice and carol on device N2, bob on N3.
    let n2 = Node::start(NodeSpec::loopback(
        &dir.join("n2"),
        "N2",
        "1",
        &controller.address,
    ));
    controller.wait_registered(&["N2"]);
    let org = repo_root().join("examples/organisation.xml");
    let org = org.to_str().unwrap();
    let operator = save(
        &controller.cli(&["api-tokens", "create", "--role", "operator"], CLI_TIMEOUT),
        &dir,
        "operator-role.token",
    );
    let out = controller_as(&controller, Some(&operator), &["org", "apply", org]);
    out.expect_code(NOT_AUTHORISED, "an operator applies an organisation");
    controller
        .cli(&["org", "apply", org], CLI_TIMEOUT)
        .expect_code(0, "the administrator applies it");
    wait_for("N2 to hold the directory", CLI_TIMEOUT, || {
        (n2.directory_version()? >= 1).then_some(())
    });
    let api = n2.api.as_str();
    let admin = api_token_of(api).expect("the node's api.token");
    assert_eq!(
        admin,
        token(&dir.join("n2/api.token")),
        "the node's administrator token is in DATA/api.token"
    );

    // No token, a wrong one, the controller's token: 401.
    refused(
        &http_request(api, "GET", "/worklist", None, None).unwrap(),
        401,
        "no token on the node",
    );
    let controllers = token(&controller.token_file());
    refused(
        &http_request(api, "GET", "/worklist", Some(&controllers), None).unwrap(),
        401,
        "the controller's token on a node",
    );

    // The node's administrator (the CLI reads DATA/api.token itself) makes a user's token.
    let make = |args: &[&str]| {
        let mut all = vec!["api-tokens", "create"];
        all.extend_from_slice(args);
        n2.cli(&all)
    };
    let alice = save(
        &make(&["--user", "alice", "--label", "alice's phone"]),
        &dir,
        "alice.token",
    );
    let viewer = save(&make(&["--role", "viewer"]), &dir, "node-viewer.token");
    make(&["--user", "a/b"]).expect_code(1, "a user id with a slash");

    // alice's token: her worklist and notices (200), not carol's, not the node's (403).
    let get = |path: &str, who: &Path| http_request(api, "GET", path, Some(&token(who)), None);
    let own = get("/users/alice/worklist", &alice).unwrap();
    assert_eq!(own.status, 200, "alice's own worklist: {own:?}");
    assert_eq!(get("/users/alice/notices", &alice).unwrap().status, 200);
    refused(
        &get("/users/carol/worklist", &alice).unwrap(),
        403,
        "carol's worklist",
    );
    refused(
        &get("/users/al%69ce2/worklist", &alice).unwrap(),
        403,
        "an encoded other name",
    );
    refused(&get("/runs", &alice).unwrap(), 403, "a user token on /runs");
    refused(
        &get("/api-tokens", &alice).unwrap(),
        403,
        "a user token on /api-tokens",
    );
    node_as(&n2, &alice, &["worklist", "--user", "alice"]).expect_code(0, "alice's worklist");
    let out = node_as(&n2, &alice, &["worklist", "--user", "carol"]);
    out.expect_code(NOT_AUTHORISED, "alice asks for carol's worklist");
    assert!(out.stderr.contains("user alice"), "{}", out.stderr);
    let out = node_as(&n2, &alice, &["select", "1", "2", "--user", "carol"]);
    out.expect_code(NOT_AUTHORISED, "alice selects for carol");

    // A viewer reads but completes nothing; an operator's completion gets past the check.
    assert_eq!(get("/users/carol/worklist", &viewer).unwrap().status, 200);
    assert_eq!(get("/runs", &viewer).unwrap().status, 200);
    let complete = http_request(
        api,
        "POST",
        "/instances/1/activities/2/complete",
        Some(&token(&viewer)),
        Some("{}"),
    );
    refused(&complete.unwrap(), 403, "a viewer completes");
    let out = node_as(&n2, &viewer, &["complete", "1", "2"]);
    out.expect_code(NOT_AUTHORISED, "a viewer completes with the CLI");
    let unknown = http_request(
        api,
        "POST",
        "/instances/1/activities/2/complete",
        Some(&admin),
        Some("{}"),
    );
    assert_eq!(
        unknown.unwrap().status,
        404,
        "past the check: no such activity"
    );

    // Revoked: 401 at once.
    let listed = n2.cli(&["api-tokens", "list", "--json"]);
    listed.expect_code(0, "api-tokens list on the node");
    let listed: serde_json::Value = serde_json::from_str(&listed.stdout).unwrap();
    let alice_id = listed["tokens"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["grant"]["user"] == "alice")
        .and_then(|t| t["id"].as_str())
        .expect("alice's token is listed")
        .to_owned();
    n2.cli(&["api-tokens", "revoke", &alice_id])
        .expect_code(0, "revoke alice's token");
    refused(
        &get("/users/alice/worklist", &alice).unwrap(),
        401,
        "alice's revoked token",
    );
}

#[test]
fn insecure_no_auth_serves_without_tokens_only_when_asked() {
    let dir = scratch("auth-insecure").unwrap();
    let controller = Controller::start_with(
        &dir.join("controller"),
        "/ip4/127.0.0.1/tcp/0",
        &["--insecure-no-auth"],
    );
    let mut spec = NodeSpec::loopback(&dir.join("p1"), "P1", "1,2,3", &controller.address);
    spec.extra = vec!["--insecure-no-auth".to_owned()];
    let node = Node::start(spec);
    controller.wait_registered(&["P1"]);
    let plain = http_request(&controller.api, "GET", "/instances", None, None).unwrap();
    assert_eq!(plain.status, 200, "{plain:?}");
    let out = controller_as(&controller, None, &["list"]);
    out.expect_code(0, "list without a token from an insecure controller");
    let plain = http_request(&node.api, "GET", "/worklist", None, None).unwrap();
    assert_eq!(plain.status, 200, "{plain:?}");
    // A secure daemon next to it still refuses.
    let secure = Controller::start(&dir.join("secure"), "/ip4/127.0.0.1/tcp/0");
    let refused_plain = http_request(&secure.api, "GET", "/instances", None, None).unwrap();
    assert_eq!(refused_plain.status, 401, "{refused_plain:?}");
}
