//! Loops in the languages: the body of a loop (every activity on the paths from its head to
//! its end), what a valid loop may hold, the members derivation writes into the end's
//! partition document (with the data the next pass reads), and the clause in both languages.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use mobiwf_xml_schema::{
    ActivityId, DeriveOptions, Language, LoopMember, derive_partitions, load_definition,
    load_definition_in, loop_body, write_definition, write_pdl,
};

const REVIEW: &str = include_str!("../../examples/loops/review.xml");

/// A definition of `activities` (id, preconditions, more XML), all in one partition.
fn definition(activities: &[(u64, &[u64], &str)]) -> String {
    let mut acts = String::new();
    let mut ids = String::new();
    for (id, pre, extra) in activities {
        let pre: String = pre
            .iter()
            .map(|p| format!("<preconditionId>{p}</preconditionId>"))
            .collect();
        acts += &format!(
            "<activity id=\"{id}\"><activityTypeId>1</activityTypeId>\
             <contingencyActivityId>0</contingencyActivityId>\
             <preconditions>{pre}</preconditions>{extra}</activity>"
        );
        ids += &format!("<activityId>{id}</activityId>");
    }
    format!(
        "<workflow id=\"1\"><activities>{acts}</activities>\
         <activityTypes><activityType id=\"1\"/></activityTypes>\
         <partitions><partition id=\"1\"><partnerId>1</partnerId>{ids}</partition></partitions>\
         <partners><partner id=\"1\"><name>P1</name><skills><activityTypeId>1</activityTypeId></skills></partner></partners>\
         </workflow>"
    )
}

fn ids(list: &[u64]) -> Vec<ActivityId> {
    list.iter().copied().map(ActivityId).collect()
}

fn problems(xml: &str) -> String {
    match load_definition(xml.as_bytes()) {
        Ok(_) => String::new(),
        Err(d) => d.render("wf.xml"),
    }
}

const LOOP_5_TO_2: &str = r#"<loop to="2" while="again" max="3"/>"#;

#[test]
fn the_body_is_every_activity_on_a_path_from_the_head_to_the_end() {
    // 1 → 2 → {3, 4} → 5 → 6: the body of a loop from 5 back to 2 is the diamond.
    let xml = definition(&[
        (1, &[], ""),
        (2, &[1], ""),
        (3, &[2], ""),
        (4, &[2], ""),
        (5, &[3, 4], LOOP_5_TO_2),
        (6, &[5], ""),
    ]);
    let def = load_definition(xml.as_bytes()).unwrap().value;
    assert_eq!(
        loop_body(&def, ActivityId(2), ActivityId(5)),
        ids(&[2, 3, 4, 5])
    );
    // An activity alone is a loop of its own; a head after the end is no loop.
    assert_eq!(loop_body(&def, ActivityId(5), ActivityId(5)), ids(&[5]));
    assert!(loop_body(&def, ActivityId(6), ActivityId(5)).is_empty());
}

#[test]
fn a_valid_loop_holds_its_body_whole() {
    let ok = definition(&[
        (1, &[], ""),
        (2, &[1], ""),
        (3, &[2], LOOP_5_TO_2.replace('5', "3").as_str()),
    ]);
    assert_eq!(problems(&ok), "");
    // A side exit from the body is refused, at the activity that waits.
    let side = definition(&[
        (1, &[], ""),
        (2, &[1], ""),
        (3, &[2], ""),
        (5, &[3], LOOP_5_TO_2),
        (6, &[3], ""),
    ]);
    let p = problems(&side);
    assert!(
        p.contains("activity 6 waits for activity 3 of the body"),
        "{p}"
    );
    // Nested loops are refused (not supported yet), as crossing ones are.
    let nested = definition(&[
        (1, &[], ""),
        (2, &[1], ""),
        (3, &[2], r#"<loop to="3" while="again" max="2"/>"#),
        (5, &[3], LOOP_5_TO_2),
    ]);
    let p = problems(&nested);
    assert!(p.contains("loops may not cross or nest"), "{p}");
    // The end's own contingency applies when it fails: allowed.
    let with_stand_in = definition(&[
        (1, &[], ""),
        (2, &[1], ""),
        (5, &[2], LOOP_5_TO_2),
        (9, &[], ""),
    ])
    .replacen(
        "<contingencyActivityId>0</contingencyActivityId><preconditions><preconditionId>2",
        "<contingencyActivityId>9</contingencyActivityId><preconditions><preconditionId>2",
        1,
    )
    .replacen("<activityId>9</activityId>", "", 1);
    assert_eq!(problems(&with_stand_in), "");
}

#[test]
fn the_end_s_document_lists_the_body_with_partners_and_the_data_of_the_next_pass() {
    let def = load_definition(REVIEW.as_bytes()).unwrap().value;
    let mut opts = DeriveOptions::default();
    opts.locations.insert(
        mobiwf_xml_schema::PartnerId(1),
        "/ip4/10.0.0.1/tcp/1".to_owned(),
    );
    opts.locations.insert(
        mobiwf_xml_schema::PartnerId(2),
        "/ip4/10.0.0.2/tcp/1".to_owned(),
    );
    let parts = derive_partitions(&def, &opts);
    let review = parts[1]
        .document
        .activities
        .iter()
        .find(|a| a.id == ActivityId(3))
        .unwrap();
    let l = review.loop_back.as_ref().unwrap();
    assert_eq!(
        (l.to, l.while_flag.as_str(), l.max),
        (ActivityId(2), "again", 4)
    );
    assert_eq!(
        l.body,
        vec![
            LoopMember {
                id: ActivityId(2),
                location: "/ip4/10.0.0.1/tcp/1".to_owned(),
                carries: vec!["round".to_owned()],
            },
            // On the end's own partner: nothing to carry.
            LoopMember {
                id: ActivityId(3),
                location: "/ip4/10.0.0.2/tcp/1".to_owned(),
                carries: Vec::new(),
            },
        ]
    );
    // Edit's document has no loop (it is the head, not the end); the derived documents load.
    assert!(
        parts[0]
            .document
            .activities
            .iter()
            .all(|a| a.loop_back.is_none())
    );
    for part in &parts {
        let xml = mobiwf_xml_schema::write_partition(&part.document);
        let back = mobiwf_xml_schema::load_partition(xml.as_bytes())
            .unwrap()
            .value;
        assert_eq!(back, part.document);
    }
}

#[test]
fn the_loop_reads_back_in_both_languages() {
    let def = load_definition(REVIEW.as_bytes()).unwrap().value;
    let xml = write_definition(&def);
    assert!(
        xml.contains(r#"<loop to="2" while="again" max="4"/>"#),
        "{xml}"
    );
    assert_eq!(load_definition(xml.as_bytes()).unwrap().value, def);
    let pdl = write_pdl(&def);
    assert!(pdl.contains("LOOP TO Edit WHILE again MAX 4;"), "{pdl}");
    assert_eq!(
        load_definition_in(Language::Pdl, pdl.as_bytes())
            .unwrap()
            .value,
        def
    );
    let text = include_str!("../../examples/loops/review.pdl");
    assert_eq!(
        load_definition_in(Language::Pdl, text.as_bytes())
            .unwrap()
            .value,
        def
    );
}
