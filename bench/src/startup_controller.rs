//! Startup at scale: a controller data directory with many finished and some live instances, built
//! through the controller's own store format (`mobiwf_controller::state::stage`), then
//! `mobiwf-controller serve` started on it, timed from the spawn to the first answer of
//! `GET /instances/{id}` for a live instance.
//!
//! The records come from the book itself: the paper's workflow submitted once on two
//! registered nodes (a live instance, deploying) and once more and cancelled (a finished
//! one, settled), each copied under new ids with its definition and history.

use std::path::Path;
use std::process::Stdio;
use std::time::{Duration, Instant};

use mobiwf_book::{Book, Changes, Input, Instance, NodeInfo};
use mobiwf_proto::{Control, InstanceId, NodeId, NodeName};
use mobiwf_runtime::store::{Batch, Durability, RocksStore, Store};
use mobiwf_xml_schema::ActivityTypeId;

/// Instances written per synced batch while the directory is built.
const BUILD_BATCH: u64 = 2000;
/// How long the controller may take to answer before the run counts as failed.
const ANSWER_LIMIT: Duration = Duration::from_secs(120);

/// What one start measured.
pub struct Start {
    /// From the spawn to the live instance's first answer.
    pub answered: Duration,
    /// The controller's resident memory then, MiB.
    pub rss_mib: f64,
    /// `GET /instances/{id}` of a finished instance afterwards (read from the store).
    pub finished_read: Duration,
    /// `GET /instances?state=running&limit=100` afterwards.
    pub live_page: Duration,
}

/// Builds the data directory `dir` with `finished` settled and `live` deploying instances;
/// returns a live instance's id and a finished one's.
pub fn build(dir: &Path, finished: u64, live: u64) -> anyhow::Result<(u64, u64)> {
    let store = RocksStore::open(&dir.join("db"))?;
    let (nodes, live_one, finished_one, definition, history) = templates()?;
    let mut batch = Batch::default();
    let total = finished + live;
    for n in 1..=total {
        let template = if n <= finished {
            &finished_one
        } else {
            &live_one
        };
        let mut inst = template.clone();
        inst.id = InstanceId(n);
        let changes = Changes {
            nodes: if n == 1 { nodes.clone() } else { Vec::new() },
            removed_nodes: Vec::new(),
            instances: vec![inst],
            last_instance: InstanceId(n),
            definitions: vec![(InstanceId(n), definition.clone())],
            history: history
                .iter()
                .enumerate()
                .map(|(i, e)| (InstanceId(n), i, e.clone()))
                .collect(),
            people: None,
            registry: mobiwf_book::RegistryChanges::default(),
            classes: None,
            sync: None,
            orderings: None,
        };
        mobiwf_controller::state::stage(&mut batch, &changes)?;
        if n % BUILD_BATCH == 0 || n == total {
            mobiwf_controller::state::stage_indexed(&mut batch);
            store.write(std::mem::take(&mut batch), Durability::Synced)?;
        }
    }
    Ok((total, 1))
}

type Templates = (
    Vec<NodeInfo>,
    Instance,
    Instance,
    Vec<u8>,
    Vec<mobiwf_book::HistoryEvent>,
);

/// A live and a finished instance of the paper's workflow, as the book makes them.
fn templates() -> anyhow::Result<Templates> {
    let xml = crate::workloads::PAPER.to_owned();
    let mut book = Book::new();
    let mut nodes = Vec::new();
    for (i, (name, skills)) in [("P1", vec![1, 2, 3]), ("P2", vec![1, 3])]
        .into_iter()
        .enumerate()
    {
        let peer = libp2p::identity::Keypair::generate_ed25519()
            .public()
            .to_peer_id()
            .to_string();
        let node = NodeInfo {
            peer: NodeId::new(peer.clone()),
            name: NodeName::new(name),
            skills: skills.into_iter().map(ActivityTypeId).collect(),
            addrs: vec![format!("/ip4/127.0.0.1/tcp/{}/p2p/{peer}", 9 + i)],
            registered_ms: 1,
            seq: 1,
            suspected: None,
        };
        book.apply(1, Input::Register(node.clone()))?;
        nodes.push(node);
    }
    let now = mobiwf_runtime::process::now_ms();
    let submit = |book: &mut Book| {
        book.apply(
            now,
            Input::Submit {
                definition: xml.clone().into_bytes(),
                source: "paper.xml".to_owned(),
                responsible: None,
                inputs: Default::default(),
                starter: mobiwf_book::Starter::Anyone,
            },
        )
    };
    submit(&mut book)?;
    submit(&mut book)?;
    let cancel = Input::Control {
        instance: InstanceId(2),
        action: Control::Cancel,
    };
    book.apply(now, cancel)?;
    let live = book.instance(InstanceId(1)).cloned();
    let finished = book.instance(InstanceId(2)).cloned();
    let history = book.history(InstanceId(2)).map(<[_]>::to_vec);
    let (Some(live), Some(finished), Some(history)) = (live, finished, history) else {
        anyhow::bail!("the book did not keep the instances it was given");
    };
    anyhow::ensure!(
        finished.is_settled(),
        "the cancelled instance is not settled"
    );
    Ok((nodes, live, finished, xml.into_bytes(), history))
}

/// Starts `mobiwf-controller serve` on `dir` and times its first answer about `live`.
pub async fn start(bin_dir: &Path, dir: &Path, live: u64, finished: u64) -> anyhow::Result<Start> {
    let port = std::net::TcpListener::bind("127.0.0.1:0")?
        .local_addr()?
        .port();
    let api = format!("127.0.0.1:{port}");
    let log = std::fs::File::create(dir.join("serve.log"))?;
    let began = Instant::now();
    let mut child = tokio::process::Command::new(bin_dir.join("mobiwf-controller"))
        .args(["serve", "--data-dir"])
        .arg(dir)
        .args(["--listen", "/ip4/127.0.0.1/tcp/0", "--api", &api])
        .stdout(Stdio::null())
        .stderr(log)
        .kill_on_drop(true)
        .spawn()?;
    let pid = child.id().unwrap_or(0);
    let url = |path: &str| format!("http://{api}{path}");
    let token_file = dir.join("operator.token");
    let mut asking = None;
    let client = loop {
        // `serve` writes its administrator token as it starts (kept from an earlier start).
        if asking.is_none()
            && let Ok(token) = std::fs::read_to_string(&token_file)
        {
            asking = Some(crate::api::client(token.trim())?);
        }
        if let Some(client) = &asking
            && let Ok(r) = client.get(url(&format!("/instances/{live}"))).send().await
            && r.status().is_success()
        {
            break client.clone();
        }
        anyhow::ensure!(
            began.elapsed() < ANSWER_LIMIT,
            "the controller did not answer within {ANSWER_LIMIT:?} (see {})",
            dir.join("serve.log").display()
        );
        tokio::time::sleep(Duration::from_millis(5)).await;
    };
    let answered = began.elapsed();
    let rss_mib = crate::procfs::rss_mib(pid)?;
    let timed = |path: String| {
        let (client, url) = (client.clone(), url(&path));
        async move {
            let t = Instant::now();
            let r = client.get(url).send().await?;
            anyhow::ensure!(r.status().is_success(), "GET {path}: {}", r.status());
            r.bytes().await?;
            anyhow::Ok(t.elapsed())
        }
    };
    let finished_read = timed(format!("/instances/{finished}")).await?;
    let live_page = timed("/instances?state=deploying&limit=100".to_owned()).await?;
    child.kill().await?;
    Ok(Start {
        answered,
        rss_mib,
        finished_read,
        live_page,
    })
}

/// Builds the directory, starts the controller on it `runs` times, and prints the figures.
pub async fn run(bin_dir: &Path, finished: u64, live: u64, runs: usize) -> anyhow::Result<()> {
    let scratch = tempfile::Builder::new()
        .prefix("mobiwf-startup-")
        .tempdir()?;
    let dir = scratch.path().join("ctl");
    std::fs::create_dir_all(&dir)?;
    eprintln!(
        "building a controller data directory: {finished} finished, {live} live instances ..."
    );
    let t = Instant::now();
    let (live_id, finished_id) = build(&dir, finished, live)?;
    eprintln!("  built in {:.1} s", t.elapsed().as_secs_f64());
    for i in 1..=runs {
        let s = start(bin_dir, &dir, live_id, finished_id).await?;
        println!(
            "start {i}: answered GET /instances/{live_id} after {:.0} ms (RSS {:.0} MiB); a finished instance read in {:.1} ms, a page of live ones in {:.1} ms",
            s.answered.as_secs_f64() * 1000.0,
            s.rss_mib,
            s.finished_read.as_secs_f64() * 1000.0,
            s.live_page.as_secs_f64() * 1000.0,
        );
    }
    Ok(())
}
