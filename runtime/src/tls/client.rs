//! The TLS every CLI's HTTP client speaks to an `https://` API: rustls on `ring`, trusting
//! the CA certificates of `--api-ca FILE` (`$MOBIWF_API_CA`) and the platform's roots. The
//! roots are read at the first https connection, so a command to a plain-HTTP API never
//! reads them (nor fails on a machine that has none).

use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};

use rustls::DigitallySignedStruct;
use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::crypto::CryptoProvider;
use rustls::pki_types::{CertificateDer, ServerName, UnixTime};

use super::provider;
use super::server::certificates;

/// `--api-ca FILE`: whom a command trusts for an `https://` API, besides the platform's roots.
#[derive(Debug, Clone, Default, clap::Args)]
pub struct ApiCaArgs {
    /// For an https:// API (a daemon run with --tls-cert): a PEM file with the certificate of
    /// the CA that signed the API's certificate, or that certificate itself when it is
    /// self-signed; trusted besides the system's CA roots.
    #[arg(long, value_name = "FILE", env = "MOBIWF_API_CA")]
    pub api_ca: Option<PathBuf>,
}

/// A `reqwest` client builder speaking TLS as [`client_config`] says: every HTTP client of
/// the workspace starts here (reqwest has no crypto provider of its own in this build). Idle
/// connections are dropped well before a daemon closes them
/// ([`API_HEADER_READ_TIMEOUT`](crate::http_limits::API_HEADER_READ_TIMEOUT)), so a request
/// never goes out on a connection the server is closing.
pub fn client_builder(ca: Option<&Path>) -> anyhow::Result<reqwest::ClientBuilder> {
    Ok(reqwest::Client::builder()
        .tls_backend_preconfigured(client_config(ca)?)
        .pool_idle_timeout(crate::http_limits::API_HEADER_READ_TIMEOUT / 2))
}

/// TLS 1.2 and 1.3 on `ring`, trusting the certificates in the PEM file `ca` (`--api-ca`;
/// read now, so a bad file is an error naming it) and the platform's roots.
pub fn client_config(ca: Option<&Path>) -> anyhow::Result<rustls::ClientConfig> {
    let extra = match ca {
        Some(file) => trusted(file)?,
        None => Vec::new(),
    };
    let provider = provider();
    let roots = Arc::new(Roots {
        extra,
        provider: provider.clone(),
        verifier: OnceLock::new(),
    });
    Ok(rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()?
        .dangerous()
        .with_custom_certificate_verifier(roots)
        .with_no_client_auth())
}

/// The certificates of `file` (`--api-ca`), each checked to be usable as a root.
fn trusted(file: &Path) -> anyhow::Result<Vec<CertificateDer<'static>>> {
    let certs = certificates("--api-ca", file)?;
    let mut store = rustls::RootCertStore::empty();
    for (n, cert) in certs.iter().enumerate() {
        store.add(cert.clone()).map_err(|e| {
            anyhow::anyhow!(
                "--api-ca {}: certificate {} cannot be trusted as a root: {e}",
                file.display(),
                n + 1
            )
        })?;
    }
    Ok(certs)
}

/// The certificate check: `rustls-platform-verifier`'s (WebPKI over the platform's roots and
/// `extra`), made at the first server certificate it is asked about.
#[derive(Debug)]
struct Roots {
    extra: Vec<CertificateDer<'static>>,
    provider: Arc<CryptoProvider>,
    verifier: OnceLock<Result<rustls_platform_verifier::Verifier, rustls::Error>>,
}

impl Roots {
    fn verifier(&self) -> Result<&rustls_platform_verifier::Verifier, rustls::Error> {
        self.verifier
            .get_or_init(|| {
                rustls_platform_verifier::Verifier::new_with_extra_roots(
                    self.extra.iter().cloned(),
                    self.provider.clone(),
                )
            })
            .as_ref()
            .map_err(Clone::clone)
    }
}

impl ServerCertVerifier for Roots {
    fn verify_server_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        intermediates: &[CertificateDer<'_>],
        server_name: &ServerName<'_>,
        ocsp_response: &[u8],
        now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        self.verifier()?.verify_server_cert(
            end_entity,
            intermediates,
            server_name,
            ocsp_response,
            now,
        )
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls12_signature(
            message,
            cert,
            dss,
            &self.provider.signature_verification_algorithms,
        )
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls13_signature(
            message,
            cert,
            dss,
            &self.provider.signature_verification_algorithms,
        )
    }

    fn supported_verify_schemes(&self) -> Vec<rustls::SignatureScheme> {
        self.provider
            .signature_verification_algorithms
            .supported_schemes()
    }
}
