//! The AVX2 backend (x86-64): AVX2 for `GF(2^8)` and linear maps, PCLMULQDQ / VPCLMULQDQ for
//! `GF(2^64)`.
//!
//! * `GF(2^8)` products, 32 at a time: Horner's rule over the bits of `b`, most significant
//!   first: `p = p*u + (b_i ? a : 0)`. The bit `b_i` is moved to the sign bit by doubling `b`,
//!   `vpcmpgtb` against zero turns sign bits into byte masks, and `p*u` is `vpaddb p,p` plus
//!   `0x1b` in the bytes whose sign bit was set. Branch-free, no tables.
//! * Linear maps: two `vpshufb` lookups in the map's 16-entry nibble tables.
//! * `GF(2^64)`: carry-less products with PCLMULQDQ (two per 128-bit register) or VPCLMULQDQ
//!   (four per 256-bit register), reduced four lanes at a time with shifts: with
//!   `h` the high half and `g = h + (h >> 60) + (h >> 61) + (h >> 63)`,
//!   `h u^64 ≡ g (1 + u + u^3 + u^4)`. Inner products XOR the unreduced 128-bit
//!   products and reduce once.
//!
//! Every function here is safe to call only through a token ([`Avx2`], [`Vpclmul`]) whose
//! existence proves the CPU features; the tokens are created only by run-time detection.
#![allow(unsafe_code)]

use core::arch::x86_64::*;

use super::portable;
use crate::gf2p64::reduce128;
use crate::LinearMap8;

/// Proof that the CPU has AVX2 and PCLMULQDQ.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Avx2 {
    _private: (),
}

impl Avx2 {
    pub(crate) fn detect() -> Option<Self> {
        (is_x86_feature_detected!("avx2") && is_x86_feature_detected!("pclmulqdq"))
            .then_some(Self { _private: () })
    }
}

/// Proof that the CPU has AVX2, PCLMULQDQ and VPCLMULQDQ.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Vpclmul {
    _private: (),
}

impl Vpclmul {
    pub(crate) fn detect() -> Option<Self> {
        (is_x86_feature_detected!("avx2")
            && is_x86_feature_detected!("pclmulqdq")
            && is_x86_feature_detected!("vpclmulqdq"))
        .then_some(Self { _private: () })
    }
}

// ---- loads and stores ----------------------------------------------------------------------

#[inline]
#[target_feature(enable = "avx2")]
fn load(x: &[u8; 32]) -> __m256i {
    // SAFETY: `x` is 32 readable bytes; `loadu` has no alignment requirement.
    unsafe { _mm256_loadu_si256(x.as_ptr().cast()) }
}

#[inline]
#[target_feature(enable = "avx2")]
fn store(x: &mut [u8; 32], v: __m256i) {
    // SAFETY: `x` is 32 writable bytes, uniquely borrowed; `storeu` needs no alignment.
    unsafe { _mm256_storeu_si256(x.as_mut_ptr().cast(), v) }
}

#[inline]
#[target_feature(enable = "avx2")]
fn load_words(x: &[u64; 4]) -> __m256i {
    // SAFETY: `x` is 32 readable bytes; `loadu` has no alignment requirement.
    unsafe { _mm256_loadu_si256(x.as_ptr().cast()) }
}

#[inline]
#[target_feature(enable = "avx2")]
fn store_words(x: &mut [u64; 4], v: __m256i) {
    // SAFETY: `x` is 32 writable bytes, uniquely borrowed; `storeu` needs no alignment.
    unsafe { _mm256_storeu_si256(x.as_mut_ptr().cast(), v) }
}

#[inline]
#[target_feature(enable = "avx2")]
fn load16(x: &[u8; 16]) -> __m128i {
    // SAFETY: `x` is 16 readable bytes; `loadu` has no alignment requirement.
    unsafe { _mm_loadu_si128(x.as_ptr().cast()) }
}

// ---- GF(2^8) products ----------------------------------------------------------------------

/// 32 products in GF(2^8).
#[inline]
#[target_feature(enable = "avx2")]
fn mul32(a: __m256i, b: __m256i) -> __m256i {
    let zero = _mm256_setzero_si256();
    let poly = _mm256_set1_epi8(0x1b);
    let mut b = b;
    // Bit 7 of b.
    let mut p = _mm256_and_si256(_mm256_cmpgt_epi8(zero, b), a);
    for _ in 0..7 {
        b = _mm256_add_epi8(b, b);
        // p = p * u
        let overflow = _mm256_and_si256(_mm256_cmpgt_epi8(zero, p), poly);
        p = _mm256_xor_si256(_mm256_add_epi8(p, p), overflow);
        // p += a if the next bit of b is set
        p = _mm256_xor_si256(p, _mm256_and_si256(_mm256_cmpgt_epi8(zero, b), a));
    }
    p
}

pub(crate) fn gf2p8_mul<const ADD: bool>(_t: Avx2, out: &mut [u8], a: &[u8], b: &[u8]) {
    // SAFETY: the token proves AVX2.
    unsafe { gf2p8_mul_impl::<ADD>(out, a, b) }
}

#[target_feature(enable = "avx2")]
fn gf2p8_mul_impl<const ADD: bool>(out: &mut [u8], a: &[u8], b: &[u8]) {
    let n = out.len().min(a.len()).min(b.len());
    let (oc, ot) = out[..n].as_chunks_mut::<32>();
    let (ac, at) = a[..n].as_chunks::<32>();
    let (bc, bt) = b[..n].as_chunks::<32>();
    for ((o, x), y) in oc.iter_mut().zip(ac).zip(bc) {
        let mut r = mul32(load(x), load(y));
        if ADD {
            r = _mm256_xor_si256(r, load(o));
        }
        store(o, r);
    }
    portable::gf2p8_mul::<ADD>(ot, at, bt);
}

pub(crate) fn gf2p8_inner(_t: Avx2, a: &[u8], b: &[u8]) -> u8 {
    // SAFETY: the token proves AVX2.
    unsafe { gf2p8_inner_impl(a, b) }
}

#[target_feature(enable = "avx2")]
fn gf2p8_inner_impl(a: &[u8], b: &[u8]) -> u8 {
    let n = a.len().min(b.len());
    let (ac, at) = a[..n].as_chunks::<32>();
    let (bc, bt) = b[..n].as_chunks::<32>();
    let mut acc = _mm256_setzero_si256();
    for (x, y) in ac.iter().zip(bc) {
        acc = _mm256_xor_si256(acc, mul32(load(x), load(y)));
    }
    let mut lanes = [0u8; 32];
    store(&mut lanes, acc);
    lanes
        .iter()
        .fold(portable::gf2p8_inner(at, bt), |s, x| s ^ x)
}

// ---- linear maps ---------------------------------------------------------------------------

/// The map's nibble tables, broadcast to both 128-bit lanes.
#[inline]
#[target_feature(enable = "avx2")]
fn tables(map: &LinearMap8) -> (__m256i, __m256i) {
    let (lo, hi) = map.nibble_tables();
    (
        _mm256_broadcastsi128_si256(load16(lo)),
        _mm256_broadcastsi128_si256(load16(hi)),
    )
}

#[inline]
#[target_feature(enable = "avx2")]
fn apply32(t: (__m256i, __m256i), x: __m256i) -> __m256i {
    let nibble = _mm256_set1_epi8(0x0f);
    let lo = _mm256_and_si256(x, nibble);
    // The 16-bit shift moves bits across bytes; the mask keeps each byte's own high nibble.
    let hi = _mm256_and_si256(_mm256_srli_epi16::<4>(x), nibble);
    _mm256_xor_si256(_mm256_shuffle_epi8(t.0, lo), _mm256_shuffle_epi8(t.1, hi))
}

pub(crate) fn linear_apply(_t: Avx2, map: &LinearMap8, src: &[u8], dst: &mut [u8]) {
    // SAFETY: the token proves AVX2.
    unsafe { linear_apply_impl(map, src, dst) }
}

#[target_feature(enable = "avx2")]
fn linear_apply_impl(map: &LinearMap8, src: &[u8], dst: &mut [u8]) {
    let n = src.len().min(dst.len());
    let t = tables(map);
    let (sc, st) = src[..n].as_chunks::<32>();
    let (dc, dt) = dst[..n].as_chunks_mut::<32>();
    for (d, s) in dc.iter_mut().zip(sc) {
        store(d, apply32(t, load(s)));
    }
    portable::linear_apply(map, st, dt);
}

pub(crate) fn linear_apply_in_place(_t: Avx2, map: &LinearMap8, buf: &mut [u8]) {
    // SAFETY: the token proves AVX2.
    unsafe { linear_apply_in_place_impl(map, buf) }
}

#[target_feature(enable = "avx2")]
fn linear_apply_in_place_impl(map: &LinearMap8, buf: &mut [u8]) {
    let t = tables(map);
    let (chunks, tail) = buf.as_chunks_mut::<32>();
    for c in chunks.iter_mut() {
        let v = apply32(t, load(c));
        store(c, v);
    }
    portable::linear_apply_in_place(map, tail);
}

// ---- GF(2^64) ------------------------------------------------------------------------------

/// Reduces four 128-bit products given as their low and high halves.
#[inline]
#[target_feature(enable = "avx2")]
fn reduce4(lo: __m256i, hi: __m256i) -> __m256i {
    let g = _mm256_xor_si256(
        _mm256_xor_si256(hi, _mm256_srli_epi64::<63>(hi)),
        _mm256_xor_si256(_mm256_srli_epi64::<61>(hi), _mm256_srli_epi64::<60>(hi)),
    );
    let gx = _mm256_xor_si256(
        _mm256_xor_si256(g, _mm256_slli_epi64::<1>(g)),
        _mm256_xor_si256(_mm256_slli_epi64::<3>(g), _mm256_slli_epi64::<4>(g)),
    );
    _mm256_xor_si256(lo, gx)
}

/// Four products with PCLMULQDQ on the two 128-bit halves.
#[inline]
#[target_feature(enable = "avx2,pclmulqdq")]
fn mul4_pclmul(a: __m256i, b: __m256i) -> __m256i {
    let (a01, a23) = (_mm256_castsi256_si128(a), _mm256_extracti128_si256::<1>(a));
    let (b01, b23) = (_mm256_castsi256_si128(b), _mm256_extracti128_si256::<1>(b));
    let p0 = _mm_clmulepi64_si128::<0x00>(a01, b01);
    let p1 = _mm_clmulepi64_si128::<0x11>(a01, b01);
    let p2 = _mm_clmulepi64_si128::<0x00>(a23, b23);
    let p3 = _mm_clmulepi64_si128::<0x11>(a23, b23);
    let lo = _mm256_set_m128i(_mm_unpacklo_epi64(p2, p3), _mm_unpacklo_epi64(p0, p1));
    let hi = _mm256_set_m128i(_mm_unpackhi_epi64(p2, p3), _mm_unpackhi_epi64(p0, p1));
    reduce4(lo, hi)
}

/// Four products with VPCLMULQDQ.
#[inline]
#[target_feature(enable = "avx2,pclmulqdq,vpclmulqdq")]
fn mul4_vpclmul(a: __m256i, b: __m256i) -> __m256i {
    // Per 128-bit lane: even = element 0 (resp. 2), odd = element 1 (resp. 3).
    let even = _mm256_clmulepi64_epi128::<0x00>(a, b);
    let odd = _mm256_clmulepi64_epi128::<0x11>(a, b);
    reduce4(
        _mm256_unpacklo_epi64(even, odd),
        _mm256_unpackhi_epi64(even, odd),
    )
}

/// Low and high halves of a 128-bit value in an `__m128i`.
#[inline]
#[target_feature(enable = "avx2")]
fn halves(x: __m128i) -> u128 {
    let lo = _mm_cvtsi128_si64(x) as u64;
    let hi = _mm_cvtsi128_si64(_mm_unpackhi_epi64(x, x)) as u64;
    (u128::from(hi) << 64) | u128::from(lo)
}

pub(crate) fn gf2p64_mul_one(_t: Avx2, a: u64, b: u64) -> u64 {
    // SAFETY: the token proves AVX2 and PCLMULQDQ.
    unsafe { mul_one_impl(a, b) }
}

/// The unreduced 128-bit carry-less product.
#[inline]
#[target_feature(enable = "avx2,pclmulqdq")]
fn clmul_one(a: u64, b: u64) -> u128 {
    halves(_mm_clmulepi64_si128::<0x00>(
        _mm_cvtsi64_si128(a as i64),
        _mm_cvtsi64_si128(b as i64),
    ))
}

#[target_feature(enable = "avx2,pclmulqdq")]
fn mul_one_impl(a: u64, b: u64) -> u64 {
    reduce128(clmul_one(a, b))
}

pub(crate) fn gf2p64_mul_pclmul<const ADD: bool>(_t: Avx2, out: &mut [u64], a: &[u64], b: &[u64]) {
    // SAFETY: the token proves AVX2 and PCLMULQDQ.
    unsafe { gf2p64_mul_pclmul_impl::<ADD>(out, a, b) }
}

#[target_feature(enable = "avx2,pclmulqdq")]
fn gf2p64_mul_pclmul_impl<const ADD: bool>(out: &mut [u64], a: &[u64], b: &[u64]) {
    let n = out.len().min(a.len()).min(b.len());
    let (oc, ot) = out[..n].as_chunks_mut::<4>();
    let (ac, at) = a[..n].as_chunks::<4>();
    let (bc, bt) = b[..n].as_chunks::<4>();
    for ((o, x), y) in oc.iter_mut().zip(ac).zip(bc) {
        let mut r = mul4_pclmul(load_words(x), load_words(y));
        if ADD {
            r = _mm256_xor_si256(r, load_words(o));
        }
        store_words(o, r);
    }
    for ((o, x), y) in ot.iter_mut().zip(at).zip(bt) {
        let r = mul_one_impl(*x, *y);
        *o = if ADD { *o ^ r } else { r };
    }
}

pub(crate) fn gf2p64_mul_vpclmul<const ADD: bool>(
    _t: Vpclmul,
    out: &mut [u64],
    a: &[u64],
    b: &[u64],
) {
    // SAFETY: the token proves AVX2, PCLMULQDQ and VPCLMULQDQ.
    unsafe { gf2p64_mul_vpclmul_impl::<ADD>(out, a, b) }
}

#[target_feature(enable = "avx2,pclmulqdq,vpclmulqdq")]
fn gf2p64_mul_vpclmul_impl<const ADD: bool>(out: &mut [u64], a: &[u64], b: &[u64]) {
    let n = out.len().min(a.len()).min(b.len());
    let (oc, ot) = out[..n].as_chunks_mut::<4>();
    let (ac, at) = a[..n].as_chunks::<4>();
    let (bc, bt) = b[..n].as_chunks::<4>();
    for ((o, x), y) in oc.iter_mut().zip(ac).zip(bc) {
        let mut r = mul4_vpclmul(load_words(x), load_words(y));
        if ADD {
            r = _mm256_xor_si256(r, load_words(o));
        }
        store_words(o, r);
    }
    for ((o, x), y) in ot.iter_mut().zip(at).zip(bt) {
        let r = mul_one_impl(*x, *y);
        *o = if ADD { *o ^ r } else { r };
    }
}

pub(crate) fn gf2p64_inner_pclmul(_t: Avx2, a: &[u64], b: &[u64]) -> u64 {
    // SAFETY: the token proves AVX2 and PCLMULQDQ.
    unsafe { gf2p64_inner_pclmul_impl(a, b) }
}

#[target_feature(enable = "avx2,pclmulqdq")]
fn gf2p64_inner_pclmul_impl(a: &[u64], b: &[u64]) -> u64 {
    let n = a.len().min(b.len());
    let (ac, at) = a[..n].as_chunks::<4>();
    let (bc, bt) = b[..n].as_chunks::<4>();
    let (mut acc0, mut acc1) = (_mm_setzero_si128(), _mm_setzero_si128());
    for (x, y) in ac.iter().zip(bc) {
        let (x, y) = (load_words(x), load_words(y));
        let (x01, x23) = (_mm256_castsi256_si128(x), _mm256_extracti128_si256::<1>(x));
        let (y01, y23) = (_mm256_castsi256_si128(y), _mm256_extracti128_si256::<1>(y));
        acc0 = _mm_xor_si128(acc0, _mm_clmulepi64_si128::<0x00>(x01, y01));
        acc1 = _mm_xor_si128(acc1, _mm_clmulepi64_si128::<0x11>(x01, y01));
        acc0 = _mm_xor_si128(acc0, _mm_clmulepi64_si128::<0x00>(x23, y23));
        acc1 = _mm_xor_si128(acc1, _mm_clmulepi64_si128::<0x11>(x23, y23));
    }
    let mut acc = halves(_mm_xor_si128(acc0, acc1));
    for (x, y) in at.iter().zip(bt) {
        acc ^= clmul_one(*x, *y);
    }
    reduce128(acc)
}

pub(crate) fn gf2p64_inner_vpclmul(_t: Vpclmul, a: &[u64], b: &[u64]) -> u64 {
    // SAFETY: the token proves AVX2, PCLMULQDQ and VPCLMULQDQ.
    unsafe { gf2p64_inner_vpclmul_impl(a, b) }
}

/// Adds the two unreduced products of the lanes of `x`, `y` to `acc`.
#[inline]
#[target_feature(enable = "avx2,pclmulqdq,vpclmulqdq")]
fn accumulate4(acc: __m256i, x: &[u64; 4], y: &[u64; 4]) -> __m256i {
    let (x, y) = (load_words(x), load_words(y));
    let acc = _mm256_xor_si256(acc, _mm256_clmulepi64_epi128::<0x00>(x, y));
    _mm256_xor_si256(acc, _mm256_clmulepi64_epi128::<0x11>(x, y))
}

#[target_feature(enable = "avx2,pclmulqdq,vpclmulqdq")]
fn gf2p64_inner_vpclmul_impl(a: &[u64], b: &[u64]) -> u64 {
    let n = a.len().min(b.len());
    let (ac, at) = a[..n].as_chunks::<4>();
    let (bc, bt) = b[..n].as_chunks::<4>();
    // Two accumulators over pairs of blocks hide the multiplier latency.
    let (ap, ar) = ac.as_chunks::<2>();
    let (bp, br) = bc.as_chunks::<2>();
    let (mut acc0, mut acc1) = (_mm256_setzero_si256(), _mm256_setzero_si256());
    for ([x0, x1], [y0, y1]) in ap.iter().zip(bp) {
        acc0 = accumulate4(acc0, x0, y0);
        acc1 = accumulate4(acc1, x1, y1);
    }
    for (x, y) in ar.iter().zip(br) {
        acc0 = accumulate4(acc0, x, y);
    }
    let acc = _mm256_xor_si256(acc0, acc1);
    let folded = _mm_xor_si128(
        _mm256_castsi256_si128(acc),
        _mm256_extracti128_si256::<1>(acc),
    );
    let mut sum = halves(folded);
    for (x, y) in at.iter().zip(bt) {
        sum ^= clmul_one(*x, *y);
    }
    reduce128(sum)
}
