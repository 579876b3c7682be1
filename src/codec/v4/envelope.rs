//! The full form's envelope: `lower` and `upper` coded given the scores,
//! in blocks of their own behind a sparse index of their own, so that a
//! probe of the scores never reads them.
//!
//! Each entry is two symbols, `a = S - lower` then `b = upper - S` (each
//! `0..=2n`), coded in the context of
//!
//! * `a`: the score `S`, the previous entry's score, the previous
//!   entry's `a`, the `a` of the position with one seed moved back from
//!   pit 2 to pit 0 (the scores' neighbour, when it lies in the block) and
//!   pit 0's seeds (0..=4, more as 4);
//! * `b`: `S`, `a`, the previous entry's `b`, the neighbour's `b` and pit
//!   0's seeds;
//!
//! (neighbours' `a` and `b` clipped at 4, "none" before the block's
//! start). The contexts of `a` and of `b` are one model's, clustered into
//! classes as the scores' are ([`super::model`]); the model is stored
//! compressed with zstd (most contexts never occur: their class bytes are
//! zeros). One coder runs through a block, `a` and `b` of each entry in
//! turn. (Why these contexts: `docs/compression.md`, format 4.)

use super::coded::{Coded, V4Settings, RUN};
use super::coder::{self, Tables, STATE_BYTES};
use super::context::Walk;
use super::model::{Counts, Model, MAX_CLASSES, SLOTS, WEIGHT};
use super::shape::{envelope_check, Shape};
use crate::rules::Position;
use rayon::prelude::*;
use std::io;

/// Bytes per envelope block of a file whose score blocks take
/// `block_bytes`: twice as many (each block spends its coder's state and
/// its count; four times as many fill too many blocks to the cap of
/// entries, docs/compression.md), at most 4096.
pub fn envelope_block_bytes(block_bytes: u32) -> u32 {
    (2 * block_bytes).min(*super::header::V4_BLOCK_BYTES.end())
}
/// Values of a neighbour's symbol in a context: 0..=4 (more as 4), 5 none.
const NB: u32 = 6;

/// The zstd level of the envelope's model.
const MODEL_LEVEL: i32 = 19;

/// The most bytes the envelope's model of layer `shape.n` takes before
/// it is compressed: class count, class map, frequencies of at most two
/// bytes each.
pub fn model_bound(shape: Shape) -> usize {
    2 + contexts(shape) as usize + 2 * MAX_CLASSES as usize * shape.alphabet as usize
}

/// Values of pit 0's seeds in a context: 0..=4 (more as 4).
const PIT0: u32 = 5;

/// Contexts of `a`.
#[inline]
fn a_contexts(shape: Shape) -> u32 {
    shape.alphabet * NB * NB * (shape.alphabet + 1) * PIT0
}

/// Contexts of `a` and `b`, one model's (those of `b` after those of `a`).
#[inline]
pub fn contexts(shape: Shape) -> u32 {
    a_contexts(shape) + shape.alphabet * shape.alphabet * NB * NB * PIT0
}

/// Classes of the envelope's model for `classes` of the scores'.
pub fn classes(classes: u32) -> u32 {
    (2 * classes).min(MAX_CLASSES)
}

/// The symbol of entry `i - k` of a block (`k` back), clipped, or none.
#[inline(always)]
fn back(v: &[u8], i: usize, k: usize) -> u32 {
    if k <= i {
        v[i - k].min(4) as u32
    } else {
        NB - 1
    }
}

/// The context of `a` of entry `i` of a block (position `p`), from the
/// block's score symbols `s` and the `a` symbols before it: its score,
/// the previous score, the previous and the neighbour's `a`, pit 0.
#[inline(always)]
pub fn context_a(shape: Shape, p: &Position, s: &[u8], a: &[u8], i: usize) -> u32 {
    let nb = super::shape::back(p).unwrap_or(usize::MAX);
    let s1 = if i > 0 {
        s[i - 1] as u32
    } else {
        shape.alphabet
    };
    let c = (s[i] as u32 * NB + back(a, i, 1)) * NB + back(a, i, nb);
    (c * (shape.alphabet + 1) + s1) * PIT0 + (p.0[0] as u32).min(PIT0 - 1)
}

/// The context of `b` of entry `i` of a block (position `p`), from its
/// score symbol `s`, its `a` and the `b` symbols before it: the score,
/// `a`, the previous and the neighbour's `b`, pit 0.
#[inline(always)]
pub fn context_b(shape: Shape, p: &Position, s: u8, ai: u8, b: &[u8], i: usize) -> u32 {
    let nb = super::shape::back(p).unwrap_or(usize::MAX);
    let c = ((s as u32 * shape.alphabet + ai as u32) * NB + back(b, i, 1)) * NB + back(b, i, nb);
    a_contexts(shape) + c * PIT0 + (p.0[0] as u32).min(PIT0 - 1)
}

/// The check hash of an envelope block's raw lower and upper values.
#[inline]
pub fn check(lower: &[u8], upper: &[u8]) -> u64 {
    envelope_check(lower, upper)
}

/// The envelope's part of a file: its model's bytes, the blocks' bytes
/// and the blocks (run by run).
pub(super) struct Code {
    pub(super) model: Vec<u8>,
    pub(super) block_bytes: u32,
    pub(super) blocks: Vec<Coded>,
}

/// Counts the contexts of a run of entries from entry `start` (score
/// symbols `s`, envelope symbols `a`, `b`): each under its own context
/// (weight [`WEIGHT`]) and under those it has near a block's start.
fn count_run(shape: Shape, start: u64, s: &[u8], a: &[u8], b: &[u8], counts: &mut Counts) {
    let mut w = Walk::at(shape.n, start);
    for i in 0..s.len() {
        let p = w.position();
        counts.add(context_a(shape, p, s, a, i), a[i], WEIGHT);
        counts.add(context_b(shape, p, s[i], a[i], b, i), b[i], WEIGHT);
        // As the `k`-th entry of a block.
        for k in 0..=i.min(2) {
            let (ss, aa, bb) = (&s[i - k..], &a[i - k..], &b[i - k..]);
            counts.add(context_a(shape, p, ss, aa, k), a[i], 1);
            counts.add(context_b(shape, p, s[i], a[i], bb, k), b[i], 1);
        }
        w.step();
    }
}

/// Codes a run of entries from entry `start` into blocks of `bb` bytes.
#[allow(clippy::too_many_arguments)]
fn code_run(
    shape: Shape,
    model: &Model,
    enc: &Tables,
    cap: usize,
    bb: usize,
    start: u64,
    s: &[u8],
    a: &[u8],
    b: &[u8],
    lower: &[u8],
    upper: &[u8],
) -> Coded {
    let al = shape.alphabet as usize;
    // Bits a block can spend on symbols, about: its bytes less the state's.
    let budget = (bb - STATE_BYTES) as f64 * 8.0 + 12.0;
    let mut out = Coded::default();
    let mut fc: Vec<(u8, u8)> = Vec::with_capacity(2 * cap);
    let mut buf = Vec::with_capacity(bb);
    let mut e = 0usize;
    while e < s.len() {
        let avail = (s.len() - e).min(cap);
        let mut w = Walk::at(shape.n, start + e as u64);
        fc.clear();
        let (mut bits, mut m) = (0.0, 0);
        let (sb, ab, bbk) = (&s[e..], &a[e..], &b[e..]);
        for i in 0..avail {
            let p = w.position();
            let ca = context_a(shape, p, sb, ab, i);
            let cb = context_b(shape, p, sb[i], ab[i], bbk, i);
            for (ctx, v) in [(ca, ab[i]), (cb, bbk[i])] {
                let c = model.class[ctx as usize];
                let f = enc.freq[c as usize * al + v as usize].0;
                debug_assert!(f > 0);
                fc.push((c, v));
                bits += (SLOTS as f64 / f as f64).log2();
            }
            if bits <= budget {
                m = i + 1;
            }
            if bits > budget + 64.0 {
                break;
            }
            w.step();
        }
        let mut m = m.max(1);
        let hash = |m: usize| check(&lower[e..e + m], &upper[e..e + m]);
        let len = |m: usize| coder::encoded_len(enc, al, &fc[..2 * m], hash(m));
        while m > 1 && len(m) > bb {
            m -= 1;
        }
        while 2 * m < fc.len() && len(m + 1) <= bb {
            m += 1;
        }
        coder::encode(enc, al, &fc[..2 * m], hash(m), &mut buf);
        debug_assert!(buf.len() <= bb);
        buf.resize(bb, 0);
        out.push(m, &buf);
        e += m;
    }
    out
}

/// The envelope of a layer of shape `shape` (its score symbols `sym`),
/// coded in blocks of `block_bytes` bytes of at most `lay.block_cap`
/// entries. Tables of the wrong size, or an entry whose lower, score and
/// upper are not in order within `-n..=n`, are
/// [`io::ErrorKind::InvalidInput`].
pub(super) fn code(
    shape: Shape,
    sym: &[u8],
    lower: &[u8],
    upper: &[u8],
    lay: V4Settings,
    block_bytes: u32,
) -> io::Result<Code> {
    let invalid = |m: String| io::Error::new(io::ErrorKind::InvalidInput, m);
    super::header::check_blocks(block_bytes, lay.block_cap)
        .map_err(|(f, r)| invalid(format!("envelope {f}: {r}")))?;
    let entries = sym.len();
    if lower.len() != entries || upper.len() != entries {
        return Err(invalid(format!(
            "layer {} has {entries} positions, lower {} and upper {}",
            shape.n,
            lower.len(),
            upper.len()
        )));
    }
    let n = shape.n as i32;
    // `a` and `b` written in place, a run at a time (no table of pairs:
    // two bytes a position less at the encoder's peak).
    let (mut a, mut b) = (vec![0u8; entries], vec![0u8; entries]);
    a.par_chunks_mut(RUN as usize)
        .zip(b.par_chunks_mut(RUN as usize))
        .enumerate()
        .try_for_each(|(k, (ak, bk))| {
            for (i, (ai, bi)) in ak.iter_mut().zip(bk.iter_mut()).enumerate() {
                let g = k * RUN as usize + i;
                let (l, s, u) = (
                    lower[g] as i8 as i32,
                    sym[g] as i32 - n,
                    upper[g] as i8 as i32,
                );
                if !(-n <= l && l <= s && s <= u && u <= n) {
                    return Err(invalid(format!(
                        "entry {g} of layer {}: lower {l}, score {s}, upper {u} are not in order within -{n}..={n}",
                        shape.n
                    )));
                }
                (*ai, *bi) = ((s - l) as u8, (u - s) as u8);
            }
            Ok(())
        })?;
    let runs: Vec<u64> = (0..entries as u64).step_by(RUN as usize).collect();
    let span = |r: u64| r as usize..(r + RUN).min(entries as u64) as usize;
    let nc = contexts(shape);
    let counts = runs
        .par_iter()
        .fold(
            || Counts::sized(nc, shape.alphabet),
            |mut c, &r| {
                let x = span(r);
                count_run(shape, r, &sym[x.clone()], &a[x.clone()], &b[x], &mut c);
                c
            },
        )
        .reduce(
            || Counts::sized(nc, shape.alphabet),
            |mut x, y| {
                x.merge(&y);
                x
            },
        );
    let model = Model::cluster(&counts, classes(lay.classes));
    let enc = Tables::new(&model.freqs, shape.alphabet as usize);
    let (cap, bb) = (lay.block_cap as usize, block_bytes as usize);
    let blocks: Vec<Coded> = runs
        .par_iter()
        .map(|&r| {
            let x = span(r);
            code_run(
                shape,
                &model,
                &enc,
                cap,
                bb,
                r,
                &sym[x.clone()],
                &a[x.clone()],
                &b[x.clone()],
                &lower[x.clone()],
                &upper[x],
            )
        })
        .collect();
    let count: u64 = blocks.iter().map(|r| r.entries.len() as u64).sum();
    if count > u32::MAX as u64 {
        return Err(invalid(format!(
            "{count} envelope blocks, format 4 holds at most {}",
            u32::MAX
        )));
    }
    let mut raw = Vec::new();
    model.write(&mut raw);
    let mut bytes = (raw.len() as u32).to_le_bytes().to_vec();
    bytes.extend(zstd::bulk::compress(&raw, MODEL_LEVEL)?);
    Ok(Code {
        model: bytes,
        block_bytes,
        blocks,
    })
}
