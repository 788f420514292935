//! Latency of one communication round through the whole stack, for the in-memory and the
//! local TLS transport.
//!
//! - `ring_round`: every party sends to next and receives from prev (one protocol round).
//! - `ping_pong`: P1 -> P2 -> P1 (a round trip).
//!
//! Run: `cargo bench -p triskele-net --bench roundtrip`.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::sync::mpsc;
use std::thread::{self, JoinHandle};
use std::time::{Duration, Instant};

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use triskele_net::{in_memory, local_tls, Direction, NetOptions, Network};

#[derive(Clone, Copy)]
enum Pattern {
    Ring,
    PingPong,
}

/// A command for the helper parties: run `iters` rounds with `len`-byte messages.
type Cmd = Option<(u64, usize)>;

struct Harness {
    p1: Network,
    ctl: Vec<mpsc::Sender<Cmd>>,
    helpers: Vec<JoinHandle<()>>,
}

fn helper(mut net: Network, ctl: mpsc::Receiver<Cmd>, pattern: Pattern) {
    while let Ok(Some((iters, len))) = ctl.recv() {
        let mut msg = vec![0u8; len];
        for _ in 0..iters {
            match pattern {
                Pattern::Ring => {
                    net.send(Direction::Next, msg).unwrap();
                    msg = net.recv(Direction::Prev).unwrap();
                }
                Pattern::PingPong => {
                    if net.party() == triskele_net::PartyId::P2 {
                        msg = net.recv(Direction::Prev).unwrap();
                        net.send(Direction::Prev, msg).unwrap();
                        msg = Vec::new();
                    }
                }
            }
        }
    }
    net.shutdown().unwrap();
}

impl Harness {
    fn new(nets: [Network; 3], pattern: Pattern) -> Harness {
        let [p1, p2, p3] = nets;
        let mut ctl = Vec::new();
        let mut helpers = Vec::new();
        for net in [p2, p3] {
            let (tx, rx) = mpsc::channel();
            ctl.push(tx);
            helpers.push(thread::spawn(move || helper(net, rx, pattern)));
        }
        Harness { p1, ctl, helpers }
    }

    fn run(&mut self, iters: u64, len: usize, pattern: Pattern) -> Duration {
        for c in &self.ctl {
            c.send(Some((iters, len))).unwrap();
        }
        let mut msg = vec![0u8; len];
        let t = Instant::now();
        for _ in 0..iters {
            match pattern {
                Pattern::Ring => {
                    self.p1.send(Direction::Next, msg).unwrap();
                    msg = self.p1.recv(Direction::Prev).unwrap();
                }
                Pattern::PingPong => {
                    self.p1.send(Direction::Next, msg).unwrap();
                    msg = self.p1.recv(Direction::Next).unwrap();
                }
            }
        }
        t.elapsed()
    }

    fn finish(self) {
        for c in &self.ctl {
            c.send(None).unwrap();
        }
        for h in self.helpers {
            h.join().unwrap();
        }
        self.p1.shutdown().unwrap();
    }
}

fn bench(c: &mut Criterion) {
    let opts = NetOptions::default();
    for (pattern, group_name) in [
        (Pattern::Ring, "ring_round"),
        (Pattern::PingPong, "ping_pong"),
    ] {
        let mut group = c.benchmark_group(group_name);
        for transport in ["memory", "tls"] {
            let nets = match transport {
                "memory" => in_memory(&opts),
                _ => local_tls(&opts).unwrap(),
            };
            let mut h = Harness::new(nets, pattern);
            for len in [1usize, 1 << 20] {
                group.throughput(Throughput::Bytes(len as u64));
                group.bench_with_input(BenchmarkId::new(transport, len), &len, |b, &len| {
                    b.iter_custom(|iters| h.run(iters, len, pattern));
                });
            }
            h.finish();
        }
        group.finish();
    }
}

criterion_group! {
    name = benches;
    config = Criterion::default().measurement_time(Duration::from_secs(3)).warm_up_time(Duration::from_secs(1));
    targets = bench
}
criterion_main!(benches);
