//! MiMC-p/p in MPC (PRF.md, "MiMC"): `E_k(x) = (F_{r-1} o ... o F_0)(x) + k` with
//! `F_i(y) = (y + k + c_i)^3`, a shared key and shared blocks, all blocks of a batch in the
//! same rounds.
//!
//! | variant | preprocessing per block | online per block and party | online rounds |
//! | --- | --- | --- | --- |
//! | [`Variant::Basic`] | none | `2r` multiplications (`z^2`, then `z^2 z`): `2r` elements | `2r` |
//! | [`Variant::Cube`] | `r` cube tuples (`2r` elements, 2 rounds) | `r` openings of `z - a`: `r` elements | `r` |
//!
//! with `r = 81` for the default prime. The cube variant uses
//! `z^3 = e^3 + 3e^2 [a] + 3e [a^2] + [a^3]` for the opened `e = z - a`, which is uniform
//! because `a` is.
//!
//! Decryption ([`decrypt`]) inverts each round with a cube root, `y -> y^((2p-1)/3)`, which is
//! not a low-degree map; it uses multiplicative masking instead. Per round and block, with
//! preprocessed `[u^3]` and `[u^{-1}]` for a random non-zero `u`: open `c = z u^3`
//! (multiply-then-open), then `[z^{1/3}] = c^{1/3} [u^{-1}]`, since cube roots are unique for
//! `p ≡ 2 mod 3`. `c` is uniform on `F_p^*` unless `z = 0`. Preprocessing per round and block:
//! `u^2` and `u s` together, then `u^3` and the opening of `u s` (`[u^{-1}] = (us)^{-1} [s]`).

use triskele_engine::{EngineError, Party, SecurityModel};
use triskele_share::RssVec;

use crate::clear::{cube_root, MimcParams};
use crate::ops::{
    add_shared_scalar, batch_inverse, mul_open, scale, CubeRecords, Finalize, PrfField,
};
use crate::prep::CubeTuples;

/// The two ways of cubing of PRF.md.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Variant {
    /// Two multiplications per round.
    Basic,
    /// One opening per round with a preprocessed cube tuple.
    Cube,
}

/// A MiMC evaluator: the public parameters and, for the cube variant, preprocessed tuples.
#[derive(Debug, Clone)]
pub struct Mimc<F> {
    params: MimcParams<F>,
    variant: Variant,
    tuples: CubeTuples<F>,
    used: usize,
    /// Whether `tuples` holds chains not yet handed to `records` (malicious model): they are
    /// handed over when they are replaced or at [`Mimc::finalize`], without a copy once all of
    /// them are used.
    unrecorded: bool,
    /// The cube chains (rounds, cube tuples) still to be checked ([`Mimc::finalize`]).
    records: CubeRecords<F>,
}

impl<F: PrfField> Mimc<F> {
    /// The evaluator for `F`'s prime (fails unless `p ≡ 2 mod 3`).
    pub fn new(variant: Variant) -> Result<Self, EngineError> {
        Ok(Self {
            params: MimcParams::new()?,
            variant,
            tuples: CubeTuples::default(),
            used: 0,
            unrecorded: false,
            records: CubeRecords::default(),
        })
    }

    pub fn params(&self) -> &MimcParams<F> {
        &self.params
    }

    pub fn variant(&self) -> Variant {
        self.variant
    }

    /// Preprocessing for `blocks` encryptions: `r` cube tuples per block for the cube variant
    /// (two rounds for the whole batch), nothing for the basic one.
    pub fn preprocess<M: SecurityModel>(
        &mut self,
        party: &mut Party<M>,
        blocks: usize,
    ) -> Result<(), EngineError> {
        if self.variant == Variant::Cube {
            let n = blocks
                .checked_mul(self.params.rounds())
                .ok_or(EngineError::Unsupported("batch too large".into()))?;
            // Tuples of an earlier call are replaced: their chains are kept for the check.
            self.record_tuples::<M>(false);
            // Cube tuples with unrecorded products, checked as cube chains. Committed in the
            // finalize phase: all chains exist at once here, so an early commit would save no
            // memory.
            let a = party.random_rss::<F>(n);
            let a2 = party.mul_covered(&a, &a)?;
            let a3 = party.mul_covered(&a2, &a)?;
            self.tuples = CubeTuples { a, a2, a3 };
            self.used = 0;
            self.unrecorded = M::MALICIOUS;
        }
        Ok(())
    }

    /// Encrypts the shared blocks `x` under the shared key `key` (a sharing of length 1).
    pub fn encrypt<M: SecurityModel>(
        &mut self,
        party: &mut Party<M>,
        key: &RssVec<F>,
        x: &RssVec<F>,
    ) -> Result<RssVec<F>, EngineError> {
        crate::ops::check_scalar(key)?;
        let n = x.len();
        let rounds = self.params.rounds();
        if self.variant == Variant::Cube {
            EngineError::ensure_preprocessed(
                n.saturating_mul(rounds),
                self.tuples.len() - self.used,
            )?;
        }
        if self.variant == Variant::Basic {
            self.records.reserve::<M>(n.saturating_mul(rounds));
        }
        let id = party.id();
        if M::MALICIOUS && self.variant == Variant::Basic {
            return self.encrypt_recorded(party, key, x);
        }
        let mut y = x.clone();
        for i in 0..rounds {
            // z = y + k + c_i
            let mut z = y;
            add_shared_scalar(&mut z, key);
            z.add_constant_scalar(id, self.params.constants[i]);
            y = match self.variant {
                Variant::Basic => {
                    let z2 = party.mul_covered(&z, &z)?;
                    let z3 = party.mul_covered(&z2, &z)?;
                    self.records.push::<M>(&z, &z2, &z3);
                    self.records.commit_if_due(party)?;
                    z3
                }
                Variant::Cube => self.cube_with_tuple(party, &z)?,
            };
        }
        add_shared_scalar(&mut y, key);
        Ok(y)
    }

    /// [`Mimc::encrypt`] of the basic variant in the malicious model: each round's chain
    /// `(z, z^2, z^3)` is computed straight into the records ([`CubeRecords::append_round`]),
    /// and the next round reads its input from there; a copy of the round's output is made
    /// only when the records are handed to a segment check.
    fn encrypt_recorded<M: SecurityModel>(
        &mut self,
        party: &mut Party<M>,
        key: &RssVec<F>,
        x: &RssVec<F>,
    ) -> Result<RssVec<F>, EngineError> {
        let id = party.id();
        let mut input = Some(x.clone());
        let mut last = 0..0;
        for &c in &self.params.constants[..self.params.rounds()] {
            // z = y + k + c: the shift is the sharing `k + c` (one element).
            let mut kc = key.clone();
            kc.add_constant_scalar(id, c);
            let (Some(&s1), Some(&s2)) = (kc.first.first(), kc.second.first()) else {
                return Err(EngineError::LengthMismatch {
                    expected: 1,
                    got: 0,
                });
            };
            let shift = [s1, s2];
            last = self
                .records
                .append_round(party, input.take().as_ref(), shift, last)?;
            if self.records.is_due(party) {
                input = self.records.cubes(last.clone());
                self.records.commit(party)?;
            }
        }
        let mut y = match input {
            Some(y) => y,
            None => self
                .records
                .cubes(last.clone())
                .ok_or(EngineError::LengthMismatch {
                    expected: last.end,
                    got: self.records.len(),
                })?,
        };
        add_shared_scalar(&mut y, key);
        Ok(y)
    }

    /// `[z^3]` from the next `z.len()` cube tuples: open `e = z - a`, then
    /// `e^3 + 3e^2 [a] + 3e [a^2] + [a^3]`.
    fn cube_with_tuple<M: SecurityModel>(
        &mut self,
        party: &mut Party<M>,
        z: &RssVec<F>,
    ) -> Result<RssVec<F>, EngineError> {
        let n = z.len();
        let r = self.used..self.used + n;
        let missing = || EngineError::PreprocessingExhausted {
            needed: n,
            available: 0,
        };
        let a = self.tuples.a.slice(r.clone()).ok_or_else(missing)?;
        let mut a2 = self.tuples.a2.slice(r.clone()).ok_or_else(missing)?;
        let mut out = self.tuples.a3.slice(r).ok_or_else(missing)?;
        self.used += n;
        let mut masked = z.clone();
        crate::ops::sub_assign(&mut masked, &a);
        let e = party.open(&masked)?;
        let three = F::from_u128_reduced(3);
        let three_e: Vec<F> = e.iter().map(|&v| three * v).collect();
        let three_e2: Vec<F> = e.iter().zip(&three_e).map(|(&v, &t)| v * t).collect();
        let e3: Vec<F> = e.iter().map(|&v| v.square() * v).collect();
        let mut a_term = a;
        scale(&mut a_term, &three_e2);
        scale(&mut a2, &three_e);
        out.add_assign(&a_term);
        out.add_assign(&a2);
        out.add_constant(party.id(), &e3);
        Ok(out)
    }

    /// The finalize phase: the cube chains of the rounds (basic variant) or of the cube
    /// tuples (cube variant) are checked as one combined relation each
    /// ([`CubeRecords::commit`], one coin), then the party's finalize checks run (malicious
    /// model: Protocol 2 over everything recorded, compare-view). Call it after the last
    /// encryption and before any output is opened or used; nothing in the semi-honest model.
    pub fn finalize<M: SecurityModel>(&mut self, party: &mut Party<M>) -> Result<(), EngineError>
    where
        Party<M>: Finalize,
    {
        // Tuples left for later encryptions stay usable (their chains are copied).
        self.record_tuples::<M>(self.used < self.tuples.len());
        self.records.commit(party)?;
        party.finalize_checks()
    }

    /// Hands the chains of the preprocessed tuples to the records once (malicious model): a
    /// copy if `keep`, else the tuples themselves (they are unchanged since the preprocessing,
    /// so the check sees what the multiplications produced).
    fn record_tuples<M: SecurityModel>(&mut self, keep: bool) {
        if !self.unrecorded {
            return;
        }
        self.unrecorded = false;
        if keep {
            let t = &self.tuples;
            self.records.push::<M>(&t.a, &t.a2, &t.a3);
        } else {
            let CubeTuples { a, a2, a3 } = core::mem::take(&mut self.tuples);
            self.used = 0;
            self.records.push_owned::<M>(a, a2, a3);
        }
    }

    /// Counter-mode keystream `E_k(nonce + i)`, `i = 0..count`, for a public nonce.
    pub fn keystream<M: SecurityModel>(
        &mut self,
        party: &mut Party<M>,
        key: &RssVec<F>,
        nonce: F,
        count: usize,
    ) -> Result<RssVec<F>, EngineError> {
        let mut ctr = crate::legendre::counter::<F>(count);
        for c in ctr.iter_mut() {
            *c += nonce;
        }
        let x = RssVec::constant(party.id(), &ctr);
        self.encrypt(party, key, &x)
    }
}

/// Preprocessed material for [`decrypt`]: per round and block `[u^3]` and `[u^{-1}]`.
#[derive(Debug, Clone, Default)]
pub struct DecryptPrep<F> {
    u3: RssVec<F>,
    u_inv: RssVec<F>,
}

/// Preprocessing for decrypting `blocks` blocks (three rounds for the batch; 4 elements per
/// round and block and party).
pub fn preprocess_decrypt<F: PrfField, M: SecurityModel>(
    party: &mut Party<M>,
    params: &MimcParams<F>,
    blocks: usize,
) -> Result<DecryptPrep<F>, EngineError> {
    let n = blocks
        .checked_mul(params.rounds())
        .ok_or(EngineError::Unsupported("batch too large".into()))?;
    let u = party.random_rss::<F>(n);
    let s = party.random_rss::<F>(n);
    let mut uu = u.clone();
    uu.extend(&u);
    let mut us = u.clone();
    us.extend(&s);
    let prod = party.mul(&uu, &us)?;
    let lm = |r: core::ops::Range<usize>| {
        prod.slice(r).ok_or(EngineError::LengthMismatch {
            expected: 2 * n,
            got: prod.len(),
        })
    };
    let (u2, m) = (lm(0..n)?, lm(n..2 * n)?);
    let u3 = party.mul(&u2, &u)?;
    let m = party.open(&m)?;
    if m.iter().any(|v| v.is_zero()) {
        // Probability about 2n/p: u = 0 or s = 0. Not worth a redraw protocol.
        return Err(EngineError::Unsupported(
            "a random mask was zero; run the decryption again".into(),
        ));
    }
    let mut u_inv = s;
    scale(&mut u_inv, &batch_inverse(&m));
    Ok(DecryptPrep { u3, u_inv })
}

/// Decrypts shared ciphertexts `c` under the shared key: the inverse rounds
/// `y -> (y)^{1/3} - k - c_i` with the masked cube roots described in the module docs
/// (one multiply-then-open per round).
pub fn decrypt<F: PrfField, M: SecurityModel>(
    party: &mut Party<M>,
    params: &MimcParams<F>,
    prep: &DecryptPrep<F>,
    key: &RssVec<F>,
    c: &RssVec<F>,
) -> Result<RssVec<F>, EngineError> {
    crate::ops::check_scalar(key)?;
    let n = c.len();
    let rounds = params.rounds();
    EngineError::ensure_preprocessed(n.saturating_mul(rounds), prep.u3.len())?;
    let id = party.id();
    let mut neg_key = key.clone();
    crate::ops::scale_scalar(&mut neg_key, -F::ONE);
    let mut y = c.clone();
    add_shared_scalar(&mut y, &neg_key);
    for (step, i) in (0..rounds).rev().enumerate() {
        let r = step * n..(step + 1) * n;
        let missing = || EngineError::PreprocessingExhausted {
            needed: n,
            available: 0,
        };
        let u3 = prep.u3.slice(r.clone()).ok_or_else(missing)?;
        let mut root = prep.u_inv.slice(r).ok_or_else(missing)?;
        let opened = mul_open(party, &y, &u3)?;
        let roots: Vec<F> = opened.iter().map(|&v| cube_root(v)).collect();
        scale(&mut root, &roots);
        add_shared_scalar(&mut root, &neg_key);
        root.add_constant_scalar(id, -params.constants[i]);
        y = root;
    }
    Ok(y)
}
