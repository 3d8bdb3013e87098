//! The synchronization gate of an activity of a task class (*Synchronization and Disconnected
//! Operation in WorkToDo* (IC-03-006), §4.8): once its preconditions and rule hold it enters
//! `Synchronizing`, takes its next round and asks the controller's synchronization manager
//! for its class (`Message::BeginSync`); it is admitted only once the manager grants exactly
//! that ticket (and the files it reads are here, as for any activity), and fails with the
//! manager's words when the manager refuses it (no retries; its contingency applies as for
//! any failure). Whenever it becomes final while it holds or waits for its class, its ticket
//! is released (`Message::EndSync`), once. A rerun, or a loop's next pass, asks again with the
//! next round (naming its pass), so an answer or a release meant for an earlier request is
//! never taken for a later one.
//!
//! A command that runs under a grant runs under its lease (`lease_ms`), counted at the latest
//! from when its request was asked (`asked_ms`, kept with the request: the grant says the
//! controller received it) and kept up by the node on its round trips with the controller: the
//! node's executor kills it once the lease ran out, and the engine is told
//! ([`Input::SyncLost`](crate::Input::SyncLost)): the activity fails, "synchronization lost",
//! without retries (a next try would run without the class). A person's activity holding a
//! grant (offered or taken) is failed the same way when its host's lease ran out
//! ([`Engine::person_lease`] says which the host watches).
//!
//! A grant that comes after the node's lease for its request ran out at some instant since
//! the request (`Input::SyncLapsed`, as the daemon's round trips tell it) is not used: the
//! controller may have counted the class free meanwhile; the request is released and asked
//! for again with the next round.
//!
//! A held try the engine kills (withdrawn, cancelled, its instance completed, past its
//! `timeOut`, paused with `--kill`) may still run until the kill took effect: its request
//! is released only once the executor tells the end of that try, or, should it never tell, a
//! fence ([`mobiwf_proto::fence_ms`]) after the kill, by when the try's lease, no longer kept
//! up, has ended it (`Killed`).
//!
//! A compensation runs after its activity succeeded, hence released its class: it runs
//! without one.
//!
//! An activity the controller marked `ordered` (an ordering between definitions names it,
//! *ibid.* §6.2) asks the same way, with its class or with none, and the manager grants it once
//! the tasks it must follow are over (and its class, if any, is free). A grant to one without a
//! class fences nothing: its command runs without a lease ([`fenced_lease`]); only a class's
//! grant does.
//!
//! An activity with neither a class nor `ordered` never passes through here: it is admitted at
//! once, as before task classes, and sends nothing more.

use mobiwf_proto::{
    ActivityId, BeginSync, ClassName, EndSync, InstanceId, Message, PartitionId, Pass, SyncGranted,
    SyncRefused, SyncTicket, fence_ms,
};
use serde::{Deserialize, Serialize};

use mobiwf_xml_schema::PartitionActivity;

use crate::lifecycle::{Event, Life};
use crate::progress::runs_command;
use crate::run::{Progress, RunKey};
use crate::{Effect, Ended, Engine, Finish, Finisher, Target};

/// What a failure by a lost lease says.
pub const SYNC_LOST: &str = "synchronization lost";

/// What a try killed by its lost lease says.
fn lost_words() -> String {
    format!(
        "{SYNC_LOST}: its command was killed (or never started) because the grant's lease ran \
         out on its node (no round trip with the controller within it)"
    )
}

/// An activity's requests for its class: how many it made, and the one not released yet.
/// Stored with its run (`gates`, only for activities that made a request), so a restart
/// keeps the round and the wait.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Gate {
    /// The requests made so far: the next is round `rounds`.
    #[serde(default)]
    pub rounds: u32,
    /// The request that waits or holds, not released yet.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub open: Option<Open>,
    /// Requests of earlier runs or passes whose held try was killed and whose end was not
    /// told when the activity started over: each is released once it is, or a fence after
    /// its kill (left out while none, so a gate stored before them loads unchanged).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub lingering: Vec<Open>,
}

/// A request not released yet.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Open {
    /// Its round.
    pub round: u32,
    /// Once granted: the grant's lease (ms).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lease_ms: Option<u64>,
    /// When it was asked (ms since the epoch, this node's clock): a grant says the controller
    /// received it, so the lease counts from there at the latest. Absent in requests stored
    /// before it (the lease then counts only from the node's round trips).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub asked_ms: Option<u64>,
    /// A held try the engine killed and whose end was not told yet: the request is released
    /// once it is, or a fence after the kill.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub killed: Option<Killed>,
}

/// A held try the engine ordered killed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Killed {
    /// The try.
    pub attempt: u32,
    /// When the kill was ordered (ms since the epoch).
    pub at_ms: u64,
}

impl Gate {
    /// True when it made no request: nothing to store.
    pub fn is_unused(&self) -> bool {
        *self == Gate::default()
    }

    /// The lease of the grant it holds, if it holds one.
    pub fn lease_ms(&self) -> Option<u64> {
        self.open.and_then(|o| o.lease_ms)
    }

    /// True while it holds a grant.
    pub fn granted(&self) -> bool {
        self.lease_ms().is_some()
    }

    /// When the request it holds or waits with was asked (0: not known).
    pub fn asked_ms(&self) -> u64 {
        self.open.and_then(|o| o.asked_ms).unwrap_or(0)
    }

    /// When the request it holds is released at the latest after its killed try's end was
    /// not told: a fence after the kill.
    pub(crate) fn unfenced_at(&self) -> Option<u64> {
        self.open.as_ref().and_then(Open::unfenced_at)
    }

    /// When the first lingering request is released at the latest.
    pub(crate) fn lingering_unfenced_at(&self) -> Option<u64> {
        self.lingering.iter().filter_map(Open::unfenced_at).min()
    }

    /// After an operator's rerun or for a loop's next pass (only ever from a final state, so
    /// the request still open, if any, is a killed held try's): no request open, the rounds
    /// counted on, the killed try's request lingering until its end is told.
    pub(crate) fn start_over(&self) -> Gate {
        let mut lingering = self.lingering.clone();
        lingering.extend(self.open.filter(|o| o.killed.is_some()));
        Gate {
            rounds: self.rounds,
            open: None,
            lingering,
        }
    }
}

impl Open {
    /// When it is released at the latest when it is a killed held try's whose end was not
    /// told: a fence after the kill.
    fn unfenced_at(&self) -> Option<u64> {
        let killed = self.killed?;
        Some(killed.at_ms.saturating_add(fence_ms(self.lease_ms?)))
    }
}

/// A command that ran under a grant was killed because its lease ran out (no round trip of its
/// node with the controller for `lease_ms`, or its node was dead): the activity fails.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Lost {
    /// The instance.
    pub instance: InstanceId,
    /// The partition.
    pub partition: PartitionId,
    /// The activity.
    pub activity: ActivityId,
    /// The try that was killed: the word about an earlier try is ignored.
    pub attempt: u32,
}

fn ticket(key: RunKey, activity: ActivityId, round: u32) -> SyncTicket {
    SyncTicket {
        instance: key.instance,
        partition: key.partition,
        activity,
        round,
    }
}

fn key_of(ticket: &SyncTicket) -> RunKey {
    RunKey {
        instance: ticket.instance,
        partition: ticket.partition,
    }
}

impl Engine {
    /// An activity that just entered `Synchronizing`: when it has a class or is ordered, it
    /// takes its next round and asks the manager (for its class, if it has one); true then (it
    /// waits for the answer).
    pub(crate) fn begin_sync(
        &mut self,
        key: RunKey,
        activity: ActivityId,
        effects: &mut Vec<Effect>,
    ) -> bool {
        let Some(run) = self.runs.get_mut(&key) else {
            return false;
        };
        let Some(class) = run
            .activity(activity)
            .filter(|a| asks(a))
            .map(|a| a.class.clone())
        else {
            return false;
        };
        let pass = run.progress(activity).map(|p| p.pass).unwrap_or_default();
        let Some(gate) = run.gate_mut(activity) else {
            return false;
        };
        let round = gate.rounds;
        gate.rounds = round.saturating_add(1);
        gate.open = Some(Open {
            round,
            lease_ms: None,
            asked_ms: Some(mobiwf_proto::Millis::from_micros(self.now_us).as_u64()),
            killed: None,
        });
        self.touch_run(key);
        effects.push(begin(ticket(key, activity, round), class, pass));
        true
    }

    /// The manager granted a request: when it is the one this activity waits with, it is
    /// admitted (once the files it reads are here and its instance is not interrupted). A
    /// repeated grant changes nothing; a grant of a request released already (an earlier
    /// round's, whose request reached the manager late) is released again, so the manager
    /// does not keep the class for a request nobody waits with.
    pub(crate) fn sync_granted(&mut self, granted: SyncGranted, effects: &mut Vec<Effect>) {
        let SyncGranted { ticket, lease_ms } = granted;
        let key = key_of(&ticket);
        let Some(run) = self.runs.get_mut(&key) else {
            return;
        };
        let released = run.gate_mut(ticket.activity).is_some_and(|g| {
            ticket.round < g.rounds
                && g.open.is_none_or(|o| o.round != ticket.round)
                && !g.lingering.iter().any(|o| o.round == ticket.round)
        });
        if released {
            effects.push(end(key, ticket.activity, ticket.round));
            return;
        }
        if run.life(ticket.activity) != Some(&Life::Synchronizing) {
            return;
        }
        let Some(open) = run
            .gate_mut(ticket.activity)
            .and_then(|g| g.open.as_mut())
            .filter(|o| o.round == ticket.round && o.lease_ms.is_none())
        else {
            return;
        };
        open.lease_ms = Some(lease_ms);
        self.touch_run(key);
        self.admit_synchronized(key, effects);
        self.advance(key, effects);
    }

    /// A grant that came after this node's lease for its request ran out at some instant
    /// since the request was asked (the daemon's round trips with the controller say so,
    /// `mobiwf_node_core::lease`): the controller may have suspected the node meanwhile,
    /// counted the class free and granted it to a conflicting activity, so the grant is not
    /// used. When the activity still waits with that request, the request is released and the
    /// activity asks again with its next round, which the manager grants afresh or queues.
    /// Any other grant is taken as [`Engine::sync_granted`] takes it: a released round's is
    /// released again, and one without a class (an ordering's) fences nothing.
    pub(crate) fn sync_lapsed(&mut self, granted: SyncGranted, effects: &mut Vec<Effect>) {
        let ticket = granted.ticket;
        let key = key_of(&ticket);
        let activity = ticket.activity;
        let released = self.runs.get_mut(&key).and_then(|run| {
            let waits = run.life(activity) == Some(&Life::Synchronizing)
                && run.activity(activity).is_some_and(|a| a.class.is_some());
            run.gate_mut(activity).filter(|_| waits).and_then(|g| {
                g.open
                    .take_if(|o| o.round == ticket.round && o.lease_ms.is_none())
            })
        });
        if released.is_none() {
            return self.sync_granted(granted, effects);
        }
        effects.push(end(key, ticket.activity, ticket.round));
        self.touch_run(key);
        self.begin_sync(key, ticket.activity, effects);
    }

    /// The manager refused the request this activity waits with: it fails with the
    /// manager's words (the manager dropped the request: nothing to release).
    pub(crate) fn sync_refused(&mut self, refused: SyncRefused, effects: &mut Vec<Effect>) {
        let SyncRefused { ticket, detail } = refused;
        let key = key_of(&ticket);
        let Some(run) = self.runs.get_mut(&key) else {
            return;
        };
        if run.life(ticket.activity) != Some(&Life::Synchronizing) {
            return;
        }
        let Some(gate) = run.gate_mut(ticket.activity) else {
            return;
        };
        if !gate
            .open
            .is_some_and(|o| o.round == ticket.round && o.lease_ms.is_none())
        {
            return;
        }
        gate.open = None;
        self.conclude(key, ticket.activity, Event::Fail { detail }, effects);
        self.advance(key, effects);
    }

    /// The lease of a grant ran out: the command that ran under it was killed, or the
    /// person's activity that held it (offered or taken) can no longer be done under it. The
    /// activity fails for good, once (the word about another try of a command, or about an
    /// activity no longer under way, changes nothing).
    pub(crate) fn sync_lost(&mut self, lost: Lost, effects: &mut Vec<Effect>) {
        if self.killed_try_ended(lost.instance, lost.activity, lost.attempt) {
            return;
        }
        let key = RunKey {
            instance: lost.instance,
            partition: lost.partition,
        };
        let Some(run) = self.runs.get(&key) else {
            return;
        };
        let (Some(act), Some(p)) = (run.activity(lost.activity), run.progress(lost.activity))
        else {
            return;
        };
        let detail = if runs_command(act) {
            if matches!(p.life(), Life::Paused { .. }) && p.gate.granted() {
                // Paused with its try running on: the killed try's end is held, as any end
                // that comes while it is paused, and taken (a failed try) when it is resumed.
                let ended = Ended {
                    instance: lost.instance,
                    activity: lost.activity,
                    finish: Finish::of(false, Some(lost_words()), None),
                    by: Finisher::Command,
                    attempt: lost.attempt,
                    written: Vec::new(),
                };
                self.hold_end(key, &ended);
                return;
            }
            let running = matches!(p.life(), Life::Running { .. });
            if !running || p.try_number() != lost.attempt || fenced_lease(act, p).is_none() {
                return;
            }
            lost_words()
        } else {
            if held_by_person(act, p).is_none() {
                return;
            }
            format!(
                "{SYNC_LOST}: the grant's lease ran out on its host (no round trip with the \
                 controller within it), so it may no longer be done"
            )
        };
        self.conclude(key, lost.activity, Event::Fail { detail }, effects);
        self.advance(key, effects);
    }

    /// The lease of the grant a person's activity holds while it is offered or taken (its
    /// host fails it when that lease runs out without word from the controller:
    /// [`Input::SyncLost`](crate::Input::SyncLost)); `None` for any other activity.
    pub fn person_lease(&self, key: RunKey, activity: ActivityId) -> Option<u64> {
        let run = self.runs.get(&key)?;
        held_by_person(run.activity(activity)?, run.progress(activity)?)
    }

    /// An activity became final: the request it waits or holds with is released (once: it
    /// is no longer open after), unless a held try of it was killed and its end not told yet
    /// (then once it is, [`Engine::killed_try_ended`], or a fence after the kill,
    /// [`Engine::unfence`]).
    pub(crate) fn release_sync(&mut self, key: RunKey, activity: ActivityId) {
        let Some(gate) = self.runs.get_mut(&key).and_then(|r| r.gate_mut(activity)) else {
            return;
        };
        if gate.open.is_some_and(|o| o.killed.is_some()) {
            return;
        }
        let Some(open) = gate.open.take() else {
            return;
        };
        self.touch_run(key);
        self.told.push(end(key, activity, open.round));
    }

    /// Kills try `attempt` of `activity`'s command (`why`, for the log). A held try is marked
    /// killed: its request is not released before its end is told (the module's doc).
    pub(crate) fn kill_try(
        &mut self,
        key: RunKey,
        activity: ActivityId,
        attempt: u32,
        why: String,
        effects: &mut Vec<Effect>,
    ) {
        effects.push(Effect::Kill {
            key,
            activity,
            attempt,
            why,
        });
        let at_ms = self.now_ms();
        let Some(run) = self.runs.get_mut(&key) else {
            return;
        };
        let held = run
            .activity(activity)
            .zip(run.progress(activity))
            .is_some_and(|(act, p)| fenced_lease(act, p).is_some());
        if let Some(open) = run.gate_mut(activity).and_then(|g| g.open.as_mut())
            && held
        {
            open.killed = Some(Killed { attempt, at_ms });
            self.touch_run(key);
        }
    }

    /// The executor told the end of try `attempt` of `activity` (or that its lease killed
    /// it): when it is the killed try its request waits for, the request no longer waits,
    /// and is released if the activity is final. True when that is all the end means (the
    /// activity is final).
    pub(crate) fn killed_try_ended(
        &mut self,
        instance: InstanceId,
        activity: ActivityId,
        attempt: u32,
    ) -> bool {
        let Ok(key) = self.run_of(instance, activity) else {
            return false;
        };
        let Some(run) = self.runs.get_mut(&key) else {
            return false;
        };
        let is_final = run.life(activity).is_some_and(Life::is_final);
        let Some(gate) = run.gate_mut(activity) else {
            return false;
        };
        let of_attempt = |o: &Open| o.killed.is_some_and(|k| k.attempt == attempt);
        if let Some(i) = gate.lingering.iter().position(of_attempt) {
            // An earlier run's or pass's killed try: over now, its request is released.
            let round = gate.lingering.remove(i).round;
            self.touch_run(key);
            self.told.push(end(key, activity, round));
            return true;
        }
        let Some(open) = gate.open.as_mut() else {
            return false;
        };
        if open.killed.is_none_or(|k| k.attempt != attempt) {
            return false;
        }
        open.killed = None;
        self.touch_run(key);
        if is_final {
            self.release_sync(key, activity);
        }
        is_final
    }

    /// A fence passed (at `now_ms`) since a held try was killed without its end being told:
    /// its lease, no longer kept up, has ended it; its request is released (the open one of a
    /// final activity, or a lingering one of an earlier run or pass).
    pub(crate) fn unfence(&mut self, key: RunKey, activity: ActivityId, now_ms: u64) {
        let Some(run) = self.runs.get_mut(&key) else {
            return;
        };
        // The open request only once final: until then a later try may run under it.
        let is_final = run.life(activity).is_some_and(Life::is_final);
        let Some(gate) = run.gate_mut(activity) else {
            return;
        };
        let (due, kept): (Vec<Open>, Vec<Open>) = std::mem::take(&mut gate.lingering)
            .into_iter()
            .partition(|o| o.unfenced_at().is_some_and(|at| at <= now_ms));
        gate.lingering = kept;
        let open_due = is_final && gate.unfenced_at().is_some_and(|at| at <= now_ms);
        if let Some(open) = gate.open.as_mut().filter(|_| open_due) {
            open.killed = None;
        }
        if !due.is_empty() {
            self.touch_run(key);
        }
        for open in due {
            self.told.push(end(key, activity, open.round));
        }
        if open_due {
            self.release_sync(key, activity);
        }
    }

    /// When the request of `activity` whose grant a person's activity holds was asked (0:
    /// not known): its lease counts from there at the latest.
    pub fn asked_ms(&self, key: RunKey, activity: ActivityId) -> u64 {
        self.runs
            .get(&key)
            .and_then(|r| r.progress(activity))
            .map_or(0, |p| p.gate.asked_ms())
    }

    /// True when an activity of the run is granted and still synchronizing (it waits for a
    /// file, or for its instance to be resumed).
    pub(crate) fn granted_waiting(&self, key: RunKey) -> bool {
        self.runs.get(&key).is_some_and(|run| {
            run.doc().activities.iter().any(|a| {
                asks(a)
                    && run.life(a.id) == Some(&Life::Synchronizing)
                    && run.progress(a.id).is_some_and(|p| p.gate.granted())
            })
        })
    }
}

/// The lease of the grant `act` holds when it is a person's activity (no command runs it),
/// offered or taken.
fn held_by_person(act: &PartitionActivity, p: &Progress) -> Option<u64> {
    let under_way = matches!(p.life(), Life::Ready | Life::Running { .. });
    (!runs_command(act) && under_way)
        .then(|| fenced_lease(act, p))
        .flatten()
}

/// True when `act` asks the manager before it is ready: it has a task class, or an ordering
/// between definitions names it.
pub(crate) fn asks(act: &PartitionActivity) -> bool {
    act.class.is_some() || act.ordered
}

/// The lease `act` runs under: its grant's, when it holds one for a class. A grant of an
/// activity without a class (only ordered) fences nothing.
pub(crate) fn fenced_lease(act: &PartitionActivity, p: &Progress) -> Option<u64> {
    act.class.as_ref().and(p.gate.lease_ms())
}

/// The release of round `round` of `activity`'s requests.
fn end(key: RunKey, activity: ActivityId, round: u32) -> Effect {
    Effect::Send {
        to: Target::Controller,
        message: Message::EndSync(EndSync {
            ticket: ticket(key, activity, round),
        }),
    }
}

fn begin(ticket: SyncTicket, class: Option<ClassName>, pass: Pass) -> Effect {
    Effect::Send {
        to: Target::Controller,
        message: Message::BeginSync(BeginSync {
            ticket,
            class,
            pass,
        }),
    }
}
