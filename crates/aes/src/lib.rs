//! Oblivious AES-128/256 on replicated secret shares (PROTOCOLS.md §3, §4).
//!
//! The AES layer ([`cipher`], [`layer`]) is written once over the [`sbox::SboxProtocol`] trait;
//! each S-box protocol family lives in its own module under [`sbox`]. [`run`] holds one
//! party's side of a benchmark repetition and of a one-shot computation, used by the CLI.
//!
//! Security: the semi-honest protocols give privacy of key, inputs and outputs against one
//! party that follows the protocol. The malicious variants (`mal-*`, e.g.
//! [`sbox::mal_chida`]) add security with abort against one actively corrupt party: the same
//! online arithmetic with recorded products, deferred checks in the finalize phase, and outputs
//! released only after a compare-view ([`aes_tamper`] makes one party cheat, for tests and
//! demonstrations). Round keys are zeroized when dropped.

pub mod cipher;
pub mod layer;
pub mod run;
pub mod sbox;
pub mod target;

pub use cipher::{decrypt, encrypt, key_schedule, KeySize, Mode, RoundKeys};
pub use run::{aes_tamper, bench_party, compute_party, PhaseMeasure, RunReport};
pub use target::{Target, TargetError};
