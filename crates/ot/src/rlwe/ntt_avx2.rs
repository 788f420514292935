//! AVX2 backend: the portable loop bodies of the NTT and of the CDT sampler
//! compiled with AVX2 enabled, so LLVM emits 16-lane `vpmulhw`/`vpmullw`
//! and 4-lane 64-bit compare code. The only unsafe
//! code of the crate is the call into these functions, which is sound only
//! on CPUs with AVX2; an [`Avx2`] token exists only after run-time detection.
#![allow(unsafe_code)]

use super::ntt::{forward_body, inverse_body};
use super::ring::N;
use super::sample::{cdt_magnitudes_body, CDT_LEN};

/// Proof that the running CPU supports AVX2.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Avx2(());

impl Avx2 {
    /// `Some` iff the CPU supports AVX2.
    pub(crate) fn detect() -> Option<Avx2> {
        if std::arch::is_x86_feature_detected!("avx2") {
            Some(Avx2(()))
        } else {
            None
        }
    }

    pub(crate) fn forward(self, r: &mut [i16; N]) {
        // SAFETY: `self` exists only if `is_x86_feature_detected!("avx2")`
        // returned true, so the CPU executes AVX2 instructions.
        unsafe { forward_avx2(r) }
    }

    pub(crate) fn inverse(self, r: &mut [i16; N]) {
        // SAFETY: as above, the token proves AVX2 support.
        unsafe { inverse_avx2(r) }
    }

    pub(crate) fn cdt_magnitudes(
        self,
        words: &[u64; N],
        table: &[u64; CDT_LEN],
        out: &mut [i16; N],
    ) {
        // SAFETY: as above, the token proves AVX2 support.
        unsafe { cdt_avx2(words, table, out) }
    }
}

#[target_feature(enable = "avx2")]
fn forward_avx2(r: &mut [i16; N]) {
    forward_body(r);
}

#[target_feature(enable = "avx2")]
fn inverse_avx2(r: &mut [i16; N]) {
    inverse_body(r);
}

#[target_feature(enable = "avx2")]
fn cdt_avx2(words: &[u64; N], table: &[u64; CDT_LEN], out: &mut [i16; N]) {
    cdt_magnitudes_body(words, table, out);
}

/// Proof that the running CPU supports PCLMULQDQ (carry-less multiply).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Clmul(());

impl Clmul {
    /// `Some` iff the CPU supports PCLMULQDQ and SSE2.
    pub(crate) fn detect() -> Option<Clmul> {
        if std::arch::is_x86_feature_detected!("pclmulqdq")
            && std::arch::is_x86_feature_detected!("sse2")
        {
            Some(Clmul(()))
        } else {
            None
        }
    }

    /// Unreduced GF(2^128) dot product `(lo, hi)`.
    pub(crate) fn dot_wide(self, a: &[u128], b: &[u128]) -> (u128, u128) {
        // SAFETY: `self` exists only if run-time detection found PCLMULQDQ
        // and SSE2, the features `dot_clmul` is compiled for.
        unsafe { dot_clmul(a, b) }
    }
}

#[target_feature(enable = "pclmulqdq,sse2")]
fn dot_clmul(a: &[u128], b: &[u128]) -> (u128, u128) {
    use std::arch::x86_64::{
        __m128i, _mm_clmulepi64_si128, _mm_cvtsi128_si64, _mm_set_epi64x, _mm_unpackhi_epi64,
        _mm_xor_si128,
    };
    let split = |x: u128| _mm_set_epi64x((x >> 64) as i64, x as i64);
    let lanes = |x: __m128i| -> u128 {
        let low = _mm_cvtsi128_si64(x) as u64;
        let high = _mm_cvtsi128_si64(_mm_unpackhi_epi64(x, x)) as u64;
        u128::from(low) | (u128::from(high) << 64)
    };
    let mut lo = _mm_set_epi64x(0, 0);
    let mut mid = _mm_set_epi64x(0, 0);
    let mut hi = _mm_set_epi64x(0, 0);
    for (&x, &y) in a.iter().zip(b) {
        let (x, y) = (split(x), split(y));
        lo = _mm_xor_si128(lo, _mm_clmulepi64_si128(x, y, 0x00));
        hi = _mm_xor_si128(hi, _mm_clmulepi64_si128(x, y, 0x11));
        mid = _mm_xor_si128(mid, _mm_clmulepi64_si128(x, y, 0x01));
        mid = _mm_xor_si128(mid, _mm_clmulepi64_si128(x, y, 0x10));
    }
    let (lo, mid, hi) = (lanes(lo), lanes(mid), lanes(hi));
    (lo ^ (mid << 64), hi ^ (mid >> 64))
}
