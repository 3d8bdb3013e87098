//! WorkToDo's process definition language (PDL) against the model and the XML: the paper's
//! example reads as the same definition as its XML (and so partitions to the same documents);
//! any definition written as PDL reads back as itself, also when names repeat, look like
//! keywords or numbers, and ids repeat; and no text makes the reader panic, every problem of a
//! broken one having its place in the text.
#![allow(clippy::unwrap_used, clippy::expect_used)]

#[path = "common/generators.rs"]
mod generators;

use generators::definition;
use mobiwf_xml_schema::*;
use proptest::prelude::*;

const PAPER_PDL: &str = include_str!("../../examples/paper/workflow.pdl");
const PAPER_XML: &str = include_str!("../../examples/paper/workflow.xml");

fn load_pdl(text: &str) -> Result<Loaded<WorkflowDefinition>, Diagnostics> {
    load_definition_in(Language::Pdl, text.as_bytes())
}

#[test]
fn the_paper_example_is_the_same_definition_in_both_languages() {
    let pdl = load_pdl(PAPER_PDL)
        .unwrap_or_else(|d| panic!("{}", d.render("workflow.pdl")))
        .value;
    let xml = load_definition(PAPER_XML.as_bytes()).unwrap().value;
    assert_eq!(pdl, xml);
    let options = DeriveOptions::default();
    let from_pdl: Vec<String> = derive_partitions(&pdl, &options)
        .iter()
        .map(|p| write_partition(&p.document))
        .collect();
    let from_xml: Vec<String> = derive_partitions(&xml, &options)
        .iter()
        .map(|p| write_partition(&p.document))
        .collect();
    assert_eq!(from_pdl.len(), 2);
    assert_eq!(
        from_pdl, from_xml,
        "the PDL partitions to the same fragments as its XML"
    );
}

#[test]
fn the_paper_example_converts_both_ways_without_loss() {
    let xml = load_definition(PAPER_XML.as_bytes()).unwrap().value;
    let as_pdl = write_pdl(&xml);
    let back = load_pdl(&as_pdl).unwrap_or_else(|d| panic!("{}\n{as_pdl}", d.render("w.pdl")));
    assert_eq!(back.value, xml);
    let pdl = load_pdl(PAPER_PDL).unwrap().value;
    let as_xml = write_definition(&pdl);
    assert_eq!(load_definition(as_xml.as_bytes()).unwrap().value, pdl);
}

#[test]
fn every_example_definition_converts_to_pdl_and_back() {
    let examples = [
        "paper/workflow.xml",
        "data/meter-reading.xml",
        "people/inspection.xml",
        "recovery/booking.xml",
        "recovery/feed.xml",
        "rules/approval.xml",
        "rules/pump-check.xml",
        "loops/review.xml",
    ];
    for name in examples {
        let path = format!("{}/../examples/{name}", env!("CARGO_MANIFEST_DIR"));
        let xml = load_definition(&std::fs::read(&path).unwrap())
            .unwrap_or_else(|d| panic!("{}", d.render(name)))
            .value;
        let pdl = write_pdl(&xml);
        let back = load_pdl(&pdl).unwrap_or_else(|d| panic!("{}\n{pdl}", d.render(name)));
        assert_eq!(back.value, xml, "{name} as PDL:\n{pdl}");
    }
}

/// Names that collide with each other, with keywords, with numbers, or need quotes.
const NAMES: [&str; 12] = [
    "A",
    "A",
    "a",
    "",
    "and",
    "TO",
    "BLOCK",
    "17",
    "two words",
    "é",
    "x\"y",
    "INPUT",
];

/// A generated definition whose ids are few (so they repeat) and whose task and partner names
/// come from [`NAMES`]; its references name those ids, existing or not.
fn conflicting() -> impl Strategy<Value = WorkflowDefinition> {
    (
        definition(),
        prop::collection::vec(0..NAMES.len(), 8),
        prop::collection::vec(0u64..5, 32),
    )
        .prop_map(|(mut def, names, ids)| {
            let mut names = names.into_iter().cycle();
            let mut name = move || NAMES[names.next().unwrap()].to_owned();
            let mut ids = ids.into_iter().cycle();
            let mut id = move || ids.next().unwrap();
            for t in &mut def.activity_types {
                t.id = ActivityTypeId(id());
            }
            for a in &mut def.activities {
                a.id = ActivityId(id());
                a.name = name();
                a.activity_type = ActivityTypeId(id());
                a.preconditions
                    .iter_mut()
                    .for_each(|p| *p = ActivityId(id()));
                for route in &mut a.routes {
                    route.to.iter_mut().for_each(|t| *t = ActivityId(id()));
                }
                if let Contingency::Run(x) = &mut a.contingency {
                    *x = ActivityId(1 + id());
                }
                if let Some(rule) = &mut a.depends {
                    renumber(rule, &mut id);
                }
            }
            for p in &mut def.partners {
                p.id = PartnerId(id());
                p.name = name();
                p.skills.iter_mut().for_each(|s| *s = ActivityTypeId(id()));
            }
            for p in &mut def.partitions {
                p.id = PartitionId(id());
                p.partner = PartnerId(id());
                p.activities.iter_mut().for_each(|a| *a = ActivityId(id()));
            }
            def
        })
}

fn renumber(rule: &mut Rule, id: &mut impl FnMut() -> u64) {
    match rule {
        Rule::Term { activity, .. } => *activity = ActivityId(id()),
        Rule::And(rules) | Rule::Or(rules) => rules.iter_mut().for_each(|r| renumber(r, id)),
    }
}

/// Whether `pos` is a place in `doc`: a line of it, and a column of that line or just after
/// its last character.
fn inside(doc: &str, pos: Pos) -> bool {
    let Some(line) = doc.split('\n').nth((pos.line as usize).wrapping_sub(1)) else {
        return false;
    };
    pos.line >= 1 && pos.column >= 1 && pos.column as usize <= line.chars().count() + 1
}

/// Pieces of PDL a mutation puts somewhere: punctuation, keywords, names and values.
const PIECES: [&str; 16] = [
    "{", "}", ";", ":", ",", "(", ")", "->", "\"", "//", "TASK", "and(", "ID 0;", "A1", "-1",
    "\\u{",
];

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn any_definition_round_trips_through_pdl(def in definition()) {
        let text = write_pdl(&def);
        let back = read_pdl(text.as_bytes())
            .map_err(|d| TestCaseError::fail(format!("{}\n{text}", d.render("written.pdl"))))?;
        prop_assert_eq!(back.value, def, "{}", text);
    }

    #[test]
    fn names_and_ids_in_conflict_round_trip_through_pdl(def in conflicting()) {
        let text = write_pdl(&def);
        let back = read_pdl(text.as_bytes())
            .map_err(|d| TestCaseError::fail(format!("{}\n{text}", d.render("written.pdl"))))?;
        prop_assert_eq!(back.value, def, "{}", text);
    }

    #[test]
    fn arbitrary_bytes_never_panic(bytes in prop::collection::vec(any::<u8>(), 0..512)) {
        if let Err(problems) = load_definition_in(Language::Pdl, &bytes) {
            let _ = problems.render("fuzz.pdl");
        }
    }

    #[test]
    fn broken_texts_never_panic_and_every_problem_has_its_place(
        def in definition(),
        paper in any::<bool>(),
        cuts in prop::collection::vec((any::<prop::sample::Index>(), 0..PIECES.len(), 0usize..3), 1..4),
    ) {
        let mut doc = if paper { PAPER_PDL.to_owned() } else { write_pdl(&def) };
        for (at, piece, how) in cuts {
            let mut k = at.index(doc.len() + 1);
            while !doc.is_char_boundary(k) {
                k -= 1;
            }
            match how {
                0 => doc.insert_str(k, PIECES[piece]),
                1 => doc.truncate(k),
                _ => {
                    let end = doc[k..].char_indices().nth(PIECES[piece].len()).map_or(doc.len(), |(i, _)| k + i);
                    doc.replace_range(k..end, "");
                }
            }
        }
        if let Err(problems) = load_definition_in(Language::Pdl, doc.as_bytes()) {
            let _ = problems.render("mutated.pdl");
            for problem in &problems.0 {
                prop_assert!(
                    inside(&doc, problem.pos),
                    "{} is not in the text: {}\n{doc}",
                    problem.pos,
                    problem.message
                );
            }
        }
    }
}
