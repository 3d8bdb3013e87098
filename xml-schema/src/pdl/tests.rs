//! Unit tests of reading PDL: WorkToDo's own example, names and ids, what task models give
//! their tasks, where validation reports, the limits, and that hostile sizes cost linear work.

use super::*;
use crate::model::{
    ActivityId, ActivityKind, ActivityTypeId, Contingency, DataKind, Input, Merge, Rule, TaskState,
};
use crate::source_map::Node;
use crate::work::{assert_linear, steps_of};

fn loaded(text: &str) -> Loaded<WorkflowDefinition> {
    load(text.as_bytes()).unwrap_or_else(|d| panic!("{}", d.render("test.pdl")))
}

fn problems(text: &str) -> Vec<String> {
    let rendered = load(text.as_bytes()).expect_err("problems").render("t.pdl");
    rendered.lines().map(str::to_owned).collect()
}

/// The example of *WorkToDo: um sistema de gerenciamento de workflows para ambientes de
/// comunicação sem fio* (§4.1), without what mobiwf does not hold yet (the file's path and
/// size, the model's application), and the task it depends on.
const WORKTODO: &str = r#"
TASK PreencherFormulario {
    TYPE Semi-automatic;
    PRIORITY 10;
    DEADLINE 48 HOURS;
    DISCONNECTED_OPERATION true;
}
WORKFLOW Manutencao {
    CREATOR_ROLE Escritorio;
    FILE OrdemServico;
    TASK CriarOrdemServico:PreencherFormulario {
        ROLE Escritorio;
        TYPE Manual;
        OUT_CONTEXT OrdemServico;
    }
    TASK VisitarCliente:PreencherFormulario {
        ROLE Tecnico;
        IN_CONTEXT OrdemServico;
        OUT_CONTEXT OrdemServico;
        DEPENDS CriarOrdemServico -> SUCCEDED;
        DESCRIPTION "Preencher os campos 'Serviços' e
                    'Materiais' da Ordem de Serviço";
    }
}
"#;

#[test]
fn worktodos_example_reads_with_what_its_task_model_gives() {
    let def = loaded(WORKTODO).value;
    assert_eq!(def.name.as_ref().map(|n| n.as_str()), Some("Manutencao"));
    assert_eq!(
        def.creator_role.as_ref().map(|r| r.as_str()),
        Some("Escritorio")
    );
    assert_eq!(def.id.0, 1);
    assert_eq!(def.activity_types.len(), 1);
    assert_eq!(def.data[0].kind, DataKind::File);
    let [create, visit] = &def.activities[..] else {
        panic!("two tasks");
    };
    assert_eq!((create.id, visit.id), (ActivityId(1), ActivityId(2)));
    assert_eq!(create.kind, ActivityKind::Manual, "the task's TYPE wins");
    assert_eq!(visit.kind, ActivityKind::SemiAutomatic, "the model's TYPE");
    for a in [create, visit] {
        assert_eq!(a.activity_type, ActivityTypeId(1));
        assert_eq!(a.people.priority, 10);
        assert_eq!(a.people.deadline, Some(48));
        assert!(a.people.disconnected);
    }
    assert_eq!(
        visit.depends,
        Some(Rule::Term {
            activity: ActivityId(1),
            state: TaskState::Succeeded
        })
    );
    assert_eq!(visit.data.reads, ["OrdemServico"]);
    assert!(
        visit
            .description
            .contains("e\n                    'Materiais'")
    );
}

#[test]
fn ids_come_by_appearance_unless_given_and_references_may_be_ids() {
    let def = loaded(
        r#"TASK S { }
        TASK T { ID 7; }
        WORKFLOW {
            ID 4;
            TASK A : S { PRECONDITIONS C; CONTINGENCY 12; }
            TASK B : 7 { ID 10; PRECONDITIONS A, 11; MERGE OR FLAG ok; }
            TASK C : T { ROUTE TO 12, A, B; }
            TASK "two words" : S { PRECONDITIONS 11; }
            NUMBER reading 42;
            STRING note INPUT;
        }"#,
    )
    .value;
    let ids: Vec<u64> = def.activities.iter().map(|a| a.id.0).collect();
    assert_eq!(ids, [1, 10, 11, 12]);
    assert_eq!(def.id.0, 4);
    let types: Vec<u64> = def.activity_types.iter().map(|t| t.id.0).collect();
    assert_eq!(types, [1, 7]);
    assert_eq!(def.activities[0].preconditions, [ActivityId(11)]);
    assert_eq!(
        def.activities[0].contingency,
        Contingency::Run(ActivityId(12))
    );
    assert_eq!(def.activities[1].activity_type, ActivityTypeId(7));
    assert_eq!(
        def.activities[1].merge,
        Merge::First {
            flag: Some("ok".to_owned())
        }
    );
    assert_eq!(def.activities[3].name, "two words");
    assert_eq!(def.data[0].input, Input::Default("42".to_owned()));
    assert_eq!(def.data[1].input, Input::Required);
}

#[test]
fn validation_speaks_of_the_places_in_the_text() {
    let text = "TASK S { }\nWORKFLOW {\n  TASK A : S { PRECONDITIONS 99; }\n  TASK B : S { \
                TYPE Manual;\n    RETRIES 2; }\n}\n";
    let got = problems(text);
    assert_eq!(got.len(), 2, "{got:?}");
    assert!(got[0].starts_with("t.pdl:3:30: error: activity 1 lists precondition 99"));
    assert!(got[1].starts_with("t.pdl:5:13: error: activity 2 has <retries> but is manual"));
    let def = loaded("TASK S { TYPE Manual; PRIORITY 3; }\nWORKFLOW { TASK A : S { ROLE r; } }");
    let map = &def.source_map;
    assert_eq!(map.pos(Node::ActivityField(0, "kind")).line, 1);
    assert_eq!(map.pos(Node::ActivityField(0, "role")).line, 2);
}

#[test]
fn limits_are_named_in_their_messages() {
    let too_big = vec![b' '; crate::limits::MAX_DOCUMENT_BYTES + 1];
    let big = load(&too_big).expect_err("refused").render("big.pdl");
    assert!(big.contains("MAX_DOCUMENT_BYTES"), "{big}");
    let terms: Vec<String> = (0..=crate::limits::MAX_RULE_TERMS)
        .map(|_| "A -> RUNNING".to_owned())
        .collect();
    let text = format!(
        "TASK S {{ }} WORKFLOW {{ TASK A : S {{ }} TASK B : S {{ DEPENDS and({}); }} }}",
        terms.join(", ")
    );
    let got = problems(&text);
    assert!(got.iter().any(|p| p.contains("MAX_RULE_TERMS")), "{got:?}");
    let after_last = format!(
        "TASK S {{ }} WORKFLOW {{ TASK A : S {{ ID {}; }} TASK B : S {{ }} }}",
        u64::MAX
    );
    let got = problems(&after_last);
    assert!(got[0].contains("no id follows; give it an ID"), "{got:?}");
}

#[test]
fn reading_stops_at_the_problem_limit_and_counts_the_rest() {
    let garbage = "WORKFLOW { ".to_owned() + &"ROEL x; ".repeat(2 * MAX_PDL_PROBLEMS) + "}";
    let got = load(garbage.as_bytes()).expect_err("problems");
    assert_eq!(got.len(), MAX_PDL_PROBLEMS + 1);
    assert!(got.0[MAX_PDL_PROBLEMS].message.contains("MAX_PDL_PROBLEMS"));
    let refs = vec!["Nobody"; 2 * MAX_PDL_PROBLEMS].join(", ");
    let text = format!("TASK S {{ }} WORKFLOW {{ TASK A : S {{ PRECONDITIONS {refs}; }} }}");
    let got = load(text.as_bytes()).expect_err("problems");
    assert_eq!(got.len(), MAX_PDL_PROBLEMS + 1);
    assert!(
        got.0[MAX_PDL_PROBLEMS]
            .message
            .contains(&format!("and {MAX_PDL_PROBLEMS} more"))
    );
}

#[test]
fn a_byte_order_mark_is_honoured() {
    let mut utf16 = vec![0xFF, 0xFE];
    for unit in "TASK S { } WORKFLOW { TASK \u{e9} : S { } }".encode_utf16() {
        utf16.extend(unit.to_le_bytes());
    }
    assert_eq!(
        load(&utf16)
            .map(|l| l.value.activities[0].name.clone())
            .ok(),
        Some("é".to_owned())
    );
    let mut utf8 = b"\xEF\xBB\xBF".to_vec();
    utf8.extend_from_slice(b"TASK S { } WORKFLOW { }");
    assert!(load(&utf8).is_ok());
}

/// A workflow of `n` tasks in a chain, each after the one before by name, each also naming a
/// task that does not exist: the steps of reading and checking it.
fn steps_of_a_chain(n: usize) -> u64 {
    let mut text = String::from("TASK S { } WORKFLOW {\n");
    for k in 0..n {
        let before = if k == 0 {
            String::new()
        } else {
            format!("t{}, ", k - 1)
        };
        text.push_str(&format!(
            "TASK t{k} : S {{ PRECONDITIONS {before}missing{k}; }}\n"
        ));
    }
    text.push('}');
    let (result, steps) = steps_of(|| load(text.as_bytes()));
    assert!(result.is_err());
    steps
}

#[test]
fn hostile_sizes_cost_linear_work() {
    assert_linear(
        "a chain of tasks with misspelt names",
        2_000,
        || steps_of_a_chain(2_000),
        || steps_of_a_chain(4_000),
    );
}

/// The steps of reading a text of `n` unclosed `\u{` escapes, one after another in one text.
fn steps_of_escapes(n: usize) -> u64 {
    let text = format!("WORKFLOW w {{ DESCRIPTION \"{}\"; }}", "\\u{".repeat(n));
    let (result, steps) = steps_of(|| load(text.as_bytes()));
    assert!(result.is_err());
    steps
}

#[test]
fn many_unclosed_escapes_cost_linear_work() {
    assert_linear(
        "a text of unclosed \\u{ escapes",
        20_000,
        || steps_of_escapes(20_000),
        || steps_of_escapes(40_000),
    );
}

#[test]
fn the_creator_role_is_a_role_id_in_both_languages() {
    let text = "TASK S { }\nWORKFLOW w {\n  CREATOR_ROLE \"a b\";\n  TASK t : S { }\n}";
    assert_eq!(
        problems(text),
        [
            "t.pdl:3:16: error: CREATOR_ROLE: role id \"a b\" contains white space; a role id is \
             one word, as in the organisation document, e.g. \"a-b\""
        ]
    );
    let long = "r".repeat(crate::limits::MAX_ID_CHARS + 1);
    let text = format!("TASK S {{ }} WORKFLOW w {{ CREATOR_ROLE {long}; TASK t : S {{ }} }}");
    assert!(problems(&text)[0].contains("(MAX_ID_CHARS)"));
    let xml = "<workflow id=\"1\">\n<creatorRole> a b </creatorRole>\n<activities><activity \
               id=\"1\"><activityTypeId>1</activityTypeId></activity></activities>\
               <activityTypes><activityType id=\"1\"/></activityTypes></workflow>";
    let rendered = crate::load_definition(xml.as_bytes())
        .expect_err("refused")
        .render("w.xml");
    assert!(
        rendered
            .starts_with("w.xml:2:15: error: <creatorRole>: role id \"a b\" contains white space"),
        "{rendered}"
    );
    assert!(crate::load_definition(xml.replace(" a b ", " office ").as_bytes()).is_ok());
}
