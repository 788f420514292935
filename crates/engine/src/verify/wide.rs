//! The k-ary first level of `Verify` with blocks of sixteen (`k = 16`), for large runs whose
//! triples are all `GF(2)` triples packed by eight ([`TripleSource::load_bits`]): the step of
//! module `octal` with `k = 16`, where a block is two packed bytes.
//!
//! # The step
//!
//! With `L` triples and `B = ⌈L/16⌉` blocks, the blocks are taken in chunks of `SUB` (the
//! sub-blocks of the passes): the chunk of blocks `c SUB ..` with `k` blocks holds the `16 k`
//! triples from `16 c SUB` (zero from `L` on), and of its `2 k` packed bytes, byte `i` holds
//! entries 0..8 of its block `i` and byte `k + i` entries 8..16 ([`entry`]), so that the low
//! and the high halves of the blocks are two runs of bytes, read in place. The coefficients are `a_J β_m` (`β_0 = 1`, fifteen more from the seed),
//! the nodes the bytes `α_n = n` (`n < 31`) of `GF(2^8)`, and `Q = Σ_J a_J F_J G_J` has degree
//! 30. At the data nodes the local products are bits (AND and XOR of the packed bytes) and
//! their sums `Σ_J a_J w_{J,m}` are sums of `a` over bit planes; at the fifteen extra nodes
//! `F_J(α)` is the sum of two byte maps (the Lagrange coefficients of the low and of the high
//! eight data nodes as the images of the bits), then a local product in `GF(2^8)` and the bit
//! sums of its embedding. The parties reshare `Q(α_1) .. Q(α_30)` (30 elements, 240 bytes to
//! `P_{i-1}`), derive `Q(α_0)` from the claim, toss one coin `s` and fold to `a_J F_J(s)`,
//! `G_J(s)` (two byte maps into `GF(2^64)` per entry, one product per block): the halvings
//! start from `L/16` entries.
//!
//! # Cost and soundness
//!
//! Per run `240 + 16ℓ' + 16` bytes to `P_{i-1}` and `16 + 8 + 8ℓ' + 24` to `P_{i+1}`,
//! `ℓ' = ⌈log2 B⌉`, in `2ℓ' + 8` rounds: 128 bytes more than the level with blocks of eight,
//! one halving less. A wrong claim survives the step only if `s` is a root of the difference
//! of two distinct polynomials of degree ≤ 30 (`≤ 30/2^64`), and step 1 is a non-zero
//! polynomial of degree 3 in independent uniform factors if some triple is wrong (`≤ 3/2^64`):
//! with the `ℓ'` halvings and CheckTriple, `(2ℓ' + 35)/2^64` per run.

use rayon::prelude::*;
use triskele_field::embed::{bit_plane_sums, ByteEmbedding, E8_TABLES};
use triskele_field::{Bulk, Field, Gf2p64, Gf2p8, LinearMap8};

use super::bytes::lp8;
use super::coeffs::{Coefficients, SUB};
use super::fold::job_ranges;
use super::{lagrange, TripleSource};

/// Entries per block.
pub(super) const K: usize = 16;
/// Nodes of `Q` (degree `2K - 2`).
pub(super) const NODES: usize = 2 * K - 1;

/// Whether a run of `src` takes this level rather than the one with blocks of eight: all its
/// triples are packed bits.
pub(super) fn applies(src: &dyn TripleSource<Gf2p64>) -> bool {
    src.all_bits()
}

/// For each extra node `α_{K+e}`: the byte maps of the low and the high packed byte, bit `m`
/// to the Lagrange coefficient of data node `m` resp. `8 + m`.
fn extra_node_maps() -> [[LinearMap8; 2]; NODES - K] {
    let data: [Gf2p8; K] = core::array::from_fn(|n| Gf2p8(n as u8));
    core::array::from_fn(|e| {
        let l = lagrange(&data, Gf2p8((K + e) as u8));
        [0, 1].map(|h| LinearMap8::from_basis_images(core::array::from_fn(|m| l[8 * h + m].0)))
    })
}

/// The index of entry `m` of block `J` of a run of `len` triples (the layout of the module
/// docs).
#[cfg(test)]
pub(super) fn entry(len: usize, block: usize, m: usize) -> usize {
    let blocks = len.div_ceil(K);
    let (c, i) = (block / SUB, block % SUB);
    let k = SUB.min(blocks - c * SUB);
    let first = K * c * SUB;
    if m < 8 {
        first + 8 * i + m
    } else {
        first + 8 * k + 8 * i + m - 8
    }
}

/// One job's scratch for the sums (`y_1 + y_2` and the local products on `2 k` bytes, the values at
/// one extra node, the local products at the extra nodes).
struct Planes {
    y12: [u8; 2 * SUB],
    local: [u8; 2 * SUB],
    at: Vec<[u8; SUB]>,
    w: Vec<[u8; SUB]>,
}

impl Planes {
    fn new() -> Self {
        Planes {
            y12: [0; 2 * SUB],
            local: [0; 2 * SUB],
            at: vec![[0; SUB]; 4],
            w: vec![[0; SUB]; NODES - K],
        }
    }
}

/// Parts `0 .. count` of the blocks `j .. j + k` (`2 k` packed bytes each; later parts
/// empty): borrowed where the source stores them so, else loaded into `raw`; `None` if they
/// are not packed bits.
fn load<'a>(
    raw: &'a mut [[u8; 2 * SUB]],
    src: &'a dyn TripleSource<Gf2p64>,
    j: usize,
    k: usize,
    count: usize,
) -> Option<[&'a [u8]; 6]> {
    let first = K * j;
    let n = (K * k).min(src.len().saturating_sub(first));
    let mut direct: [Option<&'a [u8]>; 6] = [None; 6];
    for (p, d) in direct.iter_mut().enumerate().take(count) {
        if n == K * k {
            *d = src.bits_in_place(p, first, 2 * k);
        }
        if d.is_none() && !src.load_bits(p, first, n, &mut raw[p][..2 * k]) {
            return None;
        }
    }
    Some(core::array::from_fn(|p| match direct[p] {
        Some(d) => d,
        None if p < count => &raw[p][..2 * k],
        None => &[],
    }))
}

/// This party's local part of the step before the coin: writes `a_J` (`a.len() = B`) and
/// returns `[z_1, z_2, Q_1, .., Q_30]`; `None` if some triple is not a packed bit.
pub(super) fn sums(
    src: &dyn TripleSource<Gf2p64>,
    seed: &[u8; 16],
    beta: &[Gf2p64],
    a: &mut [Gf2p64],
) -> Option<Vec<Gf2p64>> {
    if beta.len() != K {
        return None;
    }
    let blocks = a.len();
    let co = Coefficients::<Gf2p64>::new(*seed);
    let maps = extra_node_maps();
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
            let mut pl = Planes::new();
            let mut raw = vec![[0; 2 * SUB]; 6];
            let mut acc = vec![Gf2p64::ZERO; NODES + 1];
            for (q, a) in a.chunks_mut(SUB).enumerate() {
                let j = start + q * SUB;
                let k = a.len();
                co.fill(j, a);
                let parts = load(&mut raw, src, j, k, 6)?;
                block_sums(&mut acc, a, parts, &mut pl, &maps, beta);
            }
            Some(acc)
        })
        .try_reduce(
            || vec![Gf2p64::ZERO; NODES + 1],
            |mut x, y| {
                for (x, y) in x.iter_mut().zip(y) {
                    *x += y;
                }
                Some(x)
            },
        )
}

/// The low and the high halves of `2 k` packed bytes.
fn halves(v: &[u8], k: usize) -> [&[u8]; 2] {
    [&v[..k], &v[k..2 * k]]
}

/// The sums of one sub-block of `k = a.len()` blocks (`parts`: `2 k` packed bytes each, the
/// low halves of the blocks then the high halves) added to `acc`.
fn block_sums(
    acc: &mut [Gf2p64],
    a: &[Gf2p64],
    parts: [&[u8]; 6],
    pl: &mut Planes,
    maps: &[[LinearMap8; 2]; NODES - K],
    beta: &[Gf2p64],
) {
    let k = a.len();
    let [x1, x2, y1, y2, z1, z2] = parts.map(|p| &p[..2 * k]);
    let Planes {
        y12, local, at, w, ..
    } = pl;
    let (y12, local) = (&mut y12[..2 * k], &mut local[..2 * k]);
    for ((o, a), b) in y12.iter_mut().zip(y1).zip(y2) {
        *o = a ^ b;
    }
    for (i, o) in local.iter_mut().enumerate() {
        *o = (x1[i] & y12[i]) ^ (x2[i] & y1[i]);
    }
    let [l_lo, l_hi] = halves(local, k);
    let ([z1_lo, z1_hi], [z2_lo, z2_hi]) = (halves(z1, k), halves(z2, k));
    let s = bit_plane_sums(a, [l_lo, l_hi, z1_lo, z1_hi, z2_lo, z2_hi]);
    let [local_lo, local_hi, z1_lo, z1_hi, z2_lo, z2_hi] = s;
    // Node m < 8 from the low bytes, 8 + m from the high ones; Q_n at acc[n + 1].
    for m in 1..8 {
        acc[m + 1] += local_lo[m];
    }
    for m in 0..8 {
        acc[8 + m + 1] += local_hi[m];
    }
    for (t, (zl, zh)) in [(z1_lo, z1_hi), (z2_lo, z2_hi)].into_iter().enumerate() {
        acc[t] += (0..8).fold(Gf2p64::ZERO, |acc, m| {
            acc + beta[m] * zl[m] + beta[8 + m] * zh[m]
        });
    }
    let y12: &[u8] = y12;
    for (e, pair) in maps.iter().enumerate() {
        for (t, v) in [x1, x2, y1, y12].into_iter().enumerate() {
            LinearMap8::apply_sum_bytes([&pair[0], &pair[1]], halves(v, k), &mut at[t][..k]);
        }
        lp8(
            &mut w[e][..k],
            &at[0][..k],
            &at[1][..k],
            &at[2][..k],
            &at[3][..k],
        );
    }
    let q: [Gf2p64; NODES - K] =
        ByteEmbedding::inner_products(a, core::array::from_fn(|e| (&E8_TABLES, &w[e][..k])));
    for (o, v) in acc[K + 1..].iter_mut().zip(q) {
        *o += v;
    }
}

/// The fold with the coin `s`: `out = [x'_1, x'_2, y'_1, y'_2]` (length `B = a.len()` each)
/// with `x'_J = a_J F_J(s)`, `y'_J = G_J(s)`; `false` if some triple is not a packed bit.
pub(super) fn fold(
    src: &dyn TripleSource<Gf2p64>,
    a: &[Gf2p64],
    s: Gf2p64,
    out: [&mut [Gf2p64]; 4],
) -> bool {
    let blocks = a.len();
    let data: [Gf2p64; K] = core::array::from_fn(|n| triskele_field::embed::e8(Gf2p8(n as u8)));
    let ell = lagrange(&data, s);
    let half = |h: usize| ByteEmbedding::new(&core::array::from_fn(|m| ell[8 * h + m]));
    let (map_lo, map_hi) = (half(0), half(1));
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
        let mut raw = vec![[0; 2 * SUB]; 6];
        let mut acc = vec![Gf2p64::ZERO; SUB];
        let n = piece[0].len();
        let mut off = 0;
        while off < n {
            let k = SUB.min(n - off);
            let j = start + off;
            let Some(parts) = load(&mut raw, src, j, k, 4) else {
                return false;
            };
            for (t, o) in piece.iter_mut().enumerate() {
                let o = &mut o[off..off + k];
                let (l, h) = (&parts[t][..k], &parts[t][k..2 * k]);
                if t < 2 {
                    map_lo.apply_pair_slice(&map_hi, l, h, &mut acc[..k]);
                    Gf2p64::mul_slice(o, &acc[..k], &a[j..j + k]);
                } else {
                    map_lo.apply_pair_slice(&map_hi, l, h, o);
                }
            }
            off += k;
        }
        true
    })
}
