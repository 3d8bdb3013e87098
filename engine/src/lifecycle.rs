//! The life of one activity on its node: its states, the events that move it, and the one
//! function ([`transition`]) through which every change of state goes, checked against the
//! table of allowed transitions ([`TRANSITIONS`]).
//!
//! The facts an activity's record keeps beside its state (when it started and ended, whether
//! its start was an emergency, how many tries failed) are not state: [`crate::run::Run`] keeps
//! them next to the [`Life`] and updates them from the transition taken.
//!
//! **The WorkToDo states** (*Synchronization and Disconnected Operation in WorkToDo* (IC-03-006),
//! §2.1) are this enum:
//! - `NOT_READY` is [`Life::NotReady`]: a precondition or its dependency rule does not hold
//!   yet;
//! - `SYNCHRONIZING` is [`Life::Synchronizing`]: both hold; it waits for synchronization
//!   (§4.8): an activity of a task class asks the controller's synchronization manager for
//!   its class and is admitted ([`Event::Admit`]) once granted, or fails ([`Event::Fail`])
//!   when refused (`crate::sync`); one without a class is admitted at once. Either also waits
//!   here for the files it reads (`crate::data`);
//! - `READY` is [`Life::Ready`]: an automatic activity starts at once; a manual or
//!   semi-automatic one is offered (its work item, `crate::items`, is data of this state and
//!   of the next) and stays here until a person selects or locks it;
//! - `RUNNING` is [`Life::Running`]: a try of its command runs, or a person holds its item
//!   (a held item given back returns it to `Ready`: [`Event::Return`]); [`Life::RetryWait`]
//!   is the wait between two tries, shown as running;
//! - `SUCCEEDED`, `FAILED`, `CANCELLED` are [`Life::Succeeded`], [`Life::Failed`],
//!   [`Life::Cancelled`]; an activity on a path not taken (by the routing rules of *A lightweight
//!   workflow engine based on a relational structure* (He, Li, Jiao, Liu), §3.2.2) is
//!   [`Life::Skipped`].
//!
//! A rerun (forward recovery, [`Event::Rerun`]) and a loop's next pass ([`Event::NewPass`])
//! are the ways out of a final state: an operator's `rerun` puts a failed activity, and those
//! cancelled because of it, back to `NotReady`, and their run starts over; a loop that runs
//! again puts the activities of its body, which all ended their pass, back to `NotReady` under
//! the next serial number.
//!
//! **Paused** (the PAUSING state of *A lightweight workflow engine based on a relational
//! structure* (He, Li, Jiao, Liu); *Synchronization and Disconnected Operation in WorkToDo*
//! (IC-03-006), §5.3, case 2) is [`Life::Paused`]: an operator ([`Event::Pause`] from the
//! controller's order) or the holder of its work item suspended a `Ready` or `Running`
//! activity; [`PausedFrom`] says where [`Event::Resume`] takes it back. Its holder keeps the
//! item; nothing starts, finishes or times out while it is paused (`crate::pause`). The wire
//! shows the state it resumes to (the WorkToDo states have no paused one), and the stored run
//! keeps the pause beside the record (`run::stored`). An interruption is a fact of the whole
//! instance (`Known::interrupted`), not a state: it holds pending activities and retries
//! without changing their state.

use mobiwf_proto::ActivityState;

/// Where an activity is in its life on its node.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Life {
    /// Not started: a precondition or its dependency rule does not hold yet.
    NotReady,
    /// Its preconditions and dependency rule hold: waiting for synchronization.
    Synchronizing,
    /// Nothing holds it back: about to start (automatic), or offered to people (manual and
    /// semi-automatic), or on the node's worklist.
    Ready,
    /// Started: try `attempt` of its command runs (0 the first), or a person holds its work
    /// item.
    Running {
        /// Which try runs.
        attempt: u32,
    },
    /// A try of its command failed; try `attempt` runs at `at_ms` (ms since the epoch).
    RetryWait {
        /// The try that runs next.
        attempt: u32,
        /// When, in ms since the epoch.
        at_ms: u64,
    },
    /// Finished with success (a person may have said something).
    Succeeded {
        /// What the person or the command said.
        detail: Option<String>,
    },
    /// Finished without success, or withdrawn by the controller.
    Failed {
        /// Why.
        detail: Option<String>,
    },
    /// Will never run or was stopped: a precondition failed, or an operator cancelled.
    Cancelled {
        /// Why.
        detail: Option<String>,
    },
    /// Will never run: it is on a path not taken (a route led elsewhere, or a predecessor
    /// was skipped).
    Skipped {
        /// Why.
        detail: Option<String>,
    },
    /// Suspended by an operator or by its item's holder: goes back to `resume` when resumed.
    Paused {
        /// Where it goes on from.
        resume: PausedFrom,
        /// Since when, in ms since the epoch.
        since_ms: u64,
    },
}

/// Where a paused activity goes on from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PausedFrom {
    /// It was ready (offered, or about to start): ready again.
    Ready,
    /// Try `attempt` ran, or a person held its item: it runs on (a command that ended while
    /// it was paused ends it then).
    Running {
        /// The try that runs.
        attempt: u32,
    },
    /// Try `attempt`'s command was killed when it was paused: the next try runs.
    Killed {
        /// The try that was killed.
        attempt: u32,
    },
}

/// What happens to an activity.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Event {
    /// Its preconditions and dependency rule hold, or its `timeToWait` ran out.
    Synchronize,
    /// Nothing holds it back any more (synchronization is satisfied).
    Admit,
    /// It starts (try 0): at once when automatic, when a person takes its item when manual.
    Start,
    /// The person who held its work item gave it back: it is offered again.
    Return,
    /// It finished with success.
    Succeed {
        /// What was said.
        detail: Option<String>,
    },
    /// It failed for good (no try left, done by a person, or its instance is cancelled), or
    /// its request for its task class was refused or its grant lost (`crate::sync`).
    Fail {
        /// Why.
        detail: String,
    },
    /// A try failed and `<retries>` allow another at `at_ms`.
    TryFailed {
        /// When the next try runs, in ms since the epoch.
        at_ms: u64,
        /// What the record says meanwhile.
        note: String,
    },
    /// The wait after a failed try is over: the next try runs.
    Retry,
    /// A precondition will never be met, or its dependency rule can no longer hold.
    Block {
        /// Which, in words.
        detail: String,
    },
    /// It is on a path not taken.
    Skip {
        /// Why, in words.
        detail: String,
    },
    /// The controller decided that it failed.
    Withdraw {
        /// The controller's reason.
        detail: String,
    },
    /// An operator cancelled its instance.
    Cancel {
        /// The reason.
        detail: String,
    },
    /// An operator reruns it (it failed) or the failed activity it waited for (it was
    /// cancelled because of that one): it waits again, from the start.
    Rerun,
    /// An operator or its item's holder pauses it at `at_ms`; `kill`: its running command is
    /// killed (the caller kills it).
    Pause {
        /// When, in ms since the epoch.
        at_ms: u64,
        /// Its command is killed: the next try runs when it is resumed.
        kill: bool,
    },
    /// It goes on from where it was paused.
    Resume,
    /// The loop whose body holds it runs again (`crate::passes`): it ended its pass
    /// (succeeded, failed, or cancelled while the controller decided it otherwise) and waits
    /// again, from the start, as the next pass.
    NewPass,
}

/// The kind of a [`Life`], without its data: what the table of transitions speaks of.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum StateKind {
    /// [`Life::NotReady`].
    NotReady,
    /// [`Life::Synchronizing`].
    Synchronizing,
    /// [`Life::Ready`].
    Ready,
    /// [`Life::Running`].
    Running,
    /// [`Life::RetryWait`].
    RetryWait,
    /// [`Life::Succeeded`].
    Succeeded,
    /// [`Life::Failed`].
    Failed,
    /// [`Life::Cancelled`].
    Cancelled,
    /// [`Life::Skipped`].
    Skipped,
    /// [`Life::Paused`].
    Paused,
}

/// The kind of an [`Event`], without its data.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum EventKind {
    /// [`Event::Synchronize`].
    Synchronize,
    /// [`Event::Admit`].
    Admit,
    /// [`Event::Start`].
    Start,
    /// [`Event::Return`].
    Return,
    /// [`Event::Succeed`].
    Succeed,
    /// [`Event::Fail`].
    Fail,
    /// [`Event::TryFailed`].
    TryFailed,
    /// [`Event::Retry`].
    Retry,
    /// [`Event::Block`].
    Block,
    /// [`Event::Skip`].
    Skip,
    /// [`Event::Withdraw`].
    Withdraw,
    /// [`Event::Cancel`].
    Cancel,
    /// [`Event::Rerun`].
    Rerun,
    /// [`Event::Pause`].
    Pause,
    /// [`Event::Resume`].
    Resume,
    /// [`Event::NewPass`].
    NewPass,
}

/// Every transition allowed: (from, event, to). Each is reached by a scenario test (the
/// coverage test fails otherwise); a transition no scenario can reach does not belong here.
pub const TRANSITIONS: &[(StateKind, EventKind, StateKind)] = {
    use EventKind as E;
    use StateKind as S;
    &[
        (S::NotReady, E::Synchronize, S::Synchronizing),
        (S::NotReady, E::Block, S::Cancelled),
        (S::NotReady, E::Skip, S::Skipped),
        (S::NotReady, E::Withdraw, S::Failed),
        (S::NotReady, E::Cancel, S::Cancelled),
        (S::Synchronizing, E::Admit, S::Ready),
        (S::Synchronizing, E::Fail, S::Failed),
        (S::Synchronizing, E::Withdraw, S::Failed),
        (S::Synchronizing, E::Cancel, S::Cancelled),
        (S::Ready, E::Start, S::Running),
        (S::Ready, E::Fail, S::Failed),
        (S::Ready, E::Withdraw, S::Failed),
        (S::Ready, E::Cancel, S::Cancelled),
        (S::Running, E::Return, S::Ready),
        (S::Running, E::Succeed, S::Succeeded),
        (S::Running, E::Fail, S::Failed),
        (S::Running, E::TryFailed, S::RetryWait),
        (S::Running, E::Withdraw, S::Failed),
        (S::Running, E::Cancel, S::Cancelled),
        (S::RetryWait, E::Retry, S::Running),
        (S::RetryWait, E::Withdraw, S::Failed),
        (S::RetryWait, E::Cancel, S::Cancelled),
        (S::Failed, E::Rerun, S::NotReady),
        (S::Cancelled, E::Rerun, S::NotReady),
        (S::Ready, E::Pause, S::Paused),
        (S::Running, E::Pause, S::Paused),
        (S::Paused, E::Resume, S::Ready),
        (S::Paused, E::Resume, S::Running),
        (S::Paused, E::Withdraw, S::Failed),
        (S::Paused, E::Cancel, S::Cancelled),
        (S::Succeeded, E::NewPass, S::NotReady),
        (S::Failed, E::NewPass, S::NotReady),
        (S::Cancelled, E::NewPass, S::NotReady),
    ]
};

/// An event that the state does not take: nothing changes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("an activity that is {from:?} does not take {event:?}")]
pub struct NotAllowed {
    /// The state it is in.
    pub from: StateKind,
    /// The event.
    pub event: EventKind,
}

/// The one way an activity changes state: the state after `event`, or why it is not allowed.
pub fn transition(from: &Life, event: Event) -> Result<Life, NotAllowed> {
    let (from_kind, event_kind) = (from.kind(), event.kind());
    let to = match (from, event) {
        (Life::NotReady, Event::Synchronize) => Life::Synchronizing,
        (Life::Synchronizing, Event::Admit) => Life::Ready,
        (Life::Ready, Event::Start) => Life::Running { attempt: 0 },
        (Life::Running { .. }, Event::Return) => Life::Ready,
        (Life::Running { .. }, Event::Succeed { detail }) => Life::Succeeded { detail },
        (Life::Running { .. } | Life::Ready | Life::Synchronizing, Event::Fail { detail }) => {
            Life::Failed {
                detail: Some(detail),
            }
        }
        (Life::Running { attempt }, Event::TryFailed { at_ms, .. }) => Life::RetryWait {
            attempt: attempt.saturating_add(1),
            at_ms,
        },
        (Life::RetryWait { attempt, .. }, Event::Retry) => Life::Running { attempt: *attempt },
        (Life::NotReady, Event::Block { detail }) => Life::Cancelled {
            detail: Some(detail),
        },
        (Life::NotReady, Event::Skip { detail }) => Life::Skipped {
            detail: Some(detail),
        },
        // Withdrawn or cancelled: any activity not final yet.
        (from, Event::Withdraw { detail }) if !from.is_final() => Life::Failed {
            detail: Some(detail),
        },
        (from, Event::Cancel { detail }) if !from.is_final() => Life::Cancelled {
            detail: Some(detail),
        },
        (Life::Failed { .. } | Life::Cancelled { .. }, Event::Rerun) => Life::NotReady,
        (Life::Ready, Event::Pause { at_ms, .. }) => Life::Paused {
            resume: PausedFrom::Ready,
            since_ms: at_ms,
        },
        (Life::Running { attempt }, Event::Pause { at_ms, kill }) => Life::Paused {
            resume: if kill {
                PausedFrom::Killed { attempt: *attempt }
            } else {
                PausedFrom::Running { attempt: *attempt }
            },
            since_ms: at_ms,
        },
        (Life::Paused { resume, .. }, Event::Resume) => match resume {
            PausedFrom::Ready => Life::Ready,
            PausedFrom::Running { attempt } => Life::Running { attempt: *attempt },
            PausedFrom::Killed { attempt } => Life::Running {
                attempt: attempt.saturating_add(1),
            },
        },
        (Life::Succeeded { .. } | Life::Failed { .. } | Life::Cancelled { .. }, Event::NewPass) => {
            Life::NotReady
        }
        _ => {
            return Err(NotAllowed {
                from: from_kind,
                event: event_kind,
            });
        }
    };
    #[cfg(test)]
    crate::coverage::record::<Taken>((from_kind, event_kind, to.kind()));
    Ok(to)
}

impl Life {
    /// Its kind.
    pub fn kind(&self) -> StateKind {
        match self {
            Life::NotReady => StateKind::NotReady,
            Life::Synchronizing => StateKind::Synchronizing,
            Life::Ready => StateKind::Ready,
            Life::Running { .. } => StateKind::Running,
            Life::RetryWait { .. } => StateKind::RetryWait,
            Life::Succeeded { .. } => StateKind::Succeeded,
            Life::Failed { .. } => StateKind::Failed,
            Life::Cancelled { .. } => StateKind::Cancelled,
            Life::Skipped { .. } => StateKind::Skipped,
            Life::Paused { .. } => StateKind::Paused,
        }
    }

    /// The state the wire and the records show: a wait between tries is `running` (the
    /// activity is under way); a paused one shows the state it resumes to.
    pub fn wire(&self) -> ActivityState {
        match self {
            Life::NotReady => ActivityState::NotReady,
            Life::Synchronizing => ActivityState::Synchronizing,
            Life::Ready
            | Life::Paused {
                resume: PausedFrom::Ready,
                ..
            } => ActivityState::Ready,
            Life::Running { .. }
            | Life::RetryWait { .. }
            | Life::Paused {
                resume: PausedFrom::Running { .. } | PausedFrom::Killed { .. },
                ..
            } => ActivityState::Running,
            Life::Succeeded { .. } => ActivityState::Succeeded,
            Life::Failed { .. } => ActivityState::Failed,
            Life::Cancelled { .. } => ActivityState::Cancelled,
            Life::Skipped { .. } => ActivityState::Skipped,
        }
    }

    /// True once it can no longer change (but by an operator's rerun).
    pub fn is_final(&self) -> bool {
        self.wire().is_final()
    }

    /// Since when it is paused, while it is.
    pub fn paused_since(&self) -> Option<u64> {
        match self {
            Life::Paused { since_ms, .. } => Some(*since_ms),
            _ => None,
        }
    }

    /// Why it ended, once final.
    pub fn final_detail(&self) -> Option<&Option<String>> {
        match self {
            Life::Succeeded { detail }
            | Life::Failed { detail }
            | Life::Cancelled { detail }
            | Life::Skipped { detail } => Some(detail),
            _ => None,
        }
    }
}

impl Event {
    /// Its kind.
    pub fn kind(&self) -> EventKind {
        match self {
            Event::Synchronize => EventKind::Synchronize,
            Event::Admit => EventKind::Admit,
            Event::Start => EventKind::Start,
            Event::Return => EventKind::Return,
            Event::Succeed { .. } => EventKind::Succeed,
            Event::Fail { .. } => EventKind::Fail,
            Event::TryFailed { .. } => EventKind::TryFailed,
            Event::Retry => EventKind::Retry,
            Event::Block { .. } => EventKind::Block,
            Event::Skip { .. } => EventKind::Skip,
            Event::Withdraw { .. } => EventKind::Withdraw,
            Event::Cancel { .. } => EventKind::Cancel,
            Event::Rerun => EventKind::Rerun,
            Event::Pause { .. } => EventKind::Pause,
            Event::Resume => EventKind::Resume,
            Event::NewPass => EventKind::NewPass,
        }
    }
}

/// The table as markdown; `docs/lifecycles.md` shows it, and a test fails when the two differ.
pub fn table_markdown() -> String {
    markdown(TRANSITIONS)
}

/// A table of transitions by kind as markdown, the kinds by their names (this lifecycle's and
/// a work item copy's, `crate::items`).
pub(crate) fn markdown<S: std::fmt::Debug, E: std::fmt::Debug>(table: &[(S, E, S)]) -> String {
    let mut s = String::from("| from | event | to |\n|---|---|---|\n");
    for (from, event, to) in table {
        s += &format!("| {from:?} | {event:?} | {to:?} |\n");
    }
    s
}

/// A transition taken, as the coverage tests collect them (`crate::coverage`).
#[cfg(test)]
pub(crate) type Taken = (StateKind, EventKind, StateKind);
