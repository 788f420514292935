//! AVX2 backend of the NTT: the portable loop bodies compiled with AVX2
//! enabled, so LLVM emits 16-lane `vpmulhw`/`vpmullw` code. The only unsafe
//! code of the crate is the call into these functions, which is sound only
//! on CPUs with AVX2; an [`Avx2`] token exists only after run-time detection.
#![allow(unsafe_code)]

use super::ntt::{forward_body, inverse_body};
use super::ring::N;

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
}

#[target_feature(enable = "avx2")]
fn forward_avx2(r: &mut [i16; N]) {
    forward_body(r);
}

#[target_feature(enable = "avx2")]
fn inverse_avx2(r: &mut [i16; N]) {
    inverse_body(r);
}
