//! The node's HTTP API: the worklist, completing manual work, partition runs, metrics.
//!
//! - `GET /worklist?page=N&limit=M`: manual and semi-automatic activities waiting for a person
//!   (a JSON array, paged as `api_paging` says).
//! - `POST /instances/{instance}/activities/{activity}/complete` with an optional JSON body
//!   `{"failed": bool, "detail": "..."}`: a person finishes one. 404 when the node has no such
//!   activity, 409 when it cannot be completed now (not running, or automatic).
//!   The body may also set instance data: `"set": {"reading": "42"}`, `"files": {"photo":
//!   "<base64>"}` (400 when a content is not base64 or over `MAX_FILE_BYTES`, a value is of
//!   the wrong type or one the activity does not write, or the flag is not one).
//! - `GET /instances/{instance}/data`: the instance data this node knows (JSON array).
//! - `GET /files/{sha256}`: the content of a data file this node holds (404 when not).
//! - `GET /runs`: every partition run on this node and each activity's state (JSON).
//! - `GET /metrics`: Prometheus text format.
//! - The users' worklists, notices and the directory version: see `api_people`.
//! - API tokens (`/api-tokens`): see `mobiwf_runtime::api_auth`; what each route needs:
//!   `api_access`.

use axum::Json;
use axum::Router;
use std::collections::BTreeMap;

use axum::extract::{DefaultBodyLimit, Path, Query, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use mobiwf_proto::DataValue;
use mobiwf_proto::data::MAX_FILE_BYTES;
use mobiwf_proto::{ActivityId, InstanceId};
use serde::Deserialize;

use crate::daemon::{MAX_RUNS_PAGE, NodeClient, PersonEnd, RunsWanted};
use mobiwf_engine::{Finish, Refusal};

/// The body of a completion.
#[derive(Debug, Default, Deserialize, serde::Serialize)]
pub struct Completion {
    /// True when the work could not be done.
    #[serde(default)]
    pub failed: bool,
    /// Why, in the person's words.
    #[serde(default)]
    pub detail: Option<String>,
    /// The completion flag chosen (routes and `<merge flag>` read it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub flag: Option<String>,
    /// Instance data values the person sets (`--set name=value`), by name.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub set: BTreeMap<String, String>,
    /// Instance data files the person gives (`--file name=PATH`): each content, base64.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub files: BTreeMap<String, String>,
}

/// The largest body of a completion, in bytes: room for a file of `MAX_FILE_BYTES` in base64.
pub const MAX_COMPLETION_BODY_BYTES: usize = (MAX_FILE_BYTES as usize / 3 + 1) * 4 + 64 * 1024;

/// [`written`], off the async workers (decoding and keeping a file is disk work).
pub(crate) async fn written_off(
    files: &crate::files::Files,
    set: BTreeMap<String, String>,
    contents: BTreeMap<String, String>,
) -> Result<Vec<(String, DataValue)>, String> {
    if contents.is_empty() {
        return written(files, set, contents);
    }
    let files = files.clone();
    tokio::task::spawn_blocking(move || written(&files, set, contents))
        .await
        .unwrap_or_else(|e| Err(format!("keeping the files stopped: {e}")))
}

/// What a completion sets, with its files (base64) kept in the file store; or what is wrong.
pub(crate) fn written(
    files: &crate::files::Files,
    set: BTreeMap<String, String>,
    contents: BTreeMap<String, String>,
) -> Result<Vec<(String, DataValue)>, String> {
    let mut raw = Vec::with_capacity(contents.len());
    for (name, base64) in contents {
        let bytes = STANDARD
            .decode(base64.as_bytes())
            .map_err(|e| format!("the content of file `{name}` is not base64: {e}"))?;
        raw.push((name, bytes));
    }
    kept(files, set, raw)
}

/// [`kept`], off the async workers (keeping a file is disk work).
pub(crate) async fn kept_off(
    files: &crate::files::Files,
    set: BTreeMap<String, String>,
    contents: Vec<(String, Vec<u8>)>,
) -> Result<Vec<(String, DataValue)>, String> {
    let files = files.clone();
    tokio::task::spawn_blocking(move || kept(&files, set, contents))
        .await
        .unwrap_or_else(|e| Err(format!("keeping the files stopped: {e}")))
}

/// What a completion sets: its values as given, its files' contents kept in the file store
/// (each at most `MAX_FILE_BYTES`); or what is wrong.
pub(crate) fn kept(
    files: &crate::files::Files,
    set: BTreeMap<String, String>,
    contents: Vec<(String, Vec<u8>)>,
) -> Result<Vec<(String, DataValue)>, String> {
    let mut out: Vec<(String, DataValue)> = set
        .into_iter()
        .map(|(name, value)| (name, DataValue::String(value)))
        .collect();
    for (name, bytes) in contents {
        if bytes.len() as u64 > MAX_FILE_BYTES {
            return Err(format!(
                "file `{name}` holds {} bytes, over the limit of {MAX_FILE_BYTES} (MAX_FILE_BYTES)",
                bytes.len()
            ));
        }
        out.push((name, DataValue::File(files.put_bytes(&bytes)?)));
    }
    Ok(out)
}

/// The routes above, on `client`.
pub fn router(client: NodeClient) -> Router {
    Router::new()
        .route("/worklist", get(worklist))
        .route("/runs", get(runs))
        .route(
            "/instances/{instance}/activities/{activity}/complete",
            post(complete).layer(DefaultBodyLimit::max(MAX_COMPLETION_BODY_BYTES)),
        )
        .route("/instances/{instance}/data", get(data))
        .route("/files/{sha256}", get(file))
        .route("/metrics", get(metrics))
        .route("/users/{user}/worklist", get(crate::api_people::worklist))
        .route(
            "/users/{user}/worklist/{instance}/{activity}/{action}",
            post(crate::api_people::act).layer(DefaultBodyLimit::max(MAX_COMPLETION_BODY_BYTES)),
        )
        .route("/users/{user}/notices", get(crate::api_people::notices))
        .route("/directory", get(crate::api_people::directory))
        .route(
            "/users/{user}/disconnect",
            post(crate::api_offline::disconnect),
        )
        .route(
            "/users/{user}/reconnect",
            post(crate::api_offline::reconnect),
        )
        .with_state(client)
}

/// An error answer: `{"error": message}` with `status`.
pub(crate) fn error(status: StatusCode, message: String) -> Response {
    (status, Json(serde_json::json!({ "error": message }))).into_response()
}

/// The daemon could not be asked (it is stopping): 503.
pub(crate) fn unavailable(e: anyhow::Error) -> Response {
    error(StatusCode::SERVICE_UNAVAILABLE, format!("{e:#}"))
}

async fn worklist(
    State(client): State<NodeClient>,
    Query(paging): Query<crate::api_paging::PageParams>,
) -> Response {
    let page = match paging.page() {
        Ok(page) => page,
        Err(refused) => return *refused,
    };
    match client.worklist().await {
        Ok(items) => page.answer(page.slice(&items), items.len(), "/worklist", ""),
        Err(e) => unavailable(e),
    }
}

/// The query of `GET /runs`: `instance` (only its runs), `after` (instances numbered above it:
/// the `next` of the page before), `limit` (at most `MAX_RUNS_PAGE`, the default).
#[derive(Debug, Deserialize)]
struct RunsQuery {
    instance: Option<u64>,
    after: Option<u64>,
    limit: Option<usize>,
}

async fn runs(State(client): State<NodeClient>, Query(q): Query<RunsQuery>) -> Response {
    if q.limit == Some(0) || q.limit.is_some_and(|l| l > MAX_RUNS_PAGE) {
        let why = format!("limit must be 1 to {MAX_RUNS_PAGE}");
        return error(StatusCode::BAD_REQUEST, why);
    }
    let wanted = RunsWanted {
        instance: q.instance.map(InstanceId),
        after: q.after.map(InstanceId),
        limit: q.limit,
    };
    match client.runs(wanted).await {
        Ok(page) => Json(page).into_response(),
        Err(e) => unavailable(e),
    }
}

async fn complete(
    State(client): State<NodeClient>,
    Path((instance, activity)): Path<(u64, u64)>,
    body: Option<Json<Completion>>,
) -> Response {
    let Completion {
        failed,
        detail,
        flag,
        set,
        files,
    } = body.map(|Json(b)| b).unwrap_or_default();
    let written = match written_off(&client.files, set, files).await {
        Ok(written) => written,
        Err(why) => return error(StatusCode::BAD_REQUEST, why),
    };
    let (instance, activity) = (InstanceId(instance), ActivityId(activity));
    if failed {
        // A failure has no completion flag: a well-formed one is ignored, as ever, and a
        // malformed one refused as the engine refuses it on a success.
        if let Some(reason) = flag.as_deref().and_then(mobiwf_xml_schema::flag_problem) {
            let refusal = Refusal::InvalidCompletion {
                instance,
                activity,
                reason,
            };
            return error(StatusCode::BAD_REQUEST, refusal.to_string());
        }
    }
    let finish = Finish::of(!failed, detail, flag);
    let end = PersonEnd {
        instance,
        activity,
        finish,
        written,
    };
    match client.complete(end).await {
        Ok(Ok(())) => {
            Json(serde_json::json!({ "instance": instance, "activity": activity })).into_response()
        }
        Ok(Err(refusal @ Refusal::UnknownActivity { .. })) => {
            error(StatusCode::NOT_FOUND, refusal.to_string())
        }
        Ok(Err(refusal @ Refusal::InvalidCompletion { .. })) => {
            error(StatusCode::BAD_REQUEST, refusal.to_string())
        }
        Ok(Err(refusal)) => error(StatusCode::CONFLICT, refusal.to_string()),
        Err(e) => unavailable(e),
    }
}

async fn data(State(client): State<NodeClient>, Path(instance): Path<u64>) -> Response {
    match client.data(InstanceId(instance)).await {
        Ok(data) => Json(data).into_response(),
        Err(e) => unavailable(e),
    }
}

async fn file(State(client): State<NodeClient>, Path(sha256): Path<String>) -> Response {
    let wanted = mobiwf_proto::FileRef { sha256, size: 0 };
    if let Some(problem) = wanted.problem() {
        return error(StatusCode::BAD_REQUEST, problem);
    }
    match std::fs::read(client.files.path(&wanted)) {
        Ok(bytes) => (
            [(axum::http::header::CONTENT_TYPE, "application/octet-stream")],
            bytes,
        )
            .into_response(),
        Err(_) => error(
            StatusCode::NOT_FOUND,
            format!("file {} is not held on this node", wanted.sha256),
        ),
    }
}

async fn metrics(State(client): State<NodeClient>) -> Response {
    (
        [(
            axum::http::header::CONTENT_TYPE,
            "application/openmetrics-text; version=1.0.0; charset=utf-8",
        )],
        client.metrics.encode(),
    )
        .into_response()
}
