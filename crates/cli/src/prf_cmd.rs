//! `triskele prf`: a dealer secret-shares the key and the inputs, three local parties evaluate
//! an MPC-friendly PRF (Legendre, MiMC) and open the outputs.

use sha2::{Digest, Sha256};
use triskele_engine::{Malicious, Party, SecurityModel, SemiHonest};
use triskele_field::{Fp, FpRt, PrimeField};
use triskele_prf::clear::{pack_bits, MimcParams};
use triskele_prf::ops::{Finalize, PrfField};
use triskele_prf::{compute_party, prf_tamper, PrfJob, PrfTarget};
use triskele_share::{deal, RssVec};

use crate::aes_cmd::{cheater_party, report_tamper};
use crate::args::PrfArgs;
use crate::error::CliError;
use crate::local::run_three;

/// The most outputs one `triskele prf` call computes (all in one batch, in memory): 2^24
/// Legendre bits (the challenge's 2^20 take a few seconds), MiMC blocks or Hydra words.
const MAX_OUTPUTS: usize = 1 << 24;

/// `Ok(n)` if `1 <= n <= MAX_OUTPUTS`.
fn check_count(n: usize, what: &str) -> Result<usize, CliError> {
    if n == 0 {
        return Err(CliError::Input(format!("{what} must be at least 1")));
    }
    if n > MAX_OUTPUTS {
        return Err(CliError::Input(format!(
            "{what} {n} is above the limit of {MAX_OUTPUTS} outputs per call; split the computation"
        )));
    }
    Ok(n)
}

/// Malicious runs over another prime need at least this many bits of p: the multiplication
/// check's soundness error is about (number of products + 2 log n) / p.
const MIN_MALICIOUS_BITS: u32 = 100;

/// Parses a decimal or `0x`-hex number below `2^128`.
pub fn parse_u128(s: &str, what: &str) -> Result<u128, CliError> {
    let t = s.trim().replace('_', "");
    let parsed = match t.strip_prefix("0x").or_else(|| t.strip_prefix("0X")) {
        Some(hex) => u128::from_str_radix(hex, 16),
        None => t.parse::<u128>(),
    };
    parsed.map_err(|e| {
        CliError::Input(format!(
            "{what} '{s}' is not a decimal or 0x-hex number below 2^128 ({e})"
        ))
    })
}

/// A field element from the command line: must be below p (no silent reduction).
fn parse_elem<F: PrimeField>(s: &str, what: &str) -> Result<F, CliError> {
    let v = parse_u128(s, what)?;
    if v >= F::modulus() {
        return Err(CliError::Input(format!(
            "{what} {v} is not below the modulus p = {}",
            F::modulus()
        )));
    }
    Ok(F::from_u128_reduced(v))
}

pub fn run(a: PrfArgs) -> Result<(), CliError> {
    let name = a.prf.trim();
    let base: PrfTarget = match name {
        "legendre" | "mimc" | "mimc-cube" | "hydra" => name
            .parse()
            .map_err(|e: triskele_prf::PrfTargetError| CliError::Input(e.to_string()))?,
        "nr" => return run_nr(&a),
        other => {
            return Err(CliError::Input(format!(
                "unknown PRF '{other}' (known: legendre, mimc, mimc-cube, hydra, nr)"
            )))
        }
    };
    let target = if a.malicious { base.malicious() } else { base };
    let modulus = match &a.modulus {
        Some(s) => parse_u128(s, "--modulus")?,
        None => Fp::MODULUS,
    };
    let lines = if modulus == Fp::MODULUS {
        run_field::<Fp>(&a, target)?
    } else {
        if a.malicious && 128 - modulus.leading_zeros() < MIN_MALICIOUS_BITS {
            return Err(CliError::Input(format!(
                "--malicious needs a prime of at least {MIN_MALICIOUS_BITS} bits (the multiplication check's soundness error is about n/p); {modulus} has {}",
                128 - modulus.leading_zeros()
            )));
        }
        FpRt::with_modulus(modulus, || run_field::<FpRt>(&a, target))
            .map_err(|e| CliError::Input(format!("--modulus {modulus}: {e}")))??
    };
    let mut out = String::new();
    for l in lines {
        out.push_str(&l);
        out.push('\n');
    }
    print!("{out}");
    Ok(())
}

fn run_field<F: PrfField>(a: &PrfArgs, target: PrfTarget) -> Result<Vec<String>, CliError> {
    if target.is_malicious() {
        run_model::<F, Malicious>(a, target)
    } else {
        run_model::<F, SemiHonest>(a, target)
    }
}

fn run_model<F: PrfField, M: SecurityModel>(
    a: &PrfArgs,
    target: PrfTarget,
) -> Result<Vec<String>, CliError>
where
    Party<M>: Finalize,
{
    if target.semi_honest() == PrfTarget::Hydra {
        return run_hydra::<F, M>(a, target);
    }
    let key: F = parse_elem(&a.key, "--key")?;
    let is_legendre = target.semi_honest() == PrfTarget::Legendre;
    let rounds = if is_legendre {
        0
    } else {
        MimcParams::<F>::new()
            .map_err(|e| CliError::Input(e.to_string()))?
            .rounds()
    };
    if a.sha256 && !is_legendre {
        return Err(CliError::Input(
            "--sha256 applies to Legendre bit strings".into(),
        ));
    }
    if a.decrypt && is_legendre {
        return Err(CliError::Input(
            "--decrypt applies to mimc and mimc-cube only".into(),
        ));
    }
    let mut rng = rand::rng();
    let key_shares = deal(&[key], &mut rng);
    // What to compute, per party (a closure so that each party gets its own shares).
    enum Plan<F> {
        Legendre(F, usize),
        Blocks(Vec<F>),
        Keystream(F, usize),
    }
    let plan = if is_legendre {
        if a.nonce.is_some() {
            return Err(CliError::Input(
                "--nonce applies to mimc keystreams; Legendre takes --input X --count N".into(),
            ));
        }
        let x = match a.input.as_slice() {
            [] => F::ZERO,
            [x] => parse_elem(x, "--input")?,
            _ => {
                return Err(CliError::Input(
                    "Legendre takes one --input X (the first of --count consecutive inputs)".into(),
                ))
            }
        };
        let count = check_count(a.count.unwrap_or(1), "--count")?;
        Plan::Legendre(x, count)
    } else if let Some(n) = &a.nonce {
        if !a.input.is_empty() || a.decrypt {
            return Err(CliError::Input(
                "--nonce N --count M computes a keystream; do not combine it with --input or --decrypt".into(),
            ));
        }
        let count = check_count(a.count.unwrap_or(1), "--count")?;
        Plan::Keystream(parse_elem(n, "--nonce")?, count)
    } else {
        if a.input.is_empty() {
            return Err(CliError::Input(
                "MiMC needs --input X (repeatable) or --nonce N --count M".into(),
            ));
        }
        if a.count.is_some() {
            return Err(CliError::Input(
                "--count applies to Legendre and to MiMC keystreams (--nonce)".into(),
            ));
        }
        let xs = a
            .input
            .iter()
            .enumerate()
            .map(|(i, s)| parse_elem(s, &format!("--input {}", i + 1)))
            .collect::<Result<Vec<F>, _>>()?;
        Plan::Blocks(xs)
    };
    let (jobs, n_out): ([PrfJob<F>; 3], usize) = match &plan {
        Plan::Legendre(x, count) => {
            let s = deal(&[*x], &mut rng);
            (
                s.map(|start| PrfJob::Legendre {
                    start,
                    count: *count,
                }),
                *count,
            )
        }
        Plan::Blocks(xs) => {
            let s = deal(xs, &mut rng);
            let decrypt = a.decrypt;
            (
                s.map(|blocks| {
                    if decrypt {
                        PrfJob::MimcDecrypt { blocks }
                    } else {
                        PrfJob::MimcEncrypt { blocks }
                    }
                }),
                xs.len(),
            )
        }
        Plan::Keystream(nonce, count) => (
            [0, 1, 2].map(|_| PrfJob::MimcKeystream {
                nonce: *nonce,
                count: *count,
            }),
            *count,
        ),
    };

    let shown = run_jobs::<F, M>(a, target, a.decrypt, rounds, &key_shares, &jobs)?;
    if shown.len() != n_out {
        return Err(CliError::Party(format!(
            "expected {n_out} outputs, got {}",
            shown.len()
        )));
    }
    Ok(if is_legendre {
        let bits: Vec<bool> = shown.iter().map(|v| *v == F::ONE).collect();
        let packed = pack_bits(&bits);
        vec![if a.sha256 {
            hex::encode(Sha256::digest(&packed))
        } else {
            hex::encode(packed)
        }]
    } else {
        shown.iter().map(|v| v.to_u128().to_string()).collect()
    })
}

/// Naor-Reingold over Ristretto255: the key elements `k_0..k_128` are derived from the number
/// `--key` (16 bytes little-endian as the seed of `triskele_prf::nr::key_from_seed`), each
/// `--input` is a 128-bit number (bit i of x selects k_(i+1)), and each output is the 32-byte
/// compressed Ristretto point, in hex.
fn run_nr(a: &PrfArgs) -> Result<(), CliError> {
    use triskele_prf::nr::{input_from_u128, key_from_seed, DEFAULT_INPUT_BITS};
    if a.malicious {
        return Err(CliError::Input(
            "nr has no malicious variant (its multiplications are not verified)".into(),
        ));
    }
    for (flag, set) in [
        ("--modulus", a.modulus.is_some()),
        ("--nonce", a.nonce.is_some()),
        ("--count", a.count.is_some()),
        ("--sha256", a.sha256),
        ("--decrypt", a.decrypt),
        ("--tamper", a.tamper.is_some()),
    ] {
        if set {
            return Err(CliError::Input(format!("{flag} does not apply to nr")));
        }
    }
    if a.input.is_empty() {
        return Err(CliError::Input("nr needs at least one --input X".into()));
    }
    let seed = parse_u128(&a.key, "--key")?.to_le_bytes();
    let inputs = a
        .input
        .iter()
        .enumerate()
        .map(|(i, s)| {
            let x = parse_u128(s, &format!("--input {}", i + 1))?;
            input_from_u128(x, DEFAULT_INPUT_BITS)
                .ok_or_else(|| CliError::Input(format!("--input {} does not fit 128 bits", i + 1)))
        })
        .collect::<Result<Vec<_>, _>>()?;
    let key = key_from_seed(&seed, DEFAULT_INPUT_BITS);
    let key_shares = deal(&key, &mut rand::rng());
    drop(key);
    let opts = crate::bench::net_options(a.timeout, None, None)?;
    let nets = triskele_net::local_tls(&opts)?;
    let outputs = run_three(nets, 1, |net| {
        let i = net.party().index();
        triskele_prf::nr_compute_party(net, &key_shares[i], &inputs)
    })?;
    if outputs[0] != outputs[1] || outputs[1] != outputs[2] {
        return Err(CliError::Party("the parties' outputs differ".into()));
    }
    let mut out = String::new();
    for p in &outputs[0] {
        out.push_str(&hex::encode(p));
        out.push('\n');
    }
    print!("{out}");
    Ok(())
}

/// Parses a comma-separated list of exactly `n` field elements.
fn parse_list<F: PrimeField>(s: &str, n: usize, what: &str) -> Result<Vec<F>, CliError> {
    let parts: Vec<&str> = s.split(',').collect();
    if parts.len() != n {
        return Err(CliError::Input(format!(
            "{what} takes {n} comma-separated numbers, got {}",
            parts.len()
        )));
    }
    parts
        .iter()
        .enumerate()
        .map(|(i, p)| parse_elem(p, &format!("{what} element {}", i + 1)))
        .collect()
}

/// Hydra: `--key K1,K2,K3,K4 --input IV1,IV2,IV3 --nonce N --count M` prints M keystream
/// words, one decimal per line.
fn run_hydra<F: PrfField, M: SecurityModel>(
    a: &PrfArgs,
    target: PrfTarget,
) -> Result<Vec<String>, CliError>
where
    Party<M>: Finalize,
{
    if a.sha256 || a.decrypt {
        return Err(CliError::Input(
            "--sha256 and --decrypt do not apply to hydra".into(),
        ));
    }
    let key: Vec<F> = parse_list(&a.key, 4, "--key")?;
    let iv: Vec<F> = match a.input.as_slice() {
        [iv] => parse_list(iv, 3, "--input")?,
        _ => {
            return Err(CliError::Input(
                "hydra takes one --input IV1,IV2,IV3".into(),
            ))
        }
    };
    let nonce: F = match &a.nonce {
        Some(n) => parse_elem(n, "--nonce")?,
        None => F::ZERO,
    };
    let words = check_count(a.count.unwrap_or(8), "--count")?;
    // Fails early, with a clear message, for primes Hydra is not defined for.
    triskele_prf::hydra::Hydra::<F>::new().map_err(|e| CliError::Input(e.to_string()))?;
    let mut rng = rand::rng();
    let key_shares = deal(&key, &mut rng);
    let iv_shares = deal(&iv, &mut rng);
    let jobs = iv_shares.map(|iv| PrfJob::HydraKeystream { nonce, iv, words });
    let rounds = triskele_prf::hydra::Cost::of(words).rounds;
    let outputs = run_jobs::<F, M>(a, target, false, rounds, &key_shares, &jobs)?;
    Ok(outputs.iter().map(|v| v.to_u128().to_string()).collect())
}

/// Runs the three parties of one `triskele prf` computation (party `i` gets `key_shares[i]`
/// and `jobs[i]`), with the cheating of `--tamper` if asked for (`decrypt` and `rounds` place
/// it, see `triskele_prf::prf_tamper`). Returns the first honest party's outputs; without a
/// cheater the three parties' outputs must agree.
fn run_jobs<F: PrfField, M: SecurityModel>(
    a: &PrfArgs,
    target: PrfTarget,
    decrypt: bool,
    rounds: usize,
    key_shares: &[RssVec<F>; 3],
    jobs: &[PrfJob<F>; 3],
) -> Result<Vec<F>, CliError>
where
    Party<M>: Finalize,
{
    let mut opts = crate::bench::net_options(a.timeout, None, None)?;
    let cheater = cheater_party(a.tamper)?;
    if let Some(p) = cheater {
        opts.tamper = Some(prf_tamper(target, decrypt, rounds, p, a.tamper_seed));
    }
    let nets = triskele_net::local_tls(&opts)?;
    let outputs = run_three(nets, 1, |net| {
        let i = net.party().index();
        compute_party::<F, M>(target, net, &key_shares[i], jobs[i].clone())
    })?;
    let [o1, o2, o3] = outputs;
    match cheater {
        Some(c) => {
            report_tamper(c, &opts, &target);
            // The first party that did not cheat.
            Ok(if c.index() == 0 { o2 } else { o1 })
        }
        None if o1 != o2 || o2 != o3 => Err(CliError::Party("the parties' outputs differ".into())),
        None => Ok(o1),
    }
}
