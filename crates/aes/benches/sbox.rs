//! One S-box layer per protocol: three parties over in-memory links, each on its own thread.
//! Reports S-box inversions per second (all three parties together on this machine).

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use triskele_aes::Target;
use triskele_field::Gf2p8;
use triskele_net::NetOptions;
use triskele_share::RssVec;

fn layer(target: Target, n: usize) {
    let nets = triskele_net::in_memory(&NetOptions::default());
    std::thread::scope(|s| {
        for net in nets {
            s.spawn(move || {
                let x = RssVec::<Gf2p8>::zeros(n);
                // Errors would show as a failed benchmark run; the result is not needed.
                let _ = triskele_aes::run::sbox_layer_party(target, net, x);
            });
        }
    });
}

fn bench(c: &mut Criterion) {
    let mut g = c.benchmark_group("sbox-layer");
    g.sample_size(10);
    for &target in Target::ALL {
        for n in [16 * 1000, 16 * 10_000] {
            g.throughput(Throughput::Elements(n as u64));
            g.bench_with_input(BenchmarkId::new(target.name(), n), &n, |b, &n| {
                b.iter(|| layer(target, n))
            });
        }
    }
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
