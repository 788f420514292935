//! `GF(2^64)=GF(2)[u]/(u^64+u^4+u^3+u+1)` (PROTOCOLS.md §2.4), used by the malicious
//! checks.

use zeroize::Zeroize;

use crate::backend::{self, cast, Backend};
use crate::macros::{impl_char2_additive, impl_hex_fmt, impl_mul_sum_product};
use crate::{Bulk, Encode, Field, FieldError, Random};

/// An element of `GF(2^64)`: bit `i` is the coefficient of `u^i` (low reduction constant
/// `0x1B`).
#[derive(Clone, Copy, Default, PartialEq, Eq, Hash, PartialOrd, Ord, Zeroize)]
#[repr(transparent)]
pub struct Gf2p64(pub u64);

impl_char2_additive!(Gf2p64);
impl_mul_sum_product!(Gf2p64);
impl_hex_fmt!(Gf2p64, "Gf2p64", "16", "18");

/// Bits at positions `≡ c (mod 5)`, for `c = 0..5`.
const fn class_masks() -> [u128; 5] {
    let mut m = [0u128; 5];
    let mut k = 0;
    while k < 128 {
        m[k % 5] |= 1u128 << k;
        k += 1;
    }
    m
}

const CLASS: [u128; 5] = class_masks();

/// The carry-less product of two 64-bit polynomials, branch-free, from 25 integer
/// multiplications.
///
/// Split each operand into five parts holding the bits at positions `≡ i (mod 5)`. In an
/// integer product of two parts, every output position `≡ i + j (mod 5)` receives at most 13
/// one-bits (each part has at most 13 bits), and the next position of the same class is 5 bits
/// up, so the bit at each such position is the parity of its terms: exactly the carry-less
/// product. XOR the products per class and mask the other positions away.
pub(crate) const fn clmul64(a: u64, b: u64) -> u128 {
    let mut xs = [0u128; 5];
    let mut ys = [0u128; 5];
    let mut i = 0;
    while i < 5 {
        xs[i] = (a as u128) & CLASS[i];
        ys[i] = (b as u128) & CLASS[i];
        i += 1;
    }
    let mut r = 0u128;
    let mut c = 0;
    while c < 5 {
        let mut z = 0u128;
        let mut i = 0;
        while i < 5 {
            // Both factors are below 2^64, so the product fits in 128 bits.
            z ^= xs[i] * ys[(c + 5 - i) % 5];
            i += 1;
        }
        r |= z & CLASS[c];
        c += 1;
    }
    r
}

/// Reduces a 128-bit polynomial modulo `u^64+u^4+u^3+u+1`.
///
/// With `h` the high half, `h u^64 ≡ h(1+u+u^3+u^4)`; the bits of that product above
/// `u^63` are `o = (h >> 63) ⊕ (h >> 61) ⊕ (h >> 60)` (fewer than 4), which fold
/// back the same way without overflowing. Both steps together: `g = h ⊕ o`, result
/// `= l ⊕ g ⊕ (g << 1) ⊕ (g << 3) ⊕ (g << 4)`.
#[inline]
pub(crate) const fn reduce128(x: u128) -> u64 {
    let lo = x as u64;
    let hi = (x >> 64) as u64;
    let g = hi ^ (hi >> 63) ^ (hi >> 61) ^ (hi >> 60);
    lo ^ g ^ (g << 1) ^ (g << 3) ^ (g << 4)
}

impl Gf2p64 {
    /// `u`, the polynomial-basis generator.
    pub const U: Gf2p64 = Gf2p64(2);

    /// Product with the portable code, usable in constant expressions (same value as `*`).
    pub const fn const_mul(self, rhs: Self) -> Self {
        Self(reduce128(clmul64(self.0, rhs.0)))
    }

    #[inline]
    fn mul_elem(self, rhs: Self) -> Self {
        Self(backend::gf2p64_mul_scalar(self.0, rhs.0))
    }

    /// `self^e` (with `0^0 = 1`). The exponent is treated as public.
    pub fn pow(self, e: u64) -> Self {
        let mut result = Self::ONE;
        let mut base = self;
        let mut e = e;
        while e > 0 {
            if e & 1 == 1 {
                result *= base;
            }
            base = base.square();
            e >>= 1;
        }
        result
    }

    /// `self^(2^k)` (k squarings).
    fn frobenius(self, k: u32) -> Self {
        (0..k).fold(self, |x, _| x.square())
    }

    /// `self * rhs` on an explicit backend (portable if `be` is unavailable).
    pub fn mul_with(be: Backend, a: Self, b: Self) -> Self {
        Self(backend::gf2p64_mul_scalar_with(be, a.0, b.0))
    }

    /// [`Bulk::mul_slice`] on an explicit backend.
    pub fn mul_slice_with(be: Backend, out: &mut [Self], a: &[Self], b: &[Self]) {
        debug_assert_eq!(out.len(), a.len());
        debug_assert_eq!(out.len(), b.len());
        backend::gf2p64_mul(
            be,
            cast::gf2p64_as_words_mut(out),
            cast::gf2p64_as_words(a),
            cast::gf2p64_as_words(b),
        );
    }

    /// [`Bulk::mul_add_slice`] on an explicit backend.
    pub fn mul_add_slice_with(be: Backend, out: &mut [Self], a: &[Self], b: &[Self]) {
        debug_assert_eq!(out.len(), a.len());
        debug_assert_eq!(out.len(), b.len());
        backend::gf2p64_mul_add(
            be,
            cast::gf2p64_as_words_mut(out),
            cast::gf2p64_as_words(a),
            cast::gf2p64_as_words(b),
        );
    }

    /// [`Bulk::inner_product`] on an explicit backend (unreduced accumulation, one reduction).
    pub fn inner_product_with(be: Backend, a: &[Self], b: &[Self]) -> Self {
        debug_assert_eq!(a.len(), b.len());
        Self(backend::gf2p64_inner(
            be,
            cast::gf2p64_as_words(a),
            cast::gf2p64_as_words(b),
        ))
    }
}

impl Gf2p64 {
    /// `[Σ lp(b_k), Σ lp(a_k + (a_k + b_k) u)]` over the positions `k` of `a`, with `lp(x1,
    /// x2, y1, y2) = x1 (y1 + y2) + x2 y1` for `a = [x1, x2, y1, y2]` (four slices of one
    /// length) and `b` likewise (at most `a`'s length; zero from there on): the additive shares
    /// of `H(1)` and `H(u)` of a halving level of the multiplication check (the line through
    /// `a` at 0 and `b` at 1, at the node `u`), in one pass with nothing written.
    pub fn node_inner_products_with(be: Backend, a: [&[Self]; 4], b: [&[Self]; 4]) -> [Self; 2] {
        backend::gf2p64_node_inner(
            be,
            a.map(cast::gf2p64_as_words),
            b.map(cast::gf2p64_as_words),
        )
        .map(Self)
    }

    /// [`Bulk::local_inner_product`] on an explicit backend: `Σ a1 (b1 + b2) + a2 b1`, two
    /// carry-less products per index, reduced once.
    pub fn local_inner_product_with(
        be: Backend,
        a1: &[Self],
        a2: &[Self],
        b1: &[Self],
        b2: &[Self],
    ) -> Self {
        debug_assert!([a2.len(), b1.len(), b2.len()] == [a1.len(); 3]);
        Self(backend::gf2p64_local_inner(
            be,
            cast::gf2p64_as_words(a1),
            cast::gf2p64_as_words(a2),
            cast::gf2p64_as_words(b1),
            cast::gf2p64_as_words(b2),
        ))
    }

    /// [`Bulk::lerp_slice`] on an explicit backend.
    pub fn lerp_slice_with(be: Backend, out: &mut [Self], lo: &[Self], hi: &[Self], s: Self) {
        debug_assert_eq!(out.len(), lo.len());
        debug_assert_eq!(out.len(), hi.len());
        backend::gf2p64_lerp(
            be,
            cast::gf2p64_as_words_mut(out),
            cast::gf2p64_as_words(lo),
            cast::gf2p64_as_words(hi),
            s.0,
        );
    }

    /// [`Bulk::lerp_assign_slice`] on an explicit backend.
    pub fn lerp_assign_slice_with(be: Backend, v: &mut [Self], w: &[Self], s: Self) {
        debug_assert_eq!(v.len(), w.len());
        backend::gf2p64_lerp_assign(
            be,
            cast::gf2p64_as_words_mut(v),
            cast::gf2p64_as_words(w),
            s.0,
        );
    }
}

impl Field for Gf2p64 {
    const NAME: &'static str = "GF(2^64)";
    const ZERO: Self = Self(0);
    const ONE: Self = Self(1);
    const CHARACTERISTIC_TWO: bool = true;

    /// `x^2^64-2 = (x^2^63-1)^2` by an Itoh–Tsujii chain: with `b_k = x^(2^k-1)`,
    /// `b_i+j = b_i^(2^j) b_j` (8 products, 63 squarings); `0 ↦ 0`.
    fn inverse(self) -> Self {
        let b1 = self;
        let b2 = b1.frobenius(1) * b1;
        let b3 = b2.frobenius(1) * b1;
        let b6 = b3.frobenius(3) * b3;
        let b12 = b6.frobenius(6) * b6;
        let b15 = b12.frobenius(3) * b3;
        let b30 = b15.frobenius(15) * b15;
        let b60 = b30.frobenius(30) * b30;
        let b63 = b60.frobenius(3) * b3;
        b63.square()
    }
}

/// 8 bytes per element, big-endian (as the reference implementation).
impl Encode for Gf2p64 {
    fn encoded_len(n: usize) -> usize {
        n.saturating_mul(8)
    }
    fn encode_slice(src: &[Self], out: &mut Vec<u8>) {
        out.reserve(Self::encoded_len(src.len()));
        for x in src {
            out.extend_from_slice(&x.0.to_be_bytes());
        }
    }
    fn decode_slice(bytes: &[u8], out: &mut [Self]) -> Result<(), FieldError> {
        let expected = Self::encoded_len(out.len());
        if bytes.len() != expected {
            return Err(FieldError::LengthMismatch {
                expected,
                got: bytes.len(),
            });
        }
        let (words, _) = bytes.as_chunks::<8>();
        for (o, w) in out.iter_mut().zip(words) {
            *o = Self(u64::from_be_bytes(*w));
        }
        Ok(())
    }
}

/// 8 bytes of the stream per element, read little-endian; `fill_random` is one `fill_bytes`
/// of `8 * out.len()` bytes (element `k` = bytes `8k..8k+8`).
impl Random for Gf2p64 {
    fn random<R: rand_core::RngCore + ?Sized>(rng: &mut R) -> Self {
        let mut b = [0u8; 8];
        rng.fill_bytes(&mut b);
        Self(u64::from_le_bytes(b))
    }
    fn fill_random<R: rand_core::RngCore + ?Sized>(rng: &mut R, out: &mut [Self]) {
        rng.fill_bytes(cast::gf2p64_as_bytes_mut(out));
        for x in out.iter_mut() {
            // The bytes were written in memory order; read them as little-endian.
            x.0 = u64::from_le(x.0);
        }
    }
    /// Little-endian targets only: there the memory of an element is its stream bytes.
    fn xor_bytes_mut(out: &mut [Self]) -> Option<(&mut [u8], u8)> {
        if cfg!(target_endian = "little") {
            Some((cast::gf2p64_as_bytes_mut(out), 0xff))
        } else {
            None
        }
    }
}

/// Products and inner products run on [`backend::active`].
impl Bulk for Gf2p64 {
    fn mul_slice(out: &mut [Self], a: &[Self], b: &[Self]) {
        Self::mul_slice_with(backend::active(), out, a, b);
    }
    fn mul_add_slice(out: &mut [Self], a: &[Self], b: &[Self]) {
        Self::mul_add_slice_with(backend::active(), out, a, b);
    }
    fn inner_product(a: &[Self], b: &[Self]) -> Self {
        Self::inner_product_with(backend::active(), a, b)
    }
    fn local_inner_product(a1: &[Self], a2: &[Self], b1: &[Self], b2: &[Self]) -> Self {
        Self::local_inner_product_with(backend::active(), a1, a2, b1, b2)
    }
    fn lerp_slice(out: &mut [Self], lo: &[Self], hi: &[Self], s: Self) {
        Self::lerp_slice_with(backend::active(), out, lo, hi, s);
    }
    fn lerp_assign_slice(v: &mut [Self], w: &[Self], s: Self) {
        Self::lerp_assign_slice_with(backend::active(), v, w, s);
    }
    /// Zero pages from the allocator (`calloc`), not a pass over the memory.
    fn zeroed_vec(n: usize) -> Vec<Self> {
        cast::vec_u64_into_gf2p64(vec![0u64; n])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Bit-by-bit carry-less product.
    fn clmul_naive(a: u64, b: u64) -> u128 {
        (0..64)
            .filter(|i| (b >> i) & 1 == 1)
            .fold(0u128, |acc, i| acc ^ (u128::from(a) << i))
    }

    #[test]
    fn clmul_matches_naive() {
        let mut x = 0x0123_4567_89ab_cdefu64;
        let mut y = 0xfedc_ba98_7654_3210u64;
        for _ in 0..2000 {
            assert_eq!(clmul64(x, y), clmul_naive(x, y));
            x = x.rotate_left(7).wrapping_mul(0x9e37_79b9_7f4a_7c15) ^ 1;
            y = y.rotate_left(13).wrapping_mul(0xd1b5_4a32_d192_ed03) ^ 3;
        }
        // Dense operands maximise the number of terms per position.
        for (a, b) in [(u64::MAX, u64::MAX), (u64::MAX, 1), (1 << 63, 1 << 63)] {
            assert_eq!(clmul64(a, b), clmul_naive(a, b));
        }
    }

    #[test]
    fn reduce_matches_long_division() {
        fn reduce_naive(mut x: u128) -> u64 {
            for i in (64..128).rev() {
                if (x >> i) & 1 == 1 {
                    x ^= 0x1b_u128 << (i - 64);
                    x ^= 1u128 << i;
                }
            }
            x as u64
        }
        for x in [
            u128::MAX,
            1 << 127,
            0x1234_5678_9abc_def0_0fed_cba9_8765_4321,
        ] {
            assert_eq!(reduce128(x), reduce_naive(x));
        }
    }
}
