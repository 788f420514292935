//! Known-answer and random tests of every S-box protocol through the full engine
//! (key agreement, key schedule on shares, encryption and decryption) over in-memory links.

mod common;

sbox_protocol_tests!(chida, triskele_aes::Target::Chida);

/// A sample of the known answers through the real network stack: TLS 1.3 on loopback with
/// certificates made in memory.
#[test]
fn chida_over_tls() {
    use common::{parse_rsp, run_aes_on, testdata};
    use triskele_aes::{Mode, Target};
    for file in ["ECBGFSbox128.rsp", "ECBKeySbox256.rsp"] {
        let v = parse_rsp(&testdata(file));
        for (i, v) in v.iter().filter(|v| v.encrypt).take(3).enumerate() {
            let nets = triskele_net::local_tls(&triskele_net::NetOptions::default()).unwrap();
            let got = run_aes_on(
                nets,
                Target::Chida,
                &v.key,
                &v.plaintext,
                Mode::Encrypt,
                i as u64,
            );
            assert_eq!(got, v.ciphertext, "{file} #{i}");
        }
    }
}
