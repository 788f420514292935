//! Security models as a type parameter of the engine.
//!
//! The online arithmetic is the same code for every model; a model only adds what must be
//! remembered for later verification. [`SemiHonest`] records nothing. [`Malicious`] (active
//! security with abort, PROTOCOLS.md §5) keeps two running BLAKE3 views of everything opened
//! or broadcast (§5.1) and records every multiplication as a triple for the batched check of
//! the finalize phase ([`crate::verify`]).
//!
//! # Views
//!
//! `V_prev` holds what `P_{i-1}` sent (or is claimed to have sent), `V_next` what `P_{i+1}`
//! sent or, by replication, must have sent. [`crate::Party::compare_view`] exchanges digests
//! and aborts on a mismatch; since the two honest parties hash the same logical stream, any
//! inconsistency the corrupt party introduced into an opening, a broadcast or a zero check
//! makes the digests differ (collision resistance of the hash).
//!
//! \[DEV\] The views are BLAKE3 states (32-byte digests), where PROTOCOLS.md §5.1 keeps
//! SHA-256 states. The check needs only collision resistance, which both give at the same
//! level (128 bits for 256-bit digests); the digests never leave the three parties, and the
//! hash is part of the run parameters every party checks at setup (`views=blake3` in
//! [`SecurityModel::parameters`]), so a party of a build that hashes otherwise is named in a
//! parameter mismatch instead of causing an abort. BLAKE3 hashes about four times as fast on
//! the CPUs we run on (one thread, 256 KiB updates: 7.4-7.9 against 1.8-1.9 GB/s for the `sha2`
//! crate with SHA-NI on the Intel Xeon VM), and mal-chida's sacrifice absorbs about six bytes
//! per pair into each view (docs/PERFORMANCE.md, "BLAKE3 views, mal-chida's shuffle, and
//! where the rest goes").
//!
//! # Triples
//!
//! A product `z = x·y` over a field `F` is stored as it was computed (the six share vectors in
//! `F`, e.g. 6 bytes per `GF(2^8)` triple and party) and lifted to the check field only while
//! the check streams over it ([`Lift`]): `GF(2^8)` by `E_8`, `GF(2^4)` by `E_4`, bit-sliced
//! `GF(2)^16` lane-wise as 16 triples with entries 0/1, `GF(2^64)` as is (all checked in
//! `GF(2^64)`), and `F_p` ([`Fp`] or the run-time [`FpRt`]) as is (checked in the same field).
//! Cube chains of the PRFs are kept as [`Chained`] triples under a coin, combined by the check
//! while it streams ([`SecurityModel::on_chained`]).
//!
//! # Segments
//!
//! Records are not kept for the whole run: once they take [`Malicious`]'s segment size
//! ([`set_verify_segment`], default [`DEFAULT_VERIFY_SEGMENT`]), the next
//! [`crate::Party::checkpoint`] (after every recorded multiplication, after every AES S-box
//! layer, after a PRF's committed cube chains) verifies all of them with Protocol 2 and
//! reuses their memory. The binary runs of a segment stop before their steps of eight and
//! their `CheckTriple` (a claim of at most `2^12` entries, or the last triple), which the
//! finalize check takes side by side with its own runs (one message per round for all). The
//! segment's local result is kept and carried by the finalize check's compare-view, so
//! nothing changes for the outputs: a wrong product in any segment makes every honest party
//! abort before an output is opened. The segment's messages count
//! in the finalize phase and its time in [`SecurityModel::segment_time`]. At most
//! [`MAX_SEGMENTS`] segments run early per party (see [`crate::verify`] for the bound).

use core::fmt::{self, Debug};
use core::sync::atomic::{AtomicUsize, Ordering};
use core::time::Duration;
use std::sync::Arc;

use triskele_field::{
    Bits16, EmbedInto, Field, Fp, FpRt, Gf2p4, Gf2p64, Gf2p8, Gf4Tower, LinearMap8,
};
use triskele_share::RssVec;

use crate::verify::{Coeffs, TripleSource, VerifyField};

/// What the engine tells the security model while a protocol runs.
pub trait SecurityModel: Default + Debug + Send + 'static {
    /// Name used in logs and parameter checks.
    const NAME: &'static str;
    /// True for active security with abort.
    const MALICIOUS: bool;

    /// An RSS opening happened: `from_prev` is what `P_{i-1}` sent, `own_next` is this party's
    /// copy of what `P_{i+1}` received from `P_{i-1}` (PROTOCOLS.md §5.1).
    fn on_open(&mut self, from_prev: &[u8], own_next: &[u8]) {
        let _ = (from_prev, own_next);
    }

    /// Absorbs bytes into one view (broadcasts, zero checks; PROTOCOLS.md §5.1).
    fn absorb(&mut self, view: View, bytes: &[u8]) {
        let _ = (view, bytes);
    }

    /// The store of recorded products over `F`, taken out of the model so that a protocol can
    /// append triples to it in place ([`crate::Party::record_in_place`]); give it back with
    /// [`SecurityModel::put_store`]. Models without records return an empty store.
    fn take_store<F: Lift>(&mut self) -> Triples<F> {
        Triples::default()
    }

    /// Gives back a store taken with [`SecurityModel::take_store`] (models without records
    /// drop it).
    fn put_store<F: Lift>(&mut self, store: Triples<F>) {
        let _ = store;
    }

    /// A multiplication `z = x * y` happened; malicious models record it for verification.
    fn on_product<F: Lift>(&mut self, x: &RssVec<F>, y: &RssVec<F>, z: &RssVec<F>) {
        let _ = (x, y, z);
    }

    /// [`SecurityModel::on_product`] that hands the vectors over and leaves `x`, `y`, `z`
    /// empty: a recorder whose store is empty swaps them with its own (cleared) vectors, so
    /// the caller gets their memory back for its next records and nothing is copied.
    fn on_product_swap<F: Lift>(
        &mut self,
        x: &mut RssVec<F>,
        y: &mut RssVec<F>,
        z: &mut RssVec<F>,
    ) {
        self.on_product(x, y, z);
        clear_all([x, y, z]);
    }

    /// Chained triples ([`Chained`]) under the coin `r`, handed over like
    /// [`SecurityModel::on_product_swap`] (the caller's vectors are left empty, with the
    /// store's memory if it had some): a malicious model records them and returns `true`.
    /// `false`, with nothing taken: the model does not record chained triples over `F` (the
    /// default), or it holds some under another coin; the caller then records the combined
    /// triples `(x + r y, y, z + r x)` itself.
    fn on_chained<F: Lift>(
        &mut self,
        x: &mut RssVec<F>,
        y: &mut RssVec<F>,
        z: &mut RssVec<F>,
        r: F,
    ) -> bool {
        let _ = (x, y, z, r);
        false
    }

    /// Announces `n` more products over `F` (a hint: malicious models reserve room for their
    /// records up front instead of growing and copying them while the protocol runs).
    fn reserve_products<F: Lift>(&mut self, n: usize) {
        let _ = n;
    }

    /// A protocol's compact store of relations to verify in `GF(2^64)` ([`CustomSource`]);
    /// malicious models keep it for the finalize check, in the order of recording after the
    /// recorded binary products.
    fn record_source(&mut self, src: CustomSource) {
        let _ = src;
    }

    /// The digests of a compare-view, `[H(V_prev), H(V_next)]`; resets both views. `None`:
    /// the model keeps no views (compare-view is a no-op).
    fn take_view_digests(&mut self) -> Option<[[u8; 32]; 2]> {
        None
    }

    /// The records to verify now, if the model wants a segment verified before more is
    /// recorded ([`crate::Party::checkpoint`]); `None` (the default): nothing is due.
    fn take_due_records(&mut self) -> Option<Recorder> {
        None
    }

    /// Result of verifying a segment taken with [`SecurityModel::take_due_records`]: `ok` is
    /// the party's local check result (`σ = 0` in every run of Protocol 2), `time` what the
    /// verification took. The model may reuse `rec`'s memory for the next records.
    fn segment_verified(&mut self, rec: Recorder, ok: bool, time: Duration) {
        let _ = (rec, ok, time);
    }

    /// Total time spent verifying segments so far (benchmarks count it in the finalize phase).
    fn segment_time(&self) -> Duration {
        Duration::ZERO
    }

    /// The size (bytes of records) at which the model verifies a segment, if it still does:
    /// protocols that keep records of their own (e.g. cube chains combined under a coin)
    /// hand them over once they reach it. `None` (the default): keep them to the end.
    fn segment_size(&self) -> Option<usize> {
        None
    }

    /// The bytes of records (as [`Recorder::recorded_bytes`] counts them) that can still be
    /// recorded before the current segment is due, if the model verifies segments: a
    /// protocol that reserves memory for its records ahead reserves no more than that, so
    /// that the reserve does not outgrow the segment. `None` (the default): no segments.
    fn segment_room(&self) -> Option<usize> {
        None
    }

    /// The most binary triples one run of Protocol 2 checks: a segment (or the finalize
    /// check) with more is verified in several runs over consecutive windows, so that the
    /// check's working memory follows the segment size even when one recorded source (e.g.
    /// a preprocessing batch of compact relations) is larger. `None` (the default): one run.
    fn run_size(&self) -> Option<usize> {
        None
    }

    /// Settings of the model that every party must share (part of the parameter check).
    fn parameters(&self) -> String {
        String::new()
    }
}

/// One of the two running views of a party.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum View {
    /// What the previous party sent.
    Prev,
    /// What the next party sent or must have sent.
    Next,
}

/// Privacy against one semi-honest party; nothing is recorded.
#[derive(Debug, Default, Clone, Copy)]
pub struct SemiHonest;

impl SecurityModel for SemiHonest {
    const NAME: &'static str = "semi-honest";
    const MALICIOUS: bool = false;
}

/// Recorded multiplication triples over one source field, as computed (not lifted).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Triples<F> {
    pub x: RssVec<F>,
    pub y: RssVec<F>,
    pub z: RssVec<F>,
}

impl<F: Field> Triples<F> {
    /// Number of recorded products (source elements, not lifted triples).
    pub fn len(&self) -> usize {
        self.z.len()
    }

    /// Drops entries past the shortest of the six vectors, so that only whole triples stay;
    /// returns whether anything had to be dropped.
    pub fn keep_whole(&mut self) -> bool {
        let parts = [&self.x, &self.y, &self.z];
        let n = parts
            .iter()
            .map(|v| v.first.len().min(v.second.len()))
            .min()
            .unwrap_or(0);
        let whole = parts
            .iter()
            .all(|v| v.first.len() == n && v.second.len() == n);
        for v in [&mut self.x, &mut self.y, &mut self.z] {
            v.first.truncate(n);
            v.second.truncate(n);
        }
        !whole
    }

    pub fn is_empty(&self) -> bool {
        self.z.is_empty()
    }

    fn reserve(&mut self, n: usize) {
        for v in [&mut self.x, &mut self.y, &mut self.z] {
            v.first.reserve(n);
            v.second.reserve(n);
        }
    }

    fn push(&mut self, x: &RssVec<F>, y: &RssVec<F>, z: &RssVec<F>) {
        self.x.extend(x);
        self.y.extend(y);
        self.z.extend(z);
    }

    /// `[x_1, x_2, y_1, y_2]` of the `k` triples from `lo` and, if given, from `hi`, for a
    /// level-1 fold; `None` unless every range lies inside the store.
    #[allow(clippy::type_complexity)]
    pub(crate) fn pair_rows(
        &self,
        lo: usize,
        hi: Option<usize>,
        k: usize,
    ) -> Option<([&[F]; 4], Option<[&[F]; 4]>)> {
        let rows = |at: usize| {
            let r = at..at.checked_add(k).filter(|&e| e <= self.len())?;
            Some(
                [&self.x.first, &self.x.second, &self.y.first, &self.y.second]
                    .map(|v| &v[r.clone()]),
            )
        };
        let h = match hi.map(rows) {
            Some(None) => return None,
            h => h.flatten(),
        };
        Some((rows(lo)?, h))
    }
}

/// Triples recorded under a public coin `r`: each stored `(x, y, z)` stands for the triple
/// `(x + r y, y, z + r x)`, which `Verify` forms while it streams over the store (no pass
/// over the records to combine them first). For a cube chain `(v, v^2, v^3)` stored as `x =
/// v^2`, `y = v`, `z = v^3` that triple is `(v^2 + r v) v = v^3 + r v^2`, which holds for
/// every `r` iff `r (v v - v^2) + (v^2 v - v^3) = 0`; with `r` tossed after the chains'
/// messages, errors in the two products pass with probability at most `1/|F|` (see
/// `triskele_prf`'s `CubeRecords`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Chained<F> {
    pub t: Triples<F>,
    pub r: F,
}

impl<F: Field> Chained<F> {
    /// Number of chained triples.
    pub fn len(&self) -> usize {
        self.t.len()
    }

    pub fn is_empty(&self) -> bool {
        self.t.is_empty()
    }
}

/// A protocol's own store of relations, kept in a compact form and lifted to `GF(2^64)`
/// triples only while `Verify` streams over it (e.g. the packed one-hot-vector relations of
/// PROTOCOLS.md §5.5, a few bytes per relation instead of 48 per lifted triple).
pub type CustomSource = Arc<dyn TripleSource<Gf2p64> + Send + Sync>;

/// Everything recorded for verification, one store per source field.
#[derive(Default, Clone)]
pub struct Recorder {
    pub gf2p8: Triples<Gf2p8>,
    pub gf2p4: Triples<Gf2p4>,
    pub tower: Triples<Gf4Tower>,
    pub bits: Triples<Bits16>,
    pub gf2p64: Triples<Gf2p64>,
    pub fp: Triples<Fp>,
    /// Products over the run-time prime field, checked in `F_p` for the modulus installed
    /// when [`crate::Party::verify_recorded`] runs (the one they were computed with).
    pub fp_rt: Triples<FpRt>,
    /// Chained triples ([`Chained`]) over `F_p`, checked with [`Recorder::fp`].
    pub fp_chained: Chained<Fp>,
    /// Chained triples over the run-time prime field, checked with [`Recorder::fp_rt`].
    pub fp_rt_chained: Chained<FpRt>,
    /// Compact stores of protocols, checked in `GF(2^64)` with the binary sources
    /// ([`SecurityModel::record_source`]).
    pub custom: Vec<CustomSource>,
}

impl Debug for Recorder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Recorder")
            .field("gf2p8", &self.gf2p8.len())
            .field("gf2p4", &self.gf2p4.len())
            .field("tower", &self.tower.len())
            .field("bits", &self.bits.len())
            .field("gf2p64", &self.gf2p64.len())
            .field("fp", &self.fp.len())
            .field("fp_rt", &self.fp_rt.len())
            .field("fp_chained", &self.fp_chained.len())
            .field("fp_rt_chained", &self.fp_rt_chained.len())
            .field("custom", &self.custom.len())
            .finish()
    }
}

/// The six vectors of `t`, each turned into a vector of another field by `f` (which may
/// reuse its allocation).
fn map_vectors<A, B>(t: Triples<A>, f: impl Fn(Vec<A>) -> Vec<B>) -> Triples<B> {
    let rss = |r: RssVec<A>| RssVec {
        first: f(r.first),
        second: f(r.second),
    };
    Triples {
        x: rss(t.x),
        y: rss(t.y),
        z: rss(t.z),
    }
}

/// Empties share vectors, keeping their memory.
fn clear_all<F>(vs: [&mut RssVec<F>; 3]) {
    for v in vs {
        v.first.clear();
        v.second.clear();
    }
}

/// Bytes a compact relation store that does not tell its size
/// ([`TripleSource::stored_bytes`]) is counted with per check-field triple by
/// [`Recorder::recorded_bytes`] (about two bytes per triple for such stores of this project).
const CUSTOM_BYTES_PER_TRIPLE: usize = 2;

impl Recorder {
    /// The memory the records take (six share vectors per store; compact stores their own
    /// count, or estimated at two bytes per triple): what [`Malicious`]'s segment size
    /// compares with.
    pub fn recorded_bytes(&self) -> usize {
        fn bytes<F>(t: &Triples<F>) -> usize {
            6 * t.z.first.len() * core::mem::size_of::<F>()
        }
        bytes(&self.gf2p8)
            + bytes(&self.gf2p4)
            + bytes(&self.tower)
            + bytes(&self.bits)
            + bytes(&self.gf2p64)
            + bytes(&self.fp)
            + bytes(&self.fp_rt)
            + bytes(&self.fp_chained.t)
            + bytes(&self.fp_rt_chained.t)
            + self
                .custom
                .iter()
                .map(|s| {
                    s.stored_bytes()
                        .unwrap_or(CUSTOM_BYTES_PER_TRIPLE * s.len())
                })
                .sum::<usize>()
    }

    /// True if nothing is recorded.
    pub fn is_empty(&self) -> bool {
        self.gf2p64_triples() == 0
            && self.fp.is_empty()
            && self.fp_rt.is_empty()
            && self.fp_chained.is_empty()
            && self.fp_rt_chained.is_empty()
    }

    /// Forgets every record but keeps the stores' memory for the next ones.
    pub fn clear(&mut self) {
        fn clear<F>(t: &mut Triples<F>) {
            clear_all([&mut t.x, &mut t.y, &mut t.z]);
        }
        clear(&mut self.gf2p8);
        clear(&mut self.gf2p4);
        clear(&mut self.tower);
        clear(&mut self.bits);
        clear(&mut self.gf2p64);
        clear(&mut self.fp);
        clear(&mut self.fp_rt);
        clear(&mut self.fp_chained.t);
        clear(&mut self.fp_rt_chained.t);
        self.custom.clear();
    }

    /// Takes the `GF(2^4)` triples as the `GF(2^8)` triples of their byte form `ψ` (the
    /// bytes mapped in place in one pass; the allocations move, nothing is copied), so that
    /// `Verify` reads them where they are instead of mapping them again on each of its
    /// passes over them. [`Recorder::restore_gf2p4`] gives the memory back.
    pub(crate) fn take_gf2p4_bytes(&mut self) -> Triples<Gf2p8> {
        map_vectors(core::mem::take(&mut self.gf2p4), gf2p4_as_check_bytes)
    }

    /// The memory of [`Recorder::take_gf2p4_bytes`], emptied, back to the `GF(2^4)` store
    /// (if nothing was recorded there meanwhile).
    pub(crate) fn restore_gf2p4(&mut self, t: Triples<Gf2p8>) {
        if self.gf2p4.is_empty() {
            self.gf2p4 = map_vectors(t, |v| {
                let mut b = Gf2p8::vec_into_bytes(v);
                b.clear();
                Gf2p4::vec_from_bytes(b)
            });
        }
    }

    /// Number of check-field triples recorded with check field `GF(2^64)`.
    pub fn gf2p64_triples(&self) -> usize {
        self.gf2p8.len()
            + self.gf2p4.len()
            + self.tower.len()
            + Bits16::LANES * self.bits.len()
            + self.gf2p64.len()
            + self.custom.iter().map(|s| s.len()).sum::<usize>()
    }
}

/// A field whose products can be recorded and checked: how its elements become elements of
/// the check field ([`Lift::Check`]) and where they are stored.
///
/// `lift_slice` must be an injective ring homomorphism applied lane-wise (additive, so it can be
/// applied to each share component; multiplicative, so correct triples stay correct and wrong
/// ones stay wrong).
pub trait Lift: Field {
    /// The field in which the products are verified.
    type Check: VerifyField;
    /// Check-field triples per element (16 for a bit-sliced word, else 1).
    const LANES: usize;
    /// `dst[LANES*k + l]` = the lift of lane `l` of `src[k]`; `dst.len() == LANES * src.len()`.
    fn lift_slice(src: &[Self], dst: &mut [Self::Check]);
    /// The recorder's store for this field.
    fn store(rec: &mut Recorder) -> &mut Triples<Self>;

    /// The recorder's store of chained triples ([`Chained`]) for this field, if it has one
    /// (the prime fields); `None` (the default) otherwise.
    fn chained(rec: &mut Recorder) -> Option<&mut Chained<Self>> {
        let _ = rec;
        None
    }

    /// `src` itself, if this field is its own check field (the lift is the identity), so
    /// that `Verify` reads recorded triples in place instead of lifting copies; `None` (the
    /// default) otherwise.
    fn as_check(src: &[Self]) -> Option<&[Self::Check]> {
        let _ = src;
        None
    }

    /// Writes the images of `src` under a ring embedding `ψ` into `GF(2^8)` with
    /// `E_8 ∘ ψ` = [`Lift::lift_slice`] (`dst.len() == src.len()`) and returns `true`;
    /// `false` (the default, nothing written) if the field has none. Always the same answer.
    fn to_gf2p8(src: &[Self], dst: &mut [u8]) -> bool {
        let _ = (src, dst);
        false
    }

    /// `src` itself as the bytes [`Lift::to_gf2p8`] writes, if the embedding is the identity
    /// on the stored bytes (`GF(2^8)`); `None` (the default) otherwise.
    fn bytes_in_place(src: &[Self]) -> Option<&[u8]> {
        let _ = src;
        None
    }

    /// [`Lift::to_gf2p8`] of lanes `start .. start + dst.len()` (all in `src`; lane `l` of
    /// element `k` is lane `LANES k + l`) and `true`; `false` (nothing written) if the field
    /// has no such embedding. Always the same answer. The default serves one-lane fields.
    fn lanes_to_gf2p8(src: &[Self], start: usize, dst: &mut [u8]) -> bool {
        Self::LANES == 1 && Self::to_gf2p8(&src[start..start + dst.len()], dst)
    }

    /// Lanes `start .. start + len` (all in `src`) packed by eight, bit `m` of `dst[i]` =
    /// lane `start + 8 i + m`, every other bit of `dst` zero, and `true`, for bit-sliced
    /// `GF(2)` lifted to 0 and 1; `false` (the default, nothing written) for every other
    /// field. Always the same answer. The packed path of the k-ary first level of `Verify`.
    fn lanes_to_bits(src: &[Self], start: usize, len: usize, dst: &mut [u8]) -> bool {
        let _ = (src, start, len, dst);
        false
    }

    /// What [`Lift::lanes_to_bits`] writes for the `8 n` lanes from `start`, borrowed from
    /// `src` where it stores them so (`start` a multiple of 8, all lanes in `src`); `None`
    /// (the default) otherwise.
    fn bits_in_place(src: &[Self], start: usize, n: usize) -> Option<&[u8]> {
        let _ = (src, start, n);
        None
    }

    /// Fast path of `Verify`'s first level, pass A ([`TripleSource::pair_sums`]) for recorded
    /// triples: `None` (the default) lets the caller lift. The byte fields (`GF(2^8)`,
    /// `GF(2^4)`, the tower field) compute their products in `GF(2^8)` and lift only those.
    fn pair_sums(
        t: &Triples<Self>,
        lo: usize,
        hi: Option<usize>,
        c: [Coeffs<'_, Self::Check>; 2],
    ) -> Option<[Self::Check; 4]> {
        let _ = (t, lo, hi, c);
        None
    }

    /// Fast path of `Verify`'s first level, pass B ([`TripleSource::fold_pairs`]) for
    /// recorded triples: `false` (the default) lets the caller lift.
    fn fold_pairs(
        t: &Triples<Self>,
        lo: usize,
        hi: Option<usize>,
        c: [Coeffs<'_, Self::Check>; 2],
        s: Self::Check,
        out: [&mut [Self::Check]; 4],
    ) -> bool {
        let _ = (t, lo, hi, c, s, out);
        false
    }
}

/// [`Lift::pair_sums`] and [`Lift::fold_pairs`] of a field with a byte embedding
/// ([`Lift::lanes_to_gf2p8`]): the byte path of `Verify` over [`Rows`].
macro_rules! byte_path {
    () => {
        fn pair_sums(
            t: &Triples<Self>,
            lo: usize,
            hi: Option<usize>,
            c: [Coeffs<'_, Gf2p64>; 2],
        ) -> Option<[Gf2p64; 4]> {
            crate::verify::bytes::pair_sums(&Rows(t), lo, hi, c)
        }
        fn fold_pairs(
            t: &Triples<Self>,
            lo: usize,
            hi: Option<usize>,
            c: [Coeffs<'_, Gf2p64>; 2],
            s: Gf2p64,
            out: [&mut [Gf2p64]; 4],
        ) -> bool {
            crate::verify::bytes::fold_pairs(&Rows(t), lo, hi, c, s, out)
        }
    };
}

/// Small binary fields: the slice embedding of `triskele_field::embed` (nibble tables), and the
/// byte fast path of `Verify` through `$to8`, a ring embedding `ψ` into `GF(2^8)` with
/// `E_8 ∘ ψ` = the lift (writes `ψ(src[k])` to `dst[k]`).
macro_rules! lift_embedded {
    ($t:ty, $slot:ident, $to8:expr) => {
        lift_embedded!($t, $slot, $to8, None);
    };
    ($t:ty, $slot:ident, $to8:expr, $direct:expr) => {
        impl Lift for $t {
            type Check = Gf2p64;
            const LANES: usize = 1;
            fn lift_slice(src: &[Self], dst: &mut [Gf2p64]) {
                <$t as EmbedInto<Gf2p64>>::embed_slice(src, dst);
            }
            fn store(rec: &mut Recorder) -> &mut Triples<Self> {
                &mut rec.$slot
            }
            fn to_gf2p8(src: &[Self], dst: &mut [u8]) -> bool {
                ($to8)(src, dst);
                true
            }
            fn bytes_in_place(src: &[Self]) -> Option<&[u8]> {
                let direct: Option<AsBytes<$t>> = $direct;
                direct.map(|d| d(src))
            }
            byte_path!();
        }
    };
}

/// The stored bytes of field elements, for fields whose `ψ` is the identity on them.
type AsBytes<F> = fn(&[F]) -> &[u8];

/// Recorded triples of a field with a byte embedding, one lane per triple, read as
/// `GF(2^8)` bytes ([`Lift::lanes_to_gf2p8`]), or in place where the embedding is the
/// identity on the stored bytes ([`Lift::bytes_in_place`]).
pub(crate) struct Rows<'a, F>(&'a Triples<F>);

impl<'a, F> Rows<'a, F> {
    fn part(&self, part: usize) -> &'a [F] {
        crate::verify::source_parts(self.0)[part.min(5)]
    }
}

impl<F: Lift> crate::verify::bytes::ByteRows for Rows<'_, F> {
    fn len(&self) -> usize {
        F::LANES * self.0.len()
    }

    fn load(&self, part: usize, start: usize, out: &mut [u8]) {
        F::lanes_to_gf2p8(self.part(part), start, out);
    }

    fn bytes(&self, part: usize, start: usize, len: usize) -> Option<&[u8]> {
        if F::LANES != 1 {
            return None;
        }
        F::bytes_in_place(&self.part(part)[start..start + len])
    }
}

lift_embedded!(
    Gf2p8,
    gf2p8,
    |src: &[Gf2p8], dst: &mut [u8]| {
        dst.copy_from_slice(Gf2p8::slice_as_bytes(src));
    },
    Some(Gf2p8::slice_as_bytes)
);
// `φ^(-1)`: the tower field to `GF(2^8)` (TOWER_TABLES = E_8 ∘ φ^(-1)).
lift_embedded!(Gf4Tower, tower, |src: &[Gf4Tower], dst: &mut [u8]| {
    Gf4Tower::WOL_INV.apply_bytes(Gf4Tower::slice_as_bytes(src), dst);
});
/// `ψ`, the byte form in which `Verify` checks `GF(2^4)` elements: `a ↦ φ^(-1)(0·Y + a)` on
/// the stored bytes, the low nibble kept, then `φ^(-1)`, as one byte map (E_4 = E_8 ∘ φ^(-1)
/// on the low nibble).
pub const GF2P4_TO_GF2P8: LinearMap8 =
    Gf4Tower::WOL_INV.compose(&LinearMap8::from_basis_images([1, 2, 4, 8, 0, 0, 0, 0]));
lift_embedded!(Gf2p4, gf2p4, |src: &[Gf2p4], dst: &mut [u8]| {
    GF2P4_TO_GF2P8.apply_bytes(Gf2p4::slice_as_bytes(src), dst);
});

/// The byte form `ψ` of `GF(2^4)` elements in which `Verify` checks their products
/// (`E_8(ψ(a))` is the lift of `a`; `ψ` is an injective ring homomorphism), in the same
/// allocation, mapped in place: for protocols that record `GF(2^4)` products as vectors of
/// their own ([`crate::verify::ByteRows`]).
pub fn gf2p4_as_check_bytes(v: Vec<Gf2p4>) -> Vec<Gf2p8> {
    let mut b = Gf2p4::vec_into_bytes(v);
    GF2P4_TO_GF2P8.apply_bytes_in_place(&mut b);
    Gf2p8::vec_from_bytes(b)
}

/// A field that is its own check field: the lift is the identity, and `Verify` reads the
/// recorded triples in place.
macro_rules! lift_identity {
    ($t:ty, $slot:ident $(, $chained:ident)?) => {
        impl Lift for $t {
            type Check = $t;
            const LANES: usize = 1;
            fn lift_slice(src: &[Self], dst: &mut [$t]) {
                dst.copy_from_slice(src);
            }
            fn store(rec: &mut Recorder) -> &mut Triples<Self> {
                &mut rec.$slot
            }
            $(
                fn chained(rec: &mut Recorder) -> Option<&mut Chained<Self>> {
                    Some(&mut rec.$chained)
                }
            )?
            fn as_check(src: &[Self]) -> Option<&[$t]> {
                Some(src)
            }
            /// The recorded `x`, `y` read in place by the field's fused fold, if it has one
            /// ([`crate::verify::VerifyField::fold_lines`]).
            fn fold_pairs(
                t: &Triples<Self>,
                lo: usize,
                hi: Option<usize>,
                c: [Coeffs<'_, $t>; 2],
                s: $t,
                out: [&mut [$t]; 4],
            ) -> bool {
                let (Some(c0), Some(c1)) = (c[0].plain(), c[1].plain()) else {
                    return false;
                };
                match t.pair_rows(lo, hi, out[0].len()) {
                    Some((l, h)) => {
                        <$t as crate::verify::VerifyField>::fold_lines(out, l, h, [c0, c1], s, None)
                    }
                    None => false,
                }
            }
        }
    };
}

lift_identity!(Gf2p64, gf2p64);
lift_identity!(Fp, fp, fp_chained);
lift_identity!(FpRt, fp_rt, fp_rt_chained);

/// Bit-sliced `GF(2)`: lane `l` becomes the element 0 or 1 of `GF(2^64)` (`GF(2)` is a
/// subfield, so the lift is a ring homomorphism per lane).
impl Lift for Bits16 {
    type Check = Gf2p64;
    const LANES: usize = 16;
    fn lift_slice(src: &[Self], dst: &mut [Gf2p64]) {
        debug_assert_eq!(16 * src.len(), dst.len());
        for (d, s) in dst.chunks_exact_mut(16).zip(src) {
            for (l, o) in d.iter_mut().enumerate() {
                *o = Gf2p64(u64::from((s.0 >> l) & 1));
            }
        }
    }
    fn store(rec: &mut Recorder) -> &mut Triples<Self> {
        &mut rec.bits
    }
    /// `ψ`: a lane to the byte 0 or 1 (`GF(2) ⊂ GF(2^8)`, and `E_8` maps 0, 1 to 0, 1).
    fn lanes_to_gf2p8(src: &[Self], start: usize, dst: &mut [u8]) -> bool {
        Bits16::lanes_to_bytes(src, start, dst);
        true
    }
    /// Lanes in order, eight per byte: the words' bytes (little-endian), shifted where
    /// `start` is not a multiple of 8.
    fn lanes_to_bits(src: &[Self], start: usize, len: usize, dst: &mut [u8]) -> bool {
        Bits16::lanes_to_packed(src, start, len, dst);
        true
    }
    fn bits_in_place(src: &[Self], start: usize, n: usize) -> Option<&[u8]> {
        if !start.is_multiple_of(8) {
            return None;
        }
        Bits16::lanes_as_packed(src)?.get(start / 8..start / 8 + n)
    }
    // The byte path of `Verify`, one lane per triple: a bit triple is the `GF(2^8)` triple of
    // its bytes 0 or 1 (`x y = z` in `GF(2)` iff in `GF(2^8)`).
    byte_path!();
}

/// At most this many segments are verified early per party; the soundness bound of
/// segmented verification counts one Protocol 2 run per segment plus the final one
/// ([`crate::verify`], "Segments").
pub const MAX_SEGMENTS: usize = 256;

/// The fewest binary triples a run of Protocol 2 checks when a large segment is split
/// ([`SecurityModel::run_size`]): 2^20.
pub const MIN_RUN: usize = 1 << 20;

/// The default of [`Malicious`]'s verification segment: 64 MiB of records (32 MiB until
/// the twenty-fifth session: at 100,000 blocks on two threads the larger segment took 2-6% off
/// the Verify-based variants' totals, for about 50 MiB more per party; docs/PERFORMANCE.md).
pub const DEFAULT_VERIFY_SEGMENT: usize = 64 << 20;

/// The segment size new [`Malicious`] models start with (0: off).
static VERIFY_SEGMENT: AtomicUsize = AtomicUsize::new(DEFAULT_VERIFY_SEGMENT);

/// Sets the verification segment of the [`Malicious`] models created from now on in this
/// process, in bytes of records (`None`: verify everything in the finalize phase only). Every
/// party of a run must use the same value (it is part of the parameter check).
pub fn set_verify_segment(bytes: Option<usize>) {
    VERIFY_SEGMENT.store(bytes.unwrap_or(0), Ordering::Relaxed);
}

/// The verification segment new [`Malicious`] models start with ([`set_verify_segment`]).
pub fn verify_segment() -> Option<usize> {
    match VERIFY_SEGMENT.load(Ordering::Relaxed) {
        0 => None,
        b => Some(b),
    }
}

/// The hash of the views, as [`Malicious`] names it in its run parameters.
pub const VIEW_HASH: &str = "blake3";

/// Security with abort against one actively corrupt party (PROTOCOLS.md §5): hashed views
/// and recorded triples. See the module documentation.
#[derive(Clone)]
pub struct Malicious {
    prev: blake3::Hasher,
    next: blake3::Hasher,
    recorder: Recorder,
    /// Records (bytes) that make a segment due; `None`: everything is verified at the end.
    segment: Option<usize>,
    /// Segments verified so far.
    segments: usize,
    /// Some verified segment failed its local check.
    segment_failed: bool,
    /// Time spent verifying segments.
    segment_time: Duration,
    /// Overrides the run size derived from the segment ([`SecurityModel::run_size`]).
    run: Option<usize>,
}

impl Default for Malicious {
    fn default() -> Self {
        Malicious {
            prev: blake3::Hasher::new(),
            next: blake3::Hasher::new(),
            recorder: Recorder::default(),
            segment: verify_segment(),
            segments: 0,
            segment_failed: false,
            run: None,
            segment_time: Duration::ZERO,
        }
    }
}

impl Debug for Malicious {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Malicious")
            .field("gf2p64_triples", &self.recorder.gf2p64_triples())
            .field("fp_triples", &self.recorder.fp.len())
            .field("fp_rt_triples", &self.recorder.fp_rt.len())
            .field("segment", &self.segment)
            .field("segments", &self.segments)
            .finish_non_exhaustive()
    }
}

impl Malicious {
    /// Records `z = x * y` for verification (also called by [`crate::Party::mul`]). Use it
    /// directly for relations computed otherwise (e.g. with local terms added).
    pub fn record<F: Lift>(&mut self, x: &RssVec<F>, y: &RssVec<F>, z: &RssVec<F>) {
        F::store(&mut self.recorder).push(x, y, z);
    }

    /// Lets `f` append triples to the store of products over `F` in place (operands written
    /// straight into it, without vectors of their own); `f` should leave `x`, `y` and `z` of
    /// equal length (entries past the shortest are dropped: [`Triples::keep_whole`]). Unlike
    /// [`crate::Party::record_in_place`], no segment check follows.
    pub fn record_with<F: Lift>(&mut self, f: impl FnOnce(&mut Triples<F>)) {
        let store = F::store(&mut self.recorder);
        f(store);
        store.keep_whole();
    }

    /// Reserves room for `n` more recorded products over `F`, so that the stores do not grow
    /// (and copy themselves) while the online phase records; for protocols that know their
    /// product count in advance.
    pub fn reserve<F: Lift>(&mut self, n: usize) {
        F::store(&mut self.recorder).reserve(n);
    }

    /// The recorded triples.
    pub fn recorder(&self) -> &Recorder {
        &self.recorder
    }

    /// Removes and returns the recorded triples.
    pub fn take_recorder(&mut self) -> Recorder {
        core::mem::take(&mut self.recorder)
    }

    /// Sets this model's verification segment in bytes of records (`None`: verify only at the
    /// end), overriding [`set_verify_segment`] for this party.
    pub fn set_segment(&mut self, bytes: Option<usize>) {
        self.segment = bytes;
    }

    /// Sets the most binary triples one run of the check verifies (any size, also below
    /// [`MIN_RUN`]; `None`: derived from the segment, [`SecurityModel::run_size`]). Every
    /// party must use the same value; for tests and experiments.
    pub fn set_run_size(&mut self, triples: Option<usize>) {
        self.run = triples;
    }

    /// Segments verified so far ([`crate::Party::checkpoint`]).
    pub fn segments(&self) -> usize {
        self.segments
    }

    /// True if a segment verified so far failed this party's local check; the finalize
    /// check ([`crate::Party::verify_recorded`]) then aborts. The binary runs of a segment
    /// end in the finalize check (their last steps are parked), so their result shows there,
    /// not here.
    pub fn segment_failed(&self) -> bool {
        self.segment_failed
    }
}

impl SecurityModel for Malicious {
    const NAME: &'static str = "malicious";
    const MALICIOUS: bool = true;

    fn on_open(&mut self, from_prev: &[u8], own_next: &[u8]) {
        self.prev.update(from_prev);
        self.next.update(own_next);
    }

    fn absorb(&mut self, view: View, bytes: &[u8]) {
        match view {
            View::Prev => self.prev.update(bytes),
            View::Next => self.next.update(bytes),
        };
    }

    fn reserve_products<F: Lift>(&mut self, n: usize) {
        self.reserve::<F>(n);
    }

    fn on_product<F: Lift>(&mut self, x: &RssVec<F>, y: &RssVec<F>, z: &RssVec<F>) {
        self.record(x, y, z);
    }

    /// Keeps `src` for the finalize check: verified in `GF(2^64)` together with the binary
    /// sources (after them, in the order of recording).
    fn record_source(&mut self, src: CustomSource) {
        if !src.is_empty() {
            self.recorder.custom.push(src);
        }
    }

    fn take_store<F: Lift>(&mut self) -> Triples<F> {
        core::mem::take(F::store(&mut self.recorder))
    }

    fn put_store<F: Lift>(&mut self, store: Triples<F>) {
        *F::store(&mut self.recorder) = store;
    }

    fn on_product_swap<F: Lift>(
        &mut self,
        x: &mut RssVec<F>,
        y: &mut RssVec<F>,
        z: &mut RssVec<F>,
    ) {
        let store = F::store(&mut self.recorder);
        if store.is_empty() {
            core::mem::swap(&mut store.x, x);
            core::mem::swap(&mut store.y, y);
            core::mem::swap(&mut store.z, z);
        } else {
            store.push(x, y, z);
        }
        clear_all([x, y, z]);
    }

    fn on_chained<F: Lift>(
        &mut self,
        x: &mut RssVec<F>,
        y: &mut RssVec<F>,
        z: &mut RssVec<F>,
        r: F,
    ) -> bool {
        let Some(store) = F::chained(&mut self.recorder) else {
            return false;
        };
        if store.is_empty() {
            core::mem::swap(&mut store.t.x, x);
            core::mem::swap(&mut store.t.y, y);
            core::mem::swap(&mut store.t.z, z);
            store.r = r;
        } else if store.r == r {
            store.t.push(x, y, z);
        } else {
            return false;
        }
        clear_all([x, y, z]);
        true
    }

    fn take_view_digests(&mut self) -> Option<[[u8; 32]; 2]> {
        let prev = core::mem::take(&mut self.prev);
        let next = core::mem::take(&mut self.next);
        Some([prev.finalize().into(), next.finalize().into()])
    }

    /// All records once they take at least the segment size (at most [`MAX_SEGMENTS`]
    /// times; later records wait for the finalize check).
    fn take_due_records(&mut self) -> Option<Recorder> {
        let due = self
            .segment_size()
            .is_some_and(|s| self.recorder.recorded_bytes() >= s);
        due.then(|| core::mem::take(&mut self.recorder))
    }

    fn segment_verified(&mut self, mut rec: Recorder, ok: bool, time: Duration) {
        self.segments += 1;
        self.segment_failed |= !ok;
        self.segment_time += time;
        if self.recorder.is_empty() {
            // Nothing was recorded meanwhile: the next records reuse the memory.
            rec.clear();
            self.recorder = rec;
        }
    }

    fn segment_time(&self) -> Duration {
        self.segment_time
    }

    fn segment_size(&self) -> Option<usize> {
        self.segment.filter(|_| self.segments < MAX_SEGMENTS)
    }

    fn segment_room(&self) -> Option<usize> {
        self.segment_size()
            .map(|s| s.saturating_sub(self.recorder.recorded_bytes()))
    }

    /// The segment size in `GF(2^8)` triples (6 bytes each), at least [`MIN_RUN`] (runs of
    /// bytes only take four times as many, `verify::run_size_for`).
    fn run_size(&self) -> Option<usize> {
        self.run
            .or_else(|| self.segment.map(|b| (b / 6).max(MIN_RUN)))
    }

    fn parameters(&self) -> String {
        format!("verify-segment={:?} views={VIEW_HASH}", self.segment)
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    /// Each view is the BLAKE3 hash of the bytes it absorbed, in order, whatever calls they
    /// came in (openings and absorbs); taking the digests starts both views afresh; and the
    /// run parameters name the hash, so that parties of builds that hash otherwise disagree at
    /// setup.
    #[test]
    fn views_are_blake3_of_the_absorbed_stream() {
        let mut m = Malicious::default();
        m.on_open(b"opened from prev", b"own next");
        m.absorb(View::Prev, b" and a zero check");
        m.absorb(View::Next, &[7; 300]);
        let [prev, next] = m.take_view_digests().unwrap();
        assert_eq!(
            prev,
            *blake3::hash(b"opened from prev and a zero check").as_bytes()
        );
        let mut own = b"own next".to_vec();
        own.extend([7; 300]);
        assert_eq!(next, *blake3::hash(&own).as_bytes());
        assert_ne!(prev, next);
        let [fresh, _] = m.take_view_digests().unwrap();
        assert_eq!(fresh, *blake3::hash(b"").as_bytes());
        assert!(m.parameters().contains("views=blake3"));
    }

    /// The `GF(2^4)` store taken as bytes holds `ψ` of every part, in the same allocations,
    /// and its memory goes back to the store, emptied.
    #[test]
    fn gf2p4_store_is_checked_as_its_bytes_and_reused() {
        let mut rec = Recorder::default();
        let v = |k: u8| -> RssVec<Gf2p4> {
            RssVec::from_parts(
                (0..40u8).map(|i| Gf2p4(i.wrapping_mul(k) & 15)).collect(),
                (0..40u8).map(|i| Gf2p4((i + k) & 15)).collect(),
            )
            .unwrap()
        };
        rec.gf2p4.push(&v(3), &v(5), &v(7));
        let want: Vec<Vec<u8>> = crate::verify::source_parts(&rec.gf2p4)
            .iter()
            .map(|p| {
                let mut b = vec![0u8; p.len()];
                Gf2p4::to_gf2p8(p, &mut b);
                b
            })
            .collect();
        let ptr = rec.gf2p4.x.first.as_ptr() as usize;
        let bytes = rec.take_gf2p4_bytes();
        assert!(rec.gf2p4.is_empty());
        let got: Vec<Vec<u8>> = crate::verify::source_parts(&bytes)
            .iter()
            .map(|p| Gf2p8::slice_as_bytes(p).to_vec())
            .collect();
        assert_eq!(got, want);
        assert_eq!(bytes.x.first.as_ptr() as usize, ptr);
        rec.restore_gf2p4(bytes);
        assert!(rec.gf2p4.is_empty());
        assert_eq!(rec.gf2p4.x.first.as_ptr() as usize, ptr);
        assert!(rec.gf2p4.x.first.capacity() >= 40);
    }

    /// A compact source that tells its memory is counted with it by the segments; one that
    /// does not, at two bytes per triple.
    #[test]
    fn custom_sources_count_their_own_memory() {
        use crate::verify::{ByteRows, ByteSource};
        struct Rows(usize, Option<usize>);
        impl ByteRows for Rows {
            fn len(&self) -> usize {
                self.0
            }
            fn load(&self, _: usize, _: usize, out: &mut [u8]) {
                out.fill(0);
            }
            fn stored_bytes(&self) -> Option<usize> {
                self.1
            }
        }
        let mut rec = Recorder::default();
        rec.custom.push(Arc::new(ByteSource(Rows(100, Some(1234)))));
        assert_eq!(rec.recorded_bytes(), 1234);
        rec.custom.push(Arc::new(ByteSource(Rows(100, None))));
        assert_eq!(rec.recorded_bytes(), 1234 + CUSTOM_BYTES_PER_TRIPLE * 100);
    }

    /// The byte form of the small fields is their lift: `E_8(ψ(a)) = lift(a)` for every
    /// element of `GF(2^4)` and of the tower field (for `GF(2^4)` also with junk in the
    /// unused high nibble, which the lift ignores too), and `ψ` is multiplicative.
    #[test]
    fn byte_forms_are_the_lifts() {
        use triskele_field::embed::E8_TABLES;
        fn check<F: Lift<Check = Gf2p64>>(elems: &[F]) {
            let mut bytes = vec![0u8; elems.len()];
            assert!(F::to_gf2p8(elems, &mut bytes));
            let mut via = vec![Gf2p64::ZERO; elems.len()];
            E8_TABLES.apply_slice(&bytes, &mut via);
            let mut lifted = vec![Gf2p64::ZERO; elems.len()];
            F::lift_slice(elems, &mut lifted);
            assert_eq!(via, lifted);
            for (a, pa) in elems.iter().zip(&bytes).take(16) {
                for (b, pb) in elems.iter().zip(&bytes).take(16) {
                    let mut ab = [0u8];
                    F::to_gf2p8(&[*a * *b], &mut ab);
                    assert_eq!(Gf2p8(ab[0]), Gf2p8(*pa) * Gf2p8(*pb));
                }
            }
        }
        let nibbles: Vec<Gf2p4> = (0..=255u8).map(|b| Gf2p4(b & 0x0f)).collect();
        check(&nibbles);
        let junk: Vec<Gf2p4> = (0..=255u8).map(Gf2p4).collect();
        let (mut a, mut b) = (vec![0u8; 256], vec![0u8; 256]);
        Gf2p4::to_gf2p8(&junk, &mut a);
        Gf2p4::to_gf2p8(&nibbles, &mut b);
        assert_eq!(a, b);
        check(&(0..=255u8).map(Gf4Tower).collect::<Vec<_>>());
    }

    fn rss(v: &[u64]) -> RssVec<Fp> {
        let f: Vec<Fp> = v.iter().map(|&x| Fp::from_u64(x)).collect();
        let s: Vec<Fp> = v.iter().map(|&x| Fp::from_u64(x + 100)).collect();
        RssVec::from_parts(f, s).unwrap()
    }

    /// The swap hand-over: into an empty store the vectors move (the caller gets the store's
    /// cleared vectors, with their memory); into a non-empty one they are appended. The
    /// caller's vectors are empty afterwards either way, and the store holds exactly the
    /// records in order.
    #[test]
    fn on_product_swap_moves_into_an_empty_store_and_appends_otherwise() {
        let mut m = Malicious::default();
        let (mut x, mut y, mut z) = (rss(&[1, 2]), rss(&[3, 4]), rss(&[5, 6]));
        m.on_product_swap(&mut x, &mut y, &mut z);
        assert!(x.is_empty() && y.is_empty() && z.is_empty());
        let (mut x, mut y, mut z) = (rss(&[7]), rss(&[8]), rss(&[9]));
        m.on_product_swap(&mut x, &mut y, &mut z);
        assert!(x.is_empty() && y.is_empty() && z.is_empty());
        let fp = &m.recorder.fp;
        assert_eq!(fp.x, rss(&[1, 2, 7]));
        assert_eq!(fp.y, rss(&[3, 4, 8]));
        assert_eq!(fp.z, rss(&[5, 6, 9]));
        // A cleared store with memory: the next hand-over gives that memory to the caller.
        let mut rec = core::mem::take(&mut m.recorder);
        rec.clear();
        m.recorder = rec;
        let cap = m.recorder.fp.x.first.capacity();
        assert!(cap >= 3);
        let (mut x, mut y, mut z) = (rss(&[10]), rss(&[11]), rss(&[12]));
        m.on_product_swap(&mut x, &mut y, &mut z);
        assert!(x.is_empty() && x.first.capacity() == cap);
        assert_eq!(m.recorder.fp.z, rss(&[12]));
    }

    /// Chained triples: taken into an empty store with their coin, appended under the same
    /// coin, refused (nothing taken) under another one; the semi-honest model takes none.
    #[test]
    fn on_chained_keeps_one_coin_per_store() {
        let mut m = Malicious::default();
        let r = Fp::from_u64(5);
        let (mut x, mut y, mut z) = (rss(&[1, 2]), rss(&[3, 4]), rss(&[5, 6]));
        assert!(m.on_chained(&mut x, &mut y, &mut z, r));
        assert!(x.is_empty() && y.is_empty() && z.is_empty());
        let (mut x, mut y, mut z) = (rss(&[7]), rss(&[8]), rss(&[9]));
        assert!(m.on_chained(&mut x, &mut y, &mut z, r));
        let (mut x, mut y, mut z) = (rss(&[10]), rss(&[11]), rss(&[12]));
        assert!(!m.on_chained(&mut x, &mut y, &mut z, Fp::from_u64(6)));
        assert_eq!((x.len(), y.len(), z.len()), (1, 1, 1));
        let ch = &m.recorder.fp_chained;
        assert_eq!(ch.r, r);
        assert_eq!(ch.t.x, rss(&[1, 2, 7]));
        assert_eq!(ch.t.y, rss(&[3, 4, 8]));
        assert_eq!(ch.t.z, rss(&[5, 6, 9]));
        assert!(m.recorder.fp.is_empty());
        assert_eq!(m.recorder.recorded_bytes(), 6 * 3 * 16);
        let mut s = SemiHonest;
        assert!(!s.on_chained(&mut x, &mut y, &mut z, r));
        assert_eq!(x.len(), 1);
    }
}
