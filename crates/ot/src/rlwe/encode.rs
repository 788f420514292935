//! Compact encodings: 14 bits per coefficient, 1 bit per reconciliation hint.

use super::ntt::Backend;
use super::ring::{NttPoly, N, Q};
use crate::error::{Error, Result};

/// Bytes of a packed polynomial: `512 * 14 / 8`.
pub const POLY_BYTES: usize = N * 14 / 8;
/// Bytes of a packed hint vector: `512 / 8`.
pub const HINT_BYTES: usize = N / 8;

/// Packs canonical values, four coefficients into seven bytes, appended to
/// `out`.
pub(crate) fn pack_poly(p: &NttPoly, out: &mut Vec<u8>) {
    let at = out.len();
    out.resize(at + POLY_BYTES, 0);
    if let Some(dst) = out.get_mut(at..).and_then(|o| o.first_chunk_mut()) {
        pack_on(Backend::current(), p.values(), dst);
    }
}

/// Packs values in `[0, 2^14)` on `backend` (AVX-512 with VBMI, else
/// portable).
pub(crate) fn pack_on(backend: Backend, values: &[i16; N], out: &mut [u8; POLY_BYTES]) {
    #[cfg(target_arch = "x86_64")]
    if let Some(t) = backend.vbmi() {
        return t.pack(values, out);
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = backend;
    pack_portable(values, out);
}

/// Value `4 g + j` goes to bits `14 j ..` of the seven bytes `7 g ..`
/// (little-endian).
pub(crate) fn pack_portable(values: &[i16; N], out: &mut [u8; POLY_BYTES]) {
    let (groups, _) = out.as_chunks_mut::<7>();
    for (dst, quad) in groups.iter_mut().zip(values.as_chunks::<4>().0) {
        let mut bits = 0u64;
        for (j, &c) in quad.iter().enumerate() {
            bits |= (c as u64) << (14 * j);
        }
        dst.copy_from_slice(&bits.to_le_bytes()[..7]);
    }
}

/// The 14-bit values packed in `bytes` (unreduced) on `backend` (AVX-512
/// with VBMI, else portable).
pub(crate) fn unpack_on(backend: Backend, bytes: &[u8; POLY_BYTES], out: &mut [i16; N]) {
    #[cfg(target_arch = "x86_64")]
    if let Some(t) = backend.vbmi() {
        return t.unpack(bytes, out);
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = backend;
    unpack_portable(bytes, out);
}

/// The inverse of [`pack_portable`] on any bytes: values in `[0, 2^14)`.
pub(crate) fn unpack_portable(bytes: &[u8; POLY_BYTES], out: &mut [i16; N]) {
    const M: u64 = 0x3fff;
    for (quad, group) in out
        .as_chunks_mut::<4>()
        .0
        .iter_mut()
        .zip(bytes.as_chunks::<7>().0)
    {
        let mut w = [0u8; 8];
        w[..7].copy_from_slice(group);
        let w = u64::from_le_bytes(w);
        // Chunk j sits at bit 14 j and moves to bit 16 j.
        let t = (w & M) | ((w << 2) & (M << 16)) | ((w << 4) & (M << 32)) | ((w << 6) & (M << 48));
        for (j, c) in quad.iter_mut().enumerate() {
            *c = (t >> (16 * j)) as i16;
        }
    }
}

/// Unpacks a polynomial, rejecting wrong lengths and unreduced coefficients.
pub(crate) fn unpack_poly(bytes: &[u8], what: &'static str) -> Result<NttPoly> {
    let mut p = NttPoly([0; N]);
    unpack_poly_into(bytes, what, &mut p)?;
    Ok(p)
}

/// [`unpack_poly`] into `p` (a message that the batch protocols reuse), in
/// place; on an error `p` is left zero.
pub(crate) fn unpack_poly_into(bytes: &[u8], what: &'static str, p: &mut NttPoly) -> Result<()> {
    let Ok(bytes) = <&[u8; POLY_BYTES]>::try_from(bytes) else {
        return Err(Error::LengthMismatch {
            what,
            expected: POLY_BYTES,
            got: bytes.len(),
        });
    };
    let v = &mut p.0;
    unpack_on(Backend::current(), bytes, v);
    // One branch-free range check; the position only on failure.
    if v.iter().fold(0i16, |acc, &x| acc | (Q - 1 - x)) < 0 {
        let found = v.iter().enumerate().find(|(_, &x)| x >= Q);
        if let Some((index, &x)) = found {
            *v = [0; N];
            return Err(Error::CoefficientOutOfRange {
                what,
                index,
                value: x as u32,
                q: Q as u32,
            });
        }
    }
    Ok(())
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
    use crate::prg::{Domain, Prg};
    use crate::rlwe::hash::hash_to_ntt;

    /// Packing and unpacking on every backend this CPU runs give the
    /// portable values and bytes: unpacking any bytes gives 14-bit values
    /// (also above `q`), which pack back to the same bytes. Extreme, sparse
    /// and random bytes.
    #[test]
    fn backends_agree() {
        for backend in crate::rlwe::ntt::tests::skip_missing() {
            #[cfg(target_arch = "x86_64")]
            if backend == Backend::Avx512 && backend.vbmi().is_none() {
                eprintln!("no AVX-512 VBMI on this CPU: its portable packing is tested");
            }
            let mut prg = Prg::from_seed(&[21; 32]);
            for round in 0..300 {
                let mut bytes = [0u8; POLY_BYTES];
                match round {
                    0 => {}
                    1 => bytes.fill(0xff),
                    2..=57 => bytes[(round - 2) * 16 % POLY_BYTES..][..16].fill(0xa5),
                    _ => prg.fill_bytes(&mut bytes),
                }
                let (mut want, mut got) = ([0i16; N], [0i16; N]);
                unpack_portable(&bytes, &mut want);
                unpack_on(backend, &bytes, &mut got);
                assert_eq!(want, got, "unpack, {backend}, round {round}");
                let mut packed = [0u8; POLY_BYTES];
                pack_on(backend, &want, &mut packed);
                assert_eq!(packed, bytes, "pack, {backend}, round {round}");
                pack_portable(&want, &mut packed);
                assert_eq!(packed, bytes, "portable pack, round {round}");
            }
        }
    }

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
