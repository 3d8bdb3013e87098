//! What the worklist page shows of the link between this device and the hosts of the user's
//! items, pure (*Synchronization and Disconnected Operation in WorkToDo* (IC-03-006), §5.1 and
//! §5.3): whether the user is disconnected (away, since when), and for each host whether it is
//! connected, cut off (since when the device found it so), or being reconnected to (the user's
//! actions on its items sent and not answered yet); the Disconnect and Reconnect forms; and the
//! protocol's answers to them in words.
//!
//! A cut is known once deliveries to the host have failed `UNREACHABLE_AFTER_FAILURES` times
//! in a row (the outbox's news, as the desk disables items on it): until the device has tried,
//! a host it has nothing to send to shows as connected.

use std::collections::BTreeMap;

use maud::{Markup, html};
use serde_json::Value;

use crate::daemon::UserLink;

/// The wait a disconnection from the page offers for the copy of what the locked items read,
/// in seconds (the form lets the user change it).
pub const DEFAULT_MAX_WAIT_SECS: u64 = 60;

/// How often the page looks at the link again (`GET /link`), in ms.
pub const LINK_REFRESH_MS: u64 = 3000;

/// How the device stands with one host.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum HostState {
    /// Nothing failed.
    Connected,
    /// Deliveries failed, nothing heard since `since_ms`.
    CutOff { since_ms: u64 },
    /// Reachable (as far as the device knows), with `waiting` of the user's actions on its
    /// items sent and not answered yet.
    Reconnecting { waiting: usize },
}

impl HostState {
    /// The word the page marks it with (`data-host-link`).
    pub fn word(&self) -> &'static str {
        match self {
            HostState::Connected => "connected",
            HostState::CutOff { .. } => "cut-off",
            HostState::Reconnecting { .. } => "reconnecting",
        }
    }
}

/// One host of the user's items, or a node this device cannot reach.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HostLink {
    /// Its node name (its peer id when the directory does not name it).
    pub name: String,
    pub state: HostState,
}

/// The link as the page shows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LinkView {
    /// Since when the user is disconnected (away).
    pub away_since_ms: Option<u64>,
    /// The hosts, by name.
    pub hosts: Vec<HostLink>,
    /// How many items the user holds locked (what a disconnection takes along).
    pub locked: usize,
    /// How many of the user's actions were sent to their hosts and not answered yet.
    pub waiting: usize,
}

impl LinkView {
    /// The word the page marks the whole link with (`data-link`): `away` once the user
    /// disconnected, else the worst of the hosts' states.
    pub fn word(&self) -> &'static str {
        if self.away_since_ms.is_some() {
            return "away";
        }
        let any = |word: &str| self.hosts.iter().any(|h| h.state.word() == word);
        if any("cut-off") {
            "cut-off"
        } else if any("reconnecting") {
            "reconnecting"
        } else {
            "connected"
        }
    }
}

/// The link of a user: the hosts of their items, and the named nodes this device cannot
/// reach.
pub fn link_view(link: &UserLink) -> LinkView {
    let cut: BTreeMap<&str, &crate::daemon::CutOff> =
        link.cut_off.iter().map(|c| (c.peer.as_str(), c)).collect();
    // By peer id: each host's name and how many actions wait for it.
    let mut hosts: BTreeMap<String, (String, usize)> = BTreeMap::new();
    for host in &link.hosts {
        let peer = host.peer.as_str();
        let name = host
            .name
            .as_ref()
            .map_or_else(|| peer.to_owned(), |n| n.as_str().to_owned());
        hosts.entry(peer.to_owned()).or_insert((name, 0)).1 += host.waiting;
    }
    for c in &link.cut_off {
        if let Some(name) = &c.name {
            hosts
                .entry(c.peer.as_str().to_owned())
                .or_insert_with(|| (name.as_str().to_owned(), 0));
        }
    }
    let mut hosts: Vec<HostLink> = hosts
        .into_iter()
        .map(|(peer, (name, waiting))| {
            let state = match cut.get(peer.as_str()) {
                Some(c) => HostState::CutOff {
                    since_ms: c.since_ms,
                },
                None if waiting > 0 => HostState::Reconnecting { waiting },
                None => HostState::Connected,
            };
            HostLink { name, state }
        })
        .collect();
    hosts.sort_by(|a, b| a.name.cmp(&b.name));
    LinkView {
        away_since_ms: link.away_since_ms,
        hosts,
        locked: link.locked,
        waiting: link.waiting,
    }
}

fn at(ms: u64) -> String {
    format!("{} UTC", mobiwf_runtime::process::time_of_day_utc(ms))
}

fn actions(n: usize) -> String {
    if n == 1 {
        "1 action".to_owned()
    } else {
        format!("{n} actions")
    }
}

/// The link in words: a headline, and a line per host. The page reloads it from `GET /link`.
pub fn link_state(view: &LinkView) -> Markup {
    let headline = match (view.away_since_ms, view.word()) {
        (Some(since), _) => format!(
            "Disconnected since {}: you work offline on your locked items; what you do waits \
             on this device and reaches the hosts once you reconnect and the network allows.",
            at(since)
        ),
        (None, "cut-off") => "Cut off: a host cannot be reached from this device; only items \
                              you hold with their data copied here can be worked on meanwhile."
            .to_owned(),
        (None, "reconnecting") => {
            "Reconnecting: what you did is on its way to the hosts.".to_owned()
        }
        _ if view.hosts.is_empty() => "Connected.".to_owned(),
        _ => "Connected to the hosts of your items.".to_owned(),
    };
    html! {
        p.link-state data-link=(view.word()) role="status" { (headline) }
        @if !view.hosts.is_empty() {
            ul.links {
                @for host in &view.hosts {
                    li data-host-link=(host.state.word()) {
                        "host " (host.name) ": "
                        @match &host.state {
                            HostState::Connected => "connected",
                            HostState::CutOff { since_ms } => {
                                "cut off since " (at(*since_ms))
                            }
                            HostState::Reconnecting { waiting } => {
                                "reconnecting, " (actions(*waiting)) " not answered yet"
                            }
                        }
                    }
                }
            }
        }
    }
}

/// The link section of the worklist page: its state (kept current by the script from
/// `GET /link`), what the last Disconnect or Reconnect came to, and the one of the two the
/// user can use now.
pub fn link_section(view: &LinkView, csrf: &str, told: Option<&Told>) -> Markup {
    html! {
        section #link aria-label="Link" {
            div data-refresh="/link" data-refresh-ms=(LINK_REFRESH_MS) { (link_state(view)) }
            @if let Some(told) = told { (told_markup(told)) }
            @if view.away_since_ms.is_some() {
                form.reconnect method="post" action="/reconnect" {
                    input type="hidden" name="csrf" value=(csrf);
                    button.primary type="submit" { "Reconnect" }
                }
            } @else {
                form.disconnect method="post" action="/disconnect" {
                    input type="hidden" name="csrf" value=(csrf);
                    label {
                        "Wait at most (seconds) for the copy "
                        input type="number" name="max_wait_secs" min="0"
                            value=(DEFAULT_MAX_WAIT_SECS);
                    }
                    label { input type="checkbox" name="accept" value="yes"; " whatever it takes" }
                    button type="submit" {
                        "Disconnect (take my " (view.locked) " locked items offline)"
                    }
                }
            }
        }
    }
}

/// What a Disconnect or Reconnect came to, in words.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Told {
    /// Done: what was kept, what goes on.
    Done(String),
    /// Refused, with why (the protocol's words).
    Refused(String),
}

fn told_markup(told: &Told) -> Markup {
    match told {
        Told::Done(what) => html! { p.done.told role="status" { (what) } },
        Told::Refused(why) => html! { p.refused.told role="alert" { (why) } },
    }
}

/// The words for the answer of `POST /users/{user}/disconnect` (`status`, its JSON `body`).
pub fn disconnect_told(status: u16, body: &Value) -> Told {
    if !(200..300).contains(&status) {
        let why = body["error"].as_str().unwrap_or("no details");
        let what = match body["reason"].as_str() {
            Some("selected") => {
                "you hold a selected item, which stays with its host: release \
                                 or lock it first"
            }
            Some("time") => "the copy would take longer than you wait",
            Some("disk") => "this device lacks the disk space for the copy",
            _ => "the disconnection did not go through",
        };
        return Told::Refused(format!("Not disconnected: {what}. {why}"));
    }
    let locked: Vec<&str> = body["locked"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .collect();
    let mut words = format!(
        "Disconnected: {} locked item(s) kept on this device for you to work offline{} ({} \
         bytes copied); your other items stay with their hosts for others.",
        locked.len(),
        if locked.is_empty() {
            String::new()
        } else {
            format!(": {}", locked.join(", "))
        },
        body["copied_bytes"].as_u64().unwrap_or(0),
    );
    let apps: Vec<String> = body["applications"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|a| {
            format!(
                "{} ({} KiB)",
                a["name"].as_str().unwrap_or("?"),
                a["size_kib"]
            )
        })
        .collect();
    if !apps.is_empty() {
        words.push_str(&format!(
            " Applications they start that this device has not installed: {}.",
            apps.join(", ")
        ));
    }
    Told::Done(words)
}

/// The words for the answer of `POST /users/{user}/reconnect`; `before` is the link as it was
/// (what the user did while away, still to be answered).
pub fn reconnect_told(status: u16, body: &Value, before: &LinkView) -> Told {
    if !(200..300).contains(&status) {
        let why = body["error"].as_str().unwrap_or("no details");
        return Told::Refused(format!("Not reconnected: {why}"));
    }
    let cut: Vec<&str> = before
        .hosts
        .iter()
        .filter(|h| matches!(h.state, HostState::CutOff { .. }))
        .map(|h| h.name.as_str())
        .collect();
    let mut words = format!(
        "Reconnected: every item can be worked on again. On their way to their hosts: {} of \
         yours done while away. Locked to you: {} item(s).",
        actions(before.waiting),
        before.locked
    );
    if !cut.is_empty() {
        words.push_str(&format!(
            " Still cut off from {}: what waits for it goes once it answers.",
            cut.join(", ")
        ));
    }
    words.push_str(" Items taken by others meanwhile say \"no longer available\".");
    Told::Done(words)
}
