//! AVX-512 versions of the lane loops around the ring:
//!
//! * the coefficient-wise passes of `ring.rs` and the reconciliation loops
//!   of `reconcile.rs`: the same generic bodies as in `lanes_avx2.rs`,
//!   through the same macro, compiled inside
//!   `#[target_feature(enable = "avx512f,avx512bw,avx2")]` wrappers so
//!   that LLVM vectorizes them 32 lanes wide, with the same operations as
//!   the portable path;
//! * the sign-bit packing of reconciliation ([`SignBits`]): a block of 32
//!   lanes is one register, so packing its sign bits is one `vpmovw2m`
//!   and expanding 32 hint bits to lane masks one `vpmovm2w`.
//!
//! The Gaussian sampler (`sample_avx512`), the 14-bit packing and the
//! rejection step of hashing to a polynomial (`encode_avx512`, with VBMI)
//! have AVX-512 versions of their own; the binomial sampler has none: the
//! AVX-512 backend runs its AVX2 code, with the AVX2 token that
//! [`Avx512::avx2`] hands out. The tests in the modules
//! that dispatch (ring, reconciliation) compare every backend with the
//! portable code. Everything here is reached only through the [`Avx512`]
//! token, which exists only after run-time detection found AVX-512F,
//! AVX-512BW and AVX2.
#![allow(unsafe_code)]

use super::encode::HINT_BYTES;
use super::lanes_avx2::lane_wrappers;
use super::ntt_avx512::Avx512;
use super::reconcile::{extract_body, signal_body, SignBits, BLOCK};
use super::ring::{
    add_canonical_body, add_reduce_body, caddq_body, mul_mont_add_body, mul_mont_body,
    sub_masked_body, to_mont_body, N,
};
use core::arch::x86_64::{
    __m512i, _mm512_loadu_si512, _mm512_movepi16_mask, _mm512_movm_epi16, _mm512_storeu_si512,
};

lane_wrappers!(Avx512, "avx512f,avx512bw,avx2");

impl SignBits for Avx512 {
    #[inline(always)]
    fn pack(self, lanes: &[i16; BLOCK]) -> [u8; BLOCK / 8] {
        // SAFETY: the token exists only if the CPU has AVX-512F/BW.
        unsafe { pack_avx512(lanes) }
    }

    #[inline(always)]
    fn masks(self, bits: &[u8; BLOCK / 8], out: &mut [i16; BLOCK]) {
        // SAFETY: the token exists only if the CPU has AVX-512F/BW.
        unsafe { masks_avx512(bits, out) }
    }
}

/// Bit `i` of the result is the sign bit of `lanes[i]`.
#[target_feature(enable = "avx512f,avx512bw")]
#[inline]
fn pack_avx512(lanes: &[i16; BLOCK]) -> [u8; BLOCK / 8] {
    // SAFETY: `lanes` is 32 lanes (64 bytes), one unaligned 512-bit load.
    let v = unsafe { _mm512_loadu_si512(lanes.as_ptr().cast::<__m512i>()) };
    _mm512_movepi16_mask(v).to_le_bytes()
}

/// Lane `i` is `-1` if bit `i` of `bits` is set, else `0`.
#[target_feature(enable = "avx512f,avx512bw")]
#[inline]
fn masks_avx512(bits: &[u8; BLOCK / 8], out: &mut [i16; BLOCK]) {
    let m = _mm512_movm_epi16(u32::from_le_bytes(*bits));
    // SAFETY: `out` is 32 lanes (64 bytes), one unaligned 512-bit store.
    unsafe { _mm512_storeu_si512(out.as_mut_ptr().cast::<__m512i>(), m) }
}
