//! GF(2^4) slice products and the two-per-byte wire encoding on every available backend,
//! over 1 Mi elements (one byte each).

use std::hint::black_box;

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use rand::SeedableRng;
use rand_chacha::ChaCha20Rng;
use triskele_field::backend;
use triskele_field::{Encode, Field, Gf2p4, Random};

const N: usize = 1 << 20;

fn inputs(n: usize) -> (Vec<Gf2p4>, Vec<Gf2p4>) {
    let mut rng = ChaCha20Rng::seed_from_u64(1);
    let mut a = vec![Gf2p4::ZERO; n];
    let mut b = vec![Gf2p4::ZERO; n];
    Gf2p4::fill_random(&mut rng, &mut a);
    Gf2p4::fill_random(&mut rng, &mut b);
    (a, b)
}

fn products(c: &mut Criterion) {
    let (a, b) = inputs(N);
    let mut out = vec![Gf2p4::ZERO; N];
    let mut g = c.benchmark_group("gf2p4");
    g.throughput(Throughput::Elements(N as u64));
    for &be in backend::available() {
        g.bench_function(BenchmarkId::new("mul_slice", be), |bench| {
            bench.iter(|| Gf2p4::mul_slice_with(be, black_box(&mut out), &a, &b))
        });
        g.bench_function(BenchmarkId::new("mul_add_slice", be), |bench| {
            bench.iter(|| Gf2p4::mul_add_slice_with(be, black_box(&mut out), &a, &b))
        });
    }
    g.finish();
}

fn encoding(c: &mut Criterion) {
    let (a, _) = inputs(N);
    let mut bytes = Vec::with_capacity(Gf2p4::encoded_len(N));
    let mut back = vec![Gf2p4::ZERO; N];
    let mut g = c.benchmark_group("gf2p4");
    g.throughput(Throughput::Elements(N as u64));
    for &be in backend::available() {
        g.bench_function(BenchmarkId::new("encode", be), |bench| {
            bench.iter(|| {
                bytes.clear();
                Gf2p4::encode_slice_with(be, black_box(&a), &mut bytes);
            })
        });
        let encoded = Gf2p4::encode_to_vec(&a);
        g.bench_function(BenchmarkId::new("decode", be), |bench| {
            bench.iter(|| Gf2p4::decode_slice_with(be, black_box(&encoded), &mut back))
        });
    }
    g.finish();
}

criterion_group!(benches, products, encoding);
criterion_main!(benches);
