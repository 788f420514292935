//! The engine's error type.

use triskele_field::FieldError;
use triskele_net::NetError;
use triskele_share::PartyId;

/// Why a malicious-security check stopped the protocol.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum AbortReason {
    /// A peer's opened commitment did not match (key agreement or coin tossing).
    #[error("commitment from {peer} does not open correctly")]
    BadCommitment { peer: PartyId },
    /// The hashed views of two parties differ.
    #[error("view mismatch with {peer}")]
    ViewMismatch { peer: PartyId },
    /// A batched multiplication check failed.
    #[error("multiplication check failed")]
    MultiplicationCheck,
    /// A peer sent a message that is not a valid encoding or has the wrong length.
    #[error("malformed message from {peer}")]
    MalformedMessage { peer: PartyId },
    /// A neighbour announced that it aborted.
    #[error("{peer} aborted")]
    PeerAborted { peer: PartyId },
}

/// Errors of the three-party engine.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum EngineError {
    /// Network, TLS, configuration or timeout failure.
    #[error(transparent)]
    Net(#[from] NetError),
    /// A peer sent bytes that are not a valid encoding of the expected elements.
    #[error("malformed message from {peer}: {source}")]
    Decode {
        peer: PartyId,
        #[source]
        source: FieldError,
    },
    /// A peer sent a message of the wrong size for this protocol step.
    #[error("message from {peer} has {got} bytes, expected {expected}")]
    MessageLength {
        peer: PartyId,
        expected: usize,
        got: usize,
    },
    /// Inputs of mismatched lengths were passed to a protocol step.
    #[error("length mismatch: expected {expected}, got {got}")]
    LengthMismatch { expected: usize, got: usize },
    /// The parties disagree on the run's parameters (protocol, batch size, ...).
    #[error("parameters differ from {peer}'s: {what}")]
    ParameterMismatch { peer: PartyId, what: String },
    /// A protocol step needs more preprocessed material than the preprocessing phase made.
    #[error("preprocessing exhausted: {needed} values needed, {available} available")]
    PreprocessingExhausted { needed: usize, available: usize },
    /// The requested combination of protocol and parameters is not supported.
    #[error("unsupported: {0}")]
    Unsupported(String),
    /// A security check failed; no output may be released.
    #[error("security abort: {0}")]
    Abort(AbortReason),
}

impl EngineError {
    /// `Ok` if `available` preprocessed items cover the `needed` ones, else
    /// [`EngineError::PreprocessingExhausted`].
    pub fn ensure_preprocessed(needed: usize, available: usize) -> Result<(), EngineError> {
        if needed > available {
            return Err(EngineError::PreprocessingExhausted { needed, available });
        }
        Ok(())
    }

    /// True for a security abort (CLI exit code 3).
    pub fn is_abort(&self) -> bool {
        matches!(self, EngineError::Abort(_))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ensure_preprocessed_compares_needed_with_available() {
        assert!(EngineError::ensure_preprocessed(0, 0).is_ok());
        assert!(EngineError::ensure_preprocessed(5, 5).is_ok());
        assert!(matches!(
            EngineError::ensure_preprocessed(6, 5),
            Err(EngineError::PreprocessingExhausted {
                needed: 6,
                available: 5
            })
        ));
    }
}
