//! Protocol 2 `Verify` of MAESTRO (PROTOCOLS.md §5.4): a batched check that a list of
//! replicated triples `([[x_k]], [[y_k]], [[z_k]])` satisfies `z_k = x_k y_k`, with
//! communication logarithmic in the batch size. Generic over the check field
//! ([`VerifyField`]: `GF(2^64)` for the binary protocols, `F_p` for the PRFs).
//!
//! # Protocol (`L` triples, `n = nextpow2(max(L, 1))`, `ℓ = log2 n`)
//!
//! 1. **Random linear combination.** A 16-byte seed is tossed (§5.2: random sharings opened
//!    with the hashed opening; two `GF(2^64)` coins, or one `F_p` coin). Coefficients `c_k`
//!    are drawn *independently* from AES-128-CTR keyed by `SHA-256(seed ‖ chunk)` (per chunk
//!    of [`COEFF_CHUNK`] indices, so chunks are generated in parallel) — [DEV] §8 item 9
//!    instead of the powers `r^k` of one coin. Claim: `Σ_k (c_k x_k) y_k = z := Σ_k c_k z_k`;
//!    vectors are padded with zeros to length `n`.
//! 2. **Halving** (`ℓ` times): with `h = n/2`, pair index `j` with `j + h` ([DEV]: halves
//!    instead of `2j, 2j+1`; any fixed pairing works) and set
//!    `f_j(X) = x_j + (x_{j+h} - x_j) X`, `g_j` likewise, `H(X) = Σ_j f_j(X) g_j(X)`
//!    (degree 2, `H(0) + H(1) = z`). Each party computes additive shares of `H(1)` and `H(u)`
//!    with local inner products (`u` = [`VerifyField::node`]) and reshares both (16 bytes to
//!    `P_{i-1}`); `[[H(0)]] = [[z]] - [[H(1)]]`. A coin `s` (8 bytes to `P_{i+1}`) folds the
//!    vectors to `f_j(s)`, `g_j(s)` and the claim to `H(s)` (Lagrange on `0, 1, u`).
//! 3. **CheckTriple** (Protocol 1) on the last triple: random `[[x*]]`, `[[τ]]`;
//!    `[[z*]] = [[x*]][[y]]` (8 B to prev); coin `t`; open `ρ = x + t x*`;
//!    `[[δ]] = ρ[[y]] - [[z]] - t[[z*]]`; `[[σ]] = [[δ]][[τ]]` (8 B to prev); open `σ`; the
//!    local result is `σ = 0`.
//! 4. The caller ends with a compare-view ([`crate::Party::compare_view_after`]) that carries
//!    the local result, so no party accepts unless every opening was consistent and `σ = 0`.
//!
//! Level 1 streams over the recorded (unlifted) triples twice — once for `z`, `H(1)`, `H(u)`,
//! once to fold — so the lifted `GF(2^64)` vectors exist only from length `n/2` on. Inner
//! products use [`Bulk::inner_product`] (PCLMULQDQ / VPCLMULQDQ with delayed reduction) on all
//! threads of the current rayon pool.
//!
//! # Communication (per party, `V = GF(2^64)`)
//!
//! To `P_{i+1}`: `16 + 8ℓ + 24` bytes (seed, `ℓ` coins `s`, coin `t`, `ρ`, `σ`); to `P_{i-1}`:
//! `16ℓ + 16`. Rounds: `2ℓ + 6` (plus the compare-view). With the 16-byte seed, the to-next
//! count is 8 bytes more than PROTOCOLS.md §6.4's single-coin formula `8 + 8ℓ + 24`.
//!
//! # Soundness
//!
//! Suppose some recorded triple is wrong: `z_k = x_k y_k + e_k` with `e ≠ 0` (the corrupt
//! party's deviations in multiplications are additive errors fixed before finalize starts).
//! Honest parties accept only if every step below fails to notice; `|V| = 2^64`:
//!
//! * Step 1: the claim `Σ c_k x_k y_k = Σ c_k z_k` is false unless `Σ c_k e_k = 0`. The seed is
//!   uniform and independent of `e` (the corrupt party knows only two of the three components
//!   of each coin sharing before the opening; an inconsistent opening is caught by the
//!   compare-view), and for independent uniform `c_k` the sum is uniform: probability
//!   `1/|V|`, plus the advantage of a distinguisher for AES-128-CTR (with the SHA-256 key
//!   derivation), which we treat as negligible. This bound does not depend on `L`.
//! * Each halving step: if `H(0) + H(1) ≠ z` for the true `H`, the reshared values define a
//!   degree-≤2 polynomial `H' ≠ H`; the claim stays false unless `H'(s) = H(s)` for the coin
//!   `s`, drawn after `H'` is fixed: probability `≤ 2/|V|` per level.
//! * CheckTriple: with `z = xy + e` (`e ≠ 0`) and `z* = x* y + e*` (`e*` fixed before `t`),
//!   `δ = e + t e*` vanishes for at most one `t`: `≤ 1/|V|`. Then `σ = δτ + e_σ` where the
//!   corrupt party knows neither `τ` (one component is hidden from it) nor, hence, `δτ`:
//!   `σ = 0` with probability `≤ 1/|V|`.
//!
//! Union bound: `ε ≤ (2ℓ + 3) / 2^64`. Up to `10^6` AES-256 blocks with every variant's
//! triple count (`L ≤ 3840 · 10^6 < 2^32`, `ℓ ≤ 32`): `ε ≤ 67 · 2^-64 < 2^-57`, well below the
//! required `2^-40` at every batch size (with powers of one coin step 1 alone would cost
//! `(L-1)/2^64`, about `2^-38` at `L = 2^26`).

use rayon::prelude::*;
use sha2::{Digest, Sha256};
use triskele_field::{Bulk, Encode, Field, Fp, Gf2p64, Random};
use triskele_share::{local_product, Prg, PrgKey, RssVec};

use crate::error::EngineError;
use crate::model::{Lift, SecurityModel, Triples};
use crate::party::{Party, ReshareTo};

/// A field in which [`verify`] runs.
pub trait VerifyField: Field + Encode + Random + Bulk {
    /// The third interpolation node besides 0 and 1 (`u` = `0x2` in `GF(2^64)`).
    fn node() -> Self;
    /// `⌊log2 |F|⌋`, the per-root soundness in bits.
    const LOG2_SIZE: u32;
}

impl VerifyField for Gf2p64 {
    fn node() -> Self {
        Gf2p64::U
    }
    const LOG2_SIZE: u32 = 64;
}

impl VerifyField for Fp {
    fn node() -> Self {
        Fp::from(2u64)
    }
    const LOG2_SIZE: u32 = 127;
}

/// Triples to verify, lifted to the check field on demand (so that recorded small-field
/// triples are never stored expanded).
pub trait TripleSource<V>: Sync {
    /// Number of check-field triples.
    fn len(&self) -> usize;
    /// True if there is nothing to check.
    fn is_empty(&self) -> bool {
        self.len() == 0
    }
    /// Writes triples `start .. start + out.len()` into `out` (all six vectors of `out` have
    /// the same length; positions at or beyond [`TripleSource::len`] are zero).
    fn lift(&self, start: usize, out: &mut LiftedTriples<V>);
}

/// A chunk of lifted triples.
#[derive(Debug, Clone, Default)]
pub struct LiftedTriples<V> {
    pub x: RssVec<V>,
    pub y: RssVec<V>,
    pub z: RssVec<V>,
}

impl<V: Field> LiftedTriples<V> {
    fn zeros(n: usize) -> Self {
        LiftedTriples {
            x: RssVec::zeros(n),
            y: RssVec::zeros(n),
            z: RssVec::zeros(n),
        }
    }

    fn len(&self) -> usize {
        self.z.first.len()
    }

    /// The six vectors, as `(source, destination)` pairs with a triple's components.
    fn parts_mut(&mut self) -> [&mut Vec<V>; 6] {
        [
            &mut self.x.first,
            &mut self.x.second,
            &mut self.y.first,
            &mut self.y.second,
            &mut self.z.first,
            &mut self.z.second,
        ]
    }
}

fn source_parts<F>(t: &Triples<F>) -> [&Vec<F>; 6] {
    [
        &t.x.first,
        &t.x.second,
        &t.y.first,
        &t.y.second,
        &t.z.first,
        &t.z.second,
    ]
}

impl<F: Lift> TripleSource<F::Check> for Triples<F> {
    fn len(&self) -> usize {
        F::LANES * Triples::len(self)
    }

    fn lift(&self, start: usize, out: &mut LiftedTriples<F::Check>) {
        let n = out.len();
        let total = TripleSource::len(self);
        let end = (start + n).min(total);
        let lanes = F::LANES;
        let srcs = source_parts(self);
        let mut tmp = Vec::new();
        for (src, dst) in srcs.into_iter().zip(out.parts_mut()) {
            dst.fill(F::Check::ZERO);
            if start >= end {
                continue;
            }
            if lanes == 1 {
                F::lift_slice(&src[start..end], &mut dst[..end - start]);
            } else {
                let (e0, e1) = (start / lanes, end.div_ceil(lanes));
                tmp.clear();
                tmp.resize((e1 - e0) * lanes, F::Check::ZERO);
                F::lift_slice(&src[e0..e1], &mut tmp);
                let off = start - e0 * lanes;
                dst[..end - start].copy_from_slice(&tmp[off..off + end - start]);
            }
        }
    }
}

/// Several sources, one after the other.
pub struct Concat<'a, V>(pub Vec<&'a dyn TripleSource<V>>);

impl<V> core::fmt::Debug for Concat<'_, V> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("Concat")
            .field("sources", &self.0.len())
            .finish()
    }
}

impl<V: VerifyField> TripleSource<V> for Concat<'_, V> {
    fn len(&self) -> usize {
        self.0.iter().map(|s| s.len()).sum()
    }

    fn lift(&self, start: usize, out: &mut LiftedTriples<V>) {
        let n = out.len();
        // Fast path: the range lies in one source.
        let mut base = 0;
        for s in &self.0 {
            let len = s.len();
            if start >= base && start + n <= base + len {
                s.lift(start - base, out);
                return;
            }
            base += len;
        }
        for p in out.parts_mut() {
            p.fill(V::ZERO);
        }
        let mut base = 0;
        let mut part = LiftedTriples::default();
        for s in &self.0 {
            let len = s.len();
            let (a, b) = (start.max(base), (start + n).min(base + len));
            if a < b {
                if part.len() != b - a {
                    part = LiftedTriples::zeros(b - a);
                }
                s.lift(a - base, &mut part);
                for (dst, src) in out.parts_mut().into_iter().zip(part.parts_mut()) {
                    dst[a - start..b - start].copy_from_slice(src);
                }
            }
            base += len;
        }
    }
}

/// Step-1 coefficients are generated per chunk of this many indices (each chunk from its own
/// AES-CTR key, so chunks are independent and parallel).
pub const COEFF_CHUNK: usize = 1 << 11;

/// Elements per work item in the streamed and materialised levels (a power of two dividing
/// [`COEFF_CHUNK`], so a work item never needs to skip coefficients).
const WORK: usize = COEFF_CHUNK;

/// Step-1 coefficients `c_{start..start+out.len()}` (the range must lie in one
/// [`COEFF_CHUNK`]).
fn coefficients<V: VerifyField>(seed: &[u8; 16], start: usize, out: &mut [V]) {
    let chunk = start / COEFF_CHUNK;
    let digest = Sha256::new()
        .chain_update(b"triskele verify coefficients")
        .chain_update(seed)
        .chain_update((chunk as u64).to_le_bytes())
        .finalize();
    let mut key = [0u8; 16];
    key.copy_from_slice(&digest[..16]);
    let mut prg = Prg::new(&PrgKey(key));
    let off = start % COEFF_CHUNK;
    if off > 0 {
        let mut skip = vec![V::ZERO; off];
        prg.fill(&mut skip);
    }
    prg.fill(out);
}

/// `[[a]] · [[b]]` summed: this party's additive share of `Σ_k a_k b_k`.
fn inner_share<V: VerifyField>(a: (&[V], &[V]), b: (&[V], &[V])) -> V {
    V::inner_product(a.0, b.0) + V::inner_product(a.0, b.1) + V::inner_product(a.1, b.0)
}

/// `out = lo + (hi - lo) · s` element-wise (`sbuf` holds `s` repeated).
fn lerp<V: VerifyField>(out: &mut [V], lo: &[V], hi: &[V], sbuf: &[V], tmp: &mut [V]) {
    for ((t, l), h) in tmp.iter_mut().zip(lo).zip(hi) {
        *t = *h - *l;
    }
    V::mul_slice(out, tmp, &sbuf[..out.len()]);
    V::add_assign_slice(out, lo);
}

/// Per-thread scratch of the halving passes.
struct Scratch<V> {
    lo: LiftedTriples<V>,
    hi: LiftedTriples<V>,
    c: Vec<V>,
    f: [Vec<V>; 2],
    g: [Vec<V>; 2],
    tmp: Vec<V>,
}

impl<V: VerifyField> Scratch<V> {
    fn new(m: usize) -> Self {
        let z = || vec![V::ZERO; m];
        Scratch {
            lo: LiftedTriples::zeros(m),
            hi: LiftedTriples::zeros(m),
            c: z(),
            f: [z(), z()],
            g: [z(), z()],
            tmp: z(),
        }
    }
}

/// Multiplies both components of `x` by the coefficients.
fn scale<V: VerifyField>(x: &mut RssVec<V>, c: &[V], tmp: &mut [V]) {
    for comp in [&mut x.first, &mut x.second] {
        tmp.copy_from_slice(comp);
        V::mul_slice(comp, tmp, c);
    }
}

/// Where a halving level reads its pairs from.
enum Level<'a, V> {
    /// Level 1: the recorded triples, lifted and combined with the step-1 coefficients.
    Source {
        src: &'a dyn TripleSource<V>,
        seed: [u8; 16],
    },
    /// Later levels: the folded vectors.
    Folded { x: &'a RssVec<V>, y: &'a RssVec<V> },
}

impl<V: VerifyField> Level<'_, V> {
    /// Loads pair block `[start, start + m)` (lower half) and its partner in the upper half
    /// into `s.lo`, `s.hi` (x already multiplied by the coefficients at level 1).
    fn load(&self, half: usize, start: usize, s: &mut Scratch<V>) {
        match self {
            Level::Source { src, seed } => {
                for (t, at) in [(&mut s.lo, start), (&mut s.hi, half + start)] {
                    src.lift(at, t);
                    coefficients(seed, at, &mut s.c);
                    scale(&mut t.x, &s.c, &mut s.tmp);
                    // z is only needed as Σ c_k z_k.
                    scale(&mut t.z, &s.c, &mut s.tmp);
                }
            }
            Level::Folded { x, y } => {
                let m = s.lo.len();
                for (t, at) in [(&mut s.lo, start), (&mut s.hi, half + start)] {
                    t.x.first.copy_from_slice(&x.first[at..at + m]);
                    t.x.second.copy_from_slice(&x.second[at..at + m]);
                    t.y.first.copy_from_slice(&y.first[at..at + m]);
                    t.y.second.copy_from_slice(&y.second[at..at + m]);
                }
            }
        }
    }
}

/// Pass A of one level: `(Σ c z (both components), share of H(1), share of H(u))`.
fn level_sums<V: VerifyField>(level: &Level<'_, V>, half: usize) -> ([V; 2], V, V) {
    let m = WORK.min(half);
    let u = V::node();
    let ubuf = vec![u; m];
    let zero = ([V::ZERO; 2], V::ZERO, V::ZERO);
    (0..half / m)
        .into_par_iter()
        .map_init(
            || Scratch::<V>::new(m),
            |s, b| {
                level.load(half, b * m, s);
                let mut zsum = [V::ZERO; 2];
                if let Level::Source { .. } = level {
                    for t in [&s.lo, &s.hi] {
                        zsum[0] += t.z.first.iter().copied().fold(V::ZERO, |a, v| a + v);
                        zsum[1] += t.z.second.iter().copied().fold(V::ZERO, |a, v| a + v);
                    }
                }
                let h1 = inner_share(
                    (&s.hi.x.first, &s.hi.x.second),
                    (&s.hi.y.first, &s.hi.y.second),
                );
                let Scratch {
                    lo, hi, f, g, tmp, ..
                } = s;
                lerp(&mut f[0], &lo.x.first, &hi.x.first, &ubuf, tmp);
                lerp(&mut f[1], &lo.x.second, &hi.x.second, &ubuf, tmp);
                lerp(&mut g[0], &lo.y.first, &hi.y.first, &ubuf, tmp);
                lerp(&mut g[1], &lo.y.second, &hi.y.second, &ubuf, tmp);
                let hu = inner_share((&f[0], &f[1]), (&g[0], &g[1]));
                (zsum, h1, hu)
            },
        )
        .reduce(
            || zero,
            |a, b| ([a.0[0] + b.0[0], a.0[1] + b.0[1]], a.1 + b.1, a.2 + b.2),
        )
}

/// Pass B of one level: the folded vectors `f_j(s)`, `g_j(s)` (length `half`).
fn level_fold<V: VerifyField>(level: &Level<'_, V>, half: usize, s: V) -> (RssVec<V>, RssVec<V>) {
    let m = WORK.min(half);
    let sbuf = vec![s; m];
    let mut x = RssVec::zeros(half);
    let mut y = RssVec::zeros(half);
    x.first
        .par_chunks_mut(m)
        .zip(x.second.par_chunks_mut(m))
        .zip(y.first.par_chunks_mut(m).zip(y.second.par_chunks_mut(m)))
        .enumerate()
        .for_each_init(
            || Scratch::<V>::new(m),
            |sc, (b, ((x1, x2), (y1, y2)))| {
                level.load(half, b * m, sc);
                let Scratch { lo, hi, tmp, .. } = sc;
                lerp(x1, &lo.x.first, &hi.x.first, &sbuf, tmp);
                lerp(x2, &lo.x.second, &hi.x.second, &sbuf, tmp);
                lerp(y1, &lo.y.first, &hi.y.first, &sbuf, tmp);
                lerp(y2, &lo.y.second, &hi.y.second, &sbuf, tmp);
            },
        );
    (x, y)
}

/// `[[H(s)]]` from `[[H(0)]]`, `[[H(1)]]`, `[[H(u)]]` (Lagrange on the nodes `0, 1, u`).
fn interpolate<V: VerifyField>(h: [&RssVec<V>; 3], s: V) -> RssVec<V> {
    let u = V::node();
    let one = V::ONE;
    let l0 = (s - one) * (s - u) * u.inverse();
    let l1 = s * (s - u) * (one - u).inverse();
    let lu = s * (s - one) * (u * (u - one)).inverse();
    let comb = |k: usize, second: bool| {
        let pick = |r: &RssVec<V>| if second { r.second[k] } else { r.first[k] };
        l0 * pick(h[0]) + l1 * pick(h[1]) + lu * pick(h[2])
    };
    RssVec {
        first: vec![comb(0, false)],
        second: vec![comb(0, true)],
    }
}

fn scalar_times<V: VerifyField>(c: V, x: &RssVec<V>) -> RssVec<V> {
    RssVec {
        first: x.first.iter().map(|v| c * *v).collect(),
        second: x.second.iter().map(|v| c * *v).collect(),
    }
}

fn sub<V: VerifyField>(a: &RssVec<V>, b: &RssVec<V>) -> RssVec<V> {
    let f = |p: &[V], q: &[V]| p.iter().zip(q).map(|(x, y)| *x - *y).collect();
    RssVec {
        first: f(&a.first, &b.first),
        second: f(&a.second, &b.second),
    }
}

/// A multiplication that is not recorded (the check's own products).
fn mul_plain<V: VerifyField, M: SecurityModel>(
    party: &mut Party<M>,
    x: &RssVec<V>,
    y: &RssVec<V>,
) -> Result<RssVec<V>, EngineError> {
    let mut t = vec![V::ZERO; x.len()];
    local_product(&mut t, x, y);
    party.additive_to_rss(t, ReshareTo::Prev)
}

/// Tosses the 16-byte step-1 seed: `⌈16 / |V|⌉` coins in one opening.
fn toss_seed<V: VerifyField, M: SecurityModel>(
    party: &mut Party<M>,
) -> Result<[u8; 16], EngineError> {
    let k = 16usize.div_ceil(V::encoded_len(1).max(1));
    let coins = party.coins_in::<V>(k)?;
    let digest = Sha256::new()
        .chain_update(b"triskele verify seed")
        .chain_update(V::encode_to_vec(&coins))
        .finalize();
    let mut seed = [0u8; 16];
    seed.copy_from_slice(&digest[..16]);
    Ok(seed)
}

/// The number of halving levels for `len` triples: `⌈log2 max(len, 1)⌉`.
pub fn levels(len: usize) -> u32 {
    len.max(1).next_power_of_two().trailing_zeros()
}

/// Runs Protocol 2 on `src` (see the module documentation). Returns this party's local
/// result (`σ = 0`); the caller must follow with a compare-view that carries it
/// ([`crate::Party::compare_view_after`]) before accepting. Errors are network errors and
/// aborts notified by a peer; a failed check is `Ok(false)`, so that the party still takes
/// part in the compare-view and its neighbours abort too.
pub fn verify<V: VerifyField, M: SecurityModel>(
    party: &mut Party<M>,
    src: &dyn TripleSource<V>,
) -> Result<bool, EngineError> {
    let n = src.len().max(1).next_power_of_two();
    let seed = toss_seed::<V, M>(party)?;

    // Current claim: Σ x'_k y'_k = z over vectors of length `len`.
    let mut folded: Option<(RssVec<V>, RssVec<V>)> = None;
    let mut z: RssVec<V> = RssVec::zeros(1);
    let mut len = n;
    if n == 1 {
        // No halving: the single (padded) triple, combined with its coefficient.
        let mut t = LiftedTriples::zeros(1);
        src.lift(0, &mut t);
        let mut c = [V::ZERO];
        coefficients(&seed, 0, &mut c);
        let mut tmp = [V::ZERO];
        scale(&mut t.x, &c, &mut tmp);
        scale(&mut t.z, &c, &mut tmp);
        folded = Some((t.x, t.y));
        z = t.z;
    }
    while len > 1 {
        let half = len / 2;
        let level = match &folded {
            None => Level::Source { src, seed },
            Some((x, y)) => Level::Folded { x, y },
        };
        let (zsum, h1, hu) = level_sums(&level, half);
        if folded.is_none() {
            z = RssVec {
                first: vec![zsum[0]],
                second: vec![zsum[1]],
            };
        }
        let h = party.additive_to_rss(vec![h1, hu], ReshareTo::Prev)?;
        let (h1, hu) = (
            RssVec {
                first: vec![h.first[0]],
                second: vec![h.second[0]],
            },
            RssVec {
                first: vec![h.first[1]],
                second: vec![h.second[1]],
            },
        );
        let h0 = sub(&z, &h1);
        let s = party.coins_in::<V>(1)?[0];
        let next = level_fold(&level, half, s);
        z = interpolate([&h0, &h1, &hu], s);
        folded = Some(next);
        len = half;
    }
    let (x, y) = folded.unwrap_or_else(|| (RssVec::zeros(1), RssVec::zeros(1)));
    check_triple(party, &x, &y, &z)
}

/// Protocol 1 `CheckTriple` with the randomisation by `τ` (PROTOCOLS.md §5.4 step 3).
fn check_triple<V: VerifyField, M: SecurityModel>(
    party: &mut Party<M>,
    x: &RssVec<V>,
    y: &RssVec<V>,
    z: &RssVec<V>,
) -> Result<bool, EngineError> {
    let x_star = party.random_rss::<V>(1);
    let tau = party.random_rss::<V>(1);
    let z_star = mul_plain(party, &x_star, y)?;
    let t = party.coins_in::<V>(1)?[0];
    let mut rho_sh = scalar_times(t, &x_star);
    rho_sh.add_assign(x);
    let rho = party.open(&rho_sh)?[0];
    // δ = ρ y - z - t z*
    let delta = sub(&sub(&scalar_times(rho, y), z), &scalar_times(t, &z_star));
    let sigma_sh = mul_plain(party, &delta, &tau)?;
    let sigma = party.open(&sigma_sh)?[0];
    Ok(sigma.is_zero())
}
