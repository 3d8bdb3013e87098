//! The task classes, the ordering requirements between definitions and the synchronization
//! manager in the controller's HTTP API.
//!
//! - `PUT /classes?source=NAME` with a class document (XML) as the body: 200 `{"classes":
//!   COUNT}`; 400 with every problem (`NAME:line:col: error: ...`); 409 when it leaves out a
//!   class an instance not over names. The administrator's, as the organisation is.
//! - `GET /classes`: `{"applied_ms", "document", "classes": [{"id", "conflicts",
//!   "conflicts_with", "max_wait_secs"}]}`: `conflicts` as written, `conflicts_with` every
//!   class it may not run beside (either side naming the other).
//! - `GET /sync`: `{"lease_ms", "holders": [{"class", "instance", "partition", "activity",
//!   "name", "round", "node", "since_ms", "ending": {"at_ms", "why"}}], "waiters": [{... as a holder (since: when it
//!   asked), "refused_at_ms", "behind": [{"ticket", "class", "holds"}], "behind_text"}],
//!   "ordered": [{"class" (null without one), "instance", "partition", "activity", "name",
//!   "round", "node", "since_ms", "after": ["after instance 12's T11"], "after_text"}]}`: the
//!   requests waiting for their instance's relative order (left out while none does);
//!   `ending` only for a hold whose node is suspected or gone, or that a later round of its
//!   activity superseded: when it ends at the latest, why, and `"cause": "superseded"` for
//!   the latter (left out for the former).
//! - `PUT /orderings?source=NAME` with an ordering document (XML or PDL, told by NAME's
//!   extension, else by the text) as the body: 200 `{"orderings": COUNT}`; 400 with every
//!   problem (`NAME:line:col: error: ...`), the task names resolved against the deployed
//!   definitions. The administrator's, as the class document is.
//! - `GET /orderings`: `{"applied_ms", "source", "document", "orderings": [{"first",
//!   "second", "pairs": [{"first", "second"}]}]}`.

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
        .route("/orderings", get(show_orderings).put(apply_orderings))
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

async fn apply_orderings(
    State(client): State<ControllerClient>,
    Query(q): Query<SourceQuery>,
    body: axum::body::Bytes,
) -> Response {
    let source = q.source().unwrap_or_else(|| "ordering document".to_owned());
    let Ok(document) = String::from_utf8(body.to_vec()) else {
        let why = format!("{source}: the ordering document is not UTF-8 text; save it as UTF-8");
        return error(StatusCode::BAD_REQUEST, why);
    };
    match client.apply_orderings(source, document).await {
        Ok(Ok(count)) => Json(json!({ "orderings": count })).into_response(),
        Ok(Err(e)) => error(StatusCode::BAD_REQUEST, e.to_string()),
        Err(e) => unavailable(e),
    }
}

async fn show_orderings(State(client): State<ControllerClient>) -> Response {
    match client.orderings().await {
        Ok((orderings, record)) => {
            let each: Vec<Value> = orderings
                .orderings
                .iter()
                .map(|o| {
                    let pairs: Vec<Value> = o
                        .pairs
                        .iter()
                        .map(|p| json!({ "first": p.first.to_string(), "second": p.second.to_string() }))
                        .collect();
                    json!({ "first": o.first, "second": o.second, "pairs": pairs })
                })
                .collect();
            Json(json!({
                "applied_ms": record.applied_ms,
                "source": record.source,
                "document": record.document,
                "orderings": each,
            }))
            .into_response()
        }
        Err(e) => unavailable(e),
    }
}
