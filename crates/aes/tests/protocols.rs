//! Known-answer and random tests of every S-box protocol through the full engine
//! (key agreement, key schedule on shares, encryption and decryption) over in-memory links,
//! and a sample of them (`over_tls`) through the real network stack.

mod common;

sbox_protocol_tests!(chida, triskele_aes::Target::Chida);
sbox_protocol_tests!(gf4_circuit, triskele_aes::Target::Gf4Circuit);
sbox_protocol_tests!(lut16, triskele_aes::Target::Lut16);
sbox_protocol_tests!(lut256, triskele_aes::Target::Lut256);
sbox_protocol_tests!(lut256_ss, triskele_aes::Target::Lut256Ss);
sbox_protocol_tests!(mal_chida_rec_check, triskele_aes::Target::MalChidaRecCheck);
sbox_protocol_tests!(bool_circuit, triskele_aes::Target::BoolCircuit);
sbox_protocol_tests!(mal_gf4_circuit, triskele_aes::Target::MalGf4Circuit);
sbox_protocol_tests!(mal_gf4_circuit_opt, triskele_aes::Target::MalGf4CircuitOpt);
sbox_protocol_tests!(mal_lut16_bitstring, triskele_aes::Target::MalLut16Bitstring);
sbox_protocol_tests!(mal_lut16_ohv, triskele_aes::Target::MalLut16Ohv);
sbox_protocol_tests!(mal_lut256_ss, triskele_aes::Target::MalLut256Ss);
sbox_protocol_tests!(mal_lut256_ss_opt, triskele_aes::Target::MalLut256SsOpt);

/// Batches larger than one preprocessing chunk (65,536 inversions for lut256): the layers
/// consume material across chunk boundaries; the result must still match RustCrypto. The same
/// batch spans several of `chida`'s work items (2,048 inversions) and ends inside one.
#[test]
fn large_batches_span_preprocessing_chunks() {
    use aes::cipher::{BlockEncrypt, KeyInit};
    use rand::{RngCore, SeedableRng};
    use triskele_aes::{Mode, Target};
    let mut rng = rand_chacha::ChaCha20Rng::seed_from_u64(41);
    let mut key = [0u8; 16];
    rng.fill_bytes(&mut key);
    let n = 600;
    let mut blocks = vec![0u8; 16 * n];
    rng.fill_bytes(&mut blocks);
    let mut expected = blocks.clone();
    let cipher = aes::Aes128::new_from_slice(&key).unwrap();
    for b in expected.chunks_mut(16) {
        cipher.encrypt_block(aes::Block::from_mut_slice(b));
    }
    for target in [
        Target::Chida,
        Target::Lut16,
        Target::Lut256,
        Target::Lut256Ss,
    ] {
        let got = common::run_aes(target, &key, &blocks, Mode::Encrypt, 3);
        assert!(got == expected, "{target}");
    }
}
