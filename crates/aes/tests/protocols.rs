//! Known-answer and random tests of every S-box protocol through the full engine
//! (key agreement, key schedule on shares, encryption and decryption) over in-memory links.

mod common;

sbox_protocol_tests!(chida, triskele_aes::Target::Chida);
