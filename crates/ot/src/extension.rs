//! OT extension: millions of random OTs from 128 base random OTs.
//!
//! [`iknp`] implements IKNP (Ishai, Kilian, Nissim, Petrank, CRYPTO 2003)
//! with random outputs: the base OTs run with roles reversed (the extension
//! sender is the base receiver, so the base choice bits become its secret
//! `s`), the extension receiver stretches its base keys with AES-128 in
//! counter mode, the matrix is transposed in 128 x 128 bit tiles, and the
//! rows are hashed with a fixed-key AES correlation-robust hash. Security:
//! semi-honest (no KOS consistency check yet), assuming the base OT is secure.

pub mod iknp;
pub(crate) mod transpose;

pub use iknp::{IknpReceiver, IknpSender};
