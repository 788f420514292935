//! The data path of one established TLS link, on plain blocking sockets.
//!
//! Receiving runs on the engine's own thread: [`TlsLink::recv`] blocks in `read(2)` on the
//! socket (with the read timeout as `SO_RCVTIMEO`), decrypts and decodes frames. The kernel
//! wakes the engine directly when data arrives, with no thread hop in between.
//!
//! Sending never waits for the peer (a ring where every party sends large messages before
//! receiving cannot deadlock). A small message is encrypted and written by the engine
//! thread itself when the link's writer thread is idle and the socket takes it at once
//! (`SO_SNDTIMEO` of 1 ms bounds that attempt); otherwise it goes, in order, through an
//! unbounded queue to the writer thread, which also applies simulated departure times.
//!
//! Both sides share the rustls connection state behind a mutex that is held only to encrypt
//! or decrypt a bounded chunk, never across a blocking socket call. A second mutex (the
//! `busy` flag) says whether the writer thread currently owns the socket's write side.

use std::io::{self, BufRead, Read, Write};
use std::net::{Shutdown, TcpStream};
use std::sync::{mpsc, Arc, Mutex, MutexGuard};
use std::thread;
use std::time::{Duration, Instant};

use rustls::Connection;
use triskele_share::PartyId;

use crate::error::{NetError, Waiting};
use crate::frame::{encode_header, is_eof_like, FrameDecoder, HEADER_LEN};
use crate::tls::{map_io_error, map_tls_error};

/// Payloads up to this size are copied behind the header, so that header and payload go out
/// in one TLS record and one TCP segment (larger ones: the header and at most a page of the
/// payload, see [`lead_len`]).
const COALESCE_LIMIT: usize = 32 * 1024;

/// Plaintext is encrypted in chunks of this size, so the connection lock is never held long.
const ENCRYPT_CHUNK: usize = 256 * 1024;

/// Size of the socket read buffer.
const READ_BUF: usize = 64 * 1024;

/// Payloads up to this size may be written by the engine thread directly.
const INLINE_LIMIT: usize = COALESCE_LIMIT;

/// Page size assumed by [`Staging`].
const PAGE: usize = 4096;

/// Page offset at which staged plaintext starts (and a large payload's part after the first
/// record, see [`lead_len`]).
///
/// On some CPUs a large copy runs more than ten times slower when its destination lies a few
/// bytes (fewer than 32 to 64) past its source modulo the page size: measured 3 GB/s against
/// 40-50 GB/s with `rep movsb` on this project's AMD Zen 3 machines, which glibc 2.36 uses for
/// `memcpy` above 4 KiB there (glibc 2.39 avoids the case) and the kernel for every copy from
/// user space. The copies on the sending path:
/// * rustls copies each record's plaintext to 5 bytes past the start of a buffer that
///   mimalloc places at a page boundary, so plaintext must not start at a page boundary;
/// * the records are appended one after another (16,406 bytes apart) to the staged records
///   (from page-aligned rustls buffers: they must not start just past a page boundary);
/// * the kernel copies the records into socket pages that start at page offset 0 more often
///   than not, and right after a large frame's first record (the header and [`PLAIN_AT`]
///   payload bytes, 27 bytes more than `PLAIN_AT`) the next chunk's records must not start
///   at `PLAIN_AT`.
///
/// At page offsets 0 (both) or 2048 (both), 15% and 8% of the CPU time of `chida` went into
/// these copies; with 2048 and 1024, 2.5%.
const PLAIN_AT: usize = 2048;

/// Page offset at which staged TLS records start (see [`PLAIN_AT`]).
const RECORDS_AT: usize = 1024;

/// A reusable byte buffer whose contents start at a given page offset.
struct Staging {
    buf: Vec<u8>,
    start: usize,
    at: usize,
}

impl Staging {
    const fn new(at: usize) -> Self {
        Staging {
            buf: Vec::new(),
            start: 0,
            at,
        }
    }

    /// Empties the buffer and returns it, with room for `n` bytes after the padding that
    /// puts its contents at the buffer's page offset. Appending more still works; the
    /// contents may then start elsewhere.
    fn reset(&mut self, n: usize) -> &mut Vec<u8> {
        self.buf.clear();
        self.buf.reserve(n + PAGE);
        let pad = (self.at + PAGE - self.buf.as_ptr().addr() % PAGE) % PAGE;
        self.buf.resize(pad, 0);
        self.start = pad;
        &mut self.buf
    }

    /// What was appended since the last [`Staging::reset`].
    fn data(&self) -> &[u8] {
        &self.buf[self.start..]
    }
}

/// Room for the TLS records of `n` bytes of plaintext (22 bytes per record of at most 16 KiB)
/// and a few pending control records.
fn records_room(n: usize) -> usize {
    n + (n / 16384 + 1) * 32 + 256
}

/// How many payload bytes to send in the first record, behind the frame header, so that the
/// rest of `payload` starts at page offset [`PLAIN_AT`] (see there).
fn lead_len(payload: &[u8]) -> usize {
    let at = payload.as_ptr().addr() % PAGE;
    ((PLAIN_AT + PAGE - at) % PAGE).min(payload.len())
}

/// `SO_SNDTIMEO`: bounds one blocking write, so that an inline write never waits long for a
/// full socket buffer (the writer thread retries, tracking progress itself).
const WRITE_SLICE: Duration = Duration::from_millis(1);

/// Work for the writer thread.
enum WriterCmd {
    /// Send one frame, not before the given instant (network simulation).
    Frame {
        payload: Vec<u8>,
        not_before: Option<Instant>,
    },
    /// Write the rest of records the engine thread could only partly write.
    Raw(Vec<u8>),
    /// Write out TLS records the receiving side produced (alerts, key updates).
    Flush,
}

/// State shared by the engine thread and the writer thread.
struct Shared {
    conn: Mutex<Connection>,
    /// True while the writer thread has work (it owns the write side of the socket).
    /// Lock order: `busy` before `conn`.
    busy: Mutex<bool>,
}

/// One established TLS link.
pub(crate) struct TlsLink {
    peer: PartyId,
    shared: Arc<Shared>,
    /// The socket; the writer thread holds a clone.
    sock: TcpStream,
    /// The read timeout currently set on the socket.
    read_timeout_set: Option<Option<Duration>>,
    /// Plaintext of inline writes (header and payload).
    out: Staging,
    /// TLS records of inline writes.
    records: Staging,
    raw: Box<[u8]>,
    raw_start: usize,
    raw_end: usize,
    /// The socket reached end of stream (or was reset).
    eof: bool,
    /// The end of stream has been passed on to rustls.
    eof_delivered: bool,
    decoder: FrameDecoder,
    /// A non-timeout error ended the link.
    dead: bool,
    queue: Option<mpsc::Sender<WriterCmd>>,
    writer_done: mpsc::Receiver<Result<(), NetError>>,
}

fn lock<T>(m: &Mutex<T>, peer: PartyId) -> Result<MutexGuard<'_, T>, NetError> {
    m.lock().map_err(|_| {
        NetError::io(
            Some(peer),
            "TLS state",
            io::Error::other("a thread failed while holding the TLS state"),
        )
    })
}

impl TlsLink {
    /// Starts the writer thread of an established connection. `write_stall` bounds how long
    /// a single socket write may wait for the peer to take data.
    pub(crate) fn start(
        me: PartyId,
        peer: PartyId,
        sock: TcpStream,
        mut conn: Connection,
        max_frame: usize,
        write_stall: Duration,
    ) -> Result<TlsLink, NetError> {
        let io_err = |what: &str, e| NetError::io(Some(peer), what.to_string(), e);
        sock.set_nonblocking(false)
            .map_err(|e| io_err("configuring the socket", e))?;
        sock.set_nodelay(true)
            .map_err(|e| io_err("setting TCP_NODELAY", e))?;
        // The writer bounds each of its chunks itself; no rustls-side limit.
        conn.set_buffer_limit(None);
        sock.set_write_timeout(Some(WRITE_SLICE))
            .map_err(|e| io_err("setting the write timeout", e))?;
        let shared = Arc::new(Shared {
            conn: Mutex::new(conn),
            busy: Mutex::new(false),
        });
        let wsock = sock
            .try_clone()
            .map_err(|e| io_err("duplicating the socket", e))?;
        let (tx, rx) = mpsc::channel();
        let (done_tx, done_rx) = mpsc::sync_channel(1);
        let wshared = Arc::clone(&shared);
        thread::Builder::new()
            .name(format!("triskele-net {me}->{peer}"))
            .spawn(move || {
                let res = writer_loop(peer, &wshared, wsock, &rx, write_stall);
                if let Err(e) = &res {
                    tracing::debug!(%peer, "writer stopped: {e}");
                }
                let _ = done_tx.send(res);
            })
            .map_err(|e| io_err("starting the writer thread", e))?;
        Ok(TlsLink {
            peer,
            shared,
            sock,
            read_timeout_set: None,
            out: Staging::new(PLAIN_AT),
            records: Staging::new(RECORDS_AT),
            raw: vec![0u8; READ_BUF].into_boxed_slice(),
            raw_start: 0,
            raw_end: 0,
            eof: false,
            eof_delivered: false,
            decoder: FrameDecoder::new(max_frame, peer),
            dead: false,
            queue: Some(tx),
            writer_done: done_rx,
        })
    }

    /// The writer's error if it stopped, else `Disconnected`.
    fn writer_failure(&self) -> NetError {
        match self.writer_done.try_recv() {
            Ok(Err(e)) => e,
            _ => NetError::Disconnected { peer: self.peer },
        }
    }

    /// Sends a frame: inline if possible, else through the writer thread. Never waits for
    /// the peer (at most one `WRITE_SLICE` for a full socket buffer).
    pub(crate) fn send(
        &mut self,
        payload: Vec<u8>,
        not_before: Option<Instant>,
    ) -> Result<(), NetError> {
        let peer = self.peer;
        let Some(queue) = &self.queue else {
            return Err(self.writer_failure());
        };
        let mut busy = lock(&self.shared.busy, peer)?;
        if *busy || not_before.is_some() || payload.len() > INLINE_LIMIT {
            *busy = true;
            let cmd = WriterCmd::Frame {
                payload,
                not_before,
            };
            if queue.send(cmd).is_err() {
                drop(busy);
                return Err(self.writer_failure());
            }
            return Ok(());
        }
        // The writer is idle: encrypt and write here.
        let plain = self.out.reset(HEADER_LEN + payload.len());
        plain.extend_from_slice(&encode_header(payload.len()));
        plain.extend_from_slice(&payload);
        let records = self.records.reset(records_room(plain.len()));
        let written = encrypt(peer, &self.shared.conn, self.out.data(), records)
            .and_then(|()| write_available(peer, &mut self.sock, self.records.data()));
        let written = match written {
            Ok(n) => n,
            Err(e) => {
                // The stream may be cut inside a record: no further sends on this link.
                drop(busy);
                self.queue = None;
                return Err(e);
            }
        };
        let records = self.records.data();
        if written < records.len() {
            *busy = true;
            if queue
                .send(WriterCmd::Raw(records[written..].to_vec()))
                .is_err()
            {
                drop(busy);
                return Err(self.writer_failure());
            }
        }
        Ok(())
    }

    /// Sets `SO_RCVTIMEO` unless it already has this value.
    fn set_read_timeout(&mut self, t: Option<Duration>) -> Result<(), NetError> {
        if self.read_timeout_set != Some(t) {
            self.sock
                .set_read_timeout(t)
                .map_err(|e| NetError::io(Some(self.peer), "setting the read timeout", e))?;
            self.read_timeout_set = Some(t);
        }
        Ok(())
    }

    /// Receives one frame, waiting at most `timeout`.
    pub(crate) fn recv(&mut self, timeout: Duration) -> Result<Vec<u8>, NetError> {
        if self.dead {
            return Err(NetError::Disconnected { peer: self.peer });
        }
        let res = self.recv_inner(timeout);
        if let Err(e) = &res {
            if !e.is_timeout() {
                self.dead = true;
            }
        }
        res
    }

    fn recv_inner(&mut self, timeout: Duration) -> Result<Vec<u8>, NetError> {
        let peer = self.peer;
        let deadline = Instant::now().checked_add(timeout);
        let timed_out = || NetError::Timeout {
            peer,
            during: Waiting::Receive,
            after: timeout,
            detail: None,
        };
        let mut first_read = true;
        loop {
            if let Some(frame) = self.process()? {
                return Ok(frame);
            }
            // The first read waits the whole timeout (usually already set: no syscall);
            // later reads of the same frame only what is left of it.
            let wait = match deadline {
                Some(_) if first_read => Some(timeout),
                Some(d) => {
                    let left = d.saturating_duration_since(Instant::now());
                    if left.is_zero() {
                        return Err(timed_out());
                    }
                    Some(left)
                }
                None => None,
            };
            first_read = false;
            self.set_read_timeout(wait)?;
            match self.sock.read(&mut self.raw) {
                Ok(0) => self.eof = true,
                Ok(n) => {
                    self.raw_start = 0;
                    self.raw_end = n;
                }
                Err(e)
                    if matches!(
                        e.kind(),
                        io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut
                    ) =>
                {
                    return Err(timed_out());
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) if is_eof_like(&e) => self.eof = true,
                Err(e) => return Err(NetError::io(Some(peer), "receiving", e)),
            }
        }
    }

    /// Decrypts what has been read so far and decodes plaintext until a frame is complete.
    /// `Ok(None)`: more bytes are needed from the socket.
    fn process(&mut self) -> Result<Option<Vec<u8>>, NetError> {
        let peer = self.peer;
        let shared = Arc::clone(&self.shared);
        let mut conn = lock(&shared.conn, peer)?;
        loop {
            loop {
                let mut reader = conn.reader();
                let (used, frame) = match reader.fill_buf() {
                    // Clean close_notify from the peer, all data consumed.
                    Ok([]) => return Err(self.decoder.end_of_stream()),
                    Ok(chunk) => self.decoder.feed(chunk)?,
                    Err(e) if e.kind() == io::ErrorKind::WouldBlock => break,
                    // TCP end without close_notify: the peer died or dropped its network.
                    Err(e) if e.kind() == io::ErrorKind::UnexpectedEof => {
                        return Err(self.decoder.end_of_stream());
                    }
                    Err(e) => return Err(map_io_error(peer, "receiving", e)),
                };
                reader.consume(used);
                if frame.is_some() {
                    return Ok(frame);
                }
            }
            if self.raw_start < self.raw_end {
                let mut pending = &self.raw[self.raw_start..self.raw_end];
                let n = conn
                    .read_tls(&mut pending)
                    .map_err(|e| map_io_error(peer, "receiving", e))?;
                if n == 0 {
                    // Cannot happen with the plaintext drained; never spin on it.
                    return Err(NetError::io(
                        Some(peer),
                        "receiving",
                        io::Error::other("the TLS layer accepts no more data"),
                    ));
                }
                self.raw_start += n;
            } else if self.eof && !self.eof_delivered {
                self.eof_delivered = true;
                conn.read_tls(&mut io::empty())
                    .map_err(|e| map_io_error(peer, "receiving", e))?;
            } else {
                return Ok(None);
            }
            let state = conn.process_new_packets();
            if conn.wants_write() {
                // An alert or a key update to answer: the writer sends it (lock order: the
                // connection is released before `busy` is taken).
                drop(conn);
                if let Some(q) = &self.queue {
                    let mut busy = lock(&shared.busy, peer)?;
                    *busy = true;
                    let _ = q.send(WriterCmd::Flush);
                }
                conn = lock(&shared.conn, peer)?;
            }
            if let Err(e) = state {
                return Err(map_tls_error(peer, e));
            }
        }
    }

    /// Closes the send queue: the writer sends what is queued, then `close_notify`, then
    /// exits.
    pub(crate) fn close(&mut self) {
        self.queue = None;
    }

    /// Waits until the writer has exited (after [`TlsLink::close`]), at most until `deadline`.
    pub(crate) fn wait_writer(&mut self, left: Duration) -> Result<(), NetError> {
        match self.writer_done.recv_timeout(left) {
            Ok(r) => r,
            Err(mpsc::RecvTimeoutError::Timeout) => {
                // Unblock the writer; the link is abandoned.
                let _ = self.sock.shutdown(Shutdown::Both);
                Err(NetError::Timeout {
                    peer: self.peer,
                    during: Waiting::Send,
                    after: left,
                    detail: None,
                })
            }
            Err(mpsc::RecvTimeoutError::Disconnected) => Ok(()),
        }
    }
}

fn writer_loop(
    peer: PartyId,
    shared: &Shared,
    mut sock: TcpStream,
    queue: &mpsc::Receiver<WriterCmd>,
    write_stall: Duration,
) -> Result<(), NetError> {
    let mut out = Staging::new(RECORDS_AT);
    let mut plain = Staging::new(PLAIN_AT);
    let mut next = None;
    loop {
        let cmd = match next.take() {
            Some(c) => c,
            None => match queue.recv() {
                Ok(c) => c,
                Err(_) => break,
            },
        };
        match cmd {
            WriterCmd::Frame {
                payload,
                not_before,
            } => {
                if let Some(t) = not_before {
                    let now = Instant::now();
                    if t > now {
                        thread::sleep(t - now);
                    }
                }
                // Header and payload (a large payload's first bytes) go out in one record;
                // a large payload's rest is encrypted from where it is, from page offset
                // `PLAIN_AT` on.
                let lead = if payload.len() <= COALESCE_LIMIT {
                    payload.len()
                } else {
                    lead_len(&payload)
                };
                let buf = plain.reset(HEADER_LEN + lead);
                buf.extend_from_slice(&encode_header(payload.len()));
                buf.extend_from_slice(&payload[..lead]);
                encrypt_and_write(peer, shared, &mut sock, &mut out, plain.data(), write_stall)?;
                for chunk in payload[lead..].chunks(ENCRYPT_CHUNK) {
                    encrypt_and_write(peer, shared, &mut sock, &mut out, chunk, write_stall)?;
                }
            }
            WriterCmd::Raw(records) => write_all(peer, &mut sock, &records, write_stall)?,
            WriterCmd::Flush => {
                encrypt_and_write(peer, shared, &mut sock, &mut out, &[], write_stall)?;
            }
        }
        // Idle again? Checked under `busy`, which the engine holds while it queues.
        let mut busy = lock(&shared.busy, peer)?;
        match queue.try_recv() {
            Ok(c) => next = Some(c),
            Err(_) => *busy = false,
        }
    }
    // The queue was closed: say goodbye. The peer may be gone already; that is fine now.
    if let Ok(mut c) = lock(&shared.conn, peer) {
        c.send_close_notify();
    }
    if let Err(e) = encrypt_and_write(peer, shared, &mut sock, &mut out, &[], write_stall) {
        tracing::debug!(%peer, "sending close_notify: {e}");
    }
    let _ = sock.shutdown(Shutdown::Write);
    Ok(())
}

/// Encrypts `data` (possibly empty: only collect pending records) into `records`.
fn encrypt(
    peer: PartyId,
    conn: &Mutex<Connection>,
    data: &[u8],
    records: &mut Vec<u8>,
) -> Result<(), NetError> {
    let mut c = lock(conn, peer)?;
    if !data.is_empty() {
        c.writer()
            .write_all(data)
            .map_err(|e| map_io_error(peer, "encrypting", e))?;
    }
    while c.wants_write() {
        c.write_tls(records)
            .map_err(|e| map_io_error(peer, "encrypting", e))?;
    }
    Ok(())
}

fn encrypt_and_write(
    peer: PartyId,
    shared: &Shared,
    sock: &mut TcpStream,
    out: &mut Staging,
    data: &[u8],
    write_stall: Duration,
) -> Result<(), NetError> {
    encrypt(
        peer,
        &shared.conn,
        data,
        out.reset(records_room(data.len())),
    )?;
    write_all(peer, sock, out.data(), write_stall)
}

fn map_write_error(peer: PartyId, e: io::Error) -> NetError {
    if is_eof_like(&e) {
        NetError::Disconnected { peer }
    } else {
        map_io_error(peer, "sending", e)
    }
}

fn is_would_block(e: &io::Error) -> bool {
    matches!(
        e.kind(),
        io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut
    )
}

/// Writes what the socket takes within one `WRITE_SLICE`; returns the count.
fn write_available(peer: PartyId, sock: &mut TcpStream, data: &[u8]) -> Result<usize, NetError> {
    let mut off = 0;
    while off < data.len() {
        match sock.write(&data[off..]) {
            Ok(0) => return Err(NetError::Disconnected { peer }),
            Ok(n) => off += n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) if is_would_block(&e) => break,
            Err(e) => return Err(map_write_error(peer, e)),
        }
    }
    Ok(off)
}

/// Writes all of `data`, failing if the peer takes nothing for `write_stall`.
fn write_all(
    peer: PartyId,
    sock: &mut TcpStream,
    data: &[u8],
    write_stall: Duration,
) -> Result<(), NetError> {
    let mut off = 0;
    let mut progress = Instant::now();
    while off < data.len() {
        match sock.write(&data[off..]) {
            Ok(0) => return Err(NetError::Disconnected { peer }),
            Ok(n) => {
                off += n;
                progress = Instant::now();
            }
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            // Each attempt sleeps in the kernel until there is room or `WRITE_SLICE` passed.
            Err(e) if is_would_block(&e) => {
                if progress.elapsed() >= write_stall {
                    return Err(NetError::Timeout {
                        peer,
                        during: Waiting::Send,
                        after: write_stall,
                        detail: Some("the peer stopped reading".into()),
                    });
                }
            }
            Err(e) => return Err(map_write_error(peer, e)),
        }
    }
    Ok(())
}

impl Drop for TlsLink {
    fn drop(&mut self) {
        // The writer drains what is queued and closes the connection in the background
        // (each write bounded by the write-stall timeout); the socket is released when it
        // exits.
        self.queue = None;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn staged_contents_start_at_their_page_offset() {
        for at in [PLAIN_AT, RECORDS_AT, 0, 4095] {
            let mut st = Staging::new(at);
            for n in [0, 1, 100, 5000, 40_000, 300_000, 64] {
                let buf = st.reset(n);
                assert!(buf.capacity() - buf.len() >= n);
                let fill: Vec<u8> = (0..n).map(|i| (i * 7 + n) as u8).collect();
                buf.extend_from_slice(&fill);
                assert_eq!(st.data(), &fill[..]);
                assert_eq!(st.data().as_ptr().addr() % PAGE, at, "n = {n}");
            }
        }
        let mut st = Staging::new(PLAIN_AT);
        // Appending beyond the room keeps the contents (they may move).
        let buf = st.reset(10);
        buf.extend_from_slice(&[9u8; 20_000]);
        assert_eq!(st.data(), &[9u8; 20_000][..]);
    }

    #[test]
    fn the_rest_after_the_lead_starts_at_the_plaintext_offset() {
        let big = vec![0u8; 3 * PAGE + 100_000];
        for off in [0, 1, 5, 2047, 2048, 2049, 4095, 4096, 7000] {
            let payload = &big[off..];
            let lead = lead_len(payload);
            assert!(lead < PAGE);
            assert_eq!(
                payload[lead..].as_ptr().addr() % PAGE,
                PLAIN_AT,
                "offset {off}"
            );
        }
        // A payload shorter than the distance is sent whole.
        let base = PAGE - big.as_ptr().addr() % PAGE;
        let short = &big[base + PLAIN_AT + 1..base + PLAIN_AT + 11];
        assert_eq!(lead_len(short), short.len());
    }

    /// The distances (destination minus source, modulo the page) of the sending path's copies
    /// under the layout described at [`PLAIN_AT`] stay out of the slow range 1..64.
    #[test]
    fn staging_offsets_avoid_the_slow_copy_distances() {
        let slow = |dst: usize, src: usize| (1..64).contains(&((dst + PAGE - src % PAGE) % PAGE));
        // rustls: plaintext to 5 bytes past a page-aligned buffer.
        assert!(!slow(5, PLAIN_AT));
        // Records (16,406 bytes each, from page-aligned buffers) appended to the staged ones,
        // up to a chunk's 16 records.
        for k in 0..=ENCRYPT_CHUNK / 16_384 {
            assert!(!slow((RECORDS_AT + k * 16_406) % PAGE, 0), "record {k}");
        }
        // The kernel: socket pages from offset 0, or just after a large frame's first record
        // (header, `PLAIN_AT` payload bytes, 22 bytes of record overhead).
        assert!(!slow(0, RECORDS_AT));
        assert!(!slow(HEADER_LEN + PLAIN_AT + 22, RECORDS_AT));
    }

    #[test]
    fn records_room_covers_the_record_overhead() {
        // TLS 1.3 with AES-GCM: 5 header bytes, 1 content type byte, 16 tag bytes per record.
        for n in [0usize, 1, 16_384, 16_385, 262_144, 1 << 20] {
            let records = n.div_ceil(16_384).max(1);
            assert!(records_room(n) >= n + 22 * records, "n = {n}");
        }
    }
}
