//! Prime fields `F_p`, `p < 2^128`: the [`PrimeField`] trait shared by the specialised
//! [`crate::Fp`] (`p = 2^127+45`) and the run-time prime field [`crate::FpRt`], with the
//! number theory the PRFs need (and [`is_prime`] for run-time moduli): the Legendre symbol by a binary Jacobi algorithm (no
//! exponentiation), square roots (Atkin's formula for `p ≡ 5 (mod 8)`, `(p+1)/4`-power for
//! `p ≡ 3 (mod 4)`, Tonelli-Shanks otherwise) and exponentiation.
//!
//! Everything here is meant for **public** values (opened, masked): the Jacobi algorithm and
//! Tonelli-Shanks branch on the value.

use crate::fp_rt::Modulus;
use crate::{Bulk, Encode, Field, Random};

/// The wire format of both prime fields: one 16-byte little-endian word per element.
pub(crate) fn encode_words(words: impl ExactSizeIterator<Item = u128>, out: &mut Vec<u8>) {
    out.reserve(words.len().saturating_mul(16));
    for w in words {
        out.extend_from_slice(&w.to_le_bytes());
    }
}

/// Strict decoding of [`encode_words`]: exactly `16 * out.len()` bytes, each word accepted by
/// `element` (which returns `None` for a value outside the field).
pub(crate) fn decode_words<T>(
    bytes: &[u8],
    out: &mut [T],
    field: &'static str,
    mut element: impl FnMut(u128) -> Option<T>,
) -> Result<(), crate::FieldError> {
    let expected = out.len().saturating_mul(16);
    if bytes.len() != expected {
        return Err(crate::FieldError::LengthMismatch {
            expected,
            got: bytes.len(),
        });
    }
    let (words, _) = bytes.as_chunks::<16>();
    for (o, w) in out.iter_mut().zip(words) {
        *o = element(u128::from_le_bytes(*w)).ok_or(crate::FieldError::OutOfRange { field })?;
    }
    Ok(())
}

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
        // The closed formulas give a root exactly when one exists, which the final check
        // decides (cheaper than a Legendre symbol first); Tonelli-Shanks needs a square.
        let r = if p % 4 == 3 {
            self.pow_u128(p / 4 + 1)
        } else if p % 8 == 5 {
            // Atkin: v = (2a)^((p-5)/8), i = 2 a v^2 (a square root of -1), r = a v (i - 1).
            let two_a = self + self;
            let v = two_a.pow_u128(p / 8);
            let i = two_a * v.square();
            self * v * (i - Self::ONE)
        } else {
            if self.legendre() != 1 {
                return None;
            }
            tonelli_shanks(self)?
        };
        (r.square() == self).then_some(r)
    }
}

/// The Jacobi symbol `(a | n)` for odd `n`, by the binary algorithm (shifts, swaps and
/// subtractions; no division except the initial reduction). Returns 0 when `gcd(a, n) > 1`.
/// Runs on 128-bit words until both values fit 64 bits, then on 64-bit words. The sign is
/// kept as a parity bit: (2 | n) = -1 iff `n ≡ 3, 5 (mod 8)` (bit 1 xor bit 2 of `n`), and
/// reciprocity flips it iff both values are `≡ 3 (mod 4)` (bit 1 of both).
pub fn jacobi(a: u128, n: u128) -> i8 {
    debug_assert!(n & 1 == 1);
    let mut a = a % n;
    let mut n = n;
    let mut t: u32 = 0;
    while a != 0 {
        if (a | n) >> 64 == 0 {
            return jacobi_u64(a as u64, n as u64, t);
        }
        let z = a.trailing_zeros();
        a >>= z;
        t ^= z & (((n >> 1) ^ (n >> 2)) as u32) & 1;
        if a < n {
            core::mem::swap(&mut a, &mut n);
            t ^= ((a & n) >> 1) as u32 & 1;
        }
        a -= n;
    }
    sign(n == 1, t)
}

/// The 64-bit tail of [`jacobi`], continuing with the sign parity `t`.
fn jacobi_u64(mut a: u64, mut n: u64, mut t: u32) -> i8 {
    while a != 0 {
        let z = a.trailing_zeros();
        a >>= z;
        t ^= z & (((n >> 1) ^ (n >> 2)) as u32) & 1;
        if a < n {
            core::mem::swap(&mut a, &mut n);
            t ^= ((a & n) >> 1) as u32 & 1;
        }
        a -= n;
    }
    sign(n == 1, t)
}

/// 0 unless the gcd is 1, else `(-1)^t`.
fn sign(unit: bool, t: u32) -> i8 {
    if !unit {
        0
    } else if t & 1 == 1 {
        -1
    } else {
        1
    }
}

/// The primes below 100, for trial division.
const SMALL_PRIMES: [u128; 25] = [
    2, 3, 5, 7, 11, 13, 17, 19, 23, 29, 31, 37, 41, 43, 47, 53, 59, 61, 67, 71, 73, 79, 83, 89, 97,
];

/// `ψ_13` (Sorenson and Webster, "Strong pseudoprimes to twelve prime bases", Math. Comp. 86,
/// 2017): the least strong pseudoprime to all 13 prime bases `2..=41`; Miller-Rabin with those
/// bases is deterministic below it (about `2^81.5`).
const PSI13: u128 = 3_317_044_064_679_887_385_961_981;

/// Primality of `n < 2^128`: trial division by the primes below 100, Miller-Rabin to the 13
/// prime bases `2..=41` (a proof below `ψ_13 = 3317044064679887385961981 ≈ 2^81.5`), and from
/// `ψ_13` on additionally the strong Lucas test with Selfridge's parameters, which with the
/// base-2 test is the Baillie-PSW test (no counterexample known; none below `2^64`). Meant
/// for public values (run-time moduli): it branches and divides.
pub fn is_prime(n: u128) -> bool {
    if n < 2 {
        return false;
    }
    for q in SMALL_PRIMES {
        if n.is_multiple_of(q) {
            return n == q;
        }
    }
    if n < 100 * 100 {
        return true;
    }
    let Some(m) = Modulus::new(n) else {
        return false;
    };
    if !SMALL_PRIMES[..13].iter().all(|&a| miller_rabin(&m, n, a)) {
        return false;
    }
    n < PSI13 || strong_lucas(&m, n)
}

/// The strong probable-prime test to base `a` (`2 <= a < n`, `n` odd).
fn miller_rabin(m: &Modulus, n: u128, a: u128) -> bool {
    let t = (n - 1).trailing_zeros();
    let mut x = m.pow(a, (n - 1) >> t);
    if x == 1 || x == n - 1 {
        return true;
    }
    for _ in 1..t {
        x = m.mul(x, x);
        if x == n - 1 {
            return true;
        }
    }
    false
}

/// The strong Lucas probable-prime test with Selfridge's method A (the first `D` in
/// `5, -7, 9, -11, ...` with `(D | n) = -1`, `P = 1`, `Q = (1 - D)/4`), for odd `n` with no
/// prime factor below 100. Baillie and Wagstaff, "Lucas pseudoprimes", Math. Comp. 35, 1980.
fn strong_lucas(m: &Modulus, n: u128) -> bool {
    // A square never gives (D | n) = -1.
    if n.isqrt() * n.isqrt() == n {
        return false;
    }
    // Residues of small signed integers.
    let residue = |v: i128| {
        if v >= 0 {
            m.reduce(v.unsigned_abs())
        } else {
            m.sub(0, m.reduce(v.unsigned_abs()))
        }
    };
    let mut d: i128 = 5;
    loop {
        match jacobi(residue(d), n) {
            -1 => break,
            // gcd(D, n) > 1 with |D| < n.
            0 if d.unsigned_abs() < n => return false,
            _ => {}
        }
        d = if d > 0 { -(d + 2) } else { -d + 2 };
    }
    let (dm, q) = (residue(d), residue((1 - d) / 4));
    // (x / 2) mod n for x < n, n odd.
    let half = |x: u128| {
        if x & 1 == 0 {
            x >> 1
        } else {
            (x >> 1) + (n >> 1) + 1
        }
    };
    // n + 1 = k·2^t, k odd (n < 2^128 - 1: n has no factor 3).
    let np1 = n.wrapping_add(1);
    let t = np1.trailing_zeros();
    let k = np1 >> t;
    // U_1 = 1, V_1 = P = 1; doubling U_2j = U_j V_j, V_2j = V_j^2 - 2Q^j; increment
    // U_j+1 = (P U_j + V_j)/2, V_j+1 = (D U_j + P V_j)/2.
    let (mut u, mut v, mut qk) = (1u128, 1u128, q);
    for i in (0..(127 - k.leading_zeros())).rev() {
        u = m.mul(u, v);
        v = m.sub(m.mul(v, v), m.add(qk, qk));
        qk = m.mul(qk, qk);
        if (k >> i) & 1 == 1 {
            let (u1, v1) = (m.add(u, v), m.add(m.mul(dm, u), v));
            u = half(u1);
            v = half(v1);
            qk = m.mul(qk, q);
        }
    }
    if u == 0 || v == 0 {
        return true;
    }
    for _ in 1..t {
        v = m.sub(m.mul(v, v), m.add(qk, qk));
        qk = m.mul(qk, qk);
        if v == 0 {
            return true;
        }
    }
    false
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

    fn sieve(n: usize) -> Vec<bool> {
        let mut p = vec![true; n];
        p[0] = false;
        p[1] = false;
        for i in 2..n {
            if p[i] {
                for j in (i * i..n).step_by(i) {
                    p[j] = false;
                }
            }
        }
        p
    }

    #[test]
    fn is_prime_matches_a_sieve() {
        let s = sieve(300_000);
        for (n, &p) in s.iter().enumerate() {
            assert_eq!(is_prime(n as u128), p, "n = {n}");
        }
    }

    /// The odd composites below 10^5 that pass the strong Lucas test with Selfridge's
    /// parameters (OEIS A217255).
    const STRONG_LUCAS_PSEUDOPRIMES: [u128; 12] = [
        5459, 5777, 10877, 16109, 18971, 22499, 24569, 25199, 40309, 58519, 75077, 97439,
    ];

    #[test]
    fn strong_lucas_alone_matches_the_known_pseudoprimes() {
        let s = sieve(100_000);
        let mut liars = Vec::new();
        for n in (101..100_000u128).step_by(2) {
            let m = Modulus::new(n).unwrap();
            let probable = strong_lucas(&m, n);
            if s[n as usize] {
                assert!(probable, "prime {n} failed");
            } else if probable {
                liars.push(n);
            }
        }
        assert_eq!(liars, STRONG_LUCAS_PSEUDOPRIMES);
        // And the base-2 test rejects every one of them (no BPSW counterexample here).
        for n in STRONG_LUCAS_PSEUDOPRIMES {
            assert!(!miller_rabin(&Modulus::new(n).unwrap(), n, 2), "{n}");
        }
    }

    #[test]
    fn strong_lucas_accepts_large_primes() {
        for p in [
            (1u128 << 61) - 1,
            (1 << 64) - 59,
            (1 << 127) - 1,
            (1 << 127) + 45,
            u128::MAX - 158,
        ] {
            assert!(strong_lucas(&Modulus::new(p).unwrap(), p), "{p}");
        }
    }

    #[test]
    fn miller_rabin_liars_are_rejected() {
        // Strong pseudoprimes to base 2 (3215031751 to bases 2, 3, 5, 7), ψ_12 (to all prime
        // bases up to 37), ψ_13 (up to 41: only the Lucas test rejects it).
        let psi12: u128 = 318_665_857_834_031_151_167_461;
        for n in [
            2047u128,
            3277,
            4033,
            4681,
            8321,
            3_215_031_751,
            psi12,
            PSI13,
        ] {
            assert!(miller_rabin(&Modulus::new(n).unwrap(), n, 2), "{n}");
            assert!(!is_prime(n), "{n}");
        }
        for a in [2u128, 3, 5, 7, 11, 13, 17, 19, 23, 29, 31, 37, 41] {
            assert!(miller_rabin(&Modulus::new(PSI13).unwrap(), PSI13, a));
        }
        assert!(!strong_lucas(&Modulus::new(PSI13).unwrap(), PSI13));
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
