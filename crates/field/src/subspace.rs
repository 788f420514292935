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
//! [`SubfieldShift`] is the same transform on the three-dimensional subspace of the subfield
//! of sixteen elements that holds the data nodes of `Verify`'s level with blocks of eight,
//! to its coset, the extra nodes.
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
use crate::embed::SUBFIELD16;
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

/// `Σ_{b ∈ bits(i)} basis[from + b]`: element `i` of the span of `basis[from ..]`, in the order
/// of the transform's positions.
const fn span<const D: usize>(basis: &[Gf2p8; D], from: usize, i: usize) -> u8 {
    let mut s = 0u8;
    let mut b = 0;
    while from + b < D {
        if (i >> b) & 1 == 1 {
            s ^= basis[from + b].0;
        }
        b += 1;
    }
    s
}

/// The maps of the transform from the subspace `U` with basis `basis` (`D` vectors,
/// independent) to its coset `ω + U`, `[down, up]`: `down[l][i] = s_{2i} / b_0` and `up[l][i] =
/// (ω_l + s_{2i}) / b_0` at level `l` for pair `i` (`P = 2^(D - 1)` pairs; levels `l > 0` use
/// only their first `2^(D - 1 - l)`), as maps `v ↦ c v` (module docs). Input position `p`
/// holds the value at `Σ_{j ∈ bits(p)} b_j`, output position `p` that at `ω` plus it.
const fn steps<const D: usize, const P: usize>(
    basis: [Gf2p8; D],
    omega: Gf2p8,
) -> [[[LinearMap8; P]; D]; 2] {
    assert!(D > 0 && P == 1 << (D - 1));
    let zero = LinearMap8::mul_by(Gf2p8(0));
    let mut down = [[zero; P]; D];
    let mut up = [[zero; P]; D];
    let mut basis = basis;
    let mut omega = omega;
    let mut l = 0;
    while l < D {
        let d = D - l;
        let b0 = basis[0];
        // `b_0 ≠ 0`: the basis stays independent under `q` (its kernel is `{0, b_0}`).
        assert!(b0.0 != 0);
        let b0_inv = b0.pow(254);
        let mut i = 0;
        while i < 1 << (d - 1) {
            // `s_{2i}`: the element with index `2i` in the basis of this level (the entries
            // past its dimension are zero).
            let s = span(&basis, 1, i);
            down[l][i] = LinearMap8::mul_by(Gf2p8(s).const_mul(b0_inv));
            up[l][i] = LinearMap8::mul_by(Gf2p8(s ^ omega.0).const_mul(b0_inv));
            i += 1;
        }
        let mut next = [Gf2p8(0); D];
        let mut j = 0;
        while j + 1 < d {
            next[j] = vanish(basis[j + 1], b0);
            j += 1;
        }
        basis = next;
        omega = vanish(omega, b0);
        l += 1;
    }
    [down, up]
}

/// The transform from `{0, .., 31}` to `{32, .., 63}`.
pub const COSET_SHIFT: CosetShift = CosetShift::new(Gf2p8(POINTS as u8));

impl CosetShift {
    /// The transform from `S` to `ω + S`.
    const fn new(omega: Gf2p8) -> Self {
        let mut basis = [Gf2p8(0); DIM];
        let mut j = 0;
        while j < DIM {
            basis[j] = Gf2p8(1 << j);
            j += 1;
        }
        let [down_maps, up_maps] = steps::<DIM, PAIRS>(basis, omega);
        let mut down = [[0u64; PAIRS]; DIM];
        let mut up = [[0u64; PAIRS]; DIM];
        let mut l = 0;
        while l < DIM {
            let mut i = 0;
            while i < PAIRS {
                down[l][i] = down_maps[l][i].gfni_matrix();
                up[l][i] = up_maps[l][i].gfni_matrix();
                i += 1;
            }
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

/// Dimension of the subspace `V` of [`SUBFIELD16`] that holds the data nodes of `Verify`'s
/// level with blocks of eight (see [`SubfieldShift`]).
pub const SUB_DIM: usize = 3;
/// Points of `V` (the data nodes).
pub const SUB_POINTS: usize = 1 << SUB_DIM;
/// The extra nodes: the coset `SUBFIELD16[8] + V` less its last element.
pub const SUB_EXTRA: usize = SUB_POINTS - 1;

/// The values of a polynomial of degree below 8 at the extra nodes `SUBFIELD16[8 .. 15]` from
/// its values at the data nodes `SUBFIELD16[0 .. 8]`, the nodes of `Verify`'s level with
/// blocks of eight (`triskele_engine::verify`, module `octal`; [`SUBFIELD16`] is the subfield
/// of sixteen elements, in increasing order).
///
/// The first eight elements of the subfield are the `F_2`-subspace `V` with basis
/// `SUBFIELD16[1], SUBFIELD16[2], SUBFIELD16[4]` (element `i` is the sum of the basis vectors
/// of the bits of `i`), the next eight its coset `SUBFIELD16[8] + V` in the same order
/// (`SUBFIELD16[8 + i] = SUBFIELD16[8] + SUBFIELD16[i]`; both checked when the constant is
/// built). The transform of [`CosetShift`] on this basis then takes 4 products by constants
/// down and 7 up, 11 against the 56 of the Lagrange coefficients (seven nodes from eight);
/// each constant lies in the subfield, as the Lagrange coefficients do.
#[derive(Clone, Debug)]
pub struct SubfieldShift {
    pub(crate) down: [[LinearMap8; SUB_POINTS / 2]; SUB_DIM],
    pub(crate) up: [[LinearMap8; SUB_POINTS / 2]; SUB_DIM],
    lagrange: [[LinearMap8; SUB_POINTS]; SUB_EXTRA],
}

/// The transform from `SUBFIELD16[0 .. 8]` to `SUBFIELD16[8 .. 15]`.
pub const SUBFIELD_SHIFT: SubfieldShift = SubfieldShift::new();

impl SubfieldShift {
    const fn new() -> Self {
        let s = SUBFIELD16;
        let basis = [Gf2p8(s[1]), Gf2p8(s[2]), Gf2p8(s[4])];
        let mut i = 0;
        while i < SUB_POINTS {
            let v = span(&basis, 0, i);
            assert!(s[i] == v && s[SUB_POINTS + i] == s[SUB_POINTS] ^ v);
            i += 1;
        }
        let [down, up] = steps::<SUB_DIM, { SUB_POINTS / 2 }>(basis, Gf2p8(s[SUB_POINTS]));
        let zero = LinearMap8::mul_by(Gf2p8(0));
        let mut lagrange = [[zero; SUB_POINTS]; SUB_EXTRA];
        let mut e = 0;
        while e < SUB_EXTRA {
            let x = s[SUB_POINTS + e];
            let mut m = 0;
            while m < SUB_POINTS {
                let mut l = Gf2p8(1);
                let mut i = 0;
                while i < SUB_POINTS {
                    if i != m {
                        let num = Gf2p8(x ^ s[i]);
                        let den = Gf2p8(s[m] ^ s[i]).pow(254);
                        l = l.const_mul(num).const_mul(den);
                    }
                    i += 1;
                }
                lagrange[e][m] = LinearMap8::mul_by(l);
                m += 1;
            }
            e += 1;
        }
        SubfieldShift { down, up, lagrange }
    }

    /// The Lagrange coefficients as maps: `lagrange()[e][m]` multiplies by `ℓ_m` at extra node
    /// `e` (the backends without the AVX2 kernel take this form, one pass of sums of byte
    /// maps).
    pub fn lagrange(&self) -> &[[LinearMap8; SUB_POINTS]; SUB_EXTRA] {
        &self.lagrange
    }

    /// `dst[e][k] = f_k(SUBFIELD16[8 + e])` (`e < 7`), where `f_k` is the polynomial of degree
    /// below 8 with `f_k(SUBFIELD16[m]) = src[m][k]` (`m < 8`), on the common prefix of all
    /// sources and outputs, on the active backend: the transform above on the AVX2 backends
    /// (32 bytes per point in registers), one pass of sums of byte maps by the Lagrange
    /// coefficients on the others.
    pub fn shift(&self, src: [&[u8]; SUB_POINTS], dst: [&mut [u8]; SUB_EXTRA]) {
        self.shift_with(backend::active(), src, dst);
    }

    /// [`SubfieldShift::shift`] on an explicit backend.
    pub fn shift_with(&self, be: Backend, src: [&[u8]; SUB_POINTS], dst: [&mut [u8]; SUB_EXTRA]) {
        backend::subfield_shift(be, self, src, dst);
    }

    /// The transform on one entry: `v` holds the values at the data nodes and ends with those
    /// at the coset's eight points (position 7 is `SUBFIELD16[15]`, not an extra node). The
    /// reference for the AVX2 kernel's steps, which use the same constants.
    #[cfg(test)]
    pub(crate) fn point(&self, v: &mut [u8; SUB_POINTS]) {
        for l in 0..SUB_DIM {
            let h = 1 << l;
            for p in (0..SUB_POINTS).filter(|p| p & h == 0) {
                v[p + h] ^= v[p];
                let q = p >> (l + 1);
                // Pair 0 of every level has `s = 0`: its product is zero.
                if q != 0 {
                    v[p] ^= self.down[l][q].apply_byte(v[p + h]);
                }
            }
        }
        for l in (0..SUB_DIM).rev() {
            let h = 1 << l;
            for p in (0..SUB_POINTS).filter(|p| p & h == 0) {
                v[p] ^= self.up[l][p >> (l + 1)].apply_byte(v[p + h]);
                v[p + h] ^= v[p];
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `f(x)` for the polynomial of degree below `nodes.len()` with `f(nodes[m]) = v[m]`, by
    /// Lagrange.
    fn lagrange_at(nodes: &[u8], v: &[u8], x: u8) -> u8 {
        let mut acc = Gf2p8(0);
        for (m, vm) in v.iter().enumerate() {
            let mut l = Gf2p8(1);
            for i in (0..nodes.len()).filter(|&i| i != m) {
                l = l * Gf2p8(x ^ nodes[i]) * Gf2p8(nodes[m] ^ nodes[i]).pow(254);
            }
            acc += l * Gf2p8(*vm);
        }
        acc.0
    }

    /// The nodes `0 .. 31` of [`CosetShift`]'s subspace.
    const S32: [u8; POINTS] = {
        let mut s = [0u8; POINTS];
        let mut i = 0;
        while i < POINTS {
            s[i] = i as u8;
            i += 1;
        }
        s
    };

    /// `f(x)` for the polynomial of degree below 8 with `f(SUBFIELD16[m]) = v[m]`.
    fn subfield_lagrange_at(v: &[u8; SUB_POINTS], x: u8) -> u8 {
        lagrange_at(&SUBFIELD16[..SUB_POINTS], v, x)
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
                        let want = lagrange_at(&S32, &v, (POINTS + i) as u8);
                        assert_eq!(dst[i * stride + k], want, "{be:?} n {n} k {k} node {i}");
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

    /// Every backend of this CPU against Lagrange interpolation at the seven extra nodes, for
    /// lengths around the 32-byte columns, with outputs longer than the sources (the bytes past
    /// the common prefix untouched).
    #[test]
    fn subfield_values_match_lagrange() {
        for (n, seed) in [(1, 11), (31, 12), (32, 13), (33, 14), (100, 15), (257, 16)] {
            let p = planes(n, seed);
            let src: [&[u8]; SUB_POINTS] = core::array::from_fn(|m| &p[m][..]);
            for be in Backend::ALL {
                let mut out = vec![vec![0xA5u8; n + 9]; SUB_EXTRA];
                let mut it = out.iter_mut();
                let dst: [&mut [u8]; SUB_EXTRA] =
                    core::array::from_fn(|_| it.next().map_or(&mut [][..], |d| &mut d[..]));
                SUBFIELD_SHIFT.shift_with(be, src, dst);
                for k in 0..n {
                    let v: [u8; SUB_POINTS] = core::array::from_fn(|m| p[m][k]);
                    for (e, o) in out.iter().enumerate() {
                        let want = subfield_lagrange_at(&v, SUBFIELD16[SUB_POINTS + e]);
                        assert_eq!(o[k], want, "{be:?} n {n} k {k} node {e}");
                    }
                }
                assert!(out.iter().all(|o| o[n..].iter().all(|&b| b == 0xA5)));
            }
        }
    }

    /// Every constant of the transform lies in the subfield (`c^16 = c`), as the Lagrange
    /// coefficients do: the pair form of `Verify`'s gf4p4 relations is linear over the
    /// subfield only.
    #[test]
    fn subfield_constants_lie_in_the_subfield() {
        let maps = SUBFIELD_SHIFT
            .down
            .iter()
            .chain(&SUBFIELD_SHIFT.up)
            .flatten();
        for c in maps.map(|m| Gf2p8(m.apply_byte(1))) {
            assert_eq!(c.pow(16), c, "{c:?}");
        }
    }

    /// The Lagrange maps (the form of the backends without the AVX2 kernel) and the transform
    /// on one entry (the steps of that kernel) against the reference at every extra node,
    /// including the coset's last point for the transform.
    #[test]
    fn subfield_maps_and_transform_match_lagrange() {
        let p = planes(64, 21);
        let entries = (0..64).map(|k| -> [u8; SUB_POINTS] { core::array::from_fn(|m| p[m][k]) });
        for (k, v) in entries.enumerate() {
            let mut t = v;
            SUBFIELD_SHIFT.point(&mut t);
            for (e, maps) in SUBFIELD_SHIFT.lagrange().iter().enumerate() {
                let want = subfield_lagrange_at(&v, SUBFIELD16[SUB_POINTS + e]);
                let sum = maps
                    .iter()
                    .zip(v)
                    .fold(0, |acc, (f, x)| acc ^ f.apply_byte(x));
                assert_eq!(sum, want, "k {k} node {e}");
            }
            for (i, got) in t.iter().enumerate() {
                let want = subfield_lagrange_at(&v, SUBFIELD16[SUB_POINTS + i]);
                assert_eq!(*got, want, "k {k} point {i}");
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
