//! Hydra over p = 2^127 + 45: the cleartext keystream, and the semi-honest MPC evaluation of
//! many instances (three parties over in-memory links, each on its own thread, setup included).
//! Throughput is in keystream words.

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use rand::SeedableRng;
use rand_chacha::ChaCha20Rng;
use triskele_engine::{Party, SemiHonest};
use triskele_field::{Fp, Random};
use triskele_net::NetOptions;
use triskele_prf::hydra;
use triskele_share::deal;

fn cleartext(c: &mut Criterion) {
    let mut rng = ChaCha20Rng::seed_from_u64(1);
    let key: [Fp; 4] = core::array::from_fn(|_| Fp::random(&mut rng));
    let iv: [Fp; 3] = core::array::from_fn(|_| Fp::random(&mut rng));
    let _ = hydra::reference();
    let mut g = c.benchmark_group("hydra-clear");
    for words in [8usize, 64] {
        g.throughput(Throughput::Elements(words as u64));
        g.bench_with_input(BenchmarkId::from_parameter(words), &words, |b, &m| {
            b.iter(|| hydra::keystream(&key, Fp::from_u64(7), &iv, m))
        });
    }
    g.finish();
}

fn mpc(c: &mut Criterion) {
    let mut g = c.benchmark_group("hydra-mpc-semi-honest");
    g.sample_size(10);
    let _ = hydra::reference();
    for (n, words) in [(1usize, 8usize), (1000, 8), (100, 64)] {
        let mut rng = ChaCha20Rng::seed_from_u64(2);
        let key: Vec<Fp> = (0..4).map(|_| Fp::random(&mut rng)).collect();
        let iv: Vec<Fp> = (0..3 * n).map(|_| Fp::random(&mut rng)).collect();
        let nonces: Vec<Fp> = (0..n as u64).map(Fp::from_u64).collect();
        let ks = deal(&key, &mut rng);
        let ivs = deal(&iv, &mut rng);
        g.throughput(Throughput::Elements((n * words) as u64));
        g.bench_function(BenchmarkId::new(format!("{words}-words"), n), |b| {
            b.iter(|| {
                let nets = triskele_net::in_memory(&NetOptions::default());
                triskele_prf::local::three(nets, |net| {
                    let i = net.party().index();
                    let mut party = Party::<SemiHonest>::setup(net).ok()?;
                    hydra::keystream_mpc(&mut party, &ks[i], &nonces, &ivs[i], words).ok()
                })
            })
        });
    }
    g.finish();
}

criterion_group!(benches, cleartext, mpc);
criterion_main!(benches);
