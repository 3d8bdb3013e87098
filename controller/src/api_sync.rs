//! The task classes and the synchronization manager in the controller's HTTP API.
//!
//! - `PUT /classes?source=NAME` with a class document (XML) as the body: 200 `{"classes":
//!   COUNT}`; 400 with every problem (`NAME:line:col: error: ...`); 409 when it leaves out a
//!   class an instance not over names. The administrator's, as the organisation is.
//! - `GET /classes`: `{"applied_ms", "document", "classes": [{"id", "conflicts",
//!   "conflicts_with", "max_wait_secs"}]}`: `conflicts` as written, `conflicts_with` every
//!   class it may not run beside (either side naming the other).
//! - `GET /sync`: `{"lease_ms", "holders": [{"class", "instance", "partition", "activity",
//!   "name", "round", "node", "since_ms"}], "waiters": [{... as a holder (since: when it
//!   asked), "refused_at_ms", "behind": [{"ticket", "class", "holds"}], "behind_text"}]}`.

use axum::Json;
use axum::Router;
use axum::extract::{Query, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use mobiwf_book::BookError;
use mobiwf_xml_schema::ClassDocument;
use serde_json::{Value, json};

use crate::api::{error, unavailable};
use crate::api_people::SourceQuery;
use crate::daemon::ControllerClient;

/// The routes above.
pub fn routes() -> Router<ControllerClient> {
    Router::new()
        .route("/classes", get(show).put(apply))
        .route("/sync", get(sync))
}

async fn apply(
    State(client): State<ControllerClient>,
    Query(q): Query<SourceQuery>,
    body: axum::body::Bytes,
) -> Response {
    let source = q.source().unwrap_or_else(|| "class document".to_owned());
    let classes = match mobiwf_xml_schema::load_classes(&body) {
        Ok(loaded) => loaded.value,
        Err(diagnostics) => return error(StatusCode::BAD_REQUEST, diagnostics.render(&source)),
    };
    // Documents in other encodings are stored as the UTF-8 the writer makes.
    let document = String::from_utf8(body.to_vec())
        .unwrap_or_else(|_| mobiwf_xml_schema::write_classes(&classes));
    match client.apply_classes(document, classes).await {
        Ok(Ok(count)) => Json(json!({ "classes": count })).into_response(),
        Ok(Err(e @ BookError::Classes(_))) => error(StatusCode::CONFLICT, e.to_string()),
        Ok(Err(e)) => error(StatusCode::BAD_REQUEST, e.to_string()),
        Err(e) => unavailable(e),
    }
}

async fn show(State(client): State<ControllerClient>) -> Response {
    match client.classes().await {
        Ok((classes, record)) => {
            let mut body = view(&classes);
            body["applied_ms"] = json!(record.applied_ms);
            body["document"] = json!(record.document);
            Json(body).into_response()
        }
        Err(e) => unavailable(e),
    }
}

/// The classes as `GET /classes` shows them.
pub fn view(doc: &ClassDocument) -> Value {
    let classes: Vec<Value> = doc
        .classes
        .iter()
        .map(|c| {
            let with: Vec<&str> = doc
                .classes
                .iter()
                .filter(|o| doc.conflict(&c.id, &o.id))
                .map(|o| o.id.as_str())
                .collect();
            json!({
                "id": c.id,
                "conflicts": c.conflicts,
                "conflicts_with": with,
                "max_wait_secs": c.max_wait_secs,
            })
        })
        .collect();
    json!({ "classes": classes })
}

async fn sync(State(client): State<ControllerClient>) -> Response {
    match client.sync_view().await {
        Ok(view) => Json(view).into_response(),
        Err(e) => unavailable(e),
    }
}
