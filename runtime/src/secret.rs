//! Secrets the daemons hand out (join tokens, API tokens): made from the operating system's
//! random source, shown once, kept only as their SHA-256, compared in constant time, and
//! written to files only their owner can read.

use std::io::Write;
use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
use std::path::Path;

use anyhow::Context;
use sha2::{Digest, Sha256};

/// Random bytes in a token (256 bits).
pub const TOKEN_BYTES: usize = 32;

/// The longest token text taken from a file or a request, in bytes: anything longer is
/// not one of ours and is refused before it is hashed.
pub const MAX_TOKEN_CHARS: usize = 256;

/// A new token: `prefix` (which says what it is for, e.g. `mwf_join_`) and 32 random bytes
/// in lowercase hex.
pub fn new_token(prefix: &str) -> anyhow::Result<String> {
    let mut bytes = [0u8; TOKEN_BYTES];
    getrandom::fill(&mut bytes)
        .map_err(|e| anyhow::anyhow!("the system's random source failed: {e}"))?;
    Ok(format!("{prefix}{}", hex(&bytes)))
}

/// The SHA-256 of a token, in lowercase hex: what is stored and compared.
pub fn hash(token: &str) -> String {
    hex(&Sha256::digest(token.trim().as_bytes()))
}

/// Whether two hashes are equal, in time that does not depend on where they differ.
pub fn same_hash(a: &str, b: &str) -> bool {
    a.len() == b.len()
        && a.bytes()
            .zip(b.bytes())
            .fold(0u8, |acc, (x, y)| acc | (x ^ y))
            == 0
}

/// Writes `secret` to `path`, readable and writable by its owner only (0600), whole or not
/// at all (a temporary file, synced, renamed).
pub fn write_private(path: &Path, secret: &str) -> anyhow::Result<()> {
    let tmp = path.with_extension("tmp");
    let mut file = std::fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .mode(0o600)
        .open(&tmp)
        .with_context(|| format!("cannot write {}", tmp.display()))?;
    // A file left by an earlier run keeps its old mode through `open`: set it again.
    file.set_permissions(std::fs::Permissions::from_mode(0o600))
        .with_context(|| format!("cannot restrict {}", tmp.display()))?;
    writeln!(file, "{secret}")
        .and_then(|()| file.sync_all())
        .with_context(|| format!("cannot write {}", tmp.display()))?;
    std::fs::rename(&tmp, path).with_context(|| format!("cannot write {}", path.display()))
}

/// Reads a token from `path` (surrounding white space dropped), with a clear error when the
/// file is missing, empty or too long to be a token.
pub fn read_token_file(path: &Path) -> anyhow::Result<String> {
    let text = std::fs::read_to_string(path)
        .with_context(|| format!("cannot read the token file {}", path.display()))?;
    let token = text.trim();
    if token.is_empty() {
        anyhow::bail!("the token file {} is empty", path.display());
    }
    if token.len() > MAX_TOKEN_CHARS || token.contains(char::is_whitespace) {
        anyhow::bail!(
            "{} does not hold a token (one word of at most {MAX_TOKEN_CHARS} characters)",
            path.display()
        );
    }
    Ok(token.to_owned())
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_are_new_each_time_and_hash_to_a_fixed_form() {
        let a = new_token("mwf_join_").unwrap();
        let b = new_token("mwf_join_").unwrap();
        assert_ne!(a, b);
        assert!(a.starts_with("mwf_join_") && a.len() == 9 + 2 * TOKEN_BYTES);
        assert_eq!(hash(&a).len(), 64);
        assert_eq!(hash(&a), hash(&format!(" {a}\n")));
        assert!(same_hash(&hash(&a), &hash(&a)));
        assert!(!same_hash(&hash(&a), &hash(&b)));
        assert!(!same_hash("ab", "abc"));
    }

    #[test]
    fn a_private_file_is_0600_and_reads_back() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("join.token");
        std::fs::write(&path, "old").unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o644)).unwrap();
        write_private(&path, "mwf_join_abc").unwrap();
        let mode = std::fs::metadata(&path).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o600);
        assert_eq!(read_token_file(&path).unwrap(), "mwf_join_abc");
        std::fs::write(&path, "\n").unwrap();
        assert!(
            read_token_file(&path)
                .unwrap_err()
                .to_string()
                .contains("is empty")
        );
        std::fs::write(&path, "two words").unwrap();
        assert!(read_token_file(&path).is_err());
        let missing = read_token_file(&dir.path().join("nope")).unwrap_err();
        assert!(missing.to_string().contains("cannot read the token file"));
    }
}
