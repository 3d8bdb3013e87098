//! The real [`Store`]: RocksDB on local disk, whose synced write-ahead log makes a write
//! durable before it is acknowledged.

use std::path::{Path, PathBuf};

use rocksdb::{
    DB, DBCompressionType, Direction, IteratorMode, Options, ReadOptions, WriteBatch, WriteOptions,
};

use super::{Batch, Durability, Op, Store, StoreError};

/// A [`Store`] backed by a RocksDB database in one directory. One process at a time may
/// open a directory; RocksDB's lock file enforces that.
pub struct RocksStore {
    db: DB,
    path: PathBuf,
}

impl std::fmt::Debug for RocksStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RocksStore")
            .field("path", &self.path)
            .finish_non_exhaustive()
    }
}

impl RocksStore {
    /// Opens the database in `path`, creating it (and the directory) when missing.
    pub fn open(path: &Path) -> Result<RocksStore, StoreError> {
        let mut opts = Options::default();
        opts.create_if_missing(true);
        opts.set_compression_type(DBCompressionType::None);
        let db = DB::open(&opts, path).map_err(|e| open_error(path, &e))?;
        Ok(RocksStore {
            db,
            path: path.to_path_buf(),
        })
    }

    /// The directory this store lives in.
    pub fn path(&self) -> &Path {
        &self.path
    }

    fn error(&self, what: &str, e: &rocksdb::Error) -> StoreError {
        StoreError::Backend(format!(
            "RocksDB at {}: {what} failed: {e}",
            self.path.display()
        ))
    }
}

/// Explains a failure to open `path`, saying what to do about it.
fn open_error(path: &Path, e: &rocksdb::Error) -> StoreError {
    let message = e.to_string();
    let hint = if message.to_ascii_lowercase().contains("lock") {
        "is another mobiwf process using this data directory? Stop it, or give this one \
         a different data directory"
    } else if e.kind() == rocksdb::ErrorKind::Corruption {
        "the database is corrupt; restore the data directory from a backup"
    } else {
        "check that the data directory exists or can be created, is writable by this user, \
         and that the disk is not full"
    };
    StoreError::Backend(format!(
        "cannot open RocksDB at {}: {message} ({hint})",
        path.display()
    ))
}

/// Read options that end an iteration at the first key past `prefix`. Without the bound, an
/// iterator looking for the next live key after the prefix's last one steps over every
/// deleted key that follows (another sender's compacted `seen/` keys, a drained outbox): with
/// thousands of deletions a second that made each short scan cost milliseconds.
fn bounded_to(prefix: &[u8]) -> ReadOptions {
    let mut options = ReadOptions::default();
    if let Some(end) = prefix_end(prefix) {
        options.set_iterate_upper_bound(end);
    }
    options
}

/// The smallest key greater than every key that starts with `prefix` (none when the prefix
/// is empty or all `0xff`).
fn prefix_end(prefix: &[u8]) -> Option<Vec<u8>> {
    let mut end = prefix.to_vec();
    while let Some(last) = end.pop() {
        if last < u8::MAX {
            end.push(last + 1);
            return Some(end);
        }
    }
    None
}

impl Store for RocksStore {
    fn get(&self, key: &[u8]) -> Result<Option<Vec<u8>>, StoreError> {
        self.db.get(key).map_err(|e| self.error("get", &e))
    }

    fn scan_prefix(&self, prefix: &[u8]) -> Result<Vec<(Vec<u8>, Vec<u8>)>, StoreError> {
        self.scan_from(prefix, prefix, usize::MAX)
    }

    fn scan_from(
        &self,
        prefix: &[u8],
        from: &[u8],
        limit: usize,
    ) -> Result<Vec<(Vec<u8>, Vec<u8>)>, StoreError> {
        let start = if from > prefix { from } else { prefix };
        let mut entries = Vec::new();
        let iterator = self.db.iterator_opt(
            IteratorMode::From(start, Direction::Forward),
            bounded_to(prefix),
        );
        for item in iterator {
            if entries.len() >= limit {
                break;
            }
            let (key, value) = item.map_err(|e| self.error("scan", &e))?;
            if !key.starts_with(prefix) {
                break;
            }
            entries.push((key.into_vec(), value.into_vec()));
        }
        Ok(entries)
    }

    fn write(&self, batch: Batch, durability: Durability) -> Result<(), StoreError> {
        let mut rocks_batch = WriteBatch::default();
        for op in batch.ops {
            match op {
                Op::Put(key, value) => rocks_batch.put(key, value),
                Op::Delete(key) => rocks_batch.delete(key),
            }
        }
        let mut write_opts = WriteOptions::default();
        // The write-ahead log stays on either way; Synced also fsyncs it before returning.
        write_opts.set_sync(durability == Durability::Synced);
        self.db
            .write_opt(rocks_batch, &write_opts)
            .map_err(|e| self.error("write", &e))
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn a_prefix_ends_at_its_successor() {
        assert_eq!(prefix_end(b"seen/"), Some(b"seen0".to_vec()));
        assert_eq!(prefix_end(b"a\xff\xff"), Some(b"b".to_vec()));
        assert_eq!(prefix_end(b"\xff"), None);
        assert_eq!(prefix_end(b""), None);
    }

    #[test]
    fn a_scan_stops_at_its_prefix_among_deleted_keys() {
        let dir = tempfile::tempdir().unwrap();
        let store = RocksStore::open(dir.path()).unwrap();
        let mut batch = Batch::default();
        batch.put(b"a/1".to_vec(), b"x".to_vec());
        batch.put(b"a\xff/2".to_vec(), b"y".to_vec());
        for i in 0..100 {
            batch.put(format!("b/{i:03}"), b"z".to_vec());
        }
        batch.put(b"c/1".to_vec(), b"w".to_vec());
        store.write(batch, Durability::Synced).unwrap();
        let mut batch = Batch::default();
        for i in 0..100 {
            batch.delete(format!("b/{i:03}"));
        }
        store.write(batch, Durability::Synced).unwrap();
        assert_eq!(store.scan_prefix(b"a/").unwrap().len(), 1);
        assert_eq!(store.scan_prefix(b"a").unwrap().len(), 2);
        assert!(store.scan_prefix(b"b/").unwrap().is_empty());
        assert_eq!(store.scan_from(b"c/", b"c/0", 10).unwrap().len(), 1);
    }
}
