//! OT extension: millions of random OTs from 128 base random OTs.
//!
//! [`iknp`] implements IKNP (Ishai, Kilian, Nissim, Petrank, CRYPTO 2003)
//! with random outputs: the base OTs run with roles reversed (the extension
//! sender is the base receiver, so the base choice bits become its secret
//! `s`), the extension receiver stretches its base keys with AES-128 in
//! counter mode, the matrix is transposed in 128 x 128 bit tiles, and the
//! rows are hashed with a fixed-key AES correlation-robust hash. Plain IKNP
//! is secure against a semi-honest receiver; with
//! [`ConsistencyCheck::Kos`] (the KOS15 check, Fiat-Shamir challenges) it is
//! secure against a malicious receiver, assuming a secure base OT.
//!
//! [`softspoken`] implements SoftSpokenOT (Roy 2022) on the same base OTs
//! and output stage: `128/k - 1` bits of communication per OT instead of
//! 128; semi-honest, or secure against a malicious receiver with
//! [`ConsistencyCheck::SoftSpoken`], the paper's row-wise check (which IKNP
//! accepts too).

pub(crate) mod gf128;
pub mod iknp;
pub mod softspoken;
pub(crate) mod transpose;

pub use iknp::{ConsistencyCheck, IknpReceiver, IknpSender};
pub use softspoken::{SoftSpokenReceiver, SoftSpokenSender};
