//! A real etcd cluster of three members on loopback, for the tests of what a clustered
//! controller does when etcd itself fails: its leader killed, a member killed and started
//! again with its data, a member whose data directory is lost replaced by a new one (removed
//! from the cluster, a new member added in its place, started on an empty data directory).
//! It speaks to etcd over the JSON gateway every member serves (`/v3/maintenance/status`,
//! `/v3/cluster/member/...`), plain HTTP as [`super::Etcd`]'s health check does. Skipped
//! without the `etcd` binary as [`super::Etcd`] is.

use std::io::{Read as _, Write as _};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde_json::{Value, json};

use super::etcd::{EtcdMember, etcd_or_skip, free_port, healthy, spawn_member};
use super::process::or_panic;
use super::{Daemon, STARTUP, wait_for};

/// The members' names, one per slot.
const NAMES: [&str; 3] = ["e0", "e1", "e2"];

/// One member's slot: its name and ports (kept when it is replaced), its data directory
/// (a new one for a replacement), its process while it runs.
struct Slot {
    name: &'static str,
    client: u16,
    peer: u16,
    /// How many members have had this slot (a replacement gets a new data directory).
    generation: usize,
    daemon: Option<Daemon>,
}

/// Three etcd members in one cluster, each killed when dropped.
pub struct EtcdCluster {
    dir: PathBuf,
    slots: Vec<Slot>,
}

/// Posts `body` to etcd's gateway at `port`: the HTTP status and its JSON answer, or `None`
/// when the member does not answer (killed, or not listening yet).
pub fn etcd_post(port: u16, path: &str, body: &Value) -> Option<(u16, Value)> {
    let mut stream = TcpStream::connect(("127.0.0.1", port)).ok()?;
    // A member without a leader may hold a request for etcd's request timeout (7 s).
    let _ = stream.set_read_timeout(Some(Duration::from_secs(10)));
    let body = body.to_string();
    let request = format!(
        "POST {path} HTTP/1.0\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n\
         Content-Length: {}\r\n\r\n{body}",
        body.len()
    );
    stream.write_all(request.as_bytes()).ok()?;
    let mut answer = String::new();
    stream.read_to_string(&mut answer).ok()?;
    let status = answer.split_whitespace().nth(1)?.parse().ok()?;
    let json = answer.split_once("\r\n\r\n")?.1;
    Some((status, serde_json::from_str(json).ok()?))
}

/// A uint64 of the gateway's JSON (a string), as given.
fn id_text(value: &Value) -> Option<String> {
    match value {
        Value::String(s) => Some(s.clone()),
        Value::Number(n) => Some(n.to_string()),
        _ => None,
    }
}

impl EtcdCluster {
    /// Starts three members in `dir` and waits until each is healthy, or `None` when there
    /// is no `etcd` binary (skipped, or failing with `MOBIWF_REQUIRE_ETCD=1`, as
    /// [`super::Etcd::start_or_skip`]).
    pub fn start_or_skip(dir: &Path) -> Option<EtcdCluster> {
        if !etcd_or_skip() {
            return None;
        }
        std::fs::create_dir_all(dir).unwrap();
        let slots = NAMES
            .iter()
            .map(|name| Slot {
                name,
                client: free_port(),
                peer: free_port(),
                generation: 0,
                daemon: None,
            })
            .collect();
        let mut cluster = EtcdCluster {
            dir: dir.to_owned(),
            slots,
        };
        // All three first: a member is healthy only once a quorum elected a leader.
        for slot in 0..NAMES.len() {
            cluster.spawn(slot, &cluster.initial_cluster(), false);
        }
        for slot in 0..NAMES.len() {
            cluster.wait_healthy(slot);
        }
        Some(cluster)
    }

    /// `name=peer URL` of every slot: the cluster's members (a replaced one under its slot's
    /// name and URLs).
    fn initial_cluster(&self) -> String {
        self.slots
            .iter()
            .map(|s| format!("{}=http://127.0.0.1:{}", s.name, s.peer))
            .collect::<Vec<_>>()
            .join(",")
    }

    fn data_dir(&self, slot: usize) -> PathBuf {
        let s = &self.slots[slot];
        self.dir.join(format!("{}-{}", s.name, s.generation))
    }

    fn spawn(&mut self, slot: usize, initial_cluster: &str, existing: bool) {
        assert!(
            self.slots[slot].daemon.is_none(),
            "member {slot} runs already"
        );
        let (data, s) = (self.data_dir(slot), &self.slots[slot]);
        let daemon = spawn_member(&EtcdMember {
            name: s.name,
            data: &data,
            log: &self.dir.join(format!("{}.log", s.name)),
            client: s.client,
            peer: s.peer,
            initial_cluster,
            existing,
        });
        self.slots[slot].daemon = Some(daemon);
    }

    /// Waits until member `slot` says it is healthy (it has a leader); panics, showing its
    /// log, if it exits.
    pub fn wait_healthy(&mut self, slot: usize) {
        let name = self.slots[slot].name;
        let client = self.slots[slot].client;
        let daemon = self.slots[slot]
            .daemon
            .as_mut()
            .expect("the member was not started");
        wait_for(format!("etcd member {name} to be healthy"), STARTUP, || {
            or_panic(daemon.check_alive());
            healthy(client).then_some(())
        });
    }

    /// Every member's client URL, joined by commas: what `serve --etcd` takes.
    pub fn urls(&self) -> String {
        self.slots
            .iter()
            .map(|s| format!("http://127.0.0.1:{}", s.client))
            .collect::<Vec<_>>()
            .join(",")
    }

    /// Whether member `slot` runs.
    pub fn running(&self, slot: usize) -> bool {
        self.slots[slot].daemon.is_some()
    }

    /// `/v3/maintenance/status` of member `slot`, if it answers.
    fn status(&self, slot: usize) -> Option<Value> {
        let (code, answer) = etcd_post(
            self.slots[slot].client,
            "/v3/maintenance/status",
            &json!({}),
        )?;
        (code == 200).then_some(answer)
    }

    /// Member `slot`'s id in etcd (as the gateway gives it: a uint64 in a string).
    pub fn member_id(&self, slot: usize) -> String {
        wait_for(
            format!("the id of etcd member {}", self.slots[slot].name),
            STARTUP,
            || id_text(&self.status(slot)?["header"]["member_id"]),
        )
    }

    /// The slot of the current leader, as the running members agree (waiting while they
    /// elect one).
    pub fn leader(&self) -> usize {
        wait_for("the etcd members to agree on a leader", STARTUP, || {
            let mut ids = Vec::new();
            let mut leaders = Vec::new();
            for slot in (0..self.slots.len()).filter(|s| self.running(*s)) {
                let status = self.status(slot)?;
                ids.push((slot, id_text(&status["header"]["member_id"])?));
                leaders.push(id_text(&status["leader"]).filter(|l| l != "0")?);
            }
            let leader = leaders.first()?;
            if leaders.iter().any(|l| l != leader) {
                return None;
            }
            ids.iter()
                .find(|(_, id)| id == leader)
                .map(|(slot, _)| *slot)
        })
    }

    /// A running member other than `not`.
    fn live_other_than(&self, not: usize) -> usize {
        (0..self.slots.len())
            .find(|s| *s != not && self.running(*s))
            .expect("another member runs")
    }

    /// SIGKILLs member `slot`; [`EtcdCluster::restart`] starts it again with its data.
    pub fn kill(&mut self, slot: usize) {
        if let Some(mut daemon) = self.slots[slot].daemon.take() {
            daemon.kill();
        }
    }

    /// Starts member `slot` again on its data directory and waits until it is healthy.
    pub fn restart(&mut self, slot: usize) {
        // With its data, etcd takes the cluster from there (the flag is read only when new).
        self.spawn(slot, &self.initial_cluster(), true);
        self.wait_healthy(slot);
    }

    /// Replaces member `slot`, whose data directory is lost: kills it if it runs, deletes
    /// its data, removes it from the cluster and adds a new member with the same name and
    /// URLs, started on an empty data directory to join the cluster that runs; waits until
    /// it is healthy. The other members must have a quorum.
    pub fn replace(&mut self, slot: usize) {
        let old_id = self.member_id_or_known(slot);
        self.kill(slot);
        std::fs::remove_dir_all(self.data_dir(slot)).unwrap();
        let via = self.slots[self.live_other_than(slot)].client;
        let name = self.slots[slot].name;
        // Asked while the others elect a leader, etcd may time out and be asked again; a
        // removal that landed before its answer was lost then finds no such member.
        wait_for(format!("etcd to remove member {name}"), STARTUP, || {
            let (code, answer) =
                etcd_post(via, "/v3/cluster/member/remove", &json!({ "ID": old_id }))?;
            let why = answer["error"].as_str().unwrap_or_default();
            (code == 200 || why.contains("member not found")).then_some(())
        });
        let peer_url = format!("http://127.0.0.1:{}", self.slots[slot].peer);
        // etcd adds a voting member only once its leader has been in touch with every other
        // member for a while (5 s): "unhealthy cluster" until then.
        let added = wait_for(format!("etcd to add a member for {name}"), STARTUP, || {
            let (code, answer) = etcd_post(
                via,
                "/v3/cluster/member/add",
                &json!({ "peerURLs": [peer_url] }),
            )?;
            if code == 200 {
                return Some(answer);
            }
            let why = answer["error"].as_str().unwrap_or_default();
            assert!(why.contains("unhealthy"), "adding a member: {answer}");
            None
        });
        // The members as etcd has them now: the new one has no name until it starts.
        let initial_cluster = added["members"]
            .as_array()
            .expect("the members after the add")
            .iter()
            .map(|m| {
                let named = m["name"].as_str().filter(|n| !n.is_empty()).unwrap_or(name);
                format!("{named}={}", m["peerURLs"][0].as_str().unwrap())
            })
            .collect::<Vec<_>>()
            .join(",");
        self.slots[slot].generation += 1;
        self.spawn(slot, &initial_cluster, true);
        self.wait_healthy(slot);
    }

    /// Member `slot`'s id: asked of it when it runs, else of the members that do.
    fn member_id_or_known(&self, slot: usize) -> String {
        if self.running(slot)
            && let Some(id) = self
                .status(slot)
                .and_then(|s| id_text(&s["header"]["member_id"]))
        {
            return id;
        }
        let via = self.slots[self.live_other_than(slot)].client;
        let peer_url = format!("http://127.0.0.1:{}", self.slots[slot].peer);
        let (_, list) = etcd_post(via, "/v3/cluster/member/list", &json!({}))
            .expect("a running member lists the members");
        list["members"]
            .as_array()
            .and_then(|ms| {
                ms.iter()
                    .find(|m| m["peerURLs"][0].as_str() == Some(peer_url.as_str()))
            })
            .and_then(|m| id_text(&m["ID"]))
            .unwrap_or_else(|| panic!("no member at {peer_url}: {list}"))
    }

    /// Panics, showing its log, if member `slot` has exited.
    pub fn check_alive(&mut self, slot: usize) {
        or_panic(
            self.slots[slot]
                .daemon
                .as_mut()
                .expect("the member was not started")
                .check_alive(),
        );
    }
}
