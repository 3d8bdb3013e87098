//! Finished instances leave memory (`retire`) and come back from the store form (`readmit`)
//! for a late input: a compensation, a rerun. Only what cannot change by itself and is
//! written leaves.

use super::props::Store;
use super::*;

/// Activity 1: a command with a compensation, alone in its partition.
fn single(instance: u64) -> String {
    doc(
        instance,
        &[A {
            id: 1,
            command: Some("true"),
            extra: "<compensation>echo undo</compensation>",
            ..A::default()
        }],
    )
}

fn commit(e: &mut Engine, disk: &mut Store) {
    disk.commit(e.take_changes().expect("changes"));
}

fn readmit(e: &mut Engine, disk: &Store, instance: u64) {
    let stored = disk.instance(InstanceId(instance));
    assert!(
        !stored.runs.is_empty(),
        "nothing stored of instance {instance}"
    );
    e.readmit(stored);
}

#[test]
fn a_finished_instance_leaves_only_once_written_and_comes_back_for_a_compensation() {
    let mut e = Engine::new();
    let mut disk = Store::default();
    deploy(&mut e, 1, 1, &single(1));
    deploy(&mut e, 2, 1, &waits_for_remote_1(2));
    assert!(!e.retire(InstanceId(1)), "still running");
    ended(&mut e, 1500, 1, 1, true, 0);
    assert!(!e.retire(InstanceId(1)), "its end is not written yet");
    commit(&mut e, &mut disk);
    assert!(!e.retirable(InstanceId(2)), "a waiting run stays");
    assert!(e.retire(InstanceId(1)));
    assert!(!e.holds(InstanceId(1)));
    assert_eq!(e.runs_in_memory(), 1);

    // The controller asks for its compensation: the daemon readmits it first.
    readmit(&mut e, &disk, 1);
    let input = Input::Compensate(mobiwf_proto::Compensate {
        instance: InstanceId(1),
        partition: PartitionId(1),
        activity: ActivityId(1),
    });
    assert_eq!(input.instance(), Some(InstanceId(1)));
    let fx = at(&mut e, 5000, input);
    assert!(
        fx.iter()
            .any(|f| matches!(f, Effect::Compensate { command, .. } if command == "echo undo")),
        "{fx:?}"
    );
    commit(&mut e, &mut disk);
    assert!(!e.retire(InstanceId(1)), "its compensation runs");
    let ended = Input::CompensationEnded(mobiwf_proto::Compensated {
        instance: InstanceId(1),
        partition: PartitionId(1),
        activity: ActivityId(1),
        succeeded: true,
        detail: None,
    });
    at(&mut e, 6000, ended);
    commit(&mut e, &mut disk);
    assert!(e.retire(InstanceId(1)));
    // Back again, it remembers the compensation ran: not run twice.
    readmit(&mut e, &disk, 1);
    let again = Input::Compensate(mobiwf_proto::Compensate {
        instance: InstanceId(1),
        partition: PartitionId(1),
        activity: ActivityId(1),
    });
    let fx = at(&mut e, 7000, again);
    assert!(
        !fx.iter().any(|f| matches!(f, Effect::Compensate { .. })),
        "{fx:?}"
    );
}

#[test]
fn a_failed_instance_retired_is_rerun_after_it_is_readmitted() {
    let mut e = Engine::new();
    let mut disk = Store::default();
    deploy(&mut e, 3, 1, &single(3));
    ended(&mut e, 1500, 3, 1, false, 0);
    assert_eq!(state(&e, 3, 1), ActivityState::Failed);
    commit(&mut e, &mut disk);
    assert!(e.retire(InstanceId(3)));
    assert_eq!(e.runs_in_memory(), 0);

    readmit(&mut e, &disk, 3);
    let fx = at(
        &mut e,
        9000,
        Input::Rerun(mobiwf_proto::Rerun {
            instance: InstanceId(3),
            partition: PartitionId(1),
            activities: vec![ActivityId(1)],
            controls: 0,
            rerun: 0,
        }),
    );
    assert_eq!(executes(&fx), vec![(1, 1)], "{fx:?}");
    commit(&mut e, &mut disk);
    assert!(!e.retire(InstanceId(3)), "running again");
    // Readmitting what is in memory changes nothing.
    readmit(&mut e, &disk, 3);
    assert_eq!(state(&e, 3, 1), ActivityState::Running);
}

#[test]
fn an_instance_leaves_with_its_ended_work_items_and_comes_back_with_them() {
    use super::people::*;
    use mobiwf_proto::{ItemAction, ItemStatus};
    use mobiwf_xml_schema::Method;

    let people_3 = tech(Method::Fcfa);
    let mut e = host(directory(1, three()[..1].to_vec()));
    let mut disk = Store::default();
    deploy_manual(&mut e, 1000, 1, (3, &people_3));
    claim(
        &mut e,
        2000,
        (1, 3),
        "alice",
        ItemAction::Select,
        Some("N1"),
    );
    commit(&mut e, &mut disk);
    assert!(!e.retirable(InstanceId(1)), "an open item keeps it");
    let complete = ItemAction::Complete {
        succeeded: true,
        detail: None,
        flag: None,
        data: Default::default(),
    };
    claim(&mut e, 2100, (1, 3), "alice", complete, Some("N1"));
    ended(&mut e, 2200, 1, 43, true, 0);
    commit(&mut e, &mut disk);
    assert!(
        e.retire(InstanceId(1)),
        "every activity final, its item done, all written"
    );
    assert!(!e.holds(InstanceId(1)));
    assert!(
        e.item(InstanceId(1), ActivityId(3)).is_none(),
        "the item left with it"
    );

    // A late claim on it: the daemon readmits the instance first; the item is done.
    readmit(&mut e, &disk, 1);
    assert!(matches!(
        item(&e, 1, 3).status(),
        ItemStatus::Done {
            succeeded: true,
            ..
        }
    ));
    let late = try_claim(
        &mut e,
        3000,
        (1, 3),
        "alice",
        ItemAction::Select,
        Some("N1"),
    );
    assert!(
        late.as_ref().map_or(true, |fx| unavailable(&verdict(fx))),
        "{late:?}"
    );
    assert_eq!(e.take_readmitted(), [InstanceId(1)].into_iter().collect());
    commit(&mut e, &mut disk);
    assert!(e.retire(InstanceId(1)), "and leaves again");
}
