//! MPC-friendly PRFs on Triskele's three-party engine over a prime field (PRF.md).

pub mod clear;
pub mod hydra;
pub mod legendre;
pub mod local;
pub mod mimc;
pub mod nr;
pub mod ops;
pub mod prep;
pub mod run;
pub mod target;

pub use run::{bench_party, compute_party, nr_compute_party, prf_tamper, PrfJob, PrfReport};
pub use target::{PrfTarget, PrfTargetError};
