//! Correlated randomness from pairwise PRG keys (PROTOCOLS.md §1.2), without communication.

use aes::cipher::{BlockEncrypt, KeyInit};
use aes::{Aes128, Block};
use rand_core::RngCore;
use rayon::prelude::*;
use sha2::{Digest, Sha256};
use triskele_field::{Bulk, Random};
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

/// A deterministic PRG stream: AES-128 in counter mode under a 128-bit key (block `j` of the
/// stream is `AES_k(j)`, `j` a little-endian 128-bit counter). AES-NI is used when the CPU has
/// it (the `aes` crate detects it at run time).
///
/// Both holders of a key draw from it in the same order, so they obtain the same values. The
/// stream is random-access, so large requests are generated in parallel with output identical
/// to sequential generation, whatever the number of threads.
pub struct Prg {
    cipher: Aes128,
    /// Index of the next keystream block to generate.
    counter: u128,
    /// Unused keystream bytes of the last generated batch: `buf[pos..]`.
    buf: [u8; BATCH_BYTES],
    pos: usize,
}

impl core::fmt::Debug for Prg {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str("Prg(..)")
    }
}

impl Drop for Prg {
    fn drop(&mut self) {
        self.buf.zeroize();
    }
}

/// Blocks encrypted per call (lets AES-NI pipeline).
const BATCH_BLOCKS: usize = 8;
const BATCH_BYTES: usize = 16 * BATCH_BLOCKS;
/// Bytes per parallel chunk when filling large buffers (a multiple of the batch).
const PAR_CHUNK: usize = 1 << 16;

/// Writes keystream blocks `start, start+1, ...` into `out` (any length; a partial last block
/// is truncated).
fn keystream(cipher: &Aes128, start: u128, out: &mut [u8]) {
    let mut ctr = start;
    let mut blocks = [Block::default(); BATCH_BLOCKS];
    for chunk in out.chunks_mut(BATCH_BYTES) {
        let nb = chunk.len().div_ceil(16);
        for b in blocks.iter_mut().take(nb) {
            b.copy_from_slice(&ctr.to_le_bytes());
            ctr = ctr.wrapping_add(1);
        }
        cipher.encrypt_blocks(&mut blocks[..nb]);
        for (dst, src) in chunk.chunks_mut(16).zip(blocks.iter()) {
            dst.copy_from_slice(&src[..dst.len()]);
        }
    }
    for b in blocks.iter_mut() {
        b.zeroize();
    }
}

impl Prg {
    pub fn new(key: &PrgKey) -> Self {
        Prg {
            cipher: Aes128::new(&key.0.into()),
            counter: 0,
            buf: [0u8; BATCH_BYTES],
            pos: BATCH_BYTES,
        }
    }

    /// Fills `out` with field elements.
    pub fn fill<F: Random>(&mut self, out: &mut [F]) {
        F::fill_random(self, out);
    }

    /// Fills a byte buffer with the next bytes of the stream. Large buffers are generated in
    /// parallel chunks on the current rayon pool.
    pub fn fill_stream(&mut self, out: &mut [u8]) {
        // Leftover bytes of the current batch first.
        let take = (BATCH_BYTES - self.pos).min(out.len());
        out[..take].copy_from_slice(&self.buf[self.pos..self.pos + take]);
        self.pos += take;
        let rest = &mut out[take..];
        if rest.is_empty() {
            return;
        }
        let full = rest.len() / 16 * 16;
        let (whole, tail) = rest.split_at_mut(full);
        let start = self.counter;
        if whole.len() >= 2 * PAR_CHUNK {
            let cipher = &self.cipher;
            whole
                .par_chunks_mut(PAR_CHUNK)
                .enumerate()
                .for_each(|(i, c)| keystream(cipher, start + (i * PAR_CHUNK / 16) as u128, c));
        } else {
            keystream(&self.cipher, start, whole);
        }
        self.counter = start + (full / 16) as u128;
        if !tail.is_empty() {
            keystream(&self.cipher, self.counter, &mut self.buf);
            self.counter += BATCH_BLOCKS as u128;
            tail.copy_from_slice(&self.buf[..tail.len()]);
            self.pos = tail.len();
        }
    }

    /// Draws a fresh key from this stream (for deriving child streams).
    pub fn derive_key(&mut self) -> PrgKey {
        let mut k = [0u8; 16];
        self.fill_stream(&mut k);
        PrgKey(k)
    }
}

impl RngCore for Prg {
    fn next_u32(&mut self) -> u32 {
        let mut b = [0u8; 4];
        self.fill_stream(&mut b);
        u32::from_le_bytes(b)
    }

    fn next_u64(&mut self) -> u64 {
        let mut b = [0u8; 8];
        self.fill_stream(&mut b);
        u64::from_le_bytes(b)
    }

    fn fill_bytes(&mut self, dst: &mut [u8]) {
        self.fill_stream(dst);
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
    pub fn add_zero_share<F: Random + Bulk>(&mut self, out: &mut [F], scratch: &mut Vec<F>) {
        scratch.clear();
        scratch.resize(out.len(), F::ZERO);
        self.next.fill(scratch);
        F::add_assign_slice(out, scratch);
        self.prev.fill(scratch);
        if F::CHARACTERISTIC_TWO {
            F::add_assign_slice(out, scratch);
        } else {
            for (o, s) in out.iter_mut().zip(scratch.iter()) {
                *o -= *s;
            }
        }
    }

    /// A fresh zero-sharing component vector of length `n`.
    pub fn zero_share<F: Random + Bulk>(&mut self, n: usize) -> Vec<F> {
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

#[cfg(test)]
mod tests {
    use super::*;
    use triskele_field::{Field, Gf2p8};

    fn key(b: u8) -> PrgKey {
        PrgKey([b; 16])
    }

    #[test]
    fn aes_ctr_known_answer() {
        // Blocks 0 and 1 of the stream under key 000102..0f are AES-128 of the little-endian
        // counters 0 and 1; values from `openssl enc -aes-128-ecb -K 000102030405060708090a0b0c0d0e0f`.
        let mut k = [0u8; 16];
        for (i, b) in k.iter_mut().enumerate() {
            *b = i as u8;
        }
        let mut prg = Prg::new(&PrgKey(k));
        let mut out = [0u8; 32];
        prg.fill_stream(&mut out[..5]);
        prg.fill_stream(&mut out[5..]);
        let hex: String = out.iter().map(|b| format!("{b:02x}")).collect();
        assert_eq!(
            hex,
            "c6a13b37878f5b826f4f8162a1c8d879e37cd363dd7c87a09aff0e3e60e09c82"
        );
    }

    #[test]
    fn any_split_of_reads_gives_the_same_stream() {
        let total = 3 * PAR_CHUNK + 1000;
        let mut one = vec![0u8; total];
        Prg::new(&key(7)).fill_stream(&mut one);
        for splits in [
            vec![1, 2, 3, 2 * PAR_CHUNK + 7, 100],
            vec![15, 17, 128, 129, 2 * PAR_CHUNK],
            vec![total],
        ] {
            let mut prg = Prg::new(&key(7));
            let mut got = Vec::new();
            let mut left = total;
            for s in splits.iter().copied().chain(core::iter::repeat(total)) {
                if left == 0 {
                    break;
                }
                let n = s.min(left);
                let mut b = vec![0u8; n];
                prg.fill_stream(&mut b);
                got.extend_from_slice(&b);
                left -= n;
            }
            assert_eq!(got, one, "splits {splits:?}");
        }
        // Parallel generation on a multi-threaded pool equals the single-threaded result.
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(3)
            .build()
            .unwrap();
        let mut par = vec![0u8; total];
        pool.install(|| Prg::new(&key(7)).fill_stream(&mut par));
        assert_eq!(par, one);
        let mut other = vec![0u8; total];
        Prg::new(&key(8)).fill_stream(&mut other);
        assert_ne!(other, one);
    }

    #[test]
    fn zero_shares_sum_to_zero_and_random_rss_is_replicated() {
        let mut rng = Prg::new(&key(1));
        let mut p = prss_from_rng(&mut rng);
        let z: Vec<Vec<Gf2p8>> = p.iter_mut().map(|q| q.zero_share(1000)).collect();
        for ((a, b), c) in z[0].iter().zip(&z[1]).zip(&z[2]) {
            assert_eq!(*a + *b + *c, Gf2p8::ZERO);
        }
        assert!(z[0].iter().any(|x| *x != Gf2p8::ZERO));
        let r: Vec<RssVec<Gf2p8>> = p.iter_mut().map(|q| q.random_rss(500)).collect();
        let r: [RssVec<Gf2p8>; 3] = [r[0].clone(), r[1].clone(), r[2].clone()];
        assert!(crate::reconstruct(&r).is_some());
    }

    #[test]
    fn seed_commitments() {
        let s = [3u8; 16];
        let c = commit_seed(&s, &[9u8; 16]);
        assert!(verify_seed(&c, &s));
        assert!(!verify_seed(&c, &[4u8; 16]));
        assert!(!verify_seed(&c[..47], &s));
        let mut bad = c;
        bad[0] ^= 1;
        assert!(!verify_seed(&bad, &s));
    }
}
