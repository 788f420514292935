//! Communication is part of correctness: exact bytes and messages per phase and direction
//! (ARCHITECTURE.md reference figures, PROTOCOLS.md §6.4).
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::three;
use triskele_aes::{bench_party, KeySize, RunReport, Target};
use triskele_net::NetOptions;

/// Expected per-party figures for one protocol: bytes per block sent in each phase and
/// direction, and online messages per channel at one block.
struct Expected {
    prep_next: u64,
    prep_prev: u64,
    online_next: u64,
    online_prev: u64,
    online_messages_next: u64,
    online_messages_prev: u64,
}

fn expected(target: Target, size: KeySize) -> Expected {
    let layers = size.rounds() as u64;
    match target {
        // 4 bytes and 3 rounds per S-box layer, all sent to the next party.
        Target::Chida => Expected {
            prep_next: 0,
            prep_prev: 0,
            online_next: 4 * 16 * layers,
            online_prev: 0,
            online_messages_next: 3 * layers,
            online_messages_prev: 3 * layers,
        },
    }
}

fn bench(target: Target, size: KeySize, simd: usize) -> [RunReport; 3] {
    three(triskele_net::in_memory(&NetOptions::default()), |net| {
        bench_party(target, net, size, simd).expect("bench run")
    })
}

fn check(target: Target, size: KeySize, simd: usize) {
    let e = expected(target, size);
    let s = simd as u64;
    for r in bench(target, size, simd) {
        let p = &r.preprocessing.stats;
        assert_eq!(p.next.bytes_sent, e.prep_next * s, "{target} prep next");
        assert_eq!(p.prev.bytes_sent, e.prep_prev * s, "{target} prep prev");
        let o = &r.online.stats;
        assert_eq!(o.next.bytes_sent, e.online_next * s, "{target} online next");
        assert_eq!(o.prev.bytes_sent, e.online_prev * s, "{target} online prev");
        // What one party sends to next, the next party receives from prev.
        assert_eq!(o.prev.bytes_received, e.online_next * s);
        assert_eq!(o.next.bytes_received, e.online_prev * s);
        if simd == 1 {
            assert_eq!(
                o.next.messages, e.online_messages_next,
                "{target} messages next"
            );
            assert_eq!(
                o.prev.messages, e.online_messages_prev,
                "{target} messages prev"
            );
        }
        let f = &r.finalize.stats;
        assert_eq!(
            f.next.bytes_sent + f.prev.bytes_sent,
            0,
            "{target} finalize"
        );
    }
}

#[test]
fn chida_aes128_is_640_bytes_per_block_and_30_messages() {
    check(Target::Chida, KeySize::Aes128, 1);
    check(Target::Chida, KeySize::Aes128, 1000);
    let e = expected(Target::Chida, KeySize::Aes128);
    assert_eq!(e.online_next, 640);
    assert_eq!(e.online_messages_next, 30);
}

#[test]
fn chida_aes256_is_896_bytes_per_block() {
    check(Target::Chida, KeySize::Aes256, 1);
    check(Target::Chida, KeySize::Aes256, 300);
    assert_eq!(expected(Target::Chida, KeySize::Aes256).online_next, 896);
}
