//! The Naor-Reingold PRF over Ristretto255, evaluated by three parties on a replicated key.
//!
//! `F(k, x) = g^(k_0 · Π_{i: x_i = 1} k_i)` with `g` the Ristretto255 basepoint, key elements
//! `k_0, ..., k_n` in `Z_ℓ` (the prime group order, [`RistrettoScalar`]) and an `n`-bit input
//! (`n` = [`DEFAULT_INPUT_BITS`] = 128 by default; `n` is the key length minus one). Naor and
//! Reingold (FOCS 1997); the MPC evaluation follows the CCS 2016 slides of Grassi, Rechberger,
//! Rotaru, Scholl and Smart (PRF.md, "Naor-Reingold"), on Triskele's honest-majority replicated
//! engine instead of SPDZ.
//!
//! # Model
//!
//! - **Key**: replicated shares `[k_0], ..., [k_n]` over `Z_ℓ` (an [`RssVec`] of length
//!   `n + 1`, e.g. dealt with `triskele_share::deal`).
//! - **Input**: public. Every party is given the same bits `x_1..x_n` (as in the slides, where
//!   the NR input is public); [`input_from_u128`] maps an integer to bits, least significant
//!   first. The parties must agree on the inputs: different inputs give different message
//!   sizes (an error) or a wrong output. Secret-shared inputs are not supported.
//! - **Output**: public, the 32-byte compressed Ristretto encoding of `F(k, x)`, learnt by all
//!   three parties.
//! - **Security**: semi-honest, one corrupt party (the multiplications are the engine's
//!   semi-honest ones via [`Party::mul_covered`]; nothing is recorded or verified, so there is
//!   no malicious variant). The output step alone tolerates an actively corrupt publisher, see
//!   below.
//!
//! # Protocol
//!
//! 1. **Exponent** ([`nr_exponent`]): the factors of evaluation `j` are `[k_0]` and `[k_i]` for
//!    each `x_i = 1` (the input is public, so unset bits cost nothing). They are multiplied by a
//!    balanced tree: at each level adjacent factors are paired and an odd last factor is carried
//!    up, so `m = 1 + w` factors (`w` = Hamming weight of `x`) take `⌈log2 m⌉` levels and `w`
//!    multiplications. All evaluations' products of one level go into one
//!    [`Party::mul_covered`] call (Araki et al.: local 3-of-3 product plus zero-share, reshared to
//!    `P_{i-1}`), so a batch takes `max_j ⌈log2(1 + w_j)⌉ <= ⌈log2(n + 1)⌉` rounds (8 for
//!    `n = 128`) whatever its size.
//! 2. **Publication** ([`nr_publish`]): with `[e] = (e_1, e_2, e_3)`, `P_i` holding
//!    `(e_i, e_{i+1})`, `P_i` computes `g^(e_i)` and `g^(e_{i+1})` (constant-time fixed-base
//!    multiplication) and sends `g^(e_i)` to `P_{i+1}` and `g^(e_{i+1})` to `P_{i-1}`, as 32-byte
//!    compressed points. So `P_i` receives `g^(e_{i-1})`, the point of the one component it
//!    lacks, from both holders of that component (`P_{i-1}` and `P_{i+1}`); it compares the two
//!    copies byte for byte (Ristretto encodings are canonical) and aborts with
//!    [`AbortReason::ViewMismatch`](triskele_engine::AbortReason::ViewMismatch) (naming
//!    `P_{i-1}`; it cannot tell which copy is wrong) on a mismatch, after sending the engine's
//!    abort notice to both neighbours. Otherwise its output is
//!    `g^(e_i) + g^(e_{i+1}) + g^(e_{i-1}) = g^e`. One round.
//!
//! [`nr_eval`] runs both steps. It does not change the network phase: a runner that reports
//! costs per phase sets it around [`nr_exponent`] and [`nr_publish`] (the tests use
//! [`Phase::Online`](triskele_engine::Phase::Online) and
//! [`Phase::Output`](triskele_engine::Phase::Output), as the AES runner does for its
//! computation and output opening).
//!
//! # What the publication reveals
//!
//! It is the replicated opening of `e` "in the exponent": where the ordinary opening sends the
//! missing share `e_{i-1}` to `P_i`, this sends only `g^(e_{i-1})`. A corrupt `P_i` already holds
//! `e_i` and `e_{i+1}`, so the point it receives is `g^e - g^(e_i) - g^(e_{i+1})`, a function of
//! the output and its own view: the simulator computes it from `F(k, x)`. No re-randomisation
//! of `[e]` is needed for this (and a fresh replicated zero-sharing cannot be made from the
//! pairwise PRG keys without communication anyway); the last multiplication's zero-share makes
//! the components of `[e]` fresh in any case, except for inputs with `x = 0`, where `[e] = [k_0]`
//! and the same points `g^(k_0 components)` are published each time, which the same argument
//! covers. What is revealed about the key is only `F(k, x)` itself; `e` is hidden by the
//! discrete logarithm (opening `e` itself would reveal `k_i = e(x ∪ {i}) / e(x)` after two
//! queries).
//!
//! **Output integrity.** With at most one corrupt party, one of the two copies a party compares
//! comes from an honest holder, so if the copies agree the received point is `g` to the
//! component that honest holder holds: a corrupt party that publishes a wrong point makes the
//! receiving honest party abort (tested) and cannot change any output through its
//! publication. This does not make the protocol actively secure: a corrupt party can still
//! send wrong reshares in the tree (semi-honest engine), which changes `e` or leaves an honest
//! party with a wrong component of its own that no check covers. There is no agreement round
//! after the check: one honest party may abort while the other, which saw matching copies,
//! returns its output (the abort notice reaches it at its next receive).
//!
//! # Cost (semi-honest, per party)
//!
//! For a batch of `B` inputs with Hamming weights `w_j` ([`nr_cost`]):
//!
//! | step | multiplications | bytes sent | rounds |
//! | --- | --- | --- | --- |
//! | exponent | `Σ w_j` | `32 Σ w_j`, all to `P_{i-1}` | `max_j ⌈log2(1 + w_j)⌉` |
//! | publication | – | `32 B` to each neighbour | 1 |
//!
//! For `n = 128`: at most 128 multiplications, 4096 + 64 bytes and 8 + 1 rounds per evaluation
//! (all-ones input); a uniform input averages 64 multiplications and 2112 bytes. No
//! preprocessing. Local work per evaluation: `3 w` scalar products, two fixed-base
//! exponentiations, one point decompression and three compressions (the two own points are
//! compressed in batches sharing one inversion). Peak memory is about `200 (w + 1)` bytes per
//! evaluation at the first tree level: a caller with a very large batch should split it (each
//! part costs its own rounds).
//!
//! # Security level
//!
//! Naor-Reingold is a PRF under DDH in the group; Ristretto255 has prime order
//! `ℓ ≈ 2^252`, so the best known attacks (Pollard rho on the discrete logarithm, which also
//! solves DDH) take about `2^126` group operations: about 126-bit security (the NR reduction
//! loses a factor of about `n` in the advantage). PRF.md's warning that "a 128-bit field gives
//! only ~64-bit security" concerns running NR in a group whose order is a 128-bit prime (so
//! that the MPC field, which must be the group order, is the engine's 128-bit `F_p`): rho then
//! costs `2^64`. It does not apply here, where the MPC field is the 252-bit `Z_ℓ`.
//!
//! # Example
//!
//! ```
//! use rand::SeedableRng;
//! use triskele_engine::{Party, SemiHonest};
//! use triskele_net::NetOptions;
//! use triskele_prf::nr::{input_from_u128, key_from_seed, nr_clear, nr_eval};
//!
//! let n = 8;
//! let key = key_from_seed(b"example", n);
//! let inputs = vec![input_from_u128(0xa5, n).unwrap(), input_from_u128(0, n).unwrap()];
//! let mut rng = rand_chacha::ChaCha20Rng::seed_from_u64(7);
//! let shares = triskele_share::deal(&key, &mut rng);
//! let nets = triskele_net::in_memory(&NetOptions::default());
//! let outs = triskele_prf::local::three(nets, |net| {
//!     let mut party = Party::<SemiHonest>::setup(net).unwrap();
//!     let share = &shares[party.id().index()];
//!     nr_eval(&mut party, share, &inputs).unwrap()
//! });
//! for out in &outs {
//!     assert_eq!(out[0], nr_clear(&key, &inputs[0]).unwrap());
//!     assert_eq!(out[1], nr_clear(&key, &inputs[1]).unwrap());
//! }
//! ```

mod clear;
mod publish;
mod scalar;
mod tree;

pub use clear::{input_from_u128, key_from_seed, nr_clear, KEY_DOMAIN};
pub use scalar::RistrettoScalar;

use triskele_engine::{EngineError, Party, SecurityModel};
use triskele_share::RssVec;

/// The input length `n` of PRF.md (key `k_0..k_128`).
pub const DEFAULT_INPUT_BITS: usize = 128;

/// Evaluates `F(k, x)` for every input: [`nr_exponent`] then [`nr_publish`]. `key` is this
/// party's share of `k_0..k_n`; every input must have `n` bits. Returns the 32-byte compressed
/// outputs in input order (the same at every party).
///
/// Errors: [`EngineError::LengthMismatch`] for a malformed key share or input,
/// [`EngineError::Abort`] if the published points disagree, network and decoding errors.
pub fn nr_eval<M: SecurityModel, B: AsRef<[bool]>>(
    party: &mut Party<M>,
    key: &RssVec<RistrettoScalar>,
    inputs: &[B],
) -> Result<Vec<[u8; 32]>, EngineError> {
    let e = nr_exponent(party, key, inputs)?;
    nr_publish(party, &e)
}

/// The multiplication tree: a replicated sharing of `e_j = k_0 · Π_{x_i = 1} k_i` for each
/// input `x^(j)` (see the module documentation). `Σ w_j` multiplications in
/// `max_j ⌈log2(1 + w_j)⌉` rounds; no communication if every input is zero or the batch is
/// empty.
pub fn nr_exponent<M: SecurityModel, B: AsRef<[bool]>>(
    party: &mut Party<M>,
    key: &RssVec<RistrettoScalar>,
    inputs: &[B],
) -> Result<RssVec<RistrettoScalar>, EngineError> {
    tree::exponent(party, key, inputs)
}

/// Publishes `g^[e]` and returns `g^e` for each element of `e` (compressed): both holders of
/// each component send its point, the copies are compared (a mismatch is a security abort),
/// one round, 32 bytes per element to each neighbour (see the module documentation). An
/// empty `e` sends nothing.
pub fn nr_publish<M: SecurityModel>(
    party: &mut Party<M>,
    e: &RssVec<RistrettoScalar>,
) -> Result<Vec<[u8; 32]>, EngineError> {
    publish::publish(party, e)
}

/// Communication of one batch at each party ([`nr_eval`]), from the public inputs.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct NrCost {
    /// Multiplications (`Σ w_j`).
    pub multiplications: u64,
    /// Rounds of the tree (`max_j ⌈log2(1 + w_j)⌉`): messages sent to `P_{i-1}` and received
    /// from `P_{i+1}`.
    pub tree_rounds: u32,
    /// Bytes the tree sends to `P_{i-1}` (and receives from `P_{i+1}`): `32 Σ w_j`.
    pub tree_bytes: u64,
    /// Rounds of the publication: 1 (0 for an empty batch), one message to each neighbour.
    pub publish_rounds: u32,
    /// Bytes the publication sends to each neighbour (and receives from each): `32 B`.
    pub publish_bytes_per_neighbour: u64,
}

/// The communication of [`nr_eval`] on `inputs` (see [`NrCost`]).
pub fn nr_cost<B: AsRef<[bool]>>(inputs: &[B]) -> NrCost {
    let weights = inputs
        .iter()
        .map(|x| x.as_ref().iter().filter(|&&b| b).count());
    let (mut mults, mut rounds) = (0u64, 0u32);
    for w in weights {
        mults += w as u64;
        rounds = rounds.max(tree::levels(w + 1));
    }
    NrCost {
        multiplications: mults,
        tree_rounds: rounds,
        tree_bytes: 32 * mults,
        publish_rounds: u32::from(!inputs.is_empty()),
        publish_bytes_per_neighbour: 32 * inputs.len() as u64,
    }
}
