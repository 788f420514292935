//! The tower field `GF((2^4)^2) = GF(2^4)[Y]/(Y^2+Y+λ)`, `λ` = `0xE`, and the WOL
//! isomorphism with `GF(2^8)` (PROTOCOLS.md §2.3).

use zeroize::Zeroize;

use crate::backend::cast;
use crate::gf2p4::mul_u4;
use crate::macros::{impl_char2_additive, impl_hex_fmt, impl_mul_sum_product};
use crate::{Bulk, EmbedInto, Encode, Field, FieldError, Gf2p4, Gf2p8, LinearMap8, Random};

/// An element `a_h Y + a_l` of the tower field, packed as the byte `a_h || a_l`
/// (high nibble `a_h`).
#[derive(Clone, Copy, Default, PartialEq, Eq, Hash, PartialOrd, Ord, Zeroize)]
#[repr(transparent)]
pub struct Gf4Tower(pub u8);

impl_char2_additive!(Gf4Tower);
impl_mul_sum_product!(Gf4Tower);
impl_hex_fmt!(Gf4Tower, "Gf4Tower", "2", "4");

const LAMBDA: u8 = 0x0e;

/// `(a_hY+a_l)(b_hY+b_l) = (a_hb_h+a_hb_l+a_lb_h)Y + (λ a_hb_h+a_lb_l)`.
const fn tower_mul(a: u8, b: u8) -> u8 {
    let (ah, al, bh, bl) = (a >> 4, a & 0x0f, b >> 4, b & 0x0f);
    let hh = mul_u4(ah, bh);
    let h = hh ^ mul_u4(ah, bl) ^ mul_u4(al, bh);
    let l = mul_u4(LAMBDA, hh) ^ mul_u4(al, bl);
    (h << 4) | l
}

/// Inverse via the norm `d=λ a_h^2+a_ha_l+a_l^2`:
/// `(a_hY+a_l)^(-1) = (a_h d^(-1))Y + (a_h+a_l)d^(-1)`, with `0 ↦ 0`.
fn tower_inv(a: u8) -> u8 {
    let (ah, al) = (a >> 4, a & 0x0f);
    let d = mul_u4(LAMBDA, mul_u4(ah, ah)) ^ mul_u4(ah, al) ^ mul_u4(al, al);
    let dinv = Gf2p4(d).inverse().0;
    (mul_u4(ah, dinv) << 4) | mul_u4(ah ^ al, dinv)
}

/// `φ(u^j) = φ(u)^j` with `φ(u)` = `0x26` (`2Y + 6`).
const fn wol_images() -> [u8; 8] {
    let mut images = [0u8; 8];
    let mut power = 1u8;
    let mut j = 0;
    while j < 8 {
        images[j] = power;
        power = tower_mul(power, Gf4Tower::WOL_U.0);
        j += 1;
    }
    images
}

const WOL_INV_OR_ZERO: LinearMap8 = match Gf4Tower::WOL.inverse() {
    Some(m) => m,
    None => LinearMap8::ZERO,
};
// The WOL map is a field isomorphism, so its matrix is invertible (also tested).
const _: () = assert!(Gf4Tower::WOL.inverse().is_some());

impl Gf4Tower {
    /// `λ` = `0xE` `= u^3+u^2+u` in `GF(2^4)`.
    pub const LAMBDA: Gf2p4 = Gf2p4(LAMBDA);
    /// `φ(u)` = `0x26`, the image of the `GF(2^8)` generator `u` that fixes the WOL map.
    pub const WOL_U: Gf4Tower = Gf4Tower(0x26);
    /// The WOL isomorphism `φ: GF(2^8) → GF((2^4)^2)` (Wolkerstorfer et al., CT-RSA'02),
    /// as a linear map from `Gf2p8` bytes to packed tower bytes.
    pub const WOL: LinearMap8 = LinearMap8::from_basis_images(wol_images());
    /// `φ^(-1)`, from packed tower bytes to `Gf2p8` bytes.
    pub const WOL_INV: LinearMap8 = WOL_INV_OR_ZERO;

    /// `a_h Y + a_l`.
    pub const fn from_parts(high: Gf2p4, low: Gf2p4) -> Self {
        Self(((high.0 & 0x0f) << 4) | (low.0 & 0x0f))
    }
    /// `a_h`.
    pub const fn high(self) -> Gf2p4 {
        Gf2p4(self.0 >> 4)
    }
    /// `a_l`.
    pub const fn low(self) -> Gf2p4 {
        Gf2p4(self.0 & 0x0f)
    }

    /// `φ(x)`.
    pub const fn from_gf2p8(x: Gf2p8) -> Self {
        Self(Self::WOL.apply_byte(x.0))
    }
    /// `φ^(-1)(self)`.
    pub const fn to_gf2p8(self) -> Gf2p8 {
        Gf2p8(Self::WOL_INV.apply_byte(self.0))
    }
    /// `dst[k] = φ(src[k])` on the active backend (lengths must match).
    pub fn from_gf2p8_slice(src: &[Gf2p8], dst: &mut [Self]) {
        Self::WOL.apply_bytes(cast::gf2p8_as_bytes(src), cast::tower_as_bytes_mut(dst));
    }
    /// `dst[k] = φ^-1(src[k])` on the active backend (lengths must match).
    pub fn to_gf2p8_slice(src: &[Self], dst: &mut [Gf2p8]) {
        Self::WOL_INV.apply_bytes(cast::tower_as_bytes(src), cast::gf2p8_as_bytes_mut(dst));
    }

    /// The elements as bytes (no copy).
    pub fn slice_as_bytes(s: &[Self]) -> &[u8] {
        cast::tower_as_bytes(s)
    }
    /// The elements as mutable bytes (no copy).
    pub fn slice_as_bytes_mut(s: &mut [Self]) -> &mut [u8] {
        cast::tower_as_bytes_mut(s)
    }
    /// Bytes viewed as elements (no copy; every byte is an element).
    pub fn slice_from_bytes(b: &[u8]) -> &[Self] {
        cast::bytes_as_tower(b)
    }
    /// Mutable bytes viewed as elements (no copy).
    pub fn slice_from_bytes_mut(b: &mut [u8]) -> &mut [Self] {
        cast::bytes_as_tower_mut(b)
    }

    /// `out[k] = a[k] b[k] + c[k] d[k]` on packed tower bytes (the local product of §1.6 as
    /// `x_1 (y_1 + y_2) + x_2 y_1`), on the active backend: by logarithms of the nibbles on
    /// AVX2 ([`crate::backend::tower_products_preferred`]).
    pub fn mul_sum2_bytes(out: &mut [u8], a: &[u8], b: &[u8], c: &[u8], d: &[u8]) {
        Self::mul_sum2_bytes_with(crate::backend::active(), out, a, b, c, d);
    }

    /// [`Gf4Tower::mul_sum2_bytes`] on an explicit backend.
    pub fn mul_sum2_bytes_with(
        be: crate::backend::Backend,
        out: &mut [u8],
        a: &[u8],
        b: &[u8],
        c: &[u8],
        d: &[u8],
    ) {
        debug_assert!([a.len(), b.len(), c.len(), d.len()] == [out.len(); 4]);
        crate::backend::tower_mul_sum2(be, out, a, b, c, d);
    }

    /// Product, usable in constant expressions (same as `*`).
    #[inline]
    pub const fn const_mul(self, rhs: Self) -> Self {
        Self(tower_mul(self.0, rhs.0))
    }

    #[inline]
    fn mul_elem(self, rhs: Self) -> Self {
        self.const_mul(rhs)
    }
}

impl From<Gf2p8> for Gf4Tower {
    /// The WOL map `φ`.
    fn from(x: Gf2p8) -> Self {
        Self::from_gf2p8(x)
    }
}

impl From<Gf4Tower> for Gf2p8 {
    /// The inverse WOL map `φ^(-1)`.
    fn from(x: Gf4Tower) -> Self {
        x.to_gf2p8()
    }
}

/// The subfield `a_h = 0`.
impl EmbedInto<Gf4Tower> for Gf2p4 {
    fn embed(self) -> Gf4Tower {
        Gf4Tower(self.0 & 0x0f)
    }
}

/// `a ↦ φ^(-1)(0 · Y + a)`: `00 01 5c 5d e0 e1 bc bd 50 51 0c 0d b0 b1 ec ed`.
impl EmbedInto<Gf2p8> for Gf2p4 {
    fn embed(self) -> Gf2p8 {
        Gf4Tower(self.0 & 0x0f).to_gf2p8()
    }
}

impl Field for Gf4Tower {
    const NAME: &'static str = "GF((2^4)^2)";
    const ZERO: Self = Self(0);
    const ONE: Self = Self(1);
    const CHARACTERISTIC_TWO: bool = true;

    /// One `GF(2^4)` inversion (table lookup) and a few products.
    fn inverse(self) -> Self {
        Self(tower_inv(self.0))
    }
}

/// One byte per element (`a_h || a_l`).
impl Encode for Gf4Tower {
    fn encoded_len(n: usize) -> usize {
        n
    }
    fn encode_slice(src: &[Self], out: &mut Vec<u8>) {
        out.extend_from_slice(cast::tower_as_bytes(src));
    }
    fn decode_slice(bytes: &[u8], out: &mut [Self]) -> Result<(), FieldError> {
        if bytes.len() != out.len() {
            return Err(FieldError::LengthMismatch {
                expected: out.len(),
                got: bytes.len(),
            });
        }
        cast::tower_as_bytes_mut(out).copy_from_slice(bytes);
        Ok(())
    }
}

/// One byte of the stream per element; `fill_random` is one `fill_bytes` into the slice.
impl Random for Gf4Tower {
    fn random<R: rand_core::RngCore + ?Sized>(rng: &mut R) -> Self {
        let mut b = [0u8; 1];
        rng.fill_bytes(&mut b);
        Self(b[0])
    }
    fn fill_random<R: rand_core::RngCore + ?Sized>(rng: &mut R, out: &mut [Self]) {
        rng.fill_bytes(cast::tower_as_bytes_mut(out));
    }
    fn xor_bytes_mut(out: &mut [Self]) -> Option<(&mut [u8], u8)> {
        Some((cast::tower_as_bytes_mut(out), 0xff))
    }
}

impl Bulk for Gf4Tower {}
