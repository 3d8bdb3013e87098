//! `scripts/cluster` end to end, as an operator runs it: three etcd members, three
//! controllers on them and two partner nodes; the paper's workflow runs, the owner is killed
//! with SIGKILL, another controller owns the book at a higher epoch, the workflow runs again;
//! and the script leaves nothing behind (its directory removed, its etcd members gone).
//! Skipped without the `etcd` binary unless `MOBIWF_REQUIRE_ETCD=1`, as in CI, where it fails.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::net::TcpStream;
use std::process::Command;
use std::time::Duration;

use mobiwf_tests::harness::{etcd_or_skip, run};
use mobiwf_tests::{binary, repo_root};

/// The number after `word ` in `text`.
fn number_after(text: &str, word: &str) -> u64 {
    let at = text
        .find(word)
        .unwrap_or_else(|| panic!("no {word:?} in {text:?}"))
        + word.len();
    text[at..]
        .trim_start()
        .split(|c: char| !c.is_ascii_digit())
        .next()
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("no number after {word:?} in {text:?}"))
}

#[test]
fn the_cluster_script_runs_the_workflow_across_a_killed_owner_and_cleans_up() {
    if !etcd_or_skip() {
        return;
    }
    let controller = binary("mobiwf-controller").unwrap();
    let mut script = Command::new(repo_root().join("scripts/cluster"));
    script.env("MOBIWF_BIN", controller.parent().unwrap());
    let out = run(&mut script, Duration::from_secs(180));
    out.expect_code(0, "scripts/cluster");
    let stdout = &out.stdout;

    // The workflow ran to success before and after the kill, on two different owners.
    let succeeded: Vec<&str> = stdout
        .lines()
        .filter(|l| l.starts_with("instance ") && l.ends_with("succeeded"))
        .collect();
    assert_eq!(succeeded.len(), 2, "{stdout}");
    let takeover = stdout
        .lines()
        .find(|l| l.contains(" after the kill"))
        .unwrap_or_else(|| panic!("no takeover shown:\n{stdout}"));
    let new = number_after(takeover, "owns the book at epoch");
    let was = number_after(takeover.split("(was").nth(1).unwrap(), "at epoch");
    assert!(new > was, "the epoch rose: {takeover}");
    let killed = stdout
        .lines()
        .find_map(|l| l.strip_prefix("killing the owner "))
        .and_then(|l| l.split_whitespace().next())
        .unwrap_or_else(|| panic!("no kill shown:\n{stdout}"));
    assert!(
        !takeover.starts_with(killed),
        "another member owns the book: {takeover}"
    );
    assert!(stdout.contains("members (3):"), "{stdout}");
    assert!(stdout.contains("members (2):"), "{stdout}");

    // Nothing is left: its directory is gone, and no etcd member answers on its port.
    let dir = stdout
        .lines()
        .find_map(|l| l.strip_prefix("data in"))
        .and_then(|l| l.split_whitespace().next())
        .unwrap_or_else(|| panic!("no directory shown:\n{stdout}"));
    assert!(!std::path::Path::new(dir).exists(), "{dir} is left behind");
    let endpoints = stdout
        .lines()
        .find_map(|l| l.strip_prefix("etcd"))
        .and_then(|l| l.rsplit(' ').next())
        .unwrap_or_else(|| panic!("no endpoints shown:\n{stdout}"));
    for url in endpoints.split(',') {
        let address = url.trim_start_matches("http://");
        assert!(
            TcpStream::connect(address).is_err(),
            "etcd at {url} still answers after the script ended"
        );
    }
}
