//! Benchmark and CLI targets: protocol names as in ARCHITECTURE.md.

use core::fmt;
use core::str::FromStr;

/// A runnable protocol variant.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Target {
    /// Semi-honest GF(2^8) circuit of Chida et al. (PROTOCOLS.md §4.1).
    Chida,
    /// Protocol 3 with a GF(2^4) inversion circuit (PROTOCOLS.md §4.2).
    Gf4Circuit,
    /// Protocol 3 with a length-16 one-hot table lookup, Protocol 8 preprocessing (PROTOCOLS.md §4.3).
    Lut16,
    /// (2,3)-LUT-256: Protocol 5 preprocessing, one online round per layer (PROTOCOLS.md §4.4).
    Lut256,
    /// (3,3)-LUT-256 with additive state, Protocol 6, 2×Protocol 8 preprocessing (PROTOCOLS.md §4.5).
    Lut256Ss,
    /// The Chida et al. chain with recorded products and Protocol 2 `Verify` (PROTOCOLS.md §5.6).
    MalChidaRecCheck,
    /// The Chida et al. chain with triples from the bucket cut-and-choose of Furukawa et al.
    /// and a post-sacrifice of every product (PROTOCOLS.md §5.3).
    MalChida,
    /// `gf4-circuit` with all five `GF(2^4)` products recorded and Protocol 2 `Verify`
    /// (PROTOCOLS.md §5.6).
    MalGf4Circuit,
    /// `gf4-circuit` checked with two plain triples and one gf4p4 triple per S-box
    /// (PROTOCOLS.md §5.5, §5.6).
    MalGf4CircuitOpt,
    /// `lut16` with Protocol 5 (`k = 4`) preprocessing, its bit products checked as
    /// "bit × bit-string" relations, and one gf4p4 relation per S-box; one Protocol 2 `Verify`
    /// (PROTOCOLS.md §5.5, §5.6).
    MalLut16Bitstring,
    /// `lut16` with Protocol 8 preprocessing checked by the packed "ohv" relations and one
    /// gf4p4 relation per S-box; one Protocol 2 `Verify` (PROTOCOLS.md §5.5, §5.6).
    MalLut16Ohv,
    /// (3,3)-LUT-256 with recorded Protocol-8 bit products and Protocol 7 `VerifySbox`
    /// (PROTOCOLS.md §5.7).
    MalLut256Ss,
    /// `mal-lut256-ss` with the packed one-hot-vector relations (PROTOCOLS.md §5.5, §5.7).
    MalLut256SsOpt,
    /// Bit-sliced Boolean circuit (Boyar–Peralta S-box, 34 AND gates) on replicated `GF(2)`
    /// shares (Araki et al., CCS'16); the MP-SPDZ-style baseline.
    BoolCircuit,
}

impl Target {
    /// Every target this build can run, in the order `--all` runs them.
    pub const ALL: &'static [Target] = &[
        Target::Chida,
        Target::Gf4Circuit,
        Target::Lut16,
        Target::Lut256,
        Target::Lut256Ss,
        Target::MalChidaRecCheck,
        Target::MalChida,
        Target::BoolCircuit,
        Target::MalGf4Circuit,
        Target::MalGf4CircuitOpt,
        Target::MalLut16Bitstring,
        Target::MalLut16Ohv,
        Target::MalLut256Ss,
        Target::MalLut256SsOpt,
    ];

    /// The CLI name.
    pub fn name(self) -> &'static str {
        match self {
            Target::Chida => "chida",
            Target::Gf4Circuit => "gf4-circuit",
            Target::Lut16 => "lut16",
            Target::Lut256 => "lut256",
            Target::Lut256Ss => "lut256-ss",
            Target::MalChidaRecCheck => "mal-chida-rec-check",
            Target::MalChida => "mal-chida",
            Target::BoolCircuit => "bool-circuit",
            Target::MalGf4Circuit => "mal-gf4-circuit",
            Target::MalGf4CircuitOpt => "mal-gf4-circuit-opt",
            Target::MalLut16Bitstring => "mal-lut16-bitstring",
            Target::MalLut16Ohv => "mal-lut16-ohv",
            Target::MalLut256Ss => "mal-lut256-ss",
            Target::MalLut256SsOpt => "mal-lut256-ss-opt",
        }
    }

    /// The `protocol` column of the CSV (PROTOCOLS.md §6.1).
    pub fn csv_name(self) -> &'static str {
        match self {
            Target::Chida => "chida",
            Target::Gf4Circuit => "gf4-circuit",
            Target::Lut16 => "lut16",
            Target::Lut256 => "lut256",
            Target::Lut256Ss => "lut256_ss",
            Target::MalChidaRecCheck => "mal-chida-rec-check",
            Target::MalChida => "mal-chida",
            Target::BoolCircuit => "bool-circuit",
            Target::MalGf4Circuit => "mal-gf4-circuit",
            Target::MalGf4CircuitOpt => "mal-gf4-circuit-gf4p4",
            Target::MalLut16Bitstring => "mal-lut16-bitstring",
            Target::MalLut16Ohv => "mal-lut16-ohv",
            Target::MalLut256Ss => "mal-lut256-ss",
            Target::MalLut256SsOpt => "mal-lut256-ss-opt",
        }
    }

    /// The semi-honest protocol a variant adds its checks to (itself for the semi-honest
    /// ones): the twin its throughput is compared with.
    pub fn semi_honest(self) -> Target {
        match self {
            Target::MalChidaRecCheck | Target::MalChida => Target::Chida,
            Target::MalGf4Circuit | Target::MalGf4CircuitOpt => Target::Gf4Circuit,
            Target::MalLut16Bitstring | Target::MalLut16Ohv => Target::Lut16,
            Target::MalLut256Ss | Target::MalLut256SsOpt => Target::Lut256Ss,
            t => t,
        }
    }

    /// True for variants with security against an active party.
    pub fn is_malicious(self) -> bool {
        match self {
            Target::Chida
            | Target::Gf4Circuit
            | Target::Lut16
            | Target::Lut256
            | Target::Lut256Ss
            | Target::BoolCircuit => false,
            Target::MalChidaRecCheck
            | Target::MalChida
            | Target::MalGf4Circuit
            | Target::MalGf4CircuitOpt
            | Target::MalLut16Bitstring
            | Target::MalLut16Ohv
            | Target::MalLut256Ss
            | Target::MalLut256SsOpt => true,
        }
    }
}

impl fmt::Display for Target {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Why a target name was not accepted.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TargetError {
    #[error("unknown protocol '{0}'; available: {list}", list = available())]
    Unknown(String),
}

fn available() -> String {
    Target::ALL
        .iter()
        .map(|t| t.name())
        .collect::<Vec<_>>()
        .join(", ")
}

impl FromStr for Target {
    type Err = TargetError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        if let Some(t) = Target::ALL.iter().find(|t| t.name() == s) {
            return Ok(*t);
        }
        Err(TargetError::Unknown(s.to_string()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every malicious variant's twin is semi-honest, named as the variant without its
    /// `mal-` prefix and its option suffix; semi-honest targets are their own twins.
    #[test]
    fn semi_honest_twins() {
        for &t in Target::ALL {
            let twin = t.semi_honest();
            assert!(!twin.is_malicious(), "{t}");
            if t.is_malicious() {
                let base = t.name().trim_start_matches("mal-");
                assert!(base.starts_with(twin.name()), "{t} -> {twin}");
            } else {
                assert_eq!(twin, t);
            }
        }
    }
}
