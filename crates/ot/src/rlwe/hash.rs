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

/// Bytes read from the XOF per refill: 16 groups of 7 bytes = 64 chunks.
const READ: usize = 112;

/// `H(seed)` as a uniform NTT-domain polynomial.
pub(crate) fn hash_to_ntt(domain: Domain, seed: &[u8]) -> NttPoly {
    let mut h = domain.hasher();
    h.update(seed);
    let mut xof = h.finalize_xof();
    let mut out = [0i16; N];
    let mut filled = 0;
    let mut buf = [0u8; READ];
    while filled < N {
        xof.fill(&mut buf);
        for group in buf.chunks_exact(7) {
            let mut w = [0u8; 8];
            w[..7].copy_from_slice(group);
            let bits = u64::from_le_bytes(w);
            for j in 0..4 {
                let c = ((bits >> (14 * j)) & 0x3fff) as i16;
                if c < Q && filled < N {
                    out[filled] = c;
                    filled += 1;
                }
            }
        }
    }
    NttPoly::from_canonical(out)
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
