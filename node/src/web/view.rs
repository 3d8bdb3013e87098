//! What the worklist page shows, pure (data and the time in, markup out): one page of the
//! list in one of the desk's orders (`Shown`), each line's facts (state, priority, the
//! deadline counting down, offline readiness, holder, host), how many items there are with the
//! way to the pages before and after, and the notices. `maud` escapes every value.

use maud::{Markup, html};
use mobiwf_people::{EntryState, Offline, Order};
use mobiwf_proto::Notice;

use crate::daemon::{Window, WorklistEntry, WorklistPage};

/// Items on a worklist page unless `?limit=` says otherwise.
pub const DEFAULT_PAGE: usize = 50;
/// The most items on one page.
pub const MAX_PAGE: usize = 500;

/// Which page of the worklist a browser shows: its order, its number (from 1) and its size.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Shown {
    /// The order of the list.
    pub order: Order,
    /// The page's number, from 1.
    pub page: usize,
    /// The most items on a page, 1 to [`MAX_PAGE`].
    pub limit: usize,
}

impl Shown {
    /// Page `page` (the first when none or 0) of `limit` items ([`DEFAULT_PAGE`] when none,
    /// at most [`MAX_PAGE`]) in `order`.
    pub fn new(order: Order, page: Option<usize>, limit: Option<usize>) -> Shown {
        Shown {
            order,
            page: page.unwrap_or(1).max(1),
            limit: limit.unwrap_or(DEFAULT_PAGE).clamp(1, MAX_PAGE),
        }
    }

    /// The first page of `order`, of the default size.
    pub fn first(order: Order) -> Shown {
        Shown::new(order, None, None)
    }

    /// The entries of the list it shows.
    pub fn window(self) -> Window {
        Window {
            from: (self.page - 1).saturating_mul(self.limit),
            limit: self.limit,
        }
    }

    /// The query of page `page` in the same order and size: only the order for the first
    /// page of the default size, so its address stays what it was before pages.
    fn query(self, page: usize) -> String {
        let mut query = format!("order={}", self.order);
        if page > 1 {
            query.push_str(&format!("&page={page}"));
        }
        if self.limit != DEFAULT_PAGE {
            query.push_str(&format!("&limit={}", self.limit));
        }
        query
    }
}

/// The path of the live worklist page `shown`, for a page that shows the list `since`
/// (`/events?order=...&since=...`).
pub fn events_path(shown: Shown, since: &str) -> String {
    format!("/events?{}&since={since}", shown.query(shown.page))
}

/// What identifies a page as shown (its items and their facts, in its order, and how many the
/// list holds): the live worklist's event ids. Not the time: a countdown moving on is not a
/// change.
pub fn fingerprint(list: &WorklistPage, shown: Shown) -> String {
    let entries = serde_json::to_string(&list.entries).unwrap_or_default();
    let page = format!("{} {} {}", shown.page, shown.limit, list.total);
    mobiwf_runtime::secret::hash(&format!("{}\n{page}\n{entries}", shown.order))[..16].to_owned()
}

/// How many items there are, which of them the page shows, and the links to the pages before
/// and after.
fn pager(list: &WorklistPage, shown: Shown) -> Markup {
    let from = shown.window().from;
    let to = from + list.entries.len();
    let more = to < list.total;
    html! {
        nav.pager aria-label="Pages" {
            span.count {
                @if list.total == 1 { "1 item" } @else { (list.total) " items" }
                @if shown.page > 1 || more {
                    @if list.entries.is_empty() {
                        " · none on page " (shown.page)
                    } @else {
                        " · " (from + 1) "–" (to) " shown"
                    }
                }
            }
            @if shown.page > 1 {
                a rel="prev" href=(format!("/?{}", shown.query(shown.page - 1))) { "Previous" }
            }
            @if more {
                a rel="next" href=(format!("/?{}", shown.query(shown.page + 1))) { "Next" }
            }
        }
    }
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

/// The page of the list the page shows and the live stream replaces whole (`#worklist`).
pub fn worklist(list: &WorklistPage, shown: Shown, since: &str, now_ms: u64) -> Markup {
    html! {
        div #worklist data-events=(events_path(shown, since)) {
            @if list.total == 0 {
                p.empty { "Nothing to do." }
            } @else if list.entries.is_empty() {
                p.empty { "Nothing on this page." }
            } @else {
                ul.items {
                    @for entry in &list.entries {
                        li data-item=(format!("{}/{}", entry.entry.info.instance, entry.entry.info.activity)) {
                            a.name href=(item_path(entry)) { (item_name(entry)) }
                            (facts(entry, now_ms))
                        }
                    }
                }
            }
            @if list.total > 0 { (pager(list, shown)) }
        }
    }
}

/// The worklist page's body: the link to the hosts (`link`), the orders, the page of the list,
/// the way to the notices.
pub fn worklist_page(
    user: &str,
    list: &WorklistPage,
    shown: Shown,
    now_ms: u64,
    link: &Markup,
) -> Markup {
    let order = shown.order;
    html! {
        h1 { (user) "'s worklist" }
        (link)
        nav.orders aria-label="Order" {
            @for o in Order::ALL {
                @let href = format!("/?{}", Shown { order: o, page: 1, ..shown }.query(1));
                @if o == order {
                    a href=(href) aria-current="page" { (o) }
                } @else {
                    a href=(href) { (o) }
                }
            }
        }
        (worklist(list, shown, &fingerprint(list, shown), now_ms))
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
