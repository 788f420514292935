//! The ROTed sender: its state, its round, its final check and its batch
//! protocol.

use super::{
    chunk_sizes, commit, key_material, lagged, transcript, xor32, Block32, RlweRot, RotMsg1,
    RotMsg2, RotMsg3, RotSenderOutput,
};
use crate::error::{AbortReason, Error, Result};
use crate::prg::{ct_swap_32, Prg};
use crate::rlwe::{sender_branches, NoiseDistribution, SEED_BYTES};
use rand_core::CryptoRng;
use subtle::ConstantTimeEq;
use zeroize::Zeroize;

/// The sender between its round and the final message.
pub struct RotSenderRound {
    flip: u8,
    pads: [Block32; 2],
    transcript: Block32,
    seed: [u8; SEED_BYTES],
    commitment: Block32,
}

impl core::fmt::Debug for RotSenderRound {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str("RotSenderRound(..)")
    }
}

impl Drop for RotSenderRound {
    fn drop(&mut self) {
        self.flip.zeroize();
        self.pads.zeroize();
        self.transcript.zeroize();
    }
}

/// Sender's round: answers message 1.
pub fn sender_round<R: CryptoRng + ?Sized>(
    noise: NoiseDistribution,
    rng: &mut R,
    msg: &RotMsg1,
) -> (RotSenderRound, RotMsg2) {
    let mut prg = Prg::from_rng(rng);
    let flip = prg.gen_bit();
    let mask = prg.gen_32();
    let (p, hints, rkeys) = sender_branches(noise, &mut prg, &msg.p, &msg.seed);
    let t = transcript(&msg.seed, &msg.commitment, &mask);
    let (c0, pad0) = key_material(&t, &rkeys[0]);
    let (c1, pad1) = key_material(&t, &rkeys[1]);
    let (slot0, slot1) = ct_swap_32(&c0, &c1, flip);
    let reply = RotMsg2 {
        p,
        hints,
        mask,
        confirmations: [slot0, slot1],
    };
    let state = RotSenderRound {
        flip,
        pads: [pad0, pad1],
        transcript: t,
        seed: msg.seed,
        commitment: msg.commitment,
    };
    (state, reply)
}

impl RotSenderRound {
    /// Sender, finish: checks the openings and outputs `(M_0, M_1)`.
    pub fn finish(self, msg: &RotMsg3) -> Result<RotSenderOutput> {
        let ok = commit(&self.seed, &msg.openings).ct_eq(&self.commitment);
        if !bool::from(ok) {
            return Err(Error::Abort(AbortReason::CommitmentMismatch));
        }
        let m0 = xor32(&self.pads[0], &msg.openings[0]);
        let m1 = xor32(&self.pads[1], &msg.openings[1]);
        let (a, b) = ct_swap_32(&m0, &m1, self.flip);
        Ok(RotSenderOutput { messages: [a, b] })
    }
}

impl crate::RotSender for RlweRot {
    type Block = Block32;

    /// The sender's side of `WINDOW`-chunk pipelining: per chunk
    /// the receiver's round-1 chunk and the answer, and from chunk `WINDOW`
    /// on first the receiver's reply for the chunk `WINDOW` behind.
    fn send_random<C: crate::Channel + ?Sized, R: CryptoRng + ?Sized>(
        &mut self,
        ch: &mut C,
        count: usize,
        rng: &mut R,
    ) -> Result<crate::RotSenderOutputs<Block32>> {
        let sizes: Vec<usize> = chunk_sizes(count).collect();
        let mut messages = Vec::with_capacity(count);
        lagged(
            ch,
            &sizes,
            |ch: &mut C, _, n| {
                let bytes = ch.recv()?;
                let mut out = Vec::with_capacity(n * RotMsg2::LEN);
                let mut states = Vec::with_capacity(n);
                for chunk in
                    crate::channel::split_batch(&bytes, n, RotMsg1::LEN, "ROT message 1 batch")?
                {
                    let (state, m2) = sender_round(self.noise, rng, &RotMsg1::decode(chunk)?);
                    m2.encode(&mut out);
                    states.push(state);
                }
                ch.send(out)?;
                Ok(states)
            },
            |ch: &mut C, states: Vec<RotSenderRound>, n| {
                let bytes = ch.recv()?;
                for (chunk, state) in
                    crate::channel::split_batch(&bytes, n, RotMsg3::LEN, "ROT message 3 batch")?
                        .zip(states)
                {
                    messages.push(state.finish(&RotMsg3::decode(chunk)?)?.messages);
                }
                Ok(())
            },
        )?;
        Ok(crate::RotSenderOutputs { messages })
    }
}
