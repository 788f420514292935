//! Two-party links between P1 and P2 ([`connect_pair`], [`local_tls_pair`]).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use std::thread;

use common::*;
use triskele_net::{
    connect_pair, keygen, local_tls_pair, NetError, PartyConfig, PartyId, PeerLink,
};

/// Both directions at once, large and empty messages, then a clean shutdown.
fn exchange(mut link: PeerLink) -> Result<PeerLink, NetError> {
    let me = link.party().number();
    for len in [0usize, 1, 1 << 20] {
        link.send(vec![me; len])?;
        let got = link.recv()?;
        assert_eq!(got.len(), len);
        assert!(got.iter().all(|b| *b == link.peer().number()));
    }
    Ok(link)
}

#[test]
fn local_pair_exchanges_messages_and_counts_bytes() {
    let [a, b] = local_tls_pair(&short_opts(5_000, 5_000)).unwrap();
    assert_eq!((a.party(), a.peer()), (PartyId::P1, PartyId::P2));
    assert_eq!((b.party(), b.peer()), (PartyId::P2, PartyId::P1));
    let (a, b) = thread::scope(|s| {
        let h = s.spawn(|| exchange(b));
        (exchange(a).unwrap(), h.join().unwrap().unwrap())
    });
    for l in [&a, &b] {
        let st = l.stats();
        assert_eq!(st.bytes_sent, 1 + (1 << 20));
        assert_eq!(st.bytes_received, 1 + (1 << 20));
        assert_eq!(st.messages, 6);
    }
    a.shutdown().unwrap();
    b.shutdown().unwrap();
}

#[test]
fn oversized_frames_and_stalled_peers_are_errors() {
    let mut opts = short_opts(300, 5_000);
    opts.max_frame = 1000;
    let [mut a, b] = local_tls_pair(&opts).unwrap();
    assert!(matches!(
        a.send(vec![0; 1001]),
        Err(NetError::FrameTooLarge { .. })
    ));
    // b never sends: a's receive times out instead of hanging.
    let err = a.recv().unwrap_err();
    assert!(err.is_timeout(), "{err}");
    drop(b);
}

/// keygen's three-party configuration, used by P1 and P2 as two processes would.
#[test]
fn configured_pair_connects_and_p3_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let paths = keygen(dir.path(), &hosts(free_ports())).unwrap();
    let opts = short_opts(5_000, 5_000);
    let cfg3 = PartyConfig::from_toml_file(&paths[2]).unwrap();
    let err = connect_pair(&cfg3, &opts).unwrap_err();
    assert!(
        err.is_config() && err.to_string().contains("party_index"),
        "{err}"
    );
    let links: Vec<PeerLink> = thread::scope(|s| {
        let hs: Vec<_> = paths[..2]
            .iter()
            .map(|p| {
                let opts = &opts;
                s.spawn(move || {
                    let cfg = PartyConfig::from_toml_file(p)?;
                    exchange(connect_pair(&cfg, opts)?)
                })
            })
            .collect();
        hs.into_iter().map(|h| h.join().unwrap().unwrap()).collect()
    });
    for l in links {
        l.shutdown().unwrap();
    }
}
