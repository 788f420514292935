//! `bool-circuit`: GF(2^8) inversion as a Boolean circuit on bit-sliced replicated `GF(2)`
//! shares — the semi-honest three-party protocol of Araki, Furukawa, Lindell, Nof and Ohara
//! (CCS 2016, "High-throughput semi-honest secure three-party computation with an honest
//! majority", §2.2: XOR local, one bit per AND gate and party) on the S-box circuit of Boyar
//! and Peralta ("A depth-16 circuit for the AES S-box", SEC 2012, ePrint 2011/332, Fig. 2).
//!
//! 1. Local: both components of the shared bytes are bit-sliced (a GF(2)-linear map, so it acts
//!    share-wise) into eight planes of [`Bits16`] words, lane `k` of word `w` = byte `16 w + k`.
//! 2. The circuit (128 gates, encoded as data in `GATES` and tested on all 256 inputs): a top
//!    linear layer (27 XOR), a non-linear middle with 34 AND and 29 XOR gates, AND-depth 4 (AND
//!    layers of 9, 3, 4 and 18 gates), and a bottom linear layer (38 XOR/XNOR). XOR gates are
//!    local on both components. All AND gates of one layer, over all S-boxes, are one batch of
//!    the semi-honest multiplication of §1.6 (local product `x1 y1 + x1 y2 + x2 y1`, zero-share,
//!    resharing to the previous party, as `Party::mul`): one message per AND layer.
//! 3. The circuit computes `S(x) = A x^-1 + 0x63`. Its four XNOR gates only add the constant,
//!    so they are evaluated as XOR, giving `A x^-1`; after un-slicing, the local map `A^-1`
//!    leaves `x^-1` (the AES layer adds the affine part back, as for every protocol).
//!
//! No preprocessing, no check. Cost per layer of `n` inversions and party: `34 ⌈n/16⌉` words of
//! 2 bytes to the previous party in 4 rounds (a key-schedule layer of 4 S-boxes: 68 bytes); for
//! whole blocks (`n = 16 s`) 68 bytes per block and layer: AES-128 680 B/block and 40 rounds,
//! AES-256 952 B/block and 56 rounds.
//!
//! Implementation: the bit-sliced wires live in chunks of `CHUNK` words (all slots of a chunk
//! together, so a chunk's local work stays in cache); wires share slots once dead (`Schedule`:
//! 32 slots for 136 wires); everything local between two resharings is one parallel pass
//! over the chunks.

use rayon::prelude::*;
use triskele_engine::{EngineError, Party, ReshareTo, SemiHonest};
use triskele_field::{Bits16, Gf2p8, LinearMap8};
use triskele_share::RssVec;

use super::SboxProtocol;

/// The semi-honest `bool-circuit` protocol. Keeps its bit-sliced work buffers (shares, like
/// the state vectors of the other protocols) between layers.
#[derive(Debug)]
pub struct BoolCircuit {
    schedule: Schedule,
    first: Vec<u16>,
    second: Vec<u16>,
}

impl Default for BoolCircuit {
    fn default() -> Self {
        BoolCircuit {
            schedule: Schedule::new(),
            first: Vec::new(),
            second: Vec::new(),
        }
    }
}

/// One gate of the circuit: the wires it reads. Its output wire is `8 + ` its index in [`GATES`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Gate {
    Xor(u8, u8),
    And(u8, u8),
}

/// Wire numbering: inputs `U0..U7` (`U0` the most significant bit) are wires 0..8, then the
/// gate outputs in the order of [`GATES`]: `T1..T27`, `M1..M63`, `L0..L29`, `S0..S7` (`S0` the
/// most significant output bit).
const fn u(k: u8) -> u8 {
    k
}
const fn t(k: u8) -> u8 {
    7 + k
}
const fn m(k: u8) -> u8 {
    34 + k
}
const fn l(k: u8) -> u8 {
    98 + k
}
/// The first output wire, `S0`.
const S0: usize = 128;
/// Number of wires: 8 inputs and one per gate.
const WIRES: usize = 8 + GATES.len();

const fn x(a: u8, b: u8) -> Gate {
    Gate::Xor(a, b)
}
const fn a(a: u8, b: u8) -> Gate {
    Gate::And(a, b)
}

/// Boyar–Peralta's depth-16 AES S-box circuit (ePrint 2011/332, Fig. 2), in order; gate `i`
/// defines wire `8 + i`. The XNOR gates of the output layer (`S1, S2, S6, S7`) are written as
/// XOR (see the module documentation).
#[rustfmt::skip]
const GATES: [Gate; 128] = [
    // Top linear layer: T1..T27.
    x(u(0), u(3)), x(u(0), u(5)), x(u(0), u(6)), x(u(3), u(5)), x(u(4), u(6)),     // T1..T5
    x(t(1), t(5)), x(u(1), u(2)), x(u(7), t(6)), x(u(7), t(7)), x(t(6), t(7)),     // T6..T10
    x(u(1), u(5)), x(u(2), u(5)), x(t(3), t(4)), x(t(6), t(11)), x(t(5), t(11)),   // T11..T15
    x(t(5), t(12)), x(t(9), t(16)), x(u(3), u(7)), x(t(7), t(18)), x(t(1), t(19)), // T16..T20
    x(u(6), u(7)), x(t(7), t(21)), x(t(2), t(22)), x(t(2), t(10)), x(t(20), t(17)), // T21..T25
    x(t(3), t(16)), x(t(1), t(12)),                                                // T26, T27
    // Non-linear middle: M1..M63.
    a(t(13), t(6)), a(t(23), t(8)), x(t(14), m(1)), a(t(19), u(7)), x(m(4), m(1)),  // M1..M5
    a(t(3), t(16)), a(t(22), t(9)), x(t(26), m(6)), a(t(20), t(17)), x(m(9), m(6)), // M6..M10
    a(t(1), t(15)), a(t(4), t(27)), x(m(12), m(11)), a(t(2), t(10)), x(m(14), m(11)), // M11..M15
    x(m(3), m(2)), x(m(5), t(24)), x(m(8), m(7)), x(m(10), m(15)), x(m(16), m(13)), // M16..M20
    x(m(17), m(15)), x(m(18), m(13)), x(m(19), t(25)), x(m(22), m(23)), a(m(22), m(20)), // M21..M25
    x(m(21), m(25)), x(m(20), m(21)), x(m(23), m(25)), a(m(28), m(27)), a(m(26), m(24)), // M26..M30
    a(m(20), m(23)), a(m(27), m(31)), x(m(27), m(25)), a(m(21), m(22)), a(m(24), m(34)), // M31..M35
    x(m(24), m(25)), x(m(21), m(29)), x(m(32), m(33)), x(m(23), m(30)), x(m(35), m(36)), // M36..M40
    x(m(38), m(40)), x(m(37), m(39)), x(m(37), m(38)), x(m(39), m(40)), x(m(42), m(41)), // M41..M45
    a(m(44), t(6)), a(m(40), t(8)), a(m(39), u(7)), a(m(43), t(16)), a(m(38), t(9)), // M46..M50
    a(m(37), t(17)), a(m(42), t(15)), a(m(45), t(27)), a(m(41), t(10)), a(m(44), t(13)), // M51..M55
    a(m(40), t(23)), a(m(39), t(19)), a(m(43), t(3)), a(m(38), t(22)), a(m(37), t(20)), // M56..M60
    a(m(42), t(1)), a(m(45), t(4)), a(m(41), t(2)),                                  // M61..M63
    // Bottom linear layer: L0..L29, then S0..S7.
    x(m(61), m(62)), x(m(50), m(56)), x(m(46), m(48)), x(m(47), m(55)), x(m(54), m(58)), // L0..L4
    x(m(49), m(61)), x(m(62), l(5)), x(m(46), l(3)), x(m(51), m(59)), x(m(52), m(53)), // L5..L9
    x(m(53), l(4)), x(m(60), l(2)), x(m(48), m(51)), x(m(50), l(0)), x(m(52), m(61)), // L10..L14
    x(m(55), l(1)), x(m(56), l(0)), x(m(57), l(1)), x(m(58), l(8)), x(m(63), l(4)), // L15..L19
    x(l(0), l(1)), x(l(1), l(7)), x(l(3), l(12)), x(l(18), l(2)), x(l(15), l(9)),   // L20..L24
    x(l(6), l(10)), x(l(7), l(9)), x(l(8), l(10)), x(l(11), l(14)), x(l(11), l(17)), // L25..L29
    x(l(6), l(24)), x(l(16), l(26)), x(l(19), l(28)), x(l(6), l(21)),                // S0..S3
    x(l(20), l(22)), x(l(25), l(29)), x(l(13), l(27)), x(l(6), l(23)),               // S4..S7
];

/// One gate as evaluated: buffer slots of its output and its two inputs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Op {
    out: usize,
    p: usize,
    q: usize,
}

/// The gates grouped for evaluation, with wires mapped to reusable buffer slots.
///
/// `stages[d]` holds the XOR gates of AND-depth `d` (computable once the AND layers `1..=d` are
/// done; the depth of a wire is the largest number of AND gates on a path from the inputs) and
/// `ands[d]` the AND gates of AND-depth `d + 1`. A slot is reused once its wire is dead: an XOR
/// output never shares a slot with its inputs; an AND layer reads all its inputs (local
/// products) before it writes any output, so its outputs may take the slots of inputs it was
/// the last to read.
#[derive(Debug)]
struct Schedule {
    stages: Vec<Vec<Op>>,
    ands: Vec<Vec<Op>>,
    /// Slots of `U0..U7` and of `S0..S7`.
    inputs: [usize; 8],
    outputs: [usize; 8],
    /// Number of slots.
    slots: usize,
}

impl Schedule {
    fn new() -> Self {
        // Group the gates (as wire triples) by AND-depth; GATES is in topological order.
        let mut depth = [0usize; WIRES];
        type Wires = Vec<(usize, usize, usize)>;
        let mut stages: Vec<Wires> = vec![Vec::new()];
        let mut ands: Vec<Wires> = Vec::new();
        for (i, g) in GATES.iter().enumerate() {
            let out = 8 + i;
            let (Gate::Xor(p, q) | Gate::And(p, q)) = *g;
            let (p, q) = (usize::from(p), usize::from(q));
            let d = depth[p].max(depth[q]);
            let list = if matches!(g, Gate::And(..)) {
                depth[out] = d + 1;
                &mut ands
            } else {
                depth[out] = d;
                &mut stages
            };
            if list.len() <= d {
                list.resize_with(d + 1, Vec::new);
            }
            list[d].push((out, p, q));
        }
        // One (possibly empty) XOR stage after every AND layer.
        if stages.len() <= ands.len() {
            stages.resize_with(ands.len() + 1, Vec::new);
        }

        // Evaluation order: stage 0, AND layer 1, stage 1, ...; the last read of every wire.
        let mut last = [None::<usize>; WIRES];
        let mut pos = 0;
        for (d, stage) in stages.iter().enumerate() {
            for &(_, p, q) in stage {
                last[p] = Some(pos);
                last[q] = Some(pos);
                pos += 1;
            }
            for &(_, p, q) in ands.get(d).map_or(&[][..], Vec::as_slice) {
                last[p] = Some(pos);
                last[q] = Some(pos);
            }
            pos += 1;
        }
        for l in &mut last[S0..] {
            *l = Some(usize::MAX);
        }

        let mut slot = [usize::MAX; WIRES];
        let mut free: Vec<usize> = Vec::new();
        let mut slots = 0;
        let mut alloc = |free: &mut Vec<usize>| {
            free.pop().unwrap_or_else(|| {
                slots += 1;
                slots - 1
            })
        };
        for s in slot.iter_mut().take(8) {
            *s = alloc(&mut free);
        }
        let release = |free: &mut Vec<usize>, slot: &[usize; WIRES], w: usize, at: usize| {
            if last[w].is_none_or(|l| l == at) && !free.contains(&slot[w]) {
                free.push(slot[w]);
            }
        };
        let mut out_stages = Vec::with_capacity(stages.len());
        let mut out_ands = Vec::with_capacity(ands.len());
        let mut pos = 0;
        for (d, stage) in stages.iter().enumerate() {
            let mut ops = Vec::with_capacity(stage.len());
            for &(out, p, q) in stage {
                slot[out] = alloc(&mut free);
                ops.push(Op {
                    out: slot[out],
                    p: slot[p],
                    q: slot[q],
                });
                release(&mut free, &slot, p, pos);
                release(&mut free, &slot, q, pos);
                release(&mut free, &slot, out, pos);
                pos += 1;
            }
            out_stages.push(ops);
            if let Some(layer) = ands.get(d) {
                for &(_, p, q) in layer {
                    release(&mut free, &slot, p, pos);
                    release(&mut free, &slot, q, pos);
                }
                let mut ops = Vec::with_capacity(layer.len());
                for &(out, p, q) in layer {
                    slot[out] = alloc(&mut free);
                    ops.push(Op {
                        out: slot[out],
                        p: slot[p],
                        q: slot[q],
                    });
                }
                for &(out, _, _) in layer {
                    release(&mut free, &slot, out, pos);
                }
                out_ands.push(ops);
            }
            pos += 1;
        }
        let mut inputs = [0; 8];
        let mut outputs = [0; 8];
        inputs.copy_from_slice(&slot[..8]);
        outputs.copy_from_slice(&slot[S0..]);
        Schedule {
            stages: out_stages,
            ands: out_ands,
            inputs,
            outputs,
            slots,
        }
    }
}

/// Bit-sliced words per work item (4096 S-boxes per chunk).
const CHUNK: usize = 256;

/// Transposes the 8×8 bit matrix with row `r` = byte `r` (little-endian) and column `c` = bit
/// `c`: afterwards byte `c` holds bit `c` of every input byte (Warren, Hacker's Delight §7-3).
/// An involution.
#[inline]
fn transpose8(mut v: u64) -> u64 {
    let s = (v ^ (v >> 7)) & 0x00aa_00aa_00aa_00aa;
    v ^= s ^ (s << 7);
    let s = (v ^ (v >> 14)) & 0x0000_cccc_0000_cccc;
    v ^= s ^ (s << 14);
    let s = (v ^ (v >> 28)) & 0x0000_0000_f0f0_f0f0;
    v ^= s ^ (s << 28);
    v
}

/// Bit-slices one 16-byte word into `planes`: bit `j` of byte `k` goes to lane `k` of plane `j`.
#[inline]
fn slice_word(block: [u8; 16]) -> [u16; 8] {
    let v = u128::from_le_bytes(block);
    let lo = transpose8(v as u64).to_le_bytes();
    let hi = transpose8((v >> 64) as u64).to_le_bytes();
    core::array::from_fn(|j| u16::from_le_bytes([lo[j], hi[j]]))
}

/// Bit-slices `bytes` (at most `16 cw` of them, zero-padded) into the input slots of one chunk:
/// `U_i` (`i = 0..8`) gets bit `7 - i`.
fn slice_in(bytes: &[u8], wires: &mut [u16], inputs: &[usize; 8], cw: usize) {
    let mut planes = [[0u16; 8]; CHUNK];
    let (full, rest) = bytes.as_chunks::<16>();
    for (p, block) in planes.iter_mut().zip(full) {
        *p = slice_word(*block);
    }
    if !rest.is_empty() && full.len() < cw.min(CHUNK) {
        let mut block = [0u8; 16];
        block[..rest.len()].copy_from_slice(rest);
        planes[full.len()] = slice_word(block);
    }
    for (i, &slot) in inputs.iter().enumerate() {
        for (o, p) in wires[slot * CHUNK..][..cw].iter_mut().zip(&planes) {
            *o = p[7 - i];
        }
    }
}

/// Un-slices the output slots `S0..S7` of one chunk into `bytes` (at most `16 cw`).
fn slice_out(wires: &[u16], outputs: &[usize; 8], bytes: &mut [u8], cw: usize) {
    for (w, out) in bytes.chunks_mut(16).enumerate().take(cw) {
        let mut lo = [0u8; 8];
        let mut hi = [0u8; 8];
        for (i, &slot) in outputs.iter().enumerate() {
            let [l8, h8] = wires[slot * CHUNK + w].to_le_bytes();
            lo[7 - i] = l8;
            hi[7 - i] = h8;
        }
        let v = u128::from(transpose8(u64::from_le_bytes(lo)))
            | (u128::from(transpose8(u64::from_le_bytes(hi))) << 64);
        let block = v.to_le_bytes();
        out.copy_from_slice(&block[..out.len()]);
    }
}

/// Evaluates XOR gates on one chunk of one component (the output slot of a gate differs from
/// its input slots).
fn xor_gates(wires: &mut [u16], ops: &[Op], cw: usize) {
    for op in ops {
        let (below, rest) = wires.split_at_mut(op.out * CHUNK);
        let (out, above) = rest.split_at_mut(CHUNK);
        let src = |slot: usize| {
            if slot < op.out {
                &below[slot * CHUNK..][..cw]
            } else {
                &above[(slot - op.out - 1) * CHUNK..][..cw]
            }
        };
        let (p, q) = (src(op.p), src(op.q));
        for ((o, p), q) in out[..cw].iter_mut().zip(p).zip(q) {
            *o = p ^ q;
        }
    }
}

/// Words in chunk `c` of `words`.
fn chunk_words(words: usize, c: usize) -> usize {
    (words - c * CHUNK).min(CHUNK)
}

/// Local products of the AND gates `layer` on one chunk (both components), laid out
/// `[gate][word]` in `t`: `p1 q1 + p1 q2 + p2 q1` (§1.6).
fn products(f: &[u16], s: &[u16], layer: &[Op], t: &mut [u16], cw: usize) {
    for (op, o) in layer.iter().zip(t.chunks_mut(cw)) {
        let (p1, p2) = (&f[op.p * CHUNK..][..cw], &s[op.p * CHUNK..][..cw]);
        let (q1, q2) = (&f[op.q * CHUNK..][..cw], &s[op.q * CHUNK..][..cw]);
        for i in 0..cw {
            o[i] = (p1[i] & (q1[i] ^ q2[i])) ^ (p2[i] & q1[i]);
        }
    }
}

/// Writes the products of `layer` (one chunk, laid out `[gate][word]`) into their slots.
fn scatter(wires: &mut [u16], layer: &[Op], z: &[Bits16], cw: usize) {
    for (op, zc) in layer.iter().zip(z.chunks(cw)) {
        for (o, v) in wires[op.out * CHUNK..][..cw].iter_mut().zip(zc) {
            *o = v.0;
        }
    }
}

impl BoolCircuit {
    /// One AND layer: local products in `t`, then a zero-share and resharing to prev.
    fn reshare(party: &mut Party<SemiHonest>, t: Vec<u16>) -> Result<RssVec<Bits16>, EngineError> {
        // Same size and alignment: collected in place.
        let t: Vec<Bits16> = t.into_iter().map(Bits16).collect();
        party.additive_to_rss(t, ReshareTo::Prev)
    }
}

impl SboxProtocol<SemiHonest> for BoolCircuit {
    fn invert(
        &mut self,
        party: &mut Party<SemiHonest>,
        x: &mut RssVec<Gf2p8>,
    ) -> Result<(), EngineError> {
        let n = x.len();
        let schedule = &self.schedule;
        let Some(last) = schedule.ands.len().checked_sub(1) else {
            return Ok(());
        };
        if n == 0 {
            return Ok(());
        }
        let words = n.div_ceil(16);
        let chunks = words.div_ceil(CHUNK);
        let stride = schedule.slots * CHUNK;
        // Slots are written before they are read, so stale contents do not matter.
        for buf in [&mut self.first, &mut self.second] {
            if buf.len() < chunks * stride {
                *buf = vec![0u16; chunks * stride];
            }
        }
        let first = &mut self.first[..chunks * stride];
        let second = &mut self.second[..chunks * stride];
        // One pass over the chunks per round: everything local between two resharings.

        // Bit-slice both components, first linear stage, products of AND layer 1.
        let layer = &schedule.ands[0];
        let mut t = vec![0u16; layer.len() * words];
        first
            .par_chunks_mut(stride)
            .zip(second.par_chunks_mut(stride))
            .zip(Gf2p8::slice_as_bytes(&x.first).par_chunks(16 * CHUNK))
            .zip(Gf2p8::slice_as_bytes(&x.second).par_chunks(16 * CHUNK))
            .zip(t.par_chunks_mut(layer.len() * CHUNK))
            .enumerate()
            .for_each(|(c, ((((f, s), xf), xs), t))| {
                let cw = chunk_words(words, c);
                slice_in(xf, f, &schedule.inputs, cw);
                slice_in(xs, s, &schedule.inputs, cw);
                xor_gates(f, &schedule.stages[0], cw);
                xor_gates(s, &schedule.stages[0], cw);
                products(f, s, layer, t, cw);
            });
        let mut z = Self::reshare(party, t)?;

        // Products of layer d in, next linear stage, products of layer d + 1 out.
        for d in 0..last {
            let (done, layer) = (&schedule.ands[d], &schedule.ands[d + 1]);
            let stage = &schedule.stages[d + 1];
            let mut t = vec![0u16; layer.len() * words];
            first
                .par_chunks_mut(stride)
                .zip(second.par_chunks_mut(stride))
                .zip(z.first.par_chunks(done.len() * CHUNK))
                .zip(z.second.par_chunks(done.len() * CHUNK))
                .zip(t.par_chunks_mut(layer.len() * CHUNK))
                .enumerate()
                .for_each(|(c, ((((f, s), zf), zs), t))| {
                    let cw = chunk_words(words, c);
                    scatter(f, done, zf, cw);
                    scatter(s, done, zs, cw);
                    xor_gates(f, stage, cw);
                    xor_gates(s, stage, cw);
                    products(f, s, layer, t, cw);
                });
            z = Self::reshare(party, t)?;
        }

        // Products of the last layer in, bottom linear stage, un-slice A x^-1, apply A^-1.
        let (done, stage) = (&schedule.ands[last], &schedule.stages[last + 1]);
        first
            .par_chunks_mut(stride)
            .zip(second.par_chunks_mut(stride))
            .zip(z.first.par_chunks(done.len() * CHUNK))
            .zip(z.second.par_chunks(done.len() * CHUNK))
            .zip(Gf2p8::slice_as_bytes_mut(&mut x.first).par_chunks_mut(16 * CHUNK))
            .zip(Gf2p8::slice_as_bytes_mut(&mut x.second).par_chunks_mut(16 * CHUNK))
            .enumerate()
            .for_each(|(c, (((((f, s), zf), zs), xf), xs))| {
                let cw = chunk_words(words, c);
                for (wires, zc, out) in [(f, zf, xf), (s, zs, xs)] {
                    scatter(wires, done, zc, cw);
                    xor_gates(wires, stage, cw);
                    slice_out(wires, &schedule.outputs, out, cw);
                    LinearMap8::AES_A_INV.apply_bytes_in_place(out);
                }
            });
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The circuit on one byte in the clear (XNOR as XOR, so `A x^-1 = S(x) + 0x63`).
    fn eval_clear(v: u8) -> u8 {
        let mut w = [false; WIRES];
        for (i, wi) in w.iter_mut().enumerate().take(8) {
            *wi = (v >> (7 - i)) & 1 == 1;
        }
        for (i, g) in GATES.iter().enumerate() {
            w[8 + i] = match *g {
                Gate::Xor(p, q) => w[usize::from(p)] ^ w[usize::from(q)],
                Gate::And(p, q) => w[usize::from(p)] & w[usize::from(q)],
            };
        }
        (0..8).fold(0u8, |acc, i| acc | (u8::from(w[S0 + i]) << (7 - i)))
    }

    #[test]
    fn circuit_is_the_sbox_on_all_256_inputs() {
        for v in 0..=255u8 {
            let y = eval_clear(v);
            assert_eq!(y ^ 0x63, Gf2p8::SBOX[usize::from(v)], "S({v:#04x})");
            assert_eq!(
                LinearMap8::AES_A_INV.apply_byte(y),
                Gf2p8::INV_TABLE[usize::from(v)],
                "{v:#04x}^-1"
            );
        }
    }

    #[test]
    fn gates_are_topological_and_wires_match_the_names() {
        for (i, g) in GATES.iter().enumerate() {
            let (Gate::Xor(p, q) | Gate::And(p, q)) = *g;
            assert!(usize::from(p) < 8 + i && usize::from(q) < 8 + i, "gate {i}");
        }
        assert_eq!(usize::from(t(27)), 8 + 26);
        assert_eq!(usize::from(m(63)), 8 + 27 + 62);
        assert_eq!(usize::from(l(29)), 8 + 27 + 63 + 29);
        assert_eq!(S0, usize::from(l(29)) + 1);
        assert_eq!(WIRES, S0 + 8);
    }

    /// The schedule (slots, stages, AND layers read before written) on one chunk in the clear.
    fn eval_schedule_clear(s: &Schedule, bytes: &[u8]) -> Vec<u8> {
        let cw = bytes.len().div_ceil(16);
        let mut wires = vec![0u16; s.slots * CHUNK];
        slice_in(bytes, &mut wires, &s.inputs, cw);
        xor_gates(&mut wires, &s.stages[0], cw);
        for (d, layer) in s.ands.iter().enumerate() {
            let products: Vec<Vec<u16>> = layer
                .iter()
                .map(|op| {
                    (0..cw)
                        .map(|i| wires[op.p * CHUNK + i] & wires[op.q * CHUNK + i])
                        .collect()
                })
                .collect();
            for (op, prod) in layer.iter().zip(products) {
                wires[op.out * CHUNK..][..cw].copy_from_slice(&prod);
            }
            xor_gates(&mut wires, &s.stages[d + 1], cw);
        }
        let mut out = vec![0u8; bytes.len()];
        slice_out(&wires, &s.outputs, &mut out, cw);
        out
    }

    #[test]
    fn schedule_has_34_and_gates_in_4_layers_and_computes_the_sbox() {
        let s = Schedule::new();
        let sizes: Vec<usize> = s.ands.iter().map(Vec::len).collect();
        assert_eq!(sizes, [9, 3, 4, 18]);
        assert_eq!(s.stages.len(), 5);
        let xors: usize = s.stages.iter().map(Vec::len).sum();
        assert_eq!(xors + 34, GATES.len());
        for op in s.stages.iter().flatten() {
            assert!(op.out != op.p && op.out != op.q && op.p != op.q, "{op:?}");
        }
        // 136 wires in 32 slots (the 18 top-layer wires read by the last AND layer stay live).
        assert_eq!(s.slots, 32);
        let all: Vec<u8> = (0..=255u8).collect();
        let got = eval_schedule_clear(&s, &all);
        for (v, y) in all.iter().zip(got) {
            assert_eq!(y ^ 0x63, Gf2p8::SBOX[usize::from(*v)], "S({v:#04x})");
        }
        // A partial last word.
        let got = eval_schedule_clear(&s, &all[..21]);
        for (v, y) in all.iter().zip(got) {
            assert_eq!(y ^ 0x63, Gf2p8::SBOX[usize::from(*v)], "S({v:#04x})");
        }
    }

    #[test]
    fn transpose_slices_and_unslices() {
        let mut bytes = [0u8; 40];
        for (i, b) in bytes.iter_mut().enumerate() {
            *b = (i as u8).wrapping_mul(37).wrapping_add(11);
        }
        let cw = bytes.len().div_ceil(16);
        let inputs = [3, 1, 4, 0, 5, 9, 2, 6];
        let mut wires = vec![0u16; 10 * CHUNK];
        slice_in(&bytes, &mut wires, &inputs, cw);
        for (k, &b) in bytes.iter().enumerate() {
            for (i, &slot) in inputs.iter().enumerate() {
                let lane = (wires[slot * CHUNK + k / 16] >> (k % 16)) & 1;
                assert_eq!(
                    lane,
                    u16::from((b >> (7 - i)) & 1),
                    "byte {k} bit {}",
                    7 - i
                );
            }
        }
        let mut back = [0u8; 40];
        slice_out(&wires, &inputs, &mut back, cw);
        assert_eq!(back, bytes);
    }
}
