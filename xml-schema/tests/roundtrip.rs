//! Property tests: writing any model value and reading it back gives the same value, and no
//! input bytes make the reader panic: random bytes, and near-valid documents (the examples and
//! generated definitions, mutated) whose every problem is reported at a place in the text.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use mobiwf_xml_schema::*;
use proptest::prelude::*;

/// Text a document can carry: any non-control character, plus tab, newline and carriage
/// return, including XML's special characters and surrounding whitespace.
fn text() -> impl Strategy<Value = String> {
    proptest::string::string_regex("(\\PC|[\\t\\n\\r <>&\"'])*")
        .unwrap()
        .prop_map(|s| s.chars().take(24).collect())
}

fn status() -> impl Strategy<Value = Status> {
    prop_oneof![
        Just(Status::Pending),
        Just(Status::Succeeded),
        Just(Status::Failed)
    ]
}

fn contingency() -> impl Strategy<Value = Contingency> {
    prop_oneof![
        Just(Contingency::Block),
        Just(Contingency::Release),
        any::<u64>()
            .prop_filter("0 is Release", |x| *x > 0)
            .prop_map(|x| Contingency::Run(ActivityId(x))),
    ]
}

fn kind() -> impl Strategy<Value = ActivityKind> {
    prop_oneof![
        Just(ActivityKind::Automatic),
        Just(ActivityKind::SemiAutomatic),
        Just(ActivityKind::Manual),
        Just(ActivityKind::Dummy)
    ]
}

/// Any retries the reader accepts: none (often, as in most documents), or a count up to the
/// limit with any wait, including a wait without a count.
fn retries() -> impl Strategy<Value = Retries> {
    prop_oneof![
        Just(Retries::default()),
        (0..=limits::MAX_RETRIES, any::<u32>())
            .prop_map(|(count, wait_secs)| Retries { count, wait_secs }),
        any::<u32>().prop_map(|wait_secs| Retries {
            count: 0,
            wait_secs
        }),
    ]
}

fn task_state() -> impl Strategy<Value = TaskState> {
    prop::sample::select(TaskState::ALL.to_vec())
}

/// Any dependency rule the reader accepts: terms on any activity in any state, under `and`s
/// and `or`s nested up to three deep, empty ones included (the validator refuses those; the
/// reader and writer keep them).
fn rule() -> impl Strategy<Value = Rule> {
    let term = (any::<u64>(), task_state()).prop_map(|(activity, state)| Rule::Term {
        activity: ActivityId(activity),
        state,
    });
    term.prop_recursive(3, 24, 3, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4).prop_map(Rule::And),
            prop::collection::vec(inner, 0..4).prop_map(Rule::Or),
        ]
    })
}

/// No rule (often, as in most documents) or any rule.
fn depends() -> impl Strategy<Value = Option<Rule>> {
    prop_oneof![2 => Just(None), 1 => rule().prop_map(Some)]
}

/// A completion flag as the reader keeps it: a valid one, or any text (the validator refuses
/// those; the reader and writer keep them, XML's special characters and white space included).
fn flag() -> impl Strategy<Value = String> {
    prop_oneof![
        proptest::string::string_regex("[A-Za-z0-9_.-]{1,64}").unwrap(),
        text(),
    ]
}

/// Any merge the reader accepts: the default (often), `or` with or without a flag, `vote` with
/// any number of votes (the validator refuses 0 and more than the preconditions).
fn merge() -> impl Strategy<Value = Merge> {
    prop_oneof![
        2 => Just(Merge::All),
        1 => prop::option::of(flag()).prop_map(|flag| Merge::First { flag }),
        1 => any::<u32>().prop_map(|votes| Merge::Vote { votes }),
    ]
}

/// No routes (often), or one to three routes, each with or without a flag and leading to up to
/// three activities (none included: the validator refuses an empty route, the reader keeps it).
fn routes() -> impl Strategy<Value = Vec<Route>> {
    let route = (
        prop::option::of(flag()),
        prop::collection::vec(any::<u64>(), 0..4),
    )
        .prop_map(|(flag, to)| Route {
            flag,
            to: to.into_iter().map(ActivityId).collect(),
        });
    prop_oneof![
        2 => Just(Vec::new()),
        1 => prop::collection::vec(route, 1..4),
    ]
}

/// The routing extensions of an activity: merge, routes and completion.
fn routing() -> impl Strategy<Value = (Merge, Vec<Route>, bool)> {
    (merge(), routes(), any::<bool>())
}

/// The states of an adjacent as the model keeps them: each once, in `TaskState::ALL` order.
fn adjacent_states() -> impl Strategy<Value = Vec<TaskState>> {
    prop::sample::subsequence(TaskState::ALL.to_vec(), 0..=TaskState::ALL.len())
}

/// A data name the validator accepts: a letter or `_`, then letters, digits, `_`, `-`, `.`.
fn data_name() -> impl Strategy<Value = String> {
    proptest::string::string_regex("[A-Za-z_][A-Za-z0-9_.-]{0,15}").unwrap()
}

/// A list of data names as the reader keeps it: none (often), or up to three, repeats included
/// (the validator refuses those; the reader and writer keep them).
fn data_names() -> impl Strategy<Value = Vec<String>> {
    prop_oneof![
        2 => Just(Vec::new()),
        1 => prop::collection::vec(data_name(), 1..4),
    ]
}

/// The data declarations of a document: none (often, as in most documents), or up to four
/// values and files (a name may repeat: the validator refuses that, the reader keeps it).
fn data() -> impl Strategy<Value = Vec<DataItem>> {
    let kind = prop_oneof![
        Just(DataKind::String),
        Just(DataKind::Number),
        Just(DataKind::File)
    ];
    // An input only on a value; a default fits the value's type (the reader checks numbers).
    let input = |kind: DataKind| match kind {
        DataKind::File => Just(Input::No).boxed(),
        DataKind::Number => prop_oneof![
            Just(Input::No),
            Just(Input::Required),
            (-1000i32..1000).prop_map(|n| Input::Default(n.to_string())),
        ]
        .boxed(),
        DataKind::String => prop_oneof![
            Just(Input::No),
            Just(Input::Required),
            text().prop_map(Input::Default),
        ]
        .boxed(),
    };
    let item = (data_name(), kind)
        .prop_flat_map(move |(name, kind)| (Just(name), Just(kind), input(kind)))
        .prop_map(|(name, kind, input)| DataItem { name, kind, input });
    prop_oneof![
        2 => Just(Vec::new()),
        1 => prop::collection::vec(item, 1..5),
    ]
}

/// The `<reads>` and `<writes>` of an activity.
fn access() -> impl Strategy<Value = DataAccess> {
    (data_names(), data_names()).prop_map(|(reads, writes)| DataAccess { reads, writes })
}

/// An id of the organisation as an activity names it: trimmed, non-empty text, which may hold
/// XML's special characters.
fn group_id() -> impl Strategy<Value = String> {
    text().prop_filter_map("empty once trimmed", |s| {
        let trimmed = s.trim();
        (!trimmed.is_empty()).then(|| trimmed.to_owned())
    })
}

fn policy() -> impl Strategy<Value = Policy> {
    prop_oneof![
        Just(Policy::All),
        (1..=u32::MAX).prop_map(Policy::FewestAssigned),
        (1..=u32::MAX).prop_map(Policy::FewestSelected),
        (1..=u32::MAX).prop_map(Policy::MostFrequent),
        (1..=u32::MAX).prop_map(Policy::MostRecent),
    ]
}

/// People extensions the validator accepts: the basis's group is there (a role may filter a
/// department or team), priority and round-robin only with basis role, a policy other than
/// all only with fcfa.
fn assigned_people() -> impl Strategy<Value = People> {
    let basis = prop_oneof![
        Just(Basis::Role),
        Just(Basis::Department),
        Just(Basis::Team)
    ];
    (
        basis,
        (
            prop::option::of(group_id()),
            prop::option::of(group_id()),
            prop::option::of(group_id()),
        ),
        (0usize..5, policy(), any::<i64>(), any::<bool>()),
        prop::option::of(1u32..=mobiwf_xml_schema::limits::MAX_DEADLINE_HOURS),
    )
        .prop_map(
            |(
                basis,
                (role, department, team),
                (method, policy, priority, disconnected),
                deadline,
            )| {
                let mut people = People {
                    role: role.map(RoleId::new),
                    department: department.map(DepartmentId::new),
                    team: team.map(TeamId::new),
                    basis,
                    method: Method::Fcfa,
                    policy,
                    priority,
                    disconnected,
                    deadline,
                };
                let methods = match basis {
                    Basis::Role => {
                        people.role.get_or_insert_with(|| RoleId::new("staff"));
                        &METHODS[..]
                    }
                    Basis::Department => {
                        people.department.get_or_insert_with(|| "staff".into());
                        &METHODS[..3]
                    }
                    Basis::Team => {
                        people.team.get_or_insert_with(|| "staff".into());
                        &METHODS[..3]
                    }
                };
                people.method = methods[method % methods.len()];
                if people.method != Method::Fcfa {
                    people.policy = Policy::All;
                }
                people
            },
        )
}

/// Every method; those after the third need basis role.
const METHODS: [Method; 5] = [
    Method::Fcfa,
    Method::All,
    Method::LeastWorking,
    Method::Priority,
    Method::RoundRobin,
];

/// People extensions for an activity of `kind`: none (often, as in most documents), or on
/// manual and semi-automatic activities any valid combination.
fn people(kind: ActivityKind) -> BoxedStrategy<People> {
    if matches!(kind, ActivityKind::Automatic | ActivityKind::Dummy) {
        Just(People::default()).boxed()
    } else {
        prop_oneof![Just(People::default()), assigned_people()].boxed()
    }
}

/// A kind with people extensions that fit it.
fn kind_and_people() -> impl Strategy<Value = (ActivityKind, People)> {
    kind().prop_flat_map(|kind| (Just(kind), people(kind)))
}

fn activity() -> impl Strategy<Value = Activity> {
    (
        (any::<u64>(), text(), text(), any::<u64>(), status()),
        (
            any::<u32>(),
            contingency(),
            any::<u32>(),
            prop::collection::vec(any::<u64>(), 0..4),
        ),
        (
            kind_and_people(),
            prop::option::of(text()),
            prop::option::of(text()),
            retries(),
            depends(),
            access(),
        ),
        routing(),
    )
        .prop_map(
            |(
                (id, name, description, ty, status),
                (wait, contingency, time_out, pre),
                ((kind, people), command, compensation, retries, depends, data),
                (merge, routes, completion),
            )| Activity {
                id: ActivityId(id),
                name,
                description,
                activity_type: ActivityTypeId(ty),
                status,
                time_to_wait_secs: wait,
                contingency,
                time_out_secs: time_out,
                preconditions: pre.into_iter().map(ActivityId).collect(),
                depends,
                merge,
                routes,
                completion,
                kind,
                command,
                compensation,
                retries,
                people,
                data,
            },
        )
}

fn definition() -> impl Strategy<Value = WorkflowDefinition> {
    let activity_type = (any::<u64>(), text()).prop_map(|(id, description)| ActivityType {
        id: ActivityTypeId(id),
        description,
    });
    let partition = (
        any::<u64>(),
        text(),
        any::<u64>(),
        any::<u32>(),
        prop::collection::vec(any::<u64>(), 0..4),
    )
        .prop_map(|(id, name, partner, time_out, activities)| Partition {
            id: PartitionId(id),
            name,
            partner: PartnerId(partner),
            time_out_secs: time_out,
            activities: activities.into_iter().map(ActivityId).collect(),
        });
    let partner = (
        any::<u64>(),
        text(),
        text(),
        text(),
        prop::collection::vec(any::<u64>(), 0..4),
    )
        .prop_map(|(id, name, description, location, skills)| Partner {
            id: PartnerId(id),
            name,
            description,
            location,
            skills: skills.into_iter().map(ActivityTypeId).collect(),
        });
    let name = prop::option::of("[A-Za-z0-9_.-]{1,64}".prop_map(DefinitionName::new));
    let creator_role = prop::option::of("[a-z][a-z0-9_-]{0,15}".prop_map(RoleId::new));
    (
        (any::<u64>(), text(), name, creator_role),
        prop::collection::vec(activity(), 0..5),
        prop::collection::vec(activity_type, 0..3),
        prop::collection::vec(partition, 0..3),
        prop::collection::vec(partner, 0..3),
        data(),
    )
        .prop_map(
            |(
                (id, description, name, creator_role),
                activities,
                activity_types,
                partitions,
                partners,
                data,
            )| {
                WorkflowDefinition {
                    id: WorkflowId(id),
                    description,
                    name,
                    creator_role,
                    activities,
                    activity_types,
                    partitions,
                    partners,
                    data,
                }
            },
        )
}

fn precondition() -> impl Strategy<Value = Precondition> {
    (any::<u64>(), status(), any::<bool>(), any::<u32>()).prop_map(|(id, status, local, t)| {
        Precondition {
            id: ActivityId(id),
            status,
            local,
            time_out_secs: t,
        }
    })
}

fn adjacent() -> impl Strategy<Value = Adjacent> {
    (any::<u64>(), text(), adjacent_states(), data_names()).prop_map(
        |(id, location, states, carries)| Adjacent {
            id: ActivityId(id),
            location,
            states,
            carries,
        },
    )
}

fn partition_document() -> impl Strategy<Value = PartitionDocument> {
    let (precondition, adjacent) = (precondition(), adjacent());
    let activity = (
        (
            any::<u64>(),
            text(),
            text(),
            status(),
            any::<bool>(),
            any::<u32>(),
            contingency(),
        ),
        (
            prop::collection::vec(precondition, 0..3),
            prop::collection::vec(adjacent, 0..3),
            any::<u32>(),
            kind_and_people(),
            (prop::option::of(text()), prop::option::of(text())),
            retries(),
            depends(),
        ),
        (routing(), access()),
    )
        .prop_map(
            |(
                (id, name, description, status, ri, wait, contingency),
                (
                    preconditions,
                    adjacents,
                    time_out,
                    (kind, people),
                    (command, compensation),
                    retries,
                    depends,
                ),
                ((merge, routes, completion), data),
            )| {
                PartitionActivity {
                    id: ActivityId(id),
                    name,
                    description,
                    status,
                    response_immediate: ri,
                    time_to_wait_secs: wait,
                    contingency,
                    preconditions,
                    adjacents,
                    depends,
                    merge,
                    routes,
                    completion,
                    time_out_secs: time_out,
                    kind,
                    command,
                    compensation,
                    retries,
                    people,
                    data,
                }
            },
        );
    (
        any::<u64>(),
        prop::option::of(text()),
        prop::collection::vec(activity, 0..4),
        data(),
    )
        .prop_map(|(id, start_time, activities, data)| PartitionDocument {
            workflow_id: WorkflowId(id),
            start_time,
            activities,
            data,
        })
}

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
                time_out_secs: 0,
                kind,
                command: None,
                compensation: None,
                retries: Retries::default(),
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
const EXAMPLES: [&str; 10] = [
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
