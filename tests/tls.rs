//! The daemons' APIs over TLS, through the real binaries: a controller and the paper's two
//! nodes serve with `--tls-cert/--tls-key` (a self-signed certificate made by `rcgen`),
//! write `https://` in their `api` files, run the paper's workflow, and the CLIs reach them
//! over https with `--api-ca` and are refused without it; a bad key file stops `serve` and
//! `run` at start, naming the file; a plain API open to the network is warned about.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use mobiwf_tests::binary;
use mobiwf_tests::harness::{
    CLI_TIMEOUT, CmdOutput, Controller, Node, NodeSpec, PAPER_PLACEMENT, assert_all_succeeded,
    logging_workflow, run, start_nodes_with, wait_for,
};
use mobiwf_tests::scratch;

/// The certificate (self-signed, for `localhost` and 127.0.0.1) and key files in `dir`.
fn self_signed(dir: &Path) -> (PathBuf, PathBuf) {
    let made =
        rcgen::generate_simple_self_signed(vec!["localhost".into(), "127.0.0.1".into()]).unwrap();
    let (cert, key) = (dir.join("api-cert.pem"), dir.join("api-key.pem"));
    std::fs::write(&cert, made.cert.pem()).unwrap();
    std::fs::write(&key, made.key_pair.serialize_pem()).unwrap();
    (cert, key)
}

/// `mobiwf-controller ARGS --api API` with the administrator's token, trusting `ca` (none:
/// no CA given, in the environment either).
fn controller_cli(controller: &Controller, ca: Option<&Path>, args: &[&str]) -> CmdOutput {
    let mut cmd = Command::new(binary("mobiwf-controller").unwrap());
    cmd.args(args)
        .args(["--api", &controller.api])
        .env("MOBIWF_TOKEN_FILE", controller.token_file())
        .env_remove("MOBIWF_API_CA");
    if let Some(ca) = ca {
        cmd.arg("--api-ca").arg(ca);
    }
    run(&mut cmd, CLI_TIMEOUT)
}

#[test]
fn the_clis_reach_daemons_serving_over_tls_with_their_ca_and_only_with_it() {
    let dir = scratch("tls").unwrap();
    let (cert, key) = self_signed(&dir);
    let tls = [
        "--tls-cert",
        cert.to_str().unwrap(),
        "--tls-key",
        key.to_str().unwrap(),
    ];
    let mut controller =
        Controller::start_with(&dir.join("controller"), "/ip4/127.0.0.1/tcp/0", &tls);
    assert!(
        controller.api.starts_with("https://127.0.0.1:"),
        "the api file says {:?}",
        controller.api
    );
    controller.api_ca = Some(cert.clone());
    let nodes = start_nodes_with(&dir, &controller, &[("P1", "1,2,3"), ("P2", "1,3")], &tls);
    for node in &nodes {
        assert!(node.api.starts_with("https://"), "{}", node.api);
    }

    let log = dir.join("activities.log");
    let id = controller.submit(&logging_workflow(&dir, &log, Duration::ZERO));
    controller.wait(id, 60).expect_code(0, "wait");

    // The operator's CLI, given the CA: the instance, and the list of instances.
    let status = controller_cli(
        &controller,
        Some(&cert),
        &["status", &id.to_string(), "--json"],
    );
    status.expect_code(0, "status --json over https with --api-ca");
    assert_all_succeeded(
        &serde_json::from_str(&status.stdout).unwrap(),
        &PAPER_PLACEMENT,
    );
    let listed = controller_cli(&controller, Some(&cert), &["instances", "--json"]);
    listed.expect_code(0, "instances --json over https with --api-ca");
    assert!(
        listed.stdout.contains(&format!("\"id\": {id}")),
        "{}",
        listed.stdout
    );

    // Without the CA nobody vouches for the certificate: the CLI cannot ask.
    let refused = controller_cli(&controller, None, &["status", &id.to_string()]);
    assert_ne!(
        refused.code,
        Some(0),
        "status without --api-ca: {refused:?}"
    );
    assert!(refused.stderr.contains("certificate"), "{}", refused.stderr);
    // Plain HTTP to the TLS port gets no answer either.
    let plain = controller.api.replacen("https://", "http://", 1);
    let mut cmd = Command::new(binary("mobiwf-controller").unwrap());
    cmd.args(["status", &id.to_string(), "--api", &plain, "--api-ca"])
        .arg(&cert)
        .env("MOBIWF_TOKEN_FILE", controller.token_file());
    let plain = run(&mut cmd, CLI_TIMEOUT);
    assert_ne!(
        plain.code,
        Some(0),
        "status over http to the TLS port: {plain:?}"
    );

    // A node's CLI finds `https://` in the node's api file and trusts the CA from the
    // environment.
    let p1 = &nodes[0];
    let mut worklist = p1.command(&["worklist", "--json"]);
    worklist.env("MOBIWF_API_CA", &cert);
    let out = run(&mut worklist, CLI_TIMEOUT);
    out.expect_code(0, "node worklist over https with MOBIWF_API_CA");
    assert_eq!(out.stdout.trim(), "[]", "{}", out.stdout);
    let mut without = p1.command(&["worklist", "--json"]);
    without.env_remove("MOBIWF_API_CA");
    let out = run(&mut without, CLI_TIMEOUT);
    assert_ne!(out.code, Some(0), "the node's CLI without the CA: {out:?}");
    assert!(out.stderr.contains("certificate"), "{}", out.stderr);
}

#[test]
fn a_bad_key_file_stops_the_daemons_at_start_naming_it() {
    let dir = scratch("tls-bad-key").unwrap();
    let (cert, _) = self_signed(&dir);
    let garbage = dir.join("garbage-key.pem");
    std::fs::write(&garbage, "this is no key\n").unwrap();
    // The key of another certificate.
    let elsewhere = dir.join("elsewhere");
    std::fs::create_dir_all(&elsewhere).unwrap();
    let (_, other) = self_signed(&elsewhere);
    for (key, why) in [(&garbage, "no PEM private key"), (&other, "does not match")] {
        let serve = run(
            Command::new(binary("mobiwf-controller").unwrap())
                .args(["serve", "--data-dir"])
                .arg(dir.join("controller"))
                .args(["--api", "127.0.0.1:0", "--listen", "/ip4/127.0.0.1/tcp/0"])
                .arg("--tls-cert")
                .arg(&cert)
                .arg("--tls-key")
                .arg(key),
            CLI_TIMEOUT,
        );
        assert_ne!(
            serve.code,
            Some(0),
            "serve with {}: {serve:?}",
            key.display()
        );
        assert!(
            serve.stderr.contains(&key.display().to_string()) && serve.stderr.contains(why),
            "{}",
            serve.stderr
        );
        let node = run(
            Command::new(binary("mobiwf-node").unwrap())
                .args(["run", "--data-dir"])
                .arg(dir.join("node"))
                .args(["--name", "P1", "--controller"])
                .arg(
                    "/ip4/127.0.0.1/tcp/9/p2p/12D3KooWAWHsmz9Wk1aGWjvCbaXVtHkpTofztSkTUvUuMWbdt8jj",
                )
                .arg("--tls-cert")
                .arg(&cert)
                .arg("--tls-key")
                .arg(key),
            CLI_TIMEOUT,
        );
        assert_ne!(node.code, Some(0), "run with {}: {node:?}", key.display());
        assert!(
            node.stderr.contains(&key.display().to_string()) && node.stderr.contains(why),
            "{}",
            node.stderr
        );
    }
    assert!(
        !dir.join("controller").join("api").exists(),
        "the controller served despite its bad key"
    );
}

#[test]
fn a_plain_api_open_to_the_network_is_warned_about() {
    let dir = scratch("tls-plain").unwrap();
    let controller = Controller::start(&dir.join("controller"), "/ip4/127.0.0.1/tcp/0");
    let mut spec = NodeSpec::loopback(&dir.join("p1"), "P1", "1", &controller.address);
    spec.api = "0.0.0.0:0".to_owned();
    let node = Node::start(spec);
    wait_for(
        "the node's warning of a clear-text API",
        CLI_TIMEOUT,
        || {
            let log = node.log_tail(200);
            (log.contains("WITHOUT TLS") && log.contains("--tls-cert FILE --tls-key FILE"))
                .then_some(())
        },
    );
    assert!(
        !controller_log(&controller).contains("WITHOUT TLS"),
        "the controller's API is on loopback"
    );
}

/// The controller's log (its data directory's `.log`).
fn controller_log(controller: &Controller) -> String {
    std::fs::read_to_string(controller.dir.with_extension("log")).unwrap_or_default()
}
