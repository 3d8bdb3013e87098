//! The HTTP calls the benchmark makes to the controller and the nodes: the same API an
//! operator's tools use.

use std::collections::BTreeMap;
use std::time::Duration;

use mobiwf_proto::ActivityRecord;
use serde::Deserialize;

/// How long one call may take (a wait for an instance included).
const CALL_TIMEOUT: Duration = Duration::from_secs(120);

/// A client that sends `token` with every request (`Authorization: Bearer`); its TLS is the
/// CLIs' (`mobiwf_runtime::tls`), though the daemons the benchmark starts serve plain HTTP.
pub(crate) fn client(token: &str) -> anyhow::Result<reqwest::Client> {
    let mut bearer = reqwest::header::HeaderValue::from_str(&format!("Bearer {token}"))?;
    bearer.set_sensitive(true);
    let headers = reqwest::header::HeaderMap::from_iter([(reqwest::header::AUTHORIZATION, bearer)]);
    Ok(mobiwf_runtime::tls::client_builder(None)?
        .default_headers(headers)
        .timeout(CALL_TIMEOUT)
        .pool_max_idle_per_host(1024)
        .build()?)
}

/// A submission the controller shed (429: too many instances under way; nothing was
/// stored), as [`ControllerApi::submit`]'s error.
#[derive(Debug)]
pub struct Shed {
    /// When the controller said to try again.
    pub retry_after: Option<Duration>,
    /// What it said.
    pub message: String,
}

impl std::fmt::Display for Shed {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.retry_after {
            Some(after) => write!(
                f,
                "submission shed (429, retry after {} s): {}",
                after.as_secs(),
                self.message
            ),
            None => write!(f, "submission shed (429): {}", self.message),
        }
    }
}

impl std::error::Error for Shed {}

/// The controller's API.
#[derive(Clone)]
pub struct ControllerApi {
    base: String,
    http: reqwest::Client,
}

#[derive(Deserialize)]
struct Submitted {
    instance: u64,
}

#[derive(Deserialize)]
struct InstanceSummary {
    state: String,
    detail: Option<String>,
}

#[derive(Deserialize)]
struct NodeSummary {
    name: String,
}

impl ControllerApi {
    /// The API at `base` (`http://HOST:PORT`), asked with `token`.
    pub fn new(base: &str, token: &str) -> anyhow::Result<ControllerApi> {
        Ok(ControllerApi {
            base: base.to_owned(),
            http: client(token)?,
        })
    }

    /// Submits a definition; the new instance's id, or an error ([`Shed`] for a 429).
    pub async fn submit(&self, xml: &str) -> anyhow::Result<u64> {
        let response = self
            .http
            .post(format!("{}/instances?source=bench", self.base))
            .body(xml.to_owned())
            .send()
            .await?;
        if response.status() == reqwest::StatusCode::TOO_MANY_REQUESTS {
            let retry_after = response
                .headers()
                .get(reqwest::header::RETRY_AFTER)
                .and_then(|v| v.to_str().ok())
                .and_then(|v| v.parse().ok())
                .map(Duration::from_secs);
            let message = response.text().await?;
            return Err(Shed {
                retry_after,
                message,
            }
            .into());
        }
        if !response.status().is_success() {
            anyhow::bail!("submission refused: {}", response.text().await?);
        }
        Ok(response.json::<Submitted>().await?.instance)
    }

    /// Waits until the instance is final; an error unless it succeeded.
    pub async fn wait_succeeded(&self, id: u64) -> anyhow::Result<()> {
        let response = self
            .http
            .get(format!("{}/instances/{id}/wait?timeout=60", self.base))
            .send()
            .await?
            .error_for_status()?;
        let inst: InstanceSummary = response.json().await?;
        if inst.state != "succeeded" {
            anyhow::bail!(
                "instance {id} ended {} ({})",
                inst.state,
                inst.detail.unwrap_or_default()
            );
        }
        Ok(())
    }

    /// The names of the registered nodes.
    pub async fn node_names(&self) -> anyhow::Result<Vec<String>> {
        let nodes: Vec<NodeSummary> = self
            .http
            .get(format!("{}/nodes", self.base))
            .send()
            .await?
            .error_for_status()?
            .json()
            .await?;
        Ok(nodes.into_iter().map(|n| n.name).collect())
    }

    /// Messages the controller received and sent so far, by kind.
    pub async fn messages(&self) -> anyhow::Result<BTreeMap<String, f64>> {
        let text = self
            .http
            .get(format!("{}/metrics", self.base))
            .send()
            .await?
            .error_for_status()?
            .text()
            .await?;
        Ok(message_counts(&text))
    }

    /// The unlabelled metric `name` (`mobiwf_instances_in_memory`, ...).
    pub async fn gauge(&self, name: &str) -> anyhow::Result<f64> {
        gauge(&self.http, &self.base, name).await
    }
}

/// The value of the unlabelled metric `name` in a Prometheus text answer.
pub fn gauge_in(prometheus: &str, name: &str) -> Option<f64> {
    prometheus.lines().find_map(|line| {
        let value = line.strip_prefix(name)?.strip_prefix(' ')?;
        value.trim().parse().ok()
    })
}

/// The unlabelled metric `name` of the daemon at `base`.
async fn gauge(http: &reqwest::Client, base: &str, name: &str) -> anyhow::Result<f64> {
    let text = http
        .get(format!("{base}/metrics"))
        .send()
        .await?
        .error_for_status()?
        .text()
        .await?;
    gauge_in(&text, name).ok_or_else(|| anyhow::anyhow!("{base}/metrics has no {name}"))
}

/// Sums `mobiwf_messages_received_total` and `mobiwf_messages_sent_total` by `kind`.
pub fn message_counts(prometheus: &str) -> BTreeMap<String, f64> {
    let mut counts = BTreeMap::new();
    for line in prometheus.lines() {
        let counted = line.starts_with("mobiwf_messages_received_total{")
            || line.starts_with("mobiwf_messages_sent_total{");
        if !counted {
            continue;
        }
        let kind = line
            .split("kind=\"")
            .nth(1)
            .and_then(|r| r.split('"').next())
            .unwrap_or("?");
        let value: f64 = line
            .rsplit(' ')
            .next()
            .and_then(|v| v.parse().ok())
            .unwrap_or(0.0);
        *counts.entry(kind.to_owned()).or_insert(0.0) += value;
    }
    counts
}

/// A node's API.
#[derive(Clone)]
pub struct NodeApi {
    base: String,
    http: reqwest::Client,
}

/// One partition run as a node's `/runs` shows it.
#[derive(Deserialize)]
pub struct RunView {
    /// The instance.
    pub instance: u64,
    /// Its activities on this node.
    pub activities: Vec<ActivityRecord>,
}

/// A page of a node's `/runs`.
#[derive(Deserialize)]
struct RunsPage {
    runs: Vec<RunView>,
    next: Option<u64>,
}

impl NodeApi {
    /// The API at `base`, asked with `token`.
    pub fn new(base: &str, token: &str) -> anyhow::Result<NodeApi> {
        Ok(NodeApi {
            base: base.to_owned(),
            http: client(token)?,
        })
    }

    /// The unlabelled metric `name` (`mobiwf_runs_in_memory`, ...).
    pub async fn gauge(&self, name: &str) -> anyhow::Result<f64> {
        gauge(&self.http, &self.base, name).await
    }

    /// Every partition run the node holds, page after page.
    pub async fn runs(&self) -> anyhow::Result<Vec<RunView>> {
        let mut runs = Vec::new();
        let mut after = None;
        loop {
            let mut url = format!("{}/runs", self.base);
            if let Some(after) = after {
                url.push_str(&format!("?after={after}"));
            }
            let page: RunsPage = self
                .http
                .get(url)
                .send()
                .await?
                .error_for_status()?
                .json()
                .await?;
            runs.extend(page.runs);
            match page.next {
                Some(next) => after = Some(next),
                None => return Ok(runs),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_gauge_is_read_by_its_exact_name() {
        let text = "# HELP mobiwf_runs_in_memory x\nmobiwf_runs_in_memory_total 9\n\
                    mobiwf_runs_in_memory 3\n";
        assert_eq!(gauge_in(text, "mobiwf_runs_in_memory"), Some(3.0));
        assert_eq!(gauge_in(text, "mobiwf_instances_in_memory"), None);
    }

    #[test]
    fn message_counts_add_both_directions_by_kind() {
        let text = "# TYPE mobiwf_messages_sent counter\n\
            mobiwf_messages_sent_total{kind=\"deploy\",peer=\"partner\"} 4\n\
            mobiwf_messages_received_total{kind=\"report\",peer=\"partner\"} 6\n\
            mobiwf_messages_received_total{kind=\"deploy\",peer=\"controller\"} 1\n\
            mobiwf_send_failures_total{kind=\"deploy\",peer=\"partner\"} 9\n";
        let counts = message_counts(text);
        assert_eq!(counts.get("deploy"), Some(&5.0));
        assert_eq!(counts.get("report"), Some(&6.0));
        assert_eq!(counts.len(), 2);
    }
}
