//! One party's part of a PRF benchmark repetition or of a one-shot computation, with the
//! phases of the CSV contract: preprocessing, online, finalize (the malicious checks), and an
//! untimed output opening.

use std::time::{Duration, Instant};

use triskele_engine::{
    EngineError, Malicious, Party, Phase, PhaseMeasure, SecurityModel, SemiHonest,
};
use triskele_field::Fp;
use triskele_net::{Network, Tamper};
use triskele_share::{PartyId, RssVec};

use crate::clear::MimcParams;
use crate::hydra::{self, Hydra};
use crate::legendre;
use crate::mimc::{self, Mimc, Variant};
use crate::nr::{self, RistrettoScalar};
use crate::ops::{Finalize, PrfField};
use crate::target::PrfTarget;

/// One party's measurements of one PRF benchmark repetition.
#[derive(Debug, Clone, PartialEq)]
pub struct PrfReport {
    pub target: PrfTarget,
    /// PRF evaluations: output bits for Legendre, field elements for MiMC.
    pub simd: usize,
    pub preprocessing: PhaseMeasure,
    pub online: PhaseMeasure,
    pub finalize: PhaseMeasure,
}

fn params(kind: &str, target: PrfTarget, p: u128, n: usize) -> String {
    format!(
        "triskele {} prf-{kind} target={} p={p} n={n}",
        env!("CARGO_PKG_VERSION"),
        target.semi_honest().name()
    )
}

fn bench_with<M: SecurityModel>(
    target: PrfTarget,
    net: Network,
    simd: usize,
) -> Result<PrfReport, EngineError>
where
    Party<M>: Finalize,
{
    let mut party = Party::<M>::setup(net)?;
    party.check_parameters(&params("bench", target, Fp::MODULUS, simd))?;
    party.net().reset_stats();
    // Random shared key and inputs (no communication), drawn in the setup phase.
    party.set_phase(Phase::Setup);
    let key = party.random_rss::<Fp>(1);
    let inputs = party.random_rss::<Fp>(simd);
    if target == PrfTarget::Nr {
        return bench_nr(party, target, simd);
    }
    // A MiMC evaluator keeps cube chains that its own finalize step commits.
    let mut mimc_eval: Option<Mimc<Fp>> = None;
    let (pre, online, out) = match target.semi_honest() {
        PrfTarget::Hydra => {
            // simd keystream words: ceil(simd / 8) instances of 8 words, public nonces
            // 0, 1, ..., shared random IVs, one shared key.
            let instances = simd.div_ceil(8);
            let hkey = party.random_rss::<Fp>(4);
            let ivs = party.random_rss::<Fp>(3 * instances);
            let nonces = crate::legendre::counter::<Fp>(instances);
            let hydra = hydra::reference();
            let ((), pre) = party.timed(Phase::Preprocessing, |_| Ok(()))?;
            let (out, online) = party.timed(Phase::Online, |p| {
                hydra.keystream_mpc(p, &hkey, &nonces, &ivs, 8)
            })?;
            (pre, online, out)
        }
        PrfTarget::Legendre => {
            let (mut prep, pre) = party.timed(Phase::Preprocessing, |p| {
                legendre::preprocess::<Fp, M>(p, simd)
            })?;
            let (out, online) = party.timed(Phase::Online, |p| {
                legendre::eval(p, &mut prep, &key, &inputs)
            })?;
            (pre, online, out)
        }
        t => {
            let variant = if t == PrfTarget::MimcCube {
                Variant::Cube
            } else {
                Variant::Basic
            };
            let mut m = Mimc::<Fp>::new(variant)?;
            let ((), pre) = party.timed(Phase::Preprocessing, |p| m.preprocess(p, simd))?;
            let (out, online) = party.timed(Phase::Online, |p| m.encrypt(p, &key, &inputs))?;
            mimc_eval = Some(m);
            (pre, online, out)
        }
    };
    let ((), fin) = party.timed(Phase::Finalize, |p| match &mut mimc_eval {
        Some(m) => m.finalize(p),
        None => p.finalize_checks(),
    })?;
    party.set_phase(Phase::Output);
    party.open_output(&out)?;
    finish(party, target, simd, [pre, online, fin])
}

/// Shuts the party down and reports the three timed phases with its traffic counters.
fn finish<M: SecurityModel>(
    mut party: Party<M>,
    target: PrfTarget,
    simd: usize,
    [pre, online, fin]: [Duration; 3],
) -> Result<PrfReport, EngineError> {
    // The finalize phase reports all verification, including the segments verified while
    // the other phases ran (their messages are counted there too).
    let fin = fin + party.model().segment_time();
    let stats = party.net().stats().clone();
    party.shutdown()?;
    let measure = |time, phase| PhaseMeasure {
        time,
        stats: stats.get(phase),
    };
    Ok(PrfReport {
        target,
        simd,
        preprocessing: measure(pre, Phase::Preprocessing),
        online: measure(online, Phase::Online),
        finalize: measure(fin, Phase::Finalize),
    })
}

/// Naor-Reingold: a random shared key of 129 scalars and `simd` public random 128-bit inputs
/// (the same at every party: drawn from a fixed seed). The online phase is the whole
/// evaluation, including the publication of the output (the output is public).
fn bench_nr<M: SecurityModel>(
    mut party: Party<M>,
    target: PrfTarget,
    simd: usize,
) -> Result<PrfReport, EngineError> {
    use rand_core::{RngCore, SeedableRng};
    party.set_phase(Phase::Setup);
    let key = party.random_rss::<RistrettoScalar>(nr::DEFAULT_INPUT_BITS + 1);
    let mut rng = rand_chacha::ChaCha20Rng::seed_from_u64(simd as u64);
    let inputs = (0..simd)
        .map(|_| {
            let x = (u128::from(rng.next_u64()) << 64) | u128::from(rng.next_u64());
            nr::input_from_u128(x, nr::DEFAULT_INPUT_BITS).ok_or(EngineError::LengthMismatch {
                expected: nr::DEFAULT_INPUT_BITS,
                got: 128,
            })
        })
        .collect::<Result<Vec<_>, _>>()?;
    party.set_phase(Phase::Online);
    let t0 = Instant::now();
    nr::nr_eval(&mut party, &key, &inputs)?;
    let online = t0.elapsed();
    finish(
        party,
        target,
        simd,
        [Duration::ZERO, online, Duration::ZERO],
    )
}

/// Runs this party's side of a one-shot Naor-Reingold evaluation on a shared key of `n + 1`
/// scalars and public `n`-bit inputs; returns the 32-byte compressed Ristretto outputs.
pub fn nr_compute_party(
    net: Network,
    key: &RssVec<RistrettoScalar>,
    inputs: &[Vec<bool>],
) -> Result<Vec<[u8; 32]>, EngineError> {
    let mut party = Party::<SemiHonest>::setup(net)?;
    party.check_parameters(&params("nr", PrfTarget::Nr, 0, inputs.len()))?;
    party.set_phase(Phase::Online);
    let out = nr::nr_eval(&mut party, key, inputs)?;
    party.shutdown()?;
    Ok(out)
}

/// Runs this party's side of one PRF benchmark repetition over the default prime: random
/// shared key and inputs (untimed), timed preprocessing for `simd` evaluations, timed
/// evaluation, timed finalize checks, untimed output opening.
pub fn bench_party(target: PrfTarget, net: Network, simd: usize) -> Result<PrfReport, EngineError> {
    if target.is_malicious() {
        bench_with::<Malicious>(target, net, simd)
    } else {
        bench_with::<SemiHonest>(target, net, simd)
    }
}

/// What a one-shot PRF computation evaluates.
#[derive(Debug, Clone)]
pub enum PrfJob<F> {
    /// `count` Legendre bits from the shared start input (a sharing of length 1).
    Legendre { start: RssVec<F>, count: usize },
    /// MiMC encryption of shared blocks.
    MimcEncrypt { blocks: RssVec<F> },
    /// MiMC decryption of shared blocks.
    MimcDecrypt { blocks: RssVec<F> },
    /// MiMC counter-mode keystream `E_k(nonce + i)`, `i < count`.
    MimcKeystream { nonce: F, count: usize },
    /// `words` Hydra keystream words for a public nonce and a shared IV (3 elements); the key
    /// passed to [`compute_party`] then has 4 elements.
    HydraKeystream {
        nonce: F,
        iv: RssVec<F>,
        words: usize,
    },
}

impl<F> PrfJob<F> {
    fn describe(&self) -> (&'static str, usize) {
        match self {
            PrfJob::Legendre { count, .. } => ("legendre", *count),
            PrfJob::MimcEncrypt { blocks } => ("encrypt", blocks.first.len()),
            PrfJob::MimcDecrypt { blocks } => ("decrypt", blocks.first.len()),
            PrfJob::MimcKeystream { count, .. } => ("keystream", *count),
            PrfJob::HydraKeystream { words, .. } => ("hydra", *words),
        }
    }
}

/// Runs this party's side of a one-shot computation on the shared key `key` (a sharing of
/// length 1) and returns the opened outputs (Legendre bits as 0/1 elements). In the
/// malicious model every check (Protocol 2 over all products, compare-view) passes before the
/// outputs are opened, and the output opening is followed by another compare-view.
pub fn compute_party<F: PrfField, M: SecurityModel>(
    target: PrfTarget,
    net: Network,
    key: &RssVec<F>,
    job: PrfJob<F>,
) -> Result<Vec<F>, EngineError>
where
    Party<M>: Finalize,
{
    if target == PrfTarget::Nr {
        return Err(EngineError::Unsupported(
            "nr has public inputs and outputs: use nr_compute_party".into(),
        ));
    }
    if target.is_malicious() != M::MALICIOUS {
        return Err(EngineError::Unsupported(format!(
            "target {target} with the wrong security model"
        )));
    }
    let mut party = Party::<M>::setup(net)?;
    let (kind, n) = job.describe();
    party.check_parameters(&params(kind, target, F::modulus(), n))?;
    let variant = match target.semi_honest() {
        PrfTarget::MimcCube => Variant::Cube,
        _ => Variant::Basic,
    };
    let mut mimc_eval: Option<Mimc<F>> = None;
    let out = match job {
        PrfJob::Legendre { start, count } => {
            party.set_phase(Phase::Preprocessing);
            let mut prep = legendre::preprocess::<F, M>(&mut party, count)?;
            party.set_phase(Phase::Online);
            legendre::eval_consecutive(&mut party, &mut prep, key, &start, count)?
        }
        PrfJob::MimcEncrypt { blocks } => {
            let mut m = Mimc::<F>::new(variant)?;
            party.set_phase(Phase::Preprocessing);
            m.preprocess(&mut party, blocks.len())?;
            party.set_phase(Phase::Online);
            let out = m.encrypt(&mut party, key, &blocks)?;
            mimc_eval = Some(m);
            out
        }
        PrfJob::MimcKeystream { nonce, count } => {
            let mut m = Mimc::<F>::new(variant)?;
            party.set_phase(Phase::Preprocessing);
            m.preprocess(&mut party, count)?;
            party.set_phase(Phase::Online);
            let out = m.keystream(&mut party, key, nonce, count)?;
            mimc_eval = Some(m);
            out
        }
        PrfJob::HydraKeystream { nonce, iv, words } => {
            let h = Hydra::<F>::new()?;
            party.set_phase(Phase::Online);
            h.keystream_mpc(&mut party, key, &[nonce], &iv, words)?
        }
        PrfJob::MimcDecrypt { blocks } => {
            let params = MimcParams::<F>::new()?;
            party.set_phase(Phase::Preprocessing);
            let prep = mimc::preprocess_decrypt(&mut party, &params, blocks.len())?;
            party.set_phase(Phase::Online);
            mimc::decrypt(&mut party, &params, &prep, key, &blocks)?
        }
    };
    party.set_phase(Phase::Finalize);
    match &mut mimc_eval {
        Some(m) => m.finalize(&mut party)?,
        None => party.finalize_checks()?,
    }
    party.set_phase(Phase::Output);
    let opened = party.open_output(&out)?;
    party.shutdown()?;
    Ok(opened)
}

/// Messages one party sends in the online phase of a [`compute_party`] run of `target`
/// (`decrypt` for MiMC decryption) over a prime with `rounds` MiMC rounds; for Hydra, `rounds`
/// is the number of rounds of the requested words ([`crate::hydra::Cost`]).
pub fn online_sends(target: PrfTarget, decrypt: bool, rounds: usize) -> u64 {
    let r = rounds as u64;
    match target.semi_honest() {
        // `rounds` is the round count of the requested words (hydra::Cost).
        PrfTarget::Hydra => r,
        // Fused opening to both neighbours, or (malicious) a reshare and an opening.
        PrfTarget::Legendre => 2,
        _ if decrypt => 2 * r,
        PrfTarget::MimcCube => r,
        _ => 2 * r,
    }
}

/// The cheating of `triskele prf --tamper P --tamper-seed N`: party `party` flips one bit of
/// one of its online messages (chosen from `seed`); see [`online_sends`]. Malicious targets
/// must then abort at every honest party.
pub fn prf_tamper(
    target: PrfTarget,
    decrypt: bool,
    rounds: usize,
    party: PartyId,
    seed: u64,
) -> Tamper {
    Tamper::from_seed(
        party,
        seed,
        Phase::Online,
        online_sends(target, decrypt, rounds),
    )
}
