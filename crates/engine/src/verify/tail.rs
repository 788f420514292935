//! The last levels of `Verify` after a k-ary first level: a claim of at most [`MAX_LEN`]
//! entries takes steps of blocks of eight (`k = 8`) instead of halvings, three levels in one
//! step of two rounds.
//!
//! # The step
//!
//! The claim `Σ_j x_j y_j = z` on `n = 2^r` entries (padded with zeros from its length on,
//! which adds nothing to the sum) is cut into `B = n/k` blocks of `k = 2^min(r, 3)` entries,
//! entry `m` of block `J` at `m B + J`. With the nodes `α_0 = 0`, `α_1 = 1`, `α_i = u^(i-1)`
//! (`u` = [`VerifyField::node`]; distinct in `GF(2^64)` and in the prime fields), `F_J` is the
//! polynomial of degree `k - 1` with `F_J(α_m) = x_{J,m}` (`m < k`), `G_J` the same for `y`,
//! and `P = Σ_J F_J G_J` (degree `2k - 2`), so that `Σ_{m<k} P(α_m) = z`. Each party computes
//! its additive shares of `P` at the nodes `α_1 .. α_{2k-2}` (local inner products of the
//! values of `F_J` and `G_J` there, which are combinations of the entries by the Lagrange
//! coefficients of the data nodes) and reshares them (`2k - 2` values to `P_{i-1}`);
//! `[[P(α_0)]] = [[z]] - Σ_{0<m<k} [[P(α_m)]]`. A coin `s` folds the vectors to `F_J(s)`,
//! `G_J(s)` and the claim to `P(s)` (Lagrange on the `2k - 1` nodes). With `k = 2` this is
//! the halving of the module documentation (nodes `0, 1, u`).
//!
//! # Cost and soundness
//!
//! A step of eight sends 14 values (112 bytes in `GF(2^64)`) to `P_{i-1}` and one coin to
//! `P_{i+1}` in two rounds, where three halvings send 48 bytes and three coins in six rounds.
//! A claim of `2^12` entries takes four steps of eight instead of twelve halvings: sixteen
//! rounds fewer (on loopback about a millisecond of a finalize, on a network sixteen round
//! trips), for 400 bytes more to `P_{i-1}` and 64 fewer to `P_{i+1}`. The work (the values at
//! the extra nodes) is about `28 n` products per step, for `n ≤ 2^12` a few hundred
//! microseconds at most. If the claim is false, the reshared values define a polynomial of
//! degree `2k - 2` other than `P` (they are fixed before `s`, and at `α_0` the claim forces a
//! value other than `P(α_0)`), so the new claim holds only if `s` is one of its at most `2k -
//! 2` points of agreement with `P`: `≤ 14/|V|` per step of eight, against `6/|V|` for three
//! halvings.
//!
//! Only claims that follow a k-ary first level take it (runs of at least
//! [`super::OCTAL_MIN_LEN`] triples), so the finalize of one block (the ARCHITECTURE.md
//! table) is unchanged.

use triskele_share::RssVec;

use super::fold::inner_share;
use super::{lagrange_slice, levels, single, VerifyField};
use crate::error::EngineError;
use crate::model::SecurityModel;
use crate::party::{Party, ReshareTo};

/// The longest claim that takes the steps of this module: `2^12` entries (twelve halvings).
pub(super) const MAX_LEN: usize = 1 << MAX_LEVELS;

/// `log2` of [`MAX_LEN`].
pub(super) const MAX_LEVELS: u32 = 12;

/// The largest block (the arity of a step).
const K: usize = 8;

/// The arities of the steps on a claim of `len` entries: `r = ⌈log2 len⌉` (`len` padded to
/// `2^r`) in steps of three levels (`k = 8`) and a last step of `2^(r mod 3)` if `r` is not a
/// multiple of three.
pub(super) fn arities(len: usize) -> Vec<usize> {
    let mut r = levels(len);
    let mut out = Vec::new();
    while r > 0 {
        let t = r.min(K.ilog2());
        out.push(1 << t);
        r -= t;
    }
    out
}

/// The levels after a k-ary first level on a claim of `2^l` entries in `GF(2^64)`: `(steps,
/// bytes to P_{i-1})`, one coin to `P_{i+1}` per step. Halvings (two values reshared, 16
/// bytes) while more than twelve levels are left, then steps of three levels (blocks of
/// eight) and one of the rest (`2k - 2` values each: 112 bytes for a step of eight).
pub fn later_levels(l: u32) -> (u64, u64) {
    let halvings = l.saturating_sub(MAX_LEVELS);
    let steps = arities(1 << (l - halvings));
    let bytes = steps.iter().map(|k| 8 * (2 * *k as u64 - 2)).sum::<u64>();
    (
        u64::from(halvings) + steps.len() as u64,
        16 * u64::from(halvings) + bytes,
    )
}

/// The nodes `α_0 .. α_{2k-2}` of a step of `k` (module docs).
fn nodes<V: VerifyField>(k: usize) -> Vec<V> {
    let mut out = Vec::with_capacity(2 * k - 1);
    out.push(V::ZERO);
    let mut p = V::ONE;
    for _ in 1..2 * k - 1 {
        out.push(p);
        p = p.times_node();
    }
    out
}

/// `Σ_i c_i [[v_i]]` for single-element sharings (`c` and `v` zipped).
pub(super) fn combine<'a, V: VerifyField>(
    c: impl IntoIterator<Item = V>,
    v: impl IntoIterator<Item = &'a RssVec<V>>,
) -> RssVec<V> {
    let first = |x: &[V]| x.first().copied().unwrap_or(V::ZERO);
    let (a, b) = c
        .into_iter()
        .zip(v)
        .fold((V::ZERO, V::ZERO), |(a, b), (c, r)| {
            (a + c * first(&r.first), b + c * first(&r.second))
        });
    single(a, b)
}

/// `Σ_m c_m row_m` for the `c.len()` rows of `b` entries of `w`, by the field's bulk products
/// (`lerp_slice` from zero is a product by the constant; `scale_add_slice` is a scalar loop).
fn rows_combined<V: VerifyField>(w: &[V], b: usize, c: &[V]) -> Vec<V> {
    let zero = V::zeroed_vec(b);
    let mut o = V::zeroed_vec(b);
    let mut t = V::zeroed_vec(b);
    for (row, c) in w.chunks_exact(b).zip(c) {
        V::lerp_slice(&mut t, &zero, row, *c);
        V::add_assign_slice(&mut o, &t);
    }
    o
}

/// One claim of the steps: `[x_1, x_2, y_1, y_2]` (padded to `2^r`), `z`, and its arities.
struct Claim<V> {
    v: [Vec<V>; 4],
    z: RssVec<V>,
    ks: Vec<usize>,
}

/// This party's shares of `P` at the nodes `α_1 .. α_{2k-2}` for a step of `k` on `v`: at the
/// data nodes the local inner products of the rows, at the extra nodes of the rows combined
/// by the Lagrange coefficients of the data nodes.
fn step_values<V: VerifyField>(v: &[Vec<V>; 4], k: usize, alpha: &[V]) -> Vec<V> {
    let b = v[0].len() / k;
    // The data nodes read the rows in place.
    let data = (1..k).map(|m| {
        let row = |t: usize| &v[t][m * b..(m + 1) * b];
        inner_share([row(0), row(1)], [row(2), row(3)])
    });
    let extra = alpha[k..].iter().map(|a| {
        let c = lagrange_slice(&alpha[..k], *a);
        let e = v.each_ref().map(|w| rows_combined(w, b, &c));
        inner_share([&e[0], &e[1]], [&e[2], &e[3]])
    });
    data.chain(extra).collect()
}

/// The steps of the module docs on the claims `Σ_j x_j y_j = z`, each given by `v = [x_1,
/// x_2, y_1, y_2]` (this party's components, equal lengths) and `z`: all claims side by side,
/// one reshare and one opening of coins per round for all that still have a step. Returns
/// each claim's last triple `[[[x]], [[y]], [[z]]]` for `CheckTriple`, in order.
pub(super) fn run_all<V: VerifyField, M: SecurityModel>(
    party: &mut Party<M>,
    claims: Vec<([Vec<V>; 4], RssVec<V>)>,
) -> Result<Vec<[RssVec<V>; 3]>, EngineError> {
    let mut claims: Vec<Claim<V>> = claims
        .into_iter()
        .map(|(v, z)| {
            let len = v[0].len();
            let ks = arities(len);
            let v = v.map(|mut w| {
                w.resize(1 << levels(len), V::ZERO);
                w
            });
            Claim { v, z, ks }
        })
        .collect();
    for step in 0.. {
        let active: Vec<usize> = (0..claims.len())
            .filter(|&c| step < claims[c].ks.len())
            .collect();
        if active.is_empty() {
            break;
        }
        let mut values = Vec::new();
        for &c in &active {
            let k = claims[c].ks[step];
            values.extend(step_values(&claims[c].v, k, &nodes::<V>(k)));
        }
        let q = party.additive_to_rss(values, ReshareTo::Prev)?;
        let s = party.coins_in::<V>(active.len())?;
        let mut reshared = q.first.iter().zip(&q.second).map(|(a, b)| single(*a, *b));
        for (&c, s) in active.iter().zip(s) {
            let claim = &mut claims[c];
            let k = claim.ks[step];
            let alpha = nodes::<V>(k);
            let mine: Vec<RssVec<V>> = reshared.by_ref().take(2 * k - 2).collect();
            // [[P(α_0)]] = [[z]] - Σ_{0<m<k} [[P(α_m)]].
            let rest = combine(core::iter::repeat_n(V::ONE, k - 1), &mine);
            let p0 = combine([V::ONE, V::ZERO - V::ONE], [&claim.z, &rest]);
            claim.z = combine(
                lagrange_slice(&alpha, s),
                core::iter::once(&p0).chain(&mine),
            );
            let ell = lagrange_slice(&alpha[..k], s);
            let b = claim.v[0].len() / k;
            claim.v = claim.v.each_ref().map(|w| rows_combined(w, b, &ell));
        }
    }
    Ok(claims
        .into_iter()
        .map(|c| {
            let one = |t: usize| c.v[t].first().copied().unwrap_or(V::ZERO);
            [single(one(0), one(1)), single(one(2), one(3)), c.z]
        })
        .collect())
}
