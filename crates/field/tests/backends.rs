//! Every backend against the portable one on the same ChaCha-seeded inputs (STYLE.md rule 8),
//! over lengths that cover empty slices, vector tails and long runs; and the
//! `TRISKELE_BACKEND=portable` switch, checked in a child process.
//!
//! The loops run over `Backend::ALL`: a backend this CPU lacks runs the portable code (so the
//! GFNI code executes only on CPUs with GFNI), which the comparison also checks.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use rand::SeedableRng;
use rand_chacha::ChaCha20Rng;
use triskele_field::backend::{self, Backend};
use triskele_field::{Bulk, Field, Gf2p64, Gf2p8, Gf4Tower, LinearMap8, Random};

const LENGTHS: [usize; 16] = [0, 1, 2, 3, 7, 8, 9, 31, 32, 33, 63, 64, 65, 127, 1000, 1031];

fn rng(tag: u64) -> ChaCha20Rng {
    ChaCha20Rng::seed_from_u64(0xbac0_0000 + tag)
}

fn vec_of<F: Random>(r: &mut ChaCha20Rng, n: usize) -> Vec<F> {
    let mut v = vec![F::ZERO; n];
    F::fill_random(r, &mut v);
    v
}

#[test]
fn report_backends() {
    eprintln!(
        "available: {:?}; active: {}",
        backend::available(),
        backend::active()
    );
}

#[test]
fn gf2p8_products_agree() {
    let mut r = rng(1);
    for n in LENGTHS {
        let a: Vec<Gf2p8> = vec_of(&mut r, n);
        let b: Vec<Gf2p8> = vec_of(&mut r, n);
        let c: Vec<Gf2p8> = vec_of(&mut r, n);
        let mut want = vec![Gf2p8::ZERO; n];
        Gf2p8::mul_slice_with(Backend::Portable, &mut want, &a, &b);
        let naive: Vec<Gf2p8> = a.iter().zip(&b).map(|(x, y)| *x * *y).collect();
        assert_eq!(want, naive, "portable, n = {n}");
        let mut want_add = c.clone();
        Gf2p8::mul_add_slice_with(Backend::Portable, &mut want_add, &a, &b);
        let want_ip = Gf2p8::inner_product_with(Backend::Portable, &a, &b);
        for be in Backend::ALL {
            let mut got = vec![Gf2p8(0x5a); n];
            Gf2p8::mul_slice_with(be, &mut got, &a, &b);
            assert_eq!(got, want, "{be} mul, n = {n}");
            let mut got_add = c.clone();
            Gf2p8::mul_add_slice_with(be, &mut got_add, &a, &b);
            assert_eq!(got_add, want_add, "{be} mul_add, n = {n}");
            assert_eq!(
                Gf2p8::inner_product_with(be, &a, &b),
                want_ip,
                "{be} inner, n = {n}"
            );
        }
    }
}

#[test]
fn gf2p8_all_pairs_on_every_backend() {
    // Every (a, b) pair, so no lane/bit combination is missed.
    let a: Vec<Gf2p8> = (0..=255u8).flat_map(|x| [Gf2p8(x); 256]).collect();
    let b: Vec<Gf2p8> = (0..256).flat_map(|_| (0..=255u8).map(Gf2p8)).collect();
    let mut want = vec![Gf2p8::ZERO; a.len()];
    Gf2p8::mul_slice_with(Backend::Portable, &mut want, &a, &b);
    for (k, w) in want.iter().enumerate() {
        assert_eq!(*w, a[k] * b[k]);
    }
    for be in backend::available().iter().copied() {
        let mut got = vec![Gf2p8::ZERO; a.len()];
        Gf2p8::mul_slice_with(be, &mut got, &a, &b);
        assert_eq!(got, want, "{be}");
    }
}

fn test_maps(r: &mut ChaCha20Rng) -> Vec<LinearMap8> {
    let mut maps = vec![
        LinearMap8::IDENTITY,
        LinearMap8::ZERO,
        LinearMap8::SQUARE,
        LinearMap8::POW16,
        LinearMap8::AES_A,
        LinearMap8::AES_A_INV,
        Gf4Tower::WOL,
        Gf4Tower::WOL_INV,
        LinearMap8::mul_by(Gf2p8::random(r)),
    ];
    for _ in 0..4 {
        let images: Vec<Gf2p8> = vec_of(r, 8);
        maps.push(LinearMap8::from_basis_images(core::array::from_fn(|j| {
            images[j].0
        })));
    }
    maps
}

#[test]
fn linear_maps_agree() {
    let mut r = rng(2);
    let maps = test_maps(&mut r);
    for n in LENGTHS {
        let src: Vec<Gf2p8> = vec_of(&mut r, n);
        for m in &maps {
            let want: Vec<Gf2p8> = src.iter().map(|x| m.apply(*x)).collect();
            for be in Backend::ALL {
                let mut dst = vec![Gf2p8(0x33); n];
                m.apply_slice_with(be, &src, &mut dst);
                assert_eq!(dst, want, "{be} apply_slice {m:?}, n = {n}");
                let mut buf = src.clone();
                m.apply_in_place_with(be, &mut buf);
                assert_eq!(buf, want, "{be} apply_in_place {m:?}, n = {n}");
            }
            // Active-backend entry points, including the raw-byte ones.
            let mut dst = vec![Gf2p8::ZERO; n];
            m.apply_slice(&src, &mut dst);
            assert_eq!(dst, want);
            let bytes = Gf2p8::slice_as_bytes(&src);
            let mut out = vec![0u8; n];
            m.apply_bytes(bytes, &mut out);
            assert_eq!(Gf2p8::slice_from_bytes(&out), &want[..]);
            m.apply_bytes_in_place(&mut out);
            let twice: Vec<Gf2p8> = want.iter().map(|x| m.apply(*x)).collect();
            assert_eq!(Gf2p8::slice_from_bytes(&out), &twice[..]);
        }
    }
}

#[test]
fn wol_slices() {
    let mut r = rng(3);
    let src: Vec<Gf2p8> = vec_of(&mut r, 1000);
    let mut tower = vec![Gf4Tower::ZERO; src.len()];
    Gf4Tower::from_gf2p8_slice(&src, &mut tower);
    for (s, t) in src.iter().zip(&tower) {
        assert_eq!(*t, Gf4Tower::from(*s));
    }
    let mut back = vec![Gf2p8::ZERO; src.len()];
    Gf4Tower::to_gf2p8_slice(&tower, &mut back);
    assert_eq!(back, src);
}

#[test]
fn gf2p64_agree() {
    let mut r = rng(4);
    for n in LENGTHS {
        let a: Vec<Gf2p64> = vec_of(&mut r, n);
        let b: Vec<Gf2p64> = vec_of(&mut r, n);
        let c: Vec<Gf2p64> = vec_of(&mut r, n);
        let mut want = vec![Gf2p64::ZERO; n];
        Gf2p64::mul_slice_with(Backend::Portable, &mut want, &a, &b);
        let naive: Vec<Gf2p64> = a.iter().zip(&b).map(|(x, y)| x.const_mul(*y)).collect();
        assert_eq!(want, naive, "portable, n = {n}");
        let mut want_add = c.clone();
        Gf2p64::mul_add_slice_with(Backend::Portable, &mut want_add, &a, &b);
        let want_ip = Gf2p64::inner_product_with(Backend::Portable, &a, &b);
        let naive_ip = naive.iter().fold(Gf2p64::ZERO, |s, x| s + *x);
        assert_eq!(want_ip, naive_ip, "portable inner, n = {n}");
        for be in Backend::ALL {
            let mut got = vec![Gf2p64(0x5a5a); n];
            Gf2p64::mul_slice_with(be, &mut got, &a, &b);
            assert_eq!(got, want, "{be} mul, n = {n}");
            let mut got_add = c.clone();
            Gf2p64::mul_add_slice_with(be, &mut got_add, &a, &b);
            assert_eq!(got_add, want_add, "{be} mul_add, n = {n}");
            assert_eq!(
                Gf2p64::inner_product_with(be, &a, &b),
                want_ip,
                "{be} inner, n = {n}"
            );
            for (x, y) in a.iter().zip(&b).take(50) {
                assert_eq!(Gf2p64::mul_with(be, *x, *y), x.const_mul(*y), "{be} scalar");
            }
        }
    }
}

#[test]
fn gf2p64_dense_operands() {
    // All-ones and single-bit operands stress carries and the reduction.
    let mut a = vec![Gf2p64(u64::MAX); 13];
    a.extend((0..64).map(|i| Gf2p64(1 << i)));
    let b: Vec<Gf2p64> = a.iter().rev().copied().collect();
    let mut want = vec![Gf2p64::ZERO; a.len()];
    Gf2p64::mul_slice_with(Backend::Portable, &mut want, &a, &b);
    for be in Backend::ALL {
        let mut got = vec![Gf2p64::ZERO; a.len()];
        Gf2p64::mul_slice_with(be, &mut got, &a, &b);
        assert_eq!(got, want, "{be}");
        assert_eq!(
            Gf2p64::inner_product_with(be, &a, &b),
            Gf2p64::inner_product_with(Backend::Portable, &a, &b)
        );
    }
    // The Bulk entry points use the active backend.
    let mut got = vec![Gf2p64::ZERO; a.len()];
    Gf2p64::mul_slice(&mut got, &a, &b);
    assert_eq!(got, want);
}

/// Child half of `env_switch_forces_portable`: does nothing unless started by it.
#[test]
fn env_switch_child() {
    if std::env::var_os("TRISKELE_FIELD_ENV_CHILD").is_none() {
        return;
    }
    let expected = std::env::var("TRISKELE_FIELD_ENV_CHILD").unwrap();
    assert_eq!(backend::active().name(), expected);
}

#[test]
fn env_switch_forces_portable() {
    let exe = std::env::current_exe().unwrap();
    let run = |value: &str, expected: Backend| {
        let out = std::process::Command::new(&exe)
            .args(["--exact", "env_switch_child", "--test-threads", "1"])
            .env(backend::ENV_VAR, value)
            .env("TRISKELE_FIELD_ENV_CHILD", expected.name())
            .output()
            .unwrap();
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(
            out.status.success() && stdout.contains("1 passed"),
            "{}={value} should select {expected}: {stdout}",
            backend::ENV_VAR
        );
    };
    run("portable", Backend::Portable);
    run("auto", backend::best_available());
    run("no-such-backend", backend::best_available());
}
