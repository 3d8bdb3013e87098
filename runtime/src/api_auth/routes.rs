//! The API token routes both daemons serve (administrators only, by the daemons' tables):
//!
//! - `POST /api-tokens` with `{"role": "viewer"|"operator"|"administrator", "label": "..."}`
//!   (on the controller also `"user"`: the organisation user the token speaks for) or, on a
//!   node, `{"user": "alice", "label": "..."}`: 201 `{"id", "token", "grant", "label",
//!   "user"}`, the token shown this once (the daemon keeps its hash); 400 what is wrong; 409
//!   past `MAX_API_TOKENS`.
//! - `GET /api-tokens`: `{"tokens": [{id, grant, label, created_ms, user}], "enforced"}`
//!   (`user` only when the token names one).
//! - `DELETE /api-tokens/{id}`: refused from the next request on; 404 if unknown.

use std::sync::Arc;

use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::routing::{delete, get};
use axum::{Json, Router};
use serde::Deserialize;
use serde_json::json;

use super::{ApiToken, ApiTokens, Grant, NotMade, Role};

/// The routes above, on `tokens`.
pub fn routes(tokens: Arc<ApiTokens>) -> Router {
    Router::new()
        .route("/api-tokens", get(list).post(create))
        .route("/api-tokens/{id}", delete(revoke))
        .with_state(tokens)
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct CreateBody {
    #[serde(default)]
    role: Option<String>,
    #[serde(default)]
    user: Option<String>,
    #[serde(default)]
    label: String,
}

fn shown(token: &ApiToken) -> serde_json::Value {
    let mut shown = json!({
        "id": token.id,
        "grant": token.grant,
        "label": token.label,
        "created_ms": token.created_ms,
    });
    if let Some(user) = &token.user {
        shown["user"] = json!(user);
    }
    shown
}

fn error(status: StatusCode, message: String) -> Response {
    (status, Json(json!({ "error": message }))).into_response()
}

async fn create(State(tokens): State<Arc<ApiTokens>>, Json(body): Json<CreateBody>) -> Response {
    // A role with a user: on the controller, the user the token speaks for (a node refuses
    // it); a user alone: a node's user token.
    let (grant, user) = match (body.role, body.user) {
        (Some(role), user) => match Role::parse(&role) {
            Ok(role) => (Grant::Role(role), user),
            Err(e) => return error(StatusCode::BAD_REQUEST, e),
        },
        (None, Some(user)) => (Grant::User(user), None),
        (None, None) => {
            return error(
                StatusCode::BAD_REQUEST,
                "say whom the token is for: \"role\" (viewer, operator, administrator), with \
                 \"user\" on the controller for the organisation user it speaks for; or, on a \
                 node, \"user\" alone for the user's own token"
                    .to_owned(),
            );
        }
    };
    let label = body.label;
    let now = crate::process::now_ms();
    let made =
        tokio::task::spawn_blocking(move || tokens.create_for(grant, user, label, now)).await;
    match made {
        Ok(Ok(Ok((text, token)))) => {
            tracing::info!(id = %token.id, grant = %token.grant, "API token created");
            let mut body = shown(&token);
            body["token"] = json!(text);
            (StatusCode::CREATED, Json(body)).into_response()
        }
        Ok(Ok(Err(NotMade::Full(e)))) => error(StatusCode::CONFLICT, e),
        Ok(Ok(Err(NotMade::Invalid(e)))) => error(StatusCode::BAD_REQUEST, e),
        Ok(Err(e)) => error(StatusCode::INTERNAL_SERVER_ERROR, format!("{e:#}")),
        Err(e) => error(StatusCode::INTERNAL_SERVER_ERROR, e.to_string()),
    }
}

async fn list(State(tokens): State<Arc<ApiTokens>>) -> Response {
    let all: Vec<_> = tokens.list().iter().map(shown).collect();
    Json(json!({ "tokens": all, "enforced": tokens.settings().enforce })).into_response()
}

async fn revoke(State(tokens): State<Arc<ApiTokens>>, Path(id): Path<String>) -> Response {
    match tokio::task::spawn_blocking(move || tokens.revoke(&id)).await {
        Ok(Ok(Ok(token))) => {
            tracing::info!(id = %token.id, grant = %token.grant, "API token revoked");
            Json(json!({ "revoked": token.id })).into_response()
        }
        Ok(Ok(Err(e))) => error(StatusCode::NOT_FOUND, e),
        Ok(Err(e)) => error(StatusCode::INTERNAL_SERVER_ERROR, format!("{e:#}")),
        Err(e) => error(StatusCode::INTERNAL_SERVER_ERROR, e.to_string()),
    }
}
