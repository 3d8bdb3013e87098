//! The allowed transitions of each lifecycle, by kind, with their causes: the transition
//! functions refuse what these tables do not list, the coverage test wants each exercised, and
//! `docs/lifecycles.md` shows them.

use super::Transition;

/// The allowed transitions of the activity lifecycle.
pub const ACTIVITY: &[Transition] = &[
    t(
        "unplaced",
        "placed",
        "waiting",
        "a contingency activity is placed on a partner with the skill",
    ),
    t(
        "unplaced",
        "said_overdue",
        "overdue",
        "a node says it waited too long for a contingency activity not placed",
    ),
    t(
        "unplaced",
        "decided",
        "failed",
        "an overdue contingency activity not placed is withdrawn",
    ),
    t(
        "waiting",
        "node_says",
        "waiting",
        "its node reports it not ready, synchronizing or ready (a work item offered)",
    ),
    t(
        "waiting",
        "node_says",
        "running",
        "its node reports it started",
    ),
    t(
        "waiting",
        "node_says",
        "succeeded",
        "its node reports it succeeded",
    ),
    t(
        "waiting",
        "node_says",
        "failed",
        "its node reports it failed",
    ),
    t(
        "waiting",
        "node_says",
        "cancelled",
        "its node reports it cancelled (a predecessor blocked it)",
    ),
    t(
        "waiting",
        "node_says",
        "skipped",
        "its node reports it skipped (a route led elsewhere, or a predecessor was skipped)",
    ),
    t(
        "waiting",
        "node_says",
        "cancelled_by_operator",
        "its node reports it ended for an operator's cancel",
    ),
    t(
        "running",
        "node_says",
        "waiting",
        "its node reports it ready again (a work item given back) or waiting (reports out of order)",
    ),
    t(
        "running",
        "node_says",
        "running",
        "its node reports it running (again, or tried again)",
    ),
    t(
        "running",
        "node_says",
        "succeeded",
        "its node reports it succeeded",
    ),
    t(
        "running",
        "node_says",
        "failed",
        "its node reports it failed",
    ),
    t(
        "running",
        "node_says",
        "cancelled",
        "its node reports it cancelled",
    ),
    t(
        "running",
        "node_says",
        "cancelled_by_operator",
        "its node reports it ended for an operator's cancel",
    ),
    t(
        "overdue",
        "node_says",
        "overdue",
        "its node reports it not final during the grace",
    ),
    t(
        "overdue",
        "node_says",
        "succeeded",
        "its node reports it succeeded during the grace",
    ),
    t(
        "overdue",
        "node_says",
        "failed",
        "its node reports it failed during the grace",
    ),
    t(
        "overdue",
        "node_says",
        "cancelled",
        "its node reports it cancelled during the grace",
    ),
    t(
        "overdue",
        "node_says",
        "skipped",
        "its node reports it skipped during the grace (a path not taken)",
    ),
    t(
        "overdue",
        "node_says",
        "cancelled_by_operator",
        "its node reports it ended for an operator's cancel during the grace",
    ),
    t(
        "cancelled_by_operator",
        "node_says",
        "succeeded",
        "it succeeded on its node before the cancel reached it",
    ),
    t(
        "cancelled_by_operator",
        "node_says",
        "failed",
        "it failed on its node before the cancel reached it",
    ),
    t(
        "cancelled_by_operator",
        "node_says",
        "cancelled",
        "its node cancelled it (a predecessor blocked it)",
    ),
    t(
        "cancelled_by_operator",
        "node_says",
        "skipped",
        "its node skipped it before the cancel reached it (a path not taken)",
    ),
    t(
        "cancelled_by_operator",
        "node_says",
        "cancelled_by_operator",
        "its node confirms the operator's cancel",
    ),
    t(
        "waiting",
        "decided",
        "failed",
        "its partition is given up, or it is withdrawn (overdue)",
    ),
    t(
        "waiting",
        "decided",
        "cancelled",
        "its partition is given up and a predecessor there blocks it",
    ),
    t(
        "running",
        "decided",
        "failed",
        "its partition is given up, or it is withdrawn (overdue)",
    ),
    t(
        "running",
        "decided",
        "cancelled",
        "its partition is given up and a predecessor there blocks it",
    ),
    t(
        "overdue",
        "decided",
        "failed",
        "its partition is given up during the grace",
    ),
    t(
        "overdue",
        "decided",
        "cancelled",
        "its partition is given up during the grace and a predecessor there blocks it",
    ),
    t(
        "waiting",
        "operator_cancel",
        "cancelled_by_operator",
        "an operator cancels the instance",
    ),
    t(
        "running",
        "operator_cancel",
        "cancelled_by_operator",
        "an operator cancels the instance",
    ),
    t(
        "overdue",
        "operator_cancel",
        "cancelled_by_operator",
        "an operator cancels the instance during the grace",
    ),
    t(
        "waiting",
        "said_overdue",
        "overdue",
        "a successor's node says it waited too long for it",
    ),
    t(
        "running",
        "said_overdue",
        "overdue",
        "a successor's node says it waited too long for it",
    ),
    t(
        "overdue",
        "grace_over",
        "unplaced",
        "the grace ran out (it is withdrawn next)",
    ),
    t(
        "overdue",
        "grace_over",
        "waiting",
        "the grace ran out (it is withdrawn next)",
    ),
    t(
        "overdue",
        "grace_over",
        "running",
        "the grace ran out (it is withdrawn next)",
    ),
    t(
        "failed",
        "stand_in_placed",
        "replaced",
        "its contingency activity is placed on another partner",
    ),
    t(
        "failed",
        "stand_in_in_use",
        "blocked_instead",
        "its contingency activity is in use: its successors are cancelled",
    ),
    t(
        "failed",
        "rerun",
        "waiting",
        "an operator reruns it (it failed with contingency -1)",
    ),
    t(
        "cancelled",
        "rerun",
        "waiting",
        "an operator reruns the failed activity it was cancelled because of",
    ),
];

/// The allowed transitions of the partition lifecycle.
pub const PARTITION: &[Transition] = &[
    t(
        "sent",
        "acknowledged",
        "deployed",
        "its node acknowledged it",
    ),
    t(
        "given_up",
        "acknowledged",
        "given_up",
        "its node acknowledged it after the controller gave up on it",
    ),
    t(
        "sent",
        "refused",
        "sent",
        "its node refused it (its instance fails)",
    ),
    t(
        "deployed",
        "refused",
        "sent",
        "its node refused it after acknowledging it (replies out of order)",
    ),
    t(
        "given_up",
        "refused",
        "given_up",
        "its node refused it after the controller gave up on it",
    ),
    t(
        "sent",
        "result",
        "finished",
        "its result came before its acknowledgement",
    ),
    t("deployed", "result", "finished", "its result came"),
    t("finished", "result", "finished", "its result came again"),
    t(
        "given_up",
        "result",
        "late_result",
        "its result came after the controller gave up on it",
    ),
    t(
        "late_result",
        "result",
        "late_result",
        "its late result came again",
    ),
    t(
        "sent",
        "give_up",
        "given_up",
        "its partner stopped answering or its timeOut passed, before it was acknowledged",
    ),
    t(
        "deployed",
        "give_up",
        "given_up",
        "its partner stopped answering or its timeOut passed",
    ),
    t(
        "finished",
        "rerun",
        "deployed",
        "an operator reruns activities of it: its result comes again",
    ),
];

/// The allowed transitions of the instance lifecycle.
pub const INSTANCE: &[Transition] = &[
    t(
        "deploying",
        "all_deployed",
        "running",
        "every partition was acknowledged (or finished, or given up)",
    ),
    t(
        "deploying",
        "refused",
        "failed",
        "a node refused a partition",
    ),
    t(
        "running",
        "refused",
        "failed",
        "a node refused a partition (a contingency activity's)",
    ),
    t(
        "interrupted",
        "refused",
        "failed",
        "a node refused a partition while the instance was interrupted",
    ),
    t(
        "deploying",
        "interrupt",
        "interrupted",
        "an operator interrupts it",
    ),
    t(
        "running",
        "interrupt",
        "interrupted",
        "an operator interrupts it",
    ),
    t(
        "interrupted",
        "resume",
        "deploying",
        "an operator resumes it; a partition waits for its acknowledgement",
    ),
    t("interrupted", "resume", "running", "an operator resumes it"),
    t("deploying", "cancel", "cancelled", "an operator cancels it"),
    t("running", "cancel", "cancelled", "an operator cancels it"),
    t(
        "interrupted",
        "cancel",
        "cancelled",
        "an operator cancels it",
    ),
    t(
        "deploying",
        "ended",
        "succeeded",
        "every partition finished before all were acknowledged, nothing blocked",
    ),
    t(
        "deploying",
        "ended",
        "failed",
        "every partition finished or was given up before all were acknowledged; something blocked",
    ),
    t(
        "running",
        "ended",
        "succeeded",
        "every partition finished, nothing blocked",
    ),
    t(
        "running",
        "ended",
        "failed",
        "every partition finished or was given up; an activity blocked or was cancelled",
    ),
    t(
        "interrupted",
        "ended",
        "succeeded",
        "every partition finished while interrupted, nothing blocked",
    ),
    t(
        "interrupted",
        "ended",
        "failed",
        "every partition finished or was given up while interrupted; something blocked",
    ),
    t(
        "cancelled",
        "compensate",
        "compensating",
        "every partition reported after the cancel; a succeeded activity has a compensation",
    ),
    t(
        "failed",
        "compensate",
        "compensating",
        "it failed with every partition reported; a succeeded activity has a compensation",
    ),
    t(
        "compensating",
        "compensated",
        "compensated",
        "the last compensation succeeded",
    ),
    t(
        "compensating",
        "compensation_failed",
        "compensation_failed",
        "a compensation failed (the rest are not run)",
    ),
    t(
        "failed",
        "rerun",
        "running",
        "an operator reruns a failed activity (none of its compensations started)",
    ),
];

const fn t(
    from: &'static str,
    event: &'static str,
    to: &'static str,
    cause: &'static str,
) -> Transition {
    Transition {
        from,
        event,
        to,
        cause,
    }
}
