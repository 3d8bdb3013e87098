//! The people side of the controller's HTTP API: the organisation directory and the
//! administration of work items.
//!
//! - `PUT /org?source=NAME` with an organisation document (XML) as the body: 200 `{"version":
//!   N, "users": COUNT}`; 400 with every problem (`NAME:line:col: error: ...`). Every node
//!   receives the new directory version.
//! - `GET /org`: the directory: `{"version", "document", "users": [{"id", "name",
//!   "department", "teams", "device", "device_registered", "on_leave", "logged_on",
//!   "roles"}], "roles", "departments", "teams", "devices"}`.
//! - `POST /instances/{id}/activities/{activity}/worklist` with `{"action":
//!   "insert"|"remove"|"delegate", "user": U, "to": U2}`: carried to the node hosting the item;
//!   200 `{"host": NODE}`; 404 unknown instance; 400 refused, the reason says why (an unknown
//!   user or action, an instance over, an activity that names no role or is not placed).

use axum::Json;
use axum::extract::{Path, Query, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use mobiwf_book::BookError;
use mobiwf_people::Directory;
use mobiwf_proto::{ActivityId, InstanceId, ItemAction, UserId};
use serde::Deserialize;
use serde_json::{Value, json};

use crate::api::{error, unavailable};
use crate::daemon::ControllerClient;

/// `?source=` of a document.
#[derive(Deserialize)]
pub(crate) struct SourceQuery {
    source: Option<String>,
}

impl SourceQuery {
    /// The document's name for its problems, when given.
    pub(crate) fn source(self) -> Option<String> {
        self.source
    }
}

pub(crate) async fn apply(
    State(client): State<ControllerClient>,
    Query(q): Query<SourceQuery>,
    body: axum::body::Bytes,
) -> Response {
    let source = q
        .source()
        .unwrap_or_else(|| "organisation document".to_owned());
    let org = match mobiwf_xml_schema::load_organisation(&body) {
        Ok(loaded) => loaded.value,
        Err(diagnostics) => return error(StatusCode::BAD_REQUEST, diagnostics.render(&source)),
    };
    let users = org.users.len();
    // Documents in other encodings are stored as the UTF-8 the writer makes.
    let document = String::from_utf8(body.to_vec())
        .unwrap_or_else(|_| mobiwf_xml_schema::write_organisation(&org));
    match client.apply_org(document, org).await {
        Ok(Ok(version)) => Json(json!({ "version": version, "users": users })).into_response(),
        Ok(Err(e)) => error(StatusCode::CONFLICT, e.to_string()),
        Err(e) => unavailable(e),
    }
}

pub(crate) async fn show(State(client): State<ControllerClient>) -> Response {
    match client.directory().await {
        Ok(dir) => Json(view(&dir)).into_response(),
        Err(e) => unavailable(e),
    }
}

/// The directory as `GET /org` shows it.
pub fn view(dir: &Directory) -> Value {
    let users: Vec<Value> = dir
        .org
        .users
        .iter()
        .map(|u| {
            json!({
                "id": u.id,
                "name": u.name,
                "department": u.department,
                "teams": u.teams,
                "device": u.device,
                "device_registered": dir.device_of(u.id.as_str()).is_some(),
                "on_leave": u.on_leave,
                "logged_on": u.logged_on,
                "roles": u.roles.iter().map(|g| g.role.as_str()).collect::<Vec<_>>(),
                "priorities": u.roles.iter().map(|g| (g.role.to_string(), Value::from(g.priority))).collect::<serde_json::Map<String, Value>>(),
            })
        })
        .collect();
    json!({
        "version": dir.version,
        "document": dir.document,
        "users": users,
        "roles": dir.org.roles.iter().map(|r| r.id.as_str()).collect::<Vec<_>>(),
        "departments": dir.org.departments.iter().map(|d| json!({"id": d.id, "parent": d.parent})).collect::<Vec<_>>(),
        "teams": dir.org.teams.iter().map(|t| json!({"id": t.id, "parent": t.parent})).collect::<Vec<_>>(),
        "devices": dir.devices.values().collect::<Vec<_>>(),
    })
}

/// The body of an administrator's work item action.
#[derive(Deserialize)]
pub(crate) struct AdminBody {
    action: String,
    user: String,
    #[serde(default)]
    to: Option<String>,
    /// For `extend`: how many hours later.
    #[serde(default)]
    hours: Option<u32>,
}

pub(crate) async fn administer(
    State(client): State<ControllerClient>,
    Path((instance, activity)): Path<(u64, u64)>,
    Json(body): Json<AdminBody>,
) -> Response {
    let action = match (body.action.as_str(), body.to) {
        ("insert", _) => ItemAction::Insert,
        ("remove", _) => ItemAction::Remove,
        ("delegate", Some(to)) => ItemAction::Delegate {
            to: UserId::new(to),
        },
        ("extend", _) => match body.hours {
            Some(hours) => ItemAction::Extend { hours },
            None => {
                return error(
                    StatusCode::BAD_REQUEST,
                    "extend needs \"hours\": how many hours later the deadline is".to_owned(),
                );
            }
        },
        ("delegate", None) => {
            return error(
                StatusCode::BAD_REQUEST,
                "delegate needs \"to\": the user who gets the item".to_owned(),
            );
        }
        (other, _) => {
            return error(
                StatusCode::BAD_REQUEST,
                format!(
                    "no administrator action '{other}': use insert, remove, delegate or extend \
                     (select, release, lock, unlock and complete are done on the user's device)"
                ),
            );
        }
    };
    let answer = client
        .administer(
            InstanceId(instance),
            ActivityId(activity),
            UserId::new(body.user),
            action,
        )
        .await;
    match answer {
        Ok(Ok(host)) => Json(json!({ "host": host })).into_response(),
        Ok(Err(e @ BookError::UnknownInstance(_))) => error(StatusCode::NOT_FOUND, e.to_string()),
        Ok(Err(e @ (BookError::Invalid(_) | BookError::People(_)))) => {
            error(StatusCode::BAD_REQUEST, e.to_string())
        }
        Ok(Err(e)) => error(StatusCode::CONFLICT, e.to_string()),
        Err(e) => unavailable(e),
    }
}
