//! Certificate pinning and misconfiguration over real TLS.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use std::fs;
use std::path::PathBuf;
use std::thread;
use std::time::{Duration, Instant};

use common::*;
use triskele_net::{connect, keygen, Direction, NetError, PartyConfig, PartyId};

/// Runs `connect` for the three configurations in parallel.
fn connect_all(paths: &[PathBuf; 3], connect_ms: u64) -> Vec<Result<(), NetError>> {
    let opts = short_opts(2_000, connect_ms);
    thread::scope(|s| {
        let handles: Vec<_> = paths
            .iter()
            .map(|path| {
                let opts = &opts;
                s.spawn(move || {
                    let cfg = PartyConfig::from_toml_file(path)?;
                    // A party whose own links came up fails at its first receive.
                    let mut net = connect(&cfg, opts)?;
                    net.recv(Direction::Next).map(drop)
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    })
}

/// Two independent deployments on the same ports: `a` is used, `b` supplies wrong certificates.
fn two_deployments() -> (tempfile::TempDir, [PathBuf; 3], tempfile::TempDir) {
    let h = hosts(free_ports());
    let a = tempfile::tempdir().unwrap();
    let b = tempfile::tempdir().unwrap();
    let paths = keygen(a.path(), &h).unwrap();
    keygen(b.path(), &h).unwrap();
    (a, paths, b)
}

fn point_cert_elsewhere(config: &PathBuf, party: u8, pem: &std::path::Path) {
    let text = fs::read_to_string(config).unwrap();
    let from = format!("certificate = \"p{party}.pem\"");
    let to = format!("certificate = {:?}", pem.to_str().unwrap());
    assert!(text.contains(&from));
    fs::write(config, text.replacen(&from, &to, 1)).unwrap();
}

fn expect_cert_error(r: &Result<(), NetError>, peer: Option<PartyId>, what: &str) {
    match r {
        Err(NetError::Certificate { peer: p, reason }) => {
            assert_eq!(*p, peer, "{reason}");
            assert!(reason.contains(what), "{reason}");
        }
        other => panic!("expected a certificate error ({what}), got {other:?}"),
    }
}

/// P2 presents a certificate that P1 does not have configured for P2: P1 refuses it, and P2
/// learns that P1 refused its certificate.
#[test]
fn server_with_wrong_certificate_is_refused() {
    let (_a, paths, b) = two_deployments();
    point_cert_elsewhere(&paths[0], 2, &b.path().join("p2.pem"));
    let t = Instant::now();
    let r = connect_all(&paths, 1_500);
    expect_cert_error(&r[0], Some(PartyId::P2), "not the one configured for P2");
    expect_cert_error(&r[1], Some(PartyId::P1), "refused our certificate");
    assert!(r[2].is_err(), "P3 must fail too: {:?}", r[2]);
    assert!(t.elapsed() < Duration::from_secs(5));
    for e in r.iter().flat_map(|r| r.as_ref().err()) {
        assert_eq!(e.exit_code(), 2);
    }
}

/// P1 presents a certificate that P2 does not have configured for P1: P2 refuses it, and P1
/// learns that P2 refused its certificate.
#[test]
fn client_with_wrong_certificate_is_refused() {
    let (_a, paths, b) = two_deployments();
    point_cert_elsewhere(&paths[1], 1, &b.path().join("p1.pem"));
    let r = connect_all(&paths, 1_500);
    expect_cert_error(&r[1], Some(PartyId::P1), "not the one configured for P1");
    expect_cert_error(&r[0], Some(PartyId::P2), "refused our certificate");
    assert!(r[2].is_err(), "P3 must fail too: {:?}", r[2]);
}

/// P1's configuration swaps the addresses of P2 and P3 (and their certificates, so TLS
/// succeeds): the hello exposes the mix-up.
#[test]
fn swapped_tables_fail_at_hello() {
    let (_a, paths, _b) = two_deployments();
    let text = fs::read_to_string(&paths[0]).unwrap();
    let swapped = text
        .replace("[p2]", "[tmp]")
        .replace("[p3]", "[p2]")
        .replace("[tmp]", "[p3]");
    fs::write(&paths[0], swapped).unwrap();
    let r = connect_all(&paths, 1_500);
    let protocol_errors = r
        .iter()
        .filter(|r| matches!(r, Err(NetError::Protocol { .. })))
        .count();
    assert!(protocol_errors >= 1, "{r:?}");
    assert!(r.iter().all(|r| r.is_err()), "{r:?}");
}

/// Nobody is listening: connect retries, then times out naming the peer and the last error.
#[test]
fn connect_times_out_when_peer_is_absent() {
    let dir = tempfile::tempdir().unwrap();
    let paths = keygen(dir.path(), &hosts(free_ports())).unwrap();
    let cfg = PartyConfig::from_toml_file(&paths[0]).unwrap();
    let t = Instant::now();
    let err = connect(&cfg, &short_opts(1_000, 600)).unwrap_err();
    assert!(
        t.elapsed() >= Duration::from_millis(600),
        "{err} after {:?}",
        t.elapsed()
    );
    assert!(t.elapsed() < Duration::from_secs(4));
    assert!(err.is_timeout(), "{err}");
    let msg = err.to_string();
    assert!(
        msg.contains("link with P2") || msg.contains("link with P3"),
        "{msg}"
    );
    assert!(msg.contains("last error"), "{msg}");
}

/// A port already in use gives an I/O error naming the port, not a panic.
#[test]
fn listen_port_in_use() {
    let dir = tempfile::tempdir().unwrap();
    let busy = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let mut ports = free_ports();
    ports[2] = busy.local_addr().unwrap().port();
    let paths = keygen(dir.path(), &hosts(ports)).unwrap();
    let cfg = PartyConfig::from_toml_file(&paths[2]).unwrap();
    let err = connect(&cfg, &short_opts(1_000, 500)).unwrap_err();
    let msg = err.to_string();
    assert!(
        matches!(err, NetError::Io { .. }) && msg.contains(&ports[2].to_string()),
        "{msg}"
    );
}
