//! Partition derivation: from a definition, the document each partner receives.
//!
//! Rules, as the paper's example shows them:
//! - `adjacents` of an activity are the activities that list it as a precondition, each with
//!   the location of the partner whose partition holds it; and, beyond the paper, the
//!   activities whose `<depends>` rule names it (one adjacent per successor, whichever way it
//!   waits), with the `states` the rule names (empty for a successor through preconditions
//!   only);
//! - `responseImmediate` is 1 exactly when one of those adjacents is in another partition
//!   (rule successors included);
//! - a precondition is `local` when its activity is in the same partition;
//! - a precondition's `timeOut` (longest wait for it) is its activity's `timeOut`, or, when that
//!   is 0 (no limit), the `timeOut` of the partition that runs it (0 when both are 0);
//! - `status` values and the extensions (`timeOut`, `kind`, `command`, `compensation`,
//!   `retries`, `depends`, `merge`, `routes`, `completion`, `loop`, `reads`, `writes`, people) are
//!   copied from the definition; a route leads to successors, which are adjacents, so a
//!   derived document's routes name its adjacents;
//! - instance data: an adjacent in another partition `carries` the names its successor, or an
//!   activity after it, reads that the activity, or one before it, writes ([`carried_names`]);
//!   an adjacent in the same partition carries nothing (the node keeps the instance's data);
//!   a document's `<data>` declares, in definition order, every name its activities read or
//!   write or its adjacents carry.
//! - a `<loop>` is copied onto the loop's end with a `<member>` for each activity of its body
//!   (the activities on the paths from its head to its end, [`loop_body`]) and where its
//!   partner is reached, so the end's node tells each of them of a new pass; a member of
//!   another partition `carries` what its next pass reads that the end, or an activity before
//!   it, writes (the body's reads count as needed at the end: `crate::flow`).
//!
//! Contingency activities left out of every partition get no adjacent entry: they run only
//! when the controller places them after a failure, and it then tells the waiting partners.
//! [`derive_contingency`] writes the one-activity document of such a placement, with the same
//! rules for its preconditions.

mod data;
mod loops;

pub use data::carried_names;
pub use loops::loop_body;

use std::collections::{BTreeMap, HashMap};

use crate::flow::Flow;
use crate::model::{
    Activity, ActivityId, Adjacent, Merge, Partition, PartitionActivity, PartitionDocument,
    PartitionId, PartnerId, Precondition, Rule, TaskState, WorkflowDefinition, WorkflowId,
};

/// Choices the caller makes when deriving partitions.
#[derive(Debug, Clone, Default)]
pub struct DeriveOptions {
    /// `workflow@id` of the documents (the instance id); the definition's id when `None`.
    pub workflow_id: Option<WorkflowId>,
    /// `startTime` of the documents.
    pub start_time: Option<String>,
    /// Where each partner is reached, overriding the definition's `ip` (the runtime puts the
    /// node's libp2p address here).
    pub locations: BTreeMap<PartnerId, String>,
}

/// One partition's document, with the partition and partner it belongs to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DerivedPartition {
    /// The partition of the definition.
    pub partition: PartitionId,
    /// The partner that runs it.
    pub partner: PartnerId,
    /// What the partner receives.
    pub document: PartitionDocument,
}

/// The partition document of every partition of `def`, in definition order.
///
/// Expects a definition that passed validation; unknown ids are skipped rather than
/// reported (validation reports them).
pub fn derive_partitions(def: &WorkflowDefinition, opts: &DeriveOptions) -> Vec<DerivedPartition> {
    let deriver = Deriver {
        def,
        opts,
        activities: def.activities_by_id(),
        partition_of: partition_index(def),
        successors: successors(def),
        flow: Flow::new(def),
    };
    def.partitions
        .iter()
        .enumerate()
        .map(|(index, part)| deriver.partition(index, part))
        .collect()
}

/// What deriving every partition of one definition shares, computed once.
struct Deriver<'a> {
    def: &'a WorkflowDefinition,
    opts: &'a DeriveOptions,
    activities: HashMap<ActivityId, &'a Activity>,
    /// For each activity, the index of the partition that holds it.
    partition_of: HashMap<ActivityId, usize>,
    successors: HashMap<ActivityId, Vec<(ActivityId, Vec<TaskState>)>>,
    /// Instance data: what each notification carries.
    flow: Flow<'a>,
}

impl Deriver<'_> {
    /// The document of partition `part`, the `index`th.
    fn partition(&self, index: usize, part: &Partition) -> DerivedPartition {
        let activities: Vec<PartitionActivity> = part
            .activities
            .iter()
            .filter(|id| self.partition_of.get(id) == Some(&index))
            .filter_map(|id| self.activities.get(id).copied())
            .map(|a| self.activity(a, index))
            .collect();
        DerivedPartition {
            partition: part.id,
            partner: part.partner,
            document: PartitionDocument {
                workflow_id: self.opts.workflow_id.unwrap_or(self.def.id),
                start_time: self.opts.start_time.clone(),
                data: data::declarations(self.def, &activities),
                activities,
            },
        }
    }

    /// Activity `a` as the partition at `index` holds it.
    fn activity(&self, a: &Activity, index: usize) -> PartitionActivity {
        crate::work::count(1 + a.preconditions.len());
        let preconditions = a
            .preconditions
            .iter()
            .filter_map(|pre| self.activities.get(pre).copied())
            .map(|pre| precondition(self.def, &self.partition_of, pre, Some(index)))
            .collect();
        let adjacents: Vec<(Adjacent, bool)> = self
            .successors
            .get(&a.id)
            .map(Vec::as_slice)
            .unwrap_or_default()
            .iter()
            .filter_map(|(succ, states)| {
                let home = *self.partition_of.get(succ)?;
                let remote = home != index;
                Some((self.adjacent(a.id, *succ, home, states), remote))
            })
            .collect();
        let response_immediate = adjacents.iter().any(|(_, remote)| *remote);
        let adjacents = adjacents.into_iter().map(|(adj, _)| adj).collect();
        let mut derived =
            partition_activity(self.def, a, preconditions, adjacents, response_immediate);
        derived.loop_back = a.loop_back.as_ref().map(|l| {
            loops::derived_loop(self.def, &self.flow, a.id, l, |member| {
                let home = *self.partition_of.get(&member)?;
                Some((self.location(home), home != index))
            })
        });
        derived
    }

    /// The adjacent of `from` for its successor `to`, which the partition at `home` holds: at
    /// that partition's partner, with the `states` `to`'s rule names, carrying the data `to`
    /// and those after it read that `from` and those before it wrote, unless `to` is in the
    /// same partition as `from` (the node keeps the instance's data for both).
    fn adjacent(
        &self,
        from: ActivityId,
        to: ActivityId,
        home: usize,
        states: &[TaskState],
    ) -> Adjacent {
        let local = self.partition_of.get(&from) == Some(&home);
        let carries = match (local, self.flow.index(from), self.flow.index(to)) {
            (false, Some(f), Some(t)) => self.flow.carried(f, t),
            _ => Vec::new(),
        };
        Adjacent {
            id: to,
            location: self.location(home),
            states: states.to_vec(),
            carries,
        }
    }

    /// Where the partner of the partition at `partition` is reached.
    fn location(&self, partition: usize) -> String {
        let partner = self.def.partitions[partition].partner;
        self.opts
            .locations
            .get(&partner)
            .cloned()
            .or_else(|| self.def.partner(partner).map(|p| p.location.clone()))
            .unwrap_or_default()
    }
}

/// The document of contingency activity `activity` placed alone on a partner after a failure
/// (the controller does this): it waits for `awaits` (activities of other partitions, each
/// precondition with the `timeOut` rule of [`derive_partitions`]), tells `adjacents` when it
/// ends, and reports at once (`responseImmediate` 1: the controller decides what its end means
/// for the instance). It stands in for the failed activity, whose successors are its
/// adjacents: its own `<merge>` and `<routes>` (about its own place in the workflow) are not
/// carried. Each adjacent carries (whatever `carries` it is given) the data its successor, or
/// an activity after it, reads that the stand-in writes or that was written before the failed
/// activity; the document declares the data the stand-in reads, writes or carries. The failed
/// activity is the one whose `contingencyActivityId` names `activity` (of several, the first
/// whose successors are all among `adjacents`, else the first; a stand-in for a stand-in
/// looks through it to the activity in the workflow's graph). `None` when the definition has
/// no such activity.
pub fn derive_contingency(
    def: &WorkflowDefinition,
    activity: ActivityId,
    awaits: &[ActivityId],
    adjacents: Vec<Adjacent>,
    opts: &DeriveOptions,
) -> Option<PartitionDocument> {
    let by_id = def.activities_by_id();
    let a = by_id.get(&activity)?;
    let partition_of = partition_index(def);
    let preconditions = awaits
        .iter()
        .filter_map(|pre| by_id.get(pre).copied())
        .map(|pre| precondition(def, &partition_of, pre, None))
        .collect();
    let flow = Flow::new(def);
    let adjacents = data::stand_in_carries(def, &flow, a, adjacents);
    let mut stand_in = partition_activity(def, a, preconditions, adjacents, true);
    stand_in.merge = Merge::All;
    stand_in.routes.clear();
    let activities = vec![stand_in];
    Some(PartitionDocument {
        workflow_id: opts.workflow_id.unwrap_or(def.id),
        start_time: opts.start_time.clone(),
        data: data::declarations(def, &activities),
        activities,
    })
}

/// For each activity, the activities that wait for it, in definition order, each once: those
/// that list it as a precondition, and those whose `<depends>` rule names it, with the states
/// the rule names (each once, in [`TaskState::ALL`] order; none for a precondition only).
fn successors(def: &WorkflowDefinition) -> HashMap<ActivityId, Vec<(ActivityId, Vec<TaskState>)>> {
    let mut successors: HashMap<ActivityId, Vec<(ActivityId, Vec<TaskState>)>> = HashMap::new();
    for a in &def.activities {
        let terms = a.depends.as_ref().map(Rule::terms).unwrap_or_default();
        let awaited = a.preconditions.iter().map(|pre| (*pre, None));
        let named = terms.into_iter().map(|(other, state)| (other, Some(state)));
        for (awaited, state) in awaited.chain(named) {
            let list = successors.entry(awaited).or_default();
            let at = match list.iter().position(|(succ, _)| *succ == a.id) {
                Some(at) => at,
                None => {
                    list.push((a.id, Vec::new()));
                    list.len() - 1
                }
            };
            let states = &mut list[at].1;
            if let Some(state) = state
                && !states.contains(&state)
            {
                states.push(state);
                states.sort();
            }
        }
    }
    successors
}

/// For each activity, the index of the first partition that lists it.
fn partition_index(def: &WorkflowDefinition) -> HashMap<ActivityId, usize> {
    let mut partition_of: HashMap<ActivityId, usize> = HashMap::new();
    for (i, part) in def.partitions.iter().enumerate() {
        for id in &part.activities {
            partition_of.entry(*id).or_insert(i);
        }
    }
    partition_of
}

/// Precondition `pre` of an activity in the partition at `index` (`None`: in none of the
/// definition's partitions): local when `pre` is in the same partition; its `timeOut` is
/// `pre`'s, or when that is 0 the `timeOut` of the partition that runs `pre`.
fn precondition(
    def: &WorkflowDefinition,
    partition_of: &HashMap<ActivityId, usize>,
    pre: &Activity,
    index: Option<usize>,
) -> Precondition {
    let home = partition_of.get(&pre.id).copied();
    let partition_time_out = home.map(|h| def.partitions[h].time_out_secs).unwrap_or(0);
    Precondition {
        id: pre.id,
        status: pre.status,
        local: home.is_some() && home == index,
        time_out_secs: if pre.time_out_secs > 0 {
            pre.time_out_secs
        } else {
            partition_time_out
        },
    }
}

/// Activity `a` of `def` as a partition document holds it; its `status` and extensions are
/// copied, and the application it names is copied whole (its node's users' devices run it).
fn partition_activity(
    def: &WorkflowDefinition,
    a: &Activity,
    preconditions: Vec<Precondition>,
    adjacents: Vec<Adjacent>,
    response_immediate: bool,
) -> PartitionActivity {
    PartitionActivity {
        id: a.id,
        name: a.name.clone(),
        description: a.description.clone(),
        status: a.status,
        response_immediate,
        time_to_wait_secs: a.time_to_wait_secs,
        contingency: a.contingency,
        preconditions,
        adjacents,
        depends: a.depends.clone(),
        merge: a.merge.clone(),
        routes: a.routes.clone(),
        completion: a.completion,
        // A partition document's loop lists its body's members: `Deriver::activity` adds them.
        loop_back: None,
        time_out_secs: a.time_out_secs,
        kind: a.kind,
        command: a.command.clone(),
        compensation: a.compensation.clone(),
        retries: a.retries,
        class: a.class.clone(),
        application: a
            .application
            .as_ref()
            .and_then(|name| def.application(name).cloned()),
        ordered: false,
        data: a.data.clone(),
        people: a.people.clone(),
    }
}

#[cfg(test)]
mod tests;
