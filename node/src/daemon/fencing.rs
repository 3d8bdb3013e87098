//! The actor's part in fencing the work held under a task class's grant (`crate::lease`): the
//! controller's probes noted (when each was answered, which answer an echo confirms), the
//! persons' activities holding a grant watched (from their request on, a restart included),
//! and the tries the engine decides to kill no longer kept up under their lease.

use mobiwf_engine::{Effect, Transition};
use mobiwf_proto::{Message, Millis};
use mobiwf_runtime::mesh::Inbound;

use super::actor::NodeActor;
use crate::executor::{self, Execution};

impl NodeActor {
    /// A probe of the node's controller, applied at `now` (µs) and answered after this group:
    /// its number is noted with a time before the answer leaves; its echo confirms an earlier
    /// answer. Any other message renews nothing.
    pub(super) fn note_probe(&self, now: u64, inbound: &Inbound) {
        if inbound.from == self.controller.0
            && let Message::Probe(probe) = &inbound.envelope.message
        {
            self.leases
                .probed(*probe, Millis::from_micros(now).as_u64());
        }
    }

    /// Watches every person's activity holding a grant (offered or taken), as the engine was
    /// read back at a start: their lease counts from their request, not from the restart.
    pub(super) fn watch_held_people(&self) {
        let engine = self.core.engine();
        for run in engine.runs() {
            for act in &run.doc().activities {
                if let Some(lease_ms) = engine.person_lease(run.key, act.id) {
                    let asked = engine.asked_ms(run.key, act.id);
                    self.leases.watch_person(run.key, act.id, lease_ms, asked);
                }
            }
        }
    }

    /// Watches the persons' activities that came to hold a grant (offered or taken), and no
    /// longer those that ended.
    pub(super) fn watch_people(&self, transitions: &[Transition]) {
        let engine = self.core.engine();
        for t in transitions {
            if t.state.is_final() {
                self.leases.unwatch_person(t.key, t.activity);
            } else if let Some(lease_ms) = engine.person_lease(t.key, t.activity) {
                let asked = engine.asked_ms(t.key, t.activity);
                self.leases.watch_person(t.key, t.activity, lease_ms, asked);
            }
        }
    }

    /// The tries the engine just decided to kill are no longer kept up under their lease, from
    /// this group on (before it is written): should the kill not take, their watchdog ends
    /// them by the time the engine releases their class without word of their end (the
    /// engine's `sync.rs`).
    pub(super) fn unfence_killed(&self, effects: &[Effect]) {
        let partner = self.core.identity().name.to_string();
        for effect in effects {
            if let Effect::Kill {
                key,
                activity,
                attempt,
                ..
            } = effect
            {
                let e = Execution {
                    attempt: *attempt,
                    ..Execution::of(*key, *activity, partner.clone())
                };
                self.leases.release(&executor::run_dir(&self.data_dir, &e));
            }
        }
    }
}
