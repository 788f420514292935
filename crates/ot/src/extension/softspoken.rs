//! SoftSpokenOT (Roy, "SoftSpokenOT: Quieter OT Extension from Small-Field
//! Silent VOLE in the Minicrypt Model", CRYPTO 2022), semi-honest, random
//! outputs, with `k` bits per block (`k` in 1, 2, 4, 8; default 4).
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
//! Side channels: the sender's secret `alpha` is used only through masks —
//! it expands every leaf (a dummy at `alpha`, whose output is masked out)
//! and fixes the tree with masked selections.

use super::iknp::{
    receiver_outputs, sender_outputs, transpose_rows, AesBlock, Block16, Expander, CHUNK, KAPPA,
};
use crate::channel::{split_batch, Channel};
use crate::error::{Error, Result};
use crate::rlwe::RlweRot;
use crate::{RotReceiver, RotReceiverOutputs, RotSender, RotSenderOutputs};
use aes::cipher::{generic_array::GenericArray, BlockEncrypt, KeyInit};
use aes::Aes128;
use rand_core::CryptoRng;
use std::sync::OnceLock;
use zeroize::Zeroize;

/// The default number of bits per block.
pub const DEFAULT_K: usize = 4;

fn check_k(k: usize) -> Result<()> {
    if matches!(k, 1 | 2 | 4 | 8) {
        Ok(())
    } else {
        Err(Error::InvalidArgument("SoftSpoken k must be 1, 2, 4 or 8"))
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

fn key16(k: &[u8; 32]) -> u128 {
    let mut b = [0u8; 16];
    b.copy_from_slice(&k[..16]);
    u128::from_le_bytes(b)
}

/// The SoftSpoken extension sender; obtains `(x_j0, x_j1)`.
pub struct SoftSpokenSender<B = RlweRot> {
    base: B,
    k: usize,
    setup: Option<SenderSetup>,
    index: u128,
}

struct SenderSetup {
    /// Row `b k + l` of `s` is bit `l` of `alpha_b`.
    s: u128,
    alphas: Vec<usize>,
    leaves: Vec<Vec<Expander>>,
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
    setup: Option<Vec<Vec<Expander>>>,
    index: u128,
}

impl<B> core::fmt::Debug for SoftSpokenSender<B> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        write!(f, "SoftSpokenSender(k: {}, index: {})", self.k, self.index)
    }
}

impl<B> core::fmt::Debug for SoftSpokenReceiver<B> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        write!(
            f,
            "SoftSpokenReceiver(k: {}, index: {})",
            self.k, self.index
        )
    }
}

impl<B> SoftSpokenSender<B> {
    /// A sender with `k` bits per block, base OTs from `base` (as receiver).
    pub fn new(base: B, k: usize) -> Result<Self> {
        check_k(k)?;
        Ok(SoftSpokenSender {
            base,
            k,
            setup: None,
            index: 0,
        })
    }
}

impl<B> SoftSpokenReceiver<B> {
    /// A receiver with `k` bits per block, base OTs from `base` (as sender).
    pub fn new(base: B, k: usize) -> Result<Self> {
        check_k(k)?;
        Ok(SoftSpokenReceiver {
            base,
            k,
            setup: None,
            index: 0,
        })
    }
}

impl Default for SoftSpokenSender<RlweRot> {
    fn default() -> Self {
        SoftSpokenSender {
            base: RlweRot::default(),
            k: DEFAULT_K,
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
            setup: None,
            index: 0,
        }
    }
}

/// Bytes of the receiver's setup message: two 16-byte level sums per base OT.
fn setup_len() -> usize {
    KAPPA * 32
}

impl<B: RotReceiver<Block = [u8; 32]>> SoftSpokenSender<B> {
    fn run_setup<C: Channel + ?Sized, R: CryptoRng + ?Sized>(
        &mut self,
        ch: &mut C,
        rng: &mut R,
    ) -> Result<SenderSetup> {
        let k = self.k;
        let base = self.base.receive_random(ch, KAPPA, rng)?;
        if base.messages.len() != KAPPA || base.choices.len() != KAPPA {
            return Err(Error::InvalidArgument(
                "base OT returned the wrong number of OTs",
            ));
        }
        let msg = ch.recv()?;
        let sums = split_batch(&msg, KAPPA, 32, "SoftSpoken setup")?;
        let sums: Vec<&[u8]> = sums.collect();
        let mut s = 0u128;
        let mut alphas = Vec::with_capacity(KAPPA / k);
        let mut leaves = Vec::with_capacity(KAPPA / k);
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
            alphas.push(path);
            leaves.push(nodes.iter().map(|&x| leaf_expander(x)).collect());
            nodes.zeroize();
        }
        Ok(SenderSetup { s, alphas, leaves })
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
    ) -> Result<Vec<Vec<Expander>>> {
        let k = self.k;
        let base = self.base.send_random(ch, KAPPA, rng)?;
        if base.messages.len() != KAPPA {
            return Err(Error::InvalidArgument(
                "base OT returned the wrong number of OTs",
            ));
        }
        let mut msg = Vec::with_capacity(setup_len());
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
            leaves.push(nodes.iter().map(|&x| leaf_expander(x)).collect());
            nodes.zeroize();
        }
        ch.send(msg)?;
        Ok(leaves)
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

impl<B: RotReceiver<Block = [u8; 32]>> RotSender for SoftSpokenSender<B> {
    type Block = Block16;

    fn send_random<C: Channel + ?Sized, R: CryptoRng + ?Sized>(
        &mut self,
        ch: &mut C,
        count: usize,
        rng: &mut R,
    ) -> Result<RotSenderOutputs<Block16>> {
        if self.setup.is_none() {
            self.setup = Some(self.run_setup(ch, rng)?);
        }
        let k = self.k;
        let Some(setup) = self.setup.as_mut() else {
            return Err(Error::InvalidArgument("SoftSpoken setup missing"));
        };
        let blocks = KAPPA / k;
        let mut messages = Vec::with_capacity(count);
        let mut scratch = Vec::new();
        let mut rows = Vec::new();
        let mut cols = Vec::new();
        let mut r_x = Vec::new();
        let mut done = 0;
        while done < count {
            let n = (count - done).min(CHUNK);
            let padded = n.div_ceil(128) * 128;
            let row_bytes = padded / 8;
            let corr = ch.recv()?;
            let corr: Vec<&[u8]> =
                split_batch(&corr, blocks - 1, row_bytes, "SoftSpoken corrections")?.collect();
            rows.clear();
            rows.resize(KAPPA * row_bytes, 0u8);
            r_x.resize(row_bytes, 0u8);
            for (b, (leaves, &alpha)) in setup.leaves.iter_mut().zip(&setup.alphas).enumerate() {
                let block_rows = &mut rows[b * k * row_bytes..(b + 1) * k * row_bytes];
                for (x, leaf) in leaves.iter_mut().enumerate() {
                    leaf.fill(&mut r_x, &mut scratch);
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
            transpose_rows(&rows, padded, &mut cols);
            sender_outputs(&cols[..n], setup.s, self.index, &mut scratch, &mut messages);
            self.index += n as u128;
            done += n;
        }
        crate::prg::wipe_bytes(&mut rows);
        cols.zeroize();
        crate::prg::wipe_bytes(&mut r_x);
        Ok(RotSenderOutputs { messages })
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
        if self.setup.is_none() {
            self.setup = Some(self.run_setup(ch, rng)?);
        }
        let k = self.k;
        let Some(leaves_all) = self.setup.as_mut() else {
            return Err(Error::InvalidArgument("SoftSpoken setup missing"));
        };
        let blocks = KAPPA / k;
        let mut choices = Vec::with_capacity(count);
        let mut messages = Vec::with_capacity(count);
        let mut scratch = Vec::new();
        let mut rows = Vec::new();
        let mut cols = Vec::new();
        let mut r_x = Vec::new();
        let mut u = Vec::new();
        let mut r = Vec::new();
        let mut done = 0;
        while done < count {
            let n = (count - done).min(CHUNK);
            let padded = n.div_ceil(128) * 128;
            let row_bytes = padded / 8;
            rows.clear();
            rows.resize(KAPPA * row_bytes, 0u8);
            r_x.resize(row_bytes, 0u8);
            let mut corr = Vec::with_capacity((blocks - 1) * row_bytes);
            for (b, leaves) in leaves_all.iter_mut().enumerate() {
                u.clear();
                u.resize(row_bytes, 0u8);
                let block_rows = &mut rows[b * k * row_bytes..(b + 1) * k * row_bytes];
                for (x, leaf) in leaves.iter_mut().enumerate() {
                    leaf.fill(&mut r_x, &mut scratch);
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
            ch.send(corr)?;
            transpose_rows(&rows, padded, &mut cols);
            receiver_outputs(&cols[..n], self.index, &mut scratch, &mut messages);
            choices.extend((0..n).map(|j| (r[j / 8] >> (j % 8)) & 1));
            self.index += n as u128;
            done += n;
        }
        crate::prg::wipe_bytes(&mut rows);
        cols.zeroize();
        crate::prg::wipe_bytes(&mut r_x);
        crate::prg::wipe_bytes(&mut u);
        crate::prg::wipe_bytes(&mut r);
        Ok(RotReceiverOutputs { choices, messages })
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
    use rand_core::SeedableRng;

    fn run(k: usize, sizes: &'static [usize]) {
        let (mut a, mut b) = memory_pair();
        let t = std::thread::spawn(move || {
            let mut rng = ChaCha20Rng::seed_from_u64(81);
            let mut s = SoftSpokenSender::new(IdealRot::<[u8; 32]>::new([9; 32]), k).unwrap();
            let outs: Vec<_> = sizes
                .iter()
                .map(|&n| s.send_random(&mut a, n, &mut rng).unwrap())
                .collect();
            (outs, a.stats())
        });
        let mut rng = ChaCha20Rng::seed_from_u64(82);
        let mut r = SoftSpokenReceiver::new(IdealRot::<[u8; 32]>::new([9; 32]), k).unwrap();
        let routs: Vec<_> = sizes
            .iter()
            .map(|&n| r.receive_random(&mut b, n, &mut rng).unwrap())
            .collect();
        let (souts, _) = t.join().unwrap();
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
        // Receiver traffic: setup + (128/k - 1) bits per padded OT.
        let padded: usize = sizes.iter().map(|n| n.div_ceil(128) * 128).sum();
        let want = (setup_len() + (KAPPA / k - 1) * padded / 8) as u64;
        assert_eq!(b.stats().bytes_sent, want);
    }

    #[test]
    fn correct_for_every_k() {
        for k in [1, 2, 4, 8] {
            run(k, &[1, 500, 4096]);
        }
        run(4, &[CHUNK + 3]);
    }

    #[test]
    fn with_lattice_base() {
        let (mut a, mut b) = memory_pair();
        let t = std::thread::spawn(move || {
            let mut rng = ChaCha20Rng::seed_from_u64(83);
            SoftSpokenSender::default()
                .send_random(&mut a, 2000, &mut rng)
                .unwrap()
        });
        let mut rng = ChaCha20Rng::seed_from_u64(84);
        let r = SoftSpokenReceiver::default()
            .receive_random(&mut b, 2000, &mut rng)
            .unwrap();
        let s = t.join().unwrap();
        for j in 0..2000 {
            assert_eq!(s.messages[j][usize::from(r.choices[j])], r.messages[j]);
        }
    }

    #[test]
    fn bad_k_and_short_messages_are_rejected() {
        assert!(SoftSpokenSender::new(IdealRot::<[u8; 32]>::new([0; 32]), 3).is_err());
        assert!(SoftSpokenReceiver::new(IdealRot::<[u8; 32]>::new([0; 32]), 16).is_err());
        let (mut a, mut b) = memory_pair();
        b.send(vec![0u8; 100]).unwrap();
        let mut rng = ChaCha20Rng::seed_from_u64(85);
        let mut s = SoftSpokenSender::new(IdealRot::<[u8; 32]>::new([0; 32]), 4).unwrap();
        assert!(matches!(
            s.send_random(&mut a, 10, &mut rng),
            Err(Error::LengthMismatch { .. })
        ));
    }
}
