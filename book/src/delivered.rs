//! Deliveries: a node acknowledged a partition (the instance runs once every partition was),
//! or refused it (the instance fails with the node's reason).

use mobiwf_proto::{InstanceId, PartitionId};

use crate::history::Event;
use crate::{
    Applied, Book, BookError, InstanceEvent, InstanceState, PartitionEvent, Subject, all_deployed,
};

impl Book {
    /// A node acknowledged (`refused` is `None`) or refused a partition.
    pub(crate) fn delivered(
        &mut self,
        now_ms: u64,
        instance: InstanceId,
        partition: PartitionId,
        refused: Option<String>,
    ) -> Result<Applied, BookError> {
        let inst = self
            .instances
            .get_mut(&instance)
            .ok_or(BookError::UnknownInstance(instance))?;
        if !inst.state().is_live() {
            return Ok(Applied::default());
        }
        let mut node = None;
        if let Some(p) = inst.partitions.iter_mut().find(|p| p.id == partition) {
            let event = match refused {
                None => PartitionEvent::Acknowledged,
                Some(_) => PartitionEvent::Refused,
            };
            // Refused for a partition whose result (in time or late) came before it: the
            // acknowledgement comes through the outbox, the result as a message of its own,
            // either first. It says nothing the result did not.
            let _ = p.step(&event);
            node = Some(p.node.clone());
        }
        if let Some(reason) = &refused {
            // The instance is not final (checked above).
            let step = inst.step(InstanceEvent::Refused);
            self.refused.report(instance, Subject::Instance, step);
            inst.finished_ms = Some(now_ms);
            inst.detail = Some(format!("partition {partition} was refused: {reason}"));
        } else if inst.state() == InstanceState::Deploying && all_deployed(inst) {
            let step = inst.step(InstanceEvent::AllDeployed);
            self.refused.report(instance, Subject::Instance, step);
        }
        let what = match refused {
            Some(reason) => Event::Refused { partition, reason },
            None => Event::Deployed { partition },
        };
        self.history
            .push(instance, now_ms, None, node.as_ref(), what);
        self.dirty_instances.insert(instance);
        let mut effects = Vec::new();
        self.track(now_ms, instance, &mut effects);
        Ok(Applied {
            effects,
            instance: None,
        })
    }
}
