//! The ROTed messages: layouts, encodings and length-checked decoding.

use super::Block32;
use crate::error::{Error, Result};
use crate::rlwe::encode::{pack_poly, unpack_poly_into, HINT_BYTES, POLY_BYTES};
use crate::rlwe::reconcile::Hint;
use crate::rlwe::ring::{NttPoly, N};
use crate::rlwe::SEED_BYTES;

/// Receiver to sender: the shifted sample, the seed, the commitment to the masks.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RotMsg1 {
    /// `a s_R + 2 e_R - b H(seed)`, NTT domain.
    pub p: NttPoly,
    /// Seed of the hashed polynomial.
    pub seed: [u8; SEED_BYTES],
    /// `H(seed, S_0, S_1)`.
    pub commitment: Block32,
}

/// Sender to receiver: its sample, both hints, the mask, the swapped
/// confirmation hashes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RotMsg2 {
    /// `a s_S + 2 e_S`, NTT domain.
    pub p: NttPoly,
    /// Reconciliation hints of branch 0 and branch 1.
    pub hints: [Hint; 2],
    /// The sender's mask `u`.
    pub mask: Block32,
    /// Key-confirmation hashes, swapped by the sender's random flip.
    pub confirmations: [Block32; 2],
}

/// Receiver to sender: the opening of the two masks.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RotMsg3 {
    /// `S_0, S_1`.
    pub openings: [Block32; 2],
}

impl RotMsg1 {
    /// Encoded length in bytes (960).
    pub const LEN: usize = POLY_BYTES + SEED_BYTES + 32;

    /// Appends the encoding to `out`.
    pub fn encode(&self, out: &mut Vec<u8>) {
        pack_poly(&self.p, out);
        out.extend_from_slice(&self.seed);
        out.extend_from_slice(&self.commitment);
    }

    /// Decodes exactly [`Self::LEN`] bytes.
    pub fn decode(b: &[u8]) -> Result<Self> {
        let mut m = Self::zero();
        m.decode_into(b)?;
        Ok(m)
    }

    /// All zero, to be overwritten (the batch protocols reuse one message).
    pub(crate) fn zero() -> Self {
        RotMsg1 {
            p: NttPoly([0; N]),
            seed: [0; SEED_BYTES],
            commitment: [0; 32],
        }
    }

    /// [`Self::decode`] into `self`, in place.
    pub(crate) fn decode_into(&mut self, b: &[u8]) -> Result<()> {
        check_len(b, Self::LEN, "ROT message 1")?;
        let (p, rest) = b.split_at(POLY_BYTES);
        let (seed, c) = rest.split_at(SEED_BYTES);
        unpack_poly_into(p, "ROT message 1 polynomial", &mut self.p)?;
        self.seed = to_array(seed);
        self.commitment = to_array(c);
        Ok(())
    }
}

impl RotMsg2 {
    /// Encoded length in bytes (1120).
    pub const LEN: usize = POLY_BYTES + 2 * HINT_BYTES + 32 + 64;

    /// Appends the encoding to `out`.
    pub fn encode(&self, out: &mut Vec<u8>) {
        pack_poly(&self.p, out);
        out.extend_from_slice(self.hints[0].as_bytes());
        out.extend_from_slice(self.hints[1].as_bytes());
        out.extend_from_slice(&self.mask);
        out.extend_from_slice(&self.confirmations[0]);
        out.extend_from_slice(&self.confirmations[1]);
    }

    /// Decodes exactly [`Self::LEN`] bytes.
    pub fn decode(b: &[u8]) -> Result<Self> {
        let mut m = Self::zero();
        m.decode_into(b)?;
        Ok(m)
    }

    /// All zero, to be overwritten (the batch protocols reuse one message).
    pub(crate) fn zero() -> Self {
        RotMsg2 {
            p: NttPoly([0; N]),
            hints: [Hint([0; HINT_BYTES]), Hint([0; HINT_BYTES])],
            mask: [0; 32],
            confirmations: [[0; 32]; 2],
        }
    }

    /// [`Self::decode`] into `self`, in place.
    pub(crate) fn decode_into(&mut self, b: &[u8]) -> Result<()> {
        check_len(b, Self::LEN, "ROT message 2")?;
        let (p, rest) = b.split_at(POLY_BYTES);
        let (h0, rest) = rest.split_at(HINT_BYTES);
        let (h1, rest) = rest.split_at(HINT_BYTES);
        let (u, rest) = rest.split_at(32);
        let (t0, t1) = rest.split_at(32);
        unpack_poly_into(p, "ROT message 2 polynomial", &mut self.p)?;
        self.hints = [
            Hint::from_bytes(&to_array(h0)),
            Hint::from_bytes(&to_array(h1)),
        ];
        self.mask = to_array(u);
        self.confirmations = [to_array(t0), to_array(t1)];
        Ok(())
    }
}

impl RotMsg3 {
    /// Encoded length in bytes (64).
    pub const LEN: usize = 64;

    /// Appends the encoding to `out`.
    pub fn encode(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(&self.openings[0]);
        out.extend_from_slice(&self.openings[1]);
    }

    /// Decodes exactly [`Self::LEN`] bytes.
    pub fn decode(b: &[u8]) -> Result<Self> {
        check_len(b, Self::LEN, "ROT message 3")?;
        let (s0, s1) = b.split_at(32);
        Ok(RotMsg3 {
            openings: [to_array(s0), to_array(s1)],
        })
    }
}

pub(crate) fn check_len(b: &[u8], expected: usize, what: &'static str) -> Result<()> {
    if b.len() == expected {
        Ok(())
    } else {
        Err(Error::LengthMismatch {
            what,
            expected,
            got: b.len(),
        })
    }
}

/// Copies a slice whose length the caller has checked.
pub(crate) fn to_array<const L: usize>(b: &[u8]) -> [u8; L] {
    let mut out = [0u8; L];
    out.copy_from_slice(&b[..L]);
    out
}
