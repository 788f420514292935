//! Correlated randomness from pairwise PRG keys (PROTOCOLS.md §1.2), without communication.

use rand_chacha::rand_core::{RngCore, SeedableRng};
use rand_chacha::ChaCha20Rng;
use rayon::prelude::*;
use sha2::{Digest, Sha256};
use triskele_field::Random;
use zeroize::{Zeroize, ZeroizeOnDrop};

use crate::rss::RssVec;

/// A 128-bit PRG key shared by two neighbouring parties.
#[derive(Clone, Zeroize, ZeroizeOnDrop)]
pub struct PrgKey(pub [u8; 16]);

impl core::fmt::Debug for PrgKey {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str("PrgKey(..)")
    }
}

/// A deterministic PRG stream (ChaCha20 keyed by a 128-bit key, zero-padded to 256 bits).
///
/// Both holders of a key draw from it in the same order, so they obtain the same values.
pub struct Prg {
    rng: ChaCha20Rng,
}

impl core::fmt::Debug for Prg {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str("Prg(..)")
    }
}

/// Bytes per parallel chunk when filling large byte buffers (a multiple of the ChaCha block).
const PAR_CHUNK: usize = 1 << 16;

impl Prg {
    pub fn new(key: &PrgKey) -> Self {
        let mut seed = [0u8; 32];
        seed[..16].copy_from_slice(&key.0);
        let rng = ChaCha20Rng::from_seed(seed);
        seed.zeroize();
        Prg { rng }
    }

    /// Fills `out` with field elements.
    pub fn fill<F: Random>(&mut self, out: &mut [F]) {
        F::fill_random(&mut self.rng, out);
    }

    /// Fills a byte buffer; large buffers are generated in parallel chunks by seeking the
    /// ChaCha stream, with output identical to sequential generation.
    pub fn fill_bytes(&mut self, out: &mut [u8]) {
        if out.len() < 2 * PAR_CHUNK {
            self.rng.fill_bytes(out);
            return;
        }
        // The stream position advances in 32-bit words; keep chunks word aligned.
        let start = self.rng.get_word_pos();
        let base = self.rng.clone();
        out.par_chunks_mut(PAR_CHUNK)
            .enumerate()
            .for_each(|(i, chunk)| {
                let mut r = base.clone();
                r.set_word_pos(start + (i * PAR_CHUNK / 4) as u128);
                r.fill_bytes(chunk);
            });
        let words = out.len().div_ceil(4) as u128;
        self.rng.set_word_pos(start + words);
    }

    /// Draws a fresh key from this stream (for deriving child streams).
    pub fn derive_key(&mut self) -> PrgKey {
        let mut k = [0u8; 16];
        self.rng.fill_bytes(&mut k);
        PrgKey(k)
    }

    pub fn next_u64(&mut self) -> u64 {
        self.rng.next_u64()
    }

    /// Access to the underlying generator (for samplers that take an `RngCore`).
    pub fn rng(&mut self) -> &mut impl RngCore {
        &mut self.rng
    }
}

/// One party's pair of PRG streams: `prev` shared with `P_{i-1}`, `next` with `P_{i+1}`.
#[derive(Debug)]
pub struct Prss {
    pub prev: Prg,
    pub next: Prg,
}

impl Prss {
    pub fn new(prev: &PrgKey, next: &PrgKey) -> Self {
        Prss {
            prev: Prg::new(prev),
            next: Prg::new(next),
        }
    }

    /// A random replicated sharing `(PRG_prev(), PRG_next())`, no communication.
    pub fn random_rss<F: Random>(&mut self, n: usize) -> RssVec<F> {
        let mut r = RssVec::zeros(n);
        self.prev.fill(&mut r.first);
        self.next.fill(&mut r.second);
        r
    }

    /// Adds this party's component of a fresh zero-sharing, `alpha_i = PRG_next() - PRG_prev()`,
    /// to `out`; the three components sum to zero.
    pub fn add_zero_share<F: Random>(&mut self, out: &mut [F], scratch: &mut Vec<F>) {
        scratch.clear();
        scratch.resize(out.len(), F::ZERO);
        self.next.fill(scratch);
        for (o, s) in out.iter_mut().zip(scratch.iter()) {
            *o += *s;
        }
        self.prev.fill(scratch);
        for (o, s) in out.iter_mut().zip(scratch.iter()) {
            *o -= *s;
        }
    }

    /// A fresh zero-sharing component vector of length `n`.
    pub fn zero_share<F: Random>(&mut self, n: usize) -> Vec<F> {
        let mut out = vec![F::ZERO; n];
        let mut scratch = Vec::new();
        self.add_zero_share(&mut out, &mut scratch);
        out
    }

    /// Child streams for a sub-task, derived in a fixed order from both parent streams.
    pub fn derive(&mut self) -> Prss {
        let prev = self.prev.derive_key();
        let next = self.next.derive_key();
        Prss::new(&prev, &next)
    }
}

/// Byte-level zero-share for one-byte fields, generated in parallel for large batches:
/// `out[k] ^= next[k] ^ prev[k]` (characteristic 2 only).
pub fn xor_zero_share_bytes(prss: &mut Prss, out: &mut [u8], scratch: &mut Vec<u8>) {
    scratch.clear();
    scratch.resize(out.len(), 0);
    prss.next.fill_bytes(scratch);
    xor_into(out, scratch);
    prss.prev.fill_bytes(scratch);
    xor_into(out, scratch);
}

fn xor_into(out: &mut [u8], a: &[u8]) {
    const CH: usize = 1 << 16;
    if out.len() >= 2 * CH {
        out.par_chunks_mut(CH)
            .zip(a.par_chunks(CH))
            .for_each(|(o, a)| o.iter_mut().zip(a).for_each(|(o, a)| *o ^= a));
    } else {
        out.iter_mut().zip(a).for_each(|(o, a)| *o ^= a);
    }
}

/// Commitment to a seed part for pairwise key agreement (PROTOCOLS.md §1.2):
/// `com = rho || SHA256(rho || s)`, 48 bytes.
pub fn commit_seed(seed: &[u8; 16], nonce: &[u8; 16]) -> [u8; 48] {
    let mut out = [0u8; 48];
    out[..16].copy_from_slice(nonce);
    let mut h = Sha256::new();
    h.update(nonce);
    h.update(seed);
    out[16..].copy_from_slice(&h.finalize());
    out
}

/// Checks an opened seed part against a commitment.
pub fn verify_seed(com: &[u8], seed: &[u8]) -> bool {
    if com.len() != 48 || seed.len() != 16 {
        return false;
    }
    let mut h = Sha256::new();
    h.update(&com[..16]);
    h.update(seed);
    let d = h.finalize();
    // Not secret-dependent timing: both values are public once opened.
    d.as_slice() == &com[16..]
}

/// Combines two seed parts into the pair's key.
pub fn combine_seeds(a: &[u8; 16], b: &[u8; 16]) -> PrgKey {
    let mut k = [0u8; 16];
    for i in 0..16 {
        k[i] = a[i] ^ b[i];
    }
    PrgKey(k)
}

/// Helper for tests and single-process setups: keys for all three pairs from one generator.
/// Returns each party's `Prss` (index 0 = P1).
pub fn prss_from_rng<R: RngCore + ?Sized>(rng: &mut R) -> [Prss; 3] {
    let mut keys = [[0u8; 16]; 3]; // keys[i] = k_{i,i+1}
    for k in keys.iter_mut() {
        rng.fill_bytes(k);
    }
    let k = |i: usize| PrgKey(keys[i % 3]);
    // P_i: prev = k_{i-1,i}, next = k_{i,i+1}
    let out = [
        Prss::new(&k(2), &k(0)),
        Prss::new(&k(0), &k(1)),
        Prss::new(&k(1), &k(2)),
    ];
    keys.zeroize();
    out
}
