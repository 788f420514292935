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

use super::portable;
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
        store(d, _mm256_gf2p8affine_epi64_epi8::<0>(load(s), m));
    }
    portable::linear_apply(map, st, dt);
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
        store64(d, _mm512_gf2p8affine_epi64_epi8::<0>(load64(s), m));
    }
    linear_apply_impl(map, st, dt);
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
