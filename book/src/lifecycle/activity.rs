//! An activity's lifecycle as the controller sees it: what its node says, what the controller
//! decides (failures, operator's cancel, overdue withdrawals) and what its contingency did.
//!
//! [`ActivityView`](crate::ActivityView) keeps an [`ActivityLife`] as its state: the
//! [`ActivityLifecycle`], which of the three states before the start its node said, and an
//! overdue timer that outlives the grace when the activity ended during it. Only
//! [`ActivityLife::step`] changes it. It is stored as the fields it always had (`state`,
//! `overdue`, `replaced_by`, `blocked_instead`, with `partition` and `detail` when it is the
//! operator's cancel: [`ActivityLife::from_fields`], [`ActivityLife::fields`]), so the stored
//! JSON is unchanged. Facts that are not state stay fields: times, node, `retried`,
//! `emergency`, the contingency rule, `stands_for`, `awaits`/`relayed`, and the reason
//! (`detail`).
//!
//! A paused activity (the PAUSING state of *A lightweight workflow engine based on a
//! relational structure* (He, Li, Jiao, Liu)) is [`ActivityLifecycle::Paused`] (`paused`).
//! The WorkToDo model (next) refines this without a rewrite: `Waiting` becomes `NotReady`,
//! `Synchronizing` (remote preconditions awaited) and `Ready`; the final variants stay (`Succeeded`, `Failed`, `Cancelled`). The nodes will say
//! those states through [`ActivityEvent::NodeSays`]; work items (offered, selected, locked by a
//! holder) will be data of `Ready`/`Running`, with events of their own.

use mobiwf_proto::{ActivityId, ActivityState};

use super::{Refusal, check, kinds};
use crate::CANCELLED_BY_OPERATOR;

mod event;
mod paused;
pub use event::{ActivityEvent, ActivityEventKind};
pub use paused::PausedBy;

/// Where an activity is, as the controller knows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ActivityLifecycle {
    /// A contingency activity no partition holds: nothing runs it (yet).
    Unplaced,
    /// On a node, not started (WorkToDo: `NOT_READY`, `SYNCHRONIZING`, `READY`).
    Waiting,
    /// Started on its node: its command runs or it is on a worklist (WorkToDo: `RUNNING`).
    Running,
    /// Not final, and a successor's node said it waited longer than a precondition `timeOut`
    /// for it: unless its own partner reports it final first, the controller withdraws it
    /// when the grace runs out.
    Overdue {
        /// The state it is in meanwhile.
        under: Undecided,
        /// When and why it is withdrawn.
        grace: Grace,
    },
    /// Paused on its node (by an operator or its item's holder): goes back to `under` when
    /// resumed.
    Paused {
        /// Where it was (waiting or running).
        under: Undecided,
        /// Who paused it and when.
        pause: PausedBy,
    },
    /// Finished with success (WorkToDo: `SUCCEEDED`).
    Succeeded,
    /// Finished without success, or the controller decided it failed (WorkToDo: `FAILED`).
    Failed {
        /// What its contingency did.
        replaced: Replacement,
    },
    /// Will never run: a predecessor blocks it (WorkToDo: `CANCELLED`).
    Cancelled,
    /// Will never run: it is on a path not taken (skipped by the routing rules of *A lightweight
    /// workflow engine based on a relational structure* (He, Li, Jiao, Liu), §3.2.2).
    Skipped,
    /// Ended by an operator's cancel: marked so by the controller at once, or said so by its
    /// node (`state`, with the operator's words). Its node's own final word is still taken
    /// (it may have ended before the cancel reached it).
    CancelledByOperator {
        /// As the controller or its node has it (final).
        state: ActivityState,
    },
}

/// The non-final states an overdue activity can be in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Undecided {
    /// Not placed (a contingency activity).
    Unplaced,
    /// Placed, not started.
    Waiting,
    /// Started.
    Running,
}

/// When the controller withdraws an overdue activity, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Grace {
    /// When, ms since the epoch.
    pub at_ms: u64,
    /// The reason it is withdrawn for.
    pub reason: String,
}

/// What became of a failed activity's contingency.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Replacement {
    /// Nothing (yet): contingency -1 or 0 applied, or contingency activity x waits to be
    /// placed.
    No,
    /// Contingency activity x runs in its place.
    By(ActivityId),
    /// Its contingency activity was in use already: its successors were cancelled instead.
    InUse,
}

kinds! {
    /// The kind of an [`ActivityLifecycle`], without its data (a failed activity's three
    /// outcomes of its contingency are three kinds).
    pub enum ActivityKind {
        /// [`ActivityLifecycle::Unplaced`].
        Unplaced => "unplaced",
        /// [`ActivityLifecycle::Waiting`].
        Waiting => "waiting",
        /// [`ActivityLifecycle::Running`].
        Running => "running",
        /// [`ActivityLifecycle::Overdue`].
        Overdue => "overdue",
        /// [`ActivityLifecycle::Paused`].
        Paused => "paused",
        /// [`ActivityLifecycle::Succeeded`].
        Succeeded => "succeeded",
        /// [`ActivityLifecycle::Failed`], nothing in its place ([`Replacement::No`]).
        Failed => "failed",
        /// [`ActivityLifecycle::Failed`], its contingency activity in its place.
        Replaced => "replaced",
        /// [`ActivityLifecycle::Failed`], its contingency activity in use already.
        BlockedInstead => "blocked_instead",
        /// [`ActivityLifecycle::Cancelled`].
        Cancelled => "cancelled",
        /// [`ActivityLifecycle::Skipped`].
        Skipped => "skipped",
        /// [`ActivityLifecycle::CancelledByOperator`].
        CancelledByOperator => "cancelled_by_operator",
    }
}

pub use super::tables::ACTIVITY as TRANSITIONS;

impl Undecided {
    fn lifecycle(self) -> ActivityLifecycle {
        match self {
            Undecided::Unplaced => ActivityLifecycle::Unplaced,
            Undecided::Waiting => ActivityLifecycle::Waiting,
            Undecided::Running => ActivityLifecycle::Running,
        }
    }
}

impl ActivityLifecycle {
    /// The kind of state, as the tables name it.
    pub fn kind(&self) -> ActivityKind {
        match self {
            ActivityLifecycle::Unplaced => ActivityKind::Unplaced,
            ActivityLifecycle::Waiting => ActivityKind::Waiting,
            ActivityLifecycle::Running => ActivityKind::Running,
            ActivityLifecycle::Overdue { .. } => ActivityKind::Overdue,
            ActivityLifecycle::Paused { .. } => ActivityKind::Paused,
            ActivityLifecycle::Succeeded => ActivityKind::Succeeded,
            ActivityLifecycle::Failed {
                replaced: Replacement::No,
            } => ActivityKind::Failed,
            ActivityLifecycle::Failed {
                replaced: Replacement::By(_),
            } => ActivityKind::Replaced,
            ActivityLifecycle::Failed {
                replaced: Replacement::InUse,
            } => ActivityKind::BlockedInstead,
            ActivityLifecycle::Cancelled => ActivityKind::Cancelled,
            ActivityLifecycle::Skipped => ActivityKind::Skipped,
            ActivityLifecycle::CancelledByOperator { .. } => ActivityKind::CancelledByOperator,
        }
    }

    /// The state as the nodes and the API say it.
    pub fn state(&self) -> ActivityState {
        match self {
            ActivityLifecycle::Unplaced | ActivityLifecycle::Waiting => ActivityState::NotReady,
            ActivityLifecycle::Running => ActivityState::Running,
            ActivityLifecycle::Overdue { under, .. } | ActivityLifecycle::Paused { under, .. } => {
                under.lifecycle().state()
            }
            ActivityLifecycle::Succeeded => ActivityState::Succeeded,
            ActivityLifecycle::Failed { .. } => ActivityState::Failed,
            ActivityLifecycle::Cancelled => ActivityState::Cancelled,
            ActivityLifecycle::Skipped => ActivityState::Skipped,
            ActivityLifecycle::CancelledByOperator { state } => *state,
        }
    }

    /// True once it can no longer change (but for its node's word after an operator's
    /// cancel, and its contingency's outcome after a failure).
    pub fn is_final(&self) -> bool {
        self.state().is_final()
    }

    /// The state of an activity that ended in `state` (final), as its node or the
    /// controller says, the operator's cancel being the reason or not.
    fn ended(state: ActivityState, by_operator: bool) -> ActivityLifecycle {
        match state {
            _ if by_operator => ActivityLifecycle::CancelledByOperator { state },
            ActivityState::Succeeded => ActivityLifecycle::Succeeded,
            ActivityState::Failed => ActivityLifecycle::Failed {
                replaced: Replacement::No,
            },
            ActivityState::Cancelled => ActivityLifecycle::Cancelled,
            ActivityState::Skipped => ActivityLifecycle::Skipped,
            ActivityState::NotReady | ActivityState::Synchronizing | ActivityState::Ready => {
                ActivityLifecycle::Waiting
            }
            ActivityState::Running => ActivityLifecycle::Running,
        }
    }

    /// What the rules make of `event` in this state, before the table is consulted.
    fn target(&self, event: &ActivityEvent) -> Option<ActivityLifecycle> {
        use ActivityEvent as E;
        use ActivityLifecycle as L;
        let undecided = match self {
            L::Unplaced => Some(Undecided::Unplaced),
            L::Waiting => Some(Undecided::Waiting),
            L::Running => Some(Undecided::Running),
            // Overdue while paused: the controller withdraws it when the grace runs out
            // (unless its node reports it final first), paused or not.
            L::Paused { under, .. } => Some(*under),
            _ => None,
        };
        Some(match (self, event) {
            (L::Unplaced, E::Placed) => L::Waiting,
            (L::Waiting | L::Running | L::Paused { .. }, E::Paused { .. } | E::Resumed(_))
            | (L::Paused { .. }, E::NodeSays { .. }) => return self.pause_target(event),
            // Placed during its grace: it waits on its partition, still overdue.
            (
                L::Overdue {
                    under: Undecided::Unplaced,
                    grace,
                },
                E::Placed,
            ) => L::Overdue {
                under: Undecided::Waiting,
                grace: grace.clone(),
            },
            (L::Overdue { under, grace }, E::NodeSays { state, .. }) if !state.is_final() => {
                let under = match state {
                    ActivityState::Running => Undecided::Running,
                    _ if *under == Undecided::Unplaced => Undecided::Unplaced,
                    _ => Undecided::Waiting,
                };
                L::Overdue {
                    under,
                    grace: grace.clone(),
                }
            }
            (L::CancelledByOperator { .. }, E::NodeSays { state, by_operator })
                if state.is_final() =>
            {
                L::ended(*state, *by_operator)
            }
            (_, E::NodeSays { state, by_operator }) if !self.is_final() => {
                L::ended(*state, *by_operator && state.is_final())
            }
            (_, E::Decided(state)) if !self.is_final() && state.is_final() => {
                L::ended(*state, false)
            }
            (_, E::OperatorCancel) if !self.is_final() => L::CancelledByOperator {
                state: ActivityState::Cancelled,
            },
            (_, E::SaidOverdue(grace)) => L::Overdue {
                under: undecided?,
                grace: grace.clone(),
            },
            (L::Overdue { under, .. }, E::GraceOver) => under.lifecycle(),
            (L::Failed { replaced }, E::StandInPlaced(x)) if *replaced == Replacement::No => {
                L::Failed {
                    replaced: Replacement::By(*x),
                }
            }
            (L::Failed { replaced }, E::StandInInUse) if *replaced == Replacement::No => {
                L::Failed {
                    replaced: Replacement::InUse,
                }
            }
            (
                L::Failed {
                    replaced: Replacement::No,
                }
                | L::Cancelled,
                E::Rerun,
            ) => L::Waiting,
            (
                L::Succeeded
                | L::Failed {
                    replaced: Replacement::No,
                },
                E::NewPass,
            ) => L::Waiting,
            _ => return None,
        })
    }

    /// The one transition function: the state after `event`, or why there is none.
    pub fn transition(self, event: &ActivityEvent) -> Result<ActivityLifecycle, Refusal> {
        let refusal = Refusal {
            lifecycle: "activity",
            from: self.kind().name(),
            event: event.kind().name(),
        };
        let to = self.target(event).ok_or(refusal)?;
        check(
            "activity",
            TRANSITIONS,
            (self.kind(), event.kind(), to.kind()),
        )?;
        Ok(to)
    }
}

/// An activity's state as the book keeps it: its lifecycle, and what it keeps beside it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ActivityLife {
    /// Where it is.
    lifecycle: ActivityLifecycle,
    /// Before its start (`Unplaced`, `Waiting`, or `Overdue` under them): which of not
    /// ready, synchronizing and ready its node said. `NotReady` otherwise.
    pending: ActivityState,
    /// It ended during an overdue grace: the timer stays until the tick at its time drops it.
    timer: Option<Grace>,
}

/// The fields an activity's state is stored as (beside `partition` and `detail`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct StoredLife {
    /// `state`.
    pub state: ActivityState,
    /// `overdue`: (when it is withdrawn, ms since the epoch; why).
    pub overdue: Option<(u64, String)>,
    /// `replaced_by`.
    pub replaced_by: Option<ActivityId>,
    /// `blocked_instead`.
    pub blocked_instead: bool,
    /// `paused`: who paused it and when.
    pub paused: Option<PausedBy>,
}

impl ActivityLife {
    /// A new activity, not started: placed on a partition (`Waiting`) or not (`Unplaced`).
    pub(crate) fn new(placed: bool) -> ActivityLife {
        ActivityLife {
            lifecycle: if placed {
                ActivityLifecycle::Waiting
            } else {
                ActivityLifecycle::Unplaced
            },
            pending: ActivityState::NotReady,
            timer: None,
        }
    }

    /// Where it is.
    pub fn lifecycle(&self) -> &ActivityLifecycle {
        &self.lifecycle
    }

    /// Its state as the nodes and the API say it (before the start: the one its node said).
    pub fn state(&self) -> ActivityState {
        match self.lifecycle.state() {
            s if s.is_pending() => self.pending,
            s => s,
        }
    }

    /// When and why the controller withdraws it, while it is overdue (or until the tick
    /// drops the timer of one that ended during the grace).
    pub fn overdue(&self) -> Option<&Grace> {
        match &self.lifecycle {
            ActivityLifecycle::Overdue { grace, .. } => Some(grace),
            _ => self.timer.as_ref(),
        }
    }

    /// The contingency activity that runs in its place, once it failed and one was placed.
    pub fn replaced_by(&self) -> Option<ActivityId> {
        match self.lifecycle {
            ActivityLifecycle::Failed {
                replaced: Replacement::By(x),
            } => Some(x),
            _ => None,
        }
    }

    /// It failed and its contingency activity was in use already: its successors were
    /// cancelled instead.
    pub fn blocked_instead(&self) -> bool {
        self.lifecycle
            == ActivityLifecycle::Failed {
                replaced: Replacement::InUse,
            }
    }

    /// Applies `event`: the state after it, or why there is none (then nothing changed).
    /// Ended for an operator's cancel, its `detail` says so. A final activity keeps a grace
    /// that was running as a timer ([`ActivityLife::overdue`]) until the next tick drops it.
    pub(crate) fn step(
        &mut self,
        event: &ActivityEvent,
        detail: &mut Option<String>,
    ) -> Result<ActivityLifecycle, Refusal> {
        let to = self.lifecycle.clone().transition(event)?;
        // Waiting stands for the three states before the start: the one its node said is
        // kept (not ready, synchronizing, ready).
        let was = self.state();
        let waits = matches!(
            to,
            ActivityLifecycle::Waiting
                | ActivityLifecycle::Paused {
                    under: Undecided::Waiting,
                    ..
                }
        );
        self.pending = match (waits, event) {
            (
                true,
                ActivityEvent::NodeSays { state, .. }
                | ActivityEvent::Resumed(state)
                | ActivityEvent::Paused { state, .. },
            ) if state.is_pending() => *state,
            (true, _) if was.is_pending() => was,
            _ => ActivityState::NotReady,
        };
        self.timer = if to.is_final() {
            self.overdue().cloned()
        } else {
            None
        };
        if let ActivityLifecycle::CancelledByOperator { .. } = to {
            *detail = Some(CANCELLED_BY_OPERATOR.to_owned());
        }
        self.lifecycle = to.clone();
        Ok(to)
    }

    /// The overdue grace ran out: an activity not final goes back to where it was (the
    /// caller withdraws it next); one that ended during the grace drops its timer.
    pub(crate) fn grace_over(&mut self) {
        let mut no_detail = None;
        if self
            .step(&ActivityEvent::GraceOver, &mut no_detail)
            .is_err()
        {
            self.timer = None;
        }
    }

    /// The state of an activity stored with these fields; `placed`: it has a partition;
    /// `by_operator`: its detail is the operator's cancel.
    pub(crate) fn from_fields(stored: StoredLife, placed: bool, by_operator: bool) -> ActivityLife {
        let StoredLife {
            state,
            overdue,
            replaced_by,
            blocked_instead,
            paused,
        } = stored;
        let grace = overdue.map(|(at_ms, reason)| Grace { at_ms, reason });
        let under = match state {
            s if s.is_pending() && !placed => Some(Undecided::Unplaced),
            s if s.is_pending() => Some(Undecided::Waiting),
            ActivityState::Running => Some(Undecided::Running),
            _ => None,
        };
        let pending = if state.is_pending() {
            state
        } else {
            ActivityState::NotReady
        };
        let (lifecycle, timer) = match (under, grace) {
            (Some(under), None) if let Some(pause) = paused => {
                (ActivityLifecycle::Paused { under, pause }, None)
            }
            (Some(under), Some(grace)) => (ActivityLifecycle::Overdue { under, grace }, None),
            (Some(under), None) => (under.lifecycle(), None),
            (None, timer) if by_operator => {
                (ActivityLifecycle::CancelledByOperator { state }, timer)
            }
            (None, timer) if state == ActivityState::Failed => {
                let replaced = match (replaced_by, blocked_instead) {
                    (Some(x), _) => Replacement::By(x),
                    (None, true) => Replacement::InUse,
                    (None, false) => Replacement::No,
                };
                (ActivityLifecycle::Failed { replaced }, timer)
            }
            (None, timer) => (ActivityLifecycle::ended(state, false), timer),
        };
        ActivityLife {
            lifecycle,
            pending,
            timer,
        }
    }

    /// The fields it is stored as.
    pub(crate) fn fields(&self) -> StoredLife {
        StoredLife {
            state: self.state(),
            overdue: self.overdue().map(|g| (g.at_ms, g.reason.clone())),
            replaced_by: self.replaced_by(),
            blocked_instead: self.blocked_instead(),
            paused: self.paused().cloned(),
        }
    }

    /// Who paused it and when, while it is paused.
    pub fn paused(&self) -> Option<&PausedBy> {
        match &self.lifecycle {
            ActivityLifecycle::Paused { pause, .. } => Some(pause),
            _ => None,
        }
    }
}
