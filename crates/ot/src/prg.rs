//! Pseudorandom generators and domain-separated hashing.
//!
//! * [`Prg`]: AES-128 in counter mode; of a 32-byte seed, 16 bytes key the
//!   cipher and 16 bytes set the initial counter. It expands the secret
//!   randomness of one protocol run (noise, secret bits, masks), so each run
//!   draws only 32 bytes from the caller's RNG; the batch ROT protocol keys
//!   one generator per chunk of up to 256 runs (about 3 MB of keystream,
//!   2^18 blocks: far inside AES-CTR's bounds), which saves a key schedule
//!   and its wipe per run and party. AES-128 key search is the
//!   yardstick of NIST's post-quantum security category 1, the level of the
//!   `n = 512` ring, so the PRG is not the weak link; it is 40% faster than
//!   AES-256 and the noise PRG is a visible share of a ROT's cost. The
//!   keystream comes from `triskele_field::ctr::HwAes128Ctr` (VAES, 4 blocks
//!   per instruction, or AES-NI) where the CPU has AES instructions, else
//!   from the `aes` crate (which picks ARMv8 AES where present); both are
//!   constant time and give the same stream (tested).
//! * [`Domain`]: every random-oracle call is BLAKE3 in keyed mode with a key
//!   derived once from a context string, so distinct uses never collide.

use aes::cipher::{
    consts::U16, generic_array::GenericArray, inout::InOutBuf, BlockEncrypt, KeyInit,
};
use aes::Aes128;
use rand_core::CryptoRng;
use std::sync::OnceLock;
use subtle::{Choice, ConstantTimeEq};
use zeroize::Zeroize;

/// The block cipher behind [`Prg`].
enum Cipher {
    /// The CPU's AES instructions through the field crate (round keys
    /// zeroized on drop).
    Hw(triskele_field::ctr::HwAes128Ctr),
    /// The `aes` crate (key schedule zeroized by its "zeroize" feature).
    Soft(Box<Aes128>),
}

/// AES-128-CTR pseudorandom generator.
pub(crate) struct Prg {
    cipher: Cipher,
    /// The counter of the next block to encrypt.
    counter: u128,
    /// Keystream generated ahead: `buf[pos..end]` is the next part of the
    /// stream.
    buf: [u8; BUF],
    pos: usize,
    end: usize,
}

/// Bytes of keystream generated at a time (one 16-block step of the VAES
/// keystream): the stream always comes in whole steps, whatever the sizes
/// asked for.
const STEP: usize = 256;

/// Capacity of the buffer of keystream generated ahead: the randomness of a
/// whole Gaussian polynomial (4096 bytes, read with [`Prg::block`]) after
/// up to a step of earlier keystream.
const BUF: usize = 4096 + 2 * STEP;

impl core::fmt::Debug for Prg {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str("Prg(..)")
    }
}

impl Drop for Prg {
    fn drop(&mut self) {
        wipe_bytes(&mut self.buf);
        self.counter.zeroize();
        // The key schedule is zeroized by `aes` (feature "zeroize").
    }
}

impl Prg {
    /// A generator keyed by `seed`.
    pub(crate) fn from_seed(seed: &[u8; 32]) -> Self {
        let mut iv = [0u8; 16];
        iv.copy_from_slice(&seed[16..]);
        let mut key = [0u8; 16];
        key.copy_from_slice(&seed[..16]);
        let cipher = match triskele_field::ctr::HwAes128Ctr::new(&key) {
            Some(hw) => Cipher::Hw(hw),
            None => Cipher::Soft(Box::new(Aes128::new(GenericArray::from_slice(&key)))),
        };
        key.zeroize();
        Prg {
            cipher,
            counter: u128::from_le_bytes(iv),
            buf: [0; BUF],
            pos: 0,
            end: 0,
        }
    }

    /// A generator keyed by 32 bytes from `rng`.
    pub(crate) fn from_rng<R: CryptoRng + ?Sized>(rng: &mut R) -> Self {
        let mut seed = [0u8; 32];
        rng.fill_bytes(&mut seed);
        let prg = Prg::from_seed(&seed);
        seed.zeroize();
        prg
    }

    /// Makes at least `want` bytes (at most `BUF - STEP`) of keystream
    /// ready in the buffer: moves the unread part to the front and adds the
    /// whole steps missing, with one call to the cipher.
    fn refill(&mut self, want: usize) {
        let left = self.end - self.pos;
        self.buf.copy_within(self.pos..self.end, 0);
        let steps = want.saturating_sub(left).div_ceil(STEP) * STEP;
        keystream(
            &self.cipher,
            &mut self.counter,
            &mut self.buf[left..left + steps],
        );
        self.pos = 0;
        self.end = left + steps;
    }

    /// Fills `out` with pseudorandom bytes.
    pub(crate) fn fill_bytes(&mut self, out: &mut [u8]) {
        // Serve what is left in the buffer.
        let n = out.len().min(self.end - self.pos);
        let (head, rest) = out.split_at_mut(n);
        head.copy_from_slice(&self.buf[self.pos..self.pos + n]);
        self.pos += n;
        if rest.is_empty() {
            return;
        }
        // The buffer is empty: whole steps straight into the output.
        let bulk = rest.len() / STEP * STEP;
        let (body, tail) = rest.split_at_mut(bulk);
        if !body.is_empty() {
            keystream(&self.cipher, &mut self.counter, body);
        }
        // The tail from a fresh buffer.
        if !tail.is_empty() {
            self.refill(tail.len());
            tail.copy_from_slice(&self.buf[..tail.len()]);
            self.pos = tail.len();
        }
    }

    /// The next `L` bytes of the stream, read in place from the buffer (no
    /// copy for the caller to wipe: the buffer is overwritten by later
    /// keystream and wiped on drop). `L` is at most `BUF - STEP`.
    pub(crate) fn block<const L: usize>(&mut self) -> &[u8; L] {
        const { assert!(L <= BUF - STEP) };
        if self.end - self.pos < L {
            self.refill(L);
        }
        let at = self.pos;
        self.pos += L;
        // Exactly one chunk of `L` bytes (in bounds: `at + L <= end`).
        &self.buf[at..at + L].as_chunks::<L>().0[0]
    }

    /// 32 pseudorandom bytes.
    pub(crate) fn gen_32(&mut self) -> [u8; 32] {
        let mut b = [0u8; 32];
        self.fill_bytes(&mut b);
        b
    }

    /// A pseudorandom bit (0 or 1).
    pub(crate) fn gen_bit(&mut self) -> u8 {
        let mut b = [0u8; 1];
        self.fill_bytes(&mut b);
        b[0] & 1
    }
}

/// AES-CTR keystream: the encryptions of the counter blocks `counter,
/// counter + 1, ...` (16 bytes little-endian each) into the whole blocks of
/// `out`; a trailing partial block of `out` is left untouched.
fn keystream(cipher: &Cipher, counter: &mut u128, out: &mut [u8]) {
    match cipher {
        Cipher::Hw(hw) => {
            hw.keystream(*counter, out);
            *counter = counter.wrapping_add((out.len() / 16) as u128);
        }
        Cipher::Soft(aes) => keystream_soft(aes, counter, out),
    }
}

/// [`keystream`] on the `aes` crate: writes the counter blocks into `out`
/// and encrypts them in place, with no intermediate buffer, in chunks that
/// stay in the L1 cache.
fn keystream_soft(cipher: &Aes128, counter: &mut u128, out: &mut [u8]) {
    const CHUNK: usize = 4096;
    for chunk in out.chunks_mut(CHUNK) {
        let (blocks, _) = chunk.as_chunks_mut::<16>();
        for b in blocks.iter_mut() {
            *b = counter.to_le_bytes();
            *counter = counter.wrapping_add(1);
        }
        let (blocks, _) = InOutBuf::from(chunk).into_chunks::<U16>();
        cipher.encrypt_blocks_inout(blocks);
    }
}

/// Overwrites a secret buffer with zeros: one `memset`, kept alive by
/// `black_box` (per-byte volatile stores are needlessly slow for the
/// kilobyte-sized buffers of noise sampling).
pub(crate) fn wipe_bytes(b: &mut [u8]) {
    b.fill(0);
    core::hint::black_box(b);
}

/// Random-oracle domains. Each is BLAKE3 keyed with
/// `blake3::derive_key(context, b"")`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Domain {
    HashToPoly,
    PublicPoly,
    RotCommit,
    RotTranscript,
    RotConfirm,
    BdgmTranscript,
    BdgmBranchKey,
    BdgmPad,
    BdgmLink,
    BdgmChallenge,
    BdgmEncrypt,
    EcKey,
    KosChallenge,
}

const DOMAINS: [(Domain, &str); 13] = [
    (
        Domain::HashToPoly,
        "triskele-ot 2026 rlwe hash-to-polynomial",
    ),
    (
        Domain::PublicPoly,
        "triskele-ot 2026 rlwe public polynomial a",
    ),
    (Domain::RotCommit, "triskele-ot 2026 roted commitment"),
    (Domain::RotTranscript, "triskele-ot 2026 roted transcript"),
    (
        Domain::RotConfirm,
        "triskele-ot 2026 roted key confirmation and output pad",
    ),
    (Domain::BdgmTranscript, "triskele-ot 2026 bdgm19 transcript"),
    (Domain::BdgmBranchKey, "triskele-ot 2026 bdgm19 branch key"),
    (Domain::BdgmPad, "triskele-ot 2026 bdgm19 challenge pad"),
    (Domain::BdgmLink, "triskele-ot 2026 bdgm19 branch link"),
    (
        Domain::BdgmChallenge,
        "triskele-ot 2026 bdgm19 challenge response",
    ),
    (
        Domain::BdgmEncrypt,
        "triskele-ot 2026 bdgm19 message encryption",
    ),
    (Domain::EcKey, "triskele-ot 2026 simplest-ot key derivation"),
    (
        Domain::KosChallenge,
        "triskele-ot 2026 kos consistency challenge",
    ),
];

impl Domain {
    fn key(self) -> &'static [u8; 32] {
        static KEYS: OnceLock<[[u8; 32]; DOMAINS.len()]> = OnceLock::new();
        let keys = KEYS.get_or_init(|| {
            let mut k = [[0u8; 32]; DOMAINS.len()];
            for (slot, (_, ctx)) in k.iter_mut().zip(DOMAINS.iter()) {
                *slot = blake3::derive_key(ctx, b"");
            }
            k
        });
        // DOMAINS lists the variants in declaration order (checked by a test).
        &keys[self as usize]
    }

    /// A BLAKE3 hasher for this domain.
    pub(crate) fn hasher(self) -> blake3::Hasher {
        blake3::Hasher::new_keyed(self.key())
    }

    /// `H_domain(parts...)` with a 32-byte output.
    pub(crate) fn hash(self, parts: &[&[u8]]) -> [u8; 32] {
        let mut h = self.hasher();
        for p in parts {
            h.update(p);
        }
        *h.finalize().as_bytes()
    }
}

/// Constant-time selection of 32-byte strings: `a` if `bit == 0`, else `b`.
pub(crate) fn ct_select_32(a: &[u8; 32], b: &[u8; 32], bit: u8) -> [u8; 32] {
    let mask = 0u8.wrapping_sub(bit & 1);
    let mut out = [0u8; 32];
    for ((o, &x), &y) in out.iter_mut().zip(a.iter()).zip(b.iter()) {
        *o = x ^ ((x ^ y) & mask);
    }
    out
}

/// Constant-time equality of 32-byte strings: their 64-bit words XORed and
/// ORed together, then one comparison with 0 (`subtle`'s comparison of
/// slices makes a `Choice`, through an optimization barrier, per byte).
pub(crate) fn ct_eq_32(a: &[u8; 32], b: &[u8; 32]) -> Choice {
    let mut acc = 0u64;
    for (x, y) in a.as_chunks::<8>().0.iter().zip(b.as_chunks::<8>().0) {
        acc |= u64::from_le_bytes(*x) ^ u64::from_le_bytes(*y);
    }
    acc.ct_eq(&0)
}

/// Constant-time conditional swap: returns `(a, b)` if `bit == 0`, else `(b, a)`.
pub(crate) fn ct_swap_32(a: &[u8; 32], b: &[u8; 32], bit: u8) -> ([u8; 32], [u8; 32]) {
    (ct_select_32(a, b, bit), ct_select_32(b, a, bit))
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
    fn domains_in_order_and_distinct() {
        for (i, (d, _)) in DOMAINS.iter().enumerate() {
            assert_eq!(*d as usize, i);
        }
        let mut keys: Vec<[u8; 32]> = DOMAINS.iter().map(|(d, _)| *d.key()).collect();
        keys.sort_unstable();
        keys.dedup();
        assert_eq!(keys.len(), DOMAINS.len());
    }

    #[test]
    fn prg_is_deterministic_and_split_invariant() {
        let mut a = Prg::from_seed(&[7; 32]);
        let mut b = Prg::from_seed(&[7; 32]);
        let mut x = vec![0u8; 1000];
        a.fill_bytes(&mut x);
        let mut y = vec![0u8; 1000];
        for chunk in y.chunks_mut(37) {
            b.fill_bytes(chunk);
        }
        assert_eq!(x, y);
        let mut c = Prg::from_seed(&[8; 32]);
        let mut z = vec![0u8; 1000];
        c.fill_bytes(&mut z);
        assert_ne!(x, z);
    }

    /// The stream is AES-128-CTR: key `seed[..16]`, block `i` the encryption
    /// of `u128::from_le_bytes(seed[16..]) + i` in little-endian, whatever
    /// the sizes of the requests (here block by block with `encrypt_block`,
    /// against buffered, bulk and mixed requests, and blocks read in place).
    #[test]
    fn prg_is_aes_ctr() {
        let mut seed = [0u8; 32];
        for (i, b) in seed.iter_mut().enumerate() {
            *b = (i as u8).wrapping_mul(37) ^ 0xa5;
        }
        // A counter about to wrap exercises the carry into the high bytes.
        seed[16..24].fill(0xff);
        let cipher = Aes128::new(GenericArray::from_slice(&seed[..16]));
        let mut ctr = u128::from_le_bytes(seed[16..].try_into().unwrap());
        let mut want = vec![0u8; 16 * 1200];
        for b in want.chunks_exact_mut(16) {
            let mut block = GenericArray::clone_from_slice(&ctr.to_le_bytes());
            cipher.encrypt_block(&mut block);
            b.copy_from_slice(&block);
            ctr = ctr.wrapping_add(1);
        }
        // The generator as constructed (hardware AES where available) and
        // forced onto the `aes` crate.
        let soft = Prg {
            cipher: Cipher::Soft(Box::new(cipher.clone())),
            ..Prg::from_seed(&seed)
        };
        for mut prg in [Prg::from_seed(&seed), soft] {
            let mut got = vec![0u8; want.len()];
            let mut at = 0;
            for len in [
                1, 31, 32, 1, 1024, 4160, 5, 16, 100, 2000, 9, 512, 3, 512, 512,
            ] {
                if len == 512 {
                    // In place, from the buffer.
                    got[at..at + len].copy_from_slice(prg.block::<512>());
                } else {
                    prg.fill_bytes(&mut got[at..at + len]);
                }
                at += len;
            }
            got[at..at + 4096].copy_from_slice(prg.block::<4096>());
            at += 4096;
            for _ in 0..4 {
                got[at..at + 512].copy_from_slice(prg.block::<512>());
                at += 512;
            }
            prg.fill_bytes(&mut got[at..]);
            assert_eq!(got, want);
        }
    }

    /// Equal strings compare equal; a change of any single bit does not.
    #[test]
    fn eq_32() {
        let mut a = [0u8; 32];
        for (i, x) in a.iter_mut().enumerate() {
            *x = (i as u8).wrapping_mul(29) ^ 0x5c;
        }
        assert!(bool::from(ct_eq_32(&a, &a)));
        for bit in 0..256 {
            let mut b = a;
            b[bit / 8] ^= 1 << (bit % 8);
            assert!(!bool::from(ct_eq_32(&a, &b)), "bit {bit}");
            assert!(!bool::from(ct_eq_32(&b, &a)), "bit {bit}");
        }
    }

    #[test]
    fn select_and_swap() {
        let a = [1u8; 32];
        let b = [2u8; 32];
        assert_eq!(ct_select_32(&a, &b, 0), a);
        assert_eq!(ct_select_32(&a, &b, 1), b);
        assert_eq!(ct_swap_32(&a, &b, 1), (b, a));
        assert_eq!(ct_swap_32(&a, &b, 0), (a, b));
    }
}
