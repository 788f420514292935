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
use triskele_field::{Bulk, Encode, Field, Fp, Gf2p4, Gf2p64, Gf2p8, Gf4Tower, LinearMap8, Random};

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

/// The comparison tests exercise an accelerated backend only where it is detected, so the
/// detection must find every backend the CPU's features allow (a miss would quietly test the
/// portable code twice).
#[cfg(target_arch = "x86_64")]
#[test]
fn detection_follows_cpu_features() {
    let avx2 = is_x86_feature_detected!("avx2") && is_x86_feature_detected!("pclmulqdq");
    let vpclmul = avx2 && is_x86_feature_detected!("vpclmulqdq");
    let gfni = vpclmul && is_x86_feature_detected!("gfni");
    let gfni512 =
        gfni && is_x86_feature_detected!("avx512f") && is_x86_feature_detected!("avx512bw");
    for (be, expected) in [
        (Backend::Portable, true),
        (Backend::Avx2, avx2),
        (Backend::Avx2Vpclmul, vpclmul),
        (Backend::Gfni, gfni),
        (Backend::Gfni512, gfni512),
    ] {
        assert_eq!(be.is_available(), expected, "{be}");
    }
    assert_eq!(
        backend::best_available(),
        *backend::available().last().unwrap()
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
        let d: Vec<Gf2p8> = vec_of(&mut r, n);
        let want_sum2: Vec<Gf2p8> = (0..n).map(|k| a[k] * b[k] + c[k] * d[k]).collect();
        for be in Backend::ALL {
            let mut got = vec![Gf2p8(0x5a); n];
            Gf2p8::mul_slice_with(be, &mut got, &a, &b);
            assert_eq!(got, want, "{be} mul, n = {n}");
            let mut got = vec![Gf2p8(0x5a); n];
            Gf2p8::mul_sum2_slice_with(be, &mut got, &a, &b, &c, &d);
            assert_eq!(got, want_sum2, "{be} mul_sum2, n = {n}");
            let mut got_add = c.clone();
            Gf2p8::mul_add_slice_with(be, &mut got_add, &a, &b);
            assert_eq!(got_add, want_add, "{be} mul_add, n = {n}");
            assert_eq!(
                Gf2p8::inner_product_with(be, &a, &b),
                want_ip,
                "{be} inner, n = {n}"
            );
        }
        assert_eq!(Gf2p8::zeroed_vec(n), vec![Gf2p8::ZERO; n]);
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
    // The sum of two products over every pair in each: `a b + b a` vanishes, `a b + a b`
    // too, so take `a b + (a + b) c` with `c` fixed per 32 lanes.
    let c: Vec<Gf2p8> = (0..a.len())
        .map(|k| Gf2p8((k / 32 * 7 + 3) as u8))
        .collect();
    let ab: Vec<Gf2p8> = a.iter().zip(&b).map(|(x, y)| *x + *y).collect();
    for be in backend::available().iter().copied() {
        let mut got = vec![Gf2p8::ZERO; a.len()];
        Gf2p8::mul_slice_with(be, &mut got, &a, &b);
        assert_eq!(got, want, "{be}");
        Gf2p8::mul_sum2_slice_with(be, &mut got, &a, &b, &ab, &c);
        for k in 0..a.len() {
            assert_eq!(got[k], a[k] * b[k] + ab[k] * c[k], "{be} mul_sum2, {k}");
        }
    }
}

#[test]
fn tower_products_on_every_backend_match_gf2p8_through_wol() {
    // Every (a, b) pair (zeros included), and the sum with a second product, on packed tower
    // bytes: the WOL image of the same sum in GF(2^8). Lengths that are no multiple of 32
    // leave tails to the portable code.
    let a: Vec<u8> = (0..=255u8).flat_map(|x| [x; 256]).collect();
    let b: Vec<u8> = (0..256).flat_map(|_| 0..=255u8).collect();
    let c: Vec<u8> = (0..a.len()).map(|k| (k / 32 * 7 + 3) as u8).collect();
    let d: Vec<u8> = a.iter().zip(&b).map(|(x, y)| x ^ y).collect();
    let to8 = |x: u8| Gf4Tower(x).to_gf2p8();
    let want: Vec<u8> = (0..a.len())
        .map(|k| {
            let s = to8(a[k]) * to8(b[k]) + to8(c[k]) * to8(d[k]);
            Gf4Tower::from_gf2p8(s).0
        })
        .collect();
    for k in 0..a.len() {
        let t = Gf4Tower(a[k]) * Gf4Tower(b[k]) + Gf4Tower(c[k]) * Gf4Tower(d[k]);
        assert_eq!(t.0, want[k], "tower arithmetic, {k}");
    }
    for be in Backend::ALL {
        for n in [a.len(), a.len() - 1, 45, 31, 0] {
            let mut got = vec![0x5a; n];
            Gf4Tower::mul_sum2_bytes_with(be, &mut got, &a[..n], &b[..n], &c[..n], &d[..n]);
            assert_eq!(got, want[..n], "{be} tower mul_sum2, n = {n}");
        }
    }
    // On AVX2 without GFNI (and only there) the tower is the faster field to multiply in.
    for be in backend::available().iter().copied() {
        let expect = matches!(be, Backend::Avx2 | Backend::Avx2Vpclmul);
        assert_eq!(backend::tower_products_preferred(be), expect, "{be}");
    }
}

/// Lengths for the `GF(2^4)` kernels: every length up to 100 (all vector tails, both parities)
/// and a few thousand, odd and even.
fn gf2p4_lengths() -> impl Iterator<Item = usize> {
    (0..=100).chain([1000, 1031, 4096, 4099])
}

/// Bytes of the ChaCha stream as `GF(2^4)` elements, high nibbles kept: non-canonical values,
/// on which every backend must still give the portable result (high nibbles of the factors and
/// of the encoder's input are ignored).
fn raw_gf2p4(r: &mut ChaCha20Rng, n: usize) -> Vec<Gf2p4> {
    vec_of::<Gf2p8>(r, n).iter().map(|x| Gf2p4(x.0)).collect()
}

#[test]
fn gf2p4_products_agree() {
    let mut r = rng(8);
    for n in gf2p4_lengths() {
        let a: Vec<Gf2p4> = vec_of(&mut r, n);
        let b: Vec<Gf2p4> = vec_of(&mut r, n);
        let c: Vec<Gf2p4> = vec_of(&mut r, n);
        let naive: Vec<Gf2p4> = a.iter().zip(&b).map(|(x, y)| *x * *y).collect();
        let mut want = vec![Gf2p4(0x5); n];
        Gf2p4::mul_slice_with(Backend::Portable, &mut want, &a, &b);
        assert_eq!(want, naive, "portable, n = {n}");
        let naive_add: Vec<Gf2p4> = c.iter().zip(&naive).map(|(z, p)| *z + *p).collect();
        let mut want_add = c.clone();
        Gf2p4::mul_add_slice_with(Backend::Portable, &mut want_add, &a, &b);
        assert_eq!(want_add, naive_add, "portable mul_add, n = {n}");
        for be in Backend::ALL {
            let mut got = vec![Gf2p4(0xa); n];
            Gf2p4::mul_slice_with(be, &mut got, &a, &b);
            assert_eq!(got, want, "{be} mul, n = {n}");
            let mut got_add = c.clone();
            Gf2p4::mul_add_slice_with(be, &mut got_add, &a, &b);
            assert_eq!(got_add, want_add, "{be} mul_add, n = {n}");
        }
        // The Bulk entry points (active backend).
        let mut got = vec![Gf2p4::ZERO; n];
        Gf2p4::mul_slice(&mut got, &a, &b);
        assert_eq!(got, want, "active mul, n = {n}");
        let mut got_add = c.clone();
        Gf2p4::mul_add_slice(&mut got_add, &a, &b);
        assert_eq!(got_add, want_add, "active mul_add, n = {n}");
    }
}

#[test]
fn gf2p4_non_canonical_inputs_agree() {
    // High nibbles set in the factors (ignored) and in the accumulator (kept by the XOR).
    let mut r = rng(9);
    for n in gf2p4_lengths() {
        let a = raw_gf2p4(&mut r, n);
        let b = raw_gf2p4(&mut r, n);
        let c = raw_gf2p4(&mut r, n);
        let mut want = vec![Gf2p4::ZERO; n];
        Gf2p4::mul_slice_with(Backend::Portable, &mut want, &a, &b);
        let mut want_add = c.clone();
        Gf2p4::mul_add_slice_with(Backend::Portable, &mut want_add, &a, &b);
        for (k, w) in want.iter().enumerate() {
            assert_eq!(
                *w,
                Gf2p4::from_low_nibble(a[k].0) * Gf2p4::from_low_nibble(b[k].0)
            );
            assert_eq!(want_add[k].0, c[k].0 ^ w.0);
        }
        let mut want_enc = vec![0x77];
        Gf2p4::encode_slice_with(Backend::Portable, &a, &mut want_enc);
        for be in Backend::ALL {
            let mut got = vec![Gf2p4::ZERO; n];
            Gf2p4::mul_slice_with(be, &mut got, &a, &b);
            assert_eq!(got, want, "{be} mul, n = {n}");
            let mut got_add = c.clone();
            Gf2p4::mul_add_slice_with(be, &mut got_add, &a, &b);
            assert_eq!(got_add, want_add, "{be} mul_add, n = {n}");
            let mut got_enc = vec![0x77];
            Gf2p4::encode_slice_with(be, &a, &mut got_enc);
            assert_eq!(got_enc, want_enc, "{be} encode, n = {n}");
            // From every offset, so that the vector's alignment and the streamed part vary.
            for from in 0..n.min(3) {
                let got = Gf2p4::encode_to_vec_streaming_with(be, &a[from..]);
                let mut want = Vec::new();
                Gf2p4::encode_slice_with(Backend::Portable, &a[from..], &mut want);
                assert_eq!(got, want, "{be} streaming encode, n = {n}, from {from}");
                // Into a given vector: its old contents go, and its memory serves if it is
                // large enough.
                let mut given = vec![0x5a; 3];
                given.reserve(n);
                let at = given.as_ptr();
                let got = Gf2p4::encode_streaming_into_with(be, &a[from..], given);
                assert_eq!(
                    got, want,
                    "{be} streaming encode into, n = {n}, from {from}"
                );
                assert_eq!(got.as_ptr(), at, "{be} reused memory, n = {n}, from {from}");
                let short = Gf2p4::encode_streaming_into_with(be, &a[from..], vec![1, 2]);
                assert_eq!(
                    short, want,
                    "{be} into a short vector, n = {n}, from {from}"
                );
            }
        }
    }
}

#[test]
fn gf2p4_all_pairs_on_every_backend() {
    // Every (a, b) pair in every position of a 32-byte vector: 256 pairs rotated by 0..32.
    let pairs: Vec<(u8, u8)> = (0..=255u8).map(|k| (k >> 4, k & 15)).collect();
    let mut a = Vec::new();
    let mut b = Vec::new();
    for shift in 0..32 {
        for k in 0..256 {
            let (x, y) = pairs[(k + shift) % 256];
            a.push(Gf2p4(x));
            b.push(Gf2p4(y));
        }
    }
    let mut want = vec![Gf2p4::ZERO; a.len()];
    Gf2p4::mul_slice_with(Backend::Portable, &mut want, &a, &b);
    for (k, w) in want.iter().enumerate() {
        assert_eq!(w.0, Gf2p4::MUL_TABLE[a[k].0 as usize][b[k].0 as usize]);
    }
    let c: Vec<Gf2p4> = b.iter().rev().copied().collect();
    let mut want_add = c.clone();
    Gf2p4::mul_add_slice_with(Backend::Portable, &mut want_add, &a, &b);
    for be in backend::available().iter().copied() {
        let mut got = vec![Gf2p4::ZERO; a.len()];
        Gf2p4::mul_slice_with(be, &mut got, &a, &b);
        assert_eq!(got, want, "{be}");
        let mut got_add = c.clone();
        Gf2p4::mul_add_slice_with(be, &mut got_add, &a, &b);
        assert_eq!(got_add, want_add, "{be} mul_add");
    }
}

/// One-hot lookups of a 4-bit table agree on every backend with the definition
/// `Σ_t e[t] T(c ⊕ t)`, for random vectors, every offset in every lane (with garbage in the
/// offsets' high nibbles, which are ignored), and every length around the 32-element steps.
#[test]
fn onehot_lookups_agree() {
    use rand::RngCore;
    use triskele_field::OneHotLookup16;
    let mut r = rng(21);
    let table: [u8; 16] = core::array::from_fn(|_| r.next_u32() as u8);
    let l = OneHotLookup16::new(&table);
    let defined = |e: u16, c: u8| -> u8 {
        (0..16)
            .filter(|t| e >> t & 1 == 1)
            .fold(0, |acc, t| acc ^ (table[((c & 15) ^ t) as usize] & 15))
    };
    for n in LENGTHS.into_iter().chain([16 * 32 + 5]) {
        let e: Vec<u16> = (0..n).map(|_| r.next_u32() as u16).collect();
        // Offsets: k mod 16 in the low nibble (every offset in every lane), random high nibble.
        let c: Vec<Gf2p4> = (0..n)
            .map(|k| Gf2p4((k % 16) as u8 | (r.next_u32() as u8 & 0xf0)))
            .collect();
        let want: Vec<Gf2p4> = e
            .iter()
            .zip(&c)
            .map(|(e, c)| Gf2p4(defined(*e, c.0)))
            .collect();
        for (k, w) in want.iter().enumerate() {
            assert_eq!(l.get(e[k], c[k]), *w, "scalar, n = {n}, k = {k}");
        }
        for be in Backend::ALL {
            let mut got = vec![Gf2p4(0x5a); n];
            l.apply_with(be, &e, &c, &mut got);
            assert_eq!(got, want, "{be}, n = {n}");
            // Only the common prefix is written.
            let mut longer = vec![Gf2p4(0x5a); n + 3];
            l.apply_with(be, &e, &c, &mut longer);
            assert_eq!(&longer[..n], &want[..], "{be}, n = {n}");
            assert_eq!(&longer[n..], &[Gf2p4(0x5a); 3], "{be}, n = {n}");
        }
    }
}

/// The reference encoding, written out from the specification.
fn gf2p4_encoding_spec(src: &[Gf2p4]) -> Vec<u8> {
    src.chunks(2)
        .map(|p| ((p[0].0 & 0x0f) << 4) | p.get(1).map_or(0, |l| l.0 & 0x0f))
        .collect()
}

#[test]
fn gf2p4_encoding_agrees() {
    let mut r = rng(10);
    for n in gf2p4_lengths() {
        let src: Vec<Gf2p4> = vec_of(&mut r, n);
        let want = gf2p4_encoding_spec(&src);
        assert_eq!(want.len(), Gf2p4::encoded_len(n));
        assert_eq!(Gf2p4::encode_to_vec(&src), want, "active, n = {n}");
        assert_eq!(
            Gf2p4::decode_to_vec(&want, n).unwrap(),
            src,
            "active, n = {n}"
        );
        // The pairs as bytes (an odd count's last element is not unpacked).
        let mut bytes = vec![0x5a; n];
        Gf2p4::unpack_pairs(&want, &mut bytes);
        let pairs = n / 2 * 2;
        assert_eq!(
            bytes[..pairs],
            *Gf2p4::slice_as_bytes(&src[..pairs]),
            "n = {n}"
        );
        assert!(bytes[pairs..].iter().all(|b| *b == 0x5a), "n = {n}");
        for be in Backend::ALL {
            // Appends after what is already in the vector.
            let mut out = vec![0xee, 0x11];
            Gf2p4::encode_slice_with(be, &src, &mut out);
            assert_eq!(out[..2], [0xee, 0x11], "{be}, n = {n}");
            assert_eq!(out[2..], want[..], "{be} encode, n = {n}");
            let mut back = vec![Gf2p4(0xc); n];
            Gf2p4::decode_slice_with(be, &want, &mut back).unwrap();
            assert_eq!(back, src, "{be} decode, n = {n}");
        }
        // For an even count every byte string of the right length is an encoding.
        if n % 2 == 0 {
            let bytes: Vec<u8> = vec_of::<Gf2p8>(&mut r, n / 2).iter().map(|x| x.0).collect();
            let mut want_el = vec![Gf2p4::ZERO; n];
            Gf2p4::decode_slice_with(Backend::Portable, &bytes, &mut want_el).unwrap();
            assert!(want_el.iter().all(|x| x.0 < 16));
            for be in Backend::ALL {
                let mut got = vec![Gf2p4(0x3); n];
                Gf2p4::decode_slice_with(be, &bytes, &mut got).unwrap();
                assert_eq!(got, want_el, "{be} decode arbitrary bytes, n = {n}");
                let mut again = Vec::new();
                Gf2p4::encode_slice_with(be, &got, &mut again);
                assert_eq!(again, bytes, "{be} re-encode, n = {n}");
            }
        }
    }
}

#[test]
fn gf2p4_unpacking_through_a_map_agrees() {
    let mut r = rng(12);
    for n in gf2p4_lengths() {
        let packed: Vec<u8> = vec_of::<Gf2p8>(&mut r, n.div_ceil(2))
            .iter()
            .map(|x| x.0)
            .collect();
        let images: Vec<Gf2p8> = vec_of(&mut r, 8);
        let map = LinearMap8::from_basis_images(core::array::from_fn(|j| images[j].0));
        // Every nibble through the map; an odd count's last byte is left as it was.
        let pairs = n / 2;
        let mut want = vec![0xa5u8; n];
        for (k, b) in packed[..pairs].iter().enumerate() {
            want[2 * k] = map.apply_byte(b >> 4);
            want[2 * k + 1] = map.apply_byte(b & 15);
        }
        for be in Backend::ALL {
            let mut got = vec![0xa5u8; n];
            Gf2p4::unpack_pairs_mapped_with(be, &packed[..pairs], &map, &mut got);
            assert_eq!(got, want, "{be}, n = {n}");
        }
    }
}

#[test]
fn gf2p4_unpacking_sums_of_several_maps_agrees() {
    let mut r = rng(17);
    let bytes =
        |r: &mut _, n: usize| -> Vec<u8> { vec_of::<Gf2p8>(r, n).iter().map(|x| x.0).collect() };
    let map = |r: &mut _| {
        let i = bytes(r, 8);
        LinearMap8::from_basis_images(core::array::from_fn(|j| i[j]))
    };
    for n in gf2p4_lengths() {
        let pairs = n / 2;
        for count in 1..=triskele_field::UNPACK_SUMS_MAX {
            // Runs of different lengths (the shortest bounds the pass), two maps per run.
            let runs: Vec<Vec<u8>> = (0..count).map(|s| bytes(&mut r, pairs + s % 3)).collect();
            let maps: Vec<[LinearMap8; 2]> =
                (0..count).map(|_| [map(&mut r), map(&mut r)]).collect();
            let want: [Vec<u8>; 2] = core::array::from_fn(|o| {
                let mut w = vec![0xa5u8; n];
                for k in 0..pairs {
                    let (mut h, mut l) = (0, 0);
                    for (run, m) in runs.iter().zip(&maps) {
                        h ^= m[o].apply_byte(run[k] >> 4);
                        l ^= m[o].apply_byte(run[k] & 15);
                    }
                    (w[2 * k], w[2 * k + 1]) = (h, l);
                }
                w
            });
            let srcs: Vec<&[u8]> = runs.iter().map(|v| &v[..]).collect();
            let both: Vec<[&LinearMap8; 2]> = maps.iter().map(|[a, b]| [a, b]).collect();
            let first: Vec<[&LinearMap8; 1]> = maps.iter().map(|[a, _]| [a]).collect();
            for be in Backend::ALL {
                let mut got = [vec![0xa5u8; n], vec![0xa5u8; n]];
                let [g0, g1] = &mut got;
                Gf2p4::unpack_pairs_mapped_sums_with(be, &srcs, &both, [&mut g0[..], &mut g1[..]]);
                assert_eq!(got, want, "{be}, n = {n}, {count} runs");
                let mut one = vec![0xa5u8; n];
                Gf2p4::unpack_pairs_mapped_sums_with(be, &srcs, &first, [&mut one[..]]);
                assert_eq!(one, want[0], "{be}, n = {n}, {count} runs, one output");
            }
        }
    }
}

#[test]
fn gf2p4_decoding_is_strict() {
    use triskele_field::FieldError;
    let mut r = rng(11);
    for n in gf2p4_lengths() {
        let src: Vec<Gf2p4> = vec_of(&mut r, n);
        let good = gf2p4_encoding_spec(&src);
        let expected = good.len();
        for be in Backend::ALL {
            let fresh = vec![Gf2p4(0x9); n];
            // Wrong lengths: one byte short, one byte long, empty.
            let mut wrong = vec![good.clone(), good.clone(), Vec::new()];
            wrong[0].pop();
            wrong[1].push(0);
            for bytes in &wrong {
                if bytes.len() == expected {
                    continue;
                }
                let mut out = fresh.clone();
                assert_eq!(
                    Gf2p4::decode_slice_with(be, bytes, &mut out),
                    Err(FieldError::LengthMismatch {
                        expected,
                        got: bytes.len()
                    }),
                    "{be}, n = {n}"
                );
                assert_eq!(out, fresh, "{be}: output untouched on error, n = {n}");
            }
            // Odd count: any nonzero padding nibble is rejected.
            if n % 2 == 1 {
                for pad in 1..16u8 {
                    let mut bytes = good.clone();
                    *bytes.last_mut().unwrap() |= pad;
                    let mut out = fresh.clone();
                    assert_eq!(
                        Gf2p4::decode_slice_with(be, &bytes, &mut out),
                        Err(FieldError::OutOfRange { field: Gf2p4::NAME }),
                        "{be}, n = {n}, pad = {pad}"
                    );
                    assert_eq!(out, fresh, "{be}: output untouched on error, n = {n}");
                }
            }
        }
        // The active-backend entry points give the same errors.
        if n % 2 == 1 {
            let mut bytes = good.clone();
            *bytes.last_mut().unwrap() ^= 1;
            assert_eq!(
                Gf2p4::decode_to_vec(&bytes, n),
                Err(FieldError::OutOfRange { field: Gf2p4::NAME })
            );
        }
        assert_eq!(
            Gf2p4::decode_to_vec(&good, n + 2),
            Err(FieldError::LengthMismatch {
                expected: Gf2p4::encoded_len(n + 2),
                got: expected
            })
        );
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
        // Pairs of maps on two byte slices, XORed.
        let other: Vec<u8> = vec_of::<Gf2p8>(&mut r, n).iter().map(|x| x.0).collect();
        let src = Gf2p8::slice_as_bytes(&src);
        for (f, g) in maps.iter().zip(maps.iter().rev()) {
            let want: Vec<u8> = src
                .iter()
                .zip(&other)
                .map(|(a, b)| f.apply_byte(*a) ^ g.apply_byte(*b))
                .collect();
            for be in Backend::ALL {
                let mut dst = vec![0x33u8; n];
                f.apply_pair_bytes_with(be, g, src, &other, &mut dst);
                assert_eq!(dst, want, "{be} apply_pair_bytes {f:?} {g:?}, n = {n}");
            }
            let mut dst = vec![0u8; n];
            f.apply_pair_bytes(g, src, &other, &mut dst);
            assert_eq!(dst, want);
            // The same pairs as the low and high bytes of words.
            let words: Vec<u16> = src
                .iter()
                .zip(&other)
                .map(|(a, b)| u16::from_le_bytes([*a, *b]))
                .collect();
            for be in Backend::ALL {
                let mut dst = vec![0x33u8; n];
                f.apply_pair_words_with(be, g, &words, &mut dst);
                assert_eq!(dst, want, "{be} apply_pair_words {f:?} {g:?}, n = {n}");
            }
            let mut dst = vec![0u8; n];
            f.apply_pair_words(g, &words, &mut dst);
            assert_eq!(dst, want);
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

/// The fused `GF(2^64)` operations of `Verify` (summed local product, lerp, lerp in place):
/// portable against their definitions, every backend against portable.
#[test]
fn gf2p64_fused_ops_agree() {
    let mut r = rng(5);
    for n in LENGTHS {
        let v: [Vec<Gf2p64>; 4] = core::array::from_fn(|_| vec_of(&mut r, n));
        let s = Gf2p64::random(&mut r);
        let [a1, a2, b1, b2] = &v;
        let naive_lip = (0..n).fold(Gf2p64::ZERO, |acc, k| {
            acc + a1[k] * b1[k] + a1[k] * b2[k] + a2[k] * b1[k]
        });
        let want_lip = Gf2p64::local_inner_product_with(Backend::Portable, a1, a2, b1, b2);
        assert_eq!(want_lip, naive_lip, "portable local inner, n = {n}");
        let naive_lerp: Vec<Gf2p64> = (0..n).map(|k| a1[k] + (a2[k] - a1[k]) * s).collect();
        let mut want_lerp = vec![Gf2p64(7); n];
        Gf2p64::lerp_slice_with(Backend::Portable, &mut want_lerp, a1, a2, s);
        assert_eq!(want_lerp, naive_lerp, "portable lerp, n = {n}");
        let mut want_assign = a1.clone();
        Gf2p64::lerp_assign_slice_with(Backend::Portable, &mut want_assign, a2, s);
        assert_eq!(want_assign, naive_lerp, "portable lerp_assign, n = {n}");
        for be in Backend::ALL {
            assert_eq!(
                Gf2p64::local_inner_product_with(be, a1, a2, b1, b2),
                want_lip,
                "{be} local inner, n = {n}"
            );
            let mut got = vec![Gf2p64(9); n];
            Gf2p64::lerp_slice_with(be, &mut got, a1, a2, s);
            assert_eq!(got, want_lerp, "{be} lerp, n = {n}");
            let mut got = a1.clone();
            Gf2p64::lerp_assign_slice_with(be, &mut got, a2, s);
            assert_eq!(got, want_lerp, "{be} lerp_assign, n = {n}");
        }
        // The Bulk entry points (active backend) and the generic defaults agree.
        assert_eq!(Gf2p64::local_inner_product(a1, a2, b1, b2), want_lip);
        let mut got = vec![Gf2p64::ZERO; n];
        Gf2p64::lerp_slice(&mut got, a1, a2, s);
        assert_eq!(got, want_lerp);
        let mut got = a1.clone();
        Gf2p64::lerp_assign_slice(&mut got, a2, s);
        assert_eq!(got, want_lerp);
        assert_eq!(Gf2p64::zeroed_vec(n), vec![Gf2p64::ZERO; n]);
    }
}

/// `F_p` (`p = 2^127+45`) elements: random ones with edge values (limb boundaries, `p - 1`,
/// `2^127 - 1`, all-ones limbs) planted at random positions.
fn fp_vec(r: &mut ChaCha20Rng, n: usize) -> Vec<Fp> {
    use rand::Rng;
    let p = Fp::MODULUS;
    let edges = [
        0,
        1,
        44,
        45,
        (1 << 52) - 1,
        1 << 52,
        (1 << 104) - 1,
        1 << 104,
        (1 << 127) - 1,
        1 << 127,
        p - 2,
        p - 1,
    ];
    let mut v: Vec<Fp> = vec_of(r, n);
    for x in v.iter_mut() {
        if r.random_range(0..3) == 0 {
            *x = Fp::new(edges[r.random_range(0..edges.len())]).unwrap();
        }
    }
    v
}

/// The `F_p` slice operations on every backend (AVX-512 IFMA on `gfni-avx512` where the CPU has
/// it) against their definitions with the scalar operators, over lengths that cross the
/// vector tails and the inner products' column flushes (2048 elements), with edge values.
#[test]
fn fp_slice_ops_agree() {
    let mut r = rng(12);
    let lengths = LENGTHS.into_iter().chain([2047, 2048, 2049, 5000]);
    for n in lengths {
        let [a1, a2, b1, b2, c]: [Vec<Fp>; 5] = core::array::from_fn(|_| fp_vec(&mut r, n));
        let s = fp_vec(&mut r, 1).first().copied().unwrap_or(Fp::from(3u64));
        for s in [s, Fp::new(Fp::MODULUS - 1).unwrap(), Fp::ZERO] {
            let prod: Vec<Fp> = (0..n).map(|k| a1[k] * b1[k]).collect();
            let prod_add: Vec<Fp> = (0..n).map(|k| c[k] + a1[k] * b1[k]).collect();
            let scale_add: Vec<Fp> = (0..n).map(|k| c[k] + a1[k] * s).collect();
            let lerp: Vec<Fp> = (0..n).map(|k| a1[k] + (a2[k] - a1[k]) * s).collect();
            let lp: Vec<Fp> = (0..n)
                .map(|k| a1[k] * b1[k] + a1[k] * b2[k] + a2[k] * b1[k])
                .collect();
            let ip = prod.iter().copied().sum::<Fp>();
            let lip = lp.iter().copied().sum::<Fp>();
            for be in Backend::ALL {
                let mut got = vec![Fp::from(7u64); n];
                Fp::mul_slice_with(be, &mut got, &a1, &b1);
                assert_eq!(got, prod, "{be} mul, n = {n}");
                let mut got = c.clone();
                Fp::mul_add_slice_with(be, &mut got, &a1, &b1);
                assert_eq!(got, prod_add, "{be} mul_add, n = {n}");
                let mut got = c.clone();
                Fp::scale_add_slice_with(be, &mut got, &a1, s);
                assert_eq!(got, scale_add, "{be} scale_add, n = {n}");
                let mut got = vec![Fp::from(9u64); n];
                Fp::lerp_slice_with(be, &mut got, &a1, &a2, s);
                assert_eq!(got, lerp, "{be} lerp, n = {n}");
                let mut got = a1.clone();
                Fp::lerp_assign_slice_with(be, &mut got, &a2, s);
                assert_eq!(got, lerp, "{be} lerp_assign, n = {n}");
                let mut got = vec![Fp::from(5u64); n];
                Fp::local_product_slice_with(be, &mut got, &a1, &a2, &b1, &b2);
                assert_eq!(got, lp, "{be} local product, n = {n}");
                assert_eq!(Fp::inner_product_with(be, &a1, &b1), ip, "{be} inner");
                assert_eq!(
                    Fp::local_inner_product_with(be, &a1, &a2, &b1, &b2),
                    lip,
                    "{be} local inner, n = {n}"
                );
            }
        }
    }
}

/// The fused sums of a halving level (`H(1)` and `H(2)` shares) on every backend against their
/// definition, with the upper half shorter than, equal to or empty against the lower one.
#[test]
fn fp_node_inner_products_agree() {
    let mut r = rng(13);
    let lp = |v: [Fp; 4]| v[0] * (v[2] + v[3]) + v[1] * v[2];
    for n in LENGTHS.into_iter().chain([2049, 4500]) {
        let a: [Vec<Fp>; 4] = core::array::from_fn(|_| fp_vec(&mut r, n));
        let b_full: [Vec<Fp>; 4] = core::array::from_fn(|_| fp_vec(&mut r, n));
        for m in [0, n / 2, n.saturating_sub(3), n] {
            let b: [&[Fp]; 4] = core::array::from_fn(|j| &b_full[j][..m]);
            let h1: Fp = (0..m).map(|k| lp(b.map(|v| v[k]))).sum();
            let bk = |j: usize, k: usize| if k < m { b[j][k] } else { Fp::ZERO };
            let hu: Fp = (0..n)
                .map(|k| lp(core::array::from_fn(|j| bk(j, k) + bk(j, k) - a[j][k])))
                .sum();
            for be in Backend::ALL {
                let got = Fp::node_inner_products_with(be, a.each_ref().map(|v| &v[..]), b);
                assert_eq!(got, [h1, hu], "{be}, n = {n}, m = {m}");
            }
        }
    }
}

/// The fused level-1 fold of the multiplication check on every backend against its
/// definition (products by the coefficients, then lines at `s`), with and without an upper
/// half, for plain and chained triples (`x + r y` in place of `x`), over vector tails and edge
/// values.
#[test]
fn fp_fold_lines_agree() {
    let mut r = rng(15);
    for n in LENGTHS {
        let lo: [Vec<Fp>; 4] = core::array::from_fn(|_| fp_vec(&mut r, n));
        let hi: [Vec<Fp>; 4] = core::array::from_fn(|_| fp_vec(&mut r, n));
        let c: [Vec<Fp>; 2] = core::array::from_fn(|_| fp_vec(&mut r, n));
        let s = fp_vec(&mut r, 1).first().copied().unwrap_or(Fp::from(3u64));
        let coin = fp_vec(&mut r, 1).first().copied().unwrap_or(Fp::from(5u64));
        for (s, chain) in [
            (s, None),
            (Fp::ZERO, None),
            (Fp::from(1u64), None),
            (s, Some(coin)),
            (Fp::ZERO, Some(-Fp::from(1u64))),
            (Fp::from(1u64), Some(coin)),
        ] {
            for upper in [true, false] {
                let h = |j: usize, k: usize| if upper { hi[j][k] } else { Fp::ZERO };
                let x = |v: &dyn Fn(usize, usize) -> Fp, j: usize, k: usize| {
                    v(j, k) + chain.map_or(Fp::ZERO, |t| t * v(j + 2, k))
                };
                let want: [Vec<Fp>; 4] = core::array::from_fn(|j| {
                    (0..n)
                        .map(|k| {
                            let (l, u) = if j < 2 {
                                (c[0][k] * x(&|j, k| lo[j][k], j, k), c[1][k] * x(&h, j, k))
                            } else {
                                (lo[j][k], h(j, k))
                            };
                            l + (u - l) * s
                        })
                        .collect()
                });
                for be in Backend::ALL {
                    let mut got: [Vec<Fp>; 4] = core::array::from_fn(|_| vec![Fp::from(7u64); n]);
                    let [g1, g2, g3, g4] = &mut got;
                    Fp::fold_lines_with(
                        be,
                        [g1, g2, g3, g4],
                        lo.each_ref().map(|v| &v[..]),
                        upper.then(|| hi.each_ref().map(|v| &v[..])),
                        [&c[0][..], if upper { &c[1][..] } else { &[] }],
                        s,
                        chain,
                    );
                    assert_eq!(got, want, "{be}, n = {n}, upper = {upper}, {chain:?}");
                }
            }
        }
    }
}

/// The scaled `x` of chained triples, `c (x + r y)`, on every backend against its definition,
/// over vector tails and edge coins.
#[test]
fn fp_chain_scale_agrees() {
    let mut r = rng(16);
    for n in LENGTHS {
        let x: [Vec<Fp>; 2] = core::array::from_fn(|_| fp_vec(&mut r, n));
        let y: [Vec<Fp>; 2] = core::array::from_fn(|_| fp_vec(&mut r, n));
        let c = fp_vec(&mut r, n);
        let coin = fp_vec(&mut r, 1).first().copied().unwrap_or(Fp::from(5u64));
        for t in [coin, Fp::ZERO, Fp::from(1u64), -Fp::from(1u64)] {
            let want: [Vec<Fp>; 2] =
                core::array::from_fn(|j| (0..n).map(|k| c[k] * (x[j][k] + t * y[j][k])).collect());
            for be in Backend::ALL {
                let mut got: [Vec<Fp>; 2] = core::array::from_fn(|_| vec![Fp::from(7u64); n]);
                let [g1, g2] = &mut got;
                Fp::chain_scale_with(
                    be,
                    [g1, g2],
                    x.each_ref().map(|v| &v[..]),
                    y.each_ref().map(|v| &v[..]),
                    &c,
                    t,
                );
                assert_eq!(got, want, "{be}, n = {n}, r = {t:?}");
            }
        }
    }
}

/// The inner products at their column bounds: long runs of the elements with the largest limbs
/// (`2^127 - 1`: two all-ones limbs; `p - 1`: the largest sum `b1 + b2`), past several flushes.
#[test]
fn fp_inner_products_at_their_bounds() {
    let n = 3 * 2048 + 5;
    for x in [(1u128 << 127) - 1, Fp::MODULUS - 1] {
        let v = vec![Fp::new(x).unwrap(); n];
        let sq = Fp::new(x).unwrap() * Fp::new(x).unwrap();
        let want = sq * Fp::from(n as u64);
        let want_local = want * Fp::from(3u64);
        for be in Backend::ALL {
            assert_eq!(Fp::inner_product_with(be, &v, &v), want, "{be}");
            assert_eq!(
                Fp::local_inner_product_with(be, &v, &v, &v, &v),
                want_local,
                "{be}"
            );
        }
    }
}

/// The fused sums of a halving level in `GF(2^64)` (shares of `H(1)` and `H(u)`) on every
/// backend against their definition, with the upper half shorter than, equal to or empty
/// against the lower one.
#[test]
fn gf2p64_node_inner_products_agree() {
    let mut r = rng(14);
    let lp = |v: [Gf2p64; 4]| v[0] * (v[2] + v[3]) + v[1] * v[2];
    for n in LENGTHS {
        let a: [Vec<Gf2p64>; 4] = core::array::from_fn(|_| vec_of(&mut r, n));
        let b_full: [Vec<Gf2p64>; 4] = core::array::from_fn(|_| vec_of(&mut r, n));
        for m in [0, n / 2, n.saturating_sub(3), n] {
            let b: [&[Gf2p64]; 4] = core::array::from_fn(|j| &b_full[j][..m]);
            let h1 = (0..m).fold(Gf2p64::ZERO, |s, k| s + lp(b.map(|v| v[k])));
            let bk = |j: usize, k: usize| if k < m { b[j][k] } else { Gf2p64::ZERO };
            let hu = (0..n).fold(Gf2p64::ZERO, |s, k| {
                s + lp(core::array::from_fn(|j| {
                    a[j][k] + (bk(j, k) - a[j][k]) * Gf2p64::U
                }))
            });
            for be in Backend::ALL {
                let got = Gf2p64::node_inner_products_with(be, a.each_ref().map(|v| &v[..]), b);
                assert_eq!(got, [h1, hu], "{be}, n = {n}, m = {m}");
            }
        }
    }
}

/// The nibble-table embeddings into `GF(2^64)` in bulk (`vpshufb` transpose on AVX2)
/// against the element-wise maps, for every byte value and many lengths.
#[test]
fn byte_embeddings_agree() {
    use triskele_field::embed::{self, ByteEmbedding};
    use triskele_field::EmbedInto;
    let mut r = rng(6);
    // Maps whose images fit in 16 bits take a narrower path on some backends.
    let narrow = |seed: u64| {
        ByteEmbedding::new(&core::array::from_fn(|j| {
            Gf2p64((seed.rotate_left(8 * j as u32) ^ (j as u64 * 0x9e37)) & 0xffff)
        }))
    };
    let (n1, n2) = (narrow(0x1234_5678_9abc_def1), narrow(0x0f1e_2d3c_4b5a_6978));
    let tables: [(&str, ByteEmbedding); 4] = [
        ("E8", embed::E8_TABLES),
        ("E4", embed::E4_TABLES),
        ("tower", embed::TOWER_TABLES),
        ("narrow", n1),
    ];
    let all: Vec<u8> = (0..=255u8).chain((0..=255u8).rev()).collect();
    let mut inputs = vec![all];
    for n in LENGTHS {
        inputs.push(vec_of::<Gf2p8>(&mut r, n).iter().map(|x| x.0).collect());
    }
    for src in &inputs {
        for (name, t) in &tables {
            let want: Vec<Gf2p64> = src.iter().map(|b| t.apply(*b)).collect();
            for be in Backend::ALL {
                let mut got = vec![Gf2p64(0x77); src.len()];
                t.apply_slice_with(be, src, &mut got);
                assert_eq!(got, want, "{be} {name}, n = {}", src.len());
            }
        }
        // Scaled maps and maps of byte pairs.
        let c = Gf2p64::random(&mut r);
        let (f, g) = (embed::E8_TABLES.scaled(c), embed::TOWER_TABLES);
        // The run-time scaling builds the same map (tables, planes and GFNI matrices).
        for (name, t) in &tables {
            assert_eq!(t.scaled_by(c), t.scaled(c), "{name} scaled_by");
        }
        let b: Vec<u8> = src.iter().rev().map(|x| x ^ 0x5c).collect();
        let want: Vec<Gf2p64> = src
            .iter()
            .zip(&b)
            .map(|(x, y)| c * embed::E8_TABLES.apply(*x) + g.apply(*y))
            .collect();
        let want_narrow: Vec<Gf2p64> = src
            .iter()
            .zip(&b)
            .map(|(x, y)| n1.apply(*x) + n2.apply(*y))
            .collect();
        for be in Backend::ALL {
            let mut got = vec![Gf2p64(0x78); src.len()];
            f.apply_pair_slice_with(be, &g, src, &b, &mut got);
            assert_eq!(got, want, "{be} pairs, n = {}", src.len());
            n1.apply_pair_slice_with(be, &n2, src, &b, &mut got);
            assert_eq!(got, want_narrow, "{be} narrow pairs, n = {}", src.len());
        }
        // Fused with products: inner products and two-term products.
        let n = src.len();
        let ca: Vec<Gf2p64> = vec_of(&mut r, n);
        let cb: Vec<Gf2p64> = vec_of(&mut r, n);
        let fx: Vec<Gf2p64> = src.iter().map(|x| f.apply(*x)).collect();
        let gy: Vec<Gf2p64> = b.iter().map(|y| g.apply(*y)).collect();
        let want_ip = (0..n).fold(Gf2p64::ZERO, |s, k| s + ca[k] * fx[k]);
        let want_ip2 = (0..n).fold(Gf2p64::ZERO, |s, k| s + ca[k] * (fx[k] + gy[k]));
        let want_mul: Vec<Gf2p64> = (0..n).map(|k| ca[k] * fx[k] + cb[k] * gy[k]).collect();
        for be in Backend::ALL {
            assert_eq!(
                f.inner_product_with(be, &ca, src),
                want_ip,
                "{be} ip, n = {n}"
            );
            assert_eq!(
                f.inner_product_pair_with(be, &g, &ca, src, &b),
                want_ip2,
                "{be} ip pair, n = {n}"
            );
            let mut got = vec![Gf2p64(0x79); n];
            f.mul_pair_slice_with(be, &g, (src, &ca), (&b, &cb), &mut got);
            assert_eq!(got, want_mul, "{be} mul pair, n = {n}");
            // One factor slice for both terms (the 512-bit GFNI kernel sums the images first).
            let want_shared: Vec<Gf2p64> = (0..n).map(|k| ca[k] * (fx[k] + gy[k])).collect();
            f.mul_pair_slice_with(be, &g, (src, &ca), (&b, &ca), &mut got);
            assert_eq!(got, want_shared, "{be} mul pair, one factor, n = {n}");
        }
        // Several maps sharing the coefficients (bit sums on GFNI with AVX-512 VBMI), with
        // one slice shorter than the others (the common prefix counts).
        let short = &b[..n.saturating_sub(5)];
        let m = short.len();
        let want4 = [
            want_ip,
            (0..n).fold(Gf2p64::ZERO, |s, k| s + ca[k] * gy[k]),
            (0..n).fold(Gf2p64::ZERO, |s, k| {
                s + ca[k] * embed::E8_TABLES.apply(src[k])
            }),
        ];
        let want_short = [
            (0..m).fold(Gf2p64::ZERO, |s, k| s + ca[k] * fx[k]),
            (0..m).fold(Gf2p64::ZERO, |s, k| s + ca[k] * gy[k]),
        ];
        for be in Backend::ALL {
            let got = ByteEmbedding::inner_products_with(
                be,
                &ca,
                [(&f, src), (&g, &b), (&embed::E8_TABLES, src)],
            );
            assert_eq!(got, want4, "{be} inner products, n = {n}");
            let got = ByteEmbedding::inner_products_with(be, &ca, [(&f, src), (&g, short)]);
            assert_eq!(got, want_short, "{be} inner products, prefix {m} of {n}");
            // The plane sums themselves, for each bit.
            let plane = |a: &[u8], bit: usize, len: usize| {
                (0..len)
                    .filter(|k| (a[*k] >> bit) & 1 == 1)
                    .fold(Gf2p64::ZERO, |s, k| s + ca[k])
            };
            let got = embed::bit_plane_sums_with(be, &ca, [src, short]);
            let want: [[Gf2p64; 8]; 2] = [
                core::array::from_fn(|bit| plane(src, bit, m)),
                core::array::from_fn(|bit| plane(short, bit, m)),
            ];
            assert_eq!(got, want, "{be} plane sums, prefix {m} of {n}");
            let got = embed::bit_plane_sums_with(be, &ca, [src]);
            let want: [Gf2p64; 8] = core::array::from_fn(|bit| plane(src, bit, n));
            assert_eq!(got, [want], "{be} plane sums, n = {n}");
        }
        // Sixteen sources at once (as the data nodes of Verify's k-ary level), each with a
        // map of its own.
        let srcs: Vec<Vec<u8>> = (0..16u32)
            .map(|i| {
                src.iter()
                    .map(|v| v.rotate_left(i) ^ (37 * i) as u8)
                    .collect()
            })
            .collect();
        let maps: Vec<ByteEmbedding> = (0..16u64)
            .map(|i| tables[i as usize % 4].1.scaled(Gf2p64(0x9e37_79b9 * i + 1)))
            .collect();
        let want16: [Gf2p64; 16] = core::array::from_fn(|i| {
            (0..n).fold(Gf2p64::ZERO, |s, k| s + ca[k] * maps[i].apply(srcs[i][k]))
        });
        for be in Backend::ALL {
            let got = ByteEmbedding::inner_products_with(
                be,
                &ca,
                core::array::from_fn::<_, 16, _>(|i| (&maps[i], &srcs[i][..])),
            );
            assert_eq!(got, want16, "{be} sixteen inner products, n = {n}");
        }
        // The slice embeddings of the fields go through the tables.
        let g8: Vec<Gf2p8> = src.iter().map(|b| Gf2p8(*b)).collect();
        let mut got = vec![Gf2p64::ZERO; src.len()];
        Gf2p8::embed_slice(&g8, &mut got);
        let want: Vec<Gf2p64> = g8.iter().map(|x| x.embed()).collect();
        assert_eq!(got, want);
        let g4: Vec<Gf2p4> = src.iter().map(|b| Gf2p4(*b & 0x0f)).collect();
        Gf2p4::embed_slice(&g4, &mut got);
        let want: Vec<Gf2p64> = g4.iter().map(|x| x.embed()).collect();
        assert_eq!(got, want);
        let tw: Vec<Gf4Tower> = src.iter().map(|b| Gf4Tower(*b)).collect();
        Gf4Tower::embed_slice(&tw, &mut got);
        let want: Vec<Gf2p64> = tw.iter().map(|x| x.embed()).collect();
        assert_eq!(got, want);
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

/// The AES-128-CTR keystream: every backend and every way of splitting the requests gives
/// the stream of the `aes` crate's AES-128 applied to the little-endian block counters.
#[test]
fn aes_ctr_keystream_agrees() {
    use aes::cipher::{BlockEncrypt, KeyInit};
    use rand::Rng;
    use triskele_field::ctr::Aes128Ctr;
    let mut r = rng(7);
    for _ in 0..8 {
        let key: [u8; 16] = r.random();
        let cipher = aes::Aes128::new(&key.into());
        let blocks = 300;
        let mut want = vec![0u8; 16 * blocks];
        for (j, b) in want.chunks_exact_mut(16).enumerate() {
            let mut blk = aes::Block::from((j as u128).to_le_bytes());
            cipher.encrypt_block(&mut blk);
            b.copy_from_slice(&blk);
        }
        for be in Backend::ALL {
            let mut s = Aes128Ctr::new_with(be, &key);
            let mut got = vec![0u8; want.len()];
            s.fill(&mut got);
            assert_eq!(got, want, "{be} in one request");
            // Requests of odd sizes, through the leftover buffer.
            let mut s = Aes128Ctr::new_with(be, &key);
            let mut got = Vec::new();
            let mut sizes = [1usize, 7, 16, 3, 255, 256, 17, 0, 512, 9]
                .into_iter()
                .cycle();
            while got.len() < want.len() {
                let k = sizes.next().unwrap_or(1).min(want.len() - got.len());
                let mut piece = vec![0u8; k];
                s.fill(&mut piece);
                got.extend_from_slice(&piece);
            }
            assert_eq!(got, want, "{be} in pieces");
        }
    }
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

/// Several sums of the same eight sources (`LinearMap8::apply_sums_bytes`, each output with
/// maps of its own, as the extra nodes of Verify's level with blocks of eight) on every backend
/// equal the maps applied one element at a time, on the common prefix (the rest of each
/// output left alone).
#[test]
fn several_sums_of_byte_maps_match_the_scalar_maps() {
    let mut r = rng(78);
    for n in LENGTHS {
        let src: [Vec<u8>; 8] = core::array::from_fn(|i| vec_of::<Gf2p8>(&mut r, n + i))
            .map(|v| v.into_iter().map(|x| x.0).collect());
        let srcs: [&[u8]; 8] = core::array::from_fn(|i| &src[i][..]);
        let maps: [[LinearMap8; 8]; 7] = core::array::from_fn(|_| {
            core::array::from_fn(|_| LinearMap8::mul_by(Gf2p8::random(&mut r)))
        });
        let want: Vec<Vec<u8>> = maps
            .iter()
            .map(|m| {
                (0..n)
                    .map(|k| (0..8).fold(0, |a, i| a ^ m[i].apply_byte(src[i][k])))
                    .collect()
            })
            .collect();
        for be in Backend::ALL {
            let mut out = vec![vec![0x5au8; n + 2]; 7];
            let dst: [&mut [u8]; 7] = {
                let mut it = out.iter_mut();
                core::array::from_fn(|_| &mut it.next().expect("seven outputs")[..])
            };
            LinearMap8::apply_sums_bytes_with(be, &maps, srcs, dst);
            for (e, (o, w)) in out.iter().zip(&want).enumerate() {
                assert_eq!(&o[..n], &w[..], "{be} sum {e}, n = {n}");
                assert!(o[n..].iter().all(|b| *b == 0x5a), "{be} past the prefix");
            }
        }
    }
}

/// The sums of `N` byte maps (`LinearMap8::apply_sum_bytes`, into `GF(2^64)`
/// `ByteEmbedding::apply_sum_slice`) on every backend equal the maps applied one element at
/// a time and added, for odd and even `N` and slices of different lengths (the common prefix
/// is written, the rest of `dst` left alone).
#[test]
fn sums_of_byte_maps_match_the_scalar_maps() {
    use triskele_field::embed::{ByteEmbedding, E8_TABLES};
    fn check<const N: usize>(r: &mut ChaCha20Rng) {
        for n in LENGTHS {
            let src: [Vec<u8>; N] = core::array::from_fn(|i| vec_of::<Gf2p8>(r, n + i))
                .map(|v| v.into_iter().map(|x| x.0).collect());
            let srcs: [&[u8]; N] = core::array::from_fn(|i| &src[i][..]);
            let lin: [LinearMap8; N] = core::array::from_fn(|_| {
                LinearMap8::mul_by(Gf2p8::random(r)).compose(&LinearMap8::SQUARE)
            });
            let emb: [ByteEmbedding; N] =
                core::array::from_fn(|_| E8_TABLES.scaled_by(Gf2p64::random(r)));
            let want: Vec<u8> = (0..n)
                .map(|k| (0..N).fold(0, |a, i| a ^ lin[i].apply_byte(src[i][k])))
                .collect();
            let want64: Vec<Gf2p64> = (0..n)
                .map(|k| (0..N).fold(Gf2p64::ZERO, |a, i| a + emb[i].apply(src[i][k])))
                .collect();
            for be in Backend::ALL {
                let mut dst = vec![0x5au8; n + 3];
                LinearMap8::apply_sum_bytes_with(be, lin.each_ref(), srcs, &mut dst);
                assert_eq!(&dst[..n], &want[..], "{be} linear, N = {N}, n = {n}");
                assert!(dst[n..].iter().all(|b| *b == 0x5a));
                let mut dst = vec![Gf2p64(7); n + 3];
                ByteEmbedding::apply_sum_slice_with(be, emb.each_ref(), srcs, &mut dst);
                assert_eq!(&dst[..n], &want64[..], "{be} embed, N = {N}, n = {n}");
                assert!(dst[n..].iter().all(|w| *w == Gf2p64(7)));
            }
        }
    }
    let mut r = rng(77);
    check::<1>(&mut r);
    check::<2>(&mut r);
    check::<3>(&mut r);
    check::<8>(&mut r);
    check::<32>(&mut r);
}

/// The sums of `N` maps on the subfield of 16 elements (`SubfieldEmbedding::apply_sum_slice`)
/// on every backend equal the full maps applied one element at a time and added, on bytes of
/// that subfield, for odd and even `N` and slices of different lengths; and the subfield's
/// table is what its name says.
#[test]
fn sums_of_subfield_maps_match_the_full_maps() {
    use triskele_field::embed::{
        in_subfield, subfield_index, ByteEmbedding, E8_TABLES, GF16_IN_GF8,
    };
    let members: Vec<u8> = (0..=255u8)
        .filter(|x| Gf2p8(*x).pow(16) == Gf2p8(*x))
        .collect();
    assert_eq!(members.len(), 16);
    for x in 0..=255u8 {
        assert_eq!(in_subfield(x), members.contains(&x), "{x:#04x}");
    }
    for (i, x) in GF16_IN_GF8.iter().enumerate() {
        assert_eq!(usize::from(subfield_index(*x)), i);
        assert!(members.contains(x));
    }
    fn check<const N: usize>(r: &mut ChaCha20Rng) {
        for n in LENGTHS {
            let src: [Vec<u8>; N] = core::array::from_fn(|i| {
                (0..n + i)
                    .map(|_| GF16_IN_GF8[usize::from(Gf2p8::random(r).0 & 15)])
                    .collect()
            });
            let srcs: [&[u8]; N] = core::array::from_fn(|i| &src[i][..]);
            let emb: [ByteEmbedding; N] =
                core::array::from_fn(|_| E8_TABLES.scaled_by(Gf2p64::random(r)));
            let sub = emb.map(|e| e.on_subfield());
            let want: Vec<Gf2p64> = (0..n)
                .map(|k| (0..N).fold(Gf2p64::ZERO, |a, i| a + emb[i].apply(src[i][k])))
                .collect();
            for k in 0..n {
                let one = (0..N).fold(Gf2p64::ZERO, |a, i| a + sub[i].apply(src[i][k]));
                assert_eq!(one, want[k]);
            }
            for be in Backend::ALL {
                let mut dst = vec![Gf2p64(7); n + 3];
                SubfieldEmbedding::apply_sum_slice_with(be, sub.each_ref(), srcs, &mut dst);
                assert_eq!(&dst[..n], &want[..], "{be}, N = {N}, n = {n}");
                assert!(dst[n..].iter().all(|w| *w == Gf2p64(7)));
            }
        }
    }
    use triskele_field::embed::SubfieldEmbedding;
    let mut r = rng(78);
    check::<1>(&mut r);
    check::<2>(&mut r);
    check::<3>(&mut r);
    check::<8>(&mut r);
    check::<32>(&mut r);
}

/// Column sums (one map per column of 32 lanes) and the transpose into columns, on every
/// backend, against the maps applied one byte at a time.
#[test]
fn column_sums_and_transposes_match_the_scalar_maps() {
    use triskele_field::embed::{ByteEmbedding, E8_TABLES};
    let mut r = rng(0x7c01);
    for rows_n in [1usize, 5, 31, 32] {
        for n in LENGTHS {
            let rows: Vec<Vec<u8>> = (0..rows_n)
                .map(|e| {
                    vec_of::<Gf2p8>(&mut r, n + e)
                        .into_iter()
                        .map(|x| x.0)
                        .collect()
                })
                .collect();
            let refs: Vec<&[u8]> = rows.iter().map(|v| &v[..]).collect();
            let maps: Vec<ByteEmbedding> = (0..n)
                .map(|_| E8_TABLES.scaled_by(Gf2p64::random(&mut r)))
                .collect();
            let planes: Vec<[[u8; 16]; 16]> = maps.iter().map(ByteEmbedding::byte_planes).collect();
            let want: Vec<Gf2p64> = (0..32)
                .map(|e| {
                    (0..n).fold(Gf2p64::ZERO, |a, j| {
                        a + maps[j].apply(rows.get(e).map_or(0, |row| row[j]))
                    })
                })
                .collect();
            for be in Backend::ALL {
                let mut cols = vec![[0xa5u8; 32]; n + 2];
                ByteEmbedding::transpose_columns_with(be, &refs, &mut cols[..n]);
                for (j, c) in cols[..n].iter().enumerate() {
                    for (e, b) in c.iter().enumerate() {
                        let w = rows.get(e).map_or(0, |row| row[j]);
                        assert_eq!(*b, w, "{be} transpose, {rows_n} rows, n = {n}, ({j}, {e})");
                    }
                }
                assert!(cols[n..].iter().all(|c| c.iter().all(|b| *b == 0xa5)));
                let got = ByteEmbedding::column_sums_with(be, &planes, &cols[..n]);
                assert_eq!(
                    &got[..],
                    &want[..],
                    "{be} column sums, {rows_n} rows, n = {n}"
                );
            }
        }
    }
}
