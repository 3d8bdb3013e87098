//! The live instance page: `GET /console/instances/{id}/events?since=FP` streams the part of
//! an instance's page that follows the partners (its state, graph, work items and history:
//! [`fragment`]) as server-sent events, one `instance` event each time it changes, so an
//! activity's colour changes on the page without a reload. The stream wakes when a commit
//! changed the instance or gave it a history row (`ControllerClient::touched`, sent once the
//! change is on disk), and looks again every [`RECHECK`] anyway (the session may have
//! ended). Each event's id is a fingerprint of the part it carries: the page gives its own as
//! `since` (a browser that reconnects sends the last one it saw as `Last-Event-ID`) and gets
//! the part at once only when it changed meanwhile. At most [`MAX_CONSOLE_STREAMS`] are open
//! at once; one more is answered 503, and the page's script then fetches the graph again
//! every [`FALLBACK_MS`] instead. The stream ends with the session or the instance (deleted
//! by retention).
//!
//! What is shown and when it differs is decided by pure functions ([`fragment`],
//! [`fingerprint`]); the stream only reads the actor and waits.

use std::convert::Infallible;
use std::time::Duration;

use axum::extract::{Path, Query, State};
use axum::http::{HeaderMap, Method, StatusCode, Uri};
use axum::response::sse::{Event, KeepAlive, Sse};
use axum::response::{IntoResponse, Response};
use maud::{Markup, PreEscaped, html};
use mobiwf_book::{HistoryEvent, Instance};
use mobiwf_proto::InstanceId;
use mobiwf_runtime::web::streams::{RenderPace, StreamSlot};
use serde::Deserialize;
use tokio::sync::broadcast;

use super::Console;

/// The most live instance pages the console streams at once; one more is answered 503.
pub const MAX_CONSOLE_STREAMS: usize = 64;

/// How often a stream looks at its instance when no news came (and whether its session is
/// still open).
pub const RECHECK: Duration = Duration::from_secs(30);

/// How often the page's script fetches the graph again when the stream cannot be opened, ms.
pub const FALLBACK_MS: u64 = 30_000;

/// The part of an instance's page that follows the partners, as read from the actor.
pub(super) struct Live {
    pub(super) instance: Instance,
    /// The graph as `graph --svg` draws it.
    pub(super) svg: String,
    pub(super) history: Vec<HistoryEvent>,
}

/// The instance, its graph and its history; `None` when there is no such instance.
pub(super) async fn read(console: &Console, id: InstanceId) -> anyhow::Result<Option<Live>> {
    let client = &console.client;
    let Some(instance) = client.instance(id).await? else {
        return Ok(None);
    };
    let svg = client
        .graph(id, mobiwf_graph::Format::Svg)
        .await?
        .unwrap_or_default();
    let history = client.history(id).await?.unwrap_or_default();
    Ok(Some(Live {
        instance,
        svg,
        history,
    }))
}

/// The part of the page the stream replaces, with what it follows (`data-live`) and the
/// fingerprint of what it shows (`data-since`).
pub(super) fn section(live: &Live) -> Markup {
    let shown = fragment(live).into_string();
    html! {
        section #live
            data-live=(format!("/console/instances/{}/events", live.instance.id.0))
            data-since=(fingerprint(&shown)) {
            (PreEscaped(shown))
        }
    }
}

/// What the live part shows: the instance's state, its graph, its work items, its history.
/// Nothing of the session in it (no CSRF token, no controls): every viewer gets the same.
pub(super) fn fragment(live: &Live) -> Markup {
    let inst = &live.instance;
    html! {
        p.summary data-state=(inst.state().as_str()) {
            (inst.description) " · " strong { (inst.state().as_str()) }
            " · submitted " (mobiwf_book::format_time(inst.submitted_ms))
            @if let Some(detail) = &inst.detail { " · " (detail) }
        }
        // The graph crate escapes every name it draws (`mobiwf_graph::escape`).
        section.graph id="graph"
            data-refresh=(format!("/console/instances/{}/graph", inst.id.0))
            data-refresh-ms=(FALLBACK_MS) {
            (PreEscaped(&live.svg))
        }
        p.graph-full {
            a href=(format!("/console/instances/{}/graph", inst.id.0)) { "The graph at full size" }
        }
        (super::instance::items(inst))
        (super::instance::timeline(&live.history))
    }
}

/// What identifies a live part as shown: the events' ids.
pub(super) fn fingerprint(shown: &str) -> String {
    mobiwf_runtime::secret::hash(shown)[..16].to_owned()
}

#[derive(Deserialize)]
pub(super) struct EventsQuery {
    /// The fingerprint of the part the page shows.
    #[serde(default)]
    since: Option<String>,
}

/// One page following one instance.
struct Follow {
    console: Console,
    token: String,
    id: InstanceId,
    /// The fingerprint of what the browser shows.
    last: Option<String>,
    news: broadcast::Receiver<InstanceId>,
    pace: RenderPace,
    _slot: StreamSlot,
}

/// `GET /console/instances/{id}/events`.
pub(super) async fn stream(
    State(console): State<Console>,
    headers: HeaderMap,
    uri: Uri,
    Path(id): Path<u64>,
    Query(q): Query<EventsQuery>,
) -> Response {
    let api_path = format!("/instances/{id}");
    let signed = match super::allowed(&console, &headers, &uri, (&Method::GET, &api_path)) {
        Ok(signed) => signed,
        Err(instead) => return instead.into_response(),
    };
    // An instance that is not (or no longer) here: 404, so the page's EventSource stops
    // instead of reconnecting for ever.
    if !matches!(read(&console, InstanceId(id)).await, Ok(Some(_))) {
        let why = format!("no instance {id} here (unknown, or removed by retention)");
        return super::failed(&signed, StatusCode::NOT_FOUND, &why);
    }
    let slot = match console.streams.take(&signed.session.id) {
        Ok(slot) => slot,
        Err(full) => {
            let why = full.to_string();
            return super::failed(&signed, StatusCode::SERVICE_UNAVAILABLE, &why);
        }
    };
    let resumed = headers
        .get("last-event-id")
        .and_then(|v| v.to_str().ok())
        .map(str::to_owned);
    let follow = Follow {
        // Listening before the first read: a change written after it wakes the wait.
        news: console.client.touched(),
        console,
        token: signed.token,
        id: InstanceId(id),
        last: resumed.or(q.since),
        pace: RenderPace::default(),
        _slot: slot,
    };
    let events = futures::stream::unfold(follow, |mut follow| async move {
        let event = follow.next().await?;
        Some((Ok::<_, Infallible>(event), follow))
    });
    Sse::new(events)
        .keep_alive(KeepAlive::default())
        .into_response()
}

impl Follow {
    /// The next part to send, once it differs from what the browser shows; `None` when the
    /// stream ends (the session ended, the instance is gone, the controller is stopping).
    async fn next(&mut self) -> Option<Event> {
        loop {
            let now = mobiwf_runtime::process::now_ms();
            self.console.web.sessions.check(&self.token, now)?;
            if self.pace.hold().await {
                // News too soon after the last render: what comes meanwhile comes with it.
                continue;
            }
            let live = read(&self.console, self.id).await.ok().flatten()?;
            let shown = fragment(&live).into_string();
            let id = fingerprint(&shown);
            if self.last.as_deref() != Some(id.as_str()) {
                self.pace.rendered();
                self.last = Some(id.clone());
                return Some(Event::default().event("instance").id(id).data(shown));
            }
            if !self.wait().await {
                return None;
            }
        }
    }

    /// Waits for news of this instance (or words missed, or the time to look again); false
    /// when the controller is stopping.
    async fn wait(&mut self) -> bool {
        let deadline = tokio::time::Instant::now() + RECHECK;
        loop {
            match tokio::time::timeout_at(deadline, self.news.recv()).await {
                Ok(Ok(id)) if id != self.id => {}
                Ok(Ok(_) | Err(broadcast::error::RecvError::Lagged(_))) | Err(_) => return true,
                Ok(Err(broadcast::error::RecvError::Closed)) => return false,
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn live(description: &str) -> Live {
        // Its state is the book's to change: the instance is read as the store has it.
        let instance: Instance = serde_json::from_value(serde_json::json!({
            "id": 7, "workflow": 18, "description": description, "state": "running",
            "detail": null, "submitted_ms": 0, "finished_ms": null, "partitions": [],
            "activities": [],
        }))
        .expect("an instance");
        Live {
            instance,
            svg: "<svg><g data-activity=\"1\" data-state=\"running\"></g></svg>".to_owned(),
            history: Vec::new(),
        }
    }

    #[test]
    fn the_part_names_its_stream_and_what_it_shows() {
        let a = live("first");
        let markup = section(&a).into_string();
        assert!(
            markup.contains("data-live=\"/console/instances/7/events\""),
            "{markup}"
        );
        let shown = fragment(&a).into_string();
        assert!(
            markup.contains(&format!("data-since=\"{}\"", fingerprint(&shown))),
            "{markup}"
        );
        assert!(markup.contains("data-refresh=\"/console/instances/7/graph\""));
        assert!(shown.contains("data-state=\"running\""), "{shown}");
        assert!(!shown.contains("csrf"), "{shown}");
    }

    #[test]
    fn a_change_changes_the_fingerprint_and_nothing_else_does() {
        let shown = |l: &Live| fragment(l).into_string();
        assert_eq!(
            fingerprint(&shown(&live("a"))),
            fingerprint(&shown(&live("a")))
        );
        assert_ne!(
            fingerprint(&shown(&live("a"))),
            fingerprint(&shown(&live("b")))
        );
        let mut drawn = live("a");
        drawn.svg = drawn.svg.replace("running", "succeeded");
        assert_ne!(fingerprint(&shown(&live("a"))), fingerprint(&shown(&drawn)));
    }

    #[test]
    fn names_are_escaped() {
        let shown = fragment(&live("<script>x</script>")).into_string();
        assert!(!shown.contains("<script>"), "{shown}");
        assert!(shown.contains("&lt;script&gt;"), "{shown}");
    }
}
