//! Which servers HTTPS trusts: the Web PKI roots, this system's CA certificates, or a CA
//! bundle a Secret gives ([`CustomCa`]).

use std::fmt;
use std::sync::Arc;

/// TLS settings trusting a custom CA bundle (plus the Web PKI roots).
#[derive(Clone)]
pub struct CustomCa(Arc<rustls::ClientConfig>);

impl fmt::Debug for CustomCa {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("CustomCa")
    }
}

impl CustomCa {
    /// Trust the certificates of a PEM bundle besides the Web PKI roots.
    pub fn from_pem(pem: &[u8]) -> Result<CustomCa, String> {
        let roots = rustls::RootCertStore {
            roots: webpki_roots::TLS_SERVER_ROOTS.into(),
        };
        CustomCa::adding(roots, pem)
    }

    /// Trust the certificates of a PEM bundle and nothing else.
    pub fn only(pem: &[u8]) -> Result<CustomCa, String> {
        CustomCa::adding(rustls::RootCertStore::empty(), pem)
    }

    /// Trust this system's CA certificates (`SSL_CERT_FILE`, `SSL_CERT_DIR`, else the
    /// distribution's bundle), as libgit2 and the git CLI do; the Web PKI roots when the
    /// system has none.
    pub fn system() -> CustomCa {
        static SYSTEM: std::sync::OnceLock<CustomCa> = std::sync::OnceLock::new();
        SYSTEM
            .get_or_init(|| {
                let mut roots = rustls::RootCertStore::empty();
                let found = rustls_native_certs::load_native_certs();
                for error in &found.errors {
                    tracing::debug!(%error, "reading the system's CA certificates");
                }
                let (added, _) = roots.add_parsable_certificates(found.certs);
                if added == 0 {
                    return CustomCa(web_pki());
                }
                CustomCa::config(roots).unwrap_or_else(|_| CustomCa(web_pki()))
            })
            .clone()
    }

    /// The TLS client settings.
    pub(crate) fn client_config(&self) -> Arc<rustls::ClientConfig> {
        Arc::clone(&self.0)
    }

    fn config(roots: rustls::RootCertStore) -> Result<CustomCa, String> {
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let config = rustls::ClientConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()
            .map_err(|e| format!("TLS setup: {e}"))?
            .with_root_certificates(roots)
            .with_no_client_auth();
        Ok(CustomCa(Arc::new(config)))
    }

    fn adding(mut roots: rustls::RootCertStore, pem: &[u8]) -> Result<CustomCa, String> {
        use rustls::pki_types::CertificateDer;
        use rustls::pki_types::pem::PemObject;
        let mut added = 0;
        for certificate in CertificateDer::pem_slice_iter(pem) {
            let certificate =
                certificate.map_err(|e| format!("CA bundle is not valid PEM: {e}"))?;
            roots
                .add(certificate)
                .map_err(|e| format!("CA bundle holds an unusable certificate: {e}"))?;
            added += 1;
        }
        if added == 0 {
            return Err("CA bundle holds no certificate".into());
        }
        CustomCa::config(roots)
    }
}

/// The TLS settings for HTTPS without a custom CA: the Web PKI roots.
pub(crate) fn web_pki() -> Arc<rustls::ClientConfig> {
    static CONFIG: std::sync::OnceLock<Arc<rustls::ClientConfig>> = std::sync::OnceLock::new();
    Arc::clone(CONFIG.get_or_init(|| {
        let roots = rustls::RootCertStore {
            roots: webpki_roots::TLS_SERVER_ROOTS.into(),
        };
        Arc::new(
            rustls::ClientConfig::builder()
                .with_root_certificates(roots)
                .with_no_client_auth(),
        )
    }))
}
