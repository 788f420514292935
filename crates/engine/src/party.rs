//! One party of the three-party engine: its links, its correlated randomness, its model.

use std::time::{Duration, Instant};

use rand::RngCore;
use triskele_field::{Bulk, Encode, Random};
use triskele_net::{Network, Phase};
use triskele_share::{combine_seeds, commit_seed, verify_seed, Direction, PartyId, Prss, RssVec};
use zeroize::Zeroize;

use crate::error::{AbortReason, EngineError};
use crate::model::{Lift, Malicious, Recorder, SecurityModel, SemiHonest, Triples, View};
use crate::verify::{kind_groups, paired_runs, verify, Concat, TripleSource, VerifyField};

/// One piece of a product for [`Party::mul_covered_parts`]: both components of the piece of
/// `x`, then of `y`.
pub type ProductPiece<'a, F> = ([&'a [F]; 2], [&'a [F]; 2]);

/// Which neighbour receives the local product in a reshare (PROTOCOLS.md §1.6, \[REF\]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReshareTo {
    /// Standard: `P_i` keeps `t_i` in its first slot, sends it to `P_{i-1}`, and receives its
    /// second slot from `P_{i+1}`.
    Prev,
    /// `chida` convention: `P_i` keeps `t_i` in its second slot, sends it to `P_{i+1}`, and
    /// receives its first slot from `P_{i-1}`.
    Next,
}

/// A party of the engine. Protocols call its methods; it owns the network handle and the
/// pairwise PRG streams. Local compute uses the current rayon thread pool.
#[derive(Debug)]
pub struct Party<M: SecurityModel = SemiHonest> {
    id: PartyId,
    net: Network,
    prss: Prss,
    model: M,
    /// A segment is being verified ([`Party::checkpoint`] does not nest).
    checking: bool,
    /// The folded vectors of the last verification, reused by the next one.
    pub(crate) spare: crate::verify::Spare,
    /// The binary runs of the segments verified so far, parked before their steps of eight
    /// and `CheckTriple`, which the finalize check takes side by side with its own.
    parked: Vec<crate::verify::Parked<triskele_field::Gf2p64>>,
}

impl<M: SecurityModel> Party<M> {
    /// Runs the setup: pairwise PRG key agreement with commitments (PROTOCOLS.md §1.2) over
    /// `net`, in the setup phase (not counted in any benchmark phase).
    pub fn setup(mut net: Network) -> Result<Self, EngineError> {
        let id = net.party();
        let prev_phase = net.phase();
        net.set_phase(Phase::Setup);
        let mut rng = rand::rng();
        // Seed parts and nonces for the pair with next and the pair with prev.
        let mut seeds = [[0u8; 16]; 2];
        let mut nonces = [[0u8; 16]; 2];
        for k in 0..2 {
            rng.fill_bytes(&mut seeds[k]);
            rng.fill_bytes(&mut nonces[k]);
        }
        let dirs = [Direction::Next, Direction::Prev];
        for (k, d) in dirs.iter().enumerate() {
            net.send(*d, commit_seed(&seeds[k], &nonces[k]).to_vec())?;
        }
        let mut coms = [Vec::new(), Vec::new()];
        for (k, d) in dirs.iter().enumerate() {
            coms[k] = net.recv(*d)?;
            if coms[k].len() != 48 {
                return Err(EngineError::MessageLength {
                    peer: id.neighbour(*d),
                    expected: 48,
                    got: coms[k].len(),
                });
            }
        }
        for (k, d) in dirs.iter().enumerate() {
            net.send(*d, seeds[k].to_vec())?;
        }
        let mut keys = Vec::with_capacity(2);
        for (k, d) in dirs.iter().enumerate() {
            let mut theirs = net.recv(*d)?;
            let peer = id.neighbour(*d);
            if !verify_seed(&coms[k], &theirs) {
                theirs.zeroize();
                return Err(EngineError::Abort(AbortReason::BadCommitment { peer }));
            }
            let mut t = [0u8; 16];
            t.copy_from_slice(&theirs);
            theirs.zeroize();
            keys.push(combine_seeds(&seeds[k], &t));
            t.zeroize();
        }
        seeds.zeroize();
        let prss = Prss::new(&keys[1], &keys[0]);
        net.set_phase(prev_phase);
        Ok(Party {
            id,
            net,
            prss,
            model: M::default(),
            checking: false,
            spare: crate::verify::Spare::default(),
            parked: Vec::new(),
        })
    }

    /// A party from an already keyed PRSS (tests, single-process runs).
    pub fn from_parts(net: Network, prss: Prss) -> Self {
        Party {
            id: net.party(),
            net,
            prss,
            model: M::default(),
            checking: false,
            spare: crate::verify::Spare::default(),
            parked: Vec::new(),
        }
    }

    pub fn id(&self) -> PartyId {
        self.id
    }

    pub fn net(&mut self) -> &mut Network {
        &mut self.net
    }

    pub fn prss(&mut self) -> &mut Prss {
        &mut self.prss
    }

    pub fn model(&mut self) -> &mut M {
        &mut self.model
    }

    pub fn set_phase(&mut self, phase: Phase) {
        self.net.set_phase(phase);
    }

    /// Runs `f` with the network in `phase` (its messages are counted there), then restores
    /// the phase before, whether `f` succeeded or not.
    pub fn in_phase<T>(&mut self, phase: Phase, f: impl FnOnce(&mut Self) -> T) -> T {
        let before = self.net.phase();
        self.net.set_phase(phase);
        let out = f(self);
        self.net.set_phase(before);
        out
    }

    /// Times a benchmark phase: sets it, runs `f`, and returns the result with the elapsed
    /// time less the segments verified meanwhile ([`Party::checkpoint`]), which benchmarks
    /// report in the finalize phase instead ([`SecurityModel::segment_time`]).
    pub fn timed<T>(
        &mut self,
        phase: Phase,
        f: impl FnOnce(&mut Self) -> Result<T, EngineError>,
    ) -> Result<(T, Duration), EngineError> {
        self.net.set_phase(phase);
        let seg0 = self.model.segment_time();
        let t0 = Instant::now();
        let out = f(self)?;
        let elapsed = t0.elapsed();
        let seg = self.model.segment_time().saturating_sub(seg0);
        Ok((out, elapsed.saturating_sub(seg)))
    }

    /// Closes the links after flushing queued messages.
    pub fn shutdown(self) -> Result<(), EngineError> {
        Ok(self.net.shutdown()?)
    }

    /// Sends field elements to a neighbour (one message).
    pub fn send_elems<F: Encode>(&mut self, dir: Direction, x: &[F]) -> Result<(), EngineError> {
        self.send_bytes(dir, F::encode_to_vec(x))
    }

    /// Sends one message to a neighbour. If the link is down because the peer left, the
    /// messages it sent before leaving are searched for an abort notice ([`Party::abort`]), so
    /// that a peer's abort is reported as [`AbortReason::PeerAborted`] rather than as a
    /// network error.
    pub fn send_bytes(&mut self, dir: Direction, payload: Vec<u8>) -> Result<(), EngineError> {
        match self.net.send(dir, payload) {
            Ok(()) => Ok(()),
            Err(e) if e.is_disconnect() => {
                // The peer closed the link: its remaining messages are already queued, so
                // these receives do not wait.
                while let Ok(m) = self.net.recv(dir) {
                    if m.is_empty() {
                        let peer = self.id.neighbour(dir);
                        return Err(self.abort(AbortReason::PeerAborted { peer }));
                    }
                }
                Err(e.into())
            }
            Err(e) => Err(e.into()),
        }
    }

    /// Receives exactly `n` field elements from a neighbour (one message).
    pub fn recv_elems<F: Encode>(
        &mut self,
        dir: Direction,
        n: usize,
    ) -> Result<Vec<F>, EngineError> {
        let bytes = self.recv_bytes(dir, F::encoded_len(n))?;
        F::decode_owned(bytes, n).map_err(|source| {
            self.malformed(EngineError::Decode {
                peer: self.id.neighbour(dir),
                source,
            })
        })
    }

    /// A peer's malformed message (bad length or encoding). In the malicious model that is
    /// evidence of cheating: this party aborts and notifies its neighbours
    /// ([`AbortReason::MalformedMessage`]), so the other honest party stops too. Semi-honest
    /// parties report the error as is.
    fn malformed(&mut self, err: EngineError) -> EngineError {
        match (&err, M::MALICIOUS) {
            (EngineError::Decode { peer, .. } | EngineError::MessageLength { peer, .. }, true) => {
                let peer = *peer;
                self.abort(AbortReason::MalformedMessage { peer })
            }
            _ => err,
        }
    }

    /// Receives one message that must have exactly `len` bytes. An empty message where a
    /// non-empty one is expected is a peer's abort notice ([`Party::abort`]): the result is
    /// [`AbortReason::PeerAborted`], and this party notifies its neighbours in turn.
    pub fn recv_bytes(&mut self, dir: Direction, len: usize) -> Result<Vec<u8>, EngineError> {
        let bytes = self.net.recv(dir)?;
        if bytes.is_empty() && len != 0 {
            let peer = self.id.neighbour(dir);
            return Err(self.abort(AbortReason::PeerAborted { peer }));
        }
        if bytes.len() != len {
            let err = EngineError::MessageLength {
                peer: self.id.neighbour(dir),
                expected: len,
                got: bytes.len(),
            };
            return Err(self.malformed(err));
        }
        Ok(bytes)
    }

    /// A random replicated sharing, no communication.
    pub fn random_rss<F: Random>(&mut self, n: usize) -> RssVec<F> {
        self.prss.random_rss(n)
    }

    /// Opens a replicated sharing to all parties (PROTOCOLS.md §1.5): one element to the
    /// next party per value, one round.
    pub fn open<F: Encode + Bulk>(&mut self, x: &RssVec<F>) -> Result<Vec<F>, EngineError> {
        let n = x.len();
        let mut msg = Vec::with_capacity(F::encoded_len(n));
        F::encode_slice(&x.first, &mut msg);
        self.send_bytes(Direction::Next, msg)?;
        let bytes = self.recv_bytes(Direction::Prev, F::encoded_len(n))?;
        let mut missing = vec![F::ZERO; n];
        F::decode_slice(&bytes, &mut missing).map_err(|source| {
            self.malformed(EngineError::Decode {
                peer: self.id.prev(),
                source,
            })
        })?;
        if M::MALICIOUS {
            let mut own = Vec::with_capacity(F::encoded_len(n));
            F::encode_slice(&x.second, &mut own);
            self.model.on_open(&bytes, &own);
        }
        F::add_assign_slice(&mut missing, &x.first);
        F::add_assign_slice(&mut missing, &x.second);
        Ok(missing)
    }

    /// Opens an additive (3,3) sharing (PROTOCOLS.md §1.7): the caller must have masked `x`
    /// with a zero-share if it is not already uniformly random. Two elements per value.
    pub fn open_additive<F: Encode + Bulk>(&mut self, x: &[F]) -> Result<Vec<F>, EngineError> {
        let n = x.len();
        for d in Direction::BOTH {
            self.send_elems(d, x)?;
        }
        let mut sum = self.recv_elems::<F>(Direction::Next, n)?;
        let from_prev = self.recv_elems::<F>(Direction::Prev, n)?;
        F::add_assign_slice(&mut sum, &from_prev);
        F::add_assign_slice(&mut sum, x);
        Ok(sum)
    }

    /// Turns additive shares `t` (already masked with a zero-share) into a replicated sharing
    /// in one round, one element per value to the chosen neighbour.
    pub fn reshare<F: Encode>(
        &mut self,
        t: Vec<F>,
        to: ReshareTo,
    ) -> Result<RssVec<F>, EngineError> {
        let n = t.len();
        match to {
            ReshareTo::Prev => {
                self.send_elems(Direction::Prev, &t)?;
                let second = self.recv_elems(Direction::Next, n)?;
                Ok(RssVec { first: t, second })
            }
            ReshareTo::Next => {
                self.send_elems(Direction::Next, &t)?;
                let first = self.recv_elems(Direction::Prev, n)?;
                Ok(RssVec { first, second: t })
            }
        }
    }

    /// Additive → replicated (PROTOCOLS.md §1.7): adds a fresh zero-share, then reshares.
    pub fn additive_to_rss<F: Encode + Random + Bulk>(
        &mut self,
        mut t: Vec<F>,
        to: ReshareTo,
    ) -> Result<RssVec<F>, EngineError> {
        let mut scratch = Vec::new();
        self.prss.add_zero_share(&mut t, &mut scratch);
        self.reshare(t, to)
    }

    /// Semi-honest multiplication of replicated sharings (PROTOCOLS.md §1.6): one element per
    /// product to the previous party, one round.
    pub fn mul<F: Encode + Random + Bulk + Lift>(
        &mut self,
        x: &RssVec<F>,
        y: &RssVec<F>,
    ) -> Result<RssVec<F>, EngineError> {
        let z = self.mul_covered(x, y)?;
        if M::MALICIOUS {
            self.model.on_product(x, y, &z);
            self.checkpoint()?;
        }
        Ok(z)
    }

    /// Records the triples `(x, y, z)` of an earlier [`Party::mul_covered`] whose operands and
    /// products the caller no longer needs, as [`Party::mul`] would have recorded them, then
    /// runs a segment check if one is due. In the malicious model, where the triples alone
    /// fill a verification segment, they are handed to the store without a copy
    /// ([`SecurityModel::on_product_swap`]): they are verified right away, and their memory
    /// serves the next records (a copy would go into memory touched for the first time).
    /// Smaller batches are copied, which keeps room reserved in the store
    /// ([`SecurityModel::reserve_products`]) for the records that follow. The vectors may be
    /// left empty. Nothing happens in the semi-honest model. Between the multiplication and
    /// this call the caller may use the products locally; it must not open anything that
    /// depends on them.
    pub fn record_product_swap<F: Lift>(
        &mut self,
        x: &mut RssVec<F>,
        y: &mut RssVec<F>,
        z: &mut RssVec<F>,
    ) -> Result<(), EngineError> {
        if M::MALICIOUS {
            let bytes = 6 * z.len() * core::mem::size_of::<F>();
            if self.model.segment_size().is_some_and(|s| bytes >= s) {
                self.model.on_product_swap(x, y, z);
            } else {
                self.model.on_product(x, y, z);
            }
            self.checkpoint()?;
        }
        Ok(())
    }

    /// Runs `f` with this party and the store of recorded products over `F`, so that a
    /// protocol can append its triples in place: operands written straight into the store's
    /// `x` and `y`, products appended to its `z` by [`Party::mul_covered_append`] (the same
    /// messages as [`Party::mul`]), and later operands read back from it. What `f` appends is
    /// recorded exactly as if each batch had gone through [`Party::mul`]; it must leave `x`,
    /// `y` and `z` of equal length (otherwise only whole triples are kept and the call
    /// fails with [`EngineError::LengthMismatch`]). The store goes back to the model even if
    /// `f` fails; then a segment check runs if one is due. In the semi-honest model `f` gets
    /// an empty store whose contents are dropped.
    pub fn record_in_place<F: Lift, R>(
        &mut self,
        f: impl FnOnce(&mut Self, &mut Triples<F>) -> Result<R, EngineError>,
    ) -> Result<R, EngineError> {
        let mut store = self.model.take_store::<F>();
        let out = f(self, &mut store);
        let (z, x) = (store.z.first.len(), store.x.first.len());
        let ragged = store.keep_whole();
        self.model.put_store(store);
        let out = out?;
        if ragged {
            return Err(EngineError::LengthMismatch {
                expected: x,
                got: z,
            });
        }
        if M::MALICIOUS {
            self.checkpoint()?;
        }
        Ok(out)
    }

    /// The multiplication of [`Party::mul`] **without** recording the triple: for products
    /// whose correctness the caller certifies otherwise — by recording a combined relation
    /// that implies it ([`SecurityModel::on_product`], e.g. the gf4p4 relation of
    /// PROTOCOLS.md §5.5), or inside a check itself. Same messages as [`Party::mul`].
    pub fn mul_covered<F: Encode + Random + Bulk>(
        &mut self,
        x: &RssVec<F>,
        y: &RssVec<F>,
    ) -> Result<RssVec<F>, EngineError> {
        self.mul_covered_parts(&[([&x.first, &x.second], [&y.first, &y.second])])
    }

    /// [`Party::mul_covered`] of the concatenations `x = x^0 ‖ x^1 ‖ …` and `y = y^0 ‖ y^1 ‖
    /// …` of the pieces `parts[k] = (x^k, y^k)`, each operand given as its two components
    /// (`x^k` and `y^k` of one length), without forming them: the local products are written
    /// piece by piece into one vector, which is reshared. The same messages and the same
    /// result as `mul_covered(&x, &y)`; for products whose operands are pieces of other
    /// vectors, some of them repeated (Protocol 8's monomials), which would otherwise be
    /// copied into fresh memory first.
    pub fn mul_covered_parts<F: Encode + Random + Bulk>(
        &mut self,
        parts: &[ProductPiece<'_, F>],
    ) -> Result<RssVec<F>, EngineError> {
        let mut n = 0usize;
        for ([x1, x2], [y1, y2]) in parts {
            for len in [x2.len(), y1.len(), y2.len()] {
                if len != x1.len() {
                    return Err(EngineError::LengthMismatch {
                        expected: x1.len(),
                        got: len,
                    });
                }
            }
            n += x1.len();
        }
        let mut t = vec![F::ZERO; n];
        let mut at = 0;
        for ([x1, x2], [y1, y2]) in parts {
            let m = x1.len();
            F::local_product_slice(&mut t[at..at + m], x1, x2, y1, y2);
            at += m;
        }
        self.additive_to_rss(t, ReshareTo::Prev)
    }

    /// [`Party::mul_covered`] on operands given as their two components, with the product
    /// appended to `out` (both components; its earlier entries are kept): the local product
    /// is formed in `out`'s first component and the received share decoded straight into its
    /// second, so no vectors are allocated or copied. Same messages as [`Party::mul`].
    pub fn mul_covered_append<F: Encode + Random + Bulk>(
        &mut self,
        x: [&[F]; 2],
        y: [&[F]; 2],
        out: &mut RssVec<F>,
    ) -> Result<(), EngineError> {
        let n = x[0].len();
        for len in [x[1].len(), y[0].len(), y[1].len()] {
            if len != n {
                return Err(EngineError::LengthMismatch {
                    expected: n,
                    got: len,
                });
            }
        }
        let at = out.first.len();
        if out.second.len() != at {
            return Err(EngineError::LengthMismatch {
                expected: at,
                got: out.second.len(),
            });
        }
        out.first.resize(at + n, F::ZERO);
        let t = &mut out.first[at..];
        F::local_product_slice(t, x[0], x[1], y[0], y[1]);
        let mut scratch = Vec::new();
        self.prss.add_zero_share(t, &mut scratch);
        self.send_elems(Direction::Prev, t)?;
        let bytes = self.recv_bytes(Direction::Next, F::encoded_len(n))?;
        F::decode_append(&bytes, n, &mut out.second).map_err(|source| {
            self.malformed(EngineError::Decode {
                peer: self.id.neighbour(Direction::Next),
                source,
            })
        })
    }

    /// Input sharing by `owner` (PROTOCOLS.md §1.4, one-round variant): the owner takes the
    /// components it shares with each neighbour from the pairwise PRGs and sends the third
    /// component `x - x_i - x_{i+1}` to both neighbours. Other parties pass `None`.
    /// Cost: the owner sends `n` elements to each neighbour; one round.
    pub fn input<F: Encode + Random + Bulk>(
        &mut self,
        owner: PartyId,
        values: Option<&[F]>,
        n: usize,
    ) -> Result<RssVec<F>, EngineError> {
        let me = self.id;
        if me == owner {
            let values = values.ok_or(EngineError::LengthMismatch {
                expected: n,
                got: 0,
            })?;
            if values.len() != n {
                return Err(EngineError::LengthMismatch {
                    expected: n,
                    got: values.len(),
                });
            }
            // x_i (shared with prev) and x_{i+1} (shared with next).
            let r = self.prss.random_rss::<F>(n);
            let third: Vec<F> = values
                .iter()
                .zip(r.first.iter().zip(&r.second))
                .map(|(v, (a, b))| *v - *a - *b)
                .collect();
            self.send_elems(Direction::Next, &third)?;
            self.send_elems(Direction::Prev, &third)?;
            Ok(r)
        } else if me == owner.next() {
            // Holds (x_{j+1}, x_{j+2}): x_{j+1} from the PRG shared with the owner (prev).
            let mut first = vec![F::ZERO; n];
            self.prss.prev.fill(&mut first);
            let second = self.recv_elems(Direction::Prev, n)?;
            Ok(RssVec { first, second })
        } else {
            // me == owner.prev(): holds (x_{j+2}, x_j); x_j from the PRG shared with the owner (next).
            let mut second = vec![F::ZERO; n];
            self.prss.next.fill(&mut second);
            let first = self.recv_elems(Direction::Next, n)?;
            Ok(RssVec { first, second })
        }
    }

    /// Stops with a security abort: sends an abort notice (an empty message) to both
    /// neighbours, so that a party waiting for this one aborts too instead of timing out, and
    /// returns the error. Send failures are ignored (the peer may be gone already).
    pub fn abort(&mut self, reason: AbortReason) -> EngineError {
        for dir in Direction::BOTH {
            let _ = self.net.send(dir, Vec::new());
        }
        EngineError::Abort(reason)
    }

    /// Compare-view (PROTOCOLS.md §5.1) after a successful local check; see
    /// [`Party::compare_view_after`].
    pub fn compare_view(&mut self) -> Result<(), EngineError> {
        self.compare_view_after(Ok(()))
    }

    /// Compare-view carrying this party's local check result, then reset of both views.
    ///
    /// Sends `H(V_prev)` to the next party and `H(V_next)` to the previous one (32 bytes
    /// each, one round) and aborts unless the digest from `P_{i-1}` equals `H(V_next)` and
    /// the one from `P_{i+1}` equals `H(V_prev)`. \[DEV\] PROTOCOLS.md §5.1 sends only the first
    /// digest; the second (32 bytes to prev) makes *both* honest parties see any
    /// inconsistency in what the corrupt party sent, since the two honest parties are
    /// neighbours and compare the same pair of streams in both directions. If `local` is an
    /// error, the digests sent are replaced by unrelated values, so both neighbours abort as
    /// well, and the party aborts with that reason. A no-op for models without views (but a
    /// local failure still aborts).
    pub fn compare_view_after(
        &mut self,
        local: Result<(), AbortReason>,
    ) -> Result<(), EngineError> {
        use sha2::{Digest, Sha256};
        let Some([dp, dn]) = self.model.take_view_digests() else {
            return local.map_err(|r| self.abort(r));
        };
        let poison = |d: [u8; 32]| -> Vec<u8> {
            if local.is_ok() {
                d.to_vec()
            } else {
                Sha256::new()
                    .chain_update(b"triskele local check failed")
                    .chain_update(d)
                    .finalize()
                    .to_vec()
            }
        };
        self.send_bytes(Direction::Next, poison(dp))?;
        self.send_bytes(Direction::Prev, poison(dn))?;
        let from_prev = self.recv_bytes(Direction::Prev, 32)?;
        let from_next = self.recv_bytes(Direction::Next, 32)?;
        if let Err(r) = local {
            return Err(self.abort(r));
        }
        if from_prev != dn {
            let peer = self.id.prev();
            return Err(self.abort(AbortReason::ViewMismatch { peer }));
        }
        if from_next != dp {
            let peer = self.id.next();
            return Err(self.abort(AbortReason::ViewMismatch { peer }));
        }
        Ok(())
    }

    /// `n` public random coins in `GF(2^64)` (PROTOCOLS.md §5.2): a random sharing opened with
    /// the hashed opening; 8 bytes per coin to the next party, one round. Unpredictable before
    /// the opening; an inconsistent opening is caught by the next compare-view.
    pub fn coins(&mut self, n: usize) -> Result<Vec<triskele_field::Gf2p64>, EngineError> {
        self.coins_in(n)
    }

    /// [`Party::coins`] in any field.
    pub fn coins_in<F: Encode + Random + Bulk>(&mut self, n: usize) -> Result<Vec<F>, EngineError> {
        let r = self.prss.random_rss::<F>(n);
        self.open(&r)
    }

    /// Broadcast of `len` bytes by `owner` (PROTOCOLS.md §5.1): the owner passes `Some(msg)`
    /// and sends it to both neighbours; the others receive it and absorb it into the view of
    /// the owner's side (`V_prev` if the owner is the previous party, else `V_next`), so that
    /// the compare-view detects an owner that sent different messages.
    pub fn broadcast(
        &mut self,
        owner: PartyId,
        msg: Option<&[u8]>,
        len: usize,
    ) -> Result<Vec<u8>, EngineError> {
        if owner == self.id {
            let msg = msg.ok_or(EngineError::LengthMismatch {
                expected: len,
                got: 0,
            })?;
            if msg.len() != len {
                return Err(EngineError::LengthMismatch {
                    expected: len,
                    got: msg.len(),
                });
            }
            for dir in Direction::BOTH {
                self.send_bytes(dir, msg.to_vec())?;
            }
            return Ok(msg.to_vec());
        }
        let (dir, view) = if owner == self.id.prev() {
            (Direction::Prev, View::Prev)
        } else {
            (Direction::Next, View::Next)
        };
        let bytes = self.recv_bytes(dir, len)?;
        self.model.absorb(view, &bytes);
        Ok(bytes)
    }

    /// Zero check by hashing (PROTOCOLS.md §5.1): absorbs `z_i` into `V_prev` and
    /// `-(z_i + z_{i+1})` into `V_next`; the next compare-view passes only if every shared
    /// value is zero. No communication.
    pub fn absorb_zero_check<F: Encode + Bulk>(&mut self, z: &RssVec<F>) {
        let mut own = Vec::with_capacity(F::encoded_len(z.len()));
        F::encode_slice(&z.first, &mut own);
        self.model.absorb(View::Prev, &own);
        let neg: Vec<F> = z
            .first
            .iter()
            .zip(&z.second)
            .map(|(a, b)| -(*a + *b))
            .collect();
        own.clear();
        F::encode_slice(&neg, &mut own);
        self.model.absorb(View::Next, &own);
    }

    /// Opens outputs: the (hashed) RSS opening, followed in the malicious model by a
    /// compare-view, so that no party returns a value before every party's view of the
    /// opening agreed (PROTOCOLS.md §5.8).
    pub fn open_output<F: Encode + Bulk>(&mut self, x: &RssVec<F>) -> Result<Vec<F>, EngineError> {
        let out = self.open(x)?;
        if M::MALICIOUS {
            self.compare_view()?;
        }
        Ok(out)
    }

    /// Checks that all parties run with the same parameters: sends a digest of `params` to
    /// both neighbours and compares. Use at setup (counted in the setup phase).
    pub fn check_parameters(&mut self, params: &str) -> Result<(), EngineError> {
        let params = format!("{params} model={} {}", M::NAME, self.model.parameters());
        check_agreement(
            &mut self.net,
            &params,
            "run parameters (protocol, batch size, key size, version or the malicious model's verification segment)",
        )
    }
}

/// Checks that both neighbours on `net` hold the same `params`: sends a digest of them to
/// both and compares what they sent (counted in the setup phase). A neighbour whose digest
/// differs is named in [`EngineError::ParameterMismatch`] with `what`.
pub fn check_agreement(net: &mut Network, params: &str, what: &str) -> Result<(), EngineError> {
    use sha2::{Digest, Sha256};
    let d = Sha256::digest(params.as_bytes()).to_vec();
    let prev_phase = net.phase();
    net.set_phase(Phase::Setup);
    for dir in Direction::BOTH {
        net.send(dir, d.clone())?;
    }
    for dir in Direction::BOTH {
        if net.recv(dir)? != d {
            return Err(EngineError::ParameterMismatch {
                peer: net.peer(dir),
                what: what.into(),
            });
        }
    }
    net.set_phase(prev_phase);
    Ok(())
}

impl<M: SecurityModel> Party<M> {
    /// Verifies the records now if the model says a segment is due (the malicious model:
    /// once its records take the segment size, see [`crate::model::set_verify_segment`]);
    /// otherwise does nothing. Called by [`Party::mul`] after recording, and by protocols at
    /// points where all their records so far are complete (e.g. after an S-box layer).
    ///
    /// A segment is Protocol 2 over everything recorded so far, exactly as in
    /// [`Party::verify_recorded`] but without the compare-view: its local result is kept by
    /// the model and carried by the compare-view of the finalize check, so a failed segment
    /// makes every honest party abort there, before any output. Its messages are counted in
    /// the finalize phase (the network phase is switched for its duration) and its time is
    /// reported by [`SecurityModel::segment_time`]. The records' memory is reused, so a long
    /// run holds at most about one segment of records instead of all of them.
    pub fn checkpoint(&mut self) -> Result<(), EngineError> {
        if self.checking {
            return Ok(());
        }
        let Some(mut rec) = self.model.take_due_records() else {
            return Ok(());
        };
        self.checking = true;
        let t0 = Instant::now();
        let ok = self.in_phase(Phase::Finalize, |p| p.verify_records(&mut rec, false));
        let time = t0.elapsed();
        self.checking = false;
        self.model.segment_verified(rec, ok?, time);
        Ok(())
    }

    /// Protocol 2 over `rec` (one run in `GF(2^64)` for the binary sources, one in `F_p` if
    /// any [`triskele_field::Fp`] products were recorded, one in the run-time `F_p` if any
    /// [`triskele_field::FpRt`] products were, with the modulus installed now): this party's
    /// local result, without a compare-view.
    fn verify_records(&mut self, rec: &mut Recorder, last: bool) -> Result<bool, EngineError> {
        let g4 = rec.take_gf2p4_bytes();
        let mut parked = core::mem::take(&mut self.parked);
        let ok = self.verify_binary(rec, &g4, &mut parked, last);
        self.parked = parked;
        rec.restore_gf2p4(g4);
        let mut ok = ok?;
        let fp: [&dyn TripleSource<triskele_field::Fp>; 2] = [&rec.fp, &rec.fp_chained];
        ok &= self.verify_sources(fp)?;
        let fp_rt: [&dyn TripleSource<triskele_field::FpRt>; 2] = [&rec.fp_rt, &rec.fp_rt_chained];
        ok &= self.verify_sources(fp_rt)?;
        Ok(ok)
    }

    /// Protocol 2 over the binary sources of `rec`, its `GF(2^4)` triples given as the bytes
    /// `g4` ([`Recorder::take_gf2p4_bytes`]), in runs of at most the model's run size.
    fn verify_binary(
        &mut self,
        rec: &Recorder,
        g4: &Triples<triskele_field::Gf2p8>,
        parked: &mut Vec<crate::verify::Parked<triskele_field::Gf2p64>>,
        last: bool,
    ) -> Result<bool, EngineError> {
        // The bits first, so that runs (whose lengths are multiples of 8) start on whole
        // bytes of them: the k-ary first level then reads them in place.
        let fixed: [&dyn TripleSource<triskele_field::Gf2p64>; 5] =
            [&rec.bits, &rec.gf2p8, g4, &rec.tower, &rec.gf2p64];
        // The compact stores whose lengths are whole chunks of the first level first, so
        // that each starts on a chunk (the aligned layouts of repeated factors,
        // `TripleSource::shared_part`), whatever shorter stores (a key schedule's) were
        // recorded before them.
        let custom = rec
            .custom
            .iter()
            .map(|s| &**s as &dyn TripleSource<triskele_field::Gf2p64>);
        let (whole, other): (Vec<_>, Vec<_>) =
            custom.partition(|s| s.len().is_multiple_of(crate::verify::SHARED_ALIGN));
        let sources: Vec<_> = fixed
            .into_iter()
            .chain(whole)
            .chain(other)
            .filter(|s| !s.is_empty())
            .collect();
        // The sources by kind (`kind_groups`), each group in runs of at most the run size
        // (`run_size_for`, which depends on the group's kind).
        let groups: Vec<Concat<'_, triskele_field::Gf2p64>> =
            kind_groups(sources, crate::verify::OCTAL_MIN_LEN)
                .into_iter()
                .map(Concat::new)
                .collect();
        // The runs, each a window of the records or a concatenation of pieces; their last
        // levels and final checks go side by side (`verify_runs`).
        type Src<'a> = &'a dyn TripleSource<triskele_field::Gf2p64>;
        let runs: Vec<_> = groups
            .iter()
            .flat_map(|g| paired_runs(g, crate::verify::run_size_for(g, self.model.run_size())))
            .collect();
        let joined: Vec<Option<Concat<'_, triskele_field::Gf2p64>>> = runs
            .iter()
            .map(|pieces| {
                (pieces.len() > 1).then(|| Concat::new(pieces.iter().map(|w| w as Src).collect()))
            })
            .collect();
        let srcs = runs
            .iter()
            .zip(&joined)
            .filter_map(|(pieces, cat)| match (&pieces[..], cat) {
                (_, Some(cat)) => Some(cat as Src),
                ([one], None) => Some(one as Src),
                _ => None,
            });
        crate::verify::verify_runs_parked(self, srcs, parked, last)
    }

    /// One run of Protocol 2 over the non-empty sources among `srcs`, one after the other
    /// (none if all are empty: `true`).
    fn verify_sources<V: VerifyField>(
        &mut self,
        srcs: [&dyn TripleSource<V>; 2],
    ) -> Result<bool, EngineError> {
        let parts: Vec<_> = srcs.into_iter().filter(|s| !s.is_empty()).collect();
        match parts[..] {
            [] => Ok(true),
            [one] => verify(self, one),
            _ => verify(self, &Concat::new(parts)),
        }
    }
}

impl Party<Malicious> {
    /// The finalize checks of the Verify-based protocols (PROTOCOLS.md §5.6, §5.8): Protocol 2
    /// over all records not yet verified in a segment ([`Party::checkpoint`]), then a
    /// compare-view carrying the result of this check and of every segment. Every party
    /// returns [`AbortReason::MultiplicationCheck`] or another abort unless all checks passed
    /// at all parties. The recorded triples are consumed.
    pub fn verify_recorded(&mut self) -> Result<(), EngineError> {
        let mut rec = self.model.take_recorder();
        let ok = self.verify_records(&mut rec, true)? && !self.model.segment_failed();
        drop(rec);
        self.compare_view_after(if ok {
            Ok(())
        } else {
            Err(AbortReason::MultiplicationCheck)
        })
    }

    /// Runs Protocol 2 on an explicit list of triples and then a compare-view (for protocols
    /// that assemble their own relations, and for tests).
    pub fn verify_triples<V: VerifyField>(
        &mut self,
        src: &dyn TripleSource<V>,
    ) -> Result<(), EngineError> {
        let ok = verify(self, src)?;
        self.compare_view_after(if ok {
            Ok(())
        } else {
            Err(AbortReason::MultiplicationCheck)
        })
    }
}
