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
            self.write_whole(&file, |out| out.write_all(bytes))?;
        }
        Ok(file)
    }

    /// Keeps a copy of the file at `path` (at most [`MAX_FILE_BYTES`]) and says what it is.
    pub fn put_path(&self, path: &Path) -> Result<FileRef, String> {
        let size = fs::metadata(path)
            .map_err(|e| format!("cannot read {}: {e}", path.display()))?
            .len();
        if size > MAX_FILE_BYTES {
            return Err(format!(
                "{} holds {size} bytes, over the limit of {MAX_FILE_BYTES} (MAX_FILE_BYTES)",
                path.display()
            ));
        }
        let bytes = fs::read(path).map_err(|e| format!("cannot read {}: {e}", path.display()))?;
        self.put_bytes(&bytes)
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

    /// A fetch got every byte: the content is checked against its hash and kept; a content
    /// that does not match is thrown away (the fetch starts again).
    pub fn finish_partial(&self, file: &FileRef) -> Result<(), String> {
        let path = self.partial(file);
        let bytes = fs::read(&path).map_err(|e| format!("cannot read {}: {e}", path.display()))?;
        let got = hex(&Sha256::digest(&bytes));
        if got != file.sha256 || bytes.len() as u64 != file.size {
            let _ = fs::remove_file(&path);
            return Err(format!(
                "the fetched content of {} has SHA-256 {got} and {} bytes: thrown away",
                file.sha256,
                bytes.len()
            ));
        }
        self.put_bytes(&bytes)?;
        let _ = fs::remove_file(&path);
        Ok(())
    }

    fn partial(&self, file: &FileRef) -> PathBuf {
        self.dir.join("partial").join(&file.sha256)
    }

    /// Writes a content under its name whole: temporary file, sync, rename, directory sync.
    fn write_whole(
        &self,
        file: &FileRef,
        fill: impl FnOnce(&mut File) -> std::io::Result<()>,
    ) -> Result<(), String> {
        let err = |e: std::io::Error| format!("cannot keep file {}: {e}", file.sha256);
        fs::create_dir_all(&self.dir).map_err(err)?;
        let tmp = self.dir.join(format!("{}.tmp", file.sha256));
        let mut out = File::create(&tmp).map_err(err)?;
        fill(&mut out).and_then(|()| out.sync_all()).map_err(err)?;
        fs::rename(&tmp, self.path(file)).map_err(err)?;
        File::open(&self.dir)
            .and_then(|d| d.sync_all())
            .map_err(err)
    }
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
