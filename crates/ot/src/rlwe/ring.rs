//! The ring `R_q = Z_q[X]/(X^512 + 1)` with `q = 15361`, and its negacyclic
//! number-theoretic transform (NTT).
//!
//! Since `q - 1 = 15360 = 1024 * 15`, `Z_q` holds a primitive 1024-th root of
//! unity `psi`, so `X^512 + 1` splits completely into linear factors and the
//! NTT turns ring multiplication into coefficient-wise multiplication.
//!
//! Arithmetic is on `i16` lanes in the style of Kyber's reference code:
//! signed Montgomery multiplication with `R = 2^16` and Barrett reduction.
//! Every table (twiddle factors, Montgomery constants, the generator of
//! `Z_q^*`) is computed by `const fn` from `q` and `n`; the tests check them
//! and compare the transform-based product with schoolbook multiplication.
//!
//! Representations:
//! * [`Poly`]: coefficient domain, each coefficient in `(-q, q)`;
//! * [`NttPoly`]: evaluation domain, canonical values in `[0, q)` (what is
//!   sent on the wire);
//! * [`MontNttPoly`]: evaluation domain scaled by the Montgomery factor `R`,
//!   used for secrets so that a product with an [`NttPoly`] costs a single
//!   Montgomery multiplication.
//!
//! Every operation runs in time independent of the coefficient values.

use super::ntt::{on_backend, Backend};
use zeroize::Zeroize;

/// Ring degree `n`.
pub const N: usize = 512;
/// The modulus `q`.
pub const Q: i16 = 15361;
const Q32: i32 = Q as i32;
const QU: u32 = Q as u32;
/// `(q - 1) / 2`, the reconciliation offset.
pub(crate) const HALF_Q: i16 = (Q - 1) / 2;

const fn pow_mod(base: u32, mut exp: u32) -> u32 {
    let mut result: u64 = 1;
    let mut b = (base % QU) as u64;
    while exp > 0 {
        if exp & 1 == 1 {
            result = result * b % QU as u64;
        }
        b = b * b % QU as u64;
        exp >>= 1;
    }
    result as u32
}

/// The smallest generator of `Z_q^*` (`q - 1 = 2^10 * 3 * 5`).
const fn find_generator() -> u32 {
    let mut g = 2;
    loop {
        let n = QU - 1;
        if pow_mod(g, n / 2) != 1 && pow_mod(g, n / 3) != 1 && pow_mod(g, n / 5) != 1 {
            return g;
        }
        g += 1;
    }
}

pub(crate) const GENERATOR: u32 = find_generator();
/// A primitive `2n`-th root of unity: `psi^n = -1`.
pub(crate) const PSI: u32 = pow_mod(GENERATOR, (QU - 1) / (2 * N as u32));

/// Centered representative of `x mod q` in `[-(q-1)/2, (q-1)/2]`.
const fn centered(x: u32) -> i16 {
    let x = x % QU;
    if x > (QU - 1) / 2 {
        (x as i32 - Q32) as i16
    } else {
        x as i16
    }
}

/// Montgomery form `x * 2^16 mod q`, centered.
const fn to_mont_const(x: u32) -> i16 {
    centered(((x as u64 * (1u64 << 16)) % QU as u64) as u32)
}

/// `q^{-1} mod 2^16` as a signed 16-bit value (Newton iteration).
const fn qinv() -> i16 {
    let q = QU;
    let mut inv: u32 = q; // correct to 3 bits since q is odd
    let mut i = 0;
    while i < 4 {
        inv = inv.wrapping_mul(2u32.wrapping_sub(q.wrapping_mul(inv)));
        i += 1;
    }
    (inv & 0xffff) as u16 as i16
}

pub(crate) const QINV: i16 = qinv();
/// `R^2 mod q` (centered); `fqmul(x, R2) = x * R`.
pub(crate) const R2: i16 = to_mont_const(65536 % QU);
/// Montgomery form of `n^{-1}`.
pub(crate) const N_INV_MONT: i16 = to_mont_const(pow_mod(N as u32, QU - 2));
/// Barrett constant `round(2^26 / q)`.
const BARRETT_V: i16 = (((1 << 26) + Q32 / 2) / Q32) as i16;

const fn bit_reverse_9(k: usize) -> usize {
    let mut r = 0;
    let mut i = 0;
    while i < 9 {
        r |= ((k >> i) & 1) << (8 - i);
        i += 1;
    }
    r
}

/// `ZETAS[k] = mont(psi^{brv(k)})` for `k = 1..n` (index 0 unused).
pub(crate) const ZETAS: [i16; N] = {
    let mut z = [0i16; N];
    let mut k = 1;
    while k < N {
        z[k] = to_mont_const(pow_mod(PSI, bit_reverse_9(k) as u32));
        k += 1;
    }
    z
};

/// `ZETAS_INV[k] = mont(psi^{-brv(k)})`.
pub(crate) const ZETAS_INV: [i16; N] = {
    let mut z = [0i16; N];
    let mut k = 1;
    while k < N {
        z[k] = to_mont_const(pow_mod(PSI, (2 * N - bit_reverse_9(k)) as u32));
        k += 1;
    }
    z
};

#[inline(always)]
fn mulhi(a: i16, b: i16) -> i16 {
    ((i32::from(a) * i32::from(b)) >> 16) as i16
}

/// Montgomery product `a * b * 2^{-16} mod q`, result in `(-q, q)`.
/// Requires `|a * b| < q * 2^15`.
#[inline(always)]
pub(crate) fn fqmul(a: i16, b: i16) -> i16 {
    let m = a.wrapping_mul(b).wrapping_mul(QINV);
    mulhi(a, b) - mulhi(m, Q)
}

/// Barrett reduction: a representative of `a mod q` in about `[-q/2, q/2]`.
/// `t = round(a v / 2^26)` computed as `(mulhi(a, v) + 2^9) >> 10` so that
/// every step is a 16-bit lane operation (SSE2/AVX2 `pmulhw`, `psraw`).
#[inline(always)]
pub(crate) fn barrett(a: i16) -> i16 {
    let t = (mulhi(a, BARRETT_V) + (1 << 9)) >> 10;
    a - t * Q
}

/// Maps `(-q, q)` to `[0, q)`.
#[inline(always)]
pub(crate) fn caddq(x: i16) -> i16 {
    x + ((x >> 15) & Q)
}

/// Maps `[0, 2q)` to `[0, q)`.
#[inline(always)]
pub(crate) fn csubq(x: i16) -> i16 {
    caddq(x - Q)
}

/// Forward negacyclic NTT, in place, on the backend chosen at run time.
/// Input coefficients in `(-q, q)`; output values in about `[-q/2, q/2]`,
/// in the evaluation order documented in [`super::ntt`].
pub(crate) fn ntt_in_place(r: &mut [i16; N]) {
    super::ntt::forward(r);
}

/// Inverse NTT, in place, including the factor `n^{-1}`. Input values in
/// `(-q, q)`; output coefficients in `(-q, q)`.
pub(crate) fn inv_ntt_in_place(r: &mut [i16; N]) {
    super::ntt::inverse(r);
}

/// Overwrites a coefficient array with zeros.
///
/// `zeroize` writes arrays one element at a time with volatile stores (512
/// stores per polynomial, and a protocol run drops dozens of polynomials);
/// instead we do one vectorized fill and pass the array to
/// `core::hint::black_box`, which makes it observable so the compiler
/// cannot drop the fill as a dead store.
#[inline]
pub(crate) fn wipe(a: &mut [i16; N]) {
    *a = [0; N];
    core::hint::black_box(a);
}

macro_rules! poly_type {
    ($(#[$doc:meta])* $name:ident $(, $derive:ident)*) => {
        $(#[$doc])*
        #[derive(Clone $(, $derive)*)]
        pub struct $name(pub(crate) [i16; N]);

        impl Drop for $name {
            fn drop(&mut self) {
                wipe(&mut self.0);
            }
        }

        impl Zeroize for $name {
            fn zeroize(&mut self) {
                wipe(&mut self.0);
            }
        }

        impl zeroize::ZeroizeOnDrop for $name {}
    };
}

poly_type!(
    /// A polynomial in the coefficient domain; coefficients in `(-q, q)`.
    Poly, PartialEq, Eq
);
poly_type!(
    /// A polynomial in the NTT (evaluation) domain, canonical values in `[0, q)`.
    NttPoly, PartialEq, Eq
);
poly_type!(
    /// An NTT-domain polynomial multiplied by the Montgomery factor `2^16`,
    /// values in `(-q, q)`; the form in which secrets are kept.
    MontNttPoly
);

impl core::fmt::Debug for Poly {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str("Poly(..)")
    }
}
impl core::fmt::Debug for NttPoly {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str("NttPoly(..)")
    }
}
impl core::fmt::Debug for MontNttPoly {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str("MontNttPoly(..)")
    }
}

// Coefficient-wise passes. Each body is written once as plain Rust and
// marked `#[inline(always)]`; the portable backend compiles it for the
// baseline target (SSE2 on x86-64), and `lanes_avx2.rs` / `lanes_avx512.rs`
// compile the same body inside `#[target_feature]` wrappers for AVX2 and
// AVX-512, so all backends give bit-identical results. The dispatchers
// below take the backend (the methods pass [`Backend::current`]) and run
// the AVX-512 copy, else the AVX2 one, else the portable one.

/// `r <- caddq(r)`. Input in `(-q, q)`, output in `[0, q)`.
#[inline(always)]
pub(crate) fn caddq_body(r: &mut [i16; N]) {
    for x in r.iter_mut() {
        *x = caddq(*x);
    }
}

/// `r <- fqmul(r, R2) = r * 2^16`. Input in `(-q, q)`, output in `(-q, q)`.
#[inline(always)]
pub(crate) fn to_mont_body(r: &mut [i16; N]) {
    for x in r.iter_mut() {
        *x = fqmul(*x, R2);
    }
}

/// `r <- caddq(fqmul(a, b))`. `a` in `[0, q)`, `b` in `(-q, q)`; output in
/// `[0, q)`.
#[inline(always)]
pub(crate) fn mul_mont_body(r: &mut [i16; N], a: &[i16; N], b: &[i16; N]) {
    for ((o, &x), &y) in r.iter_mut().zip(a.iter()).zip(b.iter()) {
        *o = caddq(fqmul(x, y));
    }
}

/// `r <- csubq(caddq(fqmul(a, b)) + caddq(r))`. `a` in `[0, q)`, `b` and
/// `r` in `(-q, q)`; output in `[0, q)`. With `r` canonical, `caddq(r) =
/// r`, so this is also the sum of a product and a canonical value.
#[inline(always)]
pub(crate) fn mul_mont_add_body(r: &mut [i16; N], a: &[i16; N], b: &[i16; N]) {
    for ((o, &x), &y) in r.iter_mut().zip(a.iter()).zip(b.iter()) {
        *o = csubq(caddq(fqmul(x, y)) + caddq(*o));
    }
}

/// `r <- barrett(barrett(r) + barrett(y))`. Any `i16` inputs; output in
/// `(-q, q)`.
#[inline(always)]
pub(crate) fn add_reduce_body(r: &mut [i16; N], y: &[i16; N]) {
    for (x, &y) in r.iter_mut().zip(y.iter()) {
        *x = barrett(barrett(*x) + barrett(y));
    }
}

/// `r <- csubq(r + y)`. Inputs and output in `[0, q)`.
#[inline(always)]
pub(crate) fn add_canonical_body(r: &mut [i16; N], y: &[i16; N]) {
    for (x, &y) in r.iter_mut().zip(y.iter()) {
        *x = csubq(*x + y);
    }
}

/// `r <- caddq(r - (y & mask))`, `mask` either `0` or `-1`. Inputs and
/// output in `[0, q)`.
#[inline(always)]
pub(crate) fn sub_masked_body(r: &mut [i16; N], y: &[i16; N], mask: i16) {
    for (x, &y) in r.iter_mut().zip(y.iter()) {
        *x = caddq(*x - (y & mask));
    }
}

fn caddq_all(b: Backend, r: &mut [i16; N]) {
    on_backend!(b, |t| t.caddq(r), caddq_body(r))
}

fn to_mont_all(b: Backend, r: &mut [i16; N]) {
    on_backend!(b, |t| t.to_mont(r), to_mont_body(r))
}

fn mul_mont_into(b: Backend, r: &mut [i16; N], a: &[i16; N], y: &[i16; N]) {
    on_backend!(b, |t| t.mul_mont(r, a, y), mul_mont_body(r, a, y))
}

fn mul_mont_add_into(b: Backend, r: &mut [i16; N], a: &[i16; N], y: &[i16; N]) {
    on_backend!(b, |t| t.mul_mont_add(r, a, y), mul_mont_add_body(r, a, y))
}

fn add_reduce(b: Backend, r: &mut [i16; N], y: &[i16; N]) {
    on_backend!(b, |t| t.add_reduce(r, y), add_reduce_body(r, y))
}

fn add_canonical(b: Backend, r: &mut [i16; N], y: &[i16; N]) {
    on_backend!(b, |t| t.add_canonical(r, y), add_canonical_body(r, y))
}

fn sub_masked(b: Backend, r: &mut [i16; N], y: &[i16; N], mask: i16) {
    on_backend!(b, |t| t.sub_masked(r, y, mask), sub_masked_body(r, y, mask))
}

impl Poly {
    /// The zero polynomial.
    pub fn zero() -> Self {
        Poly([0; N])
    }

    /// Builds a polynomial from integer coefficients (reduced mod q).
    pub fn from_coeffs(c: &[i64; N]) -> Self {
        let mut p = [0i16; N];
        for (o, &x) in p.iter_mut().zip(c.iter()) {
            *o = x.rem_euclid(i64::from(Q)) as i16;
        }
        Poly(p)
    }

    /// Canonical coefficients in `[0, q)`.
    pub fn coeffs(&self) -> [u16; N] {
        let mut out = [0u16; N];
        for (o, &x) in out.iter_mut().zip(self.0.iter()) {
            *o = caddq(x) as u16;
        }
        out
    }

    /// Forward NTT.
    pub fn ntt(&self) -> NttPoly {
        self.ntt_on(Backend::current())
    }

    /// Forward NTT on a given backend (to compare backends: the result is
    /// the same on each); a backend this CPU lacks runs the portable code.
    /// [`Poly::ntt`] runs on [`Backend::current`].
    pub fn ntt_on(&self, backend: Backend) -> NttPoly {
        let mut out = NttPoly(self.0);
        super::ntt::forward_on(backend, &mut out.0);
        caddq_all(backend, &mut out.0);
        out
    }

    /// Forward NTT followed by scaling into Montgomery form.
    pub fn ntt_mont(&self) -> MontNttPoly {
        let mut out = MontNttPoly(self.0);
        out.ntt_mont_in_place();
        out
    }

    /// Coefficient-wise sum, reduced to `(-q, q)`.
    pub fn add_assign(&mut self, rhs: &Poly) {
        add_reduce(Backend::current(), &mut self.0, &rhs.0);
    }

    /// `INTT(p * s)` into `self` (whatever it held), without a temporary.
    pub(crate) fn set_inv_ntt_of_product(&mut self, p: &NttPoly, s: &MontNttPoly) {
        mul_mont_into(Backend::current(), &mut self.0, &p.0, &s.0);
        inv_ntt_in_place(&mut self.0);
    }
}

impl MontNttPoly {
    /// Transforms the coefficients held in `self` (in `(-q, q)`, e.g. just
    /// sampled into it) into the Montgomery-form evaluations, in place.
    pub(crate) fn ntt_mont_in_place(&mut self) {
        ntt_in_place(&mut self.0);
        to_mont_all(Backend::current(), &mut self.0);
    }
}

impl NttPoly {
    /// Wraps canonical values (each in `[0, q)`); used by decoding and
    /// hashing, which guarantee the range.
    pub(crate) fn from_canonical(v: [i16; N]) -> Self {
        debug_assert!(v.iter().all(|&x| (0..Q).contains(&x)));
        NttPoly(v)
    }

    /// The canonical values in `[0, q)`.
    pub fn values(&self) -> &[i16; N] {
        &self.0
    }

    /// Inverse NTT.
    pub fn inv_ntt(&self) -> Poly {
        self.inv_ntt_on(Backend::current())
    }

    /// Inverse NTT on a given backend (to compare backends: the result is
    /// the same on each); a backend this CPU lacks runs the portable code.
    /// [`NttPoly::inv_ntt`] runs on [`Backend::current`].
    pub fn inv_ntt_on(&self, backend: Backend) -> Poly {
        let mut out = Poly(self.0);
        super::ntt::inverse_on(backend, &mut out.0);
        out
    }

    /// `self + rhs`.
    pub fn add(&self, rhs: &NttPoly) -> NttPoly {
        let mut r = self.clone();
        r.add_assign(rhs);
        r
    }

    /// `self <- self + rhs`, in place.
    pub(crate) fn add_assign(&mut self, rhs: &NttPoly) {
        add_canonical(Backend::current(), &mut self.0, &rhs.0);
    }

    /// `self - rhs`.
    pub fn sub(&self, rhs: &NttPoly) -> NttPoly {
        let mut r = self.clone();
        sub_masked(Backend::current(), &mut r.0, &rhs.0, -1);
        r
    }

    /// `self <- self - (rhs if bit == 1 else 0)`, in place, without a
    /// branch on `bit`.
    pub(crate) fn sub_masked_assign(&mut self, rhs: &NttPoly, bit: u8) {
        sub_masked(Backend::current(), &mut self.0, &rhs.0, -i16::from(bit & 1));
    }

    /// Ring product with a Montgomery-form polynomial: a single Montgomery
    /// multiplication per coefficient.
    pub fn mul_mont(&self, rhs: &MontNttPoly) -> NttPoly {
        let mut r = NttPoly([0; N]);
        mul_mont_into(Backend::current(), &mut r.0, &self.0, &rhs.0);
        r
    }

    /// `self * rhs + add`, fused.
    #[cfg(test)]
    pub(crate) fn mul_mont_add(&self, rhs: &MontNttPoly, add: &NttPoly) -> NttPoly {
        let mut r = add.clone();
        mul_mont_add_into(Backend::current(), &mut r.0, &self.0, &rhs.0);
        r
    }

    /// Replaces the coefficients of an error `e` held in `self` (in
    /// `(-q, q)`, sampled straight into it) by the canonical `a * s +
    /// NTT(e)`, in place: the transform, then one pass that multiplies,
    /// reduces and adds.
    pub(crate) fn set_rlwe_sample(&mut self, a: &NttPoly, s: &MontNttPoly) {
        ntt_in_place(&mut self.0);
        mul_mont_add_into(Backend::current(), &mut self.0, &a.0, &s.0);
    }

    /// Ring product of two canonical NTT-domain polynomials.
    pub fn mul(&self, rhs: &NttPoly) -> NttPoly {
        self.mul_mont(&rhs.to_mont())
    }

    /// Montgomery form of `self`.
    pub fn to_mont(&self) -> MontNttPoly {
        let mut r = MontNttPoly(self.0);
        to_mont_all(Backend::current(), &mut r.0);
        r
    }
}

#[cfg(test)]
pub(crate) mod tests {
    #![allow(
        clippy::unwrap_used,
        clippy::expect_used,
        clippy::panic,
        clippy::needless_range_loop
    )]
    use super::*;
    use rand_chacha::ChaCha20Rng;
    use rand_core::{RngCore, SeedableRng};

    pub(crate) fn schoolbook(a: &[u16; N], b: &[u16; N]) -> [u16; N] {
        let mut acc = [0i64; N];
        for i in 0..N {
            for j in 0..N {
                let p = i64::from(a[i]) * i64::from(b[j]);
                if i + j < N {
                    acc[i + j] += p;
                } else {
                    acc[i + j - N] -= p;
                }
            }
        }
        let mut out = [0u16; N];
        for (o, x) in out.iter_mut().zip(acc) {
            *o = x.rem_euclid(i64::from(Q)) as u16;
        }
        out
    }

    pub(crate) fn random_poly(rng: &mut impl RngCore) -> Poly {
        let mut c = [0i64; N];
        for x in c.iter_mut() {
            *x = i64::from(rng.next_u32() % QU);
        }
        Poly::from_coeffs(&c)
    }

    struct Lcg(u64);

    impl Lcg {
        fn next(&mut self) -> u32 {
            self.0 = self
                .0
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1);
            (self.0 >> 32) as u32
        }

        /// Values in `[lo, hi]`: random ones in some rounds, the limits
        /// and their neighbours in the others.
        fn poly(&mut self, round: usize, lo: i16, hi: i16) -> [i16; N] {
            let edges = [lo, hi, lo + 1, hi - 1, 0, 1, -1, lo / 2, hi / 2];
            let span = (i32::from(hi) - i32::from(lo) + 1) as u32;
            core::array::from_fn(|i| {
                let w = self.next();
                match round % 4 {
                    0 | 1 => (i32::from(lo) + (w % span) as i32) as i16,
                    2 => edges[(w as usize + i) % edges.len()].clamp(lo, hi),
                    _ => [lo, hi][(w & 1) as usize],
                }
            })
        }
    }

    /// Every coefficient-wise pass gives the portable result on every
    /// backend this CPU runs, on random values and on the limits of its
    /// documented input range.
    #[test]
    fn pointwise_backends_agree() {
        const M: i16 = Q - 1;
        for backend in super::super::ntt::tests::skip_missing() {
            let mut g = Lcg(11);
            for round in 0..400 {
                let sym = g.poly(round, -M, M);
                let can = g.poly(round, 0, M);
                let can2 = g.poly(round + 1, 0, M);
                let any = g.poly(round, i16::MIN, i16::MAX);
                let any2 = g.poly(round + 2, i16::MIN, i16::MAX);
                let check = |name: &str,
                             r0: [i16; N],
                             op: &dyn Fn(Backend, &mut [i16; N]),
                             portable: &dyn Fn(&mut [i16; N])| {
                    let (mut a, mut b) = (r0, r0);
                    op(backend, &mut a);
                    portable(&mut b);
                    assert_eq!(a, b, "{name}, {backend}, round {round}");
                };
                check("caddq", sym, &caddq_all, &|r| caddq_body(r));
                check("to_mont", sym, &to_mont_all, &|r| to_mont_body(r));
                check(
                    "mul_mont",
                    any,
                    &|b, r| mul_mont_into(b, r, &can, &sym),
                    &|r| mul_mont_body(r, &can, &sym),
                );
                for acc in [sym, can2] {
                    check(
                        "mul_mont_add",
                        acc,
                        &|b, r| mul_mont_add_into(b, r, &can, &sym),
                        &|r| mul_mont_add_body(r, &can, &sym),
                    );
                }
                check("add_reduce", any, &|b, r| add_reduce(b, r, &any2), &|r| {
                    add_reduce_body(r, &any2)
                });
                check(
                    "add_canonical",
                    can,
                    &|b, r| add_canonical(b, r, &can2),
                    &|r| add_canonical_body(r, &can2),
                );
                for mask in [0, -1] {
                    check(
                        "sub_masked",
                        can,
                        &|b, r| sub_masked(b, r, &can2, mask),
                        &|r| sub_masked_body(r, &can2, mask),
                    );
                }
            }
        }
    }

    /// The public per-backend transforms agree with the current backend's.
    #[test]
    fn ntt_on_every_backend() {
        let mut rng = ChaCha20Rng::seed_from_u64(5);
        let a = random_poly(&mut rng);
        let hat = a.ntt();
        for backend in Backend::ALL {
            assert_eq!(a.ntt_on(backend), hat, "{backend}");
            assert_eq!(hat.inv_ntt_on(backend), hat.inv_ntt(), "{backend}");
        }
    }

    #[test]
    fn constants() {
        for p in [2, 3, 5] {
            assert_ne!(
                pow_mod(GENERATOR, (QU - 1) / p),
                1,
                "generator has full order"
            );
        }
        assert_eq!(pow_mod(GENERATOR, QU - 1), 1);
        assert_eq!(pow_mod(PSI, N as u32), QU - 1, "psi^n = -1");
        assert_eq!(pow_mod(PSI, 2 * N as u32), 1);
        assert_eq!((i32::from(QINV) * Q32) & 0xffff, 1);
        assert_eq!(
            i64::from(R2).rem_euclid(i64::from(Q)),
            (65536i64 * 65536) % i64::from(Q)
        );
        assert_eq!(
            (i64::from(N_INV_MONT) * N as i64).rem_euclid(i64::from(Q)),
            65536 % i64::from(Q)
        );
        // zeta * zeta_inv = 1 (both in Montgomery form: product is R^2).
        for k in 1..N {
            let p = i64::from(ZETAS[k]) * i64::from(ZETAS_INV[k]);
            assert_eq!(
                p.rem_euclid(i64::from(Q)),
                (65536i64 * 65536) % i64::from(Q)
            );
        }
    }

    #[test]
    fn reductions() {
        for a in i16::MIN..=i16::MAX {
            let b = barrett(a);
            assert!(b.abs() <= Q / 2 + 1, "{a} -> {b}");
            assert_eq!((i32::from(a) - i32::from(b)).rem_euclid(Q32), 0);
        }
        let mut rng = ChaCha20Rng::seed_from_u64(1);
        for _ in 0..100_000 {
            let a = (rng.next_u32() % (2 * QU - 1)) as i32 - (Q32 - 1);
            let b = (rng.next_u32() % QU) as i32 - Q32 / 2;
            let r = fqmul(a as i16, b as i16);
            assert!(r.abs() < Q);
            let lhs = (i64::from(r) * 65536).rem_euclid(i64::from(Q));
            assert_eq!(lhs, (i64::from(a) * i64::from(b)).rem_euclid(i64::from(Q)));
        }
    }

    #[test]
    fn ntt_round_trip() {
        let mut rng = ChaCha20Rng::seed_from_u64(2);
        for _ in 0..50 {
            let a = random_poly(&mut rng);
            assert_eq!(a.ntt().inv_ntt().coeffs(), a.coeffs());
        }
        // Extreme inputs: every coefficient q-1 or -(q-1).
        let a = Poly([Q - 1; N]);
        assert_eq!(a.ntt().inv_ntt().coeffs(), a.coeffs());
        let a = Poly([-(Q - 1); N]);
        assert_eq!(a.ntt().inv_ntt().coeffs(), a.coeffs());
    }

    #[test]
    fn ntt_of_x_is_evaluation() {
        // NTT(X) must hold the odd powers of psi (in the transform's order).
        let mut c = [0i64; N];
        c[1] = 1;
        let x = Poly::from_coeffs(&c).ntt();
        let mut seen: Vec<u32> = x.values().iter().map(|&v| v as u32).collect();
        seen.sort_unstable();
        let mut want: Vec<u32> = (0..N as u32).map(|i| pow_mod(PSI, 2 * i + 1)).collect();
        want.sort_unstable();
        assert_eq!(seen, want);
    }

    #[test]
    fn product_matches_schoolbook() {
        let mut rng = ChaCha20Rng::seed_from_u64(3);
        for _ in 0..5 {
            let a = random_poly(&mut rng);
            let b = random_poly(&mut rng);
            let want = schoolbook(&a.coeffs(), &b.coeffs());
            assert_eq!(a.ntt().mul(&b.ntt()).inv_ntt().coeffs(), want);
            assert_eq!(a.ntt().mul_mont(&b.ntt_mont()).inv_ntt().coeffs(), want);
        }
        // Negacyclic wrap: X^511 * X = -1.
        let mut c = [0i64; N];
        c[N - 1] = 1;
        let a = Poly::from_coeffs(&c);
        let mut c = [0i64; N];
        c[1] = 1;
        let b = Poly::from_coeffs(&c);
        let mut want = [0u16; N];
        want[0] = (Q - 1) as u16;
        assert_eq!(a.ntt().mul(&b.ntt()).inv_ntt().coeffs(), want);
    }

    #[test]
    fn add_sub() {
        let mut rng = ChaCha20Rng::seed_from_u64(4);
        let a = random_poly(&mut rng).ntt();
        let b = random_poly(&mut rng).ntt();
        assert_eq!(a.add(&b).sub(&b), a);
        let mut c = a.clone();
        c.sub_masked_assign(&b, 0);
        assert_eq!(c, a);
        c.sub_masked_assign(&b, 1);
        assert_eq!(c, a.sub(&b));
        let mut c = a.clone();
        c.add_assign(&b);
        assert_eq!(c, a.add(&b));
        let e = random_poly(&mut rng);
        let s = random_poly(&mut rng);
        assert_eq!(
            a.mul_mont_add(&s.ntt_mont(), &b),
            a.mul_mont(&s.ntt_mont()).add(&b)
        );
        let mut p = NttPoly(e.0);
        p.set_rlwe_sample(&a, &s.ntt_mont());
        assert_eq!(p, a.mul_mont(&s.ntt_mont()).add(&e.ntt()));
        let mut k = random_poly(&mut rng);
        k.set_inv_ntt_of_product(&a, &s.ntt_mont());
        assert_eq!(k, a.mul_mont(&s.ntt_mont()).inv_ntt());
        let mut x = random_poly(&mut rng);
        let y = x.clone();
        x.add_assign(&e);
        let mut sum = [0i64; N];
        for i in 0..N {
            sum[i] = i64::from(y.coeffs()[i]) + i64::from(e.coeffs()[i]);
        }
        assert_eq!(x.coeffs(), Poly::from_coeffs(&sum).coeffs());
    }
}
