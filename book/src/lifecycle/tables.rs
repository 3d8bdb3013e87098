//! The allowed transitions of each lifecycle, by kind, with their causes: the transition
//! functions refuse what these tables do not list, the coverage test wants each exercised, and
//! `docs/lifecycles.md` shows them.

use super::Transition;
use super::activity::{ActivityEventKind, ActivityKind};
use super::instance::{InstanceEventKind, InstanceState};
use super::partition::{PartitionEventKind, PartitionKind};

/// The allowed transitions of the activity lifecycle.
pub const ACTIVITY: &[Transition<ActivityKind, ActivityEventKind>] = {
    use ActivityEventKind as E;
    use ActivityKind as S;
    &[
        t(
            S::Unplaced,
            E::Placed,
            S::Waiting,
            "a contingency activity is placed on a partner with the skill",
        ),
        t(
            S::Unplaced,
            E::SaidOverdue,
            S::Overdue,
            "a node says it waited too long for a contingency activity not placed",
        ),
        t(
            S::Overdue,
            E::Placed,
            S::Overdue,
            "a contingency activity overdue before it was placed is placed during the grace",
        ),
        t(
            S::Unplaced,
            E::Decided,
            S::Failed,
            "an overdue contingency activity not placed is withdrawn",
        ),
        t(
            S::Waiting,
            E::NodeSays,
            S::Waiting,
            "its node reports it not ready, synchronizing or ready (a work item offered)",
        ),
        t(
            S::Waiting,
            E::NodeSays,
            S::Running,
            "its node reports it started",
        ),
        t(
            S::Waiting,
            E::NodeSays,
            S::Succeeded,
            "its node reports it succeeded",
        ),
        t(
            S::Waiting,
            E::NodeSays,
            S::Failed,
            "its node reports it failed",
        ),
        t(
            S::Waiting,
            E::NodeSays,
            S::Cancelled,
            "its node reports it cancelled (a predecessor blocked it)",
        ),
        t(
            S::Waiting,
            E::NodeSays,
            S::Skipped,
            "its node reports it skipped (a route led elsewhere, or a predecessor was skipped)",
        ),
        t(
            S::Waiting,
            E::NodeSays,
            S::CancelledByOperator,
            "its node reports it ended for an operator's cancel",
        ),
        t(
            S::Running,
            E::NodeSays,
            S::Waiting,
            "its node reports it ready again (a work item given back) or waiting (reports out of order)",
        ),
        t(
            S::Running,
            E::NodeSays,
            S::Running,
            "its node reports it running (again, or tried again)",
        ),
        t(
            S::Running,
            E::NodeSays,
            S::Succeeded,
            "its node reports it succeeded",
        ),
        t(
            S::Running,
            E::NodeSays,
            S::Failed,
            "its node reports it failed",
        ),
        t(
            S::Running,
            E::NodeSays,
            S::Cancelled,
            "its node reports it cancelled",
        ),
        t(
            S::Running,
            E::NodeSays,
            S::CancelledByOperator,
            "its node reports it ended for an operator's cancel",
        ),
        t(
            S::Overdue,
            E::NodeSays,
            S::Overdue,
            "its node reports it not final during the grace",
        ),
        t(
            S::Overdue,
            E::NodeSays,
            S::Succeeded,
            "its node reports it succeeded during the grace",
        ),
        t(
            S::Overdue,
            E::NodeSays,
            S::Failed,
            "its node reports it failed during the grace",
        ),
        t(
            S::Overdue,
            E::NodeSays,
            S::Cancelled,
            "its node reports it cancelled during the grace",
        ),
        t(
            S::Overdue,
            E::NodeSays,
            S::Skipped,
            "its node reports it skipped during the grace (a path not taken)",
        ),
        t(
            S::Overdue,
            E::NodeSays,
            S::CancelledByOperator,
            "its node reports it ended for an operator's cancel during the grace",
        ),
        t(
            S::CancelledByOperator,
            E::NodeSays,
            S::Succeeded,
            "it succeeded on its node before the cancel reached it",
        ),
        t(
            S::CancelledByOperator,
            E::NodeSays,
            S::Failed,
            "it failed on its node before the cancel reached it",
        ),
        t(
            S::CancelledByOperator,
            E::NodeSays,
            S::Cancelled,
            "its node cancelled it (a predecessor blocked it)",
        ),
        t(
            S::CancelledByOperator,
            E::NodeSays,
            S::Skipped,
            "its node skipped it before the cancel reached it (a path not taken)",
        ),
        t(
            S::CancelledByOperator,
            E::NodeSays,
            S::CancelledByOperator,
            "its node confirms the operator's cancel",
        ),
        t(
            S::Waiting,
            E::Decided,
            S::Failed,
            "its partition is given up, or it is withdrawn (overdue)",
        ),
        t(
            S::Waiting,
            E::Decided,
            S::Cancelled,
            "its partition is given up and a predecessor there blocks it",
        ),
        t(
            S::Running,
            E::Decided,
            S::Failed,
            "its partition is given up, or it is withdrawn (overdue)",
        ),
        t(
            S::Overdue,
            E::Decided,
            S::Failed,
            "its partition is given up during the grace",
        ),
        t(
            S::Overdue,
            E::Decided,
            S::Cancelled,
            "its partition is given up during the grace and a predecessor there blocks it",
        ),
        t(
            S::Waiting,
            E::OperatorCancel,
            S::CancelledByOperator,
            "an operator cancels the instance",
        ),
        t(
            S::Running,
            E::OperatorCancel,
            S::CancelledByOperator,
            "an operator cancels the instance",
        ),
        t(
            S::Overdue,
            E::OperatorCancel,
            S::CancelledByOperator,
            "an operator cancels the instance during the grace",
        ),
        t(
            S::Waiting,
            E::SaidOverdue,
            S::Overdue,
            "a successor's node says it waited too long for it",
        ),
        t(
            S::Running,
            E::SaidOverdue,
            S::Overdue,
            "a successor's node says it waited too long for it",
        ),
        t(
            S::Overdue,
            E::GraceOver,
            S::Unplaced,
            "the grace ran out (it is withdrawn next)",
        ),
        t(
            S::Overdue,
            E::GraceOver,
            S::Waiting,
            "the grace ran out (it is withdrawn next)",
        ),
        t(
            S::Overdue,
            E::GraceOver,
            S::Running,
            "the grace ran out (it is withdrawn next)",
        ),
        t(
            S::Failed,
            E::StandInPlaced,
            S::Replaced,
            "its contingency activity is placed on another partner",
        ),
        t(
            S::Failed,
            E::StandInInUse,
            S::BlockedInstead,
            "its contingency activity is in use: its successors are cancelled",
        ),
        t(
            S::Failed,
            E::Rerun,
            S::Waiting,
            "an operator reruns it (it failed with contingency -1)",
        ),
        t(
            S::Cancelled,
            E::Rerun,
            S::Waiting,
            "an operator reruns the failed activity it was cancelled because of",
        ),
        t(
            S::Waiting,
            E::Paused,
            S::Paused,
            "its node says an operator or its item's holder paused it (an offered item)",
        ),
        t(
            S::Running,
            E::Paused,
            S::Paused,
            "its node says an operator or its item's holder paused it",
        ),
        t(
            S::Paused,
            E::Resumed,
            S::Waiting,
            "its node says it was resumed: offered again",
        ),
        t(
            S::Paused,
            E::Resumed,
            S::Running,
            "its node says it was resumed: it runs on, or its command runs again",
        ),
        t(
            S::Paused,
            E::NodeSays,
            S::Paused,
            "its node reports it not final while it is paused (a word from before the pause)",
        ),
        t(
            S::Paused,
            E::NodeSays,
            S::Succeeded,
            "its node reports it succeeded (its end, held while it was paused, taken when resumed)",
        ),
        t(
            S::Paused,
            E::NodeSays,
            S::Failed,
            "its node reports it failed (its end, held while it was paused, taken when resumed)",
        ),
        t(
            S::Paused,
            E::Decided,
            S::Failed,
            "its partition is given up while it is paused",
        ),
        t(
            S::Paused,
            E::Decided,
            S::Cancelled,
            "its partition is given up while it is paused before its start and a predecessor there blocks it",
        ),
        t(
            S::Paused,
            E::OperatorCancel,
            S::CancelledByOperator,
            "an operator cancels the instance while it is paused",
        ),
        t(
            S::Paused,
            E::SaidOverdue,
            S::Overdue,
            "a successor's node says it waited too long for it while it is paused",
        ),
        t(
            S::Succeeded,
            E::NewPass,
            S::Waiting,
            "its node says the loop whose body holds it runs it again (a new pass)",
        ),
        t(
            S::Failed,
            E::NewPass,
            S::Waiting,
            "its node says the loop runs it again after a failure that released its successors",
        ),
    ]
};

/// The allowed transitions of the partition lifecycle.
pub const PARTITION: &[Transition<PartitionKind, PartitionEventKind>] = {
    use PartitionEventKind as E;
    use PartitionKind as S;
    &[
        t(
            S::Sent,
            E::Acknowledged,
            S::Deployed,
            "its node acknowledged it",
        ),
        t(
            S::GivenUp,
            E::Acknowledged,
            S::GivenUp,
            "its node acknowledged it after the controller gave up on it",
        ),
        t(
            S::Sent,
            E::Refused,
            S::Sent,
            "its node refused it (its instance fails)",
        ),
        t(
            S::Deployed,
            E::Refused,
            S::Sent,
            "its node refused it after acknowledging it (replies out of order)",
        ),
        t(
            S::GivenUp,
            E::Refused,
            S::GivenUp,
            "its node refused it after the controller gave up on it",
        ),
        t(
            S::Sent,
            E::Result,
            S::Finished,
            "its result came before its acknowledgement",
        ),
        t(S::Deployed, E::Result, S::Finished, "its result came"),
        t(S::Finished, E::Result, S::Finished, "its result came again"),
        t(
            S::GivenUp,
            E::Result,
            S::LateResult,
            "its result came after the controller gave up on it",
        ),
        t(
            S::LateResult,
            E::Result,
            S::LateResult,
            "its late result came again",
        ),
        t(
            S::Sent,
            E::GiveUp,
            S::GivenUp,
            "its partner stopped answering or its timeOut passed, before it was acknowledged",
        ),
        t(
            S::Deployed,
            E::GiveUp,
            S::GivenUp,
            "its partner stopped answering or its timeOut passed",
        ),
        t(
            S::Finished,
            E::Rerun,
            S::Deployed,
            "an operator reruns activities of it: its result comes again",
        ),
    ]
};

/// The allowed transitions of the instance lifecycle.
pub const INSTANCE: &[Transition<InstanceState, InstanceEventKind>] = {
    use InstanceEventKind as E;
    use InstanceState as S;
    &[
        t(
            S::Deploying,
            E::AllDeployed,
            S::Running,
            "every partition was acknowledged (or finished, or given up)",
        ),
        t(
            S::Deploying,
            E::Refused,
            S::Failed,
            "a node refused a partition",
        ),
        t(
            S::Running,
            E::Refused,
            S::Failed,
            "a node refused a partition (a contingency activity's)",
        ),
        t(
            S::Interrupted,
            E::Refused,
            S::Failed,
            "a node refused a partition while the instance was interrupted",
        ),
        t(
            S::Deploying,
            E::Interrupt,
            S::Interrupted,
            "an operator interrupts it",
        ),
        t(
            S::Running,
            E::Interrupt,
            S::Interrupted,
            "an operator interrupts it",
        ),
        t(
            S::Interrupted,
            E::Resume,
            S::Deploying,
            "an operator resumes it; a partition waits for its acknowledgement",
        ),
        t(
            S::Interrupted,
            E::Resume,
            S::Running,
            "an operator resumes it",
        ),
        t(
            S::Deploying,
            E::Cancel,
            S::Cancelled,
            "an operator cancels it",
        ),
        t(
            S::Running,
            E::Cancel,
            S::Cancelled,
            "an operator cancels it",
        ),
        t(
            S::Interrupted,
            E::Cancel,
            S::Cancelled,
            "an operator cancels it",
        ),
        t(
            S::Deploying,
            E::Ended,
            S::Succeeded,
            "every partition finished before all were acknowledged, nothing blocked",
        ),
        t(
            S::Deploying,
            E::Ended,
            S::Failed,
            "every partition finished or was given up before all were acknowledged; something blocked",
        ),
        t(
            S::Running,
            E::Ended,
            S::Succeeded,
            "every partition finished, nothing blocked",
        ),
        t(
            S::Running,
            E::Ended,
            S::Failed,
            "every partition finished or was given up; an activity blocked or was cancelled",
        ),
        t(
            S::Interrupted,
            E::Ended,
            S::Succeeded,
            "every partition finished while interrupted, nothing blocked",
        ),
        t(
            S::Interrupted,
            E::Ended,
            S::Failed,
            "every partition finished or was given up while interrupted; something blocked",
        ),
        t(
            S::Cancelled,
            E::Compensate,
            S::Compensating,
            "every partition reported after the cancel; a succeeded activity has a compensation",
        ),
        t(
            S::Failed,
            E::Compensate,
            S::Compensating,
            "it failed with every partition reported; a succeeded activity has a compensation",
        ),
        t(
            S::Compensating,
            E::Compensated,
            S::Compensated,
            "the last compensation succeeded",
        ),
        t(
            S::Compensating,
            E::CompensationFailed,
            S::CompensationFailed,
            "a compensation failed (the rest are not run)",
        ),
        t(
            S::Failed,
            E::Rerun,
            S::Running,
            "an operator reruns a failed activity (none of its compensations started)",
        ),
    ]
};

const fn t<S, E>(from: S, event: E, to: S, cause: &'static str) -> Transition<S, E> {
    Transition {
        from,
        event,
        to,
        cause,
    }
}
