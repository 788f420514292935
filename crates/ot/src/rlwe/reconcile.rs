//! Ding's key reconciliation (Ding, Xie, Lin 2012), as used by BDGM19 and ROTed.
//!
//! For `x` in `Z_q` with centered representative `c`, the signal (hint) is
//! `Sig(x) = 0` if `c` lies in `E = [-floor(q/4), round(q/4)] = [-3840, 3840]`
//! and 1 otherwise; the key bit is `Mod2(x, w) = ((x + w (q-1)/2) mod q) mod 2`
//! with the centered representative. If `x - y` is even and
//! `|x - y| < q/4 - 1 = 3839`, then `Mod2(x, Sig(y)) = Mod2(y, Sig(y))`: the
//! hint moves `y` into the middle of `(-q/2, q/2)` so adding the small even
//! difference neither wraps around nor changes the parity.
//!
//! In the RLWE exchange both sides' keys differ by `2(e_R s_S - e_S s_R +
//! e'_S - e'_R)`; with sigma = 2 and n = 512 its coefficients have standard
//! deviation about `2 * sqrt(2 * 512 * 16) ~ 256`, so the margin of 3839 is
//! 15 standard deviations: a per-coefficient failure probability below
//! `2^-160` (the test measures the actual distance).

use super::encode::HINT_BYTES;
use super::ntt::{on_backend, Backend};
use super::ring::{barrett, caddq, csubq, Poly, HALF_Q, N};
use zeroize::{Zeroize, ZeroizeOnDrop};

/// `floor(q/4)`: the edge of the region `E`.
const QUARTER: i16 = 3840;

/// One reconciliation bit per coefficient.
#[derive(Clone, PartialEq, Eq, Debug)]
pub struct Hint(pub(crate) [u8; HINT_BYTES]);

/// A reconciled 512-bit key.
#[derive(Clone, PartialEq, Eq, Zeroize, ZeroizeOnDrop)]
pub struct ReconciledKey(pub(crate) [u8; N / 8]);

impl core::fmt::Debug for ReconciledKey {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str("ReconciledKey(..)")
    }
}

impl Hint {
    /// The packed bits (bit `i` of the vector is bit `i % 8` of byte `i / 8`).
    pub fn as_bytes(&self) -> &[u8; HINT_BYTES] {
        &self.0
    }

    /// From packed bits; every bit pattern is valid.
    pub fn from_bytes(b: &[u8; HINT_BYTES]) -> Self {
        Hint(*b)
    }

    /// Constant-time selection: `a` if `bit == 0`, else `b`.
    pub(crate) fn select(a: &Hint, b: &Hint, bit: u8) -> Hint {
        let mask = 0u8.wrapping_sub(bit & 1);
        let mut out = [0u8; HINT_BYTES];
        for ((o, &x), &y) in out.iter_mut().zip(a.0.iter()).zip(b.0.iter()) {
            *o = x ^ ((x ^ y) & mask);
        }
        Hint(out)
    }
}

impl ReconciledKey {
    /// The key bits.
    pub fn as_bytes(&self) -> &[u8; N / 8] {
        &self.0
    }
}

/// Centered representative of a canonical value in `[0, q)`.
#[inline(always)]
fn center(x: i16) -> i16 {
    // x > (q-1)/2  <=>  HALF_Q - x < 0
    x - (super::ring::Q & ((HALF_Q - x) >> 15))
}

/// Canonical `[0, q)` representative of a coefficient in `(-q, q)`.
#[inline(always)]
fn canonical(x: i16) -> i16 {
    caddq(barrett(x))
}

/// Lanes per block of the reconciliation loops: 32 coefficients, 4 bytes of
/// hint or key bits.
pub(crate) const BLOCK: usize = 32;

/// Moving sign bits between 16-bit lanes and packed bits, one block at a
/// time (bit `j` of byte `k` is lane `8 k + j`): the part of the
/// reconciliation loops that has a backend of its own.
pub(crate) trait SignBits: Copy {
    /// Bit `i` of the result is the sign bit of `lanes[i]`.
    fn pack(self, lanes: &[i16; BLOCK]) -> [u8; BLOCK / 8];
    /// Lane `i` is `-1` if bit `i` of `bits` is set, else `0`.
    fn masks(self, bits: &[u8; BLOCK / 8], out: &mut [i16; BLOCK]);
}

/// The portable [`SignBits`].
#[derive(Clone, Copy, Debug)]
pub(crate) struct PortableBits;

impl SignBits for PortableBits {
    #[inline(always)]
    fn pack(self, lanes: &[i16; BLOCK]) -> [u8; BLOCK / 8] {
        let mut out = [0u8; BLOCK / 8];
        for (o, chunk) in out.iter_mut().zip(lanes.as_chunks::<8>().0) {
            let mut b = 0u8;
            for (j, &x) in chunk.iter().enumerate() {
                b |= (((x as u16) >> 15) as u8) << j;
            }
            *o = b;
        }
        out
    }

    #[inline(always)]
    fn masks(self, bits: &[u8; BLOCK / 8], out: &mut [i16; BLOCK]) {
        for (chunk, &b) in out.as_chunks_mut::<8>().0.iter_mut().zip(bits.iter()) {
            for (j, x) in chunk.iter_mut().enumerate() {
                *x = -i16::from((b >> j) & 1);
            }
        }
    }
}

/// `Sig(k)` for every coefficient of `k` (any `i16`), packed (generic body:
/// the AVX2 and AVX-512 backends run it in `lanes_avx2.rs` and
/// `lanes_avx512.rs` with their [`SignBits`]).
#[inline(always)]
pub(crate) fn signal_body<B: SignBits>(bits: B, k: &[i16; N]) -> [u8; HINT_BYTES] {
    let mut out = [0u8; HINT_BYTES];
    let mut lanes = [0i16; BLOCK];
    let blocks = out.as_chunks_mut::<{ BLOCK / 8 }>().0;
    for (o, c) in blocks.iter_mut().zip(k.as_chunks::<BLOCK>().0) {
        for (l, &x) in lanes.iter_mut().zip(c.iter()) {
            let c = center(canonical(x));
            let m = c >> 15;
            // Negative (sign bit set) iff |c| > QUARTER.
            *l = QUARTER - ((c ^ m) - m);
        }
        *o = bits.pack(&lanes);
    }
    out
}

/// `Mod2(k, hint)` for every coefficient of `k` (any `i16`), packed
/// (generic body, as [`signal_body`]). The lanes carry key bits and are
/// wiped.
#[inline(always)]
pub(crate) fn extract_body<B: SignBits>(
    bits: B,
    k: &[i16; N],
    hint: &[u8; HINT_BYTES],
) -> [u8; N / 8] {
    let mut out = [0u8; N / 8];
    let mut lanes = [0i16; BLOCK];
    let blocks = out.as_chunks_mut::<{ BLOCK / 8 }>().0;
    for ((o, c), h) in blocks
        .iter_mut()
        .zip(k.as_chunks::<BLOCK>().0)
        .zip(hint.as_chunks::<{ BLOCK / 8 }>().0)
    {
        bits.masks(h, &mut lanes);
        for (l, &x) in lanes.iter_mut().zip(c.iter()) {
            let v = center(csubq(canonical(x) + (*l & HALF_Q)));
            // The parity moves to the sign bit.
            *l = v << 15;
        }
        *o = bits.pack(&lanes);
    }
    lanes = [0; BLOCK];
    core::hint::black_box(&mut lanes);
    out
}

/// [`signal_body`] on `backend`: AVX-512, else AVX2, else portable.
fn signal_on(backend: Backend, k: &[i16; N]) -> [u8; HINT_BYTES] {
    on_backend!(backend, |t| t.signal(k), signal_body(PortableBits, k))
}

/// [`extract_body`] on `backend`: AVX-512, else AVX2, else portable.
fn extract_on(backend: Backend, k: &[i16; N], hint: &[u8; HINT_BYTES]) -> [u8; N / 8] {
    on_backend!(
        backend,
        |t| t.extract(k, hint),
        extract_body(PortableBits, k, hint)
    )
}

/// `Sig(k)` for every coefficient.
pub fn signal(k: &Poly) -> Hint {
    Hint(signal_on(Backend::current(), &k.0))
}

/// `Mod2(k, hint)` for every coefficient, packed into 64 bytes.
pub fn extract(k: &Poly, hint: &Hint) -> ReconciledKey {
    ReconciledKey(extract_on(Backend::current(), &k.0, &hint.0))
}

#[cfg(test)]
mod tests {
    #![allow(
        clippy::unwrap_used,
        clippy::expect_used,
        clippy::panic,
        clippy::needless_range_loop
    )]
    use super::super::ring::{N, Q};
    use super::*;

    fn single(x: i16) -> Poly {
        let mut c = [0i16; N];
        c[0] = x;
        Poly(c)
    }

    /// Every y in Z_q, 512 at a time.
    fn all_values() -> Vec<Poly> {
        (0..(Q as usize).div_ceil(N))
            .map(|chunk| {
                let mut c = [0i16; N];
                for (i, x) in c.iter_mut().enumerate() {
                    *x = ((chunk * N + i) % Q as usize) as i16;
                }
                Poly(c)
            })
            .collect()
    }

    fn bit(k: &ReconciledKey, i: usize) -> u8 {
        (k.0[i / 8] >> (i % 8)) & 1
    }

    #[test]
    fn exhaustive_agreement_within_margin() {
        // For every y and even offsets d with |d| <= 3838, both sides agree.
        let offsets: Vec<i16> = (-3838i16..=3838)
            .step_by(2 * 101)
            .chain([-2, 2, 3838])
            .collect();
        for y in all_values() {
            let hy = signal(&y);
            let ky = extract(&y, &hy);
            for &d in &offsets {
                let mut x = y.clone();
                for c in x.0.iter_mut() {
                    *c = caddq(barrett(*c + d));
                }
                assert_eq!(extract(&x, &hy), ky, "d={d}");
            }
        }
    }

    #[test]
    fn signal_region() {
        for (x, want) in [
            (0, 0),
            (3840, 0),
            (3841, 1),
            (Q - 3840, 0),
            (Q - 3841, 1),
            (7680, 1),
        ] {
            assert_eq!(signal(&single(x)).0[0] & 1, want, "x={x}");
        }
        // Negative representatives are accepted too.
        assert_eq!(signal(&single(-3840)).0[0] & 1, 0);
        assert_eq!(signal(&single(-3841)).0[0] & 1, 1);
    }

    #[test]
    fn key_bits_are_balanced() {
        let mut ones = 0u32;
        for y in all_values() {
            let k = extract(&y, &signal(&y));
            ones += (0..N).map(|i| u32::from(bit(&k, i))).sum::<u32>();
        }
        let total = (Q as usize).div_ceil(N) * N;
        let frac = f64::from(ones) / total as f64;
        assert!((frac - 0.5).abs() < 0.01, "{frac}");
    }

    #[test]
    fn bit_packing_round_trips() {
        let mut lanes = [0i16; BLOCK];
        for (i, x) in lanes.iter_mut().enumerate() {
            *x = if (i * 7 + i / 3) % 2 == 1 {
                -1 - i as i16
            } else {
                i as i16
            };
        }
        let packed = PortableBits.pack(&lanes);
        for i in 0..BLOCK {
            assert_eq!((packed[i / 8] >> (i % 8)) & 1, u8::from(lanes[i] < 0));
        }
        let mut masks = [0i16; BLOCK];
        PortableBits.masks(&packed, &mut masks);
        for i in 0..BLOCK {
            assert_eq!(masks[i], if lanes[i] < 0 { -1 } else { 0 });
        }
    }

    /// The signal and extraction of every backend this CPU runs (lane
    /// arithmetic and bit packing) agree with the portable ones on random
    /// coefficients over the whole `i16` range, on `(-q, q)`, and on the
    /// extremes and region edges.
    #[test]
    fn reconciliation_backends_agree() {
        for backend in super::super::ntt::tests::skip_missing() {
            check_backend(backend);
        }
    }

    fn check_backend(backend: Backend) {
        let edges = [
            i16::MIN,
            i16::MAX,
            -(Q - 1),
            Q - 1,
            0,
            1,
            -1,
            QUARTER,
            QUARTER + 1,
            -QUARTER,
            -QUARTER - 1,
            HALF_Q,
            HALF_Q + 1,
            -HALF_Q,
            -HALF_Q - 1,
            Q - QUARTER,
            Q - QUARTER - 1,
        ];
        let mut state = 0x9e37_79b9_7f4a_7c15u64;
        for round in 0..300 {
            let mut k = [0i16; N];
            let mut hint = [0u8; HINT_BYTES];
            for (i, x) in k.iter_mut().enumerate() {
                state = state
                    .wrapping_mul(6_364_136_223_846_793_005)
                    .wrapping_add(1);
                let w = (state >> 32) as u32;
                *x = match round % 3 {
                    0 => w as i16,
                    1 => (w % (2 * Q as u32 - 1)) as i16 - (Q - 1),
                    _ => edges[(w as usize + i) % edges.len()],
                };
            }
            for b in hint.iter_mut() {
                state = state
                    .wrapping_mul(6_364_136_223_846_793_005)
                    .wrapping_add(1);
                *b = (state >> 56) as u8;
            }
            assert_eq!(
                signal_on(backend, &k),
                signal_body(PortableBits, &k),
                "{backend}, round {round}"
            );
            assert_eq!(
                extract_on(backend, &k, &hint),
                extract_body(PortableBits, &k, &hint),
                "{backend}, round {round}"
            );
        }
    }

    /// A [`SignBits`] implementation packs and expands like the portable
    /// one, on random lanes and on the extremes.
    #[cfg(target_arch = "x86_64")]
    fn check_sign_bits<B: SignBits>(bits: B) {
        let mut state = 12u64;
        for round in 0..400 {
            let lanes: [i16; BLOCK] = core::array::from_fn(|i| {
                state = state
                    .wrapping_mul(6_364_136_223_846_793_005)
                    .wrapping_add(1);
                let w = (state >> 32) as u32;
                match round % 2 {
                    0 => w as i16,
                    _ => [i16::MIN, i16::MAX, -1, 0][(w as usize + i) % 4],
                }
            });
            let packed = bits.pack(&lanes);
            assert_eq!(packed, PortableBits.pack(&lanes), "round {round}");
            let (mut a, mut b) = ([0i16; BLOCK], [0i16; BLOCK]);
            bits.masks(&packed, &mut a);
            PortableBits.masks(&packed, &mut b);
            assert_eq!(a, b, "round {round}");
        }
    }

    /// The bit packing of every backend this CPU runs.
    #[test]
    #[cfg(target_arch = "x86_64")]
    fn sign_bits_backends_agree() {
        for backend in super::super::ntt::tests::skip_missing() {
            if let Some(t) = backend.avx512() {
                check_sign_bits(t);
            } else if let Some(t) = backend.avx2() {
                check_sign_bits(t);
            }
        }
    }

    #[test]
    fn select_hint() {
        let a = Hint([0x0f; HINT_BYTES]);
        let b = Hint([0xf0; HINT_BYTES]);
        assert_eq!(Hint::select(&a, &b, 0), a);
        assert_eq!(Hint::select(&a, &b, 1), b);
    }
}
