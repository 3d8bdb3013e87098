//! The people side of the node's HTTP API: the worklists and notices of the users whose
//! device this node is, and their actions on work items (*Synchronization and Disconnected
//! Operation in WorkToDo* (IC-03-006), Table 2).
//!
//! - `GET /users/{user}/worklist?order=arrival|priority|deadline|size&page=N&limit=M`: a page
//!   of the items offered to or held by the user (JSON array, paged as
//!   [`crate::api_paging`] says). 403 when the user's worklist is on another node.
//! - `POST /users/{user}/worklist/{instance}/{activity}/{action}` with action `select`,
//!   `release`, `lock`, `unlock`, `pause`, `resume`, `complete` (body `{"failed": bool,
//!   "detail": "..."}`) or `delegate` (body `{"to": "user"}`): 200 done; 202 sent to the item's
//!   host, which has not answered within [`CLAIM_ANSWER_WAIT`] (the answer will show in the
//!   worklist); 409 "no longer available" (someone else holds it, or it ended), or a pause or
//!   resume that does not apply now (the reason says what to do); 403 the user may not; 400 the
//!   action does not apply (e.g. lock without `<disconnected>`); 404 no such item here.
//! - `GET /users/{user}/notices`: what the user was told, oldest first.
//! - `GET /directory`: the version of the organisation directory this node holds, and the
//!   users whose device it is.

use std::time::Duration;

use axum::Json;
use axum::extract::{Path, Query, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use mobiwf_proto::{ActivityId, InstanceId, ItemAction, UserId, Verdict};
use percent_encoding::{NON_ALPHANUMERIC, utf8_percent_encode};
use serde::Deserialize;

use crate::api::{error, unavailable};
use crate::api_paging::PageParams;
use crate::daemon::{ClaimOutcome, NodeClient};

/// How long an API call waits for the host's answer to a claim before answering 202.
pub const CLAIM_ANSWER_WAIT: Duration = Duration::from_secs(10);

/// `?order=` of a worklist.
#[derive(Deserialize)]
pub(crate) struct OrderQuery {
    order: Option<String>,
}

pub(crate) async fn worklist(
    State(client): State<NodeClient>,
    Path(user): Path<String>,
    Query(q): Query<OrderQuery>,
    Query(paging): Query<PageParams>,
) -> Response {
    let order = q.order.unwrap_or_else(|| "arrival".to_owned());
    let Some(order) = mobiwf_people::desk::Order::parse(&order) else {
        return error(
            StatusCode::BAD_REQUEST,
            format!("unknown order '{order}': use arrival, priority, deadline or size"),
        );
    };
    let page = match paging.page() {
        Ok(page) => page,
        Err(refused) => return *refused,
    };
    let path = format!(
        "/users/{}/worklist",
        utf8_percent_encode(&user, NON_ALPHANUMERIC)
    );
    match client
        .user_worklist_page(UserId::new(user), order, page.window())
        .await
    {
        Ok(Ok(list)) => page.answer(&list.entries, list.total, &path, &format!("order={order}")),
        Ok(Err(not_here)) => error(StatusCode::FORBIDDEN, not_here),
        Err(e) => unavailable(e),
    }
}

pub(crate) async fn notices(
    State(client): State<NodeClient>,
    Path(user): Path<String>,
) -> Response {
    match client.notices(UserId::new(user)).await {
        Ok(Ok(notices)) => Json(notices).into_response(),
        Ok(Err(not_here)) => error(StatusCode::FORBIDDEN, not_here),
        Err(e) => unavailable(e),
    }
}

pub(crate) async fn directory(State(client): State<NodeClient>) -> Response {
    match client.directory().await {
        Ok(view) => Json(view).into_response(),
        Err(e) => unavailable(e),
    }
}

/// The body of a `complete` or `delegate`.
#[derive(Debug, Default, Deserialize)]
pub(crate) struct ActBody {
    #[serde(default)]
    failed: bool,
    #[serde(default)]
    detail: Option<String>,
    #[serde(default)]
    flag: Option<String>,
    #[serde(default)]
    to: Option<String>,
    /// Instance data values a completion sets, by name.
    #[serde(default)]
    set: std::collections::BTreeMap<String, String>,
    /// Instance data files a completion gives: each content, base64.
    #[serde(default)]
    files: std::collections::BTreeMap<String, String>,
}

pub(crate) async fn act(
    State(client): State<NodeClient>,
    Path((user, instance, activity, action)): Path<(String, u64, u64, String)>,
    body: axum::body::Bytes,
) -> Response {
    let action = match action_of(&action, &body, &client.files).await {
        Ok(action) => action,
        Err((status, message)) => return error(status, message),
    };
    let what = action.as_str();
    let (instance, activity) = (InstanceId(instance), ActivityId(activity));
    match act_on(
        &client,
        UserId::new(user.clone()),
        (instance, activity),
        action,
    )
    .await
    {
        Acted::Done => Json(serde_json::json!({
            "user": user, "instance": instance, "activity": activity, "action": what,
            "result": "done",
        }))
        .into_response(),
        Acted::Pending { request, message } => (
            StatusCode::ACCEPTED,
            Json(serde_json::json!({ "request": request, "message": message })),
        )
            .into_response(),
        Acted::Refused(status, reason) => error(status, reason),
    }
}

/// What a user's action on an item came to, as the API and the pages both tell it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Acted {
    /// Done.
    Done,
    /// Sent to the item's host, which has not answered within [`CLAIM_ANSWER_WAIT`]: its
    /// answer will show in the worklist.
    Pending {
        /// The desk's number for the claim.
        request: u64,
        /// What happened, in words.
        message: String,
    },
    /// Not done: 409 "no longer available" (someone else holds it, or it ended) or a pause or
    /// resume that does not apply now; 403 the user may not; 400 the action does not apply;
    /// 404 no such item here; 503 the node is stopping. The reason says what to do.
    Refused(StatusCode, String),
}

/// `user` does `action` on the item `(instance, activity)` through this node, their device:
/// the desk decides or sends it to the item's host, as [`NodeClient::claim`] does.
pub(crate) async fn act_on(
    client: &NodeClient,
    user: UserId,
    (instance, activity): (InstanceId, ActivityId),
    action: ItemAction,
) -> Acted {
    let what = action.as_str();
    match client.claim(user, instance, activity, action).await {
        Ok(ClaimOutcome::Answered(Verdict::Done)) => Acted::Done,
        Ok(ClaimOutcome::Answered(Verdict::Unavailable { reason })) => {
            Acted::Refused(StatusCode::CONFLICT, reason)
        }
        Ok(ClaimOutcome::Answered(Verdict::Forbidden { reason })) => {
            Acted::Refused(StatusCode::FORBIDDEN, reason)
        }
        // Pausing what is not ready or running, resuming what is not paused: not now.
        Ok(ClaimOutcome::Answered(Verdict::Invalid { reason }))
            if matches!(what, "pause" | "resume") =>
        {
            Acted::Refused(StatusCode::CONFLICT, reason)
        }
        Ok(ClaimOutcome::Answered(Verdict::Invalid { reason })) => {
            Acted::Refused(StatusCode::BAD_REQUEST, reason)
        }
        Ok(ClaimOutcome::Pending { request, host }) => Acted::Pending {
            request,
            message: format!(
                "{what} sent to the item's host {host}, which has not answered yet; its \
                 answer will show in the worklist"
            ),
        },
        Ok(ClaimOutcome::NotHere(reason)) => Acted::Refused(StatusCode::FORBIDDEN, reason),
        Ok(ClaimOutcome::UnknownItem(reason)) => Acted::Refused(StatusCode::NOT_FOUND, reason),
        Err(e) => Acted::Refused(StatusCode::SERVICE_UNAVAILABLE, format!("{e:#}")),
    }
}

/// The action a path word and body stand for, or the answer refusing them. No body, `null`
/// and `{}` all mean no details.
async fn action_of(
    action: &str,
    body: &[u8],
    files: &crate::files::Files,
) -> Result<ItemAction, (StatusCode, String)> {
    let body: ActBody = if body.iter().all(u8::is_ascii_whitespace) {
        ActBody::default()
    } else {
        serde_json::from_slice::<Option<ActBody>>(body)
            .map_err(|e| {
                (
                    StatusCode::BAD_REQUEST,
                    format!(
                        "the body must be JSON like {{\"failed\": false, \"detail\": \"...\"}} \
                         or {{\"to\": \"user\"}}: {e}"
                    ),
                )
            })?
            .unwrap_or_default()
    };
    let details = Details {
        failed: body.failed,
        detail: body.detail,
        flag: body.flag,
        to: body.to,
        written: Vec::new(),
    };
    if action != "complete" {
        return action_named(action, details);
    }
    let written = crate::api::written_off(files, body.set, body.files)
        .await
        .map_err(|why| (StatusCode::BAD_REQUEST, why))?;
    action_named(action, Details { written, ..details })
}

/// What a `complete` or `delegate` says beyond its word, whatever carried it (a JSON body, a
/// page's form).
#[derive(Debug, Default)]
pub(crate) struct Details {
    /// The work could not be done.
    pub(crate) failed: bool,
    /// Why, or what was done.
    pub(crate) detail: Option<String>,
    /// The completion flag.
    pub(crate) flag: Option<String>,
    /// Whom a delegation gives the item.
    pub(crate) to: Option<String>,
    /// The values and files (kept already) a completion sets.
    pub(crate) written: Vec<(String, mobiwf_proto::DataValue)>,
}

/// The action `word` names, with `details`; or the answer refusing it.
pub(crate) fn action_named(
    word: &str,
    details: Details,
) -> Result<ItemAction, (StatusCode, String)> {
    Ok(match word {
        "select" => ItemAction::Select,
        "release" => ItemAction::Release,
        "lock" => ItemAction::Lock,
        "unlock" => ItemAction::Unlock,
        "pause" => ItemAction::Pause,
        "resume" => ItemAction::Resume,
        "complete" => ItemAction::Complete {
            succeeded: !details.failed,
            detail: details.detail,
            flag: details.flag,
            data: mobiwf_proto::Written {
                values: details.written.into_iter().collect(),
                ..Default::default()
            },
        },
        "delegate" => match details.to {
            Some(to) => ItemAction::Delegate {
                to: UserId::new(to),
            },
            None => {
                return Err((
                    StatusCode::BAD_REQUEST,
                    "delegate needs the user who gets the item: {\"to\": \"user\"}".to_owned(),
                ));
            }
        },
        other => {
            return Err((
                StatusCode::NOT_FOUND,
                format!(
                    "no action '{other}': use select, release, lock, unlock, pause, resume, \
                     complete or delegate"
                ),
            ));
        }
    })
}
