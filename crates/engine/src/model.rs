//! Security models as a type parameter of the engine.
//!
//! The online arithmetic is the same code for every model; a model only adds what must be
//! remembered for later verification. [`SemiHonest`] records nothing. The malicious model
//! (active security with abort) keeps hashed views of everything opened (PROTOCOLS.md §5.1)
//! and records multiplication triples for the batched check of the finalize phase.

use core::fmt::Debug;

use triskele_field::Field;
use triskele_share::RssVec;

/// What the engine tells the security model while a protocol runs.
pub trait SecurityModel: Default + Debug + Send + 'static {
    /// Name used in logs and parameter checks.
    const NAME: &'static str;
    /// True for active security with abort.
    const MALICIOUS: bool;

    /// An RSS opening happened: `from_prev` is what `P_{i-1}` sent, `own_next` is this party's
    /// copy of what `P_{i+1}` received from `P_{i-1}` (PROTOCOLS.md §5.1).
    fn on_open(&mut self, from_prev: &[u8], own_next: &[u8]) {
        let _ = (from_prev, own_next);
    }

    /// A multiplication `z = x * y` happened; malicious models record it for verification.
    fn on_product<F: Field>(&mut self, x: &RssVec<F>, y: &RssVec<F>, z: &RssVec<F>) {
        let _ = (x, y, z);
    }
}

/// Privacy against one semi-honest party; nothing is recorded.
#[derive(Debug, Default, Clone, Copy)]
pub struct SemiHonest;

impl SecurityModel for SemiHonest {
    const NAME: &'static str = "semi-honest";
    const MALICIOUS: bool = false;
}
