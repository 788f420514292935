//! Cleartext references of the PRFs (PRF.md): the specification the MPC protocols are tested
//! against, and what a user can check an MPC output with.

use sha3::digest::{ExtendableOutput, Update, XofReader};
use sha3::Shake128;
use triskele_engine::EngineError;
use triskele_field::PrimeField;

/// One bit of the Legendre PRF: 1 if `k + x` is a square or zero mod p, 0 if it is a
/// non-square (the convention of the Ethereum Legendre PRF challenge).
pub fn legendre_bit<F: PrimeField>(k: F, x: F) -> bool {
    (k + x).legendre() != -1
}

/// `count` consecutive bits `L_k(x), L_k(x+1), ...` packed most-significant-bit first (the
/// challenge's byte format; the last byte is padded with zeros).
pub fn legendre_bits_packed<F: PrimeField>(k: F, x: F, count: usize) -> Vec<u8> {
    let mut out = vec![0u8; count.div_ceil(8)];
    let mut y = k + x;
    for i in 0..count {
        if y.legendre() != -1 {
            out[i / 8] |= 0x80 >> (i % 8);
        }
        y += F::ONE;
    }
    out
}

/// Packs bits most-significant-bit first.
pub fn pack_bits(bits: &[bool]) -> Vec<u8> {
    let mut out = vec![0u8; bits.len().div_ceil(8)];
    for (i, _) in bits.iter().enumerate().filter(|(_, b)| **b) {
        out[i / 8] |= 0x80 >> (i % 8);
    }
    out
}

/// The public parameters of MiMC-p/p over `F`: the number of rounds `r = ceil(log_3 p)` and
/// the round constants `c_0 = 0, c_1, ..., c_{r-1}`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MimcParams<F> {
    pub constants: Vec<F>,
}

impl<F: PrimeField> MimcParams<F> {
    /// The parameters for the field's prime. Fails unless `x -> x^3` is a permutation
    /// (`p ≡ 2 mod 3`).
    ///
    /// Constants (PRF.md): SHAKE128 absorbs ASCII `"Mimc"` then `p` as two 64-bit
    /// little-endian limbs; the output is read 16 bytes at a time as a little-endian integer,
    /// masked to the bit length of `p` (no change for the default prime, whose bit length is
    /// 128; it keeps the rejection rate below 1/2 for smaller primes) and rejected if `>= p`.
    pub fn new() -> Result<Self, EngineError> {
        let p = F::modulus();
        if p % 3 != 2 {
            return Err(EngineError::Unsupported(format!(
                "MiMC needs p = 2 mod 3 so that x^3 is a permutation; {p} = {} mod 3",
                p % 3
            )));
        }
        let r = Self::rounds_for(p);
        let mut shake = Shake128::default();
        shake.update(b"Mimc");
        shake.update(&(p as u64).to_le_bytes());
        shake.update(&((p >> 64) as u64).to_le_bytes());
        let mut reader = shake.finalize_xof();
        let bits = 128 - p.leading_zeros();
        let mask = if bits == 128 {
            u128::MAX
        } else {
            (1u128 << bits) - 1
        };
        let mut constants = Vec::with_capacity(r);
        constants.push(F::ZERO);
        while constants.len() < r {
            let mut b = [0u8; 16];
            reader.read(&mut b);
            let v = u128::from_le_bytes(b) & mask;
            if v < p {
                constants.push(F::from_u128_reduced(v));
            }
        }
        Ok(Self { constants })
    }

    /// `ceil(log_3 p)`: the least `r` with `3^r >= p`.
    pub fn rounds_for(p: u128) -> usize {
        let mut r = 0;
        let mut pow: u128 = 1;
        while pow < p {
            pow = pow.saturating_mul(3);
            r += 1;
        }
        r
    }

    /// Number of rounds `r`.
    pub fn rounds(&self) -> usize {
        self.constants.len()
    }

    /// `E_k(x) = (F_{r-1} o ... o F_0)(x) + k`, `F_i(y) = (y + k + c_i)^3`.
    pub fn encrypt(&self, k: F, x: F) -> F {
        let mut y = x;
        for &c in &self.constants {
            let z = y + k + c;
            y = z.square() * z;
        }
        y + k
    }

    /// The inverse of [`MimcParams::encrypt`], with cube roots `y^((2p-1)/3)`.
    pub fn decrypt(&self, k: F, c: F) -> F {
        let mut y = c - k;
        for &ci in self.constants.iter().rev() {
            y = cube_root(y) - k - ci;
        }
        y
    }

    /// Counter-mode keystream `E_k(nonce + i)`, `i = 0..count`.
    pub fn keystream(&self, k: F, nonce: F, count: usize) -> Vec<F> {
        let mut x = nonce;
        (0..count)
            .map(|_| {
                let y = self.encrypt(k, x);
                x += F::ONE;
                y
            })
            .collect()
    }
}

/// The unique cube root in a field with `p ≡ 2 mod 3`: `y^((2p-1)/3)`.
pub fn cube_root<F: PrimeField>(y: F) -> F {
    let p = F::modulus();
    // (2p - 1) / 3 without overflow: p = 3q + 2, so (2p-1)/3 = 2q + 1.
    let q = p / 3;
    y.pow_u128(2 * q + 1)
}

/// The smallest quadratic non-residue of `F` (2 for the default prime).
pub fn smallest_non_residue<F: PrimeField>() -> F {
    let mut a = F::ONE + F::ONE;
    while a.legendre() != -1 {
        a += F::ONE;
    }
    a
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::{rngs::StdRng, SeedableRng};
    use triskele_field::{Field, Fp, Random};

    #[test]
    fn mimc_has_81_rounds_for_the_default_prime() {
        let m = MimcParams::<Fp>::new().expect("p = 2 mod 3");
        assert_eq!(m.rounds(), 81);
        assert_eq!(m.constants[0], Fp::ZERO);
        // The constants are distinct and non-zero (a wrong stream would likely repeat).
        let mut c = m.constants[1..].to_vec();
        c.sort();
        c.dedup();
        assert_eq!(c.len(), 80);
        assert_eq!(MimcParams::<Fp>::rounds_for(3), 1);
        assert_eq!(MimcParams::<Fp>::rounds_for(4), 2);
        assert_eq!(MimcParams::<Fp>::rounds_for(9), 2);
        assert_eq!(MimcParams::<Fp>::rounds_for(10), 3);
    }

    #[test]
    fn mimc_decrypt_inverts_encrypt() {
        let m = MimcParams::<Fp>::new().expect("p = 2 mod 3");
        let mut rng = StdRng::seed_from_u64(1);
        for _ in 0..20 {
            let (k, x) = (Fp::random(&mut rng), Fp::random(&mut rng));
            let c = m.encrypt(k, x);
            assert_ne!(c, x);
            assert_eq!(m.decrypt(k, c), x);
        }
        let y = Fp::random(&mut rng);
        assert_eq!(cube_root(y).square() * cube_root(y), y);
    }

    #[test]
    fn legendre_packing_and_non_residue() {
        assert_eq!(smallest_non_residue::<Fp>(), Fp::from(2u64));
        assert_eq!(pack_bits(&[true, false, true]), vec![0xa0]);
        let k = Fp::from(5u64);
        let packed = legendre_bits_packed(k, Fp::from(3u64), 11);
        let bits: Vec<bool> = (0..11u64)
            .map(|i| legendre_bit(k, Fp::from(3 + i)))
            .collect();
        assert_eq!(packed, pack_bits(&bits));
        // k + x = 0 counts as 1.
        assert!(legendre_bit(k, -k));
    }
}
