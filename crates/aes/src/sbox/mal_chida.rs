//! `mal-chida-rec-check`: GF(2^8) inversion by the addition chain of Chida et al. (WAHC'18)
//! with active security (MAESTRO, Morita et al., USENIX Security '25, ePrint 2024/1317;
//! PROTOCOLS.md §4.1 malicious chain, §5.4, §5.6).
//!
//! Online, per layer: the straightforward chain with the engine's plain multiplication
//! (the messages of [`Party::mul`], reshared to the previous party), every product recorded
//! as a `GF(2^8)` triple by the [`Malicious`] model, in place ([`Party::record_in_place`]:
//! operands are written into the record store and read back from it, so the records cost no
//! copies of their own):
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
//! `16 + 8ℓ + 24 + 32` bytes, to prev `16ℓ + 16 + 32` bytes, `ℓ = ⌈log2 L⌉` (from `L = 2^16`
//! on the k-ary first level of `Verify` changes these to `16 + 8 + 8ℓ' + 24 + 32` and
//! `112 + 16ℓ' + 16 + 32`, `ℓ' = ⌈log2 ⌈L/8⌉⌉`). Soundness: a
//! wrong product survives a run of the check with probability at most `(2ℓ + 13)/2^64`, and
//! all segments and runs of a batch of up to `10^6` AES-256 blocks with less than `2^-45`
//! (see [`triskele_engine::verify`]); any inconsistent opening (coins, `ρ`, `σ`, outputs) is caught
//! by the compare-views with the collision resistance of SHA-256. Outputs are opened with the
//! hashed opening and a compare-view before any party returns them.
//!
//! Large batches verify their records in segments while the layers run
//! ([`Party::checkpoint`] after every layer; `triskele bench --verify-segment`):
//! the same check per segment, counted in the finalize phase, with the memory of one segment
//! instead of all records.

use triskele_engine::{EngineError, Malicious, Party, Triples};
use triskele_field::{Gf2p8, LinearMap8};
use triskele_share::RssVec;

use super::{append_mapped, append_range, SboxProtocol};

/// The `mal-chida-rec-check` protocol.
#[derive(Debug, Default)]
pub struct MalChidaRecCheck;

/// Applies a GF(2)-linear map to both components.
fn mapped(x: &RssVec<Gf2p8>, map: &LinearMap8) -> RssVec<Gf2p8> {
    let mut out = RssVec::default();
    append_mapped(&mut out, x, 0..x.len(), map);
    out
}

/// Both components of `x` as slices (a piece of [`Party::mul_covered_parts`]).
fn components(x: &RssVec<Gf2p8>) -> [&[Gf2p8]; 2] {
    [&x.first, &x.second]
}

/// The chain of the table above on `x` (replaced by `x^254`), in three rounds, with the
/// products unrecorded ([`Party::mul_covered`]; the caller checks them itself, as
/// `mal-chida`'s sacrifice does); returns `[x^3, x^15, x^14]`, which with `x` and `x^254`
/// determine every factor of its four products (the others are local maps of them).
pub(crate) fn inversion_chain(
    party: &mut Party<Malicious>,
    x: &mut RssVec<Gf2p8>,
) -> Result<[RssVec<Gf2p8>; 3], EngineError> {
    let n = x.len();
    // Round 1: x^3 = x · x^2.
    let x2 = mapped(x, &LinearMap8::SQUARE);
    let x3 = party.mul_covered(x, &x2)?;
    // Round 2: [x^15, x^14] = [x^12, x^12] · [x^3, x^2], from the pieces in place.
    let x12 = mapped(&x3, &LinearMap8::POW4);
    let RssVec {
        first: mut f,
        second: mut s,
    } = party.mul_covered_parts(&[
        (components(&x12), components(&x3)),
        (components(&x12), components(&x2)),
    ])?;
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
    *x = party.mul_covered(&x240, &x14)?;
    Ok([x3, x15, x14])
}

/// Appends entries `range` of `v` (both components) to `v` itself.
fn append_within(v: &mut RssVec<Gf2p8>, range: core::ops::Range<usize>) {
    v.first.extend_from_within(range.clone());
    v.second.extend_from_within(range);
}

/// The products of entries `at .. at + k` of the store's `x` and `y`, appended to its `z`
/// ([`Party::mul_covered_append`]: the messages of [`Party::mul`]).
fn mul_in_store(
    party: &mut Party<Malicious>,
    st: &mut Triples<Gf2p8>,
    at: usize,
    k: usize,
) -> Result<(), EngineError> {
    let Triples { x, y, z } = st;
    let r = at..at + k;
    party.mul_covered_append(
        [&x.first[r.clone()], &x.second[r.clone()]],
        [&y.first[r.clone()], &y.second[r]],
        z,
    )
}

/// The chain of the table above on `x` (replaced by `x^254`), every product recorded in the
/// order and with the messages of [`Party::mul`], but in place
/// ([`Party::record_in_place`]): each product's operands are written straight into the
/// store (linear maps of earlier entries, or copies of them), its product is appended to the
/// store's `z`, and later rounds read their operands back from there. Only `x` and the
/// output are copied in and out; nothing else is allocated.
fn recorded_chain(party: &mut Party<Malicious>, x: &mut RssVec<Gf2p8>) -> Result<(), EngineError> {
    let n = x.len();
    party.record_in_place::<Gf2p8, _>(|p, st| {
        let b = st.len();
        // Round 1, triple b: (x, x^2, x^3).
        st.x.extend(x);
        append_mapped(&mut st.y, x, 0..n, &LinearMap8::SQUARE);
        mul_in_store(p, st, b, n)?;
        // Round 2, triples b + n (x^12, x^3, x^15) and b + 2n (x^12, x^2, x^14), one message.
        let x3 = b..b + n;
        append_mapped(&mut st.x, &st.z, x3.clone(), &LinearMap8::POW4);
        append_within(&mut st.x, b + n..b + 2 * n);
        append_range(&mut st.y, &st.z, x3);
        append_within(&mut st.y, b..b + n);
        mul_in_store(p, st, b + n, 2 * n)?;
        // Round 3, triple b + 3n: (x^240, x^14, x^254).
        let (x15, x14) = (b + n..b + 2 * n, b + 2 * n..b + 3 * n);
        append_mapped(&mut st.x, &st.z, x15, &LinearMap8::POW16);
        append_range(&mut st.y, &st.z, x14);
        mul_in_store(p, st, b + 3 * n, n)?;
        let out = b + 3 * n..b + 4 * n;
        x.first.copy_from_slice(&st.z.first[out.clone()]);
        x.second.copy_from_slice(&st.z.second[out]);
        Ok(())
    })
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
        recorded_chain(party, x)
    }

    fn finalize(&mut self, party: &mut Party<Malicious>) -> Result<(), EngineError> {
        party.verify_recorded()
    }
}
