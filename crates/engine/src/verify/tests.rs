use super::coeffs::{chunk_key, column_key, CoeffStream};
use super::source::{kind_groups, paired_runs, windows, Window};
use super::*;
use crate::model::{Chained, Lift, Triples};

#[test]
fn times_node_is_multiplication_by_the_node() {
    let mut x = 0x0123_4567_89ab_cdefu64;
    for _ in 0..1000 {
        let v = Gf2p64(x);
        assert_eq!(v.times_node(), v * Gf2p64::node());
        x = x.rotate_left(7) ^ x.wrapping_mul(0x9e37_79b9_7f4a_7c15);
    }
    assert_eq!(Gf2p64(1 << 63).times_node(), Gf2p64(0x1b));
    let f = Fp::from(12345u64);
    assert_eq!(f.times_node(), f * Fp::node());
}

/// The local computations of Verify for `coins` as the halving coins: per level
/// `[zsum_1, zsum_2, h1, hu]` (the step-1 sums `Σ c z` at level 1 only, else zero) and
/// the final `[x_1, x_2, y_1, y_2]` at index 0. Computed naively from the fully lifted
/// triples with scalar field operations: the reference for the streamed implementation.
fn naive_transcript<V: VerifyField>(
    src: &dyn TripleSource<V>,
    seed: &[u8; 16],
    coins: &[V],
) -> (Vec<[V; 4]>, [V; 4]) {
    let total = src.len();
    let n = total.max(1).next_power_of_two();
    let mut t = LiftedTriples::zeros(total);
    src.lift(0, Parts::Xyz, &mut t);
    let mut c = vec![V::ZERO; total];
    for (k, ch) in c.chunks_mut(COEFF_CHUNK).enumerate() {
        prg_coefficients(seed, k * COEFF_CHUNK, ch);
    }
    let lp = |a: [V; 2], b: [V; 2]| a[0] * b[0] + a[0] * b[1] + a[1] * b[0];
    let mut zs = [V::ZERO; 2];
    for ((ck, z1), z2) in c.iter().zip(&t.z.first).zip(&t.z.second) {
        zs[0] += *ck * *z1;
        zs[1] += *ck * *z2;
    }
    let mut v: [Vec<V>; 4] = [
        (0..total).map(|k| c[k] * t.x.first[k]).collect(),
        (0..total).map(|k| c[k] * t.x.second[k]).collect(),
        t.y.first.clone(),
        t.y.second.clone(),
    ];
    let mut out = Vec::new();
    let mut len = n;
    let mut level = 0;
    while len > 1 {
        let half = if level == 0 {
            first_half(total, n)
        } else {
            len.div_ceil(2)
        };
        let get = |v: &Vec<V>, i: usize| {
            if i < len {
                v.get(i).copied().unwrap_or(V::ZERO)
            } else {
                V::ZERO
            }
        };
        let (mut h1, mut hu) = (V::ZERO, V::ZERO);
        for j in 0..half {
            let lo = [0, 1, 2, 3].map(|q| get(&v[q], j));
            let hi = [0, 1, 2, 3].map(|q| get(&v[q], j + half));
            h1 += lp([hi[0], hi[1]], [hi[2], hi[3]]);
            let f = [0, 1, 2, 3].map(|q| lo[q] + (hi[q] - lo[q]) * V::node());
            hu += lp([f[0], f[1]], [f[2], f[3]]);
        }
        let zrow = if level == 0 { zs } else { [V::ZERO; 2] };
        out.push([zrow[0], zrow[1], h1, hu]);
        let s = coins[level];
        for q in &mut v {
            let folded: Vec<V> = (0..half)
                .map(|j| {
                    let (lo, hi) = (get(q, j), get(q, j + half));
                    lo + (hi - lo) * s
                })
                .collect();
            *q = folded;
        }
        len = half;
        level += 1;
    }
    let last = [0, 1, 2, 3].map(|q| v[q].first().copied().unwrap_or(V::ZERO));
    (out, last)
}

fn local_transcript<V: VerifyField>(
    src: &dyn TripleSource<V>,
    seed: &[u8; 16],
    coins: &[V],
) -> (Vec<[V; 4]>, [V; 4]) {
    // Level 1 must write every element of its vectors: they come filled with other
    // values, shorter and longer than needed.
    let mut spare = Spare::default();
    let n = src.len().max(1).next_power_of_two();
    for len in [n, n / 2 + 3, 1, 2 * n] {
        use rand::SeedableRng;
        let mut r = rand_chacha::ChaCha20Rng::seed_from_u64(len as u64);
        let mut v = vec![V::ZERO; len];
        V::fill_random(&mut r, &mut v);
        spare.put(v);
    }
    let (mut prover, first) = Prover::start(src, *seed, &mut spare);
    let mut out = vec![[first.z[0], first.z[1], first.h1, first.hu]];
    while let Some(s) = prover.fold(coins[out.len() - 1], &mut spare) {
        out.push([s.z[0], s.z[1], s.h1, s.hu]);
    }
    (out, prover.last())
}

/// The definition of the coefficients: chunk `k`'s [`Prg`] under [`chunk_key`] (one
/// chunk, from its start); for product coefficients the first element of that stream
/// times the column factors, the [`Prg`] under [`column_key`].
fn prg_coefficients<V: VerifyField>(seed: &[u8; 16], start: usize, out: &mut [V]) {
    use triskele_share::{Prg, PrgKey};
    assert_eq!(start % COEFF_CHUNK, 0);
    assert!(out.len() <= COEFF_CHUNK);
    let mut prg = Prg::new(&PrgKey(chunk_key(seed, start / COEFF_CHUNK)));
    if V::PRODUCT_COEFFICIENTS {
        let mut a = [V::ZERO];
        prg.fill(&mut a);
        let a = a[0];
        let mut b = vec![V::ZERO; COEFF_CHUNK];
        Prg::new(&PrgKey(column_key(seed))).fill(&mut b);
        for (o, b) in out.iter_mut().zip(b) {
            *o = a * b;
        }
    } else {
        prg.fill(out);
    }
}

/// The streamed coefficients, drawn in pieces from any position and across chunks, are
/// those of the definition, in `GF(2^64)`, `F_p` and `F_p` with rejection sampling.
#[test]
fn coefficient_streams_match_the_prg() {
    fn check<V: VerifyField>() {
        let seed = [0x42u8; 16];
        let n = 3 * COEFF_CHUNK + 77;
        let mut want = vec![V::ZERO; n];
        for (k, ch) in want.chunks_mut(COEFF_CHUNK).enumerate() {
            prg_coefficients(&seed, k * COEFF_CHUNK, ch);
        }
        for start in [0, 1, 255, 1024, COEFF_CHUNK - 1, COEFF_CHUNK, 5000] {
            let co = Coefficients::new(seed);
            let mut s = CoeffStream::new(&co, start);
            let mut got = Vec::new();
            for piece in [1usize, 256, 3, 2048, 700].into_iter().cycle() {
                let k = piece.min(n - start - got.len());
                if k == 0 {
                    break;
                }
                let mut buf = vec![V::ZERO; k];
                s.fill(&mut buf);
                got.extend(buf);
            }
            assert!(got == want[start..], "start {start}");
        }
    }
    check::<Gf2p64>();
    check::<Fp>();
    FpRt::with_modulus(5, check::<FpRt>).expect("a prime");
    FpRt::with_modulus((1 << 61) - 1, check::<FpRt>).expect("a prime");
}

/// A source without the fast paths (the lifting path only).
struct LiftOnly<'a, V>(&'a dyn TripleSource<V>);

impl<V> TripleSource<V> for LiftOnly<'_, V> {
    fn len(&self) -> usize {
        self.0.len()
    }
    fn lift(&self, start: usize, parts: Parts, out: &mut LiftedTriples<V>) {
        self.0.lift(start, parts, out);
    }
}

/// A source that lifts, and gives `y` again by lifting (so `Verify` recomputes it at
/// level 2 instead of storing the folded `y` of level 1).
struct Relift<'a, V>(&'a dyn TripleSource<V>);

impl<V: VerifyField> TripleSource<V> for Relift<'_, V> {
    fn len(&self) -> usize {
        self.0.len()
    }
    fn lift(&self, start: usize, parts: Parts, out: &mut LiftedTriples<V>) {
        self.0.lift(start, parts, out);
    }
    fn lift_y(&self, start: usize, out: [&mut [V]; 2]) -> bool {
        let mut t = LiftedTriples::zeros(out[0].len());
        self.0.lift(start, Parts::Xy, &mut t);
        let [o1, o2] = out;
        o1.copy_from_slice(&t.y.first);
        o2.copy_from_slice(&t.y.second);
        true
    }
}

/// Whether the source gives `y` again (so level 1 stores only `x`).
fn relifts<V>(s: &dyn TripleSource<V>) -> bool {
    s.lift_y(0, [&mut [], &mut []])
}

/// Recomputing `y` by lifting at level 2 gives the transcript of storing it, for one
/// source and for several concatenated (byte sources among them take the lifting path
/// too), at sizes with odd and even halves and several chunks.
#[test]
fn relifting_y_matches_storing_it() {
    for (i, n) in [2usize, 5, 600, 4097, 20_000].into_iter().enumerate() {
        let seed = 40 + i as u64;
        let t = random_triples::<triskele_field::Gf2p8>(n, seed);
        let g = random_triples::<Gf2p64>(n / 3 + 1, seed ^ 7);
        let mut key = [0u8; 16];
        key[..8].copy_from_slice(&seed.to_le_bytes());
        let coins = random_coins::<Gf2p64>(64, seed ^ 1);
        let want = local_transcript(&LiftOnly(&t), &key, &coins);
        assert!(
            want == local_transcript(&Relift(&t), &key, &coins),
            "n = {n}"
        );
        let (lt, lg, rt, rg) = (LiftOnly(&t), LiftOnly(&g), Relift(&t), Relift(&g));
        let want = local_transcript(&Concat::new(vec![&lt, &lg]), &key, &coins);
        let cat = Concat::new(vec![&rt, &rg]);
        assert!(relifts(&cat));
        assert!(want == local_transcript(&cat, &key, &coins), "n = {n}");
        // Recorded triples lift their `y` directly (`lift_y`), also inside a concatenation
        // with other sources; a part without it keeps the stored `y`.
        let mixed = Concat::new(vec![&t, &rg]);
        assert!(relifts(&mixed));
        assert!(want == local_transcript(&mixed, &key, &coins), "n = {n}");
        let stored = Concat::new(vec![&t, &lg]);
        assert!(!relifts(&stored));
        assert!(want == local_transcript(&stored, &key, &coins), "n = {n}");
        // Bit-sliced words (16 triples each) with other sources, ranges across words.
        let b = random_triples::<triskele_field::Bits16>(n / 7 + 1, seed ^ 5);
        let (lb, rb) = (LiftOnly(&b), Concat::new(vec![&b]));
        let want = local_transcript(&Concat::new(vec![&lt, &lb, &lg]), &key, &coins);
        let cat = Concat::new(vec![&t, &b, &rg]);
        assert!(relifts(&cat) && relifts(&rb));
        assert!(want == local_transcript(&cat, &key, &coins), "n = {n}");
        // The same over F_p.
        let f = random_triples::<Fp>(n, seed ^ 9);
        let fcoins = random_coins::<Fp>(64, seed ^ 3);
        let want = local_transcript(&LiftOnly(&f), &key, &fcoins);
        assert!(
            want == local_transcript(&Concat::new(vec![&f]), &key, &fcoins),
            "n = {n}"
        );
        assert!(
            want == local_transcript(&Relift(&f), &key, &fcoins),
            "n = {n}"
        );
    }
}

/// The byte fast paths of `GF(2^8)`, `GF(2^4)`, the tower field and bit-sliced `GF(2)` are
/// taken and give what lifting gives, level by level.
#[test]
fn byte_fast_paths_match_lifting() {
    fn check<F: Lift<Check = Gf2p64> + Random>(n: usize, seed: u64) {
        let t = random_triples::<F>(n, seed);
        let mut key = [0u8; 16];
        key[..8].copy_from_slice(&seed.to_le_bytes());
        let c: Vec<Gf2p64> = random_coins(600, seed);
        let (lo, hi) = (&c[..300], &c[300..]);
        let plain = Coeffs::plain_slice;
        // Triples (16 per bit-sliced word).
        let n = TripleSource::len(&t);
        let sums = |c: [Coeffs<'_, Gf2p64>; 2]| t.pair_sums(0, Some(n - 300), c);
        let both = sums([plain(lo), plain(hi)]);
        assert!(both.is_some());
        assert!(t.pair_sums(5, None, [plain(lo), plain(&[])]).is_some());
        let coin = c[7];
        let fold = |k: [Coeffs<'_, Gf2p64>; 2]| {
            let mut out: [Vec<Gf2p64>; 4] = Default::default();
            for o in &mut out {
                o.resize(300, Gf2p64(0x55));
            }
            let o = out.each_mut().map(|o| &mut o[..]);
            assert!(t.fold_pairs(1, Some(n - 300), k, coin, o));
            out
        };
        let folded = fold([plain(lo), plain(hi)]);
        // Factored coefficients `a b` give what the products written out give: with
        // distinct per-position factors, and with shared ones (one product per entry).
        let (a, b) = (c[11], c[12]);
        let times = |s: Gf2p64, v: &[Gf2p64]| v.iter().map(|x| s * *x).collect::<Vec<_>>();
        let (alo, bhi, blo) = (times(a, lo), times(b, hi), times(b, lo));
        let f = |scale, base| Coeffs { scale, base };
        assert_eq!(sums([f(a, lo), f(b, hi)]), sums([plain(&alo), plain(&bhi)]));
        assert_eq!(sums([f(a, lo), f(b, lo)]), sums([plain(&alo), plain(&blo)]));
        assert_eq!(
            t.pair_sums(5, None, [f(a, lo), f(b, &[])]),
            t.pair_sums(5, None, [plain(&alo), plain(&[])])
        );
        assert_ne!(both, sums([plain(&alo), plain(&bhi)]));
        assert!(fold([f(a, lo), f(b, hi)]) == fold([plain(&alo), plain(&bhi)]));
        assert!(fold([f(a, lo), f(b, lo)]) == fold([plain(&alo), plain(&blo)]));
        assert!(folded != fold([plain(&alo), plain(&bhi)]));
        let coins = random_coins::<Gf2p64>(64, seed ^ 1);
        let want = local_transcript(&LiftOnly(&t), &key, &coins);
        assert!(want == local_transcript(&t, &key, &coins), "n = {n}");
        let cat = Concat::new(vec![&t]);
        assert!(want == local_transcript(&cat, &key, &coins), "n = {n}");
    }
    for (i, n) in [600usize, 4097, 20_000].into_iter().enumerate() {
        check::<triskele_field::Gf2p8>(n, 10 + i as u64);
        check::<triskele_field::Gf2p4>(n, 20 + i as u64);
        check::<triskele_field::Gf4Tower>(n, 30 + i as u64);
        // 16 bit triples per word: ranges across words.
        check::<triskele_field::Bits16>(n / 16 + 20, 40 + i as u64);
    }
}

/// A concatenation with empty parts between and around its parts lifts and loads every range
/// (inside one part, across parts, up to and past its end) as the triples laid end to end,
/// and serves in place only the ranges inside one part.
#[test]
fn concatenations_with_empty_parts_serve_every_range() {
    use triskele_field::Gf2p8;
    let lens = [37usize, 0, 5, 0, 0, 100, 1, 0];
    let parts: Vec<Triples<Gf2p8>> = lens
        .iter()
        .enumerate()
        .map(|(i, &n)| random_triples::<Gf2p8>(n, 700 + i as u64))
        .collect();
    let cat = Concat::new(
        parts
            .iter()
            .map(|t| t as &dyn TripleSource<Gf2p64>)
            .collect(),
    );
    // The same triples in one source.
    let whole = {
        let mut w = random_triples::<Gf2p8>(0, 0);
        for t in &parts {
            for (a, b) in [(&mut w.x, &t.x), (&mut w.y, &t.y), (&mut w.z, &t.z)] {
                a.first.extend_from_slice(&b.first);
                a.second.extend_from_slice(&b.second);
            }
        }
        w
    };
    let len = TripleSource::len(&whole);
    assert_eq!(cat.len(), len);
    let starts = [0usize, 1, 36, 37, 40, 41, 42, 100, 141, 142, 143];
    for &start in &starts {
        for k in [0usize, 1, 3, 5, 6, 64, 110, 150] {
            let mut a = LiftedTriples::zeros(k);
            let mut b = LiftedTriples::zeros(k);
            cat.lift(start, Parts::Xyz, &mut a);
            whole.lift(start, Parts::Xyz, &mut b);
            assert!(
                a.x == b.x && a.y == b.y && a.z == b.z,
                "lift at {start}, {k}"
            );
            if start + k <= len {
                for part in 0..6 {
                    let (mut a, mut b) = (vec![0u8; k], vec![0u8; k]);
                    assert!(cat.load_bytes(part, start, &mut a));
                    assert!(whole.load_bytes(part, start, &mut b));
                    assert_eq!(a, b, "bytes at {start}, {k}");
                    let (mut lo, mut hi) = (vec![1u8; k], vec![1u8; k]);
                    assert!(cat.load_words(part, start, &mut lo, &mut hi));
                    assert_eq!((lo, hi), (b, vec![0u8; k]), "words at {start}, {k}");
                }
            }
            if k == 0 {
                continue;
            }
            let inside = {
                let mut base = 0;
                lens.iter().any(|&n| {
                    let hit = n > 0 && start >= base && start + k <= base + n;
                    base += n;
                    hit
                })
            };
            let direct = cat.bytes_in_place(0, start, k);
            assert_eq!(direct.is_some(), inside, "in place at {start}, {k}");
            if let Some(d) = direct {
                assert_eq!(d, &Gf2p8::slice_as_bytes(&whole.x.first)[start..start + k]);
            }
        }
    }
}

/// `GF(2^8)` triples served through [`ByteRows::load`], and the first component's parts
/// also in place ([`ByteRows::bytes`]).
struct LoadedBytes(Triples<triskele_field::Gf2p8>);

impl ByteRows for LoadedBytes {
    fn len(&self) -> usize {
        self.0.len()
    }
    fn load(&self, part: usize, start: usize, out: &mut [u8]) {
        let v = super::source_parts(&self.0)[part];
        for (o, x) in out.iter_mut().zip(&v[start..]) {
            *o = x.0;
        }
    }
    fn bytes(&self, part: usize, start: usize, len: usize) -> Option<&[u8]> {
        let v = super::source_parts(&self.0)[part];
        part.is_multiple_of(2)
            .then(|| triskele_field::Gf2p8::slice_as_bytes(&v[start..start + len]))
    }
}

/// A [`ByteSource`] lifts by `E_8`, takes the byte paths and gives the transcript of the
/// same triples recorded over `GF(2^8)` (and of lifting them), alone, concatenated with other
/// sources and in a window, with zeros past its end.
#[test]
fn byte_sources_match_recorded_bytes() {
    for (i, n) in [3usize, 600, 2049, 4097, 20_000].into_iter().enumerate() {
        let seed = 70 + i as u64;
        let t = random_triples::<triskele_field::Gf2p8>(n, seed);
        let src = ByteSource(LoadedBytes(t.clone()));
        assert_eq!(TripleSource::len(&src), n);
        let (a, b) = (LiftedTriples::zeros(n + 5), LiftedTriples::zeros(n + 5));
        let [mut a, mut b] = [a, b];
        t.lift(0, Parts::Xyz, &mut a);
        src.lift(0, Parts::Xyz, &mut b);
        assert!(a.x == b.x && a.y == b.y && a.z == b.z, "n = {n}");
        let (mut y1, mut y2) = (vec![9u8; n + 3], vec![9u8; n + 3]);
        assert!(src.y_bytes(1, [&mut y1, &mut y2]));
        assert!(y1[..n - 1]
            .iter()
            .zip(&t.y.first[1..])
            .all(|(a, b)| *a == b.0));
        assert!(y2[..n - 1]
            .iter()
            .zip(&t.y.second[1..])
            .all(|(a, b)| *a == b.0));
        assert!(y1[n - 1..].iter().chain(&y2[n - 1..]).all(|b| *b == 0));
        // In place where the rows have it, inside the source only.
        assert_eq!(src.bytes_in_place(2, 1, n - 1), Some(&y1[..n - 1]));
        assert_eq!(src.bytes_in_place(3, 1, n - 1), None);
        assert_eq!(src.bytes_in_place(2, 1, n), None);
        if n >= 600 {
            let c: Vec<Gf2p64> = random_coins(200, seed);
            let k = [
                Coeffs::plain_slice(&c[..100]),
                Coeffs::plain_slice(&c[100..]),
            ];
            let sums = src.pair_sums(0, Some(n - 100), k);
            assert!(sums.is_some());
            assert_eq!(sums, t.pair_sums(0, Some(n - 100), k));
        }
        let mut key = [0u8; 16];
        key[..8].copy_from_slice(&seed.to_le_bytes());
        let coins = random_coins::<Gf2p64>(64, seed ^ 1);
        let want = local_transcript(&LiftOnly(&t), &key, &coins);
        assert!(want == local_transcript(&src, &key, &coins), "n = {n}");
        assert!(want == naive_transcript(&src, &key, &coins), "n = {n}");
        let g = random_triples::<Gf2p64>(n / 3 + 1, seed ^ 7);
        let want = local_transcript(&Concat::new(vec![&LiftOnly(&t), &g, &t]), &key, &coins);
        let cat = Concat::new(vec![&src, &g, &t]);
        assert!(want == local_transcript(&cat, &key, &coins), "n = {n}");
        // Byte sources only: pairs whose halves lie in different parts (and ranges across
        // parts) take the byte path over the concatenation.
        let bytes_only = Concat::new(vec![&src, &t]);
        assert!(bytes_only.y_bytes(0, [&mut [], &mut []]));
        let lt = LiftOnly(&t);
        let lifted = Concat::new(vec![&lt, &lt]);
        assert!(!lifted.load_bytes(0, 0, &mut []));
        if n >= 600 {
            // The same as one recorded store of both parts' triples (single-source byte path).
            let twice = |v: &RssVec<triskele_field::Gf2p8>| RssVec {
                first: [&v.first[..], &v.first[..]].concat(),
                second: [&v.second[..], &v.second[..]].concat(),
            };
            let tt = Triples {
                x: twice(&t.x),
                y: twice(&t.y),
                z: twice(&t.z),
            };
            let c: Vec<Gf2p64> = random_coins(200, seed);
            let k = [
                Coeffs::plain_slice(&c[..100]),
                Coeffs::plain_slice(&c[100..]),
            ];
            for (lo, hi) in [(0, n), (n - 50, n + 10), (10, n - 50)] {
                let sums = bytes_only.pair_sums(lo, Some(hi), k);
                assert!(sums.is_some(), "lo {lo}, hi {hi}");
                assert_eq!(sums, tt.pair_sums(lo, Some(hi), k), "lo {lo}, hi {hi}");
                let fold = |src: &dyn TripleSource<Gf2p64>| {
                    let mut out: [Vec<Gf2p64>; 4] = Default::default();
                    for o in &mut out {
                        o.resize(100, Gf2p64(0x55));
                    }
                    let o = out.each_mut().map(|o| &mut o[..]);
                    assert!(src.fold_pairs(lo, Some(hi), k, c[7], o));
                    out
                };
                assert!(fold(&bytes_only) == fold(&tt), "lo {lo}, hi {hi}");
            }
        }
        let want = local_transcript(&lifted, &key, &coins);
        assert!(
            want == local_transcript(&bytes_only, &key, &coins),
            "n = {n}"
        );
        assert!(
            want == naive_transcript(&bytes_only, &key, &coins),
            "n = {n}"
        );
        let w = windows(&bytes_only, Some(n.div_ceil(2)));
        let pw = windows(&lifted, Some(n.div_ceil(2)));
        for (w, pw) in w.iter().zip(&pw) {
            assert!(local_transcript(w, &key, &coins) == local_transcript(pw, &key, &coins));
        }
    }
}

/// [`paired_runs`] over byte sources (recorded, [`ByteSource`]) and sources without a byte
/// form (lifting only, and lifting with `lift_y`): every triple in exactly one piece, level
/// 1's pairs of one kind except next to the groups' cuts, and each run's transcript that of
/// lifting the same pieces (so the byte paths taken over concatenations with other parts,
/// and the folded `y` recomputed per range, give the same numbers), also in windows.
#[test]
fn paired_runs_join_pairs_of_one_kind() {
    let seed = 77u64;
    let t8 = random_triples::<triskele_field::Gf2p8>(5000, seed);
    let t4 = random_triples::<triskele_field::Gf2p4>(3001, seed ^ 1);
    let bs = ByteSource(LoadedBytes(random_triples(2500, seed ^ 2)));
    let g64 = random_triples::<Gf2p64>(1800, seed ^ 3);
    let g8 = random_triples::<triskele_field::Gf2p8>(2200, seed ^ 4);
    let (lo64, re8) = (LiftOnly(&g64), Relift(&g8));
    let parts: Vec<&dyn TripleSource<Gf2p64>> = vec![&t8, &t4, &lo64, &bs, &re8];
    let kinds = [true, true, false, true, false];
    let cat = Concat::new(parts.clone());
    let mut key = [0u8; 16];
    key[..8].copy_from_slice(&seed.to_le_bytes());
    let coins = random_coins::<Gf2p64>(64, seed ^ 5);
    for max in [None, Some(6000), Some(2000)] {
        let runs = paired_runs(&cat, max);
        let mut seen: Vec<Vec<bool>> = parts.iter().map(|p| vec![false; p.len()]).collect();
        for pieces in &runs {
            // Which part a piece is from, and the kind of every position of the run.
            let mut kind_at = Vec::new();
            for w in pieces {
                let i = parts
                    .iter()
                    .position(|p| core::ptr::addr_eq(*p, w.src))
                    .expect("a piece of one of the parts");
                for (k, e) in seen[i][w.off..w.off + w.len].iter_mut().enumerate() {
                    assert!(!*e, "part {i} entry {} twice", w.off + k);
                    *e = true;
                }
                kind_at.extend(core::iter::repeat_n(kinds[i], w.len));
            }
            let len = kind_at.len();
            let h = first_half(len, len.next_power_of_two());
            let mixed = (0..len.saturating_sub(h))
                .filter(|&j| kind_at[j] != kind_at[j + h])
                .count();
            assert!(mixed <= 2, "max {max:?}: {mixed} mixed pairs of {len}");
            let refs: Vec<&dyn TripleSource<Gf2p64>> = pieces
                .iter()
                .map(|w| w as &dyn TripleSource<Gf2p64>)
                .collect();
            let lifted: Vec<LiftOnly<'_, Gf2p64>> = pieces.iter().map(|w| LiftOnly(w)).collect();
            let lifted: Vec<&dyn TripleSource<Gf2p64>> = lifted
                .iter()
                .map(|w| w as &dyn TripleSource<Gf2p64>)
                .collect();
            let run = Concat::new(refs);
            let want = local_transcript(&Concat::new(lifted), &key, &coins);
            assert!(want == local_transcript(&run, &key, &coins), "max {max:?}");
            assert!(want == naive_transcript(&run, &key, &coins), "max {max:?}");
        }
        assert!(
            seen.iter().flatten().all(|s| *s),
            "max {max:?}: an entry in no piece"
        );
    }
    // Without sources of both kinds the order is the parts' own.
    let bytes_only = Concat::new(vec![&t8 as &dyn TripleSource<Gf2p64>, &bs]);
    let runs = paired_runs(&bytes_only, None);
    assert_eq!(runs.len(), 1);
    let offsets: Vec<(usize, usize)> = runs[0].iter().map(|w| (w.off, w.len)).collect();
    assert_eq!(offsets, vec![(0, t8.len()), (0, bs.len())]);
}

/// Sources of several kinds go into runs of their own kind (packed bits, bytes, others, each
/// in the sources' order) once every kind has `min` triples; with one kind, or a kind below
/// `min`, all stay in one group in their order. The kind of each group shows in what the k-ary
/// level makes of it: blocks of 32 for bits only and bytes only.
#[test]
fn kind_groups_split_by_kind_when_every_kind_is_large() {
    let bits = random_triples::<triskele_field::Bits16>(1500, 1);
    let t8 = random_triples::<triskele_field::Gf2p8>(900, 2);
    let t4 = random_triples::<triskele_field::Gf2p4>(700, 3);
    let g64 = random_triples::<Gf2p64>(1200, 4);
    let srcs: Vec<&dyn TripleSource<Gf2p64>> = vec![&t8, &g64, &bits, &t4];
    let ptrs = |g: &[&dyn TripleSource<Gf2p64>]| -> Vec<*const ()> {
        g.iter().map(|s| *s as *const _ as *const ()).collect()
    };
    assert_eq!(bits.len(), 1500);
    let groups = kind_groups(srcs.clone(), 1200);
    assert_eq!(groups.len(), 3);
    assert_eq!(ptrs(&groups[0]), ptrs(&[&bits]));
    assert_eq!(ptrs(&groups[1]), ptrs(&[&t8, &t4]));
    assert_eq!(ptrs(&groups[2]), ptrs(&[&g64]));
    let arities: Vec<usize> = groups
        .iter()
        .map(|g| octal::arity(&Concat::new(g.clone())))
        .collect();
    assert_eq!(arities, [32, 32, 8]);
    // The others have 1200 triples: one more and they are too few.
    for min in [1201, usize::MAX] {
        let one = kind_groups(srcs.clone(), min);
        assert_eq!(one.len(), 1, "min {min}");
        assert_eq!(ptrs(&one[0]), ptrs(&srcs));
    }
    // One kind only: one group, whatever `min`.
    let bytes: Vec<&dyn TripleSource<Gf2p64>> = vec![&t4, &t8];
    for min in [0, 1] {
        let one = kind_groups(bytes.clone(), min);
        assert_eq!((one.len(), ptrs(&one[0])), (1, ptrs(&bytes)));
    }
    assert!(kind_groups(Vec::<&dyn TripleSource<Gf2p64>>::new(), 0)[0].is_empty());
}

/// Random (mostly wrong) triples as a source.
fn random_triples<F: Field + Random>(n: usize, seed: u64) -> Triples<F> {
    use rand::SeedableRng;
    let mut rng = rand_chacha::ChaCha20Rng::seed_from_u64(seed);
    let mut v = || {
        let mut a = vec![F::ZERO; n];
        F::fill_random(&mut rng, &mut a);
        a
    };
    Triples {
        x: RssVec {
            first: v(),
            second: v(),
        },
        y: RssVec {
            first: v(),
            second: v(),
        },
        z: RssVec {
            first: v(),
            second: v(),
        },
    }
}

fn random_coins<V: VerifyField>(k: usize, seed: u64) -> Vec<V> {
    use rand::SeedableRng;
    let mut rng = rand_chacha::ChaCha20Rng::seed_from_u64(seed);
    (0..k).map(|_| V::random(&mut rng)).collect()
}

/// The streamed implementation and the naive reference agree on every level's local
/// sums and on the final folded triple, for many lengths, every source field, sources
/// concatenated across work-block boundaries, and `F_p`.
#[test]
fn streamed_levels_match_the_naive_reference() {
    fn check<V: VerifyField>(src: &dyn TripleSource<V>, seed: u64) {
        let mut key = [0u8; 16];
        key[..8].copy_from_slice(&seed.to_le_bytes());
        let coins = random_coins::<V>(64, seed ^ 0x5eed);
        let want = naive_transcript(src, &key, &coins);
        let got = local_transcript(src, &key, &coins);
        assert!(want == got, "length {}", src.len());
    }
    for (i, n) in [
        2usize,
        3,
        5,
        17,
        1000,
        2047,
        2048,
        2049,
        4097,
        6144,
        10_241,
        70_001,
        1 << 16,
    ]
    .into_iter()
    .enumerate()
    {
        let seed = 1000 + i as u64;
        check::<Gf2p64>(&random_triples::<Gf2p64>(n, seed), seed);
        check::<Gf2p64>(&random_triples::<triskele_field::Gf2p8>(n, seed), seed);
        if n < 5000 {
            check::<Fp>(&random_triples::<Fp>(n, seed), seed);
        }
    }
    let g8 = random_triples::<triskele_field::Gf2p8>(3001, 1);
    let g4 = random_triples::<triskele_field::Gf2p4>(1500, 2);
    let bits = random_triples::<triskele_field::Bits16>(333, 3);
    let g64 = random_triples::<Gf2p64>(2100, 4);
    let tower = random_triples::<triskele_field::Gf4Tower>(5, 5);
    let cat = Concat::new(vec![&g8, &g4, &bits, &g64, &tower]);
    check::<Gf2p64>(&cat, 7);
    // Byte fields only: `y` is recomputed from the parts' bytes across their boundaries.
    let cat = Concat::new(vec![&g8, &tower, &g4, &tower, &g8]);
    assert!(cat.y_bytes(0, [&mut [], &mut []]));
    check::<Gf2p64>(&cat, 9);
    check::<Gf2p64>(&random_triples::<triskele_field::Bits16>(1001, 8), 8);
    // Windows (a split run): the streamed check of a window equals the naive check of its
    // triples copied out, for byte, in-place and concatenated sources, windows that end
    // before the source and windows that cross its parts.
    fn copied<F: Field>(t: &Triples<F>, off: usize, len: usize) -> Triples<F> {
        let cut = |v: &RssVec<F>| RssVec {
            first: v.first[off..off + len].to_vec(),
            second: v.second[off..off + len].to_vec(),
        };
        Triples {
            x: cut(&t.x),
            y: cut(&t.y),
            z: cut(&t.z),
        }
    }
    fn same_window<V: VerifyField>(w: &Window<'_, V>, copy: &dyn TripleSource<V>, seed: u64) {
        let key = [seed as u8; 16];
        let coins = random_coins::<V>(64, seed);
        assert!(naive_transcript(w, &key, &coins) == naive_transcript(copy, &key, &coins));
        check::<V>(w, seed);
    }
    let t8 = random_triples::<triskele_field::Gf2p8>(10_000, 11);
    let t64 = random_triples::<Gf2p64>(10_000, 12);
    for (off, len) in [(0, 4097), (4097, 4097), (8194, 1806), (1000, 2001)] {
        same_window(&Window { src: &t8, off, len }, &copied(&t8, off, len), 13);
        same_window(
            &Window {
                src: &t64,
                off,
                len,
            },
            &copied(&t64, off, len),
            14,
        );
    }
    let cat = Concat::new(vec![&g8, &g4, &g64]);
    for (off, len) in [(2000, 2500), (4400, 3000)] {
        check::<Gf2p64>(
            &Window {
                src: &cat,
                off,
                len,
            },
            15,
        );
    }
    let cuts: Vec<(usize, usize)> = windows(&t8 as &dyn TripleSource<Gf2p64>, Some(4000))
        .iter()
        .map(|w| (w.off, w.len))
        .collect();
    assert_eq!(cuts, [(0, 3336), (3336, 3336), (6672, 3328)]);
    let cuts: Vec<usize> = windows(&t8 as &dyn TripleSource<Gf2p64>, Some(5000))
        .iter()
        .map(|w| w.len)
        .collect();
    assert_eq!(cuts, [5000, 5000]);
    assert_eq!(windows(&t8 as &dyn TripleSource<Gf2p64>, None).len(), 1);
    assert_eq!(
        windows(&t8 as &dyn TripleSource<Gf2p64>, Some(20_000)).len(),
        1
    );
    // Chained `F_p` triples: the streamed check (which forms `(x + r y, y, z + r x)` on
    // the fly) against the naive one, whose transcript equals that of the combined triples
    // stored as such; alone, and after plain triples.
    for (i, n) in [2usize, 3, 1000, 2048, 2049, 4097].into_iter().enumerate() {
        let seed = 2000 + i as u64;
        let t = random_triples::<Fp>(n, seed);
        let r = random_coins::<Fp>(1, seed)[0];
        let comb =
            |a: &[Fp], b: &[Fp]| -> Vec<Fp> { a.iter().zip(b).map(|(&a, &b)| a + r * b).collect() };
        let combined = Triples {
            x: RssVec {
                first: comb(&t.x.first, &t.y.first),
                second: comb(&t.x.second, &t.y.second),
            },
            y: t.y.clone(),
            z: RssVec {
                first: comb(&t.z.first, &t.x.first),
                second: comb(&t.z.second, &t.x.second),
            },
        };
        let chained = Chained { t, r };
        let key = [seed as u8; 16];
        let coins = random_coins::<Fp>(64, seed);
        assert!(
            naive_transcript(&chained, &key, &coins) == naive_transcript(&combined, &key, &coins),
            "length {n}"
        );
        check::<Fp>(&chained, seed);
        let plain = random_triples::<Fp>(777, seed + 1);
        check::<Fp>(&Concat::new(vec![&plain, &chained]), seed);
        check::<Fp>(&Concat::new(vec![&chained, &plain]), seed);
    }
}

fn three<T: Send>(f: impl Fn(Party<crate::Malicious>) -> T + Sync) -> [T; 3] {
    let nets = triskele_net::in_memory(&triskele_net::NetOptions::default());
    let f = &f;
    std::thread::scope(|s| {
        let hs: Vec<_> = nets
            .into_iter()
            .map(|n| s.spawn(move || f(Party::setup(n).expect("setup"))))
            .collect();
        let v: Vec<T> = hs.into_iter().map(|h| h.join().expect("join")).collect();
        v.try_into().ok().expect("three")
    })
}

/// Products over the run-time prime field are recorded by `mul` and pass the check for
/// several moduli (also a tiny one, with its many seed coins); a planted error aborts.
#[test]
fn fp_rt_products_verify_under_each_modulus() {
    use rand::SeedableRng;
    for p in [
        5u128,
        (1 << 61) - 1,
        (1 << 64) - 59,
        Fp::MODULUS,
        u128::MAX - 158,
    ] {
        FpRt::with_modulus(p, || {
            assert_eq!(FpRt::log2_size(), p.ilog2());
            let res = three(|mut party| {
                let x = party.random_rss::<FpRt>(300);
                let y = party.random_rss::<FpRt>(300);
                let z = party.mul(&x, &y)?;
                assert_eq!(party.model().recorder().fp_rt.len(), 300);
                party.verify_recorded()?;
                let xo = party.open_output(&x)?;
                let yo = party.open_output(&y)?;
                let zo = party.open_output(&z)?;
                Ok::<_, EngineError>((xo, yo, zo))
            });
            for r in res {
                let (xo, yo, zo) = r.expect("honest run");
                for k in 0..300 {
                    assert_eq!(zo[k], xo[k] * yo[k], "p = {p}");
                }
            }
            if p < 1 << 60 {
                return;
            }
            let mut rng = rand_chacha::ChaCha20Rng::seed_from_u64(p as u64);
            let x: Vec<FpRt> = (0..1000).map(|_| FpRt::random(&mut rng)).collect();
            let y: Vec<FpRt> = (0..1000).map(|_| FpRt::random(&mut rng)).collect();
            let mut z: Vec<FpRt> = x.iter().zip(&y).map(|(a, b)| *a * *b).collect();
            z[617] += FpRt::ONE;
            let (xs, ys, zs) = (
                triskele_share::deal(&x, &mut rng),
                triskele_share::deal(&y, &mut rng),
                triskele_share::deal(&z, &mut rng),
            );
            let res = three(|mut party| {
                let i = party.id().index();
                party.model().record(&xs[i], &ys[i], &zs[i]);
                party.verify_recorded()
            });
            for r in res {
                assert!(matches!(r, Err(EngineError::Abort(_))), "p = {p}: {r:?}");
            }
        })
        .expect("a prime");
    }
}

/// The k-ary first level (modules `octal` and `wide`) computed naively from the lifted
/// triples: the sums `[D_{0,1}, D_{0,2} .. D_{k-1,2}, Q(α_k) .. Q(α_{2k-2})]` (`D_{m,t} =
/// Σ_J a_J z_{J,m,t}`, then this party's local products at the extra nodes) and the folded
/// `[x'_1, x'_2, y'_1, y'_2]` for the coin `s`, from the definitions (blocks of `k` =
/// [`octal::arity`] entries placed by [`octal::entry`], block coefficients `a_J`, `F_J`
/// interpolates the entries at the run's data nodes ([`octal::run_nodes`]), `Q = Σ a_J F_J
/// G_J`).
fn naive_octal(
    src: &dyn TripleSource<Gf2p64>,
    seed: &[u8; 16],
    s: Gf2p64,
) -> (Vec<Gf2p64>, [Vec<Gf2p64>; 4]) {
    let k = octal::arity(src);
    let node_values = octal::run_nodes(src);
    let nodes = 2 * k - 1;
    let total = src.len();
    let b = total.div_ceil(k);
    let mut t = LiftedTriples::zeros(total);
    src.lift(0, Parts::Xyz, &mut t);
    let mut a = vec![Gf2p64::ZERO; b];
    for (c, ch) in a.chunks_mut(COEFF_CHUNK).enumerate() {
        prg_coefficients(seed, c * COEFF_CHUNK, ch);
    }
    let node = |n: usize| node_values[n];
    // ℓ_m(v) for the data nodes 0..k.
    let basis = |m: usize, v: Gf2p64| {
        (0..k).filter(|&i| i != m).fold(Gf2p64::ONE, |acc, i| {
            acc * (v - node(i)) * (node(m) - node(i)).inverse()
        })
    };
    let get = |v: &Vec<Gf2p64>, i: usize| v.get(i).copied().unwrap_or(Gf2p64::ZERO);
    let parts = [
        &t.x.first,
        &t.x.second,
        &t.y.first,
        &t.y.second,
        &t.z.first,
        &t.z.second,
    ];
    // ℓ_m at the nodes and at s (index `nodes`).
    let table: Vec<Vec<Gf2p64>> = (0..=nodes)
        .map(|n| {
            let v = if n < nodes { node(n) } else { s };
            (0..k).map(|m| basis(m, v)).collect()
        })
        .collect();
    // F of part p of block j at node n (or at s for n = nodes).
    let at = |p: usize, j: usize, n: usize| {
        (0..k).fold(Gf2p64::ZERO, |acc, m| {
            acc + table[n][m] * get(parts[p], octal::entry(src, j, m))
        })
    };
    let mut out = vec![Gf2p64::ZERO; nodes + k];
    for (j, aj) in a.iter().enumerate() {
        for m in 0..k {
            out[2 * m] += *aj * get(parts[4], octal::entry(src, j, m));
            out[2 * m + 1] += *aj * get(parts[5], octal::entry(src, j, m));
        }
        for (e, o) in out[2 * k..].iter_mut().enumerate() {
            let f = [0, 1, 2, 3].map(|p| at(p, j, k + e));
            *o += *aj * (f[0] * f[2] + f[0] * f[3] + f[1] * f[2]);
        }
    }
    let folded = [0, 1, 2, 3].map(|p| {
        (0..b)
            .map(|j| {
                let v = at(p, j, nodes);
                if p < 2 {
                    a[j] * v
                } else {
                    v
                }
            })
            .collect()
    });
    (out, folded)
}

/// The k-ary first level's sums and fold of `src` equal [`naive_octal`] (its output vectors
/// filled with other values first: the level writes every element).
fn check_octal(src: &dyn TripleSource<Gf2p64>, seed: u64) {
    let nodes = Gf2p64::octal_nodes(src).expect("takes the level");
    assert_eq!(nodes.len(), 2 * octal::arity(src) - 1);
    check_octal_passes(src, seed);
}

/// [`check_octal`] without asking whether a run of `src` takes the level (also for runs too
/// short to take it, whose fold is one sub-block).
fn check_octal_passes(src: &dyn TripleSource<Gf2p64>, seed: u64) {
    let k = octal::arity(src);
    let mut key = [0u8; 16];
    key[..8].copy_from_slice(&seed.to_le_bytes());
    let s = random_coins::<Gf2p64>(1, seed)[0];
    let (want_sums, want_fold) = naive_octal(src, &key, s);
    let b = src.len().div_ceil(k);
    let sums = Gf2p64::octal_sums(src, &key, b).expect("bytes or words");
    // The data nodes count at s only: Σ_m λ_m D_{m,t}, from the sums' D_m and the part that
    // the fold forms for the blocks that leave them to it.
    let nodes = octal::run_nodes(src);
    let lambda = super::lagrange_slice(&nodes, s);
    let at_s =
        |d: &[Gf2p64], t: usize| (0..k).fold(Gf2p64::ZERO, |acc, m| acc + lambda[m] * d[2 * m + t]);
    let want_data: [Gf2p64; 2] = core::array::from_fn(|t| at_s(&want_sums, t));
    if !src.has_bits() || wide::applies(src) {
        // Runs without bits, and runs of bits only, leave every D_m to the fold.
        assert!(
            sums[..2 * k].iter().all(|v| *v == Gf2p64::ZERO),
            "data nodes left to the fold, length {}",
            src.len()
        );
    }
    assert!(
        sums[2 * k..] == want_sums[2 * k..],
        "extra nodes, length {}",
        src.len()
    );
    let mut out: [Vec<Gf2p64>; 4] =
        core::array::from_fn(|t| random_coins::<Gf2p64>(b, seed + 2 + t as u64));
    let half = super::fold::folded_half(b);
    // On this process's pool and on one thread, whose jobs hold several sub-blocks (the last
    // one's upper half then ends before its lower half does).
    let one = rayon::ThreadPoolBuilder::new()
        .num_threads(1)
        .build()
        .expect("a pool of one thread");
    for single in [false, true] {
        let mut fold = || {
            Gf2p64::octal_fold(
                src,
                &key,
                s,
                &lambda,
                out.each_mut().map(|v| &mut v[..]),
                half,
            )
            .expect("bytes or words")
        };
        let (halving, data) = if single { one.install(fold) } else { fold() };
        assert!(out == want_fold, "fold, length {}", src.len());
        let got: [Gf2p64; 2] = core::array::from_fn(|t| at_s(&sums, t) + data[t]);
        assert_eq!(got, want_data, "data nodes, length {}", src.len());
        // The sums of the next halving, formed by the fold, are those of the folded vectors.
        let want = super::fold::level_sums(out.each_ref().map(|v| &v[..]), half, b);
        assert_eq!(
            halving,
            [want.h1, want.hu],
            "halving sums, length {}",
            src.len()
        );
    }
}

/// The passes of the k-ary level on runs of at most one sub-block of blocks (shorter than the
/// runs that take it), where the first halving's half is not a whole sub-block: the fold folds
/// its one chunk and then sums it.
#[test]
fn octal_passes_of_one_sub_block_match_the_naive_reference() {
    use super::coeffs::SUB;
    for (n, seed) in [(5_003, 51), (8 * SUB, 52)] {
        let g8 = random_triples::<triskele_field::Gf2p8>(n, seed);
        assert!(!super::fold::folded_half(n.div_ceil(8)).is_multiple_of(SUB));
        check_octal_passes(&g8, seed);
    }
    let words = random_words(3_001, 53);
    check_octal_passes(&words, 53);
    let bits = random_triples::<triskele_field::Bits16>(400, 54);
    assert_eq!(octal::arity(&bits), 32);
    check_octal_passes(&bits, 54);
}

/// Four relations per block of [`SHARED_ALIGN`] instances (triple `4 q b + k q + j` is
/// relation `k` of instance `q b + j`, `q` = [`SHARED_ALIGN`]), laid out as
/// mal-chida-rec-check's chain: relation 2 has the `x` of relation 1 and the `y` of relation
/// 0, and says so ([`ByteRows::shared_part`]). With `lie`, relation 2's parts are values of
/// their own although it still says they repeat.
struct SharedRows {
    /// Part `p` of relation `k`, instance `i`: `rows[k][p][i]`.
    rows: Vec<[Vec<u8>; 6]>,
    instances: usize,
}

impl SharedRows {
    const Q: usize = SHARED_ALIGN;

    fn new(blocks: usize, lie: bool, seed: u64) -> Self {
        use rand::{RngCore, SeedableRng};
        let mut rng = rand_chacha::ChaCha20Rng::seed_from_u64(seed);
        let instances = blocks * Self::Q;
        let mut random = || {
            let mut v = vec![0u8; instances];
            rng.fill_bytes(&mut v);
            v
        };
        let mut rows: Vec<[Vec<u8>; 6]> =
            (0..4).map(|_| core::array::from_fn(|_| random())).collect();
        if !lie {
            for p in 0..2 {
                rows[2][p] = rows[1][p].clone();
                rows[2][2 + p] = rows[0][2 + p].clone();
            }
        }
        SharedRows { rows, instances }
    }

    /// Relation, instance and offset in its run of triple `t`.
    fn at(t: usize) -> (usize, usize, usize) {
        let (b, r) = (t / (4 * Self::Q), t % (4 * Self::Q));
        (r / Self::Q, b * Self::Q + r % Self::Q, r % Self::Q)
    }
}

impl ByteRows for SharedRows {
    fn len(&self) -> usize {
        4 * self.instances
    }
    fn load(&self, part: usize, start: usize, out: &mut [u8]) {
        for (i, o) in out.iter_mut().enumerate() {
            let (k, j, _) = Self::at(start + i);
            *o = self.rows[k][part][j];
        }
    }
    fn shared_part(&self, part: usize, start: usize, k: usize) -> Option<usize> {
        chain_repeats(Self::Q, part, start, k)
    }
}

/// The repeats of the layout of [`SharedRows`] and [`SharedBits`] (four relations per block
/// of `q` instances; relation 2 has the `x` of relation 1 and the `y` of relation 0): for
/// part `part` of the triples `start .. start + k`, the start of the first relation's run of
/// that factor over the same instances.
fn chain_repeats(q: usize, part: usize, start: usize, k: usize) -> Option<usize> {
    let (rel, off) = (start / q % 4, start % q);
    if off + k > q {
        return None;
    }
    let run = start - rel * q;
    match (part / 2, rel) {
        (0, 1 | 2) => Some(run + q),
        (1, 0 | 2) => Some(run),
        _ => None,
    }
}

/// A factor that relations share is worked once by the k-ary level with blocks of 32 (module
/// `wide_bytes`): where the source lays its relations out on the level's chunks and says
/// which factors repeat, the sums and the fold are those of the naive reference, also after a
/// source of one chunk (so that the shared ranges lie at an offset) and on one thread (a job
/// over several blocks of relations). They are not where the repeats are claimed but false,
/// so the level does take the repeated factor from the earlier chunk.
#[test]
fn shared_factors_are_worked_once() {
    let src = ByteSource(SharedRows::new(3, false, 91));
    assert!(wide_bytes::applies(&src));
    check_octal_passes(&src, 91);
    let before = random_triples::<triskele_field::Gf2p8>(SHARED_ALIGN, 92);
    check_octal_passes(&Concat::new(vec![&before, &src]), 93);
    let lie = ByteSource(SharedRows::new(2, true, 94));
    let caught = std::panic::catch_unwind(|| check_octal_passes(&lie, 94));
    assert!(
        caught.is_err(),
        "claimed repeats taken from the earlier chunks"
    );
}

/// Packed bits laid out as [`SharedRows`] with blocks of [`SHARED_BIT_ALIGN`] instances (a
/// sub-block of the level over bits): relation 2 has the `x` of relation 1 and the `y` of
/// relation 0, and says so ([`TripleSource::shared_part`]). With `lie`, relation 2's parts are
/// bits of their own although it still says they repeat.
struct SharedBits(Triples<triskele_field::Bits16>);

impl SharedBits {
    const Q: usize = SHARED_BIT_ALIGN;

    fn new(blocks: usize, lie: bool, seed: u64) -> Self {
        let words = Self::Q / 16;
        let mut t = random_triples::<triskele_field::Bits16>(4 * blocks * words, seed);
        if !lie {
            for b in 0..blocks {
                let run = |k: usize| (4 * b + k) * words..(4 * b + k + 1) * words;
                for v in [&mut t.x.first, &mut t.x.second] {
                    v.copy_within(run(1), run(2).start);
                }
                for v in [&mut t.y.first, &mut t.y.second] {
                    v.copy_within(run(0), run(2).start);
                }
            }
        }
        SharedBits(t)
    }
}

impl TripleSource<Gf2p64> for SharedBits {
    fn len(&self) -> usize {
        TripleSource::<Gf2p64>::len(&self.0)
    }
    fn lift(&self, start: usize, parts: Parts, out: &mut LiftedTriples<Gf2p64>) {
        self.0.lift(start, parts, out);
    }
    fn load_bytes(&self, part: usize, start: usize, out: &mut [u8]) -> bool {
        self.0.load_bytes(part, start, out)
    }
    fn has_bits(&self) -> bool {
        true
    }
    fn all_bits(&self) -> bool {
        true
    }
    fn load_bits(&self, part: usize, start: usize, len: usize, out: &mut [u8]) -> bool {
        self.0.load_bits(part, start, len, out)
    }
    fn bits_in_place(&self, part: usize, start: usize, n: usize) -> Option<&[u8]> {
        self.0.bits_in_place(part, start, n)
    }
    fn shared_part(&self, part: usize, start: usize, k: usize) -> Option<usize> {
        chain_repeats(Self::Q, part, start, k)
    }
}

/// A factor that relations of packed bits share is mapped to the extra nodes and folded once
/// by the level over bits (module `wide`): where the source lays its relations out on the
/// level's sub-blocks and says which factors repeat, the sums and the fold are those of the
/// naive reference, also after a source of one sub-block (the shared ranges at an offset) and
/// in a window of whole sub-blocks. They are not where the repeats are claimed but false, so
/// the level does take the repeated factor from the earlier sub-block.
#[test]
fn shared_bit_factors_are_worked_once() {
    let src = SharedBits::new(2, false, 101);
    assert!(wide::applies(&src));
    check_octal_passes(&src, 101);
    let before = random_triples::<triskele_field::Bits16>(SHARED_BIT_ALIGN / 16, 102);
    check_octal_passes(&Concat::new(vec![&before, &src]), 103);
    let window = Window {
        src: &src,
        off: 4 * SHARED_BIT_ALIGN,
        len: 4 * SHARED_BIT_ALIGN,
    };
    assert_eq!(
        window.shared_part(0, 2 * SHARED_BIT_ALIGN, SHARED_BIT_ALIGN),
        Some(SHARED_BIT_ALIGN)
    );
    check_octal_passes(&window, 104);
    let lie = SharedBits::new(1, true, 105);
    let caught = std::panic::catch_unwind(|| check_octal_passes(&lie, 105));
    assert!(
        caught.is_err(),
        "claimed repeats taken from the earlier sub-blocks"
    );
}

/// Windows of a long run start on whole sub-blocks of the level over bits where the run size
/// allows it, and are never longer than the run size.
#[test]
fn windows_start_on_whole_bit_sub_blocks() {
    let t = random_triples::<triskele_field::Bits16>(9 * SHARED_BIT_ALIGN / 16 + 3, 106);
    let src = &t as &dyn TripleSource<Gf2p64>;
    let total = src.len();
    for max in [
        SHARED_BIT_ALIGN,
        2 * SHARED_BIT_ALIGN + 77,
        4 * SHARED_BIT_ALIGN - 1,
    ] {
        let w = windows(src, Some(max));
        assert_eq!(w.iter().map(|w| w.len).sum::<usize>(), total);
        assert!(
            w.iter()
                .all(|w| w.len <= max && w.off % SHARED_BIT_ALIGN == 0),
            "{max}"
        );
        let fewest = total.div_ceil(max - max % SHARED_BIT_ALIGN);
        assert_eq!(w.len(), fewest, "{max}");
    }
    let w = windows(src, Some(SHARED_BIT_ALIGN - 8));
    assert!(w
        .iter()
        .all(|w| w.off % 8 == 0 && w.len <= SHARED_BIT_ALIGN - 8));
}

/// Byte triples that a [`ByteRows`] store serves as bytes of some source, saying that every
/// byte lies in the subfield of 16 elements of `GF(2^8)` where `claim` is set.
struct SubfieldRows<'a> {
    src: &'a dyn TripleSource<Gf2p64>,
    claim: bool,
}

impl ByteRows for SubfieldRows<'_> {
    fn len(&self) -> usize {
        self.src.len()
    }
    fn load(&self, part: usize, start: usize, out: &mut [u8]) {
        assert!(self.src.load_bytes(part, start, out));
    }
    fn in_subfield(&self, _part: usize, _start: usize, _len: usize) -> bool {
        self.claim
    }
}

/// The k-ary level with blocks of 32 embeds the rows of `GF(2^4)` records by tables of 16
/// entries where the source says they lie in the subfield (`TripleSource::bytes_in_subfield`):
/// its sums and fold are those of the naive reference, alone, after other bytes and in a
/// window. Where `GF(2^8)` bytes are claimed to lie there, the fold is wrong on the backends
/// that take that path (so the path is taken) and right on the others.
#[test]
fn subfield_rows_fold_as_the_naive_reference() {
    use triskele_field::{backend, Gf2p4, Gf2p8};
    let g4 = random_triples::<Gf2p4>(70_001, 95);
    let rows = ByteSource(SubfieldRows {
        src: &g4,
        claim: true,
    });
    assert!(wide_bytes::applies(&rows));
    assert!(rows.bytes_in_subfield(4, 0, rows.len()));
    assert!(!rows.bytes_in_subfield(4, 1, rows.len()), "past the end");
    check_octal_passes(&rows, 95);
    let g8 = random_triples::<Gf2p8>(3000, 96);
    let cat = Concat::new(vec![&g8, &rows]);
    assert!(!cat.bytes_in_subfield(0, 2999, 2) && cat.bytes_in_subfield(0, 3000, 9));
    check_octal_passes(&cat, 97);
    let window = Window {
        src: &rows,
        off: 5,
        len: 69_000,
    };
    assert!(window.bytes_in_subfield(1, 0, 69_000));
    check_octal_passes(&window, 98);
    let g8 = random_triples::<Gf2p8>(70_001, 99);
    let lie = ByteSource(SubfieldRows {
        src: &g8,
        claim: true,
    });
    let caught = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        check_octal_passes(&lie, 99)
    }));
    assert_eq!(
        caught.is_err(),
        backend::subfield_sums_preferred(backend::active()),
        "GF(2^8) rows claimed to lie in the subfield"
    );
}

/// The first halving after the k-ary level keeps the level count of `⌈B/2⌉` and starts its
/// upper half on a sub-block, for every `B` up to eight sub-blocks and some large ones.
#[test]
fn the_folded_half_keeps_the_level_count() {
    use super::coeffs::SUB;
    let log2 = |n: usize| n.next_power_of_two().trailing_zeros();
    for b in (2..8 * SUB + 3).chain([750_000, 3_000_001, 1 << 22, (1 << 22) + 1]) {
        let h = super::fold::folded_half(b);
        assert!(h <= b && h >= b.div_ceil(2), "B = {b}");
        assert_eq!(log2(h), log2(b.div_ceil(2)), "B = {b}");
        assert!(b <= SUB || h.is_multiple_of(SUB), "B = {b}");
    }
}

#[test]
fn octal_level_matches_the_naive_reference() {
    let check = check_octal;
    check(
        &random_triples::<triskele_field::Gf2p8>(OCTAL_MIN_LEN, 1),
        1,
    );
    check(&random_triples::<triskele_field::Gf2p8>(70_001, 2), 2);
    check(&random_triples::<triskele_field::Gf2p4>(65_541, 3), 3);
    check(&random_triples::<triskele_field::Bits16>(4_100, 4), 4);
    let g8 = random_triples::<triskele_field::Gf2p8>(30_001, 5);
    let tower = random_triples::<triskele_field::Gf4Tower>(999, 6);
    let g4 = random_triples::<triskele_field::Gf2p4>(40_000, 7);
    check(&Concat::new(vec![&g8, &tower, &g4]), 8);
    // Too short, or without bytes: the halving from level 1.
    let short = random_triples::<triskele_field::Gf2p8>(OCTAL_MIN_LEN - 1, 9);
    assert!(Gf2p64::octal_nodes(&short).is_none());
    let g64 = random_triples::<Gf2p64>(OCTAL_MIN_LEN, 10);
    assert!(Gf2p64::octal_nodes(&g64).is_none());
    assert!(Gf2p64::octal_nodes(&Concat::new(vec![&g8, &g64, &g4])).is_none());
}

/// The levels that fold by 32 give the same sums with the extra nodes' sums by inner
/// products (the path of the portable backend and of the GFNI backend with VBMI) as by the
/// run's column maps (AVX2): bytes, `GF(2^4)` records and packed bits, each checked against
/// the naive reference with the column maps turned off on this thread.
#[test]
fn levels_of_32_match_the_naive_reference_without_column_maps() {
    wide::NO_COLUMN_MAPS.with(|c| c.set(true));
    check_octal(&random_triples::<triskele_field::Gf2p8>(70_001, 41), 41);
    check_octal(&random_triples::<triskele_field::Gf2p4>(65_541, 42), 42);
    check_octal(&random_triples::<triskele_field::Bits16>(10_000, 43), 43);
    wide::NO_COLUMN_MAPS.with(|c| c.set(false));
}

/// `GF(2)` triples take the packed paths of the k-ary level: alone (blocks of 32, four packed
/// bytes each), through windows at offsets that are not multiples of 8 (the shifted load),
/// and next to bytes and words (blocks of 8, one packed byte; sub-blocks across sources take
/// the row path).
#[test]
fn octal_level_on_packed_bits_matches_the_naive_reference() {
    use triskele_field::Bits16;
    let bits = random_triples::<Bits16>(10_000, 31);
    assert!(bits.has_bits() && bits.all_bits() && octal::chunked(&bits));
    // Bits only: blocks of 32 (module `wide`).
    assert_eq!(octal::arity(&bits), 32);
    assert_eq!(octal::entry(&bits, 3, 5), 8 * 3 + 5);
    assert_eq!(
        octal::entry(&bits, 3, 9),
        8 * super::coeffs::SUB + 8 * 3 + 1
    );
    check_octal(&bits, 31);
    let w1 = Window {
        src: &bits,
        off: 3,
        len: 70_005,
    };
    let w2 = Window {
        src: &bits,
        off: 70_011,
        len: 80_000,
    };
    let mut out = [0u8; 2];
    assert!(w1.load_bits(2, 70_000, 16, &mut out) && out[0] < 32 && out[1] == 0);
    assert!(w1.bits_in_place(0, 5, 1).is_some() && w1.bits_in_place(0, 4, 1).is_none());
    // Windows of bits: still blocks of 32, loaded shifted and from two pieces.
    check_octal(&w1, 36);
    check_octal(&Concat::new(vec![&w2, &w1]), 37);
    // With bytes: blocks of 8, the packed path for the sub-blocks of bits only.
    let g8 = random_triples::<triskele_field::Gf2p8>(20_001, 32);
    let cat = Concat::new(vec![&w1, &g8, &w2]);
    assert_eq!(octal::arity(&cat), 8);
    assert_eq!(octal::entry(&cat, 3, 5), 8 * 3 + 5);
    assert!(!cat.load_bits(0, 70_000, 16, &mut out));
    assert!(octal::entry(&cat, 8_200, 0) != 8 * 8_200);
    check_octal(&cat, 33);
    let words = random_words(9_000, 34);
    check_octal(&Concat::new(vec![&w2, &words, &w1]), 35);
}

/// Triples in the tower `GF(2^16) = GF(2^8)[t]` given by their coordinates (`[lo, hi]` per
/// part `x_1, x_2, y_1, y_2, z_1, z_2`), lifted by `E_16`: a source with a word form and no
/// byte form, as the gf4p4 relations are.
#[derive(Clone)]
pub(super) struct Words(pub(super) [[Vec<u8>; 2]; 6]);

/// The maps of the two planes of `z` of [`Pairs`]: `T_0(hi) + T_1(lo)` and `T_2(lo)` (`T_i` the
/// gf4p4 tables, `φ_0(v) A^i`), so that `z = r_0 + r_1 A + r_2 A^2` is the planes `r_0 ‖ r_1`
/// and `r_2`.
const PAIR_Z: [triskele_field::embed::ByteEmbedding; 2] = {
    use triskele_field::embed::{ByteEmbedding, GF4P4_TABLES};
    [
        ByteEmbedding::from_nibble_tables(GF4P4_TABLES[1], GF4P4_TABLES[0]),
        ByteEmbedding::from_nibble_tables(GF4P4_TABLES[2], [0; 16]),
    ]
};

/// Relations in `GF(2^16)` given in the pair form ([`TripleSource::load_pairs`]): parts `x_1
/// .. y_2` as pair-form bytes, `z_1`, `z_2` as two planes each ([`PAIR_Z`]); lifted by those
/// maps, with the word form that implies and no byte form, as the gf4p4 relations are.
#[derive(Clone)]
pub(super) struct Pairs {
    xy: [Vec<u8>; 4],
    z: [[Vec<u8>; 2]; 2],
}

impl Pairs {
    /// The lift of part `part` of triple `k` (zero past the end).
    fn value(&self, part: usize, k: usize) -> Gf2p64 {
        use triskele_field::embed::PAIR_EMBEDDING;
        if part < 4 {
            return self.xy[part]
                .get(k)
                .map_or(Gf2p64::ZERO, |b| PAIR_EMBEDDING.apply(*b));
        }
        let [a, b] = &self.z[part - 4];
        match (a.get(k), b.get(k)) {
            (Some(a), Some(b)) => PAIR_Z[0].apply(*a) + PAIR_Z[1].apply(*b),
            _ => Gf2p64::ZERO,
        }
    }
}

impl TripleSource<Gf2p64> for Pairs {
    fn len(&self) -> usize {
        self.xy[0].len()
    }

    fn lift(&self, start: usize, parts: Parts, out: &mut LiftedTriples<Gf2p64>) {
        for (p, d) in out.parts_mut(parts).enumerate() {
            for (i, o) in d.iter_mut().enumerate() {
                *o = self.value(p, start + i);
            }
        }
    }

    fn load_words(&self, part: usize, start: usize, lo: &mut [u8], hi: &mut [u8]) -> bool {
        use triskele_field::embed::coords16;
        for (i, (l, h)) in lo.iter_mut().zip(hi.iter_mut()).enumerate() {
            (*l, *h) = coords16(self.value(part, start + i)).expect("a word");
        }
        true
    }

    fn load_pairs(&self, part: usize, start: usize, out: &mut [u8]) -> bool {
        let end = start.saturating_add(out.len());
        match self.xy.get(part).and_then(|v| v.get(start..end)) {
            Some(v) => {
                out.copy_from_slice(v);
                true
            }
            None => false,
        }
    }

    /// `x` in place (as the gf4p4 and norm relations store it), `y` loaded.
    fn pairs_in_place(&self, part: usize, start: usize, k: usize) -> Option<&[u8]> {
        (part < 2)
            .then(|| self.xy[part].get(start..start.checked_add(k)?))
            .flatten()
    }

    fn z_planes(&self, part: usize, start: usize, k: usize) -> Option<ZPlanes<'_>> {
        let [a, b] = self.z.get(part.checked_sub(4)?)?;
        let r = start..start.checked_add(k)?;
        Some([(&PAIR_Z[0], a.get(r.clone())?), (&PAIR_Z[1], b.get(r)?)])
    }
}

/// Random relations in the pair form (mostly wrong).
fn random_pairs(n: usize, seed: u64) -> Pairs {
    use rand::{RngCore, SeedableRng};
    let mut rng = rand_chacha::ChaCha20Rng::seed_from_u64(seed);
    let mut plane = || {
        let mut v = vec![0u8; n];
        rng.fill_bytes(&mut v);
        v
    };
    Pairs {
        xy: core::array::from_fn(|_| plane()),
        z: core::array::from_fn(|_| core::array::from_fn(|_| plane())),
    }
}

/// Dealt relations in the pair form (`z = x y` in `GF(2^16)`, plus `errors` added to the two
/// planes of `z`), each party's as a [`Pairs`] source (the pair form and the planes are
/// `GF(2)`-linear, so the planes are dealt apart).
fn dealt_pairs(n: usize, errors: &[(usize, (u8, u8))], seed: u64) -> [Pairs; 3] {
    use rand::{RngCore, SeedableRng};
    use triskele_field::embed::{pair_of_nibbles, PairSlot};
    use triskele_field::Gf2p4;
    let form = pair_of_nibbles(PairSlot::First, PairSlot::Second);
    // The nibbles (x_0, x_1) of each pair-form byte.
    let mut nibbles = [(0u8, 0u8); 256];
    for v in 0..=255u8 {
        nibbles[form.apply_byte(v) as usize] = (v >> 4, v & 15);
    }
    let mut rng = rand_chacha::ChaCha20Rng::seed_from_u64(seed);
    let mut plane = || {
        let mut v = vec![0u8; n];
        rng.fill_bytes(&mut v);
        v
    };
    let (x, y) = (plane(), plane());
    let (mut z0, mut z1) = (vec![0u8; n], vec![0u8; n]);
    for k in 0..n {
        let ((a0, a1), (b0, b1)) = (nibbles[x[k] as usize], nibbles[y[k] as usize]);
        let m = |u: u8, v: u8| (Gf2p4(u) * Gf2p4(v)).0;
        z0[k] = (m(a0, b0) << 4) | (m(a0, b1) ^ m(a1, b0));
        z1[k] = m(a1, b1);
    }
    add_errors([&mut z0, &mut z1], errors);
    let planes = [&x, &y, &z0, &z1].map(|p| deal_bytes(p, &mut rng));
    core::array::from_fn(|i| {
        let comp = |p: usize, second: bool| -> Vec<u8> {
            let r = &planes[p][i];
            let v = if second { &r.second } else { &r.first };
            v.iter().map(|g| g.0).collect()
        };
        Pairs {
            xy: core::array::from_fn(|part| comp(part / 2, part % 2 == 1)),
            z: core::array::from_fn(|t| [comp(2, t == 1), comp(3, t == 1)]),
        }
    })
}

impl TripleSource<Gf2p64> for Words {
    fn len(&self) -> usize {
        self.0[0][0].len()
    }

    fn lift(&self, start: usize, parts: Parts, out: &mut LiftedTriples<Gf2p64>) {
        use triskele_field::embed::e16;
        for (p, d) in out.parts_mut(parts).enumerate() {
            for (i, o) in d.iter_mut().enumerate() {
                let k = start + i;
                *o = match (self.0[p][0].get(k), self.0[p][1].get(k)) {
                    (Some(l), Some(h)) => e16(*l, *h),
                    _ => Gf2p64::ZERO,
                };
            }
        }
    }

    fn load_words(&self, part: usize, start: usize, lo: &mut [u8], hi: &mut [u8]) -> bool {
        let n = lo.len();
        lo.copy_from_slice(&self.0[part][0][start..start + n]);
        hi.copy_from_slice(&self.0[part][1][start..start + n]);
        true
    }
}

/// Random words (mostly wrong triples).
fn random_words(n: usize, seed: u64) -> Words {
    use rand::{RngCore, SeedableRng};
    let mut rng = rand_chacha::ChaCha20Rng::seed_from_u64(seed);
    Words(core::array::from_fn(|_| {
        core::array::from_fn(|_| {
            let mut v = vec![0u8; n];
            rng.fill_bytes(&mut v);
            v
        })
    }))
}

/// The word form of the k-ary first level (runs that mix bytes with `GF(2^16)` relations)
/// equals the naive reference, alone and concatenated with byte sources.
#[test]
fn octal_level_on_words_matches_the_naive_reference() {
    let check = check_octal;
    let w = random_words(OCTAL_MIN_LEN + 5, 21);
    assert!(!w.load_bytes(0, 0, &mut []));
    check(&w, 21);
    let g8 = random_triples::<triskele_field::Gf2p8>(30_001, 22);
    let w2 = random_words(20_000, 23);
    let g4 = random_triples::<triskele_field::Gf2p4>(20_003, 24);
    let cat = Concat::new(vec![&g8, &w2, &g4]);
    assert!(!cat.load_bytes(0, 0, &mut []));
    check(&cat, 25);
    // Without either form (a GF(2^64) part): no k-ary level.
    let g64 = random_triples::<Gf2p64>(100, 26);
    assert!(Gf2p64::octal_nodes(&Concat::new(vec![&g8, &w2, &g64, &g4])).is_none());
}

/// The pair form of the k-ary first level (relations in `GF(2^16)` whose `x` and `y` have
/// `A`-degree at most 1, as the gf4p4 relations) equals the naive reference: alone, next to
/// bytes, words and bits (sub-blocks across a source without the pair form take the words),
/// across sources that all have it (an entry across two or three of them: `x`, `y` pieced
/// together, `z` loaded as words), and in a window that starts inside a sub-block.
#[test]
fn octal_level_on_pairs_matches_the_naive_reference() {
    let check = check_octal;
    let p = random_pairs(OCTAL_MIN_LEN + 5, 41);
    assert!(!p.load_bytes(0, 0, &mut []) && p.load_pairs(0, 0, &mut []));
    check(&p, 41);
    let g8 = random_triples::<triskele_field::Gf2p8>(30_001, 42);
    let p2 = random_pairs(20_000, 43);
    let w = random_words(10_000, 44);
    let bits = random_triples::<triskele_field::Bits16>(600, 45);
    check(&Concat::new(vec![&g8, &p2, &w, &bits, &p2]), 46);
    let win = Window {
        src: &p,
        off: 3_001,
        len: 50_000,
    };
    check(&Concat::new(vec![&win, &g8]), 47);
    // Pair sources only: the entries across their ends keep the pair form.
    let (pa, ps, pb) = (
        random_pairs(40_003, 48),
        random_pairs(100, 49),
        random_pairs(50_001, 50),
    );
    let cat = Concat::new(vec![&pa, &pb]);
    let mut buf = [0u8; 10];
    assert!(cat.load_pairs(1, 39_998, &mut buf));
    assert!(buf[..5] == pa.xy[1][39_998..] && buf[5..] == pb.xy[1][..5]);
    assert!(cat.z_planes(4, 39_998, 10).is_none() && cat.pairs_in_place(0, 39_998, 10).is_none());
    assert_eq!(
        cat.pairs_in_place(0, 39_990, 10),
        Some(&pa.xy[0][39_990..40_000])
    );
    assert!(!cat.load_pairs(4, 39_998, &mut buf) && !cat.load_pairs(0, 90_000, &mut buf));
    check(&cat, 48);
    check(&Concat::new(vec![&pa, &ps, &pb]), 49);
    // Next to a source without the pair form, nothing is written.
    let mixed = Concat::new(vec![&pa, &w]);
    buf.fill(7);
    assert!(!mixed.load_pairs(0, 39_998, &mut buf) && buf == [7; 10]);
}

/// `planes[0][k] ^= e_0`, `planes[1][k] ^= e_1` for each `(k, (e_0, e_1))` of `errors`.
fn add_errors(planes: [&mut Vec<u8>; 2], errors: &[(usize, (u8, u8))]) {
    let [a, b] = planes;
    for (k, (e0, e1)) in errors {
        a[*k] ^= e0;
        b[*k] ^= e1;
    }
}

/// The three parties' replicated shares of the bytes `v`, as `GF(2^8)` elements.
fn deal_bytes(v: &[u8], rng: &mut rand_chacha::ChaCha20Rng) -> [RssVec<triskele_field::Gf2p8>; 3] {
    let v: Vec<triskele_field::Gf2p8> = v.iter().map(|b| triskele_field::Gf2p8(*b)).collect();
    triskele_share::deal(&v, rng)
}

/// Dealt word triples (`z = x y` in the tower, plus `errors`), each party's as a [`Words`]
/// source; the planes are dealt apart (sharing is linear, so this shares the words).
fn dealt_words(n: usize, errors: &[(usize, (u8, u8))], seed: u64) -> [Words; 3] {
    use rand::{RngCore, SeedableRng};
    use triskele_field::embed::mul16;
    let mut rng = rand_chacha::ChaCha20Rng::seed_from_u64(seed);
    let mut plane = || {
        let mut v = vec![0u8; n];
        rng.fill_bytes(&mut v);
        v
    };
    let (xl, xh, yl, yh) = (plane(), plane(), plane(), plane());
    let (mut zl, mut zh) = (vec![0u8; n], vec![0u8; n]);
    for k in 0..n {
        (zl[k], zh[k]) = mul16((xl[k], xh[k]), (yl[k], yh[k]));
    }
    add_errors([&mut zl, &mut zh], errors);
    let planes = [&xl, &xh, &yl, &yh, &zl, &zh].map(|p| deal_bytes(p, &mut rng));
    core::array::from_fn(|i| {
        let comp = |p: usize, second: bool| -> Vec<u8> {
            let r = &planes[p][i];
            let v = if second { &r.second } else { &r.first };
            v.iter().map(|g| g.0).collect()
        };
        // Parts x_1, x_2, y_1, y_2, z_1, z_2, each [lo, hi].
        Words(core::array::from_fn(|part| {
            let (which, second) = (part / 2, part % 2 == 1);
            [comp(2 * which, second), comp(2 * which + 1, second)]
        }))
    })
}

/// Through the network: honest word triples, or relations in the pair form, recorded next to
/// byte triples pass the check (whose run takes the k-ary level on words resp. pairs), and one
/// wrong one, in either byte of its `z`, makes every party abort.
#[test]
fn word_triples_verify_and_a_planted_error_aborts() {
    let n = 50_000;
    for (trial, errors) in [
        vec![],
        vec![(0, (1, 0))],
        vec![(n - 1, (0, 0x08))],
        vec![(31_337, (3, 5))],
    ]
    .into_iter()
    .enumerate()
    {
        dealt_relations_verify(
            &dealt_words(n, &errors, 40 + trial as u64),
            !errors.is_empty(),
        );
        dealt_relations_verify(
            &dealt_pairs(n, &errors, 50 + trial as u64),
            !errors.is_empty(),
        );
    }
}

/// [`word_triples_verify_and_a_planted_error_aborts`] for one set of dealt relations.
fn dealt_relations_verify<S: TripleSource<Gf2p64> + Clone + Send + Sync + 'static>(
    sources: &[S; 3],
    wrong: bool,
) {
    use std::sync::Arc;
    use triskele_field::Gf2p8;
    {
        let res = three(|mut party| {
            let i = party.id().index();
            let x = party.random_rss::<Gf2p8>(30_000);
            let y = party.random_rss::<Gf2p8>(30_000);
            party.mul(&x, &y)?;
            party.model().record_source(Arc::new(sources[i].clone()));
            party.set_phase(crate::Phase::Finalize);
            party.verify_recorded()?;
            Ok::<_, EngineError>(
                party
                    .net()
                    .stats()
                    .get(crate::Phase::Finalize)
                    .prev
                    .bytes_sent,
            )
        });
        // The k-ary level: 80,000 triples, ℓ' = ⌈log2 10,000⌉ = 14 levels after it: two
        // halvings, then four steps of eight (module `tail`: 14 values each).
        for r in res {
            match wrong {
                false => assert_eq!(r.expect("honest"), 56 + 16 * 2 + 4 * 112 + 16 + 32),
                true => assert!(matches!(r, Err(EngineError::Abort(_))), "{r:?}"),
            }
        }
    }
}

/// The pool behind [`Spare`] keeps vectors up to its byte budget and hands out one with room
/// for the length asked; with none, it drops a kept vector of that type that is too small.
#[test]
fn spare_pool_keeps_within_its_budget_and_hands_out_vectors_that_fit() {
    let mut pool = SparePool::default();
    let boxed = |v: Vec<Gf2p64>| -> Kept { (v.capacity() * 8, Box::new(v)) };
    pool.give(boxed(Vec::with_capacity(10)));
    pool.give(boxed(Vec::with_capacity(1000)));
    pool.give((0, Box::new(vec![0u8; 4])));
    assert_eq!(pool.bytes(), 8 * 1010);
    // Over the budget: not kept.
    pool.give(boxed(Vec::with_capacity(POOL_MAX_BYTES / 8)));
    assert_eq!(pool.kept.len(), 3);
    let v: Vec<Gf2p64> = take_fitting(&mut pool.kept, 500, true).expect("the vector of 1000 fits");
    assert!(v.capacity() >= 1000);
    assert_eq!(pool.bytes(), 80);
    // Nothing fits 500 now: without `drop_small` all stays, with it the vector of 10 is
    // dropped, the bytes stay.
    assert!(take_fitting::<Gf2p64>(&mut pool.kept, 500, false).is_none());
    assert_eq!(pool.kept.len(), 2);
    assert!(take_fitting::<Gf2p64>(&mut pool.kept, 500, true).is_none());
    assert_eq!(pool.kept.len(), 1);
    assert!(pool.kept[0].1.is::<Vec<u8>>());
}

/// A party's spare vectors serve runs of two lengths one after the other without writing
/// zeros: each length takes a vector already that long (the shortest that is), so the two
/// sets stay apart; a vector that has to grow is the longest there is; a full spare keeps the
/// larger vectors.
#[test]
fn spare_vectors_serve_runs_of_two_lengths_without_growing() {
    let mut spare = Spare::default();
    let tagged = |len: usize, tag: u64| vec![Gf2p64(tag); len];
    for tag in 0..4 {
        spare.put(tagged(50, tag));
        spare.put(tagged(200, 10 + tag));
    }
    for _ in 0..3 {
        let short: Vec<Vec<Gf2p64>> = (0..4).map(|_| spare.take(50)).collect();
        assert!(short.iter().all(|v| v.len() == 50 && v.capacity() < 200));
        short.into_iter().for_each(|v| spare.put(v));
        let long: Vec<Vec<Gf2p64>> = (0..4).map(|_| spare.take(200)).collect();
        // Old values in place: no zeros written, none of the short set.
        assert!(long.iter().all(|v| v.len() == 200 && v[199].0 >= 10));
        long.into_iter().for_each(|v| spare.put(v));
    }
    // Growing: the longest that has room.
    let mut spare = Spare::default();
    let mut v = tagged(300, 1);
    v.truncate(20);
    spare.put(v);
    let mut w = tagged(300, 2);
    w.truncate(120);
    spare.put(w);
    let got: Vec<Gf2p64> = spare.take(200);
    assert_eq!(
        (got[0], got[119], got[120]),
        (Gf2p64(2), Gf2p64(2), Gf2p64(0))
    );
    // Full: a larger vector takes the place of the smallest, a smaller one is not kept.
    let mut spare = Spare::default();
    for k in 0..SPARE_MAX {
        spare.put(tagged(10 + k, 0));
    }
    spare.put(tagged(5, 0));
    spare.put(tagged(1000, 0));
    let mut caps: Vec<usize> = spare.0.iter().map(|k| k.0 / 8).collect();
    caps.sort_unstable();
    let mut want: Vec<usize> = (11..10 + SPARE_MAX).collect();
    want.push(1000);
    assert_eq!(caps, want);
}

/// The Lagrange coefficients by prefix products and one inversion are those of the textbook
/// formula (each coefficient a product of quotients), at points off and on the nodes, for
/// nodes in `GF(2^64)` and in `GF(2^8)`; and the batch inversion keeps `0^-1 = 0`.
#[test]
fn lagrange_coefficients_match_the_formula() {
    fn naive<V: Field>(nodes: &[V], s: V) -> Vec<V> {
        (0..nodes.len())
            .map(|j| {
                (0..nodes.len()).filter(|&i| i != j).fold(V::ONE, |acc, i| {
                    acc * (s - nodes[i]) * (nodes[j] - nodes[i]).inverse()
                })
            })
            .collect()
    }
    let mut x = 0x0123_4567_89ab_cdefu64;
    let mut next = || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x
    };
    for n in [1, 2, 3, 8, 15, 63] {
        let nodes: Vec<Gf2p64> = (0..n).map(|_| Gf2p64(next())).collect();
        for s in [Gf2p64(next()), nodes[n / 2], Gf2p64::ZERO] {
            assert_eq!(lagrange_slice(&nodes, s), naive(&nodes, s), "{n} nodes");
        }
    }
    use triskele_field::Gf2p8;
    let bytes: Vec<Gf2p8> = (1..16).map(Gf2p8).collect();
    for s in (0..=255).map(Gf2p8) {
        assert_eq!(lagrange_slice(&bytes, s), naive(&bytes, s));
    }
    let xs = [
        Gf2p64(3),
        Gf2p64::ZERO,
        Gf2p64(next()),
        Gf2p64::ZERO,
        Gf2p64(7),
    ];
    let inv = batch_inverse(&xs);
    let expect: Vec<Gf2p64> = xs.iter().map(|x| x.inverse()).collect();
    assert_eq!(inv, expect);
    assert_eq!(batch_inverse::<Gf2p64>(&[]), Vec::<Gf2p64>::new());
}
