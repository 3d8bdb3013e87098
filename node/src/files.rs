//! The node's file store: the contents of instance data files, under `DATA/files/<sha256>`,
//! each kept once whatever instance or activity wrote it. A content is put whole (a temporary
//! file, synced, then renamed and the directory synced), so that a name in the store always
//! means the whole content: what the engine records as held is on disk first. A fetch from
//! another partner grows `DATA/files/partial/<sha256>` chunk by chunk and resumes from its
//! length after a restart.

use std::fs::{self, File, OpenOptions};
use std::io::{Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

use mobiwf_proto::FileRef;
use mobiwf_proto::data::MAX_FILE_BYTES;
use sha2::{Digest, Sha256};

/// The file store of a node's data directory.
#[derive(Debug, Clone)]
pub struct Files {
    dir: PathBuf,
}

impl Files {
    /// The store under `data_dir/files`.
    pub fn new(data_dir: &Path) -> Files {
        Files {
            dir: data_dir.join("files"),
        }
    }

    /// Where a held content is.
    pub fn path(&self, file: &FileRef) -> PathBuf {
        self.dir.join(&file.sha256)
    }

    /// The bytes the file store's file system has free for this process (`statvfs`).
    pub fn free_bytes(&self) -> Result<u64, String> {
        let dir = if self.dir.exists() {
            self.dir.as_path()
        } else {
            self.dir.parent().unwrap_or(self.dir.as_path())
        };
        let stat = nix::sys::statvfs::statvfs(dir)
            .map_err(|e| format!("cannot tell the free space of {}: {e}", dir.display()))?;
        // Both are 64-bit on the 64-bit Linux mobiwf runs on.
        let (blocks, size): (u64, u64) = (stat.blocks_available(), stat.fragment_size());
        Ok(blocks.saturating_mul(size))
    }

    /// True when the content is held here.
    pub fn has(&self, file: &FileRef) -> bool {
        file.problem().is_none()
            && fs::metadata(self.path(file)).is_ok_and(|m| m.len() == file.size)
    }

    /// Keeps `bytes` and says what they are.
    pub fn put_bytes(&self, bytes: &[u8]) -> Result<FileRef, String> {
        let file = FileRef {
            sha256: hex(&Sha256::digest(bytes)),
            size: bytes.len() as u64,
        };
        if let Some(problem) = file.problem() {
            return Err(problem);
        }
        if !self.has(&file) {
            let err = |e: std::io::Error| format!("cannot keep file {}: {e}", file.sha256);
            let mut tmp = self.temporary().map_err(err)?;
            tmp.write_all(bytes).map_err(err)?;
            self.persist(tmp, &file)?;
        }
        Ok(file)
    }

    /// Keeps a copy of the file at `path` (at most [`MAX_FILE_BYTES`]) and says what it is:
    /// copied to a temporary file while hashed, then renamed to its hash.
    pub fn put_path(&self, path: &Path) -> Result<FileRef, String> {
        let err = |e: std::io::Error| format!("cannot keep {}: {e}", path.display());
        let size = fs::metadata(path).map_err(err)?.len();
        if size > MAX_FILE_BYTES {
            return Err(format!(
                "{} holds {size} bytes, over the limit of {MAX_FILE_BYTES} (MAX_FILE_BYTES)",
                path.display()
            ));
        }
        let mut tmp = self.temporary().map_err(err)?;
        let input = File::open(path).map_err(err)?;
        let (sha256, copied) = hash_copy(input, Some(tmp.as_file_mut())).map_err(err)?;
        let file = FileRef {
            sha256,
            size: copied,
        };
        if let Some(problem) = file.problem() {
            return Err(problem);
        }
        self.persist(tmp, &file)?;
        Ok(file)
    }

    /// Up to `len` bytes of a held content from `offset` on (none past its end).
    pub fn read_chunk(&self, file: &FileRef, offset: u64, len: u64) -> Result<Vec<u8>, String> {
        if !self.has(file) {
            return Err(format!(
                "file {} is not held here (yet): ask again later",
                file.sha256
            ));
        }
        let mut f = File::open(self.path(file)).map_err(|e| format!("{e}"))?;
        f.seek(SeekFrom::Start(offset))
            .map_err(|e| format!("{e}"))?;
        let mut out = Vec::new();
        f.take(len)
            .read_to_end(&mut out)
            .map_err(|e| format!("{e}"))?;
        Ok(out)
    }

    /// How much of a fetch under way is on disk (0 when none is).
    pub fn partial_len(&self, file: &FileRef) -> u64 {
        fs::metadata(self.partial(file)).map_or(0, |m| m.len())
    }

    /// Appends a fetched chunk, synced.
    pub fn append_partial(&self, file: &FileRef, chunk: &[u8]) -> Result<(), String> {
        let path = self.partial(file);
        let parent = path.parent().unwrap_or(&self.dir);
        fs::create_dir_all(parent)
            .map_err(|e| format!("cannot create {}: {e}", parent.display()))?;
        let mut f = OpenOptions::new()
            .create(true)
            .append(true)
            .open(&path)
            .map_err(|e| format!("cannot open {}: {e}", path.display()))?;
        f.write_all(chunk)
            .and_then(|()| f.sync_data())
            .map_err(|e| format!("cannot write {}: {e}", path.display()))
    }

    /// A fetch got every byte: the content is checked against its hash (read as a stream) and
    /// renamed into place; a content that does not match is thrown away (the fetch starts
    /// again). A partial file left beside a content already held is removed.
    pub fn finish_partial(&self, file: &FileRef) -> Result<(), String> {
        let path = self.partial(file);
        if self.has(file) {
            let _ = fs::remove_file(&path);
            return Ok(());
        }
        let err = |e: std::io::Error| format!("cannot read {}: {e}", path.display());
        let (got, size) = hash_copy(File::open(&path).map_err(err)?, None).map_err(err)?;
        if got != file.sha256 || size != file.size {
            let _ = fs::remove_file(&path);
            return Err(format!(
                "the fetched content of {} has SHA-256 {got} and {size} bytes: thrown away",
                file.sha256
            ));
        }
        let keep = |e: std::io::Error| format!("cannot keep file {}: {e}", file.sha256);
        fs::rename(&path, self.path(file)).map_err(keep)?;
        sync_dir(&self.dir).map_err(keep)
    }

    fn partial(&self, file: &FileRef) -> PathBuf {
        self.dir.join("partial").join(&file.sha256)
    }

    /// A temporary file of its own in the store's directory (writers of the same content at
    /// the same time never share one).
    fn temporary(&self) -> std::io::Result<tempfile::NamedTempFile> {
        fs::create_dir_all(&self.dir)?;
        tempfile::Builder::new()
            .prefix(".tmp-")
            .tempfile_in(&self.dir)
    }

    /// Syncs a filled temporary file and renames it to its hash, then syncs the directory:
    /// a name in the store always means the whole content. Another writer that got there
    /// first with the same content is success too.
    fn persist(&self, tmp: tempfile::NamedTempFile, file: &FileRef) -> Result<(), String> {
        let err = |e: std::io::Error| format!("cannot keep file {}: {e}", file.sha256);
        tmp.as_file().sync_all().map_err(err)?;
        match tmp.persist(self.path(file)) {
            Ok(_) => {}
            Err(_) if self.has(file) => {}
            Err(e) => return Err(err(e.error)),
        }
        sync_dir(&self.dir).map_err(err)
    }
}

/// Reads `input` to its end, hashing it and copying it to `out` when given: its SHA-256 and
/// size. Stops after `MAX_FILE_BYTES + 1` bytes (the caller's limit check then refuses it).
fn hash_copy(input: File, mut out: Option<&mut File>) -> std::io::Result<(String, u64)> {
    let mut input = input.take(MAX_FILE_BYTES + 1);
    let mut hasher = Sha256::new();
    let mut buf = vec![0; 64 * 1024];
    let mut size = 0u64;
    loop {
        let n = input.read(&mut buf)?;
        if n == 0 {
            break;
        }
        hasher.update(&buf[..n]);
        if let Some(out) = out.as_deref_mut() {
            out.write_all(&buf[..n])?;
        }
        size += n as u64;
    }
    Ok((hex(&hasher.finalize()), size))
}

fn sync_dir(dir: &Path) -> std::io::Result<()> {
    File::open(dir)?.sync_all()
}

/// The SHA-256 of `bytes`, as the store names contents.
pub fn sha256_hex(bytes: &[u8]) -> String {
    hex(&Sha256::digest(bytes))
}

fn hex(digest: &[u8]) -> String {
    digest.iter().map(|b| format!("{b:02x}")).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_content_is_kept_once_under_its_hash_and_read_back_in_chunks() {
        let dir = tempfile::tempdir().unwrap();
        let files = Files::new(dir.path());
        let f = files.put_bytes(b"hello world").unwrap();
        assert_eq!(
            f.sha256,
            "b94d27b9934d3e08a52e52d7da7dabfac484efe37a5380ee9088f7ace2efcde9"
        );
        assert!(files.has(&f));
        assert_eq!(files.put_bytes(b"hello world").unwrap(), f);
        assert_eq!(files.read_chunk(&f, 6, 100).unwrap(), b"world");
        assert!(files.read_chunk(&f, 11, 100).unwrap().is_empty());
    }

    #[test]
    fn a_fetch_resumes_from_what_is_on_disk_and_a_wrong_content_is_thrown_away() {
        let dir = tempfile::tempdir().unwrap();
        let files = Files::new(dir.path());
        let want = FileRef {
            sha256: sha256_hex(b"abcdef"),
            size: 6,
        };
        files.append_partial(&want, b"abc").unwrap();
        assert_eq!(files.partial_len(&want), 3);
        files.append_partial(&want, b"def").unwrap();
        files.finish_partial(&want).unwrap();
        assert!(files.has(&want));
        assert_eq!(files.partial_len(&want), 0);

        let other = FileRef {
            sha256: sha256_hex(b"xyz"),
            size: 3,
        };
        files.append_partial(&other, b"xyZ").unwrap();
        assert!(files.finish_partial(&other).is_err());
        assert!(!files.has(&other));
        assert_eq!(files.partial_len(&other), 0);
    }
}
