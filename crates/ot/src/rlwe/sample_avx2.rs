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
//! * Gaussian CDT: 64-bit unsigned `w < t` as a signed `vpcmpgtq` of the
//!   bias-flipped values, 16 words per pass over the table (the table
//!   entries are broadcast once per pass and reused for 4 vectors of
//!   words), counts kept in 64-bit lanes and packed to 16 bits at the end,
//!   then the sign and the scale applied 16 lanes at a time. Entries equal
//!   to 0 are skipped: no word is below them, and which entries are 0 is a
//!   property of the public table.
//!
//! The unsafe code is the entry into these functions, sound only on CPUs
//! with AVX2 (an [`Avx2`] token exists only after run-time detection), and
//! unaligned loads and stores on arrays of exactly the vector's size.
#![allow(unsafe_code)]

use super::ntt_avx2::Avx2;
use super::ring::N;
use super::sample::{BINOMIAL_BYTES, CDT_LEN, GAUSSIAN_BYTES};
use std::arch::x86_64::{
    __m256i, _mm256_add_epi8, _mm256_and_si256, _mm256_castps_si256, _mm256_castsi256_ps,
    _mm256_castsi256_si128, _mm256_cmpgt_epi64, _mm256_cvtepi8_epi16, _mm256_extracti128_si256,
    _mm256_loadu_si256, _mm256_mullo_epi16, _mm256_packs_epi32, _mm256_permute4x64_epi64,
    _mm256_set1_epi16, _mm256_set1_epi64x, _mm256_set1_epi8, _mm256_setr_epi8,
    _mm256_setzero_si256, _mm256_shuffle_epi8, _mm256_shuffle_ps, _mm256_srli_epi16,
    _mm256_storeu_si256, _mm256_sub_epi16, _mm256_sub_epi64, _mm256_sub_epi8, _mm256_xor_si256,
};

impl Avx2 {
    /// Same output as [`super::sample::binomial_portable`].
    pub(crate) fn binomial(self, rand: &[u8; BINOMIAL_BYTES], scale: i16, out: &mut [i16; N]) {
        // SAFETY: `self` exists only if `is_x86_feature_detected!("avx2")`
        // returned true, so the CPU executes AVX2 instructions.
        unsafe { binomial_avx2(rand, scale, out) }
    }

    /// Same output as [`super::sample::gaussian_portable`].
    pub(crate) fn gaussian(
        self,
        rand: &[u8; GAUSSIAN_BYTES],
        table: &[u64; CDT_LEN],
        scale: i16,
        out: &mut [i16; N],
    ) {
        // SAFETY: as above, the token proves AVX2 support.
        unsafe { gaussian_avx2(rand, table, scale, out) }
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

/// Stores 16 lanes of 16 bits.
#[target_feature(enable = "avx2")]
#[inline]
fn store(o: &mut [i16; 16], v: __m256i) {
    // SAFETY: `o` is 32 writable bytes and `storeu` has no alignment
    // requirement.
    unsafe { _mm256_storeu_si256(o.as_mut_ptr().cast(), v) }
}

#[target_feature(enable = "avx2")]
fn binomial_avx2(rand: &[u8; BINOMIAL_BYTES], scale: i16, out: &mut [i16; N]) {
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
    let (pos, neg) = rand.split_at(N);
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

/// Four 64-bit counts of `a` then four of `b` (each below 2^31), as eight
/// 32-bit lanes in order.
#[target_feature(enable = "avx2")]
#[inline]
fn narrow_64_to_32(a: __m256i, b: __m256i) -> __m256i {
    // [a0 a1 b0 b1 | a2 a3 b2 b3] (the low halves of each 64-bit lane) ...
    let x = _mm256_castps_si256(_mm256_shuffle_ps::<0b10_00_10_00>(
        _mm256_castsi256_ps(a),
        _mm256_castsi256_ps(b),
    ));
    // ... then [a0 a1 a2 a3 b0 b1 b2 b3].
    _mm256_permute4x64_epi64::<0b11_01_10_00>(x)
}

#[target_feature(enable = "avx2")]
fn gaussian_avx2(
    rand: &[u8; GAUSSIAN_BYTES],
    table: &[u64; CDT_LEN],
    scale: i16,
    out: &mut [i16; N],
) {
    // `w < t` (unsigned) iff `w ^ 2^63 < t ^ 2^63` (signed).
    let bias = _mm256_set1_epi64x(i64::MIN);
    let mut flipped = [_mm256_setzero_si256(); CDT_LEN];
    let mut live = 0;
    for (slot, &t) in flipped.iter_mut().zip(table.iter().filter(|&&t| t != 0)) {
        *slot = _mm256_set1_epi64x((t ^ (1 << 63)) as i64);
        live += 1;
    }
    let flipped = flipped.get(..live).unwrap_or_default();
    let scale = _mm256_set1_epi16(scale);
    let (words, signs) = rand.split_at(8 * N);
    let (words, _) = words.as_chunks::<128>();
    let (signs, _) = signs.as_chunks::<2>();
    let (out, _) = out.as_chunks_mut::<16>();
    for ((o, w), s) in out.iter_mut().zip(words).zip(signs) {
        let (w, _) = w.as_chunks::<32>();
        let w0 = _mm256_xor_si256(load(&w[0]), bias);
        let w1 = _mm256_xor_si256(load(&w[1]), bias);
        let w2 = _mm256_xor_si256(load(&w[2]), bias);
        let w3 = _mm256_xor_si256(load(&w[3]), bias);
        let mut c0 = _mm256_setzero_si256();
        let mut c1 = _mm256_setzero_si256();
        let mut c2 = _mm256_setzero_si256();
        let mut c3 = _mm256_setzero_si256();
        for &t in flipped {
            // The compare gives -1 where the word is below the entry.
            c0 = _mm256_sub_epi64(c0, _mm256_cmpgt_epi64(t, w0));
            c1 = _mm256_sub_epi64(c1, _mm256_cmpgt_epi64(t, w1));
            c2 = _mm256_sub_epi64(c2, _mm256_cmpgt_epi64(t, w2));
            c3 = _mm256_sub_epi64(c3, _mm256_cmpgt_epi64(t, w3));
        }
        // Counts are at most CDT_LEN: pack to 16 bits, in order.
        let m = _mm256_permute4x64_epi64::<0b11_01_10_00>(_mm256_packs_epi32(
            narrow_64_to_32(c0, c1),
            narrow_64_to_32(c2, c3),
        ));
        // Sign mask: -1 in lane k iff bit k of the two sign bytes is set.
        let neg = super::lanes_avx2::bit_lanes(i16::from_le_bytes(*s));
        let v = _mm256_sub_epi16(_mm256_xor_si256(m, neg), neg);
        store(o, _mm256_mullo_epi16(v, scale));
    }
}

#[cfg(test)]
mod tests {
    #![allow(
        clippy::unwrap_used,
        clippy::expect_used,
        clippy::panic,
        clippy::needless_range_loop
    )]
    use super::super::sample::{binomial_portable, cdt, gaussian_portable};
    use super::*;
    use crate::prg::Prg;

    fn token() -> Option<Avx2> {
        let t = Avx2::detect();
        if t.is_none() {
            eprintln!("no AVX2 on this CPU: AVX2 sampler tests skipped");
        }
        t
    }

    #[test]
    fn binomial_matches_portable() {
        let Some(t) = token() else { return };
        let mut prg = Prg::from_seed(&[11; 32]);
        let mut rand = [0u8; BINOMIAL_BYTES];
        for round in 0..200 {
            match round {
                0 => rand.fill(0),
                1 => rand.fill(0xff),
                2 => rand[..N].fill(0xff),
                3 => rand[N..].fill(0),
                _ => prg.fill_bytes(&mut rand),
            }
            for scale in [1, 2, -3] {
                let mut want = [0i16; N];
                let mut got = [0i16; N];
                binomial_portable(&rand, scale, &mut want);
                t.binomial(&rand, scale, &mut got);
                assert_eq!(want, got, "round {round}, scale {scale}");
            }
        }
    }

    /// Words equal to, just above and just below every table entry, the
    /// extremes, and random words; all sign patterns.
    #[test]
    fn gaussian_matches_portable() {
        let Some(t) = token() else { return };
        let table = cdt();
        let mut edge = vec![0u64, 1, u64::MAX, u64::MAX - 1, 1 << 63, (1 << 63) - 1];
        for &e in table.iter() {
            edge.extend([e, e.wrapping_add(1), e.wrapping_sub(1)]);
            // Same high half, low half at its extremes.
            edge.extend([e & !0xffff_ffff, e | 0xffff_ffff]);
        }
        let mut prg = Prg::from_seed(&[12; 32]);
        let mut rand = [0u8; GAUSSIAN_BYTES];
        for round in 0..200 {
            prg.fill_bytes(&mut rand);
            if round < 20 {
                // Edge words at every position, shifted each round.
                for (i, b) in rand[..8 * N].chunks_exact_mut(8).enumerate() {
                    b.copy_from_slice(&edge[(i + round) % edge.len()].to_le_bytes());
                }
            }
            for scale in [1, 2, -3] {
                let mut want = [0i16; N];
                let mut got = [0i16; N];
                gaussian_portable(&rand, table, scale, &mut want);
                t.gaussian(&rand, table, scale, &mut got);
                assert_eq!(want, got, "round {round}, scale {scale}");
            }
        }
    }
}
