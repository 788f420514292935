//! Correlated randomness from pairwise PRG keys (PROTOCOLS.md §1.2), without communication.

use aes::cipher::{BlockEncrypt, KeyInit};
use aes::{Aes128, Block};
use rand_core::RngCore;
use rayon::prelude::*;
use sha2::{Digest, Sha256};
use triskele_field::ctr::HwAes128Ctr;
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
/// stream is `AES_k(j)`, `j` a little-endian 128-bit counter). On the CPU's AES instructions
/// (VAES or AES-NI, [`HwAes128Ctr`]) unless the backend is forced to `portable`, else the `aes`
/// crate's constant-time software AES; the stream is the same.
///
/// Both holders of a key draw from it in the same order, so they obtain the same values. The
/// stream is random-access, so large requests are generated in parallel with output identical
/// to sequential generation, whatever the number of threads.
pub struct Prg {
    cipher: Cipher,
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

/// The block cipher behind a [`Prg`].
enum Cipher {
    Hw(HwAes128Ctr),
    Soft(Box<Aes128>),
}

impl Cipher {
    /// Writes (`XOR = false`) or XORs (`XOR = true`) keystream blocks `start, start+1, ...`
    /// into `out`, whose length is a multiple of 16.
    fn blocks<const XOR: bool>(&self, start: u128, out: &mut [u8]) {
        debug_assert!(out.len().is_multiple_of(16));
        match self {
            Cipher::Hw(c) if XOR => c.xor_keystream(start, out),
            Cipher::Hw(c) => c.keystream(start, out),
            Cipher::Soft(c) => soft_blocks::<XOR>(c, start, out),
        }
    }

    /// [`Cipher::blocks`] on a large buffer: in parallel chunks on the current rayon pool.
    fn blocks_par<const XOR: bool>(&self, start: u128, out: &mut [u8]) {
        if out.len() >= 2 * PAR_CHUNK {
            out.par_chunks_mut(PAR_CHUNK)
                .enumerate()
                .for_each(|(i, c)| {
                    self.blocks::<XOR>(start + (i * PAR_CHUNK / 16) as u128, c);
                });
        } else {
            self.blocks::<XOR>(start, out);
        }
    }
}

/// Copies (`XOR = false`) or XORs (`XOR = true`) `src` into `dst` (same length).
fn put<const XOR: bool>(dst: &mut [u8], src: &[u8]) {
    if XOR {
        for (d, s) in dst.iter_mut().zip(src) {
            *d ^= *s;
        }
    } else {
        dst.copy_from_slice(src);
    }
}

/// The `aes` crate's keystream (whole blocks), written or XORed into `out`.
fn soft_blocks<const XOR: bool>(cipher: &Aes128, start: u128, out: &mut [u8]) {
    let mut ctr = start;
    let mut blocks = [Block::default(); BATCH_BLOCKS];
    for chunk in out.chunks_mut(BATCH_BYTES) {
        let nb = chunk.len() / 16;
        for b in blocks.iter_mut().take(nb) {
            b.copy_from_slice(&ctr.to_le_bytes());
            ctr = ctr.wrapping_add(1);
        }
        cipher.encrypt_blocks(&mut blocks[..nb]);
        for (dst, src) in chunk.chunks_mut(16).zip(blocks.iter()) {
            put::<XOR>(dst, src);
        }
    }
    for b in blocks.iter_mut() {
        b.zeroize();
    }
}

impl Prg {
    pub fn new(key: &PrgKey) -> Self {
        let cipher = match HwAes128Ctr::new(&key.0) {
            Some(c) => Cipher::Hw(c),
            None => Cipher::Soft(Box::new(Aes128::new(&key.0.into()))),
        };
        Prg {
            cipher,
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
        self.stream::<false>(out);
    }

    /// XORs the next `out.len()` bytes of the stream into `out`: the same stream use as
    /// [`Prg::fill_stream`] of that length.
    pub fn xor_stream(&mut self, out: &mut [u8]) {
        self.stream::<true>(out);
    }

    /// The next `out.len()` bytes of the stream written (`XOR = false`) or XORed (`XOR = true`)
    /// into `out`: leftover bytes of the current batch first, then whole blocks, then a fresh
    /// batch for a partial last block.
    fn stream<const XOR: bool>(&mut self, out: &mut [u8]) {
        let take = (BATCH_BYTES - self.pos).min(out.len());
        put::<XOR>(&mut out[..take], &self.buf[self.pos..self.pos + take]);
        self.pos += take;
        let rest = &mut out[take..];
        if rest.is_empty() {
            return;
        }
        let full = rest.len() / 16 * 16;
        let (whole, tail) = rest.split_at_mut(full);
        self.cipher.blocks_par::<XOR>(self.counter, whole);
        self.counter += (full / 16) as u128;
        if !tail.is_empty() {
            self.refill();
            put::<XOR>(tail, &self.buf[..tail.len()]);
            self.pos = tail.len();
        }
    }

    /// Generates the next batch of the stream into the leftover buffer.
    fn refill(&mut self) {
        self.cipher.blocks::<false>(self.counter, &mut self.buf);
        self.counter += BATCH_BLOCKS as u128;
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
        let mut r = RssVec::default();
        self.random_rss_into(n, &mut r);
        r
    }

    /// [`Prss::random_rss`] written into `out` (resized to `n`, its memory reused): the same
    /// sharing and the same stream use. Only elements past `out`'s current length are zeroed
    /// first (the fill overwrites every element), so a buffer reused at the same size is
    /// written once, not twice.
    pub fn random_rss_into<F: Random>(&mut self, n: usize, out: &mut RssVec<F>) {
        for v in [&mut out.first, &mut out.second] {
            v.truncate(n);
            v.resize(n, F::ZERO);
        }
        self.prev.fill(&mut out.first);
        self.next.fill(&mut out.second);
    }

    /// Adds this party's component of a fresh zero-sharing, `alpha_i = PRG_next() - PRG_prev()`,
    /// to `out`; the three components sum to zero.
    pub fn add_zero_share<F: Random + Bulk>(&mut self, out: &mut [F], scratch: &mut Vec<F>) {
        if let Some((bytes, mask)) = F::xor_bytes_mut(out) {
            // Characteristic two with elements as stream bytes: XOR both streams in place, the
            // same stream use as the general path below.
            self.next.xor_stream(bytes);
            self.prev.xor_stream(bytes);
            if mask != 0xff {
                for b in bytes.iter_mut() {
                    *b &= mask;
                }
            }
            return;
        }
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

    /// A stream on the `aes` crate's software AES, whatever the CPU has.
    fn soft(k: &PrgKey) -> Prg {
        Prg {
            cipher: Cipher::Soft(Box::new(Aes128::new(&k.0.into()))),
            ..Prg::new(k)
        }
    }

    /// Reads `total` bytes in pieces of the given sizes (then all the rest), alternating
    /// `fill_stream` and `xor_stream` (into `base`'s bytes).
    fn read_mixed(mut prg: Prg, splits: &[usize], base: &[u8]) -> Vec<u8> {
        let mut got = base.to_vec();
        let mut off = 0;
        for (i, s) in splits
            .iter()
            .copied()
            .chain(core::iter::repeat(base.len()))
            .enumerate()
        {
            if off == base.len() {
                break;
            }
            let piece = &mut got[off..(off + s).min(base.len())];
            if i % 2 == 0 {
                prg.fill_stream(piece);
            } else {
                prg.xor_stream(piece);
            }
            off += piece.len();
        }
        got
    }

    /// `xor_stream` uses the stream exactly as `fill_stream`, on hardware AES (where the CPU
    /// has it) and on the software AES alike, in any split, in parallel or not.
    #[test]
    fn xor_stream_matches_fill_stream_on_both_ciphers() {
        let total = 3 * PAR_CHUNK + 1000;
        let mut one = vec![0u8; total];
        soft(&key(5)).fill_stream(&mut one);
        let base: Vec<u8> = (0..total).map(|i| (i * 37 % 251) as u8).collect();
        for splits in [
            vec![1, 2, 3, 2 * PAR_CHUNK + 7, 100],
            vec![15, 17, 128, 129, 2 * PAR_CHUNK],
            vec![5, total],
        ] {
            // Pieces at even positions were filled, at odd ones XORed into `base`.
            let mut want = one.clone();
            let mut off = 0;
            for (i, s) in splits
                .iter()
                .copied()
                .chain(core::iter::repeat(total))
                .enumerate()
            {
                if off == total {
                    break;
                }
                let end = (off + s).min(total);
                if i % 2 == 1 {
                    for k in off..end {
                        want[k] ^= base[k];
                    }
                }
                off = end;
            }
            for prg in [soft(&key(5)), Prg::new(&key(5))] {
                assert_eq!(read_mixed(prg, &splits, &base), want, "splits {splits:?}");
            }
            let pool = rayon::ThreadPoolBuilder::new()
                .num_threads(3)
                .build()
                .unwrap();
            let par = pool.install(|| read_mixed(Prg::new(&key(5)), &splits, &base));
            assert_eq!(par, want);
        }
    }

    /// The in-place zero-share of the byte-oriented fields equals the general path (two
    /// `fill`s and additions) on the same keys.
    #[test]
    fn zero_share_in_place_matches_general_path() {
        fn check<F: Random + Bulk>(n: usize) {
            let mut x = vec![F::ZERO; n];
            Prg::new(&key(9)).fill(&mut x);
            let mut fast = Prss::new(&key(3), &key(4));
            // Use the streams first, so the requests do not start on a block boundary.
            let _ = fast.prev.next_u32();
            let mut got = x.clone();
            fast.add_zero_share(&mut got, &mut Vec::new());
            let mut slow = Prss::new(&key(3), &key(4));
            let _ = slow.prev.next_u32();
            let mut r = vec![F::ZERO; n];
            slow.next.fill(&mut r);
            let mut want: Vec<F> = x.iter().zip(&r).map(|(a, b)| *a + *b).collect();
            slow.prev.fill(&mut r);
            for (w, b) in want.iter_mut().zip(&r) {
                *w -= *b;
            }
            assert_eq!(got, want);
            assert!(F::xor_bytes_mut(&mut x).is_some());
            // The streams continue in step.
            assert_eq!(fast.next.next_u64(), slow.next.next_u64());
            assert_eq!(fast.prev.next_u64(), slow.prev.next_u64());
        }
        for n in [1, 7, 1000, 2 * PAR_CHUNK + 3] {
            check::<Gf2p8>(n);
            check::<triskele_field::Gf2p4>(n);
            check::<triskele_field::Gf4Tower>(n);
            check::<triskele_field::Gf2p64>(n);
            check::<triskele_field::Bits16>(n);
        }
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
    fn random_rss_into_matches_random_rss_and_reuses_the_buffer() {
        let [mut p, ..] = prss_from_rng(&mut Prg::new(&key(2)));
        let [mut q, ..] = prss_from_rng(&mut Prg::new(&key(2)));
        // A longer buffer with stale contents is cut to `n` and overwritten.
        let mut out = RssVec {
            first: vec![Gf2p8(7); 900],
            second: vec![Gf2p8(9); 900],
        };
        let cap = out.first.capacity();
        for n in [500, 700] {
            q.random_rss_into(n, &mut out);
            assert_eq!(out, p.random_rss::<Gf2p8>(n));
        }
        assert_eq!(out.first.capacity(), cap);
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
