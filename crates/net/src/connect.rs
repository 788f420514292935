//! Establishing the TLS links and running them.
//!
//! Topology: the lower-numbered party connects to the higher one (P1 -> P2, P1 -> P3,
//! P2 -> P3); P2 and P3 listen. Each link: TCP (with `TCP_NODELAY`), TLS 1.3 with pinned
//! certificates on both sides, then a hello in each direction carrying the sender's and the
//! intended receiver's party number, so that mixed-up configurations are caught before any
//! protocol message. Per link a reader task turns frames into [`Incoming`] events and a
//! writer task drains the send queue; both run on a small Tokio runtime owned by the
//! [`Network`].

use std::net::{SocketAddr, TcpListener as StdListener, ToSocketAddrs};
use std::sync::mpsc;
use std::time::Duration;

use rustls::pki_types::{CertificateDer, ServerName};
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::mpsc::UnboundedReceiver;
use tokio::task::JoinSet;
use tokio::time::Instant;
use tokio_rustls::{TlsAcceptor, TlsConnector, TlsStream};
use triskele_share::PartyId;

use crate::config::{generate_identity, PartyConfig};
use crate::error::{NetError, Waiting};
use crate::frame::{read_frame_stamped, write_frame};
use crate::network::{Incoming, Link, NetOptions, Network, Outgoing};
use crate::tls::{
    classify_accept_error, client_config, map_io_error, server_config, AcceptFailure, Identity,
};

type Stream = TlsStream<TcpStream>;

/// The outcome of one party's link setup.
type SetupResult = (PartyId, Result<Vec<(PartyId, Stream)>, NetError>);

const HELLO_MAGIC: [u8; 4] = *b"TRSK";
const HELLO_VERSION: u8 = 1;
const HELLO_LEN: usize = 8;

/// Extra time granted to the setup task beyond the connect timeout before giving up on it.
const SETUP_GRACE: Duration = Duration::from_secs(2);

fn hello(from: PartyId, to: PartyId) -> [u8; HELLO_LEN] {
    let [a, b, c, d] = HELLO_MAGIC;
    [a, b, c, d, HELLO_VERSION, from.number(), to.number(), 0]
}

/// Checks a received hello: it must come from `from` and be meant for `to`.
fn check_hello(
    got: &[u8; HELLO_LEN],
    link_peer: PartyId,
    from: PartyId,
    to: PartyId,
) -> Result<(), NetError> {
    let bad = |message: String| NetError::Protocol {
        peer: link_peer,
        message,
    };
    if got[..4] != HELLO_MAGIC {
        return Err(bad("the peer does not speak the Triskele protocol".into()));
    }
    if got[4] != HELLO_VERSION {
        return Err(bad(format!(
            "protocol version mismatch: ours is {HELLO_VERSION}, the peer's is {}",
            got[4]
        )));
    }
    if got[5] != from.number() || got[6] != to.number() {
        return Err(bad(format!(
            "expected a hello from party {} to party {}, got one from party {} to party {}; \
             check party_index and the [p1]..[p3] tables of both configurations",
            from.number(),
            to.number(),
            got[5],
            got[6]
        )));
    }
    Ok(())
}

fn connect_timeout(peer: PartyId, after: Duration, detail: Option<String>) -> NetError {
    NetError::Timeout {
        peer,
        during: Waiting::Connect,
        after,
        detail,
    }
}

/// What one party needs to establish its links.
struct Endpoint {
    party: PartyId,
    identity: Identity,
    certs: [CertificateDer<'static>; 3],
    /// Host and port of every party (only the higher-numbered peers' are used).
    addrs: [(String, u16); 3],
}

fn lower_peers(me: PartyId) -> Vec<PartyId> {
    PartyId::ALL.into_iter().filter(|p| *p < me).collect()
}

fn higher_peers(me: PartyId) -> Vec<PartyId> {
    PartyId::ALL.into_iter().filter(|p| *p > me).collect()
}

/// Connects to a higher-numbered peer, retrying the TCP connection until the deadline.
async fn connect_out(
    me: PartyId,
    peer: PartyId,
    addr: (String, u16),
    connector: TlsConnector,
    deadline: Instant,
    timeout: Duration,
) -> Result<Vec<(PartyId, Stream)>, NetError> {
    let (host, port) = addr;
    let mut last: Option<String> = None;
    let mut backoff = Duration::from_millis(5);
    let tcp = loop {
        match tokio::time::timeout_at(deadline, TcpStream::connect((host.as_str(), port))).await {
            Ok(Ok(s)) => break s,
            Ok(Err(e)) => last = Some(format!("{host}:{port}: {e}")),
            Err(_) => return Err(connect_timeout(peer, timeout, last)),
        }
        let now = Instant::now();
        if now >= deadline {
            return Err(connect_timeout(peer, timeout, last));
        }
        tokio::time::sleep_until((now + backoff).min(deadline)).await;
        backoff = (backoff * 2).min(Duration::from_millis(200));
    };
    tcp.set_nodelay(true)
        .map_err(|e| NetError::io(Some(peer), "setting TCP_NODELAY", e))?;
    let name = ServerName::try_from(format!("triskele-p{}", peer.number()))
        .map_err(|e| NetError::config(format!("internal: bad server name: {e}")))?;
    let tls = match tokio::time::timeout_at(deadline, connector.connect(name, tcp)).await {
        Ok(Ok(s)) => s,
        Ok(Err(e)) => return Err(map_io_error(peer, "TLS handshake", e)),
        Err(_) => {
            return Err(connect_timeout(
                peer,
                timeout,
                Some("TLS handshake did not complete".into()),
            ))
        }
    };
    let mut stream = TlsStream::Client(tls);
    let exchange = async {
        stream
            .write_all(&hello(me, peer))
            .await
            .map_err(|e| map_io_error(peer, "sending hello", e))?;
        stream
            .flush()
            .await
            .map_err(|e| map_io_error(peer, "sending hello", e))?;
        let mut reply = [0u8; HELLO_LEN];
        stream
            .read_exact(&mut reply)
            .await
            .map_err(|e| map_hello_read_error(peer, e))?;
        check_hello(&reply, peer, peer, me)
    };
    match tokio::time::timeout_at(deadline, exchange).await {
        Ok(Ok(())) => Ok(vec![(peer, stream)]),
        Ok(Err(e)) => Err(e),
        Err(_) => Err(connect_timeout(
            peer,
            timeout,
            Some("no hello after the TLS handshake".into()),
        )),
    }
}

fn map_hello_read_error(peer: PartyId, e: std::io::Error) -> NetError {
    if e.kind() == std::io::ErrorKind::UnexpectedEof && crate::tls::rustls_error(&e).is_none() {
        NetError::Protocol {
            peer,
            message: "the peer closed the connection before its hello (it may have refused our certificate, see its log)".into(),
        }
    } else {
        map_io_error(peer, "receiving hello", e)
    }
}

/// Server side of one incoming connection: handshake, identification, hello.
async fn accept_one(
    me: PartyId,
    tcp: TcpStream,
    acceptor: TlsAcceptor,
    expected: Vec<(PartyId, CertificateDer<'static>)>,
) -> Result<(PartyId, Stream), AcceptFailure> {
    let names: Vec<PartyId> = expected.iter().map(|(p, _)| *p).collect();
    if let Err(e) = tcp.set_nodelay(true) {
        return Err(AcceptFailure::Retry(format!("setting TCP_NODELAY: {e}")));
    }
    let tls = acceptor
        .accept(tcp)
        .await
        .map_err(|e| classify_accept_error(e, &names))?;
    let presented = tls
        .get_ref()
        .1
        .peer_certificates()
        .and_then(|c| c.first())
        .cloned();
    let peer = expected
        .iter()
        .find(|(_, c)| presented.as_ref() == Some(c))
        .map(|(p, _)| *p)
        .ok_or_else(|| {
            AcceptFailure::Fatal(NetError::Certificate {
                peer: None,
                reason: "an incoming connection was accepted without a configured certificate"
                    .into(),
            })
        })?;
    let mut stream = TlsStream::Server(tls);
    let mut got = [0u8; HELLO_LEN];
    stream
        .read_exact(&mut got)
        .await
        .map_err(|e| AcceptFailure::Fatal(map_hello_read_error(peer, e)))?;
    let checked = check_hello(&got, peer, peer, me);
    // Reply even to a bad hello, so that the other side can diagnose the mix-up too.
    let reply = async {
        stream.write_all(&hello(me, peer)).await?;
        stream.flush().await
    };
    let sent = reply.await;
    checked.map_err(AcceptFailure::Fatal)?;
    sent.map_err(|e| AcceptFailure::Fatal(map_io_error(peer, "sending hello", e)))?;
    Ok((peer, stream))
}

/// Accepts the lower-numbered peers until all have connected or the deadline passes.
/// Connections that fail without pointing at a misconfiguration (port scanners, stray
/// clients) are logged and ignored.
async fn accept_in(
    me: PartyId,
    listener: StdListener,
    expected: Vec<(PartyId, CertificateDer<'static>)>,
    acceptor: TlsAcceptor,
    deadline: Instant,
    timeout: Duration,
) -> Result<Vec<(PartyId, Stream)>, NetError> {
    let listener = TcpListener::from_std(listener)
        .map_err(|e| NetError::io(None, "registering the listening socket", e))?;
    let mut missing: Vec<PartyId> = expected.iter().map(|(p, _)| *p).collect();
    let mut done = Vec::new();
    let mut handshakes = JoinSet::new();
    let mut last: Option<String> = None;
    while let Some(&first_missing) = missing.first() {
        tokio::select! {
            acc = listener.accept() => match acc {
                Ok((tcp, from)) => {
                    tracing::debug!(party = %me, %from, "incoming connection");
                    let still: Vec<_> = expected
                        .iter()
                        .filter(|(p, _)| missing.contains(p))
                        .cloned()
                        .collect();
                    handshakes.spawn(accept_one(me, tcp, acceptor.clone(), still));
                }
                Err(e) => {
                    last = Some(format!("accept: {e}"));
                    // e.g. out of file descriptors: do not spin.
                    tokio::time::sleep(Duration::from_millis(10)).await;
                }
            },
            Some(res) = handshakes.join_next() => match res {
                Ok(Ok((peer, stream))) => {
                    if let Some(i) = missing.iter().position(|p| *p == peer) {
                        missing.remove(i);
                        done.push((peer, stream));
                    } else {
                        return Err(NetError::Protocol {
                            peer,
                            message: format!("{peer} connected twice"),
                        });
                    }
                }
                Ok(Err(AcceptFailure::Fatal(e))) => return Err(e),
                Ok(Err(AcceptFailure::Retry(msg))) => {
                    tracing::debug!(party = %me, "ignoring failed incoming connection: {msg}");
                    last = Some(msg);
                }
                Err(e) => last = Some(format!("handshake task failed: {e}")),
            },
            _ = tokio::time::sleep_until(deadline) => {
                return Err(connect_timeout(first_missing, timeout, last));
            }
        }
    }
    Ok(done)
}

/// Establishes all links of one party. Ends by the deadline.
async fn establish(
    ep: Endpoint,
    listener: Option<StdListener>,
    timeout: Duration,
) -> Result<Vec<(PartyId, Stream)>, NetError> {
    let deadline = Instant::now() + timeout;
    let me = ep.party;
    let mut tasks = JoinSet::new();
    for peer in higher_peers(me) {
        let cfg = client_config(&ep.identity, peer, ep.certs[peer.index()].clone())?;
        tasks.spawn(connect_out(
            me,
            peer,
            ep.addrs[peer.index()].clone(),
            TlsConnector::from(cfg),
            deadline,
            timeout,
        ));
    }
    let lower = lower_peers(me);
    if !lower.is_empty() {
        let listener = listener
            .ok_or_else(|| NetError::config(format!("internal: {me} has no listening socket")))?;
        let expected: Vec<_> = lower
            .iter()
            .map(|p| (*p, ep.certs[p.index()].clone()))
            .collect();
        let cfg = server_config(&ep.identity, expected.clone())?;
        tasks.spawn(accept_in(
            me,
            listener,
            expected,
            TlsAcceptor::from(cfg),
            deadline,
            timeout,
        ));
    }
    let mut links = Vec::with_capacity(2);
    while let Some(res) = tasks.join_next().await {
        match res {
            Ok(Ok(v)) => links.extend(v),
            // Returning drops `tasks`, which aborts the other connection attempts.
            Ok(Err(e)) => return Err(e),
            Err(e) => {
                return Err(NetError::io(
                    None,
                    "link setup",
                    std::io::Error::other(e.to_string()),
                ))
            }
        }
    }
    Ok(links)
}

async fn reader_task<R>(mut r: R, tx: mpsc::Sender<Incoming>, peer: PartyId, max_frame: usize)
where
    R: AsyncRead + Unpin,
{
    loop {
        let (event, last) = match read_frame_stamped(&mut r, max_frame, peer).await {
            Ok(Some((payload, stamp))) => (Incoming::Frame { payload, stamp }, false),
            Ok(None) => (Incoming::Closed, true),
            Err(e) => {
                tracing::debug!(%peer, "link failed: {e}");
                (Incoming::Failed(e), true)
            }
        };
        if tx.send(event).is_err() || last {
            return;
        }
    }
}

async fn writer_task<W>(
    mut w: W,
    mut queue: UnboundedReceiver<Vec<u8>>,
    peer: PartyId,
    done: mpsc::SyncSender<Result<(), NetError>>,
) where
    W: AsyncWrite + Unpin,
{
    let result = async {
        while let Some(payload) = queue.recv().await {
            write_frame(&mut w, &payload)
                .await
                .map_err(|e| map_write_error(peer, e))?;
            drop(payload);
            if queue.is_empty() {
                w.flush().await.map_err(|e| map_write_error(peer, e))?;
            }
        }
        Ok(())
    }
    .await;
    if result.is_ok() {
        // The queue was closed by `shutdown`: send close_notify and FIN. The peer may be gone
        // already, which is not an error at this point.
        if let Err(e) = w.shutdown().await {
            tracing::debug!(%peer, "closing the link: {e}");
        }
    }
    let _ = done.try_send(result);
}

fn map_write_error(peer: PartyId, e: std::io::Error) -> NetError {
    match e.kind() {
        std::io::ErrorKind::BrokenPipe
        | std::io::ErrorKind::ConnectionReset
        | std::io::ErrorKind::ConnectionAborted => NetError::Disconnected { peer },
        _ => map_io_error(peer, "sending a frame", e),
    }
}

fn build_runtime(party: PartyId) -> Result<tokio::runtime::Runtime, NetError> {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_io()
        .enable_time()
        .thread_name(format!("triskele-net-{party}"))
        .build()
        .map_err(|e| NetError::io(None, "starting the network threads", e))
}

/// A party whose links are being established on its runtime.
struct Starting {
    party: PartyId,
    runtime: tokio::runtime::Runtime,
}

/// Starts establishing `ep`'s links; the result is sent to `results`.
fn start(
    ep: Endpoint,
    listener: Option<StdListener>,
    opts: &NetOptions,
    results: mpsc::Sender<SetupResult>,
) -> Result<Starting, NetError> {
    let party = ep.party;
    let runtime = build_runtime(party)?;
    let timeout = opts.timeouts.connect;
    runtime.spawn(async move {
        let res = establish(ep, listener, timeout).await;
        let _ = results.send((party, res));
    });
    Ok(Starting { party, runtime })
}

/// Turns established streams into a running [`Network`].
fn finish(
    starting: Starting,
    streams: Vec<(PartyId, Stream)>,
    opts: &NetOptions,
) -> Result<Network, NetError> {
    let me = starting.party;
    let handle = starting.runtime.handle().clone();
    let mut next = None;
    let mut prev = None;
    for (peer, stream) in streams {
        let (r, w) = tokio::io::split(stream);
        let (in_tx, in_rx) = mpsc::channel();
        let (out_tx, out_rx) = tokio::sync::mpsc::unbounded_channel();
        let (done_tx, done_rx) = mpsc::sync_channel(1);
        handle.spawn(reader_task(r, in_tx, peer, opts.max_frame));
        handle.spawn(writer_task(w, out_rx, peer, done_tx));
        let link = Link::new(peer, Outgoing::Tls(out_tx), in_rx, Some(done_rx));
        if peer == me.next() {
            next = Some(link);
        } else if peer == me.prev() {
            prev = Some(link);
        }
    }
    match (next, prev) {
        (Some(n), Some(p)) => Ok(Network::new(me, n, p, opts.clone(), Some(starting.runtime))),
        _ => Err(NetError::config(format!(
            "internal: {me} did not end up with links to both neighbours"
        ))),
    }
}

/// Waits for the setup results of `starting` parties and builds their networks; on the
/// first failure returns it at once (the other parties' setups are cancelled).
fn collect(
    mut starting: Vec<Starting>,
    results: mpsc::Receiver<SetupResult>,
    opts: &NetOptions,
) -> Result<Vec<Network>, NetError> {
    let wait = opts.timeouts.connect.saturating_add(SETUP_GRACE);
    let mut streams: Vec<Option<Vec<(PartyId, Stream)>>> = starting.iter().map(|_| None).collect();
    for _ in 0..starting.len() {
        match results.recv_timeout(wait) {
            Ok((party, Ok(s))) => {
                if let Some(i) = starting.iter().position(|st| st.party == party) {
                    streams[i] = Some(s);
                }
            }
            Ok((_, Err(e))) => {
                for st in starting.drain(..) {
                    st.runtime.shutdown_background();
                }
                return Err(e);
            }
            Err(_) => {
                let peer = starting
                    .iter()
                    .zip(&streams)
                    .find(|(_, s)| s.is_none())
                    .map_or(PartyId::P1, |(st, _)| st.party);
                for st in starting.drain(..) {
                    st.runtime.shutdown_background();
                }
                return Err(connect_timeout(peer, opts.timeouts.connect, None));
            }
        }
    }
    starting
        .into_iter()
        .zip(streams)
        .map(|(st, s)| finish(st, s.unwrap_or_default(), opts))
        .collect()
}

/// Binds the listening socket of a party configured to listen at `host:port`: on `host`'s
/// address if it is local, otherwise on all interfaces.
fn bind(party: PartyId, host: &str, port: u16) -> Result<StdListener, NetError> {
    let mut last_err = None;
    if let Ok(addrs) = (host, port).to_socket_addrs() {
        for a in addrs {
            match StdListener::bind(a) {
                Ok(l) => return nonblocking(l, party, port),
                Err(e) => last_err = Some(e),
            }
        }
    }
    let any: SocketAddr = ([0, 0, 0, 0], port).into();
    match StdListener::bind(any) {
        Ok(l) => nonblocking(l, party, port),
        Err(e) => {
            let e = match last_err {
                Some(le) if e.kind() == std::io::ErrorKind::AddrNotAvailable => le,
                _ => e,
            };
            Err(NetError::io(
                None,
                format!("{party} cannot listen on port {port}"),
                e,
            ))
        }
    }
}

fn nonblocking(l: StdListener, party: PartyId, port: u16) -> Result<StdListener, NetError> {
    l.set_nonblocking(true)
        .map_err(|e| NetError::io(None, format!("{party} listening on port {port}"), e))?;
    Ok(l)
}

/// Connects one party as described by its configuration: listens on its own port (P2, P3),
/// connects to the higher-numbered parties (P1, P2) with retries until the connect timeout,
/// and returns once both links are up. Three processes calling this with matching
/// configurations form one run.
pub fn connect(cfg: &PartyConfig, opts: &NetOptions) -> Result<Network, NetError> {
    let me = cfg.party();
    let own = cfg.peer(me);
    let listener = if lower_peers(me).is_empty() {
        None
    } else {
        Some(bind(me, &own.address, own.port)?)
    };
    let ep = Endpoint {
        party: me,
        identity: cfg.identity(),
        certs: PartyId::ALL.map(|p| cfg.peer(p).certificate.clone()),
        addrs: PartyId::ALL.map(|p| (cfg.peer(p).address.clone(), cfg.peer(p).port)),
    };
    let (tx, rx) = mpsc::channel();
    let starting = start(ep, listener, opts, tx)?;
    let mut nets = collect(vec![starting], rx, opts)?;
    nets.pop()
        .ok_or_else(|| NetError::config("internal: no network built"))
}

/// Three parties in this process, connected over real TLS on 127.0.0.1 with freshly
/// generated certificates and ports chosen by the operating system. Returns P1, P2, P3.
pub fn local_tls(opts: &NetOptions) -> Result<[Network; 3], NetError> {
    let host = "127.0.0.1".to_string();
    let mut identities = Vec::with_capacity(3);
    for p in PartyId::ALL {
        identities.push(generate_identity(p, &[host.clone(), "localhost".into()])?.identity);
    }
    let mut listeners: Vec<Option<StdListener>> = Vec::with_capacity(3);
    let mut addrs = Vec::with_capacity(3);
    for p in PartyId::ALL {
        if lower_peers(p).is_empty() {
            listeners.push(None);
            addrs.push((host.clone(), 0));
        } else {
            let l = bind(p, &host, 0)?;
            let port = l
                .local_addr()
                .map_err(|e| NetError::io(None, "reading the local port", e))?
                .port();
            listeners.push(Some(l));
            addrs.push((host.clone(), port));
        }
    }
    let certs: [CertificateDer<'static>; 3] = [
        identities[0].cert.clone(),
        identities[1].cert.clone(),
        identities[2].cert.clone(),
    ];
    let addrs: [(String, u16); 3] = [addrs[0].clone(), addrs[1].clone(), addrs[2].clone()];
    let (tx, rx) = mpsc::channel();
    let mut starting = Vec::with_capacity(3);
    for ((p, identity), listener) in PartyId::ALL.into_iter().zip(identities).zip(listeners) {
        let ep = Endpoint {
            party: p,
            identity,
            certs: certs.clone(),
            addrs: addrs.clone(),
        };
        starting.push(start(ep, listener, opts, tx.clone())?);
    }
    drop(tx);
    let nets = collect(starting, rx, opts)?;
    nets.try_into()
        .map_err(|_| NetError::config("internal: expected three networks"))
}
