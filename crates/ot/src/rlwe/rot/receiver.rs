//! The ROTed receiver: its state, its two rounds and its batch protocol.

use super::{
    chunk_sizes, commit, key_material, transcript, xor32, Block32, RlweRot, RotMsg1, RotMsg2,
    RotMsg3, RotReceiverOutput, WINDOW,
};
use crate::error::{AbortReason, Error, Result};
use crate::prg::{ct_eq_32, ct_select_32, Domain, Prg};
use crate::rlwe::hash::hash_to_ntt;
use crate::rlwe::reconcile::{extract, Hint};
use crate::rlwe::ring::Poly;
use crate::rlwe::{keygen_into, shared_value, KeyPair, NoiseDistribution, SEED_BYTES};
use rand_core::CryptoRng;
use std::collections::VecDeque;
use zeroize::Zeroize;

/// The receiver between its first and second round.
pub struct RotReceiverRound1 {
    bit: u8,
    keys: Box<KeyPair>,
    seed: [u8; SEED_BYTES],
    masks: [Block32; 2],
    commitment: Block32,
}

impl core::fmt::Debug for RotReceiverRound1 {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str("RotReceiverRound1(..)")
    }
}

impl Drop for RotReceiverRound1 {
    fn drop(&mut self) {
        self.bit.zeroize();
        self.masks.zeroize();
        // `keys` zeroizes itself (its polynomials are ZeroizeOnDrop).
    }
}

/// Receiver, round 1: samples its secret bit, key pair, seed and masks.
pub fn receiver_round1<R: CryptoRng + ?Sized>(
    noise: NoiseDistribution,
    rng: &mut R,
) -> (RotReceiverRound1, RotMsg1) {
    let mut prg = Prg::from_rng(rng);
    let mut msg = RotMsg1::zero();
    let state = round1_into(noise, &mut prg, &mut msg);
    (state, msg)
}

/// [`receiver_round1`] with the randomness of `prg`, the message written
/// into `msg` (overwritten: the batch protocol reuses one message and one
/// generator for a chunk).
fn round1_into(noise: NoiseDistribution, prg: &mut Prg, msg: &mut RotMsg1) -> RotReceiverRound1 {
    let bit = prg.gen_bit();
    let seed = prg.gen_32();
    let masks = [prg.gen_32(), prg.gen_32()];
    // Boxed: the state moves between rounds (and into batch vectors)
    // without copying the secrets.
    let mut keys = Box::new(KeyPair::zero());
    keygen_into(noise, prg, &mut keys, &mut msg.p);
    // Always hash and always subtract; the bit only selects through a mask.
    let h = hash_to_ntt(Domain::HashToPoly, &seed);
    msg.p.sub_masked_assign(&h, bit);
    let commitment = commit(&seed, &masks);
    msg.seed = seed;
    msg.commitment = commitment;
    RotReceiverRound1 {
        bit,
        keys,
        seed,
        masks,
        commitment,
    }
}

impl RotReceiverRound1 {
    /// The receiver's secret branch bit `b` (its output bit is `b xor f`).
    #[cfg(test)]
    pub(super) fn branch_bit(&self) -> u8 {
        self.bit
    }

    /// Receiver, round 2: reconciles, identifies its output index, derives
    /// its message and opens the masks.
    pub fn round2(self, msg: &RotMsg2) -> Result<(RotReceiverOutput, RotMsg3)> {
        let mut k = Poly::zero();
        shared_value(&mut k, &msg.p, &self.keys);
        let hint = Hint::select(&msg.hints[0], &msg.hints[1], self.bit);
        let key = extract(&k, &hint);
        let t = transcript(&self.seed, &self.commitment, &msg.mask);
        let (c, mut pad) = key_material(&t, &key);
        let eq0 = ct_eq_32(&c, &msg.confirmations[0]);
        let eq1 = ct_eq_32(&c, &msg.confirmations[1]);
        // Exactly one slot must match; failure is public (the run aborts).
        if !bool::from(eq0 ^ eq1) {
            return Err(Error::Abort(AbortReason::KeyConfirmation));
        }
        let choice = eq1.unwrap_u8();
        let mask = ct_select_32(&self.masks[0], &self.masks[1], self.bit);
        let message = xor32(&pad, &mask);
        pad.zeroize();
        let reply = RotMsg3 {
            openings: self.masks,
        };
        Ok((RotReceiverOutput { choice, message }, reply))
    }
}

impl crate::RotReceiver for RlweRot {
    type Block = Block32;

    /// The receiver's side of `WINDOW`-chunk pipelining: the first
    /// round-1 chunks, then per chunk the sender's answer, the reply and the
    /// round-1 chunk `WINDOW` ahead. A chunk's round 1 draws its randomness
    /// from one generator keyed by 32 bytes of `rng`, and every chunk reuses
    /// one message of each kind.
    fn receive_random<C: crate::Channel + ?Sized, R: CryptoRng + ?Sized>(
        &mut self,
        ch: &mut C,
        count: usize,
        rng: &mut R,
    ) -> Result<crate::RotReceiverOutputs<Block32>> {
        let sizes: Vec<usize> = chunk_sizes(count).collect();
        let mut pending = VecDeque::with_capacity(WINDOW);
        let mut m1 = RotMsg1::zero();
        let mut round1 = |ch: &mut C, n: usize| -> Result<Vec<RotReceiverRound1>> {
            let mut prg = Prg::from_rng(rng);
            let mut out = Vec::with_capacity(n * RotMsg1::LEN);
            let mut states = Vec::with_capacity(n);
            for _ in 0..n {
                states.push(round1_into(self.noise, &mut prg, &mut m1));
                m1.encode(&mut out);
            }
            ch.send(out)?;
            Ok(states)
        };
        for &n in sizes.iter().take(WINDOW) {
            pending.push_back(round1(ch, n)?);
        }
        let mut choices = Vec::with_capacity(count);
        let mut messages = Vec::with_capacity(count);
        let mut m2 = RotMsg2::zero();
        for (k, &n) in sizes.iter().enumerate() {
            let states = pending
                .pop_front()
                .ok_or(Error::Channel("ROT receiver pipeline out of step"))?;
            let bytes = ch.recv()?;
            let mut out = Vec::with_capacity(n * RotMsg3::LEN);
            for (chunk, state) in
                crate::channel::split_batch(&bytes, n, RotMsg2::LEN, "ROT message 2 batch")?
                    .zip(states)
            {
                m2.decode_into(chunk)?;
                let (o, m3) = state.round2(&m2)?;
                m3.encode(&mut out);
                choices.push(o.choice);
                messages.push(o.message);
            }
            ch.send(out)?;
            if let Some(&next) = sizes.get(k + WINDOW) {
                pending.push_back(round1(ch, next)?);
            }
        }
        Ok(crate::RotReceiverOutputs { choices, messages })
    }
}
