//! One party's part of a benchmark repetition or of a one-shot computation.

use std::time::{Duration, Instant};

use triskele_engine::{EngineError, Party, Phase, SecurityModel, SemiHonest};
use triskele_field::Gf2p8;
use triskele_net::{Network, PhaseStats};
use triskele_share::RssVec;

use crate::cipher::{apply, encrypt, key_schedule, KeySize, Mode, RoundKeys};
use crate::sbox::chida::Chida;
use crate::sbox::SboxProtocol;
use crate::target::Target;

/// Time and traffic of one phase at one party.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct PhaseMeasure {
    pub time: Duration,
    pub stats: PhaseStats,
}

/// One party's measurements of one benchmark repetition.
#[derive(Debug, Clone, PartialEq)]
pub struct RunReport {
    pub target: Target,
    pub simd: usize,
    pub preprocessing: PhaseMeasure,
    pub online: PhaseMeasure,
    pub finalize: PhaseMeasure,
}

fn params(kind: &str, target: Target, size: KeySize, n: usize) -> String {
    format!(
        "triskele {} {kind} target={} size={size:?} n={n}",
        env!("CARGO_PKG_VERSION"),
        target.name()
    )
}

fn bench_with<M: SecurityModel, S: SboxProtocol<M>>(
    target: Target,
    mut sbox: S,
    net: Network,
    size: KeySize,
    simd: usize,
) -> Result<RunReport, EngineError> {
    let mut party = Party::<M>::setup(net)?;
    party.check_parameters(&params("bench", target, size, simd))?;
    party.net().reset_stats();

    // Pre-processing: material for exactly 16 * N_r * simd inversions.
    party.set_phase(Phase::Preprocessing);
    let t0 = Instant::now();
    sbox.preprocess(&mut party, simd * size.sboxes_per_block())?;
    let pre = t0.elapsed();

    // Untimed, no communication: random shared inputs and round keys.
    party.set_phase(Phase::Setup);
    let mut state = party.random_rss::<Gf2p8>(16 * simd);
    let keys = RoundKeys::new(size, party.random_rss::<Gf2p8>(16 * (size.rounds() + 1))).ok_or(
        EngineError::LengthMismatch {
            expected: 16 * (size.rounds() + 1),
            got: 0,
        },
    )?;

    party.set_phase(Phase::Online);
    let t0 = Instant::now();
    encrypt(&mut party, &mut sbox, &keys, &mut state)?;
    let online = t0.elapsed();

    party.set_phase(Phase::Finalize);
    let t0 = Instant::now();
    sbox.finalize(&mut party)?;
    let finalize = t0.elapsed();

    // Output opening: untimed and not counted.
    party.set_phase(Phase::Output);
    party.open(&state)?;

    let stats = party.net().stats().clone();
    party.shutdown()?;
    Ok(RunReport {
        target,
        simd,
        preprocessing: PhaseMeasure {
            time: pre,
            stats: stats.get(Phase::Preprocessing),
        },
        online: PhaseMeasure {
            time: online,
            stats: stats.get(Phase::Online),
        },
        finalize: PhaseMeasure {
            time: finalize,
            stats: stats.get(Phase::Finalize),
        },
    })
}

/// Runs this party's side of one benchmark repetition (PROTOCOLS.md §6.2): setup, timed
/// pre-processing, random shared inputs and round keys (untimed), timed encryption of `simd`
/// blocks, timed finalize, untimed output opening. `net` is consumed (fresh connections per
/// repetition).
pub fn bench_party(
    target: Target,
    net: Network,
    size: KeySize,
    simd: usize,
) -> Result<RunReport, EngineError> {
    match target {
        Target::Chida => bench_with::<SemiHonest, _>(target, Chida, net, size, simd),
    }
}

fn compute_with<M: SecurityModel, S: SboxProtocol<M>>(
    target: Target,
    mut sbox: S,
    net: Network,
    key: &RssVec<Gf2p8>,
    blocks: RssVec<Gf2p8>,
    mode: Mode,
) -> Result<Vec<u8>, EngineError> {
    let size = KeySize::from_key_len(key.len()).ok_or(EngineError::LengthMismatch {
        expected: 16,
        got: key.len(),
    })?;
    let n_blocks = blocks.len() / 16;
    let mut party = Party::<M>::setup(net)?;
    party.check_parameters(&params("aes", target, size, n_blocks))?;
    party.set_phase(Phase::Preprocessing);
    sbox.preprocess(
        &mut party,
        size.key_schedule_sboxes() + n_blocks * size.sboxes_per_block(),
    )?;
    party.set_phase(Phase::Online);
    let keys = key_schedule(&mut party, &mut sbox, key)?;
    let mut state = blocks;
    apply(&mut party, &mut sbox, &keys, &mut state, mode)?;
    party.set_phase(Phase::Finalize);
    sbox.finalize(&mut party)?;
    party.set_phase(Phase::Output);
    let out = party.open(&state)?;
    party.shutdown()?;
    Ok(out.into_iter().map(|b| b.0).collect())
}

/// Runs this party's side of a one-shot computation: key schedule on the shared key, then
/// encryption or decryption of the shared blocks, then opening of the result to all parties.
pub fn compute_party(
    target: Target,
    net: Network,
    key: &RssVec<Gf2p8>,
    blocks: RssVec<Gf2p8>,
    mode: Mode,
) -> Result<Vec<u8>, EngineError> {
    match target {
        Target::Chida => compute_with::<SemiHonest, _>(target, Chida, net, key, blocks, mode),
    }
}

fn sbox_layer_with<M: SecurityModel, S: SboxProtocol<M>>(
    target: Target,
    mut sbox: S,
    net: Network,
    x: RssVec<Gf2p8>,
) -> Result<Vec<Gf2p8>, EngineError> {
    let mut party = Party::<M>::setup(net)?;
    party.check_parameters(&params("sbox-layer", target, KeySize::Aes128, x.len()))?;
    party.set_phase(Phase::Preprocessing);
    sbox.preprocess(&mut party, x.len())?;
    party.set_phase(Phase::Online);
    let mut x = x;
    crate::layer::sub_bytes(&mut party, &mut sbox, &mut x)?;
    party.set_phase(Phase::Finalize);
    sbox.finalize(&mut party)?;
    party.set_phase(Phase::Output);
    let out = party.open(&x)?;
    party.shutdown()?;
    Ok(out)
}

/// One S-box layer (inversion and affine map) on shared bytes, opened to all parties. For
/// testing protocols on all inputs at once.
pub fn sbox_layer_party(
    target: Target,
    net: Network,
    x: RssVec<Gf2p8>,
) -> Result<Vec<u8>, EngineError> {
    let out = match target {
        Target::Chida => sbox_layer_with::<SemiHonest, _>(target, Chida, net, x)?,
    };
    Ok(out.into_iter().map(|b| b.0).collect())
}
