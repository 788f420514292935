//! Ring exchanges, accounting and failure behaviour, for both the in-memory and the local
//! TLS transport.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use std::time::{Duration, Instant};

use common::*;
use triskele_net::{
    in_memory, local_tls, Direction, NetError, NetOptions, Network, PartyId, Phase, SimNet, Waiting,
};

fn mem(opts: &NetOptions) -> [Network; 3] {
    in_memory(opts)
}

fn tls(opts: &NetOptions) -> [Network; 3] {
    local_tls(opts).expect("local TLS setup")
}

type Make = fn(&NetOptions) -> [Network; 3];
const TRANSPORTS: [(&str, Make); 2] = [("memory", mem), ("tls", tls)];

#[test]
fn ring_exchange_small_and_large_with_exact_stats() {
    for (name, make) in TRANSPORTS {
        let nets = make(&short_opts(20_000, 5_000));
        let parties = run_parties(nets, |net| {
            let net = ring_workload(net);
            check_workload_stats(&net);
            let p = net.party();
            net.shutdown().unwrap();
            p
        });
        assert_eq!(parties, PartyId::ALL, "{name}");
    }
}

#[test]
fn phase_switching_and_reset() {
    for (name, make) in TRANSPORTS {
        let nets = make(&short_opts(5_000, 5_000));
        run_parties(nets, |mut net| {
            assert_eq!(net.phase(), Phase::Setup);
            // Only to next: a one-directional ring.
            for (i, phase) in Phase::ALL.into_iter().enumerate() {
                net.set_phase(phase);
                net.send(Direction::Next, vec![1; i + 1]).unwrap();
                assert_eq!(net.recv(Direction::Prev).unwrap(), vec![1; i + 1]);
            }
            for (i, phase) in Phase::ALL.into_iter().enumerate() {
                let s = net.stats().get(phase);
                assert_eq!(s.next.bytes_sent, i as u64 + 1, "{name} {phase}");
                assert_eq!(s.next.bytes_received, 0);
                assert_eq!(s.next.messages, 1);
                assert_eq!(s.prev.bytes_received, i as u64 + 1);
                assert_eq!(s.prev.bytes_sent, 0);
                assert_eq!(s.prev.messages, 1);
            }
            let total = net.stats().reported_total();
            assert_eq!(total.next.bytes_sent, 2 + 3 + 4);
            net.reset_stats();
            assert_eq!(net.stats().get(Phase::Online).next.messages, 0);
            assert_eq!(net.phase(), Phase::Output);
            net.shutdown().unwrap();
        });
    }
}

#[test]
fn many_small_rounds_in_order() {
    for (name, make) in TRANSPORTS {
        let nets = make(&short_opts(5_000, 5_000));
        run_parties(nets, |mut net| {
            for r in 0..300 {
                round(&mut net, r, r % 17);
            }
            let s = net.stats().get(Phase::Setup);
            assert_eq!(s.next.messages, 600, "{name}");
            net.shutdown().unwrap();
        });
    }
}

#[test]
fn send_never_waits_for_the_reader() {
    // Queue far more than any socket buffer holds before anyone reads.
    for (name, make) in TRANSPORTS {
        let [mut p1, mut p2, p3] = make(&short_opts(10_000, 5_000));
        for i in 0..8 {
            p1.send(Direction::Next, vec![i; 4 << 20]).unwrap();
        }
        for i in 0..8 {
            assert_eq!(
                p2.recv(Direction::Prev).unwrap(),
                vec![i; 4 << 20],
                "{name}"
            );
        }
        for n in [p1, p2, p3] {
            n.shutdown().unwrap();
        }
    }
}

/// Small messages (which may be written inline) and large ones (which go through the
/// writer thread) interleaved: order and contents are kept.
#[test]
fn mixed_sizes_keep_their_order() {
    let sizes: Vec<usize> = (0..60)
        .map(|i| match i % 6 {
            0 => 3 << 20,
            1 => 40_000,
            2 => 32 * 1024,
            _ => i,
        })
        .collect();
    for (name, make) in TRANSPORTS {
        let [mut p1, mut p2, p3] = make(&short_opts(10_000, 5_000));
        let expect: Vec<Vec<u8>> = sizes
            .iter()
            .enumerate()
            .map(|(i, &len)| payload(PartyId::P1, Direction::Next, i, len))
            .collect();
        for m in &expect {
            p1.send(Direction::Next, m.clone()).unwrap();
        }
        for (i, m) in expect.iter().enumerate() {
            assert_eq!(&p2.recv(Direction::Prev).unwrap(), m, "{name} message {i}");
        }
        for n in [p1, p2, p3] {
            n.shutdown().unwrap();
        }
    }
}

#[test]
fn oversized_send_is_refused() {
    for (name, make) in TRANSPORTS {
        let opts = NetOptions {
            max_frame: 1000,
            ..short_opts(1_000, 5_000)
        };
        let [mut p1, mut p2, _p3] = make(&opts);
        match p1.send(Direction::Next, vec![0; 1001]) {
            Err(NetError::FrameTooLarge { peer, len, max }) => {
                assert_eq!((peer, len, max), (PartyId::P2, 1001, 1000), "{name}");
            }
            other => panic!("{name}: expected FrameTooLarge, got {other:?}"),
        }
        p1.send(Direction::Next, vec![0; 1000]).unwrap();
        assert_eq!(p2.recv(Direction::Prev).unwrap().len(), 1000);
        assert_eq!(p1.stats().get(Phase::Setup).next.messages, 1);
    }
}

/// P2 disappears after one good round; P1 and P3 must fail promptly with a clear error.
#[test]
fn dropped_peer_is_detected() {
    let read = Duration::from_millis(500);
    for (name, make) in TRANSPORTS {
        let nets = make(&short_opts(read.as_millis() as u64, 5_000));
        run_parties(nets, |mut net| {
            round(&mut net, 0, 100);
            if net.party() == PartyId::P2 {
                drop(net);
                return;
            }
            let dir = net.party().direction_to(PartyId::P2).unwrap();
            // Sending may still succeed (it only queues); receiving must fail.
            let _ = net.send(dir, vec![1, 2, 3]);
            let t = Instant::now();
            let err = net.recv(dir).unwrap_err();
            assert!(
                err.is_disconnect() || err.is_timeout(),
                "{name}: unexpected error {err}"
            );
            assert_eq!(err.peer(), Some(PartyId::P2), "{name}: {err}");
            assert_eq!(err.exit_code(), 2);
            assert!(
                t.elapsed() < read + Duration::from_secs(2),
                "{name}: took {:?}",
                t.elapsed()
            );
            // The other link still works.
            let other = dir.opposite();
            drop(net.shutdown());
            let _ = other;
        });
    }
}

/// P2 stays connected but never sends: the others time out naming P2.
#[test]
fn stalled_peer_times_out() {
    let read = Duration::from_millis(400);
    for (name, make) in TRANSPORTS {
        let [mut p1, p2, mut p3] = make(&short_opts(read.as_millis() as u64, 5_000));
        let t = Instant::now();
        match p1.recv(Direction::Next) {
            Err(NetError::Timeout {
                peer,
                during,
                after,
                ..
            }) => {
                assert_eq!(
                    (peer, during, after),
                    (PartyId::P2, Waiting::Receive, read),
                    "{name}"
                );
            }
            other => panic!("{name}: expected Timeout, got {other:?}"),
        }
        let waited = t.elapsed();
        assert!(
            waited >= read && waited < read + Duration::from_secs(2),
            "{name}: {waited:?}"
        );
        let err = p3.recv(Direction::Prev).unwrap_err();
        assert!(err.is_timeout(), "{name}: {err}");
        assert!(err.to_string().contains("P2"), "{err}");
        // A timeout is not fatal for the link: a late message is still delivered.
        let mut p2 = p2;
        p2.send(Direction::Prev, b"late".to_vec()).unwrap();
        assert_eq!(p1.recv(Direction::Next).unwrap(), b"late");
        for n in [p1, p2, p3] {
            n.shutdown().unwrap();
        }
    }
}

/// Messages queued right before `shutdown` are delivered; afterwards the peer sees a
/// disconnect.
#[test]
fn shutdown_flushes_then_peer_sees_disconnect() {
    for (name, make) in TRANSPORTS {
        let [mut p1, mut p2, p3] = make(&short_opts(5_000, 5_000));
        p1.send(Direction::Next, vec![5; 3 << 20]).unwrap();
        p1.send(Direction::Next, vec![6; 10]).unwrap();
        p1.shutdown().unwrap();
        assert_eq!(
            p2.recv(Direction::Prev).unwrap(),
            vec![5; 3 << 20],
            "{name}"
        );
        assert_eq!(p2.recv(Direction::Prev).unwrap(), vec![6; 10], "{name}");
        match p2.recv(Direction::Prev) {
            Err(NetError::Disconnected { peer }) => assert_eq!(peer, PartyId::P1, "{name}"),
            other => panic!("{name}: expected Disconnected, got {other:?}"),
        }
        drop(p3);
        let err = p2.recv(Direction::Next).unwrap_err();
        assert!(err.is_disconnect(), "{name}: {err}");
    }
}

/// With a simulated one-way delay, a ring of k sequential rounds takes at least k delays.
#[test]
fn simulated_delay_is_a_lower_bound() {
    let delay = Duration::from_millis(15);
    let rounds = 4;
    for (name, make) in TRANSPORTS {
        let opts = NetOptions {
            sim: Some(SimNet {
                one_way_delay: delay,
                rate_bits_per_sec: None,
            }),
            ..short_opts(5_000, 5_000)
        };
        let nets = make(&opts);
        let t = Instant::now();
        run_parties(nets, |mut net| {
            for r in 0..rounds {
                round(&mut net, r, 10);
            }
            net.shutdown().unwrap();
        });
        let elapsed = t.elapsed();
        assert!(elapsed >= delay * rounds as u32, "{name}: {elapsed:?}");
    }
}

/// With a rate cap, a large message takes at least its serialisation time.
#[test]
fn simulated_rate_is_a_lower_bound() {
    for (name, make) in TRANSPORTS {
        let opts = NetOptions {
            sim: Some(SimNet {
                one_way_delay: Duration::from_millis(1),
                // 80 Mbit/s: 1 MB takes 100 ms.
                rate_bits_per_sec: Some(80_000_000),
            }),
            ..short_opts(5_000, 5_000)
        };
        let [mut p1, mut p2, _p3] = make(&opts);
        let t = Instant::now();
        p1.send(Direction::Next, vec![0; 500_000]).unwrap();
        p1.send(Direction::Next, vec![0; 500_000]).unwrap();
        p2.recv(Direction::Prev).unwrap();
        let first = t.elapsed();
        p2.recv(Direction::Prev).unwrap();
        let second = t.elapsed();
        assert!(first >= Duration::from_millis(51), "{name}: {first:?}");
        assert!(second >= Duration::from_millis(101), "{name}: {second:?}");
    }
}

/// A simulated delay longer than the read timeout gives Timeout, and the message is still
/// delivered by a later call.
#[test]
fn simulated_delay_respects_read_timeout() {
    let opts = NetOptions {
        sim: Some(SimNet {
            one_way_delay: Duration::from_millis(300),
            rate_bits_per_sec: None,
        }),
        ..short_opts(100, 5_000)
    };
    let [mut p1, mut p2, _p3] = in_memory(&opts);
    p1.send(Direction::Next, vec![9]).unwrap();
    assert!(p2.recv(Direction::Prev).unwrap_err().is_timeout());
    assert!(p2.recv(Direction::Prev).unwrap_err().is_timeout());
    assert_eq!(p2.recv(Direction::Prev).unwrap(), vec![9]);
    assert_eq!(p2.stats().get(Phase::Setup).prev.messages, 1);
}

/// A peer that stops reading: the writer gives up after the read timeout, `shutdown`
/// reports it, and dropping a network never waits. The timeout leaves the 32 sends (128 MiB
/// of fresh buffers) time to be queued before a writer gives up, also on a loaded 2-core
/// machine (with 500 ms a send under load could already see the writer's timeout).
#[test]
fn shutdown_and_drop_are_bounded_when_the_peer_stops_reading() {
    let read = Duration::from_millis(2_000);
    let [mut p1, p2, mut p3] = tls(&short_opts(read.as_millis() as u64, 5_000));
    // 64 MiB towards P2, far more than the socket buffers hold; P2 never reads.
    for _ in 0..16 {
        p1.send(Direction::Next, vec![7; 4 << 20]).unwrap();
        p3.send(Direction::Prev, vec![7; 4 << 20]).unwrap();
    }
    let t = Instant::now();
    match p1.shutdown() {
        Err(NetError::Timeout { peer, during, .. }) => {
            assert_eq!((peer, during), (PartyId::P2, Waiting::Send));
        }
        other => panic!("expected a send timeout, got {other:?}"),
    }
    assert!(
        t.elapsed() < read + Duration::from_secs(2),
        "{:?}",
        t.elapsed()
    );
    let t = Instant::now();
    drop(p3);
    assert!(
        t.elapsed() < Duration::from_millis(200),
        "{:?}",
        t.elapsed()
    );
    drop(p2);
}
