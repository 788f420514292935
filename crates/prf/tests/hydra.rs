//! Hydra: the derived instance and keystreams against the regression data, the generic code
//! on the run-time prime field against the specialised one, and the MPC evaluation (semi-honest
//! and malicious, three parties over in-memory links) against the cleartext, with its exact
//! communication and the abort promise under a flipped bit.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::collections::BTreeMap;

use rand::SeedableRng;
use rand_chacha::ChaCha20Rng;
use triskele_engine::{EngineError, Malicious, Party, SecurityModel, SemiHonest};
use triskele_field::{Field, Fp, FpRt, PrimeField, Random};
use triskele_net::{NetOptions, Phase, PhaseStats, Tamper};
use triskele_prf::hydra::{self, params, Cost, Hydra};
use triskele_prf::local::three;
use triskele_share::{deal, reconstruct, Direction, PartyId, RssVec};

const P: u128 = (1u128 << 127) + 45;

fn fp(v: u128) -> Fp {
    Fp::new(v).expect("value below p")
}

// ---------------------------------------------------------------------------------------------
// Regression data (crates/prf/testdata/hydra_p127.txt, origin in its header)

/// One keystream record.
#[derive(Debug)]
struct Record {
    key: [Fp; 4],
    nonce: Fp,
    iv: [Fp; 3],
    keystream: Vec<Fp>,
}

/// The parameters (`name -> rows`) and the keystream records of the data file.
fn regression_data() -> (BTreeMap<String, Vec<Vec<u128>>>, Vec<Record>) {
    let path = format!("{}/testdata/hydra_p127.txt", env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
    let mut params: BTreeMap<String, Vec<Vec<u128>>> = BTreeMap::new();
    let mut records = Vec::new();
    let mut cur: BTreeMap<String, Vec<u128>> = BTreeMap::new();
    let flush = |cur: &mut BTreeMap<String, Vec<u128>>, records: &mut Vec<Record>| {
        if cur.is_empty() {
            return;
        }
        let f = |name: &str| -> Vec<Fp> { cur[name].iter().map(|&v| fp(v)).collect() };
        let count = cur["count"][0] as usize;
        let ks = f("keystream");
        assert_eq!(ks.len(), count);
        records.push(Record {
            key: f("key").try_into().unwrap(),
            nonce: f("nonce")[0],
            iv: f("iv").try_into().unwrap(),
            keystream: ks,
        });
        cur.clear();
    };
    for line in text.lines() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let (name, values) = line.split_once(" = ").expect("name = values");
        let values: Vec<u128> = values.split(',').map(|v| v.parse().unwrap()).collect();
        match name {
            "key" => {
                flush(&mut cur, &mut records);
                cur.insert(name.into(), values);
            }
            "nonce" | "iv" | "count" | "keystream" => {
                cur.insert(name.into(), values);
            }
            _ => params.entry(name.into()).or_default().push(values),
        }
    }
    flush(&mut cur, &mut records);
    (params, records)
}

fn as_u128(v: &[Fp]) -> Vec<u128> {
    v.iter().map(|x| x.value()).collect()
}

#[test]
fn derived_matrices_and_constants_match_the_regression_data() {
    let (params, _) = regression_data();
    let h = hydra::reference();
    let rows =
        |m: &hydra::Matrix<Fp>| -> Vec<Vec<u128>> { m.rows().iter().map(|r| as_u128(r)).collect() };
    assert_eq!(rows(h.internal()), params["mi_row"]);
    assert_eq!(rows(h.head()), params["mh_row"]);
    let body = h.body_constants();
    let head = h.head_constants();
    assert_eq!(body.len(), 48);
    assert_eq!(head.len(), 39);
    assert_eq!(as_u128(&body[0]), params["rc_body_first"][0]);
    assert_eq!(as_u128(&body[47]), params["rc_body_last"][0]);
    assert_eq!(as_u128(&head[0]), params["rc_head_first"][0]);
    assert_eq!(as_u128(&head[38]), params["rc_head_last"][0]);
    let rolling = Hydra::<Fp>::rolling_constants(10);
    assert_eq!(as_u128(&rolling[0]), params["rc_rolling_first"][0]);
    assert_eq!(as_u128(&rolling[9]), params["rc_rolling_tenth"][0]);
    // The external matrix is circ(3, 2, 1, 1).
    let me = rows(h.external());
    assert_eq!(
        me,
        vec![
            vec![3, 2, 1, 1],
            vec![1, 3, 2, 1],
            vec![1, 1, 3, 2],
            vec![2, 1, 1, 3]
        ]
    );
}

#[test]
fn keystreams_match_the_regression_data() {
    let (_, records) = regression_data();
    assert!(records.len() >= 5);
    for r in &records {
        let ks = hydra::keystream(&r.key, r.nonce, &r.iv, r.keystream.len());
        assert_eq!(ks, r.keystream, "key {:?} nonce {:?}", r.key, r.nonce);
    }
    // The reference script's example: encrypt (0, 1) under K = 0, IV = (1, 1, 1), N = 2.
    let r = &records[0];
    let plain = [Fp::ZERO, Fp::ONE];
    let c = hydra::reference().encrypt(&r.key, r.nonce, &r.iv, &plain);
    assert_eq!(c, vec![r.keystream[0], r.keystream[1] + Fp::ONE]);
    assert_eq!(
        hydra::reference().decrypt(&r.key, r.nonce, &r.iv, &c),
        plain
    );
}

/// The round numbers of the reference (`get_round_num_internal`, `get_round_num_head`) for
/// `kappa = 128`, `d = 3` and `p = 2^127 + 45`, recomputed from the formulas.
#[test]
fn round_numbers_follow_the_design_formulas() {
    let kappa = 128.0f64;
    let log_p = (P as f64).log2();
    let d = 3.0f64;
    // Internal rounds.
    let x0 = kappa / 16.0;
    let x1 = (kappa - log_p) / 12.0;
    let r_hat = 4.0 - d.log2().floor() + x0.max(x1).ceil();
    let ri = (1.125 * (kappa / 4.0 - d.log2() + 6.0).max(r_hat).ceil()).ceil();
    assert_eq!(ri as usize, params::BODY_INTERNAL);
    // Head rounds; R* for kappa = 128 is 29 (the reference's table, index kappa - 80).
    let r_star = 29.0f64;
    let x0 = kappa / 24.0 + 12f64.log2();
    let x1 = (kappa - log_p) / 22.0 + 11f64.log2();
    let r_hat = 3.0 + x0.max(x1).ceil();
    let rh = (1.25 * 24f64.max(r_hat).max(r_star + 2.0).ceil()).ceil();
    assert_eq!(rh as usize, params::HEAD_ROUNDS);
    assert_eq!(params::BODY_ROUNDS, 48);
    // d = 3: gcd(3, p - 1) = 1.
    assert_eq!(P % 3, 2);
}

#[test]
fn keystream_is_a_prefix_family_and_encryption_inverts() {
    let mut rng = ChaCha20Rng::seed_from_u64(7);
    let key: [Fp; 4] = core::array::from_fn(|_| Fp::random(&mut rng));
    let iv: [Fp; 3] = core::array::from_fn(|_| Fp::random(&mut rng));
    let nonce = Fp::random(&mut rng);
    let long = hydra::keystream(&key, nonce, &iv, 33);
    for m in [0, 1, 7, 8, 9, 16, 17, 32] {
        assert_eq!(hydra::keystream(&key, nonce, &iv, m), long[..m]);
    }
    // Different nonces give unrelated streams.
    assert_ne!(hydra::keystream(&key, nonce + Fp::ONE, &iv, 8), long[..8]);
    let plain: Vec<Fp> = (0..20).map(|_| Fp::random(&mut rng)).collect();
    let h = hydra::reference();
    let c = h.encrypt(&key, nonce, &iv, &plain);
    assert_eq!(h.decrypt(&key, nonce, &iv, &c), plain);
}

#[test]
fn cost_per_instance() {
    assert_eq!(
        Cost::of(8),
        Cost {
            multiplications: 171,
            rounds: 135
        }
    );
    assert_eq!(Cost::of(1), Cost::of(8));
    assert_eq!(
        Cost::of(16),
        Cost {
            multiplications: 212,
            rounds: 136
        }
    );
    assert_eq!(Cost::of(80).multiplications, 171 + 9 * 41);
    assert_eq!(
        Cost::of(0),
        Cost {
            multiplications: 0,
            rounds: 0
        }
    );
}

// ---------------------------------------------------------------------------------------------
// The generic code on the run-time prime field

#[test]
fn generic_code_on_the_run_time_field_matches_fp() {
    let (_, records) = regression_data();
    let fp_ks: Vec<Vec<u128>> = records.iter().map(|r| as_u128(&r.keystream)).collect();
    let rt_ks = FpRt::with_modulus(P, || {
        let h = Hydra::<FpRt>::new().expect("p = 2^127 + 45 is supported");
        let conv = |v: &[Fp]| -> Vec<FpRt> {
            v.iter()
                .map(|x| FpRt::from_u128_reduced(x.value()))
                .collect()
        };
        records
            .iter()
            .map(|r| {
                let key: [FpRt; 4] = conv(&r.key).try_into().unwrap();
                let iv: [FpRt; 3] = conv(&r.iv).try_into().unwrap();
                let nonce = FpRt::from_u128_reduced(r.nonce.value());
                let ks = h.keystream(&key, nonce, &iv, r.keystream.len());
                ks.iter().map(|x| x.to_u128()).collect::<Vec<u128>>()
            })
            .collect::<Vec<_>>()
    })
    .unwrap();
    assert_eq!(rt_ks, fp_ks);
}

#[test]
fn unsupported_primes_are_refused() {
    // 2^127 - 1 = 1 (mod 3): x^3 is not a permutation.
    let r = FpRt::with_modulus((1u128 << 127) - 1, Hydra::<FpRt>::new).unwrap();
    assert!(matches!(r, Err(EngineError::Unsupported(_))), "{r:?}");
    // 2^61 - 1 is too small (and 1 mod 3 as well); 2^64 - 59 = 2 (mod 3) but below 2^64.
    let r = FpRt::with_modulus((1u128 << 61) - 1, Hydra::<FpRt>::new).unwrap();
    assert!(matches!(r, Err(EngineError::Unsupported(_))), "{r:?}");
    let r = FpRt::with_modulus((1u128 << 64) - 59, Hydra::<FpRt>::new).unwrap();
    assert!(matches!(r, Err(EngineError::Unsupported(_))), "{r:?}");
    assert!(Hydra::<Fp>::new().is_ok());
    assert_eq!(&Hydra::<Fp>::new().unwrap(), hydra::reference());
}

// ---------------------------------------------------------------------------------------------
// MPC

/// Inputs of `n` instances: keys (per instance, or one shared key), nonces and IVs.
struct Inputs {
    keys: Vec<[Fp; 4]>,
    nonces: Vec<Fp>,
    ivs: Vec<[Fp; 3]>,
    shared_key: bool,
}

impl Inputs {
    fn random(n: usize, shared_key: bool, seed: u64) -> Inputs {
        let mut rng = ChaCha20Rng::seed_from_u64(seed);
        let k0: [Fp; 4] = core::array::from_fn(|_| Fp::random(&mut rng));
        Inputs {
            keys: (0..n)
                .map(|_| {
                    if shared_key {
                        k0
                    } else {
                        core::array::from_fn(|_| Fp::random(&mut rng))
                    }
                })
                .collect(),
            nonces: (0..n).map(|i| Fp::from_u64(1000 + i as u64)).collect(),
            ivs: (0..n)
                .map(|_| core::array::from_fn(|_| Fp::random(&mut rng)))
                .collect(),
            shared_key,
        }
    }

    /// The dealt shares: `[key shares; 3]`, `[IV shares; 3]`.
    fn deal(&self, seed: u64) -> ([RssVec<Fp>; 3], [RssVec<Fp>; 3]) {
        let mut rng = ChaCha20Rng::seed_from_u64(seed);
        let key: Vec<Fp> = if self.shared_key {
            self.keys[0].to_vec()
        } else {
            self.keys.iter().flatten().copied().collect()
        };
        let iv: Vec<Fp> = self.ivs.iter().flatten().copied().collect();
        (deal(&key, &mut rng), deal(&iv, &mut rng))
    }

    fn expected(&self, words: usize) -> Vec<Fp> {
        (0..self.nonces.len())
            .flat_map(|k| hydra::keystream(&self.keys[k], self.nonces[k], &self.ivs[k], words))
            .collect()
    }
}

/// What one party returns: its keystream shares, the online statistics and the opened output.
type PartyOut = Result<(RssVec<Fp>, PhaseStats, Vec<Fp>), EngineError>;

/// Runs the evaluation at one party: online phase, then (malicious) the check, then the
/// output opening.
fn party_run<M: SecurityModel>(
    net: triskele_net::Network,
    key: &RssVec<Fp>,
    nonces: &[Fp],
    ivs: &RssVec<Fp>,
    words: usize,
    finish: impl FnOnce(&mut Party<M>) -> Result<(), EngineError>,
) -> PartyOut {
    let mut party = Party::<M>::setup(net)?;
    party.set_phase(Phase::Online);
    let ks = hydra::keystream_mpc(&mut party, key, nonces, ivs, words)?;
    let online = party.net().stats().get(Phase::Online);
    party.set_phase(Phase::Finalize);
    finish(&mut party)?;
    party.set_phase(Phase::Output);
    let out = party.open_output(&ks)?;
    Ok((ks, online, out))
}

fn run_semi_honest(inputs: &Inputs, words: usize) -> [PartyOut; 3] {
    let (ks, ivs) = inputs.deal(11);
    three(triskele_net::in_memory(&NetOptions::default()), |net| {
        let i = net.party().index();
        party_run::<SemiHonest>(net, &ks[i], &inputs.nonces, &ivs[i], words, |_| Ok(()))
    })
}

fn run_malicious(inputs: &Inputs, words: usize, tamper: Option<Tamper>) -> [PartyOut; 3] {
    let (ks, ivs) = inputs.deal(12);
    let opts = NetOptions {
        tamper,
        ..NetOptions::default()
    };
    three(triskele_net::in_memory(&opts), |net| {
        let i = net.party().index();
        party_run::<Malicious>(net, &ks[i], &inputs.nonces, &ivs[i], words, |p| {
            p.verify_recorded()
        })
    })
}

/// Checks the outputs of an honest run: consistent shares of the cleartext keystream, the same
/// opened values at every party, and the exact online communication.
fn check_run(res: [PartyOut; 3], inputs: &Inputs, words: usize) {
    let expected = inputs.expected(words);
    let res = res.map(|r| r.expect("honest run"));
    let shares = [res[0].0.clone(), res[1].0.clone(), res[2].0.clone()];
    assert_eq!(reconstruct(&shares).expect("consistent shares"), expected);
    let n = inputs.nonces.len() as u64;
    let cost = Cost::of(words);
    for (_, online, out) in &res {
        assert_eq!(out, &expected);
        // One 16-byte element per product and instance, all to the previous party; one message
        // per round and direction.
        assert_eq!(online.prev.bytes_sent, 16 * cost.multiplications as u64 * n);
        assert_eq!(online.next.bytes_sent, 0);
        assert_eq!(
            online.next.bytes_received,
            16 * cost.multiplications as u64 * n
        );
        assert_eq!(online.prev.messages, cost.rounds as u64);
        assert_eq!(online.next.messages, cost.rounds as u64);
    }
}

#[test]
fn semi_honest_mpc_matches_the_cleartext_with_exact_communication() {
    for (n, words, shared_key) in [(1, 8, false), (3, 20, false), (4, 9, true), (2, 3, true)] {
        let inputs = Inputs::random(n, shared_key, 100 + n as u64);
        check_run(run_semi_honest(&inputs, words), &inputs, words);
    }
}

#[test]
fn one_instance_costs_171_products_in_135_rounds() {
    let inputs = Inputs::random(1, false, 5);
    let res = run_semi_honest(&inputs, 8);
    for r in res {
        let (_, online, _) = r.unwrap();
        assert_eq!(online.prev.bytes_sent, 16 * 171);
        assert_eq!(online.prev.messages, 135);
    }
}

#[test]
fn malicious_mpc_matches_the_cleartext_with_the_same_online_communication() {
    for (n, words, shared_key) in [(2, 8, false), (3, 17, true)] {
        let inputs = Inputs::random(n, shared_key, 200 + n as u64);
        check_run(run_malicious(&inputs, words, None), &inputs, words);
    }
}

/// Asserts that every honest party aborts when `tamper` is applied.
fn assert_aborts(inputs: &Inputs, words: usize, tamper: Tamper, what: &str) {
    let cheater = tamper.party;
    let log = tamper.clone();
    let res = run_malicious(inputs, words, Some(tamper));
    let flipped = log
        .tampered()
        .unwrap_or_else(|| panic!("{what}: nothing was flipped"));
    for p in PartyId::ALL {
        if p == cheater {
            continue;
        }
        let r = &res[p.index()];
        assert!(
            matches!(r, Err(EngineError::Abort(_))),
            "{what}: cheater {cheater}, flipped {flipped:?}: honest {p} returned {r:?}"
        );
    }
}

/// Whether `Tamper` with `seed` flips bit 127 of an element in a message of `len` bytes (the
/// position is a fixed function of the seed and the length, observed on a scratch link). Such
/// a flip makes a value `>= p`, which the receiver rejects as malformed (an abort of its own)
/// before any check runs; other flips are caught by the multiplication check.
fn flips_top_bit(len: usize, seed: u64) -> bool {
    let t = Tamper::new(PartyId::P1, Phase::Online, None, 0, seed);
    let opts = NetOptions {
        tamper: Some(t.clone()),
        ..NetOptions::default()
    };
    let [mut a, mut b, _c] = triskele_net::in_memory(&opts);
    a.set_phase(Phase::Online);
    a.send(Direction::Next, vec![0u8; len]).unwrap();
    b.recv(Direction::Prev).unwrap();
    let f = t.tampered().expect("flipped");
    (f.byte * 8 + f.bit as usize) % 128 == 127
}

/// One seed whose flip hits a low bit and one whose flip hits bit 127 of an element.
fn seeds(len: usize) -> [u64; 2] {
    [
        (0..).find(|s| !flips_top_bit(len, *s)).unwrap(),
        (0..).find(|s| flips_top_bit(len, *s)).unwrap(),
    ]
}

#[test]
fn a_flipped_bit_in_a_product_makes_every_honest_party_abort() {
    let inputs = Inputs::random(2, false, 300);
    let words = 8;
    // Online messages to prev, one per round: 0..4 and 88..96 cube 4 words (8 elements for
    // the 2 instances), 4..88 are the internal squares and 96..135 the head squares (2).
    for cheater in PartyId::ALL {
        for message in [0u64, 1, 40, 95, 96, 134] {
            let len = 16
                * 2
                * if message < 4 || (88..96).contains(&message) {
                    4
                } else {
                    1
                };
            for seed in seeds(len) {
                let t = Tamper::new(cheater, Phase::Online, Some(Direction::Prev), message, seed);
                assert_aborts(
                    &inputs,
                    words,
                    t,
                    &format!("online message {message} to prev, seed {seed}"),
                );
            }
        }
    }
}

#[test]
fn a_flipped_bit_in_the_output_opening_makes_every_honest_party_abort() {
    let inputs = Inputs::random(1, true, 301);
    for cheater in PartyId::ALL {
        for seed in seeds(16 * 8) {
            let t = Tamper::new(cheater, Phase::Output, Some(Direction::Next), 0, seed);
            assert_aborts(&inputs, 8, t, "output opening");
        }
    }
}

#[test]
fn malformed_inputs_are_length_errors() {
    let inputs = Inputs::random(2, false, 400);
    let (ks, ivs) = inputs.deal(1);
    let res = three(triskele_net::in_memory(&NetOptions::default()), |net| {
        let i = net.party().index();
        let mut party = Party::<SemiHonest>::setup(net).unwrap();
        let short_key = ks[i].slice(0..5).unwrap();
        let a = hydra::keystream_mpc(&mut party, &short_key, &inputs.nonces, &ivs[i], 8);
        let short_iv = ivs[i].slice(0..5).unwrap();
        let b = hydra::keystream_mpc(&mut party, &ks[i], &inputs.nonces, &short_iv, 8);
        let c = hydra::keystream_mpc(&mut party, &ks[i], &inputs.nonces, &ivs[i], 0);
        (a.err(), b.err(), c.map(|v| v.len()).ok())
    });
    for (a, b, c) in res {
        assert!(matches!(a, Some(EngineError::LengthMismatch { .. })));
        assert!(matches!(b, Some(EngineError::LengthMismatch { .. })));
        assert_eq!(c, Some(0));
    }
}
