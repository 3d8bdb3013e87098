//! Property tests: writing any model value and reading it back gives the same value, and no
//! input bytes make the reader panic: random bytes, and near-valid documents (the examples and
//! generated definitions, mutated) whose every problem is reported at a place in the text.
#![allow(clippy::unwrap_used, clippy::expect_used)]

#[path = "common/generators.rs"]
mod generators;

use generators::*;
use mobiwf_xml_schema::*;
use proptest::prelude::*;

/// A workflow with instance data: activities 1..=n, each after some earlier ones, in one of two
/// partitions, reading and writing any of three declared names (a read need not follow a write:
/// derivation does not validate).
fn data_workflow() -> impl Strategy<Value = WorkflowDefinition> {
    const NAMES: [&str; 3] = ["reading", "note", "photo"];
    let activity = (
        prop::collection::vec(any::<bool>(), 8),
        prop::sample::subsequence(NAMES.to_vec(), 0..=3),
        prop::sample::subsequence(NAMES.to_vec(), 0..=3),
        any::<bool>(),
    );
    prop::collection::vec(activity, 1..8).prop_map(|specs| {
        let xml_activities: Vec<String> = specs
            .iter()
            .enumerate()
            .map(|(i, (after, reads, writes, _))| {
                let pre: String = (0..i)
                    .filter(|&j| after[j])
                    .map(|j| format!("<preconditionId>{}</preconditionId>", j + 1))
                    .collect();
                let list = |name: &str, names: &[&str]| {
                    if names.is_empty() {
                        String::new()
                    } else {
                        format!("<{name}>{}</{name}>", names.join(" "))
                    }
                };
                format!(
                    "<activity id=\"{}\"><activityTypeId>1</activityTypeId>{}{}<preconditions>{pre}</preconditions></activity>",
                    i + 1,
                    list("reads", reads),
                    list("writes", writes)
                )
            })
            .collect();
        let placed = |second: bool| -> String {
            specs
                .iter()
                .enumerate()
                .filter(|(_, s)| s.3 == second)
                .map(|(i, _)| format!("<activityId>{}</activityId>", i + 1))
                .collect()
        };
        let xml = format!(
            "<workflow id=\"1\"><activities>{}</activities><activityTypes><activityType id=\"1\"/></activityTypes><partitions><partition id=\"1\"><partnerId>1</partnerId>{}</partition><partition id=\"2\"><partnerId>2</partnerId>{}</partition></partitions><partners><partner id=\"1\"><ip>a</ip><skills><activityTypeId>1</activityTypeId></skills></partner><partner id=\"2\"><ip>b</ip><skills><activityTypeId>1</activityTypeId></skills></partner></partners><data><value name=\"reading\" type=\"number\"/><value name=\"note\" type=\"string\"/><file name=\"photo\"/></data></workflow>",
            xml_activities.concat(),
            placed(false),
            placed(true)
        );
        read_definition(xml.as_bytes()).unwrap().value
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn definition_round_trips(def in definition()) {
        let xml = write_definition(&def);
        let back = read_definition(xml.as_bytes()).map_err(|d| TestCaseError::fail(d.render("written")))?;
        prop_assert_eq!(back.value, def);
    }

    #[test]
    fn partition_document_round_trips(doc in partition_document()) {
        let xml = write_partition(&doc);
        let back = read_partition(xml.as_bytes()).map_err(|d| TestCaseError::fail(d.render("written")))?;
        prop_assert_eq!(back.value, doc);
    }

    #[test]
    fn generated_people_extensions_are_valid((kind, people) in kind_and_people()) {
        let doc = PartitionDocument {
            workflow_id: WorkflowId(1),
            start_time: None,
            activities: vec![PartitionActivity {
                id: ActivityId(1),
                name: String::new(),
                description: String::new(),
                status: Status::Pending,
                response_immediate: false,
                time_to_wait_secs: 0,
                contingency: Contingency::Block,
                preconditions: Vec::new(),
                adjacents: Vec::new(),
                depends: None,
                merge: Default::default(),
                routes: Vec::new(),
                completion: false,
                loop_back: None,
                time_out_secs: 0,
                kind,
                command: None,
                compensation: None,
                retries: Retries::default(),
                class: None,
                application: None,
                ordered: false,
                people,
                data: Default::default(),
            }],
            data: Vec::new(),
        };
        let problems = validate_partition(&doc, &SourceMap::default());
        prop_assert!(problems.is_empty(), "{:?}", problems);
        let back = load_partition(write_partition(&doc).as_bytes()).map_err(|d| TestCaseError::fail(d.render("written")))?;
        prop_assert_eq!(back.value, doc);
    }

    #[test]
    fn derived_documents_declare_the_data_they_use(def in data_workflow()) {
        let parts = derive_partitions(&def, &DeriveOptions::default());
        let here = |id: ActivityId| parts.iter().position(|p| p.document.activities.iter().any(|a| a.id == id));
        for part in &parts {
            for a in &part.document.activities {
                for adj in &a.adjacents {
                    let expected = if here(adj.id) == here(a.id) {
                        Vec::new()
                    } else {
                        carried_names(&def, a.id, adj.id)
                    };
                    prop_assert_eq!(&adj.carries, &expected, "{} -> {}", a.id, adj.id);
                }
            }
            let xml = write_partition(&part.document);
            let back = load_partition(xml.as_bytes())
                .map_err(|d| TestCaseError::fail(d.render("derived")))?;
            prop_assert_eq!(&back.value, &part.document);
        }
    }

    #[test]
    fn arbitrary_bytes_never_panic(bytes in prop::collection::vec(any::<u8>(), 0..512)) {
        let _ = check(&bytes).render("fuzz");
    }

    #[test]
    fn mutated_paper_never_panics(cut in 0usize..4000, byte in any::<u8>()) {
        let mut bytes = std::fs::read(concat!(env!("CARGO_MANIFEST_DIR"), "/../examples/paper/workflow.xml")).unwrap();
        let at = cut % bytes.len();
        bytes[at] = byte;
        let _ = check(&bytes).render("mutated");
        if let Ok(def) = load_definition(&bytes) {
            for part in derive_partitions(&def.value, &DeriveOptions::default()) {
                prop_assert!(load_partition(write_partition(&part.document).as_bytes()).is_ok());
            }
        }
    }
}

/// The valid documents the mutations start from: the examples of all three languages.
const EXAMPLES: [&str; 11] = [
    include_str!("../../examples/paper/workflow.xml"),
    include_str!("../../examples/paper/partition-1.xml"),
    include_str!("../../examples/paper/partition-2.xml"),
    include_str!("../../examples/data/meter-reading.xml"),
    include_str!("../../examples/people/inspection.xml"),
    include_str!("../../examples/recovery/booking.xml"),
    include_str!("../../examples/recovery/feed.xml"),
    include_str!("../../examples/rules/approval.xml"),
    include_str!("../../examples/rules/pump-check.xml"),
    include_str!("../../examples/organisation.xml"),
    include_str!("../../examples/loops/review.xml"),
];

/// One change to a document. Each `usize` picks, modulo how many there are, which element,
/// attribute, value or place it applies to.
#[derive(Debug, Clone)]
enum Mutation {
    DeleteElement(usize),
    DuplicateElement(usize),
    SwapElements(usize, usize),
    DeleteAttribute(usize),
    DuplicateAttribute(usize),
    CorruptValue(usize, &'static str),
    Truncate(usize),
    Insert(usize, char),
}

/// Values a field may be corrupted to: empty, negative, too large, not a number, an entity
/// that does not exist, markup.
const CORRUPT: [&str; 10] = [
    "",
    "-1",
    "0",
    "18446744073709551616",
    "1.5",
    "x y",
    "&bogus;",
    "<",
    "automatic",
    "\u{0}",
];

fn mutation() -> impl Strategy<Value = Mutation> {
    let at = any::<usize>();
    prop_oneof![
        at.prop_map(Mutation::DeleteElement),
        at.prop_map(Mutation::DuplicateElement),
        (at, at).prop_map(|(a, b)| Mutation::SwapElements(a, b)),
        at.prop_map(Mutation::DeleteAttribute),
        at.prop_map(Mutation::DuplicateAttribute),
        (at, prop::sample::select(CORRUPT.to_vec()))
            .prop_map(|(a, v)| Mutation::CorruptValue(a, v)),
        at.prop_map(Mutation::Truncate),
        (
            at,
            prop::sample::select(vec![
                '<', '>', '&', '"', '\'', '/', '=', ' ', '\n', 'x', 'é', '\u{1}'
            ])
        )
            .prop_map(|(a, c)| Mutation::Insert(a, c)),
    ]
}

/// The byte ranges of the elements of `doc`, start tag to end tag, in document order (found by
/// matching tag names, well enough for mutating: a document already broken may give odd
/// ranges, which is fine).
fn elements(doc: &str) -> Vec<std::ops::Range<usize>> {
    let mut ranges = Vec::new();
    let mut open: Vec<(&str, usize)> = Vec::new();
    let mut at = 0;
    while let Some(lt) = doc[at..].find('<').map(|i| at + i) {
        let Some(gt) = doc[lt..].find('>').map(|i| lt + i) else {
            break;
        };
        let tag = &doc[lt + 1..gt];
        at = gt + 1;
        if tag.starts_with('?') || tag.starts_with('!') {
            continue;
        }
        if let Some(name) = tag.strip_prefix('/') {
            if let Some(k) = open.iter().rposition(|(n, _)| *n == name.trim()) {
                let (_, start) = open[k];
                open.truncate(k);
                ranges.push(start..at);
            }
            continue;
        }
        if tag.ends_with('/') {
            ranges.push(lt..at);
        } else {
            let name = tag.split_whitespace().next().unwrap_or("");
            open.push((name, lt));
        }
    }
    ranges.sort_by_key(|r| r.start);
    ranges
}

/// The byte ranges of the attributes (` name="value"`, with the space before) of `doc`.
fn attributes(doc: &str) -> Vec<std::ops::Range<usize>> {
    let bytes = doc.as_bytes();
    let mut ranges = Vec::new();
    let mut at = 0;
    while let Some(eq) = doc[at..].find("=\"").map(|i| at + i) {
        let Some(close) = doc[eq + 2..].find('"').map(|i| eq + 2 + i) else {
            break;
        };
        let mut start = eq;
        while start > 0 && !bytes[start - 1].is_ascii_whitespace() && bytes[start - 1] != b'<' {
            start -= 1;
        }
        if start > 0 && bytes[start - 1].is_ascii_whitespace() {
            ranges.push(start - 1..close + 1);
        }
        at = close + 1;
    }
    ranges
}

/// The byte ranges of the values of `doc`: attribute values, and text between tags that is not
/// only whitespace.
fn values(doc: &str) -> Vec<std::ops::Range<usize>> {
    let mut ranges: Vec<std::ops::Range<usize>> = attributes(doc)
        .into_iter()
        .filter_map(|r| {
            let quote = doc[r.clone()].find('"')?;
            Some(r.start + quote + 1..r.end - 1)
        })
        .collect();
    let mut at = 0;
    while let Some(gt) = doc[at..].find('>').map(|i| at + i) {
        let Some(lt) = doc[gt..].find('<').map(|i| gt + i) else {
            break;
        };
        if !doc[gt + 1..lt].trim().is_empty() {
            ranges.push(gt + 1..lt);
        }
        at = lt;
    }
    ranges
}

/// The `pick`th of `ranges`, modulo their number.
fn pick(ranges: &[std::ops::Range<usize>], pick: usize) -> Option<std::ops::Range<usize>> {
    (!ranges.is_empty()).then(|| ranges[pick % ranges.len()].clone())
}

/// The char boundary of `doc` at or before `pick` modulo its length.
fn boundary(doc: &str, pick: usize) -> usize {
    let mut at = pick % (doc.len() + 1);
    while !doc.is_char_boundary(at) {
        at -= 1;
    }
    at
}

fn mutate(doc: &mut String, mutation: &Mutation) {
    match *mutation {
        Mutation::DeleteElement(k) => {
            if let Some(r) = pick(&elements(doc), k) {
                doc.replace_range(r, "");
            }
        }
        Mutation::DuplicateElement(k) => {
            if let Some(r) = pick(&elements(doc), k) {
                let copy = doc[r.clone()].to_owned();
                doc.insert_str(r.end, &copy);
            }
        }
        Mutation::SwapElements(a, b) => {
            let ranges = elements(doc);
            if let (Some(a), Some(b)) = (pick(&ranges, a), pick(&ranges, b)) {
                let (first, second) = if a.start <= b.start { (a, b) } else { (b, a) };
                // Only ranges apart from each other: one inside the other cannot swap.
                if first.end <= second.start {
                    let (x, y) = (
                        doc[first.clone()].to_owned(),
                        doc[second.clone()].to_owned(),
                    );
                    doc.replace_range(second, &x);
                    doc.replace_range(first, &y);
                }
            }
        }
        Mutation::DeleteAttribute(k) => {
            if let Some(r) = pick(&attributes(doc), k) {
                doc.replace_range(r, "");
            }
        }
        Mutation::DuplicateAttribute(k) => {
            if let Some(r) = pick(&attributes(doc), k) {
                let copy = doc[r.clone()].to_owned();
                doc.insert_str(r.end, &copy);
            }
        }
        Mutation::CorruptValue(k, value) => {
            if let Some(r) = pick(&values(doc), k) {
                doc.replace_range(r, value);
            }
        }
        Mutation::Truncate(k) => {
            let at = boundary(doc, k);
            doc.truncate(at);
        }
        Mutation::Insert(k, c) => {
            let at = boundary(doc, k);
            doc.insert(at, c);
        }
    }
}

/// A valid document: one of the examples, or a generated definition as the writer writes it.
fn valid_document() -> impl Strategy<Value = String> {
    prop_oneof![
        prop::sample::select(EXAMPLES.to_vec()).prop_map(str::to_owned),
        definition().prop_map(|def| write_definition(&def)),
    ]
}

/// Whether `pos` is a place in `doc`: a line of it, and a column of that line or just after its
/// last character.
fn inside(doc: &str, pos: Pos) -> bool {
    let Some(line) = doc.split('\n').nth((pos.line as usize).wrapping_sub(1)) else {
        return false;
    };
    pos.line >= 1 && pos.column >= 1 && pos.column as usize <= line.chars().count() + 1
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn near_valid_documents_never_panic_and_every_problem_has_its_place(
        doc in valid_document(),
        mutations in prop::collection::vec(mutation(), 1..4),
    ) {
        let mut doc = doc;
        for m in &mutations {
            mutate(&mut doc, m);
        }
        let problems = check(doc.as_bytes());
        let _ = problems.render("mutated");
        for problem in &problems.0 {
            prop_assert!(
                inside(&doc, problem.pos),
                "{} is not in the document: {}\n{doc}",
                problem.pos,
                problem.message
            );
        }
    }
}
