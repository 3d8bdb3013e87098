//! Fencing of commands held under a task class's grant, for real (processes, files, the
//! wrapper's watchdog): a held command whose lease is no longer kept up is killed, even when
//! the node that started it is gone; one whose lease is kept up runs to its end; a command
//! without a class has no lease at all; a lease moves only on round trips with the controller
//! (a probe heard renews nothing until a later one echoes its answer), and never once it
//! passed. Every wait polls for its condition, with a bound.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use mobiwf_node::command_policy::CommandPolicy;
use mobiwf_node::executor::{Ended, Execution, Hold, execute, run_dir};
use mobiwf_node::lease::{LEASE_FILE, Leases, read_until};
use mobiwf_proto::{ActivityId, InstanceId, PartitionId, Probe};

/// How long any condition is waited for before the test fails.
const BOUND: Duration = Duration::from_secs(30);

fn now_ms() -> u64 {
    let since = SystemTime::now().duration_since(UNIX_EPOCH).expect("clock");
    u64::try_from(since.as_millis()).expect("ms")
}

fn held(command: &str, lease_ms: u64, leases: &Leases) -> Execution {
    Execution {
        instance: InstanceId(4),
        partition: PartitionId(1),
        activity: ActivityId(2),
        attempt: 0,
        command: command.to_owned(),
        partner: "P1".to_owned(),
        reads: Vec::new(),
        writes: Vec::new(),
        run: mobiwf_node::executor::RunKind::Try,
        held: Some(Hold {
            lease_ms,
            // Asked just now, as the grant that starts it answers.
            asked_ms: now_ms(),
            leases: leases.clone(),
        }),
    }
}

/// Polls `condition` every 20 ms until it holds; fails the test past [`BOUND`].
async fn until(what: &str, mut condition: impl FnMut() -> bool) {
    let deadline = tokio::time::Instant::now() + BOUND;
    while !condition() {
        assert!(
            tokio::time::Instant::now() < deadline,
            "waited {BOUND:?} for {what}"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// True once process `pid` is gone (or a zombie nobody reaped yet: it runs nothing).
fn dead(pid: u32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Err(_) => true,
        Ok(stat) => stat
            .rfind(')')
            .and_then(|end| stat.get(end + 1..))
            .and_then(|rest| rest.split_whitespace().next())
            .is_some_and(|state| state == "Z"),
    }
}

fn pid_in(file: &Path) -> Option<u32> {
    std::fs::read_to_string(file).ok()?.trim().parse().ok()
}

fn assert_lost(ended: &Ended) {
    assert!(ended.lost, "{ended:?}");
    assert!(!ended.finish.succeeded());
    let detail = ended.finish.detail().unwrap_or("");
    assert!(detail.starts_with("synchronization lost"), "{detail}");
}

#[tokio::test]
async fn a_held_command_whose_lease_is_not_kept_up_is_killed_even_with_its_node_gone() {
    let dir = tempfile::tempdir().expect("tempdir");
    let leases = Leases::new();
    leases.confirm(now_ms(), now_ms());
    let pid_file = dir.path().join("command.pid");
    // The command's own process: it would run for a minute.
    let e = held(
        &format!("echo $$ > {}; exec sleep 60", pid_file.display()),
        300,
        &leases,
    );
    let run = run_dir(dir.path(), &e);
    // The node starts it, then is gone: the task that started it is dropped (nobody keeps
    // the lease up; the command outlives its node by design).
    let node = {
        let (data, e) = (dir.path().to_owned(), e.clone());
        tokio::spawn(async move { execute(&data, &e, &CommandPolicy::Any).await })
    };
    until("the command to start", || pid_in(&pid_file).is_some()).await;
    node.abort();
    let pid = pid_in(&pid_file).expect("pid");
    until("the watchdog to kill the command", || dead(pid)).await;
    assert!(run.join("lost").exists(), "the watchdog leaves its mark");
    assert!(!run.join("exit").exists(), "the wrapper was killed with it");
    // A node started again hears how it ended, as often as it asks: never run again.
    let ended = tokio::time::timeout(BOUND, execute(dir.path(), &e, &CommandPolicy::Any))
        .await
        .expect("judged");
    assert_lost(&ended);
    assert_eq!(execute(dir.path(), &e, &CommandPolicy::Any).await, ended);
}

#[tokio::test]
async fn a_held_command_whose_lease_is_kept_up_runs_to_its_end() {
    let dir = tempfile::tempdir().expect("tempdir");
    let leases = Leases::new();
    leases.confirm(now_ms(), now_ms());
    leases.spawn_refresher();
    // The controller is heard all along.
    let hearing = {
        let leases = leases.clone();
        tokio::spawn(async move {
            loop {
                leases.confirm(now_ms(), now_ms());
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
        })
    };
    let go = dir.path().join("go");
    let e = held(
        &format!(
            "while [ ! -e {} ]; do sleep 0.05; done; echo done",
            go.display()
        ),
        1000,
        &leases,
    );
    let run = run_dir(dir.path(), &e);
    let task = {
        let (data, e) = (dir.path().to_owned(), e.clone());
        tokio::spawn(async move { execute(&data, &e, &CommandPolicy::Any).await })
    };
    until("the lease file", || read_until(&run).is_some()).await;
    let first = read_until(&run).expect("lease");
    // It runs on past the time its first lease would have ended: the lease was kept up.
    until("the first lease's end to pass", || now_ms() > first + 200).await;
    assert!(read_until(&run).expect("lease") > first);
    assert!(!run.join("exit").exists() && !run.join("lost").exists());
    std::fs::write(&go, "").expect("go");
    let ended = tokio::time::timeout(BOUND, task)
        .await
        .expect("ended")
        .expect("joined");
    hearing.abort();
    assert!(ended.finish.succeeded(), "{ended:?}");
    assert!(!ended.lost);
    let output = std::fs::read_to_string(run.join("output")).expect("output");
    assert_eq!(output, "done\n");
}

#[tokio::test]
async fn a_held_command_whose_lease_ran_out_before_it_started_never_runs() {
    let dir = tempfile::tempdir().expect("tempdir");
    // Asked 10 s ago, and no round trip with the controller since: its lease is over already.
    let leases = Leases::new();
    let marker = dir.path().join("ran");
    let mut e = held(&format!("touch {}", marker.display()), 300, &leases);
    if let Some(hold) = e.held.as_mut() {
        hold.asked_ms = now_ms() - 10_000;
    }
    let ended = tokio::time::timeout(BOUND, execute(dir.path(), &e, &CommandPolicy::Any))
        .await
        .expect("ended");
    assert_lost(&ended);
    assert!(!marker.exists(), "the command ran");
}

#[tokio::test]
async fn a_command_without_a_class_has_no_lease() {
    let dir = tempfile::tempdir().expect("tempdir");
    let e = Execution {
        held: None,
        ..held("echo hi", 300, &Leases::new())
    };
    let ended = execute(dir.path(), &e, &CommandPolicy::Any).await;
    assert!(ended.finish.succeeded() && !ended.lost, "{ended:?}");
    let run = run_dir(dir.path(), &e);
    assert!(!run.join(LEASE_FILE).exists());
    assert!(!run.join("lost").exists());
}

#[test]
fn a_lease_moves_only_forward_and_only_on_a_round_trip() {
    let dir = tempfile::tempdir().expect("tempdir");
    let leases = Leases::new();
    leases.confirm(10_000, 10_000);
    leases.hold(dir.path(), 500, 9_800, 10_000).expect("held");
    assert_eq!(read_until(dir.path()), Some(10_500));
    // No round trip since: nothing moves.
    assert!(leases.refresh(10_100).is_empty());
    assert_eq!(read_until(dir.path()), Some(10_500));
    // A round trip: it moves on; an older one never moves it back.
    leases.confirm(11_000, 11_000);
    leases.confirm(10_200, 11_000);
    assert!(leases.refresh(10_200).is_empty());
    assert_eq!(read_until(dir.path()), Some(11_500));
    // Watched again after a restart (no round trip yet): the later time written before stays.
    leases.release(dir.path());
    let restarted = Leases::new();
    restarted
        .hold(dir.path(), 500, 9_800, 11_000)
        .expect("held");
    assert_eq!(read_until(dir.path()), Some(11_500));
    // A released command's lease is no longer kept up.
    leases.confirm(20_000, 20_000);
    assert!(leases.refresh(11_100).is_empty());
    assert_eq!(read_until(dir.path()), Some(11_500));
}

#[test]
fn a_probe_heard_renews_nothing_until_a_later_one_echoes_its_answer() {
    let leases = Leases::new();
    // Probes come; their answers never reach the controller: no echo, nothing confirmed.
    for seq in 1..=5 {
        leases.probed(Probe { seq, echo: 0 }, 1_000 * seq);
    }
    assert_eq!(leases.confirmed_ms(), 0);
    // An echo of an answer the node never gave (another controller's number) confirms nothing.
    leases.probed(Probe { seq: 6, echo: 99 }, 6_000);
    assert_eq!(leases.confirmed_ms(), 0);
    // The controller received the answer to probe 4, sent at 4000 on the node's clock.
    leases.probed(Probe { seq: 7, echo: 4 }, 7_000);
    assert_eq!(leases.confirmed_ms(), 4_000);
    // An older echo never moves it back; a probe of a controller without numbers renews
    // nothing.
    leases.probed(Probe { seq: 8, echo: 2 }, 8_000);
    leases.probed(Probe::default(), 9_000);
    assert_eq!(leases.confirmed_ms(), 4_000);
    leases.probed(Probe { seq: 10, echo: 8 }, 10_000);
    assert_eq!(leases.confirmed_ms(), 8_000);
}

#[test]
fn a_grant_counts_from_its_request_and_a_lease_that_passed_is_never_renewed() {
    let dir = tempfile::tempdir().expect("tempdir");
    let leases = Leases::new();
    // No round trip yet, but the request asked at 20000 was granted: it counts from there.
    leases.hold(dir.path(), 500, 20_000, 20_100).expect("held");
    assert_eq!(read_until(dir.path()), Some(20_500));
    // The lease passed at 20600: a round trip after that renews nothing (the watchdog is
    // ending the command).
    leases.confirm(20_550, 20_550);
    assert!(leases.refresh(20_600).is_empty());
    assert_eq!(read_until(dir.path()), Some(20_500));
    // Nor does watching it again, after a restart.
    let restarted = Leases::new();
    restarted.confirm(20_550, 20_550);
    restarted
        .hold(dir.path(), 500, 20_000, 20_600)
        .expect("held");
    assert_eq!(read_until(dir.path()), Some(20_500));
}

#[test]
fn a_persons_activity_is_out_once_when_the_controller_was_not_heard_within_its_lease() {
    use mobiwf_engine::RunKey;
    let leases = Leases::new();
    let key = RunKey {
        instance: InstanceId(4),
        partition: PartitionId(1),
    };
    let (a, b) = (ActivityId(2), ActivityId(3));
    // Asked at 1000, no round trip since, lease 500.
    leases.watch_person(key, a, 500, 1000);
    assert!(leases.people_out(1500).is_empty());
    // Watching it again (a restart) counts from its request still, not from now.
    leases.watch_person(key, a, 500, 1000);
    assert_eq!(leases.people_out(1501), vec![(key, a)]);
    assert!(leases.people_out(5000).is_empty(), "told once");
    // A round trip of 5400: b, asked at 5000, is out only after 5900.
    leases.confirm(5400, 5400);
    leases.watch_person(key, b, 500, 5000);
    assert!(leases.people_out(5900).is_empty());
    // Ended before: never out.
    leases.unwatch_person(key, b);
    assert!(leases.people_out(9000).is_empty());
}
