//! Activity kinds and routing in both languages: `<kind>dummy</kind>`, `<merge>` (and, or
//! with a flag, vote with votes), `<routes>` of `<route flag><to>`, `<completion>` and the task
//! state SKIPPED: reading them, where their parts are, every refusal with its rendered
//! `file:line:col` diagnostic, writing them back, and the valid examples. The broken-document
//! corpus pins the wording of whole documents; derivation is unit-tested in
//! `src/derive/tests.rs`.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::extension::assert_read_back;
use common::valid_example;
use mobiwf_xml_schema::{
    ActivityId, ActivityKind, DeriveOptions, Diagnostics, Merge, Node, PartitionDocument, Pos,
    Route, Rule, SourceMap, TaskState, WorkflowDefinition, derive_partitions, load_definition,
    load_partition, route_for, validate_definition, validate_partition, write_definition,
    write_partition,
};

/// A diamond: 2 and 3 wait for 1, 4 waits for 2 and 3. Each activity is on one line (line 3
/// for activity 1 to line 6 for activity 4) and ends with its `extras` entry.
fn definition_xml(extras: [&str; 4]) -> String {
    let [x1, x2, x3, x4] = extras;
    let ty = "<activityTypeId>1</activityTypeId>";
    let pre = |ids: &[u64]| {
        let ids: String = ids
            .iter()
            .map(|id| format!("<preconditionId>{id}</preconditionId>"))
            .collect();
        format!("<preconditions>{ids}</preconditions>")
    };
    format!(
        "<workflow id=\"1\">\n<activities>\n\
         <activity id=\"1\">{ty}{x1}</activity>\n\
         <activity id=\"2\">{ty}{}{x2}</activity>\n\
         <activity id=\"3\">{ty}{}{x3}</activity>\n\
         <activity id=\"4\">{ty}{}{x4}</activity>\n\
         </activities>\n<activityTypes><activityType id=\"1\"/></activityTypes>\n</workflow>",
        pre(&[1]),
        pre(&[1]),
        pre(&[2, 3]),
    )
}

/// Activity 1 of a partition document (line 3), whose adjacents are 2 and 3, and activity 4
/// (line 4), which waits for 2 and 3 in other partitions.
fn partition_xml(x1: &str, x4: &str) -> String {
    let remote =
        |id| format!("<precondition id=\"{id}\"><status>0</status><local>0</local></precondition>");
    format!(
        "<workflow id=\"1\">\n<activities>\n\
         <activity id=\"1\"><adjacents><adjacent id=\"2\"><ip>a</ip></adjacent><adjacent \
         id=\"3\"><ip>b</ip></adjacent></adjacents>{x1}</activity>\n\
         <activity id=\"4\"><preconditions>{}{}</preconditions>{x4}</activity>\n\
         </activities>\n</workflow>",
        remote(2),
        remote(3)
    )
}

fn definition(extras: [&str; 4]) -> Result<WorkflowDefinition, Diagnostics> {
    load_definition(definition_xml(extras).as_bytes()).map(|l| l.value)
}

fn partition(x1: &str, x4: &str) -> Result<PartitionDocument, Diagnostics> {
    load_partition(partition_xml(x1, x4).as_bytes()).map(|l| l.value)
}

fn definition_errors(extras: [&str; 4]) -> String {
    definition(extras).unwrap_err().render("d.xml")
}

fn partition_errors(x1: &str, x4: &str) -> String {
    partition(x1, x4).unwrap_err().render("p.xml")
}

/// `extra` in activity 1 of the diamond.
fn first(extra: &str) -> [&str; 4] {
    [extra, "", "", ""]
}

/// `extra` in activity 4 of the diamond.
fn last(extra: &str) -> [&str; 4] {
    ["", "", "", extra]
}

fn route(flag: Option<&str>, to: &[u64]) -> Route {
    Route {
        flag: flag.map(str::to_owned),
        to: to.iter().copied().map(ActivityId).collect(),
    }
}

const ROUTES: &str = "<routes><route flag=\"approved\"><to>2</to></route><route><to>3</to>\
                      </route></routes>";

#[test]
fn without_the_extensions_everything_keeps_its_default() {
    let def = definition(["", "", "", ""]).unwrap();
    for a in &def.activities {
        assert_eq!(
            (&a.merge, a.routes.len(), a.completion),
            (&Merge::All, 0, false)
        );
    }
    let written = write_definition(&def);
    for element in ["merge", "routes", "completion", "dummy"] {
        assert!(!written.contains(element), "{written}");
    }
    let doc = partition("", "").unwrap();
    assert_eq!(doc.activities[1].merge, Merge::All);
    assert!(!write_partition(&doc).contains("merge"));
}

#[test]
fn merges_are_read_in_both_languages() {
    let merge_of = |extra: &str| definition(last(extra)).unwrap().activities[3].merge.clone();
    assert_eq!(merge_of("<merge> and </merge>"), Merge::All);
    assert_eq!(merge_of("<merge>or</merge>"), Merge::First { flag: None });
    assert_eq!(
        merge_of("<merge flag=\"approved\">or</merge>"),
        Merge::First {
            flag: Some("approved".into())
        }
    );
    assert_eq!(
        merge_of("<merge votes=\"2\">vote</merge>"),
        Merge::Vote { votes: 2 }
    );
    let doc = partition("", "<merge votes=\"1\">vote</merge>").unwrap();
    assert_eq!(doc.activities[1].merge, Merge::Vote { votes: 1 });
}

#[test]
fn routes_are_read_in_both_languages_with_their_positions() {
    let loaded = load_definition(definition_xml(first(ROUTES)).as_bytes()).unwrap();
    let expected = vec![route(Some("approved"), &[2]), route(None, &[3])];
    assert_eq!(loaded.value.activities[0].routes, expected);
    let map = &loaded.source_map;
    let at = |line, column| Pos { line, column };
    assert_eq!(map.pos(Node::ActivityField(0, "routes")), at(3, 52));
    assert_eq!(map.pos(Node::Route(0, 0)), at(3, 60));
    assert_eq!(map.pos(Node::RouteFlag(0, 0)), at(3, 67));
    assert_eq!(map.pos(Node::RouteTo(0, 0, 0)), at(3, 87));
    assert_eq!(map.pos(Node::Route(0, 1)), at(3, 101));
    assert_eq!(map.pos(Node::RouteFlag(0, 1)), Pos::UNKNOWN);
    assert_eq!(map.pos(Node::RouteTo(0, 1, 0)), at(3, 112));

    let doc = partition(ROUTES, "").unwrap();
    assert_eq!(doc.activities[0].routes, expected);
    let taken = |flag| route_for(&doc.activities[0].routes, flag).map(|r| r.to.clone());
    assert_eq!(taken(Some("approved")), Some(vec![ActivityId(2)]));
    assert_eq!(taken(Some("rejected")), Some(vec![ActivityId(3)]));
    assert_eq!(taken(None), Some(vec![ActivityId(3)]));
}

#[test]
fn completion_dummy_and_skipped_are_read() {
    let def = definition([
        "<routes><route><to>2</to><to>3</to></route></routes>",
        "<completion>true</completion>",
        "<completion> false </completion>",
        "<kind>dummy</kind><depends><term activity=\"1\" state=\"skipped\"/></depends>",
    ])
    .unwrap();
    assert!(def.activities[1].completion);
    assert!(!def.activities[2].completion);
    assert_eq!(def.activities[3].kind, ActivityKind::Dummy);
    assert_eq!(
        def.activities[3].depends,
        Some(Rule::Term {
            activity: ActivityId(1),
            state: TaskState::Skipped
        })
    );
    let doc = partition(
        "<kind>dummy</kind><completion>true</completion>",
        "<merge>or</merge>",
    )
    .unwrap();
    assert!(doc.activities[0].completion);
    assert_eq!(doc.activities[0].kind, ActivityKind::Dummy);
    let states = load_partition(
        partition_xml("", "")
            .replace("<ip>a</ip>", "<ip>a</ip><states>skipped FAILED</states>")
            .as_bytes(),
    )
    .unwrap()
    .value;
    assert_eq!(
        states.activities[0].adjacents[0].states,
        vec![TaskState::Failed, TaskState::Skipped]
    );
}

#[test]
fn routing_is_written_after_depends_in_the_order_merge_routes_completion() {
    let def = definition([
        ROUTES,
        "",
        "",
        "<kind>dummy</kind><completion>true</completion><merge flag=\"ok\">or</merge>\
         <depends><term activity=\"1\" state=\"SKIPPED\"/></depends>",
    ])
    .unwrap();
    let written = write_definition(&def);
    let expected = "      <preconditions>
        <preconditionId>2</preconditionId>
        <preconditionId>3</preconditionId>
      </preconditions>
      <depends>
        <term activity=\"1\" state=\"SKIPPED\"/>
      </depends>
      <merge flag=\"ok\">or</merge>
      <completion>true</completion>
      <kind>dummy</kind>
    </activity>";
    assert!(written.contains(expected), "{written}");
    let routes = "      <preconditions/>
      <routes>
        <route flag=\"approved\"><to>2</to></route>
        <route><to>3</to></route>
      </routes>
    </activity>";
    assert!(written.contains(routes), "{written}");
    assert_eq!(load_definition(written.as_bytes()).unwrap().value, def);

    let doc = partition(ROUTES, "<merge votes=\"2\">vote</merge>").unwrap();
    let written = write_partition(&doc);
    assert!(
        written.contains("      </routes>\n      <adjacents>\n"),
        "{written}"
    );
    assert!(
        written.contains("      </preconditions>\n      <merge votes=\"2\">vote</merge>\n"),
        "{written}"
    );
    assert_eq!(load_partition(written.as_bytes()).unwrap().value, doc);
}

#[test]
fn a_dummy_has_no_command_retries_or_people() {
    assert_eq!(
        definition_errors(first(
            "<kind>dummy</kind><command>true</command><retries><count>1</count></retries>"
        )),
        "d.xml:3:79: error: activity 1 is a dummy and has a <command>: a dummy activity passes \
         at once and runs nothing; remove <command>, or make the activity \
         <kind>automatic</kind>\n\
         d.xml:3:93: error: activity 1 is a dummy and has <retries>: a dummy activity passes at \
         once and never fails; remove <retries>, or make the activity <kind>automatic</kind>\n"
    );
    assert_eq!(
        partition_errors("<kind>dummy</kind><role>tech</role>", ""),
        "p.xml:3:141: error: activity 1 is a dummy and has <role>: a dummy activity passes at \
         once and is offered to nobody; remove it, or make the activity <kind>manual</kind> or \
         <kind>semiAutomatic</kind>\n"
    );
}

#[test]
fn a_merge_is_refused_where_it_joins_nothing_or_asks_too_much() {
    assert_eq!(
        definition_errors(["", "<merge>or</merge>", "", ""]),
        "d.xml:4:124: error: activity 2 has <merge>or</merge>, but a merge joins several \
         branches; activity 2 has 1 precondition: add the preconditions it joins, or remove \
         <merge>\n"
    );
    assert_eq!(
        definition_errors(last("<merge votes=\"3\">vote</merge>")),
        "d.xml:6:158: error: activity 4 has <merge votes=\"3\">vote</merge> but only 2 \
         preconditions, so it could never start; votes is at most the number of \
         preconditions: lower votes to 2 or less, or add preconditions\n"
    );
    assert!(
        partition_errors("<merge votes=\"2\">vote</merge>", "")
            .contains("activity 1 has no precondition: add the preconditions it joins")
    );
    assert!(
        partition_errors("", "<merge votes=\"0\">vote</merge>")
            .contains("votes is how many preconditions must succeed, at least 1")
    );
}

#[test]
fn a_merge_that_cannot_be_read_says_how_to_write_it() {
    let errors = |extra| definition_errors(last(extra));
    assert!(errors("<merge>vote</merge>").contains(
        "<merge> of activity 4 is vote without votes; add how many preconditions must succeed, \
         e.g. <merge votes=\"2\">vote</merge>"
    ));
    assert!(errors("<merge votes=\"two\">vote</merge>").contains(
        "<merge> of activity 4 has votes=\"two\"; votes is how many preconditions must succeed"
    ));
    assert!(
        errors("<merge flag=\"x\">and</merge>")
            .contains("<merge> of activity 4 has flag=\"x\" with and; a flag belongs to or")
    );
    assert!(
        errors("<merge votes=\"2\">or</merge>")
            .contains("<merge> of activity 4 has votes=\"2\" with or; votes belongs to vote")
    );
    assert!(errors("<merge>any</merge>").contains(
        "<merge> of activity 4 is \"any\"; expected and (the default: every precondition \
         finished), or (the first to finish) or vote (with votes=\"N\": N of them succeeded)"
    ));
    assert!(
        errors("<merge flags=\"x\">or</merge>")
            .contains("<merge> of activity 4 has an unknown attribute flags; did you mean flag?")
    );
    assert!(errors("<merge><or/></merge>").contains("<merge> must contain only text, not <or>"));
}

#[test]
fn a_route_leads_to_successors_and_every_successor_is_in_a_route() {
    assert_eq!(
        definition_errors(first(
            "<routes><route flag=\"ok\"><to>2</to><to>4</to></route></routes>"
        )),
        "d.xml:3:52: error: successor 3 of activity 1 is in no route, so it would always be \
         skipped: add it to a route\n\
         d.xml:3:91: error: activity 1 routes to 4, which does not have 1 among its \
         preconditions; add 1 to 4's preconditions or route elsewhere\n"
    );
    assert!(
        definition_errors(last("<routes><route><to>9</to></route></routes>")).contains(
            "activity 4 routes to 9, which is not an activity of this workflow; fix the id, or \
             remove the route: activity 4 has no successor (no activity lists it in its \
             preconditions)"
        )
    );
    assert_eq!(
        partition_errors("", "<routes><route><to>2</to></route></routes>"),
        "p.xml:4:208: error: activity 4 routes to 2, which is not one of its adjacents (it has \
         none); route to an adjacent, or add <adjacent id=\"2\">\n"
    );
    // A partition document may leave an adjacent out of its routes: the definition says
    // whether it is a successor by precondition or only by a rule.
    assert!(partition("<routes><route><to>2</to></route></routes>", "").is_ok());
}

#[test]
fn routes_have_distinct_flags_one_default_and_no_empty_route() {
    let routes = "<routes><route flag=\"ok\"><to>2</to></route><route flag=\"ok\"><to>3</to>\
                  </route><route><to>2</to><to>2</to></route><route/><route flag=\"a b\">\
                  <to>3</to></route></routes>";
    assert_eq!(
        definition_errors(first(routes)),
        "d.xml:3:102: error: activity 1 has two routes with flag=\"ok\" (the first at 3:67); a \
         flag picks one route: put their <to>s in one route, or change one of the flags\n\
         d.xml:3:151: error: <route> of activity 1 lists 2 twice; remove one\n\
         d.xml:3:165: error: activity 1 has a second <route> without flag (the first at 3:130); \
         one route is taken when no flag matches: put their <to>s in one route, or give this \
         one a flag\n\
         d.xml:3:165: error: <route> of activity 1 has no <to>, so it leads nowhere; add \
         <to>ID</to> for each successor it leads to, or remove the route\n\
         d.xml:3:180: error: <route> of activity 1 has flag=\"a b\", which holds ' ', not a \
         flag character; a flag is 1 to 64 of the characters A-Z, a-z, 0-9, _, . and -, e.g. \
         flag=\"approved\"\n"
    );
    let errors = partition_errors(routes, "");
    assert_eq!(errors.lines().count(), 5, "{errors}");
}

#[test]
fn routes_that_cannot_be_read_say_how_to_write_them() {
    let errors = |extra| definition_errors(first(extra));
    assert!(errors("<routes/>").contains(
        "<routes> of activity 1 holds no <route>; add a route such as <route \
         flag=\"approved\"><to>6</to></route>, or remove <routes>"
    ));
    assert!(
        errors("<routes><route flg=\"ok\"><to>2</to><to>3</to></route></routes>").contains(
            "<route> of activity 1 has an unknown attribute flg; did you mean flag? its only \
             attribute is flag"
        )
    );
    assert!(
        errors("<routes><route flag=\"x\"><to>two</to><to>3</to></route></routes>")
            .contains("<to> of <route flag=\"x\"> of activity 1 is \"two\", not a whole number")
    );
    assert!(
        errors("<routes><route><too>2</too></route></routes>")
            .contains("<too> is not an element of <route> of activity 1; did you mean <to>?")
    );
    assert!(errors("<completion>yes</completion>").contains(
        "<completion> of activity 1 is \"yes\"; expected true (when it succeeds the instance \
         ends, and every activity not yet finished is cancelled) or false (the default)"
    ));
    assert!(
        errors("<kind>dumy</kind>")
            .contains("expected automatic, semiAutomatic, manual or dummy; did you mean dummy?")
    );
}

#[test]
fn models_built_in_code_are_checked_too() {
    let mut def = definition(["", "", "", ""]).unwrap();
    def.activities[0].routes = vec![route(Some(""), &[2, 3]), route(None, &[])];
    def.activities[1].merge = Merge::Vote { votes: 1 };
    def.activities[3].merge = Merge::First {
        flag: Some("x".repeat(65)),
    };
    def.activities[3].kind = ActivityKind::Dummy;
    def.activities[3].command = Some("true".into());
    let problems = validate_definition(&def, &SourceMap::default());
    let messages: Vec<&str> = problems.iter().map(|d| d.message.as_str()).collect();
    assert_eq!(messages.len(), 5, "{messages:#?}");
    assert!(messages[0].contains("has an empty flag"));
    assert!(messages[1].contains("has no <to>"));
    assert!(messages[2].contains("activity 2 has 1 precondition"));
    assert!(messages[3].contains("is a dummy and has a <command>"));
    assert!(messages[4].contains("(MAX_FLAG_CHARS)"));
    assert!(problems.iter().all(|d| !d.pos.is_known()));

    let mut doc = partition("", "").unwrap();
    doc.activities[0].routes = vec![route(None, &[2]), route(None, &[7])];
    let problems = validate_partition(&doc, &SourceMap::default());
    assert_eq!(problems.len(), 2, "{problems:?}");
    assert!(
        problems[0]
            .message
            .contains("a second <route> without flag;")
    );
    assert!(problems[1].message.contains("routes to 7"));
}

#[test]
fn the_approval_example_is_valid_and_derives_its_routes() {
    let def = load_definition(&valid_example("routing.workflow.xml"))
        .unwrap_or_else(|d| panic!("{}", d.render("routing.workflow.xml")))
        .value;
    let a = |id: u64| def.activity(ActivityId(id)).unwrap();
    assert_eq!(a(1).kind, ActivityKind::Manual);
    assert_eq!(
        a(1).routes,
        vec![route(Some("approved"), &[2]), route(Some("rejected"), &[3])]
    );
    assert_eq!(a(4).merge, Merge::First { flag: None });
    assert_eq!(a(8).merge, Merge::Vote { votes: 2 });
    assert_eq!(a(9).kind, ActivityKind::Dummy);
    assert!(a(10).completion);
    assert!(def.activities.iter().filter(|x| x.completion).count() == 1);
    let written = write_definition(&def);
    assert_eq!(load_definition(written.as_bytes()).unwrap().value, def);
    assert_read_back(&derive_partitions(&def, &DeriveOptions::default()));
}

#[test]
fn the_partition_example_with_routing_is_valid() {
    let doc = load_partition(&valid_example("routing.partition.xml"))
        .unwrap_or_else(|d| panic!("{}", d.render("routing.partition.xml")))
        .value;
    assert_eq!(doc.activities[0].routes.len(), 3);
    assert_eq!(
        doc.activities[0].adjacents[2].states,
        vec![TaskState::Succeeded, TaskState::Skipped]
    );
    assert_eq!(
        doc.activities[2].merge,
        Merge::First {
            flag: Some("approved".into())
        }
    );
    assert!(doc.activities[3].completion);
}
