//! Partition derivation (MISSION L3): from a definition, the document each partner receives.
//!
//! Rules, as the paper's example shows them:
//! - `adjacents` of an activity are the activities that list it as a precondition, each with
//!   the location of the partner whose partition holds it;
//! - `responseImmediate` is 1 exactly when one of those adjacents is in another partition;
//! - a precondition is `local` when its activity is in the same partition;
//! - a precondition's `timeOut` (longest wait for it) is its activity's `timeOut`, or, when that
//!   is 0 (no limit), the `timeOut` of the partition that runs it (0 when both are 0);
//! - `status` values and the extensions (`timeOut`, `kind`, `command`, `retries`) are copied
//!   from the definition.
//!
//! Contingency activities left out of every partition get no adjacent entry: they run only
//! when the controller places them after a failure, and it then tells the waiting partners.

use std::collections::{BTreeMap, HashMap};

use crate::model::{
    ActivityId, Adjacent, PartitionActivity, PartitionDocument, PartitionId, PartnerId,
    Precondition, WorkflowDefinition, WorkflowId,
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
    let activities = def.activities_by_id();
    let mut partition_of: HashMap<ActivityId, usize> = HashMap::new();
    for (i, part) in def.partitions.iter().enumerate() {
        for id in &part.activities {
            partition_of.entry(*id).or_insert(i);
        }
    }
    let mut successors: HashMap<ActivityId, Vec<ActivityId>> = HashMap::new();
    for a in &def.activities {
        for pre in &a.preconditions {
            successors.entry(*pre).or_default().push(a.id);
        }
    }
    let location = |partition: usize| -> String {
        let partner = def.partitions[partition].partner;
        opts.locations
            .get(&partner)
            .cloned()
            .or_else(|| def.partner(partner).map(|p| p.location.clone()))
            .unwrap_or_default()
    };

    def.partitions
        .iter()
        .enumerate()
        .map(|(index, part)| {
            let activities = part
                .activities
                .iter()
                .filter(|id| partition_of.get(id) == Some(&index))
                .filter_map(|id| activities.get(id).copied())
                .map(|a| {
                    let preconditions = a
                        .preconditions
                        .iter()
                        .filter_map(|pre| activities.get(pre).copied())
                        .map(|pre| {
                            let home = partition_of.get(&pre.id).copied();
                            let partition_time_out =
                                home.map(|h| def.partitions[h].time_out_secs).unwrap_or(0);
                            Precondition {
                                id: pre.id,
                                status: pre.status,
                                local: home == Some(index),
                                time_out_secs: if pre.time_out_secs > 0 {
                                    pre.time_out_secs
                                } else {
                                    partition_time_out
                                },
                            }
                        })
                        .collect();
                    let adjacents: Vec<(Adjacent, bool)> = successors
                        .get(&a.id)
                        .map(Vec::as_slice)
                        .unwrap_or_default()
                        .iter()
                        .filter_map(|succ| {
                            let home = *partition_of.get(succ)?;
                            Some((
                                Adjacent {
                                    id: *succ,
                                    location: location(home),
                                },
                                home != index,
                            ))
                        })
                        .collect();
                    PartitionActivity {
                        id: a.id,
                        name: a.name.clone(),
                        description: a.description.clone(),
                        status: a.status,
                        response_immediate: adjacents.iter().any(|(_, remote)| *remote),
                        time_to_wait_secs: a.time_to_wait_secs,
                        contingency: a.contingency,
                        preconditions,
                        adjacents: adjacents.into_iter().map(|(adj, _)| adj).collect(),
                        time_out_secs: a.time_out_secs,
                        kind: a.kind,
                        command: a.command.clone(),
                        retries: a.retries,
                    }
                })
                .collect();
            DerivedPartition {
                partition: part.id,
                partner: part.partner,
                document: PartitionDocument {
                    workflow_id: opts.workflow_id.unwrap_or(def.id),
                    start_time: opts.start_time.clone(),
                    activities,
                },
            }
        })
        .collect()
}
