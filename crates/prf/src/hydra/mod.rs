//! Hydra (Grassi, Khovratovich, Lüftenegger, Rechberger, Schofnegger, Walch, "From Farfalle
//! to Megafono via Ciminion: The PRF Hydra for MPC Applications", Eurocrypt 2023, ePrint
//! 2022/342): a keyed stream construction over `F_p` for MPC, in the cleartext
//! ([`Hydra::keystream`], [`keystream`]) and on replicated shares ([`Hydra::keystream_mpc`],
//! [`keystream_mpc`]).
//!
//! # The construction
//!
//! Key `K = (K_1..K_4)`, nonce `N`, IV `(IV_1, IV_2, IV_3)`, all in `F_p`. No key schedule.
//!
//! * **Body** on 4 words: `x = M_E ((N, IV) + K)`, then `R_E1 = 2` external rounds, `R_I = 42`
//!   internal rounds and `R_E2 = 4` external rounds, each followed by its matrix and round
//!   constant. External: `x_i -> x_i^3` on every word, then `M_E = circ(3, 2, 1, 1)`.
//!   Internal: with `a = x_1 - x_2 + x_3 - x_4`, `b = x_1 + x_2 - x_3 - x_4`, every word gets
//!   `+ (a^2 + b)^2`, then `M_I`. Output `y = state + K` and `z` = the sum of the states after
//!   every round but the last.
//! * **Heads**: 8 words `(K, M_E K)` are the heads' key. Head `0` starts from `(y, z)`, head `j`
//!   from the state rolled `j` times. A head call has `R_H = 39` rounds: every word gets
//!   `+ (s_1 + .. + s_4 - s_5 - .. - s_8)^2`, then `M_H`, the round constant and the heads'
//!   key; the call's input is added to its output (feed-forward), giving 8 keystream words.
//! * **Rolling function** on `(y, z)`: `y += a(y) b(z)`, `z += b(y) a(z)` (the same signed sums
//!   as the internal rounds), then `M_I` on each half and a rolling constant.
//!
//! # The instance for `p = 2^127 + 45` and where it comes from
//!
//! Everything follows the designers' reference implementation, the Sage class `Hydra(p, t,
//! kappa)` of the IAIK `hydra` repository (read in the copy
//! `ConstantlyRecompiling/symmetric-key-threshold`, file `hydra.sage`, commit `c1bf9f2b`; the
//! body round constants of TaceoLabs' `noir-hydra` for BN254 come out of the same SHAKE128
//! derivation, while its BN254 matrices are small fixed ones):
//!
//! * `kappa = 128`, `d = 3` (the smallest `d >= 3` with `gcd(d, p - 1) = 1`); rounds
//!   `R_E1 = 2`, `R_E2 = 4`, `R_I = 42`, `R_H = 39` from the paper's formulas (recomputed in
//!   the tests);
//! * `M_E = circ(3, 2, 1, 1)`;
//! * `M_I` and `M_H` drawn from the SHAKE128 stream tagged `"Matrices"` ([`params`]) as
//!   all-ones matrices whose entries `M[0][0]`, `M[i][0]`, `M[i][i]` are non-zero stream
//!   elements, retrying until the matrix is invertible, `M^i` has an irreducible
//!   characteristic (= minimal) polynomial for `i = 1, ..., 2n - 1`, and the sign vectors of
//!   the non-linear layers satisfy the reference's two non-degeneracy sums (`M_I` for both
//!   `(1, -1, 1, -1)` and `(1, 1, -1, -1)`, `M_H` for `(1, 1, 1, 1, -1, -1, -1, -1)`);
//! * body then head round constants from the stream tagged `"Constants"`, rolling constants
//!   from the stream tagged `"Rolling"` (constant `j - 1` before head `j`).
//!
//! Each stream is SHAKE128 over `"Hydra" || tag || p` (two 64-bit little-endian limbs); an
//! element is 16 squeezed bytes read little-endian, rejected if `>= p`. The matrices are
//! derived in code, not stored; the tests pin a few entries and keystreams.
//!
//! # MPC evaluation and its cost
//!
//! All non-linear operations are products of two shared values, so they run on the engine's
//! multiplication ([`triskele_engine::Party::mul`], one element to the previous party per
//! product, one round per layer); everything else is local. Many instances (lanes) go through
//! each layer together. Per instance: 171 products for the first 8 words, 41 for each further
//! 8 ([`Cost`]); 135 rounds for up to 8 words, one more per further head, independent of the
//! number of instances.
//!
//! # Security model
//!
//! Semi-honest with [`triskele_engine::SemiHonest`]; with abort in the malicious model
//! (PRF.md, "Malicious security over F_p"): every product is recorded as a triple, and the
//! caller must run [`triskele_engine::Party::verify_recorded`] before opening any output with
//! [`triskele_engine::Party::open_output`] (the opening is then followed by a compare-view).
//! Nothing here opens a value.

mod clear;
mod mpc;
pub mod params;
mod poly;

pub use clear::{keystream, reference};
pub use mpc::keystream_mpc;
pub use params::{Cost, Hydra, Matrix};
