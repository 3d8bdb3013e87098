//! What the controller's log and metrics say of the transitions its book asked for and a
//! lifecycle table refused: a bug of the book's, which changed nothing, and would otherwise
//! pass unseen.

use mobiwf_book::{Refusals, Subject};
use mobiwf_runtime::metrics::Metrics;

/// Logs (at warn) and counts the refused transitions the book handed over.
pub(super) fn journal(metrics: &Metrics, refusals: Refusals) {
    let count = refusals.count();
    if count == 0 {
        return;
    }
    for (r, n) in &refusals.counts {
        metrics.book_transitions_refused(r.lifecycle, r.from, r.event, *n);
    }
    let shown = refusals.latest.len() as u64;
    for r in refusals.latest {
        let instance = r.instance;
        let what = match r.subject {
            Subject::Instance => String::new(),
            Subject::Partition(p) => format!(" (partition {p})"),
            Subject::Activity(a) => format!(" (activity {a})"),
        };
        tracing::warn!(
            %instance,
            "the book asked for a change of state its lifecycle does not allow{what}: {}",
            r.refusal
        );
    }
    if count > shown {
        let more = count - shown;
        tracing::warn!("{more} more refused changes of state were not kept");
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use mobiwf_book::{InstanceEvent, InstanceState, RefusedTransition};
    use mobiwf_proto::InstanceId;

    use super::*;

    #[test]
    fn every_refused_transition_is_counted_by_lifecycle_state_and_event_even_those_not_kept() {
        let refusal = InstanceState::Succeeded
            .transition(InstanceEvent::Rerun)
            .expect_err("a succeeded instance is not rerun");
        let refusals = Refusals {
            counts: BTreeMap::from([(refusal.clone(), 70)]),
            latest: [RefusedTransition {
                instance: InstanceId(1),
                subject: Subject::Instance,
                refusal,
            }]
            .into(),
        };
        let metrics = Metrics::new();
        journal(&metrics, refusals);
        journal(&metrics, Refusals::default());
        let text = metrics.encode();
        let line = r#"mobiwf_book_transitions_refused_total{lifecycle="instance",from="succeeded",event="rerun"} 70"#;
        assert!(text.lines().any(|l| l == line), "{text}");
    }
}
