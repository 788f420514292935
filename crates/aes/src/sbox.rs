//! GF(2^8)-inversion protocols ("S-box protocols", PROTOCOLS.md §4).
//!
//! Every protocol computes one layer of inversions `x -> x^-1` (with `0 -> 0`) on a vector of
//! replicated shares; the AES layer adds the affine part locally. A protocol may need
//! preprocessing for a known number of inversions before the online phase.

use triskele_engine::{EngineError, Party, SecurityModel};
use triskele_field::{Field, Gf2p8, LinearMap8};
use triskele_share::RssVec;

pub mod bool_circuit;
pub mod chida;
pub mod gf4_circuit;
pub mod lut16;
pub mod lut256;
pub mod lut256_ss;
pub mod mal_chida;
pub mod mal_chida_bucket;
pub mod mal_lut16;
pub mod mal_lut256_ss;
mod ohv16;
mod stored;
mod tower;

/// Where the input of an S-box layer comes from ([`LayerLink`]).
#[derive(Clone, Copy)]
pub enum LayerInput<'a> {
    /// A proper replicated sharing that is not linked to an earlier layer (the first layer of
    /// a cipher, a key-schedule layer, a single layer).
    Fresh,
    /// Computed from the previous layer's inversion output by public local steps only (affine
    /// map, ShiftRows, MixColumns, round key). The function maps a **replicated** sharing of
    /// this layer's input back to the replicated sharing of the previous layer's inversion
    /// output (in place), undoing those steps.
    Chained(&'a dyn Fn(&mut RssVec<Gf2p8>)),
}

/// What the output of an S-box layer must be ([`LayerLink`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LayerOutput {
    /// A proper replicated sharing (the last layer of a cipher, key-schedule layers, single
    /// layers).
    Replicated,
    /// Anything the protocol keeps its state in: the next layer of the same cipher is
    /// [`LayerInput::Chained`] to this one.
    Chained,
}

/// How one S-box layer connects to the layers around it; filled in by the AES layer
/// ([`crate::cipher`]), which knows the round structure, the round keys and the direction.
#[derive(Debug, Clone, Copy)]
pub struct LayerLink<'a> {
    pub input: LayerInput<'a>,
    pub output: LayerOutput,
}

impl LayerLink<'_> {
    /// A layer on its own: fresh replicated input, replicated output.
    pub const SINGLE: LayerLink<'static> = LayerLink {
        input: LayerInput::Fresh,
        output: LayerOutput::Replicated,
    };
}

impl core::fmt::Debug for LayerInput<'_> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str(match self {
            LayerInput::Fresh => "Fresh",
            LayerInput::Chained(_) => "Chained(undo)",
        })
    }
}

/// One family of GF(2^8)-inversion protocols.
///
/// **State sharing.** Most protocols keep the state replicated. A protocol may instead keep it
/// additively (3,3)-shared in the **first** component of the [`RssVec`] (`lut256-ss`,
/// PROTOCOLS.md §4.5): that works because the first components of a replicated sharing are an
/// additive sharing (§1.7), and every local step of the AES layer (linear maps, round keys,
/// public constants, which only `P_1` adds to its first component) acts on the first component
/// exactly as it must on an additive share. Such a protocol reads only `x.first` in
/// [`SboxProtocol::invert`], writes its additive output there, and turns the state back into a
/// replicated sharing in [`SboxProtocol::to_replicated`] before anything is opened.
pub trait SboxProtocol<M: SecurityModel>: Send {
    /// Input-independent preprocessing for `n` inversions (default: none needed).
    fn preprocess(&mut self, party: &mut Party<M>, n: usize) -> Result<(), EngineError> {
        let _ = (party, n);
        Ok(())
    }

    /// Replaces every shared `x` by `x^-1` (`0^-1 = 0`). All elements form one layer.
    fn invert(&mut self, party: &mut Party<M>, x: &mut RssVec<Gf2p8>) -> Result<(), EngineError>;

    /// [`SboxProtocol::invert`] for a layer of a cipher, told by the AES layer how it connects
    /// to the layers around it ([`LayerLink`]). Default: plain [`SboxProtocol::invert`]; only
    /// protocols that exploit the AES structure (`mal-lut256-ss`, PROTOCOLS.md §5.7) use it.
    fn invert_linked(
        &mut self,
        party: &mut Party<M>,
        x: &mut RssVec<Gf2p8>,
        link: LayerLink<'_>,
    ) -> Result<(), EngineError> {
        let _ = link;
        self.invert(party, x)
    }

    /// Turns a state produced by this protocol back into a proper replicated sharing before it
    /// is opened (default: it already is one).
    fn to_replicated(
        &mut self,
        party: &mut Party<M>,
        x: &mut RssVec<Gf2p8>,
    ) -> Result<(), EngineError> {
        let _ = (party, x);
        Ok(())
    }

    /// Deferred checks before outputs are released (default: none).
    fn finalize(&mut self, party: &mut Party<M>) -> Result<(), EngineError> {
        let _ = party;
        Ok(())
    }
}

/// Appends `map` of entries `range` of `src` (both components) to `dst`.
pub(crate) fn append_mapped(
    dst: &mut RssVec<Gf2p8>,
    src: &RssVec<Gf2p8>,
    range: core::ops::Range<usize>,
    map: &LinearMap8,
) {
    for (d, s) in [(&mut dst.first, &src.first), (&mut dst.second, &src.second)] {
        let at = d.len();
        d.resize(at + range.len(), Gf2p8::ZERO);
        map.apply_slice(&s[range.clone()], &mut d[at..]);
    }
}

/// Appends entries `range` of `src` (both components) to `dst`.
pub(crate) fn append_range(
    dst: &mut RssVec<Gf2p8>,
    src: &RssVec<Gf2p8>,
    range: core::ops::Range<usize>,
) {
    dst.first.extend_from_slice(&src.first[range.clone()]);
    dst.second.extend_from_slice(&src.second[range]);
}
