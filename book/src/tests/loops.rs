//! Loops at the controller: a node's word of a later pass starts that pass in the activity's
//! view (history), one of an earlier pass changes nothing, the instance ends only once
//! every activity of a loop's body said its last pass, and an end the controller decides
//! reaches a given-up partition's node that may still run a later pass of its successor.

use super::*;
use crate::history::Event;
use mobiwf_proto::Pass;

/// 1 and 2 on P1, 3 (the end of a loop back to 2) and 4 on P2; 2's contingency is `two`.
fn looping(two: i64) -> String {
    wf(
        &[
            act(1, -1, &[]),
            act(2, two, &[1]),
            act(3, -1, &[2]),
            act(4, -1, &[3]),
        ],
        &[(1, 1, 0, &[1, 2]), (2, 2, 0, &[3, 4])],
    )
    .replacen(
        "<nameActivity>N3</nameActivity>",
        r#"<nameActivity>N3</nameActivity><loop to="2" while="again" max="3"/>"#,
        1,
    )
}

/// The loop of the simulator's campaign: 1 on P2 (peerB, partition 2), 2 on P1 (peerA,
/// partition 1, contingency 0), 3 (the end of a loop back to 2) and 4 on P3 (peerC,
/// partition 3).
fn spread_loop() -> (Book, String) {
    let xml = wf(
        &[
            act(1, -1, &[]),
            act(2, 0, &[1]),
            act(3, 0, &[2]),
            act(4, -1, &[3]),
        ],
        &[(1, 1, 0, &[2]), (2, 2, 0, &[1]), (3, 3, 0, &[3, 4])],
    )
    .replacen(
        "<nameActivity>N3</nameActivity>",
        r#"<nameActivity>N3</nameActivity><loop to="2" while="again" max="3"/>"#,
        1,
    )
    .replace(
        "</partners>",
        "<partner id=\"3\"><name>P3</name><description>d</description><ip>10.0.0.3</ip>\
         <skills><activityTypeId>1</activityTypeId></skills></partner></partners>",
    );
    let b = book_with(&[
        node("peerA", "P1", &[1, 2]),
        node("peerB", "P2", &[1, 2]),
        node("peerC", "P3", &[1, 2]),
    ]);
    (b, xml)
}

/// Whether `applied` tells peerA that activity 1 ended blocking its successors.
fn tells_p1_of_1(applied: &Applied) -> bool {
    sent(applied).iter().any(|(to, m)| {
        to == "peerA"
            && matches!(m, Message::Notify(n) if n.activity == ActivityId(1) && n.outcome == Outcome::Blocked)
    })
}

fn in_pass(activity: u64, state: ActivityState, pass: u32) -> ActivityRecord {
    let mut r = record(activity, state);
    r.pass = Pass(pass);
    r
}

scenarios! {
    fn each_partition_is_told_who_runs_only_the_activities_whose_word_it_takes() {
        let (mut b, xml) = spread_loop();
        let applied = submit(&mut b, &xml).expect("submit");
        let told = told_runs_on(&applied);
        let pairs = |list: &[(u64, &str)]| -> Vec<(u64, String)> {
            list.iter().map(|(a, p)| (*a, (*p).to_owned())).collect()
        };
        // Keyed by partition. Partition 2 (activity 1, peerB) waits for nothing; partition 1
        // (activity 2, peerA) for 1 and, in the loop's body, for its end 3's new pass;
        // partition 3 (activities 3 and 4, peerC) for 2 and 3. Nobody is told of the
        // activities it never hears from.
        assert_eq!(told[&2], pairs(&[(1, "peerB")]));
        assert_eq!(told[&1], pairs(&[(1, "peerB"), (2, "peerA"), (3, "peerC")]));
        assert_eq!(told[&3], pairs(&[(2, "peerA"), (3, "peerC"), (4, "peerC")]));
    }

    fn a_later_pass_waits_again_and_an_earlier_one_changes_nothing() {
        let mut b = three_nodes();
        submit(&mut b, &looping(-1)).expect("submit");
        let done = |id| record(id, ActivityState::Succeeded);
        partition_result(&mut b, T0 + 100, 1, vec![done(1), done(2)]);
        partition_result(&mut b, T0 + 200, 1, vec![done(1), in_pass(2, ActivityState::Succeeded, 2)]);
        assert_eq!(activity(&b, 2).pass, Pass(2));
        let mut second = l(2);
        second.pass = Pass(2);
        assert!(story(&b).contains(&Event::NewPass { activity: second }), "{:?}", story(&b));
        // A late word of the first pass: nothing changes.
        let late = ended_in(2, ActivityState::Failed, 1);
        partition_result(&mut b, T0 + 300, 1, vec![done(1), late]);
        assert_eq!((activity(&b, 2).state(), activity(&b, 2).pass), (ActivityState::Succeeded, Pass(2)));
        partition_result(&mut b, T0 + 400, 2, vec![in_pass(3, ActivityState::Succeeded, 2), done(4)]);
        assert_eq!(state_of(&b), InstanceState::Succeeded);
    }

    fn a_late_item_event_of_an_earlier_pass_is_history_of_that_pass_alone() {
        let mut b = three_nodes();
        submit(&mut b, &looping(-1)).expect("submit");
        let done = |id| record(id, ActivityState::Succeeded);
        partition_result(&mut b, T0 + 100, 1, vec![done(1), done(2)]);
        partition_result(&mut b, T0 + 200, 1, vec![done(1), in_pass(2, ActivityState::Running, 2)]);
        let offered = |pass, at_ms, user: &str| {
            Message::ItemEvents(mobiwf_proto::ItemEvents {
                instance: InstanceId(1),
                activity: ActivityId(2),
                at_ms,
                events: vec![mobiwf_proto::ItemEvent::Offered { users: vec![user.into()] }],
                pass: (pass > 0).then_some(Pass(pass)),
            })
        };
        // Pass 1's item, told late: its pass's history, nothing of the item now.
        from_node(&mut b, T0 + 300, "peerA", offered(1, T0 + 150, "bob"));
        let items = |b: &Book| b.instance(InstanceId(1)).expect("instance").items.clone();
        assert!(!items(&b).contains_key(&ActivityId(2)), "{:?}", items(&b));
        let labelled = |b: &Book, pass| {
            story(b).iter().any(|e| matches!(e, Event::ItemOffered { activity, .. } if activity.id == ActivityId(2) && activity.pass == Pass(pass)))
        };
        assert!(labelled(&b, 1) && !labelled(&b, 2), "{:?}", story(&b));
        // Pass 2's: the item now.
        from_node(&mut b, T0 + 400, "peerA", offered(2, T0 + 400, "ann"));
        let now = items(&b)[&ActivityId(2)].offered.clone();
        assert_eq!(now, vec![mobiwf_xml_schema::UserId::from("ann")]);
        assert!(labelled(&b, 2));
        // A host older than passes on items names none: its event is of the pass known here.
        from_node(&mut b, T0 + 500, "peerA", offered(0, T0 + 500, "cy"));
        let now = items(&b)[&ActivityId(2)].offered.clone();
        assert!(now.contains(&mobiwf_xml_schema::UserId::from("cy")), "{now:?}");
    }

    fn the_instance_waits_for_the_last_pass_of_every_activity_of_the_body() {
        let mut b = three_nodes();
        submit(&mut b, &looping(-1)).expect("submit");
        let done = |id| record(id, ActivityState::Succeeded);
        partition_result(&mut b, T0 + 100, 1, vec![done(1), done(2)]);
        // The end's partition reports its last pass before the head's does.
        partition_result(&mut b, T0 + 200, 2, vec![in_pass(3, ActivityState::Succeeded, 2), done(4)]);
        assert_eq!(state_of(&b), InstanceState::Running);
        partition_result(&mut b, T0 + 300, 1, vec![done(1), in_pass(2, ActivityState::Succeeded, 2)]);
        assert_eq!(state_of(&b), InstanceState::Succeeded);
    }

    fn a_released_failure_of_a_pass_waits_again_in_the_next() {
        let mut b = three_nodes();
        submit(&mut b, &looping(0)).expect("submit");
        let failed = ended_in(2, ActivityState::Failed, 1);
        partition_result(&mut b, T0 + 100, 1, vec![record(1, ActivityState::Succeeded), failed]);
        assert_eq!(activity(&b, 2).state(), ActivityState::Failed);
        let report = Message::Report(Report {
            instance: InstanceId(1),
            partition: PartitionId(1),
            record: in_pass(2, ActivityState::Succeeded, 2),
        });
        let peer = peer_of(&b, 1, 1);
        from_node(&mut b, T0 + 200, &peer, report);
        let a = activity(&b, 2);
        assert_eq!((a.state(), a.pass, a.detail), (ActivityState::Succeeded, Pass(2), None));
    }

    fn a_decided_end_reaches_a_given_up_partition_s_node_while_the_loop_may_run_again_there() {
        // P1 and P2 stop answering together: 2 fails first (its contingency releases 3), then
        // 1. P1 may still begin 2's next pass (3 may ask for it), which waits for 1's end:
        // the controller, which decided it, tells P1.
        let (mut b, xml) = spread_loop();
        submit(&mut b, &xml).expect("submit");
        let first = suspect(&mut b, T0 + 100, "peerA");
        assert!(!tells_p1_of_1(&first));
        let applied = suspect(&mut b, T0 + 200, "peerB");
        assert!(tells_p1_of_1(&applied), "{:?}", sent(&applied));
        // The loop ended before 1 was decided: no pass of 2 waits on P1 any more.
        let (mut b, xml) = spread_loop();
        submit(&mut b, &xml).expect("submit");
        suspect(&mut b, T0 + 100, "peerA");
        let mut end = record(3, ActivityState::Succeeded);
        end.flag = Some("good".to_owned());
        partition_result(&mut b, T0 + 150, 3, vec![end, record(4, ActivityState::Succeeded)]);
        let applied = suspect(&mut b, T0 + 200, "peerB");
        assert!(!tells_p1_of_1(&applied), "{:?}", sent(&applied));
    }
}

/// `activity` failed in `pass`.
fn ended_in(activity: u64, state: ActivityState, pass: u32) -> ActivityRecord {
    let mut r = in_pass(activity, state, pass);
    r.detail = Some("exit status 1".to_owned());
    r
}
