//! SoftSpokenOT (Roy, "SoftSpokenOT: Quieter OT Extension from Small-Field
//! Silent VOLE in the Minicrypt Model", CRYPTO 2022, ePrint 2022/192),
//! random outputs, with `k` bits per block (`k` in 1, 2, 4, 8; default 4);
//! semi-honest by default, secure against a malicious receiver with
//! [`ConsistencyCheck::SoftSpoken`] ([`SoftSpokenSender::with_check`]).
//!
//! The 128 base ROTs (roles reversed, as in IKNP) are grouped into `128/k`
//! blocks of `k`. Per block the extension receiver builds a GGM tree of
//! depth `k` and, through the block's base OTs, lets the sender learn every
//! leaf except one, at a point `alpha` the receiver does not know (an
//! `(2^k - 1)`-out-of-`2^k` OT). Each leaf seeds a PRG; per chunk of OTs the
//! receiver computes `u_b = sum_x r_x` and `V_l = sum_{x: x_l = 1} r_x`, the
//! sender `W_l = sum_{x: x_l != alpha_l} r_x = V_l + alpha_l u_b`: a small-field
//! VOLE. The receiver fixes `r = u_0` and sends `c_b = u_b + r` for the other
//! blocks; after correction all 128 rows satisfy the IKNP relation
//! `q_i = t_i + s_i r`, so transposition and hashing are shared with
//! [`super::iknp`]. Communication is `128/k - 1` bits per OT (IKNP: 128), at
//! the price of `2^k / k` PRG outputs per base OT.
//!
//! # Malicious receiver: the consistency check
//!
//! A malicious receiver can send corrections `c_b` that do not come from one
//! `r` (block `b` then works with its own choice vector `u_b + c_b`), and
//! GGM level sums from which the sender's leaves depend on `alpha`. Either
//! would let it learn both messages of some OTs once it knows part of `s`.
//! [`ConsistencyCheck::SoftSpoken`] adds two checks:
//!
//! * Setup, for the `(2^k - 1)`-out-of-`2^k` OTs behind the small-field
//!   VOLE (paper Sec. 3; the PPRF consistency check of Roy's reference
//!   implementation in libOTe, run there in malicious mode): each leaf `x`
//!   of block `b` is replaced by two random-oracle outputs (BLAKE3), a
//!   commitment `h_x` (32 bytes) and the seed the PRG actually uses. The
//!   receiver appends `sum_x h_x` and `H(b, h_0 .. h_{2^k-1})` per block to
//!   the setup message; the sender rebuilds `h_alpha` from the sum and
//!   recomputes the hash. Its verdict is not acted upon at once but folded
//!   into every chunk check below, so a receiver learns one pass/fail bit,
//!   not two (libOTe notes this as a to-do).
//! * Per chunk, the consistency check of the malicious subspace VOLE (paper
//!   Sec. 4) with the repetition code; for `k = 1` (IKNP) it is the check
//!   that the revised KOS15, ePrint 2015/546, Fig. 10, adopts from
//!   SoftSpokenOT. Each row is hashed with the GF(2)-linear universal hash
//!   `h(y) = sum_{j<m} chi_j y_j + y_m` over its 128-bit blocks, in
//!   GF(2^128), with independent challenges `chi_j` derived by Fiat-Shamir
//!   from the setup transcript, `k`, the chunk index and the corrections.
//!   The chunk gets 128 extra (sacrificial) columns, the block `y_m`, so
//!   that `x = h(r)` is a one-time-padded value. The receiver appends `x`
//!   and `h(t_i)` for the 128 rows to its correction message; the sender
//!   checks `h(q_i) = h(t_i) + s_i x` for every row (mask arithmetic, one
//!   constant-time comparison) and aborts with
//!   [`AbortReason::ConsistencyCheck`] otherwise. Applied bit-plane by
//!   bit-plane, the F_2-linear hash commutes with multiplication by
//!   `alpha_b` in GF(2^k), which is what a check of `W = V + u alpha_b`
//!   needs. (libOTe compresses each block's hashes to about 40 bits; we keep
//!   128 bits per row: 2 KB per chunk buys a 128-bit statistical bound.)
//!
//! # What it guarantees
//!
//! *Against a malicious receiver*, assuming a secure base OT, BLAKE3 as a
//! random oracle and `pi` of the output hash of [`super::iknp`] as an ideal
//! permutation (with the check, outputs use its TMMO hash, which is
//! tweakable circular correlation robust in that model). The paper (Sec. 4) shows the checked subspace VOLE secure up to
//! a selective abort: the corrupt VOLE sender (our receiver) may in effect
//! test a guess about the VOLE receiver's secret `Delta` (our `s`), the run
//! aborting when the guess is wrong, and the OT extension is then built on
//! that leaky VOLE. In this instantiation: a receiver whose effective choice
//! vector of block `b` differs from `r` (`e = u_b + c_b + r != 0`) passes
//! row `i` of that block only if `h(e) = 0` (probability `2^-128` for
//! independent challenges; a Fiat-Shamir grinder with `Q` hash queries wins
//! with `Q 2^-128`) or if it answers `h(t_i) + s_i h(e)`, i.e. guesses
//! `s_i`. As the `k` rows of a block share `u_b`, cheating on block `b`
//! means guessing all `k` bits of `alpha_b`; inconsistent GGM trees
//! likewise pass only for the `alpha_b` in a set the receiver chose (the
//! tests show it: one flipped correction bit is caught when `alpha_b != 0`
//! and accepted, harmlessly, when `alpha_b = 0`). So learning `L` bits of `s` costs the receiver a factor
//! `2^-L` in the probability of not being caught, and the other message of
//! every OT stays hidden behind the `128 - L` bits it does not know:
//! guessing then brute force costs `2^128` work per success (our accounting,
//! the same as for KOS).
//!
//! *Against a malicious sender* the protocol is as secure as the semi-honest
//! one: after the base OTs the sender only receives; `x` is masked by the
//! sacrificial columns and `h(t_i) = h(q_i) + s_i x` tells it nothing new.
//!
//! # Cost (k = 4)
//!
//! * Setup: `(128/k) 64` bytes more (2 KB) and `2^k 128/k` BLAKE3 calls.
//! * Per chunk of up to 65536 OTs: [`ROW_CHECK_PROOF`] = 2064 bytes of proof
//!   and 128 sacrificial columns, `16 (128/k - 1)` = 496 bytes; that is
//!   0.039 bytes per OT in full chunks (3.914 instead of 3.875). No extra
//!   message or round: the proof rides on the correction message.
//! * Computation: 129 (receiver) or 128 (sender) inner products of length
//!   `n/128` in GF(2^128) per chunk, about one carry-less multiplication per
//!   OT and party, as for the KOS check.
//!
//! Side channels: the sender's secret `alpha` is used only through masks —
//! it expands every leaf (a dummy at `alpha`, whose output is masked out),
//! fixes the tree and places the rebuilt commitment `h_alpha` with masked
//! selections, and enters the row check as a mask on `x`.

use super::iknp::{
    receiver_outputs, row_challenges, row_check, row_proof, sender_outputs, transpose_rows,
    unpack_bits, AesBlock, Block16, ConsistencyCheck, Expander, OutputHash, CHUNK, KAPPA,
};
use crate::channel::{split_batch, Channel};
use crate::error::{AbortReason, Error, Result};
use crate::rlwe::RlweRot;
use crate::{RotReceiver, RotReceiverOutputs, RotSender, RotSenderOutputs};
use aes::cipher::{generic_array::GenericArray, BlockEncrypt, KeyInit};
use aes::Aes128;
use rand_core::CryptoRng;
use std::sync::OnceLock;
use subtle::{Choice, ConstantTimeEq};
use zeroize::Zeroize;

pub use super::iknp::ROW_CHECK_PROOF;

/// The default number of bits per block.
pub const DEFAULT_K: usize = 4;

/// Bytes per block of the setup's PPRF consistency proof
/// ([`ConsistencyCheck::SoftSpoken`]): the XOR of the leaves' 32-byte
/// commitments and the 32-byte hash of all of them.
pub const PPRF_PROOF: usize = 64;

fn check_k(k: usize) -> Result<()> {
    if matches!(k, 1 | 2 | 4 | 8) {
        Ok(())
    } else {
        Err(Error::InvalidArgument("SoftSpoken k must be 1, 2, 4 or 8"))
    }
}

fn check_mode(check: ConsistencyCheck) -> Result<()> {
    if matches!(check, ConsistencyCheck::None | ConsistencyCheck::SoftSpoken) {
        Ok(())
    } else {
        Err(Error::InvalidArgument(
            "SoftSpoken runs ConsistencyCheck::None or ConsistencyCheck::SoftSpoken",
        ))
    }
}

/// The GGM tree's length-doubling PRG: `G_c(x) = AES_{k_c}(x) ^ x`.
fn ggm_keys() -> &'static [Aes128; 2] {
    static KEYS: OnceLock<[Aes128; 2]> = OnceLock::new();
    KEYS.get_or_init(|| {
        let k0 = blake3::derive_key("triskele-ot 2026 softspoken ggm left", b"");
        let k1 = blake3::derive_key("triskele-ot 2026 softspoken ggm right", b"");
        [
            Aes128::new(GenericArray::from_slice(&k0[..16])),
            Aes128::new(GenericArray::from_slice(&k1[..16])),
        ]
    })
}

/// Children of every node: `out[2j + c] = G_c(nodes[j])`.
fn expand_level(nodes: &[u128]) -> Vec<u128> {
    let keys = ggm_keys();
    let mut out = vec![0u128; 2 * nodes.len()];
    for (c, key) in keys.iter().enumerate() {
        let mut blocks: Vec<AesBlock> = nodes
            .iter()
            .map(|x| AesBlock::from(x.to_le_bytes()))
            .collect();
        key.encrypt_blocks(&mut blocks);
        for (j, (b, x)) in blocks.iter().zip(nodes).enumerate() {
            let mut o = [0u8; 16];
            o.copy_from_slice(b);
            out[2 * j + c] = u128::from_le_bytes(o) ^ x;
        }
        for b in blocks.iter_mut() {
            b.as_mut_slice().fill(0);
        }
    }
    out
}

fn leaf_expander(leaf: u128) -> Expander {
    let mut seed = [0u8; 32];
    seed[..16].copy_from_slice(&leaf.to_le_bytes());
    let e = Expander::new(&seed);
    seed.zeroize();
    e
}

fn keyed_hasher(key: &'static OnceLock<[u8; 32]>, context: &str) -> blake3::Hasher {
    blake3::Hasher::new_keyed(key.get_or_init(|| blake3::derive_key(context, b"")))
}

/// Malicious mode: leaf `x` of block `b` becomes a commitment `h_x` and the
/// seed its PRG uses, two independent random-oracle outputs.
fn commit_leaf(b: usize, x: usize, leaf: u128) -> ([u8; 32], u128) {
    static KEY: OnceLock<[u8; 32]> = OnceLock::new();
    let mut h = keyed_hasher(&KEY, "triskele-ot 2026 softspoken leaf commitment");
    h.update(&(b as u64).to_le_bytes());
    h.update(&(x as u64).to_le_bytes());
    h.update(&leaf.to_le_bytes());
    let mut out = [0u8; 48];
    h.finalize_xof().fill(&mut out);
    let mut commit = [0u8; 32];
    commit.copy_from_slice(&out[..32]);
    let mut seed = [0u8; 16];
    seed.copy_from_slice(&out[32..]);
    let leaf_seed = u128::from_le_bytes(seed);
    out.zeroize();
    seed.zeroize();
    (commit, leaf_seed)
}

/// `H(b, h_0 .. h_{2^k - 1})`, the hash of a block's leaf commitments.
fn commitments_digest(b: usize, commits: &[[u8; 32]]) -> [u8; 32] {
    static KEY: OnceLock<[u8; 32]> = OnceLock::new();
    let mut h = keyed_hasher(&KEY, "triskele-ot 2026 softspoken leaf digest");
    h.update(&(b as u64).to_le_bytes());
    for c in commits {
        h.update(c);
    }
    *h.finalize().as_bytes()
}

fn key16(k: &[u8; 32]) -> u128 {
    let mut b = [0u8; 16];
    b.copy_from_slice(&k[..16]);
    u128::from_le_bytes(b)
}

/// The SoftSpoken extension sender; obtains `(x_j0, x_j1)`.
pub struct SoftSpokenSender<B = RlweRot> {
    base: B,
    k: usize,
    check: ConsistencyCheck,
    setup: Option<SenderSetup>,
    index: u128,
}

struct SenderSetup {
    /// Row `b k + l` of `s` is bit `l` of `alpha_b`.
    s: u128,
    alphas: Vec<usize>,
    leaves: Vec<Vec<Expander>>,
    /// BLAKE3 of the receiver's setup message (bound into the challenges).
    transcript: [u8; 32],
    /// The verdict of the setup's PPRF check (always true without check).
    setup_ok: Choice,
}

impl Drop for SenderSetup {
    fn drop(&mut self) {
        self.s.zeroize();
        self.alphas.zeroize();
    }
}

/// The SoftSpoken extension receiver; obtains a random bit `r_j` and `x_{j r_j}`.
pub struct SoftSpokenReceiver<B = RlweRot> {
    base: B,
    k: usize,
    check: ConsistencyCheck,
    setup: Option<ReceiverSetup>,
    index: u128,
    #[cfg(test)]
    cheat: Cheat,
}

/// Tests only: a receiver that deviates consistently, flipping bit 0 of a
/// byte of its setup message or of every chunk's corrections *before* it
/// hashes its transcript and computes its proof.
#[cfg(test)]
#[derive(Debug, Default, Clone, Copy)]
struct Cheat {
    setup: Option<usize>,
    corrections: Option<usize>,
}

struct ReceiverSetup {
    leaves: Vec<Vec<Expander>>,
    /// BLAKE3 of the setup message this receiver sent.
    transcript: [u8; 32],
}

impl<B> core::fmt::Debug for SoftSpokenSender<B> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        write!(
            f,
            "SoftSpokenSender(k: {}, check: {:?}, index: {})",
            self.k, self.check, self.index
        )
    }
}

impl<B> core::fmt::Debug for SoftSpokenReceiver<B> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        write!(
            f,
            "SoftSpokenReceiver(k: {}, check: {:?}, index: {})",
            self.k, self.check, self.index
        )
    }
}

impl<B> SoftSpokenSender<B> {
    /// A semi-honest sender with `k` bits per block, base OTs from `base`
    /// (as receiver).
    pub fn new(base: B, k: usize) -> Result<Self> {
        Self::with_check(base, k, ConsistencyCheck::None)
    }

    /// A sender running `check`: [`ConsistencyCheck::SoftSpoken`] (secure
    /// against a malicious receiver) or [`ConsistencyCheck::None`]; other
    /// checks are refused.
    pub fn with_check(base: B, k: usize, check: ConsistencyCheck) -> Result<Self> {
        check_k(k)?;
        check_mode(check)?;
        Ok(SoftSpokenSender {
            base,
            k,
            check,
            setup: None,
            index: 0,
        })
    }
}

impl<B> SoftSpokenReceiver<B> {
    /// A semi-honest receiver with `k` bits per block, base OTs from `base`
    /// (as sender).
    pub fn new(base: B, k: usize) -> Result<Self> {
        Self::with_check(base, k, ConsistencyCheck::None)
    }

    /// A receiver running `check`, which must match the sender's.
    pub fn with_check(base: B, k: usize, check: ConsistencyCheck) -> Result<Self> {
        check_k(k)?;
        check_mode(check)?;
        Ok(SoftSpokenReceiver {
            base,
            k,
            check,
            setup: None,
            index: 0,
            #[cfg(test)]
            cheat: Cheat::default(),
        })
    }
}

impl Default for SoftSpokenSender<RlweRot> {
    fn default() -> Self {
        SoftSpokenSender {
            base: RlweRot::default(),
            k: DEFAULT_K,
            check: ConsistencyCheck::None,
            setup: None,
            index: 0,
        }
    }
}

impl Default for SoftSpokenReceiver<RlweRot> {
    fn default() -> Self {
        SoftSpokenReceiver {
            base: RlweRot::default(),
            k: DEFAULT_K,
            check: ConsistencyCheck::None,
            setup: None,
            index: 0,
            #[cfg(test)]
            cheat: Cheat::default(),
        }
    }
}

/// Bytes of the receiver's setup message: two 16-byte level sums per base
/// OT, plus the PPRF proof per block with the check.
fn setup_len(k: usize, check: ConsistencyCheck) -> usize {
    let proof = if check == ConsistencyCheck::SoftSpoken {
        (KAPPA / k) * PPRF_PROOF
    } else {
        0
    };
    KAPPA * 32 + proof
}

/// An all-ones byte where `x == y`, zero elsewhere, without a branch.
fn eq_mask(x: usize, y: usize) -> u8 {
    0u8.wrapping_sub((x as u64).ct_eq(&(y as u64)).unwrap_u8())
}

impl<B: RotReceiver<Block = [u8; 32]>> SoftSpokenSender<B> {
    fn run_setup<C: Channel + ?Sized, R: CryptoRng + ?Sized>(
        &mut self,
        ch: &mut C,
        rng: &mut R,
    ) -> Result<SenderSetup> {
        let k = self.k;
        let checked = self.check == ConsistencyCheck::SoftSpoken;
        let base = self.base.receive_random(ch, KAPPA, rng)?;
        if base.messages.len() != KAPPA || base.choices.len() != KAPPA {
            return Err(Error::InvalidArgument(
                "base OT returned the wrong number of OTs",
            ));
        }
        let msg = ch.recv()?;
        let expected = setup_len(k, self.check);
        if msg.len() != expected {
            return Err(Error::LengthMismatch {
                what: "SoftSpoken setup",
                expected,
                got: msg.len(),
            });
        }
        let (sums, proofs) = msg.split_at(KAPPA * 32);
        let sums: Vec<&[u8]> = split_batch(sums, KAPPA, 32, "SoftSpoken setup")?.collect();
        let mut s = 0u128;
        let mut alphas = Vec::with_capacity(KAPPA / k);
        let mut leaves = Vec::with_capacity(KAPPA / k);
        let mut setup_ok = Choice::from(1);
        for b in 0..KAPPA / k {
            let mut nodes = vec![0u128]; // the root is unknown: garbage
            let mut path = 0usize; // index of the unknown node (secret)
            for level in 0..k {
                let o = b * k + level;
                let delta = base.choices[o] & 1;
                let pair = sums[o];
                let m0 = key16(&to32(&pair[..16]));
                let m1 = key16(&to32(&pair[16..]));
                let dmask = 0u128.wrapping_sub(u128::from(delta));
                // L^delta = m^delta ^ K^delta.
                let l = (m0 ^ ((m0 ^ m1) & dmask)) ^ key16(&base.messages[o]);
                let mut next = expand_level(&nodes);
                let mut side = [0u128; 2];
                for (j, x) in next.iter().enumerate() {
                    side[j & 1] ^= x;
                }
                let s_delta = side[0] ^ ((side[0] ^ side[1]) & dmask);
                // The sibling of the unknown child: fix it by masked XOR.
                let sibling = 2 * path + usize::from(delta);
                let fix = l ^ s_delta;
                for (j, x) in next.iter_mut().enumerate() {
                    *x ^= fix & 0u128.wrapping_sub(u128::from(j == sibling));
                }
                path = 2 * path + usize::from(1 - delta);
                nodes.zeroize();
                nodes = next;
            }
            for l in 0..k {
                s |= (((path >> l) & 1) as u128) << (b * k + l);
            }
            if checked {
                let proof = &proofs[b * PPRF_PROOF..(b + 1) * PPRF_PROOF];
                let (sum, digest) = proof.split_at(32);
                let mut commits = Vec::with_capacity(nodes.len());
                let mut seeds = Vec::with_capacity(nodes.len());
                // XOR of all commitments, and the dummy one at `path`.
                let mut total = [0u8; 32];
                let mut dummy = [0u8; 32];
                for (x, &leaf) in nodes.iter().enumerate() {
                    let (c, seed) = commit_leaf(b, x, leaf);
                    let m = eq_mask(x, path);
                    for ((t, d), &v) in total.iter_mut().zip(dummy.iter_mut()).zip(&c) {
                        *t ^= v;
                        *d ^= v & m;
                    }
                    commits.push(c);
                    seeds.push(seed);
                }
                // h_alpha = sum ^ (XOR of the others), placed at `path`.
                let mut h_alpha = [0u8; 32];
                for (((h, &a), &t), &d) in h_alpha.iter_mut().zip(sum).zip(&total).zip(&dummy) {
                    *h = a ^ t ^ d;
                }
                for (x, c) in commits.iter_mut().enumerate() {
                    let m = eq_mask(x, path);
                    for (v, &h) in c.iter_mut().zip(&h_alpha) {
                        *v ^= (*v ^ h) & m;
                    }
                }
                setup_ok &= commitments_digest(b, &commits)[..].ct_eq(digest);
                leaves.push(seeds.iter().map(|&x| leaf_expander(x)).collect());
                seeds.zeroize();
                commits.zeroize();
                h_alpha.zeroize();
                dummy.zeroize();
            } else {
                leaves.push(nodes.iter().map(|&x| leaf_expander(x)).collect());
            }
            alphas.push(path);
            nodes.zeroize();
        }
        Ok(SenderSetup {
            s,
            alphas,
            leaves,
            transcript: *blake3::hash(&msg).as_bytes(),
            setup_ok,
        })
    }
}

fn to32(b: &[u8]) -> [u8; 32] {
    let mut o = [0u8; 32];
    o[..b.len()].copy_from_slice(b);
    o
}

impl<B: RotSender<Block = [u8; 32]>> SoftSpokenReceiver<B> {
    fn run_setup<C: Channel + ?Sized, R: CryptoRng + ?Sized>(
        &mut self,
        ch: &mut C,
        rng: &mut R,
    ) -> Result<ReceiverSetup> {
        let k = self.k;
        let checked = self.check == ConsistencyCheck::SoftSpoken;
        let base = self.base.send_random(ch, KAPPA, rng)?;
        if base.messages.len() != KAPPA {
            return Err(Error::InvalidArgument(
                "base OT returned the wrong number of OTs",
            ));
        }
        let mut msg = Vec::with_capacity(setup_len(k, self.check));
        let mut proofs = Vec::new();
        let mut leaves = Vec::with_capacity(KAPPA / k);
        for b in 0..KAPPA / k {
            let mut root = [0u8; 16];
            rng.fill_bytes(&mut root);
            let mut nodes = vec![u128::from_le_bytes(root)];
            root.zeroize();
            for level in 0..k {
                let o = b * k + level;
                let next = expand_level(&nodes);
                let mut side = [0u128; 2];
                for (j, x) in next.iter().enumerate() {
                    side[j & 1] ^= x;
                }
                let [k0, k1] = &base.messages[o];
                msg.extend_from_slice(&(side[0] ^ key16(k0)).to_le_bytes());
                msg.extend_from_slice(&(side[1] ^ key16(k1)).to_le_bytes());
                nodes.zeroize();
                nodes = next;
            }
            if checked {
                let mut sum = [0u8; 32];
                let mut commits = Vec::with_capacity(nodes.len());
                let mut seeds = Vec::with_capacity(nodes.len());
                for (x, &leaf) in nodes.iter().enumerate() {
                    let (c, seed) = commit_leaf(b, x, leaf);
                    for (a, &v) in sum.iter_mut().zip(&c) {
                        *a ^= v;
                    }
                    commits.push(c);
                    seeds.push(seed);
                }
                proofs.extend_from_slice(&sum);
                proofs.extend_from_slice(&commitments_digest(b, &commits));
                leaves.push(seeds.iter().map(|&x| leaf_expander(x)).collect());
                seeds.zeroize();
                commits.zeroize();
            } else {
                leaves.push(nodes.iter().map(|&x| leaf_expander(x)).collect());
            }
            nodes.zeroize();
        }
        msg.extend_from_slice(&proofs);
        #[cfg(test)]
        if let Some(p) = self.cheat.setup {
            msg[p] ^= 1;
        }
        let transcript = *blake3::hash(&msg).as_bytes();
        ch.send(msg)?;
        Ok(ReceiverSetup { leaves, transcript })
    }
}

fn xor_into(acc: &mut [u8], x: &[u8]) {
    for (a, b) in acc.iter_mut().zip(x) {
        *a ^= b;
    }
}

fn xor_masked(acc: &mut [u8], x: &[u8], mask: u8) {
    for (a, b) in acc.iter_mut().zip(x) {
        *a ^= b & mask;
    }
}

/// The row-check challenges of a chunk: bound to the setup transcript, `k`,
/// the chunk's first OT index and its corrections.
fn chunk_challenges(
    k: usize,
    transcript: &[u8; 32],
    index: u128,
    corrections: &[u8],
    padded: usize,
) -> Vec<u128> {
    let k8 = [k as u8];
    let idx = index.to_le_bytes();
    row_challenges(
        &[b"softspoken", &k8, transcript, &idx, corrections],
        padded / 128 - 1,
    )
}

impl<B: RotReceiver<Block = [u8; 32]>> RotSender for SoftSpokenSender<B> {
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
            self.setup = Some(self.run_setup(ch, rng)?);
        }
        let k = self.k;
        let check = self.check;
        let Some(setup) = self.setup.as_mut() else {
            return Err(Error::InvalidArgument("SoftSpoken setup missing"));
        };
        let blocks = KAPPA / k;
        let extra = check.extra();
        let proof_len = check.proof_len();
        let hash = OutputHash::for_check(check);
        let mut rows = Vec::new();
        let mut cols = Vec::new();
        let mut r_x = Vec::new();
        let mut hash_blocks = Vec::new();
        let mut done = 0;
        while done < count {
            let n = (count - done).min(CHUNK);
            let padded = n.div_ceil(128) * 128 + extra;
            let row_bytes = padded / 8;
            let msg = ch.recv()?;
            let corr_len = (blocks - 1) * row_bytes;
            if msg.len() != corr_len + proof_len {
                return Err(Error::LengthMismatch {
                    what: "SoftSpoken corrections",
                    expected: corr_len + proof_len,
                    got: msg.len(),
                });
            }
            let (corr_bytes, proof) = msg.split_at(corr_len);
            let corr: Vec<&[u8]> =
                split_batch(corr_bytes, blocks - 1, row_bytes, "SoftSpoken corrections")?.collect();
            rows.clear();
            rows.resize(KAPPA * row_bytes, 0u8);
            r_x.resize(row_bytes, 0u8);
            for (b, (leaves, &alpha)) in setup.leaves.iter_mut().zip(&setup.alphas).enumerate() {
                let block_rows = &mut rows[b * k * row_bytes..(b + 1) * k * row_bytes];
                for (x, leaf) in leaves.iter_mut().enumerate() {
                    leaf.fill(&mut r_x);
                    for (l, w) in block_rows.chunks_exact_mut(row_bytes).enumerate() {
                        // x_l != alpha_l, as a mask (alpha is secret).
                        let m = 0u8.wrapping_sub((((x ^ alpha) >> l) & 1) as u8);
                        xor_masked(w, &r_x, m);
                    }
                }
                if b > 0 {
                    for (l, w) in block_rows.chunks_exact_mut(row_bytes).enumerate() {
                        let m = 0u8.wrapping_sub(((alpha >> l) & 1) as u8);
                        xor_masked(w, corr[b - 1], m);
                    }
                }
            }
            if check == ConsistencyCheck::SoftSpoken {
                let chi = chunk_challenges(k, &setup.transcript, self.index, corr_bytes, padded);
                let ok = row_check(&rows, row_bytes, setup.s, &chi, proof, &mut hash_blocks)
                    & setup.setup_ok;
                if !bool::from(ok) {
                    crate::prg::wipe_bytes(&mut rows);
                    crate::prg::wipe_bytes(&mut r_x);
                    return Err(Error::Abort(AbortReason::ConsistencyCheck));
                }
            }
            transpose_rows(&rows, padded, &mut cols);
            let dst = &mut out[done..done + n];
            sender_outputs(&cols[..n], setup.s, self.index, hash, dst);
            self.index += n as u128;
            done += n;
        }
        crate::prg::wipe_bytes(&mut rows);
        cols.zeroize();
        crate::prg::wipe_bytes(&mut r_x);
        Ok(())
    }
}

impl<B: RotSender<Block = [u8; 32]>> RotReceiver for SoftSpokenReceiver<B> {
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
            self.setup = Some(self.run_setup(ch, rng)?);
        }
        let k = self.k;
        let check = self.check;
        let Some(setup) = self.setup.as_mut() else {
            return Err(Error::InvalidArgument("SoftSpoken setup missing"));
        };
        let blocks = KAPPA / k;
        let extra = check.extra();
        let proof_len = check.proof_len();
        let hash = OutputHash::for_check(check);
        let mut rows = Vec::new();
        let mut cols = Vec::new();
        let mut r_x = Vec::new();
        let mut u = Vec::new();
        let mut r = Vec::new();
        let mut hash_blocks = Vec::new();
        let mut done = 0;
        while done < count {
            let n = (count - done).min(CHUNK);
            let padded = n.div_ceil(128) * 128 + extra;
            let row_bytes = padded / 8;
            rows.clear();
            rows.resize(KAPPA * row_bytes, 0u8);
            r_x.resize(row_bytes, 0u8);
            let mut corr = Vec::with_capacity((blocks - 1) * row_bytes + proof_len);
            for (b, leaves) in setup.leaves.iter_mut().enumerate() {
                u.clear();
                u.resize(row_bytes, 0u8);
                let block_rows = &mut rows[b * k * row_bytes..(b + 1) * k * row_bytes];
                for (x, leaf) in leaves.iter_mut().enumerate() {
                    leaf.fill(&mut r_x);
                    xor_into(&mut u, &r_x);
                    for (l, v) in block_rows.chunks_exact_mut(row_bytes).enumerate() {
                        if (x >> l) & 1 == 1 {
                            xor_into(v, &r_x);
                        }
                    }
                }
                if b == 0 {
                    r.clone_from(&u);
                } else {
                    corr.extend(u.iter().zip(r.iter()).map(|(a, b)| a ^ b));
                }
            }
            #[cfg(test)]
            if let Some(p) = self.cheat.corrections {
                corr[p] ^= 1;
            }
            if check == ConsistencyCheck::SoftSpoken {
                let chi = chunk_challenges(k, &setup.transcript, self.index, &corr, padded);
                row_proof(&rows, row_bytes, &r, &chi, &mut hash_blocks, &mut corr);
            }
            ch.send(corr)?;
            transpose_rows(&rows, padded, &mut cols);
            receiver_outputs(&cols[..n], self.index, hash, &mut out[done..done + n]);
            unpack_bits(&r, &mut choices[done..done + n]);
            self.index += n as u128;
            done += n;
        }
        crate::prg::wipe_bytes(&mut rows);
        cols.zeroize();
        crate::prg::wipe_bytes(&mut r_x);
        crate::prg::wipe_bytes(&mut u);
        crate::prg::wipe_bytes(&mut r);
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
    use crate::channel::{memory_pair, MemoryChannel};
    use crate::extension::iknp::ROW_CHECK_EXTRA;
    use crate::ideal::IdealRot;
    use rand_chacha::ChaCha20Rng;
    use rand_core::SeedableRng;

    const MAL: ConsistencyCheck = ConsistencyCheck::SoftSpoken;
    const SH: ConsistencyCheck = ConsistencyCheck::None;

    /// Bytes the receiver sends for `sizes` (one call each), base OTs aside.
    fn wire_bytes(k: usize, check: ConsistencyCheck, sizes: &[usize]) -> u64 {
        let mut total = setup_len(k, check);
        for &size in sizes {
            let mut left = size;
            while left > 0 {
                let n = left.min(CHUNK);
                let padded = n.div_ceil(128) * 128 + check.extra();
                total += (KAPPA / k - 1) * padded / 8 + check.proof_len();
                left -= n;
            }
        }
        total as u64
    }

    fn run(k: usize, check: ConsistencyCheck, sizes: &'static [usize]) -> u64 {
        let (mut a, mut b) = memory_pair();
        let t = std::thread::spawn(move || {
            let mut rng = ChaCha20Rng::seed_from_u64(81);
            let mut s =
                SoftSpokenSender::with_check(IdealRot::<[u8; 32]>::new([9; 32]), k, check).unwrap();
            let outs: Vec<_> = sizes
                .iter()
                .map(|&n| s.send_random(&mut a, n, &mut rng).unwrap())
                .collect();
            (outs, a.stats())
        });
        let mut rng = ChaCha20Rng::seed_from_u64(82);
        let mut r =
            SoftSpokenReceiver::with_check(IdealRot::<[u8; 32]>::new([9; 32]), k, check).unwrap();
        let routs: Vec<_> = sizes
            .iter()
            .map(|&n| r.receive_random(&mut b, n, &mut rng).unwrap())
            .collect();
        let (souts, sstats) = t.join().unwrap();
        for ((so, ro), &n) in souts.iter().zip(&routs).zip(sizes) {
            let mut ones = 0;
            for j in 0..n {
                let c = usize::from(ro.choices[j]);
                assert_eq!(so.messages[j][c], ro.messages[j], "k={k} OT {j}");
                assert_ne!(so.messages[j][1 - c], ro.messages[j]);
                ones += c;
            }
            if n >= 1000 {
                assert!(ones > n * 45 / 100 && ones < n * 55 / 100);
            }
        }
        // The sender sends nothing; the receiver exactly the formula.
        assert_eq!(sstats.bytes_sent, 0);
        assert_eq!(b.stats().bytes_sent, wire_bytes(k, check, sizes));
        b.stats().bytes_sent
    }

    #[test]
    fn correct_for_every_k() {
        for k in [1, 2, 4, 8] {
            run(k, SH, &[1, 500, 4096]);
        }
        // Setup + (128/k - 1) bits per padded OT: 4096 + 31 (65536 + 128) / 8.
        assert_eq!(run(4, SH, &[CHUNK + 3]), 4096 + 253_952 + 496);
    }

    #[test]
    fn checked_extension_is_correct_for_every_k() {
        for k in [1, 2, 4, 8] {
            run(k, MAL, &[1, 500, 4096]);
        }
    }

    /// Exact wire cost of the check, k = 4: 2 KB more setup (32 blocks of
    /// 64 bytes); per chunk 128 sacrificial columns (31 rows of 16 bytes)
    /// and the 2064-byte proof.
    #[test]
    fn checked_extension_wire_bytes() {
        assert_eq!(ROW_CHECK_PROOF, 2064);
        assert_eq!(setup_len(4, MAL) - setup_len(4, SH), 2048);
        // 4096 OTs: 6144 setup + 31 * (4096 + 128) / 8 + 2064.
        assert_eq!(wire_bytes(4, MAL, &[4096]), 6144 + 16_368 + 2064);
        assert_eq!(wire_bytes(4, SH, &[4096]), 4096 + 15_872);
        // A full chunk: 256_512 instead of 253_952 bytes, 2560 more, i.e.
        // 0.0390625 bytes per OT (3.9140625 instead of 3.875).
        let full = |c| wire_bytes(4, c, &[CHUNK]) - setup_len(4, c) as u64;
        assert_eq!(full(MAL), 256_512);
        assert_eq!(full(SH), 253_952);
        assert_eq!((full(MAL) - full(SH)) as f64 / CHUNK as f64, 0.0390625);
        assert_eq!(full(MAL) as f64 / CHUNK as f64, 3.9140625);
        // Two chunks, run for real: 6144 + 256_512 + (31 * 32 + 2064).
        assert_eq!(run(4, MAL, &[CHUNK + 3]), 6144 + 256_512 + 3056);
    }

    #[test]
    fn with_lattice_base() {
        for check in [SH, MAL] {
            let (mut a, mut b) = memory_pair();
            let t = std::thread::spawn(move || {
                let mut rng = ChaCha20Rng::seed_from_u64(83);
                SoftSpokenSender::with_check(RlweRot::default(), DEFAULT_K, check)
                    .unwrap()
                    .send_random(&mut a, 2000, &mut rng)
                    .unwrap()
            });
            let mut rng = ChaCha20Rng::seed_from_u64(84);
            let r = SoftSpokenReceiver::with_check(RlweRot::default(), DEFAULT_K, check)
                .unwrap()
                .receive_random(&mut b, 2000, &mut rng)
                .unwrap();
            let s = t.join().unwrap();
            for j in 0..2000 {
                assert_eq!(s.messages[j][usize::from(r.choices[j])], r.messages[j]);
            }
        }
    }

    #[test]
    fn bad_k_check_and_short_messages_are_rejected() {
        assert!(SoftSpokenSender::new(IdealRot::<[u8; 32]>::new([0; 32]), 3).is_err());
        assert!(SoftSpokenReceiver::new(IdealRot::<[u8; 32]>::new([0; 32]), 16).is_err());
        let kos = ConsistencyCheck::Kos;
        assert!(SoftSpokenSender::with_check(IdealRot::<[u8; 32]>::new([0; 32]), 4, kos).is_err());
        assert!(
            SoftSpokenReceiver::with_check(IdealRot::<[u8; 32]>::new([0; 32]), 4, kos).is_err()
        );
        let (mut a, mut b) = memory_pair();
        b.send(vec![0u8; 100]).unwrap();
        let mut rng = ChaCha20Rng::seed_from_u64(85);
        let mut s = SoftSpokenSender::new(IdealRot::<[u8; 32]>::new([0; 32]), 4).unwrap();
        assert!(matches!(
            s.send_random(&mut a, 10, &mut rng),
            Err(Error::LengthMismatch { .. })
        ));
    }

    /// What a cheating channel does to one message of the receiver's.
    #[derive(Clone, Copy, Debug)]
    enum Tamper {
        /// Flip the low bit of this byte.
        Flip(usize),
        /// Drop this many bytes from the end.
        Truncate(usize),
        /// Append one byte.
        Append,
    }

    /// The receiver's channel, tampering with its `target`-th message (with
    /// the ideal base OT, message 0 is the setup, message 1 the first chunk).
    struct Tampering {
        inner: MemoryChannel,
        target: usize,
        sent: usize,
        how: Tamper,
    }

    impl Channel for Tampering {
        fn send(&mut self, mut msg: Vec<u8>) -> Result<()> {
            if self.sent == self.target {
                match self.how {
                    Tamper::Flip(p) => msg[p] ^= 1,
                    Tamper::Truncate(c) => msg.truncate(msg.len() - c),
                    Tamper::Append => msg.push(0),
                }
            }
            self.sent += 1;
            self.inner.send(msg)
        }
        fn recv(&mut self) -> Result<Vec<u8>> {
            self.inner.recv()
        }
        fn stats(&self) -> crate::ChannelStats {
            self.inner.stats()
        }
    }

    const SEED: [u8; 32] = [7; 32];

    /// The sender's base choice bits and its `alpha_b` for the ideal base OT
    /// with [`SEED`] (`alpha_b` is the complement of the block's choices,
    /// first level most significant).
    fn sender_secrets(k: usize) -> (Vec<u8>, Vec<usize>) {
        let (mut a, _b) = memory_pair();
        let mut rng = ChaCha20Rng::seed_from_u64(0);
        let base = IdealRot::<[u8; 32]>::new(SEED)
            .receive_random(&mut a, KAPPA, &mut rng)
            .unwrap();
        let alphas = (0..KAPPA / k)
            .map(|b| (0..k).fold(0, |p, l| 2 * p + usize::from(1 - base.choices[b * k + l])))
            .collect();
        (base.choices.clone(), alphas)
    }

    /// One run of `n` OTs with `check`, the receiver deviating by `cheat`
    /// and its `target`-th message altered in transit by `how`: the sender's
    /// result and (for a completed setup) its `alpha`s. When the sender
    /// accepts, the OTs must still agree.
    fn tampered(
        k: usize,
        check: ConsistencyCheck,
        n: usize,
        cheat: Cheat,
        target: usize,
        how: Option<Tamper>,
    ) -> (Result<()>, Option<Vec<usize>>) {
        let (mut a, b) = memory_pair();
        let t = std::thread::spawn(move || {
            let mut rng = ChaCha20Rng::seed_from_u64(86);
            let mut s =
                SoftSpokenSender::with_check(IdealRot::<[u8; 32]>::new(SEED), k, check).unwrap();
            let out = s.send_random(&mut a, n, &mut rng);
            (out, s.setup.as_ref().map(|x| x.alphas.clone()))
        });
        let mut b = Tampering {
            inner: b,
            target: if how.is_some() { target } else { usize::MAX },
            sent: 0,
            how: how.unwrap_or(Tamper::Append),
        };
        let mut rng = ChaCha20Rng::seed_from_u64(87);
        let mut receiver =
            SoftSpokenReceiver::with_check(IdealRot::<[u8; 32]>::new(SEED), k, check).unwrap();
        receiver.cheat = cheat;
        let r = receiver.receive_random(&mut b, n, &mut rng);
        let (s, alphas) = t.join().unwrap();
        let s = match s {
            Ok(s) => {
                let r = r.unwrap();
                for j in 0..n {
                    assert_eq!(s.messages[j][usize::from(r.choices[j])], r.messages[j]);
                }
                Ok(())
            }
            Err(e) => Err(e),
        };
        (s, alphas)
    }

    fn is_abort(r: &Result<()>) -> bool {
        matches!(r, Err(Error::Abort(AbortReason::ConsistencyCheck)))
    }

    fn flip_corrections(p: usize) -> Cheat {
        Cheat {
            corrections: Some(p),
            ..Cheat::default()
        }
    }

    fn flip_setup(p: usize) -> Cheat {
        Cheat {
            setup: Some(p),
            ..Cheat::default()
        }
    }

    /// A receiver whose choice vector differs in one block (one bit of one
    /// correction `c_b` flipped before it computes its proof, in an output
    /// or a sacrificial column) is caught, for every `k`; so is any change
    /// to the corrections or the proof in transit. Without the check the
    /// same deviation goes through.
    #[test]
    fn inconsistent_corrections_are_caught() {
        let n: usize = 1000;
        for k in [1, 2, 4, 8] {
            let (_, alphas) = sender_secrets(k);
            let row_bytes = (n.div_ceil(128) * 128 + ROW_CHECK_EXTRA) / 8;
            let corr_len = (KAPPA / k - 1) * row_bytes;
            // Corrections exist for blocks 1 ..; take one the sender's secret
            // does not cancel (alpha_b != 0).
            let b = (1..KAPPA / k).find(|&b| alphas[b] != 0).unwrap();
            let output_column = (b - 1) * row_bytes + 3;
            let sacrificial_column = (b - 1) * row_bytes + row_bytes - 1;
            for pos in [output_column, sacrificial_column] {
                let (res, got) = tampered(k, MAL, n, flip_corrections(pos), 0, None);
                assert_eq!(got.as_ref(), Some(&alphas), "k={k}");
                assert!(is_abort(&res), "k={k} flip at {pos}: {res:?}");
            }
            for pos in [
                output_column,
                corr_len,                       // x = h(r)
                corr_len + 16 + 5,              // h(t_0)
                corr_len + ROW_CHECK_PROOF - 1, // h(t_127)
            ] {
                let (res, _) = tampered(k, MAL, n, Cheat::default(), 1, Some(Tamper::Flip(pos)));
                assert!(is_abort(&res), "k={k} flip in transit at {pos}: {res:?}");
            }
            // Semi-honest: the sender accepts (and its block-b rows now use
            // another choice vector; `tampered` would see wrong outputs).
            let pos = (b - 1) * (n.div_ceil(128) * 128 / 8) + 3;
            let (a, s) = memory_pair();
            let t = std::thread::spawn(move || {
                let mut rng = ChaCha20Rng::seed_from_u64(86);
                SoftSpokenSender::new(IdealRot::<[u8; 32]>::new(SEED), k)
                    .unwrap()
                    .send_random(&mut { a }, n, &mut rng)
                    .map(|_| ())
            });
            let mut receiver = SoftSpokenReceiver::new(IdealRot::<[u8; 32]>::new(SEED), k).unwrap();
            receiver.cheat = flip_corrections(pos);
            let mut rng = ChaCha20Rng::seed_from_u64(87);
            receiver.receive_random(&mut { s }, n, &mut rng).unwrap();
            assert!(t.join().unwrap().is_ok());
        }
    }

    /// The selective-failure nature of the check: a deviation in a block
    /// whose `alpha_b` is 0 does not touch the sender's rows, so it is
    /// accepted and harmless (the OTs still agree); the receiver learns that
    /// `alpha_b = 0`, the leakage the paper's analysis accounts for.
    #[test]
    fn deviation_cancelled_by_the_secret_is_harmless() {
        let n: usize = 300;
        let k = 1;
        let (_, alphas) = sender_secrets(k);
        let row_bytes = (n.div_ceil(128) * 128 + ROW_CHECK_EXTRA) / 8;
        let b = (1..KAPPA).find(|&b| alphas[b] == 0).unwrap();
        let cheat = flip_corrections((b - 1) * row_bytes + 2);
        let (res, _) = tampered(k, MAL, n, cheat, 0, None);
        assert!(res.is_ok(), "{res:?}");
    }

    /// Inconsistent GGM trees (a level sum the sender uses altered) and
    /// altered PPRF proofs are caught by the setup check, reported at the
    /// first chunk's check; a change to the half of a level sum the sender
    /// never reads is harmless. Without the check the sender accepts.
    #[test]
    fn inconsistent_trees_are_caught() {
        for k in [1, 4, 8] {
            let (choices, _) = sender_secrets(k);
            let o = k - 1; // the last level of block 0
            let used = 32 * o + 16 * usize::from(choices[o]);
            let unused = 32 * o + 16 * usize::from(1 - choices[o]);
            for pos in [
                used + 4,
                KAPPA * 32 + 1,      // sum of the commitments, block 0
                KAPPA * 32 + 32 + 1, // their hash, block 0
                setup_len(k, MAL) - 1,
            ] {
                let (res, _) = tampered(k, MAL, 200, flip_setup(pos), 0, None);
                assert!(is_abort(&res), "k={k} flip at {pos}: {res:?}");
                let (res, _) = tampered(k, MAL, 200, Cheat::default(), 0, Some(Tamper::Flip(pos)));
                assert!(is_abort(&res), "k={k} flip in transit at {pos}: {res:?}");
            }
            let (res, _) = tampered(k, MAL, 200, flip_setup(unused + 4), 0, None);
            assert!(res.is_ok(), "k={k}: {res:?}");
        }
        let (choices, _) = sender_secrets(4);
        let used = 32 * 3 + 16 * usize::from(choices[3]);
        let (a, b) = memory_pair();
        let t = std::thread::spawn(move || {
            let mut rng = ChaCha20Rng::seed_from_u64(86);
            SoftSpokenSender::new(IdealRot::<[u8; 32]>::new(SEED), 4)
                .unwrap()
                .send_random(&mut { a }, 200, &mut rng)
                .map(|_| ())
        });
        let mut receiver = SoftSpokenReceiver::new(IdealRot::<[u8; 32]>::new(SEED), 4).unwrap();
        receiver.cheat = flip_setup(used + 4);
        let mut rng = ChaCha20Rng::seed_from_u64(87);
        let _ = receiver.receive_random(&mut { b }, 200, &mut rng);
        assert!(t.join().unwrap().is_ok());
    }

    /// Truncated or overlong setup and chunk messages are length errors, as
    /// is a receiver whose mode differs from the sender's.
    #[test]
    fn malformed_check_messages_are_rejected() {
        for (target, how) in [
            (1, Tamper::Truncate(1)),
            (1, Tamper::Truncate(ROW_CHECK_PROOF)),
            (1, Tamper::Append),
            (0, Tamper::Truncate(1)),
            (0, Tamper::Truncate(PPRF_PROOF)),
            (0, Tamper::Append),
        ] {
            let (res, _) = tampered(4, MAL, 500, Cheat::default(), target, Some(how));
            assert!(
                matches!(res, Err(Error::LengthMismatch { .. })),
                "{target} {how:?}: {res:?}"
            );
        }
        // A checking receiver against a semi-honest sender, and vice versa.
        for (sc, rc) in [(SH, MAL), (MAL, SH)] {
            let (mut a, mut b) = memory_pair();
            let t = std::thread::spawn(move || {
                let mut rng = ChaCha20Rng::seed_from_u64(88);
                SoftSpokenSender::with_check(IdealRot::<[u8; 32]>::new(SEED), 4, sc)
                    .unwrap()
                    .send_random(&mut a, 100, &mut rng)
                    .map(|_| ())
            });
            let mut rng = ChaCha20Rng::seed_from_u64(89);
            let _ = SoftSpokenReceiver::with_check(IdealRot::<[u8; 32]>::new(SEED), 4, rc)
                .unwrap()
                .receive_random(&mut b, 100, &mut rng);
            assert!(matches!(
                t.join().unwrap(),
                Err(Error::LengthMismatch { .. })
            ));
        }
    }
}
