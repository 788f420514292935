//! `triskele bench`: the benchmark driver (PROTOCOLS.md §6).

use std::path::PathBuf;
use std::time::Duration;

use indicatif::{ProgressBar, ProgressStyle};
use triskele_aes::{bench_party, KeySize, RunReport, Target};
use triskele_net::{NetOptions, SimNet, Timeouts};
use triskele_prf::{PrfReport, PrfTarget};

use crate::args::BenchArgs;
use crate::error::CliError;
use crate::local::{pool, pools, run_three_in};
use crate::report::{format_table, format_twins, summarise, CsvOut, CsvRow};

/// Network options from the CLI's timeout and simulated-network flags.
pub fn net_options(
    timeout_s: f64,
    delay_ms: Option<f64>,
    rate_mbit: Option<f64>,
) -> Result<NetOptions, CliError> {
    if !(timeout_s.is_finite() && timeout_s > 0.0) {
        return Err(CliError::Input(format!(
            "--timeout must be a positive number of seconds, got {timeout_s}"
        )));
    }
    let mut opts = NetOptions {
        timeouts: Timeouts {
            connect: Duration::from_secs_f64(timeout_s.min(30.0)),
            read: Duration::from_secs_f64(timeout_s),
        },
        ..NetOptions::default()
    };
    if delay_ms.is_some() || rate_mbit.is_some() {
        let delay = delay_ms.unwrap_or(0.0);
        if !(delay.is_finite() && delay >= 0.0) {
            return Err(CliError::Input(format!(
                "--net-delay must be a non-negative number of milliseconds, got {delay}"
            )));
        }
        let rate = match rate_mbit {
            Some(r) if r.is_finite() && r > 0.0 => Some((r * 1e6) as u64),
            Some(r) => {
                return Err(CliError::Input(format!(
                    "--net-rate must be a positive number of Mbit/s, got {r}"
                )))
            }
            None => None,
        };
        opts.sim = Some(SimNet {
            one_way_delay: Duration::from_secs_f64(delay / 1000.0),
            rate_bits_per_sec: rate,
        });
    }
    Ok(opts)
}

/// The largest batch of PRF evaluations per run: a run keeps every evaluation's shares and,
/// in the malicious variants, its records in memory (about 6 GiB for the three local parties
/// of mal-mimc-cube at 100,000; this limit keeps the largest runs within a 64 GiB machine).
const MAX_PRF_SIMD: usize = 1 << 20;

/// A benchmark target: an AES protocol or a PRF.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BenchTarget {
    Aes(Target),
    Prf(PrfTarget),
}

impl std::fmt::Display for BenchTarget {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            BenchTarget::Aes(t) => t.fmt(f),
            BenchTarget::Prf(t) => t.fmt(f),
        }
    }
}

impl std::str::FromStr for BenchTarget {
    type Err = CliError;
    fn from_str(name: &str) -> Result<Self, CliError> {
        if let Ok(t) = name.parse::<PrfTarget>() {
            return Ok(BenchTarget::Prf(t));
        }
        name.parse::<Target>().map(BenchTarget::Aes).map_err(|e| {
            CliError::Input(format!(
                "{e}; PRF targets: {}",
                PrfTarget::ALL
                    .iter()
                    .map(|t| t.name())
                    .collect::<Vec<_>>()
                    .join(" ")
            ))
        })
    }
}

impl BenchTarget {
    /// One party's side of one repetition, as a CSV row.
    fn run(
        self,
        net: triskele_net::Network,
        size: KeySize,
        simd: usize,
    ) -> Result<CsvRow, CliError> {
        Ok(match self {
            BenchTarget::Aes(t) => {
                let r: RunReport = bench_party(t, net, size, simd)?;
                CsvRow::from(&r)
            }
            BenchTarget::Prf(t) => {
                let r: PrfReport = triskele_prf::bench_party(t, net, simd)?;
                CsvRow::from(&r)
            }
        })
    }
}

fn targets(all: bool, all_prf: bool, names: &[String]) -> Result<Vec<BenchTarget>, CliError> {
    let mut out: Vec<BenchTarget> = Vec::new();
    if all {
        out.extend(Target::ALL.iter().map(|t| BenchTarget::Aes(*t)));
    }
    if all_prf {
        out.extend(PrfTarget::ALL.iter().map(|t| BenchTarget::Prf(*t)));
    }
    for name in names {
        let t: BenchTarget = name.parse()?;
        if !out.contains(&t) {
            out.push(t);
        }
    }
    if out.is_empty() {
        return Err(CliError::Input(
            "no protocol given: name one or more targets (e.g. chida, mimc) or use --all / --all-prf".into(),
        ));
    }
    Ok(out)
}

fn progress(total: usize) -> ProgressBar {
    let bar = ProgressBar::new(total as u64);
    if let Ok(style) =
        ProgressStyle::with_template("{spinner} [{elapsed_precise}] {bar:30} {pos}/{len} {msg}")
    {
        bar.set_style(style);
    }
    bar.enable_steady_tick(Duration::from_millis(200));
    bar
}

pub fn run(a: BenchArgs) -> Result<(), CliError> {
    let (simd, names) = a.batch_sizes_and_targets().map_err(CliError::Input)?;
    let targets = targets(a.all, a.all_prf, &names)?;
    if simd.contains(&0) {
        return Err(CliError::Input("--simd values must be at least 1".into()));
    }
    let largest = simd.iter().copied().max().unwrap_or(0);
    if largest > MAX_PRF_SIMD && targets.iter().any(|t| matches!(t, BenchTarget::Prf(_))) {
        return Err(CliError::Input(format!(
            "--simd {largest} is above the PRF targets' limit of {MAX_PRF_SIMD} evaluations per run (each run holds all its evaluations' shares in memory); use several runs"
        )));
    }
    if a.rep == 0 {
        return Err(CliError::Input("--rep must be at least 1".into()));
    }
    let size = if a.aes256 {
        KeySize::Aes256
    } else {
        KeySize::Aes128
    };
    let threads = a.threads.unwrap_or(1);
    let segment = a.verify_segment.checked_mul(1 << 20).ok_or_else(|| {
        CliError::Input(format!(
            "--verify-segment {} is too large",
            a.verify_segment
        ))
    })?;
    triskele_engine::set_verify_segment((segment > 0).then_some(segment));
    let opts = net_options(a.timeout, a.net_delay, a.net_rate)?;
    let total = targets.len() * simd.len() * (a.warmup + a.rep);
    let bar = progress(total);

    let result = if a.local {
        run_local(&a, &targets, &simd, size, threads, &opts, &bar)
    } else {
        run_config(&a, &targets, &simd, size, threads, &opts, &bar)
    };
    bar.finish_and_clear();
    let Runs {
        rows: parties,
        peaks,
    } = result?;
    let rows = summarise(&parties)?;
    println!(
        "triskele {} (rev {}), backend {}, {} worker thread(s) per party, {}{}{}{}",
        env!("CARGO_PKG_VERSION"),
        env!("TRISKELE_GIT_REV"),
        triskele_field::backend::active(),
        if threads == 0 {
            rayon::current_num_threads()
        } else {
            threads
        },
        if a.aes256 { "AES-256" } else { "AES-128" },
        match &opts.sim {
            Some(s) => format!(
                ", simulated network: {:?} one-way, {}",
                s.one_way_delay,
                s.rate_bits_per_sec
                    .map(|r| format!("{} Mbit/s", r as f64 / 1e6))
                    .unwrap_or_else(|| "no rate cap".into())
            ),
            None => String::new(),
        },
        match a.warmup {
            0 => ", no warm-up".to_string(),
            1 => ", 1 untimed warm-up run per row".to_string(),
            w => format!(", {w} untimed warm-up runs per row"),
        },
        if a.interleave {
            ", repetitions interleaved"
        } else {
            ""
        }
    );
    if !a.local {
        println!("(this party's measurements only; run `triskele report` on all three files for the max over parties)");
    }
    print!("{}", format_table(&rows));
    let whose = if a.local {
        "this process (all three parties)"
    } else {
        "this party"
    };
    // Per row where the peak could be reset before each row's runs (Linux).
    let per_row = peaks.len() == rows.len() && peaks.iter().all(Option::is_some);
    let peak = if per_row {
        peaks.iter().flatten().map(|p| p.peak).max()
    } else {
        crate::ot_cmd::peak_memory()
    };
    println!("peak memory of {whose}: {}", crate::ot_cmd::mib(peak));
    if per_row && rows.len() > 1 {
        for (r, p) in rows.iter().zip(peaks.iter().flatten()) {
            let kept = if p.inflated() {
                format!(
                    " (of which up to {} the allocator kept from earlier rows)",
                    crate::ot_cmd::mib(Some(p.carried))
                )
            } else {
                String::new()
            };
            println!(
                "  {:<22} {:>8} {:>12}{kept}",
                r.protocol,
                r.simd,
                crate::ot_cmd::mib(Some(p.peak))
            );
        }
    }
    // Only peaks that nothing of earlier rows inflates are set side by side.
    let clean: Vec<Option<u64>> = peaks
        .iter()
        .map(|p| p.filter(|p| !p.inflated()).map(|p| p.peak))
        .collect();
    print!("{}", format_twins(&rows, per_row.then_some(&clean[..])));
    Ok(())
}

/// Resident memory above the process's starting size that a row may always begin with and
/// still count as starting clean (allocator and thread-pool state).
const CARRIED_NOISE: u64 = 8 << 20;

/// The peak resident memory of the runs of one target and batch size.
#[derive(Debug, Clone, Copy)]
struct RowPeak {
    /// The process's peak while they ran.
    peak: u64,
    /// Resident memory above the size at the start of the command when they began: memory
    /// the allocator kept from earlier rows (mimalloc returns freed memory to the kernel
    /// later), part of `peak` though the row may not need it.
    carried: u64,
}

impl RowPeak {
    /// Whether memory kept from earlier rows may make up a noticeable part of the peak (more
    /// than [`CARRIED_NOISE`] and more than a tenth).
    fn inflated(&self) -> bool {
        self.carried > CARRIED_NOISE.max(self.peak / 10)
    }
}

/// Resets this process's peak resident memory on Linux (writing 5 to `/proc/self/clear_refs`
/// sets `VmHWM` to the current resident size), so that the next reading is the peak of what
/// runs in between; returns the resident memory at that point. `None` where that is not
/// possible.
fn reset_peak_memory() -> Option<u64> {
    std::fs::write("/proc/self/clear_refs", "5").ok()?;
    crate::ot_cmd::resident_memory()
}

/// The peak of the runs since `reset` ([`reset_peak_memory`]'s value); `start` is the
/// resident memory at the start of the command. `None` where the peak could not be reset
/// before them (it would include the earlier runs).
fn row_peak(reset: Option<u64>, start: Option<u64>) -> Option<RowPeak> {
    let at_reset = reset?;
    Some(RowPeak {
        peak: crate::ot_cmd::peak_memory()?,
        carried: at_reset.saturating_sub(start?),
    })
}

/// What the runs of one command produced: the CSV rows per party (one party with
/// `--config`), and the peak memory per target and batch size, in run order.
struct Runs {
    rows: Vec<Vec<CsvRow>>,
    peaks: Vec<Option<RowPeak>>,
}

fn csv_path(prefix: &str, party: u8) -> PathBuf {
    PathBuf::from(format!("{prefix}-p{party}.csv"))
}

/// One run of a command: a target, a batch size, and the run's place among that row's runs
/// (`i < warmup`: a warm-up run).
struct Step {
    target: BenchTarget,
    simd: usize,
    i: usize,
}

impl Step {
    /// Whether the run is timed (written to the CSV) rather than a warm-up run.
    fn timed(&self, a: &BenchArgs) -> bool {
        self.i >= a.warmup
    }

    /// The progress message.
    fn msg(&self, a: &BenchArgs) -> String {
        let (t, simd, i) = (self.target, self.simd, self.i);
        if i < a.warmup {
            format!("{t} simd={simd} warm-up {}/{}", i + 1, a.warmup)
        } else {
            format!("{t} simd={simd} rep {}/{}", i - a.warmup + 1, a.rep)
        }
    }
}

/// The runs of a command in order, in groups whose peak memory is measured together: one
/// group per target and batch size (its warm-up runs, then its timed runs), or with
/// `--interleave` one group of everything: all warm-up runs, then repetition 1 of every
/// row, repetition 2 of every row, and so on.
fn schedule(a: &BenchArgs, targets: &[BenchTarget], batch_sizes: &[usize]) -> Vec<Vec<Step>> {
    let rows: Vec<(BenchTarget, usize)> = targets
        .iter()
        .flat_map(|&t| batch_sizes.iter().map(move |&simd| (t, simd)))
        .collect();
    let step = |(target, simd): (BenchTarget, usize), i| Step { target, simd, i };
    if a.interleave {
        let warm = (0..a.warmup).flat_map(|i| rows.iter().map(move |&r| (r, i)));
        let timed = (a.warmup..a.warmup + a.rep).flat_map(|i| rows.iter().map(move |&r| (r, i)));
        vec![warm.chain(timed).map(|(r, i)| step(r, i)).collect()]
    } else {
        rows.iter()
            .map(|&r| (0..a.warmup + a.rep).map(|i| step(r, i)).collect())
            .collect()
    }
}

fn run_local(
    a: &BenchArgs,
    targets: &[BenchTarget],
    batch_sizes: &[usize],
    size: KeySize,
    threads: usize,
    opts: &NetOptions,
    bar: &ProgressBar,
) -> Result<Runs, CliError> {
    let mut outs = [1u8, 2, 3]
        .iter()
        .map(|p| CsvOut::create(&csv_path(&a.csv, *p)))
        .collect::<Result<Vec<_>, _>>()?;
    let mut rows: Vec<Vec<CsvRow>> = vec![Vec::new(); 3];
    let mut peaks = Vec::new();
    // Kept for the whole command, as `run_config` keeps its one pool.
    let pools = pools(threads)?;
    let start = crate::ot_cmd::resident_memory();
    for group in schedule(a, targets, batch_sizes) {
        let reset = reset_peak_memory();
        for step in &group {
            bar.set_message(step.msg(a));
            let nets = triskele_net::local_tls(opts)?;
            let reports: [CsvRow; 3] = run_three_rows(nets, &pools, step.target, size, step.simd)?;
            if step.timed(a) {
                for (p, row) in reports.into_iter().enumerate() {
                    outs[p].write(&row)?;
                    rows[p].push(row);
                }
            }
            bar.inc(1);
        }
        if !a.interleave {
            peaks.push(row_peak(reset, start));
        }
    }
    Ok(Runs { rows, peaks })
}

fn run_config(
    a: &BenchArgs,
    targets: &[BenchTarget],
    batch_sizes: &[usize],
    size: KeySize,
    threads: usize,
    opts: &NetOptions,
    bar: &ProgressBar,
) -> Result<Runs, CliError> {
    let Some(path) = &a.config else {
        return Err(CliError::Input(
            "either --local or --config FILE is required".into(),
        ));
    };
    let cfg = triskele_net::PartyConfig::from_toml_file(path)?;
    let me = cfg.party().number();
    check_plan(&cfg, opts, &plan(a, targets, batch_sizes))?;
    let mut out = CsvOut::create(&csv_path(&a.csv, me))?;
    let pool = pool(threads)?;
    let mut rows = Vec::new();
    let mut peaks = Vec::new();
    let start = crate::ot_cmd::resident_memory();
    for group in schedule(a, targets, batch_sizes) {
        let reset = reset_peak_memory();
        for step in &group {
            bar.set_message(step.msg(a));
            let net = triskele_net::connect(&cfg, opts)?;
            let row = pool.install(|| step.target.run(net, size, step.simd))?;
            if step.timed(a) {
                out.write(&row)?;
                rows.push(row);
            }
            bar.inc(1);
        }
        if !a.interleave {
            peaks.push(row_peak(reset, start));
        }
    }
    Ok(Runs {
        rows: vec![rows],
        peaks,
    })
}

/// The runs a `--config` command will make, in order: each run's own parameters are checked
/// when it starts, but the three processes must also agree on how many runs there are, or
/// one would wait for peers that have finished.
fn plan(a: &BenchArgs, targets: &[BenchTarget], batch_sizes: &[usize]) -> String {
    let names: Vec<String> = targets.iter().map(|t| t.to_string()).collect();
    format!(
        "triskele {} bench plan: targets={} simd={batch_sizes:?} warmup={} rep={} aes256={} interleave={}",
        env!("CARGO_PKG_VERSION"),
        names.join(","),
        a.warmup,
        a.rep,
        a.aes256,
        a.interleave
    )
}

/// Exchanges [`plan`] with both neighbours over one connection before the runs; a party
/// whose plan differs is named in a parameter-mismatch error (exit 2).
fn check_plan(
    cfg: &triskele_net::PartyConfig,
    opts: &NetOptions,
    plan: &str,
) -> Result<(), CliError> {
    let mut net = triskele_net::connect(cfg, opts)?;
    triskele_engine::check_agreement(
        &mut net,
        plan,
        "the bench plan (targets, --simd, --warmup, --rep, --aes256 or --interleave)",
    )?;
    net.shutdown()?;
    Ok(())
}

/// The three parties of one local repetition; the most telling error if one fails.
fn run_three_rows(
    nets: [triskele_net::Network; 3],
    pools: &[rayon::ThreadPool; 3],
    t: BenchTarget,
    size: KeySize,
    simd: usize,
) -> Result<[CsvRow; 3], CliError> {
    match t {
        BenchTarget::Aes(t) => {
            let r: [RunReport; 3] =
                run_three_in(pools, nets, |net| bench_party(t, net, size, simd))?;
            Ok(r.map(|r| CsvRow::from(&r)))
        }
        BenchTarget::Prf(t) => {
            let r: [PrfReport; 3] =
                run_three_in(pools, nets, |net| triskele_prf::bench_party(t, net, simd))?;
            Ok(r.map(|r| CsvRow::from(&r)))
        }
    }
}
