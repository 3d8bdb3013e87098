//! The synchronization manager's events in words: waits, grants, refusals and releases of a
//! task class, and the waits of an ordered task for its instance's relative order.

use mobiwf_book::Event;

use super::label;

/// The synchronization manager's decisions about an activity's task class, in words.
pub(super) fn sync_event(event: &Event) -> Option<String> {
    Some(match event {
        Event::SyncWaiting {
            activity,
            class,
            behind,
        } => format!(
            "{} waits for class {class}, behind {}",
            label(activity),
            blockers(behind)
        ),
        Event::SyncGranted { activity, class } => {
            format!("{} granted class {class}: it may run", label(activity))
        }
        Event::SyncRefused {
            activity,
            class,
            detail,
        } => format!("{} refused class {class}: {detail}", label(activity)),
        Event::SyncReleased {
            activity,
            class,
            held,
            why,
        } => {
            let what = if *held {
                "released class"
            } else {
                "stopped waiting for class"
            };
            format!("{} {what} {class}: {why}", label(activity))
        }
        _ => return None,
    })
}

/// The synchronization manager's decisions about an ordered task's relative order, in words.
pub(super) fn order_event(event: &Event) -> Option<String> {
    Some(match event {
        Event::OrderWaiting { activity, after } => format!("{} {after}", label(activity)),
        Event::OrderPassed { activity, class } => {
            let next = class
                .as_ref()
                .map_or(String::new(), |c| format!("; it asks for class {c}"));
            format!(
                "{} may go on: the tasks before it in its instance's relative order are \
                 over{next}",
                label(activity)
            )
        }
        Event::OrderReleased { activity, why } => {
            format!(
                "{} stopped waiting for its relative order: {why}",
                label(activity)
            )
        }
        _ => return None,
    })
}

/// What a request waits behind: `instance 3's activity 1 (holds press), ...`.
pub fn blockers(behind: &[mobiwf_book::Blocker]) -> String {
    if behind.is_empty() {
        return "nothing".to_owned();
    }
    let each: Vec<String> = behind
        .iter()
        .map(|b| {
            let how = if b.holds { "holds" } else { "waits for" };
            format!(
                "instance {}'s activity {} ({how} {})",
                b.ticket.instance, b.ticket.activity, b.class
            )
        })
        .collect();
    each.join(", ")
}
