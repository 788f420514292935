//! Zero-copy views of element slices as their underlying integers.
//!
//! Every element type is `#[repr(transparent)]` over an integer with no further validity
//! requirement, so a slice of elements and a slice of the integers have the same layout. These
//! casts let `fill_random` write the PRG output straight into the elements, let the wire
//! encoding of byte fields be one copy, and let the backends work on plain integer slices.
#![allow(unsafe_code)]

use crate::{Bits16, Fp, Gf2p4, Gf2p64, Gf2p8, Gf4Tower};

/// Views between `[$t]` and `[u8]` for a `#[repr(transparent)]` newtype over `u8`.
macro_rules! byte_views {
    ($t:ty, $to:ident, $to_mut:ident, $from:ident, $from_mut:ident) => {
        #[inline]
        pub(crate) fn $to(s: &[$t]) -> &[u8] {
            // SAFETY: `$t` is `#[repr(transparent)]` over `u8` (same size 1, alignment 1, any
            // bit pattern valid); the view has the same length and borrows `s`.
            unsafe { core::slice::from_raw_parts(s.as_ptr().cast::<u8>(), s.len()) }
        }
        #[inline]
        pub(crate) fn $to_mut(s: &mut [$t]) -> &mut [u8] {
            // SAFETY: as above; the view mutably borrows `s`, so there is no aliasing, and every
            // byte written is a valid `$t` (the type has no invariant the compiler relies on).
            unsafe { core::slice::from_raw_parts_mut(s.as_mut_ptr().cast::<u8>(), s.len()) }
        }
        #[inline]
        pub(crate) fn $from(b: &[u8]) -> &[$t] {
            // SAFETY: ``t` is `#[repr(transparent)]` over `u8`, every byte is a valid ``t`.
            unsafe { core::slice::from_raw_parts(b.as_ptr().cast::<$t>(), b.len()) }
        }
        #[inline]
        pub(crate) fn $from_mut(b: &mut [u8]) -> &mut [$t] {
            // SAFETY: as above; the view mutably borrows `b`.
            unsafe { core::slice::from_raw_parts_mut(b.as_mut_ptr().cast::<$t>(), b.len()) }
        }
    };
}

byte_views!(
    Gf2p8,
    gf2p8_as_bytes,
    gf2p8_as_bytes_mut,
    bytes_as_gf2p8,
    bytes_as_gf2p8_mut
);
byte_views!(
    Gf4Tower,
    tower_as_bytes,
    tower_as_bytes_mut,
    bytes_as_tower,
    bytes_as_tower_mut
);

/// `Gf2p4` slices as bytes, for `fill_random` (which masks every byte afterwards).
#[inline]
pub(crate) fn gf2p4_as_bytes_mut(s: &mut [Gf2p4]) -> &mut [u8] {
    // SAFETY: `Gf2p4` is `#[repr(transparent)]` over `u8`; any byte is a valid value for the
    // compiler (the nibble invariant is a library convention restored by the caller).
    unsafe { core::slice::from_raw_parts_mut(s.as_mut_ptr().cast::<u8>(), s.len()) }
}

/// `Gf2p4` slices as bytes (for the nibble-table embedding, which ignores high nibbles).
#[inline]
pub(crate) fn gf2p4_as_bytes(s: &[Gf2p4]) -> &[u8] {
    // SAFETY: `Gf2p4` is `#[repr(transparent)]` over `u8`; same length, borrows `s`.
    unsafe { core::slice::from_raw_parts(s.as_ptr().cast::<u8>(), s.len()) }
}

/// `Gf2p64` slices as `u64` slices.
#[inline]
pub(crate) fn gf2p64_as_words(s: &[Gf2p64]) -> &[u64] {
    // SAFETY: `Gf2p64` is `#[repr(transparent)]` over `u64`; same length, borrows `s`.
    unsafe { core::slice::from_raw_parts(s.as_ptr().cast::<u64>(), s.len()) }
}

/// `Gf2p64` slices as mutable `u64` slices.
#[inline]
pub(crate) fn gf2p64_as_words_mut(s: &mut [Gf2p64]) -> &mut [u64] {
    // SAFETY: as above, with a unique borrow of `s`.
    unsafe { core::slice::from_raw_parts_mut(s.as_mut_ptr().cast::<u64>(), s.len()) }
}

/// `Gf2p64` slices as their `8 * len` bytes in memory (native byte order), for `fill_random`.
#[inline]
pub(crate) fn gf2p64_as_bytes_mut(s: &mut [Gf2p64]) -> &mut [u8] {
    // SAFETY: a `[Gf2p64]` of length `n` is `8 n` initialised bytes (no padding); `u8` has
    // alignment 1 and every byte pattern is a valid `u64`; `8 n` cannot overflow because the
    // slice already occupies that many bytes; the view mutably borrows `s`.
    unsafe { core::slice::from_raw_parts_mut(s.as_mut_ptr().cast::<u8>(), s.len() * 8) }
}

/// `Bits16` slices as their `2 * len` bytes in memory (native byte order).
#[inline]
pub(crate) fn bits16_as_bytes(s: &[Bits16]) -> &[u8] {
    // SAFETY: `Bits16` is `#[repr(transparent)]` over `u16`: a slice of length `n` is `2 n`
    // initialised bytes (no padding), `u8` has alignment 1; the view borrows `s`.
    unsafe { core::slice::from_raw_parts(s.as_ptr().cast::<u8>(), s.len() * 2) }
}

/// `Bits16` slices as their words.
#[inline]
pub(crate) fn bits16_as_u16(s: &[Bits16]) -> &[u16] {
    // SAFETY: `Bits16` is `#[repr(transparent)]` over `u16` (same size, alignment and
    // validity); the view borrows `s`.
    unsafe { core::slice::from_raw_parts(s.as_ptr().cast::<u16>(), s.len()) }
}

/// `Bits16` slices as their `2 * len` mutable bytes in memory (native byte order).
#[inline]
pub(crate) fn bits16_as_bytes_mut(s: &mut [Bits16]) -> &mut [u8] {
    // SAFETY: as above; every byte pattern is a valid `u16`, and the view mutably borrows `s`.
    unsafe { core::slice::from_raw_parts_mut(s.as_mut_ptr().cast::<u8>(), s.len() * 2) }
}

/// `Fp` slices as their `16 * len` mutable bytes in memory (native byte order), for
/// `fill_random` to draw straight into the elements. The caller must bring every element back
/// below `p` before the view ends (`Fp`'s value invariant; any bit pattern is memory-safe).
#[inline]
pub(crate) fn fp_as_bytes_mut(s: &mut [Fp]) -> &mut [u8] {
    // SAFETY: `Fp` is `#[repr(transparent)]` over `u128`: a slice of length `n` is `16 n`
    // initialised bytes (no padding), `u8` has alignment 1, every bit pattern is a valid
    // `u128`, and the view mutably borrows `s`.
    unsafe { core::slice::from_raw_parts_mut(s.as_mut_ptr().cast::<u8>(), s.len() * 16) }
}

/// `Fp` slices as their `16 * len` bytes in memory (native byte order), for the wire encoding.
#[inline]
pub(crate) fn fp_as_bytes(s: &[Fp]) -> &[u8] {
    // SAFETY: `Fp` is `#[repr(transparent)]` over `u128`: a slice of length `n` is `16 n`
    // initialised bytes (no padding), `u8` has alignment 1, and the view borrows `s`.
    unsafe { core::slice::from_raw_parts(s.as_ptr().cast::<u8>(), s.len() * 16) }
}

/// `Fp` slices as their `u128` values, for the `F_p` kernels.
#[inline]
pub(crate) fn fp_as_words(s: &[Fp]) -> &[u128] {
    // SAFETY: `Fp` is `#[repr(transparent)]` over `u128` (same size and alignment); the view has
    // the same length and borrows `s`.
    unsafe { core::slice::from_raw_parts(s.as_ptr().cast::<u128>(), s.len()) }
}

/// `Fp` slices as their mutable `u128` values. The caller must leave every element below `p`
/// (`Fp`'s value invariant; any bit pattern is memory-safe).
#[inline]
pub(crate) fn fp_as_words_mut(s: &mut [Fp]) -> &mut [u128] {
    // SAFETY: as [`fp_as_words`]; the view mutably borrows `s`.
    unsafe { core::slice::from_raw_parts_mut(s.as_mut_ptr().cast::<u128>(), s.len()) }
}

/// Reuses a vector's allocation for another `#[repr(transparent)]` byte type (no copy).
macro_rules! byte_vec_cast {
    ($name:ident, $from:ty, $to:ty) => {
        pub(crate) fn $name(v: Vec<$from>) -> Vec<$to> {
            let mut v = core::mem::ManuallyDrop::new(v);
            let (ptr, len, cap) = (v.as_mut_ptr(), v.len(), v.capacity());
            // SAFETY: both types are `u8` or `#[repr(transparent)]` over `u8`: same size (1)
            // and alignment (1), so the allocation's layout is identical for both element
            // types, and every byte is a valid value for the compiler (`Gf2p4`'s nibble
            // invariant is a library convention its callers restore). `v` is not dropped
            // (ManuallyDrop), so ownership of the allocation moves to the new vector exactly
            // once.
            unsafe { Vec::from_raw_parts(ptr.cast::<$to>(), len, cap) }
        }
    };
}

byte_vec_cast!(vec_u8_into_gf2p8, u8, Gf2p8);
byte_vec_cast!(vec_gf2p8_into_u8, Gf2p8, u8);
byte_vec_cast!(vec_u8_into_gf2p4, u8, Gf2p4);
byte_vec_cast!(vec_gf2p4_into_u8, Gf2p4, u8);

/// Reuses a `u64` vector's allocation as a vector of `Gf2p64` (no copy).
pub(crate) fn vec_u64_into_gf2p64(v: Vec<u64>) -> Vec<Gf2p64> {
    let mut v = core::mem::ManuallyDrop::new(v);
    let (ptr, len, cap) = (v.as_mut_ptr(), v.len(), v.capacity());
    // SAFETY: `Gf2p64` is `#[repr(transparent)]` over `u64`: same size (8) and alignment (8),
    // so the allocation's layout is identical for both element types and every word is a
    // valid element. `v` is not dropped (ManuallyDrop), so ownership of the allocation moves
    // to the new vector exactly once.
    unsafe { Vec::from_raw_parts(ptr.cast::<Gf2p64>(), len, cap) }
}
