//! GF(2^8)-inversion protocols ("S-box protocols", PROTOCOLS.md §4).
//!
//! Every protocol computes one layer of inversions `x -> x^-1` (with `0 -> 0`) on a vector of
//! replicated shares; the AES layer adds the affine part locally. A protocol may need
//! preprocessing for a known number of inversions before the online phase.

use triskele_engine::{EngineError, Party, SecurityModel};
use triskele_field::Gf2p8;
use triskele_share::RssVec;

pub mod chida;

/// One family of GF(2^8)-inversion protocols.
pub trait SboxProtocol<M: SecurityModel>: Send {
    /// Input-independent preprocessing for `n` inversions (default: none needed).
    fn preprocess(&mut self, party: &mut Party<M>, n: usize) -> Result<(), EngineError> {
        let _ = (party, n);
        Ok(())
    }

    /// Replaces every shared `x` by `x^-1` (`0^-1 = 0`). All elements form one layer.
    fn invert(&mut self, party: &mut Party<M>, x: &mut RssVec<Gf2p8>) -> Result<(), EngineError>;

    /// Deferred checks before outputs are released (default: none).
    fn finalize(&mut self, party: &mut Party<M>) -> Result<(), EngineError> {
        let _ = party;
        Ok(())
    }
}
