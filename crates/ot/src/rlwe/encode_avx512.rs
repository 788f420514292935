//! AVX-512 VBMI code of the 14-bit coefficient encoding (`encode.rs`) and of
//! the rejection step of hashing to a polynomial (`hash.rs`), bit-identical to
//! their portable twins (tested there, on every backend this CPU runs).
//!
//! Four 14-bit values fill seven bytes; eight such groups (56 bytes) are 32
//! values, one register of 16-bit lanes:
//!
//! * unpacking: `vpermb` moves group `g` into 64-bit lane `g` (bytes `7 g ..
//!   7 g + 7`), `vpmultishiftqb` takes from each 64-bit lane the 16 bits at
//!   offsets 0, 14, 28 and 42 into its four 16-bit lanes, and a mask keeps
//!   14 of them. The hash's rejection step then keeps the lanes below `q`,
//!   in order, with `vpcompressw` (VBMI2) and one store;
//! * packing: `vpmaddwd` joins lane pairs into 28-bit values `x0 + 2^14 x1`,
//!   a shift and a bit select join the two halves of each 64-bit lane into
//!   56 bits, and `vpermb` drops the eighth byte of each lane.
//!
//! The functions are reached only through a [`Vbmi`] token, which exists
//! only after run-time detection found AVX-512F/BW (an [`Avx512`] token)
//! and AVX-512 VBMI and VBMI2: the AVX-512 backend uses them where the CPU
//! has them, else its portable or AVX2 code. The unsafe code is the entry
//! into the `#[target_feature]` functions, and loads and stores on arrays
//! whose size the masks and types match.
#![allow(unsafe_code)]

use super::encode::POLY_BYTES;
use super::hash::{ACCEPT_CAPACITY, FIRST};
use super::ntt_avx512::{load32, store32, Avx512};
use super::ring::{N, Q};
use super::sample_avx512::load64;
use core::arch::x86_64::{
    __m512i, _mm512_and_si512, _mm512_cmplt_epu16_mask, _mm512_madd_epi16, _mm512_mask_storeu_epi8,
    _mm512_maskz_compress_epi16, _mm512_maskz_loadu_epi8, _mm512_multishift_epi64_epi8,
    _mm512_permutexvar_epi8, _mm512_set1_epi16, _mm512_set1_epi32, _mm512_set1_epi64,
    _mm512_srli_epi64, _mm512_ternarylogic_epi64,
};

/// Bytes of 32 packed values.
const GROUP: usize = 56;
/// Values per register.
const LANES: usize = 32;
/// The 56 low bytes of a register.
const LOW56: u64 = (1 << GROUP) - 1;

/// `vpermb` indices of unpacking: byte `k < 7` of 64-bit lane `g` is packed
/// byte `7 g + k` (byte 7 repeats byte 6; the mask drops it).
const SPREAD: [u8; 64] = {
    let mut t = [0u8; 64];
    let mut i = 0;
    while i < 64 {
        let k = if i % 8 < 7 { i % 8 } else { 6 };
        t[i] = (7 * (i / 8) + k) as u8;
        i += 1;
    }
    t
};

/// `vpmultishiftqb` offsets of unpacking: the low and the high byte of
/// 16-bit lane `j` of a 64-bit lane start at bits `14 j` and `14 j + 8`.
const SHIFTS: [u8; 64] = {
    let mut t = [0u8; 64];
    let mut i = 0;
    while i < 64 {
        let b = i % 8;
        t[i] = (14 * (b / 2) + 8 * (b % 2)) as u8;
        i += 1;
    }
    t
};

/// `vpermb` indices of packing: packed byte `7 g + k` is byte `k` of 64-bit
/// lane `g` (the last 8 bytes are not stored).
const COMPACT: [u8; 64] = {
    let mut t = [0u8; 64];
    let mut i = 0;
    while i < GROUP {
        t[i] = (8 * (i / 7) + i % 7) as u8;
        i += 1;
    }
    t
};

/// Proof that the running CPU supports AVX-512F, AVX-512BW, AVX-512 VBMI
/// and VBMI2.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Vbmi(());

impl Avx512 {
    /// The VBMI token, if the CPU also has AVX-512 VBMI and VBMI2.
    pub(crate) fn vbmi(self) -> Option<Vbmi> {
        if std::arch::is_x86_feature_detected!("avx512vbmi")
            && std::arch::is_x86_feature_detected!("avx512vbmi2")
        {
            Some(Vbmi(()))
        } else {
            None
        }
    }
}

impl Vbmi {
    /// Same output as `encode::unpack_portable`: the 14-bit values of
    /// `bytes`, unreduced.
    pub(crate) fn unpack(self, bytes: &[u8; POLY_BYTES], out: &mut [i16; N]) {
        // SAFETY: the token exists only if run-time detection found the
        // features the function is compiled for.
        unsafe { unpack_vbmi(bytes, out) }
    }

    /// Same output as `encode::pack_portable` (values in `[0, 2^14)`).
    pub(crate) fn pack(self, values: &[i16; N], out: &mut [u8; POLY_BYTES]) {
        // SAFETY: as above.
        unsafe { pack_vbmi(values, out) }
    }

    /// Same effect as `hash::accept_portable` on the chunks of
    /// `bytes[..FIRST]`: the 14-bit values below `q`, in order, into
    /// `out[*filled..]` until at least `N` are in.
    pub(crate) fn accept_below_q(
        self,
        bytes: &[u8; FIRST],
        out: &mut [i16; ACCEPT_CAPACITY],
        filled: &mut usize,
    ) {
        // SAFETY: as above.
        unsafe { accept_vbmi(bytes, out, filled) }
    }
}

/// The 32 values packed in `group`, one per 16-bit lane.
#[target_feature(enable = "avx512f,avx512bw,avx512vbmi")]
#[inline]
fn unpack32(group: &[u8; GROUP], spread: __m512i, shifts: __m512i) -> __m512i {
    // SAFETY: the mask enables the 56 bytes of `group` only; masked-off
    // bytes are not read (and cannot fault).
    let raw = unsafe { _mm512_maskz_loadu_epi8(LOW56, group.as_ptr().cast()) };
    let words = _mm512_multishift_epi64_epi8(shifts, _mm512_permutexvar_epi8(spread, raw));
    _mm512_and_si512(words, _mm512_set1_epi16(0x3fff))
}

#[target_feature(enable = "avx512f,avx512bw,avx512vbmi")]
fn unpack_vbmi(bytes: &[u8; POLY_BYTES], out: &mut [i16; N]) {
    let (spread, shifts) = (load64(&SPREAD), load64(&SHIFTS));
    let (groups, _) = bytes.as_chunks::<GROUP>();
    let (lanes, _) = out.as_chunks_mut::<LANES>();
    for (o, g) in lanes.iter_mut().zip(groups) {
        store32(o, unpack32(g, spread, shifts));
    }
}

#[target_feature(enable = "avx512f,avx512bw,avx512vbmi")]
fn pack_vbmi(values: &[i16; N], out: &mut [u8; POLY_BYTES]) {
    let compact = load64(&COMPACT);
    // Lane pairs (x0, x1) -> x0 + 2^14 x1.
    let weights = _mm512_set1_epi32(1 | (1 << 30));
    let low28 = _mm512_set1_epi64((1 << 28) - 1);
    let (groups, _) = out.as_chunks_mut::<GROUP>();
    let (lanes, _) = values.as_chunks::<LANES>();
    for (o, v) in groups.iter_mut().zip(lanes) {
        let v = load32(v);
        // 64-bit lanes y0 + 2^32 y1 with 28-bit y0, y1.
        let d = _mm512_madd_epi16(v, weights);
        // Bits 0-27 from d (y0), the others from d >> 4 (y1 at bit 28):
        // the bit select `c ? a : b` is the truth table 0xe4.
        let w = _mm512_ternarylogic_epi64::<0xe4>(d, _mm512_srli_epi64::<4>(d), low28);
        let packed = _mm512_permutexvar_epi8(compact, w);
        // SAFETY: the mask enables the 56 bytes of `o` only; masked-off
        // bytes are not written.
        unsafe { _mm512_mask_storeu_epi8(o.as_mut_ptr().cast(), LOW56, packed) };
    }
}

#[target_feature(enable = "avx512f,avx512bw,avx512vbmi,avx512vbmi2")]
fn accept_vbmi(bytes: &[u8; FIRST], out: &mut [i16; ACCEPT_CAPACITY], filled: &mut usize) {
    let (spread, shifts) = (load64(&SPREAD), load64(&SHIFTS));
    let q = _mm512_set1_epi16(Q);
    let (groups, _) = bytes.as_chunks::<GROUP>();
    for g in groups {
        if *filled >= N {
            break;
        }
        let v = unpack32(g, spread, shifts);
        let keep = _mm512_cmplt_epu16_mask(v, q);
        // In bounds: `*filled < N` here, and `out` has `N + 32` lanes.
        let Some(dst) = out
            .get_mut(*filled..)
            .and_then(|o| o.first_chunk_mut::<LANES>())
        else {
            break;
        };
        store32(dst, _mm512_maskz_compress_epi16(keep, v));
        *filled += keep.count_ones() as usize;
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
    use super::*;

    /// The index tables against their definitions.
    #[test]
    fn tables() {
        for g in 0..8 {
            for k in 0..7 {
                assert_eq!(SPREAD[8 * g + k] as usize, 7 * g + k);
                assert_eq!(COMPACT[7 * g + k] as usize, 8 * g + k);
            }
            assert_eq!(SHIFTS[8 * g..8 * g + 8], [0, 8, 14, 22, 28, 36, 42, 50]);
        }
    }
}
