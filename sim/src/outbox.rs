//! A process's outbox on the simulated clock: the entries staged with the groups that caused
//! them (`out/<seq>` on the disk, as `mobiwf_runtime::outbox` stores them), each delivered
//! until its receiver answers, in lanes per destination peer. Every decision is the runtime's
//! own pure code (`mobiwf_delivery`): a lane's gate, backoff, probe and reachability
//! ([`LaneState`]), what a try leads to ([`Tries`]), how an answered entry leaves
//! ([`Removal`]), what a try tells its receiver was answered ([`answered_below`]). What the
//! runtime does with tokio (waiting on the lane, the semaphores of its caps, asking the
//! controller where a peer went) is here as states the world moves on: the outbox says what to
//! do ([`Action`]) and the world does it, and tells the outbox what came of it.

use std::collections::{BTreeMap, BTreeSet};
use std::time::Duration;

use mobiwf_delivery::{
    Backoff, Gate, LaneState, LinkError, Moment, Next, Removal, Tries, answered_below,
};
use mobiwf_proto::{Envelope, NodeId, Reply};
use serde::{Deserialize, Serialize};

use crate::disk::Batch;

/// Most deliveries in flight at once, all peers together (`outbox::MAX_IN_FLIGHT`).
pub const MAX_IN_FLIGHT: usize = 256;
/// Most deliveries to one peer in flight at once (`outbox::MAX_IN_FLIGHT_PER_PEER`).
pub const MAX_IN_FLIGHT_PER_PEER: usize = 32;
/// The lanes' backoff (`outbox::RETRY_MIN`, `outbox::RETRY_MAX`).
pub const BACKOFF: Backoff = Backoff {
    min: Duration::from_millis(50),
    max: Duration::from_millis(500),
};
/// Least time between two questions about where one peer is (`outbox::LOCATE_EVERY`).
pub const LOCATE_EVERY: Duration = Duration::from_secs(1);
/// How long such a question may take (`outbox::LOCATE_TIMEOUT`).
pub const LOCATE_TIMEOUT_US: u64 = 2_000_000;
/// Key prefix of the entries (`outbox::OUTBOX_PREFIX`).
pub const OUTBOX_PREFIX: &str = "out/";
/// Key prefix of the refused ones (`outbox::REFUSED_PREFIX`).
pub const REFUSED_PREFIX: &str = "refused/";

/// A message to deliver, as the outbox keeps it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Outgoing {
    /// The receiver's peer id.
    pub to: NodeId,
    /// Where to dial it.
    pub addrs: Vec<String>,
    /// The message.
    pub envelope: Envelope,
}

fn key(seq: u64) -> String {
    format!("{OUTBOX_PREFIX}{seq:020}")
}

/// Adds `msg` to `batch`, written with the change that caused it.
pub fn stage(batch: &mut Batch, msg: &Outgoing) {
    let value = serde_json::to_vec(msg).unwrap_or_default();
    batch.put(key(msg.envelope.id.seq), value);
}

/// Adds the removal of an answered message (and the record of a refusal) to `batch`.
pub fn stage_answered(batch: &mut Batch, msg: &Outgoing, reply: &Reply) {
    batch.delete(key(msg.envelope.id.seq));
    if let Reply::Refused { reason } = reply {
        let record = format!("{} {reason}", msg.envelope.message.kind());
        batch.put(
            format!("{REFUSED_PREFIX}{:020}", msg.envelope.id.seq),
            record,
        );
    }
}

/// What the world is to do for the outbox.
#[derive(Debug, Clone)]
pub enum Action {
    /// Send one try of entry `seq`.
    Try {
        /// The entry.
        seq: u64,
        /// The receiver.
        to: NodeId,
        /// Where to dial it.
        addrs: Vec<String>,
        /// What to send (its `answered_below` set for this try).
        envelope: Envelope,
    },
    /// Call [`Outbox::pump`] again at this time.
    Wake(u64),
    /// Ask the controller where `peer` is, for entry `seq`.
    Locate {
        /// The entry.
        seq: u64,
        /// The peer.
        peer: NodeId,
    },
    /// The peer became unreachable, or answers again (the daemon's link news).
    News {
        /// The peer.
        peer: NodeId,
        /// True when it answers again.
        reachable: bool,
    },
    /// The entry was answered: its owner removes it.
    Settled {
        /// The entry.
        msg: Outgoing,
        /// The answer.
        reply: Reply,
    },
}

/// Where one entry's delivery is.
#[derive(Debug, Clone, PartialEq, Eq)]
enum State {
    /// Wants a turn.
    Ready,
    /// Waits for its lane to change, or until a time.
    Waiting(Option<u64>),
    /// A try is on its way.
    InFlight,
    /// Left unanswered: waits until then.
    Paused(u64),
    /// Asks where its peer is; goes on at the answer, at the time, or when its lane changes.
    Locating(u64),
}

#[derive(Debug)]
struct Delivery {
    msg: Outgoing,
    tries: Tries,
    state: State,
    /// It holds its lane's probe during its try.
    probing: bool,
}

/// One peer's lane: its decisions, and what the runtime's semaphores count.
#[derive(Debug)]
struct Lane {
    state: LaneState,
    /// When it was made: its decisions' clock counts from here.
    epoch: u64,
    in_flight: usize,
    probe_held: bool,
}

impl Lane {
    fn now(&self, now: u64) -> Moment {
        Moment::after_start(Duration::from_micros(now.saturating_sub(self.epoch)))
    }
}

/// A process's outbox, in memory (its entries are on the disk too).
#[derive(Debug)]
pub struct Outbox {
    deliveries: BTreeMap<u64, Delivery>,
    lanes: BTreeMap<NodeId, Lane>,
    unanswered: BTreeMap<NodeId, BTreeSet<u64>>,
    in_flight: usize,
    /// Whether it may ask the controller where a peer is (a node's: the controller's own
    /// outbox has no locator).
    locates: bool,
    me: NodeId,
}

impl Outbox {
    /// An empty outbox of `me`; `locates` as the daemon's has a locator.
    pub fn new(me: NodeId, locates: bool) -> Outbox {
        Outbox {
            deliveries: BTreeMap::new(),
            lanes: BTreeMap::new(),
            unanswered: BTreeMap::new(),
            in_flight: 0,
            locates,
            me,
        }
    }

    /// Entries not answered yet.
    pub fn depth(&self) -> usize {
        self.deliveries.len()
    }

    /// The entries not answered yet, for the checks.
    pub fn pending(&self) -> impl Iterator<Item = &Outgoing> {
        self.deliveries.values().map(|d| &d.msg)
    }

    /// Delivers messages already on the disk (`Outbox::dispatch`).
    pub fn dispatch(&mut self, now: u64, msgs: Vec<Outgoing>) {
        for msg in msgs {
            let seq = msg.envelope.id.seq;
            self.unanswered
                .entry(msg.to.clone())
                .or_default()
                .insert(seq);
            self.lanes.entry(msg.to.clone()).or_insert_with(|| Lane {
                state: LaneState::new(BACKOFF),
                epoch: now,
                in_flight: 0,
                probe_held: false,
            });
            let tries = Tries::default();
            let delivery = Delivery {
                msg,
                tries,
                state: State::Ready,
                probing: false,
            };
            self.deliveries.insert(seq, delivery);
        }
    }

    /// An owner's group that removed these answered messages is on disk (`Outbox::release`).
    pub fn release(&mut self, answered: &[(NodeId, u64)]) {
        for (to, seq) in answered {
            self.forget(to, *seq);
        }
    }

    /// The number `seq` to `to` no longer holds back what `to` is told.
    pub fn forget(&mut self, to: &NodeId, seq: u64) {
        if let Some(set) = self.unanswered.get_mut(to) {
            set.remove(&seq);
            if set.is_empty() {
                self.unanswered.remove(to);
            }
        }
    }

    /// How an answered entry leaves, as the runtime's delivery task decides it.
    pub fn removal(reply: &Reply) -> Removal {
        Removal::of(reply)
    }

    /// Gives every delivery that may try now its try, in the order of their numbers.
    pub fn pump(&mut self, now: u64) -> Vec<Action> {
        let mut actions = Vec::new();
        let seqs: Vec<u64> = self.deliveries.keys().copied().collect();
        for seq in seqs {
            self.turn(now, seq, &mut actions);
        }
        actions
    }

    /// One delivery's turn (`Lane::turn`): a slot of its lane and of the outbox, the lane's
    /// gate, the probe while its peer fails.
    fn turn(&mut self, now: u64, seq: u64, actions: &mut Vec<Action>) {
        let Some(d) = self.deliveries.get_mut(&seq) else {
            return;
        };
        match d.state {
            State::Ready => {}
            State::Waiting(Some(at)) | State::Paused(at) | State::Locating(at) if at <= now => {}
            _ => return,
        }
        let Some(lane) = self.lanes.get_mut(&d.msg.to) else {
            return;
        };
        if lane.in_flight >= MAX_IN_FLIGHT_PER_PEER || self.in_flight >= MAX_IN_FLIGHT {
            d.state = State::Waiting(None);
            return;
        }
        let probe = match lane.state.gate(lane.now(now)) {
            Gate::Wait(at) => {
                let at = lane.epoch + u64::try_from(at.since_start().as_micros()).unwrap_or(0);
                d.state = State::Waiting(Some(at));
                actions.push(Action::Wake(at));
                return;
            }
            Gate::Go { probe } => probe,
        };
        if probe {
            if lane.probe_held {
                d.state = State::Waiting(None);
                return;
            }
            lane.probe_held = true;
        }
        d.probing = probe;
        lane.in_flight += 1;
        self.in_flight += 1;
        d.state = State::InFlight;
        let mut envelope = d.msg.envelope.clone();
        let lowest = self
            .unanswered
            .get(&d.msg.to)
            .and_then(|s| s.first().copied());
        envelope.answered_below = answered_below(lowest, envelope.id.seq);
        actions.push(Action::Try {
            seq,
            to: d.msg.to.clone(),
            addrs: d.msg.addrs.clone(),
            envelope,
        });
    }

    /// What came of entry `seq`'s try (`deliver_until_answered`, after the attempt).
    pub fn tried(&mut self, now: u64, seq: u64, attempt: Result<Reply, LinkError>) -> Vec<Action> {
        let mut actions = Vec::new();
        let Some(d) = self.deliveries.get_mut(&seq) else {
            return actions;
        };
        if d.state != State::InFlight {
            return actions;
        }
        let to = d.msg.to.clone();
        let probing = std::mem::take(&mut d.probing);
        let next = d.tries.after(attempt);
        self.in_flight = self.in_flight.saturating_sub(1);
        let Some(lane) = self.lanes.get_mut(&to) else {
            return actions;
        };
        lane.in_flight = lane.in_flight.saturating_sub(1);
        if probing {
            lane.probe_held = false;
        }
        let bumped = if next.peer_failed() {
            lane.state.failed(lane.now(now));
            true
        } else {
            lane.state.succeeded()
        };
        if let Some(reachable) = lane.state.reachability_news() {
            actions.push(Action::News {
                peer: to.clone(),
                reachable,
            });
        }
        self.after_try(now, seq, next, &mut actions);
        // A slot or the probe came free, or the lane changed: whoever waited looks again.
        if bumped || probing {
            self.wake_lane(&to);
        }
        self.wake_slots();
        actions.extend(self.pump(now));
        actions
    }

    /// The step after a try: settled, paused, or tried again (asking where the peer is first,
    /// when that is due).
    fn after_try(&mut self, now: u64, seq: u64, next: Next, actions: &mut Vec<Action>) {
        let Some(d) = self.deliveries.get_mut(&seq) else {
            return;
        };
        match next {
            Next::Settle(reply) => {
                let msg = d.msg.clone();
                self.deliveries.remove(&seq);
                self.drop_lane_if_unused(&msg.to);
                actions.push(Action::Settled { msg, reply });
            }
            Next::Pause { pause, .. } => {
                let at = now + u64::try_from(pause.as_micros()).unwrap_or(0);
                d.state = State::Paused(at);
                actions.push(Action::Wake(at));
            }
            Next::Retry { .. } => {
                let to = d.msg.to.clone();
                let locate = self.locates && to != self.me;
                let due = locate
                    && self.lanes.get_mut(&to).is_some_and(|lane| {
                        let at = lane.now(now);
                        lane.state.locate_due(at, LOCATE_EVERY)
                    });
                if due {
                    let until = now + LOCATE_TIMEOUT_US;
                    d.state = State::Locating(until);
                    actions.push(Action::Locate { seq, peer: to });
                    actions.push(Action::Wake(until));
                } else {
                    d.state = State::Ready;
                }
            }
        }
    }

    /// The controller answered where entry `seq`'s peer is: `moved` when it named an address
    /// not known before (the lane starts over).
    pub fn located(&mut self, now: u64, seq: u64, moved: bool) -> Vec<Action> {
        let Some(d) = self.deliveries.get_mut(&seq) else {
            return Vec::new();
        };
        if !matches!(d.state, State::Locating(_)) {
            return Vec::new();
        }
        d.state = State::Ready;
        let to = d.msg.to.clone();
        if moved {
            self.reset(&to);
        }
        self.pump(now)
    }

    /// `peer` is connected again (`Lanes::seen`): its lane starts over and its deliveries go.
    pub fn seen(&mut self, now: u64, peer: &NodeId) -> Vec<Action> {
        if !self.lanes.contains_key(peer) {
            return Vec::new();
        }
        self.reset(peer);
        self.pump(now)
    }

    fn reset(&mut self, peer: &NodeId) {
        if let Some(lane) = self.lanes.get_mut(peer) {
            lane.state.reset();
        }
        self.wake_lane(peer);
    }

    /// Every delivery of `peer`'s lane that waits looks again (a lane's change wakes them; so
    /// does the end of a location question waiting on it).
    fn wake_lane(&mut self, peer: &NodeId) {
        for d in self.deliveries.values_mut() {
            if &d.msg.to == peer && matches!(d.state, State::Waiting(_) | State::Locating(_)) {
                d.state = State::Ready;
            }
        }
    }

    /// Deliveries waiting for a slot look again.
    fn wake_slots(&mut self) {
        for d in self.deliveries.values_mut() {
            if d.state == State::Waiting(None) {
                d.state = State::Ready;
            }
        }
    }

    fn drop_lane_if_unused(&mut self, peer: &NodeId) {
        if !self.deliveries.values().any(|d| &d.msg.to == peer) {
            self.lanes.remove(peer);
        }
    }
}
