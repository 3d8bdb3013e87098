//! The node's HTTP API: the worklist, completing manual work, partition runs, metrics.
//!
//! - `GET /worklist`: manual and semi-automatic activities waiting for a person (JSON array).
//! - `POST /instances/{instance}/activities/{activity}/complete` with an optional JSON body
//!   `{"failed": bool, "detail": "..."}`: a person finishes one. 404 when the node has no such
//!   activity, 409 when it cannot be completed now (not running, or automatic).
//! - `GET /runs`: every partition run on this node and each activity's state (JSON).
//! - `GET /metrics`: Prometheus text format.
//! - The users' worklists, notices and the directory version: see `api_people`.

use axum::Json;
use axum::Router;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use mobiwf_proto::{ActivityId, InstanceId};
use serde::Deserialize;

use crate::daemon::{NodeClient, PersonEnd};
use mobiwf_engine::Refusal;

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
}

/// The routes above, on `client`.
pub fn router(client: NodeClient) -> Router {
    Router::new()
        .route("/worklist", get(worklist))
        .route("/runs", get(runs))
        .route(
            "/instances/{instance}/activities/{activity}/complete",
            post(complete),
        )
        .route("/metrics", get(metrics))
        .route("/users/{user}/worklist", get(crate::api_people::worklist))
        .route(
            "/users/{user}/worklist/{instance}/{activity}/{action}",
            post(crate::api_people::act),
        )
        .route("/users/{user}/notices", get(crate::api_people::notices))
        .route("/directory", get(crate::api_people::directory))
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

async fn worklist(State(client): State<NodeClient>) -> Response {
    match client.worklist().await {
        Ok(items) => Json(items).into_response(),
        Err(e) => unavailable(e),
    }
}

async fn runs(State(client): State<NodeClient>) -> Response {
    match client.runs().await {
        Ok(runs) => Json(runs).into_response(),
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
    } = body.map(|Json(b)| b).unwrap_or_default();
    let outcome = PersonEnd {
        succeeded: !failed,
        detail,
        flag,
    };
    match client
        .complete(InstanceId(instance), ActivityId(activity), outcome)
        .await
    {
        Ok(Ok(())) => {
            Json(serde_json::json!({ "instance": instance, "activity": activity })).into_response()
        }
        Ok(Err(refusal @ Refusal::UnknownActivity { .. })) => {
            error(StatusCode::NOT_FOUND, refusal.to_string())
        }
        Ok(Err(refusal)) => error(StatusCode::CONFLICT, refusal.to_string()),
        Err(e) => unavailable(e),
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
