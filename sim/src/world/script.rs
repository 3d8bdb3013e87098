//! The workload's steps in the world: the operators' commands go to the controller's actor as
//! its API would give them (a command to a controller that is down is tried again a little
//! later, as an operator would; a submission whose group was lost in a crash is submitted
//! again), the users' turns go to their devices.

use mobiwf_proto::Control;

use super::{CONTROLLER, Event, World};
use crate::controller::{CtlEvent, Operator};
use crate::workload::Script;

/// How long an operator waits before trying a command again, µs.
const OPERATOR_RETRY_US: u64 = 2_000_000;
/// How long an operator waits for a submission's answer before submitting again, µs.
const SUBMIT_ANSWER_US: u64 = 10_000_000;

/// How often the operator looks for interrupted instances once faults stopped, µs.
const SWEEP_EVERY_US: u64 = 5_000_000;

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
            Script::Organisation => match &self.workload.organisation {
                Some(doc) => Operator::Organisation(doc.clone()),
                None => return,
            },
            Script::Classes => match &self.workload.classes {
                Some(doc) => Operator::Classes(doc.clone()),
                None => return,
            },
            Script::Submit(tag) => {
                if self.workload.instances.contains_key(tag)
                    || self.workload.refused.contains_key(tag)
                {
                    return;
                }
                let Some(def) = self.workload.defs.get(*tag) else {
                    return;
                };
                let op = Operator::Submit {
                    definition: def.xml.clone(),
                    source: format!("{}-{tag}.xml", def.shape),
                    tag: *tag,
                };
                // Not answered in time (the group lost in a crash): submitted again.
                self.after(SUBMIT_ANSWER_US, Event::Script(Script::Submit(*tag)));
                op
            }
            Script::Control(tag, action) => {
                let Some(&instance) = self.workload.instances.get(tag) else {
                    return;
                };
                Operator::Control {
                    instance,
                    action: *action,
                }
            }
            Script::Pause(tag, back) => {
                let Some(&instance) = self.workload.instances.get(tag) else {
                    return;
                };
                let resume = Script::Control(*tag, Control::Resume);
                self.after(*back, Event::Script(resume));
                Operator::Control {
                    instance,
                    action: Control::Interrupt,
                }
            }
            Script::Sweep => {
                self.sweep();
                return;
            }
            Script::Turn(_) => return,
        };
        let line = format!("operator: {script:?}");
        self.log(&line);
        if let Some(c) = &mut self.controller {
            c.pending.push(CtlEvent::Operator(op));
            self.wake_soon(CONTROLLER);
        }
    }
}
