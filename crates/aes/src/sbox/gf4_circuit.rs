//! `gf4-circuit`: GF(2^8) inversion through the tower field `GF((2^4)^2)` — Protocol 3 of
//! MAESTRO (Morita et al., USENIX Security '25, ePrint 2024/1317) with the `GF(2^4)` inversion
//! computed as a circuit `d^-1 = d^2 · d^4 · d^8`; PROTOCOLS.md §4.2.
//!
//! 1. Local: `(a_h, a_l) = φ(x)` (the WOL isomorphism, component-wise).
//! 2. Round 1: `p = a_h · a_l`; local norm `d = λ a_h^2 + p + a_l^2` and its squares.
//! 3. Round 2: `d^6 = d^2 · d^4`. Round 3: `d^-1 = d^14 = d^6 · d^8`.
//! 4. Round 4 (both products in one message): `b_h = a_h · d^-1`, `b_l = (a_h + a_l) · d^-1`.
//! 5. Local: `x^-1 = φ^-1(b_h Y + b_l)`.
//!
//! Every product is the engine's semi-honest multiplication over [`Gf2p4`] (Araki et al.,
//! reshared to the previous party). No preprocessing. Cost per inversion and party: 5
//! `GF(2^4)` elements = 2.5 bytes to the previous party, 4 rounds (AES-128: 400 B/block,
//! 40 rounds).
//!
//! # Active security (PROTOCOLS.md §5.5, §5.6)
//!
//! The same code runs under [`Malicious`]; the online messages are identical and the
//! finalize phase is Protocol 2 `Verify` over the recorded triples plus a compare-view
//! ([`Party::verify_recorded`]).
//!
//! * `mal-gf4-circuit` ([`Gf4Circuit`]): all 5 products are checked as `GF(2^4)` products
//!   in their byte form `ψ` (lifted by `E_8`), two products with a common factor as one
//!   relation in `GF(2^8)` with a fixed `t` outside `ψ(GF(2^4))` (`all_products`): round 4's
//!   two (factor `d^-1`), `ψ(d^-1) (ψ(a_h) + t ψ(a_h + a_l)) = ψ(b_h) + t ψ(b_l)`, and rounds 2
//!   and 3 (factor `d^2`, with `d^-1 = d^2 (d^6)^2` for the right `d^6`), `ψ(d^2) (ψ(d^4) + t
//!   ψ(d^6)^2) = ψ(d^6) + t ψ(d^-1)`: `L = 3 ·` inversions (AES-128: 480 per block;
//!   \[DEV\]: PROTOCOLS.md §5.5 and §6.4 have 5 and 800).
//! * `mal-gf4-circuit-opt`, CSV `mal-gf4-circuit-gf4p4` ([`Gf4CircuitGf4p4`]): for the
//!   round-1 and round-4 products one relation over
//!   `GF(2^16) = GF(2^4)[α]/(α^4+α^2+uα+u^2)` is recorded,
//!   `(a_h + α a_l) · (a_l + α d^-1) = p + α (b_h + a_l^2) + α^2 (b_l + b_h)`,
//!   embedded into `GF(2^64)` by `φ_0`, `α ↦ A` (`triskele_field::embed::gf4p4_slice`). The
//!   α-degree is at most 2, so no reduction occurs and it holds iff `p = a_h a_l`,
//!   `b_h = a_h d^-1` and `b_l + b_h = a_l d^-1` all hold. The round-2 and round-3 products
//!   `d^6 = d^2 · d^4` and `d^-1 = d^6 · d^8` are mal-gf4-circuit's relation of rounds 2 and
//!   3 (the norm relation, below; \[DEV\]: PROTOCOLS.md §5.5 checks them as two `GF(2^4)`
//!   triples), so every product of the circuit is checked with `L = 2 ·` inversions (AES-128:
//!   320 per block; PROTOCOLS.md §6.4: 480). The gf4p4 relations are a custom triple source
//!   (`Gf4p4Nibbles`) over the packed vectors that mal-gf4-circuit stores (below): each part
//!   `Verify` reads (the pair form of `x` and `y`, the tower coordinates of `z`) is a sum of
//!   byte maps of the nibbles of `a_h`, `a_l`, `d`, `d^-1`, `b_h` and `b_l`, formed as it
//!   streams over them (a lifted `GF(2^64)` triple would take 48 bytes per inversion and
//!   party), and `Verify`'s k-ary first level takes them in the pair form, nearly as bytes,
//!   with blocks of eight. The norm relations are bytes, which a run of their
//!   own takes with blocks of 32 (`Verify` checks records of different kinds in runs of their
//!   own kind from `2^16` of each on: at 10,000 blocks this took the finalize from about 0.023
//!   to 0.018 s against the norm relation in the gf4p4 shape, `(d^2 + α d^6) · (d^4 + α d^8) =
//!   d^6 + α^2 d^-1`, in one run with the others; docs/PERFORMANCE.md, "Runs by kind").
//!
//! Every product is computed with [`Party::mul_covered`] (the messages of [`Party::mul`]).
//! mal-gf4-circuit records its `GF(2^4)` triples as the layer's own vectors (`Packed::relations`:
//! the operands and products it computed anyway, the squares of `d` as byte maps of `d`, `p` and
//! `a_h + a_l` as sums of byte maps of `d`, `a_h` and `a_l`, packed two per byte, 7 bytes per
//! inversion and party, and taken to their byte form `ψ` as `Verify`
//! reads them; `super::stored`), the
//! triples `Party::mul` would have recorded (in blocks of instances, see `super::stored`),
//! instead of copies of each product's six share vectors. mal-gf4-circuit-opt stores the same
//! six vectors, so both variants' online phases are the same code: it reads its norm relation
//! from `d`, `d^6`, `d^-1` (`Packed::norm`) and its gf4p4 relations from the other three and
//! `d`, `d^-1` (`Gf4p4Nibbles`, which shares them). Until rev f02e8dd it wrote three byte
//! planes of the gf4p4 relations per component at the end of each layer (9 bytes per
//! inversion and party against 7; the memory the records take is most of what recording costs
//! the online phase), and its online phase at 10,000 blocks ran 7-10% longer than
//! mal-gf4-circuit's (docs/PERFORMANCE.md, "mal-gf4-circuit-opt over mal-gf4-circuit's
//! records").
//!
//! Soundness and finalize communication are those of [`triskele_engine::verify`]: a wrong
//! product survives a run of the check with probability at most `(2ℓ + 44)/2^64`,
//! `ℓ = ⌈log2 L⌉` (`(2ℓ + 88)/2^64` for runs of bytes only, which fold by 32; `(2ℓ + 4)/2^64`
//! for runs that halve from the first level), and all segments and runs of a batch of up to
//! `10^6` AES-256 blocks with less than `2^-43`.

use std::ops::Range;
use std::sync::{Arc, OnceLock};

use triskele_engine::verify::{LiftedTriples, Parts, TripleSource, ZPlanes};
use triskele_engine::{EngineError, Malicious, Party, SecurityModel, SemiHonest, GF2P4_TO_GF2P8};
use triskele_field::embed::{
    pair_of_nibbles, word_maps, ByteEmbedding, PairSlot, GF4P4_TABLES, PAIR_EMBEDDING,
};
use triskele_field::{Encode, Gf2p4, Gf2p64, Gf2p8, Gf4Tower, LinearMap8};
use triskele_share::RssVec;

use super::stored::{at, part, unpack_sums, At, PackedNibbles, RecordMemory, StoredRelations};
use super::SboxProtocol;
use crate::sbox::tower::{
    from_halves, last_round_pieces, left_operand, split_tower, square_powers, NibbleLinear,
};

/// The `gf4-circuit` protocol; under [`Malicious`] it is `mal-gf4-circuit` (all five products
/// recorded, as three relations).
#[derive(Debug, Default)]
pub struct Gf4Circuit {
    /// The memory of a malicious run's records.
    memory: RecordMemory,
}

/// `mal-gf4-circuit-opt`: the same circuit, checked with the norm relation and one gf4p4
/// relation per inversion (see the module documentation).
#[derive(Debug, Default)]
pub struct Gf4CircuitGf4p4 {
    /// The memory of the run's records.
    memory: RecordMemory,
}

/// What a malicious run checks (PROTOCOLS.md §5.5). Both variants store the same six packed
/// vectors per layer ([`Packed`]), so their online phases are the same code.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Record {
    /// mal-gf4-circuit: every product, in three byte relations ([`all_products`]).
    Products,
    /// mal-gf4-circuit-opt: `d^2 d^4` and `d^6 d^8` as the norm relation ([`Packed::norm`]),
    /// the other three products in one gf4p4 relation ([`Gf4p4Nibbles`]).
    Gf4p4,
}

const SQUARE: NibbleLinear = NibbleLinear::SQUARE;
const LAMBDA_SQUARE: NibbleLinear = NibbleLinear::LAMBDA_SQUARE;

impl SboxProtocol<SemiHonest> for Gf4Circuit {
    fn invert(
        &mut self,
        party: &mut Party<SemiHonest>,
        x: &mut RssVec<Gf2p8>,
    ) -> Result<(), EngineError> {
        invert(party, x, Record::Products, &mut self.memory)
    }
}

impl SboxProtocol<Malicious> for Gf4Circuit {
    fn preprocess(&mut self, _party: &mut Party<Malicious>, n: usize) -> Result<(), EngineError> {
        self.memory.expect(n);
        Ok(())
    }

    fn invert(
        &mut self,
        party: &mut Party<Malicious>,
        x: &mut RssVec<Gf2p8>,
    ) -> Result<(), EngineError> {
        invert(party, x, Record::Products, &mut self.memory)
    }

    fn finalize(&mut self, party: &mut Party<Malicious>) -> Result<(), EngineError> {
        party.verify_recorded()
    }
}

impl SboxProtocol<Malicious> for Gf4CircuitGf4p4 {
    fn preprocess(&mut self, _party: &mut Party<Malicious>, n: usize) -> Result<(), EngineError> {
        self.memory.expect(n);
        Ok(())
    }

    fn invert(
        &mut self,
        party: &mut Party<Malicious>,
        x: &mut RssVec<Gf2p8>,
    ) -> Result<(), EngineError> {
        invert(party, x, Record::Gf4p4, &mut self.memory)
    }

    fn finalize(&mut self, party: &mut Party<Malicious>) -> Result<(), EngineError> {
        party.verify_recorded()
    }
}

/// One term of a part of [`PairRelations`]: the plane it reads, its lift of the plane's bytes
/// into `GF(2^64)` and, for `x` and `y`, the byte map to the pair form
/// ([`triskele_field::embed::PAIR_EMBEDDING`]) of the same element.
pub(crate) struct Term {
    plane: usize,
    lift: ByteEmbedding,
    pair: LinearMap8,
}

/// How [`PairRelations`] read their parts from their packed planes: `x` one term, `y` and `z`
/// two (summed).
pub(crate) struct PairSpec {
    x: Term,
    y: [Term; 2],
    z: [(usize, ByteEmbedding); 2],
    /// The tower coordinates ([`word_maps`]) of `x`, `y`'s two terms and `z`'s two terms,
    /// computed once.
    words: fn() -> Option<&'static [[LinearMap8; 2]; 5]>,
}

impl PairSpec {
    /// `out` = the lifted `y` of the instances whose planes (from some start) are `pl`, zero
    /// past their end.
    fn lift_y<const P: usize>(&self, pl: [&[u8]; P], out: &mut [Gf2p64]) {
        let [t, u] = &self.y;
        let n = out.len().min(pl[0].len());
        let (head, tail) = out.split_at_mut(n);
        t.lift
            .apply_pair_slice(&u.lift, &pl[t.plane][..n], &pl[u.plane][..n], head);
        tail.fill(Gf2p64(0));
    }

    /// The lift of the instances whose planes (from some start) are `pl`, one component: `x`,
    /// `y` and, if given, `z`, zero past their end.
    fn lift_planes<const P: usize>(
        &self,
        pl: [&[u8]; P],
        x: &mut [Gf2p64],
        y: &mut [Gf2p64],
        z: Option<&mut [Gf2p64]>,
    ) {
        let n = x.len().min(pl[0].len());
        self.x.lift.apply_slice(&pl[self.x.plane][..n], &mut x[..n]);
        x[n..].fill(Gf2p64(0));
        self.lift_y(pl, y);
        if let Some(z) = z {
            let [(a, f), (b, g)] = &self.z;
            f.apply_pair_slice(g, &pl[*a][..n], &pl[*b][..n], &mut z[..n]);
            z[n..].fill(Gf2p64(0));
        }
    }
}

/// Component `c` of `out`: its `x`, `y` and, for [`Parts::Xyz`], `z`.
fn component(
    out: &mut LiftedTriples<Gf2p64>,
    c: usize,
    parts: Parts,
) -> (&mut [Gf2p64], &mut [Gf2p64], Option<&mut [Gf2p64]>) {
    let (x, y, z) = if c == 0 {
        (&mut out.x.first, &mut out.y.first, &mut out.z.first)
    } else {
        (&mut out.x.second, &mut out.y.second, &mut out.z.second)
    };
    (x, y, (parts == Parts::Xyz).then_some(&mut z[..]))
}

/// The tower coordinates of every term of `spec` (`None` if an image were outside
/// `GF(2^16)`).
fn words_of(spec: &PairSpec) -> Option<[[LinearMap8; 2]; 5]> {
    Some([
        word_maps(&spec.x.lift)?,
        word_maps(&spec.y[0].lift)?,
        word_maps(&spec.y[1].lift)?,
        word_maps(&spec.z[0].1)?,
        word_maps(&spec.z[1].1)?,
    ])
}

/// Relations in `GF(2^16) = GF(2^4)[α]/(α^4+α^2+uα+u^2)` whose `x` and `y` have `α`-degree at
/// most 1 and `z` at most 2, embedded by `φ_0`, `α ↦ A` (PROTOCOLS.md §2.4, [`GF4P4_TABLES`])
/// while `Verify` streams over them, kept as packed planes (one byte per instance, two
/// nibbles) from which each part is a sum of byte maps ([`PairSpec`]). With `α`-degree at most
/// 2 nothing is reduced, so a relation holds iff the coefficient identities of its `α`-powers
/// hold. Triple `k` is instance `k`. They give `Verify` the word form (tower coordinates), the
/// pair form of `x` and `y` and the planes of `z`, so its k-ary first level takes them nearly
/// as bytes.
pub(crate) struct PairRelations<const P: usize> {
    /// Per component, `P` planes with a byte per instance.
    planes: [[Vec<u8>; P]; 2],
    spec: &'static PairSpec,
}

/// The gf4p4 relations of a batch (PROTOCOLS.md §5.5),
/// `(a_h + α a_l) · (a_l + α d^-1) = p + α (b_h + a_l^2) + α^2 (b_l + b_h)`, kept compact: the
/// seven nibbles of `X`, `Y`, `Z` packed in three bytes per instance and component (6 bytes per
/// instance and party, against 48 for a lifted `GF(2^64)` triple; one byte plane per byte, so
/// that packing is a byte-wise loop the compiler vectorises). Planes per component: `a_h ‖
/// a_l`, `d^-1 ‖ p`, `z_1 ‖ z_2` (high ‖ low nibble) with `z_1 = b_h + a_l^2`, `z_2 = b_l +
/// b_h`. The embedded relation holds iff
/// `p = a_h a_l`, `b_h = a_h d^-1` and `b_l + b_h = a_l d^-1`.
pub(crate) type Gf4p4Relations = PairRelations<3>;

/// The parts of a gf4p4 relation as maps of its planes (`T_i` = [`GF4P4_TABLES`]`[i]`): `X =
/// T_0(a_h) + T_1(a_l)`, `Y = T_0(a_l) + T_1(d^-1)`, `Z = T_0(p) + T_1(z_1) + T_2(z_2)`.
static GF4P4_SPEC: PairSpec = PairSpec {
    x: Term {
        plane: 0,
        lift: lift_after(&X_OF_A, &GF4P4_LOAD),
        pair: LinearMap8::IDENTITY,
    },
    y: [
        Term {
            plane: 0,
            lift: lift_after(&Y_OF_A, &GF4P4_LOAD),
            pair: Y_PAIR_OF_A.compose(&GF4P4_LOAD),
        },
        Term {
            plane: 1,
            lift: Y_OF_D,
            pair: Y_PAIR_OF_D,
        },
    ],
    z: [(1, Z_OF_D), (2, Z_OF_W)],
    words: || {
        static W: OnceLock<Option<[[LinearMap8; 2]; 5]>> = OnceLock::new();
        W.get_or_init(|| words_of(&GF4P4_SPEC)).as_ref()
    },
};

impl Gf4p4Relations {
    /// The relations of `n` instances: `left` holds `[[a_h]]` then `[[a_h + a_l]]` and `b`
    /// holds `[[b_h]]` then `[[b_l]]` (`n` each, the operands and result of the protocols'
    /// last multiplication), `p` the protocol's share of `a_h a_l` (the `α^0` coefficient).
    #[cfg(test)]
    pub(crate) fn new(
        left: &RssVec<Gf2p4>,
        a_l: &RssVec<Gf2p4>,
        dinv: &RssVec<Gf2p4>,
        p: &RssVec<Gf2p4>,
        b: &RssVec<Gf2p4>,
    ) -> Self {
        fn plane<'a>(d: &'a [Gf2p4], p: &'a [Gf2p4]) -> [(&'static LinearMap8, &'a [u8]); 2] {
            let bytes = Gf2p4::slice_as_bytes;
            [(&NIBBLE_HIGH, bytes(d)), (&NIBBLE_LOW, bytes(p))]
        }
        Self::with_dinv_p(
            left,
            a_l,
            b,
            [plane(&dinv.first, &p.first), plane(&dinv.second, &p.second)],
            &mut RecordMemory::default(),
        )
    }

    /// The capacities of the vectors that [`Gf4p4Relations::with_dinv_p`] takes from its
    /// [`RecordMemory`] for `n` instances: three planes per component.
    pub(crate) fn capacities(n: usize) -> [usize; 6] {
        [n; 6]
    }

    /// [`Gf4p4Relations::new`] with the second plane per component, `d^-1 ‖ p`, given as a
    /// sum of byte maps of byte slices (`n` each at least): `NIBBLE_HIGH(d^-1)` and terms whose
    /// images lie in the low nibble and add up to `p`, so that a protocol that forms `p` by
    /// byte maps need not store it first. The planes' memory is taken from `memory`.
    pub(crate) fn with_dinv_p<const N: usize>(
        left: &RssVec<Gf2p4>,
        a_l: &RssVec<Gf2p4>,
        b: &RssVec<Gf2p4>,
        dinv_p: [[(&LinearMap8, &[u8]); N]; 2],
        memory: &mut RecordMemory,
    ) -> Self {
        // Byte maps (GFNI where the CPU has it) of the nibbles; the high nibbles are ignored.
        let mut pack =
            |a_h: &[Gf2p4], a_l: &[Gf2p4], b: &[Gf2p4], dp: [(&LinearMap8, &[u8]); N]| {
                let n = a_l.len();
                fn bytes(v: &[Gf2p4], r: Range<usize>) -> &[u8] {
                    &Gf2p4::slice_as_bytes(v)[r]
                }
                let (b_h, b_l) = b.split_at(n);
                // One pass over the instances for the three planes, so that each input is read
                // from memory once.
                written(memory, n, |r, [x, y, z]| {
                    // `X_PAIR((h << 4) | (l & 15))`.
                    GF4P4_X_HIGH.apply_pair_bytes(
                        &GF4P4_X_LOW,
                        bytes(a_h, r.clone()),
                        bytes(a_l, r.clone()),
                        x,
                    );
                    LinearMap8::apply_sum_bytes(dp.map(|t| t.0), dp.map(|t| &t.1[r.clone()]), y);
                    // `((b_h + a_l^2) << 4) | (b_h + b_l)`.
                    LinearMap8::apply_sum_bytes(
                        [&NIBBLE_BOTH, &SQUARE_HIGH, &NIBBLE_LOW],
                        [bytes(b_h, r.clone()), bytes(a_l, r.clone()), bytes(b_l, r)],
                        z,
                    );
                })
            };
        let [d1, d2] = dinv_p;
        PairRelations {
            planes: [
                pack(&left.first, &a_l.first, &b.first, d1),
                pack(&left.second, &a_l.second, &b.second, d2),
            ],
            spec: &GF4P4_SPEC,
        }
    }
}

impl<const P: usize> PairRelations<P> {
    /// Records the relations for the finalize check (a no-op for models without checks).
    pub(crate) fn record<M: SecurityModel>(self, party: &mut Party<M>) {
        if M::MALICIOUS {
            party.model().record_source(Arc::new(self));
        }
    }

    /// The planes of component `c` at `start .. start + n`, if that is inside the source.
    fn range(&self, c: usize, start: usize, n: usize) -> Option<[&[u8]; P]> {
        let range = start..start.checked_add(n)?;
        let planes = self.planes[c].each_ref().map(|v| v.get(range.clone()));
        if planes.iter().any(Option::is_none) {
            return None;
        }
        Some(planes.map(|p| p.unwrap_or(&[])))
    }

    /// The planes of component `c` from `start` (empty past the end).
    fn planes_from(&self, c: usize, start: usize) -> [&[u8]; P] {
        self.planes[c]
            .each_ref()
            .map(|v| v.get(start..).unwrap_or(&[]))
    }
}

impl<const P: usize> TripleSource<Gf2p64> for PairRelations<P> {
    fn len(&self) -> usize {
        self.planes[0][0].len()
    }

    /// All planes of both components (what a verification segment counts).
    fn stored_bytes(&self) -> Option<usize> {
        Some(self.planes.iter().flatten().map(Vec::len).sum())
    }

    /// `y` by its byte maps, so `Verify` recomputes it instead of storing it.
    fn lift_y(&self, start: usize, out: [&mut [Gf2p64]; 2]) -> bool {
        for (c, o) in out.into_iter().enumerate() {
            self.spec.lift_y(self.planes_from(c, start), o);
        }
        true
    }

    /// `Σ c z` from the planes, without lifting.
    fn z_sums(&self, start: usize, c: &[Gf2p64]) -> Option<[Gf2p64; 2]> {
        let [(a, f), (b, g)] = &self.spec.z;
        Some([0, 1].map(|comp| {
            let pl = self.planes_from(comp, start);
            let n = c.len().min(pl[0].len());
            let [x, y] =
                ByteEmbedding::inner_products(&c[..n], [(f, &pl[*a][..n]), (g, &pl[*b][..n])]);
            x + y
        }))
    }

    /// The parts in the tower `GF(2^16) = GF(2^8)[t]`, which contains the embedding's image:
    /// the terms' maps as pairs of byte maps ([`word_maps`]).
    fn load_words(&self, part: usize, start: usize, lo: &mut [u8], hi: &mut [u8]) -> bool {
        let Some(w) = (self.spec.words)() else {
            return false;
        };
        let n = lo.len().min(hi.len());
        if n == 0 {
            // The probe whether the source has words (asked per row by a concatenation).
            return true;
        }
        let Some(pl) = self.range(part % 2, start, n) else {
            // Outside the source (not asked for by Verify): zeros.
            lo.fill(0);
            hi.fill(0);
            return true;
        };
        let spec = self.spec;
        for (out, k) in [(&mut lo[..n], 0), (&mut hi[..n], 1)] {
            match part / 2 {
                0 => w[0][k].apply_bytes(pl[spec.x.plane], out),
                1 => w[1][k].apply_pair_bytes(
                    &w[2][k],
                    pl[spec.y[0].plane],
                    pl[spec.y[1].plane],
                    out,
                ),
                _ => w[3][k].apply_pair_bytes(&w[4][k], pl[spec.z[0].0], pl[spec.z[1].0], out),
            }
        }
        true
    }

    /// `x` and `y` in the pair form, by their terms' byte maps.
    fn load_pairs(&self, part: usize, start: usize, out: &mut [u8]) -> bool {
        let Some(pl) = self.range(part % 2, start, out.len()) else {
            return false;
        };
        let spec = self.spec;
        match part / 2 {
            0 => spec.x.pair.apply_bytes(pl[spec.x.plane], out),
            1 => {
                let [t, u] = &spec.y;
                t.pair
                    .apply_pair_bytes(&u.pair, pl[t.plane], pl[u.plane], out);
            }
            _ => return false,
        }
        true
    }

    /// `x` in the pair form, in place: the first plane stores it so.
    fn pairs_in_place(&self, part: usize, start: usize, k: usize) -> Option<&[u8]> {
        let x = &self.spec.x;
        if part >= 2 || x.pair != LinearMap8::IDENTITY {
            return None;
        }
        self.planes[part][x.plane].get(start..start.checked_add(k)?)
    }

    /// `z`'s two planes and their lifts, in place.
    fn z_planes(&self, part: usize, start: usize, k: usize) -> Option<ZPlanes<'_>> {
        if !(4..6).contains(&part) {
            return None;
        }
        let range = start..start.checked_add(k)?;
        let [(a, f), (b, g)] = &self.spec.z;
        let planes = &self.planes[part % 2];
        Some([
            (f, planes[*a].get(range.clone())?),
            (g, planes[*b].get(range)?),
        ])
    }

    fn lift(&self, start: usize, parts: Parts, out: &mut LiftedTriples<Gf2p64>) {
        for c in 0..2 {
            let (x, y, z) = component(out, c, parts);
            self.spec.lift_planes(self.planes_from(c, start), x, y, z);
        }
    }
}

/// mal-gf4-circuit-opt's gf4p4 relations, those of [`Gf4p4Relations`], read from the packed
/// vectors that both variants store ([`Packed`]: `a_h`, `a_l`, `d`, `d^-1` and `b = b_h ‖
/// b_l`, the first two and `b` its own, `d` and `d^-1` shared with the norm relation) instead
/// of three planes written for them in the online phase. Each part `Verify` asks for (the
/// pair form of `x` and `y`, the tower coordinates of every part, the lifts) is a sum of byte
/// maps of the six nibble streams `a_h`, `a_l`, `d`, `d^-1`, `b_h`, `b_l`
/// ([`NibbleForms`]), formed as it is read: 7 instead of 9 bytes per inversion and party
/// written online, and the same 3 bytes per inversion and component read per pass of the
/// check as the planes.
pub(crate) struct Gf4p4Nibbles {
    /// Instances.
    n: usize,
    /// `a_h`, `a_l`, `d`, `d^-1`, `b` ([`NIBBLE_VECTORS`]).
    vectors: [PackedNibbles; 5],
}

/// The vectors of [`Packed`] that [`Gf4p4Nibbles`] reads, in its order.
const NIBBLE_VECTORS: [usize; 5] = [A_H, A_L, D, DINV, B];

/// The nibble streams of [`Gf4p4Nibbles`]: `(vector, offset in multiples of n)` for `a_h`,
/// `a_l`, `d`, `d^-1`, `b_h`, `b_l`.
const STREAMS: [(usize, usize); 6] = [(0, 0), (1, 0), (2, 0), (3, 0), (4, 0), (4, 1)];

/// The three planes of [`Gf4p4Relations`] (`a_h ‖ a_l` in the pair form, `d^-1 ‖ p`, `z_1 ‖
/// z_2`) as byte maps of the streams ([`STREAMS`], one nibble per byte), as
/// [`Gf4p4Relations::with_dinv_p`] packs them: `p = d + λ a_h^2 + a_l^2`, `z_1 = b_h + a_l^2`,
/// `z_2 = b_l + b_h`.
const PLANE_MAPS: [[LinearMap8; 6]; 3] = {
    let z = LinearMap8::ZERO;
    [
        [GF4P4_X_HIGH, GF4P4_X_LOW, z, z, z, z],
        [
            NIBBLE_LAMBDA_SQUARE,
            NIBBLE_SQUARE,
            NIBBLE_LOW,
            NIBBLE_HIGH,
            z,
            z,
        ],
        [z, SQUARE_HIGH, z, z, NIBBLE_BOTH, NIBBLE_LOW],
    ]
};

/// Entries per piece in which [`Gf4p4Nibbles`] forms a part (its buffers are on the stack).
const NIBBLE_PIECE: usize = 2048;

/// The byte maps of the streams ([`STREAMS`]) whose sum is each form of a gf4p4 relation's
/// parts: a map of the planes composed with [`PLANE_MAPS`] and summed per stream.
struct NibbleForms {
    /// `x` and `y` in the pair form.
    pairs: [[LinearMap8; 6]; 2],
    /// The tower coordinates (low, high) of `x`, `y` and `z`.
    words: [[[LinearMap8; 6]; 2]; 3],
}

/// The stream maps of `Σ_t m_t(P_{plane_t})` for the terms `(plane_t, m_t)`.
fn stream_maps(terms: &[(usize, LinearMap8)]) -> [LinearMap8; 6] {
    core::array::from_fn(|s| {
        LinearMap8::from_basis_images(core::array::from_fn(|j| {
            terms.iter().fold(0, |acc, (plane, m)| {
                acc ^ m.apply_byte(PLANE_MAPS[*plane][s].apply_byte(1 << j))
            })
        }))
    })
}

/// [`NibbleForms`] of [`GF4P4_SPEC`], formed once (`None` if it had no word form).
fn nibble_forms() -> Option<&'static NibbleForms> {
    static F: OnceLock<Option<NibbleForms>> = OnceLock::new();
    F.get_or_init(|| {
        let spec = &GF4P4_SPEC;
        let w = (spec.words)()?;
        let [y0, y1] = &spec.y;
        let [(z0, _), (z1, _)] = &spec.z;
        Some(NibbleForms {
            pairs: [
                stream_maps(&[(spec.x.plane, spec.x.pair)]),
                stream_maps(&[(y0.plane, y0.pair), (y1.plane, y1.pair)]),
            ],
            words: [
                [0, 1].map(|k| stream_maps(&[(spec.x.plane, w[0][k])])),
                [0, 1].map(|k| stream_maps(&[(y0.plane, w[1][k]), (y1.plane, w[2][k])])),
                [0, 1].map(|k| stream_maps(&[(*z0, w[3][k]), (*z1, w[4][k])])),
            ],
        })
    })
    .as_ref()
}

/// `out[i] ^= src[i]`.
fn xor_into(out: &mut [u8], src: &[u8]) {
    for (o, v) in out.iter_mut().zip(src) {
        *o ^= v;
    }
}

impl Gf4p4Nibbles {
    /// Records the relations for the finalize check (a no-op for models without checks).
    fn record<M: SecurityModel>(self, party: &mut Party<M>) {
        if M::MALICIOUS {
            party.model().record_source(Arc::new(self));
        }
    }

    /// The relations of `n` instances over `packed`'s vectors (clones of which share their
    /// memory); refused if one is missing or shorter than `n` entries (`b`: `2 n`).
    fn new(n: usize, packed: &Packed) -> Result<Self, EngineError> {
        let got = NIBBLE_VECTORS.map(|k| packed.0[k].clone());
        let count = got.iter().flatten().count();
        let [Some(a_h), Some(a_l), Some(d), Some(dinv), Some(b)] = got else {
            return Err(EngineError::LengthMismatch {
                expected: NIBBLE_VECTORS.len(),
                got: count,
            });
        };
        let vectors = [a_h, a_l, d, dinv, b];
        for (v, need) in vectors.iter().zip([n, n, n, n, 2 * n]) {
            if v.len() < need {
                return Err(EngineError::LengthMismatch {
                    expected: need,
                    got: v.len(),
                });
            }
        }
        Ok(Gf4p4Nibbles { n, vectors })
    }

    /// `out[i] = Σ_s maps[s](stream_s[start + i])` in component `c` ([`Self::form_each`] with
    /// one output).
    fn form(&self, c: usize, maps: &[LinearMap8; 6], start: usize, out: &mut [u8]) -> bool {
        self.form_each(c, [maps], start, [out])
    }

    /// `outs[o][i] = Σ_s maps[o][s](stream_s[start + i])` in component `c`, for `i` below the
    /// shortest output: the streams with a non-zero map in one pass ([`unpack_sums`]), each
    /// read once for all outputs; `false` (nothing written) if the range is not inside the
    /// relations.
    fn form_each<const O: usize>(
        &self,
        c: usize,
        maps: [&[LinearMap8; 6]; O],
        start: usize,
        outs: [&mut [u8]; O],
    ) -> bool {
        let n = outs.iter().map(|o| o.len()).min().unwrap_or(0);
        if start.checked_add(n).is_none_or(|end| end > self.n) {
            return false;
        }
        let mut outs = outs.map(|o| &mut o[..n]);
        // The streams in two groups by the parity of their start (`b_l` of an odd `n` starts
        // unlike the others): a pass for each.
        let mut runs = [[(&[][..], 0); 6]; 2];
        let mut term_maps = [[[&LinearMap8::ZERO; O]; 6]; 2];
        let mut count = [0; 2];
        for (s, (v, k)) in STREAMS.iter().enumerate() {
            if maps.iter().all(|m| m[s] == LinearMap8::ZERO) {
                continue;
            }
            let first = start + k * self.n;
            let g = usize::from(first % 2 != start % 2);
            runs[g][count[g]] = (self.vectors[*v].comp(c), first);
            term_maps[g][count[g]] = maps.map(|m| &m[s]);
            count[g] += 1;
        }
        if count[0] == 0 && count[1] == 0 {
            for o in outs {
                o.fill(0);
            }
            return true;
        }
        let g = usize::from(count[0] == 0);
        let formed = unpack_sums(
            &runs[g][..count[g]],
            &term_maps[g][..count[g]],
            outs.each_mut().map(|o| &mut **o),
        );
        if g == 0 && count[1] > 0 {
            let mut other = [(); O].map(|()| vec![0u8; n]);
            let added = unpack_sums(
                &runs[1][..count[1]],
                &term_maps[1][..count[1]],
                other.each_mut().map(|o| &mut o[..]),
            );
            for (o, v) in outs.iter_mut().zip(&other) {
                xor_into(o, v);
            }
            return formed && added;
        }
        formed
    }

    /// The three planes of [`Gf4p4Relations`] of component `c` for the instances from `start`
    /// (`out[0].len()` of them, all inside).
    fn planes(&self, c: usize, start: usize, out: [&mut [u8]; 3]) {
        for (maps, o) in PLANE_MAPS.iter().zip(out) {
            self.form(c, maps, start, o);
        }
    }
}

impl TripleSource<Gf2p64> for Gf4p4Nibbles {
    fn len(&self) -> usize {
        self.n
    }

    /// `a_h`, `a_l` and `b`, both components (`d` and `d^-1` are counted by the norm
    /// relation, which shares them).
    fn stored_bytes(&self) -> Option<usize> {
        Some(
            [0, 1, 4]
                .iter()
                .map(|&k| self.vectors[k].stored_bytes())
                .sum(),
        )
    }

    /// The lift by the planes and [`GF4P4_SPEC`]'s maps, as [`Gf4p4Relations`] lifts them.
    fn lift(&self, start: usize, parts: Parts, out: &mut LiftedTriples<Gf2p64>) {
        let mut pl = [[0u8; NIBBLE_PIECE]; 3];
        for c in 0..2 {
            let (x, y, mut z) = component(out, c, parts);
            let n = x.len().min(self.n.saturating_sub(start));
            for at in (0..n).step_by(NIBBLE_PIECE) {
                let k = NIBBLE_PIECE.min(n - at);
                let [p0, p1, p2] = &mut pl;
                self.planes(c, start + at, [&mut p0[..k], &mut p1[..k], &mut p2[..k]]);
                let r = at..at + k;
                GF4P4_SPEC.lift_planes(
                    pl.each_ref().map(|p| &p[..k]),
                    &mut x[r.clone()],
                    &mut y[r.clone()],
                    z.as_deref_mut().map(|z| &mut z[r]),
                );
            }
            // Zeros past the end (no planes).
            let none: [&[u8]; 3] = [&[]; 3];
            GF4P4_SPEC.lift_planes(none, &mut x[n..], &mut y[n..], z.map(|z| &mut z[n..]));
        }
    }

    /// `y` in the pair form, lifted by [`PAIR_EMBEDDING`].
    fn lift_y(&self, start: usize, out: [&mut [Gf2p64]; 2]) -> bool {
        let Some(forms) = nibble_forms() else {
            return false;
        };
        let mut buf = [0u8; NIBBLE_PIECE];
        for (c, o) in out.into_iter().enumerate() {
            let n = o.len().min(self.n.saturating_sub(start));
            let (head, tail) = o.split_at_mut(n);
            for (i, h) in head.chunks_mut(NIBBLE_PIECE).enumerate() {
                let b = &mut buf[..h.len()];
                self.form(c, &forms.pairs[1], start + i * NIBBLE_PIECE, b);
                PAIR_EMBEDDING.apply_slice(b, h);
            }
            tail.fill(Gf2p64(0));
        }
        true
    }

    /// The tower coordinates by the stream maps of [`NibbleForms::words`]; zeros outside
    /// (not asked for by `Verify`), as [`PairRelations`] gives them.
    fn load_words(&self, part: usize, start: usize, lo: &mut [u8], hi: &mut [u8]) -> bool {
        let Some(forms) = nibble_forms() else {
            return false;
        };
        let n = lo.len().min(hi.len());
        let Some([wl, wh]) = forms.words.get(part / 2) else {
            return false;
        };
        let (lo, hi) = (&mut lo[..n], &mut hi[..n]);
        if !self.form_each(part % 2, [wl, wh], start, [&mut *lo, &mut *hi]) {
            lo.fill(0);
            hi.fill(0);
        }
        true
    }

    /// `x` and `y` in the pair form, by the stream maps of [`NibbleForms::pairs`].
    fn load_pairs(&self, part: usize, start: usize, out: &mut [u8]) -> bool {
        let Some(forms) = nibble_forms() else {
            return false;
        };
        match forms.pairs.get(part / 2) {
            Some(maps) => self.form(part % 2, maps, start, out),
            None => false,
        }
    }
}

/// `K` vectors of `n` bytes, their memory taken from `memory`, that `fill(range, outs)`
/// writes range by range through buffers on the stack: their memory is written once, where
/// zeroed vectors are written twice (the zeros by the allocator, then the values), and a
/// range's inputs are read once for all `K`. Measured on the gf4p4 packing of every online
/// layer. The ranges go into the vectors past the cache (`extend_streaming`): the records are
/// read only by the finalize check.
fn written<const K: usize>(
    memory: &mut RecordMemory,
    n: usize,
    mut fill: impl FnMut(Range<usize>, [&mut [u8]; K]),
) -> [Vec<u8>; K] {
    const CHUNK: usize = 4096;
    let mut v = [(); K].map(|_| memory.take(n));
    let mut buf = [[0u8; CHUNK]; K];
    let mut start = 0;
    while start < n {
        let k = CHUNK.min(n - start);
        fill(start..start + k, buf.each_mut().map(|b| &mut b[..k]));
        for (v, b) in v.iter_mut().zip(&buf) {
            triskele_field::backend::extend_streaming(v, &b[..k]);
        }
        start += k;
    }
    v
}

/// The packing of [`Gf4p4Relations`] as byte maps of nibbles (bits 4..8 of the input
/// ignored): `x ↦ x << 4`, `x ↦ x`, `x ↦ (x << 4) | x` and `x ↦ x^2 << 4`.
pub(crate) const NIBBLE_HIGH: LinearMap8 =
    LinearMap8::from_basis_images([16, 32, 64, 128, 0, 0, 0, 0]);
const NIBBLE_LOW: LinearMap8 = LinearMap8::from_basis_images([1, 2, 4, 8, 0, 0, 0, 0]);
const NIBBLE_BOTH: LinearMap8 = LinearMap8::from_basis_images([17, 34, 68, 136, 0, 0, 0, 0]);
const SQUARE_HIGH: LinearMap8 = {
    let t = Gf2p4::SQUARE_TABLE;
    LinearMap8::from_basis_images([t[1] << 4, t[2] << 4, t[4] << 4, t[8] << 4, 0, 0, 0, 0])
};

/// `x ↦ λ x^2` and `x ↦ x^2` as byte maps of the low nibble ([`nibble_map`]).
pub(crate) const NIBBLE_LAMBDA_SQUARE: LinearMap8 = nibble_map(NibbleLinear::LAMBDA_SQUARE);
pub(crate) const NIBBLE_SQUARE: LinearMap8 = nibble_map(NibbleLinear::SQUARE);

/// A map of `GF(2^4)` as a byte map of the low nibble (the high nibble ignored).
const fn nibble_map(f: NibbleLinear) -> LinearMap8 {
    LinearMap8::from_basis_images([
        f.get(Gf2p4(1)),
        f.get(Gf2p4(2)),
        f.get(Gf2p4(4)),
        f.get(Gf2p4(8)),
        0,
        0,
        0,
        0,
    ])
}

/// The parts of a gf4p4 relation as maps of the packed bytes (`T_i` = [`GF4P4_TABLES`]`[i]`,
/// nibbles as in [`Gf4p4Relations`]): `X = T_0(a_h) + T_1(a_l)` from `a_h ‖ a_l`;
/// `Y = T_0(a_l) + T_1(d^-1)` from `a_h ‖ a_l` and `d^-1 ‖ p`;
/// `Z = T_0(p) + T_1(z_1) + T_2(z_2)` from `d^-1 ‖ p` and `z_1 ‖ z_2`.
const X_OF_A: ByteEmbedding = ByteEmbedding::from_nibble_tables(GF4P4_TABLES[1], GF4P4_TABLES[0]);
const Y_OF_A: ByteEmbedding = ByteEmbedding::from_nibble_tables(GF4P4_TABLES[0], [0; 16]);
const Y_OF_D: ByteEmbedding = ByteEmbedding::from_nibble_tables([0; 16], GF4P4_TABLES[1]);
const Z_OF_D: ByteEmbedding = Y_OF_A;
const Z_OF_W: ByteEmbedding = ByteEmbedding::from_nibble_tables(GF4P4_TABLES[2], GF4P4_TABLES[1]);

/// `X` and `Y` in the pair form of `Verify`'s k-ary level
/// ([`triskele_field::embed::PAIR_EMBEDDING`]): `X = a_h + A a_l` from `a_h ‖ a_l`, `Y = a_l +
/// A d^-1` from the low nibble of `a_h ‖ a_l` and the high one of `d^-1 ‖ p`.
const X_PAIR: LinearMap8 = pair_of_nibbles(PairSlot::First, PairSlot::Second);
const Y_PAIR_OF_A: LinearMap8 = pair_of_nibbles(PairSlot::None, PairSlot::First);
const Y_PAIR_OF_D: LinearMap8 = pair_of_nibbles(PairSlot::Second, PairSlot::None);

/// The first plane of the gf4p4 relations holds `x` in the pair form, `X_PAIR(a_h ‖ a_l)`, so
/// that `Verify` reads it in place ([`TripleSource::pairs_in_place`]) instead of mapping it in
/// both passes of its k-ary level. The other terms that read the plane go through the
/// inverse map (`GF4P4_LOAD`) back to the nibbles.
const GF4P4_LOAD: LinearMap8 = inverse(&X_PAIR);
/// The packing of that plane from two nibble vectors (high, low).
const GF4P4_X_HIGH: LinearMap8 = X_PAIR.compose(&NIBBLE_HIGH);
const GF4P4_X_LOW: LinearMap8 = X_PAIR.compose(&NIBBLE_LOW);

/// The inverse of a byte map, zero if it has none (`X_PAIR` has one: checked at compile time
/// below, and through the lifts in the tests).
const fn inverse(m: &LinearMap8) -> LinearMap8 {
    match m.inverse() {
        Some(i) => i,
        None => LinearMap8::ZERO,
    }
}
const _: () = assert!(X_PAIR.inverse().is_some());

/// `lift ∘ m`: the lift of the bytes that `m` maps to what `lift` takes.
const fn lift_after(lift: &ByteEmbedding, m: &LinearMap8) -> ByteEmbedding {
    let mut images = [Gf2p64(0); 8];
    let mut j = 0;
    while j < 8 {
        images[j] = lift.apply(m.apply_byte(1 << j));
        j += 1;
    }
    ByteEmbedding::new(&images)
}

fn invert<M: SecurityModel>(
    party: &mut Party<M>,
    x: &mut RssVec<Gf2p8>,
    record: Record,
    memory: &mut RecordMemory,
) -> Result<(), EngineError> {
    let n = x.len();
    if M::MALICIOUS {
        let room = party.model().segment_room();
        memory.begin_layer(n, &Packed::capacities(n), room);
    }
    let (a_h, a_l) = split_tower(x);
    // Each vector of the stored records is packed as soon as the layer has it ([`Packed`]);
    // both variants store the same six.
    let mut packed = M::MALICIOUS.then(Packed::default);
    let mut pack = |k: usize, v: &RssVec<Gf2p4>| {
        if let Some(pk) = packed.as_mut() {
            pk.put(k, v, memory);
        }
    };
    pack(A_H, &a_h);
    pack(A_L, &a_l);

    // Round 1: p = a_h a_l; d = λ a_h^2 + p + a_l^2.
    let mut d = party.mul_covered(&a_h, &a_l)?;
    add_norm_terms(&mut d, &a_h, &a_l);
    pack(D, &d);
    let [d2, d4, d8] = square_powers(&d);
    drop(d);

    // Round 2: d^6 = d^2 d^4. Round 3: d^14 = d^6 d^8 = d^-1.
    let d6 = party.mul_covered(&d2, &d4)?;
    pack(D6, &d6);
    let dinv = party.mul_covered(&d6, &d8)?;
    pack(DINV, &dinv);
    drop((d2, d4, d8, d6));

    // Round 4: (a_h, a_h + a_l) * (d^-1, d^-1) in one multiplication.
    let left = left_operand(a_h, &a_l);
    let b = party.mul_covered_parts(&last_round_pieces(&left, &dinv))?;
    pack(B, &b);
    *x = from_halves(&b, n);

    if let Some(packed) = packed {
        packed.record(record, party, n)?;
    }
    Ok(())
}

/// `d += λ a_h^2 + a_l^2` per component: the norm `d` from `p = a_h a_l` (local).
fn add_norm_terms(d: &mut RssVec<Gf2p4>, a_h: &RssVec<Gf2p4>, a_l: &RssVec<Gf2p4>) {
    for (dc, (hc, lc)) in [
        (&mut d.first, (&a_h.first, &a_l.first)),
        (&mut d.second, (&a_h.second, &a_l.second)),
    ] {
        for ((o, h), l) in dc.iter_mut().zip(hc).zip(lc) {
            o.0 ^= LAMBDA_SQUARE.apply(h.0) ^ SQUARE.apply(l.0);
        }
    }
}

/// mal-gf4-circuit's record vectors, each packed two per byte as soon as the layer has
/// computed it ([`PackedNibbles`]), at its index below. Packed at the end of the layer, the
/// vectors (2.6 MB per party and layer at 10,000 blocks, when they were seven; six now, 2.0
/// MB, since `a_h + a_l` and `p` are formed as the check loads them) had left the cache, and
/// reading them back was most of what recording cost the online phase.
#[derive(Default)]
struct Packed([Option<PackedNibbles>; 6]);

impl Packed {
    /// The capacities of the vectors a layer of `n` inversions packs, in the order it takes
    /// them from [`RecordMemory`] (`a_h`, `a_l`, `d`, `d^6`, `d^-1`, `b`; `2 n` entries in `b`),
    /// both components each: the same for both variants.
    fn capacities(n: usize) -> Vec<usize> {
        [A_H, A_L, D, D6, DINV, B]
            .iter()
            .flat_map(|&k| {
                let entries = if k == B { 2 * n } else { n };
                [Gf2p4::encoded_len(entries); 2]
            })
            .collect()
    }

    /// Records the layer's relations for the finalize check: mal-gf4-circuit's three stored
    /// relations ([`Packed::relations`]), or mal-gf4-circuit-opt's gf4p4 relations and its
    /// norm relation ([`Packed::gf4p4`]).
    fn record<M: SecurityModel>(
        self,
        record: Record,
        party: &mut Party<M>,
        n: usize,
    ) -> Result<(), EngineError> {
        match record {
            Record::Products => self.relations(n)?.record(party),
            Record::Gf4p4 => {
                let (norm, pairs) = self.gf4p4(n)?;
                pairs.record(party);
                norm.record(party);
            }
        }
        Ok(())
    }

    /// mal-gf4-circuit-opt's records over the same six vectors: the norm relation
    /// ([`Packed::norm`]) and the gf4p4 relations ([`Gf4p4Nibbles`], which share `d` and
    /// `d^-1` with it); refused as by [`Packed::relations`].
    fn gf4p4(self, n: usize) -> Result<(StoredRelations, Gf4p4Nibbles), EngineError> {
        let pairs = Gf4p4Nibbles::new(n, &self)?;
        Ok((self.norm(n)?, pairs))
    }

    /// Packs `v` as vector `k` (one of [`D`] .. [`B`]) into memory taken from `memory`.
    fn put(&mut self, k: usize, v: &RssVec<Gf2p4>, memory: &mut RecordMemory) {
        if let Some(slot) = self.0.get_mut(k) {
            *slot = Some(PackedNibbles::new_in(v, memory));
        }
    }

    /// The stored relations of [`all_products`] over the packed vectors; refused (a length
    /// mismatch of the vector count) if one was not packed.
    fn relations(self, n: usize) -> Result<StoredRelations, EngineError> {
        self.stored(6, n, &all_products(n))
    }

    /// mal-gf4-circuit-opt's norm relation, the relation of rounds 2 and 3 of
    /// [`all_products`], over the packed `d`, `d^6` and `d^-1` (the first three vectors, which
    /// it names); refused as by [`Packed::relations`].
    fn norm(self, n: usize) -> Result<StoredRelations, EngineError> {
        let [_, norm, _] = all_products(n);
        self.stored(3, n, &[norm])
    }

    /// The relations `parts` over the first `count` vectors, all packed.
    fn stored(
        self,
        count: usize,
        n: usize,
        parts: &[[At; 3]],
    ) -> Result<StoredRelations, EngineError> {
        let vectors: Vec<_> = self.0.into_iter().take(count).flatten().collect();
        if vectors.len() != count {
            return Err(EngineError::LengthMismatch {
                expected: count,
                got: vectors.len(),
            });
        }
        StoredRelations::packed(n, vectors, parts)
    }
}

/// Indices of the stored vectors of mal-gf4-circuit's relations ([`Packed::relations`]), in
/// its order: `n` entries each but `b = b_h ‖ b_l`. The first three are those of the relation
/// of rounds 2 and 3, which mal-gf4-circuit-opt stores too ([`Packed::norm`]). Two values the check reads are not
/// stored, but formed from stored ones as it loads them: round 4's left operand `a_h ‖ (a_h +
/// a_l)`, whose second half is the sum of `a_h` and `a_l` ([`TIMES_ONE_PLUS_ROUND4_T`]), and
/// round 1's product `p = d + λ a_h^2 + a_l^2` ([`PSI_LAMBDA_SQUARE`]). Each was a ninth, then
/// an eighth, of the records' memory and of the bytes the check reads from memory.
const D: usize = 0;
const D6: usize = 1;
const DINV: usize = 2;
const A_H: usize = 3;
const A_L: usize = 4;
const B: usize = 5;

/// All five products as three relations over the byte forms `ψ`, each of two products with a
/// common factor in `GF(2^8)` but the first, `p = a_h · a_l`:
///
/// * rounds 2 and 3, `d^6 = d^2 · d^4` and `d^-1 = d^6 · d^8`, with the common factor `d^2`:
///   `ψ(d^2) · (ψ(d^4) + t ψ(d^6)^2) = ψ(d^6) + t ψ(d^-1)`. For the right `d^6`, `d^2 · (d^6)^2
///   = d^14 = d^6 · d^8`, so the relation certifies the protocol's round-3 product through a
///   factor that is a Frobenius map of its round-2 product;
/// * round 4, `ψ(d^-1) · (ψ(a_h) + t ψ(a_h + a_l)) = ψ(b_h) + t ψ(b_l)`;
///
/// and round 1's `ψ(a_h) · ψ(a_l) = ψ(p)` with `ψ(p)` formed as `ψ(d) + ψ(λ) ψ(a_h)^2 +
/// ψ(a_l)^2`: each party's shares of `d` are its shares of `p` plus local maps of its shares
/// of `a_h` and `a_l`, so these are its shares of `ψ(p)` exactly, as received; with
/// [`ROUND4_T`] outside the subfield `ψ(GF(2^4))` and the squares of `d` and `d^6` as
/// Frobenius maps of them (`ψ` is a ring homomorphism, so that the powers of `ψ(d)` are `ψ`
/// of those of `d`). `1` and `t` are a basis of `GF(2^8)` over that subfield, so a relation
/// holds iff both its products do: errors `e_1`, `e_2` in the two products leave `ψ(e_1) + t
/// ψ(e_2)`, zero only for `e_1 = e_2 = 0`, whatever the factors. In rounds 2 and 3 an error `e`
/// in the protocol's `d^6` breaks the first identity at every `d`, and with `d^6` right the
/// second is the round-3 product's; an abort never depends on the shared values
/// (`round4_relation_holds_exactly_for_correct_products`,
/// `norm_pair_holds_exactly_for_correct_products`). (\[DEV\]: PROTOCOLS.md §5.5 checks the
/// five as separate triples, `L = 5 ·` inversions.)
const fn all_products(n: usize) -> [[At; 3]; 3] {
    let d2 = part(D, 0, Some(&LinearMap8::SQUARE));
    let d4 = part(D, 0, Some(&LinearMap8::POW4));
    [
        [
            at(A_H),
            at(A_L),
            at(D)
                .plus(A_H, 0, &PSI_LAMBDA_SQUARE)
                .plus(A_L, 0, &LinearMap8::SQUARE),
        ],
        [
            d2,
            d4.plus(D6, 0, &TIMES_ROUND4_T_SQUARE),
            at(D6).plus(DINV, 0, &TIMES_ROUND4_T),
        ],
        [
            at(DINV),
            part(A_H, 0, Some(&TIMES_ONE_PLUS_ROUND4_T)).plus(A_L, 0, &TIMES_ROUND4_T),
            at(B).plus(B, n, &TIMES_ROUND4_T),
        ],
    ]
}

/// The `t` of the paired relations ([`all_products`]): `0x02`, of multiplicative order 51 in
/// the AES field, so not in the subfield `ψ(GF(2^4))` (the elements of order dividing 15 and
/// zero; checked by `round4_relation_holds_exactly_for_correct_products`).
const ROUND4_T: Gf2p8 = Gf2p8(0x02);

/// `v ↦ t v` for [`ROUND4_T`], applied after `ψ` as the check loads a part.
const TIMES_ROUND4_T: LinearMap8 = LinearMap8::mul_by(ROUND4_T);

/// `ψ(v) ↦ ψ(λ v^2) = ψ(λ) ψ(v)^2` (`ψ` is a ring homomorphism), applied after `ψ`: round 1's
/// product `p = a_h a_l = d + λ a_h^2 + a_l^2` is formed from the stored norm `d`, `a_h` and
/// `a_l` as the check loads it, so that `p` need not be stored.
const PSI_LAMBDA_SQUARE: LinearMap8 =
    LinearMap8::mul_by(Gf2p8(GF2P4_TO_GF2P8.apply_byte(Gf4Tower::LAMBDA.0)))
        .compose(&LinearMap8::SQUARE);

/// `v ↦ (1 + t) v` for [`ROUND4_T`], applied after `ψ`: round 4's `ψ(a_h) + t ψ(a_h + a_l)` is
/// `(1 + t) ψ(a_h) + t ψ(a_l)`, formed from the stored `a_h` and `a_l` as the check loads it
/// (`ψ` is additive), so that `a_h + a_l` need not be stored.
const TIMES_ONE_PLUS_ROUND4_T: LinearMap8 = LinearMap8::mul_by(Gf2p8(ROUND4_T.0 ^ 1));

/// `v ↦ t v^2` for [`ROUND4_T`] (`t ψ(d^6)^2` in the relation of rounds 2 and 3), applied
/// after `ψ`.
const TIMES_ROUND4_T_SQUARE: LinearMap8 = TIMES_ROUND4_T.compose(&LinearMap8::SQUARE);

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sbox::stored::gf2p4_bytes;
    use triskele_engine::verify::ByteRows;
    use triskele_engine::GF2P4_TO_GF2P8;
    use triskele_field::embed::in_subfield;
    use triskele_field::{Field, Gf2p4};

    /// The circuit of one layer in the clear, each component an independent set of inputs
    /// (so that a mixed-up component shows): the vectors its relations are made of, `p` and
    /// the six records [`invert`] packs (into memory from `memory`, in its order).
    struct ClearLayer {
        left: RssVec<Gf2p4>,
        a_l: RssVec<Gf2p4>,
        d6: RssVec<Gf2p4>,
        dinv: RssVec<Gf2p4>,
        b: RssVec<Gf2p4>,
        p: RssVec<Gf2p4>,
        packed: Packed,
    }

    fn clear_layer(n: usize, memory: &mut RecordMemory) -> ClearLayer {
        let v = |s: usize| -> Vec<Gf2p4> {
            (0..n)
                .map(|i| Gf2p4(((i * 7 + s + i / 16 * 5) % 16) as u8))
                .collect()
        };
        let rss = |a: Vec<Gf2p4>, b: Vec<Gf2p4>| RssVec {
            first: a,
            second: b,
        };
        let mul = |x: &RssVec<Gf2p4>, y: &RssVec<Gf2p4>| {
            let m = |a: &[Gf2p4], b: &[Gf2p4]| a.iter().zip(b).map(|(a, b)| *a * *b).collect();
            rss(m(&x.first, &y.first), m(&x.second, &y.second))
        };
        let (a_h, a_l) = (rss(v(1), v(5)), rss(v(3), v(11)));
        let p = mul(&a_h, &a_l);
        let mut d = p.clone();
        add_norm_terms(&mut d, &a_h, &a_l);
        let [d2, d4, d8] = square_powers(&d);
        let d6 = mul(&d2, &d4);
        let dinv = mul(&d6, &d8);
        let left = left_operand(a_h.clone(), &a_l);
        let mut right = dinv.clone();
        right.extend(&dinv);
        let b = mul(&left, &right);
        let mut packed = Packed::default();
        for (k, v) in [
            (A_H, &a_h),
            (A_L, &a_l),
            (D, &d),
            (D6, &d6),
            (DINV, &dinv),
            (B, &b),
        ] {
            packed.put(k, v, memory);
        }
        ClearLayer {
            left,
            a_l,
            d6,
            dinv,
            b,
            p,
            packed,
        }
    }

    /// `got` gives what `want` gives in every form `Verify` asks for (the word and pair forms
    /// of every part, the lifts with and without `z`, the lifted `y`), for ranges from the
    /// first to the last instance and past the end; neither gives the pair form of a range
    /// past the end.
    fn same_relations(got: &dyn TripleSource<Gf2p64>, want: &dyn TripleSource<Gf2p64>) {
        let n = want.len();
        assert_eq!(got.len(), n);
        for start in [0, 1, 2, 77, n / 2 + 1, n - 1, n]
            .into_iter()
            .filter(|s| *s <= n)
        {
            let k = n - start;
            for part in 0..6 {
                let words = |s: &dyn TripleSource<Gf2p64>| {
                    let (mut lo, mut hi) = (vec![0xa5u8; k], vec![0x5au8; k]);
                    assert!(s.load_words(part, start, &mut lo, &mut hi));
                    (lo, hi)
                };
                assert_eq!(words(got), words(want), "words: part {part}, start {start}");
                if part < 4 {
                    let pairs = |s: &dyn TripleSource<Gf2p64>| {
                        let mut b = vec![0xa5u8; k];
                        assert!(s.load_pairs(part, start, &mut b));
                        b
                    };
                    assert_eq!(pairs(got), pairs(want), "pairs: part {part}, start {start}");
                }
            }
            for parts in [Parts::Xyz, Parts::Xy] {
                let lift = |s: &dyn TripleSource<Gf2p64>| {
                    let ones = RssVec {
                        first: vec![Gf2p64(1); k + 3],
                        second: vec![Gf2p64(1); k + 3],
                    };
                    let mut out = LiftedTriples {
                        x: ones.clone(),
                        y: ones.clone(),
                        z: ones,
                    };
                    s.lift(start, parts, &mut out);
                    (out.x, out.y, out.z)
                };
                assert_eq!(lift(got), lift(want), "lift {parts:?}, start {start}");
            }
            let lift_y = |s: &dyn TripleSource<Gf2p64>| {
                let (mut a, mut b) = (vec![Gf2p64(1); k + 2], vec![Gf2p64(1); k + 2]);
                assert!(s.lift_y(start, [&mut a, &mut b]));
                (a, b)
            };
            assert_eq!(lift_y(got), lift_y(want), "lift_y, start {start}");
        }
        for s in [got, want] {
            assert!(!s.load_pairs(0, n - 2, &mut [0; 3]));
            assert!(!s.load_pairs(2, n + 1, &mut [0; 1]));
        }
    }

    /// The relations of `rows` are true products in their byte form, `products[k]` for
    /// relation `k` (both components).
    fn assert_products(rows: &dyn ByteRows, n: usize, products: &[RssVec<Gf2p8>], what: &str) {
        assert_eq!(rows.len(), products.len() * n);
        for (k, z) in products.iter().enumerate() {
            for (c, want) in [&z.first, &z.second].into_iter().enumerate() {
                let part = |p: usize| {
                    let mut out = vec![0u8; n];
                    rows.load(2 * p + c, k * n, &mut out);
                    Gf2p8::vec_from_bytes(out)
                };
                let (x, y, got) = (part(0), part(1), part(2));
                assert_eq!(&got, want, "{what}: relation {k}, component {c}");
                for (p, v) in [&x, &y, &got].into_iter().enumerate() {
                    if rows.in_subfield(2 * p + c, k * n, n) {
                        let inside = v.iter().all(|b| in_subfield(b.0));
                        assert!(inside, "{what}: relation {k}, part {p}");
                    }
                }
                for ((x, y), z) in x.iter().zip(&y).zip(&got) {
                    assert_eq!(*x * *y, *z, "{what}: relation {k}");
                }
            }
        }
    }

    /// The recorded relations of each variant are true products: mal-gf4-circuit's three in
    /// their byte form (stored vectors; rounds 2 and 3 as one, round 4's two products as one,
    /// [`all_products`]); for mal-gf4-circuit-opt the same relation of rounds 2 and 3
    /// ([`Packed::norm`]) with the packed gf4p4 relations of the other three, whose `p` from
    /// byte maps of `d` is the product's.
    #[test]
    fn recorded_relations_are_the_checked_products() {
        let n = 53;
        let mut memory = RecordMemory::default();
        let layer = clear_layer(n, &mut memory);
        let bytes = |v: &RssVec<Gf2p4>| gf2p4_bytes(v.clone());
        let (b_h, b_l) = (
            layer.b.slice(0..n).unwrap(),
            layer.b.slice(n..2 * n).unwrap(),
        );
        let [p, d6, dinv, b_h, b_l] = [&layer.p, &layer.d6, &layer.dinv, &b_h, &b_l].map(bytes);
        let plus_t = |a: &RssVec<Gf2p8>, b: &RssVec<Gf2p8>| {
            let f = |a: &[Gf2p8], b: &[Gf2p8]| -> Vec<Gf2p8> {
                a.iter().zip(b).map(|(a, b)| *a + ROUND4_T * *b).collect()
            };
            RssVec {
                first: f(&a.first, &b.first),
                second: f(&a.second, &b.second),
            }
        };
        let all = [p, plus_t(&d6, &dinv), plus_t(&b_h, &b_l)];
        let stored = layer.packed.relations(n).unwrap();
        assert_products(&stored, n, &all, "mal-gf4-circuit");
        // The check embeds the parts that lie in the subfield of 16 elements by tables of
        // 16: every part of round 1's relation, the `x` of the others (their `y` and `z` add
        // `t` times a nibble, outside it).
        let in_subfield = |rel: &StoredRelations, k: usize| -> Vec<bool> {
            (0..6).map(|q| rel.in_subfield(q, k * n, n)).collect()
        };
        let x_only = [true, true, false, false, false, false];
        assert_eq!(in_subfield(&stored, 0), [true; 6]);
        assert_eq!(in_subfield(&stored, 1), x_only);
        assert_eq!(in_subfield(&stored, 2), x_only);

        // mal-gf4-circuit-opt, over the same vectors: an odd `n` (`b_l` starts at an odd
        // entry, so its nibbles do not pair with `b_h`'s) and an even one of several pieces.
        for n in [n, 2 * NIBBLE_PIECE + 102] {
            let layer = clear_layer(n, &mut memory);
            let want =
                Gf4p4Relations::new(&layer.left, &layer.a_l, &layer.dinv, &layer.p, &layer.b);
            let norm = plus_t(&bytes(&layer.d6), &bytes(&layer.dinv));
            let (rel, pairs) = layer.packed.gf4p4(n).unwrap();
            same_relations(&pairs, &want);
            assert_products(&rel, n, &[norm], "mal-gf4-circuit-opt's norm relation");
            let parts: Vec<bool> = (0..6).map(|q| rel.in_subfield(q, 0, n)).collect();
            assert_eq!(parts, [true, true, false, false, false, false]);
            // What verification segments count: the three packed vectors of the norm
            // relation, both components, and the three others of the gf4p4 relations (`d` and
            // `d^-1`, which both read, once).
            let len = Gf2p4::encoded_len;
            assert_eq!(ByteRows::stored_bytes(&rel), Some(2 * 3 * len(n)));
            assert_eq!(
                TripleSource::stored_bytes(&pairs),
                Some(2 * (2 * len(n) + len(2 * n)))
            );
        }
    }

    /// Round 4's relation ([`all_products`]) holds for the right products and fails for every
    /// error in either of them, at every value of the factors: all `16^3` factors (`d^-1`, `a_h`,
    /// `a_h + a_l`) and all `16^2` error pairs; `t` is outside `ψ(GF(2^4))`. With `t` inside
    /// the subfield (here `ψ(u)`), some error pair would pass: the test can fail.
    #[test]
    fn round4_relation_holds_exactly_for_correct_products() {
        let psi = |x: Gf2p4| GF2P4_TO_GF2P8.apply(Gf2p8(x.0));
        let subfield: Vec<Gf2p8> = (0..16).map(|x| psi(Gf2p4(x))).collect();
        assert!(!subfield.contains(&ROUND4_T));
        assert!(subfield.iter().all(|v| v.pow(16) == *v));
        let passes = |t: Gf2p8| {
            let mut passed = 0usize;
            for (dinv, a, b) in (0..16 * 16 * 16).map(|i| (i >> 8, (i >> 4) & 15, i & 15)) {
                let [dinv, a, b] = [dinv, a, b].map(|v| Gf2p4(v as u8));
                let x = psi(dinv);
                let y = psi(a) + t * psi(b);
                for (e_h, e_l) in (0..256).map(|e| (Gf2p4(e as u8 >> 4), Gf2p4(e as u8 & 15))) {
                    let z = psi(dinv * a + e_h) + t * psi(dinv * b + e_l);
                    let holds = x * y == z;
                    let correct = e_h == Gf2p4(0) && e_l == Gf2p4(0);
                    assert!(
                        holds || !correct,
                        "a right pair fails at {dinv:?}, {a:?}, {b:?}"
                    );
                    passed += usize::from(holds && !correct);
                }
            }
            passed
        };
        assert_eq!(passes(ROUND4_T), 0);
        assert!(passes(psi(Gf2p4(2))) > 0);
    }

    /// The relation of rounds 2 and 3 ([`all_products`], with the maps the check applies)
    /// holds for the right products and fails for every error in either, at every `d`: all
    /// `16` values of `d`, an error `e_1` in the protocol's `d^6` and `e_2` in its `d^-1 = d^6
    /// · d^8` computed from that wrong `d^6` (as a corrupt party's reshare leaves them).
    #[test]
    fn norm_pair_holds_exactly_for_correct_products() {
        let psi = |x: Gf2p4| GF2P4_TO_GF2P8.apply(Gf2p8(x.0));
        let map = |m: &LinearMap8, x: Gf2p8| Gf2p8(m.apply_byte(x.0));
        for d in (0..16).map(Gf2p4) {
            for (e1, e2) in (0..256).map(|e| (Gf2p4(e as u8 >> 4), Gf2p4(e as u8 & 15))) {
                let d6 = d.square() * d.square().square() + e1;
                let dinv = d6 * d.pow(8) + e2;
                let x = map(&LinearMap8::SQUARE, psi(d));
                let y = map(&LinearMap8::POW4, psi(d)) + map(&TIMES_ROUND4_T_SQUARE, psi(d6));
                let z = psi(d6) + map(&TIMES_ROUND4_T, psi(dinv));
                let correct = e1 == Gf2p4(0) && e2 == Gf2p4(0);
                assert_eq!(x * y == z, correct, "d {d:?}, errors {e1:?} {e2:?}");
            }
        }
    }

    /// A layer whose records miss a packed vector is refused, not checked without it.
    #[test]
    fn records_missing_a_vector_are_refused() {
        let n = 9;
        let v = RssVec::<Gf2p4>::zeros(2 * n);
        let mut memory = RecordMemory::default();
        let mut packed_with = |ks: &[usize]| {
            let mut packed = Packed::default();
            for &k in ks {
                packed.put(k, &v, &mut memory);
            }
            packed
        };
        let all = [D, D6, DINV, A_H, A_L, B];
        /// Whether `r` is the refusal of a record with `got` of the `expected` vectors.
        fn refused<T>(r: Result<T, EngineError>, want: (usize, usize)) -> bool {
            matches!(r, Err(EngineError::LengthMismatch { expected, got }) if (expected, got) == want)
        }
        assert!(refused(packed_with(&all[..5]).relations(n), (6, 5)));
        assert!(packed_with(&all).relations(n).is_ok());
        // mal-gf4-circuit-opt's norm relation takes the first three, its gf4p4 relations all
        // but `d^6`.
        let without =
            |missing: usize| -> Vec<usize> { all.into_iter().filter(|k| *k != missing).collect() };
        for missing in [D, D6, DINV] {
            assert!(refused(packed_with(&without(missing)).norm(n), (3, 2)));
        }
        assert!(packed_with(&all[..3]).norm(n).is_ok());
        for missing in [A_H, A_L, D, DINV, B] {
            assert!(refused(packed_with(&without(missing)).gf4p4(n), (5, 4)));
        }
        assert!(refused(packed_with(&without(D6)).gf4p4(n), (3, 2)));
        assert!(packed_with(&all).gf4p4(n).is_ok());
    }

    /// A layer's records take exactly the vectors [`Packed::capacities`] reserves, for either
    /// variant's relations: a run of three layers reserves them all at its first and takes
    /// every one, nothing more; a smaller layer reserves nothing.
    #[test]
    fn record_memory_is_reserved_for_exactly_what_layers_take() {
        let n = RecordMemory::MIN_LAYER + 3;
        let caps = Packed::capacities(n);
        let mut memory = RecordMemory::default();
        memory.expect(3 * n);
        for (layer, record) in [Record::Products, Record::Gf4p4, Record::Products]
            .into_iter()
            .enumerate()
        {
            memory.begin_layer(n, &caps, None);
            assert_eq!(memory.left(), (3 - layer) * caps.len(), "layer {layer}");
            let packed = clear_layer(n, &mut memory).packed;
            match record {
                Record::Products => drop(packed.relations(n).unwrap()),
                Record::Gf4p4 => drop(packed.gf4p4(n).unwrap()),
            }
        }
        assert_eq!(memory.left(), 0);
        assert_eq!(memory.taken(), 3 * caps.len());

        let small = RecordMemory::MIN_LAYER - 1;
        memory.expect(3 * small);
        memory.begin_layer(small, &Packed::capacities(small), None);
        assert_eq!(memory.left(), 0, "small layer");

        // Verified in segments: no more layers than fill the segment's room, at least one.
        let layer_bytes: usize = caps.iter().sum();
        for (room, layers) in [(0, 1), (layer_bytes, 1), (layer_bytes + 1, 2), (1 << 40, 5)] {
            memory.expect(5 * n);
            memory.begin_layer(n, &caps, Some(room));
            assert_eq!(memory.left(), layers * caps.len(), "room {room}");
        }
    }

    /// The word form of the relations (tower coordinates, `load_words`) embeds by `E_16` to
    /// their lift, as do the pair form of `x` and `y` (`load_pairs`) and the planes of `z`
    /// (`z_planes`) by their maps, for every part, random packed bytes and ranges that start
    /// inside; neither reaches past the end.
    #[test]
    fn pair_relations_have_a_word_form() {
        let n = 300;
        let bytes = |k: usize| -> Vec<u8> {
            (0..n)
                .map(|i| ((i * 73 + k * 151) as u8).rotate_left((i % 7) as u32) ^ (k as u8))
                .collect()
        };
        word_form(&Gf4p4Relations {
            planes: [
                [bytes(1), bytes(2), bytes(3)],
                [bytes(4), bytes(5), bytes(6)],
            ],
            spec: &GF4P4_SPEC,
        });
    }

    fn word_form<const P: usize>(rel: &PairRelations<P>) {
        use triskele_field::embed::{e16, PAIR_EMBEDDING};
        assert!((rel.spec.words)().is_some());
        let n = rel.len();
        let mut out = LiftedTriples {
            x: RssVec::zeros(n),
            y: RssVec::zeros(n),
            z: RssVec::zeros(n),
        };
        rel.lift(0, Parts::Xyz, &mut out);
        let lifted = [
            &out.x.first,
            &out.x.second,
            &out.y.first,
            &out.y.second,
            &out.z.first,
            &out.z.second,
        ];
        for (part, want) in lifted.into_iter().enumerate() {
            for start in [0, 1, 77, n] {
                let k = n - start;
                let (mut lo, mut hi) = (vec![0xa5u8; k], vec![0x5au8; k]);
                assert!(rel.load_words(part, start, &mut lo, &mut hi));
                let got: Vec<Gf2p64> = lo.iter().zip(&hi).map(|(l, h)| e16(*l, *h)).collect();
                assert_eq!(got[..], want[start..], "part {part}, start {start}");
                // The pair form of x and y, the planes of z.
                let got: Vec<Gf2p64> = if part < 4 {
                    let mut b = vec![0xa5u8; k];
                    assert!(rel.load_pairs(part, start, &mut b));
                    // `x` is stored in the pair form, `y` is not.
                    let direct = rel.pairs_in_place(part, start, k);
                    assert_eq!(direct, (part < 2).then_some(&b[..]), "part {part}");
                    b.iter().map(|v| PAIR_EMBEDDING.apply(*v)).collect()
                } else {
                    let [(f, a), (g, b)] = rel.z_planes(part, start, k).expect("z planes");
                    a.iter()
                        .zip(b)
                        .map(|(a, b)| f.apply(*a) + g.apply(*b))
                        .collect()
                };
                assert_eq!(got[..], want[start..], "pairs: part {part}, start {start}");
            }
        }
        assert!(!rel.load_pairs(0, n - 2, &mut [0; 3]));
        assert!(rel.z_planes(4, n - 2, 3).is_none() && rel.z_planes(3, 0, 1).is_none());
    }

    /// The compact gf4p4 relations, lifted through [`Gf4p4Relations`] and reconstructed from
    /// both components (each value shared as `(v + m, m)` with a mask `m`, so the lift is
    /// tested for additivity too): they match the field's embedding, hold for the honest
    /// values of every input, and an error in any one of the three covered products (`p`,
    /// `b_h`, `b_l`) breaks the relation of that instance only.
    #[test]
    fn gf4p4_relation_holds_exactly_for_correct_products() {
        use triskele_field::embed::gf4p4;
        let share = |v: Vec<Gf2p4>| {
            let second: Vec<Gf2p4> = (0..v.len())
                .map(|k| Gf2p4((k * 7 + 3) as u8 & 15))
                .collect();
            RssVec {
                first: v.iter().zip(&second).map(|(a, b)| *a + *b).collect(),
                second,
            }
        };
        let lift = |left, a_l, dinv, p, b| {
            let rel = Gf4p4Relations::new(
                &share(left),
                &share(a_l),
                &share(dinv),
                &share(p),
                &share(b),
            );
            let n = rel.len();
            let mut out = LiftedTriples {
                x: RssVec::zeros(n + 3),
                y: RssVec::zeros(n + 3),
                z: RssVec::zeros(n + 3),
            };
            rel.lift(0, Parts::Xyz, &mut out);
            for start in [0, 5, n - 1] {
                // `z_sums` gives the sums of the lifted `z` times coefficients.
                let c: Vec<Gf2p64> = (0..n + 3 - start)
                    .map(|i| Gf2p64(0x1234_5678_9abc_def1u64.rotate_left(i as u32)))
                    .collect();
                let dot = |z: &[Gf2p64]| {
                    z[start..]
                        .iter()
                        .zip(&c)
                        .fold(Gf2p64(0), |a, (z, c)| a + *z * *c)
                };
                let want = [dot(&out.z.first), dot(&out.z.second)];
                assert_eq!(rel.z_sums(start, &c), Some(want), "start {start}");
            }
            {
                // `lift_y` gives the lifted `y`.
                let n = out.y.first.len();
                let (mut y1, mut y2) = (vec![Gf2p64(1); n], vec![Gf2p64(1); n]);
                assert!(rel.lift_y(0, [&mut y1, &mut y2]));
                assert_eq!((y1, y2), (out.y.first.clone(), out.y.second.clone()));
            }
            let sum = |v: &RssVec<Gf2p64>| -> Vec<Gf2p64> {
                v.first
                    .iter()
                    .zip(&v.second)
                    .map(|(a, b)| *a + *b)
                    .collect()
            };
            // Past the end: zero.
            assert!(out.x.first[n..].iter().all(|v| *v == Gf2p64(0)));
            (sum(&out.x), sum(&out.y), sum(&out.z))
        };
        let (mut hs, mut ls, mut dinvs, mut ps, mut bhs, mut bls) =
            (vec![], vec![], vec![], vec![], vec![], vec![]);
        for byte in 0..=255u8 {
            let t = triskele_field::Gf4Tower::from_gf2p8(Gf2p8(byte));
            let (h, l) = (t.high(), t.low());
            let p = h * l;
            let d = Gf2p4(LAMBDA_SQUARE.get(h) ^ SQUARE.get(l)) + p;
            let dinv = d.inverse();
            hs.push(h);
            ls.push(l);
            dinvs.push(dinv);
            ps.push(p);
            bhs.push(h * dinv);
            bls.push((h + l) * dinv);
        }
        let left: Vec<Gf2p4> = hs
            .iter()
            .chain(
                hs.iter()
                    .zip(&ls)
                    .map(|(h, l)| *h + *l)
                    .collect::<Vec<_>>()
                    .iter(),
            )
            .copied()
            .collect();
        let b = |bh: &[Gf2p4], bl: &[Gf2p4]| [bh, bl].concat();
        let (x, y, z) = lift(
            left.clone(),
            ls.clone(),
            dinvs.clone(),
            ps.clone(),
            b(&bhs, &bls),
        );
        for k in 0..256 {
            assert_eq!(x[k], gf4p4([hs[k], ls[k], Gf2p4(0)]));
            assert_eq!(y[k], gf4p4([ls[k], dinvs[k], Gf2p4(0)]));
            assert_eq!(x[k] * y[k], z[k], "{k:#04x}");
        }
        for e in 1..16u8 {
            let e = Gf2p4(e);
            let k = usize::from(e.0) * 13 + 7;
            let bad = |v: &[Gf2p4]| {
                let mut v = v.to_vec();
                v[k] += e;
                v
            };
            for (what, (x, y, z)) in [
                (
                    "p",
                    lift(
                        left.clone(),
                        ls.clone(),
                        dinvs.clone(),
                        bad(&ps),
                        b(&bhs, &bls),
                    ),
                ),
                (
                    "b_h",
                    lift(
                        left.clone(),
                        ls.clone(),
                        dinvs.clone(),
                        ps.clone(),
                        b(&bad(&bhs), &bls),
                    ),
                ),
                (
                    "b_l",
                    lift(
                        left.clone(),
                        ls.clone(),
                        dinvs.clone(),
                        ps.clone(),
                        b(&bhs, &bad(&bls)),
                    ),
                ),
            ] {
                for j in 0..256 {
                    assert_eq!(
                        x[j] * y[j] == z[j],
                        j != k,
                        "{what}, error {e:?} at {k}, instance {j}"
                    );
                }
            }
        }
    }

    #[test]
    fn tables_match_the_field() {
        for v in 0..16u8 {
            let x = Gf2p4(v);
            assert_eq!(Gf2p4(SQUARE.get(x)), x * x);
            assert_eq!(Gf2p4(LAMBDA_SQUARE.get(x)), Gf2p4(0xe) * x * x);
            // d^-1 = d^2 d^4 d^8 = (d^2 d^4) d^8.
            let d2 = x.square();
            let d4 = d2.square();
            assert_eq!(d2 * d4 * d4.square(), x.inverse());
        }
    }
}
