//! What an item's or a copy's status says to a claim: "no longer available" once it is
//! finished, and how an item whose copies all finished ends.

use mobiwf_proto::{ItemStatus, UserId, Verdict};

use super::Item;

/// "No longer available" when the item or copy is finished.
pub(super) fn gone(status: &ItemStatus) -> Option<Verdict> {
    let reason = match status {
        ItemStatus::Open => return None,
        ItemStatus::Done { by, .. } => format!("no longer available: {by} completed it"),
        ItemStatus::Closed { why } => format!("no longer available: it was closed ({why})"),
    };
    Some(Verdict::Unavailable { reason })
}

/// How an item whose copies are all finished, one at least done, ends: done (succeeded when
/// every done copy succeeded; by the last user who did one).
pub(super) fn overall(item: &Item) -> ItemStatus {
    let done: Vec<(&UserId, bool, Option<u64>)> = item
        .copies
        .iter()
        .filter_map(|c| {
            c.done()
                .map(|(by, done)| (by, done.finish.succeeded(), c.ended_ms()))
        })
        .collect();
    match done.iter().max_by_key(|(_, _, at)| *at) {
        Some((by, _, _)) => ItemStatus::Done {
            by: (*by).clone(),
            succeeded: done.iter().all(|(_, ok, _)| *ok),
        },
        None => ItemStatus::Closed {
            why: "every copy was taken off its users' worklists".to_owned(),
        },
    }
}
