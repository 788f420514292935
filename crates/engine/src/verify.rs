//! Protocol 2 `Verify` of MAESTRO (PROTOCOLS.md §5.4): a batched check that a list of
//! replicated triples `([[x_k]], [[y_k]], [[z_k]])` satisfies `z_k = x_k y_k`, with
//! communication logarithmic in the batch size. Generic over the check field
//! ([`VerifyField`]: `GF(2^64)` for the binary protocols, `F_p` for the PRFs).
//!
//! # Protocol (`L` triples, `n = nextpow2(max(L, 1))`, `ℓ = log2 n`)
//!
//! 1. **Random linear combination.** A 16-byte seed is tossed (§5.2: random sharings opened
//!    with the hashed opening; `⌈127 / ⌊log2 |V|⌋⌉` coins: two in `GF(2^64)`, one in `F_p`
//!    for `p > 2^127`, more for a smaller run-time prime). Coefficients `c_k`
//!    are drawn *independently* from AES-128-CTR keyed by `SHA-256(seed ‖ chunk)` (per chunk
//!    of [`COEFF_CHUNK`] indices, so chunks are generated in parallel) — \[DEV\] §8 item 9
//!    instead of the powers `r^k` of one coin. Claim: `Σ_k (c_k x_k) y_k = z := Σ_k c_k z_k`
//!    (entries past the end count as zero).
//! 2. **Halving** (`ℓ` times): on a claim of length `len`, pair index `j < h` with `j + h`
//!    (\[DEV\]: halves instead of `2j, 2j+1`; any fixed pairing works, and the partner of `j`
//!    is zero if `j + h ≥ len`), where `h = ⌈len/2⌉` (at the first level rounded up to a
//!    multiple of `min(2^11, n/2)`); every level lowers `⌈log2 len⌉` by one, so there are
//!    exactly `ℓ` levels as with padding to `n`, but the work is proportional to `L`. Set
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
//! Level 1 streams over the recorded (unlifted) triples twice — once for `Σ c_k z_k`, `H(1)`,
//! `H(u)`, once (lifting only `x` and `y`) to fold — so the lifted `GF(2^64)` vectors exist
//! only from length `n/2` on; later levels fold those in place. Lifting goes through the
//! nibble tables of `triskele_field::embed` ([`Lift`]); `Σ c_k z_k` is an inner product (`z`
//! is never scaled); the values at the node `u` are a shift ([`VerifyField::times_node`]).
//! Inner products use [`Bulk::inner_product`] (PCLMULQDQ / VPCLMULQDQ with delayed
//! reduction), products [`Bulk::mul_slice`], on all threads of the current rayon pool, in
//! blocks of [`COEFF_CHUNK`] pairs. Throughput: `cargo bench -p triskele-engine --bench
//! verify`.
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
use triskele_field::{Bulk, Encode, Field, Fp, FpRt, Gf2p64, PrimeField, Random};
use triskele_share::{Prg, PrgKey, RssVec};

use crate::error::EngineError;
use crate::model::{Lift, SecurityModel, Triples};
use crate::party::{Party, ReshareTo};

/// A field in which [`verify`] runs.
pub trait VerifyField: Field + Encode + Random + Bulk {
    /// The third interpolation node besides 0 and 1 (`u` = `0x2` in `GF(2^64)`).
    fn node() -> Self;
    /// `⌊log2 |F|⌋`, the per-root soundness in bits (a method: the run-time prime field
    /// knows its size only at run time).
    fn log2_size() -> u32;
    /// `self · node()` (a shift and a conditional reduction in `GF(2^64)`).
    #[inline]
    fn times_node(self) -> Self {
        self * Self::node()
    }
}

impl VerifyField for Gf2p64 {
    fn node() -> Self {
        Gf2p64::U
    }
    fn log2_size() -> u32 {
        64
    }
    /// `x · u`: shift, and reduce `u^64 = u^4 + u^3 + u + 1` (`0x1b`) if bit 63 was set.
    #[inline]
    fn times_node(self) -> Self {
        Gf2p64((self.0 << 1) ^ (0x1b & 0u64.wrapping_sub(self.0 >> 63)))
    }
}

impl VerifyField for Fp {
    fn node() -> Self {
        Fp::from(2u64)
    }
    fn log2_size() -> u32 {
        127
    }
    /// `2x = x + x`.
    #[inline]
    fn times_node(self) -> Self {
        self + self
    }
}

/// The run-time prime field, for the modulus installed while [`verify`] runs. The node 2 is
/// distinct from 0 and 1 for every odd `p`; the soundness error `(2ℓ + 3)/p` (module
/// documentation) is only small for large `p`.
impl VerifyField for FpRt {
    fn node() -> Self {
        FpRt::from(2u64)
    }
    /// `2x = x + x`.
    #[inline]
    fn times_node(self) -> Self {
        self + self
    }
    fn log2_size() -> u32 {
        FpRt::modulus().ilog2()
    }
}

/// Which vectors of a chunk [`TripleSource::lift`] must fill.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Parts {
    /// `x`, `y` and `z`.
    Xyz,
    /// Only `x` and `y` (`z` is left as it is).
    Xy,
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
    /// the same length; positions at or beyond [`TripleSource::len`] are zero). With
    /// [`Parts::Xy`] the `z` vectors are not written.
    fn lift(&self, start: usize, parts: Parts, out: &mut LiftedTriples<V>);
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
        self.x.first.len()
    }

    /// The vectors a pass needs, in the order `x1, x2, y1, y2[, z1, z2]`.
    fn parts_mut(&mut self, parts: Parts) -> impl Iterator<Item = &mut Vec<V>> {
        let k = match parts {
            Parts::Xyz => 6,
            Parts::Xy => 4,
        };
        [
            &mut self.x.first,
            &mut self.x.second,
            &mut self.y.first,
            &mut self.y.second,
            &mut self.z.first,
            &mut self.z.second,
        ]
        .into_iter()
        .take(k)
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

    fn lift(&self, start: usize, parts: Parts, out: &mut LiftedTriples<F::Check>) {
        let n = out.len();
        let total = TripleSource::len(self);
        let end = (start + n).min(total);
        let lanes = F::LANES;
        let srcs = source_parts(self);
        let mut tmp = Vec::new();
        for (src, dst) in srcs.into_iter().zip(out.parts_mut(parts)) {
            if start >= end {
                dst.fill(F::Check::ZERO);
                continue;
            }
            dst[end - start..].fill(F::Check::ZERO);
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

    fn lift(&self, start: usize, parts: Parts, out: &mut LiftedTriples<V>) {
        let n = out.len();
        // Fast path: the range lies in one source.
        let mut base = 0;
        for s in &self.0 {
            let len = s.len();
            if start >= base && start + n <= base + len {
                s.lift(start - base, parts, out);
                return;
            }
            base += len;
        }
        for p in out.parts_mut(parts) {
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
                s.lift(a - base, parts, &mut part);
                for (dst, src) in out.parts_mut(parts).zip(part.parts_mut(parts)) {
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
    V::local_inner_product(a.0, a.1, b.0, b.1)
}

/// `out = lo + (hi - lo) · s` element-wise (`sbuf` holds `s` repeated).
fn lerp<V: VerifyField>(out: &mut [V], lo: &[V], hi: &[V], sbuf: &[V], tmp: &mut [V]) {
    for ((t, l), h) in tmp.iter_mut().zip(lo).zip(hi) {
        *t = *h - *l;
    }
    V::mul_slice(out, tmp, &sbuf[..out.len()]);
    V::add_assign_slice(out, lo);
}

/// `out = lo + (hi - lo) · u` element-wise for the node `u` (no general products).
fn lerp_node<V: VerifyField>(out: &mut [V], lo: &[V], hi: &[V]) {
    for ((o, l), h) in out.iter_mut().zip(lo).zip(hi) {
        *o = *l + (*h - *l).times_node();
    }
}

/// Per-thread buffers for level 1: the two lifted blocks, `x` times the coefficients, and the
/// coefficients.
struct Loader<V> {
    lifted: [LiftedTriples<V>; 2],
    scaled: [[Vec<V>; 2]; 2],
    c: Vec<V>,
    /// Folded levels: the upper block when it runs past the end (zero-extended).
    pad: [Vec<V>; 4],
}

impl<V: VerifyField> Loader<V> {
    fn new(level: &Level<'_, V>, m: usize) -> Self {
        // The folded levels read their vectors directly and need no buffers.
        let m = match level {
            Level::Source { .. } => m,
            Level::Folded { .. } => 0,
        };
        let z = || vec![V::ZERO; m];
        Loader {
            lifted: [LiftedTriples::zeros(m), LiftedTriples::zeros(m)],
            scaled: [[z(), z()], [z(), z()]],
            c: z(),
            pad: Default::default(),
        }
    }
}

/// A block of pairs: `[x1, x2, y1, y2]` of the lower half and of the upper half.
struct Pair<'s, V> {
    lo: [&'s [V]; 4],
    hi: [&'s [V]; 4],
}

fn xy_slices<'a, V>(x: &'a RssVec<V>, y: &'a RssVec<V>, at: usize, m: usize) -> [&'a [V]; 4] {
    [
        &x.first[at..at + m],
        &x.second[at..at + m],
        &y.first[at..at + m],
        &y.second[at..at + m],
    ]
}

/// Where a halving level reads its pairs from.
enum Level<'a, V> {
    /// Level 1: the recorded triples, lifted and combined with the step-1 coefficients.
    Source {
        src: &'a dyn TripleSource<V>,
        seed: [u8; 16],
    },
    /// Later levels: the folded vectors; the current claim is on their first `len` entries
    /// (entries from `len` on count as zero).
    Folded {
        x: &'a RssVec<V>,
        y: &'a RssVec<V>,
        len: usize,
    },
}

impl<V: VerifyField> Level<'_, V> {
    /// Pair block `[start, start + m)` (lower half) and its partner `[half + start, ..)` in the
    /// upper half (zero past the end), with x
    /// multiplied by the coefficients at level 1. With [`Parts::Xyz`] (level 1 only), adds
    /// this block's `Σ c_k z_k` (both components) to `zsum`; `z` itself is never scaled.
    fn load<'s>(
        &'s self,
        half: usize,
        start: usize,
        m: usize,
        parts: Parts,
        ld: &'s mut Loader<V>,
        zsum: &mut [V; 2],
    ) -> Pair<'s, V> {
        match self {
            Level::Source { src, seed } => {
                let total = src.len();
                let Loader {
                    lifted, scaled, c, ..
                } = ld;
                for ((t, xs), at) in lifted
                    .iter_mut()
                    .zip(scaled.iter_mut())
                    .zip([start, half + start])
                {
                    src.lift(at, parts, t);
                    if at >= total {
                        // Padding: everything is zero.
                        xs[0].fill(V::ZERO);
                        xs[1].fill(V::ZERO);
                        continue;
                    }
                    coefficients(seed, at, c);
                    V::mul_slice(&mut xs[0], &t.x.first, c);
                    V::mul_slice(&mut xs[1], &t.x.second, c);
                    if parts == Parts::Xyz {
                        zsum[0] += V::inner_product(c, &t.z.first);
                        zsum[1] += V::inner_product(c, &t.z.second);
                    }
                }
                let view = |t: &'s LiftedTriples<V>, xs: &'s [Vec<V>; 2]| {
                    [&xs[0][..], &xs[1][..], &t.y.first[..], &t.y.second[..]]
                };
                Pair {
                    lo: view(&ld.lifted[0], &ld.scaled[0]),
                    hi: view(&ld.lifted[1], &ld.scaled[1]),
                }
            }
            Level::Folded { x, y, len } => {
                let at = half + start;
                let avail = len.saturating_sub(at).min(m);
                if avail == m {
                    return Pair {
                        lo: xy_slices(x, y, start, m),
                        hi: xy_slices(x, y, at, m),
                    };
                }
                let srcs = xy_slices(x, y, at, avail);
                for (p, src) in ld.pad.iter_mut().zip(srcs) {
                    p.clear();
                    p.extend_from_slice(src);
                    p.resize(m, V::ZERO);
                }
                let [a, b, c, d] = &ld.pad;
                Pair {
                    lo: xy_slices(x, y, start, m),
                    hi: [a, b, c, d],
                }
            }
        }
    }
}

/// Work items per rayon job: enough jobs to balance the threads, few enough that the
/// per-job buffers are set up rarely.
fn min_len(blocks: usize) -> usize {
    blocks.div_ceil(4 * rayon::current_num_threads()).max(1)
}

/// Pass A of one level with pairs `(j, j + half)`, `j < half`: `(Σ c z (both components),
/// share of H(1), share of H(u))`.
fn level_sums<V: VerifyField>(level: &Level<'_, V>, half: usize) -> ([V; 2], V, V) {
    let m = WORK.min(half);
    let blocks = half.div_ceil(m);
    let zero = ([V::ZERO; 2], V::ZERO, V::ZERO);
    (0..blocks)
        .into_par_iter()
        .with_min_len(min_len(blocks))
        .map_init(
            || {
                (
                    Loader::<V>::new(level, m),
                    [(); 4].map(|_| vec![V::ZERO; m]),
                )
            },
            |(ld, f), b| {
                let mut zsum = [V::ZERO; 2];
                let size = m.min(half - b * m);
                let p = level.load(half, b * m, size, Parts::Xyz, ld, &mut zsum);
                let h1 = inner_share((p.hi[0], p.hi[1]), (p.hi[2], p.hi[3]));
                for ((o, l), h) in f.iter_mut().zip(p.lo).zip(p.hi) {
                    lerp_node(&mut o[..size], l, h);
                }
                let f = f.each_ref().map(|v| &v[..size]);
                let hu = inner_share((f[0], f[1]), (f[2], f[3]));
                (zsum, h1, hu)
            },
        )
        .reduce(
            || zero,
            |a, b| ([a.0[0] + b.0[0], a.0[1] + b.0[1]], a.1 + b.1, a.2 + b.2),
        )
}

/// Pass B of level 1: the folded vectors `f_j(s)`, `g_j(s)` (length `half`).
fn source_fold<V: VerifyField>(level: &Level<'_, V>, half: usize, s: V) -> (RssVec<V>, RssVec<V>) {
    let m = WORK.min(half);
    let sbuf = vec![s; m];
    let mut x = RssVec::zeros(half);
    let mut y = RssVec::zeros(half);
    x.first
        .par_chunks_mut(m)
        .zip(x.second.par_chunks_mut(m))
        .zip(y.first.par_chunks_mut(m).zip(y.second.par_chunks_mut(m)))
        .enumerate()
        .with_min_len(min_len(half / m))
        .for_each_init(
            || (Loader::<V>::new(level, m), vec![V::ZERO; m]),
            |(ld, tmp), (b, ((x1, x2), (y1, y2)))| {
                let mut unused = [V::ZERO; 2];
                let p = level.load(half, b * m, m, Parts::Xy, ld, &mut unused);
                for (k, o) in [x1, x2, y1, y2].into_iter().enumerate() {
                    lerp(o, p.lo[k], p.hi[k], &sbuf, tmp);
                }
            },
        );
    (x, y)
}

/// Pass B of a later level, in place: `v_j <- v_j + (v_{j+half} - v_j) · s` for `j < half`
/// in each of the four vectors, with `v_{j+half} = 0` from `len` on (the claim then lives on
/// the first `half` entries).
fn fold_in_place<V: VerifyField>(
    x: &mut RssVec<V>,
    y: &mut RssVec<V>,
    half: usize,
    len: usize,
    s: V,
) {
    let m = WORK.min(half);
    let sbuf = vec![s; m];
    for v in [&mut x.first, &mut x.second, &mut y.first, &mut y.second] {
        let (lo, rest) = v[..len].split_at_mut(half);
        let hi: &[V] = rest;
        lo.par_chunks_mut(m)
            .enumerate()
            .with_min_len(min_len(half.div_ceil(m)))
            .for_each_init(
                || vec![V::ZERO; m],
                |tmp, (b, l)| {
                    let tmp = &mut tmp[..l.len()];
                    let h = hi.get(b * m..).unwrap_or(&[]);
                    for (k, (t, a)) in tmp.iter_mut().zip(l.iter()).enumerate() {
                        *t = h.get(k).copied().unwrap_or(V::ZERO) - *a;
                    }
                    V::mul_add_slice(l, tmp, &sbuf[..l.len()]);
                },
            );
    }
}

/// The first halving: pairs `(j, j + h)` with `h = ⌈L/2⌉` rounded up to a multiple of
/// `min(WORK, n/2)` (`n = nextpow2(L)`), so that work items stay aligned with the coefficient
/// chunks, and `⌈log2 h⌉ = ⌈log2 L⌉ - 1`: the level count (hence the communication) is that of
/// padding to `n`, while the work is proportional to `L`, not `n`.
fn first_half(total: usize, n: usize) -> usize {
    let q = (n / 2).clamp(1, WORK);
    total.div_ceil(2).div_ceil(q) * q
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

/// Entropy the step-1 seed gets from its coins, in bits.
const SEED_BITS: u32 = 127;

/// Tosses the 16-byte step-1 seed: `⌈127 / ⌊log2 |V|⌋⌉` coins in one opening (2 in
/// `GF(2^64)`, 1 in `F_p` for `p > 2^127` as the default prime, 2 for `2^64 <= p < 2^127`,
/// more for smaller run-time primes, whose few coin values would otherwise let a cheater
/// prepare errors that pass for every possible seed).
fn toss_seed<V: VerifyField, M: SecurityModel>(
    party: &mut Party<M>,
) -> Result<[u8; 16], EngineError> {
    let k = SEED_BITS.div_ceil(V::log2_size().max(1)) as usize;
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
        src.lift(0, Parts::Xyz, &mut t);
        let mut c = [V::ZERO];
        coefficients(&seed, 0, &mut c);
        let c = c[0];
        folded = Some((scalar_times(c, &t.x), t.y));
        z = scalar_times(c, &t.z);
    }
    while len > 1 {
        let half = match &folded {
            None => first_half(src.len(), n),
            Some(_) => len.div_ceil(2),
        };
        let level = match &folded {
            None => Level::Source { src, seed },
            Some((x, y)) => Level::Folded { x, y, len },
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
        match &mut folded {
            None => folded = Some(source_fold(&Level::Source { src, seed }, half, s)),
            Some((x, y)) => fold_in_place(x, y, half, len, s),
        }
        z = interpolate([&h0, &h1, &hu], s);
        len = half;
    }
    let (x, y) = folded.unwrap_or_else(|| (RssVec::zeros(1), RssVec::zeros(1)));
    let first = |v: &RssVec<V>| RssVec {
        first: vec![v.first[0]],
        second: vec![v.second[0]],
    };
    check_triple(party, &first(&x), &first(&y), &z)
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
    let z_star = party.mul_covered(&x_star, y)?;
    let t = party.coins_in::<V>(1)?[0];
    let mut rho_sh = scalar_times(t, &x_star);
    rho_sh.add_assign(x);
    let rho = party.open(&rho_sh)?[0];
    // δ = ρ y - z - t z*
    let delta = sub(&sub(&scalar_times(rho, y), z), &scalar_times(t, &z_star));
    let sigma_sh = party.mul_covered(&delta, &tau)?;
    let sigma = party.open(&sigma_sh)?[0];
    Ok(sigma.is_zero())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn times_node_is_multiplication_by_the_node() {
        let mut x = 0x0123_4567_89ab_cdefu64;
        for _ in 0..1000 {
            let v = Gf2p64(x);
            assert_eq!(v.times_node(), v * Gf2p64::node());
            x = x.rotate_left(7) ^ x.wrapping_mul(0x9e37_79b9_7f4a_7c15);
        }
        assert_eq!(Gf2p64(1 << 63).times_node(), Gf2p64(0x1b));
        let f = Fp::from(12345u64);
        assert_eq!(f.times_node(), f * Fp::node());
    }

    fn three<T: Send>(f: impl Fn(Party<crate::Malicious>) -> T + Sync) -> [T; 3] {
        let nets = triskele_net::in_memory(&triskele_net::NetOptions::default());
        let f = &f;
        std::thread::scope(|s| {
            let hs: Vec<_> = nets
                .into_iter()
                .map(|n| s.spawn(move || f(Party::setup(n).expect("setup"))))
                .collect();
            let v: Vec<T> = hs.into_iter().map(|h| h.join().expect("join")).collect();
            v.try_into().ok().expect("three")
        })
    }

    /// Products over the run-time prime field are recorded by `mul` and pass the check for
    /// several moduli (also a tiny one, with its many seed coins); a planted error aborts.
    #[test]
    fn fp_rt_products_verify_under_each_modulus() {
        use rand::SeedableRng;
        for p in [
            5u128,
            (1 << 61) - 1,
            (1 << 64) - 59,
            Fp::MODULUS,
            u128::MAX - 158,
        ] {
            FpRt::with_modulus(p, || {
                assert_eq!(FpRt::log2_size(), p.ilog2());
                let res = three(|mut party| {
                    let x = party.random_rss::<FpRt>(300);
                    let y = party.random_rss::<FpRt>(300);
                    let z = party.mul(&x, &y)?;
                    assert_eq!(party.model().recorder().fp_rt.len(), 300);
                    party.verify_recorded()?;
                    let xo = party.open_output(&x)?;
                    let yo = party.open_output(&y)?;
                    let zo = party.open_output(&z)?;
                    Ok::<_, EngineError>((xo, yo, zo))
                });
                for r in res {
                    let (xo, yo, zo) = r.expect("honest run");
                    for k in 0..300 {
                        assert_eq!(zo[k], xo[k] * yo[k], "p = {p}");
                    }
                }
                if p < 1 << 60 {
                    return;
                }
                let mut rng = rand_chacha::ChaCha20Rng::seed_from_u64(p as u64);
                let x: Vec<FpRt> = (0..1000).map(|_| FpRt::random(&mut rng)).collect();
                let y: Vec<FpRt> = (0..1000).map(|_| FpRt::random(&mut rng)).collect();
                let mut z: Vec<FpRt> = x.iter().zip(&y).map(|(a, b)| *a * *b).collect();
                z[617] += FpRt::ONE;
                let (xs, ys, zs) = (
                    triskele_share::deal(&x, &mut rng),
                    triskele_share::deal(&y, &mut rng),
                    triskele_share::deal(&z, &mut rng),
                );
                let res = three(|mut party| {
                    let i = party.id().index();
                    party.model().record(&xs[i], &ys[i], &zs[i]);
                    party.verify_recorded()
                });
                for r in res {
                    assert!(matches!(r, Err(EngineError::Abort(_))), "p = {p}: {r:?}");
                }
            })
            .expect("a prime");
        }
    }
}
