//! The BDGM19 messages: layouts, encodings and length-checked decoding.

use crate::error::Result;
use crate::rlwe::encode::{pack_poly, unpack_poly, HINT_BYTES, POLY_BYTES};
use crate::rlwe::reconcile::Hint;
use crate::rlwe::ring::NttPoly;
use crate::rlwe::rot::{check_len, to_array, Block32};
use crate::rlwe::SEED_BYTES;

/// Receiver to sender: shifted sample and seed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OtMsg1 {
    /// `a s_R + 2 e_R - c H(seed)`, NTT domain.
    pub p: NttPoly,
    /// Seed of the hashed polynomial.
    pub seed: [u8; SEED_BYTES],
}

/// Sender to receiver: sample, hints, challenge ciphertexts and links.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OtMsg2 {
    /// `a s_S + 2 e_S`, NTT domain.
    pub p: NttPoly,
    /// Reconciliation hints for both branches.
    pub hints: [Hint; 2],
    /// `a_i = x_i xor H(T, i, B_i)`.
    pub challenges: [Block32; 2],
    /// `l_i = H(T, i, x_i) xor (x_{1-i} || B_{1-i})`.
    pub links: [[u8; 64]; 2],
}

/// Receiver to sender: the challenge response.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OtMsg3 {
    /// `H(T, x_0, x_1)`.
    pub response: Block32,
}

/// Sender to receiver: the encrypted messages.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OtMsg4 {
    /// `m_i xor H(T, i, K_i)`.
    pub ciphertexts: [Block32; 2],
}

impl OtMsg1 {
    /// Encoded length (928 bytes).
    pub const LEN: usize = POLY_BYTES + SEED_BYTES;
    /// Appends the encoding.
    pub fn encode(&self, out: &mut Vec<u8>) {
        pack_poly(&self.p, out);
        out.extend_from_slice(&self.seed);
    }
    /// Decodes exactly [`Self::LEN`] bytes.
    pub fn decode(b: &[u8]) -> Result<Self> {
        check_len(b, Self::LEN, "OT message 1")?;
        let (p, seed) = b.split_at(POLY_BYTES);
        Ok(OtMsg1 {
            p: unpack_poly(p, "OT message 1 polynomial")?,
            seed: to_array(seed),
        })
    }
}

impl OtMsg2 {
    /// Encoded length (1216 bytes).
    pub const LEN: usize = POLY_BYTES + 2 * HINT_BYTES + 64 + 128;
    /// Appends the encoding.
    pub fn encode(&self, out: &mut Vec<u8>) {
        pack_poly(&self.p, out);
        out.extend_from_slice(self.hints[0].as_bytes());
        out.extend_from_slice(self.hints[1].as_bytes());
        out.extend_from_slice(&self.challenges[0]);
        out.extend_from_slice(&self.challenges[1]);
        out.extend_from_slice(&self.links[0]);
        out.extend_from_slice(&self.links[1]);
    }
    /// Decodes exactly [`Self::LEN`] bytes.
    pub fn decode(b: &[u8]) -> Result<Self> {
        check_len(b, Self::LEN, "OT message 2")?;
        let (p, rest) = b.split_at(POLY_BYTES);
        let (h0, rest) = rest.split_at(HINT_BYTES);
        let (h1, rest) = rest.split_at(HINT_BYTES);
        let (a0, rest) = rest.split_at(32);
        let (a1, rest) = rest.split_at(32);
        let (l0, l1) = rest.split_at(64);
        Ok(OtMsg2 {
            p: unpack_poly(p, "OT message 2 polynomial")?,
            hints: [
                Hint::from_bytes(&to_array(h0)),
                Hint::from_bytes(&to_array(h1)),
            ],
            challenges: [to_array(a0), to_array(a1)],
            links: [to_array(l0), to_array(l1)],
        })
    }
}

impl OtMsg3 {
    /// Encoded length (32 bytes).
    pub const LEN: usize = 32;
    /// Appends the encoding.
    pub fn encode(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(&self.response);
    }
    /// Decodes exactly [`Self::LEN`] bytes.
    pub fn decode(b: &[u8]) -> Result<Self> {
        check_len(b, Self::LEN, "OT message 3")?;
        Ok(OtMsg3 {
            response: to_array(b),
        })
    }
}

impl OtMsg4 {
    /// Encoded length (64 bytes).
    pub const LEN: usize = 64;
    /// Appends the encoding.
    pub fn encode(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(&self.ciphertexts[0]);
        out.extend_from_slice(&self.ciphertexts[1]);
    }
    /// Decodes exactly [`Self::LEN`] bytes.
    pub fn decode(b: &[u8]) -> Result<Self> {
        check_len(b, Self::LEN, "OT message 4")?;
        let (c0, c1) = b.split_at(32);
        Ok(OtMsg4 {
            ciphertexts: [to_array(c0), to_array(c1)],
        })
    }
}
