//! `triskele bench`: the benchmark driver (PROTOCOLS.md §6).

use std::path::PathBuf;
use std::time::Duration;

use indicatif::{ProgressBar, ProgressStyle};
use triskele_aes::{bench_party, KeySize, RunReport, Target};
use triskele_net::{NetOptions, SimNet, Timeouts};

use crate::args::BenchArgs;
use crate::error::CliError;
use crate::local::{pool, run_three};
use crate::report::{format_table, summarise, CsvOut, CsvRow};

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

fn targets(all: bool, names: &[String]) -> Result<Vec<Target>, CliError> {
    let mut out: Vec<Target> = if all {
        Target::ALL.to_vec()
    } else {
        Vec::new()
    };
    for name in names {
        let t: Target = name
            .parse()
            .map_err(|e: triskele_aes::TargetError| CliError::Input(e.to_string()))?;
        if !out.contains(&t) {
            out.push(t);
        }
    }
    if out.is_empty() {
        return Err(CliError::Input(
            "no protocol given: name one or more targets (e.g. chida) or use --all".into(),
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
    let targets = targets(a.all, &names)?;
    if simd.contains(&0) {
        return Err(CliError::Input("--simd values must be at least 1".into()));
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
    let opts = net_options(a.timeout, a.net_delay, a.net_rate)?;
    let total = targets.len() * simd.len() * a.rep;
    let bar = progress(total);

    let result = if a.local {
        run_local(&a, &targets, &simd, size, threads, &opts, &bar)
    } else {
        run_config(&a, &targets, &simd, size, threads, &opts, &bar)
    };
    bar.finish_and_clear();
    let parties = result?;
    let rows = summarise(&parties)?;
    println!(
        "triskele {} (rev {}), backend {}, {} worker thread(s) per party, {}{}",
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
        }
    );
    if !a.local {
        println!("(this party's measurements only; run `triskele report` on all three files for the max over parties)");
    }
    print!("{}", format_table(&rows));
    let peak = crate::ot_cmd::mib(crate::ot_cmd::peak_memory());
    if a.local {
        println!("peak memory of this process (all three parties): {peak}");
    } else {
        println!("peak memory of this party: {peak}");
    }
    Ok(())
}

fn csv_path(prefix: &str, party: u8) -> PathBuf {
    PathBuf::from(format!("{prefix}-p{party}.csv"))
}

fn step_msg(t: Target, simd: usize, rep: usize, reps: usize) -> String {
    format!("{t} simd={simd} rep {}/{reps}", rep + 1)
}

fn run_local(
    a: &BenchArgs,
    targets: &[Target],
    batch_sizes: &[usize],
    size: KeySize,
    threads: usize,
    opts: &NetOptions,
    bar: &ProgressBar,
) -> Result<Vec<Vec<CsvRow>>, CliError> {
    let mut outs = [1u8, 2, 3]
        .iter()
        .map(|p| CsvOut::create(&csv_path(&a.csv, *p)))
        .collect::<Result<Vec<_>, _>>()?;
    let mut rows: Vec<Vec<CsvRow>> = vec![Vec::new(); 3];
    for &t in targets {
        for &simd in batch_sizes {
            for rep in 0..a.rep {
                bar.set_message(step_msg(t, simd, rep, a.rep));
                let nets = triskele_net::local_tls(opts)?;
                let reports: [RunReport; 3] =
                    run_three(nets, threads, |net| bench_party(t, net, size, simd))?;
                for (p, r) in reports.iter().enumerate() {
                    let row = CsvRow::from(r);
                    outs[p].write(&row)?;
                    rows[p].push(row);
                }
                bar.inc(1);
            }
        }
    }
    Ok(rows)
}

fn run_config(
    a: &BenchArgs,
    targets: &[Target],
    batch_sizes: &[usize],
    size: KeySize,
    threads: usize,
    opts: &NetOptions,
    bar: &ProgressBar,
) -> Result<Vec<Vec<CsvRow>>, CliError> {
    let Some(path) = &a.config else {
        return Err(CliError::Input(
            "either --local or --config FILE is required".into(),
        ));
    };
    let cfg = triskele_net::PartyConfig::from_toml_file(path)?;
    let me = cfg.party().number();
    let mut out = CsvOut::create(&csv_path(&a.csv, me))?;
    let pool = pool(threads)?;
    let mut rows = Vec::new();
    for &t in targets {
        for &simd in batch_sizes {
            for rep in 0..a.rep {
                bar.set_message(step_msg(t, simd, rep, a.rep));
                let net = triskele_net::connect(&cfg, opts)?;
                let r = pool.install(|| bench_party(t, net, size, simd))?;
                let row = CsvRow::from(&r);
                out.write(&row)?;
                rows.push(row);
                bar.inc(1);
            }
        }
    }
    Ok(vec![rows])
}
