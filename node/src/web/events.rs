//! The live worklist: `GET /events?order=...&page=...` streams a page of the signed-in user's
//! worklist as server-sent events, one `worklist` event (the page of the list as the page
//! renders it, with how many items there are) each time it changes, so a select on another device takes the item off this page without a reload. The
//! stream wakes when the actor has written a group that changed the desk
//! (`NodeClient::desk_news`), and looks again every [`RECHECK`] anyway. Each event's id is a
//! fingerprint of the list it shows: a browser that reconnects sends the last one it saw
//! (`Last-Event-ID`; the page gives its own as `since`) and gets the list at once only when it
//! changed meanwhile, across restarts of the node too. The stream ends with the session.

use std::convert::Infallible;
use std::time::Duration;

use axum::extract::{Query, State};
use axum::http::StatusCode;
use axum::http::request::Parts;
use axum::response::sse::{Event, KeepAlive, Sse};
use axum::response::{IntoResponse, Response};
use mobiwf_proto::UserId;
use mobiwf_runtime::web::streams::{RenderPace, StreamSlot};
use serde::Deserialize;
use tokio::sync::watch;

use super::{Pages, signed_user, trouble, view};

/// The most live worklists a node streams at once; one more is answered 503.
pub const MAX_EVENT_STREAMS: usize = 256;

/// How often a stream looks at the worklist when no news came (what changes without the
/// desk being written, such as a host that cannot be reached).
pub const RECHECK: Duration = Duration::from_secs(15);

#[derive(Deserialize)]
pub(super) struct EventsQuery {
    /// Which page: its order, number and size.
    #[serde(flatten)]
    page: super::PageQuery,
    /// The fingerprint of the list the page shows.
    #[serde(default)]
    since: Option<String>,
}

/// One user's live worklist.
struct Follow {
    pages: Pages,
    token: String,
    user: UserId,
    shown: view::Shown,
    /// The fingerprint of what the browser shows.
    last: Option<String>,
    news: watch::Receiver<u64>,
    pace: RenderPace,
    _slot: StreamSlot,
}

pub(super) async fn stream(
    State(pages): State<Pages>,
    parts: Parts,
    Query(q): Query<EventsQuery>,
) -> Response {
    let (signed, user) = match signed_user(&pages, &parts) {
        Ok(signed) => signed,
        Err(page) => return page.into_response(),
    };
    let slot = match pages.streams.take(&signed.session.id) {
        Ok(slot) => slot,
        Err(full) => {
            let why = full.to_string();
            return trouble(&signed, StatusCode::SERVICE_UNAVAILABLE, &why);
        }
    };
    let resumed = parts
        .headers
        .get("last-event-id")
        .and_then(|v| v.to_str().ok())
        .map(str::to_owned);
    let follow = Follow {
        news: pages.client.desk_news.clone(),
        pages,
        token: signed.token,
        user,
        shown: q.page.shown(),
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
    /// The next list to send, once it differs from what the browser shows; `None` when the
    /// stream ends (the session ended, the node is stopping).
    async fn next(&mut self) -> Option<Event> {
        loop {
            let now = mobiwf_runtime::process::now_ms();
            self.pages.web.sessions.check(&self.token, now)?;
            // Seen before asking: a change written after the answer wakes the wait below.
            self.news.borrow_and_update();
            let (user, shown) = (self.user.clone(), self.shown);
            let list = match self
                .pages
                .client
                .user_worklist_page(user, shown.order, shown.window())
                .await
            {
                Ok(Ok(list)) => list,
                _ => return None,
            };
            let id = view::fingerprint(&list, shown);
            if self.last.as_deref() != Some(id.as_str()) {
                if self.pace.hold().await {
                    // It came too soon after the last: what changed meanwhile comes with it.
                    continue;
                }
                self.pace.rendered();
                let list = view::worklist(&list, shown, &id, now).into_string();
                self.last = Some(id.clone());
                return Some(Event::default().event("worklist").id(id).data(list));
            }
            // News, or the time to look again; the actor gone: the node is stopping.
            if let Ok(Err(_)) = tokio::time::timeout(RECHECK, self.news.changed()).await {
                return None;
            }
        }
    }
}
