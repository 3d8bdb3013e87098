//! The command lines the daemons are started with, as the tests and the chaos run start them:
//! a controller's `serve` and a node's `run`.

use std::path::Path;

/// `mobiwf-controller serve` with data in `dir`, listening on `listen`, its API on a free
/// loopback port, then `extra` options.
pub fn serve(dir: &Path, listen: &str, extra: &[String]) -> Vec<String> {
    let mut args: Vec<String> = vec![
        "serve".into(),
        "--data-dir".into(),
        dir.display().to_string(),
        "--listen".into(),
        listen.into(),
        "--api".into(),
        "127.0.0.1:0".into(),
    ];
    args.extend(extra.iter().cloned());
    args
}

/// How a node is started: the options of `mobiwf-node run`.
#[derive(Debug, Clone, Copy)]
pub struct NodeRun<'a> {
    /// Its data directory.
    pub dir: &'a Path,
    /// The controller's full address.
    pub controller: &'a str,
    /// Its name (a workflow partner's).
    pub name: &'a str,
    /// Its skills, e.g. `1,2,3`.
    pub skills: &'a str,
    /// Where it listens for peers.
    pub listen: &'a str,
    /// Where it serves its API.
    pub api: &'a str,
    /// The join token file it presents, if any.
    pub join_token_file: Option<&'a Path>,
    /// Its `--commands` (none: the option is left out).
    pub commands: &'a [String],
    /// More options.
    pub extra: &'a [String],
}

impl NodeRun<'_> {
    /// The arguments of `mobiwf-node`.
    pub fn args(&self) -> Vec<String> {
        let mut args: Vec<String> = vec![
            "run".into(),
            "--data-dir".into(),
            self.dir.display().to_string(),
            "--controller".into(),
            self.controller.into(),
            "--name".into(),
            self.name.into(),
            "--skills".into(),
            self.skills.into(),
            "--listen".into(),
            self.listen.into(),
            "--api".into(),
            self.api.into(),
        ];
        if let Some(file) = self.join_token_file {
            args.push("--join-token-file".into());
            args.push(file.display().to_string());
        }
        if !self.commands.is_empty() {
            args.push("--commands".into());
            args.extend(self.commands.iter().cloned());
        }
        args.extend(self.extra.iter().cloned());
        args
    }
}
