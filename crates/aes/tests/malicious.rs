//! The abort matrix of the malicious variants (ARCHITECTURE.md "Security promises", STYLE.md
//! rule 11): for each party as the cheater, one flipped bit in (a) a share it sends in a
//! multiplication, (b) a value it sends in an opening (the Verify coins and openings, the
//! output opening), (d) its compare-view digest. Every honest party must return
//! `EngineError::Abort` and no honest party returns an output. The same tamper on the
//! semi-honest twin goes undetected. ((c), a preprocessed value, does not apply:
//! mal-chida-rec-check has no preprocessing.)
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use common::three;
use rand::SeedableRng;
use rand_chacha::ChaCha20Rng;
use triskele_aes::{aes_tamper, compute_party, KeySize, Mode, Target};
use triskele_engine::verify::levels;
use triskele_engine::EngineError;
use triskele_field::Gf2p8;
use triskele_net::{NetOptions, Phase, Tamper};
use triskele_share::{deal, Direction, PartyId};

/// FIPS-197 C.1.
const KEY: &str = "000102030405060708090a0b0c0d0e0f";
const PT: &str = "00112233445566778899aabbccddeeff";
const CT: &str = "69c4e0d86a7b0430d8cdb78070b4c55a";

fn run(target: Target, tamper: Option<Tamper>) -> [Result<Vec<u8>, EngineError>; 3] {
    let opts = NetOptions {
        tamper,
        ..NetOptions::default()
    };
    let mut rng = ChaCha20Rng::seed_from_u64(1);
    let k: Vec<Gf2p8> = hex::decode(KEY).unwrap().into_iter().map(Gf2p8).collect();
    let x: Vec<Gf2p8> = hex::decode(PT).unwrap().into_iter().map(Gf2p8).collect();
    let ks = deal(&k, &mut rng);
    let xs = deal(&x, &mut rng);
    three(triskele_net::in_memory(&opts), |net| {
        let i = net.party().index();
        compute_party(target, net, &ks[i], xs[i].clone(), Mode::Encrypt)
    })
}

/// Levels of the finalize Verify of one AES-128 block with the key schedule:
/// `L = 4 · (40 + 160)` triples.
fn verify_levels() -> u64 {
    u64::from(levels(4 * (KeySize::Aes128.key_schedule_sboxes() + 160)))
}

/// Runs mal-chida-rec-check with `tamper` and checks the abort promise.
fn assert_aborts(tamper: Tamper, what: &str) {
    let cheater = tamper.party;
    let log = tamper.clone();
    let res = run(Target::MalChidaRecCheck, Some(tamper));
    let flipped = log
        .tampered()
        .unwrap_or_else(|| panic!("{what}: nothing was flipped"));
    for p in PartyId::ALL {
        let r = &res[p.index()];
        if p == cheater {
            // The cheater runs the honest code apart from the flip; it cannot be prevented
            // from seeing an output opening it received correctly, so its result is not
            // constrained.
            continue;
        }
        assert!(
            matches!(r, Err(EngineError::Abort(_))),
            "{what}: cheater {cheater}, flipped {flipped:?}: honest {p} returned {r:?}"
        );
    }
}

#[test]
fn honest_run_gives_the_fips197_ciphertext() {
    for r in run(Target::MalChidaRecCheck, None) {
        assert_eq!(hex::encode(r.unwrap()), CT);
    }
}

/// (a) A share of a multiplication: any online message of mal-chida-rec-check is one.
#[test]
fn tampered_multiplication_share_aborts() {
    for cheater in PartyId::ALL {
        for seed in 0..3 {
            let t = aes_tamper(Target::MalChidaRecCheck, KeySize::Aes128, cheater, seed);
            assert_aborts(t, "(a) multiplication share");
        }
    }
}

/// (b) Values sent in openings: the step-1 seed coins, a halving coin, `t`, `ρ`, `σ` (all to
/// next in the finalize phase), and the output opening.
#[test]
fn tampered_opening_aborts() {
    let l = verify_levels();
    for cheater in PartyId::ALL {
        for (k, name) in [
            (0, "seed coins"),
            (1 + l / 2, "halving coin"),
            (l + 1, "coin t"),
            (l + 2, "opening of rho"),
            (l + 3, "opening of sigma"),
        ] {
            let t = Tamper::new(cheater, Phase::Finalize, Some(Direction::Next), k, k + 5);
            assert_aborts(t, &format!("(b) {name}"));
        }
        let t = Tamper::new(cheater, Phase::Output, Some(Direction::Next), 0, 9);
        assert_aborts(t, "(b) output opening");
    }
}

/// (b') The check's own reshares and multiplications (to prev in the finalize phase).
#[test]
fn tampered_verify_reshare_aborts() {
    let l = verify_levels();
    for cheater in PartyId::ALL {
        for k in [0, l - 1, l, l + 1] {
            let t = Tamper::new(
                cheater,
                Phase::Finalize,
                Some(Direction::Prev),
                k,
                3 * k + 1,
            );
            assert_aborts(t, &format!("(b') finalize message {k} to prev"));
        }
    }
}

/// (d) The compare-view digest, in either direction.
#[test]
fn tampered_compare_view_digest_aborts() {
    let l = verify_levels();
    for cheater in PartyId::ALL {
        let t = Tamper::new(cheater, Phase::Finalize, Some(Direction::Next), l + 4, 1);
        assert_aborts(t.clone(), "(d) digest to next");
        assert_eq!(t.tampered().map(|f| f.len), Some(32));
        let t = Tamper::new(cheater, Phase::Finalize, Some(Direction::Prev), l + 2, 2);
        assert_aborts(t.clone(), "(d) digest to prev");
        assert_eq!(t.tampered().map(|f| f.len), Some(32));
    }
}

/// The same online tamper on the semi-honest twin goes undetected: every party returns an
/// output (wrong or, by luck, correct), nobody aborts.
#[test]
fn semi_honest_chida_does_not_detect_the_tamper() {
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
    // A flipped bit of a share almost always changes the ciphertext.
    assert!(wrong > 0);
}
