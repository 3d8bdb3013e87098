//! Scenarios: what each message from whom comes to, claims decided on this node without the
//! network, answers only from the right host, links and presence told once.

use mobiwf_engine::{Input, Target};
use mobiwf_people::Order;
use mobiwf_proto::{
    ActivityId, Control, ControlInstance, DirectoryVersion, InstanceId, ItemAction, ItemAnswer,
    Message, NodeId, Notice, Outcome, PartitionId, Presence, Tell, UserId, Verdict,
};

use super::*;
use crate::{ClaimOutcome, NotTaken, Refused, Reply};
use mobiwf_proto::Location;

fn refused(result: Result<NodeInput, NotTaken>) -> String {
    match result {
        Err(NotTaken::Refused(why)) => why,
        other => panic!("expected a refusal, got {other:?}"),
    }
}

#[test]
fn a_claim_on_an_item_hosted_here_is_decided_without_the_network() {
    let mut core = deployed();
    // The deployment's snapshot reached alice's worklist here, not through the network.
    let list = core.desk().worklist("alice", Order::Arrival);
    assert_eq!(list.len(), 1, "{list:?}");
    let out = core
        .apply(3_000_000, alice(1, ItemAction::Select))
        .expect("a claim is decided");
    let Some(Reply::Claim(ClaimOutcome::Pending { request, host })) = &out.reply else {
        panic!("a claim goes to the item's host: {:?}", out.reply);
    };
    let (request, host) = (*request, host.clone());
    assert_eq!(host, at(ME));
    // The host (this node) answered within the same input.
    assert_eq!(out.answers, vec![(request, Verdict::Done)]);
    assert!(sent_to_me(&out).is_empty(), "{:?}", sent_to_me(&out));
    let list = core.desk().worklist("alice", Order::Arrival);
    assert_eq!(list[0].state, mobiwf_people::EntryState::Selected);
    // The controller hears of it (item events) through the network.
    assert!(
        out.sends
            .iter()
            .any(|s| s.to == Target::Controller && matches!(s.message, Message::ItemEvents(_))),
        "{:?}",
        out.sends
    );
}

#[test]
fn a_user_whose_device_is_another_node_is_not_here() {
    let mut core = deployed();
    let bob = NodeInput::Claim(mobiwf_people::LocalClaim {
        user: UserId::from("bob"),
        instance: InstanceId(1),
        activity: ActivityId(1),
        action: ItemAction::Select,
    });
    let out = core.apply(3_000_000, bob).expect("decided");
    assert!(
        matches!(out.reply, Some(Reply::Claim(ClaimOutcome::NotHere(_)))),
        "{:?}",
        out.reply
    );
    assert!(out.sends.is_empty());
}

#[test]
fn only_the_controller_orders_and_a_node_takes_no_reports() {
    let core = node();
    let control = Message::Control(ControlInstance {
        instance: InstanceId(1),
        action: Control::Cancel,
        order: 0,
    });
    assert_eq!(
        refused(core.accept(&partner(), control.clone(), Ok(Vec::new()))),
        "only this node's controller sends control messages"
    );
    assert!(core.accept(&controller(), control, Ok(Vec::new())).is_ok());
    let pause = Message::Pause(mobiwf_proto::PauseOrder {
        instance: InstanceId(1),
        activity: ActivityId(2),
        action: mobiwf_proto::PauseAction::Pause { kill: true },
        by: "op".to_owned(),
    });
    assert_eq!(
        refused(core.accept(&partner(), pause.clone(), Ok(Vec::new()))),
        "only this node's controller sends pause messages"
    );
    let taken = core.accept(&controller(), pause, Ok(Vec::new()));
    assert!(
        matches!(taken, Ok(NodeInput::Engine(Input::Pause(_)))),
        "{taken:?}"
    );
    let notify = Message::Notify(mobiwf_proto::Notify::new(
        InstanceId(1),
        ActivityId(2),
        Outcome::Released,
    ));
    let taken = core.accept(&partner(), notify, Ok(Vec::new()));
    assert!(
        matches!(&taken, Ok(NodeInput::Engine(Input::Notified(mobiwf_engine::Notified { from: Some(p), .. }))) if *p == partner()),
        "{taken:?}"
    );
    assert_eq!(
        refused(core.accept(
            &controller(),
            Message::Probe(Default::default()),
            Ok(Vec::new())
        )),
        "a node does not take probe messages"
    );
    // Contents the daemon could not keep refuse the message, whatever it is.
    let bad = core.accept(&controller(), directory(), Err("a bad file".to_owned()));
    assert_eq!(refused(bad), "a bad file");
}

#[test]
fn a_document_with_an_unreachable_adjacent_is_refused() {
    let document = include_str!("../../../examples/paper/partition-1.xml");
    let deploy = Message::Deploy(mobiwf_proto::Deploy {
        instance: InstanceId(18),
        partition: PartitionId(1),
        document: document.to_owned(),
        responsible: None,
        hour_ms: None,
        inputs: Default::default(),
        runs_on: Default::default(),
    });
    let mut core = node();
    let input = core
        .accept(&controller(), deploy, Ok(Vec::new()))
        .expect("the controller deploys");
    // The engine reads the locations on the document it parses, and refuses it whole.
    let why = refused(core.apply(1_000_000, input).map(|_| NodeInput::Tick));
    assert!(core.engine().runs_in_memory() == 0, "nothing deployed");
    assert!(
        why.contains("adjacent 19") && why.contains("/p2p/"),
        "{why}"
    );
}

#[test]
fn people_messages_come_from_whom_they_should() {
    let core = node();
    // An item's snapshot only from its host.
    let taken = core.accept(
        &partner(),
        item_from(PARTNER, Vec::new(), None),
        Ok(Vec::new()),
    );
    assert!(matches!(taken, Ok(NodeInput::Desk(_))), "{taken:?}");
    let why = refused(core.accept(
        &controller(),
        item_from(PARTNER, Vec::new(), None),
        Ok(Vec::new()),
    ));
    assert!(why.contains("comes from its host"), "{why}");
    // The directory and notices only from the controller.
    let why = refused(core.accept(&partner(), directory(), Ok(Vec::new())));
    assert_eq!(why, "only this node's controller sends directory messages");
    let taken = core.accept(&controller(), directory(), Ok(Vec::new()));
    assert!(
        matches!(&taken, Ok(NodeInput::Engine(Input::Directory(d))) if d.version == 1),
        "{taken:?}"
    );
    let notice = Message::Notice(Tell {
        notice: Notice {
            user: UserId::from("alice"),
            instance: InstanceId(1),
            activity: None,
            kind: "ended".to_owned(),
            text: String::new(),
            at_ms: 0,
        },
    });
    let why = refused(core.accept(&partner(), notice.clone(), Ok(Vec::new())));
    assert_eq!(why, "only this node's controller sends notice messages");
    assert!(matches!(
        core.accept(&controller(), notice, Ok(Vec::new())),
        Ok(NodeInput::Desk(_))
    ));
    // A claim names its sender, a device, or none for the controller.
    let claim = Message::Claim(mobiwf_proto::Claim {
        instance: InstanceId(1),
        activity: ActivityId(1),
        user: UserId::from("bob"),
        action: ItemAction::Select,
        request: 7,
        offline_ms: None,
        offered_ms: None,
    });
    let taken = core.accept(&partner(), claim.clone(), Ok(Vec::new()));
    assert!(
        matches!(&taken, Ok(NodeInput::Engine(Input::Claim(mobiwf_engine::Claimed { from: Some(p), .. }))) if *p == partner()),
        "{taken:?}"
    );
    let taken = core.accept(&controller(), claim, Ok(Vec::new()));
    assert!(
        matches!(
            &taken,
            Ok(NodeInput::Engine(Input::Claim(mobiwf_engine::Claimed {
                from: None,
                ..
            })))
        ),
        "{taken:?}"
    );
    // A directory whose document does not load is refused, with its problems.
    let bad = Message::Directory(DirectoryVersion {
        version: 3,
        document: "<organisation><users><user/></users></organisation>".to_owned(),
        devices: Vec::new(),
    });
    let why = refused(core.accept(&controller(), bad, Ok(Vec::new())));
    assert!(why.contains("does not load"), "{why}");
}

/// A node that knows the directory and alice's item hosted on the partner, once alice
/// selected it: the select is sent to the partner and waits for its answer.
fn alice_selects_a_partners_item() -> (crate::NodeCore, crate::Output) {
    let mut core = node();
    hear(&mut core, 1_000, &controller(), directory()).expect("the directory");
    hear(
        &mut core,
        2_000,
        &partner(),
        item_from(PARTNER, Vec::new(), None),
    )
    .expect("the item");
    let claim = NodeInput::Claim(mobiwf_people::LocalClaim {
        user: UserId::from("alice"),
        instance: InstanceId(9),
        activity: ActivityId(1),
        action: ItemAction::Select,
    });
    let out = core.apply(3_000_000, claim).expect("decided");
    (core, out)
}

#[test]
fn an_answer_to_a_claim_comes_only_from_the_host_it_went_to() {
    let (mut core, out) = alice_selects_a_partners_item();
    let Some(Reply::Claim(ClaimOutcome::Pending { request, host })) = &out.reply else {
        panic!("sent to its host: {:?}", out.reply);
    };
    let (request, host) = (*request, host.clone());
    assert_eq!(host, at(PARTNER));
    assert!(
        out.sends
            .iter()
            .any(|s| matches!(&s.to, Target::Partner(l) if *l == at(PARTNER))
                && matches!(s.message, Message::Claim(_))),
        "{:?}",
        out.sends
    );
    let answer = |verdict| {
        Message::Answer(ItemAnswer {
            instance: InstanceId(9),
            activity: ActivityId(1),
            answer: mobiwf_proto::Answer {
                user: UserId::from("alice"),
                request,
                verdict,
            },
        })
    };
    let stranger = NodeId::new("peer-stranger");
    let why = refused(core.accept(&stranger, answer(Verdict::Done), Ok(Vec::new())));
    assert!(why.contains("comes from the item's host"), "{why}");
    let out = hear(&mut core, 4_000, &partner(), answer(Verdict::Done)).expect("the answer");
    assert_eq!(out.answers, vec![(request, Verdict::Done)]);
}

#[test]
fn a_claim_its_host_refuses_outright_is_answered_so() {
    let (mut core, out) = alice_selects_a_partners_item();
    let Some(Reply::Claim(ClaimOutcome::Pending { request, .. })) = &out.reply else {
        panic!("sent to its host: {:?}", out.reply);
    };
    let request = *request;
    let sent = out
        .sends
        .iter()
        .find(|s| matches!(s.message, Message::Claim(_)))
        .map(|s| s.message.clone())
        .expect("the claim sent");
    assert!(core.desk().pending().any(|p| p.request == request));
    // Another message refused changes nothing.
    let other = NodeInput::Refused {
        message: Message::Probe(Default::default()),
        reason: "stranger".to_owned(),
    };
    let out = core.apply(4_000_000, other).expect("taken");
    assert!(out.answers.is_empty(), "{:?}", out.answers);
    assert!(core.desk().pending().any(|p| p.request == request));

    let refused = NodeInput::Refused {
        message: sent,
        reason: "a stranger's message".to_owned(),
    };
    let out = core.apply(5_000_000, refused.clone()).expect("taken");
    let [(answered, Verdict::Invalid { reason })] = out.answers.as_slice() else {
        panic!("the claim answered as refused: {:?}", out.answers);
    };
    assert_eq!(*answered, request);
    assert!(
        reason.contains("its host refused the claim: a stranger's message"),
        "{reason}"
    );
    assert!(
        core.desk().pending().next().is_none(),
        "nothing waits any more"
    );
    let told = core.desk().notices("alice");
    assert!(
        told.iter()
            .any(|n| n.kind == "refused" && n.text.contains("a stranger's message")),
        "{told:?}"
    );
    // The same refusal again (the outbox told twice, after a restart) is no news.
    let out = core.apply(6_000_000, refused).expect("taken");
    assert!(out.answers.is_empty(), "{:?}", out.answers);
}

#[test]
fn a_refused_message_changes_nothing() {
    let mut core = deployed();
    let worklist = core.engine().worklist();
    let items = core.desk().worklist("alice", Order::Arrival);
    let stranger = NodeId::new("peer-stranger");
    let refused_ones = [
        (partner(), deployment(2)),
        (partner(), directory()),
        (stranger.clone(), item_from(PARTNER, Vec::new(), None)),
        (
            partner(),
            Message::Control(ControlInstance {
                instance: InstanceId(1),
                action: Control::Cancel,
                order: 0,
            }),
        ),
        (controller(), Message::Probe(Default::default())),
    ];
    for (from, message) in refused_ones {
        let kind = message.kind();
        assert!(hear(&mut core, 5_000, &from, message).is_err(), "{kind}");
        let changes = core.take_changes().expect("changes");
        assert!(
            changes.runs.is_empty() && changes.known.is_empty() && changes.items.is_empty(),
            "{kind}"
        );
        assert!(changes.directory.is_none(), "{kind}");
        assert!(core.take_desk_changes().expect("desk").is_empty(), "{kind}");
    }
    assert_eq!(core.engine().worklist(), worklist);
    assert_eq!(core.desk().worklist("alice", Order::Arrival), items);
}

#[test]
fn a_links_news_is_told_once() {
    let mut core = deployed();
    let news = |reachable| NodeInput::Link {
        peer: partner(),
        reachable,
    };
    let out = core.apply(3_000_000, news(false)).expect("news");
    assert!(core.is_unreachable(&partner()));
    assert!(
        out.notes
            .iter()
            .any(|n| n.text.contains("cannot be reached")),
        "{:?}",
        out.notes
    );
    // The engine hears it: bob, whose device the partner is, is inactive here.
    assert!(core.engine().directory().unreachable.contains(&partner()));
    let again = core.apply(3_100_000, news(false)).expect("news");
    assert!(
        again.notes.is_empty() && again.sends.is_empty(),
        "{again:?}"
    );
    let back = core.apply(3_200_000, news(true)).expect("news");
    assert!(!core.is_unreachable(&partner()));
    assert!(
        back.notes.iter().any(|n| n.text.contains("answers again")),
        "{:?}",
        back.notes
    );
    assert!(!core.engine().directory().unreachable.contains(&partner()));
}

#[test]
fn going_away_tells_the_controller_and_a_stranger_is_not_here() {
    let mut core = deployed();
    let out = core
        .apply(3_000_000, NodeInput::Away(UserId::from("alice")))
        .expect("decided");
    assert!(
        matches!(out.reply, Some(Reply::Presence(Ok(())))),
        "{:?}",
        out.reply
    );
    let presence: Vec<_> = out
        .sends
        .iter()
        .filter(|s| s.to == Target::Controller)
        .map(|s| &s.message)
        .collect();
    assert!(
        matches!(presence[..], [Message::Presence(Presence { away, seq: 1 })] if away == &vec![UserId::from("alice")]),
        "{presence:?}"
    );
    let out = core
        .apply(3_100_000, NodeInput::Away(UserId::from("bob")))
        .expect("decided");
    assert!(
        matches!(out.reply, Some(Reply::Presence(Err(Refused::NotHere(_))))),
        "{:?}",
        out.reply
    );
    assert!(out.sends.is_empty());
}

#[test]
fn a_claim_of_this_nodes_desk_on_an_instance_not_in_memory_waits_for_it_to_be_read_back() {
    let mut core = node();
    hear(&mut core, 1_000, &controller(), directory()).expect("the directory");
    // An item this node hosts, on alice's worklist here; the engine does not hold its
    // instance (retired from memory, or never here).
    hear(&mut core, 2_000, &me(), item_from(ME, Vec::new(), None)).expect("the item");
    let claim = NodeInput::Claim(mobiwf_people::LocalClaim {
        user: UserId::from("alice"),
        instance: InstanceId(9),
        activity: ActivityId(1),
        action: ItemAction::Select,
    });
    let out = core.apply(3_000_000, claim).expect("decided");
    let Some(Reply::Claim(ClaimOutcome::Pending { request, .. })) = &out.reply else {
        panic!("sent to its host, this node: {:?}", out.reply);
    };
    let request = *request;
    assert_eq!(out.deferred.len(), 1, "{out:?}");
    assert!(sent_to_me(&out).is_empty(), "{:?}", out.sends);
    let own = NodeInput::OwnClaim(out.deferred[0].clone());
    assert_eq!(core.needs(&own), Some(InstanceId(9)));
    // The store holds nothing of it: the engine's refusal is alice's answer.
    core.readmit(mobiwf_engine::StoredInstance::default());
    let out = core.apply(3_100_000, own).expect("decided");
    assert!(
        matches!(&out.answers[..], [(r, Verdict::Invalid { .. })] if *r == request),
        "{:?}",
        out.answers
    );
}

/// The host's address with `host` in place in an item's snapshot.
fn hosted_at(message: Message, host: Location) -> Message {
    let Message::Item(mut snapshot) = message else {
        panic!("a snapshot: {message:?}");
    };
    snapshot.info.host = host;
    Message::Item(snapshot)
}

#[test]
fn an_items_host_is_the_peer_its_address_names() {
    let core = node();
    let item = || item_from(PARTNER, Vec::new(), None);
    // The same peer at another address is the same host.
    let elsewhere = Location::parse("/ip4/10.9.9.9/udp/9/quic-v1/p2p/peer-partner").unwrap();
    let taken = core.accept(&partner(), hosted_at(item(), elsewhere), Ok(Vec::new()));
    assert!(matches!(taken, Ok(NodeInput::Desk(_))), "{taken:?}");
    // An address that names no peer (as a peer may send it) names no host.
    let nameless = Location::lenient("/ip4/127.0.0.2/tcp/4001");
    let why = refused(core.accept(&partner(), hosted_at(item(), nameless), Ok(Vec::new())));
    assert_eq!(
        why,
        "\"/ip4/127.0.0.2/tcp/4001\" does not end in /p2p/<peer id>; give its full libp2p \
         address"
    );
}

#[test]
fn this_nodes_own_items_are_known_by_its_peer_at_any_of_its_addresses() {
    let mut core = node();
    hear(&mut core, 1_000, &controller(), directory()).expect("the directory");
    let another_address = Location::parse("/ip4/192.168.1.4/tcp/4001/p2p/peer-me").unwrap();
    let item = hosted_at(item_from(ME, Vec::new(), None), another_address);
    hear(&mut core, 2_000, &me(), item).expect("the item");
    let claim = NodeInput::Claim(mobiwf_people::LocalClaim {
        user: UserId::from("alice"),
        instance: InstanceId(9),
        activity: ActivityId(1),
        action: ItemAction::Select,
    });
    let out = core.apply(3_000_000, claim).expect("decided");
    // Its host is this node: the claim goes to the engine here, not over the network.
    assert!(out.sends.is_empty(), "{:?}", out.sends);
    assert_eq!(out.deferred.len(), 1, "{out:?}");
}

#[test]
fn only_the_controller_answers_requests_for_classes_and_a_node_takes_none() {
    use mobiwf_proto::{BeginSync, EndSync, SyncGranted, SyncRefused, SyncTicket};
    let core = node();
    let ticket = SyncTicket {
        instance: InstanceId(1),
        partition: PartitionId(1),
        activity: ActivityId(1),
        round: 0,
    };
    let granted = SyncGranted {
        ticket,
        lease_ms: 5000,
    };
    let refusal = SyncRefused {
        ticket,
        detail: "synchronization failed".to_owned(),
    };
    let taken = core.accept(
        &controller(),
        Message::SyncGranted(granted.clone()),
        Ok(Vec::new()),
    );
    assert!(
        matches!(&taken, Ok(NodeInput::Engine(Input::SyncGranted(g))) if *g == granted),
        "{taken:?}"
    );
    let taken = core.accept(
        &controller(),
        Message::SyncRefused(refusal.clone()),
        Ok(Vec::new()),
    );
    assert!(
        matches!(&taken, Ok(NodeInput::Engine(Input::SyncRefused(r))) if *r == refusal),
        "{taken:?}"
    );
    for (message, kind) in [
        (Message::SyncGranted(granted), "sync_granted"),
        (Message::SyncRefused(refusal), "sync_refused"),
    ] {
        let why = refused(core.accept(&partner(), message, Ok(Vec::new())));
        assert_eq!(
            why,
            format!("only this node's controller sends {kind} messages")
        );
    }
    let begin = Message::BeginSync(BeginSync {
        ticket,
        class: Some("press".into()),
        pass: mobiwf_proto::Pass::FIRST,
    });
    let end = Message::EndSync(EndSync { ticket });
    for message in [begin, end] {
        for from in [controller(), partner()] {
            let why = refused(core.accept(&from, message.clone(), Ok(Vec::new())));
            assert!(why.starts_with("a node does not take"), "{why}");
        }
    }
}
