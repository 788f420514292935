//! Cleartext Naor-Reingold, key derivation from a seed and input conversion.

use curve25519_dalek::{RistrettoPoint, Scalar};
use sha3::digest::{ExtendableOutput, Update, XofReader};
use sha3::Shake128;
use triskele_engine::EngineError;
use zeroize::Zeroize;

use super::scalar::RistrettoScalar;

/// Domain separation of [`key_from_seed`].
pub const KEY_DOMAIN: &[u8] = b"Triskele NR key v1";

/// `F(k, x) = g^(k_0 · Π_{i: x_i = 1} k_i)` in the clear, as the 32-byte compressed Ristretto
/// encoding; `g` is the Ristretto basepoint. `key` is `k_0, k_1, ..., k_n` and `x` is
/// `x_1, ..., x_n` (so `key.len() == x.len() + 1`, else [`EngineError::LengthMismatch`]).
pub fn nr_clear(key: &[RistrettoScalar], x: &[bool]) -> Result<[u8; 32], EngineError> {
    let Some((k0, ks)) = key.split_first() else {
        return Err(EngineError::LengthMismatch {
            expected: x.len() + 1,
            got: 0,
        });
    };
    if ks.len() != x.len() {
        return Err(EngineError::LengthMismatch {
            expected: x.len() + 1,
            got: key.len(),
        });
    }
    let mut e = ks
        .iter()
        .zip(x)
        .filter(|(_, &bit)| bit)
        .fold(k0.0, |acc, (k, _)| acc * k.0);
    let y = RistrettoPoint::mul_base(&e).compress().to_bytes();
    e.zeroize();
    Ok(y)
}

/// A deterministic key `k_0, ..., k_n` (`n + 1` elements) from a seed of any length.
///
/// Recipe: SHAKE128 absorbs the ASCII string `"Triskele NR key v1"` ([`KEY_DOMAIN`]), then `n`
/// as a 64-bit little-endian integer, then `seed`. The output is read 64 bytes at a time; each
/// block, read as a little-endian 512-bit integer and reduced mod `ℓ`, gives the next key
/// element in the order `k_0, k_1, ..., k_n`; a block that reduces to zero is skipped (a
/// zero key element would make the PRF degenerate; this happens with probability `2^-252`
/// per block, i.e. never in practice).
pub fn key_from_seed(seed: &[u8], n: usize) -> Vec<RistrettoScalar> {
    let mut h = Shake128::default();
    h.update(KEY_DOMAIN);
    h.update(&(n as u64).to_le_bytes());
    h.update(seed);
    let mut xof = h.finalize_xof();
    let mut key = Vec::with_capacity(n.saturating_add(1));
    let mut block = [0u8; 64];
    while key.len() <= n {
        xof.read(&mut block);
        let k = RistrettoScalar::from_uniform_bytes(&block);
        if k.0 != Scalar::ZERO {
            key.push(k);
        }
    }
    block.zeroize();
    key
}

/// The `n` input bits of the integer `x`: `x_i` is bit `i - 1` of `x` (least significant bit
/// first), for `i = 1..=n`. `None` if `n > 128` or `x >= 2^n`.
pub fn input_from_u128(x: u128, n: usize) -> Option<Vec<bool>> {
    if n > 128 || (n < 128 && x >> n != 0) {
        return None;
    }
    Some((0..n).map(|i| (x >> i) & 1 == 1).collect())
}
