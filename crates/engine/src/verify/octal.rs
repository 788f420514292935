//! The k-ary first level of `Verify` (`k = 8`), for large runs whose triples all have a
//! byte form (`GF(2^8)` and the fields embedded in it; [`TripleSource::load_bytes`]) or a word
//! form (`GF(2^16)`, which contains `GF(2^8)`; [`TripleSource::load_words`]). Runs of bytes
//! only take blocks of 32 instead (module `wide_bytes`), runs of packed bits only too (module
//! `wide`); this module takes the runs that mix bytes with words or bits. (Before module
//! `wide_bytes`, it took the runs of bytes only as well, in the layout below.)
//!
//! # The step
//!
//! With `L` triples and `B = ⌈L/8⌉` blocks of eight entries, entry `m < 8` of block `J` is
//! triple `m B + J` (zero from `L` on; a run with words takes another fixed layout, see
//! `entry`). Block `J` has the coefficient `a_J`, the run's coefficient `c_J` of position `J`
//! ([`Coefficients`](super::coeffs::Coefficients), itself a product of a row and a column
//! factor), for all its entries.
//!
//! The nodes are fifteen bytes `α_n` (`n < 15`) of the subfield `S` of sixteen elements of
//! `GF(2^8)` ([`SUBFIELD16`], see "Pairs"), embedded by `E_8`. `F_J` is the
//! polynomial of degree 7 with `F_J(α_m) = x_{J,m}` (`m < 8`), `G_J` the same for `y`, and
//! `P(X) = Σ_J a_J F_J(X) G_J(X)` (degree 14). The claim is that `P = Q`, the polynomial of
//! degree 14 whose values are `Q(α_m) = D_m := Σ_J a_J z_{J,m}` at the eight data nodes
//! (already replicated: the sums of the two components of `z`) and, at the seven extra nodes,
//! values the parties compute and reshare: their additive shares of `P(α_n)`, the local
//! products of `F_J(α_n)` and `G_J(α_n)`, which are `GF(2^8)` combinations of the eight
//! entries (the lift is a ring homomorphism, and Lagrange coefficients between nodes of
//! `GF(2^8)` lie in `GF(2^8)`), computed by an additive FFT: the data nodes are a subspace of
//! `S`, the extra nodes its coset ([`SUBFIELD_SHIFT`]; 11 products by constants in `S` per
//! entry of eight instead of the 56 of the Lagrange coefficients). The sums `Σ_J a_J E(w_J)`
//! are bit sums ([`ByteEmbedding::inner_products`]). The parties reshare `Q(α_8) .. Q(α_14)` (7 elements, 56
//! bytes to `P_{i-1}`), toss a coin `s` and continue with the claim `Q(s) = Σ_J x'_J y'_J`
//! (`= P(s)` if the claim holds) of length `B`, where `x'_J = a_J
//! F_J(s)` and `y'_J = G_J(s)`: one byte map per entry (`E_8` scaled by the Lagrange
//! coefficient `ℓ_m(s)` of the data nodes) and one product per block. The halving of
//! PROTOCOLS.md §5.4 follows on the vectors of length `B`. Its first level pairs `J` with `J +
//! h`, `h = ⌈B/2⌉` rounded up to whole sub-blocks (`fold::folded_half`: the same number of
//! levels), so that the fold forms both sub-blocks of a pair in one job and sums the pairs
//! while they are in cache (`wide::fold_sub_blocks`) instead of reading its four vectors again.
//!
//! # Words
//!
//! If some triple has no byte form (the gf4p4 relations, which hold in `GF(2^16)`), every
//! triple is taken by its coordinates `lo + hi t` in the tower `GF(2^8)[t]/(t^2 + t + c)`
//! (`triskele_field::embed::e16`: `E_16(lo + hi t) = E_8(lo) + E_8(hi) T`). The nodes and the
//! Lagrange coefficients between them lie in `GF(2^8)`, so the values at the extra nodes are
//! the same byte maps on the low and the high bytes; a product in the tower is three products
//! in `GF(2^8)` (`triskele_field::embed::mul16`); a sum `Σ a_J E_16(w_J)` is the bit sums of
//! the low bytes by `E_8` plus those of the high bytes by `E_8 · T`; and the fold maps the 16
//! bytes of a block's eight words. The messages are the same.
//!
//! # Pairs
//!
//! The gf4p4 relations have more structure: `x = φ_0(x_0) + φ_0(x_1) A` and `y` likewise,
//! `x_i ∈ GF(2^4)`, and `z` of `A`-degree at most 2. The nodes are taken in the subfield `S`
//! of `GF(2^8)` of sixteen elements ([`SUBFIELD16`]; fifteen are needed), so that the Lagrange
//! coefficients lie in `S`. A sub-block whose relations have the pair form
//! ([`TripleSource::load_pairs`]) then takes `x` and `y` as one byte each, `ψ(x_0) + ψ(x_1) w`
//! ([`PAIR_EMBEDDING`], which is `S`-linear): the values at the extra nodes are the same byte
//! maps as for bytes, and the local product of two values in `GF(2^16)` embeds as
//! `PAIR_EMBEDDING` of their product in `GF(2^8)` plus [`PAIR_SQUARE_TERM`] of the product of
//! their second coordinates (`π_1`, [`PAIR_SECOND`]): four byte maps and two products more
//! than a byte's, against twice the byte maps and three times the products in the tower. `z`
//! is summed from the source's two planes ([`TripleSource::z_planes`]), and the fold maps the
//! eight pair-form bytes of a block. A sub-block across the end of one source and the start
//! of another takes the pair form too if both have it (an entry's `x` and `y` pieced
//! together, its `z` loaded as words, which are also its lift by `E_8` and `E_8 T`); next to a
//! source without it, the sub-block takes the words. (At 10,000 blocks, one sub-block in five
//! of mal-gf4-circuit-opt's run lies across two layers' relations; taking them as words cost
//! about 7% of its finalize.)
//!
//! # Bits
//!
//! `GF(2)` triples (lifted to 0 and 1; [`TripleSource::load_bits`]) are taken packed by eight.
//! A run of bits only takes blocks of 32 (module `wide`). In a run that also holds other
//! triples, the run takes the chunk layout of the runs with words (see `entry`), and a
//! sub-block whose triples are all bits is taken as blocks of one packed byte (entry `m` of
//! block `i` is bit `m` of byte `i`): the local products at the data nodes are AND and XOR of
//! the packed bytes and their sums are sums of the coefficients over bit planes, `F_J` at an
//! extra node is one byte map of the packed byte, and the fold one embedding per block
//! (`wide::block_sums` and `wide::fold_block` with one byte per block). The messages are the
//! same.
//!
//! # Cost and soundness
//!
//! Against three halvings it sends 56 instead of 48 bytes to `P_{i-1}` and one coin instead
//! of three to `P_{i+1}`, in 2 instead of 6 rounds: per run `16ℓ' + 56 + 16` bytes to
//! `P_{i-1}`, `16 + 8 + 8ℓ' + 24` to `P_{i+1}` with `ℓ' = ⌈log2 B⌉`, `2ℓ' + 8` rounds (with the
//! later levels as halvings; the last twelve take steps of eight, module `tail`). The later
//! levels start from `L/8` instead of `L/2` entries, and level 1 writes four vectors of `L/8`
//! instead of two of `L/2`. If some triple is wrong, `z_{J,m} = x_{J,m} y_{J,m} + e_{J,m}` with
//! `e_{J,m} ≠ 0`, then `Q(α_m) - P(α_m) = Σ_J a_J e_{J,m}`, a non-zero polynomial of degree 2 in
//! independent uniform factors, vanishes with probability `≤ 2/2^64`; otherwise `Q ≠ P`
//! whatever the corrupt party adds to the reshared values (they are fixed before `s`), and the
//! claim `Q(s) = P(s)` holds only if `s` is a root of `Q - P`, of degree ≤ 14 (`≤ 14/2^64`).
//! (An earlier version combined the entries of a block by further factors `β_m` and reshared
//! the values at 14 nodes, deriving the fifteenth from the combined claim: its data nodes'
//! local products and 56 more bytes went, for 4-6% of the finalize; docs/PERFORMANCE.md.)
//! Only runs of at least [`MIN_LEN`] triples take it, so the figures for one block (the
//! ARCHITECTURE.md table) are those of the halving.

use triskele_field::embed::{
    e8, ByteEmbedding, E8_TABLES, PAIR_EMBEDDING, PAIR_SECOND, PAIR_SQUARE_TERM, SUBFIELD16,
    TOWER_C, TOWER_T,
};
use triskele_field::subspace::{SUBFIELD_SHIFT, SUB_EXTRA, SUB_POINTS};
use triskele_field::{Bulk, Gf2p64, Gf2p8, LinearMap8};

use super::bytes::lp8;
use super::coeffs::SUB;
use super::fold::{DataSums, Sums};
use super::{lagrange, TripleSource, ZPlanes};

/// Entries per block (the arity of the step).
pub(crate) const K: usize = 8;
/// Nodes of `Q` (degree `2K - 2`).
pub(crate) const NODES: usize = 2 * K - 1;
/// The fewest triples of a run that takes the step.
pub const MIN_LEN: usize = 1 << 16;

/// The length of a job's byte plane: a sub-block and one cache line. Planes of exactly
/// [`SUB`] bytes (4 KiB) lie in the same sets of the first-level cache, and the kernels that
/// take eight entries or seven nodes side by side evicted each other's lines (the values at
/// the extra nodes from eight planes of 4 KiB ran 2.2 times slower than from planes 64 bytes
/// apart: criterion bench `gf2p8 -- extra_nodes8`).
const PLANE: usize = SUB + 64;

/// The nodes `α_n` (`n < 15`) as bytes of `GF(2^8)`: the first fifteen of the sixteen
/// elements of its subfield `S` ([`SUBFIELD16`]), so that the Lagrange coefficients between
/// them lie in `S`, by which the pair form of the gf4p4 relations scales as bytes do
/// ([`PAIR_EMBEDDING`] is `S`-linear).
fn byte_nodes() -> [Gf2p8; NODES] {
    // The extra nodes' values come from [`SUBFIELD_SHIFT`], whose data and extra nodes are
    // these.
    const { assert!(SUB_POINTS == K && SUB_EXTRA == NODES - K) };
    core::array::from_fn(|n| Gf2p8(SUBFIELD16[n]))
}

/// The nodes `E_8(α_n)` in `GF(2^64)`.
fn nodes64() -> [Gf2p64; NODES] {
    byte_nodes().map(e8)
}

/// The entries per block of a run of `src` that takes a k-ary first level: 32 if all its
/// triples are packed bits (module `wide`), else 8.
pub(super) fn arity(src: &dyn TripleSource<Gf2p64>) -> usize {
    if super::wide::applies(src) || super::wide_bytes::applies(src) {
        super::wide::K
    } else {
        K
    }
}

/// The nodes `E_8(α_n)`, `n < 2k - 1`, of a run of `src` with blocks of `k` ([`arity`]).
pub(super) fn run_nodes(src: &dyn TripleSource<Gf2p64>) -> Vec<Gf2p64> {
    if arity(src) == K {
        nodes64().to_vec()
    } else {
        super::wide::nodes().into_iter().map(e8).collect()
    }
}

/// How a run's triples are taken into blocks (`entry`, in the tests).
pub(super) fn chunked(src: &dyn TripleSource<Gf2p64>) -> bool {
    as_words(src) || src.has_bits()
}

/// The rows of one job: parts `0 .. 6` of the eight entries of a sub-block of blocks, as
/// bytes (borrowed from the source where it stores them as such bytes, else loaded here) or
/// as words (tower coordinates `lo`, `hi`, loaded here); or, for a sub-block of `GF(2)`
/// triples, the parts packed by eight (bit `m` of byte `i` = entry `m` of block `i`).
struct Rows {
    chunked: bool,
    buf: Vec<[u8; PLANE]>,
    hi: Vec<[u8; PLANE]>,
    packed: Vec<[u8; PLANE]>,
}

/// Part `p` of entry `m` at `[m][p]`: the bytes or the words' low bytes, and the words'
/// high bytes.
struct RowViews<'a> {
    lo: [[&'a [u8]; 6]; K],
    hi: Option<[[&'a [u8]; 6]; K]>,
}

/// The entries of a sub-block in the pair form ([`TripleSource::load_pairs`]): parts `x_1,
/// x_2, y_1, y_2` of entry `m` at `xy[m]`, and its `z_1`, `z_2` at `z[m]`.
struct PairViews<'a> {
    xy: [[&'a [u8]; 4]; K],
    z: [[ZPlanes<'a>; 2]; K],
}

impl Rows {
    fn new(src: &dyn TripleSource<Gf2p64>) -> Self {
        let planes = |n: usize, on: bool| if on { vec![[0; PLANE]; n] } else { Vec::new() };
        Rows {
            chunked: chunked(src),
            buf: planes(K * 6, true),
            hi: planes(K * 6, as_words(src)),
            packed: planes(6, src.has_bits()),
        }
    }

    /// Parts `0 .. count` of the blocks `j .. j + k` (a sub-block of a chunked run) packed
    /// by eight, if its triples `8 j .. 8 j + 8 k` (those in the source) are all `GF(2)`
    /// triples ([`TripleSource::load_bits`]): borrowed where the source stores them so, else
    /// loaded here; later parts empty. `None` if they are not.
    fn load_packed<'a>(
        &'a mut self,
        src: &'a dyn TripleSource<Gf2p64>,
        j: usize,
        k: usize,
        count: usize,
    ) -> Option<[&'a [u8]; 6]> {
        if !self.chunked || self.packed.is_empty() {
            return None;
        }
        let first = 8 * j;
        let n = (8 * k).min(src.len().saturating_sub(first));
        let mut direct: [Option<&'a [u8]>; 6] = [None; 6];
        for (p, d) in direct.iter_mut().enumerate().take(count) {
            if n == 8 * k {
                *d = src.bits_in_place(p, first, k);
            }
            if d.is_none() && !src.load_bits(p, first, n, &mut self.packed[p][..k]) {
                return None;
            }
        }
        let packed = &self.packed;
        Some(core::array::from_fn(|p| match direct[p] {
            Some(d) => d,
            None if p < count => &packed[p][..k],
            None => &[],
        }))
    }

    /// Parts `0 .. count` of the blocks `j .. j + k` (a sub-block of a run with words, wholly
    /// inside the source, whose triples are not all bytes) in the pair form (`x`, `y` in
    /// place by [`TripleSource::pairs_in_place`] or by [`TripleSource::load_pairs`] into this
    /// job's planes, `z` by [`TripleSource::z_planes`] in place, or loaded here as words for
    /// an entry across sources), if every source the sub-block covers has the pair form;
    /// `None` otherwise (the caller takes bytes or words).
    fn load_pairs<'a>(
        &'a mut self,
        src: &'a dyn TripleSource<Gf2p64>,
        j: usize,
        k: usize,
        count: usize,
    ) -> Option<PairViews<'a>> {
        let first = 8 * j;
        if self.hi.is_empty() || first + 8 * k > src.len() || src.range_has_bytes(first, 8 * k) {
            return None;
        }
        let none: (&ByteEmbedding, &[u8]) = (&E8_TABLES, &[]);
        let mut z = [[[none; 2]; 2]; K];
        // The parts `z` of an entry across two sources (no planes in place) are loaded here
        // as words (`lift = E_8(lo) + E_8(hi) T`), into the slots of parts 4 and 5.
        let mut loaded = [[false; 2]; K];
        // Parts the source stores in the pair form are borrowed.
        let mut direct: [[Option<&'a [u8]>; 4]; K] = [[None; 4]; K];
        for ((m, zm), dm) in z.iter_mut().enumerate().zip(direct.iter_mut()) {
            let start = first + m * k;
            for (p, d) in dm.iter_mut().enumerate().take(count.min(4)) {
                *d = src.pairs_in_place(p, start, k);
                if d.is_none() && !src.load_pairs(p, start, &mut self.buf[m * 6 + p][..k]) {
                    return None;
                }
            }
            for p in 4..count {
                match src.z_planes(p, start, k) {
                    Some(planes) => zm[p - 4] = planes,
                    None => {
                        let (lo, hi) = (&mut self.buf[m * 6 + p], &mut self.hi[m * 6 + p]);
                        if !src.load_words(p, start, &mut lo[..k], &mut hi[..k]) {
                            return None;
                        }
                        loaded[m][p - 4] = true;
                    }
                }
            }
        }
        let (buf, hi) = (&self.buf, &self.hi);
        for (m, zm) in z.iter_mut().enumerate() {
            for (t, zt) in zm.iter_mut().enumerate() {
                if loaded[m][t] {
                    let at = m * 6 + 4 + t;
                    *zt = [(&E8_TABLES, &buf[at][..k]), (&E8_HI, &hi[at][..k])];
                }
            }
        }
        Some(PairViews {
            xy: core::array::from_fn(|m| {
                core::array::from_fn(|p| match direct[m][p] {
                    Some(d) => d,
                    None if p < count => &buf[m * 6 + p][..k],
                    None => &[],
                })
            }),
            z,
        })
    }

    /// Parts `0 .. count` of entry `m` of the blocks `j .. j + k` (a sub-block of `B =
    /// blocks`; `entry`: the triples `m B + j ..` of a byte run, `8 j + m k ..` of a chunked
    /// run; zero past the source, later parts empty): as bytes if they all have bytes (also
    /// in a run with words), else as words (this job loads words); `None` if the source has
    /// neither form.
    fn load<'a>(
        &'a mut self,
        src: &'a dyn TripleSource<Gf2p64>,
        blocks: usize,
        j: usize,
        k: usize,
        count: usize,
    ) -> Option<RowViews<'a>> {
        let len = src.len();
        let words = !self.hi.is_empty();
        let first = (8 * j).min(len);
        let bytes = !words || src.range_has_bytes(first, (8 * k).min(len - first));
        let mut direct: [[Option<&'a [u8]>; 6]; K] = [[None; 6]; K];
        for (m, row) in direct.iter_mut().enumerate() {
            let start = if self.chunked {
                8 * j + m * k
            } else {
                m * blocks + j
            };
            let avail = len.saturating_sub(start).min(k);
            for (p, d) in row.iter_mut().enumerate().take(count) {
                let at = m * 6 + p;
                if bytes && avail == k {
                    *d = src.bytes_in_place(p, start, k);
                }
                if d.is_some() {
                    continue;
                }
                let lo = &mut self.buf[at];
                if avail > 0 {
                    let ok = match (words, bytes) {
                        (true, false) => {
                            src.load_words(p, start, &mut lo[..avail], &mut self.hi[at][..avail])
                        }
                        // Bytes of a range that has them, also in a run with words.
                        (true, true) => src.load_range_bytes(p, start, &mut lo[..avail]),
                        (false, _) => src.load_bytes(p, start, &mut lo[..avail]),
                    };
                    if !ok {
                        return None;
                    }
                }
                lo[avail..k].fill(0);
                if !bytes {
                    self.hi[at][avail..k].fill(0);
                }
            }
        }
        let view = |buf: &'a [[u8; PLANE]], direct: &[[Option<&'a [u8]>; 6]; K]| {
            core::array::from_fn(|m| {
                core::array::from_fn(|p| match direct[m][p] {
                    Some(d) => d,
                    None if p < count => &buf[m * 6 + p][..k],
                    None => &[],
                })
            })
        };
        let (buf, hi) = (&self.buf, &self.hi);
        Some(RowViews {
            lo: view(buf, &direct),
            hi: (!bytes).then(|| view(hi, &[[None; 6]; K])),
        })
    }
}

/// The index of entry `m` of block `J` of a run of `len` triples, `B = ⌈len/8⌉` blocks. In a
/// run of bytes, triple `m B + J` (the rows are eight runs of `B` triples, each read in
/// order). A run with words or `GF(2)` triples ([`chunked`]) takes the blocks in chunks of
/// [`SUB`] (the sub-blocks of the passes): the chunk of blocks `c SUB ..` with `k` blocks
/// holds the `8 k` triples from `8 c SUB`, so that a sub-block lies in one source but at the
/// boundaries of the sources. If they are all `GF(2)` triples, entry `m` of its block `i` is
/// triple `8 c SUB + 8 i + m` (the bits of one packed byte); else it is `8 c SUB + m k + i`
/// (row by row), and the sub-blocks of byte sources take the byte path. (For runs of bytes
/// only, the first layout measured 6-10% faster: alternating runs at 100,000 blocks.)
#[cfg(test)]
pub(super) fn entry(src: &dyn TripleSource<Gf2p64>, block: usize, m: usize) -> usize {
    if super::wide::applies(src) {
        return super::wide::entry(src.len(), block, m);
    }
    if super::wide_bytes::applies(src) {
        return super::wide_bytes::entry(src.len(), block, m);
    }
    let len = src.len();
    let blocks = len.div_ceil(K);
    if !chunked(src) {
        return m * blocks + block;
    }
    let (c, i) = (block / SUB, block % SUB);
    let k = SUB.min(blocks - c * SUB);
    let first = 8 * c * SUB;
    let n = (8 * k).min(len - first);
    if src.load_bits(0, first, n, &mut vec![0; k]) {
        first + 8 * i + m
    } else {
        first + m * k + i
    }
}

/// One job's byte planes for the sums: `y_1 + y_2` of each entry, the values `x_1, x_2, y_1,
/// y_1 + y_2` at one extra node, the local products at the 7 extra nodes, and seven planes of
/// scratch for the products in the tower (`*_hi`: the words' high bytes, empty for bytes).
struct Scratch {
    y12: Vec<[u8; PLANE]>,
    y12_hi: Vec<[u8; PLANE]>,
    at: Vec<[u8; PLANE]>,
    at_hi: Vec<[u8; PLANE]>,
    w: Vec<[u8; PLANE]>,
    w_hi: Vec<[u8; PLANE]>,
    tmp: Vec<[u8; PLANE]>,
}

impl Scratch {
    fn new(words: bool) -> Self {
        let planes = |n: usize, on: bool| if on { vec![[0; PLANE]; n] } else { Vec::new() };
        Scratch {
            y12: planes(K, true),
            y12_hi: planes(K, words),
            at: planes(4 * (NODES - K), true),
            at_hi: planes(4 * (NODES - K), words),
            w: planes(NODES - K, true),
            w_hi: planes(NODES - K, words),
            tmp: planes(7, words),
        }
    }
}

/// `dst = a + b` on bytes.
fn xor_into(dst: &mut [u8], a: &[u8], b: &[u8]) {
    for ((d, a), b) in dst.iter_mut().zip(a).zip(b) {
        *d = a ^ b;
    }
}

/// The values of `x_1, x_2, y_1, y_1 + y_2` (`t = 0 .. 4`) at every extra node `e` into
/// `at[t (2K - 1 - K) + e]`, from the entries' parts `part(m, p)` (`p < 3`) and `y12[m]`, on
/// `k` bytes: per part one additive FFT from the data nodes, a subspace of `GF(2^8)`, to the
/// extra nodes, its coset ([`SUBFIELD_SHIFT`]: 11 products by constants per entry of eight
/// instead of the 56 of the Lagrange coefficients).
fn at_nodes<'a>(
    part: impl Fn(usize, usize) -> &'a [u8],
    y12: &[[u8; PLANE]],
    at: &mut [[u8; PLANE]],
    k: usize,
) {
    for (t, planes) in at.chunks_exact_mut(NODES - K).take(4).enumerate() {
        let src: [&[u8]; K] = core::array::from_fn(|m| match t {
            3 => &y12[m][..k],
            p => part(m, p),
        });
        let mut it = planes.iter_mut();
        let dst: [&mut [u8]; NODES - K] =
            core::array::from_fn(|_| it.next().map_or(&mut [][..], |p| &mut p[..k]));
        SUBFIELD_SHIFT.shift(src, dst);
    }
}

/// The four planes of extra node `e` written by [`at_nodes`], on `k` bytes.
fn node_planes(at: &[[u8; PLANE]], e: usize, k: usize) -> [&[u8]; 4] {
    core::array::from_fn(|t| &at[t * (NODES - K) + e][..k])
}

/// `lp8` of the planes `[x_1, x_2, y_1, y_1 + y_2]` (the first four of `planes`) into `out`.
fn lp8_planes(out: &mut [u8], planes: &[[u8; PLANE]]) {
    let k = out.len();
    lp8(
        out,
        &planes[0][..k],
        &planes[1][..k],
        &planes[2][..k],
        &planes[3][..k],
    );
}

/// `E_8` times the tower's `T` ([`TOWER_T`]): the lift of the words' high bytes.
const E8_HI: ByteEmbedding = E8_TABLES.scaled(TOWER_T);

/// Multiplication by the tower's `c` ([`TOWER_C`]).
const TIMES_C: LinearMap8 = LinearMap8::mul_by(Gf2p8(TOWER_C));

/// The local product `lp(x, y) = x_1 (y_1 + y_2) + x_2 y_1` in the tower `GF(2^8)[t]/(t^2 + t +
/// c)` on planes (`[lo, hi]`; `y12 = y_1 + y_2`): with `m_0 = Σ a_0 b_0`, `m_1 = Σ a_1 b_1`,
/// `m_2 = Σ (a_0 + a_1)(b_0 + b_1)` over the two products, `lo = m_0 + c m_1`, `hi = m_2 + m_0`
/// ([`triskele_field::embed::mul16`]).
fn lp16(
    out: [&mut [u8]; 2],
    x1: [&[u8]; 2],
    x2: [&[u8]; 2],
    y1: [&[u8]; 2],
    y12: [&[u8]; 2],
    tmp: &mut [[u8; PLANE]],
) {
    let k = out[0].len();
    let [s1, s2, s3, s4, m0, m1, m2] = tmp else {
        return;
    };
    let (s1, s2, s3, s4) = (&mut s1[..k], &mut s2[..k], &mut s3[..k], &mut s4[..k]);
    let (m0, m1, m2) = (&mut m0[..k], &mut m1[..k], &mut m2[..k]);
    lp8(m0, x1[0], x2[0], y1[0], y12[0]);
    lp8(m1, x1[1], x2[1], y1[1], y12[1]);
    xor_into(s1, x1[0], x1[1]);
    xor_into(s2, x2[0], x2[1]);
    xor_into(s3, y1[0], y1[1]);
    xor_into(s4, y12[0], y12[1]);
    lp8(m2, s1, s2, s3, s4);
    let id = &LinearMap8::IDENTITY;
    let [lo, hi] = out;
    LinearMap8::apply_sum_bytes([id, &TIMES_C], [m0, m1], lo);
    LinearMap8::apply_sum_bytes([id, id], [m2, m0], hi);
}

/// Whether a run of `src` takes the step: long enough, and bytes or words for every triple.
pub(super) fn applies(src: &dyn TripleSource<Gf2p64>) -> bool {
    src.len() >= MIN_LEN
        && (src.load_bytes(0, 0, &mut []) || src.load_words(0, 0, &mut [], &mut []))
}

/// Whether `src` is taken as words (some triple has no byte form).
pub(super) fn as_words(src: &dyn TripleSource<Gf2p64>) -> bool {
    !src.load_bytes(0, 0, &mut [])
}

/// This party's local part of the step before the coin over `B = blocks` blocks: returns
/// `[D_{0,1}, D_{0,2}, .., D_{7,2}, Q_8, .., Q_14]`, the two components of `D_m = Σ_J a_J
/// z_{J,m}` (the value at data node `m`) and this party's additive shares of `P(α_n)` at the
/// extra nodes; `None` if some triple has neither form. The block coefficients `a_J` are drawn
/// per sub-block (`wide::sum_sub_blocks`).
pub(super) fn sums(
    src: &dyn TripleSource<Gf2p64>,
    seed: &[u8; 16],
    blocks: usize,
) -> Option<Vec<Gf2p64>> {
    if super::wide::applies(src) {
        return super::wide::sums(src, seed, blocks);
    }
    if super::wide_bytes::applies(src) {
        return super::wide_bytes::sums(src, seed, blocks);
    }
    let words = as_words(src);
    // Sub-blocks of bits: blocks of one packed byte (module `wide` with one byte per block).
    let bit_maps = super::wide::NodeMaps::<1>::new(&byte_nodes());
    let init = || {
        let planes = super::wide::Planes::new(1);
        (Rows::new(src), Scratch::new(words), planes)
    };
    // [D_{0,1}, D_{0,2} .. D_{7,1}, D_{7,2}, Q_8 .. Q_14].
    let block = |(rows, sc, bit_planes): &mut (Rows, Scratch, super::wide::Planes),
                 j: usize,
                 a: &[Gf2p64],
                 acc: &mut [Gf2p64]| {
        let k = a.len();
        if let Some(bits) = rows.load_packed(src, j, k, 6) {
            super::wide::block_sums::<1>(acc, a, bits, bit_planes, &bit_maps);
            return Some(());
        }
        // Other forms leave their data nodes to the fold (which loads `z`).
        if let Some(pairs) = rows.load_pairs(src, j, k, 4) {
            pair_sums(sc, &pairs, a, acc);
            return Some(());
        }
        let parts = rows.load(src, blocks, j, k, 4)?;
        let words = parts.hi.is_some();
        let Scratch {
            y12,
            y12_hi,
            at,
            at_hi,
            w,
            w_hi,
            tmp,
        } = sc;
        let part = |m: usize, p: usize| parts.lo[m][p];
        let part_hi = |m: usize, p: usize| parts.hi.map_or(&[][..], |h| h[m][p]);
        for m in 0..K {
            xor_into(&mut y12[m][..k], part(m, 2), part(m, 3));
            if words {
                xor_into(&mut y12_hi[m][..k], part_hi(m, 2), part_hi(m, 3));
            }
        }
        at_nodes(|m, p| part(m, p), y12, at, k);
        if words {
            at_nodes(|m, p| part_hi(m, p), y12_hi, at_hi, k);
        }
        for e in 0..NODES - K {
            let [x1, x2, y1, y12] = node_planes(at, e, k);
            if words {
                let [h1, h2, h3, h4] = node_planes(at_hi, e, k);
                lp16(
                    [&mut w[e][..k], &mut w_hi[e][..k]],
                    [x1, h1],
                    [x2, h2],
                    [y1, h3],
                    [y12, h4],
                    tmp,
                );
            } else {
                lp8(&mut w[e][..k], x1, x2, y1, y12);
            }
        }
        let q = &mut acc[2 * K..];
        let w: [&[u8]; NODES - K] = core::array::from_fn(|e| &w[e][..k]);
        let q8: [Gf2p64; NODES - K] = ByteEmbedding::inner_products(a, w.map(|p| (&E8_TABLES, p)));
        for (o, v) in q.iter_mut().zip(q8) {
            *o += v;
        }
        if words {
            let w_hi: [&[u8]; NODES - K] = core::array::from_fn(|e| &w_hi[e][..k]);
            let q8: [Gf2p64; NODES - K] =
                ByteEmbedding::inner_products(a, w_hi.map(|p| (&E8_HI, p)));
            for (o, v) in q.iter_mut().zip(q8) {
                *o += v;
            }
        }
        Some(())
    };
    super::wide::sum_sub_blocks(seed, blocks, 2 * K + NODES - K, init, block)
}

/// The sums of one sub-block of `k = a.len()` blocks in the pair form added to `acc` (as
/// [`sums`]): the values at the extra nodes are sums of the pair-form bytes scaled by elements
/// of `S` (the same byte maps as for bytes), their local product `lp` in `GF(2^16)` is the
/// product in `GF(2^8)` (embedded by [`PAIR_EMBEDDING`]) and that of their second
/// coordinates (by [`PAIR_SQUARE_TERM`]); `z` is summed from its planes.
fn pair_sums(sc: &mut Scratch, pairs: &PairViews<'_>, a: &[Gf2p64], acc: &mut [Gf2p64]) {
    let k = a.len();
    let Scratch {
        y12,
        at,
        w,
        w_hi,
        tmp,
        ..
    } = sc;
    for (m, xy) in pairs.xy.iter().enumerate() {
        xor_into(&mut y12[m][..k], xy[2], xy[3]);
    }
    at_nodes(|m, p| pairs.xy[m][p], y12, at, k);
    for e in 0..NODES - K {
        let p = node_planes(at, e, k);
        lp8(&mut w[e][..k], p[0], p[1], p[2], p[3]);
        for (t, s) in p.iter().zip(tmp.iter_mut()) {
            PAIR_SECOND.apply_bytes(t, &mut s[..k]);
        }
        lp8_planes(&mut w_hi[e][..k], tmp);
    }
    let q = &mut acc[2 * K..];
    let g: [Gf2p64; NODES - K] =
        ByteEmbedding::inner_products(a, core::array::from_fn(|e| (&PAIR_EMBEDDING, &w[e][..k])));
    let r: [Gf2p64; NODES - K] = ByteEmbedding::inner_products(
        a,
        core::array::from_fn(|e| (&PAIR_SQUARE_TERM, &w_hi[e][..k])),
    );
    for ((o, g), r) in q.iter_mut().zip(g).zip(r) {
        *o += g + r;
    }
}

/// The maps of `z`'s planes scaled by the Lagrange coefficients `λ_m` of the fold, kept per
/// job: a source names the same few embeddings for every sub-block, and scaling one (its
/// tables built again) for every sub-block and plane took 186 of mal-gf4-circuit-opt's 4,651
/// check samples (docs/PERFORMANCE.md).
#[derive(Default)]
struct ScaledMaps {
    /// The embedding's address, the entry `m` and the scaled map.
    maps: Vec<(*const ByteEmbedding, usize, ByteEmbedding)>,
}

impl ScaledMaps {
    /// The most maps kept.
    const MAX: usize = 64;

    /// The index of `f` scaled by `lambda[m]`, scaled here the first time.
    fn index(&mut self, f: &ByteEmbedding, m: usize, lambda: &[Gf2p64]) -> usize {
        let key = core::ptr::from_ref(f);
        match self.maps.iter().position(|e| e.0 == key && e.1 == m) {
            Some(i) => i,
            None => {
                // Sources name a few embeddings; one that named many would only lose the
                // cache, not grow it without bound.
                if self.maps.len() == Self::MAX {
                    self.maps.clear();
                }
                self.maps.push((key, m, f.scaled_by(lambda[m])));
                self.maps.len() - 1
            }
        }
    }

    fn get(&self, i: usize) -> &ByteEmbedding {
        &self.maps[i].2
    }
}

/// The fold with the coin `s`: `out = [x'_1, x'_2, y'_1, y'_2]` (length `B` each, the block
/// coefficients `a_J` of the run with `seed` drawn per sub-block)
/// with `x'_J = a_J F_J(s)`, `y'_J = G_J(s)`, and the sums of the halving that pairs `j` with
/// `j + half` (`fold::folded_half`); `None` if some triple has neither form. Also the part of
/// `Q(s)` per component, `Σ_m λ_m D_{m,t}`, of the sub-blocks that left their data nodes to
/// this pass (those not of bits; `lambda`: the Lagrange coefficients of all the nodes at `s`):
/// per component one pass of the byte maps of `z` scaled by `λ_m` and an inner product with
/// `a`, instead of an inner product per data node and plane before the coin.
pub(super) fn fold(
    src: &dyn TripleSource<Gf2p64>,
    seed: &[u8; 16],
    s: Gf2p64,
    lambda: &[Gf2p64],
    out: [&mut [Gf2p64]; 4],
    half: usize,
) -> Option<(Sums<Gf2p64>, [Gf2p64; 2])> {
    if super::wide::applies(src) {
        return super::wide::fold(src, seed, s, lambda, out, half);
    }
    if super::wide_bytes::applies(src) {
        return super::wide_bytes::fold(src, seed, s, lambda, out, half);
    }
    let lambda = lambda.get(..K)?;
    // z as bytes (and words' high bytes) by E_8 (E_8 T) scaled by λ_m.
    let zmaps: [ByteEmbedding; K] = core::array::from_fn(|m| E8_TABLES.scaled_by(lambda[m]));
    let zmaps16: [ByteEmbedding; 2 * K] = core::array::from_fn(|i| {
        let base = if i % 2 == 0 { &E8_TABLES } else { &E8_HI };
        base.scaled_by(lambda[i / 2])
    });
    let at_data = DataSums::new();
    let blocks = out[0].len();
    let nodes = nodes64();
    let data: [Gf2p64; K] = core::array::from_fn(|m| nodes[m]);
    let ell = lagrange(&data, s);
    let maps: [ByteEmbedding; K] = ell.map(|l| E8_TABLES.scaled_by(l));
    // Sub-blocks of bits: bit m of a packed byte to ℓ_m(s).
    let bit_maps = super::wide::fold_maps::<1>(&byte_nodes(), s);
    // Pair forms: entry m by PAIR_EMBEDDING times ℓ_m(s).
    let pair_maps: [ByteEmbedding; K] = ell.map(|l| PAIR_EMBEDDING.scaled_by(l));
    // Words: entry m's low byte by maps[m], its high byte by maps[m] times T.
    let maps16: [ByteEmbedding; 2 * K] = core::array::from_fn(|i| {
        let l = ell[i / 2];
        E8_TABLES.scaled_by(if i % 2 == 0 { l } else { l * TOWER_T })
    });
    let init = || (Rows::new(src), ScaledMaps::default());
    let sums = super::wide::fold_sub_blocks(seed, out, half, init, |job, j, a, out, acc| {
        let (rows, scaled) = job;
        let k = a.len();
        // Bits as in `sums` (all six parts), whose data nodes are summed there.
        if let Some(bits) = rows.load_packed(src, j, k, 6) {
            super::wide::fold_block::<1>(&bit_maps, bits, a, out, acc);
            return true;
        }
        if let Some(pairs) = rows.load_pairs(src, j, k, 6) {
            for t in 0..2 {
                let z: [&ZPlanes<'_>; K] = core::array::from_fn(|m| &pairs.z[m][t]);
                let at: [usize; 2 * K] =
                    core::array::from_fn(|i| scaled.index(z[i / 2][i % 2].0, i / 2, lambda));
                let maps: [&ByteEmbedding; 2 * K] = core::array::from_fn(|i| scaled.get(at[i]));
                let srcs: [&[u8]; 2 * K] = core::array::from_fn(|i| z[i / 2][i % 2].1);
                ByteEmbedding::apply_sum_slice(maps, srcs, &mut acc[..]);
                at_data.add(t, acc, a);
            }
            for (t, o) in out.into_iter().enumerate() {
                let srcs: [&[u8]; K] = core::array::from_fn(|m| pairs.xy[m][t]);
                if t < 2 {
                    ByteEmbedding::apply_sum_slice(pair_maps.each_ref(), srcs, &mut acc[..]);
                    Gf2p64::mul_slice(o, acc, a);
                } else {
                    ByteEmbedding::apply_sum_slice(pair_maps.each_ref(), srcs, o);
                }
            }
            return true;
        }
        let Some(parts) = rows.load(src, blocks, j, k, 6) else {
            return false;
        };
        // Part p of the eight entries through the maps of bytes (`m8`) or of words (`m16`).
        let embed = |p: usize,
                     m8: &[ByteEmbedding; K],
                     m16: &[ByteEmbedding; 2 * K],
                     dst: &mut [Gf2p64]| {
            match parts.hi {
                Some(hi) => {
                    let srcs: [&[u8]; 2 * K] = core::array::from_fn(|i| {
                        if i % 2 == 0 {
                            parts.lo[i / 2][p]
                        } else {
                            hi[i / 2][p]
                        }
                    });
                    ByteEmbedding::apply_sum_slice(m16.each_ref(), srcs, dst);
                }
                None => {
                    let srcs: [&[u8]; K] = core::array::from_fn(|m| parts.lo[m][p]);
                    ByteEmbedding::apply_sum_slice(m8.each_ref(), srcs, dst);
                }
            }
        };
        for t in 0..2 {
            embed(4 + t, &zmaps, &zmaps16, acc);
            at_data.add(t, acc, a);
        }
        for (t, o) in out.into_iter().enumerate() {
            let dst = if t < 2 { &mut acc[..] } else { &mut o[..] };
            embed(t, &maps, &maps16, dst);
            if t < 2 {
                Gf2p64::mul_slice(o, acc, a);
            }
        }
        true
    })?;
    Some((sums, at_data.into_values()))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The kept maps are those scaled afresh, per embedding and entry, also once more
    /// embeddings than it keeps have cleared the cache.
    #[test]
    fn scaled_maps_are_the_scaled_embeddings() {
        let lambda: Vec<Gf2p64> = (0..K as u64)
            .map(|m| Gf2p64(0x9e37_79b9_7f4a_7c15 ^ (m + 1).wrapping_mul(0x1234_5678_9abc)))
            .collect();
        // Eleven embeddings, 88 pairs of embedding and entry: more than the cache keeps.
        let mut embeddings = vec![E8_TABLES, E8_HI, PAIR_EMBEDDING];
        embeddings.extend((2..10u64).map(|c| E8_TABLES.scaled(Gf2p64(c))));
        let mut cache = ScaledMaps::default();
        for _ in 0..2 {
            for f in &embeddings {
                for (m, l) in lambda.iter().enumerate() {
                    let i = cache.index(f, m, &lambda);
                    assert_eq!(*cache.get(i), f.scaled_by(*l));
                    assert!(cache.maps.len() <= ScaledMaps::MAX);
                }
            }
        }
        // Found again while kept.
        let i = cache.index(&embeddings[10], 7, &lambda);
        let len = cache.maps.len();
        assert_eq!(cache.index(&embeddings[10], 7, &lambda), i);
        assert_eq!(cache.maps.len(), len);
        let j = cache.index(&embeddings[10], 6, &lambda);
        assert_ne!(cache.get(j), cache.get(i));
    }
}
