//! Decoding format 3: blocks, one or two at a time, each stream checked
//! as it ends, into the table a reader serves.

use super::ans::{AnsError, Decoder};
use super::contexts::{a_context, b_context, envelope_check, score_check, score_context, step};
use super::{Layout, Models, Shape};
use crate::codec::CompressError;
use crate::format::Kind;
use crate::index::unrank_unchecked;
use crate::rules::Position;

/// One block to decode: where it starts, its streams and where its
/// values go.
pub struct Block<'a> {
    /// Its first entry.
    pub start: u64,
    /// The scores stream.
    pub scores: &'a [u8],
    /// The envelope stream, when the envelope is wanted.
    pub envelope: Option<&'a [u8]>,
    /// Score symbols (scratch, the block's length).
    pub sym: &'a mut [u8],
    /// The raw scores.
    pub raw: &'a mut [u8],
    /// The raw lower and upper tables (with the envelope; else empty).
    pub lower: &'a mut [u8],
    /// See `lower`.
    pub upper: &'a mut [u8],
}

/// A block being decoded.
struct Lane<'a> {
    ds: Decoder<'a>,
    de: Option<Decoder<'a>>,
    p: Position,
    b: Block<'a>,
}

/// Decodes entry `i` of a lane.
#[inline(always)]
fn lane_step(shape: Shape, models: &Models, l: &mut Lane<'_>, i: usize) -> Result<(), AnsError> {
    let ctx = score_context(shape, models.variant, &l.p, l.b.sym, i);
    let si = l.ds.next(&models.scores, ctx)?;
    l.b.sym[i] = si;
    if let (Some(de), Some((am, bm))) = (&mut l.de, &models.envelope) {
        let ai = de.next(am, a_context(&l.p, si, l.b.lower, i))?;
        l.b.lower[i] = ai;
        l.b.upper[i] = de.next(bm, b_context(shape, si, ai, l.b.upper, i))?;
    }
    step(&mut l.p);
    Ok(())
}

/// Decodes `N` blocks at once, entry by entry in turn, so that their
/// coders' chains of dependent steps overlap (a whole range decodes two
/// blocks at a time; a probe decodes one). Each block's scores stream, and
/// its envelope stream when asked for, is decoded and checked; on failure,
/// the block (its place in `blocks`) and why.
pub fn decode_blocks<const N: usize>(
    shape: Shape,
    models: &Models,
    blocks: [Block<'_>; N],
) -> Result<(), (usize, AnsError)> {
    if blocks.iter().any(|b| b.envelope.is_some()) && models.envelope.is_none() {
        return Err((0, AnsError::Model("no envelope model".into())));
    }
    let mut lanes = Vec::with_capacity(N);
    for (j, b) in blocks.into_iter().enumerate() {
        let at = |e| (j, e);
        lanes.push(Lane {
            ds: Decoder::new(b.scores).map_err(at)?,
            de: b.envelope.map(Decoder::new).transpose().map_err(at)?,
            p: unrank_unchecked(shape.n, b.start),
            b,
        });
    }
    let lanes: &mut [Lane<'_>; N] = (&mut lanes[..]).try_into().expect("N lanes");
    let common = lanes.iter().map(|l| l.b.sym.len()).min().unwrap_or(0);
    for i in 0..common {
        for (j, l) in lanes.iter_mut().enumerate() {
            lane_step(shape, models, l, i).map_err(|e| (j, e))?;
        }
    }
    for (j, l) in lanes.iter_mut().enumerate() {
        for i in common..l.b.sym.len() {
            lane_step(shape, models, l, i).map_err(|e| (j, e))?;
        }
    }
    let n = shape.n as u8;
    for (j, l) in lanes.iter_mut().enumerate() {
        let b = &mut l.b;
        for (r, &x) in b.raw.iter_mut().zip(b.sym.iter()) {
            *r = x.wrapping_sub(n);
        }
        l.ds.finish(score_check(b.raw)).map_err(|e| (j, e))?;
        if let Some(de) = &l.de {
            for i in 0..b.raw.len() {
                b.lower[i] = b.raw[i].wrapping_sub(b.lower[i]);
                b.upper[i] = b.raw[i].wrapping_add(b.upper[i]);
            }
            de.finish(envelope_check(b.lower, b.upper))
                .map_err(|e| (j, e))?;
        }
    }
    Ok(())
}

/// A thread's scratch space for decoding: per block decoded at once, the
/// score symbols, the raw scores and the envelope table not served.
pub(in crate::codec) struct Scratch([[Vec<u8>; 3]; 2]);

impl Scratch {
    /// Empty.
    pub(in crate::codec) const fn new() -> Scratch {
        Scratch([
            [Vec::new(), Vec::new(), Vec::new()],
            [Vec::new(), Vec::new(), Vec::new()],
        ])
    }
}

/// Decodes block `block` (its bytes `z`, its first entry `start`) of table
/// `kind` into `out` (the block's length).
pub(in crate::codec) fn decode_one(
    l: &Layout,
    scratch: &mut Scratch,
    kind: Kind,
    start: u64,
    z: &[u8],
    block: u64,
    out: &mut [u8],
) -> Result<(), CompressError> {
    let [s0, _] = &mut scratch.0;
    let b = block_of(l, kind, s0, z, start, block, out);
    decode_blocks(l.shape, &l.models, [b]).map_err(|(_, e)| stream_error(block, e))
}

/// Decodes two blocks of table `kind` at once (their coders' steps
/// overlap), each given as (block, its bytes, its first entry, its
/// output).
#[allow(clippy::type_complexity)]
pub(in crate::codec) fn decode_two(
    l: &Layout,
    scratch: &mut Scratch,
    kind: Kind,
    blocks: [(u64, &[u8], u64, &mut [u8]); 2],
) -> Result<(), CompressError> {
    let [s0, s1] = &mut scratch.0;
    let [(i0, z0, start0, o0), (i1, z1, start1, o1)] = blocks;
    let b0 = block_of(l, kind, s0, z0, start0, i0, o0);
    let b1 = block_of(l, kind, s1, z1, start1, i1, o1);
    decode_blocks(l.shape, &l.models, [b0, b1])
        .map_err(|(j, e)| stream_error(if j == 0 { i0 } else { i1 }, e))
}

/// What [`decode_blocks`] needs to decode block `block` (bytes `z`, first
/// entry `start`) into `out`, table `kind`, with scratch space `s`.
fn block_of<'a>(
    l: &Layout,
    kind: Kind,
    s: &'a mut [Vec<u8>; 3],
    z: &'a [u8],
    start: u64,
    block: u64,
    out: &'a mut [u8],
) -> Block<'a> {
    let (slen, elen) = l.stream_lens(block);
    let n = out.len();
    for v in s.iter_mut() {
        v.resize(n, 0);
    }
    let [sym, raw, other] = s;
    let (scores, envelope) = (&z[..slen], &z[slen..slen + elen]);
    let (sym, raw, other) = (&mut sym[..], &mut raw[..], &mut other[..]);
    match kind {
        Kind::Score => Block {
            start,
            scores,
            envelope: None,
            sym,
            raw: out,
            lower: &mut [],
            upper: &mut [],
        },
        Kind::Lower => Block {
            start,
            scores,
            envelope: Some(envelope),
            sym,
            raw,
            lower: out,
            upper: other,
        },
        Kind::Upper => Block {
            start,
            scores,
            envelope: Some(envelope),
            sym,
            raw,
            lower: other,
            upper: out,
        },
    }
}

/// A block that does not decode.
fn stream_error(block: u64, e: AnsError) -> CompressError {
    CompressError::Stream {
        block,
        message: e.to_string(),
    }
}
