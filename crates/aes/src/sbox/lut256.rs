//! `lut256`: the (2,3)-LUT-256 protocol of MAESTRO (Morita et al., USENIX Security '25,
//! ePrint 2024/1317): Protocol 5 preprocessing and a one-round online phase with the
//! length-256 one-hot table lookup (Protocol 4); PROTOCOLS.md §4.4.
//!
//! * Preprocessing (Protocol 5, `k = 8`): eight random shared bits give a one-hot vector of
//!   length 256 recursively, `OHV(b_0..b_k) = (f + s f, s f)` with `s = b_k` and
//!   `f = OHV(b_0..b_{k-1})`; level `k` costs `2^(k-1) - 1` bit products in one round. In total
//!   247 bit products (bit-sliced, 16 per 2-byte word) in 7 rounds:
//!   `2 ⌈n/16⌉ · 247` bytes to the previous party (AES-128: 4940 B/block).
//! * Online (1 round per layer): open `c = x + r` (1 byte to the next party), then locally
//!   `[[x^-1]] = Σ_j e[j] inv(c ⊕ j)` (Protocol 4 with 256-entry masks per output bit).
//!   AES-128: 160 B/block to next, 10 rounds. No check.
//!
//! Memory: the batch is split into chunks of [`CHUNK_WORDS`] words (16 instances each); every
//! round computes the products of all chunks and sends them in **one** message, then each chunk
//! advances to the next level on its own, and the last level is transposed chunk by chunk into
//! the per-instance layout (2 × 32 bytes per inversion) while the bit-sliced level is freed.
//! Peak memory is about 80 bytes per inversion (≈ 1.3 GB at 100,000 AES-128 blocks), and
//! preprocessed chunks are freed as soon as the online phase has used them.

use std::collections::VecDeque;

use rayon::prelude::*;
use triskele_engine::{EngineError, Party, SemiHonest};
use triskele_field::{Bits16, Encode, Gf2p8};
use triskele_share::{Direction, PartyId, Prss, RssVec};

use super::ohv16::transpose16;
use super::SboxProtocol;

/// Words (of 16 instances) per preprocessing chunk.
pub const CHUNK_WORDS: usize = 1 << 12;

/// Words per tile of [`Chunk::finish`]'s transpose (one cache line of each entry row).
const TILE: usize = 32;
/// Instances per parallel work item of the online lookup.
const PAR: usize = 1 << 12;

/// A length-256 bit vector, entry `t` in word `t / 64`, bit `t % 64` (§2.5).
type Bits256 = [u64; 4];

/// Protocol 4 masks for `T = inv_256`: bit `t` of `INV256_MASKS[c][b]` is bit `b` of
/// `inv(c ⊕ t)`.
static INV256_MASKS: [[Bits256; 8]; 256] = {
    let mut m = [[[0u64; 4]; 8]; 256];
    let mut c = 0;
    while c < 256 {
        let mut t = 0;
        while t < 256 {
            let y = Gf2p8::INV_TABLE[c ^ t];
            let mut b = 0;
            while b < 8 {
                m[c][b][t / 64] |= (((y >> b) & 1) as u64) << (t % 64);
                b += 1;
            }
            t += 1;
        }
        c += 1;
    }
    m
};

/// Protocol 4 on one share of a length-256 one-hot vector: `Σ_t e[t] inv(c ⊕ t)`.
#[inline(always)]
pub(crate) fn lookup_inv256(e: &Bits256, c: u8) -> u8 {
    let masks = &INV256_MASKS[c as usize];
    let mut out = 0u8;
    for (b, m) in masks.iter().enumerate() {
        let y = (e[0] & m[0]) ^ (e[1] & m[1]) ^ (e[2] & m[2]) ^ (e[3] & m[3]);
        out |= ((y.count_ones() & 1) as u8) << b;
    }
    out
}

/// One chunk during Protocol 5: its random bits and the current level.
struct Chunk {
    words: usize,
    /// Instances in this chunk (`<= 16 words`).
    instances: usize,
    /// The eight random bits, bit `b` at `[b words, (b + 1) words)`, per component.
    bits: [Vec<Bits16>; 2],
    /// The current level `f`, vector `j` at `[j words, (j + 1) words)`, per component.
    f: [Vec<Bits16>; 2],
}

/// Preprocessed material of one chunk, per instance.
#[derive(Debug, Default)]
struct Ready {
    e: [Vec<Bits256>; 2],
    r: [Vec<Gf2p8>; 2],
}

impl Ready {
    fn len(&self) -> usize {
        self.r[0].len()
    }
}

impl Chunk {
    fn s(&self, comp: usize, k: usize) -> &[Bits16] {
        &self.bits[comp][k * self.words..(k + 1) * self.words]
    }

    /// This party's masked local products `t_j = s f_j` for `j < h - 1` (level of `h` vectors,
    /// `s = b_{k}`), with a zero-share from the chunk's own streams.
    fn products(&self, k: usize, h: usize, prss: &mut Prss) -> Vec<Bits16> {
        let w = self.words;
        let mut t = vec![Bits16(0); (h - 1) * w];
        let (s1, s2) = (self.s(0, k), self.s(1, k));
        for (j, tj) in t.chunks_mut(w).enumerate() {
            let f1 = &self.f[0][j * w..(j + 1) * w];
            let f2 = &self.f[1][j * w..(j + 1) * w];
            for ((((o, a1), a2), b1), b2) in tj.iter_mut().zip(s1).zip(s2).zip(f1).zip(f2) {
                o.0 = (a1.0 & b1.0) ^ (a1.0 & b2.0) ^ (a2.0 & b1.0);
            }
        }
        let mut scratch = Vec::new();
        prss.add_zero_share(&mut t, &mut scratch);
        t
    }

    /// `g_{h-1} = s + Σ_{j<h-1} g_j` of one component, word-wise.
    fn last_product(&self, comp: usize, k: usize, g: &[Bits16], h: usize) -> Vec<Bits16> {
        let w = self.words;
        let mut last = self.s(comp, k).to_vec();
        for gj in g.chunks(w).take(h - 1) {
            for (l, x) in last.iter_mut().zip(gj) {
                l.0 ^= x.0;
            }
        }
        last
    }

    /// Moves to the next level: `e_j = f_j + g_j`, `e_{h+j} = g_j`.
    fn advance(&mut self, k: usize, h: usize, g: [&[Bits16]; 2]) {
        let w = self.words;
        for (comp, g) in g.into_iter().enumerate() {
            let last = self.last_product(comp, k, g, h);
            let f = &self.f[comp];
            let mut next = Vec::with_capacity(2 * h * w);
            for j in 0..h {
                let gj = if j + 1 < h {
                    &g[j * w..(j + 1) * w]
                } else {
                    &last[..]
                };
                next.extend(f[j * w..(j + 1) * w].iter().zip(gj).map(|(a, b)| *a + *b));
            }
            next.extend_from_slice(&g[..(h - 1) * w]);
            next.extend_from_slice(&last);
            self.f[comp] = next;
        }
    }

    /// The last level, transposed to one 256-bit vector per instance, and `[[r]]`.
    fn finish(mut self, k: usize, h: usize, g: [&[Bits16]; 2]) -> Ready {
        // The 256 entries `e_t`, one word per 16 instances at `t w + word`.
        self.advance(k, h, g);
        let w = self.words;
        let n = self.instances;
        let mut ready = Ready::default();
        for comp in 0..2 {
            let rows = &self.f[comp];
            debug_assert_eq!(rows.len(), 256 * w);
            let mut e = vec![[0u64; 4]; n];
            // The entries of `TILE` words at a time, copied next to each other first: the rows
            // lie `2w` bytes apart, and for large chunks all 256 share a few L1 sets.
            let mut tile = [[0u16; TILE]; 256];
            for (i, e_tile) in e.chunks_mut(16 * TILE).enumerate() {
                let (w0, m) = (i * TILE, e_tile.len().div_ceil(16));
                for (t, row) in tile.iter_mut().enumerate() {
                    for (d, x) in row.iter_mut().zip(&rows[t * w + w0..t * w + w0 + m]) {
                        *d = x.0;
                    }
                }
                for (word, inst) in e_tile.chunks_mut(16).enumerate() {
                    for q in 0..16 {
                        let mut block: [u16; 16] = core::array::from_fn(|i| tile[16 * q + i][word]);
                        transpose16(&mut block);
                        for (v, bits) in inst.iter_mut().zip(block) {
                            v[q / 4] |= u64::from(bits) << (16 * (q % 4));
                        }
                    }
                }
            }
            let mut r = vec![Gf2p8(0); n];
            for (j, rj) in r.iter_mut().enumerate() {
                let (word, lane) = (j / 16, j % 16);
                let mut v = 0u8;
                for b in 0..8 {
                    v |= (((self.bits[comp][b * w + word].0 >> lane) & 1) as u8) << b;
                }
                *rj = Gf2p8(v);
            }
            ready.e[comp] = e;
            ready.r[comp] = r;
        }
        ready
    }
}

/// Protocol 5 for `n` instances: 7 rounds, `2 ⌈n/16⌉ · 247` bytes to the previous party, one
/// message per round for all chunks.
fn protocol5(party: &mut Party<SemiHonest>, n: usize) -> Result<Vec<Ready>, EngineError> {
    let words = n.div_ceil(16);
    let bits = party.random_rss::<Bits16>(8 * words);
    let one = match party.id() {
        PartyId::P1 => [0xffffu16, 0],
        PartyId::P2 => [0, 0],
        PartyId::P3 => [0, 0xffff],
    };
    let nchunks = words.div_ceil(CHUNK_WORDS);
    let mut chunks: Vec<Chunk> = (0..nchunks)
        .map(|c| {
            let w0 = c * CHUNK_WORDS;
            let w = CHUNK_WORDS.min(words - w0);
            let pick = |comp: &[Bits16]| -> Vec<Bits16> {
                (0..8)
                    .flat_map(|b| comp[b * words + w0..b * words + w0 + w].iter().copied())
                    .collect()
            };
            let bits = [pick(&bits.first), pick(&bits.second)];
            // Level 1: OHV(b_0) = (1 + b_0, b_0).
            let f = [0, 1].map(|comp| {
                let b0 = &bits[comp][..w];
                let mut f: Vec<Bits16> = b0.iter().map(|x| Bits16(x.0 ^ one[comp])).collect();
                f.extend_from_slice(b0);
                f
            });
            Chunk {
                words: w,
                instances: (16 * w).min(n - 16 * w0),
                bits,
                f,
            }
        })
        .collect();
    drop(bits);

    for k in 1..8 {
        let h = 1usize << k; // vectors at the current level
        let mut kids: Vec<Prss> = (0..nchunks).map(|_| party.prss().derive()).collect();
        let ts: Vec<Vec<Bits16>> = chunks
            .par_iter()
            .zip(kids.par_iter_mut())
            .map(|(ch, kid)| ch.products(k, h, kid))
            .collect();
        let len = 2 * (h - 1) * words;
        let mut msg = Vec::with_capacity(len);
        for t in &ts {
            Bits16::encode_slice(t, &mut msg);
        }
        party.net().send(Direction::Prev, msg)?;
        let recv = party.recv_bytes(Direction::Next, len)?;
        let mut offsets = Vec::with_capacity(nchunks);
        let mut off = 0;
        for ch in &chunks {
            offsets.push(off);
            off += 2 * (h - 1) * ch.words;
        }
        let decode = |off: usize, count: usize| -> Vec<Bits16> {
            let (pairs, _) = recv[off..off + 2 * count].as_chunks::<2>();
            pairs
                .iter()
                .map(|p| Bits16(u16::from_le_bytes(*p)))
                .collect()
        };
        if k < 7 {
            chunks
                .par_iter_mut()
                .zip(ts.into_par_iter())
                .zip(offsets.into_par_iter())
                .for_each(|((ch, t), off)| {
                    let theirs = decode(off, t.len());
                    ch.advance(k, h, [&t, &theirs]);
                });
        } else {
            return Ok(chunks
                .into_par_iter()
                .zip(ts.into_par_iter())
                .zip(offsets.into_par_iter())
                .map(|((ch, t), off)| {
                    let theirs = decode(off, t.len());
                    ch.finish(k, h, [&t, &theirs])
                })
                .collect());
        }
    }
    Ok(Vec::new())
}

/// The semi-honest (2,3)-LUT-256 protocol with its preprocessed one-hot vectors.
#[derive(Debug, Default)]
pub struct Lut256 {
    pool: VecDeque<Ready>,
    /// Instances of the front chunk already used.
    used: usize,
}

impl Lut256 {
    fn available(&self) -> usize {
        self.pool.iter().map(Ready::len).sum::<usize>() - self.used
    }
}

impl SboxProtocol<SemiHonest> for Lut256 {
    fn preprocess(&mut self, party: &mut Party<SemiHonest>, n: usize) -> Result<(), EngineError> {
        self.pool.extend(protocol5(party, n)?);
        Ok(())
    }

    fn invert(
        &mut self,
        party: &mut Party<SemiHonest>,
        x: &mut RssVec<Gf2p8>,
    ) -> Result<(), EngineError> {
        let m = x.len();
        EngineError::ensure_preprocessed(m, self.available())?;
        // Segments (chunk, start, len) covering the next m instances.
        let mut segs = Vec::new();
        let (mut left, mut start, mut idx) = (m, self.used, 0);
        while left > 0 {
            let len = self.pool.get(idx).map_or(0, Ready::len);
            let take = left.min(len.saturating_sub(start));
            if take == 0 && idx >= self.pool.len() {
                break;
            }
            segs.push((idx, start, take));
            left -= take;
            start = 0;
            idx += 1;
        }

        // Round: open c = x + r.
        let mut y = x.clone();
        let mut at = 0;
        for &(i, s, len) in &segs {
            if let Some(ch) = self.pool.get(i) {
                for (comp, yc) in [&mut y.first, &mut y.second].into_iter().enumerate() {
                    for (a, r) in yc[at..at + len].iter_mut().zip(&ch.r[comp][s..s + len]) {
                        a.0 ^= r.0;
                    }
                }
            }
            at += len;
        }
        let c = party.open(&y)?;

        // Protocol 4 on both components.
        let mut at = 0;
        for &(i, s, len) in &segs {
            if let Some(ch) = self.pool.get(i) {
                for (comp, xc) in [&mut x.first, &mut x.second].into_iter().enumerate() {
                    xc[at..at + len]
                        .par_chunks_mut(PAR)
                        .zip(ch.e[comp][s..s + len].par_chunks(PAR))
                        .zip(c[at..at + len].par_chunks(PAR))
                        .for_each(|((o, e), c)| {
                            for ((o, e), c) in o.iter_mut().zip(e).zip(c) {
                                *o = Gf2p8(lookup_inv256(e, c.0));
                            }
                        });
                }
            }
            at += len;
        }

        // Release what is used up.
        let mut used = self.used + m;
        while let Some(front) = self.pool.front() {
            if used < front.len() {
                break;
            }
            used -= front.len();
            self.pool.pop_front();
        }
        self.used = used;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use triskele_field::Field;

    #[test]
    fn lookup_of_a_one_hot_vector_is_the_inverse() {
        for c in [0u8, 1, 0x53, 0xff] {
            for r in 0..=255u8 {
                let mut e = [0u64; 4];
                e[usize::from(r) / 64] |= 1 << (r % 64);
                assert_eq!(
                    Gf2p8(lookup_inv256(&e, c)),
                    Gf2p8(c ^ r).inverse(),
                    "c {c} r {r}"
                );
            }
        }
    }
}
