//! Strategies for generating any value of the model the readers accept (valid or not, as the
//! readers keep it), shared by the round-trip properties of the languages (`roundtrip.rs` for
//! the XML, `pdl.rs` for PDL): writing such a value and reading it back gives it again.
#![allow(dead_code, clippy::unwrap_used)]

use mobiwf_xml_schema::*;
use proptest::prelude::*;

/// Text a document can carry: any non-control character, plus tab, newline and carriage
/// return, including XML's special characters and surrounding whitespace.
pub fn text() -> impl Strategy<Value = String> {
    proptest::string::string_regex("(\\PC|[\\t\\n\\r <>&\"'])*")
        .unwrap()
        .prop_map(|s| s.chars().take(24).collect())
}

/// An application's name.
pub fn application_id() -> impl Strategy<Value = ApplicationId> {
    "[a-z][a-z0-9_-]{0,11}".prop_map(ApplicationId::new)
}

/// An application as the readers keep one: a usable name, a command that is not blank, any
/// size up to the limit, an operating system or none.
pub fn application() -> impl Strategy<Value = Application> {
    (
        application_id(),
        (text(), "[a-z]").prop_map(|(t, c)| format!("{c}{t}")),
        prop_oneof![Just(0u64), 1..=MAX_APPLICATION_KIB],
        prop::option::of("[a-z][a-z0-9_]{0,7}"),
    )
        .prop_map(|(id, command, size_kib, os)| Application {
            id,
            command,
            size_kib,
            os,
        })
}

/// A task class, or none (as most activities have).
pub fn class() -> impl Strategy<Value = Option<ClassName>> {
    prop::option::of("[a-z][a-z0-9_-]{0,11}".prop_map(ClassName::new))
}

pub fn status() -> impl Strategy<Value = Status> {
    prop_oneof![
        Just(Status::Pending),
        Just(Status::Succeeded),
        Just(Status::Failed)
    ]
}

pub fn contingency() -> impl Strategy<Value = Contingency> {
    prop_oneof![
        Just(Contingency::Block),
        Just(Contingency::Release),
        any::<u64>()
            .prop_filter("0 is Release", |x| *x > 0)
            .prop_map(|x| Contingency::Run(ActivityId(x))),
    ]
}

pub fn kind() -> impl Strategy<Value = ActivityKind> {
    prop_oneof![
        Just(ActivityKind::Automatic),
        Just(ActivityKind::SemiAutomatic),
        Just(ActivityKind::Manual),
        Just(ActivityKind::Dummy)
    ]
}

/// Any retries the reader accepts: none (often, as in most documents), or a count up to the
/// limit with any wait, including a wait without a count.
pub fn retries() -> impl Strategy<Value = Retries> {
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

pub fn task_state() -> impl Strategy<Value = TaskState> {
    prop::sample::select(TaskState::ALL.to_vec())
}

/// Any dependency rule the reader accepts: terms on any activity in any state, under `and`s
/// and `or`s nested up to three deep, empty ones included (the validator refuses those; the
/// reader and writer keep them).
pub fn rule() -> impl Strategy<Value = Rule> {
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
pub fn depends() -> impl Strategy<Value = Option<Rule>> {
    prop_oneof![2 => Just(None), 1 => rule().prop_map(Some)]
}

/// A completion flag as the reader keeps it: a valid one, or any text (the validator refuses
/// those; the reader and writer keep them, XML's special characters and white space included).
pub fn flag() -> impl Strategy<Value = String> {
    prop_oneof![
        proptest::string::string_regex("[A-Za-z0-9_.-]{1,64}").unwrap(),
        text(),
    ]
}

/// Any merge the reader accepts: the default (often), `or` with or without a flag, `vote` with
/// any number of votes (the validator refuses 0 and more than the preconditions).
pub fn merge() -> impl Strategy<Value = Merge> {
    prop_oneof![
        2 => Just(Merge::All),
        1 => prop::option::of(flag()).prop_map(|flag| Merge::First { flag }),
        1 => any::<u32>().prop_map(|votes| Merge::Vote { votes }),
    ]
}

/// No routes (often), or one to three routes, each with or without a flag and leading to up to
/// three activities (none included: the validator refuses an empty route, the reader keeps it).
pub fn routes() -> impl Strategy<Value = Vec<Route>> {
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
pub fn routing() -> impl Strategy<Value = (Merge, Vec<Route>, bool)> {
    (merge(), routes(), any::<bool>())
}

/// No loop (often), or a loop back to any id with any flag and limit (the validator refuses a
/// bad one); in a partition document, with up to three members.
pub fn loop_back(members: bool) -> impl Strategy<Value = Option<Loop>> {
    let member =
        (any::<u64>(), text(), data_names()).prop_map(|(id, location, carries)| LoopMember {
            id: ActivityId(id),
            location,
            carries,
        });
    let body = prop::collection::vec(member, 0..if members { 4 } else { 1 });
    prop_oneof![
        3 => Just(None),
        1 => (any::<u64>(), flag(), any::<u32>(), body).prop_map(|(to, while_flag, max, body)| {
            Some(Loop {
                to: ActivityId(to),
                while_flag,
                max,
                body,
            })
        }),
    ]
}

/// The states of an adjacent as the model keeps them: each once, in `TaskState::ALL` order.
pub fn adjacent_states() -> impl Strategy<Value = Vec<TaskState>> {
    prop::sample::subsequence(TaskState::ALL.to_vec(), 0..=TaskState::ALL.len())
}

/// A data name the validator accepts: a letter or `_`, then letters, digits, `_`, `-`, `.`.
pub fn data_name() -> impl Strategy<Value = String> {
    proptest::string::string_regex("[A-Za-z_][A-Za-z0-9_.-]{0,15}").unwrap()
}

/// A list of data names as the reader keeps it: none (often), or up to three, repeats included
/// (the validator refuses those; the reader and writer keep them).
pub fn data_names() -> impl Strategy<Value = Vec<String>> {
    prop_oneof![
        2 => Just(Vec::new()),
        1 => prop::collection::vec(data_name(), 1..4),
    ]
}

/// The data declarations of a document: none (often, as in most documents), or up to four
/// values and files (a name may repeat: the validator refuses that, the reader keeps it).
pub fn data() -> impl Strategy<Value = Vec<DataItem>> {
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
pub fn access() -> impl Strategy<Value = DataAccess> {
    (data_names(), data_names()).prop_map(|(reads, writes)| DataAccess { reads, writes })
}

/// An id of the organisation as an activity names it: trimmed, non-empty text, which may hold
/// XML's special characters.
pub fn group_id() -> impl Strategy<Value = String> {
    text().prop_filter_map("empty once trimmed", |s| {
        let trimmed = s.trim();
        (!trimmed.is_empty()).then(|| trimmed.to_owned())
    })
}

pub fn policy() -> impl Strategy<Value = Policy> {
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
pub fn assigned_people() -> impl Strategy<Value = People> {
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
        (
            prop::option::of(1u32..=mobiwf_xml_schema::limits::MAX_DEADLINE_HOURS),
            any::<bool>(),
        ),
    )
        .prop_map(
            |(
                basis,
                (role, department, team),
                (method, policy, priority, disconnected),
                (deadline, pause_stops),
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
                    pause_stops_deadline: pause_stops && deadline.is_some(),
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
pub const METHODS: [Method; 5] = [
    Method::Fcfa,
    Method::All,
    Method::LeastWorking,
    Method::Priority,
    Method::RoundRobin,
];

/// People extensions for an activity of `kind`: none (often, as in most documents), or on
/// manual and semi-automatic activities any valid combination.
pub fn people(kind: ActivityKind) -> BoxedStrategy<People> {
    if matches!(kind, ActivityKind::Automatic | ActivityKind::Dummy) {
        Just(People::default()).boxed()
    } else {
        prop_oneof![Just(People::default()), assigned_people()].boxed()
    }
}

/// A kind with people extensions that fit it.
pub fn kind_and_people() -> impl Strategy<Value = (ActivityKind, People)> {
    kind().prop_flat_map(|kind| (Just(kind), people(kind)))
}

pub fn activity() -> impl Strategy<Value = Activity> {
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
        (
            routing(),
            class(),
            (prop::option::of(application_id()), loop_back(false)),
        ),
    )
        .prop_map(
            |(
                (id, name, description, ty, status),
                (wait, contingency, time_out, pre),
                ((kind, people), command, compensation, retries, depends, data),
                ((merge, routes, completion), class, (application, loop_back)),
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
                loop_back,
                kind,
                command,
                compensation,
                retries,
                class,
                application,
                people,
                data,
            },
        )
}

pub fn definition() -> impl Strategy<Value = WorkflowDefinition> {
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
        (data(), prop::collection::vec(application(), 0..3)),
    )
        .prop_map(
            |(
                (id, description, name, creator_role),
                activities,
                activity_types,
                partitions,
                partners,
                (data, applications),
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
                    applications,
                }
            },
        )
}

pub fn precondition() -> impl Strategy<Value = Precondition> {
    (any::<u64>(), status(), any::<bool>(), any::<u32>()).prop_map(|(id, status, local, t)| {
        Precondition {
            id: ActivityId(id),
            status,
            local,
            time_out_secs: t,
        }
    })
}

pub fn adjacent() -> impl Strategy<Value = Adjacent> {
    (any::<u64>(), text(), adjacent_states(), data_names()).prop_map(
        |(id, location, states, carries)| Adjacent {
            id: ActivityId(id),
            location,
            states,
            carries,
        },
    )
}

/// Any activity of a partition document the reader accepts.
pub fn partition_activity() -> impl Strategy<Value = PartitionActivity> {
    let (precondition, adjacent) = (precondition(), adjacent());
    (
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
        (
            routing(),
            access(),
            class(),
            (
                prop::option::of(application()),
                loop_back(true),
                any::<bool>(),
            ),
        ),
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
                ((merge, routes, completion), data, class, (application, loop_back, ordered)),
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
                    loop_back,
                    time_out_secs: time_out,
                    kind,
                    command,
                    compensation,
                    retries,
                    class,
                    application,
                    ordered,
                    people,
                    data,
                }
            },
        )
}

pub fn partition_document() -> impl Strategy<Value = PartitionDocument> {
    (
        any::<u64>(),
        prop::option::of(text()),
        prop::collection::vec(partition_activity(), 0..4),
        data(),
    )
        .prop_map(|(id, start_time, activities, data)| PartitionDocument {
            workflow_id: WorkflowId(id),
            start_time,
            activities,
            data,
        })
}
