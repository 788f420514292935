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

/// Packs 512 bytes, each 0 or 1, into 64 bytes (bit `j` of byte `i` is
/// element `8 i + j`): one multiplication per 8 elements.
#[inline(always)]
fn pack_bits(bits: &[u8; N]) -> [u8; N / 8] {
    let mut out = [0u8; N / 8];
    for (o, chunk) in out.iter_mut().zip(bits.chunks_exact(8)) {
        let mut w = [0u8; 8];
        w.copy_from_slice(chunk);
        let x = u64::from_le_bytes(w);
        *o = (x.wrapping_mul(0x0102_0408_1020_4080) >> 56) as u8;
    }
    out
}

/// The inverse of [`pack_bits`].
#[inline(always)]
fn unpack_bits(packed: &[u8; N / 8]) -> [u8; N] {
    let mut out = [0u8; N];
    for (chunk, &b) in out.chunks_exact_mut(8).zip(packed.iter()) {
        let v = (u64::from(b) * 0x0101_0101_0101_0101) & 0x8040_2010_0804_0201;
        let w = ((v + 0x7f7f_7f7f_7f7f_7f7f) & 0x8080_8080_8080_8080) >> 7;
        chunk.copy_from_slice(&w.to_le_bytes());
    }
    out
}

/// `Sig(k)` for every coefficient.
pub fn signal(k: &Poly) -> Hint {
    let mut bits = [0u8; N];
    for (b, &x) in bits.iter_mut().zip(k.0.iter()) {
        let c = center(canonical(x));
        let m = c >> 15;
        let abs = (c ^ m) - m;
        *b = (((QUARTER - abs) >> 15) & 1) as u8; // 1 iff |c| > QUARTER
    }
    Hint(pack_bits(&bits))
}

/// `Mod2(k, hint)` for every coefficient, packed into 64 bytes.
pub fn extract(k: &Poly, hint: &Hint) -> ReconciledKey {
    let w = unpack_bits(&hint.0);
    let mut bits = [0u8; N];
    for ((b, &x), &w) in bits.iter_mut().zip(k.0.iter()).zip(w.iter()) {
        let v = center(csubq(canonical(x) + i16::from(w) * HALF_Q));
        *b = (v & 1) as u8;
    }
    let key = ReconciledKey(pack_bits(&bits));
    crate::prg::wipe_bytes(&mut bits);
    key
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
        let mut bits = [0u8; N];
        for (i, b) in bits.iter_mut().enumerate() {
            *b = ((i * 7 + i / 3) % 2) as u8;
        }
        let packed = pack_bits(&bits);
        for i in 0..N {
            assert_eq!((packed[i / 8] >> (i % 8)) & 1, bits[i]);
        }
        assert_eq!(unpack_bits(&packed), bits);
    }

    #[test]
    fn select_hint() {
        let a = Hint([0x0f; HINT_BYTES]);
        let b = Hint([0xf0; HINT_BYTES]);
        assert_eq!(Hint::select(&a, &b, 0), a);
        assert_eq!(Hint::select(&a, &b, 1), b);
    }
}
