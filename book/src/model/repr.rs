//! The stored and shown form of partitions and activities: the fields they always had, their
//! state spelt out as flags and values. The views keep a lifecycle instead; these convert
//! both ways, so that the JSON written before and after reads the same.

use std::collections::BTreeSet;

use mobiwf_proto::{ActivityId, ActivityState, NodeId, NodeName, PartitionId};
use mobiwf_xml_schema::Contingency;
use serde::{Deserialize, Serialize};

use super::{ActivityView, PartitionView};
use crate::CANCELLED_BY_OPERATOR;
use crate::PartitionLifecycle;
use crate::lifecycle::activity::{ActivityLife, PausedBy, StoredLife};

/// A [`PartitionView`] as stored.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(super) struct PartitionRepr {
    id: PartitionId,
    node: NodeName,
    peer: NodeId,
    /// True once the node acknowledged the partition.
    deployed: bool,
    /// True once its result came back.
    finished: bool,
    #[serde(default)]
    deadline_ms: Option<u64>,
    #[serde(default)]
    stands_for: Option<ActivityId>,
    /// Why the controller gave up on it.
    #[serde(default)]
    abandoned: Option<String>,
}

impl From<PartitionRepr> for PartitionView {
    fn from(r: PartitionRepr) -> PartitionView {
        PartitionView {
            id: r.id,
            node: r.node,
            peer: r.peer,
            life: PartitionLifecycle::from_fields(r.deployed, r.finished, r.abandoned),
            deadline_ms: r.deadline_ms,
            stands_for: r.stands_for,
        }
    }
}

impl From<PartitionView> for PartitionRepr {
    fn from(v: PartitionView) -> PartitionRepr {
        let (deployed, finished, abandoned) = v.life.fields();
        PartitionRepr {
            id: v.id,
            node: v.node,
            peer: v.peer,
            deployed,
            finished,
            deadline_ms: v.deadline_ms,
            stands_for: v.stands_for,
            abandoned,
        }
    }
}

/// An [`ActivityView`] as stored.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(super) struct ActivityRepr {
    id: ActivityId,
    name: String,
    partition: Option<PartitionId>,
    node: Option<NodeName>,
    state: ActivityState,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    synchronized_ms: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    ready_ms: Option<u64>,
    started_ms: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    flag: Option<String>,
    finished_ms: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    finished_us: Option<u64>,
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    compensable: bool,
    detail: Option<String>,
    #[serde(with = "contingency_code")]
    contingency: Contingency,
    #[serde(default)]
    emergency: bool,
    #[serde(default)]
    retried: u32,
    #[serde(default)]
    replaced_by: Option<ActivityId>,
    #[serde(default)]
    stands_for: Option<ActivityId>,
    #[serde(default)]
    blocked_instead: bool,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    awaits: Vec<ActivityId>,
    #[serde(default, skip_serializing_if = "BTreeSet::is_empty")]
    relayed: BTreeSet<ActivityId>,
    /// When the controller withdraws it (ms since the epoch), and why.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    overdue: Option<(u64, String)>,
    /// Its pass in a loop's body; left out for the first (as stored before loops).
    #[serde(default, skip_serializing_if = "mobiwf_proto::Pass::is_first")]
    pass: mobiwf_proto::Pass,
    /// Who paused it and when, while it is paused.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    paused: Option<PausedRepr>,
    /// When its node said its latest word on a pause or a resumption of it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pause_word_ms: Option<u64>,
}

/// A pause as stored and shown: who, since when (ms since the epoch).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(super) struct PausedRepr {
    by: String,
    since_ms: u64,
}

impl From<ActivityRepr> for ActivityView {
    fn from(r: ActivityRepr) -> ActivityView {
        let stored = StoredLife {
            state: r.state,
            overdue: r.overdue,
            replaced_by: r.replaced_by,
            blocked_instead: r.blocked_instead,
            paused: r.paused.map(|p| PausedBy {
                by: p.by,
                since_ms: p.since_ms,
            }),
        };
        let by_operator = r.detail.as_deref() == Some(CANCELLED_BY_OPERATOR);
        ActivityView {
            id: r.id,
            name: r.name,
            partition: r.partition,
            node: r.node,
            life: ActivityLife::from_fields(stored, r.partition.is_some(), by_operator),
            synchronized_ms: r.synchronized_ms,
            ready_ms: r.ready_ms,
            started_ms: r.started_ms,
            flag: r.flag,
            finished_ms: r.finished_ms,
            finished_us: r.finished_us,
            compensable: r.compensable,
            detail: r.detail,
            contingency: r.contingency,
            emergency: r.emergency,
            retried: r.retried,
            stands_for: r.stands_for,
            awaits: r.awaits,
            relayed: r.relayed,
            pass: r.pass,
            pause_word_ms: r.pause_word_ms,
        }
    }
}

impl From<ActivityView> for ActivityRepr {
    fn from(v: ActivityView) -> ActivityRepr {
        let StoredLife {
            state,
            overdue,
            replaced_by,
            blocked_instead,
            paused,
        } = v.life.fields();
        ActivityRepr {
            id: v.id,
            name: v.name,
            partition: v.partition,
            node: v.node,
            state,
            synchronized_ms: v.synchronized_ms,
            ready_ms: v.ready_ms,
            started_ms: v.started_ms,
            flag: v.flag,
            finished_ms: v.finished_ms,
            finished_us: v.finished_us,
            compensable: v.compensable,
            detail: v.detail,
            contingency: v.contingency,
            emergency: v.emergency,
            retried: v.retried,
            replaced_by,
            stands_for: v.stands_for,
            blocked_instead,
            awaits: v.awaits,
            relayed: v.relayed,
            overdue,
            paused: paused.map(|p| PausedRepr {
                by: p.by,
                since_ms: p.since_ms,
            }),
            pass: v.pass,
            pause_word_ms: v.pause_word_ms,
        }
    }
}

/// `contingency` as the number the documents use (-1, 0, x), as the store and the API always
/// had it.
mod contingency_code {
    use mobiwf_xml_schema::Contingency;
    use serde::{Deserialize, Deserializer, Serialize, Serializer, de::Error};

    pub fn serialize<S: Serializer>(c: &Contingency, s: S) -> Result<S::Ok, S::Error> {
        let code = i64::try_from(c.code()).map_err(serde::ser::Error::custom)?;
        code.serialize(s)
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Contingency, D::Error> {
        let code = i64::deserialize(d)?;
        Contingency::from_code(i128::from(code))
            .ok_or_else(|| D::Error::custom(format!("no contingency {code}")))
    }
}
