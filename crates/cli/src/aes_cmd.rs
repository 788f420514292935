//! `triskele aes`: a dealer secret-shares the key and the blocks, three local parties compute.

use triskele_aes::{aes_tamper, compute_party, KeySize, Mode, Target};
use triskele_field::Gf2p8;
use triskele_share::{deal, PartyId};
use zeroize::Zeroize;

use crate::args::AesArgs;
use crate::error::CliError;
use crate::local::run_three;

/// Parses hex into exactly `len` bytes, with a message naming `what`.
pub fn parse_hex(s: &str, len: usize, what: &str) -> Result<Vec<u8>, CliError> {
    let bytes = hex::decode(s.trim()).map_err(|e| {
        CliError::Input(format!(
            "{what} is not valid hex ({e}); expected {} hex characters",
            2 * len
        ))
    })?;
    if bytes.len() != len {
        return Err(CliError::Input(format!(
            "{what} has {} bytes ({} hex characters); expected {len} bytes ({} hex characters)",
            bytes.len(),
            2 * bytes.len(),
            2 * len
        )));
    }
    Ok(bytes)
}

/// The party named by `--tamper`, if any.
pub fn cheater_party(tamper: Option<u64>) -> Result<Option<PartyId>, CliError> {
    tamper
        .map(|n| {
            PartyId::from_number(n).ok_or_else(|| {
                CliError::Input(format!("--tamper takes a party number 1, 2 or 3, got {n}"))
            })
        })
        .transpose()
}

/// Tells what the cheating party flipped (the run got this far: nobody detected it).
pub fn report_tamper(c: PartyId, opts: &triskele_net::NetOptions, target: &dyn std::fmt::Display) {
    match opts.tamper.as_ref().and_then(|t| t.tampered()) {
        Some(t) => eprintln!(
            "{c} flipped bit {} of byte {} in its online message {} to {} ({} bytes); {target} did not detect it",
            t.bit, t.byte, t.message, t.direction, t.len
        ),
        None => eprintln!("{c} was asked to cheat but sent no message that could be altered"),
    }
}

pub fn run(a: AesArgs) -> Result<(), CliError> {
    let target: Target = a
        .protocol
        .parse()
        .map_err(|e: triskele_aes::TargetError| CliError::Input(e.to_string()))?;
    let size = if a.aes256 {
        KeySize::Aes256
    } else {
        KeySize::Aes128
    };
    let key_hint = if a.aes256 {
        "AES-256 key"
    } else {
        "AES-128 key (use --aes256 for a 32-byte key)"
    };
    let mut key = parse_hex(&a.key, size.key_bytes(), key_hint)?;
    let mut blocks = Vec::with_capacity(16 * a.input.len());
    for (i, s) in a.input.iter().enumerate() {
        blocks.extend(parse_hex(s, 16, &format!("input block {}", i + 1))?);
    }
    let mode = if a.decrypt {
        Mode::Decrypt
    } else {
        Mode::Encrypt
    };
    let mut opts = crate::bench::net_options(a.timeout, None, None)?;
    let cheater = cheater_party(a.tamper)?;
    if let Some(p) = cheater {
        opts.tamper = Some(aes_tamper(target, size, p, a.tamper_seed));
    }

    let mut rng = rand::rng();
    let key_elems: Vec<Gf2p8> = key.iter().map(|b| Gf2p8(*b)).collect();
    let block_elems: Vec<Gf2p8> = blocks.iter().map(|b| Gf2p8(*b)).collect();
    key.zeroize();
    let key_shares = deal(&key_elems, &mut rng);
    let block_shares = deal(&block_elems, &mut rng);
    drop(key_elems);

    let nets = triskele_net::local_tls(&opts)?;
    let outputs = run_three(nets, 1, |net| {
        let i = net.party().index();
        compute_party(target, net, &key_shares[i], block_shares[i].clone(), mode)
    })?;
    // The output printed is that of the first honest party.
    let honest: Vec<usize> = (0..3)
        .filter(|i| cheater.map(|c| c.index()) != Some(*i))
        .collect();
    let shown = &outputs[honest[0]];
    if let Some(c) = cheater {
        report_tamper(c, &opts, &target);
        if honest.iter().any(|i| &outputs[*i] != shown) {
            eprintln!(
                "the honest parties' outputs differ; showing {}'s",
                PartyId::ALL[honest[0]]
            );
        }
    } else if outputs[0] != outputs[1] || outputs[1] != outputs[2] {
        return Err(CliError::Party("the parties' outputs differ".into()));
    }
    let mut stdout = String::new();
    for block in shown.chunks(16) {
        stdout.push_str(&hex::encode(block));
        stdout.push('\n');
    }
    print!("{stdout}");
    Ok(())
}
