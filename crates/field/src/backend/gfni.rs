//! The GFNI backend (x86-64): `vgf2p8mulb` for `GF(2^8)` products (the instruction uses the AES
//! polynomial `0x11B`) and `vgf2p8affineqb` for linear maps (matrix from
//! `LinearMap8::gfni_matrix`), on 256-bit (AVX2-encoded) or 512-bit (AVX-512) vectors.
//! `GF(2^64)` goes through the VPCLMULQDQ code of `avx2.rs`.
//!
//! The matrix layout is checked in portable tests against a software model of
//! `gf2p8affineqb`; the backend comparison tests (`tests/backends.rs`) run this file against
//! the portable code on every CPU that has GFNI (first on an Intel Xeon with GFNI and AVX-512,
//! 2026-11-22; earlier development machines lacked GFNI).
#![allow(unsafe_code)]

use core::arch::x86_64::*;

use super::avx2::prefetch_ahead;
use super::{portable, NibbleTables};
use crate::LinearMap8;

/// Proof that the CPU has GFNI and AVX2.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Gfni {
    _private: (),
}

impl Gfni {
    pub(crate) fn detect() -> Option<Self> {
        (is_x86_feature_detected!("gfni") && is_x86_feature_detected!("avx2"))
            .then_some(Self { _private: () })
    }
}

/// Proof that the CPU has GFNI, AVX2, AVX-512F and AVX-512BW.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Gfni512 {
    _private: (),
}

impl Gfni512 {
    pub(crate) fn detect() -> Option<Self> {
        (is_x86_feature_detected!("gfni")
            && is_x86_feature_detected!("avx2")
            && is_x86_feature_detected!("avx512f")
            && is_x86_feature_detected!("avx512bw"))
        .then_some(Self { _private: () })
    }
}

// ---- 256-bit -------------------------------------------------------------------------------

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

pub(crate) fn gf2p8_mul<const ADD: bool>(_t: Gfni, out: &mut [u8], a: &[u8], b: &[u8]) {
    // SAFETY: the token proves GFNI and AVX2.
    unsafe { gf2p8_mul_impl::<ADD>(out, a, b) }
}

#[target_feature(enable = "gfni,avx2")]
fn gf2p8_mul_impl<const ADD: bool>(out: &mut [u8], a: &[u8], b: &[u8]) {
    let n = out.len().min(a.len()).min(b.len());
    let (oc, ot) = out[..n].as_chunks_mut::<32>();
    let (ac, at) = a[..n].as_chunks::<32>();
    let (bc, bt) = b[..n].as_chunks::<32>();
    for ((o, x), y) in oc.iter_mut().zip(ac).zip(bc) {
        let mut r = _mm256_gf2p8mul_epi8(load(x), load(y));
        if ADD {
            r = _mm256_xor_si256(r, load(o));
        }
        store(o, r);
    }
    portable::gf2p8_mul::<ADD>(ot, at, bt);
}

pub(crate) fn gf2p8_inner(_t: Gfni, a: &[u8], b: &[u8]) -> u8 {
    // SAFETY: the token proves GFNI and AVX2.
    unsafe { gf2p8_inner_impl(a, b) }
}

#[target_feature(enable = "gfni,avx2")]
fn gf2p8_inner_impl(a: &[u8], b: &[u8]) -> u8 {
    let n = a.len().min(b.len());
    let (ac, at) = a[..n].as_chunks::<32>();
    let (bc, bt) = b[..n].as_chunks::<32>();
    let mut acc = _mm256_setzero_si256();
    for (x, y) in ac.iter().zip(bc) {
        acc = _mm256_xor_si256(acc, _mm256_gf2p8mul_epi8(load(x), load(y)));
    }
    let mut lanes = [0u8; 32];
    store(&mut lanes, acc);
    lanes
        .iter()
        .fold(portable::gf2p8_inner(at, bt), |s, x| s ^ x)
}

pub(crate) fn linear_apply(_t: Gfni, map: &LinearMap8, src: &[u8], dst: &mut [u8]) {
    // SAFETY: the token proves GFNI and AVX2.
    unsafe { linear_apply_impl(map, src, dst) }
}

#[target_feature(enable = "gfni,avx2")]
fn linear_apply_impl(map: &LinearMap8, src: &[u8], dst: &mut [u8]) {
    let n = src.len().min(dst.len());
    let m = _mm256_set1_epi64x(map.gfni_matrix() as i64);
    let (sc, st) = src[..n].as_chunks::<32>();
    let (dc, dt) = dst[..n].as_chunks_mut::<32>();
    for (d, s) in dc.iter_mut().zip(sc) {
        prefetch_ahead(s);
        store(d, _mm256_gf2p8affine_epi64_epi8::<0>(load(s), m));
    }
    portable::linear_apply(map, st, dt);
}

/// `dst[k] = f(a[k]) ^ g(b[k])` on the common prefix, 32 bytes at a time.
pub(crate) fn linear_apply_pair(
    _t: Gfni,
    maps: [&LinearMap8; 2],
    a: &[u8],
    b: &[u8],
    dst: &mut [u8],
) {
    // SAFETY: the token proves GFNI and AVX2.
    unsafe { linear_apply_pair_impl(maps, a, b, dst) }
}

#[target_feature(enable = "gfni,avx2")]
fn linear_apply_pair_impl([f, g]: [&LinearMap8; 2], a: &[u8], b: &[u8], dst: &mut [u8]) {
    let n = a.len().min(b.len()).min(dst.len());
    let mf = _mm256_set1_epi64x(f.gfni_matrix() as i64);
    let mg = _mm256_set1_epi64x(g.gfni_matrix() as i64);
    let (ac, at) = a[..n].as_chunks::<32>();
    let (bc, bt) = b[..n].as_chunks::<32>();
    let (dc, dt) = dst[..n].as_chunks_mut::<32>();
    for ((d, x), y) in dc.iter_mut().zip(ac).zip(bc) {
        prefetch_ahead(x);
        prefetch_ahead(y);
        let v = _mm256_xor_si256(
            _mm256_gf2p8affine_epi64_epi8::<0>(load(x), mf),
            _mm256_gf2p8affine_epi64_epi8::<0>(load(y), mg),
        );
        store(d, v);
    }
    for ((d, x), y) in dt.iter_mut().zip(at).zip(bt) {
        *d = f.apply_byte(*x) ^ g.apply_byte(*y);
    }
}

pub(crate) fn linear_apply_in_place(_t: Gfni, map: &LinearMap8, buf: &mut [u8]) {
    // SAFETY: the token proves GFNI and AVX2.
    unsafe { linear_apply_in_place_impl(map, buf) }
}

#[target_feature(enable = "gfni,avx2")]
fn linear_apply_in_place_impl(map: &LinearMap8, buf: &mut [u8]) {
    let m = _mm256_set1_epi64x(map.gfni_matrix() as i64);
    let (chunks, tail) = buf.as_chunks_mut::<32>();
    for c in chunks.iter_mut() {
        let v = _mm256_gf2p8affine_epi64_epi8::<0>(load(c), m);
        store(c, v);
    }
    portable::linear_apply_in_place(map, tail);
}

// ---- 512-bit -------------------------------------------------------------------------------

#[inline]
#[target_feature(enable = "avx512f")]
fn load64(x: &[u8; 64]) -> __m512i {
    // SAFETY: `x` is 64 readable bytes; `loadu` has no alignment requirement.
    unsafe { _mm512_loadu_si512(x.as_ptr().cast()) }
}

#[inline]
#[target_feature(enable = "avx512f")]
fn store64(x: &mut [u8; 64], v: __m512i) {
    // SAFETY: `x` is 64 writable bytes, uniquely borrowed; `storeu` needs no alignment.
    unsafe { _mm512_storeu_si512(x.as_mut_ptr().cast(), v) }
}

pub(crate) fn gf2p8_mul_512<const ADD: bool>(_t: Gfni512, out: &mut [u8], a: &[u8], b: &[u8]) {
    // SAFETY: the token proves GFNI, AVX2, AVX-512F and AVX-512BW.
    unsafe { gf2p8_mul_512_impl::<ADD>(out, a, b) }
}

#[target_feature(enable = "gfni,avx2,avx512f,avx512bw")]
fn gf2p8_mul_512_impl<const ADD: bool>(out: &mut [u8], a: &[u8], b: &[u8]) {
    let n = out.len().min(a.len()).min(b.len());
    let (oc, ot) = out[..n].as_chunks_mut::<64>();
    let (ac, at) = a[..n].as_chunks::<64>();
    let (bc, bt) = b[..n].as_chunks::<64>();
    for ((o, x), y) in oc.iter_mut().zip(ac).zip(bc) {
        let mut r = _mm512_gf2p8mul_epi8(load64(x), load64(y));
        if ADD {
            r = _mm512_xor_si512(r, load64(o));
        }
        store64(o, r);
    }
    gf2p8_mul_impl::<ADD>(ot, at, bt);
}

/// Reduction modulo `u^4 + u + 1` of a carry-less product of two `GF(2^4)` elements (degree
/// at most 6, bit 7 never set): `u^4 = u + 1`, `u^5 = u^2 + u`, `u^6 = u^3 + u^2`.
const GF4_REDUCE: LinearMap8 = LinearMap8::from_basis_images([1, 2, 4, 8, 0x03, 0x06, 0x0c, 0]);

/// `GF(2^4)` products, one element per byte (high nibbles of `a` and `b` ignored, those of the
/// result zero), on the common prefix: the nibbles' product by `vgf2p8mulb` has degree at most
/// 6, so the AES polynomial never reduces it and it is the carry-less product, which one
/// `vgf2p8affineqb` reduces modulo `u^4 + u + 1`.
pub(crate) fn gf2p4_mul<const ADD: bool>(_t: Gfni, out: &mut [u8], a: &[u8], b: &[u8]) {
    // SAFETY: the token proves GFNI and AVX2.
    unsafe { gf2p4_mul_impl::<ADD>(out, a, b) }
}

#[target_feature(enable = "gfni,avx2")]
fn gf2p4_mul_impl<const ADD: bool>(out: &mut [u8], a: &[u8], b: &[u8]) {
    let n = out.len().min(a.len()).min(b.len());
    let nibble = _mm256_set1_epi8(0x0f);
    let m = _mm256_set1_epi64x(GF4_REDUCE.gfni_matrix() as i64);
    let (oc, ot) = out[..n].as_chunks_mut::<32>();
    let (ac, at) = a[..n].as_chunks::<32>();
    let (bc, bt) = b[..n].as_chunks::<32>();
    for ((o, x), y) in oc.iter_mut().zip(ac).zip(bc) {
        let (x, y) = (
            _mm256_and_si256(load(x), nibble),
            _mm256_and_si256(load(y), nibble),
        );
        let mut r = _mm256_gf2p8affine_epi64_epi8::<0>(_mm256_gf2p8mul_epi8(x, y), m);
        if ADD {
            r = _mm256_xor_si256(r, load(o));
        }
        store(o, r);
    }
    crate::gf2p4::portable::mul::<ADD>(ot, at, bt);
}

/// [`gf2p4_mul`] on 512-bit vectors.
pub(crate) fn gf2p4_mul_512<const ADD: bool>(_t: Gfni512, out: &mut [u8], a: &[u8], b: &[u8]) {
    // SAFETY: the token proves GFNI, AVX2, AVX-512F and AVX-512BW.
    unsafe { gf2p4_mul_512_impl::<ADD>(out, a, b) }
}

#[target_feature(enable = "gfni,avx2,avx512f,avx512bw")]
fn gf2p4_mul_512_impl<const ADD: bool>(out: &mut [u8], a: &[u8], b: &[u8]) {
    let n = out.len().min(a.len()).min(b.len());
    let nibble = _mm512_set1_epi8(0x0f);
    let m = _mm512_set1_epi64(GF4_REDUCE.gfni_matrix() as i64);
    let (oc, ot) = out[..n].as_chunks_mut::<64>();
    let (ac, at) = a[..n].as_chunks::<64>();
    let (bc, bt) = b[..n].as_chunks::<64>();
    for ((o, x), y) in oc.iter_mut().zip(ac).zip(bc) {
        let (x, y) = (
            _mm512_and_si512(load64(x), nibble),
            _mm512_and_si512(load64(y), nibble),
        );
        let mut r = _mm512_gf2p8affine_epi64_epi8::<0>(_mm512_gf2p8mul_epi8(x, y), m);
        if ADD {
            r = _mm512_xor_si512(r, load64(o));
        }
        store64(o, r);
    }
    gf2p4_mul_impl::<ADD>(ot, at, bt);
}

pub(crate) fn bits_to_bytes_512(_t: Gfni512, src: &[u16], out: &mut [u8]) {
    // SAFETY: the token proves GFNI, AVX2, AVX-512F and AVX-512BW.
    unsafe { bits_to_bytes_512_impl(src, out) }
}

/// Four words (64 bits) per step: the bits as a mask, the mask as bytes 0 or 1
/// (`vmovdqu8` with zero masking).
#[target_feature(enable = "gfni,avx2,avx512f,avx512bw")]
fn bits_to_bytes_512_impl(src: &[u16], out: &mut [u8]) {
    let n = src.len().min(out.len() / 16);
    let (oc, ot) = out[..16 * n].as_chunks_mut::<64>();
    let (sc, st) = src[..n].as_chunks::<4>();
    let ones = _mm512_set1_epi8(1);
    for (o, w) in oc.iter_mut().zip(sc) {
        let m =
            u64::from(w[0]) | u64::from(w[1]) << 16 | u64::from(w[2]) << 32 | u64::from(w[3]) << 48;
        store64(o, _mm512_maskz_mov_epi8(m, ones));
    }
    portable::bits_to_bytes(st, ot);
}

pub(crate) fn gf2p8_inner_512(_t: Gfni512, a: &[u8], b: &[u8]) -> u8 {
    // SAFETY: the token proves GFNI, AVX2, AVX-512F and AVX-512BW.
    unsafe { gf2p8_inner_512_impl(a, b) }
}

#[target_feature(enable = "gfni,avx2,avx512f,avx512bw")]
fn gf2p8_inner_512_impl(a: &[u8], b: &[u8]) -> u8 {
    let n = a.len().min(b.len());
    let (ac, at) = a[..n].as_chunks::<64>();
    let (bc, bt) = b[..n].as_chunks::<64>();
    let mut acc = _mm512_setzero_si512();
    for (x, y) in ac.iter().zip(bc) {
        acc = _mm512_xor_si512(acc, _mm512_gf2p8mul_epi8(load64(x), load64(y)));
    }
    let mut lanes = [0u8; 64];
    store64(&mut lanes, acc);
    lanes.iter().fold(gf2p8_inner_impl(at, bt), |s, x| s ^ x)
}

pub(crate) fn linear_apply_512(_t: Gfni512, map: &LinearMap8, src: &[u8], dst: &mut [u8]) {
    // SAFETY: the token proves GFNI, AVX2, AVX-512F and AVX-512BW.
    unsafe { linear_apply_512_impl(map, src, dst) }
}

#[target_feature(enable = "gfni,avx2,avx512f,avx512bw")]
fn linear_apply_512_impl(map: &LinearMap8, src: &[u8], dst: &mut [u8]) {
    let n = src.len().min(dst.len());
    let m = _mm512_set1_epi64(map.gfni_matrix() as i64);
    let (sc, st) = src[..n].as_chunks::<64>();
    let (dc, dt) = dst[..n].as_chunks_mut::<64>();
    for (d, s) in dc.iter_mut().zip(sc) {
        prefetch_ahead(s);
        store64(d, _mm512_gf2p8affine_epi64_epi8::<0>(load64(s), m));
    }
    linear_apply_impl(map, st, dt);
}

/// `dst[k] = f(a[k]) ^ g(b[k])` on the common prefix, 64 bytes at a time.
pub(crate) fn linear_apply_pair_512(
    _t: Gfni512,
    maps: [&LinearMap8; 2],
    a: &[u8],
    b: &[u8],
    dst: &mut [u8],
) {
    // SAFETY: the token proves GFNI, AVX2, AVX-512F and AVX-512BW.
    unsafe { linear_apply_pair_512_impl(maps, a, b, dst) }
}

#[target_feature(enable = "gfni,avx2,avx512f,avx512bw")]
fn linear_apply_pair_512_impl(maps: [&LinearMap8; 2], a: &[u8], b: &[u8], dst: &mut [u8]) {
    let n = a.len().min(b.len()).min(dst.len());
    let [f, g] = maps;
    let mf = _mm512_set1_epi64(f.gfni_matrix() as i64);
    let mg = _mm512_set1_epi64(g.gfni_matrix() as i64);
    let (ac, at) = a[..n].as_chunks::<64>();
    let (bc, bt) = b[..n].as_chunks::<64>();
    let (dc, dt) = dst[..n].as_chunks_mut::<64>();
    for ((d, x), y) in dc.iter_mut().zip(ac).zip(bc) {
        prefetch_ahead(x);
        prefetch_ahead(y);
        let v = _mm512_xor_si512(
            _mm512_gf2p8affine_epi64_epi8::<0>(load64(x), mf),
            _mm512_gf2p8affine_epi64_epi8::<0>(load64(y), mg),
        );
        store64(d, v);
    }
    linear_apply_pair_impl(maps, at, bt, dt);
}

/// `dst[k] = Σ_i f_i(src_i[k])` over the whole 64-byte chunks of the common prefix; returns
/// how many bytes it did (the caller does the tail).
pub(crate) fn linear_apply_sum_512<const N: usize>(
    _t: Gfni512,
    maps: [&LinearMap8; N],
    src: [&[u8]; N],
    dst: &mut [u8],
) -> usize {
    // SAFETY: the token proves GFNI, AVX2, AVX-512F and AVX-512BW.
    unsafe { linear_apply_sum_512_impl(maps, src, dst) }
}

#[target_feature(enable = "gfni,avx2,avx512f,avx512bw")]
fn linear_apply_sum_512_impl<const N: usize>(
    maps: [&LinearMap8; N],
    src: [&[u8]; N],
    dst: &mut [u8],
) -> usize {
    let n = src.iter().fold(dst.len(), |n, s| n.min(s.len())) / 64 * 64;
    let m: [__m512i; N] = maps.map(|f| _mm512_set1_epi64(f.gfni_matrix() as i64));
    let chunks: [&[[u8; 64]]; N] = src.map(|s| s.as_chunks::<64>().0);
    for (c, d) in dst[..n].as_chunks_mut::<64>().0.iter_mut().enumerate() {
        let mut v = _mm512_setzero_si512();
        for (s, m) in chunks.iter().zip(&m) {
            prefetch_ahead(&s[c]);
            let x = load64(&s[c]);
            v = _mm512_xor_si512(v, _mm512_gf2p8affine_epi64_epi8::<0>(x, *m));
        }
        store64(d, v);
    }
    n
}

/// [`crate::subspace::CosetShift`] on the whole 64-byte columns of the first `n` bytes of
/// every plane (`n ≤` each `src[m].len()`, `31 · stride + n ≤ dst.len()`, else less is
/// done), one 64-byte column at a time, in straight-line code per level (a loop over the
/// levels kept the 32 values on the stack: 2.5 times the samples). Returns the bytes done.
pub(crate) fn coset_shift_512(
    _t: Gfni512,
    t: &crate::subspace::CosetShift,
    src: [&[u8]; crate::subspace::POINTS],
    dst: &mut [u8],
    stride: usize,
    n: usize,
) -> usize {
    // SAFETY: the token proves GFNI, AVX2, AVX-512F and AVX-512BW.
    unsafe { coset_shift_512_impl(t, src, dst, stride, n) }
}

#[target_feature(enable = "gfni,avx2,avx512f,avx512bw")]
fn coset_shift_512_impl(
    t: &crate::subspace::CosetShift,
    src: [&[u8]; crate::subspace::POINTS],
    dst: &mut [u8],
    stride: usize,
    n: usize,
) -> usize {
    use crate::subspace::{DIM, POINTS};
    let n = src.iter().fold(n.min(stride), |n, s| n.min(s.len()));
    let n = n.min(dst.len().saturating_sub((POINTS - 1) * stride)) / 64 * 64;
    const _: () = assert!(DIM == 5);
    const HALF: usize = POINTS / 2;
    for c in (0..n).step_by(64) {
        let load = |base: usize| -> [__m512i; HALF] {
            let mut v = [_mm512_setzero_si512(); HALF];
            for (v, s) in v.iter_mut().zip(&src[base..]) {
                if let Some(s) = s.get(c..c + 64).and_then(|s| s.first_chunk::<64>()) {
                    *v = load64(s);
                }
            }
            v
        };
        // Levels 0-3 pair values within a half, level 4 the two halves value by value: so
        // each half's 16 values go through levels 0-3 on registers (all 32 values and the
        // products do not fit in the 32 vector registers), and the last level's pairs meet
        // one at a time.
        let mut lo = load(0);
        coset_down_half::<0, 0>(&mut lo, &t.down[0]);
        coset_down_half::<1, 0>(&mut lo, &t.down[1]);
        coset_down_half::<2, 0>(&mut lo, &t.down[2]);
        coset_down_half::<3, 0>(&mut lo, &t.down[3]);
        let mut hi = load(HALF);
        coset_down_half::<0, HALF>(&mut hi, &t.down[0]);
        coset_down_half::<1, HALF>(&mut hi, &t.down[1]);
        coset_down_half::<2, HALF>(&mut hi, &t.down[2]);
        coset_down_half::<3, HALF>(&mut hi, &t.down[3]);
        // Level 4, down then up: pair `p` with `p + 16`, one constant each.
        let (d4, u4) = (t.down[DIM - 1][0], t.up[DIM - 1][0]);
        for (a, b) in lo.iter_mut().zip(hi.iter_mut()) {
            *b = _mm512_xor_si512(*b, *a);
            if d4 != 0 {
                *a = _mm512_xor_si512(*a, coset_mul(*b, d4));
            }
            *a = _mm512_xor_si512(*a, coset_mul(*b, u4));
            *b = _mm512_xor_si512(*b, *a);
        }
        coset_up_half::<3, HALF>(&mut hi, &t.up[3]);
        coset_up_half::<2, HALF>(&mut hi, &t.up[2]);
        coset_up_half::<1, HALF>(&mut hi, &t.up[1]);
        coset_up_half::<0, HALF>(&mut hi, &t.up[0]);
        coset_up_half::<3, 0>(&mut lo, &t.up[3]);
        coset_up_half::<2, 0>(&mut lo, &t.up[2]);
        coset_up_half::<1, 0>(&mut lo, &t.up[1]);
        coset_up_half::<0, 0>(&mut lo, &t.up[0]);
        for (m, x) in lo.iter().chain(&hi).enumerate() {
            let at = m * stride + c;
            if let Some(d) = dst
                .get_mut(at..at + 64)
                .and_then(|d| d.first_chunk_mut::<64>())
            {
                store64(d, *x);
            }
        }
    }
    n
}

/// `v ↦ c v` by the `GFNI` matrix `m` of `c`.
#[inline]
#[target_feature(enable = "gfni,avx512f")]
fn coset_mul(x: __m512i, m: u64) -> __m512i {
    _mm512_gf2p8affine_epi64_epi8::<0>(x, _mm512_set1_epi64(m as i64))
}

/// The lower position of pair `q` of level `L`: `q` with a zero inserted at bit `L`.
#[inline]
const fn coset_pair<const L: usize>(q: usize) -> usize {
    ((q >> L) << (L + 1)) | (q & ((1 << L) - 1))
}

/// The down step of level `L < 4` of [`crate::subspace::CosetShift`] on the 16 values of
/// positions `B ..` (a half): position `p` (bit `L` clear) with `p + 2^L`, constant
/// `down[p >> (L + 1)]` (skipped where zero).
#[inline]
#[target_feature(enable = "gfni,avx512f")]
fn coset_down_half<const L: usize, const B: usize>(v: &mut [__m512i; 16], down: &[u64]) {
    let h = 1 << L;
    for i in (0..8).map(coset_pair::<L>) {
        v[i + h] = _mm512_xor_si512(v[i + h], v[i]);
        let m = down[(B + i) >> (L + 1)];
        if m != 0 {
            v[i] = _mm512_xor_si512(v[i], coset_mul(v[i + h], m));
        }
    }
}

/// The up step of level `L < 4` (as [`coset_down_half`], constants `up`).
#[inline]
#[target_feature(enable = "gfni,avx512f")]
fn coset_up_half<const L: usize, const B: usize>(v: &mut [__m512i; 16], up: &[u64]) {
    let h = 1 << L;
    for i in (0..8).map(coset_pair::<L>) {
        v[i] = _mm512_xor_si512(v[i], coset_mul(v[i + h], up[(B + i) >> (L + 1)]));
        v[i + h] = _mm512_xor_si512(v[i + h], v[i]);
    }
}

/// `dst[k] = Σ_i f_i(src_i[k])` into `GF(2^64)` words over the whole 64-byte chunks of the
/// common prefix (one `vgf2p8affineqb` per map and byte plane, one transpose per chunk);
/// returns how many elements it did (the caller does the tail).
pub(crate) fn embed_bytes_sum_512<const N: usize>(
    _t: Gfni512,
    t: [&NibbleTables<'_>; N],
    src: [&[u8]; N],
    dst: &mut [u64],
) -> usize {
    // SAFETY: the token proves GFNI, AVX2, AVX-512F and AVX-512BW.
    unsafe { embed_bytes_sum_512_impl(t, src, dst) }
}

#[target_feature(enable = "gfni,avx2,avx512f,avx512bw")]
fn embed_bytes_sum_512_impl<const N: usize>(
    t: [&NibbleTables<'_>; N],
    src: [&[u8]; N],
    dst: &mut [u64],
) -> usize {
    let n = src.iter().fold(dst.len(), |n, s| n.min(s.len())) / 64 * 64;
    // The matrices are broadcast from the tables as they are used (a load each, as from
    // an array of broadcast registers, which for 32 maps was 16 KiB zeroed and written per
    // call).
    let chunks: [&[[u8; 64]]; N] = src.map(|s| s.as_chunks::<64>().0);
    for (c, d) in dst[..n].as_chunks_mut::<64>().0.iter_mut().enumerate() {
        let mut planes = [_mm512_setzero_si512(); 8];
        for (s, t) in chunks.iter().zip(&t) {
            let x = load64(&s[c]);
            for (plane, g) in planes.iter_mut().zip(t.gfni) {
                let m = _mm512_set1_epi64(*g as i64);
                *plane = _mm512_xor_si512(*plane, _mm512_gf2p8affine_epi64_epi8::<0>(x, m));
            }
        }
        let (words, _) = d.as_chunks_mut::<8>();
        for (w, v) in words.iter_mut().zip(transpose_planes_512(planes)) {
            // SAFETY: `w` is 64 writable bytes; `storeu` needs no alignment.
            unsafe { _mm512_storeu_si512(w.as_mut_ptr().cast(), v) };
        }
    }
    n
}

/// `dst[k] = f(lo(src[k])) ^ g(hi(src[k]))` on the common prefix, 32 words at a time: both
/// maps on all 64 bytes, the high byte's image shifted onto the low one, and the words
/// narrowed to bytes.
pub(crate) fn linear_apply_pair_words_512(
    _t: Gfni512,
    maps: [&LinearMap8; 2],
    src: &[u16],
    dst: &mut [u8],
) {
    // SAFETY: the token proves GFNI, AVX2, AVX-512F and AVX-512BW.
    unsafe { linear_apply_pair_words_512_impl(maps, src, dst) }
}

#[target_feature(enable = "gfni,avx2,avx512f,avx512bw")]
fn linear_apply_pair_words_512_impl([f, g]: [&LinearMap8; 2], src: &[u16], dst: &mut [u8]) {
    let n = src.len().min(dst.len());
    let mf = _mm512_set1_epi64(f.gfni_matrix() as i64);
    let mg = _mm512_set1_epi64(g.gfni_matrix() as i64);
    let low = _mm512_set1_epi16(0x00ff);
    let (sc, st) = src[..n].as_chunks::<32>();
    let (dc, dt) = dst[..n].as_chunks_mut::<32>();
    for (d, s) in dc.iter_mut().zip(sc) {
        // SAFETY: `s` is 64 readable bytes; `loadu` has no alignment requirement.
        let v = unsafe { _mm512_loadu_si512(s.as_ptr().cast()) };
        let a = _mm512_and_si512(_mm512_gf2p8affine_epi64_epi8::<0>(v, mf), low);
        let b = _mm512_srli_epi16::<8>(_mm512_gf2p8affine_epi64_epi8::<0>(v, mg));
        let w = _mm512_cvtepi16_epi8(_mm512_xor_si512(a, b));
        // SAFETY: `d` is 32 writable bytes; `storeu` needs no alignment.
        unsafe { _mm256_storeu_si256(d.as_mut_ptr().cast(), w) };
    }
    for (d, s) in dt.iter_mut().zip(st) {
        let [l, h] = s.to_le_bytes();
        *d = f.apply_byte(l) ^ g.apply_byte(h);
    }
}

pub(crate) fn linear_apply_in_place_512(_t: Gfni512, map: &LinearMap8, buf: &mut [u8]) {
    // SAFETY: the token proves GFNI, AVX2, AVX-512F and AVX-512BW.
    unsafe { linear_apply_in_place_512_impl(map, buf) }
}

#[target_feature(enable = "gfni,avx2,avx512f,avx512bw")]
fn linear_apply_in_place_512_impl(map: &LinearMap8, buf: &mut [u8]) {
    let m = _mm512_set1_epi64(map.gfni_matrix() as i64);
    let (chunks, tail) = buf.as_chunks_mut::<64>();
    for c in chunks.iter_mut() {
        let v = _mm512_gf2p8affine_epi64_epi8::<0>(load64(c), m);
        store64(c, v);
    }
    linear_apply_in_place_impl(map, tail);
}

// ---- Byte embeddings into GF(2^64) (512-bit) ----------------------------------------------

/// `dst[k] = f(a[k]) [^ g(b[k])]` on the common prefix (`[f, g] = t`, `g` only with `b`).
pub(crate) fn embed_bytes_512(
    _t: Gfni512,
    t: [&NibbleTables<'_>; 2],
    a: &[u8],
    b: Option<&[u8]>,
    dst: &mut [u64],
) {
    // SAFETY: the token proves GFNI, AVX2, AVX-512F and AVX-512BW.
    unsafe { embed_bytes_512_impl(t, a, b, dst) }
}

/// 64 bytes at a time: byte `p` of every image is a `GF(2)`-linear function of the byte, one
/// `vgf2p8affineqb` per byte plane (and map), then the eight planes are transposed into 64
/// words ([`transpose_planes_512`]). Constant time (no secret-indexed memory access).
#[target_feature(enable = "gfni,avx2,avx512f,avx512bw")]
fn embed_bytes_512_impl(t: [&NibbleTables<'_>; 2], a: &[u8], b: Option<&[u8]>, dst: &mut [u64]) {
    let n = dst
        .len()
        .min(a.len())
        .min(b.map_or(usize::MAX, <[u8]>::len));
    let mf: [__m512i; 8] = core::array::from_fn(|p| _mm512_set1_epi64(t[0].gfni[p] as i64));
    let mg: [__m512i; 8] = core::array::from_fn(|p| _mm512_set1_epi64(t[1].gfni[p] as i64));
    let (ac, at) = a[..n].as_chunks::<64>();
    let bc = b.map(|b| b[..n].as_chunks::<64>().0);
    let (dc, dt) = dst[..n].as_chunks_mut::<64>();
    // Images of at most 16 bits (the compact relations' small polynomials): two planes,
    // widened instead of transposed.
    let narrow = t.iter().all(|m| m.gfni[2..].iter().all(|w| *w == 0));
    for (i, (d, x)) in dc.iter_mut().zip(ac).enumerate() {
        let x = load64(x);
        let y = bc.map(|bc| load64(&bc[i]));
        if narrow {
            let plane = |p: usize| {
                let v = _mm512_gf2p8affine_epi64_epi8::<0>(x, mf[p]);
                match y {
                    Some(y) => _mm512_xor_si512(v, _mm512_gf2p8affine_epi64_epi8::<0>(y, mg[p])),
                    None => v,
                }
            };
            let (p0, p1) = (plane(0), plane(1));
            // Lane k: the 16-bit images of elements 16 k .. 16 k + 8 (`lo`) and the next 8.
            let (lo, hi) = (_mm512_unpacklo_epi8(p0, p1), _mm512_unpackhi_epi8(p0, p1));
            let lanes = [
                _mm512_extracti32x4_epi32::<0>(lo),
                _mm512_extracti32x4_epi32::<0>(hi),
                _mm512_extracti32x4_epi32::<1>(lo),
                _mm512_extracti32x4_epi32::<1>(hi),
                _mm512_extracti32x4_epi32::<2>(lo),
                _mm512_extracti32x4_epi32::<2>(hi),
                _mm512_extracti32x4_epi32::<3>(lo),
                _mm512_extracti32x4_epi32::<3>(hi),
            ];
            let (words, _) = d.as_chunks_mut::<8>();
            for (w, l) in words.iter_mut().zip(lanes) {
                // SAFETY: `w` is 64 writable bytes; `storeu` needs no alignment.
                unsafe { _mm512_storeu_si512(w.as_mut_ptr().cast(), _mm512_cvtepu16_epi64(l)) };
            }
            continue;
        }
        let mut planes = [_mm512_setzero_si512(); 8];
        for (p, plane) in planes.iter_mut().enumerate() {
            *plane = _mm512_gf2p8affine_epi64_epi8::<0>(x, mf[p]);
            if let Some(y) = y {
                *plane = _mm512_xor_si512(*plane, _mm512_gf2p8affine_epi64_epi8::<0>(y, mg[p]));
            }
        }
        let (words, _) = d.as_chunks_mut::<8>();
        for (w, v) in words.iter_mut().zip(transpose_planes_512(planes)) {
            // SAFETY: `w` is 64 writable bytes; `storeu` needs no alignment.
            unsafe { _mm512_storeu_si512(w.as_mut_ptr().cast(), v) };
        }
    }
    let whole = n - at.len();
    match b {
        Some(b) => portable::embed_byte_pairs(t, at, &b[whole..n], dt),
        None => portable::embed_bytes(t[0].lo, t[0].hi, at, dt),
    }
}

/// The images of 64 bytes under the map with matrices `m` ([`NibbleTables::gfni`]), as
/// [`transpose_planes_512`] orders them.
#[inline]
#[target_feature(enable = "gfni,avx512f,avx512bw")]
fn images64(m: &[__m512i; 8], x: __m512i) -> [__m512i; 8] {
    let mut planes = [_mm512_setzero_si512(); 8];
    for (plane, m) in planes.iter_mut().zip(m) {
        *plane = _mm512_gf2p8affine_epi64_epi8::<0>(x, *m);
    }
    transpose_planes_512(planes)
}

/// Reduces eight 128-bit products (low and high halves) modulo `x^64 + x^4 + x^3 + x + 1`.
#[inline]
#[target_feature(enable = "avx512f")]
fn reduce8(lo: __m512i, hi: __m512i) -> __m512i {
    let g = _mm512_xor_si512(
        _mm512_xor_si512(hi, _mm512_srli_epi64::<63>(hi)),
        _mm512_xor_si512(_mm512_srli_epi64::<61>(hi), _mm512_srli_epi64::<60>(hi)),
    );
    let gx = _mm512_xor_si512(
        _mm512_xor_si512(g, _mm512_slli_epi64::<1>(g)),
        _mm512_xor_si512(_mm512_slli_epi64::<3>(g), _mm512_slli_epi64::<4>(g)),
    );
    _mm512_xor_si512(lo, gx)
}

/// `out_i = ca_i f(a_i) + cb_i g(b_i)` in `GF(2^64)` on the common prefix (`[f, g] = t`).
pub(crate) fn embed_mul2_512(
    _t: Gfni512,
    v: super::avx2::Vpclmul,
    t: [&NibbleTables<'_>; 2],
    a: (&[u8], &[u64]),
    b: (&[u8], &[u64]),
    out: &mut [u64],
) {
    // SAFETY: the tokens prove GFNI, AVX2, AVX-512F, AVX-512BW, PCLMULQDQ and VPCLMULQDQ.
    unsafe { embed_mul2_512_impl(v, t, a, b, out) }
}

/// 64 words at a time: the images by [`images64`], two unreduced products per word (the
/// even and odd words of each 128-bit lane), one reduction ([`reduce8`]).
#[target_feature(enable = "gfni,avx2,avx512f,avx512bw,pclmulqdq,vpclmulqdq")]
fn embed_mul2_512_impl(
    v: super::avx2::Vpclmul,
    t: [&NibbleTables<'_>; 2],
    a: (&[u8], &[u64]),
    b: (&[u8], &[u64]),
    out: &mut [u64],
) {
    let n = out
        .len()
        .min(a.0.len())
        .min(a.1.len())
        .min(b.0.len())
        .min(b.1.len());
    let mf: [__m512i; 8] = core::array::from_fn(|p| _mm512_set1_epi64(t[0].gfni[p] as i64));
    let mg: [__m512i; 8] = core::array::from_fn(|p| _mm512_set1_epi64(t[1].gfni[p] as i64));
    let (xa, _) = a.0[..n].as_chunks::<64>();
    let (ca, _) = a.1[..n].as_chunks::<64>();
    let (xb, _) = b.0[..n].as_chunks::<64>();
    let (cb, _) = b.1[..n].as_chunks::<64>();
    let (oc, _) = out[..n].as_chunks_mut::<64>();
    let load8 = |w: &[u64; 8]| {
        // SAFETY: `w` is 64 readable bytes; `loadu` has no alignment requirement.
        unsafe { _mm512_loadu_si512(w.as_ptr().cast()) }
    };
    if core::ptr::eq(a.1, b.1) {
        // One factor for both terms: `(f(a_i) + g(b_i)) c_i`, the images summed by planes
        // (one transpose, one product per word).
        for ((o, (x, c)), y) in oc.iter_mut().zip(xa.iter().zip(ca)).zip(xb) {
            let (xv, yv) = (load64(x), load64(y));
            let planes: [__m512i; 8] = core::array::from_fn(|p| {
                _mm512_xor_si512(
                    _mm512_gf2p8affine_epi64_epi8::<0>(xv, mf[p]),
                    _mm512_gf2p8affine_epi64_epi8::<0>(yv, mg[p]),
                )
            });
            let w = transpose_planes_512(planes);
            let (c8, _) = c.as_chunks::<8>();
            let (o8, _) = o.as_chunks_mut::<8>();
            for m in 0..8 {
                store_words8(&mut o8[m], mul8(w[m], load8(&c8[m])));
            }
        }
    } else {
        embed_mul2_blocks(oc, (xa, ca), (xb, cb), [&mf, &mg]);
    }
    let w = n / 64 * 64;
    super::avx2::embed_mul2(
        v,
        t,
        (&a.0[w..n], &a.1[w..n]),
        (&b.0[w..n], &b.1[w..n]),
        &mut out[w..n],
    );
}

/// The whole blocks of [`embed_mul2_512_impl`] with two factors per word.
#[inline]
#[target_feature(enable = "gfni,avx2,avx512f,avx512bw,pclmulqdq,vpclmulqdq")]
#[allow(clippy::type_complexity)]
fn embed_mul2_blocks(
    oc: &mut [[u64; 64]],
    (xa, ca): (&[[u8; 64]], &[[u64; 64]]),
    (xb, cb): (&[[u8; 64]], &[[u64; 64]]),
    [mf, mg]: [&[__m512i; 8]; 2],
) {
    let load8 = |w: &[u64; 8]| {
        // SAFETY: `w` is 64 readable bytes; `loadu` has no alignment requirement.
        unsafe { _mm512_loadu_si512(w.as_ptr().cast()) }
    };
    for ((o, (x, c)), (y, d)) in oc.iter_mut().zip(xa.iter().zip(ca)).zip(xb.iter().zip(cb)) {
        let (wa, wb) = (images64(mf, load64(x)), images64(mg, load64(y)));
        let (c8, _) = c.as_chunks::<8>();
        let (d8, _) = d.as_chunks::<8>();
        let (o8, _) = o.as_chunks_mut::<8>();
        for m in 0..8 {
            let (cv, dv) = (load8(&c8[m]), load8(&d8[m]));
            let even = _mm512_xor_si512(
                _mm512_clmulepi64_epi128::<0x00>(wa[m], cv),
                _mm512_clmulepi64_epi128::<0x00>(wb[m], dv),
            );
            let odd = _mm512_xor_si512(
                _mm512_clmulepi64_epi128::<0x11>(wa[m], cv),
                _mm512_clmulepi64_epi128::<0x11>(wb[m], dv),
            );
            let r = reduce8(
                _mm512_unpacklo_epi64(even, odd),
                _mm512_unpackhi_epi64(even, odd),
            );
            // SAFETY: `o8[m]` is 64 writable bytes; `storeu` needs no alignment.
            unsafe { _mm512_storeu_si512(o8[m].as_mut_ptr().cast(), r) };
        }
    }
}

/// Eight products `a_i b_i` in `GF(2^64)` (even and odd words of each 128-bit lane).
#[inline]
#[target_feature(enable = "avx512f,pclmulqdq,vpclmulqdq")]
fn mul8(a: __m512i, b: __m512i) -> __m512i {
    let even = _mm512_clmulepi64_epi128::<0x00>(a, b);
    let odd = _mm512_clmulepi64_epi128::<0x11>(a, b);
    reduce8(
        _mm512_unpacklo_epi64(even, odd),
        _mm512_unpackhi_epi64(even, odd),
    )
}

#[inline]
#[target_feature(enable = "avx512f")]
fn load_words8(w: &[u64; 8]) -> __m512i {
    // SAFETY: `w` is 64 readable bytes; `loadu` has no alignment requirement.
    unsafe { _mm512_loadu_si512(w.as_ptr().cast()) }
}

#[inline]
#[target_feature(enable = "avx512f")]
fn store_words8(w: &mut [u64; 8], v: __m512i) {
    // SAFETY: `w` is 64 writable bytes; `storeu` needs no alignment.
    unsafe { _mm512_storeu_si512(w.as_mut_ptr().cast(), v) }
}

/// `out[k] = lo[k] + (lo[k] + hi[k]) s` in `GF(2^64)` on the common prefix, 8 words at a
/// time.
pub(crate) fn gf2p64_lerp_512(
    _t: Gfni512,
    v: super::avx2::Vpclmul,
    out: &mut [u64],
    lo: &[u64],
    hi: &[u64],
    s: u64,
) {
    // SAFETY: the tokens prove AVX-512F, PCLMULQDQ and VPCLMULQDQ.
    unsafe { lerp_512_impl(v, out, lo, hi, s) }
}

#[target_feature(enable = "avx2,avx512f,pclmulqdq,vpclmulqdq")]
fn lerp_512_impl(v: super::avx2::Vpclmul, out: &mut [u64], lo: &[u64], hi: &[u64], s: u64) {
    let n = out.len().min(lo.len()).min(hi.len());
    let (oc, _) = out[..n].as_chunks_mut::<8>();
    let (lc, _) = lo[..n].as_chunks::<8>();
    let (hc, _) = hi[..n].as_chunks::<8>();
    let sv = _mm512_set1_epi64(s as i64);
    for ((o, l), h) in oc.iter_mut().zip(lc).zip(hc) {
        let l = load_words8(l);
        let d = _mm512_xor_si512(l, load_words8(h));
        store_words8(o, _mm512_xor_si512(l, mul8(d, sv)));
    }
    let w = n / 8 * 8;
    super::avx2::gf2p64_lerp_vpclmul(v, &mut out[w..n], &lo[w..n], &hi[w..n], s);
}

/// `v[k] = v[k] + (v[k] + w[k]) s` in `GF(2^64)` on the common prefix, 8 words at a time.
pub(crate) fn gf2p64_lerp_assign_512(
    _t: Gfni512,
    vp: super::avx2::Vpclmul,
    v: &mut [u64],
    w: &[u64],
    s: u64,
) {
    // SAFETY: the tokens prove AVX-512F, PCLMULQDQ and VPCLMULQDQ.
    unsafe { lerp_assign_512_impl(vp, v, w, s) }
}

#[target_feature(enable = "avx2,avx512f,pclmulqdq,vpclmulqdq")]
fn lerp_assign_512_impl(vp: super::avx2::Vpclmul, v: &mut [u64], w: &[u64], s: u64) {
    let n = v.len().min(w.len());
    let (vc, _) = v[..n].as_chunks_mut::<8>();
    let (wc, _) = w[..n].as_chunks::<8>();
    let sv = _mm512_set1_epi64(s as i64);
    for (x, h) in vc.iter_mut().zip(wc) {
        prefetch_ahead(x);
        prefetch_ahead(h);
        let l = load_words8(x);
        let d = _mm512_xor_si512(l, load_words8(h));
        store_words8(x, _mm512_xor_si512(l, mul8(d, sv)));
    }
    let k = n / 8 * 8;
    super::avx2::gf2p64_lerp_assign_vpclmul(vp, &mut v[k..n], &w[k..n], s);
}

/// `out[k] (+)= a[k] b[k]` in `GF(2^64)` on the common prefix, 8 words at a time.
pub(crate) fn gf2p64_mul_512<const ADD: bool>(
    _t: Gfni512,
    v: super::avx2::Vpclmul,
    out: &mut [u64],
    a: &[u64],
    b: &[u64],
) {
    // SAFETY: the tokens prove AVX-512F, PCLMULQDQ and VPCLMULQDQ.
    unsafe { gf2p64_mul_512_impl::<ADD>(v, out, a, b) }
}

#[target_feature(enable = "avx2,avx512f,pclmulqdq,vpclmulqdq")]
fn gf2p64_mul_512_impl<const ADD: bool>(
    v: super::avx2::Vpclmul,
    out: &mut [u64],
    a: &[u64],
    b: &[u64],
) {
    let n = out.len().min(a.len()).min(b.len());
    let (oc, _) = out[..n].as_chunks_mut::<8>();
    let (ac, _) = a[..n].as_chunks::<8>();
    let (bc, _) = b[..n].as_chunks::<8>();
    for ((o, x), y) in oc.iter_mut().zip(ac).zip(bc) {
        let mut r = mul8(load_words8(x), load_words8(y));
        if ADD {
            r = _mm512_xor_si512(r, load_words8(o));
        }
        store_words8(o, r);
    }
    let w = n / 8 * 8;
    super::avx2::gf2p64_mul_vpclmul::<ADD>(v, &mut out[w..n], &a[w..n], &b[w..n]);
}

/// `Σ a[k] b[k]` in `GF(2^64)` over the common prefix: eight unreduced products per step,
/// one reduction.
pub(crate) fn gf2p64_inner_512(_t: Gfni512, v: super::avx2::Vpclmul, a: &[u64], b: &[u64]) -> u64 {
    // SAFETY: the tokens prove AVX-512F, PCLMULQDQ and VPCLMULQDQ.
    unsafe { gf2p64_inner_512_impl(v, a, b) }
}

#[target_feature(enable = "avx2,avx512f,pclmulqdq,vpclmulqdq")]
fn gf2p64_inner_512_impl(v: super::avx2::Vpclmul, a: &[u64], b: &[u64]) -> u64 {
    let n = a.len().min(b.len());
    let (ac, _) = a[..n].as_chunks::<8>();
    let (bc, _) = b[..n].as_chunks::<8>();
    let z = _mm512_setzero_si512();
    let mut acc = [z; 2];
    for (x, y) in ac.iter().zip(bc) {
        let (x, y) = (load_words8(x), load_words8(y));
        acc[0] = _mm512_xor_si512(acc[0], _mm512_clmulepi64_epi128::<0x00>(x, y));
        acc[1] = _mm512_xor_si512(acc[1], _mm512_clmulepi64_epi128::<0x11>(x, y));
    }
    let w = n / 8 * 8;
    crate::gf2p64::reduce128(fold_acc8(acc))
        ^ super::avx2::gf2p64_inner_vpclmul(v, &a[w..n], &b[w..n])
}

/// `Σ a1 (b1 + b2) + a2 b1` in `GF(2^64)` over the common prefix, eight lanes at a time.
pub(crate) fn gf2p64_local_inner_512(
    _t: Gfni512,
    v: super::avx2::Vpclmul,
    a1: &[u64],
    a2: &[u64],
    b1: &[u64],
    b2: &[u64],
) -> u64 {
    // SAFETY: the tokens prove AVX-512F, PCLMULQDQ and VPCLMULQDQ.
    unsafe { local_inner_512_impl(v, a1, a2, b1, b2) }
}

#[target_feature(enable = "avx2,avx512f,pclmulqdq,vpclmulqdq")]
fn local_inner_512_impl(
    v: super::avx2::Vpclmul,
    a1: &[u64],
    a2: &[u64],
    b1: &[u64],
    b2: &[u64],
) -> u64 {
    let n = a1.len().min(a2.len()).min(b1.len()).min(b2.len());
    let z = _mm512_setzero_si512();
    let mut acc = [z; 2];
    let (x1c, _) = a1[..n].as_chunks::<8>();
    let (x2c, _) = a2[..n].as_chunks::<8>();
    let (y1c, _) = b1[..n].as_chunks::<8>();
    let (y2c, _) = b2[..n].as_chunks::<8>();
    for ((x1, x2), (y1, y2)) in x1c.iter().zip(x2c).zip(y1c.iter().zip(y2c)) {
        add_lp8(
            &mut acc,
            [
                load_words8(x1),
                load_words8(x2),
                load_words8(y1),
                load_words8(y2),
            ],
        );
    }
    let w = n / 8 * 8;
    crate::gf2p64::reduce128(fold_acc8(acc))
        ^ super::avx2::gf2p64_local_inner_vpclmul(v, &a1[w..n], &a2[w..n], &b1[w..n], &b2[w..n])
}

/// `x · u` in eight lanes (`u` = `0x2`: shift and conditional `0x1b`).
#[inline]
#[target_feature(enable = "avx512f")]
fn times_u8(x: __m512i) -> __m512i {
    let top = _mm512_srai_epi64::<63>(x);
    _mm512_xor_si512(
        _mm512_slli_epi64::<1>(x),
        _mm512_and_si512(top, _mm512_set1_epi64(0x1b)),
    )
}

/// Adds the unreduced `lp(x1, x2, y1, y2) = x1 (y1 + y2) + x2 y1` of eight lanes to `acc`
/// (even lanes in `acc[0]`, odd lanes in `acc[1]`).
#[inline]
#[target_feature(enable = "avx512f,pclmulqdq,vpclmulqdq")]
fn add_lp8(acc: &mut [__m512i; 2], [x1, x2, y1, y2]: [__m512i; 4]) {
    let t = _mm512_xor_si512(y1, y2);
    acc[0] = _mm512_xor_si512(acc[0], _mm512_clmulepi64_epi128::<0x00>(x1, t));
    acc[1] = _mm512_xor_si512(acc[1], _mm512_clmulepi64_epi128::<0x11>(x1, t));
    acc[0] = _mm512_xor_si512(acc[0], _mm512_clmulepi64_epi128::<0x00>(x2, y1));
    acc[1] = _mm512_xor_si512(acc[1], _mm512_clmulepi64_epi128::<0x11>(x2, y1));
}

/// The 128-bit XOR of the unreduced products held in `acc`.
#[inline]
#[target_feature(enable = "avx512f")]
fn fold_acc8(acc: [__m512i; 2]) -> u128 {
    let mut w = [0u64; 8];
    store_words8(&mut w, _mm512_xor_si512(acc[0], acc[1]));
    let (lo, hi) = (w[0] ^ w[2] ^ w[4] ^ w[6], w[1] ^ w[3] ^ w[5] ^ w[7]);
    (u128::from(hi) << 64) | u128::from(lo)
}

/// The node sums of a halving level (see `portable::gf2p64_node_inner`): eight lanes at a
/// time where both halves are present, the rest by the 256-bit code (the sums are linear, so
/// the parts add).
pub(crate) fn gf2p64_node_inner_512(
    _t: Gfni512,
    v: super::avx2::Vpclmul,
    a: [&[u64]; 4],
    b: [&[u64]; 4],
) -> [u64; 2] {
    // SAFETY: the tokens prove AVX-512F, PCLMULQDQ and VPCLMULQDQ.
    unsafe { node_inner_512_impl(v, a, b) }
}

#[target_feature(enable = "avx2,avx512f,pclmulqdq,vpclmulqdq")]
fn node_inner_512_impl(v: super::avx2::Vpclmul, a: [&[u64]; 4], b: [&[u64]; 4]) -> [u64; 2] {
    let (_, m) = portable::node_lengths(a, b);
    let whole = m / 8 * 8;
    let z = _mm512_setzero_si512();
    let (mut h1, mut hu) = ([z; 2], [z; 2]);
    for k in (0..whole).step_by(8) {
        // `k + 8 <= whole <= m`, within every slice.
        let word = |v: &[u64]| load_words8(v[k..].first_chunk::<8>().unwrap_or(&[0; 8]));
        let bv = b.map(word);
        add_lp8(&mut h1, bv);
        let f: [__m512i; 4] = core::array::from_fn(|j| {
            let av = word(a[j]);
            _mm512_xor_si512(av, times_u8(_mm512_xor_si512(av, bv[j])))
        });
        add_lp8(&mut hu, f);
    }
    let [r1, ru] =
        super::avx2::gf2p64_node_inner_vpclmul(v, a.map(|x| &x[whole..]), b.map(|x| &x[whole..]));
    [
        crate::gf2p64::reduce128(fold_acc8(h1)) ^ r1,
        crate::gf2p64::reduce128(fold_acc8(hu)) ^ ru,
    ]
}

/// Transposes the eight byte planes of 64 words (plane `p` holds byte `p` of word `i` at
/// byte `i`): three rounds of unpacking (8-, 16-, 32-bit) within the 128-bit lanes, after
/// which register `m` holds words `16 k + 2 m`, `16 k + 2 m + 1` in lane `k`; then a 4×4
/// transpose of 128-bit lanes per half of the registers. Register `r` of the result holds
/// words `8 r .. 8 r + 8`.
#[inline]
#[target_feature(enable = "avx512f,avx512bw")]
fn transpose_planes_512(p: [__m512i; 8]) -> [__m512i; 8] {
    let a0 = _mm512_unpacklo_epi8(p[0], p[1]);
    let a1 = _mm512_unpackhi_epi8(p[0], p[1]);
    let a2 = _mm512_unpacklo_epi8(p[2], p[3]);
    let a3 = _mm512_unpackhi_epi8(p[2], p[3]);
    let a4 = _mm512_unpacklo_epi8(p[4], p[5]);
    let a5 = _mm512_unpackhi_epi8(p[4], p[5]);
    let a6 = _mm512_unpacklo_epi8(p[6], p[7]);
    let a7 = _mm512_unpackhi_epi8(p[6], p[7]);
    let b0 = _mm512_unpacklo_epi16(a0, a2);
    let b1 = _mm512_unpackhi_epi16(a0, a2);
    let b2 = _mm512_unpacklo_epi16(a1, a3);
    let b3 = _mm512_unpackhi_epi16(a1, a3);
    let b4 = _mm512_unpacklo_epi16(a4, a6);
    let b5 = _mm512_unpackhi_epi16(a4, a6);
    let b6 = _mm512_unpacklo_epi16(a5, a7);
    let b7 = _mm512_unpackhi_epi16(a5, a7);
    let c = [
        _mm512_unpacklo_epi32(b0, b4),
        _mm512_unpackhi_epi32(b0, b4),
        _mm512_unpacklo_epi32(b1, b5),
        _mm512_unpackhi_epi32(b1, b5),
        _mm512_unpacklo_epi32(b2, b6),
        _mm512_unpackhi_epi32(b2, b6),
        _mm512_unpacklo_epi32(b3, b7),
        _mm512_unpackhi_epi32(b3, b7),
    ];
    // Words 8 r + 2 m' (m' < 4) of result r = 2 k + h are in lane k of c[4 h + m'].
    let mut w = [_mm512_setzero_si512(); 8];
    for h in 0..2 {
        let u = &c[4 * h..4 * h + 4];
        // [u0.l0, u0.l1, u1.l0, u1.l1] and so on.
        let t0 = _mm512_shuffle_i64x2::<0b01_00_01_00>(u[0], u[1]);
        let t1 = _mm512_shuffle_i64x2::<0b11_10_11_10>(u[0], u[1]);
        let t2 = _mm512_shuffle_i64x2::<0b01_00_01_00>(u[2], u[3]);
        let t3 = _mm512_shuffle_i64x2::<0b11_10_11_10>(u[2], u[3]);
        w[h] = _mm512_shuffle_i64x2::<0b10_00_10_00>(t0, t2);
        w[2 + h] = _mm512_shuffle_i64x2::<0b11_01_11_01>(t0, t2);
        w[4 + h] = _mm512_shuffle_i64x2::<0b10_00_10_00>(t1, t3);
        w[6 + h] = _mm512_shuffle_i64x2::<0b11_01_11_01>(t1, t3);
    }
    w
}

// ---- Bit sums (AVX-512 VBMI) ---------------------------------------------------------------

/// Proof that the CPU has GFNI, AVX-512F/BW and AVX-512 VBMI (`vpermb`).
#[derive(Clone, Copy, Debug)]
pub(crate) struct GfniVbmi {
    _private: (),
}

impl GfniVbmi {
    pub(crate) fn detect() -> Option<Self> {
        (is_x86_feature_detected!("gfni")
            && is_x86_feature_detected!("avx512f")
            && is_x86_feature_detected!("avx512bw")
            && is_x86_feature_detected!("avx512vbmi"))
        .then_some(Self { _private: () })
    }
}

/// [`crate::backend::split_word_bytes`] for whole groups of 64 words (`outs` all at least as
/// long as what is asked; the words `j · stride`, `j < 64 · groups`, inside `words`); returns
/// how many it wrote (a multiple of 64).
pub(crate) fn split_word_bytes(
    _t: GfniVbmi,
    words: &[u64],
    stride: usize,
    outs: [&mut [u8]; 6],
) -> usize {
    let len = outs.iter().map(|o| o.len()).min().unwrap_or(0);
    // Whole groups whose last word, `(64 g - 1) · stride`, lies inside `words`.
    let groups = (len / 64).min(match words.len() {
        0 => 0,
        w => ((w - 1) / stride.max(1) + 1) / 64,
    });
    // SAFETY: the token proves AVX-512F/BW and VBMI; the bounds are those just computed.
    unsafe { split_word_bytes_impl(words, stride.max(1), groups, outs) };
    64 * groups
}

/// 64 words a group: eight vectors of eight words (loaded, or gathered at the stride), each
/// permuted so that 8-byte lane `f` holds byte `f` of its eight words, then the lanes
/// transposed across the eight vectors (three levels of two-vector permutations), so that
/// output `f` gets 64 bytes in one store.
///
/// # Safety
///
/// AVX-512F/BW and VBMI; `(64 groups - 1) · stride < words.len()` if `groups > 0`, and every
/// output at least `64 groups` long.
#[target_feature(enable = "avx512f,avx512bw,avx512vbmi")]
unsafe fn split_word_bytes_impl(words: &[u64], stride: usize, groups: usize, outs: [&mut [u8]; 6]) {
    // Byte `8 f + k` of a permuted vector is byte `f` of its word `k`.
    let by_field: [u8; 64] = core::array::from_fn(|i| (8 * (i % 8) + i / 8) as u8);
    // SAFETY: 64 readable bytes.
    let by_field = unsafe { _mm512_loadu_si512(by_field.as_ptr().cast()) };
    let idx = |v: [i64; 8]| _mm512_set_epi64(v[7], v[6], v[5], v[4], v[3], v[2], v[1], v[0]);
    // Level 1 pairs vectors (lanes 0-3, then 4-7, interleaved), level 2 pairs of pairs, level 3
    // the two halves.
    let (l1_lo, l1_hi) = (
        idx([0, 8, 1, 9, 2, 10, 3, 11]),
        idx([4, 12, 5, 13, 6, 14, 7, 15]),
    );
    let (l2_a, l2_b) = (
        idx([0, 1, 8, 9, 2, 3, 10, 11]),
        idx([4, 5, 12, 13, 6, 7, 14, 15]),
    );
    let (l3_a, l3_b) = (
        idx([0, 1, 2, 3, 8, 9, 10, 11]),
        idx([4, 5, 6, 7, 12, 13, 14, 15]),
    );
    let steps = _mm512_mullo_epi64(
        idx([0, 1, 2, 3, 4, 5, 6, 7]),
        _mm512_set1_epi64(stride as i64),
    );
    let mut pieces = outs.map(|o| o[..64 * groups].as_chunks_mut::<64>().0.iter_mut());
    for g in 0..groups {
        let q: [__m512i; 8] = core::array::from_fn(|i| {
            let first = (64 * g + 8 * i) * stride;
            let v = if stride == 1 {
                // SAFETY: words `first .. first + 8` lie inside `words` (the caller's bound).
                unsafe { _mm512_loadu_si512(words.as_ptr().add(first).cast()) }
            } else {
                // SAFETY: the eight words `first + k · stride`, `k < 8`, lie inside `words`
                // (the caller's bound); a gather reads only those.
                unsafe { _mm512_i64gather_epi64::<8>(steps, words.as_ptr().add(first).cast()) }
            };
            _mm512_permutexvar_epi8(by_field, v)
        });
        let pair = |a: __m512i, b: __m512i, i: __m512i| _mm512_permutex2var_epi64(a, i, b);
        let l1: [[__m512i; 2]; 4] = core::array::from_fn(|p| {
            [
                pair(q[2 * p], q[2 * p + 1], l1_lo),
                pair(q[2 * p], q[2 * p + 1], l1_hi),
            ]
        });
        // Fields 0-1, 2-3 (from the low halves) and 4-5 (high) of vectors 0-3 and 4-7.
        let l2: [[__m512i; 3]; 2] = core::array::from_fn(|h| {
            let (a, b) = (l1[2 * h], l1[2 * h + 1]);
            [
                pair(a[0], b[0], l2_a),
                pair(a[0], b[0], l2_b),
                pair(a[1], b[1], l2_a),
            ]
        });
        let fields = [
            pair(l2[0][0], l2[1][0], l3_a),
            pair(l2[0][0], l2[1][0], l3_b),
            pair(l2[0][1], l2[1][1], l3_a),
            pair(l2[0][1], l2[1][1], l3_b),
            pair(l2[0][2], l2[1][2], l3_a),
            pair(l2[0][2], l2[1][2], l3_b),
        ];
        for (piece, v) in pieces.iter_mut().zip(fields) {
            if let Some(piece) = piece.next() {
                // SAFETY: 64 writable bytes, uniquely borrowed; `storeu` needs no alignment.
                unsafe { _mm512_storeu_si512(piece.as_mut_ptr().cast(), v) };
            }
        }
    }
}

/// For every source `s` and bit `b`: `out[s][b]` = the XOR of the words `c[k]` whose byte
/// `src[s][k]` has bit `b` set (on the common prefix). See [`bit_sums_impl`].
pub(crate) fn bit_sums<const N: usize>(_t: GfniVbmi, c: &[u64], src: [&[u8]; N]) -> [[u64; 8]; N] {
    // SAFETY: the token proves GFNI, AVX-512F/BW and AVX-512 VBMI.
    unsafe { bit_sums_impl(c, src) }
}

/// `vpermb` index of the 8×8 byte transpose within a 64-byte vector: byte `8 q + t` of the
/// result is byte `8 t + q` of the source (an involution).
const BYTE_TRANSPOSE: [u8; 64] = {
    let mut idx = [0u8; 64];
    let mut i = 0;
    while i < 64 {
        idx[i] = ((i % 8) * 8 + i / 8) as u8;
        i += 1;
    }
    idx
};

/// 64 terms at a time, as products of 8×8 bit matrices with `vgf2p8affineqb`
/// (`out.byte[j].bit[i] = parity(A.byte[7 - i] & x.byte[j])` per 64-bit lane, the matrix `A`
/// the same in every lane here):
///
/// * the bytes of a source's 64 terms become bit planes, eight terms per lane (matrix = the
///   bytes, `x.byte[j] = 1 << j`): lane `g` of `P` has `P.byte[b].bit[i]` = bit `b` of term
///   `8 g + 7 - i`;
/// * the coefficients of the same eight terms (group `g`) are byte-transposed
///   ([`BYTE_TRANSPOSE`]: lane `q` holds byte `q` of each) and bit-transposed (matrix = that
///   lane, `x.byte[j] = 1 << j`), so that `X_g` has in lane `q`, byte `j`, bit `i'` bit `8 q +
///   j` of coefficient `8 g + 7 - i'`;
/// * `vgf2p8affineqb(x = X_g, A = lane g of P broadcast)` then has in lane `q`, byte `j`, bit
///   `i` the parity of `bit(7 - i, term t) · bit(8 q + j, c_t)` over the group: bit `8 q + j`
///   of the group's part of `S_{7 - i}`.
///
/// Each source keeps its accumulator in a register over the eight groups (the eight `X_g`
/// are formed once per 64 terms for all sources). At the end `S_b` is bit `7 - b` of the
/// accumulator's 64 bytes (`vptestmb`). A tail of fewer than 64 terms is zero-padded (zero
/// coefficients add nothing).
#[target_feature(enable = "gfni,avx512f,avx512bw,avx512vbmi")]
fn bit_sums_impl<const N: usize>(c: &[u64], src: [&[u8]; N]) -> [[u64; 8]; N] {
    let n = src.iter().fold(c.len(), |n, s| n.min(s.len()));
    let idx = load64(&BYTE_TRANSPOSE);
    let to_planes = _mm512_set1_epi64(0x8040_2010_0804_0201_u64 as i64);
    let mut acc = [_mm512_setzero_si512(); N];
    let step = |acc: &mut [__m512i; N], cw: &[u64; 64], bytes: [&[u8; 64]; N]| {
        // Every source's planes first, so that their loads are in flight together.
        let mut planes = [[0u64; 8]; N];
        for (p, b) in planes.iter_mut().zip(bytes) {
            let v = _mm512_gf2p8affine_epi64_epi8::<0>(to_planes, load64(b));
            // SAFETY: `p` is 64 writable bytes; `storeu` needs no alignment.
            unsafe { _mm512_storeu_si512(p.as_mut_ptr().cast(), v) };
        }
        let (groups, _) = cw.as_chunks::<8>();
        let x: [__m512i; 8] = core::array::from_fn(|g| {
            // SAFETY: `groups[g]` is 64 readable bytes; `loadu` has no alignment requirement.
            let cv = unsafe { _mm512_loadu_si512(groups[g].as_ptr().cast()) };
            _mm512_gf2p8affine_epi64_epi8::<0>(to_planes, _mm512_permutexvar_epi8(idx, cv))
        });
        for (a, planes) in acc.iter_mut().zip(&planes) {
            let mut v = *a;
            for (g, xg) in x.iter().enumerate().step_by(2) {
                let m0 = _mm512_set1_epi64(planes[g] as i64);
                let m1 = _mm512_set1_epi64(planes[g + 1] as i64);
                let t0 = _mm512_gf2p8affine_epi64_epi8::<0>(*xg, m0);
                let t1 = _mm512_gf2p8affine_epi64_epi8::<0>(x[g + 1], m1);
                v = _mm512_ternarylogic_epi64::<0x96>(v, t0, t1);
            }
            *a = v;
        }
    };
    let (cc, ct) = c[..n].as_chunks::<64>();
    let chunks = src.map(|s| s[..n].as_chunks::<64>().0);
    for (i, cw) in cc.iter().enumerate() {
        step(&mut acc, cw, chunks.map(|ch| &ch[i]));
    }
    if !ct.is_empty() {
        let whole = n - ct.len();
        let mut cw = [0u64; 64];
        cw[..ct.len()].copy_from_slice(ct);
        let mut bufs = [[0u8; 64]; N];
        for (b, s) in bufs.iter_mut().zip(src) {
            b[..ct.len()].copy_from_slice(&s[whole..n]);
        }
        step(&mut acc, &cw, bufs.each_ref());
    }
    acc.map(|v| {
        core::array::from_fn(|b| _mm512_test_epi8_mask(v, _mm512_set1_epi8((1u8 << (7 - b)) as i8)))
    })
}
