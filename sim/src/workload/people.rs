//! The people of a run: technicians whose devices are some of the nodes (an organisation
//! document the operator applies first), and their turns at their worklists. At a turn a user
//! looks at the worklist their device's desk shows and acts as a person would: selects (or
//! locks) an item offered to them (two users racing for one item is the point), completes an
//! item they hold (with a completion flag), now and then gives one back. What they do goes to
//! their device as a claim, as through its API; the desk decides it or sends it to the host.

use std::fmt::Write as _;

use mobiwf_people::{EntryState, LocalClaim, Order};
use mobiwf_proto::{ItemAction, UserId};

use super::{Script, User, Workload};
use crate::node::NodeEvent;
use crate::rng::Rng;
use crate::world::World;

/// Draws the users (two or three technicians, each on a node), the organisation document and
/// their first turns.
pub fn organise(rng: &mut Rng, w: &mut Workload, nodes: usize) {
    let count = rng.range(2, 3);
    let mut xml =
        String::from("<organisation><roles><role id=\"tech\" name=\"Technician\"/></roles><users>");
    for n in 0..count {
        let device = usize::try_from(rng.below(nodes as u64)).unwrap_or(0);
        let id = format!("u{n}");
        let _ = write!(
            xml,
            "<user id=\"{id}\" name=\"U{n}\" device=\"P{}\"><role id=\"tech\"/></user>",
            device + 1
        );
        w.users.push(User {
            id: UserId::new(id),
            device,
        });
    }
    xml.push_str("</users></organisation>");
    w.organisation = Some(xml);
    w.script.push((500_000, Script::Organisation));
    for u in 0..w.users.len() {
        let at = rng.range(1_000_000, 4_000_000);
        w.script.push((at, Script::Turn(u)));
    }
}

/// How long a user waits between two turns, µs.
const TURN_EVERY: (u64, u64) = (300_000, 4_000_000);

impl World {
    /// User `u`'s turn at their worklist; their next one is scheduled.
    pub(crate) fn turn(&mut self, u: usize) {
        let Some(user) = self.workload.users.get(u).cloned() else {
            return;
        };
        let next = self.rng.range(TURN_EVERY.0, TURN_EVERY.1);
        self.after(next, crate::world::Event::Script(Script::Turn(u)));
        let pid = user.device + 1;
        if !self.running(pid) {
            return;
        }
        let event = match self.presence(&user) {
            Some(event) => event,
            None => {
                let Some(claim) = self.choose(&user) else {
                    return;
                };
                let line = format!(
                    "{} at {}: {} {}",
                    user.id,
                    self.name(pid),
                    action_word(&claim.action),
                    claim.activity
                );
                self.log(&line);
                NodeEvent::Claim(claim)
            }
        };
        if let Some(n) = &mut self.nodes[pid - 1] {
            n.pending.push(event);
            self.wake_soon(pid);
        }
    }

    /// Now and then a user goes away, more often when they locked an item (to work on it
    /// without the network: an offline copy, completed while away), and one who is away comes
    /// back (always, once faults stopped).
    fn presence(&mut self, user: &User) -> Option<NodeEvent> {
        let node = self.nodes.get(user.device)?.as_ref()?;
        let desk = node.core.desk();
        let away = desk.is_away(user.id.as_str());
        let locked = desk
            .worklist(user.id.as_str(), Order::Arrival)
            .iter()
            .any(|e| e.state == EntryState::Locked);
        let leave = if locked { 400 } else { 40 };
        let event = if away && (self.quiet || self.rng.chance(200)) {
            NodeEvent::Back(user.id.clone())
        } else if !away && !self.quiet && self.rng.chance(leave) {
            NodeEvent::Away(user.id.clone())
        } else {
            return None;
        };
        let line = format!("{}: {event:?}", user.id);
        self.log(&line);
        Some(event)
    }

    /// What `user` does now, from what their device shows them.
    fn choose(&mut self, user: &User) -> Option<LocalClaim> {
        let node = self.nodes.get(user.device)?.as_ref()?;
        let entries = node.core.desk().worklist(user.id.as_str(), Order::Arrival);
        let entry = self.rng.pick(&entries)?.clone();
        if entry.pending.is_some() {
            return None;
        }
        let paused = entry.info.paused_ms.is_some();
        let action = match entry.state {
            EntryState::Offered if entry.info.disconnected && self.rng.chance(500) => {
                ItemAction::Lock
            }
            EntryState::Offered => ItemAction::Select,
            // A paused item waits for its resumption: nothing else is taken meanwhile.
            EntryState::Selected | EntryState::Locked if paused => {
                if !self.quiet && !self.rng.chance(300) {
                    return None;
                }
                ItemAction::Resume
            }
            EntryState::Selected | EntryState::Locked if !self.quiet && self.rng.chance(80) => {
                ItemAction::Pause
            }
            EntryState::Selected | EntryState::Locked if !self.quiet && self.rng.chance(100) => {
                let others: Vec<&User> = self
                    .workload
                    .users
                    .iter()
                    .filter(|u| u.id != user.id)
                    .collect();
                let to = self.rng.pick(&others)?;
                ItemAction::Delegate { to: to.id.clone() }
            }
            EntryState::Selected | EntryState::Locked if self.rng.chance(150) => {
                if entry.state == EntryState::Locked {
                    ItemAction::Unlock
                } else {
                    ItemAction::Release
                }
            }
            EntryState::Selected | EntryState::Locked => ItemAction::Complete {
                succeeded: self.rng.chance(900),
                detail: None,
                flag: None,
                data: mobiwf_proto::Written::default(),
            },
        };
        Some(LocalClaim {
            user: user.id.clone(),
            instance: entry.info.instance,
            activity: entry.info.activity,
            action,
        })
    }
}

/// A user's action, in a word for the trace.
fn action_word(action: &ItemAction) -> String {
    match action {
        ItemAction::Complete { succeeded, .. } => {
            format!("complete ({})", if *succeeded { "done" } else { "failed" })
        }
        other => format!("{other:?}").to_lowercase(),
    }
}
