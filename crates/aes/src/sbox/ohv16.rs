//! Random shared one-hot vectors of length 16 — Protocol 8 of MAESTRO (PROTOCOLS.md §4.3):
//! four random shared bits `r_0..r_3`, 6 products in round 1 and 5 in round 2 give every
//! monomial `μ_m = Π_{b∈m} r_b`; locally `e[k] = Σ_{m ⊇ bits(k)} μ_m` is one-hot at
//! `r = Σ_b 2^b r_b`.
//!
//! Bits are bit-sliced, 16 instances per [`Bits16`] word (§2.5), so `n` vectors cost
//! `2 ⌈n/16⌉ · 11` bytes to the previous party in 2 rounds. The output is transposed to one
//! `u16` per instance and component (bit `k` = entry `k`) with `[[r]]` over `GF(2^4)`.

use core::ops::Range;
use std::sync::Arc;

use rayon::prelude::*;
use triskele_engine::verify::{
    ByteRows, ByteSource, LiftedTriples, Parts, TripleSource, SHARED_BIT_ALIGN,
};
use triskele_engine::{EngineError, Party, SecurityModel};
use triskele_field::embed::in_subfield;
use triskele_field::{Bits16, Field, Gf2p4, Gf2p64, LinearMap8};
use triskele_share::{PartyId, RssVec};

/// Words per parallel work item of the local steps.
const PAR_WORDS: usize = 1 << 12;

/// `n` replicated one-hot vectors of length 16 and their positions.
#[derive(Debug, Clone, Default)]
pub(crate) struct Ohv16 {
    /// `e.first[j]`, `e.second[j]`: the two components of instance `j`, bit `k` = entry `k`
    /// (shared with the record of a malicious run, which checks the relations on them).
    pub e: Arc<RssVec<u16>>,
    /// `[[r]]` with `e[r] = 1`.
    pub r: RssVec<Gf2p4>,
}

/// In-place transpose of a 16×16 bit matrix: afterwards bit `k` of `a[j]` is the former bit `j`
/// of `a[k]`. Rows are packed four to a `u64` (row `k` at bits `16 (k mod 4)` of word `k / 4`),
/// so each of the four butterfly stages is a few 64-bit operations.
#[inline(always)]
pub(crate) fn transpose16(a: &mut [u16; 16]) {
    let mut x = [0u64; 4];
    for (w, rows) in x.iter_mut().zip(a.chunks_exact(4)) {
        *w = rows
            .iter()
            .enumerate()
            .fold(0, |acc, (i, r)| acc | (u64::from(*r) << (16 * i)));
    }
    // Rows k and k + 8 (words w, w + 2), then k and k + 4 (words w, w + 1): bit j of the upper
    // row swaps with bit j + d of the lower one.
    for (d, m, pairs) in [
        (8, 0x00ff_00ff_00ff_00ffu64, [(0, 2), (1, 3)]),
        (4, 0x0f0f_0f0f_0f0f_0f0f, [(0, 1), (2, 3)]),
    ] {
        for (p, q) in pairs {
            let t = ((x[p] >> d) ^ x[q]) & m;
            x[p] ^= t << d;
            x[q] ^= t;
        }
    }
    // Rows k and k + 2 (16-bit offset 32 within a word), then k and k + 1 (offset 16).
    for (d, off, m) in [
        (2, 32, 0x0000_0000_3333_3333u64),
        (1, 16, 0x0000_5555_0000_5555),
    ] {
        for w in x.iter_mut() {
            let t = ((*w >> d) ^ (*w >> off)) & m;
            *w ^= (t << d) ^ (t << off);
        }
    }
    for (w, rows) in x.iter().zip(a.chunks_exact_mut(4)) {
        for (i, r) in rows.iter_mut().enumerate() {
            *r = (w >> (16 * i)) as u16;
        }
    }
}

/// `e[k] = Σ_{m ⊇ k} μ[m]` for all 16 `k` (superset sums; linear, so per component).
#[inline]
fn superset_sums(mu: &mut [u16; 16]) {
    for b in 0..4 {
        let bit = 1usize << b;
        for k in 0..16 {
            if k & bit == 0 {
                mu[k] ^= mu[k | bit];
            }
        }
    }
}

/// Builds the per-instance one-hot vectors of one component from bit-sliced words:
/// `word(w)` gives, for word `w`, the 16 entries `e[0..16]` (entry `k` as a 16-lane word) and
/// the position bits `r_0..r_3`; `out.len()` is the number of instances.
pub(crate) fn assemble(
    word: impl Fn(usize) -> ([u16; 16], [u16; 4]) + Sync,
    out: &mut [u16],
    r_out: &mut [Gf2p4],
) {
    out.par_chunks_mut(16 * PAR_WORDS)
        .zip(r_out.par_chunks_mut(16 * PAR_WORDS))
        .enumerate()
        .for_each(|(c, (out, r_out))| {
            let w0 = c * PAR_WORDS;
            for (wi, (o, ro)) in out.chunks_mut(16).zip(r_out.chunks_mut(16)).enumerate() {
                let (mut e, rb) = word(w0 + wi);
                transpose16(&mut e);
                o.copy_from_slice(&e[..o.len()]);
                for (j, r) in ro.iter_mut().enumerate() {
                    let mut v = 0u8;
                    for (b, x) in rb.iter().enumerate() {
                        v |= (((x >> j) & 1) as u8) << b;
                    }
                    *r = Gf2p4(v);
                }
            }
        });
}

/// The entries and position bits of word `w` of one component from the bit-sliced monomials
/// (for [`assemble`]): `mono[m]` is the component of `μ_m` for `m = 1..16` (index 0 unused),
/// `one` the component of the constant 1 (all lanes set or zero).
fn from_monomials(mono: &[&[Bits16]; 16], one: u16, w: usize) -> ([u16; 16], [u16; 4]) {
    let mut mu = [0u16; 16];
    mu[0] = one;
    for m in 1..16 {
        mu[m] = mono[m].get(w).map_or(0, |x| x.0);
    }
    // Position bits: r_b = μ_{b}.
    let rb = [mu[1], mu[2], mu[4], mu[8]];
    superset_sums(&mut mu);
    (mu, rb)
}

/// How a malicious run certifies the 11 bit products of Protocol 8 (PROTOCOLS.md §5.5).
/// Semi-honest runs record nothing either way.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum OhvCheck {
    /// Every bit product is recorded (11 bit triples per instance), as the vectors Protocol 8
    /// computed them in ([`BitProducts`]).
    Products,
    /// The "ohv" optimisation: the products are not recorded one by one; instead two packed
    /// relations per instance ([`OhvRelations`]) cover all of them.
    Packed,
}

/// Bit `b` of a monomial mask is `r_b`: `μ_3 = r_0 r_1`, `μ_13 = r_0 r_2 r_3`, and so on.
type Mask = u8;

/// The two packed relations of PROTOCOLS.md §5.5 ("ohv trick") as lists of
/// `(monomial mask, power of u)`: relation `k` is `X · Y = Z` with every listed monomial bit
/// placed at its power of `u`. As bit-polynomials (degrees at most 8, as in `GF(2^64)`, where
/// no reduction happens) the relation holds iff its 9 coefficient identities hold; they are
/// checked in `GF(2^8)` at `u = 0x02` ([`OhvRelations`]).
const RELATIONS: [[&[(Mask, u8)]; 3]; 2] = [
    // Round 1: X = r0 + r1 u + r2 u^2, Y = r3 + r0 u^3 + r1 u^6,
    // Z = r03 + r13 u + r23 u^2 + r0 u^3 + r01 u^4 + r02 u^5 + r01 u^6 + r1 u^7 + r12 u^8.
    [
        &[(1, 0), (2, 1), (4, 2)],
        &[(8, 0), (1, 3), (2, 6)],
        &[
            (9, 0),
            (10, 1),
            (12, 2),
            (1, 3),
            (3, 4),
            (5, 5),
            (3, 6),
            (2, 7),
            (6, 8),
        ],
    ],
    // Round 2: X = r01 + r03 u + r13 u^2, Y = r2 + r3 u^3 + r23 u^6,
    // Z = r012 + r023 u + r123 u^2 + r013 u^3 + r03 u^4 + r13 u^5 + r0123 u^6 + r023 u^7
    //     + r123 u^8.
    [
        &[(3, 0), (9, 1), (10, 2)],
        &[(4, 0), (8, 3), (12, 6)],
        &[
            (7, 0),
            (13, 1),
            (14, 2),
            (11, 3),
            (9, 4),
            (10, 5),
            (15, 6),
            (13, 7),
            (14, 8),
        ],
    ],
];

/// Where monomial `μ_m` (`m` a subset mask of `r_0..r_3`, bit `b` = `r_b`; index 0 unused)
/// is computed in Protocol 8: `(round, part)`, round 0 the random bits `r_0..r_3`, round 1
/// the 6 pairs, round 2 the 5 larger monomials, `part` the position in that round's batch.
const MONOMIAL: [(usize, usize); 16] = [
    (0, 0), // unused: μ_0 = 1
    (0, 0), // 0
    (0, 1), // 1
    (1, 0), // 01
    (0, 2), // 2
    (1, 1), // 02
    (1, 3), // 12
    (2, 0), // 012
    (0, 3), // 3
    (1, 2), // 03
    (1, 4), // 13
    (2, 1), // 013
    (1, 5), // 23
    (2, 2), // 023
    (2, 3), // 123
    (2, 4), // 0123
];

/// The packed relations of a batch of Protocol-8 runs, kept compact: per instance and
/// component its one-hot vector `e` as one `u16` (bit `k` = `e[k]`; the vectors of the
/// preprocessing's output, shared, not copied), turned into two `GF(2^8)` triples per
/// instance by byte maps while `Verify` streams over them ([`ByteSource`]: the byte path,
/// lifted by `E_8`).
/// The relations are written in the monomials `μ_m`, which are a linear function of `e`:
/// `e[k] = Σ_{m ⊇ k} μ_m` (with `μ_0 = 1`) is the superset-sum transform, its own inverse
/// over `GF(2)`, so `μ_m = Σ_{k ⊇ m} e[k]` for `m ≥ 1` ([`mobius`]); the byte maps
/// ([`E_PART_TABLES`]) compose the two. Keeping `e` (which Protocol 8 forms anyway) instead
/// of transposing the bit-sliced monomials a second time gives the same triples.
///
/// \[DEV\] PROTOCOLS.md §5.5 checks each relation in `GF(2^64)`, where the degree-≤8
/// bit-polynomials are never reduced. Here each part is evaluated at `u = 0x02` of
/// `GF(2^8)` (AES polynomial `m(u) = u^8 + u^4 + u^3 + u + 1`), the same number of triples
/// (so the same bytes and rounds), and `Verify` takes its byte path for them (about twice as
/// fast per triple as lifting them to `GF(2^64)`). Soundness: an error pattern (one error
/// bit per product, the round-2 products computed from the erroneous round-1 ones) makes
/// `XY - Z` a non-zero polynomial `E(u)` of degree at most 8 for some relation, and it
/// vanishes in `GF(2^8)` only if `E = m`. Relation 1's `E` has no `u^3` term (its `u^3`
/// coefficient of `Z` is the input bit `r_0`), so it is never `m`, and relation 1 fails for
/// every wrong round-1 product. With round 1 correct, relation 2's `E` has the same
/// coefficient at `u^2` and `u^8` (the error of `r_123`), while `m` has 0 and 1 there. The
/// test `packed_relations_fail_for_every_error_pattern` checks all `2^11` error patterns at
/// all 16 values of `r`.
///
/// With `n` instances, relation `k` of instance `j` is triple `k n + j`.
/// The store fills whole words of 16 (the bit-sliced computation's lanes, so that the number
/// of triples is that of §6.4): instances past the requested ones are zero (`e = 0`, hence
/// `X = Y = Z = 0`), trivially valid triples.
pub(crate) type OhvRelations = PerInstance<2>;

/// `PART_TABLES[k][p][h][b]`: part `p` (`X`, `Y`, `Z`) of relation `k` for the monomials of
/// byte `h` of an instance's `u16` (`h = 0`: `μ_1..μ_8`, `h = 1`: `μ_9..μ_15`) equal to `b`,
/// as a bit-polynomial in `u` (bit `i` = `u^i`); the two halves' values are XORed together
/// (their monomials are disjoint).
const PART_TABLES: PartTables<2> = part_tables();

/// The parts of [`PART_TABLES`] as functions of an instance's one-hot vector `e` (its `u16`,
/// bit `k` = `e[k]`): `E_PART_TABLES[k][p][h][b]` for byte `h` of `e` equal to `b` and the
/// other zero (linear, so the two halves' values are XORed).
const E_PART_TABLES: PartTables<2> = e_part_tables();

/// [`E_PART_TABLES`] evaluated at `u = 0x02` of `GF(2^8)`, as byte maps: `[k][p][h]` maps
/// byte `h` of an instance's `e` to its share of part `p` of relation `k`.
static BYTE_MAPS: PartMaps<2> = part_maps(&E_PART_TABLES);

/// The monomials of a one-hot vector's `u16` `e` (bit `k` = `e[k]`) as a `u16` with bit
/// `m - 1` = `μ_m = Σ_{k ⊇ m} e[k]` for `m = 1..16` (bit 15 zero): the inverse of
/// [`superset_sums`] over `GF(2)`, which is the same transform.
const fn mobius(e: u16) -> u16 {
    let mut out = 0u16;
    let mut m = 1;
    while m < 16 {
        let mut acc = 0u16;
        let mut k = 0;
        while k < 16 {
            if k & m == m {
                acc ^= (e >> k) & 1;
            }
            k += 1;
        }
        out |= acc << (m - 1);
        m += 1;
    }
    out
}

const fn e_part_tables() -> PartTables<2> {
    let mut t = [[[[0u16; 256]; 2]; 3]; 2];
    let mut h = 0;
    while h < 2 {
        let mut b = 0;
        while b < 256 {
            let mu = mobius((b as u16) << (8 * h));
            let (lo, hi) = ((mu & 0xff) as usize, (mu >> 8) as usize);
            let mut k = 0;
            while k < 2 {
                let mut p = 0;
                while p < 3 {
                    t[k][p][h][b] = PART_TABLES[k][p][0][lo] ^ PART_TABLES[k][p][1][hi];
                    p += 1;
                }
                k += 1;
            }
            b += 1;
        }
        h += 1;
    }
    t
}

const fn part_tables() -> PartTables<2> {
    let mut t = [[[[0u16; 256]; 2]; 3]; 2];
    let mut k = 0;
    while k < 2 {
        let mut p = 0;
        while p < 3 {
            let list = RELATIONS[k][p];
            let mut h = 0;
            while h < 2 {
                let mut b = 0;
                while b < 256 {
                    let mut v = 0u16;
                    let mut i = 0;
                    while i < list.len() {
                        let (m, pow) = list[i];
                        // Bit m - 1 of the u16, i.e. bit m - 1 - 8 h of byte h.
                        let bit = m as usize - 1;
                        if bit / 8 == h && (b >> (bit % 8)) & 1 == 1 {
                            v ^= 1 << pow;
                        }
                        i += 1;
                    }
                    t[k][p][h][b] = v;
                    b += 1;
                }
                h += 1;
            }
            p += 1;
        }
        k += 1;
    }
    t
}

impl PerInstance<2> {
    /// From the one-hot vectors of the instances (both components, one `u16` each), padded
    /// with zero instances to `16 words`.
    fn from_vectors(e: Arc<RssVec<u16>>, words: usize) -> Self {
        PerInstance::from_vectors_with(e, words, &BYTE_MAPS)
    }
}

/// The runs of the triples `start .. start + count` inside a per-instance store of `R =
/// relations` relations over `n` instances, taken in blocks of `block` instances: block `b`
/// holds the triples of instances `b block ..` (`q` of them, `block` but in the last block)
/// of all relations, relation after relation, so that relation `k` of instance `j` is triple
/// `R b block + k q + (j - b block)` (with `block ≥ n`: `k n + j`). Yields relation `k`,
/// instances `j .. j + len`, and the run's offset in the range.
pub(crate) fn relation_runs(
    relations: usize,
    n: usize,
    block: usize,
    start: usize,
    count: usize,
) -> impl Iterator<Item = (usize, Range<usize>, usize)> {
    let end = start.saturating_add(count).min(relations * n);
    let block = block.clamp(1, n.max(1));
    let mut t = start;
    core::iter::from_fn(move || {
        (t < end).then(|| {
            // Block `t / (R block)`: every block before it is whole.
            let first = t / (relations * block) * block;
            let q = block.min(n - first);
            let u = t - relations * first;
            let (k, i) = (u / q, u % q);
            let len = (q - i).min(end - t);
            let run = (k, first + i..first + i + len, t - start);
            t += len;
            run
        })
    })
}

/// One component's per-instance `u16`s as two byte planes: `[low bytes, high bytes]`.
#[cfg(test)]
pub(crate) type Planes = [Vec<u8>; 2];

#[cfg(test)]
/// Per-instance `u16`s of bit-sliced rows: for each of `words` words of 16 lanes, the 16
/// rows `row(r, w)` (one bit per lane) transposed so that bit `r` of instance `16 w + l` is
/// lane `l` of row `r`; returned as byte planes.
pub(crate) fn per_instance(words: usize, row: impl Fn(usize, usize) -> u16 + Sync) -> Planes {
    let (mut lo, mut hi) = (vec![0u8; 16 * words], vec![0u8; 16 * words]);
    lo.par_chunks_mut(16 * PAR_WORDS)
        .zip(hi.par_chunks_mut(16 * PAR_WORDS))
        .enumerate()
        .for_each(|(i, (lo, hi))| {
            for (wi, (l, h)) in lo
                .chunks_exact_mut(16)
                .zip(hi.chunks_exact_mut(16))
                .enumerate()
            {
                let w = i * PAR_WORDS + wi;
                let mut a: [u16; 16] = core::array::from_fn(|r| row(r, w));
                transpose16(&mut a);
                for ((l, h), v) in l.iter_mut().zip(h.iter_mut()).zip(a) {
                    [*l, *h] = v.to_le_bytes();
                }
            }
        });
    [lo, hi]
}

/// The index of relation `k` of instance `j` among the triples of a per-instance store of
/// `n` instances ([`PerInstance`]): each relation's triples are contiguous.
#[cfg(test)]
pub(crate) const fn triple_index(n: usize, j: usize, k: usize) -> usize {
    k * n + j
}

/// Byte tables of relation parts: `[k][p][h][b]` is part `p` (`X`, `Y`, `Z`) of relation
/// `k` of an instance whose `u16` has byte `h` equal to `b` and the other byte zero.
pub(crate) type PartTables<const R: usize> = [[[[u16; 256]; 2]; 3]; R];

/// [`PartTables`] evaluated at `u = 0x02` of `GF(2^8)` (reduced modulo the AES polynomial),
/// as `GF(2)`-linear maps of the bytes: `[k][p][h]` maps byte `h`.
pub(crate) type PartMaps<const R: usize> = [[[LinearMap8; 2]; 3]; R];

/// A bit-polynomial of degree at most 8 as an element of `GF(2^8)` at `u = 0x02`: reduced
/// modulo the AES polynomial `u^8 + u^4 + u^3 + u + 1`.
const fn reduce8(v: u16) -> u8 {
    assert!(v < 0x200, "degree above 8");
    (v as u8) ^ if v & 0x100 != 0 { 0x1b } else { 0 }
}

/// The maps of `t` (each byte table is linear, so the images of the eight bits define it).
pub(crate) const fn part_maps<const R: usize>(t: &PartTables<R>) -> PartMaps<R> {
    let zero = LinearMap8::from_basis_images([0; 8]);
    let mut out = [[[zero; 2]; 3]; R];
    let mut k = 0;
    while k < R {
        let mut p = 0;
        while p < 3 {
            let mut h = 0;
            while h < 2 {
                let mut images = [0u8; 8];
                let mut j = 0;
                while j < 8 {
                    images[j] = reduce8(t[k][p][h][1 << j]);
                    j += 1;
                }
                out[k][p][h] = LinearMap8::from_basis_images(images);
                h += 1;
            }
            p += 1;
        }
        k += 1;
    }
    out
}

/// Relations kept as one `u16` per instance and component, `R` triples per instance, each
/// part (`X`, `Y`, `Z`) of relation `k` a `GF(2)`-linear function of the `u16` into `GF(2^8)`
/// given by `maps[k][p]` (a map of its low byte XOR a map of its high byte); checked on the
/// byte path of `Verify` through [`ByteSource`] (lifted by `E_8`). With `n` instances,
/// relation `k` of instance `j` is triple `k n + j`: each relation's triples are contiguous,
/// so a range of triples is at most `R` runs of instances, each formed in one pass
/// ([`LinearMap8::apply_pair_words`]).
pub(crate) struct PerInstance<const R: usize> {
    /// The instances' `u16`s, both components (shared with the preprocessing's output).
    e: Arc<RssVec<u16>>,
    /// Instances counted: `e.len()` rounded up to whole words of 16 (the others are zero).
    instances: usize,
    maps: &'static PartMaps<R>,
}

impl<const R: usize> PerInstance<R> {
    /// From per-instance `u16`s (both components, the first `e.len()` instances; zero up to
    /// `16 words`), each part a map of their two bytes given by `maps`; `e` is kept, not
    /// copied.
    pub(crate) fn from_vectors_with(
        e: Arc<RssVec<u16>>,
        words: usize,
        maps: &'static PartMaps<R>,
    ) -> Self {
        let instances = (16 * words).max(e.first.len());
        PerInstance { e, instances, maps }
    }
}

impl<const R: usize> ByteRows for PerInstance<R> {
    fn len(&self) -> usize {
        R * self.instances
    }

    /// Part `part / 2` (`X`, `Y`, `Z`) of component `part % 2`: per run of one relation, the
    /// map of each `u16`'s low byte XOR the map of its high byte
    /// ([`LinearMap8::apply_pair_words`]), zero past the stored instances.
    fn load(&self, part: usize, start: usize, out: &mut [u8]) {
        let (c, p) = (part % 2, part / 2);
        let v = if c == 0 {
            &self.e.first
        } else {
            &self.e.second
        };
        for (k, r, at) in relation_runs(R, self.instances, self.instances, start, out.len()) {
            let [f, g] = &self.maps[k][p];
            let o = &mut out[at..at + r.len()];
            let stored = r.start.min(v.len())..r.end.min(v.len());
            let (head, tail) = o.split_at_mut(stored.len());
            f.apply_pair_words(g, &v[stored], head);
            tail.fill(0);
        }
    }

    /// Where both maps of the part send every bit into the subfield of 16 elements of
    /// `GF(2^8)` (so every `u16`, and the zero padding, lands there), in every relation the
    /// range covers.
    fn in_subfield(&self, part: usize, start: usize, len: usize) -> bool {
        let p = part / 2;
        part < 6
            && relation_runs(R, self.instances, self.instances, start, len).all(|(k, _, _)| {
                self.maps[k][p]
                    .iter()
                    .all(|m| (0..8).all(|b| in_subfield(m.apply_byte(1 << b))))
            })
    }
}

/// For each relation and part of `rel`: whether it says its bytes lie in the subfield of 16
/// elements of `GF(2^8)` ([`ByteRows::in_subfield`]), checked against its maps on all 65,536
/// `u16`s (and, where it says so, against what it loads).
#[cfg(test)]
pub(crate) fn subfield_parts<const R: usize>(rel: &PerInstance<R>) -> [[bool; 3]; R] {
    core::array::from_fn(|k| {
        core::array::from_fn(|p| {
            let [f, g] = &rel.maps[k][p];
            let all = (0..=u16::MAX).all(|w| {
                let [lo, hi] = w.to_le_bytes();
                in_subfield(f.apply_byte(lo) ^ g.apply_byte(hi))
            });
            let said = rel.in_subfield(2 * p, k * rel.instances, rel.instances);
            assert_eq!(said, all, "relation {k}, part {p}");
            for c in 0..2 {
                let mut out = vec![0u8; rel.instances];
                rel.load(2 * p + c, k * rel.instances, &mut out);
                assert!(!said || out.iter().all(|b| in_subfield(*b)));
            }
            said
        })
    })
}

/// Piece `k` (entries `k w .. (k + 1) w`) of both components of `x` (empty where `x` is
/// shorter: the multiplication then refuses the lengths).
fn piece(x: &RssVec<Bits16>, k: usize, w: usize) -> [&[Bits16]; 2] {
    let r = k * w..(k + 1) * w;
    [&x.first, &x.second].map(|c| c.get(r.clone()).unwrap_or(&[]))
}

/// Protocol 8 for `n` instances: 2 rounds, `2 ⌈n/16⌉ · 11` bytes to the previous party.
/// `check` says how a malicious run certifies the products (see [`OhvCheck`]).
pub(crate) fn random_ohv16<M: SecurityModel>(
    party: &mut Party<M>,
    n: usize,
    check: OhvCheck,
) -> Result<Ohv16, EngineError> {
    let w = n.div_ceil(16);
    let r = party.random_rss::<Bits16>(4 * w);
    let packed = M::MALICIOUS && check == OhvCheck::Packed;
    // One multiplication of the pieces `pairs[i] = (x, y)`, its local products formed from
    // the pieces in place (the same messages as a multiplication of their concatenations).
    // A malicious run without the packed check records every bit product afterwards, as the
    // vectors themselves ([`BitProducts`]).
    type Piece<'a> = (&'a RssVec<Bits16>, usize);
    let mul = |party: &mut Party<M>, pairs: &[(Piece<'_>, Piece<'_>)]| {
        let parts: Vec<_> = pairs
            .iter()
            .map(|&((x, i), (y, j))| (piece(x, i, w), piece(y, j, w)))
            .collect();
        party.mul_covered_parts(&parts)
    };
    // Round 1: r01 r02 r03 r12 r13 r23.
    let r_ = |k| (&r, k);
    let pairs = [(0, 1), (0, 2), (0, 3), (1, 2), (1, 3), (2, 3)].map(|(a, b)| (r_(a), r_(b)));
    let p2 = mul(party, &pairs)?;
    // Round 2: r012 = r01 r2, r013 = r01 r3, r023 = r02 r3, r123 = r12 r3, r0123 = r01 r23.
    let p_ = |k| (&p2, k);
    let pairs = [
        (p_(0), r_(2)),
        (p_(0), r_(3)),
        (p_(1), r_(3)),
        (p_(3), r_(3)),
        (p_(0), p_(5)),
    ];
    let p3 = mul(party, &pairs)?;

    let rounds = [r, p2, p3];
    let mono = |m: usize, c: usize| -> &[Bits16] {
        let (round, part) = MONOMIAL[m];
        let v = &rounds[round];
        let comp = if c == 0 { &v.first } else { &v.second };
        comp.get(part * w..(part + 1) * w).unwrap_or(&[])
    };
    let empty: &[Bits16] = &[];
    let first: [&[Bits16]; 16] = core::array::from_fn(|m| if m == 0 { empty } else { mono(m, 0) });
    let second: [&[Bits16]; 16] = core::array::from_fn(|m| if m == 0 { empty } else { mono(m, 1) });
    // The constant 1 (all lanes): x_1 = 1, i.e. P1's first and P3's second component.
    let (one_first, one_second) = match party.id() {
        PartyId::P1 => (Bits16::ONE.0, 0),
        PartyId::P2 => (0, 0),
        PartyId::P3 => (0, Bits16::ONE.0),
    };
    let mut e = RssVec {
        first: vec![0u16; n],
        second: vec![0u16; n],
    };
    let mut r = RssVec::zeros(n);
    assemble(
        |w| from_monomials(&first, one_first, w),
        &mut e.first,
        &mut r.first,
    );
    assemble(
        |w| from_monomials(&second, one_second, w),
        &mut e.second,
        &mut r.second,
    );
    let e = Arc::new(e);
    if packed {
        let rel = OhvRelations::from_vectors(Arc::clone(&e), w);
        party.model().record_source(Arc::new(ByteSource(rel)));
    } else if M::MALICIOUS {
        party
            .model()
            .record_source(Arc::new(BitProducts { rounds, w }));
        party.checkpoint()?;
    }
    Ok(Ohv16 { e, r })
}

/// The eleven products of Protocol 8 as `(x, y, z)`, each a piece `(round, part)` of the
/// rounds `[r, p2, p3]` (round 0 the random bits, rounds 1 and 2 the products; see
/// [`MONOMIAL`]).
const PRODUCTS: [[(usize, usize); 3]; 11] = [
    [(0, 0), (0, 1), (1, 0)],
    [(0, 0), (0, 2), (1, 1)],
    [(0, 0), (0, 3), (1, 2)],
    [(0, 1), (0, 2), (1, 3)],
    [(0, 1), (0, 3), (1, 4)],
    [(0, 2), (0, 3), (1, 5)],
    [(1, 0), (0, 2), (2, 0)],
    [(1, 0), (0, 3), (2, 1)],
    [(1, 1), (0, 3), (2, 2)],
    [(1, 3), (0, 3), (2, 3)],
    [(1, 0), (1, 5), (2, 4)],
];

/// The order of the eleven [`PRODUCTS`] in each group of [`BitProducts`]: those with the same
/// `x` next to each other (`r_0`, `r_1`, then `r_01` three times), and the two `y` that repeat
/// (`r_2`, `r_3`) in use together, so that the check keeps few repeated factors at a time.
const ORDER: [usize; 11] = [0, 1, 2, 3, 4, 5, 6, 7, 10, 8, 9];

/// The bit products of a batch of Protocol-8 runs (`mal-lut256-ss`: every product recorded),
/// kept as the vectors they were computed in instead of copies of their operands, `GF(2)`
/// triples lifted to 0 and 1. `Verify` reads them packed by eight in place
/// ([`TripleSource::bits_in_place`]), or as bytes 0 or 1 where a run mixes them with bytes.
///
/// Triple order: with `L = 16 w` lanes per product and `U` = [`SHARED_BIT_ALIGN`] (a
/// sub-block of the check's level over bits), the first `G = ⌊L / U⌋` groups each hold lanes
/// `g U .. (g + 1) U` of every product in the order [`ORDER`] (segment `11 g + i` is product
/// `ORDER[i]`), then the remaining `R = L - G U` lanes of every product in that order. A
/// factor that several products share (`r_0` is the `x` of `r_0 r_1`, `r_0 r_2` and `r_0
/// r_3`) is then the same bits in whole sub-blocks of one group, which the check maps and
/// folds once ([`TripleSource::shared_part`]): 10 of the 22 factors of a group instead of 22.
struct BitProducts {
    rounds: [RssVec<Bits16>; 3],
    w: usize,
}

impl BitProducts {
    /// Lanes per product.
    fn lanes(&self) -> usize {
        16 * self.w
    }

    /// Whole groups of [`SHARED_BIT_ALIGN`] lanes per product.
    fn groups(&self) -> usize {
        self.lanes() / SHARED_BIT_ALIGN
    }

    /// The segment of the triple order that holds triple `t` (`t < len`): its product, the
    /// lane of `t`, and the triples of the segment from `t` on.
    fn segment(&self, t: usize) -> (usize, usize, usize) {
        const U: usize = SHARED_BIT_ALIGN;
        let g = self.groups();
        let grouped = PRODUCTS.len() * g * U;
        if t < grouped {
            let (seg, off) = (t / U, t % U);
            (
                ORDER[seg % PRODUCTS.len()],
                seg / PRODUCTS.len() * U + off,
                U - off,
            )
        } else {
            let rest = (self.lanes() - g * U).max(1);
            let (seg, off) = ((t - grouped) / rest, (t - grouped) % rest);
            (ORDER[seg.min(PRODUCTS.len() - 1)], g * U + off, rest - off)
        }
    }

    /// Part `part` (`x_1, x_2, y_1, y_2, z_1, z_2`) of product `k`: `w` words (fewer only if
    /// a round is short, which the multiplication would have refused).
    fn piece(&self, k: usize, part: usize) -> &[Bits16] {
        let (round, at) = PRODUCTS[k][(part / 2).min(2)];
        let v = &self.rounds[round];
        let comp = if part.is_multiple_of(2) {
            &v.first
        } else {
            &v.second
        };
        comp.get(at * self.w..(at + 1) * self.w).unwrap_or(&[])
    }

    /// The segments that triples `start .. start + len` overlap: product, first lane in it,
    /// and the positions `0 .. len` it covers.
    fn overlaps(
        &self,
        start: usize,
        len: usize,
    ) -> impl Iterator<Item = (usize, usize, Range<usize>)> + '_ {
        let end = (start + len).min(self.len());
        let mut t = start;
        core::iter::from_fn(move || {
            if t >= end {
                return None;
            }
            let (k, l, rest) = self.segment(t);
            let n = rest.min(end - t);
            let item = (k, l, t - start..t - start + n);
            t += n;
            Some(item)
        })
    }
}

impl TripleSource<Gf2p64> for BitProducts {
    fn len(&self) -> usize {
        PRODUCTS.len() * self.lanes()
    }

    fn lift(&self, start: usize, parts: Parts, out: &mut LiftedTriples<Gf2p64>) {
        for (p, d) in out.parts_mut(parts).enumerate() {
            d.fill(Gf2p64::ZERO);
            for (k, l, r) in self.overlaps(start, d.len()) {
                let src = self.piece(k, p);
                for (o, lane) in d[r].iter_mut().zip(l..) {
                    let bit = src.get(lane / 16).map_or(0, |b| b.lane((lane % 16) as u32));
                    *o = Gf2p64(u64::from(bit));
                }
            }
        }
    }

    /// Bytes 0 or 1 (`GF(2) ⊂ GF(2^8)`).
    fn load_bytes(&self, part: usize, start: usize, out: &mut [u8]) -> bool {
        out.fill(0);
        for (k, l, r) in self.overlaps(start, out.len()) {
            let src = self.piece(k, part);
            let n = r.len().min((16 * src.len()).saturating_sub(l));
            Bits16::lanes_to_bytes(src, l, &mut out[r.start..r.start + n]);
        }
        true
    }

    fn has_bits(&self) -> bool {
        true
    }

    fn all_bits(&self) -> bool {
        true
    }

    fn load_bits(&self, part: usize, start: usize, len: usize, out: &mut [u8]) -> bool {
        out.fill(0);
        let mut piece = Vec::new();
        for (k, l, r) in self.overlaps(start, len) {
            let src = self.piece(k, part);
            let n = r.len().min((16 * src.len()).saturating_sub(l));
            if r.start.is_multiple_of(8) {
                let at = r.start / 8;
                Bits16::lanes_to_packed(src, l, n, &mut out[at..at + n.div_ceil(8)]);
                continue;
            }
            piece.clear();
            piece.resize(n.div_ceil(8), 0);
            Bits16::lanes_to_packed(src, l, n, &mut piece);
            Bits16::or_packed_at(out, r.start, &piece);
        }
        true
    }

    fn bits_in_place(&self, part: usize, start: usize, n: usize) -> Option<&[u8]> {
        if start >= self.len() {
            return None;
        }
        let (k, l, rest) = self.segment(start);
        let src = self.piece(k, part);
        if 8 * n > rest || !l.is_multiple_of(8) || l + 8 * n > 16 * src.len() {
            return None;
        }
        Bits16::lanes_as_packed(src)?.get(l / 8..l / 8 + n)
    }

    /// For a whole segment of a group whose factor (`x` for parts 0 and 1, `y` for 2 and 3) is
    /// that of another product of the group: the segment of the first such product.
    fn shared_part(&self, part: usize, start: usize, len: usize) -> Option<usize> {
        const U: usize = SHARED_BIT_ALIGN;
        let f = part / 2;
        if f > 1
            || len != U
            || !start.is_multiple_of(U)
            || start / U >= PRODUCTS.len() * self.groups()
        {
            return None;
        }
        let (g, i) = (start / U / PRODUCTS.len(), start / U % PRODUCTS.len());
        let factor = |i: usize| PRODUCTS[ORDER[i]][f];
        let mut same = (0..PRODUCTS.len()).filter(|&j| factor(j) == factor(i));
        let first = same.next()?;
        same.next()?;
        Some((PRODUCTS.len() * g + first) * U)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use triskele_engine::verify::{LiftedTriples, Parts, TripleSource};
    use triskele_field::{EmbedInto, Gf2p64, Gf2p8};

    fn lifted(n: usize) -> LiftedTriples<Gf2p64> {
        LiftedTriples {
            x: RssVec::zeros(n),
            y: RssVec::zeros(n),
            z: RssVec::zeros(n),
        }
    }

    /// The store Protocol 8 records for the bit-sliced monomials `rows[c][m]` (`m` in
    /// `1..16`; component `c`, `words` words): the one-hot vectors assembled from them with
    /// the constant-one words `ones`, then [`OhvRelations::from_vectors`] of the first `n`.
    fn store_of(rows: &[Vec<Vec<Bits16>>], words: usize, ones: [u16; 2], n: usize) -> OhvRelations {
        let mut e = RssVec {
            first: vec![0u16; n],
            second: vec![0u16; n],
        };
        let mut r = RssVec::<Gf2p4>::zeros(n);
        let outs = [(&mut e.first, &mut r.first), (&mut e.second, &mut r.second)];
        for (c, (ev, rv)) in outs.into_iter().enumerate() {
            let mono: [&[Bits16]; 16] =
                core::array::from_fn(|m| if m == 0 { &[][..] } else { &rows[c][m][..] });
            assemble(|w| from_monomials(&mono, ones[c], w), ev, rv);
        }
        OhvRelations::from_vectors(Arc::new(e), words)
    }

    /// [`mobius`] undoes the superset sums of every set of monomials (`μ_0` included).
    #[test]
    fn mobius_inverts_the_superset_sums() {
        for mu in 0..=u16::MAX {
            let mut e = 0u16;
            for k in 0..16 {
                let bit = (0..16)
                    .filter(|m| m & k == k)
                    .fold(0, |acc, m| acc ^ ((mu >> m) & 1));
                e |= bit << k;
            }
            assert_eq!(mobius(e), mu >> 1, "mu {mu:#06x}");
        }
    }

    /// `GF(2^8)` at `u = 0x02`: the relation part `p` of `k` from the monomial bits
    /// `bit(m)`, by the definition (each listed monomial bit times its power of `u`).
    fn part_at_u(k: usize, p: usize, bit: impl Fn(u8) -> bool) -> Gf2p8 {
        RELATIONS[k][p]
            .iter()
            .filter(|(m, _)| bit(*m))
            .fold(Gf2p8::ZERO, |acc, &(_, pow)| {
                acc + Gf2p8(2).pow(u32::from(pow))
            })
    }

    /// The loaded bytes equal the relations' definition evaluated in `GF(2^8)` on random
    /// monomials of 40 words, for ranges that start and end inside either relation's run and
    /// cross from one to the other, both components; the source lifts them by `E_8`, with
    /// zeros past the end.
    #[test]
    fn loaded_bytes_match_the_relation_lists() {
        let mut seed = 0x1234_5678_9abc_def0u64;
        let mut next = || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            (seed & 0xffff) as u16
        };
        // rows[c][m][w]: component c of μ_m, word w.
        let rows: Vec<Vec<Vec<Bits16>>> = (0..2)
            .map(|_| {
                (0..16)
                    .map(|_| (0..WORDS).map(|_| Bits16(next())).collect())
                    .collect()
            })
            .collect();
        const WORDS: usize = 40;
        const LEN: usize = 32 * WORDS;
        // The last word holds 11 instances; the store pads it with zero instances.
        const N: usize = 16 * WORDS - 5;
        let rel = store_of(&rows, WORDS, [0xffff, 0], N);
        assert_eq!(rel.len(), LEN);
        // No part of the one-hot relations lies in the subfield of 16 elements (the check
        // embeds them by the full tables).
        assert_eq!(subfield_parts(&rel), [[false; 3]; 2]);
        let want = |c: usize, t: usize, p: usize| -> u8 {
            let (k, j) = (t / (LEN / 2), t % (LEN / 2));
            let bit = |m: u8| (rows[c][usize::from(m)][j / 16].0 >> (j % 16)) & 1 == 1;
            if j < N {
                part_at_u(k, p, bit).0
            } else {
                0
            }
        };
        for (start, n) in [
            (0, LEN),
            (3, 50),
            (40, 40),
            (LEN / 2 - 100, 300),
            (LEN / 2, 64),
            (LEN - 5, 5),
        ] {
            for part in 0..6 {
                let mut out = vec![0xa5u8; n];
                rel.load(part, start, &mut out);
                for (i, o) in out.iter().enumerate() {
                    assert_eq!(
                        *o,
                        want(part % 2, start + i, part / 2),
                        "part {part} at {}",
                        start + i
                    );
                }
            }
        }
        let src = ByteSource(rel);
        let mut out = lifted(LEN + 7);
        src.lift(0, Parts::Xyz, &mut out);
        let e8 = |b: u8| Gf2p8(b).embed();
        for t in 0..LEN + 7 {
            let expect = |c, p| {
                if t < LEN {
                    e8(want(c, t, p))
                } else {
                    Gf2p64(0)
                }
            };
            assert_eq!(out.x.first[t], expect(0, 0), "x t{t}");
            assert_eq!(out.y.second[t], expect(1, 1), "y t{t}");
            assert_eq!(out.z.first[t], expect(0, 2), "z t{t}");
        }
    }

    /// The packed relations through [`OhvRelations`], in the clear: they hold for the honest
    /// monomials of every `r`, and fail for every one of the `2^11` error patterns of the 11
    /// products (one error bit per product, the round-2 products formed from the erroneous
    /// round-1 ones as in the protocol), at every `r`: one word per pattern, lane `r`.
    #[test]
    fn packed_relations_fail_for_every_error_pattern() {
        // (monomial, left factor, right factor) in the order Protocol 8 multiplies them.
        const PRODUCTS: [(usize, usize, usize); 11] = [
            (3, 1, 2),
            (5, 1, 4),
            (9, 1, 8),
            (6, 2, 4),
            (10, 2, 8),
            (12, 4, 8),
            (7, 3, 4),
            (11, 3, 8),
            (13, 5, 8),
            (14, 6, 8),
            (15, 3, 12),
        ];
        const PATTERNS: usize = 1 << 11;
        // rows[m][e]: μ_m of pattern e, lane r.
        let mut rows = vec![vec![Bits16(0); PATTERNS]; 16];
        for e in 0..PATTERNS {
            for r in 0..16 {
                let mut mu = [false; 16];
                for b in 0..4 {
                    mu[1 << b] = (r >> b) & 1 == 1;
                }
                for (i, &(m, a, b)) in PRODUCTS.iter().enumerate() {
                    mu[m] = (mu[a] && mu[b]) ^ ((e >> i) & 1 == 1);
                }
                for (row, v) in rows.iter_mut().zip(mu) {
                    row[e].0 |= u16::from(v) << r;
                }
            }
        }
        let rows = [rows, vec![vec![Bits16(0); PATTERNS]; 16]];
        let rel = store_of(&rows, PATTERNS, [0xffff, 0], 16 * PATTERNS);
        let n = 16 * PATTERNS;
        let mut t = lifted(2 * n);
        ByteSource(rel).lift(0, Parts::Xyz, &mut t);
        let holds = |i: usize| t.x.first[i] * t.y.first[i] == t.z.first[i];
        for e in 0..PATTERNS {
            for r in 0..16 {
                let j = 16 * e + r;
                let both = holds(triple_index(n, j, 0)) && holds(triple_index(n, j, 1));
                assert_eq!(both, e == 0, "pattern {e:#b}, r = {r}");
            }
        }
    }

    #[test]
    fn transpose_matches_naive() {
        let mut a = [0u16; 16];
        for (k, x) in a.iter_mut().enumerate() {
            *x = (k as u16).wrapping_mul(0x9e37) ^ 0x5a5a ^ ((k as u16) << 9);
        }
        let orig = a;
        transpose16(&mut a);
        for (j, row) in a.iter().enumerate() {
            for (k, col) in orig.iter().enumerate() {
                assert_eq!((row >> k) & 1, (col >> j) & 1);
            }
        }
    }

    #[test]
    fn monomials_give_one_hot_vectors() {
        // Cleartext: for every r, the superset sums of the monomials are one-hot at r
        // (PROTOCOLS.md §7: r = 5 gives 0x0020).
        for r in 0..16usize {
            let mut mu = [0u16; 16];
            for (m, x) in mu.iter_mut().enumerate() {
                // μ_m = 1 iff all bits of m are set in r; lane 0 only.
                *x = u16::from(m & r == m);
            }
            superset_sums(&mut mu);
            transpose16(&mut mu);
            assert_eq!(mu[0], 1 << r, "r = {r}");
        }
    }

    /// Random rounds of Protocol 8 for `w` words per piece.
    fn random_rounds(w: usize, seed: u64) -> [RssVec<Bits16>; 3] {
        use rand::{RngCore, SeedableRng};
        let mut rng = rand_chacha::ChaCha20Rng::seed_from_u64(seed);
        let mut bits = |n: usize| -> RssVec<Bits16> {
            let mut v = || {
                (0..n)
                    .map(|_| Bits16(rng.next_u32() as u16))
                    .collect::<Vec<_>>()
            };
            RssVec {
                first: v(),
                second: v(),
            }
        };
        [bits(4 * w), bits(6 * w), bits(5 * w)]
    }

    /// The segments of [`BitProducts`]' triple order for `w` words per piece, written out
    /// from its docs: product and word range.
    fn segments(w: usize) -> Vec<(usize, Range<usize>)> {
        let u = SHARED_BIT_ALIGN / 16;
        let g = w / u;
        let mut out = Vec::new();
        for group in 0..g {
            out.extend(ORDER.map(|k| (k, group * u..(group + 1) * u)));
        }
        if w > g * u {
            out.extend(ORDER.map(|k| (k, g * u..w)));
        }
        out
    }

    /// [`BitProducts`] reads the same triples as the store `Party::mul` would have filled with
    /// the eleven products (operands and products concatenated per segment of its order):
    /// lifted, as bytes, packed by eight at any offset and length, and in place within a
    /// segment; with no whole group, one group and a rest, and two groups.
    #[test]
    fn bit_products_are_the_recorded_triples() {
        use triskele_engine::Triples;
        let u = SHARED_BIT_ALIGN / 16;
        for (w, seed) in [(5, 8), (u + 5, 9), (2 * u, 10)] {
            let rounds = random_rounds(w, seed);
            let mut store = Triples::<Bits16>::default();
            let segs = segments(w);
            for (k, r) in &segs {
                let [x, y, z] = PRODUCTS[*k].map(|(round, at)| {
                    let v = &rounds[round];
                    let r = at * w + r.start..at * w + r.end;
                    (v.first[r.clone()].to_vec(), v.second[r].to_vec())
                });
                for (dst, src) in [(&mut store.x, x), (&mut store.y, y), (&mut store.z, z)] {
                    dst.first.extend_from_slice(&src.0);
                    dst.second.extend_from_slice(&src.1);
                }
            }
            let src = BitProducts { rounds, w };
            let n = src.len();
            assert_eq!(n, TripleSource::len(&store));
            assert!(src.all_bits() && store.all_bits());
            // Segment boundaries in triples.
            let ends: Vec<usize> = segs
                .iter()
                .scan(0, |t, (_, r)| {
                    *t += 16 * r.len();
                    Some(*t)
                })
                .collect();
            let b = ends[0];
            let m = 600.min(n);
            let (mut a, mut c) = (lifted(m), lifted(m));
            src.lift(n - m, Parts::Xyz, &mut a);
            store.lift(n - m, Parts::Xyz, &mut c);
            assert!(a.x == c.x && a.y == c.y && a.z == c.z);
            for (start, len) in [
                (0, n.min(4000)),
                (3, 77),
                (80, 80),
                (77, 400),
                (b.saturating_sub(24), 64),
                (b.saturating_sub(5), 13),
                (n - 13, 13),
                (n - 5, 40),
            ] {
                for part in 0..6 {
                    let m = len.min(n - start);
                    let (mut got, mut want) = (vec![9u8; m], vec![7u8; m]);
                    assert!(src.load_bytes(part, start, &mut got));
                    assert!(store.load_bytes(part, start, &mut want));
                    assert_eq!(got, want, "bytes {w} {start} {len} {part}");
                    let (mut got, mut want) =
                        (vec![9u8; len.div_ceil(8)], vec![7u8; len.div_ceil(8)]);
                    assert!(src.load_bits(part, start, len, &mut got));
                    assert!(store.load_bits(part, start, len, &mut want));
                    assert_eq!(got, want, "bits {w} {start} {len} {part}");
                    if start % 8 == 0 && start + len <= n {
                        let inside = src.bits_in_place(part, start, len / 8);
                        // In place only within one segment.
                        let seg = |t: usize| ends.iter().position(|e| t < *e);
                        let one = seg(start) == seg((start + len / 8 * 8).saturating_sub(1));
                        assert_eq!(inside.is_some(), one && len >= 8, "{w} {start} {len}");
                        if let Some(v) = inside {
                            assert_eq!(v, &want[..len / 8]);
                        }
                    }
                }
            }
        }
    }

    /// In each group of [`BitProducts`], a whole segment's factor is said to repeat exactly
    /// where another segment of the group holds the same bits in that factor (random bits:
    /// the same vector), and then points at the first of them; 10 of the group's 22 factors
    /// are worked. Nothing repeats across groups, in the rest after the groups, or for ranges
    /// other than whole segments.
    #[test]
    fn bit_products_say_which_factors_repeat() {
        const U: usize = SHARED_BIT_ALIGN;
        let w = 2 * U / 16 + 3;
        let src = BitProducts {
            rounds: random_rounds(w, 11),
            w,
        };
        let factor = |part: usize, seg: usize| -> Vec<u8> {
            let mut out = vec![0u8; 2 * U / 8];
            let (a, b) = out.split_at_mut(U / 8);
            assert!(src.load_bits(part, seg * U, U, a));
            assert!(src.load_bits(part + 1, seg * U, U, b));
            out
        };
        for g in 0..2 {
            let mut worked = 0;
            for part in [0, 2] {
                let segs = 11 * g..11 * (g + 1);
                let bits: Vec<Vec<u8>> = segs.clone().map(|i| factor(part, i)).collect();
                for i in segs.clone() {
                    let same: Vec<usize> = segs
                        .clone()
                        .filter(|&j| bits[j - 11 * g] == bits[i - 11 * g])
                        .collect();
                    let said = src.shared_part(part, i * U, U);
                    assert_eq!(src.shared_part(part + 1, i * U, U), said);
                    if same.len() > 1 {
                        assert_eq!(said, Some(same[0] * U), "part {part}, segment {i}");
                    } else {
                        assert_eq!(said, None, "part {part}, segment {i}");
                    }
                    worked += usize::from(said.is_none_or(|e| e == i * U));
                    assert_eq!(src.shared_part(part, i * U + 8, U - 8), None);
                    assert_eq!(src.shared_part(part, i * U, U / 2), None);
                }
            }
            assert_eq!(worked, 10);
            assert_eq!(src.shared_part(4, 11 * g * U, U), None, "z never");
        }
        assert_eq!(src.shared_part(0, 22 * U, U), None, "the rest");
    }
}
