//! Forward recovery on the node: an operator reruns a failed activity of a failed instance.
//! The controller sends every node that holds one of the activities rerun (the failed one and
//! those cancelled because of it) the whole list: the node puts its own back to `NotReady`
//! (the one transition out of a final state, `Event::Rerun`), forgets what it heard of the
//! others' ends (their new ends count), and runs on. Reruns are numbered and a partner's
//! notify carries the latest rerun its sender applied: an end said after the sender applied
//! this rerun (decided there at once) is already the new end, and is kept. The controller orders the messages so
//! that no new end can overtake a node's forgetting: the failed activity's partition is sent
//! its rerun last, once every other has acknowledged its own, and an end the controller
//! decides itself (a partition given up) goes to a node only once it acknowledged its rerun.

use std::collections::BTreeSet;

use mobiwf_proto::{ActivityId, InstanceId, PartitionId};

use crate::lifecycle::{Event, Life};
use crate::run::RunKey;
use crate::{Effect, Engine};

impl Engine {
    /// Reruns `activities` of partition `partition` (those of them it holds that failed or
    /// were cancelled) as rerun number `number`; forgets what was heard of every one of them
    /// from a partner that had not applied that rerun yet; takes no control numbered
    /// `controls` or below from now on. The partition's result
    /// is sent again when it is done again; the timers of those rerun count from now.
    pub(crate) fn rerun(
        &mut self,
        now_ms: u64,
        instance: InstanceId,
        partition: PartitionId,
        activities: Vec<ActivityId>,
        (controls, number): (u64, u64),
        effects: &mut Vec<Effect>,
    ) {
        let known = self.known.entry(instance).or_default();
        for a in &activities {
            known.withdrawn.remove(a);
            known.withdrawn_passes.remove(a);
            // An end said by a partner that had applied this rerun (decided at once there,
            // its notify overtaking this rerun) is the new end: kept. A rerun not numbered
            // (0) forgets every end, as before numbers.
            if number > 0 && known.heard_in.get(a).is_some_and(|&g| g >= number) {
                continue;
            }
            known.heard_in.remove(a);
            known.heard.remove(a);
            known.flags.remove(a);
            known.routed.remove(a);
        }
        // The instance runs again: an interruption it ended under is over, and an operator's
        // control the controller gave before the rerun, arriving after it, is overtaken. A
        // control given after the rerun was decided and applied here first stands (a rerun
        // without the number, from a controller before numbers, ends it as it did).
        if controls == 0 || known.control_order <= controls {
            known.interrupted = false;
        }
        known.control_order = known.control_order.max(controls);
        known.rerun = known.rerun.max(number);
        self.touch_known(instance);
        let key = RunKey {
            instance,
            partition,
        };
        let Some(run) = self.runs.get_mut(&key) else {
            return;
        };
        // Each once, however often listed.
        let again: BTreeSet<ActivityId> = activities
            .iter()
            .copied()
            .filter(|a| {
                matches!(
                    run.life(*a),
                    Some(Life::Failed { .. } | Life::Cancelled { .. })
                )
            })
            .collect();
        if again.is_empty() {
            return;
        }
        run.reported = false;
        run.overdue.retain(|(waiting, _)| !again.contains(waiting));
        for &a in &again {
            self.step(key, a, Event::Rerun);
        }
        // Their waits count from now; what was not rerun keeps its own.
        if let Some(run) = self.runs.get_mut(&key) {
            for a in again {
                run.began_again(a, now_ms);
            }
        }
        self.advance(key, effects);
    }
}
