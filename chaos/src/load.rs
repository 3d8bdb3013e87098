//! The load: a submitter thread that submits the run's workflows in turn, one every few
//! hundred milliseconds, through the controller's command line, whatever the nemesis is doing.
//! A submission the controller does not answer in time (down, stalled) is counted as refused:
//! if it was taken after all, the checker finds the instance in the controller's list.

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;

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
