//! The k-ary first level of `Verify` with blocks of 32 (`k = 32`), for large runs whose
//! triples are all `GF(2)` triples packed by eight ([`TripleSource::load_bits`]): the step of
//! module `octal` with `k = 32`, where a block is four packed bytes. (Blocks of 16 and of 64
//! measured slower: see docs/PERFORMANCE.md, "Packed bits".) Runs of bytes only take the same
//! step with its nodes and passes (module `wide_bytes`).
//!
//! # The step
//!
//! With `L` triples and `B = ⌈L/32⌉` blocks, the blocks are taken in chunks of `SUB` (the
//! sub-blocks of the passes): the chunk of blocks `c SUB ..` with `k` blocks holds the `32 k`
//! triples from `32 c SUB` (zero from `L` on), and of its `4 k` packed bytes, byte `g k + i`
//! holds entries `8 g .. 8 g + 8` of its block `i` (`entry`), so that each quarter of the
//! blocks is a run of bytes, read in place. Block `J` has the coefficient `a_J`, the nodes are
//! the bytes `α_n = n` (`n < 63`) of `GF(2^8)`, and `P = Σ_J a_J F_J G_J` has degree 62. `Q`,
//! the polynomial that the claim `P = Q` is about, has at data node `m` the value `D_m = Σ_J
//! a_J z_{J,m}` (per component); at the 31 extra nodes each party computes its share of
//! `P(α)`: `F_J(α)` is the sum of four byte maps (the Lagrange coefficients of each eight data
//! nodes as the images of the bits), then a local product in `GF(2^8)` (on AVX2 without GFNI
//! in the isomorphic tower field, [`NodeMaps`]) and the sums of its embedding against the
//! coefficients (on AVX2 one byte map per block on its 31 values, [`ColumnMaps`]). The parties
//! reshare `Q(α_32) .. Q(α_62)` (31 elements, 248 bytes to `P_{i-1}`), toss one coin `s` and
//! fold to `a_J F_J(s)`, `G_J(s)` (four byte maps into `GF(2^64)` per entry, one product per
//! block): the halvings start from `L/32` entries. `Q` is needed at `s` only and the `D_m`
//! are never sent, so they wait for the coin: the fold forms `Σ_m λ_m(s) D_{m,t} = Σ_J a_J
//! Σ_m λ_m(s) z_{J,m,t}` by four more byte maps per entry and component and an inner product
//! with `a` (as module `wide_bytes` does for bytes), where the sums took a sum of `a` over
//! each bit plane of `z` (finalize of mal-lut256-ss at 10,000 blocks 3-6% shorter;
//! docs/PERFORMANCE.md, "Bit products' shared factors worked once").
//!
//! # Shared factors
//!
//! Where several relations' runs of bits share a factor (mal-lut256-ss's eleven bit products
//! of Protocol 8 take their `x` and `y` from eight vectors: `r_0` is the `x` of `r_0 r_1`, `r_0
//! r_2` and `r_0 r_3`) and the source lays the relations out on whole sub-blocks
//! ([`super::SHARED_BIT_ALIGN`]), a sub-block whose factor repeats one of an earlier sub-block
//! ([`TripleSource::shared_part`]) takes that sub-block's work instead of its own: in the sums
//! its values at the extra nodes (a job keeps those of two repeated factors of each kind, 256
//! KiB each), in the fold its folded values (`F_J(s)` before the product with `a_J`, `G_J(s)`;
//! four of each kind, since the fold visits two halves of the run side by side). Its bits are
//! then neither read nor mapped. The values are the same entry by entry, so the sums and the
//! fold are exactly those of the level without it.
//!
//! # Cost and soundness
//!
//! Per run `248 + 16ℓ' + 16` bytes to `P_{i-1}` and `16 + 8 + 8ℓ' + 24` to `P_{i+1}`,
//! `ℓ' = ⌈log2 B⌉`, in `2ℓ' + 8` rounds: 192 bytes more than the level with blocks of eight,
//! two halvings less. As in module `octal`, a wrong triple makes `Q ≠ P` unless a polynomial
//! of degree 2 in independent uniform factors vanishes (`≤ 2/2^64`), and then the claim
//! survives the step only if `s` is a root of `Q - P`, of degree ≤ 62 (`≤ 62/2^64`): with the
//! `ℓ'` halvings and CheckTriple, `(2ℓ' + 66)/2^64` per run (`(2ℓ' + 98)/2^64` with the last
//! twelve levels in steps of eight, module `tail`, which also change the bytes and rounds).

use rayon::prelude::*;
use triskele_field::backend::{self, tower_products_preferred};
use triskele_field::embed::{bit_plane_sums, e8, ByteEmbedding, E8_TABLES};
use triskele_field::{Bulk, Field, Gf2p64, Gf2p8, Gf4Tower, LinearMap8};

use super::bytes::lp8;
use super::coeffs::{Coefficients, COEFF_CHUNK, SUB};
use super::fold::{job_ranges, pair_sums, split_jobs, DataSums, Sums};
use super::{lagrange_slice, TripleSource};

/// Packed bytes per block.
pub(super) const G: usize = 4;
/// Entries per block.
pub(super) const K: usize = 8 * G;

/// Whether a run of `src` takes this level rather than the one with blocks of eight: all its
/// triples are packed bits.
pub(super) fn applies(src: &dyn TripleSource<Gf2p64>) -> bool {
    src.all_bits()
}

/// The nodes `α_n = n` (`n < 63`) of this level, as bytes of `GF(2^8)`.
pub(super) fn nodes() -> Vec<Gf2p8> {
    (0..2 * K - 1).map(|n| Gf2p8(n as u8)).collect()
}

/// For blocks of `8 B` packed bits (`B` bytes) and the `16 B - 1` nodes `nodes` (data nodes
/// first), for each extra node `α_{8B+e}`: the byte maps of the block's packed bytes, bit `m`
/// of byte `g` to the Lagrange coefficient of data node `8 g + m`. (Module `octal` uses `B =
/// 1` with its nodes for the sub-blocks of bits in its runs.)
pub(super) fn extra_node_maps<const B: usize>(nodes: &[Gf2p8]) -> Vec<[LinearMap8; B]> {
    let data = &nodes[..8 * B];
    (0..8 * B - 1)
        .map(|e| {
            let l = lagrange_slice(data, nodes[8 * B + e]);
            core::array::from_fn(|g| {
                LinearMap8::from_basis_images(core::array::from_fn(|m| l[8 * g + m].0))
            })
        })
        .collect()
}

/// The extra nodes' byte maps of [`extra_node_maps`] and the field in which [`block_sums`]
/// forms their local products: `GF(2^8)`, or the tower field `GF((2^4)^2)` on a backend that
/// multiplies faster there ([`tower_products_preferred`]: AVX2 without GFNI), with the maps
/// followed by the WOL isomorphism, so that the node values come out as tower bytes at no
/// cost, and the products embedded by [`E8_OF_TOWER`]. The sums are the same either way.
pub(super) struct NodeMaps<const B: usize> {
    maps: Vec<[LinearMap8; B]>,
    tower: bool,
}

impl<const B: usize> NodeMaps<B> {
    /// For the nodes `nodes` (data nodes first), on the active backend.
    pub(super) fn new(nodes: &[Gf2p8]) -> Self {
        Self::with_basis(nodes, tower_products_preferred(backend::active()))
    }

    /// For the nodes `nodes`, in the tower field if `tower`.
    pub(super) fn with_basis(nodes: &[Gf2p8], tower: bool) -> Self {
        let mut maps = extra_node_maps::<B>(nodes);
        if tower {
            for m in maps.iter_mut().flatten() {
                *m = Gf4Tower::WOL.compose(m);
            }
        }
        NodeMaps { maps, tower }
    }

    /// `out = x_1 (y_1 + y_2) + x_2 y_1` ([`lp8`]) of node values made by these maps, in
    /// their field.
    fn local_products(&self, out: &mut [u8], x1: &[u8], x2: &[u8], y1: &[u8], y12: &[u8]) {
        if self.tower {
            Gf4Tower::mul_sum2_bytes(out, x1, y12, x2, y1);
        } else {
            lp8(out, x1, x2, y1, y12);
        }
    }

    /// The embedding `E_8` of the local products' field into `GF(2^64)`.
    fn embedding(&self) -> &'static ByteEmbedding {
        if self.tower {
            &E8_OF_TOWER
        } else {
            &E8_TABLES
        }
    }
}

/// `E_8 ∘ φ^(-1)`: the embedding of `GF(2^8)` applied to packed tower bytes.
pub(super) const E8_OF_TOWER: ByteEmbedding = ByteEmbedding::new(&{
    let mut images = [Gf2p64(0); 8];
    let mut i = 0;
    while i < 8 {
        images[i] = e8(Gf2p8(Gf4Tower::WOL_INV.apply_byte(1 << i)));
        i += 1;
    }
    images
});

/// The fold's maps for blocks of `8 B` packed bits, the nodes `nodes` (data nodes first) and
/// the coin `s`: byte `g` of a block to `Σ_m ℓ_{8g+m}(s)` over its set bits (`ℓ` the Lagrange
/// coefficients of the data nodes).
pub(super) fn fold_maps<const B: usize>(nodes: &[Gf2p8], s: Gf2p64) -> [ByteEmbedding; B] {
    let data: Vec<Gf2p64> = nodes[..8 * B].iter().map(|n| e8(*n)).collect();
    let ell = lagrange_slice(&data, s);
    core::array::from_fn(|g| ByteEmbedding::new(&core::array::from_fn(|m| ell[8 * g + m])))
}

/// The index of entry `m` of block `J` of a run of `len` triples (the layout of the module
/// docs).
#[cfg(test)]
pub(super) fn entry(len: usize, block: usize, m: usize) -> usize {
    let blocks = len.div_ceil(K);
    let (c, i) = (block / SUB, block % SUB);
    let k = SUB.min(blocks - c * SUB);
    K * c * SUB + 8 * ((m / 8) * k + i) + m % 8
}

/// The `B` runs of `k` packed bytes of `v` (byte `i` of run `g`: entries `8 g .. 8 g + 8` of
/// block `i`).
fn groups<const B: usize>(v: &[u8], k: usize) -> [&[u8]; B] {
    core::array::from_fn(|g| &v[g * k..(g + 1) * k])
}

/// Extra nodes whose values [`block_sums`] forms in one pass over a part's packed bytes.
const NODES_PER_PASS: usize = 8;

/// One job's scratch for the sums of blocks of `8 B` packed bits (`y_1 + y_2` on `B k` bytes,
/// the four parts' values at [`NODES_PER_PASS`] extra nodes, the local products at the extra
/// nodes).
pub(super) struct Planes {
    y12: Vec<u8>,
    at: Vec<[u8; SUB]>,
    w: Vec<[u8; SUB]>,
    /// The local products at the extra nodes as columns ([`ColumnMaps::add_sums`]).
    cols: Vec<[u8; 32]>,
}

impl Planes {
    /// For `B` packed bytes per block.
    pub(super) fn new(b: usize) -> Self {
        Planes {
            y12: vec![0; b * SUB],
            at: vec![[0; SUB]; 4 * NODES_PER_PASS],
            w: vec![[0; SUB]; 8 * b - 1],
            cols: Vec::new(),
        }
    }
}

#[cfg(test)]
std::thread_local! {
    /// Set by a test to take the inner products instead of [`ColumnMaps`] on this thread.
    pub(super) static NO_COLUMN_MAPS: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// Whether a test turned the column maps off on this thread.
fn columns_off() -> bool {
    #[cfg(test)]
    if NO_COLUMN_MAPS.with(std::cell::Cell::get) {
        return true;
    }
    false
}

/// The run's coefficients with `E` (the embedding of the local products) scaled by each
/// column factor: the sums at the extra nodes of the blocks `J` of one chunk of
/// [`COEFF_CHUNK`], `Σ_J a_J E(w_J)` with `a_J = r_i b_j` (the row factor `r_i` of the chunk,
/// the column factor `b_j` of the position `j` in it; module `coeffs`), are `r_i Σ_J M_j(w_J)`
/// with the byte map `M_j = b_j E`: the local products are transposed into one column of up
/// to 32 bytes per block, and each column takes two `vpshufb` per byte plane in its block's
/// tables for all its values ([`ByteEmbedding::column_sums_with`]), where embedding every
/// term and multiplying it by `a_J` took 2.6 times the samples in a profile of
/// mal-gf4-circuit (docs/PERFORMANCE.md, "Extra nodes' sums by column maps").
pub(super) struct ColumnMaps {
    co: Coefficients<Gf2p64>,
    /// The maps' byte planes ([`ByteEmbedding::byte_planes`]), side by side (256 bytes each).
    planes: Vec<[[u8; 16]; 16]>,
}

impl ColumnMaps {
    /// The maps of the run with `seed` for the embedding `e`; `None` if its coefficients are
    /// not products, or if the active backend does not prefer the column sums
    /// ([`backend::column_sums_preferred`]: not on the portable backend, which takes both one
    /// byte at a time, nor where the inner products take bit sums).
    pub(super) fn new(seed: &[u8; 16], e: &ByteEmbedding) -> Option<Self> {
        if !backend::column_sums_preferred(backend::active()) || columns_off() {
            return None;
        }
        let co = Coefficients::<Gf2p64>::new(*seed);
        let planes: Vec<[[u8; 16]; 16]> =
            co.columns().iter().map(|b| e.scaled_planes(*b)).collect();
        (planes.len() == COEFF_CHUNK).then_some(ColumnMaps { co, planes })
    }

    /// Adds `Σ_J a_J E(rows[e][J - j])` over the blocks `J = j .. j + k` to `acc[e]`, for
    /// each of the first 32 rows; `cols` is scratch.
    pub(super) fn add_sums<const N: usize>(
        &self,
        acc: &mut [Gf2p64],
        j: usize,
        rows: &[[u8; N]],
        k: usize,
        cols: &mut Vec<[u8; 32]>,
    ) {
        let be = backend::active();
        let rows = &rows[..rows.len().min(32)];
        let k = k.min(N);
        let mut done = 0;
        while done < k {
            let first = j + done;
            let off = first % COEFF_CHUNK;
            let n = (COEFF_CHUNK - off).min(k - done);
            if cols.len() < n {
                cols.resize(n, [0; 32]);
            }
            let mut piece: [&[u8]; 32] = [&[]; 32];
            for (p, r) in piece.iter_mut().zip(rows) {
                *p = &r[done..done + n];
            }
            let piece = &piece[..rows.len()];
            ByteEmbedding::transpose_columns_with(be, piece, &mut cols[..n]);
            let s = ByteEmbedding::column_sums_with(be, &self.planes[off..off + n], &cols[..n]);
            let r = self.co.row(first / COEFF_CHUNK);
            for (o, v) in acc.iter_mut().zip(&s[..rows.len()]) {
                *o += r * *v;
            }
            done += n;
        }
    }
}

/// The parts `p` with `need[p]` of the blocks `j .. j + k` (`G k` packed bytes each; the
/// others empty): borrowed where the source stores them so, else loaded into `raw`; `None` if
/// they are not packed bits.
fn load<'a>(
    raw: &'a mut [Vec<u8>],
    src: &'a dyn TripleSource<Gf2p64>,
    j: usize,
    k: usize,
    need: [bool; 6],
) -> Option<[&'a [u8]; 6]> {
    let first = K * j;
    let n = (K * k).min(src.len().saturating_sub(first));
    let mut direct: [Option<&'a [u8]>; 6] = [None; 6];
    for (p, d) in direct.iter_mut().enumerate().filter(|(p, _)| need[*p]) {
        if n == K * k {
            *d = src.bits_in_place(p, first, G * k);
        }
        if d.is_none() && !src.load_bits(p, first, n, &mut raw[p][..G * k]) {
            return None;
        }
    }
    Some(core::array::from_fn(|p| match direct[p] {
        Some(d) => d,
        None if need[p] => &raw[p][..G * k],
        None => &[],
    }))
}

/// This party's local part of the step before the coin over `B = blocks` blocks: returns
/// `[0, .., 0, Q_K, .., Q_{2K-2}]`, zero in the places of the data nodes' `D_{m,t}` (module
/// `octal`, `sums`; they wait for the coin: [`fold`]); `None` if some triple is not a packed
/// bit. A factor of a full sub-block that repeats one of an earlier sub-block
/// ([`TripleSource::shared_part`]) takes that sub-block's values at the extra nodes
/// ([`KeptEntry`]) instead of mapping its bits again.
pub(super) fn sums(
    src: &dyn TripleSource<Gf2p64>,
    seed: &[u8; 16],
    blocks: usize,
) -> Option<Vec<Gf2p64>> {
    // The maps depend only on the nodes and the backend: formed once per process (about
    // 0.26 ms each time, and a segment of a large batch runs several runs).
    static MAPS: std::sync::OnceLock<NodeMaps<G>> = std::sync::OnceLock::new();
    let maps = MAPS.get_or_init(|| NodeMaps::new(&nodes()));
    // [0 (the D_{m,t}, left to the fold), .., Q_K .. Q_{2K-2}].
    let init = || SumScratch {
        planes: Planes::new(G),
        raw: vec![vec![0u8; G * SUB]; 6],
        kept: Kept::new(KEEP_SUMS),
    };
    let columns = ColumnMaps::new(seed, maps.embedding());
    sum_sub_blocks(seed, blocks, 3 * K - 1, init, |sc, j, a, acc| {
        let k = a.len();
        let first = K * j;
        let slots = sc.kept.slots(shared(src, first, k, SUB), first);
        let need = parts_needed([slots[0].need(), slots[1].need()], false);
        let parts = load(&mut sc.raw, src, j, k, need)?;
        let factors = sc.kept.factors(slots, |v| {
            v.resize(2 * NODE_ROWS, [0; SUB]);
        });
        let columns = columns.as_ref().map(|c| (c, j));
        block_sums_kept::<G>(acc, a, parts, &mut sc.planes, maps, factors, false, columns);
        Some(())
    })
}

/// For each factor of the `k` blocks of triples from `first` (`x`: parts 0, 1; `y`: parts 2,
/// 3), if they are a whole chunk (`k = whole` blocks: a sub-block here, a chunk in module
/// `wide_bytes`), the start of the first chunk with the same factor where the source says it
/// repeats ([`TripleSource::shared_part`]); `None` for a shorter chunk, whose layout no other
/// chunk shares.
pub(super) fn shared(
    src: &dyn TripleSource<Gf2p64>,
    first: usize,
    k: usize,
    whole: usize,
) -> [Option<usize>; 2] {
    if k == whole {
        [0, 2].map(|p| src.shared_part(p, first, K * k))
    } else {
        [None; 2]
    }
}

/// Parts to load when the factors with `need` are worked here, and `z` with `z`.
fn parts_needed(need: [bool; 2], z: bool) -> [bool; 6] {
    [need[0], need[0], need[1], need[1], z, z]
}

/// Rows of one component's values at the extra nodes in a [`KeptEntry`]: [`NODES_PER_PASS`]
/// rows from any group's first node fit.
const NODE_ROWS: usize = (K - 1).next_multiple_of(NODES_PER_PASS);

/// Kept entries per factor and job in the sums: mal-lut256-ss's bit products use at most two
/// repeated `y` at a time in a group of sub-blocks (module `ohv16` of `triskele-aes`).
const KEEP_SUMS: usize = 2;

/// Kept entries per factor and job in the fold, which visits two groups of sub-blocks side by
/// side ([`fold_sub_blocks`]).
const KEEP_FOLD: usize = 4;

/// One factor's work over one whole chunk (a sub-block here, a chunk of 1,024 blocks in module
/// `wide_bytes`'s fold), kept for later chunks whose factor repeats it: the values at the extra
/// nodes (`x_1, x_2` or `y_1, y_1 + y_2`, [`NODE_ROWS`] rows each) in the sums, `F_J(s)` (before
/// the product with `a_J`) or `G_J(s)` per component in the fold.
pub(super) struct KeptEntry<T> {
    /// The start of the first chunk with this factor (the source's key).
    key: Option<usize>,
    /// Chunks done when last used.
    used: u64,
    vals: Vec<T>,
}

/// A job's kept entries per factor and its clock.
pub(super) struct Kept<T> {
    entries: [Vec<KeptEntry<T>>; 2],
    clock: u64,
}

/// What a chunk does with one factor: works it (`Work`, and keeps the result in entry
/// `Some(i)`) or takes entry `i` of an earlier chunk (`Take`).
#[derive(Clone, Copy)]
pub(super) enum Slot {
    Work(Option<usize>),
    Take(usize),
}

impl Slot {
    /// Whether the factor's parts are read.
    pub(super) fn need(self) -> bool {
        matches!(self, Slot::Work(_))
    }
}

/// One factor's values for [`block_sums_kept`] and the fold: worked into scratch
/// (`Work(None)`), worked into a kept entry (`Work(Some(v))`), or taken from one (`Take(v)`).
pub(super) enum Factor<'a, T> {
    Work(Option<&'a mut [T]>),
    Take(&'a [T]),
}

impl<T> Factor<'_, T> {
    /// The kept entry's values, taken or being worked; `None` for scratch.
    pub(super) fn kept(&self) -> Option<&[T]> {
        match self {
            Factor::Take(v) => Some(v),
            Factor::Work(v) => v.as_deref(),
        }
    }
}

impl<T> Kept<T> {
    pub(super) fn new(keep: usize) -> Self {
        Kept {
            entries: core::array::from_fn(|_| {
                (0..keep)
                    .map(|_| KeptEntry {
                        key: None,
                        used: 0,
                        vals: Vec::new(),
                    })
                    .collect()
            }),
            clock: 0,
        }
    }

    /// For the chunk starting at triple `first` with the factors' keys `keys` ([`shared`]): per
    /// factor, the entry of an earlier chunk that holds it, else the entry (free, or used
    /// longest ago) that keeps this one's work where the factor repeats.
    pub(super) fn slots(&mut self, keys: [Option<usize>; 2], first: usize) -> [Slot; 2] {
        self.clock += 1;
        let clock = self.clock;
        core::array::from_fn(|f| {
            let entries = &mut self.entries[f];
            let Some(key) = keys[f] else {
                return Slot::Work(None);
            };
            if key < first {
                if let Some(i) = entries.iter().position(|e| e.key == Some(key)) {
                    entries[i].used = clock;
                    return Slot::Take(i);
                }
            }
            let i = (0..entries.len())
                .min_by_key(|&i| (entries[i].key.is_some(), entries[i].used))
                .unwrap_or(0);
            entries[i].key = Some(key);
            entries[i].used = clock;
            Slot::Work(Some(i))
        })
    }

    /// The factors' values for `slots`, each kept entry's values sized by `size` first.
    pub(super) fn factors(
        &mut self,
        slots: [Slot; 2],
        size: impl Fn(&mut Vec<T>),
    ) -> [Factor<'_, T>; 2] {
        fn pick<'a, T>(
            entries: &'a mut [KeptEntry<T>],
            slot: Slot,
            size: &impl Fn(&mut Vec<T>),
        ) -> Factor<'a, T> {
            match slot {
                Slot::Work(None) => Factor::Work(None),
                Slot::Work(Some(i)) => {
                    let v = &mut entries[i].vals;
                    size(v);
                    Factor::Work(Some(&mut v[..]))
                }
                Slot::Take(i) => Factor::Take(&entries[i].vals[..]),
            }
        }
        let [ex, ey] = &mut self.entries;
        [pick(ex, slots[0], &size), pick(ey, slots[1], &size)]
    }
}

/// One job's scratch for the fold.
struct FoldScratch {
    raw: Vec<Vec<u8>>,
    kept: Kept<Gf2p64>,
}

/// One job's scratch for the sums.
struct SumScratch {
    planes: Planes,
    raw: Vec<Vec<u8>>,
    kept: Kept<[u8; SUB]>,
}

/// The sums' sub-blocks, in parallel jobs: for the sub-block of blocks `j .. j + k` of
/// `blocks`, `block(state, j, a, acc)` gets the block coefficients `a` (`k` of them, of the run
/// with `seed`) and adds its sums to the job's `len` accumulators `acc`; `state` comes from
/// `init`, once per job. The accumulators of all jobs added up; `None` if some call returns it.
pub(super) fn sum_sub_blocks<S>(
    seed: &[u8; 16],
    blocks: usize,
    len: usize,
    init: impl Fn() -> S + Sync,
    block: impl Fn(&mut S, usize, &[Gf2p64], &mut [Gf2p64]) -> Option<()> + Sync,
) -> Option<Vec<Gf2p64>> {
    let co = Coefficients::<Gf2p64>::new(*seed);
    job_ranges(blocks, SUB)
        .into_par_iter()
        .map(|r| {
            let mut state = init();
            let mut abuf = vec![Gf2p64::ZERO; SUB];
            let mut acc = vec![Gf2p64::ZERO; len];
            for j in r.step_by(SUB) {
                let k = SUB.min(blocks - j);
                let a = block_coefficients(&co, j, k, &mut abuf);
                block(&mut state, j, a, &mut acc)?;
            }
            Some(acc)
        })
        .try_reduce(
            || vec![Gf2p64::ZERO; len],
            |mut x, y| {
                for (x, y) in x.iter_mut().zip(y) {
                    *x += y;
                }
                Some(x)
            },
        )
}

/// The sums of one sub-block of `k = a.len()` blocks of `8 B` packed bits (`parts`: `B k`
/// bytes each, the runs of [`groups`]; `node_maps` from [`NodeMaps`]) added to `acc =
/// [D_{0,1}, D_{0,2}, .., Q_{8B}, ..]`. At data node `m` the value is `D_m = Σ_J a_J z_{J,m}`
/// (both components), the sum of `a` over a bit plane of `z`; at the extra nodes `F_J(α)` is
/// the sum of `B` byte maps of the packed bytes, then a local product in `GF(2^8)` or the
/// tower field ([`NodeMaps`]) and the bit sums of its embedding.
pub(super) fn block_sums<const B: usize>(
    acc: &mut [Gf2p64],
    a: &[Gf2p64],
    parts: [&[u8]; 6],
    pl: &mut Planes,
    node_maps: &NodeMaps<B>,
) {
    block_sums_kept(
        acc,
        a,
        parts,
        pl,
        node_maps,
        [Factor::Work(None), Factor::Work(None)],
        true,
        None,
    );
}

/// [`block_sums`] with each factor's values at the extra nodes (`x_1, x_2` or `y_1, y_1 +
/// y_2`; component `t`, node `8 B + e` in row `t NODE_ROWS + e`) worked here, also into a kept
/// entry, or taken from one (whose factor's parts `parts` then need not hold); the data nodes'
/// `D_m` only with `data` (else left to the fold, and `z` need not hold); the sums at the
/// extra nodes by `columns` (the run's column maps and the first block `j`) where given.
#[allow(clippy::too_many_arguments)]
fn block_sums_kept<const B: usize>(
    acc: &mut [Gf2p64],
    a: &[Gf2p64],
    parts: [&[u8]; 6],
    pl: &mut Planes,
    node_maps: &NodeMaps<B>,
    mut factors: [Factor<'_, [u8; SUB]>; 2],
    data: bool,
    columns: Option<(&ColumnMaps, usize)>,
) {
    let maps = &node_maps.maps[..];
    let k = a.len();
    let [x1, x2, y1, y2, z1, z2] = parts.map(|p| p.get(..B * k).unwrap_or(&[]));
    let Planes { y12, at, w, cols } = pl;
    let y12 = &mut y12[..B * k];
    if matches!(factors[1], Factor::Work(_)) {
        for ((o, a), b) in y12.iter_mut().zip(y1).zip(y2) {
            *o = a ^ b;
        }
    }
    // Data node 8 g + m from bit m of run g, component t at acc[2 (8 g + m) + t].
    if data {
        let (z1, z2) = (groups::<B>(z1, k), groups::<B>(z2, k));
        for g in 0..B {
            let [s1, s2] = bit_plane_sums(a, [z1[g], z2[g]]);
            for m in 0..8 {
                acc[2 * (8 * g + m)] += s1[m];
                acc[2 * (8 * g + m) + 1] += s2[m];
            }
        }
    }
    let y12: &[u8] = y12;
    let comps = [[x1, x2], [y1, y12]];
    // The values at the extra nodes, NODES_PER_PASS nodes per pass over a part (its bytes
    // split into nibbles once for all of them; a short last group of seven takes its own
    // pass, a shorter one repeats its first node), then their local products.
    for (e0, group) in (0..maps.len())
        .step_by(NODES_PER_PASS)
        .zip(maps.chunks(NODES_PER_PASS))
    {
        for (f, factor) in factors.iter_mut().enumerate() {
            for (t, v) in comps[f].into_iter().enumerate() {
                let dst: &mut [[u8; SUB]] = match factor {
                    Factor::Take(_) => continue,
                    Factor::Work(Some(rows)) => &mut rows[t * NODE_ROWS + e0..][..NODES_PER_PASS],
                    Factor::Work(None) => {
                        let i = (2 * f + t) * NODES_PER_PASS;
                        &mut at[i..i + NODES_PER_PASS]
                    }
                };
                let src = groups::<B>(v, k);
                if group.len() == NODES_PER_PASS - 1 {
                    node_values::<B, { NODES_PER_PASS - 1 }>(group, src, dst, k);
                } else {
                    node_values::<B, NODES_PER_PASS>(group, src, dst, k);
                }
            }
        }
        for (i, out) in w[e0..e0 + group.len()].iter_mut().enumerate() {
            let node = |t: usize| -> &[u8] {
                let (f, c) = (t / 2, t % 2);
                match factors[f].kept() {
                    Some(rows) => &rows[c * NODE_ROWS + e0 + i][..k],
                    None => &at[t * NODES_PER_PASS + i][..k],
                }
            };
            node_maps.local_products(&mut out[..k], node(0), node(1), node(2), node(3));
        }
    }
    // Σ_J a_J E_8(w) at the extra nodes: by the column maps where given, else eight planes at
    // a time (a short group repeats its first plane and ignores its sums).
    if let Some((c, j)) = columns {
        c.add_sums(&mut acc[16 * B..], j, &w[..maps.len()], k, cols);
        return;
    }
    for (e0, group) in (0..maps.len()).step_by(8).zip(w[..maps.len()].chunks(8)) {
        let planes: [&[u8]; 8] = core::array::from_fn(|i| &group.get(i).unwrap_or(&group[0])[..k]);
        let e = node_maps.embedding();
        let q = ByteEmbedding::inner_products(a, planes.map(|p| (e, p)));
        for (o, v) in acc[16 * B + e0..].iter_mut().zip(&q[..group.len()]) {
            *o += *v;
        }
    }
}

/// The values of one part (its `B` runs of `k` packed bytes, `src`) at the extra nodes of
/// `group` (their byte maps, [`extra_node_maps`]) into `at[i][..k]`, `E` nodes in one pass
/// (a shorter group repeats its first node, whose values then go unread).
fn node_values<const B: usize, const E: usize>(
    group: &[[LinearMap8; B]],
    src: [&[u8]; B],
    at: &mut [[u8; SUB]],
    k: usize,
) {
    let maps: [[LinearMap8; B]; E] = core::array::from_fn(|i| *group.get(i).unwrap_or(&group[0]));
    let mut planes = at.iter_mut();
    let dst = core::array::from_fn(|_| planes.next().map_or(&mut [][..], |p| &mut p[..k]));
    LinearMap8::apply_sums_bytes(&maps, src, dst);
}

/// The fold of one sub-block of `k` blocks of `8 B` packed bits into `out` (`x'_1, x'_2` with
/// the coefficients `a`, `y'_1, y'_2` without; `maps` from [`fold_maps`], `acc` scratch of `k`).
pub(super) fn fold_block<const B: usize>(
    maps: &[ByteEmbedding; B],
    parts: [&[u8]; 6],
    a: &[Gf2p64],
    out: [&mut [Gf2p64]; 4],
    acc: &mut [Gf2p64],
) {
    let k = a.len();
    let factors = [Factor::Work(None), Factor::Work(None)];
    fold_factors(out, acc, a, factors, 0, |t, dst| {
        ByteEmbedding::apply_sum_slice(maps.each_ref(), groups::<B>(parts[t], k), dst);
    });
}

/// The fold's outputs `out = [x'_1, x'_2, y'_1, y'_2]` of one chunk of `k = a.len()` blocks,
/// `x'_J = a_J F_J(s)` and `y'_J = G_J(s)`, from each factor's folded values: taken from a kept
/// entry, or formed by `embed(t, dst)` (part `t` folded into `dst`) into a kept entry (component
/// `c` at `c stride ..`) or into `acc` (scratch of `k`; `y` straight into `out`).
pub(super) fn fold_factors(
    out: [&mut [Gf2p64]; 4],
    acc: &mut [Gf2p64],
    a: &[Gf2p64],
    mut factors: [Factor<'_, Gf2p64>; 2],
    stride: usize,
    mut embed: impl FnMut(usize, &mut [Gf2p64]),
) {
    let k = a.len();
    for (t, o) in out.into_iter().enumerate() {
        let (f, c) = (t / 2, t % 2);
        let folded: &[Gf2p64] = match &mut factors[f] {
            Factor::Take(v) => &v[c * stride..][..k],
            Factor::Work(kept) => {
                let dst = match kept {
                    Some(v) => &mut v[c * stride..][..k],
                    None if f == 0 => &mut acc[..k],
                    None => {
                        embed(t, o);
                        continue;
                    }
                };
                embed(t, dst);
                dst
            }
        };
        if f == 0 {
            Gf2p64::mul_slice(o, folded, a);
        } else {
            o.copy_from_slice(folded);
        }
    }
}

/// The block coefficients `a_j .. a_{j + k}` of a sub-block, drawn into `buf` (both passes
/// draw them where they use them, instead of keeping a vector of `B` coefficients between
/// them: one product per block, against writing and reading eight bytes per block).
fn block_coefficients<'b>(
    co: &Coefficients<Gf2p64>,
    j: usize,
    k: usize,
    buf: &'b mut [Gf2p64],
) -> &'b [Gf2p64] {
    let a = &mut buf[..k];
    co.fill(j, a);
    a
}

/// The fold with the coin `s`: `out = [x'_1, x'_2, y'_1, y'_2]` (length `B` each) with
/// `x'_J = a_J F_J(s)`, `y'_J = G_J(s)` (`a_J` the block coefficients of the run with `seed`),
/// the sums of the halving that pairs `j` with `j + half` (`fold_sub_blocks`), and the data
/// nodes' part of `Q(s)` per component `t`, `Σ_m λ_m D_{m,t} = Σ_J a_J Σ_m λ_m z_{J,m,t}`
/// (`lambda`: the Lagrange coefficients `λ_m(s)` of the 63 nodes, of which the first 32 are
/// used): per component four byte maps of the packed bits and an inner product with `a`,
/// where before the coin each `D_{m,t}` was a sum of `a` over a bit plane of `z` (module
/// `wide_bytes` does the same for bytes); `None` if some triple is not a packed bit.
pub(super) fn fold(
    src: &dyn TripleSource<Gf2p64>,
    seed: &[u8; 16],
    s: Gf2p64,
    lambda: &[Gf2p64],
    out: [&mut [Gf2p64]; 4],
    half: usize,
) -> Option<(Sums<Gf2p64>, [Gf2p64; 2])> {
    let maps = fold_maps::<G>(&nodes(), s);
    let lambda = lambda.get(..K)?;
    let zmaps: [ByteEmbedding; G] =
        core::array::from_fn(|g| ByteEmbedding::new(&core::array::from_fn(|m| lambda[8 * g + m])));
    let at_data = DataSums::new();
    let init = || FoldScratch {
        raw: vec![vec![0u8; G * SUB]; 6],
        kept: Kept::new(KEEP_FOLD),
    };
    let sums = fold_sub_blocks(seed, out, half, init, |sc, j, a, out, acc| {
        let k = a.len();
        let first = K * j;
        let slots = sc.kept.slots(shared(src, first, k, SUB), first);
        let need = parts_needed([slots[0].need(), slots[1].need()], true);
        let Some(parts) = load(&mut sc.raw, src, j, k, need) else {
            return false;
        };
        let factors = sc.kept.factors(slots, |v| v.resize(2 * SUB, Gf2p64::ZERO));
        fold_factors(out, acc, a, factors, SUB, |t, dst| {
            ByteEmbedding::apply_sum_slice(maps.each_ref(), groups::<G>(parts[t], k), dst);
        });
        for t in 0..2 {
            let z = groups::<G>(parts[4 + t], k);
            ByteEmbedding::apply_sum_slice(zmaps.each_ref(), z, &mut acc[..k]);
            at_data.add(t, &acc[..k], a);
        }
        true
    })?;
    Some((sums, at_data.into_values()))
}

/// The fold's sub-blocks, in parallel jobs: for the sub-block of blocks `j .. j + k` of the
/// `B = out[0].len()` blocks, `block(state, j, a, out, acc)` gets the block coefficients `a`
/// (`k` of them, of the run with `seed`), the outputs' pieces of the sub-block and `k` words of
/// scratch; `state` comes from `init`, once per job. Returns the sums of the next level, which
/// pairs `j < half` with `j + half` (`fold::folded_half`), or `None` if some call returns
/// `false`. With `half` a multiple of [`SUB`], a job folds the sub-blocks `j ..` and `half + j
/// ..` one after the other (both start a sub-block, so each is the chunk that the whole fold
/// would take) and sums their pairs while they are in cache, instead of reading the four
/// vectors again afterwards. Otherwise (at most `SUB` blocks, `fold::folded_half`) the one
/// chunk is folded whole and then summed; `None` for more blocks with such a `half`.
pub(super) fn fold_sub_blocks<S>(
    seed: &[u8; 16],
    out: [&mut [Gf2p64]; 4],
    half: usize,
    init: impl Fn() -> S + Sync,
    block: impl Fn(&mut S, usize, &[Gf2p64], [&mut [Gf2p64]; 4], &mut [Gf2p64]) -> bool + Sync,
) -> Option<Sums<Gf2p64>> {
    let co = Coefficients::<Gf2p64>::new(*seed);
    let blocks = out[0].len();
    if half > blocks {
        return None;
    }
    if !half.is_multiple_of(SUB) {
        if blocks > SUB {
            return None;
        }
        let mut out = out;
        let (mut acc, mut abuf) = (vec![Gf2p64::ZERO; blocks], vec![Gf2p64::ZERO; blocks]);
        let a = block_coefficients(&co, 0, blocks, &mut abuf);
        if !block(
            &mut init(),
            0,
            a,
            out.each_mut().map(|o| &mut o[..]),
            &mut acc,
        ) {
            return None;
        }
        let mut f: [Vec<Gf2p64>; 4] = core::array::from_fn(|_| vec![Gf2p64::ZERO; SUB]);
        let (lo, hi) = (
            out.each_ref().map(|o| &o[..half]),
            out.each_ref().map(|o| &o[half..]),
        );
        return Some(pair_sums(lo, hi, &mut f));
    }
    let ranges = job_ranges(half, SUB);
    split_jobs(out, half, blocks, &ranges)
        .into_par_iter()
        .map(|(r, mut lo, mut hi)| {
            let mut state = init();
            let mut acc = vec![Gf2p64::ZERO; SUB];
            let mut abuf = vec![Gf2p64::ZERO; SUB];
            let mut f: [Vec<Gf2p64>; 4] = core::array::from_fn(|_| vec![Gf2p64::ZERO; SUB]);
            let mut sums = Sums::ZERO;
            let mut off = 0;
            while off < r.len() {
                let (j, k) = (r.start + off, SUB.min(r.len() - off));
                let kb = k.min(hi[0].len().saturating_sub(off));
                let a = block_coefficients(&co, j, k, &mut abuf);
                let pieces = lo.each_mut().map(|o| &mut o[off..off + k]);
                if !block(&mut state, j, a, pieces, &mut acc[..k]) {
                    return None;
                }
                if kb > 0 {
                    let a = block_coefficients(&co, half + j, kb, &mut abuf);
                    let pieces = hi.each_mut().map(|o| &mut o[off..off + kb]);
                    if !block(&mut state, half + j, a, pieces, &mut acc[..kb]) {
                        return None;
                    }
                }
                let a = lo.each_ref().map(|v| &v[off..off + k]);
                // Empty where the upper half ends before this pair's lower sub-block.
                let b = hi.each_ref().map(|v| v.get(off..off + kb).unwrap_or(&[]));
                sums = sums.add(pair_sums(a, b, &mut f));
                off += k;
            }
            Some(sums)
        })
        .try_reduce(|| Sums::ZERO, |x, y| Some(x.add(y)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::{Rng, SeedableRng};

    /// The sums of a sub-block are the same with the local products in `GF(2^8)` and in the
    /// tower field (whichever the active backend takes), for blocks of 32 and of 8 bits.
    #[test]
    fn block_sums_agree_in_both_bases() {
        fn check<const B: usize>(nodes: &[Gf2p8], seed: u64) {
            let mut r = rand_chacha::ChaCha20Rng::seed_from_u64(seed);
            for k in [SUB, 37, 1] {
                let parts: Vec<Vec<u8>> = (0..6)
                    .map(|_| (0..B * k).map(|_| r.random()).collect())
                    .collect();
                let a: Vec<Gf2p64> = (0..k).map(|_| Gf2p64(r.random())).collect();
                let sums = |tower: bool| {
                    let maps = NodeMaps::<B>::with_basis(nodes, tower);
                    let mut acc = vec![Gf2p64::ZERO; 3 * 8 * B - 1];
                    let mut pl = Planes::new(B);
                    let p: [&[u8]; 6] = core::array::from_fn(|i| &parts[i][..]);
                    block_sums::<B>(&mut acc, &a, p, &mut pl, &maps);
                    acc
                };
                let poly = sums(false);
                assert!(poly.iter().any(|v| *v != Gf2p64::ZERO));
                assert_eq!(poly, sums(true), "B = {B}, k = {k}");
            }
        }
        check::<G>(&nodes(), 1);
        let byte_nodes: Vec<Gf2p8> = (0..15).map(|n| Gf2p8(n as u8)).collect();
        check::<1>(&byte_nodes, 2);
    }

    /// `E8_OF_TOWER` is `E_8` after the inverse WOL map, on every byte.
    #[test]
    fn tower_embedding_is_e8_of_the_inverse_wol_map() {
        for x in 0..=255u8 {
            let want = e8(Gf2p8(Gf4Tower::WOL_INV.apply_byte(x)));
            assert_eq!(E8_OF_TOWER.apply(x), want, "{x:#04x}");
        }
    }
}
