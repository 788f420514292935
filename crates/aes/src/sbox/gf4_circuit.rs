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
//! reshared to the previous party). No preprocessing, no check. Cost per inversion and party:
//! 5 `GF(2^4)` elements = 2.5 bytes to the previous party, 4 rounds (AES-128: 400 B/block,
//! 40 rounds).

use triskele_engine::{EngineError, Party, SemiHonest};
use triskele_field::Gf2p8;
use triskele_share::RssVec;

use super::SboxProtocol;
use crate::sbox::tower::{from_halves, nibble_map, split_tower, NibbleTable};

/// The semi-honest `gf4-circuit` protocol.
#[derive(Debug, Default)]
pub struct Gf4Circuit;

const SQUARE: NibbleTable = NibbleTable::SQUARE;
const LAMBDA_SQUARE: NibbleTable = NibbleTable::LAMBDA_SQUARE;

impl SboxProtocol<SemiHonest> for Gf4Circuit {
    fn invert(
        &mut self,
        party: &mut Party<SemiHonest>,
        x: &mut RssVec<Gf2p8>,
    ) -> Result<(), EngineError> {
        let n = x.len();
        let (a_h, a_l) = split_tower(x);

        // Round 1: p = a_h a_l; d = λ a_h^2 + p + a_l^2.
        let mut d = party.mul(&a_h, &a_l)?;
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
        let b = party.mul(&left, &right)?;
        *x = from_halves(&b, n);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use triskele_field::{Field, Gf2p4};

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
