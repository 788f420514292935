//! Establishing the TLS links.
//!
//! Topology: the lower-numbered party connects to the higher one (P1 -> P2, P1 -> P3,
//! P2 -> P3); P2 and P3 listen. Each link: TCP (with `TCP_NODELAY`), TLS 1.3 with pinned
//! certificates on both sides, then a hello in each direction carrying the sender's and the
//! intended receiver's party number, so that mixed-up configurations are caught before any
//! protocol message. Setup runs on a short-lived single-threaded Tokio runtime (concurrent
//! connects with retries, accepts, timeouts); the established connections are then handed
//! to the blocking data path in [`crate::tls_link`].

use std::net::{SocketAddr, TcpListener as StdListener, ToSocketAddrs};
use std::sync::mpsc;
use std::time::Duration;

use rustls::pki_types::{CertificateDer, ServerName};
use rustls::Connection;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::task::JoinSet;
use tokio::time::Instant;
use tokio_rustls::{TlsAcceptor, TlsConnector, TlsStream};
use triskele_share::PartyId;

use crate::config::{generate_identity, PartyConfig};
use crate::error::{NetError, Waiting};
use crate::network::{Link, LinkIo, NetOptions, Network, PeerLink};
use crate::tls::{
    classify_accept_error, client_config, map_io_error, server_config, AcceptFailure, Identity,
};
use crate::tls_link::TlsLink;

type Stream = TlsStream<TcpStream>;

/// The outcome of one party's link setup.
type Established = Vec<(PartyId, std::net::TcpStream, Connection)>;
type SetupResult = (PartyId, Result<Established, NetError>);

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
    /// The peers to link with: both others for a three-party run, one for a two-party link.
    peers: Vec<PartyId>,
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
) -> Result<Established, NetError> {
    let deadline = Instant::now() + timeout;
    let me = ep.party;
    let mut tasks = JoinSet::new();
    for peer in higher_peers(me)
        .into_iter()
        .filter(|p| ep.peers.contains(p))
    {
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
    let lower: Vec<PartyId> = lower_peers(me)
        .into_iter()
        .filter(|p| ep.peers.contains(p))
        .collect();
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
            Ok(Ok(v)) => {
                for (peer, stream) in v {
                    links.push(into_parts(peer, stream)?);
                }
            }
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

/// Hands an established stream over to the blocking data path: the TCP socket leaves the
/// Tokio reactor, the rustls state (with anything already buffered) is kept.
fn into_parts(
    peer: PartyId,
    stream: Stream,
) -> Result<(PartyId, std::net::TcpStream, Connection), NetError> {
    let (tcp, conn) = match stream {
        TlsStream::Client(s) => {
            let (io, c) = s.into_inner();
            (io, Connection::Client(c))
        }
        TlsStream::Server(s) => {
            let (io, c) = s.into_inner();
            (io, Connection::Server(c))
        }
    };
    let tcp = tcp
        .into_std()
        .map_err(|e| NetError::io(Some(peer), "detaching the socket", e))?;
    Ok((peer, tcp, conn))
}

/// Establishes the links of `endpoints` on a dedicated thread with its own single-threaded
/// Tokio runtime (so it works whatever runtime the caller may be in). Results arrive on the
/// returned channel as they complete; after the first failure the others are cancelled.
fn run_setups(
    endpoints: Vec<(Endpoint, Option<StdListener>)>,
    timeout: Duration,
) -> Result<mpsc::Receiver<SetupResult>, NetError> {
    let (tx, rx) = mpsc::channel();
    let parties: Vec<PartyId> = endpoints.iter().map(|(ep, _)| ep.party).collect();
    std::thread::Builder::new()
        .name("triskele-net-setup".into())
        .spawn(move || {
            let rt = match tokio::runtime::Builder::new_current_thread()
                .enable_io()
                .enable_time()
                .build()
            {
                Ok(rt) => rt,
                Err(e) => {
                    let msg = e.to_string();
                    for p in parties {
                        let err = std::io::Error::other(msg.clone());
                        let _ = tx.send((p, Err(NetError::io(None, "starting link setup", err))));
                    }
                    return;
                }
            };
            rt.block_on(async move {
                let mut set = JoinSet::new();
                for (ep, listener) in endpoints {
                    let party = ep.party;
                    set.spawn(async move { (party, establish(ep, listener, timeout).await) });
                }
                while let Some(res) = set.join_next().await {
                    let Ok(r) = res else { return };
                    let failed = r.1.is_err();
                    // Returning drops `set`, cancelling the other setups.
                    if tx.send(r).is_err() || failed {
                        return;
                    }
                }
            });
            // Do not wait for stray blocking work (such as a DNS lookup).
            rt.shutdown_background();
        })
        .map_err(|e| NetError::io(None, "starting link setup", e))?;
    Ok(rx)
}

/// Turns established connections into a running [`Network`].
fn finish(me: PartyId, links: Established, opts: &NetOptions) -> Result<Network, NetError> {
    let mut next = None;
    let mut prev = None;
    for (peer, tcp, conn) in links {
        let link = TlsLink::start(me, peer, tcp, conn, opts.max_frame, opts.timeouts.read)?;
        let link = Some(Link::new(peer, LinkIo::Tls(link)));
        if peer == me.next() {
            next = link;
        } else if peer == me.prev() {
            prev = link;
        }
    }
    match (next, prev) {
        (Some(n), Some(p)) => Ok(Network::new(me, n, p, opts.clone())),
        _ => Err(NetError::config(format!(
            "internal: {me} did not end up with links to both neighbours"
        ))),
    }
}

/// Waits for the setup results of `parties` and builds their networks (in the order of
/// `parties`); on the first failure returns it at once.
fn collect(
    parties: &[PartyId],
    results: &mpsc::Receiver<SetupResult>,
    opts: &NetOptions,
) -> Result<Vec<Network>, NetError> {
    parties
        .iter()
        .zip(collect_links(parties, results, opts)?)
        .map(|(p, links)| finish(*p, links, opts))
        .collect()
}

/// Waits for the established connections of `parties` (in the order of `parties`); on the
/// first failure returns it at once.
fn collect_links(
    parties: &[PartyId],
    results: &mpsc::Receiver<SetupResult>,
    opts: &NetOptions,
) -> Result<Vec<Established>, NetError> {
    let wait = opts.timeouts.connect.saturating_add(SETUP_GRACE);
    let mut done: Vec<Option<Established>> = parties.iter().map(|_| None).collect();
    for _ in parties {
        match results.recv_timeout(wait) {
            Ok((party, Ok(links))) => {
                if let Some(i) = parties.iter().position(|p| *p == party) {
                    done[i] = Some(links);
                }
            }
            Ok((_, Err(e))) => return Err(e),
            Err(_) => {
                let missing = parties
                    .iter()
                    .zip(&done)
                    .find(|(_, d)| d.is_none())
                    .map_or(PartyId::P1, |(p, _)| *p);
                return Err(connect_timeout(missing, opts.timeouts.connect, None));
            }
        }
    }
    Ok(done.into_iter().map(Option::unwrap_or_default).collect())
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
        peers: vec![me.next(), me.prev()],
    };
    let rx = run_setups(vec![(ep, listener)], opts.timeouts.connect)?;
    let mut nets = collect(&[me], &rx, opts)?;
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
    let mut endpoints = Vec::with_capacity(3);
    for ((p, identity), listener) in PartyId::ALL.into_iter().zip(identities).zip(listeners) {
        let ep = Endpoint {
            party: p,
            identity,
            certs: certs.clone(),
            addrs: addrs.clone(),
            peers: vec![p.next(), p.prev()],
        };
        endpoints.push((ep, listener));
    }
    let rx = run_setups(endpoints, opts.timeouts.connect)?;
    let nets = collect(&PartyId::ALL, &rx, opts)?;
    nets.try_into()
        .map_err(|_| NetError::config("internal: expected three networks"))
}

/// Turns the established connection of a two-party link into a running [`PeerLink`].
fn finish_pair(me: PartyId, links: Established, opts: &NetOptions) -> Result<PeerLink, NetError> {
    let mut links = links.into_iter();
    match (links.next(), links.next()) {
        (Some((peer, tcp, conn)), None) => {
            let link = TlsLink::start(me, peer, tcp, conn, opts.max_frame, opts.timeouts.read)?;
            Ok(PeerLink::new(
                me,
                Link::new(peer, LinkIo::Tls(link)),
                opts.clone(),
            ))
        }
        _ => Err(NetError::config(format!(
            "internal: {me} did not end up with exactly one link"
        ))),
    }
}

/// A two-party link between P1 and P2 of a configuration (two processes, possibly on two
/// machines; for two-party protocols such as oblivious transfer). The configuration is the
/// three-party one written by [`crate::keygen`]; only the `[p1]` and `[p2]` entries are used
/// and `party_index` must be 1 or 2. P2 listens, P1 connects, with the same TLS 1.3 mutual
/// authentication, hello and timeouts as [`connect`].
pub fn connect_pair(cfg: &PartyConfig, opts: &NetOptions) -> Result<PeerLink, NetError> {
    let me = cfg.party();
    let peer = match me {
        PartyId::P1 => PartyId::P2,
        PartyId::P2 => PartyId::P1,
        PartyId::P3 => {
            return Err(NetError::config(
                "a two-party run uses the [p1] and [p2] entries: party_index must be 1 or 2",
            ))
        }
    };
    let own = cfg.peer(me);
    let listener = if me == PartyId::P2 {
        Some(bind(me, &own.address, own.port)?)
    } else {
        None
    };
    let ep = Endpoint {
        party: me,
        identity: cfg.identity(),
        certs: PartyId::ALL.map(|p| cfg.peer(p).certificate.clone()),
        addrs: PartyId::ALL.map(|p| (cfg.peer(p).address.clone(), cfg.peer(p).port)),
        peers: vec![peer],
    };
    let rx = run_setups(vec![(ep, listener)], opts.timeouts.connect)?;
    let mut links = collect_links(&[me], &rx, opts)?;
    let links = links
        .pop()
        .ok_or_else(|| NetError::config("internal: no link built"))?;
    finish_pair(me, links, opts)
}

/// P1 and P2 in this process, linked over real TLS on 127.0.0.1 with freshly generated
/// certificates and a port chosen by the operating system (tests and local two-party runs).
pub fn local_tls_pair(opts: &NetOptions) -> Result<[PeerLink; 2], NetError> {
    let host = "127.0.0.1".to_string();
    let mut identities = Vec::with_capacity(3);
    for p in PartyId::ALL {
        identities.push(generate_identity(p, &[host.clone(), "localhost".into()])?.identity);
    }
    let l2 = bind(PartyId::P2, &host, 0)?;
    let port = l2
        .local_addr()
        .map_err(|e| NetError::io(None, "reading the local port", e))?
        .port();
    let certs: [CertificateDer<'static>; 3] = [
        identities[0].cert.clone(),
        identities[1].cert.clone(),
        identities[2].cert.clone(),
    ];
    let addrs: [(String, u16); 3] = [(host.clone(), 0), (host.clone(), port), (host, 0)];
    let mut endpoints = Vec::with_capacity(2);
    for ((p, identity), (peer, listener)) in PartyId::ALL
        .into_iter()
        .zip(identities)
        .zip([(PartyId::P2, None), (PartyId::P1, Some(l2))])
    {
        let ep = Endpoint {
            party: p,
            identity,
            certs: certs.clone(),
            addrs: addrs.clone(),
            peers: vec![peer],
        };
        endpoints.push((ep, listener));
    }
    let parties = [PartyId::P1, PartyId::P2];
    let rx = run_setups(endpoints, opts.timeouts.connect)?;
    let links = collect_links(&parties, &rx, opts)?;
    let mut out = parties
        .into_iter()
        .zip(links)
        .map(|(p, l)| finish_pair(p, l, opts));
    match (out.next(), out.next()) {
        (Some(a), Some(b)) => Ok([a?, b?]),
        _ => Err(NetError::config("internal: expected two links")),
    }
}
