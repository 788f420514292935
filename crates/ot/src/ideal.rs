//! An ideal random OT: a trusted dealer simulated by a seed both parties
//! know. It sends nothing and is **not secure**; it exists to test protocols
//! built on top of random OT (extension, derandomization) in isolation.

use crate::channel::Channel;
use crate::error::Result;
use crate::prg::Prg;
use crate::{OtBlock, RotReceiver, RotReceiverOutputs, RotSender, RotSenderOutputs};
use core::marker::PhantomData;
use rand_core::CryptoRng;

/// The ideal random OT functionality; give both parties the same seed.
pub struct IdealRot<B> {
    prg: Prg,
    _block: PhantomData<B>,
}

impl<B> core::fmt::Debug for IdealRot<B> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str("IdealRot(..)")
    }
}

impl<B: OtBlock> IdealRot<B> {
    /// The dealer for one pair of parties.
    pub fn new(seed: [u8; 32]) -> Self {
        IdealRot {
            prg: Prg::from_seed(&seed),
            _block: PhantomData,
        }
    }

    fn deal(&mut self) -> (u8, [B; 2]) {
        let mut m = [B::default(); 2];
        self.prg.fill_bytes(m[0].as_mut());
        self.prg.fill_bytes(m[1].as_mut());
        (self.prg.gen_bit(), m)
    }
}

impl<B: OtBlock> RotSender for IdealRot<B> {
    type Block = B;
    fn send_random<C: Channel + ?Sized, R: CryptoRng + ?Sized>(
        &mut self,
        _ch: &mut C,
        count: usize,
        _rng: &mut R,
    ) -> Result<RotSenderOutputs<B>> {
        let messages = (0..count).map(|_| self.deal().1).collect();
        Ok(RotSenderOutputs { messages })
    }
}

impl<B: OtBlock> RotReceiver for IdealRot<B> {
    type Block = B;
    fn receive_random<C: Channel + ?Sized, R: CryptoRng + ?Sized>(
        &mut self,
        _ch: &mut C,
        count: usize,
        _rng: &mut R,
    ) -> Result<RotReceiverOutputs<B>> {
        let mut choices = Vec::with_capacity(count);
        let mut messages = Vec::with_capacity(count);
        for _ in 0..count {
            let (b, m) = self.deal();
            choices.push(b);
            messages.push(m[usize::from(b)]);
        }
        Ok(RotReceiverOutputs { choices, messages })
    }
}
