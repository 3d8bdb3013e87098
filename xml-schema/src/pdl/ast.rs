//! What the parser makes of a PDL text before names become ids: the model's values where they
//! are plain, references still as written (a name or an id), and where each part was written,
//! for the source map and for the problems of resolving them.

use crate::diagnostic::Pos;
use crate::model::{Activity, ActivityKind, DataItem, Rule, TaskState};

/// A name or text as written, and where.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Named {
    pub text: String,
    pub pos: Pos,
}

/// What a reference names: a name (a bare word or a quoted text), or an id (a number).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Target {
    Name(String),
    Id(u64),
}

/// A reference to a task, a task model or a partner, and where it is written.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Ref {
    pub to: Target,
    pub pos: Pos,
}

/// An explicit `ID n;` and where its number is.
pub(super) type Id = Option<(u64, Pos)>;

/// A whole PDL text.
#[derive(Debug, Default)]
pub(super) struct Ast {
    /// The `WORKFLOW` (the first, when there are several: the others are reported).
    pub workflow: Option<Workflow>,
    /// The task models (`TASK Name { ... }` outside the workflow), in text order.
    pub models: Vec<Model>,
    /// The applications (`APPLICATION Name { ... }`), in text order, each with where its
    /// keyword is.
    pub applications: Vec<(crate::model::Application, Pos)>,
}

/// `WORKFLOW [Name] { ... }`.
#[derive(Debug)]
pub(super) struct Workflow {
    /// Where `WORKFLOW` is.
    pub pos: Pos,
    pub name: Option<Named>,
    pub id: Id,
    pub description: String,
    pub creator_role: Option<Named>,
    pub data: Vec<Data>,
    pub tasks: Vec<Task>,
    pub partners: Vec<PartnerDecl>,
    pub partitions: Vec<PartitionDecl>,
}

/// `STRING|NUMBER Name [value|INPUT];` or `FILE Name;`: a declaration of instance data.
#[derive(Debug)]
pub(super) struct Data {
    /// Where its keyword is.
    pub pos: Pos,
    /// Where its name is.
    pub name_pos: Pos,
    pub item: DataItem,
}

/// What a task model gives the tasks made from it, unless a task says otherwise; each with
/// where it is written.
#[derive(Debug, Default, Clone)]
pub(super) struct Inherited {
    pub kind: Option<(ActivityKind, Pos)>,
    pub priority: Option<(i64, Pos)>,
    pub deadline: Option<(u32, Pos)>,
    pub disconnected: Option<(bool, Pos)>,
    pub class: Option<(crate::model::ClassName, Pos)>,
    pub application: Option<(crate::model::ApplicationId, Pos)>,
}

/// `TASK Name { ... }` outside the workflow: a task model, which is an activity type.
#[derive(Debug)]
pub(super) struct Model {
    /// Where `TASK` is.
    pub pos: Pos,
    pub name: Named,
    pub id: Id,
    pub description: String,
    pub inherited: Inherited,
}

/// `TASK Name : Model { ... }` inside the workflow: an activity.
#[derive(Debug)]
pub(super) struct Task {
    /// Where `TASK` is.
    pub pos: Pos,
    pub name: Named,
    /// The task model after `:`.
    pub model: Option<Ref>,
    pub id: Id,
    /// Every plain field; the references below are not in it yet (its preconditions and
    /// routes are empty, its rule none, its contingency what `BLOCK` or `RELEASE` said).
    pub activity: Activity,
    /// Where each clause's value is, by the XML name of its field (`"role"`, `"timeOut"`).
    pub fields: Vec<(&'static str, Pos)>,
    pub preconditions: Vec<Ref>,
    /// `CONTINGENCY Task;`: the task run instead.
    pub contingency: Option<Ref>,
    /// `DEPENDS rule;`: where `DEPENDS` is, and the rule.
    pub depends: Option<(Pos, RuleAst)>,
    /// Where `FLAG` and the votes of `MERGE` are (`"flag"`, `"votes"`).
    pub merge_attrs: Vec<(&'static str, Pos)>,
    pub routes: Vec<RouteAst>,
    /// `LOOP TO Task WHILE flag MAX n;`: where `LOOP` is, and the clause.
    pub loop_back: Option<(Pos, LoopAst)>,
    /// `IN_CONTEXT` and `OUT_CONTEXT`.
    pub reads: Option<NameList>,
    pub writes: Option<NameList>,
}

impl Task {
    /// Where the clause of field `name` is, if it was written.
    pub fn field(&self, name: &str) -> Option<Pos> {
        self.fields
            .iter()
            .find(|(field, _)| *field == name)
            .map(|(_, pos)| *pos)
    }
}

/// A list of data names: where the list is (its first name, or its keyword when empty) and
/// each name.
#[derive(Debug)]
pub(super) struct NameList {
    pub pos: Pos,
    pub names: Vec<Named>,
}

/// `ROUTE [flag] TO Task, ...;`.
#[derive(Debug)]
pub(super) struct RouteAst {
    /// Where `ROUTE` is.
    pub pos: Pos,
    pub flag: Option<Named>,
    pub to: Vec<Ref>,
}

/// `LOOP TO Task WHILE flag MAX n;` after its keyword.
#[derive(Debug)]
pub(super) struct LoopAst {
    pub to: Ref,
    pub flag: Named,
    /// The most passes, and where the number is.
    pub max: (u32, Pos),
}

/// A dependency rule as written: terms name tasks by reference.
#[derive(Debug)]
pub(super) enum RuleAst {
    Term {
        pos: Pos,
        task: Ref,
        state: TaskState,
    },
    And(Pos, Vec<RuleAst>),
    Or(Pos, Vec<RuleAst>),
}

/// `PARTNER Name { ... }`.
#[derive(Debug)]
pub(super) struct PartnerDecl {
    pub pos: Pos,
    pub name: Named,
    pub id: Id,
    pub description: String,
    pub location: String,
    pub skills: Vec<Ref>,
}

/// `PARTITION Name { ... }`.
#[derive(Debug)]
pub(super) struct PartitionDecl {
    pub pos: Pos,
    pub name: Named,
    pub id: Id,
    pub partner: Option<Ref>,
    pub time_out_secs: u32,
    pub tasks: Vec<Ref>,
}

/// An activity with every field at its default, for a task's clauses to fill.
pub(super) fn blank_activity() -> Activity {
    Activity {
        id: crate::model::ActivityId(0),
        name: String::new(),
        description: String::new(),
        activity_type: crate::model::ActivityTypeId(0),
        status: crate::model::Status::default(),
        time_to_wait_secs: 0,
        contingency: crate::model::Contingency::default(),
        time_out_secs: 0,
        preconditions: Vec::new(),
        depends: None::<Rule>,
        merge: crate::model::Merge::default(),
        routes: Vec::new(),
        completion: false,
        loop_back: None,
        kind: ActivityKind::default(),
        command: None,
        compensation: None,
        retries: crate::model::Retries::default(),
        class: None,
        application: None,
        data: crate::model::DataAccess::default(),
        people: crate::model::People::default(),
    }
}
