use triskele_field::embed::ByteEmbedding;
use triskele_field::{Bits16, Field};
use triskele_share::RssVec;

use super::{ByteRows, VerifyField};
use crate::model::{Chained, Lift, Triples};

/// The step-1 coefficients of a block of consecutive positions: `c_i = scale · base_i`.
/// Product coefficients ([`VerifyField::PRODUCT_COEFFICIENTS`]) come as a row factor and a
/// piece of the column factors, so that a fast path can apply the row factor once per block;
/// drawn coefficients have `scale = 1`.
#[derive(Debug, Clone, Copy)]
pub struct Coeffs<'a, V> {
    /// The common factor.
    pub scale: V,
    /// The per-position factors.
    pub base: &'a [V],
}

impl<'a, V: Field> Coeffs<'a, V> {
    /// Coefficients given one by one.
    pub fn plain_slice(c: &'a [V]) -> Self {
        Coeffs {
            scale: V::ONE,
            base: c,
        }
    }

    /// Number of positions.
    pub fn len(&self) -> usize {
        self.base.len()
    }

    /// True if there are none.
    pub fn is_empty(&self) -> bool {
        self.base.is_empty()
    }

    /// The first `n` positions.
    pub fn prefix(self, n: usize) -> Self {
        Coeffs {
            scale: self.scale,
            base: &self.base[..n],
        }
    }

    /// The coefficients themselves if the scale is 1.
    pub fn plain(&self) -> Option<&'a [V]> {
        (self.scale == V::ONE).then_some(self.base)
    }
}

/// Which vectors of a chunk [`TripleSource::lift`] must fill.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Parts {
    /// `x`, `y` and `z`.
    Xyz,
    /// Only `x` and `y` (`z` is left as it is).
    Xy,
}

/// Triples to verify, lifted to the check field on demand (so that recorded small-field
/// triples are never stored expanded).
pub trait TripleSource<V>: Sync {
    /// Number of check-field triples.
    fn len(&self) -> usize;
    /// True if there is nothing to check.
    fn is_empty(&self) -> bool {
        self.len() == 0
    }
    /// The memory the source holds, in bytes, if it knows it (what a verification segment
    /// counts; `None`: estimated from [`TripleSource::len`]).
    fn stored_bytes(&self) -> Option<usize> {
        None
    }
    /// Writes triples `start .. start + out.len()` into `out` (all six vectors of `out` have
    /// the same length; positions at or beyond [`TripleSource::len`] are zero). With
    /// [`Parts::Xy`] the `z` vectors are not written.
    fn lift(&self, start: usize, parts: Parts, out: &mut LiftedTriples<V>);

    /// Optional fast path of level 1, pass A: for the `k = c[0].len()` pairs of triples
    /// `(lo + i, hi + i)` (all upper entries zero if `hi` is `None`), with `X = c x` (`c[0]`
    /// for the lower, `c[1]` for the upper triples), `[Σ c z_1, Σ c z_2, Σ lp(X_hi, y_hi),
    /// Σ lp(X_lo + (X_hi - X_lo) u, y_lo + (y_hi - y_lo) u)]` where `lp(a, b) = a_1 b_1 +
    /// a_1 b_2 + a_2 b_1`; exactly what `Verify` computes from [`TripleSource::lift`]. `None`
    /// (the default): not available for this range, the caller lifts.
    fn pair_sums(&self, lo: usize, hi: Option<usize>, c: [Coeffs<'_, V>; 2]) -> Option<[V; 4]> {
        let _ = (lo, hi, c);
        None
    }

    /// Optional fast path of level 1, pass B: writes `[X_1, X_2, y_1, y_2]` folded with `s`,
    /// `lo_entry + (hi_entry - lo_entry) s`, for the `k = out[0].len()` pairs `(lo + i, hi + i)`
    /// (`X = c x` with `c = c[0]` resp. `c[1]`; upper entries zero if `hi` is `None`) and
    /// returns `true`; `false` (the default): not available, nothing written.
    fn fold_pairs(
        &self,
        lo: usize,
        hi: Option<usize>,
        c: [Coeffs<'_, V>; 2],
        s: V,
        out: [&mut [V]; 4],
    ) -> bool {
        let _ = (lo, hi, c, s, out);
        false
    }

    /// Optional: writes `ψ(y_1)`, `ψ(y_2)` of triples `start .. start + out[0].len()` (zero
    /// from [`TripleSource::len`] on), for a ring embedding `ψ` into `GF(2^8)` with
    /// [`TripleSource::lift`] `= E_8 ∘ ψ`, and returns `true`. A source returns the same for
    /// every range (also empty ones), except a [`Concat`], which has them for the ranges whose
    /// parts all have them (and for empty ones if every part has them); `false` (the
    /// default): no byte form, nothing written. Lets `Verify` recompute the folded `y` of
    /// level 1 instead of storing it.
    fn y_bytes(&self, start: usize, out: [&mut [u8]; 2]) -> bool {
        let _ = (start, out);
        false
    }

    /// Optional: writes `ψ` of part `part` (`x_1, x_2, y_1, y_2, z_1, z_2` for 0..6) of the
    /// triples `start .. start + out.len()`, all inside the source, for a ring embedding `ψ`
    /// into `GF(2^8)` with [`TripleSource::lift`] `= E_8 ∘ ψ`, and returns `true`; `false`
    /// (the default): no byte form, nothing written. A source returns the same for every
    /// range (also empty ones). Lets a concatenation take the byte path for pairs whose
    /// halves lie in different sources.
    fn load_bytes(&self, part: usize, start: usize, out: &mut [u8]) -> bool {
        let _ = (part, start, out);
        false
    }

    /// Optional: writes the coordinates in the tower `GF(2^16) = GF(2^8)[t]` of part `part`
    /// (`x_1, x_2, y_1, y_2, z_1, z_2` for 0..6) of the triples `start .. start + lo.len()`,
    /// all inside the source, with [`TripleSource::lift`] `= E_16(lo + hi t)`
    /// (`triskele_field::embed::e16`), and returns `true`; `false`: no such form, nothing
    /// written. A source returns the same for every range (also empty ones). The default is
    /// the byte form ([`TripleSource::load_bytes`], `E_16` extends `E_8`) with `hi = 0`. Lets the
    /// k-ary first level of `Verify` take runs that mix byte triples with relations in
    /// `GF(2^16)` (the gf4p4 relations).
    fn load_words(&self, part: usize, start: usize, lo: &mut [u8], hi: &mut [u8]) -> bool {
        if !self.load_bytes(part, start, lo) {
            return false;
        }
        hi.fill(0);
        true
    }

    /// Optional: writes part `part` (`x_1, x_2, y_1, y_2` for 0..4) of the triples `start ..
    /// start + out.len()`, all inside the source, in the pair form of
    /// [`PAIR_EMBEDDING`](triskele_field::embed::PAIR_EMBEDDING) (which is then their lift),
    /// and returns `true`; `false` (the default): no such form, nothing written. For relations
    /// in `GF(2^16)` whose `x` and `y` have `A`-degree at most 1 (the gf4p4 relations), with
    /// [`TripleSource::z_planes`]: the k-ary first level of `Verify` then takes them nearly as
    /// bytes. A concatenation answers for a range inside one of its parts, or across parts
    /// that all have the form.
    fn load_pairs(&self, part: usize, start: usize, out: &mut [u8]) -> bool {
        let _ = (part, start, out);
        false
    }

    /// Optional, with [`TripleSource::load_pairs`]: part `part` (`x_1, x_2, y_1, y_2` for
    /// 0..4) of the triples `start .. start + k`, all inside the source, in the pair form,
    /// borrowed from the source where it stores them so; `None` (the default) where it does
    /// not (then [`TripleSource::load_pairs`] forms them).
    fn pairs_in_place(&self, part: usize, start: usize, k: usize) -> Option<&[u8]> {
        let _ = (part, start, k);
        None
    }

    /// Optional, with [`TripleSource::load_pairs`]: part `part` (`z_1`, `z_2` for 4, 5) of the
    /// triples `start .. start + k`, all inside the source, as two byte planes borrowed from
    /// the source and the maps that lift them (the lift of `z` is the sum of both); `None`
    /// (the default).
    fn z_planes(&self, part: usize, start: usize, k: usize) -> Option<ZPlanes<'_>> {
        let _ = (part, start, k);
        None
    }

    /// [`TripleSource::load_bytes`] for a range whose triples all have a byte form
    /// ([`TripleSource::range_has_bytes`]), also in a concatenation whose other parts have
    /// none; `false` if they do not. The default is [`TripleSource::load_bytes`].
    fn load_range_bytes(&self, part: usize, start: usize, out: &mut [u8]) -> bool {
        self.load_bytes(part, start, out)
    }

    /// Whether the triples `start .. start + len` (inside the source) have a byte form
    /// ([`TripleSource::load_bytes`]); the default: whether the source has one. A
    /// concatenation answers for the parts the range covers, so that the k-ary first level can
    /// take the byte path for ranges of byte triples in a run that also holds words.
    fn range_has_bytes(&self, start: usize, len: usize) -> bool {
        let _ = (start, len);
        self.load_bytes(0, 0, &mut [])
    }

    /// Whether every byte [`TripleSource::load_bytes`] writes for part `part` of the triples
    /// `start .. start + len`, all inside the source, lies in the subfield of 16 elements of
    /// `GF(2^8)` (`GF(2^4)` records through `ψ`), so that the k-ary level may embed them by
    /// tables of 16 entries (`triskele_field::embed::SubfieldEmbedding`); a concatenation:
    /// every part the range covers. `false` (the default): not known to. A source that says
    /// so wrongly fails the check of honest parties.
    fn bytes_in_subfield(&self, part: usize, start: usize, len: usize) -> bool {
        let _ = (part, start, len);
        false
    }

    /// Whether the source holds `GF(2)` triples (lifted to 0 and 1) that it gives packed by
    /// eight ([`TripleSource::load_bits`]); a concatenation: whether some part does. The
    /// default: no.
    fn has_bits(&self) -> bool {
        false
    }

    /// Whether every triple of the source is a `GF(2)` triple it gives packed by eight; a
    /// concatenation: every part. The default: no.
    fn all_bits(&self) -> bool {
        false
    }

    /// Optional: part `part` (`x_1, x_2, y_1, y_2, z_1, z_2` for 0..6) of the triples `start ..
    /// start + len` packed by eight, bit `m` of `out[i]` for triple `start + 8 i + m`, every
    /// other bit of `out` zero (also past the source; `out.len() ≥ ⌈len/8⌉`), and `true`, if
    /// they are all `GF(2)` triples lifted to 0 and 1; `false` (the default) if not. A source
    /// answers the same for every range; a concatenation for the parts the range covers. The
    /// packed path of the k-ary first level of `Verify`.
    fn load_bits(&self, part: usize, start: usize, len: usize, out: &mut [u8]) -> bool {
        let _ = (part, start, len, out);
        false
    }

    /// Optional: what [`TripleSource::load_bits`] writes for the `8 n` triples from `start`,
    /// all inside the source, borrowed from where the source stores them so; `None` (the
    /// default): the caller loads them.
    fn bits_in_place(&self, part: usize, start: usize, n: usize) -> Option<&[u8]> {
        let _ = (part, start, n);
        None
    }

    /// Optional: what [`TripleSource::load_bytes`] writes for part `part` of the triples
    /// `start .. start + k`, all inside the source, borrowed from where the source stores
    /// them as such bytes; `None` (the default): the caller loads them.
    fn bytes_in_place(&self, part: usize, start: usize, k: usize) -> Option<&[u8]> {
        let _ = (part, start, k);
        None
    }

    /// Optional: what [`TripleSource::y_bytes`] writes for the triples `start .. start + k`,
    /// all inside the source, borrowed from where the source stores them as such bytes;
    /// `None` (the default): the caller uses [`TripleSource::y_bytes`].
    fn y_bytes_in_place(&self, start: usize, k: usize) -> Option<[&[u8]; 2]> {
        let _ = (start, k);
        None
    }

    /// Optional: where part `part` (`x_1, x_2, y_1, y_2, z_1, z_2` for 0..6; both components
    /// of a factor answer alike) of the triples `start .. start + k` repeats. `Some(e)` if
    /// those values are, entry by entry, part `part` of the triples `e .. e + k` too, and of
    /// no triples before `e` in the same way (`e = start`: the range is the first of
    /// several that hold these values, which some later range repeats); `None` (the
    /// default): not known to repeat. All of it inside the source. Lets the k-ary first level
    /// load, extrapolate and fold a factor that several relations share once (a relation's
    /// `X` that is another's `X`, as `x^12` in mal-chida-rec-check's chain), where the
    /// source lays those relations out on its chunks ([`crate::verify::SHARED_ALIGN`]).
    fn shared_part(&self, part: usize, start: usize, k: usize) -> Option<usize> {
        let _ = (part, start, k);
        None
    }

    /// Optional: the triples `start .. start + k`, all inside the source, as the slices
    /// `[x_1, x_2, y_1, y_2, z_1, z_2]` of check-field elements, borrowed (for sources that
    /// store check-field elements, whose lift is a copy); `None` (the default): the caller
    /// lifts.
    fn slices(&self, start: usize, k: usize) -> Option<[&[V]; 6]> {
        let _ = (start, k);
        None
    }

    /// Optional: `[y_1, y_2]` of the triples `start .. start + k`, all inside the source,
    /// borrowed; `None`: the caller lifts them. The default takes them from
    /// [`TripleSource::slices`].
    fn y_slices(&self, start: usize, k: usize) -> Option<[&[V]; 2]> {
        self.slices(start, k).map(|s| [s[2], s[3]])
    }

    /// Optional fast path of level 1 for sources that form `x` and `z` from stored parts
    /// ([`crate::Chained`]): for the triples `start .. start + k`, all inside the source
    /// (`k = c.len()`, the length of both `out` slices), writes `X = c x` into `out` and
    /// returns `[y_1, y_2]` (borrowed) and `[Σ c z_1, Σ c z_2]`; `None` (the default): the
    /// caller uses [`TripleSource::slices`] or lifts.
    #[allow(clippy::type_complexity)]
    fn scaled_x(&self, start: usize, c: &[V], out: [&mut [V]; 2]) -> Option<([&[V]; 2], [V; 2])> {
        let _ = (start, c, out);
        None
    }

    /// Optional: `[Σ c z_1, Σ c z_2]` over the triples `start .. start + c.len()` (zero from
    /// [`TripleSource::len`] on), formed without lifting `z` (for compact sources whose `z`
    /// is a `GF(2)`-linear map of stored bytes); `None` (the default): the caller lifts `z`.
    fn z_sums(&self, start: usize, c: &[V]) -> Option<[V; 2]> {
        let _ = (start, c);
        None
    }

    /// Optional: writes the lifted `y_1`, `y_2` of triples `start .. start + out[0].len()`
    /// (zero from [`TripleSource::len`] on) and returns `true`; `false` (the default): not
    /// available, nothing written. A source returns the same for every range (also empty
    /// ones). With it (and cheaply, since it runs twice) `Verify` does not store the folded
    /// `y` of level 1 but recomputes it at level 2 (half the level-1 memory), as it does for
    /// sources with [`TripleSource::y_bytes`].
    fn lift_y(&self, start: usize, out: [&mut [V]; 2]) -> bool {
        let _ = (start, out);
        false
    }

    /// Whether every triple is stored as check-field elements that level 1 reads in place
    /// ([`TripleSource::slices`] or [`TripleSource::scaled_x`] inside the source, and `y` by
    /// [`TripleSource::y_slices`] or [`TripleSource::lift_y`]). Pass A then keeps the scaled
    /// `X = c x` it forms, and pass B folds that instead of forming it again (no second
    /// coefficient stream, no second scaling). `false` (the default) for sources that lift or
    /// take the byte path, where pass A never forms `X` as field elements.
    fn in_place(&self) -> bool {
        false
    }
}

/// A part of compact relations as two byte planes and the maps that lift them (the lift is
/// the sum of both; [`TripleSource::z_planes`]).
pub type ZPlanes<'a> = [(&'a ByteEmbedding, &'a [u8]); 2];

/// A chunk of lifted triples.
#[derive(Debug, Clone, Default)]
pub struct LiftedTriples<V> {
    pub x: RssVec<V>,
    pub y: RssVec<V>,
    pub z: RssVec<V>,
}

impl<V: Field> LiftedTriples<V> {
    pub(super) fn zeros(n: usize) -> Self {
        LiftedTriples {
            x: RssVec::zeros(n),
            y: RssVec::zeros(n),
            z: RssVec::zeros(n),
        }
    }

    fn len(&self) -> usize {
        self.x.first.len()
    }

    /// Resizes all six vectors to `n` (new entries zero).
    pub(super) fn set_len(&mut self, n: usize) {
        for v in [
            &mut self.x.first,
            &mut self.x.second,
            &mut self.y.first,
            &mut self.y.second,
            &mut self.z.first,
            &mut self.z.second,
        ] {
            v.resize(n, V::ZERO);
        }
    }

    /// The vectors a pass needs, in the order `x1, x2, y1, y2[, z1, z2]` (what
    /// [`TripleSource::lift`] must fill).
    pub fn parts_mut(&mut self, parts: Parts) -> impl Iterator<Item = &mut Vec<V>> {
        let k = match parts {
            Parts::Xyz => 6,
            Parts::Xy => 4,
        };
        [
            &mut self.x.first,
            &mut self.x.second,
            &mut self.y.first,
            &mut self.y.second,
            &mut self.z.first,
            &mut self.z.second,
        ]
        .into_iter()
        .take(k)
    }
}

pub(crate) fn source_parts<F>(t: &Triples<F>) -> [&Vec<F>; 6] {
    [
        &t.x.first,
        &t.x.second,
        &t.y.first,
        &t.y.second,
        &t.z.first,
        &t.z.second,
    ]
}

impl<F: Lift> TripleSource<F::Check> for Triples<F> {
    fn len(&self) -> usize {
        F::LANES * Triples::len(self)
    }

    fn in_place(&self) -> bool {
        F::LANES == 1 && F::as_check(&[]).is_some()
    }

    fn slices(&self, start: usize, k: usize) -> Option<[&[F::Check]; 6]> {
        let end = start.checked_add(k)?;
        if end > Triples::len(self) {
            return None;
        }
        let mut out: [&[F::Check]; 6] = Default::default();
        for (o, v) in out.iter_mut().zip(source_parts(self)) {
            *o = F::as_check(&v[start..end])?;
        }
        Some(out)
    }

    fn pair_sums(
        &self,
        lo: usize,
        hi: Option<usize>,
        c: [Coeffs<'_, F::Check>; 2],
    ) -> Option<[F::Check; 4]> {
        F::pair_sums(self, lo, hi, c)
    }

    fn fold_pairs(
        &self,
        lo: usize,
        hi: Option<usize>,
        c: [Coeffs<'_, F::Check>; 2],
        s: F::Check,
        out: [&mut [F::Check]; 4],
    ) -> bool {
        F::fold_pairs(self, lo, hi, c, s, out)
    }

    fn y_bytes(&self, start: usize, out: [&mut [u8]; 2]) -> bool {
        if !F::lanes_to_gf2p8(&[], 0, &mut []) {
            return false;
        }
        let n = TripleSource::len(self);
        for (o, y) in out.into_iter().zip([&self.y.first, &self.y.second]) {
            let m = n.saturating_sub(start).min(o.len());
            let (head, tail) = o.split_at_mut(m);
            if m > 0 {
                F::lanes_to_gf2p8(y, start, head);
            }
            tail.fill(0);
        }
        true
    }

    fn y_bytes_in_place(&self, start: usize, k: usize) -> Option<[&[u8]; 2]> {
        let end = start.checked_add(k)?;
        if F::LANES != 1 || end > Triples::len(self) {
            return None;
        }
        Some([
            F::bytes_in_place(&self.y.first[start..end])?,
            F::bytes_in_place(&self.y.second[start..end])?,
        ])
    }

    fn load_bytes(&self, part: usize, start: usize, out: &mut [u8]) -> bool {
        F::lanes_to_gf2p8(source_parts(self)[part.min(5)], start, out)
    }

    fn has_bits(&self) -> bool {
        F::lanes_to_bits(&[], 0, 0, &mut [])
    }

    fn all_bits(&self) -> bool {
        self.has_bits()
    }

    fn load_bits(&self, part: usize, start: usize, len: usize, out: &mut [u8]) -> bool {
        if !self.has_bits() {
            return false;
        }
        let len = len.min(TripleSource::len(self).saturating_sub(start));
        if len == 0 {
            out.fill(0);
            return true;
        }
        F::lanes_to_bits(source_parts(self)[part.min(5)], start, len, out)
    }

    fn bits_in_place(&self, part: usize, start: usize, n: usize) -> Option<&[u8]> {
        let end = start.checked_add(n.checked_mul(8)?)?;
        if end > TripleSource::len(self) {
            return None;
        }
        F::bits_in_place(source_parts(self)[part.min(5)], start, n)
    }

    fn bytes_in_place(&self, part: usize, start: usize, k: usize) -> Option<&[u8]> {
        let end = start.checked_add(k)?;
        if F::LANES != 1 || end > Triples::len(self) {
            return None;
        }
        F::bytes_in_place(&source_parts(self)[part.min(5)][start..end])
    }

    /// `y` lifted directly, without `x` (for bit-sliced words, whole words lifted and the
    /// requested lanes copied).
    fn lift_y(&self, start: usize, out: [&mut [F::Check]; 2]) -> bool {
        let lanes = F::LANES;
        let total = TripleSource::len(self);
        let mut tmp = Vec::new();
        for (o, y) in out.into_iter().zip([&self.y.first, &self.y.second]) {
            let m = total.saturating_sub(start).min(o.len());
            let (head, tail) = o.split_at_mut(m);
            tail.fill(F::Check::ZERO);
            if m == 0 {
                continue;
            }
            let end = start + m;
            if lanes == 1 {
                F::lift_slice(&y[start..end], head);
            } else {
                let (e0, e1) = (start / lanes, end.div_ceil(lanes));
                tmp.clear();
                tmp.resize((e1 - e0) * lanes, F::Check::ZERO);
                F::lift_slice(&y[e0..e1], &mut tmp);
                let off = start - e0 * lanes;
                head.copy_from_slice(&tmp[off..off + m]);
            }
        }
        true
    }

    fn lift(&self, start: usize, parts: Parts, out: &mut LiftedTriples<F::Check>) {
        let n = out.len();
        let total = TripleSource::len(self);
        let end = (start + n).min(total);
        let lanes = F::LANES;
        let srcs = source_parts(self);
        let mut tmp = Vec::new();
        for (src, dst) in srcs.into_iter().zip(out.parts_mut(parts)) {
            if start >= end {
                dst.fill(F::Check::ZERO);
                continue;
            }
            dst[end - start..].fill(F::Check::ZERO);
            if lanes == 1 {
                F::lift_slice(&src[start..end], &mut dst[..end - start]);
            } else if start.is_multiple_of(lanes) && end.is_multiple_of(lanes) {
                // Whole elements (the usual case): straight into `dst`.
                F::lift_slice(&src[start / lanes..end / lanes], &mut dst[..end - start]);
            } else {
                let (e0, e1) = (start / lanes, end.div_ceil(lanes));
                tmp.clear();
                tmp.resize((e1 - e0) * lanes, F::Check::ZERO);
                F::lift_slice(&src[e0..e1], &mut tmp);
                let off = start - e0 * lanes;
                dst[..end - start].copy_from_slice(&tmp[off..off + end - start]);
            }
        }
    }
}

/// Chained triples of a field that is its own check field: the stored `(x, y, z)` stand for
/// `(x + r y, y, z + r x)`, formed while `Verify` streams. Level 1 scales `x + r y` by the
/// coefficients in one step ([`VerifyField::chain_scale`]) and gets `Σ c (z + r x)` as
/// `Σ c z + r Σ c x` from inner products, pass B folds with [`VerifyField::fold_lines`],
/// and `y` is read in place.
impl<V: VerifyField + Lift<Check = V>> TripleSource<V> for Chained<V> {
    fn len(&self) -> usize {
        Chained::len(self)
    }

    fn in_place(&self) -> bool {
        true
    }

    /// The stored triples lifted, then combined in place: `z += r x` (with the stored `x`),
    /// then `x += r y` (zero entries past the end stay zero).
    fn lift(&self, start: usize, parts: Parts, out: &mut LiftedTriples<V>) {
        self.t.lift(start, parts, out);
        let LiftedTriples { x, y, z } = out;
        if parts == Parts::Xyz {
            V::scale_add_slice(&mut z.first, &x.first, self.r);
            V::scale_add_slice(&mut z.second, &x.second, self.r);
        }
        V::scale_add_slice(&mut x.first, &y.first, self.r);
        V::scale_add_slice(&mut x.second, &y.second, self.r);
    }

    fn y_slices(&self, start: usize, k: usize) -> Option<[&[V]; 2]> {
        self.t.y_slices(start, k)
    }

    fn lift_y(&self, start: usize, out: [&mut [V]; 2]) -> bool {
        self.t.lift_y(start, out)
    }

    fn scaled_x(&self, start: usize, c: &[V], out: [&mut [V]; 2]) -> Option<([&[V]; 2], [V; 2])> {
        let [x1, x2, y1, y2, z1, z2] = self.t.slices(start, c.len())?;
        V::chain_scale(out, [x1, x2], [y1, y2], c, self.r);
        let sums = [(x1, z1), (x2, z2)]
            .map(|(x, z)| V::inner_product(c, z) + self.r * V::inner_product(c, x));
        Some(([y1, y2], sums))
    }

    fn fold_pairs(
        &self,
        lo: usize,
        hi: Option<usize>,
        c: [Coeffs<'_, V>; 2],
        s: V,
        out: [&mut [V]; 4],
    ) -> bool {
        let (Some(c0), Some(c1)) = (c[0].plain(), c[1].plain()) else {
            return false;
        };
        match self.t.pair_rows(lo, hi, out[0].len()) {
            Some((l, h)) => V::fold_lines(out, l, h, [c0, c1], s, Some(self.r)),
            None => false,
        }
    }
}

/// Several sources, one after the other. What the parts can do (byte and word forms) and
/// where each begins are found once, when the concatenation is made: the k-ary first level
/// asks for every row it loads, and probing every part each time took several percent of a
/// finalize (mal-lut16, 13 parts).
pub struct Concat<'a, V> {
    parts: Vec<&'a dyn TripleSource<V>>,
    /// `starts[i]`: the index of part `i`'s first triple; `starts[parts.len()]` the length.
    starts: Vec<usize>,
    /// Whether every part has a byte form ([`TripleSource::load_bytes`]).
    bytes: bool,
    /// Whether every part has a word form ([`TripleSource::load_words`]).
    words: bool,
}

impl<V> core::fmt::Debug for Concat<'_, V> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("Concat")
            .field("sources", &self.parts.len())
            .finish()
    }
}

impl<'a, V: VerifyField> Concat<'a, V> {
    /// The concatenation of `parts`, in this order.
    pub fn new(parts: Vec<&'a dyn TripleSource<V>>) -> Self {
        let starts = core::iter::once(0)
            .chain(parts.iter().scan(0usize, |end, s| {
                *end += s.len();
                Some(*end)
            }))
            .collect();
        let bytes = parts.iter().all(|s| s.load_bytes(0, 0, &mut []));
        let words = parts.iter().all(|s| s.load_words(0, 0, &mut [], &mut []));
        Concat {
            parts,
            starts,
            bytes,
            words,
        }
    }

    /// The parts that overlap `start..start + k`: each part, the index in it where the
    /// overlap begins, and the range of the output (`0..k`) it covers.
    fn overlaps(
        &self,
        start: usize,
        k: usize,
    ) -> impl Iterator<Item = (&'a dyn TripleSource<V>, usize, core::ops::Range<usize>)> + '_ {
        let end = start.saturating_add(k);
        // The first part that ends after `start`.
        let first = self.starts[1..].partition_point(|&e| e <= start);
        self.parts[first.min(self.parts.len())..]
            .iter()
            .zip(&self.starts[first..])
            .zip(&self.starts[first + 1..])
            .take_while(move |((_, &lo), _)| lo < end)
            .filter_map(move |((s, &lo), &hi)| {
                let (a, b) = (start.max(lo), end.min(hi));
                (a < b).then(|| (*s, a - lo, a - start..b - start))
            })
    }

    /// Whether every part that `[lo, lo + k)` or `[hi, hi + k)` overlaps has a byte form,
    /// so that the byte path over the concatenation can take that pair of blocks although
    /// other parts (elsewhere) have none.
    fn pair_has_bytes(&self, lo: usize, hi: Option<usize>, k: usize) -> bool {
        let bytes = |start: usize| {
            self.overlaps(start, k)
                .all(|(s, _, _)| s.load_bytes(0, 0, &mut []))
        };
        bytes(lo) && hi.is_none_or(bytes)
    }

    /// [`TripleSource::load_bytes`] from the parts that overlap the range, for a
    /// concatenation already known to have bytes (every part has them).
    fn load_parts(&self, part: usize, start: usize, out: &mut [u8]) {
        for (s, offset, r) in self.overlaps(start, out.len()) {
            s.load_bytes(part, offset, &mut out[r]);
        }
    }

    /// The source holding `[lo, lo + k)` and, if given, `[hi, hi + k)`, and its offset.
    fn holder(
        &self,
        lo: usize,
        hi: Option<usize>,
        k: usize,
    ) -> Option<(&dyn TripleSource<V>, usize)> {
        let i = self.starts[1..].partition_point(|&e| e <= lo);
        let (s, base, end) = (self.parts.get(i)?, self.starts[i], self.starts[i + 1]);
        let inside = |a: usize| a >= base && a.checked_add(k).is_some_and(|e| e <= end);
        (inside(lo) && hi.is_none_or(inside)).then_some((*s, base))
    }
}

impl<V: VerifyField> TripleSource<V> for Concat<'_, V> {
    fn len(&self) -> usize {
        self.starts.last().copied().unwrap_or(0)
    }

    /// From the part that holds the whole range.
    fn shared_part(&self, part: usize, start: usize, k: usize) -> Option<usize> {
        let (s, base) = self.holder(start, None, k)?;
        s.shared_part(part, start - base, k).map(|e| e + base)
    }

    /// If every part is.
    fn in_place(&self) -> bool {
        self.parts.iter().all(|s| s.in_place())
    }

    fn slices(&self, start: usize, k: usize) -> Option<[&[V]; 6]> {
        let (s, base) = self.holder(start, None, k)?;
        s.slices(start - base, k)
    }

    fn y_slices(&self, start: usize, k: usize) -> Option<[&[V]; 2]> {
        let (s, base) = self.holder(start, None, k)?;
        s.y_slices(start - base, k)
    }

    fn y_bytes_in_place(&self, start: usize, k: usize) -> Option<[&[u8]; 2]> {
        let (s, base) = self.holder(start, None, k)?;
        s.y_bytes_in_place(start - base, k)
    }

    fn bytes_in_place(&self, part: usize, start: usize, k: usize) -> Option<&[u8]> {
        let (s, base) = self.holder(start, None, k)?;
        s.bytes_in_place(part, start - base, k)
    }

    fn scaled_x(&self, start: usize, c: &[V], out: [&mut [V]; 2]) -> Option<([&[V]; 2], [V; 2])> {
        let (s, base) = self.holder(start, None, c.len())?;
        s.scaled_x(start - base, c, out)
    }

    /// The part holding both ranges, else (the halves in different parts, or a range across
    /// parts) the byte path over the concatenation if every part the ranges cover has bytes.
    fn pair_sums(&self, lo: usize, hi: Option<usize>, c: [Coeffs<'_, V>; 2]) -> Option<[V; 4]> {
        match self.holder(lo, hi, c[0].len()) {
            Some((s, base)) => s.pair_sums(lo - base, hi.map(|h| h - base), c),
            None if self.pair_has_bytes(lo, hi, c[0].len()) => {
                V::rows_pair_sums(&SourceRows(self), lo, hi, c)
            }
            None => None,
        }
    }

    /// As [`Concat::pair_sums`].
    fn fold_pairs(
        &self,
        lo: usize,
        hi: Option<usize>,
        c: [Coeffs<'_, V>; 2],
        s: V,
        out: [&mut [V]; 4],
    ) -> bool {
        match self.holder(lo, hi, out[0].len()) {
            Some((src, base)) => src.fold_pairs(lo - base, hi.map(|h| h - base), c, s, out),
            None if self.pair_has_bytes(lo, hi, out[0].len()) => {
                V::rows_fold_pairs(&SourceRows(self), lo, hi, c, s, out)
            }
            None => false,
        }
    }

    fn has_bits(&self) -> bool {
        self.parts.iter().any(|s| s.has_bits())
    }

    fn all_bits(&self) -> bool {
        !self.parts.is_empty() && self.parts.iter().all(|s| s.all_bits())
    }

    /// From the part holding the range, else pieced together from the parts it covers (each
    /// loaded apart and shifted into place).
    fn load_bits(&self, part: usize, start: usize, len: usize, out: &mut [u8]) -> bool {
        let len = len.min(self.len().saturating_sub(start));
        if let Some((s, base)) = self.holder(start, None, len) {
            return s.load_bits(part, start - base, len, out);
        }
        out.fill(0);
        let mut piece = Vec::new();
        for (s, offset, r) in self.overlaps(start, len) {
            piece.clear();
            piece.resize(r.len().div_ceil(8), 0);
            if !s.load_bits(part, offset, r.len(), &mut piece) {
                return false;
            }
            Bits16::or_packed_at(out, r.start, &piece);
        }
        true
    }

    fn bits_in_place(&self, part: usize, start: usize, n: usize) -> Option<&[u8]> {
        let (s, base) = self.holder(start, None, n.checked_mul(8)?)?;
        s.bits_in_place(part, start - base, n)
    }

    fn range_has_bytes(&self, start: usize, len: usize) -> bool {
        self.overlaps(start, len)
            .all(|(s, offset, r)| s.range_has_bytes(offset, r.len()))
    }

    fn bytes_in_subfield(&self, part: usize, start: usize, len: usize) -> bool {
        self.overlaps(start, len)
            .all(|(s, offset, r)| s.bytes_in_subfield(part, offset, r.len()))
    }

    /// From the part holding the range, else pieced together from the parts it covers if
    /// each of them has the pair form there (a sub-block of the k-ary level across the end of
    /// one layer's relations and the start of the next's).
    fn load_pairs(&self, part: usize, start: usize, out: &mut [u8]) -> bool {
        if let Some((s, base)) = self.holder(start, None, out.len()) {
            return s.load_pairs(part, start - base, out);
        }
        // Probe every part first (empty ranges), so that nothing is written on `false`.
        let mut covered = 0;
        for (s, offset, r) in self.overlaps(start, out.len()) {
            covered += r.len();
            if !s.load_pairs(part, offset, &mut []) {
                return false;
            }
        }
        if covered != out.len() {
            return false;
        }
        self.overlaps(start, out.len())
            .all(|(s, offset, r)| s.load_pairs(part, offset, &mut out[r]))
    }

    fn pairs_in_place(&self, part: usize, start: usize, k: usize) -> Option<&[u8]> {
        let (s, base) = self.holder(start, None, k)?;
        s.pairs_in_place(part, start - base, k)
    }

    fn z_planes(&self, part: usize, start: usize, k: usize) -> Option<ZPlanes<'_>> {
        let (s, base) = self.holder(start, None, k)?;
        s.z_planes(part, start - base, k)
    }

    fn load_range_bytes(&self, part: usize, start: usize, out: &mut [u8]) -> bool {
        self.overlaps(start, out.len())
            .all(|(s, offset, r)| s.load_range_bytes(part, offset, &mut out[r]))
    }

    /// Pieced together from the parts, if every part has words (or bytes).
    fn load_words(&self, part: usize, start: usize, lo: &mut [u8], hi: &mut [u8]) -> bool {
        if !self.words {
            return false;
        }
        for (s, offset, r) in self.overlaps(start, lo.len()) {
            s.load_words(part, offset, &mut lo[r.clone()], &mut hi[r]);
        }
        true
    }

    /// Pieced together from the parts, if every part has bytes.
    fn load_bytes(&self, part: usize, start: usize, out: &mut [u8]) -> bool {
        if !self.bytes {
            return false;
        }
        self.load_parts(part, start, out);
        true
    }

    /// Available if every part has it; pieced together from the parts.
    fn lift_y(&self, start: usize, out: [&mut [V]; 2]) -> bool {
        if !self.parts.iter().all(|s| s.lift_y(0, [&mut [], &mut []])) {
            return false;
        }
        let [o1, o2] = out;
        o1.fill(V::ZERO);
        o2.fill(V::ZERO);
        for (s, offset, r) in self.overlaps(start, o1.len()) {
            s.lift_y(offset, [&mut o1[r.clone()], &mut o2[r]]);
        }
        true
    }

    /// Pieced together from the parts, if every part the range covers has it.
    fn z_sums(&self, start: usize, c: &[V]) -> Option<[V; 2]> {
        let mut z = [V::ZERO; 2];
        for (s, offset, r) in self.overlaps(start, c.len()) {
            let [a, b] = s.z_sums(offset, &c[r])?;
            z = [z[0] + a, z[1] + b];
        }
        Some(z)
    }

    /// Available for a range if every part it covers has it (for an empty range: if every
    /// part has it); pieced together from the parts.
    fn y_bytes(&self, start: usize, out: [&mut [u8]; 2]) -> bool {
        let has = |s: &&dyn TripleSource<V>| s.y_bytes(0, [&mut [], &mut []]);
        let available = if out[0].is_empty() {
            self.parts.iter().all(has)
        } else {
            self.overlaps(start, out[0].len()).all(|(s, _, _)| has(&s))
        };
        if !available {
            return false;
        }
        let [o1, o2] = out;
        o1.fill(0);
        o2.fill(0);
        for (s, offset, r) in self.overlaps(start, o1.len()) {
            s.y_bytes(offset, [&mut o1[r.clone()], &mut o2[r]]);
        }
        true
    }

    fn lift(&self, start: usize, parts: Parts, out: &mut LiftedTriples<V>) {
        let n = out.len();
        // Fast path: the range lies in one source.
        if let Some((s, base)) = self.holder(start, None, n) {
            s.lift(start - base, parts, out);
            return;
        }
        for p in out.parts_mut(parts) {
            p.fill(V::ZERO);
        }
        let mut part = LiftedTriples::default();
        for (s, offset, r) in self.overlaps(start, n) {
            if part.len() != r.len() {
                part = LiftedTriples::zeros(r.len());
            }
            s.lift(offset, parts, &mut part);
            for (dst, src) in out.parts_mut(parts).zip(part.parts_mut(parts)) {
                dst[r.clone()].copy_from_slice(src);
            }
        }
    }
}

/// The triples `off .. off + len` of a source, as a source of its own (positions counted
/// from `off`; nothing past `len`): one run of a check split by [`windows`].
pub(crate) struct Window<'a, V> {
    pub(super) src: &'a dyn TripleSource<V>,
    pub(super) off: usize,
    pub(super) len: usize,
}

/// `src` cut into the fewest consecutive windows of at most `max` triples (one window if
/// `max` is `None` or the source is not longer) that start on whole bytes of packed bits
/// ([`TripleSource::bits_in_place`]) and, where `max` is at least
/// [`super::SHARED_BIT_ALIGN`], on whole sub-blocks of the bit level (so that the layouts of
/// repeated factors hold in every run, [`TripleSource::shared_part`]), of balanced lengths (all
/// but the last `⌈total / count⌉`, rounded up to a multiple of 8 or of that sub-block), so
/// that no run is much shorter than the others and the buffers one run leaves for the next are
/// the right size.
pub(crate) fn windows<V>(src: &dyn TripleSource<V>, max: Option<usize>) -> Vec<Window<'_, V>> {
    let total = src.len();
    let step = match max.filter(|m| *m > 0 && *m < total) {
        Some(m) => {
            // Runs start on whole bytes of packed bits, and on whole sub-blocks of the bit
            // level where they are that long (the layouts of repeated factors,
            // `TripleSource::shared_part`).
            let unit = match m {
                m if m >= super::SHARED_BIT_ALIGN => super::SHARED_BIT_ALIGN,
                8.. => 8,
                _ => 1,
            };
            let whole = m - m % unit;
            total.div_ceil(total.div_ceil(whole)).next_multiple_of(unit)
        }
        None => total.max(1),
    };
    (0..total)
        .step_by(step)
        .map(|off| Window {
            src,
            off,
            len: step.min(total - off),
        })
        .collect()
}

/// What the k-ary first level of `Verify` makes of a source's triples: packed bits only (blocks
/// of 32, module `wide`), bytes only (blocks of 32, module `wide_bytes`), or anything else
/// (words, pairs, lifted triples, a mix: blocks of eight, module `octal`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Bits = 0,
    Bytes = 1,
    Other = 2,
}

impl Kind {
    fn of<V>(src: &dyn TripleSource<V>) -> Kind {
        if src.all_bits() {
            Kind::Bits
        } else if !src.has_bits() && src.load_bytes(0, 0, &mut []) {
            Kind::Bytes
        } else {
            Kind::Other
        }
    }
}

/// `sources` in the groups that are verified in runs of their own: one group per kind (packed
/// bits, bytes, others; [`Kind`]) if more than one kind is present and every kind has at
/// least `min` triples, else one group of all. A run of one kind takes the k-ary first level
/// with its own blocks (32 for bits or bytes only) where a run that mixes them takes blocks
/// of eight; the groups' runs cost one more seed, first level and halvings each, their last
/// steps go side by side. Each group keeps the sources' order, and every party forms the same
/// groups from the lengths and kinds of its sources.
pub(crate) fn kind_groups<'a, V>(
    sources: Vec<&'a dyn TripleSource<V>>,
    min: usize,
) -> Vec<Vec<&'a dyn TripleSource<V>>> {
    let mut groups: [Vec<&'a dyn TripleSource<V>>; 3] = Default::default();
    for s in &sources {
        groups[Kind::of(*s) as usize].push(*s);
    }
    let present: Vec<Vec<_>> = groups.into_iter().filter(|g| !g.is_empty()).collect();
    let large = |g: &Vec<&dyn TripleSource<V>>| g.iter().map(|s| s.len()).sum::<usize>() >= min;
    if present.len() > 1 && present.iter().all(large) {
        present
    } else {
        vec![sources]
    }
}

/// The runs of [`windows`] over a concatenation, each as the pieces of the parts it covers
/// (windows of the parts, whose order is what the run checks). A run that covers parts with
/// a byte form ([`TripleSource::load_bytes`]) and parts without one is rearranged so that
/// level 1's pairs `(j, j + h)` (`h` = [`super::fold::first_half`]) join triples of the
/// same kind: the first half of the byte group, the first part of the other group (filling
/// `h`), then the rest of the byte group, then the rest of the other. Pairs of byte triples
/// then take the byte path, also where their halves lie in different parts, instead of
/// being lifted with a partner that has no byte form. Any order checks the same triples
/// (the claim is a sum over all of them), and every party derives the same one from the
/// lengths and kinds of its sources.
pub(crate) fn paired_runs<'a, V: VerifyField>(
    cat: &'a Concat<'a, V>,
    max: Option<usize>,
) -> Vec<Vec<Window<'a, V>>> {
    windows(cat, max)
        .into_iter()
        .map(|run| paired(cat, run.off, run.len))
        .collect()
}

/// One run of [`paired_runs`]: the pieces of `cat[off .. off + len]`.
fn paired<'a, V: VerifyField>(
    cat: &'a Concat<'a, V>,
    off: usize,
    len: usize,
) -> Vec<Window<'a, V>> {
    let (bytes, other): (Vec<Window<'a, V>>, Vec<Window<'a, V>>) = cat
        .overlaps(off, len)
        .map(|(src, at, r)| Window {
            src,
            off: at,
            len: r.len(),
        })
        .partition(|w| w.src.load_bytes(0, 0, &mut []));
    let size = |g: &[Window<'a, V>]| g.iter().map(|w| w.len).sum::<usize>();
    let (b, g) = (size(&bytes), size(&other));
    if b == 0 || g == 0 {
        // One kind only: the parts' own order.
        return if b == 0 { other } else { bytes };
    }
    let h = super::fold::first_half(len, len.next_power_of_two());
    let mut b1 = b.div_ceil(2).min(h);
    let g1 = g.min(h - b1);
    b1 = b.min(h - g1).max(b1);
    let (bl, bh) = split_pieces(bytes, b1);
    let (gl, gh) = split_pieces(other, g1);
    [bl, gl, bh, gh].into_iter().flatten().collect()
}

/// `pieces` cut after `at` triples: the pieces before and after (one piece split in two if
/// the cut falls inside it).
fn split_pieces<'a, V>(
    pieces: Vec<Window<'a, V>>,
    at: usize,
) -> (Vec<Window<'a, V>>, Vec<Window<'a, V>>) {
    let (mut lo, mut hi) = (Vec::new(), Vec::new());
    let mut seen = 0;
    for w in pieces {
        let take = at.saturating_sub(seen).min(w.len);
        seen += w.len;
        if take > 0 {
            lo.push(Window { len: take, ..w });
        }
        if take < w.len {
            hi.push(Window {
                off: w.off + take,
                len: w.len - take,
                ..w
            });
        }
    }
    (lo, hi)
}

impl<V: VerifyField> Window<'_, V> {
    /// Whether `start .. start + k` lies inside the window.
    fn inside(&self, start: usize, k: usize) -> bool {
        start.checked_add(k).is_some_and(|e| e <= self.len)
    }

    /// How many of `k` entries from `start` lie inside the window.
    fn kept(&self, start: usize, k: usize) -> usize {
        self.len.saturating_sub(start).min(k)
    }
}

impl<V: VerifyField> TripleSource<V> for Window<'_, V> {
    fn len(&self) -> usize {
        self.len
    }

    fn in_place(&self) -> bool {
        self.src.in_place()
    }

    fn lift(&self, start: usize, parts: Parts, out: &mut LiftedTriples<V>) {
        let keep = self.kept(start, out.len());
        self.src.lift(self.off + start, parts, out);
        let zero = |v: &mut Vec<V>| v[keep..].fill(V::ZERO);
        for v in [&mut out.x, &mut out.y] {
            zero(&mut v.first);
            zero(&mut v.second);
        }
        if parts == Parts::Xyz {
            zero(&mut out.z.first);
            zero(&mut out.z.second);
        }
    }

    fn pair_sums(&self, lo: usize, hi: Option<usize>, c: [Coeffs<'_, V>; 2]) -> Option<[V; 4]> {
        let k = c[0].len();
        if !self.inside(lo, k) || hi.is_some_and(|h| !self.inside(h, k)) {
            return None;
        }
        self.src
            .pair_sums(self.off + lo, hi.map(|h| self.off + h), c)
    }

    fn fold_pairs(
        &self,
        lo: usize,
        hi: Option<usize>,
        c: [Coeffs<'_, V>; 2],
        s: V,
        out: [&mut [V]; 4],
    ) -> bool {
        let k = out[0].len();
        if !self.inside(lo, k) || hi.is_some_and(|h| !self.inside(h, k)) {
            return false;
        }
        self.src
            .fold_pairs(self.off + lo, hi.map(|h| self.off + h), c, s, out)
    }

    fn load_bytes(&self, part: usize, start: usize, out: &mut [u8]) -> bool {
        self.src.load_bytes(part, self.off + start, out)
    }

    /// Where the earlier range also lies inside the window.
    fn shared_part(&self, part: usize, start: usize, k: usize) -> Option<usize> {
        if !self.inside(start, k) {
            return None;
        }
        let e = self.src.shared_part(part, self.off + start, k)?;
        e.checked_sub(self.off)
    }

    fn load_words(&self, part: usize, start: usize, lo: &mut [u8], hi: &mut [u8]) -> bool {
        self.src.load_words(part, self.off + start, lo, hi)
    }

    fn range_has_bytes(&self, start: usize, len: usize) -> bool {
        self.src.range_has_bytes(self.off + start, len)
    }

    fn bytes_in_subfield(&self, part: usize, start: usize, len: usize) -> bool {
        self.src.bytes_in_subfield(part, self.off + start, len)
    }

    fn load_pairs(&self, part: usize, start: usize, out: &mut [u8]) -> bool {
        self.inside(start, out.len()) && self.src.load_pairs(part, self.off + start, out)
    }

    fn pairs_in_place(&self, part: usize, start: usize, k: usize) -> Option<&[u8]> {
        self.inside(start, k)
            .then(|| self.src.pairs_in_place(part, self.off + start, k))
            .flatten()
    }

    fn z_planes(&self, part: usize, start: usize, k: usize) -> Option<ZPlanes<'_>> {
        self.inside(start, k)
            .then(|| self.src.z_planes(part, self.off + start, k))
            .flatten()
    }

    fn has_bits(&self) -> bool {
        self.src.has_bits()
    }

    fn all_bits(&self) -> bool {
        self.src.all_bits()
    }

    fn load_bits(&self, part: usize, start: usize, len: usize, out: &mut [u8]) -> bool {
        let keep = self.kept(start, len);
        self.src.load_bits(part, self.off + start, keep, out)
    }

    fn bits_in_place(&self, part: usize, start: usize, n: usize) -> Option<&[u8]> {
        self.inside(start, n.checked_mul(8)?)
            .then(|| self.src.bits_in_place(part, self.off + start, n))
            .flatten()
    }

    fn load_range_bytes(&self, part: usize, start: usize, out: &mut [u8]) -> bool {
        self.src.load_range_bytes(part, self.off + start, out)
    }

    fn y_bytes(&self, start: usize, out: [&mut [u8]; 2]) -> bool {
        let keep = self.kept(start, out[0].len());
        let [a, b] = out;
        if !self.src.y_bytes(self.off + start, [&mut *a, &mut *b]) {
            return false;
        }
        a[keep..].fill(0);
        b[keep..].fill(0);
        true
    }

    fn slices(&self, start: usize, k: usize) -> Option<[&[V]; 6]> {
        self.inside(start, k)
            .then(|| self.src.slices(self.off + start, k))
            .flatten()
    }

    fn y_bytes_in_place(&self, start: usize, k: usize) -> Option<[&[u8]; 2]> {
        self.inside(start, k)
            .then(|| self.src.y_bytes_in_place(self.off + start, k))
            .flatten()
    }

    fn bytes_in_place(&self, part: usize, start: usize, k: usize) -> Option<&[u8]> {
        self.inside(start, k)
            .then(|| self.src.bytes_in_place(part, self.off + start, k))
            .flatten()
    }

    fn y_slices(&self, start: usize, k: usize) -> Option<[&[V]; 2]> {
        self.inside(start, k)
            .then(|| self.src.y_slices(self.off + start, k))
            .flatten()
    }

    fn scaled_x(&self, start: usize, c: &[V], out: [&mut [V]; 2]) -> Option<([&[V]; 2], [V; 2])> {
        if !self.inside(start, c.len()) {
            return None;
        }
        self.src.scaled_x(self.off + start, c, out)
    }

    fn z_sums(&self, start: usize, c: &[V]) -> Option<[V; 2]> {
        if !self.inside(start, c.len()) {
            return None;
        }
        self.src.z_sums(self.off + start, c)
    }

    fn lift_y(&self, start: usize, out: [&mut [V]; 2]) -> bool {
        let keep = self.kept(start, out[0].len());
        let [a, b] = out;
        if !self.src.lift_y(self.off + start, [&mut *a, &mut *b]) {
            return false;
        }
        a[keep..].fill(V::ZERO);
        b[keep..].fill(V::ZERO);
        true
    }
}

/// A concatenation as [`ByteRows`], for the byte path over several sources: only ranges
/// whose parts all have a byte form are loaded ([`Concat::pair_has_bytes`], checked before
/// it is made).
struct SourceRows<'a, 'b, V>(&'a Concat<'b, V>);

impl<V: VerifyField> ByteRows for SourceRows<'_, '_, V> {
    fn len(&self) -> usize {
        self.0.len()
    }

    fn load(&self, part: usize, start: usize, out: &mut [u8]) {
        self.0.load_parts(part, start, out);
    }

    fn bytes(&self, part: usize, start: usize, len: usize) -> Option<&[u8]> {
        self.0.bytes_in_place(part, start, len)
    }
}
