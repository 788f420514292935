//! Failures never hang: a party that dies mid-protocol or a peer that sends a malformed message
//! makes every other party return an error within the read timeout.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use std::time::{Duration, Instant};

use common::three;
use rand::SeedableRng;
use rand_chacha::ChaCha20Rng;
use triskele_aes::{compute_party, Mode, Target};
use triskele_engine::{EngineError, Party, SemiHonest};
use triskele_field::Gf2p8;
use triskele_net::{NetOptions, Network, Timeouts};
use triskele_share::{deal, Direction, PartyId};

fn opts() -> NetOptions {
    NetOptions {
        timeouts: Timeouts {
            connect: Duration::from_secs(5),
            read: Duration::from_millis(800),
        },
        ..NetOptions::default()
    }
}

/// P3 completes the setup, then disappears; P1 and P2 must fail, not hang.
fn dead_party(nets: [Network; 3]) {
    let mut rng = ChaCha20Rng::seed_from_u64(5);
    let key: Vec<Gf2p8> = (0..16).map(Gf2p8).collect();
    let blocks: Vec<Gf2p8> = (0..160).map(|i| Gf2p8(i as u8)).collect();
    let ks = deal(&key, &mut rng);
    let xs = deal(&blocks, &mut rng);
    let start = Instant::now();
    let results = three(nets, |net| {
        let i = net.party().index();
        if net.party() == PartyId::P3 {
            // Setup, then leave: the links close when the party is dropped.
            let p = Party::<SemiHonest>::setup(net);
            drop(p);
            return None;
        }
        Some(compute_party(
            Target::Chida,
            net,
            &ks[i],
            xs[i].clone(),
            Mode::Encrypt,
        ))
    });
    let elapsed = start.elapsed();
    for r in results.iter().take(2) {
        match r {
            Some(Err(EngineError::Net(_))) => {}
            other => panic!("expected a network error, got {other:?}"),
        }
    }
    // Generous bound: several read timeouts at most, never a hang.
    assert!(elapsed < Duration::from_secs(10), "took {elapsed:?}");
}

#[test]
fn dead_party_in_memory() {
    dead_party(triskele_net::in_memory(&opts()));
}

#[test]
fn dead_party_tls() {
    dead_party(triskele_net::local_tls(&opts()).unwrap());
}

#[test]
fn malformed_message_is_an_error_not_a_panic() {
    let results = three(triskele_net::in_memory(&opts()), |net| {
        let mut p = Party::<SemiHonest>::setup(net).unwrap();
        let x = p.random_rss::<Gf2p8>(100);
        if p.id() == PartyId::P1 {
            // P1 sends 3 bytes where an opening of 100 elements is expected.
            p.net().send(Direction::Next, vec![1, 2, 3]).unwrap();
            let _ = p.net().recv(Direction::Prev);
            return None;
        }
        Some(p.open(&x))
    });
    match &results[1] {
        Some(Err(EngineError::MessageLength {
            peer: PartyId::P1,
            expected: 100,
            got: 3,
        })) => {}
        other => panic!("P2: expected a length error, got {other:?}"),
    }
}

/// An S-box protocol asked for more inversions than were preprocessed returns
/// `PreprocessingExhausted` at every party instead of panicking or reading past its pool.
fn exhausted<S: triskele_aes::sbox::SboxProtocol<SemiHonest> + Default>() {
    let results = three(triskele_net::in_memory(&opts()), |net| {
        let mut p = Party::<SemiHonest>::setup(net).unwrap();
        let mut sbox = S::default();
        sbox.preprocess(&mut p, 16).unwrap();
        let mut x = p.random_rss::<Gf2p8>(32);
        sbox.invert(&mut p, &mut x)
    });
    for r in results {
        match r {
            Err(EngineError::PreprocessingExhausted {
                needed: 32,
                available: 16,
            }) => {}
            other => panic!("expected PreprocessingExhausted, got {other:?}"),
        }
    }
}

#[test]
fn lookup_protocols_refuse_to_run_past_their_preprocessing() {
    use triskele_aes::sbox::{lut16::Lut16, lut256::Lut256, lut256_ss::Lut256Ss};
    exhausted::<Lut16>();
    exhausted::<Lut256>();
    exhausted::<Lut256Ss>();
}
