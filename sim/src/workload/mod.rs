//! What a run does, drawn from the seed: the mesh (a controller and two to four nodes), the
//! organisation (technicians on some nodes as their devices), the class document, the
//! definitions submitted and when, the operators' interruptions, resumptions and cancels,
//! their pauses of one activity, their reruns of a failed instance and their delegations of
//! a work item, and the users' turns at their worklists (`people`). `defs` writes the definitions; the
//! simulated commands read what to do from their command line ([`CommandSpec`]).

pub mod defs;
pub mod people;

use std::collections::BTreeMap;

use mobiwf_proto::{ActivityId, Control, InstanceId, UserId};

use crate::rng::Rng;

/// A step of the workload, at its time.
#[derive(Debug, Clone)]
pub enum Script {
    /// The operator applies the organisation document.
    Organisation,
    /// The operator applies the class document.
    Classes,
    /// The operator submits definition `tag`.
    Submit(usize),
    /// The operator interrupts, resumes or cancels the instance of definition `tag`.
    Control(usize, Control),
    /// The operator interrupts the instance of definition `tag`, and resumes it this many µs
    /// later.
    Pause(usize, u64),
    /// The operator pauses activity `activity` of the instance of definition `tag` (killing
    /// its command when `kill`), and resumes it `back` µs later.
    PauseActivity {
        /// The definition's tag.
        tag: usize,
        /// The activity.
        activity: ActivityId,
        /// Kill its running command (it runs again as a new try when resumed).
        kill: bool,
        /// How long until the resumption, µs.
        back: u64,
    },
    /// The operator resumes activity `activity` of the instance of definition `tag`.
    ResumeActivity(usize, ActivityId),
    /// The operator looks whether the instance of definition `tag` failed, and reruns its
    /// failed activity if it did; else looks again a little later, this many times more.
    Rerun(usize, u32),
    /// An administrator delegates the work item of activity `activity` of the instance of
    /// definition `tag` from user `from` to user `to` (indexes into the users).
    Delegate {
        /// The definition's tag.
        tag: usize,
        /// The activity.
        activity: ActivityId,
        /// Who gives it.
        from: usize,
        /// Who gets it.
        to: usize,
    },
    /// Once faults stopped: the operator resumes what is interrupted or paused, every few
    /// seconds.
    Sweep,
    /// A user looks at their worklist and acts.
    Turn(usize),
}

/// A user: who, and which node (index into the nodes) is their device.
#[derive(Debug, Clone)]
pub struct User {
    /// Their id.
    pub id: UserId,
    /// Their device's node index (0-based).
    pub device: usize,
}

/// One definition to submit.
#[derive(Debug, Clone)]
pub struct Def {
    /// What shape it is, for the trace.
    pub shape: &'static str,
    /// The document.
    pub xml: String,
    /// Its activities.
    pub activities: Vec<ActivityId>,
    /// Its manual activity, if it has one.
    pub manual: Option<ActivityId>,
}

/// The workload of one run.
#[derive(Debug, Clone, Default)]
pub struct Workload {
    /// The definitions, by tag.
    pub defs: Vec<Def>,
    /// The users.
    pub users: Vec<User>,
    /// The organisation document, when there are users.
    pub organisation: Option<String>,
    /// The class document, when definitions use classes.
    pub classes: Option<String>,
    /// The steps and their times (µs).
    pub script: Vec<(u64, Script)>,
    /// The instance each submitted definition became.
    pub instances: BTreeMap<usize, InstanceId>,
    /// The definitions the controller refused, and why.
    pub refused: BTreeMap<usize, String>,
    /// The instances' responsible user (definitions with people are submitted with the
    /// first user responsible: a deadline's hand-over goes to them).
    pub responsible: Option<UserId>,
}

/// Draws the workload of a run over `nodes` nodes, its submissions before `until` µs.
pub fn draw(rng: &mut Rng, nodes: usize, until: u64) -> Workload {
    let mut w = Workload::default();
    let count = rng.range(1, 4);
    let mut uses_people = false;
    let mut uses_classes = false;
    for tag in 0..count {
        let id = 100 + tag;
        let (shape, acts) = match rng.below(8) {
            0 => ("paper", Vec::new()),
            1 => {
                let len = rng.range(2, 5);
                ("chain", defs::chain(rng, nodes, len))
            }
            2 => {
                let width = rng.range(2, 4);
                ("fan-out", defs::fan_out(rng, nodes, width))
            }
            3 => ("routes", defs::routes(rng, nodes)),
            4 => ("loop", defs::looped(rng, nodes)),
            5 | 6 => {
                uses_people = true;
                ("people", defs::people(rng, nodes))
            }
            _ => {
                uses_classes = true;
                ("classes", defs::classes(rng, nodes))
            }
        };
        let def = if acts.is_empty() {
            Def {
                shape,
                xml: defs::PAPER.to_owned(),
                activities: defs::PAPER_ACTIVITIES.map(ActivityId).to_vec(),
                manual: None,
            }
        } else {
            Def {
                shape,
                xml: defs::write(id, shape, &acts, nodes),
                activities: acts.iter().map(|a| ActivityId(a.id)).collect(),
                manual: acts
                    .iter()
                    .find(|a| matches!(a.kind, defs::Kind::Manual { .. }))
                    .map(|a| ActivityId(a.id)),
            }
        };
        w.defs.push(def);
        let tag = usize::try_from(tag).unwrap_or(0);
        let at = rng.range(2_000_000, until.max(2_000_001));
        w.script.push((at, Script::Submit(tag)));
        operators(rng, &mut w, tag, at, until);
    }
    if uses_people {
        people::organise(rng, &mut w, nodes);
        administrators(rng, &mut w);
    }
    if uses_classes {
        w.classes = Some(defs::CLASSES.to_owned());
        w.script.push((1_000_000, Script::Classes));
    }
    w
}

/// Now and then an operator interrupts an instance and resumes it later, or cancels it,
/// pauses one of its activities and resumes it later, or watches it to rerun it if it fails.
fn operators(rng: &mut Rng, w: &mut Workload, tag: usize, submitted: u64, until: u64) {
    if rng.chance(250) {
        let at = submitted + rng.range(100_000, 5_000_000);
        let back = rng.range(100_000, 8_000_000);
        w.script.push((at, Script::Pause(tag, back)));
    }
    if rng.chance(100) {
        let at = submitted + rng.range(100_000, until.max(200_000));
        w.script.push((at, Script::Control(tag, Control::Cancel)));
    }
    let activities = w.defs.get(tag).map(|d| d.activities.clone());
    for _ in 0..rng.below(3) {
        let Some(&activity) = activities.as_deref().and_then(|a| rng.pick(a)) else {
            break;
        };
        let at = submitted + rng.range(100_000, 8_000_000);
        let step = Script::PauseActivity {
            tag,
            activity,
            kill: rng.chance(400),
            back: rng.range(100_000, 6_000_000),
        };
        w.script.push((at, step));
    }
    if rng.chance(400) {
        let at = submitted + rng.range(1_000_000, 6_000_000);
        w.script.push((at, Script::Rerun(tag, RERUN_LOOKS)));
    }
}

/// How many times an operator who watches an instance to rerun it looks (every few seconds).
pub const RERUN_LOOKS: u32 = 12;

/// Now and then an administrator delegates a work item from one user to another (its host
/// decides whether it may: who holds it, whether it ended).
fn administrators(rng: &mut Rng, w: &mut Workload) {
    let users = w.users.len() as u64;
    w.responsible = w.users.first().map(|u| u.id.clone());
    let manual: Vec<(usize, ActivityId)> = w
        .defs
        .iter()
        .enumerate()
        .filter_map(|(tag, d)| Some((tag, d.manual?)))
        .collect();
    for (tag, activity) in manual {
        if !rng.chance(350) {
            continue;
        }
        let submitted = w
            .script
            .iter()
            .find_map(|(at, s)| matches!(s, Script::Submit(t) if *t == tag).then_some(*at))
            .unwrap_or(0);
        let from = usize::try_from(rng.below(users)).unwrap_or(0);
        let to = usize::try_from(rng.below(users)).unwrap_or(0);
        let at = submitted + rng.range(500_000, 8_000_000);
        let step = Script::Delegate {
            tag,
            activity,
            from,
            to,
        };
        w.script.push((at, step));
    }
}

/// What a simulated command does, read from its command line:
/// `sim ok=<per mille> ms=<min>-<max> flags=<flag>:<weight>|...`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CommandSpec {
    /// Per mille of its runs that succeed.
    pub ok_per_mille: u32,
    /// Its shortest run, ms.
    pub min_ms: u64,
    /// Its longest run, ms.
    pub max_ms: u64,
    /// The completion flags it writes, with their weights.
    pub flags: Vec<(String, u64)>,
}

impl CommandSpec {
    /// Reads a command line; what it does not say is the default (succeeds, 50 ms to 1 s).
    pub fn parse(command: &str) -> CommandSpec {
        let mut spec = CommandSpec {
            ok_per_mille: 1000,
            min_ms: 50,
            max_ms: 1000,
            flags: Vec::new(),
        };
        for word in command.split_whitespace() {
            if let Some(ok) = word.strip_prefix("ok=") {
                spec.ok_per_mille = ok.parse().unwrap_or(1000);
            } else if let Some(ms) = word.strip_prefix("ms=") {
                let (lo, hi) = ms.split_once('-').unwrap_or((ms, ms));
                spec.min_ms = lo.parse().unwrap_or(50);
                spec.max_ms = hi.parse().unwrap_or(spec.min_ms).max(spec.min_ms);
            } else if let Some(flags) = word.strip_prefix("flags=") {
                spec.flags = flags
                    .split('|')
                    .filter_map(|f| {
                        let (name, weight) = f.split_once(':')?;
                        Some((name.to_owned(), weight.parse().ok()?))
                    })
                    .collect();
            }
        }
        spec
    }

    /// The flag a run writes, drawn by weight; none when it has none.
    pub fn flag(&self, rng: &mut Rng) -> Option<String> {
        let total: u64 = self.flags.iter().map(|(_, w)| w).sum();
        let mut pick = rng.below(total);
        for (name, weight) in &self.flags {
            if pick < *weight {
                return Some(name.clone());
            }
            pick -= weight;
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_command_line_says_what_the_command_does() {
        let spec = CommandSpec::parse("sim ok=900 ms=10-20 flags=a:1|b:3");
        assert_eq!((spec.ok_per_mille, spec.min_ms, spec.max_ms), (900, 10, 20));
        assert_eq!(spec.flags, vec![("a".to_owned(), 1), ("b".to_owned(), 3)]);
        let plain = CommandSpec::parse("echo hello");
        assert_eq!((plain.ok_per_mille, plain.flags.len()), (1000, 0));
        assert_eq!(plain.flag(&mut Rng::new(1)), None);
    }
}
