//! `F_p` slice kernels for `p = 2^127 + 45` on AVX-512 IFMA (x86-64).
//!
//! Eight elements per 512-bit vector, each in three 52-bit limbs held in three vectors:
//! `x = x0 + x1 2^52 + x2 2^104` (`x2 < 2^24` for `x < 2^128`). `vpmadd52luq` / `vpmadd52huq`
//! add the low / high 52 bits of the 104-bit limb products to 64-bit column sums, so a product
//! is seventeen instructions into five columns `c0 .. c4` (value `Σ c_k 2^(52k)`; the high half
//! of `x2 y2` is zero while both factors stay below `2^130`, and every operand here does).
//!
//! Reduction ([`reduce`]): normalize the columns to 52 bits, split the value at bit 127 into
//! `L + H 2^127` and use `2^127 ≡ -45`: `L - 45 H` in signed limbs is in `(-2^137, 2^127)`; a
//! second fold of its bits from 127 on (at most `2^12` of them, negative) gives a value in
//! `[0, 2^127 + 2^18)`, and one conditional subtraction of `p` the canonical result.
//! Differences `h - l` enter products as `h - l + p` and sums `y1 + y2` unreduced (both below
//! `2p`), so only the final value of each element is reduced.
//!
//! Inner products never reduce per element: the column sums are moved into exact `u128`
//! totals every [`FLUSH`] elements (before any 64-bit lane can overflow) and returned for the
//! caller to reduce once.
//!
//! Tails shorter than a vector go through the same code in a zero-padded block of eight.
//! Every function is safe to call only through the [`Ifma`] token, created only by run-time
//! detection of AVX-512F, AVX-512DQ and AVX-512 IFMA.
#![allow(unsafe_code)]

use core::arch::x86_64::*;

/// Elements per vector.
const LANES: usize = 8;
/// `2^52 - 1`.
const M52: i64 = (1 << 52) - 1;
/// `2^23 - 1` (the bits of limb 2 below `2^127`).
const M23: i64 = (1 << 23) - 1;
/// Elements per lane between two flushes of an inner product's columns. A local inner product
/// adds at most ten terms below `2^52` to a column per element: `256 · 10 · 2^52 < 2^64`.
const FLUSH: usize = 256;
const _: () = assert!((FLUSH as u128) * 10 * (1u128 << 52) < 1u128 << 64);

/// Proof that the CPU has AVX-512F, AVX-512DQ and AVX-512 IFMA.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Ifma {
    _private: (),
}

impl Ifma {
    pub(crate) fn detect() -> Option<Self> {
        (is_x86_feature_detected!("avx512f")
            && is_x86_feature_detected!("avx512dq")
            && is_x86_feature_detected!("avx512ifma"))
        .then_some(Self { _private: () })
    }
}

/// Eight elements in limbs.
#[derive(Clone, Copy)]
struct Limbs([__m512i; 3]);

/// Five column sums, the low and high halves of the limb products kept apart (two independent
/// dependency chains per column; `cols()` adds them).
#[derive(Clone, Copy)]
struct Cols {
    lo: [__m512i; 5],
    hi: [__m512i; 5],
}

#[inline]
#[target_feature(enable = "avx512f")]
fn splat(x: i64) -> __m512i {
    _mm512_set1_epi64(x)
}

/// Eight elements from 128 bytes of little-endian `u128`s.
#[inline]
#[target_feature(enable = "avx512f")]
fn load(x: &[u128; LANES]) -> Limbs {
    // SAFETY: `x` is 128 readable bytes; `loadu` has no alignment requirement.
    let (a, b) = unsafe {
        (
            _mm512_loadu_si512(x.as_ptr().cast()),
            _mm512_loadu_si512(x.as_ptr().add(4).cast()),
        )
    };
    let lo = _mm512_permutex2var_epi64(a, _mm512_setr_epi64(0, 2, 4, 6, 8, 10, 12, 14), b);
    let hi = _mm512_permutex2var_epi64(a, _mm512_setr_epi64(1, 3, 5, 7, 9, 11, 13, 15), b);
    let m = splat(M52);
    Limbs([
        _mm512_and_si512(lo, m),
        _mm512_and_si512(
            _mm512_or_si512(_mm512_srli_epi64::<52>(lo), _mm512_slli_epi64::<12>(hi)),
            m,
        ),
        _mm512_srli_epi64::<40>(hi),
    ])
}

/// Stores eight values below `2^128` given in normalized limbs (`x0, x1 < 2^52`, `x2 < 2^24`).
#[inline]
#[target_feature(enable = "avx512f")]
fn store(out: &mut [u128; LANES], x: Limbs) {
    let [x0, x1, x2] = x.0;
    let lo = _mm512_or_si512(x0, _mm512_slli_epi64::<52>(x1));
    let hi = _mm512_or_si512(_mm512_srli_epi64::<12>(x1), _mm512_slli_epi64::<40>(x2));
    let a = _mm512_permutex2var_epi64(lo, _mm512_setr_epi64(0, 8, 1, 9, 2, 10, 3, 11), hi);
    let b = _mm512_permutex2var_epi64(lo, _mm512_setr_epi64(4, 12, 5, 13, 6, 14, 7, 15), hi);
    // SAFETY: `out` is 128 writable bytes, uniquely borrowed; `storeu` needs no alignment.
    unsafe {
        _mm512_storeu_si512(out.as_mut_ptr().cast(), a);
        _mm512_storeu_si512(out.as_mut_ptr().add(4).cast(), b);
    }
}

/// One element in every lane.
#[inline]
#[target_feature(enable = "avx512f")]
fn broadcast(s: u128) -> Limbs {
    let m = (1u128 << 52) - 1;
    Limbs([
        splat((s & m) as i64),
        splat(((s >> 52) & m) as i64),
        splat((s >> 104) as i64),
    ])
}

/// `x + y` with normalized limbs, not reduced (below `2p` for reduced inputs).
#[inline]
#[target_feature(enable = "avx512f")]
fn add_raw(x: Limbs, y: Limbs) -> Limbs {
    let m = splat(M52);
    let s0 = _mm512_add_epi64(x.0[0], y.0[0]);
    let s1 = _mm512_add_epi64(
        _mm512_add_epi64(x.0[1], y.0[1]),
        _mm512_srli_epi64::<52>(s0),
    );
    let s2 = _mm512_add_epi64(
        _mm512_add_epi64(x.0[2], y.0[2]),
        _mm512_srli_epi64::<52>(s1),
    );
    Limbs([_mm512_and_si512(s0, m), _mm512_and_si512(s1, m), s2])
}

/// `h - l + p` with normalized limbs, not reduced (in `(0, 2p)` for reduced inputs). The limbs
/// of `p` are `(45, 0, 2^23)`.
#[inline]
#[target_feature(enable = "avx512f")]
fn sub_raw(h: Limbs, l: Limbs) -> Limbs {
    let m = splat(M52);
    let d0 = _mm512_add_epi64(_mm512_sub_epi64(h.0[0], l.0[0]), splat(45));
    let d1 = _mm512_add_epi64(
        _mm512_sub_epi64(h.0[1], l.0[1]),
        _mm512_srai_epi64::<52>(d0),
    );
    let d2 = _mm512_add_epi64(
        _mm512_add_epi64(_mm512_sub_epi64(h.0[2], l.0[2]), splat(1 << 23)),
        _mm512_srai_epi64::<52>(d1),
    );
    Limbs([_mm512_and_si512(d0, m), _mm512_and_si512(d1, m), d2])
}

impl Cols {
    #[inline]
    #[target_feature(enable = "avx512f")]
    fn zero() -> Self {
        let z = _mm512_setzero_si512();
        Cols {
            lo: [z; 5],
            hi: [z; 5],
        }
    }

    /// Columns holding `x` (normalized limbs).
    #[inline]
    #[target_feature(enable = "avx512f")]
    fn of(x: Limbs) -> Self {
        let mut c = Self::zero();
        c.lo[..3].copy_from_slice(&x.0);
        c
    }

    /// Adds the product `a b` (limbs below `2^52`, top limbs below `2^26`).
    #[inline]
    #[target_feature(enable = "avx512f,avx512ifma")]
    fn mul_add(&mut self, a: Limbs, b: Limbs) {
        let [a0, a1, a2] = a.0;
        let [b0, b1, b2] = b.0;
        let (lo, hi) = (&mut self.lo, &mut self.hi);
        lo[0] = _mm512_madd52lo_epu64(lo[0], a0, b0);
        hi[1] = _mm512_madd52hi_epu64(hi[1], a0, b0);
        lo[1] = _mm512_madd52lo_epu64(lo[1], a0, b1);
        lo[1] = _mm512_madd52lo_epu64(lo[1], a1, b0);
        hi[2] = _mm512_madd52hi_epu64(hi[2], a0, b1);
        hi[2] = _mm512_madd52hi_epu64(hi[2], a1, b0);
        lo[2] = _mm512_madd52lo_epu64(lo[2], a0, b2);
        lo[2] = _mm512_madd52lo_epu64(lo[2], a1, b1);
        lo[2] = _mm512_madd52lo_epu64(lo[2], a2, b0);
        hi[3] = _mm512_madd52hi_epu64(hi[3], a0, b2);
        hi[3] = _mm512_madd52hi_epu64(hi[3], a1, b1);
        hi[3] = _mm512_madd52hi_epu64(hi[3], a2, b0);
        lo[3] = _mm512_madd52lo_epu64(lo[3], a1, b2);
        lo[3] = _mm512_madd52lo_epu64(lo[3], a2, b1);
        hi[4] = _mm512_madd52hi_epu64(hi[4], a1, b2);
        hi[4] = _mm512_madd52hi_epu64(hi[4], a2, b1);
        lo[4] = _mm512_madd52lo_epu64(lo[4], a2, b2);
    }

    /// The five column sums.
    #[inline]
    #[target_feature(enable = "avx512f")]
    fn cols(&self) -> [__m512i; 5] {
        core::array::from_fn(|k| _mm512_add_epi64(self.lo[k], self.hi[k]))
    }
}

/// `45 x` (lane-wise, exact for `|x| < 2^57`).
#[inline]
#[target_feature(enable = "avx512f,avx512dq")]
fn times45(x: __m512i) -> __m512i {
    _mm512_mullo_epi64(x, splat(45))
}

/// The canonical residues of the column values `Σ c_k 2^(52k)` (each below `2^260`, columns
/// below `2^63`).
#[inline]
#[target_feature(enable = "avx512f,avx512dq")]
fn reduce(c: [__m512i; 5]) -> Limbs {
    let m = splat(M52);
    let m23 = splat(M23);
    // Normalize: c0 .. c3 below 2^52, c4 below 2^52 (the value is below 2^260).
    let [mut c0, mut c1, mut c2, mut c3, mut c4] = c;
    c1 = _mm512_add_epi64(c1, _mm512_srli_epi64::<52>(c0));
    c0 = _mm512_and_si512(c0, m);
    c2 = _mm512_add_epi64(c2, _mm512_srli_epi64::<52>(c1));
    c1 = _mm512_and_si512(c1, m);
    c3 = _mm512_add_epi64(c3, _mm512_srli_epi64::<52>(c2));
    c2 = _mm512_and_si512(c2, m);
    c4 = _mm512_add_epi64(c4, _mm512_srli_epi64::<52>(c3));
    c3 = _mm512_and_si512(c3, m);
    // H = value >> 127 = (c2 >> 23) + c3 2^29 + c4 2^81, in limbs h0, h1 < 2^52, h2 < 2^29.
    let h0 = _mm512_or_si512(
        _mm512_srli_epi64::<23>(c2),
        _mm512_and_si512(_mm512_slli_epi64::<29>(c3), m),
    );
    let h1 = _mm512_or_si512(
        _mm512_srli_epi64::<23>(c3),
        _mm512_and_si512(_mm512_slli_epi64::<29>(c4), m),
    );
    let h2 = _mm512_srli_epi64::<23>(c4);
    // r = L - 45 H (signed limbs), then a signed carry: r in (-2^137, 2^127).
    let mut r0 = _mm512_sub_epi64(c0, times45(h0));
    let mut r1 = _mm512_sub_epi64(c1, times45(h1));
    let mut r2 = _mm512_sub_epi64(_mm512_and_si512(c2, m23), times45(h2));
    r1 = _mm512_add_epi64(r1, _mm512_srai_epi64::<52>(r0));
    r0 = _mm512_and_si512(r0, m);
    r2 = _mm512_add_epi64(r2, _mm512_srai_epi64::<52>(r1));
    r1 = _mm512_and_si512(r1, m);
    // Second fold: t = r >> 127 in [-2^12 - 1, 0]; r = low 127 bits - 45 t, in [0, 2^127 + 2^18).
    let t = _mm512_srai_epi64::<23>(r2);
    r2 = _mm512_and_si512(r2, m23);
    r0 = _mm512_sub_epi64(r0, times45(t));
    r1 = _mm512_add_epi64(r1, _mm512_srli_epi64::<52>(r0));
    r0 = _mm512_and_si512(r0, m);
    r2 = _mm512_add_epi64(r2, _mm512_srli_epi64::<52>(r1));
    r1 = _mm512_and_si512(r1, m);
    // r >= p iff u = r - 45 >= 2^127; then r - p = u - 2^127.
    let mut u0 = _mm512_sub_epi64(r0, splat(45));
    let mut u1 = _mm512_add_epi64(r1, _mm512_srai_epi64::<52>(u0));
    u0 = _mm512_and_si512(u0, m);
    let u2 = _mm512_add_epi64(r2, _mm512_srai_epi64::<52>(u1));
    u1 = _mm512_and_si512(u1, m);
    let ge = _mm512_cmpgt_epi64_mask(u2, m23);
    Limbs([
        _mm512_mask_blend_epi64(ge, r0, u0),
        _mm512_mask_blend_epi64(ge, r1, u1),
        _mm512_mask_blend_epi64(ge, r2, _mm512_and_si512(u2, m23)),
    ])
}

/// `l + (h - l) s`, reduced.
#[inline]
#[target_feature(enable = "avx512f,avx512dq,avx512ifma")]
fn line(l: Limbs, h: Limbs, s: Limbs) -> Limbs {
    let mut c = Cols::of(l);
    c.mul_add(sub_raw(h, l), s);
    reduce(c.cols())
}

/// `Σ a_i b_i` over the given pairs (at most four: a column then holds at most twelve terms
/// below `2^52` per half), reduced.
#[inline]
#[target_feature(enable = "avx512f,avx512dq,avx512ifma")]
fn products<const K: usize>(pairs: [(Limbs, Limbs); K]) -> Limbs {
    let mut c = Cols::zero();
    for (a, b) in pairs {
        c.mul_add(a, b);
    }
    reduce(c.cols())
}

/// Runs `f` on every block of eight positions of `n`, the last one zero-padded: `f` gets the
/// block's inputs (`ins`, copied into padded buffers for the tail) and writes its output into
/// the block of `out`.
#[inline(always)]
fn blocks<const K: usize>(
    out: &mut [u128],
    ins: [&[u128]; K],
    mut f: impl FnMut(&mut [u128; LANES], [&[u128; LANES]; K]),
) {
    let n = out.len();
    debug_assert!(ins.iter().all(|x| x.len() == n));
    let (oc, ot) = out.as_chunks_mut::<LANES>();
    let whole = oc.len();
    for (i, o) in oc.iter_mut().enumerate() {
        f(
            o,
            ins.map(|x| {
                let (c, _) = x.as_chunks::<LANES>();
                &c[i]
            }),
        );
    }
    if !ot.is_empty() {
        let pad = ins.map(|x| {
            let mut b = [0u128; LANES];
            b[..ot.len()].copy_from_slice(&x[whole * LANES..]);
            b
        });
        let mut o = [0u128; LANES];
        o[..ot.len()].copy_from_slice(ot);
        f(&mut o, core::array::from_fn(|k| &pad[k]));
        ot.copy_from_slice(&o[..ot.len()]);
    }
}

/// Eight elements from position `i` of `v[..n]`, zero-padded past `n`.
#[inline]
#[target_feature(enable = "avx512f")]
fn load_at(v: &[u128], i: usize, n: usize) -> Limbs {
    match v.get(i..i + LANES).filter(|_| i + LANES <= n) {
        Some(w) => load(&w.as_chunks::<LANES>().0[0]),
        None => {
            let mut b = [0u128; LANES];
            let m = n.saturating_sub(i).min(LANES);
            b[..m].copy_from_slice(&v[i..i + m]);
            load(&b)
        }
    }
}

/// Stores eight elements at position `i` of `o`, as many as fit.
#[inline]
#[target_feature(enable = "avx512f")]
fn store_at(o: &mut [u128], i: usize, x: Limbs) {
    match o.get_mut(i..i + LANES) {
        Some(w) => store(&mut w.as_chunks_mut::<LANES>().0[0], x),
        None => {
            let mut b = [0u128; LANES];
            store(&mut b, x);
            let m = o.len().saturating_sub(i).min(LANES);
            o[i..i + m].copy_from_slice(&b[..m]);
        }
    }
}

/// `out[k] = a[k] b[k] mod p`.
pub(crate) fn mul(_t: Ifma, out: &mut [u128], a: &[u128], b: &[u128]) {
    // SAFETY: the token proves AVX-512F, AVX-512DQ and AVX-512 IFMA.
    unsafe { mul_impl::<false>(out, a, b) }
}

/// `out[k] = out[k] + a[k] b[k] mod p`.
pub(crate) fn mul_add(_t: Ifma, out: &mut [u128], a: &[u128], b: &[u128]) {
    // SAFETY: the token proves AVX-512F, AVX-512DQ and AVX-512 IFMA.
    unsafe { mul_impl::<true>(out, a, b) }
}

#[target_feature(enable = "avx512f,avx512dq,avx512ifma")]
fn mul_impl<const ADD: bool>(out: &mut [u128], a: &[u128], b: &[u128]) {
    blocks(out, [a, b], |o, [x, y]| {
        let mut c = if ADD { Cols::of(load(o)) } else { Cols::zero() };
        c.mul_add(load(x), load(y));
        store(o, reduce(c.cols()));
    });
}

/// `out[k] = out[k] + a[k] s mod p`.
pub(crate) fn scale_add(_t: Ifma, out: &mut [u128], a: &[u128], s: u128) {
    // SAFETY: the token proves AVX-512F, AVX-512DQ and AVX-512 IFMA.
    unsafe { scale_add_impl(out, a, s) }
}

#[target_feature(enable = "avx512f,avx512dq,avx512ifma")]
fn scale_add_impl(out: &mut [u128], a: &[u128], s: u128) {
    let s = broadcast(s);
    blocks(out, [a], |o, [x]| {
        let mut c = Cols::of(load(o));
        c.mul_add(load(x), s);
        store(o, reduce(c.cols()));
    });
}

/// `out[k] = lo[k] + (hi[k] - lo[k]) s mod p`.
pub(crate) fn lerp(_t: Ifma, out: &mut [u128], lo: &[u128], hi: &[u128], s: u128) {
    // SAFETY: the token proves AVX-512F, AVX-512DQ and AVX-512 IFMA.
    unsafe { lerp_impl(out, lo, hi, s) }
}

#[target_feature(enable = "avx512f,avx512dq,avx512ifma")]
fn lerp_impl(out: &mut [u128], lo: &[u128], hi: &[u128], s: u128) {
    let s = broadcast(s);
    blocks(out, [lo, hi], |o, [l, h]| {
        store(o, line(load(l), load(h), s))
    });
}

/// `v[k] = v[k] + (w[k] - v[k]) s mod p`.
pub(crate) fn lerp_assign(_t: Ifma, v: &mut [u128], w: &[u128], s: u128) {
    // SAFETY: the token proves AVX-512F, AVX-512DQ and AVX-512 IFMA.
    unsafe { lerp_assign_impl(v, w, s) }
}

#[target_feature(enable = "avx512f,avx512dq,avx512ifma")]
fn lerp_assign_impl(v: &mut [u128], w: &[u128], s: u128) {
    let s = broadcast(s);
    blocks(v, [w], |o, [h]| store(o, line(load(o), load(h), s)));
}

/// A level-1 fold of `Verify` for the pairs `(lo_k, hi_k)`: `out[j] = X_lo + (X_hi - X_lo) s`
/// with `X = c x` (`c[0]` for the lower, `c[1]` for the upper entries) for `j < 2`, and `out[j]
/// = lo[j] + (hi[j] - lo[j]) s` for `j >= 2` (`hi` zero if `None`), given `[s, 1 - s]`.
/// With `r`, `x` stands for `x + r y` (chained triples: `X = c (x + r y)`).
pub(crate) fn fold_lines(
    _t: Ifma,
    out: [&mut [u128]; 4],
    lo: [&[u128]; 4],
    hi: Option<[&[u128]; 4]>,
    c: [&[u128]; 2],
    [s, one_minus_s]: [u128; 2],
    r: Option<u128>,
) {
    // SAFETY: the token proves AVX-512F, AVX-512DQ and AVX-512 IFMA.
    unsafe {
        match r {
            None => fold_lines_impl::<false>(out, lo, hi, c, s, one_minus_s, 0),
            Some(r) => fold_lines_impl::<true>(out, lo, hi, c, s, one_minus_s, r),
        }
    }
}

/// `X_lo + (X_hi - X_lo) s = x_lo c_lo (1 - s) + x_hi c_hi s`: the two coefficients are formed
/// once per position and shared by `x_1` and `x_2`; each output is reduced once. `CHAIN`:
/// `x + r y` in place of `x`, with the coefficients times `r` also formed once per position
/// (four products per output, still reduced once).
#[allow(clippy::too_many_arguments)]
#[target_feature(enable = "avx512f,avx512dq,avx512ifma")]
fn fold_lines_impl<const CHAIN: bool>(
    out: [&mut [u128]; 4],
    lo: [&[u128]; 4],
    hi: Option<[&[u128]; 4]>,
    c: [&[u128]; 2],
    s: u128,
    one_minus_s: u128,
    r: u128,
) {
    let (sv, tv, rv) = (broadcast(s), broadcast(one_minus_s), broadcast(r));
    let [o1, o2, o3, o4] = out;
    let n = o1.len();
    let mut i = 0;
    while i < n {
        let ld = |v: &[u128]| load_at(v, i, n);
        let l = lo.map(ld);
        let d_lo = products([(ld(c[0]), tv)]);
        let e_lo = if CHAIN { products([(d_lo, rv)]) } else { d_lo };
        let res: [Limbs; 4] = match hi {
            Some(hi) => {
                let h = hi.map(ld);
                let d_hi = products([(ld(c[1]), sv)]);
                let e_hi = if CHAIN { products([(d_hi, rv)]) } else { d_hi };
                let x = |j: usize| {
                    if CHAIN {
                        products([
                            (l[j], d_lo),
                            (l[j + 2], e_lo),
                            (h[j], d_hi),
                            (h[j + 2], e_hi),
                        ])
                    } else {
                        products([(l[j], d_lo), (h[j], d_hi)])
                    }
                };
                [x(0), x(1), line(l[2], h[2], sv), line(l[3], h[3], sv)]
            }
            None => {
                let x = |j: usize| {
                    if CHAIN {
                        products([(l[j], d_lo), (l[j + 2], e_lo)])
                    } else {
                        products([(l[j], d_lo)])
                    }
                };
                [x(0), x(1), products([(l[2], tv)]), products([(l[3], tv)])]
            }
        };
        for (o, r) in [&mut *o1, &mut *o2, &mut *o3, &mut *o4]
            .into_iter()
            .zip(res)
        {
            store_at(o, i, r);
        }
        i += LANES;
    }
}

/// `out[j][k] = c[k] (x[j][k] + r y[j][k]) mod p` for `j = 0, 1` (the scaled `x` of chained
/// triples).
pub(crate) fn chain_scale(
    _t: Ifma,
    out: [&mut [u128]; 2],
    x: [&[u128]; 2],
    y: [&[u128]; 2],
    c: &[u128],
    r: u128,
) {
    // SAFETY: the token proves AVX-512F, AVX-512DQ and AVX-512 IFMA.
    unsafe { chain_scale_impl(out, x, y, c, r) }
}

/// `c x + (c r) y`: `c r` is formed once per position and shared by both outputs, each
/// reduced once.
#[target_feature(enable = "avx512f,avx512dq,avx512ifma")]
fn chain_scale_impl(out: [&mut [u128]; 2], x: [&[u128]; 2], y: [&[u128]; 2], c: &[u128], r: u128) {
    let rv = broadcast(r);
    let [o1, o2] = out;
    let n = o1.len();
    let mut i = 0;
    while i < n {
        let ld = |v: &[u128]| load_at(v, i, n);
        let cv = ld(c);
        let cr = products([(cv, rv)]);
        for (j, o) in [&mut *o1, &mut *o2].into_iter().enumerate() {
            store_at(o, i, products([(ld(x[j]), cv), (ld(y[j]), cr)]));
        }
        i += LANES;
    }
}

/// `out[k] = a1[k] (b1[k] + b2[k]) + a2[k] b1[k] mod p`.
pub(crate) fn local_product(
    _t: Ifma,
    out: &mut [u128],
    a1: &[u128],
    a2: &[u128],
    b1: &[u128],
    b2: &[u128],
) {
    // SAFETY: the token proves AVX-512F, AVX-512DQ and AVX-512 IFMA.
    unsafe { local_product_impl(out, a1, a2, b1, b2) }
}

#[target_feature(enable = "avx512f,avx512dq,avx512ifma")]
fn local_product_impl(out: &mut [u128], a1: &[u128], a2: &[u128], b1: &[u128], b2: &[u128]) {
    blocks(out, [a1, a2, b1, b2], |o, [x1, x2, y1, y2]| {
        let y1 = load(y1);
        store(
            o,
            products([(load(x1), add_raw(y1, load(y2))), (load(x2), y1)]),
        );
    });
}

/// The exact column totals `[C_0, .., C_4]` of `Σ_k a[k] b[k]` (the sum is `Σ C_j 2^(52j)`;
/// each total is below `2^67` per [`FLUSH`] · 8 elements, so it cannot overflow).
pub(crate) fn inner(_t: Ifma, a: &[u128], b: &[u128]) -> [u128; 5] {
    // SAFETY: the token proves AVX-512F, AVX-512DQ and AVX-512 IFMA.
    unsafe { inner_impl(a, b, None) }
}

/// The column totals of `Σ_k a1[k] (b1[k] + b2[k]) + a2[k] b1[k]`, as [`inner`].
pub(crate) fn local_inner(
    _t: Ifma,
    a1: &[u128],
    a2: &[u128],
    b1: &[u128],
    b2: &[u128],
) -> [u128; 5] {
    // SAFETY: the token proves AVX-512F, AVX-512DQ and AVX-512 IFMA.
    unsafe { inner_impl(b1, a1, Some((a2, b2))) }
}

/// Calls `f` on every block of eight positions of the inputs (all of one length), the last
/// one zero-padded.
#[inline(always)]
fn in_blocks<const K: usize>(ins: [&[u128]; K], mut f: impl FnMut([&[u128; LANES]; K])) {
    let n = ins.first().map_or(0, |x| x.len());
    debug_assert!(ins.iter().all(|x| x.len() == n));
    let whole = n / LANES;
    for i in 0..whole {
        f(ins.map(|x| {
            let (c, _) = x.as_chunks::<LANES>();
            &c[i]
        }));
    }
    if n > whole * LANES {
        let pad = ins.map(|x| {
            let mut b = [0u128; LANES];
            b[..n - whole * LANES].copy_from_slice(&x[whole * LANES..]);
            b
        });
        f(core::array::from_fn(|k| &pad[k]));
    }
}

/// Adds the columns' values, lane by lane, to exact totals.
#[inline]
#[target_feature(enable = "avx512f")]
fn flush(totals: &mut [u128; 5], c: &Cols) {
    for (t, v) in totals.iter_mut().zip(c.cols()) {
        let mut lanes = [0u64; LANES];
        // SAFETY: `lanes` is 64 writable bytes; `storeu` needs no alignment.
        unsafe { _mm512_storeu_si512(lanes.as_mut_ptr().cast(), v) };
        *t += lanes.iter().map(|&x| u128::from(x)).sum::<u128>();
    }
}

/// Runs `body` over the ranges of at most [`FLUSH`] vectors of `0..n`, each with fresh
/// columns that are flushed into the returned totals after it.
#[inline]
#[target_feature(enable = "avx512f")]
fn flushed<const K: usize>(
    n: usize,
    mut body: impl FnMut(core::ops::Range<usize>, &mut [Cols; K]),
) -> [[u128; 5]; K] {
    let mut totals = [[0u128; 5]; K];
    let mut start = 0;
    while start < n {
        let r = start..n.min(start + FLUSH * LANES);
        let mut c = [Cols::zero(); K];
        body(r.clone(), &mut c);
        for (t, c) in totals.iter_mut().zip(&c) {
            flush(t, c);
        }
        start = r.end;
    }
    totals
}

/// `Σ a (b + b2) + a2 b` for `Some((a2, b2))`, else `Σ a b`, as column totals.
#[target_feature(enable = "avx512f,avx512dq,avx512ifma")]
fn inner_impl(b: &[u128], a: &[u128], local: Option<(&[u128], &[u128])>) -> [u128; 5] {
    let [totals] = flushed(a.len(), |r, [c]| match local {
        None => in_blocks([&a[r.clone()], &b[r]], |[x, y]| {
            c.mul_add(load(x), load(y));
        }),
        Some((a2, b2)) => in_blocks(
            [&a[r.clone()], &a2[r.clone()], &b[r.clone()], &b2[r]],
            |[x1, x2, y1, y2]| {
                let y1 = load(y1);
                c.mul_add(load(x1), add_raw(y1, load(y2)));
                c.mul_add(load(x2), y1);
            },
        ),
    });
    totals
}

/// `2 h - l + p` with normalized limbs, not reduced (in `(0, 3p)` for reduced inputs).
#[inline]
#[target_feature(enable = "avx512f")]
fn twice_sub_raw(h: Limbs, l: Limbs) -> Limbs {
    let m = splat(M52);
    let d0 = _mm512_add_epi64(
        _mm512_sub_epi64(_mm512_slli_epi64::<1>(h.0[0]), l.0[0]),
        splat(45),
    );
    let d1 = _mm512_add_epi64(
        _mm512_sub_epi64(_mm512_slli_epi64::<1>(h.0[1]), l.0[1]),
        _mm512_srai_epi64::<52>(d0),
    );
    let d2 = _mm512_add_epi64(
        _mm512_add_epi64(
            _mm512_sub_epi64(_mm512_slli_epi64::<1>(h.0[2]), l.0[2]),
            splat(1 << 23),
        ),
        _mm512_srai_epi64::<52>(d1),
    );
    Limbs([_mm512_and_si512(d0, m), _mm512_and_si512(d1, m), d2])
}

/// The column totals of `[Σ lp(b), Σ lp(2b - a)]` with `lp(x1, x2, y1, y2) = x1 (y1 + y2) +
/// x2 y1` over the positions of `a` (all four of one length; `b`'s four of one length, at most
/// that, zero after). `2b - a` is the line through `a` (at 0) and `b` (at 1) evaluated at 2;
/// where `b` is zero it is `-a`, and `lp(-a) = lp(a)`.
pub(crate) fn node_inner(_t: Ifma, a: [&[u128]; 4], b: [&[u128]; 4]) -> [[u128; 5]; 2] {
    // SAFETY: the token proves AVX-512F, AVX-512DQ and AVX-512 IFMA.
    unsafe { node_inner_impl(a, b) }
}

#[target_feature(enable = "avx512f,avx512dq,avx512ifma")]
fn node_inner_impl(a: [&[u128]; 4], b: [&[u128]; 4]) -> [[u128; 5]; 2] {
    let m = b[0].len();
    let [h1, mut hu] = flushed(m, |r, [c1, cu]| {
        let ins = [a[0], a[1], a[2], a[3], b[0], b[1], b[2], b[3]].map(|x| &x[r.clone()]);
        in_blocks(ins, |[a1, a2, a3, a4, b1, b2, b3, b4]| {
            let [b1, b2, b3, b4] = [b1, b2, b3, b4].map(|x| load(x));
            c1.mul_add(b1, add_raw(b3, b4));
            c1.mul_add(b2, b3);
            let f1 = twice_sub_raw(b1, load(a1));
            let f2 = twice_sub_raw(b2, load(a2));
            let f3 = twice_sub_raw(b3, load(a3));
            let f4 = twice_sub_raw(b4, load(a4));
            cu.mul_add(f1, add_raw(f3, f4));
            cu.mul_add(f2, f3);
        });
    });
    let rest = inner_impl(&a[2][m..], &a[0][m..], Some((&a[1][m..], &a[3][m..])));
    for (t, x) in hu.iter_mut().zip(rest) {
        *t += x;
    }
    [h1, hu]
}
