//! `mal-chida` (PROTOCOLS.md §5.3): the functional suite, exact communication per phase, the
//! abort matrix, and direct checks of the sacrifice and of the preprocessing budget.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use common::{run_fips197 as run, three, FIPS_CT as CT};
use rand::SeedableRng;
use rand_chacha::ChaCha20Rng;
use triskele_aes::sbox::mal_chida_bucket::MalChida;
use triskele_aes::sbox::SboxProtocol;
use triskele_aes::{aes_tamper, bench_party, KeySize, RunReport, Target};
use triskele_engine::{EngineError, Malicious, Party};
use triskele_field::Gf2p8;
use triskele_net::{NetOptions, Phase, Tamper};
use triskele_share::{deal, Direction, PartyId};

// FIPS-197, CAVP (GFSbox, KeySbox, VarTxt), random blocks against RustCrypto, all 256 S-box
// inputs; AES-128 and AES-256, encryption and decryption.
sbox_protocol_tests!(suite, triskele_aes::Target::MalChida);

// ---------------------------------------------------------------------------------------------
// Communication

/// Bucket parameters `(N, B, C, M)` for `t` triples, derived here from PROTOCOLS.md §5.3 step 1
/// (independently of the implementation): `N = max(2^10, nextpow2(t))`, `B` by `log2 N`
/// (\[DEV\]), `C = B`, `M = NB + C`.
fn bucket(t: u64) -> (u64, u64, u64, u64) {
    let n = t.next_power_of_two().max(1 << 10);
    let b = match n.trailing_zeros() {
        10..=12 => 5,
        13..=18 => 4,
        _ => 3,
    };
    (n, b, b, n * b + b)
}

/// Expected bytes sent `(to next, to prev)` and messages per channel, per phase.
struct Expected {
    prep: (u64, u64, u64),
    online: (u64, u64, u64),
    finalize: (u64, u64, u64),
}

/// PROTOCOLS.md §5.3/§6.4 with this implementation's deviations: every compare-view also sends
/// its 32-byte digest to prev (two-way compare-view, engine-wide), i.e. +64 to prev in the
/// preprocessing (two compare-views) and +32 in the finalize.
///
/// * Preprocessing (`t = 4·16·N_r·S` triples): to prev `M + 3C + 2N(B-1)` elements, 64 bytes of
///   coin (48-byte commitment, 16-byte seed part) and two digests; to next 64 bytes of coin and
///   two digests. 7 rounds; on each channel 11 messages (the multiplication and the two
///   openings towards prev: 1 each; the coin's two broadcasts and the two compare-views: 2 each).
/// * Online: 4 bytes per S-box to prev, 3 rounds per layer (1 message per round and channel).
/// * Finalize: `ρ, σ` per recorded product to prev (8 bytes per S-box) and one compare-view;
///   2 rounds, 3 messages per channel.
fn expected(size: KeySize, simd: u64) -> Expected {
    let layers = size.rounds() as u64;
    let sboxes = 16 * layers * simd;
    let (n, b, c, m) = bucket(4 * sboxes);
    Expected {
        prep: (64 + 2 * 32, m + 3 * c + 2 * n * (b - 1) + 64 + 2 * 32, 11),
        online: (0, 4 * sboxes, 3 * layers),
        finalize: (32, 2 * 4 * sboxes + 32, 3),
    }
}

fn bench(size: KeySize, simd: usize) -> [RunReport; 3] {
    three(triskele_net::in_memory(&NetOptions::default()), |net| {
        bench_party(Target::MalChida, net, size, simd).expect("bench run")
    })
}

fn check_comm(size: KeySize, simd: usize) {
    let e = expected(size, simd as u64);
    for r in bench(size, simd) {
        for (what, got, (next, prev, msgs)) in [
            ("preprocessing", &r.preprocessing.stats, e.prep),
            ("online", &r.online.stats, e.online),
            ("finalize", &r.finalize.stats, e.finalize),
        ] {
            let ctx = format!("{size:?} S = {simd} {what}");
            assert_eq!(got.next.bytes_sent, next, "{ctx}: to next");
            assert_eq!(got.prev.bytes_sent, prev, "{ctx}: to prev");
            // What one party sends to next, the next party receives from prev.
            assert_eq!(got.prev.bytes_received, next, "{ctx}: from prev");
            assert_eq!(got.next.bytes_received, prev, "{ctx}: from next");
            assert_eq!(got.next.messages, msgs, "{ctx}: messages next");
            assert_eq!(got.prev.messages, msgs, "{ctx}: messages prev");
        }
    }
}

#[test]
fn bucket_parameters_of_the_measured_batch_sizes() {
    // S = 1 (AES-128): 640 triples, N = 2^10, B = 5 (§6.4: 13 396 B to prev with a one-way
    // compare-view, 13 460 with the two-way one).
    assert_eq!(bucket(640), (1024, 5, 5, 5125));
    assert_eq!(expected(KeySize::Aes128, 1).prep, (128, 13_460, 11));
    // S = 100: 64 000 triples, N = 2^16, B = 4; S = 1000: N = 2^20, B = 3.
    assert_eq!(bucket(64_000), (1 << 16, 4, 4, (1 << 18) + 4));
    assert_eq!(bucket(640_000), (1 << 20, 3, 3, 3 * (1 << 20) + 3));
    // §5.3: S = 50 000 → N = 2^25, S = 250 000 → N = 2^28.
    assert_eq!(bucket(4 * 160 * 50_000).0, 1 << 25);
    assert_eq!(bucket(4 * 160 * 250_000).0, 1 << 28);
    // Online 640 B, finalize 1280 B (+ 32) per AES-128 block.
    let e = expected(KeySize::Aes128, 1);
    assert_eq!((e.online.1, e.online.2), (640, 30));
    assert_eq!((e.finalize.0, e.finalize.1), (32, 1312));
}

#[test]
fn aes128_one_block_exact_bytes_and_messages() {
    check_comm(KeySize::Aes128, 1);
}

#[test]
fn aes128_100_blocks_exact_bytes_and_messages() {
    check_comm(KeySize::Aes128, 100);
}

#[test]
fn aes128_1000_blocks_exact_bytes_and_messages() {
    check_comm(KeySize::Aes128, 1000);
}

#[test]
fn aes256_exact_bytes_and_messages() {
    check_comm(KeySize::Aes256, 1);
    check_comm(KeySize::Aes256, 7);
}

// ---------------------------------------------------------------------------------------------
// Abort matrix

/// Runs mal-chida with `tamper` and checks the abort promise; the flipped message's length.
fn assert_aborts(tamper: Tamper, what: &str) -> usize {
    common::assert_fips197_aborts(Target::MalChida, tamper, what)
}

/// The `k`-th message `cheater` sends in `phase` towards `dir`.
fn message(cheater: PartyId, phase: Phase, dir: Direction, k: u64, seed: u64) -> Tamper {
    Tamper::new(cheater, phase, Some(dir), k, seed)
}

// Messages of one party per phase and direction (one block of AES-128 with key schedule:
// 200 S-boxes, 800 triples, N = 1024, B = C = 5, M = 5125):
//   preprocessing to prev: 0 products (5125 B), 1 commitment (48), 2 seed part (16),
//     3 digest (32), 4 opened triples (15), 5 ρ, σ (8192), 6 digest (32);
//   preprocessing to next: 0 commitment, 1 seed part, 2 digest, 3 digest;
//   finalize to prev: 0 ρ, σ (1600), 1 digest; finalize to next: 0 digest;
//   output to next: 0 opening (16), 1 digest.
const PREP_PRODUCTS: u64 = 0;
const PREP_COMMITMENT: u64 = 1;
const PREP_SEED: u64 = 2;
const PREP_DIGEST_1: u64 = 3;
const PREP_OPENED: u64 = 4;
const PREP_RHO_SIGMA: u64 = 5;
const PREP_DIGEST_2: u64 = 6;

#[test]
fn honest_run_gives_the_fips197_ciphertext() {
    for r in run(Target::MalChida, None) {
        assert_eq!(hex::encode(r.unwrap()), CT);
    }
}

/// (a) A share of an online multiplication (every online message of mal-chida is one).
#[test]
fn tampered_online_multiplication_share_aborts() {
    for cheater in PartyId::ALL {
        for seed in 0..3 {
            let t = aes_tamper(Target::MalChida, KeySize::Aes128, cheater, seed);
            assert_aborts(t, "(a) online multiplication share");
        }
    }
}

/// (b) A value sent in an opening: the opened triples and `ρ, σ` of the preprocessing, `ρ, σ`
/// of the finalize sacrifice, the output opening.
#[test]
fn tampered_opening_aborts() {
    for cheater in PartyId::ALL {
        for (k, name, len) in [
            (PREP_OPENED, "opened triples", 15),
            (PREP_RHO_SIGMA, "preprocessing rho, sigma", 8192),
        ] {
            for seed in [3, 4] {
                let t = message(cheater, Phase::Preprocessing, Direction::Prev, k, seed);
                assert_eq!(assert_aborts(t, &format!("(b) {name}")), len);
            }
        }
        for seed in [5, 6] {
            let t = message(cheater, Phase::Finalize, Direction::Prev, 0, seed);
            assert_eq!(assert_aborts(t, "(b) finalize rho, sigma"), 1600);
            let t = message(cheater, Phase::Output, Direction::Next, 0, seed);
            assert_eq!(assert_aborts(t, "(b) output opening"), 16);
        }
    }
}

/// (b') The global coin: commitment and seed part, towards either neighbour.
#[test]
fn tampered_coin_aborts() {
    for cheater in PartyId::ALL {
        for (dir, k, len) in [
            (Direction::Prev, PREP_COMMITMENT, 48),
            (Direction::Prev, PREP_SEED, 16),
            (Direction::Next, 0, 48),
            (Direction::Next, 1, 16),
        ] {
            let t = message(cheater, Phase::Preprocessing, dir, k, 7);
            assert_eq!(assert_aborts(t, &format!("(b') coin to {dir:?}")), len);
        }
    }
}

/// (c) A share of a preprocessing multiplication, i.e. of a generated triple: whether the
/// triple ends up opened, checked or sacrificed, every honest party aborts.
#[test]
fn tampered_preprocessing_triple_aborts() {
    for cheater in PartyId::ALL {
        for seed in [8, 9, 10] {
            let t = message(
                cheater,
                Phase::Preprocessing,
                Direction::Prev,
                PREP_PRODUCTS,
                seed,
            );
            assert_eq!(assert_aborts(t, "(c) preprocessing triple"), 5125);
        }
    }
}

/// (d) A compare-view digest, in either direction: the two of the preprocessing and the one of
/// the finalize.
#[test]
fn tampered_compare_view_digest_aborts() {
    for cheater in PartyId::ALL {
        for (phase, dir, k) in [
            (Phase::Preprocessing, Direction::Prev, PREP_DIGEST_1),
            (Phase::Preprocessing, Direction::Prev, PREP_DIGEST_2),
            (Phase::Preprocessing, Direction::Next, 2),
            (Phase::Preprocessing, Direction::Next, 3),
            (Phase::Finalize, Direction::Prev, 1),
            (Phase::Finalize, Direction::Next, 0),
        ] {
            let t = message(cheater, phase, dir, k, 11);
            let what = format!("(d) {phase:?} digest {k} to {dir:?}");
            assert_eq!(assert_aborts(t, &what), 32, "{what}");
        }
    }
}

/// The same online tamper on semi-honest `chida` goes undetected: every party returns an
/// output (wrong or, by luck, correct), nobody aborts.
#[test]
fn semi_honest_chida_does_not_detect_the_online_tamper() {
    let mut wrong = 0;
    for cheater in PartyId::ALL {
        for seed in 0..3 {
            let t = aes_tamper(Target::Chida, KeySize::Aes128, cheater, seed);
            let log = t.clone();
            let res = run(Target::Chida, Some(t));
            assert!(log.tampered().is_some());
            for r in &res {
                let out = r.as_ref().expect("semi-honest: no check, no abort");
                if hex::encode(out) != CT {
                    wrong += 1;
                }
            }
        }
    }
    assert!(wrong > 0);
}

// ---------------------------------------------------------------------------------------------
// Direct runs of the protocol object

/// Three malicious parties over in-memory links, each running `f`.
fn parties<T: Send>(f: impl Fn(Party<Malicious>) -> T + Sync) -> [T; 3] {
    three(triskele_net::in_memory(&NetOptions::default()), |net| {
        f(Party::setup(net).expect("setup"))
    })
}

/// All 256 bytes through one inversion layer; if `error` is set, the corrupt party `P1` adds
/// it to its share of the product with index `k` **consistently** (in its own first component
/// and in what it sends, i.e. `P3`'s second component), so the sharing stays consistent and
/// only the sacrifice can notice.
fn inversion_with_product_error(
    error: Option<(usize, u8)>,
) -> [Result<Vec<Gf2p8>, EngineError>; 3] {
    inversion_in_messages(error, None).map(|r| r.map(|(out, _)| out))
}

/// [`inversion_with_product_error`] with at most `message_pairs` sacrificed pairs per message
/// of the finalize (`None`: the default); also returns the finalize's messages on the channel
/// to `P_{i-1}`.
fn inversion_in_messages(
    error: Option<(usize, u8)>,
    message_pairs: Option<usize>,
) -> [Result<(Vec<Gf2p8>, u64), EngineError>; 3] {
    let mut rng = ChaCha20Rng::seed_from_u64(5);
    let x: Vec<Gf2p8> = (0..=255u8).map(Gf2p8).collect();
    let xs = deal(&x, &mut rng);
    parties(|mut p| {
        let id = p.id();
        let mut sbox = match message_pairs {
            Some(m) => MalChida::default().with_message_pairs(m),
            None => MalChida::default(),
        };
        sbox.preprocess(&mut p, 256)?;
        let mut x = xs[id.index()].clone();
        sbox.invert(&mut p, &mut x)?;
        if let Some((k, e)) = error {
            // P1's first component is P3's second one.
            let (first, second) = match id {
                PartyId::P1 => (e, 0),
                PartyId::P3 => (0, e),
                PartyId::P2 => (0, 0),
            };
            assert!(sbox.perturb_product_output(k, first, second));
        }
        p.set_phase(Phase::Finalize);
        sbox.finalize(&mut p)?;
        let messages = p.net().stats().get(Phase::Finalize).prev.messages;
        let out = p.open_output(&x)?;
        p.shutdown()?;
        Ok((out, messages))
    })
}

/// The finalize's sacrifice in several messages (one per at most `message_pairs` pairs of
/// whole blocks; here the chain's four products of 256 inversions are four blocks) gives the
/// right outputs, and an error in a product of any message aborts at every party.
#[test]
fn finalize_in_several_messages_checks_every_product() {
    // Blocks of 256 pairs: 300 pairs per message take one block, 600 two.
    for (pairs, rho_sigma_messages) in [(300, 4), (600, 2), (1 << 24, 1)] {
        for r in inversion_in_messages(None, Some(pairs)) {
            let (out, messages) = r.unwrap();
            for (v, y) in out.iter().enumerate() {
                assert_eq!(*y, Gf2p8(v as u8).pow(254), "{v:#04x}");
            }
            // On the channel to P_{i-1}: the ρ, σ messages sent, and the compare-view's digests
            // sent and received.
            assert_eq!(
                messages,
                rho_sigma_messages + 2,
                "{pairs} pairs per message"
            );
        }
        for (k, e) in [(0, 1), (300, 0x80), (600, 0x11), (1023, 0x5a)] {
            for r in inversion_in_messages(Some((k, e)), Some(pairs)) {
                assert!(
                    matches!(r, Err(EngineError::Abort(_))),
                    "{pairs} pairs per message, product {k}, error {e:#04x}: {r:?}"
                );
            }
        }
    }
}

#[test]
fn consistent_error_in_an_online_product_aborts_in_finalize() {
    for r in inversion_with_product_error(None) {
        let r = r.unwrap();
        for (v, y) in r.iter().enumerate() {
            assert_eq!(*y, Gf2p8(v as u8).pow(254), "{v:#04x}");
        }
    }
    // Products 0..256 are x^3, 256..768 x^15 and x^14, 768..1024 x^254.
    for (k, e) in [(0, 1), (300, 0x80), (1023, 0x5a)] {
        for r in inversion_with_product_error(Some((k, e))) {
            assert!(
                matches!(r, Err(EngineError::Abort(_))),
                "product {k}, error {e:#04x}: {r:?}"
            );
        }
    }
}

#[test]
fn inverting_more_than_was_preprocessed_is_an_error() {
    let res = parties(|mut p| {
        let mut sbox = MalChida::default();
        sbox.preprocess(&mut p, 3)?;
        assert_eq!(sbox.available(), 12);
        let mut x = p.random_rss::<Gf2p8>(4);
        sbox.invert(&mut p, &mut x)
    });
    for r in res {
        assert!(
            matches!(
                r,
                Err(EngineError::PreprocessingExhausted {
                    needed: 16,
                    available: 12
                })
            ),
            "{r:?}"
        );
    }
}

#[test]
fn material_spans_several_preprocessing_calls_and_finalizes() {
    let mut rng = ChaCha20Rng::seed_from_u64(9);
    let x: Vec<Gf2p8> = (0..=255u8).map(Gf2p8).collect();
    let xs = deal(&x, &mut rng);
    let res = parties(|mut p| -> Result<_, EngineError> {
        let id = p.id().index();
        let mut sbox = MalChida::default();
        sbox.preprocess(&mut p, 200)?;
        let mut a = xs[id].slice(0..150).unwrap();
        sbox.invert(&mut p, &mut a)?;
        sbox.finalize(&mut p)?;
        // 50 inversions left; 106 more are preprocessed separately.
        sbox.preprocess(&mut p, 56)?;
        assert_eq!(sbox.available(), 4 * 106);
        let mut b = xs[id].slice(150..256).unwrap();
        sbox.invert(&mut p, &mut b)?;
        assert_eq!(sbox.available(), 0);
        sbox.finalize(&mut p)?;
        a.extend(&b);
        p.open_output(&a)
    });
    for r in res {
        let r = r.unwrap();
        for (v, y) in r.iter().enumerate() {
            assert_eq!(*y, Gf2p8(v as u8).pow(254), "{v:#04x}");
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Preprocessing in several runs of the cut-and-choose

/// 256 inversions (all bytes) with runs of at most `2^10` triples (1024 triples: `n = 256`
/// gives one run; `n = 600` gives 3 runs of 800), optionally with `tamper`; every party's
/// result and its preprocessing counters.
fn inversions_in_runs(
    n: usize,
    tamper: Option<Tamper>,
) -> [Result<(Vec<Gf2p8>, triskele_net::PhaseStats), EngineError>; 3] {
    let mut rng = ChaCha20Rng::seed_from_u64(12);
    let x: Vec<Gf2p8> = (0..=255u8).map(Gf2p8).collect();
    let xs = deal(&x, &mut rng);
    let opts = NetOptions {
        tamper,
        ..NetOptions::default()
    };
    three(triskele_net::in_memory(&opts), |net| {
        let mut p: Party<Malicious> = Party::setup(net)?;
        let id = p.id().index();
        let mut sbox = MalChida::with_run_log2(10);
        p.set_phase(Phase::Preprocessing);
        sbox.preprocess(&mut p, n)?;
        let stats = p.net().stats().get(Phase::Preprocessing);
        p.set_phase(Phase::Online);
        let mut x = xs[id].clone();
        sbox.invert(&mut p, &mut x)?;
        p.set_phase(Phase::Finalize);
        sbox.finalize(&mut p)?;
        p.set_phase(Phase::Output);
        let out = p.open_output(&x)?;
        p.shutdown()?;
        Ok((out, stats))
    })
}

/// Three runs: correct inversions, and the preprocessing traffic is the sum over the runs of
/// §5.3's per-run formula (plus the two-way compare-views), 11 messages per run and channel.
#[test]
fn preprocessing_in_three_runs_is_correct_with_the_traffic_of_each_run() {
    use triskele_aes::sbox::mal_chida_bucket::{plan_runs, runs_bytes_to_prev};
    let runs = plan_runs(4 * 600, 10).unwrap();
    assert_eq!(runs.len(), 3);
    assert!(runs.iter().all(|r| r.triples == 800));
    // Each run: N = 1024, B = C = 5, M = 5125.
    let per_run = bucket(800);
    assert_eq!(per_run, (1024, 5, 5, 5125));
    let (nb, b, c, m) = per_run;
    let to_prev = 3 * (m + 3 * c + 2 * nb * (b - 1) + 64 + 2 * 32);
    assert_eq!(runs_bytes_to_prev(&runs) as u64, to_prev);
    for r in inversions_in_runs(600, None) {
        let (out, stats) = r.unwrap();
        for (v, y) in out.iter().enumerate() {
            assert_eq!(*y, Gf2p8(v as u8).pow(254), "{v:#04x}");
        }
        assert_eq!(stats.prev.bytes_sent, to_prev);
        assert_eq!(stats.next.bytes_sent, 3 * (64 + 2 * 32));
        assert_eq!((stats.prev.messages, stats.next.messages), (33, 33));
    }
    // One run below the cap: the single-run traffic of §5.3.
    for r in inversions_in_runs(256, None) {
        let (_, stats) = r.unwrap();
        assert_eq!(
            stats.prev.bytes_sent,
            m + 3 * c + 2 * nb * (b - 1) + 64 + 64
        );
        assert_eq!(stats.prev.messages, 11);
    }
}

/// A corrupt party's wrong triple share, opening or digest in the second or third run makes
/// every honest party abort (each run has its own coin, opening and sacrifice).
#[test]
fn tampering_in_a_later_run_aborts() {
    // Per run and party, to prev: 0 products, 1 commitment, 2 seed part, 3 digest,
    // 4 opened triples, 5 rho/sigma, 6 digest; run k starts at message 7k.
    for (k, what) in [
        (7 + PREP_PRODUCTS, "run 2 triple share"),
        (14 + PREP_OPENED, "run 3 opened triples"),
        (7 + PREP_RHO_SIGMA, "run 2 rho, sigma"),
        (14 + PREP_DIGEST_2, "run 3 digest"),
        (7 + PREP_COMMITMENT, "run 2 commitment"),
    ] {
        for cheater in PartyId::ALL {
            let t = message(cheater, Phase::Preprocessing, Direction::Prev, k, 13);
            let log = t.clone();
            let res = inversions_in_runs(600, Some(t));
            assert!(
                log.tampered().is_some(),
                "{what}: nothing was tampered with"
            );
            common::assert_honest_parties_abort(&res, cheater, what);
        }
    }
}

/// A product recorded by someone else in the same party (which the sacrifice would not check)
/// makes the finalize refuse with an error, at every party.
#[test]
fn finalize_refuses_products_recorded_by_others() {
    let res = parties(|mut p| {
        let mut sbox = MalChida::default();
        sbox.preprocess(&mut p, 4)?;
        let mut x = p.random_rss::<Gf2p8>(4);
        sbox.invert(&mut p, &mut x)?;
        let y = p.random_rss::<Gf2p8>(2);
        let z = p.mul(&y, &y)?;
        p.model().record(&y, &y, &z);
        sbox.finalize(&mut p)
    });
    for r in res {
        assert!(matches!(r, Err(EngineError::Unsupported(_))), "{r:?}");
    }
}
