//! Controllers in a cluster on a real etcd (started by each test; skipped without the `etcd`
//! binary unless `MOBIWF_REQUIRE_ETCD=1`, as in CI, where it fails). First the store of one
//! shard on its own: its entries, and the transaction that refuses every write of an owner
//! whose shard another member claimed since. Then the real binaries: two controllers on one
//! etcd, the owner killed, the other takes the book over and an instance submitted before
//! the kill completes; a stopped owner whose lease lapsed is fenced when it runs again.
//!
//! etcd runs with its default limits on one transaction (128 operations, 1.5 MiB): a larger
//! batch lands whole through the shard's journal, a journal left half written is finished or
//! dropped by whoever comes next, an entry no transaction can carry is refused with the limit
//! named; and a controller whose retention sweep deletes forty instances in one group commit
//! goes on, its book whole across a takeover.
//!
//! The nodes take nothing from an owner that was fenced: once a node heard the owner after
//! it, a message of the older epoch is refused (a stopped owner's, in flight when it lost the
//! book), and the stopped owner, running again, stops at its first write.
#![allow(clippy::unwrap_used, clippy::expect_used)]
#![allow(clippy::too_many_lines)] // end-to-end scenarios read best from top to bottom

use std::sync::Arc;
use std::time::Duration;

use mobiwf_cluster::txn::{self, TxnLimits};
use mobiwf_cluster::{Epoch, MemberId, ShardId};
use mobiwf_controller::cluster::{
    EtcdLink, Fenced, Layout, MemberRecord, Membership, ShardStore, claim, ensure_cluster,
};
use mobiwf_runtime::store::{Batch, Durability, Store};
use mobiwf_tests::harness::{
    CLI_TIMEOUT, Controller, Etcd, Node, PAPER_PLACEMENT, activity_lines, assert_all_succeeded,
    http_get, http_request, logging_workflow, metric, paper_partners, paper_workflow_with, run,
    wait_for,
};
use mobiwf_tests::{binary, scratch};
use tokio::sync::watch;

/// How often a member looks at the shard in the store test.
const LOOK: Duration = Duration::from_millis(100);

/// A link to `etcd` (its connection is made off the async workers, as the controller's is).
async fn connect(etcd: &Etcd) -> Arc<EtcdLink> {
    let url = etcd.url.clone();
    Arc::new(
        tokio::task::spawn_blocking(move || EtcdLink::connect(&[url]))
            .await
            .unwrap()
            .unwrap(),
    )
}

/// Joins as `name`, with a short lease kept alive (as a controller keeps its own) until it is
/// revoked: a slow machine must not let it lapse while the test runs.
async fn join(link: &Arc<EtcdLink>, layout: &Layout, name: &str) -> Membership {
    let record = MemberRecord {
        member: MemberId(name.to_owned()),
        api: "-".to_owned(),
    };
    let membership = Membership::join(link, layout, &record, Duration::from_secs(2))
        .await
        .unwrap();
    let (lost, _) = watch::channel(false);
    membership.keep_alive(link, lost);
    membership
}

fn keys(entries: &[(Vec<u8>, Vec<u8>)]) -> Vec<String> {
    entries
        .iter()
        .map(|(k, _)| String::from_utf8(k.clone()).unwrap())
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_shards_store_writes_only_while_its_epoch_owns_the_shard() {
    let dir = scratch("cluster-store").unwrap();
    let Some(etcd) = Etcd::start_or_skip(&dir.join("etcd")) else {
        return;
    };
    let link = connect(&etcd).await;
    let layout = Layout::new("store-test/");
    ensure_cluster(&link, &layout, None).await.unwrap();
    // The shard count is fixed when the cluster is created.
    let two = mobiwf_cluster::ShardCount::new(2);
    let refused = ensure_cluster(&link, &layout, two).await.unwrap_err();
    assert!(refused.to_string().contains("fixed"), "{refused}");
    let shard = ShardId(0);
    let a = join(&link, &layout, "a").await;
    let held = claim(&link, &layout, shard, &a, LOOK).await.unwrap();
    let (fenced_a, fenced_seen) = watch::channel(None);
    let store_a = Arc::new(ShardStore::new(
        link.clone(),
        &layout,
        shard,
        held,
        fenced_a,
    ));

    // One batch: more entries than a page of the scans, a key put then deleted, a key put
    // twice (etcd refuses a transaction naming a key twice: the last change counts).
    let mut batch = Batch::default();
    for i in 0..2500 {
        batch.put(format!("n/{i:05}"), i.to_string());
    }
    batch.put("x", "1");
    batch.delete("x");
    batch.put("y", "1");
    batch.put("y", "2");
    let written = store_a.clone();
    tokio::task::spawn_blocking(move || written.write(batch, Durability::Synced))
        .await
        .unwrap()
        .unwrap();
    let reads = store_a.clone();
    let (x, y, all, page, long) = tokio::task::spawn_blocking(move || {
        (
            reads.get(b"x").unwrap(),
            reads.get(b"y").unwrap(),
            reads.scan_prefix(b"n/").unwrap(),
            reads.scan_from(b"n/", b"n/01000", 3).unwrap(),
            reads.scan_from(b"n/", b"n/", 1500).unwrap(),
        )
    })
    .await
    .unwrap();
    assert_eq!((x, y), (None, Some(b"2".to_vec())));
    let expected: Vec<String> = (0..2500).map(|i| format!("n/{i:05}")).collect();
    assert_eq!(keys(&all), expected, "every entry, in key order");
    assert_eq!(keys(&page), ["n/01000", "n/01001", "n/01002"]);
    assert_eq!(keys(&long), expected[..1500].to_vec());

    // Another member waits while A owns the shard.
    let b = join(&link, &layout, "b").await;
    let waited = tokio::time::timeout(LOOK * 10, claim(&link, &layout, shard, &b, LOOK)).await;
    assert!(waited.is_err(), "B claimed a shard A owns: {waited:?}");

    // A's lease lapses (as if it stopped renewing it): B claims the shard and reads its book.
    let lease = a.lease;
    link.call(move |etcd| async move { etcd.lease_revoke(lease).await })
        .await
        .unwrap();
    let taken = claim(&link, &layout, shard, &b, LOOK).await.unwrap();
    assert!(taken > held, "epoch {taken} after {held}");
    let (fenced_b, _) = watch::channel(None);
    let store_b = Arc::new(ShardStore::new(
        link.clone(),
        &layout,
        shard,
        taken,
        fenced_b,
    ));

    // A still believes it owns the shard: its next write is refused by the transaction, and
    // so is every one after it, without asking etcd.
    let (old, new) = (store_a.clone(), store_b.clone());
    let (refused, again, b_read, b_wrote, z) = tokio::task::spawn_blocking(move || {
        let mut late = Batch::default();
        late.put("z", "from A");
        let refused = old.write(late.clone(), Durability::Synced);
        let again = old.write(late, Durability::Synced);
        let b_read = new.get(b"y").unwrap();
        let mut b_batch = Batch::default();
        b_batch.put("w", "from B");
        let b_wrote = new.write(b_batch, Durability::Synced);
        (refused, again, b_read, b_wrote, new.get(b"z").unwrap())
    })
    .await
    .unwrap();
    let refused = refused.unwrap_err().to_string();
    assert!(refused.contains("fenced"), "{refused}");
    assert!(again.unwrap_err().to_string().contains("fenced"));
    assert_eq!(
        *fenced_seen.borrow(),
        Some(Fenced {
            shard,
            held,
            now: Some(taken),
        })
    );
    assert_eq!(b_read, Some(b"2".to_vec()), "B loads the book A wrote");
    b_wrote.unwrap();
    assert_eq!(z, None, "nothing of A's refused write is in the store");
    assert!(held > Epoch(0));
}

#[test]
fn a_standby_controller_takes_the_book_over_and_a_stopped_owner_is_fenced() {
    let dir = scratch("cluster-takeover").unwrap();
    let Some(mut etcd) = Etcd::start_or_skip(&dir.join("etcd")) else {
        return;
    };
    let log = dir.join("ran.log");
    // Every command takes a little time: the owner is killed while the instance runs.
    let file = logging_workflow(&dir, &log, Duration::from_millis(500));
    let (a_args, b_args, c_args) = (
        cluster_args(&etcd, "a"),
        cluster_args(&etcd, "b"),
        cluster_args(&etcd, "c"),
    );
    let any_port = "/ip4/127.0.0.1/tcp/0";
    let mut a = Controller::start_with(&dir.join("a"), any_port, &refs(&a_args));
    let standby_b = Controller::start_standby(&dir.join("b"), any_port, &refs(&b_args));
    let (mut p1, mut p2) = paper_partners(&dir, &a);

    // The instance is in etcd once `submit` answers; its owner dies at once.
    let id = a.submit(&file);
    a.kill();
    let b = standby_b.ready(Duration::from_secs(60));
    let peer = |address: &str| {
        address
            .rsplit("/p2p/")
            .next()
            .unwrap_or_default()
            .to_owned()
    };
    assert_eq!(
        peer(&b.address),
        peer(&a.address),
        "the controllers of a cluster are one peer to the nodes"
    );
    let out = b.wait(id, 120);
    p1.check_alive();
    p2.check_alive();
    out.expect_code(0, "wait on the controller that took the book over");
    assert_all_succeeded(&b.status(id), &PAPER_PLACEMENT);
    let ran = activity_lines(&log);
    assert_eq!(ran.len(), PAPER_PLACEMENT.len(), "{ran:?}");
    assert!(
        ran.values().all(|n| *n == 1),
        "a command ran twice: {ran:?}"
    );

    // B is stopped past its lease; C takes the book; B, running again, is fenced: the
    // transaction conditional on its epoch fails, and it stops at once.
    let standby_c = Controller::start_standby(&dir.join("c"), any_port, &refs(&c_args));
    let mut b = b;
    b.signal("STOP");
    let c = standby_c.ready(Duration::from_secs(60));
    b.signal("CONT");
    let code = b.wait_exit(Duration::from_secs(60));
    let tail = b.log_tail(20);
    assert_eq!(code, Some(3), "B's exit; its log ends with:\n{tail}");
    assert!(
        tail.contains("fenced: a transaction conditional on epoch"),
        "B's log ends with:\n{tail}"
    );
    assert_all_succeeded(&c.status(id), &PAPER_PLACEMENT);

    // `cluster` shows who owns the book now, at which epoch, from etcd itself.
    let mut cluster = std::process::Command::new(binary("mobiwf-controller").unwrap());
    cluster.args(["cluster", "--etcd", &etcd.url, "--json"]);
    let out = run(&mut cluster, CLI_TIMEOUT);
    out.expect_code(0, "cluster --json");
    let shown: serde_json::Value = serde_json::from_str(&out.stdout).unwrap();
    assert_eq!(shown["shards"][0]["owner"], "c", "{shown}");
    assert!(shown["shards"][0]["epoch"].as_i64().unwrap() > 0, "{shown}");
    let members: Vec<&str> = shown["members"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|m| m["member"].as_str())
        .collect();
    assert_eq!(members, ["c"], "only C is live: {shown}");
    etcd.check_alive();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_commit_too_large_for_one_transaction_lands_whole_or_not_at_all() {
    let dir = scratch("cluster-journal").unwrap();
    let Some(etcd) = Etcd::start_or_skip(&dir.join("etcd")) else {
        return;
    };
    let link = connect(&etcd).await;
    let layout = Layout::new("journal-test/");
    ensure_cluster(&link, &layout, None).await.unwrap();
    let shard = ShardId(0);
    let a = join(&link, &layout, "a").await;
    let epoch = claim(&link, &layout, shard, &a, LOOK).await.unwrap();
    let open = || {
        let (fenced, _) = watch::channel(None);
        ShardStore::new(link.clone(), &layout, shard, epoch, fenced)
            .with_limits(TxnLimits::default())
    };
    let store = Arc::new(open());

    // More writes than etcd takes in one transaction, and more bytes (three values of 700
    // KiB): one batch, every entry there after it.
    let mut batch = Batch::default();
    for i in 0..300 {
        batch.put(format!("n/{i:05}"), i.to_string());
    }
    for i in 0..3 {
        batch.put(format!("big/{i}"), vec![b'x'; 700 * 1024]);
    }
    // A single entry larger than any transaction: refused, its batch not written at all.
    let mut too_big = Batch::default();
    too_big.put("n/00000", "changed");
    too_big.put("huge", vec![b'x'; 2 * 1024 * 1024]);
    let s = store.clone();
    let (refused, all, big) = tokio::task::spawn_blocking(move || {
        s.write(batch, Durability::Synced).unwrap();
        let refused = s
            .write(too_big, Durability::Synced)
            .unwrap_err()
            .to_string();
        let (all, big) = (
            s.scan_prefix(b"n/").unwrap(),
            s.scan_prefix(b"big/").unwrap(),
        );
        (refused, all, big)
    })
    .await
    .unwrap();
    let left = journal_left(&link, &layout, shard).await;
    assert_eq!(all.len(), 300);
    assert_eq!(
        all[0].1,
        b"0".to_vec(),
        "nothing of the refused batch landed"
    );
    assert_eq!(big.len(), 3);
    assert!(big.iter().all(|(_, v)| v.len() == 700 * 1024));
    assert!(left.is_empty(), "the journal is cleared after the commit");
    assert!(refused.contains("huge"), "{refused}");
    assert!(refused.contains("--max-request-bytes 1572864"), "{refused}");

    // A writer stopped after sealing its journal, before applying it: the next store to read
    // the shard applies it first. One stopped before sealing: its entries go, unapplied.
    let journal = layout.journal(shard);
    let entry = |i: usize, key: &str, value: Option<&[u8]>| {
        (
            format!("{journal}{}", txn::entry_name(i)).into_bytes(),
            txn::encode_entry(key.as_bytes(), value),
        )
    };
    let sealed = vec![
        entry(0, "n/00001", None),
        entry(1, "sealed/a", Some(b"1")),
        (
            format!("{journal}{}", txn::SEAL_NAME).into_bytes(),
            txn::seal_value(2),
        ),
    ];
    put_all(&link, sealed).await;
    let s = Arc::new(open());
    let (gone, applied) = tokio::task::spawn_blocking(move || {
        (s.get(b"n/00001").unwrap(), s.get(b"sealed/a").unwrap())
    })
    .await
    .unwrap();
    assert_eq!((gone, applied), (None, Some(b"1".to_vec())));
    put_all(&link, vec![entry(0, "unsealed/a", Some(b"1"))]).await;
    let s = Arc::new(open());
    let (unsealed, kept) = tokio::task::spawn_blocking(move || {
        (s.get(b"unsealed/a").unwrap(), s.get(b"n/00002").unwrap())
    })
    .await
    .unwrap();
    assert_eq!((unsealed, kept), (None, Some(b"2".to_vec())));
    let left = journal_left(&link, &layout, shard).await;
    assert!(left.is_empty(), "no journal left: {left:?}");
}

/// The keys of `shard`'s journal in etcd.
async fn journal_left(link: &EtcdLink, layout: &Layout, shard: ShardId) -> Vec<String> {
    let prefix = layout.journal(shard).into_bytes();
    let end = mobiwf_controller::cluster::store::prefix_end(&prefix);
    let found = link
        .call(move |etcd| async move { etcd.range(prefix, Some(end), 0).await })
        .await
        .unwrap();
    found
        .into_iter()
        .map(|kv| String::from_utf8_lossy(&kv.key).into_owned())
        .collect()
}

/// Puts `pairs` straight into etcd, as a writer that stopped half way left them.
async fn put_all(link: &EtcdLink, pairs: Vec<(Vec<u8>, Vec<u8>)>) {
    for (key, value) in pairs {
        link.call(move |etcd| async move { etcd.put(key, value, None).await })
            .await
            .unwrap();
    }
}

#[test]
fn a_group_commit_over_etcds_limits_lands_whole_and_the_controller_goes_on() {
    let dir = scratch("cluster-large-commit").unwrap();
    let Some(mut etcd) = Etcd::start_or_skip(&dir.join("etcd")) else {
        return;
    };
    let file = dir.join("quick.xml");
    std::fs::write(&file, paper_workflow_with(|_| String::new())).unwrap();
    let any_port = "/ip4/127.0.0.1/tcp/0";
    let mut a = Controller::start_with(&dir.join("a"), any_port, &refs(&cluster_args(&etcd, "a")));
    let _partners = paper_partners(&dir, &a);
    let old: Vec<u64> = (0..40).map(|_| a.submit(&file)).collect();
    for id in &old {
        a.wait(*id, 60).expect_code(0, "wait");
    }
    a.kill();

    // B takes the book over and deletes every finished instance at once: one group commit of
    // each one's record, summary, index, definition and history, far over 128 writes.
    let mut b_args = cluster_args(&etcd, "b");
    b_args.extend(["--retain-finished".to_owned(), "1s".to_owned()]);
    let mut b = Controller::start_standby(&dir.join("b"), any_port, &refs(&b_args))
        .ready(Duration::from_secs(60));
    for id in &old {
        wait_for(
            "the finished instances to be deleted",
            Duration::from_secs(60),
            || {
                http_get(&b.api, &format!("/instances/{id}"))
                    .err()
                    .filter(|e| e.contains("404"))
            },
        );
    }
    b.check_alive();
    let log = b.log_tail(100_000);
    assert!(
        log.contains("a group commit larger than one etcd transaction goes through the journal"),
        "no commit over etcd's limits in B's log:\n{}",
        b.log_tail(40)
    );
    // B goes on: a new instance runs to its end.
    let new = b.submit(&file);
    b.wait(new, 60).expect_code(0, "wait on B");
    b.kill();

    // C loads the book B left: the deleted instances are gone, the new one is there.
    let mut c =
        Controller::start_standby(&dir.join("c"), any_port, &refs(&cluster_args(&etcd, "c")))
            .ready(Duration::from_secs(60));
    assert_eq!(c.status(new)["state"], "succeeded");
    for id in &old {
        let gone = http_get(&c.api, &format!("/instances/{id}"));
        assert!(gone.is_err_and(|e| e.contains("404")), "instance {id}");
    }
    c.check_alive();
    etcd.check_alive();
}

/// `v` as the `&str`s the harness takes.
fn refs(v: &[String]) -> Vec<&str> {
    v.iter().map(String::as_str).collect()
}

/// `serve`'s options for member `member` of the cluster on `etcd`, with a short lease.
fn cluster_args(etcd: &Etcd, member: &str) -> Vec<String> {
    ["--etcd", &etcd.url, "--etcd-lease", "2", "--member", member]
        .iter()
        .map(|s| (*s).to_owned())
        .collect()
}

/// `serve`'s options for member `member` with a lease of `secs` seconds.
fn cluster_args_leased(etcd: &Etcd, member: &str, secs: &str) -> Vec<String> {
    let mut args = cluster_args(etcd, member);
    args[3] = secs.to_owned();
    args
}

/// Waits until `standby`'s log holds `text`; panics, showing it, if it exits first.
fn wait_in_log(standby: &mut mobiwf_tests::harness::Standby, what: &str, text: &str) {
    wait_for(what, Duration::from_secs(60), || {
        standby.check_alive();
        standby.log_tail(100_000).contains(text).then_some(())
    });
}

#[test]
fn a_controller_started_before_its_etcd_waits_for_it_and_then_owns_the_book() {
    let dir = scratch("cluster-etcd-late").unwrap();
    let Some(mut etcd) = Etcd::planned_or_skip(&dir.join("etcd")) else {
        return;
    };
    let any_port = "/ip4/127.0.0.1/tcp/0";
    let mut standby =
        Controller::start_standby(&dir.join("a"), any_port, &refs(&cluster_args(&etcd, "a")));
    // It says it waits, naming the endpoint and the error, and stays up.
    let waiting = format!("etcd at {} does not answer", etcd.url);
    wait_in_log(
        &mut standby,
        "the controller to say it waits for etcd",
        &waiting,
    );
    assert!(
        standby.log_tail(100_000).contains("no endpoint answered"),
        "the error is in the log:\n{}",
        standby.log_tail(20)
    );
    // `cluster` says it cannot reach etcd, naming it.
    let mut cluster = std::process::Command::new(binary("mobiwf-controller").unwrap());
    cluster.args(["cluster", "--etcd", &etcd.url]);
    let out = run(&mut cluster, CLI_TIMEOUT);
    assert_ne!(out.code, Some(0), "cluster with etcd down: {}", out.stdout);
    assert!(out.stderr.contains(&etcd.url), "{}", out.stderr);
    standby.check_alive();

    // etcd comes: the controller owns the book and runs an instance.
    etcd.start();
    let a = standby.ready(Duration::from_secs(60));
    assert!(
        a.log_tail(100_000).contains("answers again"),
        "{}",
        a.log_tail(20)
    );
    let file = dir.join("quick.xml");
    std::fs::write(&file, paper_workflow_with(|_| String::new())).unwrap();
    let _partners = partners_run(&dir, &a, &file);
    etcd.check_alive();
}

#[test]
fn a_standby_outlives_an_etcd_restart_and_takes_over_when_the_owner_is_killed() {
    let dir = scratch("cluster-etcd-restart").unwrap();
    let Some(mut etcd) = Etcd::start_or_skip(&dir.join("etcd")) else {
        return;
    };
    let file = dir.join("quick.xml");
    std::fs::write(&file, paper_workflow_with(|_| String::new())).unwrap();
    let any_port = "/ip4/127.0.0.1/tcp/0";
    // The owner's lease outlasts etcd's restart; the standby's (2 s) may lapse meanwhile.
    let a_args = cluster_args_leased(&etcd, "a", "15");
    let mut a = Controller::start_with(&dir.join("a"), any_port, &refs(&a_args));
    let mut standby_b =
        Controller::start_standby(&dir.join("b"), any_port, &refs(&cluster_args(&etcd, "b")));
    let _partners = paper_partners(&dir, &a);
    wait_in_log(&mut standby_b, "B to wait", "waiting to own the book");

    // etcd goes away: B says it waits for it, and stays up; etcd comes back.
    etcd.stop();
    wait_in_log(
        &mut standby_b,
        "B to say etcd does not answer",
        "does not answer",
    );
    etcd.start();
    wait_in_log(&mut standby_b, "B to find etcd again", "answers again");
    standby_b.check_alive();

    // The owner went on: an instance runs on it after the restart.
    let before = a.submit(&file);
    a.wait(before, 60)
        .expect_code(0, "wait on A after etcd's restart");
    a.check_alive();

    // A dies: B, which outlived the restart, takes the book over and runs an instance.
    a.kill();
    let b = standby_b.ready(Duration::from_secs(90));
    assert_all_succeeded(&b.status(before), &PAPER_PLACEMENT);
    let after = b.submit(&file);
    b.wait(after, 60).expect_code(0, "wait on B");
    assert_all_succeeded(&b.status(after), &PAPER_PLACEMENT);
    etcd.check_alive();
}

#[test]
fn a_fenced_owners_messages_are_refused_by_the_nodes_that_heard_the_owner_after_it() {
    let dir = scratch("cluster-epochs").unwrap();
    let Some(mut etcd) = Etcd::start_or_skip(&dir.join("etcd")) else {
        return;
    };
    let log = dir.join("ran.log");
    let file = logging_workflow(&dir, &log, Duration::from_millis(200));
    let any_port = "/ip4/127.0.0.1/tcp/0";
    // P2 is stalled for a while below: nobody suspects it meanwhile.
    let patient = |member: &str| {
        let mut args = cluster_args(&etcd, member);
        args.extend(["--suspect-after".to_owned(), "120".to_owned()]);
        args
    };
    let mut a = Controller::start_with(&dir.join("a"), any_port, &refs(&patient("a")));
    let standby_b = Controller::start_standby(&dir.join("b"), any_port, &refs(&patient("b")));
    let (mut p1, mut p2) = paper_partners(&dir, &a);
    let epoch_a = owner_epoch(&etcd, "a");
    let first = a.submit(&file);
    a.wait(first, 60).expect_code(0, "wait on A");
    for node in [&p1, &p2] {
        wait_epoch(node, epoch_a);
    }

    // P2 stalls: A's deployment of a second instance to it waits in A's outbox. A is stopped
    // past its lease; B takes the book over and deploys a third instance to both nodes.
    p2.signal("STOP");
    let second = a.submit(&file);
    a.signal("STOP");
    let b = standby_b.ready(Duration::from_secs(60));
    let epoch_b = owner_epoch(&etcd, "b");
    assert!(epoch_b > epoch_a, "epoch {epoch_b} after {epoch_a}");
    p2.signal("CONT");
    let third = b.submit(&file);
    for node in [&p1, &p2] {
        wait_epoch(node, epoch_b);
    }

    // A message A sent in the instant before it found it had lost the book, as its mesh
    // stamps it (the cluster's peer, A's epoch): a deployment P2 would act on at once. Both
    // nodes refuse it, saying why, and deploy nothing.
    for node in [&p1, &p2] {
        let before = stale_refused(node);
        let reply = as_owner_at(&dir.join("b"), epoch_a, node, stray_deployment());
        let mobiwf_proto::Reply::Refused { reason } = reply else {
            panic!("a fenced owner's deployment was taken: {reply:?}");
        };
        let expected = format!("epoch {epoch_a} is older than epoch {epoch_b}");
        assert!(reason.contains(&expected), "{reason}");
        assert!(stale_refused(node) > before, "the refusal is counted");
        assert!(node.log_tail(100_000).contains(&expected), "and logged");
        assert_eq!(node.run_record(STRAY, 19), None, "nothing deployed");
    }

    // A runs again: whatever it still sends is refused by the nodes, its first write by
    // etcd, and it stops as a fenced owner does.
    a.signal("CONT");
    let code = a.wait_exit(Duration::from_secs(60));
    let tail = a.log_tail(20);
    assert_eq!(code, Some(3), "A's exit; its log ends with:\n{tail}");
    assert!(tail.contains("fenced"), "A's log ends with:\n{tail}");

    // Every instance completes on B, each command having run once.
    for id in [second, third] {
        b.wait(id, 120).expect_code(0, "wait on B");
        assert_all_succeeded(&b.status(id), &PAPER_PLACEMENT);
    }
    let ran = activity_lines(&log);
    assert_eq!(ran.len(), 3 * PAPER_PLACEMENT.len(), "{ran:?}");
    assert!(
        ran.values().all(|n| *n == 1),
        "a command ran twice: {ran:?}"
    );
    for node in [&p1, &p2] {
        assert_eq!(known_epoch(node), epoch_b, "no node went back to A's epoch");
    }
    p1.check_alive();
    p2.check_alive();
    etcd.check_alive();
}

/// The instance of [`stray_deployment`], which no controller ever submitted.
const STRAY: u64 = 999_999;

/// A deployment of the paper's second partition (its adjacent left out: nothing to tell)
/// for instance [`STRAY`].
fn stray_deployment() -> mobiwf_proto::Message {
    let document =
        std::fs::read_to_string(mobiwf_tests::repo_root().join("examples/paper/partition-2.xml"))
            .unwrap()
            .replace(r#"<adjacent id="18"><ip>139.82.2.149</ip></adjacent>"#, "");
    mobiwf_proto::Message::Deploy(mobiwf_proto::Deploy {
        instance: mobiwf_proto::InstanceId(STRAY),
        partition: mobiwf_proto::PartitionId(2),
        document,
        responsible: None,
        hour_ms: None,
        runs_on: Vec::new(),
        inputs: Default::default(),
    })
}

/// Sends `message` to `node` as an owner of shard 0 at `epoch` sends it: from the cluster's
/// peer (its key, in a member's data directory `key_dir`), stamped by a mesh owned at that
/// epoch. The node's reply.
fn as_owner_at(
    key_dir: &std::path::Path,
    epoch: i64,
    node: &Node,
    message: mobiwf_proto::Message,
) -> mobiwf_proto::Reply {
    use mobiwf_runtime::mesh::{self, MeshConfig};
    let runtime = tokio::runtime::Runtime::new().unwrap();
    runtime.block_on(async {
        let key = mobiwf_runtime::identity::load_or_create(key_dir).unwrap();
        let config = MeshConfig {
            epoch: Some(mobiwf_proto::ShardEpoch {
                shard: ShardId(0),
                epoch: Epoch(epoch),
            }),
            ..MeshConfig::new(key, Vec::new())
        };
        let (handle, _inbound) = mesh::start(config).await.unwrap();
        let addr: libp2p::Multiaddr = node.address.parse().unwrap();
        let peer = node
            .address
            .rsplit("/p2p/")
            .next()
            .unwrap()
            .parse()
            .unwrap();
        // An id no owner ever gave: nothing of it was applied before.
        let id = mobiwf_proto::MessageId {
            origin: handle.peer_id().to_string().into(),
            incarnation: 0x5ea1,
            seq: 1,
        };
        let reply = handle
            .request(peer, vec![addr], mobiwf_proto::Envelope::new(id, message))
            .await
            .unwrap();
        handle.shutdown().await;
        reply
    })
}

/// The epoch of shard 0 once `member` owns it, as `cluster --json` shows it.
fn owner_epoch(etcd: &Etcd, member: &str) -> i64 {
    wait_for(
        format!("{member} to own shard 0"),
        Duration::from_secs(60),
        || {
            let mut cluster = std::process::Command::new(binary("mobiwf-controller").unwrap());
            cluster.args(["cluster", "--etcd", &etcd.url, "--json"]);
            let out = run(&mut cluster, CLI_TIMEOUT);
            let shown: serde_json::Value = serde_json::from_str(&out.stdout).ok()?;
            let shard = &shown["shards"][0];
            (shard["owner"] == member).then(|| shard["epoch"].as_i64())?
        },
    )
}

/// The epoch of shard 0 `node` knows (0 for none), from its metrics.
fn known_epoch(node: &Node) -> i64 {
    let page = node.metrics().unwrap_or_default();
    // An epoch is a revision of etcd's, far below 2^53: exact in the page's float.
    #[allow(clippy::cast_possible_truncation)]
    let epoch = metric(&page, "mobiwf_controller_epoch", &[("shard", "0")]) as i64;
    epoch
}

/// Waits until `node` knows `epoch` for shard 0.
fn wait_epoch(node: &Node, epoch: i64) {
    wait_for(
        format!("{} to hear epoch {epoch}", node.spec.name),
        Duration::from_secs(60),
        || (known_epoch(node) == epoch).then_some(()),
    );
}

/// How many messages `node` refused for their stale epoch.
fn stale_refused(node: &Node) -> f64 {
    let page = node.metrics().unwrap();
    metric(&page, "mobiwf_stale_epochs_refused_total", &[])
}

/// A document too large for an etcd transaction to carry is refused at the API's door (413,
/// saying the limit, why and what to do), instead of reaching a group commit that etcd would
/// refuse and that would stop the controller; the controller goes on and takes a document
/// that fits.
#[test]
fn a_document_too_large_for_etcd_is_refused_at_the_door_and_the_controller_goes_on() {
    let dir = scratch("cluster-oversize").unwrap();
    let Some(mut etcd) = Etcd::start_or_skip(&dir.join("etcd")) else {
        return;
    };
    // etcd takes 1.5 MiB; the controller is told 64 KiB: of which 60 KiB of writes, documents
    // up to a quarter of that.
    let mut args = cluster_args(&etcd, "a");
    args.extend(["--etcd-max-request-bytes".to_owned(), "65536".to_owned()]);
    let mut a = Controller::start_with(&dir.join("a"), "/ip4/127.0.0.1/tcp/0", &refs(&args));
    let token = mobiwf_tests::harness::api_token_of(&a.api);
    let padding = format!("<!-- {} -->", "x".repeat(20_000));
    let big = paper_workflow_with(|_| String::new()).replacen(
        "<workflow",
        &format!("{padding}\n<workflow"),
        1,
    );
    let answer = http_request(&a.api, "POST", "/instances", token.as_deref(), Some(&big)).unwrap();
    assert_eq!(answer.status, 413, "{answer:?}");
    for said in ["up to 15360 bytes", "--etcd-max-request-bytes", "etcd"] {
        assert!(answer.body.contains(said), "{said}: {}", answer.body);
    }
    let file = dir.join("big.xml");
    std::fs::write(&file, &big).unwrap();
    let out = a.cli(&["submit", file.to_str().unwrap()], CLI_TIMEOUT);
    assert_ne!(out.code, Some(0), "{}", out.stdout);
    assert!(out.stderr.contains("up to 15360 bytes"), "{}", out.stderr);
    a.check_alive();

    // A document that passes the door but not as stored: PDL is stored as the MobiWfMS XML
    // it reads as, longer; the book refuses it in words (the console's deploy meets the same
    // check), and the controller goes on.
    let mut def =
        mobiwf_xml_schema::load_definition(paper_workflow_with(|_| String::new()).as_bytes())
            .unwrap()
            .value;
    // Its description is the bulk: once in either form, the rest some 1.2 KB as PDL, 3.5 KB as XML.
    def.description = "y".repeat(13_000);
    let pdl = mobiwf_xml_schema::write_pdl(&def);
    let stored = mobiwf_xml_schema::write_definition(&def);
    assert!(
        pdl.len() < 15_360 && stored.len() > 15_360,
        "{} {}",
        pdl.len(),
        stored.len()
    );
    let file = dir.join("long.pdl");
    std::fs::write(&file, &pdl).unwrap();
    let out = a.cli(&["submit", file.to_str().unwrap()], CLI_TIMEOUT);
    assert_ne!(out.code, Some(0), "{}", out.stdout);
    assert!(
        out.stderr.contains("as the MobiWfMS XML it is stored as"),
        "{}",
        out.stderr
    );
    a.check_alive();

    // A document just under the limit is taken, and its group commit lands.
    let plain = paper_workflow_with(|_| String::new());
    let fill = 15_000 - plain.len() - "<!--  -->\n".len();
    let near = plain.replacen(
        "<workflow",
        &format!("<!-- {} -->\n<workflow", "x".repeat(fill)),
        1,
    );
    assert_eq!(near.len(), 15_000);
    let file = dir.join("near.xml");
    std::fs::write(&file, near).unwrap();
    let _partners = partners_run(&dir, &a, &file);
    etcd.check_alive();
}

/// The paper's partners started on `controller`, and `file` run there to success; the
/// partners, to keep running while the test goes on.
fn partners_run(
    dir: &std::path::Path,
    controller: &Controller,
    file: &std::path::Path,
) -> (Node, Node) {
    let partners = paper_partners(dir, controller);
    let id = controller.submit(file);
    controller.wait(id, 60).expect_code(0, "wait");
    assert_all_succeeded(&controller.status(id), &PAPER_PLACEMENT);
    partners
}
