//! The HTTP shell of admission control (`crate::admission` decides): the routes that create
//! instances (`POST /instances`, `POST /definitions/{name}/instances`) ask the gate first, and
//! a submission past the limit is answered 429 with `Retry-After` before anything of it
//! reaches the actor. Settled instances come from the actor's word (`finished`), each a
//! latency sample.

use std::sync::{Arc, Mutex, PoisonError};
use std::time::Instant;

use axum::Json;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use mobiwf_proto::{InstanceId, Millis};
use mobiwf_runtime::metrics::Metrics;
use tokio::sync::broadcast;

use crate::admission::{
    Admission, Decision, Input, MAX_ADMISSION_LIMIT, MIN_ADMISSION_LIMIT, Policy, Shed, Ticket,
};

/// The limiter, shared by the API's handlers and the task that tells it of settled instances.
#[derive(Clone)]
pub struct Gate {
    limiter: Arc<Mutex<Admission>>,
    /// The clock's origin: the limiter's times are milliseconds since it.
    epoch: Instant,
    /// Where the 429s are counted, and where the actor says how many instances it holds
    /// unsettled (none: nothing admitted here is under way).
    metrics: Arc<Metrics>,
}

impl Gate {
    /// A gate set as `policy` says, on `metrics` (the 429s, the unsettled instances).
    pub fn new(policy: Policy, metrics: Arc<Metrics>) -> Gate {
        Gate {
            limiter: Arc::new(Mutex::new(Admission::new(policy))),
            epoch: Instant::now(),
            metrics,
        }
    }

    fn apply(&self, input: Input) -> Decision {
        let now = Millis(u64::try_from(self.epoch.elapsed().as_millis()).unwrap_or(u64::MAX));
        // A handler that panicked holding the lock left the counts as they were: go on.
        let mut limiter = self.limiter.lock().unwrap_or_else(PoisonError::into_inner);
        limiter.apply(now, input)
    }

    /// Asks to let one submission in: a permit to hand its answer to, or why it is shed
    /// (answer it with [`too_many`]).
    pub fn admit(&self) -> Result<Permit, Shed> {
        if self.metrics.instances_in_memory() == 0 {
            self.apply(Input::Idle);
        }
        let ticket = match self.apply(Input::Arrive) {
            Decision::Admit(ticket) => Some(ticket),
            Decision::Shed(shed) => {
                self.metrics.submission_shed();
                return Err(shed);
            }
            // Never for an arrival; were it so, nothing was counted: let it in.
            Decision::Noted => None,
        };
        Ok(Permit {
            gate: self.clone(),
            ticket,
        })
    }

    /// Feeds the limiter every instance the actor says became settled, until the controller
    /// stops. A word missed (the queue overflowed, `FINISHED_QUEUE` behind) leaves that
    /// instance counted until the book holds none unsettled ([`Input::Idle`]), it is taken to be
    /// waiting (adaptive) or it is forgotten as the oldest: rare, and never a lost admitted
    /// instance, only a slot for a while.
    pub fn follow(
        &self,
        mut finished: broadcast::Receiver<InstanceId>,
    ) -> tokio::task::JoinHandle<()> {
        let gate = self.clone();
        tokio::spawn(async move {
            loop {
                match finished.recv().await {
                    Ok(instance) => {
                        gate.apply(Input::Settled { instance });
                    }
                    Err(broadcast::error::RecvError::Lagged(_)) => {}
                    Err(broadcast::error::RecvError::Closed) => return,
                }
            }
        })
    }
}

/// One admitted submission: say how it ended with [`Permit::stored`]; dropped without it (a
/// refusal, an error, the client gone), it frees its slot as not stored.
pub struct Permit {
    gate: Gate,
    ticket: Option<Ticket>,
}

impl Permit {
    /// The submission was stored as `instance`.
    pub fn stored(mut self, instance: InstanceId) {
        if let Some(ticket) = self.ticket.take() {
            self.gate.apply(Input::Answered {
                ticket,
                stored: Some(instance),
            });
        }
    }
}

impl Drop for Permit {
    fn drop(&mut self) {
        if let Some(ticket) = self.ticket.take() {
            self.gate.apply(Input::Answered {
                ticket,
                stored: None,
            });
        }
    }
}

/// The 429 of a shed submission: `Retry-After` in whole seconds, and a body that says which
/// limit was met and what to do.
pub fn too_many(shed: &Shed) -> Response {
    let secs = shed.retry_after.as_secs().max(1);
    let how = match shed.policy {
        Policy::Adaptive => format!(
            "the adaptive admission limit, now {} (it follows the instances' latency between \
             MIN_ADMISSION_LIMIT {MIN_ADMISSION_LIMIT} and MAX_ADMISSION_LIMIT \
             {MAX_ADMISSION_LIMIT})",
            shed.limit
        ),
        Policy::Fixed(n) => format!("the admission limit {n} (serve --admission-limit)"),
        Policy::Off => "no limit".to_owned(),
    };
    let message = format!(
        "too many instances under way: {} are under way, at {how}; nothing was stored: submit \
         again in {secs} s",
        shed.under_way
    );
    let body = serde_json::json!({
        "error": message,
        "under_way": shed.under_way,
        "limit": shed.limit,
        "retry_after_secs": secs,
    });
    (
        StatusCode::TOO_MANY_REQUESTS,
        [(axum::http::header::RETRY_AFTER, secs.to_string())],
        Json(body),
    )
        .into_response()
}
