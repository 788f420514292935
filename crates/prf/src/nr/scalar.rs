//! The exponent field of Naor-Reingold: `Z_ℓ`, the prime order of Ristretto255, as a Triskele
//! field ([`Field`], [`Encode`], [`Random`], [`Bulk`]) over `curve25519_dalek::Scalar`.

use core::ops::{Add, AddAssign, Mul, MulAssign, Neg, Sub, SubAssign};

use curve25519_dalek::Scalar;
use rayon::prelude::*;
use triskele_field::{Bulk, Encode, Field, FieldError, Random};
use zeroize::Zeroize;

/// Slices at least this long are multiplied on the rayon pool (a product costs about 0.1 µs).
const PAR_MIN: usize = 4096;
/// Elements per `fill_bytes` call of [`Random::fill_random`] (256 KiB of stream).
pub(crate) const FILL_CHUNK: usize = 4096;

/// An element of `Z_ℓ`, `ℓ = 2^252 + 27742317777372353535851937790883648493` (the order of the
/// Ristretto255 group), always fully reduced (a `curve25519_dalek` [`Scalar`]).
///
/// - Arithmetic is dalek's constant-time scalar arithmetic; [`Field::inverse`] is
///   [`Scalar::invert`] (a fixed addition chain for `x^(ℓ-2)`, so `0 ↦ 0`).
/// - Wire encoding ([`Encode`]): 32 bytes, little-endian, canonical. Decoding is strict: a
///   value `>= ℓ` (including any value with the top bit set) is
///   [`FieldError::OutOfRange`], so every accepted string re-encodes to itself.
/// - Sampling ([`Random`]): 64 bytes of the stream read as a little-endian 512-bit integer and
///   reduced mod `ℓ` ([`Scalar::from_bytes_mod_order_wide`]). The statistical distance from
///   uniform is below `ℓ / 2^512 < 2^-259`, far below anything observable; there is no
///   rejection, so an element always takes exactly 64 bytes of the stream.
#[derive(Clone, Copy, Default, PartialEq, Eq, Hash, Zeroize)]
#[repr(transparent)]
pub struct RistrettoScalar(pub Scalar);

impl RistrettoScalar {
    /// The canonical 32-byte little-endian encoding.
    pub fn to_bytes(self) -> [u8; 32] {
        self.0.to_bytes()
    }

    /// The element with canonical encoding `bytes`, or `None` if `bytes` encodes a value `>= ℓ`.
    pub fn from_canonical_bytes(bytes: [u8; 32]) -> Option<Self> {
        Option::<Scalar>::from(Scalar::from_canonical_bytes(bytes)).map(Self)
    }

    /// The element from 64 uniform bytes (wide reduction, see [`Random`]).
    pub fn from_uniform_bytes(bytes: &[u8; 64]) -> Self {
        Self(Scalar::from_bytes_mod_order_wide(bytes))
    }
}

impl core::fmt::Debug for RistrettoScalar {
    /// Hex of the canonical little-endian encoding.
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str("RistrettoScalar(")?;
        for b in self.0.as_bytes() {
            write!(f, "{b:02x}")?;
        }
        f.write_str(")")
    }
}

impl From<u64> for RistrettoScalar {
    fn from(v: u64) -> Self {
        Self(Scalar::from(v))
    }
}

impl From<u128> for RistrettoScalar {
    fn from(v: u128) -> Self {
        Self(Scalar::from(v))
    }
}

impl From<Scalar> for RistrettoScalar {
    fn from(s: Scalar) -> Self {
        Self(s)
    }
}

impl Add for RistrettoScalar {
    type Output = Self;
    #[inline]
    fn add(self, rhs: Self) -> Self {
        Self(self.0 + rhs.0)
    }
}
impl AddAssign for RistrettoScalar {
    #[inline]
    fn add_assign(&mut self, rhs: Self) {
        self.0 += rhs.0;
    }
}
impl Sub for RistrettoScalar {
    type Output = Self;
    #[inline]
    fn sub(self, rhs: Self) -> Self {
        Self(self.0 - rhs.0)
    }
}
impl SubAssign for RistrettoScalar {
    #[inline]
    fn sub_assign(&mut self, rhs: Self) {
        self.0 -= rhs.0;
    }
}
impl Mul for RistrettoScalar {
    type Output = Self;
    #[inline]
    fn mul(self, rhs: Self) -> Self {
        Self(self.0 * rhs.0)
    }
}
impl MulAssign for RistrettoScalar {
    #[inline]
    fn mul_assign(&mut self, rhs: Self) {
        self.0 *= rhs.0;
    }
}
impl Neg for RistrettoScalar {
    type Output = Self;
    #[inline]
    fn neg(self) -> Self {
        Self(-self.0)
    }
}

impl Field for RistrettoScalar {
    const NAME: &'static str = "Z_l (Ristretto255 scalars)";
    const ZERO: Self = Self(Scalar::ZERO);
    const ONE: Self = Self(Scalar::ONE);
    const CHARACTERISTIC_TWO: bool = false;

    /// `x^(ℓ-2)` by dalek's fixed addition chain (constant time), so `0 ↦ 0`.
    fn inverse(self) -> Self {
        Self(self.0.invert())
    }
}

/// 32 bytes per element, little-endian, canonical (values `>= ℓ` rejected).
impl Encode for RistrettoScalar {
    fn encoded_len(n: usize) -> usize {
        n.saturating_mul(32)
    }

    fn encode_slice(src: &[Self], out: &mut Vec<u8>) {
        out.reserve(Self::encoded_len(src.len()));
        for x in src {
            out.extend_from_slice(x.0.as_bytes());
        }
    }

    fn decode_slice(bytes: &[u8], out: &mut [Self]) -> Result<(), FieldError> {
        let expected = Self::encoded_len(out.len());
        if bytes.len() != expected {
            return Err(FieldError::LengthMismatch {
                expected,
                got: bytes.len(),
            });
        }
        let (words, _) = bytes.as_chunks::<32>();
        for (o, w) in out.iter_mut().zip(words) {
            *o = Self::from_canonical_bytes(*w)
                .ok_or(FieldError::OutOfRange { field: Self::NAME })?;
        }
        Ok(())
    }
}

/// Wide reduction of 64 stream bytes per element (see the type's documentation).
/// `fill_random` on `n` elements makes one `fill_bytes` call of `64·m` bytes for each chunk of
/// `m = min(4096, remaining)` elements, in order; for a byte stream such as the engine's
/// AES-CTR PRG or ChaCha this is the same stream use as `n` calls of `random`.
impl Random for RistrettoScalar {
    fn random<R: rand_core::RngCore + ?Sized>(rng: &mut R) -> Self {
        let mut b = [0u8; 64];
        rng.fill_bytes(&mut b);
        let x = Self::from_uniform_bytes(&b);
        b.zeroize();
        x
    }

    fn fill_random<R: rand_core::RngCore + ?Sized>(rng: &mut R, out: &mut [Self]) {
        let mut buf = vec![0u8; 64 * FILL_CHUNK.min(out.len())];
        for chunk in out.chunks_mut(FILL_CHUNK) {
            let bytes = &mut buf[..64 * chunk.len()];
            rng.fill_bytes(bytes);
            let (wide, _) = bytes.as_chunks::<64>();
            if chunk.len() >= PAR_MIN {
                chunk
                    .par_iter_mut()
                    .zip(wide.par_iter())
                    .for_each(|(o, w)| *o = Self::from_uniform_bytes(w));
            } else {
                for (o, w) in chunk.iter_mut().zip(wide) {
                    *o = Self::from_uniform_bytes(w);
                }
            }
        }
        buf.zeroize();
    }
}

/// The default loops, run on the rayon pool for long slices.
impl Bulk for RistrettoScalar {
    fn mul_slice(out: &mut [Self], a: &[Self], b: &[Self]) {
        debug_assert_eq!(out.len(), a.len());
        debug_assert_eq!(out.len(), b.len());
        if out.len() >= PAR_MIN {
            out.par_iter_mut()
                .zip(a.par_iter().zip(b.par_iter()))
                .for_each(|(o, (x, y))| *o = *x * *y);
        } else {
            for ((o, x), y) in out.iter_mut().zip(a).zip(b) {
                *o = *x * *y;
            }
        }
    }

    fn mul_add_slice(out: &mut [Self], a: &[Self], b: &[Self]) {
        debug_assert_eq!(out.len(), a.len());
        debug_assert_eq!(out.len(), b.len());
        if out.len() >= PAR_MIN {
            out.par_iter_mut()
                .zip(a.par_iter().zip(b.par_iter()))
                .for_each(|(o, (x, y))| *o += *x * *y);
        } else {
            for ((o, x), y) in out.iter_mut().zip(a).zip(b) {
                *o += *x * *y;
            }
        }
    }
}
