//! A node's libp2p identity kept on disk, so that its peer id (which the controller and the
//! other nodes address it by) survives restarts.
//!
//! The key is an ed25519 keypair in libp2p's protobuf encoding, in `<dir>/identity.key`, readable
//! only by its owner. It is created on first use: written to a temporary file, synced, then
//! renamed into place, so a crash never leaves a half-written key behind.

use std::fs;
use std::io::{self, Write as _};
use std::path::Path;

use anyhow::Context as _;
use libp2p::identity::{KeyType, Keypair};

/// The name of the key file inside the directory given to [`load_or_create`].
pub const KEY_FILE: &str = "identity.key";

/// Loads the keypair from `dir/identity.key`, or creates a new ed25519 keypair there (and
/// `dir` itself if needed) when the file does not exist. A file that cannot be decoded is an
/// error naming it: deleting the file makes the next start create a new identity, with a new
/// peer id.
pub fn load_or_create(dir: &Path) -> anyhow::Result<Keypair> {
    let path = dir.join(KEY_FILE);
    match fs::read(&path) {
        Ok(bytes) => decode(&path, &bytes),
        Err(e) if e.kind() == io::ErrorKind::NotFound => create(dir, &path),
        Err(e) => {
            Err(e).with_context(|| format!("cannot read the node identity {}", path.display()))
        }
    }
}

fn corrupt(path: &Path, what: &str) -> anyhow::Error {
    anyhow::anyhow!(
        "the node identity {} is unusable ({what}); delete that file to have a new identity \
         created at the next start (this changes the node's peer id, so the controller and \
         the workflows must be told the new one)",
        path.display()
    )
}

fn decode(path: &Path, bytes: &[u8]) -> anyhow::Result<Keypair> {
    let keypair = Keypair::from_protobuf_encoding(bytes)
        .map_err(|e| corrupt(path, &format!("not a valid protobuf-encoded keypair: {e}")))?;
    if keypair.key_type() != KeyType::Ed25519 {
        return Err(corrupt(
            path,
            &format!("a {:?} key, not an ed25519 one", keypair.key_type()),
        ));
    }
    Ok(keypair)
}

fn create(dir: &Path, path: &Path) -> anyhow::Result<Keypair> {
    fs::create_dir_all(dir)
        .with_context(|| format!("cannot create the directory {}", dir.display()))?;
    let keypair = Keypair::generate_ed25519();
    let bytes = keypair
        .to_protobuf_encoding()
        .context("cannot encode the new identity")?;
    let tmp = dir.join(format!("{KEY_FILE}.tmp.{}", std::process::id()));
    write_private(&tmp, &bytes)
        .with_context(|| format!("cannot write the new identity to {}", tmp.display()))?;
    if let Err(e) = fs::rename(&tmp, path) {
        let _ = fs::remove_file(&tmp);
        return Err(e)
            .with_context(|| format!("cannot move {} to {}", tmp.display(), path.display()));
    }
    sync_dir(dir).with_context(|| format!("cannot sync the directory {}", dir.display()))?;
    tracing::info!(
        peer = %keypair.public().to_peer_id(),
        file = %path.display(),
        "created a new node identity"
    );
    Ok(keypair)
}

/// Writes `bytes` to `path` (replacing it), readable and writable by the owner only, and syncs it.
fn write_private(path: &Path, bytes: &[u8]) -> io::Result<()> {
    let mut options = fs::OpenOptions::new();
    options.write(true).create(true).truncate(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt as _;
        options.mode(0o600);
    }
    let mut file = options.open(path)?;
    // `mode` only applies when the file is created; a stale temporary file keeps its own.
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt as _;
        file.set_permissions(fs::Permissions::from_mode(0o600))?;
    }
    file.write_all(bytes)?;
    file.sync_all()
}

/// Makes a rename in `dir` durable.
fn sync_dir(dir: &Path) -> io::Result<()> {
    #[cfg(unix)]
    {
        fs::File::open(dir)?.sync_all()
    }
    #[cfg(not(unix))]
    {
        let _ = dir;
        Ok(())
    }
}
