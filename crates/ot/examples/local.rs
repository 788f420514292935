//! Runs one protocol locally (both parties, two threads, in-memory channel)
//! and prints the report: `cargo run --release -p triskele-ot --example local -- rot 1000`.

use triskele_ot::bench::{run_local_with, Protocol};
use triskele_ot::rlwe::{Backend, NoiseDistribution};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let protocol: Protocol = args.next().unwrap_or_else(|| "rot".into()).parse()?;
    let count: usize = args.next().unwrap_or_else(|| "1000".into()).parse()?;
    let noise = match args.next().as_deref() {
        Some("gaussian") => NoiseDistribution::DiscreteGaussian,
        _ => NoiseDistribution::CenteredBinomial,
    };
    let r = run_local_with(protocol, count, noise)?;
    println!(
        "{} x{} ({:?}, backend {}): {:.3} us per OT, {:.0} OTs/s, {:.1} bytes per OT (sender {} B, receiver {} B)",
        protocol.name(),
        count,
        noise,
        Backend::current().name(),
        r.us_per_ot,
        r.ots_per_sec,
        r.bytes_per_ot,
        r.sender_bytes,
        r.receiver_bytes
    );
    Ok(())
}
