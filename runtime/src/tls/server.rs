//! The certificate and key a daemon serves its API with, read and checked at start: a file
//! that is not PEM, holds no key, or a key that is not the certificate's is an error that
//! names the file, before anything listens.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use rustls::pki_types::pem::{self, PemObject};
use rustls::pki_types::{CertificateDer, PrivateKeyDer};

use super::{provider, read_pem};

/// `--tls-cert FILE --tls-key FILE`: both, or neither (the API is then plain HTTP).
#[derive(Debug, Clone, Default, clap::Args)]
pub struct TlsArgs {
    /// Serve the HTTP API (and its pages) over TLS with this certificate: a PEM file, the
    /// server's certificate first, then any intermediates. Needs --tls-key.
    #[arg(long, value_name = "FILE", requires = "tls_key")]
    pub tls_cert: Option<PathBuf>,
    /// The private key of --tls-cert: a PEM file (PKCS#8, PKCS#1 or SEC1). Needs
    /// --tls-cert.
    #[arg(long, value_name = "FILE", requires = "tls_cert")]
    pub tls_key: Option<PathBuf>,
}

impl TlsArgs {
    /// The certificate and key to serve with, `None` for plain HTTP; an error naming the
    /// option that is missing, or the file that is wrong and how.
    pub fn load(&self) -> anyhow::Result<Option<ServerTls>> {
        match (&self.tls_cert, &self.tls_key) {
            (Some(cert), Some(key)) => Ok(Some(ServerTls::load(cert, key)?)),
            (None, None) => Ok(None),
            (Some(_), None) => {
                anyhow::bail!("--tls-cert needs --tls-key FILE: the certificate's private key")
            }
            (None, Some(_)) => {
                anyhow::bail!("--tls-key needs --tls-cert FILE: the certificate of that key")
            }
        }
    }
}

/// A certificate chain and its private key, ready to serve TLS with (rustls, `ring`; TLS 1.2
/// and 1.3; HTTP/1.1).
#[derive(Debug, Clone)]
pub struct ServerTls {
    config: Arc<rustls::ServerConfig>,
}

impl ServerTls {
    /// Reads the certificate chain in `cert` and the private key in `key` (both PEM) and
    /// checks that the key is the certificate's.
    pub fn load(cert: &Path, key: &Path) -> anyhow::Result<ServerTls> {
        let chain = certificates("--tls-cert", cert)?;
        let key_der = private_key(key)?;
        let mut config = rustls::ServerConfig::builder_with_provider(provider())
            .with_safe_default_protocol_versions()?
            .with_no_client_auth()
            .with_single_cert(chain, key_der)
            .map_err(|e| unusable(e, cert, key))?;
        config.alpn_protocols = vec![b"http/1.1".to_vec()];
        Ok(ServerTls {
            config: Arc::new(config),
        })
    }

    /// The rustls configuration to accept connections with.
    pub(crate) fn config(&self) -> Arc<rustls::ServerConfig> {
        self.config.clone()
    }
}

/// The certificates of the PEM file `path`, given as `option`: at least one.
pub(super) fn certificates(
    option: &str,
    path: &Path,
) -> anyhow::Result<Vec<CertificateDer<'static>>> {
    let bytes = read_pem(option, path)?;
    let chain = CertificateDer::pem_slice_iter(&bytes)
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| anyhow::anyhow!("{option} {}: not a PEM file: {e}", path.display()))?;
    if chain.is_empty() {
        anyhow::bail!(
            "{option} {}: no PEM certificate in it (a block -----BEGIN CERTIFICATE-----)",
            path.display()
        );
    }
    Ok(chain)
}

/// The private key in the PEM file `path` (`--tls-key`).
fn private_key(path: &Path) -> anyhow::Result<PrivateKeyDer<'static>> {
    let bytes = read_pem("--tls-key", path)?;
    PrivateKeyDer::from_pem_slice(&bytes).map_err(|e| match e {
        pem::Error::NoItemsFound => anyhow::anyhow!(
            "--tls-key {}: no PEM private key in it (a block -----BEGIN PRIVATE KEY-----, \
             RSA PRIVATE KEY or EC PRIVATE KEY)",
            path.display()
        ),
        other => anyhow::anyhow!("--tls-key {}: not a PEM file: {other}", path.display()),
    })
}

/// Why rustls refused the chain in `cert` with the key in `key`, naming the file at fault.
fn unusable(e: rustls::Error, cert: &Path, key: &Path) -> anyhow::Error {
    use rustls::{Error, InconsistentKeys};
    match e {
        Error::InconsistentKeys(InconsistentKeys::KeyMismatch) => anyhow::anyhow!(
            "--tls-key {} does not match the certificate in --tls-cert {}: it is another \
             certificate's key",
            key.display(),
            cert.display()
        ),
        Error::InvalidCertificate(why) => anyhow::anyhow!(
            "--tls-cert {}: its first certificate cannot be used: {why:?}",
            cert.display()
        ),
        other => anyhow::anyhow!(
            "--tls-key {} with --tls-cert {}: {other}",
            key.display(),
            cert.display()
        ),
    }
}
