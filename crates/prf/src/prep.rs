//! Preprocessing over `F_p` (PRF.md): random squares, random bits from squares, cube tuples
//! and Legendre masks, each batched so that rounds are per batch, not per item.
//!
//! | material | elements sent per item and party | rounds per batch |
//! | --- | --- | --- |
//! | random square `([s], [s^2])` | 1 | 1 |
//! | random bit | 2 | 2 |
//! | cube tuple `([a], [a^2], [a^3])` | 2 | 2 |
//! | Legendre mask `([t], [b])` | 4 | 3 |
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

/// `n` Legendre masks (PRF.md, Legendre step 1): a random square `[w^2]` and a random bit
/// `[b]`, then `[t] = [w^2] * (alpha + (1 - alpha) [b])` for the smallest non-residue
/// `alpha`, so `t = w^2` (a square) when `b = 1` and `alpha w^2` (a non-square) when `b = 0`.
/// Three rounds: both squarings together, the opening for the bits, the final product.
/// `t = 0` (probability `1/p`, when `w = 0`) is not excluded: it makes that output bit 1.
pub fn legendre_masks<F: PrfField, M: SecurityModel>(
    party: &mut Party<M>,
    n: usize,
) -> Result<LegendreMasks<F>, EngineError> {
    party.model().reserve_products::<F>(3 * n);
    // [w || s] squared in one multiplication.
    let ws = party.random_rss::<F>(2 * n);
    let ws2 = party.mul(&ws, &ws)?;
    let split = |v: &RssVec<F>, r: core::ops::Range<usize>| {
        v.slice(r).ok_or(EngineError::LengthMismatch {
            expected: 2 * n,
            got: v.len(),
        })
    };
    let w2 = split(&ws2, 0..n)?;
    let squares = Squares {
        s: split(&ws, n..2 * n)?,
        s2: split(&ws2, n..2 * n)?,
    };
    let b = bits_from_squares(party, squares)?;
    let alpha = smallest_non_residue::<F>();
    let mut factor = b.clone();
    scale_scalar(&mut factor, F::ONE - alpha);
    factor.add_constant_scalar(party.id(), alpha);
    let t = party.mul(&w2, &factor)?;
    Ok(LegendreMasks { t, b })
}
