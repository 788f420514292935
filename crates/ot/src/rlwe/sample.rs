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
//!   We count the bits with SWAR arithmetic, eight coefficients per `u64`.
//! * [`NoiseDistribution::DiscreteGaussian`]: the discrete Gaussian of
//!   parameter `sigma = 2` (probability proportional to `exp(-x^2/8)`),
//!   sampled with a cumulative distribution table (CDT) of 64-bit tail
//!   probabilities computed in code at first use. Every sample compares a
//!   fresh 64-bit random word with *all* table entries (no early exit, no
//!   secret-dependent memory access), then applies a random sign by
//!   masking. Entries are computed in `f64`, so the distribution is within
//!   about `2^-50` of the true one per sample; the tail is cut at
//!   `|x| <= 18`, beyond which probabilities are below `2^-64`.

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

/// SWAR popcount of each byte of `x` (results 0..=8 per byte).
#[inline(always)]
fn popcount_bytes(x: u64) -> u64 {
    let x = x - ((x >> 1) & 0x5555_5555_5555_5555);
    let x = (x & 0x3333_3333_3333_3333) + ((x >> 2) & 0x3333_3333_3333_3333);
    (x + (x >> 4)) & 0x0f0f_0f0f_0f0f_0f0f
}

fn sample_binomial(prg: &mut Prg, scale: i16) -> Poly {
    let mut rand = [0u8; 2 * N];
    prg.fill_bytes(&mut rand);
    let mut out = [0i16; N];
    let (pos, neg) = rand.split_at(N);
    for ((o, p), n) in out
        .chunks_exact_mut(8)
        .zip(pos.chunks_exact(8))
        .zip(neg.chunks_exact(8))
    {
        let mut pw = [0u8; 8];
        pw.copy_from_slice(p);
        let mut nw = [0u8; 8];
        nw.copy_from_slice(n);
        // (count(p) + 8) - count(n) per byte, in 0..=16: no borrows between bytes.
        let d = (popcount_bytes(u64::from_le_bytes(pw)) + 0x0808_0808_0808_0808)
            - popcount_bytes(u64::from_le_bytes(nw));
        for (j, x) in o.iter_mut().enumerate() {
            *x = (((d >> (8 * j)) & 0xff) as i16 - 8) * scale;
        }
    }
    wipe_bytes(&mut rand);
    Poly(out)
}

/// `|x|` for each 64-bit random word: the number of table entries above it.
/// Table-major loop order, so that the compiler vectorizes across samples;
/// every word meets every entry (constant time). Compiled once per backend.
#[inline(always)]
pub(crate) fn cdt_magnitudes_body(words: &[u64; N], table: &[u64; CDT_LEN], out: &mut [i16; N]) {
    let mut acc = [0u64; N];
    for &t in table.iter() {
        for (a, &w) in acc.iter_mut().zip(words.iter()) {
            *a += u64::from(w < t);
        }
    }
    for (o, &a) in out.iter_mut().zip(acc.iter()) {
        *o = a as i16;
    }
    acc.fill(0);
    core::hint::black_box(&mut acc);
}

fn cdt_magnitudes(words: &[u64; N], out: &mut [i16; N]) {
    let table = cdt();
    match super::ntt::Backend::current() {
        #[cfg(target_arch = "x86_64")]
        super::ntt::Backend::Avx2 => match super::ntt_avx2::Avx2::detect() {
            Some(t) => t.cdt_magnitudes(words, table, out),
            None => cdt_magnitudes_body(words, table, out),
        },
        _ => cdt_magnitudes_body(words, table, out),
    }
}

fn sample_gaussian(prg: &mut Prg, scale: i16) -> Poly {
    let mut rand = [0u8; 8 * N + N / 8];
    prg.fill_bytes(&mut rand);
    let (bytes, signs) = rand.split_at(8 * N);
    let mut words = [0u64; N];
    for (w, b) in words.iter_mut().zip(bytes.chunks_exact(8)) {
        let mut wb = [0u8; 8];
        wb.copy_from_slice(b);
        *w = u64::from_le_bytes(wb);
    }
    let mut out = [0i16; N];
    cdt_magnitudes(&words, &mut out);
    for (i, o) in out.iter_mut().enumerate() {
        let sign = -i16::from((signs[i / 8] >> (i % 8)) & 1);
        *o = ((*o ^ sign) - sign) * scale;
    }
    words.fill(0);
    core::hint::black_box(&mut words);
    wipe_bytes(&mut rand);
    Poly(out)
}

/// Samples a polynomial with coefficients drawn from `dist`, multiplied by
/// `scale` (1 for secrets, 2 for the errors of Ding's key exchange).
pub(crate) fn sample_poly(dist: NoiseDistribution, prg: &mut Prg, scale: i16) -> Poly {
    match dist {
        NoiseDistribution::CenteredBinomial => sample_binomial(prg, scale),
        NoiseDistribution::DiscreteGaussian => sample_gaussian(prg, scale),
    }
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
