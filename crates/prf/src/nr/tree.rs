//! The exponent `[e] = [k_0] · Π_{x_i = 1} [k_i]` by a balanced multiplication tree, all
//! evaluations of a batch in one multiplication per tree level.

use triskele_engine::{EngineError, Party, SecurityModel};
use triskele_share::RssVec;
use zeroize::Zeroize;

use super::scalar::RistrettoScalar;

type Shares = RssVec<RistrettoScalar>;

/// Tree levels (rounds) for `m >= 1` factors: `⌈log2 m⌉`.
pub(crate) fn levels(m: usize) -> u32 {
    usize::BITS - m.saturating_sub(1).leading_zeros()
}

/// The factors of one tree level, concatenated over the evaluations.
enum Level<'a> {
    /// The first level: indices into the key.
    Key { key: &'a Shares, idx: Vec<usize> },
    /// Later levels: the shares themselves.
    Shares(Shares),
}

impl Level<'_> {
    fn push_to(&self, i: usize, out: &mut Shares) {
        let (src, j) = match self {
            Level::Key { key, idx } => (*key, idx[i]),
            Level::Shares(s) => (s, i),
        };
        out.first.push(src.first[j]);
        out.second.push(src.second[j]);
    }
}

impl Drop for Level<'_> {
    fn drop(&mut self) {
        if let Level::Shares(s) = self {
            s.zeroize();
        }
    }
}

/// Checks the key sharing and the inputs; returns `n`.
pub(crate) fn check_shapes<B: AsRef<[bool]>>(
    key: &Shares,
    inputs: &[B],
) -> Result<usize, EngineError> {
    if key.second.len() != key.first.len() {
        return Err(EngineError::LengthMismatch {
            expected: key.first.len(),
            got: key.second.len(),
        });
    }
    let Some(n) = key.len().checked_sub(1) else {
        return Err(EngineError::LengthMismatch {
            expected: 1,
            got: 0,
        });
    };
    for x in inputs {
        let got = x.as_ref().len();
        if got != n {
            return Err(EngineError::LengthMismatch { expected: n, got });
        }
    }
    Ok(n)
}

/// See [`super::nr_exponent`].
pub(crate) fn exponent<M: SecurityModel, B: AsRef<[bool]>>(
    party: &mut Party<M>,
    key: &Shares,
    inputs: &[B],
) -> Result<Shares, EngineError> {
    check_shapes(key, inputs)?;
    // Factor lists: k_0, then k_i for every set bit.
    let mut counts = Vec::with_capacity(inputs.len());
    let mut idx = Vec::new();
    for x in inputs {
        let before = idx.len();
        idx.push(0);
        idx.extend(
            x.as_ref()
                .iter()
                .enumerate()
                .filter(|(_, &b)| b)
                .map(|(i, _)| i + 1),
        );
        counts.push(idx.len() - before);
    }
    let mut level = Level::Key { key, idx };
    while counts.iter().any(|&c| c > 1) {
        let products: usize = counts.iter().map(|c| c / 2).sum();
        let mut xs = Shares {
            first: Vec::with_capacity(products),
            second: Vec::with_capacity(products),
        };
        let mut ys = Shares {
            first: Vec::with_capacity(products),
            second: Vec::with_capacity(products),
        };
        let mut at = 0;
        for &c in &counts {
            for t in 0..c / 2 {
                level.push_to(at + 2 * t, &mut xs);
                level.push_to(at + 2 * t + 1, &mut ys);
            }
            at += c;
        }
        let prod = party.mul_covered(&xs, &ys);
        xs.zeroize();
        ys.zeroize();
        let mut prod = prod?;
        // Next level: each evaluation's products, then its odd factor (if any) carried over.
        let total: usize = counts.iter().map(|c| c.div_ceil(2)).sum();
        let mut next = Shares {
            first: Vec::with_capacity(total),
            second: Vec::with_capacity(total),
        };
        let (mut at, mut p) = (0, 0);
        for c in counts.iter_mut() {
            let half = *c / 2;
            next.first.extend_from_slice(&prod.first[p..p + half]);
            next.second.extend_from_slice(&prod.second[p..p + half]);
            p += half;
            if *c % 2 == 1 {
                level.push_to(at + *c - 1, &mut next);
            }
            at += *c;
            *c = c.div_ceil(2);
        }
        prod.zeroize();
        level = Level::Shares(next);
    }
    // One factor per evaluation left: the exponent.
    let mut e = Shares {
        first: Vec::with_capacity(inputs.len()),
        second: Vec::with_capacity(inputs.len()),
    };
    for i in 0..inputs.len() {
        level.push_to(i, &mut e);
    }
    Ok(e)
}

#[cfg(test)]
mod tests {
    use super::levels;

    #[test]
    fn levels_is_ceil_log2() {
        let expected = [
            (1, 0),
            (2, 1),
            (3, 2),
            (4, 2),
            (5, 3),
            (8, 3),
            (9, 4),
            (128, 7),
            (129, 8),
        ];
        for (m, l) in expected {
            assert_eq!(levels(m), l, "m = {m}");
        }
    }
}
