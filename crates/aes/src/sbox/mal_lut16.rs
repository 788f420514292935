//! `mal-lut16-ohv` and `mal-lut16-bitstring`: `lut16` (Protocol 3 with the length-16 one-hot
//! table lookup of Protocol 4, `super::lut16`) with security with abort against one actively
//! corrupt party, checked by Protocol 2 `Verify` — MAESTRO (Morita et al., USENIX Security '25,
//! ePrint 2024/1317); PROTOCOLS.md §4.3, §5.5, §5.6, §5.8. One type, [`MalLut16`], with the
//! preprocessing as a parameter ([`Prep`]).
//!
//! # Phases (per party; `n` inversions, `w = ⌈n/16⌉` bit-sliced words)
//!
//! * **Preprocessing**: one random one-hot vector `[[e]]` of length 16 and its position
//!   `[[r]]` per inversion, from 11 bit products, `2w · 11` bytes to the previous party
//!   (AES-128: 220 B/block), nothing to the next one. The products are computed with
//!   `Party::mul_covered` and certified by compactly recorded relations (custom triple sources
//!   that share the assembled one-hot vectors with the pool, no memory of their own, turned
//!   into `GF(2^8)` triples only while `Verify` streams over them, on its byte path):
//!   * [`Prep::Ohv`]: Protocol 8 (`super::ohv16`), **2 rounds**; the "ohv" trick covers its
//!     11 products with 2 packed relations per vector (\[DEV\]: checked in `GF(2^8)` at
//!     `u = 0x02`, lifted by `E_8` on the byte path of `Verify`, sound for every error pattern).
//!   * [`Prep::Bitstring`]: Protocol 5 with `k = 4`, **3 rounds** (1, 3 and 7 products):
//!     `OHV(b_0) = (1 + b_0, b_0)`; step `k` (`s = b_k`, level `f` of `h = 2^k` entries)
//!     computes `g_j = s f_j` for `j < h - 1`, sets `g_{h-1} = s + Σ_j g_j` and
//!     `e = (f + g, g)`, so `e[Σ_b 2^b b_b] = 1`. Steps 2 and 3 are each one "bit ×
//!     bit-string" relation `s · (f_0..f_{h-2}) = (g_0..g_{h-2})`, one triple `X = s ∈ {0,
//!     1}`, `Y = Σ_j f_j u^j`, `Z = Σ_j g_j u^j` (`u` = `0x2`, degree < 7: no reduction, so it
//!     holds iff every `g_j = s f_j`). Step 1's one product `g_0 = b_1 (1 + b_0)` is checked
//!     inside step 2's relation (\[DEV\]: PROTOCOLS.md §5.5 checks it as a triple of its own,
//!     §6.4 counts `L = 640` per block): `X = b_2 + u^3 b_1` and `Z` gains `u^5 g_0`, since
//!     `b_1 f'_j` is 0, 0, `g_0` for step 2's string `f'`. 2 triples per vector, a custom
//!     source (`BitstringRelations`); see there for why every error is caught.
//!
//!   Every lane of every word is certified, also the up to 15 lanes past `n` in the last word
//!   (they were computed by the same messages).
//! * **Online** (2 rounds per layer, exactly the messages of `lut16`): 0.5 byte to each
//!   neighbour (the masked offset share `c^(i)`) and 1 byte to the previous party (the reshare
//!   of `b_h`, `b_l`) per inversion; AES-128: 80 B/block to next + 240 B/block to prev,
//!   20 rounds, 30 messages per channel. In addition, locally:
//!   * the opened shares `c^(j)` are hashed into the views (see below);
//!   * one gf4p4 relation per inversion (PROTOCOLS.md §5.5),
//!     `(a_h + α a_l) · (a_l + α d^-1) = p + α (b_h + a_l^2) + α^2 (b_l + b_h)`, with
//!     `[[d]] = c + [[r]]` (the public `c` added as a constant, §1.3), the `α^0` coefficient
//!     `[[p]] = [[d]] + λ[[a_h]]^2 + [[a_l]]^2` and `[[d^-1]]` the looked-up `[[v^-1]]`;
//!     recorded compactly (`super::gf4_circuit`'s `Gf4p4Relations`, 6 bytes per inversion and
//!     party). It holds iff `d = λ a_h^2 + a_h a_l + a_l^2` (the opened `c` was `norm + r`),
//!     `b_h = a_h d^-1` and `b_l + b_h = a_l d^-1`; `d^-1 = inv(c ⊕ r)` is right because `[[e]]`
//!     is certified one-hot at `[[r]]` and the lookup is local.
//! * **Finalize**: `Party::verify_recorded`: one `Verify` over all recorded relations
//!   (preprocessing and online), then the compare-view. Triples per inversion: **3** for both
//!   (2 + 1), i.e. `L = 2 · 16w + n` (AES-128 benchmark with `S` blocks: `480 S`; PROTOCOLS.md
//!   §6.4 has `640 S` for bitstring, whose step 1 is checked inside step 2 here). Cost, `ℓ = ⌈log2 L⌉`:
//!   `16 + 8ℓ + 24 + 32` bytes to next, `16ℓ + 16 + 32` to prev, `2ℓ + 8` messages per
//!   channel.
//!
//! # Soundness
//!
//! A corrupt party can (i) add errors to the shares it sends in the products of the
//! preprocessing or in the round-2 reshare, (ii) send a wrong offset share `c^(i)` (the same
//! to both neighbours, or different ones), (iii) deviate in `Verify` or the compare-view.
//! (i) and a consistent (ii) make a recorded relation false: `Verify` catches that except with
//! probability `(2ℓ + 44)/2^64` per run of the check, less than `2^-43` over all segments and
//! runs of a batch of up to `10^6` AES-256 blocks (`triskele_engine::verify`). An inconsistent (ii) makes the
//! two honest parties hash different shares and the compare-view fails (BLAKE3 collision
//! resistance); (iii) is covered by `Verify`'s own hashed openings and the compare-view. No
//! output is opened before finalize succeeded at every party.
//!
//! # Deviations (\[DEV\])
//!
//! * The offset share is masked with a fresh zero-share `α_i` (PROTOCOLS.md §4.3, as `lut16`).
//! * The additively opened offset shares are hashed into the views (§5.6), received from
//!   `P_{i-1}` into `V_prev` and from `P_{i+1}` into `V_next`; a party's own share is not
//!   absorbed (the compare-view matches what `P_j` received from `P_{j-1}` with what
//!   `P_{j+1}` received from it, which is all that must agree).
//! * One `Verify` with step-1 coefficients from a PRG seeded by the coins (§8 item 9) and a
//!   two-way compare-view.

use std::sync::Arc;

use triskele_engine::verify::ByteSource;
use triskele_engine::{EngineError, Malicious, Party, SecurityModel};
use triskele_field::{Bits16, Gf2p4, Gf2p8, LinearMap8};
use triskele_share::{PartyId, RssVec};

use super::gf4_circuit::{Gf4p4Relations, NIBBLE_LAMBDA_SQUARE, NIBBLE_SQUARE};
use super::lut16::{online_layer, Ohv16Pool};
use super::ohv16::{
    assemble, part_maps, random_ohv16, Ohv16, OhvCheck, PartMaps, PartTables, PerInstance,
};
use super::stored::RecordMemory;
use super::SboxProtocol;

/// How [`MalLut16`] makes its one-hot vectors and certifies their bit products
/// (PROTOCOLS.md §5.5).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Prep {
    /// `mal-lut16-ohv`: Protocol 8 (2 rounds), two packed relations per vector.
    Ohv,
    /// `mal-lut16-bitstring`: Protocol 5 with `k = 4` (3 rounds), one "bit × bit-string"
    /// relation per recursion step (three per vector).
    Bitstring,
}

/// `mal-lut16-ohv` / `mal-lut16-bitstring` (see the module documentation).
#[derive(Debug)]
pub struct MalLut16 {
    prep: Prep,
    pool: Ohv16Pool,
    /// The memory of the run's records.
    memory: RecordMemory,
}

impl MalLut16 {
    pub fn new(prep: Prep) -> Self {
        MalLut16 {
            prep,
            pool: Ohv16Pool::default(),
            memory: RecordMemory::default(),
        }
    }
}

impl SboxProtocol<Malicious> for MalLut16 {
    fn preprocess(&mut self, party: &mut Party<Malicious>, n: usize) -> Result<(), EngineError> {
        let fresh = match self.prep {
            Prep::Ohv => random_ohv16(party, n, OhvCheck::Packed)?,
            Prep::Bitstring => bitstring_ohv16(party, n)?,
        };
        self.pool.add(fresh);
        self.memory.expect(n);
        Ok(())
    }

    fn invert(
        &mut self,
        party: &mut Party<Malicious>,
        x: &mut RssVec<Gf2p8>,
    ) -> Result<(), EngineError> {
        let m = x.len();
        let room = party.model().segment_room();
        self.memory
            .begin_layer(m, &Gf4p4Relations::capacities(m), room);
        let layer = online_layer(party, &mut self.pool, x)?;
        // [[p]] = [[d]] + λ[[a_h]]^2 + [[a_l]]^2 with [[d]] = c + [[r]] (the public c in the
        // components `add_constant` puts it in), as byte maps of the nibbles straight into
        // the relations' packing (GFNI where the CPU has it).
        let r = &self.pool.get().r;
        let (c1, c2): (&'static LinearMap8, &'static LinearMap8) = match party.id() {
            PartyId::P1 => (&NIBBLE, &NO_NIBBLE),
            PartyId::P2 => (&NO_NIBBLE, &NO_NIBBLE),
            PartyId::P3 => (&NO_NIBBLE, &NIBBLE),
        };
        let u = layer.used.clone();
        Gf4p4Relations::with_dinv_p(
            &layer.left,
            &layer.a_l,
            &layer.b,
            [
                dinv_p(
                    [&layer.vinv.first, &r.first[u.clone()], &layer.c],
                    c1,
                    [&layer.left.first[..m], &layer.a_l.first],
                ),
                dinv_p(
                    [&layer.vinv.second, &r.second[u], &layer.c],
                    c2,
                    [&layer.left.second[..m], &layer.a_l.second],
                ),
            ],
            &mut self.memory,
        )
        .record(party);
        *x = layer.output();
        Ok(())
    }

    /// One `Verify` over everything recorded, then the compare-view.
    fn finalize(&mut self, party: &mut Party<Malicious>) -> Result<(), EngineError> {
        party.verify_recorded()
    }
}

/// `x ↦ x` on the low nibble of a byte (the high nibble ignored).
const NIBBLE: LinearMap8 = LinearMap8::from_basis_images([1, 2, 4, 8, 0, 0, 0, 0]);

/// The terms of the packed plane `d^-1 ‖ p` of one component for [`Gf4p4Relations::with_dinv_p`]:
/// `[v^-1, r, c]` and `[a_h, a_l]` (`p = r + c + λ a_h^2 + a_l^2`, `c` by `c_map`).
fn dinv_p<'a>(
    [vinv, r, c]: [&'a [Gf2p4]; 3],
    c_map: &'static LinearMap8,
    [a_h, a_l]: [&'a [Gf2p4]; 2],
) -> [(&'static LinearMap8, &'a [u8]); 5] {
    let bytes = Gf2p4::slice_as_bytes;
    [
        (&super::gf4_circuit::NIBBLE_HIGH, bytes(vinv)),
        (&NIBBLE, bytes(r)),
        (c_map, bytes(c)),
        (&NIBBLE_LAMBDA_SQUARE, bytes(a_h)),
        (&NIBBLE_SQUARE, bytes(a_l)),
    ]
}

/// `x ↦ 0`: the public constant in a component that does not take it.
const NO_NIBBLE: LinearMap8 = LinearMap8::from_basis_images([0; 8]);

/// One recursion step of Protocol 5 on bit-sliced words (`w` words per entry, entry `j` at
/// `[j w, (j + 1) w)`): from the level `f` (`h` entries), the bit `s` and the products
/// `g_j = s f_j` (`j < h - 1`), the next level `(f + g, g)` (`2h` entries), with `g_{h-1} =
/// s + Σ_j g_j` (linear, so per component). Written once, into fresh capacity.
fn advance(f: &[Bits16], s: &[Bits16], g: &[Bits16], w: usize) -> Vec<Bits16> {
    let h = f.len() / w;
    let mut last = s.to_vec();
    for gj in g.chunks(w) {
        for (l, x) in last.iter_mut().zip(gj) {
            l.0 ^= x.0;
        }
    }
    let mut out = Vec::with_capacity(2 * h * w);
    // Two passes over plain slice pairs (which the compiler vectorizes; a chained iterator
    // it did not).
    let (f_g, f_last) = f.split_at(g.len().min(f.len()));
    for (f, g) in [(f_g, g), (f_last, &last[..])] {
        out.extend(f.iter().zip(g).map(|(a, b)| Bits16(a.0 ^ b.0)));
    }
    out.extend_from_slice(g);
    out.extend_from_slice(&last);
    out
}

/// Offset (in entries) of step `k`'s products in the concatenation of all steps' products
/// (1, 3, 7 entries): `Σ_{k' < k} (2^k' - 1) = 2^k - k - 1`.
const fn step_offset(k: usize) -> usize {
    (1 << k) - k - 1
}

/// The constant 1 in all 16 lanes, per component (`x_1 = 1`: P1's first and P3's second).
fn one(party: PartyId) -> [u16; 2] {
    match party {
        PartyId::P1 => [0xffff, 0],
        PartyId::P2 => [0, 0],
        PartyId::P3 => [0, 0xffff],
    }
}

/// Protocol 5 with `k = 4` for `n` instances (see the module documentation): 3 rounds,
/// `2 ⌈n/16⌉ · 11` bytes to the previous party. The products are certified under an active
/// model by recording [`BitstringRelations`].
fn bitstring_ohv16<M: SecurityModel>(party: &mut Party<M>, n: usize) -> Result<Ohv16, EngineError> {
    let w = n.div_ceil(16);
    let bits = party.random_rss::<Bits16>(4 * w);
    let one = one(party.id());
    // Level 1: OHV(b_0) = (1 + b_0, b_0).
    let mut f = [(&bits.first, one[0]), (&bits.second, one[1])].map(|(b, one)| {
        let b0 = &b[..w];
        let mut f: Vec<Bits16> = b0.iter().map(|x| Bits16(x.0 ^ one)).collect();
        f.extend_from_slice(b0);
        f
    });
    // Step `k`'s bit `s = b_k` and products `g_j = s f_j` (`j < 2^k - 1`) of the level `f`.
    let step = |party: &mut Party<M>, k: usize, f: &[Vec<Bits16>; 2]| {
        let h = 1usize << k;
        let s = bits
            .slice(k * w..(k + 1) * w)
            .ok_or(EngineError::LengthMismatch {
                expected: 4 * w,
                got: bits.len(),
            })?;
        let g = if k == 1 {
            // Step 1's string is the one bit `f_0`: a plain bit product, certified by step
            // 2's relation (`BitstringRelations`), so not recorded.
            let f0 = [&f[0], &f[1]].map(|c| c.get(..w).unwrap_or(&[]));
            party.mul_covered_parts(&[([&s.first[..], &s.second[..]], f0)])?
        } else {
            // `s · f_j` for `j < h - 1`: the local products from the pieces in place (the
            // messages of one multiplication of `s ‖ s ‖ …` by `f_0 ‖ f_1 ‖ …`).
            let parts: Vec<_> = (0..h - 1)
                .map(|j| {
                    let fj = [&f[0], &f[1]].map(|c| c.get(j * w..(j + 1) * w).unwrap_or(&[]));
                    ([&s.first[..], &s.second[..]], fj)
                })
                .collect();
            party.mul_covered_parts(&parts)?
        };
        Ok::<_, EngineError>((s, g))
    };
    for k in 1..3 {
        let (s, g) = step(party, k, &f)?;
        for (c, (s, g)) in [(&s.first, &g.first), (&s.second, &g.second)]
            .into_iter()
            .enumerate()
        {
            f[c] = advance(&f[c], s, g, w);
        }
    }
    // Step 3's level (16 entries) is not stored: the assembly below forms each word's
    // entries from `f` (8 entries), the products `g` and `s`, as `advance` would.
    let (s3, g3) = step(party, 3, &f)?;
    let mut e = RssVec {
        first: vec![0u16; n],
        second: vec![0u16; n],
    };
    let mut r = RssVec::zeros(n);
    let RssVec { first, second } = bits;
    let b = [first, second];
    let comps = [(&s3.first, &g3.first), (&s3.second, &g3.second)];
    for (c, (e_out, r_out)) in [(&mut e.first, &mut r.first), (&mut e.second, &mut r.second)]
        .into_iter()
        .enumerate()
    {
        let (f, b, (s, g)) = (&f[c], &b[c], comps[c]);
        let at = |v: &[Bits16], i: usize| v.get(i).map_or(0, |x| x.0);
        let word = |wd: usize| {
            let (f, g): ([u16; 8], [u16; 7]) = (
                core::array::from_fn(|j| at(f, j * w + wd)),
                core::array::from_fn(|j| at(g, j * w + wd)),
            );
            // `g_7 = s + Σ_j g_j`; the level is `(f + g, g)`.
            let last = g.iter().fold(at(s, wd), |a, x| a ^ x);
            let gj = |j: usize| if j < 7 { g[j] } else { last };
            (
                core::array::from_fn(|j| if j < 8 { f[j] ^ gj(j) } else { gj(j - 8) }),
                core::array::from_fn(|k| b[k * w + wd].0),
            )
        };
        assemble(word, e_out, r_out);
    }
    let e = Arc::new(e);
    if M::MALICIOUS {
        let rel = bitstring_relations(Arc::clone(&e), w);
        party.model().record_source(Arc::new(ByteSource(rel)));
    }
    Ok(Ohv16 { e, r })
}

/// The "bit × bit-string" relations of steps 2 and 3 of a batch of Protocol-5 runs (`k = 4`),
/// kept compact: per instance and component one `u16` ([`ONE_BIT`] layout: the random bits
/// `b_0..b_3`, the 11 products, the constant 1; 4 bytes per instance and party), mapped to
/// `GF(2^8)` bytes while `Verify` streams over them. With `n` instances, step `k` of instance
/// `j` is triple `(k - 2) n + j`: `X = s = b_k` as 0/1, `Y = Σ_{j<h-1} f_j u^j`, `Z =
/// Σ_{j<h-1} g_j u^j` ([`bitstring_parts`]), except that step 2's relation also certifies
/// step 1's product `g_0^(1) = b_1 f_0` (`f_0 = 1 + b_0`): its `X` is `b_2 + u^3 b_1` and its
/// `Z` gains `u^5 g_0^(1)`. The store fills whole words of 16 lanes: instances past the
/// requested ones are zero, whose layout is zero too, trivially valid triples.
///
/// \[DEV\] PROTOCOLS.md §5.5 lifts the strings as bit-polynomials to `GF(2^64)`; here they are
/// elements of `GF(2^8)` at `u = 0x02` (lifted by `E_8`, `Verify`'s byte path). Every part has
/// degree at most 6 (`Y`, `Z` of step 3), so nothing is reduced and `X Y = Z` holds in
/// `GF(2^8)` iff it holds for the bit-polynomials, exactly as in `GF(2^64)`.
///
/// \[DEV\] Step 1 has no triple of its own (PROTOCOLS.md §5.5 records `b_1 · f_0 = g_0` as a
/// third relation, §6.4 counts `L = 640` per AES-128 block; here `L = 480`, as for
/// mal-lut16-ohv). Step 2's string is `f' = (1 + b_0 + g_0, b_0 + b_1 + g_0, g_0)` (its first
/// three entries), and with the right `g_0 = b_1 (1 + b_0)` the bit identities give `b_1 f' =
/// (0, 0, g_0)`: so `(b_2 + u^3 b_1) Y = Σ_j g'_j u^j + u^5 g_0` holds for the honest values.
/// If a corrupt party adds `e` to `g_0` and `e'_j` to step 2's products (computed from the
/// string `f'` that the wrong `g_0` gives), then `b_1 Y = e b_1 (1 + u + u^2) + g_0 u^2` and
/// the relation is off by `Σ_j e'_j u^j + e (b_1 u^3 + b_1 u^4 + (1 + b_1) u^5)`: its
/// coefficients of `u^0..u^2` are the `e'_j`, and for `e = 1` it has `u^5` (if `b_1 = 0`) or
/// `u^3` (if `b_1 = 1`). It is a non-zero polynomial of degree below 8 whenever any of the
/// four products is wrong, whatever the bits, so the relation fails (no abort depends on a
/// secret); step 3's relation catches its own products' errors as before. The test
/// `bitstring_relations_fail_for_every_error_pattern` checks all `2^11` error patterns of
/// the 11 products at all 16 values of the bits.
type BitstringRelations = PerInstance<2>;

/// Layout of an instance's `u16`: bits 0-3 are `b_0..b_3`, bits 4-14 the 11 products in step
/// order (step `k`'s product `j` at `4 + step_offset(k) + j`), bit 15 the constant 1.
const ONE_BIT: usize = 15;

/// `(X, Y, Z)` of the three steps of one instance from its `u16` ([`ONE_BIT`] layout), as bit
/// polynomials: Protocol 5's levels recomputed from the bits and products. Linear over
/// `GF(2)` in `v` (the constant 1 is an input bit), which [`BITSTRING_TABLES`] relies on.
const fn bitstring_parts(v: u16) -> [[u16; 3]; 3] {
    bitstring_levels(v).0
}

/// [`bitstring_parts`] and the last level `e` (bit `j` = entry `j`, the one-hot vector) of
/// one instance from its `u16`.
const fn bitstring_levels(v: u16) -> ([[u16; 3]; 3], u16) {
    let one = (v >> ONE_BIT) & 1;
    let b0 = v & 1;
    let mut f = [0u16; 16];
    f[0] = b0 ^ one;
    f[1] = b0;
    let mut out = [[0u16; 3]; 3];
    let mut k = 1;
    while k < 4 {
        let h = 1usize << k;
        let s = (v >> k) & 1;
        let mut g = [0u16; 16];
        let (mut y, mut z, mut last) = (0u16, 0u16, s);
        let mut j = 0;
        while j < h - 1 {
            g[j] = (v >> (4 + step_offset(k) + j)) & 1;
            y |= f[j] << j;
            z |= g[j] << j;
            last ^= g[j];
            j += 1;
        }
        if k == 2 {
            // Step 1's product, checked by this relation: `X = b_2 + u^3 b_1`, `Z = Σ g_j u^j
            // + u^5 g_0^(1)` (see `BitstringRelations`).
            let (b1, g0) = ((v >> 1) & 1, (v >> 4) & 1);
            out[k - 1] = [s | b1 << 3, y, z | g0 << 5];
        } else {
            out[k - 1] = [s, y, z];
        }
        // The next level (f + g, g) with g_{h-1} = s + Σ_j g_j, as in `advance`.
        g[h - 1] = last;
        let mut next = [0u16; 16];
        j = 0;
        while j < h {
            next[j] = f[j] ^ g[j];
            next[h + j] = g[j];
            j += 1;
        }
        f = next;
        k += 1;
    }
    let mut e = 0u16;
    let mut j = 0;
    while j < 16 {
        e |= f[j] << j;
        j += 1;
    }
    (out, e)
}

/// `LAYOUT_OF_E[j]`: the instance `u16` ([`ONE_BIT`] layout) whose one-hot vector is the unit
/// vector `e = 2^j`. The last level is a bijective linear function of the layout (checked
/// when the table is built), so any `e` comes from `Σ_{j ∈ e} LAYOUT_OF_E[j]`.
const LAYOUT_OF_E: [u16; 16] = layout_of_e();

/// Inverts the 16×16 matrix over `GF(2)` whose column `i` is the last level of `2^i`, by
/// Gauss–Jordan elimination on the rows `[A | I]`.
const fn layout_of_e() -> [u16; 16] {
    // rows[r]: bit i (i < 16) = bit r of the last level of 2^i; bits 16.. the identity.
    let mut rows = [0u32; 16];
    let mut i = 0;
    while i < 16 {
        let col = bitstring_levels(1 << i).1;
        let mut r = 0;
        while r < 16 {
            rows[r] |= (((col >> r) & 1) as u32) << i;
            r += 1;
        }
        i += 1;
    }
    let mut r = 0;
    while r < 16 {
        rows[r] |= 1 << (16 + r);
        r += 1;
    }
    let mut c = 0;
    while c < 16 {
        let mut piv = c;
        while piv < 16 && (rows[piv] >> c) & 1 == 0 {
            piv += 1;
        }
        assert!(piv < 16, "the last level is not a bijection of the layout");
        let t = rows[c];
        rows[c] = rows[piv];
        rows[piv] = t;
        let mut r = 0;
        while r < 16 {
            if r != c && (rows[r] >> c) & 1 == 1 {
                rows[r] ^= rows[c];
            }
            r += 1;
        }
        c += 1;
    }
    // Now rows[i] = [e_i | row i of the inverse]: bit j of the inverse's row i is bit i of
    // the layout for e = 2^j.
    let mut out = [0u16; 16];
    let mut j = 0;
    while j < 16 {
        let mut v = 0u16;
        let mut i = 0;
        while i < 16 {
            v |= (((rows[i] >> (16 + j)) & 1) as u16) << i;
            i += 1;
        }
        out[j] = v;
        j += 1;
    }
    out
}

/// `BITSTRING_TABLES[k - 1][p][h][b]`: part `p` of step `k` for an instance whose one-hot
/// vector `e` has byte `h` equal to `b` and the other byte zero (the two halves' values are
/// XORed, by linearity): the parts of the layout `u16` that gives this `e`
/// ([`LAYOUT_OF_E`]).
const BITSTRING_TABLES: PartTables<3> = bitstring_tables();

/// The tables of steps 2 and 3, which [`BitstringRelations`] holds.
const LATER_STEP_TABLES: PartTables<2> = [BITSTRING_TABLES[1], BITSTRING_TABLES[2]];

/// [`LATER_STEP_TABLES`] as byte maps.
static BITSTRING_MAPS: PartMaps<2> = part_maps(&LATER_STEP_TABLES);

const fn bitstring_tables() -> PartTables<3> {
    let mut t = [[[[0u16; 256]; 2]; 3]; 3];
    let mut h = 0;
    while h < 2 {
        let mut b = 0;
        while b < 256 {
            let e = (b as u16) << (8 * h);
            let mut v = 0u16;
            let mut j = 0;
            while j < 16 {
                if (e >> j) & 1 == 1 {
                    v ^= LAYOUT_OF_E[j];
                }
                j += 1;
            }
            let parts = bitstring_parts(v);
            let mut k = 0;
            while k < 3 {
                let mut p = 0;
                while p < 3 {
                    t[k][p][h][b] = parts[k][p];
                    p += 1;
                }
                k += 1;
            }
            b += 1;
        }
        h += 1;
    }
    t
}

/// The relations of steps 2 and 3 from the one-hot vectors Protocol 5 assembled (both
/// components), padded with zero instances to `16 words`.
fn bitstring_relations(e: Arc<RssVec<u16>>, words: usize) -> BitstringRelations {
    PerInstance::from_vectors_with(e, words, &BITSTRING_MAPS)
}

#[cfg(test)]
impl BitstringRelations {
    /// From the bit-sliced bits and products of both components (`words` words each entry)
    /// and the constant 1 per component: their layout `u16`s, the last levels of those, and
    /// [`bitstring_relations`] (the reference for the tests).
    fn from_bits(
        bits: [Vec<Bits16>; 2],
        products: [Vec<Bits16>; 2],
        one: [u16; 2],
        words: usize,
    ) -> Self {
        use super::ohv16::per_instance;
        let row = |v: &[Bits16], e: usize, w: usize| v.get(e * words + w).map_or(0, |x| x.0);
        let [first, second] = [0, 1].map(|c| {
            let [lo, hi] = per_instance(words, |r, w| match r {
                0..4 => row(&bits[c], r, w),
                ONE_BIT => one[c],
                _ => row(&products[c], r - 4, w),
            });
            lo.iter()
                .zip(&hi)
                .map(|(l, h)| bitstring_levels(u16::from_le_bytes([*l, *h])).1)
                .collect()
        });
        bitstring_relations(Arc::new(RssVec { first, second }), words)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sbox::ohv16::{transpose16, triple_index};
    use triskele_engine::verify::{LiftedTriples, Parts, TripleSource};
    use triskele_field::{EmbedInto, Gf2p64};

    /// Bit-sliced random bits with lane `l` at position `r = l` (bit `k` of `l` in `b_k`).
    fn lane_positions() -> [Bits16; 4] {
        core::array::from_fn(|k| {
            Bits16(
                (0..16u16)
                    .filter(|l| (l >> k) & 1 == 1)
                    .fold(0, |a, l| a | (1 << l)),
            )
        })
    }

    /// Protocol 5 in the clear on one word: the final level and the 11 products, with bit `i`
    /// of `err` added to product `i` in every lane as it is computed (a corrupt party's error
    /// in its reshare; the later steps are computed from the wrong values).
    fn clear_run(b: &[Bits16; 4], err: u16) -> ([Bits16; 16], [Bits16; 11]) {
        let mut f = [Bits16(0); 16];
        f[0] = Bits16(!b[0].0);
        f[1] = b[0];
        let mut products = [Bits16(0); 11];
        for k in 1..4 {
            let h = 1usize << k;
            let mut g = [Bits16(0); 16];
            for j in 0..h - 1 {
                let e = if (err >> (step_offset(k) + j)) & 1 == 1 {
                    0xffff
                } else {
                    0
                };
                g[j] = Bits16((b[k].0 & f[j].0) ^ e);
                products[step_offset(k) + j] = g[j];
            }
            let mut next = [Bits16(0); 16];
            next[..2 * h].copy_from_slice(&advance(&f[..h], &[b[k]], &g[..h - 1], 1));
            f = next;
        }
        (f, products)
    }

    #[test]
    fn protocol5_levels_give_one_hot_vectors_at_r() {
        let (mut e, products) = clear_run(&lane_positions(), 0);
        assert_eq!(products.len(), 11);
        let mut words = e.map(|x| x.0);
        transpose16(&mut words);
        for (l, v) in words.iter().enumerate() {
            assert_eq!(*v, 1 << l, "r = {l}");
        }
        e[3] = Bits16(0);
        assert_ne!(e.map(|x| x.0), words);
    }

    /// Lifts the relations of one word whose values are shared as `(v + m, m)` (masks `m`),
    /// reconstructed: the lift is tested for additivity too. Returns `holds[lane][k]` for the
    /// relation of step `k + 2`.
    /// Of the bit-string relations, only the `x` of the second lies in the subfield of 16
    /// elements of `GF(2^8)`, whose parts the check embeds by tables of 16 entries; what the
    /// store says matches its maps.
    #[test]
    fn bitstring_parts_in_the_subfield() {
        let b: [Vec<Bits16>; 2] = [vec![Bits16(0x1234); 4], vec![Bits16(0x0f0f); 4]];
        let p: [Vec<Bits16>; 2] = [vec![Bits16(0xa5a5); 11], vec![Bits16(0x3c3c); 11]];
        let rel = BitstringRelations::from_bits(b, p, [0xffff, 0], 1);
        assert_eq!(
            crate::sbox::ohv16::subfield_parts(&rel),
            [[false; 3], [true, false, false]]
        );
    }

    fn relations_hold(b: &[Bits16; 4], products: &[Bits16; 11]) -> [[bool; 2]; 16] {
        let mask = |i: usize| Bits16((i as u16).wrapping_mul(0x9e37) ^ 0x5a5a);
        let share = |v: &[Bits16], off: usize| -> [Vec<Bits16>; 2] {
            let second: Vec<Bits16> = (0..v.len()).map(|i| mask(i + off)).collect();
            let first = v
                .iter()
                .zip(&second)
                .map(|(a, m)| Bits16(a.0 ^ m.0))
                .collect();
            [first, second]
        };
        let rel = BitstringRelations::from_bits(share(b, 0), share(products, 4), [0xffff, 0], 1);
        let rel = ByteSource(rel);
        assert_eq!(rel.len(), 32);
        let mut out = LiftedTriples {
            x: RssVec::zeros(34),
            y: RssVec::zeros(34),
            z: RssVec::zeros(34),
        };
        rel.lift(0, Parts::Xyz, &mut out);
        let at = |v: &RssVec<Gf2p64>, t: usize| v.first[t] + v.second[t];
        assert_eq!(at(&out.x, 32), Gf2p64(0));
        core::array::from_fn(|l| {
            core::array::from_fn(|k| {
                let t = triple_index(16, l, k);
                at(&out.x, t) * at(&out.y, t) == at(&out.z, t)
            })
        })
    }

    /// The relations hold for the honest values and a wrong value of any of the 11 product
    /// bits breaks the relation that certifies it in its lane (step 2's for the products of
    /// steps 1 and 2, step 3's for those of step 3; other lanes and earlier relations are
    /// unaffected).
    #[test]
    fn bitstring_relations_hold_exactly_for_correct_products() {
        let b = lane_positions();
        let (_, products) = clear_run(&b, 0);
        assert!(relations_hold(&b, &products).iter().flatten().all(|h| *h));
        for i in 0..11 {
            let rel = if i < 4 { 0 } else { 1 };
            for lane in 0..16 {
                let mut bad = products;
                bad[i].0 ^= 1 << lane;
                let holds = relations_hold(&b, &bad);
                assert!(!holds[lane][rel], "product {i}, lane {lane}");
                assert!(holds[lane][..rel].iter().all(|h| *h));
                for (l, h) in holds.iter().enumerate() {
                    assert!(l == lane || h.iter().all(|h| *h), "product {i}, lane {l}");
                }
            }
        }
    }

    /// A part of a relation (a bit-polynomial of degree below 8) as its element of `GF(2^8)`.
    fn byte(v: u16) -> Gf2p8 {
        assert!(v < 0x80, "degree above 6: {v:#x}");
        Gf2p8(v as u8)
    }

    /// Every error pattern of the 11 products breaks a relation, at every value of the bits
    /// (so an abort never depends on them), and the honest values satisfy both: the two
    /// relations in `GF(2^8)` certify all products, step 1's inside step 2's.
    #[test]
    fn bitstring_relations_fail_for_every_error_pattern() {
        // Lane `l` runs on the bits of `l`, so one word covers all 16 values of the bits.
        let b = lane_positions();
        let bit = |v: Bits16, l: usize| (v.0 >> l) & 1;
        for err in 0..1u16 << 11 {
            let (_, products) = clear_run(&b, err);
            for l in 0..16 {
                let layout = (0..4).fold(1 << ONE_BIT, |v, k| v | bit(b[k], l) << k);
                let layout = (0..11).fold(layout, |v, i| v | bit(products[i], l) << (4 + i));
                let holds = bitstring_parts(layout)[1..]
                    .iter()
                    .all(|[x, y, z]| byte(*x) * byte(*y) == byte(*z));
                assert_eq!(holds, err == 0, "bits {l}, errors {err:#05x}");
            }
        }
    }

    /// Step 1 of Protocol 5 is not recorded (its product is certified by step 2's relation):
    /// no bit triples, two relations per lane of every word, and the preprocessing's vectors
    /// are one-hot.
    #[test]
    fn step_one_is_certified_by_step_two() {
        use triskele_engine::Malicious;
        let n = 40;
        let nets = triskele_net::in_memory(&triskele_net::NetOptions::default());
        let outs: Vec<(Vec<u16>, usize, usize)> = std::thread::scope(|sc| {
            let hs: Vec<_> = nets
                .into_iter()
                .map(|net| {
                    sc.spawn(move || {
                        let mut p = Party::<Malicious>::setup(net).expect("setup");
                        let ohv = bitstring_ohv16(&mut p, n).expect("preprocess");
                        let rec = p.model().recorder();
                        (ohv.e.first.clone(), rec.bits.x.len(), rec.gf2p64_triples())
                    })
                })
                .collect();
            hs.into_iter().map(|h| h.join().expect("party")).collect()
        });
        // The secret is the sum of the first components of the three parties.
        let e: Vec<u16> = (0..n)
            .map(|j| outs.iter().fold(0, |a, o| a ^ o.0[j]))
            .collect();
        for (j, &e) in e.iter().enumerate() {
            assert_eq!(e.count_ones(), 1, "instance {j} not one-hot: {e:#06x}");
            let v = (0..16)
                .filter(|b| (e >> b) & 1 == 1)
                .fold(0, |a, b| a ^ LAYOUT_OF_E[b]);
            for [x, y, z] in &bitstring_parts(v)[1..] {
                assert_eq!(byte(*x) * byte(*y), byte(*z), "instance {j}");
            }
        }
        let w = n.div_ceil(16);
        for o in &outs {
            assert_eq!(o.1, 0, "no bit triples");
            assert_eq!(o.2, 2 * 16 * w);
        }
    }

    /// The tables at an instance's last level are the parts of its `u16` for every `u16` (so
    /// `bitstring_parts` and the last level are linear, as the table lookup assumes).
    #[test]
    fn bitstring_tables_match_the_parts_of_every_instance() {
        for v in 0..=u16::MAX {
            let e = bitstring_levels(v).1;
            let [lo, hi] = [usize::from(e & 0xff), usize::from(e >> 8)];
            let want = bitstring_parts(v);
            for (k, parts) in want.iter().enumerate() {
                for (p, x) in parts.iter().enumerate() {
                    let tab = &BITSTRING_TABLES[k][p];
                    assert_eq!(tab[0][lo] ^ tab[1][hi], *x, "v {v:#06x} step {k} part {p}");
                }
            }
        }
    }

    /// [`LAYOUT_OF_E`] recovers every instance `u16` from its last level.
    #[test]
    fn layouts_are_recovered_from_the_last_level() {
        for v in 0..=u16::MAX {
            let e = bitstring_levels(v).1;
            let back = (0..16)
                .filter(|j| (e >> j) & 1 == 1)
                .fold(0, |acc, j| acc ^ LAYOUT_OF_E[j]);
            assert_eq!(back, v, "layout {v:#06x}");
        }
    }

    /// Every part of every step has degree at most 6 in `u`, so its `GF(2^8)` element is the
    /// bit-polynomial itself (nothing is reduced) and the check in `GF(2^8)` is the check of
    /// the coefficient identities.
    #[test]
    fn bitstring_parts_are_unreduced_bytes() {
        for step in &BITSTRING_TABLES {
            for part in step {
                assert!(part.iter().flatten().all(|v| *v < 0x80));
            }
        }
    }

    #[test]
    fn lift_reads_across_word_boundaries() {
        // Two words; a chunk starting mid-word gives the same triples as a full lift.
        let b = lane_positions();
        let (_, p) = clear_run(&b, 0);
        let two = |v: &[Bits16], per: usize| -> Vec<Bits16> {
            (0..per).flat_map(|e| [v[e], Bits16(!v[e].0)]).collect()
        };
        let (_, p2) = clear_run(&b.map(|x| Bits16(!x.0)), 0);
        let products: Vec<Bits16> = (0..11).flat_map(|e| [p[e], p2[e]]).collect();
        let rel = ByteSource(BitstringRelations::from_bits(
            [two(&b, 4), vec![Bits16(0); 8]],
            [products, vec![Bits16(0); 22]],
            [0xffff, 0],
            2,
        ));
        let lift = |start: usize, n: usize| {
            let mut out = LiftedTriples {
                x: RssVec::zeros(n),
                y: RssVec::zeros(n),
                z: RssVec::zeros(n),
            };
            rel.lift(start, Parts::Xyz, &mut out);
            // `y_bytes` gives the bytes whose `E_8` is the lifted `y`.
            let (mut y1, mut y2) = (vec![1u8; n], vec![1u8; n]);
            assert!(rel.y_bytes(start, [&mut y1, &mut y2]));
            for (y, lifted) in [(y1, &out.y.first), (y2, &out.y.second)] {
                let e: Vec<Gf2p64> = y.iter().map(|b| Gf2p8(*b).embed()).collect();
                assert_eq!(&e, lifted, "start {start}");
            }
            out
        };
        let all = lift(0, 64);
        for t in 0..64 {
            assert_eq!(
                all.x.first[t] * all.y.first[t],
                all.z.first[t],
                "triple {t}"
            );
        }
        let part = lift(40, 20);
        assert_eq!(part.z.first[..], all.z.first[40..60]);
        assert_eq!(part.y.first[..], all.y.first[40..60]);
    }
}
