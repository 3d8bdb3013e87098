//! The controller's HTTP API for operators (JSON; documented in `docs/http-api.md`).
//!
//! - `POST /instances?source=NAME` with a workflow definition (MobiWfMS XML, PDL or BPMN) as
//!   the body, and the instance's inputs as `data.NAME=VALUE` parameters: 201
//!   `{"instance": ID}`; 400 with the document's problems (`NAME:line:col: error: ...`) or the
//!   inputs' (each, then what the definition expects); 403 when the document has a creator
//!   role the token's user does not hold (checked as a start's is); 409 when no registered
//!   node can run it; 413 above `MAX_DOCUMENT_BYTES`, or less for a book kept in etcd
//!   (`ControllerClient::largest_document`; the refusal says the limit and why); 429 with
//!   `Retry-After` when too many instances are under way (`crate::api_admission`: nothing is
//!   stored).
//! - `GET /instances?state=S&workflow=W&since=MS&definition=NAME&limit=N&after=ID`: a page of
//!   instance summaries by id, `{instances, next}` (`crate::listing`: `next` is the `after` of
//!   the next page, null at the end); 400 for an unknown state or a limit out of range.
//! - `GET /instances/{id}`: one instance with its partitions and activities; 404 if unknown.
//! - `GET /instances/{id}/wait?timeout=SECS`: the same, once the instance is settled (final,
//!   and its compensations, if any, over) or after
//!   `timeout` seconds (at most [`MAX_WAIT_SECS`]), whichever comes first.
//! - `POST /instances/{id}/interrupt`, `/resume`, `/cancel`: an operator's control (every
//!   partner of the instance is told); 200 with the instance afterwards, 404 if unknown, 409
//!   with `{"error": ...}` when it does not apply (e.g. interrupting a finished instance).
//! - `POST /instances/{id}/activities/{activity}/rerun`: an operator reruns a failed activity
//!   of a failed instance (forward recovery); 200 with the instance afterwards, 404 if
//!   unknown, 409 with `{"error": ...}` saying why not.
//! - `POST /instances/{id}/activities/{activity}/pause?kill=true|false` and `.../resume`: an
//!   operator asks the activity's node to pause it (`kill`: its running command is killed and
//!   runs again, as a new try, when resumed) or to resume it; 200 with the instance as the
//!   controller knows it (the activity shows `paused` once its node says so; a refusal of the
//!   node is in the history), 404 if unknown, 409 with `{"error": ...}` when the controller
//!   knows it does not apply (the instance is over, the activity ended, is not paused).
//! - `GET /instances/{id}/history`: the instance's events in the order the controller learnt
//!   them (`[{at_ms, activity, partner, what}]`); 404 if unknown.
//! - `GET /instances/{id}/graph?format=svg|dot`: the instance's graph (`mobiwf_graph`: a lane
//!   per partner, its activities coloured by state), as SVG (`image/svg+xml`, the default) or
//!   Graphviz DOT (`text/vnd.graphviz`); 400 for another format, 404 if unknown.
//! - `GET /nodes`: the registered nodes (with `suspected`, the reason, while suspected).
//! - The organisation directory and work item administration: see `api_people`.
//! - Join tokens, the allow list and removing nodes: see `api_enrol`.
//! - The deployed definitions and starting instances of them by name: see `api_definitions`.
//! - API tokens (`/api-tokens`): see `mobiwf_runtime::api_auth`; what each route needs:
//!   `api_access`.
//! - `GET /metrics`: Prometheus text format.

use std::time::Duration;

use axum::Json;
use axum::Router;
use axum::extract::{Path, Query, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use mobiwf_proto::{Control, InstanceId, PauseAction};
use serde::Deserialize;

use mobiwf_book::BookError;

use crate::daemon::ControllerClient;
use crate::listing;
use crate::render::ShownEvent;

/// The longest one wait request holds the connection; clients wait longer by asking again.
pub const MAX_WAIT_SECS: u64 = 300;

/// The routes above, on `client`.
pub fn router(client: ControllerClient) -> Router {
    let limit = client.largest_document();
    let routes = Router::new()
        .route("/instances", get(list).post(submit))
        .route("/instances/{id}", get(instance))
        .route("/instances/{id}/wait", get(wait))
        .route("/instances/{id}/history", get(history))
        .route("/instances/{id}/graph", get(graph))
        .route("/instances/{id}/data", get(data))
        .route("/instances/{id}/interrupt", post(interrupt))
        .route("/instances/{id}/resume", post(resume))
        .route("/instances/{id}/cancel", post(cancel))
        .route("/instances/{id}/activities/{activity}/rerun", post(rerun))
        .route("/instances/{id}/activities/{activity}/pause", post(pause))
        .route(
            "/instances/{id}/activities/{activity}/resume",
            post(resume_activity),
        )
        .route("/nodes", get(nodes))
        .route(
            "/org",
            get(crate::api_people::show).put(crate::api_people::apply),
        )
        .route(
            "/instances/{id}/activities/{activity}/worklist",
            post(crate::api_people::administer),
        )
        .route("/metrics", get(metrics))
        .merge(crate::api_enrol::routes())
        .merge(crate::api_definitions::routes())
        .merge(crate::api_sync::routes());
    crate::body_limit::hold_to(routes, limit).with_state(client)
}

/// The instance data, as the nodes running the instance know it (`crate::data`).
async fn data(State(client): State<ControllerClient>, Path(id): Path<u64>) -> Response {
    let inst = match client.instance(InstanceId(id)).await {
        Ok(Some(inst)) => inst,
        Ok(None) => return error(StatusCode::NOT_FOUND, format!("no instance {id}")),
        Err(e) => return unavailable(e),
    };
    let nodes = match client.nodes().await {
        Ok(nodes) => nodes,
        Err(e) => return unavailable(e),
    };
    Json(crate::data::read(&client.mesh, &inst, &nodes).await).into_response()
}

/// An error answer: `{"error": message}` with `status`.
pub(crate) fn error(status: StatusCode, message: String) -> Response {
    (status, Json(serde_json::json!({ "error": message }))).into_response()
}

/// The daemon could not be asked (it is stopping): 503.
pub(crate) fn unavailable(e: anyhow::Error) -> Response {
    error(StatusCode::SERVICE_UNAVAILABLE, format!("{e:#}"))
}

/// `POST /instances?source=NAME&responsible=U&data.NAME=VALUE...`: the query's pairs in their
/// order, so that the inputs (`crate::inputs`) may be any names.
async fn submit(
    State(client): State<ControllerClient>,
    Query(q): Query<Vec<(String, String)>>,
    caller: Option<axum::Extension<mobiwf_runtime::api_auth::Caller>>,
    body: axum::body::Bytes,
) -> Response {
    let first = |key: &str| q.iter().find(|(k, _)| k == key).map(|(_, v)| v.clone());
    let source = first("source").unwrap_or_else(|| "submitted workflow".to_owned());
    let inputs = match crate::inputs::from_query(&q) {
        Ok(inputs) => inputs,
        Err(e) => return error(StatusCode::BAD_REQUEST, e),
    };
    let start = mobiwf_book::StartWith {
        responsible: first("responsible").map(mobiwf_proto::UserId::new),
        inputs,
    };
    let starter = crate::api_definitions::starter(caller);
    let permit = match client.admission.admit() {
        Ok(permit) => permit,
        Err(shed) => return crate::api_admission::too_many(&shed),
    };
    match client
        .submit_as(body.to_vec(), source, start, starter)
        .await
    {
        Ok(Ok(id)) => {
            permit.stored(id);
            (
                StatusCode::CREATED,
                Json(serde_json::json!({ "instance": id })),
            )
                .into_response()
        }
        Ok(Err(e)) => crate::api_definitions::refused(&e),
        Err(e) => unavailable(e),
    }
}

#[derive(Deserialize)]
struct ListQuery {
    state: Option<String>,
    workflow: Option<String>,
    since: Option<u64>,
    limit: Option<usize>,
    after: Option<u64>,
    definition: Option<String>,
}

async fn list(State(client): State<ControllerClient>, Query(q): Query<ListQuery>) -> Response {
    let state = match q.state.as_deref().map(listing::parse_state).transpose() {
        Ok(state) => state,
        Err(e) => return error(StatusCode::BAD_REQUEST, e),
    };
    let limit = q.limit.unwrap_or(listing::DEFAULT_PAGE);
    if limit == 0 || limit > listing::MAX_PAGE {
        return error(
            StatusCode::BAD_REQUEST,
            format!(
                "limit {limit} is out of range: ask for 1 to {} instances a page (default {})",
                listing::MAX_PAGE,
                listing::DEFAULT_PAGE
            ),
        );
    }
    let filter = listing::Filter {
        state,
        workflow: q.workflow,
        since_ms: q.since,
        definition: q.definition,
    };
    match client
        .instances(filter, q.after.map(InstanceId), limit)
        .await
    {
        Ok(page) => Json(page).into_response(),
        Err(e) => error(
            StatusCode::INTERNAL_SERVER_ERROR,
            format!("cannot read the instance list: {e:#}"),
        ),
    }
}

async fn instance(State(client): State<ControllerClient>, Path(id): Path<u64>) -> Response {
    match client.instance(InstanceId(id)).await {
        Ok(Some(inst)) => Json(inst).into_response(),
        Ok(None) => error(StatusCode::NOT_FOUND, format!("no instance {id}")),
        Err(e) => unavailable(e),
    }
}

#[derive(Deserialize)]
struct WaitQuery {
    timeout: Option<u64>,
}

async fn wait(
    State(client): State<ControllerClient>,
    Path(id): Path<u64>,
    Query(q): Query<WaitQuery>,
) -> Response {
    let secs = q.timeout.unwrap_or(MAX_WAIT_SECS).min(MAX_WAIT_SECS);
    let deadline = tokio::time::Instant::now() + Duration::from_secs(secs);
    match client.wait(InstanceId(id), deadline).await {
        Ok(Some(inst)) => Json(inst).into_response(),
        Ok(None) => error(StatusCode::NOT_FOUND, format!("no instance {id}")),
        Err(e) => unavailable(e),
    }
}

async fn history(State(client): State<ControllerClient>, Path(id): Path<u64>) -> Response {
    match client.history(InstanceId(id)).await {
        Ok(Some(events)) => {
            let shown: Vec<ShownEvent> = events.iter().map(ShownEvent::from).collect();
            Json(shown).into_response()
        }
        Ok(None) => error(StatusCode::NOT_FOUND, format!("no instance {id}")),
        Err(e) => unavailable(e),
    }
}

#[derive(Deserialize)]
struct GraphQuery {
    format: Option<String>,
}

async fn graph(
    State(client): State<ControllerClient>,
    Path(id): Path<u64>,
    Query(q): Query<GraphQuery>,
) -> Response {
    let format = match mobiwf_graph::Format::parse(q.format.as_deref().unwrap_or("svg")) {
        Ok(format) => format,
        Err(e) => return error(StatusCode::BAD_REQUEST, e),
    };
    match client.graph(InstanceId(id), format).await {
        Ok(Some(drawn)) => (
            [(axum::http::header::CONTENT_TYPE, format.media_type())],
            drawn,
        )
            .into_response(),
        Ok(None) => error(StatusCode::NOT_FOUND, format!("no instance {id}")),
        Err(e) => unavailable(e),
    }
}

async fn interrupt(State(client): State<ControllerClient>, Path(id): Path<u64>) -> Response {
    control(client, id, Control::Interrupt).await
}

async fn resume(State(client): State<ControllerClient>, Path(id): Path<u64>) -> Response {
    control(client, id, Control::Resume).await
}

async fn cancel(State(client): State<ControllerClient>, Path(id): Path<u64>) -> Response {
    control(client, id, Control::Cancel).await
}

/// An operator's control: the instance afterwards, 404 unknown, 409 not applicable now.
async fn control(client: ControllerClient, id: u64, action: Control) -> Response {
    match controlled(&client, id, action).await {
        Ok(inst) => Json(inst).into_response(),
        Err((status, message)) => error(status, message),
    }
}

/// An operator's control, as the API and the console do it: the instance afterwards, or the
/// status and words of the refusal (404 unknown, 409 not applicable now, 503 stopping).
pub(crate) async fn controlled(
    client: &ControllerClient,
    id: u64,
    action: Control,
) -> Result<mobiwf_book::Instance, (StatusCode, String)> {
    match client.control(InstanceId(id), action).await {
        Ok(Ok(inst)) => Ok(inst),
        Ok(Err(e @ BookError::UnknownInstance(_))) => Err((StatusCode::NOT_FOUND, e.to_string())),
        Ok(Err(e)) => Err((StatusCode::CONFLICT, e.to_string())),
        Err(e) => Err((StatusCode::SERVICE_UNAVAILABLE, format!("{e:#}"))),
    }
}

/// `?kill=true` of a pause.
#[derive(Deserialize, Default)]
struct PauseQuery {
    #[serde(default)]
    kill: bool,
}

/// An operator pauses an activity: the instance afterwards (its node says when it is
/// paused), 404 unknown, 409 not applicable now.
async fn pause(
    State(client): State<ControllerClient>,
    caller: Option<axum::Extension<mobiwf_runtime::api_auth::Caller>>,
    Path((id, activity)): Path<(u64, u64)>,
    Query(q): Query<PauseQuery>,
) -> Response {
    let action = PauseAction::Pause { kill: q.kill };
    pause_or_resume(client, caller, (id, activity), action).await
}

/// An operator resumes a paused activity: as [`pause`].
async fn resume_activity(
    State(client): State<ControllerClient>,
    caller: Option<axum::Extension<mobiwf_runtime::api_auth::Caller>>,
    Path((id, activity)): Path<(u64, u64)>,
) -> Response {
    pause_or_resume(client, caller, (id, activity), PauseAction::Resume).await
}

async fn pause_or_resume(
    client: ControllerClient,
    caller: Option<axum::Extension<mobiwf_runtime::api_auth::Caller>>,
    (id, activity): (u64, u64),
    action: PauseAction,
) -> Response {
    let by = operator_name(caller);
    let activity = mobiwf_proto::ActivityId(activity);
    match client.pause(InstanceId(id), activity, action, by).await {
        Ok(Ok(inst)) => Json(inst).into_response(),
        Ok(Err(e @ BookError::UnknownInstance(_))) => error(StatusCode::NOT_FOUND, e.to_string()),
        Ok(Err(e)) => error(StatusCode::CONFLICT, e.to_string()),
        Err(e) => unavailable(e),
    }
}

/// Who an operator is, for the history: the user their token speaks for, else the token's
/// id; `operator` when the API checks no tokens.
fn operator_name(caller: Option<axum::Extension<mobiwf_runtime::api_auth::Caller>>) -> String {
    match caller {
        Some(axum::Extension(mobiwf_runtime::api_auth::Caller::Token {
            user: Some(user), ..
        })) => user,
        Some(axum::Extension(mobiwf_runtime::api_auth::Caller::Token { id, .. })) => {
            format!("token {id}")
        }
        _ => "operator".to_owned(),
    }
}

/// An operator's rerun: the instance afterwards, 404 unknown, 409 not applicable now.
async fn rerun(
    State(client): State<ControllerClient>,
    Path((id, activity)): Path<(u64, u64)>,
) -> Response {
    let activity = mobiwf_proto::ActivityId(activity);
    match client.rerun(InstanceId(id), activity).await {
        Ok(Ok(inst)) => Json(inst).into_response(),
        Ok(Err(e @ BookError::UnknownInstance(_))) => error(StatusCode::NOT_FOUND, e.to_string()),
        Ok(Err(e)) => error(StatusCode::CONFLICT, e.to_string()),
        Err(e) => unavailable(e),
    }
}

async fn nodes(State(client): State<ControllerClient>) -> Response {
    match client.nodes().await {
        Ok(nodes) => Json(nodes).into_response(),
        Err(e) => unavailable(e),
    }
}

async fn metrics(State(client): State<ControllerClient>) -> Response {
    (
        [(
            axum::http::header::CONTENT_TYPE,
            "application/openmetrics-text; version=1.0.0; charset=utf-8",
        )],
        client.metrics.encode(),
    )
        .into_response()
}
