//! The real [`Store`]: RocksDB on local disk, whose synced write-ahead log makes a write
//! durable before it is acknowledged.

use std::path::{Path, PathBuf};

use rocksdb::{DB, DBCompressionType, Direction, IteratorMode, Options, WriteBatch, WriteOptions};

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

impl Store for RocksStore {
    fn get(&self, key: &[u8]) -> Result<Option<Vec<u8>>, StoreError> {
        self.db.get(key).map_err(|e| self.error("get", &e))
    }

    fn scan_prefix(&self, prefix: &[u8]) -> Result<Vec<(Vec<u8>, Vec<u8>)>, StoreError> {
        let mut entries = Vec::new();
        for item in self
            .db
            .iterator(IteratorMode::From(prefix, Direction::Forward))
        {
            let (key, value) = item.map_err(|e| self.error("scan", &e))?;
            if !key.starts_with(prefix) {
                break;
            }
            entries.push((key.into_vec(), value.into_vec()));
        }
        Ok(entries)
    }

    fn scan_from(
        &self,
        prefix: &[u8],
        from: &[u8],
        limit: usize,
    ) -> Result<Vec<(Vec<u8>, Vec<u8>)>, StoreError> {
        let start = if from > prefix { from } else { prefix };
        let mut entries = Vec::new();
        for item in self
            .db
            .iterator(IteratorMode::From(start, Direction::Forward))
        {
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
