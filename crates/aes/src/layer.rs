//! The AES round functions on replicated shares, written once for every S-box protocol
//! (PROTOCOLS.md §3). The state of `n` blocks is `16 n` shared bytes, each block in FIPS-197
//! order (byte `k` is row `k mod 4`, column `k / 4`).

use triskele_engine::{EngineError, Party, SecurityModel};
use triskele_field::{Gf2p8, LinearMap8};
use triskele_share::{PartyId, RssVec};

use crate::sbox::SboxProtocol;

/// The AES affine constant.
const AFFINE_CONST: Gf2p8 = Gf2p8(0x63);

/// SubBytes: inversion by the protocol, then the affine map `A(x) + 0x63` (local).
pub fn sub_bytes<M: SecurityModel, S: SboxProtocol<M>>(
    party: &mut Party<M>,
    sbox: &mut S,
    x: &mut RssVec<Gf2p8>,
) -> Result<(), EngineError> {
    sbox.invert(party, x)?;
    x.map_components(|c| LinearMap8::AES_A.apply_in_place(c));
    x.add_constant_scalar(party.id(), AFFINE_CONST);
    Ok(())
}

/// InvSubBytes: `(A^-1(y + 0x63))^-1`.
pub fn inv_sub_bytes<M: SecurityModel, S: SboxProtocol<M>>(
    party: &mut Party<M>,
    sbox: &mut S,
    x: &mut RssVec<Gf2p8>,
) -> Result<(), EngineError> {
    x.add_constant_scalar(party.id(), AFFINE_CONST);
    x.map_components(|c| LinearMap8::AES_A_INV.apply_in_place(c));
    sbox.invert(party, x)
}

/// ShiftRows on every block of one component: row `r` rotated left by `r`.
pub fn shift_rows(c: &mut [Gf2p8]) {
    for block in c.chunks_exact_mut(16) {
        let old: [Gf2p8; 16] = core::array::from_fn(|k| block[k]);
        for r in 1..4 {
            for col in 0..4 {
                block[r + 4 * col] = old[r + 4 * ((col + r) % 4)];
            }
        }
    }
}

/// InvShiftRows: row `r` rotated right by `r`.
pub fn inv_shift_rows(c: &mut [Gf2p8]) {
    for block in c.chunks_exact_mut(16) {
        let old: [Gf2p8; 16] = core::array::from_fn(|k| block[k]);
        for r in 1..4 {
            for col in 0..4 {
                block[r + 4 * ((col + r) % 4)] = old[r + 4 * col];
            }
        }
    }
}

#[inline]
fn xtime(b: u8) -> u8 {
    (b << 1) ^ (((b >> 7) & 1) * 0x1b)
}

/// MixColumns on every column of one component (circulant `(2,3,1,1)`).
pub fn mix_columns(c: &mut [Gf2p8]) {
    for col in c.chunks_exact_mut(4) {
        let [a0, a1, a2, a3] = [col[0].0, col[1].0, col[2].0, col[3].0];
        let all = a0 ^ a1 ^ a2 ^ a3;
        col[0] = Gf2p8(a0 ^ all ^ xtime(a0 ^ a1));
        col[1] = Gf2p8(a1 ^ all ^ xtime(a1 ^ a2));
        col[2] = Gf2p8(a2 ^ all ^ xtime(a2 ^ a3));
        col[3] = Gf2p8(a3 ^ all ^ xtime(a3 ^ a0));
    }
}

/// InvMixColumns (circulant `(e,b,d,9)`), as MixColumns after a preprocessing step.
pub fn inv_mix_columns(c: &mut [Gf2p8]) {
    for col in c.chunks_exact_mut(4) {
        let [a0, a1, a2, a3] = [col[0].0, col[1].0, col[2].0, col[3].0];
        let u = xtime(xtime(a0 ^ a2));
        let v = xtime(xtime(a1 ^ a3));
        col[0] = Gf2p8(a0 ^ u);
        col[1] = Gf2p8(a1 ^ v);
        col[2] = Gf2p8(a2 ^ u);
        col[3] = Gf2p8(a3 ^ v);
    }
    mix_columns(c);
}

/// Adds round key `r` (16 shared bytes at `16 r` of `keys`) to every block.
pub fn add_round_key(state: &mut RssVec<Gf2p8>, keys: &RssVec<Gf2p8>, r: usize) {
    let k = 16 * r;
    for (s, key) in [
        (&mut state.first, &keys.first),
        (&mut state.second, &keys.second),
    ] {
        let Some(rk) = key.get(k..k + 16) else {
            return;
        };
        for block in s.chunks_exact_mut(16) {
            for (b, kb) in block.iter_mut().zip(rk) {
                b.0 ^= kb.0;
            }
        }
    }
}

/// Applies a local byte-wise function to both components.
pub fn local(state: &mut RssVec<Gf2p8>, f: fn(&mut [Gf2p8])) {
    f(&mut state.first);
    f(&mut state.second);
}

/// Adds a public byte to position `pos` of a small shared vector (e.g. Rcon).
pub fn add_public_byte(x: &mut RssVec<Gf2p8>, party: PartyId, pos: usize, c: u8) {
    let slot = match party {
        PartyId::P1 => x.first.get_mut(pos),
        PartyId::P2 => None,
        PartyId::P3 => x.second.get_mut(pos),
    };
    if let Some(b) = slot {
        b.0 ^= c;
    }
}
