//! `triskele ot bench`: two-party oblivious transfer benchmarks.

use triskele_ot::bench::{run_local_with, Protocol};
use triskele_ot::rlwe::NoiseDistribution;

use crate::args::OtBenchArgs;
use crate::error::CliError;

/// Peak resident memory of this process in bytes (Linux `VmHWM`), if known.
pub fn peak_memory() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    let kb: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb * 1024)
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
    let noise = match a.noise.as_str() {
        "binomial" => NoiseDistribution::CenteredBinomial,
        "gaussian" => NoiseDistribution::DiscreteGaussian,
        other => {
            return Err(CliError::Input(format!(
                "unknown --noise '{other}'; use binomial or gaussian"
            )))
        }
    };
    let r = run_local_with(protocol, a.count, noise)
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
    Ok(())
}
