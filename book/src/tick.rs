//! Time passing (`Input::Tick`, sent at [`Book::next_deadline`]): overdue decisions whose
//! grace ran out are taken (`overdue`), and partitions past their `timeOut` are given up.

use std::collections::BTreeMap;

use mobiwf_proto::{InstanceId, PartitionId};

use crate::recovery;
use crate::{Applied, Book, BookError, Effect};

impl Book {
    /// Acts on every deadline that passed.
    pub(crate) fn tick(&mut self, now_ms: u64) -> Result<Applied, BookError> {
        let mut effects = Vec::new();
        for id in self.live_instances() {
            self.decide_overdue(id, now_ms, &mut effects)?;
            self.give_up_late_partitions(id, now_ms, &mut effects)?;
        }
        Ok(Applied {
            effects,
            instance: None,
        })
    }

    /// Gives up on the partitions of instance `id` whose `timeOut` ran out.
    fn give_up_late_partitions(
        &mut self,
        id: InstanceId,
        now_ms: u64,
        effects: &mut Vec<Effect>,
    ) -> Result<(), BookError> {
        let due: Vec<PartitionId> = self.instances[&id]
            .partitions
            .iter()
            .filter(|p| !p.is_over())
            .filter(|p| p.deadline_ms.is_some_and(|d| d <= now_ms))
            .map(|p| p.id)
            .collect();
        if due.is_empty() {
            return Ok(());
        }
        let secs: BTreeMap<PartitionId, u64> = self
            .definitions
            .get(&id)
            .map(|d| {
                d.partitions
                    .iter()
                    .map(|p| (p.id, u64::from(p.time_out_secs)))
                    .collect()
            })
            .unwrap_or_default();
        self.with_instance(id, now_ms, effects, |inst, ctx| {
            for p in due {
                let s = secs.get(&p).copied().unwrap_or(0);
                let why = format!("partition {p} did not finish within its timeOut of {s} s");
                recovery::abandon(inst, ctx, p, &why);
            }
        })
    }
}
