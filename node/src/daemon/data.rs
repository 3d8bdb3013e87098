//! The node's side of instance data that the engine, being pure, does not do: file contents.
//! A notification's inline contents are checked and kept before the engine hears of it (so
//! what it records as held is on disk), the rest is marked missing for the engine to ask for;
//! an outgoing notification gets the contents of its small files inline; a fetch runs as a
//! task that asks the holder chunk by chunk (resuming from what is on disk) until the content
//! is whole, then tells the actor; partners' fetches and the controller's `status --data`
//! questions are answered at once, never stored.

use std::collections::{BTreeMap, BTreeSet};
use std::time::Duration;

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use mobiwf_engine::Missing;
use mobiwf_proto::data::{FETCH_CHUNK_BYTES, MAX_INLINE_FILE_BYTES, MAX_INLINE_TOTAL_BYTES};
use mobiwf_proto::{
    DataValue, Envelope, Fetch, FileBody, FileRef, InstanceId, ItemAction, Location, Message,
    MessageId, NodeId, Reply,
};
use mobiwf_runtime::daemon::Group;
use mobiwf_runtime::mesh::{Inbound, MeshHandle};
use mobiwf_runtime::outbox;
use mobiwf_xml_schema::data_name_problem;
use tokio::sync::mpsc;

use super::Event;
use crate::files::Files;

/// The first wait before a failed fetch is tried again; it doubles up to [`FETCH_RETRY_MAX`].
pub const FETCH_RETRY_FIRST: Duration = Duration::from_millis(200);
/// The longest wait between tries of a fetch: a holder that is away (its network is down) is
/// asked again this often, for as long as it takes.
pub const FETCH_RETRY_MAX: Duration = Duration::from_secs(30);

/// Checks the data a partner's notification, or a device's completion of a work item,
/// carries and keeps its inline contents: the files it references that are still missing here,
/// with where to fetch them, or why the message is refused (nothing kept is wrong: a content is
/// kept only under its own hash).
pub(super) fn unpack(files: &Files, message: &Message) -> Result<Vec<Missing>, NotKept> {
    match message {
        Message::Notify(mobiwf_proto::Notify {
            data,
            files: bodies,
            holder,
            ..
        }) => {
            let values = data.iter().map(|d| (d.name.as_str(), &d.value));
            keep(files, values, bodies, holder.as_ref())
        }
        Message::Claim(mobiwf_proto::Claim {
            action: ItemAction::Complete { data, .. },
            ..
        }) => {
            let values = data.values.iter().map(|(n, v)| (n.as_str(), v));
            keep(files, values, &data.files, data.holder.as_ref())
        }
        Message::NewPass(mobiwf_proto::NewPass {
            data,
            files: bodies,
            holder,
            ..
        }) => {
            let values = data.iter().map(|d| (d.name.as_str(), &d.value));
            keep(files, values, bodies, holder.as_ref())
        }
        _ => Ok(Vec::new()),
    }
}

/// Why [`unpack`] did not take a message.
#[derive(Debug)]
pub(super) enum NotKept {
    /// What it carries is wrong: it is refused, for good.
    Invalid(String),
    /// The node could not keep a content (its disk): not answered, so the sender tries again.
    Io(String),
}

/// [`unpack`] of one message's values, inline contents and holder.
fn keep<'a>(
    files: &Files,
    values: impl Iterator<Item = (&'a str, &'a DataValue)>,
    bodies: &[FileBody],
    holder: Option<&Location>,
) -> Result<Vec<Missing>, NotKept> {
    let invalid = |why: String| Err(NotKept::Invalid(why));
    let mut refs: BTreeMap<&str, &FileRef> = BTreeMap::new();
    for (name, value) in values {
        if let Some(problem) = data_name_problem(name) {
            return invalid(problem);
        }
        if let Some(problem) = value.problem() {
            return invalid(format!("`{name}`: {problem}"));
        }
        if let DataValue::File(f) = value
            && refs
                .insert(f.sha256.as_str(), f)
                .is_some_and(|other| other != f)
        {
            return invalid(format!("file {} is given two sizes", f.sha256));
        }
    }
    for body in bodies {
        let Some(file) = refs.get(body.sha256.as_str()) else {
            return invalid(format!(
                "an inline content {} that no value references",
                body.sha256
            ));
        };
        let Ok(bytes) = STANDARD.decode(&body.base64) else {
            return invalid(format!(
                "the inline content of {} is not base64",
                body.sha256
            ));
        };
        if crate::files::sha256_hex(&bytes) != file.sha256 || bytes.len() as u64 != file.size {
            return invalid(format!(
                "the inline content of {} does not match its hash and size",
                body.sha256
            ));
        }
        files.put_bytes(&bytes).map_err(NotKept::Io)?;
    }
    let mut missing = Vec::new();
    for file in refs.values().filter(|f| !files.has(f)) {
        let Some(holder) = holder else {
            return invalid(format!(
                "file {} is neither carried inline nor held anywhere said",
                file.sha256
            ));
        };
        outbox::peer_of(holder).map_err(NotKept::Invalid)?;
        missing.push(Missing {
            file: (*file).clone(),
            holder: holder.clone(),
        });
    }
    Ok(missing)
}

/// Puts the contents of the small files a notification or a completion carries inline (up to
/// `MAX_INLINE_FILE_BYTES` each, `MAX_INLINE_TOTAL_BYTES` together); the others are fetched
/// from the holder, this node (`me`), which a completion names.
pub(super) fn inline(files: &Files, me: &Location, message: &mut Message) {
    let (refs, bodies, holder): (Vec<FileRef>, _, _) = match message {
        Message::Notify(mobiwf_proto::Notify {
            data,
            files: bodies,
            ..
        }) => {
            let refs = data.iter().filter_map(|d| file_of(&d.value)).collect();
            (refs, bodies, None)
        }
        Message::NewPass(mobiwf_proto::NewPass {
            data,
            files: bodies,
            ..
        }) => {
            let refs = data.iter().filter_map(|d| file_of(&d.value)).collect();
            (refs, bodies, None)
        }
        Message::Claim(mobiwf_proto::Claim {
            action: ItemAction::Complete { data, .. },
            ..
        }) => {
            let refs = data.values.values().filter_map(file_of).collect();
            (refs, &mut data.files, Some(&mut data.holder))
        }
        _ => return,
    };
    let mut total = 0;
    let mut seen = BTreeSet::new();
    let mut all_inline = true;
    for f in refs {
        if !seen.insert(f.sha256.clone()) {
            continue;
        }
        let fits = f.size <= MAX_INLINE_FILE_BYTES && total + f.size <= MAX_INLINE_TOTAL_BYTES;
        let bytes = std::fs::read(files.path(&f))
            .ok()
            .filter(|b| b.len() as u64 == f.size);
        match bytes.filter(|_| fits) {
            Some(bytes) => {
                total += f.size;
                bodies.push(FileBody {
                    sha256: f.sha256.clone(),
                    base64: STANDARD.encode(bytes),
                });
            }
            None => all_inline = false,
        }
    }
    if let (Some(holder), false) = (holder, all_inline) {
        *holder = Some(me.clone());
    }
}

fn file_of(value: &DataValue) -> Option<FileRef> {
    match value {
        DataValue::File(f) => Some(f.clone()),
        _ => None,
    }
}

/// The answer to a partner's fetch: a chunk of a held content, or why not (not held yet: the
/// fetcher asks again later).
pub(super) fn answer_fetch(files: &Files, fetch: &Fetch) -> Reply {
    if let Some(problem) = fetch.file.problem() {
        return Reply::Refused { reason: problem };
    }
    match files.read_chunk(&fetch.file, fetch.offset, FETCH_CHUNK_BYTES) {
        Ok(bytes) => Reply::Chunk {
            base64: STANDARD.encode(bytes),
        },
        Err(reason) => Reply::Refused { reason },
    }
}

/// What a fetch task needs.
pub(super) struct FetchTask {
    pub(super) mesh: MeshHandle,
    pub(super) me: NodeId,
    pub(super) files: Files,
    pub(super) file: FileRef,
    pub(super) from: Location,
    pub(super) events: mpsc::Sender<Event>,
}

/// Fetches a content from its holder until it is whole here, however long the holder is
/// away; then tells the actor (`Event::Fetched`).
pub(super) async fn fetch(task: FetchTask) {
    let mut wait = FETCH_RETRY_FIRST;
    loop {
        match fetch_once(&task).await {
            Ok(()) => break,
            Err(why) => {
                tracing::warn!(file = %task.file.sha256, from = %task.from, "fetch: {why}; again in {wait:?}");
                tokio::time::sleep(wait).await;
                wait = (wait * 2).min(FETCH_RETRY_MAX);
            }
        }
    }
    tracing::info!(file = %task.file.sha256, size = task.file.size, "file fetched");
    let _ = task.events.send(Event::Fetched(task.file)).await;
}

/// Asks for the chunks from what is on disk on; `Ok` once the content is whole and kept.
async fn fetch_once(task: &FetchTask) -> Result<(), String> {
    let (peer, addr) = outbox::peer_of(&task.from)?;
    let FetchTask { files, file, .. } = task;
    loop {
        if files.has(file) {
            // Held (inline in another message meanwhile, or renamed before a crash).
            return blocking(files, file, |f, r| f.finish_partial(r)).await;
        }
        let offset = files.partial_len(file);
        if offset >= file.size {
            return blocking(files, file, |f, r| f.finish_partial(r)).await;
        }
        let envelope = Envelope {
            // Fetches are never stored or deduplicated: sequence 0.
            answered_below: 0,
            epoch: None,
            id: MessageId {
                incarnation: 0,
                origin: task.me.clone(),
                seq: 0,
            },
            message: Message::Fetch(Fetch {
                file: file.clone(),
                offset,
            }),
        };
        let reply = task
            .mesh
            .request(peer, vec![addr.clone()], envelope)
            .await
            .map_err(|e| e.to_string())?;
        let bytes = match reply {
            Reply::Chunk { base64 } => STANDARD
                .decode(base64)
                .map_err(|e| format!("a chunk that is not base64: {e}"))?,
            Reply::Refused { reason } => return Err(format!("refused: {reason}")),
            other => return Err(format!("an answer that is not a chunk: {other:?}")),
        };
        let room = file.size - offset;
        if bytes.is_empty() || bytes.len() as u64 > room.min(FETCH_CHUNK_BYTES) {
            return Err(format!(
                "a chunk of {} bytes at offset {offset} of a {}-byte file",
                bytes.len(),
                file.size
            ));
        }
        blocking(files, file, move |f, r| f.append_partial(r, &bytes)).await?;
    }
}

impl super::actor::NodeActor {
    /// Answers what is never stored: a partner's fetch of a file (at once: the file is on
    /// disk), the controller's question about an instance's data and a device's about an
    /// item's (after this group's write, in `group`: the answer may show what earlier events
    /// of the group changed, which must be on disk before anyone hears of it). Gives back any
    /// other message.
    pub(super) fn answer_at_once(&self, inbound: Inbound, group: &mut Group) -> Option<Inbound> {
        let reply = match &inbound.envelope.message {
            Message::Fetch(fetch) => {
                // Reading a chunk is disk work: off the actor.
                let (files, fetch) = (self.files.clone(), fetch.clone());
                tokio::task::spawn_blocking(move || {
                    let _ = inbound.reply.send(answer_fetch(&files, &fetch));
                });
                return None;
            }
            Message::ReadData(ask) if inbound.from == self.controller.0 => {
                // A finished instance is read back from the store; a store that fails leaves
                // the question unanswered (asked again).
                let instance = ask.instance;
                match super::memory::data(self.core.engine(), self.store.as_ref(), instance) {
                    // Earlier passes' writes after the latest: the controller merges them
                    // by pass; one that does not know of passes keeps the latest of each name.
                    Ok(known) => Reply::Data {
                        data: [known.latest, known.earlier].concat(),
                    },
                    Err(e) => {
                        tracing::error!("reading instance {instance}'s data: {e}");
                        return None;
                    }
                }
            }
            Message::ReadData(_) => Reply::Refused {
                reason: "only this node's controller reads instance data".to_owned(),
            },
            Message::ItemData(ask) => {
                let device = NodeId::new(inbound.from.to_string());
                match self
                    .core
                    .engine()
                    .item_reads(ask.instance, ask.activity, &device)
                {
                    Ok(data) => Reply::Data { data },
                    Err(reason) => Reply::Refused { reason },
                }
            }
            Message::Register(_)
            | Message::Deploy(_)
            | Message::Notify(_)
            | Message::StateChanged(_)
            | Message::Completed(_)
            | Message::Report(_)
            | Message::PartitionResult(_)
            | Message::Overdue(_)
            | Message::Withdraw(_)
            | Message::Substitute(_)
            | Message::Control(_)
            | Message::Probe(_)
            | Message::Directory(_)
            | Message::Claim(_)
            | Message::Item(_)
            | Message::Answer(_)
            | Message::ItemEvents(_)
            | Message::Presence(_)
            | Message::Notice(_)
            | Message::Compensate(_)
            | Message::Compensated(_)
            | Message::Rerun(_)
            | Message::Locate(_)
            | Message::Pause(_)
            | Message::PauseReport(_)
            | Message::BeginSync(_)
            | Message::SyncGranted(_)
            | Message::SyncRefused(_)
            | Message::EndSync(_)
            | Message::NewPass(_) => return Some(inbound),
        };
        group.reply(inbound.reply, reply);
        None
    }

    /// Starts fetching a file an instance needs, unless a fetch of it is under way.
    pub(super) fn start_fetch(&mut self, instance: InstanceId, file: FileRef, from: Location) {
        if self.fetching.want(instance, &file) {
            self.spawn_fetch(file, from);
        }
    }

    /// Starts fetching a file an item copied for offline work names, unless a fetch of it is
    /// under way.
    pub(super) fn start_desk_fetch(&mut self, file: FileRef, from: Location) {
        if self.fetching.want_for_desk(&file) {
            self.spawn_fetch(file, from);
        }
    }

    fn spawn_fetch(&mut self, file: FileRef, from: Location) {
        let task = FetchTask {
            mesh: self.mesh.clone(),
            me: NodeId::new(self.mesh.peer_id().to_string()),
            files: self.files.clone(),
            file: file.clone(),
            from,
            events: self.events.clone(),
        };
        let handle = tokio::spawn(fetch(task));
        self.fetching.started(file, handle.abort_handle());
    }

    /// Stops the fetches no instance waits for any more (it was cancelled or completed).
    pub(super) fn prune_fetches(&mut self) {
        let engine = self.core.engine();
        self.fetching.prune(|instance, file| {
            engine
                .known(instance)
                .is_some_and(|k| k.missing.iter().any(|m| m.file == *file))
        });
    }
}

/// Runs file store work off the async workers (it syncs to disk).
async fn blocking(
    files: &Files,
    file: &FileRef,
    work: impl FnOnce(&Files, &FileRef) -> Result<(), String> + Send + 'static,
) -> Result<(), String> {
    let (files, file) = (files.clone(), file.clone());
    tokio::task::spawn_blocking(move || work(&files, &file))
        .await
        .unwrap_or_else(|e| Err(format!("the file store's work stopped: {e}")))
}

/// The instances waiting for each content being fetched, and each fetch's task.
#[derive(Default)]
pub(super) struct Fetching {
    waiting: BTreeMap<FileRef, BTreeSet<InstanceId>>,
    /// Contents fetched for the desk's copies (no instance here waits for them).
    for_desk: BTreeSet<FileRef>,
    tasks: BTreeMap<FileRef, tokio::task::AbortHandle>,
}

impl Fetching {
    /// `instance` needs `file`: true when no fetch of it is under way yet (start one).
    pub(super) fn want(&mut self, instance: InstanceId, file: &FileRef) -> bool {
        let entry = self.waiting.entry(file.clone()).or_default();
        // One fetch per content: a desk's copy may be fetching it already.
        let first = entry.is_empty() && !self.tasks.contains_key(file);
        entry.insert(instance);
        first
    }

    /// A desk's copy needs `file`: true when no fetch of it is under way yet (start one).
    pub(super) fn want_for_desk(&mut self, file: &FileRef) -> bool {
        let first = !self.tasks.contains_key(file);
        self.for_desk.insert(file.clone());
        first
    }

    /// The contents the desk's copies still need are `files`: the others are no longer
    /// fetched for the desk (pruned with the instances' next).
    pub(super) fn keep_for_desk(&mut self, files: &BTreeSet<FileRef>) {
        if self.for_desk.iter().any(|f| !files.contains(f)) {
            self.for_desk.retain(|f| files.contains(f));
            self.stop_unwanted();
        }
    }

    /// Stops the fetches neither an instance nor a desk's copy waits for.
    fn stop_unwanted(&mut self) {
        let (waiting, for_desk) = (&self.waiting, &self.for_desk);
        self.tasks.retain(|file, task| {
            let wanted = waiting.contains_key(file) || for_desk.contains(file);
            if !wanted {
                task.abort();
            }
            wanted
        });
    }

    /// The task fetching `file`.
    pub(super) fn started(&mut self, file: FileRef, task: tokio::task::AbortHandle) {
        self.tasks.insert(file, task);
    }

    /// The fetch of `file` ended: the instances that waited for it.
    pub(super) fn done(&mut self, file: &FileRef) -> BTreeSet<InstanceId> {
        self.tasks.remove(file);
        self.for_desk.remove(file);
        self.waiting.remove(file).unwrap_or_default()
    }

    /// Keeps the instances that `still` waits for their file; stops the fetches none waits
    /// for.
    fn prune(&mut self, still: impl Fn(InstanceId, &FileRef) -> bool) {
        if self.waiting.is_empty() {
            return;
        }
        self.waiting.retain(|file, instances| {
            instances.retain(|i| still(*i, file));
            !instances.is_empty()
        });
        self.stop_unwanted();
    }
}
