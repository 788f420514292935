//! `lut256-ss`: the (3,3)-LUT-256 protocol of MAESTRO (Morita et al., USENIX Security '25,
//! ePrint 2024/1317), Protocol 6; PROTOCOLS.md §4.5. The state stays additively shared through
//! the whole cipher (in the first component of the [`RssVec`], see [`SboxProtocol`]).
//!
//! * Preprocessing: two independent length-16 one-hot vectors `e^lo`, `e^hi` per inversion by
//!   Protocol 8 (`super::ohv16`), both halves **batched in one call: 2 rounds**,
//!   `2 · 2 ⌈n/16⌉ · 11` bytes to the previous party (AES-128: 440 B/block); `[[r]]` is the byte
//!   `r_lo + 16 r_hi`. The additive share of the length-256 one-hot vector
//!   `E[16h + l] = e^hi[h] e^lo[l]` is the local product `w^(i)(e^hi[h], e^lo[l])`; it is
//!   formed on the fly in the online phase (10 bytes stored per inversion instead of 32).
//! * Online (1 round per layer): `c^(i) = s^(i) + α_i + r_i` to both neighbours, `c = s + r`,
//!   and the new additive share `y^(i) = Σ_j E^(i)[j] inv(c ⊕ j)` (Protocol 4). AES-128: 160 B
//!   to next + 160 B to prev per block, 10 rounds, 20 messages per channel.
//! * Output: the additive state is masked with a fresh zero-share and reshared into a
//!   replicated sharing ([`SboxProtocol::to_replicated`], output phase, not counted).
//!
//! The spec adds a zero-share `α_i` to `E^(i)`; here it is added where an additive share
//! leaves the party instead (every opened `c^(i)` and the final reshare carry a fresh one), so
//! every message is uniformly masked and no bytes change. AES-128 and AES-256 are both
//! supported (the reference has AES-128 only; nothing in the protocol depends on the key size).
//! Semi-honest, no check.

use rayon::prelude::*;
use triskele_engine::{EngineError, Party, ReshareTo, SemiHonest};
use triskele_field::{Bulk, Gf2p8};
use triskele_share::{Direction, RssVec};

use super::lut256::lookup_inv256;
use super::ohv16::{random_ohv16, OhvCheck};
use super::SboxProtocol;

/// Instances per parallel work item.
const PAR: usize = 1 << 12;

/// Preprocessed material of one inversion.
#[derive(Debug, Clone, Copy, Default)]
struct Pair {
    /// `(e^lo_i, e^lo_{i+1}, e^hi_i, e^hi_{i+1})`, bit `k` = entry `k`.
    e: [u16; 4],
    /// `r_i`, this party's additive share of `r`.
    r: u8,
}

/// The semi-honest (3,3)-LUT-256 protocol with its preprocessed one-hot halves.
#[derive(Debug, Default)]
pub struct Lut256Ss {
    pool: Vec<Pair>,
    pos: usize,
}

/// `E^(i)[16h + l] = w^(i)(e^hi[h], e^lo[l])` with the local product of §1.6:
/// `a_i b_i + a_i b_{i+1} + a_{i+1} b_i`, as a 256-bit vector.
#[inline]
fn outer(e: &[u16; 4]) -> [u64; 4] {
    let [b1, b2, a1, a2] = *e;
    let b12 = b1 ^ b2;
    let mut out = [0u64; 4];
    for h in 0..16 {
        let bit1 = 0u16.wrapping_sub((a1 >> h) & 1);
        let bit2 = 0u16.wrapping_sub((a2 >> h) & 1);
        let row = (bit1 & b12) ^ (bit2 & b1);
        out[h / 4] |= u64::from(row) << (16 * (h % 4));
    }
    out
}

impl SboxProtocol<SemiHonest> for Lut256Ss {
    fn preprocess(&mut self, party: &mut Party<SemiHonest>, n: usize) -> Result<(), EngineError> {
        // Both halves in one Protocol-8 batch: instances [0, n) are e^lo, [n, 2n) are e^hi.
        let o = random_ohv16(party, 2 * n, OhvCheck::Products)?;
        let (e1, e2, r1) = (&o.e.first, &o.e.second, &o.r.first);
        let fresh: Vec<Pair> = (0..n)
            .into_par_iter()
            .map(|j| Pair {
                e: [e1[j], e2[j], e1[n + j], e2[n + j]],
                r: r1[j].0 | (r1[n + j].0 << 4),
            })
            .collect();
        self.pool.drain(..self.pos.min(self.pool.len()));
        self.pool.extend(fresh);
        self.pos = 0;
        Ok(())
    }

    fn invert(
        &mut self,
        party: &mut Party<SemiHonest>,
        x: &mut RssVec<Gf2p8>,
    ) -> Result<(), EngineError> {
        let m = x.len();
        EngineError::ensure_preprocessed(m, self.pool.len().saturating_sub(self.pos))?;
        let pre = &self.pool[self.pos..self.pos + m];
        self.pos += m;

        // c^(i) = s^(i) + α_i + r_i to both neighbours.
        let mut c: Vec<Gf2p8> = x
            .first
            .iter()
            .zip(pre)
            .map(|(s, p)| Gf2p8(s.0 ^ p.r))
            .collect();
        let mut scratch = Vec::new();
        party.prss().add_zero_share(&mut c, &mut scratch);
        party.send_elems(Direction::Next, &c)?;
        party.send_elems(Direction::Prev, &c)?;
        let from_next = party.recv_elems::<Gf2p8>(Direction::Next, m)?;
        let from_prev = party.recv_elems::<Gf2p8>(Direction::Prev, m)?;
        Gf2p8::add_assign_slice(&mut c, &from_next);
        Gf2p8::add_assign_slice(&mut c, &from_prev);

        // y^(i) = Σ_j E^(i)[j] inv(c ⊕ j).
        x.first
            .par_chunks_mut(PAR)
            .zip(pre.par_chunks(PAR).zip(c.par_chunks(PAR)))
            .for_each(|(o, (p, c))| {
                for ((o, p), c) in o.iter_mut().zip(p).zip(c) {
                    *o = Gf2p8(lookup_inv256(&outer(&p.e), c.0));
                }
            });
        // The second component carries no information for an additive state.
        x.second.iter_mut().for_each(|v| *v = Gf2p8(0));
        Ok(())
    }

    fn to_replicated(
        &mut self,
        party: &mut Party<SemiHonest>,
        x: &mut RssVec<Gf2p8>,
    ) -> Result<(), EngineError> {
        let additive = core::mem::take(&mut x.first);
        *x = party.additive_to_rss(additive, ReshareTo::Prev)?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn outer_product_of_one_hot_halves_is_one_hot() {
        // Cleartext shares (second components zero): E = e^hi ⊗ e^lo, one-hot at 16 hi + lo.
        for (lo, hi) in [(0u32, 0u32), (5, 0), (0, 7), (15, 15), (3, 12)] {
            let e = outer(&[1 << lo, 0, 1 << hi, 0]);
            let t = 16 * hi + lo;
            let mut want = [0u64; 4];
            want[(t / 64) as usize] = 1 << (t % 64);
            assert_eq!(e, want);
        }
    }
}
