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

/// Bit `i` of the result is the sign bit of `lanes[i]` (bit `j` of byte
/// `k` is lane `8 k + j`).
#[inline(always)]
fn pack_signs_portable(lanes: &[i16; N]) -> [u8; N / 8] {
    let mut out = [0u8; N / 8];
    for (o, chunk) in out.iter_mut().zip(lanes.chunks_exact(8)) {
        let mut b = 0u8;
        for (j, &x) in chunk.iter().enumerate() {
            b |= (((x as u16) >> 15) as u8) << j;
        }
        *o = b;
    }
    out
}

/// Lane `i` is `-1` if bit `i` of `bits` is set, else `0`.
#[inline(always)]
fn bit_masks_portable(bits: &[u8; N / 8], out: &mut [i16; N]) {
    for (chunk, &b) in out.chunks_exact_mut(8).zip(bits.iter()) {
        for (j, x) in chunk.iter_mut().enumerate() {
            *x = -i16::from((b >> j) & 1);
        }
    }
}

fn pack_signs(lanes: &[i16; N]) -> [u8; N / 8] {
    #[cfg(target_arch = "x86_64")]
    if let Some(t) = super::ntt::avx2() {
        return t.pack_signs(lanes);
    }
    pack_signs_portable(lanes)
}

fn bit_masks(bits: &[u8; N / 8], out: &mut [i16; N]) {
    #[cfg(target_arch = "x86_64")]
    if let Some(t) = super::ntt::avx2() {
        return t.bit_masks(bits, out);
    }
    bit_masks_portable(bits, out);
}

/// `Sig(k)` for every coefficient.
pub fn signal(k: &Poly) -> Hint {
    let mut lanes = [0i16; N];
    for (o, &x) in lanes.iter_mut().zip(k.0.iter()) {
        let c = center(canonical(x));
        let m = c >> 15;
        // Negative (sign bit set) iff |c| > QUARTER.
        *o = QUARTER - ((c ^ m) - m);
    }
    Hint(pack_signs(&lanes))
}

/// `Mod2(k, hint)` for every coefficient, packed into 64 bytes.
pub fn extract(k: &Poly, hint: &Hint) -> ReconciledKey {
    let mut lanes = [0i16; N];
    bit_masks(&hint.0, &mut lanes);
    for (o, &x) in lanes.iter_mut().zip(k.0.iter()) {
        let v = center(csubq(canonical(x) + (*o & HALF_Q)));
        // The parity moves to the sign bit.
        *o = v << 15;
    }
    let key = ReconciledKey(pack_signs(&lanes));
    super::ring::wipe(&mut lanes);
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
        let mut lanes = [0i16; N];
        for (i, x) in lanes.iter_mut().enumerate() {
            *x = if (i * 7 + i / 3) % 2 == 1 {
                -1 - i as i16
            } else {
                i as i16
            };
        }
        let packed = pack_signs_portable(&lanes);
        for i in 0..N {
            assert_eq!((packed[i / 8] >> (i % 8)) & 1, u8::from(lanes[i] < 0));
        }
        let mut masks = [0i16; N];
        bit_masks_portable(&packed, &mut masks);
        for i in 0..N {
            assert_eq!(masks[i], if lanes[i] < 0 { -1 } else { 0 });
        }
    }

    /// The AVX2 packing and unpacking agree with the portable loops.
    #[test]
    #[cfg(target_arch = "x86_64")]
    fn avx2_bit_loops_agree() {
        let Some(t) = super::super::ntt_avx2::Avx2::detect() else {
            return;
        };
        let mut state = 0x9e37_79b9_7f4a_7c15u64;
        for _ in 0..200 {
            let mut lanes = [0i16; N];
            for x in lanes.iter_mut() {
                state = state
                    .wrapping_mul(6_364_136_223_846_793_005)
                    .wrapping_add(1);
                *x = (state >> 40) as i16;
            }
            let packed = t.pack_signs(&lanes);
            assert_eq!(packed, pack_signs_portable(&lanes));
            let (mut a, mut b) = ([0i16; N], [0i16; N]);
            t.bit_masks(&packed, &mut a);
            bit_masks_portable(&packed, &mut b);
            assert_eq!(a, b);
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
