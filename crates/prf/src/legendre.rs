//! The Legendre PRF in MPC (PRF.md, "Legendre PRF"): `L_k(x) = 1` if `k + x` is a square or
//! zero mod p, else 0.
//!
//! Shared key `[k]`, shared inputs `[x_j]`, shared output bits, with preprocessed Legendre
//! masks `([t_j], [b_j])` ([`crate::prep::legendre_masks`]):
//!
//! 1. online, one round: `v_j = Open([t_j] * ([k] + [x_j]))` (the fused multiply-then-open of
//!    [`crate::ops::mul_open`]; in the malicious model a recorded multiplication and a hashed
//!    opening);
//! 2. local: `[y_j] = [b_j]` if `v_j` is a square, `1 - [b_j]` if not, and the constant 1 if
//!    `v_j = 0`.
//!
//! `v_j` is uniform on `F_p^*` whatever `k + x_j` (when `k + x_j != 0`), so the opening reveals
//! nothing; `v_j = 0` reveals that `k + x_j = 0`, which only a party that knows `k` could
//! provoke. Correctness fails with probability `1/p` per bit (a mask with `t = 0`).
//!
//! Two cheaper modes for special cases:
//! * public output ([`eval_public_output`]): `v_j = Open([w_j^2] ([k] + [x_j]))` and the
//!   output is the symbol of `v_j` itself, no bit needed (one random square per output);
//! * public input ([`KeyedMasks`], [`eval_public_input`]): with `[t_j]` and `[t_j k]`
//!   prepared for a known key, the online phase is one plain opening of
//!   `[t_j] x_j + [t_j k]` (1 element per bit).
//!
//! Security note: against an adversary who sees many outputs, the Legendre PRF over a
//! 128-bit prime offers about 50-64 bits of security (Beullens, Beyne, Udovenko, Vitto,
//! "Cryptanalysis of the Legendre PRF and generalizations", 2020): keep the number of outputs
//! per key well below 2^40 (see the README).

use triskele_engine::{EngineError, Party, SecurityModel};
use triskele_field::PrimeField;
use triskele_share::RssVec;

use crate::ops::{add_shared_scalar, broadcast_scalar, mul_open, Finalize, PrfField};
use crate::prep::{legendre_masks, LegendreMasks, Squares};

/// Preprocessed masks for `n` output bits, consumed in order.
#[derive(Debug, Clone, Default)]
pub struct LegendrePrep<F> {
    masks: LegendreMasks<F>,
    used: usize,
}

impl<F: PrimeField> LegendrePrep<F> {
    /// Masks not yet used.
    pub fn remaining(&self) -> usize {
        self.masks.len() - self.used
    }

    fn take(&mut self, n: usize) -> Result<(RssVec<F>, RssVec<F>), EngineError> {
        EngineError::ensure_preprocessed(n, self.remaining())?;
        let r = self.used..self.used + n;
        let err = || EngineError::LengthMismatch {
            expected: n,
            got: self.remaining(),
        };
        let t = self.masks.t.slice(r.clone()).ok_or_else(err)?;
        let b = self.masks.b.slice(r).ok_or_else(err)?;
        self.used += n;
        Ok((t, b))
    }
}

/// Preprocessing for `n` output bits (3 rounds, 4 elements per bit and party).
pub fn preprocess<F: PrfField, M: SecurityModel>(
    party: &mut Party<M>,
    n: usize,
) -> Result<LegendrePrep<F>, EngineError> {
    // Room for the masks' 4 products per bit and the online product, so that the malicious
    // records are not copied to a larger store when the evaluation records its products.
    party.model().reserve_products::<F>(5 * n);
    Ok(LegendrePrep {
        masks: legendre_masks(party, n)?,
        used: 0,
    })
}

/// Secret-shared output bits `[L_k(x_j)]` (as field elements 0/1) for a shared key `key`
/// (a sharing of length 1) and shared inputs `inputs`: one online round.
pub fn eval<F: PrfField, M: SecurityModel>(
    party: &mut Party<M>,
    prep: &mut LegendrePrep<F>,
    key: &RssVec<F>,
    inputs: &RssVec<F>,
) -> Result<RssVec<F>, EngineError> {
    crate::ops::check_scalar(key)?;
    let n = inputs.len();
    let (t, b) = prep.take(n)?;
    let mut kx = inputs.clone();
    add_shared_scalar(&mut kx, key);
    let v = mul_open(party, &t, &kx)?;
    Ok(bits_from_symbols(party, &v, b))
}

/// `count` consecutive bits `L_k(x), ..., L_k(x + count - 1)` for a shared start `x` (a
/// sharing of length 1), as in the Legendre PRF challenge: the inputs are formed locally.
pub fn eval_consecutive<F: PrfField, M: SecurityModel>(
    party: &mut Party<M>,
    prep: &mut LegendrePrep<F>,
    key: &RssVec<F>,
    start: &RssVec<F>,
    count: usize,
) -> Result<RssVec<F>, EngineError> {
    crate::ops::check_scalar(start)?;
    let mut inputs = broadcast_scalar(start, count);
    let offsets = counter::<F>(count);
    inputs.add_constant(party.id(), &offsets);
    eval(party, prep, key, &inputs)
}

/// `0, 1, ..., n-1` in `F`.
pub fn counter<F: PrimeField>(n: usize) -> Vec<F> {
    let mut acc = F::ZERO;
    (0..n)
        .map(|_| {
            let v = acc;
            acc += F::ONE;
            v
        })
        .collect()
}

/// Public output bits for shared key and inputs, with `n` random squares as masks
/// (preprocessing: [`crate::prep::random_squares`], one round). Online: one
/// multiply-then-open; in the malicious model the finalize checks run before the symbols are
/// returned.
pub fn eval_public_output<F: PrfField, M: SecurityModel>(
    party: &mut Party<M>,
    squares: &Squares<F>,
    key: &RssVec<F>,
    inputs: &RssVec<F>,
) -> Result<Vec<bool>, EngineError>
where
    Party<M>: Finalize,
{
    crate::ops::check_scalar(key)?;
    EngineError::ensure_preprocessed(inputs.len(), squares.s2.len())?;
    let w2 = squares
        .s2
        .slice(0..inputs.len())
        .ok_or(EngineError::LengthMismatch {
            expected: inputs.len(),
            got: squares.s2.len(),
        })?;
    let mut kx = inputs.clone();
    add_shared_scalar(&mut kx, key);
    let v = mul_open(party, &w2, &kx)?;
    // The outputs are the symbols of the opened values: check everything first.
    party.finalize_checks()?;
    Ok(v.iter().map(|x| x.legendre() != -1).collect())
}

/// Masks bound to one key for the public-input mode: `[t_j]`, `[t_j k]`, `[b_j]`.
#[derive(Debug, Clone, Default)]
pub struct KeyedMasks<F> {
    masks: LegendreMasks<F>,
    tk: RssVec<F>,
}

/// Key-dependent preprocessing for `n` public-input evaluations: Legendre masks and one more
/// multiplication `[t_j] [k]` (4 rounds, 5 elements per bit and party).
pub fn preprocess_keyed<F: PrfField, M: SecurityModel>(
    party: &mut Party<M>,
    key: &RssVec<F>,
    n: usize,
) -> Result<KeyedMasks<F>, EngineError> {
    crate::ops::check_scalar(key)?;
    // The masks' 4 products per bit and `[t_j] [k]`, reserved at once (see `preprocess`).
    party.model().reserve_products::<F>(5 * n);
    let masks = legendre_masks(party, n)?;
    let k = broadcast_scalar(key, n);
    let tk = party.mul(&masks.t, &k)?;
    Ok(KeyedMasks { masks, tk })
}

/// Shared output bits for public inputs `x_j`: one plain opening of `[t_j] x_j + [t_j k]`.
pub fn eval_public_input<F: PrfField, M: SecurityModel>(
    party: &mut Party<M>,
    prep: &KeyedMasks<F>,
    inputs: &[F],
) -> Result<RssVec<F>, EngineError> {
    let n = inputs.len();
    EngineError::ensure_preprocessed(n, prep.masks.len())?;
    let take = |v: &RssVec<F>| {
        v.slice(0..n).ok_or(EngineError::LengthMismatch {
            expected: n,
            got: v.len(),
        })
    };
    let mut u = take(&prep.masks.t)?;
    crate::ops::scale(&mut u, inputs);
    u.add_assign(&take(&prep.tk)?);
    let v = party.open(&u)?;
    let b = take(&prep.masks.b)?;
    Ok(bits_from_symbols(party, &v, b))
}

/// `[b]` where `v` is a square, `1 - [b]` where not, the constant 1 where `v = 0`.
fn bits_from_symbols<F: PrimeField, M: SecurityModel>(
    party: &Party<M>,
    v: &[F],
    mut b: RssVec<F>,
) -> RssVec<F> {
    let id = party.id();
    let mut ones = vec![F::ZERO; v.len()];
    let mut signs = vec![F::ONE; v.len()];
    for (j, x) in v.iter().enumerate() {
        match x.legendre() {
            1 => {}
            -1 => {
                signs[j] = -F::ONE;
                ones[j] = F::ONE;
            }
            _ => {
                signs[j] = F::ZERO;
                ones[j] = F::ONE;
            }
        }
    }
    crate::ops::scale(&mut b, &signs);
    b.add_constant(id, &ones);
    b
}
