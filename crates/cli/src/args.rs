//! Command-line arguments (ARCHITECTURE.md, "CLI contract").

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand};

#[derive(Debug, Parser)]
#[command(
    name = "triskele",
    version,
    about = "Secure three-party computation of AES: benchmarks, one-shot runs, key generation"
)]
pub struct Cli {
    /// More log output on stderr (-v info, -vv debug); RUST_LOG overrides.
    #[arg(short, long, global = true, action = clap::ArgAction::Count)]
    pub verbose: u8,
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Benchmark protocols: three local parties over TLS (--local) or one party per process (--config).
    Bench(BenchArgs),
    /// Secret-share a key and input blocks, encrypt (or decrypt) them with three local parties, print the result.
    Aes(AesArgs),
    /// Write certificates, keys and p1..p3.toml for a three-machine run.
    Keygen(KeygenArgs),
    /// Summarise CSV files written by `bench`.
    Report(ReportArgs),
    /// Secret-share a key and inputs, evaluate an MPC-friendly PRF (Legendre, MiMC) with three local parties, print the outputs.
    Prf(PrfArgs),
    /// Two-party oblivious transfer (lattice ROT/OT, elliptic-curve baseline, OT extension).
    #[command(subcommand)]
    Ot(OtCommand),
}

#[derive(Debug, Subcommand)]
pub enum OtCommand {
    /// Benchmark an OT protocol: both parties in this process (two threads, in-memory channel).
    Bench(OtBenchArgs),
}

#[derive(Debug, Args)]
pub struct OtBenchArgs {
    /// Run both parties in this process (two threads, in-memory channel).
    #[arg(long, conflicts_with = "config", required_unless_present = "config")]
    pub local: bool,
    /// This party's config file (as written by `triskele keygen`): party 1 is the sender,
    /// party 2 the receiver; two processes with the p1 and p2 configs form one run over TLS.
    #[arg(long, value_name = "FILE")]
    pub config: Option<PathBuf>,
    /// Read and connect timeout in seconds (with --config).
    #[arg(long, value_name = "SECONDS", default_value_t = 60.0)]
    pub timeout: f64,
    /// rot (ROTed), ot (BDGM19), rotted, ec (Simplest OT, Ristretto255), iknp, kos, softspoken, softspoken-mal.
    #[arg(long, value_name = "NAME")]
    pub protocol: String,
    /// Number of OTs.
    #[arg(long, value_name = "N")]
    pub count: usize,
    /// Noise for the lattice protocols: gaussian (discrete Gaussian, sigma 2, as in ROTed) or
    /// binomial (centered binomial with variance 4, constant time by construction, faster).
    #[arg(long, value_name = "DIST", default_value = "gaussian")]
    pub noise: String,
    /// Repetitions: one line each, then the median and range over them (with --config, both
    /// processes must pass the same value).
    #[arg(long, value_name = "N", default_value_t = 1)]
    pub rep: usize,
}

#[derive(Debug, Args)]
pub struct BenchArgs {
    /// Run all three parties in this process over TLS on loopback (ephemeral certificates).
    #[arg(long, conflicts_with = "config", required_unless_present = "config")]
    pub local: bool,
    /// This party's config file (TOML); three processes with p1/p2/p3 configs form one run.
    #[arg(long, value_name = "FILE")]
    pub config: Option<PathBuf>,
    /// Worker threads per party (0 = all cores; absent = one).
    #[arg(long, value_name = "N")]
    pub threads: Option<usize>,
    /// Batch sizes (AES blocks, or PRF evaluations: Legendre output bits, MiMC blocks); several values allowed. Targets may follow directly.
    #[arg(long, value_name = "N", num_args = 1.., required = true)]
    pub simd: Vec<String>,
    /// Repetitions per protocol and batch size.
    #[arg(long, value_name = "R", default_value_t = 1)]
    pub rep: usize,
    /// Untimed repetitions before each protocol's and batch size's timed ones (not in the
    /// CSV). The first run in a process pays for fresh memory (page faults) and cold caches;
    /// without a warm-up, whichever target comes first looks slower than it is. All parties
    /// must use the same value.
    #[arg(long, value_name = "W", default_value_t = 1)]
    pub warmup: usize,
    /// Take turns: all warm-up runs first, then repetition 1 of every target and batch size,
    /// repetition 2 of every one, and so on, so that a slow spell of a shared machine falls on
    /// all of them alike (for comparing targets, e.g. a malicious variant with its twin). The
    /// peak memory is then given for the whole command only.
    #[arg(long)]
    pub interleave: bool,
    /// CSV file prefix: writes PREFIX-p1.csv .. PREFIX-p3.csv (or only this party's with --config).
    #[arg(long, value_name = "FILE", default_value = "result")]
    pub csv: String,
    /// Run every AES protocol (PRF targets: --all-prf or by name).
    #[arg(long)]
    pub all: bool,
    /// Benchmark every PRF target (legendre mimc mimc-cube mal-legendre mal-mimc mal-mimc-cube).
    #[arg(long)]
    pub all_prf: bool,
    /// AES-256 instead of AES-128.
    #[arg(long)]
    pub aes256: bool,
    /// Simulated one-way latency added to every link, in milliseconds.
    #[arg(long, value_name = "MS")]
    pub net_delay: Option<f64>,
    /// Simulated bandwidth cap of every link, in Mbit/s.
    #[arg(long, value_name = "MBIT")]
    pub net_rate: Option<f64>,
    /// Read timeout in seconds: a peer silent for longer is treated as failed.
    #[arg(long, value_name = "SECONDS", default_value_t = 60.0)]
    pub timeout: f64,
    /// Malicious protocols: verify the recorded products whenever they reach MIB mebibytes,
    /// instead of all at once at the end (0: only at the end). Bounds the memory of large
    /// batches; each segment adds about 2·log2(its triples) − 30 rounds (its last steps go
    /// with the final check's). All parties must use the same value.
    #[arg(long, value_name = "MIB", default_value_t = triskele_engine::DEFAULT_VERIFY_SEGMENT >> 20)]
    pub verify_segment: usize,
    /// Protocols to run (see `--all`); e.g. chida.
    #[arg(value_name = "TARGET")]
    pub targets: Vec<String>,
}

#[derive(Debug, Args)]
pub struct AesArgs {
    /// Protocol to use, e.g. chida.
    #[arg(long, value_name = "TARGET")]
    pub protocol: String,
    /// AES-256 (the key must then be 32 bytes).
    #[arg(long)]
    pub aes256: bool,
    /// Decrypt instead of encrypt.
    #[arg(long)]
    pub decrypt: bool,
    /// The key in hex (32 hex characters, or 64 with --aes256).
    #[arg(long, value_name = "HEX")]
    pub key: String,
    /// An input block in hex (32 hex characters); repeat for several blocks.
    #[arg(long, value_name = "HEX", required = true)]
    pub input: Vec<String>,
    /// Read timeout in seconds.
    #[arg(long, value_name = "SECONDS", default_value_t = 30.0)]
    pub timeout: f64,
    /// Make party PARTY (1, 2 or 3) cheat: it flips one bit of one message it sends in the
    /// online phase. Malicious protocols must abort (exit 3); semi-honest ones give a wrong or
    /// correct output. For tests and demonstrations.
    #[arg(long, value_name = "PARTY")]
    pub tamper: Option<u64>,
    /// Chooses which message and bit the cheating party flips.
    #[arg(long, value_name = "N", default_value_t = 0, requires = "tamper")]
    pub tamper_seed: u64,
}

#[derive(Debug, Args)]
pub struct PrfArgs {
    /// legendre, mimc or mimc-cube.
    #[arg(long = "prf", value_name = "NAME")]
    pub prf: String,
    /// Security with abort against one actively corrupt party (mal-legendre, mal-mimc,
    /// mal-mimc-cube).
    #[arg(long)]
    pub malicious: bool,
    /// The prime p (decimal or 0x-hex, below 2^128); default 2^127+45.
    #[arg(long, value_name = "P")]
    pub modulus: Option<String>,
    /// The key, an element of F_p (decimal or 0x-hex).
    #[arg(long, value_name = "K")]
    pub key: String,
    /// Legendre: the first input X (default 0). MiMC: a block to encrypt (or decrypt);
    /// repeatable, one output line per input.
    #[arg(long, value_name = "X")]
    pub input: Vec<String>,
    /// MiMC counter mode: keystream E_k(N), E_k(N+1), ... (with --count).
    #[arg(long, value_name = "N")]
    pub nonce: Option<String>,
    /// Legendre: number of output bits (default 1). MiMC with --nonce: keystream words.
    #[arg(long, value_name = "N")]
    pub count: Option<usize>,
    /// Legendre: print the SHA-256 of the packed bits instead of the bits.
    #[arg(long)]
    pub sha256: bool,
    /// MiMC: decrypt the inputs instead of encrypting them.
    #[arg(long)]
    pub decrypt: bool,
    /// Read timeout in seconds.
    #[arg(long, value_name = "SECONDS", default_value_t = 30.0)]
    pub timeout: f64,
    /// Make party PARTY (1, 2 or 3) flip one bit of one of its online messages: malicious
    /// variants must abort (exit 3). For tests and demonstrations.
    #[arg(long, value_name = "PARTY")]
    pub tamper: Option<u64>,
    /// Chooses which message and bit the cheating party flips.
    #[arg(long, value_name = "N", default_value_t = 0, requires = "tamper")]
    pub tamper_seed: u64,
}

#[derive(Debug, Args)]
pub struct KeygenArgs {
    /// Output directory (created if missing).
    #[arg(long, value_name = "DIR")]
    pub dir: PathBuf,
    /// The three parties' addresses, HOST:PORT,HOST:PORT,HOST:PORT.
    #[arg(
        long,
        value_name = "HOSTS",
        default_value = "127.0.0.1:8100,127.0.0.1:8101,127.0.0.1:8102"
    )]
    pub hosts: String,
}

#[derive(Debug, Args)]
pub struct ReportArgs {
    /// CSV files written by `bench` (e.g. result-p1.csv result-p2.csv result-p3.csv). The files
    /// of several runs (`bench --csv r1`, `--csv r2`, ...: r1-p1.csv .. r2-p3.csv ...) are summed
    /// up run by run: medians and ranges over the runs.
    #[arg(value_name = "FILE", required = true)]
    pub files: Vec<PathBuf>,
    /// Also draw total throughput against batch size, one line per protocol, as an SVG file.
    #[arg(long, value_name = "OUT.svg")]
    pub plot: Option<PathBuf>,
}

impl BenchArgs {
    /// Splits `--simd` values into batch sizes and the targets that followed them
    /// (`--simd 1 100 chida` is read as batch sizes 1 and 100 and target chida).
    pub fn batch_sizes_and_targets(&self) -> Result<(Vec<usize>, Vec<String>), String> {
        let mut sizes = Vec::new();
        let mut targets = Vec::new();
        for v in &self.simd {
            match v.parse::<usize>() {
                Ok(n) if targets.is_empty() => sizes.push(n),
                Ok(_) => {
                    return Err(format!(
                        "--simd: batch size '{v}' after a protocol name; give batch sizes first"
                    ))
                }
                Err(_)
                    if v.chars()
                        .all(|c| c.is_ascii_digit() || c == '-' || c == '+') =>
                {
                    return Err(format!("--simd: '{v}' is not a batch size"))
                }
                Err(_) => targets.push(v.clone()),
            }
        }
        if sizes.is_empty() {
            return Err("--simd needs at least one batch size".into());
        }
        targets.extend(self.targets.iter().cloned());
        Ok((sizes, targets))
    }
}
