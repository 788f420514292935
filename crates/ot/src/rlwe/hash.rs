//! Hashing to a uniform polynomial with the BLAKE3 extendable output.
//!
//! The output stream is cut into 14-bit chunks (four per 7 bytes); a chunk
//! below `q` becomes the next coefficient, the others are rejected
//! (acceptance rate `15361 / 16384 ~ 93.8%`). The result is a uniform
//! element of `R_q`, produced directly in the NTT domain: since the NTT is a
//! bijection, a uniform vector of evaluations is a uniform ring element, and
//! this saves a transform. The loop depends only on the public seed.

use super::ntt::Backend;
use super::ring::{NttPoly, N, Q};
use crate::prg::Domain;

/// First read: 1008 bytes = 144 groups of 7 bytes = 576 chunks (about 540
/// accepted, 512 needed; fewer than 512 with probability about 2^-20).
/// Further groups, rarely needed, are read 7 bytes at a time from the
/// stream's position 1008.
pub(crate) const FIRST: usize = 1008;

/// Bytes taken from the XOF at first: the 16 whole BLAKE3 output blocks
/// that hold the first read. BLAKE3 computes whole blocks in parallel (16
/// at a time with AVX-512), while the 15 blocks and a part of one of
/// exactly 1008 bytes went through a call for 8, one for 4 and four single
/// compressions. The AVX2 rejection step reads 2 bytes past `FIRST` (and
/// ignores them), also within these.
const XOF_BYTES: usize = 1024;

/// 14-bit chunks in the first read.
const CHUNKS: usize = FIRST / 7 * 4;

/// Capacity of the output of the rejection step: values go to
/// `out[*filled..]` while `*filled < N`, a block at a time, whose last
/// store ends below `N + 32` (the AVX-512 step stores 32 lanes, the AVX2
/// one 8).
pub(crate) const ACCEPT_CAPACITY: usize = N + 32;

#[inline(always)]
fn accept_group(bits: u64, out: &mut [i16; ACCEPT_CAPACITY], filled: &mut usize) {
    for j in 0..4 {
        let c = ((bits >> (14 * j)) & 0x3fff) as i16;
        // A spare slot takes writes once 512 values are in, so the loop has
        // no data-dependent branch (rejections would mispredict).
        out[(*filled).min(N)] = c;
        *filled += usize::from(c < Q);
    }
}

/// Appends the chunks below `q` to `out[*filled..]`, in order, until `N`
/// values are in (portable loop).
fn accept_portable(chunks: &[i16], out: &mut [i16; ACCEPT_CAPACITY], filled: &mut usize) {
    for &c in chunks {
        out[(*filled).min(N)] = c;
        *filled += usize::from(c < Q);
    }
}

/// The chunks of `buf[..FIRST]` below `q`, in order, into `out`, on
/// `backend` (the AVX-512 backend runs the AVX2 code where the CPU lacks
/// VBMI).
fn accept(
    backend: Backend,
    buf: &[u8; XOF_BYTES],
    out: &mut [i16; ACCEPT_CAPACITY],
    filled: &mut usize,
) {
    #[cfg(target_arch = "x86_64")]
    if let Some(first) = buf.first_chunk::<FIRST>() {
        if let Some(t) = backend.vbmi() {
            return t.accept_below_q(first, out, filled);
        }
        if let Some(t) = backend.avx2() {
            return t.accept_below_q(&buf[..FIRST + 2], out, filled);
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = backend;
    accept_portable(&chunks_of(buf), out, filled);
}

/// Cuts 7-byte groups into four 14-bit chunks each.
fn chunks_of(buf: &[u8; XOF_BYTES]) -> [i16; CHUNKS] {
    const M: u64 = 0x3fff;
    let mut chunks = [0i16; CHUNKS];
    for (c, g) in chunks.chunks_exact_mut(4).zip(buf.chunks_exact(7)) {
        let mut w = [0u8; 8];
        w[..7].copy_from_slice(g);
        let w = u64::from_le_bytes(w);
        // Chunk j sits at bit 14 j and moves to bit 16 j: one shift each.
        let t = (w & M) | ((w << 2) & (M << 16)) | ((w << 4) & (M << 32)) | ((w << 6) & (M << 48));
        for (j, x) in c.iter_mut().enumerate() {
            *x = (t >> (16 * j)) as i16;
        }
    }
    chunks
}

/// `H(seed)` as a uniform NTT-domain polynomial.
pub(crate) fn hash_to_ntt(domain: Domain, seed: &[u8]) -> NttPoly {
    let mut h = domain.hasher();
    h.update(seed);
    let mut xof = h.finalize_xof();
    let mut buf = [0u8; XOF_BYTES];
    xof.fill(&mut buf);
    let mut out = [0i16; ACCEPT_CAPACITY];
    let mut filled = 0usize;
    accept(Backend::current(), &buf, &mut out, &mut filled);
    if filled < N {
        xof.set_position(FIRST as u64);
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

    /// The chunking and rejection step of every backend this CPU runs
    /// keeps the same values as the portable one, including inputs with
    /// long runs of rejections.
    #[test]
    fn accept_backends_agree() {
        for backend in super::super::ntt::tests::skip_missing() {
            check_accept(backend);
        }
    }

    fn check_accept(backend: Backend) {
        let mut state = 7u64;
        for round in 0..300 {
            let mut buf = [0u8; XOF_BYTES];
            for (i, b) in buf.iter_mut().enumerate() {
                state = state
                    .wrapping_mul(6_364_136_223_846_793_005)
                    .wrapping_add(1);
                // Some rounds set most high bits, so that most chunks are
                // rejected and the fallback runs.
                *b = (state >> 56) as u8
                    | if round % 3 == 0 && i % 9 != 0 {
                        0xf0
                    } else {
                        0
                    };
            }
            let (mut a, mut b) = ([0i16; ACCEPT_CAPACITY], [0i16; ACCEPT_CAPACITY]);
            let (mut fa, mut fb) = (0usize, 0usize);
            accept_portable(&chunks_of(&buf), &mut a, &mut fa);
            accept(backend, &buf, &mut b, &mut fb);
            assert_eq!(fa.min(N), fb.min(N), "{backend}, round {round}");
            assert_eq!(a[..fa.min(N)], b[..fb.min(N)]);
            if round % 3 == 0 {
                assert!(fa < N, "the rejection-heavy rounds should run short");
            }
        }
    }

    /// A fixed output of the hash, so that a change of the chunk order or
    /// of the rejection rule cannot pass unnoticed.
    #[test]
    fn known_answer() {
        let p = hash_to_ntt(Domain::HashToPoly, b"triskele");
        let v = p.values();
        let digest = blake3::hash(&v.iter().flat_map(|x| x.to_le_bytes()).collect::<Vec<u8>>());
        assert_eq!(
            digest.to_hex().as_str(),
            "38364039187bbd139561e8a26fbcb5966d675c64b6ba314e608f73388fbf997d"
        );
    }
}
