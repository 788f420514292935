//! The BDGM19 sender: its state, its rounds and its batch protocol.

use super::{
    branch_key, concat, encryption_pad, link, pad, transcript, xor32, xor64, OtMsg1, OtMsg2,
    OtMsg3, OtMsg4, RlweOt,
};
use crate::channel::split_batch;
use crate::error::{AbortReason, Error, Result};
use crate::prg::{Domain, Prg};
use crate::rlwe::reconcile::ReconciledKey;
use crate::rlwe::rot::{chunk_sizes, lagged, Block32};
use crate::rlwe::{sender_branches, NoiseDistribution};
use rand_core::CryptoRng;
use subtle::ConstantTimeEq;
use zeroize::Zeroize;

/// The sender after message 2.
pub struct OtSenderRound1 {
    keys: [ReconciledKey; 2],
    transcript: Block32,
    expected: Block32,
}

opaque_debug_and_drop!(OtSenderRound1, transcript, expected);

/// Sender, round 1: answers message 1.
pub fn sender_round1<R: CryptoRng + ?Sized>(
    noise: NoiseDistribution,
    rng: &mut R,
    msg: &OtMsg1,
) -> (OtSenderRound1, OtMsg2) {
    let mut prg = Prg::from_rng(rng);
    let (p, hints, rkeys) = sender_branches(noise, &mut prg, &msg.p, &msg.seed);
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

impl crate::OtSender for RlweOt {
    type Block = Block32;

    /// The sender's side of the pipelining (see the receiver): per chunk `k`,
    /// from chunk `WINDOW` on first the receiver's reply for chunk `k -
    /// WINDOW` and the last message for it, then the round-1 chunk `k` and
    /// the answer.
    fn send<C: crate::Channel + ?Sized, R: CryptoRng + ?Sized>(
        &mut self,
        ch: &mut C,
        messages: &[[Block32; 2]],
        rng: &mut R,
    ) -> Result<()> {
        let sizes: Vec<usize> = chunk_sizes(messages.len()).collect();
        let mut pairs = messages.iter();
        lagged(
            ch,
            &sizes,
            |ch: &mut C, _, n| {
                let bytes = ch.recv()?;
                let mut out = Vec::with_capacity(n * OtMsg2::LEN);
                let mut states = Vec::with_capacity(n);
                for chunk in split_batch(&bytes, n, OtMsg1::LEN, "OT message 1 batch")? {
                    let (state, m2) = sender_round1(self.noise, rng, &OtMsg1::decode(chunk)?);
                    m2.encode(&mut out);
                    states.push(state);
                }
                ch.send(out)?;
                Ok(states)
            },
            |ch: &mut C, states: Vec<OtSenderRound1>, n| {
                let bytes = ch.recv()?;
                let mut out = Vec::with_capacity(n * OtMsg4::LEN);
                for ((chunk, state), m) in
                    split_batch(&bytes, n, OtMsg3::LEN, "OT message 3 batch")?
                        .zip(states)
                        .zip(pairs.by_ref())
                {
                    state.round2(&OtMsg3::decode(chunk)?, m)?.encode(&mut out);
                }
                ch.send(out)
            },
        )?;
        Ok(())
    }
}
