//! Replicated (2-out-of-3) share vectors and additive (3-out-of-3) shares (PROTOCOLS.md §1.1, §1.7).

use triskele_field::{Bulk, Field, Random};
use zeroize::Zeroize;

use crate::party::PartyId;

/// One party's replicated shares of a vector `x = x_1 + x_2 + x_3`.
///
/// Party `P_i` holds `first = x_i` and `second = x_{i+1}`; whatever `P_i` holds in `second`,
/// `P_{i+1}` holds in `first`. Stored as two parallel vectors so bulk field operations apply.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RssVec<F> {
    pub first: Vec<F>,
    pub second: Vec<F>,
}

impl<F: Field> RssVec<F> {
    /// `n` shares of zero (both components zero).
    pub fn zeros(n: usize) -> Self {
        RssVec {
            first: vec![F::ZERO; n],
            second: vec![F::ZERO; n],
        }
    }

    /// From both components; `None` if their lengths differ.
    pub fn from_parts(first: Vec<F>, second: Vec<F>) -> Option<Self> {
        (first.len() == second.len()).then_some(RssVec { first, second })
    }

    pub fn len(&self) -> usize {
        self.first.len()
    }

    pub fn is_empty(&self) -> bool {
        self.first.is_empty()
    }

    /// Party `party`'s share of the public constants `c` (PROTOCOLS.md §1.3: `x_1 = c`).
    pub fn constant(party: PartyId, c: &[F]) -> Self
    where
        F: Bulk,
    {
        let mut s = Self::zeros(c.len());
        s.add_constant(party, c);
        s
    }

    /// Adds public constants (`x_1 += c`): P1 adds to its first slot, P3 to its second.
    pub fn add_constant(&mut self, party: PartyId, c: &[F])
    where
        F: Bulk,
    {
        match party {
            PartyId::P1 => F::add_assign_slice(&mut self.first, c),
            PartyId::P2 => {}
            PartyId::P3 => F::add_assign_slice(&mut self.second, c),
        }
    }

    /// Adds one public constant to every element.
    pub fn add_constant_scalar(&mut self, party: PartyId, c: F) {
        let slot = match party {
            PartyId::P1 => &mut self.first,
            PartyId::P2 => return,
            PartyId::P3 => &mut self.second,
        };
        for x in slot.iter_mut() {
            *x += c;
        }
    }

    /// Component-wise addition of another sharing.
    pub fn add_assign(&mut self, other: &RssVec<F>)
    where
        F: Bulk,
    {
        F::add_assign_slice(&mut self.first, &other.first);
        F::add_assign_slice(&mut self.second, &other.second);
    }

    /// Applies the same local map to both components (any map that is additive, e.g. a
    /// GF(2)-linear map in a binary field).
    pub fn map_components(&mut self, mut f: impl FnMut(&mut [F])) {
        f(&mut self.first);
        f(&mut self.second);
    }

    /// A sub-range of the shares, copied.
    pub fn slice(&self, range: core::ops::Range<usize>) -> Option<Self> {
        Some(RssVec {
            first: self.first.get(range.clone())?.to_vec(),
            second: self.second.get(range)?.to_vec(),
        })
    }

    /// Appends another sharing.
    pub fn extend(&mut self, other: &RssVec<F>) {
        self.first.extend_from_slice(&other.first);
        self.second.extend_from_slice(&other.second);
    }
}

impl<F: Zeroize> Zeroize for RssVec<F> {
    fn zeroize(&mut self) {
        self.first.zeroize();
        self.second.zeroize();
    }
}

/// Splits `values` into the three parties' replicated shares with randomness from `rng`.
/// Used by a dealer (e.g. the CLI acting for a client) that knows the secret.
pub fn deal<F: Field + Random, R: rand_core::RngCore + ?Sized>(
    values: &[F],
    rng: &mut R,
) -> [RssVec<F>; 3] {
    let n = values.len();
    let mut x1 = vec![F::ZERO; n];
    let mut x2 = vec![F::ZERO; n];
    F::fill_random(rng, &mut x1);
    F::fill_random(rng, &mut x2);
    let x3: Vec<F> = values
        .iter()
        .zip(x1.iter().zip(&x2))
        .map(|(v, (a, b))| *v - *a - *b)
        .collect();
    [
        RssVec {
            first: x1.clone(),
            second: x2.clone(),
        },
        RssVec {
            first: x2,
            second: x3.clone(),
        },
        RssVec {
            first: x3,
            second: x1,
        },
    ]
}

/// Reconstructs from all three parties' shares, checking replication consistency.
/// Returns `None` if lengths differ or a party's second slot disagrees with the next party's first.
pub fn reconstruct<F: Field>(shares: &[RssVec<F>; 3]) -> Option<Vec<F>> {
    let n = shares[0].len();
    if shares.iter().any(|s| s.len() != n || s.second.len() != n) {
        return None;
    }
    for i in 0..3 {
        if shares[i].second != shares[(i + 1) % 3].first {
            return None;
        }
    }
    Some(
        (0..n)
            .map(|k| shares[0].first[k] + shares[1].first[k] + shares[2].first[k])
            .collect(),
    )
}

/// Reconstructs an additive (3,3) sharing.
pub fn reconstruct_additive<F: Field>(shares: &[Vec<F>; 3]) -> Option<Vec<F>> {
    let n = shares[0].len();
    if shares.iter().any(|s| s.len() != n) {
        return None;
    }
    Some(
        (0..n)
            .map(|k| shares[0][k] + shares[1][k] + shares[2][k])
            .collect(),
    )
}

/// The local product of Araki et al. (PROTOCOLS.md §1.6): an additive share of `x*y`,
/// `out[k] = x_i y_i + x_i y_{i+1} + x_{i+1} y_i` (without the zero-share).
pub fn local_product<F: Bulk>(out: &mut [F], x: &RssVec<F>, y: &RssVec<F>) {
    F::local_product_slice(out, &x.first, &x.second, &y.first, &y.second);
}
