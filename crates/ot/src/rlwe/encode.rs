//! Compact encodings: 14 bits per coefficient, 1 bit per reconciliation hint.

use super::ring::{NttPoly, N, Q};
use crate::error::{Error, Result};

/// Bytes of a packed polynomial: `512 * 14 / 8`.
pub const POLY_BYTES: usize = N * 14 / 8;
/// Bytes of a packed hint vector: `512 / 8`.
pub const HINT_BYTES: usize = N / 8;

/// Packs canonical values, four coefficients into seven bytes.
pub(crate) fn pack_poly(p: &NttPoly, out: &mut Vec<u8>) {
    for quad in p.values().chunks_exact(4) {
        let mut bits = 0u64;
        for (j, &c) in quad.iter().enumerate() {
            bits |= (c as u64) << (14 * j);
        }
        out.extend_from_slice(&bits.to_le_bytes()[..7]);
    }
}

/// Unpacks a polynomial, rejecting wrong lengths and unreduced coefficients.
pub(crate) fn unpack_poly(bytes: &[u8], what: &'static str) -> Result<NttPoly> {
    if bytes.len() != POLY_BYTES {
        return Err(Error::LengthMismatch {
            what,
            expected: POLY_BYTES,
            got: bytes.len(),
        });
    }
    let mut v = [0i16; N];
    for (i, (quad, group)) in v.chunks_exact_mut(4).zip(bytes.chunks_exact(7)).enumerate() {
        let mut w = [0u8; 8];
        w[..7].copy_from_slice(group);
        let bits = u64::from_le_bytes(w);
        for (j, c) in quad.iter_mut().enumerate() {
            let x = ((bits >> (14 * j)) & 0x3fff) as i16;
            if x >= Q {
                return Err(Error::CoefficientOutOfRange {
                    what,
                    index: 4 * i + j,
                    value: x as u32,
                    q: Q as u32,
                });
            }
            *c = x;
        }
    }
    Ok(NttPoly::from_canonical(v))
}

#[cfg(test)]
mod tests {
    #![allow(
        clippy::unwrap_used,
        clippy::expect_used,
        clippy::panic,
        clippy::needless_range_loop
    )]
    use super::*;
    use crate::prg::Domain;
    use crate::rlwe::hash::hash_to_ntt;

    #[test]
    fn round_trip_and_rejections() {
        let p = hash_to_ntt(Domain::HashToPoly, b"x");
        let mut bytes = Vec::new();
        pack_poly(&p, &mut bytes);
        assert_eq!(bytes.len(), POLY_BYTES);
        assert_eq!(unpack_poly(&bytes, "p").unwrap(), p);
        // Extreme value q - 1 survives.
        let top = NttPoly::from_canonical([Q - 1; N]);
        let mut b2 = Vec::new();
        pack_poly(&top, &mut b2);
        assert_eq!(unpack_poly(&b2, "p").unwrap(), top);
        // Truncated / extended.
        assert!(matches!(
            unpack_poly(&bytes[..POLY_BYTES - 1], "p"),
            Err(Error::LengthMismatch { .. })
        ));
        let mut longer = bytes.clone();
        longer.push(0);
        assert!(unpack_poly(&longer, "p").is_err());
        // A coefficient >= q.
        let mut bad = bytes.clone();
        bad[0] = 0xff;
        bad[1] |= 0x3f;
        assert!(matches!(
            unpack_poly(&bad, "p"),
            Err(Error::CoefficientOutOfRange { index: 0, .. })
        ));
    }
}
