//! Unit tests of partition derivation with dependency rules and routing, apart from
//! `derive.rs` so that file stays short: rule successors (local and remote) become adjacents
//! with the states their rules name, merged with precondition successors; merge, routes,
//! completion and kind dummy are carried over, and every route leads to an adjacent; the
//! paper's workflow is derived as before. Instance data in derived documents is tested in
//! `tests/data.rs` beside this file.

use super::*;
use crate::model::{
    ActivityKind, ActivityTypeId, Contingency, Partition, Partner, People, Retries, Status,
    TaskState::{self, *},
};

mod data;

fn term(activity: u64, state: TaskState) -> Rule {
    Rule::Term {
        activity: ActivityId(activity),
        state,
    }
}

fn activity(id: u64, preconditions: &[u64], depends: Option<Rule>) -> Activity {
    Activity {
        id: ActivityId(id),
        name: String::new(),
        description: String::new(),
        activity_type: ActivityTypeId(1),
        status: Status::Pending,
        time_to_wait_secs: 0,
        contingency: Contingency::Block,
        time_out_secs: 0,
        preconditions: preconditions.iter().copied().map(ActivityId).collect(),
        depends,
        merge: crate::Merge::default(),
        routes: Vec::new(),
        completion: false,
        loop_back: None,
        kind: ActivityKind::Automatic,
        command: None,
        compensation: None,
        retries: Retries::default(),
        class: None,
        application: None,
        data: crate::DataAccess::default(),
        people: People::default(),
    }
}

/// `activities`, with partition 1 (partner 1, at 10.0.0.1) holding `first` and partition 2
/// (partner 2, at 10.0.0.2) the others.
fn definition(activities: Vec<Activity>, first: &[u64]) -> WorkflowDefinition {
    let (one, two): (Vec<ActivityId>, Vec<ActivityId>) = activities
        .iter()
        .map(|a| a.id)
        .partition(|id| first.contains(&id.0));
    let partition = |id: u64, activities| Partition {
        id: PartitionId(id),
        name: String::new(),
        partner: PartnerId(id),
        time_out_secs: 0,
        activities,
    };
    let partner = |id: u64| Partner {
        id: PartnerId(id),
        name: String::new(),
        description: String::new(),
        location: format!("10.0.0.{id}"),
        skills: vec![ActivityTypeId(1)],
    };
    WorkflowDefinition {
        id: WorkflowId(1),
        description: String::new(),
        name: None,
        creator_role: None,
        activities,
        activity_types: Vec::new(),
        partitions: vec![partition(1, one), partition(2, two)],
        partners: vec![partner(1), partner(2)],
        data: Vec::new(),
        applications: Vec::new(),
    }
}

/// The derived activity `id`, whichever partition holds it.
fn derived(def: &WorkflowDefinition, id: u64) -> PartitionActivity {
    derive_partitions(def, &DeriveOptions::default())
        .into_iter()
        .flat_map(|p| p.document.activities)
        .find(|a| a.id == ActivityId(id))
        .expect("derived")
}

fn adjacent(id: u64, partner: u64, states: &[TaskState]) -> Adjacent {
    Adjacent {
        id: ActivityId(id),
        location: format!("10.0.0.{partner}"),
        states: states.to_vec(),
        carries: Vec::new(),
    }
}

#[test]
fn a_local_rule_successor_is_an_adjacent_with_its_state() {
    let rule = term(1, Failed);
    let def = definition(
        vec![activity(1, &[], None), activity(2, &[], Some(rule.clone()))],
        &[1, 2],
    );
    let one = derived(&def, 1);
    assert_eq!(one.adjacents, vec![adjacent(2, 1, &[Failed])]);
    assert!(!one.response_immediate);
    assert_eq!(derived(&def, 2).depends, Some(rule));
}

#[test]
fn a_remote_rule_successor_makes_the_response_immediate() {
    let def = definition(
        vec![
            activity(1, &[], None),
            activity(2, &[], Some(term(1, Running))),
        ],
        &[1],
    );
    let one = derived(&def, 1);
    assert_eq!(one.adjacents, vec![adjacent(2, 2, &[Running])]);
    assert!(one.response_immediate);
    assert!(!derived(&def, 2).response_immediate);
}

#[test]
fn a_successor_by_precondition_and_rule_is_one_adjacent() {
    let rule = Rule::Or(vec![term(1, Running), term(3, Succeeded)]);
    let def = definition(
        vec![
            activity(1, &[], None),
            activity(2, &[1], Some(rule)),
            activity(3, &[], None),
        ],
        &[1, 2, 3],
    );
    assert_eq!(derived(&def, 1).adjacents, vec![adjacent(2, 1, &[Running])]);
    assert_eq!(
        derived(&def, 3).adjacents,
        vec![adjacent(2, 1, &[Succeeded])]
    );
}

#[test]
fn states_of_several_terms_are_merged_in_task_state_order() {
    let rule = Rule::And(vec![
        term(1, Failed),
        Rule::Or(vec![term(1, Running), term(1, Failed), term(1, Ready)]),
    ]);
    let def = definition(
        vec![activity(1, &[], None), activity(2, &[], Some(rule))],
        &[1],
    );
    assert_eq!(
        derived(&def, 1).adjacents,
        vec![adjacent(2, 2, &[Ready, Running, Failed])]
    );
}

#[test]
fn precondition_successors_keep_no_states_and_definition_order() {
    let def = definition(
        vec![
            activity(1, &[], None),
            activity(2, &[1], None),
            activity(3, &[], Some(term(1, Cancelled))),
            activity(4, &[1], None),
        ],
        &[1, 2],
    );
    let one = derived(&def, 1);
    assert_eq!(
        one.adjacents,
        vec![
            adjacent(2, 1, &[]),
            adjacent(3, 2, &[Cancelled]),
            adjacent(4, 2, &[]),
        ]
    );
    assert!(one.response_immediate);
}

#[test]
fn the_paper_workflow_is_derived_as_before() {
    let src = include_bytes!("../../../examples/paper/workflow.xml");
    let def = crate::load_definition(src).expect("valid").value;
    for part in derive_partitions(&def, &DeriveOptions::default()) {
        for a in &part.document.activities {
            let waiting: Vec<ActivityId> = def
                .activities
                .iter()
                .filter(|b| b.preconditions.contains(&a.id))
                .map(|b| b.id)
                .collect();
            let adjacents: Vec<ActivityId> = a.adjacents.iter().map(|adj| adj.id).collect();
            assert_eq!(adjacents, waiting, "adjacents of activity {}", a.id);
            assert!(a.adjacents.iter().all(|adj| adj.states.is_empty()));
            assert_eq!(a.depends, None);
        }
        assert!(!crate::write_partition(&part.document).contains("states"));
    }
}

#[test]
fn partition_documents_carry_merge_routes_completion_and_dummy() {
    use crate::{Merge, Route};
    let mut review = activity(1, &[], None);
    review.routes = vec![
        Route {
            flag: Some("approved".into()),
            to: vec![ActivityId(2)],
        },
        Route {
            flag: None,
            to: vec![ActivityId(3)],
        },
    ];
    let mut join = activity(4, &[2, 3], None);
    join.kind = ActivityKind::Dummy;
    join.merge = Merge::First {
        flag: Some("approved".into()),
    };
    let mut close = activity(5, &[4], None);
    close.completion = true;
    let mut vote = activity(6, &[2, 3], None);
    vote.merge = Merge::Vote { votes: 2 };
    let def = definition(
        vec![
            review,
            activity(2, &[1], None),
            activity(3, &[1], None),
            join,
            close,
            vote,
        ],
        &[1, 2, 4, 5],
    );
    for a in &def.activities {
        let d = derived(&def, a.id.0);
        assert_eq!(
            (&d.merge, &d.routes, d.completion, d.kind),
            (&a.merge, &a.routes, a.completion, a.kind),
            "activity {}",
            a.id
        );
    }
    let review = derived(&def, 1);
    let adjacents: Vec<ActivityId> = review.adjacents.iter().map(|adj| adj.id).collect();
    assert_eq!(adjacents, vec![ActivityId(2), ActivityId(3)]);
    assert!(review.response_immediate, "3 is in the other partition");
    for part in derive_partitions(&def, &DeriveOptions::default()) {
        let problems = crate::validate_partition(&part.document, &Default::default());
        assert!(problems.is_empty(), "{problems:?}");
    }
}

#[test]
fn routes_of_derived_documents_lead_to_adjacents_that_exist() {
    let src = include_bytes!("../../tests/xsd/valid/routing.workflow.xml");
    let def = crate::load_definition(src).expect("valid").value;
    let derived = derive_partitions(&def, &DeriveOptions::default());
    let mut routed = 0;
    for part in &derived {
        for a in &part.document.activities {
            let adjacents: Vec<ActivityId> = a.adjacents.iter().map(|adj| adj.id).collect();
            for to in a.routes.iter().flat_map(|r| &r.to) {
                assert!(adjacents.contains(to), "activity {} routes to {to}", a.id);
                routed += 1;
            }
        }
        let text = crate::write_partition(&part.document);
        let back = crate::load_partition(text.as_bytes())
            .unwrap_or_else(|d| panic!("{}", d.render("derived")))
            .value;
        assert_eq!(back, part.document);
    }
    assert_eq!(routed, 3, "1 routes to 2 and 3, 9 to 10");
}
