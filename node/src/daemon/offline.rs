//! Work without the network, on the device's actor: copying what lockable items read while
//! the device is connected (prefetch: the values from each item's host, then the files they
//! name), and the two steps of the protocols the API drives (*Synchronization and Disconnected
//! Operation in WorkToDo* (IC-03-006), §5.1.2-5.1.3): the plan of a disconnection (what is left to
//! copy, checked without changing anything), going away and coming back (the desk's state and
//! `Message::Presence` to the controller, in one batch).

use std::collections::{BTreeMap, BTreeSet};
use std::time::Duration;

use mobiwf_node_core::{NodeInput, Refused, Reply};
use mobiwf_people::ItemKey;
use mobiwf_proto::{
    Datum, Envelope, FileRef, ItemData, Location, Message, MessageId, Millis, NodeId, UserId,
};
use mobiwf_runtime::mesh::MeshHandle;
use mobiwf_runtime::outbox;
use mobiwf_runtime::store::StoreError;
use tokio::sync::{mpsc, oneshot};

use super::Event;
use super::actor::{After, NodeActor, Writing};

/// The most items whose values are asked of their hosts at once.
pub const MAX_COPIES_AT_ONCE: usize = 8;
/// The first wait before asking a host again for an item's values; it doubles up to
/// [`COPY_RETRY_MAX`].
pub const COPY_RETRY_FIRST: Duration = Duration::from_millis(200);
/// The longest wait between two asks.
pub const COPY_RETRY_MAX: Duration = Duration::from_secs(30);
/// How long an item whose host refused to tell its values is left alone.
pub const REFUSED_PAUSE_MS: u64 = 30_000;

/// What a disconnection must still copy, as the API's plan shows it.
#[derive(Debug, Clone, Default, serde::Serialize)]
pub struct Departure {
    /// The user's locked items, named.
    pub locked: Vec<String>,
    /// Locked items whose values have not come from their hosts yet, named.
    pub uncopied: Vec<String>,
    /// The files still to fetch, each with where from (its item's host).
    #[serde(skip)]
    pub missing: Vec<(FileRef, Location)>,
    /// The bytes still to fetch (what broken-off fetches have already is not counted).
    pub bytes: u64,
    /// The applications of the locked items that this device does not have installed
    /// (`--application`): the device takes them along, so their sizes count against its disk.
    pub applications: Vec<mobiwf_people::AppToTake>,
    /// Their sizes together, in bytes.
    pub application_bytes: u64,
}

/// The offline commands of the API.
pub(super) enum OfflineCommand {
    /// What a disconnection of `user` must copy; copies their locked items' values now
    /// (also without prefetch).
    Plan {
        user: UserId,
        reply: oneshot::Sender<Result<Departure, Refused>>,
    },
    /// The user goes away (after the copy): their desk state and the controller's.
    Disconnect {
        user: UserId,
        reply: oneshot::Sender<Result<(), Refused>>,
    },
    /// The user comes back.
    Reconnect {
        user: UserId,
        reply: oneshot::Sender<Result<(), Refused>>,
    },
    /// A host answered what an item reads (`None`: it refused; left alone for a while).
    Copied {
        key: ItemKey,
        data: Option<Vec<Datum>>,
    },
}

/// The copies under way.
#[derive(Default)]
pub(super) struct Copying {
    /// Copy every lockable item in the background (`--no-prefetch` turns it off: then only
    /// the locked items of a user who asks to disconnect are copied).
    pub(super) prefetch: bool,
    /// Users whose locked items are copied although prefetch is off.
    wanted: BTreeSet<UserId>,
    /// Items whose values are being asked of their hosts, with the host asked.
    asking: BTreeMap<ItemKey, (Location, tokio::task::AbortHandle)>,
    /// Items whose host refused, until when (ms since the epoch).
    refused: BTreeMap<ItemKey, u64>,
}

impl Copying {
    /// Whether it copies in the background.
    pub(super) fn new(prefetch: bool) -> Copying {
        Copying {
            prefetch,
            ..Copying::default()
        }
    }
}

impl NodeActor {
    /// An offline command, applied in the group (its changes are written with it).
    /// Answers are owed by the group, given once it is on disk.
    pub(super) fn offline(
        &mut self,
        now: u64,
        command: OfflineCommand,
        writing: &mut Writing<'_>,
        after: &mut After,
    ) -> Result<(), StoreError> {
        match command {
            OfflineCommand::Plan { user, reply } => {
                let plan = self.departure(&user);
                if plan.is_ok() {
                    self.copying.wanted.insert(user);
                }
                writing.group.answer(reply, plan);
            }
            OfflineCommand::Disconnect { user, reply } => {
                let reply_of = self.step(now, NodeInput::Away(user), writing, after)?;
                if let Some(Reply::Presence(result)) = reply_of {
                    writing.group.answer(reply, result);
                }
            }
            OfflineCommand::Reconnect { user, reply } => {
                self.copying.wanted.remove(&user);
                let reply_of = self.step(now, NodeInput::Back(user), writing, after)?;
                if let Some(Reply::Presence(result)) = reply_of {
                    writing.group.answer(reply, result);
                }
            }
            OfflineCommand::Copied { key, data } => {
                self.copying.asking.remove(&key);
                let Some(data) = data else {
                    let until = Millis::from_micros(now).as_u64() + REFUSED_PAUSE_MS;
                    self.copying.refused.insert(key, until);
                    return Ok(());
                };
                let held = data
                    .iter()
                    .filter_map(|d| match &d.value {
                        mobiwf_proto::DataValue::File(f) => Some(f.clone()),
                        _ => None,
                    })
                    .filter(|f| self.files.has(f))
                    .collect();
                let copied = NodeInput::Copied { key, data, held };
                self.step(now, copied, writing, after)?;
            }
        }
        Ok(())
    }

    /// What a disconnection of `user` must still copy.
    fn departure(&self, user: &UserId) -> Result<Departure, Refused> {
        let dir = self.core.engine().directory();
        mobiwf_people::desk::here(dir, &self.core.identity().name, user.as_str())
            .map_err(|e| Refused::NotHere(e.to_string()))?;
        self.core
            .desk()
            .may_go(user)
            .map_err(|e| Refused::Selected(e.to_string()))?;
        let mut plan = Departure::default();
        // A file two locked items read is fetched once: counted once.
        let mut counted = BTreeSet::new();
        for item in self.core.desk().locked_by(user.as_str()) {
            let label = format!(
                "activity {} of instance {}",
                item.info.activity, item.info.instance
            );
            match &item.copy {
                None => plan.uncopied.push(label.clone()),
                Some(copy) => {
                    for file in copy.missing.iter().filter(|f| counted.insert(*f)) {
                        let have = self.files.partial_len(file).min(file.size);
                        // Sizes come from the host: a sum past u64 saturates (and is refused
                        // for want of disk).
                        plan.bytes = plan.bytes.saturating_add(file.size - have);
                        plan.missing.push((file.clone(), item.info.host.clone()));
                    }
                }
            }
            plan.locked.push(label);
        }
        plan.applications = self.core.desk().applications_to_take(user.as_str());
        plan.application_bytes = plan
            .applications
            .iter()
            .map(|a| a.size_kib.saturating_mul(1024))
            .fold(0, u64::saturating_add);
        Ok(plan)
    }

    /// After each commit (and once at start): asks the hosts for the values of the items to
    /// copy that have none yet, and fetches the files of those that have them; stops asking
    /// about and fetching for items no longer to copy.
    pub(super) fn copy_items(&mut self, now_ms: u64) {
        if self.core.desk().items().next().is_none() && self.copying.asking.is_empty() {
            return;
        }
        let copying = &self.copying;
        let wanted: Vec<(ItemKey, Location, Option<Vec<FileRef>>)> = self
            .core
            .desk()
            .to_copy()
            .into_iter()
            .filter(|i| {
                copying.prefetch
                    || i.holders.iter().any(|h| {
                        h.hold == mobiwf_proto::Hold::Locked && copying.wanted.contains(&h.user)
                    })
                    // A selected item's application needs its inputs here.
                    || (i.info.application.is_some()
                        && i.holders.iter().any(|h| h.hold == mobiwf_proto::Hold::Selected))
            })
            .map(|i| {
                let missing = i.copy.as_ref().map(|c| c.missing.clone());
                (i.key(), i.info.host.clone(), missing)
            })
            .collect();
        self.copying.refused.retain(|_, until| *until > now_ms);
        // The most urgent items still without values (locked ones first: `to_copy`'s order)
        // hold the asks: one about an item no longer to copy (ended, or its host moved) or
        // less urgent stops, so that asks stuck on hosts that are down cannot keep a locked
        // item's copy (and its user's disconnection) waiting.
        let refused = &self.copying.refused;
        let urgent: BTreeMap<ItemKey, &Location> = wanted
            .iter()
            .filter(|(k, _, missing)| missing.is_none() && !refused.contains_key(k))
            .take(MAX_COPIES_AT_ONCE)
            .map(|(k, h, _)| (*k, h))
            .collect();
        self.copying.asking.retain(|key, (host, task)| {
            let keep = urgent.get(key).is_some_and(|h| *h == host);
            if !keep {
                task.abort();
            }
            keep
        });
        let files: BTreeSet<FileRef> = wanted
            .iter()
            .flat_map(|(_, _, missing)| missing.iter().flatten().cloned())
            .collect();
        self.fetching.keep_for_desk(&files);
        for (key, host, missing) in wanted {
            match missing {
                Some(files) => {
                    for file in files {
                        self.start_desk_fetch(file, host.clone());
                    }
                }
                None => self.ask_item_data(key, host),
            }
        }
    }

    fn ask_item_data(&mut self, key: ItemKey, host: Location) {
        let busy = self.copying.asking.len() >= MAX_COPIES_AT_ONCE;
        if busy || self.copying.asking.contains_key(&key) || self.copying.refused.contains_key(&key)
        {
            return;
        }
        let me = NodeId::new(self.mesh.peer_id().to_string());
        if host.peer() == Some(&me) {
            // Its host is this node: the engine answers here, in the next group.
            let data = self.core.engine().item_reads(key.0, key.1, &me).ok();
            let command = OfflineCommand::Copied { key, data };
            if self.events.try_send(Event::Offline(command)).is_err() {
                tracing::debug!(
                    "the actor's queue is full: an item's copy waits for the next commit"
                );
            }
            return;
        }
        let ask = Ask {
            mesh: self.mesh.clone(),
            me,
            key,
            host: host.clone(),
            events: self.events.clone(),
        };
        let task = tokio::spawn(ask_until_answered(ask));
        self.copying.asking.insert(key, (host, task.abort_handle()));
    }
}

/// What asking a host for an item's values needs.
struct Ask {
    mesh: MeshHandle,
    me: NodeId,
    key: ItemKey,
    host: Location,
    events: mpsc::Sender<Event>,
}

/// Asks the item's host for what it reads until it answers (or refuses).
async fn ask_until_answered(ask: Ask) {
    let mut wait = COPY_RETRY_FIRST;
    let data = loop {
        match ask_once(&ask).await {
            Ok(answer) => break answer,
            Err(why) => {
                tracing::debug!(host = %ask.host, "copying an item's values: {why}; again in {wait:?}");
                tokio::time::sleep(wait).await;
                wait = (wait * 2).min(COPY_RETRY_MAX);
            }
        }
    };
    let command = OfflineCommand::Copied { key: ask.key, data };
    let _ = ask.events.send(Event::Offline(command)).await;
}

/// One ask: `Ok(Some)` the values, `Ok(None)` refused, `Err` not reached.
async fn ask_once(ask: &Ask) -> Result<Option<Vec<Datum>>, String> {
    let (peer, addr) = outbox::peer_of(&ask.host)?;
    let envelope = Envelope {
        // Asked again whenever needed, never stored: sequence 0.
        answered_below: 0,
        epoch: None,
        id: MessageId {
            incarnation: 0,
            origin: ask.me.clone(),
            seq: 0,
        },
        message: Message::ItemData(ItemData {
            instance: ask.key.0,
            activity: ask.key.1,
        }),
    };
    match ask.mesh.request(peer, vec![addr], envelope).await {
        Ok(mobiwf_proto::Reply::Data { data }) => Ok(Some(data)),
        Ok(mobiwf_proto::Reply::Refused { reason }) => {
            tracing::info!(host = %ask.host, "the host will not tell an item's values: {reason}");
            Ok(None)
        }
        Ok(other) => Err(format!("an answer that is not data: {other:?}")),
        Err(e) => Err(e.to_string()),
    }
}
