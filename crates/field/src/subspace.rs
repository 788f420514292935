//! Values of a polynomial on a coset of a subspace from its values on the subspace (an
//! additive FFT over `GF(2^8)`).
//!
//! Let `S = {0, 1, .., 31}`: the bytes whose bits above bit 4 are clear, an `F_2`-subspace of
//! `GF(2^8)` of dimension 5 (basis `β_j = 2^j` in the polynomial basis). A polynomial `f` of
//! degree below 32 is fixed by its values on `S`; [`CosetShift`] computes its values on the
//! coset `32 + S = {32, .., 63}` from them, in `O(32 · 5)` products by constants instead of
//! the `32 · 32` of Lagrange interpolation. `Verify`'s first level with blocks of 32 bytes
//! (`triskele_engine::verify`) needs exactly this: the data nodes are `S`, the extra nodes
//! `32 .. 62`.
//!
//! # The transform
//!
//! On a subspace `U` with basis `b_0, .., b_{d-1}`, let `q(x) = x (x + b_0)`: an
//! `F_2`-linear map with kernel `{0, b_0}`, so `q(U)` is a subspace with basis `q(b_1), ..,
//! q(b_{d-1})`. Every `f` of degree below `2^d` is `g(q(x)) + x h(q(x))` with `g`, `h` of degree
//! below `2^(d-1)`. For a pair `s, s + b_0` of `U` (both map to `t = q(s)`):
//! `f(s) = g(t) + s h(t)` and `f(s + b_0) = f(s) + b_0 h(t)`. Hence, with `h~ = b_0 h`:
//!
//! * **down** (values on `U` to those of `g` and `h~` on `q(U)`): `h~(t) = f(s) + f(s + b_0)`,
//!   `g(t) = f(s) + (s / b_0) h~(t)`;
//! * the shift by `ω` of `f` is the shift by `q(ω)` of `g` and `h~` (as `q(ω + s) = q(ω) +
//!   q(s)`), one dimension lower, down to the constants of dimension 0;
//! * **up** (values of `g`, `h~` on `q(ω) + q(U)` to those of `f` on `ω + U`): `f(ω + s) =
//!   g + ((ω + s) / b_0) h~`, `f(ω + s + b_0) = f(ω + s) + h~`.
//!
//! Stored in place, the down step of level `l` pairs positions `p` and `p + 2^l` (bit `l` of
//! `p` clear, pair index `p >> (l + 1)` within its sub-problem); the sub-problems of level `l`
//! are interleaved with stride `2^l`, and all of them use the same constants. Position `p`
//! ends with `f(32 + p)`. Down steps with `s = 0` multiply by zero and are skipped: 49 and 80
//! products for the two directions, 129 in all against 1,024 (or 992 for the 31 values
//! `Verify` uses) for the Lagrange coefficients.

use crate::backend::{self, Backend};
use crate::{Gf2p8, LinearMap8};

/// Dimension of the subspace `S`.
pub const DIM: usize = 5;
/// Points of `S` (and of its coset).
pub const POINTS: usize = 1 << DIM;
/// Pairs of a level.
const PAIRS: usize = POINTS / 2;

/// The constants of the transform from `S` to `32 + S` (see the module docs):
/// `down[l][i] = s_{2i} / b_0` and `up[l][i] = (ω_l + s_{2i}) / b_0` at level `l` for pair `i`,
/// as `GFNI` matrices of the maps `v ↦ c v`.
#[derive(Clone, Debug)]
pub struct CosetShift {
    pub(crate) down: [[u64; PAIRS]; DIM],
    pub(crate) up: [[u64; PAIRS]; DIM],
    down_maps: [[LinearMap8; PAIRS]; DIM],
    up_maps: [[LinearMap8; PAIRS]; DIM],
}

/// `q(x) = x (x + b)`.
const fn vanish(x: Gf2p8, b: Gf2p8) -> Gf2p8 {
    x.const_mul(Gf2p8(x.0 ^ b.0))
}

/// The transform from `{0, .., 31}` to `{32, .., 63}`.
pub const COSET_SHIFT: CosetShift = CosetShift::new(Gf2p8(POINTS as u8));

impl CosetShift {
    /// The transform from `S` to `ω + S`.
    const fn new(omega: Gf2p8) -> Self {
        let zero = LinearMap8::mul_by(Gf2p8(0));
        let mut down_maps = [[zero; PAIRS]; DIM];
        let mut up_maps = [[zero; PAIRS]; DIM];
        let mut down = [[0u64; PAIRS]; DIM];
        let mut up = [[0u64; PAIRS]; DIM];
        let mut basis = [Gf2p8(0); DIM];
        let mut j = 0;
        while j < DIM {
            basis[j] = Gf2p8(1 << j);
            j += 1;
        }
        let mut omega = omega;
        let mut l = 0;
        while l < DIM {
            let d = DIM - l;
            let b0 = basis[0];
            // `b_0 ≠ 0`: the basis stays independent under `q` (its kernel is `{0, b_0}`).
            let b0_inv = b0.pow(254);
            let mut i = 0;
            while i < 1 << (d - 1) {
                // `s_{2i}`: the element with index `2i` in the basis of this level.
                let mut s = 0u8;
                let mut b = 0;
                while b + 1 < d {
                    if (i >> b) & 1 == 1 {
                        s ^= basis[b + 1].0;
                    }
                    b += 1;
                }
                down_maps[l][i] = LinearMap8::mul_by(Gf2p8(s).const_mul(b0_inv));
                up_maps[l][i] = LinearMap8::mul_by(Gf2p8(s ^ omega.0).const_mul(b0_inv));
                down[l][i] = down_maps[l][i].gfni_matrix();
                up[l][i] = up_maps[l][i].gfni_matrix();
                i += 1;
            }
            let mut next = [Gf2p8(0); DIM];
            let mut j = 0;
            while j + 1 < d {
                next[j] = vanish(basis[j + 1], b0);
                j += 1;
            }
            basis = next;
            omega = vanish(omega, b0);
            l += 1;
        }
        CosetShift {
            down,
            up,
            down_maps,
            up_maps,
        }
    }

    /// The maps of the down steps, `v ↦ c v` (`down` holds their `GFNI` matrices).
    pub(crate) fn down_maps(&self) -> &[[LinearMap8; PAIRS]; DIM] {
        &self.down_maps
    }

    /// The maps of the up steps.
    pub(crate) fn up_maps(&self) -> &[[LinearMap8; PAIRS]; DIM] {
        &self.up_maps
    }

    /// `dst[i · stride + k] = f_k(32 + i)` for `i < 32`, where `f_k` is the polynomial of
    /// degree below 32 with `f_k(m) = src[m][k]` (`m < 32`), for `k` below the shortest
    /// `src[m]`, on the active backend. Positions past that in each plane of `dst` are left
    /// as they are; `dst` must hold `31 · stride` plus that many bytes, else only what fits
    /// is computed.
    pub fn shift(&self, src: [&[u8]; POINTS], dst: &mut [u8], stride: usize) {
        self.shift_with(backend::active(), src, dst, stride);
    }

    /// [`CosetShift::shift`] on an explicit backend.
    pub fn shift_with(&self, be: Backend, src: [&[u8]; POINTS], dst: &mut [u8], stride: usize) {
        let mut n = src.iter().fold(stride, |n, s| n.min(s.len()));
        n = n.min(dst.len().saturating_sub((POINTS - 1) * stride));
        let done = backend::coset_shift(be, self, src, dst, stride, n);
        const CH: usize = 256;
        let mut buf = [[0u8; CH]; POINTS];
        let mut tmp = [0u8; CH];
        let mut c = done;
        while c < n {
            let w = CH.min(n - c);
            for (b, s) in buf.iter_mut().zip(src) {
                b[..w].copy_from_slice(&s[c..c + w]);
            }
            self.planes(be, &mut buf, &mut tmp, w);
            for (i, b) in buf.iter().enumerate() {
                dst[i * stride + c..i * stride + c + w].copy_from_slice(&b[..w]);
            }
            c += w;
        }
    }

    /// The transform on the first `w` bytes of 32 planes, in place, by byte maps.
    fn planes(&self, be: Backend, v: &mut [[u8; 256]; POINTS], tmp: &mut [u8; 256], w: usize) {
        let xor = |dst: &mut [u8], src: &[u8]| {
            for (d, s) in dst.iter_mut().zip(src) {
                *d ^= s;
            }
        };
        for l in 0..DIM {
            let h = 1 << l;
            for p in (0..POINTS).filter(|p| p & h == 0) {
                let (lo, hi) = v.split_at_mut(p + h);
                xor(&mut hi[0][..w], &lo[p][..w]);
                if self.down[l][p >> (l + 1)] != 0 {
                    let map = &self.down_maps[l][p >> (l + 1)];
                    backend::linear_apply(be, map, &hi[0][..w], &mut tmp[..w]);
                    xor(&mut lo[p][..w], &tmp[..w]);
                }
            }
        }
        for l in (0..DIM).rev() {
            let h = 1 << l;
            for p in (0..POINTS).filter(|p| p & h == 0) {
                let (lo, hi) = v.split_at_mut(p + h);
                let map = &self.up_maps[l][p >> (l + 1)];
                backend::linear_apply(be, map, &hi[0][..w], &mut tmp[..w]);
                xor(&mut lo[p][..w], &tmp[..w]);
                xor(&mut hi[0][..w], &lo[p][..w]);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `f(x)` for the polynomial of degree below 32 with `f(m) = v[m]`, by Lagrange.
    fn lagrange_at(v: &[u8; POINTS], x: Gf2p8) -> Gf2p8 {
        let mut acc = Gf2p8(0);
        for (m, vm) in v.iter().enumerate() {
            let mut l = Gf2p8(1);
            for i in (0..POINTS).filter(|&i| i != m) {
                let num = Gf2p8(x.0 ^ i as u8);
                let den = Gf2p8((m ^ i) as u8).pow(254);
                l = l.const_mul(num).const_mul(den);
            }
            acc = Gf2p8(acc.0 ^ l.const_mul(Gf2p8(*vm)).0);
        }
        acc
    }

    /// Random-looking planes: byte `k` of plane `m` from a simple mixing of `(m, k, seed)`.
    fn planes(n: usize, seed: u64) -> Vec<Vec<u8>> {
        (0..POINTS)
            .map(|m| {
                (0..n)
                    .map(|k| {
                        let mut z = seed ^ ((m as u64) << 32) ^ k as u64;
                        z = z.wrapping_mul(0x9E37_79B9_7F4A_7C15);
                        z ^= z >> 29;
                        z = z.wrapping_mul(0xBF58_476D_1CE4_E5B9);
                        (z >> 56) as u8
                    })
                    .collect()
            })
            .collect()
    }

    /// Every backend of this CPU against Lagrange interpolation, for lengths around the
    /// 64-byte columns and the 256-byte chunks, with a stride larger than the length.
    #[test]
    fn coset_values_match_lagrange() {
        for (n, seed) in [(1, 1), (63, 2), (64, 3), (200, 4), (321, 5)] {
            let p = planes(n, seed);
            let src: [&[u8]; POINTS] = core::array::from_fn(|m| &p[m][..]);
            let stride = n + 7;
            for be in Backend::ALL {
                let mut dst = vec![0xA5u8; POINTS * stride];
                COSET_SHIFT.shift_with(be, src, &mut dst, stride);
                for k in 0..n {
                    let v: [u8; POINTS] = core::array::from_fn(|m| p[m][k]);
                    for i in 0..POINTS {
                        let want = lagrange_at(&v, Gf2p8((POINTS + i) as u8));
                        assert_eq!(dst[i * stride + k], want.0, "{be:?} n {n} k {k} node {i}");
                    }
                }
                // Past the length: untouched.
                for i in 0..POINTS {
                    assert!(dst[i * stride + n..(i + 1) * stride]
                        .iter()
                        .all(|&b| b == 0xA5));
                }
            }
        }
    }

    /// Values on `S` that are those of a polynomial of low degree keep it on the coset (a
    /// constant stays constant, `x` gives `32 + i`).
    #[test]
    fn low_degree_polynomials_keep_their_form() {
        let constant: Vec<Vec<u8>> = (0..POINTS).map(|_| vec![0x53; 64]).collect();
        let ident: Vec<Vec<u8>> = (0..POINTS).map(|m| vec![m as u8; 64]).collect();
        for (p, want) in [
            (&constant, [0x53u8; POINTS]),
            (&ident, core::array::from_fn(|i| (POINTS + i) as u8)),
        ] {
            let src: [&[u8]; POINTS] = core::array::from_fn(|m| &p[m][..]);
            let mut dst = vec![0u8; POINTS * 64];
            COSET_SHIFT.shift(src, &mut dst, 64);
            for i in 0..POINTS {
                assert!(dst[i * 64..(i + 1) * 64].iter().all(|&b| b == want[i]));
            }
        }
    }
}
