//! The AES round functions on replicated shares, written once for every S-box protocol
//! (PROTOCOLS.md §3). The state of `n` blocks is `16 n` shared bytes, each block in FIPS-197
//! order (byte `k` is row `k mod 4`, column `k / 4`).

use rayon::prelude::*;
use triskele_engine::{EngineError, Party, SecurityModel};
use triskele_field::aes_round::{self, BlockStep};
use triskele_field::{Gf2p8, LinearMap8};
use triskele_share::{PartyId, RssVec};

use crate::sbox::{LayerLink, SboxProtocol};

/// The AES affine constant.
const AFFINE_CONST: Gf2p8 = Gf2p8(0x63);

/// SubBytes: inversion by the protocol, then the affine map `A(x) + 0x63` (local). A layer on
/// its own ([`LayerLink::SINGLE`]).
pub fn sub_bytes<M: SecurityModel, S: SboxProtocol<M>>(
    party: &mut Party<M>,
    sbox: &mut S,
    x: &mut RssVec<Gf2p8>,
) -> Result<(), EngineError> {
    sub_bytes_linked(party, sbox, x, LayerLink::SINGLE)
}

/// [`sub_bytes`] as one layer of a cipher ([`SboxProtocol::invert_linked`]).
pub fn sub_bytes_linked<M: SecurityModel, S: SboxProtocol<M>>(
    party: &mut Party<M>,
    sbox: &mut S,
    x: &mut RssVec<Gf2p8>,
    link: LayerLink<'_>,
) -> Result<(), EngineError> {
    sbox.invert_linked(party, x, link)?;
    // A layer's records are complete: verify a due segment (malicious model).
    party.checkpoint()?;
    x.map_components(|c| LinearMap8::AES_A.apply_in_place(c));
    x.add_constant_scalar(party.id(), AFFINE_CONST);
    Ok(())
}

/// InvSubBytes: `(A^-1(y + 0x63))^-1`. A layer on its own ([`LayerLink::SINGLE`]).
pub fn inv_sub_bytes<M: SecurityModel, S: SboxProtocol<M>>(
    party: &mut Party<M>,
    sbox: &mut S,
    x: &mut RssVec<Gf2p8>,
) -> Result<(), EngineError> {
    inv_sub_bytes_linked(party, sbox, x, LayerLink::SINGLE)
}

/// [`inv_sub_bytes`] as one layer of a cipher ([`SboxProtocol::invert_linked`]).
pub fn inv_sub_bytes_linked<M: SecurityModel, S: SboxProtocol<M>>(
    party: &mut Party<M>,
    sbox: &mut S,
    x: &mut RssVec<Gf2p8>,
    link: LayerLink<'_>,
) -> Result<(), EngineError> {
    x.add_constant_scalar(party.id(), AFFINE_CONST);
    x.map_components(|c| LinearMap8::AES_A_INV.apply_in_place(c));
    sbox.invert_linked(party, x, link)?;
    party.checkpoint()
}

/// Undoes the local steps between two encryption layers on a replicated sharing
/// ([`crate::sbox::LayerInput::Chained`]): maps the input `x` of the layer after round `r`'s
/// key addition back to the previous layer's inversion output
/// `A^-1(InvShiftRows(InvMixColumns(x + k_r)) + 0x63)` (PROTOCOLS.md §5.7).
pub fn undo_encrypt_round(x: &mut RssVec<Gf2p8>, keys: &RssVec<Gf2p8>, r: usize, party: PartyId) {
    add_round_key(x, keys, r);
    local(x, inv_mix_columns);
    local(x, inv_shift_rows);
    x.add_constant_scalar(party, AFFINE_CONST);
    x.map_components(|c| LinearMap8::AES_A_INV.apply_in_place(c));
}

/// The same for the inverse cipher: between the layer of round `r` and the next one the state
/// goes through AddRoundKey(`r`), InvMixColumns, InvShiftRows and `A^-1(· + 0x63)`; this maps
/// the next layer's input `x` back to `MixColumns(ShiftRows(A(x) + 0x63)) + k_r`.
pub fn undo_decrypt_round(x: &mut RssVec<Gf2p8>, keys: &RssVec<Gf2p8>, r: usize, party: PartyId) {
    x.map_components(|c| LinearMap8::AES_A.apply_in_place(c));
    x.add_constant_scalar(party, AFFINE_CONST);
    local(x, shift_rows);
    local(x, mix_columns);
    add_round_key(x, keys, r);
}

/// Blocks per parallel work item of the local layers.
const PAR_BLOCKS: usize = 1024;

/// ShiftRows on every block of one component: row `r` rotated left by `r`.
pub fn shift_rows(c: &mut [Gf2p8]) {
    aes_round::apply(BlockStep::ShiftRows, c);
}

/// InvShiftRows: row `r` rotated right by `r`.
pub fn inv_shift_rows(c: &mut [Gf2p8]) {
    aes_round::apply(BlockStep::InvShiftRows, c);
}

/// MixColumns on every column of one component (circulant `(2,3,1,1)`).
pub fn mix_columns(c: &mut [Gf2p8]) {
    aes_round::apply(BlockStep::MixColumns, c);
}

/// InvMixColumns (circulant `(e,b,d,9)`).
pub fn inv_mix_columns(c: &mut [Gf2p8]) {
    aes_round::apply(BlockStep::InvMixColumns, c);
}

/// Adds round key `r` (16 shared bytes at `16 r` of `keys`) to every block.
pub fn add_round_key(state: &mut RssVec<Gf2p8>, keys: &RssVec<Gf2p8>, r: usize) {
    let rk = |key: &[Gf2p8]| -> Option<[Gf2p8; 16]> {
        let s = key.get(16 * r..16 * r + 16)?;
        Some(core::array::from_fn(|k| s[k]))
    };
    let (Some(k1), Some(k2)) = (rk(&keys.first), rk(&keys.second)) else {
        return;
    };
    for (s, key) in [(&mut state.first, k1), (&mut state.second, k2)] {
        s.par_chunks_mut(16 * PAR_BLOCKS).for_each(|c| {
            for block in c.chunks_exact_mut(16) {
                for (b, kb) in block.iter_mut().zip(key.iter()) {
                    b.0 ^= kb.0;
                }
            }
        });
    }
}

/// The linear part of a middle encryption round in one pass over the state:
/// ShiftRows, MixColumns, AddRoundKey(r).
pub fn round_linear(state: &mut RssVec<Gf2p8>, keys: &RssVec<Gf2p8>, r: usize) {
    for (s, key) in [
        (&mut state.first, &keys.first),
        (&mut state.second, &keys.second),
    ] {
        let Some(rk) = key.get(16 * r..16 * r + 16) else {
            return;
        };
        let rk: [u8; 16] = core::array::from_fn(|k| rk[k].0);
        s.par_chunks_mut(16 * PAR_BLOCKS)
            .for_each(|c| aes_round::apply(BlockStep::Round(rk), c));
    }
}

/// Applies a local block-wise function to both components, in parallel.
pub fn local(state: &mut RssVec<Gf2p8>, f: fn(&mut [Gf2p8])) {
    for c in [&mut state.first, &mut state.second] {
        c.par_chunks_mut(16 * PAR_BLOCKS).for_each(f);
    }
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

#[cfg(test)]
mod tests {
    use super::*;

    // MixColumns, ShiftRows and their inverses are checked against FIPS-197 on every backend
    // in `triskele_field::aes_round`.

    /// The undo maps of [`crate::sbox::LayerInput::Chained`] invert the local steps between two
    /// layers, on a replicated sharing with nonzero components everywhere (`P_1` and `P_3`,
    /// who add the public constants, and `P_2`, who does not).
    #[test]
    fn undo_maps_invert_the_steps_between_layers() {
        use triskele_share::{deal, reconstruct};
        let mut rng = <rand_chacha::ChaCha20Rng as rand::SeedableRng>::seed_from_u64(5);
        let y: Vec<Gf2p8> = (0..48u32).map(|k| Gf2p8((k * 37 + 11) as u8)).collect();
        let keys: Vec<Gf2p8> = (0..48u32).map(|k| Gf2p8((k * 101 + 7) as u8)).collect();
        let (ys, ks) = (deal(&y, &mut rng), deal(&keys, &mut rng));
        let r = 2;
        // Encryption: A(y) + 0x63, ShiftRows, MixColumns, + k_r; decryption: + k_r,
        // InvMixColumns, InvShiftRows, A^-1(. + 0x63).
        type Step = fn(&mut RssVec<Gf2p8>, &RssVec<Gf2p8>, PartyId);
        let enc: Step = |x, k, p| {
            x.map_components(|c| LinearMap8::AES_A.apply_in_place(c));
            x.add_constant_scalar(p, AFFINE_CONST);
            round_linear(x, k, 2);
        };
        let dec: Step = |x, k, p| {
            add_round_key(x, k, 2);
            local(x, inv_mix_columns);
            local(x, inv_shift_rows);
            x.add_constant_scalar(p, AFFINE_CONST);
            x.map_components(|c| LinearMap8::AES_A_INV.apply_in_place(c));
        };
        type Undo = fn(&mut RssVec<Gf2p8>, &RssVec<Gf2p8>, usize, PartyId);
        for (fwd, undo) in [
            (enc, undo_encrypt_round as Undo),
            (dec, undo_decrypt_round as Undo),
        ] {
            let mut shares = ys.clone();
            for (p, (s, k)) in PartyId::ALL.into_iter().zip(shares.iter_mut().zip(&ks)) {
                fwd(s, k, p);
            }
            let moved = reconstruct(&shares);
            assert_ne!(moved.as_deref(), Some(&y[..]));
            for (p, (s, k)) in PartyId::ALL.into_iter().zip(shares.iter_mut().zip(&ks)) {
                undo(s, k, r, p);
            }
            assert_eq!(reconstruct(&shares), Some(y.clone()));
        }
    }

    #[test]
    fn shift_rows_moves_rows_left() {
        let mut b: Vec<Gf2p8> = (0..16).map(Gf2p8).collect();
        shift_rows(&mut b);
        // Row 1 (bytes 1, 5, 9, 13) rotated left by one: 5, 9, 13, 1.
        assert_eq!(
            b.iter().map(|x| x.0).collect::<Vec<_>>(),
            vec![0, 5, 10, 15, 4, 9, 14, 3, 8, 13, 2, 7, 12, 1, 6, 11]
        );
        inv_shift_rows(&mut b);
        assert_eq!(b, (0..16).map(Gf2p8).collect::<Vec<_>>());
    }
}
