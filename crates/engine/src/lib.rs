//! The three-party engine of Triskele: replicated secret sharing over any field, driven over
//! authenticated channels (PROTOCOLS.md §1).
//!
//! A [`Party`] owns one party's network handle and pairwise PRG streams. It offers input,
//! opening, semi-honest multiplication (Araki et al.), (3,3) additive sharing and resharing,
//! all on vectors with one message per direction per protocol step. The security model is a
//! type parameter ([`SecurityModel`]): the arithmetic is written once and a malicious model
//! records what must be verified before outputs are released.

mod error;
mod model;
mod party;

pub use error::{AbortReason, EngineError};
pub use model::{SecurityModel, SemiHonest};
pub use party::{Party, ReshareTo};
pub use triskele_net::Phase;
