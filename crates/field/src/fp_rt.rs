//! The prime field `F_p` for an odd prime `p < 2^128` chosen at run time: [`FpRt`].

use core::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering::Relaxed};
use std::cell::Cell;
use std::sync::{Mutex, PoisonError};

use zeroize::Zeroize;

use crate::{Bulk, Encode, Field, FieldError, Random};

/// The modulus in effect when none is installed: `2^127 + 45`, the one of [`crate::Fp`].
const DEFAULT_P: u128 = (1u128 << 127) + 45;
const M64: u128 = u64::MAX as u128;

/// All ones if `bit`, else 0.
#[inline(always)]
const fn mask(bit: bool) -> u128 {
    0u128.wrapping_sub(bit as u128)
}

/// The full 256-bit product of two 128-bit values, as `(hi, lo)`.
#[inline(always)]
const fn mul_wide(a: u128, b: u128) -> (u128, u128) {
    let (a0, a1) = (a & M64, a >> 64);
    let (b0, b1) = (b & M64, b >> 64);
    let ll = a0 * b0;
    let (mid, mid_carry) = (a0 * b1).overflowing_add(a1 * b0);
    let (lo, lo_carry) = ll.overflowing_add(mid << 64);
    let hi = (a1 * b1)
        .wrapping_add(mid >> 64)
        .wrapping_add((mid_carry as u128) << 64)
        .wrapping_add(lo_carry as u128);
    (hi, lo)
}

/// `⌊(2^192 - 1) / d⌋ - 2^64` for a normalised `d` (`2^127 <= d < 2^128`), by binary long
/// division (setup only; branches on the public `d`).
const fn reciprocal(d: u128) -> u64 {
    let mut rem: u128 = 0;
    let mut q: u128 = 0;
    let mut i = 0;
    while i < 192 {
        // rem < d; shift in the next numerator bit (all bits of 2^192 - 1 are ones).
        let carry = rem >> 127;
        rem = (rem << 1) | 1;
        q <<= 1;
        if carry == 1 || rem >= d {
            rem = rem.wrapping_sub(d);
            q |= 1;
        }
        i += 1;
    }
    // 2^64 <= q < 2^65.
    (q - (1u128 << 64)) as u64
}

/// Precomputed constants for reduction modulo a fixed `p > 0`, `p < 2^128` (the reduction
/// itself needs neither primality nor oddness; [`crate::prime::is_prime`] uses it for odd
/// candidates).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Modulus {
    /// `d = p << s`, top bit set.
    d: u128,
    /// `⌊(2^192 - 1) / d⌋ - 2^64`.
    v: u64,
    /// Leading zeros of `p` (`0..=127`).
    s: u32,
}

impl Modulus {
    /// The constants for `p`, or `None` for `p = 0`.
    pub(crate) const fn new(p: u128) -> Option<Self> {
        if p == 0 {
            return None;
        }
        let s = p.leading_zeros();
        let d = p << s;
        Some(Self {
            d,
            v: reciprocal(d),
            s,
        })
    }

    /// The modulus `p`.
    #[inline(always)]
    pub(crate) const fn p(&self) -> u128 {
        self.d >> self.s
    }

    /// The remainder of `(u2, u1, u0)` (three 64-bit words, most significant first) modulo
    /// `d`, for `(u2, u1) < d` (Möller-Granlund Algorithm 5; only the remainder is kept).
    /// Branch-free; on inputs violating the precondition the result is meaningless but every
    /// operation wraps.
    #[inline(always)]
    const fn rem_3by2(&self, u2: u64, u1: u64, u0: u64) -> u128 {
        let d = self.d;
        let (d1, d0) = ((d >> 64) as u64, d as u64);
        // (q1, q0) = v·u2 + (u2, u1).
        let q = ((self.v as u128) * (u2 as u128)).wrapping_add(((u2 as u128) << 64) | u1 as u128);
        let (q1, q0) = ((q >> 64) as u64, q as u64);
        let r1 = u1.wrapping_sub(q1.wrapping_mul(d1));
        let t = (d0 as u128) * (q1 as u128);
        let r = (((r1 as u128) << 64) | u0 as u128)
            .wrapping_sub(t)
            .wrapping_sub(d);
        // The candidate quotient q1 + 1 may be one too large: add d back if r1 >= q0.
        let r = r.wrapping_add(d & mask((r >> 64) as u64 >= q0));
        // Rarely, one too small: subtract d if r >= d.
        let (rd, borrow) = r.overflowing_sub(d);
        let keep = mask(borrow);
        (r & keep) | (rd & !keep)
    }

    /// `(hi·2^128 + lo) mod p` for `hi < p`.
    #[inline(always)]
    pub(crate) const fn reduce_wide(&self, hi: u128, lo: u128) -> u128 {
        let s = self.s;
        // (hi, lo) << s: below d·2^128 because hi < p.
        let nh = (hi << s) | ((lo >> 1) >> (127 - s));
        let nl = lo << s;
        let r = self.rem_3by2((nh >> 64) as u64, nh as u64, (nl >> 64) as u64);
        let r = self.rem_3by2((r >> 64) as u64, r as u64, nl as u64);
        // (x << s) mod (p << s) = (x mod p) << s.
        r >> s
    }

    /// `x mod p` for any `x`.
    #[inline(always)]
    pub(crate) const fn reduce(&self, x: u128) -> u128 {
        self.reduce_wide(0, x)
    }

    /// `a·b mod p` for `a, b < p`.
    #[inline(always)]
    pub(crate) const fn mul(&self, a: u128, b: u128) -> u128 {
        let (hi, lo) = mul_wide(a, b);
        self.reduce_wide(hi, lo)
    }

    /// `(a + b) mod p` for `a, b < p`.
    #[inline(always)]
    pub(crate) const fn add(&self, a: u128, b: u128) -> u128 {
        let p = self.p();
        let (s, carry) = a.overflowing_add(b);
        // With a carry the true sum s + 2^128 lies in [2^128, 2p): subtract p (mod 2^128).
        let (d, borrow) = s.overflowing_sub(p);
        let take_d = mask(carry | !borrow);
        (d & take_d) | (s & !take_d)
    }

    /// `(a - b) mod p` for `a, b < p`.
    #[inline(always)]
    pub(crate) const fn sub(&self, a: u128, b: u128) -> u128 {
        let (d, borrow) = a.overflowing_sub(b);
        d.wrapping_add(self.p() & mask(borrow))
    }

    /// `a^e mod p` by square-and-multiply (the exponent is public).
    pub(crate) const fn pow(&self, a: u128, e: u128) -> u128 {
        let mut acc = self.reduce(1);
        let mut i = 128 - e.leading_zeros();
        while i > 0 {
            i -= 1;
            acc = self.mul(acc, acc);
            if (e >> i) & 1 == 1 {
                acc = self.mul(acc, a);
            }
        }
        acc
    }

    /// The `Σ a_k b_k mod p` of canonical vectors with one reduction: the 256-bit products
    /// are added with a third carry word, and the 320-bit sum is reduced word by word.
    fn inner_product(&self, pairs: impl Iterator<Item = (u128, u128)>) -> u128 {
        let (mut c, mut hi, mut lo) = (0u64, 0u128, 0u128);
        for (x, y) in pairs {
            let (ph, pl) = mul_wide(x, y);
            let (l, c0) = lo.overflowing_add(pl);
            let (h, c1) = hi.overflowing_add(ph);
            let (h, c2) = h.overflowing_add(c0 as u128);
            lo = l;
            hi = h;
            c = c.wrapping_add(c1 as u64 + c2 as u64);
        }
        // N mod d word by word (the top word pair (0, c) is below d), then mod p.
        let r = self.rem_3by2(0, c, (hi >> 64) as u64);
        let r = self.rem_3by2((r >> 64) as u64, r as u64, hi as u64);
        let r = self.rem_3by2((r >> 64) as u64, r as u64, (lo >> 64) as u64);
        let r = self.rem_3by2((r >> 64) as u64, r as u64, lo as u64);
        self.reduce(r)
    }
}

const DEFAULT: Modulus = match Modulus::new(DEFAULT_P) {
    Some(m) => m,
    None => Modulus { d: 0, v: 0, s: 0 },
};

// The installed constants. Separate relaxed atomics: the installing thread orders its stores
// before anything it starts (see [`FpRt`]).
static D_HI: AtomicU64 = AtomicU64::new((DEFAULT.d >> 64) as u64);
static D_LO: AtomicU64 = AtomicU64::new(DEFAULT.d as u64);
static RECIP: AtomicU64 = AtomicU64::new(DEFAULT.v);
static SHIFT: AtomicU32 = AtomicU32::new(DEFAULT.s);
static INSTALLED: AtomicBool = AtomicBool::new(false);
/// Held for the whole of each [`FpRt::with_modulus`] call.
static LOCK: Mutex<()> = Mutex::new(());

thread_local! {
    /// True while this thread is inside [`FpRt::with_modulus`].
    static ACTIVE: Cell<bool> = const { Cell::new(false) };
}

/// The constants in effect.
#[inline(always)]
fn current() -> Modulus {
    Modulus {
        d: ((D_HI.load(Relaxed) as u128) << 64) | D_LO.load(Relaxed) as u128,
        v: RECIP.load(Relaxed),
        s: SHIFT.load(Relaxed),
    }
}

fn install(m: &Modulus, installed: bool) {
    D_HI.store((m.d >> 64) as u64, Relaxed);
    D_LO.store(m.d as u64, Relaxed);
    RECIP.store(m.v, Relaxed);
    SHIFT.store(m.s, Relaxed);
    INSTALLED.store(installed, Relaxed);
}

/// Restores the previous constants (and leaves the thread's `ACTIVE` state) when dropped, so
/// also when the closure panics.
struct Restore {
    prev: Modulus,
    prev_installed: bool,
}

impl Drop for Restore {
    fn drop(&mut self) {
        install(&self.prev, self.prev_installed);
        ACTIVE.with(|a| a.set(false));
    }
}

/// An element of `F_p` for an odd prime `3 <= p < 2^128` chosen at run time, always in
/// `[0, p)`. For `triskele prf --modulus P` and known-answer tests on other primes (PRF.md,
/// Field); [`crate::Fp`] is the specialised type for the default `p = 2^127+45`.
///
/// ```
/// use triskele_field::{Field, FpRt, PrimeField};
///
/// let p = (1u128 << 61) - 1;
/// let (one, q) = FpRt::with_modulus(p, || {
///     let x = FpRt::from(3u64);
///     (x * x.inverse(), FpRt::modulus())
/// })?;
/// assert_eq!((one, q), (FpRt::ONE, p));
/// assert_eq!(FpRt::modulus_installed(), None);
/// assert!(FpRt::with_modulus(p + 2, || ()).is_err()); // 2^61 + 1 is divisible by 3
/// # Ok::<(), triskele_field::FieldError>(())
/// ```
///
/// # The modulus
///
/// The modulus is process-global state, installed for the duration of a closure by
/// [`FpRt::with_modulus`], which checks that `p` is an odd prime, serialises all such calls on
/// one mutex (so tests with different moduli run one after the other), installs the
/// precomputed constants, runs the closure and restores the previous state (also when the
/// closure panics). Every thread sees the installed modulus, including threads spawned inside
/// the closure and the workers of a thread pool that receive jobs from it (the parameters are
/// atomics; spawning and job queues order their stores before the workers' loads).
///
/// Calls must not nest: a call on a thread already inside `with_modulus` returns
/// [`FieldError::NestedModulus`]; a call from a thread spawned inside the closure blocks until
/// the outer call returns, so joining that thread inside the closure deadlocks.
///
/// Outside `with_modulus` the default modulus `p = 2^127+45` (the one of [`crate::Fp`]) is in
/// effect and [`FpRt::modulus_installed`] is `None`, so arithmetic is always defined. Elements
/// carry no modulus: an element made under one modulus and used under another (or while another
/// thread, not ordered with the installing call, switches the modulus) gives unspecified
/// values — never a panic and never undefined behaviour, since all arithmetic wraps.
///
/// # Arithmetic
///
/// Elements are the canonical representatives in `[0, p)`. Sums and differences use one
/// conditional subtraction / addition of `p` by masks. A product is the 256-bit integer
/// product reduced by division by the invariant integer `d = p·2^s` (`s` = leading zeros of
/// `p`, so the top bit of `d` is set), with the reciprocal `⌊(2^192 - 1)/d⌋ - 2^64` of
/// Möller and Granlund, "Improved division by invariant integers", IEEE Trans. Computers
/// 60(2), 2011, Algorithm 5 (`div3by2`): two 3-by-2-word steps of three 64-bit
/// multiplications each, whose corrections are selected by masks. There is no branch and no
/// `%` on element values; the only branches are on the (public) modulus, on the public
/// exponent of [`FpRt::pow`] and of the Fermat inverse, and in the rejection sampling. The
/// slice operations read the constants once per call; `mul_add_slice` reduces `a·b + c` at
/// once and `inner_product` adds the 256-bit products and reduces once at the end.
#[derive(Clone, Copy, Default, PartialEq, Eq, Hash, PartialOrd, Ord, Zeroize)]
#[repr(transparent)]
pub struct FpRt(u128);

impl core::fmt::Debug for FpRt {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        write!(f, "FpRt({})", self.0)
    }
}

impl core::fmt::Display for FpRt {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        write!(f, "{}", self.0)
    }
}

impl FpRt {
    /// The modulus in effect when none is installed, `2^127 + 45`.
    pub const DEFAULT_MODULUS: u128 = DEFAULT_P;

    /// Runs `f` with the modulus `p` installed for every thread, and restores the previous
    /// state afterwards (also if `f` panics). Holds a global mutex for the whole call, so
    /// calls from different threads run one after the other.
    ///
    /// Errors: [`FieldError::InvalidModulus`] unless `p` is an odd prime (`3 <= p < 2^128`,
    /// [`crate::prime::is_prime`]); [`FieldError::NestedModulus`] if this thread is already
    /// inside `with_modulus`. Calls must not nest: a call from a thread spawned inside `f`
    /// blocks until this call returns.
    pub fn with_modulus<R>(p: u128, f: impl FnOnce() -> R) -> Result<R, FieldError> {
        let invalid = |reason| FieldError::InvalidModulus { modulus: p, reason };
        if p < 3 {
            return Err(invalid("must be an odd prime, at least 3"));
        }
        if p & 1 == 0 {
            return Err(invalid("must be odd"));
        }
        if !crate::prime::is_prime(p) {
            return Err(invalid("not prime"));
        }
        let m = Modulus::new(p).ok_or(invalid("must be nonzero"))?;
        if ACTIVE.with(|a| a.replace(true)) {
            return Err(FieldError::NestedModulus);
        }
        // A panic in an earlier closure poisons the mutex; its state was restored by `Restore`.
        let _lock = LOCK.lock().unwrap_or_else(PoisonError::into_inner);
        let _restore = Restore {
            prev: current(),
            prev_installed: INSTALLED.load(Relaxed),
        };
        install(&m, true);
        Ok(f())
    }

    /// The modulus installed by [`FpRt::with_modulus`], or `None` (then
    /// [`FpRt::DEFAULT_MODULUS`] is in effect).
    pub fn modulus_installed() -> Option<u128> {
        INSTALLED.load(Relaxed).then(|| current().p())
    }

    /// The element `v`, if `v < p`.
    pub fn new(v: u128) -> Option<Self> {
        (v < current().p()).then_some(Self(v))
    }

    /// `v mod p`.
    pub fn from_u128_reduced(v: u128) -> Self {
        Self(current().reduce(v))
    }

    /// `v mod p`.
    pub fn from_u64(v: u64) -> Self {
        Self::from_u128_reduced(v as u128)
    }

    /// The representative in `[0, p)`.
    pub const fn value(self) -> u128 {
        self.0
    }

    /// `self^e` (with `0^0 = 1`). The exponent is treated as public.
    pub fn pow(self, e: u128) -> Self {
        Self(current().pow(self.0, e))
    }
}

impl core::ops::Add for FpRt {
    type Output = Self;
    #[inline]
    fn add(self, rhs: Self) -> Self {
        Self(current().add(self.0, rhs.0))
    }
}
impl core::ops::AddAssign for FpRt {
    #[inline]
    fn add_assign(&mut self, rhs: Self) {
        *self = *self + rhs;
    }
}
impl core::ops::Sub for FpRt {
    type Output = Self;
    #[inline]
    fn sub(self, rhs: Self) -> Self {
        Self(current().sub(self.0, rhs.0))
    }
}
impl core::ops::SubAssign for FpRt {
    #[inline]
    fn sub_assign(&mut self, rhs: Self) {
        *self = *self - rhs;
    }
}
impl core::ops::Neg for FpRt {
    type Output = Self;
    #[inline]
    fn neg(self) -> Self {
        Self(current().sub(0, self.0))
    }
}
impl core::ops::Mul for FpRt {
    type Output = Self;
    #[inline]
    fn mul(self, rhs: Self) -> Self {
        Self(current().mul(self.0, rhs.0))
    }
}
impl core::ops::MulAssign for FpRt {
    #[inline]
    fn mul_assign(&mut self, rhs: Self) {
        *self = *self * rhs;
    }
}
impl core::iter::Sum for FpRt {
    fn sum<I: Iterator<Item = Self>>(iter: I) -> Self {
        let m = current();
        Self(iter.fold(0, |a, b| m.add(a, b.0)))
    }
}
impl<'a> core::iter::Sum<&'a FpRt> for FpRt {
    fn sum<I: Iterator<Item = &'a Self>>(iter: I) -> Self {
        iter.copied().sum()
    }
}
impl core::iter::Product for FpRt {
    fn product<I: Iterator<Item = Self>>(iter: I) -> Self {
        let m = current();
        Self(iter.fold(1, |a, b| m.mul(a, b.0)))
    }
}

/// `v mod p`.
impl From<u64> for FpRt {
    fn from(v: u64) -> Self {
        Self::from_u64(v)
    }
}

impl Field for FpRt {
    const NAME: &'static str = "F_p (run-time p)";
    /// 0 and 1 are elements for every modulus `p >= 3`.
    const ZERO: Self = Self(0);
    const ONE: Self = Self(1);
    const CHARACTERISTIC_TWO: bool = false;

    /// Fermat: `x^(p-2)` (public exponent), so `0 ↦ 0`.
    fn inverse(self) -> Self {
        let m = current();
        Self(m.pow(self.0, m.p().wrapping_sub(2)))
    }
}

/// 16 bytes per element, little-endian; decoding rejects values `>= p` with
/// [`FieldError::OutOfRange`].
impl Encode for FpRt {
    fn encoded_len(n: usize) -> usize {
        n.saturating_mul(16)
    }
    fn encode_slice(src: &[Self], out: &mut Vec<u8>) {
        crate::prime::encode_words(src.iter().map(|x| x.0), out);
    }
    fn decode_slice(bytes: &[u8], out: &mut [Self]) -> Result<(), FieldError> {
        let p = current().p();
        crate::prime::decode_words(bytes, out, Self::NAME, |v| (v < p).then_some(Self(v)))
    }
}

/// Rejection sampling: draw 16 bytes, read little-endian, keep the low `bitlen(p)` bits and
/// accept if `< p` (probability above 1/2). `random` draws 16 bytes per attempt (one
/// `fill_bytes` each). `fill_random` on `n` elements draws `16n` bytes with one `fill_bytes`
/// call, keeps the accepted words in order, and repeats for the `k` elements still missing
/// with `16k` bytes, until none is (so large requests use the PRG's parallel fill).
impl Random for FpRt {
    fn random<R: rand_core::RngCore + ?Sized>(rng: &mut R) -> Self {
        let m = current();
        let (p, bits) = (m.p(), u128::MAX >> m.s);
        loop {
            let mut b = [0u8; 16];
            rng.fill_bytes(&mut b);
            let v = u128::from_le_bytes(b) & bits;
            if v < p {
                return Self(v);
            }
        }
    }

    fn fill_random<R: rand_core::RngCore + ?Sized>(rng: &mut R, out: &mut [Self]) {
        let m = current();
        let (p, bits) = (m.p(), u128::MAX >> m.s);
        let mut rest = out;
        let mut bytes = Vec::new();
        while !rest.is_empty() {
            bytes.clear();
            bytes.resize(16 * rest.len(), 0);
            rng.fill_bytes(&mut bytes);
            let (words, _) = bytes.as_chunks::<16>();
            // At most one accepted value per word, so `k` stays below `rest.len()`.
            let mut k = 0;
            for w in words {
                let v = u128::from_le_bytes(*w) & bits;
                if v < p {
                    if let Some(slot) = rest.get_mut(k) {
                        *slot = Self(v);
                    }
                    k += 1;
                }
            }
            rest = &mut core::mem::take(&mut rest)[k..];
        }
    }
}

/// The representatives of a slice.
fn raw(x: &[FpRt]) -> impl Iterator<Item = u128> + '_ {
    x.iter().map(|v| v.0)
}

/// Slice operations that read the modulus once per call; `mul_add_slice` reduces `a·b + out`
/// at once, `inner_product` reduces once at the end.
impl Bulk for FpRt {
    fn add_assign_slice(out: &mut [Self], a: &[Self]) {
        debug_assert_eq!(out.len(), a.len());
        let m = current();
        for (o, x) in out.iter_mut().zip(raw(a)) {
            o.0 = m.add(o.0, x);
        }
    }
    fn mul_slice(out: &mut [Self], a: &[Self], b: &[Self]) {
        debug_assert_eq!(out.len(), a.len());
        debug_assert_eq!(out.len(), b.len());
        let m = current();
        for ((o, x), y) in out.iter_mut().zip(raw(a)).zip(raw(b)) {
            o.0 = m.mul(x, y);
        }
    }
    fn mul_add_slice(out: &mut [Self], a: &[Self], b: &[Self]) {
        debug_assert_eq!(out.len(), a.len());
        debug_assert_eq!(out.len(), b.len());
        let m = current();
        for ((o, x), y) in out.iter_mut().zip(raw(a)).zip(raw(b)) {
            // a·b + o <= (p-1)^2 + p - 1 < p·2^128: one reduction.
            let (hi, lo) = mul_wide(x, y);
            let (lo, c) = lo.overflowing_add(o.0);
            o.0 = m.reduce_wide(hi.wrapping_add(c as u128), lo);
        }
    }
    fn inner_product(a: &[Self], b: &[Self]) -> Self {
        debug_assert_eq!(a.len(), b.len());
        Self(current().inner_product(raw(a).zip(raw(b))))
    }
}

impl crate::PrimeField for FpRt {
    /// The modulus in effect ([`FpRt::DEFAULT_MODULUS`] outside [`FpRt::with_modulus`]).
    fn modulus() -> u128 {
        current().p()
    }
    fn from_u128_reduced(x: u128) -> Self {
        FpRt::from_u128_reduced(x)
    }
    fn to_u128(self) -> u128 {
        self.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `(hi·2^128 + lo) mod p` by shift-and-subtract, bit by bit.
    fn rem_naive(hi: u128, lo: u128, p: u128) -> u128 {
        let mut r = 0u128;
        for i in (0..256).rev() {
            let bit = if i >= 128 {
                (hi >> (i - 128)) & 1
            } else {
                (lo >> i) & 1
            };
            let (t, carry) = r.overflowing_add(r);
            let t = t | bit;
            r = if carry || t >= p {
                t.wrapping_sub(p)
            } else {
                t
            };
        }
        r
    }

    fn moduli() -> Vec<u128> {
        vec![
            1,
            2,
            3,
            5,
            7,
            (1 << 40) - 87,
            (1 << 63) + 1,
            u64::MAX as u128,
            1 << 64,
            (1 << 64) + 1,
            (1 << 127) - 1,
            1 << 127,
            DEFAULT_P,
            // d = p << 21 has its high word just above 2^63: the rare final correction of
            // `rem_3by2` happens for about one product in a thousand.
            162_399_130_064_311_470_148_994_848_230_421,
            u128::MAX - 158,
            u128::MAX,
        ]
    }

    #[test]
    fn reciprocal_is_floor_quotient() {
        // v = ⌊(2^192-1)/d⌋ - 2^64 ⇔ q·d < 2^192 <= (q+1)·d for q = 2^64 + v.
        for p in moduli() {
            let m = Modulus::new(p).unwrap();
            let q = (1u128 << 64) + m.v as u128;
            assert!(mul_wide(q, m.d).0 < 1 << 64, "p = {p}");
            assert!(mul_wide(q + 1, m.d).0 >= 1 << 64, "p = {p}");
        }
    }

    #[test]
    fn reduction_matches_bitwise_remainder() {
        let mut x = 0x0123_4567_89ab_cdef_fedc_ba98_7654_3210u128;
        let mut step = || {
            x = x.rotate_left(17) ^ x.wrapping_mul(0x9e37_79b9_7f4a_7c15_f39c_c060_5ced_c835);
            x
        };
        for p in moduli() {
            let m = Modulus::new(p).unwrap();
            assert_eq!(m.p(), p);
            let edges = [
                0,
                1,
                2,
                p / 2,
                p.wrapping_sub(2),
                p - 1,
                u64::MAX as u128,
                1 << 64,
            ];
            for hi in edges.iter().copied().filter(|&h| h < p) {
                for &lo in edges.iter().chain(&[u128::MAX, u128::MAX - 1]) {
                    assert_eq!(m.reduce_wide(hi, lo), rem_naive(hi, lo, p), "{p} {hi} {lo}");
                }
            }
            for &a in &edges {
                for &b in &edges {
                    let (a, b) = (a % p, b % p);
                    let (hi, lo) = mul_wide(a, b);
                    assert_eq!(m.mul(a, b), rem_naive(hi, lo, p), "{p}: {a} * {b}");
                }
            }
            for _ in 0..3000 {
                let hi = step() % p;
                let lo = step();
                assert_eq!(m.reduce_wide(hi, lo), rem_naive(hi, lo, p), "{p} {hi} {lo}");
                assert_eq!(m.reduce(lo), lo % p);
            }
        }
    }

    #[test]
    fn inner_product_with_many_carries() {
        // Products near p^2 for p near 2^128 overflow 256 bits after two terms.
        let p = u128::MAX - 158;
        let m = Modulus::new(p).unwrap();
        let a = vec![p - 1; 1000];
        let b = vec![p - 2; 1000];
        let expect = a
            .iter()
            .zip(&b)
            .fold(0, |acc, (x, y)| m.add(acc, m.mul(*x, *y)));
        assert_eq!(
            m.inner_product(a.iter().copied().zip(b.iter().copied())),
            expect
        );
        // (p-1)(p-2) = 2 mod p, times 1000.
        assert_eq!(expect, 2000);
    }

    /// The only unit test that touches the global state (the others use [`Modulus`]), so
    /// that the default is observable without a concurrent `with_modulus`.
    #[test]
    fn global_modulus_lifecycle() {
        use crate::PrimeField;
        assert_eq!(DEFAULT.p(), DEFAULT_P);
        assert_eq!(Modulus::new(0), None);
        // Default outside: the arithmetic of Fp.
        assert_eq!(FpRt::modulus_installed(), None);
        assert_eq!(FpRt::modulus(), DEFAULT_P);
        assert_eq!(-FpRt::ONE, FpRt(DEFAULT_P - 1));
        let got = FpRt::with_modulus(7, || {
            assert_eq!(FpRt::modulus_installed(), Some(7));
            assert_eq!(FpRt::from(10u64), FpRt(3));
            assert_eq!(FpRt(3).inverse(), FpRt(5));
            // Threads spawned inside see the modulus.
            let seen = std::thread::scope(|s| {
                s.spawn(|| (FpRt::modulus(), (FpRt(6) * FpRt(6)).value()))
                    .join()
                    .unwrap()
            });
            assert_eq!(seen, (7, 1));
            // Nesting on the same thread is refused and leaves the modulus alone.
            assert_eq!(
                FpRt::with_modulus(11, || ()),
                Err(FieldError::NestedModulus)
            );
            assert_eq!(FpRt::modulus_installed(), Some(7));
            42
        });
        assert_eq!(got, Ok(42));
        assert_eq!(FpRt::modulus_installed(), None);
        assert_eq!(FpRt::modulus(), DEFAULT_P);
        // A panic inside restores the default and does not block later calls.
        let r = std::panic::catch_unwind(|| FpRt::with_modulus(13, || panic!("inside")));
        assert!(r.is_err());
        assert_eq!(FpRt::modulus_installed(), None);
        assert_eq!(FpRt::with_modulus(13, FpRt::modulus), Ok(13));
        // Invalid moduli never install anything.
        for p in [0u128, 1, 2, 4, 9, 561, u128::MAX, 1 << 127] {
            assert!(
                matches!(
                    FpRt::with_modulus(p, || ()),
                    Err(FieldError::InvalidModulus { modulus, .. }) if modulus == p
                ),
                "{p}"
            );
        }
        assert_eq!(FpRt::modulus_installed(), None);
    }
}
