//! The three-party engine of Triskele: replicated secret sharing over any field, driven over
//! authenticated channels (PROTOCOLS.md §1).
//!
//! A [`Party`] owns one party's network handle and pairwise PRG streams. It offers input,
//! opening, semi-honest multiplication (Araki et al.), (3,3) additive sharing and resharing,
//! all on vectors with one message per direction per protocol step. The security model is a
//! type parameter ([`SecurityModel`]): the arithmetic is written once and a malicious model
//! records what must be verified before outputs are released.
//!
//! Active security with abort ([`Malicious`], PROTOCOLS.md §5): hashed views and a two-way
//! compare-view ([`Party::compare_view`]), coin tossing ([`Party::coins`]), broadcasts and zero
//! checks by hashing, recorded multiplication triples lifted to `GF(2^64)` (or checked in
//! `F_p`), and Protocol 2 ([`verify`], soundness `(2ℓ+4)/2^64` per run with step-1
//! coefficients drawn from a PRG seeded by tossed coins, `(2ℓ+3)/p` in `F_p`; derived
//! there). A party that aborts sends an abort notice to both
//! neighbours ([`Party::abort`]), so every honest party stops with [`EngineError::Abort`]
//! instead of waiting for a timeout; no output is returned before the compare-view that
//! follows its opening ([`Party::open_output`]).

mod error;
mod measure;
mod model;
mod party;
pub mod verify;

pub use error::{AbortReason, EngineError};
pub use measure::PhaseMeasure;
pub use model::{
    gf2p4_as_check_bytes, set_verify_segment, verify_segment, Chained, CustomSource, Lift,
    Malicious, Recorder, SecurityModel, SemiHonest, Triples, View, DEFAULT_VERIFY_SEGMENT,
    GF2P4_TO_GF2P8, MAX_SEGMENTS, MIN_RUN,
};
pub use party::{check_agreement, Party, ProductPiece, ReshareTo};
pub use triskele_net::Phase;
