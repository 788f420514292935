//! Naor-Reingold over Ristretto255: the scalar field, the cleartext reference, the three-party
//! evaluation against it, its exact communication, and the check of the published points.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use curve25519_dalek::{RistrettoPoint, Scalar};
use rand::{Rng, RngCore, SeedableRng};
use rand_chacha::ChaCha20Rng;
use triskele_engine::{AbortReason, EngineError, Party, Phase, SemiHonest};
use triskele_field::{Encode, Field, FieldError, Random};
use triskele_net::{NetOptions, Tamper};
use triskele_prf::local::three;
use triskele_prf::nr::{
    input_from_u128, key_from_seed, nr_clear, nr_cost, nr_eval, nr_exponent, nr_publish, NrCost,
    RistrettoScalar, DEFAULT_INPUT_BITS, KEY_DOMAIN,
};
use triskele_share::{deal, Direction, PartyId, RssVec};

type Sc = RistrettoScalar;

/// `ℓ = 2^252 + 27742317777372353535851937790883648493`, little-endian.
const ELL: [u8; 32] = [
    0xed, 0xd3, 0xf5, 0x5c, 0x1a, 0x63, 0x12, 0x58, 0xd6, 0x9c, 0xf7, 0xa2, 0xde, 0xf9, 0xde, 0x14,
    0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x10,
];

fn random_key(rng: &mut ChaCha20Rng, n: usize) -> Vec<Sc> {
    (0..=n).map(|_| Sc::random(rng)).collect()
}

fn random_bits(rng: &mut ChaCha20Rng, n: usize) -> Vec<bool> {
    (0..n).map(|_| rng.random::<bool>()).collect()
}

/// Deals `key` and runs `f` at each party (set up over in-memory links with `opts`).
fn run<T: Send>(
    opts: &NetOptions,
    key: &[Sc],
    seed: u64,
    f: impl Fn(&mut Party<SemiHonest>, &RssVec<Sc>) -> T + Sync,
) -> [T; 3] {
    let mut rng = ChaCha20Rng::seed_from_u64(seed);
    let shares = deal(key, &mut rng);
    three(triskele_net::in_memory(opts), |net| {
        let mut party = Party::<SemiHonest>::setup(net).expect("setup");
        let share = &shares[party.id().index()];
        f(&mut party, share)
    })
}

fn eval_mpc(key: &[Sc], inputs: &[Vec<bool>], seed: u64) -> [Vec<[u8; 32]>; 3] {
    run(&NetOptions::default(), key, seed, |party, share| {
        nr_eval(party, share, inputs).expect("nr_eval")
    })
}

fn eval_clear(key: &[Sc], inputs: &[Vec<bool>]) -> Vec<[u8; 32]> {
    inputs.iter().map(|x| nr_clear(key, x).unwrap()).collect()
}

// ---------------------------------------------------------------------------------------
// The scalar field

#[test]
fn scalar_encoding_is_strict_canonical_little_endian() {
    let one = Sc::ONE;
    let mut want = [0u8; 32];
    want[0] = 1;
    assert_eq!(Sc::encode_to_vec(&[one]), want);
    // ℓ - 1 is the largest element; -1 encodes as it.
    let mut ell_minus_1 = ELL;
    ell_minus_1[0] -= 1;
    assert_eq!(Sc::encode_to_vec(&[-one]), ell_minus_1);
    assert_eq!(Sc::decode_to_vec(&ell_minus_1, 1).unwrap(), [-one]);
    // Non-canonical: ℓ, ℓ + 1, ℓ + 2^200, values with the top bit set, all ones.
    let mut ell_plus_1 = ELL;
    ell_plus_1[0] += 1;
    let mut ell_plus_big = ELL;
    ell_plus_big[25] = 1;
    let mut one_high = want;
    one_high[31] |= 0x80;
    let mut two_255_minus_19 = [0xffu8; 32];
    two_255_minus_19[0] = 0xed;
    two_255_minus_19[31] = 0x7f;
    for bad in [
        ELL,
        ell_plus_1,
        ell_plus_big,
        one_high,
        two_255_minus_19,
        [0xff; 32],
    ] {
        assert_eq!(
            Sc::decode_to_vec(&bad, 1),
            Err(FieldError::OutOfRange { field: Sc::NAME }),
            "{}",
            hex::encode(bad)
        );
        assert!(Sc::from_canonical_bytes(bad).is_none());
        // Also rejected in the middle of a vector.
        let mut v = Sc::encode_to_vec(&[one, one, one]);
        v[32..64].copy_from_slice(&bad);
        assert!(Sc::decode_to_vec(&v, 3).is_err());
    }
    // Lengths.
    assert_eq!(
        Sc::decode_to_vec(&[0u8; 63], 2),
        Err(FieldError::LengthMismatch {
            expected: 64,
            got: 63
        })
    );
    assert_eq!(Sc::encoded_len(3), 96);
    // Round trip of random elements, bytes preserved.
    let mut rng = ChaCha20Rng::seed_from_u64(1);
    let xs: Vec<Sc> = (0..100).map(|_| Sc::random(&mut rng)).collect();
    let bytes = Sc::encode_to_vec(&xs);
    assert_eq!(bytes.len(), 3200);
    let back = Sc::decode_to_vec(&bytes, 100).unwrap();
    assert_eq!(back, xs);
    assert_eq!(Sc::encode_to_vec(&back), bytes);
    // Every 32-byte string is either rejected or re-encodes to itself.
    for _ in 0..2000 {
        let mut b = [0u8; 32];
        rng.fill_bytes(&mut b);
        b[31] &= [0x0f, 0x1f, 0xff][rng.random_range(0..3)];
        if let Ok(v) = Sc::decode_to_vec(&b, 1) {
            assert_eq!(Sc::encode_to_vec(&v), b);
        }
    }
}

#[test]
fn scalar_field_axioms_and_inverse() {
    let mut rng = ChaCha20Rng::seed_from_u64(2);
    for _ in 0..200 {
        let (a, b, c) = (
            Sc::random(&mut rng),
            Sc::random(&mut rng),
            Sc::random(&mut rng),
        );
        assert_eq!(a + b, b + a);
        assert_eq!(a * b, b * a);
        assert_eq!((a + b) + c, a + (b + c));
        assert_eq!((a * b) * c, a * (b * c));
        assert_eq!(a * (b + c), a * b + a * c);
        assert_eq!(a - b, a + (-b));
        assert_eq!(a + Sc::ZERO, a);
        assert_eq!(a * Sc::ONE, a);
        assert_eq!(a.square(), a * a);
        if !a.is_zero() {
            assert_eq!(a * a.inverse(), Sc::ONE);
        }
    }
    assert_eq!(Sc::ZERO.inverse(), Sc::ZERO);
    assert_eq!(Sc::from(6u64) * Sc::from(7u64), Sc::from(42u64));
    assert_eq!(Sc::from(2u64).inverse() * Sc::from(2u64), Sc::ONE);
    const { assert!(!Sc::CHARACTERISTIC_TWO) };
}

#[test]
fn scalar_random_is_wide_reduction_of_64_stream_bytes() {
    let mut a = ChaCha20Rng::seed_from_u64(3);
    let mut b = a.clone();
    let x = Sc::random(&mut a);
    let mut wide = [0u8; 64];
    b.fill_bytes(&mut wide);
    assert_eq!(x.0, Scalar::from_bytes_mod_order_wide(&wide));
    assert_eq!(x, Sc::from_uniform_bytes(&wide));
    // fill_random (chunks of 4096, the second one parallel-sized) uses the stream as element-by-
    // element sampling does.
    let n = 4096 + 5000;
    let mut bulk = vec![Sc::ZERO; n];
    Sc::fill_random(&mut a, &mut bulk);
    let single: Vec<Sc> = (0..n).map(|_| Sc::random(&mut b)).collect();
    assert_eq!(bulk, single);
    // Draws differ and both slots of the parallel slice ops agree with the scalar loop.
    assert_ne!(bulk[0], bulk[1]);
    let mut out = vec![Sc::ZERO; n];
    triskele_field::Bulk::mul_slice(&mut out, &bulk, &single);
    assert!(out.iter().zip(&bulk).all(|(o, x)| *o == *x * *x));
    triskele_field::Bulk::mul_add_slice(&mut out, &bulk, &single);
    assert!(out
        .iter()
        .zip(&bulk)
        .all(|(o, x)| *o == Sc::from(2u64) * *x * *x));
}

// ---------------------------------------------------------------------------------------
// Cleartext reference, key derivation, inputs

/// RFC 9496 Appendix A.1: encodings of `[m]B` for the Ristretto255 generator `B`.
fn rfc9496_multiple(m: usize) -> &'static str {
    match m {
        1 => "e2f2ae0a6abc4e71a884a961c500515f58e30b6aa582dd8db6a65945e08d2d76",
        2 => "6a493210f7499cd17fecb510ae0cea23a110e8d5b901f8acadd3095c73a3b919",
        6 => "f64746d3c92b13050ed8d80236a7f0007c3b3f962f5ba793d19a601ebb1df403",
        10 => "20706fd788b2720a1ed2a5dad4952b01f413bcf0e7564de8cdc816689e2db95f",
        12 => "e4549ee16b9aa03099ca208c67adafcafa4c3f3e4e5303de6026e3ca8ff84460",
        _ => unreachable!(),
    }
}

/// Key (2, 3, 5, 2): F(x) = [2 · 3^x1 · 5^x2 · 2^x3] B.
fn small_key() -> (Vec<Sc>, Vec<(Vec<bool>, usize)>) {
    let key = [2u64, 3, 5, 2].map(Sc::from).to_vec();
    let cases = vec![
        (vec![false, false, false], 2),
        (vec![true, false, false], 6),
        (vec![false, true, false], 10),
        (vec![true, false, true], 12),
    ];
    (key, cases)
}

#[test]
fn clear_matches_rfc9496_generator_multiples() {
    let (key, cases) = small_key();
    for (x, m) in cases {
        assert_eq!(
            hex::encode(nr_clear(&key, &x).unwrap()),
            rfc9496_multiple(m)
        );
    }
    assert_eq!(
        hex::encode(nr_clear(&[Sc::ONE], &[]).unwrap()),
        rfc9496_multiple(1)
    );
}

#[test]
fn clear_matches_iterated_variable_base_exponentiation() {
    let mut rng = ChaCha20Rng::seed_from_u64(4);
    for n in [1, 7, 16, DEFAULT_INPUT_BITS] {
        let key = random_key(&mut rng, n);
        for _ in 0..4 {
            let x = random_bits(&mut rng, n);
            // ((g^k0)^k_i1)^k_i2 ...: a different computation of the same point.
            let mut p = RistrettoPoint::mul_base(&key[0].0);
            for (k, _) in key[1..].iter().zip(&x).filter(|(_, &b)| b) {
                p *= k.0;
            }
            assert_eq!(nr_clear(&key, &x).unwrap(), p.compress().to_bytes());
        }
    }
}

#[test]
fn clear_rejects_mismatched_lengths() {
    let key = [Sc::ONE, Sc::ONE];
    assert!(matches!(
        nr_clear(&key, &[true, false]),
        Err(EngineError::LengthMismatch {
            expected: 3,
            got: 2
        })
    ));
    assert!(nr_clear(&[], &[]).is_err());
}

/// Known answer computed independently (Python `hashlib.shake_128`, integer reduction mod ℓ):
/// SHAKE128("Triskele NR key v1" || 2u64 LE || "triskele"), three 64-byte blocks.
#[test]
fn key_from_seed_known_answer() {
    assert_eq!(KEY_DOMAIN, b"Triskele NR key v1");
    let key = key_from_seed(b"triskele", 2);
    let hexes: Vec<String> = key.iter().map(|k| hex::encode(k.to_bytes())).collect();
    assert_eq!(
        hexes,
        [
            "5b3fb93594befb6545609b0403324c6e849dee1e53c68f7910dee12be92dca02",
            "e69b135f5b7f11f52631f616abf277adce302545a6f54af4fd4af3027daefb03",
            "02ecec56ff09777344849e659a54ca080ccaed21f7334fcdf65c10bdc430ed06",
        ]
    );
    // Deterministic, n + 1 elements, n and seed separate the keys.
    let k128 = key_from_seed(b"triskele", DEFAULT_INPUT_BITS);
    assert_eq!(k128.len(), DEFAULT_INPUT_BITS + 1);
    assert_eq!(k128, key_from_seed(b"triskele", DEFAULT_INPUT_BITS));
    assert_ne!(k128[0], key[0]);
    assert_ne!(key_from_seed(b"triskelf", 2), key);
    assert_eq!(key_from_seed(b"", 0).len(), 1);
}

#[test]
fn inputs_from_integers_are_lsb_first() {
    assert_eq!(
        input_from_u128(0b1101, 5).unwrap(),
        [true, false, true, true, false]
    );
    assert_eq!(input_from_u128(0, 0).unwrap(), Vec::<bool>::new());
    assert_eq!(input_from_u128(u128::MAX, 128).unwrap(), vec![true; 128]);
    assert!(input_from_u128(0b100000, 5).is_none());
    assert!(input_from_u128(1, 0).is_none());
    assert!(input_from_u128(0, 129).is_none());
}

// ---------------------------------------------------------------------------------------
// Three-party evaluation

#[test]
fn mpc_matches_rfc9496_on_a_small_key() {
    let (key, cases) = small_key();
    let inputs: Vec<Vec<bool>> = cases.iter().map(|(x, _)| x.clone()).collect();
    for outs in eval_mpc(&key, &inputs, 5) {
        for (o, (_, m)) in outs.iter().zip(&cases) {
            assert_eq!(hex::encode(o), rfc9496_multiple(*m));
        }
    }
}

#[test]
fn mpc_matches_clear_on_random_keys_and_inputs() {
    let mut rng = ChaCha20Rng::seed_from_u64(6);
    for n in [DEFAULT_INPUT_BITS, 5, 1, 0] {
        let key = random_key(&mut rng, n);
        let mut inputs: Vec<Vec<bool>> = (0..20).map(|_| random_bits(&mut rng, n)).collect();
        inputs.push(vec![false; n]);
        inputs.push(vec![true; n]);
        if n > 0 {
            let mut one = vec![false; n];
            one[n - 1] = true;
            inputs.push(one);
        }
        let want = eval_clear(&key, &inputs);
        for outs in eval_mpc(&key, &inputs, 7 + n as u64) {
            assert_eq!(outs, want, "n = {n}");
        }
    }
}

#[test]
fn mpc_single_inputs_and_empty_batch() {
    let mut rng = ChaCha20Rng::seed_from_u64(8);
    let key = random_key(&mut rng, DEFAULT_INPUT_BITS);
    let x = input_from_u128(0x0123_4567_89ab_cdef_fedc_ba98_7654_3210, 128).unwrap();
    let inputs = vec![x];
    let want = eval_clear(&key, &inputs);
    for outs in eval_mpc(&key, &inputs, 9) {
        assert_eq!(outs, want);
    }
    for outs in eval_mpc(&key, &[], 10) {
        assert!(outs.is_empty());
    }
}

#[test]
fn mpc_exponent_is_a_sharing_of_the_product() {
    let mut rng = ChaCha20Rng::seed_from_u64(11);
    let key = random_key(&mut rng, 9);
    let inputs: Vec<Vec<bool>> = (0..6).map(|_| random_bits(&mut rng, 9)).collect();
    let shares = run(&NetOptions::default(), &key, 12, |party, share| {
        nr_exponent(party, share, &inputs).unwrap()
    });
    let e = triskele_share::reconstruct(&shares).expect("consistent sharing");
    for (e, x) in e.iter().zip(&inputs) {
        let want = key[1..]
            .iter()
            .zip(x)
            .filter(|(_, &b)| b)
            .fold(key[0], |acc, (k, _)| acc * *k);
        assert_eq!(*e, want);
    }
}

#[test]
fn mpc_rejects_malformed_keys_and_inputs_before_communicating() {
    let mut rng = ChaCha20Rng::seed_from_u64(13);
    let key = random_key(&mut rng, 4);
    let res = run(&NetOptions::default(), &key, 14, |party, share| {
        let wrong_len = nr_eval(party, share, &[vec![true; 5]]);
        let mut broken = share.clone();
        broken.second.pop();
        let broken = nr_eval(party, &broken, &[vec![true; 4]]);
        let empty = nr_eval(party, &RssVec::<Sc>::zeros(0), &[Vec::<bool>::new()]);
        let sent = party.net().stats().clone();
        (wrong_len, broken, empty, sent)
    });
    for (wrong_len, broken, empty, sent) in res {
        assert!(matches!(
            wrong_len,
            Err(EngineError::LengthMismatch {
                expected: 4,
                got: 5
            })
        ));
        assert!(matches!(broken, Err(EngineError::LengthMismatch { .. })));
        assert!(matches!(empty, Err(EngineError::LengthMismatch { .. })));
        for phase in [Phase::Online, Phase::Output] {
            assert_eq!(sent.get(phase), Default::default());
        }
    }
}

// ---------------------------------------------------------------------------------------
// Communication

/// Runs the exponent in the online phase and the publication in the output phase, checks the
/// outputs, and compares every party's counters with the documented cost.
fn check_comm(key: &[Sc], inputs: &[Vec<bool>], expected: NrCost) {
    assert_eq!(nr_cost(inputs), expected);
    let want = eval_clear(key, inputs);
    let res = run(&NetOptions::default(), key, 15, |party, share| {
        party.set_phase(Phase::Online);
        let e = nr_exponent(party, share, inputs).unwrap();
        party.set_phase(Phase::Output);
        let out = nr_publish(party, &e).unwrap();
        (out, party.net().stats().clone())
    });
    for (out, stats) in res {
        assert_eq!(out, want);
        let online = stats.get(Phase::Online);
        let rounds = u64::from(expected.tree_rounds);
        assert_eq!(online.prev.bytes_sent, expected.tree_bytes);
        assert_eq!(online.next.bytes_received, expected.tree_bytes);
        assert_eq!(online.next.bytes_sent, 0);
        assert_eq!(online.prev.bytes_received, 0);
        // One send to prev and one receive from next per tree level.
        assert_eq!(online.prev.messages, rounds);
        assert_eq!(online.next.messages, rounds);
        let output = stats.get(Phase::Output);
        let per = expected.publish_bytes_per_neighbour;
        let msgs = 2 * u64::from(expected.publish_rounds);
        for d in Direction::BOTH {
            let s = output.dir(d);
            assert_eq!(
                (s.bytes_sent, s.bytes_received, s.messages),
                (per, per, msgs)
            );
        }
        for phase in [Phase::Preprocessing, Phase::Finalize] {
            assert_eq!(stats.get(phase), Default::default());
        }
    }
}

#[test]
fn comm_all_ones_128_is_128_products_4096_bytes_8_rounds() {
    let mut rng = ChaCha20Rng::seed_from_u64(16);
    let key = random_key(&mut rng, 128);
    check_comm(
        &key,
        &[vec![true; 128]],
        NrCost {
            multiplications: 128,
            tree_rounds: 8,
            tree_bytes: 4096,
            publish_rounds: 1,
            publish_bytes_per_neighbour: 32,
        },
    );
    // 127 factors of k_1..k_127 plus k_0: 128 factors, 7 levels.
    let mut x = vec![true; 128];
    x[0] = false;
    check_comm(
        &key,
        &[x.clone(), x],
        NrCost {
            multiplications: 254,
            tree_rounds: 7,
            tree_bytes: 32 * 254,
            publish_rounds: 1,
            publish_bytes_per_neighbour: 64,
        },
    );
}

#[test]
fn comm_of_a_random_batch_is_32_bytes_per_set_bit_plus_64() {
    let mut rng = ChaCha20Rng::seed_from_u64(17);
    let key = random_key(&mut rng, 128);
    let inputs: Vec<Vec<bool>> = (0..40).map(|_| random_bits(&mut rng, 128)).collect();
    let weight: u64 = inputs.iter().flatten().filter(|&&b| b).count() as u64;
    let max_w = inputs
        .iter()
        .map(|x| x.iter().filter(|&&b| b).count())
        .max()
        .unwrap();
    // ⌈log2(1 + max_w)⌉ levels.
    let rounds = (0..).find(|&l| (1usize << l) > max_w).unwrap();
    check_comm(
        &key,
        &inputs,
        NrCost {
            multiplications: weight,
            tree_rounds: rounds,
            tree_bytes: 32 * weight,
            publish_rounds: 1,
            publish_bytes_per_neighbour: 32 * 40,
        },
    );
}

#[test]
fn comm_of_zero_inputs_and_empty_batches() {
    let mut rng = ChaCha20Rng::seed_from_u64(18);
    let key = random_key(&mut rng, 16);
    // x = 0: F = g^(k_0), no multiplication, only the publication.
    check_comm(
        &key,
        &[vec![false; 16], vec![false; 16]],
        NrCost {
            multiplications: 0,
            tree_rounds: 0,
            tree_bytes: 0,
            publish_rounds: 1,
            publish_bytes_per_neighbour: 64,
        },
    );
    check_comm(&key, &[], NrCost::default());
}

// ---------------------------------------------------------------------------------------
// Publication check

/// Hand-made sharings with zero components (identity points inside a batched compression)
/// and a zero value (the output is the identity).
#[test]
fn publication_handles_zero_components() {
    let mut rng = ChaCha20Rng::seed_from_u64(21);
    let n = 600; // three chunks of the batched compression
    let mut comps: [Vec<Sc>; 3] =
        core::array::from_fn(|_| (0..n).map(|_| Sc::random(&mut rng)).collect());
    comps[0][3] = Sc::ZERO; // chunk 0: one zero component
    comps[1][300] = Sc::ZERO; // chunk 1: e = e_1 + e_3
    comps[2][300] = Sc::ZERO;
    comps[0][599] = -comps[1][599] - comps[2][599]; // chunk 2: e = 0, output the identity
    let values: Vec<Sc> = (0..n)
        .map(|j| comps[0][j] + comps[1][j] + comps[2][j])
        .collect();
    let want: Vec<[u8; 32]> = values
        .iter()
        .map(|e| RistrettoPoint::mul_base(&e.0).compress().to_bytes())
        .collect();
    assert_eq!(want[599], [0u8; 32]);
    let shares: [RssVec<Sc>; 3] = core::array::from_fn(|i| RssVec {
        first: comps[i].clone(),
        second: comps[(i + 1) % 3].clone(),
    });
    let outs = three(triskele_net::in_memory(&NetOptions::default()), |net| {
        let mut party = Party::<SemiHonest>::setup(net).unwrap();
        let e = &shares[party.id().index()];
        nr_publish(&mut party, e).unwrap()
    });
    for out in outs {
        assert_eq!(out, want);
    }
}

/// A party flips one bit of the points it publishes to `dir`: the receiving honest party
/// aborts with a view mismatch, the other honest party (whose two copies come from honest
/// holders) returns the correct output. No honest party returns a wrong output.
#[test]
fn a_wrong_published_point_makes_the_receiver_abort() {
    let mut rng = ChaCha20Rng::seed_from_u64(19);
    let key = random_key(&mut rng, 128);
    let inputs: Vec<Vec<bool>> = (0..5).map(|_| random_bits(&mut rng, 128)).collect();
    let want = eval_clear(&key, &inputs);
    for cheater in PartyId::ALL {
        for dir in Direction::BOTH {
            for seed in 0..2 {
                let tamper = Tamper::new(cheater, Phase::Output, Some(dir), 0, seed);
                let opts = NetOptions {
                    tamper: Some(tamper.clone()),
                    ..NetOptions::default()
                };
                let res = run(&opts, &key, 20 + seed, |party, share| {
                    party.set_phase(Phase::Online);
                    let e = nr_exponent(party, share, &inputs)?;
                    party.set_phase(Phase::Output);
                    nr_publish(party, &e)
                });
                let flip = tamper.tampered().expect("a bit was flipped");
                assert_eq!((flip.party, flip.direction, flip.len), (cheater, dir, 160));
                let victim = cheater.neighbour(dir);
                for p in PartyId::ALL {
                    let r = &res[p.index()];
                    if p == victim {
                        assert!(
                            matches!(
                                r,
                                Err(EngineError::Abort(AbortReason::ViewMismatch { peer }))
                                    if *peer == victim.prev()
                            ),
                            "{cheater} -> {victim}: {r:?}"
                        );
                    } else {
                        // The other honest party and the cheater see consistent copies.
                        assert_eq!(r.as_ref().unwrap(), &want, "{p}");
                    }
                }
            }
        }
    }
}
