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
//! `G` is AES-128 in counter mode keyed by the base OT output; `H(j, x) =
//! pi(x ^ j) ^ x ^ j` with `pi` fixed-key AES-128 (a correlation-robust hash
//! in the ideal-cipher model). Extensions are done in chunks of
//! [`CHUNK`] OTs, one channel message each; the PRGs and the index `j`
//! continue across chunks and calls, so one setup serves any number of OTs.

use crate::channel::{split_batch, Channel};
use crate::error::Result;
use crate::rlwe::RlweRot;
use crate::{RotReceiver, RotReceiverOutputs, RotSender, RotSenderOutputs};
use aes::cipher::{generic_array::GenericArray, BlockEncrypt, KeyInit};
use aes::Aes128;
use rand_core::CryptoRng;
use std::sync::OnceLock;
use zeroize::Zeroize;

use super::transpose::transpose_128;

/// Security parameter: number of base OTs and bits per extended row.
pub const KAPPA: usize = 128;
/// OTs per channel message.
pub const CHUNK: usize = 1 << 16;

/// A 16-byte extended OT message.
pub type Block16 = [u8; 16];

type AesBlock = GenericArray<u8, aes::cipher::consts::U16>;

/// AES-128-CTR expander for one base OT key.
struct Expander {
    cipher: Aes128,
    counter: u128,
}

impl Expander {
    fn new(seed: &[u8; 32]) -> Self {
        let mut nonce = [0u8; 16];
        nonce.copy_from_slice(&seed[16..]);
        Expander {
            cipher: Aes128::new(GenericArray::from_slice(&seed[..16])),
            counter: u128::from_le_bytes(nonce),
        }
    }

    /// Fills `out` (a multiple of 16 bytes) with the next output blocks.
    fn fill(&mut self, out: &mut [u8], scratch: &mut Vec<AesBlock>) {
        scratch.clear();
        for _ in 0..out.len() / 16 {
            scratch.push(AesBlock::from(self.counter.to_le_bytes()));
            self.counter = self.counter.wrapping_add(1);
        }
        self.cipher.encrypt_blocks(scratch);
        for (o, b) in out.chunks_exact_mut(16).zip(scratch.iter()) {
            o.copy_from_slice(b);
        }
    }
}

/// The fixed-key permutation of the correlation-robust hash.
fn fixed_key() -> &'static Aes128 {
    static PI: OnceLock<Aes128> = OnceLock::new();
    PI.get_or_init(|| {
        let k = blake3::derive_key("triskele-ot 2026 iknp fixed-key aes", b"");
        Aes128::new(GenericArray::from_slice(&k[..16]))
    })
}

/// `H(j, x) = pi(x ^ j) ^ x ^ j` for a batch; `inputs` are `x ^ j`.
fn cr_hash(inputs: &[u128], scratch: &mut Vec<AesBlock>, out: &mut Vec<Block16>) {
    scratch.clear();
    scratch.extend(inputs.iter().map(|x| AesBlock::from(x.to_le_bytes())));
    fixed_key().encrypt_blocks(scratch);
    for (b, x) in scratch.iter().zip(inputs) {
        let mut o = [0u8; 16];
        o.copy_from_slice(b);
        let v = u128::from_le_bytes(o) ^ x;
        out.push(v.to_le_bytes());
    }
}

/// Transposes a `128 x n` bit matrix (row `i` is `rows[i*n/8..]`) into `n`
/// values of 128 bits (bit `i` of value `j` is bit `j` of row `i`).
fn transpose_rows(rows: &[u8], n: usize, out: &mut Vec<u128>) {
    let row_bytes = n / 8;
    out.clear();
    let mut tile = [0u128; 128];
    for c in 0..n / 128 {
        for (i, t) in tile.iter_mut().enumerate() {
            let start = i * row_bytes + 16 * c;
            let mut b = [0u8; 16];
            b.copy_from_slice(&rows[start..start + 16]);
            *t = u128::from_le_bytes(b);
        }
        transpose_128(&mut tile);
        out.extend_from_slice(&tile);
    }
    tile.zeroize();
}

/// The extension sender; obtains `(x_j0, x_j1)`.
pub struct IknpSender<B = RlweRot> {
    base: B,
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
            p.counter.zeroize();
        }
    }
}

/// The extension receiver; obtains a random bit `r_j` and `x_{j r_j}`.
pub struct IknpReceiver<B = RlweRot> {
    base: B,
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
    /// An extension sender whose base OTs come from `base` (as base receiver).
    pub fn new(base: B) -> Self {
        IknpSender {
            base,
            setup: None,
            index: 0,
        }
    }
}

impl<B> IknpReceiver<B> {
    /// An extension receiver whose base OTs come from `base` (as base sender).
    pub fn new(base: B) -> Self {
        IknpReceiver {
            base,
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
        if self.setup.is_none() {
            let base = self.base.receive_random(ch, KAPPA, rng)?;
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
        let mut messages = Vec::with_capacity(count);
        let mut scratch = Vec::new();
        let mut rows = Vec::new();
        let mut cols = Vec::new();
        let mut inputs = Vec::new();
        let mut h0 = Vec::new();
        let mut h1 = Vec::new();
        let mut done = 0;
        while done < count {
            let n = (count - done).min(CHUNK);
            let padded = n.div_ceil(128) * 128;
            let row_bytes = padded / 8;
            let u = ch.recv()?;
            let u_rows = split_batch(&u, KAPPA, row_bytes, "IKNP correction matrix")?;
            rows.clear();
            rows.resize(KAPPA * row_bytes, 0u8);
            for (i, (row, u_i)) in rows.chunks_exact_mut(row_bytes).zip(u_rows).enumerate() {
                setup.prgs[i].fill(row, &mut scratch);
                // q_i = G(k_i^{s_i}) ^ s_i u_i, with s_i applied as a mask.
                let mask = 0u8.wrapping_sub(((setup.s >> i) & 1) as u8);
                for (q, &x) in row.iter_mut().zip(u_i) {
                    *q ^= x & mask;
                }
            }
            transpose_rows(&rows, padded, &mut cols);
            inputs.clear();
            h0.clear();
            h1.clear();
            for (j, q) in cols.iter().take(n).enumerate() {
                inputs.push(q ^ (self.index + j as u128));
            }
            cr_hash(&inputs, &mut scratch, &mut h0);
            for x in inputs.iter_mut() {
                *x ^= setup.s;
            }
            cr_hash(&inputs, &mut scratch, &mut h1);
            messages.extend(h0.iter().zip(h1.iter()).map(|(a, b)| [*a, *b]));
            self.index += n as u128;
            done += n;
        }
        rows.zeroize();
        cols.zeroize();
        inputs.zeroize();
        h0.zeroize();
        h1.zeroize();
        Ok(RotSenderOutputs { messages })
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
        if self.setup.is_none() {
            let base = self.base.send_random(ch, KAPPA, rng)?;
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
        let mut choices = Vec::with_capacity(count);
        let mut messages = Vec::with_capacity(count);
        let mut scratch = Vec::new();
        let mut t_rows = Vec::new();
        let mut g1 = Vec::new();
        let mut r = Vec::new();
        let mut cols = Vec::new();
        let mut inputs = Vec::new();
        let mut done = 0;
        while done < count {
            let n = (count - done).min(CHUNK);
            let padded = n.div_ceil(128) * 128;
            let row_bytes = padded / 8;
            r.clear();
            r.resize(row_bytes, 0u8);
            rng.fill_bytes(&mut r);
            t_rows.clear();
            t_rows.resize(KAPPA * row_bytes, 0u8);
            g1.resize(row_bytes, 0u8);
            let mut u = Vec::with_capacity(KAPPA * row_bytes);
            for (row, pair) in t_rows.chunks_exact_mut(row_bytes).zip(prgs.iter_mut()) {
                pair[0].fill(row, &mut scratch);
                pair[1].fill(&mut g1, &mut scratch);
                u.extend(
                    row.iter()
                        .zip(g1.iter())
                        .zip(r.iter())
                        .map(|((t, g), x)| t ^ g ^ x),
                );
            }
            ch.send(u)?;
            transpose_rows(&t_rows, padded, &mut cols);
            inputs.clear();
            for (j, t) in cols.iter().take(n).enumerate() {
                inputs.push(t ^ (self.index + j as u128));
            }
            cr_hash(&inputs, &mut scratch, &mut messages);
            choices.extend((0..n).map(|j| (r[j / 8] >> (j % 8)) & 1));
            self.index += n as u128;
            done += n;
        }
        t_rows.zeroize();
        g1.zeroize();
        r.zeroize();
        cols.zeroize();
        inputs.zeroize();
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
}
