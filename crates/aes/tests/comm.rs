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
    /// Preprocessing rounds (all resharing towards prev).
    prep_rounds: u64,
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
            prep_rounds: 0,
        },
        // 5 GF(2^4) products (2.5 bytes) and 4 rounds per S-box layer, all to prev; the
        // malicious variants send exactly the same online messages.
        Target::Gf4Circuit | Target::MalGf4Circuit | Target::MalGf4CircuitOpt => Expected {
            prep_next: 0,
            prep_prev: 0,
            online_next: 0,
            online_prev: 16 * layers * 5 / 2,
            online_messages_next: 4 * layers,
            online_messages_prev: 4 * layers,
            prep_rounds: 0,
        },
        // Protocol 8: 11 bit products per S-box, 16 per 2-byte word, to prev. Online: 0.5 byte
        // to each neighbour (round 1, 2 messages per channel) and 1 byte to prev (round 2, 1
        // message per channel). mal-lut16-ohv / -bitstring: the same messages; the bitstring
        // preprocessing (Protocol 5, k = 4: 1 + 3 + 7 products) takes 3 rounds.
        Target::Lut16 | Target::MalLut16Ohv | Target::MalLut16Bitstring => Expected {
            prep_next: 0,
            prep_prev: 16 * layers * 11 / 8,
            online_next: 16 * layers / 2,
            online_prev: 16 * layers * 3 / 2,
            online_messages_next: 3 * layers,
            online_messages_prev: 3 * layers,
            prep_rounds: if target == Target::MalLut16Bitstring {
                3
            } else {
                2
            },
        },
        // Protocol 5: 247 bit products per S-box in 7 rounds, to prev. Online: the opening of
        // x + r, 1 byte to next, one round.
        Target::Lut256 => Expected {
            prep_next: 0,
            prep_prev: 16 * layers * 247 / 8,
            online_next: 16 * layers,
            online_prev: 0,
            online_messages_next: layers,
            online_messages_prev: layers,
            prep_rounds: 7,
        },
        // Two Protocol-8 vectors per S-box batched in 2 rounds (22 bit products), to prev.
        // Online: 1 byte to each neighbour, one round (2 messages per channel).
        // mal-lut256-ss(-opt): the same bytes and messages per channel in one round more (layer
        // 1 opens to next only; the reshare after the last layer goes to prev).
        Target::Lut256Ss | Target::MalLut256Ss | Target::MalLut256SsOpt => Expected {
            prep_next: 0,
            prep_prev: 16 * layers * 22 / 8,
            online_next: 16 * layers,
            online_prev: 16 * layers,
            online_messages_next: 2 * layers,
            online_messages_prev: 2 * layers,
            prep_rounds: 2,
        },
        // The malicious chain: 4 plain products per S-box, 3 rounds per layer, all to prev.
        // mal-chida: the same online phase; its preprocessing and finalize are not linear in
        // the batch size and are checked in tests/mal_chida.rs.
        Target::MalChidaRecCheck | Target::MalChida => Expected {
            prep_next: 0,
            prep_prev: 0,
            online_next: 0,
            online_prev: 4 * 16 * layers,
            online_messages_next: 3 * layers,
            online_messages_prev: 3 * layers,
            prep_rounds: 0,
        },
        // 34 AND gates per S-box in 4 AND layers, one bit each, packed 16 to a 2-byte word
        // (⌈16 s / 16⌉ = s words per gate and layer), all to prev.
        Target::BoolCircuit => Expected {
            prep_next: 0,
            prep_prev: 0,
            online_next: 0,
            online_prev: 34 * 2 * layers,
            online_messages_next: 4 * layers,
            online_messages_prev: 4 * layers,
            prep_rounds: 0,
        },
    }
}

/// Finalize bytes `(to next, to prev)` and messages per channel for one run of `simd` blocks:
/// Protocol 2 over `L` recorded triples with `ℓ = ⌈log2 L⌉` plus the compare-view
/// (`triskele_engine::verify` docs): to next `16 + 8ℓ + 24 + 32` (16-byte seed instead of
/// §6.4's one 8-byte coin), to prev `16ℓ + 16 + 32` (§6.4's `16ℓ + 16` plus the digest sent
/// back in the two-way compare-view), `2ℓ + 8` messages on each channel. Logarithmic in `L`.
/// A run of at least `OCTAL_MIN_LEN` triples that all have a byte or word form (every
/// variant here: bytes, bit-sliced bits, packed relations, gf4p4 relations as words) starts
/// with the k-ary first level instead: with blocks of `k` (32 for runs of bytes only or of bits
/// only, 8 for the others) and `ℓ' = ⌈log2 ⌈L/k⌉⌉` levels after it, of which the last (up to)
/// twelve go in steps of eight (`verify` module `tail`): `h = ℓ' - min(ℓ', 12)` halvings and
/// `q` steps (`⌈min(ℓ', 12)/3⌉`, the last of `2^r` if `3` does not divide the rest), to next
/// `16 + 8 + 8 (h + q) + 24 + 32`, to prev `8 (k - 1) + 16h + Σ 8 (2k_i - 2) + 16 + 32`,
/// `2 (h + q) + 10` messages.
///
/// A variant whose records are of several kinds (bits, bytes, others) checks each kind in a
/// run of its own once every kind has at least `OCTAL_MIN_LEN` triples (`verify_runs`): the
/// runs' bytes add up but for the one compare-view, and their last steps and `CheckTriple`s go
/// side by side ([`runs_cost`]).
fn finalize_expected(target: Target, size: KeySize, simd: usize) -> (u64, u64, u64) {
    // Triples per S-box of each kind, with the arity of the k-ary first level of a run of that
    // kind alone: 32 for bytes only or bits only, 8 for the others (pairs, words).
    let kinds: &[(usize, usize)] = match target {
        Target::MalChidaRecCheck => &[(4, 32)],
        // Rounds 2 and 3 (common factor d^2) as one relation, round 4's two products (common
        // factor d^-1) as one ([DEV] PROTOCOLS.md §6.4 counts 5).
        Target::MalGf4Circuit => &[(3, 32)],
        // The relation of rounds 2 and 3 in bytes (as in mal-gf4-circuit) and the gf4p4
        // relation of rounds 1 and 4 (in GF(2^16), the pair form) per S-box ([DEV]
        // PROTOCOLS.md §6.4 counts 3: the norm products as two triples).
        Target::MalGf4CircuitOpt => &[(1, 32), (1, 8)],
        // 2 packed ohv relations resp. 2 bit × bit-string relations (steps 2 and 3, step 1
        // inside step 2's; [DEV] PROTOCOLS.md §6.4 counts 3) per one-hot vector, as bytes, and
        // one gf4p4 relation per S-box; exact here because a benchmark layer is a multiple of
        // 16 S-boxes (no padding lanes; see mal_lut16_verifies_exactly_the_recorded_relations).
        Target::MalLut16Ohv | Target::MalLut16Bitstring => &[(2, 32), (1, 8)],
        // 22 bit triples (or 4 packed relations) of the preprocessing + 2 VerifySbox triples:
        // bits and bytes, resp. bytes only.
        Target::MalLut256Ss => &[(22, 32), (2, 32)],
        Target::MalLut256SsOpt => &[(6, 32)],
        _ => return (0, 0, 0),
    };
    let sboxes = size.sboxes_per_block() * simd;
    let runs: Vec<(usize, usize)> = kinds.iter().map(|(t, k)| (t * sboxes, *k)).collect();
    let split = runs
        .iter()
        .all(|(l, _)| *l >= triskele_engine::verify::OCTAL_MIN_LEN);
    if runs.len() > 1 && !split {
        // One run of all kinds: blocks of eight.
        return verify_cost(runs.iter().map(|(l, _)| l).sum(), 8);
    }
    runs_cost(&runs)
}

/// [`finalize_expected`] for `Verify` over exactly `l` triples that all have a byte or word
/// form, whose k-ary first level has blocks of `k`.
fn verify_cost(l: usize, k: usize) -> (u64, u64, u64) {
    runs_cost(&[(l, k)])
}

/// [`finalize_expected`] for runs of `Verify` side by side, run `r` over `l_r` triples with
/// blocks of `k_r` (if it has at least `OCTAL_MIN_LEN`): the runs' seeds in one opening (one
/// round), their first levels and halvings side by side (two rounds each, as many as the run
/// with the most), then their steps of eight side by side (two rounds each, as many as the run
/// with the most), their `CheckTriple`s (five rounds) and the compare-view (two rounds). Per
/// run, to next its seed (16), coins (8 per level) and `CheckTriple` (24); to prev its
/// reshared values and `CheckTriple` (16); the compare-view's 32 bytes each way once.
fn runs_cost(runs: &[(usize, usize)]) -> (u64, u64, u64) {
    use triskele_engine::verify::{later_levels, levels, OCTAL_MIN_LEN};
    let (mut next, mut prev, mut levels_side, mut steps_side) = (32u64, 32u64, 0u64, 0u64);
    for &(l, k) in runs {
        if l >= OCTAL_MIN_LEN {
            let after = levels(l.div_ceil(k));
            let (steps, later) = later_levels(after);
            let halvings = u64::from(after.saturating_sub(12));
            next += 16 + 8 + 8 * steps + 24;
            prev += 8 * (k as u64 - 1) + later + 16;
            levels_side = levels_side.max(2 + 2 * halvings);
            steps_side = steps_side.max(2 * (steps - halvings));
        } else {
            let l = u64::from(levels(l));
            next += 16 + 8 * l + 24;
            prev += 16 * l + 16;
            levels_side = levels_side.max(2 * l);
        }
    }
    (next, prev, 1 + levels_side + steps_side + 5 + 2)
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
        if simd == 1 {
            // Preprocessing: every round sends one message to prev and receives one from next.
            let msgs = e.prep_rounds;
            assert_eq!(p.next.messages, msgs, "{target} prep messages next");
            assert_eq!(p.prev.messages, msgs, "{target} prep messages prev");
        }
        let expect = finalize_expected(target, size, simd);
        assert_finalize(&r.finalize.stats, expect, &format!("{target} finalize"));
    }
}

/// The finalize phase's bytes to next and prev and its messages (the same to each neighbour)
/// are `expect`.
fn assert_finalize(f: &triskele_net::PhaseStats, expect: (u64, u64, u64), what: &str) {
    let (next, prev, msgs) = expect;
    assert_eq!(f.next.bytes_sent, next, "{what}: to next");
    assert_eq!(f.prev.bytes_sent, prev, "{what}: to prev");
    assert_eq!(f.next.messages, msgs, "{what}: messages next");
    assert_eq!(f.prev.messages, msgs, "{what}: messages prev");
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

#[test]
fn gf4_circuit_aes128_is_400_bytes_per_block_and_40_messages() {
    check(Target::Gf4Circuit, KeySize::Aes128, 1);
    check(Target::Gf4Circuit, KeySize::Aes128, 1000);
    let e = expected(Target::Gf4Circuit, KeySize::Aes128);
    assert_eq!(e.online_prev, 400);
    assert_eq!(e.online_messages_next, 40);
}

#[test]
fn gf4_circuit_aes256_is_560_bytes_per_block() {
    check(Target::Gf4Circuit, KeySize::Aes256, 1);
    check(Target::Gf4Circuit, KeySize::Aes256, 300);
    assert_eq!(
        expected(Target::Gf4Circuit, KeySize::Aes256).online_prev,
        560
    );
}

#[test]
fn lut16_aes128_is_220_prep_and_80_240_online_bytes_per_block_and_30_messages() {
    check(Target::Lut16, KeySize::Aes128, 1);
    check(Target::Lut16, KeySize::Aes128, 1000);
    let e = expected(Target::Lut16, KeySize::Aes128);
    assert_eq!((e.prep_prev, e.online_next, e.online_prev), (220, 80, 240));
    assert_eq!(e.online_messages_next, 30);
}

#[test]
fn lut16_aes256_is_308_prep_and_112_336_online_bytes_per_block() {
    check(Target::Lut16, KeySize::Aes256, 1);
    check(Target::Lut16, KeySize::Aes256, 300);
    let e = expected(Target::Lut16, KeySize::Aes256);
    assert_eq!((e.prep_prev, e.online_next, e.online_prev), (308, 112, 336));
}

#[test]
fn lut256_aes128_is_4940_prep_and_160_online_bytes_per_block_and_10_messages() {
    check(Target::Lut256, KeySize::Aes128, 1);
    check(Target::Lut256, KeySize::Aes128, 200);
    let e = expected(Target::Lut256, KeySize::Aes128);
    assert_eq!((e.prep_prev, e.online_next, e.online_prev), (4940, 160, 0));
    assert_eq!(e.online_messages_next, 10);
}

#[test]
fn lut256_aes256_is_6916_prep_and_224_online_bytes_per_block() {
    check(Target::Lut256, KeySize::Aes256, 1);
    check(Target::Lut256, KeySize::Aes256, 100);
    let e = expected(Target::Lut256, KeySize::Aes256);
    assert_eq!((e.prep_prev, e.online_next), (6916, 224));
}

#[test]
fn lut256_ss_aes128_is_440_prep_and_160_160_online_bytes_per_block_and_20_messages() {
    check(Target::Lut256Ss, KeySize::Aes128, 1);
    check(Target::Lut256Ss, KeySize::Aes128, 1000);
    let e = expected(Target::Lut256Ss, KeySize::Aes128);
    assert_eq!((e.prep_prev, e.online_next, e.online_prev), (440, 160, 160));
    assert_eq!(e.online_messages_next, 20);
}

#[test]
fn lut256_ss_aes256_is_616_prep_and_224_224_online_bytes_per_block() {
    check(Target::Lut256Ss, KeySize::Aes256, 1);
    check(Target::Lut256Ss, KeySize::Aes256, 300);
    let e = expected(Target::Lut256Ss, KeySize::Aes256);
    assert_eq!((e.prep_prev, e.online_next, e.online_prev), (616, 224, 224));
}

#[test]
fn mal_chida_rec_check_is_640_bytes_per_block_to_prev_and_logarithmic_finalize() {
    check(Target::MalChidaRecCheck, KeySize::Aes128, 1);
    check(Target::MalChidaRecCheck, KeySize::Aes128, 1000);
    check(Target::MalChidaRecCheck, KeySize::Aes256, 7);
    let e = expected(Target::MalChidaRecCheck, KeySize::Aes128);
    assert_eq!(e.online_prev, 640);
    assert_eq!(e.online_messages_prev, 30);
    // S = 1: L = 640, ℓ = 10; S = 1000: L = 640 000, the k-ary first level with blocks of 32
    // and ℓ' = 15 levels after it: three halvings and four steps of eight (with halvings
    // only: (200, 536, 40)).
    assert_eq!(
        finalize_expected(Target::MalChidaRecCheck, KeySize::Aes128, 1),
        (152, 208, 28)
    );
    assert_eq!(
        finalize_expected(Target::MalChidaRecCheck, KeySize::Aes128, 1000),
        (136, 792, 24)
    );
}

#[test]
fn mal_gf4_circuit_is_400_bytes_per_block_to_prev_and_logarithmic_finalize() {
    for t in [Target::MalGf4Circuit, Target::MalGf4CircuitOpt] {
        check(t, KeySize::Aes128, 1);
        check(t, KeySize::Aes128, 1000);
        check(t, KeySize::Aes256, 7);
        let e = expected(t, KeySize::Aes128);
        assert_eq!((e.online_next, e.online_prev), (0, 400));
        assert_eq!(e.online_messages_prev, 40);
    }
    // mal-gf4-circuit: S = 1: L = 480, ℓ = 9; S = 1000: L = 480 000, the k-ary first level
    // with blocks of 32 and ℓ' = 14 (two halvings, four steps of eight); PROTOCOLS.md's L =
    // 800 per block would take ℓ = 10 and ℓ' = 15.
    assert_eq!(
        finalize_expected(Target::MalGf4Circuit, KeySize::Aes128, 1),
        (144, 192, 26)
    );
    assert_eq!(
        finalize_expected(Target::MalGf4Circuit, KeySize::Aes128, 1000),
        (128, 776, 22)
    );
    // mal-gf4-circuit-gf4p4: S = 1: L = 320 in one run, ℓ = 9 (the same bytes as
    // PROTOCOLS.md's L = 480 per block); S = 1000: L = 320 000 in two runs, the 160 000
    // relations of rounds 2 and 3 in bytes (blocks of 32, ℓ' = 13: one halving, four steps of
    // eight) and the 160 000 gf4p4 relations in the pair form (blocks of eight, ℓ' = 15: three
    // halvings, four steps), side by side: the rounds of the pair run. In one run of blocks of
    // eight (before runs by kind): (144, 616, 26); the two runs one after the other (before
    // they went side by side): 29 rounds.
    assert_eq!(
        finalize_expected(Target::MalGf4CircuitOpt, KeySize::Aes128, 1),
        (144, 192, 26)
    );
    assert_eq!(
        finalize_expected(Target::MalGf4CircuitOpt, KeySize::Aes128, 1000),
        (224, 1328, 24)
    );
}

#[test]
fn mal_lut256_ss_is_440_prep_and_160_160_online_bytes_per_block_and_logarithmic_finalize() {
    for t in [Target::MalLut256Ss, Target::MalLut256SsOpt] {
        check(t, KeySize::Aes128, 1);
        check(t, KeySize::Aes128, 1000);
        check(t, KeySize::Aes256, 7);
        let e = expected(t, KeySize::Aes128);
        assert_eq!((e.prep_prev, e.online_next, e.online_prev), (440, 160, 160));
        assert_eq!(e.online_messages_next, 20);
        let e = expected(t, KeySize::Aes256);
        assert_eq!((e.prep_prev, e.online_next, e.online_prev), (616, 224, 224));
    }
    // mal-lut256-ss: S = 1: L = 3840 in one run, ℓ = 12; S = 1000: L = 3 840 000 in two
    // runs, the 3 520 000 bit triples (blocks of 32, ℓ' = 17: five halvings, four steps of
    // eight) and the 320 000 VerifySbox triples in bytes (blocks of 32, ℓ' = 14: two halvings,
    // four steps), side by side. In one run of blocks of eight: (168, 664, 32); the two runs
    // one after the other: 35 rounds.
    assert_eq!(
        finalize_expected(Target::MalLut256Ss, KeySize::Aes128, 1),
        (168, 240, 32)
    );
    assert_eq!(
        finalize_expected(Target::MalLut256Ss, KeySize::Aes128, 1000),
        (248, 1568, 28)
    );
    // mal-lut256-ss-opt: S = 1: L = 960, ℓ = 10; S = 1000: L = 960 000, the k-ary first level
    // with blocks of 32 and ℓ' = 15 (three halvings, four steps of eight).
    assert_eq!(
        finalize_expected(Target::MalLut256SsOpt, KeySize::Aes128, 1),
        (152, 208, 28)
    );
    assert_eq!(
        finalize_expected(Target::MalLut256SsOpt, KeySize::Aes128, 1000),
        (136, 792, 24)
    );
}

#[test]
fn mal_lut16_is_220_prep_and_80_240_online_bytes_per_block_and_logarithmic_finalize() {
    for t in [Target::MalLut16Ohv, Target::MalLut16Bitstring] {
        check(t, KeySize::Aes128, 1);
        check(t, KeySize::Aes128, 1000);
        check(t, KeySize::Aes256, 7);
        let e = expected(t, KeySize::Aes128);
        assert_eq!((e.prep_prev, e.online_next, e.online_prev), (220, 80, 240));
        assert_eq!(e.online_messages_next, 30);
        let e = expected(t, KeySize::Aes256);
        assert_eq!((e.prep_prev, e.online_next, e.online_prev), (308, 112, 336));
    }
    assert_eq!(
        expected(Target::MalLut16Ohv, KeySize::Aes128).prep_rounds,
        2
    );
    assert_eq!(
        expected(Target::MalLut16Bitstring, KeySize::Aes128).prep_rounds,
        3
    );
    // mal-lut16-ohv: S = 1: L = 480 in one run, ℓ = 9; S = 1000: L = 480 000 in two runs,
    // the 320 000 packed ohv relations in bytes (blocks of 32, ℓ' = 14: two halvings, four
    // steps of eight) and the 160 000 gf4p4 relations in the pair form (blocks of eight, ℓ' =
    // 15: three halvings, four steps), side by side. In one run of blocks of eight: (144,
    // 616, 26); the two runs one after the other: 31 rounds.
    assert_eq!(
        finalize_expected(Target::MalLut16Ohv, KeySize::Aes128, 1),
        (144, 192, 26)
    );
    assert_eq!(
        finalize_expected(Target::MalLut16Ohv, KeySize::Aes128, 1000),
        (232, 1344, 24)
    );
    // mal-lut16-bitstring: the same L (PROTOCOLS.md §6.4 has L = 640 per block, with step 1
    // of Protocol 5 as a triple of its own).
    for simd in [1, 1000] {
        assert_eq!(
            finalize_expected(Target::MalLut16Bitstring, KeySize::Aes128, simd),
            finalize_expected(Target::MalLut16Ohv, KeySize::Aes128, simd)
        );
    }
}

/// Runs `n` inversions of a fresh `make()` under the malicious model (its preprocessing, the
/// layer, the finalize check) and checks the outputs, that `l` triples were recorded, and the
/// finalize bytes and messages of a check over `l` triples with blocks of `k`.
fn verifies_exactly<S: triskele_aes::sbox::SboxProtocol<triskele_engine::Malicious>>(
    make: impl Fn() -> S + Sync,
    n: usize,
    l: usize,
    k: usize,
    what: &str,
) {
    use triskele_engine::{Malicious, Party, Phase};
    use triskele_field::{Field, Gf2p8};
    let nets = triskele_net::in_memory(&NetOptions::default());
    let runs = three(nets, |net| {
        let mut party = Party::<Malicious>::setup(net).expect("setup");
        let mut sbox = make();
        party.set_phase(Phase::Preprocessing);
        sbox.preprocess(&mut party, n).expect("preprocess");
        party.set_phase(Phase::Output);
        let mut x = party.random_rss::<Gf2p8>(n);
        let input = party.open(&x).expect("open input");
        party.set_phase(Phase::Online);
        sbox.invert(&mut party, &mut x).expect("invert");
        let recorded = party.model().recorder().gf2p64_triples();
        party.set_phase(Phase::Finalize);
        sbox.finalize(&mut party).expect("finalize");
        party.set_phase(Phase::Output);
        let out = party.open_output(&x).expect("open output");
        let stats = party.net().stats().get(Phase::Finalize);
        party.shutdown().expect("shutdown");
        (input, out, recorded, stats)
    });
    for (input, out, recorded, stats) in runs {
        let want: Vec<Gf2p8> = input.iter().map(|v| v.inverse()).collect();
        assert_eq!(out, want, "{what}");
        assert_eq!(recorded, l, "{what}");
        assert_finalize(&stats, verify_cost(l, k), what);
    }
}

/// mal-gf4-circuit checks three relations per inversion (rounds 2 and 3 as one, round 4's
/// two products as one) and mal-gf4-circuit-opt two, and the finalize sends the bytes of
/// exactly that `L`: at `n = 170` inversions, `3 n = 510` triples take `ℓ = 9` levels where
/// `4 n` would take 10.
#[test]
fn gf4_circuits_verify_exactly_their_relations() {
    use triskele_aes::sbox::gf4_circuit::{Gf4Circuit, Gf4CircuitGf4p4};
    assert_eq!(verify_cost(510, 32), verify_cost(512, 32));
    assert_ne!(verify_cost(510, 32), verify_cost(680, 32));
    for n in [7usize, 170, 250] {
        verifies_exactly(
            Gf4Circuit::default,
            n,
            3 * n,
            32,
            &format!("mal-gf4-circuit, n = {n}"),
        );
        let what = format!("mal-gf4-circuit-opt, n = {n}");
        verifies_exactly(Gf4CircuitGf4p4::default, n, 2 * n, 8, &what);
    }
}

/// mal-lut16 on layers that are not a multiple of 16 inversions (as in the key schedule): the
/// finalize `Verify` runs over exactly `L = 2 · 16 ⌈n/16⌉ + n` relations — 2 packed ohv
/// resp. 2 bit × bit-string relations (step 1's product checked inside step 2's) per one-hot
/// vector, for all 16 lanes of every preprocessed word, and one gf4p4 relation per inversion
/// — which fixes its bytes and messages; the layer's output is right.
#[test]
fn mal_lut16_verifies_exactly_the_recorded_relations() {
    use triskele_aes::sbox::mal_lut16::{MalLut16, Prep};
    for prep in [Prep::Ohv, Prep::Bitstring] {
        for n in [4usize, 17, 200] {
            let l = 2 * 16 * n.div_ceil(16) + n;
            verifies_exactly(
                || MalLut16::new(prep),
                n,
                l,
                8,
                &format!("{prep:?} n = {n}"),
            );
        }
    }
}

/// Online bytes of one `bool-circuit` S-box layer of `n` inversions: 34 AND gates, each
/// `⌈n/16⌉` words of 2 bytes (the last word is padded).
fn bool_circuit_layer_bytes(n: u64) -> u64 {
    34 * n.div_ceil(16) * 2
}

#[test]
fn bool_circuit_aes128_is_680_bytes_per_block_and_40_messages() {
    check(Target::BoolCircuit, KeySize::Aes128, 1);
    check(Target::BoolCircuit, KeySize::Aes128, 1000);
    check(Target::BoolCircuit, KeySize::Aes128, 17);
    let e = expected(Target::BoolCircuit, KeySize::Aes128);
    assert_eq!((e.online_next, e.online_prev), (0, 680));
    assert_eq!(e.online_messages_prev, 40);
    // ≤ 34 AND × 160 S-boxes / 8 bits and ≤ 6 AND layers × 10 rounds.
    assert!(e.online_prev <= 34 * 160 / 8);
    assert!(e.online_messages_prev <= 60);
    for s in [1u64, 17, 1000, 100_000] {
        assert_eq!(
            KeySize::Aes128.rounds() as u64 * bool_circuit_layer_bytes(16 * s),
            e.online_prev * s
        );
    }
}

#[test]
fn bool_circuit_aes256_is_952_bytes_per_block_and_56_messages() {
    check(Target::BoolCircuit, KeySize::Aes256, 1);
    check(Target::BoolCircuit, KeySize::Aes256, 300);
    let e = expected(Target::BoolCircuit, KeySize::Aes256);
    assert_eq!((e.online_next, e.online_prev), (0, 952));
    assert_eq!(e.online_messages_prev, 56);
}

/// Layers that are not a multiple of 16 S-boxes (the key schedule: 4 per layer) round up to
/// whole words: one layer of `n` inversions sends exactly `34 ⌈n/16⌉ · 2` bytes to prev in 4
/// messages, and the padding lanes do not disturb the result.
#[test]
fn bool_circuit_layer_rounds_up_to_whole_words() {
    use triskele_aes::sbox::{bool_circuit::BoolCircuit, SboxProtocol};
    use triskele_engine::{Party, Phase, SemiHonest};
    use triskele_field::{Field, Gf2p8};
    for n in [1usize, 4, 16, 17, 4100] {
        let nets = triskele_net::in_memory(&NetOptions::default());
        let runs = three(nets, |net| {
            let mut party = Party::<SemiHonest>::setup(net).expect("setup");
            party.set_phase(Phase::Output);
            let mut x = party.random_rss::<Gf2p8>(n);
            let input = party.open(&x).expect("open input");
            party.set_phase(Phase::Online);
            BoolCircuit::default()
                .invert(&mut party, &mut x)
                .expect("invert");
            party.set_phase(Phase::Output);
            let out = party.open(&x).expect("open output");
            let stats = party.net().stats().get(Phase::Online);
            party.shutdown().expect("shutdown");
            (input, out, stats)
        });
        for (input, out, stats) in runs {
            let want: Vec<Gf2p8> = input.iter().map(|v| v.inverse()).collect();
            assert_eq!(out, want, "n = {n}");
            assert_eq!(stats.prev.bytes_sent, bool_circuit_layer_bytes(n as u64));
            assert_eq!(stats.next.bytes_sent, 0);
            assert_eq!(stats.prev.messages, 4);
        }
    }
}
