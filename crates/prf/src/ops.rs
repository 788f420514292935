//! Local and one-round operations on replicated sharings over a prime field that the PRFs
//! share (PRF.md, "Engine operations over F_p").

use triskele_engine::{EngineError, Lift, Malicious, Party, Phase, SecurityModel, SemiHonest};
use triskele_field::PrimeField;
use triskele_share::{local_product, RssVec};

/// The field bound of every PRF protocol: a prime field whose products the engine can
/// record for malicious verification.
pub trait PrfField: PrimeField + Lift {}
impl<F: PrimeField + Lift> PrfField for F {}

/// The finalize phase of a PRF computation: nothing in the semi-honest model; in the
/// malicious model Protocol 2 over every recorded product (in `F_p`) and a compare-view of all
/// opened values ([`Party::verify_recorded`]), so that no output is used before every check
/// passed at every party.
pub trait Finalize {
    fn finalize_checks(&mut self) -> Result<(), EngineError>;
}

impl Finalize for Party<SemiHonest> {
    fn finalize_checks(&mut self) -> Result<(), EngineError> {
        Ok(())
    }
}

impl Finalize for Party<Malicious> {
    fn finalize_checks(&mut self) -> Result<(), EngineError> {
        self.verify_recorded()
    }
}

/// Cube chains `([v], [v^2], [v^3])` computed with unrecorded multiplications
/// ([`Party::mul_covered`]) whose two products `v · v = v^2` and `v^2 · v = v^3` are checked as
/// one relation: after the online phase, a coin `r` is tossed and the single triple
/// `(r v + v^2, v, r v^2 + v^3)` is recorded for each chain, since
/// `(r v + v^2) v - (r v^2 + v^3) = r (v v - v^2) + (v^2 v - v^3)`.
///
/// Errors `e_1, e_2` in the two products (fixed before the coin is tossed) leave the combined
/// relation correct only if `r e_1 + e_2 = 0`: probability at most `1/p` over the coin, added to
/// the soundness error of the multiplication check. It halves the triples the check processes
/// and the memory the records take (3 vectors per chain instead of 6). Used by MiMC (each round
/// is such a chain) and by cube tuples.
#[derive(Debug, Clone, Default)]
pub struct CubeRecords<F> {
    v: RssVec<F>,
    v2: RssVec<F>,
    v3: RssVec<F>,
}

impl<F: PrfField> CubeRecords<F> {
    /// Computes the cube chains `(z, z^2, z^3)` of `z = y + shift` (per component: `shift[0]`
    /// added to the first, `shift[1]` to the second) straight into the records, with both
    /// products appended by [`Party::mul_covered_append`]: nothing is allocated or copied
    /// (a malicious MiMC round). `y` is the given sharing, or with `None` the cubes of the
    /// chains last appended (the previous round's output). Returns the range of the new
    /// chains. Same messages as two [`Party::mul_covered`] calls.
    pub fn append_round<M: SecurityModel>(
        &mut self,
        party: &mut Party<M>,
        y: Option<&RssVec<F>>,
        shift: [F; 2],
        last: core::ops::Range<usize>,
    ) -> Result<core::ops::Range<usize>, EngineError> {
        let CubeRecords { v, v2, v3 } = self;
        let at = v.len();
        let (y1, y2) = match y {
            Some(y) => (&y.first[..], &y.second[..]),
            None => {
                let cubes = v3.first.get(last.clone()).zip(v3.second.get(last.clone()));
                cubes.ok_or(EngineError::LengthMismatch {
                    expected: last.end,
                    got: v3.len(),
                })?
            }
        };
        v.first.extend(y1.iter().map(|&a| a + shift[0]));
        v.second.extend(y2.iter().map(|&a| a + shift[1]));
        let z = [&v.first[at..], &v.second[at..]];
        party.mul_covered_append(z, z, v2)?;
        party.mul_covered_append([&v2.first[at..], &v2.second[at..]], z, v3)?;
        Ok(at..v.len())
    }

    /// The cubes `v^3` of the chains `r` as a sharing of their own.
    pub fn cubes(&self, r: core::ops::Range<usize>) -> Option<RssVec<F>> {
        Some(RssVec {
            first: self.v3.first.get(r.clone())?.to_vec(),
            second: self.v3.second.get(r)?.to_vec(),
        })
    }

    /// Whether the kept chains reach the model's segment size ([`CubeRecords::commit_if_due`]).
    pub fn is_due<M: SecurityModel>(&self, party: &mut Party<M>) -> bool {
        party
            .model()
            .segment_size()
            .is_some_and(|s| self.bytes() >= s)
    }

    /// Reserves room for `n` chains (malicious model only).
    pub fn reserve<M: SecurityModel>(&mut self, n: usize) {
        if M::MALICIOUS {
            for r in [&mut self.v, &mut self.v2, &mut self.v3] {
                r.first.reserve(n);
                r.second.reserve(n);
            }
        }
    }

    /// Keeps a chain for [`CubeRecords::commit`] (malicious model only; no-op otherwise).
    pub fn push<M: SecurityModel>(&mut self, v: &RssVec<F>, v2: &RssVec<F>, v3: &RssVec<F>) {
        if M::MALICIOUS {
            self.v.extend(v);
            self.v2.extend(v2);
            self.v3.extend(v3);
        }
    }

    /// Keeps the chains `v`, `v2`, `v3` that the caller no longer needs (malicious model only;
    /// no-op otherwise): taken without a copy when nothing is kept yet, else appended.
    pub fn push_owned<M: SecurityModel>(&mut self, v: RssVec<F>, v2: RssVec<F>, v3: RssVec<F>) {
        if !M::MALICIOUS {
            return;
        }
        if self.is_empty() {
            self.v = v;
            self.v2 = v2;
            self.v3 = v3;
        } else {
            self.push::<M>(&v, &v2, &v3);
        }
    }

    /// The memory the kept chains take (three sharings per chain).
    pub fn bytes(&self) -> usize {
        6 * self.len() * core::mem::size_of::<F>()
    }

    /// [`CubeRecords::commit`] once the kept chains reach the model's segment size
    /// ([`SecurityModel::segment_size`]), so that a long computation holds about one segment
    /// of chains instead of all of them. The chains kept so far are complete (their messages
    /// were sent), so the coin drawn now is independent of their errors.
    pub fn commit_if_due<M: SecurityModel>(
        &mut self,
        party: &mut Party<M>,
    ) -> Result<(), EngineError> {
        if self.is_due(party) {
            self.commit(party)
        } else {
            Ok(())
        }
    }

    /// Number of chains kept.
    pub fn len(&self) -> usize {
        self.v.len()
    }

    pub fn is_empty(&self) -> bool {
        self.v.is_empty()
    }

    /// Tosses the coin and records the combined relations with the party's security model
    /// (the finalize checks then verify them): as chained triples
    /// ([`triskele_engine::Chained`], combined by the check as it streams) where the model
    /// keeps them, else combined here. Must run after every message that touched the
    /// chains and before the finalize checks; empties the records but keeps their memory for
    /// the next chains. No communication when nothing was kept (semi-honest model). The coin's
    /// message counts in the finalize phase (it belongs to the check), wherever this runs.
    pub fn commit<M: SecurityModel>(&mut self, party: &mut Party<M>) -> Result<(), EngineError> {
        if self.is_empty() {
            return Ok(());
        }
        let coin = party.in_phase(Phase::Finalize, |p| p.coins_in::<F>(1));
        let r = coin?.first().copied().ok_or(EngineError::LengthMismatch {
            expected: 1,
            got: 0,
        })?;
        let CubeRecords { v, v2, v3 } = self;
        // Chained triples `(v^2, v, v^3)` under `r` stand for `(v^2 + r v, v, v^3 + r v^2)`,
        // formed by the check as it streams: no pass here. A model that keeps none for this
        // field, or some under another coin, gets the combined triples.
        if party.model().on_chained(v2, v, v3, r) {
            return party.checkpoint();
        }
        // v3 <- r v2 + v3 first (it needs the old v2), then v2 <- r v + v2.
        F::scale_add_slice(&mut v3.first, &v2.first, r);
        F::scale_add_slice(&mut v3.second, &v2.second, r);
        F::scale_add_slice(&mut v2.first, &v.first, r);
        F::scale_add_slice(&mut v2.second, &v.second, r);
        // Handed over without a copy; the chains get the store's cleared vectors back (after
        // a verified segment, with its memory, so the next chains need no fresh pages).
        party.model().on_product_swap(v2, v, v3);
        party.checkpoint()
    }
}

/// `Ok` if `key` is a sharing of one element (a scalar key), else a length error.
pub fn check_scalar<F: PrimeField>(key: &RssVec<F>) -> Result<(), EngineError> {
    if key.len() != 1 {
        return Err(EngineError::LengthMismatch {
            expected: 1,
            got: key.len(),
        });
    }
    Ok(())
}

/// `[x] * c_k` element-wise with public `c` (local).
pub fn scale<F: PrimeField>(x: &mut RssVec<F>, c: &[F]) {
    x.map_components(|v| {
        for (a, b) in v.iter_mut().zip(c) {
            *a *= *b;
        }
    });
}

/// `[x] * c` with one public scalar (local).
pub fn scale_scalar<F: PrimeField>(x: &mut RssVec<F>, c: F) {
    x.map_components(|v| {
        for a in v.iter_mut() {
            *a *= c;
        }
    });
}

/// `[x] -= [y]` (local).
pub fn sub_assign<F: PrimeField>(x: &mut RssVec<F>, y: &RssVec<F>) {
    for (a, b) in x.first.iter_mut().zip(&y.first) {
        *a -= *b;
    }
    for (a, b) in x.second.iter_mut().zip(&y.second) {
        *a -= *b;
    }
}

/// `[x_k] + [s]` for every k, with one shared scalar `[s]` (a sharing of length 1; local).
pub fn add_shared_scalar<F: PrimeField>(x: &mut RssVec<F>, s: &RssVec<F>) {
    if let (Some(&a), Some(&b)) = (s.first.first(), s.second.first()) {
        x.first.iter_mut().for_each(|v| *v += a);
        x.second.iter_mut().for_each(|v| *v += b);
    }
}

/// A sharing of length 1 repeated `n` times (local).
pub fn broadcast_scalar<F: PrimeField>(s: &RssVec<F>, n: usize) -> RssVec<F> {
    let mut out = RssVec::zeros(n);
    add_shared_scalar(&mut out, s);
    out
}

/// Multiply-then-open, `Open([x] * [y])`, one round.
///
/// Semi-honest: the fused opening of PRF.md, each party masks its additive share of the
/// product with a zero-share and sends it to both others (2 elements per value). Malicious
/// (PRF.md: no fused 3-of-3 opening): a recorded multiplication followed by the hashed RSS
/// opening (1 + 1 elements per value, 2 rounds), so both the product and the opened value
/// are covered by the finalize checks.
pub fn mul_open<F: PrfField, M: SecurityModel>(
    party: &mut Party<M>,
    x: &RssVec<F>,
    y: &RssVec<F>,
) -> Result<Vec<F>, EngineError> {
    if x.len() != y.len() {
        return Err(EngineError::LengthMismatch {
            expected: x.len(),
            got: y.len(),
        });
    }
    if M::MALICIOUS {
        let z = party.mul(x, y)?;
        return party.open(&z);
    }
    let mut t = vec![F::ZERO; x.len()];
    local_product(&mut t, x, y);
    let mut scratch = Vec::new();
    party.prss().add_zero_share(&mut t, &mut scratch);
    party.open_additive(&t)
}

/// Element-wise multiplicative inverses (Montgomery's trick; zeros map to zero).
pub use triskele_field::batch_inverse;

#[cfg(test)]
mod tests {
    use super::*;
    use triskele_field::{Field, Fp};

    #[test]
    fn batch_inverse_matches_inverse_and_skips_zeros() {
        let v: Vec<Fp> = [3u64, 0, 7, 1, 0, 123456789]
            .iter()
            .map(|&x| Fp::from(x))
            .collect();
        let inv = batch_inverse(&v);
        for (x, y) in v.iter().zip(&inv) {
            assert_eq!(*y, x.inverse());
        }
        assert!(batch_inverse::<Fp>(&[]).is_empty());
    }
}
