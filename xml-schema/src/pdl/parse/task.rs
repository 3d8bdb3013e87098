//! A task (`TASK Name : Model { ... }` inside the workflow): its header and the clauses that
//! say how it runs and where the work flows after it. The clauses of people are in `people`,
//! its `DEPENDS` rule in `rule`.

use super::Parser;
use crate::model::{ActivityKind, Contingency, Merge, Retries, Status};
use crate::pdl::ast::{NameList, Ref, RouteAst, Target, Task, Workflow, blank_activity};
use crate::pdl::grammar::Block;
use crate::pdl::lexer::{Kind, Token};
use crate::read::abbreviate;

/// The spellings of the task types, as *WorkToDo: um sistema de gerenciamento de workflows
/// para ambientes de comunicação sem fio* (§4.1) writes them, and ours, `Dummy`.
pub(in crate::pdl) const KINDS: [(&str, ActivityKind); 4] = [
    ("Automatic", ActivityKind::Automatic),
    ("Semi-automatic", ActivityKind::SemiAutomatic),
    ("Manual", ActivityKind::Manual),
    ("Dummy", ActivityKind::Dummy),
];

/// `TASK Name [: Model] { ... }` inside the workflow, the keyword taken.
pub(super) fn task(p: &mut Parser<'_>, keyword: &Token<'_>, wf: &mut Workflow) {
    let Some(name) = p.name("the name of a task") else {
        return p.skip_clause();
    };
    let owner = format!("task {}", abbreviate(&name.text));
    let model = if p.eat(':') {
        p.reference("the task model of the task")
    } else {
        p.error(
            keyword.pos,
            format!(
                "{owner} has no task model; write TASK {} : Model {{ ... }}, Model being a task \
                 model declared outside WORKFLOW (TASK Model {{ ... }}): its activity type, the \
                 skill a partner needs to run it",
                abbreviate(&name.text)
            ),
        );
        None
    };
    let mut task = Task {
        pos: keyword.pos,
        name,
        model,
        id: None,
        activity: blank_activity(),
        fields: Vec::new(),
        preconditions: Vec::new(),
        contingency: None,
        depends: None,
        merge_attrs: Vec::new(),
        routes: Vec::new(),
        loop_back: None,
        reads: None,
        writes: None,
    };
    p.block(Block::Task, &owner, |p, kw| {
        clause(p, kw, &owner, &mut task)
    });
    wf.tasks.push(task);
}

/// One clause of `task` (called `owner` in messages), its keyword taken.
fn clause(p: &mut Parser<'_>, keyword: &Token<'_>, owner: &str, task: &mut Task) {
    let at = p.here();
    let handled = match keyword.text.as_ref() {
        "ID" => {
            task.id = super::items::id(p);
            true
        }
        "DEPENDS" => {
            task.fields.push(("depends", at));
            task.depends = p.rule(owner).map(|rule| (keyword.pos, rule));
            true
        }
        _ => {
            runs(p, keyword, owner, task)
                || flows(p, keyword, owner, task)
                || p.people_clause(keyword, owner, task)
        }
    };
    if handled {
        p.end_clause(&keyword.text);
    }
}

/// The clauses of what the task is and runs; false when `keyword` is none of them.
fn runs(p: &mut Parser<'_>, keyword: &Token<'_>, owner: &str, task: &mut Task) -> bool {
    let at = p.here();
    let a = &mut task.activity;
    let field = match keyword.text.as_ref() {
        "DESCRIPTION" => {
            a.description = p.text("the DESCRIPTION").unwrap_or_default();
            "descriptionActivity"
        }
        "TYPE" => {
            a.kind = p.kind(owner).unwrap_or_default();
            "kind"
        }
        "STATUS" => {
            a.status = p.status(owner).unwrap_or_default();
            "status"
        }
        "TIME_TO_WAIT" => {
            a.time_to_wait_secs = p.seconds("the TIME_TO_WAIT").unwrap_or(0);
            "timeToWait"
        }
        "TIMEOUT" => {
            a.time_out_secs = p.seconds("the TIMEOUT").unwrap_or(0);
            "timeOut"
        }
        "COMMAND" => {
            a.command = p.text("the COMMAND");
            "command"
        }
        "COMPENSATION" => {
            a.compensation = p.text("the COMPENSATION");
            "compensation"
        }
        "RETRIES" => {
            a.retries = p.retries();
            "retries"
        }
        "TASK_CLASS" => {
            a.class = p.class(owner);
            "class"
        }
        "APPLICATION" => {
            a.application = p.application_name(owner);
            "application"
        }
        "IN_CONTEXT" => {
            task.reads = Some(p.name_list(at));
            "reads"
        }
        "OUT_CONTEXT" => {
            task.writes = Some(p.name_list(at));
            "writes"
        }
        _ => return false,
    };
    task.fields.push((field, at));
    true
}

/// The clauses of where the work flows: preconditions, merge, routes, completion, loop and
/// contingency; false when `keyword` is none of them.
fn flows(p: &mut Parser<'_>, keyword: &Token<'_>, owner: &str, task: &mut Task) -> bool {
    let at = p.here();
    let field = match keyword.text.as_ref() {
        "PRECONDITIONS" => {
            task.preconditions = p.references("a task (a precondition)");
            "preconditions"
        }
        "MERGE" => {
            task.activity.merge = p.merge(owner, &mut task.merge_attrs).unwrap_or_default();
            "merge"
        }
        "ROUTE" => {
            let route = p.route(keyword);
            task.routes.push(route);
            if task.field("routes").is_some() {
                return true;
            }
            "routes"
        }
        "COMPLETION" => {
            let expected = "true (when it succeeds the instance ends, and every task not yet \
                            finished is cancelled) or false (the default)";
            task.activity.completion = p.truth("COMPLETION", expected).unwrap_or(false);
            "completion"
        }
        "LOOP" => {
            task.loop_back = p.loop_clause().map(|l| (keyword.pos, l));
            "loop"
        }
        "CONTINGENCY" => {
            let (rule, stand_in) = p.contingency();
            task.activity.contingency = rule;
            task.contingency = stand_in;
            "contingencyActivityId"
        }
        _ => return false,
    };
    task.fields.push((field, at));
    true
}

impl Parser<'_> {
    /// `TYPE Automatic|Semi-automatic|Manual|Dummy` of `owner` (any case, `-` and `_` left
    /// out).
    pub fn kind(&mut self, owner: &str) -> Option<ActivityKind> {
        let names = KINDS.map(|(name, _)| name);
        let expected = "Automatic, Semi-automatic, Manual or Dummy (a routing point that does \
                        nothing)";
        self.choice(&format!("the TYPE of {owner}"), &names, expected, true)
            .map(|i| KINDS[i].1)
    }

    /// `STATUS PENDING|SUCCEEDED|FAILED` of `owner`.
    fn status(&mut self, owner: &str) -> Option<Status> {
        const NAMES: [&str; 4] = ["PENDING", "SUCCEEDED", "FAILED", "SUCCEDED"];
        let expected = "PENDING (the default), SUCCEEDED or FAILED";
        self.choice(&format!("the STATUS of {owner}"), &NAMES, expected, false)
            .map(|i| match i {
                0 => Status::Pending,
                2 => Status::Failed,
                _ => Status::Succeeded,
            })
    }

    /// `RETRIES count [WAIT seconds [SECONDS]]`.
    fn retries(&mut self) -> Retries {
        let max = crate::limits::MAX_RETRIES;
        let expected = format!(
            "how many more tries after a failed one, a whole number from 0 to {max} (the limit \
             MAX_RETRIES)"
        );
        let at = self.here();
        let count = self.whole::<u32>("the RETRIES", &expected);
        let count = match count {
            Some(count) if count > max => {
                self.error(at, format!("RETRIES is {count}; expected {expected}"));
                None
            }
            count => count,
        };
        let wait_secs = if self.eat_word("WAIT") {
            self.seconds("the WAIT of RETRIES").unwrap_or(0)
        } else {
            0
        };
        Retries {
            count: count.unwrap_or(0),
            wait_secs,
        }
    }

    /// The data names of `IN_CONTEXT` or `OUT_CONTEXT` (whose value starts at `at`).
    fn name_list(&mut self, at: crate::Pos) -> NameList {
        NameList {
            pos: at,
            names: self.names("a data name"),
        }
    }

    /// `MERGE AND | OR [FLAG f] | VOTE n` of `owner`; where `FLAG`'s flag and `VOTE`'s number
    /// are goes to `attrs`.
    fn merge(&mut self, owner: &str, attrs: &mut Vec<(&'static str, crate::Pos)>) -> Option<Merge> {
        let expected = "AND (the default: every precondition finished), OR (the first to finish; \
                        OR FLAG approved: the first to finish with that completion flag) or VOTE \
                        n (n of them succeeded)";
        let which = self.choice(
            &format!("the MERGE of {owner}"),
            &["AND", "OR", "VOTE"],
            expected,
            false,
        )?;
        match which {
            0 => Some(Merge::All),
            1 => {
                let flag = if self.eat_word("FLAG") {
                    let flag = self.name("the completion flag after FLAG")?;
                    attrs.push(("flag", flag.pos));
                    Some(flag.text)
                } else {
                    None
                };
                Some(Merge::First { flag })
            }
            _ => {
                attrs.push(("votes", self.here()));
                let votes = self.whole::<u32>(
                    "the number of votes",
                    "how many preconditions must succeed, a whole number from 1 to the number of \
                     preconditions",
                )?;
                Some(Merge::Vote { votes })
            }
        }
    }

    /// `ROUTE [flag] TO Task, ...`, its keyword taken.
    fn route(&mut self, keyword: &Token<'_>) -> RouteAst {
        let flag = if self.peek().is_word("TO") {
            None
        } else {
            self.name("the completion flag of the route (or TO, for the route taken otherwise)")
        };
        let to = if self.eat_word("TO") {
            self.references("a task (a successor the route leads to)")
        } else {
            let found = self.peek().clone();
            if found.kind != Kind::End {
                self.error(
                    found.pos,
                    format!(
                        "expected TO and the tasks the route leads to, e.g. ROUTE approved TO \
                         Order, Invoice; found {}",
                        found.shown()
                    ),
                );
            }
            Vec::new()
        };
        RouteAst {
            pos: keyword.pos,
            flag,
            to,
        }
    }

    /// `CONTINGENCY BLOCK | RELEASE | Task` (or the published numbers -1, 0, or an id): what
    /// happens when the task fails, and the task run instead.
    fn contingency(&mut self) -> (Contingency, Option<Ref>) {
        let token = self.peek().clone();
        if token.kind == Kind::Word && matches!(token.text.as_ref(), "BLOCK" | "RELEASE") {
            self.bump();
            let rule = if token.text == "BLOCK" {
                Contingency::Block
            } else {
                Contingency::Release
            };
            return (rule, None);
        }
        if token.kind == Kind::Number && token.text.starts_with('-') {
            let code = self.whole::<i128>("the CONTINGENCY", "-1, 0 or the id of a task");
            return match code.map(Contingency::from_code) {
                Some(Some(rule)) => (rule, None),
                _ => {
                    self.error(
                        token.pos,
                        "CONTINGENCY is BLOCK (or -1: abort and block the successors), RELEASE \
                         (or 0: abort and release them) or the task to run instead",
                    );
                    (Contingency::Block, None)
                }
            };
        }
        match self.reference("the task to run instead (or BLOCK, or RELEASE)") {
            Some(Ref {
                to: Target::Id(0), ..
            }) => (Contingency::Release, None),
            Some(stand_in) => (Contingency::Block, Some(stand_in)),
            None => (Contingency::Block, None),
        }
    }
}
