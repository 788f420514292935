//! Lookups of a 4-bit table by a one-hot vector (Protocol 4 of MAESTRO, PROTOCOLS.md §4.3):
//! `Σ_t e[t] · T(c ⊕ t)` for a 16-bit vector `e` and a 4-bit offset `c`, computed as four
//! parities `parity(e & M[c][b])`, one per output bit `b`.

use crate::backend::{self, cast, Backend};
use crate::Gf2p4;

/// A 4-bit table `T` prepared for one-hot lookups: bit `t` of `masks[c][b]` is bit `b` of
/// `T(c ⊕ t)`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct OneHotLookup16 {
    masks: [[u16; 4]; 16],
}

impl OneHotLookup16 {
    /// The lookup of `table` (entries' high nibbles ignored).
    pub const fn new(table: &[u8; 16]) -> Self {
        let mut masks = [[0u16; 4]; 16];
        let mut c = 0;
        while c < 16 {
            let mut t = 0;
            while t < 16 {
                let y = table[c ^ t];
                let mut b = 0;
                while b < 4 {
                    masks[c][b] |= (((y >> b) & 1) as u16) << t;
                    b += 1;
                }
                t += 1;
            }
            c += 1;
        }
        OneHotLookup16 { masks }
    }

    /// `masks[c][b]`: bit `t` is bit `b` of `T(c ⊕ t)`.
    pub const fn masks(&self) -> &[[u16; 4]; 16] {
        &self.masks
    }

    /// `Σ_t e[t] T(c ⊕ t)` (the offset's high nibble ignored).
    #[inline]
    pub fn get(&self, e: u16, c: Gf2p4) -> Gf2p4 {
        Gf2p4(lookup(&self.masks, e, c.0))
    }

    /// [`OneHotLookup16::get`] element-wise on the common prefix of `e`, `c` and `out`, on
    /// [`backend::active`].
    pub fn apply(&self, e: &[u16], c: &[Gf2p4], out: &mut [Gf2p4]) {
        self.apply_with(backend::active(), e, c, out);
    }

    /// [`OneHotLookup16::apply`] on an explicit backend (the portable code runs if `be` is
    /// [`Backend::Portable`] or not available on this CPU). Every backend gives the same
    /// elements.
    pub fn apply_with(&self, be: Backend, e: &[u16], c: &[Gf2p4], out: &mut [Gf2p4]) {
        backend::onehot_lookup16(
            be,
            &self.masks,
            e,
            cast::gf2p4_as_bytes(c),
            cast::gf2p4_as_bytes_mut(out),
        );
    }
}

/// One lookup: four masked parities.
#[inline]
fn lookup(masks: &[[u16; 4]; 16], e: u16, c: u8) -> u8 {
    let m = &masks[(c & 0x0f) as usize];
    let mut r = 0;
    for (b, mb) in m.iter().enumerate() {
        r |= (((e & mb).count_ones() & 1) as u8) << b;
    }
    r
}

/// The portable kernel (also the tails of the SIMD one).
pub(crate) fn portable(masks: &[[u16; 4]; 16], e: &[u16], c: &[u8], out: &mut [u8]) {
    for ((o, e), c) in out.iter_mut().zip(e).zip(c) {
        *o = lookup(masks, *e, *c);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn masks_follow_the_definition() {
        let table: [u8; 16] = core::array::from_fn(|i| (i as u8).wrapping_mul(7) ^ 0x35);
        let l = OneHotLookup16::new(&table);
        for c in 0..16u8 {
            for t in 0..16u8 {
                // A one-hot vector at `t` selects `T(c ⊕ t)`.
                assert_eq!(l.get(1 << t, Gf2p4(c)).0, table[(c ^ t) as usize] & 0x0f);
            }
            // Linear in `e`.
            assert_eq!(
                l.get(0b1001, Gf2p4(c)).0,
                (table[c as usize] ^ table[(c ^ 3) as usize]) & 0x0f
            );
        }
    }
}
