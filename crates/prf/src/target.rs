//! PRF targets of `triskele bench` and `triskele prf` (ARCHITECTURE.md).

use core::fmt;
use core::str::FromStr;

/// A PRF protocol variant.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum PrfTarget {
    /// Legendre PRF, shared key, shared inputs, shared output bits; fused multiply-then-open.
    Legendre,
    /// MiMC-p/p, two multiplications per round.
    Mimc,
    /// MiMC-p/p with one preprocessed cube tuple per round.
    MimcCube,
    /// Hydra keystream (Grassi et al., Eurocrypt 2023), 8 words per instance.
    Hydra,
    /// Naor-Reingold over Ristretto255 (public input and output; semi-honest only).
    Nr,
    /// Legendre with every product verified and the RSS opening.
    MalLegendre,
    /// `mimc` with every product verified.
    MalMimc,
    /// `mimc-cube` with verified cube tuples and hashed openings.
    MalMimcCube,
    /// `hydra` with every product verified.
    MalHydra,
}

/// The error of parsing an unknown PRF target name.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "unknown PRF target '{0}' (known: legendre mimc mimc-cube hydra nr mal-legendre mal-mimc mal-mimc-cube mal-hydra)"
)]
pub struct PrfTargetError(pub String);

impl PrfTarget {
    /// Every PRF target, in the order `--all` runs them.
    pub const ALL: &'static [PrfTarget] = &[
        PrfTarget::Legendre,
        PrfTarget::Mimc,
        PrfTarget::MimcCube,
        PrfTarget::Hydra,
        PrfTarget::Nr,
        PrfTarget::MalLegendre,
        PrfTarget::MalMimc,
        PrfTarget::MalMimcCube,
        PrfTarget::MalHydra,
    ];

    /// The CLI and CSV name.
    pub fn name(self) -> &'static str {
        match self {
            PrfTarget::Legendre => "legendre",
            PrfTarget::Mimc => "mimc",
            PrfTarget::MimcCube => "mimc-cube",
            PrfTarget::Hydra => "hydra",
            PrfTarget::Nr => "nr",
            PrfTarget::MalLegendre => "mal-legendre",
            PrfTarget::MalMimc => "mal-mimc",
            PrfTarget::MalMimcCube => "mal-mimc-cube",
            PrfTarget::MalHydra => "mal-hydra",
        }
    }

    /// True for the variants secure with abort against one active party.
    pub fn is_malicious(self) -> bool {
        matches!(
            self,
            PrfTarget::MalLegendre
                | PrfTarget::MalMimc
                | PrfTarget::MalMimcCube
                | PrfTarget::MalHydra
        )
    }

    /// The semi-honest variant with the same online arithmetic.
    pub fn semi_honest(self) -> PrfTarget {
        match self {
            PrfTarget::MalLegendre => PrfTarget::Legendre,
            PrfTarget::MalMimc => PrfTarget::Mimc,
            PrfTarget::MalMimcCube => PrfTarget::MimcCube,
            PrfTarget::MalHydra => PrfTarget::Hydra,
            t => t,
        }
    }

    /// The malicious variant of a semi-honest target (`nr` has none and maps to itself).
    pub fn malicious(self) -> PrfTarget {
        match self {
            PrfTarget::Legendre => PrfTarget::MalLegendre,
            PrfTarget::Mimc => PrfTarget::MalMimc,
            PrfTarget::MimcCube => PrfTarget::MalMimcCube,
            PrfTarget::Hydra => PrfTarget::MalHydra,
            t => t,
        }
    }
}

impl fmt::Display for PrfTarget {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for PrfTarget {
    type Err = PrfTargetError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        PrfTarget::ALL
            .iter()
            .copied()
            .find(|t| t.name() == s)
            .ok_or_else(|| PrfTargetError(s.to_string()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip_and_pair_up() {
        for &t in PrfTarget::ALL {
            assert_eq!(t.name().parse::<PrfTarget>(), Ok(t));
            assert_eq!(t.semi_honest().malicious(), t.malicious());
            assert!(!t.semi_honest().is_malicious());
            assert_eq!(t.is_malicious(), t.name().starts_with("mal-"));
        }
        assert!("aes".parse::<PrfTarget>().is_err());
    }
}
