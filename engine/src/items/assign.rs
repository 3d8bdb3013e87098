//! Who a work item is offered to: when its activity starts, and again when a newer directory
//! comes for items nobody could be offered. The choice itself is `mobiwf_people::choose`;
//! this file gives it the host's load and the role's round-robin token, and applies it.

use std::collections::{BTreeMap, BTreeSet};

use mobiwf_people::{Choice, Directory, Load};
use mobiwf_proto::{ActivityId, Millis, NodeId, UserId};
use mobiwf_xml_schema::{ActivityKind, Method, People};

use super::lifecycle::{CopyEvent, NotAllowed};
use super::{Item, ItemCopy, ItemKey};
use crate::run::RunKey;
use crate::{Effect, Engine};

impl Engine {
    /// The time of the input being applied, in ms.
    pub(crate) fn now_ms(&self) -> u64 {
        Millis::from_micros(self.now_us).as_u64()
    }

    /// The people extensions of an activity that goes to people's worklists; `None` for
    /// every other activity (they keep the node-wide worklist).
    pub(crate) fn people_of(&self, key: RunKey, activity: ActivityId) -> Option<People> {
        let act = self.runs.get(&key)?.activity(activity)?;
        let by_people = matches!(act.kind, ActivityKind::Manual | ActivityKind::SemiAutomatic);
        (by_people && act.people.assigned()).then(|| act.people.clone())
    }

    /// The activity just became ready: when it names people, its work item is created and
    /// offered (or, when nobody can be offered it, kept unassigned until a newer directory
    /// comes). False when it names nobody (it waits on its node's worklist).
    pub(crate) fn offer_item(
        &mut self,
        key: RunKey,
        activity: ActivityId,
        fx: &mut Vec<Effect>,
    ) -> bool {
        let Some(people) = self.people_of(key, activity) else {
            return false;
        };
        let now_ms = self.now_ms();
        let mut item = Item::new(key, activity, now_ms);
        item.due = self.due_for(key, activity);
        let before = item.involved();
        let choice = self.choose_for(&people);
        let mut refused = Vec::new();
        apply_choice(&mut item, choice, now_ms, &mut refused);
        self.record_copies_refused(key, activity, refused);
        let id = item.key();
        // After a rerun, the item of the earlier run is replaced: devices take the newer
        // version only.
        item.version = self.host.items.get(&id).map_or(1, |old| old.version + 1);
        self.host.items.insert(id, item);
        self.host.dirty_items.insert(id);
        self.publish(id, &before, None, Vec::new(), fx);
        true
    }

    /// A directory from the controller: kept when newer than the one held (an older one is
    /// ignored); then every open item nobody is offered is assigned again.
    pub(crate) fn take_directory(&mut self, directory: Directory, fx: &mut Vec<Effect>) {
        if directory.version <= self.host.directory.version {
            return;
        }
        let mut directory = directory;
        // What this node saw of the links is its own: a new version does not undo it.
        directory.unreachable = std::mem::take(&mut self.host.directory.unreachable);
        let old = std::mem::replace(&mut self.host.directory, directory);
        self.host.dirty_directory = true;
        let versions: BTreeMap<ItemKey, u64> = self
            .host
            .items
            .values()
            .filter(|i| i.is_open())
            .map(|i| (i.key(), i.version))
            .collect();
        self.assign_open_again(fx);
        self.tell_new_devices(&old, &versions, fx);
    }

    /// The users of open items whose device the new directory names and the old did not (it
    /// registered since, or the user moved to another): that device is sent the item, which
    /// it could not be before (unless assigning it again just changed it, and so sent it to
    /// every user it involves). A holder given the item while their device was not registered
    /// (the responsible user at a hand-over) would otherwise never see it on their worklist.
    fn tell_new_devices(
        &self,
        old: &Directory,
        versions: &BTreeMap<ItemKey, u64>,
        fx: &mut Vec<Effect>,
    ) {
        let dir = &self.host.directory;
        let moved = |u: &UserId| {
            let now = dir.device_of(u.as_str()).map(|d| &d.name);
            now.is_some() && now != old.device_of(u.as_str()).map(|d| &d.name)
        };
        let unchanged = |i: &&Item| versions.get(&i.key()) == Some(&i.version);
        for item in self.host.items.values().filter(unchanged) {
            let users: BTreeSet<UserId> =
                item.involved().users().into_iter().filter(moved).collect();
            if !users.is_empty() {
                self.send_views(item, &users, None, fx);
            }
        }
    }

    /// A device became unreachable or answered again (`Input::Link`); once it answers, its
    /// users may be offered what nobody could be.
    pub(crate) fn link(&mut self, peer: &NodeId, reachable: bool, fx: &mut Vec<Effect>) {
        if !self.host.directory.set_reachable(peer, reachable) {
            return;
        }
        if reachable {
            self.assign_open_again(fx);
        }
    }

    fn assign_open_again(&mut self, fx: &mut Vec<Effect>) {
        let open: Vec<ItemKey> = self
            .host
            .items
            .values()
            .filter(|i| i.is_open())
            .map(Item::key)
            .collect();
        for id in open {
            self.assign_again(id, fx);
        }
    }

    /// Brings an open item in line with the directory: a copy nobody holds is no longer
    /// offered to users now on leave or without a device; each copy left with nobody is
    /// offered to its own audience as far as they are available now; then, when still nobody,
    /// a new choice (for method `all` only while it has no open copy: its copies belong to
    /// their users), never of the users an administrator took it off.
    fn assign_again(&mut self, id: ItemKey, fx: &mut Vec<Effect>) {
        let Some(item) = self.host.items.get(&id) else {
            return;
        };
        let Some(people) = self.people_of(item.run_key(), item.activity) else {
            return;
        };
        let now_ms = self.now_ms();
        let before = item.involved();
        let mut after = item.clone();
        let dir = &self.host.directory;
        let mut refused = Vec::new();
        // Both take only offered copies, which every `Offer` is allowed to.
        for copy in after
            .copies
            .iter_mut()
            .filter(|c| c.is_open() && c.holder().is_none())
        {
            let to = kept(dir, copy.offered());
            copy.apply_allowed(CopyEvent::Offer { to, at_ms: None }, &mut refused);
        }
        for copy in after.copies.iter_mut().filter(|c| c.orphaned()) {
            let to = available(dir, copy.audience());
            let at_ms = (!to.is_empty()).then_some(now_ms);
            copy.apply_allowed(CopyEvent::Offer { to, at_ms }, &mut refused);
        }
        let no_open_copy = !after.any_open_copy();
        if after.orphaned() && (no_open_copy || people.method != Method::All) {
            let choice = self.choose_for(&people);
            apply_choice(&mut after, choice, now_ms, &mut refused);
        }
        self.record_copies_refused(after.run_key(), after.activity, refused);
        after.settle(|| "nobody can be offered it".to_owned());
        if self.host.items.get(&id) == Some(&after) {
            return;
        }
        after.version += 1;
        self.host.items.insert(id, after);
        self.host.dirty_items.insert(id);
        self.publish(id, &before, None, Vec::new(), fx);
    }

    /// `mobiwf_people::choose` with this host's load and the role's token; a round-robin
    /// choice moves the token (durably).
    fn choose_for(&mut self, people: &People) -> Choice {
        let load = self.load();
        let token = people.role.as_ref().and_then(|r| self.host.tokens.get(r));
        let choice = mobiwf_people::choose(&self.host.directory, people, &load, token);
        if let (Choice::Fixed(user), Method::RoundRobin, Some(role)) =
            (&choice, people.method, &people.role)
        {
            self.host.tokens.insert(role.clone(), user.clone());
            self.host.dirty_tokens.insert(role.clone());
        }
        choice
    }

    /// The open copies each user is offered or holds on this host, and those they hold.
    pub(crate) fn load(&self) -> Load {
        let mut load = Load::default();
        for item in self.host.items.values().filter(|i| i.is_open()) {
            for copy in item.copies.iter().filter(|c| c.is_open()) {
                for user in copy.offered() {
                    *load.open.entry(user.clone()).or_default() += 1;
                }
                if let Some(h) = copy.holder() {
                    *load.open.entry(h.user.clone()).or_default() += 1;
                    *load.held.entry(h.user.clone()).or_default() += 1;
                }
            }
        }
        load
    }
}

/// The users of `users` who keep their offers (in the directory, not on leave, with a
/// registered device; a user who is away keeps them).
fn kept(dir: &Directory, users: &BTreeSet<UserId>) -> BTreeSet<UserId> {
    users
        .iter()
        .filter(|u| dir.user(u.as_str()).is_some_and(|x| dir.keeps_offers(x)))
        .cloned()
        .collect()
}

/// The users of `users` who may be offered work now (in the directory, not on leave, with a
/// registered device).
pub(crate) fn available(dir: &Directory, users: &BTreeSet<UserId>) -> BTreeSet<UserId> {
    users
        .iter()
        .filter(|u| dir.user(u.as_str()).is_some_and(|x| dir.available(x)))
        .cloned()
        .collect()
}

/// Applies the assignment's choice: one copy offered to the chosen users (reusing the
/// orphaned copy of an item assigned again), or a copy per user (method `all`), or nothing;
/// the users an administrator took the item off are left out. A copy's refusal (a bug) goes
/// to `refused`.
fn apply_choice(item: &mut Item, choice: Choice, now_ms: u64, refused: &mut Vec<NotAllowed>) {
    let mut nobody = None;
    let removed = item.removed.clone();
    let choice = match choice {
        Choice::Offer(users) => Choice::Offer(without(users, &removed)),
        Choice::Copies(users) => Choice::Copies(without(users, &removed)),
        Choice::Fixed(user) if removed.contains(&user) => Choice::Nobody(format!(
            "the assignment chose {user}, whom an administrator took it off"
        )),
        other => other,
    };
    let choice = match choice {
        Choice::Offer(users) | Choice::Copies(users) if users.is_empty() => {
            Choice::Nobody("everyone chosen was taken off it by an administrator".to_owned())
        }
        other => other,
    };
    match choice {
        Choice::Offer(users) => single(item, users.into_iter().collect(), now_ms, refused),
        Choice::Fixed(user) => single(item, BTreeSet::from([user]), now_ms, refused),
        Choice::Copies(users) => {
            for user in users {
                if !item.copies.iter().any(|c| c.is_open() && c.concerns(&user)) {
                    let copy = ItemCopy::offered_to(BTreeSet::from([user]), now_ms);
                    item.copies.push(copy);
                }
            }
        }
        Choice::Nobody(why) => nobody = Some(why),
    }
    item.settle(|| nobody.unwrap_or_else(|| "nobody can be offered it".to_owned()));
}

fn without(users: Vec<UserId>, removed: &BTreeSet<UserId>) -> Vec<UserId> {
    users.into_iter().filter(|u| !removed.contains(u)).collect()
}

/// The item's one copy, offered to `users`. Only an orphaned item is assigned again, and its
/// one copy is offered (to nobody): one that is not would refuse it, stay as it is, and the
/// refusal go to `refused`.
fn single(item: &mut Item, users: BTreeSet<UserId>, now_ms: u64, refused: &mut Vec<NotAllowed>) {
    match item.copies.first_mut() {
        Some(copy) => {
            let assign = CopyEvent::Assign {
                to: users,
                at_ms: now_ms,
            };
            copy.apply_allowed(assign, refused);
        }
        None => item.copies.push(ItemCopy::offered_to(users, now_ms)),
    }
}
