//! The demo's first part: a controller and the partner nodes a workflow needs, started in
//! this process, the workflow (in any of the three languages) deployed and one instance of it
//! started by name, as operators run work, its progress shown as the controller learns of it,
//! then the final table.

use std::collections::BTreeMap;
use std::path::Path;
use std::process::ExitCode;
use std::time::Duration;

use mobiwf_book::{Instance, InstanceState};
use mobiwf_controller::ControllerConfig;
use mobiwf_node::NodeConfig;
use mobiwf_proto::{ActivityId, ActivityState, InstanceId, Millis};
use mobiwf_runtime::metrics::Peer;

use anyhow::Context;
use mobiwf_controller::table;

/// The paper's example workflow, shipped in the binary so the demo runs from anywhere.
const PAPER: &[u8] = include_bytes!("../../examples/paper/workflow.xml");
/// Where [`PAPER`] comes from, as the demo names it.
const PAPER_SOURCE: &str = "examples/paper/workflow.xml";

fn loopback() -> anyhow::Result<Vec<libp2p::Multiaddr>> {
    Ok(vec!["/ip4/127.0.0.1/tcp/0".parse()?])
}

/// The demo's controller, in `dir/controller`, with its address and API printed.
async fn start_controller(
    dir: &Path,
    hour_ms: u64,
) -> anyhow::Result<mobiwf_controller::Controller> {
    let controller = mobiwf_controller::start(ControllerConfig {
        data_dir: dir.join("controller"),
        listen: loopback()?,
        api: "127.0.0.1:0".parse()?,
        api_tls: None,
        store: None,
        detector: Default::default(),
        hub_routing: false,
        hour_ms,
        open_enrolment: false,
        relay_server: true,
        swarm_key: None,
        api_auth: true,
        retain_finished: None,
        admission: mobiwf_controller::admission::Policy::Adaptive,
        inbound: Default::default(),
    })
    .await?;
    let controller_addr = controller.addrs.first().cloned().unwrap_or_default();
    println!("controller   {controller_addr}");
    println!(
        "             API {} (token: {})",
        controller.api_url(),
        dir.join("controller")
            .join(mobiwf_controller::daemon::OPERATOR_TOKEN_FILE)
            .display()
    );
    Ok(controller)
}

/// Runs the demo; exit 0 when the instance succeeded, 1 otherwise. With `stay`, the daemons
/// then stay up until Ctrl-C or SIGTERM, their sign-in links printed (`stay`).
pub async fn run(
    file: Option<&Path>,
    timeout_secs: u64,
    hour_ms: u64,
    stay: bool,
) -> anyhow::Result<ExitCode> {
    let (bytes, source) = match file {
        Some(f) => (
            std::fs::read(f).with_context(|| format!("cannot read {}", f.display()))?,
            f.display().to_string(),
        ),
        None => (PAPER.to_vec(), PAPER_SOURCE.to_owned()),
    };
    let def = match mobiwf_xml_schema::load_definition_named(&source, &bytes) {
        Ok(l) => l.value,
        Err(d) => {
            eprint!("{}", d.render(&source));
            return Ok(ExitCode::from(1));
        }
    };
    let dir = tempfile::Builder::new().prefix("mobiwf-demo-").tempdir()?;
    let controller = start_controller(dir.path(), hour_ms).await?;
    let controller_addr = controller.addrs.first().cloned().unwrap_or_default();

    let wanted = nodes_wanted(&def);
    let mut nodes = Vec::new();
    for (i, (name, skills)) in wanted.iter().enumerate() {
        nodes.push(start_node(dir.path(), i, hour_ms, name, skills, &controller_addr).await?);
    }

    let client = controller.client();
    let deadline = tokio::time::Instant::now() + Duration::from_secs(timeout_secs);
    wait_registered(&client, nodes.len(), deadline, timeout_secs).await?;
    let Some(id) = deploy_and_start(&client, bytes, &source, &def).await? else {
        return Ok(ExitCode::from(1));
    };

    let outcome = follow(&client, id, deadline).await?;

    show_notifications(&nodes, &wanted);
    let Some(inst) = outcome else {
        anyhow::bail!("instance {id} vanished");
    };
    println!();
    print!("{}", table::instance(&inst));
    // Without a file, the demo goes on with people: a manual activity on worklists.
    let (people_ok, people_nodes) = if file.is_none() && inst.state() == InstanceState::Succeeded {
        super::people::run(&client, dir.path(), &controller_addr, deadline).await?
    } else {
        (true, Vec::new())
    };
    if stay {
        stay_up(&controller, dir.path(), &people_nodes, timeout_secs).await?;
    } else {
        println!(
            "\nTo look at it in a browser (the console, alice's worklist): scripts/demo --stay"
        );
    }
    for node in people_nodes.into_iter().chain(nodes) {
        node.stop().await;
    }
    controller.stop().await;
    Ok(exit_code(inst.state(), people_ok, id, timeout_secs))
}

/// `--stay`: leaves an inspection on alice's worklist on N2 (when the people part ran, its
/// nodes `people`), prints the console's and her worklist's sign-in links, and returns on
/// Ctrl-C or SIGTERM.
async fn stay_up(
    controller: &mobiwf_controller::Controller,
    dir: &Path,
    people: &[mobiwf_node::Node],
    timeout_secs: u64,
) -> anyhow::Result<()> {
    let device = match people.get(1) {
        Some(n2) => {
            let deadline = tokio::time::Instant::now() + Duration::from_secs(timeout_secs);
            let waiting =
                super::stay::leave_work(&controller.client(), &n2.client(), deadline).await?;
            Some(super::stay::Device {
                node: n2,
                dir: dir.join(super::people::N2_DIR),
                waiting,
            })
        }
        None => None,
    };
    super::stay::show_links(controller, dir, device.as_ref()).await?;
    super::stay::until_stopped().await
}

/// Deploys the workflow in `bytes` under its own `<name>`, else the name of its file
/// (`paper` for the one shipped), and starts an instance of it by name: its id, or none when
/// the controller refused (said on standard error).
async fn deploy_and_start(
    client: &mobiwf_controller::daemon::ControllerClient,
    bytes: Vec<u8>,
    source: &str,
    def: &mobiwf_xml_schema::WorkflowDefinition,
) -> anyhow::Result<Option<InstanceId>> {
    let name = match &def.name {
        Some(name) => name.to_string(),
        None => demo_name(source),
    };
    let request = mobiwf_book::Deploy {
        document: bytes,
        source: source.to_owned(),
        name: Some(name.clone()),
    };
    let deployed = match client.deploy(request).await? {
        Ok(deployed) => deployed.definition,
        Err(e) => {
            eprintln!("{e}");
            return Ok(None);
        }
    };
    let start = mobiwf_book::Start {
        name: deployed.name.clone(),
        version: None,
        responsible: None,
        starter: mobiwf_book::Starter::Anyone,
        inputs: Default::default(),
    };
    match client.start(start).await? {
        Ok(started) => {
            println!(
                "\n{source} deployed as {deployed}; instance {} started by name\n",
                started.instance
            );
            Ok(Some(started.instance))
        }
        Err(e) => {
            eprintln!("{e}");
            Ok(None)
        }
    }
}

/// The name the demo deploys a workflow without a `<name>` under: its file's stem when that is
/// a definition name, `paper` for the shipped example, else `demo`.
fn demo_name(source: &str) -> String {
    if source == PAPER_SOURCE {
        return "paper".to_owned();
    }
    Path::new(source)
        .file_stem()
        .and_then(|s| s.to_str())
        .filter(|s| mobiwf_xml_schema::definition_name_problem(s).is_none())
        .unwrap_or("demo")
        .to_owned()
}

/// The demo's exit status once instance `id` is in `state` (and the people part went as
/// `people_ok` says): 0 when both succeeded, 1 when either failed, 2 when the instance did not
/// finish within `timeout_secs`.
fn exit_code(state: InstanceState, people_ok: bool, id: InstanceId, timeout_secs: u64) -> ExitCode {
    match state {
        InstanceState::Succeeded if people_ok => ExitCode::SUCCESS,
        InstanceState::Succeeded => ExitCode::from(1),
        InstanceState::Failed
        | InstanceState::Cancelled
        | InstanceState::Compensated
        | InstanceState::CompensationFailed => ExitCode::from(1),
        InstanceState::Deploying
        | InstanceState::Running
        | InstanceState::Interrupted
        | InstanceState::Compensating => {
            eprintln!("mobiwf-demo: instance {id} did not finish within {timeout_secs} s");
            ExitCode::from(2)
        }
    }
}

/// The nodes register through the mesh: waits until the controller has heard `count` of them.
async fn wait_registered(
    client: &mobiwf_controller::ControllerClient,
    count: usize,
    deadline: tokio::time::Instant,
    timeout_secs: u64,
) -> anyhow::Result<()> {
    loop {
        let seen = client.version();
        if client.nodes().await?.len() >= count {
            return Ok(());
        }
        if !client.changed(seen, deadline).await {
            anyhow::bail!("the nodes did not register within {timeout_secs} s");
        }
    }
}

/// The proof that partners talk to each other directly: who received the notifications.
fn show_notifications(nodes: &[mobiwf_node::Node], wanted: &[(String, Vec<u64>)]) {
    let by_node: Vec<String> = nodes
        .iter()
        .zip(wanted)
        .map(|(node, (name, _))| {
            let n = node
                .client()
                .metrics
                .received_count("notify", Peer::Partner);
            format!("{name} {n}")
        })
        .collect();
    println!(
        "\nnotifications received straight from another partner (not via the controller): {}",
        by_node.join(", ")
    );
}

/// One node per partner the workflow names; two general nodes when it names none.
fn nodes_wanted(def: &mobiwf_xml_schema::WorkflowDefinition) -> Vec<(String, Vec<u64>)> {
    let all_types: Vec<u64> = def.activity_types.iter().map(|t| t.id.0).collect();
    if def.partners.is_empty() {
        vec![
            ("node-1".to_owned(), all_types.clone()),
            ("node-2".to_owned(), all_types),
        ]
    } else {
        def.partners
            .iter()
            .map(|p| (p.name.clone(), p.skills.iter().map(|s| s.0).collect()))
            .collect()
    }
}

/// Starts the `i`-th node of the demo, named `name`, with an hour of `hour_ms`, and says
/// where it listens.
pub(super) async fn start_node(
    dir: &Path,
    i: usize,
    hour_ms: u64,
    name: &str,
    skills: &[u64],
    controller: &str,
) -> anyhow::Result<mobiwf_node::Node> {
    let node = mobiwf_node::start(NodeConfig {
        data_dir: dir.join(format!("node-{i}")),
        name: name.into(),
        skills: skills
            .iter()
            .copied()
            .map(mobiwf_proto::ActivityTypeId)
            .collect(),
        controller: mobiwf_runtime::outbox::location(controller).map_err(anyhow::Error::msg)?,
        listen: loopback()?,
        api: "127.0.0.1:0".parse()?,
        api_tls: None,
        store: None,
        prefetch: true,
        hour_ms,
        join_token: Some(mobiwf_runtime::secret::read_token_file(
            &dir.join("controller")
                .join(mobiwf_controller::daemon::JOIN_TOKEN_FILE),
        )?),
        via_relay: None,
        relay_server: false,
        swarm_key: None,
        commands: mobiwf_node::command_policy::CommandPolicy::Any,
        api_auth: true,
        inbound: Default::default(),
        applications: Vec::new(),
    })
    .await?;
    let skills: Vec<String> = skills.iter().map(u64::to_string).collect();
    println!(
        "node {name:<7} {} (skills {})",
        node.addrs.first().map_or("-", String::as_str),
        skills.join(",")
    );
    Ok(node)
}

/// Shows each activity as the controller learns of it until the instance is final or the
/// deadline passes; the instance then.
async fn follow(
    client: &mobiwf_controller::ControllerClient,
    id: mobiwf_proto::InstanceId,
    deadline: tokio::time::Instant,
) -> anyhow::Result<Option<Instance>> {
    let mut shown: BTreeMap<ActivityId, ActivityState> = BTreeMap::new();
    Ok(loop {
        let seen = client.version();
        let Some(inst) = client.instance(id).await? else {
            anyhow::bail!("instance {id} vanished");
        };
        show_progress(&inst, &mut shown);
        if inst.state().is_final() {
            break Some(inst);
        }
        if !client.changed(seen, deadline).await {
            break client.instance(id).await?;
        }
    })
}

fn show_progress(inst: &Instance, shown: &mut BTreeMap<ActivityId, ActivityState>) {
    for a in &inst.activities {
        if a.state().is_pending() || shown.get(&a.id) == Some(&a.state()) {
            continue;
        }
        shown.insert(a.id, a.state());
        let when = a.finished_ms.or(a.started_ms).map_or(String::new(), |t| {
            format!("+{}", Millis(t).since(Millis(inst.submitted_ms)))
        });
        println!(
            "  {when:>9}  {} ({}) on {}: {}",
            a.name,
            a.id,
            a.node.as_ref().map_or("-", |n| n.as_str()),
            a.state().as_str()
        );
    }
}
