//! `triskele`: secure three-party AES from the command line.

mod aes_cmd;
mod alloc;
mod args;
mod bench;
mod error;
mod keygen;
mod local;
mod ot_cmd;
mod plot;
mod prf_cmd;
mod report;

use std::process::ExitCode;

use clap::Parser;

/// Large per-round buffers are allocated and freed every protocol round; mimalloc keeps them
/// mapped instead of returning them to the kernel each time (fewer page faults). Built without
/// transparent huge pages (feature `no_thp`: mimalloc does not `madvise` its regions), since
/// the kernel zeroes a huge page at its first touch, 2 MiB at a time, for buffers that often
/// use a fraction of it: alternating runs on the 2-core VM gave `chida` at 10,000 blocks
/// 175-220k against 138-157k blocks/s, `lut16` 81-85k against 55-74k, `mal-gf4-circuit-opt`
/// at 100,000 blocks 31-33k against 24-26k, and 10-55% lower peaks (`gf4-circuit` at 10,000
/// blocks lost 4-12%). The feature only drops mimalloc's `madvise`: under the kernel setting
/// `always` huge pages still apply (`MIMALLOC_ALLOW_THP=0` turns them off for the process).
/// Freed memory is kept for 10 s before it goes back to the kernel ([`alloc`]).
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

use crate::args::{Cli, Command};

fn main() -> ExitCode {
    alloc::configure();
    let cli = match Cli::try_parse() {
        Ok(c) => c,
        Err(e) => {
            let code = match e.kind() {
                clap::error::ErrorKind::DisplayHelp | clap::error::ErrorKind::DisplayVersion => 0,
                _ => 1,
            };
            // Printing help or a usage error; nothing else to do if stderr is gone.
            let _ = e.print();
            return ExitCode::from(code);
        }
    };
    init_logging(cli.verbose);
    let backend_env = std::env::var(triskele_field::backend::ENV_VAR).ok();
    // The OT crate's ring code reads the same variable (`avx512` is one of its names).
    let ot_name = backend_env
        .as_deref()
        .and_then(triskele_ot::rlwe::Backend::from_name);
    if let (triskele_field::backend::BackendRequest::Unknown, None) = (
        triskele_field::backend::parse_request(backend_env.as_deref()),
        ot_name,
    ) {
        eprintln!(
            "warning: {}={:?} names no backend (use portable, avx2, avx2-vpclmul, gfni, gfni-avx512, avx512 or auto); using {}",
            triskele_field::backend::ENV_VAR,
            backend_env.unwrap_or_default(),
            triskele_field::backend::active()
        );
    }
    let result = match cli.command {
        Command::Bench(a) => bench::run(a),
        Command::Aes(a) => aes_cmd::run(a),
        Command::Keygen(a) => keygen::run(a),
        Command::Report(a) => report::run(a),
        Command::Prf(a) => prf_cmd::run(a),
        Command::Ot(args::OtCommand::Bench(a)) => ot_cmd::run(a),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::from(e.exit_code())
        }
    }
}

fn init_logging(verbose: u8) {
    let default = match verbose {
        0 => "warn",
        1 => "info",
        _ => "debug",
    };
    let filter = tracing_subscriber::EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new(default));
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .try_init();
}
