//! The invariants of work items' deadlines (`<deadline>`), on their hosts, in the run's short
//! hour: a threshold passes once its time came on the host's clock, never before; at the
//! hand-over (24 hours left, of a longer deadline) the instance's responsible user holds the
//! item; and on a running host no threshold of an open item whose activity is not paused stays
//! unpassed long after its time.

use std::collections::BTreeMap;

use mobiwf_engine::Item;
use mobiwf_proto::{ActivityId, HAND_OVER_HOURS_LEFT, InstanceId, UserId};

use crate::world::Pid;

/// How long after its time a threshold may still wait on a running host, ms: its timer fires
/// at that time, and the group that takes it follows within a few ms.
pub const THRESHOLD_SLACK_MS: u64 = 500;

/// An item on its host, by when it was offered (a rerun's new item is another).
type ItemOn = (Pid, InstanceId, ActivityId, u64);

/// What the deadline checks remember.
#[derive(Debug, Default)]
pub struct Deadlines {
    /// The instances' responsible user, who gets an item at its hand-over.
    pub responsible: Option<UserId>,
    /// The thresholds seen passed, per item with a deadline.
    passed: BTreeMap<ItemOn, Vec<u32>>,
}

impl Deadlines {
    /// Host `pid` wrote `item` at `now_ms` on its clock: what broke, if anything did.
    pub fn wrote(&mut self, pid: Pid, item: &Item, now_ms: u64) -> Option<String> {
        let due = item.due.as_ref()?;
        let key = (pid, item.instance, item.activity, item.ready_ms);
        let seen = self.passed.entry(key).or_default();
        let new: Vec<u32> = due
            .passed
            .iter()
            .copied()
            .filter(|h| !seen.contains(h))
            .collect();
        seen.clone_from(&due.passed);
        let what = |text: String| {
            format!(
                "{text}: instance {} activity {} on machine {pid}",
                item.instance, item.activity
            )
        };
        for h in new {
            let at = due
                .at_ms
                .saturating_sub(u64::from(h).saturating_mul(due.hour_ms));
            if at > now_ms {
                return Some(what(format!(
                    "a deadline's threshold ({h} hours left) passed {} ms before its time",
                    at - now_ms
                )));
            }
            if h == HAND_OVER_HOURS_LEFT
                && due.hours > h
                && item.is_open()
                && let Some(to) = &self.responsible
                && !item
                    .copies
                    .iter()
                    .any(|c| c.holder().is_some_and(|x| &x.user == to))
            {
                return Some(what(format!(
                    "handed over {h} hours before its deadline, and the responsible user {to} \
                     does not hold it"
                )));
            }
        }
        None
    }
}

/// On host `pid` at `now_ms` on its clock, an open item with a deadline whose activity is not
/// paused (`paused`): its next threshold did not stay unpassed long after its time.
pub fn overdue(item: &Item, paused: bool, now_ms: u64) -> Option<String> {
    if !item.is_open() || paused {
        return None;
    }
    let (h, at) = item.due.as_ref()?.next()?;
    (at.saturating_add(THRESHOLD_SLACK_MS) < now_ms).then(|| {
        format!(
            "a deadline's threshold ({h} hours left) not passed {} ms after its time: instance \
             {} activity {}",
            now_ms - at,
            item.instance,
            item.activity
        )
    })
}
