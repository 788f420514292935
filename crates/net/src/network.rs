//! The engine-facing, blocking [`Network`]: one party's links to its two neighbours.

use core::fmt;
use std::sync::mpsc;
use std::time::{Duration, Instant};

use triskele_share::{Direction, PartyId};

use crate::error::{NetError, Waiting};
use crate::frame::WIRE_MAX;
use crate::stats::{CommStats, DirStats, Phase};
use crate::tamper::{Tamper, TamperState};
use crate::tls_link::TlsLink;

/// Time limits. A peer that stalls or dies makes the waiting party fail after at most these
/// durations.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Timeouts {
    /// Establishing all links (TCP connect with retries, TLS handshake, hello).
    pub connect: Duration,
    /// Waiting for one message in [`Network::recv`]. Also bounds how long a peer may stop
    /// taking our data (a TLS writer that makes no progress for this long fails the link)
    /// and the final flush in [`Network::shutdown`].
    pub read: Duration,
}

impl Default for Timeouts {
    fn default() -> Self {
        Timeouts {
            connect: Duration::from_secs(10),
            read: Duration::from_secs(30),
        }
    }
}

/// Simulated network conditions, applied in process on the sending side of every link.
///
/// A message sent at time `t` becomes visible to the receiver no earlier than
/// `departure + one_way_delay`, where `departure = max(t, previous departure) + len * 8 /
/// rate`: messages on a link are serialised one after the other at the given rate, then
/// travel for the one-way delay. The real transport's cost comes on top. Over TLS the
/// link's writer thread holds the frame until then; in memory the receiver does (sleeping,
/// bounded by the read timeout). [`Network::send`] itself never waits.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SimNet {
    /// One-way latency added to every message.
    pub one_way_delay: Duration,
    /// Bandwidth cap per link and direction, in bits per second. `None` (or 0): unlimited.
    pub rate_bits_per_sec: Option<u64>,
}

/// Options shared by all transports.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NetOptions {
    pub timeouts: Timeouts,
    /// The largest message (payload bytes) that may be sent or received; larger frames are
    /// refused with [`NetError::FrameTooLarge`]. At most `u32::MAX` (the wire format's limit).
    pub max_frame: usize,
    /// Simulated latency and bandwidth, if any.
    pub sim: Option<SimNet>,
    /// Deliberate cheating by one party, for tests and demonstrations ([`Tamper`]): only the
    /// network of `tamper.party` acts on it.
    pub tamper: Option<Tamper>,
}

/// Default [`NetOptions::max_frame`]: 1 GiB.
pub const DEFAULT_MAX_FRAME: usize = 1 << 30;

impl Default for NetOptions {
    fn default() -> Self {
        NetOptions {
            timeouts: Timeouts::default(),
            max_frame: DEFAULT_MAX_FRAME,
            sim: None,
            tamper: None,
        }
    }
}

/// A message on an in-memory link.
pub(crate) struct MemFrame {
    payload: Vec<u8>,
    /// Not visible to the receiver before this instant (network simulation).
    visible_at: Option<Instant>,
}

/// The in-memory transport of one link.
pub(crate) struct MemLink {
    tx: Option<mpsc::Sender<MemFrame>>,
    inbox: mpsc::Receiver<MemFrame>,
    /// A frame taken from the inbox but not yet visible (simulation).
    pending: Option<(Vec<u8>, Instant)>,
}

impl MemLink {
    fn send(
        &mut self,
        peer: PartyId,
        payload: Vec<u8>,
        visible_at: Option<Instant>,
    ) -> Result<(), NetError> {
        let sent = self.tx.as_ref().is_some_and(|tx| {
            tx.send(MemFrame {
                payload,
                visible_at,
            })
            .is_ok()
        });
        if sent {
            Ok(())
        } else {
            Err(NetError::Disconnected { peer })
        }
    }

    fn recv(&mut self, peer: PartyId, timeout: Duration) -> Result<Vec<u8>, NetError> {
        let start = Instant::now();
        let timed_out = || NetError::Timeout {
            peer,
            during: Waiting::Receive,
            after: timeout,
            detail: None,
        };
        let (payload, visible_at) = match self.pending.take() {
            Some((p, v)) => (p, Some(v)),
            None => match self.inbox.recv_timeout(timeout) {
                Ok(f) => (f.payload, f.visible_at),
                Err(mpsc::RecvTimeoutError::Disconnected) => {
                    return Err(NetError::Disconnected { peer })
                }
                Err(mpsc::RecvTimeoutError::Timeout) => return Err(timed_out()),
            },
        };
        if let Some(visible) = visible_at {
            let now = Instant::now();
            if visible > now {
                match start.checked_add(timeout) {
                    Some(deadline) if visible > deadline => {
                        self.pending = Some((payload, visible));
                        std::thread::sleep(deadline.saturating_duration_since(now));
                        return Err(timed_out());
                    }
                    _ => std::thread::sleep(visible - now),
                }
            }
        }
        Ok(payload)
    }
}

/// The transport of one link.
pub(crate) enum LinkIo {
    Memory(MemLink),
    Tls(TlsLink),
}

/// One link (to one neighbour).
pub(crate) struct Link {
    peer: PartyId,
    io: LinkIo,
    /// When the simulated wire is free again.
    sim_free_at: Option<Instant>,
}

impl Link {
    pub(crate) fn new(peer: PartyId, io: LinkIo) -> Link {
        Link {
            peer,
            io,
            sim_free_at: None,
        }
    }

    /// The simulated visibility time of a frame of `len` bytes sent now.
    fn departure(&mut self, len: usize, sim: &SimNet) -> Instant {
        let now = Instant::now();
        let start = match self.sim_free_at {
            Some(free) if free > now => free,
            _ => now,
        };
        let serialisation = match sim.rate_bits_per_sec {
            Some(rate) if rate > 0 => {
                let nanos = (len as u128 * 8 * 1_000_000_000).div_ceil(u128::from(rate));
                Duration::from_nanos(u64::try_from(nanos).unwrap_or(u64::MAX))
            }
            _ => Duration::ZERO,
        };
        let departure = start.checked_add(serialisation).unwrap_or(start);
        self.sim_free_at = Some(departure);
        departure
            .checked_add(sim.one_way_delay)
            .unwrap_or(departure)
    }
}

impl fmt::Debug for Link {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let transport = match self.io {
            LinkIo::Memory(_) => "memory",
            LinkIo::Tls(_) => "tls",
        };
        f.debug_struct("Link")
            .field("peer", &self.peer)
            .field("transport", &transport)
            .finish()
    }
}

/// One party's two links (to next and to prev), its communication counters and the current
/// phase.
///
/// Meant to be used from one synchronous engine thread (it is `Send`, not shared).
/// [`Network::send`] only queues the message (it never waits for the peer);
/// [`Network::recv`] waits up to the read timeout. Messages on a link arrive whole and in
/// order. Over TLS, receiving happens on the calling thread (the kernel wakes it directly)
/// and each link has one writer thread.
///
/// Call [`Network::shutdown`] at the end of a run: it waits until queued messages are
/// delivered. Dropping a `Network` never blocks: queued TLS messages are still written by
/// the background writer threads (each write bounded by the read timeout), which then close
/// the link, but nothing waits for them (if the process exits first, they are lost).
pub struct Network {
    party: PartyId,
    phase: Phase,
    stats: CommStats,
    /// Indexed by [`dir_index`]: next, prev.
    links: [Link; 2],
    opts: NetOptions,
    tamper: TamperState,
}

pub(crate) fn dir_index(dir: Direction) -> usize {
    match dir {
        Direction::Next => 0,
        Direction::Prev => 1,
    }
}

impl Network {
    pub(crate) fn new(party: PartyId, next: Link, prev: Link, opts: NetOptions) -> Network {
        Network {
            party,
            phase: Phase::default(),
            stats: CommStats::default(),
            links: [next, prev],
            opts,
            tamper: TamperState::default(),
        }
    }

    /// This party.
    pub fn party(&self) -> PartyId {
        self.party
    }

    /// The neighbour in direction `dir`.
    pub fn peer(&self, dir: Direction) -> PartyId {
        self.party.neighbour(dir)
    }

    /// The options this network was built with.
    pub fn options(&self) -> &NetOptions {
        &self.opts
    }

    /// Sets the phase that subsequent sends and receives are accounted to.
    pub fn set_phase(&mut self, phase: Phase) {
        self.phase = phase;
    }

    /// The current phase.
    pub fn phase(&self) -> Phase {
        self.phase
    }

    /// Queues `payload` as one message to the neighbour in direction `dir` and returns at
    /// once: it never waits for the peer to read. Fails if the message exceeds
    /// [`NetOptions::max_frame`] or the link is known to be down.
    pub fn send(&mut self, dir: Direction, mut payload: Vec<u8>) -> Result<(), NetError> {
        if let Some(t) = &self.opts.tamper {
            self.tamper
                .on_send(t, self.party, self.phase, dir, &mut payload);
        }
        let len = payload.len();
        let limit = self.opts.max_frame.min(WIRE_MAX);
        let link = &mut self.links[dir_index(dir)];
        if len > limit {
            return Err(NetError::FrameTooLarge {
                peer: link.peer,
                len: len as u64,
                max: limit as u64,
            });
        }
        let not_before = self.opts.sim.map(|sim| link.departure(len, &sim));
        match &mut link.io {
            LinkIo::Memory(m) => m.send(link.peer, payload, not_before)?,
            LinkIo::Tls(t) => t.send(payload, not_before)?,
        }
        self.stats.record_send(self.phase, dir, len);
        Ok(())
    }

    /// Waits for the next message from the neighbour in direction `dir`, at most the read
    /// timeout. Errors: [`NetError::Timeout`] (nothing arrived in time; a later call may
    /// still receive it), [`NetError::Disconnected`] (the peer closed the link and every
    /// message it sent has been received), or the failure that ended the link.
    pub fn recv(&mut self, dir: Direction) -> Result<Vec<u8>, NetError> {
        let timeout = self.opts.timeouts.read;
        let link = &mut self.links[dir_index(dir)];
        let payload = match &mut link.io {
            LinkIo::Memory(m) => m.recv(link.peer, timeout)?,
            LinkIo::Tls(t) => t.recv(timeout)?,
        };
        self.stats.record_recv(self.phase, dir, payload.len());
        Ok(payload)
    }

    /// The communication counters.
    pub fn stats(&self) -> &CommStats {
        &self.stats
    }

    /// Sets all counters to zero (the phase is kept).
    pub fn reset_stats(&mut self) {
        self.stats.reset();
    }

    /// Flushes every queued message (waiting at most the read timeout), closes both links
    /// (TLS `close_notify`, then TCP FIN) and stops the writer threads.
    ///
    /// Returns the first failure: a write error, or [`NetError::Timeout`] with
    /// [`Waiting::Send`] if a peer did not take the data in time.
    pub fn shutdown(mut self) -> Result<(), NetError> {
        let timeout = self.opts.timeouts.read;
        let deadline = Instant::now().checked_add(timeout);
        for link in &mut self.links {
            match &mut link.io {
                LinkIo::Memory(m) => m.tx = None,
                LinkIo::Tls(t) => t.close(),
            }
        }
        let mut first_err = None;
        for link in &mut self.links {
            if let LinkIo::Tls(t) = &mut link.io {
                let left =
                    deadline.map_or(timeout, |d| d.saturating_duration_since(Instant::now()));
                if let Err(e) = t.wait_writer(left) {
                    first_err.get_or_insert(e);
                }
            }
        }
        match first_err {
            Some(e) => Err(e),
            None => Ok(()),
        }
    }
}

impl fmt::Debug for Network {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Network")
            .field("party", &self.party)
            .field("phase", &self.phase)
            .field("next", &self.links[0])
            .field("prev", &self.links[1])
            .field("opts", &self.opts)
            .finish_non_exhaustive()
    }
}

/// One authenticated link to one peer, for two-party protocols
/// ([`crate::connect_pair`], [`crate::local_tls_pair`]): the same framing, frame limit,
/// timeouts and simulated network as a [`Network`] link, with its own byte and message
/// counters (payload bytes; no phases).
pub struct PeerLink {
    party: PartyId,
    link: Link,
    opts: NetOptions,
    stats: DirStats,
}

impl PeerLink {
    pub(crate) fn new(party: PartyId, link: Link, opts: NetOptions) -> PeerLink {
        PeerLink {
            party,
            link,
            opts,
            stats: DirStats::default(),
        }
    }

    /// This party.
    pub fn party(&self) -> PartyId {
        self.party
    }

    /// The other party.
    pub fn peer(&self) -> PartyId {
        self.link.peer
    }

    /// Queues one message to the peer (never waits for it to read); fails for a message over
    /// [`NetOptions::max_frame`] or a link known to be down.
    pub fn send(&mut self, payload: Vec<u8>) -> Result<(), NetError> {
        let len = payload.len();
        let limit = self.opts.max_frame.min(WIRE_MAX);
        if len > limit {
            return Err(NetError::FrameTooLarge {
                peer: self.link.peer,
                len: len as u64,
                max: limit as u64,
            });
        }
        let not_before = self.opts.sim.map(|sim| self.link.departure(len, &sim));
        let peer = self.link.peer;
        match &mut self.link.io {
            LinkIo::Memory(m) => m.send(peer, payload, not_before)?,
            LinkIo::Tls(t) => t.send(payload, not_before)?,
        }
        self.stats.bytes_sent += len as u64;
        self.stats.messages += 1;
        Ok(())
    }

    /// Waits for the next message, at most the read timeout (errors as [`Network::recv`]).
    pub fn recv(&mut self) -> Result<Vec<u8>, NetError> {
        let timeout = self.opts.timeouts.read;
        let peer = self.link.peer;
        let payload = match &mut self.link.io {
            LinkIo::Memory(m) => m.recv(peer, timeout)?,
            LinkIo::Tls(t) => t.recv(timeout)?,
        };
        self.stats.bytes_received += payload.len() as u64;
        self.stats.messages += 1;
        Ok(payload)
    }

    /// Bytes and messages so far (`messages` = sends + receives).
    pub fn stats(&self) -> DirStats {
        self.stats
    }

    /// Flushes queued messages (at most the read timeout) and closes the link.
    pub fn shutdown(mut self) -> Result<(), NetError> {
        match &mut self.link.io {
            LinkIo::Memory(m) => {
                m.tx = None;
                Ok(())
            }
            LinkIo::Tls(t) => {
                t.close();
                t.wait_writer(self.opts.timeouts.read)
            }
        }
    }
}

impl fmt::Debug for PeerLink {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("PeerLink")
            .field("party", &self.party)
            .field("link", &self.link)
            .field("stats", &self.stats)
            .finish_non_exhaustive()
    }
}

/// Three parties connected by in-memory channels (P1, P2, P3), with the same accounting,
/// timeout and simulation behaviour as the TLS transport. For tests and single-process
/// benchmarks where the transport cost is not of interest.
pub fn in_memory(opts: &NetOptions) -> [Network; 3] {
    // cells[p][d]: the channel of frames arriving at party p from its neighbour in
    // direction d; the sender half goes to that neighbour.
    let mut senders: Vec<[Option<mpsc::Sender<MemFrame>>; 2]> = Vec::new();
    let mut receivers: Vec<[Option<mpsc::Receiver<MemFrame>>; 2]> = Vec::new();
    for _ in PartyId::ALL {
        let (tn, rn) = mpsc::channel();
        let (tp, rp) = mpsc::channel();
        senders.push([Some(tn), Some(tp)]);
        receivers.push([Some(rn), Some(rp)]);
    }
    PartyId::ALL.map(|p| {
        let mut link = |dir: Direction| {
            let peer = p.neighbour(dir);
            // What p sends towards `peer` arrives at `peer` from the opposite direction.
            let tx = senders[peer.index()][dir_index(dir.opposite())].take();
            // Every cell is taken exactly once; a missing one would just be a closed link.
            let inbox = receivers[p.index()][dir_index(dir)]
                .take()
                .unwrap_or_else(|| mpsc::channel().1);
            Link::new(
                peer,
                LinkIo::Memory(MemLink {
                    tx,
                    inbox,
                    pending: None,
                }),
            )
        };
        let next = link(Direction::Next);
        let prev = link(Direction::Prev);
        Network::new(p, next, prev, opts.clone())
    })
}
