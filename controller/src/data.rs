//! `status INSTANCE --data`: the instance data, as the nodes that run the instance's partitions
//! know it. The controller asks each of them (`ReadData`, answered at once, never stored) and
//! shows the latest write of each name; it keeps no value an activity wrote (values travel
//! partner to partner), only the instance's inputs, given when it started, which every write
//! of their name supersedes. A loop's earlier passes are shown apart: the last write of each name
//! in each pass before its latest.

use std::collections::BTreeMap;
use std::time::Duration;

use libp2p::{Multiaddr, PeerId};
use mobiwf_book::{Instance, NodeInfo};
use mobiwf_proto::data_passes;
use mobiwf_proto::{Datum, Envelope, Message, MessageId, NodeId, ReadData, Reply};
use mobiwf_runtime::mesh::MeshHandle;
use serde::Serialize;

/// How long one node's answer is waited for.
pub const READ_DATA_TIMEOUT: Duration = Duration::from_secs(5);

/// The instance data as `status --data` shows it.
#[derive(Debug, Clone, Default, Serialize, serde::Deserialize)]
pub struct DataView {
    /// The latest write of each name any node knows, by name.
    pub data: Vec<Datum>,
    /// What earlier passes of loops wrote: the last write of each name in each pass before
    /// its latest, by name then pass.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub earlier: Vec<Datum>,
    /// The nodes that did not answer, with why: their values may be missing or older.
    pub unanswered: BTreeMap<String, String>,
}

/// Asks every node running a partition of `inst` what it knows of its data.
pub async fn read(mesh: &MeshHandle, inst: &Instance, nodes: &[NodeInfo]) -> DataView {
    let me = NodeId::new(mesh.peer_id().to_string());
    let mut asked = Vec::new();
    for p in &inst.partitions {
        if asked.contains(&p.peer) {
            continue;
        }
        asked.push(p.peer.clone());
    }
    // Asked all at once: nodes that do not answer cost one timeout, not one each.
    let mut asking = tokio::task::JoinSet::new();
    for peer in asked {
        let node = nodes.iter().find(|n| n.peer == peer).cloned();
        let name = node
            .as_ref()
            .map_or_else(|| peer.to_string(), |n| n.name.to_string());
        let (mesh, me, instance) = (mesh.clone(), me.clone(), inst.id);
        asking.spawn(async move { (name, ask(&mesh, &me, &peer, node.as_ref(), instance).await) });
    }
    let mut view = DataView::default();
    // The inputs, also those no partition reads or whose node does not answer.
    let mut writes: Vec<Datum> = inst.inputs.data();
    while let Some(answer) = asking.join_next().await {
        let Ok((name, answer)) = answer else {
            continue;
        };
        match answer {
            Ok(data) => writes.extend(data),
            Err(why) => {
                view.unanswered.insert(name, why);
            }
        }
    }
    (view.data, view.earlier) = data_passes::merge(writes);
    view
}

async fn ask(
    mesh: &MeshHandle,
    me: &NodeId,
    peer: &NodeId,
    node: Option<&NodeInfo>,
    instance: mobiwf_proto::InstanceId,
) -> Result<Vec<Datum>, String> {
    let to: PeerId = peer
        .as_str()
        .parse()
        .map_err(|_| "not a peer id".to_owned())?;
    let addrs: Vec<Multiaddr> = node
        .map(|n| n.addrs.iter().filter_map(|a| a.parse().ok()).collect())
        .unwrap_or_default();
    let envelope = Envelope {
        // Never stored or deduplicated: sequence 0.
        answered_below: 0,
        epoch: None,
        id: MessageId {
            incarnation: 0,
            origin: me.clone(),
            seq: 0,
        },
        message: Message::ReadData(ReadData { instance }),
    };
    match tokio::time::timeout(READ_DATA_TIMEOUT, mesh.request(to, addrs, envelope)).await {
        Ok(Ok(Reply::Data { data })) => Ok(data),
        Ok(Ok(Reply::Refused { reason })) => Err(format!("refused: {reason}")),
        Ok(Ok(other)) => Err(format!("an answer that is not data: {other:?}")),
        Ok(Err(e)) => Err(e.to_string()),
        Err(_) => Err(format!(
            "no answer within {} s",
            READ_DATA_TIMEOUT.as_secs()
        )),
    }
}
