//! `mal-chida`: the Chida et al. (WAHC'18) inversion chain with active security from verified
//! multiplication triples: the bucket cut-and-choose of Furukawa et al. (Eurocrypt'17,
//! ePrint 2016/944) with the bucketing of Araki et al. (IEEE S&P'17), and a post-sacrifice of
//! every online product (PROTOCOLS.md §5.3, §5.8; online chain §4.1).
//!
//! # Protocol
//!
//! **Preprocessing** for `n` inversions produces `T = 4n` verified `GF(2^8)` triples
//! (PROTOCOLS.md §5.3, steps 1–7), in one run of the steps below for up to `2^22` triples and
//! otherwise in several runs ([`plan_runs`], \[DEV\]) of at most `2^L` triples, `L = 22`
//! unless the union bound of the runs needs larger ones (`L = 23` at `10^6` AES-256 blocks):
//! full runs of `2^L` and the rest split by its leading bit, or balanced runs where that
//! generates fewer triples, each run producing its share of the triples with steps 1–7 on its
//! own. AES-128 at 100,000 blocks: 15 runs of `2^22` triples (`N = 2^22`, `B = 3`), one of
//! `2^20` and one of `36,864` (`N = 2^16`, `B = 4`): 4.6% fewer generated triples than one
//! run with `N = 2^26`, and a third of the memory.
//!
//! 1. Parameters ([`BucketParams::for_triples`]): `N = max(2^10, nextpow2(T))` buckets of size
//!    `B` (5 for `log2 N ≤ 12`, 4 for `13 ≤ log2 N ≤ 18`, 3 from `log2 N = 19` on), `C = B`
//!    opened triples, `M = N·B + C` generated triples.
//! 2. `M` triples `([[a]], [[b]], [[a]]·[[b]])` with random sharings and the plain
//!    multiplication ([`Party::mul_covered`], not recorded), one message to `P_{i-1}`.
//! 3. A global coin (§1.2): every party commits to a 16-byte seed part (48 bytes to both
//!    neighbours), then opens it (16 bytes to both); received messages go into the views; a
//!    compare-view carries the local check of both commitments. The XOR of the three parts
//!    keys an AES-128-CTR stream ([`Prg`]) that drives an exactly uniform shuffle of all `M`
//!    triples (`Shuffle`: Sanders' two-level shuffle, a uniform bucket label per triple,
//!    then a Fisher–Yates shuffle of every bucket of about `2^15` triples; bounded draws by
//!    Lemire's method with rejection). The triples are packed 8 bytes each as they are
//!    scattered into their buckets, then unpacked back into the generation buffers. At
//!    100,000 AES-128 blocks this took the preprocessing from 10.5-11.4 s to 7.8-8.2 s
//!    (one Fisher–Yates pass over each run's 100 MB of packed triples was bound by memory
//!    latency; alternating runs of `triskele bench --local --simd 100000 --threads 2
//!    mal-chida`). The unpacking gathers 256 triples at a time per component in a stack buffer
//!    and copies them out in runs: storing one byte at a time into six share vectors took up
//!    to a third of the preprocessing's CPU samples in some runs (30,000 blocks: preprocessing
//!    2.57-2.99 s before, 2.06-2.22 s after, three alternating pairs). On a CPU with
//!    AVX-512 VBMI it takes 64 triples at a time in vector registers
//!    (`triskele_field::backend::split_word_bytes`: a byte permutation per eight words, a
//!    transpose of 8-byte lanes, one 64-byte store per component; 10,000 blocks: preprocessing
//!    0.695-0.814 s before, 0.641-0.711 s after, three alternating pairs). The generation
//!    buffers, the packed copy and the labels are handed from run to run (`RunBuffers`), so
//!    only the first run faults in their pages (100,000 blocks: preprocessing 6.57-6.87 s
//!    before, 5.97-6.01 s after, two alternating pairs); the packed copy keeps the length of
//!    the largest run and the generation buffers are refilled without zeroing them first.
//!    Each bucket is shuffled in a copy in its worker's cache and unpacked from there
//!    (`Shuffle::finish_unpacked`), so the packed array is read once after the scatter and
//!    never written back: with those buffers, preprocessing at 10,000 blocks 0.726-0.745 s
//!    before, 0.638-0.654 s after, at 100,000 blocks on two threads 6.70-6.79 s before,
//!    5.79-5.97 s after (alternating runs, three and two pairs).
//!    The scatter gathers each bucket's triples into a cache line and writes whole lines with
//!    non-temporal stores (`Shuffle::scatter_u64`; preprocessing another 11% less at both
//!    sizes).
//! 4. The first `C` triples are opened completely (`a`, `b`, `c`; every party sends its second
//!    components to `P_{i-1}`, hashed into the views as in §5.1) and checked: `ab = c`.
//! 5. The next `N` triples are the checked ones; the remaining `N(B-1)` are sacrificed, triple
//!    `j(B-1) + k` (`k < B-1`) against checked triple `j`.
//! 6. Sacrifice of every pair (checked `(x, y, z)`, sacrificed `(a, b, c)`): open `ρ = x + a`
//!    and `σ = y + b` (second components to `P_{i-1}`, one message for all pairs), then the
//!    zero check of §5.1 ([`Party::absorb_zero_check`], block by block) on
//!    `[[ζ]] = [[z]] + [[c]] + σ[[x]] + ρ[[y]] + ρσ = (z - xy) + (c - ab)`. A compare-view
//!    carries the result of step 4, so every honest party aborts if any party saw `ab ≠ c`.
//! 7. The first `T` checked triples are kept.
//!
//! **Online**: the chain of [`super::mal_chida::MalChidaRecCheck`] (the same code): per layer
//! `x^3 = x·x^2`; `x^15 = x^12·x^3`, `x^14 = x^12·x^2`; `x^254 = x^240·x^14`, four plain
//! products in three rounds ([`Party::mul_covered`]: not recorded by the model). Instead the
//! protocol keeps the chain's values `x`, `x^3`, `x^15`, `x^14`, `x^254` of every layer (10
//! bytes per inversion and party; four recorded triples took 24), from which each product's
//! factors follow by local maps (`x^2`, `x^12 = (x^3)^4`, `x^240 = (x^15)^16`).
//!
//! **Finalize**: every online product, in the order above, is sacrificed against the next
//! unused verified triple (step 6 with buckets of size 1), its triple rebuilt block by block
//! from the kept values; then a compare-view. Any failure makes every honest party return
//! [`EngineError::Abort`] before outputs are opened. The `ρ`, `σ` of at most
//! [`SACRIFICE_MESSAGE_PAIRS`]` = 2^24` products go in one message (whole blocks of `2^18`;
//! more products take more messages, one round each).
//!
//! # Communication (per party, as implemented)
//!
//! | phase | to `P_{i+1}` | to `P_{i-1}` | rounds | messages per channel |
//! |---|---|---|---|---|
//! | preprocessing, per run | `128` | `M + 3C + 2N(B-1) + 128` | 7 | 11 |
//! | online | 0 | 4 per inversion (AES-128: 640 per block) | 3 per layer | 3 per layer |
//! | finalize | 32 | 8 per inversion + 32 (AES-128: 1280 per block + 32) | `m + 1` | `m + 2` |
//!
//! `m` is the number of `ρ, σ` messages of the finalize: 1 up to `2^24` products (about 26,000
//! AES-128 blocks), then one more per `2^24` (at 100,000 AES-128 blocks, `6.4 · 10^7` products in
//! blocks of `2^18`: 4).
//!
//! Preprocessing rounds: multiplication, commitments, seed parts, compare-view, opening of the
//! `C` triples, opening of `ρ, σ`, compare-view. Each compare-view is 32 bytes to each
//! neighbour ([`Party::compare_view_after`]). Example: AES-128, one block, `T = 640`: `N = 2^10`,
//! `B = C = 5`, `M = 5125`; to prev `5125 + 15 + 8192 + 128 = 13 460` bytes.
//!
//! # Deviations
//!
//! * \[DEV\] The finalize's `ρ, σ` travel in messages of at most 32 MiB
//!   ([`SACRIFICE_MESSAGE_PAIRS`]) instead of one: the same bytes and zero checks, one round
//!   per message; the views absorb each message's openings and zero checks in turn (all
//!   parties alike). At 100,000 AES-128 blocks the one message and the one received were 128
//!   MB each per party, the finalize's largest memory.
//! * \[DEV\] The bucket size is looked up by `log2 N` (PROTOCOLS.md §5.3, §8 item 4); the
//!   reference indexes its table by the lowest set bit of `n >> 10`, which for `2^10 < N <
//!   2^20` can pick a smaller bucket than intended.
//! * \[DEV\] Compare-views are two-way (engine-wide, [`Party::compare_view_after`]): 32 more
//!   bytes to `P_{i-1}` per compare-view than PROTOCOLS.md §5.3/§6.4 count (reference: to prev
//!   `M + 3C + 2N(B-1) + 64` in preprocessing and `1280` per block in finalize; here `+64`
//!   resp. `+32`), so that both honest parties, not just one, see an inconsistency.
//! * The PRG of the shuffle is not fixed by the specification: AES-128-CTR keyed by the coin
//!   (all parties derive the same permutation); index draws are exactly uniform.
//! * `n = 0` needs no triples: preprocessing then does nothing (no messages).
//! * The finalize refuses (with an error, not an abort) to run while the model holds recorded
//!   products, which its sacrifice would not check.
//! * \[DEV\] More than `2^22` triples are made in several runs of the cut-and-choose
//!   ([`plan_runs`]; §5.3 step 1 has one run with `N = nextpow2(T)`). A run holds its
//!   generated triples, 16 bytes each while they are shuffled (their shares, the packed copy
//!   and a bucket label), so one run of `2^28` triples would need over 10 GB per party; runs
//!   of `2^22` (`3 · 2^22` generated) need about 0.2 GB. Each run costs 7 rounds
//!   and 11 messages per channel, and its own `C` opened triples, coin and compare-views;
//!   rounding each run up to a power of two instead of the whole batch also generates fewer
//!   triples (at 250,000 AES-128 blocks about 40% fewer than with `N = 2^28`). Splitting the
//!   rest after the full runs by its leading bit rounds up less again (AES-128 at 10,000
//!   blocks: `N = 2^22, 2^21, 2^17` against two runs of `2^22`, 23% fewer generated triples
//!   and 4,535 instead of 5,872 bytes per block to `P_{i-1}`; at 100,000 blocks 4,484 instead
//!   of 4,698, the figure of PROTOCOLS.md §5.3). The union bound over the runs stays below
//!   `2^-40` (see "Soundness").
//!
//! # Soundness
//!
//! What is claimed: a corrupt party that makes any online product wrong makes every honest
//! party abort, except with probability at most `ε(N, B) = N / binom(NB + C, B)` (with
//! `C = B`) plus the probability of breaking BLAKE3 (views) or the commitment. The table
//! gives `ε ≤ 2^-40` for every `N` (`log2 ε` from `-40.2` at `N = 2^19` down; see
//! [`BucketParams::log2_cheating_bound`] and the unit test over all `log2 N ≤ 40`).
//!
//! Argument (our derivation for this exact shuffle; the parameters are those of the reference,
//! which follows the combinatorial analyses of Furukawa et al. and Araki et al. for 40-bit
//! statistical security):
//!
//! * Any deviation of the corrupt party in a multiplication (a wrong share of its local
//!   product, or a wrong copy of an input component) turns the product into `c = ab + Δ` with
//!   `Δ` known to it and fixed when the message is sent. Every opening is hashed into the views
//!   of the two honest parties, who hold all components of every sharing between them and
//!   compare views directly (they are neighbours), so an opening or a zero check that is
//!   inconsistent with the honest parties' components makes them abort.
//! * The sacrifice of a pair passes iff `Δ_checked + Δ_sacrificed = 0`, i.e. (characteristic
//!   2) both errors are equal. The finalize pairs every online product with a fresh triple;
//!   if that triple is correct, a wrong product (`Δ ≠ 0`) is caught with certainty. So the
//!   adversary wins only if a kept triple is wrong.
//! * The errors are fixed before the coin; the coin is uniform given one honest seed part
//!   (commitments are binding and hiding; a party that equivocates is caught by the
//!   compare-view), so the permutation is uniform and independent of the errors. For a set of
//!   `t` wrong triples to pass, it must avoid the `C` opened positions and fill whole buckets
//!   (a bucket mixing different `Δ` fails): with `t = kB`, probability
//!   `f(k) = binom(N, k) / binom(M, kB)`. `log f` is convex in `k` (the increment
//!   `log f(k+1) - log f(k) = log((N-k)/(k+1)) + Σ_{j<B} log((kB+j+1)/(M-kB-j))` grows with
//!   `k` for `B ≥ 2`, `C ≤ B(B-1)`), so the maximum is at
//!   `k = 1` (`N / binom(M, B)`) or `k = N` (`1 / binom(M, C) ≤ f(1)` for `C = B`); the unit
//!   test `every_bad_set_size_is_within_the_bound` checks the maximum over all `k` for
//!   `log2 N ≤ 20`.
//!
//! Several runs ([`plan_runs`]): each run tosses its coin after its own triples are fixed, so
//! the argument applies to each run separately, and a wrong kept triple passes only if the run
//! that made it fails to notice: `ε ≤ Σ_runs N_r / binom(M_r, B_r)`. [`plan_runs`] picks the
//! run size so that this sum is at most `2^-40` ([`log2_total_bound`]; checked by a unit test
//! from one block to `10^6` AES-256 blocks). For `B = 3` a run's bound is about
//! `6 / (27 N_r^2)`, so `k` runs of `2^22` give `k · 2^-46.2`: for AES-128 at 100,000 blocks
//! (15 runs of `2^22`, one of `2^20`, one of `2^16` with `B = 4`) the sum is `2^-41.2`.
//!
//! Privacy: `ρ = x + a`, `σ = y + b` are masked by triples used in no other opening; the kept
//! `x`, `y` are opened only masked by a fresh sacrificed triple in each bucket, then once
//! masking an online value. Zero-check digests hash values the receiver can compute itself.

use core::ops::Range;
use std::cell::RefCell;

use rand::RngCore;
use rayon::prelude::*;
use triskele_engine::{AbortReason, EngineError, Malicious, Party, SecurityModel, Triples, View};
use triskele_field::{Bulk, Field, Gf2p8};
use triskele_share::{commit_seed, verify_seed, Direction, PartyId, Prg, PrgKey, RssVec};
use zeroize::Zeroize;

use super::mal_chida::{inversion_chain, CHAIN_FACTORS, CHAIN_X};
use super::SboxProtocol;

/// Multiplication triples per inversion (the four products of the chain).
const TRIPLES_PER_INVERSION: usize = 4;

/// `log2` of the minimum number of buckets.
const MIN_LOG2_BUCKETS: u32 = 10;

/// Bucket sizes for `log2 N = 10, ..., 19` (\[REF\] table; 3 from `2^20` on).
const BUCKET_TABLE: [usize; 10] = [5, 5, 5, 4, 4, 4, 4, 4, 4, 3];

/// Elements per rayon work item in the streaming loops.
const CHUNK: usize = 1 << 14;

/// Parameters of one bucket cut-and-choose run (PROTOCOLS.md §5.3 step 1).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BucketParams {
    /// `N`: buckets, i.e. checked triples (at least the number of triples asked for).
    pub buckets: usize,
    /// `B`: triples per bucket (one checked, `B - 1` sacrificed).
    pub bucket_size: usize,
    /// `C`: triples opened completely (`C = B`).
    pub opened: usize,
    /// `M = N·B + C`: triples generated.
    pub generated: usize,
}

impl BucketParams {
    /// Parameters for `triples` verified triples: `N = max(2^10, nextpow2(triples))`, `B` by
    /// `log2 N` (\[DEV\]), `C = B`.
    pub fn for_triples(triples: usize) -> Result<Self, EngineError> {
        let too_many =
            || EngineError::Unsupported(format!("{triples} triples in one bucket cut-and-choose"));
        let buckets = triples
            .checked_next_power_of_two()
            .ok_or_else(too_many)?
            .max(1 << MIN_LOG2_BUCKETS);
        let log = buckets.trailing_zeros();
        let bucket_size = BUCKET_TABLE
            .get((log - MIN_LOG2_BUCKETS) as usize)
            .copied()
            .unwrap_or(3);
        let opened = bucket_size;
        let generated = buckets
            .checked_mul(bucket_size)
            .and_then(|m| m.checked_add(opened))
            .filter(|m| u64::try_from(*m).is_ok())
            .ok_or_else(too_many)?;
        Ok(BucketParams {
            buckets,
            bucket_size,
            opened,
            generated,
        })
    }

    /// `log2 ε` for `ε = N / binom(M, B)`, the probability that a corrupt party gets a wrong
    /// triple through the cut-and-choose (module documentation, "Soundness").
    pub fn log2_cheating_bound(&self) -> f64 {
        let m = self.generated as f64;
        let log2_binom: f64 = (0..self.bucket_size)
            .map(|i| ((m - i as f64) / (i + 1) as f64).log2())
            .sum();
        (self.buckets as f64).log2() - log2_binom
    }

    /// Bytes this party sends to `P_{i-1}` in the preprocessing (module documentation).
    pub fn bytes_to_prev(&self) -> usize {
        self.generated
            + 3 * self.opened
            + 2 * self.buckets * (self.bucket_size - 1)
            + COIN_BYTES
            + 2 * DIGEST_BYTES
    }

    /// Bytes this party sends to `P_{i+1}` in the preprocessing.
    pub fn bytes_to_next(&self) -> usize {
        COIN_BYTES + 2 * DIGEST_BYTES
    }
}

/// `log2` of the largest run of the cut-and-choose by default (\[DEV\]; [`plan_runs`]): a
/// run of `2^22` triples holds about 0.2 GB while it is checked.
pub const DEFAULT_RUN_LOG2: u32 = 22;

/// One run of the bucket cut-and-choose: `triples` verified triples from a run with
/// parameters `params`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Run {
    /// Verified triples this run keeps.
    pub triples: usize,
    /// Its parameters ([`BucketParams::for_triples`] of `triples`).
    pub params: BucketParams,
}

/// The runs of the cut-and-choose that produce `count` verified triples (\[DEV\] of
/// PROTOCOLS.md §5.3 step 1, which uses a single run): one run if `count ≤ 2^min_log2`;
/// otherwise, for the smallest `L ≥ min_log2` at which some of the plans below keeps the
/// runs' cheating bounds added up at most `2^-40` (union bound: each run has its own coin,
/// drawn after its triples are fixed), the one of those that generates the fewest triples
/// (on a tie the one listed first):
///
/// 1. `k = ⌈count / 2^L⌉` runs of balanced sizes;
/// 2. `⌊count / 2^L⌋` full runs of `2^L`, and the rest `R` in one run;
/// 3. the full runs, then `R` in two runs: the largest power of two `p < R`, and `R - p`.
///
/// Every run holds at most `2^L` triples, so runs keep the memory of one run's generated
/// triples instead of all of them. Each run rounds its own size up to a power of two: the
/// full runs round nothing, and splitting the rest by its leading bit rounds up at most
/// `R - p`, where one run would round up to `2p`. AES-128 at 10,000 blocks (`6.4 · 10^6`
/// triples): 1.94 instead of 2.52 `· 10^7` generated (runs of `2^22`, `2^21` and `2^17`
/// instead of two of `2^22`), at 100,000 blocks 1.92 instead of 2.01 `· 10^8`.
pub fn plan_runs(count: usize, min_log2: u32) -> Result<Vec<Run>, EngineError> {
    let run = |t: usize| {
        Ok(Run {
            triples: t,
            params: BucketParams::for_triples(t)?,
        })
    };
    let min_log2 = min_log2.clamp(MIN_LOG2_BUCKETS, usize::BITS - 2);
    if count <= 1 << min_log2 {
        return Ok(vec![run(count)?]);
    }
    let generated = |runs: &[Run]| runs.iter().map(|r| r.params.generated).sum::<usize>();
    for log in min_log2..usize::BITS - 1 {
        let cap = 1usize << log;
        let k = count.div_ceil(cap);
        let (q, r) = (count / k, count % k);
        let balanced = (0..k).map(|i| q + usize::from(i < r)).collect::<Vec<_>>();
        let full = vec![cap; count / cap];
        let rest = count % cap;
        let mut plans = vec![balanced];
        if rest > 0 {
            plans.push([&full[..], &[rest]].concat());
            let p = 1usize << rest.ilog2();
            if p < rest {
                plans.push([&full[..], &[p, rest - p]].concat());
            }
        }
        let mut best: Option<Vec<Run>> = None;
        for sizes in plans {
            let runs = sizes
                .into_iter()
                .map(run)
                .collect::<Result<Vec<_>, EngineError>>()?;
            let better = best
                .as_ref()
                .is_none_or(|b| generated(&runs) < generated(b));
            if better && log2_total_bound(&runs) <= -40.0 {
                best = Some(runs);
            }
        }
        if let Some(runs) = best {
            return Ok(runs);
        }
    }
    Err(EngineError::Unsupported(format!(
        "{count} triples in a bucket cut-and-choose"
    )))
}

/// `log2` of the union bound `Σ ε` over `runs` (each [`BucketParams::log2_cheating_bound`]).
pub fn log2_total_bound(runs: &[Run]) -> f64 {
    runs.iter()
        .map(|r| r.params.log2_cheating_bound().exp2())
        .sum::<f64>()
        .log2()
}

/// Bytes one party sends to `P_{i-1}` in the preprocessing of `runs`.
pub fn runs_bytes_to_prev(runs: &[Run]) -> usize {
    runs.iter().map(|r| r.params.bytes_to_prev()).sum()
}

/// Commitment and seed part of the global coin, to each neighbour.
const COIN_BYTES: usize = 48 + 16;
/// One compare-view digest.
const DIGEST_BYTES: usize = 32;

/// The `mal-chida` protocol: verified triples from the bucket cut-and-choose, the chain of
/// `mal-chida-rec-check` online, post-sacrifice in finalize. See the module documentation.
#[derive(Debug)]
pub struct MalChida {
    /// Verified triples, in order of use.
    pool: Triples<Gf2p8>,
    /// `pool[..reserved]` is assigned to products computed by `invert`.
    reserved: usize,
    /// `pool[..checked]` has been used by a finalize.
    checked: usize,
    /// `log2` of the run size of the preprocessing ([`plan_runs`]).
    run_log2: u32,
    /// The online chains since the last finalize, one entry per `invert` call, in order.
    chain: Vec<ChainLayer>,
    /// The most pairs whose `ρ`, `σ` the finalize sends in one message
    /// ([`SACRIFICE_MESSAGE_PAIRS`]).
    message_pairs: usize,
}

/// The most pairs whose `ρ` and `σ` (2 bytes per pair) one message of the finalize's sacrifice
/// carries: 32 MiB. \[DEV\] PROTOCOLS.md §5.3 sends all of them in one message; a batch of
/// more than `2^24` products (about 26,000 AES-128 blocks) sends them in several, one round
/// each, so that this party's message and the one it receives stay within 32 MiB each instead
/// of growing with the batch (at 100,000 blocks they were 128 MB each, on top of the 384 MB of
/// verified triples and 160 MB of chain values the finalize holds).
pub const SACRIFICE_MESSAGE_PAIRS: usize = 1 << 24;

/// What one `invert` call keeps for the finalize (10 bytes per inversion and party instead of
/// the 24 of four recorded triples): the input and the products of the chain; the other
/// factors are local maps of them.
#[derive(Debug)]
struct ChainLayer {
    /// `x`, `x^3`, `x^15`, `x^14`, `x^254` (indexed as in [`CHAIN_FACTORS`]).
    v: [RssVec<Gf2p8>; 5],
}

impl ChainLayer {
    /// Inversions of this call.
    fn len(&self) -> usize {
        self.v[CHAIN_X].len()
    }

    /// The output `z` of product `seg` (0: `x^3`, 1: `x^15`, 2: `x^14`, 3: `x^254`).
    fn output_mut(&mut self, seg: usize) -> &mut RssVec<Gf2p8> {
        &mut self.v[CHAIN_FACTORS[seg.min(3)][2].0]
    }
}

/// The triples of a block of online products, both components of `x`, `y`, `z`.
#[derive(Debug, Default)]
struct ProductBlock {
    v: [Vec<Gf2p8>; 6],
}

impl ProductBlock {
    /// Products `r` of kind `seg` of `layer` (the order of the recorded products of
    /// `mal-chida-rec-check`: per call `x·x^2`, then `x^12·x^3`, `x^12·x^2`, `x^240·x^14`, `n`
    /// each). With `only = Some(k)` just part `k` (0: `x`, 1: `y`, 2: `z`) is rebuilt and the
    /// others are returned empty.
    fn fill(
        &mut self,
        layer: &ChainLayer,
        seg: usize,
        r: Range<usize>,
        only: Option<usize>,
    ) -> TripleSlices<'_> {
        let n = r.len();
        fn take<'v>(v: &'v RssVec<Gf2p8>, k: usize, r: &Range<usize>) -> &'v [Gf2p8] {
            if k == 0 {
                &v.first[r.clone()]
            } else {
                &v.second[r.clone()]
            }
        }
        for (k, pair) in self.v.chunks_mut(2).enumerate() {
            if only.is_some_and(|o| o != k) {
                continue;
            }
            for (c, out) in pair.iter_mut().enumerate() {
                out.resize(n, Gf2p8::ZERO);
                // (factor x, factor y, product z) of the kind, as a map of a stored value.
                let (src, map) = CHAIN_FACTORS[seg.min(3)][k];
                let src = &layer.v[src];
                match map {
                    Some(m) => m.apply_slice(take(src, c, &r), out),
                    None => out.copy_from_slice(take(src, c, &r)),
                }
            }
        }
        let part = |k: usize| -> [&[Gf2p8]; 2] {
            if only.is_some_and(|o| o != k) {
                [&[], &[]]
            } else {
                [&self.v[2 * k], &self.v[2 * k + 1]]
            }
        };
        TripleSlices {
            x: part(0),
            y: part(1),
            z: part(2),
        }
    }
}

impl Default for MalChida {
    fn default() -> Self {
        Self::with_run_log2(DEFAULT_RUN_LOG2)
    }
}

impl MalChida {
    /// The protocol with runs of the cut-and-choose of at most `2^run_log2` triples where the
    /// soundness bound allows it ([`plan_runs`]; at least `2^10`): smaller runs hold less
    /// memory and take 7 rounds each.
    pub fn with_run_log2(run_log2: u32) -> Self {
        MalChida {
            pool: Triples::default(),
            reserved: 0,
            checked: 0,
            run_log2,
            chain: Vec::new(),
            message_pairs: SACRIFICE_MESSAGE_PAIRS,
        }
    }

    /// The protocol with at most `pairs` (at least 1) sacrificed pairs per message of the
    /// finalize instead of [`SACRIFICE_MESSAGE_PAIRS`] (tests run small batches through
    /// several messages).
    #[doc(hidden)]
    pub fn with_message_pairs(mut self, pairs: usize) -> Self {
        self.message_pairs = pairs.max(1);
        self
    }

    /// Test hook (a corrupt party's consistent error in an online product): adds `first` and
    /// `second` to this party's components of the output of online product `k` (in the order
    /// of the finalize's sacrifice), as kept for the finalize. `false` if there is no such
    /// product.
    #[doc(hidden)]
    pub fn perturb_product_output(&mut self, k: usize, first: u8, second: u8) -> bool {
        let mut k = k;
        for layer in &mut self.chain {
            let n = layer.len();
            if k < 4 * n {
                let z = layer.output_mut(k / n);
                z.first[k % n].0 ^= first;
                z.second[k % n].0 ^= second;
                return true;
            }
            k -= 4 * n;
        }
        false
    }

    /// Verified triples not yet assigned to an inversion.
    pub fn available(&self) -> usize {
        self.pool.len() - self.reserved
    }
}

impl SboxProtocol<Malicious> for MalChida {
    fn preprocess(&mut self, party: &mut Party<Malicious>, n: usize) -> Result<(), EngineError> {
        if n == 0 {
            return Ok(());
        }
        let count = n
            .checked_mul(TRIPLES_PER_INVERSION)
            .ok_or_else(|| EngineError::Unsupported(format!("{n} inversions")))?;
        let fresh = verified_triples(party, count, self.run_log2)?;
        // Drop what a finalize has consumed, keep what is still unused or awaiting its check.
        let keep = |v: &mut RssVec<Gf2p8>, add: &RssVec<Gf2p8>, used: usize| {
            v.first.drain(..used);
            v.second.drain(..used);
            v.extend(add);
        };
        let used = self.checked;
        if used == self.pool.len() {
            // Nothing left: the fresh triples become the pool (no copy).
            self.pool = fresh;
        } else {
            keep(&mut self.pool.x, &fresh.x, used);
            keep(&mut self.pool.y, &fresh.y, used);
            keep(&mut self.pool.z, &fresh.z, used);
        }
        self.reserved -= used;
        self.checked = 0;
        Ok(())
    }

    fn invert(
        &mut self,
        party: &mut Party<Malicious>,
        x: &mut RssVec<Gf2p8>,
    ) -> Result<(), EngineError> {
        let needed = x.len().saturating_mul(TRIPLES_PER_INVERSION);
        EngineError::ensure_preprocessed(needed, self.available())?;
        // The products are checked by the finalize's sacrifice (not recorded for Protocol 2),
        // from the chain's values kept here.
        let [input, x3, x15, x14] = inversion_chain(party, x)?.split_products();
        self.chain.push(ChainLayer {
            v: [input, x3, x15, x14, x.clone()],
        });
        self.reserved += needed;
        Ok(())
    }

    fn finalize(&mut self, party: &mut Party<Malicious>) -> Result<(), EngineError> {
        if !party.model().recorder().is_empty() {
            return Err(EngineError::Unsupported(
                "mal-chida checks only the products of its own chain".into(),
            ));
        }
        let online: usize = self.chain.iter().map(|l| 4 * l.len()).sum();
        let expected = self.reserved - self.checked;
        if online != expected {
            return Err(EngineError::LengthMismatch {
                expected,
                got: online,
            });
        }
        if online > 0 {
            let kept = TripleSlices::of(&self.pool, self.checked..self.reserved)?;
            sacrifice_chain(party, &self.chain, kept, self.message_pairs)?;
            self.checked = self.reserved;
        }
        self.chain.clear();
        if self.checked == self.pool.len() {
            // Everything preprocessed has been used and checked: free it.
            self.pool = Triples::default();
            self.reserved = 0;
            self.checked = 0;
        }
        party.compare_view()
    }
}

/// `count` verified triples from the runs of [`plan_runs`], in order.
fn verified_triples(
    party: &mut Party<Malicious>,
    count: usize,
    run_log2: u32,
) -> Result<Triples<Gf2p8>, EngineError> {
    let runs = plan_runs(count, run_log2)?;
    let mut bufs = RunBuffers::default();
    let vec = || RssVec {
        first: Vec::with_capacity(count),
        second: Vec::with_capacity(count),
    };
    let mut out = Triples {
        x: vec(),
        y: vec(),
        z: vec(),
    };
    for run in runs {
        verified_run(party, run.triples, run.params, &mut bufs, &mut out)?;
    }
    Ok(out)
}

/// The large buffers of a run (its generated triples, their packed copy and the shuffle's
/// labels), handed from run to run so that every run after the first writes into memory
/// that is already mapped instead of faulting in fresh pages (the runs of a plan are all of
/// one size but the last one or two, which are smaller). Everything in them is overwritten
/// before it is read.
#[derive(Default)]
struct RunBuffers {
    t: Triples<Gf2p8>,
    packed: Vec<u64>,
    labels: Vec<u16>,
}

/// Steps 1–7 of PROTOCOLS.md §5.3 for one run with parameters `p`: `count` verified triples,
/// appended to `out`.
fn verified_run(
    party: &mut Party<Malicious>,
    count: usize,
    p: BucketParams,
    bufs: &mut RunBuffers,
    out: &mut Triples<Gf2p8>,
) -> Result<(), EngineError> {
    // Step 2: optimistic generation.
    let Triples {
        x: mut a,
        y: mut b,
        z: mut c,
    } = core::mem::take(&mut bufs.t);
    party.prss().random_rss_into(p.generated, &mut a);
    party.prss().random_rss_into(p.generated, &mut b);
    c.first.clear();
    c.second.clear();
    party.mul_covered_append([&a.first, &a.second], [&b.first, &b.second], &mut c)?;

    // Step 3: global coin and shuffle, packed and scattered in one pass (every place of
    // `packed` is written).
    let key = global_coin(party)?;
    let perm = Shuffle::with_labels(p.generated, &key, core::mem::take(&mut bufs.labels));
    drop(key);
    // The buffer keeps the length of the largest run so far (runs come largest first), so
    // it is zeroed once, not before every run.
    let mut buf = core::mem::take(&mut bufs.packed);
    if buf.len() < p.generated {
        buf.resize(p.generated, 0);
    }
    let packed = &mut buf[..p.generated];
    perm.scatter_u64(packed, packed_triples(&a, &b, &c));

    // The buckets' Fisher–Yates shuffles, and steps 4 and 5: unpacked into the generation
    // buffers (no fresh memory) in the order opened (C), checked (N), then the sacrificed
    // triples by position k < B - 1 in their bucket (N each): sacrificed triple j(B-1) + k of
    // §5.3 is element j of block k.
    let mut t = Triples { x: a, y: b, z: c };
    let (c_, n_, stride) = (p.opened, p.buckets, p.bucket_size - 1);
    let layout = Layout {
        ident: c_ + n_,
        n: n_,
        stride,
    };
    perm.finish_unpacked(packed, layout, &mut t)?;
    bufs.labels = perm.into_labels();
    bufs.packed = buf;
    let opened_ok = open_and_check(party, TripleSlices::of(&t, 0..c_)?)?;

    // Step 6: sacrifice and compare-view (carrying the result of step 4).
    let checked = TripleSlices::of(&t, c_..c_ + n_)?;
    let groups = (0..stride)
        .map(|k| {
            let dst = c_ + n_ + k * n_;
            let sac = TripleSlices::of(&t, dst..dst + n_)?;
            Ok(vec![PairBlock::Slices(checked, sac)])
        })
        .collect::<Result<Vec<_>, EngineError>>()?;
    sacrifice(party, &groups)?;
    party.compare_view_after(if opened_ok {
        Ok(())
    } else {
        Err(AbortReason::MultiplicationCheck)
    })?;

    // Step 7: the first `count` checked triples.
    if count > n_ {
        return Err(EngineError::LengthMismatch {
            expected: count,
            got: n_,
        });
    }
    let kept = TripleSlices::of(&t, c_..c_ + count)?;
    for (o, v) in [
        (&mut out.x, kept.x),
        (&mut out.y, kept.y),
        (&mut out.z, kept.z),
    ] {
        o.first.extend_from_slice(v[0]);
        o.second.extend_from_slice(v[1]);
    }
    bufs.t = t;
    Ok(())
}

/// The global coin of PROTOCOLS.md §1.2: commit to a local 16-byte seed part (48 bytes to both
/// neighbours), open it (16 bytes to both), hash what was received into the views, run a
/// compare-view carrying the commitment checks, and return the XOR of the three parts.
fn global_coin(party: &mut Party<Malicious>) -> Result<PrgKey, EngineError> {
    let mut seed = [0u8; 16];
    let mut nonce = [0u8; 16];
    let mut rng = rand::rng();
    rng.fill_bytes(&mut seed);
    rng.fill_bytes(&mut nonce);
    let com = commit_seed(&seed, &nonce);
    nonce.zeroize();
    for dir in Direction::BOTH {
        party.send_bytes(dir, com.to_vec())?;
    }
    let com_prev = party.recv_bytes(Direction::Prev, com.len())?;
    let com_next = party.recv_bytes(Direction::Next, com.len())?;
    party.model().absorb(View::Prev, &com_prev);
    party.model().absorb(View::Next, &com_next);
    for dir in Direction::BOTH {
        party.send_bytes(dir, seed.to_vec())?;
    }
    let seed_prev = party.recv_bytes(Direction::Prev, seed.len())?;
    let seed_next = party.recv_bytes(Direction::Next, seed.len())?;
    party.model().absorb(View::Prev, &seed_prev);
    party.model().absorb(View::Next, &seed_next);
    let check = if !verify_seed(&com_prev, &seed_prev) {
        Err(AbortReason::BadCommitment {
            peer: party.id().prev(),
        })
    } else if !verify_seed(&com_next, &seed_next) {
        Err(AbortReason::BadCommitment {
            peer: party.id().next(),
        })
    } else {
        Ok(())
    };
    party.compare_view_after(check)?;
    for (k, (p, n)) in seed.iter_mut().zip(seed_prev.iter().zip(&seed_next)) {
        *k ^= p ^ n;
    }
    let key = PrgKey(seed);
    seed.zeroize();
    Ok(key)
}

/// Uniform integers from a [`Prg`] stream, buffered.
struct Tape {
    prg: Prg,
    buf: [u8; 4096],
    pos: usize,
}

impl Tape {
    fn new(key: &PrgKey) -> Self {
        Tape {
            prg: Prg::new(key),
            buf: [0u8; 4096],
            pos: 4096,
        }
    }

    /// The next `N` bytes of the stream (`N` at most the buffer).
    fn next<const N: usize>(&mut self) -> [u8; N] {
        if self.pos + N > self.buf.len() {
            self.prg.fill_stream(&mut self.buf);
            self.pos = 0;
        }
        let mut w = [0u8; N];
        w.copy_from_slice(&self.buf[self.pos..self.pos + N]);
        self.pos += N;
        w
    }

    fn next_u64(&mut self) -> u64 {
        u64::from_le_bytes(self.next())
    }

    fn next_u32(&mut self) -> u32 {
        u32::from_le_bytes(self.next())
    }

    /// Exactly uniform in `0..range` (`1 ≤ range ≤ 2^32`): [`Tape::below`] on 32-bit draws.
    fn below32(&mut self, range: u64) -> u64 {
        debug_assert!((1..=1 << 32).contains(&range));
        let mut m = u64::from(self.next_u32()) * range;
        if (m as u32 as u64) < range {
            let threshold = ((1u64 << 32) - range) % range;
            while (m as u32 as u64) < threshold {
                m = u64::from(self.next_u32()) * range;
            }
        }
        m >> 32
    }

    /// Exactly uniform in `0..range` (`range ≥ 1`): Lemire's multiply-shift with rejection.
    fn below(&mut self, range: u64) -> u64 {
        let mut m = u128::from(self.next_u64()) * u128::from(range);
        if (m as u64) < range {
            let threshold = range.wrapping_neg() % range;
            while (m as u64) < threshold {
                m = u128::from(self.next_u64()) * u128::from(range);
            }
        }
        (m >> 64) as u64
    }
}

impl Drop for Tape {
    fn drop(&mut self) {
        self.buf.zeroize();
    }
}

/// A uniformly random permutation of `n` positions, derived from `key` (the same at every party
/// that holds the key), applied by [`Shuffle::scatter`] and [`Shuffle::finish`]: Sanders'
/// two-level shuffle (Inf. Process. Lett. 1998), so that a large array is permuted with
/// sequential writes and cache-sized random swaps instead of one swap per element at a random
/// place of the whole array.
///
/// 1. Every position `i` draws a bucket label `λ_i`, uniform in `0..K` (`K` a power of two,
///    16 bits of the stream masked: exactly uniform), all from the stream of `key`.
/// 2. Scatter: the elements go to consecutive places of their bucket's range, in index order.
/// 3. Each bucket is Fisher–Yates shuffled with the stream of its own key (drawn from the
///    stream of `key` after the labels), buckets in parallel.
///
/// Why the result is exactly uniform: fix a permutation `π` (place `p` gets element `π(p)`).
/// Given the labels, the bucket ranges are fixed by the counts `n_b`, and the output is `π`
/// iff every element carries the label of the range that holds its place under `π`, and every
/// bucket's Fisher–Yates yields the one order `π` asks for (probability `Π_b 1/n_b!`). For
/// each count vector exactly one labelling (probability `K^-n`) is consistent with `π`, so
/// `P(π) = K^-n Σ Π_b 1/n_b!` over all count vectors with `Σ n_b = n`, which is
/// `K^-n · K^n / n! = 1/n!` by the multinomial theorem.
struct Shuffle {
    /// `λ_i` of every position.
    labels: Vec<u16>,
    /// Start of every bucket's range, and `n` at the end (`K + 1` entries).
    starts: Vec<usize>,
    /// The key of every bucket's Fisher–Yates stream.
    keys: Vec<PrgKey>,
}

/// Expected elements per bucket of [`Shuffle`] (at most twice as many): 256 KiB of packed
/// triples, so a bucket's swaps stay in the second-level cache.
const SHUFFLE_BUCKET_LOG: u32 = 15;

impl Shuffle {
    /// The permutation of `n` positions under `key`, `K = 2^k` buckets with
    /// `k = log2(nextpow2(n)) - 15` clamped to `0..=16`.
    #[cfg(test)]
    fn new(n: usize, key: &PrgKey) -> Self {
        Self::with_labels(n, key, Vec::new())
    }

    /// The permutation of `n` positions under `key` (as [`Shuffle::with_buckets`] with `K`
    /// from [`Shuffle::bucket_log`]), its labels written into `labels` (cleared; its memory
    /// reused).
    fn with_labels(n: usize, key: &PrgKey, labels: Vec<u16>) -> Self {
        Self::with_buckets(n, key, Self::bucket_log(n), labels)
    }

    /// The labels' buffer, for the next shuffle. Not zeroized: the labels, like the bucket
    /// keys, follow from the global coin, which every party opens (at 10,000 blocks the
    /// volatile zeroing of about 19 million labels per party took 3% of mal-chida's samples).
    fn into_labels(mut self) -> Vec<u16> {
        core::mem::take(&mut self.labels)
    }

    /// `log2 K` for `n` positions.
    fn bucket_log(n: usize) -> u32 {
        let log_n = n.max(1).next_power_of_two().trailing_zeros();
        log_n.saturating_sub(SHUFFLE_BUCKET_LOG).min(16)
    }

    /// The permutation of `n` positions under `key`, with `2^log_k` buckets (`log_k ≤ 16`).
    fn with_buckets(n: usize, key: &PrgKey, log_k: u32, mut labels: Vec<u16>) -> Self {
        let k = 1usize << log_k.min(16);
        let mask = (k - 1) as u16;
        let mut prg = Prg::new(key);
        // Two bytes of the stream per label, drawn through a small buffer.
        labels.clear();
        labels.reserve(n);
        let mut buf = [0u8; 4096];
        while labels.len() < n {
            let bytes = &mut buf[..(2 * (n - labels.len())).min(4096)];
            prg.fill_stream(bytes);
            labels.extend(
                bytes
                    .chunks_exact(2)
                    .map(|w| u16::from_le_bytes([w[0], w[1]]) & mask),
            );
        }
        buf.zeroize();
        let mut counts = vec![0usize; k];
        for &l in &labels {
            counts[usize::from(l)] += 1;
        }
        let mut starts = Vec::with_capacity(k + 1);
        let mut at = 0;
        for c in &counts {
            starts.push(at);
            at += c;
        }
        starts.push(at);
        let keys = (0..k).map(|_| prg.derive_key()).collect();
        Shuffle {
            labels,
            starts,
            keys,
        }
    }

    /// Steps 1 and 2: writes the elements (the first `n` of `items`, in index order) to their
    /// places in their buckets' ranges of `out` (`out.len() = n`).
    ///
    /// Packed triples take the streaming scatter of `triskele_field::backend`: each bucket's
    /// items are gathered into a cache line and whole lines are written with non-temporal
    /// stores, so the array's lines are not read before they are overwritten (at 10,000
    /// blocks preprocessing 0.636-0.677 s with the plain loop, 0.567-0.579 s with this; at
    /// 100,000 blocks on two threads 5.90-6.32 s against 5.41-5.45 s; alternating runs).
    fn scatter_u64(&self, out: &mut [u64], items: impl Iterator<Item = u64>) {
        let mut next = self.starts.clone();
        next.truncate(self.keys.len());
        triskele_field::backend::scatter_streaming(out, &mut next, &self.labels, items);
    }

    /// [`Shuffle::scatter_u64`] for any items, by the plain loop.
    #[cfg(test)]
    fn scatter<T>(&self, out: &mut [T], items: impl Iterator<Item = T>) {
        let mut next = self.starts.clone();
        for (&l, item) in self.labels.iter().zip(items) {
            let slot = &mut next[usize::from(l)];
            if let Some(o) = out.get_mut(*slot) {
                *o = item;
            }
            *slot += 1;
        }
    }

    /// Step 3 with the unpacking of steps 4 and 5 ([`Layout`]): each bucket's range of the
    /// scattered `packed` is copied into a buffer of its worker thread (a bucket is about 256
    /// KiB, so it stays in the second-level cache), Fisher–Yates shuffled there with its key
    /// and unpacked from there into the places `layout` gives its positions in `t`; buckets in
    /// parallel. The triples land where `Shuffle::finish` and unpacking the whole array
    /// would put them (the same messages follow), but `packed` is read once and never written
    /// back. Refuses (`LengthMismatch`) a layout or share vectors that do not cover the run.
    fn finish_unpacked(
        &self,
        packed: &[u64],
        layout: Layout,
        t: &mut Triples<Gf2p8>,
    ) -> Result<(), EngineError> {
        let n = packed.len();
        let short = [&t.x, &t.y, &t.z]
            .into_iter()
            .flat_map(|v| [v.first.len(), v.second.len()])
            .find(|&len| len < n);
        if layout.len() != n || self.starts.last() != Some(&n) || short.is_some() {
            return Err(EngineError::LengthMismatch {
                expected: n,
                got: short.unwrap_or(layout.len()),
            });
        }
        thread_local! {
            static LOCAL: RefCell<Vec<u64>> = const { RefCell::new(Vec::new()) };
        }
        let buckets = self.keys.len();
        let ranges: Vec<Range<usize>> = self.starts.windows(2).map(|w| w[0]..w[1]).collect();
        let inner = &self.starts[1..buckets];
        // Every share vector cut into regions (the kept positions, then block `k` of the
        // sacrificed ones) and each region at the buckets' starts: `cut[c][r][b]`.
        let Triples { x, y, z } = t;
        let parts: SixParts<'_> = [
            &mut x.first,
            &mut x.second,
            &mut y.first,
            &mut y.second,
            &mut z.first,
            &mut z.second,
        ];
        let mut cut: Vec<Vec<std::vec::IntoIter<&mut [Gf2p8]>>> = parts
            .into_iter()
            .map(|part| {
                let (kept, mut rest) = part.split_at_mut(layout.ident.min(part.len()));
                let mut regions = vec![cut_at(kept, inner.iter().map(|&p| p.min(layout.ident)))];
                for k in 0..layout.stride {
                    let (block, tail) = rest.split_at_mut(layout.n.min(rest.len()));
                    rest = tail;
                    let at = inner.iter().map(|&p| layout.block_before(k, p));
                    regions.push(cut_at(block, at));
                }
                regions.into_iter().map(Vec::into_iter).collect()
            })
            .collect();
        // Regrouped per bucket: `jobs[b][r]` holds the six pieces of region `r`.
        let jobs: Vec<Vec<SixParts<'_>>> = (0..buckets)
            .map(|_| {
                (0..=layout.stride)
                    .map(|r| core::array::from_fn(|c| cut[c][r].next().unwrap_or_default()))
                    .collect()
            })
            .collect();
        jobs.into_par_iter()
            .zip(self.keys.par_iter())
            .zip(ranges.into_par_iter())
            .for_each(|((regions, key), range)| {
                LOCAL.with_borrow_mut(|local| {
                    local.clear();
                    local.extend_from_slice(packed.get(range.clone()).unwrap_or_default());
                    fisher_yates(local, key);
                    for (r, six) in regions.into_iter().enumerate() {
                        // The first position of the region in this bucket, and the step.
                        let (first, step) = match r.checked_sub(1) {
                            None => (range.start, 1),
                            Some(k) => {
                                let j = layout.block_before(k, range.start);
                                (layout.ident + k + layout.stride * j, layout.stride)
                            }
                        };
                        let from = first.saturating_sub(range.start);
                        unpack_words(local.get(from..).unwrap_or_default(), step, six);
                    }
                });
            });
        Ok(())
    }

    /// Step 3: the Fisher–Yates shuffle of every bucket's range of `out`, in parallel.
    #[cfg(test)]
    fn finish<T: Copy + Send>(&self, out: &mut [T]) {
        let mut ranges = Vec::with_capacity(self.keys.len());
        let mut rest = out;
        for w in self.starts.windows(2) {
            let (bucket, tail) = rest.split_at_mut((w[1] - w[0]).min(rest.len()));
            ranges.push(bucket);
            rest = tail;
        }
        ranges
            .into_par_iter()
            .zip(self.keys.par_iter())
            .for_each(|(v, key)| fisher_yates(v, key));
    }
}

/// Fisher–Yates shuffle of `v` driven by the stream of `key`: for `i = len - 1, ..., 1`, swap
/// `v[i]` with `v[j]`, `j` uniform in `0..=i`.
fn fisher_yates<T>(v: &mut [T], key: &PrgKey) {
    let mut tape = Tape::new(key);
    for i in (1..v.len()).rev() {
        // `i + 1 ≤ v.len()` fits in u64 and the draw is at most `i`; 32-bit draws while
        // they suffice (a bucket is far smaller).
        let range = i as u64 + 1;
        let j = if range <= 1 << 32 {
            tape.below32(range)
        } else {
            tape.below(range)
        };
        v.swap(i, j as usize);
    }
}

/// `v` permuted by [`Shuffle::new`]`(v.len(), key)` (the tests' entry point; the run packs
/// and scatters in one pass).
#[cfg(test)]
fn shuffle<T: Copy + Send>(v: &mut [T], key: &PrgKey) {
    let s = Shuffle::new(v.len(), key);
    let src = v.to_vec();
    s.scatter(v, src.into_iter());
    s.finish(v);
}

/// The triples packed one word each: triple `k` as the little-endian bytes
/// `a_1 a_2 b_1 b_2 c_1 c_2 0 0` (8 bytes, so the shuffle moves one word per triple).
fn packed_triples<'a>(
    a: &'a RssVec<Gf2p8>,
    b: &'a RssVec<Gf2p8>,
    c: &'a RssVec<Gf2p8>,
) -> impl Iterator<Item = u64> + 'a {
    a.first
        .iter()
        .zip(&a.second)
        .zip(b.first.iter().zip(&b.second))
        .zip(c.first.iter().zip(&c.second))
        .map(|(((a1, a2), (b1, b2)), (c1, c2))| {
            u64::from_le_bytes([a1.0, a2.0, b1.0, b2.0, c1.0, c2.0, 0, 0])
        })
}

/// Writes the packed triples at positions `start + j·stride`, `j < dst.len()`, into
/// positions `dst` of the share vectors of `t` (which must cover `dst`).
#[cfg(test)]
fn unpack_into(
    packed: &[u64],
    start: usize,
    stride: usize,
    t: &mut Triples<Gf2p8>,
    dst: Range<usize>,
) {
    let Triples { x, y, z } = t;
    fn part<'a>(v: &'a mut [Gf2p8], dst: &Range<usize>) -> &'a mut [Gf2p8] {
        let r = dst.start.min(v.len())..dst.end.min(v.len());
        &mut v[r]
    }
    let part = |v| part(v, &dst);
    let (x1, x2) = (part(&mut x.first), part(&mut x.second));
    let (y1, y2) = (part(&mut y.first), part(&mut y.second));
    let (z1, z2) = (part(&mut z.first), part(&mut z.second));
    x1.par_chunks_mut(CHUNK)
        .zip(x2.par_chunks_mut(CHUNK))
        .zip(y1.par_chunks_mut(CHUNK).zip(y2.par_chunks_mut(CHUNK)))
        .zip(z1.par_chunks_mut(CHUNK).zip(z2.par_chunks_mut(CHUNK)))
        .enumerate()
        .for_each(|(i, (((x1, x2), (y1, y2)), (z1, z2)))| {
            let words = packed.get(start + i * CHUNK * stride..).unwrap_or_default();
            unpack_words(words, stride, [x1, x2, y1, y2, z1, z2]);
        });
}

/// The six share vectors of a run of triples, `[x_1, x_2, y_1, y_2, z_1, z_2]`.
type SixParts<'a> = [&'a mut [Gf2p8]; 6];

/// Writes the packed triples `words[j·stride]` into element `j` of `outs` (as many as the
/// shortest output, or fewer if `words` ends first): `triskele_field::backend::split_word_bytes`,
/// 64 triples at a time on a CPU with AVX-512 VBMI.
fn unpack_words(words: &[u64], stride: usize, outs: SixParts<'_>) {
    triskele_field::backend::split_word_bytes(words, stride, outs.map(Gf2p8::slice_as_bytes_mut));
}

/// Where steps 4 and 5 of PROTOCOLS.md §5.3 put the shuffled triples: positions below
/// `ident = C + N` (opened, then checked) keep their index; the sacrificed position `ident + k
/// + stride·j` (`k < stride = B - 1`, triple `j(B-1) + k` of §5.3) goes to `ident + k·n + j`
/// (block `k` of `n = N` triples).
#[derive(Debug, Clone, Copy)]
struct Layout {
    ident: usize,
    n: usize,
    stride: usize,
}

impl Layout {
    /// The positions it places.
    fn len(&self) -> usize {
        self.ident + self.stride * self.n
    }

    /// The indices `j` of block `k` whose positions `ident + k + stride·j` lie below `p`.
    fn block_before(&self, k: usize, p: usize) -> usize {
        let q = p.saturating_sub(self.ident);
        if q <= k {
            0
        } else {
            ((q - k).div_ceil(self.stride)).min(self.n)
        }
    }
}

/// Cuts `v` at the increasing offsets `cuts` (relative to its start, clamped to its length)
/// into `cuts.len() + 1` pieces.
fn cut_at<T>(mut v: &mut [T], cuts: impl Iterator<Item = usize>) -> Vec<&mut [T]> {
    let mut out = Vec::new();
    let mut done = 0;
    for c in cuts {
        let (head, tail) = v.split_at_mut(c.saturating_sub(done).min(v.len()));
        done += head.len();
        out.push(head);
        v = tail;
    }
    out.push(v);
    out
}

/// Borrowed share vectors of a run of triples `(x, y, z)`: `[first, second]` each.
#[derive(Debug, Clone, Copy)]
struct TripleSlices<'a> {
    x: [&'a [Gf2p8]; 2],
    y: [&'a [Gf2p8]; 2],
    z: [&'a [Gf2p8]; 2],
}

impl<'a> TripleSlices<'a> {
    /// Triples `r` of these (`r` within their length).
    fn sub(&self, r: Range<usize>) -> Self {
        let f = |v: [&'a [Gf2p8]; 2]| [&v[0][r.clone()], &v[1][r.clone()]];
        TripleSlices {
            x: f(self.x),
            y: f(self.y),
            z: f(self.z),
        }
    }

    fn of(t: &'a Triples<Gf2p8>, r: Range<usize>) -> Result<Self, EngineError> {
        let get = |v: &'a Vec<Gf2p8>| {
            v.get(r.clone()).ok_or(EngineError::LengthMismatch {
                expected: r.end,
                got: v.len(),
            })
        };
        Ok(TripleSlices {
            x: [get(&t.x.first)?, get(&t.x.second)?],
            y: [get(&t.y.first)?, get(&t.y.second)?],
            z: [get(&t.z.first)?, get(&t.z.second)?],
        })
    }

    fn len(&self) -> usize {
        self.z[0].len()
    }
}

/// `out[k] = a[k] + b[k]` on the rayon pool.
fn sum_into(out: &mut [Gf2p8], a: &[Gf2p8], b: &[Gf2p8]) {
    out.par_chunks_mut(CHUNK)
        .zip(a.par_chunks(CHUNK).zip(b.par_chunks(CHUNK)))
        .for_each(|(o, (a, b))| {
            o.copy_from_slice(a);
            Gf2p8::add_assign_slice(o, b);
        });
}

/// Elements hashed per block of the streamed view updates: computed on the rayon pool, then
/// absorbed in order (the views are sequential hashes).
const BLOCK: usize = 1 << 18;

/// Absorbs the element-wise sum `a + b` into `view`, block by block (no large temporary).
fn absorb_sum(party: &mut Party<Malicious>, view: View, a: &[Gf2p8], b: &[Gf2p8]) {
    let mut buf = vec![Gf2p8::ZERO; BLOCK.min(a.len())];
    for (a, b) in a.chunks(BLOCK).zip(b.chunks(BLOCK)) {
        let out = &mut buf[..a.len()];
        sum_into(out, a, b);
        party.model().absorb(view, Gf2p8::slice_as_bytes(out));
    }
}

/// The message exchange of an opening towards the previous party (PROTOCOLS.md §5.3 steps 4
/// and 6): sends `msg` (this party's second components) to `P_{i-1}`, receives the missing
/// components from `P_{i+1}` and absorbs them into `V_next`.
///
/// Views (§5.1): the received component `x_{i-1}` was sent by `P_{i+1}` and is also
/// `P_{i-1}`'s first component, so it goes into `V_next`; the caller absorbs this party's own
/// first components into `V_prev` (which `P_{i+1}` compares with what it received from
/// `P_{i+2}`). The opened values are `first + second + missing`.
fn exchange_to_prev(party: &mut Party<Malicious>, msg: Vec<u8>) -> Result<Vec<u8>, EngineError> {
    let n = msg.len();
    party.send_bytes(Direction::Prev, msg)?;
    let missing = party.recv_bytes(Direction::Next, n)?;
    party.model().absorb(View::Next, &missing);
    Ok(missing)
}

/// Opens values towards the previous party: this party holds the components `first` and
/// `msg` (its second components, as bytes); see [`exchange_to_prev`].
fn open_to_prev(
    party: &mut Party<Malicious>,
    first: &[Gf2p8],
    msg: Vec<u8>,
) -> Result<Vec<Gf2p8>, EngineError> {
    let n = first.len();
    if msg.len() != n {
        return Err(EngineError::LengthMismatch {
            expected: n,
            got: msg.len(),
        });
    }
    let mut out = vec![Gf2p8::ZERO; n];
    sum_into(&mut out, first, Gf2p8::slice_from_bytes(&msg));
    party
        .model()
        .absorb(View::Prev, Gf2p8::slice_as_bytes(first));
    let missing = exchange_to_prev(party, msg)?;
    let missing = Gf2p8::slice_from_bytes(&missing);
    out.par_chunks_mut(CHUNK)
        .zip(missing.par_chunks(CHUNK))
        .for_each(|(o, m)| Gf2p8::add_assign_slice(o, m));
    Ok(out)
}

/// Step 4: opens the triples completely (one message, `a` then `b` then `c`) and returns this
/// party's local check that `ab = c` for all of them.
fn open_and_check(party: &mut Party<Malicious>, t: TripleSlices<'_>) -> Result<bool, EngineError> {
    let first: Vec<Gf2p8> = [t.x[0], t.y[0], t.z[0]].concat();
    let msg: Vec<u8> = [t.x[1], t.y[1], t.z[1]]
        .into_iter()
        .flatten()
        .map(|e| e.0)
        .collect();
    let v = open_to_prev(party, &first, msg)?;
    let n = t.len();
    let (a, rest) = v.split_at(n);
    let (b, c) = rest.split_at(n);
    Ok(a.iter().zip(b).zip(c).all(|((a, b), c)| *a * *b == *c))
}

/// Elements per work item of the sacrifice's zero check (stack buffers).
const ZETA_CHUNK: usize = 2048;

/// The zero-check values of one block of pairs (checked `(x, y, z)`, sacrificed `(a, b, c)`):
/// with `ρ = x + a` and `σ = y + b` opened (this party's components plus the `missing` ones
/// received for `ρ` and `σ`), this party's components of
/// `[[ζ]] = [[z]] + [[c]] + σ[[x]] + ρ[[y]] + ρσ`. The constant `ρσ` goes into `x_1` (`P1`'s
/// first, `P3`'s second component).
struct ZetaBlock<'a> {
    chk: TripleSlices<'a>,
    sac: TripleSlices<'a>,
    missing_rho: &'a [Gf2p8],
    missing_sigma: &'a [Gf2p8],
    /// Whether this party adds the constant to its first (`P1`) or second (`P3`) component.
    constant_in: [bool; 2],
}

impl ZetaBlock<'_> {
    /// Pairs `r` into `zeta` (resized to `r.len()`).
    fn compute(&self, r: Range<usize>, zeta: &mut RssVec<Gf2p8>) {
        zeta.first.resize(r.len(), Gf2p8::ZERO);
        zeta.second.resize(r.len(), Gf2p8::ZERO);
        zeta.first
            .par_chunks_mut(ZETA_CHUNK)
            .zip(zeta.second.par_chunks_mut(ZETA_CHUNK))
            .enumerate()
            .for_each(|(i, (z0, z1))| {
                let s = r.start + i * ZETA_CHUNK;
                self.compute_chunk(s..s + z0.len(), z0, z1);
            });
    }

    /// One chunk (at most [`ZETA_CHUNK`] pairs): the slices were checked to have equal
    /// lengths covering `r` by [`sacrifice`].
    fn compute_chunk(&self, r: Range<usize>, z0: &mut [Gf2p8], z1: &mut [Gf2p8]) {
        let n = z0.len();
        fn slice(v: &[Gf2p8], r: Range<usize>) -> &[Gf2p8] {
            &v[r]
        }
        let at = |v| slice(v, r.clone());
        let (c, s) = (&self.chk, &self.sac);
        let mut rho = [Gf2p8::ZERO; ZETA_CHUNK];
        let mut sigma = [Gf2p8::ZERO; ZETA_CHUNK];
        let mut rs = [Gf2p8::ZERO; ZETA_CHUNK];
        let (rho, sigma, rs) = (&mut rho[..n], &mut sigma[..n], &mut rs[..n]);
        rho.copy_from_slice(at(self.missing_rho));
        sigma.copy_from_slice(at(self.missing_sigma));
        for k in 0..2 {
            Gf2p8::add_assign_slice(rho, at(c.x[k]));
            Gf2p8::add_assign_slice(rho, at(s.x[k]));
            Gf2p8::add_assign_slice(sigma, at(c.y[k]));
            Gf2p8::add_assign_slice(sigma, at(s.y[k]));
        }
        Gf2p8::mul_slice(rs, rho, sigma);
        let component = |k: usize, out: &mut [Gf2p8]| {
            out.copy_from_slice(at(c.z[k]));
            Gf2p8::add_assign_slice(out, at(s.z[k]));
            Gf2p8::mul_add_slice(out, sigma, at(c.x[k]));
            Gf2p8::mul_add_slice(out, rho, at(c.y[k]));
            if self.constant_in[k] {
                Gf2p8::add_assign_slice(out, rs);
            }
        };
        component(0, z0);
        component(1, z1);
    }
}

/// A block of pairs (checked, sacrificed) of a [`sacrifice`]: both as slices, or the checked
/// triples rebuilt from an online chain (`layer`, product kind `seg`, positions `r`).
#[derive(Clone)]
enum PairBlock<'a> {
    Slices(TripleSlices<'a>, TripleSlices<'a>),
    Chain {
        layer: &'a ChainLayer,
        seg: usize,
        r: Range<usize>,
        sac: TripleSlices<'a>,
    },
}

impl<'a> PairBlock<'a> {
    fn len(&self) -> usize {
        match self {
            PairBlock::Slices(_, sac) | PairBlock::Chain { sac, .. } => sac.len(),
        }
    }

    /// The checked and the sacrificed triples (`buf` holds rebuilt ones; with `only`, a
    /// rebuilt block has just that part, [`ProductBlock::fill`]).
    fn pair<'b>(
        &'b self,
        buf: &'b mut ProductBlock,
        only: Option<usize>,
    ) -> (TripleSlices<'b>, TripleSlices<'b>) {
        match self {
            PairBlock::Slices(chk, sac) => (*chk, *sac),
            PairBlock::Chain { layer, seg, r, sac } => {
                (buf.fill(layer, *seg, r.clone(), only), *sac)
            }
        }
    }
}

/// Step 6 for groups of aligned pairs (checked `(x, y, z)`, sacrificed `(a, b, c)`): opens
/// `ρ = x + a` and `σ = y + b` for all pairs in one message to `P_{i-1}` (group by group, `ρ`
/// then `σ`; [`exchange_to_prev`]), then absorbs the zero check of
/// `[[ζ]] = [[z]] + [[c]] + σ[[x]] + ρ[[y]] + ρσ` (PROTOCOLS.md §5.1,
/// [`Party::absorb_zero_check`]) into the views. The caller runs the compare-view. Large
/// vectors: only the message and the received components are held whole; everything else is
/// streamed in blocks of at most [`BLOCK`] pairs (the views are sequential hashes, so
/// absorbing block by block is the same as absorbing everything at once, and a group's
/// blocks are one run of pairs).
fn sacrifice(
    party: &mut Party<Malicious>,
    groups: &[Vec<PairBlock<'_>>],
) -> Result<(), EngineError> {
    // Rebuilt blocks have their slice's length by construction.
    for block in groups.iter().flatten() {
        let PairBlock::Slices(chk, sac) = block else {
            continue;
        };
        let len = block.len();
        let all = [chk.x, chk.y, chk.z, sac.x, sac.y, sac.z];
        if let Some(bad) = all.iter().flatten().find(|v| v.len() != len) {
            return Err(EngineError::LengthMismatch {
                expected: len,
                got: bad.len(),
            });
        }
    }
    let mut buf = ProductBlock::default();
    let group_len = |g: &[PairBlock<'_>]| g.iter().map(PairBlock::len).sum::<usize>();
    let total: usize = groups.iter().map(|g| 2 * group_len(g)).sum();

    // This party's components of ρ and σ: first ones into V_prev, second ones sent.
    let mut msg = vec![0u8; total];
    let mut off = 0;
    for group in groups {
        for pick_y in [false, true] {
            for block in group {
                // Only the part this pass reads is rebuilt.
                let (chk, sac) = block.pair(&mut buf, Some(usize::from(pick_y)));
                let (c, s) = if pick_y {
                    (chk.y, sac.y)
                } else {
                    (chk.x, sac.x)
                };
                let len = block.len();
                absorb_sum(party, View::Prev, c[0], s[0]);
                sum_into(
                    Gf2p8::slice_from_bytes_mut(&mut msg[off..off + len]),
                    c[1],
                    s[1],
                );
                off += len;
            }
        }
    }
    let missing = exchange_to_prev(party, msg)?;
    let missing = Gf2p8::slice_from_bytes(&missing);

    // Zero checks, block by block.
    let id = party.id();
    let constant_in = [id == PartyId::P1, id == PartyId::P3];
    let mut zeta = RssVec::<Gf2p8>::zeros(0);
    let mut off = 0;
    for group in groups {
        let n = group_len(group);
        let (missing_rho, missing_sigma) = missing[off..off + 2 * n].split_at(n);
        off += 2 * n;
        let mut at = 0;
        for block in group {
            let len = block.len();
            let (chk, sac) = block.pair(&mut buf, None);
            let zb = ZetaBlock {
                chk,
                sac,
                missing_rho: &missing_rho[at..at + len],
                missing_sigma: &missing_sigma[at..at + len],
                constant_in,
            };
            for start in (0..len).step_by(BLOCK) {
                zb.compute(start..len.min(start + BLOCK), &mut zeta);
                party.absorb_zero_check(&zeta);
            }
            at += len;
        }
    }
    Ok(())
}

/// [`sacrifice`] of every online product of `chain` (in order) against `kept` (as many
/// triples), one group of blocks rebuilt from the chain's values (no recorded triples): the
/// same messages, views and zero checks as with the products as one slice.
fn sacrifice_chain(
    party: &mut Party<Malicious>,
    chain: &[ChainLayer],
    kept: TripleSlices<'_>,
    message_pairs: usize,
) -> Result<(), EngineError> {
    let total = kept.len();
    let mut blocks = Vec::new();
    let mut at = 0;
    for layer in chain {
        for seg in 0..4 {
            for start in (0..layer.len()).step_by(BLOCK) {
                let r = start..layer.len().min(start + BLOCK);
                let n = r.len();
                if at + n > total {
                    return Err(EngineError::LengthMismatch {
                        expected: total,
                        got: at + n,
                    });
                }
                let sac = kept.sub(at..at + n);
                blocks.push(PairBlock::Chain { layer, seg, r, sac });
                at += n;
            }
        }
    }
    if at != total {
        return Err(EngineError::LengthMismatch {
            expected: total,
            got: at,
        });
    }
    // Consecutive blocks, at most `message_pairs` pairs per message (a block larger than
    // that alone), each message with its own zero checks.
    let mut group = Vec::new();
    let mut pairs = 0;
    for block in blocks {
        if pairs > 0 && pairs + block.len() > message_pairs {
            sacrifice(party, &[core::mem::take(&mut group)])?;
            pairs = 0;
        }
        pairs += block.len();
        group.push(block);
    }
    sacrifice(party, &[group])
}

#[cfg(test)]
#[allow(clippy::expect_used)]
mod tests {
    use super::*;

    #[test]
    fn bucket_table_by_log2_of_the_bucket_count() {
        let p = |t| BucketParams::for_triples(t).map(|p| (p.buckets, p.bucket_size));
        // AES-128, one block: 640 triples.
        let one = BucketParams::for_triples(640).ok();
        assert_eq!(
            one,
            Some(BucketParams {
                buckets: 1024,
                bucket_size: 5,
                opened: 5,
                generated: 5125,
            })
        );
        assert_eq!(one.map(|p| p.bytes_to_prev()), Some(13_460));
        assert_eq!(one.map(|p| p.bytes_to_next()), Some(128));
        assert_eq!(p(1).ok(), Some((1024, 5)));
        assert_eq!(p(1024).ok(), Some((1024, 5)));
        assert_eq!(p(1025).ok(), Some((2048, 5)));
        for log in 10..=40u32 {
            let expected = match log {
                10..=12 => 5,
                13..=18 => 4,
                _ => 3,
            };
            let n = 1usize << log;
            assert_eq!(p(n).ok(), Some((n, expected)), "log2 N = {log}");
            assert_eq!(p(n / 2 + 1).ok(), Some((n, expected)), "log2 N = {log}");
        }
        // [DEV] by log2 N: the reference's lowest-set-bit index would give B = 5 for
        // n = 3 · 2^10 (N = 2^12) but also for n = 2^13 + 2^10 (N = 2^14), where we use 4.
        assert_eq!(p((1 << 13) + (1 << 10)).ok(), Some((1 << 14, 4)));
        assert!(BucketParams::for_triples(usize::MAX).is_err());
    }

    #[test]
    fn bucket_table_gives_40_bits() {
        let mut last = f64::INFINITY;
        for log in 10..=40u32 {
            let Ok(p) = BucketParams::for_triples(1 << log) else {
                panic!("parameters for 2^{log}");
            };
            let e = p.log2_cheating_bound();
            assert!(e <= -40.0, "log2 N = {log}: 2^{e}");
            if p.bucket_size == 3 {
                // Within one bucket size the bound only improves with N.
                assert!(e < last);
                last = e;
            }
        }
        // The tightest entry: N = 2^19, B = 3.
        let Ok(p) = BucketParams::for_triples(1 << 19) else {
            panic!("parameters for 2^19");
        };
        let e = p.log2_cheating_bound();
        assert!((-40.3..=-40.0).contains(&e), "{e}");
    }

    /// `max_k log2 f(k)`, `f(k) = binom(N, k) / binom(M, kB)`: the probability that a set of
    /// `kB` wrong triples fills exactly `k` buckets and avoids the opened ones.
    fn worst_bad_set(p: &BucketParams) -> (usize, f64) {
        let (n, b, m) = (p.buckets as f64, p.bucket_size as f64, p.generated as f64);
        let mut log_f = p.log2_cheating_bound();
        let mut best = (1, log_f);
        for k in 1..p.buckets {
            let kf = k as f64;
            // f(k+1)/f(k) = (N-k)/(k+1) · Π_{j<B} (kB+j+1)/(M-kB-j)
            log_f += ((n - kf) / (kf + 1.0)).log2();
            for j in 0..p.bucket_size {
                let j = j as f64;
                log_f += ((kf * b + j + 1.0) / (m - kf * b - j)).log2();
            }
            if log_f > best.1 {
                best = (k + 1, log_f);
            }
        }
        best
    }

    /// The runs cover exactly the triples asked for, in sizes no larger than needed,
    /// with a union bound of at most `2^-40`, from one block up to 10^6 AES-256 blocks (the
    /// issue's largest batch): a single run (the §5.3 parameters) up to `2^22` triples.
    #[test]
    fn runs_cover_the_triples_within_the_union_bound() {
        let aes256_blocks = |b: usize| 4 * 16 * 14 * b;
        let aes128_blocks = |b: usize| 4 * 16 * 10 * b;
        let sizes = [
            1,
            640,
            (1 << 22) - 1,
            1 << 22,
            (1 << 22) + 1,
            (1 << 22) + (1 << 19),
            aes128_blocks(6_554),
            aes128_blocks(100_000),
            aes128_blocks(250_000),
            aes128_blocks(1_000_000),
            aes256_blocks(1_000_000),
            3_000_000_001,
        ];
        let generated = |runs: &[Run]| runs.iter().map(|r| r.params.generated).sum::<usize>();
        let cap = 1usize << DEFAULT_RUN_LOG2;
        for count in sizes {
            let runs = plan_runs(count, DEFAULT_RUN_LOG2).unwrap();
            assert_eq!(runs.iter().map(|r| r.triples).sum::<usize>(), count);
            assert!(log2_total_bound(&runs) <= -40.0, "{count}");
            for r in &runs {
                assert_eq!(BucketParams::for_triples(r.triples).ok(), Some(r.params));
            }
            if count <= cap {
                assert_eq!(runs.len(), 1);
                continue;
            }
            // Never more generated triples, and at most one run more, than balanced runs of
            // at most 2^22 where those are within the bound (the earlier plan).
            let k = count.div_ceil(cap);
            let balanced: Vec<Run> = (0..k)
                .map(|i| {
                    let t = count / k + usize::from(i < count % k);
                    Run {
                        triples: t,
                        params: BucketParams::for_triples(t).unwrap(),
                    }
                })
                .collect();
            if log2_total_bound(&balanced) <= -40.0 {
                assert!(runs.iter().all(|r| r.triples <= cap), "{count}");
                assert!(generated(&runs) <= generated(&balanced), "{count}");
                assert!(runs.len() >= 2 && runs.len() <= k + 1, "{count}");
            }
        }
        // AES-128 at 100,000 blocks: 15 runs of 2^22, then the rest by its leading bit, 2^20
        // and 36,864 (N = 2^16); the balanced plan had 16 runs of N = 2^22, 4.6% more
        // generated triples (the single run had N = 2^26).
        let runs = plan_runs(aes128_blocks(100_000), DEFAULT_RUN_LOG2).unwrap();
        let buckets: Vec<usize> = runs.iter().map(|r| r.params.buckets).collect();
        assert_eq!(
            buckets,
            [[1 << 22; 15].as_slice(), &[1 << 20, 1 << 16]].concat()
        );
        assert_eq!(runs[16].triples, 36_864);
        let single = BucketParams::for_triples(aes128_blocks(100_000)).unwrap();
        assert!(100 * generated(&runs) < 96 * single.generated);
        // At 10,000 blocks: 2^22, 2^21, 2^17 instead of two runs of 2^22 (23% fewer).
        let runs = plan_runs(aes128_blocks(10_000), DEFAULT_RUN_LOG2).unwrap();
        let buckets: Vec<usize> = runs.iter().map(|r| r.params.buckets).collect();
        assert_eq!(buckets, [1 << 22, 1 << 21, 1 << 17]);
        assert!(
            100 * generated(&runs) < 78 * 2 * BucketParams::for_triples(cap).unwrap().generated
        );
        // At 250,000 blocks the single run rounded 1.6 * 10^8 up to N = 2^28; the runs
        // generate about 40% fewer triples.
        let runs = plan_runs(aes128_blocks(250_000), DEFAULT_RUN_LOG2).unwrap();
        let generated: usize = runs.iter().map(|r| r.params.generated).sum();
        let single = BucketParams::for_triples(aes128_blocks(250_000)).unwrap();
        assert!(10 * generated < 7 * single.generated);
        // 10^6 AES-256 blocks need bigger runs to stay within the bound.
        let runs = plan_runs(aes256_blocks(1_000_000), DEFAULT_RUN_LOG2).unwrap();
        assert!(runs.iter().all(|r| r.params.buckets == 1 << 23));
        // The smallest cap is 2^10; a small cap gives many runs, still within the bound.
        let runs = plan_runs(5 * 640, 0).unwrap();
        assert_eq!(runs.len(), 4);
        assert!(log2_total_bound(&runs) <= -40.0);
    }

    #[test]
    fn every_bad_set_size_is_within_the_bound() {
        for log in 10..=20u32 {
            let Ok(p) = BucketParams::for_triples(1 << log) else {
                panic!("parameters for 2^{log}");
            };
            let (k, worst) = worst_bad_set(&p);
            assert_eq!(k, 1, "log2 N = {log}: worst k = {k}");
            assert!(worst <= -40.0, "log2 N = {log}: 2^{worst}");
        }
    }

    #[test]
    fn shuffle_is_a_deterministic_permutation() {
        let key = PrgKey([7u8; 16]);
        let mut a: Vec<u32> = (0..10_000).collect();
        let mut b = a.clone();
        shuffle(&mut a, &key);
        shuffle(&mut b, &key);
        assert_eq!(a, b);
        assert_ne!(a, (0..10_000).collect::<Vec<u32>>());
        let mut sorted = a.clone();
        sorted.sort_unstable();
        assert_eq!(sorted, (0..10_000).collect::<Vec<u32>>());
        let mut c: Vec<u32> = (0..10_000).collect();
        shuffle(&mut c, &PrgKey([8u8; 16]));
        assert_ne!(a, c);
        // Trivial lengths.
        let mut one = [5u8];
        shuffle(&mut one, &key);
        assert_eq!(one, [5]);
        let mut none: [u8; 0] = [];
        shuffle(&mut none, &key);
    }

    #[test]
    fn buckets_follow_the_labels_in_index_order() {
        // Before the per-bucket shuffles, bucket b holds the positions labelled b, ascending.
        let n = 5000;
        let s = Shuffle::with_buckets(n, &PrgKey([3u8; 16]), 4, Vec::new());
        assert_eq!((s.starts.len(), s.keys.len()), (17, 16));
        assert_eq!((s.starts[0], s.starts[16]), (0, n));
        let mut out = vec![usize::MAX; n];
        s.scatter(&mut out, 0..n);
        for (b, w) in s.starts.windows(2).enumerate() {
            let expect: Vec<usize> = (0..n).filter(|&i| usize::from(s.labels[i]) == b).collect();
            assert_eq!(out[w[0]..w[1]], expect[..], "bucket {b}");
            // About n / 16 each (standard deviation about 17).
            assert!(
                (200..=430).contains(&expect.len()),
                "bucket {b}: {}",
                expect.len()
            );
        }
        // Then every bucket is permuted within its range only.
        s.finish(&mut out);
        for (b, w) in s.starts.windows(2).enumerate() {
            assert!(out[w[0]..w[1]]
                .iter()
                .all(|&i| usize::from(s.labels[i]) == b));
        }
        // Distinct bucket keys.
        let keys: std::collections::HashSet<[u8; 16]> = s.keys.iter().map(|k| k.0).collect();
        assert_eq!(keys.len(), 16);
    }

    #[test]
    fn bucket_counts_follow_the_batch_size() {
        let count = |n| Shuffle::new(n, &PrgKey([1u8; 16])).keys.len();
        assert_eq!(count(0), 1);
        assert_eq!(count(1 << 15), 1);
        assert_eq!(count((1 << 15) + 1), 2);
        assert_eq!(count(3 << 20), 1 << 7);
        assert_eq!(Shuffle::bucket_log((3 << 22) + 3), 9);
        assert_eq!(Shuffle::bucket_log(1 << 40), 16);
    }

    #[test]
    fn two_level_shuffle_is_uniform_on_small_sets() {
        // Four elements in one bucket (Fisher–Yates alone) and in four buckets (so most
        // buckets are empty or hold one element, and the scatter decides most of the order):
        // all 24 permutations about equally often (standard deviation about 31).
        for log_k in [0, 2] {
            let mut counts = std::collections::HashMap::new();
            for s in 0..24_000u32 {
                let mut k = [0u8; 16];
                k[..4].copy_from_slice(&s.to_le_bytes());
                let perm = Shuffle::with_buckets(4, &PrgKey(k), log_k, Vec::new());
                let mut v = [0u8; 4];
                perm.scatter(&mut v, 0..4u8);
                perm.finish(&mut v);
                *counts.entry(v).or_insert(0u32) += 1;
            }
            assert_eq!(counts.len(), 24);
            for (perm, c) in counts {
                assert!((850..=1150).contains(&c), "K = 2^{log_k}, {perm:?}: {c}");
            }
        }
    }

    #[test]
    fn bounded_draws_are_in_range_and_cover_it() {
        let mut tape = Tape::new(&PrgKey([1u8; 16]));
        for range in [1u64, 2, 3, 7, 1000, (1 << 63) + 1, u64::MAX] {
            for _ in 0..100 {
                assert!(tape.below(range) < range);
            }
        }
        let mut seen = [0u32; 6];
        for _ in 0..6000 {
            seen[tape.below(6) as usize] += 1;
        }
        assert!(seen.iter().all(|c| (850..=1150).contains(c)), "{seen:?}");
        for range in [1u64, 2, 3, 7, 1000, (1 << 31) + 1, 1 << 32] {
            for _ in 0..100 {
                assert!(tape.below32(range) < range);
            }
        }
        let mut seen = [0u32; 6];
        for _ in 0..6000 {
            seen[tape.below32(6) as usize] += 1;
        }
        assert!(seen.iter().all(|c| (850..=1150).contains(c)), "{seen:?}");
        // A range just above 2^31 rejects about half of the draws, and still covers both
        // halves evenly.
        let range = (1u64 << 31) + 1;
        let low = (0..2000)
            .filter(|_| tape.below32(range) < range / 2)
            .count();
        assert!((850..=1150).contains(&low), "{low}");
    }

    /// Runs `f` for three malicious parties over in-memory links.
    fn three<T: Send>(f: impl Fn(Party<Malicious>) -> T + Sync) -> [T; 3] {
        let nets = triskele_net::in_memory(&triskele_net::NetOptions::default());
        let f = &f;
        std::thread::scope(|s| {
            let hs: Vec<_> = nets
                .into_iter()
                .map(|n| s.spawn(move || f(Party::setup(n).expect("setup"))))
                .collect();
            let v: Vec<T> = hs.into_iter().map(|h| h.join().expect("party")).collect();
            v.try_into().ok().expect("three results")
        })
    }

    #[test]
    fn opening_to_prev_reconstructs_at_every_party() {
        use rand::SeedableRng;
        let mut rng = rand_chacha::ChaCha20Rng::seed_from_u64(3);
        let x: Vec<Gf2p8> = (0..=255u8).map(Gf2p8).collect();
        let xs = triskele_share::deal(&x, &mut rng);
        let outs = three(|mut p| {
            let s = &xs[p.id().index()];
            let msg = Gf2p8::slice_as_bytes(&s.second).to_vec();
            let v = open_to_prev(&mut p, &s.first, msg)?;
            p.compare_view()?;
            Ok::<_, EngineError>(v)
        });
        for o in outs {
            assert_eq!(o.ok().as_ref(), Some(&x));
        }
    }

    /// Two batches of triples with a consistent additive error `e_checked` in the checked
    /// product and `e_sacrificed` in the sacrificed one (both at index 3, in component 1, i.e.
    /// added by `P1` to its share of the product), sacrificed against each other.
    fn sacrifice_with_errors(e_checked: u8, e_sacrificed: u8) -> [Result<(), EngineError>; 3] {
        three(|mut p| {
            let id = p.id();
            let batch = |p: &mut Party<Malicious>, e: u8| {
                let x = p.random_rss::<Gf2p8>(10);
                let y = p.random_rss::<Gf2p8>(10);
                let mut z = p.mul_covered(&x, &y)?;
                match id {
                    PartyId::P1 => z.first[3].0 ^= e,
                    PartyId::P3 => z.second[3].0 ^= e,
                    PartyId::P2 => {}
                }
                Ok::<_, EngineError>(Triples { x, y, z })
            };
            let checked = batch(&mut p, e_checked)?;
            let sacrificed = batch(&mut p, e_sacrificed)?;
            let pair = (
                TripleSlices::of(&checked, 0..10)?,
                TripleSlices::of(&sacrificed, 0..10)?,
            );
            sacrifice(&mut p, &[vec![PairBlock::Slices(pair.0, pair.1)]])?;
            p.compare_view()
        })
    }

    #[test]
    fn sacrifice_passes_exactly_when_the_errors_are_equal() {
        for (ec, es) in [(0, 0), (0x10, 0), (0, 0x01), (0x10, 0x11)] {
            for r in sacrifice_with_errors(ec, es) {
                assert!(
                    matches!(r, Err(EngineError::Abort(_))) == (ec != es),
                    "errors {ec:#04x}, {es:#04x}: {r:?}"
                );
            }
        }
        // Equal errors cancel (characteristic 2): the reason why the checked triples come from
        // buckets of randomly assigned triples.
        for r in sacrifice_with_errors(0x5a, 0x5a) {
            assert!(r.is_ok(), "{r:?}");
        }
    }

    /// The fused shuffle and unpacking puts every triple where the buckets' Fisher–Yates
    /// shuffle of the whole array and the unpacking of steps 4 and 5 would (so the messages
    /// are those of the plain steps), for bucket sizes 3 to 5 and runs with one or several
    /// buckets, and refuses share vectors shorter than the run.
    #[test]
    fn fused_shuffle_and_unpack_match_the_plain_steps() {
        for (opened, n, bucket_size, log_k) in [
            (3, 1 << 14, 3, 2),
            (4, 5_000, 4, 3),
            (5, 2_000, 5, 0),
            (3, 40_000, 3, 4),
        ] {
            let stride = bucket_size - 1;
            let layout = Layout {
                ident: opened + n,
                n,
                stride,
            };
            let m = layout.len();
            let key = PrgKey([opened as u8; 16]);
            let word = |k: u64| k.wrapping_mul(0x9E37_79B9_7F4A_7C15) & 0xffff_ffff_ffff;
            let original: Vec<u64> = (0..m as u64).map(word).collect();
            let perm = Shuffle::with_buckets(m, &key, log_k, Vec::new());
            let mut scattered = vec![0u64; m];
            perm.scatter_u64(&mut scattered, original.iter().copied());
            let mut plain = vec![0u64; m];
            perm.scatter(&mut plain, original.iter().copied());
            assert!(scattered == plain, "the streaming scatter");
            let zeros = || Triples {
                x: RssVec::zeros(m),
                y: RssVec::zeros(m),
                z: RssVec::zeros(m),
            };
            // The plain steps: shuffle in place, then unpack region by region.
            let mut shuffled = scattered.clone();
            perm.finish(&mut shuffled);
            let mut want = zeros();
            unpack_into(&shuffled, 0, 1, &mut want, 0..layout.ident);
            for k in 0..stride {
                let dst = layout.ident + k * n;
                unpack_into(&shuffled, layout.ident + k, stride, &mut want, dst..dst + n);
            }
            let mut got = zeros();
            perm.finish_unpacked(&scattered, layout, &mut got).unwrap();
            assert!(
                (&got.x, &got.y, &got.z) == (&want.x, &want.y, &want.z),
                "C = {opened}, N = {n}, B = {bucket_size}, K = 2^{log_k}"
            );
            let mut short = zeros();
            short.z.second.pop();
            assert!(perm
                .finish_unpacked(&scattered, layout, &mut short)
                .is_err());
        }
    }

    #[test]
    fn pack_and_unpack_round_trip_with_stride() {
        let v = |s: u8| (0..10u8).map(|k| Gf2p8(k * 16 + s)).collect::<Vec<_>>();
        let rss = |s| RssVec {
            first: v(s),
            second: v(s + 1),
        };
        let (a, b, c) = (rss(0), rss(2), rss(4));
        let packed: Vec<u64> = packed_triples(&a, &b, &c).collect();
        let zeros = || Triples {
            x: RssVec::zeros(10),
            y: RssVec::zeros(10),
            z: RssVec::zeros(10),
        };
        let mut all = zeros();
        unpack_into(&packed, 0, 1, &mut all, 0..10);
        assert_eq!((&all.x, &all.y, &all.z), (&a, &b, &c));
        // Odd positions 1, 3, .., 9 into positions 2..7.
        let mut odd = zeros();
        unpack_into(&packed, 1, 2, &mut odd, 2..7);
        let pick = |r: &RssVec<Gf2p8>| {
            let f = |v: &[Gf2p8]| {
                let mut out = vec![Gf2p8::ZERO; 10];
                for (o, x) in out[2..7].iter_mut().zip(v.iter().skip(1).step_by(2)) {
                    *o = *x;
                }
                out
            };
            RssVec {
                first: f(&r.first),
                second: f(&r.second),
            }
        };
        assert_eq!((odd.x, odd.y, odd.z), (pick(&a), pick(&b), pick(&c)));
    }

    #[test]
    fn unpack_is_exact_across_chunk_and_run_boundaries() {
        // Word k holds six distinct bytes derived from k; positions 5.. of the destination
        // get words start, start + stride, ..; the rest stays zero.
        let n = 2 * CHUNK + 777;
        for (start, stride) in [(0, 1), (3, 2), (1, 3)] {
            let words = start + n * stride;
            let packed: Vec<u64> = (0..words as u64)
                .map(|k| k.wrapping_mul(0x9E37_79B9_7F4A_7C15) & 0xffff_ffff_ffff)
                .collect();
            let len = n + 9;
            let mut t = Triples {
                x: RssVec::zeros(len),
                y: RssVec::zeros(len),
                z: RssVec::zeros(len),
            };
            unpack_into(&packed, start, stride, &mut t, 5..5 + n);
            let outs = [
                &t.x.first,
                &t.x.second,
                &t.y.first,
                &t.y.second,
                &t.z.first,
                &t.z.second,
            ];
            for (byte, out) in outs.into_iter().enumerate() {
                let mut want = vec![Gf2p8::ZERO; len];
                for (j, w) in want[5..5 + n].iter_mut().enumerate() {
                    *w = Gf2p8(packed[start + j * stride].to_le_bytes()[byte]);
                }
                assert!(*out == want, "byte {byte}, start {start}, stride {stride}");
            }
        }
    }
}
