//! The workload's steps in the world: the operators' commands go to the controller's actor as
//! its API would give them (a command to a controller that is down is tried again a little
//! later, as an operator would; a submission whose group was lost in a crash is submitted
//! again), the users' turns go to their devices. An operator who reruns or pauses an activity
//! looks at what the controller shows first (`status`), as a person at the console would.

use mobiwf_book::InstanceState;
use mobiwf_proto::{ActivityId, ActivityState, Control, InstanceId, ItemAction, PauseAction};
use mobiwf_xml_schema::Contingency;

use super::{CONTROLLER, Event, World};
use crate::controller::{CtlEvent, OPERATOR, Operator};
use crate::workload::Script;

/// How long an operator waits before trying a command again, µs.
const OPERATOR_RETRY_US: u64 = 2_000_000;
/// How long an operator waits for a submission's answer before submitting again, µs.
const SUBMIT_ANSWER_US: u64 = 10_000_000;

/// How often the operator looks for interrupted instances once faults stopped, µs.
const SWEEP_EVERY_US: u64 = 5_000_000;

/// How often an operator who watches an instance to rerun it looks, µs.
const RERUN_LOOK_EVERY_US: u64 = 3_000_000;

impl World {
    /// Once faults stopped, the operator resumes every instance the controller last wrote as
    /// interrupted (so that everything can finish), and looks again a little later.
    fn sweep(&mut self) {
        self.after(SWEEP_EVERY_US, Event::Script(Script::Sweep));
        let interrupted: Vec<usize> = self
            .workload
            .instances
            .iter()
            .filter(|(_, id)| {
                self.checks.instances.get(id) == Some(&mobiwf_book::InstanceState::Interrupted)
            })
            .map(|(tag, _)| *tag)
            .collect();
        for tag in interrupted {
            self.operate(Script::Control(tag, Control::Resume));
        }
        let paused: Vec<(usize, ActivityId)> = self
            .workload
            .instances
            .iter()
            .flat_map(|(tag, id)| {
                self.paused_by_operator(*id)
                    .into_iter()
                    .map(move |a| (*tag, a))
            })
            .collect();
        for (tag, activity) in paused {
            self.operate(Script::ResumeActivity(tag, activity));
        }
    }

    /// The activities of `instance` the controller shows paused by an operator.
    fn paused_by_operator(&self, instance: InstanceId) -> Vec<ActivityId> {
        let Some(inst) = self
            .controller
            .as_ref()
            .and_then(|c| c.book.instance(instance))
        else {
            return Vec::new();
        };
        inst.activities
            .iter()
            .filter(|a| a.paused().is_some_and(|p| p.by == OPERATOR))
            .map(|a| a.id)
            .collect()
    }

    /// The failed activity of `instance`, when the controller shows the instance failed (a
    /// settled instance is read back from its store, as `status` does).
    fn failed_activity(&self, instance: InstanceId) -> Option<ActivityId> {
        let c = self.controller.as_ref()?;
        let stored;
        let inst = match c.book.instance(instance) {
            Some(inst) => inst,
            None => {
                let disk = &self.machines[CONTROLLER].disk;
                stored = crate::controller::store::read_instance(disk, instance).ok()??;
                &stored
            }
        };
        if inst.state() != InstanceState::Failed {
            return None;
        }
        // One that failed with contingency -1 (the one a rerun takes), else any that failed
        // (the book refuses it, and says why).
        let failed = |a: &&mobiwf_book::ActivityView| a.state() == ActivityState::Failed;
        let blocked = |a: &&mobiwf_book::ActivityView| a.contingency == Contingency::Block;
        let mut failed = inst.activities.iter().filter(failed);
        let first = failed.clone().next().map(|a| a.id);
        failed.find(blocked).map(|a| a.id).or(first)
    }

    /// Carries out a step of the workload.
    pub(super) fn script(&mut self, script: Script) {
        match script {
            Script::Turn(u) => self.turn(u),
            other => self.operate(other),
        }
    }

    fn operate(&mut self, script: Script) {
        if !self.running(CONTROLLER) {
            self.after(OPERATOR_RETRY_US, Event::Script(script));
            return;
        }
        let op = match &script {
            Script::Sweep => {
                self.sweep();
                return;
            }
            Script::Turn(_) => return,
            Script::Organisation | Script::Classes | Script::Submit(_) => self.document(&script),
            _ => self.on_instance(&script),
        };
        let Some(op) = op else {
            return;
        };
        let line = format!("operator: {script:?}");
        self.log(&line);
        if let Some(c) = &mut self.controller {
            c.pending.push(CtlEvent::Operator(op));
            self.wake_soon(CONTROLLER);
        }
    }

    /// A document the operator applies or submits (none when there is nothing to do).
    fn document(&mut self, script: &Script) -> Option<Operator> {
        match script {
            Script::Organisation => self
                .workload
                .organisation
                .clone()
                .map(Operator::Organisation),
            Script::Classes => self.workload.classes.clone().map(Operator::Classes),
            Script::Submit(tag) => {
                if self.workload.instances.contains_key(tag)
                    || self.workload.refused.contains_key(tag)
                {
                    return None;
                }
                let def = self.workload.defs.get(*tag)?;
                let op = Operator::Submit {
                    definition: def.xml.clone(),
                    source: format!("{}-{tag}.xml", def.shape),
                    tag: *tag,
                    responsible: def.manual.and_then(|_| self.workload.responsible.clone()),
                };
                // Not answered in time (the group lost in a crash): submitted again.
                self.after(SUBMIT_ANSWER_US, Event::Script(Script::Submit(*tag)));
                Some(op)
            }
            _ => None,
        }
    }

    /// A command on a submitted instance, one of its activities or its work items (none
    /// when the instance is not known yet, or there is nothing to do).
    fn on_instance(&mut self, script: &Script) -> Option<Operator> {
        let instance = |w: &World, tag: &usize| w.workload.instances.get(tag).copied();
        Some(match script {
            Script::Control(tag, action) => Operator::Control {
                instance: instance(self, tag)?,
                action: *action,
            },
            Script::Pause(tag, back) => {
                let instance = instance(self, tag)?;
                let resume = Script::Control(*tag, Control::Resume);
                self.after(*back, Event::Script(resume));
                Operator::Control {
                    instance,
                    action: Control::Interrupt,
                }
            }
            Script::PauseActivity {
                tag,
                activity,
                kill,
                back,
            } => {
                let instance = instance(self, tag)?;
                let resume = Script::ResumeActivity(*tag, *activity);
                self.after(*back, Event::Script(resume));
                Operator::Pause {
                    instance,
                    activity: *activity,
                    action: PauseAction::Pause { kill: *kill },
                }
            }
            Script::ResumeActivity(tag, activity) => Operator::Pause {
                instance: instance(self, tag)?,
                activity: *activity,
                action: PauseAction::Resume,
            },
            Script::Rerun(tag, looks) => {
                let instance = instance(self, tag)?;
                let Some(activity) = self.failed_activity(instance) else {
                    if *looks > 0 {
                        let again = Script::Rerun(*tag, looks - 1);
                        self.after(RERUN_LOOK_EVERY_US, Event::Script(again));
                    }
                    return None;
                };
                Operator::Rerun { instance, activity }
            }
            Script::Delegate {
                tag,
                activity,
                from,
                to,
            } => {
                let users = &self.workload.users;
                Operator::Worklist {
                    instance: instance(self, tag)?,
                    activity: *activity,
                    user: users.get(*from)?.id.clone(),
                    action: ItemAction::Delegate {
                        to: users.get(*to)?.id.clone(),
                    },
                }
            }
            _ => return None,
        })
    }
}
