//! One chaos run from start to end: the namespace, the mesh, the workflows, the plan drawn
//! from the seed; the submitter and the nemesis together for the run's time; the settle
//! period; the checker's verdict and the table.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use anyhow::{Context, bail};
use serde_json::Value;

use mobiwf_chaos::cost::{Span, latencies};
use mobiwf_chaos::report::{Tally, render};
use mobiwf_chaos::schedule::{Shape, plan};
use mobiwf_chaos::suspicion::{Suspicion, Window, false_suspicions};
use mobiwf_chaos::verdict::{Evidence, judge, parse_marks};
use mobiwf_chaos::workflows::{NODES, Workflow};
use mobiwf_testkit::netns::{self, Netns};

use crate::mesh::{Binaries, Controller, Node, NodeSpec};
use crate::nemesis::World;
use crate::{Args, NetnsMode, collect, load, nemesis, seconds};

/// How long a request waits for its answer on the mesh (`runtime`'s
/// `DEFAULT_REQUEST_TIMEOUT`): a stalled controller stays stopped longer.
const REQUEST_TIMEOUT_MS: u64 = 10_000;
/// The node of the mesh that runs in the namespace (the paper's P2).
const NAMESPACED: usize = 1;

/// A namespace was required and could not be set up.
#[derive(Debug)]
pub struct NoNetns(pub String);

impl std::fmt::Display for NoNetns {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "cannot set up a network namespace ({}); needs root and `ip netns`",
            self.0
        )
    }
}

impl std::error::Error for NoNetns {}

/// The namespace the run asked for, if the machine allows it.
fn namespace(mode: NetnsMode) -> anyhow::Result<Option<Netns>> {
    if mode == NetnsMode::Off {
        return Ok(None);
    }
    match Netns::create(netns::CHAOS, "") {
        Ok(net) => Ok(Some(net)),
        Err(e) if mode == NetnsMode::Require => Err(NoNetns(format!("{e:#}")).into()),
        Err(e) => {
            eprintln!("chaos: netns: skipped, no node in a namespace and no link cut ({e:#})");
            Ok(None)
        }
    }
}

/// The controller and the nodes, registered.
fn start_mesh(
    args: &Args,
    bins: &Binaries,
    dir: &Path,
    net: Option<Netns>,
) -> anyhow::Result<World> {
    let host_ip = net
        .as_ref()
        .map_or("127.0.0.1".to_owned(), |n| n.host_ip.clone());
    let suspect = format!("{}", args.suspect_after);
    let controller = Controller::start(
        bins,
        &dir.join("controller"),
        &format!("/ip4/{host_ip}/tcp/0"),
        &["--suspect-after".to_owned(), suspect],
    )?;
    let mut nodes = Vec::new();
    for (i, (name, skills)) in NODES.iter().enumerate() {
        let inside = net.as_ref().filter(|_| i == NAMESPACED);
        let spec = NodeSpec {
            dir: dir.join(name.to_lowercase()),
            name: (*name).to_owned(),
            skills: (*skills).to_owned(),
            controller: controller.address.clone(),
            join_token: controller.join_token_file(),
            ip: inside.map_or(host_ip.clone(), |n| n.ns_ip.clone()),
            netns: inside.map(|n| n.name.clone()),
        };
        nodes.push(Node::start(bins, spec)?);
    }
    wait_registered(&controller)?;
    let api = Arc::new(Mutex::new(controller.api.clone()));
    Ok(World {
        controller,
        nodes,
        netns: net,
        api,
        attack: None,
    })
}

/// Waits until every node of the mesh is registered.
fn wait_registered(controller: &Controller) -> anyhow::Result<()> {
    let deadline = Instant::now() + Duration::from_secs(60);
    while Instant::now() < deadline {
        let out = controller.cli(&["nodes", "--json"], Duration::from_secs(30))?;
        let names: Vec<String> = serde_json::from_str::<Value>(&out.stdout)
            .ok()
            .and_then(|v| v.as_array().cloned())
            .unwrap_or_default()
            .iter()
            .filter_map(|n| n["name"].as_str().map(str::to_owned))
            .collect();
        if NODES
            .iter()
            .all(|(n, _)| names.iter().any(|have| have == n))
        {
            return Ok(());
        }
        std::thread::sleep(Duration::from_millis(200));
    }
    bail!("the nodes did not all register within a minute")
}

/// Writes each workflow, marking into `marks`; their files.
fn write_workflows(dir: &Path, marks: &Path) -> anyhow::Result<Vec<PathBuf>> {
    let mut files = Vec::new();
    for w in Workflow::ALL {
        let file = dir.join(format!("{}.xml", w.name()));
        std::fs::write(&file, w.xml(&marks.display().to_string()))?;
        files.push(file);
    }
    Ok(files)
}

/// Where the run's files go.
fn work_dir(args: &Args) -> anyhow::Result<PathBuf> {
    let dir = args.dir.clone().unwrap_or_else(|| {
        std::env::temp_dir().join(format!("mobiwf-chaos-{}", std::process::id()))
    });
    if dir.exists() {
        std::fs::remove_dir_all(&dir).with_context(|| format!("clear {}", dir.display()))?;
    }
    std::fs::create_dir_all(&dir).with_context(|| format!("create {}", dir.display()))?;
    Ok(dir)
}

/// The binaries' directory: given, or this program's own.
fn binaries(args: &Args) -> anyhow::Result<Binaries> {
    let dir = match &args.bin_dir {
        Some(dir) => dir.clone(),
        None => std::env::current_exe()?
            .parent()
            .context("this program has no directory")?
            .to_owned(),
    };
    for name in ["mobiwf-controller", "mobiwf-node"] {
        if !dir.join(name).exists() {
            bail!(
                "{} is not in {} (build the workspace's binaries)",
                name,
                dir.display()
            );
        }
    }
    Ok(Binaries { dir })
}

/// The run; true when the checker found no violation.
pub fn run(args: &Args) -> anyhow::Result<bool> {
    let bins = binaries(args)?;
    let seed = args.seed.unwrap_or_else(|| {
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_secs())
    });
    let dir = work_dir(args)?;
    eprintln!(
        "chaos: seed {seed}, {} minutes, files in {}",
        args.minutes,
        dir.display()
    );
    let net = namespace(args.netns)?;
    let namespaced = net.is_some();
    let mut world = start_mesh(args, &bins, &dir, net)?;
    let marks = dir.join("marks");
    let files = write_workflows(&dir, &marks)?;
    let run_ms = u64::try_from(seconds(args.minutes * 60.0).as_millis()).unwrap_or(u64::MAX);
    let shape = Shape {
        nodes: world.nodes.len(),
        namespaced: namespaced.then_some(NAMESPACED),
        run_ms,
        suspect_after_ms: u64::try_from(seconds(args.suspect_after).as_millis()).unwrap_or(0),
        request_timeout_ms: REQUEST_TIMEOUT_MS,
    };
    let faults = plan(seed, &shape);
    let person_stop = Arc::new(AtomicBool::new(false));
    let p1 = world.nodes.first().context("no node")?;
    let person = load::Person {
        program: bins.path("mobiwf-node"),
        node_dir: p1.spec.dir.clone(),
    }
    .start(Arc::clone(&person_stop));
    let stop = Arc::new(AtomicBool::new(false));
    let submitter = load::Submitter {
        bins: bins.clone(),
        api: Arc::clone(&world.api),
        token: world.controller.token_file(),
        files,
        every: Duration::from_millis(args.submit_every_ms),
    }
    .start(Arc::clone(&stop));
    let done = nemesis::run(&mut world, &faults, Instant::now(), run_ms);
    stop.store(true, Ordering::SeqCst);
    let submitted = submitter
        .join()
        .map_err(|_| anyhow::anyhow!("the submitter panicked"))?;
    let done = done?;
    let tally = Tally {
        seed,
        faults: done.faults,
        submitted: submitted.ids.len(),
        refused: submitted.refused,
        completions: 0,
        namespaced,
        latency: std::collections::BTreeMap::new(),
        hostile: done.hostile,
    };
    let grace_ms = shape.suspect_after_ms + 3_000;
    let judged = Judged {
        ids: submitted.ids,
        windows: done.windows,
        spans: done.spans,
        grace_ms,
        person: Some((person, person_stop)),
    };
    check(args, &mut world, &dir, judged, tally)
}

/// What the checker holds the controller's view against, besides the marks.
struct Judged {
    /// The ids the submitter was given.
    ids: Vec<u64>,
    /// When each node was struck.
    windows: Vec<Window>,
    /// When each fault lasted.
    spans: Vec<Span>,
    /// How long after a fault of a node its suspicion is still explained.
    grace_ms: u64,
    /// The person at work (through the settle period: the last instances wait for her), and
    /// what stops her.
    person: Option<(JoinHandle<Vec<u64>>, Arc<AtomicBool>)>,
}

/// The settle period, the verdict and the table; true when clean.
fn check(
    args: &Args,
    world: &mut World,
    dir: &Path,
    mut judged: Judged,
    mut tally: Tally,
) -> anyhow::Result<bool> {
    eprintln!(
        "chaos: faults over; settling (at most {} s)",
        args.settle_seconds
    );
    match collect::settle(&world.controller, Duration::from_secs(args.settle_seconds)) {
        Some(took) => eprintln!(
            "chaos: every instance final after {:.1} s",
            took.as_secs_f64()
        ),
        None => eprintln!("chaos: not every instance was final after the settle period"),
    }
    let node_dirs: Vec<PathBuf> = world.nodes.iter().map(|n| n.spec.dir.clone()).collect();
    collect::commands_done(&node_dirs, Duration::from_secs(30));
    let mut completed = Vec::new();
    if let Some((person, stop)) = judged.person.take() {
        stop.store(true, Ordering::SeqCst);
        completed = person
            .join()
            .map_err(|_| anyhow::anyhow!("the person panicked"))?;
    }
    tally.completions = completed.len();
    world.check_alive()?;
    let seen = collect::seen(&world.controller)?;
    tally.latency = latencies(&collect::ended(&world.controller)?, &judged.spans);
    let text = std::fs::read_to_string(dir.join("marks")).unwrap_or_default();
    let (marks, bad) = parse_marks(&text);
    let mut verdict = judge(&Evidence {
        submitted: &judged.ids,
        completed: &completed,
        seen: &seen,
        marks: &marks,
        bad_lines: &bad,
    });
    let ids: Vec<u64> = seen.iter().map(|s| s.id).collect();
    let suspicions = collect::suspicions(&world.controller, &ids)?;
    let distinct: std::collections::BTreeSet<&Suspicion> = suspicions.iter().collect();
    verdict.suspicions = distinct.len();
    verdict.violations.extend(false_suspicions(
        &suspicions,
        &judged.windows,
        judged.grace_ms,
    ));
    println!("{}", render(&tally, &verdict));
    let clean = verdict.violations.is_empty();
    if clean && args.dir.is_none() {
        drop(std::mem::take(&mut world.nodes));
        let _ = std::fs::remove_dir_all(dir);
    } else {
        eprintln!(
            "chaos: the run's files (logs, marks, data) are in {}",
            dir.display()
        );
    }
    Ok(clean)
}
