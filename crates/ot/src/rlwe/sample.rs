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
//!   Coefficient `i` is `popcount(rand[i]) - popcount(rand[N + i])` of
//!   `2 N` random bytes.
//! * [`NoiseDistribution::DiscreteGaussian`]: the discrete Gaussian of
//!   parameter `sigma = 2` (probability proportional to `exp(-x^2/8)`),
//!   sampled with a cumulative distribution table (CDT) of 64-bit tail
//!   probabilities computed in code at first use. Every sample compares a
//!   fresh 64-bit random word with *all* table entries (no early exit, no
//!   secret-dependent memory access), then applies a random sign by
//!   masking. Entries are computed in `f64`, so the distribution is within
//!   about `2^-50` of the true one per sample; the tail is cut at
//!   `|x| <= 18`, beyond which probabilities are below `2^-64`.
//!
//! Backends: the portable code below (byte-wise SWAR popcount; the 64-bit
//! comparisons split into 32-bit halves, both vectorized by LLVM across
//! coefficients), and on x86-64 with AVX2 `sample_avx2`
//! (intrinsics), chosen with the NTT's [`super::ntt::Backend`], so
//! `TRISKELE_BACKEND=portable` forces the portable samplers too. Both give
//! the same coefficients from the same random bytes.

use super::ring::{Poly, N};
use crate::prg::wipe_bytes;
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

/// Number of CDT entries: `CDT[i] = floor(2^64 * P(|X| > i))`.
pub(crate) const CDT_LEN: usize = 20;

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
            // 2^64 * p < 2^64 since p < 1; `as` saturates anyway.
            *slot = (p * 18_446_744_073_709_551_616.0) as u64;
        }
        t
    })
}

/// Random bytes per binomial polynomial: 8 "positive" and 8 "negative" bits
/// per coefficient, `pos = rand[..N]` and `neg = rand[N..]`.
pub(crate) const BINOMIAL_BYTES: usize = 2 * N;

/// Random bytes per Gaussian polynomial: one little-endian 64-bit word per
/// coefficient, then one sign bit per coefficient (bit `i % 8` of byte
/// `8 N + i / 8`).
pub(crate) const GAUSSIAN_BYTES: usize = 8 * N + N / 8;

/// SWAR popcount of a byte (0..=8): plain shifts, masks and adds, which
/// LLVM vectorizes across the bytes of a polynomial.
#[inline(always)]
fn popcount_byte(x: u8) -> u8 {
    let x = x - ((x >> 1) & 0x55);
    let x = (x & 0x33) + ((x >> 2) & 0x33);
    (x + (x >> 4)) & 0x0f
}

/// Coefficient `i` is `(popcount(pos[i]) - popcount(neg[i])) * scale`.
pub(crate) fn binomial_portable(rand: &[u8; BINOMIAL_BYTES], scale: i16, out: &mut [i16; N]) {
    let (pos, neg) = rand.split_at(N);
    for ((o, &p), &n) in out.iter_mut().zip(pos).zip(neg) {
        *o = (i16::from(popcount_byte(p)) - i16::from(popcount_byte(n))) * scale;
    }
}

fn sample_binomial(prg: &mut Prg, scale: i16, out: &mut [i16; N]) {
    let mut rand = [0u8; BINOMIAL_BYTES];
    prg.fill_bytes(&mut rand);
    binomial(&rand, scale, out);
    wipe_bytes(&mut rand);
}

fn binomial(rand: &[u8; BINOMIAL_BYTES], scale: i16, out: &mut [i16; N]) {
    #[cfg(target_arch = "x86_64")]
    if let Some(t) = super::ntt::avx2() {
        return t.binomial(rand, scale, out);
    }
    binomial_portable(rand, scale, out);
}

/// `|x|` for each 64-bit random word: the number of table entries above it.
/// Every word meets every entry (constant time: no early exit, no
/// secret-dependent branch or index). Each 64-bit `w < t` is split into
/// 32-bit halves, `hi(w) < hi(t)`, or equal high halves and `lo(w) < lo(t)`,
/// with both halves bias-flipped so that signed 32-bit compares apply
/// (SSE2 has no 64-bit compare); blocks of 64 words, table-major inside a
/// block, so that LLVM vectorizes across words.
pub(crate) fn cdt_magnitudes_body(words: &[u64; N], table: &[u64; CDT_LEN], out: &mut [i16; N]) {
    const BLOCK: usize = 64;
    const FLIP: u32 = 1 << 31;
    let hi = |x: u64| ((x >> 32) as u32 ^ FLIP) as i32;
    let lo = |x: u64| (x as u32 ^ FLIP) as i32;
    for (ob, wb) in out.chunks_exact_mut(BLOCK).zip(words.chunks_exact(BLOCK)) {
        let mut h = [0i32; BLOCK];
        let mut l = [0i32; BLOCK];
        for ((h, l), &w) in h.iter_mut().zip(l.iter_mut()).zip(wb) {
            *h = hi(w);
            *l = lo(w);
        }
        let mut c = [0i32; BLOCK];
        for &t in table.iter() {
            let (th, tl) = (hi(t), lo(t));
            for ((c, &h), &l) in c.iter_mut().zip(h.iter()).zip(l.iter()) {
                *c += i32::from((h < th) | ((h == th) & (l < tl)));
            }
        }
        for (o, &c) in ob.iter_mut().zip(c.iter()) {
            *o = c as i16;
        }
        h.fill(0);
        l.fill(0);
        c.fill(0);
        core::hint::black_box((&mut h, &mut l, &mut c));
    }
}

/// The portable Gaussian sampler on `GAUSSIAN_BYTES` random bytes.
pub(crate) fn gaussian_portable(
    rand: &[u8; GAUSSIAN_BYTES],
    table: &[u64; CDT_LEN],
    scale: i16,
    out: &mut [i16; N],
) {
    let (bytes, signs) = rand.split_at(8 * N);
    let mut words = [0u64; N];
    for (w, b) in words.iter_mut().zip(bytes.as_chunks::<8>().0) {
        *w = u64::from_le_bytes(*b);
    }
    cdt_magnitudes_body(&words, table, out);
    // Coefficient `8 k + j` takes bit `j` of sign byte `k`.
    const BITS: [u8; 8] = [1, 2, 4, 8, 16, 32, 64, 128];
    for (o8, &s) in out.chunks_exact_mut(8).zip(signs) {
        for (o, &bit) in o8.iter_mut().zip(BITS.iter()) {
            let sign = -i16::from(s & bit != 0);
            *o = ((*o ^ sign) - sign) * scale;
        }
    }
    words.fill(0);
    core::hint::black_box(&mut words);
}

fn sample_gaussian(prg: &mut Prg, scale: i16, out: &mut [i16; N]) {
    let mut rand = [0u8; GAUSSIAN_BYTES];
    prg.fill_bytes(&mut rand);
    gaussian(&rand, scale, out);
    wipe_bytes(&mut rand);
}

fn gaussian(rand: &[u8; GAUSSIAN_BYTES], scale: i16, out: &mut [i16; N]) {
    #[cfg(target_arch = "x86_64")]
    if let Some(t) = super::ntt::avx2() {
        return t.gaussian(rand, cdt(), scale, out);
    }
    gaussian_portable(rand, cdt(), scale, out);
}

/// Samples coefficients drawn from `dist`, multiplied by `scale` (1 for
/// secrets, 2 for the errors of Ding's key exchange), straight into `out`
/// (every coefficient is written; `out` is usually the array of the
/// polynomial that keeps them, so that no copy is left to wipe).
pub(crate) fn sample_into(dist: NoiseDistribution, prg: &mut Prg, scale: i16, out: &mut [i16; N]) {
    match dist {
        NoiseDistribution::CenteredBinomial => sample_binomial(prg, scale, out),
        NoiseDistribution::DiscreteGaussian => sample_gaussian(prg, scale, out),
    }
}

/// [`sample_into`] a new polynomial.
pub(crate) fn sample_poly(dist: NoiseDistribution, prg: &mut Prg, scale: i16) -> Poly {
    let mut p = Poly::zero();
    sample_into(dist, prg, scale, &mut p.0);
    p
}

#[cfg(test)]
mod tests {
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
        assert_eq!(t[CDT_LEN - 1], 0, "tail beyond 18 is below 2^-64");
        assert!(t[18] == 0 && t[17] > 0);
        // P(|X| > 0) = 1 - 1/Z with Z ~ sqrt(8 pi) ~ 5.013.
        let p0 = t[0] as f64 / 18_446_744_073_709_551_616.0;
        assert!((p0 - (1.0 - 1.0 / 5.013_256_549)).abs() < 1e-6, "{p0}");
    }

    /// Words equal to, just above and just below every table entry, with
    /// the same high half and low half at its extremes, the extremes of the
    /// range and random words: the portable count matches the definition.
    #[test]
    fn cdt_magnitudes_match_definition() {
        let table = cdt();
        let mut edge = vec![0u64, 1, u64::MAX, u64::MAX - 1, 1 << 63, (1 << 63) - 1];
        for &e in table.iter() {
            edge.extend([e, e.wrapping_add(1), e.wrapping_sub(1)]);
            edge.extend([e & !0xffff_ffff, e | 0xffff_ffff]);
        }
        let mut prg = Prg::from_seed(&[13; 32]);
        let mut bytes = [0u8; 8 * N];
        for round in 0..40 {
            prg.fill_bytes(&mut bytes);
            let mut words = [0u64; N];
            for (i, (w, b)) in words.iter_mut().zip(bytes.chunks_exact(8)).enumerate() {
                let mut wb = [0u8; 8];
                wb.copy_from_slice(b);
                *w = match round {
                    // Small random words reach the deep tail entries.
                    0..=9 => edge[(i + round) % edge.len()],
                    10..=19 => u64::from_le_bytes(wb) >> (wb[0] % 64),
                    _ => u64::from_le_bytes(wb),
                };
            }
            let mut got = [0i16; N];
            cdt_magnitudes_body(&words, table, &mut got);
            for (&w, &g) in words.iter().zip(got.iter()) {
                let want = table.iter().filter(|&&t| w < t).count();
                assert_eq!(usize::try_from(g).unwrap(), want, "word {w:#x}");
            }
        }
    }

    /// The portable binomial sampler against `count_ones`.
    #[test]
    fn binomial_portable_matches_definition() {
        let mut prg = Prg::from_seed(&[14; 32]);
        let mut rand = [0u8; BINOMIAL_BYTES];
        for _ in 0..20 {
            prg.fill_bytes(&mut rand);
            let mut got = [0i16; N];
            binomial_portable(&rand, 2, &mut got);
            for i in 0..N {
                let want = rand[i].count_ones() as i16 - rand[N + i].count_ones() as i16;
                assert_eq!(got[i], 2 * want);
            }
        }
    }

    /// The samplers' output for fixed seeds, on whichever backend runs
    /// (also run with `TRISKELE_BACKEND=portable`): the BLAKE3 hash of the
    /// coefficients recorded from the implementation before the AVX2
    /// samplers and the copy-free PRG (commit 3fdb339), so the PRG stream
    /// and the sampled coefficients are unchanged.
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
            "18185bf8b4ee83ebc0128ecb0d1fd240cf63952d885f43853dc98c1a65980bcc"
        );
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
