//! A copy as JSON, in the form every version wrote (who is offered it, its holder, its wire
//! status and the completion's fields side by side): stored items and the host's API read the
//! same bytes as before the copy's state became one [`CopyLife`]. A combination no version
//! wrote (a held copy still offered, a done copy without its holder) is refused with the
//! reason.

use std::collections::{BTreeMap, BTreeSet};

use mobiwf_proto::{DataValue, Holder, ItemStatus, UserId};
use serde::{Deserialize, Serialize};

use super::{Completion, CopyLife, ItemCopy};
use crate::Finish;

/// A copy as JSON.
#[derive(Serialize, Deserialize)]
struct CopyRepr {
    audience: BTreeSet<UserId>,
    offered: BTreeSet<UserId>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    holder: Option<Holder>,
    status: ItemStatus,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    offered_ms: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    ended_ms: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    detail: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    flag: Option<String>,
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    written: BTreeMap<String, DataValue>,
}

impl From<&ItemCopy> for CopyRepr {
    fn from(copy: &ItemCopy) -> CopyRepr {
        let completion = copy.done().map(|(_, c)| c);
        CopyRepr {
            audience: copy.audience.clone(),
            offered: copy.offered().clone(),
            holder: copy.holder().cloned(),
            status: copy.status(),
            offered_ms: Some(copy.offered_ms),
            ended_ms: copy.ended_ms(),
            detail: completion.and_then(|c| c.finish.detail().map(str::to_owned)),
            flag: completion.and_then(|c| c.finish.flag().map(str::to_owned)),
            written: completion.map(|c| c.written.clone()).unwrap_or_default(),
        }
    }
}

impl TryFrom<CopyRepr> for ItemCopy {
    type Error = String;

    fn try_from(repr: CopyRepr) -> Result<ItemCopy, String> {
        let offered_ms = repr
            .offered_ms
            .ok_or("a work item copy without offered_ms")?;
        let unfinished = repr.ended_ms.is_none()
            && repr.detail.is_none()
            && repr.flag.is_none()
            && repr.written.is_empty();
        let life = match (repr.status, repr.holder) {
            (ItemStatus::Open, _) if !unfinished => {
                return Err("an open work item copy with an end or a completion".to_owned());
            }
            (ItemStatus::Open, None) => CopyLife::Offered { to: repr.offered },
            (_, Some(_)) | (ItemStatus::Done { .. } | ItemStatus::Closed { .. }, None)
                if !repr.offered.is_empty() =>
            {
                return Err("a held or finished work item copy that is still offered".to_owned());
            }
            (ItemStatus::Open, Some(holder)) => CopyLife::Held { holder },
            (ItemStatus::Done { by, succeeded }, Some(holder)) if holder.user == by => {
                let ended_ms = repr
                    .ended_ms
                    .ok_or("a done work item copy without ended_ms")?;
                // A failure has no flag (the activity's flag is a success's): one a device sent
                // with it, which older versions kept, is dropped.
                let completion = Completion {
                    finish: Finish::of(succeeded, repr.detail, repr.flag),
                    written: repr.written,
                    ended_ms,
                };
                CopyLife::Done { holder, completion }
            }
            (ItemStatus::Done { by, .. }, _) => {
                return Err(format!(
                    "a work item copy done by {by}, who does not hold it"
                ));
            }
            (ItemStatus::Closed { .. }, _) if repr.detail.is_some() || repr.flag.is_some() => {
                return Err("a closed work item copy with a completion".to_owned());
            }
            (ItemStatus::Closed { .. }, _) if !repr.written.is_empty() => {
                return Err("a closed work item copy with written data".to_owned());
            }
            (ItemStatus::Closed { why }, holder) => CopyLife::Closed {
                why,
                holder,
                ended_ms: repr
                    .ended_ms
                    .ok_or("a closed work item copy without ended_ms")?,
            },
        };
        Ok(ItemCopy {
            audience: repr.audience,
            offered_ms,
            life,
        })
    }
}

impl Serialize for ItemCopy {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        CopyRepr::from(self).serialize(serializer)
    }
}

impl<'de> Deserialize<'de> for ItemCopy {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<ItemCopy, D::Error> {
        let repr = CopyRepr::deserialize(deserializer)?;
        ItemCopy::try_from(repr).map_err(serde::de::Error::custom)
    }
}
