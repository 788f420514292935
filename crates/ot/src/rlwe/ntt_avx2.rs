//! AVX2 backend: the negacyclic NTT and its inverse written with AVX2
//! intrinsics (16 lanes of 16 bits, layers merged in registers; the
//! comment that opens the NTT code below describes the data flow),
//! bit-identical to the portable bodies in [`super::ntt`]. The calls into
//! these functions are sound only on CPUs with AVX2; an [`Avx2`] token
//! exists only after run-time detection (the samplers' and the bit loops'
//! AVX2 code, in `sample_avx2` and `lanes_avx2`, take the same token).
#![allow(unsafe_code)]

use super::ntt::LAST_INV;
use super::ring::{N, N_INV_MONT, Q, QINV, ZETAS, ZETAS_INV};
use core::arch::x86_64::{
    __m256i, _mm256_add_epi16, _mm256_load_si256, _mm256_loadu_si256, _mm256_mulhi_epi16,
    _mm256_mullo_epi16, _mm256_permute2x128_si256, _mm256_set1_epi16, _mm256_setzero_si256,
    _mm256_srai_epi16, _mm256_storeu_si256, _mm256_sub_epi16, _mm256_unpackhi_epi16,
    _mm256_unpackhi_epi32, _mm256_unpackhi_epi64, _mm256_unpacklo_epi16, _mm256_unpacklo_epi32,
    _mm256_unpacklo_epi64,
};

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

impl From<super::ntt_avx512::Avx512> for Avx2 {
    /// An AVX-512 token exists only if run-time detection also found AVX2
    /// (`Avx512::detect` checks it), so it proves AVX2 support too.
    fn from(_: super::ntt_avx512::Avx512) -> Avx2 {
        Avx2(())
    }
}

// ---------------------------------------------------------------------------
// The negacyclic NTT with AVX2 intrinsics.
//
// It performs exactly the operations of `forward_body` and `inverse_body`:
// the same butterflies with the same twiddles, and Montgomery products and
// Barrett reductions at the same points, each made of the same 16-bit lane
// operations (`vpmullw` is `wrapping_mul`, `vpmulhw` is `mulhi`), so the
// results are bit-identical and the value bounds are those argued in
// `ntt.rs`; only the order in which independent lanes are visited differs.
//
// A coefficient at natural index `n = 128 h + 16 m + 8 e + j` (`h < 4`,
// `m < 8`, `e < 2`, `j < 8`) lies in block `b = 16 h + 2 m + e` of 8, at
// position `j`; in the transposed layout of the NTT domain it sits at
// `64 j + b`. Natural vector `V = 8 h + m` holds lanes `16 V ..`.
//
// The forward transform makes two passes of eight registers each:
// * outer, for each `i < 4`: vectors `i + 4 t` (`t < 8`) go through
//   distances 256, 128 and 64 and are kept on the stack;
// * inner, for each `h`: vectors `8 h + m` (128 coefficients) go through
//   distances 32 and 16; `vperm2i128` pairs halves so that distance 8 is a
//   butterfly between two registers; an 8 x 8 transpose of 16-bit lanes
//   inside each 128-bit half (`vpunpck{l,h}{wd,dq,qdq}`) turns the eight
//   registers into the 16-lane pieces `64 j + 16 h ..` of the eight rows,
//   where distances 4, 2 and 1 are butterflies between rows with per-lane
//   twiddles; the rows go straight to `r`.
// The inverse runs the same steps backwards: the inner pass from `r` to
// the stack, then the outer pass back to `r`. The passes cannot both work
// in place (an inner group reads 128 coefficients that lie in all eight
// rows), so the stack holds one intermediate copy; it is secret-dependent,
// and the second pass zeroes it as it reads it.
// ---------------------------------------------------------------------------

/// `round(2^26 / q)`, the constant of `ring::barrett` (a test checks the
/// lane version against `ring::barrett` on every `i16`).
const BARRETT_V: i16 = (((1i32 << 26) + Q as i32 / 2) / Q as i32) as i16;

/// 16 lanes, aligned so that a load never splits a cache line.
#[derive(Clone, Copy)]
#[repr(C, align(32))]
struct Lanes([i16; 16]);

/// A twiddle factor per lane and its product with `q^{-1} mod 2^16`, so
/// that a Montgomery product with it takes three multiplications.
#[derive(Clone, Copy)]
struct Twiddle {
    z: Lanes,
    zq: Lanes,
}

const fn twiddle(z: [i16; 16]) -> Twiddle {
    let mut zq = [0i16; 16];
    let mut i = 0;
    while i < 16 {
        zq[i] = z[i].wrapping_mul(QINV);
        i += 1;
    }
    Twiddle {
        z: Lanes(z),
        zq: Lanes(zq),
    }
}

/// `lo` in lanes 0-7 and `hi` in lanes 8-15.
const fn halves(lo: i16, hi: i16) -> Twiddle {
    let mut z = [lo; 16];
    let mut i = 8;
    while i < 16 {
        z[i] = hi;
        i += 1;
    }
    twiddle(z)
}

/// The same factor in every lane.
const fn splat(z: i16) -> Twiddle {
    halves(z, z)
}

/// Lane `k` holds `table[base + stride * (16 h + k) + offset]`, the factor
/// of block `b = 16 h + k` in a row layer.
const fn per_block(
    table: &[i16; N],
    h: usize,
    base: usize,
    stride: usize,
    offset: usize,
) -> Twiddle {
    let mut z = [0i16; 16];
    let mut k = 0;
    while k < 16 {
        z[k] = table[base + stride * (16 * h + k) + offset];
        k += 1;
    }
    twiddle(z)
}

/// The twiddles of inner group `h` (vectors `8 h ..`), by butterfly
/// distance, as indices into `ZETAS` (forward) or `ZETAS_INV` (inverse).
struct Inner {
    /// Vectors `(m, m + 2)`: `[8 + 2 h]` for `m < 2`, `[9 + 2 h]` for `m = 4, 5`.
    d32: [Twiddle; 2],
    /// Vectors `(2 k, 2 k + 1)`: `[16 + 4 h + k]`.
    d16: [Twiddle; 4],
    /// Registers `(2 m, 2 m + 1)`, halves of vectors `m` and `m + 4`:
    /// `[32 + 8 h + m]` in lanes 0-7, `[36 + 8 h + m]` in lanes 8-15.
    d8: [Twiddle; 4],
    /// Rows `(j, j + 4)`: `[64 + b]` in lane `b - 16 h`.
    d4: Twiddle,
    /// Rows `(j, j + 2)`: `[128 + 2 b + g]` for `j = 4 g, 4 g + 1`.
    d2: [Twiddle; 2],
    /// Rows `(2 g, 2 g + 1)`: `[256 + 4 b + g]`.
    d1: [Twiddle; 4],
}

/// All twiddles of one direction.
struct Schedule {
    /// Vectors `(t, t + 4)` of an outer group: `[1]` (inverse: [`LAST_INV`]).
    d256: Twiddle,
    /// Vectors `(t, t + 2)`: `[2]` for `t < 2`, `[3]` for `t = 4, 5`.
    d128: [Twiddle; 2],
    /// Vectors `(2 s, 2 s + 1)`: `[4 + s]`.
    d64: [Twiddle; 4],
    inner: [Inner; 4],
}

const fn inner(z: &[i16; N], h: usize) -> Inner {
    Inner {
        d32: [splat(z[8 + 2 * h]), splat(z[9 + 2 * h])],
        d16: [
            splat(z[16 + 4 * h]),
            splat(z[17 + 4 * h]),
            splat(z[18 + 4 * h]),
            splat(z[19 + 4 * h]),
        ],
        d8: [
            halves(z[32 + 8 * h], z[36 + 8 * h]),
            halves(z[33 + 8 * h], z[37 + 8 * h]),
            halves(z[34 + 8 * h], z[38 + 8 * h]),
            halves(z[35 + 8 * h], z[39 + 8 * h]),
        ],
        d4: per_block(z, h, 64, 1, 0),
        d2: [per_block(z, h, 128, 2, 0), per_block(z, h, 128, 2, 1)],
        d1: [
            per_block(z, h, 256, 4, 0),
            per_block(z, h, 256, 4, 1),
            per_block(z, h, 256, 4, 2),
            per_block(z, h, 256, 4, 3),
        ],
    }
}

const fn schedule(z: &[i16; N], d256: i16) -> Schedule {
    Schedule {
        d256: splat(d256),
        d128: [splat(z[2]), splat(z[3])],
        d64: [splat(z[4]), splat(z[5]), splat(z[6]), splat(z[7])],
        inner: [inner(z, 0), inner(z, 1), inner(z, 2), inner(z, 3)],
    }
}

static FORWARD: Schedule = schedule(&ZETAS, ZETAS[1]);
static INVERSE: Schedule = schedule(&ZETAS_INV, LAST_INV);
static SCALE: Twiddle = splat(N_INV_MONT);

#[target_feature(enable = "avx2")]
#[inline]
fn load(l: &Lanes) -> __m256i {
    // SAFETY: `l` is 32 readable bytes, aligned to 32.
    unsafe { _mm256_load_si256(l.0.as_ptr().cast::<__m256i>()) }
}

#[target_feature(enable = "avx2")]
#[inline]
fn load16(c: &[i16; 16]) -> __m256i {
    // SAFETY: `c` is 32 readable bytes; the load needs no alignment.
    unsafe { _mm256_loadu_si256(c.as_ptr().cast::<__m256i>()) }
}

#[target_feature(enable = "avx2")]
#[inline]
fn store16(c: &mut [i16; 16], v: __m256i) {
    // SAFETY: `c` is 32 writable bytes; the store needs no alignment.
    unsafe { _mm256_storeu_si256(c.as_mut_ptr().cast::<__m256i>(), v) }
}

/// `ring::fqmul(z, y)` per lane: `mulhi(y, z) - mulhi(m, q)` with
/// `m = y z q^{-1} mod 2^16`, which is the low half of `y * zq`.
#[target_feature(enable = "avx2")]
#[inline]
fn fqmul(y: __m256i, w: &Twiddle) -> __m256i {
    let m = _mm256_mullo_epi16(y, load(&w.zq));
    let hi = _mm256_mulhi_epi16(y, load(&w.z));
    _mm256_sub_epi16(hi, _mm256_mulhi_epi16(m, _mm256_set1_epi16(Q)))
}

/// `ring::barrett` per lane: `a - ((mulhi(a, v) + 2^9) >> 10) q`.
#[target_feature(enable = "avx2")]
#[inline]
fn barrett(a: __m256i) -> __m256i {
    let t = _mm256_mulhi_epi16(a, _mm256_set1_epi16(BARRETT_V));
    let t = _mm256_srai_epi16::<10>(_mm256_add_epi16(t, _mm256_set1_epi16(1 << 9)));
    _mm256_sub_epi16(a, _mm256_mullo_epi16(t, _mm256_set1_epi16(Q)))
}

/// The butterfly `ct::<REDUCE_X>` of `forward_body` on registers `i < j`:
/// `t = fqmul(z, y)`, `x <- barrett(x)` if `REDUCE_X`, `(x, y) <- (x + t, x - t)`.
#[target_feature(enable = "avx2")]
#[inline]
fn ct<const REDUCE_X: bool>(v: &mut [__m256i; 8], i: usize, j: usize, w: &Twiddle) {
    let t = fqmul(v[j], w);
    let x = if REDUCE_X { barrett(v[i]) } else { v[i] };
    v[j] = _mm256_sub_epi16(x, t);
    v[i] = _mm256_add_epi16(x, t);
}

/// The butterfly of `inverse_body`: `(x, y) <- (barrett(x + y), fqmul(z, x - y))`.
#[target_feature(enable = "avx2")]
#[inline]
fn gs(v: &mut [__m256i; 8], i: usize, j: usize, w: &Twiddle) {
    let (x, y) = (v[i], v[j]);
    v[i] = barrett(_mm256_add_epi16(x, y));
    v[j] = fqmul(_mm256_sub_epi16(x, y), w);
}

/// Transposes, inside each 128-bit half, the 8 x 8 matrix of 16-bit lanes
/// whose row `k` is (that half of) `v[k]`. Its own inverse.
#[target_feature(enable = "avx2")]
#[inline]
fn transpose(v: &mut [__m256i; 8]) {
    // a[2p], a[2p + 1]: columns 0-3 and 4-7 of rows 2p, 2p + 1, interleaved.
    let a = [
        _mm256_unpacklo_epi16(v[0], v[1]),
        _mm256_unpackhi_epi16(v[0], v[1]),
        _mm256_unpacklo_epi16(v[2], v[3]),
        _mm256_unpackhi_epi16(v[2], v[3]),
        _mm256_unpacklo_epi16(v[4], v[5]),
        _mm256_unpackhi_epi16(v[4], v[5]),
        _mm256_unpacklo_epi16(v[6], v[7]),
        _mm256_unpackhi_epi16(v[6], v[7]),
    ];
    // b[c]: columns 2c, 2c + 1 of rows 0-3; b[c + 4]: the same of rows 4-7.
    let b = [
        _mm256_unpacklo_epi32(a[0], a[2]),
        _mm256_unpackhi_epi32(a[0], a[2]),
        _mm256_unpacklo_epi32(a[1], a[3]),
        _mm256_unpackhi_epi32(a[1], a[3]),
        _mm256_unpacklo_epi32(a[4], a[6]),
        _mm256_unpackhi_epi32(a[4], a[6]),
        _mm256_unpacklo_epi32(a[5], a[7]),
        _mm256_unpackhi_epi32(a[5], a[7]),
    ];
    for c in 0..4 {
        v[2 * c] = _mm256_unpacklo_epi64(b[c], b[c + 4]);
        v[2 * c + 1] = _mm256_unpackhi_epi64(b[c], b[c + 4]);
    }
}

/// Forward outer group `i`: distances 256, 128 (reducing `x`) and 64 on
/// vectors `i + 4 t`, returned in order of `t`.
#[target_feature(enable = "avx2")]
#[inline]
fn forward_outer(r: &[[i16; 16]], i: usize) -> [__m256i; 8] {
    let s = &FORWARD;
    let mut v = [_mm256_setzero_si256(); 8];
    for (t, x) in v.iter_mut().enumerate() {
        *x = load16(&r[i + 4 * t]);
    }
    for t in 0..4 {
        ct::<false>(&mut v, t, t + 4, &s.d256);
    }
    for t in [0, 1] {
        ct::<true>(&mut v, t, t + 2, &s.d128[0]);
        ct::<true>(&mut v, t + 4, t + 6, &s.d128[1]);
    }
    for (k, w) in s.d64.iter().enumerate() {
        ct::<false>(&mut v, 2 * k, 2 * k + 1, w);
    }
    v
}

#[target_feature(enable = "avx2")]
fn forward_avx2(r: &mut [i16; N]) {
    let zero = _mm256_setzero_si256();
    let (r, _) = r.as_chunks_mut::<16>();
    // outer[i][t] is vector i + 4t.
    let mut outer = [[zero; 8]; 4];
    for (i, o) in outer.iter_mut().enumerate() {
        *o = forward_outer(r, i);
    }
    // The inner groups go in pairs, each step done for both groups in
    // turn: two independent dependency chains keep the out-of-order core
    // busy (on Zen 3 this takes the transform from about 190 to 165 ns).
    for pair in [[0, 1], [2, 3]] {
        let gs = pair.map(|h| &FORWARD.inner[h]);
        // v[k][m] is vector 8h + m of group h = pair[k].
        let mut v = [[zero; 8]; 2];
        for (v, h) in v.iter_mut().zip(pair) {
            for (m, x) in v.iter_mut().enumerate() {
                let o = &mut outer[m % 4][2 * h + m / 4];
                *x = *o;
                *o = zero;
            }
        }
        // Distances 32 (reducing x) and 16.
        for (v, g) in v.iter_mut().zip(gs) {
            for m in [0, 1] {
                ct::<true>(v, m, m + 2, &g.d32[0]);
                ct::<true>(v, m + 4, m + 6, &g.d32[1]);
            }
        }
        for (v, g) in v.iter_mut().zip(gs) {
            for (k, w) in g.d16.iter().enumerate() {
                ct::<false>(v, 2 * k, 2 * k + 1, w);
            }
        }
        // Register 2m: first halves of vectors m and m + 4 (blocks 16h + 2m
        // and 16h + 8 + 2m); register 2m + 1: their second halves. Then
        // distance 8, reducing x.
        let mut u = [[zero; 8]; 2];
        for (u, v) in u.iter_mut().zip(v.iter()) {
            for m in 0..4 {
                u[2 * m] = _mm256_permute2x128_si256::<0x20>(v[m], v[m + 4]);
                u[2 * m + 1] = _mm256_permute2x128_si256::<0x31>(v[m], v[m + 4]);
            }
        }
        for (u, g) in u.iter_mut().zip(gs) {
            for (m, w) in g.d8.iter().enumerate() {
                ct::<true>(u, 2 * m, 2 * m + 1, w);
            }
        }
        // Register k holds block 16h + k in its low half and 16h + 8 + k in
        // its high half; after the transpose, register j holds lane j of
        // blocks 16h .. 16h + 16 in order: row j, lanes 64j + 16h ...
        // Then distances 4, 2 (reducing x) and 1 between rows.
        for u in u.iter_mut() {
            transpose(u);
        }
        for (u, g) in u.iter_mut().zip(gs) {
            for j in 0..4 {
                ct::<false>(u, j, j + 4, &g.d4);
            }
        }
        for (u, g) in u.iter_mut().zip(gs) {
            for j in [0, 1] {
                ct::<true>(u, j, j + 2, &g.d2[0]);
                ct::<true>(u, j + 4, j + 6, &g.d2[1]);
            }
        }
        for (u, g) in u.iter_mut().zip(gs) {
            for (k, w) in g.d1.iter().enumerate() {
                ct::<false>(u, 2 * k, 2 * k + 1, w);
            }
        }
        for (u, h) in u.iter().zip(pair) {
            for (j, x) in u.iter().enumerate() {
                store16(&mut r[4 * j + h], barrett(*x));
            }
        }
    }
    core::hint::black_box(&mut outer);
}

/// Inverse inner group `h`: rows pieces `64 j + 16 h ..` through distances
/// 1, 2, 4, the transpose, distances 8, 16, 32; returns vectors `8 h + m`
/// in order of `m`.
#[target_feature(enable = "avx2")]
#[inline]
fn inverse_inner(r: &[[i16; 16]], h: usize, g: &Inner) -> [__m256i; 8] {
    let zero = _mm256_setzero_si256();
    let mut u = [zero; 8];
    for (j, x) in u.iter_mut().enumerate() {
        *x = load16(&r[4 * j + h]);
    }
    for (k, w) in g.d1.iter().enumerate() {
        gs(&mut u, 2 * k, 2 * k + 1, w);
    }
    for j in [0, 1] {
        gs(&mut u, j, j + 2, &g.d2[0]);
        gs(&mut u, j + 4, j + 6, &g.d2[1]);
    }
    for j in 0..4 {
        gs(&mut u, j, j + 4, &g.d4);
    }
    transpose(&mut u);
    for (m, w) in g.d8.iter().enumerate() {
        gs(&mut u, 2 * m, 2 * m + 1, w);
    }
    let mut v = [zero; 8];
    for m in 0..4 {
        v[m] = _mm256_permute2x128_si256::<0x20>(u[2 * m], u[2 * m + 1]);
        v[m + 4] = _mm256_permute2x128_si256::<0x31>(u[2 * m], u[2 * m + 1]);
    }
    for (k, w) in g.d16.iter().enumerate() {
        gs(&mut v, 2 * k, 2 * k + 1, w);
    }
    for m in [0, 1] {
        gs(&mut v, m, m + 2, &g.d32[0]);
        gs(&mut v, m + 4, m + 6, &g.d32[1]);
    }
    v
}

#[target_feature(enable = "avx2")]
fn inverse_avx2(r: &mut [i16; N]) {
    let s = &INVERSE;
    let zero = _mm256_setzero_si256();
    let (r, _) = r.as_chunks_mut::<16>();
    // inner[h][m] is vector 8h + m.
    let mut inner = [[zero; 8]; 4];
    for (h, g) in s.inner.iter().enumerate() {
        inner[h] = inverse_inner(r, h, g);
    }
    for i in 0..4 {
        // Vectors i + 4t: distances 64, 128, then 256 with the factor n^{-1}.
        let mut v = [zero; 8];
        for (t, x) in v.iter_mut().enumerate() {
            let o = &mut inner[t / 2][i + 4 * (t % 2)];
            *x = *o;
            *o = zero;
        }
        for (k, w) in s.d64.iter().enumerate() {
            gs(&mut v, 2 * k, 2 * k + 1, w);
        }
        for t in [0, 1] {
            gs(&mut v, t, t + 2, &s.d128[0]);
            gs(&mut v, t + 4, t + 6, &s.d128[1]);
        }
        for t in 0..4 {
            let (x, y) = (v[t], v[t + 4]);
            store16(&mut r[i + 4 * t], fqmul(_mm256_add_epi16(x, y), &SCALE));
            store16(
                &mut r[i + 4 * t + 16],
                fqmul(_mm256_sub_epi16(x, y), &s.d256),
            );
        }
    }
    core::hint::black_box(&mut inner);
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

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
    use super::*;

    /// The lane versions of Barrett reduction and of the Montgomery
    /// product match the scalar ones in `ring` (the check shared by every
    /// backend).
    #[test]
    fn lane_arithmetic_matches_scalar() {
        if Avx2::detect().is_none() {
            eprintln!("no AVX2 on this CPU: AVX2 lane test skipped");
            return;
        }
        let lanes = |v: __m256i| {
            let mut out = [0i16; 16];
            // SAFETY: AVX2 detected above.
            unsafe { store16(&mut out, v) };
            out
        };
        super::super::ntt::tests::check_lane_arithmetic::<16>(
            // SAFETY: AVX2 detected above.
            &|x| lanes(unsafe { barrett(load16(x)) }),
            // SAFETY: as above.
            &|x, z| lanes(unsafe { fqmul(load16(x), &splat(z)) }),
        );
    }
}
