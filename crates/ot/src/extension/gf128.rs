//! Arithmetic in GF(2^128) = GF(2)[X]/(X^128 + X^7 + X^2 + X + 1), bit `i` of
//! a `u128` being the coefficient of `X^i`, for the KOS consistency check.
//! Products are accumulated unreduced (256 bits) and reduced once.

/// Carry-less 64 x 64 -> 128 multiplication with 4-bit windows. The window
/// table is built from `secret` with data-independent operations and is
/// indexed by the nibbles of `public` only, so memory addresses never depend
/// on the secret operand.
#[inline(always)]
fn clmul64(secret: u64, public: u64) -> u128 {
    let a = u128::from(secret);
    let mut table = [0u128; 16];
    for (n, t) in table.iter_mut().enumerate() {
        let mut v = 0u128;
        for bit in 0..4 {
            let mask = 0u128.wrapping_sub(((n >> bit) & 1) as u128);
            v ^= (a << bit) & mask;
        }
        *t = v;
    }
    let mut acc = 0u128;
    for i in (0..16).rev() {
        acc = (acc << 4) ^ table[((public >> (4 * i)) & 0xf) as usize];
    }
    acc
}

/// Unreduced 256-bit product `(lo, hi)` (Karatsuba); `public` must be a
/// public value (it selects table entries).
#[inline(always)]
pub(crate) fn mul_wide(secret: u128, public: u128) -> (u128, u128) {
    let (a0, a1) = (secret as u64, (secret >> 64) as u64);
    let (b0, b1) = (public as u64, (public >> 64) as u64);
    let lo = clmul64(a0, b0);
    let hi = clmul64(a1, b1);
    let mid = clmul64(a0 ^ a1, b0 ^ b1) ^ lo ^ hi;
    (lo ^ (mid << 64), hi ^ (mid >> 64))
}

/// `sum_j secret_j * public_j`, reduced once, on the best backend.
pub(crate) fn dot(secret: &[u128], public: &[u128]) -> u128 {
    #[cfg(target_arch = "x86_64")]
    if crate::rlwe::Backend::current() != crate::rlwe::Backend::Portable {
        if let Some(t) = crate::rlwe::ntt_avx2::Clmul::detect() {
            let (lo, hi) = t.dot_wide(secret, public);
            return reduce(lo, hi);
        }
    }
    let (lo, hi) = dot_wide_portable(secret, public);
    reduce(lo, hi)
}

/// Portable unreduced dot product.
pub(crate) fn dot_wide_portable(secret: &[u128], public: &[u128]) -> (u128, u128) {
    let mut acc = (0u128, 0u128);
    for (&a, &b) in secret.iter().zip(public) {
        let (l, h) = mul_wide(a, b);
        acc = (acc.0 ^ l, acc.1 ^ h);
    }
    acc
}

/// Reduces a 256-bit product modulo `X^128 + X^7 + X^2 + X + 1`.
pub(crate) fn reduce(lo: u128, hi: u128) -> u128 {
    // X^128 = X^7 + X^2 + X + 1; hi * X^128 = hi * (X^7 + X^2 + X + 1).
    let fold = |h: u128| -> (u128, u128) {
        let l = h ^ (h << 1) ^ (h << 2) ^ (h << 7);
        let o = (h >> 127) ^ (h >> 126) ^ (h >> 121);
        (l, o)
    };
    let (l1, o1) = fold(hi);
    // o1 has at most 7 bits; fold it once more (its overflow is zero).
    let (l2, _) = fold(o1);
    lo ^ l1 ^ l2
}

/// Field multiplication.
#[cfg(test)]
pub(crate) fn mul(a: u128, b: u128) -> u128 {
    let (lo, hi) = mul_wide(a, b);
    reduce(lo, hi)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
    use super::*;
    use rand_chacha::ChaCha20Rng;
    use rand_core::{RngCore, SeedableRng};

    fn naive(mut a: u128, mut b: u128) -> u128 {
        let mut r = 0u128;
        while b != 0 {
            if b & 1 == 1 {
                r ^= a;
            }
            b >>= 1;
            let carry = a >> 127;
            a <<= 1;
            if carry == 1 {
                a ^= 0x87;
            }
        }
        r
    }

    fn rand128(rng: &mut impl RngCore) -> u128 {
        u128::from(rng.next_u64()) | (u128::from(rng.next_u64()) << 64)
    }

    #[test]
    fn matches_naive_and_field_laws() {
        let mut rng = ChaCha20Rng::seed_from_u64(71);
        for _ in 0..2000 {
            let (a, b, c) = (rand128(&mut rng), rand128(&mut rng), rand128(&mut rng));
            assert_eq!(mul(a, b), naive(a, b));
            assert_eq!(mul(a, b ^ c), mul(a, b) ^ mul(a, c));
            assert_eq!(mul(mul(a, b), c), mul(a, mul(b, c)));
        }
        assert_eq!(mul(1u128 << 127, 2), 0x87);
        assert_eq!(mul(u128::MAX, 1), u128::MAX);
        // Accumulating unreduced products equals summing reduced ones.
        let mut acc = (0u128, 0u128);
        let mut want = 0u128;
        for _ in 0..100 {
            let (a, b) = (rand128(&mut rng), rand128(&mut rng));
            let (l, h) = mul_wide(a, b);
            acc = (acc.0 ^ l, acc.1 ^ h);
            want ^= mul(a, b);
        }
        assert_eq!(reduce(acc.0, acc.1), want);
    }

    #[test]
    fn dot_backends_agree() {
        let mut rng = ChaCha20Rng::seed_from_u64(72);
        let a: Vec<u128> = (0..1000).map(|_| rand128(&mut rng)).collect();
        let b: Vec<u128> = (0..1000).map(|_| rand128(&mut rng)).collect();
        let want = a.iter().zip(&b).fold(0, |acc, (&x, &y)| acc ^ naive(x, y));
        let (l, h) = dot_wide_portable(&a, &b);
        assert_eq!(reduce(l, h), want);
        assert_eq!(dot(&a, &b), want);
        #[cfg(target_arch = "x86_64")]
        if let Some(t) = crate::rlwe::ntt_avx2::Clmul::detect() {
            let (l, h) = t.dot_wide(&a, &b);
            assert_eq!(reduce(l, h), want);
        }
    }
}
