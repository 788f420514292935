//! GF(2^64) slice products, inner products and scalar products on every available backend.

use std::hint::black_box;

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use rand::SeedableRng;
use rand_chacha::ChaCha20Rng;
use triskele_field::backend;
use triskele_field::{Field, Gf2p64, Random};

const N: usize = 1 << 14;

fn inputs() -> (Vec<Gf2p64>, Vec<Gf2p64>) {
    let mut rng = ChaCha20Rng::seed_from_u64(1);
    let mut a = vec![Gf2p64::ZERO; N];
    let mut b = vec![Gf2p64::ZERO; N];
    Gf2p64::fill_random(&mut rng, &mut a);
    Gf2p64::fill_random(&mut rng, &mut b);
    (a, b)
}

fn slices(c: &mut Criterion) {
    let (a, b) = inputs();
    let mut out = vec![Gf2p64::ZERO; N];
    let mut g = c.benchmark_group("gf2p64");
    g.throughput(Throughput::Elements(N as u64));
    for &be in backend::available() {
        g.bench_function(BenchmarkId::new("mul_slice", be), |bench| {
            bench.iter(|| Gf2p64::mul_slice_with(be, black_box(&mut out), &a, &b))
        });
        g.bench_function(BenchmarkId::new("inner_product", be), |bench| {
            bench.iter(|| Gf2p64::inner_product_with(be, black_box(&a), &b))
        });
    }
    // Scalar `*` (a dependent chain, so this measures latency) on the active backend.
    g.bench_function(BenchmarkId::new("mul_chain", backend::active()), |bench| {
        bench.iter(|| {
            a.iter()
                .zip(&b)
                .fold(Gf2p64::ONE, |acc, (x, y)| acc * *x + *y)
        })
    });
    g.finish();
}

/// `Bulk::lerp_assign_slice` (a later halving level's fold, `v += (w - v) s`) against a plain
/// `v += w` over the same vectors, from sizes that stay in cache (`2^10`, `2^14` elements of
/// 8 bytes) to vectors of 32 MiB (`2^22`): where both run at the same rate, the fold is bound
/// by memory traffic, not by its products.
fn lerp_sizes(c: &mut Criterion) {
    use triskele_field::Bulk;
    let mut g = c.benchmark_group("gf2p64_lerp_assign");
    for log in [10usize, 14, 18, 22] {
        let n = 1 << log;
        let mut rng = ChaCha20Rng::seed_from_u64(2);
        let mut v = vec![Gf2p64::ZERO; n];
        let mut w = vec![Gf2p64::ZERO; n];
        Gf2p64::fill_random(&mut rng, &mut v);
        Gf2p64::fill_random(&mut rng, &mut w);
        let s = w[0];
        g.throughput(Throughput::Elements(n as u64));
        g.bench_function(BenchmarkId::new("lerp", log), |bench| {
            bench.iter(|| Gf2p64::lerp_assign_slice(black_box(&mut v), &w, s))
        });
        g.bench_function(BenchmarkId::new("add", log), |bench| {
            bench.iter(|| Gf2p64::add_assign_slice(black_box(&mut v), &w))
        });
    }
    g.finish();
}

/// `ByteEmbedding::inner_products` (the sums of Verify's k-ary level: bit sums on GFNI with
/// AVX-512 VBMI) over 1,024 terms, 7 and 16 sources at once (the level's extra nodes and its
/// data nodes' `z`), on every available backend; throughput in terms times sources.
fn byte_inner_products(c: &mut Criterion) {
    let (a, _) = inputs();
    let a = &a[..1024];
    let bytes: Vec<Vec<u8>> = (0..16u8)
        .map(|i| {
            (0..1024u32)
                .map(|k| (k as u8).wrapping_mul(31) ^ i)
                .collect()
        })
        .collect();
    let mut g = c.benchmark_group("byte_inner_products");
    for &be in backend::available() {
        bench_sources::<7>(&mut g, be, a, &bytes);
        bench_sources::<16>(&mut g, be, a, &bytes);
    }
    g.finish();
}

/// One [`byte_inner_products`] bench: `N` sources on backend `be`.
fn bench_sources<const N: usize>(
    g: &mut criterion::BenchmarkGroup<'_, criterion::measurement::WallTime>,
    be: backend::Backend,
    a: &[Gf2p64],
    bytes: &[Vec<u8>],
) {
    use triskele_field::embed::{ByteEmbedding, E8_TABLES};
    g.throughput(Throughput::Elements((N * a.len()) as u64));
    g.bench_function(BenchmarkId::new(N.to_string(), be), |bench| {
        bench.iter(|| {
            ByteEmbedding::inner_products_with(
                be,
                black_box(a),
                core::array::from_fn::<_, N, _>(|i| (&E8_TABLES, &bytes[i][..])),
            )
        })
    });
}

/// The fold of Verify's k-ary level over bytes: sums of 32 byte maps into `GF(2^64)` over
/// 2,048 elements (`ByteEmbedding::apply_sum_slice`), and the same maps on bytes of the
/// subfield of 16 elements (`SubfieldEmbedding`, one table lookup per byte plane instead of
/// two on the AVX2 backends), on every available backend; throughput in elements times maps.
fn byte_map_sums(c: &mut Criterion) {
    use triskele_field::embed::{ByteEmbedding, SubfieldEmbedding, E8_TABLES, GF16_IN_GF8};
    const N: usize = 32;
    let (a, _) = inputs();
    let len = 2048;
    let maps: [ByteEmbedding; N] = core::array::from_fn(|i| E8_TABLES.scaled_by(a[i]));
    let sub = maps.map(|m| m.on_subfield());
    let bytes: Vec<Vec<u8>> = (0..N as u32)
        .map(|i| {
            (0..len as u32)
                .map(|k| GF16_IN_GF8[(k.wrapping_mul(2_654_435_761) >> 28 ^ i) as usize & 15])
                .collect()
        })
        .collect();
    let src: [&[u8]; N] = core::array::from_fn(|i| &bytes[i][..]);
    let mut dst = vec![Gf2p64::ZERO; len];
    let mut g = c.benchmark_group("byte_map_sums");
    g.throughput(Throughput::Elements((N * len) as u64));
    for &be in backend::available() {
        g.bench_function(BenchmarkId::new("bytes", be), |bench| {
            bench.iter(|| {
                ByteEmbedding::apply_sum_slice_with(be, maps.each_ref(), black_box(src), &mut dst)
            })
        });
        g.bench_function(BenchmarkId::new("subfield", be), |bench| {
            bench.iter(|| {
                SubfieldEmbedding::apply_sum_slice_with(
                    be,
                    sub.each_ref(),
                    black_box(src),
                    &mut dst,
                )
            })
        });
    }
    g.finish();
}

criterion_group!(
    benches,
    slices,
    lerp_sizes,
    byte_inner_products,
    byte_map_sums
);
criterion_main!(benches);
