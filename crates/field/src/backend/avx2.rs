//! The AVX2 backend (x86-64): AVX2 for `GF(2^8)` and linear maps, PCLMULQDQ / VPCLMULQDQ for
//! `GF(2^64)`.
//!
//! * `GF(2^8)` products, 32 at a time: Horner's rule over the bits of `b`, most significant
//!   first: `p = p*u + (b_i ? a : 0)`. The bit `b_i` is moved to the sign bit by doubling `b`,
//!   `vpcmpgtb` against zero turns sign bits into byte masks, and `p*u` is `vpaddb p,p` plus
//!   `0x1b` in the bytes whose sign bit was set. Branch-free, no tables.
//! * `GF(2^4)` products, 32 at a time (one element per byte): shift-and-add over the four bits
//!   of `b`, with `vpcmpeqb` masks and `a*u` reduced by `u^4 = u + 1`; and the two-per-byte
//!   wire packing with `vpmaddubsw` / `vpackuswb` (unpacking with `vpunpck*bw`).
//! * Linear maps: two `vpshufb` lookups in the map's 16-entry nibble tables.
//! * `GF(2^64)`: carry-less products with PCLMULQDQ (two per 128-bit register) or VPCLMULQDQ
//!   (four per 256-bit register), reduced four lanes at a time with shifts: with
//!   `h` the high half and `g = h + (h >> 60) + (h >> 61) + (h >> 63)`,
//!   `h u^64 ≡ g (1 + u + u^3 + u^4)`. Inner products XOR the unreduced 128-bit
//!   products and reduce once.
//! * The streaming scatter of `super::scatter_streaming`: whole cache lines with SSE2
//!   non-temporal stores.
//!
//! Every function here but the scatter (SSE2 is part of x86-64) is safe to call only through a
//! token ([`Avx2`], [`Vpclmul`]) whose existence proves the CPU features; the tokens are
//! created only by run-time detection.
#![allow(unsafe_code)]

use core::arch::x86_64::*;

use super::portable;
use super::NibbleTables;
use crate::gf2p4;
use crate::gf2p64::reduce128;
use crate::LinearMap8;

/// Proof that the CPU has AVX2 and PCLMULQDQ.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Avx2 {
    _private: (),
}

impl Avx2 {
    pub(crate) fn detect() -> Option<Self> {
        (is_x86_feature_detected!("avx2") && is_x86_feature_detected!("pclmulqdq"))
            .then_some(Self { _private: () })
    }
}

/// Proof that the CPU has AVX2, PCLMULQDQ and VPCLMULQDQ.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Vpclmul {
    _private: (),
}

impl Vpclmul {
    pub(crate) fn detect() -> Option<Self> {
        (is_x86_feature_detected!("avx2")
            && is_x86_feature_detected!("pclmulqdq")
            && is_x86_feature_detected!("vpclmulqdq"))
        .then_some(Self { _private: () })
    }
}

/// Proof that the CPU has AES-NI (and SSE2).
#[derive(Clone, Copy, Debug)]
pub(crate) struct AesNi {
    _private: (),
}

impl AesNi {
    pub(crate) fn detect() -> Option<Self> {
        (is_x86_feature_detected!("aes") && is_x86_feature_detected!("sse2"))
            .then_some(Self { _private: () })
    }
}

/// Proof that the CPU has AES-NI, AVX2 and VAES (AES rounds on both 128-bit lanes).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Vaes {
    _private: (),
}

impl Vaes {
    pub(crate) fn detect() -> Option<Self> {
        (is_x86_feature_detected!("aes")
            && is_x86_feature_detected!("avx2")
            && is_x86_feature_detected!("vaes"))
        .then_some(Self { _private: () })
    }
}

// ---- loads and stores ----------------------------------------------------------------------

#[inline]
#[target_feature(enable = "avx2")]
fn load(x: &[u8; 32]) -> __m256i {
    // SAFETY: `x` is 32 readable bytes; `loadu` has no alignment requirement.
    unsafe { _mm256_loadu_si256(x.as_ptr().cast()) }
}

/// How far ahead of a streaming kernel's loads [`prefetch_ahead`] asks for its input.
const PREFETCH_DISTANCE: usize = 8192;

/// Asks for the cache line [`PREFETCH_DISTANCE`] bytes past `x` to be brought into the
/// second-level cache. A kernel that reads a long run from memory and writes what it makes
/// into a buffer in that cache stalled on its loads: the hardware prefetchers did not run far
/// enough ahead, and it read about 10 GB/s on the AMD EPYC VM where a plain scan reads 28
/// (a C model of the nibble unpacking: 20-22 GB/s with this hint every 64 bytes;
/// docs/PERFORMANCE.md). The address may lie past the end of the run, or of its allocation:
/// a prefetch is a hint that never faults, and the pointer is only formed, never read.
#[inline(always)]
pub(super) fn prefetch_ahead<T: ?Sized>(x: &T) {
    let p = (x as *const T).cast::<u8>().wrapping_add(PREFETCH_DISTANCE);
    // SAFETY: `prefetcht1` reads nothing and cannot fault, whatever the address (SSE, which
    // every x86-64 CPU has).
    unsafe { _mm_prefetch::<_MM_HINT_T1>(p.cast()) }
}

#[inline]
#[target_feature(enable = "avx2")]
fn store(x: &mut [u8; 32], v: __m256i) {
    // SAFETY: `x` is 32 writable bytes, uniquely borrowed; `storeu` needs no alignment.
    unsafe { _mm256_storeu_si256(x.as_mut_ptr().cast(), v) }
}

#[inline]
#[target_feature(enable = "avx2")]
fn load_words(x: &[u64; 4]) -> __m256i {
    // SAFETY: `x` is 32 readable bytes; `loadu` has no alignment requirement.
    unsafe { _mm256_loadu_si256(x.as_ptr().cast()) }
}

#[inline]
#[target_feature(enable = "avx2")]
fn store_words(x: &mut [u64; 4], v: __m256i) {
    // SAFETY: `x` is 32 writable bytes, uniquely borrowed; `storeu` needs no alignment.
    unsafe { _mm256_storeu_si256(x.as_mut_ptr().cast(), v) }
}

#[inline]
#[target_feature(enable = "sse2")]
fn load16(x: &[u8; 16]) -> __m128i {
    // SAFETY: `x` is 16 readable bytes; `loadu` has no alignment requirement.
    unsafe { _mm_loadu_si128(x.as_ptr().cast()) }
}

// ---- column sums ---------------------------------------------------------------------------

pub(crate) fn embed_column_sums(
    _t: Avx2,
    planes: &[[[u8; 16]; 16]],
    cols: &[[u8; 32]],
) -> [u64; 32] {
    // SAFETY: the token proves AVX2.
    unsafe { embed_column_sums_impl(planes, cols) }
}

/// `Σ_j f_j(cols[j][e])` for the 32 lanes `e`: per column, its nibbles once and two
/// `vpshufb` per byte plane in the column's own tables (broadcast from 16 bytes); the planes
/// are transposed to words at the end.
#[target_feature(enable = "avx2")]
fn embed_column_sums_impl(planes: &[[[u8; 16]; 16]], cols: &[[u8; 32]]) -> [u64; 32] {
    let mut acc = [_mm256_setzero_si256(); 8];
    for (t, c) in planes.iter().zip(cols) {
        let (lo, hi) = nibbles(load(c));
        for (p, a) in acc.iter_mut().enumerate() {
            let tl = _mm256_broadcastsi128_si256(load16(&t[p]));
            let th = _mm256_broadcastsi128_si256(load16(&t[8 + p]));
            let v = _mm256_xor_si256(_mm256_shuffle_epi8(tl, lo), _mm256_shuffle_epi8(th, hi));
            *a = _mm256_xor_si256(*a, v);
        }
    }
    let words = transpose_planes(acc);
    let mut out = [0u64; 32];
    for (o, w) in out.as_chunks_mut::<4>().0.iter_mut().zip(words) {
        store_words(o, w);
    }
    out
}

pub(crate) fn transpose_columns(_t: Avx2, rows: &[&[u8]], cols: &mut [[u8; 32]]) -> usize {
    // SAFETY: the token proves AVX2.
    unsafe { transpose_columns_impl(rows, cols) }
}

/// [`crate::backend::transpose_columns`] on the whole groups of 32 columns: 32 rows in
/// registers (missing rows zero), two lane-wise 16 × 16 transposes and a 128-bit permute.
/// Returns the columns done.
#[target_feature(enable = "avx2")]
fn transpose_columns_impl(rows: &[&[u8]], cols: &mut [[u8; 32]]) -> usize {
    let n = rows.iter().fold(cols.len(), |n, r| n.min(r.len()));
    let whole = n / 32 * 32;
    if rows.len() > 32 {
        return 0;
    }
    for c in (0..whole).step_by(32) {
        let r: [__m256i; 32] = core::array::from_fn(|e| match rows.get(e) {
            Some(row) => load_at(row, c),
            None => _mm256_setzero_si256(),
        });
        let a = transpose16_lanes(core::array::from_fn(|i| r[i]));
        let b = transpose16_lanes(core::array::from_fn(|i| r[16 + i]));
        for j in 0..16 {
            store(
                &mut cols[c + j],
                _mm256_permute2x128_si256::<0x20>(a[j], b[j]),
            );
            store(
                &mut cols[c + 16 + j],
                _mm256_permute2x128_si256::<0x31>(a[j], b[j]),
            );
        }
    }
    whole
}

/// Within each 128-bit lane, the 16 × 16 byte transpose of `x` (byte `j` of lane `l` of
/// register `i` to byte `i` of lane `l` of register `j`): unpacking by 8, 16, 32 and 64 bits.
#[inline]
#[target_feature(enable = "avx2")]
fn transpose16_lanes(x: [__m256i; 16]) -> [__m256i; 16] {
    // y[i], i < 8: 16-bit units j = 0..8 of rows 2i, 2i + 1; y[8 + i]: units 8..16.
    let y: [__m256i; 16] = core::array::from_fn(|i| {
        let (a, b) = (x[2 * (i % 8)], x[2 * (i % 8) + 1]);
        if i < 8 {
            _mm256_unpacklo_epi8(a, b)
        } else {
            _mm256_unpackhi_epi8(a, b)
        }
    });
    // z[4g + q]: columns 4g .. 4g + 4 of rows 4q .. 4q + 4 (32-bit units).
    let z: [__m256i; 16] = core::array::from_fn(|i| {
        let (g, q) = (i / 4, i % 4);
        let base = if g < 2 { 0 } else { 8 };
        let (a, b) = (y[base + 2 * q], y[base + 2 * q + 1]);
        if g % 2 == 0 {
            _mm256_unpacklo_epi16(a, b)
        } else {
            _mm256_unpackhi_epi16(a, b)
        }
    });
    // u[4g + 0 / 1]: columns 4g, 4g + 1 / 4g + 2, 4g + 3 of rows 0..8; u[4g + 2 / 3]: rows 8..16.
    let u: [__m256i; 16] = core::array::from_fn(|i| {
        let (g, r) = (i / 4, i % 4);
        let (a, b) = (z[4 * g + 2 * (r / 2)], z[4 * g + 2 * (r / 2) + 1]);
        if r % 2 == 0 {
            _mm256_unpacklo_epi32(a, b)
        } else {
            _mm256_unpackhi_epi32(a, b)
        }
    });
    core::array::from_fn(|j| {
        let (g, r) = (j / 4, j % 4);
        let (a, b) = (u[4 * g + r / 2], u[4 * g + 2 + r / 2]);
        if r % 2 == 0 {
            _mm256_unpacklo_epi64(a, b)
        } else {
            _mm256_unpackhi_epi64(a, b)
        }
    })
}

// ---- GF(2^8) products ----------------------------------------------------------------------

/// 32 products in GF(2^8).
#[inline]
#[target_feature(enable = "avx2")]
fn mul32(a: __m256i, b: __m256i) -> __m256i {
    mul_sum32([(a, b)])
}

/// 32 sums `Σ_i a_i b_i` of `N` products in GF(2^8): one Horner pass over the bits of the
/// `b_i` (MSB first), the doubling of the partial sum shared by all `N` products.
#[inline]
#[target_feature(enable = "avx2")]
fn mul_sum32<const N: usize>(mut pairs: [(__m256i, __m256i); N]) -> __m256i {
    let zero = _mm256_setzero_si256();
    let poly = _mm256_set1_epi8(0x1b);
    // p += a if the sign bit of b (its current bit) is set.
    let add = |p: __m256i, (a, b): (__m256i, __m256i)| {
        _mm256_xor_si256(p, _mm256_and_si256(_mm256_cmpgt_epi8(zero, b), a))
    };
    // Bit 7 of each b.
    let mut p = pairs.iter().fold(zero, |p, &ab| add(p, ab));
    for _ in 0..7 {
        // p = p * u
        let overflow = _mm256_and_si256(_mm256_cmpgt_epi8(zero, p), poly);
        p = _mm256_xor_si256(_mm256_add_epi8(p, p), overflow);
        for ab in pairs.iter_mut() {
            ab.1 = _mm256_add_epi8(ab.1, ab.1);
            p = add(p, *ab);
        }
    }
    p
}

pub(crate) fn gf2p8_mul<const ADD: bool>(_t: Avx2, out: &mut [u8], a: &[u8], b: &[u8]) {
    // SAFETY: the token proves AVX2.
    unsafe { gf2p8_mul_impl::<ADD>(out, a, b) }
}

#[target_feature(enable = "avx2")]
fn gf2p8_mul_impl<const ADD: bool>(out: &mut [u8], a: &[u8], b: &[u8]) {
    let n = out.len().min(a.len()).min(b.len());
    let (oc, ot) = out[..n].as_chunks_mut::<32>();
    let (ac, at) = a[..n].as_chunks::<32>();
    let (bc, bt) = b[..n].as_chunks::<32>();
    for ((o, x), y) in oc.iter_mut().zip(ac).zip(bc) {
        let mut r = mul32(load(x), load(y));
        if ADD {
            r = _mm256_xor_si256(r, load(o));
        }
        store(o, r);
    }
    portable::gf2p8_mul::<ADD>(ot, at, bt);
}

/// The whole 32-byte chunks of `out` (no longer than the sources) as `kernel([(a, b), (c,
/// d)])` of the sources' chunks; returns the bytes written, the rest being the caller's tail.
/// The driver of [`gf2p8_mul_sum2_impl`] and [`tower_mul_sum2_impl`].
#[inline]
#[target_feature(enable = "avx2")]
fn sum2_chunks(
    out: &mut [u8],
    [a, b, c, d]: [&[u8]; 4],
    kernel: impl Fn([(__m256i, __m256i); 2]) -> __m256i,
) -> usize {
    let (oc, _) = out.as_chunks_mut::<32>();
    for (i, o) in oc.iter_mut().enumerate() {
        let at = |s: &[u8]| load_at(s, 32 * i);
        store(o, kernel([(at(a), at(b)), (at(c), at(d))]));
    }
    32 * oc.len()
}

pub(crate) fn gf2p8_mul_sum2(_t: Avx2, out: &mut [u8], a: &[u8], b: &[u8], c: &[u8], d: &[u8]) {
    // SAFETY: the token proves AVX2.
    unsafe { gf2p8_mul_sum2_impl(out, a, b, c, d) }
}

/// `out[k] = a[k] b[k] + c[k] d[k]` by [`mul_sum32`] (about 89 instructions per 32 bytes,
/// against 116 for two [`mul32`], and a pass less over `out`).
#[target_feature(enable = "avx2")]
fn gf2p8_mul_sum2_impl(out: &mut [u8], a: &[u8], b: &[u8], c: &[u8], d: &[u8]) {
    let n = super::common_len(out.len(), [a, b, c, d]);
    let done = sum2_chunks(&mut out[..n], [a, b, c, d], |p| mul_sum32(p));
    let o = &mut out[done..n];
    portable::gf2p8_mul::<false>(o, &a[done..n], &b[done..n]);
    portable::gf2p8_mul::<true>(o, &c[done..n], &d[done..n]);
}

/// `log_u x` of the nibbles `x = u^i` of `GF(2^4)` (`u^4 = u + 1`), and `0xc0` for `0`:
/// with saturating sums, a product with a zero factor keeps bit 7 set through
/// [`tower_reduce`], and `vpshufb` looks such an index up as `0`.
const LOG4: [u8; 16] = {
    let mut t = [0xc0u8; 16];
    let (mut x, mut i) = (1u8, 0u8);
    while i < 15 {
        t[x as usize] = i;
        x = gf2p4::mul_u4(x, 2);
        i += 1;
    }
    t
};

/// `c u^i` for `i < 15` (`c` a nibble), the last entry unused.
const fn exp4_times(c: u8) -> [u8; 16] {
    let mut t = [0u8; 16];
    let (mut x, mut i) = (1u8, 0);
    while i < 15 {
        t[i] = gf2p4::mul_u4(x, c);
        x = gf2p4::mul_u4(x, 2);
        i += 1;
    }
    t
}

/// `u^i`.
const EXP4: [u8; 16] = exp4_times(1);
/// `λ u^i` (`λ` = `0xE`, the tower's constant, [`crate::Gf4Tower`]).
const EXP4_LAMBDA: [u8; 16] = exp4_times(0x0e);

/// `s mod 15` for the sums `s ≤ 28` of two logarithms; sums with bit 7 set keep it.
#[inline]
#[target_feature(enable = "avx2")]
fn tower_reduce(s: __m256i) -> __m256i {
    _mm256_min_epu8(s, _mm256_sub_epi8(s, _mm256_set1_epi8(15)))
}

/// The logarithms of the nibbles `a_h`, `a_l` and `a_h + a_l` of 32 packed tower bytes.
#[inline]
#[target_feature(enable = "avx2")]
fn tower_logs(log: __m256i, a: __m256i) -> [__m256i; 3] {
    let nib = _mm256_set1_epi8(0x0f);
    let hi = _mm256_and_si256(_mm256_srli_epi16::<4>(a), nib);
    let lo = _mm256_and_si256(a, nib);
    let sum = _mm256_xor_si256(hi, lo);
    [hi, lo, sum].map(|x| _mm256_shuffle_epi8(log, x))
}

/// 32 sums `a b + c d` in the tower field `GF((2^4)^2)` (packed bytes `a_h || a_l`, `Y^2 = Y
/// + λ`), by logarithms in `GF(2^4)` looked up in registers: with Karatsuba's three
/// products `m_1 = a_h b_h`, `m_2 = a_l b_l`, `m_3 = (a_h + a_l)(b_h + b_l)`, the high nibble
/// is `m_3 + m_2` and the low `m_2 + λ m_1`. About 60 instructions, against 89 for
/// [`mul_sum32`] in the `GF(2^8)` basis.
#[inline]
#[target_feature(enable = "avx2")]
fn tower_mul_sum32(pairs: [(__m256i, __m256i); 2]) -> __m256i {
    let log = _mm256_broadcastsi128_si256(load16(&LOG4));
    let exp = _mm256_broadcastsi128_si256(load16(&EXP4));
    let exp_l = _mm256_broadcastsi128_si256(load16(&EXP4_LAMBDA));
    let (mut hi, mut lo) = (_mm256_setzero_si256(), _mm256_setzero_si256());
    for (a, b) in pairs {
        let [ah, al, asum] = tower_logs(log, a);
        let [bh, bl, bsum] = tower_logs(log, b);
        let m1 = tower_reduce(_mm256_adds_epu8(ah, bh));
        let m2 = _mm256_shuffle_epi8(exp, tower_reduce(_mm256_adds_epu8(al, bl)));
        let m3 = _mm256_shuffle_epi8(exp, tower_reduce(_mm256_adds_epu8(asum, bsum)));
        hi = _mm256_xor_si256(hi, _mm256_xor_si256(m3, m2));
        lo = _mm256_xor_si256(lo, _mm256_xor_si256(m2, _mm256_shuffle_epi8(exp_l, m1)));
    }
    _mm256_or_si256(_mm256_slli_epi16::<4>(hi), lo)
}

pub(crate) fn tower_mul_sum2(_t: Avx2, out: &mut [u8], a: &[u8], b: &[u8], c: &[u8], d: &[u8]) {
    // SAFETY: the token proves AVX2.
    unsafe { tower_mul_sum2_impl(out, a, b, c, d) }
}

/// `out[k] = a[k] b[k] + c[k] d[k]` in the tower field by [`tower_mul_sum32`].
#[target_feature(enable = "avx2")]
fn tower_mul_sum2_impl(out: &mut [u8], a: &[u8], b: &[u8], c: &[u8], d: &[u8]) {
    let n = super::common_len(out.len(), [a, b, c, d]);
    let done = sum2_chunks(&mut out[..n], [a, b, c, d], |p| tower_mul_sum32(p));
    portable::tower_mul_sum2(
        &mut out[done..n],
        &a[done..n],
        &b[done..n],
        &c[done..n],
        &d[done..n],
    );
}

pub(crate) fn gf2p8_inner(_t: Avx2, a: &[u8], b: &[u8]) -> u8 {
    // SAFETY: the token proves AVX2.
    unsafe { gf2p8_inner_impl(a, b) }
}

#[target_feature(enable = "avx2")]
fn gf2p8_inner_impl(a: &[u8], b: &[u8]) -> u8 {
    let n = a.len().min(b.len());
    let (ac, at) = a[..n].as_chunks::<32>();
    let (bc, bt) = b[..n].as_chunks::<32>();
    let mut acc = _mm256_setzero_si256();
    for (x, y) in ac.iter().zip(bc) {
        acc = _mm256_xor_si256(acc, mul32(load(x), load(y)));
    }
    let mut lanes = [0u8; 32];
    store(&mut lanes, acc);
    lanes
        .iter()
        .fold(portable::gf2p8_inner(at, bt), |s, x| s ^ x)
}

// ---- GF(2^4) (one element per byte, low nibble) --------------------------------------------

/// 32 products in GF(2^4) = GF(2)[u]/(u^4 + u + 1), in the low nibbles (high nibbles of `a`
/// and `b` are ignored, those of the result are zero): `p = sum_i (a u^i) [bit i of b]`, with
/// `a u^(i+1) = ((a u^i << 1) & 0x0e) ^ (bit 3 of a u^i ? 0x03 : 0)`. Branch-free, no tables.
#[inline]
#[target_feature(enable = "avx2")]
fn gf4_mul32(a: __m256i, b: __m256i) -> __m256i {
    let nibble = _mm256_set1_epi8(0x0f);
    let keep = _mm256_set1_epi8(0x0e);
    let top = _mm256_set1_epi8(0x08);
    let poly = _mm256_set1_epi8(0x03);
    let mut a = _mm256_and_si256(a, nibble);
    let mut p = _mm256_setzero_si256();
    for i in 0..4 {
        if i > 0 {
            // a = a * u
            let carry = _mm256_and_si256(_mm256_cmpeq_epi8(_mm256_and_si256(a, top), top), poly);
            a = _mm256_xor_si256(_mm256_and_si256(_mm256_add_epi8(a, a), keep), carry);
        }
        let bit = _mm256_set1_epi8(1 << i);
        let mask = _mm256_cmpeq_epi8(_mm256_and_si256(b, bit), bit);
        p = _mm256_xor_si256(p, _mm256_and_si256(a, mask));
    }
    p
}

pub(crate) fn gf2p4_mul<const ADD: bool>(_t: Avx2, out: &mut [u8], a: &[u8], b: &[u8]) {
    // SAFETY: the token proves AVX2.
    unsafe { gf2p4_mul_impl::<ADD>(out, a, b) }
}

#[target_feature(enable = "avx2")]
fn gf2p4_mul_impl<const ADD: bool>(out: &mut [u8], a: &[u8], b: &[u8]) {
    let n = out.len().min(a.len()).min(b.len());
    let (oc, ot) = out[..n].as_chunks_mut::<32>();
    let (ac, at) = a[..n].as_chunks::<32>();
    let (bc, bt) = b[..n].as_chunks::<32>();
    for ((o, x), y) in oc.iter_mut().zip(ac).zip(bc) {
        let mut r = gf4_mul32(load(x), load(y));
        if ADD {
            r = _mm256_xor_si256(r, load(o));
        }
        store(o, r);
    }
    gf2p4::portable::mul::<ADD>(ot, at, bt);
}

pub(crate) fn gf2p4_pack(_t: Avx2, src: &[u8], out: &mut [u8]) {
    // SAFETY: the token proves AVX2.
    unsafe { gf2p4_pack_impl(src, out) }
}

/// 64 elements into 32 bytes: `vpmaddubsw` with weights `[16, 1]` puts `(h << 4) | l` of each
/// pair in a 16-bit lane (at most 255 after masking, so `vpackuswb` keeps it), and
/// `vpermq` undoes the per-128-bit-lane interleaving of `vpackuswb`.
#[inline]
#[target_feature(enable = "avx2")]
fn pack64(x0: &[u8; 32], x1: &[u8; 32]) -> __m256i {
    let nibble = _mm256_set1_epi8(0x0f);
    // Bytes 16, 1 in every 16-bit lane (signed operand of `vpmaddubsw`).
    let weights = _mm256_set1_epi16(0x0110);
    let m0 = _mm256_maddubs_epi16(_mm256_and_si256(load(x0), nibble), weights);
    let m1 = _mm256_maddubs_epi16(_mm256_and_si256(load(x1), nibble), weights);
    // Quadwords: bytes 0-7, 16-23, 8-15, 24-31 of the output.
    _mm256_permute4x64_epi64::<0b11_01_10_00>(_mm256_packus_epi16(m0, m1))
}

/// [`pack64`] over the whole chunks, the rest portable.
#[target_feature(enable = "avx2")]
fn gf2p4_pack_impl(src: &[u8], out: &mut [u8]) {
    let n = out.len().min(src.len() / 2);
    let (oc, ot) = out[..n].as_chunks_mut::<32>();
    let done = 32 * oc.len();
    let (sc, _) = src[..2 * done].as_chunks::<32>();
    let (sp, _) = sc.as_chunks::<2>();
    for (o, [x0, x1]) in oc.iter_mut().zip(sp) {
        store(o, pack64(x0, x1));
    }
    gf2p4::portable::pack(&src[2 * done..2 * n], ot);
}

/// [`gf2p4_pack`] of `src` into `out`'s memory (cleared, grown if short; a last odd element
/// alone in a high nibble, as `Gf2p4::encode_slice` writes it), its 32-byte-aligned whole
/// chunks written by non-temporal stores (`vmovntdq`), past the cache, and no byte written
/// twice (the vector is not zeroed first).
pub(crate) fn gf2p4_pack_stream(_t: Avx2, src: &[u8], mut out: Vec<u8>) -> Vec<u8> {
    let n = src.len().div_ceil(2);
    out.clear();
    out.reserve(n);
    let ptr = out.as_mut_ptr();
    let head = ptr.align_offset(32).min(n);
    // Whole pairs only in the streamed part (a last odd element goes to the tail).
    let body = (src.len() / 2).saturating_sub(head) / 32 * 32;
    // Bytes `from .. from + len` (`len ≤ 32`) one by one.
    let small = |from: usize, len: usize| {
        let mut buf = [0u8; 32];
        for (i, b) in buf[..len].iter_mut().enumerate() {
            let k = 2 * (from + i);
            *b = (src[k] << 4) | src.get(k + 1).map_or(0, |l| l & 15);
        }
        // SAFETY: `from + len ≤ n`, the capacity of `out`; `buf` holds `len` bytes.
        unsafe { core::ptr::copy_nonoverlapping(buf.as_ptr(), ptr.add(from), len) };
    };
    small(0, head);
    if body > 0 {
        // SAFETY: the token proves AVX2; `head .. head + body` lies within the capacity,
        // `ptr + head` is 32-byte aligned and `body` a multiple of 32; `src` holds the
        // `2 body` bytes from `2 head`.
        unsafe { gf2p4_pack_stream_impl(&src[2 * head..2 * (head + body)], ptr.add(head)) };
    }
    small(head + body, n - head - body);
    // SAFETY: all `n` bytes were written above (`head`, `body` and the rest).
    unsafe { out.set_len(n) };
    out
}

/// [`pack64`] over `src`, each 32 bytes stored at `dst + 32 k` by `vmovntdq`; then `sfence`,
/// so that the stores are ordered before any later ones.
///
/// # Safety
///
/// AVX2; `dst .. dst + src.len() / 2` writable and `dst` 32-byte aligned; `src.len()` a
/// multiple of 64.
#[target_feature(enable = "avx2")]
unsafe fn gf2p4_pack_stream_impl(src: &[u8], dst: *mut u8) {
    let (sc, _) = src.as_chunks::<32>();
    let (sp, _) = sc.as_chunks::<2>();
    for (k, [x0, x1]) in sp.iter().enumerate() {
        // SAFETY: the caller's contract: 32 aligned writable bytes at `dst + 32 k`.
        unsafe { _mm256_stream_si256(dst.add(32 * k).cast(), pack64(x0, x1)) };
    }
    _mm_sfence();
}

pub(crate) fn gf2p4_unpack(_t: Avx2, src: &[u8], out: &mut [u8], table: Option<&[u8; 16]>) {
    // SAFETY: the token proves AVX2.
    unsafe {
        match table {
            None => gf2p4_unpack_impl::<false>(src, out, &[0; 16]),
            Some(t) => gf2p4_unpack_impl::<true>(src, out, t),
        }
    }
}

/// The high and the low nibbles of 32 packed bytes, each as a byte, in the lane order that
/// [`gf2p4_unpack_impl`] interleaves them in: `vpermq` puts input bytes 0-7, 16-23 in the low
/// 128-bit lane and 8-15, 24-31 in the high one.
#[inline]
#[target_feature(enable = "avx2")]
fn nibbles_in_order(v: __m256i) -> (__m256i, __m256i) {
    let nibble = _mm256_set1_epi8(0x0f);
    let v = _mm256_permute4x64_epi64::<0b11_01_10_00>(v);
    // The 16-bit shift moves bits across bytes; the mask keeps each byte's own high nibble.
    let hi = _mm256_and_si256(_mm256_srli_epi16::<4>(v), nibble);
    (hi, _mm256_and_si256(v, nibble))
}

/// 32 bytes into 64 elements: with the nibbles in [`nibbles_in_order`]'s lanes, `vpunpcklbw` /
/// `vpunpckhbw` of the high and low nibbles give output bytes 0-31 and 32-63 in order; with
/// `MAP`, each nibble `v` is written as `table[v]` (one `vpshufb` per 32 nibbles).
#[target_feature(enable = "avx2")]
fn gf2p4_unpack_impl<const MAP: bool>(src: &[u8], out: &mut [u8], table: &[u8; 16]) {
    let n = src.len().min(out.len() / 2);
    let (sc, st) = src[..n].as_chunks::<32>();
    let done = 32 * sc.len();
    let (oc, _) = out[..2 * done].as_chunks_mut::<32>();
    let (op, _) = oc.as_chunks_mut::<2>();
    let t = _mm256_broadcastsi128_si256(load16(table));
    for (i, ([o0, o1], s)) in op.iter_mut().zip(sc).enumerate() {
        if i % 2 == 0 {
            prefetch_ahead(s);
        }
        let (mut hi, mut lo) = nibbles_in_order(load(s));
        if MAP {
            (hi, lo) = (_mm256_shuffle_epi8(t, hi), _mm256_shuffle_epi8(t, lo));
        }
        store(o0, _mm256_unpacklo_epi8(hi, lo));
        store(o1, _mm256_unpackhi_epi8(hi, lo));
    }
    gf2p4::portable::unpack(st, &mut out[2 * done..2 * n], MAP.then_some(table))
}

pub(crate) fn gf2p4_unpack_sums<const O: usize>(
    _t: Avx2,
    srcs: &[&[u8]],
    tables: &[[[u8; 16]; O]],
    outs: [&mut [u8]; O],
) {
    // SAFETY (every arm): the token proves AVX2.
    unsafe {
        match srcs.len().min(tables.len()) {
            0 => gf2p4::portable::unpack_sums(&[], tables, outs),
            1 => gf2p4_unpack_sums_impl::<1, O>(srcs, tables, outs),
            2 => gf2p4_unpack_sums_impl::<2, O>(srcs, tables, outs),
            3 => gf2p4_unpack_sums_impl::<3, O>(srcs, tables, outs),
            4 => gf2p4_unpack_sums_impl::<4, O>(srcs, tables, outs),
            5 => gf2p4_unpack_sums_impl::<5, O>(srcs, tables, outs),
            _ => gf2p4_unpack_sums_impl::<6, O>(srcs, tables, outs),
        }
    }
}

/// [`gf2p4_unpack_impl`] of the first `N` packed runs into `O` outputs at once, each nibble
/// through its run's table for that output and the images added: `outs[o][2k] = Σ_s
/// tables[s][o][srcs[s][k] >> 4]` and `outs[o][2k + 1]` the same of the low nibbles. Each run
/// is read once and each output written once, where a pass per pair of runs into buffers read
/// the output back once per further pair, and a second output read the runs again. `N` and
/// `O` are constants, so that the tables stay in registers and the loops unroll. (In a loop
/// over 4,096 entries in the cache, five runs into two outputs, mal-gf4-circuit-opt's `z`:
/// 385-500 ns per call, against 470-750 ns with the count of runs a variable and 880-1,190 ns
/// for three passes and two sums per output; minimum and median of fifteen rounds.)
#[target_feature(enable = "avx2")]
fn gf2p4_unpack_sums_impl<const N: usize, const O: usize>(
    srcs: &[&[u8]],
    tables: &[[[u8; 16]; O]],
    outs: [&mut [u8]; O],
) {
    let srcs: [&[u8]; N] = core::array::from_fn(|s| srcs.get(s).copied().unwrap_or(&[]));
    let mut n = outs.iter().map(|o| o.len() / 2).min().unwrap_or(0);
    for s in srcs {
        n = n.min(s.len());
    }
    let chunks = n / 32;
    let done = 32 * chunks;
    let ins: [&[[u8; 32]]; N] = core::array::from_fn(|s| srcs[s][..done].as_chunks::<32>().0);
    let zero = _mm256_setzero_si256();
    let t: [[__m256i; O]; N] = core::array::from_fn(|s| {
        core::array::from_fn(|o| {
            tables
                .get(s)
                .map_or(zero, |t| _mm256_broadcastsi128_si256(load16(&t[o])))
        })
    });
    // Each output's whole 64-byte pieces, and the rest.
    let mut rest: [&mut [u8]; O] = core::array::from_fn(|_| &mut [][..]);
    let mut heads: [&mut [[[u8; 32]; 2]]; O] = core::array::from_fn(|_| &mut [][..]);
    for ((o, r), h) in outs.into_iter().zip(rest.iter_mut()).zip(heads.iter_mut()) {
        let (head, tail) = o[..2 * n].split_at_mut(2 * done);
        *h = head.as_chunks_mut::<32>().0.as_chunks_mut::<2>().0;
        *r = tail;
    }
    for c in 0..chunks {
        let (mut hi, mut lo) = ([zero; O], [zero; O]);
        for s in 0..N {
            let x = &ins[s][c];
            if c % 2 == 0 {
                prefetch_ahead(x);
            }
            let (h, l) = nibbles_in_order(load(x));
            for o in 0..O {
                hi[o] = _mm256_xor_si256(hi[o], _mm256_shuffle_epi8(t[s][o], h));
                lo[o] = _mm256_xor_si256(lo[o], _mm256_shuffle_epi8(t[s][o], l));
            }
        }
        for o in 0..O {
            let [o0, o1] = &mut heads[o][c];
            store(o0, _mm256_unpacklo_epi8(hi[o], lo[o]));
            store(o1, _mm256_unpackhi_epi8(hi[o], lo[o]));
        }
    }
    let tails: [&[u8]; N] = core::array::from_fn(|s| &srcs[s][done..n]);
    gf2p4::portable::unpack_sums(&tails, &tables[..N.min(tables.len())], rest)
}

// ---- one-hot lookups of a 4-bit table -------------------------------------------------------

pub(crate) fn onehot_lookup16(
    _t: Avx2,
    masks: &[[u16; 4]; 16],
    e: &[u16],
    c: &[u8],
    out: &mut [u8],
) {
    // SAFETY: the token proves AVX2.
    unsafe { onehot_lookup16_impl(masks, e, c, out) }
}

/// 32 lookups at a time, in byte lanes. The low and the high byte of each `e` are separated
/// (`vpackuswb`, with `vpermq` restoring the order), and for each output bit `b`
/// `parity(e & M[c][b]) = parity((e_lo & M_lo[c]) ^ (e_hi & M_hi[c]))`: the mask bytes come
/// from 16-entry `vpshufb` tables indexed by `c`, the byte is folded to a nibble, and a last
/// `vpshufb` gives the nibble's parity already shifted to bit `b`.
#[target_feature(enable = "avx2")]
fn onehot_lookup16_impl(masks: &[[u16; 4]; 16], e: &[u16], c: &[u8], out: &mut [u8]) {
    let n = out.len().min(e.len()).min(c.len());
    let (oc, ot) = out[..n].as_chunks_mut::<32>();
    let done = 32 * oc.len();
    let (cc, _) = c[..done].as_chunks::<32>();
    let (ec, _) = e[..done].as_chunks::<16>();
    let (ep, _) = ec.as_chunks::<2>();
    let table = |f: &dyn Fn(usize) -> u8| -> __m256i {
        let t: [u8; 16] = core::array::from_fn(f);
        _mm256_broadcastsi128_si256(load16(&t))
    };
    let lo: [__m256i; 4] = core::array::from_fn(|b| table(&|c| masks[c][b] as u8));
    let hi: [__m256i; 4] = core::array::from_fn(|b| table(&|c| (masks[c][b] >> 8) as u8));
    let parity: [__m256i; 4] =
        core::array::from_fn(|b| table(&|x| ((x.count_ones() & 1) as u8) << b));
    let nibble = _mm256_set1_epi8(0x0f);
    let low_byte = _mm256_set1_epi16(0x00ff);
    for ((o, c), [e0, e1]) in oc.iter_mut().zip(cc).zip(ep) {
        let c = _mm256_and_si256(load(c), nibble);
        // SAFETY: 16 `u16` are 32 bytes; unaligned loads.
        let (v0, v1) = unsafe {
            (
                _mm256_loadu_si256(e0.as_ptr().cast()),
                _mm256_loadu_si256(e1.as_ptr().cast()),
            )
        };
        let e_lo = _mm256_permute4x64_epi64::<0b11_01_10_00>(_mm256_packus_epi16(
            _mm256_and_si256(v0, low_byte),
            _mm256_and_si256(v1, low_byte),
        ));
        let e_hi = _mm256_permute4x64_epi64::<0b11_01_10_00>(_mm256_packus_epi16(
            _mm256_srli_epi16::<8>(v0),
            _mm256_srli_epi16::<8>(v1),
        ));
        let mut r = _mm256_setzero_si256();
        for b in 0..4 {
            let x = _mm256_xor_si256(
                _mm256_and_si256(e_lo, _mm256_shuffle_epi8(lo[b], c)),
                _mm256_and_si256(e_hi, _mm256_shuffle_epi8(hi[b], c)),
            );
            // The 16-bit shift moves bits across bytes; the mask keeps each byte's own.
            let x = _mm256_and_si256(_mm256_xor_si256(x, _mm256_srli_epi16::<4>(x)), nibble);
            r = _mm256_xor_si256(r, _mm256_shuffle_epi8(parity[b], x));
        }
        store(o, r);
    }
    crate::onehot::portable(masks, &e[done..n], &c[done..n], ot);
}

// ---- linear maps ---------------------------------------------------------------------------

/// The map's nibble tables, broadcast to both 128-bit lanes.
#[inline]
#[target_feature(enable = "avx2")]
fn tables(map: &LinearMap8) -> (__m256i, __m256i) {
    let (lo, hi) = map.nibble_tables();
    (
        _mm256_broadcastsi128_si256(load16(lo)),
        _mm256_broadcastsi128_si256(load16(hi)),
    )
}

#[inline]
#[target_feature(enable = "avx2")]
fn apply32(t: (__m256i, __m256i), x: __m256i) -> __m256i {
    let nibble = _mm256_set1_epi8(0x0f);
    let lo = _mm256_and_si256(x, nibble);
    // The 16-bit shift moves bits across bytes; the mask keeps each byte's own high nibble.
    let hi = _mm256_and_si256(_mm256_srli_epi16::<4>(x), nibble);
    _mm256_xor_si256(_mm256_shuffle_epi8(t.0, lo), _mm256_shuffle_epi8(t.1, hi))
}

pub(crate) fn linear_apply(_t: Avx2, map: &LinearMap8, src: &[u8], dst: &mut [u8]) {
    // SAFETY: the token proves AVX2.
    unsafe { linear_apply_impl(map, src, dst) }
}

#[target_feature(enable = "avx2")]
fn linear_apply_impl(map: &LinearMap8, src: &[u8], dst: &mut [u8]) {
    let n = src.len().min(dst.len());
    let t = tables(map);
    let (sc, st) = src[..n].as_chunks::<32>();
    let (dc, dt) = dst[..n].as_chunks_mut::<32>();
    for (d, s) in dc.iter_mut().zip(sc) {
        prefetch_ahead(s);
        store(d, apply32(t, load(s)));
    }
    if !st.is_empty() {
        let mut pad = [0u8; 32];
        pad[..st.len()].copy_from_slice(st);
        let v = apply32(t, load(&pad));
        store(&mut pad, v);
        dt.copy_from_slice(&pad[..st.len()]);
    }
}

pub(crate) fn linear_apply_in_place(_t: Avx2, map: &LinearMap8, buf: &mut [u8]) {
    // SAFETY: the token proves AVX2.
    unsafe { linear_apply_in_place_impl(map, buf) }
}

#[target_feature(enable = "avx2")]
fn linear_apply_in_place_impl(map: &LinearMap8, buf: &mut [u8]) {
    let t = tables(map);
    let (chunks, tail) = buf.as_chunks_mut::<32>();
    for c in chunks.iter_mut() {
        let v = apply32(t, load(c));
        store(c, v);
    }
    if !tail.is_empty() {
        let mut pad = [0u8; 32];
        pad[..tail.len()].copy_from_slice(tail);
        let v = apply32(t, load(&pad));
        store(&mut pad, v);
        let k = tail.len();
        tail.copy_from_slice(&pad[..k]);
    }
}

pub(crate) fn linear_apply_sum<const N: usize>(
    _t: Avx2,
    maps: [&LinearMap8; N],
    src: [&[u8]; N],
    dst: &mut [u8],
) {
    // SAFETY: the token proves AVX2.
    unsafe { linear_apply_sums_impl(&[maps.map(|m| *m)], src, [dst]) }
}

pub(crate) fn linear_apply_sums<const N: usize, const E: usize>(
    _t: Avx2,
    maps: &[[LinearMap8; N]; E],
    src: [&[u8]; N],
    dst: [&mut [u8]; E],
) {
    // SAFETY: the token proves AVX2.
    unsafe { linear_apply_sums_impl(maps, src, dst) }
}

/// `dst[e][k] = Σ_i maps[e][i](src_i[k])` for every `e` on the common prefix, 32 bytes at a
/// time (the last partial chunk through zero-padded copies): each source's nibbles split once
/// for all `E` sums, held in registers.
/// (`subfield_shift_impl` walks its columns the same way; one driver for both, taking the
/// column's work as a closure, made this kernel about a fifth slower in the criterion bench
/// `extra_nodes8`, so each keeps its loop.)
#[target_feature(enable = "avx2")]
fn linear_apply_sums_impl<const N: usize, const E: usize>(
    maps: &[[LinearMap8; N]; E],
    src: [&[u8]; N],
    mut dst: [&mut [u8]; E],
) {
    let n = src.iter().fold(usize::MAX, |n, s| n.min(s.len()));
    let n = dst.iter().fold(n, |n, d| n.min(d.len()));
    let whole = n / 32 * 32;
    let mut x = [_mm256_setzero_si256(); N];
    for c in (0..whole).step_by(32) {
        for (x, s) in x.iter_mut().zip(src) {
            *x = load_at(s, c);
        }
        for (d, a) in dst.iter_mut().zip(map_sums(maps, &x)) {
            if let Some(d) = d.get_mut(c..c + 32).and_then(|d| d.first_chunk_mut::<32>()) {
                store(d, a);
            }
        }
    }
    if whole < n {
        let w = n - whole;
        let mut pad = [0u8; 32];
        for (x, s) in x.iter_mut().zip(src) {
            pad[..w].copy_from_slice(&s[whole..n]);
            *x = load(&pad);
        }
        for (d, a) in dst.iter_mut().zip(map_sums(maps, &x)) {
            store(&mut pad, a);
            d[whole..n].copy_from_slice(&pad[..w]);
        }
    }
}

/// `Σ_i maps[e][i](x_i)` for every `e`, on 32 bytes per source.
#[inline]
#[target_feature(enable = "avx2")]
fn map_sums<const N: usize, const E: usize>(
    maps: &[[LinearMap8; N]; E],
    x: &[__m256i; N],
) -> [__m256i; E] {
    let mut acc = [_mm256_setzero_si256(); E];
    for (i, x) in x.iter().enumerate() {
        let x = nibbles(*x);
        for (a, m) in acc.iter_mut().zip(maps) {
            let t = tables(&m[i]);
            let v = _mm256_xor_si256(_mm256_shuffle_epi8(t.0, x.0), _mm256_shuffle_epi8(t.1, x.1));
            *a = _mm256_xor_si256(*a, v);
        }
    }
    acc
}

pub(crate) fn linear_apply_pair_words(
    _t: Avx2,
    maps: [&LinearMap8; 2],
    src: &[u16],
    dst: &mut [u8],
) {
    // SAFETY: the token proves AVX2.
    unsafe { linear_apply_pair_words_impl(maps, src, dst) }
}

/// `dst[k] = f(lo(src[k])) ^ g(hi(src[k]))` on the common prefix, 32 words at a time (the
/// last partial chunk through a zero-padded copy): the low and high bytes packed with
/// `vpackuswb` (lanes interleaved, put in order by one `vpermq` of the result).
#[target_feature(enable = "avx2")]
fn linear_apply_pair_words_impl([f, g]: [&LinearMap8; 2], src: &[u16], dst: &mut [u8]) {
    let n = src.len().min(dst.len());
    let (tf, tg) = (tables(f), tables(g));
    let low = _mm256_set1_epi16(0x00ff);
    let pair = |w: &[u16; 32]| -> __m256i {
        let (w0, w1) = (load_u16(w, 0), load_u16(w, 16));
        let lo = _mm256_packus_epi16(_mm256_and_si256(w0, low), _mm256_and_si256(w1, low));
        let hi = _mm256_packus_epi16(_mm256_srli_epi16::<8>(w0), _mm256_srli_epi16::<8>(w1));
        let v = _mm256_xor_si256(apply32(tf, lo), apply32(tg, hi));
        _mm256_permute4x64_epi64::<0b11_01_10_00>(v)
    };
    let (sc, st) = src[..n].as_chunks::<32>();
    let (dc, dt) = dst[..n].as_chunks_mut::<32>();
    for (d, w) in dc.iter_mut().zip(sc) {
        prefetch_ahead(w);
        store(d, pair(w));
    }
    if !st.is_empty() {
        let mut pad = [0u16; 32];
        pad[..st.len()].copy_from_slice(st);
        let mut out = [0u8; 32];
        store(&mut out, pair(&pad));
        dt.copy_from_slice(&out[..st.len()]);
    }
}

/// Words `at .. at + 16` of `w`.
#[inline]
#[target_feature(enable = "avx2")]
fn load_u16(w: &[u16; 32], at: usize) -> __m256i {
    let h = if at < 16 { &w[..16] } else { &w[16..] };
    // SAFETY: `h` is 16 readable words (32 bytes); `loadu` has no alignment requirement.
    unsafe { _mm256_loadu_si256(h.as_ptr().cast()) }
}

// ---- the coset shift -----------------------------------------------------------------------

pub(crate) fn coset_shift(
    _t: Avx2,
    t: &crate::subspace::CosetShift,
    src: [&[u8]; crate::subspace::POINTS],
    dst: &mut [u8],
    stride: usize,
    n: usize,
) -> usize {
    // SAFETY: the token proves AVX2.
    unsafe { coset_shift_impl(t, src, dst, stride, n) }
}

/// [`crate::subspace::CosetShift`] on the first `n` bytes (clamped as the caller does), 32
/// columns at a time: each half's 16 values go through levels 0-3 in registers, level 4 pairs
/// the halves value by value; a last partial column goes through zero-padded copies. Every
/// product by a constant is two `vpshufb` in its map's nibble tables. Returns the bytes done
/// (all of them).
#[target_feature(enable = "avx2")]
fn coset_shift_impl(
    t: &crate::subspace::CosetShift,
    src: [&[u8]; crate::subspace::POINTS],
    dst: &mut [u8],
    stride: usize,
    n: usize,
) -> usize {
    use crate::subspace::POINTS;
    let n = src.iter().fold(n.min(stride), |n, s| n.min(s.len()));
    let n = n.min(dst.len().saturating_sub((POINTS - 1) * stride));
    let whole = n / 32 * 32;
    let (mut lo, mut hi) = ([_mm256_setzero_si256(); 16], [_mm256_setzero_si256(); 16]);
    for c in (0..whole).step_by(32) {
        for (v, s) in lo.iter_mut().chain(hi.iter_mut()).zip(src) {
            *v = load_at(s, c);
        }
        coset_column(t, &mut lo, &mut hi);
        for (m, x) in lo.iter().chain(hi.iter()).enumerate() {
            let at = m * stride + c;
            if let Some(d) = dst
                .get_mut(at..at + 32)
                .and_then(|d| d.first_chunk_mut::<32>())
            {
                store(d, *x);
            }
        }
    }
    if whole < n {
        let w = n - whole;
        let mut pad = [0u8; 32];
        for (v, s) in lo.iter_mut().chain(hi.iter_mut()).zip(src) {
            pad[..w].copy_from_slice(&s[whole..n]);
            *v = load(&pad);
        }
        coset_column(t, &mut lo, &mut hi);
        for (m, x) in lo.iter().chain(hi.iter()).enumerate() {
            store(&mut pad, *x);
            let at = m * stride + whole;
            dst[at..at + w].copy_from_slice(&pad[..w]);
        }
    }
    n
}

pub(crate) fn subfield_shift(
    _t: Avx2,
    t: &crate::subspace::SubfieldShift,
    src: [&[u8]; crate::subspace::SUB_POINTS],
    dst: [&mut [u8]; crate::subspace::SUB_EXTRA],
) {
    // SAFETY: the token proves AVX2.
    unsafe { subfield_shift_impl(t, src, dst) }
}

/// Nibble tables of the maps of one direction of [`crate::subspace::SubfieldShift`], per
/// level and pair.
type ShiftTables =
    [[(__m256i, __m256i); crate::subspace::SUB_POINTS / 2]; crate::subspace::SUB_DIM];

/// [`crate::subspace::SubfieldShift`] on the common prefix, 32 bytes per point at a time with
/// the eight values in registers (11 products by constants, two `vpshufb` each); a last
/// partial column goes through zero-padded copies.
#[target_feature(enable = "avx2")]
fn subfield_shift_impl(
    t: &crate::subspace::SubfieldShift,
    src: [&[u8]; crate::subspace::SUB_POINTS],
    mut dst: [&mut [u8]; crate::subspace::SUB_EXTRA],
) {
    let n = src.iter().fold(usize::MAX, |n, s| n.min(s.len()));
    let n = dst.iter().fold(n, |n, d| n.min(d.len()));
    let zero = _mm256_setzero_si256();
    let (mut down, mut up): (ShiftTables, ShiftTables) =
        ([[(zero, zero); 4]; 3], [[(zero, zero); 4]; 3]);
    for (d, m) in down.iter_mut().flatten().zip(t.down.iter().flatten()) {
        *d = tables(m);
    }
    for (d, m) in up.iter_mut().flatten().zip(t.up.iter().flatten()) {
        *d = tables(m);
    }
    let whole = n / 32 * 32;
    let mut v = [_mm256_setzero_si256(); 8];
    for c in (0..whole).step_by(32) {
        // A loop rather than a closure, which would not inherit the target feature.
        for (v, s) in v.iter_mut().zip(src) {
            *v = load_at(s, c);
        }
        shift8_column(&down, &up, &mut v);
        for (d, x) in dst.iter_mut().zip(v) {
            if let Some(d) = d.get_mut(c..c + 32).and_then(|d| d.first_chunk_mut::<32>()) {
                store(d, x);
            }
        }
    }
    if whole < n {
        let w = n - whole;
        let mut pad = [0u8; 32];
        for (v, s) in v.iter_mut().zip(src) {
            pad[..w].copy_from_slice(&s[whole..n]);
            *v = load(&pad);
        }
        shift8_column(&down, &up, &mut v);
        for (d, x) in dst.iter_mut().zip(v) {
            store(&mut pad, x);
            d[whole..n].copy_from_slice(&pad[..w]);
        }
    }
}

/// The transform of [`crate::subspace::SubfieldShift`] on one column, in place (as its
/// `point`), written out pair by pair so that the eight values stay in registers: down levels
/// 0-2 (pair 0 of each level has a zero constant and only adds), then up levels 2-0. Position
/// 7 (the coset's last point, no extra node) is left unfinished.
#[inline]
#[target_feature(enable = "avx2")]
fn shift8_column(down: &ShiftTables, up: &ShiftTables, v: &mut [__m256i; 8]) {
    const _: () = assert!(crate::subspace::SUB_DIM == 3);
    let [mut v0, mut v1, mut v2, mut v3, mut v4, mut v5, mut v6, mut v7] = *v;
    // Down, level 0: pairs (0, 1), (2, 3), (4, 5), (6, 7).
    shift8_down(&mut v0, &mut v1, None);
    shift8_down(&mut v2, &mut v3, Some(down[0][1]));
    shift8_down(&mut v4, &mut v5, Some(down[0][2]));
    shift8_down(&mut v6, &mut v7, Some(down[0][3]));
    // Level 1: pairs (0, 2), (1, 3), (4, 6), (5, 7).
    shift8_down(&mut v0, &mut v2, None);
    shift8_down(&mut v1, &mut v3, None);
    shift8_down(&mut v4, &mut v6, Some(down[1][1]));
    shift8_down(&mut v5, &mut v7, Some(down[1][1]));
    // Level 2: pairs (p, p + 4).
    shift8_down(&mut v0, &mut v4, None);
    shift8_down(&mut v1, &mut v5, None);
    shift8_down(&mut v2, &mut v6, None);
    shift8_down(&mut v3, &mut v7, None);
    // Up, level 2.
    shift8_up(&mut v0, &mut v4, up[2][0]);
    shift8_up(&mut v1, &mut v5, up[2][0]);
    shift8_up(&mut v2, &mut v6, up[2][0]);
    shift8_up(&mut v3, &mut v7, up[2][0]);
    // Level 1.
    shift8_up(&mut v0, &mut v2, up[1][0]);
    shift8_up(&mut v1, &mut v3, up[1][0]);
    shift8_up(&mut v4, &mut v6, up[1][1]);
    shift8_up(&mut v5, &mut v7, up[1][1]);
    // Level 0 (position 7 is not needed: its last addition is left out).
    shift8_up(&mut v0, &mut v1, up[0][0]);
    shift8_up(&mut v2, &mut v3, up[0][1]);
    shift8_up(&mut v4, &mut v5, up[0][2]);
    v6 = _mm256_xor_si256(v6, apply32(up[0][3], v7));
    *v = [v0, v1, v2, v3, v4, v5, v6, v7];
}

/// A down step on the pair `(a, b)`: `b += a`, then `a += c b` (`None`: `c = 0`).
#[inline]
#[target_feature(enable = "avx2")]
fn shift8_down(a: &mut __m256i, b: &mut __m256i, c: Option<(__m256i, __m256i)>) {
    *b = _mm256_xor_si256(*b, *a);
    if let Some(c) = c {
        *a = _mm256_xor_si256(*a, apply32(c, *b));
    }
}

/// An up step on the pair `(a, b)`: `a += c b`, then `b += a`.
#[inline]
#[target_feature(enable = "avx2")]
fn shift8_up(a: &mut __m256i, b: &mut __m256i, c: (__m256i, __m256i)) {
    *a = _mm256_xor_si256(*a, apply32(c, *b));
    *b = _mm256_xor_si256(*b, *a);
}

/// Bytes `c .. c + 32` of `s` (zero if `s` is shorter).
#[inline]
#[target_feature(enable = "avx2")]
fn load_at(s: &[u8], c: usize) -> __m256i {
    match s.get(c..c + 32).and_then(|s| s.first_chunk::<32>()) {
        Some(s) => load(s),
        None => _mm256_setzero_si256(),
    }
}

/// The transform of one column of 32 bytes per point, in place: points `0 .. 16` in `lo`,
/// `16 .. 32` in `hi`.
#[inline]
#[target_feature(enable = "avx2")]
fn coset_column(t: &crate::subspace::CosetShift, lo: &mut [__m256i; 16], hi: &mut [__m256i; 16]) {
    use crate::subspace::DIM;
    const _: () = assert!(DIM == 5);
    let (down, up) = (t.down_maps(), t.up_maps());
    coset_down_half::<0, 0>(lo, &down[0], &t.down[0]);
    coset_down_half::<1, 0>(lo, &down[1], &t.down[1]);
    coset_down_half::<2, 0>(lo, &down[2], &t.down[2]);
    coset_down_half::<3, 0>(lo, &down[3], &t.down[3]);
    coset_down_half::<0, 16>(hi, &down[0], &t.down[0]);
    coset_down_half::<1, 16>(hi, &down[1], &t.down[1]);
    coset_down_half::<2, 16>(hi, &down[2], &t.down[2]);
    coset_down_half::<3, 16>(hi, &down[3], &t.down[3]);
    // Level 4, down then up: pair `p` with `p + 16`, one constant each.
    let d4 = (t.down[DIM - 1][0] != 0).then(|| tables(&down[DIM - 1][0]));
    let u4 = tables(&up[DIM - 1][0]);
    for (a, b) in lo.iter_mut().zip(hi.iter_mut()) {
        *b = _mm256_xor_si256(*b, *a);
        if let Some(d4) = d4 {
            *a = _mm256_xor_si256(*a, apply32(d4, *b));
        }
        *a = _mm256_xor_si256(*a, apply32(u4, *b));
        *b = _mm256_xor_si256(*b, *a);
    }
    coset_up_half::<3, 16>(hi, &up[3]);
    coset_up_half::<2, 16>(hi, &up[2]);
    coset_up_half::<1, 16>(hi, &up[1]);
    coset_up_half::<0, 16>(hi, &up[0]);
    coset_up_half::<3, 0>(lo, &up[3]);
    coset_up_half::<2, 0>(lo, &up[2]);
    coset_up_half::<1, 0>(lo, &up[1]);
    coset_up_half::<0, 0>(lo, &up[0]);
}

/// The lower position of pair `q` of level `L`: `q` with a zero inserted at bit `L`.
#[inline]
const fn coset_pair<const L: usize>(q: usize) -> usize {
    ((q >> L) << (L + 1)) | (q & ((1 << L) - 1))
}

/// The down step of level `L < 4` on the 16 values of positions `B ..` (a half): position `p`
/// (bit `L` clear) with `p + 2^L`, map `down[p >> (L + 1)]` (skipped where the map's `GFNI`
/// matrix, `zero[..]`, is zero).
#[inline]
#[target_feature(enable = "avx2")]
fn coset_down_half<const L: usize, const B: usize>(
    v: &mut [__m256i; 16],
    down: &[LinearMap8],
    zero: &[u64],
) {
    let h = 1 << L;
    for i in (0..8).map(coset_pair::<L>) {
        v[i + h] = _mm256_xor_si256(v[i + h], v[i]);
        let q = (B + i) >> (L + 1);
        if zero[q] != 0 {
            v[i] = _mm256_xor_si256(v[i], apply32(tables(&down[q]), v[i + h]));
        }
    }
}

/// The up step of level `L < 4` (as [`coset_down_half`], maps `up`).
#[inline]
#[target_feature(enable = "avx2")]
fn coset_up_half<const L: usize, const B: usize>(v: &mut [__m256i; 16], up: &[LinearMap8]) {
    let h = 1 << L;
    for i in (0..8).map(coset_pair::<L>) {
        v[i] = _mm256_xor_si256(v[i], apply32(tables(&up[(B + i) >> (L + 1)]), v[i + h]));
        v[i + h] = _mm256_xor_si256(v[i + h], v[i]);
    }
}

// ---- GF(2^64) ------------------------------------------------------------------------------

/// Reduces four 128-bit products given as their low and high halves.
#[inline]
#[target_feature(enable = "avx2")]
fn reduce4(lo: __m256i, hi: __m256i) -> __m256i {
    let g = _mm256_xor_si256(
        _mm256_xor_si256(hi, _mm256_srli_epi64::<63>(hi)),
        _mm256_xor_si256(_mm256_srli_epi64::<61>(hi), _mm256_srli_epi64::<60>(hi)),
    );
    let gx = _mm256_xor_si256(
        _mm256_xor_si256(g, _mm256_slli_epi64::<1>(g)),
        _mm256_xor_si256(_mm256_slli_epi64::<3>(g), _mm256_slli_epi64::<4>(g)),
    );
    _mm256_xor_si256(lo, gx)
}

/// Four products with PCLMULQDQ on the two 128-bit halves.
#[inline]
#[target_feature(enable = "avx2,pclmulqdq")]
fn mul4_pclmul(a: __m256i, b: __m256i) -> __m256i {
    let (a01, a23) = (_mm256_castsi256_si128(a), _mm256_extracti128_si256::<1>(a));
    let (b01, b23) = (_mm256_castsi256_si128(b), _mm256_extracti128_si256::<1>(b));
    let p0 = _mm_clmulepi64_si128::<0x00>(a01, b01);
    let p1 = _mm_clmulepi64_si128::<0x11>(a01, b01);
    let p2 = _mm_clmulepi64_si128::<0x00>(a23, b23);
    let p3 = _mm_clmulepi64_si128::<0x11>(a23, b23);
    let lo = _mm256_set_m128i(_mm_unpacklo_epi64(p2, p3), _mm_unpacklo_epi64(p0, p1));
    let hi = _mm256_set_m128i(_mm_unpackhi_epi64(p2, p3), _mm_unpackhi_epi64(p0, p1));
    reduce4(lo, hi)
}

/// Four products with VPCLMULQDQ.
#[inline]
#[target_feature(enable = "avx2,pclmulqdq,vpclmulqdq")]
fn mul4_vpclmul(a: __m256i, b: __m256i) -> __m256i {
    // Per 128-bit lane: even = element 0 (resp. 2), odd = element 1 (resp. 3).
    let even = _mm256_clmulepi64_epi128::<0x00>(a, b);
    let odd = _mm256_clmulepi64_epi128::<0x11>(a, b);
    reduce4(
        _mm256_unpacklo_epi64(even, odd),
        _mm256_unpackhi_epi64(even, odd),
    )
}

/// Low and high halves of a 128-bit value in an `__m128i`.
#[inline]
#[target_feature(enable = "avx2")]
fn halves(x: __m128i) -> u128 {
    let lo = _mm_cvtsi128_si64(x) as u64;
    let hi = _mm_cvtsi128_si64(_mm_unpackhi_epi64(x, x)) as u64;
    (u128::from(hi) << 64) | u128::from(lo)
}

pub(crate) fn gf2p64_mul_one(_t: Avx2, a: u64, b: u64) -> u64 {
    // SAFETY: the token proves AVX2 and PCLMULQDQ.
    unsafe { mul_one_impl(a, b) }
}

/// The unreduced 128-bit carry-less product.
#[inline]
#[target_feature(enable = "avx2,pclmulqdq")]
fn clmul_one(a: u64, b: u64) -> u128 {
    halves(_mm_clmulepi64_si128::<0x00>(
        _mm_cvtsi64_si128(a as i64),
        _mm_cvtsi64_si128(b as i64),
    ))
}

#[target_feature(enable = "avx2,pclmulqdq")]
fn mul_one_impl(a: u64, b: u64) -> u64 {
    reduce128(clmul_one(a, b))
}

pub(crate) fn gf2p64_mul_pclmul<const ADD: bool>(_t: Avx2, out: &mut [u64], a: &[u64], b: &[u64]) {
    // SAFETY: the token proves AVX2 and PCLMULQDQ.
    unsafe { gf2p64_mul_pclmul_impl::<ADD>(out, a, b) }
}

#[target_feature(enable = "avx2,pclmulqdq")]
fn gf2p64_mul_pclmul_impl<const ADD: bool>(out: &mut [u64], a: &[u64], b: &[u64]) {
    let n = out.len().min(a.len()).min(b.len());
    let (oc, ot) = out[..n].as_chunks_mut::<4>();
    let (ac, at) = a[..n].as_chunks::<4>();
    let (bc, bt) = b[..n].as_chunks::<4>();
    for ((o, x), y) in oc.iter_mut().zip(ac).zip(bc) {
        let mut r = mul4_pclmul(load_words(x), load_words(y));
        if ADD {
            r = _mm256_xor_si256(r, load_words(o));
        }
        store_words(o, r);
    }
    for ((o, x), y) in ot.iter_mut().zip(at).zip(bt) {
        let r = mul_one_impl(*x, *y);
        *o = if ADD { *o ^ r } else { r };
    }
}

pub(crate) fn gf2p64_mul_vpclmul<const ADD: bool>(
    _t: Vpclmul,
    out: &mut [u64],
    a: &[u64],
    b: &[u64],
) {
    // SAFETY: the token proves AVX2, PCLMULQDQ and VPCLMULQDQ.
    unsafe { gf2p64_mul_vpclmul_impl::<ADD>(out, a, b) }
}

#[target_feature(enable = "avx2,pclmulqdq,vpclmulqdq")]
fn gf2p64_mul_vpclmul_impl<const ADD: bool>(out: &mut [u64], a: &[u64], b: &[u64]) {
    let n = out.len().min(a.len()).min(b.len());
    let (oc, ot) = out[..n].as_chunks_mut::<4>();
    let (ac, at) = a[..n].as_chunks::<4>();
    let (bc, bt) = b[..n].as_chunks::<4>();
    for ((o, x), y) in oc.iter_mut().zip(ac).zip(bc) {
        let mut r = mul4_vpclmul(load_words(x), load_words(y));
        if ADD {
            r = _mm256_xor_si256(r, load_words(o));
        }
        store_words(o, r);
    }
    for ((o, x), y) in ot.iter_mut().zip(at).zip(bt) {
        let r = mul_one_impl(*x, *y);
        *o = if ADD { *o ^ r } else { r };
    }
}

pub(crate) fn gf2p64_inner_pclmul(_t: Avx2, a: &[u64], b: &[u64]) -> u64 {
    // SAFETY: the token proves AVX2 and PCLMULQDQ.
    unsafe { gf2p64_inner_pclmul_impl(a, b) }
}

#[target_feature(enable = "avx2,pclmulqdq")]
fn gf2p64_inner_pclmul_impl(a: &[u64], b: &[u64]) -> u64 {
    let n = a.len().min(b.len());
    let (ac, at) = a[..n].as_chunks::<4>();
    let (bc, bt) = b[..n].as_chunks::<4>();
    let (mut acc0, mut acc1) = (_mm_setzero_si128(), _mm_setzero_si128());
    for (x, y) in ac.iter().zip(bc) {
        let (x, y) = (load_words(x), load_words(y));
        let (x01, x23) = (_mm256_castsi256_si128(x), _mm256_extracti128_si256::<1>(x));
        let (y01, y23) = (_mm256_castsi256_si128(y), _mm256_extracti128_si256::<1>(y));
        acc0 = _mm_xor_si128(acc0, _mm_clmulepi64_si128::<0x00>(x01, y01));
        acc1 = _mm_xor_si128(acc1, _mm_clmulepi64_si128::<0x11>(x01, y01));
        acc0 = _mm_xor_si128(acc0, _mm_clmulepi64_si128::<0x00>(x23, y23));
        acc1 = _mm_xor_si128(acc1, _mm_clmulepi64_si128::<0x11>(x23, y23));
    }
    let mut acc = halves(_mm_xor_si128(acc0, acc1));
    for (x, y) in at.iter().zip(bt) {
        acc ^= clmul_one(*x, *y);
    }
    reduce128(acc)
}

pub(crate) fn gf2p64_inner_vpclmul(_t: Vpclmul, a: &[u64], b: &[u64]) -> u64 {
    // SAFETY: the token proves AVX2, PCLMULQDQ and VPCLMULQDQ.
    unsafe { gf2p64_inner_vpclmul_impl(a, b) }
}

/// Adds the two unreduced products of the lanes of `x`, `y` to `acc`.
#[inline]
#[target_feature(enable = "avx2,pclmulqdq,vpclmulqdq")]
fn accumulate4(acc: __m256i, x: &[u64; 4], y: &[u64; 4]) -> __m256i {
    let (x, y) = (load_words(x), load_words(y));
    let acc = _mm256_xor_si256(acc, _mm256_clmulepi64_epi128::<0x00>(x, y));
    _mm256_xor_si256(acc, _mm256_clmulepi64_epi128::<0x11>(x, y))
}

#[target_feature(enable = "avx2,pclmulqdq,vpclmulqdq")]
fn gf2p64_inner_vpclmul_impl(a: &[u64], b: &[u64]) -> u64 {
    let n = a.len().min(b.len());
    let (ac, at) = a[..n].as_chunks::<4>();
    let (bc, bt) = b[..n].as_chunks::<4>();
    // Two accumulators over pairs of blocks hide the multiplier latency.
    let (ap, ar) = ac.as_chunks::<2>();
    let (bp, br) = bc.as_chunks::<2>();
    let (mut acc0, mut acc1) = (_mm256_setzero_si256(), _mm256_setzero_si256());
    for ([x0, x1], [y0, y1]) in ap.iter().zip(bp) {
        acc0 = accumulate4(acc0, x0, y0);
        acc1 = accumulate4(acc1, x1, y1);
    }
    for (x, y) in ar.iter().zip(br) {
        acc0 = accumulate4(acc0, x, y);
    }
    let acc = _mm256_xor_si256(acc0, acc1);
    let folded = _mm_xor_si128(
        _mm256_castsi256_si128(acc),
        _mm256_extracti128_si256::<1>(acc),
    );
    let mut sum = halves(folded);
    for (x, y) in at.iter().zip(bt) {
        sum ^= clmul_one(*x, *y);
    }
    reduce128(sum)
}

pub(crate) fn gf2p64_local_inner_pclmul(
    _t: Avx2,
    a1: &[u64],
    a2: &[u64],
    b1: &[u64],
    b2: &[u64],
) -> u64 {
    // SAFETY: the token proves AVX2 and PCLMULQDQ.
    unsafe { gf2p64_local_inner_pclmul_impl(a1, a2, b1, b2) }
}

#[target_feature(enable = "avx2,pclmulqdq")]
fn gf2p64_local_inner_pclmul_impl(a1: &[u64], a2: &[u64], b1: &[u64], b2: &[u64]) -> u64 {
    let n = a1.len().min(a2.len()).min(b1.len()).min(b2.len());
    let (x1c, x1t) = a1[..n].as_chunks::<2>();
    let (x2c, x2t) = a2[..n].as_chunks::<2>();
    let (y1c, y1t) = b1[..n].as_chunks::<2>();
    let (y2c, y2t) = b2[..n].as_chunks::<2>();
    let load2 = |x: &[u64; 2]| {
        // SAFETY: `x` is 16 readable bytes; `loadu` has no alignment requirement.
        unsafe { _mm_loadu_si128(x.as_ptr().cast()) }
    };
    let (mut acc0, mut acc1) = (_mm_setzero_si128(), _mm_setzero_si128());
    for ((x1, x2), (y1, y2)) in x1c.iter().zip(x2c).zip(y1c.iter().zip(y2c)) {
        let (x1, x2, y1) = (load2(x1), load2(x2), load2(y1));
        let t = _mm_xor_si128(y1, load2(y2));
        acc0 = _mm_xor_si128(acc0, _mm_clmulepi64_si128::<0x00>(x1, t));
        acc1 = _mm_xor_si128(acc1, _mm_clmulepi64_si128::<0x11>(x1, t));
        acc0 = _mm_xor_si128(acc0, _mm_clmulepi64_si128::<0x00>(x2, y1));
        acc1 = _mm_xor_si128(acc1, _mm_clmulepi64_si128::<0x11>(x2, y1));
    }
    let mut sum = halves(_mm_xor_si128(acc0, acc1));
    for ((x1, x2), (y1, y2)) in x1t.iter().zip(x2t).zip(y1t.iter().zip(y2t)) {
        sum ^= clmul_one(*x1, *y1 ^ *y2) ^ clmul_one(*x2, *y1);
    }
    reduce128(sum)
}

pub(crate) fn gf2p64_local_inner_vpclmul(
    _t: Vpclmul,
    a1: &[u64],
    a2: &[u64],
    b1: &[u64],
    b2: &[u64],
) -> u64 {
    // SAFETY: the token proves AVX2, PCLMULQDQ and VPCLMULQDQ.
    unsafe { gf2p64_local_inner_vpclmul_impl(a1, a2, b1, b2) }
}

/// `Σ a1 (b1 + b2) + a2 b1`: two carry-less products per index instead of three, summed
/// unreduced in two accumulators, reduced once.
#[target_feature(enable = "avx2,pclmulqdq,vpclmulqdq")]
fn gf2p64_local_inner_vpclmul_impl(a1: &[u64], a2: &[u64], b1: &[u64], b2: &[u64]) -> u64 {
    let n = a1.len().min(a2.len()).min(b1.len()).min(b2.len());
    let (x1c, x1t) = a1[..n].as_chunks::<4>();
    let (x2c, x2t) = a2[..n].as_chunks::<4>();
    let (y1c, y1t) = b1[..n].as_chunks::<4>();
    let (y2c, y2t) = b2[..n].as_chunks::<4>();
    let (mut acc0, mut acc1) = (_mm256_setzero_si256(), _mm256_setzero_si256());
    for ((x1, x2), (y1, y2)) in x1c.iter().zip(x2c).zip(y1c.iter().zip(y2c)) {
        let (x1, x2, y1) = (load_words(x1), load_words(x2), load_words(y1));
        let t = _mm256_xor_si256(y1, load_words(y2));
        acc0 = _mm256_xor_si256(acc0, _mm256_clmulepi64_epi128::<0x00>(x1, t));
        acc1 = _mm256_xor_si256(acc1, _mm256_clmulepi64_epi128::<0x11>(x1, t));
        acc0 = _mm256_xor_si256(acc0, _mm256_clmulepi64_epi128::<0x00>(x2, y1));
        acc1 = _mm256_xor_si256(acc1, _mm256_clmulepi64_epi128::<0x11>(x2, y1));
    }
    let acc = _mm256_xor_si256(acc0, acc1);
    let folded = _mm_xor_si128(
        _mm256_castsi256_si128(acc),
        _mm256_extracti128_si256::<1>(acc),
    );
    let mut sum = halves(folded);
    for ((x1, x2), (y1, y2)) in x1t.iter().zip(x2t).zip(y1t.iter().zip(y2t)) {
        sum ^= clmul_one(*x1, *y1 ^ *y2) ^ clmul_one(*x2, *y1);
    }
    reduce128(sum)
}

pub(crate) fn gf2p64_node_inner_pclmul(_t: Avx2, a: [&[u64]; 4], b: [&[u64]; 4]) -> [u64; 2] {
    // SAFETY: the token proves AVX2 and PCLMULQDQ.
    unsafe { node_inner_pclmul_impl(a, b) }
}

/// [`portable::gf2p64_node_inner`] with one PCLMULQDQ per carry-less product.
#[target_feature(enable = "avx2,pclmulqdq")]
fn node_inner_pclmul_impl(a: [&[u64]; 4], b: [&[u64]; 4]) -> [u64; 2] {
    let (n, m) = portable::node_lengths(a, b);
    let [h1, hu] = portable::node_pairs_with(a, b, 0..m, |x, y| clmul_one(x, y));
    let rest = gf2p64_local_inner_pclmul_impl(&a[0][m..n], &a[1][m..n], &a[2][m..n], &a[3][m..n]);
    [
        reduce128(h1),
        reduce128(hu) ^ mul_one_impl(rest, portable::ONE_PLUS_U_SQUARED),
    ]
}

pub(crate) fn gf2p64_node_inner_vpclmul(_t: Vpclmul, a: [&[u64]; 4], b: [&[u64]; 4]) -> [u64; 2] {
    // SAFETY: the token proves AVX2, PCLMULQDQ and VPCLMULQDQ.
    unsafe { node_inner_vpclmul_impl(a, b) }
}

/// `x · u` in four lanes.
#[inline]
#[target_feature(enable = "avx2")]
fn times_u4(x: __m256i) -> __m256i {
    let top = _mm256_cmpgt_epi64(_mm256_setzero_si256(), x);
    _mm256_xor_si256(
        _mm256_slli_epi64::<1>(x),
        _mm256_and_si256(top, _mm256_set1_epi64x(0x1b)),
    )
}

/// Adds the unreduced `lp(x1, x2, y1, y2) = x1 (y1 + y2) + x2 y1` of four lanes to `acc`
/// (lanes 0 and 2 in `acc[0]`, 1 and 3 in `acc[1]`).
#[inline]
#[target_feature(enable = "avx2,pclmulqdq,vpclmulqdq")]
fn add_lp4(acc: &mut [__m256i; 2], [x1, x2, y1, y2]: [__m256i; 4]) {
    let t = _mm256_xor_si256(y1, y2);
    acc[0] = _mm256_xor_si256(acc[0], _mm256_clmulepi64_epi128::<0x00>(x1, t));
    acc[1] = _mm256_xor_si256(acc[1], _mm256_clmulepi64_epi128::<0x11>(x1, t));
    acc[0] = _mm256_xor_si256(acc[0], _mm256_clmulepi64_epi128::<0x00>(x2, y1));
    acc[1] = _mm256_xor_si256(acc[1], _mm256_clmulepi64_epi128::<0x11>(x2, y1));
}

/// The 128-bit XOR of the four unreduced products held in `acc`.
#[inline]
#[target_feature(enable = "avx2")]
fn fold_acc(acc: [__m256i; 2]) -> u128 {
    let x = _mm256_xor_si256(acc[0], acc[1]);
    halves(_mm_xor_si128(
        _mm256_castsi256_si128(x),
        _mm256_extracti128_si256::<1>(x),
    ))
}

/// [`portable::gf2p64_node_inner`] four lanes at a time: the line at `u` is formed in registers
/// (shift and conditional `0x1b`) and never written.
#[target_feature(enable = "avx2,pclmulqdq,vpclmulqdq")]
fn node_inner_vpclmul_impl(a: [&[u64]; 4], b: [&[u64]; 4]) -> [u64; 2] {
    let (n, m) = portable::node_lengths(a, b);
    let whole = m / 4 * 4;
    let z = _mm256_setzero_si256();
    let (mut h1, mut hu) = ([z; 2], [z; 2]);
    for k in (0..whole).step_by(4) {
        let word = |v: &[u64]| {
            // SAFETY: `k + 4 <= whole <= v.len()`; `loadu` has no alignment requirement.
            unsafe { _mm256_loadu_si256(v.as_ptr().add(k).cast()) }
        };
        let bv = b.map(word);
        add_lp4(&mut h1, bv);
        let f: [__m256i; 4] = core::array::from_fn(|j| {
            let av = word(a[j]);
            _mm256_xor_si256(av, times_u4(_mm256_xor_si256(av, bv[j])))
        });
        add_lp4(&mut hu, f);
    }
    let [t1, tu] = portable::node_pairs_with(a, b, whole..m, |x, y| clmul_one(x, y));
    let rest = gf2p64_local_inner_vpclmul_impl(&a[0][m..n], &a[1][m..n], &a[2][m..n], &a[3][m..n]);
    [
        reduce128(fold_acc(h1) ^ t1),
        reduce128(fold_acc(hu) ^ tu) ^ mul_one_impl(rest, portable::ONE_PLUS_U_SQUARED),
    ]
}

pub(crate) fn gf2p64_lerp_pclmul(_t: Avx2, out: &mut [u64], lo: &[u64], hi: &[u64], s: u64) {
    // SAFETY: the token proves AVX2 and PCLMULQDQ.
    unsafe { lerp_pclmul_impl(out, lo, hi, s) }
}

pub(crate) fn gf2p64_lerp_vpclmul(_t: Vpclmul, out: &mut [u64], lo: &[u64], hi: &[u64], s: u64) {
    // SAFETY: the token proves AVX2, PCLMULQDQ and VPCLMULQDQ.
    unsafe { lerp_vpclmul_impl(out, lo, hi, s) }
}

pub(crate) fn gf2p64_lerp_assign_pclmul(_t: Avx2, v: &mut [u64], w: &[u64], s: u64) {
    // SAFETY: the token proves AVX2 and PCLMULQDQ.
    unsafe { lerp_assign_pclmul_impl(v, w, s) }
}

pub(crate) fn gf2p64_lerp_assign_vpclmul(_t: Vpclmul, v: &mut [u64], w: &[u64], s: u64) {
    // SAFETY: the token proves AVX2, PCLMULQDQ and VPCLMULQDQ.
    unsafe { lerp_assign_vpclmul_impl(v, w, s) }
}

/// `out = lo + (lo + hi) s` and `v = v + (v + w) s`, four lanes at a time with the given
/// four-lane product.
macro_rules! lerp_kernels {
    ($lerp:ident, $assign:ident, $feat:literal, $mul4:ident) => {
        #[target_feature(enable = $feat)]
        fn $lerp(out: &mut [u64], lo: &[u64], hi: &[u64], s: u64) {
            let n = out.len().min(lo.len()).min(hi.len());
            let (oc, ot) = out[..n].as_chunks_mut::<4>();
            let (lc, lt) = lo[..n].as_chunks::<4>();
            let (hc, ht) = hi[..n].as_chunks::<4>();
            let sv = _mm256_set1_epi64x(s as i64);
            for ((o, l), h) in oc.iter_mut().zip(lc).zip(hc) {
                let l = load_words(l);
                let d = _mm256_xor_si256(l, load_words(h));
                store_words(o, _mm256_xor_si256(l, $mul4(d, sv)));
            }
            for ((o, l), h) in ot.iter_mut().zip(lt).zip(ht) {
                *o = *l ^ mul_one_impl(*l ^ *h, s);
            }
        }

        #[target_feature(enable = $feat)]
        fn $assign(v: &mut [u64], w: &[u64], s: u64) {
            let n = v.len().min(w.len());
            let (vc, vt) = v[..n].as_chunks_mut::<4>();
            let (wc, wt) = w[..n].as_chunks::<4>();
            let sv = _mm256_set1_epi64x(s as i64);
            for (x, h) in vc.iter_mut().zip(wc) {
                prefetch_ahead(x);
                prefetch_ahead(h);
                let l = load_words(x);
                let d = _mm256_xor_si256(l, load_words(h));
                store_words(x, _mm256_xor_si256(l, $mul4(d, sv)));
            }
            for (x, h) in vt.iter_mut().zip(wt) {
                *x ^= mul_one_impl(*x ^ *h, s);
            }
        }
    };
}

lerp_kernels!(
    lerp_pclmul_impl,
    lerp_assign_pclmul_impl,
    "avx2,pclmulqdq",
    mul4_pclmul
);
lerp_kernels!(
    lerp_vpclmul_impl,
    lerp_assign_vpclmul_impl,
    "avx2,pclmulqdq,vpclmulqdq",
    mul4_vpclmul
);

// ---- byte embeddings -----------------------------------------------------------------------

pub(crate) fn embed_bytes(_t: Avx2, t: &NibbleTables<'_>, src: &[u8], dst: &mut [u64]) {
    // SAFETY: the token proves AVX2.
    unsafe { embed_bytes_impl(t, src, dst) }
}

pub(crate) fn embed_byte_pairs(
    _t: Avx2,
    t: [&NibbleTables<'_>; 2],
    a: &[u8],
    b: &[u8],
    dst: &mut [u64],
) {
    // SAFETY: the token proves AVX2.
    unsafe { embed_byte_pairs_impl(t, a, b, dst) }
}

/// The low and high nibbles of 32 bytes.
#[inline]
#[target_feature(enable = "avx2")]
fn nibbles(x: __m256i) -> (__m256i, __m256i) {
    let nibble = _mm256_set1_epi8(0x0f);
    (
        _mm256_and_si256(x, nibble),
        _mm256_and_si256(_mm256_srli_epi16::<4>(x), nibble),
    )
}

/// Byte plane `p` of the images of 32 bytes given by their nibbles: two `vpshufb` in the
/// byte planes of the nibble tables (broadcast to both 128-bit lanes).
#[inline]
#[target_feature(enable = "avx2")]
fn plane(t: &NibbleTables<'_>, p: usize, n: (__m256i, __m256i)) -> __m256i {
    let lo = _mm256_broadcastsi128_si256(load16(&t.planes[p]));
    let hi = _mm256_broadcastsi128_si256(load16(&t.planes[8 + p]));
    _mm256_xor_si256(_mm256_shuffle_epi8(lo, n.0), _mm256_shuffle_epi8(hi, n.1))
}

/// Transposes the eight byte planes of 32 words (plane `p` holds byte `p` of word `i` at
/// byte `i`): three rounds of unpacking (8-, 16-, 32-bit) within the 128-bit lanes, then a
/// 128-bit permute. Register `m` of the result holds words `4m .. 4m + 4`.
#[inline]
#[target_feature(enable = "avx2")]
fn transpose_planes(p: [__m256i; 8]) -> [__m256i; 8] {
    // Per 128-bit lane (elements 0..16 and 16..32): bytes (0,1), (2,3), ... paired.
    let a0 = _mm256_unpacklo_epi8(p[0], p[1]);
    let a1 = _mm256_unpackhi_epi8(p[0], p[1]);
    let a2 = _mm256_unpacklo_epi8(p[2], p[3]);
    let a3 = _mm256_unpackhi_epi8(p[2], p[3]);
    let a4 = _mm256_unpacklo_epi8(p[4], p[5]);
    let a5 = _mm256_unpackhi_epi8(p[4], p[5]);
    let a6 = _mm256_unpacklo_epi8(p[6], p[7]);
    let a7 = _mm256_unpackhi_epi8(p[6], p[7]);
    // Bytes 0..4 and 4..8 of elements 0-3, 4-7, 8-11, 12-15 (per lane).
    let b0 = _mm256_unpacklo_epi16(a0, a2);
    let b1 = _mm256_unpackhi_epi16(a0, a2);
    let b2 = _mm256_unpacklo_epi16(a1, a3);
    let b3 = _mm256_unpackhi_epi16(a1, a3);
    let b4 = _mm256_unpacklo_epi16(a4, a6);
    let b5 = _mm256_unpackhi_epi16(a4, a6);
    let b6 = _mm256_unpacklo_epi16(a5, a7);
    let b7 = _mm256_unpackhi_epi16(a5, a7);
    // Whole elements: c_m holds elements 2m, 2m+1 (low lane) and 16+2m, 17+2m (high).
    let c = [
        _mm256_unpacklo_epi32(b0, b4),
        _mm256_unpackhi_epi32(b0, b4),
        _mm256_unpacklo_epi32(b1, b5),
        _mm256_unpackhi_epi32(b1, b5),
        _mm256_unpacklo_epi32(b2, b6),
        _mm256_unpackhi_epi32(b2, b6),
        _mm256_unpacklo_epi32(b3, b7),
        _mm256_unpackhi_epi32(b3, b7),
    ];
    // (Loops, not `array::from_fn`: a closure would not inherit the target features.)
    let mut w = [_mm256_setzero_si256(); 8];
    for m in 0..4 {
        let (e, o) = (c[2 * m], c[2 * m + 1]);
        w[m] = _mm256_permute2x128_si256::<0x20>(e, o);
        w[4 + m] = _mm256_permute2x128_si256::<0x31>(e, o);
    }
    w
}

/// The 32 images of `x` (32 bytes) under the map `t`, as [`transpose_planes`] orders them.
#[inline]
#[target_feature(enable = "avx2")]
fn images32(t: &NibbleTables<'_>, x: &[u8; 32]) -> [__m256i; 8] {
    let n = nibbles(load(x));
    let mut p = [_mm256_setzero_si256(); 8];
    for (i, p) in p.iter_mut().enumerate() {
        *p = plane(t, i, n);
    }
    transpose_planes(p)
}

/// The 32 images `f(a_i) + g(b_i)`.
#[inline]
#[target_feature(enable = "avx2")]
fn pair_images32(t: [&NibbleTables<'_>; 2], a: &[u8; 32], b: &[u8; 32]) -> [__m256i; 8] {
    let (x, y) = (nibbles(load(a)), nibbles(load(b)));
    let mut p = [_mm256_setzero_si256(); 8];
    for (i, p) in p.iter_mut().enumerate() {
        *p = _mm256_xor_si256(plane(t[0], i, x), plane(t[1], i, y));
    }
    transpose_planes(p)
}

pub(crate) fn embed_inner(
    _t: Vpclmul,
    t: [&NibbleTables<'_>; 2],
    a: &[u8],
    b: Option<&[u8]>,
    c: &[u64],
) -> u64 {
    // SAFETY: the token proves AVX2, PCLMULQDQ and VPCLMULQDQ.
    unsafe { embed_inner_impl(t, a, b, c) }
}

/// `Σ c_i (f(a_i) [+ g(b_i)])`: the images never leave the registers; products summed
/// unreduced, one reduction.
#[target_feature(enable = "avx2,pclmulqdq,vpclmulqdq")]
fn embed_inner_impl(t: [&NibbleTables<'_>; 2], a: &[u8], b: Option<&[u8]>, c: &[u64]) -> u64 {
    let n = a.len().min(c.len()).min(b.map_or(usize::MAX, <[u8]>::len));
    let (ac, at) = a[..n].as_chunks::<32>();
    let (cc, ct) = c[..n].as_chunks::<32>();
    let bc = b.map(|b| b[..n].as_chunks::<32>().0);
    let (mut acc0, mut acc1) = (_mm256_setzero_si256(), _mm256_setzero_si256());
    for (i, (x, cw)) in ac.iter().zip(cc).enumerate() {
        let w = match bc {
            Some(bc) => pair_images32(t, x, &bc[i]),
            None => images32(t[0], x),
        };
        let (c4, _) = cw.as_chunks::<4>();
        for (w, cv) in w.into_iter().zip(c4) {
            let cv = load_words(cv);
            acc0 = _mm256_xor_si256(acc0, _mm256_clmulepi64_epi128::<0x00>(w, cv));
            acc1 = _mm256_xor_si256(acc1, _mm256_clmulepi64_epi128::<0x11>(w, cv));
        }
    }
    let acc = _mm256_xor_si256(acc0, acc1);
    let mut sum = halves(_mm_xor_si128(
        _mm256_castsi256_si128(acc),
        _mm256_extracti128_si256::<1>(acc),
    ));
    let bt = b.map(|b| &b[n - at.len()..n]);
    for (k, (x, cw)) in at.iter().zip(ct).enumerate() {
        let mut w = t[0].lo[usize::from(x & 0x0f)] ^ t[0].hi[usize::from(x >> 4)];
        if let Some(bt) = bt {
            let y = bt[k];
            w ^= t[1].lo[usize::from(y & 0x0f)] ^ t[1].hi[usize::from(y >> 4)];
        }
        sum ^= clmul_one(w, *cw);
    }
    reduce128(sum)
}

pub(crate) fn embed_mul2(
    _t: Vpclmul,
    t: [&NibbleTables<'_>; 2],
    a: (&[u8], &[u64]),
    b: (&[u8], &[u64]),
    out: &mut [u64],
) {
    // SAFETY: the token proves AVX2, PCLMULQDQ and VPCLMULQDQ.
    unsafe { embed_mul2_impl(t, a, b, out) }
}

/// `out_i = ca_i f(a_i) + cb_i g(b_i)`: two unreduced products per word, one reduction.
#[target_feature(enable = "avx2,pclmulqdq,vpclmulqdq")]
fn embed_mul2_impl(
    t: [&NibbleTables<'_>; 2],
    a: (&[u8], &[u64]),
    b: (&[u8], &[u64]),
    out: &mut [u64],
) {
    let n = out
        .len()
        .min(a.0.len())
        .min(a.1.len())
        .min(b.0.len())
        .min(b.1.len());
    let (xa, xat) = a.0[..n].as_chunks::<32>();
    let (ca, cat) = a.1[..n].as_chunks::<32>();
    let (xb, xbt) = b.0[..n].as_chunks::<32>();
    let (cb, cbt) = b.1[..n].as_chunks::<32>();
    let (oc, ot) = out[..n].as_chunks_mut::<32>();
    for ((o, (x, c)), (y, d)) in oc.iter_mut().zip(xa.iter().zip(ca)).zip(xb.iter().zip(cb)) {
        let (wa, wb) = (images32(t[0], x), images32(t[1], y));
        let (c4, _) = c.as_chunks::<4>();
        let (d4, _) = d.as_chunks::<4>();
        let (o4, _) = o.as_chunks_mut::<4>();
        for m in 0..8 {
            let (cv, dv) = (load_words(&c4[m]), load_words(&d4[m]));
            // Per 128-bit lane: products of the even and of the odd words.
            let even = _mm256_xor_si256(
                _mm256_clmulepi64_epi128::<0x00>(wa[m], cv),
                _mm256_clmulepi64_epi128::<0x00>(wb[m], dv),
            );
            let odd = _mm256_xor_si256(
                _mm256_clmulepi64_epi128::<0x11>(wa[m], cv),
                _mm256_clmulepi64_epi128::<0x11>(wb[m], dv),
            );
            store_words(
                &mut o4[m],
                reduce4(
                    _mm256_unpacklo_epi64(even, odd),
                    _mm256_unpackhi_epi64(even, odd),
                ),
            );
        }
    }
    for ((o, (x, c)), (y, d)) in ot
        .iter_mut()
        .zip(xat.iter().zip(cat))
        .zip(xbt.iter().zip(cbt))
    {
        let wa = t[0].lo[usize::from(x & 0x0f)] ^ t[0].hi[usize::from(x >> 4)];
        let wb = t[1].lo[usize::from(y & 0x0f)] ^ t[1].hi[usize::from(y >> 4)];
        *o = reduce128(clmul_one(wa, *c) ^ clmul_one(wb, *d));
    }
}

/// 32 bytes at a time: byte `p` of every image is a `GF(2)`-linear function of the byte, so
/// `vpshufb` in the byte planes of the two nibble tables gives the eight byte planes of 32
/// images, transposed into 32 words by [`transpose_planes`]. Constant time (no secret-indexed
/// memory access).
#[target_feature(enable = "avx2")]
fn embed_bytes_impl(t: &NibbleTables<'_>, src: &[u8], dst: &mut [u64]) {
    let n = src.len().min(dst.len());
    let (sc, st) = src[..n].as_chunks::<32>();
    let (dc, dt) = dst[..n].as_chunks_mut::<32>();
    for (s, d) in sc.iter().zip(dc) {
        let (w, _) = d.as_chunks_mut::<4>();
        for (o, v) in w.iter_mut().zip(images32(t, s)) {
            store_words(o, v);
        }
    }
    portable::embed_bytes(t.lo, t.hi, st, dt);
}

/// As [`embed_bytes_impl`] for `f(a) + g(b)`: the planes of both images are added before
/// the transpose.
#[target_feature(enable = "avx2")]
fn embed_byte_pairs_impl(t: [&NibbleTables<'_>; 2], a: &[u8], b: &[u8], dst: &mut [u64]) {
    let n = a.len().min(b.len()).min(dst.len());
    let (ac, at) = a[..n].as_chunks::<32>();
    let (bc, bt) = b[..n].as_chunks::<32>();
    let (dc, dt) = dst[..n].as_chunks_mut::<32>();
    for ((x, y), d) in ac.iter().zip(bc).zip(dc) {
        let (w, _) = d.as_chunks_mut::<4>();
        for (o, v) in w.iter_mut().zip(pair_images32(t, x, y)) {
            store_words(o, v);
        }
    }
    portable::embed_byte_pairs(t, at, bt, dt);
}

pub(crate) fn embed_bytes_sum<const N: usize>(
    _t: Avx2,
    t: [&NibbleTables<'_>; N],
    src: [&[u8]; N],
    dst: &mut [u64],
) -> usize {
    // SAFETY: the token proves AVX2.
    unsafe { embed_bytes_sum_impl(t, src, dst) }
}

/// `dst[k] = Σ_i f_i(src_i[k])` over the whole 32-byte chunks of the common prefix: the byte
/// planes of all the maps' images summed in registers, one transpose per chunk; returns how
/// many elements it did (the caller does the tail).
#[target_feature(enable = "avx2")]
fn embed_bytes_sum_impl<const N: usize>(
    t: [&NibbleTables<'_>; N],
    src: [&[u8]; N],
    dst: &mut [u64],
) -> usize {
    plane_sums(src, dst, |planes, i, x| {
        let x = nibbles(x);
        for (p, acc) in planes.iter_mut().enumerate() {
            *acc = _mm256_xor_si256(*acc, plane(t[i], p, x));
        }
    })
}

/// The driver of [`embed_bytes_sum_impl`] and [`embed_subfield_sum_impl`]: for each whole
/// 32-byte chunk of the common prefix, `add(planes, i, x)` adds the byte planes of source `i`'s
/// images of its 32 bytes `x` into `planes`, which are then transposed into the chunk's 32
/// words.
#[inline]
#[target_feature(enable = "avx2")]
fn plane_sums<const N: usize>(
    src: [&[u8]; N],
    dst: &mut [u64],
    mut add: impl FnMut(&mut [__m256i; 8], usize, __m256i),
) -> usize {
    let n = src.iter().fold(dst.len(), |n, s| n.min(s.len())) / 32 * 32;
    for (c, d) in dst[..n].as_chunks_mut::<32>().0.iter_mut().enumerate() {
        let mut planes = [_mm256_setzero_si256(); 8];
        for (i, s) in src.iter().enumerate() {
            if let Some(x) = s
                .get(32 * c..32 * c + 32)
                .and_then(|x| x.first_chunk::<32>())
            {
                add(&mut planes, i, load(x));
            }
        }
        let (w, _) = d.as_chunks_mut::<4>();
        for (o, v) in w.iter_mut().zip(transpose_planes(planes)) {
            store_words(o, v);
        }
    }
    n
}

pub(crate) fn embed_subfield_sum<const N: usize>(
    _t: Avx2,
    t: [&[[u8; 16]; 8]; N],
    src: [&[u8]; N],
    dst: &mut [u64],
) -> usize {
    // SAFETY: the token proves AVX2.
    unsafe { embed_subfield_sum_impl(t, src, dst) }
}

/// `dst[k] = Σ_i f_i(src_i[k])` over the whole 32-byte chunks of the common prefix, for bytes
/// of the subfield of 16 elements: each byte's index `(x ^ x >> 4) & 15`, one `vpshufb` per
/// byte plane of `f_i`'s 16-entry table (where [`embed_bytes_sum_impl`] takes two, one per
/// nibble, and an XOR to join them), then one transpose per 32 elements.
#[target_feature(enable = "avx2")]
fn embed_subfield_sum_impl<const N: usize>(
    t: [&[[u8; 16]; 8]; N],
    src: [&[u8]; N],
    dst: &mut [u64],
) -> usize {
    let nibble = _mm256_set1_epi8(0x0f);
    plane_sums(src, dst, |planes, i, x| {
        // Within each 16-bit lane the shift moves the high byte's low nibble into the low
        // byte's high nibble, which the mask drops.
        let x = _mm256_and_si256(_mm256_xor_si256(x, _mm256_srli_epi16::<4>(x)), nibble);
        for (p, acc) in planes.iter_mut().enumerate() {
            let table = _mm256_broadcastsi128_si256(load16(&t[i][p]));
            *acc = _mm256_xor_si256(*acc, _mm256_shuffle_epi8(table, x));
        }
    })
}

pub(crate) fn bit_plane_sums<const N: usize>(
    _t: Avx2,
    c: &[u64],
    src: [&[u8]; N],
) -> [[u64; 8]; N] {
    // SAFETY: the token proves AVX2.
    unsafe { bit_plane_sums_impl(c, src) }
}

/// For each source `s` and bit `b`: the XOR of the words `c[k]` whose byte `src[s][k]` has bit
/// `b` set, on the common prefix. Four words at a time: the bytes widened to the 64-bit lanes
/// (`vpmovzxbq`), bit `b` shifted to each lane's sign, `vblendvpd` picks the word or zero.
#[target_feature(enable = "avx2")]
fn bit_plane_sums_impl<const N: usize>(c: &[u64], src: [&[u8]; N]) -> [[u64; 8]; N] {
    let n = src.iter().fold(c.len(), |n, s| n.min(s.len()));
    let (cw, ct) = c[..n].as_chunks::<4>();
    let mut out = [[0u64; 8]; N];
    for (o, s) in out.iter_mut().zip(src) {
        let (sb, st) = s[..n].as_chunks::<4>();
        let mut acc = [_mm256_setzero_si256(); 8];
        for (w, x) in cw.iter().zip(sb) {
            let w = _mm256_castsi256_pd(load_words(w));
            let v = _mm256_cvtepu8_epi64(_mm_cvtsi32_si128(i32::from_le_bytes(*x)));
            let pick = |m: __m256i| -> __m256i {
                _mm256_castpd_si256(_mm256_blendv_pd(
                    _mm256_setzero_pd(),
                    w,
                    _mm256_castsi256_pd(m),
                ))
            };
            acc[0] = _mm256_xor_si256(acc[0], pick(_mm256_slli_epi64::<63>(v)));
            acc[1] = _mm256_xor_si256(acc[1], pick(_mm256_slli_epi64::<62>(v)));
            acc[2] = _mm256_xor_si256(acc[2], pick(_mm256_slli_epi64::<61>(v)));
            acc[3] = _mm256_xor_si256(acc[3], pick(_mm256_slli_epi64::<60>(v)));
            acc[4] = _mm256_xor_si256(acc[4], pick(_mm256_slli_epi64::<59>(v)));
            acc[5] = _mm256_xor_si256(acc[5], pick(_mm256_slli_epi64::<58>(v)));
            acc[6] = _mm256_xor_si256(acc[6], pick(_mm256_slli_epi64::<57>(v)));
            acc[7] = _mm256_xor_si256(acc[7], pick(_mm256_slli_epi64::<56>(v)));
        }
        for (o, a) in o.iter_mut().zip(acc) {
            let mut lanes = [0u64; 4];
            store_words(&mut lanes, a);
            *o = lanes.iter().fold(0, |x, y| x ^ y);
        }
        for (w, x) in ct.iter().zip(st) {
            for (b, o) in o.iter_mut().enumerate() {
                *o ^= w & 0u64.wrapping_sub(u64::from((x >> b) & 1));
            }
        }
    }
    out
}

// ---- AES-128 in counter mode ---------------------------------------------------------------

/// The counter block `ctr` (little-endian) as a 128-bit register.
#[inline]
#[target_feature(enable = "sse2")]
fn counter(ctr: u128) -> __m128i {
    _mm_set_epi64x((ctr >> 64) as u64 as i64, ctr as u64 as i64)
}

#[inline]
#[target_feature(enable = "sse2")]
fn store16(x: &mut [u8; 16], v: __m128i) {
    // SAFETY: `x` is 16 writable bytes, uniquely borrowed; `storeu` needs no alignment.
    unsafe { _mm_storeu_si128(x.as_mut_ptr().cast(), v) }
}

/// Keystream blocks into `out` (`XOR = false`) or XORed into it (`XOR = true`).
pub(crate) fn aes128_ctr_aesni<const XOR: bool>(
    _t: AesNi,
    rk: &[[u8; 16]; 11],
    start: u128,
    out: &mut [u8],
) {
    // SAFETY: the token proves AES-NI and SSE2.
    unsafe { aes128_ctr_aesni_impl::<XOR>(rk, start, out) }
}

/// Writes `x` to `o`, or XORs it into `o`.
#[inline]
#[target_feature(enable = "sse2")]
fn put16<const XOR: bool>(o: &mut [u8; 16], x: __m128i) {
    if XOR {
        store16(o, _mm_xor_si128(load16(o), x));
    } else {
        store16(o, x);
    }
}

/// Eight blocks in flight (the AES unit's latency times its throughput), one at a time for
/// the rest. The counter blocks of a step are vector additions to its first block, except in
/// the rare step where the low 64 bits of the counter wrap around.
#[target_feature(enable = "aes,sse2")]
fn aes128_ctr_aesni_impl<const XOR: bool>(rk: &[[u8; 16]; 11], start: u128, out: &mut [u8]) {
    let k: [__m128i; 11] = core::array::from_fn(|i| {
        // SAFETY: `rk[i]` is 16 readable bytes; `loadu` has no alignment requirement.
        unsafe { _mm_loadu_si128(rk[i].as_ptr().cast()) }
    });
    let offsets: [__m128i; 8] = core::array::from_fn(|i| _mm_set_epi64x(0, i as i64));
    let (blocks, _) = out.as_chunks_mut::<16>();
    let (eights, rest) = blocks.as_chunks_mut::<8>();
    let mut ctr = start;
    for c in eights {
        let mut b = [_mm_setzero_si128(); 8];
        if (ctr as u64).checked_add(7).is_some() {
            let first = counter(ctr);
            for (b, o) in b.iter_mut().zip(offsets) {
                *b = _mm_xor_si128(_mm_add_epi64(first, o), k[0]);
            }
        } else {
            for (i, b) in b.iter_mut().enumerate() {
                *b = _mm_xor_si128(counter(ctr.wrapping_add(i as u128)), k[0]);
            }
        }
        for key in &k[1..10] {
            for x in &mut b {
                *x = _mm_aesenc_si128(*x, *key);
            }
        }
        for (o, x) in c.iter_mut().zip(b) {
            put16::<XOR>(o, _mm_aesenclast_si128(x, k[10]));
        }
        ctr = ctr.wrapping_add(8);
    }
    for o in rest {
        let mut x = _mm_xor_si128(counter(ctr), k[0]);
        for key in &k[1..10] {
            x = _mm_aesenc_si128(x, *key);
        }
        put16::<XOR>(o, _mm_aesenclast_si128(x, k[10]));
        ctr = ctr.wrapping_add(1);
    }
}

/// Keystream blocks into `out` (`XOR = false`) or XORed into it (`XOR = true`).
pub(crate) fn aes128_ctr_vaes<const XOR: bool>(
    _t: Vaes,
    rk: &[[u8; 16]; 11],
    start: u128,
    out: &mut [u8],
) {
    // SAFETY: the token proves AES-NI, AVX2 and VAES.
    unsafe { aes128_ctr_vaes_impl::<XOR>(rk, start, out) }
}

/// Sixteen blocks in flight, two per 256-bit register; the rest with AES-NI. The counter
/// blocks of a step are vector additions to the step's first block, except in the rare step
/// where the low 64 bits of the counter wrap around (then they are built one by one).
#[target_feature(enable = "aes,sse2,avx2,vaes")]
fn aes128_ctr_vaes_impl<const XOR: bool>(rk: &[[u8; 16]; 11], start: u128, out: &mut [u8]) {
    let mut k = [_mm256_setzero_si256(); 11];
    for (k, r) in k.iter_mut().zip(rk) {
        *k = _mm256_broadcastsi128_si256(load16(r));
    }
    // Lane offsets of register `i`: blocks `2i` and `2i + 1` of the step.
    let offsets: [__m256i; 8] =
        core::array::from_fn(|i| _mm256_set_epi64x(0, 2 * i as i64 + 1, 0, 2 * i as i64));
    let full = out.len() / 256 * 256;
    let (head, tail) = out.split_at_mut(full);
    let (chunks, _) = head.as_chunks_mut::<256>();
    let mut ctr = start;
    for c in chunks {
        let mut b = [_mm256_setzero_si256(); 8];
        if (ctr as u64).checked_add(15).is_some() {
            let first = _mm256_broadcastsi128_si256(counter(ctr));
            for (b, o) in b.iter_mut().zip(offsets) {
                *b = _mm256_xor_si256(_mm256_add_epi64(first, o), k[0]);
            }
        } else {
            for (i, b) in b.iter_mut().enumerate() {
                let j = ctr.wrapping_add(2 * i as u128);
                let (lo, hi) = (counter(j), counter(j.wrapping_add(1)));
                *b = _mm256_xor_si256(_mm256_set_m128i(hi, lo), k[0]);
            }
        }
        for key in &k[1..10] {
            for x in &mut b {
                *x = _mm256_aesenc_epi128(*x, *key);
            }
        }
        let (o, _) = c.as_chunks_mut::<32>();
        for (o, x) in o.iter_mut().zip(b) {
            let x = _mm256_aesenclast_epi128(x, k[10]);
            if XOR {
                store(o, _mm256_xor_si256(load(o), x));
            } else {
                store(o, x);
            }
        }
        ctr = ctr.wrapping_add(16);
    }
    // The AES-NI tail loads all round keys first: skipped when there is no tail.
    if !tail.is_empty() {
        aes128_ctr_aesni_impl::<XOR>(rk, ctr, tail);
    }
}

/// Each 16-byte block `b` of `buf` (whole blocks; a partial last block is left as it is)
/// becomes `AES_k(b)`, or `AES_k(b) ^ b` with `MMO` (the Matyas-Meyer-Oseas form).
pub(crate) fn aes128_ecb_aesni<const MMO: bool>(_t: AesNi, rk: &[[u8; 16]; 11], buf: &mut [u8]) {
    // SAFETY: the token proves AES-NI and SSE2.
    unsafe { aes128_ecb_aesni_impl::<MMO>(rk, buf) }
}

/// Eight blocks in flight, one at a time for the rest.
#[target_feature(enable = "aes,sse2")]
fn aes128_ecb_aesni_impl<const MMO: bool>(rk: &[[u8; 16]; 11], buf: &mut [u8]) {
    let k: [__m128i; 11] = core::array::from_fn(|i| load16(&rk[i]));
    let (blocks, _) = buf.as_chunks_mut::<16>();
    let (eights, rest) = blocks.as_chunks_mut::<8>();
    for c in eights {
        let x: [__m128i; 8] = core::array::from_fn(|i| load16(&c[i]));
        let mut b = x.map(|x| _mm_xor_si128(x, k[0]));
        for key in &k[1..10] {
            for v in &mut b {
                *v = _mm_aesenc_si128(*v, *key);
            }
        }
        for ((o, v), x) in c.iter_mut().zip(b).zip(x) {
            let y = _mm_aesenclast_si128(v, k[10]);
            store16(o, if MMO { _mm_xor_si128(y, x) } else { y });
        }
    }
    for o in rest {
        let x = load16(o);
        let mut v = _mm_xor_si128(x, k[0]);
        for key in &k[1..10] {
            v = _mm_aesenc_si128(v, *key);
        }
        let y = _mm_aesenclast_si128(v, k[10]);
        store16(o, if MMO { _mm_xor_si128(y, x) } else { y });
    }
}

/// [`aes128_ecb_aesni`] with VAES.
pub(crate) fn aes128_ecb_vaes<const MMO: bool>(_t: Vaes, rk: &[[u8; 16]; 11], buf: &mut [u8]) {
    // SAFETY: the token proves AES-NI, AVX2 and VAES.
    unsafe { aes128_ecb_vaes_impl::<MMO>(rk, buf) }
}

/// Sixteen blocks in flight, two per 256-bit register; the rest with AES-NI.
#[target_feature(enable = "aes,sse2,avx2,vaes")]
fn aes128_ecb_vaes_impl<const MMO: bool>(rk: &[[u8; 16]; 11], buf: &mut [u8]) {
    let mut k = [_mm256_setzero_si256(); 11];
    for (k, r) in k.iter_mut().zip(rk) {
        *k = _mm256_broadcastsi128_si256(load16(r));
    }
    let full = buf.len() / 256 * 256;
    let (head, tail) = buf.split_at_mut(full);
    let (chunks, _) = head.as_chunks_mut::<256>();
    for c in chunks {
        let (o, _) = c.as_chunks_mut::<32>();
        let x: [__m256i; 8] = core::array::from_fn(|i| load(&o[i]));
        let mut b = x.map(|x| _mm256_xor_si256(x, k[0]));
        for key in &k[1..10] {
            for v in &mut b {
                *v = _mm256_aesenc_epi128(*v, *key);
            }
        }
        for ((o, v), x) in o.iter_mut().zip(b).zip(x) {
            let y = _mm256_aesenclast_epi128(v, k[10]);
            store(o, if MMO { _mm256_xor_si256(y, x) } else { y });
        }
    }
    aes128_ecb_aesni_impl::<MMO>(rk, tail);
}

/// The AES-128 key schedule with `AESKEYGENASSIST` (constant time, for secret keys).
pub(crate) fn aes128_expand_aesni(_t: AesNi, key: &[u8; 16]) -> [[u8; 16]; 11] {
    // SAFETY: the token proves AES-NI and SSE2.
    unsafe { aes128_expand_aesni_impl(key) }
}

/// One round key from the previous one (FIPS-197 §5.2 with `RCON` the round constant).
#[inline]
#[target_feature(enable = "aes,sse2")]
fn expand_step<const RCON: i32>(k: __m128i) -> __m128i {
    let t = _mm_shuffle_epi32::<0xff>(_mm_aeskeygenassist_si128::<RCON>(k));
    let mut k = k;
    k = _mm_xor_si128(k, _mm_slli_si128::<4>(k));
    k = _mm_xor_si128(k, _mm_slli_si128::<4>(k));
    k = _mm_xor_si128(k, _mm_slli_si128::<4>(k));
    _mm_xor_si128(k, t)
}

#[target_feature(enable = "aes,sse2")]
fn aes128_expand_aesni_impl(key: &[u8; 16]) -> [[u8; 16]; 11] {
    let mut k = [_mm_setzero_si128(); 11];
    k[0] = load16(key);
    k[1] = expand_step::<0x01>(k[0]);
    k[2] = expand_step::<0x02>(k[1]);
    k[3] = expand_step::<0x04>(k[2]);
    k[4] = expand_step::<0x08>(k[3]);
    k[5] = expand_step::<0x10>(k[4]);
    k[6] = expand_step::<0x20>(k[5]);
    k[7] = expand_step::<0x40>(k[6]);
    k[8] = expand_step::<0x80>(k[7]);
    k[9] = expand_step::<0x1b>(k[8]);
    k[10] = expand_step::<0x36>(k[9]);
    let mut rk = [[0u8; 16]; 11];
    for (r, x) in rk.iter_mut().zip(k) {
        store16(r, x);
    }
    rk
}

// ---- AES block steps -----------------------------------------------------------------------

/// [`crate::aes_round::BlockStep`] on every whole block, two blocks per register (`vpshufb`
/// works within each 128-bit lane, one block each); a last odd block in a 128-bit register.
pub(crate) fn aes_blocks(_t: Avx2, step: crate::aes_round::BlockStep, buf: &mut [u8]) {
    // SAFETY: the token proves AVX2.
    unsafe { aes_blocks_impl(step, buf) }
}

/// The 32-byte shuffle that applies the 16-byte permutation `p` to both lanes.
#[inline]
#[target_feature(enable = "avx2")]
fn lane_shuffle(p: &[u8; 16]) -> __m256i {
    let q = load16(p);
    _mm256_broadcastsi128_si256(q)
}

/// `(p[k] + r) mod 4 + 4 (k / 4)` for every `k`: byte `j` of each column gets byte `j + r`.
const fn col_rot(r: u8) -> [u8; 16] {
    let mut t = [0u8; 16];
    let mut k = 0;
    while k < 16 {
        t[k] = ((k as u8 % 4) + r) % 4 + 4 * (k as u8 / 4);
        k += 1;
    }
    t
}

/// Shuffles of one step: ShiftRows or its inverse, and the column rotations by 1, 2 and 3.
struct Shuffles {
    shift: __m256i,
    inv_shift: __m256i,
    rot1: __m256i,
    rot2: __m256i,
    rot3: __m256i,
    poly: __m256i,
}

#[inline]
#[target_feature(enable = "avx2")]
fn shuffles() -> Shuffles {
    use crate::aes_round::{INV_SHIFT, SHIFT};
    Shuffles {
        shift: lane_shuffle(&SHIFT),
        inv_shift: lane_shuffle(&INV_SHIFT),
        rot1: lane_shuffle(&col_rot(1)),
        rot2: lane_shuffle(&col_rot(2)),
        rot3: lane_shuffle(&col_rot(3)),
        poly: _mm256_set1_epi8(0x1b),
    }
}

/// `xtime` on 32 bytes: `2x`, plus `0x1b` where the top bit was set.
#[inline]
#[target_feature(enable = "avx2")]
fn xtime32(s: &Shuffles, x: __m256i) -> __m256i {
    let top = _mm256_cmpgt_epi8(_mm256_setzero_si256(), x);
    _mm256_xor_si256(_mm256_add_epi8(x, x), _mm256_and_si256(top, s.poly))
}

/// MixColumns: `x + all + xtime(x + rot1(x))` with `all` the sum of each column.
#[inline]
#[target_feature(enable = "avx2")]
fn mix32(s: &Shuffles, x: __m256i) -> __m256i {
    let y = _mm256_shuffle_epi8(x, s.rot1);
    let all = _mm256_xor_si256(
        _mm256_xor_si256(x, y),
        _mm256_xor_si256(
            _mm256_shuffle_epi8(x, s.rot2),
            _mm256_shuffle_epi8(x, s.rot3),
        ),
    );
    _mm256_xor_si256(_mm256_xor_si256(x, all), xtime32(s, _mm256_xor_si256(x, y)))
}

/// InvMixColumns: MixColumns of `x + 4 (x + rot2(x))`.
#[inline]
#[target_feature(enable = "avx2")]
fn inv_mix32(s: &Shuffles, x: __m256i) -> __m256i {
    let u = xtime32(
        s,
        xtime32(s, _mm256_xor_si256(x, _mm256_shuffle_epi8(x, s.rot2))),
    );
    mix32(s, _mm256_xor_si256(x, u))
}

#[target_feature(enable = "avx2")]
fn aes_blocks_impl(step: crate::aes_round::BlockStep, buf: &mut [u8]) {
    use crate::aes_round::BlockStep;
    let s = shuffles();
    let key = match step {
        BlockStep::Round(k) => _mm256_broadcastsi128_si256(load16(&k)),
        _ => _mm256_setzero_si256(),
    };
    let f = |x: __m256i| -> __m256i {
        match step {
            BlockStep::ShiftRows => _mm256_shuffle_epi8(x, s.shift),
            BlockStep::InvShiftRows => _mm256_shuffle_epi8(x, s.inv_shift),
            BlockStep::MixColumns => mix32(&s, x),
            BlockStep::InvMixColumns => inv_mix32(&s, x),
            BlockStep::Round(_) => {
                _mm256_xor_si256(mix32(&s, _mm256_shuffle_epi8(x, s.shift)), key)
            }
        }
    };
    let whole = buf.len() / 16 * 16;
    let (pairs, rest) = buf[..whole].as_chunks_mut::<32>();
    for c in pairs.iter_mut() {
        store(c, f(load(c)));
    }
    if let Some(last) = rest.as_chunks_mut::<16>().0.first_mut() {
        // The odd block in the low lane of a 256-bit register.
        let mut pair = [0u8; 32];
        pair[..16].copy_from_slice(last);
        let out = f(load(&pair));
        store(&mut pair, out);
        last.copy_from_slice(&pair[..16]);
    }
}

/// `out.extend_from_slice(src)` with the whole 64-byte lines of the appended part written by
/// non-temporal stores (`movntdq`, SSE2, part of x86-64), past the cache; then `sfence`.
pub(crate) fn extend_streaming(out: &mut Vec<u8>, src: &[u8]) {
    out.reserve(src.len());
    let at = out.len();
    let n = src.len();
    // SAFETY: `reserve` left room for `n` bytes from `at`, so `dst .. dst + n` lies within the
    // allocation. The head of up to 63 bytes and the tail are copied; the body between them
    // starts at a 64-byte boundary and is a multiple of 64, so every 16-byte store is aligned
    // and inside it. All `n` bytes are written before the length covers them.
    unsafe {
        let dst = out.as_mut_ptr().add(at);
        let head = dst.align_offset(64).min(n);
        let body = (n - head) / 64 * 64;
        core::ptr::copy_nonoverlapping(src.as_ptr(), dst, head);
        let (s, d) = (src.as_ptr().add(head), dst.add(head));
        for k in (0..body).step_by(16) {
            _mm_stream_si128(d.add(k).cast(), _mm_loadu_si128(s.add(k).cast()));
        }
        _mm_sfence();
        let rest = head + body;
        core::ptr::copy_nonoverlapping(src.as_ptr().add(rest), dst.add(rest), n - rest);
        out.set_len(at + n);
    }
}

/// [`super::scatter_streaming`] on x86-64: whole cache lines leave the line buffers with
/// non-temporal stores (SSE2, part of x86-64), the rest with plain ones.
pub(crate) fn scatter_streaming(
    out: &mut [u64],
    next: &mut [usize],
    labels: &[u16],
    items: impl Iterator<Item = u64>,
) {
    let k = next.len();
    let base = out.as_ptr() as usize;
    // Items from a stream's next place to the next 64-byte boundary (8 once aligned, as after
    // every flush of a whole line).
    let to_line = |pos: usize| -> usize {
        let addr = base.wrapping_add(pos.wrapping_mul(8));
        match (64 - addr % 64) % 64 / 8 {
            0 => 8,
            n => n,
        }
    };
    let mut lines = vec![[0u64; 8]; k];
    let mut fill = vec![0usize; k];
    for (&l, item) in labels.iter().zip(items) {
        let l = usize::from(l);
        let (Some(line), Some(f)) = (lines.get_mut(l), fill.get_mut(l)) else {
            continue;
        };
        line[*f] = item;
        *f += 1;
        if *f < to_line(next[l]) {
            continue;
        }
        let pos = next[l];
        if let Some(dst) = out.get_mut(pos..pos.saturating_add(*f)) {
            if *f == 8 {
                // SAFETY: `dst` is 8 in-bounds u64s whose start is 64-byte aligned (a line is
                // flushed once it holds `to_line(pos)` items, so it holds 8 only when `pos` is
                // at a boundary), so each 16-byte store is aligned and inside `dst`; SSE2 is
                // part of x86-64.
                unsafe {
                    let d = dst.as_mut_ptr().cast::<__m128i>();
                    let s = line.as_ptr().cast::<__m128i>();
                    for j in 0..4 {
                        _mm_stream_si128(d.add(j), _mm_loadu_si128(s.add(j)));
                    }
                }
            } else {
                dst.copy_from_slice(&line[..*f]);
            }
        } else {
            copy_in_bounds(out, pos, &line[..*f]);
        }
        next[l] = pos.saturating_add(*f);
        *f = 0;
    }
    for l in 0..k {
        let (pos, f) = (next[l], fill[l]);
        copy_in_bounds(out, pos, &lines[l][..f]);
        next[l] = pos.saturating_add(f);
    }
    // SAFETY: a store fence, so that the non-temporal stores are ordered before whatever
    // follows (another thread reading `out`).
    unsafe { _mm_sfence() };
}

/// `out[pos + j] = src[j]` for the places inside `out`.
fn copy_in_bounds(out: &mut [u64], pos: usize, src: &[u64]) {
    if let Some(dst) = out.get_mut(pos..) {
        let m = dst.len().min(src.len());
        dst[..m].copy_from_slice(&src[..m]);
    }
}
