//! F_p (p = 2^127 + 45) products, inner products, lines (`lerp`), Legendre symbols and inverses.
//! The slice operations run on the portable code and on every other backend this CPU has whose
//! `F_p` code differs (`gfni-avx512` with AVX-512 IFMA): `fp/OP/BACKEND`.

use std::hint::black_box;

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use rand::SeedableRng;
use rand_chacha::ChaCha20Rng;
use triskele_field::backend::{self, Backend};
use triskele_field::{Field, Fp, PrimeField, Random};

const N: usize = 1 << 12;

fn fp(c: &mut Criterion) {
    let mut rng = ChaCha20Rng::seed_from_u64(1);
    let mut a = vec![Fp::ZERO; N];
    let mut b = vec![Fp::ZERO; N];
    Fp::fill_random(&mut rng, &mut a);
    Fp::fill_random(&mut rng, &mut b);
    let mut out = vec![Fp::ZERO; N];
    let mut g = c.benchmark_group("fp");
    g.throughput(Throughput::Elements(N as u64));
    let backends = [Backend::Portable, Backend::Gfni512]
        .into_iter()
        .filter(|b| b.is_available());
    for be in backends {
        let name = |op: &str| format!("{op}/{be}");
        g.bench_function(name("mul_slice"), |bench| {
            bench.iter(|| Fp::mul_slice_with(be, black_box(&mut out), &a, &b))
        });
        g.bench_function(name("scale_add_slice"), |bench| {
            bench.iter(|| Fp::scale_add_slice_with(be, black_box(&mut out), &a, b[5]))
        });
        g.bench_function(name("local_product_slice"), |bench| {
            bench.iter(|| Fp::local_product_slice_with(be, black_box(&mut out), &a, &b, &b, &a))
        });
        g.bench_function(name("inner_product"), |bench| {
            bench.iter(|| Fp::inner_product_with(be, black_box(&a), &b))
        });
        g.bench_function(name("lerp_slice"), |bench| {
            bench.iter(|| Fp::lerp_slice_with(be, black_box(&mut out), &a, &b, a[3]))
        });
        g.bench_function(name("lerp_assign_slice"), |bench| {
            bench.iter(|| Fp::lerp_assign_slice_with(be, black_box(&mut out), &b, a[3]))
        });
        g.bench_function(name("local_inner_product"), |bench| {
            bench.iter(|| Fp::local_inner_product_with(be, black_box(&a), &b, &a, &b))
        });
    }
    eprintln!("active backend: {}", backend::active());
    g.bench_function("fill_random", |bench| {
        bench.iter(|| Fp::fill_random(&mut rng, black_box(&mut out)))
    });
    g.bench_function("legendre", |bench| {
        bench.iter(|| {
            a.iter()
                .map(|x| i32::from(black_box(*x).legendre()))
                .sum::<i32>()
        })
    });
    g.throughput(Throughput::Elements(1));
    g.bench_function("inverse", |bench| bench.iter(|| black_box(a[7]).inverse()));
    g.finish();
}

criterion_group!(benches, fp);
criterion_main!(benches);
