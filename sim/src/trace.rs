//! What a run did, one line per step, stamped with the simulated time: the trace a failing
//! seed is shown with, and what two runs of one seed must repeat byte for byte. A campaign keeps
//! only a digest and the last lines of each run (a failing seed is run again to show its whole
//! trace); a replay keeps every line.

use std::collections::VecDeque;
use std::fmt::Write as _;

/// How many lines a campaign's run keeps.
pub const TAIL_LINES: usize = 400;

/// The lines of one run.
#[derive(Debug, Default)]
pub struct Trace {
    /// Every line, when kept.
    all: Option<Vec<String>>,
    /// The last [`TAIL_LINES`] lines.
    tail: VecDeque<String>,
    /// FNV-1a over every line and its end: equal traces have equal digests.
    digest: u64,
    lines: u64,
}

/// FNV-1a's offset basis.
const FNV_OFFSET: u64 = 0xcbf2_9ce4_8422_2325;
/// FNV-1a's prime.
const FNV_PRIME: u64 = 0x0000_0100_0000_01b3;

impl Trace {
    /// A trace that keeps every line (`keep_all`) or only the last ones.
    pub fn new(keep_all: bool) -> Trace {
        Trace {
            all: keep_all.then(Vec::new),
            tail: VecDeque::new(),
            digest: FNV_OFFSET,
            lines: 0,
        }
    }

    /// One line at simulated time `now_us` (µs since the simulation's epoch).
    pub fn line(&mut self, now_us: u64, text: &str) {
        let mut line = String::with_capacity(text.len() + 16);
        let _ = write!(
            line,
            "{:>6}.{:06} {text}",
            now_us / 1_000_000,
            now_us % 1_000_000
        );
        for byte in line.bytes().chain([b'\n']) {
            self.digest = (self.digest ^ u64::from(byte)).wrapping_mul(FNV_PRIME);
        }
        self.lines += 1;
        if self.tail.len() == TAIL_LINES {
            self.tail.pop_front();
        }
        self.tail.push_back(line.clone());
        if let Some(all) = &mut self.all {
            all.push(line);
        }
    }

    /// The digest of every line so far.
    pub fn digest(&self) -> u64 {
        self.digest
    }

    /// How many lines so far.
    pub fn len(&self) -> u64 {
        self.lines
    }

    /// True before the first line.
    pub fn is_empty(&self) -> bool {
        self.lines == 0
    }

    /// Every line, when kept; else the last ones.
    pub fn lines(&self) -> Vec<String> {
        match &self.all {
            Some(all) => all.clone(),
            None => self.tail.iter().cloned().collect(),
        }
    }
}
