//! The one walk along substitution chains: a failed activity, the contingency activity that
//! runs in its place, the one that runs in place of that one, and so on. Outcomes, successors
//! and overdue decisions all follow chains through here, so they agree on where one ends.

use mobiwf_proto::ActivityId;

use crate::{ActivityView, Instance};

/// The longest chain of contingency activities followed when deciding an outcome.
pub const MAX_CONTINGENCY_CHAIN: usize = 64;

/// Which way to walk.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Way {
    /// From a failed activity to the contingency activity that replaced it (`replaced_by`).
    ToStandIns,
    /// From a contingency activity to the failed activity it stands for (`stands_for`).
    ToOrigin,
}

/// The activities of the chain from `id` (itself first, when the instance has it), at most
/// [`MAX_CONTINGENCY_CHAIN`] steps.
pub(crate) fn walk(inst: &Instance, id: ActivityId, way: Way) -> Vec<&ActivityView> {
    let mut out = Vec::new();
    let mut at = Some(id);
    while let Some(id) = at {
        let Some(v) = crate::recovery::view(inst, id) else {
            break;
        };
        out.push(v);
        if out.len() > MAX_CONTINGENCY_CHAIN {
            break;
        }
        at = match way {
            Way::ToStandIns => v.replaced_by(),
            Way::ToOrigin => v.stands_for,
        };
    }
    out
}

/// The activity at the far end of the chain from `id` (`id` itself when nothing follows).
pub(crate) fn end(inst: &Instance, id: ActivityId, way: Way) -> ActivityId {
    walk(inst, id, way).last().map_or(id, |v| v.id)
}
