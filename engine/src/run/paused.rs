//! A run's paused activities (`crate::pause`): how long a pause lasted, the end of a command
//! held while its activity is paused, and a pause read back from the store.

use super::{Life, PausedFrom, Progress, Run};

/// How long a pause lasted, when `resumed` ends one at `now_ms`.
pub(super) fn lasted(resumed: Option<(PausedFrom, u64)>, now_ms: u64) -> u64 {
    resumed.map_or(0, |(_, since)| now_ms.saturating_sub(since))
}

impl Progress {
    /// Paused again as it was stored (its record gave the state it resumes to).
    pub(super) fn pause_again(
        &mut self,
        since_ms: u64,
        killed: bool,
        held_end: Option<crate::pause::HeldEnd>,
    ) {
        let resume = match (&self.life, killed) {
            (Life::Ready, _) => PausedFrom::Ready,
            (Life::Running { attempt }, false) => PausedFrom::Running { attempt: *attempt },
            (Life::Running { attempt }, true) => PausedFrom::Killed { attempt: *attempt },
            // A record that shows neither was not paused.
            _ => return,
        };
        self.life = Life::Paused { resume, since_ms };
        self.held_end = held_end;
    }
}

impl Run {
    /// Holds the end of a command that came while activity `id` is paused with its try
    /// running on (`crate::pause`); the end of a killed try, or of an earlier one, is not
    /// held. True when it was held.
    pub(crate) fn hold_end(&mut self, ended: &crate::Ended) -> bool {
        let Some(p) = self.activities.get_mut(&ended.activity) else {
            return false;
        };
        let runs_on = matches!(
            p.life,
            Life::Paused {
                resume: PausedFrom::Running { .. },
                ..
            }
        );
        if !runs_on || ended.attempt != p.try_number() {
            return false;
        }
        p.held_end = Some(crate::pause::HeldEnd {
            attempt: ended.attempt,
            succeeded: ended.finish.succeeded(),
            detail: ended.finish.detail().map(str::to_owned),
            flag: ended.finish.flag().map(str::to_owned),
            written: ended.written.clone(),
        });
        true
    }
}
