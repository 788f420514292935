//! `mal-chida-rec-check`: GF(2^8) inversion by the addition chain of Chida et al. (WAHC'18)
//! with active security (MAESTRO, Morita et al., USENIX Security '25, ePrint 2024/1317;
//! PROTOCOLS.md §4.1 malicious chain, §5.4, §5.6).
//!
//! Online, per layer: the straightforward chain with the engine's plain multiplication
//! (the messages of [`Party::mul`], reshared to the previous party), every product recorded
//! as a `GF(2^8)` triple for the [`Malicious`] model's check. The records are the layer's own
//! vectors (`ChainRelations`: `x`, the local maps `x^2`, `x^12`, `x^240` and the products,
//! which `Verify` reads in place), not copies of each product's operands:
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

use std::sync::Arc;

use triskele_engine::verify::{ByteRows, ByteSource};
use triskele_engine::{EngineError, Malicious, Party, SecurityModel};
use triskele_field::{Gf2p8, LinearMap8};
use triskele_share::RssVec;

use super::ohv16::relation_runs;
use super::{append_mapped, SboxProtocol};

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

/// The shared values of one layer's chains besides its input and output, in three rounds
/// ([`inversion_chain`]): the factors and products of its four products.
pub(crate) struct ChainValues {
    pub(crate) x2: RssVec<Gf2p8>,
    pub(crate) x3: RssVec<Gf2p8>,
    pub(crate) x12: RssVec<Gf2p8>,
    pub(crate) x15: RssVec<Gf2p8>,
    pub(crate) x14: RssVec<Gf2p8>,
    pub(crate) x240: RssVec<Gf2p8>,
}

/// The chain of the table above on `x` (replaced by `x^254`), in three rounds, with the
/// products unrecorded ([`Party::mul_covered`]; the caller checks them itself, as
/// `mal-chida`'s sacrifice does, or records them, as `mal-chida-rec-check` does); returns the
/// values between input and output.
pub(crate) fn inversion_chain(
    party: &mut Party<Malicious>,
    x: &mut RssVec<Gf2p8>,
) -> Result<ChainValues, EngineError> {
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
    Ok(ChainValues {
        x2,
        x3,
        x12,
        x15,
        x14,
        x240,
    })
}

/// The stored vector of each part (`X`, `Y`, `Z`) of the chain's four relations
/// ([`ChainRelations`], the table above).
const CHAIN_PARTS: [[usize; 3]; 4] = [
    [X, X2, X3],       // x^3 = x · x^2
    [X12, X3, X15],    // x^15 = x^12 · x^3
    [X12, X2, X14],    // x^14 = x^12 · x^2
    [X240, X14, X254], // x^254 = x^240 · x^14
];

/// Indices of the stored vectors of [`ChainRelations`].
const X: usize = 0;
const X2: usize = 1;
const X3: usize = 2;
const X12: usize = 3;
const X15: usize = 4;
const X14: usize = 5;
const X240: usize = 6;
const X254: usize = 7;

/// The four products of one layer's chains (the table above), kept as the eight vectors
/// the layer computed anyway (`x` to `x^254`: 16 bytes per inversion and party, against 24
/// for four `GF(2^8)` triples copied into the record store), which `Verify` reads in place.
/// Relation `k` of inversion `j` is triple `k n + j`, the order in which [`Party::mul`]
/// would record them.
struct ChainRelations {
    /// The vectors [`X`] .. [`X254`] (`n` each).
    v: [RssVec<Gf2p8>; 8],
}

impl ChainRelations {
    fn n(&self) -> usize {
        self.v[X].len()
    }

    /// Component `c` (0: first, 1: second) of stored vector `k`.
    fn component(&self, k: usize, c: usize) -> &[Gf2p8] {
        let v = &self.v[k];
        if c == 0 {
            &v.first
        } else {
            &v.second
        }
    }
}

impl ByteRows for ChainRelations {
    fn len(&self) -> usize {
        4 * self.n()
    }

    fn load(&self, part: usize, start: usize, out: &mut [u8]) {
        let (c, p) = (part % 2, part / 2);
        for (k, r, at) in relation_runs(4, self.n(), start, out.len()) {
            let src = &self.component(CHAIN_PARTS[k][p], c)[r.clone()];
            out[at..at + r.len()].copy_from_slice(Gf2p8::slice_as_bytes(src));
        }
    }

    fn bytes(&self, part: usize, start: usize, len: usize) -> Option<&[u8]> {
        let n = self.n();
        let (k, j) = (start.checked_div(n)?, start % n);
        let src = *CHAIN_PARTS.get(k)?.get(part / 2)?;
        let v = self.component(src, part % 2);
        v.get(j..j.checked_add(len)?).map(Gf2p8::slice_as_bytes)
    }

    /// Eight vectors of both components.
    fn stored_bytes(&self) -> Option<usize> {
        Some(16 * self.n())
    }
}

/// The chain of the table above on `x` (replaced by `x^254`), with the messages of
/// [`Party::mul`], its four products recorded as [`ChainRelations`].
fn recorded_chain(party: &mut Party<Malicious>, x: &mut RssVec<Gf2p8>) -> Result<(), EngineError> {
    let input = x.clone();
    let c = inversion_chain(party, x)?;
    let v = [input, c.x2, c.x3, c.x12, c.x15, c.x14, c.x240, x.clone()];
    party
        .model()
        .record_source(Arc::new(ByteSource(ChainRelations { v })));
    Ok(())
}

impl SboxProtocol<Malicious> for MalChidaRecCheck {
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

#[cfg(test)]
mod tests {
    use super::*;

    /// The exponents of `X`, `Y` and `Z` in each of the four relations (the table above).
    const EXPONENTS: [[u32; 3]; 4] = [[1, 2, 3], [12, 3, 15], [12, 2, 14], [240, 14, 254]];

    /// Both components of `x^e` for the two vectors of inputs (one per component, so that a
    /// mixed-up component shows).
    fn powers(inputs: &[Vec<Gf2p8>; 2], e: u32) -> RssVec<Gf2p8> {
        let [a, b] = inputs
            .each_ref()
            .map(|v| v.iter().map(|x| x.pow(e)).collect());
        RssVec {
            first: a,
            second: b,
        }
    }

    /// Every part of every relation, read by `load` (also across relations) and in place,
    /// is the chain's value it stands for: `x`, `x^2`, `x^3`, `x^12`, ... as the table says,
    /// so that each relation is one of the chain's four products.
    #[test]
    fn chain_relations_are_the_four_products_of_the_chain() {
        let n = 37;
        let inputs = [
            (0..n).map(|i| Gf2p8((7 * i + 3) as u8)).collect::<Vec<_>>(),
            (0..n)
                .map(|i| Gf2p8((11 * i + 200) as u8))
                .collect::<Vec<_>>(),
        ];
        let v = [1, 2, 3, 12, 15, 14, 240, 254].map(|e| powers(&inputs, e));
        let rel = ChainRelations { v };
        assert_eq!(ByteRows::len(&rel), 4 * n);
        assert_eq!(rel.stored_bytes(), Some(16 * n));
        for (k, exps) in EXPONENTS.iter().enumerate() {
            assert_eq!((exps[0] + exps[1]) % 255, exps[2]);
            for (p, &e) in exps.iter().enumerate() {
                for (c, input) in inputs.iter().enumerate() {
                    let want: Vec<u8> = input.iter().map(|x| x.pow(e).0).collect();
                    let mut got = vec![0u8; n];
                    rel.load(2 * p + c, k * n, &mut got);
                    assert_eq!(got, want, "relation {k}, part {p}, component {c}");
                    assert_eq!(rel.bytes(2 * p + c, k * n + 5, 9), Some(&want[5..14]));
                }
            }
        }
        // A range across the boundary of relations 1 and 2: the end of one, then the other.
        let mut got = vec![0u8; 10];
        rel.load(0, 2 * n - 4, &mut got);
        let x12: Vec<u8> = inputs[0].iter().map(|x| x.pow(12).0).collect();
        assert_eq!(&got[..4], &x12[n - 4..]);
        assert_eq!(&got[4..], &x12[..6]);
        assert_eq!(rel.bytes(0, 2 * n - 4, 10), None);
        assert_eq!(rel.bytes(0, 4 * n - 1, 2), None);
    }
}
