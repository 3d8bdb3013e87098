//! Properties of the node's core over any sequence of messages from any sender: a message
//! the node does not take changes nothing (nothing to write, the same worklists), and no
//! message of this node's engine for its own desk, or of its desk for its own engine, goes
//! through the network.

use mobiwf_people::Order;
use mobiwf_proto::{
    ActivityId, Control, ControlInstance, InstanceId, ItemAction, Message, Millis, NodeId, Outcome,
    UserId,
};
use proptest::prelude::*;

use super::*;

/// Who sends: the controller, the partner, this node itself, or a stranger.
fn sender() -> impl Strategy<Value = NodeId> {
    prop_oneof![
        Just(controller()),
        Just(partner()),
        Just(me()),
        Just(NodeId::new("peer-stranger")),
    ]
}

fn action() -> impl Strategy<Value = ItemAction> {
    prop_oneof![
        Just(ItemAction::Select),
        Just(ItemAction::Lock),
        Just(ItemAction::Release),
        Just(ItemAction::Complete {
            succeeded: true,
            detail: None,
            flag: None,
            data: Default::default(),
        }),
    ]
}

/// A message of the kinds a node hears.
fn message() -> impl Strategy<Value = Message> {
    let instance = 1u64..4;
    prop_oneof![
        Just(directory()),
        instance.clone().prop_map(deployment),
        (
            instance.clone(),
            prop_oneof![Just("alice"), Just("bob")],
            action(),
            1u64..5
        )
            .prop_map(
                |(i, user, action, request)| Message::Claim(mobiwf_proto::Claim {
                    instance: InstanceId(i),
                    activity: ActivityId(1),
                    user: UserId::from(user),
                    action,
                    request,
                    offline_ms: None,
                    offered_ms: None,
                })
            ),
        instance
            .clone()
            .prop_map(|i| Message::Control(ControlInstance {
                instance: InstanceId(i),
                action: Control::Cancel,
                order: 0,
            })),
        instance.prop_map(|i| Message::Notify(mobiwf_proto::Notify::new(
            InstanceId(i),
            ActivityId(5),
            Outcome::Succeeded
        ))),
        Just(Message::Probe(Default::default())),
    ]
}

/// A user's action through this node.
fn claim() -> impl Strategy<Value = NodeInput> {
    (1u64..4, action()).prop_map(|(i, action)| alice(i, action))
}

#[derive(Debug, Clone)]
enum Step {
    Hear(NodeId, Message),
    Claim(NodeInput),
}

fn step() -> impl Strategy<Value = Step> {
    prop_oneof![
        3 => (sender(), message()).prop_map(|(from, m)| Step::Hear(from, m)),
        1 => claim().prop_map(Step::Claim),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn a_message_not_taken_changes_nothing_and_nothing_local_leaves(
        steps in proptest::collection::vec(step(), 1..24)
    ) {
        let mut core = node();
        for (n, step) in steps.into_iter().enumerate() {
            let now_ms = 1_000 + 1_000 * n as u64;
            core.take_changes().expect("changes");
            core.take_desk_changes().expect("desk changes");
            let worklist = core.engine().worklist();
            let items = core.desk().worklist("alice", Order::Arrival);
            let applied = match step {
                Step::Hear(from, message) => hear(&mut core, now_ms, &from, message),
                Step::Claim(input) => core.apply(Millis(now_ms).as_micros(), input),
            };
            match applied {
                Ok(out) => prop_assert!(sent_to_me(&out).is_empty(), "{:?}", out.sends),
                Err(_) => {
                    let changes = core.take_changes().expect("changes");
                    prop_assert!(changes.runs.is_empty() && changes.known.is_empty());
                    prop_assert!(changes.items.is_empty() && changes.directory.is_none());
                    prop_assert!(core.take_desk_changes().expect("desk").is_empty());
                    prop_assert_eq!(core.engine().worklist(), worklist);
                    prop_assert_eq!(core.desk().worklist("alice", Order::Arrival), items);
                }
            }
        }
    }
}
