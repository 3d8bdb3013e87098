//! Per-destination lanes of the outbox, so that one unreachable peer never slows delivery to
//! the others: each peer has its own cap on deliveries in flight and its own backoff. While a
//! peer fails, one delivery at a time probes it (the others wait without holding a slot);
//! the backoff resets as soon as the peer is seen again (a connection to it), or a probe gets
//! through, and every delivery waiting for it goes at once.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use libp2p::PeerId;
use tokio::sync::{Semaphore, SemaphorePermit, watch};
use tokio::time::Instant;

pub use mobiwf_delivery::{Backoff, UNREACHABLE_AFTER_FAILURES};
use mobiwf_delivery::{Gate, LaneState, Moment};

/// Most deliveries to one peer in flight at the same time (the global cap is
/// [`super::MAX_IN_FLIGHT`]): a peer whose link just went down holds at most this many slots
/// until its first failure, then one.
pub const MAX_IN_FLIGHT_PER_PEER: usize = 32;

/// Every peer's lane.
#[derive(Default)]
pub(crate) struct Lanes {
    lanes: Mutex<HashMap<PeerId, Arc<Lane>>>,
}

impl Lanes {
    /// The lane of `peer`, made when none is in use.
    pub(crate) fn of(&self, peer: PeerId, backoff: Backoff) -> Arc<Lane> {
        let mut lanes = self.lanes.lock().unwrap_or_else(PoisonError::into_inner);
        lanes
            .entry(peer)
            .or_insert_with(|| Arc::new(Lane::new(backoff)))
            .clone()
    }

    /// A delivery to `peer` is over: its lane is dropped when no other delivery uses it (the
    /// next message to the peer is tried at once).
    pub(crate) fn done(&self, peer: PeerId, lane: Arc<Lane>) {
        let mut lanes = self.lanes.lock().unwrap_or_else(PoisonError::into_inner);
        // Ours and the map's.
        if Arc::strong_count(&lane) <= 2 {
            lanes.remove(&peer);
        }
    }

    /// `peer` is connected again: its waiting deliveries go now.
    pub(crate) fn seen(&self, peer: &PeerId) {
        let lane = {
            let lanes = self.lanes.lock().unwrap_or_else(PoisonError::into_inner);
            lanes.get(peer).cloned()
        };
        if let Some(lane) = lane {
            lane.reset();
        }
    }

    /// Every lane is told its peer may be back (after missing announcements).
    pub(crate) fn seen_all(&self) {
        let lanes: Vec<Arc<Lane>> = {
            let lanes = self.lanes.lock().unwrap_or_else(PoisonError::into_inner);
            lanes.values().cloned().collect()
        };
        for lane in lanes {
            lane.reset();
        }
    }

    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        self.lanes
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .len()
    }
}

/// One peer's lane: its decisions ([`LaneState`]) behind a lock, and the waiting.
pub(crate) struct Lane {
    /// Where the decisions' clock starts: tokio's instants become [`Moment`]s here, and back.
    epoch: Instant,
    slots: Semaphore,
    /// Held by the one delivery that probes a failing peer.
    probe: Semaphore,
    state: Mutex<LaneState>,
    /// Bumped on every change of `state`, to wake the deliveries waiting.
    changed: watch::Sender<u64>,
}

/// Leave to attempt one delivery: a slot of the lane, and the probe while the peer fails.
pub(crate) struct Turn<'a> {
    _slot: SemaphorePermit<'a>,
    _probe: Option<SemaphorePermit<'a>>,
}

impl Lane {
    fn new(backoff: Backoff) -> Lane {
        Lane {
            epoch: Instant::now(),
            slots: Semaphore::new(MAX_IN_FLIGHT_PER_PEER),
            probe: Semaphore::new(1),
            state: Mutex::new(LaneState::new(backoff)),
            changed: watch::channel(0).0,
        }
    }

    pub(super) fn state(&self) -> std::sync::MutexGuard<'_, LaneState> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Now, on the decisions' clock.
    fn now(&self) -> Moment {
        Moment::after_start(self.epoch.elapsed())
    }

    fn bump(&self) {
        self.changed.send_modify(|g| *g = g.wrapping_add(1));
    }

    /// Waits until this delivery may attempt: the lane's backoff is over, a slot is free,
    /// and, while the peer fails, no other delivery is probing it.
    pub(crate) async fn turn(&self) -> Option<Turn<'_>> {
        loop {
            let mut changed = self.changed.subscribe();
            // The slot first: the state is read once it is ours, so that a delivery that
            // waited for a slot while the peer went down does not go without the probe.
            let slot = self.slots.acquire().await.ok()?;
            let gate = self.state().gate(self.now());
            let probe = match gate {
                Gate::Wait(at) => {
                    drop(slot);
                    tokio::select! {
                        () = tokio::time::sleep_until(self.epoch + at.since_start()) => {}
                        _ = changed.changed() => {}
                    }
                    continue;
                }
                Gate::Go { probe: false } => None,
                Gate::Go { probe: true } => match self.probe.try_acquire() {
                    Ok(probe) => Some(probe),
                    Err(_) => {
                        // Another delivery probes: wait for what it finds.
                        drop(slot);
                        if changed.changed().await.is_err() {
                            return None;
                        }
                        continue;
                    }
                },
            };
            return Some(Turn {
                _slot: slot,
                _probe: probe,
            });
        }
    }

    /// The peer answered: no backoff, everyone goes.
    pub(crate) fn succeeded(&self) {
        let was_failing = self.state().succeeded();
        if was_failing {
            self.bump();
        }
    }

    /// An attempt failed: the lane waits before the next probe, twice as long as the last
    /// time (failures of attempts made together count once). Returns the wait.
    pub(crate) fn failed(&self) -> Duration {
        let wait = self.state().failed(self.now());
        self.bump();
        wait
    }

    /// What the lane's owner has not been told yet: `Some(false)` when the peer just became
    /// unreachable ([`UNREACHABLE_AFTER_FAILURES`] failed tries in a row), `Some(true)` when
    /// it answered again after that; each is told once.
    pub(crate) fn reachability_news(&self) -> Option<bool> {
        self.state().reachability_news()
    }

    /// Resolves at the lane's next change (the peer seen, a delivery through, a reset).
    pub(crate) async fn changed(&self) {
        let mut changes = self.changed.subscribe();
        let _ = changes.changed().await;
    }

    /// Whether to ask where the peer is now: not more often than `every` per lane.
    pub(crate) fn locate_due(&self, every: Duration) -> bool {
        self.state().locate_due(self.now(), every)
    }

    /// The peer is reachable again (seen, or found at a new address): the backoff starts
    /// over and the next probe goes now.
    pub(crate) fn reset(&self) {
        self.state().reset();
        self.bump();
    }
}

#[cfg(test)]
mod tests;
