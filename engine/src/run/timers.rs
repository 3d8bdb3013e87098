//! An activity's timers (its `timeToWait`, remote preconditions' `timeOut`s, its own
//! `timeOut`, the wait before its next try, a killed held try's fence): which comes next, from
//! stored times only, so they survive restarts.

use std::time::Duration;

use mobiwf_proto::{ActivityId, Millis};
use mobiwf_xml_schema::{ActivityKind, PartitionActivity};

use super::Run;
use crate::known::Known;
use crate::lifecycle::Life;

/// What happens when an activity's timer runs out.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Timer {
    /// `timeToWait`: start it anyway.
    Emergency,
    /// `timeOut`: it ran too long; it fails (or is tried again).
    RunTooLong,
    /// `<retries>`: the wait after a failed try is over; run the command again.
    Retry,
    /// A fence passed since a held try was killed without its end being told: release its
    /// request (`crate::sync`).
    Unfence,
    /// A remote precondition's `timeOut`: its notification did not come; tell the controller.
    Overdue {
        /// The precondition.
        precondition: ActivityId,
        /// Its `timeOut` in seconds.
        time_out_secs: u32,
    },
}

impl Run {
    /// The run's earliest timer: (when, activity, what), the smallest activity id first among
    /// timers due at the same time.
    pub(crate) fn earliest_timer(&self, known: Option<&Known>) -> Option<(u64, ActivityId, Timer)> {
        self.doc
            .activities
            .iter()
            .filter_map(|act| {
                let (at, timer) = self.timer(act, known)?;
                Some((at, act.id, timer))
            })
            .min_by_key(|(at, activity, _)| (*at, *activity))
    }

    /// The next timer of an activity, in ms since the epoch: while it waits, its `timeToWait`
    /// and its remote preconditions' `timeOut`s (from the deployment, or from the start of its
    /// loop's pass); while it runs, its `timeOut`, or the end of the wait before its next try;
    /// the fence of a killed held try whose end was not told, once final or started over.
    /// All count from stored times (deployment, pass, start, failed try), so they survive
    /// restarts. An interrupted instance starts nothing: only `timeOut`s
    /// of running activities count then. A paused activity has none but that fence; its
    /// `timeOut` moves by the time it was paused.
    pub(crate) fn timer(
        &self,
        act: &PartitionActivity,
        known: Option<&Known>,
    ) -> Option<(u64, Timer)> {
        let p = self.progress(act.id)?;
        let held = known.is_some_and(|k| k.interrupted || k.cancelled);
        // `secs` seconds after `from` (ms), saturating.
        let after = |from: u64, secs: u32| {
            Millis(from)
                .saturating_add(Duration::from_secs(secs.into()))
                .as_u64()
        };
        let waits_since = p.pass_began_ms.unwrap_or(self.deployed_ms);
        let by_life = match p.life {
            Life::NotReady if !held => {
                let emergency = (act.time_to_wait_secs > 0)
                    .then(|| (after(waits_since, act.time_to_wait_secs), Timer::Emergency));
                let overdue = act
                    .preconditions
                    .iter()
                    .filter(|p| !p.local && p.time_out_secs > 0)
                    .filter(|p| !self.overdue.contains(&(act.id, p.id)))
                    .filter(|p| self.remote_outcome(p.id, known).is_none())
                    .map(|p| {
                        (
                            after(waits_since, p.time_out_secs),
                            Timer::Overdue {
                                precondition: p.id,
                                time_out_secs: p.time_out_secs,
                            },
                        )
                    });
                emergency
                    .into_iter()
                    .chain(overdue)
                    .min_by_key(|(at, _)| *at)
            }
            Life::RetryWait { at_ms, .. } if !held => Some((at_ms, Timer::Retry)),
            // A person's work counts from the offer, a command's from the start of its try.
            Life::Ready | Life::Running { .. } if act.time_out_secs > 0 => {
                let since = match act.kind {
                    ActivityKind::Automatic | ActivityKind::Dummy => p.started_ms,
                    // Records of earlier versions have no ready time: their start was the offer.
                    ActivityKind::Manual | ActivityKind::SemiAutomatic => {
                        p.ready_ms.or(p.started_ms)
                    }
                };
                let since = since
                    .unwrap_or(self.deployed_ms)
                    .saturating_add(p.paused_for_ms);
                Some((after(since, act.time_out_secs), Timer::RunTooLong))
            }
            ref life if life.is_final() => p.gate.unfenced_at().map(|at| (at, Timer::Unfence)),
            _ => None,
        };
        // An earlier run's or pass's killed held try, whatever the activity does now.
        let lingering = p
            .gate
            .lingering_unfenced_at()
            .map(|at| (at, Timer::Unfence));
        by_life
            .into_iter()
            .chain(lingering)
            .min_by_key(|(at, _)| *at)
    }
}
