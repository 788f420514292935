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
//! Backends ([`Backend`]): [`Backend::Portable`] is plain Rust that LLVM
//! vectorizes with the baseline SSE2 instructions; [`Backend::Avx2`] is
//! written with AVX2 intrinsics (16 lanes, several layers per pass kept in
//! registers, see `ntt_avx2.rs`); [`Backend::Avx512`] with AVX-512BW
//! intrinsics (32 lanes, the whole polynomial in registers, the low layers
//! reached by in-register shuffles, see `ntt_avx512.rs`). Each performs
//! exactly the same operations on every value as the portable code, so all
//! backends give bit-identical results (tested on the same inputs). The
//! same choice covers the ring's coefficient-wise passes, reconciliation,
//! hashing to a polynomial, the 14-bit packing of messages and the noise
//! samplers; the AVX-512 backend runs the AVX2 code of the binomial sampler,
//! which has no 512-bit version, and its packing and the hash's rejection
//! step need AVX-512 VBMI and VBMI2 (`encode_avx512.rs`; without them, the
//! portable packing and the AVX2 rejection step).
//!
//! The backend is chosen once per process ([`Backend::current`]): the best
//! the CPU supports (AVX-512F and AVX-512BW, with AVX2; else AVX2; else
//! portable), unless the environment variable `TRISKELE_BACKEND` names an
//! available one: `portable` forces the portable backend, `avx2` the AVX2
//! one (to compare it with AVX-512 on one machine), `avx512` asks for
//! AVX-512; a backend the CPU lacks, or any other value, means detection.

use super::ring::{barrett, fqmul, N, N_INV_MONT, Q, QINV, ZETAS, ZETAS_INV};
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

/// `a * b * 2^{-16} mod q`, centered in `[-(q-1)/2, (q-1)/2]` (for tables).
const fn mont_mul_const(a: i16, b: i16) -> i16 {
    let p = a as i32 * b as i32;
    let m = (p as i16).wrapping_mul(QINV);
    // Exact division: `p - m q` is a multiple of 2^16.
    let r = ((p - m as i32 * Q as i32) >> 16) as i16;
    if r > Q / 2 {
        r - Q
    } else if r < -(Q / 2) {
        r + Q
    } else {
        r
    }
}

/// Twiddle of the last inverse layer (distance 256) with the factor
/// `n^{-1}` folded in: `fqmul(LAST_INV, d) = fqmul(fqmul(ZETAS_INV[1], d),
/// N_INV_MONT)` modulo `q`.
pub(crate) const LAST_INV: i16 = mont_mul_const(ZETAS_INV[1], N_INV_MONT);

/// Cooley-Tukey butterfly `(x, y) <- (x + t, x - t)` with `t = fqmul(z, y)`;
/// with `REDUCE_X`, `x` is Barrett-reduced first.
#[inline(always)]
fn ct<const REDUCE_X: bool>(x: &mut i16, y: &mut i16, z: i16) {
    let t = fqmul(z, *y);
    let a = if REDUCE_X { barrett(*x) } else { *x };
    *y = a - t;
    *x = a + t;
}

#[inline(always)]
fn ct_rows<const REDUCE_X: bool>(x: &mut [i16], y: &mut [i16], z: &[i16; ROW]) {
    for ((x, y), &z) in x.iter_mut().zip(y.iter_mut()).zip(z.iter()) {
        ct::<REDUCE_X>(x, y, z);
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

/// One layer of distance `len >= 8` in the natural layout, twiddles
/// `ZETAS[k..]` (one per block of `2 len`).
#[inline(always)]
fn ct_layer<const REDUCE_X: bool>(r: &mut [i16; N], len: usize, k: usize) {
    for (block, &zeta) in r.chunks_exact_mut(2 * len).zip(&ZETAS[k..]) {
        let (lo, hi) = block.split_at_mut(len);
        for (x, y) in lo.iter_mut().zip(hi.iter_mut()) {
            ct::<REDUCE_X>(x, y, zeta);
        }
    }
}

/// The forward transform (generic body; the AVX2 backend performs exactly
/// the same operations on every value).
///
/// Bounds: inputs in `(-q, q)`. With `|z| <= (q-1)/2`, a Montgomery product
/// `fqmul(z, y)` is at most `t(B) = ceil(7680 B / 2^16) + 7681` in absolute
/// value when `|y| <= B` (the `mulhi(m, q)` term alone can be `7681`), and a
/// Barrett reduction returns at most `7681` for any `i16`. Only the operand
/// `x` that is not multiplied needs to be small, so the even layers reduce
/// their `x` inputs (half the values) before the butterfly, and the odd
/// layers reduce nothing: a layer maps the bound `B` to `B + t(B)` (odd) or
/// `7681 + t(B)` (even). From `15360`, the bounds after layers 1 to 9 are
/// `24841, 18274, 28097, 18655, 28523, 18705, 28578, 18711, 28585`: every
/// value stays below `2^15`, and every product below `q 2^15` as `fqmul`
/// requires. A final Barrett reduction brings the output to `[-7681, 7681]`.
#[inline(always)]
pub(crate) fn forward_body(r: &mut [i16; N]) {
    ct_layer::<false>(r, 256, 1);
    ct_layer::<true>(r, 128, 2);
    ct_layer::<false>(r, 64, 4);
    ct_layer::<true>(r, 32, 8);
    ct_layer::<false>(r, 16, 16);
    ct_layer::<true>(r, 8, 32);
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
        ct_rows::<false>(x, y, &F4);
    }
    // Layer 8: distance 2, reducing x.
    for (h, z) in F2.iter().enumerate() {
        for j in [4 * h, 4 * h + 1] {
            let (x, y) = rows(&mut s, j, j + 2);
            ct_rows::<true>(x, y, z);
        }
    }
    // Layer 9: distance 1.
    for (g, z) in F1.iter().enumerate() {
        let (x, y) = rows(&mut s, 2 * g, 2 * g + 1);
        ct_rows::<false>(x, y, z);
    }
    reduce_all(&mut s);
    *r = s;
    super::ring::wipe(&mut s);
}

/// The inverse transform (generic body; the AVX2 backend performs exactly
/// the same operations on every value). Keeps every value in `(-q, q)`:
/// sums are Barrett-reduced, differences go through a Montgomery product
/// (`|fqmul(z, d)| <= ceil(7680 * 30720 / 2^16) + 7681 = 11281` for
/// `|d| < 2q`). The last layer (distance 256) also applies the factor
/// `n^{-1}`: the sum goes through `fqmul(x + y, N_INV_MONT)` instead of a
/// Barrett reduction, the difference through one Montgomery product with
/// [`LAST_INV`]; both factors are at most `(q-1)/2`, so the products stay
/// below `q 2^15` and the results below `11281` by the same bound.
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
    while len < N / 2 {
        let first = N / (2 * len);
        for (block, &zeta) in r.chunks_exact_mut(2 * len).zip(&ZETAS_INV[first..]) {
            let (lo, hi) = block.split_at_mut(len);
            for (x, y) in lo.iter_mut().zip(hi.iter_mut()) {
                let t = *x;
                *x = barrett(t + *y);
                *y = fqmul(zeta, t - *y);
            }
        }
        len <<= 1;
    }
    let (lo, hi) = r.split_at_mut(N / 2);
    for (x, y) in lo.iter_mut().zip(hi.iter_mut()) {
        let t = *x;
        *x = fqmul(t + *y, N_INV_MONT);
        *y = fqmul(LAST_INV, t - *y);
    }
}

/// An implementation of the ring's hot loops.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Backend {
    /// Plain Rust (SSE2 auto-vectorization on x86-64).
    Portable,
    /// AVX2 intrinsics, 16 lanes of 16 bits; bit-identical to portable.
    Avx2,
    /// AVX-512F/BW intrinsics, 32 lanes of 16 bits (with the AVX2 binomial
    /// sampler, and VBMI where the CPU has it); bit-identical to portable.
    Avx512,
}

impl Backend {
    /// All backends, in increasing order of preference.
    pub const ALL: [Backend; 3] = [Backend::Portable, Backend::Avx2, Backend::Avx512];

    /// The backend in use, chosen once: the most preferred one the CPU
    /// runs, unless `TRISKELE_BACKEND` names another available one (see
    /// the [module documentation](self)).
    pub fn current() -> Backend {
        static CHOSEN: OnceLock<Backend> = OnceLock::new();
        *CHOSEN.get_or_init(|| {
            let asked = std::env::var("TRISKELE_BACKEND").ok();
            match asked.as_deref().and_then(Backend::from_name) {
                Some(b) if b.is_available() => b,
                _ => Backend::ALL
                    .into_iter()
                    .rev()
                    .find(|b| b.is_available())
                    .unwrap_or(Backend::Portable),
            }
        })
    }

    /// Name for reports and for `TRISKELE_BACKEND`: `portable`, `avx2`,
    /// `avx512`.
    pub fn name(self) -> &'static str {
        match self {
            Backend::Portable => "portable",
            Backend::Avx2 => "avx2",
            Backend::Avx512 => "avx512",
        }
    }

    /// The backend called `name` (ASCII case-insensitive, surrounding
    /// blanks ignored).
    pub fn from_name(name: &str) -> Option<Backend> {
        let name = name.trim();
        Backend::ALL
            .into_iter()
            .find(|b| b.name().eq_ignore_ascii_case(name))
    }

    /// Whether this CPU runs the backend (whatever `TRISKELE_BACKEND` says).
    pub fn is_available(self) -> bool {
        match self {
            Backend::Portable => true,
            #[cfg(target_arch = "x86_64")]
            Backend::Avx2 => super::ntt_avx2::Avx2::detect().is_some(),
            #[cfg(target_arch = "x86_64")]
            Backend::Avx512 => super::ntt_avx512::Avx512::detect().is_some(),
            #[cfg(not(target_arch = "x86_64"))]
            _ => false,
        }
    }

    /// The backends this CPU runs, in increasing order of preference (for
    /// tests and benchmarks that compare them).
    pub fn available() -> Vec<Backend> {
        Backend::ALL
            .into_iter()
            .filter(|b| b.is_available())
            .collect()
    }

    /// The AVX-512 token if `self` is the AVX-512 backend and the CPU runs
    /// it. Every AVX-512 loop of the crate is reached through it.
    #[cfg(target_arch = "x86_64")]
    pub(crate) fn avx512(self) -> Option<super::ntt_avx512::Avx512> {
        match self {
            Backend::Avx512 => super::ntt_avx512::Avx512::detect(),
            Backend::Portable | Backend::Avx2 => None,
        }
    }

    /// The AVX-512 VBMI token if `self` is the AVX-512 backend and the CPU
    /// also runs AVX-512 VBMI and VBMI2 (the byte permutes of the 14-bit
    /// packing and the compress of the hash's rejection step); without them
    /// the AVX-512 backend runs the AVX2 or portable code of those steps.
    #[cfg(target_arch = "x86_64")]
    pub(crate) fn vbmi(self) -> Option<super::encode_avx512::Vbmi> {
        self.avx512().and_then(super::ntt_avx512::Avx512::vbmi)
    }

    /// The AVX2 token if `self` is the AVX2 backend, or the AVX-512 one
    /// (which runs AVX2 code where it has none of its own), and the CPU runs
    /// it: `None` for the portable backend, whether chosen by detection or
    /// forced. Every AVX2 loop of the crate (transforms, samplers, bit
    /// loops) is reached through it.
    #[cfg(target_arch = "x86_64")]
    pub(crate) fn avx2(self) -> Option<super::ntt_avx2::Avx2> {
        match self {
            Backend::Avx512 => self.avx512().map(super::ntt_avx512::Avx512::avx2),
            Backend::Avx2 => super::ntt_avx2::Avx2::detect(),
            Backend::Portable => None,
        }
    }
}

impl core::fmt::Display for Backend {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str(self.name())
    }
}

/// The body of a function that runs on `$backend`: `$call` with `$t` bound to its AVX-512
/// token, else to its AVX2 token (both types have the method), else `$portable` (also when
/// the backend is unavailable on this CPU). It returns from the enclosing function.
macro_rules! on_backend {
    ($backend:expr, |$t:ident| $call:expr, $portable:expr) => {{
        let backend: $crate::rlwe::ntt::Backend = $backend;
        #[cfg(target_arch = "x86_64")]
        {
            if let Some($t) = backend.avx512() {
                return $call;
            }
            if let Some($t) = backend.avx2() {
                return $call;
            }
        }
        #[cfg(not(target_arch = "x86_64"))]
        let _ = backend;
        $portable
    }};
}
pub(crate) use on_backend;

/// Forward NTT on `backend`; falls back to portable if it is unavailable.
pub(crate) fn forward_on(backend: Backend, r: &mut [i16; N]) {
    on_backend!(backend, |t| t.forward(r), forward_body(r))
}

/// Inverse NTT on `backend`; falls back to portable if it is unavailable.
pub(crate) fn inverse_on(backend: Backend, r: &mut [i16; N]) {
    on_backend!(backend, |t| t.inverse(r), inverse_body(r))
}

pub(crate) fn forward(r: &mut [i16; N]) {
    forward_on(Backend::current(), r);
}

pub(crate) fn inverse(r: &mut [i16; N]) {
    inverse_on(Backend::current(), r);
}

#[cfg(test)]
pub(crate) mod tests {
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

    /// Inputs over the whole documented range `(-q, q)` of both transforms:
    /// random ones, extremes (every coefficient `q - 1`, `-(q - 1)`, or a
    /// sign pattern along each index bit, which makes the butterflies of one
    /// layer add or subtract extremes), single coefficients at every
    /// position (they expose any mix-up of the layout) and random signs.
    fn test_inputs(rng: &mut ChaCha20Rng) -> Vec<[i16; N]> {
        use rand_core::RngCore;
        const M: i16 = Q - 1;
        let mut inputs = vec![[0; N], [M; N], [-M; N], [1; N], [-1; N]];
        for bit in 0..9 {
            let mut a = [0i16; N];
            for (n, x) in a.iter_mut().enumerate() {
                *x = if (n >> bit) & 1 == 0 { M } else { -M };
            }
            inputs.push(a);
            inputs.push(a.map(|x| -x));
            inputs.push(a.map(|x| if x > 0 { M } else { 0 }));
        }
        for n in 0..N {
            let mut a = [0i16; N];
            a[n] = if n % 2 == 0 { M } else { -M };
            inputs.push(a);
        }
        for round in 0..2000 {
            let mut a = [0i16; N];
            for x in a.iter_mut() {
                let w = rng.next_u32();
                *x = match round % 4 {
                    // Uniform in (-q, q).
                    0 | 1 => (w % (2 * Q as u32 - 1)) as i16 - M,
                    // Uniform in [0, q), as produced by `Poly::from_coeffs`.
                    2 => (w % Q as u32) as i16,
                    // Random extremes.
                    _ => [M, -M, 0, M - 1][(w % 4) as usize],
                };
            }
            inputs.push(a);
        }
        inputs.push(random_poly(rng).0);
        inputs
    }

    /// The folded twiddle of the last inverse layer is
    /// `ZETAS_INV[1] * N_INV_MONT * 2^{-16}` modulo `q`, centered.
    #[test]
    fn last_inverse_twiddle() {
        let q = i64::from(Q);
        let lhs = (i64::from(LAST_INV) * 65536).rem_euclid(q);
        let rhs = (i64::from(ZETAS_INV[1]) * i64::from(N_INV_MONT)).rem_euclid(q);
        assert_eq!(lhs, rhs);
        assert!(LAST_INV.abs() <= Q / 2);
    }

    /// Every backend gives bit-identical results to the portable one, for
    /// the forward transform, the inverse on arbitrary inputs, and the
    /// inverse of a forward output (backends this CPU lacks are skipped).
    #[test]
    fn backends_agree_with_portable() {
        let mut rng = ChaCha20Rng::seed_from_u64(51);
        let inputs = test_inputs(&mut rng);
        for backend in skip_missing() {
            for p in &inputs {
                let mut a = *p;
                let mut b = *p;
                forward_on(Backend::Portable, &mut a);
                forward_on(backend, &mut b);
                assert_eq!(a, b, "forward, {backend}");
                assert!(a.iter().all(|&x| x.abs() < Q), "forward output range");
                let mut c = a;
                inverse_on(Backend::Portable, &mut a);
                inverse_on(backend, &mut c);
                assert_eq!(a, c, "inverse of a forward output, {backend}");
                assert!(a.iter().all(|&x| x.abs() < Q), "inverse output range");
                let mut a = *p;
                let mut b = *p;
                inverse_on(Backend::Portable, &mut a);
                inverse_on(backend, &mut b);
                assert_eq!(a, b, "inverse, {backend}");
                assert!(a.iter().all(|&x| x.abs() < Q), "inverse output range");
            }
        }
    }

    /// The non-portable backends this CPU runs, for the tests that compare
    /// each with the portable code; says which ones are skipped.
    pub(crate) fn skip_missing() -> Vec<Backend> {
        Backend::ALL
            .into_iter()
            .filter(|&b| b != Backend::Portable)
            .filter(|b| {
                let ok = b.is_available();
                if !ok {
                    eprintln!("backend {b} not available on this CPU: skipped");
                }
                ok
            })
            .collect()
    }

    #[test]
    fn names_and_selection() {
        for b in Backend::ALL {
            assert_eq!(Backend::from_name(b.name()), Some(b));
            assert_eq!(
                Backend::from_name(&format!(" {} ", b.name().to_uppercase())),
                Some(b)
            );
        }
        assert_eq!(Backend::from_name("gfni"), None);
        assert!(Backend::Portable.is_available());
        assert!(Backend::current().is_available());
        let avail = Backend::available();
        assert_eq!(avail.first(), Some(&Backend::Portable));
        // AVX-512 is detected with AVX2, so its AVX2 token always exists.
        #[cfg(target_arch = "x86_64")]
        if Backend::Avx512.is_available() {
            assert!(avail.contains(&Backend::Avx2));
            assert!(Backend::Avx512.avx2().is_some());
        }
        #[cfg(target_arch = "x86_64")]
        assert!(Backend::Portable.avx2().is_none() && Backend::Portable.avx512().is_none());
    }

    /// The check of a backend's lane versions of Barrett reduction (on
    /// every `i16`) and of the Montgomery product (every `i16` times a few
    /// twiddles, including the extremes `+-(q - 1)/2`) against the scalar
    /// ones in `ring`, `L` lanes at a time.
    pub(crate) fn check_lane_arithmetic<const L: usize>(
        barrett: &dyn Fn(&[i16; L]) -> [i16; L],
        fqmul: &dyn Fn(&[i16; L], i16) -> [i16; L],
    ) {
        use super::super::ring;
        let factors = [
            ZETAS[1],
            ZETAS[300],
            ZETAS_INV[7],
            N_INV_MONT,
            -(Q / 2),
            Q / 2,
        ];
        for base in (i16::MIN..=i16::MAX).step_by(L) {
            let x: [i16; L] = core::array::from_fn(|k| base.wrapping_add(k as i16));
            assert_eq!(barrett(&x), x.map(ring::barrett));
            for z in factors {
                assert_eq!(fqmul(&x, z), x.map(|y| ring::fqmul(z, y)), "{z}");
            }
        }
    }
}
