//! Sans-IO replicated secret sharing (RSS) for three parties (PROTOCOLS.md §1).
//!
//! * [`PartyId`], [`Direction`]: parties and neighbours on the ring.
//! * [`RssVec`]: one party's replicated shares of a vector; [`deal`] and [`reconstruct`] for a
//!   dealer and for tests; [`local_product`] for the local step of a multiplication.
//! * [`Prss`]: correlated randomness from pairwise PRG keys: random sharings and zero-sharings
//!   without communication; seed commitments for the key agreement.
//!
//! Nothing here does I/O; the engine crate moves the messages. Security model: semi-honest
//! privacy against one party holds for every value produced here; keys are zeroized on drop.

mod party;
mod prss;
mod rss;

pub use party::{Direction, PartyId};
pub use prss::{combine_seeds, commit_seed, prss_from_rng, verify_seed, Prg, PrgKey, Prss};
pub use rss::{deal, local_product, reconstruct, reconstruct_additive, RssVec};
