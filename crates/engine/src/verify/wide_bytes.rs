//! The k-ary first level of `Verify` with blocks of 32 (`k = 32`) for large runs whose triples
//! all have a byte form and neither words nor packed bits (`GF(2^8)` and `GF(2^4)` products:
//! mal-chida-rec-check, mal-gf4-circuit, mal-lut256-ss-opt): the step of module `wide` on
//! bytes instead of packed bits, with the nodes of module `wide` (`α_n = n`, `n < 63`).
//!
//! # Layout and passes
//!
//! With `L` triples and `B = ⌈L/32⌉` blocks, the blocks are taken in chunks of [`CHUNK`]: the
//! chunk of blocks `c CHUNK ..` with `k` blocks holds the `32 k` triples from `32 c CHUNK`
//! (zero from `L` on), entry `m` of its block `i` being triple `32 c CHUNK + m k + i` (`entry`).
//! A chunk's part is then one run of triples, copied once per pass into the job's buffer (one
//! sequential read, also where the source stores it as bytes) and held in the second-level
//! cache while the kernels take its 32 rows side by side. (With the rows of module `octal`'s
//! bytes, entry `m` of block `J` at `m B + J`, read in place, the kernels read 32 streams far
//! apart that the prefetchers miss: for mal-gf4-circuit the fold's embedding took four times
//! the samples, and the finalize did not improve; docs/PERFORMANCE.md, "Runs of bytes fold by
//! 32".) The passes:
//!
//! * **sums**: `x_1, x_2, y_1, y_1 + y_2` at the 31 extra nodes `32 .. 62` by the additive FFT
//!   of `triskele_field::subspace` (the data nodes `0 .. 31` are the subspace `S` of
//!   `GF(2^8)` spanned by `1, 2, .., 16`, the extra nodes its coset `32 + S` less 63: 129
//!   products by constants per part and 32 entries, against 31 · 32 for the Lagrange
//!   coefficients), the local products there, and the sums of their embeddings against the
//!   block coefficients, on AVX2 by one byte map per block on all its 31 values (module `wide`'s
//!   `ColumnMaps`: the column factor of the block's coefficient times `E_8`, then the chunk's
//!   row factor);
//! * **fold**: per part one pass of 32 byte maps into `GF(2^64)` (`E_8` scaled by the Lagrange
//!   coefficients `ℓ_m(s)` of the data nodes), times `a_J` for `x`; and the data nodes' part
//!   of `Q(s)`, `Σ_m λ_m(s) D_{m,t} = Σ_J a_J Σ_m λ_m(s) E_8(z_{J,m,t})` (`λ` the Lagrange
//!   coefficients of all 63 nodes), as one more pass of 32 byte maps per component and an
//!   inner product with `a`. `Q` is needed at `s` only and the `D_{m,t}` are never sent, so
//!   they wait for the coin: 64 inner products of embedded bytes per block in the sums
//!   became two passes of maps (finalize of mal-chida-rec-check at 10,000 blocks on an AVX2
//!   machine 15% shorter; docs/PERFORMANCE.md, "AVX2 kernels"). A part whose bytes the
//!   source says lie in the subfield of 16 elements of `GF(2^8)`
//!   ([`TripleSource::bytes_in_subfield`]: `GF(2^4)` records through `ψ`, such as every part
//!   of mal-gf4-circuit's first relation and the `x` of its others) takes the same maps as
//!   tables of 16 entries indexed by `(b ^ b >> 4) & 15`, which is one-to-one on that
//!   subfield: one `vpshufb` per byte plane instead of two where the backend's byte maps are
//!   AVX2 `vpshufb` (`triskele_field::backend::subfield_sums_preferred`; the 512-bit GFNI
//!   backend keeps its one affine product per plane).
//!
//! # Shared factors
//!
//! Where relations share a factor (mal-chida-rec-check's chain: `x^12` is the `x` of
//! `x^15 = x^12 x^3` and of `x^14 = x^12 x^2`, `x^2` the `y` of `x^3 = x x^2` and of `x^14`) and
//! the source lays each relation's run out on whole chunks ([`super::SHARED_ALIGN`]), a chunk
//! whose factor repeats one of an earlier chunk ([`TripleSource::shared_part`]) takes that
//! chunk's work instead of its own: in the sums its values at the coset's nodes (a job keeps
//! those of its last three chunks), in the fold its folded values (`F_J(s)` before the
//! product with `a_J`, `G_J(s)`; kept for the last two chunks whose factor repeats). Neither
//! its rows nor their extrapolation nor their byte maps are then formed again; for the chain,
//! one relation in four needs only its `z` (finalize of mal-chida-rec-check 5-10% shorter;
//! docs/PERFORMANCE.md). The values are the same entry by entry, so the sums and the fold
//! are exactly those of the level without it.
//!
//! # Cost
//!
//! The messages are those of module `wide` (31 values reshared, 248 bytes to `P_{i-1}`); the
//! halvings start from `L/32` entries instead of the `L/8` of module `octal`, two halvings
//! (four rounds, 32 bytes to `P_{i-1}` and 16 to `P_{i+1}`) fewer, and the level's fold writes
//! a quarter of the words. Per entry, the extrapolation costs about as much as module
//! `octal`'s seven nodes by Lagrange coefficients (`129/32` against `56/8` products per part),
//! and the sums and the fold the same per triple. Soundness as in module `wide`.

use triskele_field::backend;
use triskele_field::embed::{e8, ByteEmbedding, SubfieldEmbedding, E8_TABLES};
use triskele_field::subspace::{COSET_SHIFT, POINTS};
use triskele_field::{Field, Gf2p64};

use super::bytes::lp8;
use super::coeffs::SUB;
use super::fold::{DataSums, Sums};
use super::wide::{
    fold_factors, fold_sub_blocks, nodes, shared, sum_sub_blocks, ColumnMaps, Kept, K,
};
use super::{lagrange_slice, TripleSource};

/// Blocks per chunk of a sub-block: the rows, extrapolated values and products of a chunk
/// (about 400 KiB) stay in the second-level cache. (512 measured slower, 2048 the same:
/// docs/PERFORMANCE.md, "Runs of bytes fold by 32".)
pub(super) const CHUNK: usize = 1024;

/// Extra nodes.
const EXTRA: usize = K - 1;

/// Bit-sum sources per call (the instance module `octal` uses for its data nodes).
const G: usize = 16;

/// Whether a run of `src` takes this level: every triple has a byte form, none is a packed
/// bit, and no triple needs words (module `octal`'s byte layout).
pub(super) fn applies(src: &dyn TripleSource<Gf2p64>) -> bool {
    !src.has_bits() && src.load_bytes(0, 0, &mut [])
}

/// The index of entry `m` of block `J` of a run of `len` triples (module docs).
#[cfg(test)]
pub(super) fn entry(len: usize, block: usize, m: usize) -> usize {
    let blocks = len.div_ceil(K);
    let (c, i) = (block / CHUNK, block % CHUNK);
    let k = CHUNK.min(blocks - c * CHUNK);
    K * c * CHUNK + m * k + i
}

/// One job's copy of parts `0 .. N` of a chunk: part `p` at `raw[p]` (`K · CHUNK` bytes).
struct Raw<const N: usize> {
    raw: [Vec<u8>; N],
}

impl<const N: usize> Raw<N> {
    fn new() -> Self {
        Raw {
            raw: core::array::from_fn(|_| vec![0; K * CHUNK]),
        }
    }

    /// Parts `0 .. N` of the chunk of blocks `j .. j + k` (`j` a multiple of [`CHUNK`], `k ≤
    /// CHUNK` its blocks), copied into the buffers: `rows[p][m]` holds entry `m` of its
    /// blocks, the triples `K j + m k .. K j + (m + 1) k` (zero past the source); `None` if
    /// some triple has no byte form. Only the parts with `need[p]` are loaded; the rows of
    /// the others hold whatever the buffers held, and must not be read.
    fn load(
        &mut self,
        src: &dyn TripleSource<Gf2p64>,
        j: usize,
        k: usize,
        need: [bool; N],
    ) -> Option<[[&[u8]; K]; N]> {
        let first = K * j;
        let n = (K * k).min(src.len().saturating_sub(first));
        let parts = self.raw.iter_mut().enumerate().zip(need);
        for ((p, buf), _) in parts.filter(|(_, need)| *need) {
            // A copy even where the source stores the bytes: one sequential read, after
            // which the kernels take the 32 rows side by side from the cache (read in place,
            // the rows are 32 streams that the prefetchers miss).
            if n > 0 && !src.load_bytes(p, first, &mut buf[..n]) {
                return None;
            }
            buf[n..K * k].fill(0);
        }
        let raw = &self.raw;
        Some(core::array::from_fn(|p| {
            core::array::from_fn(|m| &raw[p][m * k..(m + 1) * k])
        }))
    }
}

/// Whether part `p` of the chunk of blocks `j .. j + k` ([`Raw::load`]) is bytes of the
/// subfield of 16 elements of `GF(2^8)` (zero past the end of the source, which is too).
fn rows_in_subfield(src: &dyn TripleSource<Gf2p64>, p: usize, j: usize, k: usize) -> bool {
    let first = K * j;
    let n = (K * k).min(src.len().saturating_sub(first));
    n == 0 || src.bytes_in_subfield(p, first, n)
}

/// One job's scratch for the sums: the rows of `x` and `y`, `y_1 + y_2` per entry, the
/// values at the nodes of the coset of the last chunks' parts ([`Planes`]) and the local
/// products at the extra nodes.
struct Scratch {
    rows: Raw<4>,
    y12: Vec<[u8; CHUNK]>,
    planes: [Planes; RING],
    /// Chunks done, the clock of [`Planes::used`].
    clock: u64,
    w: Vec<[u8; CHUNK]>,
    /// The local products of a chunk as columns, one per block ([`ColumnMaps::add_sums`]).
    cols: Vec<[u8; 32]>,
}

/// The values at the nodes of the coset of one chunk's four parts `x_1, x_2, y_1, y_1 +
/// y_2` (32 planes each, stride [`CHUNK`]; `x` in the first half, `y` in the second), and for
/// each factor the start of the triples whose factor it is where the source says that
/// factor repeats ([`TripleSource::shared_part`]): a later chunk that repeats it takes these
/// values instead of loading and extrapolating its own.
struct Planes {
    at: Vec<u8>,
    keys: [Option<usize>; 2],
    used: u64,
}

/// Chunks whose values at the coset's nodes are kept: mal-chida-rec-check's third relation
/// takes its `x` from the chunk before it and its `y` from the one before that.
const RING: usize = 3;

/// Bytes of one factor's planes in [`Planes::at`] (two parts).
const HALF: usize = 2 * POINTS * CHUNK;

/// This party's local part of the step before the coin over `B = blocks` blocks: returns
/// `[0, .., 0, Q_32, .., Q_62]`, zero in the places of module `wide`'s `D_{m,t}` (the data
/// nodes wait for the coin: [`fold`]); `None` if some triple has no byte form.
pub(super) fn sums(
    src: &dyn TripleSource<Gf2p64>,
    seed: &[u8; 16],
    blocks: usize,
) -> Option<Vec<Gf2p64>> {
    let init = || Scratch {
        rows: Raw::new(),
        y12: vec![[0; CHUNK]; K],
        planes: core::array::from_fn(|_| Planes {
            at: Vec::new(),
            keys: [None; 2],
            used: 0,
        }),
        clock: 0,
        w: vec![[0; CHUNK]; EXTRA],
        cols: Vec::new(),
    };
    let maps = ColumnMaps::new(seed, &E8_TABLES);
    sum_sub_blocks(seed, blocks, 3 * K - 1, init, |sc, j, a, acc| {
        for c in (0..a.len()).step_by(CHUNK) {
            let a = &a[c..a.len().min(c + CHUNK)];
            chunk_sums(sc, src, maps.as_ref(), j + c, a, acc)?;
        }
        Some(())
    })
}

/// The sums of the blocks `j .. j + a.len()` added to `acc`.
fn chunk_sums(
    sc: &mut Scratch,
    src: &dyn TripleSource<Gf2p64>,
    maps: Option<&ColumnMaps>,
    j: usize,
    a: &[Gf2p64],
    acc: &mut [Gf2p64],
) -> Option<()> {
    let k = a.len();
    let first = K * j;
    let Scratch {
        rows,
        y12,
        planes,
        clock,
        w,
        cols,
    } = sc;
    *clock += 1;
    // Per factor, the planes of an earlier chunk that hold it, if any.
    let keys = shared(src, first, k, CHUNK);
    let found = [0, 1].map(|f| {
        let e = keys[f].filter(|e| *e < first)?;
        planes.iter().position(|p| p.keys[f] == Some(e))
    });
    let need = found.map(|f| f.is_none());
    // The planes this chunk computes: unkeyed ones first (the first of them, so that a
    // source without repeats keeps to one), else the least recently used; never those it
    // takes a factor from (there is one: a chunk takes from at most two).
    const { assert!(RING > 2) };
    let mine = (0..RING)
        .filter(|i| !found.contains(&Some(*i)))
        .min_by_key(|i| match planes[*i].keys {
            [None, None] => (false, 0, *i),
            _ => (true, planes[*i].used, *i),
        })
        .unwrap_or(0);
    if need.contains(&true) {
        let rows = rows.load(src, j, k, [need[0], need[0], need[1], need[1]])?;
        let p = &mut planes[mine];
        p.at.resize(2 * HALF, 0);
        p.keys = [0, 1].map(|f| keys[f].filter(|_| need[f]));
        p.used = *clock;
        if need[0] {
            for (t, part) in [rows[0], rows[1]].into_iter().enumerate() {
                COSET_SHIFT.shift(
                    part,
                    &mut p.at[t * POINTS * CHUNK..][..POINTS * CHUNK],
                    CHUNK,
                );
            }
        }
        if need[1] {
            for (m, o) in y12.iter_mut().enumerate() {
                for ((o, a), b) in o[..k].iter_mut().zip(rows[2][m]).zip(rows[3][m]) {
                    *o = a ^ b;
                }
            }
            let y12: [&[u8]; K] = core::array::from_fn(|m| &y12[m][..k]);
            for (t, part) in [rows[2], y12].into_iter().enumerate() {
                let dst = &mut p.at[HALF + t * POINTS * CHUNK..][..POINTS * CHUNK];
                COSET_SHIFT.shift(part, dst, CHUNK);
            }
        }
    }
    let from = found.map(|f| f.unwrap_or(mine));
    for f in from {
        planes[f].used = *clock;
    }
    // Node 32 + e of part t at at[(t · 32 + e) · CHUNK ..] of the planes that hold its factor.
    let node = |t: usize, e: usize| &planes[from[t / 2]].at[(t * POINTS + e) * CHUNK..][..k];
    for (e, o) in w.iter_mut().enumerate() {
        lp8(&mut o[..k], node(0, e), node(1, e), node(2, e), node(3, e));
    }
    // Σ_J a_J E_8(w) at the extra nodes: by the run's column maps, else sixteen planes at a
    // time (the last group repeats its first plane and ignores its sums).
    if let Some(m) = maps {
        m.add_sums(&mut acc[2 * K..], j, &w[..EXTRA], k, cols);
        return Some(());
    }
    for (e0, group) in (0..EXTRA).step_by(G).zip(w.chunks(G)) {
        let planes: [&[u8]; G] = core::array::from_fn(|i| &group.get(i).unwrap_or(&group[0])[..k]);
        let q = ByteEmbedding::inner_products(a, planes.map(|p| (&E8_TABLES, p)));
        for (o, v) in acc[2 * K + e0..].iter_mut().zip(&q[..group.len()]) {
            *o += *v;
        }
    }
    Some(())
}

/// Folded values of repeated factors kept per factor and job ([`FoldScratch`]).
const KEPT: usize = 2;

/// One job's scratch for the fold: the chunk's rows, and per factor (`x`, `y`) the folded
/// values (`F_J(s)` before the product with `a_J`, `G_J(s)`; both components) of the last
/// chunks whose factor repeats ([`TripleSource::shared_part`]), which a later chunk that
/// repeats it takes instead of loading and folding its own.
struct FoldScratch {
    raw: Raw<6>,
    kept: Kept<Gf2p64>,
}

/// The fold with the coin `s`: `out = [x'_1, x'_2, y'_1, y'_2]` (length `B` each) with `x'_J =
/// a_J F_J(s)`, `y'_J = G_J(s)`, the sums of the halving that pairs `j` with `j + half`
/// (`wide::fold_sub_blocks`), and the data nodes' part of `Q(s)` per component `t`, `Σ_m
/// λ_m D_{m,t} = Σ_J a_J Σ_m λ_m z_{J,m,t}` (`lambda`: the Lagrange coefficients `λ_m(s)` of
/// the 63 nodes, of which the first 32 are used); `None` if some triple has no byte form.
///
/// The data nodes are summed here rather than in [`sums`]: after the coin, each component is
/// one pass of 32 byte maps (`E_8` scaled by `λ_m`) and one inner product with `a`, where
/// before it each `D_{m,t}` would be an inner product of its own (64 per block of 32).
pub(super) fn fold(
    src: &dyn TripleSource<Gf2p64>,
    seed: &[u8; 16],
    s: Gf2p64,
    lambda: &[Gf2p64],
    out: [&mut [Gf2p64]; 4],
    half: usize,
) -> Option<(Sums<Gf2p64>, [Gf2p64; 2])> {
    let data: Vec<Gf2p64> = nodes()[..K].iter().map(|n| e8(*n)).collect();
    let ell = lagrange_slice(&data, s);
    let maps: [ByteEmbedding; K] = core::array::from_fn(|m| E8_TABLES.scaled_by(ell[m]));
    let lambda = lambda.get(..K)?;
    let dmaps: [ByteEmbedding; K] = core::array::from_fn(|m| E8_TABLES.scaled_by(lambda[m]));
    // The same maps on the subfield of 16 elements, for parts of `GF(2^4)` records where
    // that is faster (one table lookup per byte plane instead of two).
    let be = backend::active();
    let on_subfield = |maps: &[ByteEmbedding; K]| -> [SubfieldEmbedding; K] {
        core::array::from_fn(|m| maps[m].on_subfield())
    };
    let sub =
        backend::subfield_sums_preferred(be).then(|| (on_subfield(&maps), on_subfield(&dmaps)));
    let (sub_maps, sub_dmaps) = (sub.as_ref().map(|s| &s.0), sub.as_ref().map(|s| &s.1));
    // `Σ_m full[m](rows[m])`, by the subfield's tables where `sub` is given.
    let embed = |full: &[ByteEmbedding; K],
                 sub: Option<&[SubfieldEmbedding; K]>,
                 rows: [&[u8]; K],
                 out: &mut [Gf2p64]| match sub {
        Some(s) => SubfieldEmbedding::apply_sum_slice_with(be, s.each_ref(), rows, out),
        None => ByteEmbedding::apply_sum_slice_with(be, full.each_ref(), rows, out),
    };
    let at_data = DataSums::new();
    const { assert!(SUB.is_multiple_of(CHUNK)) };
    let init = || FoldScratch {
        raw: Raw::new(),
        kept: Kept::new(KEPT),
    };
    let sums = fold_sub_blocks(seed, out, half, init, |sc, j, a, mut out, acc| {
        let k = a.len();
        for c in (0..k).step_by(CHUNK) {
            let n = CHUNK.min(k - c);
            let first = K * (j + c);
            let slots = sc.kept.slots(shared(src, first, n, CHUNK), first);
            let need = [slots[0].need(), slots[1].need()];
            let parts = [need[0], need[0], need[1], need[1], true, true];
            let Some(rows) = sc.raw.load(src, j + c, n, parts) else {
                return false;
            };
            let in_sub: [bool; 6] = core::array::from_fn(|p| {
                sub.is_some() && parts[p] && rows_in_subfield(src, p, j + c, n)
            });
            let a = &a[c..c + n];
            // `x'_J = a_J F_J(s)`, `y'_J = G_J(s)`; all 32 entries in one pass (one transpose
            // per 64 blocks, no partial sums to add).
            let factors = sc
                .kept
                .factors(slots, |v| v.resize(2 * CHUNK, Gf2p64::ZERO));
            let pieces = out.each_mut().map(|o| &mut o[c..c + n]);
            fold_factors(pieces, acc, a, factors, CHUNK, |t, dst| {
                embed(&maps, sub_maps.filter(|_| in_sub[t]), rows[t], dst);
            });
            for t in 0..2 {
                let sub = sub_dmaps.filter(|_| in_sub[4 + t]);
                embed(&dmaps, sub, rows[4 + t], &mut acc[..n]);
                at_data.add(t, &acc[..n], a);
            }
        }
        true
    })?;
    Some((sums, at_data.into_values()))
}
