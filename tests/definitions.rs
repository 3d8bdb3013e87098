//! Deployed definitions on the real binaries (a controller and the paper's partners P1 and P2
//! as processes):
//!
//! - `deploy` stores a definition under its `<name>` as version 1; the same definition laid out
//!   otherwise, or in PDL, changes nothing (and says so); a changed one is version 2; `definitions` and
//!   `definitions show` show them; `start NAME` runs the latest to success on the partners,
//!   `start NAME --version 1` the first even after the second exists; `status`, `history`
//!   and the instance list show the name and version, and `list --definition` (alias
//!   `instances`) filters by it; `definitions remove` is refused while an instance runs,
//!   allowed once it ended, and a name deployed again numbers on; everything survives a
//!   controller restart, and a finished instance of a removed definition is still shown and
//!   read back;
//! - a definition's creator role: a token speaking for a user without the role gets 403 (and
//!   one speaking for nobody), also for an older version without a role of its own (the
//!   latest's governs every start) and for a `submit` of the document; one with the role
//!   starts it (201) and its user is the responsible one; an API without tokens
//!   (`--insecure-no-auth`) checks nobody; in the console, a session whose login link names a
//!   user starts it as that user.
#![allow(clippy::unwrap_used, clippy::expect_used)]
#![allow(clippy::too_many_lines)] // end-to-end scenarios read best from top to bottom

use std::path::{Path, PathBuf};

use mobiwf_tests::harness::{
    CLI_TIMEOUT, CmdOutput, Controller, Node, NodeSpec, gated, http_request, paper_mesh,
    paper_workflow_with, xml_text,
};
use mobiwf_tests::scratch;
use serde_json::Value;

/// The paper's workflow named `name` (and with `creator` as its creator role), each activity
/// with `extra(id)`, written to `dir/file`.
fn definition(
    dir: &Path,
    file: &str,
    name: &str,
    creator: Option<&str>,
    extra: impl Fn(u64) -> String,
) -> PathBuf {
    let xml = paper_workflow_with(extra);
    let creator = creator.map_or(String::new(), |r| format!("<creatorRole>{r}</creatorRole>"));
    let xml = xml.replacen(
        "</description>",
        &format!("</description>\n  <name>{name}</name>{creator}"),
        1,
    );
    let path = dir.join(file);
    std::fs::write(&path, xml).unwrap();
    path
}

/// The number a command printed alone (an instance id).
fn id_of(out: &CmdOutput, what: &str) -> u64 {
    out.expect_code(0, what);
    out.stdout
        .trim()
        .parse()
        .unwrap_or_else(|e| panic!("{what} printed {:?}, not an id: {e}", out.stdout))
}

fn json(out: &CmdOutput, what: &str) -> Value {
    out.expect_code(0, what);
    serde_json::from_str(&out.stdout)
        .unwrap_or_else(|e| panic!("{what} printed invalid JSON ({e}):\n{}", out.stdout))
}

/// The ids of `list ARGS --json`.
fn listed(controller: &Controller, args: &[&str]) -> Vec<u64> {
    let mut all = vec!["instances", "--json"];
    all.extend_from_slice(args);
    let page = json(&controller.cli(&all, CLI_TIMEOUT), "instances --json");
    page["instances"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["id"].as_u64().unwrap())
        .collect()
}

/// `mobiwf-controller ARGS` as the administrator.
fn cli(controller: &Controller, args: &[&str]) -> CmdOutput {
    controller.cli(args, CLI_TIMEOUT)
}

/// `definitions --json`, parsed.
fn definitions(controller: &Controller) -> Vec<Value> {
    let out = controller.cli(&["definitions", "--json"], CLI_TIMEOUT);
    json(&out, "definitions --json").as_array().unwrap().clone()
}

#[test]
fn definitions_are_deployed_once_versioned_started_by_name_and_kept_across_restarts() {
    let dir = scratch("definitions").unwrap();
    let (mut controller, _p1, _p2) = paper_mesh(&dir);
    let gate = dir.join("gate");
    let log = dir.join("runs.log");
    let v1 = definition(&dir, "v1.xml", "maintenance", None, |_| String::new());
    // The same model laid out otherwise: a comment, blank lines.
    let same = dir.join("v1-again.xml");
    let text = std::fs::read_to_string(&v1).unwrap();
    let text = text.replacen("<activities>", "<!-- again -->\n\n  <activities>", 1);
    std::fs::write(&same, text).unwrap();
    let v2 = definition(&dir, "v2.xml", "maintenance", None, |id| {
        if id == 16 {
            format!("<command>{}</command>", xml_text(&gated(&log, "A1", &gate)))
        } else {
            String::new()
        }
    });
    let deployed = cli(&controller, &["deploy", v1.to_str().unwrap()]);
    deployed.expect_code(0, "deploy v1");
    assert_eq!(deployed.stdout.trim(), "maintenance version 1 deployed");
    let again = cli(&controller, &["deploy", same.to_str().unwrap()]);
    again.expect_code(0, "deploy v1 again");
    assert!(
        again.stdout.starts_with("maintenance version 1 unchanged"),
        "{}",
        again.stdout
    );
    // The same definition in PDL, deployed under the name: nothing changes either.
    let pdl = mobiwf_tests::repo_root().join("examples/paper/workflow.pdl");
    let pdl = pdl.to_str().unwrap();
    let in_pdl = cli(&controller, &["deploy", pdl, "--name", "maintenance"]);
    in_pdl.expect_code(0, "deploy the PDL");
    assert!(
        in_pdl.stdout.starts_with("maintenance version 1 unchanged"),
        "{}",
        in_pdl.stdout
    );
    let second = cli(&controller, &["deploy", v2.to_str().unwrap()]);
    second.expect_code(0, "deploy v2");
    assert_eq!(second.stdout.trim(), "maintenance version 2 deployed");

    let listed_defs = definitions(&controller);
    assert_eq!(listed_defs.len(), 1, "{listed_defs:?}");
    assert_eq!(listed_defs[0]["name"], "maintenance");
    assert_eq!(listed_defs[0]["latest"], 2);
    assert_eq!(listed_defs[0]["versions"], serde_json::json!([1, 2]));
    let table = cli(&controller, &["definitions"]);
    table.expect_code(0, "definitions");
    let line = table.stdout.lines().nth(1).unwrap_or_default().to_owned();
    assert!(
        line.starts_with("maintenance") && line.contains(" 1-2 "),
        "{}",
        table.stdout
    );
    let shown = cli(
        &controller,
        &["definitions", "show", "maintenance", "--version", "1"],
    );
    shown.expect_code(0, "definitions show --version 1");
    assert!(
        shown.stdout.contains("<name>maintenance</name>") && !shown.stdout.contains("<command>"),
        "{}",
        shown.stdout
    );
    assert!(
        shown.stderr.contains("maintenance version 1 (latest 2)"),
        "{}",
        shown.stderr
    );
    let latest = json(
        &cli(
            &controller,
            &["definitions", "show", "maintenance", "--json"],
        ),
        "definitions show --json",
    );
    assert_eq!(latest["version"], 2);
    assert!(latest["document"].as_str().unwrap().contains("<command>"));
    let missing = cli(
        &controller,
        &["definitions", "show", "maintenance", "--version", "9"],
    );
    missing.expect_code(1, "show of a version that is not there");
    assert!(
        missing.stderr.contains("versions are 1 to 2"),
        "{}",
        missing.stderr
    );

    // v1 started after v2 exists runs to success on the partners; v2 (the latest) runs
    // until its gate opens; a submission stays anonymous.
    let first = id_of(
        &cli(&controller, &["start", "maintenance", "--version", "1"]),
        "start v1",
    );
    controller.wait(first, 60).expect_code(0, "wait for v1");
    let running = id_of(
        &cli(&controller, &["start", "maintenance"]),
        "start the latest",
    );
    let anonymous = controller.submit(&v1);
    controller
        .wait(anonymous, 60)
        .expect_code(0, "wait for the submitted one");
    let status = controller.status(first);
    assert_eq!(status["state"], "succeeded");
    assert_eq!(
        status["definition"],
        serde_json::json!({"name": "maintenance", "version": 1})
    );
    assert_eq!(
        controller.status(running)["definition"]["version"],
        2,
        "the latest"
    );
    assert!(controller.status(anonymous).get("definition").is_none());
    let table = cli(&controller, &["status", &running.to_string()]);
    table.expect_code(0, "status");
    assert!(
        table.stdout.starts_with(&format!(
            "instance {running} (definition maintenance version 2, "
        )),
        "{}",
        table.stdout
    );
    let history = controller.history(first);
    assert!(
        history[0]["what"]
            .as_str()
            .unwrap()
            .starts_with("started: definition maintenance version 1; partitions"),
        "{history:?}"
    );
    assert_eq!(
        listed(&controller, &["--definition", "maintenance"]),
        [first, running]
    );
    assert!(listed(&controller, &["--definition", "other"]).is_empty());
    assert_eq!(listed(&controller, &[]), [first, running, anonymous]);
    let list = cli(&controller, &["list"]);
    assert!(
        list.stdout.contains("maintenance v1") && list.stdout.contains("maintenance v2"),
        "{}",
        list.stdout
    );

    // Not removed while an instance of it runs.
    let refused = cli(&controller, &["definitions", "remove", "maintenance"]);
    refused.expect_code(1, "remove while running");
    assert!(
        refused
            .stderr
            .contains(&format!("instances running: {running}")),
        "{}",
        refused.stderr
    );
    assert_eq!(definitions(&controller)[0]["running"], 1);

    // A restart keeps the definitions and the instances' names and versions.
    controller.restart();
    assert_eq!(
        definitions(&controller)[0]["versions"],
        serde_json::json!([1, 2])
    );
    assert_eq!(controller.status(running)["definition"]["version"], 2);
    std::fs::write(&gate, "").unwrap();
    controller
        .wait(running, 60)
        .expect_code(0, "wait for v2 after the restart");

    // Removed once nothing runs; its finished instances still show, and are read back.
    let removed = cli(&controller, &["definitions", "remove", "maintenance"]);
    removed.expect_code(0, "remove");
    assert!(removed.stdout.contains("kept"), "{}", removed.stdout);
    assert!(definitions(&controller).is_empty());
    let gone = cli(&controller, &["start", "maintenance"]);
    gone.expect_code(1, "start of a removed definition");
    assert!(
        gone.stderr
            .contains("no definition is deployed as maintenance"),
        "{}",
        gone.stderr
    );
    controller.restart();
    assert_eq!(controller.status(first)["definition"]["version"], 1);
    let read_back = cli(&controller, &["cancel", &first.to_string()]);
    read_back.expect_code(1, "cancel of a finished instance of a removed definition");
    assert!(
        read_back.stderr.contains("is succeeded: cannot cancel it"),
        "{}",
        read_back.stderr
    );
    // Deployed again, its versions go on from those kept for the finished instances.
    let again = cli(&controller, &["deploy", v1.to_str().unwrap()]);
    again.expect_code(0, "deploy after the removal");
    assert_eq!(again.stdout.trim(), "maintenance version 3 deployed");
}

/// Makes an operator's token speaking for `user` (none: for nobody), saved in `dir`.
fn operator_token(controller: &Controller, dir: &Path, user: Option<&str>) -> PathBuf {
    let mut args = vec!["api-tokens", "create", "--role", "operator"];
    if let Some(user) = user {
        args.extend(["--user", user]);
    }
    let out = controller.cli(&args, CLI_TIMEOUT);
    out.expect_code(0, "api-tokens create");
    let file = dir.join(format!("{}.token", user.unwrap_or("nobody")));
    std::fs::write(&file, out.stdout.trim()).unwrap();
    file
}

/// `POST /definitions/inspect/instances` with the token in `file`: status and body.
fn start_with(controller: &Controller, file: &Path, body: &str) -> (u16, Value) {
    let token = std::fs::read_to_string(file).unwrap();
    let path = "/definitions/inspect/instances";
    let answer = http_request(
        &controller.api,
        "POST",
        path,
        Some(token.trim()),
        Some(body),
    )
    .unwrap();
    let body = serde_json::from_str(&answer.body).unwrap_or(Value::Null);
    (answer.status, body)
}

#[test]
fn a_creator_role_lets_only_its_members_start_and_they_are_responsible() {
    let dir = scratch("definitions-creator").unwrap();
    let (controller, _p1, _p2) = paper_mesh(&dir);
    let org = dir.join("org.xml");
    std::fs::write(
        &org,
        r#"<organisation>
  <roles><role id="tech"/><role id="clerk"/></roles>
  <users>
    <user id="alice" device="P1"><role id="tech"/></user>
    <user id="bob" device="P2"><role id="clerk"/></user>
  </users>
</organisation>
"#,
    )
    .unwrap();
    controller
        .cli(&["org", "apply", org.to_str().unwrap()], CLI_TIMEOUT)
        .expect_code(0, "org apply");
    // Version 1 names no role; version 2 adds one, which then governs version 1's starts too.
    let open = definition(&dir, "open.xml", "inspect", None, |_| String::new());
    controller
        .cli(&["deploy", open.to_str().unwrap()], CLI_TIMEOUT)
        .expect_code(0, "deploy v1");
    let file = definition(&dir, "inspect.xml", "inspect", Some("tech"), |_| {
        String::new()
    });
    controller
        .cli(&["deploy", file.to_str().unwrap()], CLI_TIMEOUT)
        .expect_code(0, "deploy");
    let alice = operator_token(&controller, &dir, Some("alice"));
    let bob = operator_token(&controller, &dir, Some("bob"));
    let nobody = operator_token(&controller, &dir, None);
    let tokens = controller.cli(&["api-tokens", "list"], CLI_TIMEOUT);
    assert!(
        tokens.stdout.contains("operator for alice"),
        "{}",
        tokens.stdout
    );

    let (status, body) = start_with(&controller, &bob, "{}");
    assert_eq!(status, 403, "{body}");
    let why = body["error"].as_str().unwrap();
    assert!(
        why.contains("user bob may not start") && why.contains("role tech"),
        "{why}"
    );
    let (status, body) = start_with(&controller, &nobody, "");
    assert_eq!(status, 403, "{body}");
    assert!(
        body["error"]
            .as_str()
            .unwrap()
            .contains("speaks for no user"),
        "{body}"
    );
    // Through the CLI: said, exit 1.
    let out = controller.cli(
        &["start", "inspect", "--token-file", bob.to_str().unwrap()],
        CLI_TIMEOUT,
    );
    out.expect_code(1, "start by bob");
    assert!(out.stderr.contains("role tech"), "{}", out.stderr);
    let (status, body) = start_with(&controller, &bob, r#"{"version": 1}"#);
    assert_eq!(status, 403, "{body}");
    assert!(
        body["error"].as_str().unwrap().contains("latest version 2"),
        "{body}"
    );
    // A document with a creator role is submitted only by a member, as it is started.
    let token = std::fs::read_to_string(&bob).unwrap();
    let xml = std::fs::read_to_string(&file).unwrap();
    let answer = http_request(
        &controller.api,
        "POST",
        "/instances?source=inspect.xml",
        Some(token.trim()),
        Some(&xml),
    )
    .unwrap();
    assert_eq!(answer.status, 403, "{answer:?}");
    assert!(answer.body.contains("role tech"), "{answer:?}");
    let out = controller.cli(
        &[
            "submit",
            file.to_str().unwrap(),
            "--token-file",
            bob.to_str().unwrap(),
        ],
        CLI_TIMEOUT,
    );
    assert_ne!(out.code, Some(0), "submit by bob: {}", out.stderr);
    assert!(out.stderr.contains("role tech"), "{}", out.stderr);
    assert_eq!(
        json(
            &controller.cli(&["instances", "--json"], CLI_TIMEOUT),
            "list"
        )["instances"],
        serde_json::json!([]),
        "nothing started"
    );

    let (status, body) = start_with(&controller, &alice, "{}");
    assert_eq!(status, 201, "{body}");
    assert_eq!(body["name"], "inspect");
    let id = body["instance"].as_u64().unwrap();
    controller.wait(id, 60).expect_code(0, "wait");
    assert_eq!(controller.status(id)["responsible"], "alice");
    let (status, body) = start_with(&controller, &alice, r#"{"responsible": "bob"}"#);
    assert_eq!(status, 201, "{body}");
    let other = body["instance"].as_u64().unwrap();
    assert_eq!(controller.status(other)["responsible"], "bob");
    // Inputs go in the body's data, checked against the definition's: it declares none.
    let (status, body) = start_with(&controller, &alice, r#"{"data": {"reading": 4}}"#);
    assert_eq!(status, 400, "{body}");
    assert!(body.to_string().contains("reading"), "{body}");

    // The console: a session whose link names no user is told how to sign in; one acting as
    // bob is refused in words; one acting as alice starts it, and she is responsible.
    let page = "/console/definitions/inspect";
    let nobody = Console::sign_in(&controller, &[]);
    let (status, shown) = nobody.get(page);
    assert_eq!(status, 200, "{shown}");
    assert!(
        shown.contains("login-link --role operator --user USER"),
        "{shown}"
    );
    assert!(!shown.contains("form class=\"start\""), "{shown}");
    let bob = Console::sign_in(&controller, &["--user", "bob"]);
    let (status, refused) = bob.start(page);
    assert_eq!(status, 403, "{refused}");
    assert!(refused.contains("user bob may not start"), "{refused}");
    let alice = Console::sign_in(&controller, &["--user", "alice"]);
    let (status, head) = alice.start(page);
    assert_eq!(status, 303, "{head}");
    let id: u64 = head
        .lines()
        .find_map(|l| {
            l.to_ascii_lowercase()
                .strip_prefix("location: /console/instances/")
                .map(str::to_owned)
        })
        .and_then(|id| id.trim().parse().ok())
        .unwrap_or_else(|| panic!("goes to the new instance's page: {head}"));
    controller.wait(id, 60).expect_code(0, "wait");
    assert_eq!(controller.status(id)["responsible"], "alice");
}

/// A console session signed in through `login-link --role operator` (with more arguments),
/// driven by plain HTTP: its cookie, and the CSRF token its pages carry.
struct Console {
    api: String,
    cookie: String,
}

impl Console {
    fn sign_in(controller: &Controller, more: &[&str]) -> Console {
        let mut args = vec!["login-link", "--role", "operator"];
        args.extend(more);
        let out = controller.cli(&args, CLI_TIMEOUT);
        out.expect_code(0, "login-link");
        let link = out.stdout.trim();
        let path = &link[link.find("/login").unwrap()..];
        let (status, head, _) = raw(&controller.api, &format!("GET {path}"), "", "");
        assert_eq!(status, 303, "{head}");
        let cookie = head
            .lines()
            .find_map(|l| {
                l.strip_prefix("set-cookie: ")
                    .or(l.strip_prefix("Set-Cookie: "))
            })
            .and_then(|c| c.split(';').next())
            .unwrap_or_else(|| panic!("a session cookie: {head}"))
            .to_owned();
        Console {
            api: controller.api.clone(),
            cookie,
        }
    }

    fn get(&self, path: &str) -> (u16, String) {
        let (status, _, body) = raw(&self.api, &format!("GET {path}"), &self.cookie, "");
        (status, body)
    }

    /// Posts the page's Start form as it is (its CSRF token and version): the status, and
    /// the head of a redirect or the body of a page.
    fn start(&self, page: &str) -> (u16, String) {
        let (_, shown) = self.get(page);
        let field = |name: &str| {
            let at = shown
                .find(&format!("name=\"{name}\" value=\""))
                .unwrap_or_else(|| panic!("the form's {name}: {shown}"));
            let rest = &shown[at + name.len() + 15..];
            rest[..rest.find('"').unwrap()].to_owned()
        };
        let form = format!("csrf={}&version={}", field("csrf"), field("version"));
        let (status, head, body) = raw(
            &self.api,
            &format!("POST {page}/start"),
            &self.cookie,
            &form,
        );
        (status, if status == 303 { head } else { body })
    }
}

/// One plain HTTP/1.1 request (`METHOD PATH`) with a cookie and a form body: status, head, body.
fn raw(api: &str, request: &str, cookie: &str, form: &str) -> (u16, String, String) {
    use std::io::{Read, Write};
    let mut stream = std::net::TcpStream::connect(api).unwrap();
    stream
        .set_read_timeout(Some(std::time::Duration::from_secs(30)))
        .unwrap();
    let cookie = if cookie.is_empty() {
        String::new()
    } else {
        format!("Cookie: {cookie}\r\n")
    };
    write!(
        stream,
        "{request} HTTP/1.1\r\nHost: {api}\r\n{cookie}\
         Content-Type: application/x-www-form-urlencoded\r\n\
         Content-Length: {}\r\nConnection: close\r\n\r\n{form}",
        form.len()
    )
    .unwrap();
    let mut answer = String::new();
    stream.read_to_string(&mut answer).unwrap();
    let (head, body) = answer.split_once("\r\n\r\n").unwrap();
    let status = head.split_whitespace().nth(1).unwrap().parse().unwrap();
    (status, head.to_owned(), body.to_owned())
}

#[test]
fn an_api_without_tokens_checks_no_creator_role() {
    let dir = scratch("definitions-insecure").unwrap();
    let controller = Controller::start_with(
        &dir.join("controller"),
        "/ip4/127.0.0.1/tcp/0",
        &["--insecure-no-auth"],
    );
    let _node = Node::start(NodeSpec::loopback(
        &dir.join("p1"),
        "P1",
        "1,2,3",
        &controller.address,
    ));
    controller.wait_registered(&["P1"]);
    let file = definition(&dir, "inspect.xml", "inspect", Some("tech"), |_| {
        String::new()
    });
    controller
        .cli(&["deploy", file.to_str().unwrap()], CLI_TIMEOUT)
        .expect_code(0, "deploy");
    let path = "/definitions/inspect/instances";
    let answer = http_request(&controller.api, "POST", path, None, None).unwrap();
    assert_eq!(answer.status, 201, "{answer:?}");
    let body: Value = serde_json::from_str(&answer.body).unwrap();
    let id = body["instance"].as_u64().unwrap();
    controller.wait(id, 60).expect_code(0, "wait");
    assert!(controller.status(id).get("responsible").is_none());
}
