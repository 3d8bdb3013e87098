//! `mobiwf-node login-link --user U [--path P]`: asks the node for a one-time login code for
//! `U` (`POST /login-links`, the node's administrators only) and prints the link that
//! exchanges it for a session: the node's address, `/login?code=...`.

use crate::commands::api_client::{ApiArgs, check};

/// Prints the sign-in link of `user`, leading to `path` once signed in.
pub async fn run(api: &ApiArgs, user: &str, path: &str) -> anyhow::Result<()> {
    let base = api.base_url()?;
    let body = serde_json::json!({ "user": user, "path": path });
    let request = api
        .client()?
        .post(format!("{base}/login-links"))
        .json(&body);
    let made: serde_json::Value = check(request.send().await?).await?.json().await?;
    let login = made["login"]
        .as_str()
        .ok_or_else(|| anyhow::anyhow!("the node's answer has no link: {made}"))?;
    println!("{base}{login}");
    eprintln!("sign-in link for {user}: works once, within 5 minutes");
    Ok(())
}
