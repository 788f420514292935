//! The BDGM19 receiver: its states, its rounds and its batch protocol.

use super::{
    branch_key, concat, encryption_pad, link, pad, transcript, xor32, xor64, OtMsg1, OtMsg2,
    OtMsg3, OtMsg4, RlweOt,
};
use crate::channel::split_batch;
use crate::error::{AbortReason, Error, Result};
use crate::prg::{ct_select_32, ct_swap_32, Domain, Prg};
use crate::rlwe::hash::hash_to_ntt;
use crate::rlwe::reconcile::{extract, Hint, ReconciledKey};
use crate::rlwe::ring::Poly;
use crate::rlwe::rot::{chunk_sizes, lagged, to_array, Block32, BATCH_CHUNK, WINDOW};
use crate::rlwe::{keygen, shared_value, KeyPair, NoiseDistribution, SEED_BYTES};
use rand_core::CryptoRng;
use std::collections::VecDeque;
use subtle::ConstantTimeEq;
use zeroize::Zeroize;

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
    keys: Box<KeyPair>,
    seed: [u8; SEED_BYTES],
}

/// The receiver after message 3.
pub struct OtReceiverRound2 {
    choice: u8,
    key: ReconciledKey,
    transcript: Block32,
}

opaque_debug_and_drop!(OtReceiverRound1, choice);
opaque_debug_and_drop!(OtReceiverRound2, choice, transcript);

/// Receiver, round 1, with choice bit `choice` (0 or 1).
pub fn receiver_round1<R: CryptoRng + ?Sized>(
    noise: NoiseDistribution,
    rng: &mut R,
    choice: u8,
) -> (OtReceiverRound1, OtMsg1) {
    let choice = choice & 1;
    let mut prg = Prg::from_rng(rng);
    let seed = prg.gen_32();
    // Boxed: the state moves between rounds (and into batch vectors)
    // without copying the secrets.
    let mut keys = Box::new(KeyPair::zero());
    let mut p = keygen(noise, &mut prg, &mut keys);
    let h = hash_to_ntt(Domain::HashToPoly, &seed);
    p.sub_masked_assign(&h, choice);
    (OtReceiverRound1 { choice, keys, seed }, OtMsg1 { p, seed })
}

impl OtReceiverRound1 {
    /// Receiver, round 2: recovers the challenge, checks both branches and
    /// answers.
    pub fn round2(self, msg: &OtMsg2) -> Result<(OtReceiverRound2, OtMsg3)> {
        let c = self.choice;
        let mut k = Poly::zero();
        shared_value(&mut k, &msg.p, &self.keys);
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

impl crate::OtReceiver for RlweOt {
    type Block = Block32;

    /// The receiver's side of the ROT protocol's `WINDOW`-chunk pipelining
    /// with one more message: the first round-1 chunks, then per chunk `k`
    /// the sender's last message for chunk `k - WINDOW` (from chunk `WINDOW`
    /// on), its answer for chunk `k`, the reply and the round-1 chunk
    /// `WINDOW` ahead.
    fn receive<C: crate::Channel + ?Sized, R: CryptoRng + ?Sized>(
        &mut self,
        ch: &mut C,
        choices: &[u8],
        rng: &mut R,
    ) -> Result<Vec<Block32>> {
        crate::check_choices(choices)?;
        let count = choices.len();
        let sizes: Vec<usize> = chunk_sizes(count).collect();
        let mut round1 = |ch: &mut C, k: usize| -> Result<Vec<OtReceiverRound1>> {
            let n = sizes.get(k).copied().unwrap_or(0);
            let mut out = Vec::with_capacity(n * OtMsg1::LEN);
            let mut states = Vec::with_capacity(n);
            for &c in choices.iter().skip(k * BATCH_CHUNK).take(n) {
                let (state, m1) = receiver_round1(self.noise, rng, c);
                m1.encode(&mut out);
                states.push(state);
            }
            ch.send(out)?;
            Ok(states)
        };
        let mut first = VecDeque::with_capacity(WINDOW);
        for k in 0..sizes.len().min(WINDOW) {
            first.push_back(round1(ch, k)?);
        }
        let mut result = Vec::with_capacity(count);
        lagged(
            ch,
            &sizes,
            |ch: &mut C, k, n| {
                let states = first.pop_front().ok_or(OUT_OF_STEP)?;
                let bytes = ch.recv()?;
                let mut out = Vec::with_capacity(n * OtMsg3::LEN);
                let mut next = Vec::with_capacity(n);
                for (chunk, state) in
                    split_batch(&bytes, n, OtMsg2::LEN, "OT message 2 batch")?.zip(states)
                {
                    let (state, m3) = state.round2(&OtMsg2::decode(chunk)?)?;
                    m3.encode(&mut out);
                    next.push(state);
                }
                ch.send(out)?;
                if k + WINDOW < sizes.len() {
                    first.push_back(round1(ch, k + WINDOW)?);
                }
                Ok(next)
            },
            |ch: &mut C, states: Vec<OtReceiverRound2>, n| {
                let bytes = ch.recv()?;
                for (chunk, state) in
                    split_batch(&bytes, n, OtMsg4::LEN, "OT message 4 batch")?.zip(states)
                {
                    result.push(state.finish(&OtMsg4::decode(chunk)?));
                }
                Ok(())
            },
        )?;
        Ok(result)
    }
}

/// A pipeline queue found empty: cannot happen (the schedule is fixed), but
/// reported rather than assumed.
const OUT_OF_STEP: Error = Error::Channel("OT receiver pipeline out of step");
