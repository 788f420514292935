//! One generic test suite, instantiated for every field (STYLE.md rule 10): axioms on random
//! elements, inverses, encoding round trips and strictness, slice operations against the naive
//! scalar loops, sampling, and (proptest) decoding of arbitrary bytes never panics.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use rand::{RngCore, SeedableRng};
use rand_chacha::ChaCha20Rng;
use triskele_field::{Bulk, Encode, Field, FieldError, Random};

fn rng(tag: u64) -> ChaCha20Rng {
    ChaCha20Rng::seed_from_u64(0x7269_736b_656c_6500 ^ tag)
}

/// A scripted byte stream: the given bytes in order, repeated.
struct Script(Vec<u8>, usize);
impl RngCore for Script {
    fn next_u32(&mut self) -> u32 {
        let mut b = [0u8; 4];
        self.fill_bytes(&mut b);
        u32::from_le_bytes(b)
    }
    fn next_u64(&mut self) -> u64 {
        let mut b = [0u8; 8];
        self.fill_bytes(&mut b);
        u64::from_le_bytes(b)
    }
    fn fill_bytes(&mut self, dst: &mut [u8]) {
        for d in dst {
            *d = self.0[self.1 % self.0.len()];
            self.1 += 1;
        }
    }
}

fn randoms<F: Random>(r: &mut ChaCha20Rng, n: usize) -> Vec<F> {
    (0..n).map(|_| F::random(r)).collect()
}

pub fn axioms<F: Field + Random>() {
    let mut r = rng(1);
    for _ in 0..500 {
        let [a, b, c]: [F; 3] = core::array::from_fn(|_| F::random(&mut r));
        assert_eq!(a + b, b + a);
        assert_eq!(a * b, b * a);
        assert_eq!((a + b) + c, a + (b + c));
        assert_eq!((a * b) * c, a * (b * c));
        assert_eq!(a * (b + c), a * b + a * c);
        assert_eq!(a + F::ZERO, a);
        assert_eq!(a * F::ONE, a);
        assert_eq!(a * F::ZERO, F::ZERO);
        assert_eq!(a + (-a), F::ZERO);
        assert_eq!(a - b, a + (-b));
        assert_eq!((a - b) + b, a);
        assert_eq!(a.square(), a * a);
        assert_eq!(a.is_zero(), a == F::ZERO);
        assert_eq!(a + a == F::ZERO, F::CHARACTERISTIC_TWO || a == F::ZERO);
        let mut x = a;
        x += b;
        assert_eq!(x, a + b);
        x -= b;
        assert_eq!(x, a);
        x *= b;
        assert_eq!(x, a * b);
    }
    assert_ne!(F::ZERO, F::ONE);
    assert_eq!(F::default(), F::ZERO);
}

pub fn inverses<F: Field + Random>() {
    let mut r = rng(2);
    assert_eq!(F::ZERO.inverse(), F::ZERO);
    assert_eq!(F::ONE.inverse(), F::ONE);
    for _ in 0..300 {
        let a = F::random(&mut r);
        if a != F::ZERO {
            assert_eq!(a * a.inverse(), F::ONE, "{a:?}");
            assert_eq!(a.inverse().inverse(), a);
        }
    }
}

pub fn encoding<F: Encode + Random>() {
    let mut r = rng(3);
    for n in [0usize, 1, 2, 3, 7, 8, 9, 100] {
        let xs: Vec<F> = randoms(&mut r, n);
        let bytes = F::encode_to_vec(&xs);
        assert_eq!(bytes.len(), F::encoded_len(n));
        let mut back = vec![F::ZERO; n];
        F::decode_slice(&bytes, &mut back).unwrap();
        assert_eq!(back, xs);
        assert_eq!(F::decode_to_vec(&bytes, n).unwrap(), xs);
        assert_eq!(F::decode_owned(bytes.clone(), n).unwrap(), xs);
        let mut longer = bytes.clone();
        longer.push(0);
        assert!(F::decode_owned(longer.clone(), n).is_err());
        // Appends after what is there; a wrong length leaves the vector as it was.
        let head: Vec<F> = randoms(&mut r, 3);
        let mut appended = head.clone();
        F::decode_append(&bytes, n, &mut appended).unwrap();
        assert_eq!(&appended[..3], &head[..]);
        assert_eq!(&appended[3..], &xs[..]);
        assert!(F::decode_append(&longer, n, &mut appended).is_err());
        assert_eq!(appended.len(), 3 + n);
        // Appends, does not overwrite.
        let mut out = vec![0xAA];
        F::encode_slice(&xs, &mut out);
        assert_eq!(out[0], 0xAA);
        assert_eq!(&out[1..], &bytes[..]);
        // Wrong lengths are rejected with the expected length.
        let mut longer = bytes.clone();
        longer.push(0);
        assert_eq!(
            F::decode_slice(&longer, &mut back),
            Err(FieldError::LengthMismatch {
                expected: bytes.len(),
                got: bytes.len() + 1
            })
        );
        if !bytes.is_empty() {
            assert!(matches!(
                F::decode_slice(&bytes[1..], &mut back),
                Err(FieldError::LengthMismatch { .. })
            ));
        }
    }
}

pub fn slices<F: Bulk + Random>() {
    let mut r = rng(4);
    for n in [0usize, 1, 5, 31, 32, 33, 200] {
        let a: Vec<F> = randoms(&mut r, n);
        let b: Vec<F> = randoms(&mut r, n);
        let c: Vec<F> = randoms(&mut r, n);

        let mut out = vec![F::ZERO; n];
        F::mul_slice(&mut out, &a, &b);
        let expect: Vec<F> = a.iter().zip(&b).map(|(x, y)| *x * *y).collect();
        assert_eq!(out, expect);

        let mut acc = c.clone();
        F::mul_add_slice(&mut acc, &a, &b);
        let expect: Vec<F> = c
            .iter()
            .zip(&a)
            .zip(&b)
            .map(|((z, x), y)| *z + *x * *y)
            .collect();
        assert_eq!(acc, expect);

        let mut sum = c.clone();
        F::add_assign_slice(&mut sum, &a);
        let expect: Vec<F> = c.iter().zip(&a).map(|(z, x)| *z + *x).collect();
        assert_eq!(sum, expect);

        let naive = a.iter().zip(&b).fold(F::ZERO, |s, (x, y)| s + *x * *y);
        assert_eq!(F::inner_product(&a, &b), naive);
    }
}

/// `field_size`: the number of elements if small enough that 4099 samples hit all of them
/// (with overwhelming probability), else `None` (then all samples must differ).
pub fn sampling<F: Encode + Random + core::hash::Hash>(field_size: Option<usize>) {
    // Every sample is a valid element: it survives the strict decoder.
    let mut r = rng(5);
    let xs: Vec<F> = randoms(&mut r, 4096);
    assert_eq!(
        F::decode_to_vec(&F::encode_to_vec(&xs), xs.len()).unwrap(),
        xs
    );
    let mut filled = vec![F::ZERO; 4099];
    F::fill_random(&mut r, &mut filled);
    assert_eq!(
        F::decode_to_vec(&F::encode_to_vec(&filled), filled.len()).unwrap(),
        filled
    );
    // Same seed, same elements; not all equal.
    let mut again = vec![F::ZERO; 4099];
    let mut r2 = rng(5);
    let _: Vec<F> = randoms(&mut r2, 4096);
    F::fill_random(&mut r2, &mut again);
    assert_eq!(again, filled);
    let distinct: std::collections::HashSet<F> = filled.iter().copied().collect();
    assert_eq!(distinct.len(), field_size.unwrap_or(filled.len()));
    xor_bytes_contract::<F>(&filled);
}

/// `Random::xor_bytes_mut`: where a type offers the byte view, adding `fill_random`'s output
/// is XORing the stream's bytes into the view and masking.
fn xor_bytes_contract<F: Random>(base: &[F]) {
    let mut r = rng(8);
    let mut stream = vec![0u8; 16 * base.len()];
    r.fill_bytes(&mut stream);
    let mut viewed = base.to_vec();
    let Some((bytes, mask)) = F::xor_bytes_mut(&mut viewed) else {
        return;
    };
    let n = bytes.len();
    assert!(n > 0 && n.is_multiple_of(base.len()));
    for (b, s) in bytes.iter_mut().zip(&stream) {
        *b = (*b ^ *s) & mask;
    }
    let mut rs = vec![F::ZERO; base.len()];
    F::fill_random(&mut Script(stream[..n].to_vec(), 0), &mut rs);
    let added: Vec<F> = base.iter().zip(&rs).map(|(a, r)| *a + *r).collect();
    assert_eq!(viewed, added);
}

pub fn decode_never_panics<F: Encode>(bytes: &[u8], n: usize) {
    let mut out = vec![F::ZERO; n];
    if F::decode_slice(bytes, &mut out).is_ok() {
        // Strict: an accepted string is the encoding of what it decodes to.
        assert_eq!(F::encode_to_vec(&out), bytes);
    }
}

macro_rules! field_tests {
    ($name:ident, $t:ty, size = $size:expr) => {
        mod $name {
            use super::*;
            type F = $t;

            #[test]
            fn axioms() {
                super::axioms::<F>();
            }
            #[test]
            fn inverses() {
                super::inverses::<F>();
            }
            #[test]
            fn encoding() {
                super::encoding::<F>();
            }
            #[test]
            fn slices() {
                super::slices::<F>();
            }
            #[test]
            fn sampling() {
                super::sampling::<F>($size);
            }
            #[test]
            fn sum_and_product() {
                let xs: Vec<F> = randoms(&mut rng(7), 20);
                assert_eq!(xs.iter().copied().sum::<F>(), xs.iter().fold(F::ZERO, |s, x| s + *x));
                assert_eq!(xs.iter().sum::<F>(), xs.iter().copied().sum::<F>());
                assert_eq!(xs.iter().copied().product::<F>(), xs.iter().fold(F::ONE, |s, x| s * *x));
            }
            #[test]
            fn zeroize() {
                use zeroize::Zeroize;
                let mut x = F::random(&mut rng(6));
                x.zeroize();
                assert_eq!(x, F::ZERO);
            }

            proptest::proptest! {
                #[test]
                fn decode_arbitrary(bytes in proptest::collection::vec(proptest::num::u8::ANY, 0..80), n in 0usize..40) {
                    super::decode_never_panics::<F>(&bytes, n);
                }
                #[test]
                fn decode_exact_length(seed in proptest::num::u64::ANY, n in 0usize..20) {
                    let mut r = ChaCha20Rng::seed_from_u64(seed);
                    let mut bytes = vec![0u8; <F as Encode>::encoded_len(n)];
                    r.fill_bytes(&mut bytes);
                    super::decode_never_panics::<F>(&bytes, n);
                }
            }
        }
    };
}

field_tests!(gf2p8, triskele_field::Gf2p8, size = Some(256));
field_tests!(gf2p4, triskele_field::Gf2p4, size = Some(16));
field_tests!(gf4_tower, triskele_field::Gf4Tower, size = Some(256));
field_tests!(gf2p64, triskele_field::Gf2p64, size = None);
field_tests!(fp, triskele_field::Fp, size = None);

// ---- type-specific encoding and sampling details ------------------------------------------

mod details {
    use super::Script;
    use triskele_field::{Encode, FieldError, Fp, Gf2p4, Gf2p64, Random};

    #[test]
    fn gf2p4_packing_and_padding() {
        let xs = [Gf2p4(0x1), Gf2p4(0x2), Gf2p4(0xf)];
        assert_eq!(Gf2p4::encode_to_vec(&xs), vec![0x12, 0xf0]);
        assert_eq!(
            Gf2p4::decode_to_vec(&[0x12, 0xf1], 3),
            Err(FieldError::OutOfRange { field: "GF(2^4)" })
        );
        assert_eq!(
            Gf2p4::decode_to_vec(&[0xab], 2).unwrap(),
            vec![Gf2p4(0xa), Gf2p4(0xb)]
        );
        assert_eq!(Gf2p4::new(0x10), None);
        assert_eq!(Gf2p4::from_low_nibble(0xfe), Gf2p4(0xe));
    }

    #[test]
    fn gf2p64_is_big_endian() {
        let x = Gf2p64(0x0102_0304_0506_0708);
        assert_eq!(Gf2p64::encode_to_vec(&[x]), vec![1, 2, 3, 4, 5, 6, 7, 8]);
    }

    #[test]
    fn fp_is_little_endian_and_rejects_p() {
        let x = Fp::from(0x0102);
        let mut enc = vec![0u8; 16];
        enc[0] = 0x02;
        enc[1] = 0x01;
        assert_eq!(Fp::encode_to_vec(&[x]), enc);
        let p = Fp::MODULUS.to_le_bytes();
        assert_eq!(
            Fp::decode_to_vec(&p, 1),
            Err(FieldError::OutOfRange {
                field: "F_p (p = 2^127 + 45)"
            })
        );
        assert_eq!(
            Fp::decode_to_vec(&(Fp::MODULUS - 1).to_le_bytes(), 1).unwrap(),
            vec![-Fp::from(1)]
        );
        // A word out of range anywhere in a longer message is rejected by every decoder, and
        // an append then leaves the vector as it was.
        let good: Vec<Fp> = (0..37u64).map(|v| Fp::from(v * 1_000_003)).collect();
        for at in [0, 5, 36] {
            let mut bytes = Fp::encode_to_vec(&good);
            bytes[16 * at..16 * at + 16].copy_from_slice(&u128::MAX.to_le_bytes());
            assert!(Fp::decode_to_vec(&bytes, 37).is_err());
            assert!(Fp::decode_slice(&bytes, &mut [Fp::from(0); 37]).is_err());
            let mut out = vec![Fp::from(7)];
            assert!(Fp::decode_append(&bytes, 37, &mut out).is_err());
            assert_eq!(out, vec![Fp::from(7)]);
        }
    }

    #[test]
    fn stream_layouts() {
        // F_p: 16 bytes little-endian shifted right by one (a value below 2^127 < p, no
        // rejection), in `random` and `fill_random` alike.
        let bytes: Vec<u8> = (0xf0..=0xff).chain(1..=16).collect();
        let mut s = Script(bytes.clone(), 0);
        let x = Fp::random(&mut s);
        let expect = u128::from_le_bytes(bytes[..16].try_into().unwrap()) >> 1;
        assert_eq!(x.value(), expect);
        assert_eq!(s.1, 16);
        let mut s = Script(bytes.clone(), 0);
        let mut two = [Fp::from(0u64); 2];
        Fp::fill_random(&mut s, &mut two);
        assert_eq!(two[0].value(), expect);
        assert_eq!(
            two[1].value(),
            u128::from_le_bytes(bytes[16..32].try_into().unwrap()) >> 1
        );
        assert_eq!(s.1, 32);
        // GF(2^64): 8 bytes little-endian, also in fill_random.
        let mut s = Script((1..=16).collect(), 0);
        assert_eq!(Gf2p64::random(&mut s), Gf2p64(0x0807_0605_0403_0201));
        let mut s = Script((1..=16).collect(), 0);
        let mut two = [Gf2p64(0); 2];
        Gf2p64::fill_random(&mut s, &mut two);
        assert_eq!(
            two,
            [Gf2p64(0x0807_0605_0403_0201), Gf2p64(0x100f_0e0d_0c0b_0a09)]
        );
        // GF(2^4): one byte, low nibble.
        let mut s = Script(vec![0xab, 0xcd], 0);
        assert_eq!(Gf2p4::random(&mut s), Gf2p4(0xb));
        let mut s = Script(vec![0xab, 0xcd], 0);
        let mut two = [Gf2p4(0); 2];
        Gf2p4::fill_random(&mut s, &mut two);
        assert_eq!(two, [Gf2p4(0xb), Gf2p4(0xd)]);
    }
}
