//! A private mesh: with a pre-shared key (libp2p pnet, the IPFS `swarm.key` format), every
//! TCP connection is encrypted with it before anything else is said, so a peer without the key
//! cannot even finish a Noise handshake, let alone register or send a message. Without a key,
//! the transport is plain TCP, then Noise and Yamux, as everywhere else.

use std::path::Path;

use either::Either;
use libp2p::core::muxing::StreamMuxerBox;
use libp2p::core::transport::Boxed;
use libp2p::core::transport::timeout::TransportTimeout;
use libp2p::core::upgrade::Version;
use libp2p::identity::Keypair;
use libp2p::pnet::PnetConfig;
pub use libp2p::pnet::PreSharedKey;
use libp2p::{PeerId, Transport};

use super::dial_port::NewPortDials;
use super::guard::INBOUND_HANDSHAKE_TIMEOUT;

/// The largest swarm key file read, in bytes (the format takes about 100).
pub const MAX_SWARM_KEY_FILE_BYTES: u64 = 4096;

/// TCP (with `pnet` first, when there is a key), Noise and Yamux: what `with_tcp` builds, and
/// the private network's handshake under it; an inbound connection's handshake must be done
/// within [`INBOUND_HANDSHAKE_TIMEOUT`], and every dial takes a new port (`dial_port`).
pub fn transport(
    keypair: &Keypair,
    key: Option<PreSharedKey>,
) -> Result<Boxed<(PeerId, StreamMuxerBox)>, Box<dyn std::error::Error + Send + Sync>> {
    let tcp = NewPortDials(libp2p::tcp::tokio::Transport::new(
        libp2p::tcp::Config::new().nodelay(true),
    ));
    let base = match key {
        Some(key) => {
            Either::Left(tcp.and_then(move |socket, _| PnetConfig::new(key).handshake(socket)))
        }
        None => Either::Right(tcp),
    };
    let upgraded = base
        .upgrade(Version::V1Lazy)
        .authenticate(libp2p::noise::Config::new(keypair)?)
        .multiplex(libp2p::yamux::Config::default())
        .map(|(peer, muxer), _| (peer, StreamMuxerBox::new(muxer)));
    // A stranger's silent connection holds a slot for connections being set up only this
    // long (dials keep the swarm's dial timeout).
    Ok(TransportTimeout::with_ingoing_timeout(upgraded, INBOUND_HANDSHAKE_TIMEOUT).boxed())
}

/// A new random key, in the swarm key file format.
pub fn new_key_file() -> anyhow::Result<String> {
    let mut bytes = [0u8; 32];
    getrandom::fill(&mut bytes)
        .map_err(|e| anyhow::anyhow!("no randomness for a swarm key: {e}"))?;
    Ok(PreSharedKey::new(bytes).to_key_file())
}

/// The key in a swarm key file (`/key/swarm/psk/1.0.0/`, `/base16/`, 64 hex digits).
pub fn read_key_file(file: &Path) -> anyhow::Result<PreSharedKey> {
    let shown = file.display();
    let size = std::fs::metadata(file)
        .map_err(|e| anyhow::anyhow!("cannot read the swarm key file {shown}: {e}"))?
        .len();
    if size > MAX_SWARM_KEY_FILE_BYTES {
        anyhow::bail!(
            "the swarm key file {shown} holds {size} bytes, over the limit of \
             {MAX_SWARM_KEY_FILE_BYTES} (MAX_SWARM_KEY_FILE_BYTES): is it the right file?"
        );
    }
    let text = std::fs::read_to_string(file)
        .map_err(|e| anyhow::anyhow!("cannot read the swarm key file {shown}: {e}"))?;
    text.parse::<PreSharedKey>().map_err(|e| {
        anyhow::anyhow!(
            "{shown} is not a swarm key file ({e}): it holds `/key/swarm/psk/1.0.0/`, \
             `/base16/` and 64 hex digits, each on its own line; copy the controller's"
        )
    })
}

/// The key in `file`, made (random, 0600) when the file does not exist yet: the controller's
/// `serve --swarm-key-file`.
pub fn ensure_key_file(file: &Path) -> anyhow::Result<PreSharedKey> {
    if !file.exists() {
        crate::secret::write_private(file, &new_key_file()?)?;
        tracing::info!(
            "made a new swarm key in {}: give it to every node",
            file.display()
        );
    }
    read_key_file(file)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_made_key_file_reads_back_and_a_bad_one_says_what_it_should_hold() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("swarm.key");
        let made = ensure_key_file(&file).unwrap();
        assert!(read_key_file(&file).unwrap() == made);
        assert!(
            ensure_key_file(&file).unwrap() == made,
            "an existing key is kept"
        );
        let bad = dir.path().join("bad.key");
        std::fs::write(&bad, "hello").unwrap();
        let why = format!("{:#}", read_key_file(&bad).unwrap_err());
        assert!(why.contains("/key/swarm/psk/1.0.0/"), "{why}");
        let missing = format!("{:#}", read_key_file(&dir.path().join("none")).unwrap_err());
        assert!(missing.contains("none"), "{missing}");
    }
}
