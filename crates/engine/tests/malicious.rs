//! The malicious machinery on its own (PROTOCOLS.md §5.1, §5.2, §5.4): views and compare-view,
//! coins, zero checks, broadcasts, and Protocol 2 `Verify` with honest batches and with a
//! single planted error at a random position of a large batch. Three parties over in-memory
//! links, fixed seeds.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha20Rng;
use triskele_engine::verify::{later_levels, levels};
use triskele_engine::{AbortReason, EngineError, Lift, Malicious, Party, Phase};
use triskele_field::{Bits16, Field, Fp, Gf2p64, Gf2p8, Random};
use triskele_net::{NetOptions, Network, Tamper};
use triskele_share::{deal, Direction, PartyId, RssVec};

fn three_with<T: Send>(opts: &NetOptions, f: impl Fn(Party<Malicious>) -> T + Sync) -> [T; 3] {
    let nets = triskele_net::in_memory(opts);
    let f = &f;
    std::thread::scope(|s| {
        let hs: Vec<_> = nets
            .into_iter()
            .map(|n: Network| s.spawn(move || f(Party::setup(n).expect("setup"))))
            .collect();
        let v: Vec<T> = hs.into_iter().map(|h| h.join().expect("join")).collect();
        v.try_into().ok().expect("three")
    })
}

fn three<T: Send>(f: impl Fn(Party<Malicious>) -> T + Sync) -> [T; 3] {
    three_with(&NetOptions::default(), f)
}

fn random_vec<F: Random>(n: usize, rng: &mut ChaCha20Rng) -> Vec<F> {
    let mut v = vec![F::ZERO; n];
    F::fill_random(rng, &mut v);
    v
}

/// Dealt triples `z = x*y + e_k` (errors `e` planted in the clear).
fn dealt_triples<F: Field + Random>(
    n: usize,
    errors: &[(usize, F)],
    seed: u64,
) -> [(RssVec<F>, RssVec<F>, RssVec<F>); 3] {
    let mut rng = ChaCha20Rng::seed_from_u64(seed);
    let x: Vec<F> = random_vec(n, &mut rng);
    let y: Vec<F> = random_vec(n, &mut rng);
    let mut z: Vec<F> = x.iter().zip(&y).map(|(a, b)| *a * *b).collect();
    for (k, e) in errors {
        z[*k] += *e;
    }
    let (xs, ys, zs) = (deal(&x, &mut rng), deal(&y, &mut rng), deal(&z, &mut rng));
    [0, 1, 2].map(|i| (xs[i].clone(), ys[i].clone(), zs[i].clone()))
}

fn is_abort(r: &Result<(), EngineError>) -> bool {
    matches!(r, Err(EngineError::Abort(_)))
}

/// Each party's shares of dealt triples.
type Dealt<F> = [(RssVec<F>, RssVec<F>, RssVec<F>); 3];

/// Records the dealt triples at each party, runs the finalize check; returns the results and
/// each party's finalize stats `(to next, to prev, messages next, messages prev)`.
fn run_verify<F: Lift + Random>(triples: &Dealt<F>) -> [(Result<(), EngineError>, [u64; 4]); 3] {
    run_verify_with(&NetOptions::default(), triples, None)
}

/// [`run_verify`] over links with `opts` (a tamper), with the `GF(2^8)` triples `also`
/// recorded after `triples` if given.
fn run_verify_with<F: Lift + Random>(
    opts: &NetOptions,
    triples: &Dealt<F>,
    also: Option<&Dealt<Gf2p8>>,
) -> [(Result<(), EngineError>, [u64; 4]); 3] {
    run_verify_sized(opts, triples, also, None)
}

/// [`run_verify_with`] with the run size `run` if given (and then no segments).
fn run_verify_sized<F: Lift + Random>(
    opts: &NetOptions,
    triples: &Dealt<F>,
    also: Option<&Dealt<Gf2p8>>,
    run: Option<usize>,
) -> [(Result<(), EngineError>, [u64; 4]); 3] {
    three_with(opts, |mut p| {
        if run.is_some() {
            p.model().set_segment(None);
            p.model().set_run_size(run);
        }
        let (x, y, z) = &triples[p.id().index()];
        p.model().record(x, y, z);
        if let Some(t8) = also {
            let (x, y, z) = &t8[p.id().index()];
            p.model().record(x, y, z);
        }
        p.set_phase(Phase::Finalize);
        let r = p.verify_recorded();
        let st = p.net().stats().get(Phase::Finalize);
        (
            r,
            [
                st.next.bytes_sent,
                st.prev.bytes_sent,
                st.next.messages,
                st.prev.messages,
            ],
        )
    })
}

#[test]
fn honest_verify_passes_with_the_documented_bytes() {
    for n in [1usize, 2, 3, 5, 1000, 4097, 70_001, 1 << 16] {
        let t = dealt_triples::<Gf2p64>(n, &[], n as u64);
        let l = u64::from(levels(n));
        for (r, st) in run_verify(&t) {
            r.unwrap();
            // To next: 16-byte seed, ℓ coins, t, ρ, σ, digest; to prev: ℓ reshares of two
            // elements, z*, σ, digest (module docs of `verify`, compare-view [DEV]).
            assert_eq!(st[0], 16 + 8 * l + 24 + 32, "n = {n}");
            assert_eq!(st[1], 16 * l + 16 + 32, "n = {n}");
            // Messages (sends + receives) per channel: ℓ + 5 sends to next and ℓ + 3 to prev.
            assert_eq!(st[2], 2 * l + 8, "n = {n}");
            assert_eq!(st[3], 2 * l + 8, "n = {n}");
        }
    }
}

/// Finalize `[to next, to prev, messages next, messages prev]` of one run of `Verify` with
/// the k-ary first level over `n` triples in blocks of `k` (`ℓ' = ⌈log2 ⌈n/k⌉⌉` levels after
/// it, `later_levels`): to next the seed, the level's coin, one coin per later step,
/// `t`, `ρ`, `σ` and the digest; to prev its `k - 1` reshared values (the extra nodes), the
/// later steps' reshares, `z*`, `σ` and the digest.
fn octal_cost_k(n: usize, k: usize) -> [u64; 4] {
    let (steps, reshared) = later_levels(levels(n.div_ceil(k)));
    [
        16 + 8 + 8 * steps + 24 + 32,
        8 * (k as u64 - 1) + reshared + 16 + 32,
        2 * steps + 10,
        2 * steps + 10,
    ]
}

/// Halvings while more than twelve levels are left, then steps of three levels (blocks of
/// eight, 14 values reshared, 112 bytes) and one of the rest (blocks of `2^r`, `2^(r+1) - 2`
/// values), each with one coin.
#[test]
fn the_last_levels_take_steps_of_eight() {
    assert_eq!(later_levels(14), (6, 2 * 16 + 4 * 112));
    assert_eq!(later_levels(12), (4, 4 * 112));
    assert_eq!(later_levels(11), (4, 3 * 112 + 48));
    assert_eq!(later_levels(7), (3, 2 * 112 + 16));
    assert_eq!(later_levels(1), (1, 16));
    assert_eq!(later_levels(0), (0, 0));
}

/// [`octal_cost_k`] with blocks of eight (runs that mix bytes with words or packed bits).
fn octal_cost(n: usize) -> [u64; 4] {
    octal_cost_k(n, 8)
}

/// Runs of at least `OCTAL_MIN_LEN` triples with bytes take the k-ary first level: runs of
/// bytes only with blocks of 32 (31 reshared values, 248 bytes to prev, two halvings fewer
/// than with blocks of eight), runs of bits next to bytes with blocks of eight; shorter ones
/// and triples without bytes halve from the start.
#[test]
fn honest_byte_runs_take_the_octal_level_with_the_documented_bytes() {
    use triskele_engine::verify::OCTAL_MIN_LEN;
    for n in [OCTAL_MIN_LEN, 70_001, (1 << 17) + 5] {
        let t = dealt_triples::<Gf2p8>(n, &[], n as u64);
        for (r, st) in run_verify(&t) {
            r.unwrap();
            assert_eq!(st, octal_cost_k(n, 32), "n = {n}");
        }
    }
    let n = OCTAL_MIN_LEN - 1;
    let l = u64::from(levels(n));
    for (r, st) in run_verify(&dealt_triples::<Gf2p8>(n, &[], 3)) {
        r.unwrap();
        assert_eq!(
            st,
            [16 + 8 * l + 24 + 32, 16 * l + 16 + 32, 2 * l + 8, 2 * l + 8]
        );
    }
    // Bits only: blocks of 32, 31 reshared values (248 bytes to prev).
    let t = dealt_triples::<Bits16>(5000, &[], 4);
    for (r, st) in run_verify(&t) {
        r.unwrap();
        assert_eq!(st, octal_cost_k(5000 * 16, 32));
    }
    // Bits next to bytes: blocks of eight.
    let t8 = dealt_triples::<Gf2p8>(1000, &[], 5);
    let want = octal_cost(5000 * 16 + 1000);
    for (r, st) in run_verify_with(&NetOptions::default(), &t, Some(&t8)) {
        r.expect("honest");
        assert_eq!([st[0], st[1]], [want[0], want[1]]);
    }
}

/// One wrong bit triple in a run of bits only (blocks of 32) or of bits next to bytes (blocks
/// of eight, one packed byte per block): at the ends, inside a sub-block, in any packed
/// byte of a block and in the last partial sub-block, every party aborts.
#[test]
fn planted_errors_in_packed_bit_runs_abort() {
    let words = 6_000; // 96,000 bit triples
    let mut rng = ChaCha20Rng::seed_from_u64(29);
    let mut cases = vec![
        (0, 0),
        (0, 7),
        (1, 8),
        (511, 15),
        (2_048, 3),
        (words - 1, 15),
    ];
    cases.push((rng.random_range(0..words), rng.random_range(0..16)));
    let t8 = dealt_triples::<Gf2p8>(3_000, &[], 6);
    for (trial, (w, lane)) in cases.into_iter().enumerate() {
        let t = dealt_triples::<Bits16>(words, &[(w, Bits16(1 << lane))], 500 + trial as u64);
        for with_bytes in [false, true] {
            let res = three(|mut p| {
                let i = p.id().index();
                p.model().record(&t[i].0, &t[i].1, &t[i].2);
                if with_bytes {
                    p.model().record(&t8[i].0, &t8[i].1, &t8[i].2);
                }
                p.verify_recorded()
            });
            for r in res {
                assert!(
                    matches!(r, Err(EngineError::Abort(AbortReason::MultiplicationCheck))),
                    "word {w}, lane {lane}, bytes {with_bytes}: {r:?}"
                );
            }
        }
    }
}

/// One error in a run that takes the k-ary first level, at the ends, on both sides of a
/// chunk of 8,192 triples (1,024 blocks of eight), in the middle rows of a chunk and in the
/// last, partial chunk: every party aborts.
#[test]
fn planted_errors_in_octal_runs_abort() {
    let n: usize = 70_001;
    let mut rng = ChaCha20Rng::seed_from_u64(23);
    let mut positions = vec![
        0,
        8191,
        8192,
        3 * 8192 + 4 * 1024 + 7,
        8 * 8192 + 3000,
        n - 1,
    ];
    positions.push(rng.random_range(0..n));
    for (trial, pos) in positions.into_iter().enumerate() {
        let e = Gf2p8(1 << (trial % 8));
        let t = dealt_triples::<Gf2p8>(n, &[(pos, e)], 300 + trial as u64);
        for (r, _) in run_verify(&t) {
            assert!(
                matches!(r, Err(EngineError::Abort(AbortReason::MultiplicationCheck))),
                "position {pos}: {r:?}"
            );
        }
    }
}

/// A corrupt party that flips a bit of its reshared values of the k-ary level (its first
/// finalize message to prev) or of its share of the level's coin (its second to next)
/// makes every honest party abort, with honest triples.
#[test]
fn tampered_octal_level_aborts() {
    // Bytes only: the level with blocks of 32 (31 reshared values).
    let t = dealt_triples::<Gf2p8>(70_001, &[], 31);
    tampered_level_aborts(&t, None, 248);
    // Bits next to bytes: blocks of eight (7 reshared values).
    let bits = dealt_triples::<Bits16>(5_000, &[], 33);
    let t8 = dealt_triples::<Gf2p8>(1_000, &[], 34);
    tampered_level_aborts(&bits, Some(&t8), 56);
    // Bits only: blocks of 32.
    let t = dealt_triples::<Bits16>(5_000, &[], 32);
    tampered_level_aborts(&t, None, 248);
}

/// [`tampered_octal_level_aborts`] for one set of honest triples (and `GF(2^8)` triples
/// recorded after them, if given) whose level reshares `reshare` bytes.
fn tampered_level_aborts<F: Lift + Random>(
    t: &Dealt<F>,
    t8: Option<&Dealt<Gf2p8>>,
    reshare: usize,
) {
    for cheater in PartyId::ALL {
        for (dir, msg) in [(Direction::Prev, 0), (Direction::Next, 1)] {
            let tamper = Tamper::new(cheater, Phase::Finalize, Some(dir), msg, 40 + msg);
            let opts = NetOptions {
                tamper: Some(tamper.clone()),
                ..NetOptions::default()
            };
            let res = run_verify_with(&opts, t, t8);
            let len = tamper.tampered().map(|f| f.len);
            assert_eq!(len, Some(if msg == 0 { reshare } else { 8 }), "{dir:?}");
            for (i, (r, _)) in res.iter().enumerate() {
                if i != cheater.index() {
                    assert!(is_abort(r), "{cheater:?} {dir:?}: party {i}: {r:?}");
                }
            }
        }
    }
}

/// A cheating party that changes its reshare of a step of eight (the last levels after a
/// k-ary first level) or the coin of one makes every honest party abort. 70,001 byte triples
/// fold by 32 to 2,188 entries: twelve levels after the first, so the run has no halving
/// and four steps of eight (messages 1 to 4 to prev, 112 bytes each; their coins are
/// messages 2 to 5 to next).
#[test]
fn tampered_step_of_eight_aborts() {
    let t = dealt_triples::<Gf2p8>(70_001, &[], 35);
    assert_eq!(run_verify(&t)[0].1, octal_cost_k(70_001, 32));
    for cheater in PartyId::ALL {
        for (dir, msg, len) in [
            (Direction::Prev, 1, 112),
            (Direction::Prev, 4, 112),
            (Direction::Next, 3, 8),
        ] {
            let tamper = Tamper::new(cheater, Phase::Finalize, Some(dir), msg, 50 + msg);
            let opts = NetOptions {
                tamper: Some(tamper.clone()),
                ..NetOptions::default()
            };
            let res = run_verify_with(&opts, &t, None);
            assert_eq!(tamper.tampered().map(|f| f.len), Some(len), "{dir:?} {msg}");
            for (i, (r, _)) in res.iter().enumerate() {
                if i != cheater.index() {
                    assert!(is_abort(r), "{cheater:?} {dir:?} {msg}: party {i}: {r:?}");
                }
            }
        }
    }
}

#[test]
fn honest_verify_passes_for_every_source_field() {
    let g8 = dealt_triples::<Gf2p8>(777, &[], 1);
    let bits = dealt_triples::<Bits16>(33, &[], 2);
    let fp = dealt_triples::<Fp>(100, &[], 3);
    let res = three(|mut p| {
        let i = p.id().index();
        p.model().record(&g8[i].0, &g8[i].1, &g8[i].2);
        p.model().record(&bits[i].0, &bits[i].1, &bits[i].2);
        p.model().record(&fp[i].0, &fp[i].1, &fp[i].2);
        p.verify_recorded()
    });
    for r in res {
        r.unwrap();
    }
}

#[test]
fn products_from_mul_are_recorded_and_pass() {
    let res = three(|mut p| {
        let x = p.random_rss::<Gf2p8>(500);
        let y = p.random_rss::<Gf2p8>(500);
        let z = p.mul(&x, &y).unwrap();
        let b = p.random_rss::<Bits16>(7);
        p.mul(&b, &b).unwrap();
        assert_eq!(p.model().recorder().gf2p64_triples(), 500 + 16 * 7);
        p.verify_recorded()?;
        p.open_output(&z).map(|_| ())
    });
    for r in res {
        r.unwrap();
    }
}

/// One additive error at a random position of a batch of 2^16 triples: every party aborts,
/// for several positions and error values.
#[test]
fn single_planted_error_in_a_large_batch_aborts_everywhere() {
    let n = 1 << 16;
    let mut rng = ChaCha20Rng::seed_from_u64(99);
    for trial in 0..4u64 {
        let pos = rng.random_range(0..n);
        let e = Gf2p64(rng.random::<u64>() | 1);
        let t = dealt_triples::<Gf2p64>(n, &[(pos, e)], 100 + trial);
        for (r, _) in run_verify(&t) {
            assert!(
                matches!(r, Err(EngineError::Abort(AbortReason::MultiplicationCheck))),
                "trial {trial}, position {pos}: {r:?}"
            );
        }
    }
}

/// Batch lengths that are not powers of two (the halving pairs `j` with `j + ⌈len/2⌉` and
/// pads with zeros, and the later levels end in partial work blocks): an error at either end,
/// at the first-level split and at a random position is caught.
#[test]
fn planted_errors_in_uneven_batches_abort() {
    let n = 70_001;
    let mut rng = ChaCha20Rng::seed_from_u64(17);
    for (trial, pos) in [0, n - 1, 36_863, 36_864, rng.random_range(0..n)]
        .into_iter()
        .enumerate()
    {
        let t = dealt_triples::<Gf2p64>(n, &[(pos, Gf2p64(1 << (trial * 7)))], 200 + trial as u64);
        for (r, _) in run_verify(&t) {
            assert!(
                matches!(r, Err(EngineError::Abort(AbortReason::MultiplicationCheck))),
                "position {pos}: {r:?}"
            );
        }
    }
}

#[test]
fn planted_errors_in_small_fields_abort() {
    let mut rng = ChaCha20Rng::seed_from_u64(5);
    // GF(2^8), lifted by E_8: the smallest possible error.
    let pos = rng.random_range(0..5000);
    let t = dealt_triples::<Gf2p8>(5000, &[(pos, Gf2p8(1))], 6);
    for (r, _) in run_verify(&t) {
        assert!(is_abort(&r), "{r:?}");
    }
    // One lane of one bit-sliced word.
    let pos = rng.random_range(0..300);
    let t = dealt_triples::<Bits16>(300, &[(pos, Bits16(1 << 9))], 7);
    for (r, _) in run_verify(&t) {
        assert!(is_abort(&r), "{r:?}");
    }
    // F_p, verified in F_p.
    let t = dealt_triples::<Fp>(1000, &[(999, Fp::from(1u64))], 8);
    for (r, _) in run_verify(&t) {
        assert!(is_abort(&r), "{r:?}");
    }
}

#[test]
fn coins_agree_and_views_match() {
    let res = three(|mut p| {
        let c = p.coins(5).unwrap();
        p.compare_view().unwrap();
        c
    });
    assert_eq!(res[0], res[1]);
    assert_eq!(res[1], res[2]);
    assert!(res[0].iter().all(|c| !c.is_zero()));
}

#[test]
fn zero_check_passes_for_zero_and_aborts_otherwise() {
    let mut rng = ChaCha20Rng::seed_from_u64(11);
    for bad in [false, true] {
        let mut v = vec![Gf2p8(0); 40];
        if bad {
            v[17] = Gf2p8(0x20);
        }
        let shares = deal(&v, &mut rng);
        let res = three(|mut p| {
            let i = p.id().index();
            p.absorb_zero_check(&shares[i]);
            p.compare_view()
        });
        for r in res {
            assert_eq!(is_abort(&r), bad, "{r:?}");
        }
    }
}

#[test]
fn inconsistent_broadcast_aborts_both_receivers() {
    // Honest broadcast by P2.
    let res = three(|mut p| {
        let msg = [7u8; 20];
        let mine = (p.id() == PartyId::P2).then_some(&msg[..]);
        let got = p.broadcast(PartyId::P2, mine, 20)?;
        assert_eq!(got, msg);
        p.compare_view()
    });
    for r in res {
        r.unwrap();
    }
    // P2's message to P3 (next) has one bit flipped.
    let opts = NetOptions {
        tamper: Some(Tamper::new(
            PartyId::P2,
            Phase::Finalize,
            Some(Direction::Next),
            0,
            3,
        )),
        ..NetOptions::default()
    };
    let tamper = opts.tamper.clone().unwrap();
    let res = three_with(&opts, |mut p| {
        p.set_phase(Phase::Finalize);
        let msg = [7u8; 20];
        let mine = (p.id() == PartyId::P2).then_some(&msg[..]);
        p.broadcast(PartyId::P2, mine, 20)?;
        p.compare_view()
    });
    assert_eq!(tamper.tampered().unwrap().len, 20);
    assert!(is_abort(&res[0]), "P1: {:?}", res[0]);
    assert!(is_abort(&res[2]), "P3: {:?}", res[2]);
}

/// A corrupt opening (one flipped bit of the component sent to next) makes both honest
/// parties abort at the compare-view, thanks to the digests in both directions.
#[test]
fn tampered_opening_aborts_both_honest_parties() {
    for cheater in PartyId::ALL {
        let opts = NetOptions {
            tamper: Some(Tamper::new(cheater, Phase::Output, None, 0, 42)),
            ..NetOptions::default()
        };
        let res = three_with(&opts, |mut p| {
            let x = p.random_rss::<Gf2p64>(10);
            p.set_phase(Phase::Output);
            p.open_output(&x).map(|_| ())
        });
        for p in PartyId::ALL {
            if p != cheater {
                assert!(is_abort(&res[p.index()]), "{p}: {:?}", res[p.index()]);
            }
        }
    }
}

/// Segmented verification ([`Party::checkpoint`]) with a one-byte segment: each recorded
/// batch is verified when the checkpoint runs, down to its last triple, whose `CheckTriple`
/// waits for the final check; a planted (consistent) error in the first segment makes every
/// party abort at the final check, although the later segments and the final records are
/// correct.
#[test]
fn an_error_in_an_early_segment_aborts_the_final_check() {
    let bad = dealt_triples::<Gf2p8>(3000, &[(1234, Gf2p8(0x40))], 31);
    let good = dealt_triples::<Fp>(500, &[], 32);
    let tail = dealt_triples::<Gf2p64>(77, &[], 33);
    let res = three(|mut p| {
        let i = p.id().index();
        p.model().set_segment(Some(1));
        p.model().record(&bad[i].0, &bad[i].1, &bad[i].2);
        p.checkpoint().unwrap();
        p.model().record(&good[i].0, &good[i].1, &good[i].2);
        p.checkpoint().unwrap();
        // Not a segment: the final check verifies these.
        p.model().set_segment(None);
        p.model().record(&tail[i].0, &tail[i].1, &tail[i].2);
        p.checkpoint().unwrap();
        let m = p.model();
        let seen = (
            m.segments(),
            m.segment_failed(),
            m.recorder().gf2p64_triples(),
        );
        (seen, p.verify_recorded())
    });
    for ((segments, failed, left), r) in res {
        // The segments' last checks are parked: the failure shows at the end.
        assert_eq!((segments, failed, left), (2, false, 77));
        assert!(
            matches!(r, Err(EngineError::Abort(AbortReason::MultiplicationCheck))),
            "{r:?}"
        );
    }
}

/// Products from `Party::mul` are verified as they are recorded once they reach the segment:
/// the outputs stay correct, the records are gone after each segment, and each segment's
/// messages are those of one Verify, counted in the finalize phase.
#[test]
fn segments_verify_products_as_they_are_multiplied() {
    let n = 1000usize;
    let res = three(|mut p| {
        p.model().set_segment(Some(6 * n));
        p.set_phase(Phase::Online);
        let x = p.random_rss::<Gf2p8>(n);
        let y = p.random_rss::<Gf2p8>(n);
        let mut z = p.mul(&x, &y).unwrap();
        for _ in 0..3 {
            z = p.mul(&z, &y).unwrap();
        }
        assert_eq!(p.model().recorder().gf2p64_triples(), 0);
        p.set_phase(Phase::Finalize);
        p.verify_recorded().unwrap();
        let segments = p.model().segments();
        p.set_phase(Phase::Output);
        let (xo, yo, zo) = (
            p.open_output(&x).unwrap(),
            p.open_output(&y).unwrap(),
            p.open_output(&z).unwrap(),
        );
        let st = p.net().stats();
        (
            segments,
            xo,
            yo,
            zo,
            st.get(Phase::Online),
            st.get(Phase::Finalize),
        )
    });
    let l = u64::from(levels(n));
    for (segments, x, y, z, online, fin) in res {
        assert_eq!(segments, 4);
        for k in 0..n {
            assert_eq!(z[k], x[k] * y[k] * y[k] * y[k] * y[k]);
        }
        assert_eq!(online.prev.bytes_sent, 4 * n as u64);
        assert_eq!(online.next.bytes_sent, 0);
        // Four Verify runs and the final compare-view.
        assert_eq!(fin.next.bytes_sent, 4 * (16 + 8 * l + 24) + 32);
        assert_eq!(fin.prev.bytes_sent, 4 * (16 * l + 16) + 32);
    }
}

/// `Party::record_product_swap` records the triples it is handed, whether it takes them
/// without a copy (they fill a segment: verified at once) or copies them (no segment): an
/// honest batch passes, and a single additive error in a consistent sharing of `z` makes every
/// party abort, both ways.
#[test]
fn swapped_products_are_recorded_and_checked() {
    for segment in [Some(1), None] {
        for error in [None, Some((321, Fp::from(5u64)))] {
            let errors: Vec<_> = error.into_iter().collect();
            let dealt = dealt_triples::<Fp>(1000, &errors, 34);
            let res = three(|mut p| {
                let i = p.id().index();
                p.model().set_segment(segment);
                let (mut x, mut y, mut z) = dealt[i].clone();
                p.record_product_swap(&mut x, &mut y, &mut z)?;
                let recorded = p.model().recorder().fp.len() + 1000 * p.model().segments();
                assert_eq!(recorded, 1000, "segment {segment:?}");
                p.verify_recorded()
            });
            for r in res {
                match error {
                    None => r.unwrap(),
                    Some(_) => assert!(is_abort(&r), "segment {segment:?}: {r:?}"),
                }
            }
        }
    }
}

/// Products recorded in place ([`Party::record_in_place`]: operands appended to the store,
/// products appended to its `z` by `mul_covered_append`) are verified like recorded ones,
/// with one segment check after the batch or at the end: honest runs pass, and an error in
/// one party's share of one product makes every party abort.
#[test]
fn in_place_records_are_checked() {
    for segment in [Some(1), None] {
        for error in [None, Some(777usize)] {
            let dealt = dealt_triples::<Gf2p8>(1000, &[], 35);
            let res = three(|mut p| {
                let i = p.id().index();
                p.model().set_segment(segment);
                let (x, y, _) = &dealt[i];
                p.record_in_place::<Gf2p8, _>(|p, st| {
                    let b = st.len();
                    st.x.extend(x);
                    st.y.extend(y);
                    let (sx, sy) = (&st.x, &st.y);
                    p.mul_covered_append(
                        [&sx.first[b..], &sx.second[b..]],
                        [&sy.first[b..], &sy.second[b..]],
                        &mut st.z,
                    )?;
                    if let (Some(k), 0) = (error, i) {
                        st.z.first[b + k] += Gf2p8(0x40);
                    }
                    Ok(())
                })?;
                let recorded = p.model().recorder().gf2p8.len() + 1000 * p.model().segments();
                assert_eq!(recorded, 1000, "segment {segment:?}");
                p.verify_recorded()
            });
            for r in res {
                match error {
                    None => r.unwrap(),
                    Some(_) => assert!(is_abort(&r), "segment {segment:?}: {r:?}"),
                }
            }
        }
    }
}

/// A batch left with unequal parts is refused with a typed error, and only whole triples
/// stay in the store.
#[test]
fn ragged_in_place_records_are_refused() {
    let dealt = dealt_triples::<Gf2p8>(10, &[], 36);
    let res = three(|mut p| {
        let (x, y, z) = &dealt[p.id().index()];
        p.model().record(x, y, z);
        let r = p.record_in_place::<Gf2p8, _>(|_, st| {
            st.x.extend(x);
            st.y.extend(y);
            Ok(())
        });
        (r, p.model().recorder().gf2p8.clone())
    });
    for (r, store) in res {
        assert!(
            matches!(r, Err(EngineError::LengthMismatch { .. })),
            "{r:?}"
        );
        assert_eq!(store.x.len(), 10);
        assert_eq!(store.y.len(), 10);
        assert_eq!(store.z.len(), 10);
    }
}

/// Windows that take the k-ary first level go side by side: 2^18 byte triples with a run
/// size of 2^15 (windows of 2^17 for bytes only) are two runs of 4,096 blocks of 32, twelve
/// levels each, so their seeds go in one opening, their first levels in one reshare to prev
/// with both runs' 31 values and one opening of both coins, and their four steps in four
/// rounds of one message to prev with both runs' 14 values (224 bytes). Honest runs pass with
/// the bytes of two runs and the messages of one; a change in a shared step's message aborts
/// at every honest party.
#[test]
fn windows_take_their_steps_side_by_side() {
    let n = 1usize << 18;
    let dealt = dealt_triples::<Gf2p8>(n, &[], 41);
    let run = |opts: &NetOptions| run_verify_sized(opts, &dealt, None, Some(1 << 15));
    let one = octal_cost_k(n / 2, 32);
    for (r, st) in run(&NetOptions::default()) {
        r.expect("honest");
        // Two runs' bytes, less one compare-view digest.
        assert_eq!(st[0], 2 * one[0] - 32);
        assert_eq!(st[1], 2 * one[1] - 32);
        // Sends and receives on each channel: the seeds, first reshare and coins of both runs
        // (3), the four steps (8), CheckTriple (5) and the compare-view (2), as one run
        // (`octal_cost_k`: 2ℓ' + 10 with ℓ' = 12 as four steps), where runs one after the
        // other took 2 · 3 + 15.
        assert_eq!(one[3], 18);
        assert_eq!(st[3], 18);
    }
    tampered_shared_step_aborts(|opts| run(opts).map(|(r, _)| r));
}

/// Runs of two kinds side by side, of different lengths and shapes: 70,000 `GF(2^64)` triples
/// (no byte form: seventeen halvings down to the last triple) next to 2^17 byte triples
/// (blocks of 32, then 4,096 entries parked for four steps of eight). Honest records pass with
/// the bytes of both runs in the rounds of the longer one: one seed opening, 17 levels of two
/// rounds, the steps (8), `CheckTriple` (5) and the compare-view (2), 50 messages per
/// channel where the runs one after the other took 53. An error in either run, at its start
/// or its end, aborts at every party.
#[test]
fn runs_of_two_kinds_go_side_by_side() {
    let (n64, n8) = (70_000usize, 1usize << 17);
    let l = u64::from(levels(n64));
    let bytes = octal_cost_k(n8, 32);
    for (e64, e8) in [
        (None, None),
        (Some(0), None),
        (Some(n64 - 1), None),
        (None, Some(0)),
        (None, Some(n8 - 1)),
    ] {
        let wide = dealt_triples::<Gf2p64>(
            n64,
            &e64.map(|k| (k, Gf2p64(0x5)))
                .into_iter()
                .collect::<Vec<_>>(),
            61,
        );
        let small = dealt_triples::<Gf2p8>(
            n8,
            &e8.map(|k| (k, Gf2p8(0x5))).into_iter().collect::<Vec<_>>(),
            62,
        );
        for (r, st) in run_verify_sized(&NetOptions::default(), &wide, Some(&small), None) {
            if e64.is_none() && e8.is_none() {
                r.expect("honest");
                assert_eq!(st[0], bytes[0] + 16 + 8 * l + 24);
                assert_eq!(st[1], bytes[1] + 16 * l + 16);
                assert_eq!(l, 17);
                assert_eq!((st[2], st[3]), (50, 50));
            } else {
                assert!(is_abort(&r), "error at {e64:?} / {e8:?}: {r:?}");
            }
        }
    }
}

/// For two runs whose steps of eight go side by side in four messages to prev after their
/// first levels (messages 0 and 1 for two segments, message 0 for two windows of one check):
/// a changed bit in message 3 (both runs' 14 values, 224 bytes), from each party in turn,
/// aborts at every honest party.
fn tampered_shared_step_aborts(run: impl Fn(&NetOptions) -> [Result<(), EngineError>; 3]) {
    for cheater in PartyId::ALL {
        let tamper = Tamper::new(cheater, Phase::Finalize, Some(Direction::Prev), 3, 19);
        let opts = NetOptions {
            tamper: Some(tamper.clone()),
            ..NetOptions::default()
        };
        let res = run(&opts);
        assert_eq!(tamper.tampered().map(|f| f.len), Some(2 * 112));
        for (i, r) in res.iter().enumerate() {
            if i != cheater.index() {
                assert!(is_abort(r), "{cheater:?}: party {i}: {r:?}");
            }
        }
    }
}

/// Segments park their runs before the steps of eight: two segments of 2^17 byte triples
/// (4,096 blocks of 32 each, twelve levels left) verified at their checkpoints, then a final
/// check with nothing left to record, which takes both runs' steps and `CheckTriple`s side by
/// side: the bytes of two runs in the messages of one after the two first levels, as windows
/// of one check take them. An error in the first segment, or a change in a shared step's
/// message (both runs' 14 values), aborts at every honest party at the end.
#[test]
fn segments_park_their_last_steps() {
    let n = 1usize << 17;
    let run = |opts: &NetOptions, error: Option<usize>| {
        let errors: Vec<_> = error.map(|k| (k, Gf2p8(0x21))).into_iter().collect();
        let first = dealt_triples::<Gf2p8>(n, &errors, 43);
        let second = dealt_triples::<Gf2p8>(n, &[], 44);
        three_with(opts, |mut p| {
            let i = p.id().index();
            p.model().set_segment(Some(1));
            for (x, y, z) in [&first[i], &second[i]] {
                p.model().record(x, y, z);
                p.checkpoint().unwrap();
            }
            let segments = p.model().segments();
            let failed = p.model().segment_failed();
            p.set_phase(Phase::Finalize);
            let r = p.verify_recorded();
            let st = p.net().stats().get(Phase::Finalize);
            (
                r,
                (segments, failed),
                [st.next.bytes_sent, st.prev.bytes_sent, st.next.messages],
            )
        })
    };
    let one = octal_cost_k(n, 32);
    for (r, seen, st) in run(&NetOptions::default(), None) {
        r.expect("honest");
        assert_eq!(seen, (2, false));
        assert_eq!(st[0], 2 * one[0] - 32);
        assert_eq!(st[1], 2 * one[1] - 32);
        // Per segment its seed, first reshare and coin (3), then once the four steps (8),
        // CheckTriple (5) and the compare-view (2).
        assert_eq!(st[2], 2 * 3 + 15);
    }
    for (r, seen, _) in run(&NetOptions::default(), Some(77_777)) {
        assert_eq!(seen, (2, false));
        assert!(is_abort(&r), "{r:?}");
    }
    tampered_shared_step_aborts(|opts| run(opts, None).map(|(r, _, _)| r));
}

/// A check over more binary triples than the run size runs over consecutive windows, each a
/// run of Protocol 2 with its own seed: honest records pass with one run's bytes per window
/// (then the compare-view), and an error in any window, the last one too, aborts at every
/// party. Records of bytes only take windows of four times the run size (their first level
/// folds by 32: a quarter of the working memory per triple), others the run size.
#[test]
fn large_checks_run_in_windows() {
    let (n, run) = (5000usize, 1000usize);
    // GF(2^64) triples: five windows of 1000.
    large_check_in_windows(n, run, 5, Gf2p64(0x11));
    // Bytes only: windows of up to 4000, balanced: two of 2500.
    large_check_in_windows(n, run, 2, Gf2p8(0x11));
    // 70 windows: their CheckTriples in two rounds of messages (64 runs, then 6).
    large_check_in_windows(70_000, run, 70, Gf2p64(0x11));
}

/// [`large_checks_run_in_windows`] for triples over `F`, expecting `runs` windows of equal
/// length; a planted error adds `e` to a product.
fn large_check_in_windows<F: Lift + Random + Copy>(n: usize, run: usize, runs: usize, e: F) {
    for error_at in [None, Some(3500usize), Some(n - 1)] {
        let errors: Vec<_> = error_at.map(|k| (k, e)).into_iter().collect();
        let dealt = dealt_triples::<F>(n, &errors, 37);
        let res = run_verify_sized(&NetOptions::default(), &dealt, None, Some(run));
        let l = u64::from(levels(n / runs));
        let runs = runs as u64;
        for (r, st) in res {
            match error_at {
                None => {
                    r.unwrap();
                    assert_eq!(st[0], runs * (16 + 8 * l + 24) + 32);
                    assert_eq!(st[1], runs * (16 * l + 16) + 32);
                    // Sends and receives on the channel to next: per group of up to 64 runs
                    // side by side their seeds (one opening) and halvings (`2ℓ + 1`) and
                    // their `CheckTriple`s (5), then the compare-view (2), where runs one
                    // after the other took `2ℓ + 8` each.
                    let groups = runs.div_ceil(64);
                    assert_eq!(st[2], groups * (2 * l + 1) + 5 * groups + 2);
                }
                Some(k) => assert!(is_abort(&r), "error at {k}: {r:?}"),
            }
        }
    }
}
