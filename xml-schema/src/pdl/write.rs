//! Model → PDL text: the applications first, then the task models (one per activity type),
//! then the workflow with its data, tasks, partners and partitions; a clause only where its
//! field differs from the default, `ID` only where the id is not the one its place gives.
//!
//! Whatever the model, the text reads back to it: a name is written bare only when it is a
//! plain word and no keyword, else in quotes with escapes; a reference is a name only when that
//! name and its id each belong to one thing, else the id. Activity types have no names in the
//! model, so their task models are called `type1`, `type2` (by id).

use std::collections::HashMap;
use std::fmt::Write as _;

use super::grammar::is_reserved;
use super::lexer::{Kind, Lexer};
use super::parse::KINDS;
use crate::limits::MAX_WORD_CHARS;
use crate::model::{
    Activity, ActivityKind, Basis, Contingency, DataItem, DataKind, Input, Merge, Method, People,
    Policy, Rule, Status, WorkflowDefinition,
};

/// Writes a workflow definition as PDL text.
pub fn write_pdl(def: &WorkflowDefinition) -> String {
    let model_names = model_names(def);
    let w = Writer {
        out: String::new(),
        tasks: Refs::new(def.activities.iter().map(|a| (a.id.0, a.name.as_str()))),
        models: Refs::new(
            def.activity_types
                .iter()
                .zip(&model_names)
                .map(|(t, name)| (t.id.0, name.as_str())),
        ),
        partners: Refs::new(def.partners.iter().map(|p| (p.id.0, p.name.as_str()))),
    };
    w.write(def, &model_names)
}

/// The names the task models are written with: `type<id>`, and `type<id>_<place>` for a
/// second one with that id.
fn model_names(def: &WorkflowDefinition) -> Vec<String> {
    let mut seen: HashMap<u64, usize> = HashMap::new();
    def.activity_types
        .iter()
        .enumerate()
        .map(|(k, t)| {
            let count = seen.entry(t.id.0).or_default();
            *count += 1;
            if *count == 1 {
                format!("type{}", t.id)
            } else {
                format!("type{}_{}", t.id, k + 1)
            }
        })
        .collect()
}

/// How references to one kind of thing are written: by name where the name and the id each
/// belong to one of them, else by id.
struct Refs {
    names: HashMap<u64, String>,
}

impl Refs {
    fn new<'a>(items: impl Iterator<Item = (u64, &'a str)> + Clone) -> Self {
        let mut by_name: HashMap<&str, usize> = HashMap::new();
        let mut by_id: HashMap<u64, usize> = HashMap::new();
        for (id, name) in items.clone() {
            *by_name.entry(name).or_default() += 1;
            *by_id.entry(id).or_default() += 1;
        }
        let names = items
            .filter(|(id, name)| by_name[name] == 1 && by_id[id] == 1)
            .map(|(id, name)| (id, word(name)))
            .collect();
        Refs { names }
    }

    fn to(&self, id: u64) -> String {
        self.names
            .get(&id)
            .cloned()
            .unwrap_or_else(|| id.to_string())
    }

    fn list(&self, ids: impl Iterator<Item = u64>) -> String {
        ids.map(|id| self.to(id)).collect::<Vec<_>>().join(", ")
    }
}

/// `name` as it can be written: bare when it is a plain word and no keyword, else quoted.
pub(super) fn word(name: &str) -> String {
    let mut chars = name.chars();
    let bare = chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '-'))
        && name.chars().count() <= MAX_WORD_CHARS
        && !is_reserved(name);
    if bare { name.to_owned() } else { quoted(name) }
}

/// `text` in double quotes, with `\` escapes for `"`, `\`, line breaks, tabs and every other
/// control character.
pub(super) fn quoted(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 2);
    out.push('"');
    for c in text.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if c.is_control() => {
                let _ = write!(out, "\\u{{{:x}}}", u32::from(c));
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// `text` bare when the lexer reads it back as that one number, else quoted.
fn number(text: &str) -> String {
    let mut lexer = Lexer::new(text);
    let token = lexer.next_token();
    let one = token.kind == Kind::Number
        && token.text == text
        && lexer.next_token().kind == Kind::End
        && lexer.problems.is_empty();
    if one { text.to_owned() } else { quoted(text) }
}

/// The id a thing gets from its place after one with id `before` (none for the first).
fn implied(before: Option<u64>) -> Option<u64> {
    match before {
        None => Some(1),
        Some(id) => id.checked_add(1),
    }
}

struct Writer {
    out: String,
    tasks: Refs,
    models: Refs,
    partners: Refs,
}

impl Writer {
    fn line(&mut self, depth: usize, text: &str) {
        for _ in 0..depth {
            self.out.push_str("    ");
        }
        self.out.push_str(text);
        self.out.push('\n');
    }

    /// A block `head { clauses }`, on one line when it has no clause.
    fn block(&mut self, depth: usize, head: &str, clauses: &[String]) {
        if clauses.is_empty() {
            self.line(depth, &format!("{head} {{ }}"));
            return;
        }
        self.line(depth, &format!("{head} {{"));
        for clause in clauses {
            self.line(depth + 1, clause);
        }
        self.line(depth, "}");
    }

    fn write(mut self, def: &WorkflowDefinition, model_names: &[String]) -> String {
        for application in &def.applications {
            let mut clauses = vec![format!("COMMAND {};", quoted(&application.command))];
            if application.size_kib != 0 {
                clauses.push(format!("SIZE {};", application.size_kib));
            }
            if let Some(os) = &application.os {
                clauses.push(format!("OS {};", word(os)));
            }
            let head = format!("APPLICATION {}", word(application.id.as_str()));
            self.block(0, &head, &clauses);
        }
        if !def.applications.is_empty() {
            self.out.push('\n');
        }
        let mut before = None;
        for (t, name) in def.activity_types.iter().zip(model_names) {
            let mut clauses = Vec::new();
            id_clause(&mut clauses, t.id.0, before);
            before = Some(t.id.0);
            text_clause(&mut clauses, "DESCRIPTION", &t.description);
            self.block(0, &format!("TASK {name}"), &clauses);
        }
        if !def.activity_types.is_empty() {
            self.out.push('\n');
        }
        let head = match &def.name {
            Some(name) => format!("WORKFLOW {} {{", word(name.as_str())),
            None => "WORKFLOW {".to_owned(),
        };
        self.line(0, &head);
        let mut own = Vec::new();
        if def.id.0 != 1 {
            own.push(format!("ID {};", def.id));
        }
        text_clause(&mut own, "DESCRIPTION", &def.description);
        if let Some(role) = &def.creator_role {
            own.push(format!("CREATOR_ROLE {};", word(role.as_str())));
        }
        own.extend(def.data.iter().map(data_clause));
        for clause in &own {
            self.line(1, clause);
        }
        self.tasks_and_places(def);
        self.line(0, "}");
        self.out
    }

    /// The tasks, partners and partitions of the workflow, a blank line before each.
    fn tasks_and_places(&mut self, def: &WorkflowDefinition) {
        let mut before = None;
        for a in &def.activities {
            let clauses = self.task_clauses(a, before);
            before = Some(a.id.0);
            let head = format!(
                "TASK {} : {}",
                word(&a.name),
                self.models.to(a.activity_type.0)
            );
            self.out.push('\n');
            self.block(1, &head, &clauses);
        }
        let mut before = None;
        for p in &def.partners {
            let mut clauses = Vec::new();
            id_clause(&mut clauses, p.id.0, before);
            before = Some(p.id.0);
            text_clause(&mut clauses, "DESCRIPTION", &p.description);
            text_clause(&mut clauses, "ADDRESS", &p.location);
            if !p.skills.is_empty() {
                let skills = self.models.list(p.skills.iter().map(|s| s.0));
                clauses.push(format!("SKILLS {skills};"));
            }
            self.out.push('\n');
            self.block(1, &format!("PARTNER {}", word(&p.name)), &clauses);
        }
        let mut before = None;
        for p in &def.partitions {
            let mut clauses = Vec::new();
            id_clause(&mut clauses, p.id.0, before);
            before = Some(p.id.0);
            clauses.push(format!("PARTNER {};", self.partners.to(p.partner.0)));
            if p.time_out_secs != 0 {
                clauses.push(format!("TIMEOUT {} SECONDS;", p.time_out_secs));
            }
            if !p.activities.is_empty() {
                let tasks = self.tasks.list(p.activities.iter().map(|a| a.0));
                clauses.push(format!("TASKS {tasks};"));
            }
            self.out.push('\n');
            self.block(1, &format!("PARTITION {}", word(&p.name)), &clauses);
        }
    }

    /// The clauses of activity `a`, which comes after one with id `before`.
    fn task_clauses(&self, a: &Activity, before: Option<u64>) -> Vec<String> {
        let mut c = Vec::new();
        id_clause(&mut c, a.id.0, before);
        text_clause(&mut c, "DESCRIPTION", &a.description);
        let kind = KINDS.iter().find(|(_, k)| *k == a.kind);
        if let Some((name, _)) = kind.filter(|_| a.kind != ActivityKind::Automatic) {
            c.push(format!("TYPE {name};"));
        }
        match a.status {
            Status::Pending => {}
            Status::Succeeded => c.push("STATUS SUCCEEDED;".to_owned()),
            Status::Failed => c.push("STATUS FAILED;".to_owned()),
        }
        self.flow_clauses(&mut c, a);
        if a.time_to_wait_secs != 0 {
            c.push(format!("TIME_TO_WAIT {} SECONDS;", a.time_to_wait_secs));
        }
        if a.time_out_secs != 0 {
            c.push(format!("TIMEOUT {} SECONDS;", a.time_out_secs));
        }
        match a.contingency {
            Contingency::Block => {}
            Contingency::Release => c.push("CONTINGENCY RELEASE;".to_owned()),
            Contingency::Run(x) => c.push(format!("CONTINGENCY {};", self.tasks.to(x.0))),
        }
        if let Some(command) = &a.command {
            c.push(format!("COMMAND {};", quoted(command)));
        }
        if let Some(compensation) = &a.compensation {
            c.push(format!("COMPENSATION {};", quoted(compensation)));
        }
        if !a.retries.is_default() {
            let wait = match a.retries.wait_secs {
                0 => String::new(),
                secs => format!(" WAIT {secs} SECONDS"),
            };
            c.push(format!("RETRIES {}{wait};", a.retries.count));
        }
        if let Some(class) = &a.class {
            c.push(format!("TASK_CLASS {};", word(class.as_str())));
        }
        if let Some(application) = &a.application {
            c.push(format!("APPLICATION {};", word(application.as_str())));
        }
        names_clause(&mut c, "IN_CONTEXT", &a.data.reads);
        names_clause(&mut c, "OUT_CONTEXT", &a.data.writes);
        people_clauses(&mut c, &a.people);
        c
    }

    /// The clauses of where work flows around `a`: preconditions, rule, merge, routes,
    /// completion, loop.
    fn flow_clauses(&self, c: &mut Vec<String>, a: &Activity) {
        if !a.preconditions.is_empty() {
            let pre = self.tasks.list(a.preconditions.iter().map(|p| p.0));
            c.push(format!("PRECONDITIONS {pre};"));
        }
        if let Some(rule) = &a.depends {
            c.push(format!("DEPENDS {};", self.rule(rule)));
        }
        match &a.merge {
            Merge::All => {}
            Merge::First { flag: None } => c.push("MERGE OR;".to_owned()),
            Merge::First { flag: Some(flag) } => c.push(format!("MERGE OR FLAG {};", word(flag))),
            Merge::Vote { votes } => c.push(format!("MERGE VOTE {votes};")),
        }
        for route in &a.routes {
            let flag = route.flag.as_deref().map(|f| format!(" {}", word(f)));
            let to = self.tasks.list(route.to.iter().map(|t| t.0));
            let to = if to.is_empty() { to } else { format!(" {to}") };
            c.push(format!("ROUTE{} TO{to};", flag.unwrap_or_default()));
        }
        if a.completion {
            c.push("COMPLETION true;".to_owned());
        }
        if let Some(l) = &a.loop_back {
            let to = self.tasks.to(l.to.0);
            c.push(format!(
                "LOOP TO {to} WHILE {} MAX {};",
                word(&l.while_flag),
                l.max
            ));
        }
    }

    fn rule(&self, rule: &Rule) -> String {
        let (operator, rules) = match rule {
            Rule::Term { activity, state } => {
                return format!("{} -> {}", self.tasks.to(activity.0), state.published());
            }
            Rule::And(rules) => ("and", rules),
            Rule::Or(rules) => ("or", rules),
        };
        let inner: Vec<String> = rules.iter().map(|r| self.rule(r)).collect();
        format!("{operator}({})", inner.join(", "))
    }
}

/// `ID n;` unless `id` is the one its place after `before` gives.
fn id_clause(clauses: &mut Vec<String>, id: u64, before: Option<u64>) {
    if implied(before) != Some(id) {
        clauses.push(format!("ID {id};"));
    }
}

/// `KEYWORD "text";` unless `text` is empty.
fn text_clause(clauses: &mut Vec<String>, keyword: &str, text: &str) {
    if !text.is_empty() {
        clauses.push(format!("{keyword} {};", quoted(text)));
    }
}

/// `KEYWORD a, b;` unless `names` is empty.
fn names_clause(clauses: &mut Vec<String>, keyword: &str, names: &[String]) {
    if !names.is_empty() {
        let names: Vec<String> = names.iter().map(|n| word(n)).collect();
        clauses.push(format!("{keyword} {};", names.join(", ")));
    }
}

/// A declaration of instance data.
fn data_clause(item: &DataItem) -> String {
    let keyword = match item.kind {
        DataKind::String => "STRING",
        DataKind::Number => "NUMBER",
        DataKind::File => return format!("FILE {};", word(&item.name)),
    };
    let value = match &item.input {
        Input::No => String::new(),
        Input::Required => " INPUT".to_owned(),
        Input::Default(v) if item.kind == DataKind::Number => format!(" {}", number(v)),
        Input::Default(v) => format!(" {}", quoted(v)),
    };
    format!("{keyword} {}{value};", word(&item.name))
}

/// The clauses of people that differ from their defaults.
fn people_clauses(c: &mut Vec<String>, people: &People) {
    let groups = [
        ("ROLE", people.role.as_ref().map(|r| r.as_str())),
        ("DEPARTMENT", people.department.as_ref().map(|d| d.as_str())),
        ("TEAM", people.team.as_ref().map(|t| t.as_str())),
    ];
    for (keyword, id) in groups {
        if let Some(id) = id {
            c.push(format!("{keyword} {};", word(id)));
        }
    }
    let mut assignment = String::new();
    if people.basis != Basis::default() {
        let _ = write!(assignment, " BASIS {}", people.basis.as_str());
    }
    if people.method != Method::default() {
        let _ = write!(assignment, " METHOD {}", people.method.as_str());
    }
    if !assignment.is_empty() {
        c.push(format!("ASSIGNMENT{assignment};"));
    }
    if people.policy != Policy::All {
        c.push(format!("POLICY {};", people.policy.to_text()));
    }
    if people.priority != 0 {
        c.push(format!("PRIORITY {};", people.priority));
    }
    if people.disconnected {
        c.push("DISCONNECTED_OPERATION true;".to_owned());
    }
    if let Some(hours) = people.deadline {
        c.push(format!("DEADLINE {hours} HOURS;"));
    }
    if people.pause_stops_deadline {
        c.push("PAUSE_STOPS_DEADLINE true;".to_owned());
    }
}
