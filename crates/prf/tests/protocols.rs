//! The PRF protocols against their cleartext references through three parties on the
//! in-memory network, semi-honest and malicious, and the preprocessing material's
//! invariants.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use rand::{rngs::StdRng, SeedableRng};
use triskele_engine::{EngineError, Malicious, Party, SecurityModel, SemiHonest};
use triskele_field::{Field, Fp, PrimeField, Random};
use triskele_net::{in_memory, NetOptions};
use triskele_prf::clear::{legendre_bit, legendre_bits_packed, MimcParams};
use triskele_prf::local::three;
use triskele_prf::mimc::{self, Mimc, Variant};
use triskele_prf::ops::{Finalize, PrfField};
use triskele_prf::{compute_party, legendre, prep, PrfJob, PrfTarget};
use triskele_share::{deal, reconstruct, RssVec};

/// Runs `f` at the three parties (fresh engine setup) and returns what each returned.
fn run<M: SecurityModel, T: Send>(f: impl Fn(&mut Party<M>) -> T + Sync) -> [T; 3] {
    three(in_memory(&NetOptions::default()), |net| {
        let mut p = Party::<M>::setup(net).unwrap();
        f(&mut p)
    })
}

fn open<F: Field>(shares: [RssVec<F>; 3]) -> Vec<F> {
    reconstruct(&shares).expect("consistent sharing")
}

fn random_bits_are_bits<M: SecurityModel>() {
    let shares = run::<M, _>(|p| prep::random_bits::<Fp, M>(p, 300).unwrap());
    let bits = open(shares);
    assert!(bits.iter().all(|b| *b == Fp::ZERO || *b == Fp::ONE));
    let ones = bits.iter().filter(|b| **b == Fp::ONE).count();
    // 300 fair coins: 100..200 ones except with probability < 2^-25.
    assert!((100..=200).contains(&ones), "{ones} ones of 300");
}

#[test]
fn random_bits_are_bits_semi_honest() {
    random_bits_are_bits::<SemiHonest>();
}

#[test]
fn random_bits_are_bits_malicious() {
    random_bits_are_bits::<Malicious>();
}

#[test]
fn squares_cube_tuples_and_legendre_masks_are_correct() {
    let shares = run::<SemiHonest, _>(|p| {
        let sq = prep::random_squares::<Fp, SemiHonest>(p, 50).unwrap();
        let ct = prep::cube_tuples::<Fp, SemiHonest>(p, 50).unwrap();
        let lm = prep::legendre_masks::<Fp, SemiHonest>(p, 200).unwrap();
        (sq, ct, lm)
    });
    let [a, b, c] = shares;
    let s = open([a.0.s.clone(), b.0.s.clone(), c.0.s.clone()]);
    let s2 = open([a.0.s2, b.0.s2, c.0.s2]);
    for (x, y) in s.iter().zip(&s2) {
        assert_eq!(x.square(), *y);
    }
    let ca = open([a.1.a.clone(), b.1.a.clone(), c.1.a.clone()]);
    let ca2 = open([a.1.a2, b.1.a2, c.1.a2]);
    let ca3 = open([a.1.a3, b.1.a3, c.1.a3]);
    for i in 0..50 {
        assert_eq!(ca[i].square(), ca2[i]);
        assert_eq!(ca2[i] * ca[i], ca3[i]);
    }
    let t = open([a.2.t, b.2.t, c.2.t]);
    let bits = open([a.2.b, b.2.b, c.2.b]);
    let mut seen = [0; 2];
    for (t, b) in t.iter().zip(&bits) {
        let expect = if *b == Fp::ONE { 1 } else { -1 };
        assert_eq!(t.legendre(), expect);
        seen[usize::from(*b == Fp::ONE)] += 1;
    }
    assert!(seen[0] > 50 && seen[1] > 50, "{seen:?}");
}

/// Deals `values` with a fixed seed; party `i` takes element `i` of the result.
fn dealt<F: Field + Random>(values: &[F], seed: u64) -> [RssVec<F>; 3] {
    deal(values, &mut StdRng::seed_from_u64(seed))
}

fn legendre_matches_clear<M: SecurityModel>()
where
    Party<M>: Finalize,
{
    let mut rng = StdRng::seed_from_u64(3);
    let k = Fp::random(&mut rng);
    let mut xs: Vec<Fp> = (0..200).map(|_| Fp::random(&mut rng)).collect();
    xs[7] = -k; // k + x = 0 gives 1
    let (ks, xsh) = (dealt(&[k], 1), dealt(&xs, 2));
    let shares = three(in_memory(&NetOptions::default()), |net| {
        let i = net.party().index();
        let mut p = Party::<M>::setup(net).unwrap();
        let mut prep = legendre::preprocess::<Fp, M>(&mut p, xs.len()).unwrap();
        let y = legendre::eval(&mut p, &mut prep, &ks[i], &xsh[i]).unwrap();
        assert_eq!(prep.remaining(), 0);
        // Past the pool: refused.
        assert!(matches!(
            legendre::eval(&mut p, &mut prep, &ks[i], &xsh[i]),
            Err(EngineError::PreprocessingExhausted { .. })
        ));
        p.finalize_checks().unwrap();
        y
    });
    let got = open(shares);
    for (x, y) in xs.iter().zip(&got) {
        let want = if legendre_bit(k, *x) {
            Fp::ONE
        } else {
            Fp::ZERO
        };
        assert_eq!(*y, want);
    }
    assert_eq!(got[7], Fp::ONE);
}

#[test]
fn legendre_matches_clear_semi_honest() {
    legendre_matches_clear::<SemiHonest>();
}

#[test]
fn legendre_matches_clear_malicious() {
    legendre_matches_clear::<Malicious>();
}

#[test]
fn legendre_public_output_and_public_input_modes() {
    let mut rng = StdRng::seed_from_u64(4);
    let k = Fp::random(&mut rng);
    let xs: Vec<Fp> = (0..64).map(|_| Fp::random(&mut rng)).collect();
    let (ks, xsh) = (dealt(&[k], 5), dealt(&xs, 6));
    let want: Vec<bool> = xs.iter().map(|x| legendre_bit(k, *x)).collect();
    let outs = three(in_memory(&NetOptions::default()), |net| {
        let i = net.party().index();
        let mut p = Party::<Malicious>::setup(net).unwrap();
        let sq = prep::random_squares::<Fp, Malicious>(&mut p, xs.len()).unwrap();
        let public = legendre::eval_public_output(&mut p, &sq, &ks[i], &xsh[i]).unwrap();
        let keyed = legendre::preprocess_keyed(&mut p, &ks[i], xs.len()).unwrap();
        let shared = legendre::eval_public_input(&mut p, &keyed, &xs).unwrap();
        p.finalize_checks().unwrap();
        (public, shared)
    });
    for (public, _) in &outs {
        assert_eq!(*public, want);
    }
    let [a, b, c] = outs.map(|o| o.1);
    let got = open([a, b, c]);
    let want_f: Vec<Fp> = want
        .iter()
        .map(|&b| if b { Fp::ONE } else { Fp::ZERO })
        .collect();
    assert_eq!(got, want_f);
}

/// Legendre bits from a shared start, through `compute_party` (the `triskele prf` path).
fn legendre_consecutive<F: PrfField, M: SecurityModel>(target: PrfTarget, k: F, x: F, n: usize)
where
    Party<M>: Finalize,
{
    let (ks, xsh) = (dealt(&[k], 7), dealt(&[x], 8));
    let outs = three(in_memory(&NetOptions::default()), |net| {
        let i = net.party().index();
        let job = PrfJob::Legendre {
            start: xsh[i].clone(),
            count: n,
        };
        compute_party::<F, M>(target, net, &ks[i], job).unwrap()
    });
    let want = legendre_bits_packed(k, x, n);
    for out in outs {
        let bits: Vec<bool> = out.iter().map(|v| *v == F::ONE).collect();
        assert_eq!(triskele_prf::clear::pack_bits(&bits), want);
    }
}

#[test]
fn legendre_consecutive_bits_through_compute_party() {
    let mut rng = StdRng::seed_from_u64(9);
    let (k, x) = (Fp::random(&mut rng), Fp::random(&mut rng));
    legendre_consecutive::<Fp, SemiHonest>(PrfTarget::Legendre, k, x, 100);
    legendre_consecutive::<Fp, Malicious>(PrfTarget::MalLegendre, k, x, 100);
}

fn mimc_matches_clear<M: SecurityModel>(variant: Variant)
where
    Party<M>: Finalize,
{
    let params = MimcParams::<Fp>::new().unwrap();
    let mut rng = StdRng::seed_from_u64(10);
    let k = Fp::random(&mut rng);
    let xs: Vec<Fp> = (0..20).map(|_| Fp::random(&mut rng)).collect();
    let (ks, xsh) = (dealt(&[k], 11), dealt(&xs, 12));
    let outs = three(in_memory(&NetOptions::default()), |net| {
        let i = net.party().index();
        let mut p = Party::<M>::setup(net).unwrap();
        let mut m = Mimc::<Fp>::new(variant).unwrap();
        m.preprocess(&mut p, xs.len()).unwrap();
        let c = m.encrypt(&mut p, &ks[i], &xsh[i]).unwrap();
        let ks_out = {
            m.preprocess(&mut p, 5).unwrap();
            m.keystream(&mut p, &ks[i], Fp::from(1000u64), 5).unwrap()
        };
        let dp = mimc::preprocess_decrypt(&mut p, m.params(), xs.len()).unwrap();
        let back = mimc::decrypt(&mut p, m.params(), &dp, &ks[i], &c).unwrap();
        // The evaluator's finalize commits its cube chains, then runs the party's checks.
        m.finalize(&mut p).unwrap();
        (c, ks_out, back)
    });
    let [a, b, c] = outs;
    let ct = open([a.0, b.0, c.0]);
    let stream = open([a.1, b.1, c.1]);
    let back = open([a.2, b.2, c.2]);
    for (x, y) in xs.iter().zip(&ct) {
        assert_eq!(*y, params.encrypt(k, *x));
    }
    assert_eq!(stream, params.keystream(k, Fp::from(1000u64), 5));
    assert_eq!(back, xs);
}

#[test]
fn mimc_basic_matches_clear_semi_honest() {
    mimc_matches_clear::<SemiHonest>(Variant::Basic);
}

#[test]
fn mimc_cube_matches_clear_semi_honest() {
    mimc_matches_clear::<SemiHonest>(Variant::Cube);
}

#[test]
fn mimc_basic_matches_clear_malicious() {
    mimc_matches_clear::<Malicious>(Variant::Basic);
}

#[test]
fn mimc_cube_matches_clear_malicious() {
    mimc_matches_clear::<Malicious>(Variant::Cube);
}

/// The finalize of the cube variant leaves unused tuples usable: the second half of the
/// tuples serves a later encryption, which the second finalize checks (malicious model).
#[test]
fn cube_tuples_left_at_finalize_serve_later_encryptions() {
    let params = MimcParams::<Fp>::new().unwrap();
    let mut rng = StdRng::seed_from_u64(16);
    let k = Fp::random(&mut rng);
    let xs: Vec<Fp> = (0..6).map(|_| Fp::random(&mut rng)).collect();
    let (ks, first, second) = (dealt(&[k], 17), dealt(&xs[..3], 18), dealt(&xs[3..], 19));
    let outs = three(in_memory(&NetOptions::default()), |net| {
        let i = net.party().index();
        let mut p = Party::<Malicious>::setup(net).unwrap();
        let mut m = Mimc::<Fp>::new(Variant::Cube).unwrap();
        m.preprocess(&mut p, xs.len()).unwrap();
        let mut c = m.encrypt(&mut p, &ks[i], &first[i]).unwrap();
        m.finalize(&mut p).unwrap();
        c.extend(&m.encrypt(&mut p, &ks[i], &second[i]).unwrap());
        m.finalize(&mut p).unwrap();
        // Every tuple is used now.
        let more = m.encrypt(&mut p, &ks[i], &second[i]);
        assert!(more.is_err(), "{more:?}");
        c
    });
    let want: Vec<Fp> = xs.iter().map(|x| params.encrypt(k, *x)).collect();
    assert_eq!(open(outs), want);
}

#[test]
fn mimc_through_compute_party_encrypts_and_decrypts() {
    let params = MimcParams::<Fp>::new().unwrap();
    let k = Fp::from(42u64);
    let xs = [Fp::from(1u64), Fp::from(2u64), -Fp::ONE];
    let (ks, xsh) = (dealt(&[k], 13), dealt(&xs, 14));
    for target in [PrfTarget::Mimc, PrfTarget::MimcCube] {
        let outs = three(in_memory(&NetOptions::default()), |net| {
            let i = net.party().index();
            let job = PrfJob::MimcEncrypt {
                blocks: xsh[i].clone(),
            };
            compute_party::<Fp, SemiHonest>(target, net, &ks[i], job).unwrap()
        });
        let want: Vec<Fp> = xs.iter().map(|x| params.encrypt(k, *x)).collect();
        for o in &outs {
            assert_eq!(*o, want);
        }
        let cs = dealt(&want, 15);
        let outs = three(in_memory(&NetOptions::default()), |net| {
            let i = net.party().index();
            let job = PrfJob::MimcDecrypt {
                blocks: cs[i].clone(),
            };
            compute_party::<Fp, Malicious>(target.malicious(), net, &ks[i], job).unwrap()
        });
        for o in &outs {
            assert_eq!(o.as_slice(), xs.as_slice());
        }
    }
}

#[test]
fn wrong_model_for_target_is_refused() {
    let outs = three(in_memory(&NetOptions::default()), |net| {
        let key = RssVec::<Fp>::zeros(1);
        let job = PrfJob::MimcKeystream {
            nonce: Fp::ZERO,
            count: 1,
        };
        compute_party::<Fp, SemiHonest>(PrfTarget::MalMimc, net, &key, job)
    });
    for o in outs {
        assert!(matches!(o, Err(EngineError::Unsupported(_))));
    }
}

#[test]
fn field_helpers() {
    assert_eq!(prep::half::<Fp>() * Fp::from(2u64), Fp::ONE);
    assert_eq!(Fp::modulus() % 3, 2);
}

/// A cube chain with a wrong (but consistently shared) square or cube fails the combined
/// relation: every party aborts; correct chains pass. Two batches under two coins: the first
/// is kept as chained triples (combined by the check), the second, committed while the first
/// is still kept, is combined at its commit; an error in either batch is caught.
#[test]
fn cube_records_catch_a_wrong_square_or_cube() {
    use triskele_prf::ops::CubeRecords;
    for (wrong_square, wrong_cube) in [(false, false), (true, false), (false, true), (true, true)] {
        for bad_batch in [0, 1] {
            let outs = three(in_memory(&NetOptions::default()), |net| {
                let mut p = Party::<Malicious>::setup(net).unwrap();
                let id = p.id();
                let mut rec = CubeRecords::default();
                for batch in 0..2 {
                    let bad = batch == bad_batch;
                    let v = p.random_rss::<Fp>(50);
                    let mut v2 = p.mul_covered(&v, &v).unwrap();
                    if wrong_square && bad {
                        v2.add_constant_scalar(id, Fp::ONE);
                    }
                    let mut v3 = p.mul_covered(&v2, &v).unwrap();
                    if wrong_cube && bad {
                        v3.add_constant_scalar(id, Fp::from(7u64));
                    }
                    rec.push::<Malicious>(&v, &v2, &v3);
                    assert_eq!(rec.len(), 50);
                    rec.commit(&mut p).unwrap();
                    assert!(rec.is_empty());
                }
                let kept = p.model().recorder();
                assert_eq!((kept.fp_chained.len(), kept.fp.len()), (50, 50));
                p.finalize_checks()
            });
            for o in outs {
                if wrong_square || wrong_cube {
                    assert!(matches!(o, Err(EngineError::Abort(_))), "{o:?}");
                } else {
                    o.unwrap();
                }
            }
        }
    }
}
