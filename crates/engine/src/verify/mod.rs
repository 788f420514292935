//! Protocol 2 `Verify` of MAESTRO (PROTOCOLS.md §5.4): a batched check that a list of
//! replicated triples `([[x_k]], [[y_k]], [[z_k]])` satisfies `z_k = x_k y_k`, with
//! communication logarithmic in the batch size. Generic over the check field
//! ([`VerifyField`]: `GF(2^64)` for the binary protocols, `F_p` for the PRFs).
//!
//! # Protocol (`L` triples, `n = nextpow2(max(L, 1))`, `ℓ = log2 n`)
//!
//! 1. **Random linear combination.** A 16-byte seed is tossed (§5.2: random sharings opened
//!    with the hashed opening; `⌈127 / ⌊log2 |V|⌋⌉` coins: two in `GF(2^64)`, one in `F_p`
//!    for `p > 2^127`, more for a smaller run-time prime). The coefficients `c_k` come from
//!    AES-128-CTR streams keyed by `SHA-256(label ‖ seed ‖ …)` (\[DEV\] §8 item 9 instead of
//!    the powers `r^k` of one coin). In `F_p` they are drawn independently, per chunk of
//!    [`COEFF_CHUNK`] indices (each chunk its own key, so chunks are generated in parallel).
//!    In `GF(2^64)` they are products of a row and a column factor
//!    ([`VerifyField::PRODUCT_COEFFICIENTS`]): `c_{i·COEFF_CHUNK + j} = a_i b_j`, where the row
//!    factor `a_i` is the first element of chunk `i`'s stream and the `COEFF_CHUNK` column
//!    factors `b_j` are one further stream, drawn once per run. Claim: `Σ_k (c_k x_k) y_k =
//!    z := Σ_k c_k z_k` (entries past the end count as zero).
//! 2. **Halving** (`ℓ` times): on a claim of length `len`, pair index `j < h` with `j + h`
//!    (\[DEV\]: halves instead of `2j, 2j+1`; any fixed pairing works, and the partner of `j`
//!    is zero if `j + h ≥ len`), where `h = ⌈len/2⌉` (at the first level rounded up to a
//!    multiple of `min(2^11, n/2)`); every level lowers `⌈log2 len⌉` by one, so there are
//!    exactly `ℓ` levels as with padding to `n`, but the work is proportional to `L`. Set
//!    `f_j(X) = x_j + (x_{j+h} - x_j) X`, `g_j` likewise, `H(X) = Σ_j f_j(X) g_j(X)`
//!    (degree 2, `H(0) + H(1) = z`). Each party computes additive shares of `H(1)` and `H(u)`
//!    with local inner products (`u` = [`VerifyField::node`]) and reshares both (16 bytes to
//!    `P_{i-1}`); `[[H(0)]] = [[z]] - [[H(1)]]`. A coin `s` (8 bytes to `P_{i+1}`) folds the
//!    vectors to `f_j(s)`, `g_j(s)` and the claim to `H(s)` (Lagrange on `0, 1, u`).
//!
//!    \[DEV\] A run of at least [`OCTAL_MIN_LEN`]` = 2^16` triples that all have a byte form
//!    (`GF(2^8)`, `GF(2^4)`, the tower field, bit-sliced bits, the packed ohv and bit-string
//!    relations) or a word form in `GF(2^16) = GF(2^8)[t]` (the gf4p4 relations;
//!    [`TripleSource::load_words`]), so the finalize check of every Verify-based AES variant
//!    from about 100 blocks on, instead starts with one **k-ary level** (`k = 8`, module `octal`):
//!    blocks of eight triples with one coefficient `a_J` each, a polynomial `Q` of degree 14
//!    given by its values at 15 nodes `E_8(α)`, `α` in the subfield of 16 elements of
//!    `GF(2^8)` (module `octal`; the gf4p4 relations then take their pair form,
//!    [`TripleSource::load_pairs`]): at the eight data nodes the
//!    combined `z` of each entry, at the seven others reshared values (56 bytes to
//!    `P_{i-1}`), and one coin `s` that folds the claim `Q = Σ_J a_J F_J G_J` to length
//!    `⌈L/8⌉`; the halvings follow. It replaces three halvings (48 bytes to `P_{i-1}`, three coins, six rounds) by
//!    one step of two rounds, and the later levels start from `L/8` entries instead of `L/2`.
//!    `GF(2)` triples (bit-sliced words, [`TripleSource::load_bits`]) enter it packed by
//!    eight: in a run that also holds other triples, a sub-block of bits only takes a block
//!    as one packed byte (module `octal`); a run of bits only takes blocks of **32**
//!    (`k = 32`, module `wide`: four packed bytes per block, `Q` of degree 62 at the nodes
//!    `E_8(0) .. E_8(62)`, 31 values reshared, 248 bytes to `P_{i-1}`), so its halvings start
//!    from `L/32` entries. A run of bytes only (neither words nor bits: mal-chida-rec-check,
//!    mal-gf4-circuit, mal-lut256-ss-opt, and the byte relations of the variants below) takes
//!    blocks of 32 too (module `wide_bytes`: the
//!    same nodes and messages, 32 bytes per block; the values at the 31 extra nodes by the
//!    additive FFT of `triskele_field::subspace`, since the data nodes `0 .. 31` are a
//!    subspace of `GF(2^8)` and the extra nodes its coset), two halvings fewer than with
//!    blocks of eight. After a k-ary first level, a claim of at most `2^12` entries (the last
//!    twelve levels) takes **steps of eight** instead of halvings (module `tail`: blocks of
//!    eight entries, `P` of degree 14 at 15 nodes, 14 values reshared, one coin): three
//!    levels in one step of two rounds, sixteen rounds fewer per run.
//!
//!    \[DEV\] **Runs by kind.** Records of several kinds (packed bits, bytes, others: words,
//!    pairs, lifted triples) are checked in runs of their own kind once every kind present
//!    has at least [`OCTAL_MIN_LEN`] triples (`kind_groups`; every party forms the same groups
//!    from its sources' lengths and kinds): mal-lut256-ss's bits and its VerifySbox bytes, and
//!    the byte relations of mal-lut16 (the packed ohv and bit-string relations) and of
//!    mal-gf4-circuit-opt (its norm relation) next to their gf4p4 relations. A run that mixed
//!    them took blocks of eight for all; alone, the bits and the bytes take blocks of 32. Each
//!    more run costs the rounds of a seed, its first level and its halvings above twelve
//!    levels; the runs' steps of eight and `CheckTriple`s go side by side. At 10,000 blocks
//!    this took the finalize of mal-lut16-ohv and mal-lut16-bitstring from about 0.030 to
//!    0.024 s (docs/PERFORMANCE.md, "Runs by kind").
//! 3. **CheckTriple** (Protocol 1) on the last triple: random `[[x*]]`, `[[τ]]`;
//!    `[[z*]] = [[x*]][[y]]` (8 B to prev); coin `t`; open `ρ = x + t x*`;
//!    `[[δ]] = ρ[[y]] - [[z]] - t[[z*]]`; `[[σ]] = [[δ]][[τ]]` (8 B to prev); open `σ`; the
//!    local result is `σ = 0`.
//! 4. The caller ends with a compare-view ([`crate::Party::compare_view_after`]) that carries
//!    the local result, so no party accepts unless every opening was consistent and `σ = 0`.
//!
//! # Implementation
//!
//! This party's local work (`Prover`) makes one pass over its data per level; each pass
//! also computes the next level's sums from every sub-block while it is in cache, so the
//! reshare of level `k + 1` follows the coin of level `k` without another pass.
//!
//! * **Level 1, pass A** (`source_sums`): streams over the recorded (unlifted) triples in
//!   sub-blocks of `SUB` pairs. Each rayon job owns a contiguous range (boundaries at
//!   multiples of [`COEFF_CHUNK`]) and draws its coefficients in order from the chunk
//!   streams: AES-128-CTR under `SHA-256(seed ‖ chunk)`, the stream of
//!   `triskele_share::Prg`, generated by `triskele_field::ctr` (VAES / AES-NI, 16 / 8 blocks
//!   in flight). Product coefficients are handed to a source's fast path factored
//!   ([`Coeffs`]: a sub-block's row factor and its piece of the column factors): the byte
//!   path sums each half against the column factors and multiplies the sums by the row
//!   factor, and folds `x` with nibble tables scaled by the row factors and one product by the
//!   column factors per entry (both halves of a pair share their column, as `h` is a multiple
//!   of [`COEFF_CHUNK`] for `n ≥ 2^12`); other paths multiply them out. No AES-CTR per
//!   coefficient: for `mal-chida-rec-check` at 100,000 blocks this took the finalize from
//!   0.77-0.81 s to 0.70 s (alternating runs, `--threads 2`). Nothing of size `L` is
//!   written.
//! * **Level 1, pass B** (`source_fold`): streams again and writes the folded vectors
//!   (length `h ≈ L/2`); level 2's sums come from the sub-blocks just written.
//! * **Sources read in place** (recorded `GF(2^64)` and `F_p` triples, chained `F_p` triples;
//!   [`TripleSource::in_place`]): pass A also writes the scaled `X = c x` of every position
//!   (two vectors of length `2h`), and pass B (`fold_scaled`) folds that in place instead of
//!   drawing the coefficients and scaling again, writing the folded `y` over the upper half
//!   of `X` it has just read. Level 2 then reads `X'` and `y'` like any later level. For
//!   `mal-mimc` at 100,000 blocks this took the finalize from 0.78-0.83 s to 0.61-0.62 s.
//! * **Later levels** (`fold_level`): fold in place, lower half from upper half, and sum the
//!   next level (memory-bound: each level reads its vectors once).
//!
//! Sources over `GF(2^8)`, `GF(2^4)`, the tower field and bit-sliced `GF(2)` (one byte 0 or 1
//! per lane: a bit triple is the `GF(2^8)` triple of its bytes) take a **byte fast path**
//! ([`TripleSource::pair_sums`], [`TripleSource::fold_pairs`]; module `bytes`): the local
//! products `lp(x, y) = x_1 (y_1 + y_2) + x_2 y_1` are computed in `GF(2^8)` on the bytes
//! (the lift is a ring homomorphism), and only what enters a sum or a folded vector is
//! lifted, by nibble tables scaled with the constants of the formula (`vpshufb` and a byte
//! transpose, fused with the carry-less products: `ByteEmbedding::inner_product` and
//! `mul_pair_slice` of `triskele_field::embed`). On the 512-bit GFNI backend of a CPU with
//! AVX-512 VBMI, level 1's sums use bit sums instead (`ByteEmbedding::inner_products`: each
//! sum `Σ c_k f(a_k)` is `Σ_b f(2^b) S_b` with `S_b` the sum of the `c_k` whose byte has bit
//! `b` set, formed 8 terms at a time as 8×8 bit-matrix products): no term is embedded or
//! multiplied. For `mal-chida-rec-check` at 100,000 blocks this took the finalize from
//! 1.23-1.26 s to 1.14-1.16 s (alternating runs); the byte maps of the folds on the same
//! backend (`vgf2p8affineqb` per byte plane, 64 bytes at a time) then to 1.00-1.06 s. Such a
//! source also gives its `y` as bytes
//! ([`TripleSource::y_bytes`]): level 1 then stores only the folded `x` (8 instead of 16
//! bytes per triple) and level 2 recomputes the folded `y` from the bytes
//! (`fold_x_only`). Recorded `GF(2^64)` and `F_p` triples are their own lift and are read in
//! place ([`TripleSource::slices`]). A protocol's compact store of relations that are
//! `GF(2^8)` triples implements [`ByteRows`] (its bytes formed on demand) and takes the byte
//! path as a [`ByteSource`]; other sources (custom relations) are lifted
//! ([`TripleSource::lift`]) into per-job buffers. For the 22 bit triples per S-box of
//! `mal-lut256-ss` (`L = 3.84 · 10^8` at 100,000 blocks) the byte path of the bit-sliced
//! words (lanes spread to bytes with one masked move per 64 lanes on AVX-512) took the
//! finalize from 8.1-8.5 s to 4.4-4.5 s (`triskele bench --local --simd 100000 --threads 2
//! mal-lut256-ss`, alternating runs) against lifting every lane to `GF(2^64)`; the packed
//! paths of the k-ary first level (one bit per triple instead of one byte) later took it from
//! 2.54 s to 0.91-1.03 s (see README, "Malicious variants against their semi-honest twins").
//! Chained `F_p` triples
//! ([`crate::Chained`], cube chains under a coin `r`) are read in place too, with `x + r y`
//! and `z + r x` formed as level 1 streams ([`TripleSource::scaled_x`],
//! [`VerifyField::chain_scale`], and [`VerifyField::fold_lines`] with `r`). Both are combined with
//! [`Bulk::mul_slice`], [`Bulk::local_inner_product`] (two carry-less products per term in
//! `GF(2^64)`; in `F_p` two 256-bit products, reduced once per sum) and
//! [`Bulk::lerp_assign_slice`]. Every path computes the same field elements, hence the same
//! messages; the unit tests compare all of them with a naive reference level by level.
//!
//! **Pairs of one kind.** A party's records mix sources with a byte form and sources without
//! one (the gf4p4 relations of `mal-gf4-circuit-opt` and `mal-lut16-*`, lifted). The byte
//! path takes a pair of blocks only if both have bytes, so in the order of the records most
//! pairs `(j, j + h)` joined a byte triple with a lifted one and both were lifted. Each run
//! is therefore checked in the order of `paired_runs` (the first half of the byte group,
//! then of the other group, then the second halves; any order checks the same triples, and
//! every party derives the same one from the lengths and kinds of its sources), a
//! concatenation takes the byte path for a pair of blocks whose parts all have bytes even
//! if other parts have none, and level 2 recomputes the folded `y` from bytes wherever the
//! range has them (else by [`TripleSource::lift_y`], which a [`ByteSource`] now also gives).
//!
//! With the k-ary first level (module `octal`; same bench, 2026-11-29, two alternating runs of
//! the bench binaries of rev 4655739 and 6075852): 87.5 and 91.1 against 145.5 and 148.4M
//! `GF(2^8)` triples/s at `L = 2^20`, 49.1 and 49.6 against 58.2 and 58.7M at `L = 2^16`.
//! Earlier: throughput (`cargo bench -p triskele-engine --bench verify`, three parties sharing two
//! cores, `L = 2^20`): 36-44M `GF(2^8)` triples/s (byte path) and 20M `GF(2^64)` triples/s
//! (lifting path), against 16M/s for both before the fused passes (about 2.4x and 1.25x);
//! `mal-chida-rec-check` at 100,000 blocks (`L = 6.4 · 10^7`): finalize 1.2-2.2 s instead of
//! 3.7-6.6 s, dominated by the kernel zeroing the fresh pages of the folded `x`. Verified in
//! segments of 32 MiB of records ([`crate::Party::checkpoint`]), whose memory is reused, the
//! same run's finalize work takes 1.3-1.6 s against 2.8-3.1 s at once on this VM, and the
//! process peak falls from 2.65 GB to 0.49 GB. Reading recorded `GF(2^64)` and `F_p` triples
//! in place (instead of lifting copies) and branch-free `F_p` selects (module
//! `triskele_field::fp`): `GF(2^64)` 18.0-18.7M against 16.9-17.2M triples/s, `F_p` 3.36-3.41M
//! against 2.22-2.45M (alternating runs of the same bench, old and new code).
//!
//! # Communication (per party, `V = GF(2^64)`)
//!
//! To `P_{i+1}`: `16 + 8ℓ + 24` bytes (seed, `ℓ` coins `s`, coin `t`, `ρ`, `σ`); to `P_{i-1}`:
//! `16ℓ + 16`. Rounds: `2ℓ + 6` (plus the compare-view). With the 16-byte seed, the to-next
//! count is 8 bytes more than PROTOCOLS.md §6.4's single-coin formula `8 + 8ℓ + 24`. With the
//! k-ary first level and `ℓ' = ⌈log2 ⌈L/8⌉⌉` halvings after it: to `P_{i+1}` `16 + 8 + 8ℓ' +
//! 24`, to `P_{i-1}` `56 + 16ℓ' + 16`, rounds `2ℓ' + 8` (for `ℓ = ℓ' + 3`: 16 bytes less to
//! next, 8 more to prev, four rounds less). With blocks of 32 (runs of bits only) and
//! `ℓ' = ⌈log2 ⌈L/32⌉⌉`: to `P_{i+1}` `16 + 8 + 8ℓ' + 24`, to `P_{i-1}` `248 + 16ℓ' + 16`,
//! rounds `2ℓ' + 8`. Those figures count the `ℓ'` later levels as halvings; the last
//! `r = min(ℓ', 12)` of them go in `q = ⌈r/3⌉` steps instead (module `tail`: blocks of eight,
//! and one of `2^(r mod 3)` if 3 does not divide `r`), each one coin to `P_{i+1}` and `2k - 2`
//! values to `P_{i-1}`: for `ℓ' ≥ 12`, `8 · 8` bytes less to `P_{i+1}`, `4 · 112 - 12 · 16 =
//! 256` more to `P_{i-1}`, sixteen rounds less.
//!
//! Several runs ([`verify_runs`]: records larger than one run takes, records of several
//! kinds, "Segments" below) send the sum of their bytes in the rounds of one run: their seeds
//! in one opening, then their first levels and halvings side by side, each round one reshare
//! with every run's values and then one opening of every run's coin (as many rounds as the run
//! with the most levels takes), in groups whose folded vectors take at most 64 MiB
//! (`GROUP_BYTES`; a larger run goes alone, and the groups go one after the other), so that
//! the working memory stays near that of one run; then the runs' steps of eight and their
//! `CheckTriple`s side by side, up to 64 runs at a time (their claims of at most `2^12`
//! entries take 128 KiB each). Every run keeps its own seed and coins, and its reshared
//! values are fixed before its coin is opened, so the soundness argument is that of each run
//! alone. (Before, each run's seed, first level and halvings went one run after the other:
//! mal-gf4-circuit-opt's two runs at 10,000 blocks took 41 rounds, now 30;
//! docs/PERFORMANCE.md, "Runs side by side".)
//!
//! # Soundness
//!
//! Suppose some recorded triple is wrong: `z_k = x_k y_k + e_k` with `e ≠ 0` (the corrupt
//! party's deviations in multiplications are additive errors fixed before finalize starts).
//! Honest parties accept only if every step below fails to notice; `|V| = 2^64`:
//!
//! * Step 1: the claim `Σ c_k x_k y_k = Σ c_k z_k` is false unless `Σ c_k e_k = 0`. The seed is
//!   uniform and independent of `e` (the corrupt party knows only two of the three components
//!   of each coin sharing before the opening; an inconsistent opening is caught by the
//!   compare-view). For independent uniform `c_k` (`F_p`) the sum is uniform: probability
//!   `1/|V|`. For product coefficients (`GF(2^64)`), with `e_{ij}` the error at index
//!   `i·COEFF_CHUNK + j`, the sum is `P(a, b) = Σ_i a_i Σ_j b_j e_{ij}`, a non-zero polynomial
//!   of degree 2 in the independent uniform factors: for fixed `b` it vanishes identically
//!   in `a` only if `Σ_j b_j e_{i*j} = 0` for a row `i*` with an error (probability `1/|V|`
//!   over `b`), and otherwise for a fraction `1/|V|` of the `a`: probability `≤ 2/|V|`
//!   (Schwartz–Zippel). Both plus the advantage of a distinguisher for AES-128-CTR (with the
//!   SHA-256 key derivation), which we treat as negligible; neither depends on `L`.
//! * Each halving step: if `H(0) + H(1) ≠ z` for the true `H`, the reshared values define a
//!   degree-≤2 polynomial `H' ≠ H`; the claim stays false unless `H'(s) = H(s)` for the coin
//!   `s`, drawn after `H'` is fixed: probability `≤ 2/|V|` per level.
//! * CheckTriple: with `z = xy + e` (`e ≠ 0`) and `z* = x* y + e*` (`e*` fixed before `t`),
//!   `δ = e + t e*` vanishes for at most one `t`: `≤ 1/|V|`. Then `σ = δτ + e_σ` where the
//!   corrupt party knows neither `τ` (one component is hidden from it) nor, hence, `δτ`:
//!   `σ = 0` with probability `≤ 1/|V|`.
//!
//! * The k-ary first level (module `octal`) takes the place of step 1 and three halvings. A
//!   wrong triple `(J, m)` makes the value `Σ_J a_J z_{J,m}` of `Q` at data node `m` differ
//!   from `P(α_m)` for `P = Σ_J a_J F_J G_J` unless `Σ_J a_J e_{J,m}`, a non-zero polynomial
//!   of degree 2 in independent uniform factors, vanishes (`≤ 2/|V|`). Then `Q ≠ P`, whatever
//!   the corrupt party adds to the reshared values at the extra nodes (they are fixed before
//!   `s`), and the claim `Q(s) = P(s)` holds only if `s` is a root of `Q - P`, of degree ≤ 14
//!   (`≤ 14/|V|`). With blocks of 32 (module `wide`) the degree is 62 (`≤ 62/|V|`) in place
//!   of five halvings.
//! * A step of eight of the last levels (module `tail`): if the claim is false, the reshared
//!   values (fixed before `s`, and at node 0 forced by the claim) define a polynomial of
//!   degree ≤ 14 other than the true one: `≤ 14/|V|` in place of three halvings (`6/|V|`); at
//!   most `32/|V|` more per run than with halvings only.
//!
//! Union bound: `ε ≤ (2ℓ + 4) / 2^64` in `GF(2^64)` (product coefficients; `(2ℓ' + 50) / 2^64
//! = (2ℓ + 44) / 2^64` with the k-ary first level and the steps of eight, `(2ℓ' + 98) / 2^64 =
//! (2ℓ + 88) / 2^64` with blocks of 32) and `(2ℓ + 3) / p` in `F_p`. Up to `10^6` AES-256
//! blocks with every variant's triple count (at most 24 per S-box, mal-lut256-ss: `L ≤ 24 ·
//! (224 · 10^6 + 52)` plus padding lanes `< 2^33`, `ℓ ≤ 33`): `ε ≤ 154 · 2^-64 < 2^-56`, well
//! below the required
//! `2^-40` at every batch size (with powers of one coin step 1 alone would cost
//! `(L-1)/2^64`, about `2^-38` at `L = 2^26`). The test
//! `soundness_bounds_of_a_million_aes256_blocks` (`crates/aes/tests/malicious.rs`) redoes
//! this arithmetic, and that of "Segments" below, from every variant's triple count.
//!
//! # Segments
//!
//! With segmented verification ([`crate::Party::checkpoint`], [`crate::Malicious`]) a run
//! verifies its records in several independent runs of this protocol, each over the records
//! made since the previous one, and the finalize compare-view carries the conjunction of
//! their local results. Each run tosses its own seed after its triples are fixed (they were
//! computed before the checkpoint), so the argument above applies to each run separately,
//! and a wrong triple passes only if the run that contains it fails to notice.
//!
//! A segment's binary runs stop before their steps of eight and `CheckTriple`
//! (`verify_runs_parked`): their claims (at most `2^12` entries each, or the last triple) wait
//! in the party, and the finalize check ([`crate::Party::verify_recorded`], which every
//! Verify-based protocol ends with, and which alone carries a segment's result) takes their
//! last steps side by side with its own runs', one message per round for all, with each run's
//! own coins (tossed after its claim is fixed, as before). That saves each segment about
//! thirteen rounds; the bytes and the argument are those of each run alone (mal-gf4-circuit at
//! 100,000 blocks, 64 MiB segments, `--threads 2`: 70 → 57 finalize messages per channel).
//!
//! The binary records of one segment (or of the finalize check), of one kind where they run
//! by kind, that exceed the run size
//! ([`crate::SecurityModel::run_size`]: the segment size in `GF(2^8)` triples, at least
//! [`crate::MIN_RUN`]` = 2^20`; four times that for records of bytes only, whose first level
//! folds by 32: `run_size_for`) are verified in several runs over consecutive windows of them
//! (the fewest windows within the run size, of balanced lengths: a segment of 6.4M products
//! with a run size of 5.6M runs as two windows of 3.2M, which took mal-chida-rec-check's
//! finalize at 100,000 blocks from 0.81-0.84 s to 0.76-0.83 s in three alternating pairs),
//! each again with its own seed; this bounds the check's working memory when one recorded
//! source (a preprocessing batch of compact relations) is larger than a segment. Union bound
//! over at most [`crate::MAX_SEGMENTS`]` + 1 = 257` segments and, in `GF(2^64)`, at most
//! `⌈L / 2^20⌉ + 3 · 257 ≤ 2^13 + 771 = 8963` runs for the `L < 2^33` triples of up to `10^6`
//! AES-256 blocks (a segment's triples of one kind, `T`, run as `⌈T / S⌉ ≤ T / S + 1` windows
//! for a run size `S ≥ 2^20`, and there are at most three kinds, see "Runs by kind"): with
//! `L_r` triples in run `r`, `ℓ_r ≤ log2 L_r + 1`, so the runs'
//! bounds add up to at most `Σ_r (2 log2 L_r + 90) ≤ R (2 log2 (L/R) + 90)` for `R` runs
//! (`log2` is concave), which grows with `R`; at `R = 8963` and `L = 2^33` it is
//! `8963 · (2 · 19.87 + 90) < 2^21`: `ε < 2^-43` in `GF(2^64)` at every batch size and
//! segment size (for AES-128, `L < 2^32`, fewer than `2^12 + 771` runs: `ε < 2^-44`), and
//! `257 · (2ℓ + 3) / p`, below `2^-80` for the primes of at least 100 bits of the malicious
//! PRFs, whose records are not split. Privacy is unchanged: each run opens only coins and the
//! randomized `σ`.

use core::any::Any;

use sha2::{Digest, Sha256};
use triskele_field::{batch_inverse, Bulk, Encode, Field, Fp, FpRt, Gf2p64, PrimeField, Random};
use triskele_share::RssVec;

use crate::error::EngineError;
use crate::model::SecurityModel;
use crate::party::{Party, ReshareTo};

mod coeffs;
mod fold;
mod octal;
mod source;
mod tail;
mod wide;
mod wide_bytes;

pub use bytes::{ByteRows, ByteSource};
pub use coeffs::COEFF_CHUNK;
pub use octal::MIN_LEN as OCTAL_MIN_LEN;
pub(crate) use source::{kind_groups, paired_runs, source_parts};
pub use source::{Coeffs, Concat, LiftedTriples, Parts, TripleSource, ZPlanes};
pub use tail::later_levels;

/// Triples per chunk of the k-ary first level with blocks of 32 over bytes (module
/// `wide_bytes`: 1,024 blocks of 32): a factor that several relations share
/// ([`TripleSource::shared_part`]) is loaded, extrapolated and folded once where each
/// relation's run of it covers whole chunks, i.e. starts at a multiple of this in the run.
pub const SHARED_ALIGN: usize = wide::K * wide_bytes::CHUNK;

/// Triples per sub-block of the k-ary first level over packed bits (module `wide`: 4,096
/// blocks of 32): a factor that several relations' runs of bits share
/// ([`TripleSource::shared_part`]) is mapped to the extra nodes and folded once where each
/// relation's run of it covers whole sub-blocks, i.e. starts at a multiple of this in the run.
/// Runs of more triples than this are cut at multiples of it.
pub const SHARED_BIT_ALIGN: usize = wide::K * coeffs::SUB;

use coeffs::Coefficients;
use fold::{
    first_half, fold_level, fold_scaled, fold_x_only, folded_half, inner_share, lerp_node,
    source_fold, source_sums, Folded, Sums,
};

/// A field in which [`verify`] runs.
pub trait VerifyField: Field + Encode + Random + Bulk {
    /// Whether the step-1 coefficients of [`verify`] are products `a_i b_j` of a row and a
    /// column factor (cheaper to form where a product costs less than drawing an element;
    /// soundness `2/|F|` instead of `1/|F|` for step 1, see the module documentation) rather
    /// than independent draws.
    const PRODUCT_COEFFICIENTS: bool = false;
    /// The third interpolation node besides 0 and 1 (`u` = `0x2` in `GF(2^64)`).
    fn node() -> Self;
    /// `⌊log2 |F|⌋`, the per-root soundness in bits (a method: the run-time prime field
    /// knows its size only at run time).
    fn log2_size() -> u32;
    /// `self · node()` (a shift and a conditional reduction in `GF(2^64)`).
    #[inline]
    fn times_node(self) -> Self {
        self * Self::node()
    }
    /// Internal (the byte fast path of [`verify`]): `out[i] = (1 - s) E(a[i]) + s E(b[i])`
    /// for `GF(2^8)` bytes and `E = E_8` (`b` zero if `None`); `false`, with nothing written,
    /// if this field has no such path (the default).
    #[doc(hidden)]
    fn lerp_bytes(a: &[u8], b: Option<&[u8]>, s: Self, out: &mut [Self]) -> bool {
        let _ = (a, b, s, out);
        false
    }
    /// Internal (level 1, pass A, the byte path over any sources that have bytes,
    /// [`TripleSource::load_bytes`]): [`TripleSource::pair_sums`] of `rows`; `None` (the
    /// default) if this field has no byte path.
    #[doc(hidden)]
    fn rows_pair_sums(
        rows: &dyn ByteRows,
        lo: usize,
        hi: Option<usize>,
        c: [Coeffs<'_, Self>; 2],
    ) -> Option<[Self; 4]> {
        let _ = (rows, lo, hi, c);
        None
    }
    /// Internal (level 1, pass B, the byte path as [`VerifyField::rows_pair_sums`]):
    /// [`TripleSource::fold_pairs`] of `rows`; `false` (the default) if this field has no
    /// byte path.
    #[doc(hidden)]
    fn rows_fold_pairs(
        rows: &dyn ByteRows,
        lo: usize,
        hi: Option<usize>,
        c: [Coeffs<'_, Self>; 2],
        s: Self,
        out: [&mut [Self]; 4],
    ) -> bool {
        let _ = (rows, lo, hi, c, s, out);
        false
    }
    /// Internal (level 1, pass B, for triples recorded in this field): writes `out[j] = X_lo
    /// + (X_hi - X_lo) s` with `X = c x` for `j < 2` and `lo[j] + (hi[j] - lo[j]) s` for `j >=
    /// 2`, where `lo`, `hi` are `[x1, x2, y1, y2]` of the lower and upper positions (`hi` zero
    /// if `None`), and returns `true`; `false` (the default), with nothing written, if the
    /// field has no fused fold. With `r` the triples are chained ([`crate::Chained`]): `x + r
    /// y` stands for `x`.
    #[doc(hidden)]
    fn fold_lines(
        out: [&mut [Self]; 4],
        lo: [&[Self]; 4],
        hi: Option<[&[Self]; 4]>,
        c: [&[Self]; 2],
        s: Self,
        r: Option<Self>,
    ) -> bool {
        let _ = (out, lo, hi, c, s, r);
        false
    }
    /// Internal (level 1 of chained triples, [`crate::Chained`]): `out[j][k] = c[k] (x[j][k] +
    /// r y[j][k])` for `j = 0, 1` (slices of one length). A field may form `c r` once per
    /// position and reduce each output once (the default computes it per element).
    #[doc(hidden)]
    fn chain_scale(out: [&mut [Self]; 2], x: [&[Self]; 2], y: [&[Self]; 2], c: &[Self], r: Self) {
        for (j, o) in out.into_iter().enumerate() {
            for (k, o) in o.iter_mut().enumerate() {
                *o = c[k] * (x[j][k] + r * y[j][k]);
            }
        }
    }
    /// Internal (the k-ary first level, module `octal`): its nodes if a run of `src` takes
    /// it (this field has the level, the run is long enough and every triple has bytes);
    /// `None` (the default) otherwise.
    #[doc(hidden)]
    fn octal_nodes(src: &dyn TripleSource<Self>) -> Option<Vec<Self>> {
        let _ = src;
        None
    }
    /// Internal (the k-ary first level before its coin, over `blocks` blocks of `k`): returns
    /// `[D_{0,1}, D_{0,2}, .., D_{k-1,2}, Q(α_k), .., Q(α_{2k-2})]`, the two components of
    /// `D_m = Σ_J a_J z_{J,m}` (the value at data node `m`, summed over the blocks that do not
    /// leave it to [`VerifyField::octal_fold`]) and this party's additive shares of the
    /// values at the extra nodes; `None` if some triple has no byte form (the default: no such
    /// level).
    #[doc(hidden)]
    fn octal_sums(
        src: &dyn TripleSource<Self>,
        seed: &[u8; 16],
        blocks: usize,
    ) -> Option<Vec<Self>> {
        let _ = (src, seed, blocks);
        None
    }
    /// Internal (the k-ary first level's fold with the coin `s`): `out = [x'_1, x'_2, y'_1,
    /// y'_2]`, one entry per block, and the additive shares `[H(1), H(u)]` of the halving
    /// after it, which pairs `j` with `j + half`, and the part `[Σ λ_m D_{m,1}, Σ λ_m
    /// D_{m,2}]` of `Q(s)` of the blocks whose data nodes [`VerifyField::octal_sums`] left to
    /// this pass (`lambda`: the Lagrange coefficients of all the nodes at `s`). `None` if some
    /// triple has no byte form (the default: no such level).
    #[doc(hidden)]
    fn octal_fold(
        src: &dyn TripleSource<Self>,
        seed: &[u8; 16],
        s: Self,
        lambda: &[Self],
        out: [&mut [Self]; 4],
        half: usize,
    ) -> Option<OctalFolded<Self>> {
        let _ = (src, seed, s, lambda, out, half);
        None
    }
    /// Internal (the sums of a halving level): `[Σ lp(b), Σ lp(b + (b - a) · node())]` with
    /// `lp(x1, x2, y1, y2) = x1 (y1 + y2) + x2 y1`, over the positions of `a = [x1, x2, y1, y2]`
    /// (`b` zero from `b[0].len()` on); `f` is scratch for the line at the node. A field may do
    /// it in one pass without writing the line (the default writes it into `f`).
    #[doc(hidden)]
    fn node_sums(a: [&[Self]; 4], b: [&[Self]; 4], f: &mut [Vec<Self>; 4]) -> [Self; 2] {
        let k = a[0].len();
        let h1 = inner_share([b[0], b[1]], [b[2], b[3]]);
        for ((o, l), h) in f.iter_mut().zip(a).zip(b) {
            lerp_node(&mut o[..k], l, h);
        }
        let hu = inner_share([&f[0][..k], &f[1][..k]], [&f[2][..k], &f[3][..k]]);
        [h1, hu]
    }
}

impl VerifyField for Gf2p64 {
    const PRODUCT_COEFFICIENTS: bool = true;
    fn node() -> Self {
        Gf2p64::U
    }
    fn log2_size() -> u32 {
        64
    }
    /// `x · u`: shift, and reduce `u^64 = u^4 + u^3 + u + 1` (`0x1b`) if bit 63 was set.
    #[inline]
    fn times_node(self) -> Self {
        Gf2p64((self.0 << 1) ^ (0x1b & 0u64.wrapping_sub(self.0 >> 63)))
    }
    fn lerp_bytes(a: &[u8], b: Option<&[u8]>, s: Self, out: &mut [Self]) -> bool {
        bytes::lerp_bytes(a, b, s, out);
        true
    }
    fn rows_pair_sums(
        rows: &dyn ByteRows,
        lo: usize,
        hi: Option<usize>,
        c: [Coeffs<'_, Self>; 2],
    ) -> Option<[Self; 4]> {
        bytes::pair_sums(rows, lo, hi, c)
    }
    fn rows_fold_pairs(
        rows: &dyn ByteRows,
        lo: usize,
        hi: Option<usize>,
        c: [Coeffs<'_, Self>; 2],
        s: Self,
        out: [&mut [Self]; 4],
    ) -> bool {
        bytes::fold_pairs(rows, lo, hi, c, s, out)
    }
    /// One pass over `a` and `b` ([`Gf2p64::node_inner_products_with`]).
    fn node_sums(a: [&[Self]; 4], b: [&[Self]; 4], _f: &mut [Vec<Self>; 4]) -> [Self; 2] {
        Gf2p64::node_inner_products_with(triskele_field::backend::active(), a, b)
    }
    fn octal_nodes(src: &dyn TripleSource<Self>) -> Option<Vec<Self>> {
        octal::applies(src).then(|| octal::run_nodes(src))
    }
    fn octal_sums(
        src: &dyn TripleSource<Self>,
        seed: &[u8; 16],
        blocks: usize,
    ) -> Option<Vec<Self>> {
        octal::sums(src, seed, blocks)
    }
    fn octal_fold(
        src: &dyn TripleSource<Self>,
        seed: &[u8; 16],
        s: Self,
        lambda: &[Self],
        out: [&mut [Self]; 4],
        half: usize,
    ) -> Option<OctalFolded<Self>> {
        octal::fold(src, seed, s, lambda, out, half).map(|(f, d)| ([f.h1, f.hu], d))
    }
}

impl VerifyField for Fp {
    fn node() -> Self {
        Fp::from(2u64)
    }
    fn log2_size() -> u32 {
        127
    }
    /// `2x = x + x`.
    #[inline]
    fn times_node(self) -> Self {
        self + self
    }
    /// One pass over `a` and `b` ([`Fp::node_inner_products_with`]; AVX-512 IFMA where the
    /// backend has it).
    fn node_sums(a: [&[Self]; 4], b: [&[Self]; 4], _f: &mut [Vec<Self>; 4]) -> [Self; 2] {
        Fp::node_inner_products_with(triskele_field::backend::active(), a, b)
    }
    /// [`Fp::fold_lines_with`] (AVX-512 IFMA where the backend has it).
    fn fold_lines(
        out: [&mut [Self]; 4],
        lo: [&[Self]; 4],
        hi: Option<[&[Self]; 4]>,
        c: [&[Self]; 2],
        s: Self,
        r: Option<Self>,
    ) -> bool {
        Fp::fold_lines_with(triskele_field::backend::active(), out, lo, hi, c, s, r);
        true
    }
    /// [`Fp::chain_scale_with`] (AVX-512 IFMA where the backend has it).
    fn chain_scale(out: [&mut [Self]; 2], x: [&[Self]; 2], y: [&[Self]; 2], c: &[Self], r: Self) {
        Fp::chain_scale_with(triskele_field::backend::active(), out, x, y, c, r);
    }
}

/// The run-time prime field, for the modulus installed while [`verify`] runs. The node 2 is
/// distinct from 0 and 1 for every odd `p`; the soundness error `(2ℓ + 3)/p` (module
/// documentation) is only small for large `p`.
impl VerifyField for FpRt {
    fn node() -> Self {
        FpRt::from(2u64)
    }
    /// `2x = x + x`.
    #[inline]
    fn times_node(self) -> Self {
        self + self
    }
    fn log2_size() -> u32 {
        FpRt::modulus().ilog2()
    }
}

/// The Lagrange coefficients `ℓ_j(s)` of the nodes `nodes` (distinct): `Σ_j ℓ_j(s) f(nodes[j])
/// = f(s)` for every polynomial `f` of degree below `N`.
fn lagrange<V: Field, const N: usize>(nodes: &[V; N], s: V) -> [V; N] {
    let l = lagrange_slice(nodes, s);
    core::array::from_fn(|j| l[j])
}

/// [`lagrange`] for nodes in a slice: `ℓ_j(s) = Π_{i≠j} (s - α_i) / Π_{i≠j} (α_j - α_i)`, the
/// numerators from prefix and suffix products of `s - α_i`, the denominators inverted
/// together ([`batch_inverse`]: one inversion; one inversion of `GF(2^64)` per node took
/// about 130 of mal-gf4-circuit-opt's 4,651 check samples, docs/PERFORMANCE.md).
fn lagrange_slice<V: Field>(nodes: &[V], s: V) -> Vec<V> {
    let n = nodes.len();
    let mut suffix = vec![V::ONE; n + 1];
    for i in (0..n).rev() {
        suffix[i] = suffix[i + 1] * (s - nodes[i]);
    }
    let den: Vec<V> = nodes
        .iter()
        .enumerate()
        .map(|(j, &a)| {
            let others = nodes.iter().enumerate().filter(|&(i, _)| i != j);
            others.fold(V::ONE, |d, (_, &b)| d * (a - b))
        })
        .collect();
    let inv = batch_inverse(&den);
    let mut prefix = V::ONE;
    nodes
        .iter()
        .zip(suffix.iter().skip(1))
        .zip(inv)
        .map(|((&a, &suf), inv)| {
            let l = prefix * suf * inv;
            prefix *= s - a;
            l
        })
        .collect()
}

/// `[[H(s)]]` from `[[H(0)]]`, `[[H(1)]]`, `[[H(u)]]` (Lagrange on the nodes `0, 1, u`).
fn interpolate<V: VerifyField>(h: [&RssVec<V>; 3], s: V) -> RssVec<V> {
    tail::combine(lagrange(&[V::ZERO, V::ONE, V::node()], s), h)
}

/// The single-element sharing with components `a` and `b`.
fn single<V>(a: V, b: V) -> RssVec<V> {
    RssVec {
        first: vec![a],
        second: vec![b],
    }
}

fn scalar_times<V: VerifyField>(c: V, x: &RssVec<V>) -> RssVec<V> {
    RssVec {
        first: x.first.iter().map(|v| c * *v).collect(),
        second: x.second.iter().map(|v| c * *v).collect(),
    }
}

fn sub<V: VerifyField>(a: &RssVec<V>, b: &RssVec<V>) -> RssVec<V> {
    let f = |p: &[V], q: &[V]| p.iter().zip(q).map(|(x, y)| *x - *y).collect();
    RssVec {
        first: f(&a.first, &b.first),
        second: f(&a.second, &b.second),
    }
}

/// Entropy the step-1 seed gets from its coins, in bits.
const SEED_BITS: u32 = 127;

/// Tosses the 16-byte step-1 seeds of `runs` runs, all in one opening: per run `⌈127 / ⌊log2
/// |V|⌋⌉` coins (2 in `GF(2^64)`, 1 in `F_p` for `p > 2^127` as the default prime, 2 for
/// `2^64 <= p < 2^127`, more for smaller run-time primes, whose few coin values would
/// otherwise let a cheater prepare errors that pass for every possible seed), hashed into
/// the run's seed.
fn toss_seeds<V: VerifyField, M: SecurityModel>(
    party: &mut Party<M>,
    runs: usize,
) -> Result<Vec<[u8; 16]>, EngineError> {
    let k = SEED_BITS.div_ceil(V::log2_size().max(1)) as usize;
    let coins = party.coins_in::<V>(k * runs)?;
    Ok(coins
        .chunks(k)
        .map(|c| {
            let digest = Sha256::new()
                .chain_update(b"triskele verify seed")
                .chain_update(V::encode_to_vec(c))
                .finalize();
            let mut seed = [0u8; 16];
            seed.copy_from_slice(&digest[..16]);
            seed
        })
        .collect())
}

/// The most binary triples one run over the records `src` checks, from the model's run size
/// `max` ([`crate::SecurityModel::run_size`]): four times `max` if every triple has a byte
/// form and none is a packed bit. Such a run takes the k-ary first level with blocks of 32
/// (module `wide_bytes`), whose folded vectors, the check's working memory, take `L` bytes
/// per party against `4L` with blocks of eight; so the memory still follows the segment size,
/// and a segment runs as fewer runs (fewer rounds: mal-chida-rec-check at 10,000 blocks in one
/// run instead of two).
pub(crate) fn run_size_for(src: &dyn TripleSource<Gf2p64>, max: Option<usize>) -> Option<usize> {
    max.map(|m| {
        if wide_bytes::applies(src) {
            m.saturating_mul(wide::K / octal::K)
        } else {
            m
        }
    })
}

/// The number of halving levels for `len` triples: `⌈log2 max(len, 1)⌉`.
pub fn levels(len: usize) -> u32 {
    len.max(1).next_power_of_two().trailing_zeros()
}

/// Runs Protocol 2 on `src` (see the module documentation). Returns this party's local
/// result (`σ = 0`); the caller must follow with a compare-view that carries it
/// ([`crate::Party::compare_view_after`]) before accepting. Errors are network errors and
/// aborts notified by a peer; a failed check is `Ok(false)`, so that the party still takes
/// part in the compare-view and its neighbours abort too.
pub fn verify<V: VerifyField, M: SecurityModel>(
    party: &mut Party<M>,
    src: &dyn TripleSource<V>,
) -> Result<bool, EngineError> {
    let runs = start_group(party, &[src])?;
    finish(party, runs)
}

/// Runs Protocol 2 on each of `runs`, independent runs with their own seeds, and returns
/// whether all of them passed (the caller follows with a compare-view, as for [`verify`]).
/// The runs go side by side, one message per round with every run's values: their seeds in
/// one opening, their first levels and halvings in the rounds of the run with the most (in
/// groups whose folded vectors take at most 64 MiB per party, `GROUP_BYTES`; the groups one
/// after the other), then their steps of eight (module `tail`) and their `CheckTriple`s (up
/// to 64 runs at a time): the same bytes as running them one after the other, in the rounds
/// of one run.
pub fn verify_runs<'a, V: VerifyField, M: SecurityModel>(
    party: &mut Party<M>,
    runs: impl IntoIterator<Item = &'a dyn TripleSource<V>>,
) -> Result<bool, EngineError> {
    verify_runs_parked(party, runs, &mut Vec::new(), true)
}

/// [`verify_runs`] that parks the runs' claims in `parked` (after those parked there before)
/// and, unless `last`, leaves them there for a later call: a segment's check
/// ([`crate::Party::checkpoint`]) parks its runs, and the finalize check takes their steps and
/// `CheckTriple`s side by side with its own. Returns whether the runs finished in this call
/// passed (`true` if none did); whenever [`PARKED_MAX`] claims are parked, they finish.
pub(crate) fn verify_runs_parked<'a, V: VerifyField, M: SecurityModel>(
    party: &mut Party<M>,
    runs: impl IntoIterator<Item = &'a dyn TripleSource<V>>,
    parked: &mut Vec<Parked<V>>,
    last: bool,
) -> Result<bool, EngineError> {
    let mut ok = true;
    let mut group: Vec<&'a dyn TripleSource<V>> = Vec::new();
    let mut bytes = 0usize;
    for src in runs {
        let held = held_bytes(src);
        let full = parked.len() + group.len() >= PARKED_MAX;
        if !group.is_empty() && (full || bytes.saturating_add(held) > GROUP_BYTES) {
            parked.extend(start_group(party, &core::mem::take(&mut group))?);
            bytes = 0;
        }
        if parked.len() >= PARKED_MAX {
            ok &= finish(party, core::mem::take(parked))?;
        }
        group.push(src);
        bytes = bytes.saturating_add(held);
    }
    parked.extend(start_group(party, &group)?);
    if last || parked.len() >= PARKED_MAX {
        ok &= finish(party, core::mem::take(parked))?;
    }
    Ok(ok)
}

/// The most runs [`verify_runs`] holds for their last steps at once (each at most
/// `tail::MAX_LEN` entries of four vectors, 128 KiB in `GF(2^64)`): 8 MiB.
const PARKED_MAX: usize = 64;

/// The most bytes of folded vectors ([`held_bytes`]) that the runs of one group of
/// [`verify_runs`] hold at once, their levels side by side (a run that takes more goes alone):
/// the check's working memory stays near that of its largest run, as with a segment's records
/// ([`crate::Party::checkpoint`]).
const GROUP_BYTES: usize = 64 << 20;

/// About the bytes of the vectors that a run over `src` folds and holds through its levels
/// (four of `⌈L/k⌉` elements after a k-ary first level, else about four of `L/2`).
fn held_bytes<V: VerifyField>(src: &dyn TripleSource<V>) -> usize {
    let k = V::octal_nodes(src).map_or(2, |nodes| nodes.len().div_ceil(2));
    src.len()
        .div_ceil(k.max(1))
        .saturating_mul(4 * core::mem::size_of::<V>())
}

/// A run of Protocol 2 after its levels down to its steps of eight or its last triple.
#[derive(Debug)]
pub(crate) enum Parked<V> {
    /// The claim `Σ x_j y_j = z` for the steps of module `tail`: `[x_1, x_2, y_1, y_2]` and `z`.
    Steps([Vec<V>; 4], RssVec<V>),
    /// The last triple `[x, y, z]` for `CheckTriple`.
    Last([RssVec<V>; 3]),
}

/// A run of [`start_group`] between two of its rounds.
enum Stage<'a, V> {
    /// Its k-ary first level's local part (module `octal`), before the reshare and the coin.
    Octal(&'a dyn TripleSource<V>, [u8; 16], OctalFirst<V>),
    /// A halving prover with the sums of its next level and the claim; `true` after a k-ary
    /// first level (the last levels then go in steps of eight).
    Halving(Prover<'a, V>, Sums<V>, RssVec<V>, bool),
    /// Parked for [`finish`].
    Done(Parked<V>),
}

/// The runs' seeds, first levels and halvings (module docs) side by side: each round one
/// reshare with every active run's values (in the order of `srcs`) and one opening of a coin
/// per active run, after all of them. Each run keeps its own seed and coins, and a run's
/// values are fixed before its coin, so the soundness argument is that of each run alone.
/// Returns the runs' claims for [`finish`], in the order of `srcs`.
fn start_group<'a, V: VerifyField, M: SecurityModel>(
    party: &mut Party<M>,
    srcs: &[&'a dyn TripleSource<V>],
) -> Result<Vec<Parked<V>>, EngineError> {
    if srcs.is_empty() {
        return Ok(Vec::new());
    }
    let seeds = toss_seeds::<V, M>(party, srcs.len())?;
    let mut spare = core::mem::take(&mut party.spare);
    let mut stages: Vec<Stage<'a, V>> = srcs
        .iter()
        .zip(seeds)
        .map(|(src, seed)| first_stage(*src, seed, &mut spare))
        .collect();
    loop {
        stages = stages.into_iter().map(|st| park(st, &mut spare)).collect();
        let mut values = Vec::new();
        let mut active = 0;
        for st in &stages {
            match st {
                Stage::Octal(_, _, first) => values.extend_from_slice(first.extra()),
                Stage::Halving(_, sums, _, _) => values.extend([sums.h1, sums.hu]),
                Stage::Done(_) => continue,
            }
            active += 1;
        }
        if active == 0 {
            break;
        }
        let shared = party.additive_to_rss(values, ReshareTo::Prev)?;
        let mut coins = party.coins_in::<V>(active)?.into_iter();
        let mut at = 0;
        stages = stages
            .into_iter()
            .map(|st| advance(st, &shared, &mut at, &mut coins, &mut spare))
            .collect::<Result<_, _>>()?;
    }
    party.spare = spare;
    Ok(stages
        .into_iter()
        .filter_map(|st| match st {
            Stage::Done(p) => Some(p),
            _ => None,
        })
        .collect())
}

/// A run's first stage: its single (padded) triple, combined with its coefficient, if it has
/// at most one; else its k-ary first level's local part, or the sums of its first halving.
fn first_stage<'a, V: VerifyField>(
    src: &'a dyn TripleSource<V>,
    seed: [u8; 16],
    spare: &mut Spare,
) -> Stage<'a, V> {
    let n = src.len().max(1).next_power_of_two();
    if n == 1 {
        // No halving.
        let mut t = LiftedTriples::zeros(1);
        src.lift(0, Parts::Xyz, &mut t);
        let mut c = [V::ZERO];
        Coefficients::new(seed).fill(0, &mut c);
        let c = c[0];
        return Stage::Done(Parked::Last([
            scalar_times(c, &t.x),
            t.y,
            scalar_times(c, &t.z),
        ]));
    }
    match octal_sums(src, &seed) {
        Some(first) => Stage::Octal(src, seed, first),
        None => {
            // Current claim: Σ x'_k y'_k = z.
            let (prover, sums) = Prover::start(src, seed, spare);
            let z = single(sums.z[0], sums.z[1]);
            Stage::Halving(prover, sums, z, false)
        }
    }
}

/// After a k-ary first level, a claim short enough for the steps of eight (module `tail`)
/// parks; its prover's vectors go back to `spare`.
fn park<'a, V: VerifyField>(st: Stage<'a, V>, spare: &mut Spare) -> Stage<'a, V> {
    match st {
        Stage::Halving(mut prover, sums, z, true) if prover.len <= tail::MAX_LEN => {
            match prover.claim() {
                Some(v) => {
                    prover.release(spare);
                    Stage::Done(Parked::Steps(v, z))
                }
                None => Stage::Halving(prover, sums, z, true),
            }
        }
        other => other,
    }
}

/// A run's step with the next of `coins` and its reshared values, which start at `*at` in
/// `shared` (`*at` moves past them); a parked run stays as it is and takes neither.
fn advance<'a, V: VerifyField>(
    st: Stage<'a, V>,
    shared: &RssVec<V>,
    at: &mut usize,
    coins: &mut impl Iterator<Item = V>,
    spare: &mut Spare,
) -> Result<Stage<'a, V>, EngineError> {
    if matches!(st, Stage::Done(_)) {
        return Ok(st);
    }
    let short =
        || EngineError::Unsupported("verify: fewer reshared values or coins than sent".into());
    let s = coins.next().ok_or_else(short)?;
    let mut take = |count: usize| {
        let v = shared.slice(*at..*at + count).ok_or_else(short)?;
        *at += count;
        Ok::<_, EngineError>(v)
    };
    Ok(match st {
        Stage::Octal(src, seed, first) => {
            let q = take(first.extra().len())?;
            let (prover, sums, z) = octal_level(src, seed, first, &q, s, spare)?;
            Stage::Halving(prover, sums, z, true)
        }
        Stage::Halving(mut prover, _, z, kary) => {
            let h = take(2)?;
            let (h1, hu) = (
                single(h.first[0], h.second[0]),
                single(h.first[1], h.second[1]),
            );
            let h0 = sub(&z, &h1);
            let z = interpolate([&h0, &h1, &hu], s);
            match prover.fold(s, spare) {
                Some(next) => Stage::Halving(prover, next, z, kary),
                None => {
                    let [x1, x2, y1, y2] = prover.last();
                    prover.release(spare);
                    Stage::Done(Parked::Last([single(x1, x2), single(y1, y2), z]))
                }
            }
        }
        done @ Stage::Done(_) => done,
    })
}

/// The runs' steps of eight side by side, then their `CheckTriple`s side by side: whether
/// every run passed.
fn finish<V: VerifyField, M: SecurityModel>(
    party: &mut Party<M>,
    parked: Vec<Parked<V>>,
) -> Result<bool, EngineError> {
    let mut last = Vec::with_capacity(parked.len());
    let mut claims = Vec::new();
    for p in parked {
        match p {
            Parked::Steps(v, z) => claims.push((v, z)),
            Parked::Last(t) => last.push(t),
        }
    }
    last.extend(tail::run_all(party, claims)?);
    check_triples(party, &last)
}

/// What [`VerifyField::octal_fold`] returns: the sums `[H(1), H(u)]` of the halving after the
/// fold and the part of `Q(s)` per component of the data nodes left to the fold.
#[doc(hidden)]
pub type OctalFolded<V> = ([V; 2], [V; 2]);

/// A prover after its first level: the prover, the sums of its next level and the claim.
type Started<'a, V> = (Prover<'a, V>, Sums<V>, RssVec<V>);

/// The k-ary first level's local part before its coin (module `octal`), if a run of `src`
/// takes it: nodes, the number of blocks and the sums of [`VerifyField::octal_sums`].
struct OctalFirst<V> {
    nodes: Vec<V>,
    blocks: usize,
    sums: Vec<V>,
}

impl<V> OctalFirst<V> {
    /// This party's additive shares of the values at the extra nodes, which it reshares.
    fn extra(&self) -> &[V] {
        let k = self.nodes.len().div_ceil(2);
        self.sums.get(2 * k..).unwrap_or(&[])
    }
}

fn octal_sums<V: VerifyField>(src: &dyn TripleSource<V>, seed: &[u8; 16]) -> Option<OctalFirst<V>> {
    let nodes = V::octal_nodes(src)?;
    let k = nodes.len().div_ceil(2);
    let blocks = src.len().div_ceil(k);
    match V::octal_sums(src, seed, blocks) {
        Some(sums) if sums.len() == nodes.len() + k => Some(OctalFirst {
            nodes,
            blocks,
            sums,
        }),
        _ => None,
    }
}

/// The rest of the k-ary first level with the reshared values `q` at the extra nodes
/// (`Q(α_k) .. Q(α_{2k-2})`; `Q(α_m) = D_m` at the data nodes is already replicated) and the
/// coin `s`: folds, and returns the halving prover of the claim `Q(s)` of length `⌈L/k⌉` with
/// its first sums.
fn octal_level<'a, V: VerifyField>(
    src: &'a dyn TripleSource<V>,
    seed: [u8; 16],
    first: OctalFirst<V>,
    q: &RssVec<V>,
    s: V,
    spare: &mut Spare,
) -> Result<Started<'a, V>, EngineError> {
    let OctalFirst {
        nodes,
        blocks,
        sums,
    } = first;
    let k = nodes.len().div_ceil(2);
    let lambda = lagrange_slice(&nodes, s);
    let mut out: [Vec<V>; 4] = core::array::from_fn(|_| spare.take::<V>(blocks));
    let half = folded_half(blocks);
    let Some(([h1, hu], folded)) = V::octal_fold(
        src,
        &seed,
        s,
        &lambda,
        out.each_mut().map(|v| &mut v[..]),
        half,
    ) else {
        return Err(EngineError::Unsupported(
            "verify: a source lost its byte form between the passes of the first level".into(),
        ));
    };
    // Per component t: Q(s) from the data nodes' D_m (those of the sums, and the part the
    // fold formed) and the extra nodes' reshared values.
    let at_s = |t: usize, q: &[V]| {
        let data = (0..k).fold(folded[t], |acc, m| acc + lambda[m] * sums[2 * m + t]);
        (k..nodes.len()).fold(data, |acc, n| acc + lambda[n] * q[n - k])
    };
    let z = single(at_s(0, &q.first), at_s(1, &q.second));
    let sums = Sums {
        z: [V::ZERO; 2],
        h1,
        hu,
    };
    let prover = Prover::from_folded(src, seed, out, half);
    Ok((prover, sums, z))
}

/// Most vectors [`Spare`] keeps: the four folded vectors of the k-ary level for each of two
/// runs of different lengths, and one more.
const SPARE_MAX: usize = 9;

/// A kept vector and its size in bytes.
type Kept = (usize, Box<dyn Any + Send>);

/// The folded vectors of a party's last verification, kept for its next one: a run verified
/// in segments ([`crate::Party::checkpoint`]) folds vectors of about the same length every
/// time, and level 1 then writes them into memory that is neither zero-filled again nor
/// faulted in fresh. Level 1 writes every element of its vectors (the transcript tests run
/// with vectors full of other values), so what they held before does not matter. At most
/// [`SPARE_MAX`] vectors, of any check field. When the party ends, its vectors go to the
/// process's [`SparePool`], where the next party (the next repetition of a benchmark, a
/// service's next batch) finds them.
#[derive(Default)]
pub(crate) struct Spare(Vec<Kept>);

impl core::fmt::Debug for Spare {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        write!(f, "Spare({} vectors)", self.0.len())
    }
}

impl Spare {
    /// A vector of length `len`: a kept one with room for it (its old values in place; zeros
    /// where it grows; [`take_fitting`]), else one from the process's pool, else a new one of
    /// zeros (a vector of the pool that is too small is dropped, not grown: growing would copy
    /// its old values, which no one reads). The party's own vectors that are too small stay:
    /// a check of runs of two lengths (records of two kinds, `kind_groups`) takes a set of
    /// vectors for each, and had it dropped the shorter run's, the longer run would have grown
    /// them every time, writing zeros (for mal-gf4-circuit-opt at 10,000 blocks a tenth of its
    /// finalize samples were `memset`).
    fn take<V: VerifyField>(&mut self, len: usize) -> Vec<V> {
        let kept = take_fitting::<V>(&mut self.0, len, false)
            .or_else(|| SparePool::global(|p| take_fitting::<V>(&mut p.kept, len, true)));
        match kept {
            Some(mut v) => {
                v.truncate(len);
                v.resize(len, V::ZERO);
                v
            }
            None => V::zeroed_vec(len),
        }
    }

    /// Keeps `v` for a later [`Spare::take`]: while there is room, else in place of the
    /// smallest kept vector if that is smaller.
    fn put<V: VerifyField>(&mut self, v: Vec<V>) {
        let bytes = v.capacity() * core::mem::size_of::<V>();
        if bytes == 0 {
            return;
        }
        if self.0.len() < SPARE_MAX {
            self.0.push((bytes, Box::new(v)));
        } else if let Some(min) = self.0.iter_mut().min_by_key(|k| k.0) {
            if min.0 < bytes {
                *min = (bytes, Box::new(v));
            }
        }
    }
}

impl Drop for Spare {
    fn drop(&mut self) {
        let kept = core::mem::take(&mut self.0);
        SparePool::global(|p| kept.into_iter().for_each(|k| p.give(k)));
    }
}

/// A kept `Vec<V>` with room for `len` elements, removed from `kept`: of those already at
/// least `len` long (taken without writing a zero), the one of least capacity; else the
/// longest. If none has room and `drop_small`, a kept `Vec<V>` that is too small is dropped
/// (it would only be a copy to grow).
fn take_fitting<V: VerifyField>(
    kept: &mut Vec<Kept>,
    len: usize,
    drop_small: bool,
) -> Option<Vec<V>> {
    let rank = |b: &Box<dyn Any + Send>| {
        let v = b.downcast_ref::<Vec<V>>()?;
        (v.capacity() >= len).then(|| {
            if v.len() >= len {
                (1, usize::MAX - v.capacity())
            } else {
                (0, v.len())
            }
        })
    };
    let best = (kept.iter().enumerate())
        .filter_map(|(i, (_, b))| Some((rank(b)?, i)))
        .max();
    match best {
        Some((_, i)) => kept.swap_remove(i).1.downcast::<Vec<V>>().ok().map(|v| *v),
        None => {
            if drop_small {
                if let Some(i) = kept.iter().position(|(_, b)| b.is::<Vec<V>>()) {
                    kept.swap_remove(i);
                }
            }
            None
        }
    }
}

/// Most bytes the process's [`SparePool`] keeps.
const POOL_MAX_BYTES: usize = 128 << 20;

/// Folded vectors of parties that have ended, for the next parties of this process (see
/// [`Spare`]): up to [`POOL_MAX_BYTES`] (vectors beyond that are freed). What they hold is
/// overwritten before it is read, as with [`Spare`].
#[derive(Default)]
struct SparePool {
    kept: Vec<Kept>,
}

impl SparePool {
    /// Runs `f` on the process's pool (a poisoned lock is taken over: the pool is only a list
    /// of vectors).
    fn global<R>(f: impl FnOnce(&mut SparePool) -> R) -> R {
        static POOL: std::sync::Mutex<SparePool> =
            std::sync::Mutex::new(SparePool { kept: Vec::new() });
        f(&mut POOL.lock().unwrap_or_else(|e| e.into_inner()))
    }

    /// The bytes kept.
    fn bytes(&self) -> usize {
        self.kept.iter().map(|(b, _)| b).sum()
    }

    /// Keeps `k` if it fits within [`POOL_MAX_BYTES`].
    fn give(&mut self, k: Kept) {
        if self.bytes() + k.0 <= POOL_MAX_BYTES {
            self.kept.push(k);
        }
    }
}

/// This party's local side of the halvings (everything but the resharing and the coins).
struct Prover<'a, V> {
    src: &'a dyn TripleSource<V>,
    co: Coefficients<V>,
    /// Length of the current claim (`n` at level 1).
    len: usize,
    /// The current level pairs `j` with `j + half`.
    half: usize,
    /// The folded vectors `[[x']]`, `[[y']]` (after level 1).
    folded: Option<Folded<V>>,
}

impl<'a, V: VerifyField> Prover<'a, V> {
    /// Level 1's sums for `src` (at least two triples after padding, `n ≥ 2`).
    /// Level 1 takes its vectors from `spare` ([`Prover::release`] gives them back).
    fn start(src: &'a dyn TripleSource<V>, seed: [u8; 16], spare: &mut Spare) -> (Self, Sums<V>) {
        let n = src.len().max(1).next_power_of_two();
        let half = first_half(src.len(), n);
        // Pass A keeps `X = c x` for pass B where that is cheaper than forming it again (a
        // source read in place; `h` even, so that both halves of level 2 are whole).
        let keep = src.in_place() && half > 1 && half.is_multiple_of(2);
        let mut kept = keep.then(|| [spare.take(2 * half), spare.take(2 * half)]);
        let co = Coefficients::new(seed);
        let sums = source_sums(src, &co, half, kept.as_mut());
        let prover = Prover {
            src,
            co,
            len: n,
            half,
            folded: kept.map(Folded::Scaled),
        };
        (prover, sums)
    }

    /// The prover of a claim already folded to `v = [x_1, x_2, y_1, y_2]` (by the k-ary first
    /// level, which also formed the sums of the first halving, pairing `j` with `j + half`).
    fn from_folded(
        src: &'a dyn TripleSource<V>,
        seed: [u8; 16],
        v: [Vec<V>; 4],
        half: usize,
    ) -> Self {
        Prover {
            src,
            co: Coefficients::new(seed),
            len: v[0].len(),
            half,
            folded: Some(Folded::Four(v)),
        }
    }

    /// Gives the folded vectors to `spare`.
    fn release(mut self, spare: &mut Spare) {
        match self.folded.take() {
            Some(Folded::Four(v)) => v.into_iter().for_each(|v| spare.put(v)),
            Some(Folded::Two(v, _) | Folded::XOnly(v, _) | Folded::Scaled(v)) => {
                v.into_iter().for_each(|v| spare.put(v))
            }
            None => {}
        }
    }

    /// Folds the current level with its coin `s`; the next level's sums unless this was the
    /// last level.
    /// Level 1's fold takes its vectors from `spare`.
    fn fold(&mut self, s: V, spare: &mut Spare) -> Option<Sums<V>> {
        let half = self.half;
        let more = half > 1;
        let (folded, sums) = match self.folded.take() {
            None => source_fold(self.src, &self.co, half, s, more, spare),
            Some(Folded::Scaled(mut x)) => {
                let sums = fold_scaled(self.src, &mut x, half, s, more);
                (Folded::Two(x, half), sums)
            }
            Some(Folded::XOnly(mut x, s1)) => {
                let sums = fold_x_only(self.src, &mut x, self.len, s1, s, more);
                (Folded::Two(x, half), sums)
            }
            Some(mut f) => {
                let sums = match f.views() {
                    Some(v) => fold_level(v, half, self.len, s, more),
                    None => Sums::ZERO,
                };
                (f, sums)
            }
        };
        self.folded = Some(folded);
        self.len = half;
        self.half = half.div_ceil(2);
        more.then_some(sums)
    }

    /// The current claim's vectors `[x_1, x_2, y_1, y_2]` (their first `len` entries, copied),
    /// if the prover holds them folded.
    fn claim(&mut self) -> Option<[Vec<V>; 4]> {
        let len = self.len;
        let v = self.folded.as_mut().and_then(Folded::views)?;
        Some(v.map(|w| w.get(..len).map_or_else(Vec::new, <[V]>::to_vec)))
    }

    /// The last triple `[x1, x2, y1, y2]` (after the last fold).
    fn last(&mut self) -> [V; 4] {
        match self.folded.as_mut().and_then(Folded::views) {
            Some(v) => v.map(|v| v.first().copied().unwrap_or(V::ZERO)),
            None => [V::ZERO; 4],
        }
    }
}

/// Protocol 1 `CheckTriple` with the randomisation by `τ` (PROTOCOLS.md §5.4 step 3) on each
/// of the triples `[x, y, z]` (single-element sharings), all of them in the same messages:
/// whether every one passed (`true` for none, with no messages).
fn check_triples<V: VerifyField, M: SecurityModel>(
    party: &mut Party<M>,
    last: &[[RssVec<V>; 3]],
) -> Result<bool, EngineError> {
    let r = last.len();
    if r == 0 {
        return Ok(true);
    }
    // The r triples as vectors of r elements.
    let column = |p: usize| {
        let one = |v: &[V]| v.first().copied().unwrap_or(V::ZERO);
        RssVec {
            first: last.iter().map(|t| one(&t[p].first)).collect(),
            second: last.iter().map(|t| one(&t[p].second)).collect(),
        }
    };
    let (x, y, z) = (column(0), column(1), column(2));
    let x_star = party.random_rss::<V>(r);
    let tau = party.random_rss::<V>(r);
    let z_star = party.mul_covered(&x_star, &y)?;
    let t = party.coins_in::<V>(r)?;
    let mut rho_sh = public_times(&t, &x_star);
    rho_sh.add_assign(&x);
    let rho = party.open(&rho_sh)?;
    // δ = ρ y - z - t z*
    let delta = sub(
        &sub(&public_times(&rho, &y), &z),
        &public_times(&t, &z_star),
    );
    let sigma_sh = party.mul_covered(&delta, &tau)?;
    let sigma = party.open(&sigma_sh)?;
    Ok(sigma.len() == r && sigma.iter().all(|s| s.is_zero()))
}

/// `c_i [[x_i]]` element-wise for public `c` (the field's bulk product, on the common prefix).
fn public_times<V: VerifyField>(c: &[V], x: &RssVec<V>) -> RssVec<V> {
    let f = |v: &[V]| {
        let n = v.len().min(c.len());
        let mut out = V::zeroed_vec(n);
        V::mul_slice(&mut out, &v[..n], &c[..n]);
        out
    };
    RssVec {
        first: f(&x.first),
        second: f(&x.second),
    }
}

/// The byte fast path of level 1 for triples over `GF(2^8)` (or a field embedded in it):
/// local products are computed on the bytes, and only what enters a sum is lifted.
///
/// With `ψ` the byte embedding into `GF(2^8)` and `E = E_8`, the lift is `E ∘ ψ`, a ring
/// homomorphism, so `lp(c E(x), E(y)) = c E(lp(x, y))` with `lp(x, y) = x_1 (y_1 + y_2) +
/// x_2 y_1` computed in `GF(2^8)`. Pass A needs, per pair `(lo, hi)`, `P_ab = lp(x_a, y_b)`:
/// `H(1) = Σ c_hi E(P_hh)` and, by bilinearity of `lp` (characteristic 2, node `u`),
/// `H(u) = Σ c_lo [(1+u)^2 E(P_ll) + u(1+u) E(P_lh)] + u^2 H(1) + u(1+u) Σ c_hi E(P_hl)`; the
/// first bracket is one lift of a byte pair by scaled nibble tables. Pass B: `x' = c_lo ·
/// (1+s) E(x_lo) + c_hi · s E(x_hi)` and `y' = (1+s) E(y_lo) + s E(y_hi)`, lifts by tables
/// scaled by `1+s` and `s` (no product at all for `y`).
pub(crate) mod bytes;

#[cfg(test)]
mod tests;
