//! Elliptic-curve baseline: the "Simplest OT" of Chou and Orlandi
//! (Latincrypt 2015) on the Ristretto255 group (curve25519-dalek).
//!
//! ```text
//!  Sender                                         Receiver (choices c_i)
//!  y random, S = yG, T = yS
//!           -- S --------------------------------->
//!                                   x_i random, R_i = c_i S + x_i G
//!           <- R_1 .. R_n --------------------------
//!  k_i0 = H(i, S, R_i, y R_i)       k_i = H(i, S, R_i, x_i S)
//!  k_i1 = H(i, S, R_i, y R_i - T)
//!  (chosen OT) e_ij = m_ij ^ k_ij
//!           -- e_10, e_11, .. ------------------------>  m_ic = e_ic ^ k_i
//! ```
//!
//! The keys bind the index and both public points (as later analyses of
//! the protocol recommend). Points are checked on decoding: a malformed
//! encoding is a decoding error, the identity is an abort. The receiver's
//! point is chosen with a constant-time select. As a random OT it costs
//! `32 + 32/n` bytes per OT; as a chosen OT `96 + 32/n`.

use crate::channel::{split_batch, Channel};
use crate::error::{AbortReason, Error, Result};
use crate::prg::{Domain, Prg};
use crate::{
    check_choices, xor_block, OtReceiver, OtSender, RotReceiver, RotReceiverOutputs, RotSender,
    RotSenderOutputs,
};
use curve25519_dalek::ristretto::{CompressedRistretto, RistrettoPoint};
use curve25519_dalek::scalar::Scalar;
use curve25519_dalek::traits::IsIdentity;
use rand_core::CryptoRng;
use subtle::{Choice, ConditionallySelectable};
use zeroize::Zeroize;

/// A 32-byte OT message.
pub type Block32 = [u8; 32];

/// Simplest OT on Ristretto255; implements the random and the chosen OT traits.
#[derive(Debug, Clone, Copy, Default)]
pub struct SimplestOt;

fn random_scalar(prg: &mut Prg) -> Scalar {
    let mut wide = [0u8; 64];
    prg.fill_bytes(&mut wide);
    let s = Scalar::from_bytes_mod_order_wide(&wide);
    wide.zeroize();
    s
}

fn decode_point(bytes: &[u8], what: &'static str) -> Result<RistrettoPoint> {
    let c = CompressedRistretto::from_slice(bytes).map_err(|_| Error::LengthMismatch {
        what,
        expected: 32,
        got: bytes.len(),
    })?;
    let p = c.decompress().ok_or(Error::Malformed {
        what,
        detail: "not a canonical Ristretto255 encoding",
    })?;
    if p.is_identity() {
        return Err(Error::Abort(AbortReason::DegeneratePoint));
    }
    Ok(p)
}

fn derive_key(index: u64, s: &[u8; 32], r: &[u8; 32], shared: &RistrettoPoint) -> Block32 {
    let mut shared_bytes = shared.compress().to_bytes();
    let k = Domain::EcKey.hash(&[&index.to_le_bytes(), s, r, &shared_bytes]);
    shared_bytes.zeroize();
    k
}

/// Sender, first message: `y` and `S = yG`.
pub(crate) struct SenderSetup {
    y: Scalar,
    s: [u8; 32],
    t: RistrettoPoint,
}

impl Drop for SenderSetup {
    fn drop(&mut self) {
        self.y.zeroize();
        self.t.zeroize();
    }
}

impl SenderSetup {
    fn new<R: CryptoRng + ?Sized>(rng: &mut R) -> Self {
        let mut prg = Prg::from_rng(rng);
        let y = random_scalar(&mut prg);
        let big_s = RistrettoPoint::mul_base(&y);
        let t = y * big_s;
        SenderSetup {
            y,
            s: big_s.compress().to_bytes(),
            t,
        }
    }

    /// The two keys for the receiver's point `r` (already decoded).
    fn keys(&self, index: u64, r_bytes: &[u8; 32], r: &RistrettoPoint) -> [Block32; 2] {
        let mut yr = self.y * r;
        let k0 = derive_key(index, &self.s, r_bytes, &yr);
        yr -= self.t;
        let k1 = derive_key(index, &self.s, r_bytes, &yr);
        yr.zeroize();
        [k0, k1]
    }
}

fn sender_keys<C: Channel + ?Sized, R: CryptoRng + ?Sized>(
    ch: &mut C,
    count: usize,
    rng: &mut R,
) -> Result<Vec<[Block32; 2]>> {
    let setup = SenderSetup::new(rng);
    ch.send(setup.s.to_vec())?;
    let bytes = ch.recv()?;
    let mut keys = Vec::with_capacity(count);
    for (i, chunk) in split_batch(&bytes, count, 32, "Simplest OT receiver points")?.enumerate() {
        let r = decode_point(chunk, "Simplest OT receiver point")?;
        let mut rb = [0u8; 32];
        rb.copy_from_slice(chunk);
        keys.push(setup.keys(i as u64, &rb, &r));
    }
    Ok(keys)
}

fn receiver_keys<C: Channel + ?Sized, R: CryptoRng + ?Sized>(
    ch: &mut C,
    choices: &[u8],
    rng: &mut R,
) -> Result<Vec<Block32>> {
    let mut prg = Prg::from_rng(rng);
    let s_bytes = ch.recv()?;
    let big_s = decode_point(&s_bytes, "Simplest OT sender point")?;
    let mut s = [0u8; 32];
    s.copy_from_slice(&s_bytes);
    let mut out = Vec::with_capacity(32 * choices.len());
    let mut keys = Vec::with_capacity(choices.len());
    for (i, &c) in choices.iter().enumerate() {
        let mut x = random_scalar(&mut prg);
        let xg = RistrettoPoint::mul_base(&x);
        let shifted = xg + big_s;
        let r = RistrettoPoint::conditional_select(&xg, &shifted, Choice::from(c & 1));
        let rb = r.compress().to_bytes();
        out.extend_from_slice(&rb);
        let mut shared = x * big_s;
        keys.push(derive_key(i as u64, &s, &rb, &shared));
        x.zeroize();
        shared.zeroize();
    }
    ch.send(out)?;
    Ok(keys)
}

impl RotSender for SimplestOt {
    type Block = Block32;
    fn send_random<C: Channel + ?Sized, R: CryptoRng + ?Sized>(
        &mut self,
        ch: &mut C,
        count: usize,
        rng: &mut R,
    ) -> Result<RotSenderOutputs<Block32>> {
        Ok(RotSenderOutputs {
            messages: sender_keys(ch, count, rng)?,
        })
    }
}

impl RotReceiver for SimplestOt {
    type Block = Block32;
    fn receive_random<C: Channel + ?Sized, R: CryptoRng + ?Sized>(
        &mut self,
        ch: &mut C,
        count: usize,
        rng: &mut R,
    ) -> Result<RotReceiverOutputs<Block32>> {
        let mut choices = vec![0u8; count];
        rng.fill_bytes(&mut choices);
        for c in choices.iter_mut() {
            *c &= 1;
        }
        let messages = receiver_keys(ch, &choices, rng)?;
        Ok(RotReceiverOutputs { choices, messages })
    }
}

impl OtSender for SimplestOt {
    type Block = Block32;
    fn send<C: Channel + ?Sized, R: CryptoRng + ?Sized>(
        &mut self,
        ch: &mut C,
        messages: &[[Block32; 2]],
        rng: &mut R,
    ) -> Result<()> {
        let mut keys = sender_keys(ch, messages.len(), rng)?;
        let mut out = Vec::with_capacity(64 * messages.len());
        for (m, k) in messages.iter().zip(keys.iter()) {
            out.extend_from_slice(&xor_block(&m[0], &k[0]));
            out.extend_from_slice(&xor_block(&m[1], &k[1]));
        }
        keys.zeroize();
        ch.send(out)
    }
}

impl OtReceiver for SimplestOt {
    type Block = Block32;
    fn receive<C: Channel + ?Sized, R: CryptoRng + ?Sized>(
        &mut self,
        ch: &mut C,
        choices: &[u8],
        rng: &mut R,
    ) -> Result<Vec<Block32>> {
        check_choices(choices)?;
        let mut keys = receiver_keys(ch, choices, rng)?;
        let bytes = ch.recv()?;
        let mut result = Vec::with_capacity(choices.len());
        for ((pair, &c), k) in split_batch(&bytes, choices.len(), 64, "Simplest OT ciphertexts")?
            .zip(choices)
            .zip(keys.iter())
        {
            let (e0, e1) = pair.split_at(32);
            let mut e = [0u8; 32];
            let mask = 0u8.wrapping_sub(c);
            for ((o, a), b) in e.iter_mut().zip(e0).zip(e1) {
                *o = a ^ ((a ^ b) & mask);
            }
            result.push(xor_block(&e, k));
        }
        keys.zeroize();
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
    use crate::channel::{memory_pair, MemoryChannel};
    use curve25519_dalek::constants::RISTRETTO_BASEPOINT_POINT;
    use rand_chacha::ChaCha20Rng;
    use rand_core::{RngCore, SeedableRng};
    use std::sync::mpsc;

    /// A channel that also records everything it sends (the eavesdropper's view).
    struct Tap {
        inner: MemoryChannel,
        log: mpsc::Sender<Vec<u8>>,
    }
    impl Channel for Tap {
        fn send(&mut self, msg: Vec<u8>) -> Result<()> {
            self.log.send(msg.clone()).unwrap();
            self.inner.send(msg)
        }
        fn recv(&mut self) -> Result<Vec<u8>> {
            self.inner.recv()
        }
        fn stats(&self) -> crate::ChannelStats {
            self.inner.stats()
        }
    }

    #[test]
    fn chosen_ot_is_correct() {
        let n = 200;
        let mut rng = ChaCha20Rng::seed_from_u64(21);
        let mut msgs = vec![[[0u8; 32]; 2]; n];
        for m in msgs.iter_mut() {
            rng.fill_bytes(&mut m[0]);
            rng.fill_bytes(&mut m[1]);
        }
        let choices: Vec<u8> = (0..n).map(|_| (rng.next_u32() & 1) as u8).collect();
        let (mut a, mut b) = memory_pair();
        let m2 = msgs.clone();
        let t = std::thread::spawn(move || {
            let mut rng = ChaCha20Rng::seed_from_u64(22);
            SimplestOt.send(&mut a, &m2, &mut rng).unwrap();
            a.stats()
        });
        let got = SimplestOt.receive(&mut b, &choices, &mut rng).unwrap();
        let stats = t.join().unwrap();
        for i in 0..n {
            assert_eq!(got[i], msgs[i][usize::from(choices[i])]);
            assert_ne!(got[i], msgs[i][usize::from(1 - choices[i])]);
        }
        assert_eq!(stats.bytes_sent, 32 + 64 * n as u64);
        assert_eq!(stats.bytes_received, 32 * n as u64);
    }

    #[test]
    fn random_ot_is_correct() {
        let (mut a, mut b) = memory_pair();
        let t = std::thread::spawn(move || {
            let mut rng = ChaCha20Rng::seed_from_u64(23);
            SimplestOt.send_random(&mut a, 100, &mut rng).unwrap()
        });
        let mut rng = ChaCha20Rng::seed_from_u64(24);
        let r = SimplestOt.receive_random(&mut b, 100, &mut rng).unwrap();
        let s = t.join().unwrap();
        for i in 0..100 {
            let c = usize::from(r.choices[i]);
            assert_eq!(s.messages[i][c], r.messages[i]);
            assert_ne!(s.messages[i][1 - c], r.messages[i]);
        }
    }

    /// The artifact's PVW08 baseline leaves its encryption randomness unset, so
    /// its ciphertexts decode without any key. Here the transcript alone, or
    /// any key not derived from the receiver's secret `x`, decodes neither
    /// message, while the receiver's own key decodes exactly its choice.
    #[test]
    fn messages_do_not_decode_without_the_receivers_key() {
        let n = 16;
        let msgs: Vec<[Block32; 2]> = (0..n)
            .map(|i| [[i as u8; 32], [0x80 | i as u8; 32]])
            .collect();
        let choices: Vec<u8> = (0..n).map(|i| (i % 2) as u8).collect();
        let (a, b) = memory_pair();
        let (log_tx, log_rx) = mpsc::channel();
        let mut a = Tap {
            inner: a,
            log: log_tx.clone(),
        };
        let mut b = Tap {
            inner: b,
            log: log_tx,
        };
        let m2 = msgs.clone();
        let t = std::thread::spawn(move || {
            let mut rng = ChaCha20Rng::seed_from_u64(25);
            SimplestOt.send(&mut a, &m2, &mut rng).unwrap();
        });
        let mut rng = ChaCha20Rng::seed_from_u64(26);
        let got = SimplestOt.receive(&mut b, &choices, &mut rng).unwrap();
        t.join().unwrap();
        let log: Vec<Vec<u8>> = log_rx.try_iter().collect();
        // Transcript: S, then the receiver's points, then the ciphertexts.
        let s_bytes: [u8; 32] = log[0].clone().try_into().unwrap();
        let points = &log[1];
        let cts = &log[2];
        let big_s = decode_point(&s_bytes, "S").unwrap();
        for i in 0..n {
            assert_eq!(got[i], msgs[i][usize::from(choices[i])]);
            let rb: [u8; 32] = points[32 * i..32 * i + 32].try_into().unwrap();
            let r = decode_point(&rb, "R").unwrap();
            let e0: [u8; 32] = cts[64 * i..64 * i + 32].try_into().unwrap();
            let e1: [u8; 32] = cts[64 * i + 32..64 * i + 64].try_into().unwrap();
            // Ciphertexts are not the plaintexts.
            assert_ne!(e0, msgs[i][0]);
            assert_ne!(e1, msgs[i][1]);
            // Keys an eavesdropper can build from public values.
            let mut guesses = vec![[0u8; 32]];
            for p in [
                big_s,
                r,
                r - big_s,
                RISTRETTO_BASEPOINT_POINT,
                RistrettoPoint::default(),
            ] {
                guesses.push(derive_key(i as u64, &s_bytes, &rb, &p));
            }
            // A receiver with a fresh, wrong secret.
            let mut prg = Prg::from_seed(&[i as u8; 32]);
            let x_wrong = random_scalar(&mut prg);
            guesses.push(derive_key(i as u64, &s_bytes, &rb, &(x_wrong * big_s)));
            for g in &guesses {
                for (e, m) in [(&e0, &msgs[i][0]), (&e1, &msgs[i][1])] {
                    assert_ne!(&xor_block(e, g), m, "decoded without the key");
                }
            }
        }
    }

    #[test]
    fn malformed_points_are_rejected() {
        assert!(matches!(
            decode_point(&[0u8; 32], "p"),
            Err(Error::Abort(_))
        ));
        assert!(matches!(
            decode_point(&[0xffu8; 32], "p"),
            Err(Error::Malformed { .. })
        ));
        assert!(matches!(
            decode_point(&[1u8; 31], "p"),
            Err(Error::LengthMismatch { .. })
        ));
        // A sender that sends garbage makes the receiver fail cleanly.
        let (mut a, mut b) = memory_pair();
        a.send(vec![0xff; 32]).unwrap();
        let mut rng = ChaCha20Rng::seed_from_u64(27);
        assert!(SimplestOt.receive(&mut b, &[0, 1], &mut rng).is_err());
    }
}
