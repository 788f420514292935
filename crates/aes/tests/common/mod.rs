//! Shared helpers of the AES protocol tests: CAVP parsing, three parties in threads,
//! a dealer, and the S-box protocol test suite as a macro.
#![allow(dead_code, clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use rand::SeedableRng;
use rand_chacha::ChaCha20Rng;
use triskele_aes::{compute_party, Mode, Target};
use triskele_engine::EngineError;
use triskele_field::Gf2p8;
use triskele_net::{NetOptions, Network, Tamper};
use triskele_share::deal;

/// One CAVP record.
#[derive(Debug, Clone)]
pub struct Vector {
    pub encrypt: bool,
    pub key: Vec<u8>,
    pub plaintext: Vec<u8>,
    pub ciphertext: Vec<u8>,
}

/// Parses a CAVP `.rsp` file (CRLF or LF).
pub fn parse_rsp(text: &str) -> Vec<Vector> {
    let mut out = Vec::new();
    let mut encrypt = true;
    type Partial = (Option<Vec<u8>>, Option<Vec<u8>>, Option<Vec<u8>>);
    let mut cur: Partial = (None, None, None);
    for line in text.lines().map(|l| l.trim_end_matches('\r').trim()) {
        if line == "[ENCRYPT]" {
            encrypt = true;
        } else if line == "[DECRYPT]" {
            encrypt = false;
        } else if let Some((k, v)) = line.split_once(" = ") {
            let bytes = hex::decode(v).ok();
            match k {
                "KEY" => cur.0 = bytes,
                "PLAINTEXT" => cur.1 = bytes,
                "CIPHERTEXT" => cur.2 = bytes,
                _ => {}
            }
        }
        if let (Some(_), Some(_), Some(_)) = &cur {
            let (k, p, c) = std::mem::take(&mut cur);
            out.push(Vector {
                encrypt,
                key: k.unwrap(),
                plaintext: p.unwrap(),
                ciphertext: c.unwrap(),
            });
        }
    }
    out
}

pub fn testdata(name: &str) -> String {
    let path = format!("{}/testdata/{name}", env!("CARGO_MANIFEST_DIR"));
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
}

/// The Verify-based malicious variants (mal-chida checks by sacrifice and records nothing).
pub fn verify_based() -> impl Iterator<Item = Target> {
    Target::ALL
        .iter()
        .copied()
        .filter(|t| t.is_malicious() && *t != Target::MalChida)
}

/// Runs `f` for each party in its own thread; returns the results in party order.
pub fn three<T: Send>(nets: [Network; 3], f: impl Fn(Network) -> T + Sync) -> [T; 3] {
    let f = &f;
    std::thread::scope(|s| {
        let hs: Vec<_> = nets.into_iter().map(|n| s.spawn(move || f(n))).collect();
        let v: Vec<T> = hs
            .into_iter()
            .map(|h| h.join().expect("party thread"))
            .collect();
        v.try_into().ok().expect("three results")
    })
}

/// Deals key and blocks, runs the protocol with three parties over `nets`, checks the three
/// outputs agree and returns them.
pub fn run_aes_on(
    nets: [Network; 3],
    target: Target,
    key: &[u8],
    blocks: &[u8],
    mode: Mode,
    seed: u64,
) -> Vec<u8> {
    let outs = run_dealt(nets, target, key, blocks, mode, seed).map(|r| r.expect("protocol run"));
    assert_eq!(outs[0], outs[1]);
    assert_eq!(outs[1], outs[2]);
    outs[0].clone()
}

/// Deals `key` and `blocks` (dealer randomness from `seed`) and runs `target` with three
/// parties over `nets`; every party's result.
pub fn run_dealt(
    nets: [Network; 3],
    target: Target,
    key: &[u8],
    blocks: &[u8],
    mode: Mode,
    seed: u64,
) -> [Result<Vec<u8>, EngineError>; 3] {
    let mut rng = ChaCha20Rng::seed_from_u64(seed);
    let bytes = |v: &[u8]| v.iter().map(|b| Gf2p8(*b)).collect::<Vec<_>>();
    let ks = deal(&bytes(key), &mut rng);
    let xs = deal(&bytes(blocks), &mut rng);
    three(nets, |net| {
        let i = net.party().index();
        compute_party(target, net, &ks[i], xs[i].clone(), mode)
    })
}

pub fn run_aes(target: Target, key: &[u8], blocks: &[u8], mode: Mode, seed: u64) -> Vec<u8> {
    run_aes_on(Links::InMemory.make(), target, key, blocks, mode, seed)
}

/// The links of a test's three parties.
#[derive(Debug, Clone, Copy)]
pub enum Links {
    /// In-memory channels with the same framing (fast; most tests).
    InMemory,
    /// The real network stack: TLS 1.3 on loopback, certificates made in memory.
    Tls,
}

impl Links {
    pub fn make(self) -> [Network; 3] {
        match self {
            Links::InMemory => triskele_net::in_memory(&NetOptions::default()),
            Links::Tls => triskele_net::local_tls(&NetOptions::default()).expect("local TLS setup"),
        }
    }
}

/// Checks every record of a CAVP file, batching all blocks under the same key and direction.
pub fn check_cavp(target: Target, file: &str) {
    check_cavp_over(target, file, Links::InMemory);
}

/// [`check_cavp`] over the given links.
pub fn check_cavp_over(target: Target, file: &str, links: Links) {
    let vectors = parse_rsp(&testdata(file));
    assert!(!vectors.is_empty(), "{file}: no vectors parsed");
    // (key, encrypt, inputs, expected outputs)
    type Group = (Vec<u8>, bool, Vec<u8>, Vec<u8>);
    let mut groups: Vec<Group> = Vec::new();
    for v in &vectors {
        let (input, expected) = if v.encrypt {
            (&v.plaintext, &v.ciphertext)
        } else {
            (&v.ciphertext, &v.plaintext)
        };
        match groups.iter_mut().find(|g| g.0 == v.key && g.1 == v.encrypt) {
            Some(g) => {
                g.2.extend_from_slice(input);
                g.3.extend_from_slice(expected);
            }
            None => groups.push((v.key.clone(), v.encrypt, input.clone(), expected.clone())),
        }
    }
    for (i, (key, enc, input, expected)) in groups.iter().enumerate() {
        let mode = if *enc { Mode::Encrypt } else { Mode::Decrypt };
        let got = run_aes_on(links.make(), target, key, input, mode, i as u64);
        assert_eq!(
            hex::encode(&got),
            hex::encode(expected),
            "{file}: {target} {mode:?} key {}",
            hex::encode(key)
        );
    }
}

/// Random keys and blocks against the RustCrypto `aes` crate.
pub fn check_random_against_rustcrypto(target: Target, seed: u64) {
    check_random_over(target, seed, Links::InMemory);
}

/// [`check_random_against_rustcrypto`] over the given links: AES-128 and AES-256, encryption
/// and decryption.
pub fn check_random_over(target: Target, seed: u64, links: Links) {
    check_random_blocks(target, seed, links, 5);
}

/// [`check_random_over`] with `n` blocks per key and direction.
pub fn check_random_blocks(target: Target, seed: u64, links: Links, n: usize) {
    use aes::cipher::{BlockDecrypt, BlockEncrypt, KeyInit};
    use rand::RngCore;
    let mut rng = ChaCha20Rng::seed_from_u64(seed);
    for key_len in [16usize, 32] {
        for decrypt in [false, true] {
            let mut key = vec![0u8; key_len];
            rng.fill_bytes(&mut key);
            let mut blocks = vec![0u8; 16 * n];
            rng.fill_bytes(&mut blocks);
            let mut expected = blocks.clone();
            for b in expected.chunks_mut(16) {
                let block = aes::Block::from_mut_slice(b);
                match (key_len, decrypt) {
                    (16, false) => aes::Aes128::new_from_slice(&key)
                        .unwrap()
                        .encrypt_block(block),
                    (16, true) => aes::Aes128::new_from_slice(&key)
                        .unwrap()
                        .decrypt_block(block),
                    (_, false) => aes::Aes256::new_from_slice(&key)
                        .unwrap()
                        .encrypt_block(block),
                    (_, true) => aes::Aes256::new_from_slice(&key)
                        .unwrap()
                        .decrypt_block(block),
                }
            }
            let mode = if decrypt {
                Mode::Decrypt
            } else {
                Mode::Encrypt
            };
            let got = run_aes_on(
                links.make(),
                target,
                &key,
                &blocks,
                mode,
                seed + key_len as u64,
            );
            assert_eq!(got, expected, "{target} key_len {key_len} {mode:?}");
        }
    }
}

/// All 256 inputs through one S-box layer, opened and compared to the table.
pub fn check_sbox_layer(target: Target) {
    let mut rng = ChaCha20Rng::seed_from_u64(256);
    let x: Vec<Gf2p8> = (0..=255u8).map(Gf2p8).collect();
    let xs = deal(&x, &mut rng);
    let outs = three(triskele_net::in_memory(&NetOptions::default()), |net| {
        let i = net.party().index();
        triskele_aes::run::sbox_layer_party(target, net, xs[i].clone()).expect("layer")
    });
    for o in &outs {
        for (v, y) in o.iter().enumerate() {
            assert_eq!(*y, Gf2p8::SBOX[v], "{target}: S({v:#04x})");
        }
    }
}

/// FIPS-197 Appendix C.1 (AES-128) and C.3 (AES-256), both directions.
pub fn check_fips197(target: Target) {
    let pt = hex::decode("00112233445566778899aabbccddeeff").unwrap();
    let cases = [
        (
            "000102030405060708090a0b0c0d0e0f",
            "69c4e0d86a7b0430d8cdb78070b4c55a",
        ),
        (
            "000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f",
            "8ea2b7ca516745bfeafc49904b496089",
        ),
    ];
    for (k, c) in cases {
        let key = hex::decode(k).unwrap();
        let ct = run_aes(target, &key, &pt, Mode::Encrypt, 1);
        assert_eq!(hex::encode(&ct), c, "{target} FIPS-197 encrypt");
        let back = run_aes(target, &key, &ct, Mode::Decrypt, 2);
        assert_eq!(back, pt, "{target} FIPS-197 decrypt");
    }
}

/// The whole functional suite for one S-box protocol, instantiated in one line per variant.
#[macro_export]
macro_rules! sbox_protocol_tests {
    ($modname:ident, $target:expr) => {
        mod $modname {
            use super::common::*;
            #[test]
            fn fips197() {
                check_fips197($target);
            }
            #[test]
            fn sbox_layer_all_256_inputs() {
                check_sbox_layer($target);
            }
            #[test]
            fn random_against_rustcrypto() {
                check_random_against_rustcrypto($target, 7);
            }
            #[test]
            fn cavp_gfsbox() {
                check_cavp($target, "ECBGFSbox128.rsp");
                check_cavp($target, "ECBGFSbox256.rsp");
            }
            #[test]
            fn cavp_keysbox() {
                check_cavp($target, "ECBKeySbox128.rsp");
                check_cavp($target, "ECBKeySbox256.rsp");
            }
            /// Through the real network stack (TLS 1.3 on loopback): the GFSbox files and
            /// random inputs, AES-128 and AES-256, both directions.
            #[test]
            fn over_tls() {
                check_cavp_over($target, "ECBGFSbox128.rsp", Links::Tls);
                check_cavp_over($target, "ECBGFSbox256.rsp", Links::Tls);
                check_random_over($target, 11, Links::Tls);
            }
            #[test]
            fn cavp_vartxt() {
                check_cavp($target, "ECBVarTxt128.rsp");
                check_cavp($target, "ECBVarTxt256.rsp");
            }
        }
    };
}

/// FIPS-197 C.1: key, plaintext and ciphertext.
pub const FIPS_KEY: &str = "000102030405060708090a0b0c0d0e0f";
pub const FIPS_PT: &str = "00112233445566778899aabbccddeeff";
pub const FIPS_CT: &str = "69c4e0d86a7b0430d8cdb78070b4c55a";

/// FIPS-197 C.1 (key schedule and one block) through `target` with three parties over
/// in-memory links, optionally with a cheating party; every party's result.
pub fn run_fips197(target: Target, tamper: Option<Tamper>) -> [Result<Vec<u8>, EngineError>; 3] {
    let (key, pt) = (
        hex::decode(FIPS_KEY).unwrap(),
        hex::decode(FIPS_PT).unwrap(),
    );
    run_dealt(in_memory_with(tamper), target, &key, &pt, Mode::Encrypt, 1)
}

/// `blocks` random blocks under a random AES-128 key through `target` over in-memory links
/// with `tamper`; every party's result.
pub fn run_batch(
    target: Target,
    blocks: usize,
    tamper: Option<Tamper>,
) -> [Result<Vec<u8>, EngineError>; 3] {
    use rand::RngCore;
    let mut bytes = vec![0u8; 16 + 16 * blocks];
    ChaCha20Rng::seed_from_u64(blocks as u64).fill_bytes(&mut bytes);
    let (key, x) = bytes.split_at(16);
    run_dealt(in_memory_with(tamper), target, key, x, Mode::Encrypt, 1)
}

/// In-memory links with an optional cheating party.
fn in_memory_with(tamper: Option<Tamper>) -> [Network; 3] {
    triskele_net::in_memory(&NetOptions {
        tamper,
        ..NetOptions::default()
    })
}

/// Runs FIPS-197 C.1 through `target` with `tamper` and checks the abort promise: every
/// honest party returns `EngineError::Abort`, none an output. Returns the length of the
/// flipped message.
pub fn assert_fips197_aborts(target: Target, tamper: Tamper, what: &str) -> usize {
    let cheater = tamper.party;
    let log = tamper.clone();
    let res = run_fips197(target, Some(tamper));
    let flipped = log
        .tampered()
        .unwrap_or_else(|| panic!("{target} {what}: nothing was flipped"));
    let what = format!("{target} {what}: flipped {flipped:?}");
    assert_honest_parties_abort(&res, cheater, &what);
    flipped.len
}

/// The abort promise on the three results of a run in which `cheater` deviated: every honest
/// party returned `EngineError::Abort`. (The cheater runs the honest code apart from the
/// deviation; it cannot be prevented from seeing an output opening it received correctly, so
/// its result is not constrained.)
pub fn assert_honest_parties_abort<T: core::fmt::Debug>(
    res: &[Result<T, EngineError>; 3],
    cheater: triskele_share::PartyId,
    what: &str,
) {
    for p in triskele_share::PartyId::ALL {
        if p == cheater {
            continue;
        }
        let r = &res[p.index()];
        assert!(
            matches!(r, Err(EngineError::Abort(_))),
            "{what}: cheater {cheater}: honest {p} returned {r:?}"
        );
    }
}
