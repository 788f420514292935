//! AES-128 in counter mode as a keystream, for expanding *public* seeds fast (e.g. the
//! coefficients of the batched multiplication check).
//!
//! Block `j` of the stream is `AES_k(j)` with `j` a little-endian 128-bit counter, the bytes
//! read in order: the same stream as `triskele_share::Prg` under the same key. Sixteen blocks
//! per step with VAES, eight with AES-NI (on every backend but `portable`), otherwise the
//! portable implementation, whose table S-box is not constant time: do not use this type for
//! secret keys. [`HwAes128Ctr`] is the same stream for secret keys: it exists only where the
//! CPU has AES instructions, and its callers fall back to a constant-time software AES.

use rand_core::RngCore;
use zeroize::Zeroize;

use crate::backend::{self, Backend, HwAes};

/// Blocks generated per internal step when a request does not start on a block boundary.
const BLOCK: usize = 16;

/// An AES-128-CTR keystream (see the module documentation).
#[derive(Clone)]
pub struct Aes128Ctr {
    rk: [[u8; 16]; 11],
    be: Backend,
    /// Index of the next keystream block to generate.
    counter: u128,
    /// Unused bytes of the last generated block: `buf[pos..]`.
    buf: [u8; BLOCK],
    pos: usize,
}

impl core::fmt::Debug for Aes128Ctr {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str("Aes128Ctr(..)")
    }
}

impl Aes128Ctr {
    /// The stream under `key`, from block 0, on the active backend.
    pub fn new(key: &[u8; 16]) -> Self {
        Self::new_with(backend::active(), key)
    }

    /// [`Aes128Ctr::new`] on an explicit backend (portable if `be` is unavailable).
    pub fn new_with(be: Backend, key: &[u8; 16]) -> Self {
        Aes128Ctr {
            rk: backend::aes128_expand(key),
            be,
            counter: 0,
            buf: [0; BLOCK],
            pos: BLOCK,
        }
    }

    /// Writes the next `out.len()` bytes of the stream.
    pub fn fill(&mut self, out: &mut [u8]) {
        let take = (BLOCK - self.pos).min(out.len());
        out[..take].copy_from_slice(&self.buf[self.pos..self.pos + take]);
        self.pos += take;
        let rest = &mut out[take..];
        if rest.is_empty() {
            return;
        }
        let full = rest.len() / BLOCK * BLOCK;
        let (whole, tail) = rest.split_at_mut(full);
        backend::aes128_ctr(self.be, &self.rk, self.counter, whole);
        self.counter = self.counter.wrapping_add((full / BLOCK) as u128);
        if !tail.is_empty() {
            backend::aes128_ctr(self.be, &self.rk, self.counter, &mut self.buf);
            self.counter = self.counter.wrapping_add(1);
            tail.copy_from_slice(&self.buf[..tail.len()]);
            self.pos = tail.len();
        }
    }
}

impl RngCore for Aes128Ctr {
    fn next_u32(&mut self) -> u32 {
        let mut b = [0u8; 4];
        self.fill(&mut b);
        u32::from_le_bytes(b)
    }

    fn next_u64(&mut self) -> u64 {
        let mut b = [0u8; 8];
        self.fill(&mut b);
        u64::from_le_bytes(b)
    }

    fn fill_bytes(&mut self, dst: &mut [u8]) {
        self.fill(dst);
    }
}

/// AES-128-CTR under a secret key on the CPU's AES instructions (VAES or AES-NI, constant
/// time; the key schedule too), random access: block `j` is `AES_k(j)`, `j` a little-endian
/// 128-bit counter, as in [`Aes128Ctr`]. The round keys are zeroized on drop.
#[derive(Debug)]
pub struct HwAes128Ctr(HwAes128);

impl HwAes128Ctr {
    /// The stream under `key`, or `None` when the active backend is `portable` (e.g.
    /// `TRISKELE_BACKEND=portable`) or the CPU has no AES instructions.
    pub fn new(key: &[u8; 16]) -> Option<Self> {
        HwAes128::new(key).map(HwAes128Ctr)
    }

    /// [`HwAes128Ctr::new`] for an explicit backend.
    pub fn new_with(be: Backend, key: &[u8; 16]) -> Option<Self> {
        HwAes128::new_with(be, key).map(HwAes128Ctr)
    }

    /// Keystream blocks `start, start + 1, ...` into `out`. Whole blocks only: a partial last
    /// block of `out` is left as it is.
    pub fn keystream(&self, start: u128, out: &mut [u8]) {
        self.0.hw.ctr::<false>(&self.0.rk, start, out);
    }

    /// XORs keystream blocks `start, start + 1, ...` into `out` (whole blocks only, as
    /// [`HwAes128Ctr::keystream`]).
    pub fn xor_keystream(&self, start: u128, out: &mut [u8]) {
        self.0.hw.ctr::<true>(&self.0.rk, start, out);
    }
}

/// AES-128 block by block (ECB) on the CPU's AES instructions (VAES or AES-NI, constant
/// time), for batches of independent blocks such as a fixed-key hash. The round keys are
/// zeroized on drop.
pub struct HwAes128 {
    rk: [[u8; 16]; 11],
    hw: HwAes,
}

impl core::fmt::Debug for HwAes128 {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str("HwAes128(..)")
    }
}

impl Drop for HwAes128 {
    fn drop(&mut self) {
        self.rk.zeroize();
    }
}

impl HwAes128 {
    /// The cipher under `key`, or `None` when the active backend is `portable` (e.g.
    /// `TRISKELE_BACKEND=portable`) or the CPU has no AES instructions.
    pub fn new(key: &[u8; 16]) -> Option<Self> {
        Self::new_with(backend::active(), key)
    }

    /// [`HwAes128::new`] for an explicit backend.
    pub fn new_with(be: Backend, key: &[u8; 16]) -> Option<Self> {
        if be == Backend::Portable {
            return None;
        }
        let hw = HwAes::detect()?;
        Some(HwAes128 {
            rk: hw.expand(key),
            hw,
        })
    }

    /// Encrypts every whole 16-byte block of `buf` in place: `b <- AES_k(b)` (a partial last
    /// block is left as it is).
    pub fn encrypt_blocks(&self, buf: &mut [u8]) {
        self.hw.ecb::<false>(&self.rk, buf);
    }

    /// The Matyas-Meyer-Oseas form in place: `b <- AES_k(b) ^ b` for every whole 16-byte
    /// block of `buf` (a partial last block is left as it is).
    pub fn mmo_blocks(&self, buf: &mut [u8]) {
        self.hw.ecb::<true>(&self.rk, buf);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hex16(s: &str) -> [u8; 16] {
        core::array::from_fn(|i| u8::from_str_radix(&s[2 * i..2 * i + 2], 16).unwrap_or(0))
    }

    /// FIPS-197 Appendix C.1 on every backend: the counter block is the plaintext.
    #[test]
    fn fips197_known_answer_on_every_backend() {
        let key = hex16("000102030405060708090a0b0c0d0e0f");
        let pt = u128::from_le_bytes(hex16("00112233445566778899aabbccddeeff"));
        let ct = hex16("69c4e0d86a7b0430d8cdb78070b4c55a");
        let rk = backend::aes128_expand(&key);
        assert_eq!(rk[10], hex16("13111d7fe3944a17f307a78b4d2b30c5"));
        for be in Backend::ALL {
            // 40 blocks: the vector paths and the one-block tail.
            let mut out = [0u8; 16 * 40];
            backend::aes128_ctr(be, &rk, pt, &mut out);
            assert_eq!(out[..16], ct, "{be}");
            let mut one = [0u8; 16];
            backend::aes128_ctr(Backend::Portable, &rk, pt + 33, &mut one);
            assert_eq!(out[16 * 33..16 * 34], one, "{be}");
        }
    }

    /// The hardware stream for secret keys: its key schedule matches FIPS-197's, its blocks
    /// the portable stream's, the XOR form XORs exactly those blocks; a partial last block is
    /// untouched. Where the CPU has no AES instructions, it does not exist.
    #[test]
    fn hardware_stream_matches_portable() {
        use rand::{Rng, SeedableRng};
        let mut rng = rand_chacha::ChaCha20Rng::seed_from_u64(7);
        for round in 0..20 {
            let key: [u8; 16] = rng.random();
            let Some(hw) = HwAes128Ctr::new_with(Backend::Avx2, &key) else {
                assert!(HwAes::detect().is_none());
                return;
            };
            assert_eq!(hw.0.rk, backend::aes128_expand(&key));
            assert!(HwAes128Ctr::new_with(Backend::Portable, &key).is_none());
            // The low 64 bits of the counter wrap around in the first step, at the end of a
            // step, at the start of one, or several steps in (the hardware paths build the
            // counters of such a step one by one).
            let before_wrap = [3, 7, 15, 16, 100, 2000, 4000][round % 7];
            let start = u128::from(rng.random::<u64>()) << 64 | u128::from(u64::MAX - before_wrap);
            // 300 blocks: the 16-block VAES steps, the 8-block AES-NI steps, single blocks;
            // plus 5 bytes of a partial block.
            let n = 16 * 300 + 5;
            let mut want = vec![0u8; n];
            backend::aes128_ctr(Backend::Portable, &hw.0.rk, start, &mut want);
            let mut got = vec![0xa5u8; n];
            hw.keystream(start, &mut got);
            assert_eq!(got[..n - 5], want[..n - 5]);
            assert_eq!(got[n - 5..], [0xa5; 5]);
            // AES-NI alone (the path of CPUs without VAES), both forms.
            #[cfg(target_arch = "x86_64")]
            if let HwAes::Vaes(_, a) = hw.0.hw {
                let aesni = HwAes::AesNi(a);
                let mut got = vec![0xa5u8; n];
                aesni.ctr::<false>(&hw.0.rk, start, &mut got);
                assert_eq!(got[..n - 5], want[..n - 5]);
                assert_eq!(got[n - 5..], [0xa5; 5]);
                let mut x = got.clone();
                aesni.ctr::<true>(&hw.0.rk, start, &mut x);
                // XORing the same stream again gives zeros; the partial block is untouched.
                assert!(x[..n - 5].iter().all(|&b| b == 0));
                assert_eq!(x[n - 5..], [0xa5; 5]);
            }
            let base: Vec<u8> = (0..n).map(|_| rng.random()).collect();
            let mut x = base.clone();
            hw.xor_keystream(start, &mut x);
            for i in 0..n - 5 {
                assert_eq!(x[i], base[i] ^ want[i], "byte {i}");
            }
            assert_eq!(x[n - 5..], base[n - 5..]);
        }
    }
    /// ECB and MMO on the CPU's AES instructions (the VAES path with its AES-NI tail, and
    /// AES-NI alone): every whole block is the portable AES of it (one counter block each),
    /// MMO XORs the input back, a partial last block is untouched.
    #[test]
    fn hardware_ecb_and_mmo_match_portable() {
        use rand::{Rng, SeedableRng};
        let mut rng = rand_chacha::ChaCha20Rng::seed_from_u64(8);
        let Some(hw) = HwAes::detect() else {
            assert!(HwAes128::new_with(Backend::Avx2, &[0; 16]).is_none());
            return;
        };
        let mut paths = vec![hw];
        #[cfg(target_arch = "x86_64")]
        if let HwAes::Vaes(_, a) = hw {
            paths.push(HwAes::AesNi(a));
        }
        for _ in 0..10 {
            let key: [u8; 16] = rng.random();
            let cipher = HwAes128::new_with(Backend::Avx2, &key).expect("AES instructions");
            assert!(HwAes128::new_with(Backend::Portable, &key).is_none());
            let rk = backend::aes128_expand(&key);
            let n = 16 * 300 + 5;
            let input: Vec<u8> = (0..n).map(|_| rng.random()).collect();
            let mut want = vec![0u8; n - 5];
            for (w, b) in want.chunks_exact_mut(16).zip(input.chunks_exact(16)) {
                let mut x = [0u8; 16];
                x.copy_from_slice(b);
                backend::aes128_ctr(Backend::Portable, &rk, u128::from_le_bytes(x), w);
            }
            for path in &paths {
                let mut got = input.clone();
                path.ecb::<false>(&rk, &mut got);
                assert_eq!(got[..n - 5], want[..], "{path:?}");
                assert_eq!(got[n - 5..], input[n - 5..]);
                let mut mmo = input.clone();
                path.ecb::<true>(&rk, &mut mmo);
                for i in 0..n - 5 {
                    assert_eq!(mmo[i], want[i] ^ input[i], "{path:?} byte {i}");
                }
                assert_eq!(mmo[n - 5..], input[n - 5..]);
            }
            let mut got = input.clone();
            cipher.encrypt_blocks(&mut got);
            assert_eq!(got[..n - 5], want[..]);
            let mut mmo = input.clone();
            cipher.mmo_blocks(&mut mmo);
            assert_eq!(
                mmo[..16],
                core::array::from_fn::<u8, 16, _>(|i| want[i] ^ input[i])
            );
        }
    }
}
