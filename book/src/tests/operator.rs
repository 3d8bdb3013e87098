//! Operator control: interrupt, resume, cancel.

use super::*;
use mobiwf_proto::{ControlInstance, Report};

scenarios! {
    fn operators_interrupt_and_resume_an_instance_and_every_partner_is_told() {
        let mut b = three_nodes();
        submit(&mut b, &chain(-1)).expect("submit");
        let applied = b
            .apply(
                T0 + 1000,
                Input::Control {
                    instance: InstanceId(1),
                    action: Control::Interrupt,
                },
            )
            .expect("interrupt");
        assert_eq!(state_of(&b), InstanceState::Interrupted);
        // Numbered: the nodes take them in this order whatever order they arrive in.
        let control = |action, order| Message::Control(ControlInstance {
            instance: InstanceId(1),
            action,
            order,
        });
        assert_eq!(
            sent(&applied),
            vec![
                ("peerA".to_owned(), control(Control::Interrupt, 1)),
                ("peerB".to_owned(), control(Control::Interrupt, 1)),
            ]
        );
        let err = b
            .apply(
                T0 + 1500,
                Input::Control {
                    instance: InstanceId(1),
                    action: Control::Interrupt,
                },
            )
            .unwrap_err();
        assert!(matches!(err, BookError::NotNow { .. }), "{err}");
        let applied = b
            .apply(
                T0 + 2000,
                Input::Control {
                    instance: InstanceId(1),
                    action: Control::Resume,
                },
            )
            .expect("resume");
        assert_eq!(
            state_of(&b),
            InstanceState::Deploying,
            "nothing acknowledged yet"
        );
        assert_eq!(
            sent(&applied),
            vec![
                ("peerA".to_owned(), control(Control::Resume, 2)),
                ("peerB".to_owned(), control(Control::Resume, 2)),
            ],
            "the refused interrupt counts for nothing"
        );
        for action in [Control::Interrupt, Control::Resume] {
            assert!(story(&b).contains(&Event::Operator { action, told: 2 }));
        }
    }

    fn a_given_up_partitions_node_is_told_too() {
        // A loop's later pass may still run on the node of a partition given up on: it hears
        // the operator's controls as every other partner does.
        let mut b = three_nodes();
        submit(&mut b, &chain(0)).expect("submit");
        suspect(&mut b, T0 + 500, "peerA");
        assert_eq!(partition_view(&b, 1).abandoned(), Some(WHY));
        for (at, action) in [(1000, Control::Interrupt), (2000, Control::Resume)] {
            let input = Input::Control {
                instance: InstanceId(1),
                action,
            };
            let applied = b.apply(T0 + at, input).expect("control");
            let told: Vec<String> = sent(&applied)
                .into_iter()
                .filter(|(_, m)| matches!(m, Message::Control(_)))
                .map(|(peer, _)| peer)
                .collect();
            assert_eq!(told, vec!["peerA".to_owned(), "peerB".to_owned()], "{action:?}");
            assert!(story(&b).contains(&Event::Operator { action, told: 2 }));
        }
    }

    fn an_operator_cancels_an_instance_its_activities_are_cancelled_and_it_is_over() {
        let mut b = three_nodes();
        submit(&mut b, &chain(-1)).expect("submit");
        from_node(
            &mut b,
            T0 + 1000,
            "peerA",
            Message::Report(Report {
                instance: InstanceId(1),
                partition: PartitionId(1),
                record: record(1, ActivityState::Succeeded),
            }),
        );
        let applied = b
            .apply(
                T0 + 2000,
                Input::Control {
                    instance: InstanceId(1),
                    action: Control::Cancel,
                },
            )
            .expect("cancel");
        assert_eq!(sent(&applied).len(), 2);
        let inst = b.instance(InstanceId(1)).expect("instance");
        assert_eq!(inst.state(), InstanceState::Cancelled);
        assert_eq!(inst.finished_ms, Some(T0 + 2000));
        assert_eq!(
            activity(&b, 1).state(),
            ActivityState::Succeeded,
            "already over"
        );
        let a2 = activity(&b, 2);
        assert_eq!(
            (a2.state(), a2.detail.as_deref()),
            (
                ActivityState::Cancelled,
                Some("the instance was cancelled by an operator")
            )
        );
        // A final instance takes no more control.
        for action in [Control::Interrupt, Control::Resume, Control::Cancel] {
            let err = b
                .apply(
                    T0 + 3000,
                    Input::Control {
                        instance: InstanceId(1),
                        action,
                    },
                )
                .unwrap_err();
            assert_eq!(
                err,
                BookError::NotNow {
                    instance: InstanceId(1),
                    state: "cancelled",
                    action: action.as_str(),
                }
            );
        }
        assert!(
            b.watched().is_empty(),
            "nothing to watch for a cancelled instance"
        );
    }

    fn no_contingency_activity_is_placed_while_its_instance_is_interrupted() {
        let mut b = three_nodes();
        submit(&mut b, &chain(9)).expect("submit");
        let interrupt = Input::Control {
            instance: InstanceId(1),
            action: Control::Interrupt,
        };
        b.apply(T0 + 1000, interrupt).expect("interrupt");
        let applied = report_failure(&mut b, T0 + 2000, 1, 1, "peerA");
        assert!(deployed(&applied).is_empty(), "{:?}", sent(&applied));
        assert_eq!(activity(&b, 9).partition, None);
        let resume = Input::Control {
            instance: InstanceId(1),
            action: Control::Resume,
        };
        let applied = b.apply(T0 + 3000, resume).expect("resume");
        let d = deployed(&applied);
        assert_eq!(d.len(), 1, "{:?}", sent(&applied));
        assert_eq!(d[0].0, "peerC");
    }
}
