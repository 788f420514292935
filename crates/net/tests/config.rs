//! Configuration files, key generation, and runs from configuration files.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use std::fs;
use std::path::{Path, PathBuf};
use std::thread;

use common::*;
use triskele_net::{connect, keygen, Direction, NetError, PartyConfig, PartyId};

fn config_message(r: Result<PartyConfig, NetError>) -> String {
    match r {
        Err(NetError::Config { message }) => message,
        Err(other) => panic!("expected a Config error, got {other:?}"),
        Ok(cfg) => panic!("expected a Config error, got {cfg:?}"),
    }
}

/// A deployment in a fresh temporary directory.
fn deployment(ports: [u16; 3]) -> (tempfile::TempDir, [PathBuf; 3]) {
    let dir = tempfile::tempdir().unwrap();
    let paths = keygen(dir.path(), &hosts(ports)).unwrap();
    (dir, paths)
}

fn edit(path: &Path, from: &str, to: &str) {
    let text = fs::read_to_string(path).unwrap();
    assert!(text.contains(from), "{from:?} not in {text}");
    fs::write(path, text.replacen(from, to, 1)).unwrap();
}

#[test]
fn keygen_writes_parseable_configs() {
    let (dir, paths) = deployment([9001, 9002, 9003]);
    for (p, path) in PartyId::ALL.into_iter().zip(&paths) {
        assert_eq!(path, &dir.path().join(format!("p{}.toml", p.number())));
        let cfg = PartyConfig::from_toml_file(path).unwrap();
        assert_eq!(cfg.party(), p);
        for q in PartyId::ALL {
            assert_eq!(cfg.peer(q).address, "127.0.0.1");
            assert_eq!(cfg.peer(q).port, 9000 + u16::from(q.number()));
        }
        let text = fs::read_to_string(path).unwrap();
        assert!(
            text.starts_with(&format!("party_index = {}", p.number())),
            "{text}"
        );
        // Only the own key is referenced.
        assert_eq!(text.matches("private_key").count(), 1, "{text}");
        assert!(!format!("{cfg:?}").contains("PRIVATE"));
    }
    // All three parties agree on the certificates.
    let cfgs = paths.map(|p| PartyConfig::from_toml_file(&p).unwrap());
    for q in PartyId::ALL {
        assert_eq!(cfgs[0].peer(q), cfgs[1].peer(q));
        assert_eq!(cfgs[1].peer(q), cfgs[2].peer(q));
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        for n in 1..=3 {
            let mode = fs::metadata(dir.path().join(format!("p{n}.key")))
                .unwrap()
                .permissions()
                .mode();
            assert_eq!(mode & 0o777, 0o600);
        }
    }
}

#[test]
fn relative_paths_resolve_against_the_base_dir() {
    let (dir, paths) = deployment([9001, 9002, 9003]);
    let text = fs::read_to_string(&paths[1]).unwrap();
    let cfg = PartyConfig::from_toml_str(&text, dir.path()).unwrap();
    assert_eq!(cfg.party(), PartyId::P2);
    // Against the wrong directory the certificate is not found, and the error says which.
    let other = tempfile::tempdir().unwrap();
    let msg = config_message(PartyConfig::from_toml_str(&text, other.path()));
    assert!(
        msg.contains("certificate of P1") && msg.contains("p1.pem"),
        "{msg}"
    );
}

#[test]
fn missing_field_is_reported() {
    let (_dir, paths) = deployment([9001, 9002, 9003]);
    edit(&paths[0], "port = 9002\n", "");
    let msg = config_message(PartyConfig::from_toml_file(&paths[0]));
    assert!(
        msg.contains("missing field") && msg.contains("port"),
        "{msg}"
    );
    assert!(msg.contains("p1.toml"), "{msg}");
}

#[test]
fn bad_party_index_is_reported() {
    let (_dir, paths) = deployment([9001, 9002, 9003]);
    edit(&paths[0], "party_index = 1", "party_index = 4");
    let msg = config_message(PartyConfig::from_toml_file(&paths[0]));
    assert!(
        msg.contains("party_index must be 1, 2 or 3, found 4"),
        "{msg}"
    );
    edit(&paths[0], "party_index = 4", "party_index = \"one\"");
    let msg = config_message(PartyConfig::from_toml_file(&paths[0]));
    assert!(msg.contains("party_index"), "{msg}");
}

#[test]
fn missing_key_file_is_reported() {
    let (dir, paths) = deployment([9001, 9002, 9003]);
    fs::remove_file(dir.path().join("p3.key")).unwrap();
    let msg = config_message(PartyConfig::from_toml_file(&paths[2]));
    assert!(
        msg.contains("private key of P3") && msg.contains("p3.key"),
        "{msg}"
    );
    // The other parties do not need P3's key.
    PartyConfig::from_toml_file(&paths[0]).unwrap();
}

#[test]
fn missing_own_private_key_entry_is_reported() {
    let (_dir, paths) = deployment([9001, 9002, 9003]);
    edit(&paths[1], "private_key = \"p2.key\"\n", "");
    let msg = config_message(PartyConfig::from_toml_file(&paths[1]));
    assert!(msg.contains("[p2] private_key is required"), "{msg}");
}

#[test]
fn other_malformed_configs_are_reported() {
    let (dir, paths) = deployment([9001, 9002, 9003]);
    let good = fs::read_to_string(&paths[0]).unwrap();
    let cases: [(&str, &str, &str); 6] = [
        (
            "port = 9002",
            "port = 70000",
            "port must be between 1 and 65535",
        ),
        (
            "port = 9002",
            "port = 0",
            "port must be between 1 and 65535",
        ),
        ("[p3]", "[p3]\ncolour = \"blue\"", "unknown field"),
        ("[p2]", "[p2", "malformed configuration"),
        (
            "certificate = \"p1.pem\"",
            "certificate = \"p1.key\"",
            "no certificate",
        ),
        // P1's key does not belong to P1's certificate.
        (
            "private_key = \"p1.key\"",
            "private_key = \"p2.key\"",
            "does not belong",
        ),
    ];
    for (from, to, want) in cases {
        let text = good.replacen(from, to, 1);
        let msg = config_message(PartyConfig::from_toml_str(&text, dir.path()));
        assert!(msg.contains(want), "{to}: {msg}");
    }
    let dup = good.replacen("certificate = \"p3.pem\"", "certificate = \"p2.pem\"", 1);
    let msg = config_message(PartyConfig::from_toml_str(&dup, dir.path()));
    assert!(msg.contains("same certificate"), "{msg}");
    let msg = config_message(PartyConfig::from_toml_file(&dir.path().join("nope.toml")));
    assert!(msg.contains("cannot read configuration file"), "{msg}");
}

#[test]
fn keygen_rejects_bad_hosts() {
    let dir = tempfile::tempdir().unwrap();
    let mut h = hosts([1, 2, 3]);
    h[1].0 = String::new();
    assert!(keygen(dir.path(), &h).unwrap_err().is_config());
    let mut h = hosts([1, 2, 3]);
    h[2].1 = 0;
    assert!(keygen(dir.path(), &h).unwrap_err().is_config());
}

/// keygen, then three parties connect from their configuration files and exchange messages.
#[test]
fn keygen_round_trip_run() {
    let (_dir, paths) = deployment(free_ports());
    let opts = short_opts(5_000, 5_000);
    let results: Vec<_> = thread::scope(|s| {
        let handles: Vec<_> = paths
            .iter()
            .map(|path| {
                let opts = &opts;
                s.spawn(move || {
                    let cfg = PartyConfig::from_toml_file(path)?;
                    let mut net = connect(&cfg, opts)?;
                    round(&mut net, 0, 12345);
                    let me = net.party();
                    net.send(Direction::Next, vec![me.number()])?;
                    let got = net.recv(Direction::Prev)?;
                    net.shutdown()?;
                    Ok::<_, NetError>((me, got))
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    for (p, r) in PartyId::ALL.into_iter().zip(results) {
        let (me, got) = r.unwrap();
        assert_eq!(me, p);
        assert_eq!(got, vec![p.prev().number()]);
    }
}
