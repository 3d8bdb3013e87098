//! Dependency rules in both languages: `<depends>` (nested `<and>`/`<or>` over
//! `<term activity state>`) on an activity, and `<states>` on a partition document's
//! adjacent: reading them, where their parts are, every refusal with its rendered
//! `file:line:col` diagnostic, writing them back, and their cycles with preconditions. The
//! broken-document corpus pins the wording of whole documents; derivation is unit-tested in
//! `src/derive/tests.rs`.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::extension::{
    assert_read_back, def_errors, load_def, partition, partition_errors, partition_xml,
};
use common::valid_example;
use mobiwf_xml_schema::{
    ActivityId, Adjacent, DeriveOptions, Diagnostics, Node, Rule, SourceMap, TaskState,
    WorkflowDefinition, derive_partitions, limits::MAX_RULE_TERMS, load_definition, load_partition,
    read_definition, validate_definition, validate_partition, write_definition, write_partition,
};

/// Five activities in one partition; `extra` goes into activity 2 (line 5), which waits for
/// activity 1.
fn definition_xml(extra: &str) -> String {
    format!(
        r#"<workflow id="1">
<activities>
<activity id="1"><activityTypeId>1</activityTypeId></activity>
<activity id="2"><activityTypeId>1</activityTypeId>
{extra}
<preconditions><preconditionId>1</preconditionId></preconditions></activity>
<activity id="3"><activityTypeId>1</activityTypeId></activity>
<activity id="4"><activityTypeId>1</activityTypeId></activity>
<activity id="5"><activityTypeId>1</activityTypeId></activity>
</activities>
<activityTypes><activityType id="1"/></activityTypes>
<partitions><partition id="1"><partnerId>1</partnerId><activityId>1</activityId><activityId>2</activityId><activityId>3</activityId><activityId>4</activityId><activityId>5</activityId></partition></partitions>
<partners><partner id="1"><ip>10.0.0.1</ip><skills><activityTypeId>1</activityTypeId></skills></partner></partners>
</workflow>"#
    )
}

fn definition(extra: &str) -> Result<WorkflowDefinition, Diagnostics> {
    load_def(&definition_xml(extra))
}

fn definition_errors(extra: &str) -> String {
    def_errors(&definition_xml(extra))
}

fn term(activity: u64, state: TaskState) -> Rule {
    Rule::Term {
        activity: ActivityId(activity),
        state,
    }
}

/// The acceptance shape of the brief, on one line.
const SHAPE: &str = "<depends><or><term activity=\"3\" state=\"FAILED\"/><and><term \
                     activity=\"4\" state=\"SUCCEEDED\"/>\n<term activity=\"5\" \
                     state=\"RUNNING\"/></and></or></depends>";

fn shape() -> Rule {
    Rule::Or(vec![
        term(3, TaskState::Failed),
        Rule::And(vec![
            term(4, TaskState::Succeeded),
            term(5, TaskState::Running),
        ]),
    ])
}

#[test]
fn no_depends_means_no_rule() {
    assert_eq!(definition("").unwrap().activities[1].depends, None);
    assert_eq!(partition("").unwrap().activities[0].depends, None);
}

#[test]
fn the_rule_is_read_in_both_languages() {
    assert_eq!(
        definition(SHAPE).unwrap().activities[1].depends,
        Some(shape())
    );
    assert_eq!(
        partition(SHAPE).unwrap().activities[0].depends,
        Some(shape())
    );
}

#[test]
fn states_are_read_in_any_case_and_several_rules_mean_their_and() {
    let rules = "<depends><term activity=\"3\" state=\"succeded\"/>\
                 <term activity=\"4\" state=\" Not_Ready \"/><or><term activity=\"5\" \
                 state=\"cancelled\"/></or></depends>";
    assert_eq!(
        definition(rules).unwrap().activities[1].depends,
        Some(Rule::And(vec![
            term(3, TaskState::Succeeded),
            term(4, TaskState::NotReady),
            Rule::Or(vec![term(5, TaskState::Cancelled)]),
        ]))
    );
}

#[test]
fn the_source_map_points_at_the_depends_its_rules_and_its_terms() {
    let loaded = load_definition(definition_xml(SHAPE).as_bytes()).unwrap();
    let map = &loaded.source_map;
    let at = |line, column| mobiwf_xml_schema::Pos { line, column };
    assert_eq!(map.pos(Node::Depends(1)), at(5, 1));
    assert_eq!(map.pos(Node::Rule(1, 0)), at(5, 10));
    assert_eq!(map.pos(Node::Rule(1, 1)), at(5, 14));
    assert_eq!(map.pos(Node::Rule(1, 2)), at(5, 49));
    assert_eq!(map.pos(Node::Rule(1, 3)), at(5, 54));
    assert_eq!(map.pos(Node::Rule(1, 4)), at(6, 1));
    assert_eq!(map.pos(Node::Term(1, 0)), at(5, 14));
    assert_eq!(map.pos(Node::Term(1, 1)), at(5, 54));
    assert_eq!(map.pos(Node::Term(1, 2)), at(6, 1));

    // Several rules: rule 0 is their `and`, at the <depends>.
    let two = "<depends> <term activity=\"3\" state=\"READY\"/><term activity=\"4\" \
               state=\"READY\"/></depends>";
    let loaded = load_partition(partition_xml(two).as_bytes()).unwrap();
    let map = &loaded.source_map;
    assert_eq!(map.pos(Node::Rule(0, 0)), at(4, 1));
    assert_eq!(map.pos(Node::Rule(0, 1)), at(4, 11));
    assert_eq!(map.pos(Node::Term(0, 1)), map.pos(Node::Rule(0, 2)));
}

#[test]
fn unknown_elements_and_attributes_get_a_suggestion() {
    assert_eq!(
        definition_errors("<depends><trem activity=\"3\" state=\"READY\"/></depends>"),
        "d.xml:5:10: error: <trem> is not an element of <depends> of activity 2; did you mean \
         <term>?\n"
    );
    assert_eq!(
        partition_errors(
            "<depends><or><term activity=\"3\" stat=\"READY\" state=\"READY\"/></or></depends>"
        ),
        "p.xml:4:33: error: <term> of <depends> of activity 2 has an unknown attribute stat; \
         did you mean state? its attributes are activity and state, e.g. <term activity=\"3\" \
         state=\"SUCCEEDED\"/>\n"
    );
    assert!(
        definition_errors("<depends><and x=\"1\"><term activity=\"3\" state=\"READY\"/></and></depends>")
            .contains("d.xml:5:10: error: <and> of <depends> of activity 2 has an unknown attribute x; it takes no attributes")
    );
    assert!(
        partition_errors("<depends><or><andd/></or></depends>").contains(
            "<andd> is not an element of <or> of <depends> of activity 2; did you mean <and>?"
        )
    );
    assert!(partition_errors("<depends><xor/></depends>").contains(
        "<xor> is not an element of <depends> of activity 2; expected one of: <term>, <and>, <or>"
    ));
    assert!(definition_errors("<dependz/>").contains(
        "<dependz> is not an element of <activity> (activity 2); did you mean <depends>?"
    ));
    assert!(
        partition_errors("<depends><term activity=\"3\" state=\"READY\"/></depends><depends/>")
            .contains("<activity> (activity 2) has a second <depends>")
    );
}

#[test]
fn a_state_that_does_not_exist_is_refused_with_the_valid_ones() {
    assert_eq!(
        definition_errors("<depends><term activity=\"3\" state=\"SUCCESS\"/></depends>"),
        "d.xml:5:29: error: <term> of <depends> of activity 2 has state=\"SUCCESS\", which is \
         not a task state; expected NOT_READY, SYNCHRONIZING, READY, RUNNING, SUCCEEDED, FAILED, \
         CANCELLED or SKIPPED (in any case); did you mean SUCCEEDED?\n"
    );
    assert!(
        partition_errors("<depends><term activity=\"3\" state=\"DONE\"/></depends>").ends_with(
            "has state=\"DONE\", which is not a task state; expected NOT_READY, SYNCHRONIZING, \
             READY, RUNNING, SUCCEEDED, FAILED, CANCELLED or SKIPPED (in any case)\n"
        )
    );
}

#[test]
fn a_term_needs_both_attributes_and_nothing_inside() {
    assert_eq!(
        definition_errors("<depends><term state=\"READY\"/></depends>"),
        "d.xml:5:10: error: <term> of <depends> of activity 2 has no activity attribute; add \
         the id of the activity whose state it looks at, e.g. <term activity=\"3\" \
         state=\"SUCCEEDED\"/>\n"
    );
    assert_eq!(
        partition_errors("<depends><term activity=\"3\"/></depends>"),
        "p.xml:4:10: error: <term> of <depends> of activity 2 has no state attribute; add the \
         state the activity must have entered, one of NOT_READY, SYNCHRONIZING, READY, RUNNING, \
         SUCCEEDED, FAILED, CANCELLED or SKIPPED, e.g. <term activity=\"3\" state=\"SUCCEEDED\"/>\n"
    );
    assert_eq!(
        definition_errors("<depends><term activity=\"three\" state=\"READY\"/></depends>"),
        "d.xml:5:16: error: <term> of <depends> of activity 2 has activity=\"three\"; an \
         activity id is a whole number, 0 or more, e.g. <term activity=\"3\" \
         state=\"SUCCEEDED\"/>\n"
    );
    assert!(
        partition_errors("<depends><term activity=\"3\" state=\"READY\">x</term></depends>")
            .contains("p.xml:4:43: error: <term> of <depends> of activity 2 holds the text \"x\"; <term> is empty")
    );
}

#[test]
fn empty_rules_never_say_anything() {
    assert_eq!(
        definition_errors("<depends/>"),
        "d.xml:5:1: error: <depends> of activity 2 is empty; an empty <depends> never says \
         anything: add a rule such as <term activity=\"3\" state=\"SUCCEEDED\"/>, or remove \
         <depends>\n"
    );
    assert_eq!(
        partition_errors(
            "<depends><or><term activity=\"3\" state=\"READY\"/><and/></or></depends>"
        ),
        "p.xml:4:48: error: activity 2 has an empty <and> in its <depends>; an empty <and> \
         never says anything: add a term or remove it\n"
    );
    assert!(definition_errors("<depends><or></or></depends>").contains(
        "d.xml:5:10: error: activity 2 has an empty <or> in its <depends>; an empty <or> never"
    ));
    // An <and> whose only rule cannot be read is not reported again as empty.
    assert_eq!(
        definition_errors("<depends><and><term activity=\"3\"/></and></depends>")
            .lines()
            .count(),
        1
    );
}

#[test]
fn a_term_on_its_own_activity_is_refused_in_both_languages() {
    let own = "<depends><term activity=\"2\" state=\"RUNNING\"/></depends>";
    let expected = "5:10: error: activity 2 has a <depends> term on itself (activity=\"2\"): an \
                    activity cannot wait for a state of its own; remove the term or name another \
                    activity\n";
    assert_eq!(definition_errors(own), format!("d.xml:{expected}"));
    assert_eq!(partition_errors(own), format!("p.xml:4{}", &expected[1..]));
}

#[test]
fn terms_name_activities_of_the_workflow_but_a_partition_may_name_any() {
    let far = "<depends><term activity=\"3\" state=\"READY\"/><term activity=\"9\" \
               state=\"READY\"/></depends>";
    assert_eq!(
        definition_errors(far),
        "d.xml:5:44: error: activity 2 has a <depends> term on activity 9, which is not an \
         activity of this workflow; fix the id or add activity 9\n"
    );
    assert!(partition(far).is_ok());
}

#[test]
fn a_rule_has_at_most_max_rule_terms_terms() {
    let terms = |n: usize| {
        let terms = "<term activity=\"3\" state=\"READY\"/>".repeat(n);
        format!("<depends><or>{terms}</or></depends>")
    };
    assert!(definition(&terms(MAX_RULE_TERMS)).is_ok());
    let expected = format!(
        "5:1: error: <depends> of activity 2 has {} terms, over the limit of {MAX_RULE_TERMS} \
         (MAX_RULE_TERMS); name fewer activities, e.g. let one activity that waits for many of \
         them stand for them\n",
        MAX_RULE_TERMS + 1
    );
    assert_eq!(
        definition_errors(&terms(MAX_RULE_TERMS + 1)),
        format!("d.xml:{expected}")
    );
    // The structure-only reader refuses it too.
    let read = read_definition(definition_xml(&terms(MAX_RULE_TERMS + 1)).as_bytes());
    assert_eq!(
        read.unwrap_err().render("d.xml"),
        format!("d.xml:{expected}")
    );
}

#[test]
fn preconditions_and_rules_together_must_not_loop() {
    // Activity 2 waits for 1 (precondition); 1 names 2 in its rule.
    let text = definition_xml("").replace(
        "<activity id=\"1\"><activityTypeId>1</activityTypeId></activity>",
        "<activity id=\"1\"><activityTypeId>1</activityTypeId><depends><term activity=\"3\" \
         state=\"READY\"/><term activity=\"2\" state=\"RUNNING\"/></depends></activity>",
    );
    let errors = load_definition(text.as_bytes())
        .unwrap_err()
        .render("d.xml");
    assert_eq!(
        errors,
        "d.xml:3:95: error: dependency cycle: activity 1 -> 2 -> 1 (each waits for the next \
         through a precondition or a <depends> term, starting with this term of activity 1), so \
         they could wait for each other forever; preconditions and <depends> rules together \
         must not loop: remove this term or one of the preconditions on the way\n"
    );
    // A term on an activity that is also a precondition adds no wait, and so no loop.
    assert!(definition("<depends><term activity=\"1\" state=\"FAILED\"/></depends>").is_ok());
    // A rule on a later activity is no loop either.
    assert!(definition("<depends><term activity=\"5\" state=\"FAILED\"/></depends>").is_ok());
}

#[test]
fn a_plain_precondition_cycle_keeps_its_message_and_is_not_reported_twice() {
    let text = definition_xml("<depends><term activity=\"3\" state=\"READY\"/></depends>").replace(
        "<activity id=\"1\"><activityTypeId>1</activityTypeId></activity>",
        "<activity id=\"1\"><activityTypeId>1</activityTypeId><preconditions>\
             <preconditionId>2</preconditionId></preconditions></activity>",
    );
    let errors = load_definition(text.as_bytes())
        .unwrap_err()
        .render("d.xml");
    assert_eq!(
        errors,
        "d.xml:3:1: error: precondition cycle: activity 1 waits for 2 waits for 1 (each waits \
         for the next), so none of them could ever start; remove one of these preconditions\n"
    );
}

#[test]
fn models_built_in_code_are_checked_too() {
    let mut def = definition("").unwrap();
    def.activities[1].depends = Some(Rule::Or(vec![term(2, TaskState::Ready), Rule::And(vec![])]));
    let problems = validate_definition(&def, &SourceMap::default());
    let messages: Vec<&str> = problems.iter().map(|d| d.message.as_str()).collect();
    assert_eq!(messages.len(), 2, "{messages:?}");
    assert!(messages[0].contains("empty <and>"));
    assert!(messages[1].contains("term on itself"));

    let mut doc = partition("").unwrap();
    doc.activities[0].depends = Some(Rule::Or(
        (0..=MAX_RULE_TERMS)
            .map(|_| term(7, TaskState::Failed))
            .collect(),
    ));
    let problems = validate_partition(&doc, &SourceMap::default());
    assert_eq!(problems.len(), 1, "{problems:?}");
    assert!(problems[0].message.contains("(MAX_RULE_TERMS)"));
}

#[test]
fn rules_are_written_after_the_preconditions_only_when_there_is_one() {
    let plain = definition("").unwrap();
    assert!(!write_definition(&plain).contains("depends"));
    assert!(!write_partition(&partition("").unwrap()).contains("depends"));

    let def = definition(SHAPE).unwrap();
    let written = write_definition(&def);
    let expected = "      <preconditions>
        <preconditionId>1</preconditionId>
      </preconditions>
      <depends>
        <or>
          <term activity=\"3\" state=\"FAILED\"/>
          <and>
            <term activity=\"4\" state=\"SUCCEEDED\"/>
            <term activity=\"5\" state=\"RUNNING\"/>
          </and>
        </or>
      </depends>
    </activity>";
    assert!(written.contains(expected), "{written}");
    assert_eq!(load_definition(written.as_bytes()).unwrap().value, def);

    let doc = partition(
        "<depends><term activity=\"9\" state=\"succeded\"/><term activity=\"8\" \
         state=\"ready\"/></depends>",
    )
    .unwrap();
    let written = write_partition(&doc);
    assert!(
        written.contains(
            "    <preconditions/>
      <depends>
        <term activity=\"9\" state=\"SUCCEEDED\"/>
        <term activity=\"8\" state=\"READY\"/>
      </depends>
      <adjacents/>"
        ),
        "{written}"
    );
    assert_eq!(load_partition(written.as_bytes()).unwrap().value, doc);

    // An explicit <and> of one rule stays one.
    let one =
        partition("<depends><and><term activity=\"9\" state=\"READY\"/></and></depends>").unwrap();
    let written = write_partition(&one);
    assert!(written.contains("<depends>\n        <and>\n"), "{written}");
    assert_eq!(load_partition(written.as_bytes()).unwrap().value, one);
}

/// A document as deep as the reader allows stays readable once written: an `and` of several
/// rules is written as the rules side by side in `<depends>`, as it may be read.
#[test]
fn writing_a_rule_adds_no_depth() {
    // workflow/activities/activity/depends is 4 deep; 12 more rule levels reach MAX_DEPTH.
    let inner = "<term activity=\"9\" state=\"READY\"/>";
    let nested = (0..11).fold(inner.to_string(), |rule, _| format!("<or>{rule}</or>"));
    let deep = format!("<depends>{nested}{inner}</depends>");
    let doc = partition(&deep).unwrap();
    let written = write_partition(&doc);
    assert_eq!(load_partition(written.as_bytes()).unwrap().value, doc);
    let def = definition(&deep.replace("\"9\"", "\"3\"")).unwrap();
    let written = write_definition(&def);
    assert_eq!(load_definition(written.as_bytes()).unwrap().value, def);
    // One level more is refused by the reader.
    let deeper = format!("<depends><or>{nested}</or></depends>");
    assert!(partition_errors(&deeper).contains("(MAX_DEPTH)"));
}

fn adjacents_xml(states: &str) -> String {
    format!("<adjacents><adjacent id=\"3\"><ip>10.0.0.2</ip>{states}</adjacent></adjacents>")
}

#[test]
fn adjacent_states_are_read_in_any_case_and_kept_in_task_state_order() {
    let doc = partition(&adjacents_xml(
        "<states> succeeded\n running  NOT_READY </states>",
    ))
    .unwrap();
    assert_eq!(
        doc.activities[0].adjacents,
        vec![Adjacent {
            id: ActivityId(3),
            location: "10.0.0.2".into(),
            states: vec![
                TaskState::NotReady,
                TaskState::Running,
                TaskState::Succeeded
            ],
            carries: Vec::new(),
        }]
    );
    let none = partition(&adjacents_xml("")).unwrap();
    assert!(none.activities[0].adjacents[0].states.is_empty());
    assert!(
        partition(&adjacents_xml("<states/>")).unwrap().activities[0].adjacents[0]
            .states
            .is_empty()
    );
}

#[test]
fn bad_adjacent_states_are_reported_where_they_are() {
    assert_eq!(
        partition_errors(&adjacents_xml("<states>RUNNING Succes</states>")),
        "p.xml:4:62: error: <states> of adjacent 3 of activity 2 names \"Succes\", which is not \
         a task state; expected NOT_READY, SYNCHRONIZING, READY, RUNNING, SUCCEEDED, FAILED, \
         CANCELLED or SKIPPED (in any case); did you mean SUCCEEDED?\n"
    );
    assert_eq!(
        partition_errors(&adjacents_xml("<states>RUNNING running</states>")),
        "p.xml:4:62: error: <states> of adjacent 3 of activity 2 names RUNNING twice; list each \
         state once\n"
    );
    assert!(
        partition_errors(&adjacents_xml("<state>RUNNING</state>")).contains(
            "<state> is not an element of <adjacent> (3 of activity 2); did you mean <states>?"
        )
    );
}

#[test]
fn adjacent_states_are_written_canonically_and_only_when_there_are_some() {
    let doc = partition(&adjacents_xml("<states>failed ready</states>")).unwrap();
    let written = write_partition(&doc);
    assert!(
        written.contains(
            "<adjacent id=\"3\"><ip>10.0.0.2</ip><states>READY FAILED</states></adjacent>"
        ),
        "{written}"
    );
    assert_eq!(load_partition(written.as_bytes()).unwrap().value, doc);
    let mut unordered = doc.clone();
    unordered.activities[0].adjacents[0].states =
        vec![TaskState::Failed, TaskState::Ready, TaskState::Failed];
    assert_eq!(write_partition(&unordered), written);

    let plain = partition(&adjacents_xml("")).unwrap();
    assert!(!write_partition(&plain).contains("states"));
}

#[test]
fn the_example_with_rules_is_valid_and_derives_rule_successors() {
    let def = load_definition(&valid_example("rules.workflow.xml"))
        .unwrap_or_else(|d| panic!("{}", d.render("rules.workflow.xml")))
        .value;
    assert_eq!(
        def.activities[4].depends,
        Some(Rule::Or(vec![
            term(2, TaskState::Succeeded),
            Rule::And(vec![
                term(3, TaskState::Succeeded),
                term(4, TaskState::Succeeded)
            ]),
        ]))
    );
    let derived = derive_partitions(&def, &DeriveOptions::default());
    let repair = derived[0].document.activities[1].clone();
    assert_eq!(repair.id, ActivityId(2));
    let adjacent = |id, ip: &str, states: &[TaskState]| Adjacent {
        id: ActivityId(id),
        location: ip.into(),
        states: states.to_vec(),
        carries: Vec::new(),
    };
    assert_eq!(
        repair.adjacents,
        vec![
            adjacent(3, "10.0.0.2", &[TaskState::Failed]),
            adjacent(4, "10.0.0.2", &[TaskState::Running]),
            adjacent(5, "10.0.0.1", &[TaskState::Succeeded]),
        ]
    );
    assert!(repair.response_immediate);
    // Activity 1 is waited for by preconditions only: no states.
    let inspect = &derived[0].document.activities[0];
    assert_eq!(
        inspect.adjacents,
        vec![adjacent(2, "10.0.0.1", &[]), adjacent(5, "10.0.0.1", &[])]
    );
    assert!(!inspect.response_immediate);
    assert_read_back(&derived);
}

#[test]
fn the_partition_example_with_rules_is_valid() {
    let doc = load_partition(&valid_example("rules.partition.xml"))
        .unwrap_or_else(|d| panic!("{}", d.render("rules.partition.xml")))
        .value;
    let states: Vec<Vec<TaskState>> = doc.activities[0]
        .adjacents
        .iter()
        .map(|a| a.states.clone())
        .collect();
    assert_eq!(
        states,
        vec![
            vec![TaskState::Failed],
            vec![TaskState::Running],
            vec![TaskState::Running, TaskState::Succeeded],
            vec![],
        ]
    );
    assert!(matches!(doc.activities[1].depends, Some(Rule::And(ref rules)) if rules.len() == 2));
}
