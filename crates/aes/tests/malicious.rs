//! The abort matrix of the malicious variants (ARCHITECTURE.md "Security promises", STYLE.md
//! rule 11), one line per variant ([`abort_matrix!`]): for each party as the cheater, one
//! flipped bit in (a) a share it sends in a multiplication, (b) a value it sends in an opening
//! (the Verify coins and openings, the output opening), (d) its compare-view digest. Every
//! honest party must return `EngineError::Abort` and no honest party returns an output. The
//! same tamper on the semi-honest twin goes undetected. ((c), a preprocessed value, does not
//! apply: mal-chida-rec-check and mal-gf4-circuit(-opt) have no preprocessing; the lut16 and
//! lut256-ss variants have their own tests of (c) below.) The lengths of the tampered
//! messages are asserted where the message is named, so that a changed message order cannot
//! quietly move a tamper to another value.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use common::{check_random_blocks, run_fips197 as run, three, Links, FIPS_CT as CT};
use triskele_aes::{aes_tamper, KeySize, Target};
use triskele_engine::verify::levels;
use triskele_engine::EngineError;
use triskele_field::Gf2p8;
use triskele_net::{NetOptions, Phase, Tamper};
use triskele_share::{Direction, PartyId};

/// Recorded `GF(2^64)` triples per S-box (PROTOCOLS.md §5.5).
fn triples_per_sbox(target: Target) -> usize {
    match target {
        Target::MalChidaRecCheck => 4,
        // Rounds 2 and 3 (common factor d^2) as one relation, round 4's two products (common
        // factor d^-1) as one.
        Target::MalGf4Circuit => 3,
        // The gf4p4 relation and the norm relation (d^6 and d^-1) per S-box.
        Target::MalGf4CircuitOpt => 2,
        // 2 ohv resp. 2 bit × bit-string relations (steps 2 and 3, step 1 certified inside
        // step 2's) per one-hot vector + 1 gf4p4 relation; one AES-128 block with the key
        // schedule verifies 2 · 208 (13 whole words of vectors) + 200 = 616 relations, the
        // same ℓ = 10 as 3 · 200.
        Target::MalLut16Ohv | Target::MalLut16Bitstring => 3,
        // 22 bit triples (or 4 packed relations) of the preprocessing + 2 VerifySbox triples.
        Target::MalLut256Ss => 24,
        Target::MalLut256SsOpt => 6,
        _ => panic!("{target} is not a Verify-based malicious variant"),
    }
}

/// Levels of the finalize Verify of one AES-128 block with the key schedule:
/// `L = t · (40 + 160)` triples for `t` triples per S-box.
fn verify_levels(target: Target) -> u64 {
    u64::from(levels(
        triples_per_sbox(target) * (KeySize::Aes128.key_schedule_sboxes() + 160),
    ))
}

/// Runs `target` with `tamper` and checks the abort promise.
fn assert_aborts(target: Target, tamper: Tamper, what: &str) {
    common::assert_fips197_aborts(target, tamper, what);
}

fn honest_run_gives_the_fips197_ciphertext(target: Target) {
    for r in run(target, None) {
        assert_eq!(hex::encode(r.unwrap()), CT);
    }
}

/// (a) A share of a multiplication, or whatever the online phase sends instead. The online
/// messages of the chain and circuit variants are all multiplication reshares. lut16's online
/// layer has none: it sends the masked offset shares (an opening) and the reshare of the
/// looked-up values `b_h`, `b_l`; lut256-ss sends the opening of the masked input and a
/// reshare. The multiplications of those
/// variants are in their preprocessing (Protocol 8 or 5), which the tests of (c) tamper.
fn tampered_multiplication_share_aborts(target: Target) {
    for cheater in PartyId::ALL {
        for seed in 0..3 {
            let t = aes_tamper(target, KeySize::Aes128, cheater, seed);
            assert_aborts(target, t, "(a) multiplication share");
        }
    }
}

/// (b) Values sent in openings: the step-1 seed coins, a halving coin, `t`, `ρ`, `σ` (all to
/// next in the finalize phase), and the output opening.
fn tampered_opening_aborts(target: Target) {
    let l = verify_levels(target);
    for cheater in PartyId::ALL {
        // (message to next, what it is, its length: the 16-byte seed share, `GF(2^64)` values)
        for (k, name, len) in [
            (0, "seed coins", 16),
            (1 + l / 2, "halving coin", 8),
            (l + 1, "coin t", 8),
            (l + 2, "opening of rho", 8),
            (l + 3, "opening of sigma", 8),
        ] {
            let t = Tamper::new(cheater, Phase::Finalize, Some(Direction::Next), k, k + 5);
            assert_aborts(target, t.clone(), &format!("(b) {name}"));
            assert_eq!(t.tampered().map(|f| f.len), Some(len), "(b) {name}");
        }
        // The output block's share of the hashed opening.
        let t = Tamper::new(cheater, Phase::Output, Some(Direction::Next), 0, 9);
        assert_aborts(target, t.clone(), "(b) output opening");
        assert_eq!(t.tampered().map(|f| f.len), Some(16), "(b) output opening");
    }
}

/// (b') The check's own reshares and multiplications (to prev in the finalize phase).
fn tampered_verify_reshare_aborts(target: Target) {
    let l = verify_levels(target);
    for cheater in PartyId::ALL {
        for k in [0, l - 1, l, l + 1] {
            let t = Tamper::new(
                cheater,
                Phase::Finalize,
                Some(Direction::Prev),
                k,
                3 * k + 1,
            );
            assert_aborts(target, t, &format!("(b') finalize message {k} to prev"));
        }
    }
}

/// (d) The compare-view digest, in either direction.
fn tampered_compare_view_digest_aborts(target: Target) {
    let l = verify_levels(target);
    for cheater in PartyId::ALL {
        let t = Tamper::new(cheater, Phase::Finalize, Some(Direction::Next), l + 4, 1);
        assert_aborts(target, t.clone(), "(d) digest to next");
        assert_eq!(t.tampered().map(|f| f.len), Some(32));
        let t = Tamper::new(cheater, Phase::Finalize, Some(Direction::Prev), l + 2, 2);
        assert_aborts(target, t.clone(), "(d) digest to prev");
        assert_eq!(t.tampered().map(|f| f.len), Some(32));
    }
}

/// The abort matrix of one variant: a module of tests named after it.
macro_rules! abort_matrix {
    ($name:ident, $target:expr) => {
        mod $name {
            use super::*;

            #[test]
            fn honest_run_gives_the_fips197_ciphertext() {
                super::honest_run_gives_the_fips197_ciphertext($target);
            }
            #[test]
            fn tampered_multiplication_share_aborts() {
                super::tampered_multiplication_share_aborts($target);
            }
            #[test]
            fn tampered_opening_aborts() {
                super::tampered_opening_aborts($target);
            }
            #[test]
            fn tampered_verify_reshare_aborts() {
                super::tampered_verify_reshare_aborts($target);
            }
            #[test]
            fn tampered_compare_view_digest_aborts() {
                super::tampered_compare_view_digest_aborts($target);
            }
        }
    };
}

/// Layers large enough that the variants that reserve their records' memory do so
/// (`RecordMemory::MIN_LAYER`, 4,096 inversions: 256 blocks), through the real network
/// stack: the records packed into the reserve pass the check and the outputs are
/// RustCrypto's.
#[test]
fn layers_with_reserved_record_memory_match_rustcrypto() {
    for target in [
        Target::MalGf4Circuit,
        Target::MalGf4CircuitOpt,
        Target::MalLut16Ohv,
    ] {
        check_random_blocks(target, 940, Links::Tls, 260);
    }
}

/// The arithmetic of the soundness bounds stated in `triskele_engine::verify` ("Soundness",
/// "Segments") and the README, redone from each variant's triple count for a batch of `10^6`
/// blocks: one run over all records at most `(2ℓ + 88)/2^64` (runs that fold by 32 and end
/// with steps of eight, the largest constant; mal-chida-rec-check's layers filled up by at most
/// a sixteenth); in segments at most `⌈L/2^20⌉ + 257` runs whose
/// bounds add up to at most `R (2 log2(L/R) + 90) / 2^64`.
#[test]
fn soundness_bounds_of_a_million_aes256_blocks() {
    let blocks = 1_000_000usize;
    // log2 of the bound's numerator: (once, in segments).
    let numerators = |size: KeySize, target: Target, t: usize| {
        let sboxes = blocks * size.sboxes_per_block() + size.key_schedule_sboxes();
        // Up to 15 padding lanes per one-hot word of every layer (mal-lut16): fewer than
        // 16 per layer, one layer per round and per key-schedule word.
        let layers = size.rounds() + size.key_schedule_sboxes() / 4;
        let mut l = t * (sboxes + 16 * layers);
        if target == Target::MalChidaRecCheck {
            // Its chain's layers filled up to whole blocks of the check's layout where that
            // adds at most a sixteenth (`StoredRelations::aligned`).
            l += l / 16;
        }
        let once = (2 * u64::from(levels(l)) + 88) as f64;
        // Per segment at most one window more than its triples fill, per kind of its runs.
        let r = l.div_ceil(1 << 20) as f64 + 3.0 * 257.0;
        let segmented = r * (2.0 * (l as f64 / r).log2() + 90.0);
        (l, once.log2(), segmented.log2())
    };
    let mut largest = 0;
    for target in common::verify_based() {
        let t = triples_per_sbox(target);
        let (l, once, segmented) = numerators(KeySize::Aes256, target, t);
        largest = largest.max(l);
        assert!(l < 1 << 33, "{target}: L = {l}");
        assert!(
            once < 8.0,
            "{target}: once 2^{once} / 2^64, stated below 2^-56"
        );
        assert!(
            segmented < 21.0,
            "{target}: segments 2^{segmented} / 2^64, stated below 2^-43"
        );
        let (l, _, segmented) = numerators(KeySize::Aes128, target, t);
        assert!(l < 1 << 32, "{target}: L = {l}");
        assert!(
            segmented < 20.0,
            "{target}: AES-128 2^{segmented} / 2^64, stated below 2^-44"
        );
    }
    // mal-lut256-ss (24 triples per S-box) is the one above 2^32 triples, for which the bound
    // is stated for 2^13 + 3 · 257 runs.
    assert!(largest > 1 << 32);
    // The generic figure of the derivation: R = 2^13 + 3 · 257 runs of L = 2^33 triples.
    let r = 8963.0_f64;
    assert!(r * (2.0 * (2f64.powi(33) / r).log2() + 90.0) < 2f64.powi(21));
}

abort_matrix!(mal_chida_rec_check, Target::MalChidaRecCheck);
abort_matrix!(mal_gf4_circuit, Target::MalGf4Circuit);
abort_matrix!(mal_gf4_circuit_opt, Target::MalGf4CircuitOpt);
abort_matrix!(mal_lut16_bitstring, Target::MalLut16Bitstring);
abort_matrix!(mal_lut16_ohv, Target::MalLut16Ohv);
abort_matrix!(mal_lut256_ss, Target::MalLut256Ss);
abort_matrix!(mal_lut256_ss_opt, Target::MalLut256SsOpt);

/// mal-chida-rec-check with layers of more than `stored::BLOCK` instances (3,900 blocks: 62,400
/// inversions per layer, laid out in the check as two blocks of 32,768, the second filled up
/// with zero triples), whose relations 2 and 3 share `x^12` and relations 1 and 3 share `x^2`,
/// which the check's first level then loads, extrapolates and folds once: through the real
/// network stack the outputs are RustCrypto's (AES-128 and AES-256, both directions, the key
/// schedule's short layers recorded before them), and a share flipped in round 2 of a cipher
/// layer makes every honest party abort.
#[test]
fn aligned_chain_records_match_rustcrypto_and_catch_a_flipped_share() {
    check_random_blocks(Target::MalChidaRecCheck, 941, Links::Tls, 3_900);
    for cheater in PartyId::ALL {
        // Ten key-schedule layers of three messages each, then cipher layer 5's round 2.
        let t = Tamper::new(cheater, Phase::Online, Some(Direction::Prev), 46, 5);
        let res = common::run_batch(Target::MalChidaRecCheck, 3_900, Some(t));
        common::assert_honest_parties_abort(&res, cheater, "round 2 of cipher layer 5");
    }
}

/// mal-lut256-ss with more than `2 · SHARED_BIT_ALIGN` inversions (820 blocks: 262,400 one-hot
/// vectors of Protocol 8 for AES-128, 367,360 for AES-256, with the key schedule's), whose
/// eleven bit products the check then takes in groups of whole sub-blocks with shared factors,
/// each mapped and folded once (`BitProducts`, `verify::wide`): through the real network
/// stack the outputs are RustCrypto's (both key sizes and directions), and a share flipped in
/// either round of Protocol 8 makes every honest party abort.
#[test]
fn shared_bit_factors_match_rustcrypto_and_catch_a_flipped_share() {
    check_random_blocks(Target::MalLut256Ss, 943, Links::Tls, 820);
    for cheater in PartyId::ALL {
        for round in 0..2 {
            let t = Tamper::new(
                cheater,
                Phase::Preprocessing,
                Some(Direction::Prev),
                round,
                5,
            );
            let res = common::run_batch(Target::MalLut256Ss, 820, Some(t));
            common::assert_honest_parties_abort(&res, cheater, "a round of Protocol 8");
        }
    }
}

/// The abort matrix runs one block, whose check halves from the start. From `2^16` products on, a
/// run of the check starts with the level that folds by 8 (by 32 for bit products only and for byte
/// products only): its reshare is the first finalize message to the previous party, its coin the
/// second to the next one (after the seed's opening, the first); the reshare of the first halving
/// after it, whose sums its fold forms, is the second to the previous party, or, if only twelve
/// levels are left, that of the first step of eight (112 bytes). Tampered end to end in batches
/// that take it: bytes only (mal-chida-rec-check, 128 blocks: 82,080 products; blocks of 32, 248
/// bytes reshared, then 2,565 entries, twelve levels: steps of eight only), words (mal-lut16-ohv,
/// 160 blocks), and the bit products of mal-lut256-ss's preprocessing with its VerifySbox bytes (32
/// blocks), each in one run of both kinds. And two runs of their own kind side by side
/// (mal-gf4-circuit-opt, 420 blocks: 67,240 relations of rounds 2 and 3 in bytes, as many gf4p4
/// relations): the first message to the previous party holds both first levels' reshares (the
/// bytes' run: blocks of 32, 248 bytes, then 2,102 entries, whose steps of eight wait for the other
/// run's; the gf4p4 relations' run: blocks of eight, 56 bytes, then 8,405 entries), the second the
/// reshare of the gf4p4 run's first halving (16 bytes); their seeds are opened together (32 bytes,
/// the first message to the next party), and so are their first levels' coins (16 bytes, the
/// second).
#[test]
fn tampered_first_level_of_a_large_check_aborts() {
    for (target, blocks, reshare_len, coin_len, next_len) in [
        (Target::MalChidaRecCheck, 128, 248, 8, 112),
        (Target::MalLut16Ohv, 160, 56, 8, 16),
        (Target::MalLut256Ss, 32, 56, 8, 16),
        (Target::MalGf4CircuitOpt, 420, 248 + 56, 2 * 8, 16),
    ] {
        // The seeds' opening: two coins per run.
        let seed_len = 2 * coin_len;
        let honest = common::run_batch(target, blocks, None);
        assert!(honest.iter().all(Result::is_ok), "{target}: {honest:?}");
        for cheater in PartyId::ALL {
            for (dir, k, len, what) in [
                (Direction::Next, 0, seed_len, "the seeds' opening"),
                (Direction::Prev, 0, reshare_len, "the first level's reshare"),
                (Direction::Next, 1, coin_len, "the first level's coin"),
                // Its fold forms the sums of the first halving after it (or of the next run).
                (Direction::Prev, 1, next_len, "the next level's reshare"),
            ] {
                let t = Tamper::new(cheater, Phase::Finalize, Some(dir), k, 7 * k + 3);
                let res = common::run_batch(target, blocks, Some(t.clone()));
                let flipped = t.tampered().expect("a message was flipped");
                let what = format!("{target}, {blocks} blocks: {what}, flipped {flipped:?}");
                assert_eq!(flipped.len, len, "{what}");
                common::assert_honest_parties_abort(&res, cheater, &what);
            }
        }
    }
}

/// (a) for mal-gf4-circuit-opt, aimed at the messages of the products that are not recorded
/// themselves but covered by a relation: round 1 (`a_h a_l`, message `4j`) and round 4
/// (`b_h`, `b_l`, message `4j + 3`) of layer `j` by the gf4p4 relation, rounds 2 and 3 (`d^6`,
/// `d^-1`, messages `4j + 1`, `4j + 2`) by the norm relation (10 key-schedule layers, then 10
/// cipher layers). A flip on the wire also makes the sharing inconsistent, which the views
/// catch on their own; that the relations themselves catch a consistent additive error in
/// each covered product are the unit tests `gf4p4_relation_holds_exactly_for_correct_products`
/// and, for the norm relation, which is mal-gf4-circuit's relation of rounds 2 and 3,
/// `norm_pair_holds_exactly_for_correct_products`. The same for mal-gf4-circuit's round 4
/// (message `4j + 3`, both products in one relation:
/// `round4_relation_holds_exactly_for_correct_products`) and its rounds 2 and 3 (messages `4j
/// + 1`, `4j + 2`).
#[test]
fn mal_gf4_circuit_opt_covered_products_abort() {
    for cheater in PartyId::ALL {
        for k in [0, 1, 2, 3, 40, 41, 42, 43, 76, 77, 78, 79] {
            let t = Tamper::new(cheater, Phase::Online, Some(Direction::Prev), k, 11 * k + 5);
            assert_aborts(
                Target::MalGf4CircuitOpt,
                t,
                &format!("(a) covered product, online message {k}"),
            );
        }
        // Round 4's message holds `b_h` and `b_l`; the seed picks the flipped bit. Messages
        // 4j + 1 and 4j + 2 are rounds 2 and 3.
        for (k, seed) in [
            (3, 5),
            (43, 6),
            (79, 7),
            (79, 8),
            (1, 9),
            (2, 10),
            (41, 11),
            (78, 12),
        ] {
            let t = Tamper::new(cheater, Phase::Online, Some(Direction::Prev), k, seed);
            assert_aborts(
                Target::MalGf4Circuit,
                t,
                &format!("(a) rounds 2-4, online message {k}, seed {seed}"),
            );
        }
    }
}

/// The same online tamper on the semi-honest twins (chida, gf4-circuit) goes undetected: every
/// party returns an output (wrong or, by luck, correct), nobody aborts.
#[test]
fn semi_honest_twins_do_not_detect_the_tamper() {
    for target in [Target::Chida, Target::Gf4Circuit, Target::Lut256Ss] {
        let mut wrong = 0;
        for cheater in PartyId::ALL {
            for seed in 0..3 {
                let t = aes_tamper(target, KeySize::Aes128, cheater, seed);
                let log = t.clone();
                let res = run(target, Some(t));
                assert!(log.tampered().is_some());
                for r in &res {
                    let out = r.as_ref().expect("semi-honest: no check, no abort");
                    if hex::encode(out) != CT {
                        wrong += 1;
                    }
                }
            }
        }
        // A flipped bit of a share almost always changes the ciphertext.
        assert!(wrong > 0, "{target}");
    }
}

/// The extra tampers of the (3,3)-LUT-256 variants (one AES-128 block with the key schedule):
/// (c) a flipped bit in a preprocessing multiplication share (Protocol 8's round-1 and round-2
/// reshares, messages 0 and 1 to prev), and a flipped bit in an additive offset share
/// `c^(i)` of a cipher layer sent to **one** neighbour only (the other gets the correct one).
/// In the online phase both variants (semi-honest and malicious) send 10 key-schedule
/// messages per direction first; after them, messages 11 and 19 to next and 10 and 18 to prev
/// are cipher-layer offsets (16 bytes) in both. Returns `(tamper, what, flipped length)`.
fn lut256_ss_tampers(cheater: PartyId) -> Vec<(Tamper, String, usize)> {
    let mut out = Vec::new();
    for k in 0..2 {
        out.push((
            Tamper::new(
                cheater,
                Phase::Preprocessing,
                Some(Direction::Prev),
                k,
                7 * k + 1,
            ),
            format!("(c) preprocessing product share, round {}", k + 1),
            // 2 · 200 instances, 16 per word, 2 bytes per word; 6 resp. 5 products per round.
            2 * 25 * if k == 0 { 6 } else { 5 },
        ));
    }
    for (dir, k) in [
        (Direction::Next, 11),
        (Direction::Next, 19),
        (Direction::Prev, 10),
        (Direction::Prev, 18),
    ] {
        out.push((
            Tamper::new(cheater, Phase::Online, Some(dir), k, k + 3),
            format!("(c) offset share to {dir:?} only, online message {k}"),
            16,
        ));
    }
    out
}

#[test]
fn mal_lut256_ss_tampered_preprocessing_or_one_sided_offset_aborts() {
    for target in [Target::MalLut256Ss, Target::MalLut256SsOpt] {
        for cheater in PartyId::ALL {
            for (t, what, len) in lut256_ss_tampers(cheater) {
                assert_aborts(target, t.clone(), &what);
                assert_eq!(t.tampered().map(|f| f.len), Some(len), "{target} {what}");
            }
        }
    }
}

/// The same tampers on the semi-honest `lut256-ss` go undetected: every party returns an
/// output, nobody aborts, and the output is wrong for at least one of them.
#[test]
fn lut256_ss_semi_honest_does_not_detect_the_same_tampers() {
    let mut wrong = 0;
    for cheater in PartyId::ALL {
        for (t, what, len) in lut256_ss_tampers(cheater) {
            let log = t.clone();
            let res = run(Target::Lut256Ss, Some(t));
            assert_eq!(log.tampered().map(|f| f.len), Some(len), "{what}");
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

/// The extra tampers of mal-lut16 (one AES-128 block with the key schedule: 200 inversions,
/// 13 bit-sliced words of one-hot vectors), with the length of the flipped message:
/// (c) a flipped bit in each preprocessing multiplication share (the reshares to prev: Protocol
/// 8's 6 and 5 products resp. Protocol 5's 1, 3 and 7 products per word), and a flipped bit in
/// an offset share `c^(i)` sent to **one** neighbour only (the other gets the right one). Per
/// layer a party sends `c^(i)` to next, then `c^(i)` and the reshare to prev; the 10
/// key-schedule layers (4 inversions, 2-byte offsets) come first, then the 10 cipher layers
/// (16 inversions, 8-byte offsets).
fn lut16_tampers(target: Target, cheater: PartyId) -> Vec<(Tamper, String, usize)> {
    let products: &[usize] = match target {
        Target::MalLut16Bitstring => &[1, 3, 7],
        _ => &[6, 5],
    };
    let mut out = Vec::new();
    for (k, p) in products.iter().enumerate() {
        let k = k as u64;
        out.push((
            Tamper::new(
                cheater,
                Phase::Preprocessing,
                Some(Direction::Prev),
                k,
                5 * k + 2,
            ),
            format!("(c) preprocessing product share, round {}", k + 1),
            2 * 13 * p,
        ));
    }
    for (dir, k, len) in [
        (Direction::Next, 3, 2),
        (Direction::Next, 12, 8),
        (Direction::Prev, 0, 2),
        (Direction::Prev, 24, 8),
    ] {
        out.push((
            Tamper::new(cheater, Phase::Online, Some(dir), k, k + 1),
            format!("(c) offset share to {dir:?} only, online message {k}"),
            len,
        ));
    }
    out
}

#[test]
fn mal_lut16_tampered_preprocessing_or_one_sided_offset_aborts() {
    for target in [Target::MalLut16Ohv, Target::MalLut16Bitstring] {
        for cheater in PartyId::ALL {
            for (t, what, len) in lut16_tampers(target, cheater) {
                assert_aborts(target, t.clone(), &what);
                assert_eq!(t.tampered().map(|f| f.len), Some(len), "{target} {what}");
            }
        }
    }
}

/// The same tampers on the semi-honest `lut16` go undetected: every party returns an output,
/// nobody aborts, and the output is wrong for at least one of them.
#[test]
fn lut16_semi_honest_does_not_detect_the_same_tampers() {
    let mut wrong = 0;
    for cheater in PartyId::ALL {
        for (t, what, len) in lut16_tampers(Target::Lut16, cheater) {
            let log = t.clone();
            let res = run(Target::Lut16, Some(t));
            assert_eq!(log.tampered().map(|f| f.len), Some(len), "{what}");
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

/// Flips only `VerifySbox` can see (reshares are not hashed into the views): the reshare of a
/// key-schedule layer (online message 0 to prev, 4 bytes) and the reshare after the last
/// cipher layer (message 19 to prev, 16 bytes).
#[test]
fn mal_lut256_ss_tampered_output_reshare_aborts() {
    for target in [Target::MalLut256Ss, Target::MalLut256SsOpt] {
        for cheater in PartyId::ALL {
            for (k, len) in [(0u64, 4usize), (19, 16)] {
                let t = Tamper::new(cheater, Phase::Online, Some(Direction::Prev), k, k + 1);
                assert_aborts(target, t.clone(), &format!("reshare, online message {k}"));
                assert_eq!(t.tampered().map(|f| f.len), Some(len), "{target} {k}");
            }
        }
    }
}

/// An additive error that the corrupt party puts on its own share of a chained layer output
/// (no message is altered, all views stay consistent): the next layer consumes the wrong
/// value, and `VerifySbox` on the recovered pair catches it. Without the error, two chained
/// layers give `S(S(x))`.
#[test]
fn mal_lut256_ss_additive_error_on_a_chained_layer_output_aborts() {
    use triskele_aes::layer::sub_bytes_linked;
    use triskele_aes::sbox::mal_lut256_ss::MalLut256Ss;
    use triskele_aes::sbox::{LayerInput, LayerLink, LayerOutput, SboxProtocol};
    use triskele_engine::{AbortReason, Malicious, Party};
    use triskele_field::LinearMap8;
    use triskele_share::RssVec;
    let two_layers = |net: triskele_net::Network,
                      opt: bool,
                      cheater: Option<PartyId>|
     -> Result<(Vec<Gf2p8>, Vec<Gf2p8>), EngineError> {
        let me = net.party();
        let mut party = Party::<Malicious>::setup(net)?;
        let mut sbox = if opt {
            MalLut256Ss::opt()
        } else {
            MalLut256Ss::plain()
        };
        party.set_phase(Phase::Preprocessing);
        sbox.preprocess(&mut party, 32)?;
        party.set_phase(Phase::Setup);
        let mut x = party.random_rss::<Gf2p8>(16);
        let input = party.open(&x)?;
        party.set_phase(Phase::Online);
        let first = LayerLink {
            input: LayerInput::Fresh,
            output: LayerOutput::Chained,
        };
        sub_bytes_linked(&mut party, &mut sbox, &mut x, first)?;
        if cheater == Some(me) {
            x.first[3].0 ^= 0x10;
        }
        // Between the layers only the affine map of SubBytes: undo it.
        let undo = move |v: &mut RssVec<Gf2p8>| {
            v.add_constant_scalar(me, Gf2p8(0x63));
            v.map_components(|c| LinearMap8::AES_A_INV.apply_in_place(c));
        };
        let second = LayerLink {
            input: LayerInput::Chained(&undo),
            output: LayerOutput::Replicated,
        };
        sub_bytes_linked(&mut party, &mut sbox, &mut x, second)?;
        party.set_phase(Phase::Finalize);
        sbox.finalize(&mut party)?;
        party.set_phase(Phase::Output);
        let out = party.open_output(&x)?;
        party.shutdown()?;
        Ok((input, out))
    };
    for opt in [false, true] {
        let honest = three(triskele_net::in_memory(&NetOptions::default()), |net| {
            two_layers(net, opt, None)
        });
        for r in honest {
            let (input, out) = r.expect("honest run");
            let want: Vec<Gf2p8> = input
                .iter()
                .map(|v| Gf2p8::SBOX[Gf2p8::SBOX[v.0 as usize] as usize])
                .map(Gf2p8)
                .collect();
            assert_eq!(out, want);
        }
        for cheater in PartyId::ALL {
            let res = three(triskele_net::in_memory(&NetOptions::default()), |net| {
                two_layers(net, opt, Some(cheater))
            });
            for p in PartyId::ALL.into_iter().filter(|p| *p != cheater) {
                let r = &res[p.index()];
                // Caught by the check itself: the views agree.
                assert!(
                    matches!(r, Err(EngineError::Abort(AbortReason::MultiplicationCheck))),
                    "opt {opt}: cheater {cheater}: honest {p} returned {r:?}"
                );
            }
        }
    }
}
