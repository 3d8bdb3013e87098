//! `status INSTANCE`, `list` (paged, filtered) and `nodes`: what the running controller
//! knows.

use std::process::ExitCode;

use mobiwf_book::{Instance, NodeInfo};
use mobiwf_controller::listing::Page;

use super::api_client::{ApiArgs, json};
use mobiwf_controller::table;

/// Shows one instance (exit 1 when there is no such instance).
pub async fn instance(api: &ApiArgs, id: u64, as_json: bool) -> anyhow::Result<ExitCode> {
    let request = api.client()?.get(api.url(&format!("/instances/{id}")));
    match json(request, api).await? {
        Ok(body) => {
            if as_json {
                println!("{}", serde_json::to_string_pretty(&body)?);
            } else {
                let inst: Instance = serde_json::from_value(body)?;
                print!("{}", table::instance(&inst));
            }
            Ok(ExitCode::SUCCESS)
        }
        Err((_, message)) => {
            eprintln!("mobiwf-controller: {message}");
            Ok(ExitCode::from(1))
        }
    }
}

/// Shows an instance's data (exit 1 when there is no such instance).
pub async fn data(api: &ApiArgs, id: u64, as_json: bool) -> anyhow::Result<ExitCode> {
    let request = api.client()?.get(api.url(&format!("/instances/{id}")));
    let inst = match json(request, api).await? {
        Ok(body) => serde_json::from_value::<Instance>(body)?,
        Err((_, message)) => {
            eprintln!("mobiwf-controller: {message}");
            return Ok(ExitCode::from(1));
        }
    };
    let request = api.client()?.get(api.url(&format!("/instances/{id}/data")));
    let body = json(request, api)
        .await?
        .map_err(|(_, m)| anyhow::anyhow!(m))?;
    if as_json {
        println!("{}", serde_json::to_string_pretty(&body)?);
    } else {
        let view: mobiwf_controller::data::DataView = serde_json::from_value(body)?;
        print!("{}", table::data(&inst, &view));
    }
    Ok(ExitCode::SUCCESS)
}

/// What `list` shows: the filter and the page (`GET /instances`).
#[derive(Debug, Clone, Default, clap::Args)]
pub struct ListArgs {
    /// Only instances in this state (deploying, running, interrupted, succeeded, failed,
    /// cancelled, compensating, compensated, compensation_failed).
    #[arg(long, value_name = "STATE")]
    pub state: Option<String>,
    /// Only instances of this workflow (the definition's id).
    #[arg(long, value_name = "ID")]
    pub workflow: Option<String>,
    /// Only instances submitted at or after this time, ms since the epoch.
    #[arg(long, value_name = "MS")]
    pub since: Option<u64>,
    /// Only instances started from this deployed definition (any version).
    #[arg(long, value_name = "NAME")]
    pub definition: Option<String>,
    /// At most this many instances a page (1 to 1000; the controller's default is 100).
    #[arg(long, value_name = "N")]
    pub limit: Option<usize>,
    /// Start after this instance id (the `next` of the page before).
    #[arg(long, value_name = "ID")]
    pub after: Option<u64>,
    /// Every page, one after the other (otherwise one page, and where the next starts).
    #[arg(long)]
    pub all: bool,
}

impl ListArgs {
    /// The query string of one page, starting after `after`.
    fn query(&self, after: Option<u64>) -> Vec<(&'static str, String)> {
        let mut q = Vec::new();
        if let Some(s) = &self.state {
            q.push(("state", s.clone()));
        }
        if let Some(w) = &self.workflow {
            q.push(("workflow", w.clone()));
        }
        if let Some(d) = &self.definition {
            q.push(("definition", d.clone()));
        }
        if let Some(ms) = self.since {
            q.push(("since", ms.to_string()));
        }
        if let Some(n) = self.limit {
            q.push(("limit", n.to_string()));
        }
        if let Some(id) = after {
            q.push(("after", id.to_string()));
        }
        q
    }
}

/// Lists the instances, a page at a time (exit 1 for a filter the controller refuses).
pub async fn list(api: &ApiArgs, args: &ListArgs, as_json: bool) -> anyhow::Result<ExitCode> {
    let mut after = args.after;
    let mut shown = Vec::new();
    loop {
        let request = api
            .client()?
            .get(api.url("/instances"))
            .query(&args.query(after));
        let body = match json(request, api).await? {
            Ok(body) => body,
            Err((_, message)) => {
                eprintln!("mobiwf-controller: {message}");
                return Ok(ExitCode::from(1));
            }
        };
        let page: Page = serde_json::from_value(body)?;
        shown.extend(page.instances);
        after = page.next.map(|id| id.0);
        if !args.all || after.is_none() {
            break;
        }
    }
    if as_json {
        let page = Page {
            instances: shown,
            next: after.map(mobiwf_proto::InstanceId),
        };
        println!("{}", serde_json::to_string_pretty(&page)?);
        return Ok(ExitCode::SUCCESS);
    }
    print!("{}", table::instances(&shown));
    if let Some(next) = after {
        eprintln!("more after instance {next}: add --after {next} (or --all)");
    }
    Ok(ExitCode::SUCCESS)
}

/// Lists the registered nodes.
pub async fn nodes(api: &ApiArgs, as_json: bool) -> anyhow::Result<ExitCode> {
    let body = json(api.client()?.get(api.url("/nodes")), api)
        .await?
        .map_err(|(_, m)| anyhow::anyhow!(m))?;
    if as_json {
        println!("{}", serde_json::to_string_pretty(&body)?);
        return Ok(ExitCode::SUCCESS);
    }
    let nodes: Vec<NodeInfo> = serde_json::from_value(body)?;
    print!("{}", table::nodes(&nodes));
    Ok(ExitCode::SUCCESS)
}
