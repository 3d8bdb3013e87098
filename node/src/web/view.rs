//! What the worklist page shows, pure (data and the time in, markup out): the list in one of
//! the desk's orders, each line's facts (state, priority, the deadline counting down, offline
//! readiness, holder, host), and the notices. `maud` escapes every value.

use maud::{Markup, html};
use mobiwf_people::{EntryState, Offline, Order};
use mobiwf_proto::Notice;

use crate::daemon::WorklistEntry;

/// The path of the live worklist of `order`, for a page that shows the list `since`
/// (`/events?order=...&since=...`).
pub fn events_path(order: Order, since: &str) -> String {
    format!("/events?order={order}&since={since}")
}

/// What identifies a list as shown (its items and their facts, in `order`): the live
/// worklist's event ids. Not the time: a countdown moving on is not a change.
pub fn fingerprint(entries: &[WorklistEntry], order: Order) -> String {
    let shown = serde_json::to_string(entries).unwrap_or_default();
    mobiwf_runtime::secret::hash(&format!("{order}\n{shown}"))[..16].to_owned()
}

/// An item's activity name, with its pass of a loop's body after the first (`Inspect #2`).
pub fn item_name(entry: &WorklistEntry) -> String {
    let info = &entry.entry.info;
    if info.pass.is_first() {
        info.name.clone()
    } else {
        format!("{} #{}", info.name, info.pass.0)
    }
}

/// The item's page.
pub fn item_path(entry: &WorklistEntry) -> String {
    let info = &entry.entry.info;
    format!("/items/{}/{}", info.instance, info.activity)
}

/// `in 2h 05m`, `3m 10s ago`: the time to `due_ms` from `now_ms` (the script keeps it
/// current with the same words).
pub fn countdown(due_ms: u64, now_ms: u64) -> String {
    let left = i128::from(due_ms) - i128::from(now_ms);
    let s = left.unsigned_abs() / 1000;
    let (d, h, m, sec) = (s / 86_400, (s % 86_400) / 3600, (s % 3600) / 60, s % 60);
    let text = if d > 0 {
        format!("{d}d {h}h")
    } else if h > 0 {
        format!("{h}h {m:02}m")
    } else {
        format!("{m}m {sec:02}s")
    };
    if left >= 0 {
        format!("in {text}")
    } else {
        format!("{text} ago")
    }
}

/// When an item's deadline is shown red: under its last notice before the deadline (the
/// smallest threshold of `DEADLINE_THRESHOLDS` above 0 that applies), else at the deadline.
fn warn_at(due: &mobiwf_proto::ItemDeadline) -> u64 {
    mobiwf_proto::thresholds_of(due.hours)
        .filter(|t| *t > 0)
        .min()
        .map_or(due.at_ms, |t| due.threshold_ms(t))
}

/// The deadline of an item, counting down: its `<deadline>` when it has one, else its
/// activity's `timeOut`.
pub fn deadline(entry: &WorklistEntry, now_ms: u64) -> Option<Markup> {
    let info = &entry.entry.info;
    if let Some(due) = &info.due {
        let warn = warn_at(due);
        let late = now_ms >= warn;
        return Some(html! {
            span { "due " time.due.late[late] data-due-ms=(due.at_ms) data-warn-ms=(warn) {
                (countdown(due.at_ms, now_ms))
            } }
        });
    }
    info.deadline_ms.map(|at| {
        html! {
            span { "times out " time.due.late[now_ms >= at] data-due-ms=(at) {
                (countdown(at, now_ms))
            } }
        }
    })
}

/// The state of an item for its user, in words.
pub fn state_words(entry: &WorklistEntry) -> String {
    let e = &entry.entry;
    let mut words = match e.state {
        EntryState::Offered => "offered".to_owned(),
        EntryState::Selected => "selected".to_owned(),
        EntryState::Locked => "locked".to_owned(),
    };
    if e.info.paused_ms.is_some() {
        words.push_str(", paused");
    }
    if let Some(pending) = &e.pending {
        words.push_str(&format!(" ({pending} sent to its host, no answer yet)"));
    }
    words
}

fn offline_words(offline: Offline) -> &'static str {
    match offline {
        Offline::Ready => "ready offline",
        Offline::Copying => "copying for offline",
        Offline::NotCopied => "not copied for offline",
    }
}

/// The facts of an item, as its line and its page show them.
pub fn facts(entry: &WorklistEntry, now_ms: u64) -> Markup {
    let e = &entry.entry;
    html! {
        div.facts {
            span { "instance " (e.info.instance) " · activity " (e.info.activity) }
            span.state { (state_words(entry)) }
            span { "priority " (e.info.priority) }
            @if let Some(deadline) = deadline(entry, now_ms) { (deadline) }
            @if let Some(offline) = e.offline { span.offline { (offline_words(offline)) } }
            @if e.state != EntryState::Offered {
                span.holder { "held by " (entry.user.as_str()) }
            }
            @if let Some(grantor) = &e.grantor { span { "from " (grantor.as_str()) } }
            @if let Some(host) = &entry.host_name { span { "host " (host.as_str()) } }
            @if let Some(why) = &e.disabled { span.refused { (why) } }
        }
    }
}

/// The list the page shows and the live stream replaces whole (`#worklist`).
pub fn worklist(entries: &[WorklistEntry], order: Order, since: &str, now_ms: u64) -> Markup {
    html! {
        div #worklist data-events=(events_path(order, since)) {
            @if entries.is_empty() {
                p.empty { "Nothing to do." }
            } @else {
                ul.items {
                    @for entry in entries {
                        li data-item=(format!("{}/{}", entry.entry.info.instance, entry.entry.info.activity)) {
                            a.name href=(item_path(entry)) { (item_name(entry)) }
                            (facts(entry, now_ms))
                        }
                    }
                }
            }
        }
    }
}

/// The worklist page's body: the link to the hosts (`link`), the orders, the list, the way to
/// the notices.
pub fn worklist_page(
    user: &str,
    entries: &[WorklistEntry],
    order: Order,
    now_ms: u64,
    link: &Markup,
) -> Markup {
    html! {
        h1 { (user) "'s worklist" }
        (link)
        nav.orders aria-label="Order" {
            @for o in Order::ALL {
                @if o == order {
                    a href=(format!("/?order={o}")) aria-current="page" { (o) }
                } @else {
                    a href=(format!("/?order={o}")) { (o) }
                }
            }
        }
        (worklist(entries, order, &fingerprint(entries, order), now_ms))
        p { a href="/notices" { "Notices" } }
    }
}

/// The notices page's body, newest first.
pub fn notices_page(user: &str, notices: &[Notice]) -> Markup {
    html! {
        h1 { "Notices for " (user) }
        @if notices.is_empty() {
            p.empty { "No notices." }
        } @else {
            ul.items {
                @for notice in notices.iter().rev() {
                    li {
                        span.state { (notice.kind) }
                        span { (notice.text) }
                        div.facts { span { (mobiwf_runtime::process::time_of_day_utc(notice.at_ms)) " UTC" } }
                    }
                }
            }
        }
    }
}
