//! Finite fields for Triskele, a three-party computation (MAESTRO-style oblivious AES).
//!
//! This crate is algebra only: no I/O, no networking, no shares. It provides
//!
//! | type | field | wire encoding (PROTOCOLS.md §1.8) |
//! |---|---|---|
//! | [`Gf2p8`] | `GF(2^8)=GF(2)[u]/(u^8+u^4+u^3+u+1)`, the AES field (§2.1) | 1 byte |
//! | [`Gf2p4`] | `GF(2^4)=GF(2)[u]/(u^4+u+1)` (§2.2), value in the low nibble | 2 per byte, first in the high nibble |
//! | [`Gf4Tower`] | `GF((2^4)^2)` with `Y^2+Y+λ`, `λ` = `0xE` (§2.3) | 1 byte (`a_h || a_l`) |
//! | [`Gf2p64`] | `GF(2^64)=GF(2)[u]/(u^64+u^4+u^3+u+1)` (§2.4) | 8 bytes big-endian |
//! | [`Bits16`] | the ring `GF(2)^16` (16 bit-sliced lanes, AND/XOR; not a field, §2.5) | 2 bytes little-endian |
//! | [`Fp`] | `F_p`, `p=2^127+45` | 16 bytes little-endian |
//! | [`FpRt`] | `F_p` for an odd prime `p < 2^128` chosen at run time ([`FpRt::with_modulus`]) | 16 bytes little-endian |
//!
//! with the traits [`Field`] (arithmetic), [`Encode`] (wire format), [`Random`] (sampling from a
//! PRG stream, §1.2), [`Bulk`] (slice operations) and [`EmbedInto`] (injective ring homomorphisms,
//! see [`embed`]). [`LinearMap8`] is any `GF(2)`-linear map on bytes (squaring, Frobenius powers,
//! the AES affine matrix, the WOL isomorphism [`Gf4Tower::WOL`], multiplication by a constant).
//! All tables (S-box, inverses, linear-map nibble tables, embedding images) are computed by
//! `const fn` from the field definitions and checked against the known answers of §7 in the tests.
//!
//! ```
//! use triskele_field::backend::{self, Backend};
//! use triskele_field::{Bulk, Encode, Field, Gf2p64, Gf2p8, Gf4Tower, LinearMap8};
//!
//! // {57}·{83} = {c1} (FIPS-197 §4.2), on the active backend and on the portable one.
//! let (a, b) = ([Gf2p8(0x57); 40], [Gf2p8(0x83); 40]);
//! let mut c = [Gf2p8::ZERO; 40];
//! Gf2p8::mul_slice(&mut c, &a, &b);
//! assert_eq!(c, [Gf2p8(0xc1); 40]);
//! Gf2p8::mul_slice_with(Backend::Portable, &mut c, &a, &b);
//! assert_eq!(c, [Gf2p8(0xc1); 40]);
//!
//! // S(x) = A(x^-1) + 63, and the WOL isomorphism into the tower field.
//! let x = Gf2p8(0x53);
//! assert_eq!(LinearMap8::AES_A.apply(x.inverse()) + Gf2p8::SBOX_CONSTANT, x.sbox());
//! assert_eq!(Gf4Tower::from(x).inverse(), Gf4Tower::from(x.inverse()));
//!
//! // Wire encoding: GF(2^64) is 8 bytes big-endian.
//! assert_eq!(Gf2p64::encode_to_vec(&[Gf2p64(0x0102)]), [0, 0, 0, 0, 0, 0, 1, 2]);
//! println!("backend: {}", backend::active());
//! ```
//!
//! # Backends
//!
//! The slice operations that dominate the protocols run on a backend chosen once at run time
//! (see [`backend`]):
//!
//! * `portable`: plain Rust for every CPU (SWAR for `GF(2^8)`, constant-time carry-less
//!   multiplication from integer multiplies for `GF(2^64)`);
//! * `avx2`: AVX2 + PCLMULQDQ; `avx2-vpclmul`: additionally 256-bit VPCLMULQDQ for `GF(2^64)`;
//! * `gfni`, `gfni-avx512`: `gf2p8mulb` / `gf2p8affineqb` on 256 / 512-bit vectors
//!   (tested against the portable code wherever the CPU has GFNI).
//!
//! Accelerated are `Gf2p8` [`Bulk::mul_slice`], [`Bulk::mul_add_slice`], [`Bulk::inner_product`],
//! [`LinearMap8::apply_slice`] / [`LinearMap8::apply_in_place`], the `Gf2p64` slice
//! operations (including the fused [`Bulk::local_inner_product`] and [`Bulk::lerp_slice`])
//! and scalar multiplication, the byte embeddings of [`embed`] (`vpshufb`), the AES round
//! steps on whole blocks of [`aes_round`] (ShiftRows, MixColumns, their inverses; `vpshufb`),
//! and the AES-128-CTR keystream of [`ctr`] (VAES / AES-NI) for expanding public seeds. The
//! environment variable `TRISKELE_BACKEND=portable` forces the portable code (any backend
//! name may be given; unavailable ones are ignored). No
//! build flag such as `-C target-cpu=native` is needed: the SIMD code is compiled with
//! `#[target_feature]` and only called after run-time detection. `unsafe` code is confined to
//! the files under `src/backend/`.
//!
//! # Security notes
//!
//! Multiplication in every field, the embeddings and all slice operations (including the
//! linear maps; `vpshufb` looks up in registers, not memory) are branch-free and make no
//! value-dependent memory accesses. The scalar [`LinearMap8::apply`] reads its 32 bytes of
//! nibble tables, which lie in one cache line. Inversion in `GF(2^8)` (256-byte table),
//! `GF(2^4)` and the tower field, and [`Gf2p8::sbox`] index tables by the value: meant for
//! public (opened or masked) values and cleartext references.

pub mod aes_round;
pub mod backend;
mod bits;
pub mod ctr;
pub mod embed;
mod fp;
mod fp_rt;
mod gf2p4;
mod gf2p64;
mod gf2p8;
mod linear;
mod macros;
mod onehot;
pub mod prime;
pub mod subspace;
mod tower;

pub use bits::Bits16;
pub use fp::Fp;
pub use fp_rt::FpRt;
pub use gf2p4::{Gf2p4, UNPACK_SUMS_MAX};
pub use gf2p64::Gf2p64;
pub use gf2p8::Gf2p8;
pub use linear::LinearMap8;
pub use onehot::OneHotLookup16;
pub use prime::PrimeField;
pub use tower::Gf4Tower;

use core::fmt::Debug;
use core::hash::Hash;
use core::ops::{Add, AddAssign, Mul, MulAssign, Neg, Sub, SubAssign};

/// Errors from decoding field elements received from the network or the user.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
#[non_exhaustive]
pub enum FieldError {
    /// The byte string does not have the length `n` elements need.
    #[error("wrong encoded length: expected {expected} bytes, got {got}")]
    LengthMismatch { expected: usize, got: usize },
    /// A value outside the field (e.g. >= p for F_p, or a high nibble set for GF(2^4)).
    #[error("value out of range for {field}")]
    OutOfRange { field: &'static str },
    /// A run-time modulus for [`FpRt`] that is not an odd prime `3 <= p < 2^128`.
    #[error("invalid modulus {modulus}: {reason}")]
    InvalidModulus { modulus: u128, reason: &'static str },
    /// [`FpRt::with_modulus`] called while this thread is already inside one.
    #[error("FpRt::with_modulus calls must not nest")]
    NestedModulus,
}

/// Field arithmetic and constants.
pub trait Field:
    Copy
    + Clone
    + Debug
    + Default
    + PartialEq
    + Eq
    + Hash
    + Send
    + Sync
    + 'static
    + Add<Output = Self>
    + AddAssign
    + Sub<Output = Self>
    + SubAssign
    + Mul<Output = Self>
    + MulAssign
    + Neg<Output = Self>
{
    /// Human-readable name, e.g. "GF(2^8)".
    const NAME: &'static str;
    const ZERO: Self;
    const ONE: Self;
    /// True for fields of characteristic 2 (addition is XOR, -x = x).
    const CHARACTERISTIC_TWO: bool;
    /// Multiplicative inverse with the convention 0^-1 = 0.
    fn inverse(self) -> Self;
    fn square(self) -> Self {
        self * self
    }
    fn is_zero(self) -> bool {
        self == Self::ZERO
    }
}

/// Element-wise inverses by Montgomery's trick: one inversion and three products per element;
/// zeros map to zero (as [`Field::inverse`]).
pub fn batch_inverse<F: Field>(v: &[F]) -> Vec<F> {
    // prefix[i]: the product of the non-zero elements before i.
    let mut prefix = Vec::with_capacity(v.len());
    let mut acc = F::ONE;
    for &x in v {
        prefix.push(acc);
        if !x.is_zero() {
            acc *= x;
        }
    }
    let mut inv = acc.inverse();
    let mut out = vec![F::ZERO; v.len()];
    for ((o, &x), &p) in out.iter_mut().zip(v).zip(&prefix).rev() {
        if !x.is_zero() {
            *o = inv * p;
            inv *= x;
        }
    }
    out
}

/// Wire encoding (PROTOCOLS.md §1.8).
///
/// Decoding is strict: every byte string accepted by [`Encode::decode_slice`] is the encoding of
/// the decoded elements (so re-encoding gives the same bytes), and no input makes it panic.
pub trait Encode: Field {
    /// Bytes that `n` elements occupy on the wire.
    fn encoded_len(n: usize) -> usize;
    /// Appends the encoding of `src` to `out`.
    fn encode_slice(src: &[Self], out: &mut Vec<u8>);
    /// Decodes exactly `out.len()` elements; `bytes` must have length `encoded_len(out.len())`.
    fn decode_slice(bytes: &[u8], out: &mut [Self]) -> Result<(), FieldError>;

    /// The encoding of `src` in a new vector.
    fn encode_to_vec(src: &[Self]) -> Vec<u8> {
        let mut out = Vec::with_capacity(Self::encoded_len(src.len()));
        Self::encode_slice(src, &mut out);
        out
    }
    /// Decodes `n` elements from an owned buffer; byte fields reuse its allocation.
    fn decode_owned(bytes: Vec<u8>, n: usize) -> Result<Vec<Self>, FieldError> {
        Self::decode_to_vec(&bytes, n)
    }
    /// Decodes `n` elements from `bytes` (which must have length `encoded_len(n)`).
    fn decode_to_vec(bytes: &[u8], n: usize) -> Result<Vec<Self>, FieldError> {
        let mut out = Vec::new();
        Self::decode_append(bytes, n, &mut out)?;
        Ok(out)
    }
    /// Decodes `n` elements from `bytes` (which must have length `encoded_len(n)`) and appends
    /// them to `out`; on an error `out` is left as it was.
    fn decode_append(bytes: &[u8], n: usize, out: &mut Vec<Self>) -> Result<(), FieldError> {
        let expected = Self::encoded_len(n);
        if bytes.len() != expected {
            return Err(FieldError::LengthMismatch {
                expected,
                got: bytes.len(),
            });
        }
        let at = out.len();
        out.resize(at + n, Self::ZERO);
        let res = Self::decode_slice(bytes, &mut out[at..]);
        if res.is_err() {
            out.truncate(at);
        }
        res
    }
}

/// Uniform sampling from a byte stream (PROTOCOLS.md §1.2).
///
/// Each implementation documents how many bytes of the stream an element takes. Both holders of
/// a PRG key must draw with the same calls: `fill_random` on `n` elements is specified per type
/// (one `fill_bytes` call of the whole byte length for the byte-oriented fields), which is not
/// always the same stream use as `n` calls of `random` (an RNG may discard the unused part of a
/// word after a short `fill_bytes`).
pub trait Random: Field {
    fn random<R: rand_core::RngCore + ?Sized>(rng: &mut R) -> Self;
    fn fill_random<R: rand_core::RngCore + ?Sized>(rng: &mut R, out: &mut [Self]) {
        for x in out.iter_mut() {
            *x = Self::random(rng);
        }
    }
    /// For types where adding random elements is XOR on memory: `Some((bytes, mask))` with
    /// `bytes` the memory of `out`, such that `fill_random` writes the stream's bytes in order
    /// into `bytes`, each ANDed with `mask`, and `out[k] += r[k]` XORs the bytes of `r[k]`
    /// into those of `out[k]` (then, since elements of `out` have no bits outside `mask`,
    /// adding `fill_random`'s output is XORing the stream and masking). `None` (the default)
    /// for all other types.
    fn xor_bytes_mut(out: &mut [Self]) -> Option<(&mut [u8], u8)> {
        let _ = out;
        None
    }
}

/// Bulk operations on slices. Lengths must match (checked with debug assertions;
/// release builds process the common prefix).
pub trait Bulk: Field {
    /// `out[k] += a[k]`
    fn add_assign_slice(out: &mut [Self], a: &[Self]) {
        debug_assert_eq!(out.len(), a.len());
        for (o, x) in out.iter_mut().zip(a) {
            *o += *x;
        }
    }
    /// `out[k] = a[k] * b[k]`
    fn mul_slice(out: &mut [Self], a: &[Self], b: &[Self]) {
        debug_assert_eq!(out.len(), a.len());
        debug_assert_eq!(out.len(), b.len());
        for ((o, x), y) in out.iter_mut().zip(a).zip(b) {
            *o = *x * *y;
        }
    }
    /// `out[k] += a[k] * b[k]`
    fn mul_add_slice(out: &mut [Self], a: &[Self], b: &[Self]) {
        debug_assert_eq!(out.len(), a.len());
        debug_assert_eq!(out.len(), b.len());
        for ((o, x), y) in out.iter_mut().zip(a).zip(b) {
            *o += *x * *y;
        }
    }
    /// `out[k] += a[k] * s` for one scalar `s`
    fn scale_add_slice(out: &mut [Self], a: &[Self], s: Self) {
        debug_assert_eq!(out.len(), a.len());
        for (o, x) in out.iter_mut().zip(a) {
            *o += *x * s;
        }
    }
    /// `out[k] = a1[k] b1[k] + a1[k] b2[k] + a2[k] b1[k]`: the local product of replicated
    /// sharing (PROTOCOLS.md §1.6), for fields that can do better than three passes.
    fn local_product_slice(out: &mut [Self], a1: &[Self], a2: &[Self], b1: &[Self], b2: &[Self]) {
        Self::mul_slice(out, a1, b1);
        Self::mul_add_slice(out, a1, b2);
        Self::mul_add_slice(out, a2, b1);
    }
    /// `sum_k a1[k] b1[k] + a1[k] b2[k] + a2[k] b1[k]`: the summed local product (an additive
    /// share of the inner product of two replicated sharings).
    fn local_inner_product(a1: &[Self], a2: &[Self], b1: &[Self], b2: &[Self]) -> Self {
        Self::inner_product(a1, b1) + Self::inner_product(a1, b2) + Self::inner_product(a2, b1)
    }
    /// `sum_k a[k] * b[k]`
    fn inner_product(a: &[Self], b: &[Self]) -> Self {
        debug_assert_eq!(a.len(), b.len());
        a.iter()
            .zip(b)
            .fold(Self::ZERO, |acc, (x, y)| acc + *x * *y)
    }
    /// `out[k] = lo[k] + (hi[k] - lo[k]) * s`: the line through `lo` (at 0) and `hi` (at 1),
    /// evaluated at `s`.
    fn lerp_slice(out: &mut [Self], lo: &[Self], hi: &[Self], s: Self) {
        debug_assert_eq!(out.len(), lo.len());
        debug_assert_eq!(out.len(), hi.len());
        for ((o, l), h) in out.iter_mut().zip(lo).zip(hi) {
            *o = *l + (*h - *l) * s;
        }
    }
    /// `v[k] = v[k] + (w[k] - v[k]) * s` ([`Bulk::lerp_slice`] in place).
    fn lerp_assign_slice(v: &mut [Self], w: &[Self], s: Self) {
        debug_assert_eq!(v.len(), w.len());
        for (x, h) in v.iter_mut().zip(w) {
            *x = *x + (*h - *x) * s;
        }
    }
    /// `n` zeros (`vec![ZERO; n]`; a field whose zero is all-zero bytes may take fresh
    /// zeroed pages from the allocator instead of writing them).
    fn zeroed_vec(n: usize) -> Vec<Self> {
        vec![Self::ZERO; n]
    }
}

/// An injective ring homomorphism `Self -> F` (PROTOCOLS.md §2.4). It is additive, so it can be
/// applied to each share component, and it maps valid multiplication triples to valid ones and
/// invalid ones to invalid ones.
pub trait EmbedInto<F: Field>: Field {
    /// The image of `self`.
    fn embed(self) -> F;
    /// `dst[k] = embed(src[k])` on the common prefix (lengths must match).
    fn embed_slice(src: &[Self], dst: &mut [F]) {
        debug_assert_eq!(src.len(), dst.len());
        for (d, s) in dst.iter_mut().zip(src) {
            *d = s.embed();
        }
    }
}
