//! The error type of the `net` crate.

use core::fmt;
use std::io;
use std::time::Duration;

use triskele_share::PartyId;

/// What a party was waiting for when a timeout expired.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Waiting {
    /// Establishing the link (TCP connect, TLS handshake, hello).
    Connect,
    /// A message (frame) from the peer.
    Receive,
    /// The peer to take our messages (it stopped reading), including the final flush in
    /// [`shutdown`](crate::Network::shutdown).
    Send,
}

impl fmt::Display for Waiting {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Waiting::Connect => "establishing the link with",
            Waiting::Receive => "waiting for a message from",
            Waiting::Send => "delivering messages to",
        })
    }
}

/// Everything that can go wrong on the channels between the parties.
///
/// Every variant is a configuration, certificate or network failure: the CLI maps all of
/// them to exit code 2 ([`NetError::EXIT_CODE`]). Variants name the peer concerned where
/// there is one. Messages never contain key material or message contents.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum NetError {
    /// Nothing arrived from (or could be sent to) `peer` within the configured time.
    #[error("timed out after {after:?} {during} {peer}{}", suffix(detail))]
    Timeout {
        peer: PartyId,
        during: Waiting,
        after: Duration,
        /// The last underlying error seen while retrying, if any.
        detail: Option<String>,
    },
    /// The peer closed the link (or its process died) between two frames.
    #[error("{peer} disconnected")]
    Disconnected { peer: PartyId },
    /// A frame announced (or a send asked for) more bytes than the configured maximum.
    #[error("frame of {len} bytes on the link with {peer} exceeds the limit of {max} bytes")]
    FrameTooLarge { peer: PartyId, len: u64, max: u64 },
    /// The link ended in the middle of a frame.
    #[error(
        "link with {peer} ended in the middle of a frame ({got} of {expected} bytes received)"
    )]
    Truncated {
        peer: PartyId,
        expected: u64,
        got: u64,
    },
    /// A certificate was refused: the peer presented one that differs from the configured
    /// one, or the peer refused ours. `peer` is `None` when an incoming connection refused
    /// our certificate before identifying itself.
    #[error("certificate refused{}: {reason}", peer_suffix(*peer))]
    Certificate {
        peer: Option<PartyId>,
        reason: String,
    },
    /// Any other TLS failure (handshake, record decryption, alerts).
    #[error("TLS failure on the link with {peer}: {source}")]
    Tls {
        peer: PartyId,
        #[source]
        source: rustls::Error,
    },
    /// A malformed or inconsistent configuration, certificate or key file.
    #[error("configuration error: {message}")]
    Config { message: String },
    /// The peer's hello did not match what this party expects (wrong party index or
    /// mismatched configuration files).
    #[error("protocol error on the link with {peer}: {message}")]
    Protocol { peer: PartyId, message: String },
    /// An operating-system I/O failure.
    #[error("I/O error{}: {context}: {source}", peer_suffix(*peer))]
    Io {
        peer: Option<PartyId>,
        context: String,
        #[source]
        source: io::Error,
    },
}

fn suffix(detail: &Option<String>) -> String {
    match detail {
        Some(d) => format!(" (last error: {d})"),
        None => String::new(),
    }
}

fn peer_suffix(peer: Option<PartyId>) -> String {
    match peer {
        Some(p) => format!(" on the link with {p}"),
        None => String::new(),
    }
}

impl NetError {
    /// The process exit code for every network, certificate and configuration failure, as
    /// fixed by the CLI contract.
    pub const EXIT_CODE: i32 = 2;

    /// The exit code the CLI uses for this error (always [`NetError::EXIT_CODE`]).
    pub fn exit_code(&self) -> i32 {
        Self::EXIT_CODE
    }

    /// The peer this error concerns, if any.
    pub fn peer(&self) -> Option<PartyId> {
        match self {
            NetError::Timeout { peer, .. }
            | NetError::Disconnected { peer }
            | NetError::FrameTooLarge { peer, .. }
            | NetError::Truncated { peer, .. }
            | NetError::Tls { peer, .. }
            | NetError::Protocol { peer, .. } => Some(*peer),
            NetError::Certificate { peer, .. } | NetError::Io { peer, .. } => *peer,
            NetError::Config { .. } => None,
        }
    }

    /// A timeout of any kind.
    pub fn is_timeout(&self) -> bool {
        matches!(self, NetError::Timeout { .. })
    }

    /// The peer went away: a clean or abrupt disconnect, or a frame cut short.
    pub fn is_disconnect(&self) -> bool {
        matches!(
            self,
            NetError::Disconnected { .. } | NetError::Truncated { .. }
        )
    }

    /// A certificate was refused by us or by the peer.
    pub fn is_certificate(&self) -> bool {
        matches!(self, NetError::Certificate { .. })
    }

    /// The configuration (file, certificates, keys) is malformed.
    pub fn is_config(&self) -> bool {
        matches!(self, NetError::Config { .. })
    }

    pub(crate) fn config(message: impl Into<String>) -> NetError {
        NetError::Config {
            message: message.into(),
        }
    }

    pub(crate) fn io(peer: Option<PartyId>, context: impl Into<String>, source: io::Error) -> Self {
        NetError::Io {
            peer,
            context: context.into(),
            source,
        }
    }
}
