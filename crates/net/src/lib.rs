//! Authenticated channels between the three Triskele parties.
//!
//! Each party P_i holds one [`Network`]: a link to *next* (P_{i+1}) and a link to *prev*
//! (P_{i-1}). The engine is synchronous: [`Network::send`] queues a message and returns at
//! once (so a ring of parties that all send before they receive never deadlocks, whatever
//! the message size), [`Network::recv`] blocks until a whole message has arrived or the read
//! timeout expires. Messages are counted per [`Phase`] and direction in [`CommStats`]
//! (payload bytes only; `messages` = sends + receives).
//!
//! Transports:
//! - [`in_memory`]: three parties in one process over channels, for deterministic tests.
//! - [`local_tls`]: three parties in one process over TLS on 127.0.0.1, ephemeral
//!   certificates, ports chosen by the OS (`bench --local`).
//! - [`connect`]: one party from a [`PartyConfig`] file, for multi-process and
//!   multi-machine runs; [`keygen`] writes a matching set of configurations and keys.
//! - [`connect_pair`], [`local_tls_pair`]: a single [`PeerLink`] between P1 and P2, for
//!   two-party protocols (oblivious transfer), with the same TLS, framing and timeouts.
//!
//! Optionally a [`SimNet`] adds latency and a bandwidth cap to every link, and a [`Tamper`]
//! makes one party flip one bit of one message it sends (a cheating party, for tests).
//!
//! # Threads and latency
//!
//! Link setup (connect with retries, accept, TLS handshake, hello) runs on a short-lived
//! Tokio runtime; the data path then uses plain blocking sockets with `TCP_NODELAY`.
//! [`Network::recv`] reads and decrypts on the calling thread, so the kernel wakes the
//! engine directly. [`Network::send`] writes a small message on the calling thread when the
//! link is idle and the socket takes it at once; otherwise (large messages, a busy link, a
//! full socket buffer, simulation) the message goes in order through an unbounded queue to
//! the link's writer thread. No polling loops or timers are on the fast path.
//!
//! # Security model of the channels
//!
//! - TLS 1.3 only, rustls with the *ring* provider (selected explicitly, independent of
//!   any process-wide default), mutual authentication.
//! - Identity is the certificate: each party's configuration lists the exact certificate
//!   of every party. A peer is accepted only if the end-entity certificate it presents is
//!   byte-for-byte the configured one and it proves possession of the key (handshake
//!   signature). There is no CA, host-name or expiry check; the configuration files are
//!   the trust anchor and must be distributed authentically. A wrong certificate is
//!   refused with [`NetError::Certificate`] on both sides where TLS allows it.
//! - After the handshake the parties exchange a hello naming sender and receiver, so a
//!   mixed-up configuration fails with [`NetError::Protocol`] before any protocol data.
//! - The channels give confidentiality, integrity and ordering of messages between honest
//!   parties; they do not protect against a corrupt *party*, which the protocols handle.
//! - Input from the network is untrusted: frames larger than
//!   [`NetOptions::max_frame`] are refused without allocating them, truncated frames and
//!   disconnects are errors, and a stalled peer makes [`Network::recv`] fail after the
//!   read timeout. No path panics on peer input. Every [`NetError`] maps to exit code 2.
//! - Private keys are never logged or printed (`Debug` elides them). Key files written by
//!   [`keygen`] are mode 0600 on Unix.
//!
//! # Framing
//!
//! Each message is a little-endian `u32` payload length followed by the payload
//! ([`frame::FrameDecoder`], [`frame::read_frame`]).

mod config;
mod connect;
mod error;
pub mod frame;
mod network;
mod stats;
mod tamper;
mod tls;
mod tls_link;

pub use config::{keygen, PartyConfig, PeerConfig};
pub use connect::{connect, connect_pair, local_tls, local_tls_pair};
pub use error::{NetError, Waiting};
pub use network::{in_memory, NetOptions, Network, PeerLink, SimNet, Timeouts, DEFAULT_MAX_FRAME};
pub use stats::{CommStats, DirStats, Phase, PhaseStats};
pub use tamper::{Tamper, TamperLog, Tampered};
pub use triskele_share::{Direction, PartyId};
