//! Bit-matrix transposition in 128 x 128 tiles.

/// Transposes a 128 x 128 bit matrix in place: bit `c` of `rows[r]` moves to
/// bit `r` of `rows[c]` (Eklundh's recursive block swaps, 7 levels; see
/// [`transpose_halves`]). The extensions call [`transpose_halves`] directly.
#[cfg(test)]
pub(crate) fn transpose_128(rows: &mut [u128; 128]) {
    let mut lo = [0u64; 128];
    let mut hi = [0u64; 128];
    for ((l, h), r) in lo.iter_mut().zip(hi.iter_mut()).zip(rows.iter()) {
        (*l, *h) = (*r as u64, (*r >> 64) as u64);
    }
    transpose_halves(&mut lo, &mut hi);
    for ((l, h), r) in lo.iter().zip(hi.iter()).zip(rows.iter_mut()) {
        *r = u128::from(*l) | (u128::from(*h) << 64);
    }
}

/// [`transpose_128`] on a matrix held as the low (`lo`) and high (`hi`) 64
/// bits of its rows. The first level swaps 64 x 64 blocks, which exchanges
/// `hi[k]` and `lo[k + 64]`; every later level works within 64-bit words, on
/// each half separately, with a fixed width per loop, so the compiler
/// vectorizes the rows (the `u128` form of the same swaps does not).
pub(crate) fn transpose_halves(lo: &mut [u64; 128], hi: &mut [u64; 128]) {
    let (hi_top, _) = hi.split_at_mut(64);
    let (_, lo_bottom) = lo.split_at_mut(64);
    hi_top.swap_with_slice(lo_bottom);
    for v in [lo, hi] {
        level::<32>(v, 0x0000_0000_ffff_ffff);
        level::<16>(v, 0x0000_ffff_0000_ffff);
        level::<8>(v, 0x00ff_00ff_00ff_00ff);
        level::<4>(v, 0x0f0f_0f0f_0f0f_0f0f);
        level::<2>(v, 0x3333_3333_3333_3333);
        level::<1>(v, 0x5555_5555_5555_5555);
    }
}

/// One level of block swaps of width `W` between rows `k` and `k + W`: the
/// bits selected by `mask` (the low `W` of every `2W`) of row `k + W` trade
/// places with the bits `W` higher in row `k`.
#[inline(always)]
fn level<const W: usize>(v: &mut [u64; 128], mask: u64) {
    for pair in v.chunks_exact_mut(2 * W) {
        let (a, b) = pair.split_at_mut(W);
        for (a, b) in a.iter_mut().zip(b.iter_mut()) {
            let t = ((*a >> W) ^ *b) & mask;
            *a ^= t << W;
            *b ^= t;
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(
        clippy::unwrap_used,
        clippy::expect_used,
        clippy::panic,
        clippy::needless_range_loop
    )]
    use super::*;
    use rand_chacha::ChaCha20Rng;
    use rand_core::{RngCore, SeedableRng};

    #[test]
    fn matches_naive() {
        let mut rng = ChaCha20Rng::seed_from_u64(31);
        for _ in 0..20 {
            let mut m = [0u128; 128];
            for r in m.iter_mut() {
                *r = u128::from(rng.next_u64()) | (u128::from(rng.next_u64()) << 64);
            }
            let mut t = m;
            transpose_128(&mut t);
            for r in 0..128 {
                for c in 0..128 {
                    assert_eq!((m[r] >> c) & 1, (t[c] >> r) & 1);
                }
            }
            transpose_128(&mut t);
            assert_eq!(t, m);
        }
    }
}
