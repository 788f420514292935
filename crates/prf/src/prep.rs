//! Preprocessing over `F_p` (PRF.md): random squares, random bits from squares, cube tuples
//! and Legendre masks, each batched so that rounds are per batch, not per item.
//!
//! | material | elements sent per item and party | rounds per batch |
//! | --- | --- | --- |
//! | random square `([s], [s^2])` | 1 | 1 |
//! | random bit | 2 | 2 |
//! | cube tuple `([a], [a^2], [a^3])` | 2 | 2 |
//! | Legendre mask `([t], [b])` (bit from three pair bits) | 4 | 3 |
//!
//! In the malicious model every multiplication is recorded by the engine and every opening is
//! hashed into the views, so the finalize checks cover all of this material.

use rayon::prelude::*;
use triskele_engine::{EngineError, Party, SecurityModel};
use triskele_field::PrimeField;
use triskele_share::RssVec;

use crate::clear::smallest_non_residue;
use crate::ops::{batch_inverse, scale, scale_scalar, PrfField};

/// Below this many elements the public square roots are taken on one thread.
const PAR_MIN: usize = 4096;

/// Random squares `([s], [s^2])`.
#[derive(Debug, Clone, Default)]
pub struct Squares<F> {
    pub s: RssVec<F>,
    pub s2: RssVec<F>,
}

/// `n` random squares: one multiplication each, one round.
pub fn random_squares<F: PrfField, M: SecurityModel>(
    party: &mut Party<M>,
    n: usize,
) -> Result<Squares<F>, EngineError> {
    let s = party.random_rss::<F>(n);
    let s2 = party.mul(&s, &s)?;
    Ok(Squares { s, s2 })
}

/// `n` uniformly random shared bits (as field elements 0 and 1), two rounds.
///
/// From a random `[s]`: open `c = s^2`, take the fixed square root `r` of `c` that
/// [`PrimeField::sqrt`] returns (the same at every party), and set
/// `[b] = ([s] / r + 1) / 2`: `s / r = ±1`, each sign with probability 1/2 whatever `c`.
/// Values with `c = 0` (probability `1/p` each) are redrawn in extra rounds.
pub fn random_bits<F: PrfField, M: SecurityModel>(
    party: &mut Party<M>,
    n: usize,
) -> Result<RssVec<F>, EngineError> {
    let s = party.random_rss::<F>(n);
    let s2 = party.mul(&s, &s)?;
    bits_from_squares(party, Squares { s, s2 })
}

/// Finishes [`random_bits`] from already computed squares (so that callers can batch the
/// squaring with other multiplications).
pub fn bits_from_squares<F: PrfField, M: SecurityModel>(
    party: &mut Party<M>,
    sq: Squares<F>,
) -> Result<RssVec<F>, EngineError> {
    let Squares { mut s, s2 } = sq;
    let mut c = party.open(&s2)?;
    // Redraw the (rare) zeros until none is left.
    loop {
        let zeros: Vec<usize> = (0..c.len()).filter(|&i| c[i].is_zero()).collect();
        if zeros.is_empty() {
            break;
        }
        let fresh = party.random_rss::<F>(zeros.len());
        let fresh2 = party.mul(&fresh, &fresh)?;
        let fresh_c = party.open(&fresh2)?;
        for (j, &i) in zeros.iter().enumerate() {
            s.first[i] = fresh.first[j];
            s.second[i] = fresh.second[j];
            c[i] = fresh_c[j];
        }
    }
    // 1 / r = r / c for the fixed root r of c.
    let roots = public_roots(&c)?;
    let c_inv = batch_inverse(&c);
    let inv_roots: Vec<F> = roots.iter().zip(&c_inv).map(|(r, ci)| *r * *ci).collect();
    scale(&mut s, &inv_roots);
    s.add_constant_scalar(party.id(), F::ONE);
    scale_scalar(&mut s, half::<F>());
    Ok(s)
}

/// Square roots of public squares (in parallel for large batches).
fn public_roots<F: PrimeField>(c: &[F]) -> Result<Vec<F>, EngineError> {
    let root = |x: &F| {
        x.sqrt().ok_or_else(|| {
            EngineError::Unsupported("an opened square has no square root (is p prime?)".into())
        })
    };
    if c.len() >= PAR_MIN {
        c.par_iter().map(root).collect()
    } else {
        c.iter().map(root).collect()
    }
}

/// `1/2` in `F` (`p` odd).
pub fn half<F: PrimeField>() -> F {
    F::from_u128_reduced(F::modulus() / 2 + 1)
}

/// Cube tuples `([a], [a^2], [a^3])`.
#[derive(Debug, Clone, Default)]
pub struct CubeTuples<F> {
    pub a: RssVec<F>,
    pub a2: RssVec<F>,
    pub a3: RssVec<F>,
}

impl<F: PrimeField> CubeTuples<F> {
    pub fn len(&self) -> usize {
        self.a.len()
    }
    pub fn is_empty(&self) -> bool {
        self.a.is_empty()
    }
}

/// `n` cube tuples: a square then a multiplication, two rounds, two elements each.
pub fn cube_tuples<F: PrfField, M: SecurityModel>(
    party: &mut Party<M>,
    n: usize,
) -> Result<CubeTuples<F>, EngineError> {
    party.model().reserve_products::<F>(2 * n);
    let a = party.random_rss::<F>(n);
    let a2 = party.mul(&a, &a)?;
    let a3 = party.mul(&a2, &a)?;
    Ok(CubeTuples { a, a2, a3 })
}

/// Legendre masks: `[t]` and a bit `[b]` with `Legendre(t) = 2b - 1`.
#[derive(Debug, Clone, Default)]
pub struct LegendreMasks<F> {
    pub t: RssVec<F>,
    pub b: RssVec<F>,
}

impl<F: PrimeField> LegendreMasks<F> {
    pub fn len(&self) -> usize {
        self.t.len()
    }
    pub fn is_empty(&self) -> bool {
        self.t.is_empty()
    }
}

/// The three "pair bits" of a batch: sharings `B_1, B_2, B_3` of random bits where `B_j` has
/// only the component `x_j` (held by `P_{j-1}` and `P_j`) non-zero, drawn from the PRG stream
/// those two parties share (one byte per bit, its low bit). No communication; each bit is
/// known to two parties and unknown to the third.
fn pair_bits<F: PrfField, M: SecurityModel>(party: &mut Party<M>, n: usize) -> [RssVec<F>; 3] {
    let i = party.id().index();
    let mut bytes = vec![0u8; n];
    let as_bits = |b: &[u8]| -> Vec<F> {
        b.iter()
            .map(|v| if v & 1 == 1 { F::ONE } else { F::ZERO })
            .collect()
    };
    party.prss().prev.fill_stream(&mut bytes);
    let first = as_bits(&bytes);
    party.prss().next.fill_stream(&mut bytes);
    let second = as_bits(&bytes);
    let mut out: [RssVec<F>; 3] = [RssVec::zeros(n), RssVec::zeros(n), RssVec::zeros(n)];
    // This party P_i holds (x_i, x_{i+1}): x_i of B_i (from the stream shared with P_{i-1})
    // and x_{i+1} of B_{i+1} (shared with P_{i+1}).
    out[i].first = first;
    out[(i + 1) % 3].second = second;
    out
}

/// `[a] + [b] - 2 [a][b]` from the product `ab`.
fn xor_from_product<F: PrfField>(a: &RssVec<F>, b: &RssVec<F>, ab: &RssVec<F>) -> RssVec<F> {
    let minus_two = -(F::ONE + F::ONE);
    let mut out = a.clone();
    out.add_assign(b);
    let mut t = ab.clone();
    scale_scalar(&mut t, minus_two);
    out.add_assign(&t);
    out
}

/// `n` Legendre masks (PRF.md, Legendre step 1): a random square `[w^2]` and a random bit
/// `[b]`, then `[t] = [w^2] * (alpha + (1 - alpha) [b])` for the smallest non-residue
/// `alpha`, so `t = w^2` (a square) when `b = 1` and `alpha w^2` (a non-square) when `b = 0`.
///
/// The bit is the XOR of the three pair bits (`B_1 ⊕ B_2 ⊕ B_3`, each known to two parties,
/// so the XOR is unknown to every single party), computed with `a ⊕ b = a + b - 2ab`. Against
/// the bits from squares ([`random_bits`], also 2 elements and 2 rounds) this saves a public
/// square root per bit and party, the largest local cost of the preprocessing. Three rounds:
/// `[w || B_1] * [w || B_2]`, then `[B_1 ⊕ B_2] * [B_3]`, then the product for `t`; four
/// elements per mask and party, all sent to the previous party. In the malicious model the
/// three products are recorded and verified. `t = 0` (probability `1/p`, when `w = 0`) is not
/// excluded: it makes that output bit 1.
pub fn legendre_masks<F: PrfField, M: SecurityModel>(
    party: &mut Party<M>,
    n: usize,
) -> Result<LegendreMasks<F>, EngineError> {
    party.model().reserve_products::<F>(4 * n);
    let [b1, b2, mut b3] = pair_bits::<F, M>(party, n);
    let w = party.random_rss::<F>(n);
    let mut left = w.clone();
    left.extend(&b1);
    let mut right = w;
    right.extend(&b2);
    let mut prod = party.mul_covered(&left, &right)?;
    let split = |v: &RssVec<F>, r: core::ops::Range<usize>| {
        v.slice(r).ok_or(EngineError::LengthMismatch {
            expected: 2 * n,
            got: v.len(),
        })
    };
    let w2 = split(&prod, 0..n)?;
    let mut b12 = xor_from_product(&b1, &b2, &split(&prod, n..2 * n)?);
    // The first products are handed to the records once they have been used: where they
    // are verified right away (a segment's worth), without a copy into fresh memory.
    party.record_product_swap(&mut left, &mut right, &mut prod)?;
    let mut b12_3 = party.mul_covered(&b12, &b3)?;
    let b = xor_from_product(&b12, &b3, &b12_3);
    party.record_product_swap(&mut b12, &mut b3, &mut b12_3)?;
    let alpha = smallest_non_residue::<F>();
    let mut factor = b.clone();
    scale_scalar(&mut factor, F::ONE - alpha);
    factor.add_constant_scalar(party.id(), alpha);
    let t = party.mul(&w2, &factor)?;
    Ok(LegendreMasks { t, b })
}
