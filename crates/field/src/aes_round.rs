//! The local steps of an AES round on whole 16-byte blocks of `GF(2^8)` elements (FIPS-197
//! byte order: byte `k` of a block is row `k mod 4`, column `k / 4`): ShiftRows, MixColumns,
//! their inverses, and the middle encryption round's ShiftRows, MixColumns and AddRoundKey in
//! one pass. They are `GF(2^8)`-linear (AddRoundKey affine), so the three-party protocols apply
//! them to each share component. A trailing partial block is left as it is.
//!
//! Backends: portable (a block at a time, MixColumns on a column packed in a `u32`) and AVX2
//! (two blocks per register: `vpshufb` for ShiftRows and the rotations inside the columns,
//! `xtime` by `vpaddb` plus `0x1b` where `vpcmpgtb` finds the top bit). The GFNI backends run
//! the AVX2 code.

use crate::backend::{self, cast, Backend};
use crate::Gf2p8;

/// A step of [`apply_with`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BlockStep {
    /// ShiftRows (row `r` rotated left by `r`).
    ShiftRows,
    /// InvShiftRows.
    InvShiftRows,
    /// MixColumns (circulant `(2, 3, 1, 1)`).
    MixColumns,
    /// InvMixColumns (circulant `(e, b, d, 9)`).
    InvMixColumns,
    /// ShiftRows, MixColumns, then the addition of the round key: a middle encryption round
    /// after SubBytes.
    Round([u8; 16]),
}

/// `SHIFT[k]`: the byte that ShiftRows moves to position `k` (row `k mod 4` rotated left).
pub(crate) const SHIFT: [u8; 16] = {
    let mut t = [0u8; 16];
    let mut k = 0;
    while k < 16 {
        let (r, c) = (k % 4, k / 4);
        t[k] = (r + 4 * ((c + r) % 4)) as u8;
        k += 1;
    }
    t
};

/// `INV_SHIFT[k]`: the byte that InvShiftRows moves to position `k`.
pub(crate) const INV_SHIFT: [u8; 16] = {
    let mut t = [0u8; 16];
    let mut k = 0;
    while k < 16 {
        t[SHIFT[k] as usize] = k as u8;
        k += 1;
    }
    t
};

/// Applies `step` to every whole block of `blocks`, on the active backend.
pub fn apply(step: BlockStep, blocks: &mut [Gf2p8]) {
    apply_with(backend::active(), step, blocks);
}

/// [`apply`] on an explicit backend (portable if `be` is unavailable).
pub fn apply_with(be: Backend, step: BlockStep, blocks: &mut [Gf2p8]) {
    backend::aes_blocks(be, step, cast::gf2p8_as_bytes_mut(blocks));
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::{RngCore, SeedableRng};

    fn hex(h: &str) -> Vec<Gf2p8> {
        (0..h.len() / 2)
            .map(|i| Gf2p8(u8::from_str_radix(&h[2 * i..2 * i + 2], 16).unwrap_or(0)))
            .collect()
    }

    /// FIPS-197 / PROTOCOLS.md §7: the column d4 bf 5d 30 becomes 04 66 81 e5 under
    /// MixColumns; InvMixColumns undoes it; ShiftRows of 00..0f (FIPS-197 §5.1.2).
    #[test]
    fn known_answers_on_every_backend() {
        for be in Backend::ALL {
            let mut c = hex("d4bf5d30d4bf5d30d4bf5d30d4bf5d30");
            apply_with(be, BlockStep::MixColumns, &mut c);
            assert_eq!(c, hex("046681e5046681e5046681e5046681e5"), "{be:?}");
            apply_with(be, BlockStep::InvMixColumns, &mut c);
            assert_eq!(c, hex("d4bf5d30d4bf5d30d4bf5d30d4bf5d30"), "{be:?}");
            let mut s = hex("000102030405060708090a0b0c0d0e0f");
            apply_with(be, BlockStep::ShiftRows, &mut s);
            assert_eq!(s, hex("00050a0f04090e03080d02070c01060b"), "{be:?}");
            apply_with(be, BlockStep::InvShiftRows, &mut s);
            assert_eq!(s, hex("000102030405060708090a0b0c0d0e0f"), "{be:?}");
        }
    }

    /// Every backend gives the portable result on the same seeded blocks, for lengths that
    /// end on a single block, a pair of blocks and a partial block (left unchanged); the
    /// round step is ShiftRows, MixColumns and the key addition.
    #[test]
    fn backends_match_portable_on_random_blocks() {
        let mut rng = rand_chacha::ChaCha20Rng::seed_from_u64(21);
        let mut key = [0u8; 16];
        rng.fill_bytes(&mut key);
        let steps = [
            BlockStep::ShiftRows,
            BlockStep::InvShiftRows,
            BlockStep::MixColumns,
            BlockStep::InvMixColumns,
            BlockStep::Round(key),
        ];
        for len in [0usize, 5, 16, 32, 48, 16 * 37 + 9, 16 * 1000] {
            let mut bytes = vec![0u8; len];
            rng.fill_bytes(&mut bytes);
            let input: Vec<Gf2p8> = bytes.iter().map(|&b| Gf2p8(b)).collect();
            for step in steps {
                let mut want = input.clone();
                apply_with(Backend::Portable, step, &mut want);
                let whole = len / 16 * 16;
                assert_eq!(want[whole..], input[whole..], "partial block untouched");
                if len >= 16 {
                    assert_ne!(want[..whole], input[..whole], "{step:?} changed nothing");
                }
                for be in Backend::ALL {
                    let mut got = input.clone();
                    apply_with(be, step, &mut got);
                    assert_eq!(got, want, "{be:?} {step:?} len {len}");
                }
            }
            // The round is the three steps in order.
            let mut three = input.clone();
            apply_with(Backend::Portable, BlockStep::ShiftRows, &mut three);
            apply_with(Backend::Portable, BlockStep::MixColumns, &mut three);
            for block in three.chunks_exact_mut(16) {
                for (b, k) in block.iter_mut().zip(key) {
                    b.0 ^= k;
                }
            }
            let mut round = input.clone();
            apply_with(Backend::Portable, BlockStep::Round(key), &mut round);
            assert_eq!(round, three);
        }
    }
}
