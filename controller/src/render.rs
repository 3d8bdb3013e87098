//! The book's history events as the API and the command line show them: one line of text per
//! event, in the words the controller always used. The book keeps events as data
//! (`mobiwf_book::Event`); this is the only place they become text.

use mobiwf_book::{Event, HistoryEvent, Label, OverdueThen};
use mobiwf_proto::{ActivityId, NodeName};
use serde::{Deserialize, Serialize};

mod coordination;
pub use coordination::blockers;
use coordination::{order_event, sync_event};

/// One history event as the API serves it and the command line reads it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ShownEvent {
    /// When it happened, ms since the epoch.
    pub at_ms: u64,
    /// The activity it is about, if any.
    pub activity: Option<ActivityId>,
    /// The partner (node name) it happened on or concerns, if any.
    pub partner: Option<NodeName>,
    /// What happened, in words.
    pub what: String,
}

impl From<&HistoryEvent> for ShownEvent {
    fn from(e: &HistoryEvent) -> ShownEvent {
        ShownEvent {
            at_ms: e.at_ms,
            activity: e.activity,
            partner: e.partner.clone(),
            what: what(&e.what),
        }
    }
}

/// `A2 (17)`, or `activity 17` for an activity without a name; `A2 (17#2)` in pass 2 of a
/// loop.
fn label(l: &Label) -> String {
    let id = l.pass.of(l.id);
    if l.name.is_empty() {
        format!("activity {id}")
    } else {
        format!("{} ({id})", l.name)
    }
}

/// The event in words. Every kind is routed here, so a new kind does not compile until it
/// is given words.
pub fn what(event: &Event) -> String {
    let words = match event {
        Event::Submitted { .. }
        | Event::Deployed { .. }
        | Event::Refused { .. }
        | Event::PartitionFinished { .. }
        | Event::LateResult { .. }
        | Event::GivenUp { .. } => partition_event(event),
        Event::Synchronizing { .. }
        | Event::NewPass { .. }
        | Event::Ready { .. }
        | Event::Started { .. }
        | Event::StartedByEmergency { .. }
        | Event::Retried { .. }
        | Event::Ended { .. }
        | Event::Decided { .. }
        | Event::EndedBeforeCancel { .. }
        | Event::LateWord { .. } => activity_event(event),
        Event::Overdue { .. }
        | Event::ContingencyPlaced { .. }
        | Event::AwaitingPartner { .. }
        | Event::ContingencyInUse { .. } => recovery_event(event),
        Event::Operator { .. }
        | Event::Completed { .. }
        | Event::InstanceEnded { .. }
        | Event::Text(_) => instance_event(event),
        Event::Compensating { .. }
        | Event::CompensationDone { .. }
        | Event::CompensationFailed { .. }
        | Event::Rerun { .. } => recovery_words(event),
        Event::ItemOffered { .. }
        | Event::ItemUnassigned { .. }
        | Event::ItemActed { .. }
        | Event::ItemRefused { .. }
        | Event::ItemRevoked { .. }
        | Event::ItemDeadline { .. }
        | Event::ItemHandedOver { .. }
        | Event::Administered { .. }
        | Event::AdminAnswered { .. }
        | Event::NoticeUndelivered { .. } => item_event(event),
        Event::SyncWaiting { .. }
        | Event::SyncGranted { .. }
        | Event::SyncRefused { .. }
        | Event::SyncReleased { .. } => sync_event(event),
        Event::PauseAsked { .. } | Event::Pause { .. } => Some(pause_words(event)),
        Event::OrderWaiting { .. } | Event::OrderPassed { .. } | Event::OrderReleased { .. } => {
            order_event(event)
        }
    };
    words.unwrap_or_else(|| format!("{event:?}"))
}

/// A pause or resumption asked, done or refused, in words: `operator op asked to pause it
/// (killing its command)`, `paused by alice (its deadline stops)`, `resumed by alice: running
/// (its deadline moved 10 s later)`, `op's pause refused by its node: ...`.
fn pause_words(event: &Event) -> String {
    use mobiwf_proto::{PauseAction, PauseOutcome};
    match event {
        Event::PauseAsked { action, by } => match action {
            PauseAction::Pause { kill: true } => {
                format!("operator {by} asked to pause it (killing its command)")
            }
            action => format!("operator {by} asked to {} it", action.as_str()),
        },
        Event::Pause { by, outcome } => match outcome {
            PauseOutcome::Paused {
                killed,
                clock_stopped,
                ..
            } => {
                let killed = if *killed { ", its command killed" } else { "" };
                let clock = if *clock_stopped {
                    " (its deadline stops)"
                } else {
                    ""
                };
                format!("paused by {by}{killed}{clock}")
            }
            PauseOutcome::Resumed { state, moved_ms } if *moved_ms > 0 => format!(
                "resumed by {by}: {} (its deadline moved {} later)",
                state.as_str(),
                mobiwf_proto::Millis(*moved_ms)
            ),
            PauseOutcome::Resumed { state, .. } => {
                format!("resumed by {by}: {}", state.as_str())
            }
            PauseOutcome::Refused { reason } => {
                format!("{by}'s pause or resume refused by its node: {reason}")
            }
        },
        other => format!("{other:?}"),
    }
}

/// Submission, deployment and the end of partitions, in words.
fn partition_event(event: &Event) -> Option<String> {
    Some(match event {
        Event::Submitted {
            source,
            partitions,
            definition,
        } => {
            let placed: Vec<String> = partitions
                .iter()
                .map(|(p, node)| format!("{p} on {node}"))
                .collect();
            match definition {
                Some(d) => format!("started: definition {d}; partitions {}", placed.join(", ")),
                None => format!("submitted ({source}); partitions {}", placed.join(", ")),
            }
        }
        Event::Deployed { partition } => format!("partition {partition} deployed"),
        Event::Refused { partition, reason } => {
            format!("partition {partition} refused: {reason}")
        }
        Event::PartitionFinished { partition } => format!("partition {partition} finished"),
        Event::LateResult { partition } => format!(
            "partition {partition} result came after it was given up: kept for the record only"
        ),
        Event::GivenUp { partition, reason } => {
            format!("partition {partition} given up: {reason}")
        }
        _ => return None,
    })
}

/// What an activity did or was decided to have done, in words.
fn activity_event(event: &Event) -> Option<String> {
    Some(match event {
        Event::Synchronizing { activity } => {
            format!("{} synchronizing: its conditions hold", label(activity))
        }
        Event::Ready { activity } => format!("{} ready", label(activity)),
        Event::NewPass { activity } => format!(
            "{} waits again: its loop runs pass {}",
            label(activity),
            activity.pass
        ),
        Event::Started { activity } => format!("{} started", label(activity)),
        Event::StartedByEmergency { activity } => format!(
            "{} started by its timeToWait emergency trigger",
            label(activity)
        ),
        Event::Retried { activity, times } => {
            format!("{} was tried {times} more times", label(activity))
        }
        Event::Ended {
            activity,
            state,
            detail,
            flag,
        } => {
            let flag = flag
                .as_ref()
                .map_or(String::new(), |f| format!(" with flag {f}"));
            match detail {
                Some(d) => format!("{} {}{flag}: {d}", label(activity), state.as_str()),
                None => format!("{} {}{flag}", label(activity), state.as_str()),
            }
        }
        Event::Decided {
            activity,
            state,
            reason,
        } => format!("{} {}: {reason}", label(activity), state.as_str()),
        Event::EndedBeforeCancel { activity, state } => format!(
            "{} {} before the cancel reached it",
            label(activity),
            state.as_str()
        ),
        Event::LateWord {
            activity,
            state,
            on,
            decided,
            reason,
        } => format!(
            "late word ignored: {} {} on {}, but the controller had decided it {} ({reason})",
            label(activity),
            state.as_str(),
            on.as_ref().map_or("?", NodeName::as_str),
            decided.as_str(),
        ),
        _ => return None,
    })
}

/// Overdue preconditions and contingency activities, in words.
fn recovery_event(event: &Event) -> Option<String> {
    Some(match event {
        Event::Overdue {
            waiting,
            on,
            secs,
            precondition,
            then,
        } => {
            let waited = format!(
                "{} on {} waited more than {secs} s (its precondition timeOut) for {}",
                label(waiting),
                on.as_ref().map_or("?", NodeName::as_str),
                label(precondition)
            );
            match then {
                OverdueThen::Resent => format!("{waited}; its outcome is known, sent again"),
                OverdueThen::DecidesIn { secs } => format!(
                    "{waited}; the controller decides in {secs} s unless its partner reports it"
                ),
                OverdueThen::NotPlacedYet => {
                    format!("{waited}; its contingency activity is not placed yet")
                }
                OverdueThen::StandIn { by } => format!(
                    "{waited}; it failed and {} runs in its place, not finished yet",
                    label(by)
                ),
            }
        }
        Event::ContingencyPlaced {
            contingency,
            on,
            failed,
        } => format!(
            "contingency activity {} runs on {on} in place of {}",
            label(contingency),
            label(failed)
        ),
        Event::AwaitingPartner { skill, failed } => format!(
            "waiting for an available partner with skill {skill} to run it in place of {}",
            label(failed)
        ),
        Event::ContingencyInUse {
            contingency,
            failed,
        } => format!(
            "contingency activity {} is already in use: the successors of {} are cancelled",
            label(contingency),
            label(failed)
        ),
        _ => return None,
    })
}

/// The instance's end, operators' actions, and events stored as text by earlier versions.
fn instance_event(event: &Event) -> Option<String> {
    Some(match event {
        Event::Operator { action, told } => {
            format!("operator: {} (told {told} partners)", action.as_str())
        }
        Event::InstanceEnded { state, detail } => match detail {
            Some(d) => format!("instance {}: {d}", state.as_str()),
            None => format!("instance {}", state.as_str()),
        },
        Event::Completed { activity } => format!(
            "instance complete: completion activity {} succeeded; what is not final is cancelled",
            label(activity)
        ),
        Event::Text(text) => text.clone(),
        _ => return None,
    })
}

/// Backward and forward recovery, in words: `compensating A3 (3)`, `compensated A3 (3)`,
/// `compensation of A3 (3) failed: ...`, `rerun of A2 (2) by an operator`.
fn recovery_words(event: &Event) -> Option<String> {
    Some(match event {
        Event::Compensating { activity } => format!("compensating {}", label(activity)),
        Event::CompensationDone { activity } => format!("compensated {}", label(activity)),
        Event::CompensationFailed { activity, reason } => {
            format!("compensation of {} failed: {reason}", label(activity))
        }
        Event::Rerun { activity, with } if with.is_empty() => {
            format!("rerun of {} by an operator", label(activity))
        }
        Event::Rerun { activity, with } => {
            let with: Vec<String> = with.iter().map(label).collect();
            format!(
                "rerun of {} by an operator; waiting again with it: {}",
                label(activity),
                with.join(", ")
            )
        }
        _ => return None,
    })
}

/// Work items and notices, in words: `item: offered to alice, bob`, `item: selected by alice`.
fn item_event(event: &Event) -> Option<String> {
    let users = |list: &[mobiwf_proto::UserId]| {
        list.iter()
            .map(|u| u.as_str())
            .collect::<Vec<_>>()
            .join(", ")
    };
    Some(match event {
        Event::ItemOffered { users: list, .. } if list.is_empty() => {
            "item: offered to nobody".to_owned()
        }
        Event::ItemOffered { users: list, .. } => format!("item: offered to {}", users(list)),
        Event::ItemUnassigned { why, .. } => format!("item: nobody to offer to: {why}"),
        Event::ItemActed {
            user,
            action,
            offline_ms: None,
            ..
        } => format!("item: {}", acted(user, action)),
        Event::ItemActed {
            user,
            action,
            offline_ms: Some(at),
            ..
        } => format!(
            "item: {} offline at {} UTC, delivered now",
            acted(user, action),
            mobiwf_runtime::process::time_of_day_utc(*at)
        ),
        Event::ItemRefused {
            user,
            action,
            reason,
            ..
        } => format!("item: refused {user}'s {action}: {reason}"),
        Event::ItemRevoked { users: list, .. } => format!("item: revoked from {}", users(list)),
        Event::ItemDeadline {
            hours_left: 0,
            told,
            ..
        } => {
            format!("item: deadline reached (told {})", or_nobody(&users(told)))
        }
        Event::ItemDeadline {
            hours_left, told, ..
        } => format!(
            "item: {hours_left} hours left before its deadline (told {})",
            or_nobody(&users(told))
        ),
        Event::ItemHandedOver { from, to, .. } if from.is_empty() => {
            format!("item: handed over to the responsible user {to}")
        }
        Event::ItemHandedOver { from, to, .. } => format!(
            "item: handed over to the responsible user {to}, taken from {}",
            users(from)
        ),
        Event::Administered {
            user,
            action,
            request,
            ..
        } => format!(
            "item: operator's {} for {user} sent to its host (request {request})",
            action.as_str()
        ),
        Event::AdminAnswered {
            user,
            request,
            verdict,
            ..
        } => format!("item: host answered request {request} for {user}: {verdict:?}"),
        Event::NoticeUndelivered {
            user,
            notice,
            text,
            why,
        } => format!("notice '{notice}' for {user} not delivered ({why}): {text}"),
        _ => return None,
    })
}

/// `selected by alice`, `delegated by alice to carol`, `completed by alice (failed: ...)`.
fn acted(user: &mobiwf_proto::UserId, action: &mobiwf_proto::ItemAction) -> String {
    use mobiwf_proto::ItemAction as A;
    match action {
        A::Select => format!("selected by {user}"),
        A::Release => format!("released by {user}"),
        A::Lock => format!("locked by {user}"),
        A::Unlock => format!("unlocked by {user}"),
        A::Complete {
            succeeded: true,
            flag: Some(flag),
            ..
        } => format!("completed by {user} with flag {flag}"),
        A::Complete {
            succeeded: true, ..
        } => format!("completed by {user}"),
        A::Complete {
            succeeded: false,
            detail,
            ..
        } => format!(
            "completed by {user} (failed: {})",
            detail.as_deref().unwrap_or("no reason given")
        ),
        A::Delegate { to } => format!("delegated by {user} to {to}"),
        A::Insert => format!("inserted for {user}"),
        A::Remove => format!("removed for {user}"),
        A::Extend { hours } => format!("deadline extended by {hours} hours for {user}"),
        A::Pause => format!("paused by {user}"),
        A::Resume => format!("resumed by {user}"),
    }
}

/// A list of users, or "nobody" when empty.
fn or_nobody(list: &str) -> String {
    if list.is_empty() {
        "nobody".to_owned()
    } else {
        list.to_owned()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use mobiwf_book::InstanceState;
    use mobiwf_proto::{ActivityState, Control, PartitionId};

    fn l(id: u64) -> Label {
        Label {
            id: ActivityId(id),
            name: format!("N{id}"),
            pass: mobiwf_proto::Pass::FIRST,
        }
    }

    #[test]
    fn an_instance_started_by_name_says_its_definition() {
        let started = Event::Submitted {
            source: "maintenance".to_owned(),
            partitions: vec![(PartitionId(1), NodeName::new("P1"))],
            definition: Some(mobiwf_book::DefinitionRef {
                name: "maintenance".into(),
                version: mobiwf_book::DefinitionVersion(2),
            }),
        };
        assert_eq!(
            what(&started),
            "started: definition maintenance version 2; partitions 1 on P1"
        );
    }

    #[test]
    fn events_read_as_they_always_did() {
        let cases = [
            (
                Event::Submitted {
                    source: "wf.xml".to_owned(),
                    partitions: vec![
                        (PartitionId(1), NodeName::new("P1")),
                        (PartitionId(2), NodeName::new("P2")),
                    ],
                    definition: None,
                },
                "submitted (wf.xml); partitions 1 on P1, 2 on P2",
            ),
            (
                Event::Decided {
                    activity: l(1),
                    state: ActivityState::Failed,
                    reason: "gone".to_owned(),
                },
                "N1 (1) failed: gone",
            ),
            (
                Event::LateWord {
                    activity: l(1),
                    state: ActivityState::Succeeded,
                    on: Some(NodeName::new("P1")),
                    decided: ActivityState::Failed,
                    reason: "gone".to_owned(),
                },
                "late word ignored: N1 (1) succeeded on P1, but the controller had decided it \
                 failed (gone)",
            ),
            (
                Event::Overdue {
                    waiting: l(2),
                    on: Some(NodeName::new("P2")),
                    secs: 10,
                    precondition: l(1),
                    then: OverdueThen::StandIn { by: l(9) },
                },
                "N2 (2) on P2 waited more than 10 s (its precondition timeOut) for N1 (1); it \
                 failed and N9 (9) runs in its place, not finished yet",
            ),
            (
                Event::Operator {
                    action: Control::Interrupt,
                    told: 2,
                },
                "operator: interrupt (told 2 partners)",
            ),
            (
                Event::InstanceEnded {
                    state: InstanceState::Succeeded,
                    detail: None,
                },
                "instance succeeded",
            ),
            (
                Event::Started {
                    activity: Label {
                        id: ActivityId(4),
                        name: String::new(),
                        pass: mobiwf_proto::Pass::FIRST,
                    },
                },
                "activity 4 started",
            ),
            (Event::Text("as stored".to_owned()), "as stored"),
        ];
        for (event, text) in cases {
            assert_eq!(what(&event), text);
        }
    }
}
