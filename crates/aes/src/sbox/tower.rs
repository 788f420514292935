//! Local helpers shared by the tower-field protocols (`gf4-circuit`, `lut16`): the WOL map
//! from shared `GF(2^8)` bytes to shared `GF(2^4)` halves and back (PROTOCOLS.md §2.3), and
//! `GF(2)`-linear maps on `GF(2^4)` (squarings), applied per component.

use rayon::prelude::*;
use triskele_engine::ProductPiece;
use triskele_field::{Bulk, Gf2p4, Gf2p8, Gf4Tower};
use triskele_share::RssVec;

/// Elements per parallel work item.
const PAR: usize = 1 << 14;

/// A `GF(2)`-linear map on `GF(2^4)` given by the images of the four basis bits, applied
/// branch-free (`f(x) = XOR of col_i over the set bits i of x`) so that slice loops vectorise.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct NibbleLinear([u8; 4]);

impl NibbleLinear {
    /// `x -> x^2`.
    pub(crate) const SQUARE: NibbleLinear = NibbleLinear::from_table(&Gf2p4::SQUARE_TABLE);
    /// `x -> x^4`.
    pub(crate) const FOURTH: NibbleLinear = Self::SQUARE.then(Self::SQUARE);
    /// `x -> x^8`.
    pub(crate) const EIGHTH: NibbleLinear = Self::FOURTH.then(Self::SQUARE);
    /// `x -> λ x^2` (λ = `0xE`, PROTOCOLS.md §2.3).
    pub(crate) const LAMBDA_SQUARE: NibbleLinear = {
        let mut c = Self::SQUARE.0;
        let mut i = 0;
        while i < 4 {
            c[i] = Gf4Tower::LAMBDA.const_mul(Gf2p4(c[i])).0;
            i += 1;
        }
        NibbleLinear(c)
    };

    /// The map of a table that is `GF(2)`-linear (checked by the tests for every constant).
    const fn from_table(t: &[u8; 16]) -> NibbleLinear {
        NibbleLinear([t[1], t[2], t[4], t[8]])
    }

    /// `g ∘ self`.
    const fn then(self, g: NibbleLinear) -> NibbleLinear {
        let mut c = [0u8; 4];
        let mut i = 0;
        while i < 4 {
            c[i] = g.apply(self.0[i]);
            i += 1;
        }
        NibbleLinear(c)
    }

    /// `f(x)` as a byte.
    #[inline]
    pub(crate) const fn get(self, x: Gf2p4) -> u8 {
        self.apply(x.0)
    }

    /// `f(x)` (the high nibble of `x` is ignored).
    #[inline]
    pub(crate) const fn apply(self, x: u8) -> u8 {
        let mut r = 0u8;
        let mut i = 0;
        while i < 4 {
            r ^= self.0[i] & 0u8.wrapping_sub((x >> i) & 1);
            i += 1;
        }
        r
    }
}

/// `(x^2, x^4, x^8)` of a shared vector, component-wise (squaring is additive), in one pass.
pub(crate) fn square_powers(x: &RssVec<Gf2p4>) -> [RssVec<Gf2p4>; 3] {
    let n = x.len();
    let mut out: [RssVec<Gf2p4>; 3] = core::array::from_fn(|_| RssVec::zeros(n));
    let [o2, o4, o8] = &mut out;
    for (src, (d2, (d4, d8))) in [
        (&x.first, (&mut o2.first, (&mut o4.first, &mut o8.first))),
        (
            &x.second,
            (&mut o2.second, (&mut o4.second, &mut o8.second)),
        ),
    ] {
        for (((v, a), b), c) in src.iter().zip(d2.iter_mut()).zip(d4.iter_mut()).zip(d8) {
            *a = Gf2p4(NibbleLinear::SQUARE.apply(v.0));
            *b = Gf2p4(NibbleLinear::FOURTH.apply(v.0));
            *c = Gf2p4(NibbleLinear::EIGHTH.apply(v.0));
        }
    }
    out
}

/// `φ` of one component, split into the high and low halves `(a_h, a_l)`. `a_h` has room for
/// as many entries again: the protocols that invert through the tower field append `a_h +
/// a_l` to it for their last round (`a_h ‖ (a_h + a_l)`), which then needs no reallocation
/// (a copy of `a_h` into fresh memory).
pub(crate) fn split_component(x: &[Gf2p8]) -> (Vec<Gf2p4>, Vec<Gf2p4>) {
    let n = x.len();
    let mut t = vec![Gf4Tower(0); n];
    let mut h = Vec::with_capacity(2 * n);
    h.resize(n, Gf2p4(0));
    let mut l = vec![Gf2p4(0); n];
    t.par_chunks_mut(PAR)
        .zip(x.par_chunks(PAR))
        .zip(h.par_chunks_mut(PAR).zip(l.par_chunks_mut(PAR)))
        .for_each(|((t, x), (h, l))| {
            Gf4Tower::from_gf2p8_slice(x, t);
            for ((t, h), l) in t.iter().zip(h.iter_mut()).zip(l.iter_mut()) {
                *h = Gf2p4(t.0 >> 4);
                *l = Gf2p4(t.0 & 0x0f);
            }
        });
    (h, l)
}

/// The left operand of the last round of an inversion through the tower field, `a_h ‖ (a_h +
/// a_l)` (local; `a_h`'s memory reused, which [`split_tower`] leaves room in).
pub(crate) fn left_operand(a_h: RssVec<Gf2p4>, a_l: &RssVec<Gf2p4>) -> RssVec<Gf2p4> {
    let n = a_l.len();
    let mut left = a_h;
    left.extend(a_l);
    for c in [&mut left.first, &mut left.second] {
        let (h, l) = c.split_at_mut(n);
        Gf2p4::add_assign_slice(l, h);
    }
    left
}

/// The pieces of the last round's product `(a_h ‖ (a_h + a_l)) · (v ‖ v)` for the inverse `v`
/// of the norm (`b_h = a_h v`, `b_l = (a_h + a_l) v`, one message), with both halves of the
/// right operand `v` itself rather than a doubled copy ([`Party::mul_covered_parts`]).
///
/// [`Party::mul_covered_parts`]: triskele_engine::Party::mul_covered_parts
pub(crate) fn last_round_pieces<'a>(
    left: &'a RssVec<Gf2p4>,
    v: &'a RssVec<Gf2p4>,
) -> [ProductPiece<'a, Gf2p4>; 2] {
    let n = v.len();
    let (h1, s1) = left.first.split_at(n.min(left.first.len()));
    let (h2, s2) = left.second.split_at(n.min(left.second.len()));
    let v = [&v.first[..], &v.second[..]];
    [([h1, h2], v), ([s1, s2], v)]
}

/// `([[a_h]], [[a_l]]) = φ([[x]])`, component-wise.
pub(crate) fn split_tower(x: &RssVec<Gf2p8>) -> (RssVec<Gf2p4>, RssVec<Gf2p4>) {
    let (h1, l1) = split_component(&x.first);
    let (h2, l2) = split_component(&x.second);
    (
        RssVec {
            first: h1,
            second: h2,
        },
        RssVec {
            first: l1,
            second: l2,
        },
    )
}

/// `φ^-1(h Y + l)` of one component.
pub(crate) fn join_component(h: &[Gf2p4], l: &[Gf2p4]) -> Vec<Gf2p8> {
    let n = h.len().min(l.len());
    let mut t = vec![Gf4Tower(0); n];
    let mut out = vec![Gf2p8(0); n];
    t.par_chunks_mut(PAR)
        .zip(out.par_chunks_mut(PAR))
        .zip(h.par_chunks(PAR).zip(l.par_chunks(PAR)))
        .for_each(|((t, o), (h, l))| {
            for ((t, h), l) in t.iter_mut().zip(h).zip(l) {
                *t = Gf4Tower((h.0 << 4) | (l.0 & 0x0f));
            }
            Gf4Tower::to_gf2p8_slice(t, o);
        });
    out
}

/// `[[x]] = φ^-1([[b_h]] Y + [[b_l]])` where `b` holds `b_h` in `[0, n)` and `b_l` in `[n, 2n)`.
pub(crate) fn from_halves(b: &RssVec<Gf2p4>, n: usize) -> RssVec<Gf2p8> {
    let join = |c: &[Gf2p4]| -> Vec<Gf2p8> {
        let (h, l) = c.split_at(n.min(c.len()));
        join_component(h, l)
    };
    RssVec {
        first: join(&b.first),
        second: join(&b.second),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every constant map equals its definition on all 16 elements (so the tables behind
    /// them are linear), and `square_powers` applies them to both components.
    #[test]
    fn linear_nibble_maps_match_their_definitions() {
        for v in 0..16u8 {
            let x = Gf2p4(v);
            let sq = x * x;
            assert_eq!(
                NibbleLinear::SQUARE.apply(v),
                Gf2p4::SQUARE_TABLE[usize::from(v)]
            );
            assert_eq!(NibbleLinear::SQUARE.apply(v), sq.0);
            assert_eq!(NibbleLinear::FOURTH.apply(v), (sq * sq).0);
            assert_eq!(NibbleLinear::EIGHTH.apply(v), (sq * sq * sq * sq).0);
            assert_eq!(
                NibbleLinear::LAMBDA_SQUARE.apply(v),
                Gf4Tower::LAMBDA.const_mul(sq).0
            );
            // The high nibble is ignored.
            assert_eq!(NibbleLinear::SQUARE.apply(v | 0xa0), sq.0);
        }
        let x = RssVec {
            first: (0..40u8).map(|k| Gf2p4(k % 16)).collect(),
            second: (0..40u8).map(|k| Gf2p4((k % 16 * 7 + 1) % 16)).collect(),
        };
        let [p2, p4, p8] = square_powers(&x);
        for (src, (a, b, c)) in [
            (&x.first, (&p2.first, &p4.first, &p8.first)),
            (&x.second, (&p2.second, &p4.second, &p8.second)),
        ] {
            for (k, v) in src.iter().enumerate() {
                let s = *v * *v;
                assert_eq!((a[k], b[k], c[k]), (s, s * s, (s * s) * (s * s)));
            }
        }
    }

    #[test]
    fn split_and_join_round_trip_and_match_wol() {
        let x: Vec<Gf2p8> = (0..=255u8).map(Gf2p8).collect();
        let (h, l) = split_component(&x);
        assert!(h.capacity() >= 2 * x.len());
        for (k, (h, l)) in h.iter().zip(&l).enumerate() {
            let t = Gf4Tower::from_gf2p8(Gf2p8(k as u8));
            assert_eq!((h.0, l.0), (t.high().0, t.low().0));
        }
        assert_eq!(join_component(&h, &l), x);
    }
}
