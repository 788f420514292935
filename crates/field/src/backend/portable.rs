//! The portable backend: plain Rust for every CPU, and the reference the SIMD backends are
//! tested against. Also used by them for the tails of slices.
//!
//! `GF(2^8)` products and linear maps are computed eight at a time in a `u64` ("SWAR":
//! shift-and-add, resp. basis images selected by per-byte bit masks; branch-free, no tables).
//! `GF(2^64)` products use the branch-free carry-less multiply of `gf2p64.rs`, built from
//! integer multiplications. Tails shorter than a word go through a zero-padded word.

use super::NibbleTables;
use crate::gf2p64::{clmul64, reduce128};
use crate::gf2p8::mul_u8;
use crate::LinearMap8;

const LSB: u64 = 0x0101_0101_0101_0101;

/// [`super::bits_to_bytes`]: each byte of a word spread by [`BIT_BYTES`].
pub(crate) fn bits_to_bytes(src: &[u16], out: &mut [u8]) {
    for (o, w) in out.chunks_exact_mut(16).zip(src) {
        let [lo, hi] = w.to_le_bytes();
        o[..8].copy_from_slice(&BIT_BYTES[usize::from(lo)].to_le_bytes());
        o[8..].copy_from_slice(&BIT_BYTES[usize::from(hi)].to_le_bytes());
    }
}

/// `BIT_BYTES[b]`: the eight bits of `b` as the bytes 0 or 1 of a little-endian word.
static BIT_BYTES: [u64; 256] = {
    let mut t = [0u64; 256];
    let mut b = 0;
    while b < 256 {
        let mut j = 0;
        while j < 8 {
            t[b] |= (((b >> j) & 1) as u64) << (8 * j);
            j += 1;
        }
        b += 1;
    }
    t
};
const LOW7: u64 = 0x7f7f_7f7f_7f7f_7f7f;
const MSB: u64 = 0x8080_8080_8080_8080;

/// Eight GF(2^8) products at once: byte `i` of the result is `a_i * b_i`.
#[inline]
pub(crate) fn mul_swar(a: u64, b: u64) -> u64 {
    let mut a = a;
    let mut b = b;
    let mut p = 0u64;
    for _ in 0..8 {
        // 0xff in every byte whose current low bit of b is set.
        let mask = (b & LSB).wrapping_mul(0xff);
        p ^= a & mask;
        // a *= u, per byte: shift without crossing bytes, reduce bytes that overflowed.
        let carry = (a & MSB) >> 7;
        a = ((a & LOW7) << 1) ^ carry.wrapping_mul(0x1b);
        b >>= 1;
    }
    p
}

/// `out[k] (+)= a[k] * b[k]` on the common prefix.
pub(crate) fn gf2p8_mul<const ADD: bool>(out: &mut [u8], a: &[u8], b: &[u8]) {
    let n = out.len().min(a.len()).min(b.len());
    let (oc, ot) = out[..n].as_chunks_mut::<8>();
    let (ac, at) = a[..n].as_chunks::<8>();
    let (bc, bt) = b[..n].as_chunks::<8>();
    for ((o, x), y) in oc.iter_mut().zip(ac).zip(bc) {
        let mut r = mul_swar(u64::from_le_bytes(*x), u64::from_le_bytes(*y));
        if ADD {
            r ^= u64::from_le_bytes(*o);
        }
        *o = r.to_le_bytes();
    }
    for ((o, x), y) in ot.iter_mut().zip(at).zip(bt) {
        let r = mul_u8(*x, *y);
        *o = if ADD { *o ^ r } else { r };
    }
}

/// `out[k] = a[k] b[k] + c[k] d[k]` in the tower field `GF((2^4)^2)` over the common prefix.
pub(crate) fn tower_mul_sum2(out: &mut [u8], a: &[u8], b: &[u8], c: &[u8], d: &[u8]) {
    use crate::Gf4Tower as T;
    for ((((o, a), b), c), d) in out.iter_mut().zip(a).zip(b).zip(c).zip(d) {
        *o = T(*a).const_mul(T(*b)).0 ^ T(*c).const_mul(T(*d)).0;
    }
}

/// `sum_k a[k] * b[k]` over the common prefix.
pub(crate) fn gf2p8_inner(a: &[u8], b: &[u8]) -> u8 {
    let n = a.len().min(b.len());
    let (ac, at) = a[..n].as_chunks::<8>();
    let (bc, bt) = b[..n].as_chunks::<8>();
    let mut acc = 0u64;
    for (x, y) in ac.iter().zip(bc) {
        acc ^= mul_swar(u64::from_le_bytes(*x), u64::from_le_bytes(*y));
    }
    acc ^= acc >> 32;
    acc ^= acc >> 16;
    acc ^= acc >> 8;
    let mut r = acc as u8;
    for (x, y) in at.iter().zip(bt) {
        r ^= mul_u8(*x, *y);
    }
    r
}

/// The basis images of `map`, each repeated in all eight bytes of a word.
fn broadcast_images(map: &LinearMap8) -> [u64; 8] {
    map.basis_images()
        .map(|img| u64::from(img).wrapping_mul(LSB))
}

/// `map` applied to the eight bytes of `x`: the XOR of the basis images selected by per-byte
/// bit masks (branch-free, no table lookups).
#[inline]
fn linear_swar(images: &[u64; 8], x: u64) -> u64 {
    let mut r = 0u64;
    for (j, img) in images.iter().enumerate() {
        r ^= ((x >> j) & LSB).wrapping_mul(0xff) & img;
    }
    r
}

/// `dst[k] = map(src[k])` on the common prefix.
pub(crate) fn linear_apply(map: &LinearMap8, src: &[u8], dst: &mut [u8]) {
    let n = src.len().min(dst.len());
    if *map == LinearMap8::IDENTITY {
        // A copy (callers that stream records through a map take the identity for an
        // unmapped part, so that the vector kernels prefetch it).
        dst[..n].copy_from_slice(&src[..n]);
        return;
    }
    let images = broadcast_images(map);
    let (sc, st) = src[..n].as_chunks::<8>();
    let (dc, dt) = dst[..n].as_chunks_mut::<8>();
    for (d, s) in dc.iter_mut().zip(sc) {
        *d = linear_swar(&images, u64::from_le_bytes(*s)).to_le_bytes();
    }
    if !st.is_empty() {
        let mut word = [0u8; 8];
        word[..st.len()].copy_from_slice(st);
        let r = linear_swar(&images, u64::from_le_bytes(word)).to_le_bytes();
        dt.copy_from_slice(&r[..dt.len()]);
    }
}

/// `buf[k] = map(buf[k])`.
pub(crate) fn linear_apply_in_place(map: &LinearMap8, buf: &mut [u8]) {
    let images = broadcast_images(map);
    let (chunks, tail) = buf.as_chunks_mut::<8>();
    for c in chunks.iter_mut() {
        *c = linear_swar(&images, u64::from_le_bytes(*c)).to_le_bytes();
    }
    if !tail.is_empty() {
        let mut word = [0u8; 8];
        word[..tail.len()].copy_from_slice(tail);
        let r = linear_swar(&images, u64::from_le_bytes(word)).to_le_bytes();
        let n = tail.len();
        tail.copy_from_slice(&r[..n]);
    }
}

/// One GF(2^64) product.
#[inline]
pub(crate) fn gf2p64_mul_one(a: u64, b: u64) -> u64 {
    reduce128(clmul64(a, b))
}

/// `out[k] (+)= a[k] * b[k]` in GF(2^64) on the common prefix.
pub(crate) fn gf2p64_mul<const ADD: bool>(out: &mut [u64], a: &[u64], b: &[u64]) {
    for ((o, x), y) in out.iter_mut().zip(a).zip(b) {
        let r = gf2p64_mul_one(*x, *y);
        *o = if ADD { *o ^ r } else { r };
    }
}

/// `sum_k a[k] * b[k]` in GF(2^64): unreduced products are summed, then reduced once.
pub(crate) fn gf2p64_inner(a: &[u64], b: &[u64]) -> u64 {
    let acc = a
        .iter()
        .zip(b)
        .fold(0u128, |acc, (x, y)| acc ^ clmul64(*x, *y));
    reduce128(acc)
}

/// `sum_k a1[k] (b1[k] + b2[k]) + a2[k] b1[k]` in GF(2^64) (the summed local product of
/// replicated sharing): unreduced products are summed, then reduced once.
pub(crate) fn gf2p64_local_inner(a1: &[u64], a2: &[u64], b1: &[u64], b2: &[u64]) -> u64 {
    let acc = a1
        .iter()
        .zip(a2)
        .zip(b1.iter().zip(b2))
        .fold(0u128, |acc, ((x1, x2), (y1, y2))| {
            acc ^ clmul64(*x1, *y1 ^ *y2) ^ clmul64(*x2, *y1)
        });
    reduce128(acc)
}

/// `x · u` in GF(2^64) (`u^64 = u^4 + u^3 + u + 1`).
#[inline(always)]
pub(crate) fn gf2p64_times_u(x: u64) -> u64 {
    (x << 1) ^ (0x1b & 0u64.wrapping_sub(x >> 63))
}

/// The lengths of a node-sum operand pair: `a`'s common length `n` and `b`'s `m <= n`.
pub(crate) fn node_lengths(a: [&[u64]; 4], b: [&[u64]; 4]) -> (usize, usize) {
    let n = a.iter().fold(usize::MAX, |m, x| m.min(x.len()));
    (n, b.iter().fold(n, |m, x| m.min(x.len())))
}

/// The unreduced `[Σ lp(b), Σ lp(a + (a + b) u)]` over positions `range` (all below `b`'s
/// length), `lp(x1, x2, y1, y2) = x1 (y1 + y2) + x2 y1`, with the carry-less product `clmul`.
#[inline(always)]
pub(crate) fn node_pairs_with(
    a: [&[u64]; 4],
    b: [&[u64]; 4],
    range: core::ops::Range<usize>,
    clmul: impl Fn(u64, u64) -> u128,
) -> [u128; 2] {
    let lp = |x: [u64; 4]| clmul(x[0], x[2] ^ x[3]) ^ clmul(x[1], x[2]);
    let (mut h1, mut hu) = (0u128, 0u128);
    for k in range {
        let bk = b.map(|v| v[k]);
        h1 ^= lp(bk);
        let ak = a.map(|v| v[k]);
        hu ^= lp(core::array::from_fn(|j| {
            ak[j] ^ gf2p64_times_u(ak[j] ^ bk[j])
        }));
    }
    [h1, hu]
}

/// `(1 + u)^2 = 1 + u^2`: where `b` is zero the line is `a (1 + u)`, and `lp(c x) = c^2 lp(x)`.
pub(crate) const ONE_PLUS_U_SQUARED: u64 = 0b101;

/// `[Σ lp(b), Σ lp(a + (a + b) u)]` over the positions of `a` (four slices; `b`'s four
/// slices zero from their length on): the halving level's sums at 1 and at the node `u`.
pub(crate) fn gf2p64_node_inner(a: [&[u64]; 4], b: [&[u64]; 4]) -> [u64; 2] {
    let (n, m) = node_lengths(a, b);
    let [h1, hu] = node_pairs_with(a, b, 0..m, clmul64);
    let rest = gf2p64_local_inner(&a[0][m..n], &a[1][m..n], &a[2][m..n], &a[3][m..n]);
    [
        reduce128(h1),
        reduce128(hu) ^ gf2p64_mul_one(rest, ONE_PLUS_U_SQUARED),
    ]
}

/// `out[k] = lo[k] + (lo[k] + hi[k]) s` in GF(2^64) on the common prefix.
pub(crate) fn gf2p64_lerp(out: &mut [u64], lo: &[u64], hi: &[u64], s: u64) {
    for ((o, l), h) in out.iter_mut().zip(lo).zip(hi) {
        *o = *l ^ gf2p64_mul_one(*l ^ *h, s);
    }
}

/// `v[k] = v[k] + (v[k] + w[k]) s` in GF(2^64) on the common prefix.
pub(crate) fn gf2p64_lerp_assign(v: &mut [u64], w: &[u64], s: u64) {
    for (x, h) in v.iter_mut().zip(w) {
        *x ^= gf2p64_mul_one(*x ^ *h, s);
    }
}

/// `dst[k] = f(a[k]) ^ g(b[k])` on the common prefix (`[f, g] = t`).
pub(crate) fn embed_byte_pairs(t: [&NibbleTables<'_>; 2], a: &[u8], b: &[u8], dst: &mut [u64]) {
    let [f, g] = t;
    for ((d, x), y) in dst.iter_mut().zip(a).zip(b) {
        *d = f.lo[usize::from(*x & 0x0f)]
            ^ f.hi[usize::from(*x >> 4)]
            ^ g.lo[usize::from(*y & 0x0f)]
            ^ g.hi[usize::from(*y >> 4)];
    }
}

/// `dst[k] = lo[src[k] & 15] ^ hi[src[k] >> 4]` on the common prefix (a `GF(2)`-linear map
/// from bytes to 64-bit words given by its nibble tables).
pub(crate) fn embed_bytes(lo: &[u64; 16], hi: &[u64; 16], src: &[u8], dst: &mut [u64]) {
    for (d, s) in dst.iter_mut().zip(src) {
        *d = lo[usize::from(*s & 0x0f)] ^ hi[usize::from(*s >> 4)];
    }
}

/// `{02} · x` in GF(2^8).
#[inline]
const fn xtime(x: u8) -> u8 {
    (x << 1) ^ (0x1b & 0u8.wrapping_sub(x >> 7))
}

/// AES-128 encryption of one block with the expanded key `rk` (FIPS-197 §5.1). The S-box is
/// a table lookup: not constant time (the keystream is for public seeds; the SIMD backends
/// use AES-NI).
pub(crate) fn aes128_encrypt(rk: &[[u8; 16]; 11], block: &mut [u8; 16]) {
    let sbox = &crate::Gf2p8::SBOX;
    for (b, k) in block.iter_mut().zip(&rk[0]) {
        *b ^= k;
    }
    for (round, k) in rk.iter().enumerate().skip(1) {
        // SubBytes and ShiftRows: byte r + 4c of the state (row r, column c) comes from
        // column c + r.
        let s = *block;
        for c in 0..4 {
            for r in 0..4 {
                block[r + 4 * c] = sbox[usize::from(s[r + 4 * ((c + r) % 4)])];
            }
        }
        if round < 10 {
            for col in block.chunks_exact_mut(4) {
                let [a0, a1, a2, a3] = [col[0], col[1], col[2], col[3]];
                let t = a0 ^ a1 ^ a2 ^ a3;
                col[0] = a0 ^ t ^ xtime(a0 ^ a1);
                col[1] = a1 ^ t ^ xtime(a1 ^ a2);
                col[2] = a2 ^ t ^ xtime(a2 ^ a3);
                col[3] = a3 ^ t ^ xtime(a3 ^ a0);
            }
        }
        for (b, x) in block.iter_mut().zip(k) {
            *b ^= x;
        }
    }
}

/// The AES-128 key schedule (FIPS-197 §5.2).
pub(crate) fn aes128_expand(key: &[u8; 16]) -> [[u8; 16]; 11] {
    let sbox = &crate::Gf2p8::SBOX;
    let mut rk = [[0u8; 16]; 11];
    rk[0] = *key;
    let mut rcon = 1u8;
    for i in 1..11 {
        let prev = rk[i - 1];
        let mut t = [prev[13], prev[14], prev[15], prev[12]];
        for b in &mut t {
            *b = sbox[usize::from(*b)];
        }
        t[0] ^= rcon;
        rcon = xtime(rcon);
        for w in 0..4 {
            for j in 0..4 {
                t[j] ^= prev[4 * w + j];
                rk[i][4 * w + j] = t[j];
            }
        }
    }
    rk
}

/// Keystream blocks `start, start + 1, ...` (`AES_k(j)`, `j` a little-endian 128-bit
/// counter) into `out` (whole blocks).
pub(crate) fn aes128_ctr(rk: &[[u8; 16]; 11], start: u128, out: &mut [u8]) {
    let (blocks, _) = out.as_chunks_mut::<16>();
    let mut ctr = start;
    for b in blocks {
        *b = ctr.to_le_bytes();
        aes128_encrypt(rk, b);
        ctr = ctr.wrapping_add(1);
    }
}

// ---- AES block steps -----------------------------------------------------------------------

/// `xtime` on the four bytes of a word at once.
#[inline]
fn xtime4(x: u32) -> u32 {
    ((x & 0x7f7f_7f7f) << 1) ^ (((x >> 7) & 0x0101_0101) * 0x1b)
}

/// MixColumns of one column packed little-endian (byte `j` = row `j`).
#[inline]
fn mix_word(x: u32) -> u32 {
    let y = x.rotate_right(8); // byte j = a_{j+1}
    let all = x ^ y ^ x.rotate_right(16) ^ x.rotate_right(24);
    x ^ all ^ xtime4(x ^ y)
}

/// InvMixColumns of one column: a preprocessing step, then MixColumns.
#[inline]
fn inv_mix_word(x: u32) -> u32 {
    let u = xtime4(xtime4(x ^ x.rotate_right(16))); // bytes: 4(a0+a2), 4(a1+a3), ...
    mix_word(x ^ u)
}

fn permute(block: &mut [u8; 16], perm: &[u8; 16]) {
    let old = *block;
    for (b, &p) in block.iter_mut().zip(perm) {
        *b = old[usize::from(p)];
    }
}

fn columns(block: &mut [u8; 16], f: fn(u32) -> u32) {
    for col in block.as_chunks_mut::<4>().0 {
        *col = f(u32::from_le_bytes(*col)).to_le_bytes();
    }
}

/// [`crate::aes_round::BlockStep`] on every whole block, one block at a time.
pub(crate) fn aes_blocks(step: crate::aes_round::BlockStep, buf: &mut [u8]) {
    use crate::aes_round::{BlockStep, INV_SHIFT, SHIFT};
    let blocks = buf.as_chunks_mut::<16>().0;
    match step {
        BlockStep::ShiftRows => blocks.iter_mut().for_each(|b| permute(b, &SHIFT)),
        BlockStep::InvShiftRows => blocks.iter_mut().for_each(|b| permute(b, &INV_SHIFT)),
        BlockStep::MixColumns => blocks.iter_mut().for_each(|b| columns(b, mix_word)),
        BlockStep::InvMixColumns => blocks.iter_mut().for_each(|b| columns(b, inv_mix_word)),
        BlockStep::Round(key) => {
            for b in blocks {
                permute(b, &SHIFT);
                columns(b, mix_word);
                for (x, k) in b.iter_mut().zip(key) {
                    *x ^= k;
                }
            }
        }
    }
}

/// [`crate::backend::split_word_bytes`] one word at a time, for as many words as the shortest
/// output takes (the caller bounds the outputs by the words there are): bytes gathered per
/// output in a small buffer and copied out in runs, so the outputs see wide stores.
pub(crate) fn split_word_bytes(words: &[u64], stride: usize, mut outs: [&mut [u8]; 6]) {
    const RUN: usize = 256;
    let mut words = words.iter().step_by(stride.max(1));
    let mut buf = [[0u8; RUN]; 6];
    let len = outs.iter().map(|o| o.len()).min().unwrap_or(0);
    let mut at = 0;
    while at < len {
        let n = RUN.min(len - at);
        let mut got = 0;
        for (j, w) in words.by_ref().take(n).enumerate() {
            for (o, v) in buf.iter_mut().zip(w.to_le_bytes()) {
                o[j] = v;
            }
            got += 1;
        }
        for (o, b) in outs.iter_mut().zip(&buf) {
            o[at..at + got].copy_from_slice(&b[..got]);
        }
        if got < n {
            break;
        }
        at += n;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn swar_matches_scalar_on_all_pairs() {
        for a in 0..=255u8 {
            // Eight different b per word, so every lane is exercised with every a.
            for b0 in (0..=255u8).step_by(8) {
                let bs: [u8; 8] = core::array::from_fn(|i| b0.wrapping_add(i as u8));
                let r = mul_swar(u64::from_le_bytes([a; 8]), u64::from_le_bytes(bs)).to_le_bytes();
                for i in 0..8 {
                    assert_eq!(r[i], mul_u8(a, bs[i]), "a={a:#x} b={:#x}", bs[i]);
                }
            }
        }
    }
}
