//! Known-answer tests for the fields, tables and maps (PROTOCOLS.md §2 and §7; S-box rows and
//! {57}·{83} from FIPS-197 §4.2 and Figures 7 and 14).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use triskele_field::embed::{self, BETA, GAMMA, GF4P4_A, GF4P4_A2};
use triskele_field::{EmbedInto, Field, Fp, Gf2p4, Gf2p64, Gf2p8, Gf4Tower, LinearMap8};

fn g8(x: u8) -> Gf2p8 {
    Gf2p8(x)
}

fn hex_row(s: &str) -> Vec<u8> {
    s.split_whitespace()
        .map(|h| u8::from_str_radix(h, 16).unwrap())
        .collect()
}

// ---- GF(2^8) ------------------------------------------------------------------------------

#[test]
fn gf2p8_products_fips197() {
    // FIPS-197 §4.2 and §4.2.1.
    assert_eq!(g8(0x57) * g8(0x83), g8(0xc1));
    assert_eq!(g8(0x57) * g8(0x13), g8(0xfe));
    assert_eq!(g8(0x57) * g8(0x02), g8(0xae));
    assert_eq!(g8(0x80) * g8(0x02), g8(0x1b));
}

#[test]
fn gf2p8_inverses() {
    for (x, y) in [
        (0x02, 0x8d),
        (0x03, 0xf6),
        (0x53, 0xca),
        (0xca, 0x53),
        (0x80, 0x83),
        (0xff, 0x1c),
        (0x01, 0x01),
        (0x00, 0x00),
    ] {
        assert_eq!(g8(x).inverse(), g8(y), "inverse of {x:#04x}");
        assert_eq!(Gf2p8::INV_TABLE[usize::from(x)], y);
    }
    for x in 0..=255u8 {
        assert_eq!(g8(x).inverse(), g8(x).pow(254));
    }
}

#[test]
fn chida_chain() {
    let x = g8(0x53);
    assert_eq!(x.pow(3), g8(0xc3));
    assert_eq!(x.pow(14), g8(0xd5));
    assert_eq!(x.pow(15), g8(0x4a));
    assert_eq!(x.pow(240), g8(0xab));
    assert_eq!(x.pow(254), g8(0xca));
}

#[test]
fn sbox_known_answers() {
    for (x, y) in [
        (0x00, 0x63),
        (0x01, 0x7c),
        (0x02, 0x77),
        (0x53, 0xed),
        (0x63, 0xfb),
        (0xc9, 0xdd),
        (0xff, 0x16),
    ] {
        assert_eq!(g8(x).sbox(), g8(y), "S({x:#04x})");
        assert_eq!(g8(y).inv_sbox(), g8(x));
    }
    // FIPS-197 Figure 7, rows 0, 1 and f; Figure 14 row 0.
    assert_eq!(
        Gf2p8::SBOX[..16],
        hex_row("63 7c 77 7b f2 6b 6f c5 30 01 67 2b fe d7 ab 76")[..]
    );
    assert_eq!(
        Gf2p8::SBOX[16..32],
        hex_row("ca 82 c9 7d fa 59 47 f0 ad d4 a2 af 9c a4 72 c0")[..]
    );
    assert_eq!(
        Gf2p8::SBOX[240..],
        hex_row("8c a1 89 0d bf e6 42 68 41 99 2d 0f b0 54 bb 16")[..]
    );
    assert_eq!(
        Gf2p8::INV_SBOX[..16],
        hex_row("52 09 6a d5 30 36 a5 38 bf 40 a3 9e 81 f3 d7 fb")[..]
    );
}

#[test]
fn sbox_is_affine_of_inverse_and_a_permutation() {
    let mut seen = [false; 256];
    for x in 0..=255u8 {
        let s = LinearMap8::AES_A.apply(g8(x).inverse()) + Gf2p8::SBOX_CONSTANT;
        assert_eq!(g8(x).sbox(), s);
        assert_eq!(s.inv_sbox(), g8(x));
        // S^-1(y) = A^-1(y + 63)^-1
        let back = LinearMap8::AES_A_INV
            .apply(s + Gf2p8::SBOX_CONSTANT)
            .inverse();
        assert_eq!(back, g8(x));
        seen[usize::from(s.0)] = true;
    }
    assert!(seen.iter().all(|&b| b));
}

// ---- linear maps --------------------------------------------------------------------------

#[test]
fn aes_affine_part() {
    assert_eq!(LinearMap8::AES_A.apply(g8(0x01)), g8(0x1f));
    assert_eq!(LinearMap8::AES_A_INV.apply(g8(0x01)), g8(0x4a));
    assert_eq!(
        LinearMap8::AES_A.compose(&LinearMap8::AES_A_INV),
        LinearMap8::IDENTITY
    );
    assert_eq!(LinearMap8::AES_A.inverse(), Some(LinearMap8::AES_A_INV));
}

#[test]
fn frobenius_and_constant_maps() {
    for x in 0..=255u8 {
        let e = g8(x);
        assert_eq!(LinearMap8::SQUARE.apply(e), e * e);
        assert_eq!(LinearMap8::POW4.apply(e), e.pow(4));
        assert_eq!(LinearMap8::POW8.apply(e), e.pow(8));
        assert_eq!(LinearMap8::POW16.apply(e), e.pow(16));
        assert_eq!(LinearMap8::IDENTITY.apply(e), e);
        assert_eq!(LinearMap8::ZERO.apply(e), Gf2p8(0));
        for c in [0x00, 0x01, 0x02, 0x03, 0x57, 0xff] {
            assert_eq!(LinearMap8::mul_by(g8(c)).apply(e), g8(c) * e);
        }
    }
    assert_eq!(
        LinearMap8::SQUARE.compose(&LinearMap8::SQUARE),
        LinearMap8::POW4
    );
    assert_eq!(LinearMap8::mul_by(g8(0)).inverse(), None);
    assert_eq!(
        LinearMap8::mul_by(g8(0x53)).inverse(),
        Some(LinearMap8::mul_by(g8(0xca)))
    );
}

/// Software model of `gf2p8affineqb` with `imm8 = 0`, as specified in the Intel SDM:
/// `out.bit[i] = parity(matrix.byte[7 - i] & x)`.
fn gf2p8affine_model(matrix: u64, x: u8) -> u8 {
    (0..8).fold(0u8, |r, i| {
        let row = (matrix >> (8 * (7 - i))) as u8;
        r | ((((row & x).count_ones() & 1) as u8) << i)
    })
}

#[test]
fn gfni_matrix_layout_matches_instruction_model() {
    let maps = [
        LinearMap8::IDENTITY,
        LinearMap8::SQUARE,
        LinearMap8::AES_A,
        LinearMap8::AES_A_INV,
        Gf4Tower::WOL,
        Gf4Tower::WOL_INV,
        LinearMap8::mul_by(g8(0x57)),
        LinearMap8::from_basis_images([0x80, 0x01, 0x00, 0xff, 0x12, 0x34, 0x56, 0x78]),
    ];
    for m in maps {
        for x in 0..=255u8 {
            assert_eq!(gf2p8affine_model(m.gfni_matrix(), x), m.apply_byte(x));
        }
    }
    // The identity matrix constant documented by Intel for gf2p8affineqb.
    assert_eq!(LinearMap8::IDENTITY.gfni_matrix(), 0x0102_0408_1020_4080);
}

// ---- GF(2^4) ------------------------------------------------------------------------------

#[test]
fn gf2p4_tables() {
    let inv = hex_row("0 1 9 e d b 7 6 f 2 c 5 a 4 3 8");
    let sq = hex_row("0 1 4 5 3 2 7 6 c d 8 9 f e b a");
    let times_e = hex_row("0 e f 1 d 3 2 c 9 7 6 8 4 a b 5");
    for v in 0..16u8 {
        let x = Gf2p4(v);
        let i = usize::from(v);
        assert_eq!(x.inverse(), Gf2p4(inv[i]));
        assert_eq!(Gf2p4::INV_TABLE[i], inv[i]);
        assert_eq!(x.square(), Gf2p4(sq[i]));
        assert_eq!(Gf2p4::SQUARE_TABLE[i], sq[i]);
        assert_eq!(x * Gf4Tower::LAMBDA, Gf2p4(times_e[i]));
        assert_eq!(Gf2p4::MUL_TABLE[i][0xe], times_e[i]);
        assert_eq!(x.pow(14), x.inverse());
        assert_eq!(x.pow(2) * x.pow(4) * x.pow(8), x.inverse());
    }
}

// ---- tower field and WOL ------------------------------------------------------------------

fn pair(x: Gf4Tower) -> (u8, u8) {
    (x.high().0, x.low().0)
}

#[test]
fn wol_known_answers() {
    for (x, hl) in [
        (0x00, (0x0, 0x0)),
        (0x01, (0x0, 0x1)),
        (0x02, (0x2, 0x6)),
        (0x03, (0x2, 0x7)),
        (0x53, (0x2, 0xf)),
        (0xca, (0xb, 0x3)),
        (0x63, (0xc, 0x7)),
        (0xff, (0x1, 0x0)),
    ] {
        let t = Gf4Tower::from_gf2p8(g8(x));
        assert_eq!(pair(t), hl, "phi({x:#04x})");
        assert_eq!(t.to_gf2p8(), g8(x));
    }
    // Tower inverse of (2, f): d = a, d^-1 = c, result (b, 3) = phi(ca).
    let a = Gf4Tower::from_parts(Gf2p4(0x2), Gf2p4(0xf));
    assert_eq!(pair(a.inverse()), (0xb, 0x3));
    assert_eq!(a.inverse(), Gf4Tower::from_gf2p8(g8(0xca)));
}

#[test]
fn wol_basis_images() {
    assert_eq!(
        Gf4Tower::WOL.basis_images().to_vec(),
        hex_row("01 26 4a 40 39 d1 31 e4")
    );
    assert_eq!(
        Gf4Tower::WOL_INV.basis_images().to_vec(),
        hex_row("01 5c e0 50 ff be 08 d6")
    );
}

#[test]
fn wol_is_a_field_isomorphism() {
    let mut seen = [false; 256];
    for a in 0..=255u8 {
        let ta = Gf4Tower::from(g8(a));
        seen[usize::from(ta.0)] = true;
        assert_eq!(Gf2p8::from(ta), g8(a));
        assert_eq!(ta.inverse(), Gf4Tower::from(g8(a).inverse()));
        for b in 0..=255u8 {
            let tb = Gf4Tower::from(g8(b));
            assert_eq!(ta * tb, Gf4Tower::from(g8(a) * g8(b)));
            assert_eq!(ta + tb, Gf4Tower::from(g8(a) + g8(b)));
        }
    }
    assert!(seen.iter().all(|&s| s), "phi is bijective");
}

fn bit(x: u8, i: u32) -> u8 {
    (x >> i) & 1
}

#[test]
fn wol_bit_equations() {
    for x in 0..=255u8 {
        let a: [u8; 8] = core::array::from_fn(|i| bit(x, i as u32));
        let (ta, tb, tc) = (a[1] ^ a[7], a[5] ^ a[7], a[4] ^ a[6]);
        let l = [tc ^ a[0] ^ a[5], a[1] ^ a[2], ta, a[2] ^ a[4]];
        let h = [tc ^ a[5], ta ^ tc, tb ^ a[2] ^ a[3], tb];
        let nib = |b: [u8; 4]| b[0] | (b[1] << 1) | (b[2] << 2) | (b[3] << 3);
        let t = Gf4Tower::from_gf2p8(g8(x));
        assert_eq!(pair(t), (nib(h), nib(l)), "phi({x:#04x})");

        // Inverse map on the packed byte x = (h || l).
        let (hh, ll): ([u8; 4], [u8; 4]) = (
            core::array::from_fn(|i| bit(x, 4 + i as u32)),
            core::array::from_fn(|i| bit(x, i as u32)),
        );
        let (sa, sb) = (ll[1] ^ hh[3], hh[0] ^ hh[1]);
        let out = [
            ll[0] ^ hh[0],
            sb ^ hh[3],
            sa ^ sb,
            sb ^ ll[1] ^ hh[2],
            sa ^ sb ^ ll[3],
            sb ^ ll[2],
            sa ^ ll[2] ^ ll[3] ^ hh[0],
            sb ^ ll[2] ^ hh[3],
        ];
        let expect = out.iter().enumerate().fold(0u8, |r, (i, b)| r | (b << i));
        assert_eq!(Gf4Tower(x).to_gf2p8(), g8(expect), "phi^-1({x:#04x})");
    }
}

#[test]
fn subfield_of_the_tower() {
    let expected = hex_row("00 01 5c 5d e0 e1 bc bd 50 51 0c 0d b0 b1 ec ed");
    for v in 0..16u8 {
        let e: Gf2p8 = Gf2p4(v).embed();
        assert_eq!(e, g8(expected[usize::from(v)]));
        let t: Gf4Tower = Gf2p4(v).embed();
        assert_eq!(t, Gf4Tower(v));
        for w in 0..16u8 {
            let ew: Gf2p8 = Gf2p4(w).embed();
            let prod: Gf2p8 = (Gf2p4(v) * Gf2p4(w)).embed();
            assert_eq!(e * ew, prod);
        }
    }
}

// ---- GF(2^64) -----------------------------------------------------------------------------

#[test]
fn gf2p64_known_answers() {
    let u = Gf2p64::U;
    assert_eq!(Gf2p64(1 << 63) * u, Gf2p64(0x1b));
    assert_eq!(Gf2p64(u64::MAX).square(), Gf2p64(0x5555_5555_5555_5513));
    assert_eq!(
        Gf2p64(0x0123_4567_89ab_cdef) * Gf2p64(0xfedc_ba98_7654_3210),
        Gf2p64(0x4882_7ab5_5d97_6fa0)
    );
    assert_eq!(u.inverse(), Gf2p64(0x8000_0000_0000_000d));
    assert_eq!((u + Gf2p64::ONE).inverse(), Gf2p64(0xffff_ffff_ffff_fff6));
    assert_eq!(Gf2p64::ZERO.inverse(), Gf2p64::ZERO);
    let c = Gf2p64(0x0123_4567_89ab_cdef);
    assert_eq!(c.const_mul(c), c * c);
    assert_eq!(c.pow(u64::MAX), Gf2p64::ONE); // x^(2^64 - 1) = 1
}

// ---- embeddings ---------------------------------------------------------------------------

#[test]
fn e8_known_answers() {
    let images = [
        0x1,
        0x033c_e8be_ddc8_a656,
        0x5126_2037_5ed2_a108,
        0x0c9e_6360_90aa_fc01,
        0xba4f_3cd8_2801_769c,
        0xba26_e790_4adb_4a47,
        0x4676_9859_8926_dc01,
        0x4418_ae80_8b28_bdd0,
    ];
    for (j, &img) in images.iter().enumerate() {
        assert_eq!(embed::E8_IMAGES[j], Gf2p64(img));
        assert_eq!(embed::e8(g8(1 << j)), Gf2p64(img));
    }
    // beta is a root of u^8 + u^4 + u^3 + u + 1.
    let b = BETA;
    assert_eq!(
        b.pow(8) + b.pow(4) + b.pow(3) + b + Gf2p64::ONE,
        Gf2p64::ZERO
    );
    assert_eq!(embed::e8(g8(0x53)), Gf2p64(0xff05_4c3f_7cef_0cca));
    assert_eq!(embed::e8(g8(0xca)), Gf2p64(0x0dcc_bd07_4f6c_3b86));
    assert_eq!(embed::e8(g8(0x53)) * embed::e8(g8(0xca)), Gf2p64::ONE);
}

#[test]
fn e8_is_a_ring_homomorphism() {
    for a in 0..=255u8 {
        let ea: Gf2p64 = g8(a).embed();
        for b in 0..=255u8 {
            let eb: Gf2p64 = g8(b).embed();
            assert_eq!(ea * eb, (g8(a) * g8(b)).embed());
            assert_eq!(ea + eb, (g8(a) + g8(b)).embed());
        }
    }
}

#[test]
fn e4_known_answers_and_homomorphism() {
    let images = [
        0x1,
        0xa181_e7d6_6f5f_f794,
        0xb848_d149_48d5_2b96,
        0xfc39_a481_a127_aa9d,
    ];
    assert_eq!(GAMMA, Gf2p64(images[1]));
    for (j, &img) in images.iter().enumerate() {
        assert_eq!(embed::E4_IMAGES[j], Gf2p64(img));
    }
    let g = GAMMA;
    assert_eq!(g.pow(4) + g + Gf2p64::ONE, Gf2p64::ZERO);
    for a in 0..16u8 {
        let ea: Gf2p64 = Gf2p4(a).embed();
        // Consistent with WOL: E_4(a) = E_8(phi^-1(0 Y + a)).
        assert_eq!(ea, embed::e8(Gf4Tower(a).to_gf2p8()));
        for b in 0..16u8 {
            let eb = embed::e4(Gf2p4(b));
            assert_eq!(ea * eb, embed::e4(Gf2p4(a) * Gf2p4(b)));
            assert_eq!(ea + eb, embed::e4(Gf2p4(a) + Gf2p4(b)));
        }
    }
}

/// The nibble-table slice embeddings agree with the bit-mask ones on every byte (for `E_4`
/// also with garbage in the ignored high nibble).
#[test]
fn slice_embeddings_match_elementwise() {
    let bytes: Vec<u8> = (0..=255u8).collect();
    let mut out = vec![Gf2p64::ZERO; 256];
    let src: Vec<Gf2p8> = bytes.iter().map(|&b| g8(b)).collect();
    Gf2p8::embed_slice(&src, &mut out);
    for (b, e) in bytes.iter().zip(&out) {
        assert_eq!(*e, embed::e8(g8(*b)));
        assert_eq!(embed::E8_TABLES.apply(*b), embed::e8(g8(*b)));
    }
    let src: Vec<Gf2p4> = bytes.iter().map(|&b| Gf2p4(b)).collect();
    Gf2p4::embed_slice(&src, &mut out);
    for (b, e) in bytes.iter().zip(&out) {
        assert_eq!(*e, embed::e4(Gf2p4(*b)));
    }
    let src: Vec<Gf4Tower> = bytes.iter().map(|&b| Gf4Tower(b)).collect();
    Gf4Tower::embed_slice(&src, &mut out);
    for (b, e) in bytes.iter().zip(&out) {
        assert_eq!(*e, Gf4Tower(*b).embed());
    }
}

/// The table form of the gf4p4 embedding agrees with `φ_0(a_0) + φ_0(a_1)A + φ_0(a_2)A^2`
/// on all 16^3 coefficient triples.
#[test]
fn gf4p4_slice_matches_the_definition() {
    let mut c: [Vec<Gf2p4>; 3] = Default::default();
    for v in 0..4096u16 {
        for (i, ci) in c.iter_mut().enumerate() {
            ci.push(Gf2p4(((v >> (4 * i)) & 0x0f) as u8));
        }
    }
    let mut out = vec![Gf2p64::ZERO; 4096];
    embed::gf4p4_slice(&[&c[0], &c[1], &c[2]], &mut out);
    for (k, e) in out.iter().enumerate() {
        assert_eq!(*e, embed::gf4p4([c[0][k], c[1][k], c[2][k]]));
    }
    embed::gf4p4_slice(&[&c[0], &c[1]], &mut out);
    for (k, e) in out.iter().enumerate() {
        assert_eq!(*e, embed::gf4p4([c[0][k], c[1][k], Gf2p4(0)]));
    }
}

#[test]
fn tower_embedding_is_a_homomorphism() {
    for a in 0..=255u8 {
        for b in (0..=255u8).step_by(7) {
            let (x, y) = (Gf4Tower(a), Gf4Tower(b));
            let (ex, ey): (Gf2p64, Gf2p64) = (x.embed(), y.embed());
            assert_eq!(ex * ey, (x * y).embed());
        }
    }
}

#[test]
fn gf4p4_embedding() {
    let phi0_images = [
        0x1,
        0xb848_d149_48d5_2b97,
        0xa181_e7d6_6f5f_f794,
        0x5db8_4357_ce78_5d09,
    ];
    for (j, &img) in phi0_images.iter().enumerate() {
        assert_eq!(embed::PHI0_IMAGES[j], Gf2p64(img));
    }
    assert_eq!(GF4P4_A2, Gf2p64(0x1bf7_034c_8bcb_c73e));
    let a = GF4P4_A;
    let pu = embed::phi0(Gf2p4(2));
    assert_eq!(a.pow(4) + a.pow(2) + pu * a + pu * pu, Gf2p64::ZERO);
    assert_eq!(pu * pu, embed::phi0(Gf2p4(4)));
    // phi0 is a homomorphism GF(2^4) -> GF(2^64).
    for x in 0..16u8 {
        for y in 0..16u8 {
            assert_eq!(
                embed::phi0(Gf2p4(x)) * embed::phi0(Gf2p4(y)),
                embed::phi0(Gf2p4(x) * Gf2p4(y))
            );
        }
    }
    // Products of degree-1 polynomials in alpha (degree 2, no reduction) embed to products.
    for (a0, a1, b0, b1) in [(1, 0, 0, 1), (3, 7, 9, 2), (15, 15, 15, 15), (0, 5, 6, 0)] {
        let (a0, a1, b0, b1) = (Gf2p4(a0), Gf2p4(a1), Gf2p4(b0), Gf2p4(b1));
        let lhs = embed::gf4p4([a0, a1, Gf2p4(0)]) * embed::gf4p4([b0, b1, Gf2p4(0)]);
        let rhs = embed::gf4p4([a0 * b0, a0 * b1 + a1 * b0, a1 * b1]);
        assert_eq!(lhs, rhs);
    }
    assert_eq!(embed::bit(true), Gf2p64::ONE);
    assert_eq!(embed::bit(false), Gf2p64::ZERO);
}

// ---- F_p ----------------------------------------------------------------------------------

#[test]
fn fp_known_answers() {
    let p = Fp::MODULUS;
    assert_eq!(p, (1u128 << 127) + 45);
    assert_eq!(Fp::new(p), None);
    assert_eq!(Fp::new(p - 1).map(Fp::value), Some(p - 1));
    assert_eq!(Fp::from_u128_reduced(p).value(), 0);
    assert_eq!(Fp::from_u128_reduced(u128::MAX).value(), u128::MAX - p);
    let minus_one = -Fp::ONE;
    assert_eq!(minus_one.value(), p - 1);
    assert_eq!(minus_one * minus_one, Fp::ONE);
    // 2^-1 = (p + 1) / 2
    assert_eq!(Fp::from(2).inverse().value(), (p >> 1) + 1);
    assert_eq!(Fp::ZERO.inverse(), Fp::ZERO);
    // 2^127 = -45 and 2^128 = -90.
    let two = Fp::from(2);
    assert_eq!(two.pow(127), -Fp::from(45));
    assert_eq!(two.pow(128), -Fp::from(90));
    // Fermat.
    let x = Fp::new(0x0123_4567_89ab_cdef_fedc_ba98_7654_3210).unwrap();
    assert_eq!(x.pow(p - 1), Fp::ONE);
    assert_eq!(x * x.inverse(), Fp::ONE);
}

/// The tower `GF(2^16) = GF(2^8)[t]/(t^2 + t + c)` and its embedding `E_16`: `t^2 + t + c` has
/// no root in `GF(2^8)`, `T` is a root of its image and not in `E_8(GF(2^8))`, `E_16` is an
/// injective ring homomorphism (on all `2^16` sums and on random products), it extends `E_8`,
/// `coords16` inverts it, and the gf4p4 images of PROTOCOLS.md §2.4 lie in its image.
#[test]
fn tower_gf2p16_embeds_as_a_ring() {
    use triskele_field::embed::{coords16, e16, e8, mul16, word_maps, GF4P4_A, TOWER_C, TOWER_T};
    let c = Gf2p8(TOWER_C);
    for x in 0..=255u8 {
        let x = Gf2p8(x);
        assert_ne!(x * x + x + c, Gf2p8(0), "t^2 + t + c has the root {x:?}");
        assert_ne!(e8(x), TOWER_T);
    }
    assert_eq!(TOWER_T * TOWER_T + TOWER_T, e8(c));
    let mut seen = std::collections::HashSet::new();
    for lo in 0..=255u8 {
        assert_eq!(e16(lo, 0), e8(Gf2p8(lo)));
        for hi in 0..=255u8 {
            let y = e16(lo, hi);
            assert!(seen.insert(y.0), "E_16 is not injective");
            assert_eq!(coords16(y), Some((lo, hi)));
        }
    }
    let mut x = 0x1234_5678_9abc_def1u64;
    for _ in 0..5000 {
        x = x.rotate_left(13) ^ x.wrapping_mul(0x9e37_79b9_7f4a_7c15);
        let [a0, a1, b0, b1, ..] = x.to_le_bytes();
        let p = mul16((a0, a1), (b0, b1));
        assert_eq!(e16(p.0, p.1), e16(a0, a1) * e16(b0, b1));
        assert_eq!(e16(a0 ^ b0, a1 ^ b1), e16(a0, a1) + e16(b0, b1));
    }
    assert_eq!(coords16(Gf2p64(1 << 40)), None);
    // The gf4p4 embedding lands in the tower: A and the images of φ_0.
    assert!(coords16(GF4P4_A).is_some());
    let phi0 = triskele_field::embed::PHI0_IMAGES;
    let phi = triskele_field::embed::ByteEmbedding::new(&core::array::from_fn(|j| {
        if j < 4 {
            phi0[j]
        } else {
            phi0[j - 4] * GF4P4_A
        }
    }));
    let [lo, hi] = word_maps(&phi).expect("φ_0 lies in GF(2^16)");
    for v in 0..=255u8 {
        assert_eq!(e16(lo.apply_byte(v), hi.apply_byte(v)), phi.apply(v));
    }
}

/// The pair form of `GF(2^16)` elements of `A`-degree ≤ 1: `ψ` is a field isomorphism onto
/// the subfield `S` of `GF(2^8)` with `E_8 ∘ ψ = φ_0`, `w` is outside `S`, `π_1` and the
/// embedding invert the pair form of every nibble pair, the embedding is `S`-linear, and the
/// product of two pair forms embeds as `f(X Y) + g(π_1(X) π_1(Y))` for all `2^16` pairs of
/// pairs.
#[test]
fn pair_form_embeds_gf4p4_operands_and_their_products() {
    use triskele_field::embed::{
        e8, gf4p4, pair_of_nibbles, PairSlot, PAIR_EMBEDDING, PAIR_PSI, PAIR_SECOND,
        PAIR_SQUARE_TERM, PAIR_W, SUBFIELD16,
    };
    use triskele_field::Gf2p4;
    for a in 0..16u8 {
        for b in 0..16u8 {
            let (pa, pb) = (Gf2p8(PAIR_PSI[a as usize]), Gf2p8(PAIR_PSI[b as usize]));
            assert_eq!(pa * pb, Gf2p8(PAIR_PSI[(Gf2p4(a) * Gf2p4(b)).0 as usize]));
            assert_eq!(pa + pb, Gf2p8(PAIR_PSI[(a ^ b) as usize]));
        }
        assert_eq!(
            e8(Gf2p8(PAIR_PSI[a as usize])),
            gf4p4([Gf2p4(a), Gf2p4(0), Gf2p4(0)])
        );
    }
    assert!(!SUBFIELD16.contains(&PAIR_W.0));
    let form = pair_of_nibbles(PairSlot::First, PairSlot::Second);
    let x_of = |v: u8| gf4p4([Gf2p4(v >> 4), Gf2p4(v & 15), Gf2p4(0)]);
    for v in 0..=255u8 {
        let b = form.apply_byte(v);
        assert_eq!(PAIR_EMBEDDING.apply(b), x_of(v), "nibbles {v:#04x}");
        assert_eq!(PAIR_SECOND.apply_byte(b), PAIR_PSI[(v & 15) as usize]);
        for s in SUBFIELD16 {
            let sb = (Gf2p8(s) * Gf2p8(b)).0;
            assert_eq!(
                PAIR_EMBEDDING.apply(sb),
                e8(Gf2p8(s)) * PAIR_EMBEDDING.apply(b)
            );
        }
        for u in 0..=255u8 {
            let c = form.apply_byte(u);
            let (p, r) = (
                (Gf2p8(b) * Gf2p8(c)).0,
                (Gf2p8(PAIR_SECOND.apply_byte(b)) * Gf2p8(PAIR_SECOND.apply_byte(c))).0,
            );
            assert_eq!(
                PAIR_EMBEDDING.apply(p) + PAIR_SQUARE_TERM.apply(r),
                x_of(v) * x_of(u),
                "{v:#04x} · {u:#04x}"
            );
        }
    }
    // The other slots: Y = a_l + A d^-1 from the low nibble of one byte and the high of
    // another.
    let (lo, hi) = (
        pair_of_nibbles(PairSlot::None, PairSlot::First),
        pair_of_nibbles(PairSlot::Second, PairSlot::None),
    );
    for a in 0..=255u8 {
        let d = a.rotate_left(3) ^ 0x5c;
        let y = gf4p4([Gf2p4(a & 15), Gf2p4(d >> 4), Gf2p4(0)]);
        assert_eq!(PAIR_EMBEDDING.apply(lo.apply_byte(a) ^ hi.apply_byte(d)), y);
    }
}
