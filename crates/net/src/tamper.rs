//! Deliberate cheating for tests and demonstrations (`triskele aes --tamper P`).
//!
//! A [`Tamper`] in [`NetOptions::tamper`](crate::NetOptions::tamper) makes the network of one
//! party flip exactly one bit of exactly one message that party sends: the `message`-th send
//! (counted from 0) among those accounted to `phase` (and, if given, going in `direction`). The
//! bit position is derived from `seed` and reduced modulo the bit length of that message.
//! Every other party's network ignores the option, so the same options can be given to all
//! three parties. What was flipped is recorded in the shared [`TamperLog`].
//!
//! This is a model of an actively corrupt party that deviates in one message: the malicious
//! protocols must abort, the semi-honest ones give a wrong (or, by luck, correct) output.

use core::fmt;
use std::sync::{Arc, OnceLock};

use triskele_share::{Direction, PartyId};

use crate::stats::Phase;

/// What was flipped.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Tampered {
    /// The cheating party.
    pub party: PartyId,
    /// The phase the message was sent in.
    pub phase: Phase,
    /// Where it went.
    pub direction: Direction,
    /// Index of the message among the party's matching sends (0-based).
    pub message: u64,
    /// Payload length of the message in bytes.
    pub len: usize,
    /// The flipped bit: byte offset in the payload and bit within that byte (0 = least
    /// significant).
    pub byte: usize,
    pub bit: u8,
}

/// A shared record of the flip (set at most once). Clones share the record; two logs compare
/// equal when they are the same record.
#[derive(Clone, Default)]
pub struct TamperLog(Arc<OnceLock<Tampered>>);

impl TamperLog {
    /// The flip, if it has happened.
    pub fn get(&self) -> Option<Tampered> {
        self.0.get().copied()
    }

    fn set(&self, t: Tampered) {
        // A second flip cannot happen (one message per run); ignore it if it somehow did.
        let _ = self.0.set(t);
    }
}

impl PartialEq for TamperLog {
    fn eq(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
    }
}

impl Eq for TamperLog {}

impl fmt::Debug for TamperLog {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("TamperLog").field(&self.get()).finish()
    }
}

/// Flip one bit of one message sent by `party` (see the module documentation).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Tamper {
    /// The cheating party.
    pub party: PartyId,
    /// The phase whose sends are counted.
    pub phase: Phase,
    /// Count only sends in this direction (`None`: both).
    pub direction: Option<Direction>,
    /// Index of the message to corrupt among the counted sends (0-based).
    pub message: u64,
    /// Selects the bit within the message.
    pub seed: u64,
    /// Where the flip is recorded.
    pub log: TamperLog,
}

/// SplitMix64 finaliser: a fixed, well-mixed function of the seed.
fn mix(mut z: u64) -> u64 {
    z = z.wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

impl Tamper {
    /// Flip a bit of the `message`-th send of `party` in `phase` (towards `direction` if
    /// given); the bit position comes from `seed`.
    pub fn new(
        party: PartyId,
        phase: Phase,
        direction: Option<Direction>,
        message: u64,
        seed: u64,
    ) -> Tamper {
        Tamper {
            party,
            phase,
            direction,
            message,
            seed,
            log: TamperLog::default(),
        }
    }

    /// The CLI's `--tamper P --tamper-seed N`: one of the first `messages` sends of `party` in
    /// `phase` (both directions), message index and bit position chosen deterministically
    /// from `seed`. `messages` should be the number of such sends in the run (at least 1).
    pub fn from_seed(party: PartyId, seed: u64, phase: Phase, messages: u64) -> Tamper {
        let message = mix(seed) % messages.max(1);
        Tamper::new(party, phase, None, message, mix(seed ^ 0x5bd1_e995))
    }

    /// The flip, if it has happened.
    pub fn tampered(&self) -> Option<Tampered> {
        self.log.get()
    }
}

/// Per-network state: counts matching sends and applies the flip.
#[derive(Debug, Default)]
pub(crate) struct TamperState {
    counted: u64,
}

impl TamperState {
    /// Applies `t` (if it concerns this send) to `payload`.
    pub(crate) fn on_send(
        &mut self,
        t: &Tamper,
        party: PartyId,
        phase: Phase,
        dir: Direction,
        payload: &mut [u8],
    ) {
        if t.party != party || t.phase != phase || t.direction.is_some_and(|d| d != dir) {
            return;
        }
        let index = self.counted;
        self.counted += 1;
        if index != t.message || payload.is_empty() {
            return;
        }
        let bits = (payload.len() as u64).saturating_mul(8);
        let pos = mix(t.seed) % bits;
        let byte = (pos / 8) as usize;
        let bit = (pos % 8) as u8;
        if let Some(b) = payload.get_mut(byte) {
            *b ^= 1 << bit;
            t.log.set(Tampered {
                party,
                phase,
                direction: dir,
                message: index,
                len: payload.len(),
                byte,
                bit,
            });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flips_exactly_the_chosen_message() {
        let t = Tamper::new(PartyId::P2, Phase::Online, Some(Direction::Prev), 1, 7);
        let mut st = TamperState::default();
        let mut msgs = [vec![0u8; 8], vec![0u8; 8], vec![0u8; 8]];
        // Wrong party, phase or direction: not counted.
        st.on_send(
            &t,
            PartyId::P1,
            Phase::Online,
            Direction::Prev,
            &mut msgs[0],
        );
        st.on_send(
            &t,
            PartyId::P2,
            Phase::Finalize,
            Direction::Prev,
            &mut msgs[0],
        );
        st.on_send(
            &t,
            PartyId::P2,
            Phase::Online,
            Direction::Next,
            &mut msgs[0],
        );
        assert_eq!(msgs[0], vec![0u8; 8]);
        for m in msgs.iter_mut() {
            st.on_send(&t, PartyId::P2, Phase::Online, Direction::Prev, m);
        }
        let flipped: Vec<u32> = msgs
            .iter()
            .map(|m| m.iter().map(|b| b.count_ones()).sum())
            .collect();
        assert_eq!(flipped, [0, 1, 0]);
        let rec = t.tampered().unwrap_or_else(|| unreachable!());
        assert_eq!(rec.message, 1);
        assert_eq!(msgs[1][rec.byte], 1 << rec.bit);
    }

    #[test]
    fn from_seed_is_deterministic_and_in_range() {
        for seed in 0..100 {
            let a = Tamper::from_seed(PartyId::P1, seed, Phase::Online, 30);
            let b = Tamper::from_seed(PartyId::P1, seed, Phase::Online, 30);
            assert_eq!((a.message, a.seed), (b.message, b.seed));
            assert!(a.message < 30);
        }
    }
}
