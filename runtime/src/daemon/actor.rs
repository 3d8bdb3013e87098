//! The actor loop both daemons run: take the events that are waiting, let the daemon's actor
//! apply them to its pure core, write everything they caused in one synced batch, and only
//! then send, acknowledge, let the actor act and answer its callers; all of that on a blocking
//! thread, so that no async worker ever waits for the disk.

use std::sync::Arc;

use tokio::sync::{mpsc, watch};

use super::group::Group;
use super::sequencer::Sequencer;
use crate::outbox::Outbox;
use crate::store::{Durability, Store, StoreError};

/// Most events committed in one synced write.
pub const MAX_GROUP: usize = 256;

/// A daemon's actor: the one owner of a pure core (the node's engine, the controller's book),
/// driven by [`run`].
pub trait Actor: Send + 'static {
    /// What the actor is sent: inbound messages, commands, queries, timer ticks.
    type Event: Send + 'static;
    /// What the actor does once a group's changes are on disk: carry out effects (start
    /// commands), answer queries, publish deadlines (commands are answered by the group).
    type After: Send + 'static;

    /// Applies a group of events to the core, staging in `group` every change to write, the
    /// messages to send (`Group::send`, with ids from `seq`) and the replies owed. Nothing of
    /// it may reach the outside world yet. An error stops the daemon: the group is not
    /// written, nothing of it is acknowledged or sent.
    fn apply(
        &mut self,
        events: Vec<Self::Event>,
        group: &mut Group,
        seq: &mut Sequencer,
    ) -> Result<Self::After, StoreError>;

    /// The group is on disk (`wrote`: it changed something; false when there was nothing to
    /// write), its messages handed to the outbox and its peers' replies given: does what
    /// `after` says. The answers owed to the daemon's own callers ([`Group::answer`]) are
    /// given next.
    fn committed(&mut self, after: Self::After, wrote: bool);
}

/// What the loop needs besides the actor.
pub struct Shell {
    /// Where groups are written.
    pub store: Arc<dyn Store>,
    /// Where their messages go once written.
    pub outbox: Outbox,
    /// The ids of outgoing messages.
    pub seq: Sequencer,
}

/// The actor loop: takes the events that are waiting (at most [`MAX_GROUP`]) and gives them to
/// the actor together, so that they share one synced write. Applying them, the write and what
/// the actor does once it is on disk run on one blocking thread per group: whatever of it
/// touches the disk (the write, a finished instance read back, a file kept or read) never
/// holds an async worker, which only waits for events. When applying or writing fails (the
/// store failed), the loop stops rather than go on with a state the disk does not have, and
/// says why through `fatal`. It also stops, between two groups, when `stop` turns true: a
/// group under way is finished first (its write is never left running behind a stopped
/// daemon).
pub async fn run<A: Actor>(
    mut actor: A,
    mut events: mpsc::Receiver<A::Event>,
    mut shell: Shell,
    fatal: std::sync::Arc<watch::Sender<Option<String>>>,
    mut stop_rx: watch::Receiver<bool>,
) {
    loop {
        let first = tokio::select! {
            biased;
            _ = stop_rx.wait_for(|s| *s) => return,
            first = events.recv() => match first {
                Some(first) => first,
                None => return,
            },
        };
        let mut taken = vec![first];
        while taken.len() < MAX_GROUP {
            match events.try_recv() {
                Ok(e) => taken.push(e),
                Err(_) => break,
            }
        }
        // The daemon's span goes with the group to its thread: its logs say whose they are.
        let span = tracing::Span::current();
        let cycle = tokio::task::spawn_blocking(move || {
            let done = span.in_scope(|| commit(&mut actor, taken, &mut shell));
            (actor, shell, done)
        });
        let done;
        (actor, shell, done) = match cycle.await {
            Ok(cycle) => cycle,
            Err(e) => return stop(&fatal, &format!("the actor's thread failed: {e}")),
        };
        if let Err(e) = done {
            return stop(&fatal, &e);
        }
    }
}

/// One group: applied, written (synced) when it changed anything, its messages handed to the
/// outbox and its peers' replies given, then acted on, then its callers answered. On the
/// group's blocking thread.
fn commit<A: Actor>(
    actor: &mut A,
    taken: Vec<A::Event>,
    shell: &mut Shell,
) -> Result<(), StoreError> {
    let mut group = Group::default();
    let after = actor.apply(taken, &mut group, &mut shell.seq)?;
    let (batch, written) = group.finish(&mut shell.seq);
    let wrote = !batch.is_empty();
    if wrote {
        shell.store.write(batch, Durability::Synced)?;
    }
    // On disk: now act, and answer the daemon's callers once acted on.
    let owed = written.hand_over(&shell.outbox);
    actor.committed(after, wrote);
    owed.give();
    Ok(())
}

fn stop(fatal: &watch::Sender<Option<String>>, e: &dyn std::fmt::Display) {
    tracing::error!("stopping: {e}");
    let _ = fatal.send(Some(e.to_string()));
}

#[cfg(test)]
mod tests {
    use std::sync::Mutex;

    use futures::future::BoxFuture;
    use libp2p::{Multiaddr, PeerId};
    use mobiwf_proto::{Envelope, Reply};
    use tokio::sync::oneshot::error::TryRecvError;
    use tokio::sync::{broadcast, oneshot};

    use super::*;
    use crate::metrics::Metrics;
    use crate::outbox::{Link, LinkError, Wiring};
    use crate::store::MemoryStore;

    /// A way out that nothing in these tests uses.
    struct Nowhere(PeerId, broadcast::Sender<PeerId>);

    impl Link for Nowhere {
        fn me(&self) -> PeerId {
            self.0
        }
        fn request(
            &self,
            _to: PeerId,
            _addrs: Vec<Multiaddr>,
            _envelope: Envelope,
        ) -> BoxFuture<'static, Result<Reply, LinkError>> {
            Box::pin(std::future::pending())
        }
        fn seen(&self) -> broadcast::Receiver<PeerId> {
            self.1.subscribe()
        }
        fn relocate(&self, _peer: PeerId) -> BoxFuture<'static, bool> {
            Box::pin(std::future::ready(false))
        }
    }

    /// An actor whose events are callers waiting for an answer; when it acts on a group it
    /// notes whether its caller had been answered already.
    struct Answering {
        caller: Arc<Mutex<oneshot::Receiver<u32>>>,
        answered_before_acting: Option<bool>,
    }

    impl Actor for Answering {
        type Event = oneshot::Sender<u32>;
        type After = ();

        fn apply(
            &mut self,
            events: Vec<Self::Event>,
            group: &mut Group,
            _seq: &mut Sequencer,
        ) -> Result<(), StoreError> {
            group.batch.put("done", "1");
            for to in events {
                group.answer(to, 7);
            }
            Ok(())
        }

        fn committed(&mut self, (): (), wrote: bool) {
            assert!(wrote, "the group changed something");
            let mut caller = self.caller.lock().expect("not poisoned");
            self.answered_before_acting = Some(caller.try_recv() != Err(TryRecvError::Empty));
        }
    }

    #[tokio::test]
    async fn callers_are_answered_after_the_write_and_after_the_actor_acted() {
        let store: Arc<dyn Store> = Arc::new(MemoryStore::new());
        let me = PeerId::random();
        let (local, _inbound) = mpsc::channel(1);
        let wiring = Wiring {
            link: Arc::new(Nowhere(me, broadcast::channel(1).0)),
            local,
            metrics: Arc::new(Metrics::new()),
            delivered: None,
            stop_on_refusal: None,
            link_news: None,
        };
        let mut shell = Shell {
            store: store.clone(),
            outbox: Outbox::start(store.clone(), wiring).expect("outbox"),
            seq: Sequencer::load(store.as_ref(), me).expect("sequencer"),
        };
        let (to, caller) = oneshot::channel();
        let caller = Arc::new(Mutex::new(caller));
        let mut actor = Answering {
            caller: caller.clone(),
            answered_before_acting: None,
        };
        commit(&mut actor, vec![to], &mut shell).expect("committed");
        assert_eq!(
            actor.answered_before_acting,
            Some(false),
            "not answered before the actor acted on the group"
        );
        assert!(store.get(b"done").expect("read").is_some(), "written");
        let answer = caller.lock().expect("not poisoned").try_recv();
        assert_eq!(answer, Ok(7), "answered once acted on");
    }
}
