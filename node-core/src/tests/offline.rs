//! A user's work while away, between two nodes' cores: alice's device (this node, [`ME`]) and
//! the host of her item (the partner, [`PARTNER`]), each message carried by hand in the order
//! a link cut and restored brought them: her completion made away and sent while the link is
//! down, her reconnection, then the completion reaching the host (twice: the outbox sends it
//! again when the first try's reply was lost) before the host hears she is back, and only then
//! the host's answer reaching her device.

use mobiwf_engine::{Engine, Target};
use mobiwf_people::{Desk, EntryState, Order};
use mobiwf_proto::{ItemAction, Message, NodeName, UserId, Verdict};

use super::*;
use crate::{ClaimOutcome, Identity, NodeCore, Output, Reply};

/// The partner as the host of instance 1's item: bob's device, alice's item's host.
fn host() -> NodeCore {
    let mut engine = Engine::new();
    engine.set_location(at(PARTNER));
    let who = Identity {
        me: partner(),
        name: NodeName::from("partner"),
        ..identity()
    };
    let mut core = NodeCore::new(engine, Desk::default(), who);
    hear(&mut core, 1_000, &controller(), directory()).expect("the directory");
    core
}

/// Instance 1's deployment with its manual activity lockable (`<disconnected>`).
fn lockable() -> Message {
    let Message::Deploy(mut deploy) = deployment(1) else {
        panic!("a deployment");
    };
    let mut doc = mobiwf_xml_schema::load_partition(deploy.document.as_bytes())
        .expect("a partition document")
        .value;
    doc.activities[0].people.disconnected = true;
    deploy.document = mobiwf_xml_schema::write_partition(&doc);
    Message::Deploy(deploy)
}

/// The directory of `version`, with alice away on her device or not, as the controller
/// sends it once her device told it.
fn presence(version: u64, away: bool) -> Message {
    let Message::Directory(mut sent) = directory() else {
        panic!("a directory");
    };
    sent.version = version;
    let device = sent
        .devices
        .iter_mut()
        .find(|d| d.node == me())
        .expect("alice's device");
    device.presence_seq = version;
    device.away = if away {
        vec![UserId::from("alice")]
    } else {
        Vec::new()
    };
    Message::Directory(sent)
}

/// The messages `out` sends to the node at `address`.
fn to(out: &Output, address: &str) -> Vec<Message> {
    out.sends
        .iter()
        .filter(|s| s.to == Target::Partner(at(address)))
        .map(|s| s.message.clone())
        .collect()
}

/// Hands the host's messages for alice's device to it.
fn deliver(device: &mut NodeCore, now_ms: u64, from_host: &Output) -> Vec<(u64, Verdict)> {
    let mut answers = Vec::new();
    for message in to(from_host, ME) {
        let out = hear(device, now_ms, &partner(), message).expect("the host's message");
        answers.extend(out.answers);
    }
    answers
}

/// Alice's entry for instance 1 on her device: its state and the action under way.
fn entry(device: &NodeCore) -> Option<(EntryState, Option<String>)> {
    device
        .desk()
        .worklist("alice", Order::Arrival)
        .into_iter()
        .find(|e| e.info.instance.0 == 1)
        .map(|e| (e.state, e.pending))
}

#[test]
fn a_completion_made_away_and_answered_after_the_reconnection_leaves_nothing_under_way() {
    let mut h = host();
    let mut d1 = node();
    hear(&mut d1, 1_000, &controller(), directory()).expect("the directory");
    let deployed = hear(&mut h, 2_000, &controller(), lockable()).expect("the deployment");
    deliver(&mut d1, 2_100, &deployed);
    assert_eq!(entry(&d1), Some((EntryState::Offered, None)));

    // She locks it, connected; then goes away.
    let lock = d1
        .apply(3_000_000, alice(1, ItemAction::Lock))
        .expect("lock");
    let [claim] = &to(&lock, PARTNER)[..] else {
        panic!("the lock goes to the host: {:?}", lock.sends);
    };
    let granted = hear(&mut h, 3_100, &me(), claim.clone()).expect("the lock");
    deliver(&mut d1, 3_200, &granted);
    assert_eq!(entry(&d1), Some((EntryState::Locked, None)));
    d1.apply(4_000_000, NodeInput::Away(UserId::from("alice")))
        .expect("away");
    hear(&mut h, 4_100, &controller(), presence(2, true)).expect("alice away");

    // The link is cut: her completion waits in the outbox, under way on the page.
    let complete = ItemAction::Complete {
        succeeded: true,
        detail: None,
        flag: None,
        data: Default::default(),
    };
    let done = d1.apply(5_000_000, alice(1, complete)).expect("complete");
    let Some(Reply::Claim(ClaimOutcome::Pending { request, .. })) = done.reply else {
        panic!("sent to the host: {:?}", done.reply);
    };
    let [completion] = &to(&done, PARTNER)[..] else {
        panic!("the completion goes to the host: {:?}", done.sends);
    };
    let waiting = Some((EntryState::Locked, Some("complete".to_owned())));
    assert_eq!(entry(&d1), waiting);

    // The link is back and she reconnects before the host heard anything: what the page
    // draws now counts her completion as not answered yet.
    d1.apply(6_000_000, NodeInput::Back(UserId::from("alice")))
        .expect("back");
    assert_eq!(entry(&d1), waiting);

    // The completion reaches the host, which still has her away; then again (the outbox's
    // second try); then the host hears she is back.
    let first = hear(&mut h, 6_100, &me(), completion.clone()).expect("the completion");
    let again = hear(&mut h, 6_110, &me(), completion.clone()).expect("its repeat");
    hear(&mut h, 6_120, &controller(), presence(3, false)).expect("alice back");
    for (answered, what) in [(&first, "the completion"), (&again, "its repeat")] {
        let answer = to(answered, ME).into_iter().find_map(|m| match m {
            Message::Item(snapshot) => snapshot.answer,
            _ => None,
        });
        assert!(
            answer.is_some_and(|a| a.request == request && a.verdict == Verdict::Done),
            "{what} is answered done to her device: {:?}",
            answered.sends
        );
    }

    // Her device takes the answer (once), and nothing of hers is under way any more: the
    // item left her worklist, so its host is no longer listed as waiting.
    let answers = deliver(&mut d1, 6_200, &first);
    assert_eq!(answers, vec![(request, Verdict::Done)]);
    assert!(deliver(&mut d1, 6_210, &again).is_empty(), "a repeat");
    assert_eq!(entry(&d1), None);
    assert_eq!(d1.desk().pending().count(), 0);
}
