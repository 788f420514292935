//! Noise sampling: secrets and errors with standard deviation `sigma = 2`.
//!
//! Two samplers, both running in time independent of the values drawn:
//!
//! * [`NoiseDistribution::CenteredBinomial`] (the default): `sum of 8 bits -
//!   sum of 8 bits`, the centered binomial distribution `B(16, 1/2) - 8`. Its
//!   variance is exactly `16/4 = 4 = sigma^2`, its support is `[-8, 8]`. It is
//!   the substitute for a rounded Gaussian that NewHope and Kyber use in
//!   RLWE/MLWE key exchange: the hardness argument needs the right variance,
//!   not Gaussian tails, and the binomial is constant time by construction
//!   (a popcount), needs only 16 random bits per coefficient and no table.
//! * [`NoiseDistribution::DiscreteGaussian`]: the discrete Gaussian of
//!   parameter `sigma = 2` (probability proportional to `exp(-x^2/8)`),
//!   sampled with a cumulative distribution table (CDT) of 63-bit tail
//!   probabilities computed in code at first use. Every sample compares a
//!   fresh 63-bit random magnitude with *all* table entries (no early exit,
//!   no secret-dependent memory access), then applies the 64th random bit
//!   as its sign by masking. Entries are computed in `f64`, so the
//!   distribution is within about `2^-50` of the true one per sample; the
//!   tail is cut at `|x| <= 18`, beyond which probabilities are below
//!   `2^-63`.
//!
//! Randomness is drawn in blocks of `BLOCK_BYTES` = 512 bytes (256 binomial or 64
//! Gaussian coefficients at a time), read in place from the generator's
//! buffer of keystream (no copy; the generator overwrites it with new
//! keystream and wipes it when dropped), so a polynomial's kilobytes of
//! secret randomness are never copied, zeroed or wiped separately.
//!
//! Layout of a block (little-endian words):
//!
//! * binomial: coefficient `i` is `popcount(rand[i]) -
//!   popcount(rand[256 + i])`;
//! * Gaussian: coefficient `k` takes the 32-bit words `lo = rand[4k..]` and
//!   `hi = rand[256 + 4k..]`; its magnitude is the number of table entries
//!   above `(hi mod 2^31) * 2^32 + lo`, its sign bit is bit 31 of `hi`.
//!   Keeping the low and the high halves apart lets both backends compare
//!   eight magnitudes at a time with 32-bit lanes.
//!
//! Backends: the portable code below (byte-wise SWAR popcount; the 63-bit
//! comparisons split into 32-bit halves, both vectorized by LLVM across
//! coefficients), on x86-64 with AVX2 `sample_avx2` (intrinsics), and with
//! AVX-512 `sample_avx512` for the Gaussian (a binary search over 32-bit
//! keys of the table's entries in two registers, a polynomial's blocks per
//! call; the binomial stays on AVX2, where the PRG that feeds it costs more
//! than it does), chosen with the NTT's
//! [`super::ntt::Backend`], so `TRISKELE_BACKEND=portable` forces the
//! portable samplers too. All give the same coefficients from the same
//! random bytes.

use super::ntt::{on_backend, Backend};
use super::ring::{Poly, N};
use crate::prg::Prg;
use std::sync::OnceLock;

/// Which noise distribution the RLWE protocols sample secrets and errors from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum NoiseDistribution {
    /// Centered binomial `B(16, 1/2) - 8`, variance 4 (sigma = 2).
    #[default]
    CenteredBinomial,
    /// Discrete Gaussian with sigma = 2, constant-time CDT sampler.
    DiscreteGaussian,
}

/// Number of CDT entries: `CDT[i] = floor(2^63 * P(|X| > i))`.
pub(crate) const CDT_LEN: usize = 20;

/// `2^63` as `f64`.
const TWO_POW_63: f64 = 9_223_372_036_854_775_808.0;

/// The CDT for sigma = 2, computed at first use.
pub(crate) fn cdt() -> &'static [u64; CDT_LEN] {
    static TABLE: OnceLock<[u64; CDT_LEN]> = OnceLock::new();
    TABLE.get_or_init(|| {
        let rho = |x: f64| (-x * x / 8.0).exp();
        // Normaliser over a support wide enough that the rest is < 2^-200.
        let mut total = rho(0.0);
        for x in 1..64 {
            total += 2.0 * rho(f64::from(x));
        }
        let mut t = [0u64; CDT_LEN];
        for (i, slot) in t.iter_mut().enumerate() {
            // P(|X| > i), summed from the small end for accuracy.
            let mut tail = 0.0;
            for x in (i + 1..64).rev() {
                tail += 2.0 * rho(x as f64);
            }
            let p = tail / total;
            // 2^63 * p < 2^63 since p < 1; `as` saturates anyway.
            *slot = (p * TWO_POW_63) as u64;
        }
        t
    })
}

/// Random bytes per sampling block.
pub(crate) const BLOCK_BYTES: usize = 512;

/// Coefficients per binomial block: 8 "positive" and 8 "negative" bits each.
pub(crate) const BINOMIAL_BLOCK: usize = BLOCK_BYTES / 2;

/// Coefficients per Gaussian block: one 64-bit word each.
pub(crate) const GAUSSIAN_BLOCK: usize = BLOCK_BYTES / 8;

/// SWAR popcount of a byte (0..=8): plain shifts, masks and adds, which
/// LLVM vectorizes across the bytes of a block.
#[inline(always)]
fn popcount_byte(x: u8) -> u8 {
    let x = x - ((x >> 1) & 0x55);
    let x = (x & 0x33) + ((x >> 2) & 0x33);
    (x + (x >> 4)) & 0x0f
}

/// Coefficient `i` is `(popcount(rand[i]) - popcount(rand[256 + i])) * scale`.
pub(crate) fn binomial_portable(
    rand: &[u8; BLOCK_BYTES],
    scale: i16,
    out: &mut [i16; BINOMIAL_BLOCK],
) {
    let (pos, neg) = rand.split_at(BINOMIAL_BLOCK);
    for ((o, &p), &n) in out.iter_mut().zip(pos).zip(neg) {
        *o = (i16::from(popcount_byte(p)) - i16::from(popcount_byte(n))) * scale;
    }
}

/// [`binomial_portable`] on `backend` (AVX2 code on the AVX2 and AVX-512
/// backends).
fn binomial(
    backend: Backend,
    rand: &[u8; BLOCK_BYTES],
    scale: i16,
    out: &mut [i16; BINOMIAL_BLOCK],
) {
    #[cfg(target_arch = "x86_64")]
    if let Some(t) = backend.avx2() {
        return t.binomial(rand, scale, out);
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = backend;
    binomial_portable(rand, scale, out);
}

/// The sign flip of 32-bit words that turns unsigned order into signed order.
pub(crate) const FLIP: u32 = 1 << 31;

/// The halves of a table entry (below `2^63`) as compared by the samplers:
/// the high half (below `2^31`, so non-negative as `i32`) and the low half
/// with [`FLIP`] applied.
#[inline(always)]
pub(crate) fn entry_halves(t: u64) -> (i32, i32) {
    ((t >> 32) as i32, (t as u32 ^ FLIP) as i32)
}

/// Coefficient `k` is `±|x_k| * scale`, `|x_k|` the number of table entries
/// above the 63-bit magnitude of word `k` (see the module documentation for
/// the layout). Every magnitude meets every entry: `m < t` is `hi(m) <
/// hi(t)`, or equal high halves and `lo(m) < lo(t)`, with the low halves
/// flipped so that signed 32-bit compares apply (SSE2 has no unsigned or
/// 64-bit compare); table-major over the block, so that LLVM vectorizes
/// across words.
pub(crate) fn gaussian_portable(
    rand: &[u8; BLOCK_BYTES],
    table: &[u64; CDT_LEN],
    scale: i16,
    out: &mut [i16; GAUSSIAN_BLOCK],
) {
    let (lo, hi) = rand.split_at(BLOCK_BYTES / 2);
    let mut h = [0i32; GAUSSIAN_BLOCK];
    let mut l = [0i32; GAUSSIAN_BLOCK];
    let mut neg = [0i16; GAUSSIAN_BLOCK];
    for (k, (lo, hi)) in lo
        .as_chunks::<4>()
        .0
        .iter()
        .zip(hi.as_chunks::<4>().0)
        .enumerate()
    {
        let hw = u32::from_le_bytes(*hi);
        h[k] = (hw & !FLIP) as i32;
        neg[k] = -((hw >> 31) as i16);
        l[k] = (u32::from_le_bytes(*lo) ^ FLIP) as i32;
    }
    let mut c = [0i16; GAUSSIAN_BLOCK];
    for &t in table.iter() {
        let (th, tl) = entry_halves(t);
        for ((c, &h), &l) in c.iter_mut().zip(h.iter()).zip(l.iter()) {
            *c += i16::from((h < th) | ((h == th) & (l < tl)));
        }
    }
    for ((o, &c), &s) in out.iter_mut().zip(c.iter()).zip(neg.iter()) {
        *o = ((c ^ s) - s) * scale;
    }
    h.fill(0);
    l.fill(0);
    neg.fill(0);
    c.fill(0);
    core::hint::black_box((&mut h, &mut l, &mut neg, &mut c));
}

/// [`gaussian_portable`] with the table [`cdt`] on `backend`, for each
/// block of `rand` and of `out`.
fn gaussian(
    backend: Backend,
    rand: &[[u8; BLOCK_BYTES]],
    scale: i16,
    out: &mut [[i16; GAUSSIAN_BLOCK]],
) {
    on_backend!(
        backend,
        |t| t.gaussian_blocks(rand, scale, out),
        for (r, o) in rand.iter().zip(out) {
            gaussian_portable(r, cdt(), scale, o)
        }
    )
}

/// Bytes of randomness of a binomial polynomial.
const BINOMIAL_BYTES: usize = N / BINOMIAL_BLOCK * BLOCK_BYTES;

/// Bytes of randomness of a Gaussian polynomial.
const GAUSSIAN_BYTES: usize = N / GAUSSIAN_BLOCK * BLOCK_BYTES;

/// Samples coefficients drawn from `dist`, multiplied by `scale` (1 for
/// secrets, 2 for the errors of Ding's key exchange), straight into `out`
/// (every coefficient is written; `out` is usually the array of the
/// polynomial that keeps them, so that no copy is left to wipe). The
/// polynomial's randomness is read in place from the generator's buffer,
/// `BLOCK_BYTES` per block of coefficients.
pub(crate) fn sample_into(dist: NoiseDistribution, prg: &mut Prg, scale: i16, out: &mut [i16; N]) {
    let b = Backend::current();
    match dist {
        NoiseDistribution::CenteredBinomial => {
            let rand = prg.block::<BINOMIAL_BYTES>().as_chunks().0;
            for (r, o) in rand.iter().zip(out.as_chunks_mut().0) {
                binomial(b, r, scale, o);
            }
        }
        NoiseDistribution::DiscreteGaussian => {
            let rand = prg.block::<GAUSSIAN_BYTES>().as_chunks().0;
            gaussian(b, rand, scale, out.as_chunks_mut().0);
        }
    }
}

/// [`sample_into`] a new polynomial.
pub(crate) fn sample_poly(dist: NoiseDistribution, prg: &mut Prg, scale: i16) -> Poly {
    let mut p = Poly::zero();
    sample_into(dist, prg, scale, &mut p.0);
    p
}

#[cfg(test)]
pub(crate) mod tests {
    #![allow(
        clippy::unwrap_used,
        clippy::expect_used,
        clippy::panic,
        clippy::needless_range_loop
    )]
    use super::*;

    fn collect(dist: NoiseDistribution, polys: usize) -> Vec<i64> {
        let mut prg = Prg::from_seed(&[42; 32]);
        let mut v = Vec::with_capacity(polys * N);
        for _ in 0..polys {
            let p = sample_poly(dist, &mut prg, 1);
            v.extend(p.0.iter().map(|&x| i64::from(x)));
        }
        v
    }

    /// Mean, variance, tail and a chi-square goodness-of-fit test against the
    /// target probability mass function.
    fn check_distribution(dist: NoiseDistribution, pmf: &dyn Fn(i64) -> f64, max_abs: i64) {
        let samples = collect(dist, 400); // 204,800 samples
        let n = samples.len() as f64;
        let mean = samples.iter().sum::<i64>() as f64 / n;
        let var = samples
            .iter()
            .map(|&x| (x as f64 - mean).powi(2))
            .sum::<f64>()
            / n;
        // Standard error of the mean is 2/sqrt(n) ~ 0.0044; allow 5 of them.
        assert!(mean.abs() < 0.023, "mean {mean}");
        // Standard error of the variance is about sqrt(2*16/n) ~ 0.0125.
        assert!((var - 4.0).abs() < 0.07, "variance {var}");
        assert!(samples.iter().all(|x| x.abs() <= max_abs));
        // Tail: P(|X| >= 7) is about 8e-4 for both distributions.
        let tail = samples.iter().filter(|x| x.abs() >= 7).count() as f64 / n;
        let want: f64 = (7..=max_abs).map(|x| 2.0 * pmf(x)).sum();
        assert!(
            (tail - want).abs() < 5.0 * (want / n).sqrt() + 1e-6,
            "tail {tail} vs {want}"
        );
        // Chi-square over the cells -6..=6 plus the two tails (15 cells, 14 dof).
        let mut chi2 = 0.0;
        let mut cells: Vec<(f64, f64)> = Vec::new();
        for x in -6..=6 {
            let obs = samples.iter().filter(|&&s| s == x).count() as f64;
            cells.push((obs, n * pmf(x)));
        }
        let lo = samples.iter().filter(|&&s| s < -6).count() as f64;
        let hi = samples.iter().filter(|&&s| s > 6).count() as f64;
        let tail_p: f64 = (7..=max_abs).map(pmf).sum();
        cells.push((lo, n * tail_p));
        cells.push((hi, n * tail_p));
        for (obs, exp) in cells {
            chi2 += (obs - exp).powi(2) / exp;
        }
        // 99.99th percentile of chi-square with 14 degrees of freedom is ~ 42.6.
        assert!(chi2 < 42.6, "chi2 {chi2}");
    }

    #[test]
    fn binomial_statistics() {
        let pmf = |x: i64| -> f64 {
            if x.abs() > 8 {
                return 0.0;
            }
            let k = (x + 8) as u32;
            let mut c = 1.0;
            for i in 0..k {
                c = c * f64::from(16 - i) / f64::from(i + 1);
            }
            c / 65536.0
        };
        check_distribution(NoiseDistribution::CenteredBinomial, &pmf, 8);
    }

    #[test]
    fn gaussian_statistics() {
        let rho = |x: i64| (-(x * x) as f64 / 8.0).exp();
        let total: f64 = (-64..=64).map(rho).sum();
        let pmf = move |x: i64| rho(x) / total;
        check_distribution(NoiseDistribution::DiscreteGaussian, &pmf, 18);
    }

    #[test]
    fn cdt_table_shape() {
        let t = cdt();
        assert!(t.windows(2).all(|w| w[0] >= w[1]));
        assert!(t[0] < 1 << 63);
        assert_eq!(t[CDT_LEN - 1], 0, "tail beyond 18 is below 2^-63");
        assert!(t[18] == 0 && t[17] > 0);
        // P(|X| > 0) = 1 - 1/Z with Z ~ sqrt(8 pi) ~ 5.013.
        let p0 = t[0] as f64 / TWO_POW_63;
        assert!((p0 - (1.0 - 1.0 / 5.013_256_549)).abs() < 1e-6, "{p0}");
        // The AVX2 sampler relies on this: a magnitude's high half equals the
        // high half of at most one entry whose high half is not 0.
        let highs: Vec<u64> = t.iter().map(|&e| e >> 32).filter(|&h| h != 0).collect();
        assert!(highs.windows(2).all(|w| w[0] > w[1]), "{highs:?}");
        assert!(highs.len() < CDT_LEN && t.iter().any(|&e| e >> 32 == 0 && e != 0));
    }

    /// Writes magnitude `m` (below `2^63`) and sign `neg` as word `k` of a
    /// Gaussian block.
    pub(crate) fn put_word(rand: &mut [u8; BLOCK_BYTES], k: usize, m: u64, neg: bool) {
        let hi = (m >> 32) as u32 | (u32::from(neg) << 31);
        rand[4 * k..4 * k + 4].copy_from_slice(&(m as u32).to_le_bytes());
        rand[BLOCK_BYTES / 2 + 4 * k..][..4].copy_from_slice(&hi.to_le_bytes());
    }

    /// Magnitudes that stress the comparison: every table entry, one above
    /// and one below it, the same high half with the low half at its
    /// extremes, and the ends of the range.
    pub(crate) fn edge_magnitudes() -> Vec<u64> {
        const MAX: u64 = (1 << 63) - 1;
        let mut edge = vec![0u64, 1, MAX, MAX - 1, 1 << 62, 0xffff_ffff, 1 << 32];
        for &e in cdt().iter() {
            edge.extend([e, e + 1, e.saturating_sub(1)]);
            edge.extend([e & !0xffff_ffff, e | 0xffff_ffff]);
        }
        edge
    }

    /// Edge and random magnitudes with both signs: the portable sampler gives
    /// `±(number of entries above the magnitude) * scale`.
    #[test]
    fn gaussian_portable_matches_definition() {
        let table = cdt();
        let edge = edge_magnitudes();
        let mut prg = Prg::from_seed(&[13; 32]);
        for round in 0..60 {
            let mut want = [0i16; GAUSSIAN_BLOCK];
            let mut rand = [0u8; BLOCK_BYTES];
            for (k, w) in want.iter_mut().enumerate() {
                let r = u64::from_le_bytes(prg.gen_32()[..8].try_into().unwrap());
                let m = match round {
                    0..=19 => edge[(k + 7 * round) % edge.len()],
                    // Small magnitudes reach the deep tail entries.
                    20..=39 => (r >> 1) >> (r % 63),
                    _ => r >> 1,
                };
                let neg = (r ^ (k as u64)) & 1 == 1;
                put_word(&mut rand, k, m, neg);
                let mag = table.iter().filter(|&&t| m < t).count() as i16;
                *w = if neg { -mag } else { mag };
            }
            for scale in [1, 2, -3] {
                let mut got = [0i16; GAUSSIAN_BLOCK];
                gaussian_portable(&rand, table, scale, &mut got);
                let want = want.map(|w| w * scale);
                assert_eq!(got, want, "round {round}, scale {scale}");
            }
        }
    }

    /// The portable binomial sampler against `count_ones`.
    #[test]
    fn binomial_portable_matches_definition() {
        let mut prg = Prg::from_seed(&[14; 32]);
        let mut rand = [0u8; BLOCK_BYTES];
        for _ in 0..20 {
            prg.fill_bytes(&mut rand);
            let mut got = [0i16; BINOMIAL_BLOCK];
            binomial_portable(&rand, 2, &mut got);
            for i in 0..BINOMIAL_BLOCK {
                let want =
                    rand[i].count_ones() as i16 - rand[BINOMIAL_BLOCK + i].count_ones() as i16;
                assert_eq!(got[i], 2 * want);
            }
        }
    }

    /// The samplers' output for fixed seeds, on whichever backend runs
    /// (also run with `TRISKELE_BACKEND=portable`): the BLAKE3 hash of the
    /// coefficients, recorded when the samplers took their randomness in
    /// blocks (a new layout of the random bytes; both backends agreed), so
    /// that the PRG stream and the sampled coefficients stay unchanged.
    #[test]
    fn outputs_unchanged() {
        let mut h = blake3::Hasher::new();
        for seed in 0..50u8 {
            let mut prg = Prg::from_seed(&[seed; 32]);
            // Leaves the PRG's buffer partly used, as in the protocols.
            let _ = prg.gen_bit();
            for d in [
                NoiseDistribution::CenteredBinomial,
                NoiseDistribution::DiscreteGaussian,
            ] {
                for scale in [1, 2] {
                    for c in sample_poly(d, &mut prg, scale).0.iter() {
                        h.update(&c.to_le_bytes());
                    }
                }
            }
        }
        assert_eq!(
            h.finalize().to_hex().as_str(),
            "1182c4c1b0b5391a84a0b0aaa23cbd060f0167c7093e78bf38285c495f73657b"
        );
    }

    /// The binomial sampler of every backend this CPU runs gives the
    /// portable coefficients, on extreme and random blocks.
    #[test]
    fn binomial_backends_agree() {
        for backend in crate::rlwe::ntt::tests::skip_missing() {
            let mut prg = Prg::from_seed(&[11; 32]);
            let mut rand = [0u8; BLOCK_BYTES];
            for round in 0..200 {
                match round {
                    0 => rand.fill(0),
                    1 => rand.fill(0xff),
                    2 => rand[..BINOMIAL_BLOCK].fill(0xff),
                    3 => rand[BINOMIAL_BLOCK..].fill(0),
                    _ => prg.fill_bytes(&mut rand),
                }
                for scale in [1, 2, -3] {
                    let mut want = [0i16; BINOMIAL_BLOCK];
                    let mut got = [0i16; BINOMIAL_BLOCK];
                    binomial_portable(&rand, scale, &mut want);
                    binomial(backend, &rand, scale, &mut got);
                    assert_eq!(want, got, "{backend}, round {round}, scale {scale}");
                }
            }
        }
    }

    /// The Gaussian sampler of every backend this CPU runs gives the
    /// portable coefficients: edge magnitudes at every position (shifted
    /// each round), with random signs; then random blocks.
    #[test]
    fn gaussian_backends_agree() {
        let table = cdt();
        let edge = edge_magnitudes();
        for backend in crate::rlwe::ntt::tests::skip_missing() {
            let mut prg = Prg::from_seed(&[12; 32]);
            let mut rand = [0u8; BLOCK_BYTES];
            for round in 0..300 {
                prg.fill_bytes(&mut rand);
                if round < 60 {
                    let signs = prg.gen_32();
                    for k in 0..GAUSSIAN_BLOCK {
                        let neg = signs[k / 8] >> (k % 8) & 1 == 1;
                        put_word(&mut rand, k, edge[(k + round) % edge.len()], neg);
                    }
                }
                for scale in [1, 2, -3] {
                    let mut want = [0i16; GAUSSIAN_BLOCK];
                    let mut got = [0i16; GAUSSIAN_BLOCK];
                    gaussian_portable(&rand, table, scale, &mut want);
                    gaussian(
                        backend,
                        core::slice::from_ref(&rand),
                        scale,
                        core::slice::from_mut(&mut got),
                    );
                    assert_eq!(want, got, "{backend}, round {round}, scale {scale}");
                }
            }
        }
    }

    /// A polynomial's blocks in one call (the table set up once) give the
    /// coefficients of the portable sampler run block by block, on every
    /// backend this CPU runs.
    #[test]
    fn gaussian_blocks_in_one_call() {
        const BLOCKS: usize = N / GAUSSIAN_BLOCK;
        let table = cdt();
        for backend in crate::rlwe::ntt::tests::skip_missing() {
            let mut prg = Prg::from_seed(&[15; 32]);
            for round in 0..40 {
                let mut rand = [[0u8; BLOCK_BYTES]; BLOCKS];
                for r in rand.iter_mut() {
                    prg.fill_bytes(r);
                }
                let scale = [1, 2, -3][round % 3];
                let mut want = [[0i16; GAUSSIAN_BLOCK]; BLOCKS];
                for (r, w) in rand.iter().zip(want.iter_mut()) {
                    gaussian_portable(r, table, scale, w);
                }
                let mut got = [[0i16; GAUSSIAN_BLOCK]; BLOCKS];
                gaussian(backend, &rand, scale, &mut got);
                assert_eq!(want, got, "{backend}, round {round}");
            }
        }
    }

    #[test]
    fn scale_two_doubles() {
        let mut a = Prg::from_seed(&[1; 32]);
        let mut b = Prg::from_seed(&[1; 32]);
        for dist in [
            NoiseDistribution::CenteredBinomial,
            NoiseDistribution::DiscreteGaussian,
        ] {
            let x = sample_poly(dist, &mut a, 1);
            let y = sample_poly(dist, &mut b, 2);
            assert!(x.0.iter().zip(y.0.iter()).all(|(&u, &v)| 2 * u == v));
        }
    }
}
