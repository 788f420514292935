//! The engine's primitives over every field, three parties over in-memory links with a fixed
//! seed: input, open, multiplication, inner products, additive sharing and resharing.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::ops::Range;

use rand::SeedableRng;
use rand_chacha::ChaCha20Rng;
use triskele_engine::{Party, Phase, ReshareTo, SemiHonest};
use triskele_field::{Bulk, Encode, Field, Fp, Gf2p4, Gf2p64, Gf2p8, Random};
use triskele_net::{NetOptions, Network};
use triskele_share::{deal, PartyId, RssVec};

fn three<T: Send>(f: impl Fn(Party<SemiHonest>) -> T + Sync) -> [T; 3] {
    let nets = triskele_net::in_memory(&NetOptions::default());
    let f = &f;
    std::thread::scope(|s| {
        let hs: Vec<_> = nets
            .into_iter()
            .map(|n: Network| s.spawn(move || f(Party::setup(n).expect("setup"))))
            .collect();
        let v: Vec<T> = hs.into_iter().map(|h| h.join().expect("join")).collect();
        v.try_into().ok().expect("three")
    })
}

fn random_vec<F: Random>(n: usize, seed: u64) -> Vec<F> {
    let mut rng = ChaCha20Rng::seed_from_u64(seed);
    let mut v = vec![F::ZERO; n];
    F::fill_random(&mut rng, &mut v);
    v
}

fn check_field<F: Field + Random + Encode + Bulk + triskele_engine::Lift>() {
    let n = 257;
    let x: Vec<F> = random_vec(n, 1);
    let y: Vec<F> = random_vec(n, 2);
    let mut rng = ChaCha20Rng::seed_from_u64(3);
    let xs = deal(&x, &mut rng);
    let ys = deal(&y, &mut rng);
    let expected_prod: Vec<F> = x.iter().zip(&y).map(|(a, b)| *a * *b).collect();
    let expected_ip = F::inner_product(&x, &y);

    let outs = three(|mut p| {
        let i = p.id().index();
        p.set_phase(Phase::Online);
        // open
        let opened = p.open(&xs[i]).unwrap();
        // multiplication
        let z = p.mul(&xs[i], &ys[i]).unwrap();
        let z_open = p.open(&z).unwrap();
        // input by P2, then open
        let input = p
            .input(PartyId::P2, (p.id() == PartyId::P2).then_some(&y[..]), n)
            .unwrap();
        let input_open = p.open(&input).unwrap();
        // inner product: sum of local products, one reshare
        let mut t = vec![F::ZERO; n];
        triskele_share::local_product(&mut t, &xs[i], &ys[i]);
        let ip_add = vec![t.iter().fold(F::ZERO, |a, b| a + *b)];
        let ip = p.additive_to_rss(ip_add, ReshareTo::Prev).unwrap();
        let ip_open = p.open(&ip).unwrap();
        // resharing towards next gives the same value
        let mut t2 = vec![F::ZERO; n];
        triskele_share::local_product(&mut t2, &xs[i], &ys[i]);
        let z2 = p.additive_to_rss(t2, ReshareTo::Next).unwrap();
        let z2_open = p.open(&z2).unwrap();
        // additive (3,3) opening of a masked share: first components sum to x
        let mut add = xs[i].first.clone();
        let zero = p.prss().zero_share::<F>(n);
        F::add_assign_slice(&mut add, &zero);
        let add_open = p.open_additive(&add).unwrap();
        // constants
        let c = RssVec::constant(p.id(), &y);
        let c_open = p.open(&c).unwrap();
        let stats = p.net().stats().get(Phase::Online);
        p.shutdown().unwrap();
        (
            (
                opened, z_open, input_open, ip_open, z2_open, add_open, c_open,
            ),
            (z, stats),
        )
    });
    for (o, _) in &outs {
        assert_eq!(o.0, x, "{}: open", F::NAME);
        assert_eq!(o.1, expected_prod, "{}: mul", F::NAME);
        assert_eq!(o.2, y, "{}: input", F::NAME);
        assert_eq!(o.3, vec![expected_ip], "{}: inner product", F::NAME);
        assert_eq!(o.4, expected_prod, "{}: reshare to next", F::NAME);
        assert_eq!(o.5, x, "{}: additive open", F::NAME);
        assert_eq!(o.6, y, "{}: constant", F::NAME);
    }
    // Replication invariant after a multiplication.
    let zs: [RssVec<F>; 3] = [
        outs[0].1 .0.clone(),
        outs[1].1 .0.clone(),
        outs[2].1 .0.clone(),
    ];
    assert_eq!(
        triskele_share::reconstruct(&zs),
        Some(expected_prod),
        "{}: replication invariant",
        F::NAME
    );
    // Bytes: open n (to next), mul n (to prev), input n to each neighbour from P2 only, ...
    let e = F::encoded_len(n) as u64;
    let e1 = F::encoded_len(1) as u64;
    for (i, (_, (_, s))) in outs.iter().enumerate() {
        let input_extra = if i == 1 { e } else { 0 };
        // next: open x, open z, input, open input, open ip, reshare-next, open z2, additive, open c
        assert_eq!(
            s.next.bytes_sent,
            e + e + input_extra + e + e1 + e + e + e + e,
            "{}: bytes to next",
            F::NAME
        );
        // prev: mul, input, reshare ip, additive
        assert_eq!(
            s.prev.bytes_sent,
            e + input_extra + e1 + e,
            "{}: bytes to prev",
            F::NAME
        );
    }
}

#[test]
fn gf2p8() {
    check_field::<Gf2p8>();
}

#[test]
fn gf2p4() {
    check_field::<Gf2p4>();
}

#[test]
fn gf2p64() {
    check_field::<Gf2p64>();
}

#[test]
fn prime_field() {
    check_field::<Fp>();
}

#[test]
fn parameter_mismatch_is_detected() {
    let outs = three(|mut p| {
        let s = if p.id() == PartyId::P3 {
            "simd=2"
        } else {
            "simd=1"
        };
        p.check_parameters(s).is_err()
    });
    assert_eq!(outs, [true, true, true]);
}

/// Components `r` of a sharing.
fn comps(v: &RssVec<Gf2p8>, r: Range<usize>) -> [&[Gf2p8]; 2] {
    [&v.first[r.clone()], &v.second[r]]
}

/// The concatenation of pieces `r` of each component.
fn gather(v: &RssVec<Gf2p8>, rs: &[Range<usize>]) -> RssVec<Gf2p8> {
    let cat = |c: &[Gf2p8]| rs.iter().flat_map(|r| c[r.clone()].to_vec()).collect();
    RssVec {
        first: cat(&v.first),
        second: cat(&v.second),
    }
}

/// `mul_covered_parts` on pieces of two vectors (one of them repeated) gives the products of
/// the concatenations, with the messages of `mul_covered` on them; pieces of unequal lengths
/// are refused before anything is sent.
#[test]
fn mul_covered_parts_is_mul_covered_of_the_concatenation() {
    let n = 40;
    let x: Vec<Gf2p8> = random_vec(n, 7);
    let y: Vec<Gf2p8> = random_vec(n, 8);
    let mut rng = ChaCha20Rng::seed_from_u64(9);
    let (xs, ys) = (deal(&x, &mut rng), deal(&y, &mut rng));
    let rx = [0..10, 0..10, 5..30];
    let ry = [3..13, 20..30, 0..25];
    let cat = |v: &[Gf2p8], rs: &[Range<usize>]| -> Vec<Gf2p8> {
        rs.iter().flat_map(|r| v[r.clone()].to_vec()).collect()
    };
    let expected: Vec<Gf2p8> = cat(&x, &rx)
        .iter()
        .zip(cat(&y, &ry))
        .map(|(a, b)| *a * b)
        .collect();
    let outs = three(|mut p| {
        let i = p.id().index();
        p.set_phase(Phase::Online);
        let parts: Vec<_> = rx
            .iter()
            .zip(&ry)
            .map(|(a, b)| (comps(&xs[i], a.clone()), comps(&ys[i], b.clone())))
            .collect();
        let refused = p
            .mul_covered_parts(&[(comps(&xs[i], 0..3), comps(&ys[i], 0..4))])
            .is_err();
        let before = p.net().stats().get(Phase::Online);
        let z = p.mul_covered_parts(&parts).unwrap();
        let mid = p.net().stats().get(Phase::Online);
        let w = p
            .mul_covered(&gather(&xs[i], &rx), &gather(&ys[i], &ry))
            .unwrap();
        let after = p.net().stats().get(Phase::Online);
        let sent = |a: &triskele_net::PhaseStats, b: &triskele_net::PhaseStats| {
            (
                b.prev.bytes_sent - a.prev.bytes_sent,
                b.next.bytes_sent - a.next.bytes_sent,
                b.prev.messages - a.prev.messages,
            )
        };
        let (s_parts, s_cat) = (sent(&before, &mid), sent(&mid, &after));
        let opened = (p.open(&z).unwrap(), p.open(&w).unwrap());
        p.shutdown().unwrap();
        (refused, s_parts, s_cat, opened)
    });
    for (refused, s_parts, s_cat, (z, w)) in outs {
        assert!(refused);
        assert_eq!(s_parts, s_cat);
        assert_eq!(s_parts.0, expected.len() as u64);
        assert!(z == expected && w == expected);
    }
}
