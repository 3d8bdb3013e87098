//! What the node's log says of the core's decisions: the controller's orders taken, the
//! core's notes, and each activity's change of state (with the metrics counting them).

use mobiwf_engine::{Input, Refusals, Transition};
use mobiwf_node_core::{Level, NodeInput, Note};
use mobiwf_proto::ActivityState;
use mobiwf_runtime::metrics::Metrics;

/// Logs an order of the controller's the core took (before the engine applies it).
pub(super) fn taken(input: &NodeInput) {
    let NodeInput::Engine(input) = input else {
        return;
    };
    match input {
        Input::Directory(d) => {
            tracing::info!(version = d.version, "organisation directory received")
        }
        Input::Deploy(d) => {
            let (instance, partition) = (d.instance, d.partition);
            tracing::info!(%instance, %partition, "partition deployed");
        }
        Input::Completed(c) => {
            let (instance, by) = (c.instance, c.by);
            tracing::info!(%instance, %by, "the instance was completed by its completion activity");
        }
        Input::Withdraw(w) => {
            let (instance, reason) = (w.instance, &w.reason);
            let ids: Vec<u64> = w.activities.iter().map(|a| a.0).collect();
            tracing::warn!(%instance, activities = ?ids, %reason, "the controller withdrew activities");
        }
        Input::Substitute {
            instance,
            replaced,
            by,
            ..
        } => tracing::info!(%instance, %replaced, %by, "contingency activity runs instead"),
        Input::Control(c) => {
            let (instance, action) = (c.instance, c.action.as_str());
            tracing::info!(%instance, action, "operator control");
        }
        Input::Compensate(c) => {
            let (instance, activity) = (c.instance, c.activity);
            tracing::info!(%instance, %activity, "compensation asked for");
        }
        Input::Rerun(r) => {
            let (instance, partition) = (r.instance, r.partition);
            let ids: Vec<u64> = r.activities.iter().map(|a| a.0).collect();
            tracing::info!(%instance, %partition, activities = ?ids, "operator rerun");
        }
        Input::SyncGranted(g) => {
            let t = g.ticket;
            tracing::info!(instance = %t.instance, activity = %t.activity, round = t.round, lease_ms = g.lease_ms, "class granted");
        }
        Input::SyncLapsed(g) => {
            let t = g.ticket;
            tracing::warn!(instance = %t.instance, activity = %t.activity, round = t.round, lease_ms = g.lease_ms, "class granted after this node's lease for the request ran out (no round trip with the controller within it): released and asked for again");
        }
        Input::SyncRefused(r) => {
            let t = r.ticket;
            tracing::info!(instance = %t.instance, activity = %t.activity, round = t.round, "class refused: {}", r.detail);
        }
        Input::SyncLost(l) => {
            tracing::warn!(instance = %l.instance, activity = %l.activity, "a held command's lease ran out: killed");
        }
        Input::Pause(p) => {
            let (instance, activity, action) = (p.instance, p.activity, p.action.as_str());
            tracing::info!(%instance, %activity, action, by = %p.by, "operator pause order");
        }
        // Not an order: partners' words (a loop's new pass too), claims, time, the ends of
        // commands, links.
        Input::Notified(_)
        | Input::NewPass(_)
        | Input::StateChanged(_)
        | Input::Fetched { .. }
        | Input::Claim(_)
        | Input::Tick
        | Input::Finished(_)
        | Input::CompensationEnded(_)
        | Input::Link { .. } => {}
    }
}

/// Logs the core's notes.
pub(super) fn notes(notes: Vec<Note>) {
    for note in notes {
        match note.level {
            Level::Info => tracing::info!("{}", note.text),
            Level::Warn => tracing::warn!("{}", note.text),
        }
    }
}

/// Logs and counts the activities' changes of state.
pub(super) fn transitions(metrics: &Metrics, transitions: Vec<Transition>) {
    for t in transitions {
        let span = tracing::info_span!("activity", instance = %t.key.instance, activity = %t.activity, name = %t.name);
        let _enter = span.enter();
        // Passing synchronizing and ready on the way to running is told at debug level.
        if t.state.is_pending() {
            tracing::debug!(state = t.state.as_str(), "activity {}", t.state.as_str());
        } else {
            tracing::info!(state = t.state.as_str(), "activity {}", t.state.as_str());
        }
        metrics.activity_entered(t.state.as_str());
        match t.state {
            ActivityState::Running => metrics.activity_started(),
            s if s.is_final() => metrics.activity_finished(s.as_str()),
            _ => {}
        }
    }
}

/// Logs and counts the changes of state the engine asked for and a lifecycle table refused (an
/// activity's or a work item copy's): a bug of the engine's, which changed nothing.
pub(super) fn refused(metrics: &Metrics, refusals: Refusals) {
    if refusals.count == 0 {
        return;
    }
    metrics.transitions_refused(refusals.count);
    let shown = refusals.latest.len() as u64;
    for r in refusals.latest {
        tracing::warn!(
            instance = %r.key.instance,
            partition = %r.key.partition,
            activity = %r.activity,
            "the engine asked for a change of state its lifecycle does not allow: {}",
            r.not_allowed
        );
    }
    if refusals.count > shown {
        let more = refusals.count - shown;
        tracing::warn!("{more} more refused changes of state were not kept");
    }
}

#[cfg(test)]
mod tests {
    use mobiwf_engine::lifecycle::{self, Event, Life};
    use mobiwf_engine::{RefusedTransition, RunKey};
    use mobiwf_proto::{ActivityId, InstanceId, PartitionId};

    use super::*;

    #[test]
    fn every_refused_transition_is_counted_even_those_not_kept() {
        let not_allowed = lifecycle::transition(&Life::Succeeded { detail: None }, Event::Start)
            .expect_err("a succeeded activity does not start");
        let refusals = Refusals {
            count: 70,
            latest: [RefusedTransition {
                key: RunKey {
                    instance: InstanceId(1),
                    partition: PartitionId(1),
                },
                activity: ActivityId(2),
                not_allowed: not_allowed.into(),
            }]
            .into(),
        };
        let metrics = Metrics::new();
        refused(&metrics, refusals);
        refused(&metrics, Refusals::default());
        let text = metrics.encode();
        assert!(
            text.lines()
                .any(|l| l == "mobiwf_engine_transitions_refused_total 70"),
            "{text}"
        );
    }
}
