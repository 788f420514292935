//! Segmented verification (`Party::checkpoint`) in the malicious PRFs: with a one-byte
//! segment every product, square and cube chain is verified as soon as it is recorded. This
//! test binary sets the process-wide segment for all its tests (integration tests run as
//! their own process), so the other test binaries keep the default.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use rand::{rngs::StdRng, SeedableRng};
use triskele_engine::{set_verify_segment, EngineError, Malicious, Party};
use triskele_field::{Field, Fp, Random};
use triskele_net::{in_memory, NetOptions, Phase, Tamper};
use triskele_prf::clear::{legendre_bits_packed, pack_bits, MimcParams};
use triskele_prf::local::three;
use triskele_prf::{compute_party, PrfJob, PrfTarget};
use triskele_share::{deal, PartyId, RssVec};

fn dealt<F: Field + Random>(values: &[F], seed: u64) -> [RssVec<F>; 3] {
    deal(values, &mut StdRng::seed_from_u64(seed))
}

fn tiny_segments() {
    set_verify_segment(Some(1));
}

fn legendre(opts: &NetOptions, k: Fp, x: Fp, n: usize) -> [Result<Vec<Fp>, EngineError>; 3] {
    let (ks, xsh) = (dealt(&[k], 7), dealt(&[x], 8));
    three(in_memory(opts), |net| {
        let i = net.party().index();
        let job = PrfJob::Legendre {
            start: xsh[i].clone(),
            count: n,
        };
        compute_party::<Fp, Malicious>(PrfTarget::MalLegendre, net, &ks[i], job)
    })
}

fn mimc(
    opts: &NetOptions,
    target: PrfTarget,
    k: Fp,
    xs: &[Fp],
) -> [Result<Vec<Fp>, EngineError>; 3] {
    let (ks, xsh) = (dealt(&[k], 9), dealt(xs, 10));
    three(in_memory(opts), |net| {
        let i = net.party().index();
        let job = PrfJob::MimcEncrypt {
            blocks: xsh[i].clone(),
        };
        compute_party::<Fp, Malicious>(target, net, &ks[i], job)
    })
}

#[test]
fn segmented_malicious_prfs_match_the_clear_reference() {
    tiny_segments();
    let mut rng = StdRng::seed_from_u64(21);
    let (k, x) = (Fp::random(&mut rng), Fp::random(&mut rng));
    for out in legendre(&NetOptions::default(), k, x, 150) {
        let bits: Vec<bool> = out.unwrap().iter().map(|v| *v == Fp::ONE).collect();
        assert_eq!(pack_bits(&bits), legendre_bits_packed(k, x, 150));
    }
    let params = MimcParams::<Fp>::new().unwrap();
    let xs: Vec<Fp> = (0..7).map(|_| Fp::random(&mut rng)).collect();
    let want: Vec<Fp> = xs.iter().map(|x| params.encrypt(k, *x)).collect();
    for target in [PrfTarget::MalMimc, PrfTarget::MalMimcCube] {
        for out in mimc(&NetOptions::default(), target, k, &xs) {
            assert_eq!(out.unwrap(), want, "{target}");
        }
    }
}

/// The segments really run: a party's model counts them, and the finalize check after them
/// still passes.
#[test]
fn segments_run_during_the_computation() {
    tiny_segments();
    let [a, b, c] = dealt(&[Fp::from(3u64), Fp::from(5u64)], 11);
    let shares = [a, b, c];
    let res = three(in_memory(&NetOptions::default()), |net| {
        let mut p = Party::<Malicious>::setup(net).unwrap();
        let x = &shares[p.id().index()];
        let y = p.mul(x, x).unwrap();
        let z = p.mul(&y, x).unwrap();
        let segments = p.model().segments();
        p.verify_recorded().unwrap();
        (segments, p.open_output(&z).unwrap())
    });
    for (segments, z) in res {
        assert_eq!(segments, 2);
        assert_eq!(z, vec![Fp::from(27u64), Fp::from(125u64)]);
    }
}

#[test]
fn tampered_online_messages_abort_with_segments() {
    tiny_segments();
    let mut rng = StdRng::seed_from_u64(22);
    let (k, x) = (Fp::random(&mut rng), Fp::random(&mut rng));
    let xs = [Fp::from(1u64), Fp::from(2u64)];
    for cheater in PartyId::ALL {
        for index in [0, 1] {
            let tamper = || Tamper::new(cheater, Phase::Online, None, index, 17);
            let t = [tamper(), tamper(), tamper()];
            let runs = [
                ("mal-legendre", legendre(&opts(t[0].clone()), k, x, 40)),
                (
                    "mal-mimc",
                    mimc(&opts(t[1].clone()), PrfTarget::MalMimc, k, &xs),
                ),
                (
                    "mal-mimc-cube",
                    mimc(&opts(t[2].clone()), PrfTarget::MalMimcCube, k, &xs),
                ),
            ];
            for (t, (name, res)) in t.iter().zip(runs) {
                assert!(
                    t.tampered().is_some(),
                    "{name}: message {index} was not flipped"
                );
                for p in PartyId::ALL.into_iter().filter(|p| *p != cheater) {
                    let r = &res[p.index()];
                    assert!(
                        matches!(r, Err(EngineError::Abort(_))),
                        "{name}: cheater {cheater}, message {index}: honest {p} returned {r:?}"
                    );
                }
            }
        }
    }
}

/// mal-legendre's preprocessing hands its first two products to the records without a copy
/// when they fill a segment (`Party::record_product_swap`, taken here with one-byte
/// segments): a flipped bit in any of its three product messages, by any party, still makes
/// every honest party abort.
#[test]
fn tampered_preprocessing_products_abort_with_segments() {
    tiny_segments();
    let mut rng = StdRng::seed_from_u64(23);
    let (k, x) = (Fp::random(&mut rng), Fp::random(&mut rng));
    for cheater in PartyId::ALL {
        for index in 0..3 {
            let t = Tamper::new(cheater, Phase::Preprocessing, None, index, 29);
            let res = legendre(&opts(t.clone()), k, x, 40);
            assert!(t.tampered().is_some(), "message {index} was not flipped");
            for p in PartyId::ALL.into_iter().filter(|p| *p != cheater) {
                let r = &res[p.index()];
                assert!(
                    matches!(r, Err(EngineError::Abort(_))),
                    "cheater {cheater}, message {index}: honest {p} returned {r:?}"
                );
            }
        }
    }
}

fn opts(tamper: Tamper) -> NetOptions {
    NetOptions {
        tamper: Some(tamper),
        ..NetOptions::default()
    }
}

/// With a segment per round, mal-mimc commits its cube chains (one coin) and verifies them
/// in every round, and mal-legendre verifies each recorded product as it is made: the
/// preprocessing and online phases still send exactly their own bytes and messages
/// (tests/comm.rs), and everything the checks send is counted in the finalize phase.
#[test]
fn segments_leave_the_online_traffic_unchanged() {
    tiny_segments();
    const E: u64 = 16;
    const R: u64 = 81;
    let simd = 9usize;
    let n = simd as u64;
    for (target, prep, online, prep_msgs, online_msgs, min_fin_msgs) in [
        (
            PrfTarget::MalMimc,
            (0, 0),
            (0, 2 * R * E),
            (0, 0),
            (2 * R, 2 * R),
            2 * R,
        ),
        (
            PrfTarget::MalLegendre,
            (0, 4 * E),
            (E, E),
            (3, 3),
            (2, 2),
            8,
        ),
    ] {
        let reports = three(in_memory(&NetOptions::default()), |net| {
            triskele_prf::bench_party(target, net, simd).unwrap()
        });
        for r in reports {
            let (pre, onl, fin) = (r.preprocessing.stats, r.online.stats, r.finalize.stats);
            assert_eq!(
                (pre.next.bytes_sent, pre.prev.bytes_sent),
                (prep.0 * n, prep.1 * n)
            );
            assert_eq!(
                (onl.next.bytes_sent, onl.prev.bytes_sent),
                (online.0 * n, online.1 * n)
            );
            assert_eq!(
                (pre.next.messages, pre.prev.messages),
                prep_msgs,
                "{target}"
            );
            assert_eq!(
                (onl.next.messages, onl.prev.messages),
                online_msgs,
                "{target}"
            );
            assert!(fin.next.messages > min_fin_msgs, "{target}: {fin:?}");
        }
    }
}
