//! The run-time prime field `FpRt` against arbitrary-precision integers (num-bigint) for
//! primes of every size and residue class, against the specialised `Fp` for `p = 2^127+45` on
//! the same seeded inputs, and `prime::is_prime` against known primes and composites and an
//! independent Miller-Rabin on big integers.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use num_bigint::BigUint;
use num_traits::{One, ToPrimitive, Zero};
use rand::{Rng, RngCore, SeedableRng};
use rand_chacha::ChaCha20Rng;
use triskele_field::prime::{is_prime, jacobi};
use triskele_field::{Bulk, Encode, Field, FieldError, Fp, FpRt, PrimeField, Random};

fn rng(tag: u64) -> ChaCha20Rng {
    ChaCha20Rng::seed_from_u64(0x6670_7274_0000_0000 ^ tag)
}

fn big(x: u128) -> BigUint {
    BigUint::from(x)
}

fn small(x: &BigUint) -> u128 {
    x.to_u128().expect("fits in 128 bits")
}

/// Fixed primes: tiny, around 2^40, 2^61, 2^64, 2^127 and 2^128, with `p ≡ 3 (mod 4)`,
/// `5 (mod 8)` and `1 (mod 8)` (the last with `p - 1` divisible by 2^3 up to 2^32).
const FIXED: [u128; 15] = [
    3,
    5,
    7,
    17,
    97,
    998_244_353,               // 119·2^23 + 1
    3 * (1 << 30) + 1,         // 1 mod 2^30
    (1 << 40) - 87,            // 1 mod 8
    (1 << 61) - 1,             // 3 mod 4
    (1 << 64) - 59,            // 5 mod 8
    (1 << 64) - (1 << 32) + 1, // 1 mod 2^32
    (1 << 127) - 1,            // 3 mod 4
    (1 << 127) + 45,           // 5 mod 8 (Fp)
    u128::MAX - 158,           // 2^128 - 159, 1 mod 8
    (1 << 62) - 57,            // 3 mod 4
];

/// Miller-Rabin on big integers with `rounds` random bases (independent of `is_prime`).
fn bigint_probable_prime(n: u128, rounds: usize, r: &mut ChaCha20Rng) -> bool {
    if n < 4 {
        return n == 2 || n == 3;
    }
    if n.is_multiple_of(2) {
        return false;
    }
    let nb = big(n);
    let nm1 = big(n - 1);
    let t = (n - 1).trailing_zeros();
    let d = big((n - 1) >> t);
    'bases: for _ in 0..rounds {
        let a = big(r.random_range(2..n - 1));
        let mut x = a.modpow(&d, &nb);
        if x.is_one() || x == nm1 {
            continue;
        }
        for _ in 1..t {
            x = &x * &x % &nb;
            if x == nm1 {
                continue 'bases;
            }
        }
        return false;
    }
    true
}

/// Four random primes of 100 to 128 bits, found with `is_prime` and confirmed by the
/// big-integer test.
fn random_primes() -> Vec<u128> {
    let mut r = rng(1);
    let mut out = Vec::new();
    while out.len() < 4 {
        let bits = r.random_range(100..=128u32);
        let mut c = (r.random::<u128>() >> (128 - bits)) | (1 << (bits - 1)) | 1;
        while !is_prime(c) {
            c = c.wrapping_add(2) | (1 << (bits - 1)) | 1;
        }
        assert!(bigint_probable_prime(c, 40, &mut r), "{c}");
        out.push(c);
    }
    out
}

fn all_primes() -> Vec<u128> {
    let mut v = FIXED.to_vec();
    v.extend(random_primes());
    v
}

/// Edge values below `p`: 0, 1, 2, p-2, p-1, (p±1)/2, and the 2^64 boundary.
fn edges(p: u128) -> Vec<u128> {
    let mut v = vec![
        0,
        1,
        2,
        p - 2,
        p - 1,
        p / 2,
        p / 2 + 1,
        (1 << 64) - 1,
        1 << 64,
        (1 << 64) + 1,
        (1 << 127) - 1,
        1 << 127,
    ];
    v.retain(|&x| x < p);
    v.sort_unstable();
    v.dedup();
    v
}

/// Edges plus random elements.
fn values(p: u128, n: usize, r: &mut ChaCha20Rng) -> Vec<FpRt> {
    let mut v: Vec<FpRt> = edges(p)
        .into_iter()
        .map(|x| FpRt::new(x).unwrap())
        .collect();
    v.extend((0..n).map(|_| FpRt::random(r)));
    v
}

fn on_each_prime(f: impl Fn(u128, &mut ChaCha20Rng)) {
    for (i, p) in all_primes().into_iter().enumerate() {
        FpRt::with_modulus(p, || {
            assert_eq!(FpRt::modulus(), p);
            f(p, &mut rng(100 + i as u64));
        })
        .unwrap();
    }
}

#[test]
fn arithmetic_matches_bigint() {
    on_each_prime(|p, r| {
        let pb = big(p);
        let xs = values(p, 40, r);
        for &x in &xs {
            let xb = big(x.value());
            assert!(x.value() < p);
            // Negation, inverse (0^-1 = 0), powers.
            assert_eq!(big((-x).value()), (&pb - &xb) % &pb);
            let inv = x.inverse();
            if x.is_zero() {
                assert_eq!(inv, FpRt::ZERO);
            } else {
                assert_eq!(big(inv.value()), xb.modpow(&(&pb - 2u32), &pb));
                assert_eq!(x * inv, FpRt::ONE, "p = {p}, x = {x}");
            }
            for e in [
                0u128,
                1,
                2,
                3,
                p - 1,
                p,
                r.random(),
                r.random::<u64>() as u128,
            ] {
                let want = small(&xb.modpow(&big(e), &pb));
                assert_eq!(x.pow(e).value(), want, "p = {p}: {x}^{e}");
                assert_eq!(x.pow_u128(e).value(), want, "p = {p}: {x}^{e}");
            }
            for &y in &xs {
                let yb = big(y.value());
                assert_eq!(big((x + y).value()), (&xb + &yb) % &pb, "{p}: {x} + {y}");
                assert_eq!(
                    big((x - y).value()),
                    (&pb + &xb - &yb) % &pb,
                    "{p}: {x} - {y}"
                );
                assert_eq!(big((x * y).value()), &xb * &yb % &pb, "{p}: {x} * {y}");
            }
        }
        // Reduction of arbitrary integers, small integers.
        for v in [
            0u128,
            1,
            p - 1,
            p,
            p + 1,
            u64::MAX as u128,
            u128::MAX,
            r.random(),
        ] {
            assert_eq!(FpRt::from_u128_reduced(v).value(), v % p);
        }
        for v in [0u64, 1, 2, 3, u64::MAX, r.random()] {
            assert_eq!(FpRt::from(v).value(), v as u128 % p);
        }
        assert_eq!(FpRt::new(p), None);
        assert_eq!(-FpRt::ONE, FpRt::new(p - 1).unwrap());
    });
}

#[test]
fn slices_match_scalar_and_bigint() {
    on_each_prime(|p, r| {
        let pb = big(p);
        for n in [0usize, 1, 2, 3, 17, 300] {
            let mut a = values(p, n, r);
            let mut b = values(p, n, r);
            a.truncate(n);
            b.truncate(n);
            let c = values(p, n, r)[..n].to_vec();
            let mut out = vec![FpRt::ZERO; n];
            FpRt::mul_slice(&mut out, &a, &b);
            let prod: Vec<FpRt> = a.iter().zip(&b).map(|(x, y)| *x * *y).collect();
            assert_eq!(out, prod);
            let mut acc = c.clone();
            FpRt::mul_add_slice(&mut acc, &a, &b);
            let want: Vec<FpRt> = c.iter().zip(&prod).map(|(z, x)| *z + *x).collect();
            assert_eq!(acc, want);
            let mut sum = c.clone();
            FpRt::add_assign_slice(&mut sum, &a);
            let want: Vec<FpRt> = c.iter().zip(&a).map(|(z, x)| *z + *x).collect();
            assert_eq!(sum, want);
            let ip = a.iter().zip(&b).fold(BigUint::zero(), |s, (x, y)| {
                s + big(x.value()) * big(y.value())
            });
            assert_eq!(big(FpRt::inner_product(&a, &b).value()), ip % &pb);
            assert_eq!(
                a.iter().copied().sum::<FpRt>(),
                a.iter().fold(FpRt::ZERO, |s, x| s + *x)
            );
            assert_eq!(a.iter().sum::<FpRt>(), a.iter().copied().sum::<FpRt>());
            assert_eq!(
                a.iter().copied().product::<FpRt>(),
                a.iter().fold(FpRt::ONE, |s, x| s * *x)
            );
        }
        // The largest products, many times: the inner product's carry word.
        let top = vec![FpRt::new(p - 1).unwrap(); 5000];
        let want = big(p - 1) * big(p - 1) * 5000u32 % &pb;
        assert_eq!(big(FpRt::inner_product(&top, &top).value()), want);
        let mut acc = top.clone();
        FpRt::mul_add_slice(&mut acc, &top, &top);
        // (p-1)^2 + (p-1) = p(p-1) = 0.
        assert!(acc.iter().all(|x| x.is_zero()));
    });
}

#[test]
fn axioms_on_random_elements() {
    on_each_prime(|p, r| {
        for _ in 0..200 {
            let [a, b, c]: [FpRt; 3] = core::array::from_fn(|_| FpRt::random(r));
            assert_eq!((a + b) + c, a + (b + c));
            assert_eq!((a * b) * c, a * (b * c));
            assert_eq!(a * (b + c), a * b + a * c);
            assert_eq!(a - b, a + (-b));
            assert_eq!(a.square(), a * a);
            assert_eq!(a + a == FpRt::ZERO, a.is_zero(), "p = {p}");
            let mut x = a;
            x += b;
            x -= c;
            x *= b;
            assert_eq!(x, (a + b - c) * b);
        }
    });
}

#[test]
fn encoding_is_strict() {
    on_each_prime(|p, r| {
        let xs = values(p, 50, r);
        let bytes = FpRt::encode_to_vec(&xs);
        assert_eq!(bytes.len(), 16 * xs.len());
        assert_eq!(&bytes[..16], &xs[0].value().to_le_bytes());
        assert_eq!(FpRt::decode_to_vec(&bytes, xs.len()).unwrap(), xs);
        let out_of_range = || FieldError::OutOfRange { field: FpRt::NAME };
        for bad in [p, p + 1, u128::MAX] {
            assert_eq!(
                FpRt::decode_to_vec(&bad.to_le_bytes(), 1),
                Err(out_of_range())
            );
        }
        assert_eq!(
            FpRt::decode_to_vec(&(p - 1).to_le_bytes(), 1).unwrap(),
            vec![-FpRt::ONE]
        );
        assert!(matches!(
            FpRt::decode_to_vec(&bytes[1..], xs.len()),
            Err(FieldError::LengthMismatch { .. })
        ));
        // Arbitrary bytes: accepted exactly when every word is below p.
        for _ in 0..50 {
            let mut b = vec![0u8; 48];
            r.fill_bytes(&mut b);
            let ok = b
                .chunks(16)
                .all(|w| u128::from_le_bytes(w.try_into().unwrap()) < p);
            match FpRt::decode_to_vec(&b, 3) {
                Ok(v) => {
                    assert!(ok);
                    assert_eq!(FpRt::encode_to_vec(&v), b);
                }
                Err(e) => {
                    assert!(!ok);
                    assert_eq!(e, out_of_range());
                }
            }
        }
    });
}

#[test]
fn sampling_is_masked_rejection() {
    on_each_prime(|p, r| {
        let n = 2000;
        let xs: Vec<FpRt> = (0..n).map(|_| FpRt::random(r)).collect();
        assert!(xs.iter().all(|x| x.value() < p));
        let distinct: std::collections::HashSet<FpRt> = xs.iter().copied().collect();
        if p < 100 {
            assert_eq!(distinct.len() as u128, p, "every element is drawn");
        } else if p > 1 << 40 {
            assert_eq!(distinct.len(), n);
            // The top bit of p is set in about half the samples (masking to bitlen(p)).
            let top = 127 - p.leading_zeros();
            let high = xs.iter().filter(|x| x.value() >> top == 1).count();
            let frac = high as f64 / n as f64;
            let expect = (p - (1 << top)) as f64 / p as f64;
            assert!((frac - expect).abs() < 0.05, "p = {p}: {frac} vs {expect}");
        }
        // The stream layouts: `random` takes 16-byte draws until one is accepted;
        // `fill_random` takes 16 bytes per missing element at a time, in one call.
        let mask = u128::MAX >> p.leading_zeros();
        let accept = |w: &[u8]| {
            let v = u128::from_le_bytes(w.try_into().unwrap()) & mask;
            (v < p).then_some(v)
        };
        let mut c = rng(9);
        let first = loop {
            let mut w = [0u8; 16];
            c.fill_bytes(&mut w);
            if let Some(v) = accept(&w) {
                break v;
            }
        };
        assert_eq!(FpRt::random(&mut rng(9)).value(), first);
        for n in [0usize, 1, 2, 100, 1000] {
            let mut filled = vec![FpRt::ZERO; n];
            let mut a = rng(9);
            FpRt::fill_random(&mut a, &mut filled);
            let mut want = Vec::new();
            let mut c = rng(9);
            while want.len() < n {
                let mut bytes = vec![0u8; 16 * (n - want.len())];
                c.fill_bytes(&mut bytes);
                want.extend(bytes.chunks(16).filter_map(accept));
            }
            assert_eq!(filled.iter().map(|x| x.value()).collect::<Vec<_>>(), want);
            // Both streams are at the same position afterwards.
            assert_eq!(a.next_u64(), c.next_u64());
            assert!(filled.iter().all(|x| x.value() < p));
        }
    });
}

#[test]
fn legendre_matches_euler_criterion() {
    on_each_prime(|p, r| {
        let pb = big(p);
        let e = big((p - 1) / 2);
        for x in values(p, 200, r) {
            let euler = big(x.value()).modpow(&e, &pb);
            let want = if euler.is_zero() {
                0
            } else if euler.is_one() {
                1
            } else {
                assert_eq!(euler, &pb - 1u32);
                -1
            };
            assert_eq!(x.legendre(), want, "({x} | {p})");
            assert_eq!(jacobi(x.value(), p), want);
        }
    });
}

#[test]
fn square_roots_in_every_residue_class() {
    let classes: std::collections::BTreeSet<u128> = all_primes()
        .into_iter()
        .map(|p| if p % 4 == 3 { 3 } else { p % 8 })
        .collect();
    assert_eq!(classes, [1, 3, 5].into_iter().collect());
    on_each_prime(|p, r| {
        for x in values(p, 100, r) {
            let sq = x.square();
            let root = sq
                .sqrt()
                .unwrap_or_else(|| panic!("p = {p}: no root of {sq}"));
            assert!(root == x || root == -x, "p = {p}: {root}^2 = {sq}");
            // A non-square has none.
            if x.legendre() == -1 {
                assert_eq!(x.sqrt(), None, "p = {p}: {x}");
            } else if let Some(y) = x.sqrt() {
                assert_eq!(y.square(), x);
            } else {
                panic!("p = {p}: square {x} without root");
            }
        }
    });
}

#[test]
fn default_prime_matches_fp() {
    FpRt::with_modulus(Fp::MODULUS, || {
        assert_eq!(FpRt::modulus(), Fp::modulus());
        // The same seeded integers, reduced (the two samplers are specified separately).
        let mut r = rng(5);
        let raw: Vec<u128> = (0..300).map(|_| r.random()).collect();
        let mut fps: Vec<Fp> = raw.iter().map(|&v| Fp::from_u128_reduced(v)).collect();
        let mut rts: Vec<FpRt> = raw.iter().map(|&v| FpRt::from_u128_reduced(v)).collect();
        for e in edges(Fp::MODULUS) {
            fps.push(Fp::new(e).unwrap());
            rts.push(FpRt::new(e).unwrap());
        }
        let same = |a: Fp, b: FpRt| assert_eq!(a.value(), b.value());
        for (&a, &x) in fps.iter().zip(&rts) {
            same(-a, -x);
            same(a.inverse(), x.inverse());
            same(a.square(), x.square());
            same(a.pow(0x1234_5678_9abc), x.pow(0x1234_5678_9abc));
            assert_eq!(a.legendre(), x.legendre());
            assert_eq!(a.sqrt().map(Fp::value), x.sqrt().map(FpRt::value));
            assert_eq!(Fp::encode_to_vec(&[a]), FpRt::encode_to_vec(&[x]));
            assert_eq!(a.to_string(), x.to_string());
            for (&b, &y) in fps.iter().zip(&rts).take(40) {
                same(a + b, x + y);
                same(a - b, x - y);
                same(a * b, x * y);
            }
        }
        let bytes = Fp::encode_to_vec(&fps);
        let back = FpRt::decode_to_vec(&bytes, rts.len()).unwrap();
        assert_eq!(back, rts);
        same(
            Fp::inner_product(&fps, &fps),
            FpRt::inner_product(&rts, &rts),
        );
        let mut fo = fps.clone();
        let mut ro = rts.clone();
        Fp::mul_add_slice(&mut fo, &fps, &fps);
        FpRt::mul_add_slice(&mut ro, &rts, &rts);
        for (a, x) in fo.iter().zip(&ro) {
            same(*a, *x);
        }
        for v in [u128::MAX, Fp::MODULUS, 12345] {
            same(Fp::from_u128_reduced(v), FpRt::from_u128_reduced(v));
        }
    })
    .unwrap();
}

#[test]
fn with_modulus_rejects_non_primes() {
    let chernick: u128 = 26_916_868_254_848_549_730_386_124_349_256_388_409;
    for p in [
        0u128,
        1,
        2,
        4,
        1 << 64,
        u128::MAX - 1,
        9,
        15,
        561,
        3_215_031_751,
        chernick,
        ((1u128 << 64) - 59) * ((1 << 64) - 59),
        u128::MAX,
    ] {
        match FpRt::with_modulus(p, || ()) {
            Err(FieldError::InvalidModulus { modulus, reason }) => {
                assert_eq!(modulus, p);
                assert!(!reason.is_empty());
            }
            other => panic!("{p}: {other:?}"),
        }
    }
}

#[test]
fn is_prime_on_known_numbers() {
    for p in all_primes() {
        assert!(is_prime(p), "{p}");
    }
    for p in [
        2u128,
        3,
        5,
        101,
        65_537,
        (1 << 31) - 1,
        (1 << 89) - 1,
        (1 << 107) - 1,
    ] {
        assert!(is_prime(p), "{p}");
    }
    // Carmichael numbers (561 ... with small factors; Chernick's (6k+1)(12k+1)(18k+1) with
    // all factors large, 26 and 125 bits), strong pseudoprimes to base 2 and to several
    // bases, ψ_12 and ψ_13, squares and products of two large primes.
    let (q60, q59, q62) = ((1u128 << 60) - 93, (1u128 << 59) - 55, (1u128 << 62) - 57);
    let composites = [
        0u128,
        1,
        4,
        561,
        1105,
        1729,
        41_041,
        825_265,
        321_197_185,
        5_394_826_801,
        232_250_619_601,
        9_746_347_772_161,
        56_052_361,
        118_901_521,
        26_916_868_254_848_549_730_386_124_349_256_388_409,
        2047,
        1_373_653,
        25_326_001,
        3_215_031_751,
        2_152_302_898_747,
        3_474_749_660_383,
        341_550_071_728_321,
        3_825_123_056_546_413_051,
        318_665_857_834_031_151_167_461,
        3_317_044_064_679_887_385_961_981,
        q60 * q59,
        q60 * q62,
        q62 * q62,
        ((1 << 64) - 59) * ((1 << 64) - 59),
        ((1 << 61) - 1) * ((1 << 61) - 1),
        (1 << 127) + 1,
        u128::MAX,
        u128::MAX - 2,
    ];
    for n in composites {
        assert!(!is_prime(n), "{n}");
    }
    for p in [q60, q59, q62] {
        assert!(is_prime(p));
    }
}

#[test]
fn is_prime_agrees_with_bigint_miller_rabin() {
    let mut r = rng(3);
    for bits in [20u32, 40, 64, 65, 90, 127, 128] {
        for _ in 0..200 {
            let n = (r.random::<u128>() >> (128 - bits)) | 1;
            assert_eq!(is_prime(n), bigint_probable_prime(n, 30, &mut r), "{n}");
        }
    }
}
