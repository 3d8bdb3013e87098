//! Operator control: interrupt (start nothing new), resume, cancel (everything not finished is
//! cancelled, the instance is over). Every partner of the instance is told, a partition given
//! up on included.

use std::collections::BTreeSet;

use mobiwf_proto::{Control, ControlInstance, InstanceId, Message, NodeId};

use crate::history::Event;
use crate::{
    ActivityEvent, Applied, Book, BookError, Effect, Instance, InstanceEvent, Refusal, all_deployed,
};

impl Book {
    /// An operator interrupts, resumes or cancels an instance; every partner of it is told.
    pub(crate) fn control(
        &mut self,
        now_ms: u64,
        id: InstanceId,
        action: Control,
    ) -> Result<Applied, BookError> {
        let inst = self.instance_mut(id)?;
        if apply_control(inst, now_ms, action).is_err() {
            return Err(BookError::NotNow {
                instance: id,
                state: inst.state().as_str(),
                action: action.as_str(),
            });
        }
        // Numbered, so that its nodes take the operator's controls in the order given
        // whatever order they arrive in.
        inst.controls += 1;
        let order = inst.controls;
        // A partition given up on is told too: its node may still run a loop's later pass
        // of its activities (a withdrawal ends only the pass it names).
        let peers: BTreeSet<NodeId> = inst.partitions.iter().map(|p| p.peer.clone()).collect();
        let mut effects: Vec<Effect> = peers
            .iter()
            .filter_map(|peer| self.nodes.get(peer))
            .map(|node| Effect::Send {
                to: node.peer.clone(),
                addrs: node.addrs.clone(),
                message: Message::Control(ControlInstance {
                    instance: id,
                    action,
                    order,
                }),
            })
            .collect();
        let what = Event::Operator {
            action,
            told: peers.len(),
        };
        self.history.push(id, now_ms, None, None, what);
        self.dirty_instances.insert(id);
        self.track(now_ms, id, &mut effects);
        if action == Control::Resume {
            // What waited for the resumption: contingency activities to place.
            self.with_instance(id, now_ms, &mut effects, |_, _| {})?;
        }
        Ok(Applied {
            effects,
            instance: None,
        })
    }
}

/// The instance as the operator's action leaves it; `Err` (nothing changed) when the action
/// does not apply to the instance as it is.
fn apply_control(inst: &mut Instance, now_ms: u64, action: Control) -> Result<(), Refusal> {
    let event = match action {
        Control::Interrupt => InstanceEvent::Interrupt,
        Control::Resume => InstanceEvent::Resume {
            all_deployed: all_deployed(inst),
        },
        Control::Cancel => InstanceEvent::Cancel,
    };
    inst.step(event)?;
    if action == Control::Cancel {
        inst.finished_ms = Some(now_ms);
        inst.detail = Some("cancelled by an operator".to_owned());
        for a in inst.activities.iter_mut() {
            // Placed and not final: cancelled (a contingency activity not placed stays so).
            if a.partition.is_some() && a.step(&ActivityEvent::OperatorCancel).is_ok() {
                a.finished_ms = Some(now_ms);
            }
        }
    }
    Ok(())
}
