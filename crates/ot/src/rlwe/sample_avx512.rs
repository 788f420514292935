//! AVX-512 backend of the Gaussian CDT sampler, written with intrinsics. It
//! produces exactly the coefficients of [`super::sample::gaussian_portable`]
//! from the same random bytes (tested in `sample.rs` on every backend), in
//! time independent of the values drawn: every lane goes through the same
//! instructions, and the only data-dependent "lookups" are `vpermd` on
//! registers, whose timing does not depend on the index.
//!
//! Sixteen 63-bit magnitudes at a time, as 32-bit lanes of their high and
//! low halves (the block layout keeps them apart), compared as unsigned
//! numbers (AVX-512 has unsigned compares into mask registers):
//!
//! * the entries whose high half is not 0 (the "head", decreasing, at most
//!   15, padded with zeros to one register of 16) are counted where the
//!   magnitude's high half is below theirs, by a branch-free binary search
//!   of four probes: `n` such entries, a prefix of the head;
//! * only head entry `n` can have the magnitude's high half (the head's
//!   high halves are distinct); the magnitude counts once more if the high
//!   halves are equal and its low half is below (a zero pad never counts);
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
use super::sample::{cdt, gaussian_portable, BLOCK_BYTES, CDT_LEN, GAUSSIAN_BLOCK};
use super::sample_avx2::store;
use core::arch::x86_64::{
    __m512i, _mm256_mullo_epi16, _mm256_set1_epi16, _mm512_add_epi32, _mm512_and_si512,
    _mm512_cmpeq_epi32_mask, _mm512_cmpgt_epu32_mask, _mm512_cmplt_epi32_mask,
    _mm512_cmplt_epu32_mask, _mm512_cvtepi32_epi16, _mm512_loadu_si512, _mm512_mask_add_epi32,
    _mm512_mask_sub_epi32, _mm512_permutexvar_epi32, _mm512_set1_epi32, _mm512_setzero_si512,
};
use std::sync::OnceLock;

/// Lanes of a register, and the length of the padded head.
const LANES: usize = 16;

/// Most tail entries (high half 0, low half not).
const TAIL_MAX: usize = 8;

/// The table's entries by class, as unsigned 32-bit halves.
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct CdtHalves {
    /// High halves of the entries whose high half is not 0, in table order
    /// (decreasing), then zeros.
    pub(crate) head_high: [u32; LANES],
    /// Their low halves, then zeros.
    pub(crate) head_low: [u32; LANES],
    pub(crate) heads: usize,
    /// Low halves of the entries whose high half is 0 and low half is not.
    pub(crate) tail_low: [u32; TAIL_MAX],
    pub(crate) tails: usize,
}

/// `None` if the head has 16 entries or more (the search needs a zero pad),
/// if its high halves do not strictly decrease, or if the tail has more than
/// [`TAIL_MAX`] entries: not the case for sigma = 2 (tested).
pub(crate) fn cdt_halves(table: &[u64; CDT_LEN]) -> Option<CdtHalves> {
    let mut c = CdtHalves {
        head_high: [0; LANES],
        head_low: [0; LANES],
        heads: 0,
        tail_low: [0; TAIL_MAX],
        tails: 0,
    };
    for &t in table.iter().filter(|&&t| t != 0) {
        let (th, tl) = ((t >> 32) as u32, t as u32);
        if th != 0 {
            if c.heads + 1 >= LANES
                || c.tails > 0
                || (c.heads > 0 && c.head_high.get(c.heads - 1) <= Some(&th))
            {
                return None;
            }
            *c.head_high.get_mut(c.heads)? = th;
            *c.head_low.get_mut(c.heads)? = tl;
            c.heads += 1;
        } else {
            *c.tail_low.get_mut(c.tails)? = tl;
            c.tails += 1;
        }
    }
    Some(c)
}

impl Avx512 {
    /// Same output as [`super::sample::gaussian_portable`] with the
    /// sampler's table ([`cdt`]).
    pub(crate) fn gaussian(
        self,
        rand: &[u8; BLOCK_BYTES],
        scale: i16,
        out: &mut [i16; GAUSSIAN_BLOCK],
    ) {
        static HALVES: OnceLock<Option<CdtHalves>> = OnceLock::new();
        // The halves fit (tested); the portable code would still be exact.
        let Some(c) = HALVES.get_or_init(|| cdt_halves(cdt())).as_ref() else {
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
fn load16(x: &[u32; LANES]) -> __m512i {
    // SAFETY: `x` is 64 readable bytes and `loadu` has no alignment
    // requirement.
    unsafe { _mm512_loadu_si512(x.as_ptr().cast()) }
}

#[target_feature(enable = "avx512f,avx512bw,avx2")]
fn gaussian_avx512(
    c: &CdtHalves,
    rand: &[u8; BLOCK_BYTES],
    scale: i16,
    out: &mut [i16; GAUSSIAN_BLOCK],
) {
    let (high, low) = (load16(&c.head_high), load16(&c.head_low));
    let tails = c.tail_low.get(..c.tails).unwrap_or_default();
    let low31 = _mm512_set1_epi32(i32::MAX);
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
        let l = load64(lo);
        // Head entries above the magnitude's high half: the predicate holds
        // on a prefix of the head (decreasing, zero pads never above), so
        // the binary search finds its length `n` (at most 15).
        let mut n = zero;
        for &(offset, step) in &probes {
            let t = _mm512_permutexvar_epi32(_mm512_add_epi32(n, offset), high);
            n = _mm512_mask_add_epi32(n, _mm512_cmpgt_epu32_mask(t, h), n, step);
        }
        // Head entry `n`: the magnitude is below it iff the high halves are
        // equal and its low half is below (a zero pad: low half 0, never).
        let equal = _mm512_cmpeq_epi32_mask(_mm512_permutexvar_epi32(n, high), h);
        let below = _mm512_cmplt_epu32_mask(l, _mm512_permutexvar_epi32(n, low));
        n = _mm512_mask_add_epi32(n, equal & below, n, one);
        // Tail entries count where the magnitude's high half is 0.
        let mut z = zero;
        for &t in tails {
            let t = _mm512_set1_epi32(t as i32);
            z = _mm512_mask_add_epi32(z, _mm512_cmplt_epu32_mask(l, t), z, one);
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
    /// `sample.rs`, for every backend), and the halves are the table's.
    #[test]
    fn table_fits_the_halves() {
        let c = cdt_halves(cdt()).unwrap();
        assert!(c.heads >= 8 && c.tails >= 1, "{} {}", c.heads, c.tails);
        let live: Vec<u64> = cdt().iter().copied().filter(|&t| t != 0).collect();
        assert_eq!(c.heads + c.tails, live.len());
        for (k, &t) in live.iter().enumerate() {
            if k < c.heads {
                assert_eq!(
                    u64::from(c.head_high[k]) << 32 | u64::from(c.head_low[k]),
                    t
                );
            } else {
                assert_eq!(u64::from(c.tail_low[k - c.heads]), t);
            }
        }
        assert!(c.head_high[c.heads..].iter().all(|&x| x == 0));
        assert!(c.head_low[c.heads..].iter().all(|&x| x == 0));
    }

    /// Tables the lanes cannot hold are refused (the sampler then runs the
    /// portable code): a full head, repeated high halves, a head entry after
    /// a tail entry.
    #[test]
    fn unfit_tables_are_refused() {
        let mut t = [0u64; CDT_LEN];
        for (k, x) in t.iter_mut().enumerate().take(LANES) {
            *x = (100 - k as u64) << 32;
        }
        assert!(cdt_halves(&t).is_none(), "16 head entries");
        let mut t = [0u64; CDT_LEN];
        t[0] = 5 << 32 | 9;
        t[1] = 5 << 32 | 3;
        assert!(cdt_halves(&t).is_none(), "equal high halves");
        let mut t = [0u64; CDT_LEN];
        t[0] = 7;
        t[1] = 5 << 32;
        assert!(cdt_halves(&t).is_none(), "head after tail");
        let mut t = [0u64; CDT_LEN];
        for (k, x) in t.iter_mut().enumerate().take(LANES - 1) {
            *x = (100 - k as u64) << 32;
        }
        assert!(cdt_halves(&t).is_some(), "15 head entries fit");
    }
}
