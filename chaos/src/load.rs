//! The load: a submitter thread that submits the run's workflows in turn, one every few
//! hundred milliseconds, through the controller's command line, whatever the nemesis is doing;
//! and a person who completes the work offered to people on P1 through its node's command line.
//! A submission the controller does not answer in time (down, stalled) is counted as refused:
//! if it was taken after all, the checker finds the instance in the controller's list.

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;

use mobiwf_chaos::workflows::MANUAL;
use mobiwf_testkit::process::{Output, run};

use crate::mesh::{Binaries, cli};

/// How long one submission may take.
const SUBMIT_TIMEOUT: Duration = Duration::from_secs(5);

/// What the submitter did.
#[derive(Debug, Default)]
pub struct Submitted {
    /// The ids the controller gave.
    pub ids: Vec<u64>,
    /// Submissions that failed or timed out.
    pub refused: usize,
}

/// What the submitter needs.
pub struct Submitter {
    /// The binaries.
    pub bins: Binaries,
    /// The controller's API as it is now.
    pub api: Arc<Mutex<String>>,
    /// The administrator's token.
    pub token: PathBuf,
    /// The workflow files, submitted in turn.
    pub files: Vec<PathBuf>,
    /// The pause between two submissions.
    pub every: Duration,
}

impl Submitter {
    /// Starts submitting until `stop` is set; the thread gives what it did.
    pub fn start(self, stop: Arc<AtomicBool>) -> JoinHandle<Submitted> {
        std::thread::spawn(move || {
            let mut done = Submitted::default();
            let mut turn = 0usize;
            while !stop.load(Ordering::SeqCst) {
                let Some(file) = self.files.get(turn % self.files.len().max(1)) else {
                    break;
                };
                turn += 1;
                let api = self.api.lock().map(|a| a.clone()).unwrap_or_default();
                let path = file.display().to_string();
                let id = cli(
                    &self.bins,
                    &api,
                    &self.token,
                    &["submit", &path],
                    SUBMIT_TIMEOUT,
                )
                .ok()
                .filter(|out| out.code == Some(0))
                .and_then(|out| out.stdout.trim().parse::<u64>().ok());
                match id {
                    Some(id) => done.ids.push(id),
                    None => done.refused += 1,
                }
                std::thread::sleep(self.every);
            }
            done
        })
    }
}

/// A person at P1: completes the person's activity of every instance on P1's worklist,
/// through the node's command line (its API), whatever the nemesis is doing to P1.
pub struct Person {
    /// The node program.
    pub program: PathBuf,
    /// P1's data directory (the command line finds its API and token there).
    pub node_dir: PathBuf,
}

impl Person {
    /// Starts working until `stop` is set; the thread gives the instances whose completion
    /// the node acknowledged.
    pub fn start(self, stop: Arc<AtomicBool>) -> JoinHandle<Vec<u64>> {
        std::thread::spawn(move || {
            let mut completed = Vec::new();
            while !stop.load(Ordering::SeqCst) {
                for id in self.offered() {
                    if !completed.contains(&id) && self.complete(id) {
                        completed.push(id);
                    }
                }
                std::thread::sleep(Duration::from_millis(300));
            }
            completed
        })
    }

    fn node(&self, args: &[&str]) -> Option<Output> {
        let mut cmd = std::process::Command::new(&self.program);
        cmd.args(args).arg("--data-dir").arg(&self.node_dir);
        run(&mut cmd, SUBMIT_TIMEOUT).ok()
    }

    /// The instances whose person's activity is on the worklist.
    fn offered(&self) -> Vec<u64> {
        let Some(out) = self
            .node(&["worklist", "--json"])
            .filter(|o| o.code == Some(0))
        else {
            return Vec::new();
        };
        let items: serde_json::Value = serde_json::from_str(&out.stdout).unwrap_or_default();
        items
            .as_array()
            .map(|items| {
                items
                    .iter()
                    .filter(|w| w["activity"].as_u64() == Some(MANUAL))
                    .filter_map(|w| w["instance"].as_u64())
                    .collect()
            })
            .unwrap_or_default()
    }

    /// Completes it; true when the node acknowledged.
    fn complete(&self, id: u64) -> bool {
        let (id, activity) = (id.to_string(), MANUAL.to_string());
        self.node(&["complete", &id, &activity])
            .is_some_and(|o| o.code == Some(0))
    }
}
