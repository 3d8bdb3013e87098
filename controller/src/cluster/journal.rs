//! A group commit larger than one etcd transaction may be (`mobiwf_cluster::txn`), kept
//! all-or-nothing: a redo journal under the shard's `journal/` prefix.
//!
//! The book needs each group commit whole. Its changes, the outbox entries they cause, the
//! ids of the messages applied (`seen/`) and the last message number used (`meta/seq`) are
//! one fact: a prefix alone would record a message as applied without its effect (the
//! message is lost), or an outbox entry without its number (the number is given again, and
//! the receiver takes the new message for the old one). So a commit cut in parts is never
//! written into `kv/` part by part before it is decided. It goes:
//!
//! 1. stage: each write (the last change of its key in the commit) as an entry
//!    `journal/w/<i>`, in as many transactions as the limits need;
//! 2. seal: one transaction puts `journal/sealed`, the number of entries: the commit point;
//! 3. apply: the writes themselves into `kv/`, in parts;
//! 4. clear: one transaction deletes the whole journal (one ranged delete).
//!
//! Each of these transactions carries the epoch's guard, as every write does.
//!
//! Why whatever prefix of these lands is safe. Before the seal lands, `kv/` is untouched and
//! the journal has entries without a seal: whoever reads or writes the shard next (this
//! process after a failed commit, or after a restart, or the member that took the shard over)
//! first deletes them: the commit did not happen, and nothing of it was acknowledged or sent
//! (a group's replies and messages go after `write` returns), as a RocksDB batch lost in a
//! crash. Once the seal lands, the commit happened: whoever comes next finds the seal,
//! applies every entry again and clears the journal. Applying again is harmless: an entry is
//! a put of a value or a delete, the same twice as once, and no other write to `kv/` comes
//! between (in this process none runs while the journal is not clear: the store's gate and
//! its `unfinished` flag; a new owner finishes the journal before its first read or write; a
//! fenced owner's transactions are all refused). A sealed commit whose `write` never returned
//! is a RocksDB write that landed just before a crash: its replies were not given, its
//! senders try again and find their messages applied.
//!
//! Readers: in this process every read waits while a commit goes through the journal (the
//! gate), so none sees one half applied; no other process reads a shard's `kv/` (the
//! `cluster` command reads the owner and member keys). The cost, only for a commit over the
//! limits: its writes twice, and two transactions more.

use mobiwf_cluster::txn::{self, Entry};
use mobiwf_runtime::store::{StoreError, unreadable};

use super::link::{KeyValue, Write};
use super::store::{SCAN_PAGE, ShardStore, prefix_end, too_big};

/// Where one shard's journal is.
pub(super) struct Journal {
    prefix: Vec<u8>,
}

impl Journal {
    /// The journal below `prefix`.
    pub(super) fn new(prefix: Vec<u8>) -> Journal {
        Journal { prefix }
    }

    fn named(&self, name: &str) -> Vec<u8> {
        let mut key = self.prefix.clone();
        key.extend_from_slice(name.as_bytes());
        key
    }

    /// Entry `index`'s key.
    fn entry(&self, index: usize) -> Vec<u8> {
        self.named(&txn::entry_name(index))
    }

    /// The seal's key.
    fn seal(&self) -> Vec<u8> {
        self.named(txn::SEAL_NAME)
    }

    /// The ranged delete of the whole journal.
    fn clear(&self) -> Write {
        Write::DeleteRange(self.prefix.clone(), prefix_end(&self.prefix))
    }
}

/// Writes `entries` (store keys, each once), cut in `parts` for `kv/`, through the journal.
/// The caller holds the store alone.
pub(super) fn commit(
    store: &ShardStore,
    entries: Vec<Entry>,
    parts: &[std::ops::Range<usize>],
) -> Result<(), StoreError> {
    let journal = &store.journal;
    let staged: Vec<Write> = entries
        .iter()
        .enumerate()
        .map(|(index, (key, value))| {
            let entry = txn::encode_entry(key, value.as_deref());
            Write::Put(journal.entry(index), entry, None)
        })
        .collect();
    let sizes: Vec<usize> = staged
        .iter()
        .map(|write| match write {
            Write::Put(key, value, _) => txn::write_size(key.len(), value.len()),
            Write::Delete(key) | Write::DeleteRange(key, _) => txn::write_size(key.len(), 0),
        })
        .collect();
    // Refused before anything is sent, as a write too large for `kv/` is.
    let staged_parts = txn::split(&sizes, store.limits).map_err(|e| too_big(&e, &entries))?;
    tracing::info!(
        writes = entries.len(),
        parts = parts.len(),
        "a group commit larger than one etcd transaction goes through the journal"
    );
    store
        .unfinished
        .store(true, std::sync::atomic::Ordering::SeqCst);
    send(store, staged, &staged_parts)?;
    store.transact(vec![Write::Put(
        journal.seal(),
        txn::seal_value(entries.len()),
        None,
    )])?;
    finish(store, entries, parts)
}

/// Applies a sealed commit's `entries` to `kv/` in `parts`, then clears the journal.
fn finish(
    store: &ShardStore,
    entries: Vec<Entry>,
    parts: &[std::ops::Range<usize>],
) -> Result<(), StoreError> {
    let writes = entries.into_iter().map(|e| store.write_of(e)).collect();
    send(store, writes, parts)?;
    store.transact(vec![store.journal.clear()])?;
    store
        .unfinished
        .store(false, std::sync::atomic::Ordering::SeqCst);
    Ok(())
}

/// `writes`, one transaction per part of `parts` (consecutive, covering them all).
fn send(
    store: &ShardStore,
    writes: Vec<Write>,
    parts: &[std::ops::Range<usize>],
) -> Result<(), StoreError> {
    let mut rest = writes.into_iter();
    for part in parts {
        store.transact(rest.by_ref().take(part.len()).collect())?;
    }
    Ok(())
}

/// The keys in `[from, end)` (`end` `None`: `from` alone), at most `limit` (0: all).
fn read(
    store: &ShardStore,
    from: Vec<u8>,
    end: Option<Vec<u8>>,
    limit: i64,
) -> Result<Vec<KeyValue>, StoreError> {
    store.read(from, end, limit)
}

/// Every key starting with `prefix`, a page at a time.
fn read_all(store: &ShardStore, prefix: &[u8]) -> Result<Vec<KeyValue>, StoreError> {
    let end = prefix_end(prefix);
    let mut next = prefix.to_vec();
    let mut found = Vec::new();
    loop {
        let page = read(store, next.clone(), Some(end.clone()), SCAN_PAGE)?;
        let full = i64::try_from(page.len()).unwrap_or(i64::MAX) >= SCAN_PAGE;
        if let Some(last) = page.last() {
            next.clone_from(&last.key);
            next.push(0);
        }
        found.extend(page);
        if !full {
            return Ok(found);
        }
    }
}

/// Finishes what the journal holds: applies a sealed commit and clears it, or clears the
/// entries of one that was never sealed (it did not happen). The caller holds the store
/// alone.
pub(super) fn recover(store: &ShardStore) -> Result<(), StoreError> {
    let journal = &store.journal;
    let Some(seal) = read(store, journal.seal(), None, 1)?.into_iter().next() else {
        let end = prefix_end(&journal.prefix);
        if !read(store, journal.prefix.clone(), Some(end), 1)?.is_empty() {
            tracing::warn!("clearing the journal of a group commit that was never sealed");
            store.transact(vec![journal.clear()])?;
        }
        store
            .unfinished
            .store(false, std::sync::atomic::Ordering::SeqCst);
        return Ok(());
    };
    let count = txn::parse_seal(&seal.value)
        .ok_or_else(|| unreadable(&seal.key, &"not the seal of a journal"))?;
    let mut stored = read_all(store, &journal.named("w/"))?.into_iter();
    let mut entries = Vec::with_capacity(count);
    for index in 0..count {
        let key = journal.entry(index);
        let entry = stored
            .next()
            .filter(|kv| kv.key == key)
            .and_then(|kv| txn::decode_entry(&kv.value))
            .ok_or_else(|| unreadable(&key, &"a sealed journal's entry missing or damaged"))?;
        entries.push(entry);
    }
    let sizes: Vec<usize> = entries.iter().map(|e| store.size_of(e)).collect();
    let parts = txn::split(&sizes, store.limits).map_err(|e| too_big(&e, &entries))?;
    tracing::warn!(
        writes = count,
        "finishing a sealed group commit the journal holds (its writer stopped half way)"
    );
    finish(store, entries, &parts)
}
