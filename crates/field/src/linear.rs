//! `GF(2)`-linear maps on bytes (8×8 bit matrices), e.g. Frobenius powers, the AES affine
//! matrix, multiplication by a constant, the WOL isomorphism.

use crate::backend::{self, cast, Backend};
use crate::gf2p8::mul_u8;
use crate::Gf2p8;

/// A `GF(2)`-linear map on bytes, given by the images of the 8 basis bytes `1 << j`.
///
/// `apply` uses two 16-entry nibble tables: `L(x) = T_lo[x & 15] ⊕ T_hi[x >> 4]` (the struct
/// is 64-byte aligned, so both tables sit in one cache line).
/// The slice methods run on the active backend (`vpshufb` with the same tables on AVX2,
/// `gf2p8affineqb` on GFNI).
///
/// Affine maps: apply the linear part, then add the constant (e.g. the S-box is
/// `AES_A.apply(x.inverse()) + Gf2p8::SBOX_CONSTANT`); on shares the constant is added through
/// the public-constant sharing (PROTOCOLS.md §1.3), so it is deliberately not part of this type.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
#[repr(C, align(64))]
pub struct LinearMap8 {
    /// The matrix in the layout of `gf2p8affineqb`: byte `7 - i` is row `i`, i.e. the set of
    /// input bits that feed output bit `i`.
    gfni: u64,
    images: [u8; 8],
    lo: [u8; 16],
    hi: [u8; 16],
}

impl core::fmt::Debug for LinearMap8 {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        write!(f, "LinearMap8(images: [")?;
        for (j, x) in self.images.iter().enumerate() {
            if j > 0 {
                f.write_str(", ")?;
            }
            write!(f, "{x:#04x}")?;
        }
        f.write_str("])")
    }
}

/// Image of `x` under the map with basis images `images` (bit by bit).
const fn apply_images(images: &[u8; 8], x: u8) -> u8 {
    let mut r = 0u8;
    let mut j = 0;
    while j < 8 {
        r ^= images[j] & 0u8.wrapping_sub((x >> j) & 1);
        j += 1;
    }
    r
}

/// `x^(2^k)` in GF(2^8) (the exponent is public).
const fn frobenius(x: u8, k: u32) -> u8 {
    let mut r = x;
    let mut i = 0;
    while i < k {
        r = mul_u8(r, r);
        i += 1;
    }
    r
}

/// The AES affine linear part: `A(x) = x ⊕ (x <<< 1) ⊕ (x <<< 2) ⊕ (x <<< 3) ⊕ (x <<< 4)`
/// (FIPS-197 eq. 5.1 without the constant).
const fn aes_a(x: u8) -> u8 {
    x ^ x.rotate_left(1) ^ x.rotate_left(2) ^ x.rotate_left(3) ^ x.rotate_left(4)
}

/// The inverse of [`aes_a`]: `A^(-1)(x) = (x <<< 1) ⊕ (x <<< 3) ⊕ (x <<< 6)`.
const fn aes_a_inv(x: u8) -> u8 {
    x.rotate_left(1) ^ x.rotate_left(3) ^ x.rotate_left(6)
}

/// The AES affine linear parts, evaluated on the basis bytes.
const fn basis_images_of_rotations(which: AesLinear) -> [u8; 8] {
    let mut images = [0u8; 8];
    let mut j = 0;
    while j < 8 {
        let x = 1u8 << j;
        images[j] = match which {
            AesLinear::Forward => aes_a(x),
            AesLinear::Inverse => aes_a_inv(x),
        };
        j += 1;
    }
    images
}

#[derive(Clone, Copy)]
enum AesLinear {
    Forward,
    Inverse,
}

impl LinearMap8 {
    /// The identity map.
    pub const IDENTITY: Self = Self::from_basis_images([1, 2, 4, 8, 16, 32, 64, 128]);
    /// The zero map.
    pub const ZERO: Self = Self::from_basis_images([0; 8]);
    /// Squaring `x ↦ x^2` in `GF(2^8)`.
    pub const SQUARE: Self = Self::frobenius_power(1);
    /// `x ↦ x^4`.
    pub const POW4: Self = Self::frobenius_power(2);
    /// `x ↦ x^8`.
    pub const POW8: Self = Self::frobenius_power(3);
    /// `x ↦ x^16`.
    pub const POW16: Self = Self::frobenius_power(4);
    /// The linear part `A` of the AES S-box affine map: `S(x) = A(x^(-1)) + 63`.
    pub const AES_A: Self = Self::from_basis_images(basis_images_of_rotations(AesLinear::Forward));
    /// `A^(-1)`; the inverse S-box is `S^(-1)(y) = A^(-1)(y + 63)^(-1)`.
    pub const AES_A_INV: Self =
        Self::from_basis_images(basis_images_of_rotations(AesLinear::Inverse));

    /// The map sending bit `j` (the byte `1 << j`) to `images[j]`.
    pub const fn from_basis_images(images: [u8; 8]) -> Self {
        let mut lo = [0u8; 16];
        let mut hi = [0u8; 16];
        let mut x = 0;
        while x < 16 {
            lo[x] = apply_images(&images, x as u8);
            hi[x] = apply_images(&images, (x as u8) << 4);
            x += 1;
        }
        let mut gfni = 0u64;
        let mut i = 0;
        while i < 8 {
            let mut row = 0u8;
            let mut j = 0;
            while j < 8 {
                row |= ((images[j] >> i) & 1) << j;
                j += 1;
            }
            gfni |= (row as u64) << (8 * (7 - i));
            i += 1;
        }
        Self {
            gfni,
            images,
            lo,
            hi,
        }
    }

    /// `x ↦ x^(2^k)` in `GF(2^8)`.
    pub const fn frobenius_power(k: u32) -> Self {
        let mut images = [0u8; 8];
        let mut j = 0;
        while j < 8 {
            images[j] = frobenius(1 << j, k);
            j += 1;
        }
        Self::from_basis_images(images)
    }

    /// Multiplication by the constant `c` in `GF(2^8)`.
    pub const fn mul_by(c: Gf2p8) -> Self {
        let mut images = [0u8; 8];
        let mut j = 0;
        while j < 8 {
            images[j] = mul_u8(c.0, 1 << j);
            j += 1;
        }
        Self::from_basis_images(images)
    }

    /// The images of the basis bytes `1 << j`, `j = 0..8`.
    pub const fn basis_images(&self) -> [u8; 8] {
        self.images
    }

    /// The matrix in the operand layout of `gf2p8affineqb` (byte `7 - i` = row `i`).
    pub const fn gfni_matrix(&self) -> u64 {
        self.gfni
    }

    pub(crate) fn nibble_tables(&self) -> (&[u8; 16], &[u8; 16]) {
        (&self.lo, &self.hi)
    }

    /// The image of a byte.
    #[inline]
    pub const fn apply_byte(&self, x: u8) -> u8 {
        self.lo[(x & 0x0f) as usize] ^ self.hi[(x >> 4) as usize]
    }

    /// The image of a field element.
    #[inline]
    pub fn apply(&self, x: Gf2p8) -> Gf2p8 {
        Gf2p8(self.apply_byte(x.0))
    }

    /// `self ∘ inner`: first `inner`, then `self`.
    pub const fn compose(&self, inner: &Self) -> Self {
        let mut images = [0u8; 8];
        let mut j = 0;
        while j < 8 {
            images[j] = self.apply_byte(inner.images[j]);
            j += 1;
        }
        Self::from_basis_images(images)
    }

    /// The inverse map, if the matrix is invertible.
    pub const fn inverse(&self) -> Option<Self> {
        // Preimage of each basis byte by search over the 256 bytes (cheap at compile time).
        let mut images = [0u8; 8];
        let mut found = 0u8;
        let mut x = 0usize;
        while x < 256 {
            let y = self.apply_byte(x as u8);
            if y.is_power_of_two() {
                let j = y.trailing_zeros() as usize;
                images[j] = x as u8;
                found |= y;
            }
            x += 1;
        }
        if found == 0xff {
            Some(Self::from_basis_images(images))
        } else {
            None
        }
    }

    /// `dst[k] = self(src[k])` on the active backend (lengths must match; release builds
    /// process the common prefix).
    pub fn apply_slice(&self, src: &[Gf2p8], dst: &mut [Gf2p8]) {
        self.apply_slice_with(backend::active(), src, dst);
    }

    /// `buf[k] = self(buf[k])` on the active backend.
    pub fn apply_in_place(&self, buf: &mut [Gf2p8]) {
        self.apply_in_place_with(backend::active(), buf);
    }

    /// [`LinearMap8::apply_slice`] on an explicit backend (portable if `be` is unavailable).
    pub fn apply_slice_with(&self, be: Backend, src: &[Gf2p8], dst: &mut [Gf2p8]) {
        debug_assert_eq!(src.len(), dst.len());
        backend::linear_apply(
            be,
            self,
            cast::gf2p8_as_bytes(src),
            cast::gf2p8_as_bytes_mut(dst),
        );
    }

    /// [`LinearMap8::apply_in_place`] on an explicit backend.
    pub fn apply_in_place_with(&self, be: Backend, buf: &mut [Gf2p8]) {
        backend::linear_apply_in_place(be, self, cast::gf2p8_as_bytes_mut(buf));
    }

    /// `dst[k] = self(src[k])` on raw bytes, on the active backend.
    pub fn apply_bytes(&self, src: &[u8], dst: &mut [u8]) {
        debug_assert_eq!(src.len(), dst.len());
        backend::linear_apply(backend::active(), self, src, dst);
    }

    /// `dst[k] = Σ_i maps[i](src[i][k])` on raw bytes and the common prefix, on the active
    /// backend (one pass on the 512-bit GFNI backend, else by pairs).
    pub fn apply_sum_bytes<const N: usize>(maps: [&Self; N], src: [&[u8]; N], dst: &mut [u8]) {
        Self::apply_sum_bytes_with(backend::active(), maps, src, dst);
    }

    /// [`LinearMap8::apply_sum_bytes`] on an explicit backend.
    pub fn apply_sum_bytes_with<const N: usize>(
        be: Backend,
        maps: [&Self; N],
        src: [&[u8]; N],
        dst: &mut [u8],
    ) {
        backend::linear_apply_sum(be, maps, src, dst);
    }

    /// `dst[e][k] = Σ_i maps[e][i](src[i][k])` for every `e`, on raw bytes and the common
    /// prefix of all sources and outputs, on the active backend: on the AVX2 backends one pass
    /// over the sources (each split into nibbles once for all `E` sums), elsewhere one
    /// [`LinearMap8::apply_sum_bytes`] per `e`.
    pub fn apply_sums_bytes<const N: usize, const E: usize>(
        maps: &[[Self; N]; E],
        src: [&[u8]; N],
        dst: [&mut [u8]; E],
    ) {
        Self::apply_sums_bytes_with(backend::active(), maps, src, dst);
    }

    /// [`LinearMap8::apply_sums_bytes`] on an explicit backend.
    pub fn apply_sums_bytes_with<const N: usize, const E: usize>(
        be: Backend,
        maps: &[[Self; N]; E],
        src: [&[u8]; N],
        dst: [&mut [u8]; E],
    ) {
        backend::linear_apply_sums(be, maps, src, dst);
    }

    /// `dst[k] = self(a[k]) ^ other(b[k])` on raw bytes, on the active backend (one pass on
    /// the GFNI backends): a linear map of the 16-bit values `(a[k], b[k])`. Lengths must
    /// match; release builds process the common prefix.
    pub fn apply_pair_bytes(&self, other: &Self, a: &[u8], b: &[u8], dst: &mut [u8]) {
        self.apply_pair_bytes_with(backend::active(), other, a, b, dst);
    }

    /// [`LinearMap8::apply_pair_bytes`] on an explicit backend (portable if `be` is
    /// unavailable).
    pub fn apply_pair_bytes_with(
        &self,
        be: Backend,
        other: &Self,
        a: &[u8],
        b: &[u8],
        dst: &mut [u8],
    ) {
        debug_assert!(a.len() == dst.len() && b.len() == dst.len());
        backend::linear_apply_pair(be, [self, other], a, b, dst);
    }

    /// `dst[k] = self(lo) ^ other(hi)` for the low and high bytes of `src[k]` (a linear map of
    /// the 16-bit values), on the active backend. Lengths must match; release builds process
    /// the common prefix.
    pub fn apply_pair_words(&self, other: &Self, src: &[u16], dst: &mut [u8]) {
        self.apply_pair_words_with(backend::active(), other, src, dst);
    }

    /// [`LinearMap8::apply_pair_words`] on an explicit backend (portable if `be` is
    /// unavailable).
    pub fn apply_pair_words_with(&self, be: Backend, other: &Self, src: &[u16], dst: &mut [u8]) {
        debug_assert_eq!(src.len(), dst.len());
        backend::linear_apply_pair_words(be, [self, other], src, dst);
    }

    /// `buf[k] = self(buf[k])` on raw bytes, on the active backend.
    pub fn apply_bytes_in_place(&self, buf: &mut [u8]) {
        backend::linear_apply_in_place(backend::active(), self, buf);
    }
}
