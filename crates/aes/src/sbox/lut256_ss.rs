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
//! Semi-honest, no check. The malicious variants `mal-lut256-ss(-opt)`
//! ([`super::mal_lut256_ss`]) share the preprocessing, the additive opening and the lookup of
//! this module.

use rayon::prelude::*;
use triskele_engine::{EngineError, Party, ReshareTo, SecurityModel, SemiHonest, View};
use triskele_field::{Bulk, Encode, Gf2p8};
use triskele_share::{Direction, RssVec};

use super::lut256::lookup_inv256;
use super::ohv16::{random_ohv16, OhvCheck};
use super::SboxProtocol;

/// Instances per parallel work item.
const PAR: usize = 1 << 12;

/// Preprocessed material of one inversion.
#[derive(Debug, Clone, Copy, Default)]
pub(super) struct Pair {
    /// `(e^lo_i, e^lo_{i+1}, e^hi_i, e^hi_{i+1})`, bit `k` = entry `k`.
    e: [u16; 4],
    /// `(r_i, r_{i+1})`, this party's replicated share of `r`; `r_i` alone is an additive share.
    r: [u8; 2],
}

/// Preprocessed inversions of the (3,3)-LUT-256 protocols, consumed in order.
#[derive(Debug, Default)]
pub(super) struct Pool {
    pairs: Vec<Pair>,
    pos: usize,
}

impl Pool {
    /// Protocol 8 for both halves of `n` inversions in one batch (2 rounds); `check` says how a
    /// malicious run certifies its products.
    pub(super) fn fill<M: SecurityModel>(
        &mut self,
        party: &mut Party<M>,
        n: usize,
        check: OhvCheck,
    ) -> Result<(), EngineError> {
        // Instances [0, n) are e^lo, [n, 2n) are e^hi.
        let o = random_ohv16(party, 2 * n, check)?;
        let (e1, e2, r1, r2) = (&o.e.first, &o.e.second, &o.r.first, &o.r.second);
        let fresh: Vec<Pair> = (0..n)
            .into_par_iter()
            .map(|j| Pair {
                e: [e1[j], e2[j], e1[n + j], e2[n + j]],
                r: [r1[j].0 | (r1[n + j].0 << 4), r2[j].0 | (r2[n + j].0 << 4)],
            })
            .collect();
        self.pairs.drain(..self.pos.min(self.pairs.len()));
        if self.pairs.is_empty() {
            // Nothing left over (the usual case): no copy into the old buffer.
            self.pairs = fresh;
        } else {
            self.pairs.extend(fresh);
        }
        self.pos = 0;
        Ok(())
    }

    /// The material of the next `m` inversions.
    pub(super) fn take(&mut self, m: usize) -> Result<&[Pair], EngineError> {
        EngineError::ensure_preprocessed(m, self.pairs.len().saturating_sub(self.pos))?;
        let pre = &self.pairs[self.pos..self.pos + m];
        self.pos += m;
        Ok(pre)
    }
}

/// `[[r]]` of the given inversions.
pub(super) fn mask_rss(pre: &[Pair]) -> RssVec<Gf2p8> {
    RssVec {
        first: pre.iter().map(|p| Gf2p8(p.r[0])).collect(),
        second: pre.iter().map(|p| Gf2p8(p.r[1])).collect(),
    }
}

/// `[[x]] = c + [[r]]` for the public opened `c = x + r` and the masks of `pre`: `c` added to
/// both components (§1.3: `3c = c`), in one pass.
pub(super) fn unmasked_rss(pre: &[Pair], c: &[Gf2p8]) -> RssVec<Gf2p8> {
    let comp = |i: usize| {
        pre.iter()
            .zip(c)
            .map(|(p, c)| Gf2p8(p.r[i] ^ c.0))
            .collect()
    };
    RssVec {
        first: comp(0),
        second: comp(1),
    }
}

/// The additive opening of `c = s + r` (one round): `c^(i) = s^(i) + α_i + r_i` to both
/// neighbours. In the malicious model the received shares go into the views (\[DEV\]
/// PROTOCOLS.md §5.6/§5.7: the one from `P_{i-1}` into `V_prev`, the one from `P_{i+1}` into
/// `V_next`), so a party that sends different shares to its two neighbours fails the next
/// compare-view.
pub(super) fn open_offsets<M: SecurityModel>(
    party: &mut Party<M>,
    s: &[Gf2p8],
    pre: &[Pair],
) -> Result<Vec<Gf2p8>, EngineError> {
    let m = s.len();
    let mut c: Vec<Gf2p8> = s
        .iter()
        .zip(pre)
        .map(|(s, p)| Gf2p8(s.0 ^ p.r[0]))
        .collect();
    let mut scratch = Vec::new();
    party.prss().add_zero_share(&mut c, &mut scratch);
    party.send_elems(Direction::Next, &c)?;
    party.send_elems(Direction::Prev, &c)?;
    let from_next = party.recv_elems::<Gf2p8>(Direction::Next, m)?;
    let from_prev = party.recv_elems::<Gf2p8>(Direction::Prev, m)?;
    if M::MALICIOUS {
        party
            .model()
            .absorb(View::Prev, &Gf2p8::encode_to_vec(&from_prev));
        party
            .model()
            .absorb(View::Next, &Gf2p8::encode_to_vec(&from_next));
    }
    Gf2p8::add_assign_slice(&mut c, &from_next);
    Gf2p8::add_assign_slice(&mut c, &from_prev);
    Ok(c)
}

/// Protocol 4 on the additive one-hot vectors: `out^(i) = Σ_j E^(i)[j] inv(c ⊕ j)`, an additive
/// sharing of `inv(c ⊕ r)`.
pub(super) fn lookup(out: &mut [Gf2p8], pre: &[Pair], c: &[Gf2p8]) {
    out.par_chunks_mut(PAR)
        .zip(pre.par_chunks(PAR).zip(c.par_chunks(PAR)))
        .for_each(|(o, (p, c))| {
            for ((o, p), c) in o.iter_mut().zip(p).zip(c) {
                *o = Gf2p8(lookup_inv256(&outer(&p.e), c.0));
            }
        });
}

/// The semi-honest (3,3)-LUT-256 protocol with its preprocessed one-hot halves.
#[derive(Debug, Default)]
pub struct Lut256Ss {
    pool: Pool,
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
        self.pool.fill(party, n, OhvCheck::Products)
    }

    fn invert(
        &mut self,
        party: &mut Party<SemiHonest>,
        x: &mut RssVec<Gf2p8>,
    ) -> Result<(), EngineError> {
        let pre = self.pool.take(x.len())?;
        // c^(i) = s^(i) + α_i + r_i to both neighbours; y^(i) = Σ_j E^(i)[j] inv(c ⊕ j).
        let c = open_offsets(party, &x.first, pre)?;
        lookup(&mut x.first, pre, &c);
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

    /// [`unmasked_rss`] is the masks' replicated sharing with the public `c` added to both
    /// components.
    #[test]
    fn unmasked_rss_adds_c_to_both_components_of_the_masks() {
        let pre: Vec<Pair> = (0..37u8)
            .map(|i| Pair {
                e: [0; 4],
                r: [i.wrapping_mul(29) ^ 0x5a, i.wrapping_mul(83) ^ 0xc3],
            })
            .collect();
        let c: Vec<Gf2p8> = (0..37u8)
            .map(|i| Gf2p8(i.wrapping_mul(151) ^ 0x17))
            .collect();
        let mut want = mask_rss(&pre);
        for v in [&mut want.first, &mut want.second] {
            Gf2p8::add_assign_slice(v, &c);
        }
        let got = unmasked_rss(&pre, &c);
        assert!(got.first == want.first && got.second == want.second);
    }

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
