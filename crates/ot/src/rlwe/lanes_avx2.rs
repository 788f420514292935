//! AVX2 versions of the lane loops around the ring:
//!
//! * the coefficient-wise passes of `ring.rs` (products, sums, reductions),
//!   whose generic bodies are compiled here inside
//!   `#[target_feature(enable = "avx2")]` wrappers, so that LLVM
//!   vectorizes them 16 lanes wide, with the same operations as the
//!   portable path;
//! * the reconciliation loops (`reconcile.rs`): their generic bodies
//!   likewise, with the sign-bit packing of reconciliation hints and key
//!   bits, and the expansion of hint bits to lane masks, written with
//!   intrinsics ([`SignBits`]);
//! * the rejection step of hashing to a polynomial (keeping the 14-bit
//!   chunks below `q`, in order).
//!
//! Each function has a portable twin in the module that uses it, and the
//! tests there compare every backend with it. They are reached only through
//! the [`Avx2`] token, which exists only after run-time detection found
//! AVX2 (or AVX-512, which was detected with AVX2). The wrapper macro
//! `lane_wrappers!` is shared with `lanes_avx512.rs`.
#![allow(unsafe_code)]

use super::encode::HINT_BYTES;
use super::hash::ACCEPT_CAPACITY;
use super::ntt_avx2::Avx2;
use super::reconcile::{extract_body, signal_body, SignBits, BLOCK};
use super::ring::{
    add_canonical_body, add_reduce_body, caddq_body, mul_mont_add_body, mul_mont_body,
    sub_masked_body, to_mont_body, N, Q,
};
use core::arch::x86_64::{
    __m128i, __m256i, _mm256_and_si256, _mm256_castsi256_si128, _mm256_cmpeq_epi16,
    _mm256_cmpgt_epi16, _mm256_extracti128_si256, _mm256_loadu2_m128i, _mm256_loadu_si256,
    _mm256_movemask_epi8, _mm256_or_si256, _mm256_packs_epi16, _mm256_permute4x64_epi64,
    _mm256_set1_epi16, _mm256_set1_epi64x, _mm256_setr_epi16, _mm256_setr_epi8,
    _mm256_shuffle_epi8, _mm256_slli_epi64, _mm256_storeu_si256, _mm_loadu_si128, _mm_shuffle_epi8,
    _mm_storeu_si128,
};

/// `COMPRESS[m]` is the byte shuffle that moves the 16-bit lanes `i` with
/// bit `i` of `m` set to the front of a 128-bit register, in order.
const COMPRESS: [[u8; 16]; 256] = compress_table();

const fn compress_table() -> [[u8; 16]; 256] {
    let mut t = [[0x80u8; 16]; 256];
    let mut m = 0;
    while m < 256 {
        let mut k = 0;
        let mut i = 0;
        while i < 8 {
            if (m >> i) & 1 == 1 {
                t[m][2 * k] = 2 * i as u8;
                t[m][2 * k + 1] = 2 * i as u8 + 1;
                k += 1;
            }
            i += 1;
        }
        m += 1;
    }
    t
}

/// The lane loops of `ring.rs` and `reconcile.rs` as methods of a backend
/// token: `lane_wrappers!(Token, "features")` gives `Token` one method per
/// generic `#[inline(always)]` body, which runs the body inside a function
/// compiled with `#[target_feature(enable = "features")]` (the bodies of
/// [`signal_body`] and [`extract_body`] also take the token, for its
/// [`SignBits`]). Used here for [`Avx2`] and in `lanes_avx512` for the
/// AVX-512 token; the calling module imports the bodies, `N` and
/// `HINT_BYTES`. Sound only for a token that exists only after run-time
/// detection of the features.
macro_rules! lane_wrappers {
    ($token:ident, $features:literal) => {
        lane_wrappers! { @impl $token, $features;
            /// [`caddq_body`].
            fn caddq(_t, r: &mut [i16; N]) = caddq_body(r);
            /// [`to_mont_body`].
            fn to_mont(_t, r: &mut [i16; N]) = to_mont_body(r);
            /// [`mul_mont_body`].
            fn mul_mont(_t, r: &mut [i16; N], a: &[i16; N], b: &[i16; N]) = mul_mont_body(r, a, b);
            /// [`mul_mont_add_body`].
            fn mul_mont_add(_t, r: &mut [i16; N], a: &[i16; N], b: &[i16; N]) =
                mul_mont_add_body(r, a, b);
            /// [`add_reduce_body`].
            fn add_reduce(_t, r: &mut [i16; N], y: &[i16; N]) = add_reduce_body(r, y);
            /// [`add_canonical_body`].
            fn add_canonical(_t, r: &mut [i16; N], y: &[i16; N]) = add_canonical_body(r, y);
            /// [`sub_masked_body`].
            fn sub_masked(_t, r: &mut [i16; N], y: &[i16; N], mask: i16) =
                sub_masked_body(r, y, mask);
            /// [`signal_body`] with the token's bit packing.
            fn signal(t, k: &[i16; N]) -> [u8; HINT_BYTES] = signal_body(t, k);
            /// [`extract_body`] with the token's bit packing and masks.
            fn extract(t, k: &[i16; N], hint: &[u8; HINT_BYTES]) -> [u8; N / 8] =
                extract_body(t, k, hint);
        }
    };
    (@impl $token:ident, $features:literal;
        $($(#[$doc:meta])* fn $name:ident($t:ident $(, $arg:ident: $ty:ty)*) $(-> $ret:ty)? = $body:expr;)*) => {
        impl $token {
            $(
                $(#[$doc])*
                pub(crate) fn $name(self $(, $arg: $ty)*) $(-> $ret)? {
                    #[target_feature(enable = $features)]
                    fn inner($t: $token $(, $arg: $ty)*) $(-> $ret)? {
                        $body
                    }
                    // SAFETY: the token exists only if run-time detection
                    // found the features `inner` is compiled for.
                    unsafe { inner(self, $($arg),*) }
                }
            )*
        }
    };
}
pub(crate) use lane_wrappers;

lane_wrappers!(Avx2, "avx2");

impl SignBits for Avx2 {
    #[inline(always)]
    fn pack(self, lanes: &[i16; BLOCK]) -> [u8; BLOCK / 8] {
        // SAFETY: the token exists only if the CPU has AVX2.
        unsafe { pack_avx2(lanes) }
    }

    #[inline(always)]
    fn masks(self, bits: &[u8; BLOCK / 8], out: &mut [i16; BLOCK]) {
        // SAFETY: the token exists only if the CPU has AVX2.
        unsafe { masks_avx2(bits, out) }
    }
}

impl Avx2 {
    /// Cuts `bytes` into 14-bit little-endian chunks (four per 7 bytes)
    /// and appends those below `q` to `out[*filled..]`, in order, until at
    /// least `N` values are in. Reads blocks of 28 bytes while 30 bytes
    /// remain (each block loads two 16-byte halves at offsets 0 and 14), so
    /// `bytes` needs 2 bytes of padding after the last block used.
    pub(crate) fn accept_below_q(
        self,
        bytes: &[u8],
        out: &mut [i16; ACCEPT_CAPACITY],
        filled: &mut usize,
    ) {
        // SAFETY: the token exists only if the CPU has AVX2 (POPCNT is
        // not used: `count_ones` on a byte compiles to plain arithmetic).
        unsafe { accept_avx2(bytes, out, filled) }
    }
}

/// Bit `i` of the result is the sign bit of `lanes[i]`.
#[target_feature(enable = "avx2")]
#[inline]
fn pack_avx2(lanes: &[i16; BLOCK]) -> [u8; BLOCK / 8] {
    // SAFETY: `lanes` has 32 lanes, so both unaligned 16-lane loads are in
    // bounds.
    let (a, b) = unsafe {
        (
            _mm256_loadu_si256(lanes.as_ptr().cast::<__m256i>()),
            _mm256_loadu_si256(lanes.as_ptr().add(16).cast::<__m256i>()),
        )
    };
    // Saturating packing keeps each sign; the 64-bit quarters come out
    // as a0-7, b0-7, a8-15, b8-15 and are put back in order.
    let p = _mm256_permute4x64_epi64::<0b11_01_10_00>(_mm256_packs_epi16(a, b));
    (_mm256_movemask_epi8(p) as u32).to_le_bytes()
}

/// Lane `k` is `-1` if bit `k` of `word` is set, else `0` (also the sign
/// step of the Gaussian sampler).
#[target_feature(enable = "avx2")]
#[inline]
pub(crate) fn bit_lanes(word: i16) -> __m256i {
    let select = _mm256_setr_epi16(
        1,
        2,
        4,
        8,
        16,
        32,
        64,
        128,
        256,
        512,
        1024,
        2048,
        4096,
        8192,
        16384,
        i16::MIN,
    );
    _mm256_cmpeq_epi16(_mm256_and_si256(_mm256_set1_epi16(word), select), select)
}

/// Lane `i` is `-1` if bit `i` of `bits` is set, else `0`.
#[target_feature(enable = "avx2")]
#[inline]
fn masks_avx2(bits: &[u8; BLOCK / 8], out: &mut [i16; BLOCK]) {
    for (o, pair) in out
        .as_chunks_mut::<16>()
        .0
        .iter_mut()
        .zip(bits.as_chunks::<2>().0)
    {
        let m = bit_lanes(i16::from_le_bytes(*pair));
        // SAFETY: `o` has 16 lanes, the size of one unaligned store.
        unsafe { _mm256_storeu_si256(o.as_mut_ptr().cast::<__m256i>(), m) };
    }
}

#[target_feature(enable = "avx2")]
fn accept_avx2(bytes: &[u8], out: &mut [i16; ACCEPT_CAPACITY], filled: &mut usize) {
    let q = _mm256_set1_epi16(Q);
    // Per 128-bit half: two 7-byte groups into two zero-extended 64-bit lanes.
    let spread = _mm256_setr_epi8(
        0, 1, 2, 3, 4, 5, 6, -1, 7, 8, 9, 10, 11, 12, 13, -1, 0, 1, 2, 3, 4, 5, 6, -1, 7, 8, 9, 10,
        11, 12, 13, -1,
    );
    let m = _mm256_set1_epi64x(0x3fff);
    for block in bytes.windows(30).step_by(28) {
        if *filled >= N {
            break;
        }
        // SAFETY: `block` has 30 bytes, so both 16-byte loads (at 0 and 14)
        // are in bounds.
        let raw = unsafe {
            _mm256_loadu2_m128i(
                block.as_ptr().add(14).cast::<__m128i>(),
                block.as_ptr().cast::<__m128i>(),
            )
        };
        let w = _mm256_shuffle_epi8(raw, spread);
        // Chunk j of a group sits at bit 14 j and moves to bit 16 j.
        let v = _mm256_or_si256(
            _mm256_or_si256(
                _mm256_and_si256(w, m),
                _mm256_and_si256(_mm256_slli_epi64::<2>(w), _mm256_slli_epi64::<16>(m)),
            ),
            _mm256_or_si256(
                _mm256_and_si256(_mm256_slli_epi64::<4>(w), _mm256_slli_epi64::<32>(m)),
                _mm256_and_si256(_mm256_slli_epi64::<6>(w), _mm256_slli_epi64::<48>(m)),
            ),
        );
        let ok = _mm256_cmpgt_epi16(q, v);
        // Per 128-bit half: bytes 0-7 are lanes 0-7, bytes 8-15 repeat them.
        let bits = _mm256_movemask_epi8(_mm256_packs_epi16(ok, ok)) as u32;
        let halves = [
            (_mm256_castsi256_si128(v), (bits & 0xff) as usize),
            (
                _mm256_extracti128_si256::<1>(v),
                ((bits >> 16) & 0xff) as usize,
            ),
        ];
        for (x, mask) in halves {
            let Some(shuffle) = COMPRESS.get(mask) else {
                continue;
            };
            // In bounds: `*filled < N + 8` here (it was below `N` before
            // this block and grows by at most 8), and `out` has `N + 32`.
            let Some(dst) = out.get_mut(*filled..*filled + 8) else {
                continue;
            };
            // SAFETY: `shuffle` has 16 bytes and `dst` 8 lanes (16 bytes):
            // one unaligned 128-bit load and one unaligned 128-bit store.
            unsafe {
                let s = _mm_loadu_si128(shuffle.as_ptr().cast::<__m128i>());
                _mm_storeu_si128(dst.as_mut_ptr().cast::<__m128i>(), _mm_shuffle_epi8(x, s));
            }
            *filled += mask.count_ones() as usize;
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
    use super::*;

    #[test]
    fn compress_table_moves_selected_lanes() {
        for (m, row) in COMPRESS.iter().enumerate() {
            let picked: Vec<u8> = (0..8u8).filter(|i| (m >> i) & 1 == 1).collect();
            for (k, &i) in picked.iter().enumerate() {
                assert_eq!(row[2 * k], 2 * i);
                assert_eq!(row[2 * k + 1], 2 * i + 1);
            }
            assert!(row[2 * picked.len()..].iter().all(|&b| b == 0x80));
        }
    }
}
