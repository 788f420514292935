//! GF(2^8) slice products and linear maps on every available backend.

use std::hint::black_box;

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use rand::SeedableRng;
use rand_chacha::ChaCha20Rng;
use triskele_field::backend;
use triskele_field::subspace::{COSET_SHIFT, POINTS, SUBFIELD_SHIFT, SUB_EXTRA, SUB_POINTS};
use triskele_field::{Field, Gf2p8, Gf4Tower, LinearMap8, Random};

const N: usize = 1 << 16;

fn inputs(n: usize) -> (Vec<Gf2p8>, Vec<Gf2p8>) {
    let mut rng = ChaCha20Rng::seed_from_u64(1);
    let mut a = vec![Gf2p8::ZERO; n];
    let mut b = vec![Gf2p8::ZERO; n];
    Gf2p8::fill_random(&mut rng, &mut a);
    Gf2p8::fill_random(&mut rng, &mut b);
    (a, b)
}

fn products(c: &mut Criterion) {
    let (a, b) = inputs(N);
    let mut out = vec![Gf2p8::ZERO; N];
    let mut g = c.benchmark_group("gf2p8");
    g.throughput(Throughput::Elements(N as u64));
    for &be in backend::available() {
        g.bench_function(BenchmarkId::new("mul_slice", be), |bench| {
            bench.iter(|| Gf2p8::mul_slice_with(be, black_box(&mut out), &a, &b))
        });
        g.bench_function(BenchmarkId::new("mul_add_slice", be), |bench| {
            bench.iter(|| Gf2p8::mul_add_slice_with(be, black_box(&mut out), &a, &b))
        });
        g.bench_function(BenchmarkId::new("mul_then_mul_add", be), |bench| {
            bench.iter(|| {
                Gf2p8::mul_slice_with(be, &mut out, black_box(&a), black_box(&b));
                Gf2p8::mul_add_slice_with(be, &mut out, black_box(&b), black_box(&a));
            })
        });
        g.bench_function(BenchmarkId::new("mul_sum2_slice", be), |bench| {
            bench.iter(|| {
                Gf2p8::mul_sum2_slice_with(
                    be,
                    &mut out,
                    black_box(&a),
                    black_box(&b),
                    black_box(&b),
                    black_box(&a),
                )
            })
        });
        g.bench_function(BenchmarkId::new("tower_mul_sum2", be), |bench| {
            let (a, b) = (Gf2p8::slice_as_bytes(&a), Gf2p8::slice_as_bytes(&b));
            let out = Gf2p8::slice_as_bytes_mut(&mut out);
            bench.iter(|| {
                Gf4Tower::mul_sum2_bytes_with(
                    be,
                    out,
                    black_box(a),
                    black_box(b),
                    black_box(b),
                    black_box(a),
                )
            })
        });
        g.bench_function(BenchmarkId::new("inner_product", be), |bench| {
            bench.iter(|| Gf2p8::inner_product_with(be, black_box(&a), &b))
        });
    }
    g.finish();
}

fn linear_maps(c: &mut Criterion) {
    let (a, _) = inputs(N);
    let mut out = vec![Gf2p8::ZERO; N];
    let mut g = c.benchmark_group("linear_map8");
    g.throughput(Throughput::Elements(N as u64));
    for &be in backend::available() {
        g.bench_function(BenchmarkId::new("apply_slice/AES_A", be), |bench| {
            bench.iter(|| LinearMap8::AES_A.apply_slice_with(be, black_box(&a), &mut out))
        });
        g.bench_function(BenchmarkId::new("apply_in_place/WOL", be), |bench| {
            bench.iter(|| Gf4Tower::WOL.apply_in_place_with(be, black_box(&mut out)))
        });
    }
    g.finish();
}

fn sampling(c: &mut Criterion) {
    let mut out = vec![Gf2p8::ZERO; N];
    let mut rng = ChaCha20Rng::seed_from_u64(2);
    let mut g = c.benchmark_group("gf2p8");
    g.throughput(Throughput::Elements(N as u64));
    g.bench_function(BenchmarkId::new("fill_random", "chacha20"), |bench| {
        bench.iter(|| Gf2p8::fill_random(&mut rng, black_box(&mut out)))
    });
    g.finish();
}

/// A computation of the values at the extra nodes from those at the data nodes.
type Extrapolate<'a> = dyn Fn([&[u8]; SUB_POINTS], [&mut [u8]; SUB_EXTRA]) + 'a;

/// The values at the seven extra nodes of `Verify`'s level with blocks of eight from eight
/// planes of 4,096 bytes (a sub-block), per entry: the additive FFT of `SubfieldShift` against
/// one pass of sums of byte maps by the Lagrange coefficients, with the planes 4 KiB apart
/// (`4k`: all in the same sets of the first-level cache) and a cache line further (`padded`).
fn extra_nodes(c: &mut Criterion) {
    const K: usize = 4096;
    let lagrange = SUBFIELD_SHIFT.lagrange();
    let mut g = c.benchmark_group("extra_nodes8");
    g.throughput(Throughput::Elements((SUB_POINTS * K) as u64));
    for (layout, stride) in [("4k", K), ("padded", K + 64)] {
        let (a, _) = inputs(SUB_POINTS * stride);
        let a = Gf2p8::slice_as_bytes(&a);
        let src: [&[u8]; SUB_POINTS] = core::array::from_fn(|m| &a[m * stride..m * stride + K]);
        let mut big = vec![0u8; SUB_EXTRA * stride];
        let mut out: Vec<&mut [u8]> = big.chunks_mut(stride).map(|c| &mut c[..K]).collect();
        for &be in backend::available() {
            let mut run = |name: &str, f: &Extrapolate| {
                g.bench_function(BenchmarkId::new(format!("{name}/{layout}"), be), |bench| {
                    bench.iter(|| {
                        let mut it = out.iter_mut();
                        f(
                            black_box(src),
                            core::array::from_fn(|_| it.next().map_or(&mut [][..], |d| &mut d[..])),
                        )
                    })
                });
            };
            run("subfield_shift", &|s, d| {
                SUBFIELD_SHIFT.shift_with(be, s, d)
            });
            run("lagrange_sums", &|s, d| {
                LinearMap8::apply_sums_bytes_with(be, lagrange, s, d)
            });
        }
    }
    g.finish();
}

/// The values at the 31 extra nodes of `Verify`'s level with blocks of 32 from the 32 rows of
/// a chunk of 1,024 blocks (`CosetShift`, the shape `verify::wide_bytes` calls it with).
fn coset_shift(c: &mut Criterion) {
    const K: usize = 1024;
    let mut g = c.benchmark_group("coset_shift32");
    g.throughput(Throughput::Elements((POINTS * K) as u64));
    let (a, _) = inputs(POINTS * K);
    let a = Gf2p8::slice_as_bytes(&a);
    let src: [&[u8]; POINTS] = core::array::from_fn(|m| &a[m * K..(m + 1) * K]);
    let mut dst = vec![0u8; POINTS * K];
    for &be in backend::available() {
        g.bench_function(BenchmarkId::new("chunk", be), |bench| {
            bench.iter(|| COSET_SHIFT.shift_with(be, black_box(src), &mut dst, K))
        });
    }
    g.finish();
}

criterion_group!(
    benches,
    products,
    linear_maps,
    sampling,
    extra_nodes,
    coset_shift
);
criterion_main!(benches);
