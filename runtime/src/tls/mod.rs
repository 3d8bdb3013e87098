//! TLS for the daemons' HTTP APIs (and so their pages), on rustls with the `ring` provider
//! only: API tokens and session cookies must not cross a network in clear text.
//!
//! - `server`: the certificate and key a daemon serves with (`--tls-cert`, `--tls-key`),
//!   checked at start;
//! - `client`: the rustls configuration every CLI's HTTP client uses (`--api-ca`, the
//!   platform's roots);
//! - here: [`Served`], how a daemon's API is served, for whoever builds its routes (the web
//!   pages mark their cookies `Secure` by it), and [`HANDSHAKE_TIMEOUT`].
//!
//! The API's accept loop, plain or over TLS, is `crate::daemon`'s (`serve_api`).

mod client;
mod server;
#[cfg(test)]
mod tests;

use std::io::Read;
use std::path::Path;
use std::sync::Arc;

use anyhow::Context;

pub use client::{ApiCaArgs, client_builder, client_config};
pub use server::{ServerTls, TlsArgs};

/// How a daemon's HTTP API is served: what its routes may need to know of it. A daemon's
/// start computes it from its configuration (`ControllerConfig::served`,
/// `NodeConfig::served`), and every request carries it as an axum extension
/// (`Extension<Served>`), so a handler can read it too.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Served {
    /// Over TLS (`--tls-cert`/`--tls-key`): a cookie the pages set may be `Secure`.
    pub tls: bool,
}

impl Served {
    /// How a daemon given `tls` (or none) serves its API.
    pub fn with(tls: Option<&ServerTls>) -> Served {
        Served { tls: tls.is_some() }
    }

    /// The URL scheme of the API: `https` over TLS, else `http`.
    pub fn scheme(self) -> &'static str {
        if self.tls { "https" } else { "http" }
    }
}

/// How long a client has to finish its TLS handshake with an API before its connection is
/// dropped.
pub const HANDSHAKE_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(10);

/// The largest PEM file read (a certificate chain, a key, a CA bundle such as the system's).
pub const MAX_PEM_BYTES: u64 = 4 * 1024 * 1024;

/// The bytes of the PEM file `path` given as `option` (which the errors name).
fn read_pem(option: &str, path: &Path) -> anyhow::Result<Vec<u8>> {
    let file = std::fs::File::open(path)
        .with_context(|| format!("{option} {}: cannot open it", path.display()))?;
    let mut bytes = Vec::new();
    file.take(MAX_PEM_BYTES + 1)
        .read_to_end(&mut bytes)
        .with_context(|| format!("{option} {}: cannot read it", path.display()))?;
    if bytes.len() as u64 > MAX_PEM_BYTES {
        anyhow::bail!(
            "{option} {}: larger than {MAX_PEM_BYTES} bytes (MAX_PEM_BYTES): not a PEM file",
            path.display()
        );
    }
    Ok(bytes)
}

/// The one crypto provider of every TLS configuration here.
fn provider() -> Arc<rustls::crypto::CryptoProvider> {
    Arc::new(rustls::crypto::ring::default_provider())
}
