//! AVX2 backend of the noise samplers, written with intrinsics. Both produce
//! exactly the coefficients of the portable samplers in [`super::sample`]
//! from the same random bytes (tested below), and both are constant time:
//! every lane goes through the same instructions, and the only
//! data-dependent "lookup" is `vpshufb` on a register, whose timing does not
//! depend on the index.
//!
//! * Binomial: popcount of 32 bytes at a time with the nibble table in a
//!   register (`vpshufb`), the difference of the two counts sign-extended to
//!   16 bits.
//! * Gaussian CDT: sixteen 63-bit magnitudes at a time, as 32-bit lanes of
//!   their high and low halves (the block layout keeps them apart). The
//!   entries whose high half is not 0 (the "head", decreasing) are counted
//!   where the magnitude's high half is below theirs: a prefix of length
//!   `n`. Only head entry `n` can then have the same high half as the
//!   magnitude (the head's high halves are distinct, checked when the lanes
//!   are built); its halves are fetched by `vpermd` from two registers at
//!   index `n`, and the magnitude counts once more if the high halves are
//!   equal and its low half is below. Entries whose high half is 0 count
//!   where the magnitude's high half is 0 and its low half below theirs.
//!   Entries equal to 0 are skipped: no magnitude is below them. Which
//!   entries fall in which class is a property of the public table. The
//!   signed 32-bit compares see the low halves with their top bit flipped.
//!
//! The unsafe code is the entry into these functions, sound only on CPUs
//! with AVX2 (an [`Avx2`] token exists only after run-time detection), and
//! unaligned loads and stores on arrays of exactly the vector's size.
#![allow(unsafe_code)]

use super::ntt_avx2::Avx2;
use super::sample::{
    cdt, entry_halves, gaussian_portable, BINOMIAL_BLOCK, BLOCK_BYTES, CDT_LEN, FLIP,
    GAUSSIAN_BLOCK,
};
use std::arch::x86_64::{
    __m256i, _mm256_add_epi32, _mm256_add_epi8, _mm256_and_si256, _mm256_blendv_epi8,
    _mm256_castsi256_si128, _mm256_cmpeq_epi32, _mm256_cmpgt_epi32, _mm256_cvtepi8_epi16,
    _mm256_extracti128_si256, _mm256_loadu_si256, _mm256_mullo_epi16, _mm256_packs_epi32,
    _mm256_permute4x64_epi64, _mm256_permutevar8x32_epi32, _mm256_set1_epi16, _mm256_set1_epi32,
    _mm256_set1_epi8, _mm256_setr_epi8, _mm256_setzero_si256, _mm256_shuffle_epi8,
    _mm256_srai_epi32, _mm256_srli_epi16, _mm256_storeu_si256, _mm256_sub_epi32, _mm256_sub_epi8,
    _mm256_xor_si256,
};
use std::sync::OnceLock;

impl Avx2 {
    /// Same output as [`super::sample::binomial_portable`].
    pub(crate) fn binomial(
        self,
        rand: &[u8; BLOCK_BYTES],
        scale: i16,
        out: &mut [i16; BINOMIAL_BLOCK],
    ) {
        // SAFETY: `self` exists only if `is_x86_feature_detected!("avx2")`
        // returned true, so the CPU executes AVX2 instructions.
        unsafe { binomial_avx2(rand, scale, out) }
    }

    /// Same output as [`super::sample::gaussian_portable`] with the sampler's table
    /// ([`cdt`]), for each block of `rand` and of `out`.
    pub(crate) fn gaussian_blocks(
        self,
        rand: &[[u8; BLOCK_BYTES]],
        scale: i16,
        out: &mut [[i16; GAUSSIAN_BLOCK]],
    ) {
        for (r, o) in rand.iter().zip(out) {
            // SAFETY: as above, the token proves AVX2 support.
            unsafe { gaussian_avx2(r, scale, o) }
        }
    }
}

/// Loads 32 bytes.
#[target_feature(enable = "avx2")]
#[inline]
fn load(b: &[u8; 32]) -> __m256i {
    // SAFETY: `b` is 32 readable bytes and `loadu` has no alignment
    // requirement.
    unsafe { _mm256_loadu_si256(b.as_ptr().cast()) }
}

/// Stores 16 lanes of 16 bits (also used by `sample_avx512`).
#[target_feature(enable = "avx2")]
#[inline]
pub(crate) fn store(o: &mut [i16; 16], v: __m256i) {
    // SAFETY: `o` is 32 writable bytes and `storeu` has no alignment
    // requirement.
    unsafe { _mm256_storeu_si256(o.as_mut_ptr().cast(), v) }
}

#[target_feature(enable = "avx2")]
fn binomial_avx2(rand: &[u8; BLOCK_BYTES], scale: i16, out: &mut [i16; BINOMIAL_BLOCK]) {
    // Popcount of each nibble value, in both 128-bit lanes.
    #[rustfmt::skip]
    let nibble_counts = _mm256_setr_epi8(
        0, 1, 1, 2, 1, 2, 2, 3, 1, 2, 2, 3, 2, 3, 3, 4,
        0, 1, 1, 2, 1, 2, 2, 3, 1, 2, 2, 3, 2, 3, 3, 4,
    );
    let low = _mm256_set1_epi8(0x0f);
    let popcount = |x: __m256i| {
        let lo = _mm256_and_si256(x, low);
        let hi = _mm256_and_si256(_mm256_srli_epi16::<4>(x), low);
        _mm256_add_epi8(
            _mm256_shuffle_epi8(nibble_counts, lo),
            _mm256_shuffle_epi8(nibble_counts, hi),
        )
    };
    let scale = _mm256_set1_epi16(scale);
    let (pos, neg) = rand.split_at(BINOMIAL_BLOCK);
    let (pos, _) = pos.as_chunks::<32>();
    let (neg, _) = neg.as_chunks::<32>();
    let (out, _) = out.as_chunks_mut::<16>();
    for ((o, p), n) in out.chunks_exact_mut(2).zip(pos).zip(neg) {
        // Counts 0..=8, so the byte difference is -8..=8.
        let d = _mm256_sub_epi8(popcount(load(p)), popcount(load(n)));
        let lo = _mm256_cvtepi8_epi16(_mm256_castsi256_si128(d));
        let hi = _mm256_cvtepi8_epi16(_mm256_extracti128_si256::<1>(d));
        store(&mut o[0], _mm256_mullo_epi16(lo, scale));
        store(&mut o[1], _mm256_mullo_epi16(hi, scale));
    }
}

/// Most entries with a non-zero high half that the lane lookup handles.
pub(crate) const HEAD_MAX: usize = 16;

/// The table's entries by class, as 32-bit halves (see the module
/// documentation), computed at first use.
pub(crate) struct CdtLanes {
    /// High halves of the entries whose high half is not 0 (in table order,
    /// so decreasing), then -1, which no high half of a magnitude equals
    /// (nor is below).
    pub(crate) head_high: [i32; HEAD_MAX],
    /// Their flipped low halves.
    pub(crate) head_low: [i32; HEAD_MAX],
    pub(crate) heads: usize,
    /// Flipped low halves of the entries whose high half is 0 and low half
    /// is not.
    pub(crate) tail_low: [i32; CDT_LEN],
    pub(crate) tails: usize,
}

/// The lanes of the sampler's table ([`cdt`]), built once; `None` if they
/// cannot hold it (not the case for sigma = 2; tested), and the samplers
/// then run the portable code, which is exact for any table.
pub(crate) fn lanes() -> Option<&'static CdtLanes> {
    static LANES: OnceLock<Option<CdtLanes>> = OnceLock::new();
    LANES.get_or_init(|| cdt_lanes(cdt())).as_ref()
}

/// `None` if the table has more than [`HEAD_MAX`] entries with a non-zero
/// high half (not the case for sigma = 2; tested), or if their high halves
/// repeat.
fn cdt_lanes(table: &[u64; CDT_LEN]) -> Option<CdtLanes> {
    let mut c = CdtLanes {
        head_high: [-1; HEAD_MAX],
        head_low: [0; HEAD_MAX],
        heads: 0,
        tail_low: [0; CDT_LEN],
        tails: 0,
    };
    for &t in table.iter().filter(|&&t| t != 0) {
        let (th, tl) = entry_halves(t);
        if th != 0 {
            if c.heads > 0 && c.head_high.get(c.heads - 1) <= Some(&th) {
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

/// Loads eight 32-bit lanes.
#[target_feature(enable = "avx2")]
#[inline]
fn load8(x: &[i32; 8]) -> __m256i {
    // SAFETY: `x` is 32 readable bytes and `loadu` has no alignment
    // requirement.
    unsafe { _mm256_loadu_si256(x.as_ptr().cast()) }
}

/// Lane `k` of a 16-lane table (two registers) at index `idx[k]` (0..16),
/// by in-register permutes: no memory access depends on the index.
#[target_feature(enable = "avx2")]
#[inline]
fn lookup16(t: (__m256i, __m256i), idx: __m256i, upper: __m256i) -> __m256i {
    _mm256_blendv_epi8(
        _mm256_permutevar8x32_epi32(t.0, idx),
        _mm256_permutevar8x32_epi32(t.1, idx),
        upper,
    )
}

#[target_feature(enable = "avx2")]
fn gaussian_avx2(rand: &[u8; BLOCK_BYTES], scale: i16, out: &mut [i16; GAUSSIAN_BLOCK]) {
    let Some(c) = lanes() else {
        return gaussian_portable(rand, cdt(), scale, out);
    };
    let split = |x: &[i32; HEAD_MAX]| {
        let (x, _) = x.as_chunks::<8>();
        (load8(&x[0]), load8(&x[1]))
    };
    let (high, low) = (split(&c.head_high), split(&c.head_low));
    let heads = c.head_high.get(..c.heads).unwrap_or_default();
    let tails = c.tail_low.get(..c.tails).unwrap_or_default();
    let flip = _mm256_set1_epi32(FLIP as i32);
    let low31 = _mm256_set1_epi32(!FLIP as i32);
    let seven = _mm256_set1_epi32(7);
    let zero = _mm256_setzero_si256();
    let scale = _mm256_set1_epi16(scale);
    let (lo, hi) = rand.split_at(BLOCK_BYTES / 2);
    let (lo, _) = lo.as_chunks::<64>();
    let (hi, _) = hi.as_chunks::<64>();
    let (out, _) = out.as_chunks_mut::<16>();
    for ((o, lo), hi) in out.iter_mut().zip(lo).zip(hi) {
        let (lo, _) = lo.as_chunks::<32>();
        let (hi, _) = hi.as_chunks::<32>();
        let hw = [load(&hi[0]), load(&hi[1])];
        let h = hw.map(|x| _mm256_and_si256(x, low31));
        let l = [
            _mm256_xor_si256(load(&lo[0]), flip),
            _mm256_xor_si256(load(&lo[1]), flip),
        ];
        // Entries with a non-zero high half above the magnitude's: a prefix
        // of the (decreasing) head, of length `n`.
        let mut n = [zero; 2];
        for &t in heads {
            let t = _mm256_set1_epi32(t);
            n[0] = _mm256_sub_epi32(n[0], _mm256_cmpgt_epi32(t, h[0]));
            n[1] = _mm256_sub_epi32(n[1], _mm256_cmpgt_epi32(t, h[1]));
        }
        // Entries whose high half is 0 and low half above the magnitude's.
        let mut z = [zero; 2];
        for &t in tails {
            let t = _mm256_set1_epi32(t);
            z[0] = _mm256_sub_epi32(z[0], _mm256_cmpgt_epi32(t, l[0]));
            z[1] = _mm256_sub_epi32(z[1], _mm256_cmpgt_epi32(t, l[1]));
        }
        let signed = |k: usize| {
            // Only head entry `n` can have the magnitude's high half; the
            // magnitude is below it iff below its low half.
            let upper = _mm256_cmpgt_epi32(n[k], seven);
            let equal = _mm256_cmpeq_epi32(lookup16(high, n[k], upper), h[k]);
            let below = _mm256_cmpgt_epi32(lookup16(low, n[k], upper), l[k]);
            let m = _mm256_sub_epi32(n[k], _mm256_and_si256(equal, below));
            // The tail counts only where the magnitude's high half is 0.
            let m = _mm256_add_epi32(m, _mm256_and_si256(z[k], _mm256_cmpeq_epi32(h[k], zero)));
            // -1 where the sign bit is set.
            let neg = _mm256_srai_epi32::<31>(hw[k]);
            _mm256_sub_epi32(_mm256_xor_si256(m, neg), neg)
        };
        // Values in -18..=18: pack to 16 bits, then restore the lane order.
        let v = _mm256_permute4x64_epi64::<0b11_01_10_00>(_mm256_packs_epi32(signed(0), signed(1)));
        store(o, _mm256_mullo_epi16(v, scale));
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
    use super::*;

    /// The AVX2 sampler runs its own code for the table, not the portable
    /// fallback (its agreement with the portable samplers is tested in
    /// `sample.rs`, for every backend).
    #[test]
    fn table_fits_the_lanes() {
        let c = cdt_lanes(cdt()).unwrap();
        assert!(c.heads >= 8 && c.tails >= 1, "{} {}", c.heads, c.tails);
        let live = cdt().iter().filter(|&&t| t != 0).count();
        assert_eq!(c.heads + c.tails, live);
    }
}
