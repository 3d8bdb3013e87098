//! The enrolment part of the operators' HTTP API (who may join the mesh; documented in
//! `docs/http-api.md` and `docs/security.md`):
//!
//! - `POST /tokens` with `{"label": "..."}` (optional): a new join token, 201 `{"id", "token",
//!   "label"}`; the token is shown this once (the controller keeps its hash).
//! - `GET /tokens`: `{"tokens": [{id, label, created_ms}], "allowed": [peer ids], "open"}`.
//! - `DELETE /tokens/{id}`: revokes a join token (nodes already registered stay); 404 if
//!   unknown.
//! - `POST /nodes/allow` with `{"peer": "12D3..."}`: that peer id may join without a token;
//!   400 when it is not a peer id.
//! - `DELETE /nodes/{name}`: removes a registered node: its unfinished partitions are given
//!   up, its name is free for another key, and it must enrol again to come back; 404 if no
//!   node has that name.

use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::routing::{delete, get, post};
use axum::{Json, Router};
use mobiwf_proto::{NodeId, NodeName};
use serde::Deserialize;

use crate::api::{error, unavailable};
use crate::daemon::{ControllerClient, EnrolAnswer};

/// The routes above.
pub fn routes() -> Router<ControllerClient> {
    Router::new()
        .route("/tokens", get(list).post(create))
        .route("/tokens/{id}", delete(revoke))
        .route("/nodes/allow", post(allow))
        .route("/nodes/{name}", delete(remove))
}

#[derive(Deserialize, Default)]
struct CreateBody {
    #[serde(default)]
    label: String,
}

async fn create(
    State(client): State<ControllerClient>,
    body: Option<Json<CreateBody>>,
) -> Response {
    let label = body.map(|Json(b)| b.label).unwrap_or_default();
    match client.create_join_token(label).await {
        Ok(Ok((token, EnrolAnswer::Created { token: kept }))) => (
            StatusCode::CREATED,
            Json(serde_json::json!({ "id": kept.id, "token": token, "label": kept.label })),
        )
            .into_response(),
        Ok(Ok((_, other))) => Json(other).into_response(),
        Ok(Err(e)) => error(StatusCode::CONFLICT, e),
        Err(e) => unavailable(e),
    }
}

async fn list(State(client): State<ControllerClient>) -> Response {
    answer(client.enrolment().await, StatusCode::CONFLICT)
}

async fn revoke(State(client): State<ControllerClient>, Path(id): Path<String>) -> Response {
    answer(client.revoke_join_token(id).await, StatusCode::NOT_FOUND)
}

#[derive(Deserialize)]
struct AllowBody {
    peer: String,
}

async fn allow(State(client): State<ControllerClient>, Json(body): Json<AllowBody>) -> Response {
    let peer = body.peer.trim();
    if peer.parse::<libp2p::PeerId>().is_err() {
        return error(
            StatusCode::BAD_REQUEST,
            format!("{peer:?} is not a peer id (a node prints its own at start: `peer 12D3...`)"),
        );
    }
    answer(
        client.allow_peer(NodeId::new(peer)).await,
        StatusCode::CONFLICT,
    )
}

async fn remove(State(client): State<ControllerClient>, Path(name): Path<String>) -> Response {
    answer(
        client.remove_node(NodeName::new(name)).await,
        StatusCode::NOT_FOUND,
    )
}

/// 200 with what was done, `refused` with why not, 503 when the controller is stopping.
fn answer(result: anyhow::Result<Result<EnrolAnswer, String>>, refused: StatusCode) -> Response {
    match result {
        Ok(Ok(done)) => Json(done).into_response(),
        Ok(Err(e)) => error(refused, e),
        Err(e) => unavailable(e),
    }
}
