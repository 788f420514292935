//! One party's part of a PRF benchmark repetition or of a one-shot computation, with the
//! phases of the CSV contract: preprocessing, online, finalize (the malicious checks), and an
//! untimed output opening.

use std::time::Instant;

use triskele_engine::{
    EngineError, Malicious, Party, Phase, PhaseMeasure, SecurityModel, SemiHonest,
};
use triskele_field::Fp;
use triskele_net::{Network, Tamper};
use triskele_share::{PartyId, RssVec};

use crate::clear::MimcParams;
use crate::legendre;
use crate::mimc::{self, Mimc, Variant};
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

/// Times a phase: sets it, runs `f`, returns the result and the elapsed time.
fn timed<M: SecurityModel, T>(
    party: &mut Party<M>,
    phase: Phase,
    f: impl FnOnce(&mut Party<M>) -> Result<T, EngineError>,
) -> Result<(T, std::time::Duration), EngineError> {
    party.set_phase(phase);
    let t0 = Instant::now();
    let out = f(party)?;
    Ok((out, t0.elapsed()))
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
    let (pre, online, out) = match target.semi_honest() {
        PrfTarget::Legendre => {
            let (mut prep, pre) = timed(&mut party, Phase::Preprocessing, |p| {
                legendre::preprocess::<Fp, M>(p, simd)
            })?;
            let (out, online) = timed(&mut party, Phase::Online, |p| {
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
            let ((), pre) = timed(&mut party, Phase::Preprocessing, |p| m.preprocess(p, simd))?;
            let (out, online) = timed(&mut party, Phase::Online, |p| m.encrypt(p, &key, &inputs))?;
            (pre, online, out)
        }
    };
    let ((), fin) = timed(&mut party, Phase::Finalize, |p| p.finalize_checks())?;
    party.set_phase(Phase::Output);
    party.open_output(&out)?;
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
}

impl<F> PrfJob<F> {
    fn describe(&self) -> (&'static str, usize) {
        match self {
            PrfJob::Legendre { count, .. } => ("legendre", *count),
            PrfJob::MimcEncrypt { blocks } => ("encrypt", blocks.first.len()),
            PrfJob::MimcDecrypt { blocks } => ("decrypt", blocks.first.len()),
            PrfJob::MimcKeystream { count, .. } => ("keystream", *count),
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
            m.encrypt(&mut party, key, &blocks)?
        }
        PrfJob::MimcKeystream { nonce, count } => {
            let mut m = Mimc::<F>::new(variant)?;
            party.set_phase(Phase::Preprocessing);
            m.preprocess(&mut party, count)?;
            party.set_phase(Phase::Online);
            m.keystream(&mut party, key, nonce, count)?
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
    party.finalize_checks()?;
    party.set_phase(Phase::Output);
    let opened = party.open_output(&out)?;
    party.shutdown()?;
    Ok(opened)
}

/// Messages one party sends in the online phase of a [`compute_party`] run of `target` with
/// the job `kind` ("legendre", "encrypt", "keystream", "decrypt") over a prime with `rounds`
/// MiMC rounds.
pub fn online_sends(target: PrfTarget, decrypt: bool, rounds: usize) -> u64 {
    let r = rounds as u64;
    match target.semi_honest() {
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
