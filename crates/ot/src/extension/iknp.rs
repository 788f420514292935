//! IKNP random-OT extension (semi-honest), seeded by 128 base random OTs.
//!
//! ```text
//!  Extension sender (base receiver)          Extension receiver (base sender)
//!  s_i, k_i^{s_i}  <==== 128 base ROTs ====>  k_i^0, k_i^1
//!                                             r random (m bits)
//!                                             t_i = G(k_i^0), u_i = t_i ^ G(k_i^1) ^ r
//!                  <---- u_0 .. u_127 -------
//!  q_i = G(k_i^{s_i}) ^ s_i u_i  (= t_i ^ s_i r)
//!  transpose: q_j = t_j ^ r_j s
//!  x_j0 = H(j, q_j), x_j1 = H(j, q_j ^ s)     x_j = H(j, t_j), choice r_j
//! ```
//!
//! With [`ConsistencyCheck::Kos`] the receiver also proves that it used the
//! same `r` in every row (Keller, Orsini, Scholl, CRYPTO 2015, the check of
//! their Figure 7, made non-interactive with Fiat-Shamir): it extends 256
//! extra sacrificial columns, derives `chi_j = PRG(H(index, u))`, and sends
//! `x = sum r_j chi_j` and `t = sum t_j chi_j` in GF(2^128) with `u`; the
//! sender checks `sum q_j chi_j = t + x s` and aborts otherwise. This makes
//! the extension secure against a malicious receiver.
//!
//! [`ConsistencyCheck::SoftSpoken`] is the row-wise check of SoftSpokenOT
//! (Roy, CRYPTO 2022, ePrint 2022/192, Sec. 4), which the revised ePrint
//! version of KOS15 (2015/546, Fig. 10) gives for IKNP in place of the
//! original check: every row `q_i` (not column) is hashed with the GF(2)-linear
//! universal hash `h(y) = sum_{j<m} chi_j y_j + y_m` over its 128-bit blocks
//! `y_0 .. y_m`, the last block being 128 sacrificial columns that mask the
//! hashed choice vector; the receiver sends `x = h(r)` and every `h(t_i)`,
//! the sender checks `h(q_i) = h(t_i) + s_i x` for every `i`. See
//! [`super::softspoken`] for its guarantees and costs; here it costs 2064
//! bytes and 128 columns (2 KB) per chunk.
//!
//! `G` is AES-128 in counter mode keyed by the base OT output; `H` is built
//! on `pi`, fixed-key AES-128: `H(j, x) = pi(x ^ j) ^ x ^ j` without a
//! consistency check, and the TMMO hash `pi(pi(x) ^ j) ^ pi(x) ^ j` of Guo,
//! Katz, Wang and Yu (IEEE S&P 2020), tweakable circular correlation robust in
//! the ideal-permutation model, with one (a malicious receiver can align the
//! inputs of the first form across OTs; see `OutputHash`). Extensions are
//! done in chunks of [`CHUNK`] OTs, one channel message each; the PRGs and the
//! index `j` continue across chunks and calls, so one setup serves any number
//! of OTs. The outputs are written chunk by chunk into the caller's buffer
//! ([`crate::RotSender::send_random_into`]).

use crate::channel::{split_batch, Channel};
use crate::error::Result;
use crate::error::{AbortReason, Error};
use crate::prg::Domain;
use crate::rlwe::RlweRot;
use crate::{RotReceiver, RotReceiverOutputs, RotSender, RotSenderOutputs};
use aes::cipher::{generic_array::GenericArray, BlockEncrypt, KeyInit};
use aes::Aes128;
use rand_core::CryptoRng;
use std::sync::OnceLock;
use subtle::ConstantTimeEq;
use triskele_field::ctr::{HwAes128, HwAes128Ctr};
use zeroize::Zeroize;

use super::gf128;
use super::transpose::transpose_halves;

/// Security parameter: number of base OTs and bits per extended row.
pub const KAPPA: usize = 128;
/// OTs per channel message.
pub const CHUNK: usize = 1 << 16;

/// Sacrificial columns per chunk for the KOS check (kappa + statistical
/// parameter 64, rounded up to a multiple of 128).
pub const KOS_EXTRA: usize = 256;

/// Sacrificial columns per chunk for [`ConsistencyCheck::SoftSpoken`]: one
/// 128-bit block per row, added to the row hash unmultiplied, so that the
/// hashed choice vector the receiver reveals is uniformly random.
pub const ROW_CHECK_EXTRA: usize = 128;

/// Bytes of a [`ConsistencyCheck::SoftSpoken`] proof per chunk: the hashed
/// choice vector and the 128 hashed rows, 16 bytes each.
pub const ROW_CHECK_PROOF: usize = 16 * (KAPPA + 1);

/// The consistency check run by the extension.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum ConsistencyCheck {
    /// Plain IKNP: secure against a semi-honest receiver.
    #[default]
    None,
    /// The KOS15 check (column-wise, Fiat-Shamir): against a malicious
    /// receiver. IKNP only.
    Kos,
    /// The SoftSpokenOT check (row-wise universal hash, Fiat-Shamir; Roy
    /// 2022, Sec. 4; KOS15 revised, Fig. 10): against a malicious receiver.
    /// IKNP and SoftSpokenOT.
    SoftSpoken,
}

impl ConsistencyCheck {
    /// Sacrificial columns per chunk.
    pub(super) fn extra(self) -> usize {
        match self {
            ConsistencyCheck::None => 0,
            ConsistencyCheck::Kos => KOS_EXTRA,
            ConsistencyCheck::SoftSpoken => ROW_CHECK_EXTRA,
        }
    }

    /// Bytes of the proof appended to each chunk's correction message.
    pub(super) fn proof_len(self) -> usize {
        match self {
            ConsistencyCheck::None => 0,
            ConsistencyCheck::Kos => 32,
            ConsistencyCheck::SoftSpoken => ROW_CHECK_PROOF,
        }
    }
}

fn le128(b: &[u8]) -> u128 {
    let mut x = [0u8; 16];
    x.copy_from_slice(&b[..16]);
    u128::from_le_bytes(x)
}

/// The row-check challenges `chi_0 .. chi_{m-1}` (Fiat-Shamir): AES-CTR keyed
/// by a BLAKE3 hash of `parts` (protocol label, index, correction message).
pub(super) fn row_challenges(parts: &[&[u8]], m: usize) -> Vec<u128> {
    static KEY: OnceLock<[u8; 32]> = OnceLock::new();
    let key = KEY.get_or_init(|| {
        blake3::derive_key("triskele-ot 2026 extension row consistency challenge", b"")
    });
    let mut h = blake3::Hasher::new_keyed(key);
    for p in parts {
        h.update(p);
    }
    let mut prg = crate::prg::Prg::from_seed(h.finalize().as_bytes());
    let mut bytes = vec![0u8; 16 * m];
    prg.fill_bytes(&mut bytes);
    bytes.chunks_exact(16).map(le128).collect()
}

/// The row hash `h(y) = sum_{j<m} chi_j y_j + y_m` in GF(2^128) of a row of
/// `m + 1` little-endian 128-bit blocks (`chi` holds `m` challenges). The
/// row is secret, the challenges public (they select the table entries).
pub(super) fn row_hash(row: &[u8], chi: &[u128], blocks: &mut Vec<u128>) -> u128 {
    blocks.clear();
    blocks.extend(row.chunks_exact(16).map(le128));
    let h = match blocks.split_last() {
        Some((last, body)) => gf128::dot(body, chi) ^ last,
        None => 0,
    };
    blocks.zeroize();
    h
}

/// The receiver's row-check proof, appended to `out`: `h(r)`, then `h(t_i)`
/// for each of the 128 rows of `t_rows`.
pub(super) fn row_proof(
    t_rows: &[u8],
    row_bytes: usize,
    r: &[u8],
    chi: &[u128],
    blocks: &mut Vec<u128>,
    out: &mut Vec<u8>,
) {
    out.extend_from_slice(&row_hash(r, chi, blocks).to_le_bytes());
    for row in t_rows.chunks_exact(row_bytes) {
        out.extend_from_slice(&row_hash(row, chi, blocks).to_le_bytes());
    }
}

/// The sender's row check: whether `h(q_i) = t_i + s_i x` for all 128 rows
/// `q_i` of `q_rows`, with `proof = x || t_0 .. t_127`. No secret-dependent
/// branch: the differences are OR-ed together and compared once.
pub(super) fn row_check(
    q_rows: &[u8],
    row_bytes: usize,
    s: u128,
    chi: &[u128],
    proof: &[u8],
    blocks: &mut Vec<u128>,
) -> subtle::Choice {
    let (x, ts) = proof.split_at(16);
    let x = le128(x);
    let mut diff = 0u128;
    for (i, (row, t)) in q_rows
        .chunks_exact(row_bytes)
        .zip(ts.chunks_exact(16))
        .enumerate()
    {
        let mask = 0u128.wrapping_sub((s >> i) & 1);
        diff |= row_hash(row, chi, blocks) ^ le128(t) ^ (x & mask);
    }
    let ok = diff.to_le_bytes().ct_eq(&[0u8; 16]);
    diff.zeroize();
    ok
}

/// The KOS challenges `chi_j` for a chunk: AES-CTR keyed by `H(index, u)`.
fn kos_challenges(index: u128, u: &[u8], count: usize) -> Vec<u128> {
    let seed = Domain::KosChallenge.hash(&[&index.to_le_bytes(), u]);
    let mut prg = crate::prg::Prg::from_seed(&seed);
    let mut bytes = vec![0u8; 16 * count];
    prg.fill_bytes(&mut bytes);
    bytes
        .chunks_exact(16)
        .map(|c| {
            let mut b = [0u8; 16];
            b.copy_from_slice(c);
            u128::from_le_bytes(b)
        })
        .collect()
}

/// A 16-byte extended OT message.
pub type Block16 = [u8; 16];

pub(super) type AesBlock = GenericArray<u8, aes::cipher::consts::U16>;

/// AES-128-CTR expander for one base OT key: block `j` is `AES_k(c + j)` with `k`, `c` the
/// two halves of the seed (`c` a little-endian counter), on the CPU's AES instructions where
/// it has them (the same stream either way).
pub(super) struct Expander {
    cipher: ExpanderCipher,
    counter: u128,
}

enum ExpanderCipher {
    Hw(HwAes128Ctr),
    Soft(Box<Aes128>),
}

impl Expander {
    pub(super) fn new(seed: &[u8; 32]) -> Self {
        let mut key = [0u8; 16];
        key.copy_from_slice(&seed[..16]);
        let mut nonce = [0u8; 16];
        nonce.copy_from_slice(&seed[16..]);
        let cipher = match HwAes128Ctr::new(&key) {
            Some(hw) => ExpanderCipher::Hw(hw),
            None => ExpanderCipher::Soft(Box::new(Aes128::new(GenericArray::from_slice(&key)))),
        };
        key.zeroize();
        Expander {
            cipher,
            counter: u128::from_le_bytes(nonce),
        }
    }

    /// Fills `out` (a multiple of 16 bytes) with the next output blocks.
    pub(super) fn fill(&mut self, out: &mut [u8]) {
        match &self.cipher {
            ExpanderCipher::Hw(hw) => hw.keystream(self.counter, out),
            ExpanderCipher::Soft(aes) => {
                for (k, o) in out.chunks_exact_mut(16).enumerate() {
                    o.copy_from_slice(&self.counter.wrapping_add(k as u128).to_le_bytes());
                }
                soft_ecb::<false>(aes, out);
            }
        }
        self.counter = self.counter.wrapping_add((out.len() / 16) as u128);
    }

    /// Zeroizes the position (the key is zeroized when the cipher is dropped).
    pub(super) fn wipe_counter(&mut self) {
        self.counter.zeroize();
    }
}

/// `b <- AES_k(b)` (`MMO`: `b <- AES_k(b) ^ b`) for every 16-byte block of `buf`, on the
/// `aes` crate, through a small block buffer that is wiped afterwards.
fn soft_ecb<const MMO: bool>(aes: &Aes128, buf: &mut [u8]) {
    let mut tmp = [AesBlock::default(); 32];
    for c in buf.chunks_mut(16 * tmp.len()) {
        let k = c.len() / 16;
        for (t, b) in tmp.iter_mut().zip(c.chunks_exact(16)) {
            t.copy_from_slice(b);
        }
        aes.encrypt_blocks(&mut tmp[..k]);
        for (t, b) in tmp.iter().zip(c.chunks_exact_mut(16)) {
            for (o, y) in b.iter_mut().zip(t.iter()) {
                *o = if MMO { *o ^ y } else { *y };
            }
        }
    }
    for b in tmp.iter_mut() {
        b.fill(0);
    }
    core::hint::black_box(&mut tmp);
}

/// The fixed permutation `pi` of the output hashes: AES-128 under a fixed public key (on the
/// CPU's AES instructions where it has them).
enum FixedKey {
    Hw(HwAes128),
    Soft(Box<Aes128>),
}

impl FixedKey {
    /// `b <- pi(b)` (`MMO`: `b <- pi(b) ^ b`) for every 16-byte block of `buf`.
    fn apply<const MMO: bool>(&self, buf: &mut [u8]) {
        match self {
            FixedKey::Hw(hw) if MMO => hw.mmo_blocks(buf),
            FixedKey::Hw(hw) => hw.encrypt_blocks(buf),
            FixedKey::Soft(aes) => soft_ecb::<MMO>(aes, buf),
        }
    }
}

fn fixed_key() -> &'static FixedKey {
    static PI: OnceLock<FixedKey> = OnceLock::new();
    PI.get_or_init(|| {
        let k = blake3::derive_key("triskele-ot 2026 iknp fixed-key aes", b"");
        let mut key = [0u8; 16];
        key.copy_from_slice(&k[..16]);
        match HwAes128::new(&key) {
            Some(hw) => FixedKey::Hw(hw),
            None => FixedKey::Soft(Box::new(Aes128::new(GenericArray::from_slice(&key)))),
        }
    })
}

/// The hash `H(j, x)` that turns the extended correlations into OT outputs (`pi` the
/// fixed-key AES-128 of [`fixed_key`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum OutputHash {
    /// `H(j, x) = pi(x ^ j) ^ x ^ j`, the tweaked Matyas-Meyer-Oseas hash: one AES call.
    /// Correlation robust for the random rows of an honest receiver (semi-honest runs).
    Mmo,
    /// `H(j, x) = pi(pi(x) ^ j) ^ pi(x) ^ j`: the TMMO hash of Guo, Katz, Wang and Yu (IEEE
    /// S&P 2020, Sec. 7), tweakable circular correlation robust in the ideal-permutation
    /// model, with the public tweak `j` XORed onto the output as well (which changes
    /// nothing: anyone can remove it). Two AES calls. For the runs with a consistency check:
    /// in the `Mmo` form the tweak and the input only enter as `x ^ j`, so
    /// `H(j, x) = H(k, x ^ j ^ k)`, and a malicious receiver who picks its rows as
    /// `t_k = t_j ^ j ^ k` makes the sender's `M_{j,1}` equal `M_{k,0}` whenever it chose
    /// `r_j = 0`, `r_k = 1`. Here the tweak enters after one application of `pi`.
    Tmmo,
}

impl OutputHash {
    /// The hash a run with consistency check `check` uses.
    pub(super) fn for_check(check: ConsistencyCheck) -> Self {
        match check {
            ConsistencyCheck::None => OutputHash::Mmo,
            ConsistencyCheck::Kos | ConsistencyCheck::SoftSpoken => OutputHash::Tmmo,
        }
    }

    /// The tweak XORed into the input before the first AES call for OT `j`.
    fn input_tweak(self, j: u128) -> u128 {
        match self {
            OutputHash::Mmo => j,
            OutputHash::Tmmo => 0,
        }
    }

    /// Finishes the hashes of OTs `index, index + 1, ...`: `blocks[j]` holds the inputs of
    /// OT `index + j` with [`OutputHash::input_tweak`] applied; afterwards the outputs.
    fn finish<const W: usize>(self, blocks: &mut [[Block16; W]], index: u128) {
        let pi = fixed_key();
        if self == OutputHash::Tmmo {
            pi.apply::<false>(blocks.as_flattened_mut().as_flattened_mut());
            for (j, o) in blocks.iter_mut().enumerate() {
                let t = index.wrapping_add(j as u128);
                for b in o.iter_mut() {
                    *b = (u128::from_le_bytes(*b) ^ t).to_le_bytes();
                }
            }
        }
        pi.apply::<true>(blocks.as_flattened_mut().as_flattened_mut());
    }
}

/// Transposes a `128 x n` bit matrix (row `i` is `rows[i*n/8..]`) into `n`
/// values of 128 bits (bit `i` of value `j` is bit `j` of row `i`).
pub(super) fn transpose_rows(rows: &[u8], n: usize, out: &mut Vec<u128>) {
    let row_bytes = n / 8;
    out.clear();
    let mut lo = [0u64; 128];
    let mut hi = [0u64; 128];
    for c in 0..n / 128 {
        for (i, (l, h)) in lo.iter_mut().zip(hi.iter_mut()).enumerate() {
            let start = i * row_bytes + 16 * c;
            let mut b = [0u8; 8];
            b.copy_from_slice(&rows[start..start + 8]);
            *l = u64::from_le_bytes(b);
            b.copy_from_slice(&rows[start + 8..start + 16]);
            *h = u64::from_le_bytes(b);
        }
        transpose_halves(&mut lo, &mut hi);
        out.extend(
            lo.iter()
                .zip(hi.iter())
                .map(|(l, h)| u128::from(*l) | (u128::from(*h) << 64)),
        );
    }
    lo.zeroize();
    hi.zeroize();
}

/// The sender's outputs `(H(j, q_j), H(j, q_j ^ s))` for the rows `q_j` of `cols`, OT `j`
/// being `index + j`, written into `out` (as long as `cols`).
pub(super) fn sender_outputs(
    cols: &[u128],
    s: u128,
    index: u128,
    hash: OutputHash,
    out: &mut [[Block16; 2]],
) {
    debug_assert_eq!(cols.len(), out.len());
    // In pieces that stay in the first-level cache through every pass of the hash.
    for (p, (out, cols)) in out
        .chunks_mut(HASH_PIECE)
        .zip(cols.chunks(HASH_PIECE))
        .enumerate()
    {
        let index = index.wrapping_add((p * HASH_PIECE) as u128);
        for (j, (o, q)) in out.iter_mut().zip(cols).enumerate() {
            let x = q ^ hash.input_tweak(index.wrapping_add(j as u128));
            o[0] = x.to_le_bytes();
            o[1] = (x ^ s).to_le_bytes();
        }
        hash.finish(out, index);
    }
}

/// OTs per piece of the output hashing.
const HASH_PIECE: usize = 256;

/// The receiver's outputs `H(j, t_j)` for the rows `t_j` of `cols`, OT `j` being
/// `index + j`, written into `out` (as long as `cols`).
pub(super) fn receiver_outputs(cols: &[u128], index: u128, hash: OutputHash, out: &mut [Block16]) {
    debug_assert_eq!(cols.len(), out.len());
    for (p, (out, cols)) in out
        .chunks_mut(HASH_PIECE)
        .zip(cols.chunks(HASH_PIECE))
        .enumerate()
    {
        let index = index.wrapping_add((p * HASH_PIECE) as u128);
        for (j, (o, t)) in out.iter_mut().zip(cols).enumerate() {
            *o = (t ^ hash.input_tweak(index.wrapping_add(j as u128))).to_le_bytes();
        }
        hash.finish(out.as_chunks_mut::<1>().0, index);
    }
}

/// `out[j] = bit j of r` (least significant bit first), for `j < out.len()`.
pub(super) fn unpack_bits(r: &[u8], out: &mut [u8]) {
    for (o, byte) in out.chunks_mut(8).zip(r) {
        for (k, b) in o.iter_mut().enumerate() {
            *b = (byte >> k) & 1;
        }
    }
}

/// The extension sender; obtains `(x_j0, x_j1)`.
pub struct IknpSender<B = RlweRot> {
    base: B,
    check: ConsistencyCheck,
    setup: Option<SenderSetup>,
    index: u128,
}

struct SenderSetup {
    s: u128,
    prgs: Vec<Expander>,
}

impl Drop for SenderSetup {
    fn drop(&mut self) {
        self.s.zeroize();
        for p in self.prgs.iter_mut() {
            p.wipe_counter();
        }
    }
}

/// The extension receiver; obtains a random bit `r_j` and `x_{j r_j}`.
pub struct IknpReceiver<B = RlweRot> {
    base: B,
    check: ConsistencyCheck,
    setup: Option<Vec<[Expander; 2]>>,
    index: u128,
}

impl<B> core::fmt::Debug for IknpSender<B> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        write!(
            f,
            "IknpSender(setup: {}, index: {})",
            self.setup.is_some(),
            self.index
        )
    }
}

impl<B> core::fmt::Debug for IknpReceiver<B> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        write!(
            f,
            "IknpReceiver(setup: {}, index: {})",
            self.setup.is_some(),
            self.index
        )
    }
}

impl<B> IknpSender<B> {
    /// An extension sender whose base OTs come from `base` (as base
    /// receiver), without consistency check.
    pub fn new(base: B) -> Self {
        Self::with_check(base, ConsistencyCheck::None)
    }

    /// An extension sender running `check`.
    pub fn with_check(base: B, check: ConsistencyCheck) -> Self {
        IknpSender {
            base,
            check,
            setup: None,
            index: 0,
        }
    }
}

impl<B> IknpReceiver<B> {
    /// An extension receiver whose base OTs come from `base` (as base
    /// sender), without consistency check.
    pub fn new(base: B) -> Self {
        Self::with_check(base, ConsistencyCheck::None)
    }

    /// An extension receiver running `check`.
    pub fn with_check(base: B, check: ConsistencyCheck) -> Self {
        IknpReceiver {
            base,
            check,
            setup: None,
            index: 0,
        }
    }
}

impl Default for IknpSender<RlweRot> {
    fn default() -> Self {
        IknpSender::new(RlweRot::default())
    }
}

impl Default for IknpReceiver<RlweRot> {
    fn default() -> Self {
        IknpReceiver::new(RlweRot::default())
    }
}

impl<B: RotReceiver<Block = [u8; 32]>> RotSender for IknpSender<B> {
    type Block = Block16;

    fn send_random<C: Channel + ?Sized, R: CryptoRng + ?Sized>(
        &mut self,
        ch: &mut C,
        count: usize,
        rng: &mut R,
    ) -> Result<RotSenderOutputs<Block16>> {
        RotSenderOutputs::filled(count, |out| self.send_random_into(ch, out, rng))
    }

    fn send_random_into<C: Channel + ?Sized, R: CryptoRng + ?Sized>(
        &mut self,
        ch: &mut C,
        out: &mut [[Block16; 2]],
        rng: &mut R,
    ) -> Result<()> {
        let count = out.len();
        if self.setup.is_none() {
            let base = self.base.receive_random(ch, KAPPA, rng)?;
            if base.messages.len() != KAPPA || base.choices.len() != KAPPA {
                return Err(Error::InvalidArgument(
                    "base OT returned the wrong number of OTs",
                ));
            }
            let mut s = 0u128;
            for (i, &c) in base.choices.iter().enumerate() {
                s |= u128::from(c & 1) << i;
            }
            let prgs = base.messages.iter().map(Expander::new).collect();
            self.setup = Some(SenderSetup { s, prgs });
        }
        let Some(setup) = self.setup.as_mut() else {
            return Err(crate::Error::InvalidArgument("IKNP setup missing"));
        };
        let hash = OutputHash::for_check(self.check);
        let mut rows = Vec::new();
        let mut cols = Vec::new();
        let mut blocks = Vec::new();
        let mut done = 0;
        let extra = self.check.extra();
        let proof_len = self.check.proof_len();
        while done < count {
            let n = (count - done).min(CHUNK);
            let padded = n.div_ceil(128) * 128 + extra;
            let row_bytes = padded / 8;
            let msg = ch.recv()?;
            let u_len = KAPPA * row_bytes;
            if msg.len() != u_len + proof_len {
                return Err(Error::LengthMismatch {
                    what: "IKNP correction matrix",
                    expected: u_len + proof_len,
                    got: msg.len(),
                });
            }
            let (u, proof) = msg.split_at(u_len);
            let u_rows = split_batch(u, KAPPA, row_bytes, "IKNP correction matrix")?;
            rows.clear();
            rows.resize(KAPPA * row_bytes, 0u8);
            for (i, (row, u_i)) in rows.chunks_exact_mut(row_bytes).zip(u_rows).enumerate() {
                setup.prgs[i].fill(row);
                // q_i = G(k_i^{s_i}) ^ s_i u_i, with s_i applied as a mask.
                let mask = 0u8.wrapping_sub(((setup.s >> i) & 1) as u8);
                for (q, &x) in row.iter_mut().zip(u_i) {
                    *q ^= x & mask;
                }
            }
            if self.check == ConsistencyCheck::SoftSpoken {
                let idx = self.index.to_le_bytes();
                let chi = row_challenges(&[b"iknp", &idx, u], padded / 128 - 1);
                let ok = row_check(&rows, row_bytes, setup.s, &chi, proof, &mut blocks);
                if !bool::from(ok) {
                    crate::prg::wipe_bytes(&mut rows);
                    return Err(Error::Abort(AbortReason::ConsistencyCheck));
                }
            }
            transpose_rows(&rows, padded, &mut cols);
            if self.check == ConsistencyCheck::Kos {
                let chi = kos_challenges(self.index, u, padded);
                let q = gf128::dot(&cols, &chi);
                let mut xb = [0u8; 16];
                xb.copy_from_slice(&proof[..16]);
                let mut tb = [0u8; 16];
                tb.copy_from_slice(&proof[16..]);
                let x = u128::from_le_bytes(xb);
                let t = u128::from_le_bytes(tb);
                // x is public (sent), s secret: x selects table entries.
                let (lo, hi) = gf128::mul_wide(setup.s, x);
                let expected = t ^ gf128::reduce(lo, hi);
                if !bool::from(q.to_le_bytes().ct_eq(&expected.to_le_bytes())) {
                    crate::prg::wipe_bytes(&mut rows);
                    cols.zeroize();
                    return Err(Error::Abort(AbortReason::ConsistencyCheck));
                }
            }
            let dst = &mut out[done..done + n];
            sender_outputs(&cols[..n], setup.s, self.index, hash, dst);
            self.index += n as u128;
            done += n;
        }
        crate::prg::wipe_bytes(&mut rows);
        cols.zeroize();
        Ok(())
    }
}

impl<B: RotSender<Block = [u8; 32]>> RotReceiver for IknpReceiver<B> {
    type Block = Block16;

    fn receive_random<C: Channel + ?Sized, R: CryptoRng + ?Sized>(
        &mut self,
        ch: &mut C,
        count: usize,
        rng: &mut R,
    ) -> Result<RotReceiverOutputs<Block16>> {
        RotReceiverOutputs::filled(count, |c, out| self.receive_random_into(ch, c, out, rng))
    }

    fn receive_random_into<C: Channel + ?Sized, R: CryptoRng + ?Sized>(
        &mut self,
        ch: &mut C,
        choices: &mut [u8],
        out: &mut [Block16],
        rng: &mut R,
    ) -> Result<()> {
        crate::check_buffers(choices, out)?;
        let count = out.len();
        if self.setup.is_none() {
            let base = self.base.send_random(ch, KAPPA, rng)?;
            if base.messages.len() != KAPPA {
                return Err(Error::InvalidArgument(
                    "base OT returned the wrong number of OTs",
                ));
            }
            let prgs = base
                .messages
                .iter()
                .map(|m| [Expander::new(&m[0]), Expander::new(&m[1])])
                .collect();
            self.setup = Some(prgs);
        }
        let Some(prgs) = self.setup.as_mut() else {
            return Err(crate::Error::InvalidArgument("IKNP setup missing"));
        };
        let hash = OutputHash::for_check(self.check);
        let mut t_rows = Vec::new();
        let mut g1 = Vec::new();
        let mut r = Vec::new();
        let mut cols = Vec::new();
        let mut blocks = Vec::new();
        let mut done = 0;
        let extra = self.check.extra();
        let proof_len = self.check.proof_len();
        while done < count {
            let n = (count - done).min(CHUNK);
            let padded = n.div_ceil(128) * 128 + extra;
            let row_bytes = padded / 8;
            r.clear();
            r.resize(row_bytes, 0u8);
            rng.fill_bytes(&mut r);
            t_rows.clear();
            t_rows.resize(KAPPA * row_bytes, 0u8);
            g1.resize(row_bytes, 0u8);
            let mut u = Vec::with_capacity(KAPPA * row_bytes + proof_len);
            for (row, pair) in t_rows.chunks_exact_mut(row_bytes).zip(prgs.iter_mut()) {
                pair[0].fill(row);
                pair[1].fill(&mut g1);
                u.extend(
                    row.iter()
                        .zip(g1.iter())
                        .zip(r.iter())
                        .map(|((t, g), x)| t ^ g ^ x),
                );
            }
            if self.check == ConsistencyCheck::SoftSpoken {
                let idx = self.index.to_le_bytes();
                let chi = row_challenges(&[b"iknp", &idx, &u], padded / 128 - 1);
                row_proof(&t_rows, row_bytes, &r, &chi, &mut blocks, &mut u);
            }
            transpose_rows(&t_rows, padded, &mut cols);
            if self.check == ConsistencyCheck::Kos {
                let chi = kos_challenges(self.index, &u, padded);
                let mut x = 0u128;
                for (j, c) in chi.iter().enumerate() {
                    let bit = (r[j / 8] >> (j % 8)) & 1;
                    x ^= c & 0u128.wrapping_sub(u128::from(bit));
                }
                let t = gf128::dot(&cols, &chi);
                u.extend_from_slice(&x.to_le_bytes());
                u.extend_from_slice(&t.to_le_bytes());
            }
            ch.send(u)?;
            receiver_outputs(&cols[..n], self.index, hash, &mut out[done..done + n]);
            unpack_bits(&r, &mut choices[done..done + n]);
            self.index += n as u128;
            done += n;
        }
        crate::prg::wipe_bytes(&mut t_rows);
        crate::prg::wipe_bytes(&mut g1);
        crate::prg::wipe_bytes(&mut r);
        cols.zeroize();
        Ok(())
    }
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
    use crate::channel::memory_pair;
    use crate::ideal::IdealRot;
    use rand_chacha::ChaCha20Rng;
    use rand_core::{RngCore, SeedableRng};

    fn check(s: &RotSenderOutputs<Block16>, r: &RotReceiverOutputs<Block16>, n: usize) {
        assert_eq!(s.messages.len(), n);
        assert_eq!(r.messages.len(), n);
        let mut ones = 0;
        for j in 0..n {
            let c = usize::from(r.choices[j]);
            assert_eq!(s.messages[j][c], r.messages[j], "OT {j}");
            assert_ne!(s.messages[j][1 - c], r.messages[j]);
            ones += c;
        }
        if n >= 1000 {
            assert!(ones > n * 45 / 100 && ones < n * 55 / 100);
        }
    }

    #[test]
    fn extension_with_ideal_base_is_correct() {
        let (mut a, mut b) = memory_pair();
        let sizes = [1usize, 127, 128, 129, 5000, CHUNK + 17];
        let t = std::thread::spawn(move || {
            let mut rng = ChaCha20Rng::seed_from_u64(41);
            let mut s = IknpSender::new(IdealRot::<[u8; 32]>::new([3; 32]));
            sizes
                .iter()
                .map(|&n| s.send_random(&mut a, n, &mut rng).unwrap())
                .collect::<Vec<_>>()
        });
        let mut rng = ChaCha20Rng::seed_from_u64(42);
        let mut r = IknpReceiver::new(IdealRot::<[u8; 32]>::new([3; 32]));
        let outs: Vec<_> = sizes
            .iter()
            .map(|&n| r.receive_random(&mut b, n, &mut rng).unwrap())
            .collect();
        let souts = t.join().unwrap();
        for ((s, r), &n) in souts.iter().zip(outs.iter()).zip(sizes.iter()) {
            check(s, r, n);
        }
        // Outputs of different calls are different (the index continues).
        assert_ne!(souts[1].messages[0], souts[0].messages[0]);
    }

    #[test]
    fn extension_with_lattice_base_is_correct() {
        let (mut a, mut b) = memory_pair();
        let t = std::thread::spawn(move || {
            let mut rng = ChaCha20Rng::seed_from_u64(43);
            IknpSender::default()
                .send_random(&mut a, 3000, &mut rng)
                .unwrap()
        });
        let mut rng = ChaCha20Rng::seed_from_u64(44);
        let r = IknpReceiver::default()
            .receive_random(&mut b, 3000, &mut rng)
            .unwrap();
        let s = t.join().unwrap();
        check(&s, &r, 3000);
    }

    #[test]
    fn kos_extension_is_correct() {
        let (mut a, mut b) = memory_pair();
        let sizes = [1usize, 300, CHUNK + 5];
        let t = std::thread::spawn(move || {
            let mut rng = ChaCha20Rng::seed_from_u64(46);
            let mut s =
                IknpSender::with_check(IdealRot::<[u8; 32]>::new([6; 32]), ConsistencyCheck::Kos);
            sizes
                .iter()
                .map(|&n| s.send_random(&mut a, n, &mut rng).unwrap())
                .collect::<Vec<_>>()
        });
        let mut rng = ChaCha20Rng::seed_from_u64(47);
        let mut r =
            IknpReceiver::with_check(IdealRot::<[u8; 32]>::new([6; 32]), ConsistencyCheck::Kos);
        let outs: Vec<_> = sizes
            .iter()
            .map(|&n| r.receive_random(&mut b, n, &mut rng).unwrap())
            .collect();
        let souts = t.join().unwrap();
        for ((s, r), &n) in souts.iter().zip(outs.iter()).zip(sizes.iter()) {
            check(s, r, n);
        }
    }

    /// A channel that flips one bit of the first message it carries at `pos`.
    struct Flip {
        inner: crate::channel::MemoryChannel,
        pos: Option<usize>,
    }
    impl Channel for Flip {
        fn send(&mut self, mut msg: Vec<u8>) -> Result<()> {
            if let Some(p) = self.pos.take() {
                msg[p] ^= 1;
            }
            self.inner.send(msg)
        }
        fn recv(&mut self) -> Result<Vec<u8>> {
            self.inner.recv()
        }
        fn stats(&self) -> crate::ChannelStats {
            self.inner.stats()
        }
    }

    /// An inconsistent correction row (what a receiver using different
    /// choice vectors in different rows sends) or a wrong proof is caught by
    /// the KOS check, while plain IKNP does not notice.
    #[test]
    fn kos_detects_inconsistent_rows() {
        let n: usize = 1000;
        let row_bytes = (n.div_ceil(128) * 128 + KOS_EXTRA) / 8;
        for pos in [
            5,
            40 * row_bytes + 7,
            KAPPA * row_bytes + 3,
            KAPPA * row_bytes + 20,
        ] {
            let (a, b) = memory_pair();
            let mut b = Flip {
                inner: b,
                pos: Some(pos),
            };
            let mut a = a;
            let t = std::thread::spawn(move || {
                let mut rng = ChaCha20Rng::seed_from_u64(48);
                IknpSender::with_check(IdealRot::<[u8; 32]>::new([7; 32]), ConsistencyCheck::Kos)
                    .send_random(&mut a, n, &mut rng)
            });
            let mut rng = ChaCha20Rng::seed_from_u64(49);
            let _ =
                IknpReceiver::with_check(IdealRot::<[u8; 32]>::new([7; 32]), ConsistencyCheck::Kos)
                    .receive_random(&mut b, n, &mut rng)
                    .unwrap();
            assert!(
                matches!(
                    t.join().unwrap(),
                    Err(crate::Error::Abort(AbortReason::ConsistencyCheck))
                ),
                "flip at {pos}"
            );
        }
        // Without the check the same corruption goes unnoticed (wrong outputs).
        let (a, b) = memory_pair();
        let mut b = Flip {
            inner: b,
            pos: Some(5),
        };
        let mut a = a;
        let t = std::thread::spawn(move || {
            let mut rng = ChaCha20Rng::seed_from_u64(48);
            IknpSender::new(IdealRot::<[u8; 32]>::new([7; 32])).send_random(&mut a, n, &mut rng)
        });
        let mut rng = ChaCha20Rng::seed_from_u64(49);
        let _ = IknpReceiver::new(IdealRot::<[u8; 32]>::new([7; 32]))
            .receive_random(&mut b, n, &mut rng)
            .unwrap();
        assert!(t.join().unwrap().is_ok());
    }

    /// IKNP with the SoftSpokenOT row check (KOS15 revised, Fig. 10):
    /// correct, and exactly 128 columns and 2064 bytes more per chunk.
    #[test]
    fn row_check_extension_is_correct() {
        let (mut a, mut b) = memory_pair();
        let sizes = [1usize, 300, CHUNK + 5];
        let mode = ConsistencyCheck::SoftSpoken;
        let t = std::thread::spawn(move || {
            let mut rng = ChaCha20Rng::seed_from_u64(50);
            let mut s = IknpSender::with_check(IdealRot::<[u8; 32]>::new([6; 32]), mode);
            sizes
                .iter()
                .map(|&n| s.send_random(&mut a, n, &mut rng).unwrap())
                .collect::<Vec<_>>()
        });
        let mut rng = ChaCha20Rng::seed_from_u64(51);
        let mut r = IknpReceiver::with_check(IdealRot::<[u8; 32]>::new([6; 32]), mode);
        let outs: Vec<_> = sizes
            .iter()
            .map(|&n| r.receive_random(&mut b, n, &mut rng).unwrap())
            .collect();
        let souts = t.join().unwrap();
        for ((s, r), &n) in souts.iter().zip(outs.iter()).zip(sizes.iter()) {
            check(s, r, n);
        }
        let chunk =
            |n: usize| (KAPPA * (n.div_ceil(128) * 128 + ROW_CHECK_EXTRA) / 8 + 2064) as u64;
        let want = chunk(1) + chunk(300) + chunk(CHUNK) + chunk(5);
        assert_eq!(b.stats().bytes_sent, want);
    }

    /// A changed correction row or proof is caught by the row check.
    #[test]
    fn row_check_detects_inconsistent_rows() {
        let n: usize = 1000;
        let row_bytes = (n.div_ceil(128) * 128 + ROW_CHECK_EXTRA) / 8;
        let check = ConsistencyCheck::SoftSpoken;
        for pos in [
            5,
            40 * row_bytes + 7,
            KAPPA * row_bytes + 3,
            KAPPA * row_bytes + 20,
            KAPPA * row_bytes + ROW_CHECK_PROOF - 1,
        ] {
            let (a, b) = memory_pair();
            let mut b = Flip {
                inner: b,
                pos: Some(pos),
            };
            let mut a = a;
            let t = std::thread::spawn(move || {
                let mut rng = ChaCha20Rng::seed_from_u64(48);
                IknpSender::with_check(IdealRot::<[u8; 32]>::new([7; 32]), check)
                    .send_random(&mut a, n, &mut rng)
            });
            let mut rng = ChaCha20Rng::seed_from_u64(49);
            let _ = IknpReceiver::with_check(IdealRot::<[u8; 32]>::new([7; 32]), check)
                .receive_random(&mut b, n, &mut rng)
                .unwrap();
            assert!(
                matches!(
                    t.join().unwrap(),
                    Err(crate::Error::Abort(AbortReason::ConsistencyCheck))
                ),
                "flip at {pos}"
            );
        }
    }

    #[test]
    fn short_correction_matrix_is_rejected() {
        let (mut a, mut b) = memory_pair();
        let mut rng = ChaCha20Rng::seed_from_u64(45);
        let mut s = IknpSender::new(IdealRot::<[u8; 32]>::new([1; 32]));
        b.send(vec![0u8; 100]).unwrap();
        assert!(matches!(
            s.send_random(&mut a, 128, &mut rng),
            Err(crate::Error::LengthMismatch { .. })
        ));
    }
    /// `pi` by the `aes` crate, one block at a time: the reference for the batched paths.
    fn pi(x: u128) -> u128 {
        let k = blake3::derive_key("triskele-ot 2026 iknp fixed-key aes", b"");
        let aes = Aes128::new(GenericArray::from_slice(&k[..16]));
        let mut b = AesBlock::from(x.to_le_bytes());
        aes.encrypt_block(&mut b);
        u128::from_le_bytes(b.into())
    }

    fn random_u128(rng: &mut ChaCha20Rng) -> u128 {
        let mut b = [0u8; 16];
        rng.fill_bytes(&mut b);
        u128::from_le_bytes(b)
    }

    /// Both output hashes against their definitions, for the sender's pairs and the
    /// receiver's values, on the hardware and the software permutation (batch sizes around
    /// the 16-block and 8-block steps), with an index that wraps around 2^128.
    #[test]
    fn output_hashes_match_their_definitions() {
        let mut rng = ChaCha20Rng::seed_from_u64(45);
        let k = blake3::derive_key("triskele-ot 2026 iknp fixed-key aes", b"");
        let soft = FixedKey::Soft(Box::new(Aes128::new(GenericArray::from_slice(&k[..16]))));
        for n in [1usize, 7, 8, 9, 33, 300] {
            let cols: Vec<u128> = (0..n).map(|_| random_u128(&mut rng)).collect();
            let s = random_u128(&mut rng);
            let index = u128::MAX - 3;
            for hash in [OutputHash::Mmo, OutputHash::Tmmo] {
                let h = |j: usize, x: u128| {
                    let j = index.wrapping_add(j as u128);
                    match hash {
                        OutputHash::Mmo => pi(x ^ j) ^ x ^ j,
                        OutputHash::Tmmo => pi(pi(x) ^ j) ^ pi(x) ^ j,
                    }
                };
                let mut pairs = vec![[[0u8; 16]; 2]; n];
                sender_outputs(&cols, s, index, hash, &mut pairs);
                let mut single = vec![[0u8; 16]; n];
                receiver_outputs(&cols, index, hash, &mut single);
                for j in 0..n {
                    assert_eq!(pairs[j][0], h(j, cols[j]).to_le_bytes(), "{hash:?} {j}");
                    assert_eq!(pairs[j][1], h(j, cols[j] ^ s).to_le_bytes(), "{hash:?} {j}");
                    assert_eq!(single[j], pairs[j][0]);
                }
                // The software permutation gives the same bytes.
                let mut buf: Vec<u8> = cols.iter().flat_map(|c| c.to_le_bytes()).collect();
                let mut want = buf.clone();
                fixed_key().apply::<true>(&mut want);
                soft.apply::<true>(&mut buf);
                assert_eq!(buf, want);
                fixed_key().apply::<false>(&mut want);
                soft.apply::<false>(&mut buf);
                assert_eq!(buf, want);
            }
        }
    }

    /// Why the checked runs use TMMO: with rows `q_k = q_j ^ j ^ k` (which a malicious
    /// receiver can arrange, its own rows being `q` where it chose `r = 0` and `q ^ s` where
    /// it chose `r = 1`), the tweaked MMO hash makes two different OTs share a message, the
    /// TMMO hash does not.
    #[test]
    fn tmmo_separates_outputs_that_mmo_lets_a_receiver_align() {
        let mut rng = ChaCha20Rng::seed_from_u64(46);
        let (s, q) = (random_u128(&mut rng), random_u128(&mut rng));
        let (j, k) = (0u128, 5u128);
        let mut cols = vec![0u128; 6];
        cols[0] = q;
        cols[5] = q ^ j ^ k ^ s;
        for (hash, aligned) in [(OutputHash::Mmo, true), (OutputHash::Tmmo, false)] {
            let mut out = vec![[[0u8; 16]; 2]; 6];
            sender_outputs(&cols, s, 0, hash, &mut out);
            // M_{j,1} = H(j, q ^ s) and M_{k,0} = H(k, q ^ j ^ k ^ s).
            assert_eq!(out[0][1] == out[5][0], aligned, "{hash:?}");
        }
    }

    /// The expander gives AES-CTR blocks `AES_k(c), AES_k(c + 1), ...` across calls of odd
    /// sizes, on whichever cipher it picked, with the counter wrapping around 2^128.
    #[test]
    fn expander_is_aes_ctr_across_calls() {
        let mut seed = [7u8; 32];
        seed[16..].copy_from_slice(&(u128::MAX - 40).to_le_bytes());
        let aes = Aes128::new(GenericArray::from_slice(&seed[..16]));
        let soft = Expander {
            cipher: ExpanderCipher::Soft(Box::new(aes.clone())),
            counter: u128::MAX - 40,
        };
        for mut e in [Expander::new(&seed), soft] {
            let mut counter = u128::MAX - 40;
            for blocks in [1usize, 15, 16, 17, 33] {
                let mut out = vec![0u8; 16 * blocks];
                e.fill(&mut out);
                for b in out.chunks_exact(16) {
                    let mut want = AesBlock::from(counter.to_le_bytes());
                    aes.encrypt_block(&mut want);
                    assert_eq!(b, want.as_slice());
                    counter = counter.wrapping_add(1);
                }
            }
        }
    }

    /// The buffer interface: reused caller buffers give correct OTs call after call; buffers
    /// of different lengths are refused.
    #[test]
    fn outputs_into_caller_buffers() {
        let (mut a, mut b) = memory_pair();
        let sizes = [300usize, 1, CHUNK + 5];
        let t = std::thread::spawn(move || {
            let mut rng = ChaCha20Rng::seed_from_u64(47);
            let mut s = IknpSender::new(IdealRot::<[u8; 32]>::new([4; 32]));
            let mut buf = vec![[[0u8; 16]; 2]; CHUNK + 5];
            let mut outs = Vec::new();
            for n in sizes {
                s.send_random_into(&mut a, &mut buf[..n], &mut rng).unwrap();
                outs.push(buf[..n].to_vec());
            }
            outs
        });
        let mut rng = ChaCha20Rng::seed_from_u64(48);
        let mut r = IknpReceiver::new(IdealRot::<[u8; 32]>::new([4; 32]));
        let mut choices = vec![9u8; CHUNK + 5];
        let mut msgs = vec![[0u8; 16]; CHUNK + 5];
        let mut got = Vec::new();
        for n in sizes {
            r.receive_random_into(&mut b, &mut choices[..n], &mut msgs[..n], &mut rng)
                .unwrap();
            got.push((choices[..n].to_vec(), msgs[..n].to_vec()));
        }
        let sent = t.join().unwrap();
        for ((pairs, (c, m)), n) in sent.iter().zip(&got).zip(sizes) {
            assert_eq!((pairs.len(), c.len(), m.len()), (n, n, n));
            for j in 0..n {
                assert!(c[j] <= 1);
                assert_eq!(pairs[j][usize::from(c[j])], m[j]);
                assert_ne!(pairs[j][usize::from(1 - c[j])], m[j]);
            }
        }
        let (mut a, _b) = memory_pair();
        let mut r = IknpReceiver::new(IdealRot::<[u8; 32]>::new([4; 32]));
        let e = r.receive_random_into(&mut a, &mut [0u8; 3], &mut [[0u8; 16]; 4], &mut rng);
        assert!(matches!(e, Err(Error::InvalidArgument(_))));
    }
}
