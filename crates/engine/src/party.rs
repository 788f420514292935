//! One party of the three-party engine: its links, its correlated randomness, its model.

use rand::RngCore;
use triskele_field::{Bulk, Encode, Random};
use triskele_net::{Network, Phase};
use triskele_share::{
    combine_seeds, commit_seed, local_product, verify_seed, Direction, PartyId, Prss, RssVec,
};
use zeroize::Zeroize;

use crate::error::{AbortReason, EngineError};
use crate::model::{SecurityModel, SemiHonest};

/// Which neighbour receives the local product in a reshare (PROTOCOLS.md §1.6, [REF]).
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
        })
    }

    /// A party from an already keyed PRSS (tests, single-process runs).
    pub fn from_parts(net: Network, prss: Prss) -> Self {
        Party {
            id: net.party(),
            net,
            prss,
            model: M::default(),
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

    /// Closes the links after flushing queued messages.
    pub fn shutdown(self) -> Result<(), EngineError> {
        Ok(self.net.shutdown()?)
    }

    /// Sends field elements to a neighbour (one message).
    pub fn send_elems<F: Encode>(&mut self, dir: Direction, x: &[F]) -> Result<(), EngineError> {
        Ok(self.net.send(dir, F::encode_to_vec(x))?)
    }

    /// Receives exactly `n` field elements from a neighbour (one message).
    pub fn recv_elems<F: Encode>(
        &mut self,
        dir: Direction,
        n: usize,
    ) -> Result<Vec<F>, EngineError> {
        let bytes = self.recv_bytes(dir, F::encoded_len(n))?;
        F::decode_owned(bytes, n).map_err(|source| EngineError::Decode {
            peer: self.id.neighbour(dir),
            source,
        })
    }

    /// Receives one message that must have exactly `len` bytes.
    pub fn recv_bytes(&mut self, dir: Direction, len: usize) -> Result<Vec<u8>, EngineError> {
        let bytes = self.net.recv(dir)?;
        if bytes.len() != len {
            return Err(EngineError::MessageLength {
                peer: self.id.neighbour(dir),
                expected: len,
                got: bytes.len(),
            });
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
        self.net.send(Direction::Next, msg)?;
        let bytes = self.recv_bytes(Direction::Prev, F::encoded_len(n))?;
        let mut missing = vec![F::ZERO; n];
        F::decode_slice(&bytes, &mut missing).map_err(|source| EngineError::Decode {
            peer: self.id.prev(),
            source,
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
    pub fn mul<F: Encode + Random + Bulk>(
        &mut self,
        x: &RssVec<F>,
        y: &RssVec<F>,
    ) -> Result<RssVec<F>, EngineError> {
        if x.len() != y.len() {
            return Err(EngineError::LengthMismatch {
                expected: x.len(),
                got: y.len(),
            });
        }
        let mut t = vec![F::ZERO; x.len()];
        local_product(&mut t, x, y);
        let z = self.additive_to_rss(t, ReshareTo::Prev)?;
        if M::MALICIOUS {
            self.model.on_product(x, y, &z);
        }
        Ok(z)
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

    /// Checks that all parties run with the same parameters: sends a digest of `params` to
    /// both neighbours and compares. Use at setup (counted in the setup phase).
    pub fn check_parameters(&mut self, params: &str) -> Result<(), EngineError> {
        use sha2::{Digest, Sha256};
        let d = Sha256::digest(params.as_bytes()).to_vec();
        let prev_phase = self.net.phase();
        self.net.set_phase(Phase::Setup);
        for dir in Direction::BOTH {
            self.net.send(dir, d.clone())?;
        }
        for dir in Direction::BOTH {
            let theirs = self.net.recv(dir)?;
            if theirs != d {
                return Err(EngineError::ParameterMismatch {
                    peer: self.id.neighbour(dir),
                    what: "run parameters (protocol, batch size, key size or version)".into(),
                });
            }
        }
        self.net.set_phase(prev_phase);
        Ok(())
    }
}
