//! `mal-lut256-ss` and `mal-lut256-ss-opt`: the (3,3)-LUT-256 protocol with active security —
//! Protocol 6 with Protocol 7 `VerifySbox` of MAESTRO (Morita et al., USENIX Security '25,
//! ePrint 2024/1317); PROTOCOLS.md §4.5, §5.5, §5.7, §5.8. Preprocessing, additive opening and
//! lookup are those of [`super::lut256_ss`].
//!
//! # Preprocessing
//!
//! Two Protocol-8 one-hot vectors of length 16 per inversion, batched in one call: 2 rounds,
//! `2 ⌈2n/16⌉ · 11` bytes to `P_{i-1}` (AES-128: 440 B/block). The products are recorded for
//! the finalize check:
//!
//! * `mal-lut256-ss` ([`MalLut256Ss::plain`]): every bit product, **22 bit triples per S-box**;
//! * `mal-lut256-ss-opt` ([`MalLut256Ss::opt`], CSV `mal-lut256-ss-opt`): the two packed
//!   "ohv" relations per Protocol-8 instance (§5.5), **4 triples per S-box**, checked in
//!   `GF(2^8)` and lifted by `E_8` (\[DEV\], `super::ohv16`: the byte path of `Verify`).
//!
//! # Online (PROTOCOLS.md §5.7)
//!
//! The AES layer tells each layer how it is linked to its neighbours
//! ([`super::LayerLink`]). Within a cipher the state is additively shared (first component of
//! the [`RssVec`]) between layers, and every layer also yields a replicated sharing of its input:
//!
//! * **Fresh input** (layer 1 of a cipher; key-schedule and single layers): open `c = x + r`
//!   with the hashed RSS opening (1 B to `P_{i+1}`); `[[x]]` is the input itself.
//! * **Chained input** (layers 2..`N_r`): `c^(i) = s^(i) + α_i + r_i` to both neighbours (1 B
//!   each), \[DEV\] absorbed into the views (the share from `P_{i-1}` into `V_prev`, the one
//!   from `P_{i+1}` into `V_next`), so a party that sends different shares to its two
//!   neighbours fails the compare-view. Then `[[x_{ρ+1}]] = c + [[r]]` (public `c` added to
//!   both components, §1.3) and `[[y_ρ]] = undo([[x_{ρ+1}]])`: the AES layer's map that undoes
//!   the public steps between the layers (affine constant, ShiftRows, MixColumns, round key;
//!   for encryption or decryption). The pair `([[x_ρ]], [[y_ρ]])` of the previous layer is
//!   recorded.
//! * Lookup (Protocol 4): `⟨y⟩ = Σ_j E[j] inv(c ⊕ j)`, additive.
//! * **Replicated output** (the last layer of a cipher; key-schedule and single layers):
//!   reshare `⟨y⟩` with a zero-share (1 B to `P_{i-1}`) and record `([[x]], [[y]])`. Otherwise
//!   `[[x]]` waits for the next layer.
//!
//! Cost per block: AES-128 160 B to next + 160 B to prev, **11 rounds** (1 + 9 + 1), 20
//! messages per channel; AES-256 224 + 224 B, 15 rounds. Key-schedule layers: 2 B per S-box, 2
//! rounds. A key schedule plus a cipher sends exactly 2 messages per layer in total
//! ([`crate::aes_tamper`] counts on it).
//!
//! # VerifySbox (Protocol 7)
//!
//! Each recorded pair gives two `GF(2^8)` triples, lifted by `E_8`:
//! `([[x^2]], [[y]], [[x]])` and `([[x]], [[y^2]], [[y]])` (squares are local), i.e. the claims
//! `x^2 y = x` and `x y^2 = y`. **2 triples per S-box.**
//!
//! *Soundness of the pair check.* In any field, `x^2 y = x` and `x y^2 = y` hold iff
//! `y = x^-1` (with `0^-1 = 0`). If `x ≠ 0`, divide the first by `x`: `x y = 1`, so
//! `y = x^-1`. If `x = 0`, the second reads `0 = y`. Conversely `x^2 x^-1 = x`,
//! `x x^-2 = x^-1`, and `(0, 0)` satisfies both. `E_8` is an injective ring homomorphism, so the
//! lifted triples hold in `GF(2^64)` iff the claims hold in `GF(2^8)`. (Checked exhaustively
//! over all 256 × 256 pairs in the tests.)
//!
//! *Why the pairs certify the layer.* `[[x_{ρ+1}]]` is a consistent sharing at the honest parties
//! (they add the same `c`, which the views certify), and `undo` is a public affine bijection
//! applied identically by all, so `y_ρ` is exactly the value the next layer consumed, including
//! any additive error the corrupt party put on its share of `⟨y_ρ⟩` or on `c^(j)`. The pair
//! check therefore forces every consumed layer output to be the inverse of the layer input.
//! The preprocessing check keeps the one-hot vectors one-hot at `r` (otherwise an error pattern
//! could make the pair check fail depending on secret data).
//!
//! # Finalize
//!
//! [`Party::verify_recorded`]: Protocol 2 over the prep triples and the VerifySbox triples,
//! `L = 176 ⌈2n/16⌉ + 2n` (plain) or `32 ⌈2n/16⌉ + 2n` (opt) for `n` S-boxes (`24 n` resp.
//! `6 n` when `8 | n`, e.g. AES-128: 3840 resp. 960 per block), in one `GF(2^64)` run,
//! followed by the compare-view (\[DEV\] §5.7: the reference compares views only after
//! opening the outputs).
//! Soundness: a wrong triple survives a run of the check with probability at most
//! `(2ℓ + 44)/2^64` (`ℓ = ⌈log2 L⌉`; `(2ℓ + 88)/2^64` for a run of bit or byte products only,
//! which folds by 32, and `(2ℓ + 4)/2^64` below the k-ary first level's `2^16` triples), and
//! all segments and runs of a batch of up to `10^6` AES-256 blocks with less than `2^-43`
//! ([`triskele_engine::verify`]); any inconsistent opening (layer-1 `c`, the
//! additive `c^(j)`, coins, `ρ`, `σ`, outputs) is caught by the compare-views with the collision
//! resistance of BLAKE3. Outputs are opened with the hashed opening and a compare-view.

use triskele_engine::{EngineError, Malicious, Party, ReshareTo};
use triskele_field::{Gf2p8, LinearMap8};
use triskele_share::RssVec;

use super::lut256_ss::{lookup, mask_rss, open_offsets, unmasked_rss, Pool};
use super::ohv16::OhvCheck;
use super::{append_mapped, append_range, LayerInput, LayerLink, LayerOutput, SboxProtocol};

/// The malicious (3,3)-LUT-256 protocol (`mal-lut256-ss` or `mal-lut256-ss-opt`, chosen by the
/// constructor).
#[derive(Debug)]
pub struct MalLut256Ss {
    check: OhvCheck,
    pool: Pool,
    /// `[[x]]` of the last layer if its output was left additive for a chained next layer.
    pending: Option<RssVec<Gf2p8>>,
}

impl MalLut256Ss {
    /// `mal-lut256-ss`: every bit product of the preprocessing recorded (22 per S-box).
    pub fn plain() -> Self {
        Self::with(OhvCheck::Products)
    }

    /// `mal-lut256-ss-opt`: the packed one-hot-vector relations (4 per S-box).
    pub fn opt() -> Self {
        Self::with(OhvCheck::Packed)
    }

    fn with(check: OhvCheck) -> Self {
        MalLut256Ss {
            check,
            pool: Pool::default(),
            pending: None,
        }
    }
}

fn misuse(what: &str) -> EngineError {
    EngineError::Unsupported(format!("mal-lut256-ss: {what}"))
}

/// Records the VerifySbox triples `(x^2, y, x)` and `(x, y^2, y)` of the pairs `([[x]], [[y]])`.
/// Written into the record store in place: the squares are formed there, and nothing else
/// is allocated.
fn record_inverse_pairs(party: &mut Party<Malicious>, x: &RssVec<Gf2p8>, y: &RssVec<Gf2p8>) {
    let n = x.len().min(y.len());
    party.model().record_with::<Gf2p8>(|st| {
        append_mapped(&mut st.x, x, 0..n, &LinearMap8::SQUARE);
        append_range(&mut st.x, x, 0..n);
        append_range(&mut st.y, y, 0..n);
        append_mapped(&mut st.y, y, 0..n, &LinearMap8::SQUARE);
        append_range(&mut st.z, x, 0..n);
        append_range(&mut st.z, y, 0..n);
    });
}

impl SboxProtocol<Malicious> for MalLut256Ss {
    /// Protocol 8 for `n` inversions with recorded products; reserves room for the `2 n`
    /// VerifySbox triples.
    fn preprocess(&mut self, party: &mut Party<Malicious>, n: usize) -> Result<(), EngineError> {
        self.pool.fill(party, n, self.check)?;
        party.model().reserve::<Gf2p8>(2 * n);
        Ok(())
    }

    /// A layer on its own: fresh input, replicated output.
    fn invert(
        &mut self,
        party: &mut Party<Malicious>,
        x: &mut RssVec<Gf2p8>,
    ) -> Result<(), EngineError> {
        self.invert_linked(party, x, LayerLink::SINGLE)
    }

    fn invert_linked(
        &mut self,
        party: &mut Party<Malicious>,
        x: &mut RssVec<Gf2p8>,
        link: LayerLink<'_>,
    ) -> Result<(), EngineError> {
        let m = x.len();
        let pre = self.pool.take(m)?;
        let (c, x_rss) = match link.input {
            LayerInput::Fresh => {
                if self.pending.is_some() {
                    return Err(misuse("a chained layer output was never consumed"));
                }
                // Hashed RSS opening of c = x + r.
                let mut masked = x.clone();
                masked.add_assign(&mask_rss(pre));
                (party.open(&masked)?, core::mem::take(x))
            }
            LayerInput::Chained(undo) => {
                let x_prev = self
                    .pending
                    .take()
                    .ok_or_else(|| misuse("chained input without a previous layer"))?;
                if x_prev.len() != m {
                    return Err(EngineError::LengthMismatch {
                        expected: x_prev.len(),
                        got: m,
                    });
                }
                let c = open_offsets(party, &x.first, pre)?;
                let x_rss = unmasked_rss(pre, &c);
                let mut y_prev = x_rss.clone();
                undo(&mut y_prev);
                record_inverse_pairs(party, &x_prev, &y_prev);
                (c, x_rss)
            }
        };
        // ⟨y⟩ = Σ_j E[j] inv(c ⊕ j), additive in the first component.
        let mut y = vec![Gf2p8(0); m];
        lookup(&mut y, pre, &c);
        match link.output {
            LayerOutput::Replicated => {
                let y = party.additive_to_rss(y, ReshareTo::Prev)?;
                record_inverse_pairs(party, &x_rss, &y);
                *x = y;
            }
            LayerOutput::Chained => {
                *x = RssVec {
                    first: y,
                    second: vec![Gf2p8(0); m],
                };
                self.pending = Some(x_rss);
            }
        }
        Ok(())
    }

    /// The state is already replicated after the last layer of a cipher.
    fn to_replicated(
        &mut self,
        _party: &mut Party<Malicious>,
        _x: &mut RssVec<Gf2p8>,
    ) -> Result<(), EngineError> {
        if self.pending.is_some() {
            return Err(misuse("the last layer's output is not replicated"));
        }
        Ok(())
    }

    /// Protocol 2 over the preprocessing and VerifySbox triples, then the compare-view.
    fn finalize(&mut self, party: &mut Party<Malicious>) -> Result<(), EngineError> {
        if self.pending.is_some() {
            return Err(misuse(
                "a layer was never verified (chained output not consumed)",
            ));
        }
        party.verify_recorded()
    }
}

#[cfg(test)]
mod tests {
    use triskele_field::Field;

    /// Protocol 7's pair check accepts exactly the inversion graph: over all 256 × 256 pairs
    /// `(x, y)`, `x^2 y = x ∧ x y^2 = y` iff `y = x^-1` (`0^-1 = 0`).
    #[test]
    fn verify_sbox_relations_hold_exactly_for_inverses() {
        use triskele_field::Gf2p8;
        let mut accepted = 0;
        for x in 0..=255u8 {
            let x = Gf2p8(x);
            for y in 0..=255u8 {
                let y = Gf2p8(y);
                let ok = x * x * y == x && x * y * y == y;
                assert_eq!(ok, y == x.inverse(), "x = {x:?}, y = {y:?}");
                accepted += usize::from(ok);
            }
        }
        assert_eq!(accepted, 256);
    }
}
