//! Products recorded as the vectors a layer computed them from and into.
//!
//! A protocol whose products' factors are shared vectors it holds anyway (its inputs, local
//! maps of earlier values, earlier products) can hand those vectors to the check instead of
//! copying every product's two factors and result into the record store
//! ([`triskele_engine::Party::mul`] copies six vectors per product). [`StoredRelations`]
//! names, for each relation (a run of `n` products), the vector and the offset of each of
//! its parts; `Verify` reads them in place on its byte path. The triples are those
//! `Party::mul` would have recorded, so `L` and the messages of the check are unchanged.
//!
//! # Order
//!
//! The triples are taken in blocks of [`BLOCK`] instances: block `b` holds the triples of
//! instances `b BLOCK ..` (`q` of them, `BLOCK` but in the last block) of all `R` relations,
//! relation after relation, so that relation `k` of instance `j` is triple `R b BLOCK + k q +
//! (j - b BLOCK)`; with `n ≤ BLOCK` instances that is `k n + j`, the order `Party::mul`
//! records them in. Relations share vectors (a product is the next one's factor), and
//! `Verify`'s first level reads the triples chunk by chunk in this order: relation `k + 1` of a
//! block then finds the vectors it shares with relation `k` in the cache, where with all of
//! relation `k` before relation `k + 1` each shared vector came from memory again (for
//! mal-chida-rec-check's chain, 24 bytes read per inversion and pass against 10 stored).
//!
//! # Aligned layout
//!
//! [`StoredRelations::aligned`] fills the last block up to [`BLOCK`] instances with zero
//! triples where that adds at most a sixteenth. Every relation's run of a block is then a
//! whole number of the chunks in which `Verify`'s first level takes its triples
//! ([`SHARED_ALIGN`]), so that a part two relations share (the same vector, offset and maps:
//! [`ByteRows::shared_part`]) is loaded, extrapolated and folded once there. The zero triples
//! hold, are the same for every party, and lengthen the check by at most `1/16` of its
//! triples (at most one more halving).

use std::ops::Range;
use std::sync::Arc;

use triskele_engine::verify::{ByteRows, ByteSource, SHARED_ALIGN};
use triskele_engine::{EngineError, Party, SecurityModel, GF2P4_TO_GF2P8};
use triskele_field::embed::in_subfield;
use triskele_field::{Bulk, Encode, Gf2p4, Gf2p8, LinearMap8};
use triskele_share::RssVec;

use super::ohv16::relation_runs;

/// Where a part (`X`, `Y` or `Z`) of a relation lies: entries `offset .. offset + n` of
/// vector `vector`, with `map` applied if it is given (a local `GF(2)`-linear map of a stored
/// value, e.g. a Frobenius power, so that the value need not be stored itself), plus up to
/// two more stored values, each through its map (a part that is a linear combination of two
/// or three stored values, [`At::plus`]; the second slot only with the first).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct At {
    pub(crate) vector: usize,
    pub(crate) offset: usize,
    pub(crate) map: Option<&'static LinearMap8>,
    pub(crate) plus: [Option<Plus>; 2],
}

/// A second or third term of a part ([`At::plus`]): entries `offset .. offset + n` of vector
/// `vector` through `map` (after the byte form `ψ` for [`Form::Nibbles`], as for the first
/// term).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Plus {
    pub(crate) vector: usize,
    pub(crate) offset: usize,
    pub(crate) map: &'static LinearMap8,
}

impl At {
    /// This part plus entries `offset ..` of vector `vector` through `map`, added as they
    /// are loaded (a part that is not itself stored but the sum of two or three stored
    /// values, each through a map; [`StoredRelations`] reads them all). The term goes into the
    /// first free slot; a part has at most three terms, and a fourth replaces the third.
    pub(crate) const fn plus(self, vector: usize, offset: usize, map: &'static LinearMap8) -> At {
        let term = Some(Plus {
            vector,
            offset,
            map,
        });
        let plus = match self.plus[0] {
            None => [term, None],
            Some(_) => [self.plus[0], term],
        };
        At { plus, ..self }
    }
}

/// Shorthand for [`At`]: entries from `offset` of vector `vector`, mapped by `map`.
pub(crate) const fn part(vector: usize, offset: usize, map: Option<&'static LinearMap8>) -> At {
    At {
        vector,
        offset,
        map,
        plus: [None; 2],
    }
}

/// Shorthand for [`At`] at offset 0, unmapped.
pub(crate) const fn at(vector: usize) -> At {
    At {
        vector,
        offset: 0,
        map: None,
        plus: [None; 2],
    }
}

/// Instances per block of the triple order (module docs): a block's triples (`R BLOCK` of
/// them) span a few of `Verify`'s chunks of `32 · 1024` triples.
pub(crate) const BLOCK: usize = 1 << 15;

/// Entries per piece in which [`StoredRelations`] adds a part's second term ([`At::plus`]).
const PLUS_PIECE: usize = 1024;

/// How the vectors of [`StoredRelations`] hold their entries.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Form {
    /// One byte per entry: the element of `GF(2^8)` itself.
    Bytes,
    /// `GF(2^4)` elements two per byte, as on the wire (entry `2i` in the high nibble of
    /// byte `i`, entry `2i + 1` in the low; `Encode`), taken to their byte form `ψ` as they
    /// are loaded: half the memory for the check to read.
    Nibbles,
}

/// A shared vector of `GF(2^4)` elements packed two per byte (both components), as
/// [`StoredRelations`] keeps it ([`Form::Nibbles`]). A protocol packs each vector it records
/// as soon as it has computed it, while it is still in the cache: packed at the end of a
/// layer, mal-gf4-circuit's seven vectors came from memory again (docs/PERFORMANCE.md,
/// "Records packed while in cache"). Cloning it shares the memory: two sources may read the
/// same vector (mal-gf4-circuit-opt's norm relation and its gf4p4 relations read `d` and
/// `d^-1`).
#[derive(Clone)]
pub(crate) struct PackedNibbles {
    comps: Arc<[Vec<u8>; 2]>,
    /// Entries (the shorter component's).
    len: usize,
}

impl PackedNibbles {
    /// Both components of `v`, packed into memory taken from `memory`.
    pub(crate) fn new_in(v: &RssVec<Gf2p4>, memory: &mut RecordMemory) -> Self {
        PackedNibbles {
            // Past the cache: the records are read only by the finalize check, and written
            // through the cache they evicted the layer's own vectors (online phase of
            // mal-gf4-circuit at 10,000 blocks about 6% shorter; docs/PERFORMANCE.md).
            comps: Arc::new([&v.first, &v.second].map(|c| {
                let out = memory.take(Gf2p4::encoded_len(c.len()));
                Gf2p4::encode_streaming_into(c, out)
            })),
            len: v.first.len().min(v.second.len()),
        }
    }

    /// Entries (the shorter component's).
    pub(crate) fn len(&self) -> usize {
        self.len
    }

    /// Component `c` (0 or 1), packed two entries per byte.
    pub(crate) fn comp(&self, c: usize) -> &[u8] {
        &self.comps[c % 2]
    }

    /// Both components' bytes.
    pub(crate) fn stored_bytes(&self) -> usize {
        self.comps.iter().map(Vec::len).sum()
    }
}

/// The memory of a run's records, reserved ahead for many layers at once: for all of them,
/// or for as many as the current verification segment has room for
/// ([`RecordMemory::begin_layer`]).
///
/// Records stay allocated until they are verified, while every layer allocates and frees its
/// own working vectors. Allocated layer by layer, the records took memory the allocator had
/// just had back from the previous layer's working vectors (still in the cache), and the next
/// layer's vectors came from memory further off, colder: mal-gf4-circuit's online phase ran
/// about 5% longer than with the records' memory reserved ahead (docs/PERFORMANCE.md,
/// "Record memory reserved up front").
#[derive(Debug, Default)]
pub(crate) struct RecordMemory {
    /// Instances the run has still to invert ([`RecordMemory::expect`]); unknown is zero.
    remaining: usize,
    /// Reserved vectors, empty, not yet taken.
    free: Vec<Vec<u8>>,
    /// Vectors taken, reserved or not.
    #[cfg(test)]
    taken: usize,
}

impl RecordMemory {
    /// The fewest instances of a layer whose records are reserved for (smaller layers, such
    /// as the key schedule's, allocate theirs as they go).
    pub(crate) const MIN_LAYER: usize = 1 << 12;

    /// A run of `n` instances in all begins: what was reserved before goes.
    pub(crate) fn expect(&mut self, n: usize) {
        *self = RecordMemory {
            remaining: n,
            ..RecordMemory::default()
        };
    }

    /// A layer of `n` instances begins, whose records take vectors of the capacities `caps`.
    /// If nothing is reserved and the layer is large enough, reserves `caps` for as many
    /// layers of `n` as the rest of the run holds, this one included; with `room` given (the
    /// model verifies its records in segments, and the current one can take `room` bytes
    /// more: `SecurityModel::segment_room`), for no more layers than fill that room (at
    /// least this one), so that the reserve does not hold memory the verified segments would
    /// have given back.
    pub(crate) fn begin_layer(&mut self, n: usize, caps: &[usize], room: Option<usize>) {
        if self.free.is_empty() && n >= Self::MIN_LAYER {
            let mut layers = self.remaining / n;
            if let Some(room) = room {
                let layer_bytes = caps.iter().sum::<usize>().max(1);
                layers = layers.min(room.div_ceil(layer_bytes).max(1));
            }
            self.free.reserve(layers * caps.len());
            for _ in 0..layers {
                // Taken from the back: the layer's first vector last.
                self.free
                    .extend(caps.iter().rev().map(|&c| Vec::with_capacity(c)));
            }
        }
        self.remaining = self.remaining.saturating_sub(n);
    }

    /// An empty vector of capacity `cap` at least: a reserved one of exactly `cap` if one is
    /// left, else a new one.
    pub(crate) fn take(&mut self, cap: usize) -> Vec<u8> {
        #[cfg(test)]
        {
            self.taken += 1;
        }
        match self.free.iter().rposition(|v| v.capacity() == cap) {
            Some(i) => self.free.swap_remove(i),
            None => Vec::with_capacity(cap),
        }
    }

    /// Reserved vectors not taken.
    #[cfg(test)]
    pub(crate) fn left(&self) -> usize {
        self.free.len()
    }

    /// Vectors taken since [`RecordMemory::expect`], reserved or not.
    #[cfg(test)]
    pub(crate) fn taken(&self) -> usize {
        self.taken
    }
}

/// Relations of `n` products each, stored as vectors of `GF(2^8)` bytes, or of `GF(2^4)`
/// elements packed two per byte (whose byte form `ψ`, their lift, the check reads): relation
/// `k` of instance `j` is one triple (in blocks of [`BLOCK`] instances, module docs), its
/// parts entries `offset + j` of the vectors that `parts[k]` names (mapped where the part
/// says so).
pub(crate) struct StoredRelations {
    n: usize,
    /// Instances in the triple order: `n`, or `n` rounded up to whole blocks, the instances
    /// from `n` on zero triples ([`StoredRelations::aligned`]).
    layout: usize,
    form: Form,
    /// Both components of each vector, in `form` (shared with other sources where a
    /// [`PackedNibbles`] was cloned).
    vectors: Vec<Arc<[Vec<u8>; 2]>>,
    parts: Vec<[At; 3]>,
    /// Per relation and part, the maps applied to the stored entries of each of its terms
    /// ([`term_maps`]), formed once.
    maps: Vec<[TermMaps; 3]>,
}

/// The maps a part's terms take from the stored entries: for [`Form::Bytes`] the part's own
/// (`None`: copied), for [`Form::Nibbles`] the part's after `ψ`.
#[derive(Clone, Copy)]
struct TermMaps {
    first: Option<LinearMap8>,
    plus: [Option<LinearMap8>; 2],
    /// Whether the part's bytes lie in the subfield of 16 elements of `GF(2^8)`: stored
    /// nibbles whose every term's map (`ψ` included) sends all sixteen into it, so that their
    /// sum does too ([`ByteRows::in_subfield`]).
    subfield: bool,
}

/// [`TermMaps`] of every part of `parts` in `form`.
fn term_maps(form: Form, parts: &[[At; 3]]) -> Vec<[TermMaps; 3]> {
    let map = |m: Option<&LinearMap8>| match form {
        Form::Bytes => m.copied(),
        Form::Nibbles => Some(m.map_or(GF2P4_TO_GF2P8, |m| m.compose(&GF2P4_TO_GF2P8))),
    };
    let into_subfield = |m: &LinearMap8| (0..16).all(|v| in_subfield(m.apply_byte(v)));
    parts
        .iter()
        .map(|ps| {
            ps.map(|a| {
                let (first, plus) = (map(a.map), a.plus.map(|b| b.and_then(|b| map(Some(b.map)))));
                let subfield = form == Form::Nibbles
                    && core::iter::once(&first)
                        .chain(&plus)
                        .flatten()
                        .all(into_subfield);
                TermMaps {
                    first,
                    plus,
                    subfield,
                }
            })
        })
        .collect()
}

impl StoredRelations {
    /// The relations of `n` instances over `vectors` of bytes; refused if a part reaches
    /// past the end of its vector (in either component) or names no vector.
    pub(crate) fn new(
        n: usize,
        vectors: Vec<RssVec<Gf2p8>>,
        parts: &[[At; 3]],
    ) -> Result<Self, EngineError> {
        let entries = vectors.iter().map(|v| v.first.len().min(v.second.len()));
        Self::checked(n, parts, entries.collect())?;
        let vectors = vectors
            .into_iter()
            .map(|v| Arc::new([v.first, v.second].map(Gf2p8::vec_into_bytes)))
            .collect();
        Ok(StoredRelations {
            n,
            layout: n,
            form: Form::Bytes,
            vectors,
            parts: parts.to_vec(),
            maps: term_maps(Form::Bytes, parts),
        })
    }

    /// The relations of `n` instances over `vectors` of `GF(2^4)` elements, packed two per
    /// byte (each vector's memory given back); refused as by [`StoredRelations::new`].
    #[cfg(test)]
    pub(crate) fn nibbles(
        n: usize,
        vectors: Vec<RssVec<Gf2p4>>,
        parts: &[[At; 3]],
    ) -> Result<Self, EngineError> {
        let mut memory = RecordMemory::default();
        let packed = vectors
            .iter()
            .map(|v| PackedNibbles::new_in(v, &mut memory))
            .collect();
        Self::packed(n, packed, parts)
    }

    /// The relations of `n` instances over `vectors`, `GF(2^4)` elements already packed
    /// ([`PackedNibbles`]); refused as by [`StoredRelations::new`].
    pub(crate) fn packed(
        n: usize,
        vectors: Vec<PackedNibbles>,
        parts: &[[At; 3]],
    ) -> Result<Self, EngineError> {
        Self::checked(n, parts, vectors.iter().map(|v| v.len).collect())?;
        Ok(StoredRelations {
            n,
            layout: n,
            form: Form::Nibbles,
            vectors: vectors.into_iter().map(|v| v.comps).collect(),
            parts: parts.to_vec(),
            maps: term_maps(Form::Nibbles, parts),
        })
    }

    /// The same relations with every block of the triple order (module docs) [`BLOCK`]
    /// instances long, the last one filled up with zero triples (`0 · 0 = 0`, so they hold),
    /// where that adds at most a sixteenth to the triples. Each relation's run of a block then
    /// covers whole chunks of the check's first level ([`SHARED_ALIGN`] divides [`BLOCK`]),
    /// so that a factor two relations share is worked once there
    /// ([`ByteRows::shared_part`]) if the source starts on a chunk too. Every party lays out
    /// its triples alike, from `n` alone.
    pub(crate) fn aligned(self) -> Self {
        const { assert!(BLOCK.is_multiple_of(SHARED_ALIGN)) };
        let padded = self.n.next_multiple_of(BLOCK);
        if self.n >= BLOCK && (padded - self.n) * 16 <= self.n {
            StoredRelations {
                layout: padded,
                ..self
            }
        } else {
            self
        }
    }

    /// Whether every part of `parts` lies inside its vector (`entries` per vector).
    fn checked(n: usize, parts: &[[At; 3]], entries: Vec<usize>) -> Result<(), EngineError> {
        let terms = parts.iter().flatten().flat_map(|a| {
            let plus = a.plus.into_iter().flatten().map(|p| (p.vector, p.offset));
            core::iter::once((a.vector, a.offset)).chain(plus)
        });
        for (vector, offset) in terms {
            let need = offset.saturating_add(n);
            let got = entries.get(vector).copied().unwrap_or(0);
            if got < need {
                return Err(EngineError::LengthMismatch {
                    expected: need,
                    got,
                });
            }
        }
        Ok(())
    }

    /// The triples `start .. start + count` (those in range) as runs of consecutive
    /// instances of one relation: `(k, instances, at)`, `at` the run's first triple less
    /// `start` (the order of the module docs).
    fn runs(
        &self,
        start: usize,
        count: usize,
    ) -> impl Iterator<Item = (usize, Range<usize>, usize)> {
        relation_runs(self.parts.len(), self.layout, BLOCK, start, count)
    }

    /// The index of relation `k` of instance `j` (the order of the module docs).
    fn triple(&self, k: usize, j: usize) -> usize {
        let first = j / BLOCK * BLOCK;
        let q = BLOCK.min(self.layout - first);
        self.parts.len() * first + k * q + (j - first)
    }

    /// Entries `first .. first + out.len()` of component `c` of vector `vector` through `map`
    /// (a term's map of [`TermMaps`]: for [`Form::Nibbles`] always given, `ψ` included).
    fn term(
        &self,
        c: usize,
        vector: usize,
        first: usize,
        map: Option<&LinearMap8>,
        out: &mut [u8],
    ) {
        let v = &self.vectors[vector][c];
        match self.form {
            Form::Bytes => {
                let src = &v[first..first + out.len()];
                // An unmapped part goes through the identity map too: the vector kernels
                // prefetch what they stream from memory, a plain copy did not (finalize of
                // mal-chida-rec-check at 10,000 blocks about 5% shorter; docs/PERFORMANCE.md).
                map.unwrap_or(&LinearMap8::IDENTITY).apply_bytes(src, out);
            }
            Form::Nibbles => unpack(v, first, map.unwrap_or(&GF2P4_TO_GF2P8), out),
        }
    }

    /// Keeps the relations for the finalize check (a no-op for models without checks).
    pub(crate) fn record<M: SecurityModel>(self, party: &mut Party<M>) {
        if M::MALICIOUS {
            party.model().record_source(Arc::new(ByteSource(self)));
        }
    }
}

/// `GF(2^4)` shares as the bytes `ψ` in which the check takes them (the same allocations,
/// mapped in place).
#[cfg(test)]
pub(crate) fn gf2p4_bytes(v: RssVec<Gf2p4>) -> RssVec<Gf2p8> {
    RssVec {
        first: triskele_engine::gf2p4_as_check_bytes(v.first),
        second: triskele_engine::gf2p4_as_check_bytes(v.second),
    }
}

/// Entries `first .. first + out.len()` of `GF(2^4)` elements packed two per byte
/// ([`Form::Nibbles`]), one per byte of `out`, each through `map` as it is written.
pub(crate) fn unpack(packed: &[u8], first: usize, map: &LinearMap8, out: &mut [u8]) {
    let (i, out) = match out.split_first_mut() {
        Some((o, rest)) if first % 2 == 1 => {
            *o = map.apply_byte(packed[first / 2] & 0x0f);
            (first + 1, rest)
        }
        _ => (first, out),
    };
    let pairs = out.len() / 2;
    let (head, tail) = out.split_at_mut(2 * pairs);
    Gf2p4::unpack_pairs_mapped(&packed[i / 2..i / 2 + pairs], map, head);
    if let Some(o) = tail.first_mut() {
        *o = map.apply_byte(packed[i / 2 + pairs] >> 4);
    }
}

/// `outs[o][i] = Σ_s maps[s][o](run_s[first_s + i])` for the packed runs `(run_s, first_s)`
/// ([`Form::Nibbles`]), every run read once and every output written once
/// ([`Gf2p4::unpack_pairs_mapped_sums`]); `false` (nothing written) if the starts differ in
/// parity, so that the runs' nibbles do not pair up byte by byte, or if there are more runs
/// than one pass takes.
pub(crate) fn unpack_sums<const O: usize>(
    runs: &[(&[u8], usize)],
    maps: &[[&LinearMap8; O]],
    outs: [&mut [u8]; O],
) -> bool {
    let Some(&(_, first)) = runs.first() else {
        return false;
    };
    let n = outs.iter().map(|o| o.len()).min().unwrap_or(0);
    if runs.len() > triskele_field::UNPACK_SUMS_MAX
        || maps.len() != runs.len()
        || runs.iter().any(|(_, f)| f % 2 != first % 2)
    {
        return false;
    }
    let nibble = |i: usize, take: fn(u8) -> u8| -> [u8; O] {
        core::array::from_fn(|o| {
            runs.iter().zip(maps).fold(0, |acc, ((run, f), m)| {
                acc ^ m[o].apply_byte(take(run[(f + i) / 2]))
            })
        })
    };
    let mut outs = outs.map(|o| &mut o[..n]);
    let skip = usize::from(first % 2 == 1 && n > 0);
    if skip == 1 {
        for (o, v) in outs.iter_mut().zip(nibble(0, |b| b & 0x0f)) {
            o[0] = v;
        }
    }
    let pairs = (n - skip) / 2;
    let srcs: [&[u8]; triskele_field::UNPACK_SUMS_MAX] = core::array::from_fn(|s| {
        runs.get(s).map_or(&[][..], |(run, f)| {
            let at = (f + skip) / 2;
            &run[at..at + pairs]
        })
    });
    let heads = outs.each_mut().map(|o| &mut o[skip..skip + 2 * pairs]);
    Gf2p4::unpack_pairs_mapped_sums(&srcs[..runs.len()], maps, heads);
    if skip + 2 * pairs < n {
        for (o, v) in outs.iter_mut().zip(nibble(skip + 2 * pairs, |b| b >> 4)) {
            o[n - 1] = v;
        }
    }
    true
}

impl ByteRows for StoredRelations {
    fn len(&self) -> usize {
        self.parts.len() * self.layout
    }

    fn load(&self, part: usize, start: usize, out: &mut [u8]) {
        let (c, p) = (part % 2, part / 2);
        for (k, r, at) in self.runs(start, out.len()) {
            let (a, maps) = (self.parts[k][p], &self.maps[k][p]);
            // The padding of an aligned layout: zero triples.
            let (out, pad) =
                out[at..at + r.len()].split_at_mut(r.end.min(self.n) - r.start.min(self.n));
            pad.fill(0);
            let r = r.start..r.start + out.len();
            if r.is_empty() {
                continue;
            }
            // Terms that are nibbles and start alike in one pass (each stored vector read
            // once, `out` written once).
            if self.form == Form::Nibbles && a.plus[0].is_some() {
                let first = (a.vector, a.offset, maps.first.as_ref());
                let plus = a.plus.iter().zip(&maps.plus);
                let terms = plus.filter_map(|(b, m)| b.map(|b| (b.vector, b.offset, m.as_ref())));
                let mut runs = [(&[][..], 0); 3];
                let mut term_maps = [[&GF2P4_TO_GF2P8]; 3];
                let mut count = 0;
                for ((v, offset, map), (run, m)) in core::iter::once(first)
                    .chain(terms)
                    .zip(runs.iter_mut().zip(term_maps.iter_mut()))
                {
                    *run = (&self.vectors[v][c][..], offset + r.start);
                    *m = [map.unwrap_or(&GF2P4_TO_GF2P8)];
                    count += 1;
                }
                if unpack_sums(&runs[..count], &term_maps[..count], [&mut out[..]]) {
                    continue;
                }
            }
            self.term(c, a.vector, a.offset + r.start, maps.first.as_ref(), out);
            // Any further term through a buffer in the cache, added piece by piece.
            let more = a.plus.iter().zip(&maps.plus);
            let mut buf = [0u8; PLUS_PIECE];
            for (b, map) in more.filter_map(|(b, m)| Some((b.as_ref()?, m))) {
                for (i, out) in out.chunks_mut(PLUS_PIECE).enumerate() {
                    let buf = &mut buf[..out.len()];
                    let first = b.offset + r.start + i * PLUS_PIECE;
                    self.term(c, b.vector, first, map.as_ref(), buf);
                    Gf2p8::add_assign_slice(
                        Gf2p8::slice_from_bytes_mut(out),
                        Gf2p8::slice_from_bytes(buf),
                    );
                }
            }
        }
    }

    /// Parts whose every relation in the range has [`TermMaps::subfield`] (the padding of an
    /// aligned layout is zero, which lies in the subfield too).
    fn in_subfield(&self, part: usize, start: usize, len: usize) -> bool {
        let p = part / 2;
        part < 6
            && self
                .runs(start, len)
                .all(|(k, _, _)| self.maps.get(k).is_some_and(|m| m[p].subfield))
    }

    /// Unmapped parts of bytes only.
    fn bytes(&self, part: usize, start: usize, len: usize) -> Option<&[u8]> {
        if self.form != Form::Bytes || part >= 6 || len == 0 {
            return None;
        }
        // Only a range within one run of one relation, short of any padding.
        let (k, r, _) = self.runs(start, len).next()?;
        let a = self.parts[k][part / 2];
        if a.map.is_some() || a.plus.iter().any(Option::is_some) || r.len() != len || r.end > self.n
        {
            return None;
        }
        let first = a.offset + r.start;
        self.vectors[a.vector][part % 2].get(first..first + len)
    }

    /// Within one run of one relation whose part (the same vector, offset and maps) some
    /// other relation has too: that part's run of the first such relation, over the same
    /// instances.
    fn shared_part(&self, part: usize, start: usize, len: usize) -> Option<usize> {
        let (k, r, _) = self.runs(start, len).next()?;
        let p = part / 2;
        let a = self.parts.get(k)?.get(p)?;
        if r.len() != len {
            return None;
        }
        let mut same = self.parts.iter().enumerate().filter(|(_, ps)| ps[p] == *a);
        let (first, _) = same.next()?;
        same.next()?;
        Some(self.triple(first, r.start))
    }

    /// Every vector of both components (shared vectors counted once here; a vector shared
    /// with another source is counted by one of them).
    fn stored_bytes(&self) -> Option<usize> {
        Some(
            self.vectors
                .iter()
                .flat_map(|v| v.iter())
                .map(Vec::len)
                .sum(),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn vector(len: usize, seed: usize) -> RssVec<Gf2p8> {
        let v = |s: usize| (0..len).map(|i| Gf2p8((i * 37 + s * 101) as u8)).collect();
        RssVec {
            first: v(seed),
            second: v(seed + 50),
        }
    }

    /// [`unpack_sums`] gives `Σ_s maps[s][o](run_s[first_s + i])` for one and two outputs,
    /// one to six runs, starts of either parity (each entry's nibble: high for an even
    /// index, low for an odd one) and lengths from 0 to past a kernel block; starts of mixed
    /// parity and more runs than one pass takes are refused, with nothing written.
    #[test]
    fn nibble_runs_sum_from_any_start() {
        use rand::{RngCore, SeedableRng};
        let mut rng = rand_chacha::ChaCha20Rng::seed_from_u64(17);
        let mut byte = move || rng.next_u32() as u8;
        let runs: Vec<Vec<u8>> = (0..7)
            .map(|_| (0..2200).map(|_| byte()).collect())
            .collect();
        let maps: Vec<[LinearMap8; 2]> = (0..7)
            .map(|_| {
                [0, 1].map(|_| LinearMap8::from_basis_images(core::array::from_fn(|_| byte())))
            })
            .collect();
        let nib = |run: &[u8], i: usize| {
            if i.is_multiple_of(2) {
                run[i / 2] >> 4
            } else {
                run[i / 2] & 0x0f
            }
        };
        for count in 1..=6 {
            for n in (0..70).chain([4099]) {
                for parity in 0..2 {
                    let firsts: Vec<usize> = (0..count).map(|s| 2 * (s * 3 + 1) + parity).collect();
                    let rs: Vec<(&[u8], usize)> = runs
                        .iter()
                        .zip(&firsts)
                        .map(|(r, f)| (&r[..], *f))
                        .collect();
                    let both: Vec<[&LinearMap8; 2]> = maps.iter().map(|[a, b]| [a, b]).collect();
                    let one: Vec<[&LinearMap8; 1]> = maps.iter().map(|[a, _]| [a]).collect();
                    let want: [Vec<u8>; 2] = core::array::from_fn(|o| {
                        (0..n)
                            .map(|i| {
                                rs.iter().zip(&maps).fold(0, |acc, ((r, f), m)| {
                                    acc ^ m[o].apply_byte(nib(r, f + i))
                                })
                            })
                            .collect()
                    });
                    let (mut a, mut b) = (vec![0xa5; n], vec![0x5a; n]);
                    assert!(unpack_sums(&rs, &both[..count], [&mut a[..], &mut b[..]]));
                    assert_eq!(
                        [&a, &b],
                        [&want[0], &want[1]],
                        "{count} runs, n = {n}, parity {parity}"
                    );
                    let mut c = vec![0xa5; n];
                    assert!(unpack_sums(&rs, &one[..count], [&mut c[..]]));
                    assert_eq!(
                        c, want[0],
                        "{count} runs, n = {n}, parity {parity}, one output"
                    );
                    if count > 1 {
                        // One start of the other parity: refused, nothing written.
                        let mut mixed = rs.clone();
                        mixed[count - 1].1 += 1;
                        let mut d = vec![0xa5; n];
                        assert!(!unpack_sums(&mixed, &one[..count], [&mut d[..]]));
                        assert!(d.iter().all(|&x| x == 0xa5));
                    }
                }
            }
        }
        // Seven runs: more than one pass takes.
        let seven: Vec<(&[u8], usize)> = runs.iter().map(|r| (&r[..], 0)).collect();
        let one: Vec<[&LinearMap8; 1]> = maps.iter().map(|[a, _]| [a]).collect();
        let mut e = [0xa5; 8];
        assert!(!unpack_sums(&seven, &one, [&mut e[..]]));
        assert!(e.iter().all(|&x| x == 0xa5));
    }

    /// `load` and `bytes` give each part from its vector and offset (`load` with its map
    /// applied, `bytes` only unmapped parts), also across relations, and parts that reach past
    /// their vectors are refused.
    #[test]
    fn parts_come_from_their_vectors_and_offsets() {
        let n = 40;
        let vectors = vec![vector(n, 1), vector(2 * n, 2), vector(n, 3)];
        let parts = [
            [at(0), at(1), at(2)],
            [part(1, n, None), part(0, 0, Some(&LinearMap8::POW4)), at(1)],
        ];
        let rel = StoredRelations::new(n, vectors.clone(), &parts).unwrap();
        assert_eq!(ByteRows::len(&rel), 2 * n);
        assert_eq!(rel.stored_bytes(), Some(2 * (4 * n)));
        for (k, ps) in parts.iter().enumerate() {
            for (p, a) in ps.iter().enumerate() {
                for c in 0..2 {
                    let v = &vectors[a.vector];
                    let v = if c == 0 { &v.first } else { &v.second };
                    let v = &v[a.offset..a.offset + n];
                    let want: Vec<u8> = match a.map {
                        Some(m) => v.iter().map(|x| m.apply(*x).0).collect(),
                        None => Gf2p8::slice_as_bytes(v).to_vec(),
                    };
                    let mut got = vec![0u8; n];
                    rel.load(2 * p + c, k * n, &mut got);
                    assert_eq!(got, want, "relation {k}, part {p}, component {c}");
                    let stored = a.map.is_none().then_some(&want[3..10]);
                    assert_eq!(rel.bytes(2 * p + c, k * n + 3, 7), stored);
                }
            }
        }
        // Across the boundary: the last 5 of relation 0, then the first 5 of relation 1.
        let mut got = vec![0u8; 10];
        rel.load(4, n - 5, &mut got);
        assert_eq!(got[..5], *Gf2p8::slice_as_bytes(&vectors[2].first[n - 5..]));
        assert_eq!(got[5..], *Gf2p8::slice_as_bytes(&vectors[1].first[..5]));
        assert_eq!(rel.bytes(4, n - 5, 10), None);
        assert_eq!(rel.bytes(6, 0, 1), None);
        assert_eq!(rel.bytes(0, 2 * n, 1), None);
        // A part past the end of its vector, or of a vector that is not there.
        let past = [[at(0), at(1), part(0, 1, None)]];
        assert!(StoredRelations::new(n, vectors.clone(), &past).is_err());
        assert!(StoredRelations::new(n, vectors, &[[at(0), at(1), at(3)]]).is_err());
    }

    /// With more than [`BLOCK`] instances the triples go block by block, each block's
    /// relations one after the other: every (relation, instance) is one triple, and `load` and
    /// `bytes` give each range of triples, across relations and blocks, in that order.
    #[test]
    fn triples_follow_the_blocks_of_instances() {
        let n = 2 * BLOCK + 7;
        let vectors = vec![vector(n, 1), vector(n + 3, 2), vector(n, 3)];
        let shifted = part(1, 3, None);
        let mapped = part(2, 0, Some(&LinearMap8::SQUARE));
        let parts = [
            [at(0), at(1), at(2)],
            [shifted, mapped, at(0)],
            [at(2), at(0), shifted],
        ];
        let rel = StoredRelations::new(n, vectors.clone(), &parts).unwrap();
        let total = 3 * n;
        let mut of = vec![None; total];
        for k in 0..3 {
            for j in 0..n {
                let t = rel.triple(k, j);
                assert!(
                    t < total && of[t].is_none(),
                    "relation {k}, instance {j}: {t}"
                );
                of[t] = Some((k, j));
            }
        }
        // The first block: relation 0, 1, 2 of instances 0 .. BLOCK; the last: of the 7 left.
        assert_eq!(rel.triple(1, 0), BLOCK);
        assert_eq!(rel.triple(0, BLOCK), 3 * BLOCK);
        assert_eq!(rel.triple(2, 2 * BLOCK + 1), 6 * BLOCK + 2 * 7 + 1);
        for part in 0..6 {
            let (p, c) = (part / 2, part % 2);
            let mut all = vec![0u8; total];
            rel.load(part, 0, &mut all);
            for (k, ps) in parts.iter().enumerate() {
                let a = ps[p];
                let v = &vectors[a.vector];
                let v = if c == 0 { &v.first } else { &v.second };
                for j in 0..n {
                    let x = v[a.offset + j];
                    let want = a.map.map_or(x, |m| m.apply(x)).0;
                    assert_eq!(
                        all[rel.triple(k, j)],
                        want,
                        "part {part}, relation {k}, {j}"
                    );
                }
            }
            for (start, len) in [
                (BLOCK - 3, 9),
                (3 * BLOCK - 2, 5),
                (6 * BLOCK + 6, 10),
                (5, 3),
            ] {
                let mut got = vec![0u8; len];
                rel.load(part, start, &mut got);
                assert_eq!(got, all[start..start + len], "part {part}, {start}+{len}");
                // In place: one relation's consecutive instances, unmapped.
                let (k, j) = of[start].unwrap();
                let one_run = (0..len).all(|i| of[start + i] == Some((k, j + i)));
                let in_place = rel.bytes(part, start, len);
                if parts[k][p].map.is_some() || !one_run {
                    assert_eq!(in_place, None, "part {part}, {start}+{len}");
                } else {
                    assert_eq!(
                        in_place,
                        Some(&all[start..start + len]),
                        "part {part}, {start}"
                    );
                }
            }
        }
    }

    /// An aligned layout fills each block up to [`BLOCK`] instances with zero triples, where
    /// that adds at most a sixteenth, and keeps the stored instances where the plain layout of
    /// as many instances has them; a part that two relations share says so for a range inside
    /// one run of one relation, with the start of the first relation's run of the same
    /// instances.
    #[test]
    fn aligned_relations_fill_their_blocks_with_zero_triples() {
        let n = 2 * BLOCK - 100;
        let vectors = vec![vector(n, 1), vector(2 * n, 2), vector(n, 3)];
        let sq = part(0, 0, Some(&LinearMap8::SQUARE));
        let upper = part(1, n, None);
        // Relations 0 and 2 share `y`, relations 1 and 2 share `x`, and relation 1 reads the
        // upper half of vector 1, which the padding of relation 0 must not show.
        let parts = [
            [at(0), sq, at(1)],
            [upper, at(2), at(0)],
            [upper, sq, at(2)],
        ];
        let plain = StoredRelations::new(n, vectors.clone(), &parts).unwrap();
        let rel = StoredRelations::new(n, vectors.clone(), &parts)
            .unwrap()
            .aligned();
        assert_eq!(ByteRows::len(&rel), 3 * 2 * BLOCK);
        assert_eq!(rel.triple(1, 0), BLOCK);
        assert_eq!(rel.triple(0, BLOCK), 3 * BLOCK);
        assert_eq!(rel.triple(2, BLOCK + 5), 5 * BLOCK + 5);
        for part in 0..6 {
            let mut all = vec![0u8; 3 * 2 * BLOCK];
            rel.load(part, 0, &mut all);
            let mut want = vec![0u8; 3 * n];
            plain.load(part, 0, &mut want);
            for k in 0..3 {
                for j in 0..2 * BLOCK {
                    let got = all[rel.triple(k, j)];
                    let want = if j < n { want[plain.triple(k, j)] } else { 0 };
                    assert_eq!(got, want, "part {part}, relation {k}, instance {j}");
                }
            }
            // Across the last stored instance into the padding, and the padding in place.
            let start = rel.triple(0, n - 4);
            let mut got = vec![1u8; 10];
            rel.load(part, start, &mut got);
            assert_eq!(got, all[start..start + 10], "part {part}");
            assert_eq!(rel.bytes(part, start, 10), None, "part {part}");
            assert_eq!(rel.bytes(part, rel.triple(1, n), 4), None, "part {part}");
        }
        let shared = |part: usize, k: usize, j: usize, len: usize| {
            rel.shared_part(part, rel.triple(k, j), len)
        };
        for c in 0..2 {
            // x: relations 1 and 2; y: relations 0 and 2; z: none.
            assert_eq!(shared(c, 2, BLOCK + 7, 50), Some(rel.triple(1, BLOCK + 7)));
            assert_eq!(shared(c, 1, 7, 50), Some(rel.triple(1, 7)));
            assert_eq!(shared(c, 0, 7, 50), None);
            assert_eq!(shared(2 + c, 2, 0, BLOCK), Some(rel.triple(0, 0)));
            assert_eq!(shared(2 + c, 0, BLOCK, BLOCK), Some(rel.triple(0, BLOCK)));
            assert_eq!(shared(2 + c, 1, 0, BLOCK), None);
            assert_eq!(shared(4 + c, 2, 0, 10), None);
            // Across two runs: not one relation's.
            assert_eq!(shared(c, 2, BLOCK - 5, 10), None);
        }
        // Where filling up would add more than a sixteenth, the layout stays as it is.
        let n = BLOCK + 1000;
        let vectors = vec![vector(n, 1), vector(2 * n, 2), vector(n, 3)];
        let parts = [[at(0), sq, at(1)], [at(1), at(2), at(0)]];
        let rel = StoredRelations::new(n, vectors, &parts).unwrap().aligned();
        assert_eq!(ByteRows::len(&rel), 2 * n);
    }

    /// Packed `GF(2^4)` vectors load as the byte form `ψ` of their entries (then the part's
    /// map), from any entry on, odd or even, within a relation and across relations; they take
    /// half a byte per entry and are never borrowed in place.
    #[test]
    fn nibble_parts_load_as_their_byte_form() {
        for n in [41, 8195] {
            nibble_parts_of_length(n);
        }
    }

    fn nibble_parts_of_length(n: usize) {
        let nibbles = |len: usize, seed: usize| {
            let v = |s: usize| {
                (0..len)
                    .map(|i| Gf2p4(((((i + 1) * 0x9e37_79b9 + s * 0x85eb_ca6b) >> 17) % 16) as u8))
                    .collect()
            };
            RssVec {
                first: v(seed),
                second: v(seed + 5),
            }
        };
        let vectors = vec![nibbles(n, 1), nibbles(2 * n + 1, 2), nibbles(n, 3)];
        let parts = [
            [at(0), at(1), at(2)],
            [
                part(1, n, None),
                part(0, 0, Some(&LinearMap8::POW4)),
                part(1, 1, None),
            ],
        ];
        let rel = StoredRelations::nibbles(n, vectors.clone(), &parts).unwrap();
        assert_eq!(ByteRows::len(&rel), 2 * n);
        let packed = n.div_ceil(2) + (2 * n + 1).div_ceil(2) + n.div_ceil(2);
        assert_eq!(rel.stored_bytes(), Some(2 * packed));
        // Part `p`, component `c` of all `2 n` triples, as the check takes them.
        let want = |p: usize, c: usize| -> Vec<u8> {
            parts
                .iter()
                .flat_map(|ps| {
                    let a = ps[p];
                    let v = gf2p4_bytes(vectors[a.vector].clone());
                    let v = if c == 0 { v.first } else { v.second };
                    v[a.offset..a.offset + n]
                        .iter()
                        .map(|x| a.map.map_or(*x, |m| m.apply(*x)).0)
                        .collect::<Vec<u8>>()
                })
                .collect()
        };
        for part in 0..6 {
            let all = want(part / 2, part % 2);
            let starts = [(0, 2 * n), (1, 2), (3, 7), (n - 4, 9), (n - 3, 8), (n, n)];
            for (start, len) in starts {
                let mut got = vec![0xa5u8; len];
                rel.load(part, start, &mut got);
                assert_eq!(got, all[start..start + len], "part {part}, {start}+{len}");
            }
            assert_eq!(rel.bytes(part, 0, 1), None);
        }
        // A part past the end of its vector.
        let past = [[at(0), at(0), part(1, n + 2, None)]];
        assert!(StoredRelations::nibbles(n, vectors, &past).is_err());
    }

    /// A part with a second or a third term ([`At::plus`]) loads as the sum of its terms,
    /// each through its map (the first one's optional), from any entry on and across
    /// relations, for bytes and for packed nibbles (odd offsets, more entries than
    /// [`PLUS_PIECE`]; terms whose starts have the same parity in one pass, [`unpack_sums`],
    /// the others term by term); it is never borrowed in
    /// place, and a further term past the end of its vector is refused.
    #[test]
    fn parts_with_a_second_term_load_as_sums() {
        let n = 2 * PLUS_PIECE + 37;
        static T: LinearMap8 = LinearMap8::mul_by(Gf2p8(0x53));
        let t = &T;
        let parts = [
            [
                at(0),
                at(1).plus(0, 0, &LinearMap8::SQUARE),
                part(2, 1, None).plus(1, n, t),
            ],
            [
                part(1, n, Some(&LinearMap8::POW4)).plus(2, 0, t),
                at(2).plus(0, 0, t).plus(1, 1, &LinearMap8::SQUARE),
                at(0).plus(0, 0, t),
            ],
            [
                part(1, 1, None).plus(0, 0, &LinearMap8::POW4).plus(2, 1, t),
                at(1).plus(2, 0, &LinearMap8::SQUARE).plus(1, 2, t),
                at(0),
            ],
        ];
        let bytes: Vec<RssVec<Gf2p8>> = vec![vector(n, 1), vector(2 * n, 2), vector(n + 1, 3)];
        let nibbles: Vec<RssVec<Gf2p4>> = bytes
            .iter()
            .map(|v| {
                let low = |c: &[Gf2p8]| c.iter().map(|x| Gf2p4(x.0 % 16)).collect();
                RssVec {
                    first: low(&v.first),
                    second: low(&v.second),
                }
            })
            .collect();
        // The byte forms the check reads: the bytes themselves, or `ψ` of the nibbles.
        let psi: Vec<RssVec<Gf2p8>> = nibbles.iter().map(|v| gf2p4_bytes(v.clone())).collect();
        let forms = [
            (
                StoredRelations::new(n, bytes.clone(), &parts).unwrap(),
                &bytes,
                true,
            ),
            (
                StoredRelations::nibbles(n, nibbles.clone(), &parts).unwrap(),
                &psi,
                false,
            ),
        ];
        for (rel, src, stores_bytes) in &forms {
            let entry = |vector: usize, c: usize, i: usize| {
                let v = &src[vector];
                if c == 0 {
                    v.first[i]
                } else {
                    v.second[i]
                }
            };
            for (k, ps) in parts.iter().enumerate() {
                for (p, a) in ps.iter().enumerate() {
                    for c in 0..2 {
                        let want: Vec<u8> = (0..n)
                            .map(|j| {
                                let x = entry(a.vector, c, a.offset + j);
                                let mut v = a.map.map_or(x, |m| m.apply(x));
                                for b in a.plus.iter().flatten() {
                                    v += b.map.apply(entry(b.vector, c, b.offset + j));
                                }
                                v.0
                            })
                            .collect();
                        for (from, len) in [(0, n), (1, n - 1), (PLUS_PIECE - 3, PLUS_PIECE + 9)] {
                            let mut got = vec![0xa5u8; len];
                            rel.load(2 * p + c, k * n + from, &mut got);
                            assert_eq!(
                                got,
                                want[from..from + len],
                                "relation {k}, part {p}, component {c}, from {from}"
                            );
                        }
                        // Bytes of the subfield of 16 elements: said of the nibble parts
                        // whose maps keep them there (not of those through `t`), and true of
                        // what they load.
                        assert_eq!(
                            rel.in_subfield(2 * p + c, k * n, n),
                            !*stores_bytes && want.iter().all(|b| in_subfield(*b)),
                            "relation {k}, part {p}, component {c}"
                        );
                        let in_place = rel.bytes(2 * p + c, k * n, 5);
                        assert_eq!(
                            in_place.is_some(),
                            *stores_bytes && a.map.is_none() && a.plus == [None; 2],
                            "relation {k}, part {p}"
                        );
                    }
                }
            }
            // Across the boundary of the two relations.
            let mut got = vec![0u8; 6];
            rel.load(4, n - 3, &mut got);
            let mut want = vec![0u8; 6];
            rel.load(4, n - 3, &mut want[..3]);
            rel.load(4, n, &mut want[3..]);
            assert_eq!(got, want);
        }
        let past = [[at(0), at(1), at(0).plus(2, 2, t)]];
        assert!(StoredRelations::new(n, bytes.clone(), &past).is_err());
        assert!(StoredRelations::nibbles(n, nibbles, &past).is_err());
        let absent = [[at(0), at(1), at(0).plus(3, 0, t)]];
        assert!(StoredRelations::new(n, bytes.clone(), &absent).is_err());
        let third_past = [[at(0), at(1), at(0).plus(1, 0, t).plus(2, 2, t)]];
        assert!(StoredRelations::new(n, bytes, &third_past).is_err());
    }

    /// The byte form of `GF(2^4)` shares is multiplicative: a product of nibbles stays the
    /// product of their bytes in `GF(2^8)`, so stored `GF(2^4)` triples stay triples.
    #[test]
    fn gf2p4_bytes_keep_products() {
        let a: Vec<Gf2p4> = (0..16).flat_map(|x| [Gf2p4(x); 16]).collect();
        let b: Vec<Gf2p4> = (0..256).map(|i| Gf2p4((i % 16) as u8)).collect();
        let c: Vec<Gf2p4> = a.iter().zip(&b).map(|(x, y)| *x * *y).collect();
        let bytes = |v: &[Gf2p4]| {
            gf2p4_bytes(RssVec {
                first: v.to_vec(),
                second: v.to_vec(),
            })
            .first
        };
        let (a8, b8, c8) = (bytes(&a), bytes(&b), bytes(&c));
        for ((x, y), z) in a8.iter().zip(&b8).zip(&c8) {
            assert_eq!(*x * *y, *z);
        }
        // Injective: the 16 nibbles have 16 different bytes.
        let mut distinct: Vec<u8> = bytes(&(0..16).map(Gf2p4).collect::<Vec<_>>())
            .iter()
            .map(|x| x.0)
            .collect();
        distinct.sort_unstable();
        distinct.dedup();
        assert_eq!(distinct.len(), 16);
    }
}
