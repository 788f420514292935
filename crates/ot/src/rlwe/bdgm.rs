//! The BDGM19 chosen-message OT from RLWE (Branco, Ding, Goulão, Mateus,
//! "A Framework for Universally Composable Oblivious Transfer from
//! One-Round Key-Exchange", IMACC 2019, instantiated with Ding's RLWE key
//! exchange), as sans-IO state machines with four messages.
//!
//! ```text
//!  Receiver (choice c)                                   Sender (m_0, m_1)
//!  (p, s_R) = keygen; p <- p - c H(seed)
//!              -- Msg1: p, seed ---------------------------->
//!                              (p_S, s_S) = keygen; k_i = (p + i H(seed)) s_S + 2e'
//!                              w_i = Sig(k_i), K_i = Mod2(k_i, w_i)
//!                              T = H(seed, p_S); B_i = H(T, K_i)
//!                              x_0, x_1 random; a_i = x_i ^ H(T, i, B_i)
//!                              l_i = H(T, i, x_i) ^ (x_{1-i} || B_{1-i})
//!              <- Msg2: p_S, w_0, w_1, a_0, a_1, l_0, l_1 ---
//!  K = Mod2(p_S s_R + 2e', w_c); B = H(T, K)
//!  x_c = a_c ^ H(T, c, B); (x', B') = l_c ^ H(T, c, x_c)
//!  check a_{1-c} and l_{1-c} against (x', B') and (x_c, B)
//!              -- Msg3: ch = H(T, x_0, x_1) ------------------>
//!                              check ch
//!              <- Msg4: e_i = m_i ^ H(T, i, K_i) ------------
//!  m_c = e_c ^ H(T, c, K)
//! ```
//!
//! The challenge (decrypting `a_c` and answering with both `x`) is the
//! paper's mechanism that lets a simulator extract the receiver's choice
//! from its random-oracle queries; the link values `l_i` let the receiver
//! check that both branches were built consistently before answering.
//! Every selection by `c` is a masked select or swap.

use super::encode::{pack_poly, unpack_poly, HINT_BYTES, POLY_BYTES};
use super::hash::hash_to_ntt;
use super::reconcile::{extract, signal, Hint, ReconciledKey};
use super::ring::NttPoly;
use super::rot::{check_len, chunk_sizes, to_array, Block32, BATCH_CHUNK};
use super::{keygen, shared_value, KeyPair, NoiseDistribution, SEED_BYTES};
use crate::channel::split_batch;
use crate::error::{AbortReason, Error, Result};
use crate::prg::{ct_select_32, ct_swap_32, Domain, Prg};
use rand_core::CryptoRng;
use subtle::ConstantTimeEq;
use zeroize::Zeroize;

/// Receiver to sender: shifted sample and seed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OtMsg1 {
    /// `a s_R + 2 e_R - c H(seed)`, NTT domain.
    pub p: NttPoly,
    /// Seed of the hashed polynomial.
    pub seed: [u8; SEED_BYTES],
}

/// Sender to receiver: sample, hints, challenge ciphertexts and links.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OtMsg2 {
    /// `a s_S + 2 e_S`, NTT domain.
    pub p: NttPoly,
    /// Reconciliation hints for both branches.
    pub hints: [Hint; 2],
    /// `a_i = x_i xor H(T, i, B_i)`.
    pub challenges: [Block32; 2],
    /// `l_i = H(T, i, x_i) xor (x_{1-i} || B_{1-i})`.
    pub links: [[u8; 64]; 2],
}

/// Receiver to sender: the challenge response.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OtMsg3 {
    /// `H(T, x_0, x_1)`.
    pub response: Block32,
}

/// Sender to receiver: the encrypted messages.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OtMsg4 {
    /// `m_i xor H(T, i, K_i)`.
    pub ciphertexts: [Block32; 2],
}

impl OtMsg1 {
    /// Encoded length (928 bytes).
    pub const LEN: usize = POLY_BYTES + SEED_BYTES;
    /// Appends the encoding.
    pub fn encode(&self, out: &mut Vec<u8>) {
        pack_poly(&self.p, out);
        out.extend_from_slice(&self.seed);
    }
    /// Decodes exactly [`Self::LEN`] bytes.
    pub fn decode(b: &[u8]) -> Result<Self> {
        check_len(b, Self::LEN, "OT message 1")?;
        let (p, seed) = b.split_at(POLY_BYTES);
        Ok(OtMsg1 {
            p: unpack_poly(p, "OT message 1 polynomial")?,
            seed: to_array(seed),
        })
    }
}

impl OtMsg2 {
    /// Encoded length (1216 bytes).
    pub const LEN: usize = POLY_BYTES + 2 * HINT_BYTES + 64 + 128;
    /// Appends the encoding.
    pub fn encode(&self, out: &mut Vec<u8>) {
        pack_poly(&self.p, out);
        out.extend_from_slice(self.hints[0].as_bytes());
        out.extend_from_slice(self.hints[1].as_bytes());
        out.extend_from_slice(&self.challenges[0]);
        out.extend_from_slice(&self.challenges[1]);
        out.extend_from_slice(&self.links[0]);
        out.extend_from_slice(&self.links[1]);
    }
    /// Decodes exactly [`Self::LEN`] bytes.
    pub fn decode(b: &[u8]) -> Result<Self> {
        check_len(b, Self::LEN, "OT message 2")?;
        let (p, rest) = b.split_at(POLY_BYTES);
        let (h0, rest) = rest.split_at(HINT_BYTES);
        let (h1, rest) = rest.split_at(HINT_BYTES);
        let (a0, rest) = rest.split_at(32);
        let (a1, rest) = rest.split_at(32);
        let (l0, l1) = rest.split_at(64);
        Ok(OtMsg2 {
            p: unpack_poly(p, "OT message 2 polynomial")?,
            hints: [
                Hint::from_bytes(&to_array(h0)),
                Hint::from_bytes(&to_array(h1)),
            ],
            challenges: [to_array(a0), to_array(a1)],
            links: [to_array(l0), to_array(l1)],
        })
    }
}

impl OtMsg3 {
    /// Encoded length (32 bytes).
    pub const LEN: usize = 32;
    /// Appends the encoding.
    pub fn encode(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(&self.response);
    }
    /// Decodes exactly [`Self::LEN`] bytes.
    pub fn decode(b: &[u8]) -> Result<Self> {
        check_len(b, Self::LEN, "OT message 3")?;
        Ok(OtMsg3 {
            response: to_array(b),
        })
    }
}

impl OtMsg4 {
    /// Encoded length (64 bytes).
    pub const LEN: usize = 64;
    /// Appends the encoding.
    pub fn encode(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(&self.ciphertexts[0]);
        out.extend_from_slice(&self.ciphertexts[1]);
    }
    /// Decodes exactly [`Self::LEN`] bytes.
    pub fn decode(b: &[u8]) -> Result<Self> {
        check_len(b, Self::LEN, "OT message 4")?;
        let (c0, c1) = b.split_at(32);
        Ok(OtMsg4 {
            ciphertexts: [to_array(c0), to_array(c1)],
        })
    }
}

fn transcript(seed: &[u8; SEED_BYTES], p_s: &NttPoly) -> Block32 {
    let mut packed = Vec::with_capacity(POLY_BYTES);
    pack_poly(p_s, &mut packed);
    Domain::BdgmTranscript.hash(&[seed, &packed])
}

fn branch_key(t: &Block32, k: &ReconciledKey) -> Block32 {
    Domain::BdgmBranchKey.hash(&[t, k.as_bytes()])
}

fn pad(t: &Block32, i: u8, b: &Block32) -> Block32 {
    Domain::BdgmPad.hash(&[t, &[i], b])
}

fn link(t: &Block32, i: u8, x: &Block32) -> [u8; 64] {
    let mut h = Domain::BdgmLink.hasher();
    h.update(t);
    h.update(&[i]);
    h.update(x);
    let mut out = [0u8; 64];
    h.finalize_xof().fill(&mut out);
    out
}

fn encryption_pad(t: &Block32, i: u8, k: &ReconciledKey) -> Block32 {
    Domain::BdgmEncrypt.hash(&[t, &[i], k.as_bytes()])
}

fn xor32(a: &Block32, b: &Block32) -> Block32 {
    let mut o = [0u8; 32];
    for ((o, x), y) in o.iter_mut().zip(a).zip(b) {
        *o = x ^ y;
    }
    o
}

fn xor64(a: &[u8; 64], b: &[u8; 64]) -> [u8; 64] {
    let mut o = [0u8; 64];
    for ((o, x), y) in o.iter_mut().zip(a).zip(b) {
        *o = x ^ y;
    }
    o
}

fn concat(x: &Block32, b: &Block32) -> [u8; 64] {
    let mut o = [0u8; 64];
    o[..32].copy_from_slice(x);
    o[32..].copy_from_slice(b);
    o
}

fn select64(a: &[u8; 64], b: &[u8; 64], bit: u8) -> [u8; 64] {
    let mask = 0u8.wrapping_sub(bit & 1);
    let mut o = [0u8; 64];
    for ((o, &x), &y) in o.iter_mut().zip(a).zip(b) {
        *o = x ^ ((x ^ y) & mask);
    }
    o
}

/// The receiver after message 1.
pub struct OtReceiverRound1 {
    choice: u8,
    keys: KeyPair,
    seed: [u8; SEED_BYTES],
}

/// The receiver after message 3.
pub struct OtReceiverRound2 {
    choice: u8,
    key: ReconciledKey,
    transcript: Block32,
}

/// The sender after message 2.
pub struct OtSenderRound1 {
    keys: [ReconciledKey; 2],
    transcript: Block32,
    expected: Block32,
}

macro_rules! opaque_debug_and_drop {
    ($t:ty, $($field:ident),*) => {
        impl core::fmt::Debug for $t {
            fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
                f.write_str(stringify!($t))
            }
        }
        impl Drop for $t {
            fn drop(&mut self) {
                $(self.$field.zeroize();)*
            }
        }
    };
}
opaque_debug_and_drop!(OtReceiverRound1, choice);
opaque_debug_and_drop!(OtReceiverRound2, choice, transcript);
opaque_debug_and_drop!(OtSenderRound1, transcript, expected);

/// Receiver, round 1, with choice bit `choice` (0 or 1).
pub fn receiver_round1<R: CryptoRng + ?Sized>(
    noise: NoiseDistribution,
    rng: &mut R,
    choice: u8,
) -> (OtReceiverRound1, OtMsg1) {
    let choice = choice & 1;
    let mut prg = Prg::from_rng(rng);
    let seed = prg.gen_32();
    let (p, keys) = keygen(noise, &mut prg);
    let h = hash_to_ntt(Domain::HashToPoly, &seed);
    let p = p.sub_masked(&h, choice);
    (OtReceiverRound1 { choice, keys, seed }, OtMsg1 { p, seed })
}

/// Sender, round 1: answers message 1.
pub fn sender_round1<R: CryptoRng + ?Sized>(
    noise: NoiseDistribution,
    rng: &mut R,
    msg: &OtMsg1,
) -> (OtSenderRound1, OtMsg2) {
    let mut prg = Prg::from_rng(rng);
    let (p, keys) = keygen(noise, &mut prg);
    let h = hash_to_ntt(Domain::HashToPoly, &msg.seed);
    let k0 = shared_value(&msg.p, &keys);
    let k1 = shared_value(&msg.p.add(&h), &keys);
    let hints = [signal(&k0), signal(&k1)];
    let rkeys = [extract(&k0, &hints[0]), extract(&k1, &hints[1])];
    let t = transcript(&msg.seed, &p);
    let mut b = [branch_key(&t, &rkeys[0]), branch_key(&t, &rkeys[1])];
    let mut x = [prg.gen_32(), prg.gen_32()];
    let challenges = [
        xor32(&x[0], &pad(&t, 0, &b[0])),
        xor32(&x[1], &pad(&t, 1, &b[1])),
    ];
    let links = [
        xor64(&link(&t, 0, &x[0]), &concat(&x[1], &b[1])),
        xor64(&link(&t, 1, &x[1]), &concat(&x[0], &b[0])),
    ];
    let expected = Domain::BdgmChallenge.hash(&[&t, &x[0], &x[1]]);
    x.zeroize();
    b.zeroize();
    let state = OtSenderRound1 {
        keys: rkeys,
        transcript: t,
        expected,
    };
    let reply = OtMsg2 {
        p,
        hints,
        challenges,
        links,
    };
    (state, reply)
}

impl OtReceiverRound1 {
    /// Receiver, round 2: recovers the challenge, checks both branches and
    /// answers.
    pub fn round2(self, msg: &OtMsg2) -> Result<(OtReceiverRound2, OtMsg3)> {
        let c = self.choice;
        let k = shared_value(&msg.p, &self.keys);
        let key = extract(&k, &Hint::select(&msg.hints[0], &msg.hints[1], c));
        let t = transcript(&self.seed, &msg.p);
        let b = branch_key(&t, &key);
        let a_c = ct_select_32(&msg.challenges[0], &msg.challenges[1], c);
        let a_o = ct_select_32(&msg.challenges[1], &msg.challenges[0], c);
        let l_c = select64(&msg.links[0], &msg.links[1], c);
        let l_o = select64(&msg.links[1], &msg.links[0], c);
        let mut x_c = xor32(&a_c, &pad(&t, c, &b));
        let mut other = xor64(&l_c, &link(&t, c, &x_c));
        let mut x_o: Block32 = to_array(&other[..32]);
        let mut b_o: Block32 = to_array(&other[32..]);
        // Both branches must be consistent with what we recovered.
        let ok_a = a_o.ct_eq(&xor32(&x_o, &pad(&t, 1 - c, &b_o)));
        let ok_l = l_o.ct_eq(&xor64(&link(&t, 1 - c, &x_o), &concat(&x_c, &b)));
        if !bool::from(ok_a & ok_l) {
            return Err(Error::Abort(AbortReason::InconsistentBranches));
        }
        let (x0, x1) = ct_swap_32(&x_c, &x_o, c);
        let response = Domain::BdgmChallenge.hash(&[&t, &x0, &x1]);
        x_c.zeroize();
        x_o.zeroize();
        b_o.zeroize();
        other.zeroize();
        let state = OtReceiverRound2 {
            choice: c,
            key,
            transcript: t,
        };
        Ok((state, OtMsg3 { response }))
    }
}

impl OtSenderRound1 {
    /// Sender, round 2: checks the response and encrypts `m_0, m_1`.
    pub fn round2(self, msg: &OtMsg3, messages: &[Block32; 2]) -> Result<OtMsg4> {
        if !bool::from(msg.response.ct_eq(&self.expected)) {
            return Err(Error::Abort(AbortReason::ChallengeResponse));
        }
        let t = &self.transcript;
        let ciphertexts = [
            xor32(&messages[0], &encryption_pad(t, 0, &self.keys[0])),
            xor32(&messages[1], &encryption_pad(t, 1, &self.keys[1])),
        ];
        Ok(OtMsg4 { ciphertexts })
    }
}

impl OtReceiverRound2 {
    /// Receiver, finish: decrypts `m_c`.
    pub fn finish(self, msg: &OtMsg4) -> Block32 {
        let e = ct_select_32(&msg.ciphertexts[0], &msg.ciphertexts[1], self.choice);
        xor32(
            &e,
            &encryption_pad(&self.transcript, self.choice, &self.key),
        )
    }
}

/// The BDGM19 OT as a batch protocol over a [`crate::Channel`]; each round
/// travels in chunks of [`super::rot::BATCH_CHUNK`] instances so that both
/// parties compute in parallel.
#[derive(Debug, Clone, Copy, Default)]
pub struct RlweOt {
    /// Noise distribution for secrets and errors.
    pub noise: NoiseDistribution,
}

impl crate::OtSender for RlweOt {
    type Block = Block32;

    fn send<C: crate::Channel + ?Sized, R: CryptoRng + ?Sized>(
        &mut self,
        ch: &mut C,
        messages: &[[Block32; 2]],
        rng: &mut R,
    ) -> Result<()> {
        let count = messages.len();
        let mut states = Vec::with_capacity(count);
        for n in chunk_sizes(count) {
            let bytes = ch.recv()?;
            let mut out = Vec::with_capacity(n * OtMsg2::LEN);
            for chunk in split_batch(&bytes, n, OtMsg1::LEN, "OT message 1 batch")? {
                let (state, m2) = sender_round1(self.noise, rng, &OtMsg1::decode(chunk)?);
                m2.encode(&mut out);
                states.push(state);
            }
            ch.send(out)?;
        }
        let mut states = states.into_iter();
        let mut pairs = messages.iter();
        for n in chunk_sizes(count) {
            let bytes = ch.recv()?;
            let mut out = Vec::with_capacity(n * OtMsg4::LEN);
            for ((chunk, state), m) in split_batch(&bytes, n, OtMsg3::LEN, "OT message 3 batch")?
                .zip(states.by_ref())
                .zip(pairs.by_ref())
            {
                state.round2(&OtMsg3::decode(chunk)?, m)?.encode(&mut out);
            }
            ch.send(out)?;
        }
        Ok(())
    }
}

impl crate::OtReceiver for RlweOt {
    type Block = Block32;

    fn receive<C: crate::Channel + ?Sized, R: CryptoRng + ?Sized>(
        &mut self,
        ch: &mut C,
        choices: &[u8],
        rng: &mut R,
    ) -> Result<Vec<Block32>> {
        crate::check_choices(choices)?;
        let count = choices.len();
        let mut states = Vec::with_capacity(count);
        for (k, n) in chunk_sizes(count).enumerate() {
            let mut out = Vec::with_capacity(n * OtMsg1::LEN);
            for &c in &choices[k * BATCH_CHUNK..k * BATCH_CHUNK + n] {
                let (state, m1) = receiver_round1(self.noise, rng, c);
                m1.encode(&mut out);
                states.push(state);
            }
            ch.send(out)?;
        }
        let mut next = Vec::with_capacity(count);
        let mut states = states.into_iter();
        for n in chunk_sizes(count) {
            let bytes = ch.recv()?;
            let mut out = Vec::with_capacity(n * OtMsg3::LEN);
            for (chunk, state) in
                split_batch(&bytes, n, OtMsg2::LEN, "OT message 2 batch")?.zip(states.by_ref())
            {
                let (state, m3) = state.round2(&OtMsg2::decode(chunk)?)?;
                m3.encode(&mut out);
                next.push(state);
            }
            ch.send(out)?;
        }
        let mut result = Vec::with_capacity(count);
        let mut next = next.into_iter();
        for n in chunk_sizes(count) {
            let bytes = ch.recv()?;
            for (chunk, state) in
                split_batch(&bytes, n, OtMsg4::LEN, "OT message 4 batch")?.zip(next.by_ref())
            {
                result.push(state.finish(&OtMsg4::decode(chunk)?));
            }
        }
        Ok(result)
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
    use rand_chacha::ChaCha20Rng;
    use rand_core::{RngCore, SeedableRng};

    fn enc(f: impl FnOnce(&mut Vec<u8>)) -> Vec<u8> {
        let mut v = Vec::new();
        f(&mut v);
        v
    }

    #[test]
    fn thousands_of_transfers() {
        let noise = NoiseDistribution::default();
        let mut rng = ChaCha20Rng::seed_from_u64(11);
        for i in 0..2000u32 {
            let c = (i % 2) as u8 ^ (i / 7 % 2) as u8;
            let mut m = [[0u8; 32]; 2];
            rng.fill_bytes(&mut m[0]);
            rng.fill_bytes(&mut m[1]);
            let (r1, m1) = receiver_round1(noise, &mut rng, c);
            let m1 = OtMsg1::decode(&enc(|o| m1.encode(o))).unwrap();
            let (s1, m2) = sender_round1(noise, &mut rng, &m1);
            let m2 = OtMsg2::decode(&enc(|o| m2.encode(o))).unwrap();
            let (r2, m3) = r1.round2(&m2).unwrap();
            let m3 = OtMsg3::decode(&enc(|o| m3.encode(o))).unwrap();
            let m4 = s1.round2(&m3, &m).unwrap();
            let m4 = OtMsg4::decode(&enc(|o| m4.encode(o))).unwrap();
            let got = r2.finish(&m4);
            assert_eq!(got, m[usize::from(c)], "transfer {i}");
            assert_ne!(got, m[usize::from(1 - c)]);
        }
    }

    #[test]
    fn lengths_and_rejections() {
        assert_eq!(OtMsg1::LEN + OtMsg2::LEN + OtMsg3::LEN + OtMsg4::LEN, 2240);
        assert!(OtMsg1::decode(&[0u8; OtMsg1::LEN - 1]).is_err());
        assert!(OtMsg2::decode(&[0u8; OtMsg2::LEN + 1]).is_err());
        assert!(OtMsg3::decode(&[]).is_err());
        assert!(OtMsg4::decode(&[0u8; 63]).is_err());
        assert!(matches!(
            OtMsg1::decode(&[0xffu8; OtMsg1::LEN]),
            Err(Error::CoefficientOutOfRange { .. })
        ));
    }

    #[test]
    fn tampering_aborts() {
        let noise = NoiseDistribution::default();
        let mut rng = ChaCha20Rng::seed_from_u64(12);
        for c in 0..2u8 {
            // Corrupting the other branch's challenge is detected by both choices.
            let (r1, m1) = receiver_round1(noise, &mut rng, c);
            let (_s1, mut m2) = sender_round1(noise, &mut rng, &m1);
            m2.challenges[0][0] ^= 1;
            assert!(matches!(
                r1.round2(&m2),
                Err(Error::Abort(AbortReason::InconsistentBranches))
            ));
            let (r1, m1) = receiver_round1(noise, &mut rng, c);
            let (_s1, mut m2) = sender_round1(noise, &mut rng, &m1);
            m2.links[1][40] ^= 1;
            assert!(matches!(
                r1.round2(&m2),
                Err(Error::Abort(AbortReason::InconsistentBranches))
            ));
            // A wrong response makes the sender abort.
            let (r1, m1) = receiver_round1(noise, &mut rng, c);
            let (s1, m2) = sender_round1(noise, &mut rng, &m1);
            let (_r2, mut m3) = r1.round2(&m2).unwrap();
            m3.response[31] ^= 1;
            assert!(matches!(
                s1.round2(&m3, &[[1; 32], [2; 32]]),
                Err(Error::Abort(AbortReason::ChallengeResponse))
            ));
        }
    }
}
