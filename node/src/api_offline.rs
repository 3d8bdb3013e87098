//! The disconnection and reconnection protocols of the node's API (*Synchronization and
//! Disconnected Operation in WorkToDo* (IC-03-006), §5.1.2-5.1.3):
//!
//! - `POST /users/{user}/disconnect` with `{"max_wait_secs": N, "accept": false}`: refused
//!   (409, `"reason": "selected"`) while the user holds a selected item; the values of their
//!   locked items are copied from the hosts; the files still to fetch are measured against the
//!   bandwidth (one chunk fetched and timed) and `max_wait_secs` (409, `"reason": "time"`, with
//!   `needed_secs`, unless `accept`) and against the free disk (507, `"reason": "disk"`); then
//!   copied (resuming broken-off fetches); then the user is away: only their locked items can
//!   be worked on, what they do waits on this device, and the controller offers them nothing
//!   new. 200 with what was copied. The applications of the locked items this device has not
//!   installed (`run --application NAME` says which it has) are listed (`applications`, each
//!   with `name` and `size_kib`), and their sizes (`application_bytes`) count against the free
//!   disk with the bytes to copy.
//! - `POST /users/{user}/reconnect`: every item can be worked on again; the controller is told;
//!   what the user did while away is on its way to the hosts already (the outbox). 200.

use std::time::{Duration, Instant};

use axum::Json;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use mobiwf_proto::data::FETCH_CHUNK_BYTES;
use mobiwf_proto::{Envelope, Fetch, FileRef, Message, MessageId, NodeId, Reply, UserId};
use mobiwf_runtime::outbox;
use serde::Deserialize;
use serde_json::json;

use crate::api::{error, unavailable};
use crate::daemon::{Departure, NodeClient, Refused};

/// How long a disconnection waits for the hosts to tell the values of its locked items.
pub const VALUES_WAIT: Duration = Duration::from_secs(10);
/// How often a disconnection looks at how far its copy got.
pub const COPY_POLL: Duration = Duration::from_millis(50);
/// The longest `max_wait_secs` a disconnection takes (a week): more is refused (400).
pub const MAX_WAIT_SECS: u64 = 7 * 24 * 3600;
/// The least time a disconnection gives its copy, whatever `max_wait_secs` says (a copy
/// measured to fit must not be refused for a hiccup).
pub const MIN_COPY_WAIT: Duration = Duration::from_secs(5);

/// The body of a disconnection.
#[derive(Debug, Deserialize)]
pub(crate) struct DisconnectBody {
    /// The longest the user will wait for the copy, in seconds.
    pub(crate) max_wait_secs: u64,
    /// Copy whatever it takes (the user accepts a longer wait).
    #[serde(default)]
    pub(crate) accept: bool,
}

pub(crate) async fn disconnect(
    State(client): State<NodeClient>,
    Path(user): Path<String>,
    Json(body): Json<DisconnectBody>,
) -> Response {
    let user = UserId::new(user);
    if body.max_wait_secs > MAX_WAIT_SECS {
        return error(
            StatusCode::BAD_REQUEST,
            format!(
                "--max-wait {} s is over the limit of {MAX_WAIT_SECS} s (MAX_WAIT_SECS, a week); \
                 give a shorter wait, or --accept to take whatever the copy needs",
                body.max_wait_secs
            ),
        );
    }
    let plan = match values_copied(&client, &user).await {
        Ok(plan) => plan,
        Err(response) => return response,
    };
    let max_wait = Duration::from_secs(body.max_wait_secs);
    let needed = match time_needed(&client, &user, &plan, &body).await {
        Ok(needed) => needed,
        Err(response) => return response,
    };
    match client.files.free_bytes() {
        Ok(free) if free < plan.bytes.saturating_add(plan.application_bytes) => {
            let message = format!(
                "copying {user}'s locked items needs {} bytes, and the applications they start \
                 that this device has not installed {} bytes ({}); the disk has {free} free: make \
                 room, or unlock items and try again",
                plan.bytes,
                plan.application_bytes,
                taken(&plan),
            );
            return refusal(
                StatusCode::INSUFFICIENT_STORAGE,
                "disk",
                message,
                &plan,
                None,
            );
        }
        Ok(_) => {}
        Err(why) => return error(StatusCode::INTERNAL_SERVER_ERROR, why),
    }
    let limit = max_wait
        .max(needed)
        .saturating_mul(2)
        .saturating_add(MIN_COPY_WAIT);
    let copied = match copy_all(&client, &user, limit).await {
        Ok(plan) => plan,
        Err(response) => return response,
    };
    match client.disconnect(user.clone()).await {
        Ok(Ok(())) => Json(json!({
            "user": user,
            "away": true,
            "locked": copied.locked,
            "copied_bytes": plan.bytes,
            "applications": plan.applications,
            "application_bytes": plan.application_bytes,
        }))
        .into_response(),
        Ok(Err(refused)) => refused_response(refused),
        Err(e) => unavailable(e),
    }
}

/// How long copying what `plan` still lacks takes at the bandwidth measured now; refused (409)
/// when that is more than the user will wait and they did not accept it.
async fn time_needed(
    client: &NodeClient,
    user: &UserId,
    plan: &Departure,
    body: &DisconnectBody,
) -> Result<Duration, Response> {
    if plan.bytes == 0 {
        return Ok(Duration::ZERO);
    }
    let bandwidth = measure(client, plan)
        .await
        .map_err(|why| error(StatusCode::SERVICE_UNAVAILABLE, why))?;
    // Bytes per second measured; at least one byte per second.
    let needed = Duration::try_from_secs_f64(plan.bytes as f64 / bandwidth.max(1.0))
        .unwrap_or(Duration::MAX);
    if needed > Duration::from_secs(body.max_wait_secs) && !body.accept {
        let message = format!(
            "copying {} bytes for {user}'s locked items needs about {:.1} s at the measured \
             {:.0} bytes/s, more than --max-wait {} s: wait longer (--max-wait), accept it \
             (--accept), or unlock items and try again",
            plan.bytes,
            needed.as_secs_f64(),
            bandwidth,
            body.max_wait_secs
        );
        return Err(refusal(
            StatusCode::CONFLICT,
            "time",
            message,
            plan,
            Some(needed),
        ));
    }
    Ok(needed)
}

pub(crate) async fn reconnect(
    State(client): State<NodeClient>,
    Path(user): Path<String>,
) -> Response {
    let user = UserId::new(user);
    match client.reconnect(user.clone()).await {
        Ok(Ok(())) => Json(json!({ "user": user, "away": false })).into_response(),
        Ok(Err(refused)) => refused_response(refused),
        Err(e) => unavailable(e),
    }
}

/// The plan once the hosts told the values of every locked item (asked by the plan itself).
async fn values_copied(client: &NodeClient, user: &UserId) -> Result<Departure, Response> {
    let started = Instant::now();
    loop {
        let plan = plan(client, user).await?;
        if plan.uncopied.is_empty() {
            return Ok(plan);
        }
        if started.elapsed() > VALUES_WAIT {
            return Err(error(
                StatusCode::SERVICE_UNAVAILABLE,
                format!(
                    "the hosts of {user}'s locked items did not tell what they read within {} s \
                     ({}): they cannot be copied now; try again while connected",
                    VALUES_WAIT.as_secs(),
                    plan.uncopied.join("; ")
                ),
            ));
        }
        tokio::time::sleep(COPY_POLL).await;
    }
}

/// Waits until nothing is left to fetch, up to `limit`.
async fn copy_all(
    client: &NodeClient,
    user: &UserId,
    limit: Duration,
) -> Result<Departure, Response> {
    let started = Instant::now();
    loop {
        let plan = plan(client, user).await?;
        if plan.bytes == 0 && plan.missing.is_empty() && plan.uncopied.is_empty() {
            return Ok(plan);
        }
        if started.elapsed() > limit {
            return Err(error(
                StatusCode::GATEWAY_TIMEOUT,
                format!(
                    "the copy of {user}'s locked items did not finish within {} s ({} bytes \
                     left); {user} stays connected; run disconnect again (copies resume where \
                     they stopped)",
                    limit.as_secs(),
                    plan.bytes
                ),
            ));
        }
        tokio::time::sleep(COPY_POLL).await;
    }
}

async fn plan(client: &NodeClient, user: &UserId) -> Result<Departure, Response> {
    match client.departure(user.clone()).await {
        Ok(Ok(plan)) => Ok(plan),
        Ok(Err(refused)) => Err(refused_response(refused)),
        Err(e) => Err(unavailable(e)),
    }
}

/// Bytes per second to the holder of the largest file still to fetch: its first chunk (a
/// whole `FETCH_CHUNK_BYTES` when it is that large) asked for and timed (not kept: the copy
/// fetches it, properly).
async fn measure(client: &NodeClient, plan: &Departure) -> Result<f64, String> {
    let Some((file, holder)) = plan.missing.iter().max_by_key(|(f, _)| f.size) else {
        return Ok(f64::MAX);
    };
    let (peer, addr) = outbox::peer_of(holder)?;
    let offset = 0;
    let envelope = Envelope {
        answered_below: 0,
        epoch: None,
        id: MessageId {
            incarnation: 0,
            origin: NodeId::new(client.mesh.peer_id().to_string()),
            seq: 0,
        },
        message: Message::Fetch(Fetch {
            file: FileRef::clone(file),
            offset,
        }),
    };
    let started = Instant::now();
    let reply = client
        .mesh
        .request(peer, vec![addr], envelope)
        .await
        .map_err(|e| format!("cannot reach {holder} to measure the bandwidth: {e}"))?;
    let elapsed = started.elapsed().as_secs_f64().max(1e-6);
    match reply {
        // Base64: four characters for three bytes.
        Reply::Chunk { base64 } => {
            Ok((base64.len() as f64 * 0.75).min(FETCH_CHUNK_BYTES as f64) / elapsed)
        }
        Reply::Refused { reason } => Err(format!(
            "{holder} does not hold a file {file} needs yet ({reason}): try again later",
            file = file.sha256
        )),
        other => Err(format!("{holder} answered a fetch with {other:?}")),
    }
}

fn refusal(
    status: StatusCode,
    reason: &str,
    message: String,
    plan: &Departure,
    needed: Option<Duration>,
) -> Response {
    let body = json!({
        "error": message,
        "reason": reason,
        "bytes": plan.bytes,
        "locked": plan.locked,
        "applications": plan.applications,
        "application_bytes": plan.application_bytes,
        "needed_secs": needed.map(|d| d.as_secs_f64()),
    });
    (status, Json(body)).into_response()
}

/// The applications a disconnection takes along, named with their sizes (`editor 2048 KiB`).
fn taken(plan: &Departure) -> String {
    if plan.applications.is_empty() {
        return "none".to_owned();
    }
    plan.applications
        .iter()
        .map(|a| format!("{} {} KiB", a.name, a.size_kib))
        .collect::<Vec<_>>()
        .join(", ")
}

fn refused_response(refused: Refused) -> Response {
    match refused {
        Refused::NotHere(why) => error(StatusCode::FORBIDDEN, why),
        Refused::Selected(why) => {
            let body = json!({ "error": why, "reason": "selected" });
            (StatusCode::CONFLICT, Json(body)).into_response()
        }
    }
}
