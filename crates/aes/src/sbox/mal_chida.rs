//! `mal-chida-rec-check`: GF(2^8) inversion by the addition chain of Chida et al. (WAHC'18)
//! with active security (MAESTRO, Morita et al., USENIX Security '25, ePrint 2024/1317;
//! PROTOCOLS.md §4.1 malicious chain, §5.4, §5.6).
//!
//! Online, per layer: the straightforward chain with the engine's plain multiplication
//! ([`Party::mul`], the same code as the semi-honest engine, reshared to the previous party),
//! every product recorded as a `GF(2^8)` triple by the [`Malicious`] model:
//!
//! | round | products |
//! |---|---|
//! | 1 | `x^3 = x · x^2` |
//! | 2 | `x^15 = x^12 · x^3`, `x^14 = x^12 · x^2` (one message) |
//! | 3 | `x^254 = x^240 · x^14` |
//!
//! Squarings and Frobenius powers (`x^2`, `x^12 = (x^3)^4`, `x^240 = (x^15)^16`) are local.
//! Cost per inversion and party: 4 bytes to `P_{i-1}`, 3 rounds (AES-128: 640 B/block,
//! 30 rounds). No preprocessing.
//!
//! Finalize: Protocol 2 `Verify` over the `L = 4 ·` (number of inversions) recorded triples,
//! lifted by `E_8` to `GF(2^64)`, then a compare-view ([`Party::verify_recorded`]): to next
//! `16 + 8ℓ + 24 + 32` bytes, to prev `16ℓ + 16 + 32` bytes, `ℓ = ⌈log2 L⌉`. Soundness: a
//! wrong product survives with probability at most `(2ℓ + 3)/2^64` (see
//! [`triskele_engine::verify`]); any inconsistent opening (coins, `ρ`, `σ`, outputs) is caught
//! by the compare-views with the collision resistance of SHA-256. Outputs are opened with the
//! hashed opening and a compare-view before any party returns them.
//!
//! Large batches verify their records in segments while the layers run
//! ([`Party::checkpoint`] after every product and layer; `triskele bench --verify-segment`):
//! the same check per segment, counted in the finalize phase, with the memory of one segment
//! instead of all records.

use triskele_engine::{EngineError, Malicious, Party};
use triskele_field::{Gf2p8, LinearMap8};
use triskele_share::RssVec;

use super::SboxProtocol;

/// The `mal-chida-rec-check` protocol.
#[derive(Debug, Default)]
pub struct MalChidaRecCheck;

/// Applies a GF(2)-linear map to both components.
fn mapped(x: &RssVec<Gf2p8>, map: &LinearMap8) -> RssVec<Gf2p8> {
    let mut out = RssVec::zeros(x.len());
    map.apply_slice(&x.first, &mut out.first);
    map.apply_slice(&x.second, &mut out.second);
    out
}

fn concat(a: &RssVec<Gf2p8>, b: &RssVec<Gf2p8>) -> RssVec<Gf2p8> {
    let mut out = a.clone();
    out.extend(b);
    out
}

/// How [`inversion_chain`] multiplies.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Record {
    /// [`Party::mul`]: every product recorded by the model (checked by Protocol 2).
    Each,
    /// [`Party::mul_covered`]: nothing recorded; the caller checks the products itself from
    /// the chain's values (`mal-chida`'s sacrifice).
    Covered,
}

/// The chain of the table above on `x` (replaced by `x^254`), in three rounds; returns
/// `[x^3, x^15, x^14]`, which with `x` and `x^254` determine every factor of its four products
/// (the others are local maps of them).
pub(crate) fn inversion_chain(
    party: &mut Party<Malicious>,
    x: &mut RssVec<Gf2p8>,
    record: Record,
) -> Result<[RssVec<Gf2p8>; 3], EngineError> {
    let mul = |p: &mut Party<Malicious>, a: &RssVec<Gf2p8>, b: &RssVec<Gf2p8>| match record {
        Record::Each => p.mul(a, b),
        Record::Covered => p.mul_covered(a, b),
    };
    let n = x.len();
    // Round 1: x^3 = x · x^2.
    let x2 = mapped(x, &LinearMap8::SQUARE);
    let x3 = mul(party, x, &x2)?;
    // Round 2: [x^15, x^14] = [x^12, x^12] · [x^3, x^2].
    let x12 = mapped(&x3, &LinearMap8::POW4);
    let RssVec {
        first: mut f,
        second: mut s,
    } = mul(party, &concat(&x12, &x12), &concat(&x3, &x2))?;
    // The upper halves move out (one copy); the lower halves stay in place.
    let x14 = RssVec {
        first: f.split_off(n),
        second: s.split_off(n),
    };
    let x15 = RssVec {
        first: f,
        second: s,
    };
    // Round 3: x^254 = x^240 · x^14.
    let x240 = mapped(&x15, &LinearMap8::POW16);
    *x = mul(party, &x240, &x14)?;
    Ok([x3, x15, x14])
}

impl SboxProtocol<Malicious> for MalChidaRecCheck {
    /// No preprocessing; reserves the recorder's room for the `4 n` products.
    fn preprocess(&mut self, party: &mut Party<Malicious>, n: usize) -> Result<(), EngineError> {
        party.model().reserve::<Gf2p8>(4 * n);
        Ok(())
    }

    fn invert(
        &mut self,
        party: &mut Party<Malicious>,
        x: &mut RssVec<Gf2p8>,
    ) -> Result<(), EngineError> {
        inversion_chain(party, x, Record::Each).map(drop)
    }

    fn finalize(&mut self, party: &mut Party<Malicious>) -> Result<(), EngineError> {
        party.verify_recorded()
    }
}
