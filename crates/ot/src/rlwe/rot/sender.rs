//! The ROTed sender: its state, its round, its final check and its batch
//! protocol.

use super::{
    chunk_sizes, commit, key_material, lagged, transcript, xor32, Block32, RlweRot, RotMsg1,
    RotMsg2, RotMsg3, RotSenderOutput,
};
use crate::error::{AbortReason, Error, Result};
use crate::prg::{ct_eq_32, ct_swap_32, Prg};
use crate::rlwe::{sender_branches_into, NoiseDistribution, SEED_BYTES};
use rand_core::CryptoRng;
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
    let mut reply = RotMsg2::zero();
    let state = round_into(noise, &mut prg, msg, &mut reply);
    (state, reply)
}

/// [`sender_round`] with the randomness of `prg`, the answer written into
/// `reply` (overwritten: the batch protocol reuses one message and one
/// generator for a chunk).
fn round_into(
    noise: NoiseDistribution,
    prg: &mut Prg,
    msg: &RotMsg1,
    reply: &mut RotMsg2,
) -> RotSenderRound {
    let flip = prg.gen_bit();
    let mask = prg.gen_32();
    let (hints, rkeys) = sender_branches_into(noise, prg, &msg.p, &msg.seed, &mut reply.p);
    let t = transcript(&msg.seed, &msg.commitment, &mask);
    let (c0, pad0) = key_material(&t, &rkeys[0]);
    let (c1, pad1) = key_material(&t, &rkeys[1]);
    let (slot0, slot1) = ct_swap_32(&c0, &c1, flip);
    reply.hints = hints;
    reply.mask = mask;
    reply.confirmations = [slot0, slot1];
    RotSenderRound {
        flip,
        pads: [pad0, pad1],
        transcript: t,
        seed: msg.seed,
        commitment: msg.commitment,
    }
}

impl RotSenderRound {
    /// Sender, finish: checks the openings and outputs `(M_0, M_1)`.
    pub fn finish(self, msg: &RotMsg3) -> Result<RotSenderOutput> {
        let ok = ct_eq_32(&commit(&self.seed, &msg.openings), &self.commitment);
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
    /// on first the receiver's reply for the chunk `WINDOW` behind. A
    /// chunk's answers draw their randomness from one generator keyed by 32
    /// bytes of `rng`, and every chunk reuses one message of each kind.
    fn send_random<C: crate::Channel + ?Sized, R: CryptoRng + ?Sized>(
        &mut self,
        ch: &mut C,
        count: usize,
        rng: &mut R,
    ) -> Result<crate::RotSenderOutputs<Block32>> {
        let sizes: Vec<usize> = chunk_sizes(count).collect();
        let mut messages = Vec::with_capacity(count);
        let (mut m1, mut m2) = (RotMsg1::zero(), RotMsg2::zero());
        lagged(
            ch,
            &sizes,
            |ch: &mut C, _, n| {
                let bytes = ch.recv()?;
                let mut prg = Prg::from_rng(rng);
                let mut out = Vec::with_capacity(n * RotMsg2::LEN);
                let mut states = Vec::with_capacity(n);
                for chunk in
                    crate::channel::split_batch(&bytes, n, RotMsg1::LEN, "ROT message 1 batch")?
                {
                    m1.decode_into(chunk)?;
                    states.push(round_into(self.noise, &mut prg, &m1, &mut m2));
                    m2.encode(&mut out);
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
