//! Compact encodings: 14 bits per coefficient, 1 bit per reconciliation hint.

use super::ring::{NttPoly, N, Q};
use crate::error::{Error, Result};

/// Bytes of a packed polynomial: `512 * 14 / 8`.
pub const POLY_BYTES: usize = N * 14 / 8;
/// Bytes of a packed hint vector: `512 / 8`.
pub const HINT_BYTES: usize = N / 8;

/// Packs canonical values, four coefficients into seven bytes.
pub(crate) fn pack_poly(p: &NttPoly, out: &mut Vec<u8>) {
    // Whole 8-byte words into a fixed buffer (the eighth byte of each is
    // overwritten by the next group), then one append.
    let mut buf = [0u8; POLY_BYTES + 1];
    let mut at = 0;
    for quad in p.values().chunks_exact(4) {
        let mut bits = 0u64;
        for (j, &c) in quad.iter().enumerate() {
            bits |= (c as u64) << (14 * j);
        }
        if let Some(dst) = buf.get_mut(at..at + 8) {
            dst.copy_from_slice(&bits.to_le_bytes());
        }
        at += 7;
    }
    out.extend_from_slice(&buf[..POLY_BYTES]);
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
    const M: u64 = 0x3fff;
    let mut v = [0i16; N];
    for (quad, group) in v.chunks_exact_mut(4).zip(bytes.chunks_exact(7)) {
        let mut w = [0u8; 8];
        w[..7].copy_from_slice(group);
        let w = u64::from_le_bytes(w);
        // Chunk j sits at bit 14 j and moves to bit 16 j.
        let t = (w & M) | ((w << 2) & (M << 16)) | ((w << 4) & (M << 32)) | ((w << 6) & (M << 48));
        for (j, c) in quad.iter_mut().enumerate() {
            *c = (t >> (16 * j)) as i16;
        }
    }
    // One branch-free range check; the position only on failure.
    if v.iter().fold(0i16, |acc, &x| acc | (Q - 1 - x)) < 0 {
        if let Some((index, &x)) = v.iter().enumerate().find(|(_, &x)| x >= Q) {
            return Err(Error::CoefficientOutOfRange {
                what,
                index,
                value: x as u32,
                q: Q as u32,
            });
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
        // Out-of-range values elsewhere are reported at their position.
        for index in [1, 3, 4, 258, 511] {
            for value in [Q, 0x3fff] {
                let mut raw = [7i16; N];
                raw[index] = value;
                let mut bytes = Vec::new();
                for quad in raw.chunks_exact(4) {
                    let bits = quad
                        .iter()
                        .enumerate()
                        .fold(0u64, |acc, (j, &c)| acc | ((c as u64) << (14 * j)));
                    bytes.extend_from_slice(&bits.to_le_bytes()[..7]);
                }
                let err = unpack_poly(&bytes, "p").unwrap_err();
                assert!(
                    matches!(err, Error::CoefficientOutOfRange { index: i, value: v, .. }
                        if i == index && v == value as u32),
                    "{err:?}"
                );
            }
        }
    }
}
