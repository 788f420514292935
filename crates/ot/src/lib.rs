//! Oblivious transfer for two parties: a post-quantum random OT (ROTed), the
//! BDGM19 chosen-message OT, an elliptic-curve baseline, and OT extension.
//!
//! # What is here
//!
//! | protocol | module | messages | security |
//! |---|---|---|---|
//! | RLWE random OT (ROTed, TCHES 2021) | [`rlwe::rot`] | 3 | RLWE, ROM |
//! | RLWE chosen OT (BDGM19) | [`rlwe::bdgm`] | 4 | RLWE, ROM |
//! | OT to random OT ("ROTed" variants) | [`rotted`] | as the OT | as the OT |
//! | random OT to chosen OT (Beaver) | [`rotted::Derandomized`] | +2 | as the ROT |
//! | Simplest OT (Chou-Orlandi 2015) on Ristretto255 | [`ec`] | 2 (+1) | CDH, ROM |
//! | IKNP OT extension from 128 base ROTs, optional KOS15 check | [`extension::iknp`] | 1 per chunk + base | as the base OT, CR hash (TMMO with a check) |
//! | SoftSpokenOT from the same base ROTs, optional row-wise consistency check (malicious receiver) | [`extension::softspoken`] | 1 + 1 per chunk + base | as the base OT, CR hash (TMMO with the check) |
//! | ideal OT (a trusted dealer, tests only) | [`ideal`] | 0 | none |
//!
//! All protocols are written sans-IO (explicit state machines that consume
//! and produce messages) and driven over a [`channel::Channel`] by the
//! implementations of the traits [`RotSender`], [`RotReceiver`],
//! [`OtSender`], [`OtReceiver`]. [`bench::run_local`] runs both parties in
//! two threads over an in-memory channel and reports time and bytes per OT.
//!
//! # Example
//!
//! ```
//! use rand_chacha::ChaCha20Rng;
//! use rand_core::SeedableRng;
//! use triskele_ot::rlwe::RlweRot;
//! use triskele_ot::{memory_pair, RotReceiver, RotSender};
//!
//! let (mut to_receiver, mut to_sender) = memory_pair();
//! let sender = std::thread::spawn(move || {
//!     let mut rng = ChaCha20Rng::from_os_rng();
//!     RlweRot::default().send_random(&mut to_receiver, 10, &mut rng)
//! });
//! let mut rng = ChaCha20Rng::from_os_rng();
//! let got = RlweRot::default().receive_random(&mut to_sender, 10, &mut rng)?;
//! let sent = sender.join().expect("sender thread")?;
//! for i in 0..10 {
//!     let b = usize::from(got.choices[i]);
//!     assert_eq!(sent.messages[i][b], got.messages[i]);
//! }
//! # Ok::<(), triskele_ot::Error>(())
//! ```
//!
//! OT extension streams: [`RotSender::send_random_into`] and
//! [`RotReceiver::receive_random_into`] write into buffers the caller owns, so
//! millions of OTs can be consumed piece by piece in constant memory (one setup
//! serves every call; the OT index continues):
//!
//! ```
//! use rand_chacha::ChaCha20Rng;
//! use rand_core::SeedableRng;
//! use triskele_ot::extension::{SoftSpokenReceiver, SoftSpokenSender};
//! use triskele_ot::rlwe::RlweRot;
//! use triskele_ot::{memory_pair, RotReceiver, RotSender};
//!
//! let (mut to_receiver, mut to_sender) = memory_pair();
//! let sender = std::thread::spawn(move || -> triskele_ot::Result<[[u8; 16]; 2]> {
//!     let mut rng = ChaCha20Rng::from_os_rng();
//!     let mut s = SoftSpokenSender::new(RlweRot::default(), 4)?;
//!     let mut pairs = vec![[[0u8; 16]; 2]; 1 << 16];
//!     for _ in 0..4 {
//!         s.send_random_into(&mut to_receiver, &mut pairs, &mut rng)?;
//!         // ... use this piece of 65,536 OTs ...
//!     }
//!     Ok(pairs[7])
//! });
//! let mut rng = ChaCha20Rng::from_os_rng();
//! let mut r = SoftSpokenReceiver::new(RlweRot::default(), 4)?;
//! let (mut choices, mut msgs) = (vec![0u8; 1 << 16], vec![[0u8; 16]; 1 << 16]);
//! for _ in 0..4 {
//!     r.receive_random_into(&mut to_sender, &mut choices, &mut msgs, &mut rng)?;
//! }
//! let last = sender.join().expect("sender thread")?;
//! assert_eq!(last[usize::from(choices[7])], msgs[7]);
//! # Ok::<(), triskele_ot::Error>(())
//! ```
//!
//! # Security model
//!
//! Two parties, static corruption. The lattice protocols follow the papers'
//! designs, which are proven in the random-oracle model (BLAKE3 keyed by a
//! per-purpose domain key plays the oracle); the RLWE parameters are those
//! of the paper (`n = 512`, `q = 15361`, `sigma = 2`). Aborts caused by a
//! misbehaving peer are reported as [`Error::Abort`]; a malformed or
//! truncated message is a decoding error and never a panic. Plain IKNP and
//! SoftSpokenOT are secure against a semi-honest receiver; with a consistency
//! check against a malicious one: the row-wise check of SoftSpokenOT and of
//! the revised KOS15 ([`extension::ConsistencyCheck::SoftSpoken`], for both),
//! or IKNP with the original KOS15 column check
//! ([`extension::ConsistencyCheck::Kos`]; the revised row check is the one
//! with a complete analysis).
//!
//! Aborts are visible to the peer. In ROT and BDGM19 a malicious sender can
//! make the receiver's checks fail on one branch only and so learn, from
//! whether the receiver aborts, the branch of that run (the selective-failure
//! attack every OT with receiver-side checks has); treat any abort as fatal
//! for the whole session and do not retry with the same inputs.
//!
//! Side channels: code paths and memory accesses do not depend on secret
//! bits. The receiver always hashes the seed to a polynomial and subtracts it
//! under a mask; hint, mask and message selections are masked selects and
//! swaps; comparisons of secret-derived values use `subtle`; noise sampling
//! is constant time (see [`rlwe::sample`]). Secrets (noise, reconciled keys,
//! masks, outputs, PRG state) are zeroized on drop.
//!
//! # Differences from the ROTed artifact
//!
//! * Real noise: each run samples fresh secrets and errors from an
//!   AES-CTR PRG seeded with 32 bytes from the caller's RNG (the artifact's
//!   benchmarked build copies noise from a fixed public table). The default
//!   distribution is the centered binomial with sigma = 2 (as NewHope and
//!   Kyber); an exact-variance discrete Gaussian CDT sampler is available
//!   ([`rlwe::NoiseDistribution`]).
//! * Constant-time paths whatever the secret bits (the artifact hashes to a
//!   polynomial only when the receiver's bit is 1).
//! * Compact messages: coefficients packed at 14 bits, hints at 1 bit; ROT
//!   2144 bytes per OT in total, BDGM19 OT 2240 bytes (the artifact sends
//!   its unpacked structs, about 4.5 KB).
//! * Outputs derive from a BLAKE3 hash of the whole 512-bit reconciled key
//!   and the transcript (the artifact's outputs take the first 32 key bits,
//!   one per byte).
//! * Reconciliation uses centered representatives as in Ding et al.
//! * The EC baseline is Simplest OT with proper randomness (the artifact's
//!   PVW08 never sets its encryption randomness, so ciphertexts decode
//!   without a key); a test shows decoding fails without the receiver's key.
//!
//! # Backends
//!
//! The ring's coefficient-wise passes, reconciliation and the
//! discrete-Gaussian sampler core are written once in portable Rust, shaped
//! so that LLVM vectorizes them (16-bit Montgomery and Barrett arithmetic,
//! `pmulhw`/`pmullw`), and compiled for the baseline target (SSE2 on
//! x86-64), with AVX2 and with AVX-512F/BW enabled; the NTT, the samplers
//! and the bit packing also have hand-written AVX2 versions, and the NTT
//! and the bit packing AVX-512 ones (32 lanes, the polynomial in
//! registers), as does the Gaussian sampler (16 magnitudes per register). The best backend the CPU has is chosen at run time
//! (AVX-512, else AVX2, else portable); `TRISKELE_BACKEND=portable` forces
//! the portable one, `TRISKELE_BACKEND=avx2` the AVX2 one, and tests check
//! that every backend agrees with the portable one bit for bit (see
//! [`rlwe::Backend`]). The KOS check's GF(2^128) products use PCLMULQDQ
//! when present (portable: 4-bit windows indexed by public values only).
//! The only `unsafe` code (`rlwe/ntt_avx2.rs`, `ntt_avx512.rs`,
//! `lanes_avx2.rs`, `lanes_avx512.rs`, `sample_avx2.rs`,
//! `sample_avx512.rs`) is the calls into
//! the AVX2, AVX-512 and PCLMULQDQ functions, each behind a token that
//! proves run-time detection, and their unaligned loads and stores. AES
//! (the noise PRG, the extensions' PRGs and their fixed-key output hash)
//! runs on VAES or AES-NI through `triskele_field::ctr` (`HwAes128Ctr`,
//! `HwAes128`), else on the `aes` crate (also under
//! `TRISKELE_BACKEND=portable`); tests check both give the same blocks. Not
//! yet: NEON copies.
//!
//! # Wire sizes (bytes per OT, both directions)
//!
//! | protocol | bytes |
//! |---|---|
//! | ROT | 960 + 1120 + 64 = 2144 |
//! | BDGM19 OT (and its ROTed variant) | 928 + 1216 + 32 + 64 = 2240 |
//! | Simplest OT, chosen | 96 + 32/n |
//! | Simplest OT, random | 32 + 32/n |
//! | IKNP random OT | 16 per OT + 128 base ROTs (about 274 KB once) |
//! | IKNP + KOS | 16 per OT + 4 KB + 32 B per chunk of 65536 + base |
//! | SoftSpoken, k = 4 | 31 bits (3.9 B) per OT + 4 KB setup + base |
//! | SoftSpoken, k = 4, with the check | + 2064 B per chunk of 65536 (0.04 B per OT) + 2 KB setup |
#![deny(unsafe_code)]

pub mod bench;
pub mod channel;
pub mod ec;
pub mod error;
pub mod extension;
pub mod ideal;
pub(crate) mod prg;
pub mod rlwe;
pub mod rotted;

pub use channel::{memory_pair, Channel, ChannelStats, MemoryChannel};
pub use error::{AbortReason, Error, Result};

use rand_core::CryptoRng;
use zeroize::Zeroize;

/// Outputs of a random-OT sender: `count` pairs of random messages.
pub struct RotSenderOutputs<B: OtBlock> {
    /// `(M_0, M_1)` for each OT.
    pub messages: Vec<[B; 2]>,
}

/// Outputs of a random-OT receiver: a random bit and one message per OT.
pub struct RotReceiverOutputs<B: OtBlock> {
    /// The choice bits (each 0 or 1).
    pub choices: Vec<u8>,
    /// `M_{choice}` for each OT.
    pub messages: Vec<B>,
}

// Outputs can be millions of blocks: wipe them with one fill per block kept
// alive by `black_box` instead of per-byte volatile stores (see `prg::wipe_bytes`).
impl<B: OtBlock> RotSenderOutputs<B> {
    /// The outputs `f` writes into a fresh buffer of `count` pairs (for implementations of
    /// [`RotSender::send_random`] on top of [`RotSender::send_random_into`]).
    pub(crate) fn filled(
        count: usize,
        f: impl FnOnce(&mut [[B; 2]]) -> Result<()>,
    ) -> Result<Self> {
        let mut o = RotSenderOutputs {
            messages: vec![[B::default(); 2]; count],
        };
        f(&mut o.messages)?;
        Ok(o)
    }
}

impl<B: OtBlock> RotReceiverOutputs<B> {
    /// The outputs `f` writes into fresh buffers of `count` choice bits and messages (as
    /// [`RotSenderOutputs::filled`]).
    pub(crate) fn filled(
        count: usize,
        f: impl FnOnce(&mut [u8], &mut [B]) -> Result<()>,
    ) -> Result<Self> {
        let mut o = RotReceiverOutputs {
            choices: vec![0u8; count],
            messages: vec![B::default(); count],
        };
        f(&mut o.choices, &mut o.messages)?;
        Ok(o)
    }
}

/// `Err` unless the choice-bit and message buffers of a receiver have one length.
pub(crate) fn check_buffers<B>(choices: &[u8], out: &[B]) -> Result<()> {
    if choices.len() == out.len() {
        Ok(())
    } else {
        Err(Error::InvalidArgument(
            "choice and message buffers of different lengths",
        ))
    }
}

impl<B: OtBlock> Drop for RotSenderOutputs<B> {
    fn drop(&mut self) {
        for m in self.messages.iter_mut() {
            *m = [B::default(), B::default()];
        }
        core::hint::black_box(&mut self.messages);
    }
}

impl<B: OtBlock> Drop for RotReceiverOutputs<B> {
    fn drop(&mut self) {
        prg::wipe_bytes(&mut self.choices);
        for m in self.messages.iter_mut() {
            *m = B::default();
        }
        core::hint::black_box(&mut self.messages);
    }
}

impl<B: OtBlock> core::fmt::Debug for RotSenderOutputs<B> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        write!(f, "RotSenderOutputs({} OTs)", self.messages.len())
    }
}

impl<B: OtBlock> core::fmt::Debug for RotReceiverOutputs<B> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        write!(f, "RotReceiverOutputs({} OTs)", self.messages.len())
    }
}

/// The sender of a batch of random OTs.
pub trait RotSender {
    /// The message type (32 bytes for base OTs, 16 for extension).
    type Block: OtBlock;
    /// Runs `count` random OTs over `ch`.
    fn send_random<C: Channel + ?Sized, R: CryptoRng + ?Sized>(
        &mut self,
        ch: &mut C,
        count: usize,
        rng: &mut R,
    ) -> Result<RotSenderOutputs<Self::Block>>;

    /// Runs `out.len()` random OTs over `ch` and writes the message pairs into `out`, a
    /// buffer the caller owns and can reuse (for example one chunk at a time, so that a
    /// long stream of OTs needs no memory of its size). The OT extensions write their
    /// outputs there directly; other protocols copy them from [`RotSender::send_random`].
    fn send_random_into<C: Channel + ?Sized, R: CryptoRng + ?Sized>(
        &mut self,
        ch: &mut C,
        out: &mut [[Self::Block; 2]],
        rng: &mut R,
    ) -> Result<()> {
        let o = self.send_random(ch, out.len(), rng)?;
        if o.messages.len() != out.len() {
            return Err(Error::InvalidArgument(
                "OT returned the wrong number of OTs",
            ));
        }
        out.copy_from_slice(&o.messages);
        Ok(())
    }
}

/// The receiver of a batch of random OTs.
pub trait RotReceiver {
    /// The message type.
    type Block: OtBlock;
    /// Runs `count` random OTs over `ch`.
    fn receive_random<C: Channel + ?Sized, R: CryptoRng + ?Sized>(
        &mut self,
        ch: &mut C,
        count: usize,
        rng: &mut R,
    ) -> Result<RotReceiverOutputs<Self::Block>>;

    /// Runs `out.len()` random OTs over `ch`, writing the choice bits into `choices` and the
    /// chosen messages into `out` (caller-owned buffers of equal length, as in
    /// [`RotSender::send_random_into`]).
    fn receive_random_into<C: Channel + ?Sized, R: CryptoRng + ?Sized>(
        &mut self,
        ch: &mut C,
        choices: &mut [u8],
        out: &mut [Self::Block],
        rng: &mut R,
    ) -> Result<()> {
        check_buffers(choices, out)?;
        let o = self.receive_random(ch, out.len(), rng)?;
        if o.messages.len() != out.len() || o.choices.len() != out.len() {
            return Err(Error::InvalidArgument(
                "OT returned the wrong number of OTs",
            ));
        }
        out.copy_from_slice(&o.messages);
        choices.copy_from_slice(&o.choices);
        Ok(())
    }
}

/// The sender of a batch of chosen-message OTs.
pub trait OtSender {
    /// The message type.
    type Block: OtBlock;
    /// Transfers one of each pair in `messages`.
    fn send<C: Channel + ?Sized, R: CryptoRng + ?Sized>(
        &mut self,
        ch: &mut C,
        messages: &[[Self::Block; 2]],
        rng: &mut R,
    ) -> Result<()>;
}

/// The receiver of a batch of chosen-message OTs.
pub trait OtReceiver {
    /// The message type.
    type Block: OtBlock;
    /// Receives `messages[i][choices[i]]` for each `i`; choices are 0 or 1.
    fn receive<C: Channel + ?Sized, R: CryptoRng + ?Sized>(
        &mut self,
        ch: &mut C,
        choices: &[u8],
        rng: &mut R,
    ) -> Result<Vec<Self::Block>>;
}

/// A fixed-size OT message: a byte array such as `[u8; 16]` or `[u8; 32]`.
pub trait OtBlock: Copy + Default + Zeroize + AsRef<[u8]> + AsMut<[u8]> + Send + 'static {}
impl<const L: usize> OtBlock for [u8; L] where [u8; L]: Default {}

/// `a ^ b` for blocks.
pub(crate) fn xor_block<B: OtBlock>(a: &B, b: &B) -> B {
    let mut o = B::default();
    for ((o, x), y) in o.as_mut().iter_mut().zip(a.as_ref()).zip(b.as_ref()) {
        *o = x ^ y;
    }
    o
}

/// Checks that every choice is 0 or 1.
pub(crate) fn check_choices(choices: &[u8]) -> Result<()> {
    if choices.iter().all(|&c| c <= 1) {
        Ok(())
    } else {
        Err(Error::InvalidArgument("choice bits must be 0 or 1"))
    }
}
