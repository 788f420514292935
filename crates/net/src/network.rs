//! The engine-facing, blocking [`Network`]: one party's links to its two neighbours.

use core::fmt;
use std::sync::mpsc;
use std::time::{Duration, Instant};

use triskele_share::{Direction, PartyId};

use crate::error::{NetError, Waiting};
use crate::frame::WIRE_MAX;
use crate::stats::{CommStats, Phase};

/// Time limits. A peer that stalls or dies makes the waiting party fail after at most these
/// durations.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Timeouts {
    /// Establishing all links (TCP connect with retries, TLS handshake, hello).
    pub connect: Duration,
    /// Waiting for one message in [`Network::recv`]; also bounds the flush in
    /// [`Network::shutdown`].
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

/// Simulated network conditions, applied in process to every link.
///
/// A message becomes visible to the receiver no earlier than
/// `departure + one_way_delay`, where `departure = max(arrival, previous departure) +
/// len * 8 / rate`: messages on a link are serialised one after the other at the given
/// rate, then travel for the one-way delay. `arrival` is the send time (in memory) or the
/// time the frame header arrived (TLS), so the real transport's cost comes on top. The
/// delay is applied on the receiving side of each link, by sleeping in
/// [`Network::recv`] until the visibility time (no polling; sends are never delayed).
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
}

/// Default [`NetOptions::max_frame`]: 1 GiB.
pub const DEFAULT_MAX_FRAME: usize = 1 << 30;

impl Default for NetOptions {
    fn default() -> Self {
        NetOptions {
            timeouts: Timeouts::default(),
            max_frame: DEFAULT_MAX_FRAME,
            sim: None,
        }
    }
}

/// What a link's inbox delivers.
pub(crate) enum Incoming {
    /// A whole frame; `stamp` is when it was sent (in memory) or its header arrived (TLS).
    Frame { payload: Vec<u8>, stamp: Instant },
    /// The peer closed the link cleanly between frames.
    Closed,
    /// The link failed; no more frames follow.
    Failed(NetError),
}

/// Where `send` puts messages.
pub(crate) enum Outgoing {
    /// Straight into the peer's inbox.
    Memory(mpsc::Sender<Incoming>),
    /// Into the queue drained by the link's writer task.
    Tls(tokio::sync::mpsc::UnboundedSender<Vec<u8>>),
    /// After shutdown.
    Closed,
}

/// One link (to one neighbour).
pub(crate) struct Link {
    pub(crate) peer: PartyId,
    pub(crate) out: Outgoing,
    pub(crate) inbox: mpsc::Receiver<Incoming>,
    /// Reports the writer task's result when it ends (TLS only).
    pub(crate) writer_done: Option<mpsc::Receiver<Result<(), NetError>>>,
    /// A frame taken from the inbox but not yet visible (simulation), with its visibility time.
    pending: Option<(Vec<u8>, Instant)>,
    /// When the simulated wire is free again.
    sim_free_at: Option<Instant>,
}

impl Link {
    pub(crate) fn new(
        peer: PartyId,
        out: Outgoing,
        inbox: mpsc::Receiver<Incoming>,
        writer_done: Option<mpsc::Receiver<Result<(), NetError>>>,
    ) -> Link {
        Link {
            peer,
            out,
            inbox,
            writer_done,
            pending: None,
            sim_free_at: None,
        }
    }

    /// Visibility time of a frame of `len` bytes that arrived at `stamp`.
    fn visible_at(&mut self, stamp: Instant, len: usize, sim: &SimNet) -> Instant {
        let start = match self.sim_free_at {
            Some(free) if free > stamp => free,
            _ => stamp,
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

    /// The error to report when the writer is gone.
    fn send_failure(&mut self) -> NetError {
        if let Some(Ok(Err(e))) = self.writer_done.as_ref().map(|d| d.try_recv()) {
            return e;
        }
        NetError::Disconnected { peer: self.peer }
    }
}

impl fmt::Debug for Link {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let transport = match self.out {
            Outgoing::Memory(_) => "memory",
            Outgoing::Tls(_) => "tls",
            Outgoing::Closed => "closed",
        };
        f.debug_struct("Link")
            .field("peer", &self.peer)
            .field("transport", &transport)
            .field("pending", &self.pending.is_some())
            .finish()
    }
}

/// One party's two links (to next and to prev), its communication counters and the current
/// phase.
///
/// All methods are blocking and meant to be called from one synchronous engine thread; do
/// not call them from inside an async runtime. [`Network::send`] only queues the message
/// (it never waits for the peer), [`Network::recv`] waits up to the read timeout. Messages
/// on a link arrive whole and in order.
///
/// Dropping a `Network` closes its links at once without flushing queued messages (peers
/// see [`NetError::Disconnected`]); call [`Network::shutdown`] to flush first.
pub struct Network {
    party: PartyId,
    phase: Phase,
    stats: CommStats,
    /// Indexed by [`dir_index`]: next, prev.
    links: [Link; 2],
    opts: NetOptions,
    /// Runs the TLS reader and writer tasks (None for in-memory networks).
    runtime: Option<tokio::runtime::Runtime>,
}

pub(crate) fn dir_index(dir: Direction) -> usize {
    match dir {
        Direction::Next => 0,
        Direction::Prev => 1,
    }
}

impl Network {
    pub(crate) fn new(
        party: PartyId,
        next: Link,
        prev: Link,
        opts: NetOptions,
        runtime: Option<tokio::runtime::Runtime>,
    ) -> Network {
        Network {
            party,
            phase: Phase::default(),
            stats: CommStats::default(),
            links: [next, prev],
            opts,
            runtime,
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
    pub fn send(&mut self, dir: Direction, payload: Vec<u8>) -> Result<(), NetError> {
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
        let sent = match &link.out {
            Outgoing::Memory(tx) => tx
                .send(Incoming::Frame {
                    payload,
                    stamp: Instant::now(),
                })
                .is_ok(),
            Outgoing::Tls(tx) => tx.send(payload).is_ok(),
            Outgoing::Closed => false,
        };
        if !sent {
            return Err(link.send_failure());
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
        let start = Instant::now();
        let sim = self.opts.sim;
        let link = &mut self.links[dir_index(dir)];
        let peer = link.peer;
        let timed_out = || NetError::Timeout {
            peer,
            during: Waiting::Receive,
            after: timeout,
            detail: None,
        };
        let (payload, visible) = match link.pending.take() {
            Some(p) => p,
            None => match link.inbox.recv_timeout(timeout) {
                Ok(Incoming::Frame { payload, stamp }) => {
                    let visible = match &sim {
                        Some(s) => link.visible_at(stamp, payload.len(), s),
                        None => stamp,
                    };
                    (payload, visible)
                }
                Ok(Incoming::Closed) | Err(mpsc::RecvTimeoutError::Disconnected) => {
                    return Err(NetError::Disconnected { peer });
                }
                Ok(Incoming::Failed(e)) => return Err(e),
                Err(mpsc::RecvTimeoutError::Timeout) => return Err(timed_out()),
            },
        };
        if sim.is_some() {
            let now = Instant::now();
            if visible > now {
                match start.checked_add(timeout) {
                    Some(deadline) if visible > deadline => {
                        link.pending = Some((payload, visible));
                        std::thread::sleep(deadline.saturating_duration_since(now));
                        return Err(timed_out());
                    }
                    _ => std::thread::sleep(visible - now),
                }
            }
        }
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
    /// (TLS `close_notify`, then TCP FIN) and stops the I/O threads.
    ///
    /// Returns the first failure: a write error, or [`NetError::Timeout`] with
    /// [`Waiting::Flush`] if a peer did not take the data in time.
    pub fn shutdown(mut self) -> Result<(), NetError> {
        let timeout = self.opts.timeouts.read;
        let deadline = Instant::now().checked_add(timeout);
        for link in &mut self.links {
            // Dropping the sender ends the writer's loop once the queue is drained.
            link.out = Outgoing::Closed;
        }
        let mut first_err = None;
        for link in &mut self.links {
            let Some(done) = link.writer_done.take() else {
                continue;
            };
            let left = deadline.map_or(timeout, |d| d.saturating_duration_since(Instant::now()));
            let res = match done.recv_timeout(left) {
                Ok(r) => r,
                Err(mpsc::RecvTimeoutError::Timeout) => Err(NetError::Timeout {
                    peer: link.peer,
                    during: Waiting::Flush,
                    after: timeout,
                    detail: None,
                }),
                // The writer task vanished without reporting (runtime stopping): nothing to add.
                Err(mpsc::RecvTimeoutError::Disconnected) => Ok(()),
            };
            if let Err(e) = res {
                first_err.get_or_insert(e);
            }
        }
        match first_err {
            Some(e) => Err(e),
            None => Ok(()),
        }
    }
}

impl Drop for Network {
    fn drop(&mut self) {
        for link in &mut self.links {
            link.out = Outgoing::Closed;
        }
        if let Some(rt) = self.runtime.take() {
            // Never blocks, also when dropped inside an async context.
            rt.shutdown_background();
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

/// Three parties connected by in-memory channels (P1, P2, P3), with the same accounting,
/// timeout and simulation behaviour as the TLS transport. For tests and single-process
/// benchmarks where the transport cost is not of interest.
pub fn in_memory(opts: &NetOptions) -> [Network; 3] {
    // inbox[p][d]: messages arriving at party p from its neighbour in direction d.
    let mut senders: Vec<[Option<mpsc::Sender<Incoming>>; 2]> = Vec::new();
    let mut receivers: Vec<[Option<mpsc::Receiver<Incoming>>; 2]> = Vec::new();
    for _ in PartyId::ALL {
        let (tn, rn) = mpsc::channel();
        let (tp, rp) = mpsc::channel();
        senders.push([Some(tn), Some(tp)]);
        receivers.push([Some(rn), Some(rp)]);
    }
    PartyId::ALL.map(|p| {
        let make = |dir: Direction,
                    senders: &mut Vec<[Option<mpsc::Sender<Incoming>>; 2]>,
                    receivers: &mut Vec<[Option<mpsc::Receiver<Incoming>>; 2]>| {
            let peer = p.neighbour(dir);
            // What p sends towards `peer` arrives at `peer` from the opposite direction.
            let tx = senders[peer.index()][dir_index(dir.opposite())].take();
            let rx = receivers[p.index()][dir_index(dir)].take();
            (peer, tx, rx)
        };
        let (np, ntx, nrx) = make(Direction::Next, &mut senders, &mut receivers);
        let (pp, ptx, prx) = make(Direction::Prev, &mut senders, &mut receivers);
        let link =
            |peer, tx: Option<mpsc::Sender<Incoming>>, rx: Option<mpsc::Receiver<Incoming>>| {
                let out = tx.map_or(Outgoing::Closed, Outgoing::Memory);
                // Every (party, direction) cell is taken exactly once, so `rx` is always present;
                // fall back to a closed inbox rather than panicking.
                let inbox = rx.unwrap_or_else(|| mpsc::channel().1);
                Link::new(peer, out, inbox, None)
            };
        Network::new(
            p,
            link(np, ntx, nrx),
            link(pp, ptx, prx),
            opts.clone(),
            None,
        )
    })
}
