//! Controllers in a cluster on a real etcd (started by each test; skipped without the `etcd`
//! binary unless `MOBIWF_REQUIRE_ETCD=1`, as in CI, where it fails). First the store of one
//! shard on its own: its entries, and the transaction that refuses every write of an owner
//! whose shard another member claimed since. Then the real binaries: two controllers on one
//! etcd, the owner killed, the other takes the book over and an instance submitted before
//! the kill completes; a stopped owner whose lease lapsed is fenced when it runs again.
#![allow(clippy::unwrap_used, clippy::expect_used)]
#![allow(clippy::too_many_lines)] // end-to-end scenarios read best from top to bottom

use std::sync::Arc;
use std::time::Duration;

use mobiwf_cluster::{Epoch, MemberId, ShardId};
use mobiwf_controller::cluster::{
    EtcdLink, Fenced, Layout, MemberRecord, Membership, ShardStore, claim, ensure_cluster,
};
use mobiwf_runtime::store::{Batch, Durability, Store};
use mobiwf_tests::harness::{
    CLI_TIMEOUT, Controller, Etcd, Node, NodeSpec, PAPER_PLACEMENT, activity_lines,
    assert_all_succeeded, logging_workflow, run,
};
use mobiwf_tests::{binary, scratch};
use tokio::sync::watch;

/// How often a member looks at the shard in the store test.
const LOOK: Duration = Duration::from_millis(100);

async fn join(link: &EtcdLink, layout: &Layout, name: &str) -> Membership {
    let record = MemberRecord {
        member: MemberId(name.to_owned()),
        api: "-".to_owned(),
    };
    Membership::join(link, layout, &record, Duration::from_secs(2))
        .await
        .unwrap()
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
    let url = etcd.url.clone();
    let link = Arc::new(
        tokio::task::spawn_blocking(move || EtcdLink::connect(&[url]))
            .await
            .unwrap()
            .unwrap(),
    );
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
    let mut p1 = Node::start(NodeSpec::loopback(
        &dir.join("p1"),
        "P1",
        "1,2,3",
        &a.address,
    ));
    let mut p2 = Node::start(NodeSpec::loopback(&dir.join("p2"), "P2", "1,3", &a.address));
    a.wait_registered(&["P1", "P2"]);

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
