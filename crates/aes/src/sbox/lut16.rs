//! `lut16`: GF(2^8) inversion by Protocol 3 of MAESTRO (Morita et al., USENIX Security '25,
//! ePrint 2024/1317) with the `GF(2^4)` inversion done by a length-16 one-hot table lookup
//! (Protocol 4); PROTOCOLS.md §4.3.
//!
//! * Preprocessing: one random one-hot vector `[[e]]` of length 16 and its position `[[r]]`
//!   per inversion by Protocol 8 (`super::ohv16`): 11 bit products, bit-sliced 16 per word;
//!   `2 ⌈n/16⌉ · 11` bytes to the previous party, 2 rounds for the whole batch.
//! * Online, per layer (2 rounds): locally `(a_h, a_l) = φ(x)` and an additive share of the
//!   norm `v = λ a_h^2 + a_h a_l + a_l^2`; round 1 opens `c = v + r` (every party sends
//!   `v^(i) + r_i + α_i` to both neighbours); locally `[[v^-1]] = Σ_j e[j] inv(c ⊕ j)`
//!   (Protocol 4); round 2 reshares `b_h = a_h v^-1`, `b_l = (a_h + a_l) v^-1` to the previous
//!   party; `x^-1 = φ^-1(b_h Y + b_l)`.
//! * Cost per inversion and party: 0.5 byte to next, 1.5 bytes to prev (AES-128: 80 + 240
//!   B/block, 20 rounds, 30 messages per channel); preprocessing 220 B/block. No check.
//!
//! The same preprocessing pool and online layer run under the active model in
//! [`super::mal_lut16`], which hashes the opened offset shares into the views and records
//! the relations that `Verify` checks.
//!
//! \[DEV\] (§4.3): the opened share is masked with a fresh zero-share `α_i`. Without it, the
//! party `P_{i+1}`, which knows `r_{i+2}`, would learn `v^(i+2)`, a quadratic function of a
//! share component it lacks. The test `received_offset_is_independent_of_the_secret` checks
//! this on the exact function used by the protocol.

use core::ops::Range;
use std::sync::Arc;

use rayon::prelude::*;
use triskele_engine::{EngineError, Party, SecurityModel, SemiHonest, View};
use triskele_field::{Bulk, Encode, Gf2p4, Gf2p8, OneHotLookup16};
use triskele_share::{local_product, Direction, Prss, RssVec};

use super::ohv16::{random_ohv16, Ohv16, OhvCheck};
use super::tower::{from_halves, last_round_pieces, left_operand, split_tower, NibbleLinear};
use super::SboxProtocol;

/// Instances per parallel work item.
const PAR: usize = 1 << 13;

/// The semi-honest `lut16` protocol with its preprocessed one-hot vectors.
#[derive(Debug, Default)]
pub struct Lut16 {
    pool: Ohv16Pool,
}

/// Preprocessed one-hot vectors, used up front to back by the online layers.
#[derive(Debug, Default)]
pub(crate) struct Ohv16Pool {
    pool: Ohv16,
    /// Next unused instance of `pool`.
    pos: usize,
}

impl Ohv16Pool {
    /// Appends fresh vectors (keeping unused ones from an earlier call).
    pub(crate) fn add(&mut self, fresh: Ohv16) {
        if self.pos >= self.pool.e.first.len() {
            self.pool = fresh;
        } else {
            let keep = |v: &mut Vec<u16>, add: Vec<u16>, pos: usize| {
                v.drain(..pos);
                v.extend(add);
            };
            // Copies the kept vectors if a malicious run's record still shares them.
            let (e, add) = (
                Arc::make_mut(&mut self.pool.e),
                Arc::unwrap_or_clone(fresh.e),
            );
            keep(&mut e.first, add.first, self.pos);
            keep(&mut e.second, add.second, self.pos);
            self.pool.r.first.drain(..self.pos);
            self.pool.r.second.drain(..self.pos);
            self.pool.r.extend(&fresh.r);
        }
        self.pos = 0;
    }

    /// The next `m` unused instances (their indices in [`Ohv16Pool::get`]).
    fn take(&mut self, m: usize) -> Result<Range<usize>, EngineError> {
        EngineError::ensure_preprocessed(m, self.pool.e.first.len().saturating_sub(self.pos))?;
        let range = self.pos..self.pos + m;
        self.pos += m;
        Ok(range)
    }

    /// The vectors and positions.
    pub(crate) fn get(&self) -> &Ohv16 {
        &self.pool
    }
}

/// Protocol 4 for `T = inv_16`: bit `t` of `INV_LOOKUP.masks()[c][b]` is bit `b` of
/// `inv(c ⊕ t)`.
pub(crate) const INV_LOOKUP: OneHotLookup16 = OneHotLookup16::new(&Gf2p4::INV_TABLE);

/// This party's share of the opened offset: `c^(i) = v^(i) + r_i + α_i` with the additive share
/// `v^(i) = λ a_{h,i}^2 + a_{l,i}^2 + (a_h a_l)^(i)` of the norm and a fresh zero-share `α_i`
/// drawn from `prss`. This is exactly what the party sends to both neighbours.
pub(crate) fn masked_norm_share(
    prss: &mut Prss,
    a_h: &RssVec<Gf2p4>,
    a_l: &RssVec<Gf2p4>,
    r_first: &[Gf2p4],
) -> Vec<Gf2p4> {
    let n = a_h.len();
    let mut c = vec![Gf2p4(0); n];
    local_product(&mut c, a_h, a_l);
    let (ls, sq) = (NibbleLinear::LAMBDA_SQUARE, NibbleLinear::SQUARE);
    for (((c, h), l), r) in c.iter_mut().zip(&a_h.first).zip(&a_l.first).zip(r_first) {
        c.0 ^= ls.get(*h) ^ sq.get(*l) ^ r.0;
    }
    let mut scratch = Vec::new();
    prss.add_zero_share(&mut c, &mut scratch);
    c
}

/// Round 1 of a layer: opens `c = v + r` from this party's masked share `c^(i)` (sent to both
/// neighbours; the two received shares are added).
///
/// Under an active model the received shares are absorbed into the views (\[DEV\]
/// PROTOCOLS.md §5.6): the one from `P_{i-1}` into `V_prev`, the one from `P_{i+1}` into
/// `V_next`. The compare-view matches `P_j`'s `V_prev` with `P_{j+1}`'s `V_next`, i.e. the
/// share `P_{j-1}` sent to `P_j` with the one it sent to `P_{j+1}`; so a party that sends
/// different shares to its two neighbours makes both honest parties abort, whatever it puts in
/// its own views. Its own share is not absorbed: it is one value sent to both, and the two
/// receivers' hashes already compare what arrived (a consistent but wrong share is an additive
/// error in `c`, which the gf4p4 relation of mal-lut16 catches).
fn open_offset<M: SecurityModel>(
    party: &mut Party<M>,
    mut c: Vec<Gf2p4>,
) -> Result<Vec<Gf2p4>, EngineError> {
    let m = c.len();
    party.send_elems(Direction::Next, &c)?;
    party.send_elems(Direction::Prev, &c)?;
    let from_next = party.recv_elems::<Gf2p4>(Direction::Next, m)?;
    let from_prev = party.recv_elems::<Gf2p4>(Direction::Prev, m)?;
    if M::MALICIOUS {
        for (view, share) in [(View::Prev, &from_prev), (View::Next, &from_next)] {
            party.model().absorb(view, &Gf2p4::encode_to_vec(share));
        }
    }
    Gf2p4::add_assign_slice(&mut c, &from_next);
    Gf2p4::add_assign_slice(&mut c, &from_prev);
    Ok(c)
}

/// The shared values of one online layer (PROTOCOLS.md §4.3), which mal-lut16 certifies.
pub(crate) struct Layer {
    /// `[[a_h]]` in `[0, m)`, `[[a_h + a_l]]` in `[m, 2m)`.
    pub left: RssVec<Gf2p4>,
    /// `[[a_l]]`.
    pub a_l: RssVec<Gf2p4>,
    /// The opened offset `c = v + r`.
    pub c: Vec<Gf2p4>,
    /// `[[v^-1]]` by Protocol 4.
    pub vinv: RssVec<Gf2p4>,
    /// `[[b_h]] = [[a_h v^-1]]` in `[0, m)`, `[[b_l]] = [[(a_h + a_l) v^-1]]` in `[m, 2m)`.
    pub b: RssVec<Gf2p4>,
    /// The preprocessed instances used ([`Ohv16Pool::get`]).
    pub used: Range<usize>,
}

impl Layer {
    /// `[[x^-1]] = φ^-1([[b_h]] Y + [[b_l]])`.
    pub(crate) fn output(&self) -> RssVec<Gf2p8> {
        from_halves(&self.b, self.a_l.len())
    }
}

/// One online layer of `lut16` on `x` (2 rounds; see the module documentation), consuming
/// `x.len()` preprocessed vectors of `pool`. Under an active model the opened offset is hashed
/// into the views ([`open_offset`]); nothing is recorded here.
pub(crate) fn online_layer<M: SecurityModel>(
    party: &mut Party<M>,
    pool: &mut Ohv16Pool,
    x: &RssVec<Gf2p8>,
) -> Result<Layer, EngineError> {
    let m = x.len();
    let used = pool.take(m)?;
    let Ohv16 { e, r } = pool.get();
    let (e1, e2) = (&e.first[used.clone()], &e.second[used.clone()]);

    // Round 1: open c = v + r (masked share to both neighbours).
    let (a_h, a_l) = split_tower(x);
    let c = masked_norm_share(party.prss(), &a_h, &a_l, &r.first[used.clone()]);
    let c = open_offset(party, c)?;

    // Protocol 4: [[v^-1]] = [[inv(c + r)]].
    let mut vinv = RssVec::<Gf2p4>::zeros(m);
    for (out, e) in [(&mut vinv.first, e1), (&mut vinv.second, e2)] {
        out.par_chunks_mut(PAR)
            .zip(e.par_chunks(PAR).zip(c.par_chunks(PAR)))
            .for_each(|(o, (e, c))| INV_LOOKUP.apply(e, c, o));
    }

    // Round 2: b_h = a_h v^-1, b_l = (a_h + a_l) v^-1, one reshare to prev.
    let left = left_operand(a_h, &a_l);
    let b = party.mul_covered_parts(&last_round_pieces(&left, &vinv))?;
    Ok(Layer {
        left,
        a_l,
        c,
        vinv,
        b,
        used,
    })
}

impl SboxProtocol<SemiHonest> for Lut16 {
    fn preprocess(&mut self, party: &mut Party<SemiHonest>, n: usize) -> Result<(), EngineError> {
        self.pool.add(random_ohv16(party, n, OhvCheck::Products)?);
        Ok(())
    }

    fn invert(
        &mut self,
        party: &mut Party<SemiHonest>,
        x: &mut RssVec<Gf2p8>,
    ) -> Result<(), EngineError> {
        *x = online_layer(party, &mut self.pool, x)?.output();
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;

    /// Instances `from..to` as one-hot vectors with component values `j` and `!j`.
    fn instances(from: u16, to: u16) -> Ohv16 {
        let e = RssVec {
            first: (from..to).collect(),
            second: (from..to).map(|j| !j).collect(),
        };
        let n = e.first.len();
        Ohv16 {
            e: Arc::new(e),
            r: RssVec::zeros(n),
        }
    }

    /// Unused instances are kept before fresh ones; vectors shared with a record (as a
    /// malicious run's relations hold them) are copied, not changed.
    #[test]
    fn pool_keeps_unused_instances_and_leaves_shared_vectors_alone() {
        let mut pool = Ohv16Pool::default();
        let first = instances(0, 10);
        let record = Arc::clone(&first.e);
        pool.add(first);
        assert_eq!(pool.take(4).unwrap(), 0..4);
        let fresh = instances(100, 105);
        let fresh_record = Arc::clone(&fresh.e);
        pool.add(fresh);
        let want: Vec<u16> = (4..10).chain(100..105).collect();
        assert_eq!(pool.get().e.first, want);
        assert_eq!(
            pool.get().e.second,
            want.iter().map(|j| !j).collect::<Vec<_>>()
        );
        assert_eq!(record.first, (0..10).collect::<Vec<_>>());
        assert_eq!(fresh_record.first, (100..105).collect::<Vec<_>>());
        assert_eq!(pool.take(11).unwrap(), 0..11);
        assert!(pool.take(1).is_err());
    }
    use rand_chacha::ChaCha20Rng;
    use triskele_field::Field;
    use triskele_share::{deal, prss_from_rng};

    /// \[DEV\] §5.6, in isolation: a party that sends a different offset share to one
    /// neighbour (one bit flipped on the way to next, nothing else inconsistent) makes both
    /// honest parties fail the compare-view right after the opening; without the flip
    /// everybody passes. Without hashing the received shares the views would be empty and
    /// equal, and this test fails.
    #[test]
    fn one_sided_offset_share_fails_the_compare_view() {
        use triskele_engine::{EngineError, Malicious};
        use triskele_net::{NetOptions, Phase, Tamper};
        use triskele_share::PartyId;
        let run = |tamper: Option<Tamper>| -> Vec<Result<Vec<Gf2p4>, EngineError>> {
            let nets = triskele_net::in_memory(&NetOptions {
                tamper,
                ..NetOptions::default()
            });
            std::thread::scope(|s| {
                let hs: Vec<_> = nets
                    .into_iter()
                    .map(|net| {
                        s.spawn(move || {
                            let mut party = Party::<Malicious>::setup(net)?;
                            party.set_phase(Phase::Online);
                            let share = party.prss().zero_share::<Gf2p4>(9);
                            let c = open_offset(&mut party, share)?;
                            party.compare_view()?;
                            Ok(c)
                        })
                    })
                    .collect();
                hs.into_iter()
                    .map(|h| h.join().unwrap_or_else(|_| unreachable!("party thread")))
                    .collect()
            })
        };
        for r in run(None) {
            assert!(matches!(r, Ok(c) if c == vec![Gf2p4(0); 9]));
        }
        for cheater in PartyId::ALL {
            let t = Tamper::new(cheater, Phase::Online, Some(Direction::Next), 0, 5);
            let res = run(Some(t.clone()));
            assert!(t.tampered().is_some());
            for p in PartyId::ALL.into_iter().filter(|p| *p != cheater) {
                let r = &res[p.index()];
                assert!(
                    matches!(r, Err(EngineError::Abort(_))),
                    "cheater {cheater}: honest {p} returned {r:?}"
                );
            }
        }
    }

    #[test]
    fn masks_match_the_known_answers() {
        // PROTOCOLS.md §7: rows c = 0 and c = 15 of the inv_16 masks.
        assert_eq!(INV_LOOKUP.masks()[0], [0x4976, 0x53e8, 0x2dd8, 0x953c]);
        assert_eq!(INV_LOOKUP.masks()[0], [18806, 21480, 11736, 38204]);
        assert_eq!(INV_LOOKUP.masks()[15], [28306, 6090, 7092, 15529]);
        for c in 0..16u8 {
            for r in 0..16u8 {
                let e = 1u16 << r;
                assert_eq!(INV_LOOKUP.get(e, Gf2p4(c)), Gf2p4(c ^ r).inverse());
            }
        }
    }

    /// Runs the local part of round 1 for three simulated parties on `n` copies of the secret
    /// `secret` and returns P1's view: its two share components of `(a_h, a_l)`, its components
    /// `(r_1, r_2)` and the share `c^(2)` it receives from P2.
    #[allow(clippy::type_complexity)]
    fn p1_view(
        secret: u8,
        n: usize,
        seed: u64,
    ) -> ((RssVec<Gf2p4>, RssVec<Gf2p4>), RssVec<Gf2p4>, Vec<Gf2p4>) {
        let mut rng = ChaCha20Rng::seed_from_u64(seed);
        let xs = deal(&vec![Gf2p8(secret); n], &mut rng);
        let mut prss = prss_from_rng(&mut rng);
        let mut views = Vec::new();
        for (i, p) in prss.iter_mut().enumerate() {
            let r = p.random_rss::<Gf2p4>(n);
            let (h, l) = split_tower(&xs[i]);
            let c = masked_norm_share(p, &h, &l, &r.first);
            views.push(((h, l), r, c));
        }
        let c2 = views[1].2.clone();
        let (shares, r, _) = views.swap_remove(0);
        (shares, r, c2)
    }

    /// P1's guess of `v^(2)` under the hypothesis `x = guess`: it knows components 1 and 2 of
    /// `(a_h, a_l)` and derives component 3 from the hypothesis.
    fn predicted_v2(shares: &(RssVec<Gf2p4>, RssVec<Gf2p4>), guess: u8) -> Vec<Gf2p4> {
        let t = triskele_field::Gf4Tower::from_gf2p8(Gf2p8(guess));
        let (h, l) = shares;
        (0..h.len())
            .map(|k| {
                let (h2, l2) = (h.second[k], l.second[k]);
                let h3 = h.first[k] + h2 + t.high();
                let l3 = l.first[k] + l2 + t.low();
                let ls = Gf2p4(NibbleLinear::LAMBDA_SQUARE.get(h2));
                let sq = Gf2p4(NibbleLinear::SQUARE.get(l2));
                ls + sq + h2 * l2 + h2 * l3 + h3 * l2
            })
            .collect()
    }

    /// Histogram of `c^(2) + r_2 + v^(2)(guess)` over the instances.
    fn histogram(received: &[Gf2p4], r2: &[Gf2p4], predicted: &[Gf2p4]) -> [usize; 16] {
        let mut h = [0usize; 16];
        for ((c, r), v) in received.iter().zip(r2).zip(predicted) {
            h[(*c + *r + *v).0 as usize] += 1;
        }
        h
    }

    fn uniform(h: &[usize; 16], n: usize) -> bool {
        // Expected n/16 per value; 4096 samples give a standard deviation of ~15.5, the bounds
        // are more than 8 standard deviations away.
        h.iter().all(|&k| k > n / 32 && k < 3 * n / 32)
    }

    /// [DEV] §4.3: what P1 receives from P2 in round 1 must be independent of the secret given
    /// everything P1 knows. P1 can remove `r_2` and every term of `v^(2)` except those in the
    /// component `x_3` it lacks; testing the hypothesis `x = guess` for the true and a wrong
    /// secret must give the same (uniform) distribution. Without the zero-share the statistic
    /// is identically 0 for the true secret, so this test fails if the mask is removed.
    #[test]
    fn received_offset_is_independent_of_the_secret() {
        let n = 4096;
        for (secret, other) in [(0x53u8, 0x00u8), (0x00, 0xca), (0xff, 0x01)] {
            let (shares, r, c2) = p1_view(secret, n, u64::from(secret) + 11);
            for guess in [secret, other] {
                let h = histogram(&c2, &r.second, &predicted_v2(&shares, guess));
                assert!(uniform(&h, n), "secret {secret:#x} guess {guess:#x}: {h:?}");
            }
        }
    }

    /// The statistic above does detect the leak: without the zero-share (`c^(2) + α_2`),
    /// the hypothesis with the true secret gives 0 on every instance.
    #[test]
    fn the_independence_test_detects_an_unmasked_offset() {
        let n = 4096;
        let secret = 0x53;
        let mut rng = ChaCha20Rng::seed_from_u64(99);
        let xs = deal(&vec![Gf2p8(secret); n], &mut rng);
        let (h, l) = split_tower(&xs[1]);
        let r: Vec<Gf2p4> = (0..n).map(|k| Gf2p4((k * 7 % 16) as u8)).collect();
        // P2's unmasked share v^(2) + r_2, as the reference sends it.
        let mut unmasked = vec![Gf2p4(0); n];
        local_product(&mut unmasked, &h, &l);
        for (((c, h), l), r) in unmasked.iter_mut().zip(&h.first).zip(&l.first).zip(&r) {
            c.0 ^= NibbleLinear::LAMBDA_SQUARE.get(*h) ^ NibbleLinear::SQUARE.get(*l) ^ r.0;
        }
        let p1 = split_tower(&xs[0]);
        let hist = histogram(&unmasked, &r, &predicted_v2(&p1, secret));
        assert_eq!(hist[0], n);
        assert!(!uniform(&hist, n));
    }
}
