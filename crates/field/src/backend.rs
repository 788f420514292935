//! Run-time selected implementations of the slice operations.
//!
//! A backend is picked once per process by [`active`]: the best one the CPU supports
//! ([`best_available`], detected with `std::is_x86_feature_detected!`), unless the environment
//! variable [`ENV_VAR`] (`TRISKELE_BACKEND`) names another available one. `TRISKELE_BACKEND=portable`
//! forces the portable code; `auto`, an empty value or no variable mean detection; a name of a
//! backend this CPU lacks, or an unknown name, also falls back to detection ([`parse_request`]
//! reports unknown names as [`BackendRequest::Unknown`] so that a front end can warn).
//!
//! Every accelerated operation also exists with an explicit backend argument
//! (`Gf2p8::mul_slice_with`, `LinearMap8::apply_slice_with`, `Gf2p64::inner_product_with`, ...),
//! for tests and benchmarks; asking for a backend the CPU lacks runs the portable code, never
//! an illegal instruction. All backends give bit-identical results.
//!
//! Files: `portable.rs` (any CPU; the portable `GF(2^4)` kernels are `crate::gf2p4::portable`),
//! `avx2.rs` (AVX2, PCLMULQDQ, VPCLMULQDQ, and the SSE2 streaming scatter), `gfni.rs` (GFNI on 256- and 512-bit vectors; tested
//! against the portable code on CPUs that have GFNI), `fp_ifma.rs` (the `F_p` slice kernels on
//! AVX-512 IFMA, used by `Gfni512`), `cast.rs` (slice reinterpretation of the `#[repr(transparent)]` element types). The
//! SIMD code is compiled with `#[target_feature]`; each file that needs `unsafe` allows it
//! locally and documents every block.

#[cfg(target_arch = "x86_64")]
mod avx2;
pub(crate) mod cast;
#[cfg(target_arch = "x86_64")]
pub(crate) mod fp_ifma;
#[cfg(target_arch = "x86_64")]
mod gfni;
mod portable;

use std::sync::OnceLock;

use crate::{gf2p4, LinearMap8};

/// The environment variable read once by [`active`].
pub const ENV_VAR: &str = "TRISKELE_BACKEND";

/// An implementation of the accelerated slice operations.
///
/// | backend | needs | `GF(2^8)` products | linear maps | `GF(2^64)` | `F_p`, `p = 2^127+45` |
/// |---|---|---|---|---|---|
/// | `Portable` | — | 64-bit SWAR | nibble tables | integer-multiply CLMUL | 64-bit `mul` |
/// | `Avx2` | AVX2, PCLMULQDQ | AVX2 shift-and-add | `vpshufb` | PCLMULQDQ | 64-bit `mul` |
/// | `Avx2Vpclmul` | + VPCLMULQDQ | AVX2 shift-and-add | `vpshufb` | VPCLMULQDQ (4 lanes) | 64-bit `mul` |
/// | `Gfni` | GFNI, AVX2, VPCLMULQDQ | `vgf2p8mulb` ymm | `vgf2p8affineqb` ymm | VPCLMULQDQ | 64-bit `mul` |
/// | `Gfni512` | + AVX-512F/BW | `vgf2p8mulb` zmm | `vgf2p8affineqb` zmm | VPCLMULQDQ | AVX-512 IFMA (8 lanes) if the CPU has IFMA and DQ, else 64-bit `mul` |
///
/// On every backend but `Portable`, the byte embeddings into `GF(2^64)` use AVX2 `vpshufb`
/// (fused with VPCLMULQDQ products where available; `Gfni512` maps bytes to words with
/// `vgf2p8affineqb` per byte plane, and with AVX-512 VBMI forms sums of embedded bytes times
/// coefficients as bit sums), the `GF(2^4)` slice products use AVX2 shifts and masks on `Avx2`
/// and `Avx2Vpclmul` and, on `Gfni` and `Gfni512`, `vgf2p8mulb` of the nibbles (whose product,
/// of degree at most 6, the AES polynomial never reduces) and one `vgf2p8affineqb` that reduces
/// it modulo `u^4 + u + 1`, nibble packing uses AVX2 (the portable code uses 64-bit SWAR for
/// both), and the AES-128-CTR keystream of
/// [`crate::ctr`] uses VAES, else AES-NI, whatever the CPU has.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[non_exhaustive]
pub enum Backend {
    /// Plain Rust, any CPU.
    Portable,
    /// x86-64 with AVX2 and PCLMULQDQ.
    Avx2,
    /// x86-64 with AVX2, PCLMULQDQ and VPCLMULQDQ.
    Avx2Vpclmul,
    /// x86-64 with GFNI, AVX2, PCLMULQDQ and VPCLMULQDQ (256-bit vectors).
    Gfni,
    /// As [`Backend::Gfni`], with AVX-512F/BW for 512-bit GFNI vectors.
    Gfni512,
}

impl Backend {
    /// All backends, in increasing order of preference.
    pub const ALL: [Backend; 5] = [
        Backend::Portable,
        Backend::Avx2,
        Backend::Avx2Vpclmul,
        Backend::Gfni,
        Backend::Gfni512,
    ];

    /// The name used by [`ENV_VAR`] and in reports: `portable`, `avx2`, `avx2-vpclmul`,
    /// `gfni`, `gfni-avx512`.
    pub const fn name(self) -> &'static str {
        match self {
            Backend::Portable => "portable",
            Backend::Avx2 => "avx2",
            Backend::Avx2Vpclmul => "avx2-vpclmul",
            Backend::Gfni => "gfni",
            Backend::Gfni512 => "gfni-avx512",
        }
    }

    /// The backend called `name` (ASCII case-insensitive, surrounding blanks ignored).
    pub fn from_name(name: &str) -> Option<Self> {
        let name = name.trim();
        Self::ALL
            .into_iter()
            .find(|b| b.name().eq_ignore_ascii_case(name))
    }

    /// Whether this CPU can run the backend.
    pub fn is_available(self) -> bool {
        available().contains(&self)
    }
}

impl core::fmt::Display for Backend {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str(self.name())
    }
}

/// What the value of [`ENV_VAR`] asks for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BackendRequest {
    /// No value, an empty value or `auto`: use [`best_available`].
    Auto,
    /// A backend by name.
    Force(Backend),
    /// A value that names no backend (treated like [`BackendRequest::Auto`]).
    Unknown,
}

/// Parses the value of [`ENV_VAR`] (pure; `None` = variable not set).
pub fn parse_request(value: Option<&str>) -> BackendRequest {
    match value.map(str::trim) {
        None | Some("") => BackendRequest::Auto,
        Some(v) if v.eq_ignore_ascii_case("auto") => BackendRequest::Auto,
        Some(v) => Backend::from_name(v).map_or(BackendRequest::Unknown, BackendRequest::Force),
    }
}

/// The backend a request selects on this CPU: the forced one if it is available, else
/// [`best_available`].
pub fn resolve(request: BackendRequest) -> Backend {
    match request {
        BackendRequest::Force(b) if b.is_available() => b,
        _ => best_available(),
    }
}

/// The most preferred backend this CPU supports (ignores [`ENV_VAR`]).
pub fn best_available() -> Backend {
    available().last().copied().unwrap_or(Backend::Portable)
}

/// The backends this CPU supports, in increasing order of preference (`Portable` first).
pub fn available() -> &'static [Backend] {
    &caps().available
}

/// The backend used by the `Bulk` implementations and the `apply_*` methods: detected at the
/// first call and fixed for the life of the process (honours [`ENV_VAR`]).
pub fn active() -> Backend {
    static ACTIVE: OnceLock<Backend> = OnceLock::new();
    *ACTIVE.get_or_init(|| {
        let value = std::env::var(ENV_VAR).ok();
        resolve(parse_request(value.as_deref()))
    })
}

/// Proofs of CPU features, detected once.
struct Caps {
    #[cfg(target_arch = "x86_64")]
    avx2: Option<avx2::Avx2>,
    #[cfg(target_arch = "x86_64")]
    vpclmul: Option<avx2::Vpclmul>,
    #[cfg(target_arch = "x86_64")]
    gfni: Option<gfni::Gfni>,
    #[cfg(target_arch = "x86_64")]
    gfni512: Option<gfni::Gfni512>,
    #[cfg(target_arch = "x86_64")]
    aesni: Option<avx2::AesNi>,
    #[cfg(target_arch = "x86_64")]
    vaes: Option<avx2::Vaes>,
    #[cfg(target_arch = "x86_64")]
    ifma: Option<fp_ifma::Ifma>,
    #[cfg(target_arch = "x86_64")]
    vbmi: Option<gfni::GfniVbmi>,
    available: Vec<Backend>,
}

fn caps() -> &'static Caps {
    static CAPS: OnceLock<Caps> = OnceLock::new();
    CAPS.get_or_init(detect)
}

#[cfg(target_arch = "x86_64")]
fn detect() -> Caps {
    let avx2 = avx2::Avx2::detect();
    let vpclmul = avx2::Vpclmul::detect();
    let gfni = gfni::Gfni::detect();
    let gfni512 = gfni::Gfni512::detect();
    let mut available = vec![Backend::Portable];
    if avx2.is_some() {
        available.push(Backend::Avx2);
    }
    if vpclmul.is_some() {
        available.push(Backend::Avx2Vpclmul);
        if gfni.is_some() {
            available.push(Backend::Gfni);
        }
        if gfni512.is_some() {
            available.push(Backend::Gfni512);
        }
    }
    Caps {
        avx2,
        vpclmul,
        gfni,
        gfni512,
        aesni: avx2::AesNi::detect(),
        vaes: avx2::Vaes::detect(),
        ifma: fp_ifma::Ifma::detect(),
        vbmi: gfni::GfniVbmi::detect(),
        available,
    }
}

#[cfg(not(target_arch = "x86_64"))]
fn detect() -> Caps {
    Caps {
        available: vec![Backend::Portable],
    }
}

/// The implementation of the byte-field operations (`GF(2^8)` products, linear maps) that a
/// backend uses on this CPU.
#[derive(Clone, Copy)]
enum ByteOps {
    Portable,
    #[cfg(target_arch = "x86_64")]
    Avx2(avx2::Avx2),
    #[cfg(target_arch = "x86_64")]
    Gfni(gfni::Gfni),
    #[cfg(target_arch = "x86_64")]
    Gfni512(gfni::Gfni512),
}

/// The implementation of the `GF(2^64)` operations that a backend uses on this CPU.
#[derive(Clone, Copy)]
enum WordOps {
    Portable,
    #[cfg(target_arch = "x86_64")]
    Pclmul(avx2::Avx2),
    #[cfg(target_arch = "x86_64")]
    Vpclmul(avx2::Vpclmul),
}

#[cfg(target_arch = "x86_64")]
fn byte_ops(be: Backend) -> ByteOps {
    let c = caps();
    let chosen = match be {
        Backend::Portable => None,
        Backend::Avx2 | Backend::Avx2Vpclmul => c.avx2.map(ByteOps::Avx2),
        Backend::Gfni => c.gfni.map(ByteOps::Gfni),
        Backend::Gfni512 => c.gfni512.map(ByteOps::Gfni512),
    };
    chosen.unwrap_or(ByteOps::Portable)
}

#[cfg(not(target_arch = "x86_64"))]
fn byte_ops(_be: Backend) -> ByteOps {
    ByteOps::Portable
}

#[cfg(target_arch = "x86_64")]
fn word_ops(be: Backend) -> WordOps {
    let c = caps();
    let chosen = match be {
        Backend::Portable => None,
        Backend::Avx2 => c.avx2.map(WordOps::Pclmul),
        Backend::Avx2Vpclmul | Backend::Gfni | Backend::Gfni512 => c.vpclmul.map(WordOps::Vpclmul),
    };
    chosen.unwrap_or(WordOps::Portable)
}

#[cfg(not(target_arch = "x86_64"))]
fn word_ops(_be: Backend) -> WordOps {
    WordOps::Portable
}

/// The IFMA token for the `F_p` (`p = 2^127+45`) slice kernels: the 512-bit backend runs them
/// on AVX-512 IFMA where the CPU has it (and AVX-512DQ); every other backend, and a CPU without
/// IFMA, runs the portable code of `crate::fp`.
#[cfg(target_arch = "x86_64")]
pub(crate) fn fp_ifma(be: Backend) -> Option<fp_ifma::Ifma> {
    if be != Backend::Gfni512 || !be.is_available() {
        return None;
    }
    caps().ifma
}

/// The token of the vectorized [`bit_sums`]: the 512-bit backend on a CPU that also has
/// AVX-512 VBMI.
#[cfg(target_arch = "x86_64")]
fn vbmi(be: Backend) -> Option<gfni::GfniVbmi> {
    if be != Backend::Gfni512 || !be.is_available() {
        return None;
    }
    caps().vbmi
}

/// Whether [`bit_sums`] runs on `be` (else it returns `None`).
pub(crate) fn has_bit_sums(be: Backend) -> bool {
    #[cfg(target_arch = "x86_64")]
    if vbmi(be).is_some() {
        return true;
    }
    let _ = be;
    false
}

/// For every source `s` and bit `b`: `out[s][b]` = the XOR of the words `c[k]` whose byte
/// `src[s][k]` has bit `b` set, on the common prefix (`Σ_k c_k f(a_k) = Σ_b f(2^b) out[b]`
/// for a `GF(2)`-linear `f`). `None` unless `be` runs it vectorized (the 512-bit GFNI
/// backend on a CPU with AVX-512 VBMI): elsewhere other formulas are faster.
pub(crate) fn bit_sums<const N: usize>(
    be: Backend,
    c: &[u64],
    src: [&[u8]; N],
) -> Option<[[u64; 8]; N]> {
    #[cfg(target_arch = "x86_64")]
    if let Some(t) = vbmi(be) {
        return Some(gfni::bit_sums(t, c, src));
    }
    let _ = (be, c, src);
    None
}

/// [`bit_sums`] where it runs, else AVX2 on every x86-64 backend but the portable one, else
/// `None` (the caller sums with masks). Not for [`crate::embed::ByteEmbedding::inner_products`],
/// which only takes bit sums where they beat its fused products (the VBMI kernel).
pub(crate) fn bit_plane_sums<const N: usize>(
    be: Backend,
    c: &[u64],
    src: [&[u8]; N],
) -> Option<[[u64; 8]; N]> {
    if let Some(s) = bit_sums(be, c, src) {
        return Some(s);
    }
    #[cfg(target_arch = "x86_64")]
    if let (true, Some(t)) = (be != Backend::Portable, caps().avx2) {
        return Some(avx2::bit_plane_sums(t, c, src));
    }
    None
}

/// The bits of `src` as bytes 0 or 1: `out[16 k + l]` = bit `l` of `src[k]`, for the whole
/// words that fit in `out` (`min(src.len(), out.len() / 16)` of them; the rest of `out` is
/// left as it is).
pub(crate) fn bits_to_bytes(be: Backend, src: &[u16], out: &mut [u8]) {
    match byte_ops(be) {
        #[cfg(target_arch = "x86_64")]
        ByteOps::Gfni512(t) => gfni::bits_to_bytes_512(t, src, out),
        _ => portable::bits_to_bytes(src, out),
    }
}

// ---- GF(2^8) -----------------------------------------------------------------------------

/// `out[k] = a[k] * b[k]` in GF(2^8) on the common prefix.
pub(crate) fn gf2p8_mul(be: Backend, out: &mut [u8], a: &[u8], b: &[u8]) {
    match byte_ops(be) {
        ByteOps::Portable => portable::gf2p8_mul::<false>(out, a, b),
        #[cfg(target_arch = "x86_64")]
        ByteOps::Avx2(t) => avx2::gf2p8_mul::<false>(t, out, a, b),
        #[cfg(target_arch = "x86_64")]
        ByteOps::Gfni(t) => gfni::gf2p8_mul::<false>(t, out, a, b),
        #[cfg(target_arch = "x86_64")]
        ByteOps::Gfni512(t) => gfni::gf2p8_mul_512::<false>(t, out, a, b),
    }
}

/// `out[k] = a[k] * b[k] + c[k] * d[k]` in GF(2^8) on the common prefix: one pass on AVX2
/// (the products' doublings shared), else a product and a product added.
pub(crate) fn gf2p8_mul_sum2(be: Backend, out: &mut [u8], a: &[u8], b: &[u8], c: &[u8], d: &[u8]) {
    #[cfg(target_arch = "x86_64")]
    if let ByteOps::Avx2(t) = byte_ops(be) {
        return avx2::gf2p8_mul_sum2(t, out, a, b, c, d);
    }
    let n = common_len(out.len(), [a, b, c, d]);
    let out = &mut out[..n];
    gf2p8_mul(be, out, &a[..n], &b[..n]);
    gf2p8_mul_add(be, out, &c[..n], &d[..n]);
}

/// `out[k] = a[k] b[k] + c[k] d[k]` in the tower field `GF((2^4)^2)` (packed bytes) on the
/// common prefix: by logarithms of the nibbles on AVX2 without GFNI
/// ([`tower_products_preferred`]), else one by one.
pub(crate) fn tower_mul_sum2(be: Backend, out: &mut [u8], a: &[u8], b: &[u8], c: &[u8], d: &[u8]) {
    let n = common_len(out.len(), [a, b, c, d]);
    let (out, a, b, c, d) = (&mut out[..n], &a[..n], &b[..n], &c[..n], &d[..n]);
    #[cfg(target_arch = "x86_64")]
    if let ByteOps::Avx2(t) = byte_ops(be) {
        return avx2::tower_mul_sum2(t, out, a, b, c, d);
    }
    let _ = be;
    portable::tower_mul_sum2(out, a, b, c, d)
}

/// Whether `be` multiplies faster in the tower field `GF((2^4)^2)` than in `GF(2^8)`: on
/// AVX2 without GFNI, where a `GF(2^8)` product is a shift-and-add loop and a tower product
/// looks up logarithms of nibbles in registers (a sum of two products in about 60
/// instructions per 32 bytes against 89). With GFNI a `GF(2^8)` product is one instruction.
pub fn tower_products_preferred(be: Backend) -> bool {
    #[cfg(target_arch = "x86_64")]
    if let ByteOps::Avx2(_) = byte_ops(be) {
        return true;
    }
    let _ = be;
    false
}

/// The length of the common prefix of an output of `len` and the sources.
fn common_len<const N: usize>(len: usize, src: [&[u8]; N]) -> usize {
    src.iter().fold(len, |n, s| n.min(s.len()))
}

/// `out[k] += a[k] * b[k]` in GF(2^8) on the common prefix.
pub(crate) fn gf2p8_mul_add(be: Backend, out: &mut [u8], a: &[u8], b: &[u8]) {
    match byte_ops(be) {
        ByteOps::Portable => portable::gf2p8_mul::<true>(out, a, b),
        #[cfg(target_arch = "x86_64")]
        ByteOps::Avx2(t) => avx2::gf2p8_mul::<true>(t, out, a, b),
        #[cfg(target_arch = "x86_64")]
        ByteOps::Gfni(t) => gfni::gf2p8_mul::<true>(t, out, a, b),
        #[cfg(target_arch = "x86_64")]
        ByteOps::Gfni512(t) => gfni::gf2p8_mul_512::<true>(t, out, a, b),
    }
}

/// `sum_k a[k] * b[k]` in GF(2^8) over the common prefix.
pub(crate) fn gf2p8_inner(be: Backend, a: &[u8], b: &[u8]) -> u8 {
    match byte_ops(be) {
        ByteOps::Portable => portable::gf2p8_inner(a, b),
        #[cfg(target_arch = "x86_64")]
        ByteOps::Avx2(t) => avx2::gf2p8_inner(t, a, b),
        #[cfg(target_arch = "x86_64")]
        ByteOps::Gfni(t) => gfni::gf2p8_inner(t, a, b),
        #[cfg(target_arch = "x86_64")]
        ByteOps::Gfni512(t) => gfni::gf2p8_inner_512(t, a, b),
    }
}

/// `dst[k] = map(src[k])` on the common prefix.
pub(crate) fn linear_apply(be: Backend, map: &LinearMap8, src: &[u8], dst: &mut [u8]) {
    match byte_ops(be) {
        ByteOps::Portable => portable::linear_apply(map, src, dst),
        #[cfg(target_arch = "x86_64")]
        ByteOps::Avx2(t) => avx2::linear_apply(t, map, src, dst),
        #[cfg(target_arch = "x86_64")]
        ByteOps::Gfni(t) => gfni::linear_apply(t, map, src, dst),
        #[cfg(target_arch = "x86_64")]
        ByteOps::Gfni512(t) => gfni::linear_apply_512(t, map, src, dst),
    }
}

/// [`crate::subspace::CosetShift`] on the first `n` bytes: on the 512-bit GFNI backend the
/// whole 64-byte columns (one column at a time in registers), on every x86-64 backend but the
/// portable one the rest in 32-byte columns (AVX2 `vpshufb`); returns how many bytes it did (0 on the
/// portable backend: the caller does the rest by byte maps).
pub(crate) fn coset_shift(
    be: Backend,
    t: &crate::subspace::CosetShift,
    src: [&[u8]; crate::subspace::POINTS],
    dst: &mut [u8],
    stride: usize,
    n: usize,
) -> usize {
    #[cfg(target_arch = "x86_64")]
    if be != Backend::Portable {
        let mut done = 0;
        if let ByteOps::Gfni512(g) = byte_ops(be) {
            done = gfni::coset_shift_512(g, t, src, dst, stride, n);
        }
        if let (true, Some(a)) = (done < n, caps().avx2) {
            let src = src.map(|s| s.get(done..).unwrap_or_default());
            let dst = dst.get_mut(done..).unwrap_or_default();
            done += avx2::coset_shift(a, t, src, dst, stride, n - done);
        }
        return done;
    }
    let _ = (be, t, src, dst, stride, n);
    0
}

/// [`crate::subspace::SubfieldShift`] on the common prefix of all sources and outputs: the
/// transform in registers on the AVX2 backends; elsewhere sums of byte maps by the Lagrange
/// coefficients (one pass of affine products on the GFNI backends; on the portable one the
/// transform byte by byte ran at a third of the speed of the sums of maps, criterion bench
/// `gf2p8 -- extra_nodes8`).
pub(crate) fn subfield_shift(
    be: Backend,
    t: &crate::subspace::SubfieldShift,
    src: [&[u8]; crate::subspace::SUB_POINTS],
    dst: [&mut [u8]; crate::subspace::SUB_EXTRA],
) {
    #[cfg(target_arch = "x86_64")]
    if let ByteOps::Avx2(a) = byte_ops(be) {
        return avx2::subfield_shift(a, t, src, dst);
    }
    linear_apply_sums(be, t.lagrange(), src, dst);
}

/// `dst[k] = f(a[k]) ^ g(b[k])` on the common prefix: one fused pass on the GFNI backends,
/// on the AVX2 backends (nibble tables), two maps and a XOR by chunks on the portable one.
pub(crate) fn linear_apply_pair(
    be: Backend,
    [f, g]: [&LinearMap8; 2],
    a: &[u8],
    b: &[u8],
    dst: &mut [u8],
) {
    let n = a.len().min(b.len()).min(dst.len());
    let (a, b, dst) = (&a[..n], &b[..n], &mut dst[..n]);
    match byte_ops(be) {
        #[cfg(target_arch = "x86_64")]
        ByteOps::Gfni(t) => gfni::linear_apply_pair(t, [f, g], a, b, dst),
        #[cfg(target_arch = "x86_64")]
        ByteOps::Gfni512(t) => gfni::linear_apply_pair_512(t, [f, g], a, b, dst),
        #[cfg(target_arch = "x86_64")]
        ByteOps::Avx2(t) => avx2::linear_apply_sum(t, [f, g], [a, b], dst),
        _ => {
            linear_apply(be, f, a, dst);
            let mut tmp = [0u8; 256];
            for (d, b) in dst.chunks_mut(tmp.len()).zip(b.chunks(tmp.len())) {
                let t = &mut tmp[..b.len()];
                linear_apply(be, g, b, t);
                d.iter_mut().zip(t.iter()).for_each(|(d, t)| *d ^= t);
            }
        }
    }
}

/// `dst[k] = f(lo(src[k])) ^ g(hi(src[k]))` for the low and high bytes of each `u16`, on the
/// common prefix: one pass on the 512-bit GFNI backend and on the AVX2 ones (the bytes split
/// with `vpackuswb`), elsewhere by byte planes on the stack
/// and [`linear_apply_pair`].
pub(crate) fn linear_apply_pair_words(
    be: Backend,
    maps: [&LinearMap8; 2],
    src: &[u16],
    dst: &mut [u8],
) {
    let n = src.len().min(dst.len());
    let (src, dst) = (&src[..n], &mut dst[..n]);
    #[cfg(target_arch = "x86_64")]
    if let ByteOps::Gfni512(t) = byte_ops(be) {
        return gfni::linear_apply_pair_words_512(t, maps, src, dst);
    }
    #[cfg(target_arch = "x86_64")]
    if let (true, Some(t)) = (be != Backend::Portable, caps().avx2) {
        return avx2::linear_apply_pair_words(t, maps, src, dst);
    }
    let (mut lo, mut hi) = ([0u8; 256], [0u8; 256]);
    for (d, s) in dst.chunks_mut(lo.len()).zip(src.chunks(lo.len())) {
        for ((l, h), w) in lo.iter_mut().zip(hi.iter_mut()).zip(s) {
            [*l, *h] = w.to_le_bytes();
        }
        let m = s.len();
        linear_apply_pair(be, maps, &lo[..m], &hi[..m], d);
    }
}

/// `buf[k] = map(buf[k])`.
pub(crate) fn linear_apply_in_place(be: Backend, map: &LinearMap8, buf: &mut [u8]) {
    match byte_ops(be) {
        ByteOps::Portable => portable::linear_apply_in_place(map, buf),
        #[cfg(target_arch = "x86_64")]
        ByteOps::Avx2(t) => avx2::linear_apply_in_place(t, map, buf),
        #[cfg(target_arch = "x86_64")]
        ByteOps::Gfni(t) => gfni::linear_apply_in_place(t, map, buf),
        #[cfg(target_arch = "x86_64")]
        ByteOps::Gfni512(t) => gfni::linear_apply_in_place_512(t, map, buf),
    }
}

/// An AES round step on every whole 16-byte block of `buf` (see [`crate::aes_round`]): AVX2
/// on every backend but the portable one.
pub(crate) fn aes_blocks(be: Backend, step: crate::aes_round::BlockStep, buf: &mut [u8]) {
    #[cfg(target_arch = "x86_64")]
    if let Some(t) = gf2p4_avx2(be) {
        return avx2::aes_blocks(t, step, buf);
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = be;
    portable::aes_blocks(step, buf);
}

// ---- GF(2^4) -----------------------------------------------------------------------------

/// The AVX2 token for the `GF(2^4)` byte kernels and the AES block steps: every backend but the
/// portable one runs them on AVX2 (the `GF(2^4)` products excepted, which `gf2p4_mul` runs on
/// GFNI where the backend has it), provided `be` is available on this CPU.
#[cfg(target_arch = "x86_64")]
fn gf2p4_avx2(be: Backend) -> Option<avx2::Avx2> {
    if be == Backend::Portable || !be.is_available() {
        return None;
    }
    caps().avx2
}

/// `out[k] = a[k] * b[k]` (or `out[k] += a[k] * b[k]` if `accumulate`) in GF(2^4), one
/// element per byte (high nibbles of `a`, `b` ignored), on the common prefix.
pub(crate) fn gf2p4_mul(be: Backend, out: &mut [u8], a: &[u8], b: &[u8], accumulate: bool) {
    #[cfg(target_arch = "x86_64")]
    match byte_ops(be) {
        ByteOps::Gfni512(t) if accumulate => return gfni::gf2p4_mul_512::<true>(t, out, a, b),
        ByteOps::Gfni512(t) => return gfni::gf2p4_mul_512::<false>(t, out, a, b),
        ByteOps::Gfni(t) if accumulate => return gfni::gf2p4_mul::<true>(t, out, a, b),
        ByteOps::Gfni(t) => return gfni::gf2p4_mul::<false>(t, out, a, b),
        _ => {}
    }
    #[cfg(target_arch = "x86_64")]
    if let Some(t) = gf2p4_avx2(be) {
        return if accumulate {
            avx2::gf2p4_mul::<true>(t, out, a, b)
        } else {
            avx2::gf2p4_mul::<false>(t, out, a, b)
        };
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = be;
    if accumulate {
        gf2p4::portable::mul::<true>(out, a, b)
    } else {
        gf2p4::portable::mul::<false>(out, a, b)
    }
}

/// `out[k] = (src[2k] << 4) | (src[2k + 1] & 15)` for `k < min(out.len(), src.len() / 2)`:
/// the wire encoding of `GF(2^4)` pairs.
pub(crate) fn gf2p4_pack(be: Backend, src: &[u8], out: &mut [u8]) {
    #[cfg(target_arch = "x86_64")]
    if let Some(t) = gf2p4_avx2(be) {
        return avx2::gf2p4_pack(t, src, out);
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = be;
    gf2p4::portable::pack(src, out)
}

/// The wire encoding of `src` (`GF(2^4)` elements, one per byte; [`gf2p4_pack`], a last odd
/// element in a high nibble) written past the cache into `out`'s memory (cleared first; grown
/// if short), where the backend can; elsewhere `out` is handed back untouched.
pub(crate) fn gf2p4_pack_stream(be: Backend, src: &[u8], out: Vec<u8>) -> Result<Vec<u8>, Vec<u8>> {
    #[cfg(target_arch = "x86_64")]
    if let Some(t) = gf2p4_avx2(be) {
        return Ok(avx2::gf2p4_pack_stream(t, src, out));
    }
    let _ = (be, src);
    Err(out)
}

/// `out[2k] = src[k] >> 4`, `out[2k + 1] = src[k] & 15` for
/// `k < min(src.len(), out.len() / 2)`: the inverse of [`gf2p4_pack`] on canonical elements.
pub(crate) fn gf2p4_unpack(be: Backend, src: &[u8], out: &mut [u8], table: Option<&[u8; 16]>) {
    #[cfg(target_arch = "x86_64")]
    if let Some(t) = gf2p4_avx2(be) {
        return avx2::gf2p4_unpack(t, src, out, table);
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = be;
    gf2p4::portable::unpack(src, out, table)
}

/// [`gf2p4_unpack`] of several runs through their tables, added, into one or more outputs
/// ([`crate::Gf2p4::unpack_pairs_mapped_sums`]; `tables[s][o]` for run `s` and output `o`).
pub(crate) fn gf2p4_unpack_sums<const O: usize>(
    be: Backend,
    srcs: &[&[u8]],
    tables: &[[[u8; 16]; O]],
    outs: [&mut [u8]; O],
) {
    #[cfg(target_arch = "x86_64")]
    if let Some(t) = gf2p4_avx2(be) {
        return avx2::gf2p4_unpack_sums(t, srcs, tables, outs);
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = be;
    gf2p4::portable::unpack_sums(srcs, tables, outs)
}

/// `out[k] = Σ_t bit t of e[k] · T(c[k] ⊕ t)` (one byte per element) on the common prefix, for
/// the table given by its masks (see [`crate::OneHotLookup16`]).
pub(crate) fn onehot_lookup16(
    be: Backend,
    masks: &[[u16; 4]; 16],
    e: &[u16],
    c: &[u8],
    out: &mut [u8],
) {
    #[cfg(target_arch = "x86_64")]
    if let Some(t) = gf2p4_avx2(be) {
        return avx2::onehot_lookup16(t, masks, e, c, out);
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = be;
    crate::onehot::portable(masks, e, c, out)
}

// ---- GF(2^64) ----------------------------------------------------------------------------

/// `out[k] = a[k] * b[k]` in GF(2^64) on the common prefix.
pub(crate) fn gf2p64_mul(be: Backend, out: &mut [u64], a: &[u64], b: &[u64]) {
    match word_ops(be) {
        WordOps::Portable => portable::gf2p64_mul::<false>(out, a, b),
        #[cfg(target_arch = "x86_64")]
        WordOps::Pclmul(t) => avx2::gf2p64_mul_pclmul::<false>(t, out, a, b),
        #[cfg(target_arch = "x86_64")]
        WordOps::Vpclmul(t) => match byte_ops(be) {
            ByteOps::Gfni512(g) => gfni::gf2p64_mul_512::<false>(g, t, out, a, b),
            _ => avx2::gf2p64_mul_vpclmul::<false>(t, out, a, b),
        },
    }
}

/// `out[k] += a[k] * b[k]` in GF(2^64) on the common prefix.
pub(crate) fn gf2p64_mul_add(be: Backend, out: &mut [u64], a: &[u64], b: &[u64]) {
    match word_ops(be) {
        WordOps::Portable => portable::gf2p64_mul::<true>(out, a, b),
        #[cfg(target_arch = "x86_64")]
        WordOps::Pclmul(t) => avx2::gf2p64_mul_pclmul::<true>(t, out, a, b),
        #[cfg(target_arch = "x86_64")]
        WordOps::Vpclmul(t) => match byte_ops(be) {
            ByteOps::Gfni512(g) => gfni::gf2p64_mul_512::<true>(g, t, out, a, b),
            _ => avx2::gf2p64_mul_vpclmul::<true>(t, out, a, b),
        },
    }
}

/// `sum_k a[k] * b[k]` in GF(2^64) over the common prefix (one reduction at the end).
pub(crate) fn gf2p64_inner(be: Backend, a: &[u64], b: &[u64]) -> u64 {
    match word_ops(be) {
        WordOps::Portable => portable::gf2p64_inner(a, b),
        #[cfg(target_arch = "x86_64")]
        WordOps::Pclmul(t) => avx2::gf2p64_inner_pclmul(t, a, b),
        #[cfg(target_arch = "x86_64")]
        WordOps::Vpclmul(t) => match byte_ops(be) {
            ByteOps::Gfni512(g) => gfni::gf2p64_inner_512(g, t, a, b),
            _ => avx2::gf2p64_inner_vpclmul(t, a, b),
        },
    }
}

/// `[Σ lp(b), Σ lp(a + (a + b) u)]` in GF(2^64) over the positions of `a` (`b` zero from its
/// length on), `lp(x1, x2, y1, y2) = x1 (y1 + y2) + x2 y1`.
pub(crate) fn gf2p64_node_inner(be: Backend, a: [&[u64]; 4], b: [&[u64]; 4]) -> [u64; 2] {
    match word_ops(be) {
        WordOps::Portable => portable::gf2p64_node_inner(a, b),
        #[cfg(target_arch = "x86_64")]
        WordOps::Pclmul(t) => avx2::gf2p64_node_inner_pclmul(t, a, b),
        #[cfg(target_arch = "x86_64")]
        WordOps::Vpclmul(t) => match byte_ops(be) {
            ByteOps::Gfni512(g) => gfni::gf2p64_node_inner_512(g, t, a, b),
            _ => avx2::gf2p64_node_inner_vpclmul(t, a, b),
        },
    }
}

/// `sum_k a1[k] (b1[k] + b2[k]) + a2[k] b1[k]` in GF(2^64) over the common prefix (one
/// reduction at the end).
pub(crate) fn gf2p64_local_inner(
    be: Backend,
    a1: &[u64],
    a2: &[u64],
    b1: &[u64],
    b2: &[u64],
) -> u64 {
    match word_ops(be) {
        WordOps::Portable => portable::gf2p64_local_inner(a1, a2, b1, b2),
        #[cfg(target_arch = "x86_64")]
        WordOps::Pclmul(t) => avx2::gf2p64_local_inner_pclmul(t, a1, a2, b1, b2),
        #[cfg(target_arch = "x86_64")]
        WordOps::Vpclmul(t) => match byte_ops(be) {
            ByteOps::Gfni512(g) => gfni::gf2p64_local_inner_512(g, t, a1, a2, b1, b2),
            _ => avx2::gf2p64_local_inner_vpclmul(t, a1, a2, b1, b2),
        },
    }
}

/// `out[k] = lo[k] + (lo[k] + hi[k]) s` in GF(2^64) on the common prefix.
pub(crate) fn gf2p64_lerp(be: Backend, out: &mut [u64], lo: &[u64], hi: &[u64], s: u64) {
    match word_ops(be) {
        WordOps::Portable => portable::gf2p64_lerp(out, lo, hi, s),
        #[cfg(target_arch = "x86_64")]
        WordOps::Pclmul(t) => avx2::gf2p64_lerp_pclmul(t, out, lo, hi, s),
        #[cfg(target_arch = "x86_64")]
        WordOps::Vpclmul(t) => match byte_ops(be) {
            ByteOps::Gfni512(g) => gfni::gf2p64_lerp_512(g, t, out, lo, hi, s),
            _ => avx2::gf2p64_lerp_vpclmul(t, out, lo, hi, s),
        },
    }
}

/// `v[k] = v[k] + (v[k] + w[k]) s` in GF(2^64) on the common prefix.
pub(crate) fn gf2p64_lerp_assign(be: Backend, v: &mut [u64], w: &[u64], s: u64) {
    match word_ops(be) {
        WordOps::Portable => portable::gf2p64_lerp_assign(v, w, s),
        #[cfg(target_arch = "x86_64")]
        WordOps::Pclmul(t) => avx2::gf2p64_lerp_assign_pclmul(t, v, w, s),
        #[cfg(target_arch = "x86_64")]
        WordOps::Vpclmul(t) => match byte_ops(be) {
            ByteOps::Gfni512(g) => gfni::gf2p64_lerp_assign_512(g, t, v, w, s),
            _ => avx2::gf2p64_lerp_assign_vpclmul(t, v, w, s),
        },
    }
}

// ---- byte embeddings ---------------------------------------------------------------------

/// The nibble tables of a `GF(2)`-linear map from bytes to 64-bit words,
/// `f(x) = lo[x & 15] ^ hi[x >> 4]`, with their byte planes (`planes[p][v]` = byte `p` of
/// `lo[v]`, `planes[8 + p][v]` = byte `p` of `hi[v]`).
#[derive(Clone, Copy)]
pub(crate) struct NibbleTables<'a> {
    pub(crate) lo: &'a [u64; 16],
    pub(crate) hi: &'a [u64; 16],
    pub(crate) planes: &'a [[u8; 16]; 16],
    /// The `vgf2p8affineqb` matrix of each byte of the image.
    pub(crate) gfni: &'a [u64; 8],
}

/// `dst[k] = f(src[k])` on the common prefix (AVX2 `vpshufb` on every backend but the
/// portable one).
pub(crate) fn embed_bytes(be: Backend, t: &NibbleTables<'_>, src: &[u8], dst: &mut [u64]) {
    #[cfg(target_arch = "x86_64")]
    if let ByteOps::Gfni512(g) = byte_ops(be) {
        return gfni::embed_bytes_512(g, [t, t], src, None, dst);
    }
    #[cfg(target_arch = "x86_64")]
    if be != Backend::Portable {
        if let Some(a) = caps().avx2 {
            return avx2::embed_bytes(a, t, src, dst);
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = be;
    portable::embed_bytes(t.lo, t.hi, src, dst)
}

/// `dst[k] = f(a[k]) ^ g(b[k])` on the common prefix (`[f, g] = t`).
pub(crate) fn embed_byte_pairs(
    be: Backend,
    t: [&NibbleTables<'_>; 2],
    a: &[u8],
    b: &[u8],
    dst: &mut [u64],
) {
    #[cfg(target_arch = "x86_64")]
    if let ByteOps::Gfni512(g) = byte_ops(be) {
        return gfni::embed_bytes_512(g, t, a, Some(b), dst);
    }
    #[cfg(target_arch = "x86_64")]
    if be != Backend::Portable {
        if let Some(c) = caps().avx2 {
            return avx2::embed_byte_pairs(c, t, a, b, dst);
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = be;
    portable::embed_byte_pairs(t, a, b, dst)
}

/// `dst[k] = Σ_i f_i(src_i[k])` into GF(2^64) on the common prefix (`f_i = t[i]`): one
/// transpose per 64 elements on the 512-bit GFNI backend, per 32 on the other x86-64 backends
/// (AVX2 `vpshufb`), else (and for the tail) by pairs.
pub(crate) fn embed_byte_sums<const N: usize>(
    be: Backend,
    t: [&NibbleTables<'_>; N],
    src: [&[u8]; N],
    dst: &mut [u64],
) {
    let n = src.iter().fold(dst.len(), |n, s| n.min(s.len()));
    let mut done = 0;
    #[cfg(target_arch = "x86_64")]
    if let ByteOps::Gfni512(g) = byte_ops(be) {
        done = gfni::embed_bytes_sum_512(g, t, src, &mut dst[..n]);
    } else if let (true, Some(a)) = (be != Backend::Portable, caps().avx2) {
        done = avx2::embed_bytes_sum(a, t, src, &mut dst[..n]);
    }
    // The tail (and every other backend): pairs of maps, summed.
    sums_by_pairs::<u64, N, 64>(src, &mut dst[done..n], done, |i, a, b, out| match b {
        Some(b) => embed_byte_pairs(be, [t[i], t[i + 1]], a, b, out),
        None => embed_bytes(be, t[i], a, out),
    });
}

/// Whether sums `Σ_J c_J f(w_J)` that take one map per column
/// ([`crate::embed::ByteEmbedding::column_sums_with`]) are preferred on `be` to
/// [`crate::embed::ByteEmbedding::inner_products`]: where the column kernel is AVX2 and the
/// inner products do not take bit sums (the 512-bit GFNI backend with VBMI keeps those, which
/// this kernel was not measured against).
pub fn column_sums_preferred(be: Backend) -> bool {
    #[cfg(target_arch = "x86_64")]
    if be != Backend::Portable && !has_bit_sums(be) {
        return caps().avx2.is_some();
    }
    let _ = be;
    false
}

/// `out[e] = Σ_j f_j(cols[j][e])` (`planes[j]`: the byte planes of `f_j`, byte `p` of
/// `f_j(v)` at `[p][v]` and of `f_j(v << 4)` at `[8 + p][v]`), over the common length: one
/// map per column, the same for its 32 lanes. The AVX2 kernel on every x86-64 backend but the
/// portable one, else the planes one byte at a time.
pub(crate) fn embed_column_sums(
    be: Backend,
    planes: &[[[u8; 16]; 16]],
    cols: &[[u8; 32]],
) -> [u64; 32] {
    #[cfg(target_arch = "x86_64")]
    if let (true, Some(a)) = (be != Backend::Portable, caps().avx2) {
        return avx2::embed_column_sums(a, planes, cols);
    }
    let _ = be;
    let mut out = [0u64; 32];
    for (t, c) in planes.iter().zip(cols) {
        for (o, x) in out.iter_mut().zip(c) {
            for p in 0..8 {
                let b = t[p][usize::from(x & 15)] ^ t[8 + p][usize::from(x >> 4)];
                *o ^= u64::from(b) << (8 * p);
            }
        }
    }
    out
}

/// `cols[j][e] = rows[e][j]` for `e < rows.len()` (at most 32; zero for the other lanes) and
/// `j` below the common length of `cols` and the rows; nothing if there are more than 32 rows.
pub(crate) fn transpose_columns(be: Backend, rows: &[&[u8]], cols: &mut [[u8; 32]]) {
    if rows.len() > 32 {
        return;
    }
    let n = rows.iter().fold(cols.len(), |n, r| n.min(r.len()));
    let mut done = 0;
    #[cfg(target_arch = "x86_64")]
    if let (true, Some(a)) = (be != Backend::Portable, caps().avx2) {
        done = avx2::transpose_columns(a, rows, &mut cols[..n]);
    }
    let _ = be;
    for (j, c) in cols.iter_mut().enumerate().take(n).skip(done) {
        *c = [0; 32];
        for (e, r) in rows.iter().enumerate() {
            c[e] = r[j];
        }
    }
}

/// [`embed_byte_sums`] for sources whose bytes all lie in the subfield of 16 elements of
/// `GF(2^8)` (`sub[i]`: the byte planes of `f_i` on that subfield, indexed by
/// [`crate::embed::subfield_index`]): one `vpshufb` per byte plane and source instead of two
/// on the backends whose byte sums take the AVX2 kernel ([`subfield_sums_preferred`]), the
/// general kernel with the full tables `t` elsewhere and for the tail. For other bytes the
/// result is wrong; callers say which sources qualify.
pub(crate) fn embed_subfield_sums<const N: usize>(
    be: Backend,
    sub: [&[[u8; 16]; 8]; N],
    t: [&NibbleTables<'_>; N],
    src: [&[u8]; N],
    dst: &mut [u64],
) {
    let n = src.iter().fold(dst.len(), |n, s| n.min(s.len()));
    let mut done = 0;
    #[cfg(target_arch = "x86_64")]
    if let (true, Some(a)) = (subfield_sums_preferred(be), caps().avx2) {
        done = avx2::embed_subfield_sum(a, sub, src, &mut dst[..n]);
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = sub;
    embed_byte_sums(be, t, src.map(|s| &s[done..n]), &mut dst[done..n]);
}

/// Whether sums of maps on the subfield of 16 elements
/// ([`crate::embed::SubfieldEmbedding::apply_sum_slice_with`]) are faster than those of the
/// full byte maps on `be`: where the latter are the AVX2 `vpshufb` kernel (not on the 512-bit
/// GFNI backend, whose byte maps are one `vgf2p8affineqb` per byte plane, nor on the portable
/// one).
pub fn subfield_sums_preferred(be: Backend) -> bool {
    #[cfg(target_arch = "x86_64")]
    if be != Backend::Portable && !matches!(byte_ops(be), ByteOps::Gfni512(_)) {
        return caps().avx2.is_some();
    }
    let _ = be;
    false
}

/// `dst = Σ_i f_i(src_i[off + k])` for the maps' pair sums `pair(i, a_i, a_{i+1}, out)` (`None`
/// for the last map of an odd `N`), `C` elements at a time; `dst` starts at `off` of the
/// sources.
fn sums_by_pairs<T, const N: usize, const C: usize>(
    src: [&[u8]; N],
    dst: &mut [T],
    off: usize,
    pair: impl Fn(usize, &[u8], Option<&[u8]>, &mut [T]),
) where
    T: Copy + Default + core::ops::BitXorAssign,
{
    let mut tmp = [T::default(); C];
    for (c, d) in dst.chunks_mut(C).enumerate() {
        let (from, k) = (off + c * C, d.len());
        for i in (0..N).step_by(2) {
            let out = &mut tmp[..k];
            let b = src.get(i + 1).map(|b| &b[from..from + k]);
            pair(i, &src[i][from..from + k], b, out);
            if i == 0 {
                d.copy_from_slice(out);
            } else {
                d.iter_mut().zip(out.iter()).for_each(|(d, x)| *d ^= *x);
            }
        }
    }
}

/// `dst[k] = Σ_i f_i(src_i[k])` on bytes, on the common prefix: one pass on the 512-bit GFNI
/// backend and on the AVX2 ones, else by pairs.
pub(crate) fn linear_apply_sum<const N: usize>(
    be: Backend,
    maps: [&LinearMap8; N],
    src: [&[u8]; N],
    dst: &mut [u8],
) {
    let n = src.iter().fold(dst.len(), |n, s| n.min(s.len()));
    let mut done = 0;
    #[cfg(target_arch = "x86_64")]
    if let ByteOps::Gfni512(g) = byte_ops(be) {
        done = gfni::linear_apply_sum_512(g, maps, src, &mut dst[..n]);
    } else if let ByteOps::Avx2(t) = byte_ops(be) {
        return avx2::linear_apply_sum(t, maps, src, &mut dst[..n]);
    }
    sums_by_pairs::<u8, N, 256>(src, &mut dst[done..n], done, |i, a, b, out| match b {
        Some(b) => linear_apply_pair(be, [maps[i], maps[i + 1]], a, b, out),
        None => linear_apply(be, maps[i], a, out),
    });
}

/// `dst[e][k] = Σ_i maps[e][i](src_i[k])` for every `e`, on the common prefix of all sources
/// and outputs: one pass over the sources on the AVX2 backends, else one [`linear_apply_sum`]
/// per `e`.
pub(crate) fn linear_apply_sums<const N: usize, const E: usize>(
    be: Backend,
    maps: &[[LinearMap8; N]; E],
    src: [&[u8]; N],
    dst: [&mut [u8]; E],
) {
    #[cfg(target_arch = "x86_64")]
    if let ByteOps::Avx2(t) = byte_ops(be) {
        return avx2::linear_apply_sums(t, maps, src, dst);
    }
    let n = src.iter().fold(usize::MAX, |n, s| n.min(s.len()));
    let n = dst.iter().fold(n, |n, d| n.min(d.len()));
    for (m, d) in maps.iter().zip(dst) {
        linear_apply_sum(be, m.each_ref(), src, &mut d[..n]);
    }
}

/// `Σ_i c_i (f(a_i) [+ g(b_i)])` in GF(2^64) over the common prefix (`[f, g] = t`; `g` is
/// used only with `b`): fused on VPCLMULQDQ backends, else lifted in pieces.
pub(crate) fn embed_inner(
    be: Backend,
    t: [&NibbleTables<'_>; 2],
    a: &[u8],
    b: Option<&[u8]>,
    c: &[u64],
) -> u64 {
    #[cfg(target_arch = "x86_64")]
    if let WordOps::Vpclmul(v) = word_ops(be) {
        return avx2::embed_inner(v, t, a, b, c);
    }
    let n = a.len().min(c.len()).min(b.map_or(usize::MAX, <[u8]>::len));
    let mut buf = [0u64; 256];
    let mut acc = 0u64;
    for (k, (x, cw)) in a[..n].chunks(256).zip(c[..n].chunks(256)).enumerate() {
        let w = &mut buf[..x.len()];
        match b {
            Some(b) => embed_byte_pairs(be, t, x, &b[256 * k..256 * k + x.len()], w),
            None => embed_bytes(be, t[0], x, w),
        }
        acc ^= gf2p64_inner(be, w, cw);
    }
    acc
}

/// `out_i = ca_i f(a_i) + cb_i g(b_i)` in GF(2^64) on the common prefix (`a = (bytes, ca)`,
/// `b = (bytes, cb)`, `[f, g] = t`): fused on VPCLMULQDQ backends, else lifted in pieces.
pub(crate) fn embed_mul2(
    be: Backend,
    t: [&NibbleTables<'_>; 2],
    a: (&[u8], &[u64]),
    b: (&[u8], &[u64]),
    out: &mut [u64],
) {
    #[cfg(target_arch = "x86_64")]
    if let WordOps::Vpclmul(v) = word_ops(be) {
        if let ByteOps::Gfni512(g) = byte_ops(be) {
            return gfni::embed_mul2_512(g, v, t, a, b, out);
        }
        return avx2::embed_mul2(v, t, a, b, out);
    }
    let n = out
        .len()
        .min(a.0.len())
        .min(a.1.len())
        .min(b.0.len())
        .min(b.1.len());
    let mut buf = [0u64; 256];
    for (k, o) in out[..n].chunks_mut(256).enumerate() {
        let r = 256 * k..256 * k + o.len();
        let w = &mut buf[..o.len()];
        embed_bytes(be, t[0], &a.0[r.clone()], w);
        gf2p64_mul(be, o, w, &a.1[r.clone()]);
        embed_bytes(be, t[1], &b.0[r.clone()], w);
        gf2p64_mul_add(be, o, w, &b.1[r]);
    }
}

// ---- AES-128 keystream ---------------------------------------------------------------------

/// The AES-128 key schedule.
pub(crate) fn aes128_expand(key: &[u8; 16]) -> [[u8; 16]; 11] {
    portable::aes128_expand(key)
}

/// AES-128-CTR keystream blocks `start, start + 1, ...` into `out` (whole blocks; a partial
/// last block is left as it is): VAES, else AES-NI, on every backend but the portable one.
pub(crate) fn aes128_ctr(be: Backend, rk: &[[u8; 16]; 11], start: u128, out: &mut [u8]) {
    if be != Backend::Portable {
        if let Some(hw) = HwAes::detect() {
            return hw.ctr::<false>(rk, start, out);
        }
    }
    portable::aes128_ctr(rk, start, out)
}

/// The CPU's AES instructions (constant time, unlike the portable table S-box): VAES with
/// AES-NI, or AES-NI alone.
#[derive(Clone, Copy, Debug)]
pub(crate) enum HwAes {
    #[cfg(target_arch = "x86_64")]
    Vaes(avx2::Vaes, avx2::AesNi),
    #[cfg(target_arch = "x86_64")]
    AesNi(avx2::AesNi),
}

impl HwAes {
    /// The best AES instructions of this CPU, if it has any.
    pub(crate) fn detect() -> Option<HwAes> {
        #[cfg(target_arch = "x86_64")]
        {
            let c = caps();
            match (c.vaes, c.aesni) {
                (Some(v), Some(a)) => Some(HwAes::Vaes(v, a)),
                (None, Some(a)) => Some(HwAes::AesNi(a)),
                _ => None,
            }
        }
        #[cfg(not(target_arch = "x86_64"))]
        None
    }

    /// The AES-128 key schedule.
    pub(crate) fn expand(self, key: &[u8; 16]) -> [[u8; 16]; 11] {
        match self {
            #[cfg(target_arch = "x86_64")]
            HwAes::Vaes(_, t) | HwAes::AesNi(t) => avx2::aes128_expand_aesni(t, key),
        }
    }

    /// Keystream blocks `start, start + 1, ...` into `out` (`XOR = false`) or XORed into it
    /// (`XOR = true`); whole blocks only, a partial last block is left as it is.
    pub(crate) fn ctr<const XOR: bool>(self, rk: &[[u8; 16]; 11], start: u128, out: &mut [u8]) {
        match self {
            #[cfg(target_arch = "x86_64")]
            HwAes::Vaes(t, _) => avx2::aes128_ctr_vaes::<XOR>(t, rk, start, out),
            #[cfg(target_arch = "x86_64")]
            HwAes::AesNi(t) => avx2::aes128_ctr_aesni::<XOR>(t, rk, start, out),
        }
    }
}

impl HwAes {
    /// Each whole 16-byte block `b` of `buf` becomes `AES_k(b)`, or `AES_k(b) ^ b` with
    /// `MMO`; a partial last block is left as it is.
    pub(crate) fn ecb<const MMO: bool>(self, rk: &[[u8; 16]; 11], buf: &mut [u8]) {
        match self {
            #[cfg(target_arch = "x86_64")]
            HwAes::Vaes(t, _) => avx2::aes128_ecb_vaes::<MMO>(t, rk, buf),
            #[cfg(target_arch = "x86_64")]
            HwAes::AesNi(t) => avx2::aes128_ecb_aesni::<MMO>(t, rk, buf),
        }
    }
}

/// One GF(2^64) product on the active backend (PCLMULQDQ unless it is `Portable`).
#[inline]
pub(crate) fn gf2p64_mul_scalar(a: u64, b: u64) -> u64 {
    #[cfg(target_arch = "x86_64")]
    {
        static CLMUL: OnceLock<Option<avx2::Avx2>> = OnceLock::new();
        let t = CLMUL.get_or_init(|| match word_ops(active()) {
            WordOps::Portable => None,
            WordOps::Pclmul(t) => Some(t),
            WordOps::Vpclmul(_) => caps().avx2,
        });
        if let Some(t) = *t {
            return avx2::gf2p64_mul_one(t, a, b);
        }
    }
    portable::gf2p64_mul_one(a, b)
}

/// One GF(2^64) product on an explicit backend.
pub(crate) fn gf2p64_mul_scalar_with(be: Backend, a: u64, b: u64) -> u64 {
    match word_ops(be) {
        WordOps::Portable => portable::gf2p64_mul_one(a, b),
        #[cfg(target_arch = "x86_64")]
        WordOps::Pclmul(t) => avx2::gf2p64_mul_one(t, a, b),
        #[cfg(target_arch = "x86_64")]
        WordOps::Vpclmul(_) => match caps().avx2 {
            Some(t) => avx2::gf2p64_mul_one(t, a, b),
            None => portable::gf2p64_mul_one(a, b),
        },
    }
}

/// The first six bytes of every `stride`-th word, one output per byte: `outs[f][j]` = byte `f`
/// (little-endian) of `words[j · stride]`, for `j` below the shortest output's length and the
/// number of such words in `words` (returned; `stride` 0 counts as 1). For triples packed one
/// word each (`a_1 a_2 b_1 b_2 c_1 c_2 0 0`) and shuffled as words, back into share vectors.
/// The 512-bit backend on a CPU with AVX-512 VBMI takes 64 words at a time (a byte permutation
/// per 8 words and a transpose of 8-byte lanes); elsewhere, and for the rest, one word at a
/// time through per-output buffers.
pub fn split_word_bytes(words: &[u64], stride: usize, outs: [&mut [u8]; 6]) -> usize {
    let stride = stride.max(1);
    let n = outs
        .iter()
        .map(|o| o.len())
        .min()
        .unwrap_or(0)
        .min(words.len().div_ceil(stride));
    let mut outs = outs.map(|o| &mut o[..n]);
    let mut done = 0;
    #[cfg(target_arch = "x86_64")]
    if let Some(t) = vbmi(active()) {
        done = gfni::split_word_bytes(t, words, stride, outs.each_mut().map(|o| &mut **o));
    }
    portable::split_word_bytes(
        words.get(done * stride..).unwrap_or_default(),
        stride,
        outs.each_mut().map(|o| &mut o[done..]),
    );
    n
}

/// `out.extend_from_slice(src)`, written past the cache where the CPU can: on x86-64 the whole
/// 64-byte lines of the appended part go out with non-temporal stores. For records that are
/// read only much later and would otherwise evict what the computation still uses.
pub fn extend_streaming(out: &mut Vec<u8>, src: &[u8]) {
    #[cfg(target_arch = "x86_64")]
    avx2::extend_streaming(out, src);
    #[cfg(not(target_arch = "x86_64"))]
    out.extend_from_slice(src);
}

/// `out[next[l_i]] = item_i`, then `next[l_i] += 1`, for the items in order with their labels
/// `l_i` (a label without an entry of `next`, or a place outside `out`, is skipped): a scatter
/// into `next.len()` streams, each item going to its stream's next place. On x86-64 the items
/// are gathered per stream into a cache line and whole lines go out with non-temporal stores,
/// so the destination's lines are not read first.
pub fn scatter_streaming(
    out: &mut [u64],
    next: &mut [usize],
    labels: &[u16],
    items: impl Iterator<Item = u64>,
) {
    #[cfg(target_arch = "x86_64")]
    avx2::scatter_streaming(out, next, labels, items);
    #[cfg(not(target_arch = "x86_64"))]
    for (&l, item) in labels.iter().zip(items) {
        if let Some(p) = next.get_mut(usize::from(l)) {
            if let Some(o) = out.get_mut(*p) {
                *o = item;
            }
            *p = p.saturating_add(1);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The streaming append leaves what `extend_from_slice` does: any alignment of the end of
    /// the vector, lengths around whole lines, and with or without room reserved.
    #[test]
    fn streaming_append_matches_extend_from_slice() {
        let src: Vec<u8> = (0..1000u32).map(|i| (i * 37 + 11) as u8).collect();
        for start in [0, 1, 15, 63, 64, 65] {
            for len in [0, 1, 63, 64, 65, 127, 128, 500, 1000] {
                for room in [0, 4096] {
                    let mut got = Vec::with_capacity(room);
                    got.extend((0..start).map(|i| i as u8));
                    let mut want = got.clone();
                    extend_streaming(&mut got, &src[..len]);
                    want.extend_from_slice(&src[..len]);
                    assert_eq!(got, want, "start {start}, len {len}, room {room}");
                }
            }
        }
    }

    /// The streaming scatter puts every item where the plain loop does: any alignment of the
    /// destination, streams with partial first and last lines, one or many streams, labels
    /// without a stream and places past the end skipped.
    #[test]
    fn streaming_scatter_matches_the_plain_loop() {
        let mut state = 0x2545_f491_4f6c_dd1du64;
        let mut rand = move || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        };
        for (n, k, offset) in [
            (0, 1, 0),
            (7, 1, 3),
            (1000, 3, 1),
            (20_000, 512, 5),
            (5000, 64, 0),
        ] {
            let labels: Vec<u16> = (0..n).map(|_| (rand() % (k as u64 + 1)) as u16).collect();
            let items: Vec<u64> = (0..n).map(|_| rand()).collect();
            // Stream starts from the label counts (label `k` has no stream); the last stream
            // is given one place too few, so its last item falls past the end.
            let mut counts = vec![0usize; k];
            for &l in &labels {
                if let Some(c) = counts.get_mut(usize::from(l)) {
                    *c += 1;
                }
            }
            let mut starts = Vec::with_capacity(k);
            let mut at = offset;
            for c in &counts {
                starts.push(at);
                at += c;
            }
            let len = at.saturating_sub(1);
            let mut want = vec![0u64; len];
            let mut want_next = starts.clone();
            for (&l, &item) in labels.iter().zip(&items) {
                if let Some(p) = want_next.get_mut(usize::from(l)) {
                    if let Some(o) = want.get_mut(*p) {
                        *o = item;
                    }
                    *p += 1;
                }
            }
            let mut got = vec![0u64; len];
            let mut next = starts.clone();
            scatter_streaming(&mut got, &mut next, &labels, items.iter().copied());
            assert_eq!(next, want_next, "n = {n}, k = {k}");
            assert!(got == want, "n = {n}, k = {k}, offset = {offset}");
        }
        // Places near the end of the address range: nothing written, no overflow.
        let mut out = vec![0u64; 5];
        let mut next = vec![usize::MAX - 2];
        scatter_streaming(&mut out, &mut next, &[0; 20], 1..=20);
        assert_eq!((out, next), (vec![0; 5], vec![usize::MAX]));
    }

    #[test]
    fn parse_env_values() {
        assert_eq!(parse_request(None), BackendRequest::Auto);
        assert_eq!(parse_request(Some("")), BackendRequest::Auto);
        assert_eq!(parse_request(Some(" AUTO ")), BackendRequest::Auto);
        assert_eq!(
            parse_request(Some("portable")),
            BackendRequest::Force(Backend::Portable)
        );
        assert_eq!(
            parse_request(Some("Portable\n")),
            BackendRequest::Force(Backend::Portable)
        );
        assert_eq!(
            parse_request(Some("avx2-vpclmul")),
            BackendRequest::Force(Backend::Avx2Vpclmul)
        );
        assert_eq!(
            parse_request(Some("gfni-avx512")),
            BackendRequest::Force(Backend::Gfni512)
        );
        assert_eq!(parse_request(Some("portabel")), BackendRequest::Unknown);
    }

    #[test]
    fn portable_request_is_honoured() {
        assert_eq!(resolve(parse_request(Some("portable"))), Backend::Portable);
        assert_eq!(resolve(BackendRequest::Auto), best_available());
        assert_eq!(resolve(BackendRequest::Unknown), best_available());
        for b in Backend::ALL {
            let r = resolve(BackendRequest::Force(b));
            if b.is_available() {
                assert_eq!(r, b);
            } else {
                assert_eq!(r, best_available());
            }
        }
    }

    #[test]
    fn names_round_trip_and_portable_is_always_available() {
        for b in Backend::ALL {
            assert_eq!(Backend::from_name(b.name()), Some(b));
            assert_eq!(b.to_string(), b.name());
        }
        assert_eq!(available().first(), Some(&Backend::Portable));
        assert!(available().windows(2).all(|w| w[0] < w[1]));
        assert!(active().is_available());
    }

    #[test]
    fn active_follows_environment() {
        // Whatever the test runner's environment says must be what `active` chose.
        let value = std::env::var(ENV_VAR).ok();
        assert_eq!(active(), resolve(parse_request(value.as_deref())));
    }

    /// `split_word_bytes`, its 512-bit kernel where the CPU has VBMI, and the portable loop
    /// against byte `f` of word `j · stride`, for strides 1 to 5 (0 taken as 1), outputs of
    /// unequal lengths, and word counts that end before, at and after the outputs.
    #[test]
    fn split_word_bytes_matches_the_words_bytes() {
        let mut x = 0x9E37_79B9_7F4A_7C15u64;
        let words: Vec<u64> = (0..9000)
            .map(|_| {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                x
            })
            .collect();
        for stride in 0..=5usize {
            let step = stride.max(1);
            for (nw, lens) in [
                (0, [5; 6]),
                (63 * step, [100; 6]),
                (64 * step, [64; 6]),
                (128 * step + 1, [200, 129, 300, 129, 500, 140]),
                (9000, [1000; 6]),
                (
                    9000,
                    [64 * 20 + 7, 1 << 12, 1 << 12, 1 << 12, 1 << 12, 1 << 12],
                ),
            ] {
                let w = &words[..nw];
                let n = lens
                    .iter()
                    .copied()
                    .min()
                    .unwrap_or(0)
                    .min(nw.div_ceil(step));
                let want: [Vec<u8>; 6] = core::array::from_fn(|f| {
                    (0..n).map(|j| w[j * step].to_le_bytes()[f]).collect()
                });
                let check = |got: &[Vec<u8>; 6], what: &str| {
                    for f in 0..6 {
                        assert_eq!(
                            &got[f][..n],
                            &want[f][..],
                            "{what}, stride {stride}, {nw} words, output {f}"
                        );
                        assert!(
                            got[f][n..].iter().all(|&b| b == 0xAA),
                            "{what}: wrote past {n}"
                        );
                    }
                };
                let fresh = || lens.map(|l| vec![0xAAu8; l]);
                let mut got = fresh();
                assert_eq!(
                    split_word_bytes(w, stride, got.each_mut().map(|v| &mut v[..])),
                    n
                );
                check(&got, "dispatch");
                let mut got = fresh();
                let bounded = got.each_mut().map(|v| &mut v[..n]);
                portable::split_word_bytes(w, stride, bounded);
                check(&got, "portable");
                #[cfg(target_arch = "x86_64")]
                if let Some(t) = caps().vbmi {
                    let mut got = fresh();
                    let done =
                        gfni::split_word_bytes(t, w, step, got.each_mut().map(|v| &mut v[..n]));
                    assert_eq!(done, n / 64 * 64);
                    for f in 0..6 {
                        assert_eq!(&got[f][..done], &want[f][..done], "kernel, stride {stride}");
                        assert!(
                            got[f][done..].iter().all(|&b| b == 0xAA),
                            "kernel past {done}"
                        );
                    }
                }
            }
        }
    }
}
