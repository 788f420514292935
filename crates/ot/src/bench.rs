//! Local end-to-end runs: both parties in two threads over an in-memory
//! channel, timed, with the traffic counted. The CLI builds on
//! [`run_local`]; the criterion benches in `benches/` use the same paths.

use crate::channel::memory_pair;
use crate::ec::SimplestOt;
use crate::error::{Error, Result};
use crate::extension::softspoken::DEFAULT_K;
use crate::extension::{
    ConsistencyCheck, IknpReceiver, IknpSender, SoftSpokenReceiver, SoftSpokenSender,
};
use crate::rlwe::{NoiseDistribution, RlweOt, RlweRot};
use crate::rotted::Rotted;
use crate::{Channel, ChannelStats, OtBlock, OtReceiver, OtSender, RotReceiver, RotSender};
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
    /// SoftSpokenOT with k = 4 and the SoftSpokenOT consistency check
    /// (secure against a malicious receiver).
    SoftSpokenMal,
}

impl Protocol {
    /// Every protocol, in the order the CLI lists them.
    pub const ALL: [Protocol; 8] = [
        Protocol::Rot,
        Protocol::Ot,
        Protocol::Rotted,
        Protocol::Ec,
        Protocol::Iknp,
        Protocol::Kos,
        Protocol::SoftSpoken,
        Protocol::SoftSpokenMal,
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
            Protocol::SoftSpokenMal => "softspoken-mal",
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
                "unknown protocol (rot, ot, rotted, ec, iknp, kos, softspoken, softspoken-mal)",
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
    /// Seconds of the slower party's side of the protocol (two threads; the parameter
    /// agreement and the output check of [`run_party`] are not timed).
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
    // Both sides of `run_party` over an in-memory channel: one dispatch for local and
    // networked runs, and the same output check.
    let (mut a, mut b) = memory_pair();
    let sender =
        std::thread::spawn(move || run_party(protocol, Role::Sender, &mut a, count, noise));
    let r = run_party(protocol, Role::Receiver, &mut b, count, noise);
    drop(b);
    let s = sender
        .join()
        .map_err(|_| Error::Channel("sender thread panicked"))??;
    let r = r?;
    let (seconds, sender_bytes, receiver_bytes) =
        (s.seconds.max(r.seconds), s.bytes_sent, r.bytes_sent);
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

/// Which side of a two-party run this process plays.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    /// The OT sender (holds both messages).
    Sender,
    /// The OT receiver (holds a choice bit and one message).
    Receiver,
}

impl Role {
    /// The CLI name.
    pub fn name(self) -> &'static str {
        match self {
            Role::Sender => "sender",
            Role::Receiver => "receiver",
        }
    }
}

/// One party's timing and traffic of a run over a real channel ([`run_party`]).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct OtPartyReport {
    /// What ran.
    pub protocol: Protocol,
    /// This party's side.
    pub role: Role,
    /// Number of OTs.
    pub count: usize,
    /// Wall-clock seconds of this party's side of the protocol (the parameter agreement
    /// before and the output check after are not timed).
    pub seconds: f64,
    /// Microseconds per OT.
    pub us_per_ot: f64,
    /// OTs per second.
    pub ots_per_sec: f64,
    /// Payload bytes this party sent in the protocol.
    pub bytes_sent: u64,
    /// Payload bytes this party received in the protocol.
    pub bytes_received: u64,
}

/// Runs one side of a random OT, then the output check ([`check_as_sender`],
/// [`check_as_receiver`]); returns the seconds of the protocol itself and the channel's
/// counters when it ended. The outputs go into buffers allocated and written once before the
/// clock starts (the protocol fills buffers it is given, [`RotSender::send_random_into`]: the
/// time is the protocol's, not the kernel's first touch of fresh pages).
fn side_random<S, R, C>(
    role: Role,
    mut s: S,
    mut r: R,
    ch: &mut C,
    count: usize,
) -> Result<(f64, ChannelStats)>
where
    S: RotSender,
    R: RotReceiver<Block = S::Block>,
    C: Channel + ?Sized,
{
    let mut rng = os_rng()?;
    match role {
        Role::Sender => {
            let mut out = vec![[S::Block::default(); 2]; count];
            for m in out.iter_mut().flatten() {
                m.as_mut().fill(0xa5);
            }
            let start = Instant::now();
            s.send_random_into(ch, &mut out, &mut rng)?;
            let secs = start.elapsed().as_secs_f64();
            let stats = ch.stats();
            check_as_sender(ch, &out)?;
            Ok((secs, stats))
        }
        Role::Receiver => {
            let mut choices = vec![0xa5u8; count];
            let mut out = vec![S::Block::default(); count];
            for m in out.iter_mut() {
                m.as_mut().fill(0xa5);
            }
            let start = Instant::now();
            r.receive_random_into(ch, &mut choices, &mut out, &mut rng)?;
            let secs = start.elapsed().as_secs_f64();
            let stats = ch.stats();
            check_as_receiver(ch, &choices, &out)?;
            Ok((secs, stats))
        }
    }
}

/// Runs one side of a chosen-message OT on random messages and choices (drawn before the
/// clock starts), then the output check; returns the seconds of the protocol itself and the
/// channel's counters when it ended.
fn side_chosen<S, R, C>(
    role: Role,
    mut s: S,
    mut r: R,
    ch: &mut C,
    count: usize,
) -> Result<(f64, ChannelStats)>
where
    S: OtSender,
    R: OtReceiver<Block = S::Block>,
    C: Channel + ?Sized,
{
    let mut rng = os_rng()?;
    match role {
        Role::Sender => {
            let mut messages = vec![[S::Block::default(); 2]; count];
            for m in messages.iter_mut() {
                rng.fill_bytes(m[0].as_mut());
                rng.fill_bytes(m[1].as_mut());
            }
            let start = Instant::now();
            s.send(ch, &messages, &mut rng)?;
            let secs = start.elapsed().as_secs_f64();
            let stats = ch.stats();
            check_as_sender(ch, &messages)?;
            Ok((secs, stats))
        }
        Role::Receiver => {
            let choices: Vec<u8> = (0..count).map(|_| (rng.next_u32() & 1) as u8).collect();
            let start = Instant::now();
            let got = r.receive(ch, &choices, &mut rng)?;
            let secs = start.elapsed().as_secs_f64();
            let stats = ch.stats();
            check_as_receiver(ch, &choices, &got)?;
            Ok((secs, stats))
        }
    }
}

/// The digest both sides compute over the chosen messages (fed to BLAKE3 in pieces of a few
/// kilobytes, not message by message).
fn chosen_digest<'a>(msgs: impl Iterator<Item = &'a [u8]>) -> [u8; 32] {
    let mut h = blake3::Hasher::new();
    h.update(b"triskele ot bench output check");
    let mut buf = Vec::with_capacity(8192);
    for m in msgs {
        if buf.len() + m.len() > buf.capacity() {
            h.update(&buf);
            buf.clear();
        }
        buf.extend_from_slice(m);
    }
    h.update(&buf);
    *h.finalize().as_bytes()
}

const MISMATCH: Error = Error::InvalidArgument("the two parties' OT outputs do not match");

/// The receiver's part of the untimed output check after a run: it reveals its choice bits
/// (the outputs are random benchmark data), the sender answers with a digest of the chosen
/// messages, the receiver compares and sends its verdict, so both sides fail on a mismatch.
fn check_as_receiver<C: Channel + ?Sized, B: OtBlock>(
    ch: &mut C,
    choices: &[u8],
    msgs: &[B],
) -> Result<()> {
    ch.send(choices.to_vec())?;
    let theirs = ch.recv()?;
    let ok = theirs.as_slice() == chosen_digest(msgs.iter().map(|m| m.as_ref()));
    ch.send(vec![u8::from(ok)])?;
    ok.then_some(()).ok_or(MISMATCH)
}

/// The sender's part of the output check ([`check_as_receiver`]).
fn check_as_sender<C: Channel + ?Sized, B: OtBlock>(ch: &mut C, pairs: &[[B; 2]]) -> Result<()> {
    let choices = ch.recv()?;
    if choices.len() != pairs.len() || choices.iter().any(|c| *c > 1) {
        return Err(Error::Malformed {
            what: "output check",
            detail: "choice bits of the wrong length or not 0/1",
        });
    }
    let chosen = pairs
        .iter()
        .zip(&choices)
        .map(|(m, c)| m[usize::from(*c)].as_ref());
    ch.send(chosen_digest(chosen).to_vec())?;
    match ch.recv()?.as_slice() {
        [1] => Ok(()),
        _ => Err(MISMATCH),
    }
}

/// Runs this party's side of `count` OTs of `protocol` over `ch` (a real two-party channel,
/// e.g. TLS between two processes): agrees on the parameters with the peer, runs the
/// protocol (timed), then checks the outputs against the peer's (untimed: the receiver
/// reveals its choice bits, the sender answers with a hash of the chosen messages, and both
/// fail on a mismatch). The two processes must pass the same protocol, count and noise.
pub fn run_party<C: Channel + ?Sized>(
    protocol: Protocol,
    role: Role,
    ch: &mut C,
    count: usize,
    noise: NoiseDistribution,
) -> Result<OtPartyReport> {
    if count == 0 {
        return Err(Error::InvalidArgument("count must be positive"));
    }
    let params = blake3::hash(format!("{} {count} {noise:?}", protocol.name()).as_bytes());
    ch.send(params.as_bytes().to_vec())?;
    let theirs = ch.recv()?;
    if theirs.as_slice() != params.as_bytes() {
        return Err(Error::ParameterMismatch("protocol, --count or --noise"));
    }
    let before = ch.stats();
    let (seconds, after) = match protocol {
        Protocol::Rot => side_random(role, RlweRot { noise }, RlweRot { noise }, ch, count)?,
        Protocol::Ot => side_chosen(role, RlweOt { noise }, RlweOt { noise }, ch, count)?,
        Protocol::Rotted => side_random(
            role,
            Rotted(RlweOt { noise }),
            Rotted(RlweOt { noise }),
            ch,
            count,
        )?,
        Protocol::Ec => side_chosen(role, SimplestOt, SimplestOt, ch, count)?,
        Protocol::Iknp => side_random(
            role,
            IknpSender::new(RlweRot { noise }),
            IknpReceiver::new(RlweRot { noise }),
            ch,
            count,
        )?,
        Protocol::Kos => side_random(
            role,
            IknpSender::with_check(RlweRot { noise }, ConsistencyCheck::Kos),
            IknpReceiver::with_check(RlweRot { noise }, ConsistencyCheck::Kos),
            ch,
            count,
        )?,
        Protocol::SoftSpoken => side_random(
            role,
            SoftSpokenSender::new(RlweRot { noise }, DEFAULT_K)?,
            SoftSpokenReceiver::new(RlweRot { noise }, DEFAULT_K)?,
            ch,
            count,
        )?,
        Protocol::SoftSpokenMal => side_random(
            role,
            SoftSpokenSender::with_check(
                RlweRot { noise },
                DEFAULT_K,
                ConsistencyCheck::SoftSpoken,
            )?,
            SoftSpokenReceiver::with_check(
                RlweRot { noise },
                DEFAULT_K,
                ConsistencyCheck::SoftSpoken,
            )?,
            ch,
            count,
        )?,
    };
    let n = count as f64;
    Ok(OtPartyReport {
        protocol,
        role,
        count,
        seconds,
        us_per_ot: seconds * 1e6 / n,
        ots_per_sec: n / seconds,
        bytes_sent: after.bytes_sent - before.bytes_sent,
        bytes_received: after.bytes_received - before.bytes_received,
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
            let count = if matches!(
                p,
                Protocol::Iknp | Protocol::Kos | Protocol::SoftSpoken | Protocol::SoftSpokenMal
            ) {
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
                // 128 base ROTs (274432 bytes), 4096 bytes of setup, 31
                // correction rows of 10112 bits.
                Protocol::SoftSpoken => Some((274_432 + 4096 + 31 * 1264) as f64 / count as f64),
                // The same with the check: 2048 more setup bytes, 128 more
                // columns, a 2064-byte proof.
                Protocol::SoftSpokenMal => {
                    Some((274_432 + 6144 + 31 * 1280 + 2064) as f64 / count as f64)
                }
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
        assert_eq!(
            "softspoken-mal".parse::<Protocol>().unwrap(),
            Protocol::SoftSpokenMal
        );
        assert_eq!("iknp".parse::<Protocol>().unwrap(), Protocol::Iknp);
        assert!(run_local(Protocol::Rot, 0).is_err());
    }

    /// Both sides of every protocol through [`run_party`], each on its own thread over the
    /// in-memory channel: the outputs check passes, traffic is the local run's.
    #[test]
    fn run_party_sides_agree_for_every_protocol() {
        for p in Protocol::ALL {
            let count = if matches!(
                p,
                Protocol::Iknp | Protocol::Kos | Protocol::SoftSpoken | Protocol::SoftSpokenMal
            ) {
                5_000
            } else {
                8
            };
            let noise = NoiseDistribution::default();
            let (mut a, mut b) = memory_pair();
            let h = std::thread::spawn(move || run_party(p, Role::Sender, &mut a, count, noise));
            let r = run_party(p, Role::Receiver, &mut b, count, noise).unwrap();
            let s = h.join().unwrap().unwrap();
            assert_eq!((s.role, r.role), (Role::Sender, Role::Receiver));
            assert_eq!(s.bytes_sent, r.bytes_received, "{p:?}");
            assert_eq!(s.bytes_received, r.bytes_sent, "{p:?}");
            if p == Protocol::Rot {
                assert_eq!((s.bytes_sent + r.bytes_sent) as f64 / count as f64, 2144.0);
            }
        }
    }

    #[test]
    fn run_party_refuses_different_parameters() {
        let (mut a, mut b) = memory_pair();
        let noise = NoiseDistribution::default();
        let h =
            std::thread::spawn(move || run_party(Protocol::Rot, Role::Sender, &mut a, 4, noise));
        let r = run_party(Protocol::Rot, Role::Receiver, &mut b, 5, noise);
        assert!(matches!(r, Err(Error::ParameterMismatch(_))));
        assert!(matches!(
            h.join().unwrap(),
            Err(Error::ParameterMismatch(_))
        ));
    }

    /// A sender whose outputs differ from what the receiver got makes both sides fail the
    /// output check; matching outputs pass; malformed choice bits are refused.
    #[test]
    fn output_check_catches_a_mismatch() {
        let pairs = vec![[[1u8; 16], [2u8; 16]]; 3];
        let (mut a, mut b) = memory_pair();
        let p = pairs.clone();
        let h = std::thread::spawn(move || check_as_sender(&mut a, &p));
        let wrong = [[1u8; 16], [2; 16], [1; 16]];
        assert!(check_as_receiver(&mut b, &[0, 1, 1], &wrong).is_err());
        assert!(h.join().unwrap().is_err());
        let (mut a, mut b) = memory_pair();
        let p = pairs.clone();
        let h = std::thread::spawn(move || check_as_sender(&mut a, &p));
        let right = [[2u8; 16], [1; 16], [2; 16]];
        check_as_receiver(&mut b, &[1, 0, 1], &right).unwrap();
        h.join().unwrap().unwrap();
        let (mut a, mut b) = memory_pair();
        let h = std::thread::spawn(move || check_as_sender(&mut a, &pairs));
        b.send(vec![0, 2, 1]).unwrap();
        assert!(matches!(h.join().unwrap(), Err(Error::Malformed { .. })));
    }

    /// The digest does not depend on how the messages are cut into pieces.
    #[test]
    fn chosen_digest_is_of_the_concatenation() {
        let bytes: Vec<u8> = (0..20_000u32).map(|i| (i * 7 + i / 255) as u8).collect();
        let whole = chosen_digest(core::iter::once(&bytes[..]));
        for piece in [1usize, 16, 32, 100, 8192, 9000] {
            assert_eq!(chosen_digest(bytes.chunks(piece)), whole, "{piece}");
        }
        let mut h = blake3::Hasher::new();
        h.update(b"triskele ot bench output check");
        h.update(&bytes);
        assert_eq!(whole, *h.finalize().as_bytes());
    }
}
