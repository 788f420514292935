//! Protocol 2 `Verify` (PROTOCOLS.md §5.4) among three parties over in-memory links: recorded
//! `GF(2^8)` triples (the byte fast path), `L = 2^16` and `2^20`, and recorded `GF(2^64)` and
//! `F_p` triples (`p = 2^127 + 45`; read in place), `L = 2^20` (throughput in triples per
//! second, all three parties sharing this machine's cores, including the copy into the
//! record store), `F_p` cube chains `L = 2^20` recorded as chained triples against combined
//! first, and the `GF(2^64)` inner product (terms per second on one core, active
//! backend). `TRISKELE_VERIFY_LOGS=16,20,23` chooses the `GF(2^8)` sizes.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::hint::black_box;
use std::time::{Duration, Instant};

use criterion::{
    criterion_group, criterion_main, BenchmarkId, Criterion, SamplingMode, Throughput,
};
use rand::SeedableRng;
use rand_chacha::ChaCha20Rng;
use triskele_engine::{Lift, Malicious, Party, Phase, SecurityModel};
use triskele_field::{Bulk, Field, Fp, Gf2p64, Gf2p8, Random};
use triskele_net::NetOptions;
use triskele_share::{deal, RssVec};

type Shares<F> = (RssVec<F>, RssVec<F>, RssVec<F>);

/// Correct triples, dealt to the three parties.
fn dealt<F: Field + Random>(n: usize) -> [Shares<F>; 3] {
    let mut rng = ChaCha20Rng::seed_from_u64(7);
    let mut x = vec![F::ZERO; n];
    let mut y = vec![F::ZERO; n];
    F::fill_random(&mut rng, &mut x);
    F::fill_random(&mut rng, &mut y);
    let z: Vec<F> = x.iter().zip(&y).map(|(a, b)| *a * *b).collect();
    let (xs, ys, zs) = (deal(&x, &mut rng), deal(&y, &mut rng), deal(&z, &mut rng));
    [0, 1, 2].map(|i| (xs[i].clone(), ys[i].clone(), zs[i].clone()))
}

/// `iters` rounds of record + finalize at each party; the slowest party's time.
fn run<F: Lift>(triples: &[Shares<F>; 3], iters: u64) -> Duration {
    slowest(|p| {
        let (x, y, z) = &triples[p.id().index()];
        for _ in 0..iters {
            p.model().record(x, y, z);
            p.verify_recorded().expect("honest triples verify");
        }
    })
}

/// The slowest party's time for `work`, run by three parties over in-memory links (in the
/// finalize phase).
fn slowest(work: impl Fn(&mut Party<Malicious>) + Sync) -> Duration {
    let nets = triskele_net::in_memory(&NetOptions::default());
    let work = &work;
    std::thread::scope(|s| {
        let hs: Vec<_> = nets
            .into_iter()
            .map(|n| {
                s.spawn(move || {
                    let mut p = Party::<Malicious>::setup(n).expect("setup");
                    p.set_phase(Phase::Finalize);
                    let t = Instant::now();
                    work(&mut p);
                    t.elapsed()
                })
            })
            .collect();
        hs.into_iter()
            .map(|h| h.join().expect("party thread"))
            .max()
            .unwrap_or_default()
    })
}

/// `log2` sizes of the `GF(2^8)` runs (`TRISKELE_VERIFY_LOGS`, default `16,20`).
fn sizes() -> Vec<u32> {
    std::env::var("TRISKELE_VERIFY_LOGS")
        .ok()
        .map(|v| v.split(',').filter_map(|t| t.trim().parse().ok()).collect())
        .filter(|v: &Vec<u32>| !v.is_empty())
        .unwrap_or_else(|| vec![16, 20])
}

fn verify(c: &mut Criterion) {
    let mut g = c.benchmark_group("verify_gf2p8");
    g.sampling_mode(SamplingMode::Flat).sample_size(10);
    for log in sizes() {
        let l = 1usize << log;
        let triples = dealt::<Gf2p8>(l);
        g.throughput(Throughput::Elements(l as u64));
        g.bench_function(BenchmarkId::new("triples", format!("2^{log}")), |b| {
            b.iter_custom(|iters| run(&triples, iters))
        });
    }
    g.finish();
    let mut g = c.benchmark_group("verify_gf2p64");
    g.sampling_mode(SamplingMode::Flat).sample_size(10);
    let log = 20;
    let l = 1usize << log;
    let triples = dealt::<Gf2p64>(l);
    g.throughput(Throughput::Elements(l as u64));
    g.bench_function(BenchmarkId::new("triples", format!("2^{log}")), |b| {
        b.iter_custom(|iters| run(&triples, iters))
    });
    g.finish();
    let mut g = c.benchmark_group("verify_fp");
    g.sampling_mode(SamplingMode::Flat).sample_size(10);
    let triples = dealt::<Fp>(l);
    g.throughput(Throughput::Elements(l as u64));
    g.bench_function(BenchmarkId::new("triples", format!("2^{log}")), |b| {
        b.iter_custom(|iters| run(&triples, iters))
    });
    g.finish();
    // Cube chains `(v, v^2, v^3)` under a coin: recorded as chained triples (combined while
    // the check streams) against combining them first (four scale-adds, then plain triples);
    // 2^18 chains are about one verification segment of the default size (24 of 32 MiB).
    let mut g = c.benchmark_group("verify_fp_chains");
    g.sampling_mode(SamplingMode::Flat).sample_size(10);
    for log in [18, 20] {
        let l = 1usize << log;
        let chains = dealt_chains(l);
        g.throughput(Throughput::Elements(l as u64));
        for combine in [false, true] {
            let name = if combine { "combined" } else { "chained" };
            g.bench_function(BenchmarkId::new(name, format!("2^{log}")), |b| {
                b.iter_custom(|iters| run_chains(&chains, combine, iters))
            });
        }
    }
    g.finish();
}

/// Correct cube chains `(v^2, v, v^3)` (as chained triples store them), dealt.
fn dealt_chains(n: usize) -> [Shares<Fp>; 3] {
    let mut rng = ChaCha20Rng::seed_from_u64(8);
    let mut v = vec![Fp::ZERO; n];
    Fp::fill_random(&mut rng, &mut v);
    let v2: Vec<Fp> = v.iter().map(|a| *a * *a).collect();
    let v3: Vec<Fp> = v2.iter().zip(&v).map(|(a, b)| *a * *b).collect();
    let (xs, ys, zs) = (deal(&v2, &mut rng), deal(&v, &mut rng), deal(&v3, &mut rng));
    [0, 1, 2].map(|i| (xs[i].clone(), ys[i].clone(), zs[i].clone()))
}

/// `iters` rounds of record + finalize of the chains at each party, chained or combined
/// first; the slowest party's time.
fn run_chains(chains: &[Shares<Fp>; 3], combine: bool, iters: u64) -> Duration {
    let r = Fp::from(0x5eed_u64);
    slowest(|p| {
        for _ in 0..iters {
            let (mut x, mut y, mut z) = chains[p.id().index()].clone();
            if combine {
                for (a, b) in [(&mut z.first, &x.first), (&mut z.second, &x.second)] {
                    Fp::scale_add_slice(a, b, r);
                }
                for (a, b) in [(&mut x.first, &y.first), (&mut x.second, &y.second)] {
                    Fp::scale_add_slice(a, b, r);
                }
                p.model().on_product_swap(&mut x, &mut y, &mut z);
            } else {
                assert!(p.model().on_chained(&mut x, &mut y, &mut z, r));
            }
            p.verify_recorded().expect("honest chains verify");
        }
    })
}

fn inner_product(c: &mut Criterion) {
    let n = 1usize << 16;
    let mut rng = ChaCha20Rng::seed_from_u64(9);
    let mut a = vec![Gf2p64::ZERO; n];
    let mut b = vec![Gf2p64::ZERO; n];
    Gf2p64::fill_random(&mut rng, &mut a);
    Gf2p64::fill_random(&mut rng, &mut b);
    let mut g = c.benchmark_group("gf2p64_inner_product");
    g.throughput(Throughput::Elements(n as u64));
    g.bench_function(BenchmarkId::new("terms", "2^16"), |bench| {
        bench.iter(|| Gf2p64::inner_product(black_box(&a), black_box(&b)))
    });
    g.finish();
}

criterion_group!(benches, verify, inner_product);
criterion_main!(benches);
