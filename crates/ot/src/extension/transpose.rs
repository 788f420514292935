//! Bit-matrix transposition in 128 x 128 tiles.

/// Transposes a 128 x 128 bit matrix in place: bit `c` of `rows[r]` moves to
/// bit `r` of `rows[c]` (Eklundh's recursive block swaps, 7 levels).
pub(crate) fn transpose_128(rows: &mut [u128; 128]) {
    let mut width = 64usize;
    let mut mask: u128 = u128::from(u64::MAX);
    while width != 0 {
        let mut r = 0;
        while r < 128 {
            for k in r..r + width {
                let a = rows[k];
                let b = rows[k + width];
                let t = ((a >> width) ^ b) & mask;
                rows[k] = a ^ (t << width);
                rows[k + width] = b ^ t;
            }
            r += 2 * width;
        }
        width >>= 1;
        mask ^= mask << width;
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
