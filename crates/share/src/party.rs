//! Party identities and directions on the three-party ring.

use core::fmt;

/// One of the three parties. `P1.next() == P2`, `P1.prev() == P3`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum PartyId {
    P1,
    P2,
    P3,
}

/// A neighbour on the ring, seen from one party.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Direction {
    /// P_{i+1}
    Next,
    /// P_{i-1}
    Prev,
}

impl Direction {
    pub const BOTH: [Direction; 2] = [Direction::Next, Direction::Prev];

    pub fn opposite(self) -> Direction {
        match self {
            Direction::Next => Direction::Prev,
            Direction::Prev => Direction::Next,
        }
    }
}

impl PartyId {
    pub const ALL: [PartyId; 3] = [PartyId::P1, PartyId::P2, PartyId::P3];

    /// 0-based index (P1 = 0).
    pub fn index(self) -> usize {
        match self {
            PartyId::P1 => 0,
            PartyId::P2 => 1,
            PartyId::P3 => 2,
        }
    }

    /// 1-based number as in the documents and config files (P1 = 1).
    pub fn number(self) -> u8 {
        match self {
            PartyId::P1 => 1,
            PartyId::P2 => 2,
            PartyId::P3 => 3,
        }
    }

    /// From a 1-based party number; `None` outside 1..=3.
    pub fn from_number(n: u64) -> Option<PartyId> {
        match n {
            1 => Some(PartyId::P1),
            2 => Some(PartyId::P2),
            3 => Some(PartyId::P3),
            _ => None,
        }
    }

    /// From a 0-based index modulo 3.
    pub fn from_index_mod3(i: usize) -> PartyId {
        match i % 3 {
            0 => PartyId::P1,
            1 => PartyId::P2,
            _ => PartyId::P3,
        }
    }

    pub fn next(self) -> PartyId {
        PartyId::from_index_mod3(self.index() + 1)
    }

    pub fn prev(self) -> PartyId {
        PartyId::from_index_mod3(self.index() + 2)
    }

    /// The neighbour in direction `d`.
    pub fn neighbour(self, d: Direction) -> PartyId {
        match d {
            Direction::Next => self.next(),
            Direction::Prev => self.prev(),
        }
    }

    /// The direction in which `other` lies; `None` if `other == self`.
    pub fn direction_to(self, other: PartyId) -> Option<Direction> {
        if other == self.next() {
            Some(Direction::Next)
        } else if other == self.prev() {
            Some(Direction::Prev)
        } else {
            None
        }
    }
}

impl fmt::Display for PartyId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "P{}", self.number())
    }
}

impl fmt::Display for Direction {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Direction::Next => f.write_str("next"),
            Direction::Prev => f.write_str("prev"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ring_relations() {
        for p in PartyId::ALL {
            assert_eq!(p.next().prev(), p);
            assert_eq!(p.prev().next(), p);
            assert_eq!(p.next().next(), p.prev());
            assert_eq!(p.direction_to(p.next()), Some(Direction::Next));
            assert_eq!(p.direction_to(p.prev()), Some(Direction::Prev));
            assert_eq!(p.direction_to(p), None);
            assert_eq!(PartyId::from_number(u64::from(p.number())), Some(p));
        }
        assert_eq!(PartyId::P1.next(), PartyId::P2);
        assert_eq!(PartyId::P1.prev(), PartyId::P3);
        assert_eq!(PartyId::from_number(0), None);
        assert_eq!(PartyId::from_number(4), None);
    }
}
