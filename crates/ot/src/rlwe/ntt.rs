//! The negacyclic NTT over `Z_q[X]/(X^512 + 1)` and its backends.
//!
//! The first six layers (butterfly distance 256 down to 8) work in place on
//! the natural layout, where each butterfly of a layer shares one twiddle
//! and the inner loops run over contiguous runs of at least 8 lanes. For the
//! last three layers (distances 4, 2, 1) the array is transposed from 64
//! blocks of 8 into 8 rows of 64, so that the partners of every butterfly
//! sit in two different rows and each row operation is again a contiguous
//! 64-lane loop with a per-lane twiddle table. The transform's output stays
//! in that transposed layout: evaluations are only ever multiplied
//! coefficient-wise, hashed to, or sent, so any fixed order is as good as
//! another, and the inverse starts from the same layout.
//!
//! Backends: [`Backend::Portable`] is plain Rust that LLVM vectorizes with
//! the baseline SSE2 instructions; [`Backend::Avx2`] compiles the same code
//! with AVX2 enabled (16 lanes), chosen at run time when the CPU has AVX2.
//! `TRISKELE_BACKEND=portable` forces the portable backend.

use super::ring::{barrett, fqmul, N, N_INV_MONT, ZETAS, ZETAS_INV};
use std::sync::OnceLock;

const ROW: usize = N / 8;

const fn gather(table: &[i16; N], base: usize, stride: usize, offset: usize) -> [i16; ROW] {
    let mut out = [0i16; ROW];
    let mut b = 0;
    while b < ROW {
        out[b] = table[base + stride * b + offset];
        b += 1;
    }
    out
}

/// Per-lane twiddles of the transposed layers: distance 4, 2 and 1.
const F4: [i16; ROW] = gather(&ZETAS, 64, 1, 0);
const F2: [[i16; ROW]; 2] = [gather(&ZETAS, 128, 2, 0), gather(&ZETAS, 128, 2, 1)];
const F1: [[i16; ROW]; 4] = [
    gather(&ZETAS, 256, 4, 0),
    gather(&ZETAS, 256, 4, 1),
    gather(&ZETAS, 256, 4, 2),
    gather(&ZETAS, 256, 4, 3),
];
const I4: [i16; ROW] = gather(&ZETAS_INV, 64, 1, 0);
const I2: [[i16; ROW]; 2] = [gather(&ZETAS_INV, 128, 2, 0), gather(&ZETAS_INV, 128, 2, 1)];
const I1: [[i16; ROW]; 4] = [
    gather(&ZETAS_INV, 256, 4, 0),
    gather(&ZETAS_INV, 256, 4, 1),
    gather(&ZETAS_INV, 256, 4, 2),
    gather(&ZETAS_INV, 256, 4, 3),
];

/// Two disjoint rows `a < b` of the transposed layout.
#[inline(always)]
fn rows(s: &mut [i16; N], a: usize, b: usize) -> (&mut [i16], &mut [i16]) {
    let (lo, hi) = s.split_at_mut(b * ROW);
    (&mut lo[a * ROW..(a + 1) * ROW], &mut hi[..ROW])
}

#[inline(always)]
fn ct_rows(x: &mut [i16], y: &mut [i16], z: &[i16; ROW]) {
    for ((x, y), &z) in x.iter_mut().zip(y.iter_mut()).zip(z.iter()) {
        let t = fqmul(z, *y);
        *y = *x - t;
        *x += t;
    }
}

#[inline(always)]
fn gs_rows(x: &mut [i16], y: &mut [i16], z: &[i16; ROW]) {
    for ((x, y), &z) in x.iter_mut().zip(y.iter_mut()).zip(z.iter()) {
        let t = *x;
        *x = barrett(t + *y);
        *y = fqmul(z, t - *y);
    }
}

#[inline(always)]
fn reduce_all(r: &mut [i16; N]) {
    for x in r.iter_mut() {
        *x = barrett(*x);
    }
}

/// The forward transform (generic body, compiled once per backend).
///
/// Bounds: inputs in `(-q, q)`. A layer adds at most `q/2 + |x| q/2^17`;
/// reducing after every odd layer keeps all values below `2^15`
/// (`q -> 24842 -> (Barrett) 7682 -> 16262 -> 25850 -> ...`).
#[inline(always)]
pub(crate) fn forward_body(r: &mut [i16; N]) {
    let mut k = 1;
    let mut len = N / 2;
    let mut layer = 0;
    while len >= 8 {
        for block in r.chunks_exact_mut(2 * len) {
            let zeta = ZETAS[k];
            k += 1;
            let (lo, hi) = block.split_at_mut(len);
            for (x, y) in lo.iter_mut().zip(hi.iter_mut()) {
                let t = fqmul(zeta, *y);
                *y = *x - t;
                *x += t;
            }
        }
        layer += 1;
        if layer % 2 == 1 {
            reduce_all(r);
        }
        len >>= 1;
    }
    // Transpose 64 x 8 -> 8 x 64: s[j * 64 + b] = r[8 b + j].
    let mut s = [0i16; N];
    for (b, block) in r.chunks_exact(8).enumerate() {
        for (j, &v) in block.iter().enumerate() {
            s[j * ROW + b] = v;
        }
    }
    // Layer 7: distance 4.
    for j in 0..4 {
        let (x, y) = rows(&mut s, j, j + 4);
        ct_rows(x, y, &F4);
    }
    reduce_all(&mut s);
    // Layer 8: distance 2.
    for (h, z) in F2.iter().enumerate() {
        for j in [4 * h, 4 * h + 1] {
            let (x, y) = rows(&mut s, j, j + 2);
            ct_rows(x, y, z);
        }
    }
    // Layer 9: distance 1.
    for (g, z) in F1.iter().enumerate() {
        let (x, y) = rows(&mut s, 2 * g, 2 * g + 1);
        ct_rows(x, y, z);
    }
    reduce_all(&mut s);
    *r = s;
    super::ring::wipe(&mut s);
}

/// The inverse transform (generic body). Keeps every value in `(-q, q)`:
/// sums are Barrett-reduced, differences go through a Montgomery product.
#[inline(always)]
pub(crate) fn inverse_body(r: &mut [i16; N]) {
    let mut s = *r;
    for (g, z) in I1.iter().enumerate() {
        let (x, y) = rows(&mut s, 2 * g, 2 * g + 1);
        gs_rows(x, y, z);
    }
    for (h, z) in I2.iter().enumerate() {
        for j in [4 * h, 4 * h + 1] {
            let (x, y) = rows(&mut s, j, j + 2);
            gs_rows(x, y, z);
        }
    }
    for j in 0..4 {
        let (x, y) = rows(&mut s, j, j + 4);
        gs_rows(x, y, &I4);
    }
    for (b, block) in r.chunks_exact_mut(8).enumerate() {
        for (j, v) in block.iter_mut().enumerate() {
            *v = s[j * ROW + b];
        }
    }
    super::ring::wipe(&mut s);
    let mut len = 8;
    while len < N {
        let first = N / (2 * len);
        for (b, block) in r.chunks_exact_mut(2 * len).enumerate() {
            let zeta = ZETAS_INV[first + b];
            let (lo, hi) = block.split_at_mut(len);
            for (x, y) in lo.iter_mut().zip(hi.iter_mut()) {
                let t = *x;
                *x = barrett(t + *y);
                *y = fqmul(zeta, t - *y);
            }
        }
        len <<= 1;
    }
    for x in r.iter_mut() {
        *x = fqmul(*x, N_INV_MONT);
    }
}

/// An implementation of the ring's hot loops.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Backend {
    /// Plain Rust (SSE2 auto-vectorization on x86-64).
    Portable,
    /// The same code compiled for AVX2, 16 lanes of 16 bits.
    Avx2,
}

impl Backend {
    /// The backend in use: detected once; `TRISKELE_BACKEND=portable`
    /// forces the portable one.
    pub fn current() -> Backend {
        static CHOSEN: OnceLock<Backend> = OnceLock::new();
        *CHOSEN.get_or_init(|| {
            if std::env::var("TRISKELE_BACKEND").is_ok_and(|v| v.eq_ignore_ascii_case("portable")) {
                return Backend::Portable;
            }
            #[cfg(target_arch = "x86_64")]
            if super::ntt_avx2::Avx2::detect().is_some() {
                return Backend::Avx2;
            }
            Backend::Portable
        })
    }

    /// Name for reports.
    pub fn name(self) -> &'static str {
        match self {
            Backend::Portable => "portable",
            Backend::Avx2 => "avx2",
        }
    }
}

/// Forward NTT on `backend`; falls back to portable if it is unavailable.
pub(crate) fn forward_on(backend: Backend, r: &mut [i16; N]) {
    match backend {
        #[cfg(target_arch = "x86_64")]
        Backend::Avx2 => match super::ntt_avx2::Avx2::detect() {
            Some(t) => t.forward(r),
            None => forward_body(r),
        },
        _ => forward_body(r),
    }
}

/// Inverse NTT on `backend`; falls back to portable if it is unavailable.
pub(crate) fn inverse_on(backend: Backend, r: &mut [i16; N]) {
    match backend {
        #[cfg(target_arch = "x86_64")]
        Backend::Avx2 => match super::ntt_avx2::Avx2::detect() {
            Some(t) => t.inverse(r),
            None => inverse_body(r),
        },
        _ => inverse_body(r),
    }
}

pub(crate) fn forward(r: &mut [i16; N]) {
    forward_on(Backend::current(), r);
}

pub(crate) fn inverse(r: &mut [i16; N]) {
    inverse_on(Backend::current(), r);
}

#[cfg(test)]
mod tests {
    #![allow(
        clippy::unwrap_used,
        clippy::expect_used,
        clippy::panic,
        clippy::needless_range_loop
    )]
    use super::super::ring::tests::random_poly;
    use super::*;
    use rand_chacha::ChaCha20Rng;
    use rand_core::SeedableRng;

    /// Every backend gives bit-identical results to the portable one.
    #[test]
    fn backends_agree_with_portable() {
        let mut rng = ChaCha20Rng::seed_from_u64(51);
        for _ in 0..200 {
            let p = random_poly(&mut rng);
            let mut a = p.0;
            let mut b = p.0;
            forward_on(Backend::Portable, &mut a);
            forward_on(Backend::Avx2, &mut b);
            assert_eq!(a, b);
            let mut c = a;
            inverse_on(Backend::Portable, &mut a);
            inverse_on(Backend::Avx2, &mut c);
            assert_eq!(a, c);
        }
        let _ = Backend::current().name();
    }

    /// The AVX2 CDT sampler core matches the portable one, on random words
    /// and on words next to every table entry.
    #[test]
    #[cfg(target_arch = "x86_64")]
    fn cdt_backends_agree() {
        use super::super::sample::{cdt, cdt_magnitudes_body};
        let Some(t) = super::super::ntt_avx2::Avx2::detect() else {
            return;
        };
        let mut rng = ChaCha20Rng::seed_from_u64(52);
        let table = cdt();
        for round in 0..50 {
            let mut words = [0u64; N];
            for (i, w) in words.iter_mut().enumerate() {
                *w = if round == 0 {
                    let e = table[i % table.len()];
                    e.wrapping_add((i / table.len()) as u64 % 3).wrapping_sub(1)
                } else {
                    rand_core::RngCore::next_u64(&mut rng)
                };
            }
            let mut a = [0i16; N];
            let mut b = [0i16; N];
            cdt_magnitudes_body(&words, table, &mut a);
            t.cdt_magnitudes(&words, table, &mut b);
            assert_eq!(a, b);
        }
    }
}
