//! Prometheus metrics of a controller or node, served at `/metrics` by their HTTP APIs.

use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::registry::Registry;

/// Who is at the other end of a message.
#[derive(
    Debug, Clone, Copy, Hash, PartialEq, Eq, PartialOrd, Ord, serde::Serialize, serde::Deserialize,
)]
#[serde(rename_all = "snake_case")]
pub enum Peer {
    /// The controller.
    Controller,
    /// A partner node.
    Partner,
}

impl Peer {
    fn as_str(self) -> &'static str {
        match self {
            Peer::Controller => "controller",
            Peer::Partner => "partner",
        }
    }
}

/// Labels of the message counters.
#[derive(Debug, Clone, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct MessageLabels {
    /// The message kind (`mobiwf_proto::Message::kind`).
    pub kind: String,
    /// `controller` or `partner`: the destination of sent messages, the source of received ones.
    pub peer: String,
}

/// Labels of the finished-activity counter.
#[derive(Debug, Clone, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct StateLabels {
    /// A task state: `succeeded`, `failed` or `cancelled` for the finished-activity counter,
    /// any but `not_ready` for the entered-state counter.
    pub state: String,
}

/// Labels of the book's refused-transition counter.
#[derive(Debug, Clone, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct RefusalLabels {
    /// The lifecycle: `instance`, `partition` or `activity`.
    pub lifecycle: String,
    /// The kind of state it was in, as `docs/lifecycles.md` names it.
    pub from: String,
    /// The kind of event it did not take, as `docs/lifecycles.md` names it.
    pub event: String,
}

/// Labels of the API's refused-request counter.
#[derive(Debug, Clone, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct StatusLabels {
    /// The HTTP status answered: `401` (no token the daemon knows) or `403` (a role too low).
    pub status: String,
}

/// Labels of the epoch gauge.
#[derive(Debug, Clone, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct ShardLabels {
    /// The shard of the controllers' book.
    pub shard: String,
}

/// The metrics one process keeps.
pub struct Metrics {
    registry: Registry,
    messages_sent: Family<MessageLabels, Counter>,
    messages_received: Family<MessageLabels, Counter>,
    send_failures: Family<MessageLabels, Counter>,
    refused: Family<MessageLabels, Counter>,
    api_refused: Family<StatusLabels, Counter>,
    duplicates: Counter,
    inbound_shed: Counter,
    connections_refused: Counter,
    activities_started: Counter,
    activities_finished: Family<StateLabels, Counter>,
    activities_entered: Family<StateLabels, Counter>,
    transitions_refused: Counter,
    book_transitions_refused: Family<RefusalLabels, Counter>,
    outbox_depth: Gauge,
    runs_in_memory: Gauge,
    instances_in_memory: Gauge,
    instances_deleted: Counter,
    submissions_shed: Counter,
    stale_epochs: Counter,
    epochs: Family<ShardLabels, Gauge>,
    relay: crate::mesh::RelayCounters,
}

impl Default for Metrics {
    fn default() -> Self {
        Self::new()
    }
}

impl Metrics {
    /// Registers every metric under the `mobiwf` prefix.
    pub fn new() -> Metrics {
        let mut registry = Registry::with_prefix("mobiwf");
        let m = Metrics {
            messages_sent: Family::default(),
            messages_received: Family::default(),
            send_failures: Family::default(),
            refused: Family::default(),
            api_refused: Family::default(),
            duplicates: Counter::default(),
            inbound_shed: Counter::default(),
            connections_refused: Counter::default(),
            activities_started: Counter::default(),
            activities_finished: Family::default(),
            activities_entered: Family::default(),
            transitions_refused: Counter::default(),
            book_transitions_refused: Family::default(),
            outbox_depth: Gauge::default(),
            runs_in_memory: Gauge::default(),
            instances_in_memory: Gauge::default(),
            instances_deleted: Counter::default(),
            submissions_shed: Counter::default(),
            stale_epochs: Counter::default(),
            epochs: Family::default(),
            relay: crate::mesh::RelayCounters::default(),
            registry: Registry::default(),
        };
        registry.register(
            "messages_sent",
            "Messages acknowledged by their receiver, by kind and destination",
            m.messages_sent.clone(),
        );
        registry.register(
            "messages_received",
            "Messages received and applied (duplicates excluded), by kind and source",
            m.messages_received.clone(),
        );
        registry.register(
            "send_failures",
            "Attempts to send a message that failed and will be retried, by kind and destination",
            m.send_failures.clone(),
        );
        registry.register(
            "duplicate_messages",
            "Messages received again (a retry) and acknowledged without applying them twice",
            m.duplicates.clone(),
        );
        registry.register(
            "activities_started",
            "Activities started on this node",
            m.activities_started.clone(),
        );
        registry.register(
            "activities_finished",
            "Activities that reached a final state on this node, by state",
            m.activities_finished.clone(),
        );
        registry.register(
            "activities_entered",
            "Task states entered by activities on this node, by state (synchronizing, ready, \
             running, succeeded, failed, cancelled)",
            m.activities_entered.clone(),
        );
        registry.register(
            "outbox_depth",
            "Messages written to the outbox and not yet acknowledged by their receiver",
            m.outbox_depth.clone(),
        );
        registry.register(
            "runs_in_memory",
            "Partition runs a node holds in memory: the live ones (finished instances are read \
             back from the store on demand)",
            m.runs_in_memory.clone(),
        );
        m.register_relay(&mut registry);
        m.register_refused_transitions(&mut registry);
        m.register_protection(&mut registry);
        m.register_instances(&mut registry);
        m.register_epochs(&mut registry);
        Metrics { registry, ..m }
    }

    /// What a node heard of the epochs of a clustered controller's book.
    fn register_epochs(&self, registry: &mut Registry) {
        registry.register(
            "stale_epochs_refused",
            "Messages of a controller that owned its shard of the book at an epoch older than \
             the one known for it (fenced since), refused without being applied",
            self.stale_epochs.clone(),
        );
        registry.register(
            "controller_epoch",
            "The highest epoch heard from the controllers of a cluster, by shard (none from a \
             controller outside a cluster)",
            self.epochs.clone(),
        );
    }

    /// Counts a message refused for its stale epoch.
    pub fn stale_epoch_refused(&self) {
        self.stale_epochs.inc();
    }

    /// How many messages were refused for their stale epoch.
    pub fn stale_epochs_refused(&self) -> u64 {
        self.stale_epochs.get()
    }

    /// The highest epoch heard for `shard`.
    pub fn set_controller_epoch(&self, shard: u32, epoch: i64) {
        let labels = ShardLabels {
            shard: shard.to_string(),
        };
        self.epochs.get_or_create(&labels).set(epoch);
    }

    fn register_relay(&self, registry: &mut Registry) {
        registry.register(
            "relay_reservations_accepted",
            "Reservations this daemon accepted as a relay (renewals left out)",
            self.relay.reservations.clone(),
        );
        registry.register(
            "relay_circuits_accepted",
            "Circuits this daemon accepted as a relay: connections it joined between two peers",
            self.relay.circuits.clone(),
        );
        registry.register(
            "relayed_connections",
            "Connections of this daemon established through a relay (dialled or accepted)",
            self.relay.relayed_connections.clone(),
        );
    }

    /// The counters of the transitions a core asked for and a lifecycle table refused: bugs
    /// of the node's engine or the controller's book, which changed nothing.
    fn register_refused_transitions(&self, registry: &mut Registry) {
        registry.register(
            "engine_transitions_refused",
            "Changes of state of an activity or a work item copy the engine asked for and a \
             lifecycle table refused (a bug: nothing changed)",
            self.transitions_refused.clone(),
        );
        registry.register(
            "book_transitions_refused",
            "Changes of state the controller's book asked for and a lifecycle table refused, by \
             lifecycle, state and event (a bug: nothing changed; but activity/replaced/placed, a \
             contingency activity withdrawn before it was asked for, which is placed all the same)",
            self.book_transitions_refused.clone(),
        );
    }

    /// The relay counters, for the mesh to count into.
    pub fn relay_counters(&self) -> crate::mesh::RelayCounters {
        self.relay.clone()
    }

    /// The counters of what protection against strangers and floods turned away.
    fn register_protection(&self, registry: &mut Registry) {
        registry.register(
            "messages_refused",
            "Messages refused (not applied, the sender told why: a stranger, a sender with no \
             say, a message that does not apply), by kind and source; each is logged with \
             the sender's peer id",
            self.refused.clone(),
        );
        registry.register(
            "inbound_shed",
            "Inbound messages left unanswered (their sender tries again) because their peer had \
             too many waiting or sent too many a second",
            self.inbound_shed.clone(),
        );
        registry.register(
            "connections_refused",
            "Inbound connections refused while being set up because their source address had \
             too many being set up, or strangers held all the slots not kept for known sources \
             (each source logged at most once a minute)",
            self.connections_refused.clone(),
        );
        registry.register(
            "api_refused",
            "HTTP API requests refused by the token check, by status: 401 (no token this \
             daemon knows), 403 (a token without the role)",
            self.api_refused.clone(),
        );
    }

    /// Counts an API request the token check refused with `status`.
    pub fn api_refused(&self, status: u16) {
        let labels = StatusLabels {
            status: status.to_string(),
        };
        self.api_refused.get_or_create(&labels).inc();
    }

    fn labels(kind: &str, peer: Peer) -> MessageLabels {
        MessageLabels {
            kind: kind.to_owned(),
            peer: peer.as_str().to_owned(),
        }
    }

    /// Counts a message acknowledged by its receiver.
    pub fn sent(&self, kind: &str, to: Peer) {
        self.messages_sent
            .get_or_create(&Self::labels(kind, to))
            .inc();
    }

    /// Counts a message received and applied.
    pub fn received(&self, kind: &str, from: Peer) {
        self.messages_received
            .get_or_create(&Self::labels(kind, from))
            .inc();
    }

    /// How many `kind` messages from `from` were received and applied.
    pub fn received_count(&self, kind: &str, from: Peer) -> u64 {
        self.messages_received
            .get_or_create(&Self::labels(kind, from))
            .get()
    }

    /// Counts a failed attempt to send.
    pub fn send_failed(&self, kind: &str, to: Peer) {
        self.send_failures
            .get_or_create(&Self::labels(kind, to))
            .inc();
    }

    /// Counts a message refused.
    pub fn refused(&self, kind: &str, from: Peer) {
        self.refused.get_or_create(&Self::labels(kind, from)).inc();
    }

    /// How many `kind` messages from `from` were refused.
    pub fn refused_count(&self, kind: &str, from: Peer) -> u64 {
        self.refused.get_or_create(&Self::labels(kind, from)).get()
    }

    /// The counter of inbound requests the mesh sheds (given to the mesh).
    pub fn inbound_shed(&self) -> Counter {
        self.inbound_shed.clone()
    }

    /// The counter of inbound connections the mesh refused per source (`mesh::guard`).
    pub fn connections_refused(&self) -> Counter {
        self.connections_refused.clone()
    }

    /// Counts a duplicate received.
    pub fn duplicate(&self) {
        self.duplicates.inc();
    }

    /// Counts a started activity.
    pub fn activity_started(&self) {
        self.activities_started.inc();
    }

    /// Counts `count` transitions the engine's lifecycle tables refused.
    pub fn transitions_refused(&self, count: u64) {
        self.transitions_refused.inc_by(count);
    }

    /// Counts `count` transitions of `lifecycle` from `from` on `event` that the book's
    /// lifecycle table refused.
    pub fn book_transitions_refused(&self, lifecycle: &str, from: &str, event: &str, count: u64) {
        let labels = RefusalLabels {
            lifecycle: lifecycle.to_owned(),
            from: from.to_owned(),
            event: event.to_owned(),
        };
        self.book_transitions_refused
            .get_or_create(&labels)
            .inc_by(count);
    }

    /// Counts an activity that entered task state `state`.
    pub fn activity_entered(&self, state: &str) {
        self.activities_entered
            .get_or_create(&StateLabels {
                state: state.to_owned(),
            })
            .inc();
    }

    /// Counts an activity that reached `state`.
    pub fn activity_finished(&self, state: &str) {
        self.activities_finished
            .get_or_create(&StateLabels {
                state: state.to_owned(),
            })
            .inc();
    }

    /// Sets the number of messages waiting in the outbox.
    pub fn set_outbox_depth(&self, depth: usize) {
        self.outbox_depth
            .set(i64::try_from(depth).unwrap_or(i64::MAX));
    }

    /// Sets the number of partition runs in a node's memory.
    pub fn set_runs_in_memory(&self, runs: usize) {
        self.runs_in_memory
            .set(i64::try_from(runs).unwrap_or(i64::MAX));
    }

    /// The controller's instance metrics (bounded memory, retention).
    fn register_instances(&self, registry: &mut Registry) {
        registry.register(
            "instances_in_memory",
            "Instances the controller holds in memory (those not settled; finished ones are \
             read back from the store when asked for)",
            self.instances_in_memory.clone(),
        );
        registry.register(
            "instances_deleted",
            "Finished instances deleted with their history by the retention sweep \
             (serve --retain-finished)",
            self.instances_deleted.clone(),
        );
        registry.register(
            "submissions_shed",
            "Instance submissions answered 429 by the controller's admission control (past its \
             limit of instances under way; nothing of them was stored)",
            self.submissions_shed.clone(),
        );
    }

    /// Sets the number of instances held in memory.
    pub fn set_instances_in_memory(&self, count: usize) {
        self.instances_in_memory
            .set(i64::try_from(count).unwrap_or(i64::MAX));
    }

    /// The instances held in memory, as last set: the controller's unsettled ones.
    pub fn instances_in_memory(&self) -> usize {
        usize::try_from(self.instances_in_memory.get()).unwrap_or(0)
    }

    /// Counts one submission shed by admission control.
    pub fn submission_shed(&self) {
        self.submissions_shed.inc();
    }

    /// Counts finished instances deleted by the retention sweep.
    pub fn instances_deleted(&self, count: usize) {
        self.instances_deleted
            .inc_by(u64::try_from(count).unwrap_or(u64::MAX));
    }

    /// The metrics in the Prometheus text format.
    pub fn encode(&self) -> String {
        let mut out = String::new();
        // Writing into a String cannot fail.
        let _ = prometheus_client::encoding::text::encode(&mut out, &self.registry);
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn refused_transitions_are_exported_as_a_counter() {
        let m = Metrics::new();
        m.transitions_refused(2);
        m.transitions_refused(1);
        let text = m.encode();
        assert!(
            text.lines()
                .any(|l| l == "mobiwf_engine_transitions_refused_total 3"),
            "{text}"
        );
    }

    #[test]
    fn the_books_refused_transitions_are_exported_by_lifecycle_state_and_event() {
        let m = Metrics::new();
        m.book_transitions_refused("instance", "succeeded", "rerun", 2);
        m.book_transitions_refused("instance", "succeeded", "rerun", 1);
        m.book_transitions_refused("partition", "sent", "rerun", 1);
        let text = m.encode();
        for line in [
            r#"mobiwf_book_transitions_refused_total{lifecycle="instance",from="succeeded",event="rerun"} 3"#,
            r#"mobiwf_book_transitions_refused_total{lifecycle="partition",from="sent",event="rerun"} 1"#,
        ] {
            assert!(text.lines().any(|l| l == line), "{line} in {text}");
        }
    }
}
