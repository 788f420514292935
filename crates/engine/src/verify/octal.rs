//! The k-ary first level of `Verify` (`k = 8`), for large runs whose triples all have a
//! byte form (`GF(2^8)` and the fields embedded in it; [`TripleSource::load_bytes`]).
//!
//! # The step
//!
//! With `L` triples and `B = ⌈L/8⌉` blocks, triple `m B + J` (`m < 8`, `J < B`; zero from `L`
//! on) is entry `m` of block `J`. The step-1 coefficient of that triple is `a_J β_m`: `a_J` is
//! the run's coefficient `c_J` of position `J` ([`Coefficients`], itself a product of a row and
//! a column factor), `β_0 = 1` and `β_1 .. β_7` are drawn from the seed apart
//! ([`octal_columns`]). The claim is `Σ_{J,m} a_J β_m x_{J,m} y_{J,m} = z := Σ a_J β_m z_{J,m}`.
//!
//! The nodes are the bytes `α_n = n` (`n < 15`) of `GF(2^8)`, embedded by `E_8`. `F_J` is the
//! polynomial of degree 7 with `F_J(α_m) = x_{J,m}` (`m < 8`), `G_J` the same for `y`, and
//! `Q(X) = Σ_J a_J F_J(X) G_J(X)` (degree 14), so that `Σ_m β_m Q(α_m) = z`. Each party
//! computes its additive shares of `Q(α_n)` for all 15 nodes on the bytes: at the data nodes
//! the local products of the triples, at the seven others those of `F_J(α_n)` and `G_J(α_n)`,
//! which are `GF(2^8)` combinations of the eight entries (the lift is a ring homomorphism, and
//! Lagrange coefficients between nodes of `GF(2^8)` lie in `GF(2^8)`). The sums `Σ_J a_J E(w_J)`
//! are bit sums ([`ByteEmbedding::inner_products`]). The parties reshare `Q(α_1) .. Q(α_14)`
//! (14 elements, 112 bytes to `P_{i-1}`), set `Q(α_0) = z - Σ_{m ≥ 1} β_m Q(α_m)`, toss a coin
//! `s` and continue with the claim `Q(s) = Σ_J x'_J y'_J` of length `B`, where `x'_J = a_J
//! F_J(s)` and `y'_J = G_J(s)`: one byte map per entry (`E_8` scaled by the Lagrange
//! coefficient `ℓ_m(s)` of the data nodes) and one product per block. The halving of
//! PROTOCOLS.md §5.4 follows on the vectors of length `B`.
//!
//! # Cost and soundness
//!
//! Against three halvings it sends 112 instead of 48 bytes to `P_{i-1}` and one coin instead
//! of three to `P_{i+1}`, in 2 instead of 6 rounds: per run `16ℓ' + 112 + 16` bytes to
//! `P_{i-1}`, `16 + 8 + 8ℓ' + 24` to `P_{i+1}` with `ℓ' = ⌈log2 B⌉`, `2ℓ' + 8` rounds. The later
//! levels start from `L/8` instead of `L/2` entries, and level 1 writes four vectors of `L/8`
//! instead of two of `L/2`. Step 1 is a non-zero polynomial of degree 3 in independent uniform
//! factors if some triple is wrong (`≤ 3/2^64`), and a wrong claim survives this step only if
//! `s` is a root of the difference of two distinct polynomials of degree ≤ 14 (`≤ 14/2^64`).
//! Only runs of at least [`MIN_LEN`] triples take it, so the figures for one block (the
//! ARCHITECTURE.md table) are those of the halving.

use rayon::prelude::*;
use triskele_field::embed::{e8, ByteEmbedding, E8_TABLES};
use triskele_field::{Bulk, Field, Gf2p64, Gf2p8, LinearMap8};

use super::bytes::lp8;
use super::coeffs::{octal_key, Coefficients, SUB};
use super::fold::job_ranges;
use super::{TripleSource, VerifyField};

/// Entries per block (the arity of the step).
pub(crate) const K: usize = 8;
/// Nodes of `Q` (degree `2K - 2`).
pub(crate) const NODES: usize = 2 * K - 1;
/// The fewest triples of a run that takes the step.
pub const MIN_LEN: usize = 1 << 16;

/// `[β_0, .., β_7]` of a run: `β_0 = 1`, the others from AES-128-CTR under [`octal_key`].
pub(super) fn octal_columns<V: VerifyField>(seed: &[u8; 16]) -> [V; K] {
    let mut b = [V::ONE; K];
    V::fill_random(
        &mut triskele_field::ctr::Aes128Ctr::new(&octal_key(seed)),
        &mut b[1..],
    );
    b
}

/// The Lagrange coefficients `ℓ_j(s)` of the nodes `nodes` (distinct).
pub(super) fn lagrange<V: Field, const N: usize>(nodes: &[V; N], s: V) -> [V; N] {
    core::array::from_fn(|j| {
        let (mut num, mut den) = (V::ONE, V::ONE);
        for (i, n) in nodes.iter().enumerate() {
            if i != j {
                num *= s - *n;
                den *= nodes[j] - *n;
            }
        }
        num * den.inverse()
    })
}

/// The nodes `α_n = n` as bytes of `GF(2^8)`.
fn byte_nodes<const N: usize>() -> [Gf2p8; N] {
    core::array::from_fn(|n| Gf2p8(n as u8))
}

/// The nodes `E_8(α_n)` in `GF(2^64)`.
pub(super) fn nodes64() -> [Gf2p64; NODES] {
    byte_nodes::<NODES>().map(e8)
}

/// `F(α_{K+e}) = Σ_m L[e][m] F(α_m)` for polynomials of degree `< K`: multiplication by the
/// Lagrange coefficients as byte maps.
fn extra_node_maps() -> [[LinearMap8; K]; NODES - K] {
    let data = byte_nodes::<K>();
    core::array::from_fn(|e| lagrange(&data, Gf2p8((K + e) as u8)).map(LinearMap8::mul_by))
}

/// The byte rows of one job: parts `0 .. 6` of the eight entries of a sub-block of blocks,
/// borrowed from the source where it stores them as such bytes, else loaded here.
struct Rows {
    buf: Vec<[u8; SUB]>,
}

/// Part `p` of entry `m` at `[m][p]`.
type RowViews<'a> = [[&'a [u8]; 6]; K];

impl Rows {
    fn new() -> Self {
        Rows {
            buf: vec![[0; SUB]; K * 6],
        }
    }

    /// Parts `0 .. count` of entry `m` of blocks `j .. j + k` (zero past the source; later
    /// parts empty); `None` if the source has no bytes.
    fn load<'a>(
        &'a mut self,
        src: &'a dyn TripleSource<Gf2p64>,
        blocks: usize,
        j: usize,
        k: usize,
        count: usize,
    ) -> Option<RowViews<'a>> {
        let len = src.len();
        let mut direct: [[Option<&'a [u8]>; 6]; K] = [[None; 6]; K];
        for (m, row) in direct.iter_mut().enumerate() {
            let start = m * blocks + j;
            let avail = len.saturating_sub(start).min(k);
            for (p, d) in row.iter_mut().enumerate().take(count) {
                if avail == k {
                    *d = src.bytes_in_place(p, start, k);
                }
                if d.is_none() {
                    let buf = &mut self.buf[m * 6 + p];
                    if avail > 0 && !src.load_bytes(p, start, &mut buf[..avail]) {
                        return None;
                    }
                    buf[avail..k].fill(0);
                }
            }
        }
        let buf = &self.buf;
        Some(core::array::from_fn(|m| {
            core::array::from_fn(|p| match direct[m][p] {
                Some(d) => d,
                None if p < count => &buf[m * 6 + p][..k],
                None => &[],
            })
        }))
    }
}

/// One job's byte scratch of the sums: `y_1 + y_2` of each entry, the values at one extra
/// node, and the local products at the 15 nodes.
struct Scratch {
    y12: Vec<[u8; SUB]>,
    /// `x_1, x_2, y_1, y_1 + y_2` at an extra node.
    at: Vec<[u8; SUB]>,
    w: Vec<[u8; SUB]>,
}

impl Scratch {
    fn new() -> Self {
        Scratch {
            y12: vec![[0; SUB]; K],
            at: vec![[0; SUB]; 4],
            w: vec![[0; SUB]; NODES],
        }
    }
}

/// Whether a run of `src` takes the step: long enough, and bytes for every triple.
pub(super) fn applies(src: &dyn TripleSource<Gf2p64>) -> bool {
    src.len() >= MIN_LEN && src.load_bytes(0, 0, &mut [])
}

/// This party's local part of the step before the coin: writes `a_J` (`a.len() = B`) and
/// returns `[z_1, z_2, Q_1, .., Q_14]`, the two components of the combined `z` and its
/// additive shares of `Q(α_n)` (not of `Q(α_0)`, which follows from the claim); `None` if
/// some triple has no byte form.
pub(super) fn sums(
    src: &dyn TripleSource<Gf2p64>,
    seed: &[u8; 16],
    beta: &[Gf2p64; K],
    a: &mut [Gf2p64],
) -> Option<[Gf2p64; NODES + 1]> {
    let blocks = a.len();
    let co = Coefficients::<Gf2p64>::new(*seed);
    let extra = extra_node_maps();
    let zmaps: [ByteEmbedding; K] = beta.map(|b| E8_TABLES.scaled_by(b));
    let ranges = job_ranges(blocks, SUB);
    let mut pieces = Vec::with_capacity(ranges.len());
    let mut rest = a;
    for r in &ranges {
        let (h, t) = core::mem::take(&mut rest).split_at_mut(r.len());
        pieces.push((r.start, h));
        rest = t;
    }
    pieces
        .into_par_iter()
        .map(|(start, a)| {
            let mut rows = Rows::new();
            let mut sc = Scratch::new();
            let mut acc = [Gf2p64::ZERO; NODES + 1];
            for (q, a) in a.chunks_mut(SUB).enumerate() {
                let j = start + q * SUB;
                let k = a.len();
                co.fill(j, a);
                let parts = rows.load(src, blocks, j, k, 6)?;
                let Scratch { y12, at, w } = &mut sc;
                let part = |m: usize, p: usize| parts[m][p];
                for m in 0..K {
                    let id = &LinearMap8::IDENTITY;
                    LinearMap8::apply_sum_bytes(
                        [id, id],
                        [part(m, 2), part(m, 3)],
                        &mut y12[m][..k],
                    );
                    if m > 0 {
                        lp8(
                            &mut w[m][..k],
                            part(m, 0),
                            part(m, 1),
                            part(m, 2),
                            &y12[m][..k],
                        );
                    }
                }
                for (e, maps) in extra.iter().enumerate() {
                    for (t, out) in at.iter_mut().enumerate() {
                        let src: [&[u8]; K] = core::array::from_fn(|m| match t {
                            3 => &y12[m][..k],
                            p => part(m, p),
                        });
                        LinearMap8::apply_sum_bytes(maps.each_ref(), src, &mut out[..k]);
                    }
                    lp8(
                        &mut w[K + e][..k],
                        &at[0][..k],
                        &at[1][..k],
                        &at[2][..k],
                        &at[3][..k],
                    );
                }
                let q: [Gf2p64; NODES - 1] = ByteEmbedding::inner_products(
                    a,
                    core::array::from_fn(|n| (&E8_TABLES, &w[n + 1][..k])),
                );
                for (o, v) in acc[2..].iter_mut().zip(q) {
                    *o += v;
                }
                for (t, o) in acc[..2].iter_mut().enumerate() {
                    let z: [Gf2p64; K] = ByteEmbedding::inner_products(
                        a,
                        core::array::from_fn(|m| (&zmaps[m], part(m, 4 + t))),
                    );
                    *o += z.into_iter().fold(Gf2p64::ZERO, |x, y| x + y);
                }
            }
            Some(acc)
        })
        .try_reduce(
            || [Gf2p64::ZERO; NODES + 1],
            |x, y| Some(core::array::from_fn(|i| x[i] + y[i])),
        )
}

/// The fold with the coin `s`: `out = [x'_1, x'_2, y'_1, y'_2]` (length `B = a.len()` each)
/// with `x'_J = a_J F_J(s)`, `y'_J = G_J(s)`; `false` if some triple has no byte form.
pub(super) fn fold(
    src: &dyn TripleSource<Gf2p64>,
    a: &[Gf2p64],
    s: Gf2p64,
    out: [&mut [Gf2p64]; 4],
) -> bool {
    let blocks = a.len();
    let data: [Gf2p64; K] = core::array::from_fn(|m| nodes64()[m]);
    let maps: [ByteEmbedding; K] = lagrange(&data, s).map(|l| E8_TABLES.scaled_by(l));
    let ranges = job_ranges(blocks, SUB);
    let mut outs = out.map(Some);
    let mut jobs = Vec::with_capacity(ranges.len());
    for r in &ranges {
        let piece: [&mut [Gf2p64]; 4] = core::array::from_fn(|t| {
            let v = outs[t].take().unwrap_or_default();
            let (h, rest) = v.split_at_mut(r.len().min(v.len()));
            outs[t] = Some(rest);
            h
        });
        jobs.push((r.start, piece));
    }
    jobs.into_par_iter().all(|(start, mut piece)| {
        let mut rows = Rows::new();
        let mut acc = vec![Gf2p64::ZERO; SUB];
        let n = piece[0].len();
        let mut off = 0;
        while off < n {
            let k = SUB.min(n - off);
            let j = start + off;
            let Some(parts) = rows.load(src, blocks, j, k, 4) else {
                return false;
            };
            for (t, o) in piece.iter_mut().enumerate() {
                let srcs: [&[u8]; K] = core::array::from_fn(|m| parts[m][t]);
                let o = &mut o[off..off + k];
                if t < 2 {
                    ByteEmbedding::apply_sum_slice(maps.each_ref(), srcs, &mut acc[..k]);
                    Gf2p64::mul_slice(o, &acc[..k], &a[j..j + k]);
                } else {
                    ByteEmbedding::apply_sum_slice(maps.each_ref(), srcs, o);
                }
            }
            off += k;
        }
        true
    })
}
