//! Local helpers shared by the tower-field protocols (`gf4-circuit`, `lut16`): the WOL map
//! from shared `GF(2^8)` bytes to shared `GF(2^4)` halves and back (PROTOCOLS.md §2.3), and
//! `GF(2)`-linear maps on `GF(2^4)` given by 16-entry tables, applied per component.

use rayon::prelude::*;
use triskele_field::{Gf2p4, Gf2p8, Gf4Tower};
use triskele_share::RssVec;

/// Elements per parallel work item.
const PAR: usize = 1 << 14;

/// A map on `GF(2^4)` as a table (index = element).
#[derive(Debug, Clone, Copy)]
pub(crate) struct NibbleTable([u8; 16]);

impl NibbleTable {
    /// `x -> x^2`.
    pub(crate) const SQUARE: NibbleTable = NibbleTable(Gf2p4::SQUARE_TABLE);
    /// `x -> λ x^2` (λ = `0xE`, PROTOCOLS.md §2.3).
    pub(crate) const LAMBDA_SQUARE: NibbleTable = {
        let mut t = [0u8; 16];
        let mut x = 0;
        while x < 16 {
            t[x] = Gf4Tower::LAMBDA.const_mul(Gf2p4(Gf2p4::SQUARE_TABLE[x])).0;
            x += 1;
        }
        NibbleTable(t)
    };

    /// `f(x)` as a byte.
    #[inline]
    pub(crate) fn get(&self, x: Gf2p4) -> u8 {
        self.0[(x.0 & 0x0f) as usize]
    }
}

/// `f` applied to both components (valid for additive `f`, e.g. squaring).
pub(crate) fn nibble_map(x: &RssVec<Gf2p4>, f: &NibbleTable) -> RssVec<Gf2p4> {
    let map = |c: &[Gf2p4]| -> Vec<Gf2p4> { c.iter().map(|v| Gf2p4(f.get(*v))).collect() };
    RssVec {
        first: map(&x.first),
        second: map(&x.second),
    }
}

/// `φ` of one component, split into the high and low halves `(a_h, a_l)`.
pub(crate) fn split_component(x: &[Gf2p8]) -> (Vec<Gf2p4>, Vec<Gf2p4>) {
    let n = x.len();
    let mut t = vec![Gf4Tower(0); n];
    let mut h = vec![Gf2p4(0); n];
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

    #[test]
    fn split_and_join_round_trip_and_match_wol() {
        let x: Vec<Gf2p8> = (0..=255u8).map(Gf2p8).collect();
        let (h, l) = split_component(&x);
        for (k, (h, l)) in h.iter().zip(&l).enumerate() {
            let t = Gf4Tower::from_gf2p8(Gf2p8(k as u8));
            assert_eq!((h.0, l.0), (t.high().0, t.low().0));
        }
        assert_eq!(join_component(&h, &l), x);
    }
}
