//! Names → ids for one task: the activity it becomes, with its task model's type and what the
//! model gives it, its references resolved (preconditions, contingency, rule, routes) and the
//! place of each part. A reference that names nothing is reported and left out, as the XML
//! reader leaves out what it cannot read.

use super::ast::{Model, RuleAst, Task};
use super::names::{Resolver, Tables, model_of, written};
use crate::diagnostic::Diagnostic;
use crate::limits::MAX_RULE_TERMS;
use crate::model::{Activity, ActivityId, ActivityTypeId, Contingency, Loop, Route, Rule};
use crate::source_map::Node;

/// How far the numbering of a rule's parts has come: rules (terms, `and`s, `or`s) and terms
/// in text order, as [`Node::Rule`] and [`Node::Term`] count them.
struct Walk {
    rules: usize,
    terms: usize,
}

impl Resolver<'_> {
    /// The activity of `task`, the `i`th, whose id is `id`.
    pub(super) fn activity(
        &mut self,
        i: usize,
        task: &Task,
        id: u64,
        tables: &Tables<'_>,
        models: &[Model],
    ) -> Activity {
        let mut a = task.activity.clone();
        a.id = ActivityId(id);
        a.name = task.name.text.clone();
        self.map.set(Node::Activity(i), task.pos);
        self.map
            .set(Node::ActivityField(i, "nameActivity"), task.name.pos);
        for (field, pos) in &task.fields {
            self.map.set(Node::ActivityField(i, field), *pos);
        }
        if let Some(model) = &task.model {
            self.map
                .set(Node::ActivityField(i, "activityTypeId"), model.pos);
            let found = self.resolve(&tables.models, model);
            a.activity_type = ActivityTypeId(found.map_or(0, |(id, _)| id));
            if let Some(m) = model_of(models, found.and_then(|(_, index)| index)) {
                self.inherit(i, task, m, &mut a);
            }
        }
        for r in &task.preconditions {
            if let Some((pre, _)) = self.resolve(&tables.tasks, r) {
                self.map
                    .set(Node::Precondition(i, a.preconditions.len()), r.pos);
                a.preconditions.push(ActivityId(pre));
            }
        }
        if let Some(r) = &task.contingency
            && let Some((stand_in, _)) = self.resolve(&tables.tasks, r)
        {
            a.contingency = Contingency::Run(ActivityId(stand_in));
        }
        for (name, pos) in &task.merge_attrs {
            self.map.set(Node::MergeAttr(i, name), *pos);
        }
        a.depends = self.depends(i, task, a.id, tables);
        a.routes = self.routes(i, task, tables);
        a.loop_back = self.loop_back(i, task, tables);
        self.access(i, task, &mut a);
        a
    }

    /// What task model `m` gives the `i`th task, `task`, where it does not say otherwise.
    fn inherit(&mut self, i: usize, task: &Task, m: &Model, a: &mut Activity) {
        let given = &m.inherited;
        let mut take = |field: &'static str| {
            let pos = match field {
                "kind" => given.kind.map(|(_, pos)| pos),
                "priority" => given.priority.map(|(_, pos)| pos),
                "deadline" => given.deadline.map(|(_, pos)| pos),
                "class" => given.class.as_ref().map(|(_, pos)| *pos),
                "application" => given.application.as_ref().map(|(_, pos)| *pos),
                _ => given.disconnected.map(|(_, pos)| pos),
            };
            let pos = pos.filter(|_| !written(task, field));
            if let Some(pos) = pos {
                self.map.set(Node::ActivityField(i, field), pos);
            }
            pos.is_some()
        };
        if take("kind")
            && let Some((kind, _)) = given.kind
        {
            a.kind = kind;
        }
        if take("priority")
            && let Some((priority, _)) = given.priority
        {
            a.people.priority = priority;
        }
        if take("deadline") {
            a.people.deadline = given.deadline.map(|(hours, _)| hours);
        }
        if take("disconnected")
            && let Some((disconnected, _)) = given.disconnected
        {
            a.people.disconnected = disconnected;
        }
        if take("class") {
            a.class = given.class.as_ref().map(|(class, _)| class.clone());
        }
        if take("application") {
            a.application = given.application.as_ref().map(|(name, _)| name.clone());
        }
    }

    /// The rule of the `i`th task's `DEPENDS`, its terms resolved and numbered.
    fn depends(
        &mut self,
        i: usize,
        task: &Task,
        id: ActivityId,
        tables: &Tables<'_>,
    ) -> Option<Rule> {
        let (pos, rule) = task.depends.as_ref()?;
        self.map.set(Node::Depends(i), *pos);
        let mut walk = Walk { rules: 0, terms: 0 };
        let rule = self.rule(i, rule, tables, &mut walk);
        if walk.terms > MAX_RULE_TERMS {
            let owner = format!("activity {id}");
            self.diags.push(Diagnostic::new(
                *pos,
                crate::validate::too_many_terms(&owner, walk.terms),
            ));
        }
        rule
    }

    /// One rule of the `i`th task: a term whose task names nothing is left out, and an `and`
    /// or `or` all of whose rules are.
    fn rule(
        &mut self,
        i: usize,
        rule: &RuleAst,
        tables: &Tables<'_>,
        walk: &mut Walk,
    ) -> Option<Rule> {
        let (pos, inner, and) = match rule {
            RuleAst::Term { pos, task, state } => {
                let (activity, _) = self.resolve(&tables.tasks, task)?;
                self.map.set(Node::Rule(i, walk.rules), *pos);
                self.map.set(Node::Term(i, walk.terms), *pos);
                walk.rules += 1;
                walk.terms += 1;
                return Some(Rule::Term {
                    activity: ActivityId(activity),
                    state: *state,
                });
            }
            RuleAst::And(pos, inner) => (pos, inner, true),
            RuleAst::Or(pos, inner) => (pos, inner, false),
        };
        let k = walk.rules;
        walk.rules += 1;
        let rules: Vec<Rule> = inner
            .iter()
            .filter_map(|r| self.rule(i, r, tables, walk))
            .collect();
        if rules.is_empty() && !inner.is_empty() {
            walk.rules = k;
            return None;
        }
        self.map.set(Node::Rule(i, k), *pos);
        Some(if and {
            Rule::And(rules)
        } else {
            Rule::Or(rules)
        })
    }

    /// The routes of the `i`th task: a route all of whose tasks name nothing is left out.
    fn routes(&mut self, i: usize, task: &Task, tables: &Tables<'_>) -> Vec<Route> {
        let mut routes = Vec::new();
        for route in &task.routes {
            let r = routes.len();
            let mut to = Vec::new();
            for target in &route.to {
                if let Some((id, _)) = self.resolve(&tables.tasks, target) {
                    self.map.set(Node::RouteTo(i, r, to.len()), target.pos);
                    to.push(ActivityId(id));
                }
            }
            if to.is_empty() && !route.to.is_empty() {
                continue;
            }
            self.map.set(Node::Route(i, r), route.pos);
            if let Some(flag) = &route.flag {
                self.map.set(Node::RouteFlag(i, r), flag.pos);
            }
            routes.push(Route {
                flag: route.flag.as_ref().map(|f| f.text.clone()),
                to,
            });
        }
        routes
    }

    /// The loop the `i`th task ends (`LOOP TO Task WHILE flag MAX n;`), its task resolved.
    fn loop_back(&mut self, i: usize, task: &Task, tables: &Tables<'_>) -> Option<Loop> {
        let (pos, l) = task.loop_back.as_ref()?;
        let (to, _) = self.resolve(&tables.tasks, &l.to)?;
        self.map.set(Node::Loop(i), *pos);
        self.map.set(Node::LoopAttr(i, "to"), l.to.pos);
        self.map.set(Node::LoopAttr(i, "while"), l.flag.pos);
        self.map.set(Node::LoopAttr(i, "max"), l.max.1);
        Some(Loop {
            to: ActivityId(to),
            while_flag: l.flag.text.clone(),
            max: l.max.0,
            body: Vec::new(),
        })
    }

    /// The data the `i`th task reads and writes, each name at its place.
    fn access(&mut self, i: usize, task: &Task, a: &mut Activity) {
        if let Some(list) = &task.reads {
            self.map.set(Node::Reads(i), list_pos(list));
            for (k, name) in list.names.iter().enumerate() {
                self.map.set(Node::ReadName(i, k), name.pos);
                a.data.reads.push(name.text.clone());
            }
        }
        if let Some(list) = &task.writes {
            self.map.set(Node::Writes(i), list_pos(list));
            for (k, name) in list.names.iter().enumerate() {
                self.map.set(Node::WriteName(i, k), name.pos);
                a.data.writes.push(name.text.clone());
            }
        }
    }
}

/// Where a list of names is: its first name, or its clause's value when it is empty.
fn list_pos(list: &super::ast::NameList) -> crate::Pos {
    list.names.first().map_or(list.pos, |n| n.pos)
}
