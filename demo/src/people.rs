//! The demo's second part, people: an organisation (examples/organisation.xml), a host node N1 and
//! two field devices N2 (alice, carol) and N3 (bob), and the valve inspection workflow
//! (examples/people/inspection.xml) whose manual activity is offered to every technician.
//! Alice selects it on N2, bob's worklist on N3 loses it and his select is refused, alice
//! completes it and the instance succeeds.

use std::path::Path;
use std::time::Duration;

use mobiwf_book::InstanceState;
use mobiwf_controller::ControllerClient;
use mobiwf_node::{ClaimOutcome, Node};
use mobiwf_people::Order;
use mobiwf_proto::{ActivityId, InstanceId, ItemAction, UserId, Verdict};

use super::run::start_node;

/// The organisation the demo applies.
const ORGANISATION: &[u8] = include_bytes!("../../examples/organisation.xml");
/// The workflow with a manual activity for technicians.
const INSPECTION: &[u8] = include_bytes!("../../examples/people/inspection.xml");
/// Where [`INSPECTION`] comes from, as the demo names it.
const INSPECTION_SOURCE: &str = "examples/people/inspection.xml";
/// The manual activity of the inspection workflow.
const INSPECT: ActivityId = ActivityId(2);

/// N2's data directory, under the demo's: alice's device.
pub(super) const N2_DIR: &str = "node-11";

/// Runs the people part: whether the inspection instance succeeded, and the nodes N1, N2, N3,
/// still running (the caller stops them).
pub async fn run(
    client: &ControllerClient,
    dir: &Path,
    controller: &str,
    deadline: tokio::time::Instant,
) -> anyhow::Result<(bool, Vec<Node>)> {
    println!("\n--- people: a manual activity on the technicians' worklists ---\n");
    let mut nodes = Vec::new();
    for (i, name) in ["N1", "N2", "N3"].iter().enumerate() {
        nodes.push(
            start_node(
                dir,
                10 + i,
                mobiwf_proto::DEFAULT_HOUR_MS,
                name,
                &[1],
                controller,
            )
            .await?,
        );
    }
    let document = String::from_utf8(ORGANISATION.to_vec())?;
    let org = mobiwf_xml_schema::load_organisation(ORGANISATION)
        .map_err(|d| anyhow::anyhow!("{}", d.render("examples/organisation.xml")))?
        .value;
    let outcome = async {
        let version = client
            .apply_org(document, org)
            .await?
            .map_err(|e| anyhow::anyhow!("{e}"))?;
        println!("organisation applied (examples/organisation.xml): directory version {version}");
        wait_for_directory(&nodes, version, deadline).await?;
        inspect(client, &nodes, deadline).await
    }
    .await;
    match outcome {
        Ok(succeeded) => Ok((succeeded, nodes)),
        Err(e) => {
            for node in nodes {
                node.stop().await;
            }
            Err(e)
        }
    }
}

/// Submits the inspection workflow (responsible: dave): its instance.
pub(super) async fn submit_inspection(client: &ControllerClient) -> anyhow::Result<InstanceId> {
    client
        .submit(
            INSPECTION.to_vec(),
            INSPECTION_SOURCE.to_owned(),
            mobiwf_book::StartWith {
                responsible: Some(UserId::new("dave")),
                ..Default::default()
            },
        )
        .await?
        .map_err(|e| anyhow::anyhow!("{e}"))
}

/// Waits until every node holds directory version `version`.
async fn wait_for_directory(
    nodes: &[Node],
    version: u64,
    deadline: tokio::time::Instant,
) -> anyhow::Result<()> {
    for node in nodes {
        poll("the directory to reach every node", deadline, || async {
            Ok((node.client().directory().await?.version >= version).then_some(()))
        })
        .await?;
    }
    println!("every node holds directory version {version}");
    Ok(())
}

/// Submits the inspection, works it as alice, and shows bob losing it.
async fn inspect(
    client: &ControllerClient,
    nodes: &[Node],
    deadline: tokio::time::Instant,
) -> anyhow::Result<bool> {
    let [_, n2, n3] = [0, 1, 2].map(|i| nodes[i].client());
    let id = submit_inspection(client).await?;
    println!("instance {id} of {INSPECTION_SOURCE} submitted (responsible: dave)");
    show_offers(id, [(&n2, "alice"), (&n3, "bob"), (&n2, "carol")], deadline).await?;
    let select = |node: mobiwf_node::NodeClient, user: &'static str| async move {
        node.claim(UserId::new(user), id, INSPECT, ItemAction::Select)
            .await
    };
    let alice = select(n2.clone(), "alice").await?;
    println!("  alice selects it on N2: {}", said(&alice));
    poll("bob's worklist to lose the item", deadline, || async {
        let list = n3.user_worklist(UserId::new("bob"), Order::Arrival).await?;
        let list = list.map_err(|e| anyhow::anyhow!("{e}"))?;
        Ok(list
            .iter()
            .all(|e| e.entry.info.instance != id)
            .then_some(()))
    })
    .await?;
    println!("  bob's worklist on N3 no longer shows it");
    println!(
        "  bob selects it anyway: {}",
        said(&select(n3, "bob").await?)
    );
    let done = ItemAction::Complete {
        succeeded: true,
        detail: Some("seal replaced".to_owned()),
        flag: None,
        data: Default::default(),
    };
    let completed = n2.claim(UserId::new("alice"), id, INSPECT, done).await?;
    println!("  alice completes it: {}", said(&completed));
    let succeeded = finish(client, id, deadline).await?;
    show_notices(&nodes[0].client(), id, deadline).await?;
    Ok(succeeded)
}

/// Waits for the responsible user's device (N1) to be told of the end, and shows what it was
/// told of the instance.
async fn show_notices(
    n1: &mobiwf_node::NodeClient,
    id: InstanceId,
    deadline: tokio::time::Instant,
) -> anyhow::Result<()> {
    let notices = poll("dave's notice of the end", deadline, || async {
        let notices = n1.notices(UserId::new("dave")).await?;
        let notices = notices.map_err(|e| anyhow::anyhow!("{e}"))?;
        let ended = notices
            .iter()
            .any(|n| n.instance == id && n.kind == "ended");
        Ok(ended.then_some(notices))
    })
    .await?;
    for n in notices.iter().filter(|n| n.instance == id) {
        println!("  dave's notice on N1: {}: {}", n.kind, n.text);
    }
    Ok(())
}

/// Waits for the inspection to reach each user's worklist on their node, and shows how it
/// reads there.
async fn show_offers(
    id: InstanceId,
    users: [(&mobiwf_node::NodeClient, &str); 3],
    deadline: tokio::time::Instant,
) -> anyhow::Result<()> {
    for (node, user) in users {
        let what = format!("the inspection to reach {user}'s worklist");
        let entry = poll(&what, deadline, || async {
            let list = node
                .user_worklist(UserId::new(user), Order::Priority)
                .await?;
            let list = list.map_err(|e| anyhow::anyhow!("{e}"))?;
            Ok(list.into_iter().find(|e| e.entry.info.instance == id))
        })
        .await?;
        println!(
            "  {user:<6} sees '{}' ({}), priority {}, {:?}",
            entry.entry.info.name,
            entry.entry.info.description,
            entry.entry.info.priority,
            entry.entry.state
        );
    }
    Ok(())
}

/// Waits for the instance to end and prints its work item history.
async fn finish(
    client: &ControllerClient,
    id: InstanceId,
    deadline: tokio::time::Instant,
) -> anyhow::Result<bool> {
    let inst = client.wait(id, deadline).await?;
    let state = inst.as_ref().map(|i| i.state());
    println!(
        "instance {id}: {}",
        state.map_or("vanished", InstanceState::as_str)
    );
    for event in client.history(id).await?.unwrap_or_default() {
        let what = mobiwf_controller::render::what(&event.what);
        if what.starts_with("item:") {
            println!("  history: {what}");
        }
    }
    Ok(state == Some(InstanceState::Succeeded))
}

/// A claim's outcome in words.
fn said(outcome: &ClaimOutcome) -> String {
    match outcome {
        ClaimOutcome::Answered(Verdict::Done) => "done".to_owned(),
        ClaimOutcome::Answered(
            Verdict::Unavailable { reason }
            | Verdict::Forbidden { reason }
            | Verdict::Invalid { reason },
        ) => format!("refused: {reason}"),
        ClaimOutcome::Pending { host, .. } => format!("sent to {host}, not answered yet"),
        ClaimOutcome::NotHere(why) | ClaimOutcome::UnknownItem(why) => why.clone(),
    }
}

/// Asks `probe` until it gives a value, at each change of the nodes' state (every 20 ms at
/// most), or fails at the deadline.
pub(super) async fn poll<T, F, Fut>(
    what: &str,
    deadline: tokio::time::Instant,
    probe: F,
) -> anyhow::Result<T>
where
    F: Fn() -> Fut,
    Fut: std::future::Future<Output = anyhow::Result<Option<T>>>,
{
    loop {
        if let Some(found) = probe().await? {
            return Ok(found);
        }
        if tokio::time::Instant::now() >= deadline {
            anyhow::bail!("timed out waiting for {what}");
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}
