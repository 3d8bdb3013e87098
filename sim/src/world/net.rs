//! The simulated network: request-response exchanges over connections, as libp2p carries them
//! (TCP under Yamux). A request is its envelope's JSON bytes (decoded by the receiver, as the
//! codec does). Nothing is lost or duplicated on a working connection; what goes wrong is the
//! connection: it breaks (a link that goes silent, a cut, a machine gone) and its break is
//! noticed only after a while (the pings' timeout), during which the requests on it, and the
//! answers, are lost; a request caught in a break may still have reached its receiver (its
//! sender, not knowing, sends it again: a duplicate), and may reach it late. A peer is dialled
//! at the addresses its requester knows (the entry's, its address book's) and reached only at
//! the one it listens on now; a cut link fails the dial after the dial timeout, a machine whose
//! daemon is down refuses at once. A new connection announces each side to the other (its
//! outbox lane starts over, and each learns where the other is). A receiver that leaves a
//! request unanswered is heard at once ("left unanswered").

use std::collections::{BTreeMap, BTreeSet};

use mobiwf_delivery::LinkError;
use mobiwf_proto::{Envelope, NodeId, Reply};

use super::{CONTROLLER, Event, Pid, World};
use crate::group::Inbound;

/// How long a dial may take (`DEFAULT_DIAL_TIMEOUT`), µs.
pub const DIAL_TIMEOUT_US: u64 = 3_000_000;
/// How long a request may wait for its answer (`DEFAULT_REQUEST_TIMEOUT`), µs.
pub const REQUEST_TIMEOUT_US: u64 = 10_000_000;
/// The longest a broken connection goes unnoticed (`PING_INTERVAL` + `PING_TIMEOUT`), µs.
pub const BREAK_NOTICED_US: u64 = 10_000_000;

/// What a request is for, on the requester's side.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Purpose {
    /// A try of outbox entry `seq`.
    Outbox(u64),
    /// A failure detector's probe of a node, by its number.
    Probe(NodeId, u64),
    /// A question to the controller of where `peer` is, for outbox entry `seq`.
    Locate(u64, NodeId),
}

/// A request on its way, or waiting for its answer.
#[derive(Debug, Clone)]
pub struct Request {
    /// Who asks.
    pub from: Pid,
    /// In which run of its daemon.
    pub run: u32,
    /// Who is asked.
    pub to: Pid,
    /// In which run of its daemon (it reaches no other).
    pub to_run: u32,
    /// The envelope, as the wire carries it.
    pub bytes: Vec<u8>,
    /// What for.
    pub purpose: Purpose,
}

/// A connection between two machines: working, or broken and noticed at a time.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Connection {
    /// Told apart from the connections before it between the same two.
    id: u64,
    /// When its break is noticed (`None`: it works).
    noticed_at: Option<u64>,
}

/// The network's state.
#[derive(Debug, Default)]
pub struct Net {
    next: u64,
    /// The requests not answered yet.
    pub open: BTreeMap<u64, Request>,
    /// The links cut (each pair once, the smaller first).
    pub cut: BTreeSet<(Pid, Pid)>,
    connections: BTreeMap<(Pid, Pid), Connection>,
    /// Per mille of requests whose connection breaks under them.
    pub breaks: u32,
    /// Per mille of the requests caught in a break that still reach their receiver.
    pub reach_anyway: u32,
    /// Per mille of slow trips.
    pub slow: u32,
}

fn pair(a: Pid, b: Pid) -> (Pid, Pid) {
    (a.min(b), a.max(b))
}

impl Net {
    /// Whether the link between `a` and `b` is cut.
    pub fn is_cut(&self, a: Pid, b: Pid) -> bool {
        self.cut.contains(&pair(a, b))
    }

    fn working(&self, a: Pid, b: Pid) -> bool {
        self.connections
            .get(&pair(a, b))
            .is_some_and(|c| c.noticed_at.is_none())
    }
}

impl World {
    /// Sends a request from `from` to peer `to` (dialled at `addrs` and what `from`'s address
    /// book knows, when no connection is open).
    pub fn request(
        &mut self,
        from: Pid,
        to: &NodeId,
        addrs: &[String],
        envelope: &Envelope,
        purpose: Purpose,
    ) {
        let target = self.pid_of(to);
        let bytes = serde_json::to_vec(envelope).unwrap_or_default();
        self.net.next += 1;
        let req = self.net.next;
        let request = Request {
            from,
            run: self.machines[from].run,
            to: target.unwrap_or(from),
            to_run: target.map_or(0, |t| self.machines[t].run),
            bytes,
            purpose,
        };
        self.net.open.insert(req, request);
        let Some(target) = target else {
            let reason = format!("bad peer id {:?}", to.as_str());
            self.at(self.now, Event::Answer(req, Ok(Reply::Refused { reason })));
            return;
        };
        self.after(REQUEST_TIMEOUT_US, Event::Expire(req));
        if target == from {
            // To itself: the local queue, no network.
            self.at(self.now, Event::Arrive(req));
            return;
        }
        match self.net.connections.get(&pair(from, target)).copied() {
            Some(Connection {
                noticed_at: Some(at),
                ..
            }) => self.caught_in_break(req, at),
            Some(_) => self.carry(req, from, target),
            None => self.dial(req, from, target, to, addrs),
        }
    }

    /// No connection: `from` dials `target` at the addresses it knows.
    fn dial(&mut self, req: u64, from: Pid, target: Pid, to: &NodeId, addrs: &[String]) {
        let here = self.machines[target].addr(target);
        let known = addrs.contains(&here)
            || self.machines[from]
                .book
                .get(to)
                .is_some_and(|b| b.contains(&here));
        if self.net.is_cut(from, target) || !self.machines[target].up || !known {
            let why = Err(LinkError::Failed(format!("dial {to}: timed out")));
            self.after(DIAL_TIMEOUT_US, Event::Answer(req, why));
            return;
        }
        if !self.running(target) {
            let delay = self.latency();
            let why = Err(LinkError::Failed(format!("dial {to}: connection refused")));
            self.after(delay, Event::Answer(req, why));
            return;
        }
        self.connect(from, target);
        self.carry(req, from, target);
    }

    /// Request `req` goes over the working connection between `from` and `target`; now and
    /// then the connection breaks under it.
    fn carry(&mut self, req: u64, from: Pid, target: Pid) {
        let delay = self.latency();
        if !self.rng.chance(self.net.breaks) {
            self.after(delay, Event::Arrive(req));
            return;
        }
        let noticed = self.rng.range(500_000, BREAK_NOTICED_US);
        self.break_connection(from, target, noticed);
        if self.rng.chance(500) {
            // It got through before the break; its answer will not.
            self.after(delay, Event::Arrive(req));
        }
    }

    /// The connection between `a` and `b` breaks; it is noticed `after` µs from now: every
    /// request on it not answered by then fails, and a new one is dialled afterwards.
    pub fn break_connection(&mut self, a: Pid, b: Pid, after: u64) {
        let Some(conn) = self.net.connections.get_mut(&pair(a, b)) else {
            return;
        };
        if conn.noticed_at.is_some() {
            return;
        }
        let at = self.now + after;
        conn.noticed_at = Some(at);
        let id = conn.id;
        let on_it: Vec<u64> = self
            .net
            .open
            .iter()
            .filter(|(_, r)| pair(r.from, r.to) == pair(a, b) && r.from != r.to)
            .map(|(k, _)| *k)
            .collect();
        for req in on_it {
            let why = Err(LinkError::Failed("connection closed".to_owned()));
            self.at(at, Event::Answer(req, why));
        }
        self.at(at, Event::Closed(pair(a, b), id));
    }

    /// A request sent on a connection whose break is not noticed yet: lost (now and then it
    /// still gets through, late), failed when the break is noticed.
    fn caught_in_break(&mut self, req: u64, noticed_at: u64) {
        if self.rng.chance(self.net.reach_anyway) {
            let late = self.rng.range(0, noticed_at.saturating_sub(self.now));
            self.after(late, Event::Arrive(req));
        }
        let why = Err(LinkError::Failed("connection closed".to_owned()));
        self.at(noticed_at, Event::Answer(req, why));
    }

    /// A broken connection's break is noticed: it is gone.
    pub(super) fn closed(&mut self, between: (Pid, Pid), id: u64) {
        if self
            .net
            .connections
            .get(&between)
            .is_some_and(|c| c.id == id)
        {
            self.net.connections.remove(&between);
        }
    }

    /// One trip's delay, µs: mostly a few ms, sometimes much more.
    fn latency(&mut self) -> u64 {
        if self.rng.chance(self.net.slow) {
            self.rng.range(100_000, 2_000_000)
        } else {
            self.rng.range(200, 20_000)
        }
    }

    /// Request `req` reaches its receiver's machine.
    pub(super) fn arrive(&mut self, req: u64) {
        let Some(request) = self.net.open.get(&req).cloned() else {
            return;
        };
        let to = request.to;
        if !self.alive(to, request.to_run) {
            return;
        }
        let Ok(envelope) = serde_json::from_slice::<Envelope>(&request.bytes) else {
            let refused = Ok(Reply::Refused {
                reason: "a frame that does not decode".to_owned(),
            });
            let delay = self.latency();
            self.after(delay, Event::Answer(req, refused));
            return;
        };
        let inbound = Inbound {
            from: self.machines[request.from].peer.clone(),
            envelope,
            reply: req,
        };
        if to == CONTROLLER {
            if let Some(c) = &mut self.controller {
                c.pending
                    .push(crate::controller::CtlEvent::Inbound(inbound));
            }
        } else if let Some(n) = &mut self.nodes[to - 1] {
            n.pending.push(crate::node::NodeEvent::Inbound(inbound));
        }
        self.wake_soon(to);
    }

    /// A connection between `a` and `b` opens: each side learns where the other is, and its
    /// outbox's lane to it starts over.
    fn connect(&mut self, a: Pid, b: Pid) {
        self.net.next += 1;
        let conn = Connection {
            id: self.net.next,
            noticed_at: None,
        };
        self.net.connections.insert(pair(a, b), conn);
        for (me, other) in [(a, b), (b, a)] {
            let peer = self.machines[other].peer.clone();
            let addr = self.machines[other].addr(other);
            self.machines[me]
                .book
                .entry(peer.clone())
                .or_default()
                .insert(addr);
            self.outbox_seen(me, &peer);
        }
    }

    /// The answers a written group owes: each request answered (`None`: left unanswered),
    /// unless its connection broke meanwhile.
    pub fn reply_all(&mut self, acks: Vec<(u64, Option<Reply>)>) {
        for (req, reply) in acks {
            let Some(request) = self.net.open.get(&req) else {
                continue;
            };
            let (from, to) = (request.from, request.to);
            let result = match reply {
                Some(reply) => Ok(reply),
                None => Err(LinkError::Unanswered("left unanswered".to_owned())),
            };
            if from == to {
                self.at(self.now, Event::Answer(req, result));
            } else if self.net.working(from, to) {
                let delay = self.latency();
                self.after(delay, Event::Answer(req, result));
            }
        }
    }

    /// Request `req` timed out.
    pub(super) fn expire(&mut self, req: u64) {
        if self.net.open.contains_key(&req) {
            let why = Err(LinkError::Failed("request timed out".to_owned()));
            self.answered(req, why);
        }
    }

    /// An answer reaches request `req`'s requester.
    pub(super) fn answered(&mut self, req: u64, result: Result<Reply, LinkError>) {
        let Some(request) = self.net.open.remove(&req) else {
            return;
        };
        if !self.alive(request.from, request.run) {
            return;
        }
        let result = match result {
            // An answer that does not decode is a failed exchange, as the codec has it.
            Ok(reply) => serde_json::to_vec(&reply)
                .ok()
                .and_then(|b| serde_json::from_slice::<Reply>(&b).ok())
                .ok_or_else(|| LinkError::Failed("an answer that does not decode".to_owned())),
            Err(e) => Err(e),
        };
        match request.purpose {
            Purpose::Outbox(seq) => self.outbox_tried(request.from, seq, result),
            Purpose::Probe(peer, seq) => self.probed(&peer, seq, result),
            Purpose::Locate(seq, peer) => self.outbox_located(request.from, seq, &peer, result),
        }
    }

    /// `pid`'s daemon went down: its connections close, at once when its machine is up (its
    /// system closes them), noticed after a while when the machine went with it.
    pub fn close_connections_of(&mut self, pid: Pid, machine_down: bool) {
        let mine: Vec<(Pid, Pid)> = self
            .net
            .connections
            .keys()
            .filter(|(a, b)| *a == pid || *b == pid)
            .copied()
            .collect();
        for (a, b) in mine {
            let after = if machine_down {
                self.rng.range(500_000, BREAK_NOTICED_US)
            } else {
                self.latency()
            };
            self.break_connection(a, b, after);
        }
    }
}
