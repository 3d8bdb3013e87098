//! The instance data a person sets when completing a work item (`complete --user U --set ...
//! --file ...`): checked against the activity's `<writes>` and the declared types when the
//! claim comes (a wrong value refuses the claim, with the reason), kept on the user's copy (its completion),
//! and written when the item's activity succeeds (of several copies, method `all`, the copy
//! done last wins a name). Files whose content did not come with the claim are fetched from
//! the user's device at once.

use std::collections::BTreeMap;

use mobiwf_proto::{DataValue, ItemAction};

use super::{Item, ItemCopy};
use crate::Claimed;
use crate::{Effect, Engine};

impl Engine {
    /// The values a completion claim writes, as kept, or why they cannot be (nothing written:
    /// no values).
    pub(super) fn claimed_writes(
        &self,
        claimed: &Claimed,
    ) -> Result<BTreeMap<String, DataValue>, String> {
        let ItemAction::Complete {
            succeeded: true,
            data,
            ..
        } = &claimed.claim.action
        else {
            return Ok(BTreeMap::new());
        };
        if data.values.is_empty() {
            return Ok(BTreeMap::new());
        }
        let key = self
            .run_of(claimed.claim.instance, claimed.claim.activity)
            .map_err(|r| r.to_string())?;
        let written = data
            .values
            .iter()
            .map(|(n, v)| (n.clone(), v.clone()))
            .collect();
        Ok(self
            .accepted_writes(key, claimed.claim.activity, written)?
            .into_iter()
            .collect())
    }

    /// A granted completion: the files it names that are not here are fetched from the
    /// claimant's device.
    pub(super) fn fetch_claimed(&mut self, claimed: &Claimed, fx: &mut Vec<Effect>) {
        for missing in &claimed.missing {
            self.want_file(claimed.claim.instance, missing.clone(), fx);
        }
    }
}

/// What the copies of a finished item wrote, the copy done last winning a name.
pub(super) fn written_by_copies(item: &Item) -> Vec<(String, DataValue)> {
    let mut copies: Vec<_> = item.copies.iter().collect();
    copies.sort_by_key(|c| c.ended_ms());
    let mut all = BTreeMap::new();
    for (_, done) in copies.into_iter().filter_map(ItemCopy::done) {
        all.extend(done.written.clone());
    }
    all.into_iter().collect()
}
