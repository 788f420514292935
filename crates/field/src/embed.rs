//! Embeddings into `GF(2^64)` (PROTOCOLS.md §2.4), used to lift small-field triples to the
//! check field (§5.5).
//!
//! All maps here are injective ring homomorphisms and `GF(2)`-linear. One element at a time
//! they are evaluated branch-free as sums of basis images selected by bit masks (no
//! secret-indexed tables). The trait [`EmbedInto`] gives the same maps as `x.embed()`, and its
//! `embed_slice` (used to lift recorded triples in bulk) goes through [`ByteEmbedding`]: two
//! 16-entry nibble tables of `u64`. On every backend but `portable` the slice operations look
//! the tables' byte planes up with AVX2 `vpshufb` (in registers, constant time) and transpose
//! the planes into words, 32 bytes per step; they also come fused with `GF(2^64)` products
//! ([`ByteEmbedding::inner_product`], [`ByteEmbedding::mul_pair_slice`]) and for pairs of
//! bytes ([`ByteEmbedding::apply_pair_slice`]), for the multiplication check. The portable
//! code does two loads and one XOR per element; like the portable [`crate::LinearMap8`], its
//! tables are indexed by the (secret) element: each table spans two 64-byte cache lines, so a
//! cache-timing observer on the same machine could learn the top bit of each nibble of the
//! lifted share components.
//!
//! * `E_8: GF(2^8) → GF(2^64)`, `u ↦ β` ([`BETA`], a root of `u^8+u^4+u^3+u+1`).
//! * `E_4: GF(2^4) → GF(2^64)`, `u ↦ γ` ([`GAMMA`]), consistent with WOL:
//!   `E_4(a) = E_8(φ^(-1)(0 · Y + a))` (that is how `γ` is computed here).
//! * The tower field via `E_8 ∘ φ^(-1)`.
//! * `GF(2^16) = GF(2^4)[α]/(α^4+α^2+uα+u^2)` ("gf4p4"):
//!   `φ_0(a) = E_4(a)^8` and `α ↦ A` ([`GF4P4_A`]); [`gf4p4`] embeds polynomials
//!   of `α`-degree ≤ 2.
//! * Bits: [`bit`].
//!
//! A map of bytes known to lie in the subfield of 16 elements of `GF(2^8)` (`GF(2^4)`
//! elements through `ψ`) is one table of 16 entries ([`SubfieldEmbedding`], indexed by
//! [`subfield_index`], one-to-one there): one `vpshufb` per byte plane instead of two.

use crate::{EmbedInto, Gf2p4, Gf2p64, Gf2p8, Gf4Tower};

/// `β = E_8(u)`, the root of `u^8+u^4+u^3+u+1` fixed by the reference implementation.
pub const BETA: Gf2p64 = Gf2p64(0x033c_e8be_ddc8_a656);

/// `β^0, ..., β^7`.
pub const E8_IMAGES: [Gf2p64; 8] = powers::<8>(BETA);

/// `γ = E_4(u) = E_8(φ^(-1)(0x02))`, a root of `u^4+u+1`.
pub const GAMMA: Gf2p64 = e8(Gf2p8(Gf4Tower::WOL_INV.apply_byte(0x02)));

/// `γ^0, ..., γ^3`.
pub const E4_IMAGES: [Gf2p64; 4] = powers::<4>(GAMMA);

/// `φ_0(u^j) = E_4(u^j)^8` for `j = 0..4`.
pub const PHI0_IMAGES: [Gf2p64; 4] = {
    let mut out = [Gf2p64(0); 4];
    let mut j = 0;
    while j < 4 {
        let x = E4_IMAGES[j];
        let x2 = x.const_mul(x);
        let x4 = x2.const_mul(x2);
        out[j] = x4.const_mul(x4);
        j += 1;
    }
    out
};

/// `A`, the image of `α` in the gf4p4 embedding (a root of
/// `α^4+α^2+φ_0(u)α+φ_0(u^2)` fixed by the reference implementation).
pub const GF4P4_A: Gf2p64 = Gf2p64(0x14f1_968d_182d_d50f);

/// `A^2`.
pub const GF4P4_A2: Gf2p64 = GF4P4_A.const_mul(GF4P4_A);

/// `[x^0, x^1, ..., x^(N-1)]`.
const fn powers<const N: usize>(x: Gf2p64) -> [Gf2p64; N] {
    let mut out = [Gf2p64(1); N];
    let mut j = 1;
    while j < N {
        out[j] = out[j - 1].const_mul(x);
        j += 1;
    }
    out
}

/// `Σ_j bit_j(x) · images_j`, branch-free.
const fn combine<const N: usize>(images: &[Gf2p64; N], x: u8) -> Gf2p64 {
    let mut r = 0u64;
    let mut j = 0;
    while j < N {
        r ^= images[j].0 & 0u64.wrapping_sub(((x >> j) & 1) as u64);
        j += 1;
    }
    Gf2p64(r)
}

/// `E_8(x)`.
pub const fn e8(x: Gf2p8) -> Gf2p64 {
    combine(&E8_IMAGES, x.0)
}

/// `E_4(x)` (uses the low nibble).
pub const fn e4(x: Gf2p4) -> Gf2p64 {
    combine(&E4_IMAGES, x.0 & 0x0f)
}

/// `φ_0(x) = E_4(x)^8` (uses the low nibble).
pub const fn phi0(x: Gf2p4) -> Gf2p64 {
    combine(&PHI0_IMAGES, x.0 & 0x0f)
}

/// The gf4p4 embedding of `a_0 + a_1α + a_2α^2`:
/// `φ_0(a_0) + φ_0(a_1)A + φ_0(a_2)A^2`.
pub fn gf4p4(coeffs: [Gf2p4; 3]) -> Gf2p64 {
    phi0(coeffs[0]) + phi0(coeffs[1]) * GF4P4_A + phi0(coeffs[2]) * GF4P4_A2
}

// ---- GF(2^16) as a tower over GF(2^8) ---------------------------------------------------

/// `c` of the tower `GF(2^16) = GF(2^8)[t]/(t^2 + t + c)`: the smallest byte of absolute
/// trace 1 (so that `t^2 + t + c` is irreducible over `GF(2^8)`).
pub const TOWER_C: u8 = {
    let mut c = 1u8;
    loop {
        // Tr(c) = c + c^2 + c^4 + ... + c^128, which is 0 or 1.
        let mut t = 0u8;
        let mut x = c;
        let mut i = 0;
        while i < 8 {
            t ^= x;
            x = crate::gf2p8::mul_u8(x, x);
            i += 1;
        }
        if t == 1 {
            break c;
        }
        c += 1;
    }
};

/// `T = E_16(t)`: a root of `X^2 + X + E_8(c)` in `GF(2^64)` ([`TOWER_C`]), found by solving
/// the `GF(2)`-linear system `X^2 + X = E_8(c)` (the root `T + 1` would do as well).
pub const TOWER_T: Gf2p64 = {
    let target = e8(Gf2p8(TOWER_C)).0;
    match solve64(&square_plus_identity(), target) {
        Some(x) => Gf2p64(x),
        None => panic!("X^2 + X = E_8(c) has no root"),
    }
};

/// The images of the basis `2^i` under `X ↦ X^2 + X`.
const fn square_plus_identity() -> [u64; 64] {
    let mut cols = [0u64; 64];
    let mut i = 0;
    while i < 64 {
        let x = Gf2p64(1 << i);
        cols[i] = x.const_mul(x).0 ^ x.0;
        i += 1;
    }
    cols
}

/// A solution `x` (bit `i` the coefficient of `cols[i]`) of `Σ x_i cols[i] = y` over `GF(2)`,
/// if there is one (Gaussian elimination on the columns, tracking their combinations).
const fn solve64<const N: usize>(cols: &[u64; N], y: u64) -> Option<u64> {
    let mut v = *cols;
    let mut comb = [0u64; N];
    let mut i = 0;
    while i < N {
        comb[i] = 1 << i;
        i += 1;
    }
    // Pivot columns: column `k` keeps its lowest set bit, which no other pivot has.
    let mut k = 0;
    while k < N {
        if v[k] != 0 {
            let bit = v[k] & v[k].wrapping_neg();
            let mut j = 0;
            while j < N {
                if j != k && v[j] & bit != 0 {
                    v[j] ^= v[k];
                    comb[j] ^= comb[k];
                }
                j += 1;
            }
        }
        k += 1;
    }
    let (mut rest, mut x) = (y, 0u64);
    let mut k = 0;
    while k < N {
        if v[k] != 0 {
            let bit = v[k] & v[k].wrapping_neg();
            if rest & bit != 0 {
                rest ^= v[k];
                x ^= comb[k];
            }
        }
        k += 1;
    }
    if rest == 0 {
        Some(x)
    } else {
        None
    }
}

/// `E_16(lo + hi t) = E_8(lo) + E_8(hi) T`, the embedding of the tower ([`TOWER_T`]) into
/// `GF(2^64)`; on `GF(2^8)` (`hi = 0`) it is `E_8`.
pub const fn e16(lo: u8, hi: u8) -> Gf2p64 {
    Gf2p64(e8(Gf2p8(lo)).0 ^ e8(Gf2p8(hi)).const_mul(TOWER_T).0)
}

/// `(lo, hi)` with `e16(lo, hi) = y`, if `y` lies in the image of [`e16`].
pub const fn coords16(y: Gf2p64) -> Option<(u8, u8)> {
    let mut basis = [0u64; 16];
    let mut i = 0;
    while i < 8 {
        basis[i] = e16(1 << i, 0).0;
        basis[8 + i] = e16(0, 1 << i).0;
        i += 1;
    }
    match solve64(&basis, y.0) {
        Some(x) => Some((x as u8, (x >> 8) as u8)),
        None => None,
    }
}

/// The product in the tower: `(a_0 + a_1 t)(b_0 + b_1 t) = (a_0 b_0 + c a_1 b_1) + (a_0 b_1 +
/// a_1 b_0 + a_1 b_1) t`.
pub const fn mul16(a: (u8, u8), b: (u8, u8)) -> (u8, u8) {
    use crate::gf2p8::mul_u8;
    let (m0, m1) = (mul_u8(a.0, b.0), mul_u8(a.1, b.1));
    let m2 = mul_u8(a.0 ^ a.1, b.0 ^ b.1);
    (m0 ^ mul_u8(TOWER_C, m1), m2 ^ m0)
}

/// The tower coordinates of a byte map into `GF(2^64)` whose images lie in the image of
/// [`e16`]: `[lo, hi]` with `f(x) = e16(lo(x), hi(x))`; `None` if some image does not.
pub fn word_maps(f: &ByteEmbedding) -> Option<[crate::LinearMap8; 2]> {
    let mut lo = [0u8; 8];
    let mut hi = [0u8; 8];
    for b in 0..8 {
        let (l, h) = coords16(f.apply(1 << b))?;
        lo[b] = l;
        hi[b] = h;
    }
    Some([
        crate::LinearMap8::from_basis_images(lo),
        crate::LinearMap8::from_basis_images(hi),
    ])
}

/// A `GF(2)`-linear map from bytes to `GF(2^64)` as two nibble tables:
/// `f(x) = lo[x & 15] ^ hi[x >> 4]`, built by a `const fn` from the images of the eight bits
/// (with the tables' byte planes, which the AVX2 code looks up with `vpshufb`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ByteEmbedding {
    lo: [u64; 16],
    hi: [u64; 16],
    /// Byte `p` of `lo[v]` at `planes[p][v]`, of `hi[v]` at `planes[8 + p][v]`.
    planes: [[u8; 16]; 16],
    /// `gfni[p]`: the `vgf2p8affineqb` matrix of byte `p` of the map
    /// (`gfni[p].byte[7 - i].bit[j]` = bit `8 p + i` of `f(2^j)`).
    gfni: [u64; 8],
}

/// The nibble tables of the map with the bit images `images`: `lo[v]` the image of `v`,
/// `hi[v]` that of `v << 4` (`v < 16`), each the image of `v & (v - 1)` plus that of its
/// lowest bit.
const fn nibble_images(images: &[Gf2p64; 8]) -> ([u64; 16], [u64; 16]) {
    let (mut lo, mut hi) = ([0u64; 16], [0u64; 16]);
    let mut v = 1;
    while v < 16 {
        let (rest, bit) = (v & (v - 1), (v as u32).trailing_zeros() as usize);
        lo[v] = lo[rest] ^ images[bit].0;
        hi[v] = hi[rest] ^ images[bit + 4].0;
        v += 1;
    }
    (lo, hi)
}

/// The byte planes of the map with the nibble tables `lo`, `hi`: byte `p` of `lo[v]` at
/// `[p][v]`, of `hi[v]` at `[8 + p][v]`.
const fn planes_of(lo: &[u64; 16], hi: &[u64; 16]) -> [[u8; 16]; 16] {
    let mut planes = [[0u8; 16]; 16];
    let mut v = 0;
    while v < 16 {
        let mut p = 0;
        while p < 8 {
            planes[p][v] = (lo[v] >> (8 * p)) as u8;
            planes[8 + p][v] = (hi[v] >> (8 * p)) as u8;
            p += 1;
        }
        v += 1;
    }
    planes
}

impl ByteEmbedding {
    /// The map with `f(1 << j) = images[j]`.
    pub const fn new(images: &[Gf2p64; 8]) -> Self {
        let (lo, hi) = nibble_images(images);
        Self::from_nibble_tables(lo, hi)
    }

    /// The map `x ↦ lo[x & 15] ^ hi[x >> 4]` given by its two nibble tables.
    pub const fn from_nibble_tables(lo: [u64; 16], hi: [u64; 16]) -> Self {
        let planes = planes_of(&lo, &hi);
        // `gfni[p]`: the 8×8 bit matrix whose byte `j` is byte `p` of the image of bit `j`,
        // transposed, bytes reversed.
        let mut gfni = [0u64; 8];
        let mut p = 0;
        while p < 8 {
            let mut m = 0u64;
            let mut j = 0;
            while j < 8 {
                let image = if j < 4 { lo[1 << j] } else { hi[1 << (j - 4)] };
                m |= ((image >> (8 * p)) & 0xff) << (8 * j);
                j += 1;
            }
            gfni[p] = transpose_bits8(m).swap_bytes();
            p += 1;
        }
        ByteEmbedding {
            lo,
            hi,
            planes,
            gfni,
        }
    }

    /// The map `x ↦ c · f(x)` (also `GF(2)`-linear; portable products, usable in constants).
    pub const fn scaled(&self, c: Gf2p64) -> Self {
        let mut lo = [0u64; 16];
        let mut hi = [0u64; 16];
        let mut v = 0;
        while v < 16 {
            lo[v] = Gf2p64(self.lo[v]).const_mul(c).0;
            hi[v] = Gf2p64(self.hi[v]).const_mul(c).0;
            v += 1;
        }
        Self::from_nibble_tables(lo, hi)
    }

    /// [`ByteEmbedding::scaled`] at run time: the eight bit images by hardware products (for
    /// maps scaled per block of data).
    pub fn scaled_by(&self, c: Gf2p64) -> Self {
        Self::new(&core::array::from_fn(|j| self.bit_image(j) * c))
    }

    /// The byte planes ([`ByteEmbedding::byte_planes`]) of `x ↦ c · f(x)`, without the rest
    /// of [`ByteEmbedding::scaled_by`]'s tables: eight products and the sums of their
    /// subsets, for callers that scale a map by every one of many coefficients.
    pub fn scaled_planes(&self, c: Gf2p64) -> [[u8; 16]; 16] {
        let images: [Gf2p64; 8] = core::array::from_fn(|j| self.bit_image(j) * c);
        let (lo, hi) = nibble_images(&images);
        planes_of(&lo, &hi)
    }

    fn tables(&self) -> crate::backend::NibbleTables<'_> {
        crate::backend::NibbleTables {
            lo: &self.lo,
            hi: &self.hi,
            planes: &self.planes,
            gfni: &self.gfni,
        }
    }

    /// `f(x)`.
    #[inline]
    pub const fn apply(&self, x: u8) -> Gf2p64 {
        Gf2p64(self.lo[(x & 0x0f) as usize] ^ self.hi[(x >> 4) as usize])
    }

    /// `dst[k] = f(src[k])` on the common prefix, on the active backend (32 bytes per step
    /// with AVX2 `vpshufb`, which also avoids the secret-indexed loads).
    #[inline]
    pub fn apply_slice(&self, src: &[u8], dst: &mut [Gf2p64]) {
        self.apply_slice_with(crate::backend::active(), src, dst);
    }

    /// [`ByteEmbedding::apply_slice`] on an explicit backend (portable if `be` is
    /// unavailable).
    pub fn apply_slice_with(&self, be: crate::backend::Backend, src: &[u8], dst: &mut [Gf2p64]) {
        crate::backend::embed_bytes(
            be,
            &self.tables(),
            src,
            crate::backend::cast::gf2p64_as_words_mut(dst),
        );
    }

    /// `Σ_k c[k] f(src[k])` over the common prefix, on the active backend (the images are
    /// not stored).
    #[inline]
    pub fn inner_product(&self, c: &[Gf2p64], src: &[u8]) -> Gf2p64 {
        self.inner_product_with(crate::backend::active(), c, src)
    }

    /// [`ByteEmbedding::inner_product`] on an explicit backend.
    pub fn inner_product_with(
        &self,
        be: crate::backend::Backend,
        c: &[Gf2p64],
        src: &[u8],
    ) -> Gf2p64 {
        let t = self.tables();
        Gf2p64(crate::backend::embed_inner(
            be,
            [&t, &t],
            src,
            None,
            crate::backend::cast::gf2p64_as_words(c),
        ))
    }

    /// `f(2^b)`, the image of bit `b`.
    const fn bit_image(&self, b: usize) -> Gf2p64 {
        if b < 4 {
            Gf2p64(self.lo[1 << b])
        } else {
            Gf2p64(self.hi[1 << (b - 4)])
        }
    }

    /// `[Σ_k c[k] f_i(a_i[k])]_i` over the common prefix of `c` and all `a_i`, for `N` maps
    /// `f_i` and byte slices `a_i` that share the coefficients, on the active backend.
    ///
    /// On the 512-bit GFNI backend of a CPU with AVX-512 VBMI this uses bit sums: by linearity
    /// `Σ_k c_k f(a_k) = Σ_b f(2^b) S_b`, where `S_b` is the sum of the `c_k` whose `a_k` has
    /// bit `b` set; the `S_b` of 8 terms are products of 8×8 bit matrices (`vgf2p8affineqb`),
    /// so no term is embedded or multiplied, and each map costs 8 products at the end.
    /// Elsewhere it is one [`ByteEmbedding::inner_product`] per map.
    pub fn inner_products<const N: usize>(
        c: &[Gf2p64],
        terms: [(&ByteEmbedding, &[u8]); N],
    ) -> [Gf2p64; N] {
        Self::inner_products_with(crate::backend::active(), c, terms)
    }

    /// [`ByteEmbedding::inner_products`] on an explicit backend.
    pub fn inner_products_with<const N: usize>(
        be: crate::backend::Backend,
        c: &[Gf2p64],
        terms: [(&ByteEmbedding, &[u8]); N],
    ) -> [Gf2p64; N] {
        let words = crate::backend::cast::gf2p64_as_words(c);
        let Some(sums) = crate::backend::bit_sums(be, words, terms.map(|(_, a)| a)) else {
            let n = terms.iter().fold(c.len(), |n, (_, a)| n.min(a.len()));
            return terms.map(|(f, a)| f.inner_product_with(be, &c[..n], &a[..n]));
        };
        let mut out = [Gf2p64(0); N];
        for ((o, (f, _)), s) in out.iter_mut().zip(terms).zip(sums) {
            *o = s
                .iter()
                .enumerate()
                .fold(Gf2p64(0), |acc, (b, w)| acc + f.bit_image(b) * Gf2p64(*w));
        }
        out
    }

    /// `Σ_k c[k] (f(a[k]) + g(b[k]))` over the common prefix (`g = other`), on the active
    /// backend.
    #[inline]
    pub fn inner_product_pair(&self, other: &Self, c: &[Gf2p64], a: &[u8], b: &[u8]) -> Gf2p64 {
        self.inner_product_pair_with(crate::backend::active(), other, c, a, b)
    }

    /// [`ByteEmbedding::inner_product_pair`] on an explicit backend.
    pub fn inner_product_pair_with(
        &self,
        be: crate::backend::Backend,
        other: &Self,
        c: &[Gf2p64],
        a: &[u8],
        b: &[u8],
    ) -> Gf2p64 {
        Gf2p64(crate::backend::embed_inner(
            be,
            [&self.tables(), &other.tables()],
            a,
            Some(b),
            crate::backend::cast::gf2p64_as_words(c),
        ))
    }

    /// `out[k] = ca[k] f(a[k]) + cb[k] g(b[k])` on the common prefix (`g = other`), on the
    /// active backend.
    #[inline]
    pub fn mul_pair_slice(
        &self,
        other: &Self,
        a: (&[u8], &[Gf2p64]),
        b: (&[u8], &[Gf2p64]),
        out: &mut [Gf2p64],
    ) {
        self.mul_pair_slice_with(crate::backend::active(), other, a, b, out);
    }

    /// [`ByteEmbedding::mul_pair_slice`] on an explicit backend.
    pub fn mul_pair_slice_with(
        &self,
        be: crate::backend::Backend,
        other: &Self,
        a: (&[u8], &[Gf2p64]),
        b: (&[u8], &[Gf2p64]),
        out: &mut [Gf2p64],
    ) {
        use crate::backend::cast::{gf2p64_as_words, gf2p64_as_words_mut};
        crate::backend::embed_mul2(
            be,
            [&self.tables(), &other.tables()],
            (a.0, gf2p64_as_words(a.1)),
            (b.0, gf2p64_as_words(b.1)),
            gf2p64_as_words_mut(out),
        );
    }

    /// `dst[k] = f(a[k]) + g(b[k])` on the common prefix (`g = other`): a map of two bytes in
    /// one pass, on the active backend.
    #[inline]
    pub fn apply_pair_slice(&self, other: &Self, a: &[u8], b: &[u8], dst: &mut [Gf2p64]) {
        self.apply_pair_slice_with(crate::backend::active(), other, a, b, dst);
    }

    /// [`ByteEmbedding::apply_pair_slice`] on an explicit backend.
    pub fn apply_pair_slice_with(
        &self,
        be: crate::backend::Backend,
        other: &Self,
        a: &[u8],
        b: &[u8],
        dst: &mut [Gf2p64],
    ) {
        crate::backend::embed_byte_pairs(
            be,
            [&self.tables(), &other.tables()],
            a,
            b,
            crate::backend::cast::gf2p64_as_words_mut(dst),
        );
    }
}

impl ByteEmbedding {
    /// `dst[k] = Σ_i maps[i](src[i][k])` on the common prefix, on the active backend (on the
    /// 512-bit GFNI backend one pass with one transpose per 64 elements, instead of one per map
    /// pair and a sum of the results).
    pub fn apply_sum_slice<const N: usize>(
        maps: [&ByteEmbedding; N],
        src: [&[u8]; N],
        dst: &mut [Gf2p64],
    ) {
        Self::apply_sum_slice_with(crate::backend::active(), maps, src, dst);
    }

    /// [`ByteEmbedding::apply_sum_slice`] on an explicit backend.
    pub fn apply_sum_slice_with<const N: usize>(
        be: crate::backend::Backend,
        maps: [&ByteEmbedding; N],
        src: [&[u8]; N],
        dst: &mut [Gf2p64],
    ) {
        let tables = maps.map(ByteEmbedding::tables);
        crate::backend::embed_byte_sums(
            be,
            core::array::from_fn(|i| &tables[i]),
            src,
            crate::backend::cast::gf2p64_as_words_mut(dst),
        );
    }
}

/// The index of a byte of the subfield of 16 elements of `GF(2^8)` (the `x` with `x^16 = x`):
/// `(x ^ x >> 4) & 15`, its two nibbles added. On that subfield the map is injective (and
/// `GF(2)`-linear), so a map of the subfield's elements is one table of 16 entries
/// ([`SubfieldEmbedding`]); other bytes share indices.
pub const fn subfield_index(x: u8) -> u8 {
    (x ^ (x >> 4)) & 0x0f
}

/// The elements of the subfield of 16 elements of `GF(2^8)` by [`subfield_index`]:
/// `GF16_IN_GF8[subfield_index(x)] = x` for each of them.
pub const GF16_IN_GF8: [u8; 16] = {
    let mut out = [0u8; 16];
    let mut seen = [false; 16];
    let mut x = 0usize;
    while x < 256 {
        let v = Gf2p8(x as u8);
        let v2 = v.const_mul(v);
        let v4 = v2.const_mul(v2);
        let v8 = v4.const_mul(v4);
        if v8.const_mul(v8).0 == x as u8 {
            let i = subfield_index(x as u8) as usize;
            assert!(!seen[i], "subfield_index is not injective on the subfield");
            seen[i] = true;
            out[i] = x as u8;
        }
        x += 1;
    }
    let mut i = 0;
    while i < 16 {
        assert!(seen[i], "the subfield has 16 elements");
        i += 1;
    }
    out
};

/// Whether `x` lies in the subfield of 16 elements of `GF(2^8)`.
pub const fn in_subfield(x: u8) -> bool {
    GF16_IN_GF8[subfield_index(x) as usize] == x
}

/// A [`ByteEmbedding`] restricted to the subfield of 16 elements of `GF(2^8)`: one table of 16
/// entries indexed by [`subfield_index`] (and its byte planes), with the full map for the
/// backends that keep the general kernel. Where a source's bytes are `GF(2^4)` elements
/// through a field embedding, their sums take one `vpshufb` per byte plane instead of two
/// ([`SubfieldEmbedding::apply_sum_slice_with`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SubfieldEmbedding {
    full: ByteEmbedding,
    table: [u64; 16],
    /// Byte `p` of `table[i]` at `planes[p][i]`.
    planes: [[u8; 16]; 8],
}

impl ByteEmbedding {
    /// `out[e] = Σ_j maps[j](cols[j][e])` for the 32 lanes `e`, over the common length of
    /// `maps` and `cols`, on backend `be`: a sum with one map per column (for example `E_8`
    /// scaled by a coefficient per block, each column a block's values at up to 32 nodes). On
    /// AVX2, two `vpshufb` per byte plane and column, where
    /// [`ByteEmbedding::inner_products`] embeds every term and multiplies it by its
    /// coefficient.
    ///
    /// `maps` are given by their byte planes ([`ByteEmbedding::byte_planes`]), which a caller
    /// with many maps keeps side by side (256 bytes each).
    pub fn column_sums_with(
        be: crate::backend::Backend,
        maps: &[[[u8; 16]; 16]],
        cols: &[[u8; 32]],
    ) -> [Gf2p64; 32] {
        crate::backend::embed_column_sums(be, maps, cols).map(Gf2p64)
    }

    /// The byte planes of the map: byte `p` of `f(v)` at `[p][v]` and of `f(v << 4)` at `[8 +
    /// p][v]` (`v < 16`), the tables [`ByteEmbedding::column_sums_with`] takes.
    pub const fn byte_planes(&self) -> [[u8; 16]; 16] {
        self.planes
    }

    /// `cols[j][e] = rows[e][j]`: up to 32 rows of bytes (lanes past `rows.len()` zero) as
    /// columns of 32 bytes, for [`ByteEmbedding::column_sums_with`], over the common length of
    /// `cols` and the rows (nothing is written for more than 32 rows).
    pub fn transpose_columns_with(
        be: crate::backend::Backend,
        rows: &[&[u8]],
        cols: &mut [[u8; 32]],
    ) {
        crate::backend::transpose_columns(be, rows, cols);
    }
}

impl ByteEmbedding {
    /// This map on the subfield of 16 elements of `GF(2^8)`.
    pub const fn on_subfield(&self) -> SubfieldEmbedding {
        let mut table = [0u64; 16];
        let mut planes = [[0u8; 16]; 8];
        let mut i = 0;
        while i < 16 {
            table[i] = self.apply(GF16_IN_GF8[i]).0;
            let mut p = 0;
            while p < 8 {
                planes[p][i] = (table[i] >> (8 * p)) as u8;
                p += 1;
            }
            i += 1;
        }
        SubfieldEmbedding {
            full: *self,
            table,
            planes,
        }
    }
}

impl SubfieldEmbedding {
    /// `f(x)` for `x` in the subfield (for other bytes, the image of the subfield element
    /// with the same [`subfield_index`]).
    pub const fn apply(&self, x: u8) -> Gf2p64 {
        Gf2p64(self.table[subfield_index(x) as usize])
    }

    /// The map on all bytes.
    pub const fn full(&self) -> &ByteEmbedding {
        &self.full
    }

    /// `dst[k] = Σ_i maps[i](src[i][k])` on the common prefix, on backend `be`, where every
    /// byte of the sources lies in the subfield (otherwise the result is wrong where
    /// [`crate::backend::subfield_sums_preferred`] holds, and right elsewhere).
    pub fn apply_sum_slice_with<const N: usize>(
        be: crate::backend::Backend,
        maps: [&SubfieldEmbedding; N],
        src: [&[u8]; N],
        dst: &mut [Gf2p64],
    ) {
        let tables = maps.map(|m| m.full.tables());
        crate::backend::embed_subfield_sums(
            be,
            maps.map(|m| &m.planes),
            core::array::from_fn(|i| &tables[i]),
            src,
            crate::backend::cast::gf2p64_as_words_mut(dst),
        );
    }
}

/// The transpose of an 8×8 bit matrix (bit `8 r + c` ↦ bit `8 c + r`), by three swaps of
/// blocks.
const fn transpose_bits8(mut x: u64) -> u64 {
    let t = (x ^ (x >> 7)) & 0x00aa_00aa_00aa_00aa;
    x ^= t ^ (t << 7);
    let t = (x ^ (x >> 14)) & 0x0000_cccc_0000_cccc;
    x ^= t ^ (t << 14);
    let t = (x ^ (x >> 28)) & 0x0000_0000_f0f0_f0f0;
    x ^ t ^ (t << 28)
}

/// The sums of the coefficients over each bit plane: `out[i][b] = Σ_k c[k] · (bit b of
/// src[i][k])` over the common prefix of `c` and all `src[i]`, on the active backend (bit sums
/// on the 512-bit GFNI backend of a CPU with AVX-512 VBMI, see
/// [`ByteEmbedding::inner_products`]; AVX2 blends of four words at a time on the other x86-64
/// backends; a masked sum on the portable one).
pub fn bit_plane_sums<const N: usize>(c: &[Gf2p64], src: [&[u8]; N]) -> [[Gf2p64; 8]; N] {
    bit_plane_sums_with(crate::backend::active(), c, src)
}

/// [`bit_plane_sums`] on an explicit backend.
pub fn bit_plane_sums_with<const N: usize>(
    be: crate::backend::Backend,
    c: &[Gf2p64],
    src: [&[u8]; N],
) -> [[Gf2p64; 8]; N] {
    let words = crate::backend::cast::gf2p64_as_words(c);
    if let Some(sums) = crate::backend::bit_plane_sums(be, words, src) {
        return sums.map(|s| s.map(Gf2p64));
    }
    let n = src.iter().fold(c.len(), |n, s| n.min(s.len()));
    src.map(|a| {
        let mut out = [0u64; 8];
        for (w, x) in words[..n].iter().zip(&a[..n]) {
            for (b, o) in out.iter_mut().enumerate() {
                *o ^= w & 0u64.wrapping_sub(u64::from((x >> b) & 1));
            }
        }
        out.map(Gf2p64)
    })
}

/// Whether [`ByteEmbedding::inner_products`] uses bit sums on the active backend (the 512-bit
/// GFNI backend on a CPU with AVX-512 VBMI); elsewhere callers may prefer the fused pair
/// forms ([`ByteEmbedding::inner_product_pair`]).
pub fn has_bit_sums() -> bool {
    crate::backend::has_bit_sums(crate::backend::active())
}

/// `E_8` as nibble tables.
pub const E8_TABLES: ByteEmbedding = ByteEmbedding::new(&E8_IMAGES);

/// `E_4` as nibble tables (the high nibble is ignored, as in [`e4`]).
pub const E4_TABLES: ByteEmbedding = ByteEmbedding::new(&[
    E4_IMAGES[0],
    E4_IMAGES[1],
    E4_IMAGES[2],
    E4_IMAGES[3],
    Gf2p64(0),
    Gf2p64(0),
    Gf2p64(0),
    Gf2p64(0),
]);

/// `E_8 ∘ φ^(-1)` (tower field to `GF(2^64)`) as nibble tables.
pub const TOWER_TABLES: ByteEmbedding = {
    let mut images = [Gf2p64(0); 8];
    let mut j = 0;
    while j < 8 {
        images[j] = e8(Gf4Tower(1 << j).to_gf2p8());
        j += 1;
    }
    ByteEmbedding::new(&images)
};

/// The gf4p4 embedding as three nibble tables, `GF4P4_TABLES[i][v] = φ_0(v) · A^i`, so that
/// [`gf4p4`]`([a_0, a_1, a_2]) = T[0][a_0] + T[1][a_1] + T[2][a_2]` (secret-indexed like
/// [`ByteEmbedding`]).
pub const GF4P4_TABLES: [[u64; 16]; 3] = {
    let factors = [Gf2p64(1), GF4P4_A, GF4P4_A2];
    let mut t = [[0u64; 16]; 3];
    let mut i = 0;
    while i < 3 {
        let mut v = 0;
        while v < 16 {
            t[i][v] = phi0(Gf2p4(v as u8)).const_mul(factors[i]).0;
            v += 1;
        }
        i += 1;
    }
    t
};

/// The sixteen elements of the subfield `S = {s : s^16 = s}` of `GF(2^8)`, in increasing
/// order. Lagrange coefficients between nodes in `S` lie in `S`.
pub const SUBFIELD16: [u8; 16] = {
    let mut out = [0u8; 16];
    let mut n = 0;
    let mut b = 0usize;
    while b < 256 {
        if Gf2p8(b as u8).pow(16).0 == b as u8 {
            assert!(n < 16);
            out[n] = b as u8;
            n += 1;
        }
        b += 1;
    }
    assert!(n == 16);
    out
};

/// `ψ`: `GF(2^4)` onto [`SUBFIELD16`] with `E_8 ∘ ψ = φ_0` (both are isomorphisms onto the
/// subfield `GF(2^4)` of `GF(2^64)`), by nibble: `PAIR_PSI[v] = ψ(v)`.
pub const PAIR_PSI: [u8; 16] = {
    let mut psi = [0u8; 16];
    let mut v = 0;
    while v < 16 {
        let want = phi0(Gf2p4(v as u8)).0;
        let mut i = 0;
        let mut found = false;
        while i < 16 {
            if e8(Gf2p8(SUBFIELD16[i])).0 == want {
                psi[v] = SUBFIELD16[i];
                found = true;
            }
            i += 1;
        }
        assert!(found);
        v += 1;
    }
    psi
};

/// `w`, the least byte outside [`SUBFIELD16`]: `GF(2^8) = S ⊕ S w`.
pub const PAIR_W: Gf2p8 = {
    let mut b = 0u8;
    while Gf2p8(b).pow(16).0 == b {
        b += 1;
    }
    Gf2p8(b)
};

/// `σ = w + w^16` and `λ = w · w^16` (both in `S`): `w^2 = σ w + λ`.
const PAIR_SIGMA: Gf2p8 = Gf2p8(PAIR_W.0 ^ PAIR_W.pow(16).0);
const PAIR_LAMBDA: Gf2p8 = PAIR_W.const_mul(PAIR_W.pow(16));

/// `π_1`: `s_0 + s_1 w ↦ s_1` (`s_0, s_1 ∈ S`), as a byte map: `s_1 = (b + b^16) / σ`.
pub const PAIR_SECOND: crate::LinearMap8 = {
    let inv = PAIR_SIGMA.pow(254);
    let mut images = [0u8; 8];
    let mut j = 0;
    while j < 8 {
        let b = Gf2p8(1 << j);
        images[j] = Gf2p8(b.0 ^ b.pow(16).0).const_mul(inv).0;
        j += 1;
    }
    crate::LinearMap8::from_basis_images(images)
};

/// The pair form of the elements `φ_0(x_0) + φ_0(x_1) A` of `GF(2^16)` (`x_0, x_1 ∈ GF(2^4)`;
/// the `X` and `Y` of the gf4p4 relations, PROTOCOLS.md §5.5): the byte `b = ψ(x_0) + ψ(x_1)
/// w` ([`PAIR_PSI`], [`PAIR_W`]), embedded by this map, `b ↦ E_8(s_0) + E_8(s_1) A` for `b =
/// s_0 + s_1 w`. The map is `S`-linear (`E_8(s) · f(b) = f(s b)` for `s ∈ S`), so sums of pair
/// forms scaled by elements of `S` are taken on the bytes. A product of two pair forms `X`,
/// `Y` in `GF(2^16)` embeds as `f(X Y) + g(π_1(X) π_1(Y))` with `f` this map and `g` =
/// [`PAIR_SQUARE_TERM`] (products in `GF(2^8)`): with `w^2 = σ w + λ`, `X Y = (x_0 y_0 + λ
/// x_1 y_1) + (x_0 y_1 + x_1 y_0 + σ x_1 y_1) w`.
pub const PAIR_EMBEDDING: ByteEmbedding = {
    let mut images = [Gf2p64(0); 8];
    let mut j = 0;
    while j < 8 {
        let b = 1u8 << j;
        let s1 = PAIR_SECOND.apply_byte(b);
        let s0 = b ^ Gf2p8(s1).const_mul(PAIR_W).0;
        images[j] = Gf2p64(e8(Gf2p8(s0)).0 ^ e8(Gf2p8(s1)).const_mul(GF4P4_A).0);
        j += 1;
    }
    ByteEmbedding::new(&images)
};

/// The correction of a product of pair forms for its `A^2` term ([`PAIR_EMBEDDING`]): `r ↦
/// E_8(λ r) + E_8(σ r) A + E_8(r) A^2`, for `r = π_1(X) π_1(Y)`.
pub const PAIR_SQUARE_TERM: ByteEmbedding = {
    let mut images = [Gf2p64(0); 8];
    let mut j = 0;
    while j < 8 {
        let r = Gf2p8(1 << j);
        images[j] = Gf2p64(
            e8(r.const_mul(PAIR_LAMBDA)).0
                ^ e8(r.const_mul(PAIR_SIGMA)).const_mul(GF4P4_A).0
                ^ e8(r).const_mul(GF4P4_A2).0,
        );
        j += 1;
    }
    ByteEmbedding::new(&images)
};

/// Where a nibble of a packed byte goes in the pair form ([`pair_of_nibbles`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PairSlot {
    /// Ignored.
    None,
    /// `ψ(v)`, the coefficient of 1.
    First,
    /// `ψ(v) w`, the coefficient of `w`.
    Second,
}

/// The byte map of a packed byte (high ‖ low nibble) to the sum of the pair-form slots of its
/// nibbles: `pair_of_nibbles(First, Second)` maps `x_0 ‖ x_1` to the pair form of `φ_0(x_0) +
/// φ_0(x_1) A`.
pub const fn pair_of_nibbles(high: PairSlot, low: PairSlot) -> crate::LinearMap8 {
    const fn slot(s: PairSlot, v: usize) -> u8 {
        match s {
            PairSlot::None => 0,
            PairSlot::First => PAIR_PSI[v],
            PairSlot::Second => Gf2p8(PAIR_PSI[v]).const_mul(PAIR_W).0,
        }
    }
    let mut images = [0u8; 8];
    let mut j = 0;
    while j < 4 {
        images[j] = slot(low, 1 << j);
        images[j + 4] = slot(high, 1 << j);
        j += 1;
    }
    crate::LinearMap8::from_basis_images(images)
}

/// `dst[k]` = the gf4p4 embedding of `Σ_i coeffs[i][k] α^i` for up to three coefficient
/// slices (missing coefficients are zero; high nibbles are ignored).
pub fn gf4p4_slice(coeffs: &[&[Gf2p4]], dst: &mut [Gf2p64]) {
    debug_assert!(coeffs.len() <= 3);
    dst.fill(Gf2p64(0));
    for (table, c) in GF4P4_TABLES.iter().zip(coeffs) {
        debug_assert_eq!(c.len(), dst.len());
        for (d, v) in dst.iter_mut().zip(c.iter()) {
            d.0 ^= table[(v.0 & 0x0f) as usize];
        }
    }
}

/// A bit as `0` or `1` in `GF(2^64)`.
pub const fn bit(b: bool) -> Gf2p64 {
    Gf2p64(b as u64)
}

/// `E_8`.
impl EmbedInto<Gf2p64> for Gf2p8 {
    fn embed(self) -> Gf2p64 {
        e8(self)
    }
    fn embed_slice(src: &[Self], dst: &mut [Gf2p64]) {
        debug_assert_eq!(src.len(), dst.len());
        E8_TABLES.apply_slice(crate::backend::cast::gf2p8_as_bytes(src), dst);
    }
}

/// `E_4`.
impl EmbedInto<Gf2p64> for Gf2p4 {
    fn embed(self) -> Gf2p64 {
        e4(self)
    }
    fn embed_slice(src: &[Self], dst: &mut [Gf2p64]) {
        debug_assert_eq!(src.len(), dst.len());
        E4_TABLES.apply_slice(crate::backend::cast::gf2p4_as_bytes(src), dst);
    }
}

/// `E_8 ∘ φ^(-1)`.
impl EmbedInto<Gf2p64> for Gf4Tower {
    fn embed(self) -> Gf2p64 {
        e8(self.to_gf2p8())
    }
    fn embed_slice(src: &[Self], dst: &mut [Gf2p64]) {
        debug_assert_eq!(src.len(), dst.len());
        TOWER_TABLES.apply_slice(Gf4Tower::slice_as_bytes(src), dst);
    }
}
