//! How a work item ends. When its last copy is done, its activity ends through the usual
//! path (`conclude` on success, `fail` naming who failed and why), so its successors are
//! notified as for any activity; when the activity ends otherwise (cancelled, withdrawn,
//! timed out), its open copies are closed and the devices that showed it are told.

use mobiwf_proto::{ItemStatus, UserId};

use super::{ItemCopy, ItemKey};
use crate::lifecycle::Event;
use crate::run::RunKey;
use crate::{ActivityId, Effect, Engine, Finish};

impl Engine {
    /// Every copy of the item is finished (its status says how): its activity ends.
    pub(crate) fn finish_item(&mut self, id: ItemKey, fx: &mut Vec<Effect>) {
        let Some(item) = self.host.items.get(&id) else {
            return;
        };
        let (key, activity, now_ms) = (item.run_key(), item.activity, self.now_ms());
        let mut words = Vec::new();
        let mut failures = Vec::new();
        for (by, done) in item.copies.iter().filter_map(ItemCopy::done) {
            match &done.finish {
                Finish::Succeeded { detail, .. } => {
                    words.extend(detail.as_ref().map(|d| (by.clone(), d.clone())));
                }
                Finish::Failed { detail } => failures.push(failed_by(by, detail.as_deref())),
            }
        }
        match item.status.clone() {
            ItemStatus::Open => return,
            ItemStatus::Done {
                succeeded: true, ..
            } => {
                let detail = match (item.copies.len(), words.as_slice()) {
                    (_, []) => None,
                    (1, [(_, words)]) => Some(words.clone()),
                    _ => Some(
                        words
                            .iter()
                            .map(|(by, d)| format!("{by}: {d}"))
                            .collect::<Vec<_>>()
                            .join("; "),
                    ),
                };
                // The flag of the copy done last (method `all`: the last to finish decides).
                let flag = item
                    .copies
                    .iter()
                    .filter_map(|c| c.done().map(|(_, done)| done))
                    .filter_map(|done| done.finish.flag().map(|flag| (done.ended_ms, flag)))
                    .max_by_key(|(ended_ms, _)| *ended_ms)
                    .map(|(_, flag)| flag.to_owned());
                let written = super::written::written_by_copies(item);
                if let Some(run) = self.runs.get_mut(&key) {
                    run.set_flag(activity, flag);
                }
                self.keep_writes(key, activity, written);
                self.conclude(key, activity, Event::Succeed { detail }, fx);
            }
            ItemStatus::Done { .. } => self.fail(key, activity, failures.join("; "), now_ms, fx),
            ItemStatus::Closed { why } => self.fail(key, activity, why, now_ms, fx),
        }
        self.advance(key, fx);
    }

    /// An activity whose item is open reached a final state (`Engine::step` notes it).
    pub(crate) fn note_end(&mut self, key: RunKey, activity: ActivityId) {
        let id = (key.instance, activity);
        if self.host.items.get(&id).is_some_and(|i| i.is_open()) {
            self.host.ending.push((key, activity));
        }
    }

    /// Closes the open items of the activities that ended during the input just applied.
    pub(crate) fn close_ended_items(&mut self, fx: &mut Vec<Effect>) {
        for (key, activity) in std::mem::take(&mut self.host.ending) {
            let id = (key.instance, activity);
            let Some(item) = self.host.items.get(&id).filter(|i| i.is_open()) else {
                continue;
            };
            let why = self
                .runs
                .get(&key)
                .and_then(|r| r.life(activity))
                .and_then(|l| l.final_detail().cloned().flatten())
                .unwrap_or_else(|| "its activity ended".to_owned());
            let now_ms = self.now_ms();
            let before = item.involved();
            let mut after = item.clone();
            let mut refused = Vec::new();
            after.close(why, now_ms, &mut refused);
            self.record_copies_refused(key, activity, refused);
            after.version += 1;
            self.host.items.insert(id, after);
            self.host.dirty_items.insert(id);
            self.publish(id, &before, None, Vec::new(), fx);
        }
    }
}

/// "bob failed it: the pump is broken".
fn failed_by(by: &UserId, detail: Option<&str>) -> String {
    match detail {
        Some(d) => format!("{by} failed it: {d}"),
        None => format!("{by} failed it"),
    }
}
