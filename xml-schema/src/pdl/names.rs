//! Names → ids: the step from the parsed text to the model. Tasks, task models, partners and
//! partitions get their ids by appearance (the first 1, each next one the id after the one
//! before it) unless they say `ID n`; a reference by name becomes the id of the one thing of
//! that name, a reference by number is that id. Every part gets its place in the
//! [`SourceMap`], at the same [`Node`]s the XML reader sets, so that validation speaks of the
//! PDL text.

use std::collections::HashMap;

use super::ast::{Ast, Id, Model, Named, Ref, Target, Task, Workflow};
use crate::diagnostic::{Diagnostic, Pos};
use crate::model::{
    ActivityId, ActivityType, ActivityTypeId, DefinitionName, Partition, PartitionId, Partner,
    PartnerId, RoleId, WorkflowDefinition, WorkflowId,
};
use crate::read::{abbreviate, suggest};
use crate::source_map::{Node, SourceMap};

/// Most misspelt names a text is given a suggestion for: each compares the name with every
/// name of its kind, so a text of many misspellings would otherwise cost their product.
const SUGGESTIONS: usize = 64;

/// Longest name a suggestion is looked for, and made of, in characters.
const SUGGESTED_CHARS: usize = 64;

/// The model of `ast`, its problems of names and ids in `diags` and its places in `map`;
/// `None` when the text holds no workflow.
pub(super) fn build(
    ast: Ast,
    diags: &mut Vec<Diagnostic>,
    map: &mut SourceMap,
) -> Option<WorkflowDefinition> {
    let Ast {
        workflow,
        models,
        applications,
    } = ast;
    let wf = workflow?;
    let mut r = Resolver {
        diags,
        map,
        suggestions_left: SUGGESTIONS,
    };
    r.map.set(Node::Root, wf.pos);
    let model_ids = r.number("task model", models.iter().map(|m| (m.id, m.pos)));
    let task_ids = r.number("task", wf.tasks.iter().map(|t| (t.id, t.pos)));
    let partner_ids = r.number("partner", wf.partners.iter().map(|p| (p.id, p.pos)));
    let partition_ids = r.number("partition", wf.partitions.iter().map(|p| (p.id, p.pos)));
    let tables = Tables {
        models: Table::new("task model", models.iter().map(|m| &m.name), &model_ids),
        tasks: Table::new("task", wf.tasks.iter().map(|t| &t.name), &task_ids),
        partners: Table::new("partner", wf.partners.iter().map(|p| &p.name), &partner_ids),
    };
    let activity_types = models
        .iter()
        .zip(&model_ids)
        .enumerate()
        .map(|(i, (m, id))| {
            r.map.set(Node::ActivityType(i), m.pos);
            ActivityType {
                id: ActivityTypeId(*id),
                description: m.description.clone(),
            }
        })
        .collect();
    let activities = wf
        .tasks
        .iter()
        .zip(&task_ids)
        .enumerate()
        .map(|(i, (task, id))| r.activity(i, task, *id, &tables, &models))
        .collect();
    let partners = r.partners(&wf, &partner_ids, &tables);
    let partitions = r.partitions(&wf, &partition_ids, &tables);
    let data = r.data(&wf);
    let applications = applications
        .into_iter()
        .enumerate()
        .map(|(k, (application, pos))| {
            r.map.set(Node::Application(k), pos);
            application
        })
        .collect();
    Some(WorkflowDefinition {
        id: WorkflowId(wf.id.map_or(1, |(id, _)| id)),
        description: wf.description,
        name: wf.name.map(|n| DefinitionName::new(n.text)),
        creator_role: wf.creator_role.map(|r| RoleId::new(r.text)),
        activities,
        activity_types,
        partitions,
        partners,
        data,
        applications,
    })
}

/// The names of the things references may name.
pub(super) struct Tables<'a> {
    pub models: Table<'a>,
    pub tasks: Table<'a>,
    pub partners: Table<'a>,
}

/// The things of one kind, by name and by id, for resolving references to them.
pub(super) struct Table<'a> {
    /// How messages call one (`task`).
    what: &'static str,
    names: Vec<&'a Named>,
    ids: &'a [u64],
    by_name: HashMap<&'a str, Vec<usize>>,
    by_id: HashMap<u64, Vec<usize>>,
}

impl<'a> Table<'a> {
    fn new(what: &'static str, names: impl Iterator<Item = &'a Named>, ids: &'a [u64]) -> Self {
        let names: Vec<&Named> = names.collect();
        let mut by_name: HashMap<&str, Vec<usize>> = HashMap::new();
        let mut by_id: HashMap<u64, Vec<usize>> = HashMap::new();
        for (i, (name, id)) in names.iter().zip(ids).enumerate() {
            by_name.entry(name.text.as_str()).or_default().push(i);
            by_id.entry(*id).or_default().push(i);
        }
        Table {
            what,
            names,
            ids,
            by_name,
            by_id,
        }
    }

    /// The one thing `r` names (its index, when it is declared once) and its id.
    fn find<'s>(&'s self, r: &'s Ref) -> Result<(u64, Option<usize>), Missing<'s>> {
        match &r.to {
            Target::Id(id) => {
                let index = match self.by_id.get(id).map(Vec::as_slice) {
                    Some([one]) => Some(*one),
                    _ => None,
                };
                Ok((*id, index))
            }
            Target::Name(name) => match self.by_name.get(name.as_str()).map(Vec::as_slice) {
                Some([one]) => Ok((self.ids[*one], Some(*one))),
                Some(several) => Err(Missing::Several(several)),
                None => Err(Missing::None(name)),
            },
        }
    }
}

/// Why a name names no one thing.
enum Missing<'a> {
    None(&'a str),
    Several(&'a [usize]),
}

/// Builds the model from the parsed text, reporting what cannot be resolved.
pub(super) struct Resolver<'d> {
    pub diags: &'d mut Vec<Diagnostic>,
    pub map: &'d mut SourceMap,
    suggestions_left: usize,
}

impl Resolver<'_> {
    /// The ids of things of one kind (`what`) in text order: each its `ID`, or the id after
    /// the one before it (1 for the first).
    fn number(&mut self, what: &str, items: impl Iterator<Item = (Id, Pos)>) -> Vec<u64> {
        let mut next = Some(1u64);
        let mut ids = Vec::new();
        for (id, pos) in items {
            let id = match (id, next) {
                (Some((id, _)), _) => id,
                (None, Some(id)) => id,
                (None, None) => {
                    self.diags.push(Diagnostic::new(
                        pos,
                        format!(
                            "this {what} comes after the {what} with the largest id there is \
                             ({}), so no id follows; give it an ID",
                            u64::MAX
                        ),
                    ));
                    0
                }
            };
            next = id.checked_add(1);
            ids.push(id);
        }
        ids
    }

    /// The id `r` names in `table`, and the index of the one thing it names (when one
    /// declaration has its name or id); `None`, reported, when it names nothing or several.
    pub fn resolve(&mut self, table: &Table<'_>, r: &Ref) -> Option<(u64, Option<usize>)> {
        let message = match table.find(r) {
            Ok(found) => return Some(found),
            Err(Missing::Several(indexes)) => {
                let places: Vec<String> = indexes
                    .iter()
                    .map(|&i| format!("{} (id {})", table.names[i].pos, table.ids[i]))
                    .collect();
                format!(
                    "{} {}s are named `{}`, at {}; refer to one by its id, or give each its own \
                     name",
                    indexes.len(),
                    table.what,
                    abbreviate(&table.names[indexes[0]].text),
                    places.join(" and ")
                )
            }
            Err(Missing::None(name)) => {
                let hint = self.suggestion(table, name);
                format!(
                    "no {} is named `{}`{hint}; name one declared in this text (names are \
                     case-sensitive), or give its id as a number",
                    table.what,
                    abbreviate(name)
                )
            }
        };
        self.diags.push(Diagnostic::new(r.pos, message));
        None
    }

    /// ` (did you mean X?)` for `name`, misspelt, while suggestions are left.
    fn suggestion(&mut self, table: &Table<'_>, name: &str) -> String {
        if self.suggestions_left == 0 || name.chars().count() > SUGGESTED_CHARS {
            return String::new();
        }
        self.suggestions_left -= 1;
        let known: Vec<&str> = table
            .names
            .iter()
            .map(|n| n.text.as_str())
            .filter(|n| n.chars().count() <= SUGGESTED_CHARS)
            .collect();
        suggest(name, &known)
            .map(|s| format!(" (did you mean `{s}`?)"))
            .unwrap_or_default()
    }

    /// The partners, their skills resolved among the task models.
    fn partners(&mut self, wf: &Workflow, ids: &[u64], tables: &Tables<'_>) -> Vec<Partner> {
        let mut partners = Vec::new();
        for (i, (decl, id)) in wf.partners.iter().zip(ids).enumerate() {
            self.map.set(Node::Partner(i), decl.pos);
            let mut skills = Vec::new();
            for skill in &decl.skills {
                if let Some((type_id, _)) = self.resolve(&tables.models, skill) {
                    self.map.set(Node::PartnerSkill(i, skills.len()), skill.pos);
                    skills.push(ActivityTypeId(type_id));
                }
            }
            partners.push(Partner {
                id: PartnerId(*id),
                name: decl.name.text.clone(),
                description: decl.description.clone(),
                location: decl.location.clone(),
                skills,
            });
        }
        partners
    }

    /// The partitions, their partners and tasks resolved.
    fn partitions(&mut self, wf: &Workflow, ids: &[u64], tables: &Tables<'_>) -> Vec<Partition> {
        let mut partitions = Vec::new();
        for (i, (decl, id)) in wf.partitions.iter().zip(ids).enumerate() {
            self.map.set(Node::Partition(i), decl.pos);
            let partner = match &decl.partner {
                Some(r) => {
                    self.map.set(Node::PartitionField(i, "partnerId"), r.pos);
                    self.resolve(&tables.partners, r).map_or(0, |(id, _)| id)
                }
                None => {
                    self.diags.push(Diagnostic::new(
                        decl.pos,
                        format!(
                            "partition {} has no PARTNER; add PARTNER and the partner that \
                             runs it",
                            abbreviate(&decl.name.text)
                        ),
                    ));
                    0
                }
            };
            let mut activities = Vec::new();
            for task in &decl.tasks {
                if let Some((task_id, _)) = self.resolve(&tables.tasks, task) {
                    self.map
                        .set(Node::PartitionActivity(i, activities.len()), task.pos);
                    activities.push(ActivityId(task_id));
                }
            }
            partitions.push(Partition {
                id: PartitionId(*id),
                name: decl.name.text.clone(),
                partner: PartnerId(partner),
                time_out_secs: decl.time_out_secs,
                activities,
            });
        }
        partitions
    }

    /// The data declarations, each at its keyword, name and type.
    fn data(&mut self, wf: &Workflow) -> Vec<crate::model::DataItem> {
        if let Some(first) = wf.data.first() {
            self.map.set(Node::Data, first.pos);
        }
        wf.data
            .iter()
            .enumerate()
            .map(|(k, decl)| {
                self.map.set(Node::DataItem(k), decl.pos);
                self.map.set(Node::DataItemAttr(k, "name"), decl.name_pos);
                if decl.item.kind != crate::model::DataKind::File {
                    self.map.set(Node::DataItemAttr(k, "type"), decl.pos);
                }
                decl.item.clone()
            })
            .collect()
    }
}

/// The task model of `task` that `index` found, for what it gives its tasks.
pub(super) fn model_of(models: &[Model], index: Option<usize>) -> Option<&Model> {
    index.and_then(|i| models.get(i))
}

/// The task's field `name` was written in the task itself.
pub(super) fn written(task: &Task, name: &str) -> bool {
    task.field(name).is_some()
}
