//! Communication is part of correctness: exact bytes and messages per PRF evaluation, per
//! phase and direction (PRF.md cost tables; 16-byte elements for p = 2^127+45).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use triskele_net::{in_memory, NetOptions};
use triskele_prf::local::three;
use triskele_prf::{bench_party, PrfReport, PrfTarget};

/// Bytes per evaluation sent by each party (to next, to prev) in preprocessing and online,
/// and messages (per link: sends plus receives) of each phase.
struct Expected {
    prep: (u64, u64),
    online: (u64, u64),
    prep_messages: (u64, u64),
    online_messages: (u64, u64),
}

const R: u64 = 81;
const E: u64 = 16;

/// `None` for nr, whose traffic depends on the inputs' Hamming weights (tests/nr.rs).
fn expected(t: PrfTarget) -> Option<Expected> {
    Some(match t {
        PrfTarget::Nr => return None,
        // Per keystream word (8 per instance): 171 products per instance, one element each to
        // prev, in 96 body rounds and 39 head rounds.
        PrfTarget::Hydra | PrfTarget::MalHydra => Expected {
            prep: (0, 0),
            online: (0, 171 * E / 8),
            prep_messages: (0, 0),
            online_messages: (135, 135),
        },
        // Masks: [w || B1] * [w || B2], then (B1 ^ B2) * B3, then the product t: four
        // elements to prev in three rounds. Online: the fused opening, one element to each
        // neighbour.
        PrfTarget::Legendre => Expected {
            prep: (0, 4 * E),
            online: (E, E),
            prep_messages: (3, 3),
            online_messages: (2, 2),
        },
        // Online: a recorded product (1 to prev) and the RSS opening (1 to next).
        PrfTarget::MalLegendre => Expected {
            prep: (0, 4 * E),
            online: (E, E),
            prep_messages: (3, 3),
            online_messages: (2, 2),
        },
        // 2r products, each one element to prev.
        PrfTarget::Mimc | PrfTarget::MalMimc => Expected {
            prep: (0, 0),
            online: (0, 2 * R * E),
            prep_messages: (0, 0),
            online_messages: (2 * R, 2 * R),
        },
        // r cube tuples (2 products each, to prev, 2 rounds); online r openings to next.
        PrfTarget::MimcCube | PrfTarget::MalMimcCube => Expected {
            prep: (0, 2 * R * E),
            online: (R * E, 0),
            prep_messages: (2, 2),
            online_messages: (R, R),
        },
    })
}

fn run(t: PrfTarget, simd: usize) -> [PrfReport; 3] {
    three(in_memory(&NetOptions::default()), |net| {
        bench_party(t, net, simd).unwrap()
    })
}

#[test]
fn bytes_and_messages_per_evaluation() {
    for &t in PrfTarget::ALL {
        let Some(e) = expected(t) else { continue };
        let sizes: &[usize] = match t.semi_honest() {
            PrfTarget::Hydra => &[8, 24],
            _ => &[1, 9],
        };
        for &simd in sizes {
            let n = simd as u64;
            for r in run(t, simd) {
                let (pre, onl) = (r.preprocessing.stats, r.online.stats);
                let ctx = format!("{t} simd={simd}");
                assert_eq!(pre.next.bytes_sent, e.prep.0 * n, "{ctx} prep to next");
                assert_eq!(pre.prev.bytes_sent, e.prep.1 * n, "{ctx} prep to prev");
                assert_eq!(onl.next.bytes_sent, e.online.0 * n, "{ctx} online to next");
                assert_eq!(onl.prev.bytes_sent, e.online.1 * n, "{ctx} online to prev");
                assert_eq!(
                    pre.next.bytes_received,
                    e.prep.1 * n,
                    "{ctx} prep from next"
                );
                assert_eq!(
                    onl.prev.bytes_received,
                    e.online.0 * n,
                    "{ctx} online from prev"
                );
                assert_eq!(
                    pre.next.messages, e.prep_messages.0,
                    "{ctx} prep messages next"
                );
                assert_eq!(
                    pre.prev.messages, e.prep_messages.1,
                    "{ctx} prep messages prev"
                );
                assert_eq!(
                    onl.next.messages, e.online_messages.0,
                    "{ctx} online messages next"
                );
                assert_eq!(
                    onl.prev.messages, e.online_messages.1,
                    "{ctx} online messages prev"
                );
                let fin = r.finalize.stats;
                if t.is_malicious() {
                    // Protocol 2 and the compare-view: logarithmic in the batch, not linear.
                    assert!(fin.next.bytes_sent + fin.prev.bytes_sent > 0, "{ctx}");
                    assert!(
                        fin.next.bytes_sent + fin.prev.bytes_sent < 8192,
                        "{ctx}: {fin:?}"
                    );
                } else {
                    assert_eq!(fin.next.bytes_sent + fin.prev.bytes_sent, 0, "{ctx}");
                }
            }
        }
    }
}

/// PRF.md's table of engine operations over F_p, per item and party: elements sent, and
/// messages sent per batch (one per round, except the fused opening: two messages, to both
/// neighbours, in one round), semi-honest, for a batch of `N` items.
#[test]
fn engine_operations_cost_as_in_prf_md() {
    use triskele_engine::{Party, Phase, SemiHonest};
    use triskele_prf::{ops, prep};
    const N: usize = 10;
    // (name, elements sent per item, messages sent per batch)
    type Op = fn(&mut Party<SemiHonest>);
    let ops_table: [(&str, u64, u64, Op); 6] = [
        ("random square", 1, 1, |p| {
            prep::random_squares::<triskele_field::Fp, SemiHonest>(p, N).unwrap();
        }),
        ("random bit", 2, 2, |p| {
            prep::random_bits::<triskele_field::Fp, SemiHonest>(p, N).unwrap();
        }),
        ("cube tuple", 2, 2, |p| {
            prep::cube_tuples::<triskele_field::Fp, SemiHonest>(p, N).unwrap();
        }),
        ("Legendre mask", 4, 3, |p| {
            prep::legendre_masks::<triskele_field::Fp, SemiHonest>(p, N).unwrap();
        }),
        ("multiply-then-open (fused)", 2, 2, |p| {
            let x = p.random_rss::<triskele_field::Fp>(N);
            ops::mul_open(p, &x, &x).unwrap();
        }),
        ("open", 1, 1, |p| {
            let x = p.random_rss::<triskele_field::Fp>(N);
            p.open(&x).unwrap();
        }),
    ];
    for (name, elems, sends, op) in ops_table {
        let stats = three(in_memory(&NetOptions::default()), |net| {
            let mut p = Party::<SemiHonest>::setup(net).unwrap();
            p.net().reset_stats();
            p.set_phase(Phase::Online);
            op(&mut p);
            p.net().stats().get(Phase::Online)
        });
        for s in stats {
            let bytes = s.next.bytes_sent + s.prev.bytes_sent;
            assert_eq!(bytes, elems * E * N as u64, "{name}: bytes");
            // Messages sent: a link counts sends plus receives; every party sends as much
            // as it receives on each link in these operations, so sends = messages / 2.
            assert_eq!(
                (s.next.messages + s.prev.messages) / 2,
                sends,
                "{name}: messages sent per batch"
            );
        }
    }
}
