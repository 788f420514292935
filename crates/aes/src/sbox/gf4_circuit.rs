//! `gf4-circuit`: GF(2^8) inversion through the tower field `GF((2^4)^2)` — Protocol 3 of
//! MAESTRO (Morita et al., USENIX Security '25, ePrint 2024/1317) with the `GF(2^4)` inversion
//! computed as a circuit `d^-1 = d^2 · d^4 · d^8`; PROTOCOLS.md §4.2.
//!
//! 1. Local: `(a_h, a_l) = φ(x)` (the WOL isomorphism, component-wise).
//! 2. Round 1: `p = a_h · a_l`; local norm `d = λ a_h^2 + p + a_l^2` and its squares.
//! 3. Round 2: `d^6 = d^2 · d^4`. Round 3: `d^-1 = d^14 = d^6 · d^8`.
//! 4. Round 4 (both products in one message): `b_h = a_h · d^-1`, `b_l = (a_h + a_l) · d^-1`.
//! 5. Local: `x^-1 = φ^-1(b_h Y + b_l)`.
//!
//! Every product is the engine's semi-honest multiplication over [`Gf2p4`] (Araki et al.,
//! reshared to the previous party). No preprocessing. Cost per inversion and party: 5
//! `GF(2^4)` elements = 2.5 bytes to the previous party, 4 rounds (AES-128: 400 B/block,
//! 40 rounds).
//!
//! # Active security (PROTOCOLS.md §5.5, §5.6)
//!
//! The same code runs under [`Malicious`]; the online messages are identical and the
//! finalize phase is Protocol 2 `Verify` over the recorded triples plus a compare-view
//! ([`Party::verify_recorded`]).
//!
//! * `mal-gf4-circuit` ([`Gf4Circuit`]): the engine records all 5 products as `GF(2^4)`
//!   triples (lifted by `E_4`): `L = 5 ·` inversions (AES-128: 800 per block).
//! * `mal-gf4-circuit-opt`, CSV `mal-gf4-circuit-gf4p4` ([`Gf4CircuitGf4p4`]): the engine
//!   records `d^6 = d^2 · d^4` and `d^-1 = d^6 · d^8`; the round-1 and round-4 products are
//!   computed with [`Party::mul_covered`] and instead one relation over
//!   `GF(2^16) = GF(2^4)[α]/(α^4+α^2+uα+u^2)` is recorded,
//!   `(a_h + α a_l) · (a_l + α d^-1) = p + α (b_h + a_l^2) + α^2 (b_l + b_h)`,
//!   embedded into `GF(2^64)` by `φ_0`, `α ↦ A` (`triskele_field::embed::gf4p4_slice`). The
//!   α-degree is at most 2, so no reduction occurs and it holds iff `p = a_h a_l`,
//!   `b_h = a_h d^-1` and `b_l + b_h = a_l d^-1` all hold; with the two plain triples every
//!   product of the circuit is checked. `L = 3 ·` inversions (AES-128: 480 per block).
//!   The relation is recorded already embedded, as a `GF(2^64)` triple (48 bytes per
//!   inversion and party, against 6 bytes per `GF(2^4)` triple); recording its seven nibbles
//!   and embedding them while `Verify` streams would save that memory.
//!
//! Soundness and finalize communication are those of [`triskele_engine::verify`]: a wrong
//! product survives with probability at most `(2ℓ + 3)/2^64`, `ℓ = ⌈log2 L⌉`.

use triskele_engine::{EngineError, Malicious, Party, SecurityModel, SemiHonest};
use triskele_field::embed::gf4p4_slice;
use triskele_field::{Gf2p4, Gf2p64, Gf2p8};
use triskele_share::RssVec;

use super::SboxProtocol;
use crate::sbox::tower::{from_halves, nibble_map, split_tower, NibbleTable};

/// The `gf4-circuit` protocol; under [`Malicious`] it is `mal-gf4-circuit` (all five products
/// recorded).
#[derive(Debug, Default)]
pub struct Gf4Circuit;

/// `mal-gf4-circuit-opt`: the same circuit, checked with two plain triples and one gf4p4
/// triple per inversion (see the module documentation).
#[derive(Debug, Default)]
pub struct Gf4CircuitGf4p4;

/// What a malicious run records (PROTOCOLS.md §5.5).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Record {
    /// Every product as a `GF(2^4)` triple.
    Products,
    /// `d^2 d^4` and `d^6 d^8` as `GF(2^4)` triples, the other three in one gf4p4 triple.
    Gf4p4,
}

const SQUARE: NibbleTable = NibbleTable::SQUARE;
const LAMBDA_SQUARE: NibbleTable = NibbleTable::LAMBDA_SQUARE;

impl SboxProtocol<SemiHonest> for Gf4Circuit {
    fn invert(
        &mut self,
        party: &mut Party<SemiHonest>,
        x: &mut RssVec<Gf2p8>,
    ) -> Result<(), EngineError> {
        invert(party, x, Record::Products)
    }
}

impl SboxProtocol<Malicious> for Gf4Circuit {
    /// No preprocessing; reserves the recorder's room for the `5 n` products.
    fn preprocess(&mut self, party: &mut Party<Malicious>, n: usize) -> Result<(), EngineError> {
        party.model().reserve::<Gf2p4>(5 * n);
        Ok(())
    }

    fn invert(
        &mut self,
        party: &mut Party<Malicious>,
        x: &mut RssVec<Gf2p8>,
    ) -> Result<(), EngineError> {
        invert(party, x, Record::Products)
    }

    fn finalize(&mut self, party: &mut Party<Malicious>) -> Result<(), EngineError> {
        party.verify_recorded()
    }
}

impl SboxProtocol<Malicious> for Gf4CircuitGf4p4 {
    /// No preprocessing; reserves the recorder's room for `2 n` plain and `n` gf4p4 triples.
    fn preprocess(&mut self, party: &mut Party<Malicious>, n: usize) -> Result<(), EngineError> {
        party.model().reserve::<Gf2p4>(2 * n);
        party.model().reserve::<Gf2p64>(n);
        Ok(())
    }

    fn invert(
        &mut self,
        party: &mut Party<Malicious>,
        x: &mut RssVec<Gf2p8>,
    ) -> Result<(), EngineError> {
        invert(party, x, Record::Gf4p4)
    }

    fn finalize(&mut self, party: &mut Party<Malicious>) -> Result<(), EngineError> {
        party.verify_recorded()
    }
}

/// A product the gf4p4 relation covers ([`Record::Gf4p4`]) or a recorded one.
fn mul<M: SecurityModel>(
    party: &mut Party<M>,
    x: &RssVec<Gf2p4>,
    y: &RssVec<Gf2p4>,
    record: Record,
) -> Result<RssVec<Gf2p4>, EngineError> {
    match record {
        Record::Products => party.mul(x, y),
        Record::Gf4p4 => party.mul_covered(x, y),
    }
}

/// The gf4p4 embedding of `Σ_i coeffs[i] α^i`, per component.
fn embed_gf4p4(coeffs: &[&RssVec<Gf2p4>]) -> RssVec<Gf2p64> {
    let n = coeffs.first().map_or(0, |c| c.len());
    let mut out = RssVec::zeros(n);
    let firsts: Vec<&[Gf2p4]> = coeffs.iter().map(|c| &c.first[..]).collect();
    let seconds: Vec<&[Gf2p4]> = coeffs.iter().map(|c| &c.second[..]).collect();
    gf4p4_slice(&firsts, &mut out.first);
    gf4p4_slice(&seconds, &mut out.second);
    out
}

/// `a + b` per component.
fn sum(a: &RssVec<Gf2p4>, b: &RssVec<Gf2p4>) -> RssVec<Gf2p4> {
    let add = |p: &[Gf2p4], q: &[Gf2p4]| p.iter().zip(q).map(|(x, y)| Gf2p4(x.0 ^ y.0)).collect();
    RssVec {
        first: add(&a.first, &b.first),
        second: add(&a.second, &b.second),
    }
}

/// The gf4p4 triple `(X, Y, Z)` (embedded, per component):
/// `(a_h + α a_l) · (a_l + α d^-1) = p + α (b_h + a_l^2) + α^2 (b_l + b_h)`.
fn gf4p4_relation(
    a_h: &RssVec<Gf2p4>,
    a_l: &RssVec<Gf2p4>,
    dinv: &RssVec<Gf2p4>,
    p: &RssVec<Gf2p4>,
    b_h: &RssVec<Gf2p4>,
    b_l: &RssVec<Gf2p4>,
) -> [RssVec<Gf2p64>; 3] {
    let z1 = sum(b_h, &nibble_map(a_l, &SQUARE));
    let z2 = sum(b_l, b_h);
    [
        embed_gf4p4(&[a_h, a_l]),
        embed_gf4p4(&[a_l, dinv]),
        embed_gf4p4(&[p, &z1, &z2]),
    ]
}

fn invert<M: SecurityModel>(
    party: &mut Party<M>,
    x: &mut RssVec<Gf2p8>,
    record: Record,
) -> Result<(), EngineError> {
    let n = x.len();
    let (a_h, a_l) = split_tower(x);

    // Round 1: p = a_h a_l; d = λ a_h^2 + p + a_l^2.
    let mut d = mul(party, &a_h, &a_l, record)?;
    let p = (M::MALICIOUS && record == Record::Gf4p4).then(|| d.clone());
    for (dc, (hc, lc)) in [
        (&mut d.first, (&a_h.first, &a_l.first)),
        (&mut d.second, (&a_h.second, &a_l.second)),
    ] {
        for ((o, h), l) in dc.iter_mut().zip(hc).zip(lc) {
            o.0 ^= LAMBDA_SQUARE.get(*h) ^ SQUARE.get(*l);
        }
    }
    let d2 = nibble_map(&d, &SQUARE);
    let d4 = nibble_map(&d2, &SQUARE);
    let d8 = nibble_map(&d4, &SQUARE);
    drop(d);

    // Round 2: d^6 = d^2 d^4. Round 3: d^14 = d^6 d^8 = d^-1.
    let d6 = party.mul(&d2, &d4)?;
    let dinv = party.mul(&d6, &d8)?;

    // Round 4: (a_h, a_h + a_l) * (d^-1, d^-1) in one multiplication.
    let mut left = a_h;
    left.extend(&a_l);
    for c in [&mut left.first, &mut left.second] {
        let (h, l) = c.split_at_mut(n);
        for (lo, hi) in l.iter_mut().zip(h.iter()) {
            lo.0 ^= hi.0;
        }
    }
    let mut right = dinv.clone();
    right.extend(&dinv);
    let b = mul(party, &left, &right, record)?;

    if let Some(p) = p {
        let half = |v: &RssVec<Gf2p4>, k: usize| RssVec {
            first: v.first[k * n..(k + 1) * n].to_vec(),
            second: v.second[k * n..(k + 1) * n].to_vec(),
        };
        let [xx, yy, zz] =
            gf4p4_relation(&half(&left, 0), &a_l, &dinv, &p, &half(&b, 0), &half(&b, 1));
        party.model().on_product(&xx, &yy, &zz);
    }
    *x = from_halves(&b, n);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use triskele_field::{Field, Gf2p4};

    /// The gf4p4 relation in the clear (a value `v` as the sharing `(v, 0)`; the embedding is
    /// linear): it holds for the honest values of every input, and an error in any one of the
    /// three covered products (`p`, `b_h`, `b_l`) breaks it.
    #[test]
    fn gf4p4_relation_holds_exactly_for_correct_products() {
        let clear = |v: Vec<Gf2p4>| RssVec {
            second: vec![Gf2p4(0); v.len()],
            first: v,
        };
        let holds = |r: &[RssVec<Gf2p64>; 3]| {
            r[0].first
                .iter()
                .zip(&r[1].first)
                .zip(&r[2].first)
                .all(|((x, y), z)| *x * *y == *z)
        };
        for byte in 0..=255u8 {
            let t = triskele_field::Gf4Tower::from_gf2p8(Gf2p8(byte));
            let (h, l) = (t.high(), t.low());
            let p = h * l;
            let d = Gf2p4(LAMBDA_SQUARE.get(h) ^ SQUARE.get(l)) + p;
            let dinv = d.inverse();
            let (bh, bl) = (h * dinv, (h + l) * dinv);
            let one = |v: Gf2p4| clear(vec![v]);
            let rel = |p, bh, bl| {
                gf4p4_relation(&one(h), &one(l), &one(dinv), &one(p), &one(bh), &one(bl))
            };
            assert!(holds(&rel(p, bh, bl)), "{byte:#04x}");
            for e in 1..16u8 {
                let e = Gf2p4(e);
                assert!(!holds(&rel(p + e, bh, bl)), "{byte:#04x} p");
                assert!(!holds(&rel(p, bh + e, bl)), "{byte:#04x} b_h");
                assert!(!holds(&rel(p, bh, bl + e)), "{byte:#04x} b_l");
            }
        }
    }

    #[test]
    fn tables_match_the_field() {
        for v in 0..16u8 {
            let x = Gf2p4(v);
            assert_eq!(Gf2p4(SQUARE.get(x)), x * x);
            assert_eq!(Gf2p4(LAMBDA_SQUARE.get(x)), Gf2p4(0xe) * x * x);
            // d^-1 = d^2 d^4 d^8 = (d^2 d^4) d^8.
            let d2 = x.square();
            let d4 = d2.square();
            assert_eq!(d2 * d4 * d4.square(), x.inverse());
        }
    }
}
