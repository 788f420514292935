//! The abort matrix of the malicious PRFs (ARCHITECTURE.md "Security promises"): for each
//! party as the cheater, one flipped bit in (a) an online message (a multiplication share or
//! an opening), (b) the output opening, (c) a preprocessing message (squares, bits, cube
//! tuples), (d) a finalize message (the check's coins, reshares and openings, the compare-view
//! digest). Every honest party must return `EngineError::Abort`; the same flips on the
//! semi-honest twin are not detected (or give a wrong output).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use rand::{rngs::StdRng, SeedableRng};
use triskele_engine::{EngineError, Malicious, SemiHonest};
use triskele_field::{Fp, Random};
use triskele_net::{in_memory, NetOptions, Phase, Tamper};
use triskele_prf::clear::MimcParams;
use triskele_prf::local::three;
use triskele_prf::{compute_party, PrfJob, PrfTarget};
use triskele_share::{deal, PartyId};

const BLOCKS: usize = 3;
const BITS: usize = 40;

fn job(target: PrfTarget, i: usize) -> (triskele_share::RssVec<Fp>, PrfJob<Fp>) {
    let mut rng = StdRng::seed_from_u64(5);
    let k = Fp::random(&mut rng);
    let xs: Vec<Fp> = (0..BLOCKS).map(|_| Fp::random(&mut rng)).collect();
    let ks = deal(&[k], &mut rng);
    let xsh = deal(&xs, &mut rng);
    let j = match target.semi_honest() {
        PrfTarget::Legendre => PrfJob::Legendre {
            start: xsh[i].slice(0..1).unwrap(),
            count: BITS,
        },
        _ => PrfJob::MimcEncrypt {
            blocks: xsh[i].clone(),
        },
    };
    (ks[i].clone(), j)
}

fn run(target: PrfTarget, tamper: Option<Tamper>) -> [Result<Vec<Fp>, EngineError>; 3] {
    let opts = NetOptions {
        tamper,
        ..NetOptions::default()
    };
    three(in_memory(&opts), |net| {
        let (key, j) = job(target, net.party().index());
        if target.is_malicious() {
            compute_party::<Fp, Malicious>(target, net, &key, j)
        } else {
            compute_party::<Fp, SemiHonest>(target, net, &key, j)
        }
    })
}

fn assert_aborts(target: PrfTarget, tamper: Tamper, what: &str) {
    let cheater = tamper.party;
    let log = tamper.clone();
    let res = run(target, Some(tamper));
    let flipped = log
        .tampered()
        .unwrap_or_else(|| panic!("{target} {what}: nothing was flipped"));
    for p in PartyId::ALL {
        if p == cheater {
            continue;
        }
        let r = &res[p.index()];
        assert!(
            matches!(r, Err(EngineError::Abort(_))),
            "{target} {what}: cheater {cheater}, flipped {flipped:?}: honest {p} returned {r:?}"
        );
    }
}

/// Online messages per party: see `triskele_prf::run::online_sends`.
fn online_sends(target: PrfTarget) -> u64 {
    let r = MimcParams::<Fp>::rounds_for(Fp::MODULUS);
    triskele_prf::run::online_sends(target, false, r)
}

/// Preprocessing messages per party (legendre: squarings, opening, product; mimc-cube: the
/// two products of the cube tuples; mimc: none).
fn prep_sends(target: PrfTarget) -> u64 {
    match target.semi_honest() {
        PrfTarget::Legendre => 3,
        PrfTarget::MimcCube => 2,
        _ => 0,
    }
}

fn matrix(target: PrfTarget) {
    let honest: Vec<Vec<Fp>> = run(target, None).into_iter().map(|r| r.unwrap()).collect();
    assert!(honest.iter().all(|o| *o == honest[0]));
    let online = online_sends(target);
    for cheater in PartyId::ALL {
        // (a) online messages: first, middle, last.
        for k in [0, online / 2, online - 1] {
            let t = Tamper::new(cheater, Phase::Online, None, k, 7 * k + 1);
            assert_aborts(target, t, &format!("(a) online message {k}"));
        }
        // (b) the output opening.
        let t = Tamper::new(
            cheater,
            Phase::Output,
            Some(triskele_share::Direction::Next),
            0,
            3,
        );
        assert_aborts(target, t, "(b) output opening");
        // (c) preprocessing messages.
        for k in 0..prep_sends(target) {
            let t = Tamper::new(cheater, Phase::Preprocessing, None, k, 11 * k + 2);
            assert_aborts(target, t, &format!("(c) preprocessing message {k}"));
        }
        // (d) finalize messages: the seed coins, the check's messages, the digests.
        for k in [0, 1, 4, 9] {
            let t = Tamper::new(cheater, Phase::Finalize, None, k, 5 * k + 4);
            assert_aborts(target, t, &format!("(d) finalize message {k}"));
        }
    }
}

#[test]
fn mal_legendre_abort_matrix() {
    matrix(PrfTarget::MalLegendre);
}

#[test]
fn mal_mimc_abort_matrix() {
    matrix(PrfTarget::MalMimc);
}

#[test]
fn mal_mimc_cube_abort_matrix() {
    matrix(PrfTarget::MalMimcCube);
}

/// Cube tuples replaced by a second preprocessing before the finalize are still checked: a flip
/// in the first preprocessing's messages makes every honest party abort, although only the
/// second tuples are used.
#[test]
fn replaced_cube_tuples_are_still_checked() {
    use triskele_engine::Party;
    use triskele_prf::mimc::{Mimc, Variant};
    for cheater in [PartyId::P1, PartyId::P2, PartyId::P3] {
        let t = Tamper::new(cheater, Phase::Preprocessing, None, 0, 2);
        let opts = NetOptions {
            tamper: Some(t.clone()),
            ..NetOptions::default()
        };
        let res = three(in_memory(&opts), |net| {
            let i = net.party().index();
            let (key, PrfJob::MimcEncrypt { blocks }) = job(PrfTarget::MalMimcCube, i) else {
                unreachable!()
            };
            let mut p = Party::<Malicious>::setup(net)?;
            let mut m = Mimc::<Fp>::new(Variant::Cube)?;
            p.in_phase(Phase::Preprocessing, |p| m.preprocess(p, BLOCKS))?;
            p.in_phase(Phase::Preprocessing, |p| m.preprocess(p, BLOCKS))?;
            let c = m.encrypt(&mut p, &key, &blocks)?;
            m.finalize(&mut p)?;
            Ok::<_, EngineError>(c)
        });
        assert!(t.tampered().is_some(), "nothing was flipped");
        for (i, r) in res.iter().enumerate() {
            if i != cheater.index() {
                assert!(matches!(r, Err(EngineError::Abort(_))), "P{}: {r:?}", i + 1);
            }
        }
    }
}

/// The same online flip on the semi-honest twins is not detected: the run completes, and for
/// MiMC (where the flipped share propagates through every later round) with a wrong output.
#[test]
fn semi_honest_twins_do_not_detect_flips() {
    for target in [PrfTarget::Legendre, PrfTarget::Mimc, PrfTarget::MimcCube] {
        let good = run(target, None)[0].as_ref().unwrap().clone();
        // A bit low in the first element's encoding keeps it below p.
        let t = Tamper::new(PartyId::P2, Phase::Online, None, 0, 8);
        let res = run(target, Some(t.clone()));
        assert!(t.tampered().is_some());
        for r in &res {
            match r {
                Ok(out) if target != PrfTarget::Legendre => {
                    assert_ne!(*out, good, "{target}: the flip changed nothing")
                }
                Ok(_) => {}
                Err(e) => panic!("{target}: semi-honest run failed: {e}"),
            }
        }
    }
}

/// Legendre's preprocessing reserves the malicious records for its own products and for the
/// online product, so the store never grows (and copies itself) during the run: the record
/// vectors keep their buffers from the end of the preprocessing to the finalize check.
#[test]
fn legendre_records_are_reserved_up_front() {
    use triskele_engine::{Party, Recorder};
    use triskele_prf::legendre;
    let out = three(in_memory(&NetOptions::default()), |net| {
        let i = net.party().index();
        let (key, job) = job(PrfTarget::MalLegendre, i);
        let PrfJob::Legendre { start, count } = job else {
            unreachable!()
        };
        let mut party = Party::<Malicious>::setup(net)?;
        let mut prep = legendre::preprocess(&mut party, count)?;
        let buffers = |r: &Recorder| {
            let t = &r.fp;
            [&t.x, &t.y, &t.z].map(|v| (v.first.as_ptr(), v.first.capacity()))
        };
        let before = buffers(party.model().recorder());
        let bits = legendre::eval_consecutive(&mut party, &mut prep, &key, &start, count)?;
        let after = buffers(party.model().recorder());
        assert_eq!(party.model().recorder().fp.len(), 5 * count);
        assert_eq!(before, after, "the records moved");
        Ok::<_, EngineError>(bits.len())
    });
    for r in out {
        assert_eq!(r.unwrap(), BITS);
    }
}
