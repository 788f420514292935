//! Party configuration files and key generation.
//!
//! The format (one file per party) is fixed by the architecture contract:
//!
//! ```toml
//! party_index = 1
//! [p1]
//! address = "127.0.0.1"
//! port = 8100
//! certificate = "p1.pem"
//! private_key = "p1.key"   # required for this party's own entry
//! [p2]
//! address = "127.0.0.1"
//! port = 8101
//! certificate = "p2.pem"
//! [p3]
//! address = "127.0.0.1"
//! port = 8102
//! certificate = "p3.pem"
//! ```
//!
//! Relative paths are resolved against the directory of the configuration file.
//! Certificates and keys are PEM files; the key may be PKCS#8, PKCS#1 or SEC1.

use core::fmt;
use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};

use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};
use serde::{Deserialize, Serialize};
use triskele_share::PartyId;

use crate::error::NetError;
use crate::tls::{check_identity, Identity};

/// How to reach one party and which certificate it must present.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PeerConfig {
    /// Host name or IP address.
    pub address: String,
    /// TCP port the party listens on.
    pub port: u16,
    /// The party's certificate (DER), pinned: exactly this certificate is accepted.
    pub certificate: CertificateDer<'static>,
}

/// One party's view of the deployment: its own index and key, and every party's address and
/// certificate.
pub struct PartyConfig {
    party: PartyId,
    peers: [PeerConfig; 3],
    key: PrivateKeyDer<'static>,
}

impl Clone for PartyConfig {
    fn clone(&self) -> Self {
        PartyConfig {
            party: self.party,
            peers: self.peers.clone(),
            key: self.key.clone_key(),
        }
    }
}

impl fmt::Debug for PartyConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("PartyConfig")
            .field("party", &self.party)
            .field("peers", &self.peers)
            .field("private_key", &"[secret key elided]")
            .finish()
    }
}

#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawConfig {
    party_index: i64,
    p1: RawParty,
    p2: RawParty,
    p3: RawParty,
}

#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawParty {
    address: String,
    port: i64,
    certificate: PathBuf,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    private_key: Option<PathBuf>,
}

fn table_name(p: PartyId) -> String {
    format!("p{}", p.number())
}

fn load_certificate(path: &Path, p: PartyId) -> Result<CertificateDer<'static>, NetError> {
    let mut certs = CertificateDer::pem_file_iter(path).map_err(|e| {
        NetError::config(format!(
            "cannot read the certificate of {p} from {}: {e}",
            path.display()
        ))
    })?;
    match certs.next() {
        Some(Ok(c)) => Ok(c),
        Some(Err(e)) => Err(NetError::config(format!(
            "malformed certificate of {p} in {}: {e}",
            path.display()
        ))),
        None => Err(NetError::config(format!(
            "no certificate (PEM \"BEGIN CERTIFICATE\" block) for {p} in {}",
            path.display()
        ))),
    }
}

fn load_key(path: &Path, p: PartyId) -> Result<PrivateKeyDer<'static>, NetError> {
    PrivateKeyDer::from_pem_file(path).map_err(|e| {
        let what = match e {
            rustls::pki_types::pem::Error::NoItemsFound => {
                "no private key (PEM PRIVATE KEY block) found".to_string()
            }
            other => other.to_string(),
        };
        NetError::config(format!(
            "cannot read the private key of {p} from {}: {what}",
            path.display()
        ))
    })
}

impl PartyConfig {
    /// Reads and checks a configuration file, loading the certificates and own key it
    /// names (relative paths are resolved against the file's directory).
    pub fn from_toml_file(path: &Path) -> Result<PartyConfig, NetError> {
        let text = fs::read_to_string(path).map_err(|e| {
            NetError::config(format!(
                "cannot read configuration file {}: {e}",
                path.display()
            ))
        })?;
        let base = path.parent().unwrap_or_else(|| Path::new("."));
        PartyConfig::from_toml_str(&text, base).map_err(|e| match e {
            NetError::Config { message } => {
                NetError::config(format!("{}: {message}", path.display()))
            }
            other => other,
        })
    }

    /// Parses a configuration from TOML text; relative file names are resolved against
    /// `base_dir`.
    pub fn from_toml_str(text: &str, base_dir: &Path) -> Result<PartyConfig, NetError> {
        let raw: RawConfig = toml::from_str(text)
            .map_err(|e| NetError::config(format!("malformed configuration: {e}")))?;
        let party = u64::try_from(raw.party_index)
            .ok()
            .and_then(PartyId::from_number)
            .ok_or_else(|| {
                NetError::config(format!(
                    "party_index must be 1, 2 or 3, found {}",
                    raw.party_index
                ))
            })?;
        let raws = [raw.p1, raw.p2, raw.p3];
        let mut key = None;
        let mut peers = Vec::with_capacity(3);
        for (p, r) in PartyId::ALL.into_iter().zip(raws) {
            let table = table_name(p);
            if r.address.trim().is_empty() {
                return Err(NetError::config(format!("[{table}] address is empty")));
            }
            let port = u16::try_from(r.port)
                .ok()
                .filter(|&port| port != 0)
                .ok_or_else(|| {
                    NetError::config(format!(
                        "[{table}] port must be between 1 and 65535, found {}",
                        r.port
                    ))
                })?;
            let certificate = load_certificate(&base_dir.join(&r.certificate), p)?;
            if p == party {
                let key_path = r.private_key.ok_or_else(|| {
                    NetError::config(format!(
                        "[{table}] private_key is required for this party's own entry (party_index = {})",
                        p.number()
                    ))
                })?;
                key = Some(load_key(&base_dir.join(key_path), p)?);
            } else if r.private_key.is_some() {
                tracing::warn!(
                    "[{table}] has a private_key entry; it is ignored (only the own entry's key is used)"
                );
            }
            peers.push(PeerConfig {
                address: r.address,
                port,
                certificate,
            });
        }
        let peers: [PeerConfig; 3] = peers
            .try_into()
            .map_err(|_| NetError::config("internal: expected three parties"))?;
        let key = key.ok_or_else(|| NetError::config("internal: own key missing"))?;
        PartyConfig::from_parts(party, peers, key)
    }

    /// Builds a configuration from its parts (for programs that manage certificates
    /// themselves). Checks that the three certificates differ and that `key` belongs to
    /// this party's certificate.
    pub fn from_parts(
        party: PartyId,
        peers: [PeerConfig; 3],
        key: PrivateKeyDer<'static>,
    ) -> Result<PartyConfig, NetError> {
        for a in PartyId::ALL {
            for b in PartyId::ALL {
                if a < b && peers[a.index()].certificate == peers[b.index()].certificate {
                    return Err(NetError::config(format!(
                        "{a} and {b} have the same certificate; every party needs its own"
                    )));
                }
            }
        }
        let cfg = PartyConfig { party, peers, key };
        check_identity(&cfg.identity())?;
        Ok(cfg)
    }

    /// This party.
    pub fn party(&self) -> PartyId {
        self.party
    }

    /// Address and certificate of party `p` (including this party itself).
    pub fn peer(&self, p: PartyId) -> &PeerConfig {
        &self.peers[p.index()]
    }

    pub(crate) fn identity(&self) -> Identity {
        Identity {
            cert: self.peers[self.party.index()].certificate.clone(),
            key: self.key.clone_key(),
        }
    }
}

/// A freshly generated self-signed certificate and key for one party.
pub(crate) struct Generated {
    pub(crate) cert_pem: String,
    pub(crate) key_pem: String,
    pub(crate) identity: Identity,
}

/// Generates a self-signed ECDSA P-256 certificate whose subject alternative names are
/// `names` (IP addresses become IP SANs, everything else DNS SANs).
pub(crate) fn generate_identity(party: PartyId, names: &[String]) -> Result<Generated, NetError> {
    let cert_err = |e: rcgen::Error| NetError::Certificate {
        peer: Some(party),
        reason: format!("cannot generate a certificate for {party}: {e}"),
    };
    let mut params = rcgen::CertificateParams::new(names.to_vec()).map_err(|e| {
        NetError::config(format!(
            "invalid host name for {party} ({}): {e}",
            names.join(", ")
        ))
    })?;
    params
        .distinguished_name
        .push(rcgen::DnType::CommonName, format!("triskele {party}"));
    let key = rcgen::KeyPair::generate().map_err(cert_err)?;
    let cert = params.self_signed(&key).map_err(cert_err)?;
    let key_der =
        PrivateKeyDer::try_from(key.serialize_der()).map_err(|e| NetError::Certificate {
            peer: Some(party),
            reason: format!("generated key cannot be encoded: {e}"),
        })?;
    Ok(Generated {
        cert_pem: cert.pem(),
        key_pem: key.serialize_pem(),
        identity: Identity {
            cert: cert.der().clone(),
            key: key_der,
        },
    })
}

fn write_file(path: &Path, contents: &str, secret: bool) -> Result<(), NetError> {
    let err = |e| NetError::io(None, format!("writing {}", path.display()), e);
    let mut opts = fs::OpenOptions::new();
    opts.write(true).create(true).truncate(true);
    #[cfg(unix)]
    if secret {
        use std::os::unix::fs::OpenOptionsExt;
        opts.mode(0o600);
    }
    let mut f = opts.open(path).map_err(err)?;
    #[cfg(unix)]
    if secret {
        // `mode` only applies to new files; tighten an existing one too.
        use std::os::unix::fs::PermissionsExt;
        f.set_permissions(fs::Permissions::from_mode(0o600))
            .map_err(err)?;
    }
    #[cfg(not(unix))]
    let _ = secret;
    f.write_all(contents.as_bytes()).map_err(err)?;
    f.sync_all().map_err(err)
}

/// Generates a certificate and key for each party and writes a complete deployment into
/// `dir`: `p1.pem`, `p1.key`, `p1.toml`, and the same for P2 and P3. `hosts[i]` is the
/// address and port of party i+1; the host becomes the certificate's subject alternative
/// name. Key files are created with mode 0600 on Unix. Existing files are overwritten.
///
/// Returns the paths of the three configuration files (P1, P2, P3). Each configuration
/// refers to the certificate and key files by names relative to `dir`, so the directory
/// can be copied as a whole (each party needs only its own `.key`).
pub fn keygen(dir: &Path, hosts: &[(String, u16); 3]) -> Result<[PathBuf; 3], NetError> {
    for (p, (host, port)) in PartyId::ALL.into_iter().zip(hosts) {
        if host.trim().is_empty() || *port == 0 {
            return Err(NetError::config(format!(
                "host of {p} must be a non-empty name and a port between 1 and 65535, got {host:?}:{port}"
            )));
        }
    }
    fs::create_dir_all(dir)
        .map_err(|e| NetError::io(None, format!("creating {}", dir.display()), e))?;
    for (p, (host, _)) in PartyId::ALL.into_iter().zip(hosts) {
        let g = generate_identity(p, std::slice::from_ref(host))?;
        let n = p.number();
        write_file(&dir.join(format!("p{n}.pem")), &g.cert_pem, false)?;
        write_file(&dir.join(format!("p{n}.key")), &g.key_pem, true)?;
    }
    let mut out = Vec::with_capacity(3);
    for me in PartyId::ALL {
        let entry = |p: PartyId| {
            let (host, port) = &hosts[p.index()];
            RawParty {
                address: host.clone(),
                port: i64::from(*port),
                certificate: PathBuf::from(format!("p{}.pem", p.number())),
                private_key: (p == me).then(|| PathBuf::from(format!("p{}.key", p.number()))),
            }
        };
        let raw = RawConfig {
            party_index: i64::from(me.number()),
            p1: entry(PartyId::P1),
            p2: entry(PartyId::P2),
            p3: entry(PartyId::P3),
        };
        let text = toml::to_string(&raw)
            .map_err(|e| NetError::config(format!("cannot encode configuration: {e}")))?;
        let path = dir.join(format!("p{}.toml", me.number()));
        write_file(&path, &text, false)?;
        out.push(path);
    }
    out.try_into()
        .map_err(|_| NetError::config("internal: expected three configuration files"))
}
