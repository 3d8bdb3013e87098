//! The deployed definitions on the controller's API (documented in `docs/http-api.md`):
//!
//! - `POST /definitions?source=FILE&name=N`, body: a definition in any of the three
//!   languages: 201 `{name, version, new_version: true}` when it made a new version, 200 with
//!   `new_version: false` when it reads as the latest version already (nothing changed); 400
//!   its problems, or no name (neither `name=` nor `<name>`); 409 past the registry's limit.
//! - `GET /definitions`: `[{name, latest, versions, deployed_ms, creator_role, running, ...}]`
//!   (with each older version's own role when it differs, and the versions that do not read
//!   back as unreadable).
//! - `GET /definitions/{name}?version=V`: that version (the latest by default) with its
//!   document, `{name, version, deployed_ms, creator_role, latest, versions, running,
//!   document}`; 404.
//! - `DELETE /definitions/{name}`: `{name, dropped, kept}`; 404; 409 `{error, instances}` while
//!   instances of it run.
//! - `POST /definitions/{name}/instances`, body `{"version", "responsible", "data"}` (all
//!   optional; an empty body is `{}`; `data`: the inputs, name → value): 201 `{instance, name,
//!   version}`; 404 no such definition or version; 403 the token's user may not start it (its
//!   creator role, or the latest version's); 409 it cannot be placed, its people are not in the
//!   directory, or the version does not read back; 400 a body that is not one, or inputs that
//!   do not fit; 429 with `Retry-After` when too many instances are under way
//!   (`crate::api_admission`: nothing is stored).
//!
//! Who starts is the token's user ([`Caller`], which the token check hands each request): a
//! definition's creator role is checked against them, and they are the responsible user
//! unless the body names one. With the check off (`--insecure-no-auth`) nobody is checked.

use axum::extract::{Path, Query, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Extension, Json, Router};
use mobiwf_book::{BookError, DefinitionVersion, Deploy, Start, Starter};
use mobiwf_proto::GivenInputs;
use mobiwf_runtime::api_auth::Caller;
use mobiwf_xml_schema::DefinitionName;
use serde::Deserialize;
use serde_json::json;

use crate::api::{error, unavailable};
use crate::daemon::ControllerClient;

/// The routes above.
pub fn routes() -> Router<ControllerClient> {
    Router::new()
        .route("/definitions", get(list).post(deploy))
        .route("/definitions/{name}", get(show).delete(remove))
        .route("/definitions/{name}/instances", post(start))
}

/// A refusal of the book as an answer: the status its kind calls for (400 the request's
/// content, 404 no such definition, 403 not a member of the creator role, 409 otherwise: the
/// request is fine but the controller's state does not allow it). Every route that submits,
/// deploys or starts answers through it.
pub(crate) fn refused(e: &BookError) -> Response {
    let status = match e {
        BookError::Invalid(_) | BookError::Inputs(_) => StatusCode::BAD_REQUEST,
        BookError::UnknownDefinition(_) => StatusCode::NOT_FOUND,
        BookError::NotCreator(_) => StatusCode::FORBIDDEN,
        BookError::TooLarge(_) => StatusCode::PAYLOAD_TOO_LARGE,
        _ => StatusCode::CONFLICT,
    };
    error(status, e.to_string())
}

/// Who asks, as the token check saw them: a creator role is checked against them.
pub(crate) fn starter(caller: Option<Extension<Caller>>) -> Starter {
    match caller {
        Some(Extension(Caller::Unchecked)) => Starter::Anyone,
        Some(Extension(Caller::Token { user, .. })) => Starter::Token {
            user: user.map(mobiwf_proto::UserId::new),
        },
        // Not through the token check: nobody's word, so no creator role is met.
        None => Starter::Token { user: None },
    }
}

#[derive(Deserialize)]
struct DeployQuery {
    source: Option<String>,
    name: Option<String>,
}

async fn deploy(
    State(client): State<ControllerClient>,
    Query(q): Query<DeployQuery>,
    body: axum::body::Bytes,
) -> Response {
    let request = Deploy {
        document: body.to_vec(),
        source: q.source.unwrap_or_else(|| "deployed definition".to_owned()),
        name: q.name,
    };
    match client.deploy(request).await {
        Ok(Ok(d)) => {
            let status = if d.new_version {
                StatusCode::CREATED
            } else {
                StatusCode::OK
            };
            let body = json!({
                "name": d.definition.name,
                "version": d.definition.version,
                "new_version": d.new_version,
            });
            (status, Json(body)).into_response()
        }
        Ok(Err(e)) => refused(&e),
        Err(e) => unavailable(e),
    }
}

async fn list(State(client): State<ControllerClient>) -> Response {
    match client.definitions().await {
        Ok(all) => Json(all).into_response(),
        Err(e) => unavailable(e),
    }
}

#[derive(Deserialize)]
struct ShowQuery {
    version: Option<u64>,
}

async fn show(
    State(client): State<ControllerClient>,
    Path(name): Path<String>,
    Query(q): Query<ShowQuery>,
) -> Response {
    let version = q.version.map(DefinitionVersion);
    match client.definition(DefinitionName::new(name), version).await {
        Ok(Ok(shown)) => Json(shown).into_response(),
        Ok(Err(e)) => refused(&e),
        Err(e) => unavailable(e),
    }
}

async fn remove(State(client): State<ControllerClient>, Path(name): Path<String>) -> Response {
    match client.remove_definition(DefinitionName::new(name)).await {
        Ok(Ok(r)) => {
            Json(json!({"name": r.name, "dropped": r.dropped, "kept": r.kept})).into_response()
        }
        Ok(Err(e @ BookError::DefinitionRunning { .. })) => {
            let BookError::DefinitionRunning { instances, .. } = &e else {
                return refused(&e);
            };
            let body = json!({"error": e.to_string(), "instances": instances});
            (StatusCode::CONFLICT, Json(body)).into_response()
        }
        Ok(Err(e)) => refused(&e),
        Err(e) => unavailable(e),
    }
}

/// What a start may say: the version (the latest when absent), the responsible user (the
/// token's user when absent) and the instance's inputs (name → value, as `--data-file` takes
/// them).
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct StartBody {
    #[serde(default)]
    version: Option<u64>,
    #[serde(default)]
    responsible: Option<String>,
    /// Read as written: each number's exact text, a name given twice refused.
    #[serde(default)]
    data: crate::inputs::JsonObject,
}

async fn start(
    State(client): State<ControllerClient>,
    Path(name): Path<String>,
    caller: Option<Extension<Caller>>,
    body: axum::body::Bytes,
) -> Response {
    let body: StartBody = if body.iter().all(u8::is_ascii_whitespace) {
        StartBody::default()
    } else {
        match serde_json::from_slice(&body) {
            Ok(body) => body,
            Err(e) => {
                let message = format!(
                    "the body is not a start: {e} (it takes {{\"version\": N, \"responsible\": \
                     \"USER\", \"data\": {{\"NAME\": VALUE}}}}, all optional)"
                );
                return error(StatusCode::BAD_REQUEST, message);
            }
        }
    };
    let starter = starter(caller);
    let mut inputs = GivenInputs::new();
    if let Err(problem) = crate::inputs::add_object(&mut inputs, body.data, "the start's data") {
        return error(StatusCode::BAD_REQUEST, problem);
    }
    let start = Start {
        name: DefinitionName::new(name),
        version: body.version.map(DefinitionVersion),
        responsible: body.responsible.map(mobiwf_proto::UserId::new),
        starter,
        inputs,
    };
    let permit = match client.admission.admit() {
        Ok(permit) => permit,
        Err(shed) => return crate::api_admission::too_many(&shed),
    };
    match client.start(start).await {
        Ok(Ok(started)) => {
            permit.stored(started.instance);
            let body = json!({
                "instance": started.instance,
                "name": started.definition.name,
                "version": started.definition.version,
            });
            (StatusCode::CREATED, Json(body)).into_response()
        }
        Ok(Err(e)) => refused(&e),
        Err(e) => unavailable(e),
    }
}
