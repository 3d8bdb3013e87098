//! The node's pages: each user whose device this node is works their worklist in a browser,
//! signed in with a login link (`mobiwf-node login-link --user U`). A page's session stands for
//! the user's own token: it reads that user's worklist and notices and acts as that user, and
//! only through what the JSON API calls (`NodeClient`, `api_people::act_on`).
//!
//! - `GET /?order=arrival|priority|deadline|size&page=N&limit=M`: a page of the worklist
//!   (phone and desktop), [`view::DEFAULT_PAGE`] items unless `limit` says otherwise.
//! - `GET /events?order=...&page=...`: that page of the worklist, live (server-sent events:
//!   `events`).
//! - `GET /items/{instance}/{activity}`, `POST .../{action}`, `GET .../files/{name}`: an
//!   item's page, its actions, what it reads (`item`).
//! - `GET /link`, `POST /disconnect`, `POST /reconnect`: the link to the hosts as the worklist
//!   shows it, and taking the user's locked items offline and coming back (`link`).
//! - `GET /notices`: what the user was told.
//! - Sign-in, sign-out, assets: `mobiwf_runtime::web`.
//!
//! Every page carries the runtime's security headers; every form its session's CSRF token.

mod events;
mod item;
mod item_view;
mod link;
mod link_view;
mod view;

#[cfg(test)]
mod paging_tests;
#[cfg(test)]
mod tests;

use axum::Router;
use axum::extract::{DefaultBodyLimit, Query, State};
use axum::http::request::Parts;
use axum::http::{Method, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use mobiwf_people::Order;
use mobiwf_proto::UserId;
use mobiwf_runtime::api_auth::Grant;
use mobiwf_runtime::web::{self, Signed, Web};
use serde::Deserialize;

use crate::daemon::NodeClient;

/// What the pages' handlers share.
#[derive(Clone)]
pub(crate) struct Pages {
    client: NodeClient,
    web: Web,
    /// How many live worklists may stream at once, in all and by session.
    streams: web::streams::StreamSlots,
}

/// The pages, on `client`, with the sessions of `web`; with the security headers.
pub fn router(client: NodeClient, web: Web) -> Router {
    let pages = Pages {
        client,
        web: web.clone(),
        streams: web::streams::StreamSlots::new(events::MAX_EVENT_STREAMS, "MAX_EVENT_STREAMS"),
    };
    Router::new()
        .route("/", get(worklist))
        .route("/events", get(events::stream))
        .route("/notices", get(notices))
        .route("/link", get(link::state))
        .route("/disconnect", post(link::disconnect))
        .route("/reconnect", post(link::reconnect))
        .route("/items/{instance}/{activity}", get(item::page))
        .route(
            "/items/{instance}/{activity}/complete",
            post(item::complete)
                .layer(DefaultBodyLimit::max(crate::api::MAX_COMPLETION_BODY_BYTES)),
        )
        .route("/items/{instance}/{activity}/{action}", post(item::act))
        .route(
            "/items/{instance}/{activity}/files/{name}",
            get(item::download),
        )
        .with_state(pages)
        .layer(axum::middleware::from_fn(web::secure_headers))
        .merge(web.routes())
}

/// The session of the request and the user it speaks for, or the page to answer instead:
/// how to sign in, or (a session that is not a user's) a refusal.
fn signed_user(pages: &Pages, request: &Parts) -> Result<(Signed, UserId), web::Instead> {
    // Only a page is opened again from here; a form's post is not repeated.
    let uri = &request.uri;
    let page =
        (request.method == Method::GET).then(|| uri.path_and_query().map_or("/", |p| p.as_str()));
    let signed = pages.web.require(&request.headers, page)?;
    match &signed.session.grant {
        // A user's session may do what the user's own API token may (`api_access`: the
        // `/users/{user}/...` routes of that user, and only those): every page acts as them.
        Grant::User(user) => {
            let user = UserId::new(user.clone());
            Ok((signed, user))
        }
        other => {
            let csrf = signed.csrf();
            Err(web::message(
                StatusCode::FORBIDDEN,
                "Refused",
                &format!("These pages are a user's worklist, and this session is for {other}."),
                Some(web::bar(&signed, &csrf)),
            )
            .into())
        }
    }
}

/// A page for a signed-in user: `body` in the layout with the user's bar.
fn signed_page(status: StatusCode, signed: &Signed, title: &str, body: &maud::Markup) -> Response {
    let csrf = signed.csrf();
    web::html(
        status,
        web::layout(title, Some(web::bar(signed, &csrf)), body),
    )
}

/// The node could not answer (it is stopping), or the user's worklist is not here.
fn trouble(signed: &Signed, status: StatusCode, why: &str) -> Response {
    let csrf = signed.csrf();
    web::message(status, "Not available", why, Some(web::bar(signed, &csrf)))
}

/// Which page of the worklist a request asks for; a value that cannot be read is taken as
/// none (the first page, arrival order, the default size).
#[derive(Deserialize)]
struct PageQuery {
    #[serde(default)]
    order: Option<String>,
    #[serde(default)]
    page: Option<String>,
    #[serde(default)]
    limit: Option<String>,
}

impl PageQuery {
    fn shown(&self) -> view::Shown {
        let order = self
            .order
            .as_deref()
            .and_then(Order::parse)
            .unwrap_or_default();
        let number = |v: &Option<String>| v.as_deref().and_then(|v| v.parse().ok());
        view::Shown::new(order, number(&self.page), number(&self.limit))
    }
}

async fn worklist(
    State(pages): State<Pages>,
    parts: Parts,
    Query(q): Query<PageQuery>,
) -> Response {
    let (signed, user) = match signed_user(&pages, &parts) {
        Ok(signed) => signed,
        Err(page) => return page.into_response(),
    };
    worklist_shown(&pages, &signed, &user, q.shown(), None, StatusCode::OK).await
}

/// The worklist page `shown` of `user`, with its link and what a Disconnect or Reconnect
/// just came to (`told`), answered with `status`.
async fn worklist_shown(
    pages: &Pages,
    signed: &Signed,
    user: &UserId,
    shown: view::Shown,
    told: Option<&link_view::Told>,
    status: StatusCode,
) -> Response {
    let list = pages
        .client
        .user_worklist_page(user.clone(), shown.order, shown.window())
        .await;
    let list = match answered(signed, list) {
        Ok(list) => list,
        Err(page) => return *page,
    };
    let link = match link::link_of(pages, signed, user).await {
        Ok(link) => link,
        Err(page) => return *page,
    };
    let now = mobiwf_runtime::process::now_ms();
    let link = link_view::link_section(&link, &signed.csrf(), told);
    let body = view::worklist_page(user.as_str(), &list, shown, now, &link);
    signed_page(status, signed, "Worklist", &body)
}

/// What the node answered about a user, or the page saying why not: the user's worklist is
/// not here (403), or the node could not answer (503).
fn answered<T>(
    signed: &Signed,
    asked: anyhow::Result<Result<T, String>>,
) -> Result<T, Box<Response>> {
    match asked {
        Ok(Ok(answer)) => Ok(answer),
        Ok(Err(not_here)) => Err(Box::new(trouble(signed, StatusCode::FORBIDDEN, &not_here))),
        Err(e) => Err(Box::new(trouble(
            signed,
            StatusCode::SERVICE_UNAVAILABLE,
            &format!("{e:#}"),
        ))),
    }
}

async fn notices(State(pages): State<Pages>, parts: Parts) -> Response {
    let (signed, user) = match signed_user(&pages, &parts) {
        Ok(signed) => signed,
        Err(page) => return page.into_response(),
    };
    match pages.client.notices(user.clone()).await {
        Ok(Ok(notices)) => {
            let body = view::notices_page(user.as_str(), &notices);
            signed_page(StatusCode::OK, &signed, "Notices", &body)
        }
        Ok(Err(not_here)) => trouble(&signed, StatusCode::FORBIDDEN, &not_here),
        Err(e) => trouble(&signed, StatusCode::SERVICE_UNAVAILABLE, &format!("{e:#}")),
    }
}
