//! Hashing to a uniform polynomial with the BLAKE3 extendable output.
//!
//! The output stream is cut into 14-bit chunks (four per 7 bytes); a chunk
//! below `q` becomes the next coefficient, the others are rejected
//! (acceptance rate `15361 / 16384 ~ 93.8%`). The result is a uniform
//! element of `R_q`, produced directly in the NTT domain: since the NTT is a
//! bijection, a uniform vector of evaluations is a uniform ring element, and
//! this saves a transform. The loop depends only on the public seed.

use super::ring::{NttPoly, N, Q};
use crate::prg::Domain;

/// First read: 1008 bytes = 144 groups of 7 bytes = 576 chunks (about 540
/// accepted, 512 needed; fewer than 512 with probability about 2^-20), 16
/// BLAKE3 output blocks. Further groups, rarely needed, are read 7 bytes at
/// a time.
const FIRST: usize = 1008;

#[inline(always)]
fn accept_group(bits: u64, out: &mut [i16; N + 1], filled: &mut usize) {
    for j in 0..4 {
        let c = ((bits >> (14 * j)) & 0x3fff) as i16;
        // A spare slot takes writes once 512 values are in, so the loop has
        // no data-dependent branch (rejections would mispredict).
        out[(*filled).min(N)] = c;
        *filled += usize::from(c < Q);
    }
}

/// `H(seed)` as a uniform NTT-domain polynomial.
pub(crate) fn hash_to_ntt(domain: Domain, seed: &[u8]) -> NttPoly {
    let mut h = domain.hasher();
    h.update(seed);
    let mut xof = h.finalize_xof();
    let mut out = [0i16; N + 1];
    let mut filled = 0usize;
    // One spare byte so that every group can be read as an 8-byte word.
    let mut buf = [0u8; FIRST + 1];
    xof.fill(&mut buf[..FIRST]);
    for g in 0..FIRST / 7 {
        let mut w = [0u8; 8];
        w.copy_from_slice(&buf[7 * g..7 * g + 8]);
        accept_group(
            u64::from_le_bytes(w) & ((1 << 56) - 1),
            &mut out,
            &mut filled,
        );
    }
    while filled < N {
        let mut w = [0u8; 8];
        xof.fill(&mut w[..7]);
        accept_group(u64::from_le_bytes(w), &mut out, &mut filled);
    }
    let mut v = [0i16; N];
    v.copy_from_slice(&out[..N]);
    NttPoly::from_canonical(v)
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

    #[test]
    fn deterministic_uniform_and_reduced() {
        let a = hash_to_ntt(Domain::HashToPoly, b"seed one");
        let b = hash_to_ntt(Domain::HashToPoly, b"seed one");
        let c = hash_to_ntt(Domain::HashToPoly, b"seed two");
        let d = hash_to_ntt(Domain::PublicPoly, b"seed one");
        assert_eq!(a, b);
        assert_ne!(a, c);
        assert_ne!(a, d);
        // Mean of many uniform coefficients is close to (q-1)/2.
        let mut sum = 0f64;
        let mut count = 0f64;
        for i in 0u32..200 {
            let p = hash_to_ntt(Domain::HashToPoly, &i.to_le_bytes());
            assert!(p.values().iter().all(|&x| (0..Q).contains(&x)));
            sum += p.values().iter().map(|&x| f64::from(x)).sum::<f64>();
            count += N as f64;
        }
        let mean = sum / count;
        // sd of the mean: q/sqrt(12 * count) ~ 14
        assert!((mean - 7680.0).abs() < 80.0, "{mean}");
    }
}
