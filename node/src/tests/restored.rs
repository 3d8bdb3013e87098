//! A node restarted from its store is the node it was: whatever the core went through, what
//! the shell wrote of it (`state::stage_core`) loads back (`state::load`, `state::load_desk`)
//! into a core that shows the same worklists, items, data and deadlines, and retired
//! instances read back (`state::load_instance`) as they were.

#![allow(clippy::unwrap_used, clippy::expect_used)] // a test: a failure is the report

use mobiwf_node_core::fixtures::*;
use mobiwf_node_core::{NodeCore, NodeInput};
use mobiwf_people::Order;
use mobiwf_proto::{ActivityId, ControlInstance, InstanceId, ItemAction, Message, Millis, NodeId};
use mobiwf_runtime::store::{Batch, Durability, MemoryStore, Store};
use proptest::prelude::*;

use crate::state;

/// One thing that happens to the node (boxing the message would only make the test longer).
#[allow(clippy::large_enum_variant)]
#[derive(Debug, Clone)]
enum Step {
    Hear(NodeId, Message),
    Alice(u64, ItemAction),
    /// A command the engine started ends (activity 2 of an instance), with success or not.
    Ended(u64, bool),
    Tick,
}

fn step() -> impl Strategy<Value = Step> {
    let action = prop_oneof![
        Just(ItemAction::Select),
        Just(ItemAction::Release),
        Just(ItemAction::Complete {
            succeeded: true,
            detail: Some("done".to_owned()),
            flag: None,
            data: Default::default(),
        }),
    ];
    prop_oneof![
        2 => (1u64..4).prop_map(|i| Step::Hear(controller(), deployment(i))),
        1 => (1u64..4).prop_map(|i| Step::Hear(controller(), Message::Control(ControlInstance {
            instance: InstanceId(i),
            action: mobiwf_proto::Control::Cancel,
            order: 0,
        }))),
        3 => (1u64..4, action).prop_map(|(i, a)| Step::Alice(i, a)),
        2 => (1u64..4, any::<bool>()).prop_map(|(i, ok)| Step::Ended(i, ok)),
        1 => Just(Step::Tick),
    ]
}

/// Applies `step` as the daemon's actor does: the instance it is about read back from the
/// store first when the core let go of it, and the claims it deferred for that reason after.
fn apply(core: &mut NodeCore, store: &MemoryStore, now_ms: u64, step: Step) {
    let now_us = Millis(now_ms).as_micros();
    let input = match step {
        Step::Hear(from, message) => match core.accept(&from, message, Ok(Vec::new())) {
            Ok(input) => input,
            Err(_) => return,
        },
        Step::Alice(i, action) => alice(i, action),
        Step::Ended(i, succeeded) => NodeInput::Ended(mobiwf_node_core::CommandEnd {
            instance: InstanceId(i),
            partition: mobiwf_proto::PartitionId(1),
            activity: ActivityId(2),
            attempt: 0,
            compensation: false,
            finish: mobiwf_engine::Finish::of(succeeded, None, None),
            written: Vec::new(),
        }),
        Step::Tick => NodeInput::Tick,
    };
    state::readmit_for(core, store, &input).expect("read back");
    if let Ok(out) = core.apply(now_us, input) {
        state::with_deferred(core, store, now_us, out).expect("read back");
    }
}

/// The shell's part: the core's changes in one batch, written.
fn write(store: &MemoryStore, core: &mut NodeCore) {
    let mut batch = Batch::default();
    state::stage_core(&mut batch, core).expect("staged");
    store.write(batch, Durability::Synced).expect("written");
}

/// What the node shows, to compare.
fn shown(core: &NodeCore, store: &MemoryStore) -> String {
    let engine = core.engine();
    let mut items: Vec<_> = engine.items().cloned().collect();
    items.sort_by_key(|i| (i.instance, i.activity));
    let desk: Vec<_> = core.desk().items().cloned().collect();
    let mut runs = Vec::new();
    for i in 1..4 {
        let data = crate::state::load_instance(store, InstanceId(i)).expect("read back");
        runs.push((i, engine.holds(InstanceId(i)), format!("{data:?}")));
    }
    format!(
        "worklist {:?}\nitems {items:?}\ndesk {desk:?}\nalice {:?}\nnext {:?}\ndirectory {}\nruns {runs:?}",
        engine.worklist(),
        core.desk().worklist("alice", Order::Arrival),
        core.next_deadline(),
        engine.directory().version,
    )
}

fn restored(store: &MemoryStore) -> NodeCore {
    let mut engine = state::load(store).expect("the engine loads");
    engine.set_location(at(ME));
    let desk = state::load_desk(store).expect("the desk loads");
    NodeCore::new(engine, desk, identity())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    #[test]
    fn a_node_restored_from_its_store_is_the_node_it_was(
        steps in proptest::collection::vec(step(), 0..20)
    ) {
        let store = MemoryStore::new();
        let mut core = node();
        apply(&mut core, &store, 1_000, Step::Hear(controller(), directory()));
        write(&store, &mut core);
        for (n, step) in steps.into_iter().enumerate() {
            apply(&mut core, &store, 2_000 + 1_000 * n as u64, step);
            write(&store, &mut core);
        }
        let again = restored(&store);
        prop_assert_eq!(shown(&again, &store), shown(&core, &store));
    }
}

#[test]
fn a_claim_deferred_for_an_instance_not_in_memory_is_answered_in_the_same_input() {
    let store = MemoryStore::new();
    let mut core = node();
    apply(
        &mut core,
        &store,
        1_000,
        Step::Hear(controller(), directory()),
    );
    // An item this node hosts on alice's worklist; the engine does not hold its instance and
    // the store has nothing of it.
    apply(
        &mut core,
        &store,
        2_000,
        Step::Hear(me(), item_from(ME, Vec::new(), None)),
    );
    let claim = NodeInput::Claim(mobiwf_people::LocalClaim {
        user: mobiwf_proto::UserId::from("alice"),
        instance: InstanceId(9),
        activity: ActivityId(1),
        action: ItemAction::Select,
    });
    let out = core.apply(3_000_000, claim).expect("decided");
    assert_eq!(out.deferred.len(), 1, "{out:?}");
    let outputs = state::with_deferred(&mut core, &store, 3_000_000, out).expect("read back");
    assert_eq!(outputs.len(), 2, "{outputs:?}");
    assert!(
        outputs[0].deferred.is_empty(),
        "taken from the first output"
    );
    assert!(
        matches!(
            &outputs[1].answers[..],
            [(_, mobiwf_proto::Verdict::Invalid { .. })]
        ),
        "{:?}",
        outputs[1].answers
    );
}
