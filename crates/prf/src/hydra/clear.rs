//! The cleartext Hydra keystream (the reference for the MPC evaluation and the CLI).

use std::sync::OnceLock;

use triskele_field::{Fp, PrimeField};

use super::params::{
    Hydra, Matrix, BODY_EXTERNAL_FIRST, BODY_EXTERNAL_LAST, BODY_INTERNAL, WORDS_PER_HEAD,
};

/// The two signed sums of a 4-word half that the internal rounds and the rolling function
/// square or multiply: `(x0 - x1 + x2 - x3, x0 + x1 - x2 - x3)`.
pub(crate) fn half_sums<F: PrimeField>(x: &[F]) -> (F, F) {
    let (a, b, c, d) = (x[0], x[1], x[2], x[3]);
    (a - b + c - d, a + b - c - d)
}

fn add_assign<F: PrimeField>(x: &mut [F], y: &[F]) {
    for (a, b) in x.iter_mut().zip(y) {
        *a += *b;
    }
}

fn cube<F: PrimeField>(x: F) -> F {
    x.square() * x
}

impl<F: PrimeField> Hydra<F> {
    /// The body: from key `K`, nonce `N` and IV, the 8-word seed `(y, z)` of the heads, where
    /// `y = P_B(M_E (x + K)) + K` for `x = (N, IV_1, IV_2, IV_3)` is the state after all
    /// `2 + 42 + 4` rounds and `z` is the sum of the states after every round but the last.
    pub fn body(&self, key: &[F; 4], nonce: F, iv: &[F; 3]) -> [F; 8] {
        let mut s = [nonce, iv[0], iv[1], iv[2]];
        add_assign(&mut s, key);
        let mut s = self.me.apply(&s);
        let mut z = [F::ZERO; 4];
        let mut round = 0;
        let step = |s: &[F], m: &Matrix<F>, round: usize| -> Vec<F> {
            let mut out = m.apply(s);
            add_assign(&mut out, &self.rc_body[round]);
            out
        };
        for _ in 0..BODY_EXTERNAL_FIRST {
            let c: Vec<F> = s.iter().map(|x| cube(*x)).collect();
            s = step(&c, &self.me, round);
            add_assign(&mut z, &s);
            round += 1;
        }
        for _ in 0..BODY_INTERNAL {
            let (a, b) = half_sums(&s);
            let t = (a.square() + b).square();
            let c: Vec<F> = s.iter().map(|x| *x + t).collect();
            s = step(&c, &self.mi, round);
            add_assign(&mut z, &s);
            round += 1;
        }
        for r in 0..BODY_EXTERNAL_LAST {
            let c: Vec<F> = s.iter().map(|x| cube(*x)).collect();
            s = step(&c, &self.me, round);
            if r + 1 < BODY_EXTERNAL_LAST {
                add_assign(&mut z, &s);
            }
            round += 1;
        }
        add_assign(&mut s, key);
        [s[0], s[1], s[2], s[3], z[0], z[1], z[2], z[3]]
    }

    /// The rolling function: with `a(x) = x_1 - x_2 + x_3 - x_4`, `b(x) = x_1 + x_2 - x_3 - x_4`,
    /// `y += a(y) b(z)`, `z += b(y) a(z)` (one product each), then `M_I` on each half and the
    /// rolling constant.
    pub fn roll(&self, state: &[F; 8], constant: &[F; 8]) -> [F; 8] {
        let (ay, by) = half_sums(&state[..4]);
        let (az, bz) = half_sums(&state[4..]);
        let v = ay * bz;
        let w = by * az;
        let y: Vec<F> = state[..4].iter().map(|x| *x + v).collect();
        let z: Vec<F> = state[4..].iter().map(|x| *x + w).collect();
        let mut out = [F::ZERO; 8];
        out[..4].copy_from_slice(&self.mi.apply(&y));
        out[4..].copy_from_slice(&self.mi.apply(&z));
        add_assign(&mut out, constant);
        out
    }

    /// The heads' key `(K, M_E K)`.
    pub fn head_key(&self, key: &[F; 4]) -> [F; 8] {
        let mk = self.me.apply(key);
        [key[0], key[1], key[2], key[3], mk[0], mk[1], mk[2], mk[3]]
    }

    /// One head call with feed-forward: `P_H(state) + state`, where each of the 39 rounds
    /// adds `(sum of the first four words - sum of the last four)^2` to every word, then
    /// applies `M_H` and adds the round constant and the head key.
    pub fn head_call(&self, state: &[F; 8], head_key: &[F; 8]) -> [F; 8] {
        let mut s = *state;
        for rc in &self.rc_head {
            let t = (s[..4].iter().fold(F::ZERO, |a, b| a + *b)
                - s[4..].iter().fold(F::ZERO, |a, b| a + *b))
            .square();
            let c: Vec<F> = s.iter().map(|x| *x + t).collect();
            let m = self.mh.apply(&c);
            for (i, o) in s.iter_mut().enumerate() {
                *o = m[i] + rc[i] + head_key[i];
            }
        }
        add_assign(&mut s, state);
        s
    }

    /// The first `m` keystream words for key `K`, nonce `N` and IV (the reference's `gen_ks`):
    /// head `0` runs on the body's output, head `j >= 1` on the state rolled `j` times (with
    /// rolling constant `j - 1`), and each head gives 8 words.
    pub fn keystream(&self, key: &[F; 4], nonce: F, iv: &[F; 3], m: usize) -> Vec<F> {
        let heads = m.div_ceil(WORDS_PER_HEAD);
        let mut out = Vec::with_capacity(heads * WORDS_PER_HEAD);
        if heads == 0 {
            return out;
        }
        let hk = self.head_key(key);
        let mut state = self.body(key, nonce, iv);
        let rolling = Self::rolling_constants(heads - 1);
        for j in 0..heads {
            if j > 0 {
                state = self.roll(&state, &rolling[j - 1]);
            }
            out.extend_from_slice(&self.head_call(&state, &hk));
        }
        out.truncate(m);
        out
    }

    /// Encryption in the reference's stream mode: `c_i = m_i + ks_i`.
    pub fn encrypt(&self, key: &[F; 4], nonce: F, iv: &[F; 3], plain: &[F]) -> Vec<F> {
        let ks = self.keystream(key, nonce, iv, plain.len());
        plain.iter().zip(ks).map(|(m, k)| *m + k).collect()
    }

    /// Decryption: `m_i = c_i - ks_i`.
    pub fn decrypt(&self, key: &[F; 4], nonce: F, iv: &[F; 3], cipher: &[F]) -> Vec<F> {
        let ks = self.keystream(key, nonce, iv, cipher.len());
        cipher.iter().zip(ks).map(|(c, k)| *c - k).collect()
    }
}

/// The reference instance for `p = 2^127 + 45` ([`Fp`]), derived once per process.
pub fn reference() -> &'static Hydra<Fp> {
    static INSTANCE: OnceLock<Hydra<Fp>> = OnceLock::new();
    // p = 2^127 + 45 = 2 (mod 3) and p > 2^64, the conditions `Hydra::new` checks (tested).
    INSTANCE.get_or_init(Hydra::derive)
}

/// The first `m` keystream words of the reference instance for `p = 2^127 + 45` (the CLI's
/// `triskele prf --prf hydra --key K1,K2,K3,K4 --input IV1,IV2,IV3 --nonce N --count M`).
pub fn keystream(key: &[Fp; 4], nonce: Fp, iv: &[Fp; 3], m: usize) -> Vec<Fp> {
    reference().keystream(key, nonce, iv, m)
}
