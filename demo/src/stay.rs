//! The demo's `--stay`: once the workflow ran, the controller and the nodes stay up until
//! Ctrl-C or SIGTERM, and the demo prints where to look in a browser: the operator's console
//! and alice's worklist on her device N2 (with an inspection waiting on it), each with a
//! one-time sign-in link. The links are made as `login-link` makes them (`POST /login-links`
//! with the daemon's administrator token), so the demo shows the real way in.

use std::path::Path;

use mobiwf_controller::ControllerClient;
use mobiwf_proto::{InstanceId, UserId};

/// The user whose worklist the demo leaves open (on N2).
pub const USER: &str = "alice";

/// Alice's device as `--stay` shows it: the node, its data directory (its administrator
/// token), and the instance left waiting on her worklist.
pub struct Device<'a> {
    pub node: &'a mobiwf_node::Node,
    pub dir: std::path::PathBuf,
    pub waiting: InstanceId,
}

/// A one-time sign-in link (`/login?code=...`) for the API at `api_url`, made with the
/// administrator token in `token_file` from the request body `body` (`{"role": ...}` on the
/// controller, `{"user": ...}` on a node): the link `login-link` would print.
pub async fn login_link(
    api_url: &str,
    token_file: &Path,
    body: serde_json::Value,
) -> anyhow::Result<String> {
    let token = mobiwf_runtime::secret::read_token_file(token_file)?;
    let client = mobiwf_runtime::api_auth::bearer_client(Some(&token), None)?;
    let answer = client
        .post(format!("{api_url}/login-links"))
        .json(&body)
        .send()
        .await?;
    let status = answer.status();
    let made: serde_json::Value = answer.json().await?;
    if !status.is_success() {
        anyhow::bail!("{api_url} refused a login link ({status}): {made}");
    }
    let login = made["login"]
        .as_str()
        .ok_or_else(|| anyhow::anyhow!("the answer has no link: {made}"))?;
    Ok(format!("{api_url}{login}"))
}

/// Prints the console's link (an operator's) and, when the people part ran, alice's
/// worklist's on `device`, and what to click.
pub async fn show_links(
    controller: &mobiwf_controller::Controller,
    dir: &Path,
    device: Option<&Device<'_>>,
) -> anyhow::Result<()> {
    let token_file = dir
        .join("controller")
        .join(mobiwf_controller::daemon::OPERATOR_TOKEN_FILE);
    let console = login_link(
        &controller.api_url(),
        &token_file,
        serde_json::json!({ "role": "operator", "path": "/" }),
    )
    .await?;
    println!(
        "\n--- staying up: open these in a browser (each link works once, within 5 minutes) ---\n"
    );
    println!("console (operator):  {console}");
    let again = format!(
        "cargo run -q -p mobiwf-controller -- login-link --role operator --api {} --token-file {}",
        controller.api_url(),
        token_file.display()
    );
    let mut hints = vec![("new console link: ", again)];
    if let Some(Device {
        node,
        dir: node_dir,
        waiting: id,
    }) = device
    {
        let worklist = login_link(
            &node.api_url(),
            &node_dir.join(mobiwf_node::API_TOKEN_FILE),
            serde_json::json!({ "user": USER, "path": "/" }),
        )
        .await?;
        println!("worklist ({USER}, N2): {worklist}");
        let again = format!(
            "cargo run -q -p mobiwf-node -- login-link --user {USER} --api {} --token-file {}",
            node.api_url(),
            node_dir.join(mobiwf_node::API_TOKEN_FILE).display()
        );
        hints.push(("new worklist link:", again));
        println!(
            "\nOn the worklist, open the inspection (instance {id}), click Select, then \
             Complete; in the console, open instance {id} and watch it succeed."
        );
    } else {
        println!("\nIn the console, open the instance to see its graph and history.");
    }
    println!();
    for (what, command) in hints {
        println!("{what} {command}");
    }
    println!("Ctrl-C stops the demo and deletes its data.");
    Ok(())
}

/// Submits another inspection for alice's worklist and waits until it is there: the instance.
pub async fn leave_work(
    client: &ControllerClient,
    n2: &mobiwf_node::NodeClient,
    deadline: tokio::time::Instant,
) -> anyhow::Result<InstanceId> {
    let id = super::people::submit_inspection(client).await?;
    super::people::poll(
        "the inspection to reach alice's worklist",
        deadline,
        || async {
            let list = n2
                .user_worklist(UserId::new(USER), mobiwf_people::Order::Arrival)
                .await?;
            let list = list.map_err(|e| anyhow::anyhow!("{e}"))?;
            Ok(list
                .iter()
                .any(|e| e.entry.info.instance == id)
                .then_some(()))
        },
    )
    .await?;
    Ok(id)
}

/// Returns on Ctrl-C (SIGINT) or SIGTERM.
pub async fn until_stopped() -> anyhow::Result<()> {
    let mut term = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate())?;
    tokio::select! {
        interrupted = tokio::signal::ctrl_c() => interrupted?,
        _ = term.recv() => {}
    }
    println!("stopping");
    Ok(())
}
