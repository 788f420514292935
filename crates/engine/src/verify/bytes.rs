use std::cell::RefCell;

use triskele_field::embed::{has_bit_sums, ByteEmbedding, E8_TABLES};
use triskele_field::{Bulk, Field, Gf2p64, Gf2p8};

use super::{Coeffs, LiftedTriples, TripleSource};

/// Triples given as `GF(2^8)` bytes, lifted to `GF(2^64)` by `E_8`: parts `x_1, x_2, y_1,
/// y_2, z_1, z_2` (0..6) of this party's two components. A store of compact relations that
/// implements it is checked on `Verify`'s byte path through [`ByteSource`].
pub trait ByteRows: Sync {
    /// Number of triples.
    fn len(&self) -> usize;
    /// True if there are no triples.
    fn is_empty(&self) -> bool {
        self.len() == 0
    }
    /// Writes `ψ` of part `part` (the triple's element of `GF(2^8)`) for the entries `start ..
    /// start + out.len()`, all in range.
    fn load(&self, part: usize, start: usize, out: &mut [u8]);
    /// The same entries in place, if the stored bytes are these elements.
    fn bytes(&self, _part: usize, _start: usize, _len: usize) -> Option<&[u8]> {
        None
    }
    /// The memory the store holds, if it knows it ([`TripleSource::stored_bytes`]).
    fn stored_bytes(&self) -> Option<usize> {
        None
    }
    /// Where part `part` of the entries `start .. start + k` repeats
    /// ([`TripleSource::shared_part`]); `None` (the default): not known to.
    fn shared_part(&self, _part: usize, _start: usize, _k: usize) -> Option<usize> {
        None
    }

    /// Whether every byte [`ByteRows::load`] writes for part `part` of the entries `start ..
    /// start + len` lies in the subfield of 16 elements of `GF(2^8)`
    /// ([`TripleSource::bytes_in_subfield`]); `false` (the default): not known to.
    fn in_subfield(&self, _part: usize, _start: usize, _len: usize) -> bool {
        false
    }
}

/// A [`ByteRows`] store as a [`TripleSource`] over `GF(2^64)`: triple `k` is `E_8` of the
/// store's bytes, and `Verify` takes the byte path for it (local products on the bytes, bit
/// sums, folds by scaled byte maps; the folded `y` of level 1 recomputed from the bytes).
#[derive(Debug, Clone)]
pub struct ByteSource<T>(pub T);

impl<T: ByteRows> ByteSource<T> {
    /// Part `part` of the entries `start .. start + out.len()` as bytes, zero past the end.
    fn load_padded(&self, part: usize, start: usize, out: &mut [u8]) {
        let m = self.0.len().saturating_sub(start).min(out.len());
        let (head, tail) = out.split_at_mut(m);
        if m > 0 {
            self.0.load(part, start, head);
        }
        tail.fill(0);
    }
}

impl<T: ByteRows> TripleSource<Gf2p64> for ByteSource<T> {
    fn len(&self) -> usize {
        self.0.len()
    }

    fn stored_bytes(&self) -> Option<usize> {
        self.0.stored_bytes()
    }

    fn lift(&self, start: usize, parts: super::Parts, out: &mut LiftedTriples<Gf2p64>) {
        let n = out.x.first.len();
        let mut buf = vec![0u8; n];
        for (part, dst) in out.parts_mut(parts).enumerate() {
            self.load_padded(part, start, &mut buf);
            E8_TABLES.apply_slice(&buf, dst);
        }
    }

    fn pair_sums(
        &self,
        lo: usize,
        hi: Option<usize>,
        c: [Coeffs<'_, Gf2p64>; 2],
    ) -> Option<[Gf2p64; 4]> {
        pair_sums(&self.0, lo, hi, c)
    }

    fn fold_pairs(
        &self,
        lo: usize,
        hi: Option<usize>,
        c: [Coeffs<'_, Gf2p64>; 2],
        s: Gf2p64,
        out: [&mut [Gf2p64]; 4],
    ) -> bool {
        fold_pairs(&self.0, lo, hi, c, s, out)
    }

    fn load_bytes(&self, part: usize, start: usize, out: &mut [u8]) -> bool {
        if !out.is_empty() {
            self.0.load(part, start, out);
        }
        true
    }

    fn shared_part(&self, part: usize, start: usize, k: usize) -> Option<usize> {
        let end = start.checked_add(k)?;
        (k > 0 && end <= self.0.len())
            .then(|| self.0.shared_part(part, start, k))
            .flatten()
    }

    fn bytes_in_subfield(&self, part: usize, start: usize, len: usize) -> bool {
        start
            .checked_add(len)
            .is_some_and(|end| end <= self.0.len())
            && self.0.in_subfield(part, start, len)
    }

    fn bytes_in_place(&self, part: usize, start: usize, k: usize) -> Option<&[u8]> {
        let end = start.checked_add(k)?;
        (end <= self.0.len())
            .then(|| self.0.bytes(part, start, k))
            .flatten()
    }

    fn y_bytes_in_place(&self, start: usize, k: usize) -> Option<[&[u8]; 2]> {
        Some([
            self.bytes_in_place(2, start, k)?,
            self.bytes_in_place(3, start, k)?,
        ])
    }

    fn y_bytes(&self, start: usize, out: [&mut [u8]; 2]) -> bool {
        for (part, o) in [2, 3].into_iter().zip(out) {
            self.load_padded(part, start, o);
        }
        true
    }

    /// `E_8` of the bytes of `y`, so that a concatenation with sources that have no byte
    /// form can still recompute its folded `y` instead of storing it.
    fn lift_y(&self, start: usize, out: [&mut [Gf2p64]; 2]) -> bool {
        let mut buf = [0u8; STEP];
        for (part, o) in [2, 3].into_iter().zip(out) {
            for (k, chunk) in o.chunks_mut(STEP).enumerate() {
                let b = &mut buf[..chunk.len()];
                self.load_padded(part, start + k * STEP, b);
                E8_TABLES.apply_slice(b, chunk);
            }
        }
        true
    }
}

/// Entries per step (stack buffers).
const STEP: usize = 1024;

/// `(1+u)^2 E`, `u(1+u) E` and `u^2` for the node `u` (`(1+u)^2 = 1 + u^2`).
const E_A: ByteEmbedding = E8_TABLES.scaled(Gf2p64(0b101));
const E_C: ByteEmbedding = E8_TABLES.scaled(Gf2p64(0b110));
const U2: Gf2p64 = Gf2p64(0b100);

/// `out = x_1 (y_1 + y_2) + x_2 y_1` in `GF(2^8)` (`y12 = y_1 + y_2`).
pub(super) fn lp8(out: &mut [u8], x1: &[u8], x2: &[u8], y1: &[u8], y12: &[u8]) {
    let b = Gf2p8::slice_from_bytes;
    let o = Gf2p8::slice_from_bytes_mut(out);
    Gf2p8::mul_sum2_slice(o, b(x1), b(y12), b(x2), b(y1));
}

fn in_range(r: &dyn ByteRows, at: usize, k: usize) -> bool {
    at.checked_add(k).is_some_and(|e| e <= r.len())
}

/// Storage for one block's six parts as bytes, where they must be converted.
struct Block {
    v: [[u8; STEP]; 6],
    /// `y_1 + y_2`.
    y12: [u8; STEP],
}

/// The stack-sized buffers of [`pair_sums`] and [`fold_pairs`], kept per thread (and
/// reused) instead of zeroed on every call.
struct Work {
    bl: Block,
    bh: Block,
    /// Local products.
    p: [[u8; STEP]; 2],
    /// Embedded bytes.
    e: [Gf2p64; STEP],
}

thread_local! {
    static WORK: RefCell<Option<Box<Work>>> = const { RefCell::new(None) };
}

/// `f` with this thread's [`Work`] (the byte paths call no parallel code inside, so the
/// cell is never borrowed twice).
fn with_work<R>(f: impl FnOnce(&mut Work) -> R) -> R {
    WORK.with_borrow_mut(|w| {
        let w = w.get_or_insert_with(|| {
            Box::new(Work {
                bl: Block::new(),
                bh: Block::new(),
                p: [[0; STEP]; 2],
                e: [Gf2p64::ZERO; STEP],
            })
        });
        f(w)
    })
}

/// One block's parts (in place or in a [`Block`]); parts past those loaded are stale.
struct Parts<'a> {
    v: [&'a [u8]; 6],
    y12: &'a [u8],
}

impl Block {
    fn new() -> Self {
        Block {
            v: [[0; STEP]; 6],
            y12: [0; STEP],
        }
    }

    /// The first `parts` parts of entries `at .. at + m`, and `y_1 + y_2`.
    fn load<'a>(&'a mut self, r: &'a dyn ByteRows, at: usize, m: usize, parts: usize) -> Parts<'a> {
        let Block { v, y12 } = self;
        let direct: [Option<&'a [u8]>; 6] =
            core::array::from_fn(|p| if p < parts { r.bytes(p, at, m) } else { None });
        for (p, buf) in v.iter_mut().enumerate().take(parts) {
            if direct[p].is_none() {
                r.load(p, at, &mut buf[..m]);
            }
        }
        let v: &'a [[u8; STEP]; 6] = v;
        let v: [&'a [u8]; 6] = core::array::from_fn(|p| direct[p].unwrap_or(&v[p][..m]));
        for ((d, a), b) in y12[..m].iter_mut().zip(v[2]).zip(v[3]) {
            *d = a ^ b;
        }
        Parts { v, y12: &y12[..m] }
    }
}

impl Parts<'_> {
    /// `lp(x_self, y_other)`.
    fn lp(&self, other: &Parts<'_>, m: usize, out: &mut [u8; STEP]) {
        let [x1, x2, ..] = &self.v;
        lp8(
            &mut out[..m],
            &x1[..m],
            &x2[..m],
            &other.v[2][..m],
            &other.y12[..m],
        );
    }
}

/// [`crate::verify::TripleSource::pair_sums`] for byte rows: the sums of the lower and
/// of the upper block with the per-position factors, then each times its scale.
pub(crate) fn pair_sums(
    r: &dyn ByteRows,
    lo: usize,
    hi: Option<usize>,
    c: [Coeffs<'_, Gf2p64>; 2],
) -> Option<[Gf2p64; 4]> {
    let k = c[0].len();
    if !in_range(r, lo, k) || hi.is_some_and(|h| c[1].len() != k || !in_range(r, h, k)) {
        return None;
    }
    let [al, ah] = with_work(|w| pair_sums_in(w, r, lo, hi, [c[0].base, c[1].base]));
    Some(core::array::from_fn(|i| {
        c[0].scale * al[i] + c[1].scale * ah[i]
    }))
}

/// The sums of [`pair_sums`] with coefficients `c`: the lower block's terms (`c[0]`) and
/// the upper block's (`c[1]`) apart.
fn pair_sums_in(
    w: &mut Work,
    r: &dyn ByteRows,
    lo: usize,
    hi: Option<usize>,
    c: [&[Gf2p64]; 2],
) -> [[Gf2p64; 4]; 2] {
    let k = c[0].len();
    let Work { bl, bh, p, .. } = w;
    let mut acc = [[Gf2p64::ZERO; 4]; 2];
    let bit_sums = has_bit_sums();
    let mut at = 0;
    while at < k {
        let m = STEP.min(k - at);
        let cl = &c[0][at..at + m];
        let bl = bl.load(r, lo + at, m, 6);
        if bit_sums {
            let ch = hi.map(|_| &c[1][at..at + m]);
            let bh = hi.map(|h| bh.load(r, h + at, m, 6));
            bit_sum_step(&mut acc, [cl, ch.unwrap_or(&[])], &bl, bh.as_ref(), p);
            at += m;
            continue;
        }
        let [al, ah] = &mut acc;
        for (z, part) in al.iter_mut().zip([4, 5]) {
            *z += E8_TABLES.inner_product(cl, &bl.v[part][..m]);
        }
        let [p_ll, p_lh] = &mut *p;
        bl.lp(&bl, m, p_ll);
        match hi {
            None => al[3] += E_A.inner_product(cl, &p_ll[..m]),
            Some(h) => {
                let ch = &c[1][at..at + m];
                let bh = bh.load(r, h + at, m, 6);
                bl.lp(&bh, m, p_lh);
                al[3] += E_A.inner_product_pair(&E_C, cl, &p_ll[..m], &p_lh[..m]);
                for (z, part) in ah.iter_mut().zip([4, 5]) {
                    *z += E8_TABLES.inner_product(ch, &bh.v[part][..m]);
                }
                let [p_hh, p_hl] = &mut *p;
                bh.lp(&bh, m, p_hh);
                bh.lp(&bl, m, p_hl);
                let h1 = E8_TABLES.inner_product(ch, &p_hh[..m]);
                ah[2] += h1;
                ah[3] += U2 * h1 + E_C.inner_product(ch, &p_hl[..m]);
            }
        }
        at += m;
    }
    acc
}

/// One step of [`pair_sums_in`] with [`ByteEmbedding::inner_products`] (bit sums): every
/// sum of a half's coefficients in one pass over its bytes, both halves' products first.
fn bit_sum_step(
    acc: &mut [[Gf2p64; 4]; 2],
    c: [&[Gf2p64]; 2],
    bl: &Parts<'_>,
    bh: Option<&Parts<'_>>,
    p: &mut [[u8; STEP]; 2],
) {
    let m = bl.y12.len();
    let [al, ah] = acc;
    let [p_ll, p_lh] = p;
    bl.lp(bl, m, p_ll);
    let Some(bh) = bh else {
        let [z1, z2, h] = ByteEmbedding::inner_products(
            c[0],
            [
                (&E8_TABLES, &bl.v[4][..m]),
                (&E8_TABLES, &bl.v[5][..m]),
                (&E_A, &p_ll[..m]),
            ],
        );
        al[0] += z1;
        al[1] += z2;
        al[3] += h;
        return;
    };
    bl.lp(bh, m, p_lh);
    let [z1, z2, a, b] = ByteEmbedding::inner_products(
        c[0],
        [
            (&E8_TABLES, &bl.v[4][..m]),
            (&E8_TABLES, &bl.v[5][..m]),
            (&E_A, &p_ll[..m]),
            (&E_C, &p_lh[..m]),
        ],
    );
    al[0] += z1;
    al[1] += z2;
    al[3] += a + b;
    let [p_hh, p_hl] = p;
    bh.lp(bh, m, p_hh);
    bh.lp(bl, m, p_hl);
    let [z1, z2, h1, e] = ByteEmbedding::inner_products(
        c[1],
        [
            (&E8_TABLES, &bh.v[4][..m]),
            (&E8_TABLES, &bh.v[5][..m]),
            (&E8_TABLES, &p_hh[..m]),
            (&E_C, &p_hl[..m]),
        ],
    );
    ah[0] += z1;
    ah[1] += z2;
    ah[2] += h1;
    ah[3] += U2 * h1 + e;
}

thread_local! {
    /// `(1+s) E` and `s E` for the last fold coin `s` of this thread.
    static FOLD_TABLES: RefCell<Option<(Gf2p64, [ByteEmbedding; 2])>> =
        const { RefCell::new(None) };
}

fn fold_tables(s: Gf2p64) -> [ByteEmbedding; 2] {
    FOLD_TABLES.with_borrow_mut(|t| match t {
        Some((c, tables)) if *c == s => *tables,
        _ => {
            let tables = [E8_TABLES.scaled(Gf2p64::ONE + s), E8_TABLES.scaled(s)];
            *t = Some((s, tables));
            tables
        }
    })
}

/// A scaled pair of tables and what it was built for: `[s, a, b]`.
type ScaledTables = ([Gf2p64; 3], [ByteEmbedding; 2]);

thread_local! {
    /// `(1+s) a E` and `s b E` for the last two `[s, a, b]` of this thread, newest first
    /// (pass B alternates between two pairs of blocks, each with its own row factors).
    static SCALED_TABLES: RefCell<[Option<ScaledTables>; 2]> = const { RefCell::new([None, None]) };
}

/// The maps of the scaled `x` of pass B: `(1+s) a E` and `s b E` for the scales `[a, b]`.
fn x_tables(s: Gf2p64, scale: [Gf2p64; 2]) -> [ByteEmbedding; 2] {
    let [t1, ts] = fold_tables(s);
    if scale == [Gf2p64::ONE; 2] {
        return [t1, ts];
    }
    let key = [s, scale[0], scale[1]];
    SCALED_TABLES.with_borrow_mut(|cache| {
        if let Some(i) = cache.iter().position(|e| e.is_some_and(|(k, _)| k == key)) {
            cache.swap(0, i);
        }
        match cache[0] {
            Some((k, t)) if k == key => t,
            _ => {
                let t = [t1.scaled_by(scale[0]), ts.scaled_by(scale[1])];
                cache[1] = cache[0].replace((key, t));
                t
            }
        }
    })
}

/// `out[i] = (1 + s) E(a[i]) + s E(b[i])` (`b` zero if `None`).
pub(crate) fn lerp_bytes(a: &[u8], b: Option<&[u8]>, s: Gf2p64, out: &mut [Gf2p64]) {
    let [t1, ts] = fold_tables(s);
    match b {
        Some(b) => t1.apply_pair_slice(&ts, a, b, out),
        None => t1.apply_slice(a, out),
    }
}

/// [`crate::verify::TripleSource::fold_pairs`] for byte rows.
pub(crate) fn fold_pairs(
    r: &dyn ByteRows,
    lo: usize,
    hi: Option<usize>,
    c: [Coeffs<'_, Gf2p64>; 2],
    s: Gf2p64,
    out: [&mut [Gf2p64]; 4],
) -> bool {
    let k = out[0].len();
    if c[0].len() != k
        || out.iter().any(|o| o.len() != k)
        || !in_range(r, lo, k)
        || hi.is_some_and(|h| c[1].len() != k || !in_range(r, h, k))
    {
        return false;
    }
    with_work(|w| fold_pairs_in(w, r, lo, hi, c, s, out));
    true
}

/// With `c = [a ⊙ b_lo, a' ⊙ b_hi]`: `x' = b_lo ((1+s) a E)(x_lo) + b_hi (s a' E)(x_hi)`,
/// by tables scaled once per block; when both blocks share their per-position factors
/// (product coefficients of the same columns, `b_lo` and `b_hi` the same slice) the
/// 512-bit GFNI kernel forms `b ((1+s) a E(x_lo) + s a' E(x_hi))`, one product per entry
/// ([`ByteEmbedding::mul_pair_slice`]).
fn fold_pairs_in(
    w: &mut Work,
    r: &dyn ByteRows,
    lo: usize,
    hi: Option<usize>,
    c: [Coeffs<'_, Gf2p64>; 2],
    s: Gf2p64,
    out: [&mut [Gf2p64]; 4],
) {
    let k = out[0].len();
    let [t1, ts] = fold_tables(s);
    let [x1, xs] = x_tables(s, [c[0].scale, c[1].scale]);
    let Work { bl, bh, e, .. } = w;
    let [o1, o2, o3, o4] = out;
    let mut at = 0;
    while at < k {
        let m = STEP.min(k - at);
        let (cl, e) = (&c[0].base[at..at + m], &mut e[..m]);
        let bl = bl.load(r, lo + at, m, 4);
        let ox = [&mut o1[at..at + m], &mut o2[at..at + m]];
        let oy = [&mut o3[at..at + m], &mut o4[at..at + m]];
        match hi {
            None => {
                for (o, part) in ox.into_iter().zip([0, 1]) {
                    x1.apply_slice(&bl.v[part][..m], e);
                    Gf2p64::mul_slice(o, cl, e);
                }
                for (o, part) in oy.into_iter().zip([2, 3]) {
                    t1.apply_slice(&bl.v[part][..m], o);
                }
            }
            Some(h) => {
                let ch = &c[1].base[at..at + m];
                let bh = bh.load(r, h + at, m, 4);
                for (o, part) in ox.into_iter().zip([0, 1]) {
                    let (a, b) = (&bl.v[part][..m], &bh.v[part][..m]);
                    x1.mul_pair_slice(&xs, (a, cl), (b, ch), o);
                }
                for (o, part) in oy.into_iter().zip([2, 3]) {
                    t1.apply_pair_slice(&ts, &bl.v[part][..m], &bh.v[part][..m], o);
                }
            }
        }
        at += m;
    }
}
