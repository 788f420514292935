//! The prime field `F_p`, `p = 2^127+45` (for the PRFs over `F_p`).
//!
//! Elements are kept fully reduced in a `u128`. Reduction uses `2^128 ≡ -90 (mod p)`
//! (since `2^128 = 2p - 90`). All arithmetic is branch-free: the `const fn` forms select by
//! masks, and the run-time forms behind the operators and [`Bulk`] select with
//! [`core::hint::select_unpredictable`], since the compiler turns mask selects into branches,
//! which random operands mispredict about half of the time (`lerp_assign_slice` ran at 50
//! instead of 108 Melem/s).
//!
//! The [`Bulk`] slice operations run eight elements at a time on AVX-512 IFMA where the active
//! backend is `gfni-avx512` and the CPU has IFMA (`backend/fp_ifma.rs`; `Fp::*_with` picks a
//! backend explicitly): 2.1-2.5 times the portable code's elements per second for products and
//! lines, 4.5-5 times for inner products (criterion `fp` bench, 4096 elements).

use core::hint::select_unpredictable;

use zeroize::Zeroize;

#[cfg(target_arch = "x86_64")]
use crate::backend::cast::fp_as_words_mut;
#[cfg(target_arch = "x86_64")]
use crate::backend::fp_ifma;
use crate::backend::Backend;
use crate::{Bulk, Encode, Field, FieldError, Random};

/// `p = 2^127 + 45`.
const P: u128 = (1u128 << 127) + 45;
/// `2^128 - p = 2^127 - 45 ≡ 2^128`.
const TWO128_MOD_P: u128 = (1u128 << 127) - 45;
const M64: u128 = u64::MAX as u128;

/// An element of `F_p`, `p = 2^127+45`, always in `[0, p)`.
#[derive(Clone, Copy, Default, PartialEq, Eq, Hash, PartialOrd, Ord, Zeroize)]
#[repr(transparent)]
pub struct Fp(u128);

impl core::fmt::Debug for Fp {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        write!(f, "Fp({})", self.0)
    }
}

impl core::fmt::Display for Fp {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        write!(f, "{}", self.0)
    }
}

/// All ones if `bit` is 1, else 0.
#[inline]
const fn mask(bit: bool) -> u128 {
    0u128.wrapping_sub(bit as u128)
}

/// `x mod p` for `x < 2^128` (< 2p): one conditional subtraction.
#[inline]
const fn reduce_once(x: u128) -> u128 {
    let (d, borrow) = x.overflowing_sub(P);
    let keep = mask(borrow);
    (x & keep) | (d & !keep)
}

/// `(hi * 2^128 + lo) mod p` for any `hi`, `lo`.
#[inline]
const fn reduce256(hi: u128, lo: u128) -> u128 {
    // 90 * hi = t1 * 2^128 + t0, with t1 < 2^7.
    let c0 = (hi & M64) * 90;
    let c1 = (hi >> 64) * 90;
    let t0 = hi.wrapping_mul(90);
    let t1 = (c1 + (c0 >> 64)) >> 64;
    // x ≡ lo - 90 hi = lo - t0 - t1 2^128 ≡ lo - t0 + 90 t1; a borrow in lo - t0 is
    // another -2^128 ≡ +90.
    let (s, borrow) = lo.overflowing_sub(t0);
    let u = 90 * (t1 + borrow as u128);
    // x ≡ s + u with u < 2^14; a carry is 2^128 ≡ 2^127 - 45 (and then v < u, no overflow).
    let (v, carry) = s.overflowing_add(u);
    let w = v + (TWO128_MOD_P & mask(carry));
    reduce_once(w)
}

/// [`reduce_once`] at run time, with a select the compiler keeps branch-free.
#[inline(always)]
fn reduce_once_rt(x: u128) -> u128 {
    let (d, borrow) = x.overflowing_sub(P);
    select_unpredictable(borrow, x, d)
}

/// [`reduce256`] at run time: the same value with branch-free selects, and `90 hi` from its
/// two 64-bit halves (two products instead of a second 128-bit multiplication).
#[inline(always)]
fn reduce256_rt(hi: u128, lo: u128) -> u128 {
    let c0 = (hi & M64) * 90;
    let c1 = (hi >> 64) * 90;
    // 90 hi = c0 + c1 2^64 = t1 2^128 + t0.
    let (t0, c) = c0.overflowing_add(c1 << 64);
    let t1 = (c1 >> 64) + c as u128;
    let (s, borrow) = lo.overflowing_sub(t0);
    let u = 90 * (t1 + borrow as u128);
    let (v, carry) = s.overflowing_add(u);
    reduce_once_rt(v + select_unpredictable(carry, TWO128_MOD_P, 0))
}

/// `a + b mod p` at run time (as [`Fp::const_add`]).
#[inline(always)]
fn add_rt(a: u128, b: u128) -> u128 {
    let (s, carry) = a.overflowing_add(b);
    let (d, borrow) = s.overflowing_sub(P);
    select_unpredictable(carry | !borrow, d, s)
}

/// `a - b mod p` at run time (as [`Fp::const_sub`]).
#[inline(always)]
fn sub_rt(a: u128, b: u128) -> u128 {
    let (d, borrow) = a.overflowing_sub(b);
    d.wrapping_add(select_unpredictable(borrow, P, 0))
}

/// `a b mod p` at run time (as [`Fp::const_mul`]).
#[inline(always)]
fn mul_rt(a: u128, b: u128) -> u128 {
    let (hi, lo) = mul_wide(a, b);
    reduce256_rt(hi, lo)
}

/// The full 256-bit product of two 128-bit values, as `(hi, lo)`.
#[inline]
const fn mul_wide(a: u128, b: u128) -> (u128, u128) {
    let (a0, a1) = (a & M64, a >> 64);
    let (b0, b1) = (b & M64, b >> 64);
    let ll = a0 * b0;
    let (mid, mid_carry) = (a0 * b1).overflowing_add(a1 * b0);
    let (lo, lo_carry) = ll.overflowing_add(mid << 64);
    let hi = a1 * b1 + (mid >> 64) + ((mid_carry as u128) << 64) + lo_carry as u128;
    (hi, lo)
}

impl Fp {
    /// The modulus `p = 2^127+45`.
    pub const MODULUS: u128 = P;

    /// The element `v`, if `v < p`.
    pub const fn new(v: u128) -> Option<Self> {
        if v < P {
            Some(Self(v))
        } else {
            None
        }
    }

    /// `v mod p`.
    pub const fn from_u128_reduced(v: u128) -> Self {
        Self(reduce_once(v))
    }

    /// A small integer.
    pub const fn from_u64(v: u64) -> Self {
        Self(v as u128)
    }

    /// The representative in `[0, p)`.
    pub const fn value(self) -> u128 {
        self.0
    }

    /// Sum (same as `+`), usable in constant expressions.
    pub const fn const_add(self, rhs: Self) -> Self {
        let (s, carry) = self.0.overflowing_add(rhs.0);
        // With a carry the true sum s + 2^128 is in [2^128, 2p): subtract p once (mod 2^128).
        let (d, borrow) = s.overflowing_sub(P);
        let take_d = mask(carry | !borrow);
        Self((d & take_d) | (s & !take_d))
    }

    /// Difference (same as `-`), usable in constant expressions.
    pub const fn const_sub(self, rhs: Self) -> Self {
        let (d, borrow) = self.0.overflowing_sub(rhs.0);
        Self(d.wrapping_add(P & mask(borrow)))
    }

    /// Product (same as `*`), usable in constant expressions.
    pub const fn const_mul(self, rhs: Self) -> Self {
        let (hi, lo) = mul_wide(self.0, rhs.0);
        Self(reduce256(hi, lo))
    }

    /// `self^e` (with `0^0 = 1`). The exponent is treated as public.
    pub const fn pow(self, e: u128) -> Self {
        let mut result = Self(1);
        let mut base = self;
        let mut e = e;
        while e > 0 {
            if e & 1 == 1 {
                result = result.const_mul(base);
            }
            base = base.const_mul(base);
            e >>= 1;
        }
        result
    }
}

impl core::ops::Add for Fp {
    type Output = Self;
    #[inline]
    fn add(self, rhs: Self) -> Self {
        Self(add_rt(self.0, rhs.0))
    }
}
impl core::ops::AddAssign for Fp {
    #[inline]
    fn add_assign(&mut self, rhs: Self) {
        self.0 = add_rt(self.0, rhs.0);
    }
}
impl core::ops::Sub for Fp {
    type Output = Self;
    #[inline]
    fn sub(self, rhs: Self) -> Self {
        Self(sub_rt(self.0, rhs.0))
    }
}
impl core::ops::SubAssign for Fp {
    #[inline]
    fn sub_assign(&mut self, rhs: Self) {
        self.0 = sub_rt(self.0, rhs.0);
    }
}
impl core::ops::Neg for Fp {
    type Output = Self;
    #[inline]
    fn neg(self) -> Self {
        Self(sub_rt(0, self.0))
    }
}
impl core::ops::Mul for Fp {
    type Output = Self;
    #[inline]
    fn mul(self, rhs: Self) -> Self {
        Self(mul_rt(self.0, rhs.0))
    }
}
impl core::ops::MulAssign for Fp {
    #[inline]
    fn mul_assign(&mut self, rhs: Self) {
        self.0 = mul_rt(self.0, rhs.0);
    }
}
impl core::iter::Sum for Fp {
    fn sum<I: Iterator<Item = Self>>(iter: I) -> Self {
        iter.fold(Self(0), |a, b| a + b)
    }
}
impl<'a> core::iter::Sum<&'a Fp> for Fp {
    fn sum<I: Iterator<Item = &'a Self>>(iter: I) -> Self {
        iter.fold(Self(0), |a, b| a + *b)
    }
}
impl core::iter::Product for Fp {
    fn product<I: Iterator<Item = Self>>(iter: I) -> Self {
        iter.fold(Self(1), |a, b| a * b)
    }
}

impl From<u64> for Fp {
    fn from(v: u64) -> Self {
        Self::from_u64(v)
    }
}

impl Field for Fp {
    const NAME: &'static str = "F_p (p = 2^127 + 45)";
    const ZERO: Self = Self(0);
    const ONE: Self = Self(1);
    const CHARACTERISTIC_TWO: bool = false;

    /// Fermat: `x^(p-2)` (127 squarings, fixed exponent), so `0 ↦ 0`.
    fn inverse(self) -> Self {
        self.pow(P - 2)
    }
}

/// 16 bytes per element, little-endian; decoding rejects values `>= p` with
/// [`FieldError::OutOfRange`].
impl Encode for Fp {
    fn encoded_len(n: usize) -> usize {
        n.saturating_mul(16)
    }
    fn encode_slice(src: &[Self], out: &mut Vec<u8>) {
        if cfg!(target_endian = "little") {
            // The wire format is the memory of the words: one copy.
            out.extend_from_slice(crate::backend::cast::fp_as_bytes(src));
        } else {
            crate::prime::encode_words(src.iter().map(|x| x.0), out);
        }
    }
    // Decoding copies every word and then checks them all at once (branch-free, so it
    // vectorises) instead of testing each word as it is read.
    fn decode_slice(bytes: &[u8], out: &mut [Self]) -> Result<(), FieldError> {
        let words = fp_words(bytes, out.len())?;
        for (o, w) in out.iter_mut().zip(words) {
            *o = Self(u128::from_le_bytes(*w));
        }
        all_below_p(out)
    }
    /// Extends `out` straight from the words (no zero fill first).
    fn decode_append(bytes: &[u8], n: usize, out: &mut Vec<Self>) -> Result<(), FieldError> {
        let words = fp_words(bytes, n)?;
        let at = out.len();
        out.extend(words.iter().map(|w| Self(u128::from_le_bytes(*w))));
        let res = all_below_p(&out[at..]);
        if res.is_err() {
            out.truncate(at);
        }
        res
    }
}

/// The `n` 16-byte words of an `F_p` encoding, or a length error.
fn fp_words(bytes: &[u8], n: usize) -> Result<&[[u8; 16]], FieldError> {
    let expected = Fp::encoded_len(n);
    if bytes.len() != expected {
        return Err(FieldError::LengthMismatch {
            expected,
            got: bytes.len(),
        });
    }
    Ok(bytes.as_chunks::<16>().0)
}

/// `Ok` if every decoded word is below `p` (a canonical element), else the range error.
fn all_below_p(xs: &[Fp]) -> Result<(), FieldError> {
    if xs.iter().fold(false, |bad, x| bad | (x.0 >= P)) {
        return Err(FieldError::OutOfRange { field: Fp::NAME });
    }
    Ok(())
}

/// Sampling without rejection: 16 bytes read little-endian with the top bit cleared, a value
/// below `2^127 < p`. The distribution misses the 45 values in `[2^127, p)`: statistical
/// distance `45/p < 2^-121` from uniform, negligible for every use (masks, zero-sharings,
/// check coefficients), and it halves the PRG output per element against rejection sampling
/// (which accepts about half of the 128-bit draws). Branch-free; `fill_random` draws all
/// bytes with one call, so large requests use the PRG's parallel fill.
impl Random for Fp {
    fn random<R: rand_core::RngCore + ?Sized>(rng: &mut R) -> Self {
        let mut b = [0u8; 16];
        rng.fill_bytes(&mut b);
        Self(u128::from_le_bytes(b) >> 1)
    }

    fn fill_random<R: rand_core::RngCore + ?Sized>(rng: &mut R, out: &mut [Self]) {
        // Straight into the elements (no scratch allocation), then each 16-byte word read
        // little-endian and halved, as in `random`.
        rng.fill_bytes(crate::backend::cast::fp_as_bytes_mut(out));
        for o in out.iter_mut() {
            o.0 = u128::from_le(o.0) >> 1;
        }
    }
}

/// `2^256 mod p = (2^128 mod p)^2 = (-90)^2`.
const TWO256_MOD_P: u128 = 8100;

/// An exact sum of 256-bit products: `top · 2^256 + hi · 2^128 + lo`.
#[derive(Default)]
struct Wide {
    lo: u128,
    hi: u128,
    top: u128,
}

impl Wide {
    /// Adds a product `(hi, lo)` of two values below p (so `hi < 2^127` and `hi + 1` fits).
    #[inline]
    fn add(&mut self, (ph, pl): (u128, u128)) {
        let (l, c) = self.lo.overflowing_add(pl);
        self.lo = l;
        let (h, c2) = self.hi.overflowing_add(ph + c as u128);
        self.hi = h;
        self.top += c2 as u128;
    }

    fn reduce(&self) -> Fp {
        Fp(reduce256(self.hi, self.lo))
            + Fp::from_u128_reduced(self.top).const_mul(Fp(TWO256_MOD_P))
    }
}

/// `l + (h - l) s mod p`: the product and `l` added exactly, one reduction.
#[inline(always)]
fn line(l: u128, h: u128, s: u128) -> u128 {
    let (ph, pl) = mul_wide(sub_rt(h, l), s);
    // ph < 2^127 (both factors are below p), so ph + 1 does not overflow.
    let (lo, c) = pl.overflowing_add(l);
    reduce256_rt(ph + c as u128, lo)
}

/// `2^(52 j) mod p` for `j < 5`: the weights of the IFMA kernels' column totals.
#[cfg(target_arch = "x86_64")]
const COLUMN_WEIGHTS: [Fp; 5] = {
    let two52 = Fp(1 << 52);
    let mut w = [Fp(1); 5];
    let mut j = 1;
    while j < 5 {
        w[j] = w[j - 1].const_mul(two52);
        j += 1;
    }
    w
};

/// The value `Σ C_j 2^(52 j)` of column totals, reduced.
#[cfg(target_arch = "x86_64")]
fn from_columns(c: [u128; 5]) -> Fp {
    let mut acc = Wide::default();
    for (t, w) in c.into_iter().zip(COLUMN_WEIGHTS) {
        acc.add(mul_wide(reduce_once_rt(t), w.0));
    }
    acc.reduce()
}

#[cfg(target_arch = "x86_64")]
/// Slices of equal lengths: each cut to the shortest (the kernels read whole slices).
fn common<const K: usize>(s: [&[Fp]; K], n: usize) -> ([&[u128]; K], usize) {
    let n = s.iter().fold(n, |m, x| m.min(x.len()));
    (s.map(|x| crate::backend::cast::fp_as_words(&x[..n])), n)
}

/// The IFMA kernels' token if backend `be` runs them on this CPU.
#[cfg(target_arch = "x86_64")]
fn ifma(be: Backend) -> Option<crate::backend::fp_ifma::Ifma> {
    crate::backend::fp_ifma(be)
}

/// The slice operations on an explicit backend, for tests and benchmarks (the [`Bulk`]
/// methods use [`crate::backend::active`]). The 512-bit backend ([`Backend::Gfni512`]) runs
/// them with AVX-512 IFMA where the CPU has it, every other backend with the portable code;
/// the results are identical. Slices are used up to the shortest one's length.
impl Fp {
    /// [`Bulk::mul_slice`] on an explicit backend.
    pub fn mul_slice_with(be: Backend, out: &mut [Self], a: &[Self], b: &[Self]) {
        #[cfg(target_arch = "x86_64")]
        if let Some(t) = ifma(be) {
            let ([a, b], n) = common([a, b], out.len());
            return fp_ifma::mul(t, fp_as_words_mut(&mut out[..n]), a, b);
        }
        let _ = be;
        for ((o, x), y) in out.iter_mut().zip(a).zip(b) {
            o.0 = mul_rt(x.0, y.0);
        }
    }

    /// [`Bulk::mul_add_slice`] on an explicit backend.
    pub fn mul_add_slice_with(be: Backend, out: &mut [Self], a: &[Self], b: &[Self]) {
        #[cfg(target_arch = "x86_64")]
        if let Some(t) = ifma(be) {
            let ([a, b], n) = common([a, b], out.len());
            return fp_ifma::mul_add(t, fp_as_words_mut(&mut out[..n]), a, b);
        }
        let _ = be;
        for ((o, x), y) in out.iter_mut().zip(a).zip(b) {
            let (ph, pl) = mul_wide(x.0, y.0);
            let (lo, c) = pl.overflowing_add(o.0);
            o.0 = reduce256_rt(ph + c as u128, lo);
        }
    }

    /// [`Bulk::scale_add_slice`] on an explicit backend.
    pub fn scale_add_slice_with(be: Backend, out: &mut [Self], a: &[Self], s: Self) {
        #[cfg(target_arch = "x86_64")]
        if let Some(t) = ifma(be) {
            let ([a], n) = common([a], out.len());
            return fp_ifma::scale_add(t, fp_as_words_mut(&mut out[..n]), a, s.0);
        }
        let _ = be;
        for (o, x) in out.iter_mut().zip(a) {
            let (ph, pl) = mul_wide(x.0, s.0);
            let (lo, c) = pl.overflowing_add(o.0);
            o.0 = reduce256_rt(ph + c as u128, lo);
        }
    }

    /// [`Bulk::lerp_slice`] on an explicit backend.
    pub fn lerp_slice_with(be: Backend, out: &mut [Self], lo: &[Self], hi: &[Self], s: Self) {
        #[cfg(target_arch = "x86_64")]
        if let Some(t) = ifma(be) {
            let ([lo, hi], n) = common([lo, hi], out.len());
            return fp_ifma::lerp(t, fp_as_words_mut(&mut out[..n]), lo, hi, s.0);
        }
        let _ = be;
        for ((o, l), h) in out.iter_mut().zip(lo).zip(hi) {
            o.0 = line(l.0, h.0, s.0);
        }
    }

    /// [`Bulk::lerp_assign_slice`] on an explicit backend.
    pub fn lerp_assign_slice_with(be: Backend, v: &mut [Self], w: &[Self], s: Self) {
        #[cfg(target_arch = "x86_64")]
        if let Some(t) = ifma(be) {
            let ([w], n) = common([w], v.len());
            return fp_ifma::lerp_assign(t, fp_as_words_mut(&mut v[..n]), w, s.0);
        }
        let _ = be;
        for (x, h) in v.iter_mut().zip(w) {
            x.0 = line(x.0, h.0, s.0);
        }
    }

    /// [`Bulk::local_product_slice`] on an explicit backend.
    pub fn local_product_slice_with(
        be: Backend,
        out: &mut [Self],
        a1: &[Self],
        a2: &[Self],
        b1: &[Self],
        b2: &[Self],
    ) {
        #[cfg(target_arch = "x86_64")]
        if let Some(t) = ifma(be) {
            let ([a1, a2, b1, b2], n) = common([a1, a2, b1, b2], out.len());
            return fp_ifma::local_product(t, fp_as_words_mut(&mut out[..n]), a1, a2, b1, b2);
        }
        let _ = be;
        for ((((o, x1), x2), y1), y2) in out.iter_mut().zip(a1).zip(a2).zip(b1).zip(b2) {
            let s = add_rt(y1.0, y2.0);
            let (h1, l1) = mul_wide(x1.0, s);
            let (h2, l2) = mul_wide(x2.0, y1.0);
            let (lo, c) = l1.overflowing_add(l2);
            // h1, h2 < 2^127, so h1 + h2 + 1 < 2^128.
            *o = Self(reduce256_rt(h1 + h2 + c as u128, lo));
        }
    }

    /// [`Bulk::inner_product`] on an explicit backend.
    pub fn inner_product_with(be: Backend, a: &[Self], b: &[Self]) -> Self {
        #[cfg(target_arch = "x86_64")]
        if let Some(t) = ifma(be) {
            let ([a, b], _) = common([a, b], usize::MAX);
            return from_columns(fp_ifma::inner(t, a, b));
        }
        let _ = be;
        let mut acc = Wide::default();
        for (x, y) in a.iter().zip(b) {
            acc.add(mul_wide(x.0, y.0));
        }
        acc.reduce()
    }

    /// [`Bulk::local_inner_product`] on an explicit backend.
    pub fn local_inner_product_with(
        be: Backend,
        a1: &[Self],
        a2: &[Self],
        b1: &[Self],
        b2: &[Self],
    ) -> Self {
        #[cfg(target_arch = "x86_64")]
        if let Some(t) = ifma(be) {
            let ([a1, a2, b1, b2], _) = common([a1, a2, b1, b2], usize::MAX);
            return from_columns(fp_ifma::local_inner(t, a1, a2, b1, b2));
        }
        let _ = be;
        let mut acc = Wide::default();
        for (((x1, x2), y1), y2) in a1.iter().zip(a2).zip(b1).zip(b2) {
            add_local_product(&mut acc, [x1.0, x2.0, y1.0, y2.0]);
        }
        acc.reduce()
    }
}

/// The summed local product `lp(x1, x2, y1, y2) = x1 (y1 + y2) + x2 y1` added exactly to `acc`.
#[inline(always)]
fn add_local_product(acc: &mut Wide, [x1, x2, y1, y2]: [u128; 4]) {
    acc.add(mul_wide(x1, add_rt(y1, y2)));
    acc.add(mul_wide(x2, y1));
}

impl Fp {
    /// `[Σ lp(b_k), Σ lp(2 b_k - a_k)]` over the positions `k` of `a`, with `lp(x1, x2, y1, y2)
    /// = x1 (y1 + y2) + x2 y1` for `a = [x1, x2, y1, y2]` (four slices of one length) and `b`
    /// likewise (four slices of one length, at most `a`'s; zero from there on). These are the
    /// additive shares of `H(1)` and `H(2)` of a halving level of the multiplication check:
    /// `2b - a` is the line through `a` (at 0) and `b` (at 1) at the node 2. One pass, nothing
    /// written; on an explicit backend (as the other `*_with` methods).
    pub fn node_inner_products_with(be: Backend, a: [&[Self]; 4], b: [&[Self]; 4]) -> [Self; 2] {
        let n = a.iter().fold(usize::MAX, |m, x| m.min(x.len()));
        let m = b.iter().fold(n, |m, x| m.min(x.len()));
        #[cfg(target_arch = "x86_64")]
        if let Some(t) = ifma(be) {
            let (a, _) = common(a, n);
            let (b, _) = common(b, m);
            return fp_ifma::node_inner(t, a, b).map(from_columns);
        }
        let _ = be;
        let (mut h1, mut hu) = (Wide::default(), Wide::default());
        for k in 0..m {
            let bk = b.map(|v| v[k].0);
            add_local_product(&mut h1, bk);
            let f: [u128; 4] = core::array::from_fn(|j| {
                let d = sub_rt(bk[j], a[j][k].0);
                add_rt(bk[j], d)
            });
            add_local_product(&mut hu, f);
        }
        // `2b - a = -a` where `b` is zero, and `lp(-a) = lp(a)`.
        for k in m..n {
            add_local_product(&mut hu, a.map(|v| v[k].0));
        }
        [h1.reduce(), hu.reduce()]
    }
}

impl Fp {
    /// A level-1 fold of the multiplication check for the pairs of positions `(lo_k, hi_k)`:
    /// `out[j] = X_lo + (X_hi - X_lo) s` with `X = c x` (`c[0]` for the lower, `c[1]` for the
    /// upper entries) for `j < 2` (`x_1`, `x_2`), and `out[j] = lo[j] + (hi[j] - lo[j]) s` for
    /// `j >= 2` (`y_1`, `y_2`); the upper entries are zero if `hi` is `None` (and `c[1]` is
    /// then not read). With `r`, the triples are chained: `x_j + r y_j` stands for `x_j`
    /// (`X = c (x + r y)`). All slices are used up to `out[0]`'s length (which every slice
    /// must have; shorter ones shorten it). On an explicit backend; the IFMA kernel forms
    /// `c_lo (1 - s)` and `c_hi s` (and their products with `r`) once per position and
    /// reduces each output once.
    pub fn fold_lines_with(
        be: Backend,
        out: [&mut [Self]; 4],
        lo: [&[Self]; 4],
        hi: Option<[&[Self]; 4]>,
        c: [&[Self]; 2],
        s: Self,
        r: Option<Self>,
    ) {
        let n = out
            .iter()
            .map(|o| o.len())
            .chain(lo.iter().map(|v| v.len()))
            .chain(hi.iter().flatten().map(|v| v.len()))
            .chain([c[0].len()])
            .chain(hi.map(|_| c[1].len()))
            .min()
            .unwrap_or(0);
        let out = out.map(|o| &mut o[..n]);
        #[cfg(target_arch = "x86_64")]
        if let Some(t) = ifma(be) {
            fn words(v: [&[Fp]; 4], n: usize) -> [&[u128]; 4] {
                v.map(|x| crate::backend::cast::fp_as_words(&x[..n]))
            }
            return fp_ifma::fold_lines(
                t,
                out.map(fp_as_words_mut),
                words(lo, n),
                hi.map(|h| words(h, n)),
                c.map(|x| crate::backend::cast::fp_as_words(&x[..n.min(x.len())])),
                [s.0, (Fp(1) - s).0],
                r.map(|r| r.0),
            );
        }
        let _ = be;
        // `x_j + r y_j` at position `k` of `v = [x1, x2, y1, y2]`.
        let x = |v: [&[Self]; 4], j: usize, k: usize| match r {
            Some(r) => v[j][k] + r * v[j + 2][k],
            None => v[j][k],
        };
        let [o1, o2, o3, o4] = out;
        for (j, o) in [o1, o2].into_iter().enumerate() {
            for (k, o) in o.iter_mut().enumerate() {
                let xl = mul_rt(c[0][k].0, x(lo, j, k).0);
                let xh = hi.map_or(0, |h| mul_rt(c[1][k].0, x(h, j, k).0));
                o.0 = line(xl, xh, s.0);
            }
        }
        for (j, o) in [o3, o4].into_iter().enumerate() {
            for (k, o) in o.iter_mut().enumerate() {
                o.0 = line(lo[j + 2][k].0, hi.map_or(0, |h| h[j + 2][k].0), s.0);
            }
        }
    }
}

impl Fp {
    /// `out[j][k] = c[k] (x[j][k] + r y[j][k])` for `j = 0, 1`: the coefficient-scaled `x` of
    /// chained triples (whose `x` stands for `x + r y`) in the multiplication check. All
    /// slices are used up to the shortest length. On an explicit backend; the IFMA kernel forms
    /// `c r` once per position and reduces each output once.
    pub fn chain_scale_with(
        be: Backend,
        out: [&mut [Self]; 2],
        x: [&[Self]; 2],
        y: [&[Self]; 2],
        c: &[Self],
        r: Self,
    ) {
        let n = out
            .iter()
            .map(|o| o.len())
            .chain(x.iter().chain(&y).map(|v| v.len()))
            .chain([c.len()])
            .min()
            .unwrap_or(0);
        let out = out.map(|o| &mut o[..n]);
        #[cfg(target_arch = "x86_64")]
        if let Some(t) = ifma(be) {
            fn words(v: [&[Fp]; 2], n: usize) -> [&[u128]; 2] {
                v.map(|v| crate::backend::cast::fp_as_words(&v[..n]))
            }
            return fp_ifma::chain_scale(
                t,
                out.map(fp_as_words_mut),
                words(x, n),
                words(y, n),
                crate::backend::cast::fp_as_words(&c[..n]),
                r.0,
            );
        }
        let _ = be;
        for (j, o) in out.into_iter().enumerate() {
            for (k, o) in o.iter_mut().enumerate() {
                *o = c[k] * (x[j][k] + r * y[j][k]);
            }
        }
    }
}

/// Run-time dispatch ([`crate::backend::active`]) to the `*_with` methods above.
impl Bulk for Fp {
    fn mul_slice(out: &mut [Self], a: &[Self], b: &[Self]) {
        debug_assert!(a.len() == out.len() && b.len() == out.len());
        Self::mul_slice_with(crate::backend::active(), out, a, b);
    }

    fn mul_add_slice(out: &mut [Self], a: &[Self], b: &[Self]) {
        debug_assert!(a.len() == out.len() && b.len() == out.len());
        Self::mul_add_slice_with(crate::backend::active(), out, a, b);
    }

    /// The product and `out[k]` added exactly, one reduction per element.
    fn scale_add_slice(out: &mut [Self], a: &[Self], s: Self) {
        debug_assert_eq!(out.len(), a.len());
        Self::scale_add_slice_with(crate::backend::active(), out, a, s);
    }

    /// One reduction per element ([`line`]).
    fn lerp_slice(out: &mut [Self], lo: &[Self], hi: &[Self], s: Self) {
        debug_assert!(lo.len() == out.len() && hi.len() == out.len());
        Self::lerp_slice_with(crate::backend::active(), out, lo, hi, s);
    }

    /// One reduction per element ([`line`]).
    fn lerp_assign_slice(v: &mut [Self], w: &[Self], s: Self) {
        debug_assert_eq!(v.len(), w.len());
        Self::lerp_assign_slice_with(crate::backend::active(), v, w, s);
    }

    /// `a1 (b1 + b2) + a2 b1`: two 256-bit products added exactly and reduced once.
    fn local_product_slice(out: &mut [Self], a1: &[Self], a2: &[Self], b1: &[Self], b2: &[Self]) {
        debug_assert!([a1.len(), a2.len(), b1.len(), b2.len()] == [out.len(); 4]);
        Self::local_product_slice_with(crate::backend::active(), out, a1, a2, b1, b2);
    }

    /// Delayed reduction: the 256-bit products are summed exactly (a third limb counts the
    /// carries out of 2^256) and reduced once at the end, using `2^256 ≡ 8100`.
    fn inner_product(a: &[Self], b: &[Self]) -> Self {
        debug_assert_eq!(a.len(), b.len());
        Self::inner_product_with(crate::backend::active(), a, b)
    }

    /// `sum a1 (b1 + b2) + a2 b1`, with the delayed reduction of [`Bulk::inner_product`].
    fn local_inner_product(a1: &[Self], a2: &[Self], b1: &[Self], b2: &[Self]) -> Self {
        debug_assert!([a2.len(), b1.len(), b2.len()] == [a1.len(); 3]);
        Self::local_inner_product_with(crate::backend::active(), a1, a2, b1, b2)
    }
}

impl crate::PrimeField for Fp {
    fn modulus() -> u128 {
        P
    }
    fn from_u128_reduced(x: u128) -> Self {
        Fp::from_u128_reduced(x)
    }
    fn to_u128(self) -> u128 {
        self.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `fill_random` draws the same elements as repeated `random` calls on the same stream,
    /// all reduced (it writes the stream into the elements in place, then halves each word).
    #[test]
    fn fill_random_matches_random() {
        use rand::SeedableRng;
        for n in [0usize, 1, 2, 7, 64, 1000] {
            let mut a = rand_chacha::ChaCha20Rng::seed_from_u64(n as u64);
            let mut b = a.clone();
            let mut filled = vec![Fp(5); n];
            Fp::fill_random(&mut a, &mut filled);
            let one_by_one: Vec<Fp> = (0..n).map(|_| Fp::random(&mut b)).collect();
            assert_eq!(filled, one_by_one);
            assert!(filled.iter().all(|x| x.0 < Fp::MODULUS));
        }
    }

    /// Double-and-add multiplication using only the (separately tested) addition.
    fn mul_naive(a: Fp, b: Fp) -> Fp {
        (0..128).rev().fold(Fp(0), |acc, i| {
            let acc = acc + acc;
            if (b.0 >> i) & 1 == 1 {
                acc + a
            } else {
                acc
            }
        })
    }

    fn add_naive(a: u128, b: u128) -> u128 {
        // a, b < p < 2^128: work on 129 bits via the carry.
        let (s, c) = a.overflowing_add(b);
        if c || s >= P {
            s.wrapping_sub(P)
        } else {
            s
        }
    }

    const EDGES: [u128; 10] = [
        0,
        1,
        2,
        45,
        90,
        1 << 64,
        (1 << 127) - 1,
        1 << 127,
        P - 2,
        P - 1,
    ];

    #[test]
    fn add_sub_edges() {
        for &a in &EDGES {
            for &b in &EDGES {
                let (x, y) = (Fp(a), Fp(b));
                assert_eq!((x + y).0, add_naive(a, b), "{a} + {b}");
                assert_eq!((x + y) - y, x);
                assert!((x - y).0 < P);
            }
        }
    }

    #[test]
    fn mul_edges_match_naive() {
        for &a in &EDGES {
            for &b in &EDGES {
                assert_eq!(Fp(a) * Fp(b), mul_naive(Fp(a), Fp(b)), "{a} * {b}");
            }
        }
        assert_eq!(Fp(P - 1) * Fp(P - 1), Fp(1));
    }

    #[test]
    fn inner_product_with_delayed_reduction_matches_the_plain_sum() {
        // All p - 1: every product is 1, and the exact sum overflows 2^256 many times.
        let big = vec![Fp(P - 1); 1000];
        assert_eq!(Fp::inner_product(&big, &big), Fp::from_u64(1000));
        let a: Vec<Fp> = (0..300u64)
            .map(|i| Fp::from_u128_reduced(u128::MAX - (i as u128) * 0x1234_5678_9abc_def1))
            .collect();
        let b: Vec<Fp> = (0..300u64).map(|i| Fp(P - 1 - i as u128 * 77)).collect();
        let plain = a.iter().zip(&b).fold(Fp(0), |acc, (x, y)| acc + *x * *y);
        assert_eq!(Fp::inner_product(&a, &b), plain);
        assert_eq!(Fp::inner_product(&[], &[]), Fp(0));
        let c: Vec<Fp> = b.iter().rev().copied().collect();
        let d: Vec<Fp> = a.iter().map(|x| *x + Fp(P - 3)).collect();
        let plain3 = (0..a.len()).fold(Fp(0), |acc, k| {
            acc + a[k] * c[k] + a[k] * d[k] + b[k] * c[k]
        });
        assert_eq!(Fp::local_inner_product(&a, &b, &c, &d), plain3);
    }

    #[test]
    fn local_product_matches_three_products() {
        let v: Vec<Fp> = EDGES.iter().map(|&e| Fp(e)).collect();
        let n = v.len();
        let (a1, a2) = (v.clone(), v.iter().rev().copied().collect::<Vec<_>>());
        let b1: Vec<Fp> = v.iter().map(|x| *x + Fp(P - 1)).collect();
        let b2: Vec<Fp> = v.iter().map(|x| *x * Fp(P - 1)).collect();
        let mut out = vec![Fp(0); n];
        Fp::local_product_slice(&mut out, &a1, &a2, &b1, &b2);
        for k in 0..n {
            assert_eq!(
                out[k],
                a1[k] * b1[k] + a1[k] * b2[k] + a2[k] * b1[k],
                "k = {k}"
            );
        }
    }

    /// The run-time forms behind the operators and the `lerp` kernels give the `const fn`
    /// values, on the edges and on random operands.
    #[test]
    fn run_time_forms_match_const_forms() {
        use rand::{RngCore, SeedableRng};
        let mut rng = rand_chacha::ChaCha20Rng::seed_from_u64(9);
        let mut vals: Vec<u128> = EDGES.to_vec();
        vals.extend((0..40).map(|_| {
            let v = (u128::from(rng.next_u64()) << 64) | u128::from(rng.next_u64());
            v % P
        }));
        for &a in &vals {
            for &b in &vals {
                let (x, y) = (Fp(a), Fp(b));
                assert_eq!(x + y, x.const_add(y), "{a} + {b}");
                assert_eq!(x - y, x.const_sub(y), "{a} - {b}");
                assert_eq!(x * y, x.const_mul(y), "{a} * {b}");
                assert_eq!(-x, Fp(0).const_sub(x));
                for &c in &vals[..12] {
                    let s = Fp(c);
                    let want = x.const_add(y.const_sub(x).const_mul(s));
                    let mut out = [Fp(0)];
                    Fp::lerp_slice(&mut out, &[x], &[y], s);
                    assert_eq!(out[0], want, "line({a}, {b}, {c})");
                    let mut v = [x];
                    Fp::lerp_assign_slice(&mut v, &[y], s);
                    assert_eq!(v[0], want);
                    let mut v = [x];
                    Fp::scale_add_slice(&mut v, &[y], s);
                    assert_eq!(v[0], x.const_add(y.const_mul(s)), "{a} + {b} * {c}");
                }
            }
        }
        for hi in [0, 1, 90, P - 1, u128::MAX >> 1, u128::MAX] {
            for lo in [0, 1, P, u128::MAX] {
                assert_eq!(reduce256_rt(hi, lo), reduce256(hi, lo), "{hi}, {lo}");
            }
        }
    }

    #[test]
    fn reduce256_extremes() {
        // hi and lo all ones: 2^256 - 1 mod p, computed via (2^128 mod p)^2 etc.
        let two128 = Fp(TWO128_MOD_P);
        let all = Fp::from_u128_reduced(u128::MAX);
        let expected = mul_naive(two128, all) + all; // (2^128 - 1) * 2^128 + (2^128 - 1)
        assert_eq!(Fp(reduce256(u128::MAX, u128::MAX)), expected);
        assert_eq!(Fp(reduce256(1, 0)), two128);
        assert_eq!(Fp::from_u128_reduced(u128::MAX).0, u128::MAX - P);
    }
}
