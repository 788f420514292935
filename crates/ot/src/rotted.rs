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
    use crate::ec::SimplestOt;
    use crate::ideal::IdealRot;
    use crate::rlwe::{RlweOt, RlweRot};
    use rand_chacha::ChaCha20Rng;
    use rand_core::{RngCore, SeedableRng};

    fn random_ot<S, R>(mut s: S, mut r: R, n: usize)
    where
        S: RotSender + Send + 'static,
        R: RotReceiver<Block = S::Block>,
        S::Block: PartialEq + core::fmt::Debug,
    {
        let (mut a, mut b) = memory_pair();
        let t = std::thread::spawn(move || {
            let mut rng = ChaCha20Rng::seed_from_u64(61);
            s.send_random(&mut a, n, &mut rng).unwrap()
        });
        let mut rng = ChaCha20Rng::seed_from_u64(62);
        let ro = r.receive_random(&mut b, n, &mut rng).unwrap();
        let so = t.join().unwrap();
        for i in 0..n {
            let c = usize::from(ro.choices[i]);
            assert_eq!(so.messages[i][c], ro.messages[i]);
            assert_ne!(so.messages[i][1 - c], ro.messages[i]);
        }
    }

    fn chosen_ot<S, R>(mut s: S, mut r: R, n: usize)
    where
        S: OtSender + Send + 'static,
        R: OtReceiver<Block = S::Block>,
        S::Block: PartialEq + core::fmt::Debug,
    {
        let mut rng = ChaCha20Rng::seed_from_u64(63);
        let mut msgs = vec![[S::Block::default(); 2]; n];
        for m in msgs.iter_mut() {
            rng.fill_bytes(m[0].as_mut());
            rng.fill_bytes(m[1].as_mut());
        }
        let choices: Vec<u8> = (0..n).map(|_| (rng.next_u32() & 1) as u8).collect();
        let (mut a, mut b) = memory_pair();
        let sent = msgs.clone();
        let t = std::thread::spawn(move || {
            let mut rng = ChaCha20Rng::seed_from_u64(64);
            s.send(&mut a, &sent, &mut rng).unwrap();
        });
        let got = r.receive(&mut b, &choices, &mut rng).unwrap();
        t.join().unwrap();
        for i in 0..n {
            assert_eq!(got[i], msgs[i][usize::from(choices[i])]);
        }
    }

    #[test]
    fn rotted_lattice_ot() {
        random_ot(Rotted(RlweOt::default()), Rotted(RlweOt::default()), 300);
    }

    #[test]
    fn rotted_ec_ot() {
        random_ot(Rotted(SimplestOt), Rotted(SimplestOt), 20);
    }

    #[test]
    fn derandomized_rots_are_chosen_ots() {
        chosen_ot(
            Derandomized(RlweRot::default()),
            Derandomized(RlweRot::default()),
            300,
        );
        chosen_ot(
            Derandomized(IdealRot::<[u8; 16]>::new([4; 32])),
            Derandomized(IdealRot::<[u8; 16]>::new([4; 32])),
            1001,
        );
        // And back: a derandomized ROT, re-randomized, is still a ROT.
        random_ot(
            Rotted(Derandomized(IdealRot::<[u8; 32]>::new([5; 32]))),
            Rotted(Derandomized(IdealRot::<[u8; 32]>::new([5; 32]))),
            77,
        );
    }

    #[test]
    fn bad_choices_and_lengths_are_rejected() {
        let (mut a, _b) = memory_pair();
        let mut rng = ChaCha20Rng::seed_from_u64(65);
        assert!(Derandomized(IdealRot::<[u8; 16]>::new([0; 32]))
            .receive(&mut a, &[0, 2], &mut rng)
            .is_err());
        assert!(check_packed_len(&[0u8; 2], 17).is_err());
        assert!(check_packed_len(&[0u8; 3], 17).is_ok());
    }
}
