//! Bit-sliced `GF(2)`: 16 independent bits (lanes) in one word (PROTOCOLS.md §2.5).

use zeroize::Zeroize;

use crate::backend::{self, cast};
use crate::macros::{impl_char2_additive, impl_hex_fmt};
use crate::{Bulk, Encode, Field, FieldError, Random};

/// Sixteen `GF(2)` values, bit `k` = lane (instance) `k` ("BsBool16" in the reference).
///
/// This is the ring `GF(2)^16` with lane-wise operations: addition is XOR, multiplication is
/// AND. It is not a field (a word with some zero lanes has no inverse); it implements
/// [`Field`] so that the engine's replicated-sharing steps (local product, resharing, opening)
/// apply unchanged, which only need a commutative ring of characteristic 2. `inverse` is the
/// lane-wise `GF(2)` inverse with `0^-1 = 0`, i.e. the identity, and `ONE` has every lane set.
///
/// Wire encoding (§1.8): 2 bytes per word, little-endian. Sampling: 2 bytes of the stream,
/// little-endian, per word (`fill_random` is one `fill_bytes` of `2 n` bytes).
#[derive(Clone, Copy, Default, PartialEq, Eq, Hash, PartialOrd, Ord, Zeroize)]
#[repr(transparent)]
pub struct Bits16(pub u16);

impl_char2_additive!(Bits16);
impl_hex_fmt!(Bits16, "Bits16", "4", "6");

impl core::ops::Mul for Bits16 {
    type Output = Self;
    #[inline]
    #[allow(clippy::suspicious_arithmetic_impl)]
    fn mul(self, rhs: Self) -> Self {
        Self(self.0 & rhs.0)
    }
}

impl core::ops::MulAssign for Bits16 {
    #[inline]
    #[allow(clippy::suspicious_op_assign_impl)]
    fn mul_assign(&mut self, rhs: Self) {
        self.0 &= rhs.0;
    }
}

impl Bits16 {
    /// Lanes per word.
    pub const LANES: usize = 16;

    /// Lane `k` (0 or 1).
    #[inline]
    pub const fn lane(self, k: u32) -> u8 {
        ((self.0 >> (k & 15)) & 1) as u8
    }

    /// Lanes `start .. start + out.len()` of `src` (lane `l` of word `k` is lane `16 k + l`),
    /// one byte 0 or 1 each: `out[i]` = lane `start + i`. Panics if they are not all in `src`.
    pub fn lanes_to_bytes(src: &[Bits16], start: usize, out: &mut [u8]) {
        let end = start + out.len();
        assert!(end <= Self::LANES * src.len(), "lanes out of range");
        // Lane by lane up to the first word boundary and after the last one.
        let by_lane = |out: &mut [u8], from: usize| {
            for (l, o) in (from..).zip(out) {
                *o = src[l / Self::LANES].lane((l % Self::LANES) as u32);
            }
        };
        let head = ((Self::LANES - start % Self::LANES) % Self::LANES).min(out.len());
        let (first, rest) = out.split_at_mut(head);
        by_lane(first, start);
        let w0 = (start + head) / Self::LANES;
        let whole = rest.len() / Self::LANES;
        let (mid, tail) = rest.split_at_mut(whole * Self::LANES);
        backend::bits_to_bytes(
            backend::active(),
            cast::bits16_as_u16(&src[w0..w0 + whole]),
            mid,
        );
        by_lane(tail, end - tail.len());
    }

    /// The lanes packed by eight, byte `i` holding lanes `8 i .. 8 i + 8` (bit `m` = lane
    /// `8 i + m`): the words' own bytes on a little-endian target (no copy); `None` on a
    /// big-endian one.
    pub fn lanes_as_packed(src: &[Bits16]) -> Option<&[u8]> {
        cfg!(target_endian = "little").then(|| cast::bits16_as_bytes(src))
    }

    /// ORs the packed bits `piece` (bit `m` of byte `i` = bit `8 i + m`) into `out` from bit
    /// `at` on: bit `at + t` of `out` gets bit `t` of `piece`. Panics if they do not fit
    /// (bits of `piece` that are zero may lie past the end of `out`).
    pub fn or_packed_at(out: &mut [u8], at: usize, piece: &[u8]) {
        let (q, sh) = (at / 8, (at % 8) as u32);
        for (i, b) in piece.iter().enumerate() {
            out[q + i] |= b << sh;
            if sh > 0 && *b >> (8 - sh) != 0 {
                out[q + i + 1] |= b >> (8 - sh);
            }
        }
    }

    /// Lanes `start .. start + len` of `src` packed by eight into `out`: bit `m` of `out[i]`
    /// is lane `start + 8 i + m`, every other bit of `out` zero. Panics if the lanes are not
    /// all in `src` or `out` is shorter than `⌈len/8⌉`.
    pub fn lanes_to_packed(src: &[Bits16], start: usize, len: usize, out: &mut [u8]) {
        let n = len.div_ceil(8);
        assert!(
            start
                .checked_add(len)
                .is_some_and(|e| e <= Self::LANES * src.len())
                && n <= out.len(),
            "lanes out of range"
        );
        let owned: Vec<u8>;
        let bytes = match Self::lanes_as_packed(src) {
            Some(b) => b,
            None => {
                owned = src.iter().flat_map(|w| w.0.to_le_bytes()).collect();
                &owned
            }
        };
        let (bytes, r) = (&bytes[start / 8..], (start % 8) as u32);
        if r == 0 {
            out[..n].copy_from_slice(&bytes[..n]);
        } else {
            // out[i] = bytes[i] >> r | bytes[i + 1] << (8 - r), eight at a time.
            let mut i = 0;
            while i + 8 <= n && i + 8 < bytes.len() {
                let mut w = [0u8; 8];
                w.copy_from_slice(&bytes[i..i + 8]);
                let v = u64::from_le_bytes(w) >> r | u64::from(bytes[i + 8]) << (64 - r);
                out[i..i + 8].copy_from_slice(&v.to_le_bytes());
                i += 8;
            }
            let get = |i: usize| bytes.get(i).copied().unwrap_or(0);
            for (i, o) in out[..n].iter_mut().enumerate().skip(i) {
                *o = get(i) >> r | get(i + 1) << (8 - r);
            }
        }
        if !len.is_multiple_of(8) {
            out[n - 1] &= (1u8 << (len % 8)) - 1;
        }
        out[n..].fill(0);
    }
}

impl Field for Bits16 {
    const NAME: &'static str = "GF(2)^16";
    const ZERO: Self = Self(0);
    const ONE: Self = Self(0xffff);
    const CHARACTERISTIC_TWO: bool = true;

    /// Lane-wise `GF(2)` inverse (`0 -> 0`, `1 -> 1`): the identity.
    #[inline]
    fn inverse(self) -> Self {
        self
    }
}

impl Encode for Bits16 {
    fn encoded_len(n: usize) -> usize {
        2 * n
    }
    fn encode_slice(src: &[Self], out: &mut Vec<u8>) {
        if cfg!(target_endian = "little") {
            out.extend_from_slice(cast::bits16_as_bytes(src));
            return;
        }
        let start = out.len();
        out.resize(start + 2 * src.len(), 0);
        let (pairs, _) = out[start..].as_chunks_mut::<2>();
        for (d, x) in pairs.iter_mut().zip(src) {
            *d = x.0.to_le_bytes();
        }
    }
    fn decode_slice(bytes: &[u8], out: &mut [Self]) -> Result<(), FieldError> {
        if bytes.len() != 2 * out.len() {
            return Err(FieldError::LengthMismatch {
                expected: 2 * out.len(),
                got: bytes.len(),
            });
        }
        if cfg!(target_endian = "little") {
            cast::bits16_as_bytes_mut(out).copy_from_slice(bytes);
            return Ok(());
        }
        let (pairs, _) = bytes.as_chunks::<2>();
        for (o, b) in out.iter_mut().zip(pairs) {
            *o = Self(u16::from_le_bytes(*b));
        }
        Ok(())
    }
}

impl Random for Bits16 {
    fn random<R: rand_core::RngCore + ?Sized>(rng: &mut R) -> Self {
        let mut b = [0u8; 2];
        rng.fill_bytes(&mut b);
        Self(u16::from_le_bytes(b))
    }
    fn fill_random<R: rand_core::RngCore + ?Sized>(rng: &mut R, out: &mut [Self]) {
        let bytes = cast::bits16_as_bytes_mut(out);
        rng.fill_bytes(bytes);
        for x in out.iter_mut() {
            // The bytes were written in memory order; read them as little-endian.
            x.0 = u16::from_le(x.0);
        }
    }
    /// Little-endian targets only: there the memory of a word is its stream bytes.
    fn xor_bytes_mut(out: &mut [Self]) -> Option<(&mut [u8], u8)> {
        if cfg!(target_endian = "little") {
            Some((cast::bits16_as_bytes_mut(out), 0xff))
        } else {
            None
        }
    }
}

/// The default loops are plain XOR/AND on `u16` and vectorise.
impl Bulk for Bits16 {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ring_operations_are_lane_wise() {
        let (a, b) = (Bits16(0b1100), Bits16(0b1010));
        assert_eq!(a + b, Bits16(0b0110));
        assert_eq!(a * b, Bits16(0b1000));
        assert_eq!(a * Bits16::ONE, a);
        assert_eq!(a.inverse() * a, a);
        assert_eq!(a.lane(3), 1);
        assert_eq!(a.lane(0), 0);
    }

    #[test]
    fn lanes_expand_to_bytes_at_any_offset() {
        let src: Vec<Bits16> = [0x8001u16, 0x1234, 0xfffe, 0x0f0f, 0xa5a5]
            .into_iter()
            .map(Bits16)
            .collect();
        let lane = |l: usize| src[l / 16].lane((l % 16) as u32);
        for start in 0..80 {
            for len in [0, 1, 5, 15, 16, 17, 31, 33, 64, 80] {
                if start + len > 80 {
                    continue;
                }
                let mut out = vec![7u8; len];
                Bits16::lanes_to_bytes(&src, start, &mut out);
                let expect: Vec<u8> = (start..start + len).map(lane).collect();
                assert_eq!(out, expect, "start {start}, len {len}");
            }
        }
        // Every backend, whole words.
        let words: Vec<u16> = (0..300u32).map(|k| (k * 0x9e37 + 0x1234) as u16).collect();
        let expect: Vec<u8> = (0..16 * words.len())
            .map(|l| ((words[l / 16] >> (l % 16)) & 1) as u8)
            .collect();
        for be in backend::Backend::ALL {
            let mut out = vec![9u8; 16 * words.len() + 5];
            backend::bits_to_bytes(be, &words, &mut out);
            assert_eq!(out[..expect.len()], expect[..], "{be:?}");
            assert_eq!(out[expect.len()..], [9u8; 5], "{be:?}");
        }
    }

    #[test]
    fn lanes_pack_by_eight_at_any_offset() {
        let src: Vec<Bits16> = (0..40u32)
            .map(|k| Bits16((k.wrapping_mul(0x9e37_79b9) >> 7) as u16))
            .collect();
        let lane = |l: usize| src[l / 16].lane((l % 16) as u32);
        for start in (0..64).chain([100, 301, 500]) {
            for len in [0, 1, 7, 8, 9, 63, 64, 65, 70, 100, 120] {
                if start + len > 16 * src.len() {
                    continue;
                }
                let mut out = vec![0xa5u8; len.div_ceil(8) + 3];
                Bits16::lanes_to_packed(&src, start, len, &mut out);
                let expect: Vec<u8> = (0..out.len())
                    .map(|i| {
                        (0..8)
                            .filter(|m| 8 * i + m < len)
                            .fold(0u8, |b, m| b | lane(start + 8 * i + m) << m)
                    })
                    .collect();
                assert_eq!(out, expect, "start {start}, len {len}");
            }
        }
        // Pieces ORed in at any bit offset give the whole.
        for cut in [0usize, 1, 7, 8, 13, 64, 200] {
            let mut head = vec![0u8; 26];
            let mut tail = vec![0u8; (208 - cut).div_ceil(8)];
            Bits16::lanes_to_packed(&src, 0, cut, &mut head[..cut.div_ceil(8)]);
            Bits16::lanes_to_packed(&src, cut, 208 - cut, &mut tail);
            Bits16::or_packed_at(&mut head, cut, &tail);
            let mut whole = vec![0u8; 26];
            Bits16::lanes_to_packed(&src, 0, 208, &mut whole);
            assert_eq!(head, whole, "cut {cut}");
        }
        if let Some(b) = Bits16::lanes_as_packed(&src) {
            let mut out = vec![0u8; b.len()];
            Bits16::lanes_to_packed(&src, 0, 16 * src.len(), &mut out);
            assert_eq!(b, &out[..]);
        }
    }

    #[test]
    fn encoding_is_little_endian_and_strict() {
        let xs = [Bits16(0x0102), Bits16(0xa0b0)];
        let enc = Bits16::encode_to_vec(&xs);
        assert_eq!(enc, vec![0x02, 0x01, 0xb0, 0xa0]);
        assert_eq!(Bits16::decode_to_vec(&enc, 2), Ok(xs.to_vec()));
        assert!(Bits16::decode_to_vec(&enc[..3], 2).is_err());
    }

    #[test]
    fn sampling_uses_two_stream_bytes_per_word() {
        struct Counter(u8);
        impl rand_core::RngCore for Counter {
            fn next_u32(&mut self) -> u32 {
                0
            }
            fn next_u64(&mut self) -> u64 {
                0
            }
            fn fill_bytes(&mut self, dst: &mut [u8]) {
                for d in dst {
                    *d = self.0;
                    self.0 = self.0.wrapping_add(1);
                }
            }
        }
        let mut out = [Bits16(0); 2];
        Bits16::fill_random(&mut Counter(1), &mut out);
        assert_eq!(out, [Bits16(0x0201), Bits16(0x0403)]);
        assert_eq!(Bits16::random(&mut Counter(5)), Bits16(0x0605));
    }
}
