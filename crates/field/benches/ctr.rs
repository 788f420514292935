//! AES-128 keystreams and ECB on the CPU's AES instructions (bytes per second).

use std::hint::black_box;

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use triskele_field::ctr::{Aes128Ctr, HwAes128, HwAes128Ctr};

const BYTES: usize = 1 << 14;

fn aes(c: &mut Criterion) {
    let mut g = c.benchmark_group("aes128");
    g.throughput(Throughput::Bytes(BYTES as u64));
    let mut buf = vec![0u8; BYTES];
    if let Some(hw) = HwAes128Ctr::new(&[7; 16]) {
        g.bench_function("hw_ctr_keystream", |b| {
            b.iter(|| hw.keystream(black_box(5), &mut buf))
        });
    }
    if let Some(hw) = HwAes128::new(&[7; 16]) {
        g.bench_function("hw_ecb", |b| b.iter(|| hw.encrypt_blocks(&mut buf)));
    }
    let mut ctr = Aes128Ctr::new(&[7; 16]);
    g.bench_function("ctr_fill", |b| b.iter(|| ctr.fill(&mut buf)));
    g.finish();
}

criterion_group!(benches, aes);
criterion_main!(benches);
