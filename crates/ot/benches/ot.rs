//! Criterion benchmarks of the OT crate: ring arithmetic, sampling, hashing,
//! one full ROT (both parties, one thread), and local end-to-end runs.
#![allow(clippy::panic, clippy::unwrap_used, clippy::expect_used)]

use criterion::{criterion_group, criterion_main, BatchSize, BenchmarkId, Criterion, Throughput};
use rand_chacha::ChaCha12Rng;
use rand_core::SeedableRng;
use std::hint::black_box;
use triskele_ot::bench::{run_local, Protocol};
use triskele_ot::rlwe::ring::{Poly, N};
use triskele_ot::rlwe::{bdgm, hash_to_poly, rot, sample_noise, Backend, NoiseDistribution};

fn ring(c: &mut Criterion) {
    let mut coeffs = [0i64; N];
    for (i, x) in coeffs.iter_mut().enumerate() {
        *x = (i as i64 * 7919) % 15361;
    }
    let p = Poly::from_coeffs(&coeffs);
    let hat = p.ntt();
    let mont = p.ntt_mont();
    // The transforms on every backend this CPU runs ("ntt/forward/avx512",
    // ...), so that one run compares them; the rest on the current one.
    let mut g = c.benchmark_group("ntt");
    for backend in Backend::available() {
        g.bench_with_input(BenchmarkId::new("forward", backend), &p, |b, p| {
            b.iter(|| black_box(p).ntt_on(backend))
        });
        g.bench_with_input(BenchmarkId::new("inverse", backend), &hat, |b, hat| {
            b.iter(|| black_box(hat).inv_ntt_on(backend))
        });
    }
    g.bench_function("pointwise_mul", |b| {
        b.iter(|| black_box(&hat).mul_mont(black_box(&mont)))
    });
    g.finish();
}

fn sampling(c: &mut Criterion) {
    let mut g = c.benchmark_group("sample_poly");
    g.throughput(Throughput::Elements(N as u64));
    for (name, d) in [
        ("binomial", NoiseDistribution::CenteredBinomial),
        ("gaussian_cdt", NoiseDistribution::DiscreteGaussian),
    ] {
        g.bench_function(name, |b| b.iter(|| sample_noise(d, black_box(&[5; 32]))));
    }
    g.finish();
    c.bench_function("blake3_xof_992_bytes", |b| {
        b.iter(|| {
            let mut out = [0u8; 992];
            blake3::Hasher::new()
                .update(black_box(&[7u8; 32]))
                .finalize_xof()
                .fill(&mut out);
            out
        })
    });
    c.bench_function("hash_to_poly", |b| {
        b.iter(|| hash_to_poly(black_box(&[7u8; 32])))
    });
}

fn one_rot(c: &mut Criterion) {
    let mut g = c.benchmark_group("rot_both_parties");
    for (name, d) in [
        ("binomial", NoiseDistribution::CenteredBinomial),
        ("gaussian_cdt", NoiseDistribution::DiscreteGaussian),
    ] {
        let mut rng = ChaCha12Rng::seed_from_u64(1);
        g.bench_function(name, |b| {
            b.iter(|| {
                let (r1, m1) = rot::receiver_round1(d, &mut rng);
                let (s, m2) = rot::sender_round(d, &mut rng, &m1);
                let (ro, m3) = r1.round2(&m2).unwrap_or_else(|e| panic!("{e}"));
                let so = s.finish(&m3).unwrap_or_else(|e| panic!("{e}"));
                black_box((ro, so))
            })
        });
    }
    g.finish();
    let mut rng = ChaCha12Rng::seed_from_u64(2);
    c.bench_function("bdgm_ot_both_parties", |b| {
        let d = NoiseDistribution::default();
        b.iter(|| {
            let (r1, m1) = bdgm::receiver_round1(d, &mut rng, 1);
            let (s1, m2) = bdgm::sender_round1(d, &mut rng, &m1);
            let (r2, m3) = r1.round2(&m2).unwrap_or_else(|e| panic!("{e}"));
            let m4 = s1
                .round2(&m3, &[[1; 32], [2; 32]])
                .unwrap_or_else(|e| panic!("{e}"));
            black_box(r2.finish(&m4))
        })
    });
}

fn end_to_end(c: &mut Criterion) {
    let mut g = c.benchmark_group("run_local");
    g.sample_size(10);
    for (p, n) in [
        (Protocol::Rot, 1000usize),
        (Protocol::Ec, 100),
        (Protocol::Iknp, 1 << 20),
        (Protocol::Kos, 1 << 20),
        (Protocol::SoftSpoken, 1 << 20),
        (Protocol::SoftSpokenMal, 1 << 20),
        (Protocol::Ot, 1000),
    ] {
        g.throughput(Throughput::Elements(n as u64));
        g.bench_function(p.name(), |b| {
            b.iter_batched(
                || (),
                |()| run_local(p, n).unwrap_or_else(|e| panic!("{e}")),
                BatchSize::PerIteration,
            )
        });
    }
    g.finish();
}

criterion_group!(benches, ring, sampling, one_rot, end_to_end);
criterion_main!(benches);
