//! Prime fields `F_p`, `p < 2^128`: the [`PrimeField`] trait shared by the specialised
//! [`crate::Fp`] (`p = 2^127+45`) and the run-time prime field `FpRt`, with the
//! number theory the PRFs need: the Legendre symbol by a binary Jacobi algorithm (no
//! exponentiation), square roots (Atkin's formula for `p ≡ 5 (mod 8)`, `(p+1)/4`-power for
//! `p ≡ 3 (mod 4)`, Tonelli-Shanks otherwise) and exponentiation.
//!
//! Everything here is meant for **public** values (opened, masked): the Jacobi algorithm and
//! Tonelli-Shanks branch on the value.

use crate::{Bulk, Encode, Field, Random};

/// A prime field of odd characteristic below `2^128` whose elements have a canonical integer
/// representative in `[0, p)`.
pub trait PrimeField: Field + Encode + Random + Bulk + core::fmt::Display {
    /// The characteristic `p` (an odd prime, `p < 2^128`).
    fn modulus() -> u128;
    /// `x mod p`, for any `x`.
    fn from_u128_reduced(x: u128) -> Self;
    /// The canonical representative in `[0, p)`.
    fn to_u128(self) -> u128;

    /// `self^e` by left-to-right square-and-multiply. The exponent is public.
    fn pow_u128(self, e: u128) -> Self {
        let mut acc = Self::ONE;
        for i in (0..(128 - e.leading_zeros())).rev() {
            acc = acc.square();
            if (e >> i) & 1 == 1 {
                acc *= self;
            }
        }
        acc
    }

    /// The Legendre symbol `(self | p)` in `{-1, 0, 1}`, by the binary Jacobi algorithm.
    fn legendre(self) -> i8 {
        jacobi(self.to_u128(), Self::modulus())
    }

    /// A square root, if `self` is a square. The choice of root is a fixed function of
    /// `self` (the same at every party), not necessarily the smaller one.
    fn sqrt(self) -> Option<Self> {
        let p = Self::modulus();
        if self.is_zero() {
            return Some(Self::ZERO);
        }
        if self.legendre() != 1 {
            return None;
        }
        let r = if p % 4 == 3 {
            self.pow_u128(p / 4 + 1)
        } else if p % 8 == 5 {
            // Atkin: v = (2a)^((p-5)/8), i = 2 a v^2 (a square root of -1), r = a v (i - 1).
            let two_a = self + self;
            let v = two_a.pow_u128(p / 8);
            let i = two_a * v.square();
            self * v * (i - Self::ONE)
        } else {
            tonelli_shanks(self)?
        };
        (r.square() == self).then_some(r)
    }
}

/// The Jacobi symbol `(a | n)` for odd `n`, by the binary algorithm (shifts, swaps and
/// subtractions; no division except the initial reduction). Returns 0 when `gcd(a, n) > 1`.
pub fn jacobi(a: u128, n: u128) -> i8 {
    debug_assert!(n & 1 == 1);
    let mut a = a % n;
    let mut n = n;
    let mut t: i8 = 1;
    while a != 0 {
        let z = a.trailing_zeros();
        a >>= z;
        // (2 | n) = -1 iff n ≡ 3, 5 (mod 8).
        if z & 1 == 1 && matches!(n & 7, 3 | 5) {
            t = -t;
        }
        // Now a is odd: reciprocity when a < n, then subtract.
        if a < n {
            core::mem::swap(&mut a, &mut n);
            if a & n & 3 == 3 {
                t = -t;
            }
        }
        a -= n;
    }
    if n == 1 {
        t
    } else {
        0
    }
}

/// Tonelli-Shanks for a square `a` (not zero) in any odd prime field.
fn tonelli_shanks<F: PrimeField>(a: F) -> Option<F> {
    let p = F::modulus();
    let s = (p - 1).trailing_zeros();
    let q = (p - 1) >> s;
    // The smallest non-residue.
    let mut z = 2u128;
    while jacobi(z, p) != -1 {
        z += 1;
        if z >= p {
            return None;
        }
    }
    let mut m = s;
    let mut c = F::from_u128_reduced(z).pow_u128(q);
    let mut t = a.pow_u128(q);
    let mut r = a.pow_u128(q.div_ceil(2));
    while t != F::ONE {
        // The least i with t^(2^i) = 1.
        let mut i = 0;
        let mut t2 = t;
        while t2 != F::ONE {
            t2 = t2.square();
            i += 1;
            if i == m {
                return None;
            }
        }
        let mut b = c;
        for _ in 0..(m - i - 1) {
            b = b.square();
        }
        m = i;
        c = b.square();
        t *= c;
        r *= b;
    }
    Some(r)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Euler's criterion on small numbers, by repeated multiplication mod n.
    fn euler(a: u128, p: u128) -> i8 {
        let mut acc = 1u128;
        let a = a % p;
        for _ in 0..(p - 1) / 2 {
            acc = acc * a % p;
        }
        match acc {
            0 => 0,
            1 => 1,
            _ => -1,
        }
    }

    #[test]
    fn jacobi_matches_euler_for_small_primes() {
        for p in [3u128, 5, 7, 11, 13, 17, 97, 101, 113, 8191] {
            for a in 0..(2 * p + 3) {
                assert_eq!(jacobi(a, p), euler(a, p), "({a} | {p})");
            }
        }
    }

    #[test]
    fn jacobi_of_composites_is_multiplicative() {
        // (a | 15) = (a | 3)(a | 5), and 0 when they share a factor.
        for a in 0..60u128 {
            assert_eq!(jacobi(a, 15), jacobi(a, 3) * jacobi(a, 5), "a = {a}");
        }
    }

    #[test]
    fn default_prime_symbols_and_roots() {
        use crate::Fp;
        use rand::{rngs::StdRng, SeedableRng};
        let mut rng = StdRng::seed_from_u64(7);
        // p = 5 mod 8: 2 is a non-residue, -1 is a square.
        assert_eq!(Fp::modulus() % 8, 5);
        assert_eq!(Fp::from(2u64).legendre(), -1);
        assert_eq!((-Fp::ONE).legendre(), 1);
        assert_eq!(Fp::ZERO.legendre(), 0);
        assert_eq!(Fp::from(2u64).sqrt(), None);
        for _ in 0..200 {
            let x = Fp::random(&mut rng);
            let y = Fp::random(&mut rng);
            let sq = x.square();
            let r = sq.sqrt().expect("a square has a root");
            assert!(r == x || r == -x);
            assert_eq!(sq.legendre(), if x.is_zero() { 0 } else { 1 });
            // Multiplicativity, and agreement with Euler's criterion.
            assert_eq!((x * y).legendre(), x.legendre() * y.legendre());
            let euler = x.pow_u128((Fp::modulus() - 1) / 2);
            assert_eq!(euler == Fp::ONE, x.legendre() == 1);
        }
    }
}
