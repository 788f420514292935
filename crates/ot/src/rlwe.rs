//! Lattice-based OT over `R_q = Z_q[X]/(X^512 + 1)`, `q = 15361`.
//!
//! * [`ring`]: the ring and its NTT;
//! * [`sample`]: noise (centered binomial or discrete Gaussian, sigma = 2);
//! * [`reconcile`]: Ding's reconciliation (hints and key extraction);
//! * [`rot`]: the ROTed random OT (3 messages);
//! * [`bdgm`]: the BDGM19 chosen-message OT (4 messages).
//!
//! Both protocols run Ding's one-round key exchange with the public
//! polynomial `a`: each party publishes `p = a s + 2 e`, and computes
//! `k = p' s + 2 e'` from the other's `p'`. The receiver shifts its `p` by a
//! hashed polynomial `h = H(seed)` when its bit is 1, so the sender obtains
//! two candidate keys, from `p` and `p + h`, and only the one of the branch
//! the receiver chose is shared with it.
//!
//! Ring elements travel in the NTT representation (as in NewHope and Kyber),
//! packed at 14 bits per coefficient; `a` and `h` are hashed directly into
//! that representation.

pub mod bdgm;
pub(crate) mod encode;
#[cfg(target_arch = "x86_64")]
pub(crate) mod encode_avx512;
pub(crate) mod hash;
#[cfg(target_arch = "x86_64")]
pub(crate) mod lanes_avx2;
#[cfg(target_arch = "x86_64")]
pub(crate) mod lanes_avx512;
pub mod ntt;
#[cfg(target_arch = "x86_64")]
pub(crate) mod ntt_avx2;
#[cfg(target_arch = "x86_64")]
pub(crate) mod ntt_avx512;
pub mod reconcile;
pub mod ring;
pub mod rot;
pub mod sample;
#[cfg(target_arch = "x86_64")]
pub(crate) mod sample_avx2;
#[cfg(target_arch = "x86_64")]
pub(crate) mod sample_avx512;

pub use bdgm::RlweOt;
pub use encode::{HINT_BYTES, POLY_BYTES};
pub use ntt::Backend;
pub use rot::RlweRot;
pub use sample::NoiseDistribution;

use crate::prg::{Domain, Prg};
use ring::{MontNttPoly, NttPoly, Poly};
use std::sync::OnceLock;

/// Bytes of the receiver's seed for the hashed polynomial.
pub const SEED_BYTES: usize = 32;

/// The public uniform polynomial `a`, derived by hashing a fixed label
/// ("nothing up my sleeve"), computed at first use.
pub fn public_a() -> &'static NttPoly {
    static A: OnceLock<NttPoly> = OnceLock::new();
    A.get_or_init(|| hash::hash_to_ntt(Domain::PublicPoly, b"a"))
}

/// `H(seed)`: a uniform polynomial in the NTT domain (BLAKE3 XOF with
/// rejection sampling on 14-bit chunks), the receiver's shift polynomial.
pub fn hash_to_poly(seed: &[u8]) -> NttPoly {
    hash::hash_to_ntt(Domain::HashToPoly, seed)
}

/// Samples a noise polynomial from a PRG keyed by `seed` (exposed for
/// benchmarks and statistical checks).
pub fn sample_noise(noise: NoiseDistribution, seed: &[u8; 32]) -> Poly {
    let mut prg = Prg::from_seed(seed);
    sample::sample_poly(noise, &mut prg, 1)
}

/// The secret state of one side of the key exchange.
pub(crate) struct KeyPair {
    /// `NTT(s) * 2^16`.
    pub(crate) s: MontNttPoly,
    /// The second error `2 e'`, added to the shared value.
    pub(crate) e2: Poly,
}

impl core::fmt::Debug for KeyPair {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str("KeyPair(..)")
    }
}

impl KeyPair {
    /// An all-zero key pair, to be filled by [`keygen`].
    pub(crate) fn zero() -> Self {
        KeyPair {
            s: MontNttPoly([0; ring::N]),
            e2: Poly::zero(),
        }
    }
}

/// Samples `s, e, e'` into `kp` (overwriting it) and returns `p = a s + 2
/// e` (NTT domain); see [`keygen_into`].
pub(crate) fn keygen(noise: NoiseDistribution, prg: &mut Prg, kp: &mut KeyPair) -> NttPoly {
    let mut p = NttPoly([0; ring::N]);
    keygen_into(noise, prg, kp, &mut p);
    p
}

/// Samples `s, e, e'` into `kp` and sets `p = a s + 2 e` (NTT domain),
/// overwriting both.
///
/// Every value is sampled straight into the array that keeps it and
/// transformed in place: `s` into the key pair (where it becomes
/// `NTT(s) * 2^16`), `e'` into the key pair, and `e` into `p`'s array,
/// which the product-sum then overwrites with `p`. The key pair is the
/// caller's (a receiver keeps it boxed in its state), so that the secrets
/// are never moved, which would leave copies on the stack; `p` too (a
/// message that the batch protocols reuse), so that it is not copied.
pub(crate) fn keygen_into(
    noise: NoiseDistribution,
    prg: &mut Prg,
    kp: &mut KeyPair,
    p: &mut NttPoly,
) {
    sample::sample_into(noise, prg, 1, &mut kp.s.0);
    sample::sample_into(noise, prg, 2, &mut p.0);
    sample::sample_into(noise, prg, 2, &mut kp.e2.0);
    kp.s.ntt_mont_in_place();
    p.set_rlwe_sample(public_a(), &kp.s);
}

/// `k = INTT(p * s) + 2 e'`, the value both sides reconcile, computed in
/// place in `k` (whatever it held; the caller's array, so that no copy of
/// the secret is left behind).
pub(crate) fn shared_value(k: &mut Poly, p: &NttPoly, kp: &KeyPair) {
    k.set_inv_ntt_of_product(p, &kp.s);
    k.add_assign(&kp.e2);
}

/// The sender's side of the two-branch key exchange that ROTed and BDGM19
/// share: its own sample `p` (returned, to send) and, for the receiver's
/// sample `p_r` and seed, the reconciliation hints and keys of both branches
/// `p_r` and `p_r + H(seed)` (one of which the receiver can also compute);
/// see [`sender_branches_into`].
pub(crate) fn sender_branches(
    noise: NoiseDistribution,
    prg: &mut Prg,
    p_r: &NttPoly,
    seed: &[u8; SEED_BYTES],
) -> (NttPoly, [reconcile::Hint; 2], [reconcile::ReconciledKey; 2]) {
    let mut p = NttPoly([0; ring::N]);
    let (hints, rkeys) = sender_branches_into(noise, prg, p_r, seed, &mut p);
    (p, hints, rkeys)
}

/// [`sender_branches`] with the sender's sample written into `p` (the
/// caller's message). The key pair and the shared values are wiped when
/// they go out of scope.
pub(crate) fn sender_branches_into(
    noise: NoiseDistribution,
    prg: &mut Prg,
    p_r: &NttPoly,
    seed: &[u8; SEED_BYTES],
    p: &mut NttPoly,
) -> ([reconcile::Hint; 2], [reconcile::ReconciledKey; 2]) {
    let mut keys = KeyPair::zero();
    keygen_into(noise, prg, &mut keys, p);
    let mut k = [Poly::zero(), Poly::zero()];
    shared_value(&mut k[0], p_r, &keys);
    // `p_r + H(seed)`, summed in place into the hash's array.
    let mut p1 = hash::hash_to_ntt(Domain::HashToPoly, seed);
    p1.add_assign(p_r);
    shared_value(&mut k[1], &p1, &keys);
    let hints = [reconcile::signal(&k[0]), reconcile::signal(&k[1])];
    let rkeys = [
        reconcile::extract(&k[0], &hints[0]),
        reconcile::extract(&k[1], &hints[1]),
    ];
    (hints, rkeys)
}

#[cfg(test)]
mod tests {
    #![allow(
        clippy::unwrap_used,
        clippy::expect_used,
        clippy::panic,
        clippy::needless_range_loop
    )]
    use super::reconcile::{extract, signal};
    use super::ring::{N, Q};
    use super::*;

    /// Both sides of the key exchange agree, and the distance between their
    /// values stays far below the reconciliation margin (3839).
    #[test]
    fn key_exchange_agrees_with_margin() {
        for noise in [
            NoiseDistribution::CenteredBinomial,
            NoiseDistribution::DiscreteGaussian,
        ] {
            let mut prg = Prg::from_seed(&[9; 32]);
            let mut max_dist = 0i32;
            let mut sum_sq = 0f64;
            let runs = 300;
            for _ in 0..runs {
                let (mut ka, mut kb) = (KeyPair::zero(), KeyPair::zero());
                let pa = keygen(noise, &mut prg, &mut ka);
                let pb = keygen(noise, &mut prg, &mut kb);
                let (mut va, mut vb) = (Poly::zero(), Poly::zero());
                shared_value(&mut va, &pb, &ka);
                shared_value(&mut vb, &pa, &kb);
                let hint = signal(&vb);
                assert_eq!(extract(&va, &hint), extract(&vb, &hint));
                for (x, y) in va.coeffs().iter().zip(vb.coeffs().iter()) {
                    let d = (i32::from(*x) - i32::from(*y)).rem_euclid(i32::from(Q));
                    let d = d.min(i32::from(Q) - d);
                    max_dist = max_dist.max(d);
                    sum_sq += f64::from(d).powi(2);
                }
            }
            let sd = (sum_sq / (runs * N) as f64).sqrt();
            // Predicted 2 * sqrt(2 * 512 * 16 + 2 * 4) ~ 256.
            assert!((200.0..320.0).contains(&sd), "{noise:?}: sd {sd}");
            assert!(max_dist < 1800, "{noise:?}: max distance {max_dist}");
        }
    }
}
