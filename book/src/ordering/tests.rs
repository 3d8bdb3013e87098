//! The relative order between definitions: the seed's example both ways (tables), three
//! definitions ordered in a ring, and, over random interleavings of requests, completions and
//! ends across two and three definitions, that no pair ever runs in the wrong order and that
//! nothing waits once the tasks before it ended.

use std::collections::{BTreeMap, BTreeSet};

use mobiwf_proto::InstanceId;
use mobiwf_xml_schema::{
    ActivityId, DefinitionName, Orderings, WorkflowDefinition, load_definition_named,
    load_orderings_named, task_id,
};
use proptest::prelude::*;

use super::*;

/// A definition whose tasks (one automatic activity each) are `tasks`, in that order.
fn definition(name: &str, tasks: &[&str]) -> WorkflowDefinition {
    let mut text = format!("TASK M {{ }} WORKFLOW {name} {{\n");
    for task in tasks {
        text.push_str(&format!("TASK {task} : M {{ }}\n"));
    }
    text.push('}');
    load_definition_named("d.pdl", text.as_bytes())
        .unwrap_or_else(|d| panic!("{}", d.render("d.pdl")))
        .value
}

fn orderings(pdl: &str) -> Orderings {
    load_orderings_named("o.pdl", pdl.as_bytes())
        .unwrap_or_else(|d| panic!("{}", d.render("o.pdl")))
        .value
}

/// The running instances, as the book would show them to the ordering.
#[derive(Default)]
struct World {
    definitions: BTreeMap<DefinitionName, WorkflowDefinition>,
    instances: BTreeMap<InstanceId, Party>,
}

struct Party {
    definition: DefinitionName,
    finals: BTreeSet<ActivityId>,
    ended: bool,
}

impl Running for World {
    fn definition(&self, instance: InstanceId) -> Option<(&DefinitionName, &WorkflowDefinition)> {
        let party = self.instances.get(&instance).filter(|p| !p.ended)?;
        self.definitions.get_key_value(&party.definition)
    }

    fn is_final(&self, instance: InstanceId, activity: ActivityId) -> bool {
        self.instances
            .get(&instance)
            .is_some_and(|p| p.finals.contains(&activity))
    }
}

impl World {
    fn add(&mut self, name: &str, tasks: &[&str]) {
        self.definitions
            .insert(DefinitionName::new(name), definition(name, tasks));
    }

    fn start(&mut self, instance: u64, definition: &str) {
        self.instances.insert(
            InstanceId(instance),
            Party {
                definition: DefinitionName::new(definition),
                finals: BTreeSet::new(),
                ended: false,
            },
        );
    }

    fn id(&self, instance: u64, task: &str) -> ActivityId {
        let party = &self.instances[&InstanceId(instance)];
        task_id(
            &self.definitions[&party.definition],
            &TaskRef::Name(task.to_owned()),
        )
        .unwrap()
    }

    fn finish(&mut self, instance: u64, task: &str) {
        let id = self.id(instance, task);
        if let Some(p) = self.instances.get_mut(&InstanceId(instance)) {
            p.finals.insert(id);
        }
    }
}

/// The book and the world of the seed's example: P1 (T11, T12) and P2 (T21, T22), instance 1
/// of P1 and instance 2 of P2.
fn seed() -> (OrderingBook, World) {
    let mut book = OrderingBook::default();
    book.apply(orderings(
        "WORKFLOW_DEFINITIONS P1 : P2; RELATIVE_ORDER { T11 : T21; T12 : T22; }",
    ));
    let mut world = World::default();
    world.add("P1", &["T11", "T12", "X1"]);
    world.add("P2", &["T21", "T22"]);
    world.start(1, "P1");
    world.start(2, "P2");
    (book, world)
}

/// What `instance` asking to run `task` waits for, in words.
fn ask(book: &mut OrderingBook, world: &World, instance: u64, task: &str) -> Vec<String> {
    let party = &world.instances[&InstanceId(instance)];
    let workflow = &world.definitions[&party.definition];
    let request = Request {
        instance: InstanceId(instance),
        definition: &party.definition,
        workflow,
        activity: world.id(instance, task),
    };
    book.request(&request, world)
        .waits
        .iter()
        .map(ToString::to_string)
        .collect()
}

#[test]
fn the_first_to_schedule_an_ordered_task_goes_first_on_every_pair() {
    let (mut book, mut world) = seed();
    // Instance 1 schedules T11 first: it goes first on both pairs.
    assert!(ask(&mut book, &world, 1, "T11").is_empty());
    assert_eq!(ask(&mut book, &world, 2, "T21"), ["after instance 1's T11"]);
    assert_eq!(ask(&mut book, &world, 2, "T22"), ["after instance 1's T12"]);
    assert!(ask(&mut book, &world, 1, "T12").is_empty());
    assert_eq!(book.ticket(InstanceId(1)), Some(Ticket(0)));
    assert_eq!(book.ticket(InstanceId(2)), Some(Ticket(1)));
    world.finish(1, "T11");
    assert!(ask(&mut book, &world, 2, "T21").is_empty());
    assert_eq!(ask(&mut book, &world, 2, "T22"), ["after instance 1's T12"]);
    world.finish(1, "T12");
    assert!(ask(&mut book, &world, 2, "T22").is_empty());
}

#[test]
fn with_the_order_reversed_the_reverse() {
    let (mut book, mut world) = seed();
    assert!(ask(&mut book, &world, 2, "T21").is_empty());
    assert_eq!(ask(&mut book, &world, 1, "T11"), ["after instance 2's T21"]);
    assert_eq!(ask(&mut book, &world, 1, "T12"), ["after instance 2's T22"]);
    world.finish(2, "T21");
    world.finish(2, "T22");
    assert!(ask(&mut book, &world, 1, "T11").is_empty());
    assert!(ask(&mut book, &world, 1, "T12").is_empty());
}

#[test]
fn a_task_in_no_pair_neither_waits_nor_takes_a_ticket() {
    let (mut book, world) = seed();
    assert!(ask(&mut book, &world, 2, "T21").is_empty());
    let party = &world.instances[&InstanceId(1)];
    let request = Request {
        instance: InstanceId(1),
        definition: &party.definition,
        workflow: &world.definitions[&party.definition],
        activity: world.id(1, "X1"),
    };
    let decision = book.request(&request, &world);
    assert_eq!(
        decision,
        Decision {
            ticket: None,
            assigned: false,
            waits: Vec::new()
        }
    );
    assert!(!book.is_ordered(&request));
}

#[test]
fn an_ended_instance_is_waited_for_no_more_and_its_ticket_is_never_given_again() {
    let (mut book, mut world) = seed();
    assert!(ask(&mut book, &world, 1, "T11").is_empty());
    assert_eq!(ask(&mut book, &world, 2, "T21").len(), 1);
    world.instances.get_mut(&InstanceId(1)).unwrap().ended = true;
    assert!(ask(&mut book, &world, 2, "T21").is_empty());
    assert!(book.ended(InstanceId(1)));
    assert!(!book.ended(InstanceId(1)));
    world.start(3, "P1");
    assert_eq!(ask(&mut book, &world, 3, "T11"), ["after instance 2's T21"]);
    assert_eq!(book.ticket(InstanceId(3)), Some(Ticket(2)));
}

#[test]
fn the_tickets_are_stored_as_they_were() {
    let (mut book, world) = seed();
    ask(&mut book, &world, 2, "T21");
    ask(&mut book, &world, 1, "T11");
    let json = serde_json::to_string(book.tickets()).unwrap();
    assert_eq!(json, r#"{"next":2,"held":{"1":1,"2":0}}"#);
    let back: Tickets = serde_json::from_str(&json).unwrap();
    let again = OrderingBook::restore(book.orderings().clone(), back);
    assert_eq!(again, book);
}

#[test]
fn three_definitions_ordered_in_a_ring_never_wait_in_a_cycle() {
    let mut book = OrderingBook::default();
    book.apply(orderings(
        "WORKFLOW_DEFINITIONS P1 : P2; RELATIVE_ORDER { A1 : A2; }
         WORKFLOW_DEFINITIONS P2 : P3; RELATIVE_ORDER { A2 : A3; }
         WORKFLOW_DEFINITIONS P3 : P1; RELATIVE_ORDER { A3 : A1; }",
    ));
    let mut world = World::default();
    for (k, name) in ["P1", "P2", "P3"].into_iter().enumerate() {
        world.add(name, &[&format!("A{}", k + 1)]);
        world.start(k as u64 + 1, name);
    }
    // Each asks in turn: each waits only for those that asked before it.
    assert!(ask(&mut book, &world, 1, "A1").is_empty());
    assert_eq!(ask(&mut book, &world, 2, "A2"), ["after instance 1's A1"]);
    assert_eq!(
        ask(&mut book, &world, 3, "A3"),
        ["after instance 1's A1", "after instance 2's A2"]
    );
    // The first asks again: it still waits for nobody, though P3 : P1 puts A3 before A1.
    assert!(ask(&mut book, &world, 1, "A1").is_empty());
    world.finish(1, "A1");
    assert!(ask(&mut book, &world, 2, "A2").is_empty());
    assert_eq!(ask(&mut book, &world, 3, "A3"), ["after instance 2's A2"]);
    world.finish(2, "A2");
    assert!(ask(&mut book, &world, 3, "A3").is_empty());
}

#[test]
fn words_for_the_history() {
    let waits = [
        Wait {
            instance: InstanceId(12),
            activity: ActivityId(1),
            task: TaskRef::Name("T11".into()),
        },
        Wait {
            instance: InstanceId(14),
            activity: ActivityId(3),
            task: TaskRef::Id(ActivityId(3)),
        },
    ];
    assert_eq!(
        describe(&waits),
        "waits for the relative order of its instance: after instance 12's T11 and after \
         instance 14's activity 3"
    );
}

mod interleavings;
