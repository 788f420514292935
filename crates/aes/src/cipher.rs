//! AES-128/256 encryption, decryption and key schedule on shares (PROTOCOLS.md §3).

use triskele_engine::{EngineError, Party, SecurityModel};
use triskele_field::Gf2p8;
use triskele_share::RssVec;

use crate::layer::{
    add_public_byte, add_round_key, inv_mix_columns, inv_shift_rows, inv_sub_bytes_linked, local,
    round_linear, shift_rows, sub_bytes, sub_bytes_linked, undo_decrypt_round, undo_encrypt_round,
};
use crate::sbox::{LayerInput, LayerLink, LayerOutput, SboxProtocol};

/// AES key size.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum KeySize {
    Aes128,
    Aes256,
}

impl KeySize {
    /// Number of rounds `N_r`.
    pub fn rounds(self) -> usize {
        match self {
            KeySize::Aes128 => 10,
            KeySize::Aes256 => 14,
        }
    }

    /// Key length in bytes.
    pub fn key_bytes(self) -> usize {
        match self {
            KeySize::Aes128 => 16,
            KeySize::Aes256 => 32,
        }
    }

    /// S-boxes per block of encryption or decryption (no key schedule).
    pub fn sboxes_per_block(self) -> usize {
        16 * self.rounds()
    }

    /// S-boxes of the key schedule (40 resp. 52).
    pub fn key_schedule_sboxes(self) -> usize {
        match self {
            KeySize::Aes128 => 40,
            KeySize::Aes256 => 52,
        }
    }

    /// From a key length in bytes.
    pub fn from_key_len(len: usize) -> Option<KeySize> {
        match len {
            16 => Some(KeySize::Aes128),
            32 => Some(KeySize::Aes256),
            _ => None,
        }
    }
}

/// Encryption or decryption.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    Encrypt,
    Decrypt,
}

/// Shared round keys: `N_r + 1` keys of 16 bytes, FIPS-197 order.
#[derive(Debug, Clone)]
pub struct RoundKeys {
    pub size: KeySize,
    pub keys: RssVec<Gf2p8>,
}

impl RoundKeys {
    /// Wraps `(N_r + 1) * 16` shared bytes; `None` for another length.
    pub fn new(size: KeySize, keys: RssVec<Gf2p8>) -> Option<Self> {
        (keys.len() == 16 * (size.rounds() + 1)).then_some(RoundKeys { size, keys })
    }
}

impl Drop for RoundKeys {
    fn drop(&mut self) {
        zeroize::Zeroize::zeroize(&mut self.keys);
    }
}

const RCON: [u8; 10] = [0x01, 0x02, 0x04, 0x08, 0x10, 0x20, 0x40, 0x80, 0x1b, 0x36];

fn check_blocks(state: &RssVec<Gf2p8>) -> Result<(), EngineError> {
    if !state.len().is_multiple_of(16) {
        return Err(EngineError::LengthMismatch {
            expected: state.len().next_multiple_of(16),
            got: state.len(),
        });
    }
    Ok(())
}

/// Expands a shared key (16 or 32 bytes) into shared round keys (FIPS-197 §5.2). Each SubWord is
/// one layer of 4 inversions: 40 S-boxes for AES-128, 52 for AES-256.
pub fn key_schedule<M: SecurityModel, S: SboxProtocol<M>>(
    party: &mut Party<M>,
    sbox: &mut S,
    key: &RssVec<Gf2p8>,
) -> Result<RoundKeys, EngineError> {
    let size = KeySize::from_key_len(key.len()).ok_or(EngineError::LengthMismatch {
        expected: 16,
        got: key.len(),
    })?;
    let nk = size.key_bytes() / 4;
    let total_words = 4 * (size.rounds() + 1);
    let mut w = key.clone();
    for i in nk..total_words {
        let last = w
            .slice(4 * (i - 1)..4 * i)
            .ok_or(EngineError::LengthMismatch {
                expected: 4 * i,
                got: w.len(),
            })?;
        let mut temp = last;
        if i % nk == 0 {
            temp.map_components(|c| c.rotate_left(1));
            sub_bytes(party, sbox, &mut temp)?;
            add_public_byte(&mut temp, party.id(), 0, RCON[i / nk - 1]);
        } else if nk > 6 && i % nk == 4 {
            sub_bytes(party, sbox, &mut temp)?;
        }
        let back = w
            .slice(4 * (i - nk)..4 * (i - nk + 1))
            .ok_or(EngineError::LengthMismatch {
                expected: 4 * i,
                got: w.len(),
            })?;
        temp.add_assign(&back);
        w.extend(&temp);
    }
    RoundKeys::new(size, w).ok_or(EngineError::LengthMismatch {
        expected: 16 * (size.rounds() + 1),
        got: 0,
    })
}

/// Encrypts all blocks of `state` in place (FIPS-197 §5.1).
pub fn encrypt<M: SecurityModel, S: SboxProtocol<M>>(
    party: &mut Party<M>,
    sbox: &mut S,
    keys: &RoundKeys,
    state: &mut RssVec<Gf2p8>,
) -> Result<(), EngineError> {
    check_blocks(state)?;
    let nr = keys.size.rounds();
    let id = party.id();
    add_round_key(state, &keys.keys, 0);
    for r in 1..=nr {
        // Layer r follows round r - 1's key addition; round 0 is the initial one.
        let undo = |x: &mut RssVec<Gf2p8>| undo_encrypt_round(x, &keys.keys, r - 1, id);
        let link = LayerLink {
            input: if r == 1 {
                LayerInput::Fresh
            } else {
                LayerInput::Chained(&undo)
            },
            output: if r == nr {
                LayerOutput::Replicated
            } else {
                LayerOutput::Chained
            },
        };
        sub_bytes_linked(party, sbox, state, link)?;
        if r < nr {
            round_linear(state, &keys.keys, r);
        }
    }
    local(state, shift_rows);
    add_round_key(state, &keys.keys, nr);
    Ok(())
}

/// Decrypts all blocks of `state` in place (the inverse cipher, FIPS-197 §5.3).
pub fn decrypt<M: SecurityModel, S: SboxProtocol<M>>(
    party: &mut Party<M>,
    sbox: &mut S,
    keys: &RoundKeys,
    state: &mut RssVec<Gf2p8>,
) -> Result<(), EngineError> {
    check_blocks(state)?;
    let nr = keys.size.rounds();
    let id = party.id();
    add_round_key(state, &keys.keys, nr);
    for r in (0..nr).rev() {
        // The layer of round r follows round r + 1's key addition and InvMixColumns (none
        // for the first layer, r = N_r - 1).
        let undo = |x: &mut RssVec<Gf2p8>| undo_decrypt_round(x, &keys.keys, r + 1, id);
        let link = LayerLink {
            input: if r + 1 == nr {
                LayerInput::Fresh
            } else {
                LayerInput::Chained(&undo)
            },
            output: if r == 0 {
                LayerOutput::Replicated
            } else {
                LayerOutput::Chained
            },
        };
        local(state, inv_shift_rows);
        inv_sub_bytes_linked(party, sbox, state, link)?;
        add_round_key(state, &keys.keys, r);
        if r > 0 {
            local(state, inv_mix_columns);
        }
    }
    Ok(())
}

/// Encrypts or decrypts.
pub fn apply<M: SecurityModel, S: SboxProtocol<M>>(
    party: &mut Party<M>,
    sbox: &mut S,
    keys: &RoundKeys,
    state: &mut RssVec<Gf2p8>,
    mode: Mode,
) -> Result<(), EngineError> {
    match mode {
        Mode::Encrypt => encrypt(party, sbox, keys, state),
        Mode::Decrypt => decrypt(party, sbox, keys, state),
    }
}
