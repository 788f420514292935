//! The run-time prime field `FpRt` against the specialised `Fp` (p = 2^127 + 45): slice
//! products, inner products, a dependent chain of products (latency) and inverses, for the
//! default prime and for two others.
#![allow(clippy::expect_used)]

use std::hint::black_box;

use criterion::{criterion_group, criterion_main, BenchmarkGroup, Criterion, Throughput};
use rand::SeedableRng;
use rand_chacha::ChaCha20Rng;
use triskele_field::{Bulk, Fp, FpRt, Random};

const N: usize = 1 << 12;

fn field<F: Bulk + Random>(
    g: &mut BenchmarkGroup<'_, criterion::measurement::WallTime>,
    name: &str,
) {
    let mut rng = ChaCha20Rng::seed_from_u64(1);
    let mut a = vec![F::ZERO; N];
    let mut b = vec![F::ZERO; N];
    F::fill_random(&mut rng, &mut a);
    F::fill_random(&mut rng, &mut b);
    let mut out = vec![F::ZERO; N];
    g.throughput(Throughput::Elements(N as u64));
    g.bench_function(format!("{name}/mul_slice"), |bench| {
        bench.iter(|| F::mul_slice(black_box(&mut out), &a, &b))
    });
    g.bench_function(format!("{name}/inner_product"), |bench| {
        bench.iter(|| F::inner_product(black_box(&a), &b))
    });
    g.bench_function(format!("{name}/mul_chain"), |bench| {
        bench.iter(|| a.iter().fold(black_box(b[0]), |acc, x| acc * *x))
    });
    g.throughput(Throughput::Elements(1));
    g.bench_function(format!("{name}/inverse"), |bench| {
        bench.iter(|| black_box(a[7]).inverse())
    });
}

fn fp_rt(c: &mut Criterion) {
    let mut g = c.benchmark_group("fp_rt");
    field::<Fp>(&mut g, "Fp");
    for (name, p) in [
        ("FpRt 2^127+45", Fp::MODULUS),
        ("FpRt 2^61-1", (1u128 << 61) - 1),
        ("FpRt 2^128-159", u128::MAX - 158),
    ] {
        FpRt::with_modulus(p, || field::<FpRt>(&mut g, name))
            .expect("the benchmark moduli are prime");
    }
    g.finish();
}

criterion_group!(benches, fp_rt);
criterion_main!(benches);
