//! One shard's part of the controller's store, in etcd: the `Store` the daemon writes its
//! groups through, each write one transaction that holds only while this controller's epoch
//! still owns the shard.
//!
//! The entries are etcd keys `<shard>/kv/<store key>`. A write is
//! `if create_revision(<shard>/owner) == epoch then <the batch> else get(<shard>/owner)`: a
//! controller whose lease lapsed, and whose shard another claimed since (a new owner key, a
//! new creation revision), cannot write a single key, whatever it believes; a lock alone
//! would not stop it (the lock's holder may be paused past its lease and go on writing). A
//! refused transaction fences it: every later write is refused at once, the `fenced`
//! watch says so, and the serve loop stops the process before it sends anything more.
//!
//! A batch larger than one transaction may be (etcd's `--max-txn-ops` and
//! `--max-request-bytes`, [`TxnLimits`]) goes through the shard's journal, several fenced
//! transactions that land all or nothing (`journal` says why). While one does, no other read
//! or write of this process runs (the store's gate), so none sees it half done; a write too
//! large for any transaction is refused with an error naming the limit, before anything is
//! sent.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError, RwLock, RwLockReadGuard, RwLockWriteGuard};
use std::time::Duration;

use mobiwf_cluster::retry::Backoff;
use mobiwf_cluster::txn::{self, Entry, TxnLimits};
use mobiwf_cluster::{Epoch, ShardId};
use mobiwf_runtime::store::{Batch, Durability, Entries, Op, Store, StoreError};
use tokio::sync::watch;

use super::Layout;
use super::journal::{self, Journal};
use super::link::{Condition, EtcdLink, KeyValue, LinkError, Write};

/// The longest wait of the store before it asks etcd again: its caller (a group commit, the
/// outbox) is waiting, and the lease may lapse meanwhile.
const RETRY_AT_MOST: Duration = Duration::from_secs(1);

/// Entries read per etcd range request while a prefix is scanned.
pub(super) const SCAN_PAGE: i64 = 1000;

/// Why a controller no longer owns its shard.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Fenced {
    /// The shard.
    pub shard: ShardId,
    /// The epoch it held.
    pub held: Epoch,
    /// The owner key's epoch when the refusal came; `None` when there was none.
    pub now: Option<Epoch>,
}

impl std::fmt::Display for Fenced {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let now = match self.now {
            Some(epoch) => format!("its owner is now epoch {epoch}"),
            None => "it has no owner".to_owned(),
        };
        write!(
            f,
            "fenced: a transaction conditional on epoch {} owning shard {} failed ({now}); \
             this controller no longer owns it and sends nothing more for it",
            self.held, self.shard
        )
    }
}

/// The store of one shard, owned at one epoch.
pub struct ShardStore {
    pub(super) link: Arc<EtcdLink>,
    shard: ShardId,
    owner_key: Vec<u8>,
    prefix: Vec<u8>,
    pub(super) journal: Journal,
    pub(super) limits: TxnLimits,
    epoch: Epoch,
    fenced: watch::Sender<Option<Fenced>>,
    /// Held shared by every read and single-transaction write, alone by a commit through the
    /// journal (and its recovery).
    gate: RwLock<()>,
    /// The journal may hold a commit that is not finished (or not cleared): set from the
    /// start (a former owner may have left one) and while a commit goes through it; every
    /// read and write finishes it first.
    pub(super) unfinished: AtomicBool,
    /// Held by each transaction from its first sending to its answer: one sent again after
    /// its answer was lost is then still this process's latest (below).
    sending: Mutex<()>,
    /// Told when the cluster lease may have lapsed: until then a call etcd did not answer is
    /// made again. `None`: never made again.
    lease: Option<watch::Receiver<bool>>,
}

impl ShardStore {
    /// The store of `shard`, which this controller owns at `epoch`; `fenced` is told when a
    /// transaction finds it no longer does.
    pub fn new(
        link: Arc<EtcdLink>,
        layout: &Layout,
        shard: ShardId,
        epoch: Epoch,
        fenced: watch::Sender<Option<Fenced>>,
    ) -> ShardStore {
        ShardStore {
            link,
            shard,
            owner_key: layout.owner(shard).into_bytes(),
            prefix: layout.entries(shard).into_bytes(),
            journal: Journal::new(layout.journal(shard).into_bytes()),
            limits: TxnLimits::ETCD_DEFAULTS,
            epoch,
            fenced,
            gate: RwLock::new(()),
            unfinished: AtomicBool::new(true),
            sending: Mutex::new(()),
            lease: None,
        }
    }

    /// The same store, making a call etcd did not answer again until `lost` says the
    /// controller's lease may have lapsed (not at all otherwise).
    #[must_use]
    pub fn with_lease(mut self, lost: watch::Receiver<bool>) -> ShardStore {
        self.lease = Some(lost);
        self
    }

    /// Whether the controller's lease surely holds, so a failed call may be made again.
    fn lease_holds(&self) -> bool {
        self.lease.as_ref().is_some_and(|lost| !*lost.borrow())
    }

    /// The answer of `call`, made again while etcd does not answer (or says it cannot now)
    /// and the lease holds, after a growing wait; said in the log at most every few seconds.
    fn ask<T>(&self, call: impl Fn() -> Result<T, LinkError>) -> Result<T, StoreError> {
        let mut backoff = Backoff::default();
        loop {
            let e = match call() {
                Ok(answer) => {
                    self.link.answered();
                    return Ok(answer);
                }
                Err(e) if e.is_transient() && self.lease_holds() => e,
                Err(e) => return Err(backend(e)),
            };
            let wait = backoff.failed().min(RETRY_AT_MOST);
            self.link
                .complain("the book's store, while the cluster lease holds", &e, wait);
            std::thread::sleep(wait);
        }
    }

    /// The keys in `[from, end)` (`end` `None`: `from` alone), at most `limit` (0: all), as
    /// etcd holds them.
    pub(super) fn read(
        &self,
        from: Vec<u8>,
        end: Option<Vec<u8>>,
        limit: i64,
    ) -> Result<Vec<KeyValue>, StoreError> {
        self.ask(|| {
            let (from, end) = (from.clone(), end.clone());
            self.link
                .run(move |etcd| async move { etcd.range(from, end, limit).await })
        })
    }

    /// The same store, for an etcd whose limits on one transaction are `limits` (etcd's
    /// defaults otherwise).
    #[must_use]
    pub fn with_limits(mut self, limits: TxnLimits) -> ShardStore {
        self.limits = limits;
        self
    }

    /// The epoch this store writes at.
    pub fn epoch(&self) -> Epoch {
        self.epoch
    }

    /// Whether a transaction found this store fenced.
    pub fn fencing(&self) -> Option<Fenced> {
        self.fenced.borrow().clone()
    }

    /// Checks, with a transaction that writes nothing, that this epoch still owns the shard;
    /// fences the store when it does not.
    /// It does not wait for a transaction of the store's that is being sent (nor sends
    /// again): it is asked when the lease may have lapsed, and must answer soon.
    pub fn check(&self) -> Result<(), StoreError> {
        self.send(Vec::new())
    }

    /// Finishes, or clears, what the journal holds, when it may hold something: before this
    /// store's first read or write, and after a commit through it failed half way.
    fn settle(&self) -> Result<(), StoreError> {
        if self.unfinished.load(Ordering::SeqCst) {
            let _alone = self.alone();
            if self.unfinished.load(Ordering::SeqCst) {
                journal::recover(self)?;
            }
        }
        Ok(())
    }

    /// The gate held shared, the journal clear: what every read and single-transaction
    /// write runs under. (A commit through the journal may fail between the look at the
    /// journal and taking the gate: then the journal is finished first, again.)
    fn settled(&self) -> Result<RwLockReadGuard<'_, ()>, StoreError> {
        loop {
            self.settle()?;
            let shared = self.gate.read().unwrap_or_else(PoisonError::into_inner);
            if !self.unfinished.load(Ordering::SeqCst) {
                return Ok(shared);
            }
        }
    }

    fn alone(&self) -> RwLockWriteGuard<'_, ()> {
        self.gate.write().unwrap_or_else(PoisonError::into_inner)
    }

    /// The etcd write of `entry` (a store key, and its value or `None` to delete it).
    pub(super) fn write_of(&self, (key, value): Entry) -> Write {
        match value {
            Some(value) => Write::Put(self.key(&key), value, None),
            None => Write::Delete(self.key(&key)),
        }
    }

    /// The bytes the write of `entry` adds to a transaction.
    pub(super) fn size_of(&self, (key, value): &Entry) -> usize {
        txn::write_size(
            self.prefix.len() + key.len(),
            value.as_ref().map_or(0, Vec::len),
        )
    }

    pub(super) fn key(&self, key: &[u8]) -> Vec<u8> {
        let mut full = self.prefix.clone();
        full.extend_from_slice(key);
        full
    }

    /// Entries in etcd's `[from, end)`, at most `limit` (0: all), with the shard's prefix
    /// taken off their keys.
    fn range(&self, from: Vec<u8>, end: Vec<u8>, limit: i64) -> Result<Entries, StoreError> {
        let answer = self.read(from, Some(end), limit)?;
        let cut = self.prefix.len();
        Ok(answer
            .into_iter()
            .map(|kv| {
                let key = kv.key.get(cut..).unwrap_or_default().to_vec();
                (key, kv.value)
            })
            .collect())
    }

    /// Every entry from `from` on whose key starts with `prefix`, at most `limit` (None: all),
    /// a page of etcd range requests at a time.
    fn scan(
        &self,
        prefix: &[u8],
        from: &[u8],
        limit: Option<usize>,
    ) -> Result<Entries, StoreError> {
        let end = prefix_end(&self.key(prefix));
        let mut next = self.key(if from > prefix { from } else { prefix });
        let mut found = Entries::new();
        loop {
            let want = limit.map_or(SCAN_PAGE, |l| {
                i64::try_from(l - found.len())
                    .unwrap_or(SCAN_PAGE)
                    .min(SCAN_PAGE)
            });
            let page = self.range(next.clone(), end.clone(), want)?;
            let full = i64::try_from(page.len()).unwrap_or(i64::MAX) >= want;
            let Some((last, _)) = page.last() else {
                return Ok(found);
            };
            next = self.key(last);
            next.push(0);
            found.extend(page);
            if !full || limit.is_some_and(|l| found.len() >= l) {
                return Ok(found);
            }
        }
    }

    /// One transaction: `writes` if this epoch still owns the shard; fenced otherwise.
    ///
    /// A transaction whose answer was lost (etcd went away, the call timed out) may have
    /// landed or not; it is sent again while the lease holds, and that is safe. Its writes
    /// are puts and deletes of given values, so landing twice leaves what landing once does;
    /// no other transaction of this process goes between the two (`sending`), so none of its
    /// writes is undone by the second; and the second carries the same epoch's condition, so
    /// if another member owns the shard by then it fails and fences this one, whether the
    /// first landed (under an epoch that still owned the shard) or not. A group through the
    /// journal is the same, one transaction at a time.
    pub(super) fn transact(&self, writes: Vec<Write>) -> Result<(), StoreError> {
        let _one = self.sending.lock().unwrap_or_else(PoisonError::into_inner);
        self.send(writes)
    }

    /// Sends one transaction of `writes`, conditional on this epoch (again while etcd does not
    /// answer and the lease holds).
    fn send(&self, writes: Vec<Write>) -> Result<(), StoreError> {
        if let Some(fenced) = self.fencing() {
            return Err(StoreError::Backend(fenced.to_string()));
        }
        let owner = self.owner_key.clone();
        let epoch = self.epoch.0;
        let answer = self.ask(|| {
            let (owner, writes) = (owner.clone(), writes.clone());
            let when = vec![Condition::Created(owner.clone(), epoch)];
            self.link
                .run(move |etcd| async move { etcd.txn(when, writes, Some(owner)).await })
        })?;
        if answer.succeeded {
            return Ok(());
        }
        let fenced = Fenced {
            shard: self.shard,
            held: self.epoch,
            now: answer.read.map(|kv| Epoch(kv.create_revision)),
        };
        tracing::error!(shard = %self.shard, epoch = %self.epoch, "{fenced}");
        self.fenced.send_replace(Some(fenced.clone()));
        Err(StoreError::Backend(fenced.to_string()))
    }
}

/// The store's error for a failure to reach etcd.
pub(super) fn backend(e: LinkError) -> StoreError {
    StoreError::Backend(e.to_string())
}

/// The first key after every key starting with `prefix` (etcd's range end for a prefix).
pub fn prefix_end(prefix: &[u8]) -> Vec<u8> {
    let mut end = prefix.to_vec();
    while let Some(last) = end.pop() {
        if last < 0xff {
            end.push(last + 1);
            return end;
        }
    }
    // Every byte 0xff: to the end of the key space.
    vec![0]
}

impl Store for ShardStore {
    fn get(&self, key: &[u8]) -> Result<Option<Vec<u8>>, StoreError> {
        let _shared = self.settled()?;
        let answer = self.read(self.key(key), None, 1)?;
        Ok(answer.into_iter().next().map(|kv| kv.value))
    }

    fn scan_prefix(&self, prefix: &[u8]) -> Result<Entries, StoreError> {
        let _shared = self.settled()?;
        self.scan(prefix, prefix, None)
    }

    fn scan_from(&self, prefix: &[u8], from: &[u8], limit: usize) -> Result<Entries, StoreError> {
        if limit == 0 {
            return Ok(Entries::new());
        }
        let _shared = self.settled()?;
        self.scan(prefix, from, Some(limit))
    }

    fn write(&self, batch: Batch, _durability: Durability) -> Result<(), StoreError> {
        // etcd refuses a transaction that names a key twice: the last change of each key is
        // the batch's effect on it.
        let mut last = BTreeMap::new();
        for op in batch.ops {
            match op {
                Op::Put(key, value) => last.insert(key, Some(value)),
                Op::Delete(key) => last.insert(key, None),
            };
        }
        let entries: Vec<Entry> = last.into_iter().collect();
        let sizes: Vec<usize> = entries.iter().map(|e| self.size_of(e)).collect();
        let parts = txn::split(&sizes, self.limits).map_err(|e| too_big(&e, &entries))?;
        // Every etcd write is durable (raft, then fsync) when it is answered: `Lazy` is as
        // good as `Synced` here.
        if parts.len() == 1 {
            let _shared = self.settled()?;
            let writes = entries.into_iter().map(|e| self.write_of(e)).collect();
            return self.transact(writes);
        }
        let _alone = self.alone();
        if self.unfinished.load(Ordering::SeqCst) {
            journal::recover(self)?;
        }
        journal::commit(self, entries, &parts)
    }

    fn largest_write(&self) -> Option<usize> {
        Some(self.limits.budget())
    }

    /// The controller's messages carry the shard and the epoch it writes under: a node that
    /// heard the owner after it refuses them.
    fn owned_at(&self) -> Option<mobiwf_cluster::ShardEpoch> {
        Some(mobiwf_cluster::ShardEpoch {
            shard: self.shard,
            epoch: self.epoch,
        })
    }
}

/// The store's error for a write no etcd transaction can carry: which key, how large, the
/// limit, and what to do.
pub(super) fn too_big(e: &txn::TooBig, entries: &[Entry]) -> StoreError {
    let key = entries
        .get(e.index)
        .map(|(key, _)| String::from_utf8_lossy(key).into_owned())
        .unwrap_or_default();
    StoreError::Backend(format!(
        "cannot write the entry {key} to etcd, nothing of its group was written: {e}"
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_prefixs_range_ends_right_after_its_last_key() {
        assert_eq!(prefix_end(b"a/kv/"), b"a/kv0".to_vec());
        assert_eq!(prefix_end(b"a\xff"), b"b".to_vec());
        assert_eq!(prefix_end(b"\xff\xff"), vec![0]);
    }

    #[test]
    fn the_layout_keeps_each_shards_keys_apart() {
        let layout = Layout::new("mobiwf/");
        assert_eq!(layout.owner(ShardId(3)), "mobiwf/shards/00003/owner");
        assert_eq!(layout.entries(ShardId(3)), "mobiwf/shards/00003/kv/");
        assert!(
            !layout
                .entries(ShardId(3))
                .starts_with(&layout.entries(ShardId(30)))
        );
        assert!(
            !layout
                .entries(ShardId(30))
                .starts_with(&layout.entries(ShardId(3)))
        );
        assert_eq!(layout.members(), "mobiwf/members/");
    }
}
