//! `mal-chida-rec-check`: GF(2^8) inversion by the addition chain of Chida et al. (WAHC'18)
//! with active security (MAESTRO, Morita et al., USENIX Security '25, ePrint 2024/1317;
//! PROTOCOLS.md §4.1 malicious chain, §5.4, §5.6).
//!
//! Online, per layer: the straightforward chain with the engine's plain multiplication
//! (the messages of [`Party::mul`], reshared to the previous party), every product recorded
//! as a `GF(2^8)` triple for the [`Malicious`] model's check. The records are the layer's own
//! vectors (`CHAIN_PARTS` over `super::stored`: `x` and the products, which `Verify` reads in
//! place, the factors `x^2`, `x^12`, `x^240` as their local maps applied as it reads), not
//! copies of each product's operands:
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
//! lifted by `E_8` to `GF(2^64)`, then a compare-view ([`Party::verify_recorded`]). A layer of
//! more than `2^15` inversions is laid out in blocks of `2^15`, the last one filled up with zero
//! triples where that adds at most a sixteenth (`super::stored`, "Aligned layout"; 10,000
//! blocks: 163,840 instead of 160,000 per layer; `L` counts them), so that the check's first level works each of
//! the shared factors `x^12` and `x^2` once. Messages: to next
//! `16 + 8ℓ + 24 + 32` bytes, to prev `16ℓ + 16 + 32` bytes, `ℓ = ⌈log2 L⌉` (from `L = 2^16`
//! on the k-ary first level of `Verify`, which folds these bytes by 32, and its steps of eight
//! for the last twelve levels change them; [`triskele_engine::verify`], "Communication").
//! Soundness: a wrong product survives a run of the check with probability at most
//! `(2ℓ + 88)/2^64`, and all segments and runs of a batch of up to `10^6` AES-256 blocks with
//! less than `2^-43`
//! (see [`triskele_engine::verify`]); any inconsistent opening (coins, `ρ`, `σ`, outputs) is caught
//! by the compare-views with the collision resistance of BLAKE3 (the views' hash). Outputs are
//! opened with the hashed opening and a compare-view before any party returns them.
//!
//! Large batches verify their records in segments while the layers run
//! ([`Party::checkpoint`] after every layer; `triskele bench --verify-segment`):
//! the same check per segment, counted in the finalize phase, with the memory of one segment
//! instead of all records.

use triskele_engine::{EngineError, Malicious, Party};
use triskele_field::{Gf2p8, LinearMap8};
use triskele_share::RssVec;

use super::chida::{mapped_mul, parts, LocalProduct, Piece};
use super::stored::{part, At, StoredRelations};
use super::SboxProtocol;

/// The `mal-chida-rec-check` protocol.
#[derive(Debug, Default)]
pub struct MalChidaRecCheck;

/// The shared values of one layer's chains that its four products are made of, but its
/// output ([`inversion_chain`]): the input and the products; the other factors (`x^2`,
/// `x^12`, `x^240`) are local maps of these ([`CHAIN_FACTORS`]).
pub(crate) struct ChainValues {
    /// The input `x` (moved out of the caller's vector, which then holds `x^254`).
    pub(crate) x: RssVec<Gf2p8>,
    pub(crate) x3: RssVec<Gf2p8>,
    /// `x^15 ‖ x^14` (`2 n` entries): round 2's product as it came, not split (splitting it
    /// copied `x^14`, a pass over fresh memory per layer).
    pub(crate) x15_14: RssVec<Gf2p8>,
}

impl ChainValues {
    /// `x^15` and `x^14` as vectors of their own (`x^14` copied out).
    pub(crate) fn split_products(self) -> [RssVec<Gf2p8>; 4] {
        let ChainValues { x, x3, mut x15_14 } = self;
        let n = x.len();
        let x14 = RssVec {
            first: x15_14.first.split_off(n),
            second: x15_14.second.split_off(n),
        };
        [x, x3, x15_14, x14]
    }
}

/// The chain of the table above on `x` (replaced by `x^254`), in three rounds, with the
/// products unrecorded ([`Party::mul_covered`]; the caller checks them itself, as
/// `mal-chida`'s sacrifice does, or records them, as `mal-chida-rec-check` does); returns the
/// input and the products but the output. The local maps are dropped as soon as their
/// product is formed.
pub(crate) fn inversion_chain(
    party: &mut Party<Malicious>,
    x: &mut RssVec<Gf2p8>,
) -> Result<ChainValues, EngineError> {
    let n = x.len();
    let (sq, p4, p16) = (
        Some(&LinearMap8::SQUARE),
        Some(&LinearMap8::POW4),
        Some(&LinearMap8::POW16),
    );
    // The messages of `Party::mul_covered` (Araki's local products, reshared to the previous
    // party), of maps of the shared values: `x^2`, `x^12`, `x^240` are formed per chunk, not
    // stored.
    let mut product = |pieces: &[Piece<'_>]| mapped_mul(party, pieces, LocalProduct::Araki);
    // Round 1: x^3 = x · x^2.
    let x3 = product(&[(parts(x), None, parts(x), sq)])?;
    // Round 2: [x^15, x^14] = [x^12, x^12] · [x^3, x^2], one message.
    let x15_14 = product(&[
        (parts(&x3), p4, parts(&x3), None),
        (parts(&x3), p4, parts(x), sq),
    ])?;
    // Round 3: x^254 = x^240 · x^14, from the halves in place.
    let (x15_1, x14_1) = x15_14.first.split_at(n);
    let (x15_2, x14_2) = x15_14.second.split_at(n);
    let x254 = product(&[((x15_1, x15_2), p16, (x14_1, x14_2), None)])?;
    let input = core::mem::replace(x, x254);
    Ok(ChainValues {
        x: input,
        x3,
        x15_14,
    })
}

/// The chain's four products (the table above) by the five values `mal-chida` keeps of a layer
/// (`x`, `x^3`, `x^15`, `x^14`, `x^254`, indexed by the `CHAIN_*` constants): for product `k`,
/// its factors and result as a stored value and the local map applied to it (`None`: the
/// value itself).
pub(crate) const CHAIN_FACTORS: [[(usize, Option<&LinearMap8>); 3]; 4] = [
    [
        (CHAIN_X, None),
        (CHAIN_X, Some(&LinearMap8::SQUARE)),
        (CHAIN_X3, None),
    ],
    [
        (CHAIN_X3, Some(&LinearMap8::POW4)),
        (CHAIN_X3, None),
        (CHAIN_X15, None),
    ],
    [
        (CHAIN_X3, Some(&LinearMap8::POW4)),
        (CHAIN_X, Some(&LinearMap8::SQUARE)),
        (CHAIN_X14, None),
    ],
    [
        (CHAIN_X15, Some(&LinearMap8::POW16)),
        (CHAIN_X14, None),
        (CHAIN_X254, None),
    ],
];

/// Indices of the values of [`CHAIN_FACTORS`].
pub(crate) const CHAIN_X: usize = 0;
pub(crate) const CHAIN_X3: usize = 1;
pub(crate) const CHAIN_X15: usize = 2;
pub(crate) const CHAIN_X14: usize = 3;
pub(crate) const CHAIN_X254: usize = 4;

/// The four products of one layer's `n` chains (the table above) over the four vectors
/// `x`, `x^3`, `x^15 ‖ x^14`, `x^254` (the five values [`CHAIN_FACTORS`] names, `x^14` at
/// offset `n` of the third), the other factors as their maps (10 bytes per inversion and
/// party, against 16 for all eight values of the chain and 24 for four `GF(2^8)` triples
/// copied into the record store), which `Verify` reads in place, in blocks of inversions
/// (`super::stored`): with `n` up to `stored::BLOCK` inversions, relation `k` of inversion `j`
/// is triple `k n + j`, the order in which [`Party::mul`] would record them.
fn chain_parts(n: usize) -> [[At; 3]; 4] {
    CHAIN_FACTORS.map(|relation| {
        relation.map(|(value, map)| {
            let (vector, offset) = match value {
                CHAIN_X14 => (CHAIN_X15, n),
                CHAIN_X254 => (CHAIN_X254 - 1, 0),
                v => (v, 0),
            };
            At {
                map,
                ..part(vector, offset, None)
            }
        })
    })
}

/// The chain of the table above on `x` (replaced by `x^254`), with the messages of
/// [`Party::mul`], its four products recorded as the chain's vectors ([`chain_parts`]).
fn recorded_chain(party: &mut Party<Malicious>, x: &mut RssVec<Gf2p8>) -> Result<(), EngineError> {
    let n = x.len();
    let c = inversion_chain(party, x)?;
    let v = vec![c.x, c.x3, c.x15_14, x.clone()];
    StoredRelations::new(n, v, &chain_parts(n))?
        .aligned()
        .record(party);
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
    use triskele_engine::verify::ByteRows;

    /// The exponents of `X`, `Y` and `Z` in each of the four relations (the table above).
    const EXPONENTS: [[u32; 3]; 4] = [[1, 2, 3], [12, 3, 15], [12, 2, 14], [240, 14, 254]];

    /// Every part of every relation is the chain's value it stands for (`x`, `x^2`, `x^3`,
    /// `x^12`, ... as the table says), so that each relation is one of the chain's four
    /// products.
    #[test]
    fn chain_parts_are_the_four_products_of_the_chain() {
        let n = 37;
        let inputs = [
            (0..n).map(|i| Gf2p8((7 * i + 3) as u8)).collect::<Vec<_>>(),
            (0..n)
                .map(|i| Gf2p8((11 * i + 200) as u8))
                .collect::<Vec<_>>(),
        ];
        let powers = |e: u32| {
            let [first, second] = inputs
                .each_ref()
                .map(|v| v.iter().map(|x| x.pow(e)).collect());
            RssVec { first, second }
        };
        let mut v = Vec::from([1, 3, 15, 14, 254].map(powers));
        // As `recorded_chain` keeps them: `x^15 ‖ x^14` in one vector.
        let x14 = v.remove(CHAIN_X14);
        v[CHAIN_X15].extend(&x14);
        let rel = StoredRelations::new(n, v, &chain_parts(n)).unwrap();
        assert_eq!(ByteRows::len(&rel), 4 * n);
        for (k, exps) in EXPONENTS.iter().enumerate() {
            assert_eq!((exps[0] + exps[1]) % 255, exps[2]);
            for (p, &e) in exps.iter().enumerate() {
                for (c, input) in inputs.iter().enumerate() {
                    let want: Vec<u8> = input.iter().map(|x| x.pow(e).0).collect();
                    let mut got = vec![0u8; n];
                    rel.load(2 * p + c, k * n, &mut got);
                    assert_eq!(got, want, "relation {k}, part {p}, component {c}");
                }
            }
        }
    }

    /// The factors of the five kept values are the same four products.
    #[test]
    fn chain_factors_are_the_four_products_of_the_chain() {
        let kept = [1, 3, 15, 14, 254];
        for (k, exps) in EXPONENTS.iter().enumerate() {
            for (p, &e) in exps.iter().enumerate() {
                let (src, map) = CHAIN_FACTORS[k][p];
                for x in (0..=255u8).map(Gf2p8) {
                    let v = x.pow(kept[src]);
                    let got = map.map_or(v, |m| m.apply(v));
                    assert_eq!(got, x.pow(e), "product {k}, part {p}, x = {x:?}");
                }
            }
        }
    }
}
