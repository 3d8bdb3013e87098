//! `cluster`: the members of a cluster of controllers, and each shard's owner and epoch, as
//! etcd holds them (no controller is asked: it works while none owns the book).

use std::process::ExitCode;

use mobiwf_controller::cluster::{EtcdLink, Layout, owner};

/// `cluster`'s options.
#[derive(Debug, clap::Args)]
pub struct ClusterArgs {
    /// The cluster's etcd (comma-separated client URLs).
    #[arg(long, value_name = "URL[,URL]", value_delimiter = ',', required = true)]
    pub etcd: Vec<String>,
    /// The prefix of the cluster's keys in etcd.
    #[arg(long, value_name = "PREFIX", default_value = mobiwf_controller::cluster::DEFAULT_PREFIX)]
    pub etcd_prefix: String,
    /// Print JSON.
    #[arg(long)]
    pub json: bool,
}

/// Prints the members and the shards' owners.
pub async fn run(args: ClusterArgs) -> anyhow::Result<ExitCode> {
    let endpoints = args.etcd.clone();
    let link = tokio::task::spawn_blocking(move || EtcdLink::connect(&endpoints)).await??;
    let layout = Layout::new(&args.etcd_prefix);
    let Some(record) = owner::cluster_record(&link, &layout).await? else {
        anyhow::bail!(
            "there is no cluster under {:?} in this etcd",
            args.etcd_prefix
        );
    };
    let members = owner::live_members(&link, &layout).await?;
    let mut shards = Vec::new();
    for shard in record.shards.all() {
        shards.push((shard, owner::owner(&link, &layout, shard).await?));
    }
    if args.json {
        let shards: Vec<serde_json::Value> = shards
            .iter()
            .map(|(shard, owner)| {
                serde_json::json!({
                    "shard": shard.0,
                    "owner": owner.as_ref().map(|(o, _)| o.member.0.clone()),
                    "epoch": owner.as_ref().map(|(_, e)| e.0),
                })
            })
            .collect();
        let members: Vec<serde_json::Value> = members
            .iter()
            .map(|m| serde_json::json!({ "member": m.member.0, "api": m.api }))
            .collect();
        let all = serde_json::json!({ "shards": shards, "members": members });
        println!("{}", serde_json::to_string_pretty(&all)?);
        return Ok(ExitCode::SUCCESS);
    }
    println!("members ({}):", members.len());
    for m in &members {
        println!("  {}  API {}", m.member, m.api);
    }
    println!("shards ({}):", record.shards.get());
    for (shard, owner) in &shards {
        match owner {
            Some((o, epoch)) => println!("  {shard}  owner {}  epoch {epoch}", o.member),
            None => println!("  {shard}  no owner"),
        }
    }
    Ok(ExitCode::SUCCESS)
}
