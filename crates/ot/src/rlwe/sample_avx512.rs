//! AVX-512 backend of the Gaussian CDT sampler, written with intrinsics. It
//! produces exactly the coefficients of [`super::sample::gaussian_portable`]
//! from the same random bytes (tested in `sample.rs` on every backend), in
//! time independent of the values drawn: every lane goes through the same
//! instructions, and the only data-dependent "lookups" are `vpermt2d` on
//! registers, whose timing does not depend on the index.
//!
//! Sixteen 63-bit magnitudes `m = 2^32 h + l` at a time, as 32-bit lanes of
//! their high and low halves (the block layout keeps them apart). The table
//! entries that are not 0 (decreasing) become 32-bit *keys*: `2^31 + h(t)`
//! for an entry whose high half is not 0 (the "head"), `l(t) >> 1` for the
//! others (the "tail", `h(t) = 0`); a magnitude's key is made the same way.
//! Keys keep the order: `t > m` implies `key(t) >= key(m)`, and the keys of
//! the entries are distinct (checked when they are built), so at most one
//! entry has the magnitude's key, and when it does, the two have the same
//! high half. Hence the number of entries above `m` is
//!
//! * `n`, the number of entries whose key is above the magnitude's (a
//!   prefix of the table: a branch-free binary search of five probes over
//!   two registers of 16 keys, padded with keys 0, which are never above),
//! * plus one if entry `n` has the magnitude's key and a low half above its
//!   low half (compared with their top bits flipped, so that signed
//!   compares order them; the pads' flipped low halves are the minimum).
//!
//! That is about 30 vector instructions per 16 samples, 16 of them on the
//! permute port (the compares into mask registers and `vpermt2d`), where
//! a linear pass over the tail took two more per tail entry. The unsafe
//! code is the entry into the `#[target_feature]` function, sound only on
//! CPUs with AVX-512F, AVX-512BW and AVX2 (an [`Avx512`] token exists only
//! after run-time detection), and unaligned loads and stores on arrays of
//! exactly the vector's size.
#![allow(unsafe_code)]

use super::ntt_avx512::Avx512;
use super::sample::{
    cdt, entry_halves, gaussian_portable, BLOCK_BYTES, CDT_LEN, FLIP, GAUSSIAN_BLOCK,
};
use super::sample_avx2::store;
use core::arch::x86_64::{
    __m512i, _mm256_mullo_epi16, _mm256_set1_epi16, _mm512_add_epi32, _mm512_and_si512,
    _mm512_cmpeq_epi32_mask, _mm512_cmpgt_epu32_mask, _mm512_cmplt_epi32_mask,
    _mm512_cvtepi32_epi16, _mm512_loadu_si512, _mm512_mask_add_epi32, _mm512_mask_blend_epi32,
    _mm512_mask_sub_epi32, _mm512_or_si512, _mm512_permutex2var_epi32, _mm512_set1_epi32,
    _mm512_setzero_si512, _mm512_srli_epi32, _mm512_testn_epi32_mask, _mm512_xor_si512,
};
use std::sync::OnceLock;

/// Keys in the two registers of the binary search.
const KEYS: usize = 32;

/// The table's keys and flipped low halves, in table order, padded.
pub(crate) struct CdtKeys {
    /// `2^31 + h(t)` (head) or `l(t) >> 1` (tail), then 0.
    key: [u32; KEYS],
    /// `l(t) ^ 2^31`, then `i32::MIN`.
    low: [i32; KEYS],
    /// Entries that are not 0.
    pub(crate) len: usize,
}

/// The keys of the sampler's table ([`cdt`]), built once; `None` if they
/// do not fit or repeat (not the case for sigma = 2; tested), and the
/// sampler then runs the portable code.
pub(crate) fn keys() -> Option<&'static CdtKeys> {
    static K: OnceLock<Option<CdtKeys>> = OnceLock::new();
    K.get_or_init(|| cdt_keys(cdt())).as_ref()
}

fn cdt_keys(table: &[u64; CDT_LEN]) -> Option<CdtKeys> {
    let mut k = CdtKeys {
        key: [0; KEYS],
        low: [i32::MIN; KEYS],
        len: 0,
    };
    for &t in table.iter().filter(|&&t| t != 0) {
        let (th, tl) = entry_halves(t);
        let key = if th != 0 {
            (1 << 31) | th as u32
        } else {
            (tl as u32 ^ FLIP) >> 1
        };
        // Strictly decreasing, and above the pads' 0.
        if key == 0 || (k.len > 0 && k.key.get(k.len - 1) <= Some(&key)) {
            return None;
        }
        *k.key.get_mut(k.len)? = key;
        *k.low.get_mut(k.len)? = tl;
        k.len += 1;
    }
    // The search needs one pad (a key that is never above).
    (k.len < KEYS).then_some(k)
}

impl Avx512 {
    /// Same output as [`super::sample::gaussian_portable`] with the
    /// sampler's table ([`cdt`]), for each block of `rand` and of `out`
    /// (a polynomial's blocks in one call, so that the table's registers
    /// are set up once).
    pub(crate) fn gaussian_blocks(
        self,
        rand: &[[u8; BLOCK_BYTES]],
        scale: i16,
        out: &mut [[i16; GAUSSIAN_BLOCK]],
    ) {
        let Some(k) = keys() else {
            for (r, o) in rand.iter().zip(out) {
                gaussian_portable(r, cdt(), scale, o);
            }
            return;
        };
        // SAFETY: `self` exists only if run-time detection found AVX-512F,
        // AVX-512BW and AVX2, the features the function is compiled for.
        unsafe { gaussian_avx512(k, rand, scale, out) }
    }
}

/// Loads 16 lanes of 32 bits from 64 bytes (also used by `encode_avx512`).
#[target_feature(enable = "avx512f")]
#[inline]
pub(crate) fn load64(b: &[u8; 64]) -> __m512i {
    // SAFETY: `b` is 64 readable bytes and `loadu` has no alignment
    // requirement.
    unsafe { _mm512_loadu_si512(b.as_ptr().cast()) }
}

/// The two registers of 16 lanes of a table of 32.
#[target_feature(enable = "avx512f")]
#[inline]
fn load32<T: Copy>(x: &[T; KEYS]) -> (__m512i, __m512i) {
    const { assert!(size_of::<T>() == 4) };
    let (x, _) = x.as_chunks::<16>();
    // SAFETY: each chunk is 16 lanes of 4 bytes, 64 readable bytes, and
    // `loadu` has no alignment requirement.
    unsafe {
        (
            _mm512_loadu_si512(x[0].as_ptr().cast()),
            _mm512_loadu_si512(x[1].as_ptr().cast()),
        )
    }
}

#[target_feature(enable = "avx512f,avx512bw,avx2")]
fn gaussian_avx512(
    k: &CdtKeys,
    rand: &[[u8; BLOCK_BYTES]],
    scale: i16,
    out: &mut [[i16; GAUSSIAN_BLOCK]],
) {
    let (key0, key1) = load32(&k.key);
    let (low0, low1) = load32(&k.low);
    let first = _mm512_set1_epi32(k.key[15] as i32);
    let low31 = _mm512_set1_epi32(i32::MAX);
    let flip = _mm512_set1_epi32(FLIP as i32);
    let top = _mm512_set1_epi32(FLIP as i32);
    let one = _mm512_set1_epi32(1);
    let zero = _mm512_setzero_si512();
    let sixteen = _mm512_set1_epi32(16);
    let probes = [8, 4, 2, 1].map(|s| (_mm512_set1_epi32(s - 1), _mm512_set1_epi32(s)));
    let scale = _mm256_set1_epi16(scale);
    for (r, o) in rand.iter().zip(out) {
        let (lo, hi) = r.split_at(BLOCK_BYTES / 2);
        let (lo, _) = lo.as_chunks::<64>();
        let (hi, _) = hi.as_chunks::<64>();
        let (o, _) = o.as_chunks_mut::<16>();
        for ((o, lo), hi) in o.iter_mut().zip(lo).zip(hi) {
            let hw = load64(hi);
            let h = _mm512_and_si512(hw, low31);
            let lw = load64(lo);
            // The magnitude's key: 2^31 + h, or l >> 1 where h = 0.
            let key = _mm512_mask_blend_epi32(
                _mm512_testn_epi32_mask(h, h),
                _mm512_or_si512(h, top),
                _mm512_srli_epi32::<1>(lw),
            );
            // Entries whose key is above: a prefix of length `n` (at most
            // 31, the pads never above).
            let mut n = _mm512_mask_blend_epi32(_mm512_cmpgt_epu32_mask(first, key), zero, sixteen);
            for &(offset, step) in &probes {
                let i = _mm512_add_epi32(n, offset);
                let t = _mm512_permutex2var_epi32(key0, i, key1);
                n = _mm512_mask_add_epi32(n, _mm512_cmpgt_epu32_mask(t, key), n, step);
            }
            // Entry `n`: the magnitude is below it iff the keys are equal
            // (then so are the high halves) and its low half is below.
            let equal = _mm512_cmpeq_epi32_mask(_mm512_permutex2var_epi32(key0, n, key1), key);
            let l = _mm512_xor_si512(lw, flip);
            let below = _mm512_cmplt_epi32_mask(l, _mm512_permutex2var_epi32(low0, n, low1));
            n = _mm512_mask_add_epi32(n, equal & below, n, one);
            // The sign bit of the high word negates.
            n = _mm512_mask_sub_epi32(n, _mm512_cmplt_epi32_mask(hw, zero), zero, n);
            // Values in -18..=18: truncation to 16 bits keeps them.
            store(o, _mm256_mullo_epi16(_mm512_cvtepi32_epi16(n), scale));
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
    use super::*;

    /// The AVX-512 sampler runs its own code for the table, not the portable
    /// fallback (its agreement with the portable sampler is tested in
    /// `sample.rs`, for every backend): the keys are distinct, decreasing,
    /// and leave the search a pad; head keys have the top bit, tail keys
    /// not.
    #[test]
    fn table_keys() {
        let k = keys().unwrap();
        let nonzero = cdt().iter().filter(|&&t| t != 0).count();
        assert_eq!(k.len, nonzero);
        assert!(k.len >= 16 && k.len < KEYS, "{}", k.len);
        assert!(k.key[..k.len].windows(2).all(|w| w[0] > w[1]));
        assert!(k.key[k.len..].iter().all(|&x| x == 0));
        assert!(k.low[k.len..].iter().all(|&x| x == i32::MIN));
        for (&t, &key) in cdt().iter().zip(&k.key) {
            assert_eq!(key >> 31 == 1, t >> 32 != 0);
        }
    }
}
