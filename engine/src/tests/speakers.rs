//! Scenarios of who may say what: a partner's word about an activity is taken only from the
//! peer the controller said runs it; a word that comes before the deployment is kept and
//! judged when the deployment says who runs what; the controller's word is always taken.

use std::collections::BTreeMap;

use super::*;
use mobiwf_proto::NodeId;

fn word(from: Option<&str>, instance: u64, activity: u64) -> Input {
    Input::Notified(crate::Notified {
        from: from.map(NodeId::new),
        notify: mobiwf_proto::Notify::new(
            InstanceId(instance),
            ActivityId(activity),
            Outcome::Released,
        ),
        missing: Vec::new(),
    })
}

fn deploy_with(e: &mut Engine, instance: u64, runs_on: &[(u64, &str)]) -> Vec<Effect> {
    let runs_on: BTreeMap<ActivityId, NodeId> = runs_on
        .iter()
        .map(|(a, p)| (ActivityId(*a), NodeId::new(*p)))
        .collect();
    e.apply(
        1000,
        Input::Deploy(mobiwf_proto::Deploy {
            instance: InstanceId(instance),
            partition: PartitionId(2),
            document: waits_for_remote_1(instance),
            responsible: None,
            hour_ms: None,
            inputs: Default::default(),
            runs_on: (runs_on).into_iter().collect(),
        }),
    )
    .expect("deploy")
}

scenarios! {
fn a_word_from_the_peer_that_runs_the_activity_is_taken_and_a_strangers_refused() {
    let mut e = Engine::new();
    deploy_with(&mut e, 7, &[(1, "p1"), (2, "p2")]);
    let refused = e.apply(2000, word(Some("rogue"), 7, 1)).unwrap_err();
    assert!(
        refused.to_string().contains("peer rogue does not run activity 1 of instance 7 (p1 does)"),
        "{refused}"
    );
    assert_eq!(state(&e, 7, 2), ActivityState::NotReady);
    let fx = e.apply(2000, word(Some("p1"), 7, 1)).expect("p1's word");
    assert_eq!(executes(&fx), vec![(2, 0)]);
}

fn the_controllers_word_is_always_taken() {
    let mut e = Engine::new();
    deploy_with(&mut e, 8, &[(1, "p1"), (2, "p2")]);
    let fx = e.apply(2000, word(None, 8, 1)).expect("the controller's word");
    assert_eq!(executes(&fx), vec![(2, 0)]);
}

fn a_word_before_the_deployment_is_kept_and_judged_by_it() {
    let mut e = Engine::new();
    // Two words come before the deployment: one from the right peer, one from a stranger.
    e.apply(500, word(Some("rogue"), 9, 1)).expect("kept");
    e.apply(600, word(Some("p1"), 9, 1)).expect("kept");
    // Kept across a restart.
    let mut e = restart(&mut e);
    let fx = deploy_with(&mut e, 9, &[(1, "p1"), (2, "p2")]);
    let refused: Vec<_> = fx
        .iter()
        .filter_map(|f| match f {
            Effect::Refused { from, activity, .. } => Some((from.as_str().to_owned(), activity.0)),
            _ => None,
        })
        .collect();
    assert_eq!(refused, vec![("rogue".to_owned(), 1)]);
    assert_eq!(executes(&fx), vec![(2, 0)]);
    let e = restart(&mut e);
    assert!(e.known[&InstanceId(9)].early.is_empty());
}

fn a_contingency_activitys_word_waits_for_its_placement() {
    let mut e = Engine::new();
    deploy_with(&mut e, 10, &[(1, "p1"), (2, "p2")]);
    // Activity 1 failed; its stand-in 5 runs on p3, whose word may come before the
    // controller's `Substitute` does.
    e.apply(1500, word(Some("p3"), 10, 5)).expect("kept until placed");
    assert_eq!(state(&e, 10, 2), ActivityState::NotReady);
    let fx = e
        .apply(
            1600,
            Input::Substitute {
                instance: InstanceId(10),
                replaced: ActivityId(1),
                by: ActivityId(5),
                peer: Some(NodeId::new("p3")),
            },
        )
        .expect("substitute");
    assert_eq!(executes(&fx), vec![(2, 0)]);
    // From now on, only p3 speaks for 5.
    let refused = e.apply(1700, word(Some("p1"), 10, 5)).unwrap_err();
    assert!(refused.to_string().contains("(p3 does)"), "{refused}");
}

fn a_deployment_without_a_map_takes_every_partners_word_as_before() {
    let mut e = Engine::new();
    deploy_with(&mut e, 11, &[]);
    let fx = e.apply(2000, word(Some("anyone"), 11, 1)).expect("taken");
    assert_eq!(executes(&fx), vec![(2, 0)]);
}

fn words_kept_for_one_instance_are_bounded() {
    let mut e = Engine::new();
    for a in 0..MAX_EARLY_WORDS as u64 {
        e.apply(500, word(Some("p1"), 12, 100 + a)).expect("kept");
    }
    let refused = e.apply(500, word(Some("p1"), 12, 1)).unwrap_err();
    assert!(refused.to_string().contains("past it"), "{refused}");
}
}
