//! `status INSTANCE`, `list` and `nodes`: what the running controller knows.

use std::process::ExitCode;

use mobiwf_book::{Instance, NodeInfo};

use super::api_client::{ApiArgs, json};
use super::table;

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

/// Lists every instance.
pub async fn list(api: &ApiArgs, as_json: bool) -> anyhow::Result<ExitCode> {
    let body = json(api.client()?.get(api.url("/instances")), api)
        .await?
        .map_err(|(_, m)| anyhow::anyhow!(m))?;
    if as_json {
        println!("{}", serde_json::to_string_pretty(&body)?);
        return Ok(ExitCode::SUCCESS);
    }
    let all: Vec<Instance> = serde_json::from_value(body)?;
    print!("{}", table::instances(&all));
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
