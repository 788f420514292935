//! Communication accounting per protocol phase and direction.

use core::fmt;
use core::ops::AddAssign;

use triskele_share::Direction;

/// The protocol phase that messages are accounted to.
///
/// Only [`Phase::Preprocessing`], [`Phase::Online`] and [`Phase::Finalize`] are reported in
/// benchmark results ([`Phase::REPORTED`]); traffic in [`Phase::Setup`] (seed exchange
/// before a run) and [`Phase::Output`] (revealing results) is counted separately.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Phase {
    #[default]
    Setup,
    Preprocessing,
    Online,
    Finalize,
    Output,
}

impl Phase {
    /// All phases, in protocol order.
    pub const ALL: [Phase; 5] = [
        Phase::Setup,
        Phase::Preprocessing,
        Phase::Online,
        Phase::Finalize,
        Phase::Output,
    ];

    /// The phases that appear in reports and CSV files, in column order.
    pub const REPORTED: [Phase; 3] = [Phase::Preprocessing, Phase::Online, Phase::Finalize];

    fn index(self) -> usize {
        match self {
            Phase::Setup => 0,
            Phase::Preprocessing => 1,
            Phase::Online => 2,
            Phase::Finalize => 3,
            Phase::Output => 4,
        }
    }

    /// The name used in CSV column headers (`pre-processing`, `online`, `finalize`, and
    /// `setup` / `output` for the unreported phases).
    pub fn name(self) -> &'static str {
        match self {
            Phase::Setup => "setup",
            Phase::Preprocessing => "pre-processing",
            Phase::Online => "online",
            Phase::Finalize => "finalize",
            Phase::Output => "output",
        }
    }
}

impl fmt::Display for Phase {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Traffic on one link (to/from one neighbour) in one phase.
///
/// Only payload bytes are counted: not the 4-byte frame header, not TLS overhead.
#[derive(Clone, Copy, Default, Debug, PartialEq, Eq)]
pub struct DirStats {
    /// Payload bytes sent to the neighbour.
    pub bytes_sent: u64,
    /// Payload bytes received from the neighbour.
    pub bytes_received: u64,
    /// Number of sends plus number of receives on this link.
    pub messages: u64,
}

impl AddAssign for DirStats {
    fn add_assign(&mut self, rhs: DirStats) {
        self.bytes_sent += rhs.bytes_sent;
        self.bytes_received += rhs.bytes_received;
        self.messages += rhs.messages;
    }
}

/// Traffic of one phase, for both neighbours.
#[derive(Clone, Copy, Default, Debug, PartialEq, Eq)]
pub struct PhaseStats {
    pub next: DirStats,
    pub prev: DirStats,
}

impl PhaseStats {
    /// The counters of the link in direction `dir`.
    pub fn dir(&self, dir: Direction) -> DirStats {
        match dir {
            Direction::Next => self.next,
            Direction::Prev => self.prev,
        }
    }

    fn dir_mut(&mut self, dir: Direction) -> &mut DirStats {
        match dir {
            Direction::Next => &mut self.next,
            Direction::Prev => &mut self.prev,
        }
    }
}

impl AddAssign for PhaseStats {
    fn add_assign(&mut self, rhs: PhaseStats) {
        self.next += rhs.next;
        self.prev += rhs.prev;
    }
}

/// Counters for all phases of one party.
#[derive(Clone, Default, Debug, PartialEq, Eq)]
pub struct CommStats {
    phases: [PhaseStats; 5],
}

impl CommStats {
    /// The counters of one phase.
    pub fn get(&self, phase: Phase) -> PhaseStats {
        self.phases[phase.index()]
    }

    /// The sum over the reported phases ([`Phase::REPORTED`]).
    pub fn reported_total(&self) -> PhaseStats {
        let mut total = PhaseStats::default();
        for p in Phase::REPORTED {
            total += self.get(p);
        }
        total
    }

    /// Sets every counter to zero.
    pub fn reset(&mut self) {
        *self = CommStats::default();
    }

    pub(crate) fn record_send(&mut self, phase: Phase, dir: Direction, bytes: usize) {
        let d = self.phases[phase.index()].dir_mut(dir);
        d.bytes_sent += bytes as u64;
        d.messages += 1;
    }

    pub(crate) fn record_recv(&mut self, phase: Phase, dir: Direction, bytes: usize) {
        let d = self.phases[phase.index()].dir_mut(dir);
        d.bytes_received += bytes as u64;
        d.messages += 1;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_go_to_the_right_cell() {
        let mut s = CommStats::default();
        s.record_send(Phase::Online, Direction::Next, 10);
        s.record_recv(Phase::Online, Direction::Prev, 7);
        s.record_recv(Phase::Finalize, Direction::Next, 3);
        s.record_send(Phase::Setup, Direction::Prev, 100);
        let on = s.get(Phase::Online);
        assert_eq!(
            on.next,
            DirStats {
                bytes_sent: 10,
                bytes_received: 0,
                messages: 1
            }
        );
        assert_eq!(on.dir(Direction::Prev).bytes_received, 7);
        assert_eq!(s.get(Phase::Finalize).next.messages, 1);
        assert_eq!(s.get(Phase::Setup).prev.bytes_sent, 100);
        let t = s.reported_total();
        assert_eq!(t.next.messages + t.prev.messages, 3);
        assert_eq!(t.prev.bytes_sent, 0);
        s.reset();
        assert_eq!(s, CommStats::default());
    }

    #[test]
    fn names() {
        let names: Vec<_> = Phase::REPORTED.iter().map(|p| p.name()).collect();
        assert_eq!(names, ["pre-processing", "online", "finalize"]);
    }
}
