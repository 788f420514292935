//! Hydra on replicated shares: many independent instances side by side, one `Party::mul` per
//! multiplicative layer for all of them.
//!
//! Each state word is an [`RssVec`] whose lanes are the instances (word-major layout), so the
//! linear layers, round constants and key additions are local on both share components, and
//! every layer of products (4 squares, 4 cubes, 1 or 2 squares, 2 rolling products, one
//! square per head) is one call of [`Party::mul`] over all lanes. In the malicious model
//! `Party::mul` records each product as a triple for [`Party::verify_recorded`].

use triskele_engine::{EngineError, Lift, Party, SecurityModel};
use triskele_field::{Fp, PrimeField};
use triskele_share::{PartyId, RssVec};

use super::clear::reference;
use super::params::{
    heads_for, Hydra, Matrix, BODY_EXTERNAL_FIRST, BODY_EXTERNAL_LAST, BODY_INTERNAL,
    WORDS_PER_HEAD,
};

/// A state: one sharing per word, one lane per instance (or per instance and head).
type Words<F> = Vec<RssVec<F>>;

/// `M x` on shares, lane-wise (local: the same map on both components).
fn linear<F: PrimeField>(m: &Matrix<F>, x: &[RssVec<F>]) -> Words<F> {
    let first: Vec<&[F]> = x.iter().map(|w| w.first.as_slice()).collect();
    let second: Vec<&[F]> = x.iter().map(|w| w.second.as_slice()).collect();
    m.apply_lanes(&first)
        .into_iter()
        .zip(m.apply_lanes(&second))
        .map(|(first, second)| RssVec { first, second })
        .collect()
}

/// `sum_j sign_j x_j` on shares (signs `+1` / `-1`), lane-wise.
fn signed_sum<F: PrimeField>(x: &[RssVec<F>], signs: &[i8]) -> RssVec<F> {
    let lanes = x.first().map_or(0, RssVec::len);
    let mut out = RssVec::zeros(lanes);
    for (w, &sg) in x.iter().zip(signs) {
        for (o, v) in [(&mut out.first, &w.first), (&mut out.second, &w.second)] {
            if sg < 0 {
                o.iter_mut().zip(v).for_each(|(a, b)| *a -= *b);
            } else {
                F::add_assign_slice(o, v);
            }
        }
    }
    out
}

/// The signed sums of a half, `(x0 - x1 + x2 - x3, x0 + x1 - x2 - x3)`, on shares.
fn half_sums<F: PrimeField>(x: &[RssVec<F>]) -> (RssVec<F>, RssVec<F>) {
    (
        signed_sum(x, &[1, -1, 1, -1]),
        signed_sum(x, &[1, 1, -1, -1]),
    )
}

/// Adds the same sharing to every word.
fn add_to_all<F: PrimeField>(x: &mut [RssVec<F>], t: &RssVec<F>) {
    for w in x.iter_mut() {
        w.add_assign(t);
    }
}

/// Adds public per-word constants (the same for every lane).
fn add_constants<F: PrimeField>(id: PartyId, x: &mut [RssVec<F>], c: &[F]) {
    for (w, c) in x.iter_mut().zip(c) {
        w.add_constant_scalar(id, *c);
    }
}

/// All products `xs[k] * ys[k]` in one call of [`Party::mul`] (one round).
fn mul_layer<F: PrimeField + Lift, M: SecurityModel>(
    party: &mut Party<M>,
    xs: &[&RssVec<F>],
    ys: &[&RssVec<F>],
) -> Result<Words<F>, EngineError> {
    let mut x = RssVec::default();
    let mut y = RssVec::default();
    for (a, b) in xs.iter().zip(ys) {
        if a.len() != b.len() {
            return Err(EngineError::LengthMismatch {
                expected: a.len(),
                got: b.len(),
            });
        }
        x.extend(a);
        y.extend(b);
    }
    let z = party.mul(&x, &y)?;
    let mut out = Vec::with_capacity(xs.len());
    let mut at = 0;
    for a in xs {
        let part = z
            .slice(at..at + a.len())
            .ok_or(EngineError::LengthMismatch {
                expected: at + a.len(),
                got: z.len(),
            })?;
        at += a.len();
        out.push(part);
    }
    Ok(out)
}

/// Cubes every word: squares in one round, then the products with the words in a second.
fn cube_layer<F: PrimeField + Lift, M: SecurityModel>(
    party: &mut Party<M>,
    s: &[RssVec<F>],
) -> Result<Words<F>, EngineError> {
    let refs: Vec<&RssVec<F>> = s.iter().collect();
    let sq = mul_layer(party, &refs, &refs)?;
    let sq_refs: Vec<&RssVec<F>> = sq.iter().collect();
    mul_layer(party, &sq_refs, &refs)
}

/// Word `w` of the key for every lane: a key of 4 elements is shared by all `n` instances,
/// a key of `4 n` elements gives instance `k` the elements `4k .. 4k + 4`.
fn key_words<F: PrimeField>(key: &RssVec<F>, n: usize) -> Result<Words<F>, EngineError> {
    let pick = |v: &[F], w: usize| -> Vec<F> {
        if key.len() == 4 {
            vec![v[w]; n]
        } else {
            (0..n).map(|k| v[4 * k + w]).collect()
        }
    };
    if key.len() != 4 && key.len() != 4 * n {
        return Err(EngineError::LengthMismatch {
            expected: 4 * n,
            got: key.len(),
        });
    }
    Ok((0..4)
        .map(|w| RssVec {
            first: pick(&key.first, w),
            second: pick(&key.second, w),
        })
        .collect())
}

/// Repeats every lane vector `times` times (lane `j n + k` is lane `k` of the input).
fn tile<F: PrimeField>(x: &[RssVec<F>], times: usize) -> Words<F> {
    x.iter()
        .map(|w| {
            let mut out = RssVec::default();
            for _ in 0..times {
                out.extend(w);
            }
            out
        })
        .collect()
}

impl<F: PrimeField + Lift> Hydra<F> {
    /// The body on shares for `n` lanes: returns the 8 words `(y, z)` of the heads' seed.
    fn body_mpc<M: SecurityModel>(
        &self,
        party: &mut Party<M>,
        key: &[RssVec<F>],
        nonces: &[F],
        ivs: &RssVec<F>,
    ) -> Result<Words<F>, EngineError> {
        let id = party.id();
        let n = nonces.len();
        let mut s: Words<F> = Vec::with_capacity(4);
        s.push(RssVec::constant(id, nonces));
        for j in 0..3 {
            s.push(RssVec {
                first: (0..n).map(|k| ivs.first[3 * k + j]).collect(),
                second: (0..n).map(|k| ivs.second[3 * k + j]).collect(),
            });
        }
        for (w, k) in s.iter_mut().zip(key) {
            w.add_assign(k);
        }
        let mut s = linear(&self.me, &s);
        let mut z: Words<F> = (0..4).map(|_| RssVec::zeros(n)).collect();
        let mut round = 0;
        for _ in 0..BODY_EXTERNAL_FIRST {
            let c = cube_layer(party, &s)?;
            s = linear(&self.me, &c);
            add_constants(id, &mut s, &self.rc_body[round]);
            for (a, b) in z.iter_mut().zip(&s) {
                a.add_assign(b);
            }
            round += 1;
        }
        for _ in 0..BODY_INTERNAL {
            let (a, b) = half_sums(&s);
            let mut t = mul_layer(party, &[&a], &[&a])?.remove(0);
            t.add_assign(&b);
            let t = mul_layer(party, &[&t], &[&t])?.remove(0);
            add_to_all(&mut s, &t);
            s = linear(&self.mi, &s);
            add_constants(id, &mut s, &self.rc_body[round]);
            for (a, b) in z.iter_mut().zip(&s) {
                a.add_assign(b);
            }
            round += 1;
        }
        for r in 0..BODY_EXTERNAL_LAST {
            let c = cube_layer(party, &s)?;
            s = linear(&self.me, &c);
            add_constants(id, &mut s, &self.rc_body[round]);
            if r + 1 < BODY_EXTERNAL_LAST {
                for (a, b) in z.iter_mut().zip(&s) {
                    a.add_assign(b);
                }
            }
            round += 1;
        }
        for (w, k) in s.iter_mut().zip(key) {
            w.add_assign(k);
        }
        s.extend(z);
        Ok(s)
    }

    /// One rolling step on shares (2 products per lane, one round).
    fn roll_mpc<M: SecurityModel>(
        &self,
        party: &mut Party<M>,
        state: &[RssVec<F>],
        constant: &[F; 8],
    ) -> Result<Words<F>, EngineError> {
        let (ay, by) = half_sums(&state[..4]);
        let (az, bz) = half_sums(&state[4..]);
        let vw = mul_layer(party, &[&ay, &by], &[&bz, &az])?;
        let mut y = state[..4].to_vec();
        let mut z = state[4..].to_vec();
        add_to_all(&mut y, &vw[0]);
        add_to_all(&mut z, &vw[1]);
        let mut out = linear(&self.mi, &y);
        out.extend(linear(&self.mi, &z));
        add_constants(party.id(), &mut out, constant);
        Ok(out)
    }

    /// All head calls side by side (39 rounds whatever their number), with feed-forward.
    fn heads_mpc<M: SecurityModel>(
        &self,
        party: &mut Party<M>,
        start: &[RssVec<F>],
        head_key: &[RssVec<F>],
    ) -> Result<Words<F>, EngineError> {
        let id = party.id();
        let mut s = start.to_vec();
        for rc in &self.rc_head {
            let t = signed_sum(&s, &[1, 1, 1, 1, -1, -1, -1, -1]);
            let t = mul_layer(party, &[&t], &[&t])?.remove(0);
            add_to_all(&mut s, &t);
            s = linear(&self.mh, &s);
            add_constants(id, &mut s, rc);
            for (w, k) in s.iter_mut().zip(head_key) {
                w.add_assign(k);
            }
        }
        for (w, x) in s.iter_mut().zip(start) {
            w.add_assign(x);
        }
        Ok(s)
    }

    /// The first `words` keystream words of `n = nonces.len()` independent instances on
    /// replicated shares (see [`keystream_mpc`] for the layout and the costs).
    pub fn keystream_mpc<M: SecurityModel>(
        &self,
        party: &mut Party<M>,
        key: &RssVec<F>,
        nonces: &[F],
        ivs: &RssVec<F>,
        words: usize,
    ) -> Result<RssVec<F>, EngineError> {
        let n = nonces.len();
        if ivs.len() != 3 * n || ivs.second.len() != ivs.first.len() {
            return Err(EngineError::LengthMismatch {
                expected: 3 * n,
                got: ivs.len(),
            });
        }
        if key.second.len() != key.first.len() {
            return Err(EngineError::LengthMismatch {
                expected: key.first.len(),
                got: key.second.len(),
            });
        }
        let heads = heads_for(words);
        if heads == 0 || n == 0 {
            return Ok(RssVec::zeros(0));
        }
        party
            .model()
            .reserve_products::<F>(n.saturating_mul(super::Cost::of(words).multiplications));
        let key = key_words(key, n)?;
        let mut states = vec![self.body_mpc(party, &key, nonces, ivs)?];
        for rc in Self::rolling_constants(heads - 1) {
            let next = match states.last() {
                Some(last) => self.roll_mpc(party, last, &rc)?,
                None => break,
            };
            states.push(next);
        }
        // Lane j n + k: head j of instance k.
        let start: Words<F> = (0..2 * 4)
            .map(|w| {
                let mut v = RssVec::default();
                for st in &states {
                    v.extend(&st[w]);
                }
                v
            })
            .collect();
        let mut head_key = key.clone();
        head_key.extend(linear(&self.me, &key));
        let head_key = tile(&head_key, heads);
        let out = self.heads_mpc(party, &start, &head_key)?;
        let mut first = Vec::with_capacity(n * words);
        let mut second = Vec::with_capacity(n * words);
        for k in 0..n {
            for i in 0..words {
                let (j, w) = (i / WORDS_PER_HEAD, i % WORDS_PER_HEAD);
                first.push(out[w].first[j * n + k]);
                second.push(out[w].second[j * n + k]);
            }
        }
        Ok(RssVec { first, second })
    }
}

/// The first `words` keystream words of `n = nonces.len()` independent Hydra instances over
/// `p = 2^127 + 45` (the [`reference()`] instance), evaluated on replicated shares.
///
/// * `key`: the shared key, either 4 elements used by every instance or `4 n` elements,
///   instance `k` taking elements `4k .. 4k + 4`.
/// * `nonces`: one **public** nonce per instance (it is the counter of the stream mode and
///   needs no secrecy; public is what keeps it free of communication).
/// * `ivs`: the **shared** IVs, `3 n` elements, instance `k` taking `3k .. 3k + 3`. A public
///   IV is shared for free with [`RssVec::constant`].
///
/// Returns the `n * words` shared keystream words, instance-major (word `i` of instance `k`
/// at `k * words + i`); open them with `Party::open_output` (after
/// [`Party::verify_recorded`] in the malicious model) or use them as shares (e.g. add a
/// shared plaintext for a shared ciphertext).
///
/// Cost per instance (see [`super::Cost::of`]): 171 multiplications for the first 8 words
/// (body 132: each of the 6 external rounds cubes 4 words with 2 products, each of the 42
/// internal rounds squares twice; head 39: one square per round) and 41 for every further 8
/// (2 rolling products and a head), each multiplication one element (16 bytes) sent by every
/// party to its previous neighbour. Rounds: 96 for the body, one per rolling step and 39 for
/// all heads together, so 135 for up to 8 words, independent of `n`. No preprocessing.
pub fn keystream_mpc<M: SecurityModel>(
    party: &mut Party<M>,
    key: &RssVec<Fp>,
    nonces: &[Fp],
    ivs: &RssVec<Fp>,
    words: usize,
) -> Result<RssVec<Fp>, EngineError> {
    reference().keystream_mpc(party, key, nonces, ivs, words)
}
