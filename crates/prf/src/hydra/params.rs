//! The Hydra instance: round numbers, matrices and round constants, derived from the prime as
//! the designers' reference implementation specifies (see the module documentation of
//! [`crate::hydra`] for the sources).

use sha3::digest::{ExtendableOutput, Update, XofReader};
use sha3::{Shake128, Shake128Reader};
use triskele_engine::EngineError;
use triskele_field::PrimeField;

use super::poly::Square;

/// External rounds at the start of the body (`R_E1`).
pub const BODY_EXTERNAL_FIRST: usize = 2;
/// External rounds at the end of the body (`R_E2`).
pub const BODY_EXTERNAL_LAST: usize = 4;
/// Internal rounds of the body (`R_I`) for 128-bit security and `d = 3`.
pub const BODY_INTERNAL: usize = 42;
/// Rounds of each head (`R_H`) for 128-bit security.
pub const HEAD_ROUNDS: usize = 39;
/// Words produced per head call.
pub const WORDS_PER_HEAD: usize = 8;
/// Body rounds in total (`R_E1 + R_I + R_E2`), one 4-word round constant each.
pub const BODY_ROUNDS: usize = BODY_EXTERNAL_FIRST + BODY_INTERNAL + BODY_EXTERNAL_LAST;

/// A linear layer `x -> M x` stored as "all ones plus a few deviations": row `i` of `M` is
/// `(1, ..., 1) + sum_{(j, d) in dev[i]} d e_j`. Hydra's matrices have this shape (at most two
/// entries per row differ from 1), so `M x = s 1 + (corrections)` with `s = sum x_j`, at
/// `n + 2n` multiplications-free additions and about `2n` scalar products instead of `n^2`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Matrix<F> {
    n: usize,
    rows: Vec<F>,
    dev: Vec<Vec<(usize, F)>>,
}

impl<F: PrimeField> Matrix<F> {
    /// From the entries, row-major (`rows.len()` must be `n * n`).
    fn from_rows(n: usize, rows: Vec<F>) -> Self {
        let dev = (0..n)
            .map(|i| {
                (0..n)
                    .filter_map(|j| {
                        let d = rows[i * n + j] - F::ONE;
                        (!d.is_zero()).then_some((j, d))
                    })
                    .collect()
            })
            .collect();
        Matrix { n, rows, dev }
    }

    /// The dimension.
    pub fn dim(&self) -> usize {
        self.n
    }

    /// The entry in row `i`, column `j` (`None` outside the matrix).
    pub fn entry(&self, i: usize, j: usize) -> Option<F> {
        if i < self.n && j < self.n {
            self.rows.get(i * self.n + j).copied()
        } else {
            None
        }
    }

    /// The rows, each as a vector.
    pub fn rows(&self) -> Vec<Vec<F>> {
        self.rows.chunks(self.n).map(<[F]>::to_vec).collect()
    }

    /// `M x` for one vector (`x.len()` must be the dimension; a shorter `x` is treated as
    /// zero-padded, a longer one is cut).
    pub fn apply(&self, x: &[F]) -> Vec<F> {
        let s = x.iter().take(self.n).fold(F::ZERO, |a, b| a + *b);
        self.dev
            .iter()
            .map(|row| {
                row.iter().fold(s, |acc, (j, d)| {
                    acc + *d * x.get(*j).copied().unwrap_or(F::ZERO)
                })
            })
            .collect()
    }

    /// `M` applied lane-wise: `words[j][l]` is word `j` of lane `l`; returns the words of
    /// `M x` per lane. All words must have the same length.
    pub(crate) fn apply_lanes(&self, words: &[&[F]]) -> Vec<Vec<F>> {
        let lanes = words.first().map_or(0, |w| w.len());
        let mut sum = vec![F::ZERO; lanes];
        for w in words.iter().take(self.n) {
            F::add_assign_slice(&mut sum, w);
        }
        self.dev
            .iter()
            .map(|row| {
                let mut out = sum.clone();
                for (j, d) in row {
                    if let Some(w) = words.get(*j) {
                        for (o, v) in out.iter_mut().zip(w.iter()) {
                            *o += *d * *v;
                        }
                    }
                }
                out
            })
            .collect()
    }

    fn square(&self) -> Square<F> {
        Square {
            n: self.n,
            a: self.rows.clone(),
        }
    }
}

/// The SHAKE128 stream of the reference implementation: absorb `"Hydra"`, a tag
/// (`"Matrices"`, `"Constants"` or `"Rolling"`) and `p` as `ceil(bits(p)/64)` 64-bit
/// little-endian limbs; squeeze `ceil(bits(p)/8)` bytes per candidate, read them as a
/// little-endian integer and reject candidates `>= p`.
pub(crate) struct ConstantStream<F> {
    reader: Shake128Reader,
    _field: core::marker::PhantomData<F>,
}

impl<F> core::fmt::Debug for ConstantStream<F> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str("ConstantStream(SHAKE128)")
    }
}

impl<F: PrimeField> ConstantStream<F> {
    pub(crate) fn new(tag: &str) -> Self {
        let p = F::modulus();
        let bits = 128 - p.leading_zeros() as usize;
        let mut h = Shake128::default();
        h.update(b"Hydra");
        h.update(tag.as_bytes());
        for limb in 0..bits.div_ceil(64) {
            h.update(&((p >> (64 * limb)) as u64).to_le_bytes());
        }
        ConstantStream {
            reader: h.finalize_xof(),
            _field: core::marker::PhantomData,
        }
    }

    /// The next element (zero allowed).
    pub(crate) fn element(&mut self) -> F {
        let p = F::modulus();
        let bytes = (128 - p.leading_zeros() as usize).div_ceil(8);
        loop {
            let mut buf = [0u8; 16];
            if let Some(b) = buf.get_mut(..bytes) {
                self.reader.read(b);
            }
            let v = u128::from_le_bytes(buf);
            if v < p {
                return F::from_u128_reduced(v);
            }
        }
    }

    /// The next non-zero element.
    pub(crate) fn nonzero(&mut self) -> F {
        loop {
            let x = self.element();
            if !x.is_zero() {
                return x;
            }
        }
    }

    /// The next `N` elements.
    pub(crate) fn vector<const N: usize>(&mut self) -> [F; N] {
        core::array::from_fn(|_| self.element())
    }
}

/// A matrix candidate of the reference shape: all ones except `M[0][0]`, and `M[i][0]`,
/// `M[i][i]` for `i >= 1`, drawn non-zero in that order.
fn candidate<F: PrimeField>(s: &mut ConstantStream<F>, n: usize) -> Matrix<F> {
    let mut rows = vec![F::ONE; n * n];
    rows[0] = s.nonzero();
    for i in 1..n {
        rows[i * n] = s.nonzero();
        rows[i * n + i] = s.nonzero();
    }
    Matrix::from_rows(n, rows)
}

/// The reference's acceptance test for a matrix `M` of dimension `n` against one vector of
/// signs `lambda`:
///
/// * `M` is invertible and, for `i = 1, ..., 2n - 1`, the minimal polynomial of `M^i` has
///   degree `n` and is irreducible. Equivalently: the characteristic polynomial of every such
///   `M^i` is irreducible (an irreducible characteristic polynomial is the minimal one, and a
///   minimal polynomial of degree `n` is the characteristic one); it also implies
///   invertibility (no factor `x`), which is checked anyway;
/// * `sum_j lambda_j (sum_l M[j][l]) != 0`;
/// * `sum_l lambda_l M[l][j] != 0` for every column `j`.
fn acceptable<F: PrimeField>(m: &Matrix<F>, lambda: &[F]) -> bool {
    let n = m.n;
    let base = m.square();
    let mut power = base.clone();
    for i in 1..2 * n {
        let cp = power.charpoly();
        if i == 1 && cp.0.first().is_none_or(|c| c.is_zero()) {
            return false; // singular
        }
        if cp.degree() != Some(n) || !cp.is_irreducible() {
            return false;
        }
        power = base.mul(&power);
    }
    let weighted_rows = (0..n).fold(F::ZERO, |acc, j| {
        let row = (0..n).fold(F::ZERO, |r, l| r + base.get(j, l));
        acc + lambda[j] * row
    });
    if weighted_rows.is_zero() {
        return false;
    }
    (0..n).all(|j| {
        let col = (0..n).fold(F::ZERO, |c, l| c + lambda[l] * base.get(l, j));
        !col.is_zero()
    })
}

/// A signed unit vector of `F` from `+1` / `-1` signs.
fn signs<F: PrimeField>(s: &[i8]) -> Vec<F> {
    s.iter()
        .map(|&v| if v < 0 { -F::ONE } else { F::ONE })
        .collect()
}

/// One Hydra instance over `F`: the matrices and the body and head round constants (the
/// rolling constants, one 8-word vector per head after the first, are drawn on demand from
/// their own stream by [`Hydra::rolling_constants`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Hydra<F> {
    pub(crate) me: Matrix<F>,
    pub(crate) mi: Matrix<F>,
    pub(crate) mh: Matrix<F>,
    pub(crate) rc_body: Vec<[F; 4]>,
    pub(crate) rc_head: Vec<[F; 8]>,
}

impl<F: PrimeField> Hydra<F> {
    /// Derives the instance for the prime of `F`. Supported: `p = 2 (mod 3)` (so the S-box of
    /// the external rounds is `x^3`, `d = 3`, as the round numbers assume) and `p > 2^64`
    /// (smaller fields are outside the design's security argument, and the reference's search
    /// for matrices is only sure to end quickly in large fields).
    pub fn new() -> Result<Self, EngineError> {
        let p = F::modulus();
        if p % 3 != 2 {
            return Err(EngineError::Unsupported(format!(
                "Hydra with x^3 needs p = 2 mod 3; p = {p} is {} mod 3",
                p % 3
            )));
        }
        if p >> 64 == 0 {
            return Err(EngineError::Unsupported(format!(
                "Hydra needs p > 2^64; p = {p}"
            )));
        }
        Ok(Self::derive())
    }

    /// The derivation without the checks of [`Hydra::new`].
    pub(crate) fn derive() -> Self {
        let mut s = ConstantStream::<F>::new("Matrices");
        let l1 = signs::<F>(&[1, -1, 1, -1]);
        let l2 = signs::<F>(&[1, 1, -1, -1]);
        let mi = loop {
            let m = candidate(&mut s, 4);
            if acceptable(&m, &l1) && acceptable(&m, &l2) {
                break m;
            }
        };
        let lh = signs::<F>(&[1, 1, 1, 1, -1, -1, -1, -1]);
        let mh = loop {
            let m = candidate(&mut s, 8);
            if acceptable(&m, &lh) {
                break m;
            }
        };
        let mut c = ConstantStream::<F>::new("Constants");
        let rc_body = (0..BODY_ROUNDS).map(|_| c.vector::<4>()).collect();
        let rc_head = (0..HEAD_ROUNDS).map(|_| c.vector::<8>()).collect();
        Hydra {
            me: Self::external_matrix(),
            mi,
            mh,
            rc_body,
            rc_head,
        }
    }

    /// The body's external matrix: the circulant matrix with first row `(3, 2, 1, 1)`
    /// (row `i` is the first row rotated right by `i`).
    fn external_matrix() -> Matrix<F> {
        let first = [3u64, 2, 1, 1];
        let rows = (0..4)
            .flat_map(|i| {
                (0..4).map(move |j| F::from_u128_reduced(u128::from(first[(j + 4 - i) % 4])))
            })
            .collect();
        Matrix::from_rows(4, rows)
    }

    /// The body's external matrix `M_E = circ(3, 2, 1, 1)`.
    pub fn external(&self) -> &Matrix<F> {
        &self.me
    }

    /// The body's internal matrix `M_I` (also used, on each half, by the rolling function).
    pub fn internal(&self) -> &Matrix<F> {
        &self.mi
    }

    /// The heads' matrix `M_H`.
    pub fn head(&self) -> &Matrix<F> {
        &self.mh
    }

    /// The body's round constants, one 4-word vector per round in order.
    pub fn body_constants(&self) -> &[[F; 4]] {
        &self.rc_body
    }

    /// The heads' round constants, one 8-word vector per round in order.
    pub fn head_constants(&self) -> &[[F; 8]] {
        &self.rc_head
    }

    /// The first `count` rolling constants (the one applied before head `j` is number
    /// `j - 1`); each call starts the stream afresh.
    pub fn rolling_constants(count: usize) -> Vec<[F; 8]> {
        let mut r = ConstantStream::<F>::new("Rolling");
        (0..count).map(|_| r.vector::<8>()).collect()
    }
}

/// Number of head calls for `words` keystream words.
pub fn heads_for(words: usize) -> usize {
    words.div_ceil(WORDS_PER_HEAD)
}

/// What an MPC evaluation costs per instance ([`crate::hydra::keystream_mpc`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Cost {
    /// Secure multiplications (each one `F_p` element sent by every party).
    pub multiplications: usize,
    /// Communication rounds (calls of `Party::mul`), independent of the number of instances.
    pub rounds: usize,
}

impl Cost {
    /// The cost of `words` keystream words (nothing for `words = 0`): the body (each external round
    /// cubes 4 words, 2 products and 2 rounds each; each internal round squares twice, 2
    /// products and 2 rounds), 2 products and 1 round per rolling step, 1 product and 1 round
    /// per head round, the heads running side by side. For 8 words: 132 + 39 = 171 products in
    /// 96 + 39 = 135 rounds; each further 8 words add 41 products and one round.
    pub fn of(words: usize) -> Cost {
        let heads = heads_for(words);
        if heads == 0 {
            return Cost {
                multiplications: 0,
                rounds: 0,
            };
        }
        let external = BODY_EXTERNAL_FIRST + BODY_EXTERNAL_LAST;
        let body_products = external * 4 * 2 + BODY_INTERNAL * 2;
        let body_rounds = external * 2 + BODY_INTERNAL * 2;
        let rolls = heads.saturating_sub(1);
        Cost {
            multiplications: body_products + 2 * rolls + heads * HEAD_ROUNDS,
            rounds: body_rounds + rolls + HEAD_ROUNDS,
        }
    }
}
