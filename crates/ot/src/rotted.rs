//! Generic transforms between OT flavours.
//!
//! * [`Rotted`]: any chosen-message OT becomes a random OT (the "ROTed"
//!   variants of the paper's evaluation): the sender transfers two fresh
//!   random messages, the receiver asks for a random bit.
//! * [`Derandomized`]: any random OT becomes a chosen-message OT (Beaver's
//!   derandomization): the receiver sends `d = c xor b`, the sender answers
//!   with `m_j xor M_{j xor d}`. Two extra messages, `1/8 + 2 |m|` bytes per OT.

use crate::channel::{split_batch, Channel};
use crate::error::Result;
use crate::{
    check_choices, xor_block, OtReceiver, OtSender, RotReceiver, RotReceiverOutputs, RotSender,
    RotSenderOutputs,
};
use rand_core::CryptoRng;
use zeroize::Zeroize;

/// A chosen-message OT used as a random OT.
#[derive(Debug, Clone, Default)]
pub struct Rotted<O>(pub O);

impl<O: OtSender> RotSender for Rotted<O> {
    type Block = O::Block;
    fn send_random<C: Channel + ?Sized, R: CryptoRng + ?Sized>(
        &mut self,
        ch: &mut C,
        count: usize,
        rng: &mut R,
    ) -> Result<RotSenderOutputs<O::Block>> {
        let mut messages = vec![[O::Block::default(); 2]; count];
        for m in messages.iter_mut() {
            rng.fill_bytes(m[0].as_mut());
            rng.fill_bytes(m[1].as_mut());
        }
        let result = self.0.send(ch, &messages, rng);
        let out = RotSenderOutputs { messages };
        result.map(|()| out)
    }
}

impl<O: OtReceiver> RotReceiver for Rotted<O> {
    type Block = O::Block;
    fn receive_random<C: Channel + ?Sized, R: CryptoRng + ?Sized>(
        &mut self,
        ch: &mut C,
        count: usize,
        rng: &mut R,
    ) -> Result<RotReceiverOutputs<O::Block>> {
        let mut choices = vec![0u8; count];
        rng.fill_bytes(&mut choices);
        for c in choices.iter_mut() {
            *c &= 1;
        }
        match self.0.receive(ch, &choices, rng) {
            Ok(messages) => Ok(RotReceiverOutputs { choices, messages }),
            Err(e) => {
                choices.zeroize();
                Err(e)
            }
        }
    }
}

/// A random OT used as a chosen-message OT.
#[derive(Debug, Clone, Default)]
pub struct Derandomized<P>(pub P);

fn pack_bits(bits: impl Iterator<Item = u8>, count: usize) -> Vec<u8> {
    let mut out = vec![0u8; count.div_ceil(8)];
    for (i, b) in bits.enumerate() {
        out[i / 8] |= (b & 1) << (i % 8);
    }
    out
}

impl<P: RotSender> OtSender for Derandomized<P> {
    type Block = P::Block;
    fn send<C: Channel + ?Sized, R: CryptoRng + ?Sized>(
        &mut self,
        ch: &mut C,
        messages: &[[P::Block; 2]],
        rng: &mut R,
    ) -> Result<()> {
        let count = messages.len();
        let rot = self.0.send_random(ch, count, rng)?;
        let d = ch.recv()?;
        crate::rotted::check_packed_len(&d, count)?;
        let block = core::mem::size_of::<P::Block>();
        let mut out = Vec::with_capacity(2 * block * count);
        for (i, (m, r)) in messages.iter().zip(rot.messages.iter()).enumerate() {
            let di = (d[i / 8] >> (i % 8)) & 1; // public
            let (k0, k1) = if di == 0 {
                (&r[0], &r[1])
            } else {
                (&r[1], &r[0])
            };
            out.extend_from_slice(xor_block(&m[0], k0).as_ref());
            out.extend_from_slice(xor_block(&m[1], k1).as_ref());
        }
        ch.send(out)
    }
}

impl<P: RotReceiver> OtReceiver for Derandomized<P> {
    type Block = P::Block;
    fn receive<C: Channel + ?Sized, R: CryptoRng + ?Sized>(
        &mut self,
        ch: &mut C,
        choices: &[u8],
        rng: &mut R,
    ) -> Result<Vec<P::Block>> {
        check_choices(choices)?;
        let count = choices.len();
        let rot = self.0.receive_random(ch, count, rng)?;
        let d = pack_bits(
            choices.iter().zip(rot.choices.iter()).map(|(c, b)| c ^ b),
            count,
        );
        ch.send(d)?;
        let bytes = ch.recv()?;
        let block = core::mem::size_of::<P::Block>();
        let mut result = Vec::with_capacity(count);
        for ((pair, &c), m) in split_batch(&bytes, count, 2 * block, "derandomized OT answers")?
            .zip(choices)
            .zip(rot.messages.iter())
        {
            // Masked selection of the half indexed by the secret choice.
            let mask = 0u8.wrapping_sub(c);
            let mut x = P::Block::default();
            for ((o, a), b) in x
                .as_mut()
                .iter_mut()
                .zip(&pair[..block])
                .zip(&pair[block..])
            {
                *o = a ^ ((a ^ b) & mask);
            }
            result.push(xor_block(&x, m));
        }
        Ok(result)
    }
}

pub(crate) fn check_packed_len(d: &[u8], count: usize) -> Result<()> {
    if d.len() == count.div_ceil(8) {
        Ok(())
    } else {
        Err(crate::Error::LengthMismatch {
            what: "derandomization bits",
            expected: count.div_ceil(8),
            got: d.len(),
        })
    }
}
