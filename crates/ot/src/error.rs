//! The crate's error type.

use thiserror::Error;

/// Why a protocol run was aborted on purpose: the peer sent something that
/// an honest peer never sends.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum AbortReason {
    /// The receiver's reconciled key matches neither of the sender's key
    /// confirmation hashes (or matches both).
    KeyConfirmation,
    /// An opening does not match the commitment sent earlier.
    CommitmentMismatch,
    /// The receiver's challenge response is wrong.
    ChallengeResponse,
    /// The two branches of the sender's message are not consistent.
    InconsistentBranches,
    /// A group element is the identity or otherwise degenerate.
    DegeneratePoint,
    /// An OT extension consistency check failed.
    ConsistencyCheck,
}

impl core::fmt::Display for AbortReason {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        let s = match self {
            AbortReason::KeyConfirmation => "key confirmation failed",
            AbortReason::CommitmentMismatch => "opening does not match commitment",
            AbortReason::ChallengeResponse => "wrong challenge response",
            AbortReason::InconsistentBranches => "sender's branches are inconsistent",
            AbortReason::DegeneratePoint => "degenerate group element",
            AbortReason::ConsistencyCheck => "OT extension consistency check failed",
        };
        f.write_str(s)
    }
}

/// Errors of the `triskele-ot` crate.
#[derive(Debug, Error)]
#[non_exhaustive]
pub enum Error {
    /// A message or field has the wrong length.
    #[error("{what}: expected {expected} bytes, got {got}")]
    LengthMismatch {
        /// What was being decoded.
        what: &'static str,
        /// Expected length in bytes.
        expected: usize,
        /// Received length in bytes.
        got: usize,
    },
    /// A packed polynomial coefficient is not reduced modulo q.
    #[error("{what}: coefficient {index} is {value}, not below q = {q}")]
    CoefficientOutOfRange {
        /// What was being decoded.
        what: &'static str,
        /// Index of the offending coefficient.
        index: usize,
        /// Its value.
        value: u32,
        /// The modulus.
        q: u32,
    },
    /// A field of a message is malformed (bad encoding, padding bits set, ...).
    #[error("malformed {what}: {detail}")]
    Malformed {
        /// What was being decoded.
        what: &'static str,
        /// What is wrong with it.
        detail: &'static str,
    },
    /// The peer deviated from the protocol; the run was aborted.
    #[error("protocol aborted: {0}")]
    Abort(AbortReason),
    /// A caller-supplied argument is invalid.
    #[error("invalid argument: {0}")]
    InvalidArgument(&'static str),
    /// The channel to the peer failed or was closed.
    #[error("channel error: {0}")]
    Channel(&'static str),
    /// The transport to the peer failed (network error, timeout), as reported by it.
    #[error("transport: {0}")]
    Transport(String),
    /// The two parties were started with different parameters.
    #[error("the peer runs different parameters: {0}")]
    ParameterMismatch(&'static str),
    /// The operating system's randomness source failed.
    #[error("randomness source failed")]
    Randomness,
}

/// Result alias of this crate.
pub type Result<T, E = Error> = core::result::Result<T, E>;
