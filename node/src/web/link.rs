//! Disconnecting and reconnecting from the worklist page, and its link kept current: the
//! Disconnect and Reconnect forms call the very operations of the node's API
//! (`api_offline::disconnect`, `api_offline::reconnect`, as `mobiwf-node disconnect` and
//! `reconnect` do over HTTP), and the page shows their answers in words (`link_view`), with
//! the API's status: a refusal (a selected item held, a copy that does not fit the wait or the
//! disk) is the worklist again with why, never an error page. `GET /link` is the link's state
//! alone, which the page's script fetches again every `LINK_REFRESH_MS`.

use axum::Json;
use axum::extract::{Form, Path, State};
use axum::http::StatusCode;
use axum::http::request::Parts;
use axum::response::{IntoResponse, Response};
use mobiwf_people::Order;
use mobiwf_proto::UserId;
use mobiwf_runtime::web::Signed;
use serde::Deserialize;
use serde_json::Value;

use super::link_view::{self, DEFAULT_MAX_WAIT_SECS, LinkView, Told};
use super::{Pages, answered, signed_user, worklist_shown};
use crate::api_offline::{self, DisconnectBody};

/// The most of an API answer the page reads (its JSON is a few names and numbers).
const MAX_ANSWER_BYTES: usize = 256 * 1024;

/// The link of `user` as the page shows it, or the page saying why not.
pub(super) async fn link_of(
    pages: &Pages,
    signed: &Signed,
    user: &UserId,
) -> Result<LinkView, Box<Response>> {
    let link = answered(signed, pages.client.link(user.clone()).await)?;
    Ok(link_view::link_view(&link))
}

/// `GET /link`: the link's state, the markup the page replaces its own with.
pub(super) async fn state(State(pages): State<Pages>, parts: Parts) -> Response {
    let (signed, user) = match signed_user(&pages, &parts) {
        Ok(signed) => signed,
        Err(page) => return page.into_response(),
    };
    match link_of(&pages, &signed, &user).await {
        Ok(view) => mobiwf_runtime::web::html(StatusCode::OK, link_view::link_state(&view)),
        Err(page) => *page,
    }
}

/// The Disconnect form: the CSRF token, the longest wait for the copy, and whether the user
/// accepts whatever it takes.
#[derive(Deserialize)]
pub(super) struct DisconnectForm {
    #[serde(default)]
    csrf: Option<String>,
    #[serde(default)]
    max_wait_secs: Option<String>,
    #[serde(default)]
    accept: Option<String>,
}

/// `POST /disconnect`: the user's locked items copied onto this device, then the user away.
pub(super) async fn disconnect(
    State(pages): State<Pages>,
    parts: Parts,
    Form(form): Form<DisconnectForm>,
) -> Response {
    let (signed, user) = match signed_user(&pages, &parts) {
        Ok(signed) => signed,
        Err(page) => return page.into_response(),
    };
    if let Some(refused) = pages.web.csrf_refusal(&signed, form.csrf.as_deref()) {
        return refused;
    }
    let given = form.max_wait_secs.as_deref().map(str::trim);
    let max_wait_secs = match given.filter(|g| !g.is_empty()) {
        None => DEFAULT_MAX_WAIT_SECS,
        Some(text) => {
            if let Ok(secs) = text.parse::<u64>() {
                secs
            } else {
                let told = Told::Refused(format!(
                    "Not disconnected: the wait {text:?} is not a whole number of seconds."
                ));
                return worklist_told(&pages, &signed, &user, &told, StatusCode::BAD_REQUEST).await;
            }
        }
    };
    let body = DisconnectBody {
        max_wait_secs,
        accept: form.accept.is_some(),
    };
    let answer = api_offline::disconnect(
        State(pages.client.clone()),
        Path(user.as_str().to_owned()),
        Json(body),
    )
    .await;
    let (status, value) = read(answer).await;
    let told = link_view::disconnect_told(status.as_u16(), &value);
    worklist_told(&pages, &signed, &user, &told, status).await
}

/// The Reconnect form: the CSRF token.
#[derive(Deserialize)]
pub(super) struct ReconnectForm {
    #[serde(default)]
    csrf: Option<String>,
}

/// `POST /reconnect`: the user back; what they did while away goes on to the hosts.
pub(super) async fn reconnect(
    State(pages): State<Pages>,
    parts: Parts,
    Form(form): Form<ReconnectForm>,
) -> Response {
    let (signed, user) = match signed_user(&pages, &parts) {
        Ok(signed) => signed,
        Err(page) => return page.into_response(),
    };
    if let Some(refused) = pages.web.csrf_refusal(&signed, form.csrf.as_deref()) {
        return refused;
    }
    // What waits before the user comes back: the answer tells it.
    let before = match link_of(&pages, &signed, &user).await {
        Ok(view) => view,
        Err(page) => return *page,
    };
    let answer =
        api_offline::reconnect(State(pages.client.clone()), Path(user.as_str().to_owned())).await;
    let (status, value) = read(answer).await;
    let told = link_view::reconnect_told(status.as_u16(), &value, &before);
    worklist_told(&pages, &signed, &user, &told, status).await
}

/// The worklist, with `told`, answered with the API's `status`.
async fn worklist_told(
    pages: &Pages,
    signed: &Signed,
    user: &UserId,
    told: &Told,
    status: StatusCode,
) -> Response {
    let first = super::view::Shown::first(Order::default());
    worklist_shown(pages, signed, user, first, Some(told), status).await
}

/// An API answer's status and JSON body (`null` when it has none).
async fn read(answer: Response) -> (StatusCode, Value) {
    let status = answer.status();
    let bytes = axum::body::to_bytes(answer.into_body(), MAX_ANSWER_BYTES)
        .await
        .unwrap_or_default();
    (
        status,
        serde_json::from_slice(&bytes).unwrap_or(Value::Null),
    )
}
