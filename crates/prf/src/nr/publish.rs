//! The output: every party publishes `g` raised to its two components of `[e]`, each
//! component's point comes from both of its holders, and the output is the sum of the three.

use curve25519_dalek::ristretto::CompressedRistretto;
use curve25519_dalek::{RistrettoPoint, Scalar};
use rayon::prelude::*;
use triskele_engine::{AbortReason, EngineError, Party, SecurityModel};
use triskele_field::FieldError;
use triskele_share::{Direction, RssVec};
use zeroize::Zeroize;

use super::scalar::RistrettoScalar;

/// Evaluations per batched point compression (one field inversion per chunk).
const CHUNK: usize = 256;

/// This party's points for one chunk: compressed `g^(e_i)`, compressed `g^(e_{i+1})`, and
/// their sum `g^(e_i + e_{i+1})`.
type OwnPoints = (
    Vec<CompressedRistretto>,
    Vec<CompressedRistretto>,
    Vec<RistrettoPoint>,
);

/// `g^a` compressed, for every `a` in `first` and in `second`, and `g^(a + b)` uncompressed.
///
/// Computes the halves `h = g^(a/2)` by constant-time fixed-base multiplication and uses
/// [`RistrettoPoint::double_and_compress_batch`] (one inversion per chunk). Its batched
/// inversion skips zeros in constant time (curve25519-dalek 4.1), so an identity `h` (a zero
/// component) compresses correctly and does not disturb the rest of the chunk (tested).
fn own_points(first: &[RistrettoScalar], second: &[RistrettoScalar], inv2: &Scalar) -> OwnPoints {
    let half = |s: &RistrettoScalar| {
        let mut h = s.0 * inv2;
        let p = RistrettoPoint::mul_base(&h);
        h.zeroize();
        p
    };
    let ha: Vec<RistrettoPoint> = first.iter().map(half).collect();
    let hb: Vec<RistrettoPoint> = second.iter().map(half).collect();
    let ca = RistrettoPoint::double_and_compress_batch(&ha);
    let cb = RistrettoPoint::double_and_compress_batch(&hb);
    let sum = ha
        .iter()
        .zip(&hb)
        .map(|(a, b)| {
            let s = a + b;
            s + s
        })
        .collect();
    (ca, cb, sum)
}

fn to_bytes(points: &[CompressedRistretto]) -> Vec<u8> {
    points.iter().flat_map(|c| c.to_bytes()).collect()
}

/// See [`super::nr_publish`].
pub(crate) fn publish<M: SecurityModel>(
    party: &mut Party<M>,
    e: &RssVec<RistrettoScalar>,
) -> Result<Vec<[u8; 32]>, EngineError> {
    if e.second.len() != e.first.len() {
        return Err(EngineError::LengthMismatch {
            expected: e.first.len(),
            got: e.second.len(),
        });
    }
    let n = e.len();
    if n == 0 {
        return Ok(Vec::new());
    }
    let inv2 = Scalar::from(2u64).invert();
    let chunks: Vec<OwnPoints> = e
        .first
        .par_chunks(CHUNK)
        .zip(e.second.par_chunks(CHUNK))
        .map(|(a, b)| own_points(a, b, &inv2))
        .collect();
    let mut to_next = Vec::with_capacity(32 * n);
    let mut to_prev = Vec::with_capacity(32 * n);
    let mut own_sum = Vec::with_capacity(n);
    for (ca, cb, s) in chunks {
        to_next.extend(to_bytes(&ca));
        to_prev.extend(to_bytes(&cb));
        own_sum.extend(s);
    }
    // P_i sends g^(e_i) to P_{i+1} and g^(e_{i+1}) to P_{i-1}; it receives g^(e_{i-1}) from
    // P_{i-1} (that party's first component) and from P_{i+1} (that party's second).
    party.send_bytes(Direction::Next, to_next)?;
    party.send_bytes(Direction::Prev, to_prev)?;
    let from_prev = party.recv_bytes(Direction::Prev, 32 * n)?;
    let from_next = party.recv_bytes(Direction::Next, 32 * n)?;
    if from_prev != from_next {
        let peer = party.id().prev();
        return Err(party.abort(AbortReason::ViewMismatch { peer }));
    }
    let (words, _) = from_prev.as_chunks::<32>();
    let out: Option<Vec<[u8; 32]>> = words
        .par_iter()
        .zip(own_sum.par_iter())
        .map(|(w, s)| {
            let r = CompressedRistretto(*w).decompress()?;
            Some((r + s).compress().to_bytes())
        })
        .collect();
    out.ok_or(EngineError::Decode {
        peer: party.id().prev(),
        source: FieldError::OutOfRange {
            field: "Ristretto255 point",
        },
    })
}
