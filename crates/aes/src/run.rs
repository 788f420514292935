//! One party's part of a benchmark repetition or of a one-shot computation.

use triskele_engine::{EngineError, Malicious, Party, Phase, SecurityModel, SemiHonest};
use triskele_field::Gf2p8;
use triskele_net::{Network, Tamper};
use triskele_share::{PartyId, RssVec};

use crate::cipher::{apply, encrypt, key_schedule, KeySize, Mode, RoundKeys};
use crate::sbox::bool_circuit::BoolCircuit;
use crate::sbox::chida::Chida;
use crate::sbox::gf4_circuit::{Gf4Circuit, Gf4CircuitGf4p4};
use crate::sbox::lut16::Lut16;
use crate::sbox::lut256::Lut256;
use crate::sbox::lut256_ss::Lut256Ss;
use crate::sbox::mal_chida::MalChidaRecCheck;
use crate::sbox::mal_chida_bucket::MalChida;
use crate::sbox::mal_lut16::{MalLut16, Prep};
use crate::sbox::mal_lut256_ss::MalLut256Ss;
use crate::sbox::SboxProtocol;
use crate::target::Target;

pub use triskele_engine::PhaseMeasure;

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
    let n = simd * size.sboxes_per_block();
    let ((), pre) = party.timed(Phase::Preprocessing, |p| sbox.preprocess(p, n))?;

    // Untimed, no communication: random shared inputs and round keys.
    party.set_phase(Phase::Setup);
    let mut state = party.random_rss::<Gf2p8>(16 * simd);
    let keys = RoundKeys::new(size, party.random_rss::<Gf2p8>(16 * (size.rounds() + 1))).ok_or(
        EngineError::LengthMismatch {
            expected: 16 * (size.rounds() + 1),
            got: 0,
        },
    )?;

    let ((), online) = party.timed(Phase::Online, |p| encrypt(p, &mut sbox, &keys, &mut state))?;
    let ((), finalize) = party.timed(Phase::Finalize, |p| sbox.finalize(p))?;
    // All verification counts in the finalize phase, including the segments verified while
    // the preprocessing and online phases ran (`Party::checkpoint`; their messages are
    // counted there too).
    let finalize = finalize + party.model().segment_time();

    // Output opening: untimed and not counted.
    party.set_phase(Phase::Output);
    sbox.to_replicated(&mut party, &mut state)?;
    party.open_output(&state)?;

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
        Target::Gf4Circuit => {
            bench_with::<SemiHonest, _>(target, Gf4Circuit::default(), net, size, simd)
        }
        Target::Lut16 => bench_with::<SemiHonest, _>(target, Lut16::default(), net, size, simd),
        Target::Lut256 => bench_with::<SemiHonest, _>(target, Lut256::default(), net, size, simd),
        Target::Lut256Ss => {
            bench_with::<SemiHonest, _>(target, Lut256Ss::default(), net, size, simd)
        }
        Target::MalChidaRecCheck => {
            bench_with::<Malicious, _>(target, MalChidaRecCheck, net, size, simd)
        }
        Target::MalChida => {
            bench_with::<Malicious, _>(target, MalChida::default(), net, size, simd)
        }
        Target::BoolCircuit => {
            bench_with::<SemiHonest, _>(target, BoolCircuit::default(), net, size, simd)
        }
        Target::MalGf4Circuit => {
            bench_with::<Malicious, _>(target, Gf4Circuit::default(), net, size, simd)
        }
        Target::MalGf4CircuitOpt => {
            bench_with::<Malicious, _>(target, Gf4CircuitGf4p4::default(), net, size, simd)
        }
        Target::MalLut16Bitstring => {
            bench_with::<Malicious, _>(target, MalLut16::new(Prep::Bitstring), net, size, simd)
        }
        Target::MalLut16Ohv => {
            bench_with::<Malicious, _>(target, MalLut16::new(Prep::Ohv), net, size, simd)
        }
        Target::MalLut256Ss => {
            bench_with::<Malicious, _>(target, MalLut256Ss::plain(), net, size, simd)
        }
        Target::MalLut256SsOpt => {
            bench_with::<Malicious, _>(target, MalLut256Ss::opt(), net, size, simd)
        }
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
    sbox.to_replicated(&mut party, &mut state)?;
    let out = party.open_output(&state)?;
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
        Target::Gf4Circuit => {
            compute_with::<SemiHonest, _>(target, Gf4Circuit::default(), net, key, blocks, mode)
        }
        Target::Lut16 => {
            compute_with::<SemiHonest, _>(target, Lut16::default(), net, key, blocks, mode)
        }
        Target::Lut256 => {
            compute_with::<SemiHonest, _>(target, Lut256::default(), net, key, blocks, mode)
        }
        Target::Lut256Ss => {
            compute_with::<SemiHonest, _>(target, Lut256Ss::default(), net, key, blocks, mode)
        }
        Target::MalChidaRecCheck => {
            compute_with::<Malicious, _>(target, MalChidaRecCheck, net, key, blocks, mode)
        }
        Target::MalChida => {
            compute_with::<Malicious, _>(target, MalChida::default(), net, key, blocks, mode)
        }
        Target::BoolCircuit => {
            compute_with::<SemiHonest, _>(target, BoolCircuit::default(), net, key, blocks, mode)
        }
        Target::MalGf4Circuit => {
            compute_with::<Malicious, _>(target, Gf4Circuit::default(), net, key, blocks, mode)
        }
        Target::MalGf4CircuitOpt => {
            compute_with::<Malicious, _>(target, Gf4CircuitGf4p4::default(), net, key, blocks, mode)
        }
        Target::MalLut16Bitstring => {
            let sbox = MalLut16::new(Prep::Bitstring);
            compute_with::<Malicious, _>(target, sbox, net, key, blocks, mode)
        }
        Target::MalLut16Ohv => {
            let sbox = MalLut16::new(Prep::Ohv);
            compute_with::<Malicious, _>(target, sbox, net, key, blocks, mode)
        }
        Target::MalLut256Ss => {
            compute_with::<Malicious, _>(target, MalLut256Ss::plain(), net, key, blocks, mode)
        }
        Target::MalLut256SsOpt => {
            compute_with::<Malicious, _>(target, MalLut256Ss::opt(), net, key, blocks, mode)
        }
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
    sbox.to_replicated(&mut party, &mut x)?;
    let out = party.open_output(&x)?;
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
        Target::Gf4Circuit => {
            sbox_layer_with::<SemiHonest, _>(target, Gf4Circuit::default(), net, x)?
        }
        Target::Lut16 => sbox_layer_with::<SemiHonest, _>(target, Lut16::default(), net, x)?,
        Target::Lut256 => sbox_layer_with::<SemiHonest, _>(target, Lut256::default(), net, x)?,
        Target::Lut256Ss => sbox_layer_with::<SemiHonest, _>(target, Lut256Ss::default(), net, x)?,
        Target::MalChidaRecCheck => {
            sbox_layer_with::<Malicious, _>(target, MalChidaRecCheck, net, x)?
        }
        Target::MalChida => sbox_layer_with::<Malicious, _>(target, MalChida::default(), net, x)?,
        Target::BoolCircuit => {
            sbox_layer_with::<SemiHonest, _>(target, BoolCircuit::default(), net, x)?
        }
        Target::MalGf4Circuit => {
            sbox_layer_with::<Malicious, _>(target, Gf4Circuit::default(), net, x)?
        }
        Target::MalGf4CircuitOpt => {
            sbox_layer_with::<Malicious, _>(target, Gf4CircuitGf4p4::default(), net, x)?
        }
        Target::MalLut16Bitstring => {
            sbox_layer_with::<Malicious, _>(target, MalLut16::new(Prep::Bitstring), net, x)?
        }
        Target::MalLut16Ohv => {
            sbox_layer_with::<Malicious, _>(target, MalLut16::new(Prep::Ohv), net, x)?
        }
        Target::MalLut256Ss => {
            sbox_layer_with::<Malicious, _>(target, MalLut256Ss::plain(), net, x)?
        }
        Target::MalLut256SsOpt => {
            sbox_layer_with::<Malicious, _>(target, MalLut256Ss::opt(), net, x)?
        }
    };
    Ok(out.into_iter().map(|b| b.0).collect())
}

/// Messages one party sends per S-box layer in the online phase (a lower bound for protocols
/// not listed).
fn online_sends_per_layer(target: Target) -> u64 {
    match target {
        Target::Chida | Target::MalChidaRecCheck | Target::MalChida => 3,
        Target::Gf4Circuit
        | Target::BoolCircuit
        | Target::MalGf4Circuit
        | Target::MalGf4CircuitOpt => 4,
        Target::Lut16 | Target::MalLut16Bitstring | Target::MalLut16Ohv => 3,
        // mal-lut256-ss: 1 (first cipher layer) + 2 (middle) + 3 (last, with the reshare) in
        // the cipher, 2 per key-schedule layer (opening and reshare): 2 per layer in total.
        Target::Lut256Ss | Target::MalLut256Ss | Target::MalLut256SsOpt => 2,
        _ => 1,
    }
}

/// The cheating of `triskele aes --tamper P --tamper-seed N` (ARCHITECTURE.md): party `party`
/// flips one bit of one message it sends in the online phase of a [`compute_party`] run with
/// key size `size`. Message index (among that party's online sends: key schedule and cipher
/// layers) and bit position are chosen deterministically from `seed`. Put the result in
/// [`triskele_net::NetOptions::tamper`] of all three networks; [`Tamper::tampered`] tells
/// afterwards what was flipped. Malicious targets must then abort
/// ([`EngineError::Abort`]); semi-honest ones give a wrong or correct output.
pub fn aes_tamper(target: Target, size: KeySize, party: PartyId, seed: u64) -> Tamper {
    let layers = (size.key_schedule_sboxes() / 4 + size.rounds()) as u64;
    Tamper::from_seed(
        party,
        seed,
        Phase::Online,
        layers * online_sends_per_layer(target),
    )
}
