//! What the daemon writes and reads back: the desk's changes since the last
//! [`Desk::take_changes`] as store keys and JSON values (an encoding failure is an error the
//! daemon refuses to commit on, never an empty value), and the desk rebuilt from them.
//!
//! Keys, all under [`PREFIX`]: `desk/item/<instance>/<activity>` (a [`DeskItem`]),
//! `desk/notice/<number, 20 digits>` (one notice and its number), `desk/meta` (the next
//! request and notice numbers, the claims under way and the hosts' clock offsets).

use std::collections::{BTreeMap, BTreeSet};

use mobiwf_proto::{ActivityId, InstanceId, Notice, UserId};
use serde::{Deserialize, Serialize};

use super::notices::UserNotices;
use super::{Desk, DeskItem, ItemKey, PendingClaim};

/// The prefix of every key the desk writes (the daemon reads them all back from it).
pub const PREFIX: &str = "desk/";
const ITEM_PREFIX: &str = "desk/item/";
const NOTICE_PREFIX: &str = "desk/notice/";
const META_KEY: &str = "desk/meta";

/// The store key of an item.
pub fn item_key(instance: InstanceId, activity: ActivityId) -> String {
    format!("{ITEM_PREFIX}{instance}/{activity}")
}

fn notice_key(seq: u64) -> String {
    format!("{NOTICE_PREFIX}{seq:020}")
}

/// What changed since the last [`Desk::take_changes`], encoded: write every `put`, delete
/// every `delete` (the two never name the same key), in the batch of the effects' outbox
/// entries.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct DeskChanges {
    /// Keys and JSON values to write.
    pub puts: Vec<(String, Vec<u8>)>,
    /// Keys to delete.
    pub deletes: Vec<String>,
}

impl DeskChanges {
    /// Whether there is nothing to write.
    pub fn is_empty(&self) -> bool {
        self.puts.is_empty() && self.deletes.is_empty()
    }
}

/// A value of the desk could not be encoded; nothing was handed over.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("the desk's value for {key} could not be encoded: {reason}; nothing was written")]
pub struct DeskEncodeError {
    /// The key.
    pub key: String,
    /// Why.
    pub reason: String,
}

/// A stored entry could not be read back.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "the desk's store entry {key} cannot be read: {reason}; it was written by another version \
     of mobiwf or is damaged"
)]
pub struct DeskRestoreError {
    /// The key.
    pub key: String,
    /// Why.
    pub reason: String,
}

/// What the desk changed since the last hand-over, by key.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(super) struct Dirty {
    items: BTreeSet<ItemKey>,
    gone_items: BTreeSet<ItemKey>,
    /// New notices, by number, with their users.
    notices: BTreeMap<u64, UserId>,
    gone_notices: BTreeSet<u64>,
    pub(super) meta: bool,
}

impl Dirty {
    pub(super) fn item_written(&mut self, key: ItemKey) {
        self.gone_items.remove(&key);
        self.items.insert(key);
    }

    pub(super) fn item_gone(&mut self, key: ItemKey) {
        self.items.remove(&key);
        self.gone_items.insert(key);
    }

    pub(super) fn notice_written(&mut self, seq: u64, user: UserId) {
        self.notices.insert(seq, user);
    }

    pub(super) fn notice_gone(&mut self, seq: u64) {
        // One dropped before it was ever written needs no delete.
        if self.notices.remove(&seq).is_none() {
            self.gone_notices.insert(seq);
        }
    }
}

#[derive(Serialize, Deserialize)]
struct Meta {
    next_request: u64,
    next_notice: u64,
    pending: Vec<PendingClaim>,
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    away: BTreeMap<UserId, u64>,
    #[serde(default)]
    presence_seq: u64,
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    offsets: BTreeMap<String, i64>,
}

#[derive(Serialize, Deserialize)]
struct StoredNotice {
    seq: u64,
    notice: Notice,
}

fn encode<T: Serialize>(key: String, value: &T) -> Result<(String, Vec<u8>), DeskEncodeError> {
    match serde_json::to_vec(value) {
        Ok(bytes) => Ok((key, bytes)),
        Err(e) => Err(DeskEncodeError {
            key,
            reason: e.to_string(),
        }),
    }
}

impl Desk {
    /// Hands over what changed since the last call, encoded, for the daemon to write. On an
    /// error nothing is handed over and the daemon must not commit (the changes stay marked,
    /// so a later call hands them over again).
    pub fn take_changes(&mut self) -> Result<DeskChanges, DeskEncodeError> {
        let mut changes = DeskChanges::default();
        for key in &self.dirty.items {
            if let Some(item) = self.items.get(key) {
                changes.puts.push(encode(item_key(key.0, key.1), item)?);
            }
        }
        for (seq, user) in &self.dirty.notices {
            if let Some(notice) = self.notice_by_seq(user.as_str(), *seq) {
                let stored = StoredNotice {
                    seq: *seq,
                    notice: notice.clone(),
                };
                changes.puts.push(encode(notice_key(*seq), &stored)?);
            }
        }
        if self.dirty.meta {
            let meta = Meta {
                next_request: self.next_request,
                next_notice: self.next_notice,
                pending: self.pending.values().cloned().collect(),
                away: self.away.clone(),
                presence_seq: self.presence_seq,
                offsets: self.offsets.clone(),
            };
            changes.puts.push(encode(META_KEY.to_owned(), &meta)?);
        }
        changes
            .deletes
            .extend(self.dirty.gone_items.iter().map(|k| item_key(k.0, k.1)));
        changes
            .deletes
            .extend(self.dirty.gone_notices.iter().map(|s| notice_key(*s)));
        self.dirty = Dirty::default();
        Ok(changes)
    }

    /// Rebuilds the desk from every entry the store holds under [`PREFIX`] (in any order).
    pub fn restore(
        entries: impl IntoIterator<Item = (String, Vec<u8>)>,
    ) -> Result<Desk, DeskRestoreError> {
        let mut desk = Desk::default();
        let mut notices: Vec<StoredNotice> = Vec::new();
        for (key, value) in entries {
            let bad = |reason: String| DeskRestoreError {
                key: key.clone(),
                reason,
            };
            if key == META_KEY {
                let meta: Meta = decode(&value).map_err(bad)?;
                desk.next_request = meta.next_request;
                desk.next_notice = desk.next_notice.max(meta.next_notice);
                desk.pending = meta.pending.into_iter().map(|p| (p.request, p)).collect();
                desk.away = meta.away;
                desk.presence_seq = meta.presence_seq;
                desk.offsets = meta.offsets;
            } else if key.starts_with(ITEM_PREFIX) {
                let item: DeskItem = decode(&value).map_err(bad)?;
                let (instance, activity) = item.key();
                if key != item_key(instance, activity) {
                    return Err(bad(format!(
                        "it holds activity {activity} of instance {instance}"
                    )));
                }
                if let Some(at) = item.finished_ms {
                    desk.finished.insert((at, item.key()));
                }
                desk.items.insert(item.key(), item);
            } else if key.starts_with(NOTICE_PREFIX) {
                let stored: StoredNotice = decode(&value).map_err(bad)?;
                if key != notice_key(stored.seq) {
                    return Err(bad(format!("it holds notice number {}", stored.seq)));
                }
                desk.next_notice = desk.next_notice.max(stored.seq + 1);
                notices.push(stored);
            } else {
                return Err(bad("no desk value has a key like it".to_owned()));
            }
        }
        notices.sort_by_key(|n| n.seq);
        for stored in notices {
            let mine: &mut UserNotices =
                desk.notices.entry(stored.notice.user.clone()).or_default();
            mine.seqs.push(stored.seq);
            mine.list.push(stored.notice);
        }
        Ok(desk)
    }
}

fn decode<'a, T: Deserialize<'a>>(value: &'a [u8]) -> Result<T, String> {
    serde_json::from_slice(value).map_err(|e| e.to_string())
}
