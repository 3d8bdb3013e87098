//! `mobiwf-controller login-link [--role R] [--user U] [--path P]`: asks the controller for a
//! one-time login code for a role (`POST /login-links`, the administrators only) and prints
//! the link that exchanges it for a console session: the controller's address,
//! `/login?code=...`. With `--user`, the session acts as that organisation user where one
//! counts (a definition's creator role), as `api-tokens create --role R --user U` does.

use std::process::ExitCode;

use super::api_client::{ApiArgs, failure, json};

/// What `login-link` is given.
#[derive(clap::Args)]
pub struct LoginLinkArgs {
    /// The role the session has: viewer, operator or administrator.
    #[arg(long, default_value = "viewer")]
    role: String,
    /// The organisation user the session acts as: starts of a definition with a creator role
    /// check that role against them.
    #[arg(long)]
    user: Option<String>,
    /// The page to go to once signed in (a path of the console, e.g.
    /// `/console/instances/7`).
    #[arg(long, default_value = "/")]
    path: String,
    #[command(flatten)]
    api: ApiArgs,
}

/// Prints the sign-in link of the role, leading to the path once signed in (exit 0); exit 1
/// when the controller refuses what was asked (an unknown role, a path not its own), 3 when
/// it cannot be asked.
pub async fn run(args: &LoginLinkArgs) -> anyhow::Result<ExitCode> {
    let (api, role) = (&args.api, &args.role);
    let mut body = serde_json::json!({ "role": role, "path": args.path });
    if let Some(user) = &args.user {
        body["user"] = serde_json::Value::String(user.clone());
    }
    let request = api.client()?.post(api.url("/login-links")).json(&body);
    let made = match json(request, api).await {
        Ok(Ok(made)) => made,
        Ok(Err(refused)) => return Ok(failure(Ok(refused), &[400])),
        Err(e) => return Ok(failure(Err(e), &[])),
    };
    let login = made["login"]
        .as_str()
        .ok_or_else(|| anyhow::anyhow!("the controller's answer has no link: {made}"))?;
    println!("{}", api.url(login));
    match &args.user {
        Some(user) => eprintln!(
            "sign-in link for the {role} role, acting as {user}: works once, within 5 minutes"
        ),
        None => eprintln!("sign-in link for the {role} role: works once, within 5 minutes"),
    }
    Ok(ExitCode::SUCCESS)
}
