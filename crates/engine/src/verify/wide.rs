//! The k-ary first level of `Verify` with blocks of sixteen (`k = 16`), for large runs whose
//! triples are all `GF(2)` triples packed by eight ([`TripleSource::load_bits`]): the step of
//! module `octal` with `k = 16`, where a block is two packed bytes.
//!
//! # The step
//!
//! With `L` triples and `B = ⌈L/16⌉` blocks, entry `m < 16` of block `J` is triple `16 J + m`
//! (zero from `L` on), so block `J` is bytes `2 J` (entries 0..8) and `2 J + 1` (entries 8..16)
//! of the packed bits. The coefficients are `a_J β_m` (`β_0 = 1`, fifteen more from the seed),
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

/// One job's planes: the packed parts as loaded (two bytes per block), split into low and
/// high bytes, and the scratch of the sums.
struct Planes {
    raw: Vec<[u8; 2 * SUB]>,
    lo: Vec<[u8; SUB]>,
    hi: Vec<[u8; SUB]>,
    at: Vec<[u8; SUB]>,
    w: Vec<[u8; SUB]>,
}

impl Planes {
    fn new() -> Self {
        Planes {
            raw: vec![[0; 2 * SUB]; 6],
            lo: vec![[0; SUB]; 7],
            hi: vec![[0; SUB]; 7],
            at: vec![[0; SUB]; 4],
            w: vec![[0; SUB]; NODES - K],
        }
    }

    /// Parts `0 .. count` of the blocks `j .. j + k`, split into `lo` and `hi`; `false` if
    /// they are not packed bits.
    fn load(&mut self, src: &dyn TripleSource<Gf2p64>, j: usize, k: usize, count: usize) -> bool {
        let first = K * j;
        let n = (K * k).min(src.len().saturating_sub(first));
        for p in 0..count {
            let raw: &[u8] = match src.bits_in_place(p, first, 2 * k).filter(|_| n == K * k) {
                Some(b) => b,
                None => {
                    if !src.load_bits(p, first, n, &mut self.raw[p][..2 * k]) {
                        return false;
                    }
                    &self.raw[p][..2 * k]
                }
            };
            let (lo, hi) = (&mut self.lo[p][..k], &mut self.hi[p][..k]);
            for ((l, h), b) in lo.iter_mut().zip(hi.iter_mut()).zip(raw.chunks_exact(2)) {
                *l = b[0];
                *h = b[1];
            }
        }
        true
    }
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
            let mut acc = vec![Gf2p64::ZERO; NODES + 1];
            for (q, a) in a.chunks_mut(SUB).enumerate() {
                let j = start + q * SUB;
                let k = a.len();
                co.fill(j, a);
                if !pl.load(src, j, k, 6) {
                    return None;
                }
                block_sums(&mut acc, a, &mut pl, &maps, beta);
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

/// The sums of one sub-block (its `k = a.len()` blocks loaded in `pl`) added to `acc`.
fn block_sums(
    acc: &mut [Gf2p64],
    a: &[Gf2p64],
    pl: &mut Planes,
    maps: &[[LinearMap8; 2]; NODES - K],
    beta: &[Gf2p64],
) {
    let k = a.len();
    let Planes { lo, hi, at, w, .. } = pl;
    // Plane 6: y_1 + y_2, then the local products in place of y_2 (plane 3).
    for h in [&mut *lo, &mut *hi] {
        let (parts, y12) = h.split_at_mut(6);
        for i in 0..k {
            y12[0][i] = parts[2][i] ^ parts[3][i];
        }
        for i in 0..k {
            parts[3][i] = (parts[0][i] & y12[0][i]) ^ (parts[1][i] & parts[2][i]);
        }
    }
    let s = bit_plane_sums(
        a,
        [
            &lo[3][..k],
            &lo[4][..k],
            &lo[5][..k],
            &hi[3][..k],
            &hi[4][..k],
            &hi[5][..k],
        ],
    );
    let [local_lo, z1_lo, z2_lo, local_hi, z1_hi, z2_hi] = s;
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
    for (e, pair) in maps.iter().enumerate() {
        for (t, p) in [0, 1, 2, 6].into_iter().enumerate() {
            LinearMap8::apply_sum_bytes(
                [&pair[0], &pair[1]],
                [&lo[p][..k], &hi[p][..k]],
                &mut at[t][..k],
            );
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
        let mut pl = Planes::new();
        let mut acc = vec![Gf2p64::ZERO; SUB];
        let n = piece[0].len();
        let mut off = 0;
        while off < n {
            let k = SUB.min(n - off);
            let j = start + off;
            if !pl.load(src, j, k, 4) {
                return false;
            }
            for (t, o) in piece.iter_mut().enumerate() {
                let o = &mut o[off..off + k];
                let (l, h) = (&pl.lo[t][..k], &pl.hi[t][..k]);
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
