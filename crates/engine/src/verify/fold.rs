use std::sync::atomic::{AtomicU64, Ordering};

use rayon::prelude::*;
use triskele_field::{Bulk, Gf2p64};

use super::coeffs::{draw, CoeffStream, Coefficients, Drawn, COEFF_CHUNK, SUB};
use super::{Coeffs, LiftedTriples, Parts, Spare, TripleSource, VerifyField};

/// `[[a]] · [[b]]` summed: this party's additive share of `Σ_k a_k b_k`.
pub(super) fn inner_share<V: VerifyField>(a: [&[V]; 2], b: [&[V]; 2]) -> V {
    V::local_inner_product(a[0], a[1], b[0], b[1])
}

/// `out = lo + (hi - lo) · u` element-wise for the node `u` (no general products); `hi` is
/// zero from `hi.len()` on.
pub(super) fn lerp_node<V: VerifyField>(out: &mut [V], lo: &[V], hi: &[V]) {
    let (o_pair, o_rest) = out.split_at_mut(hi.len());
    let (l_pair, l_rest) = lo.split_at(hi.len());
    for ((o, l), h) in o_pair.iter_mut().zip(l_pair).zip(hi) {
        *o = *l + (*h - *l).times_node();
    }
    for (o, l) in o_rest.iter_mut().zip(l_rest) {
        *o = *l - l.times_node();
    }
}

/// `v = v + (w - v) · s` element-wise, with `w` zero from `w.len()` on.
fn lerp_in_place<V: VerifyField>(v: &mut [V], w: &[V], s: V) {
    let m = w.len().min(v.len());
    let (pair, rest) = v.split_at_mut(m);
    V::lerp_assign_slice(pair, &w[..m], s);
    for x in rest {
        *x = *x - *x * s;
    }
}

/// One party's local sums for a halving level.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Sums<V> {
    /// `Σ c_k z_k`, both components (level 1 only; zero at later levels).
    pub(super) z: [V; 2],
    /// Additive share of `H(1)`.
    pub(super) h1: V,
    /// Additive share of `H(u)`.
    pub(super) hu: V,
}

impl<V: VerifyField> Sums<V> {
    pub(super) const ZERO: Self = Sums {
        z: [V::ZERO; 2],
        h1: V::ZERO,
        hu: V::ZERO,
    };

    pub(super) fn add(self, o: Self) -> Self {
        Sums {
            z: [self.z[0] + o.z[0], self.z[1] + o.z[1]],
            h1: self.h1 + o.h1,
            hu: self.hu + o.hu,
        }
    }
}

/// Splits `[0, count)` into contiguous ranges for the rayon jobs (enough to balance the
/// threads, few enough that per-job buffers are set up rarely), with boundaries at multiples
/// of `align`.
pub(super) fn job_ranges(count: usize, align: usize) -> Vec<core::ops::Range<usize>> {
    let units = count.div_ceil(align).max(1);
    let jobs = units.min(4 * rayon::current_num_threads()).max(1);
    let per = units.div_ceil(jobs);
    (0..units)
        .step_by(per)
        .map(|u| u * align..((u + per) * align).min(count))
        .collect()
}

/// For each job range `r` of `[0, nh)`: the pieces `v[r]` and `v[nh + r] ∩ v[nh..end]`
/// (`nh ≤ end ≤ v.len()`).
fn split_pairs<'a, V>(
    v: &'a mut [V],
    nh: usize,
    end: usize,
    ranges: &[core::ops::Range<usize>],
) -> Vec<(&'a mut [V], &'a mut [V])> {
    let (mut a, mut b) = v[..end].split_at_mut(nh);
    let mut out = Vec::with_capacity(ranges.len());
    for r in ranges {
        let (ah, at) = core::mem::take(&mut a).split_at_mut(r.len());
        let nb = r.len().min(b.len());
        let (bh, bt) = core::mem::take(&mut b).split_at_mut(nb);
        a = at;
        b = bt;
        out.push((ah, bh));
    }
    out
}

/// The lower parts `[x1, x2, y1, y2]` of a folded claim (`v[..end]` each), split per job
/// range `r` of `[0, nh)` into `v[r]` and `v[nh + r] ∩ v[nh..end]` (`split_pairs`).
pub(super) type JobSlices<'a, V> = (core::ops::Range<usize>, [&'a mut [V]; 4], [&'a mut [V]; 4]);

pub(super) fn split_jobs<'a, V>(
    lows: [&'a mut [V]; 4],
    nh: usize,
    end: usize,
    ranges: &[core::ops::Range<usize>],
) -> Vec<JobSlices<'a, V>> {
    let mut parts = lows.map(|v| split_pairs(v, nh, end, ranges).into_iter());
    ranges
        .iter()
        .map(|r| {
            let mut a: [&mut [V]; 4] = Default::default();
            let mut b: [&mut [V]; 4] = Default::default();
            for (k, p) in parts.iter_mut().enumerate() {
                if let Some((pa, pb)) = p.next() {
                    a[k] = pa;
                    b[k] = pb;
                }
            }
            (r.clone(), a, b)
        })
        .collect()
}

/// Per-job scratch buffers of the kernels (sub-block sized; those of the lifting path are
/// allocated on first use).
struct Scratch<V> {
    lo: LiftedTriples<V>,
    hi: LiftedTriples<V>,
    c_lo: Vec<V>,
    c_hi: Vec<V>,
    /// `c · x` (both components) of the lower and the upper block.
    cx: [Vec<V>; 4],
    /// Values at the node.
    f: [Vec<V>; 4],
}

impl<V: VerifyField> Scratch<V> {
    fn new() -> Self {
        let z = || vec![V::ZERO; SUB];
        Scratch {
            lo: LiftedTriples::default(),
            hi: LiftedTriples::default(),
            c_lo: z(),
            c_hi: z(),
            cx: Default::default(),
            f: [z(), z(), z(), z()],
        }
    }
}

/// The next level's sums for the pairs `(a_i, b_i)` of a sub-block: `a = [x1, x2, y1, y2]`
/// of the lower positions, `b` of the upper ones (zero from `b[0].len()` on).
pub(super) fn pair_sums<V: VerifyField>(
    a: [&[V]; 4],
    b: [&[V]; 4],
    f: &mut [Vec<V>; 4],
) -> Sums<V> {
    let [h1, hu] = V::node_sums(a, b, f);
    Sums {
        z: [V::ZERO; 2],
        h1,
        hu,
    }
}

/// The triples `start .. start + k` as `[x_1, x_2, y_1, y_2, z_1, z_2]`: borrowed from the
/// source if it has them as check-field slices ([`TripleSource::slices`]), else lifted into
/// `buf` (only `parts`; zero from the end of the source on).
fn view<'a, V: VerifyField>(
    src: &'a dyn TripleSource<V>,
    start: usize,
    k: usize,
    parts: Parts,
    buf: &'a mut LiftedTriples<V>,
) -> [&'a [V]; 6] {
    if let Some(v) = src.slices(start, k) {
        return v;
    }
    buf.set_len(k);
    src.lift(start, parts, buf);
    [
        &buf.x.first,
        &buf.x.second,
        &buf.y.first,
        &buf.y.second,
        &buf.z.first,
        &buf.z.second,
    ]
}

/// Level 1, pass A: the sums for the pairs `(j, j + h)`, `j < h`, of the source combined with
/// the step-1 coefficients. Each job streams over its range in sub-blocks: lift both blocks,
/// draw their coefficients, and reduce everything to the four sums. With `keep` (two vectors
/// of length `2h`, for a source read in place, [`TripleSource::in_place`]) the scaled `X = c
/// x` of every position is written there (zero from the end of the source on) for
/// [`fold_scaled`]; without it nothing of size `L` is written.
pub(super) fn source_sums<V: VerifyField>(
    src: &dyn TripleSource<V>,
    co: &Coefficients<V>,
    h: usize,
    keep: Option<&mut [Vec<V>; 2]>,
) -> Sums<V> {
    let total = src.len();
    let ranges = job_ranges(h, COEFF_CHUNK);
    // Per job: its lower and upper pieces of both kept vectors.
    let pieces: Vec<Option<[[&mut [V]; 2]; 2]>> = match keep {
        Some([x1, x2]) => {
            let p1 = split_pairs(&mut x1[..2 * h], h, 2 * h, &ranges);
            let p2 = split_pairs(&mut x2[..2 * h], h, 2 * h, &ranges);
            p1.into_iter()
                .zip(p2)
                .map(|((l1, h1), (l2, h2))| Some([[l1, l2], [h1, h2]]))
                .collect()
        }
        None => ranges.iter().map(|_| None).collect(),
    };
    ranges
        .into_par_iter()
        .zip(pieces)
        .map(|(r, mut kept)| {
            let mut sc = Scratch::new();
            let mut acc = Sums::ZERO;
            let mut s_lo = CoeffStream::new(co, r.start);
            let mut s_hi = CoeffStream::new(co, h + r.start);
            let mut p = r.start;
            while p < r.end && p < total {
                let k = SUB.min(r.end - p);
                let off = p - r.start;
                let out = kept.as_mut().map(|[[l1, l2], [h1, h2]]| {
                    [
                        [&mut l1[off..off + k], &mut l2[off..off + k]],
                        [&mut h1[off..off + k], &mut h2[off..off + k]],
                    ]
                });
                acc = acc.add(source_sums_block(
                    src,
                    &mut sc,
                    [&mut s_lo, &mut s_hi],
                    p,
                    p + h,
                    k,
                    out,
                ));
                p += k;
            }
            acc
        })
        .reduce(|| Sums::ZERO, Sums::add)
}

/// [`source_sums`] for the `k` pairs at `lo + i`, `hi + i` (`lo < total`); with `keep`, `X`
/// of the lower and of the upper positions is written there (zero past the source).
fn source_sums_block<V: VerifyField>(
    src: &dyn TripleSource<V>,
    sc: &mut Scratch<V>,
    streams: [&mut CoeffStream<'_, V>; 2],
    lo: usize,
    hi: usize,
    k: usize,
    keep: Option<[[&mut [V]; 2]; 2]>,
) -> Sums<V> {
    let total = src.len();
    let Scratch {
        lo: tl,
        hi: th,
        c_lo,
        c_hi,
        cx,
        f,
        ..
    } = sc;
    let [s_lo, s_hi] = streams;
    let (c_lo, c_hi) = (&mut c_lo[..k], &mut c_hi[..k]);
    // The upper block: `kh` entries before the end of the source (zero after).
    let kh = total.saturating_sub(hi).min(k);
    let drawn = draw([s_lo, s_hi], [&mut *c_lo, &mut *c_hi], kh > 0);
    if keep.is_none() && (kh == 0 || kh == k) {
        let h = (kh == k).then_some(hi);
        let c = drawn.each_ref().map(|d| d.coeffs());
        if let Some([z1, z2, h1, hu]) = src.pair_sums(lo, h, [c[0], c[1].prefix(kh)]) {
            return Sums {
                z: [z1, z2],
                h1,
                hu,
            };
        }
    }
    let [d_lo, d_hi] = drawn;
    let (c_lo, c_hi) = (d_lo.plain(), d_hi.plain());
    let [xl1, xl2, xh1, xh2] = match keep {
        Some([[l1, l2], [h1, h2]]) => [l1, l2, h1, h2],
        None => cx.each_mut().map(|v| {
            v.resize(SUB, V::ZERO);
            &mut v[..k]
        }),
    };
    let (yl, mut z) = scaled_view(src, lo, c_lo, [&mut *xl1, &mut *xl2], tl);
    let mut yh: [&[V]; 2] = [&[], &[]];
    if kh > 0 {
        let (y, zh) = scaled_view(src, hi, c_hi, [&mut *xh1, &mut *xh2], th);
        z[0] += zh[0];
        z[1] += zh[1];
        yh = y;
    } else {
        // Past the end of the source (only read back when kept).
        xh1.fill(V::ZERO);
        xh2.fill(V::ZERO);
    }
    let kh = if kh > 0 { k } else { 0 };
    let [y1, y2] = yl;
    let a = [&*xl1, &*xl2, y1, y2];
    let b = [&xh1[..kh], &xh2[..kh], yh[0], yh[1]];
    let s = pair_sums(a, b, f);
    Sums {
        z,
        h1: s.h1,
        hu: s.hu,
    }
}

/// `X = c x` of the triples `start .. start + c.len()` written into `out`, with their `y`
/// and `[Σ c z_1, Σ c z_2]`: formed by the source ([`TripleSource::scaled_x`]) or from its
/// triples ([`view`], lifted into `buf` if need be).
#[allow(clippy::type_complexity)]
fn scaled_view<'a, V: VerifyField>(
    src: &'a dyn TripleSource<V>,
    start: usize,
    c: &[V],
    out: [&mut [V]; 2],
    buf: &'a mut LiftedTriples<V>,
) -> ([&'a [V]; 2], [V; 2]) {
    let [o1, o2] = out;
    if let Some(r) = src.scaled_x(start, c, [&mut *o1, &mut *o2]) {
        return r;
    }
    let z = src.z_sums(start, c);
    let parts = if z.is_some() { Parts::Xy } else { Parts::Xyz };
    let [x1, x2, y1, y2, z1, z2] = view(src, start, c.len(), parts, buf);
    V::mul_slice(o1, x1, c);
    V::mul_slice(o2, x2, c);
    let z = z.unwrap_or_else(|| [V::inner_product(c, z1), V::inner_product(c, z2)]);
    ([y1, y2], z)
}

/// The folded vectors after a level: the claim is on their first `len` entries (`len` kept
/// by the [`Prover`](super::Prover)).
pub(super) enum Folded<V> {
    /// `x_1, x_2, y_1, y_2`.
    Four([Vec<V>; 4]),
    /// `x_1 | y_1` and `x_2 | y_2`, each split at `.1`.
    Two([Vec<V>; 2], usize),
    /// After level 1 of a source that gives `y` again: only `x_1, x_2`; `y` is recomputed
    /// from the source with the level-1 coin `.1` ([`TripleSource::y_bytes`],
    /// [`TripleSource::lift_y`]).
    XOnly([Vec<V>; 2], V),
    /// Before level 1's fold, for a source read in place: `X = c x` of every position as
    /// pass A formed it (length `2h`, zero past the source; [`fold_scaled`] folds it).
    Scaled([Vec<V>; 2]),
}

impl<V> Folded<V> {
    /// `[x_1, x_2, y_1, y_2]` (not for [`Folded::XOnly`]).
    pub(super) fn views(&mut self) -> Option<[&mut [V]; 4]> {
        match self {
            Folded::Four(v) => Some(v.each_mut().map(|v| &mut v[..])),
            Folded::Two([b1, b2], at) => {
                let (x1, y1) = b1.split_at_mut(*at);
                let (x2, y2) = b2.split_at_mut(*at);
                Some([x1, x2, y1, y2])
            }
            Folded::XOnly(..) | Folded::Scaled(..) => None,
        }
    }
}

/// Whether `y` of level 1 can be recomputed from the source's bytes ([`TripleSource::y_bytes`]).
fn y_by_bytes<V: VerifyField>(src: &dyn TripleSource<V>) -> bool {
    V::lerp_bytes(&[], None, V::ZERO, &mut []) && src.y_bytes(0, [&mut [], &mut []])
}

/// Level 1, pass B: the folded vectors `f_j(s)`, `g_j(s)` (length `h`) from the source, and,
/// if `more`, the sums of level 2 (pairs `(j, j + ⌈h/2⌉)`) computed from them while they
/// are in cache. For a source with [`TripleSource::y_bytes`] or [`TripleSource::lift_y`]
/// (and `h` even) only `x` is stored.
pub(super) fn source_fold<V: VerifyField>(
    src: &dyn TripleSource<V>,
    co: &Coefficients<V>,
    h: usize,
    s: V,
    more: bool,
    spare: &mut Spare,
) -> (Folded<V>, Sums<V>) {
    let nh = h.div_ceil(2);
    let x_only =
        more && h.is_multiple_of(2) && (y_by_bytes(src) || src.lift_y(0, [&mut [], &mut []]));
    let mut bufs: Vec<Vec<V>> = (0..if x_only { 2 } else { 4 })
        .map(|_| spare.take(h))
        .collect();
    let ranges = job_ranges(nh, COEFF_CHUNK);
    let mut parts = bufs
        .iter_mut()
        .map(|v| split_pairs(v, nh, h, &ranges).into_iter())
        .collect::<Vec<_>>();
    let jobs: Vec<_> = ranges
        .iter()
        .map(|r| {
            let (mut a, mut b) = (Vec::new(), Vec::new());
            for p in &mut parts {
                if let Some((pa, pb)) = p.next() {
                    a.push(pa);
                    b.push(pb);
                }
            }
            (r.clone(), a, b)
        })
        .collect();
    let sums = jobs
        .into_par_iter()
        .map(|(r, mut a, mut b)| {
            let mut sc = Scratch::new();
            // The folded `y` of a sub-block when it is not stored.
            let mut ys: [Vec<V>; 4] = Default::default();
            if x_only {
                for v in &mut ys {
                    v.resize(SUB, V::ZERO);
                }
            }
            let mut acc = Sums::ZERO;
            let mut sa = [
                CoeffStream::new(co, r.start),
                CoeffStream::new(co, h + r.start),
            ];
            let mut sb = [
                CoeffStream::new(co, nh + r.start),
                CoeffStream::new(co, nh + h + r.start),
            ];
            let mut p = r.start;
            while p < r.end {
                let k = SUB.min(r.end - p);
                let kb = k.min(h.saturating_sub(nh + p));
                let off = p - r.start;
                let (ya, yb) = ys.split_at_mut(2);
                let oa = sub_views_mut(&mut a, ya, off, k);
                fold_block(src, &mut sc, &mut sa, p, h, s, oa);
                let ob = sub_views_mut(&mut b, yb, off, kb);
                fold_block(src, &mut sc, &mut sb, nh + p, h, s, ob);
                if more {
                    let av = sub_views(&a, &ys[..2], off, k);
                    let bv = sub_views(&b, &ys[2..], off, kb);
                    acc = acc.add(pair_sums(av, bv, &mut sc.f));
                }
                p += k;
            }
            acc
        })
        .reduce(|| Sums::ZERO, Sums::add);
    let folded = if x_only {
        let [b1, b2]: [Vec<V>; 2] = bufs.try_into().unwrap_or_default();
        Folded::XOnly([b1, b2], s)
    } else {
        let four: [Vec<V>; 4] = bufs.try_into().unwrap_or_default();
        Folded::Four(four)
    };
    (folded, sums)
}

/// The four output slices `[x1, x2, y1, y2]` of a sub-block `[off, off + n)`: the stored
/// vectors `v` (four, or only `x`), then scratch buffers `y`.
fn sub_views_mut<'a, V>(
    v: &'a mut [&mut [V]],
    y: &'a mut [Vec<V>],
    off: usize,
    n: usize,
) -> [&'a mut [V]; 4] {
    let mut it = v
        .iter_mut()
        .map(|v| &mut v[off..off + n])
        .chain(y.iter_mut().map(|v| &mut v[..n]));
    core::array::from_fn(|_| it.next().unwrap_or_default())
}

/// [`sub_views_mut`], read only.
fn sub_views<'a, V>(v: &'a [&mut [V]], y: &'a [Vec<V>], off: usize, n: usize) -> [&'a [V]; 4] {
    let mut it = v
        .iter()
        .map(|v| &v[off..off + n])
        .chain(y.iter().map(|v| &v[..n]));
    core::array::from_fn(|_| it.next().unwrap_or_default())
}

/// `out = [c x1, c x2, y1, y2]` folded with `s` for the positions `q + i` (lower) and
/// `q + h + i` (upper) of the source, `i < out[0].len()`.
fn fold_block<V: VerifyField>(
    src: &dyn TripleSource<V>,
    sc: &mut Scratch<V>,
    streams: &mut [CoeffStream<'_, V>; 2],
    q: usize,
    h: usize,
    s: V,
    out: [&mut [V]; 4],
) {
    let k = out[0].len();
    let total = src.len();
    if k == 0 {
        return;
    }
    if q >= total {
        for o in out {
            o.fill(V::ZERO);
        }
        return;
    }
    let Scratch {
        lo: tl,
        hi: th,
        c_lo,
        c_hi,
        cx,
        ..
    } = sc;
    let (c_lo, c_hi) = (&mut c_lo[..k], &mut c_hi[..k]);
    // The upper block: `kh` entries before the end of the source (zero after).
    let kh = total.saturating_sub(q + h).min(k);
    let [s_lo, s_hi] = streams;
    let drawn = draw([s_lo, s_hi], [&mut *c_lo, &mut *c_hi], kh > 0);
    let mut out = out;
    if kh == 0 || kh == k {
        let hi = (kh == k).then_some(q + h);
        let [o1, o2, o3, o4] = out;
        let c = drawn.each_ref().map(|d| d.coeffs());
        if src.fold_pairs(
            q,
            hi,
            [c[0], c[1].prefix(kh)],
            s,
            [&mut *o1, &mut *o2, &mut *o3, &mut *o4],
        ) {
            return;
        }
        out = [o1, o2, o3, o4];
    }
    let factored = drawn.iter().any(|d| matches!(d, Drawn::Factored(..)));
    let [d_lo, d_hi] = drawn;
    let (c_lo, c_hi) = (d_lo.plain(), d_hi.plain());
    let [o1, o2, o3, o4] = out;
    // A fused fold that takes only plain coefficients ([`VerifyField::fold_lines`]).
    if factored
        && (kh == 0 || kh == k)
        && src.fold_pairs(
            q,
            (kh == k).then_some(q + h),
            [Coeffs::plain_slice(c_lo), Coeffs::plain_slice(&c_hi[..kh])],
            s,
            [&mut *o1, &mut *o2, &mut *o3, &mut *o4],
        )
    {
        return;
    }
    let [x1, x2, y1, y2, ..] = view(src, q, k, Parts::Xy, tl);
    V::mul_slice(o1, x1, c_lo);
    V::mul_slice(o2, x2, c_lo);
    if kh > 0 {
        let [xu1, xu2, yu1, yu2, ..] = view(src, q + h, k, Parts::Xy, th);
        let [xh1, xh2, ..] = cx.each_mut().map(|v| {
            v.resize(SUB, V::ZERO);
            &mut v[..k]
        });
        V::mul_slice(xh1, xu1, c_hi);
        V::mul_slice(xh2, xu2, c_hi);
        V::lerp_assign_slice(o1, xh1, s);
        V::lerp_assign_slice(o2, xh2, s);
        V::lerp_slice(o3, y1, yu1, s);
        V::lerp_slice(o4, y2, yu2, s);
    } else {
        o3.copy_from_slice(y1);
        o4.copy_from_slice(y2);
        for o in [o1, o2, o3, o4] {
            lerp_in_place(o, &[], s);
        }
    }
}

/// A later level, in place: `v_j <- v_j + (v_{j+half} - v_j) · s` for `j < half` in each of
/// the four vectors `v = [x1, x2, y1, y2]`, with `v_{j+half} = 0` from `len` on (the claim
/// then lives on the first `half` entries); if `more`, returns the next level's sums (pairs
/// `(j, j + ⌈half/2⌉)`), computed from each folded sub-block while it is in cache.
pub(super) fn fold_level<V: VerifyField>(
    v: [&mut [V]; 4],
    half: usize,
    len: usize,
    s: V,
    more: bool,
) -> Sums<V> {
    let nh = half.div_ceil(2);
    let ranges = job_ranges(nh, SUB);
    // The lower halves are folded in place (split per job), the upper ones only read.
    let [(l1, h1), (l2, h2), (l3, h3), (l4, h4)] = v.map(|v| {
        let (lo, hi) = v[..len].split_at_mut(half);
        (lo, &*hi)
    });
    let his = [h1, h2, h3, h4];
    let hi = |t: usize, from: usize, n: usize| -> &[V] {
        let r = his[t];
        r.get(from..(from + n).min(r.len())).unwrap_or(&[])
    };
    split_jobs([l1, l2, l3, l4], nh, half, &ranges)
        .into_par_iter()
        .map(|(r, mut a, mut b)| {
            let mut f: [Vec<V>; 4] = Default::default();
            for v in &mut f {
                v.resize(SUB, V::ZERO);
            }
            let mut acc = Sums::ZERO;
            let mut p = r.start;
            while p < r.end {
                let k = SUB.min(r.end - p);
                let kb = k.min(half.saturating_sub(nh + p));
                let off = p - r.start;
                for (t, v) in a.iter_mut().enumerate() {
                    lerp_in_place(&mut v[off..off + k], hi(t, p, k), s);
                }
                for (t, v) in b.iter_mut().enumerate() {
                    lerp_in_place(&mut v[off..off + kb], hi(t, nh + p, kb), s);
                }
                if more {
                    let av = a.each_ref().map(|v| &v[off..off + k]);
                    let bv = b.each_ref().map(|v| &v[off..off + kb]);
                    acc = acc.add(pair_sums(av, bv, &mut f));
                }
                p += k;
            }
            acc
        })
        .reduce(|| Sums::ZERO, Sums::add)
}

/// The sums of a level from its vectors `v` (`[x_1, x_2, y_1, y_2]`, length `len`), pairing
/// `j < half` with `j + half` (no fold): the reference for the sums that the k-ary level's
/// fold forms (`wide::fold_sub_blocks`).
#[cfg(test)]
pub(super) fn level_sums<V: VerifyField>(v: [&[V]; 4], half: usize, len: usize) -> Sums<V> {
    job_ranges(half, SUB)
        .into_par_iter()
        .map(|r| {
            let mut f: [Vec<V>; 4] = Default::default();
            for w in &mut f {
                w.resize(SUB, V::ZERO);
            }
            let mut acc = Sums::ZERO;
            let mut p = r.start;
            while p < r.end {
                let k = SUB.min(r.end - p);
                let kb = k.min(len.saturating_sub(half + p));
                let a = v.each_ref().map(|x| &x[p..p + k]);
                let b = v
                    .each_ref()
                    .map(|x| x.get(half + p..half + p + kb).unwrap_or(&[]));
                acc = acc.add(pair_sums(a, b, &mut f));
                p += k;
            }
            acc
        })
        .reduce(|| Sums::ZERO, Sums::add)
}

/// Level 2 after [`Folded::XOnly`] (level 1 of length `h`, even, folded with `s1`): folds
/// with `s` in place, `x'' = x'_j + (x'_{j+h/2} - x'_j) s` into `x[t][..h/2]` and the
/// same for `y` (recomputed from the source: `y'_q = (1 - s1) y_q + s1 y_{q+h}`, from its
/// bytes, `E(ψ(y_q))`, or by lifting it again) into `x[t][h/2..]`, the entries of `x'` it has
/// just read; if `more`, returns level 3's sums.
pub(super) fn fold_x_only<V: VerifyField>(
    src: &dyn TripleSource<V>,
    x: &mut [Vec<V>; 2],
    h: usize,
    s1: V,
    s: V,
    more: bool,
) -> Sums<V> {
    let h2 = h / 2;
    let nh = h2.div_ceil(2);
    // Bytes where the source has them (a concatenation may have them for some ranges only;
    // [`YFold::fill`] falls back to the other forms).
    let by_bytes = V::lerp_bytes(&[], None, V::ZERO, &mut []);
    let ranges = job_ranges(nh, SUB);
    // Per buffer: A = [0, nh), B = [nh, h2) (x'' of the pairs), C = [h2, h2 + nh),
    // D = [h2 + nh, h) (their partners, then y'').
    let mut split = x.each_mut().map(|v| {
        let (lo, hi) = v[..h].split_at_mut(h2);
        let ab = split_pairs(lo, nh, h2, &ranges);
        let cd = split_pairs(hi, nh, h - h2, &ranges);
        ab.into_iter().zip(cd)
    });
    let jobs: Vec<_> = ranges
        .iter()
        .map(|r| {
            let [p1, p2] = split.each_mut();
            let ((a1, b1), (c1, d1)) = p1.next().unwrap_or_default();
            let ((a2, b2), (c2, d2)) = p2.next().unwrap_or_default();
            (r.clone(), [a1, a2], [b1, b2], [c1, c2], [d1, d2])
        })
        .collect();
    jobs.into_par_iter()
        .map(|(r, mut a, mut b, mut c, mut d)| {
            let z = || vec![V::ZERO; SUB];
            let mut f: [Vec<V>; 4] = [z(), z(), z(), z()];
            let (mut y_lo, mut y_hi) = ([z(), z()], [z(), z()]);
            let mut yf = YFold::new(src, h, s1, by_bytes);
            let mut acc = Sums::ZERO;
            let mut p = r.start;
            while p < r.end {
                let k = SUB.min(r.end - p);
                let kb = k.min(h2.saturating_sub(nh + p));
                let off = p - r.start;
                // Lower positions p.. (partners h2 + p..), then upper ones nh + p...
                for (lo, hi, q, n) in [(&mut a, &mut c, p, k), (&mut b, &mut d, nh + p, kb)] {
                    if n == 0 {
                        continue;
                    }
                    let ([l1, l2], [u1, u2]) = (&mut y_lo, &mut y_hi);
                    yf.fill(q, [&mut l1[..n], &mut l2[..n]]);
                    yf.fill(h2 + q, [&mut u1[..n], &mut u2[..n]]);
                    for t in 0..2 {
                        let (l, u) = (&mut lo[t][off..off + n], &mut hi[t][off..off + n]);
                        V::lerp_assign_slice(l, u, s);
                        V::lerp_slice(u, &y_lo[t][..n], &y_hi[t][..n], s);
                    }
                }
                if more {
                    let av = [
                        &a[0][off..off + k],
                        &a[1][off..off + k],
                        &c[0][off..off + k],
                        &c[1][off..off + k],
                    ];
                    let bv = [
                        &b[0][off..off + kb],
                        &b[1][off..off + kb],
                        &d[0][off..off + kb],
                        &d[1][off..off + kb],
                    ];
                    acc = acc.add(pair_sums(av, bv, &mut f));
                }
                p += k;
            }
            acc
        })
        .reduce(|| Sums::ZERO, Sums::add)
}

/// Level 1's folded `y`, `y'_q = y_q + (y_{q+h} - y_q) s1`, formed from the source for runs
/// of at most [`SUB`] positions: from its bytes ([`TripleSource::y_bytes`]), from its stored
/// `y` read in place ([`TripleSource::y_slices`]), or lifted ([`TripleSource::lift_y`]; zero
/// past the source). Holds the scratch it needs.
struct YFold<'a, V> {
    src: &'a dyn TripleSource<V>,
    h: usize,
    s1: V,
    by_bytes: bool,
    bytes: [[u8; SUB]; 4],
    lo: [Vec<V>; 2],
    hi: [Vec<V>; 2],
}

impl<'a, V: VerifyField> YFold<'a, V> {
    fn new(src: &'a dyn TripleSource<V>, h: usize, s1: V, by_bytes: bool) -> Self {
        let z = || vec![V::ZERO; SUB];
        YFold {
            src,
            h,
            s1,
            by_bytes,
            bytes: [[0u8; SUB]; 4],
            lo: [z(), z()],
            hi: [z(), z()],
        }
    }

    /// `y'` of the positions `q .. q + out[0].len()` into `out`.
    fn fill(&mut self, q: usize, out: [&mut [V]; 2]) {
        let (src, h, s1) = (self.src, self.h, self.s1);
        let n = out[0].len();
        let [o1, o2] = out;
        let in_place = || Some((src.y_bytes_in_place(q, n)?, src.y_bytes_in_place(q + h, n)?));
        let [b1, b2, b3, b4] = &mut self.bytes;
        // A concatenation may have bytes for some ranges only: then both must have them.
        let mut loaded = || {
            src.y_bytes(q, [&mut b1[..n], &mut b2[..n]])
                && src.y_bytes(q + h, [&mut b3[..n], &mut b4[..n]])
        };
        if let (true, Some(([a1, a2], [c1, c2]))) = (self.by_bytes, in_place()) {
            V::lerp_bytes(a1, Some(c1), s1, o1);
            V::lerp_bytes(a2, Some(c2), s1, o2);
        } else if self.by_bytes && loaded() {
            V::lerp_bytes(&b1[..n], Some(&b3[..n]), s1, o1);
            V::lerp_bytes(&b2[..n], Some(&b4[..n]), s1, o2);
        } else if let (Some(a), Some(b)) = (src.y_slices(q, n), src.y_slices(q + h, n)) {
            // Stored check-field `y`: read in place, not copied.
            V::lerp_slice(o1, a[0], b[0], s1);
            V::lerp_slice(o2, a[1], b[1], s1);
        } else {
            let ([a1, a2], [b1, b2]) = (&mut self.lo, &mut self.hi);
            src.lift_y(q, [&mut a1[..n], &mut a2[..n]]);
            src.lift_y(q + h, [&mut b1[..n], &mut b2[..n]]);
            V::lerp_slice(o1, &a1[..n], &b1[..n], s1);
            V::lerp_slice(o2, &a2[..n], &b2[..n], s1);
        }
    }
}

/// Level 1, pass B, after [`source_sums`] kept `X = c x` in `x` (length `2h`, `h` even, zero
/// past the source): folds it in place, `X'_j = X_j + (X_{j+h} - X_j) s` into `x[t][..h]`,
/// and writes the folded `y'` (formed from the source, [`YFold`]) into `x[t][h..2h]`, over
/// the `X` it has just read: the folded claim is then [`Folded::Two`] at `h`, in the memory
/// of level 1. If `more`, returns level 2's sums (pairs `(j, j + h/2)`) from each folded
/// sub-block while it is in cache. No coefficients are drawn and nothing is scaled again.
pub(super) fn fold_scaled<V: VerifyField>(
    src: &dyn TripleSource<V>,
    x: &mut [Vec<V>; 2],
    h: usize,
    s: V,
    more: bool,
) -> Sums<V> {
    let nh = h / 2;
    let ranges = job_ranges(nh, SUB);
    // Per vector and job: the lower pieces (`X` of positions `r` and `nh + r`, folded in
    // place) and the upper ones (their partners `h + r`, `h + nh + r`, replaced by `y'`).
    let [p1, p2] = x.each_mut().map(|v| {
        let (lo, hi) = v[..2 * h].split_at_mut(h);
        split_pairs(lo, nh, h, &ranges)
            .into_iter()
            .zip(split_pairs(hi, nh, h, &ranges))
    });
    let jobs: Vec<_> = ranges
        .iter()
        .cloned()
        .zip(p1.zip(p2))
        .map(|(r, (((a1, b1), (c1, d1)), ((a2, b2), (c2, d2))))| {
            (r, [[a1, a2], [c1, c2]], [[b1, b2], [d1, d2]])
        })
        .collect();
    jobs.into_par_iter()
        .map(|(r, mut a, mut b)| {
            let z = || vec![V::ZERO; SUB];
            let mut f: [Vec<V>; 4] = [z(), z(), z(), z()];
            let mut yf = YFold::new(src, h, s, false);
            let mut acc = Sums::ZERO;
            let mut p = r.start;
            while p < r.end {
                let k = SUB.min(r.end - p);
                let off = p - r.start;
                let w = off..off + k;
                // Positions p.. (partners p + h), then nh + p.. (partners nh + p + h).
                for ([lo, up], q) in [(&mut a, p), (&mut b, nh + p)] {
                    for (v, u) in lo.iter_mut().zip(up.iter()) {
                        V::lerp_assign_slice(&mut v[w.clone()], &u[w.clone()], s);
                    }
                    let [u1, u2] = up;
                    yf.fill(q, [&mut u1[w.clone()], &mut u2[w.clone()]]);
                }
                if more {
                    let [[ax1, ax2], [ay1, ay2]] = &a;
                    let [[bx1, bx2], [by1, by2]] = &b;
                    let av = [
                        &ax1[w.clone()],
                        &ax2[w.clone()],
                        &ay1[w.clone()],
                        &ay2[w.clone()],
                    ];
                    let bv = [
                        &bx1[w.clone()],
                        &bx2[w.clone()],
                        &by1[w.clone()],
                        &by2[w.clone()],
                    ];
                    acc = acc.add(pair_sums(av, bv, &mut f));
                }
                p += k;
            }
            acc
        })
        .reduce(|| Sums::ZERO, Sums::add)
}

/// The data nodes' part of `Q(s)` per component that a fold's parallel jobs form
/// (`Σ_J a_J v_J` for each sub-block's values `v`), added in place: sums in `GF(2^64)` are
/// XORs.
pub(super) struct DataSums([AtomicU64; 2]);

impl DataSums {
    pub(super) fn new() -> Self {
        DataSums([AtomicU64::new(0), AtomicU64::new(0)])
    }

    /// Adds `Σ_J a_J v_J` to component `t`.
    pub(super) fn add(&self, t: usize, v: &[Gf2p64], a: &[Gf2p64]) {
        self.0[t].fetch_xor(Gf2p64::inner_product(v, a).0, Ordering::Relaxed);
    }

    pub(super) fn into_values(self) -> [Gf2p64; 2] {
        self.0.map(|d| Gf2p64(d.into_inner()))
    }
}

/// The first halving after the k-ary first level of `blocks` blocks: pairs `(j, j + h)` with
/// `h = ⌈blocks/2⌉` rounded up to a multiple of [`SUB`] if there are more than `SUB` blocks, so
/// that the upper half starts a sub-block and the fold forms both halves of a pair in one job
/// (`wide::fold_sub_blocks`, which then sums the pairs while they are in cache). `h ≤ blocks`,
/// and `⌈log2 h⌉ = ⌈log2 ⌈blocks/2⌉⌉` (a power of two from `SUB` on is a multiple of `SUB`): the
/// level count, hence the communication, is that of `h = ⌈blocks/2⌉`.
pub(super) fn folded_half(blocks: usize) -> usize {
    let h = blocks.div_ceil(2);
    if blocks > SUB {
        h.next_multiple_of(SUB)
    } else {
        h
    }
}

/// The first halving: pairs `(j, j + h)` with `h = ⌈L/2⌉` rounded up to a multiple of
/// `min(COEFF_CHUNK, n/2)` (`n = nextpow2(L)`), so that jobs stay aligned with the coefficient
/// chunks, and `⌈log2 h⌉ = ⌈log2 L⌉ - 1`: the level count (hence the communication) is that of
/// padding to `n`, while the work is proportional to `L`, not `n`.
pub(super) fn first_half(total: usize, n: usize) -> usize {
    let q = (n / 2).clamp(1, COEFF_CHUNK);
    total.div_ceil(2).div_ceil(q) * q
}
