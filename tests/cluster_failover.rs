//! Failover again and again, on the real binaries: three controllers on one etcd (a lease of
//! 2 s), the paper's two partners, instances submitted a batch at a time to whichever
//! controller owns the book, and after each batch that owner SIGKILLed: another member takes
//! the book over, the killed one comes back as a standby. At the end every instance has
//! succeeded and every command ran exactly once (the marks the commands leave), across all
//! the takeovers. How long each took from the kill until the next owner served is printed,
//! never asserted. Skipped without the `etcd` binary unless `MOBIWF_REQUIRE_ETCD=1` (CI).
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::time::{Duration, Instant};

use mobiwf_tests::harness::{
    Controller, Etcd, PAPER_PLACEMENT, Standby, activity_lines, assert_all_succeeded,
    logging_workflow, paper_partners, wait_for,
};
use mobiwf_tests::scratch;

/// How many times the owner is killed.
const KILLS: usize = 6;
/// Instances submitted before each kill.
const BATCH: usize = 4;
/// Where a controller listens for nodes: any free port (each owner has its own).
const ANY_PORT: &str = "/ip4/127.0.0.1/tcp/0";

/// `serve`'s options for member `member` of the cluster on `etcd`.
fn member_args(etcd: &Etcd, member: &str) -> Vec<String> {
    ["--etcd", &etcd.url, "--etcd-lease", "2", "--member", member]
        .iter()
        .map(|s| (*s).to_owned())
        .collect()
}

fn refs(v: &[String]) -> Vec<&str> {
    v.iter().map(String::as_str).collect()
}

/// The standby that publishes first (it owns the book now), taken from `standbys`.
fn next_owner(standbys: &mut Vec<(String, Standby)>) -> (String, Controller) {
    let at = wait_for(
        "another member to own the book",
        Duration::from_secs(60),
        || {
            for (_, standby) in standbys.iter_mut() {
                standby.check_alive();
            }
            standbys.iter().position(|(_, s)| s.published())
        },
    );
    let (name, standby) = standbys.remove(at);
    (name, standby.ready(Duration::from_secs(10)))
}

#[test]
fn the_owner_killed_again_and_again_loses_no_instance_and_repeats_no_command() {
    let dir = scratch("cluster-failover").unwrap();
    let Some(mut etcd) = Etcd::start_or_skip(&dir.join("etcd")) else {
        return;
    };
    let log = dir.join("ran.log");
    let file = logging_workflow(&dir, &log, Duration::from_millis(100));
    let start = |name: &str| {
        let args = member_args(&etcd, name);
        Controller::start_standby(&dir.join(name), ANY_PORT, &refs(&args))
    };
    let first = {
        let args = member_args(&etcd, "a");
        Controller::start_with(&dir.join("a"), ANY_PORT, &refs(&args))
    };
    let mut standbys = vec![("b".to_owned(), start("b")), ("c".to_owned(), start("c"))];
    let (mut p1, mut p2) = paper_partners(&dir, &first);

    let (mut name, mut owner) = ("a".to_owned(), first);
    let mut ids = Vec::new();
    let mut takeovers = Vec::new();
    for _ in 0..KILLS {
        ids.extend((0..BATCH).map(|_| owner.submit(&file)));
        owner.kill();
        let killed = Instant::now();
        let (next_name, next) = next_owner(&mut standbys);
        takeovers.push(killed.elapsed());
        eprintln!(
            "{name} killed; {next_name} serves the book {:?} later",
            killed.elapsed()
        );
        let again = start(&name);
        standbys.push((name, again));
        (name, owner) = (next_name, next);
    }
    for id in &ids {
        owner
            .wait(*id, 120)
            .expect_code(0, &format!("instance {id}"));
        assert_all_succeeded(&owner.status(*id), &PAPER_PLACEMENT);
    }
    p1.check_alive();
    p2.check_alive();
    let ran = activity_lines(&log);
    assert_eq!(ran.len(), ids.len() * PAPER_PLACEMENT.len(), "{ran:?}");
    let twice: Vec<_> = ran.iter().filter(|(_, n)| **n != 1).collect();
    assert!(
        twice.is_empty(),
        "commands that ran more than once: {twice:?}"
    );
    takeovers.sort();
    eprintln!(
        "{KILLS} takeovers, {} instances: from the kill until the next owner served, \
         p50 {:?}, max {:?}",
        ids.len(),
        takeovers[takeovers.len() / 2],
        takeovers[takeovers.len() - 1]
    );
    etcd.check_alive();
}
