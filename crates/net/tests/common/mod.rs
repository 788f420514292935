//! Helpers shared by the integration tests.
#![allow(dead_code, clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::net::TcpListener;
use std::thread;
use std::time::Duration;

use triskele_net::{
    DirStats, Direction, NetOptions, Network, PartyId, Phase, PhaseStats, Timeouts,
};

/// Options with short timeouts, so failure tests finish quickly.
pub fn short_opts(read_ms: u64, connect_ms: u64) -> NetOptions {
    NetOptions {
        timeouts: Timeouts {
            connect: Duration::from_millis(connect_ms),
            read: Duration::from_millis(read_ms),
        },
        ..NetOptions::default()
    }
}

/// Runs `f` for each party on its own thread and returns the results in party order.
pub fn run_parties<T, F>(nets: [Network; 3], f: F) -> [T; 3]
where
    T: Send,
    F: Fn(Network) -> T + Sync,
{
    thread::scope(|s| {
        let handles = nets.map(|n| {
            let f = &f;
            s.spawn(move || f(n))
        });
        handles.map(|h| h.join().expect("party thread panicked"))
    })
}

/// Deterministic payload sent by `from` in direction `dir` in round `round`.
pub fn payload(from: PartyId, dir: Direction, round: usize, len: usize) -> Vec<u8> {
    let tag = from.number() as usize * 31 + round * 7 + if dir == Direction::Next { 1 } else { 2 };
    (0..len)
        .map(|i| (i.wrapping_mul(131) ^ tag) as u8)
        .collect()
}

/// Message sizes of the ring workload in the online phase.
pub const ONLINE_SIZES: [usize; 4] = [1, 0, 20 * 1024 * 1024, 1000];
/// Message sizes in the finalize phase.
pub const FINALIZE_SIZES: [usize; 2] = [64, 3];

/// One round: send to both neighbours, then receive from both and check the contents.
pub fn round(net: &mut Network, r: usize, len: usize) {
    let me = net.party();
    net.send(Direction::Next, payload(me, Direction::Next, r, len))
        .unwrap();
    net.send(Direction::Prev, payload(me, Direction::Prev, r, len))
        .unwrap();
    let from_prev = net.recv(Direction::Prev).unwrap();
    assert_eq!(
        from_prev,
        payload(me.prev(), Direction::Next, r, len),
        "{me} round {r} from prev"
    );
    let from_next = net.recv(Direction::Next).unwrap();
    assert_eq!(
        from_next,
        payload(me.next(), Direction::Prev, r, len),
        "{me} round {r} from next"
    );
}

/// The ring workload: online rounds with large messages in both directions at once, then
/// finalize rounds. Returns the network for further use.
pub fn ring_workload(mut net: Network) -> Network {
    net.set_phase(Phase::Online);
    for (r, &len) in ONLINE_SIZES.iter().enumerate() {
        round(&mut net, r, len);
    }
    net.set_phase(Phase::Finalize);
    assert_eq!(net.phase(), Phase::Finalize);
    for (r, &len) in FINALIZE_SIZES.iter().enumerate() {
        round(&mut net, 100 + r, len);
    }
    net
}

fn expected(sizes: &[usize]) -> PhaseStats {
    let bytes: u64 = sizes.iter().map(|&s| s as u64).sum();
    let d = DirStats {
        bytes_sent: bytes,
        bytes_received: bytes,
        messages: 2 * sizes.len() as u64,
    };
    PhaseStats { next: d, prev: d }
}

/// Checks the counters after [`ring_workload`].
pub fn check_workload_stats(net: &Network) {
    let s = net.stats();
    assert_eq!(
        s.get(Phase::Online),
        expected(&ONLINE_SIZES),
        "{}",
        net.party()
    );
    assert_eq!(
        s.get(Phase::Finalize),
        expected(&FINALIZE_SIZES),
        "{}",
        net.party()
    );
    assert_eq!(s.get(Phase::Preprocessing), PhaseStats::default());
    assert_eq!(s.get(Phase::Setup), PhaseStats::default());
    assert_eq!(s.get(Phase::Output), PhaseStats::default());
}

/// Three free TCP ports on 127.0.0.1 (bound to port 0, then released), none handed out
/// before in this process: the tests of one binary run in parallel, and a port that one test
/// released and the system gave to another would join their deployments (a test that expects
/// an absent peer then met another test's party, with another certificate).
pub fn free_ports() -> [u16; 3] {
    use std::collections::HashSet;
    use std::sync::Mutex;
    static GIVEN: Mutex<Option<HashSet<u16>>> = Mutex::new(None);
    let mut given = GIVEN.lock().unwrap();
    let given = given.get_or_insert_with(HashSet::new);
    let mut out = Vec::with_capacity(3);
    // Listeners are kept until all three ports are chosen, so the three differ.
    let mut held = Vec::new();
    while out.len() < 3 {
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = l.local_addr().unwrap().port();
        if given.insert(port) {
            out.push(port);
        }
        held.push(l);
    }
    [out[0], out[1], out[2]]
}

pub fn hosts(ports: [u16; 3]) -> [(String, u16); 3] {
    ports.map(|p| ("127.0.0.1".to_string(), p))
}
