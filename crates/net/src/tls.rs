//! TLS 1.3 configuration with pinned certificates, and mapping of TLS failures to
//! [`NetError`].
//!
//! Each party is identified by exactly one certificate. A peer is accepted only if the
//! end-entity certificate it presents is byte-for-byte the one configured for it; the
//! handshake signature is then checked with the ring provider's algorithms, which proves
//! possession of the matching private key. No CA, name or validity-period checks are made:
//! the configuration is the trust anchor.

use core::fmt;
use std::io;
use std::sync::Arc;

use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::crypto::CryptoProvider;
use rustls::pki_types::{CertificateDer, PrivateKeyDer, ServerName, UnixTime};
use rustls::server::danger::{ClientCertVerified, ClientCertVerifier};
use rustls::{
    AlertDescription, CertificateError, ClientConfig, DigitallySignedStruct, DistinguishedName,
    ServerConfig, SignatureScheme,
};
use triskele_share::PartyId;

use crate::error::NetError;

/// A party's own certificate and private key.
pub(crate) struct Identity {
    pub(crate) cert: CertificateDer<'static>,
    pub(crate) key: PrivateKeyDer<'static>,
}

impl Clone for Identity {
    fn clone(&self) -> Self {
        Identity {
            cert: self.cert.clone(),
            key: self.key.clone_key(),
        }
    }
}

impl fmt::Debug for Identity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Identity")
            .field("cert_len", &self.cert.len())
            .field("key", &"[secret key elided]")
            .finish()
    }
}

fn provider() -> Arc<CryptoProvider> {
    Arc::new(rustls::crypto::ring::default_provider())
}

/// Verifies a server (the higher-numbered peer) by certificate pinning.
#[derive(Debug)]
struct PinnedServer {
    peer: PartyId,
    cert: CertificateDer<'static>,
    provider: Arc<CryptoProvider>,
}

impl ServerCertVerifier for PinnedServer {
    fn verify_server_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        _intermediates: &[CertificateDer<'_>],
        _server_name: &ServerName<'_>,
        _ocsp_response: &[u8],
        _now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        if end_entity.as_ref() == self.cert.as_ref() {
            Ok(ServerCertVerified::assertion())
        } else {
            tracing::warn!(peer = %self.peer, "peer presented a certificate that is not the configured one");
            Err(rustls::Error::InvalidCertificate(
                CertificateError::ApplicationVerificationFailure,
            ))
        }
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        handshake_signatures::tls12(&self.provider, message, cert, dss)
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        handshake_signatures::tls13(&self.provider, message, cert, dss)
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        handshake_signatures::schemes(&self.provider)
    }
}

/// Verifies clients (the lower-numbered peers) by certificate pinning: any of the
/// configured certificates is accepted; which peer it is gets decided after the handshake.
#[derive(Debug)]
struct PinnedClients {
    allowed: Vec<(PartyId, CertificateDer<'static>)>,
    provider: Arc<CryptoProvider>,
}

impl ClientCertVerifier for PinnedClients {
    fn root_hint_subjects(&self) -> &[DistinguishedName] {
        &[]
    }

    fn verify_client_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        _intermediates: &[CertificateDer<'_>],
        _now: UnixTime,
    ) -> Result<ClientCertVerified, rustls::Error> {
        if self
            .allowed
            .iter()
            .any(|(_, c)| c.as_ref() == end_entity.as_ref())
        {
            Ok(ClientCertVerified::assertion())
        } else {
            tracing::warn!("incoming connection presented a certificate that is not configured for any expected peer");
            Err(rustls::Error::InvalidCertificate(
                CertificateError::ApplicationVerificationFailure,
            ))
        }
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        handshake_signatures::tls12(&self.provider, message, cert, dss)
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        handshake_signatures::tls13(&self.provider, message, cert, dss)
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        handshake_signatures::schemes(&self.provider)
    }
}

/// Handshake signature checks shared by both pinning verifiers: the pinned certificate's key
/// must have signed the handshake, checked with the provider's algorithms.
mod handshake_signatures {
    use rustls::client::danger::HandshakeSignatureValid;
    use rustls::crypto::CryptoProvider;
    use rustls::{DigitallySignedStruct, SignatureScheme};
    use rustls_pki_types::CertificateDer;

    pub(super) fn tls12(
        provider: &CryptoProvider,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls12_signature(
            message,
            cert,
            dss,
            &provider.signature_verification_algorithms,
        )
    }

    pub(super) fn tls13(
        provider: &CryptoProvider,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls13_signature(
            message,
            cert,
            dss,
            &provider.signature_verification_algorithms,
        )
    }

    pub(super) fn schemes(provider: &CryptoProvider) -> Vec<SignatureScheme> {
        provider
            .signature_verification_algorithms
            .supported_schemes()
    }
}

fn own_key_error(e: rustls::Error) -> NetError {
    NetError::config(format!(
        "own certificate and private key are unusable (unsupported key type, or the key does not belong to the certificate): {e}"
    ))
}

/// Client configuration for connecting to `peer`, which must present `peer_cert`.
pub(crate) fn client_config(
    identity: &Identity,
    peer: PartyId,
    peer_cert: CertificateDer<'static>,
) -> Result<Arc<ClientConfig>, NetError> {
    let provider = provider();
    let verifier = PinnedServer {
        peer,
        cert: peer_cert,
        provider: provider.clone(),
    };
    let mut cfg = ClientConfig::builder_with_provider(provider)
        .with_protocol_versions(&[&rustls::version::TLS13])
        .map_err(own_key_error)?
        .dangerous()
        .with_custom_certificate_verifier(Arc::new(verifier))
        .with_client_auth_cert(vec![identity.cert.clone()], identity.key.clone_key())
        .map_err(own_key_error)?;
    cfg.enable_sni = false;
    cfg.resumption = rustls::client::Resumption::disabled();
    Ok(Arc::new(cfg))
}

/// Server configuration accepting exactly the clients in `allowed`.
pub(crate) fn server_config(
    identity: &Identity,
    allowed: Vec<(PartyId, CertificateDer<'static>)>,
) -> Result<Arc<ServerConfig>, NetError> {
    let provider = provider();
    let verifier = PinnedClients {
        allowed,
        provider: provider.clone(),
    };
    let mut cfg = ServerConfig::builder_with_provider(provider)
        .with_protocol_versions(&[&rustls::version::TLS13])
        .map_err(own_key_error)?
        .with_client_cert_verifier(Arc::new(verifier))
        .with_single_cert(vec![identity.cert.clone()], identity.key.clone_key())
        .map_err(own_key_error)?;
    cfg.send_tls13_tickets = 0;
    cfg.session_storage = Arc::new(rustls::server::NoServerSessionStorage {});
    Ok(Arc::new(cfg))
}

/// Checks that a certificate and key can be used together (at configuration time).
pub(crate) fn check_identity(identity: &Identity) -> Result<(), NetError> {
    server_config(identity, Vec::new()).map(drop)
}

/// Alerts by which a peer tells us it refused our certificate.
fn is_certificate_alert(a: AlertDescription) -> bool {
    matches!(
        a,
        AlertDescription::BadCertificate
            | AlertDescription::UnsupportedCertificate
            | AlertDescription::CertificateRevoked
            | AlertDescription::CertificateExpired
            | AlertDescription::CertificateUnknown
            | AlertDescription::UnknownCA
            | AlertDescription::AccessDenied
            | AlertDescription::CertificateRequired
    )
}

/// The rustls error inside an I/O error from tokio-rustls, if any.
pub(crate) fn rustls_error(e: &io::Error) -> Option<&rustls::Error> {
    e.get_ref().and_then(|i| i.downcast_ref::<rustls::Error>())
}

/// Maps a TLS error on the link with a known `peer`.
pub(crate) fn map_tls_error(peer: PartyId, e: rustls::Error) -> NetError {
    match e {
        rustls::Error::InvalidCertificate(_) => NetError::Certificate {
            peer: Some(peer),
            reason: format!(
                "{peer} presented a certificate that is not the one configured for {peer}"
            ),
        },
        rustls::Error::AlertReceived(a) if is_certificate_alert(a) => NetError::Certificate {
            peer: Some(peer),
            reason: format!(
                "{peer} refused our certificate (TLS alert {a:?}); check that its configuration lists our current certificate"
            ),
        },
        other => NetError::Tls { peer, source: other },
    }
}

/// Maps an I/O error (possibly wrapping a TLS error) on the link with `peer`.
pub(crate) fn map_io_error(peer: PartyId, context: &str, e: io::Error) -> NetError {
    match rustls_error(&e) {
        Some(t) => map_tls_error(peer, t.clone()),
        None => NetError::io(Some(peer), context, e),
    }
}

/// Outcome of a failed incoming handshake (the peer is not known yet).
pub(crate) enum AcceptFailure {
    /// A configured peer is misconfigured: stop with this error.
    Fatal(NetError),
    /// Probably not one of our peers (a scanner, a stray client): keep accepting.
    Retry(String),
}

/// Classifies an error from an incoming TLS handshake; `expected` are the peers still to
/// connect.
pub(crate) fn classify_accept_error(e: io::Error, expected: &[PartyId]) -> AcceptFailure {
    let who = match expected {
        [p] => Some(*p),
        _ => None,
    };
    let names = expected
        .iter()
        .map(|p| p.to_string())
        .collect::<Vec<_>>()
        .join(" or ");
    match rustls_error(&e) {
        Some(rustls::Error::InvalidCertificate(_)) => AcceptFailure::Fatal(NetError::Certificate {
            peer: who,
            reason: format!(
                "an incoming connection presented a certificate that is not the one configured for {names}"
            ),
        }),
        Some(rustls::Error::AlertReceived(a)) if is_certificate_alert(*a) => {
            AcceptFailure::Fatal(NetError::Certificate {
                peer: who,
                reason: format!(
                    "the connecting peer ({names}) refused our certificate (TLS alert {a:?}); check that its configuration lists our current certificate"
                ),
            })
        }
        _ => AcceptFailure::Retry(e.to_string()),
    }
}
