//! Tests of the BPMN import: each mapping decision on a small process, and each refusal with
//! its element and position.

use super::load;
use crate::model::{ActivityKind, Basis, Contingency, Merge, Route};
use crate::{ActivityId, WorkflowDefinition};

/// A BPMN file whose process holds `body`.
fn bpmn(body: &str) -> String {
    format!(
        r#"<?xml version="1.0" encoding="UTF-8"?>
<bpmn2:definitions xmlns:bpmn2="http://www.omg.org/spec/BPMN/20100524/MODEL" xmlns:camunda="http://camunda.org/schema/1.0/bpmn" xmlns:m="urn:mobiwf" id="d">
<bpmn2:process id="p">
{body}
</bpmn2:process>
</bpmn2:definitions>"#
    )
}

fn flow(id: &str, from: &str, to: &str) -> String {
    format!(r#"<bpmn2:sequenceFlow id="{id}" sourceRef="{from}" targetRef="{to}"/>"#)
}

fn task(id: &str) -> String {
    format!(r#"<bpmn2:task id="{id}" name="{id}"/>"#)
}

fn ok(body: &str) -> WorkflowDefinition {
    match load(bpmn(body).as_bytes()) {
        Ok(loaded) => loaded.value,
        Err(d) => panic!("refused:\n{}", d.render("test.bpmn")),
    }
}

fn refused(body: &str) -> String {
    match load(bpmn(body).as_bytes()) {
        Ok(loaded) => panic!("loaded: {:?}", loaded.value),
        Err(d) => d.render("test.bpmn"),
    }
}

fn pre(def: &WorkflowDefinition, id: u64) -> Vec<u64> {
    def.activity(ActivityId(id))
        .unwrap()
        .preconditions
        .iter()
        .map(|p| p.0)
        .collect()
}

#[test]
fn a_parallel_join_before_a_gateway_is_a_dummy_and_before_a_task_folds() {
    let body = [
        task("a"),
        r#"<bpmn2:parallelGateway id="s"/>"#.to_owned(),
        task("b"),
        task("c"),
        r#"<bpmn2:parallelGateway id="j"/>"#.to_owned(),
        r#"<bpmn2:exclusiveGateway id="x"/>"#.to_owned(),
        task("d"),
        flow("1", "a", "s"),
        flow("2", "s", "b"),
        flow("3", "s", "c"),
        flow("4", "b", "j"),
        flow("5", "c", "j"),
        flow("6", "j", "x"),
        flow("7", "x", "d"),
    ]
    .concat();
    let def = ok(&body);
    let names: Vec<&str> = def.activities.iter().map(|a| a.name.as_str()).collect();
    assert_eq!(names, ["a", "b", "c", "parallel gateway", "d"]);
    assert_eq!(def.activities[3].kind, ActivityKind::Dummy);
    assert_eq!(pre(&def, 4), [2, 3]);
    assert_eq!(def.activities[3].merge, Merge::All);
    assert_eq!(
        pre(&def, 5),
        [4],
        "through the exclusive gateway with one flow in and out"
    );
    // The same join straight before a task folds into it.
    let folded = body
        .replace(&flow("6", "j", "x"), &flow("6", "j", "d"))
        .replace(&flow("7", "x", "d"), "");
    let folded = folded.replace(r#"<bpmn2:exclusiveGateway id="x"/>"#, "");
    let def = ok(&folded);
    assert_eq!(def.activities.len(), 4);
    assert_eq!(pre(&def, 4), [2, 3]);
    assert_eq!(def.activities[3].merge, Merge::All);
}

#[test]
fn an_exclusive_split_routes_by_flag_and_a_skipped_branch_rejoins() {
    let body = [
        r#"<bpmn2:startEvent id="start"/>"#.to_owned(),
        task("t"),
        r#"<bpmn2:exclusiveGateway id="x" default="dflt"/>"#.to_owned(),
        task("a"),
        task("b"),
        r#"<bpmn2:exclusiveGateway id="j"/>"#.to_owned(),
        task("z"),
        r#"<bpmn2:endEvent id="end"/>"#.to_owned(),
        flow("f0", "start", "t"),
        flow("f1", "t", "x"),
        r#"<bpmn2:sequenceFlow id="fa" sourceRef="x" targetRef="a"><bpmn2:conditionExpression>${flag == 'left'}</bpmn2:conditionExpression></bpmn2:sequenceFlow>"#.to_owned(),
        r#"<bpmn2:sequenceFlow id="fb" name="right" sourceRef="x" targetRef="b"/>"#.to_owned(),
        r#"<bpmn2:sequenceFlow id="gone" name="two words" sourceRef="x" targetRef="end"/>"#.to_owned(),
        flow("dflt", "x", "j"),
        flow("f2", "a", "j"),
        flow("f3", "b", "j"),
        flow("f4", "j", "z"),
    ]
    .concat();
    let def = ok(&body);
    let names: Vec<&str> = def.activities.iter().map(|a| a.name.as_str()).collect();
    assert_eq!(names, ["t", "a", "b", "z", "end"]);
    let t = &def.activities[0];
    assert_eq!(
        t.routes,
        [
            Route {
                flag: Some("left".into()),
                to: vec![ActivityId(2)]
            },
            Route {
                flag: Some("right".into()),
                to: vec![ActivityId(3)]
            },
            Route {
                flag: Some("gone".into()),
                to: vec![ActivityId(5)]
            },
            Route {
                flag: None,
                to: vec![ActivityId(4)]
            },
        ]
    );
    assert_eq!(
        pre(&def, 4),
        [1, 2, 3],
        "the join folds into z, the default branch waits for t"
    );
    assert_eq!(def.activities[3].merge, Merge::First { flag: None });
    assert_eq!(
        def.activities[4].kind,
        ActivityKind::Dummy,
        "a branch to an end event goes somewhere"
    );
}

#[test]
fn a_timer_on_a_task_is_its_time_out_and_its_target_the_contingency() {
    let body = [
        task("t"),
        r#"<bpmn2:boundaryEvent id="b" attachedToRef="t"><bpmn2:timerEventDefinition><bpmn2:timeDuration>PT2M</bpmn2:timeDuration></bpmn2:timerEventDefinition></bpmn2:boundaryEvent>"#.to_owned(),
        task("c"),
        task("n"),
        flow("1", "t", "n"),
        flow("2", "b", "c"),
        flow("3", "c", "n"),
    ]
    .concat();
    let def = ok(&body);
    let t = &def.activities[0];
    assert_eq!(
        (t.time_out_secs, t.contingency),
        (120, Contingency::Run(ActivityId(2)))
    );
    assert!(
        pre(&def, 2).is_empty(),
        "the contingency activity waits for nothing of its own"
    );
    assert_eq!(
        pre(&def, 3),
        [1],
        "n waits for t, or for c standing in for it"
    );
    let deciding = [
        body.replace(&flow("1", "t", "n"), &flow("1", "t", "x"))
            .replace(&flow("3", "c", "n"), &flow("3", "c", "x")),
        r#"<bpmn2:exclusiveGateway id="x"/>"#.to_owned(),
        task("m"),
        flow("4", "x", "n"),
        flow("5", "x", "m"),
    ]
    .concat();
    assert!(refused(&deciding).contains("which has a boundary timer"));
    let elsewhere = body.replace(&flow("3", "c", "n"), "");
    assert!(refused(&elsewhere).contains("must lead where <bpmn2:task id=\"t\"> (\"t\") leads"));
}

#[test]
fn people_come_from_candidate_groups_potential_owners_and_our_extensions() {
    let body = r#"<bpmn2:userTask id="u" camunda:candidateGroups="department:field, tech">
        <bpmn2:extensionElements><m:deadline>8</m:deadline><m:command>true</m:command></bpmn2:extensionElements>
      </bpmn2:userTask>
      <bpmn2:manualTask id="v"><bpmn2:potentialOwner><bpmn2:resourceAssignmentExpression><bpmn2:formalExpression>group(clerk)</bpmn2:formalExpression></bpmn2:resourceAssignmentExpression></bpmn2:potentialOwner></bpmn2:manualTask>"#;
    let def = ok(&body.replace("<m:command>true</m:command>", ""));
    let u = &def.activities[0];
    assert_eq!(u.kind, ActivityKind::Manual);
    assert_eq!(u.people.role.as_ref().map(|r| r.as_str()), Some("tech"));
    assert_eq!(u.people.basis, Basis::Department);
    assert_eq!(u.people.deadline, Some(8));
    assert_eq!(
        def.activities[1].people.role.as_ref().map(|r| r.as_str()),
        Some("clerk")
    );
    let with_command = refused(body);
    assert!(
        with_command
            .contains("test.bpmn:5:60: error: <bpmn2:userTask id=\"u\">: a person does a user"),
        "{with_command}"
    );
    let users = refused(r#"<bpmn2:userTask id="u" camunda:candidateUsers="alice"/>"#);
    assert!(users.contains("test.bpmn:4:24: error: <bpmn2:userTask id=\"u\">: camunda:candidateUsers is not imported"), "{users}");
}

#[test]
fn what_is_outside_the_subset_is_refused_where_it_is() {
    let cases = [
        (
            r#"<bpmn2:inclusiveGateway id="g"/>"#,
            "4:1: error: <bpmn2:inclusiveGateway id=\"g\">: inclusive gateways are not imported",
        ),
        (
            r#"<bpmn2:task id="t"><bpmn2:standardLoopCharacteristics/></bpmn2:task>"#,
            "<bpmn2:task id=\"t\">: its <bpmn2:standardLoopCharacteristics>: loops",
        ),
        (
            r#"<bpmn2:task id="t" isForCompensation="true"/>"#,
            "is a compensation task",
        ),
        (
            r#"<bpmn2:startEvent id="s1"/><bpmn2:startEvent id="s2"/><bpmn2:task id="t"/>"#,
            "is a second start event",
        ),
        (
            r#"<bpmn2:task id="t"/><bpmn2:task id="u"/><bpmn2:sequenceFlow id="f" sourceRef="t" targetRef="u"><bpmn2:conditionExpression>ok</bpmn2:conditionExpression></bpmn2:sequenceFlow>"#,
            "has a condition but does not leave an exclusive gateway",
        ),
        (
            r#"<bpmn2:task id="t"/><bpmn2:sequenceFlow id="f" sourceRef="t" targetRef="nowhere"/>"#,
            "has targetRef \"nowhere\", which is no flow node",
        ),
        (
            r#"<bpmn2:startEvent id="s"/><bpmn2:exclusiveGateway id="x"/><bpmn2:task id="a"/><bpmn2:task id="b"/>"#,
            "",
        ),
        (
            r#"<bpmn2:task id="t"/><bpmn2:boundaryEvent id="b" attachedToRef="t"><bpmn2:timerEventDefinition><bpmn2:timeCycle>R3/PT1M</bpmn2:timeCycle></bpmn2:timerEventDefinition></bpmn2:boundaryEvent>"#,
            "only a duration is imported",
        ),
        (
            r#"<bpmn2:scriptTask id="t" scriptFormat="javascript"><bpmn2:script>x()</bpmn2:script></bpmn2:scriptTask>"#,
            "is not a shell",
        ),
        (
            r#"<bpmn2:serviceTask id="t" camunda:class="org.Foo"/>"#,
            "names how another engine carries the task out",
        ),
        ("", "the file has no <process> with tasks or events"),
        (r#"<bpmn2:startEvent id="s"/>"#, "the process has no task"),
    ];
    for (body, expected) in cases {
        if expected.is_empty() {
            continue;
        }
        let got = refused(body);
        assert!(
            got.contains(expected),
            "{body}\nexpected {expected:?} in:\n{got}"
        );
    }
    let after_start = [
        r#"<bpmn2:startEvent id="s"/><bpmn2:exclusiveGateway id="x"/>"#.to_owned(),
        task("a"),
        task("b"),
        flow("1", "s", "x"),
        flow("2", "x", "a"),
        flow("3", "x", "b"),
    ]
    .concat();
    assert!(
        refused(&after_start)
            .contains("put the task whose flag decides directly before the gateway")
    );
}

#[test]
fn lanes_are_partners_and_every_task_is_in_one() {
    let lanes = r#"<bpmn2:laneSet id="ls"><bpmn2:lane id="l1" name="North"><bpmn2:flowNodeRef>a</bpmn2:flowNodeRef><bpmn2:flowNodeRef>g</bpmn2:flowNodeRef></bpmn2:lane><bpmn2:lane id="l2"><bpmn2:flowNodeRef>b</bpmn2:flowNodeRef></bpmn2:lane></bpmn2:laneSet>"#;
    let body = [
        lanes.to_owned(),
        task("a"),
        r#"<bpmn2:parallelGateway id="g"/>"#.to_owned(),
        task("b"),
        task("c"),
        flow("1", "a", "g"),
        flow("2", "g", "b"),
        flow("3", "g", "c"),
    ]
    .concat();
    let missing = refused(&body);
    assert!(
        missing.contains("<bpmn2:task id=\"c\"> (\"c\") is in no lane"),
        "{missing}"
    );
    let def = ok(&body.replace(
        "<bpmn2:flowNodeRef>b</bpmn2:flowNodeRef>",
        "<bpmn2:flowNodeRef>b</bpmn2:flowNodeRef><bpmn2:flowNodeRef>c</bpmn2:flowNodeRef>",
    ));
    let partners: Vec<(&str, u64)> = def
        .partners
        .iter()
        .map(|p| (p.name.as_str(), p.skills[0].0))
        .collect();
    assert_eq!(partners, [("North", 1), ("l2", 2)]);
    let types: Vec<u64> = def.activities.iter().map(|a| a.activity_type.0).collect();
    assert_eq!(types, [1, 2, 2]);
}

#[test]
fn several_processes_are_refused_and_a_collaboration_of_one_is_read() {
    let two = r#"<definitions xmlns="http://www.omg.org/spec/BPMN/20100524/MODEL">
<collaboration id="c"><participant id="p1" processRef="a"/><participant id="p2" processRef="b"/></collaboration>
<process id="a"><task id="t"/></process>
<process id="b"><task id="u"/></process>
</definitions>"#;
    let got = load(two.as_bytes()).unwrap_err().render("two.bpmn");
    assert!(
        got.starts_with("two.bpmn:4:1: error: <process id=\"b\"> is a second process"),
        "{got}"
    );
    let one = two.replace(
        r#"<process id="b"><task id="u"/></process>"#,
        r#"<process id="b"/>"#,
    );
    let def = load(one.as_bytes()).unwrap().value;
    assert_eq!(def.activities.len(), 1);
    assert_eq!(def.name.as_ref().map(|n| n.as_str()), Some("a"));
}

#[test]
fn a_document_in_no_bpmn_namespace_and_a_doctype_are_refused() {
    let got = load(b"<definitions><process id=\"p\"/></definitions>").unwrap_err();
    assert!(
        got.render("x.bpmn").contains("is not BPMN's <definitions>"),
        "{}",
        got.render("x")
    );
    let got = load(b"<!DOCTYPE d [<!ENTITY e \"x\">]><definitions/>").unwrap_err();
    assert!(
        got.render("x.bpmn")
            .contains("BPMN documents are read without DTDs")
    );
}
