//! The people extensions of an activity (`<role>`, `<department>`, `<team>`, `<assignment>`,
//! `<policy>`, `<priority>`, `<disconnected>`) in both languages: their defaults, reading the
//! full form, writing it back, carrying it into derived partitions, and every refusal with
//! its rendered `file:line:col` diagnostic.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::extension::{definition, definition_errors, partition, partition_errors};
use mobiwf_xml_schema::{
    ActivityId, ActivityKind, Basis, DepartmentId, DeriveOptions, Method, People, Policy, RoleId,
    SourceMap, TeamId, derive_partitions, load_definition, load_partition, validate_definition,
    validate_partition, write_definition, write_partition,
};

/// Every people element, with values other than the defaults, spread over lines 4 to 7 of a
/// partition document (line 5 to 8 of a definition), in an order other than the written one.
const FULL: &str = "<kind>manual</kind><priority> -7 </priority>\n\
                    <disconnected>true</disconnected><team> north </team>\n\
                    <assignment method=\"least-working\" basis=\"team\"/><role>tech</role>\n\
                    <department>field</department><policy>all</policy><deadline> 72 </deadline>";

fn full() -> People {
    People {
        role: Some(RoleId::new("tech")),
        department: Some(DepartmentId::new("field")),
        team: Some(TeamId::new("north")),
        basis: Basis::Team,
        method: Method::LeastWorking,
        policy: Policy::All,
        priority: -7,
        disconnected: true,
        deadline: Some(72),
        pause_stops_deadline: false,
    }
}

fn role(id: &str) -> People {
    People {
        role: Some(RoleId::new(id)),
        ..People::default()
    }
}

#[test]
fn absent_people_extensions_mean_none_in_both_languages() {
    let def = definition("<kind>manual</kind>").unwrap();
    assert_eq!(def.activities[1].people, People::default());
    assert!(def.activities[1].people.is_default());
    assert!(!def.activities[1].people.assigned());
    let doc = partition("<kind>semiAutomatic</kind>").unwrap();
    assert_eq!(doc.activities[0].people, People::default());
}

#[test]
fn a_role_alone_means_basis_role_fcfa_policy_all_priority_0_connected() {
    let people = definition("<kind>manual</kind><role>tech</role>")
        .unwrap()
        .activities[1]
        .people
        .clone();
    assert_eq!(people, role("tech"));
    assert_eq!(people.basis, Basis::Role);
    assert_eq!(people.method, Method::Fcfa);
    assert_eq!(people.policy, Policy::All);
    assert_eq!(people.priority, 0);
    assert!(!people.disconnected);
    assert!(people.assigned());
}

#[test]
fn the_full_form_is_read_in_both_languages() {
    assert_eq!(definition(FULL).unwrap().activities[1].people, full());
    assert_eq!(partition(FULL).unwrap().activities[0].people, full());
}

#[test]
fn each_method_and_policy_spelling_is_read() {
    let methods = [
        ("fcfa", Method::Fcfa),
        ("all", Method::All),
        ("least-working", Method::LeastWorking),
        ("priority", Method::Priority),
        ("round-robin", Method::RoundRobin),
    ];
    for (text, method) in methods {
        let extra = format!("<kind>manual</kind><role>r</role><assignment method=\" {text} \"/>");
        assert_eq!(
            partition(&extra).unwrap().activities[0].people.method,
            method
        );
    }
    let policies = [
        ("all", Policy::All),
        ("fewest-assigned 1", Policy::FewestAssigned(1)),
        (" fewest-selected\n 2 ", Policy::FewestSelected(2)),
        ("most-frequent 3", Policy::MostFrequent(3)),
        ("most-recent 4294967295", Policy::MostRecent(u32::MAX)),
    ];
    for (text, policy) in policies {
        let extra = format!("<kind>manual</kind><role>r</role><policy>{text}</policy>");
        assert_eq!(
            definition(&extra).unwrap().activities[1].people.policy,
            policy
        );
    }
    let department = "<kind>manual</kind><department>ops</department>\
                      <assignment basis=\"department\" method=\"all\"/>";
    let people = &definition(department).unwrap().activities[1].people;
    assert_eq!(
        (people.basis, people.method),
        (Basis::Department, Method::All)
    );
}

#[test]
fn elements_stating_the_default_do_no_harm_anywhere() {
    let defaults = "<assignment basis=\"role\" method=\"fcfa\"/><policy>all</policy>\
                    <priority>0</priority><disconnected>false</disconnected>";
    // Not even on an automatic activity, and without anyone named: they say nothing.
    assert_eq!(
        definition(defaults).unwrap().activities[1].people,
        People::default()
    );
    assert_eq!(
        partition(&defaults.replace(
            "<assignment basis=\"role\" method=\"fcfa\"/>",
            "<assignment/>"
        ))
        .unwrap()
        .activities[0]
            .people,
        People::default()
    );
}

#[test]
fn the_people_extensions_are_written_only_when_there_are_some() {
    let plain = definition("<kind>manual</kind>").unwrap();
    let written = write_definition(&plain);
    for name in [
        "<role>",
        "<department>",
        "<team>",
        "<assignment",
        "<policy>",
        "<priority>",
        "<disconnected>",
        "<deadline>",
    ] {
        assert!(!written.contains(name), "{name} in {written}");
    }

    let def = definition(FULL).unwrap();
    let written = write_definition(&def);
    assert!(
        written.contains(
            "      <kind>manual</kind>\n      <role>tech</role>\n      \
             <department>field</department>\n      <team>north</team>\n      \
             <assignment basis=\"team\" method=\"least-working\"/>\n      \
             <priority>-7</priority>\n      <disconnected>true</disconnected>\n      \
             <deadline>72</deadline>\n    </activity>"
        ),
        "{written}"
    );
    assert_eq!(load_definition(written.as_bytes()).unwrap().value, def);

    let doc =
        partition("<kind>semiAutomatic</kind><role>a &amp; b</role><policy>most-recent 2</policy>")
            .unwrap();
    let written = write_partition(&doc);
    assert!(
        written.contains("<role>a &amp; b</role>\n      <policy>most-recent 2</policy>\n"),
        "{written}"
    );
    assert!(!written.contains("<assignment"), "{written}");
    assert_eq!(load_partition(written.as_bytes()).unwrap().value, doc);
}

#[test]
fn derivation_carries_the_people_extensions_into_the_partition_document() {
    let def = definition(FULL).unwrap();
    let derived = derive_partitions(&def, &DeriveOptions::default());
    assert_eq!(derived.len(), 1);
    let activities = &derived[0].document.activities;
    let by_id = |id| activities.iter().find(|a| a.id == ActivityId(id)).unwrap();
    assert_eq!(by_id(1).people, People::default());
    assert_eq!(by_id(2).people, full());
    assert_eq!(by_id(2).kind, ActivityKind::Manual);
    // And the partner reads them back, valid, from the document it receives.
    let text = write_partition(&derived[0].document);
    assert!(text.contains("<role>tech</role>"), "{text}");
    let received = load_partition(text.as_bytes()).unwrap().value;
    assert_eq!(received, derived[0].document);
}

#[test]
fn people_extensions_only_on_manual_or_semi_automatic_activities() {
    assert_eq!(
        definition_errors("<priority>3</priority>\n<role>tech</role>"),
        "d.xml:5:11: error: activity 2 has <role> and <priority> but is automatic: only manual \
         and semiAutomatic activities are offered to people; remove them, or make the activity \
         <kind>manual</kind> or <kind>semiAutomatic</kind>\n"
    );
    assert_eq!(
        partition_errors("<kind>automatic</kind> <team>north</team><assignment basis=\"team\"/>"),
        "p.xml:4:30: error: activity 2 has <team> and <assignment> but is automatic: only \
         manual and semiAutomatic activities are offered to people; remove them, or make the \
         activity <kind>manual</kind> or <kind>semiAutomatic</kind>\n"
    );
    assert!(partition("<kind>semiAutomatic</kind><role>tech</role>").is_ok());
}

#[test]
fn nobody_named_is_refused() {
    assert_eq!(
        definition_errors(
            "<kind>manual</kind>\n<disconnected>true</disconnected><priority>2</priority>"
        ),
        "d.xml:6:15: error: activity 2 has <priority> and <disconnected> but no <role>, \
         <department> or <team>, so nobody would be offered the item; add <role> naming who \
         does it, or remove <priority> and <disconnected>\n"
    );
    assert_eq!(
        partition_errors("<kind>manual</kind><assignment basis=\"team\"/>"),
        "p.xml:4:20: error: activity 2 has <assignment> but no <role>, <department> or <team>, \
         so nobody would be offered the item; add <team> naming who does it, or remove \
         <assignment>\n"
    );
    assert!(
        definition_errors("<kind>manual</kind><policy>most-recent 1</policy>")
            .starts_with("d.xml:5:28: error: activity 2 has <policy> but no <role>")
    );
}

#[test]
fn the_basis_needs_its_group() {
    assert_eq!(
        definition_errors(
            "<kind>manual</kind><role>tech</role>\n<assignment basis=\"department\"/>"
        ),
        "d.xml:6:1: error: activity 2 has assignment basis department but no <department>, so \
         nobody would be offered the item; add <department> naming the department whose \
         members do it, or change the basis\n"
    );
    assert_eq!(
        partition_errors(
            "<kind>manual</kind><department>ops</department><assignment basis=\"team\" method=\"all\"/>"
        ),
        "p.xml:4:48: error: activity 2 has assignment basis team but no <team>, so nobody would \
         be offered the item; add <team> naming the team whose members do it, or change the \
         basis\n"
    );
    // Basis role is the default: a department alone is not enough.
    assert_eq!(
        partition_errors("<kind>manual</kind>\n<department>ops</department>"),
        "p.xml:5:13: error: activity 2 has <department> but no <role>, and its assignment basis \
         is role (the default), so nobody would be offered the item; add <assignment \
         basis=\"department\"/> to offer it to the members of the department, or add <role>\n"
    );
    assert!(
        definition_errors("<kind>manual</kind><team>t</team><assignment method=\"all\"/>")
            .starts_with("d.xml:5:34: error: activity 2 has <team> but no <role>, and its")
    );
    // With the group there, a role filters it.
    assert!(
        definition("<kind>manual</kind><team>t</team><role>r</role><assignment basis=\"team\"/>")
            .is_ok()
    );
}

#[test]
fn priority_and_round_robin_need_basis_role() {
    assert_eq!(
        definition_errors(
            "<kind>manual</kind><team>t</team>\n<assignment basis=\"team\" method=\"round-robin\"/>"
        ),
        "d.xml:6:1: error: activity 2 has method round-robin with basis team: round-robin \
         chooses among the members of a role in turn, so it needs basis role; use \
         basis=\"role\" with a <role>, or method fcfa, all or least-working\n"
    );
    assert!(
        partition_errors(
            "<kind>manual</kind><department>d</department><assignment basis=\"department\" method=\"priority\"/>"
        )
        .contains("p.xml:4:46: error: activity 2 has method priority with basis department: priority chooses among the members of a role by their priority in the role")
    );
    assert!(
        partition("<kind>manual</kind><role>r</role><assignment method=\"round-robin\"/>").is_ok()
    );
}

#[test]
fn a_policy_other_than_all_needs_method_fcfa() {
    assert_eq!(
        partition_errors(
            "<kind>manual</kind><role>r</role><assignment method=\"all\"/>\n<policy>fewest-selected 2</policy>"
        ),
        "p.xml:5:9: error: activity 2 has <policy>fewest-selected 2</policy> with method all: a \
         policy says to whom an fcfa item is offered, and method all does not offer it that \
         way; remove <policy>, or use method=\"fcfa\"\n"
    );
    assert!(
        definition(
            "<kind>manual</kind><role>r</role><assignment method=\"all\"/><policy>all</policy>"
        )
        .is_ok()
    );
}

#[test]
fn bad_spellings_list_the_accepted_ones() {
    assert_eq!(
        definition_errors(
            "<kind>manual</kind><role>r</role>\n<assignment basis=\"rol\" method=\"fifo\"/>"
        ),
        "d.xml:6:1: error: <assignment> of activity 2 has basis=\"rol\"; expected role, \
         department or team; did you mean role?\n\
         d.xml:6:1: error: <assignment> of activity 2 has method=\"fifo\"; expected fcfa, all, \
         least-working, priority or round-robin\n"
    );
    assert_eq!(
        partition_errors(
            "<kind>manual</kind><role>r</role><assignment basis=\"role\" metod=\"all\"/>"
        ),
        "p.xml:4:34: error: <assignment> of activity 2 has an unknown attribute metod; did you \
         mean method? its attributes are basis and method, e.g. <assignment basis=\"role\" \
         method=\"fcfa\"/>\n"
    );
    assert_eq!(
        partition_errors("<kind>manual</kind><role>r</role><assignment>fcfa</assignment>"),
        "p.xml:4:46: error: <assignment> of activity 2 holds the text \"fcfa\"; <assignment> is \
         empty and says everything in its attributes basis and method, e.g. <assignment \
         basis=\"role\" method=\"fcfa\"/>\n"
    );
    assert_eq!(
        definition_errors("<kind>manual</kind><role>r</role><policy>fewest-asigned 2</policy>"),
        "d.xml:5:42: error: <policy> of activity 2 is \"fewest-asigned 2\"; expected all, \
         fewest-assigned N, fewest-selected N, most-frequent N or most-recent N, where N is \
         how many candidates the item is offered to (a whole number, 1 or more); did you mean \
         fewest-assigned?\n"
    );
    assert!(
        partition_errors("<kind>manual</kind><role>r</role><assignment><x/></assignment>")
            .contains("p.xml:4:46: error: <assignment> of activity 2 holds <x>;")
    );
}

#[test]
fn bad_policy_numbers_say_what_n_is() {
    let cases = [
        (
            "most-recent",
            "p.xml:4:42: error: <policy> of activity 2 is \"most-recent\" without a number; add \
             how many candidates the item is offered to, e.g. <policy>most-recent 2</policy>\n",
        ),
        (
            "most-recent 0",
            "p.xml:4:42: error: <policy> of activity 2 is \"most-recent 0\"; the number after \
             most-recent is how many candidates the item is offered to, a whole number from 1 \
             to 4294967295, e.g. <policy>most-recent 2</policy>\n",
        ),
        (
            "all 2",
            "p.xml:4:42: error: <policy> of activity 2 is \"all 2\"; policy all offers the item \
             to every candidate and takes no number, so write <policy>all</policy>\n",
        ),
        (
            "most-frequent 2 3",
            "p.xml:4:42: error: <policy> of activity 2 is \"most-frequent 2 3\"; write the policy \
             name and one number, e.g. <policy>most-frequent 2</policy>\n",
        ),
    ];
    for (policy, expected) in cases {
        let extra = format!("<kind>manual</kind><role>r</role><policy>{policy}</policy>");
        assert_eq!(partition_errors(&extra), expected, "{policy}");
    }
    assert!(
        partition_errors(
            "<kind>manual</kind><role>r</role><policy>most-recent 4294967296</policy>"
        )
        .contains("a whole number from 1 to 4294967295")
    );
    assert!(
        partition_errors("<kind>manual</kind><role>r</role><policy> </policy>")
            .contains("<policy> of activity 2 is empty; expected all, fewest-assigned N")
    );
}

#[test]
fn bad_numbers_booleans_and_empty_ids_are_reported_where_they_are() {
    assert_eq!(
        definition_errors("<kind>manual</kind><role>r</role><priority>high</priority>"),
        "d.xml:5:44: error: <priority> of activity 2 is \"high\", not a whole number; expected a \
         whole number from -9223372036854775808 to 9223372036854775807 (worklists show higher \
         priorities first; default 0)\n"
    );
    assert_eq!(
        partition_errors(
            "<kind>manual</kind><role>r</role><priority>9223372036854775808</priority>"
        ),
        "p.xml:4:44: error: <priority> of activity 2 is 9223372036854775808; expected a whole \
         number from -9223372036854775808 to 9223372036854775807 (worklists show higher \
         priorities first; default 0)\n"
    );
    assert_eq!(
        partition_errors("<kind>manual</kind><role>r</role><disconnected>yes</disconnected>"),
        "p.xml:4:48: error: <disconnected> of activity 2 is \"yes\"; expected true (a person may \
         lock the item and work on it without the network) or false (the default)\n"
    );
    assert!(
        definition_errors("<kind>manual</kind><role>r</role><disconnected/>")
            .contains("<disconnected> of activity 2 is empty; expected true")
    );
    assert_eq!(
        definition_errors("<kind>manual</kind><role> </role>"),
        "d.xml:5:20: error: <role> of activity 2 is empty; write the id of a role of the \
         organisation document, e.g. <role>tech</role>, or remove <role>\n"
    );
    assert!(
        partition_errors("<kind>manual</kind><role>r</role><team/>").contains(
            "p.xml:4:34: error: <team> of activity 2 is empty; write the id of a team of the \
             organisation document, e.g. <team>north</team>, or remove <team>"
        )
    );
    assert!(
        partition_errors("<kind>manual</kind><role>r<x/></role>")
            .contains("p.xml:4:27: error: <role> must contain only text, not <x>")
    );
}

#[test]
fn repeated_and_misspelt_elements_are_reported() {
    assert!(
        definition_errors("<kind>manual</kind><role>a</role><role>b</role>")
            .contains("d.xml:5:34: error: <activity> (activity 2) has a second <role>")
    );
    assert_eq!(
        partition_errors("<kind>manual</kind><role>r</role><priorty>1</priorty>"),
        "p.xml:4:34: error: <priorty> is not an element of <activity> (activity 2); did you \
         mean <priority>?\n"
    );
}

#[test]
fn all_problems_are_reported_at_once() {
    let errors = partition_errors(
        "<priority>x</priority>\n<assignment basis=\"team\" method=\"priority\"/>\n\
         <policy>most-recent 1</policy><disconnected>true</disconnected>",
    );
    let lines: Vec<&str> = errors.lines().collect();
    assert_eq!(lines.len(), 5, "{errors}");
    assert!(lines[0].starts_with("p.xml:4:11: error: <priority> of activity 2 is \"x\""));
    assert!(lines[1].starts_with("p.xml:5:1: error: activity 2 has <assignment>, <policy> and <disconnected> but is automatic"));
    assert!(lines[2].starts_with("p.xml:5:1: error: activity 2 has <assignment>, <policy> and <disconnected> but no <role>, <department> or <team>"));
    assert!(
        lines[3].starts_with("p.xml:5:1: error: activity 2 has method priority with basis team")
    );
    assert!(lines[4].starts_with(
        "p.xml:6:9: error: activity 2 has <policy>most-recent 1</policy> with method priority"
    ));
}

#[test]
fn models_built_in_code_are_checked_too() {
    let mut def = definition("").unwrap();
    def.activities[1].people = role("tech");
    let problems = validate_definition(&def, &SourceMap::default());
    assert_eq!(problems.len(), 1, "{problems:?}");
    assert!(problems[0].message.contains("but is automatic"));
    def.activities[1].kind = ActivityKind::Manual;
    assert!(validate_definition(&def, &SourceMap::default()).is_empty());

    let mut doc = partition("<kind>manual</kind>").unwrap();
    doc.activities[0].people = People {
        method: Method::All,
        policy: Policy::FewestAssigned(2),
        ..role("tech")
    };
    let problems = validate_partition(&doc, &SourceMap::default());
    assert_eq!(problems.len(), 1, "{problems:?}");
    assert!(problems[0].message.contains("with method all"));
}

/// The reader and the XSDs agree on the people extensions: the documents of `tests/xsd/` that
/// show them are accepted, or refused, by both (tests/xsd.rs runs the XSD side).
#[test]
fn the_reader_agrees_with_the_xsd_test_documents() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/xsd");
    for name in ["people.workflow.xml", "people.partition.xml"] {
        let bytes = std::fs::read(dir.join("valid").join(name)).unwrap();
        let problems = mobiwf_xml_schema::check(&bytes);
        assert!(problems.is_empty(), "{}", problems.render(name));
    }
    let refused = [
        "assignment-basis-group.workflow.xml",
        "assignment-method-fifo.partition.xml",
        "assignment-with-text.workflow.xml",
        "disconnected-yes.partition.xml",
        "policy-fewest-assigned-0.partition.xml",
        "policy-without-number.workflow.xml",
        "priority-too-large.workflow.xml",
        "role-empty.partition.xml",
    ];
    for name in refused {
        let bytes = std::fs::read(dir.join("invalid").join(name)).unwrap();
        let rendered = mobiwf_xml_schema::check(&bytes).render(name);
        let element = name.split('-').next().unwrap();
        assert!(
            rendered.contains(&format!("<{element}> of activity 1")),
            "{name} should be refused for its <{element}>:\n{rendered}"
        );
    }
    let def = load_definition(&std::fs::read(dir.join("valid/people.workflow.xml")).unwrap())
        .unwrap()
        .value;
    let kinds: Vec<(Basis, Method)> = def
        .activities
        .iter()
        .map(|a| (a.people.basis, a.people.method))
        .collect();
    assert_eq!(
        kinds,
        [
            (Basis::Role, Method::Fcfa),
            (Basis::Role, Method::Priority),
            (Basis::Department, Method::LeastWorking),
            (Basis::Team, Method::All),
            (Basis::Role, Method::RoundRobin),
        ]
    );
}

#[test]
fn pause_stops_deadline_is_read_written_and_needs_a_deadline() {
    let plain = definition("<kind>manual</kind><role>tech</role><deadline>8</deadline>").unwrap();
    assert!(
        !plain.activities[1].people.pause_stops_deadline,
        "the default: it runs on"
    );
    assert!(!write_definition(&plain).contains("pauseStopsDeadline"));

    let def = definition(
        "<kind>manual</kind><role>tech</role><deadline>8</deadline>\
         <pauseStopsDeadline>true</pauseStopsDeadline>",
    )
    .unwrap();
    assert!(def.activities[1].people.pause_stops_deadline);
    let written = write_definition(&def);
    assert!(
        written.contains(
            "<deadline>8</deadline>\n      <pauseStopsDeadline>true</pauseStopsDeadline>"
        ),
        "{written}"
    );
    assert_eq!(load_definition(written.as_bytes()).unwrap().value, def);
    let pdl = mobiwf_xml_schema::write_pdl(&def);
    assert!(pdl.contains("PAUSE_STOPS_DEADLINE true;"), "{pdl}");
    assert_eq!(
        mobiwf_xml_schema::load_definition_in(mobiwf_xml_schema::Language::Pdl, pdl.as_bytes())
            .unwrap()
            .value,
        def
    );

    let doc = partition(
        "<kind>manual</kind><role>tech</role><deadline>8</deadline>\
         <pauseStopsDeadline>true</pauseStopsDeadline>",
    )
    .unwrap();
    assert!(doc.activities[0].people.pause_stops_deadline);
    assert_eq!(
        load_partition(write_partition(&doc).as_bytes())
            .unwrap()
            .value,
        doc
    );

    assert_eq!(
        definition_errors(
            "<kind>manual</kind><role>tech</role>\n<pauseStopsDeadline>true</pauseStopsDeadline>"
        ),
        "d.xml:6:21: error: activity 2 has <pauseStopsDeadline> but no <deadline> to stop; add \
         <deadline> with its hours, or remove <pauseStopsDeadline>\n"
    );
    assert!(
        definition_errors("<kind>manual</kind><role>tech</role><deadline>8</deadline><pauseStopsDeadline>yes</pauseStopsDeadline>")
            .contains("expected true (its <deadline> stops while the activity is paused)")
    );
}
