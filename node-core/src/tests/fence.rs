//! A grant is used only when the node's lease for its request did not run out since the
//! request was asked (`NodeCore::fence_grant`): a late one comes to the engine as lapsed, is
//! released and asked for again.

use mobiwf_engine::Input;
use mobiwf_proto::{
    ActivityId, InstanceId, Message, Millis, PartitionId, Probe, SyncGranted, SyncTicket,
};

use crate::fixtures::*;
use crate::{NodeCore, NodeInput, RoundTrips};

const LEASE: u64 = 500;

/// Instance 1 with activity 2 (the command) of class press, its activity 1 done, asked for
/// its class at 2,000: the core waiting for the grant of round 0.
fn waiting() -> NodeCore {
    let mut core = node();
    hear(&mut core, 1_000, &controller(), directory()).expect("the directory");
    let Message::Deploy(mut deploy) = deployment(1) else {
        unreachable!("a deployment")
    };
    let mut doc = mobiwf_xml_schema::load_partition(deploy.document.as_bytes())
        .expect("a partition")
        .value;
    doc.activities[0].people = Default::default();
    doc.activities[0].command = Some("true".into());
    doc.activities[0].kind = Default::default();
    doc.activities[0].class = Some("press".into());
    doc.activities.truncate(1);
    doc.activities[0].adjacents.clear();
    deploy.document = mobiwf_xml_schema::write_partition(&doc);
    let out = hear(&mut core, 2_000, &controller(), Message::Deploy(deploy)).expect("deployed");
    assert!(
        out.sends
            .iter()
            .any(|s| matches!(s.message, Message::BeginSync(_))),
        "{:?}",
        out.sends
    );
    core
}

fn granted() -> NodeInput {
    NodeInput::Engine(Input::SyncGranted(SyncGranted {
        ticket: SyncTicket {
            instance: InstanceId(1),
            partition: PartitionId(1),
            activity: ActivityId(1),
            round: 0,
        },
        lease_ms: LEASE,
    }))
}

/// Round trips every 100 ms from 2,000 to `until`, skipping the stretch `cut` (ms).
fn trips(until: u64, cut: std::ops::Range<u64>) -> RoundTrips {
    let mut trips = RoundTrips::new();
    let times = (2_000..=until).step_by(100).filter(|t| !cut.contains(t));
    for (seq, t) in (1..).zip(times) {
        trips.probed(Probe { seq, echo: seq - 1 }, t);
    }
    trips
}

#[test]
fn a_grant_is_used_only_when_its_lease_never_ran_out_since_its_request() {
    let core = waiting();
    // Round trips all along: the grant is taken as it is.
    let fresh = core.fence_grant(granted(), &trips(4_000, 0..0), 4_000);
    assert!(
        matches!(fresh, NodeInput::Engine(Input::SyncGranted(_))),
        "{fresh:?}"
    );
    // A second without a round trip after the request (cut off), then round trips again: the
    // grant that comes now is lapsed.
    let late = core.fence_grant(granted(), &trips(4_000, 2_500..3_500), 4_000);
    assert!(
        matches!(late, NodeInput::Engine(Input::SyncLapsed(_))),
        "{late:?}"
    );
    // Any other input is left as it is.
    let tick = core.fence_grant(NodeInput::Tick, &RoundTrips::new(), Millis(9_000).as_u64());
    assert!(matches!(tick, NodeInput::Tick));
}

#[test]
fn a_lapsed_grant_is_released_and_asked_for_again() {
    let mut core = waiting();
    let input = core.fence_grant(granted(), &trips(4_000, 2_500..3_500), 4_000);
    let out = core
        .apply(Millis(4_000).as_micros(), input)
        .expect("applied");
    let to_controller: Vec<&Message> = out.sends.iter().map(|s| &s.message).collect();
    assert!(
        matches!(
            to_controller[..],
            [Message::EndSync(end), Message::BeginSync(begin)]
                if end.ticket.round == 0 && begin.ticket.round == 1
        ),
        "{to_controller:?}"
    );
    assert!(out.effects.is_empty(), "nothing runs: {:?}", out.effects);
}
