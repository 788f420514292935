//! A two-party message channel with byte accounting, and an in-memory
//! implementation over `std::sync::mpsc` for tests and local benchmarks.
//!
//! Protocols in this crate exchange whole messages (`Vec<u8>`); a transport
//! (TCP, TLS) only has to frame them. The byte counts are payload bytes.

use crate::error::{Error, Result};
use std::sync::mpsc;

/// Bytes and messages moved through a channel, per direction.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ChannelStats {
    /// Payload bytes sent.
    pub bytes_sent: u64,
    /// Payload bytes received.
    pub bytes_received: u64,
    /// Messages sent.
    pub messages_sent: u64,
    /// Messages received.
    pub messages_received: u64,
}

/// A reliable, ordered, message-oriented channel to the other party.
pub trait Channel {
    /// Sends one message.
    fn send(&mut self, msg: Vec<u8>) -> Result<()>;
    /// Receives the next message, blocking.
    fn recv(&mut self) -> Result<Vec<u8>>;
    /// Traffic so far.
    fn stats(&self) -> ChannelStats;
}

impl<C: Channel + ?Sized> Channel for &mut C {
    fn send(&mut self, msg: Vec<u8>) -> Result<()> {
        (**self).send(msg)
    }
    fn recv(&mut self) -> Result<Vec<u8>> {
        (**self).recv()
    }
    fn stats(&self) -> ChannelStats {
        (**self).stats()
    }
}

/// One end of an in-memory channel.
#[derive(Debug)]
pub struct MemoryChannel {
    tx: mpsc::Sender<Vec<u8>>,
    rx: mpsc::Receiver<Vec<u8>>,
    stats: ChannelStats,
}

/// Two connected in-memory channel ends (one per party, movable to threads).
pub fn memory_pair() -> (MemoryChannel, MemoryChannel) {
    let (tx_a, rx_b) = mpsc::channel();
    let (tx_b, rx_a) = mpsc::channel();
    (
        MemoryChannel {
            tx: tx_a,
            rx: rx_a,
            stats: ChannelStats::default(),
        },
        MemoryChannel {
            tx: tx_b,
            rx: rx_b,
            stats: ChannelStats::default(),
        },
    )
}

impl Channel for MemoryChannel {
    fn send(&mut self, msg: Vec<u8>) -> Result<()> {
        let len = msg.len() as u64;
        self.tx
            .send(msg)
            .map_err(|_| Error::Channel("peer hung up"))?;
        self.stats.bytes_sent += len;
        self.stats.messages_sent += 1;
        Ok(())
    }

    fn recv(&mut self) -> Result<Vec<u8>> {
        let msg = self.rx.recv().map_err(|_| Error::Channel("peer hung up"))?;
        self.stats.bytes_received += msg.len() as u64;
        self.stats.messages_received += 1;
        Ok(msg)
    }

    fn stats(&self) -> ChannelStats {
        self.stats
    }
}

/// Splits a batch of `count` fixed-size messages, checking the total length.
pub(crate) fn split_batch<'a>(
    bytes: &'a [u8],
    count: usize,
    each: usize,
    what: &'static str,
) -> Result<core::slice::ChunksExact<'a, u8>> {
    let expected = count
        .checked_mul(each)
        .ok_or(Error::InvalidArgument("batch size overflows"))?;
    if bytes.len() != expected {
        return Err(Error::LengthMismatch {
            what,
            expected,
            got: bytes.len(),
        });
    }
    // `each` is non-zero for every message type of this crate.
    Ok(bytes.chunks_exact(each.max(1)))
}

#[cfg(test)]
mod tests {
    #![allow(
        clippy::unwrap_used,
        clippy::expect_used,
        clippy::panic,
        clippy::needless_range_loop
    )]
    use super::*;

    #[test]
    fn pair_moves_messages_and_counts() {
        let (mut a, mut b) = memory_pair();
        a.send(vec![1, 2, 3]).unwrap();
        b.send(vec![9; 10]).unwrap();
        assert_eq!(b.recv().unwrap(), vec![1, 2, 3]);
        assert_eq!(a.recv().unwrap(), vec![9; 10]);
        assert_eq!(a.stats().bytes_sent, 3);
        assert_eq!(a.stats().bytes_received, 10);
        drop(b);
        assert!(matches!(a.recv(), Err(Error::Channel(_))));
        assert!(a.send(vec![]).is_err());
    }

    #[test]
    fn batch_split_checks_length() {
        assert_eq!(split_batch(&[0; 12], 3, 4, "x").unwrap().count(), 3);
        assert!(split_batch(&[0; 11], 3, 4, "x").is_err());
        assert!(split_batch(&[0; 0], usize::MAX, 4, "x").is_err());
    }
}
