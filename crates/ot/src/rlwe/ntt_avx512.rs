//! AVX-512 backend: the negacyclic NTT and its inverse written with
//! AVX-512BW intrinsics (32 lanes of 16 bits; the whole polynomial lives
//! in 16 of the 32 `zmm` registers; the comment that opens the NTT code
//! below describes the data flow), bit-identical to the portable bodies in
//! [`super::ntt`]. The calls into these functions are sound only on CPUs
//! with AVX-512F, AVX-512BW and AVX2; an [`Avx512`] token exists only after
//! run-time detection of all three (the lane loops of `lanes_avx512` take
//! the same token, and it hands out an [`Avx2`] token for the code that has
//! no 512-bit version).
#![allow(unsafe_code)]

use super::ntt::LAST_INV;
use super::ntt_avx2::Avx2;
use super::ring::{N, N_INV_MONT, Q, QINV, ZETAS, ZETAS_INV};
use core::arch::x86_64::{
    __m512i, _mm512_add_epi16, _mm512_load_si512, _mm512_loadu_si512, _mm512_mulhi_epi16,
    _mm512_mullo_epi16, _mm512_set1_epi16, _mm512_setzero_si512, _mm512_shuffle_i64x2,
    _mm512_srai_epi16, _mm512_storeu_si512, _mm512_sub_epi16, _mm512_unpackhi_epi16,
    _mm512_unpackhi_epi32, _mm512_unpackhi_epi64, _mm512_unpacklo_epi16, _mm512_unpacklo_epi32,
    _mm512_unpacklo_epi64,
};

/// Proof that the running CPU supports AVX-512F, AVX-512BW and AVX2.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Avx512(());

impl Avx512 {
    /// `Some` iff the CPU supports AVX-512F, AVX-512BW and AVX2.
    pub(crate) fn detect() -> Option<Avx512> {
        if std::arch::is_x86_feature_detected!("avx512f")
            && std::arch::is_x86_feature_detected!("avx512bw")
            && std::arch::is_x86_feature_detected!("avx2")
        {
            Some(Avx512(()))
        } else {
            None
        }
    }

    /// The AVX2 token, for the loops that have no AVX-512 version (AVX2
    /// was detected with AVX-512).
    pub(crate) fn avx2(self) -> Avx2 {
        Avx2::from(self)
    }

    pub(crate) fn forward(self, r: &mut [i16; N]) {
        // SAFETY: `self` exists only if run-time detection found AVX-512F
        // and AVX-512BW, the features `forward_avx512` is compiled for.
        unsafe { forward_avx512(r) }
    }

    pub(crate) fn inverse(self, r: &mut [i16; N]) {
        // SAFETY: as above, the token proves AVX-512F and AVX-512BW support.
        unsafe { inverse_avx512(r) }
    }
}

// ---------------------------------------------------------------------------
// The negacyclic NTT with AVX-512 intrinsics.
//
// It performs exactly the operations of `forward_body` and `inverse_body`:
// the same butterflies with the same twiddles, and Montgomery products and
// Barrett reductions at the same points (forward: `x` reduced before the
// butterflies of distances 128, 32, 8 and 2, every output reduced;
// inverse: every sum reduced, every difference through a Montgomery
// product, the factor `n^{-1}` folded into the last layer), each made of
// the same 16-bit lane operations as in `ring.rs` (`vpmullw` is
// `wrapping_mul`, `vpmulhw` is `mulhi`), so the results are bit-identical
// and the value bounds are those argued in `ntt.rs`; only the order in
// which independent lanes are visited differs.
//
// Write a coefficient's natural index as `n = 8 b + j`, with block
// `b = (b5 b4 b3 b2 b1 b0)` in binary and `j < 8`. The polynomial is held in
// sixteen registers ("slots" `0..16`), each of four 128-bit quarters of
// eight lanes; which index bits select the slot, the quarter and the lane
// changes as the transform goes:
//
// | step               | slot bits 8 4 2 1 | quarter (hi lo) | lane |
// |--------------------|-------------------|-----------------|------|
// | natural load       | b5 b4 b3 b2       | b1 b0           | j    |
// | after exchange 1   | b5 b4 b1 b2       | b3 b0           | j    |
// | after exchange 2   | b5 b0 b1 b2       | b4 b3           | j    |
// | after transpose    | b5 j2 j1 j0       | b4 b3           | b2 b1 b0 |
//
// A butterfly layer pairs slots `s` and `s + d` for the slot bit `d` that
// holds the layer's index bit (distance 256 is b5, 128 is b4, ..., 8 is b0,
// then 4, 2, 1 are j2, j1, j0), with one twiddle per lane, so every layer
// is eight register butterflies. Forward: distances 256, 128, 64 and 32 on
// the natural layout (one twiddle per register); exchange 1 (slot bit 2);
// distance 16 (a twiddle per 256-bit half); exchange 2 (slot bit 4);
// distance 8 (a twiddle per quarter); transpose; distances 4, 2 and 1 (a
// twiddle per lane, as in the portable row tables). The final
// layout is the portable one: slot `8 p + j` holds lanes
// `64 j + 32 p ..` of the transposed output.
//
// An exchange swaps a slot bit with a quarter bit, two `vshufi64x2` per
// pair of slots: `(0, 1, 0, 1)`/`(2, 3, 2, 3)` (imm `0x44`/`0xee`) moves the
// high quarter bit into the slot, `(0, 2, 0, 2)`/`(1, 3, 1, 3)` (`0x88`/
// `0xdd`) the low one; either way the slot's bit becomes the new high
// quarter bit and the remaining quarter bit the low one. The transpose is
// the 8 x 8 transpose of 16-bit lanes inside each quarter
// (`vpunpck{l,h}{wd,dq,qdq}`, as in the AVX2 code) over the eight slots of
// each half `b5`, taken in the order `j' = (b2 b1 b0)`, i.e. slot
// `8 b5 + rev3(j')`, which swaps the lane bits with the slot bits.
//
// The inverse runs the steps backwards: the transpose (its own inverse),
// distance 8, then exchange `0x44`/`0xee` on slot bit 4 (slot bits
// `b5 b4 b1 b2`, quarter `b0 b3`), distance 16, exchange `0x88`/`0xdd` on
// slot bit 2, which restores the natural layout for distances 32 to 256.
// All 512 values stay in registers: 80 shuffles per transform (16
// `vshufi64x2` per exchange, 24 unpacks per transpose of eight slots).
// ---------------------------------------------------------------------------

/// `round(2^26 / q)`, the constant of `ring::barrett` (a test checks the
/// lane version against `ring::barrett` on every `i16`).
const BARRETT_V: i16 = (((1i32 << 26) + Q as i32 / 2) / Q as i32) as i16;

/// 32 lanes, aligned so that a load never splits a cache line.
#[derive(Clone, Copy)]
#[repr(C, align(64))]
struct Lanes([i16; 32]);

/// A twiddle factor per lane and its product with `q^{-1} mod 2^16`, so
/// that a Montgomery product with it takes three multiplications.
#[derive(Clone, Copy)]
struct Twiddle {
    z: Lanes,
    zq: Lanes,
}

const fn twiddle(z: [i16; 32]) -> Twiddle {
    let mut zq = [0i16; 32];
    let mut i = 0;
    while i < 32 {
        zq[i] = z[i].wrapping_mul(QINV);
        i += 1;
    }
    Twiddle {
        z: Lanes(z),
        zq: Lanes(zq),
    }
}

/// `z[c]` in the eight lanes of quarter `c`.
const fn quarters(z: [i16; 4]) -> Twiddle {
    let mut lanes = [0i16; 32];
    let mut i = 0;
    while i < 32 {
        lanes[i] = z[i / 8];
        i += 1;
    }
    twiddle(lanes)
}

/// The same factor in every lane.
const fn splat(z: i16) -> Twiddle {
    quarters([z; 4])
}

/// The lower slot of the `k`-th pair (`k < 8`) at slot distance `d`
/// (a power of two below 16): `k` with a zero bit inserted at `d`.
const fn lower(k: usize, d: usize) -> usize {
    ((k & !(d - 1)) << 1) | (k & (d - 1))
}

/// Bit reversal of a 3-bit number.
const fn rev3(k: usize) -> usize {
    ((k & 1) << 2) | (k & 2) | ((k >> 2) & 1)
}

/// `table[first + k]` splatted, for `k < L`: the twiddles of a layer on the
/// natural layout (one per register pair, shared by `8 / L` pairs).
const fn splats<const L: usize>(table: &[i16; N], first: usize) -> [Twiddle; L] {
    let mut out = [splat(0); L];
    let mut k = 0;
    while k < L {
        out[k] = splat(table[first + k]);
        k += 1;
    }
    out
}

/// Distance 16 (bit b1, after exchange 1; pair `k` at slots `V` and
/// `V + 2`, `V = 8 b5 + 4 b4 + b2`): the factor of block `b` is
/// `table[16 + (b >> 2)] = table[16 + V + 2 b3]`, and `b3_of[c]` is the
/// bit b3 of quarter `c` (the high quarter bit in the forward layout, the
/// low one in the inverse layout).
const fn d16(table: &[i16; N], b3_of: [usize; 4]) -> [Twiddle; 8] {
    let mut out = [splat(0); 8];
    let mut k = 0;
    while k < 8 {
        let v = lower(k, 2);
        let mut z = [0i16; 4];
        let mut c = 0;
        while c < 4 {
            z[c] = table[16 + v + 2 * b3_of[c]];
            c += 1;
        }
        out[k] = quarters(z);
        k += 1;
    }
    out
}

/// Distance 8 (bit b0, after exchange 2; pair `k` at slots `V` and
/// `V + 4`, `V = 8 b5 + 2 b1 + b2`, quarter `c = 2 b4 + b3`): the factor
/// of block `b` is `table[32 + (b >> 1)]`.
const fn d8(table: &[i16; N]) -> [Twiddle; 8] {
    let mut out = [splat(0); 8];
    let mut k = 0;
    while k < 8 {
        let v = lower(k, 4);
        let (b5, b1, b2) = (v >> 3, (v >> 1) & 1, v & 1);
        let mut z = [0i16; 4];
        let mut c = 0;
        while c < 4 {
            z[c] = table[32 + 16 * b5 + 4 * c + 2 * b2 + b1];
            c += 1;
        }
        out[k] = quarters(z);
        k += 1;
    }
    out
}

/// A row layer on the transposed layout (slot `8 p + j` holds lanes
/// `32 p ..` of row `j`): twiddle `k` of `L` serves pairs of half
/// `p = k L / 8`, with `table[base + stride * (32 p + lane) + offset]`,
/// `offset = k mod (L / 2)` (the rows' index within their half).
const fn rows<const L: usize>(table: &[i16; N], base: usize, stride: usize) -> [Twiddle; L] {
    let mut out = [splat(0); L];
    let mut k = 0;
    while k < L {
        let (p, offset) = (k / (L / 2), k % (L / 2));
        let mut z = [0i16; 32];
        let mut lane = 0;
        while lane < 32 {
            z[lane] = table[base + stride * (32 * p + lane) + offset];
            lane += 1;
        }
        out[k] = twiddle(z);
        k += 1;
    }
    out
}

/// All twiddles of one direction, by butterfly distance; a layer with `L`
/// twiddles gives pair `k` (of eight, see [`pair`]) twiddle `k L / 8`.
struct Schedule {
    /// `[1]` (inverse: [`LAST_INV`]).
    d256: [Twiddle; 1],
    /// `[2 + k / 4]`.
    d128: [Twiddle; 2],
    /// `[4 + k / 2]`.
    d64: [Twiddle; 4],
    /// `[8 + k]`.
    d32: [Twiddle; 8],
    d16: [Twiddle; 8],
    d8: [Twiddle; 8],
    /// Rows `(j, j + 4)`: `[64 + b]`.
    d4: [Twiddle; 2],
    /// Rows `(j, j + 2)`: `[128 + 2 b + h]` for `j = 4 h, 4 h + 1`.
    d2: [Twiddle; 4],
    /// Rows `(2 g, 2 g + 1)`: `[256 + 4 b + g]`.
    d1: [Twiddle; 8],
}

const fn schedule(table: &[i16; N], d256: i16, b3_of: [usize; 4]) -> Schedule {
    Schedule {
        d256: [splat(d256)],
        d128: splats::<2>(table, 2),
        d64: splats::<4>(table, 4),
        d32: splats::<8>(table, 8),
        d16: d16(table, b3_of),
        d8: d8(table),
        d4: rows::<2>(table, 64, 1),
        d2: rows::<4>(table, 128, 2),
        d1: rows::<8>(table, 256, 4),
    }
}

static FORWARD: Schedule = schedule(&ZETAS, ZETAS[1], [0, 0, 1, 1]);
static INVERSE: Schedule = schedule(&ZETAS_INV, LAST_INV, [0, 1, 0, 1]);
static SCALE: Twiddle = splat(N_INV_MONT);

#[target_feature(enable = "avx512f,avx512bw")]
#[inline]
fn load(l: &Lanes) -> __m512i {
    // SAFETY: `l` is 64 readable bytes, aligned to 64.
    unsafe { _mm512_load_si512(l.0.as_ptr().cast::<__m512i>()) }
}

/// Loads 32 lanes of 16 bits (also used by `encode_avx512`).
#[target_feature(enable = "avx512f,avx512bw")]
#[inline]
pub(crate) fn load32(c: &[i16; 32]) -> __m512i {
    // SAFETY: `c` is 64 readable bytes; the load needs no alignment.
    unsafe { _mm512_loadu_si512(c.as_ptr().cast::<__m512i>()) }
}

#[target_feature(enable = "avx512f,avx512bw")]
#[inline]
pub(crate) fn store32(c: &mut [i16; 32], v: __m512i) {
    // SAFETY: `c` is 64 writable bytes; the store needs no alignment.
    unsafe { _mm512_storeu_si512(c.as_mut_ptr().cast::<__m512i>(), v) }
}

/// `ring::fqmul(z, y)` per lane: `mulhi(y, z) - mulhi(m, q)` with
/// `m = y z q^{-1} mod 2^16`, which is the low half of `y * zq`.
#[target_feature(enable = "avx512f,avx512bw")]
#[inline]
fn fqmul(y: __m512i, w: &Twiddle) -> __m512i {
    let m = _mm512_mullo_epi16(y, load(&w.zq));
    let hi = _mm512_mulhi_epi16(y, load(&w.z));
    _mm512_sub_epi16(hi, _mm512_mulhi_epi16(m, _mm512_set1_epi16(Q)))
}

/// `ring::barrett` per lane: `a - ((mulhi(a, v) + 2^9) >> 10) q`.
#[target_feature(enable = "avx512f,avx512bw")]
#[inline]
fn barrett(a: __m512i) -> __m512i {
    let t = _mm512_mulhi_epi16(a, _mm512_set1_epi16(BARRETT_V));
    let t = _mm512_srai_epi16::<10>(_mm512_add_epi16(t, _mm512_set1_epi16(1 << 9)));
    _mm512_sub_epi16(a, _mm512_mullo_epi16(t, _mm512_set1_epi16(Q)))
}

/// The slots of the `k`-th pair (`k < 8`) at slot distance `d`.
const fn pair(k: usize, d: usize) -> (usize, usize) {
    (lower(k, d), lower(k, d) + d)
}

/// The butterfly `ct::<REDUCE_X>` of `forward_body`: `t = fqmul(z, y)`,
/// `x <- barrett(x)` if `REDUCE_X`, `(x, y) <- (x + t, x - t)`.
#[target_feature(enable = "avx512f,avx512bw")]
#[inline]
fn ct<const REDUCE_X: bool>(x: __m512i, y: __m512i, w: &Twiddle) -> (__m512i, __m512i) {
    let t = fqmul(y, w);
    let x = if REDUCE_X { barrett(x) } else { x };
    (_mm512_add_epi16(x, t), _mm512_sub_epi16(x, t))
}

/// The butterfly of `inverse_body`: `(x, y) <- (barrett(x + y), fqmul(z, x - y))`.
#[target_feature(enable = "avx512f,avx512bw")]
#[inline]
fn gs(x: __m512i, y: __m512i, w: &Twiddle) -> (__m512i, __m512i) {
    (
        barrett(_mm512_add_epi16(x, y)),
        fqmul(_mm512_sub_epi16(x, y), w),
    )
}

/// Swaps a slot bit with a quarter bit in the pair `(a, b)` that differs
/// in that slot bit (see the comment above): `LO`/`HI` are the
/// `vshufi64x2` immediates that build the slots whose new bit is 0 and 1.
#[target_feature(enable = "avx512f,avx512bw")]
#[inline]
fn exchange<const LO: i32, const HI: i32>(a: __m512i, b: __m512i) -> (__m512i, __m512i) {
    (
        _mm512_shuffle_i64x2::<LO>(a, b),
        _mm512_shuffle_i64x2::<HI>(a, b),
    )
}

/// Transposes, inside each 128-bit quarter, the 8 x 8 matrix of 16-bit
/// lanes whose row `k` is (that quarter of) `u[k]`. Its own inverse.
#[target_feature(enable = "avx512f,avx512bw")]
#[inline]
fn transpose(u: &mut [__m512i; 8]) {
    // a[2p], a[2p + 1]: columns 0-3 and 4-7 of rows 2p, 2p + 1, interleaved.
    let a = [
        _mm512_unpacklo_epi16(u[0], u[1]),
        _mm512_unpackhi_epi16(u[0], u[1]),
        _mm512_unpacklo_epi16(u[2], u[3]),
        _mm512_unpackhi_epi16(u[2], u[3]),
        _mm512_unpacklo_epi16(u[4], u[5]),
        _mm512_unpackhi_epi16(u[4], u[5]),
        _mm512_unpacklo_epi16(u[6], u[7]),
        _mm512_unpackhi_epi16(u[6], u[7]),
    ];
    // b[c]: columns 2c, 2c + 1 of rows 0-3; b[c + 4]: the same of rows 4-7.
    let b = [
        _mm512_unpacklo_epi32(a[0], a[2]),
        _mm512_unpackhi_epi32(a[0], a[2]),
        _mm512_unpacklo_epi32(a[1], a[3]),
        _mm512_unpackhi_epi32(a[1], a[3]),
        _mm512_unpacklo_epi32(a[4], a[6]),
        _mm512_unpackhi_epi32(a[4], a[6]),
        _mm512_unpacklo_epi32(a[5], a[7]),
        _mm512_unpackhi_epi32(a[5], a[7]),
    ];
    for c in 0..4 {
        u[2 * c] = _mm512_unpacklo_epi64(b[c], b[c + 4]);
        u[2 * c + 1] = _mm512_unpackhi_epi64(b[c], b[c + 4]);
    }
}

/// Between the layout after exchange 2 and the rows: in each half `p`,
/// slot `8 p + rev3(k)` goes through the transpose as its row `k` and
/// comes out in slot `8 p + k`; with `ROWS = false`, the way back.
#[target_feature(enable = "avx512f,avx512bw")]
#[inline]
fn transpose_halves<const ROWS: bool>(v: &mut [__m512i; 16]) {
    for p in 0..2 {
        let mut u = [_mm512_setzero_si512(); 8];
        for (k, x) in u.iter_mut().enumerate() {
            *x = v[8 * p + if ROWS { rev3(k) } else { k }];
        }
        transpose(&mut u);
        for (k, x) in u.iter().enumerate() {
            v[8 * p + if ROWS { k } else { rev3(k) }] = *x;
        }
    }
}

// The transforms: each layer is a loop over the eight pairs `k`, whose
// twiddle is `k L / 8` of the layer's `L` (the loops unroll, and the
// sixteen slots stay in registers).

#[target_feature(enable = "avx512f,avx512bw")]
fn forward_avx512(r: &mut [i16; N]) {
    let s = &FORWARD;
    let (r, _) = r.as_chunks_mut::<32>();
    let mut v = [_mm512_setzero_si512(); 16];
    // Natural layout: distances 256, 128 (reducing x), 64, 32 (reducing x).
    for k in 0..8 {
        let (i, j) = pair(k, 8);
        (v[i], v[j]) = ct::<false>(load32(&r[i]), load32(&r[j]), &s.d256[0]);
    }
    for k in 0..8 {
        let (i, j) = pair(k, 4);
        (v[i], v[j]) = ct::<true>(v[i], v[j], &s.d128[k / 4]);
    }
    for k in 0..8 {
        let (i, j) = pair(k, 2);
        (v[i], v[j]) = ct::<false>(v[i], v[j], &s.d64[k / 2]);
    }
    for k in 0..8 {
        let (i, j) = pair(k, 1);
        (v[i], v[j]) = ct::<true>(v[i], v[j], &s.d32[k]);
    }
    // Exchange 1 (slot bit 2: b3 out, b1 in), distance 16.
    for k in 0..8 {
        let (i, j) = pair(k, 2);
        (v[i], v[j]) = exchange::<0x44, 0xee>(v[i], v[j]);
        (v[i], v[j]) = ct::<false>(v[i], v[j], &s.d16[k]);
    }
    // Exchange 2 (slot bit 4: b4 out, b0 in), distance 8 (reducing x).
    for k in 0..8 {
        let (i, j) = pair(k, 4);
        (v[i], v[j]) = exchange::<0x88, 0xdd>(v[i], v[j]);
        (v[i], v[j]) = ct::<true>(v[i], v[j], &s.d8[k]);
    }
    transpose_halves::<true>(&mut v);
    // Rows: distances 4, 2 (reducing x), 1.
    for k in 0..8 {
        let (i, j) = pair(k, 4);
        (v[i], v[j]) = ct::<false>(v[i], v[j], &s.d4[k / 4]);
    }
    for k in 0..8 {
        let (i, j) = pair(k, 2);
        (v[i], v[j]) = ct::<true>(v[i], v[j], &s.d2[k / 2]);
    }
    // Distance 1, then the final reduction; slot 8p + j holds lanes
    // 64j + 32p .., chunk 2j + p.
    for k in 0..8 {
        let (i, j) = pair(k, 1);
        let (x, y) = ct::<false>(v[i], v[j], &s.d1[k]);
        store32(&mut r[2 * (i % 8) + i / 8], barrett(x));
        store32(&mut r[2 * (j % 8) + j / 8], barrett(y));
    }
}

#[target_feature(enable = "avx512f,avx512bw")]
fn inverse_avx512(r: &mut [i16; N]) {
    let s = &INVERSE;
    let (r, _) = r.as_chunks_mut::<32>();
    let mut v = [_mm512_setzero_si512(); 16];
    // Rows: distances 1, 2, 4.
    for k in 0..8 {
        let (i, j) = pair(k, 1);
        let (x, y) = (
            load32(&r[2 * (i % 8) + i / 8]),
            load32(&r[2 * (j % 8) + j / 8]),
        );
        (v[i], v[j]) = gs(x, y, &s.d1[k]);
    }
    for k in 0..8 {
        let (i, j) = pair(k, 2);
        (v[i], v[j]) = gs(v[i], v[j], &s.d2[k / 2]);
    }
    for k in 0..8 {
        let (i, j) = pair(k, 4);
        (v[i], v[j]) = gs(v[i], v[j], &s.d4[k / 4]);
    }
    transpose_halves::<false>(&mut v);
    // Distance 8, exchange 2 backwards (slot bit 4: b0 out, b4 in).
    for k in 0..8 {
        let (i, j) = pair(k, 4);
        (v[i], v[j]) = gs(v[i], v[j], &s.d8[k]);
        (v[i], v[j]) = exchange::<0x44, 0xee>(v[i], v[j]);
    }
    // Distance 16, exchange 1 backwards (slot bit 2: b1 out, b3 in).
    for k in 0..8 {
        let (i, j) = pair(k, 2);
        (v[i], v[j]) = gs(v[i], v[j], &s.d16[k]);
        (v[i], v[j]) = exchange::<0x88, 0xdd>(v[i], v[j]);
    }
    // Natural layout: distances 32, 64, 128.
    for k in 0..8 {
        let (i, j) = pair(k, 1);
        (v[i], v[j]) = gs(v[i], v[j], &s.d32[k]);
    }
    for k in 0..8 {
        let (i, j) = pair(k, 2);
        (v[i], v[j]) = gs(v[i], v[j], &s.d64[k / 2]);
    }
    for k in 0..8 {
        let (i, j) = pair(k, 4);
        (v[i], v[j]) = gs(v[i], v[j], &s.d128[k / 4]);
    }
    // Distance 256 with the factor n^{-1}.
    for k in 0..8 {
        let (i, j) = pair(k, 8);
        let (x, y) = (v[i], v[j]);
        store32(&mut r[i], fqmul(_mm512_add_epi16(x, y), &SCALE));
        store32(&mut r[j], fqmul(_mm512_sub_epi16(x, y), &s.d256[0]));
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
    use super::*;

    #[test]
    fn slot_maps() {
        let d4: Vec<usize> = (0..8).map(|k| lower(k, 4)).collect();
        assert_eq!(d4, [0, 1, 2, 3, 8, 9, 10, 11]);
        let d2: Vec<usize> = (0..8).map(|k| lower(k, 2)).collect();
        assert_eq!(d2, [0, 1, 4, 5, 8, 9, 12, 13]);
        let d1: Vec<usize> = (0..8).map(|k| lower(k, 1)).collect();
        assert_eq!(d1, [0, 2, 4, 6, 8, 10, 12, 14]);
        let r: Vec<usize> = (0..8).map(rev3).collect();
        assert_eq!(r, [0, 4, 2, 6, 1, 5, 3, 7]);
    }

    /// The lane versions of Barrett reduction and of the Montgomery
    /// product match the scalar ones in `ring` (the check shared by every
    /// backend).
    #[test]
    fn lane_arithmetic_matches_scalar() {
        if Avx512::detect().is_none() {
            eprintln!("no AVX-512F/BW on this CPU: AVX-512 lane test skipped");
            return;
        }
        let lanes = |v: __m512i| {
            let mut out = [0i16; 32];
            // SAFETY: AVX-512F/BW detected above.
            unsafe { store32(&mut out, v) };
            out
        };
        super::super::ntt::tests::check_lane_arithmetic::<32>(
            // SAFETY: AVX-512F/BW detected above.
            &|x| lanes(unsafe { barrett(load32(x)) }),
            // SAFETY: as above.
            &|x, z| lanes(unsafe { fqmul(load32(x), &splat(z)) }),
        );
    }
}
