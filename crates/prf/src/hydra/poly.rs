//! The small amount of linear algebra the matrix derivation needs: characteristic polynomials
//! of small matrices over `F_p` and an irreducibility test for polynomials of small degree.
//!
//! Everything here works on public values (the instance parameters) and may branch on them.

use triskele_field::PrimeField;

/// A polynomial over `F`, coefficients from the constant term upwards, without trailing zeros
/// (the zero polynomial is empty).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Poly<F>(pub(crate) Vec<F>);

impl<F: PrimeField> Poly<F> {
    fn trimmed(mut c: Vec<F>) -> Self {
        while c.last().is_some_and(|x| x.is_zero()) {
            c.pop();
        }
        Poly(c)
    }

    /// The degree; `None` for the zero polynomial.
    pub(crate) fn degree(&self) -> Option<usize> {
        self.0.len().checked_sub(1)
    }

    /// `self mod m` for a non-zero `m`.
    fn rem(&self, m: &Poly<F>) -> Poly<F> {
        let Some(dm) = m.degree() else {
            return self.clone();
        };
        let lead_inv = m.0[dm].inverse();
        let mut r = self.0.clone();
        while r.len() > dm {
            let top = r.len() - 1;
            let q = r[top] * lead_inv;
            if !q.is_zero() {
                for (i, c) in m.0.iter().enumerate() {
                    let k = top - dm + i;
                    r[k] -= q * *c;
                }
            }
            r.pop();
            while r.last().is_some_and(|x| x.is_zero()) {
                r.pop();
            }
        }
        Poly::trimmed(r)
    }

    /// `self * other mod m`.
    fn mul_mod(&self, other: &Poly<F>, m: &Poly<F>) -> Poly<F> {
        if self.0.is_empty() || other.0.is_empty() {
            return Poly(Vec::new());
        }
        let mut prod = vec![F::ZERO; self.0.len() + other.0.len() - 1];
        for (i, a) in self.0.iter().enumerate() {
            for (j, b) in other.0.iter().enumerate() {
                prod[i + j] += *a * *b;
            }
        }
        Poly::trimmed(prod).rem(m)
    }

    /// `self^e mod m` by square-and-multiply (public exponent).
    fn pow_mod(&self, e: u128, m: &Poly<F>) -> Poly<F> {
        let mut acc = Poly(vec![F::ONE]).rem(m);
        let base = self.rem(m);
        for i in (0..(128 - e.leading_zeros())).rev() {
            acc = acc.mul_mod(&acc, m);
            if (e >> i) & 1 == 1 {
                acc = acc.mul_mod(&base, m);
            }
        }
        acc
    }

    fn sub(&self, other: &Poly<F>) -> Poly<F> {
        let n = self.0.len().max(other.0.len());
        let c = (0..n)
            .map(|i| {
                let a = self.0.get(i).copied().unwrap_or(F::ZERO);
                let b = other.0.get(i).copied().unwrap_or(F::ZERO);
                a - b
            })
            .collect();
        Poly::trimmed(c)
    }

    fn gcd(&self, other: &Poly<F>) -> Poly<F> {
        let (mut a, mut b) = (self.clone(), other.clone());
        while !b.0.is_empty() {
            let r = a.rem(&b);
            a = b;
            b = r;
        }
        a
    }

    /// Irreducibility over `F_p` by Ben-Or's test: a polynomial `f` of degree `n >= 1` is
    /// irreducible iff `gcd(f, x^(p^i) - x) = 1` for `i = 1, ..., floor(n/2)` (a reducible `f`
    /// has an irreducible factor of some degree `d <= n/2`, which divides `x^(p^d) - x`).
    pub(crate) fn is_irreducible(&self) -> bool {
        let Some(n) = self.degree() else {
            return false;
        };
        if n == 0 {
            return false;
        }
        let x = Poly::trimmed(vec![F::ZERO, F::ONE]);
        let mut h = x.rem(self);
        for _ in 0..n / 2 {
            h = h.pow_mod(F::modulus(), self);
            let g = self.gcd(&h.sub(&x));
            if g.degree() != Some(0) {
                return false;
            }
        }
        true
    }
}

/// A square matrix over `F`, row-major.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Square<F> {
    pub(crate) n: usize,
    pub(crate) a: Vec<F>,
}

impl<F: PrimeField> Square<F> {
    pub(crate) fn get(&self, i: usize, j: usize) -> F {
        self.a[i * self.n + j]
    }

    pub(crate) fn mul(&self, other: &Square<F>) -> Square<F> {
        let n = self.n;
        let mut a = vec![F::ZERO; n * n];
        for i in 0..n {
            for k in 0..n {
                let x = self.get(i, k);
                for j in 0..n {
                    a[i * n + j] += x * other.get(k, j);
                }
            }
        }
        Square { n, a }
    }

    /// The characteristic polynomial `det(x I - A)` (monic, degree `n`), by the
    /// Faddeev-LeVerrier recursion `M_k = A M_{k-1} + c_{n-k+1} I`,
    /// `c_{n-k} = -tr(A M_k) / k`, which divides by `1, ..., n` (fine for `p > n`).
    pub(crate) fn charpoly(&self) -> Poly<F> {
        let n = self.n;
        let mut c = vec![F::ZERO; n + 1];
        c[n] = F::ONE;
        let mut m = Square {
            n,
            a: vec![F::ZERO; n * n],
        };
        let mut k_f = F::ZERO;
        for k in 1..=n {
            let mut next = self.mul(&m);
            for i in 0..n {
                next.a[i * n + i] += c[n - k + 1];
            }
            m = next;
            let am = self.mul(&m);
            let trace = (0..n).fold(F::ZERO, |t, i| t + am.get(i, i));
            k_f += F::ONE;
            c[n - k] = -(trace * k_f.inverse());
        }
        Poly::trimmed(c)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use triskele_field::{Field, Fp};

    fn p(c: &[u64]) -> Poly<Fp> {
        Poly::trimmed(c.iter().map(|&v| Fp::from_u64(v)).collect())
    }

    #[test]
    fn irreducibility_of_small_polynomials() {
        // p = 2^127 + 45 = 2 (mod 3) and 5 (mod 8): -1 is a square (p = 1 mod 4), -3 is not
        // (p = 2 mod 3), 2 is not (p = 5 mod 8).
        let minus = |v: u64| -Fp::from_u64(v);
        let x2_plus_1 = p(&[1, 0, 1]);
        assert!(!x2_plus_1.is_irreducible());
        let x2_plus_3 = Poly(vec![Fp::from_u64(3), Fp::ZERO, Fp::ONE]);
        assert!(x2_plus_3.is_irreducible());
        let x2_minus_2 = Poly(vec![minus(2), Fp::ZERO, Fp::ONE]);
        assert!(x2_minus_2.is_irreducible());
        // (x^2 - 2)(x^2 + 3): no root, still reducible.
        let prod = x2_minus_2.mul_mod(&x2_plus_3, &p(&[0, 0, 0, 0, 0, 1]));
        assert_eq!(prod.degree(), Some(4));
        assert!(!prod.is_irreducible());
        // x^3 - 2: 3 does not divide p - 1, so cubing is a bijection and 2 has a cube root.
        assert!(!Poly(vec![minus(2), Fp::ZERO, Fp::ZERO, Fp::ONE]).is_irreducible());
        assert!(p(&[5, 1]).is_irreducible());
        assert!(!p(&[7]).is_irreducible());
    }

    #[test]
    fn charpoly_of_a_companion_matrix_is_its_polynomial() {
        // Companion matrix of x^3 + 2x^2 + 3x + 4.
        let f = |v: i64| {
            if v < 0 {
                -Fp::from_u64(v.unsigned_abs())
            } else {
                Fp::from_u64(v as u64)
            }
        };
        let m = Square {
            n: 3,
            a: [0, 0, -4, 1, 0, -3, 0, 1, -2]
                .iter()
                .map(|&v| f(v))
                .collect(),
        };
        assert_eq!(m.charpoly(), p(&[4, 3, 2, 1]));
    }
}
