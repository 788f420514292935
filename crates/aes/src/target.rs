//! Benchmark and CLI targets: protocol names as in ARCHITECTURE.md.

use core::fmt;
use core::str::FromStr;

/// A runnable protocol variant.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Target {
    /// Semi-honest GF(2^8) circuit of Chida et al. (PROTOCOLS.md §4.1).
    Chida,
}

/// Names from the contract that this build does not provide yet.
const PLANNED: &[&str] = &[
    "lut16",
    "gf4-circuit",
    "lut256",
    "lut256-ss",
    "bool-circuit",
    "mal-chida",
    "mal-chida-rec-check",
    "mal-lut16-bitstring",
    "mal-lut16-ohv",
    "mal-gf4-circuit",
    "mal-gf4-circuit-opt",
    "mal-lut256-ss",
    "mal-lut256-ss-opt",
];

impl Target {
    /// Every target this build can run, in the order `--all` runs them.
    pub const ALL: &'static [Target] = &[Target::Chida];

    /// The CLI name.
    pub fn name(self) -> &'static str {
        match self {
            Target::Chida => "chida",
        }
    }

    /// The `protocol` column of the CSV (PROTOCOLS.md §6.1).
    pub fn csv_name(self) -> &'static str {
        match self {
            Target::Chida => "chida",
        }
    }

    /// True for variants with security against an active party.
    pub fn is_malicious(self) -> bool {
        match self {
            Target::Chida => false,
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
    #[error("protocol '{0}' is not available in this version yet; available: {list}", list = available())]
    NotYetAvailable(String),
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
        if PLANNED.contains(&s) {
            return Err(TargetError::NotYetAvailable(s.to_string()));
        }
        Err(TargetError::Unknown(s.to_string()))
    }
}
