use sha2::{Digest, Sha256};
use triskele_field::ctr::Aes128Ctr;

use super::{Coeffs, VerifyField};

/// Step-1 coefficients are generated per chunk of this many indices (each chunk from its own
/// AES-CTR key, so chunks are independent and parallel).
pub const COEFF_CHUNK: usize = 1 << 11;

/// Elements per sub-block of the fused kernels: every buffer of a sub-block (lifted triples,
/// coefficients, products) stays in the second-level cache. 4096 rather than 1024 since the
/// k-ary first level (many kernel calls per sub-block, each with a fixed cost): 4-15% off the
/// finalize of the Verify-based variants (docs/PERFORMANCE.md, "Sub-blocks of 4096").
pub(super) const SUB: usize = 4096;

/// `SHA-256(label ‖ seed ‖ suffix)`, first 16 bytes: an AES-128 key drawn from the seed.
fn seed_key(label: &[u8], seed: &[u8; 16], suffix: &[u8]) -> [u8; 16] {
    let digest = Sha256::new()
        .chain_update(label)
        .chain_update(seed)
        .chain_update(suffix)
        .finalize();
    let mut key = [0u8; 16];
    key.copy_from_slice(&digest[..16]);
    key
}

/// The AES-128 key of coefficient chunk `chunk`: `SHA-256(label ‖ seed ‖ chunk)`, first 16
/// bytes.
pub(super) fn chunk_key(seed: &[u8; 16], chunk: usize) -> [u8; 16] {
    let chunk = (chunk as u64).to_le_bytes();
    seed_key(b"triskele verify coefficients", seed, &chunk)
}

/// The AES-128 key of the column factors `b` (product coefficients):
/// `SHA-256(label ‖ seed)`, first 16 bytes.
pub(super) fn column_key(seed: &[u8; 16]) -> [u8; 16] {
    seed_key(b"triskele verify column factors", seed, &[])
}

/// The step-1 coefficients of one run of `Verify`, from its tossed seed. With
/// [`VerifyField::PRODUCT_COEFFICIENTS`] coefficient `k = i · COEFF_CHUNK + j`
/// (`j < COEFF_CHUNK`) is `c_k = a_i b_j`: the row factor `a_i` is the first element of chunk
/// `i`'s AES-128-CTR stream under [`chunk_key`], the column factors `b_0 ..
/// b_{COEFF_CHUNK - 1}` are the stream under [`column_key`], read as field elements by
/// [`Random::fill_random`](triskele_field::Random::fill_random) (the stream of
/// `triskele_share::Prg`, here from the VAES / AES-NI keystream of `triskele_field::ctr`).
/// Otherwise `c_k` is element `j` of chunk `i`'s stream
/// (independent coefficients). Soundness of both: module documentation.
pub(crate) struct Coefficients<V> {
    seed: [u8; 16],
    /// `b` (product coefficients), or empty.
    columns: Vec<V>,
}

impl<V: VerifyField> Coefficients<V> {
    pub(super) fn new(seed: [u8; 16]) -> Self {
        let mut columns = Vec::new();
        if V::PRODUCT_COEFFICIENTS {
            columns = vec![V::ZERO; COEFF_CHUNK];
            V::fill_random(&mut Aes128Ctr::new(&column_key(&seed)), &mut columns);
        }
        Coefficients { seed, columns }
    }

    fn product(&self) -> bool {
        !self.columns.is_empty()
    }

    /// The column factors `b` (product coefficients), or empty.
    pub(super) fn columns(&self) -> &[V] {
        &self.columns
    }

    /// The row factor `a_i`.
    pub(super) fn row(&self, i: usize) -> V {
        let mut a = [V::ZERO];
        V::fill_random(&mut Aes128Ctr::new(&chunk_key(&self.seed, i)), &mut a);
        a[0]
    }

    /// `c_{start..start+out.len()}`.
    pub(super) fn fill(&self, start: usize, out: &mut [V]) {
        CoeffStream::new(self, start).fill(out);
    }
}

/// The coefficients `c_k, c_{k+1}, ...` from a position `k`, drawn in consecutive pieces:
/// chunk `k / COEFF_CHUNK`'s stream (skipping to `k` once), then the following chunks'; or,
/// for product coefficients, the row factor of each chunk times the column factors.
pub(super) struct CoeffStream<'a, V> {
    co: &'a Coefficients<V>,
    /// Index of the next coefficient.
    next: usize,
    /// The stream of chunk `next / COEFF_CHUNK`, positioned at `next` (independent
    /// coefficients).
    prg: Option<Aes128Ctr>,
    /// `(i, a_i)` of the last row drawn (product coefficients).
    row: Option<(usize, V)>,
}

impl<'a, V: VerifyField> CoeffStream<'a, V> {
    pub(super) fn new(co: &'a Coefficients<V>, start: usize) -> Self {
        CoeffStream {
            co,
            next: start,
            prg: None,
            row: None,
        }
    }

    /// The row factor of chunk `i` (product coefficients).
    fn row(&mut self, i: usize) -> V {
        match self.row {
            Some((r, a)) if r == i => a,
            _ => {
                let a = self.co.row(i);
                self.row = Some((i, a));
                a
            }
        }
    }

    /// The next `k` coefficients as `a · b[..k]` if they are product coefficients within one
    /// chunk (and moves past them); `None` (nothing drawn) otherwise.
    fn factored(&mut self, k: usize) -> Option<(V, &'a [V])> {
        let off = self.next % COEFF_CHUNK;
        if !self.co.product() || off + k > COEFF_CHUNK {
            return None;
        }
        let a = self.row(self.next / COEFF_CHUNK);
        let co: &'a Coefficients<V> = self.co;
        self.next += k;
        Some((a, &co.columns[off..off + k]))
    }

    pub(super) fn fill(&mut self, out: &mut [V]) {
        let mut out = out;
        while !out.is_empty() {
            let off = self.next % COEFF_CHUNK;
            let take = out.len().min(COEFF_CHUNK - off);
            let (now, rest) = out.split_at_mut(take);
            if self.co.product() {
                let a = self.row(self.next / COEFF_CHUNK);
                scale_into(now, a, &self.co.columns[off..off + take]);
            } else {
                let seed = &self.co.seed;
                let prg = self.prg.get_or_insert_with(|| {
                    let mut prg = Aes128Ctr::new(&chunk_key(seed, self.next / COEFF_CHUNK));
                    // Starting inside a chunk: draw (and drop) the coefficients before
                    // `next`, element by element as the stream defines them.
                    let mut skip = [V::ZERO; 64];
                    let mut left = off;
                    while left > 0 {
                        let k = left.min(skip.len());
                        V::fill_random(&mut prg, &mut skip[..k]);
                        left -= k;
                    }
                    prg
                });
                V::fill_random(prg, now);
            }
            out = rest;
            self.next += take;
            if self.next.is_multiple_of(COEFF_CHUNK) {
                self.prg = None;
            }
        }
    }
}

/// `out = a b` element-wise (as `0 + (b - 0) a`, the fast in-place line of
/// [`Bulk`](triskele_field::Bulk)).
fn scale_into<V: VerifyField>(out: &mut [V], a: V, b: &[V]) {
    out.fill(V::ZERO);
    V::lerp_assign_slice(out, b, a);
}

/// The coefficients of a block as drawn by [`draw`]: factored (product coefficients within a
/// row, nothing written) or written out.
pub(super) enum Drawn<'a, V> {
    Factored(V, &'a [V], &'a mut [V]),
    Written(&'a mut [V]),
}

impl<'a, V: VerifyField> Drawn<'a, V> {
    pub(super) fn coeffs(&self) -> Coeffs<'_, V> {
        match self {
            Drawn::Factored(a, b, _) => Coeffs { scale: *a, base: b },
            Drawn::Written(c) => Coeffs::plain_slice(c),
        }
    }

    /// The coefficients one by one (formed into the buffer if factored).
    pub(super) fn plain(self) -> &'a mut [V] {
        match self {
            Drawn::Factored(a, b, buf) => {
                scale_into(buf, a, b);
                buf
            }
            Drawn::Written(c) => c,
        }
    }
}

/// The next `buf[i].len()` coefficients of the lower (`i = 0`) and upper streams of a block
/// (the upper one only if `upper`; else left as they are): factored where the stream allows,
/// else written into `buf`.
pub(super) fn draw<'a, 'b, V: VerifyField>(
    streams: [&mut CoeffStream<'a, V>; 2],
    buf: [&'b mut [V]; 2],
    upper: bool,
) -> [Drawn<'b, V>; 2]
where
    'a: 'b,
{
    let one = |s: &mut CoeffStream<'a, V>, b: &'b mut [V]| match s.factored(b.len()) {
        Some((a, col)) => Drawn::Factored(a, col, b),
        None => {
            s.fill(b);
            Drawn::Written(b)
        }
    };
    let ([s_lo, s_hi], [b_lo, b_hi]) = (streams, buf);
    let lower = one(s_lo, b_lo);
    let upper = if upper {
        one(s_hi, b_hi)
    } else {
        Drawn::Written(b_hi)
    };
    [lower, upper]
}
