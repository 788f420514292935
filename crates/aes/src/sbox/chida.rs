//! `chida`: GF(2^8) inversion by the addition chain of Chida et al. (WAHC'18),
//! PROTOCOLS.md §4.1. Four multiplications in three rounds, no preprocessing.
//!
//! Each round computes the local products with the `w`-formula of §1.6 applied to linear
//! images of the shared inputs (`w_i = f(a_i) g(b_i) + f(a_i + a_{i+1}) g(b_i + b_{i+1})`),
//! adds a zero-share and reshares towards the next party (\[REF\] direction). Cost per
//! inversion and party: 4 bytes, 3 rounds.

use std::cell::RefCell;

use rayon::prelude::*;
use triskele_engine::{EngineError, Party, ReshareTo, SecurityModel, SemiHonest};
use triskele_field::{Bulk, Field, Gf2p8, LinearMap8};
use triskele_share::RssVec;

use super::SboxProtocol;

/// The semi-honest `chida` protocol.
#[derive(Debug, Default)]
pub struct Chida;

/// Elements per work item: small enough for the scratch buffers to stay in L1.
const CHUNK: usize = 2048;

/// Per-thread scratch of [`mapped_product`]: `f(a0)`, `f(a0 + a1)` or `f(a1)`, `g(b0)`,
/// `g(b0 + b1)` of one work item (kept between calls: no zeroing per item).
struct Scratch([[Gf2p8; CHUNK]; 4]);

thread_local! {
    static SCRATCH: RefCell<Scratch> = const { RefCell::new(Scratch([[Gf2p8::ZERO; CHUNK]; 4])) };
}

/// `dst = f(x0 + x1)` (`None` = identity).
fn image_of_sum(dst: &mut [Gf2p8], x0: &[Gf2p8], x1: &[Gf2p8], f: Option<&LinearMap8>) {
    for ((d, a), b) in dst.iter_mut().zip(x0).zip(x1) {
        *d = *a + *b;
    }
    if let Some(f) = f {
        f.apply_in_place(dst);
    }
}

/// `f(x)` in `dst`, or `x` itself for the identity.
fn image<'a>(dst: &'a mut [Gf2p8], x: &'a [Gf2p8], f: Option<&LinearMap8>) -> &'a [Gf2p8] {
    match f {
        Some(f) => {
            f.apply_slice(x, dst);
            dst
        }
        None => x,
    }
}

/// Which local product [`mapped_product`] forms from the components `(a0, a1)`, `(b0, b1)`
/// of two replicated sharings: both are additive shares of the product, each for its
/// direction of the reshare.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum LocalProduct {
    /// `a0 b0 + (a0 + a1)(b0 + b1)` (the `w`-formula of §1.6, reshared to the next party).
    Chida,
    /// `a0 (b0 + b1) + a1 b0` ([`Bulk::local_product_slice`], reshared to the previous party
    /// as [`triskele_engine::Party::mul`] does).
    Araki,
}

/// The local product `form` of the images `f(a)`, `g(b)` of two sharings under GF(2)-linear
/// maps (`None` = identity), element-wise, the images formed per chunk in scratch memory
/// instead of as vectors of their own. Runs on the rayon pool in chunks.
fn mapped_product(
    out: &mut [Gf2p8],
    a: (&[Gf2p8], &[Gf2p8]),
    f: Option<&LinearMap8>,
    b: (&[Gf2p8], &[Gf2p8]),
    g: Option<&LinearMap8>,
    form: LocalProduct,
) {
    out.par_chunks_mut(CHUNK)
        .zip(a.0.par_chunks(CHUNK))
        .zip(a.1.par_chunks(CHUNK))
        .zip(b.0.par_chunks(CHUNK).zip(b.1.par_chunks(CHUNK)))
        .for_each(|(((o, a0), a1), (b0, b1))| {
            SCRATCH.with_borrow_mut(|Scratch([fa, fs, gb, gs])| {
                let n = o.len();
                let (fa, fs, gb, gs) = (&mut fa[..n], &mut fs[..n], &mut gb[..n], &mut gs[..n]);
                image_of_sum(gs, b0, b1, g);
                match form {
                    LocalProduct::Chida => {
                        image_of_sum(fs, a0, a1, f);
                        let (x, y) = (image(fa, a0, f), image(gb, b0, g));
                        Gf2p8::mul_sum2_slice(o, x, y, fs, gs);
                    }
                    LocalProduct::Araki => {
                        let (x, z, w) = (image(fa, a0, f), image(fs, a1, f), image(gb, b0, g));
                        Gf2p8::mul_sum2_slice(o, x, gs, z, w);
                    }
                }
            });
        });
}

/// Both components of `x` as slices.
pub(crate) fn parts(x: &RssVec<Gf2p8>) -> (&[Gf2p8], &[Gf2p8]) {
    (&x.first, &x.second)
}

/// One product of [`mapped_mul`]: `f(a) · g(b)` for the shared `a`, `b` (both components)
/// and local maps `f`, `g` (`None`: the identity).
pub(crate) type Piece<'a> = (
    (&'a [Gf2p8], &'a [Gf2p8]),
    Option<&'a LinearMap8>,
    (&'a [Gf2p8], &'a [Gf2p8]),
    Option<&'a LinearMap8>,
);

/// One multiplication of the concatenated products `pieces` (one message): their local
/// products `form` ([`mapped_product`]), a zero-share, and the reshare that goes with the form
/// (`Chida`: to the next party; `Araki`: to the previous one, the messages of
/// [`Party::mul`]).
pub(crate) fn mapped_mul<M: SecurityModel>(
    party: &mut Party<M>,
    pieces: &[Piece<'_>],
    form: LocalProduct,
) -> Result<RssVec<Gf2p8>, EngineError> {
    let mut w = Gf2p8::zeroed_vec(pieces.iter().map(|p| p.0 .0.len()).sum());
    let mut rest = &mut w[..];
    for &(a, f, b, g) in pieces {
        let (head, tail) = rest.split_at_mut(a.0.len());
        mapped_product(head, a, f, b, g, form);
        rest = tail;
    }
    let to = match form {
        LocalProduct::Chida => ReshareTo::Next,
        LocalProduct::Araki => ReshareTo::Prev,
    };
    party.additive_to_rss(w, to)
}

const CHIDA: LocalProduct = LocalProduct::Chida;

impl SboxProtocol<SemiHonest> for Chida {
    fn invert(
        &mut self,
        party: &mut Party<SemiHonest>,
        x: &mut RssVec<Gf2p8>,
    ) -> Result<(), EngineError> {
        let n = x.len();
        let sq = Some(&LinearMap8::SQUARE);
        let p4 = Some(&LinearMap8::POW4);
        let p16 = Some(&LinearMap8::POW16);

        // Round 1: t = x^3 = x * x^2.
        let t = mapped_mul(party, &[(parts(x), None, parts(x), sq)], CHIDA)?;

        // Round 2: x^14 = (x^3)^4 * x^2 and x^15 = (x^3)^4 * x^3, one message.
        let both = mapped_mul(
            party,
            &[
                (parts(&t), p4, parts(x), sq),
                (parts(&t), p4, parts(&t), None),
            ],
            CHIDA,
        )?;
        let (q_first, p_first) = both.first.split_at(n);
        let (q_second, p_second) = both.second.split_at(n);

        // Round 3: x^254 = (x^15)^16 * x^14.
        *x = mapped_mul(
            party,
            &[((p_first, p_second), p16, (q_first, q_second), None)],
            CHIDA,
        )?;
        Ok(())
    }
}
