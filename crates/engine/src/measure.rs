//! What a benchmark records per phase.

use std::time::Duration;

use triskele_net::PhaseStats;

/// Time and traffic of one phase at one party.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct PhaseMeasure {
    pub time: Duration,
    pub stats: PhaseStats,
}
