//! `triskele ot bench`: two-party oblivious transfer benchmarks.

use std::path::Path;

use triskele_net::{connect_pair, NetError, PartyConfig, PartyId, PeerLink};
use triskele_ot::bench::{run_local_with, run_party, Protocol, Role};
use triskele_ot::channel::ChannelStats;
use triskele_ot::rlwe::NoiseDistribution;

use crate::args::OtBenchArgs;
use crate::error::CliError;

/// The OT crate's channel over a TLS link to the other party; keeps the transport's own
/// error so that the command can report it with its exit code (2).
struct NetChannel {
    link: PeerLink,
    failure: Option<NetError>,
}

impl NetChannel {
    fn fail(&mut self, e: NetError) -> triskele_ot::Error {
        let msg = e.to_string();
        self.failure.get_or_insert(e);
        triskele_ot::Error::Transport(msg)
    }
}

impl triskele_ot::Channel for NetChannel {
    fn send(&mut self, msg: Vec<u8>) -> triskele_ot::Result<()> {
        self.link.send(msg).map_err(|e| self.fail(e))
    }

    fn recv(&mut self) -> triskele_ot::Result<Vec<u8>> {
        self.link.recv().map_err(|e| self.fail(e))
    }

    fn stats(&self) -> ChannelStats {
        let s = self.link.stats();
        ChannelStats {
            bytes_sent: s.bytes_sent,
            bytes_received: s.bytes_received,
            // The link counts sends and receives together.
            messages_sent: s.messages,
            messages_received: 0,
        }
    }
}

/// One party of a two-process run from a configuration file.
fn run_configured(
    path: &Path,
    protocol: Protocol,
    count: usize,
    noise: NoiseDistribution,
    timeout: f64,
    rep: usize,
) -> Result<(), CliError> {
    let opts = crate::bench::net_options(timeout, None, None)?;
    let cfg = PartyConfig::from_toml_file(path)?;
    let role = match cfg.party() {
        PartyId::P1 => Role::Sender,
        PartyId::P2 => Role::Receiver,
        PartyId::P3 => {
            return Err(CliError::Input(format!(
                "{}: OT runs between parties 1 (sender) and 2 (receiver); this is party 3",
                path.display()
            )))
        }
    };
    let mut ch = NetChannel {
        link: connect_pair(&cfg, &opts)?,
        failure: None,
    };
    let mut secs = Vec::with_capacity(rep);
    for _ in 0..rep {
        let r = match run_party(protocol, role, &mut ch, count, noise) {
            Ok(r) => r,
            Err(e) => {
                return Err(match ch.failure.take() {
                    Some(net) => CliError::Net(net),
                    None => CliError::Party(format!("OT run failed: {e}")),
                })
            }
        };
        println!(
            "{} ({}): {} OTs in {:.3} s: {:.3} us per OT, {:.0} OTs per second, {:.1} bytes sent per OT by this party ({} B sent, {} B received), peak memory {}",
            protocol.name(),
            role.name(),
            r.count,
            r.seconds,
            r.us_per_ot,
            r.ots_per_sec,
            r.bytes_sent as f64 / r.count as f64,
            r.bytes_sent,
            r.bytes_received,
            mib(peak_memory())
        );
        secs.push(r.seconds);
    }
    ch.link.shutdown()?;
    print_summary(protocol, count, &mut secs);
    Ok(())
}

/// With more than one repetition: the median time per OT and OTs per second, and their range.
fn print_summary(protocol: Protocol, count: usize, secs: &mut [f64]) {
    let n = secs.len();
    let Some([median, fastest, slowest]) = crate::report::median_range(secs).filter(|_| n > 1)
    else {
        return;
    };
    let rate = |s: f64| count as f64 / s;
    println!(
        "{}: median of {n} runs: {:.3} us per OT, {:.0} OTs per second (runs: {:.0} to {:.0})",
        protocol.name(),
        median * 1e6 / count as f64,
        rate(median),
        rate(slowest),
        rate(fastest),
    );
}

/// A memory figure of this process in bytes: the kB value of `key` (e.g. `VmHWM:`) in Linux's
/// `/proc/self/status`, if known.
fn status_bytes(key: &str) -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with(key))?;
    let kb: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb * 1024)
}

/// Peak resident memory of this process in bytes (Linux `VmHWM`), if known.
pub fn peak_memory() -> Option<u64> {
    status_bytes("VmHWM:")
}

/// Resident memory of this process in bytes (Linux `VmRSS`), if known.
pub fn resident_memory() -> Option<u64> {
    status_bytes("VmRSS:")
}

/// Formats a byte count in MiB.
pub fn mib(bytes: Option<u64>) -> String {
    bytes.map_or_else(
        || "unknown".to_string(),
        |b| format!("{:.1} MiB", b as f64 / (1024.0 * 1024.0)),
    )
}

pub fn run(a: OtBenchArgs) -> Result<(), CliError> {
    let protocol: Protocol = a.protocol.parse().map_err(|_| {
        CliError::Input(format!(
            "unknown OT protocol '{}'; available: {}",
            a.protocol,
            Protocol::ALL.map(|p| p.name()).join(", ")
        ))
    })?;
    if a.count == 0 {
        return Err(CliError::Input("--count must be at least 1".into()));
    }
    if a.rep == 0 {
        return Err(CliError::Input("--rep must be at least 1".into()));
    }
    let noise = match a.noise.as_str() {
        "binomial" => NoiseDistribution::CenteredBinomial,
        "gaussian" => NoiseDistribution::DiscreteGaussian,
        other => {
            return Err(CliError::Input(format!(
                "unknown --noise '{other}'; use binomial or gaussian"
            )))
        }
    };
    // What ran, before the figures: the ring code's backend decides the lattice protocols'
    // speed (`TRISKELE_BACKEND` can force one).
    println!(
        "triskele {} (rev {}), OT ring backend {}, {} noise",
        env!("CARGO_PKG_VERSION"),
        env!("TRISKELE_GIT_REV"),
        triskele_ot::rlwe::Backend::current(),
        a.noise
    );
    if let Some(path) = &a.config {
        return run_configured(path, protocol, a.count, noise, a.timeout, a.rep);
    }
    let mut secs = Vec::with_capacity(a.rep);
    for _ in 0..a.rep {
        secs.push(run_local_once(protocol, a.count, noise)?);
    }
    print_summary(protocol, a.count, &mut secs);
    Ok(())
}

/// One local run, printed; returns its seconds.
fn run_local_once(
    protocol: Protocol,
    count: usize,
    noise: NoiseDistribution,
) -> Result<f64, CliError> {
    let r = run_local_with(protocol, count, noise)
        .map_err(|e| CliError::Party(format!("OT run failed: {e}")))?;
    println!(
        "{}: {} OTs in {:.3} s: {:.3} us per OT, {:.0} OTs per second, {:.1} bytes sent per OT (sender {} B, receiver {} B), peak memory {}",
        protocol.name(),
        r.count,
        r.seconds,
        r.us_per_ot,
        r.ots_per_sec,
        r.bytes_per_ot,
        r.sender_bytes,
        r.receiver_bytes,
        mib(peak_memory())
    );
    Ok(r.seconds)
}
