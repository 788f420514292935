//! Segmented verification (`Party::checkpoint`): the Verify-based malicious variants with a
//! segment of one byte, so that every multiplication's records are verified as soon as they
//! exist and the finalize check finds nothing left. This test binary sets the process-wide
//! segment for every test in it (integration tests run as their own process), so the other
//! test binaries keep the default.
//!
//! Checked here: outputs against RustCrypto (AES-128 and AES-256, both directions, where the
//! variant supports them), the exact bytes and messages of the finalize phase (one Verify per
//! multiplication plus the final compare-view) with the online bytes unchanged, and that a
//! product the cheater corrupts in an early segment makes every honest party abort at the
//! end, as does a tampered message of a segment's Verify.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use common::{
    assert_fips197_aborts, check_random_against_rustcrypto, check_random_blocks, run_fips197,
    three, verify_based, Links, FIPS_CT,
};
use triskele_aes::{aes_tamper, bench_party, KeySize, Target};
use triskele_engine::set_verify_segment;
use triskele_engine::verify::levels;
use triskele_net::{NetOptions, Phase, Tamper};
use triskele_share::{Direction, PartyId};

/// Every record is due at once.
fn tiny_segments() {
    set_verify_segment(Some(1));
}

#[test]
fn segmented_variants_match_rustcrypto() {
    tiny_segments();
    for (i, target) in verify_based().enumerate() {
        check_random_against_rustcrypto(target, 900 + i as u64);
    }
}

/// Layers large enough that the variants that reserve their records' memory do so
/// (`RecordMemory::MIN_LAYER`, 4,096 inversions: 256 blocks), with every layer its own
/// segment, so that the reserve is taken one layer at a time and the verified segments'
/// memory serves the next: the outputs are RustCrypto's and every check passes.
#[test]
fn segmented_layers_with_reserved_record_memory_match_rustcrypto() {
    tiny_segments();
    for target in [
        Target::MalGf4Circuit,
        Target::MalGf4CircuitOpt,
        Target::MalLut16Ohv,
    ] {
        check_random_blocks(target, 930, Links::InMemory, 260);
    }
}

#[test]
fn segmented_fips197_and_mal_chida_unaffected() {
    tiny_segments();
    for target in verify_based().chain([Target::MalChida]) {
        for r in run_fips197(target, None) {
            assert_eq!(hex::encode(r.unwrap()), FIPS_CT, "{target}");
        }
    }
}

/// mal-chida-rec-check, AES-128 without key schedule (the benchmark): layer `r` records
/// `4n` products (`n = 16 · simd`; its chain is recorded in place, so the segment check runs
/// after the layer), verified as its own segment (`16 + 8ℓ + 24` bytes to next, `16ℓ + 16` to
/// prev) down to its last triple in `ℓ + 1` and `ℓ` sends; the ten segments' `CheckTriple`s
/// go side by side at the end (3 sends to next, 2 to prev), then the final compare-view (32
/// bytes and one send each way). The online phase sends exactly the multiplications' 640
/// bytes per block.
#[test]
fn segment_bytes_are_counted_in_the_finalize_phase() {
    tiny_segments();
    let simd = 3;
    let n = 16 * simd;
    let nets = triskele_net::in_memory(&NetOptions::default());
    let reports = three(nets, |net| {
        bench_party(Target::MalChidaRecCheck, net, KeySize::Aes128, simd).expect("run")
    });
    let (mut next, mut prev, mut sends_next, mut sends_prev) = (32u64, 32u64, 1 + 3u64, 1 + 2u64);
    for _layer in 0..10 {
        let l = u64::from(levels(4 * n));
        next += 16 + 8 * l + 24;
        prev += 16 * l + 16;
        sends_next += l + 1;
        sends_prev += l;
    }
    for r in &reports {
        let on = r.online.stats;
        assert_eq!(on.prev.bytes_sent, 640 * simd as u64);
        assert_eq!(on.next.bytes_sent, 0);
        let fin = r.finalize.stats;
        assert_eq!(fin.next.bytes_sent, next);
        assert_eq!(fin.prev.bytes_sent, prev);
        // Messages per link count sends and receives: this party's sends to one side and
        // that neighbour's sends the other way.
        assert_eq!(fin.next.messages, sends_next + sends_prev);
        assert_eq!(fin.prev.messages, sends_next + sends_prev);
        assert!(r.finalize.time > std::time::Duration::ZERO);
    }
}

#[test]
fn a_product_corrupted_in_an_early_segment_aborts_at_the_end() {
    tiny_segments();
    for target in verify_based() {
        for cheater in PartyId::ALL {
            let t = aes_tamper(target, KeySize::Aes128, cheater, 1);
            assert_fips197_aborts(target, t, "online share");
        }
    }
}

#[test]
fn a_tampered_segment_verify_aborts() {
    tiny_segments();
    for target in [Target::MalChidaRecCheck, Target::MalLut16Ohv] {
        for cheater in PartyId::ALL {
            // The first segment's seed coins (to next) and its first reshare (to prev).
            let t = Tamper::new(cheater, Phase::Finalize, Some(Direction::Next), 0, 3);
            assert_fips197_aborts(target, t, "segment seed coins");
            let t = Tamper::new(cheater, Phase::Finalize, Some(Direction::Prev), 0, 4);
            assert_fips197_aborts(target, t, "segment reshare");
        }
    }
}
