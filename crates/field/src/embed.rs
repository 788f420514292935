//! Embeddings into `GF(2^64)` (PROTOCOLS.md §2.4), used to lift small-field triples to the
//! check field (§5.5).
//!
//! All maps here are injective ring homomorphisms and `GF(2)`-linear, evaluated branch-free as
//! sums of basis images selected by bit masks (no secret-indexed tables). The trait
//! [`EmbedInto`] gives the same maps as `x.embed()`.
//!
//! * `E_8: GF(2^8) → GF(2^64)`, `u ↦ β` ([`BETA`], a root of `u^8+u^4+u^3+u+1`).
//! * `E_4: GF(2^4) → GF(2^64)`, `u ↦ γ` ([`GAMMA`]), consistent with WOL:
//!   `E_4(a) = E_8(φ^(-1)(0 · Y + a))` (that is how `γ` is computed here).
//! * The tower field via `E_8 ∘ φ^(-1)`.
//! * `GF(2^16) = GF(2^4)[α]/(α^4+α^2+uα+u^2)` ("gf4p4"):
//!   `φ_0(a) = E_4(a)^8` and `α ↦ A` ([`GF4P4_A`]); [`gf4p4`] embeds polynomials
//!   of `α`-degree ≤ 2.
//! * Bits: [`bit`].

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

/// A bit as `0` or `1` in `GF(2^64)`.
pub const fn bit(b: bool) -> Gf2p64 {
    Gf2p64(b as u64)
}

/// `E_8`.
impl EmbedInto<Gf2p64> for Gf2p8 {
    fn embed(self) -> Gf2p64 {
        e8(self)
    }
}

/// `E_4`.
impl EmbedInto<Gf2p64> for Gf2p4 {
    fn embed(self) -> Gf2p64 {
        e4(self)
    }
}

/// `E_8 ∘ φ^(-1)`.
impl EmbedInto<Gf2p64> for Gf4Tower {
    fn embed(self) -> Gf2p64 {
        e8(self.to_gf2p8())
    }
}
