//! The synchronization manager in the book: who may ask for a class (only the node running the
//! request's partition, for the class its definition names), what a request, a release and
//! time do, the releases the controller makes itself (every wait of an activity it knows
//! final, of a partition it gave up or finished, of an instance over or gone; every hold whose
//! node is suspected or gone once its lease is over there, `fence.rs`: looked at after every
//! input, so no path that ends one is missed), the class document an operator applies, and the
//! messages and history events all this causes.
//!
//! Whatever the book decided about a holder's activity (withdrawn, cancelled, its instance
//! over), its command may still run until its node carries the order out: a hold ends by the
//! node's release, or once its node is suspected or gone and its lease ran out there. The
//! failure detector watches every holder's node ([`Book::watched`]), so a holder whose node
//! died is never kept forever.

use mobiwf_proto::{
    BeginSync, EndSync, Message, NodeId, SyncGranted, SyncRefused, SyncTicket, fence_ms,
};
use mobiwf_xml_schema::{ClassDocument, ClassName, Diagnostics, WorkflowDefinition, load_classes};
use serde::{Deserialize, Serialize};

use super::{Begun, Blocker, Ended, OrderWaiter, SyncEntry, SyncRecord};
use crate::history::Event;
use crate::recovery::{label, label_text};
use crate::{Applied, Book, BookError, Effect, Instance};

/// How long a grant's holder may go without a round trip with the controller before it must
/// have stopped (ms), unless told: half the failure detector's default suspicion time (10 s),
/// so that a holder cut off has stopped before the controller counts its class free.
pub const DEFAULT_LEASE_MS: u64 = 5_000;

/// The class document as the store keeps it (`meta/classes`): as an operator applied it.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ClassesRecord {
    /// The document (empty: none applied yet).
    pub document: String,
    /// When it was applied, ms since the epoch.
    pub applied_ms: u64,
}

impl ClassesRecord {
    /// What the stored document says (none applied: no classes).
    pub fn classes(&self) -> Result<ClassDocument, Diagnostics> {
        if self.document.is_empty() {
            return Ok(ClassDocument::default());
        }
        load_classes(self.document.as_bytes()).map(|l| l.value)
    }
}

/// Why the controller itself ends a wait (none: it stands): nothing runs under a wait, so it
/// ends as soon as the book knows its activity will not run.
pub(super) fn release_reason(book: &Book, t: &SyncTicket) -> Option<String> {
    let Some(inst) = book.instances.get(&t.instance) else {
        return Some(format!("instance {} is over", t.instance));
    };
    if inst.state().is_final() {
        return Some(format!("the instance is {}", inst.state().as_str()));
    }
    match inst.partitions.iter().find(|p| p.id == t.partition) {
        None => return Some(format!("the instance has no partition {}", t.partition)),
        Some(p) if p.abandoned().is_some() => {
            return Some(format!("partition {} was given up", t.partition));
        }
        // A partition that finished runs again when a loop's body it holds starts a new
        // pass: its activity's view says whether the request's pass is over.
        Some(_) => {}
    }
    match inst.activities.iter().find(|a| a.id == t.activity) {
        None => Some(format!("the instance has no activity {}", t.activity)),
        Some(a) if a.state().is_final() => Some(format!("the activity is {}", a.state().as_str())),
        Some(_) => None,
    }
}

impl Book {
    /// The book, granting leases of `lease_ms` ms (the controller gives half its failure
    /// detector's suspicion time).
    pub fn with_lease_ms(mut self, lease_ms: u64) -> Book {
        self.lease_ms = lease_ms.max(1);
        self
    }

    /// The book restored with its stored class document and synchronization state.
    pub fn with_sync(
        mut self,
        classes: ClassesRecord,
        parsed: ClassDocument,
        state: SyncRecord,
    ) -> Book {
        self.classes_record = classes;
        self.classes = parsed;
        self.sync = super::Manager::restore(state);
        self
    }

    /// The class document in force.
    pub fn classes(&self) -> &ClassDocument {
        &self.classes
    }

    /// The class document as applied (its text, when).
    pub fn classes_record(&self) -> &ClassesRecord {
        &self.classes_record
    }

    /// The lease a grant carries, ms.
    pub fn lease_ms(&self) -> u64 {
        self.lease_ms
    }

    /// The holders and waiters, as stored.
    pub fn sync_state(&self) -> &SyncRecord {
        self.sync.state()
    }

    /// An operator applies a class document. Refused when it leaves out a class an
    /// activity of an instance not over names (its requests would have no class to wait for).
    pub(crate) fn apply_classes(
        &mut self,
        now_ms: u64,
        document: String,
        classes: ClassDocument,
    ) -> Result<Applied, BookError> {
        let mut missing = Vec::new();
        for id in &self.live {
            let Some(def) = self.definitions.get(id) else {
                continue;
            };
            for a in &def.activities {
                if let Some(class) = a.class.as_ref().filter(|c| classes.class(c).is_none()) {
                    missing.push(format!(
                        "instance {id}'s activity {} names class {class}, which the document \
                         leaves out",
                        a.id
                    ));
                }
            }
        }
        if !missing.is_empty() {
            missing.push(
                "keep those classes in the document until the instances end (or cancel them)"
                    .to_owned(),
            );
            return Err(BookError::Classes(missing.join("\n")));
        }
        self.classes = classes;
        self.classes_record = ClassesRecord {
            document,
            applied_ms: now_ms,
        };
        self.dirty_classes = true;
        Ok(Applied::default())
    }

    /// A definition whose activity names a class the class document does not have is
    /// refused, saying which activity, which class and what to do.
    pub(crate) fn check_classes(&self, def: &WorkflowDefinition) -> Result<(), BookError> {
        let problems: Vec<String> = def
            .activities
            .iter()
            .filter_map(|a| {
                let class = a.class.as_ref()?;
                self.classes.class(class).is_none().then(|| {
                    format!(
                        "activity {} names class {class}, which the controller's class \
                         document does not have: add it to the document and apply it \
                         (mobiwf-controller classes apply FILE)",
                        a.id
                    )
                })
            })
            .collect();
        if problems.is_empty() {
            Ok(())
        } else {
            Err(BookError::Classes(problems.join("\n")))
        }
    }

    /// A node asks for its activity's class, or for its relative order (beginSync): an
    /// ordered task goes through its instance's relative order first (`ordered.rs`), then
    /// to its class, or is granted when it has none.
    pub(crate) fn begin_sync(
        &mut self,
        now_ms: u64,
        peer: &NodeId,
        begin: BeginSync,
    ) -> Result<Applied, BookError> {
        let t = begin.ticket;
        let inst = self
            .instances
            .get(&t.instance)
            .ok_or(BookError::UnknownInstance(t.instance))?;
        self.check_asker(inst, peer, &begin)?;
        // A request of a loop's later pass starts that pass in the activity's view.
        self.word_pass(now_ms, t.instance, t.activity, begin.pass);
        let mut effects = Vec::new();
        let node = self.nodes.get(peer).map(|n| n.name.clone());
        let waiter = OrderWaiter {
            ticket: t,
            class: begin.class.clone(),
            node: node.unwrap_or_else(|| mobiwf_proto::NodeName::new(peer.to_string())),
            peer: peer.clone(),
            since_ms: now_ms,
        };
        if let Some(why) = release_reason(self, &t) {
            let detail = format!("synchronization refused: {why}");
            self.refuse_request(now_ms, &waiter, detail, &mut effects);
        } else if let Some(class) = begin.class.filter(|c| self.classes.class(c).is_none()) {
            let detail = format!(
                "synchronization failed: class {class} is not in the controller's class \
                 document (mobiwf-controller classes apply FILE)"
            );
            self.refuse_request(now_ms, &waiter, detail, &mut effects);
        } else if !self.begin_ordered(now_ms, &waiter) {
            self.go_on(now_ms, waiter, &mut effects);
        }
        Ok(Applied {
            effects,
            instance: None,
        })
    }

    /// A request whose relative order allows it goes on: to its class's stage, or granted
    /// at once when it has no class (a grant that fences nothing: only a class's does).
    pub(crate) fn go_on(&mut self, now_ms: u64, waiter: OrderWaiter, effects: &mut Vec<Effect>) {
        let OrderWaiter {
            ticket,
            class,
            node,
            peer,
            ..
        } = waiter;
        let Some(class) = class else {
            effects.push(self.send(
                &peer,
                Message::SyncGranted(SyncGranted {
                    ticket,
                    lease_ms: self.lease_ms,
                }),
            ));
            return;
        };
        let entry = SyncEntry {
            ticket,
            class,
            node,
            peer,
            since_ms: now_ms,
            ending: None,
            wait_counts_from_ms: None,
        };
        self.class_stage(now_ms, entry, effects);
    }

    /// A request is refused; one without a class leaves its wait for the relative order.
    fn refuse_request(
        &mut self,
        now_ms: u64,
        waiter: &OrderWaiter,
        detail: String,
        effects: &mut Vec<Effect>,
    ) {
        let Some(class) = waiter.class.clone() else {
            effects.push(self.send(
                &waiter.peer,
                Message::SyncRefused(SyncRefused {
                    ticket: waiter.ticket,
                    detail: detail.clone(),
                }),
            ));
            self.order_event(now_ms, waiter, |activity| Event::OrderReleased {
                activity,
                why: detail,
            });
            return;
        };
        let entry = SyncEntry {
            ticket: waiter.ticket,
            class,
            node: waiter.node.clone(),
            peer: waiter.peer.clone(),
            since_ms: waiter.since_ms,
            ending: None,
            wait_counts_from_ms: None,
        };
        self.refuse(now_ms, &entry, detail, effects);
    }

    /// A request for its class: granted at once, or waiting (the rule of the module `sync`).
    fn class_stage(&mut self, now_ms: u64, entry: SyncEntry, effects: &mut Vec<Effect>) {
        let mut superseded = Vec::new();
        let earlier_hold_ends_at = now_ms.saturating_add(fence_ms(self.lease_ms));
        let begun = self.sync.begin(
            &self.classes,
            entry.clone(),
            earlier_hold_ends_at,
            &mut superseded,
        );
        for ended in superseded {
            self.record_release(now_ms, &ended, "a later request of the activity came");
        }
        match begun {
            Begun::Granted => self.grant(now_ms, &entry, effects),
            Begun::AlreadyHeld => effects.push(self.granted_message(&entry)),
            Begun::Waiting(behind) => {
                self.push_event(now_ms, &entry, |activity, class| Event::SyncWaiting {
                    activity,
                    class,
                    behind,
                });
            }
            Begun::AlreadyWaiting | Begun::Stale => {}
        }
    }

    /// Only the node that runs the request's partition asks, about an activity of that
    /// partition, for the class its definition gives it.
    fn check_asker(
        &self,
        inst: &Instance,
        peer: &NodeId,
        begin: &BeginSync,
    ) -> Result<(), BookError> {
        let t = begin.ticket;
        crate::check_sender(inst, peer, t.partition)?;
        let in_partition = inst
            .activities
            .iter()
            .any(|a| a.id == t.activity && a.partition == Some(t.partition));
        if !in_partition {
            return Err(BookError::NotYours {
                peer: peer.clone(),
                instance: t.instance,
                partition: t.partition,
            });
        }
        let defined = self
            .definitions
            .get(&t.instance)
            .and_then(|d| d.activities.iter().find(|a| a.id == t.activity))
            .map(|a| a.class.as_ref());
        let class_text =
            |c: Option<&ClassName>| c.map_or("no class".to_owned(), |c| format!("class {c}"));
        match defined {
            Some(class) if class == begin.class.as_ref() => Ok(()),
            // An instance kept without its definition: the node's word is all there is.
            None => Ok(()),
            Some(other) => Err(BookError::Classes(format!(
                "activity {} of instance {} has {}, not {}: its node asked for a class its \
                 definition does not give it",
                t.activity,
                t.instance,
                class_text(other),
                class_text(begin.class.as_ref())
            ))),
        }
    }

    /// A node releases its activity's class (endSync): exactly that request's hold or wait.
    pub(crate) fn end_sync(
        &mut self,
        now_ms: u64,
        peer: &NodeId,
        end: &EndSync,
    ) -> Result<Applied, BookError> {
        let t = end.ticket;
        // An instance the book let go has nothing held: the release is answered, not applied.
        if let Some(inst) = self.instances.get(&t.instance) {
            crate::check_sender(inst, peer, t.partition)?;
        }
        if let Some(ended) = self.sync.end(&t, peer) {
            self.record_release(now_ms, &ended, "its node said the activity is over");
        }
        Ok(Applied::default())
    }

    /// After every input: the holds and waits the controller ends itself; every waiter
    /// nothing blocks any more granted (before the expiries: one freed by this very input is
    /// not refused); the waiters past their `maxWait` refused, and what that frees granted.
    pub(crate) fn sync_after(&mut self, now_ms: u64, effects: &mut Vec<Effect>) {
        self.ordering_after(now_ms, effects);
        if self.sync.is_empty() {
            return;
        }
        for ended in self.fenced_holds(now_ms) {
            let why = ended.entry.ending.as_ref().map(|e| e.why.clone());
            self.record_release(now_ms, &ended, &why.unwrap_or_default());
        }
        let waits: Vec<(SyncEntry, String)> = self
            .sync
            .state()
            .waiters
            .iter()
            .filter_map(|e| Some((e.clone(), release_reason(self, &e.ticket)?)))
            .collect();
        for (entry, why) in waits {
            if let Some(ended) = self.sync.end(&entry.ticket, &entry.peer) {
                self.record_release(now_ms, &ended, &why);
            }
        }
        for entry in self.sync.grant_ready(&self.classes, now_ms) {
            self.grant(now_ms, &entry, effects);
        }
        for (entry, behind) in self.sync.expire(&self.classes, now_ms) {
            let waited = now_ms.saturating_sub(entry.since_ms) / 1000;
            let detail = format!(
                "synchronization failed: waited {waited} s for class {}, {}",
                entry.class,
                self.behind_text(&behind)
            );
            self.refuse(now_ms, &entry, detail, effects);
        }
        for entry in self.sync.grant_ready(&self.classes, now_ms) {
            self.grant(now_ms, &entry, effects);
        }
    }

    /// The nodes that hold a class.
    pub(crate) fn sync_holders(&self) -> impl Iterator<Item = &NodeId> {
        self.sync.state().holders.iter().map(|e| &e.peer)
    }

    /// When the first waiter's `maxWait` runs out, or the first hold whose node is suspected
    /// or gone ends.
    pub(crate) fn sync_deadline(&self) -> Option<u64> {
        let expiry = self.sync.next_expiry(&self.classes);
        expiry.into_iter().chain(self.sync.next_ending()).min()
    }

    /// What a waiter waits behind, in words.
    pub(crate) fn behind_text(&self, behind: &[Blocker]) -> String {
        let Some(first) = behind.first() else {
            return "nothing in its way any more".to_owned();
        };
        let who = self.request_text(&first.ticket);
        let more = match behind.len() {
            1 => String::new(),
            n => format!(" and {} more", n - 1),
        };
        if first.holds {
            format!("held by {who} (class {}){more}", first.class)
        } else {
            format!("behind {who}, waiting for class {}{more}", first.class)
        }
    }

    /// `instance 12's activity press lid (3)`.
    fn request_text(&self, t: &SyncTicket) -> String {
        let activity = match self.instances.get(&t.instance) {
            Some(inst) => label_text(inst, t.activity),
            None => format!("activity {}", t.activity),
        };
        format!("instance {}'s {activity}", t.instance)
    }

    fn granted_message(&self, entry: &SyncEntry) -> Effect {
        self.send(
            &entry.peer,
            Message::SyncGranted(SyncGranted {
                ticket: entry.ticket,
                lease_ms: self.lease_ms,
            }),
        )
    }

    fn grant(&mut self, now_ms: u64, entry: &SyncEntry, effects: &mut Vec<Effect>) {
        effects.push(self.granted_message(entry));
        self.push_event(now_ms, entry, |activity, class| Event::SyncGranted {
            activity,
            class,
        });
    }

    fn refuse(
        &mut self,
        now_ms: u64,
        entry: &SyncEntry,
        detail: String,
        effects: &mut Vec<Effect>,
    ) {
        effects.push(self.send(
            &entry.peer,
            Message::SyncRefused(SyncRefused {
                ticket: entry.ticket,
                detail: detail.clone(),
            }),
        ));
        self.push_event(now_ms, entry, |activity, class| Event::SyncRefused {
            activity,
            class,
            detail,
        });
    }

    fn record_release(&mut self, now_ms: u64, ended: &Ended, why: &str) {
        let held = ended.held;
        self.push_event(now_ms, &ended.entry, |activity, class| {
            Event::SyncReleased {
                activity,
                class,
                held,
                why: why.to_owned(),
            }
        });
    }

    /// Adds an event about `entry`'s activity to its instance's history (when the book
    /// holds the instance).
    fn push_event(
        &mut self,
        now_ms: u64,
        entry: &SyncEntry,
        what: impl FnOnce(crate::Label, mobiwf_xml_schema::ClassName) -> Event,
    ) {
        let t = entry.ticket;
        let Some(inst) = self.instances.get(&t.instance) else {
            return;
        };
        let event = what(label(inst, t.activity), entry.class.clone());
        self.history.push(
            t.instance,
            now_ms,
            Some(t.activity),
            Some(&entry.node),
            event,
        );
    }

    /// A message to `peer`, at the addresses it registered.
    fn send(&self, peer: &NodeId, message: Message) -> Effect {
        Effect::Send {
            to: peer.clone(),
            addrs: self
                .nodes
                .get(peer)
                .map(|n| n.addrs.clone())
                .unwrap_or_default(),
            message,
        }
    }
}
