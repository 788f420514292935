//! Local end-to-end runs: both parties in two threads over an in-memory
//! channel, timed, with the traffic counted. The CLI builds on
//! [`run_local`]; the criterion benches in `benches/` use the same paths.

use crate::channel::{memory_pair, MemoryChannel};
use crate::ec::SimplestOt;
use crate::error::{Error, Result};
use crate::extension::softspoken::DEFAULT_K;
use crate::extension::{
    ConsistencyCheck, IknpReceiver, IknpSender, SoftSpokenReceiver, SoftSpokenSender,
};
use crate::rlwe::{NoiseDistribution, RlweOt, RlweRot};
use crate::rotted::Rotted;
use crate::{
    Channel, OtBlock, OtReceiver, OtSender, RotReceiver, RotReceiverOutputs, RotSender,
    RotSenderOutputs,
};
use rand_chacha::ChaCha12Rng;
use rand_core::{RngCore, SeedableRng};
use std::time::Instant;

/// The protocols [`run_local`] can run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Protocol {
    /// The ROTed lattice random OT (3 messages).
    Rot,
    /// The BDGM19 lattice chosen-message OT (4 messages).
    Ot,
    /// BDGM19 used as a random OT.
    Rotted,
    /// Simplest OT on Ristretto255 (chosen messages).
    Ec,
    /// IKNP extension seeded by 128 lattice ROTs.
    Iknp,
    /// IKNP with the KOS15 consistency check.
    Kos,
    /// Semi-honest SoftSpokenOT with k = 4.
    SoftSpoken,
}

impl Protocol {
    /// Every protocol, in the order the CLI lists them.
    pub const ALL: [Protocol; 7] = [
        Protocol::Rot,
        Protocol::Ot,
        Protocol::Rotted,
        Protocol::Ec,
        Protocol::Iknp,
        Protocol::Kos,
        Protocol::SoftSpoken,
    ];

    /// The CLI name.
    pub fn name(self) -> &'static str {
        match self {
            Protocol::Rot => "rot",
            Protocol::Ot => "ot",
            Protocol::Rotted => "rotted",
            Protocol::Ec => "ec",
            Protocol::Iknp => "iknp",
            Protocol::Kos => "kos",
            Protocol::SoftSpoken => "softspoken",
        }
    }
}

impl core::str::FromStr for Protocol {
    type Err = Error;
    fn from_str(s: &str) -> Result<Self> {
        Protocol::ALL
            .into_iter()
            .find(|p| p.name() == s)
            .ok_or(Error::InvalidArgument(
                "unknown protocol (rot, ot, rotted, ec, iknp, kos, softspoken)",
            ))
    }
}

/// Timing and traffic of one local run.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct OtBenchReport {
    /// What ran.
    pub protocol: Protocol,
    /// Number of OTs.
    pub count: usize,
    /// Wall-clock seconds for both parties (two threads), setup included.
    pub seconds: f64,
    /// Microseconds per OT.
    pub us_per_ot: f64,
    /// OTs per second.
    pub ots_per_sec: f64,
    /// Bytes sent by both parties together, per OT.
    pub bytes_per_ot: f64,
    /// Bytes sent by the sender.
    pub sender_bytes: u64,
    /// Bytes sent by the receiver.
    pub receiver_bytes: u64,
}

fn os_rng() -> Result<ChaCha12Rng> {
    ChaCha12Rng::try_from_os_rng().map_err(|_| Error::Randomness)
}

fn verify_rot<B: OtBlock + PartialEq>(
    s: &RotSenderOutputs<B>,
    r: &RotReceiverOutputs<B>,
) -> Result<()> {
    let ok = s.messages.len() == r.messages.len()
        && s.messages
            .iter()
            .zip(r.messages.iter().zip(r.choices.iter()))
            .all(|(pair, (m, &c))| pair[usize::from(c & 1)] == *m);
    if ok {
        Ok(())
    } else {
        Err(Error::InvalidArgument(
            "local run produced mismatching outputs",
        ))
    }
}

type Job<T> = Box<dyn FnOnce(&mut MemoryChannel) -> Result<T> + Send>;

/// Runs the sender job in a second thread and the receiver in this one.
fn two_party<S: Send + 'static, R>(
    sender: Job<S>,
    receiver: impl FnOnce(&mut MemoryChannel) -> Result<R>,
) -> Result<(S, R, f64, u64, u64)> {
    let (mut a, mut b) = memory_pair();
    let start = Instant::now();
    let handle = std::thread::spawn(move || {
        let out = sender(&mut a);
        (out, a.stats().bytes_sent)
    });
    let r = receiver(&mut b);
    let receiver_bytes = b.stats().bytes_sent;
    drop(b);
    let (s, sender_bytes) = handle
        .join()
        .map_err(|_| Error::Channel("sender thread panicked"))?;
    let seconds = start.elapsed().as_secs_f64();
    Ok((s?, r?, seconds, sender_bytes, receiver_bytes))
}

fn random_rot<S, R>(mut sender: S, mut receiver: R, count: usize) -> Result<(f64, u64, u64)>
where
    S: RotSender + Send + 'static,
    R: RotReceiver<Block = S::Block>,
    S::Block: PartialEq,
{
    let mut srng = os_rng()?;
    let mut rrng = os_rng()?;
    let (s, r, secs, sb, rb) = two_party(
        Box::new(move |ch| sender.send_random(ch, count, &mut srng)),
        |ch| receiver.receive_random(ch, count, &mut rrng),
    )?;
    verify_rot(&s, &r)?;
    Ok((secs, sb, rb))
}

fn chosen_ot<S, R>(mut sender: S, mut receiver: R, count: usize) -> Result<(f64, u64, u64)>
where
    S: OtSender + Send + 'static,
    R: OtReceiver<Block = S::Block>,
    S::Block: PartialEq,
{
    let mut srng = os_rng()?;
    let mut rrng = os_rng()?;
    let mut messages = vec![[S::Block::default(); 2]; count];
    for m in messages.iter_mut() {
        srng.fill_bytes(m[0].as_mut());
        srng.fill_bytes(m[1].as_mut());
    }
    let choices: Vec<u8> = (0..count).map(|_| (rrng.next_u32() & 1) as u8).collect();
    let sent = messages.clone();
    let (_, got, secs, sb, rb) = two_party(
        Box::new(move |ch| sender.send(ch, &sent, &mut srng)),
        |ch| receiver.receive(ch, &choices, &mut rrng),
    )?;
    let ok = got
        .iter()
        .zip(messages.iter().zip(choices.iter()))
        .all(|(g, (m, &c))| *g == m[usize::from(c)]);
    if !ok {
        return Err(Error::InvalidArgument(
            "local run produced mismatching outputs",
        ));
    }
    Ok((secs, sb, rb))
}

/// Runs `count` OTs of `protocol` locally with the default noise.
pub fn run_local(protocol: Protocol, count: usize) -> Result<OtBenchReport> {
    run_local_with(protocol, count, NoiseDistribution::default())
}

/// Runs `count` OTs of `protocol` locally, both parties in two threads over
/// an in-memory channel; checks the outputs and reports time and traffic.
pub fn run_local_with(
    protocol: Protocol,
    count: usize,
    noise: NoiseDistribution,
) -> Result<OtBenchReport> {
    if count == 0 {
        return Err(Error::InvalidArgument("count must be positive"));
    }
    let (seconds, sender_bytes, receiver_bytes) = match protocol {
        Protocol::Rot => random_rot(RlweRot { noise }, RlweRot { noise }, count)?,
        Protocol::Ot => chosen_ot(RlweOt { noise }, RlweOt { noise }, count)?,
        Protocol::Rotted => random_rot(Rotted(RlweOt { noise }), Rotted(RlweOt { noise }), count)?,
        Protocol::Ec => chosen_ot(SimplestOt, SimplestOt, count)?,
        Protocol::Iknp => random_rot(
            IknpSender::new(RlweRot { noise }),
            IknpReceiver::new(RlweRot { noise }),
            count,
        )?,
        Protocol::Kos => random_rot(
            IknpSender::with_check(RlweRot { noise }, ConsistencyCheck::Kos),
            IknpReceiver::with_check(RlweRot { noise }, ConsistencyCheck::Kos),
            count,
        )?,
        Protocol::SoftSpoken => random_rot(
            SoftSpokenSender::new(RlweRot { noise }, DEFAULT_K)?,
            SoftSpokenReceiver::new(RlweRot { noise }, DEFAULT_K)?,
            count,
        )?,
    };
    let n = count as f64;
    Ok(OtBenchReport {
        protocol,
        count,
        seconds,
        us_per_ot: seconds * 1e6 / n,
        ots_per_sec: n / seconds,
        bytes_per_ot: (sender_bytes + receiver_bytes) as f64 / n,
        sender_bytes,
        receiver_bytes,
    })
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

    #[test]
    fn every_protocol_runs_and_reports() {
        for p in Protocol::ALL {
            let count = if matches!(p, Protocol::Iknp | Protocol::Kos | Protocol::SoftSpoken) {
                10_000
            } else {
                20
            };
            let r = run_local(p, count).unwrap();
            assert_eq!(r.count, count);
            assert!(r.us_per_ot > 0.0 && r.ots_per_sec > 0.0);
            let expected = match p {
                Protocol::Rot => Some(2144.0),
                Protocol::Ot | Protocol::Rotted => Some(2240.0),
                Protocol::Ec => Some(96.0 + 32.0 / count as f64),
                _ => None,
            };
            if let Some(e) = expected {
                assert!(
                    (r.bytes_per_ot - e).abs() < 1e-9,
                    "{p:?}: {}",
                    r.bytes_per_ot
                );
            }
        }
        assert!("simplest".parse::<Protocol>().is_err());
        assert_eq!(
            "softspoken".parse::<Protocol>().unwrap(),
            Protocol::SoftSpoken
        );
        assert_eq!("iknp".parse::<Protocol>().unwrap(), Protocol::Iknp);
        assert!(run_local(Protocol::Rot, 0).is_err());
    }
}
