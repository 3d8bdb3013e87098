//! The controller's connection to etcd: its v3 API as JSON over HTTP (the gateway every etcd
//! 3.4 serves on its client URLs: `/v3/kv/range`, `/v3/kv/txn`, `/v3/lease/...`), on a tokio
//! runtime of its own. The store's calls are synchronous (the actor's blocking thread, and
//! startup), and a runtime of its own lets them wait for etcd from any thread without
//! entering the daemon's runtime.
//!
//! Why not etcd's gRPC client crate: its build needs `protoc` and its build dependencies
//! change the features of the ones RocksDB's bindings are built with, so every build cache
//! would compile RocksDB again; the JSON API is the same API, through the HTTP client the
//! controller already has.

use std::future::Future;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD as B64;
use mobiwf_cluster::retry::Complaints;
use serde_json::{Value, json};

/// How long any one call to etcd may take before it counts as failed.
pub const CALL_TIMEOUT: Duration = Duration::from_secs(5);

/// A failure to reach etcd, or its refusal.
#[derive(Debug, thiserror::Error)]
pub enum LinkError {
    /// No endpoint answered.
    #[error("etcd: no endpoint answered ({0})")]
    Unreachable(String),
    /// etcd answered with an error.
    #[error("etcd refused {call}: {why}")]
    Refused {
        /// What was asked.
        call: &'static str,
        /// The HTTP status of its answer.
        status: u16,
        /// etcd's words.
        why: String,
    },
    /// The answer is not what etcd's API says.
    #[error("etcd: an answer to {0} that cannot be read")]
    Unreadable(&'static str),
    /// The call did not end within [`CALL_TIMEOUT`].
    #[error("etcd: no answer within {CALL_TIMEOUT:?}")]
    Timeout,
    /// The link's runtime is gone (the process is stopping).
    #[error("etcd: the link is closed")]
    Closed,
}

impl LinkError {
    /// Whether asking again later may get another answer: etcd did not answer, or answered
    /// that it cannot now (no leader, too busy: HTTP 5xx or 429). A refusal of the request
    /// itself, an answer that cannot be read, or a closed link stay as they are.
    pub fn is_transient(&self) -> bool {
        match self {
            LinkError::Unreachable(_) | LinkError::Timeout => true,
            LinkError::Refused { status, .. } => *status >= 500 || *status == 429,
            LinkError::Unreadable(_) | LinkError::Closed => false,
        }
    }
}

/// A key and its value as etcd holds them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KeyValue {
    /// The key.
    pub key: Vec<u8>,
    /// The value.
    pub value: Vec<u8>,
    /// The revision that created it (since it was last absent).
    pub create_revision: i64,
    /// The lease it is bound to (0: none).
    pub lease: i64,
}

/// A transaction's condition, each an equality.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Condition {
    /// The key's creation revision is this one (0: the key is absent).
    Created(Vec<u8>, i64),
}

/// A write inside a transaction.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Write {
    /// Sets a key, bound to a lease when one is given.
    Put(Vec<u8>, Vec<u8>, Option<i64>),
    /// Removes a key.
    Delete(Vec<u8>),
    /// Removes every key in `[from, end)`: one operation, however many keys.
    DeleteRange(Vec<u8>, Vec<u8>),
}

/// What a transaction did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TxnAnswer {
    /// The conditions held, and the writes were made.
    pub succeeded: bool,
    /// The store's revision after it (the revision of its writes when it made some).
    pub revision: i64,
    /// Otherwise: the value of the key it was asked to read then, if any.
    pub read: Option<KeyValue>,
}

/// The etcd endpoints and an HTTP client for them (cheap to clone).
#[derive(Clone)]
pub struct Etcd {
    http: reqwest::Client,
    endpoints: Arc<Vec<String>>,
}

/// `bytes` as etcd's JSON carries them.
fn b64(bytes: &[u8]) -> String {
    B64.encode(bytes)
}

/// An int64 of etcd's JSON (a string; absent when 0).
fn int(value: &Value, field: &str) -> i64 {
    match &value[field] {
        Value::String(s) => s.parse().unwrap_or(0),
        Value::Number(n) => n.as_i64().unwrap_or(0),
        _ => 0,
    }
}

/// The bytes of a base64 field (absent: empty).
fn bytes(value: &Value, field: &str) -> Option<Vec<u8>> {
    match &value[field] {
        Value::String(s) => B64.decode(s).ok(),
        Value::Null => Some(Vec::new()),
        _ => None,
    }
}

fn key_value(kv: &Value) -> Option<KeyValue> {
    Some(KeyValue {
        key: bytes(kv, "key")?,
        value: bytes(kv, "value")?,
        create_revision: int(kv, "create_revision"),
        lease: int(kv, "lease"),
    })
}

fn key_values(answer: &Value, call: &'static str) -> Result<Vec<KeyValue>, LinkError> {
    match &answer["kvs"] {
        Value::Null => Ok(Vec::new()),
        Value::Array(kvs) => kvs
            .iter()
            .map(|kv| key_value(kv).ok_or(LinkError::Unreadable(call)))
            .collect(),
        _ => Err(LinkError::Unreadable(call)),
    }
}

impl Etcd {
    /// Posts `body` to `path` at the first endpoint that answers; its JSON answer.
    async fn post(&self, call: &'static str, path: &str, body: Value) -> Result<Value, LinkError> {
        let mut failures = Vec::new();
        for endpoint in self.endpoints.iter() {
            let sent = self
                .http
                .post(format!("{endpoint}{path}"))
                .json(&body)
                .send()
                .await;
            let response = match sent {
                Ok(response) => response,
                Err(e) => {
                    failures.push(format!("{endpoint}: {e}"));
                    continue;
                }
            };
            let status = response.status();
            let answer = response.json::<Value>().await;
            if !status.is_success() {
                let why = answer.as_ref().ok().and_then(|a| a["error"].as_str());
                let refused = LinkError::Refused {
                    call,
                    status: status.as_u16(),
                    why: format!("{status}: {}", why.unwrap_or("no reason given")),
                };
                // A member that cannot answer now (no leader, too busy): another may.
                if refused.is_transient() {
                    failures.push(format!("{endpoint}: {refused}"));
                    continue;
                }
                return Err(refused);
            }
            return answer.map_err(|_| LinkError::Unreadable(call));
        }
        Err(LinkError::Unreachable(failures.join("; ")))
    }

    /// The keys in `[key, end)` (`end` `None`: `key` alone), at most `limit` (0: all), in
    /// key order.
    pub async fn range(
        &self,
        key: Vec<u8>,
        end: Option<Vec<u8>>,
        limit: i64,
    ) -> Result<Vec<KeyValue>, LinkError> {
        let mut body = json!({ "key": b64(&key), "limit": limit.to_string() });
        if let Some(end) = end {
            body["range_end"] = json!(b64(&end));
        }
        let answer = self.post("a range", "/v3/kv/range", body).await?;
        key_values(&answer, "a range")
    }

    /// Sets `key`, bound to `lease` when given.
    pub async fn put(
        &self,
        key: Vec<u8>,
        value: Vec<u8>,
        lease: Option<i64>,
    ) -> Result<(), LinkError> {
        let mut body = json!({ "key": b64(&key), "value": b64(&value) });
        if let Some(lease) = lease {
            body["lease"] = json!(lease.to_string());
        }
        self.post("a put", "/v3/kv/put", body).await.map(|_| ())
    }

    /// One transaction: `writes` if every condition holds, else a read of `otherwise`.
    pub async fn txn(
        &self,
        when: Vec<Condition>,
        writes: Vec<Write>,
        otherwise: Option<Vec<u8>>,
    ) -> Result<TxnAnswer, LinkError> {
        let compare: Vec<Value> = when
            .iter()
            .map(|Condition::Created(key, revision)| {
                json!({ "target": "CREATE", "result": "EQUAL", "key": b64(key),
                        "create_revision": revision.to_string() })
            })
            .collect();
        let success: Vec<Value> = writes
            .iter()
            .map(|w| match w {
                Write::Put(key, value, lease) => json!({ "request_put": {
                    "key": b64(key), "value": b64(value),
                    "lease": lease.unwrap_or(0).to_string() } }),
                Write::Delete(key) => json!({ "request_delete_range": { "key": b64(key) } }),
                Write::DeleteRange(from, end) => json!({ "request_delete_range": {
                    "key": b64(from), "range_end": b64(end) } }),
            })
            .collect();
        let failure: Vec<Value> = otherwise
            .iter()
            .map(|key| json!({ "request_range": { "key": b64(key) } }))
            .collect();
        let body = json!({ "compare": compare, "success": success, "failure": failure });
        let answer = self.post("a transaction", "/v3/kv/txn", body).await?;
        let succeeded = answer["succeeded"].as_bool().unwrap_or(false);
        let read = match &answer["responses"][0]["response_range"] {
            Value::Null => None,
            range => key_values(range, "a transaction")?.into_iter().next(),
        };
        Ok(TxnAnswer {
            succeeded,
            revision: int(&answer["header"], "revision"),
            read,
        })
    }

    /// A new lease of `ttl` seconds: its id and granted time to live.
    pub async fn lease_grant(&self, ttl: i64) -> Result<(i64, i64), LinkError> {
        let answer = self
            .post(
                "a lease",
                "/v3/lease/grant",
                json!({ "TTL": ttl.to_string() }),
            )
            .await?;
        match int(&answer, "ID") {
            0 => Err(LinkError::Unreadable("a lease")),
            id => Ok((id, int(&answer, "TTL"))),
        }
    }

    /// Renews lease `id`; its time to live now (0: it is gone).
    pub async fn lease_keep_alive(&self, id: i64) -> Result<i64, LinkError> {
        let answer = self
            .post(
                "a lease renewal",
                "/v3/lease/keepalive",
                json!({ "ID": id.to_string() }),
            )
            .await?;
        Ok(int(&answer["result"], "TTL"))
    }

    /// Ends lease `id` now: every key bound to it goes.
    pub async fn lease_revoke(&self, id: i64) -> Result<(), LinkError> {
        self.post(
            "a lease's end",
            "/v3/lease/revoke",
            json!({ "ID": id.to_string() }),
        )
        .await
        .map(|_| ())
    }
}

/// The connection to etcd and the runtime its calls run on.
pub struct EtcdLink {
    /// `None` only while dropped.
    runtime: Option<tokio::runtime::Runtime>,
    etcd: Etcd,
    /// What was said about etcd not answering, and when: one for the whole process, so that
    /// an outage is said every few seconds, not once per caller, and its end once.
    complaints: Mutex<Complaints>,
}

impl EtcdLink {
    /// A link to etcd at `endpoints` (`http://HOST:PORT`, `https://HOST:PORT`, or
    /// `HOST:PORT` for http), tried in order; checks that one answers.
    pub fn connect(endpoints: &[String]) -> anyhow::Result<EtcdLink> {
        let link = EtcdLink::new(endpoints)?;
        link.run(|etcd| async move { etcd.range(b"\0".to_vec(), None, 1).await })
            .map_err(|e| anyhow::anyhow!("cannot reach etcd at {:?}: {e}", link.endpoints()))?;
        Ok(link)
    }

    /// A link to etcd at `endpoints`, whether or not one answers now (a controller started
    /// before its etcd waits for it).
    pub fn new(endpoints: &[String]) -> anyhow::Result<EtcdLink> {
        if endpoints.is_empty() {
            anyhow::bail!("no etcd endpoint given");
        }
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .thread_name("etcd")
            .enable_all()
            .build()?;
        let endpoints: Vec<String> = endpoints
            .iter()
            .map(|e| {
                let e = e.trim().trim_end_matches('/');
                if e.contains("://") {
                    e.to_owned()
                } else {
                    format!("http://{e}")
                }
            })
            .collect();
        let http = mobiwf_runtime::tls::client_builder(None)?
            .timeout(CALL_TIMEOUT)
            .build()?;
        Ok(EtcdLink {
            runtime: Some(runtime),
            etcd: Etcd {
                http,
                endpoints: Arc::new(endpoints),
            },
            complaints: Mutex::new(Complaints::default()),
        })
    }

    /// Says that etcd did not answer while `what` was done (`e`), asking again after `wait`:
    /// the first time at once, then at most every few seconds.
    pub fn complain(&self, what: &str, e: &dyn std::fmt::Display, wait: Duration) {
        if self.complaints().failed(std::time::Instant::now()) {
            tracing::warn!(
                "etcd at {} does not answer ({what}): {e:#}; waiting for it, asking again in \
                 {wait:?}",
                self.endpoints().join(",")
            );
        }
    }

    /// A call got through: says once, after failures, that etcd answers again.
    pub fn answered(&self) {
        if self.complaints().succeeded() {
            tracing::info!("etcd at {} answers again", self.endpoints().join(","));
        }
    }

    fn complaints(&self) -> std::sync::MutexGuard<'_, Complaints> {
        self.complaints
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// The endpoints it tries, in order.
    pub fn endpoints(&self) -> &[String] {
        &self.etcd.endpoints
    }

    /// Runs `call` on the link's runtime and waits for it, from any thread (blocking it, as
    /// a disk would).
    pub fn run<T, F, Fut>(&self, call: F) -> Result<T, LinkError>
    where
        T: Send + 'static,
        F: FnOnce(Etcd) -> Fut,
        Fut: Future<Output = Result<T, LinkError>> + Send + 'static,
    {
        let runtime = self.runtime.as_ref().ok_or(LinkError::Closed)?;
        let (tx, rx) = std::sync::mpsc::channel();
        let future = call(self.etcd.clone());
        runtime.spawn(async move {
            let answer = tokio::time::timeout(CALL_TIMEOUT, future).await;
            // The waiter may have given up; nothing to do then.
            let _ = tx.send(answer);
        });
        match rx.recv_timeout(CALL_TIMEOUT + Duration::from_secs(1)) {
            Ok(Ok(answer)) => answer,
            Ok(Err(_)) | Err(std::sync::mpsc::RecvTimeoutError::Timeout) => Err(LinkError::Timeout),
            Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => Err(LinkError::Closed),
        }
    }

    /// Runs `call` on the link's runtime, for an async caller on another runtime.
    pub async fn call<T, F, Fut>(&self, call: F) -> Result<T, LinkError>
    where
        T: Send + 'static,
        F: FnOnce(Etcd) -> Fut,
        Fut: Future<Output = Result<T, LinkError>> + Send + 'static,
    {
        let runtime = self.runtime.as_ref().ok_or(LinkError::Closed)?;
        let task = runtime.spawn(tokio::time::timeout(CALL_TIMEOUT, call(self.etcd.clone())));
        match task.await {
            Ok(Ok(answer)) => answer,
            Ok(Err(_)) => Err(LinkError::Timeout),
            Err(_) => Err(LinkError::Closed),
        }
    }

    /// Spawns `task` with the etcd handle on the link's runtime (the lease's renewals).
    pub fn spawn<F, Fut>(&self, task: F)
    where
        F: FnOnce(Etcd) -> Fut,
        Fut: Future<Output = ()> + Send + 'static,
    {
        if let Some(runtime) = &self.runtime {
            runtime.spawn(task(self.etcd.clone()));
        }
    }
}

impl Drop for EtcdLink {
    fn drop(&mut self) {
        // Dropping a runtime where blocking is not allowed (an async task) would panic.
        if let Some(runtime) = self.runtime.take() {
            runtime.shutdown_background();
        }
    }
}
