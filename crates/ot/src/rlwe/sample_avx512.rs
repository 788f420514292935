//! AVX-512 backend of the Gaussian CDT sampler, written with intrinsics. It
//! produces exactly the coefficients of [`super::sample::gaussian_portable`]
//! from the same random bytes (tested in `sample.rs` on every backend), in
//! time independent of the values drawn: every lane goes through the same
//! instructions, and the only data-dependent "lookups" are `vpermd` on
//! registers, whose timing does not depend on the index.
//!
//! Sixteen 63-bit magnitudes at a time, as 32-bit lanes of their high and
//! low halves (the block layout keeps them apart), against the AVX2
//! sampler's lanes of the table (`sample_avx2::CdtLanes`: low halves with
//! their top bit flipped, so that signed compares order them), compared
//! into mask registers:
//!
//! * the entries whose high half is not 0 (the "head", decreasing, at most
//!   15, padded with -1 to one register of 16) are counted where the
//!   magnitude's high half is below theirs, by a branch-free binary search
//!   of four probes: `n` such entries, a prefix of the head;
//! * only head entry `n` can have the magnitude's high half (the head's
//!   high halves are distinct); the magnitude counts once more if the high
//!   halves are equal and its low half is below (a pad is never equal);
//! * the entries whose high half is 0 (the "tail") count where the
//!   magnitude's high half is 0 and its low half is below theirs.
//!
//! That is about 40 vector instructions per 16 samples, where the AVX2 code
//! compares every magnitude with every head entry. The unsafe code is the
//! entry into the `#[target_feature]` function, sound only on CPUs with
//! AVX-512F and AVX2 (an [`Avx512`] token exists only after run-time
//! detection), and unaligned loads and stores on arrays of exactly the
//! vector's size.
#![allow(unsafe_code)]

use super::ntt_avx512::Avx512;
use super::sample::{cdt, gaussian_portable, BLOCK_BYTES, FLIP, GAUSSIAN_BLOCK};
use super::sample_avx2::{lanes, store, CdtLanes, HEAD_MAX};
use core::arch::x86_64::{
    __m512i, _mm256_mullo_epi16, _mm256_set1_epi16, _mm512_add_epi32, _mm512_and_si512,
    _mm512_cmpeq_epi32_mask, _mm512_cmpgt_epi32_mask, _mm512_cmplt_epi32_mask,
    _mm512_cvtepi32_epi16, _mm512_loadu_si512, _mm512_mask_add_epi32, _mm512_mask_sub_epi32,
    _mm512_permutexvar_epi32, _mm512_set1_epi32, _mm512_setzero_si512, _mm512_xor_si512,
};

/// Lanes of a register: the binary search covers a head of at most 15
/// entries and one `-1` pad.
const LANES: usize = 16;

impl Avx512 {
    /// Same output as [`super::sample::gaussian_portable`] with the
    /// sampler's table ([`cdt`]).
    pub(crate) fn gaussian(
        self,
        rand: &[u8; BLOCK_BYTES],
        scale: i16,
        out: &mut [i16; GAUSSIAN_BLOCK],
    ) {
        // The AVX2 sampler's lanes, with a pad after the head (tested).
        let Some(c) = lanes().filter(|c| c.heads < LANES) else {
            return gaussian_portable(rand, cdt(), scale, out);
        };
        // SAFETY: `self` exists only if run-time detection found AVX-512F,
        // AVX-512BW and AVX2, the features the function is compiled for.
        unsafe { gaussian_avx512(c, rand, scale, out) }
    }
}

/// Loads 16 lanes of 32 bits from 64 bytes.
#[target_feature(enable = "avx512f")]
#[inline]
fn load64(b: &[u8; 64]) -> __m512i {
    // SAFETY: `b` is 64 readable bytes and `loadu` has no alignment
    // requirement.
    unsafe { _mm512_loadu_si512(b.as_ptr().cast()) }
}

/// Loads 16 lanes of 32 bits.
#[target_feature(enable = "avx512f")]
#[inline]
fn load16(x: &[i32; HEAD_MAX]) -> __m512i {
    // SAFETY: `x` is 64 readable bytes and `loadu` has no alignment
    // requirement.
    unsafe { _mm512_loadu_si512(x.as_ptr().cast()) }
}

#[target_feature(enable = "avx512f,avx512bw,avx2")]
fn gaussian_avx512(
    c: &CdtLanes,
    rand: &[u8; BLOCK_BYTES],
    scale: i16,
    out: &mut [i16; GAUSSIAN_BLOCK],
) {
    let (high, low) = (load16(&c.head_high), load16(&c.head_low));
    let tails = c.tail_low.get(..c.tails).unwrap_or_default();
    let low31 = _mm512_set1_epi32(i32::MAX);
    let flip = _mm512_set1_epi32(FLIP as i32);
    let one = _mm512_set1_epi32(1);
    let zero = _mm512_setzero_si512();
    let probes = [8, 4, 2, 1].map(|s| (_mm512_set1_epi32(s - 1), _mm512_set1_epi32(s)));
    let scale = _mm256_set1_epi16(scale);
    let (lo, hi) = rand.split_at(BLOCK_BYTES / 2);
    let (lo, _) = lo.as_chunks::<64>();
    let (hi, _) = hi.as_chunks::<64>();
    let (out, _) = out.as_chunks_mut::<16>();
    for ((o, lo), hi) in out.iter_mut().zip(lo).zip(hi) {
        let hw = load64(hi);
        let h = _mm512_and_si512(hw, low31);
        let l = _mm512_xor_si512(load64(lo), flip);
        // Head entries above the magnitude's high half: the predicate holds
        // on a prefix of the head (decreasing, the -1 pads never above), so
        // the binary search finds its length `n` (at most 15).
        let mut n = zero;
        for &(offset, step) in &probes {
            let t = _mm512_permutexvar_epi32(_mm512_add_epi32(n, offset), high);
            n = _mm512_mask_add_epi32(n, _mm512_cmpgt_epi32_mask(t, h), n, step);
        }
        // Head entry `n`: the magnitude is below it iff the high halves are
        // equal and its low half is below (a pad's high half is never equal).
        let equal = _mm512_cmpeq_epi32_mask(_mm512_permutexvar_epi32(n, high), h);
        let below = _mm512_cmplt_epi32_mask(l, _mm512_permutexvar_epi32(n, low));
        n = _mm512_mask_add_epi32(n, equal & below, n, one);
        // Tail entries count where the magnitude's high half is 0.
        let mut z = zero;
        for &t in tails {
            let t = _mm512_set1_epi32(t);
            z = _mm512_mask_add_epi32(z, _mm512_cmplt_epi32_mask(l, t), z, one);
        }
        n = _mm512_mask_add_epi32(n, _mm512_cmpeq_epi32_mask(h, zero), n, z);
        // The sign bit of the high word negates.
        n = _mm512_mask_sub_epi32(n, _mm512_cmplt_epi32_mask(hw, zero), zero, n);
        // Values in -18..=18: truncation to 16 bits keeps them.
        store(o, _mm256_mullo_epi16(_mm512_cvtepi32_epi16(n), scale));
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
    use super::*;

    /// The AVX-512 sampler runs its own code for the table, not the portable
    /// fallback (its agreement with the portable sampler is tested in
    /// `sample.rs`, for every backend): the lanes leave the search a pad.
    #[test]
    fn table_leaves_a_pad() {
        let c = lanes().unwrap();
        assert!(c.heads >= 8 && c.heads < LANES, "{}", c.heads);
        assert!(c.head_high[c.heads..].iter().all(|&x| x == -1));
    }
}
