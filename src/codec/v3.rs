//! Format version 3: a layer's tables coded by context models (see the
//! module docs of [`crate::codec`] for the layout and the measurements in
//! `docs/compression.md` for why these contexts).
//!
//! Each block holds a **scores stream** and, in the full form, an
//! **envelope stream**:
//!
//! * scores: the score `S` (as `S + n`), in the context of the previous
//!   entry's score, the score of the position with one seed moved back
//!   from pit 2 to pit 0 (`p0 + p1 + 2` entries earlier in Goedel order,
//!   when that is in the block), pit 0's seeds (0..=4, more as 4) and
//!   whether the score before the previous one was lower, equal or higher
//!   (variants 0..=3 use the first 1..=4 of these; the encoder keeps the
//!   one that makes the file smallest, model included);
//! * envelope: `a = S - lower` in the context of `S`, the previous entry's
//!   `a` and the `a` of the same neighbour as above (each 0..=4, more as
//!   4); then `b = upper - S` in the context of `S`, `a` and the previous
//!   entry's `b`.
//!
//! A score probe decodes the scores stream of one block; an envelope probe
//! decodes both.

use super::ans::{self, AnsError, Counts, Decoder, Model};
use crate::index::unrank_unchecked;
use crate::rules::Position;

/// Entries per block unless told otherwise (docs/compression.md: a random
/// probe decodes a whole block).
pub const DEFAULT_BLOCK_SIZE: u32 = 512;
/// Blocks per entry of the coarse block index.
pub const SUPER: u64 = 64;
/// The largest block size of version 3, in entries (a block's streams
/// must fit the index's 16-bit lengths).
pub const MAX_BLOCK_SIZE: u32 = 16384;
/// Variants of the scores model.
pub const VARIANTS: u8 = 4;
/// The tables a full-form file holds: scores, lower, upper.
pub const FULL: u8 = 0b111;
/// The tables a scores-only file holds.
pub const SCORES_ONLY: u8 = 0b001;

/// Sizes of the contexts and alphabets of layer `n`.
#[derive(Clone, Copy, Debug)]
pub struct Shape {
    /// Seeds.
    pub n: u32,
    /// Symbols: `0 ..= 2n`.
    pub alphabet: u32,
    /// Context values of a neighbour's score: the alphabet and "none".
    values: u32,
}

impl Shape {
    /// The shape of layer `n`.
    pub fn new(n: u32) -> Shape {
        Shape {
            n,
            alphabet: 2 * n + 1,
            values: 2 * n + 2,
        }
    }

    /// Contexts of scores-model variant `v`.
    pub fn score_contexts(&self, v: u8) -> u32 {
        let vv = self.values;
        match v {
            0 => vv,
            1 => vv * vv,
            2 => vv * vv * 5,
            _ => vv * vv * 15,
        }
    }

    /// Contexts of `a`.
    pub fn a_contexts(&self) -> u32 {
        self.alphabet * 36
    }

    /// Contexts of `b`.
    pub fn b_contexts(&self) -> u32 {
        self.alphabet * self.alphabet * 6
    }
}

/// Steps a position to the next in Goedel order (one seed from pit 0 to
/// pit 1 in the common case).
#[inline(always)]
fn step(p: &mut Position) {
    if p.0[0] > 0 {
        p.0[0] -= 1;
        p.0[1] += 1;
    } else {
        crate::index::advance(p);
    }
}

/// How far back the neighbour "one seed moved from pit 2 to pit 0" is, if
/// pit 2 has a seed.
#[inline(always)]
fn back(p: &Position) -> Option<usize> {
    (p.0[2] > 0).then_some(p.0[0] as usize + p.0[1] as usize + 2)
}

/// The context of the score of entry `i` of a block under variant
/// `variant`, from the scores symbols `out[..i]` before it and the
/// entry's position `p`.
#[inline(always)]
fn score_context(shape: Shape, variant: u8, p: &Position, out: &[u8], i: usize) -> u32 {
    let none = shape.alphabet as u8;
    let s1 = if i > 0 { out[i - 1] } else { none } as u32;
    if variant == 0 {
        return s1;
    }
    let sv = match back(p) {
        Some(k) if k <= i => out[i - k],
        _ => none,
    } as u32;
    let c = s1 * shape.values + sv;
    if variant == 1 {
        return c;
    }
    let c = c * 5 + (p.0[0]).min(4) as u32;
    if variant == 2 {
        return c;
    }
    let t = if i > 1 {
        (out[i - 2].cmp(&out[i - 1]) as i8 + 1) as u32
    } else {
        1
    };
    c * 3 + t
}

/// The context of `a` (`S - lower`) of entry `i`, from its score symbol
/// `si`, the `a` symbols before it and its position `p`.
#[inline(always)]
fn a_context(p: &Position, si: u8, a: &[u8], i: usize) -> u32 {
    let a1 = if i > 0 { a[i - 1].min(4) } else { 5 } as u32;
    let av = match back(p) {
        Some(k) if k <= i => a[i - k].min(4),
        _ => 5,
    } as u32;
    (si as u32 * 6 + a1) * 6 + av
}

/// The context of `b` (`upper - S`) of entry `i`, from its score symbol,
/// its `a` and the `b` symbols before it.
#[inline(always)]
fn b_context(shape: Shape, si: u8, ai: u8, b: &[u8], i: usize) -> u32 {
    let al = shape.alphabet;
    let b1 = if i > 0 { b[i - 1].min(4) } else { 5 } as u32;
    (si as u32 * al + (ai as u32).min(al - 1)) * 6 + b1
}

/// Walks the scores of the block of layer `shape.n` starting at entry
/// `start`: for each entry `i` of `out`, computes its context under
/// variant `variant` (the finest when counting) from `out[..i]`, asks
/// `sym(i, ctx)` for its symbol and stores it in `out[i]`.
#[inline(always)]
pub fn walk_scores<E>(
    shape: Shape,
    start: u64,
    variant: u8,
    out: &mut [u8],
    mut sym: impl FnMut(usize, u32) -> Result<u8, E>,
) -> Result<(), E> {
    let mut p = unrank_unchecked(shape.n, start);
    for i in 0..out.len() {
        let ctx = score_context(shape, variant, &p, out, i);
        out[i] = sym(i, ctx)?;
        step(&mut p);
    }
    Ok(())
}

/// The scores-model context of the finest variant, projected to variant
/// `v` (the variants nest: a coarser one drops the last factors).
pub fn project(shape: Shape, fine: u32, v: u8) -> u32 {
    match v {
        0 => fine / (15 * shape.values),
        1 => fine / 15,
        2 => fine / 3,
        _ => fine,
    }
}

/// Walks the envelope of a block given its scores symbols `s`: for each
/// entry, `sym(false, i, ctx)` gives `a` and then `sym(true, i, ctx)` gives
/// `b`, stored in `a` and `b`.
#[inline(always)]
pub fn walk_envelope<E>(
    shape: Shape,
    start: u64,
    s: &[u8],
    a: &mut [u8],
    b: &mut [u8],
    mut sym: impl FnMut(bool, usize, u32) -> Result<u8, E>,
) -> Result<(), E> {
    let mut p = unrank_unchecked(shape.n, start);
    for i in 0..s.len() {
        a[i] = sym(false, i, a_context(&p, s[i], a, i))?;
        b[i] = sym(true, i, b_context(shape, s[i], a[i], b, i))?;
        step(&mut p);
    }
    Ok(())
}

/// The check hash of a block's scores (the state a stream ends in
/// holds 31 bits of it).
pub fn score_check(s: &[u8]) -> u64 {
    xxhash_rust::xxh3::xxh3_64(s)
}

/// The check hash of a block's envelope.
pub fn envelope_check(lower: &[u8], upper: &[u8]) -> u64 {
    xxhash_rust::xxh3::xxh3_64(lower) ^ xxhash_rust::xxh3::xxh3_64(upper).rotate_left(17)
}

/// The models of a file.
#[derive(Clone, Debug)]
pub struct Models {
    /// The scores model's variant.
    pub variant: u8,
    /// The scores model.
    pub scores: Model,
    /// The models of `a` and `b`, in the full form.
    pub envelope: Option<(Model, Model)>,
}

impl Models {
    /// The models' bytes.
    pub fn write(&self, out: &mut Vec<u8>) {
        self.scores.write(out);
        if let Some((a, b)) = &self.envelope {
            a.write(out);
            b.write(out);
        }
    }

    /// Reads the models of a file of layer `shape.n` holding `tables`.
    pub fn read(b: &[u8], shape: Shape, variant: u8, tables: u8) -> Result<Models, AnsError> {
        let mut at = 0;
        let scores = Model::read(b, &mut at, shape.score_contexts(variant), shape.alphabet)?;
        let envelope = if tables == FULL {
            let a = Model::read(b, &mut at, shape.a_contexts(), shape.alphabet)?;
            let bm = Model::read(b, &mut at, shape.b_contexts(), shape.alphabet)?;
            Some((a, bm))
        } else {
            None
        };
        if at != b.len() {
            return Err(AnsError::Model(format!(
                "{} bytes after the models",
                b.len() - at
            )));
        }
        Ok(Models {
            variant,
            scores,
            envelope,
        })
    }
}

/// A value of the table as a symbol (`v + n`); `None` outside `-n..=n`.
#[inline]
pub fn symbol(shape: Shape, v: u8) -> Option<u8> {
    let s = v as i8 as i32 + shape.n as i32;
    (0..shape.alphabet as i32).contains(&s).then_some(s as u8)
}

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

/// Counts the contexts of the block of scores symbols `s` starting at
/// `start` (finest variant).
pub fn count_scores(shape: Shape, start: u64, s: &[u8], counts: &mut Counts) {
    let mut out = vec![0u8; s.len()];
    let _ = walk_scores::<()>(shape, start, VARIANTS - 1, &mut out, |i, ctx| {
        counts.add(ctx, s[i]);
        Ok(s[i])
    });
}

/// Counts the envelope contexts of a block: `a` and `b` symbols given the
/// score symbols `s`.
pub fn count_envelope(
    shape: Shape,
    start: u64,
    s: &[u8],
    a: &[u8],
    b: &[u8],
    counts: &mut (Counts, Counts),
) {
    let (mut ao, mut bo) = (vec![0u8; s.len()], vec![0u8; s.len()]);
    let _ = walk_envelope::<()>(shape, start, s, &mut ao, &mut bo, |second, i, ctx| {
        Ok(if second {
            counts.1.add(ctx, b[i]);
            b[i]
        } else {
            counts.0.add(ctx, a[i]);
            a[i]
        })
    });
}

/// Appends the scores stream of a block (score symbols `s`, raw scores
/// `raw`) to `out`.
pub fn encode_scores(
    shape: Shape,
    models: &Models,
    start: u64,
    s: &[u8],
    raw: &[u8],
    out: &mut Vec<u8>,
) {
    let m = &models.scores;
    let mut syms = Vec::with_capacity(s.len());
    let mut o = vec![0u8; s.len()];
    let _ = walk_scores::<()>(shape, start, models.variant, &mut o, |i, ctx| {
        syms.push((m, ctx, s[i]));
        Ok(s[i])
    });
    ans::encode(syms.into_iter(), score_check(raw), out);
}

/// Appends the envelope stream of a block to `out`.
#[allow(clippy::too_many_arguments)]
pub fn encode_envelope(
    shape: Shape,
    models: &Models,
    start: u64,
    s: &[u8],
    a: &[u8],
    b: &[u8],
    lower: &[u8],
    upper: &[u8],
    out: &mut Vec<u8>,
) {
    let (am, bm) = models.envelope.as_ref().expect("a full-form model");
    // Two models in one stream: code with ids that say which.
    let mut syms = Vec::with_capacity(2 * s.len());
    let (mut ao, mut bo) = (vec![0u8; s.len()], vec![0u8; s.len()]);
    let _ = walk_envelope::<()>(shape, start, s, &mut ao, &mut bo, |second, i, ctx| {
        let v = if second { b[i] } else { a[i] };
        syms.push((if second { bm } else { am }, ctx, v));
        Ok(v)
    });
    ans::encode(syms.into_iter(), envelope_check(lower, upper), out);
}

// ---------------------------------------------------------------------
// The file: header, index, models, blocks.

use super::{meta_checksum_v3, u32_at, u64_at, CompressError, Header, MAGIC, STEP};
use crate::format::Kind;
use crate::index::layer_size;
use crate::rules::{Rules, MAX_SEEDS};
use rayon::prelude::*;
use std::io::{self, Seek, SeekFrom, Write};

/// Bytes before the block index in version 3.
pub const HEADER_BYTES: usize = 88;

/// Streams per block of a file holding `tables`.
pub fn streams(tables: u8) -> u64 {
    if tables == FULL {
        2
    } else {
        1
    }
}

/// Entries of the coarse index (one per [`SUPER`] blocks, and the end).
fn supers(h: &Header) -> u64 {
    h.blocks().div_ceil(SUPER) + 1
}

/// Where the models start: after the header, the coarse index (8 bytes
/// each) and the stream lengths (2 bytes per stream per block).
pub fn index_end(h: &Header) -> u64 {
    HEADER_BYTES as u64 + 8 * supers(h) + 2 * streams(h.tables) * h.blocks()
}

/// Checks the block size of version 3.
pub fn check_block_size(b: u32) -> Result<(), (&'static str, String)> {
    if b == 0 || b > MAX_BLOCK_SIZE {
        return Err((
            "block size",
            format!("{b} is not in 1..={MAX_BLOCK_SIZE} (format version 3)"),
        ));
    }
    Ok(())
}

/// Reads the fields of a version 3 header from its first bytes `b` of a
/// file of `len` bytes (magic and version already checked).
pub(super) fn header_fields(b: &[u8], len: u64) -> Result<Header, CompressError> {
    if b.len() < HEADER_BYTES {
        return Err(CompressError::Truncated {
            part: "header",
            needed: HEADER_BYTES as u64,
            found: len,
        });
    }
    let field = |field: &'static str, reason: String| CompressError::HeaderField { field, reason };
    let tables = b[12];
    if tables != FULL && tables != SCORES_ONLY {
        return Err(field(
            "tables",
            format!("{tables:#05b} is neither scores alone (0b001) nor all three (0b111)"),
        ));
    }
    let variant = b[13];
    if variant >= VARIANTS {
        return Err(field(
            "model variant",
            format!("{variant}, at most {}", VARIANTS - 1),
        ));
    }
    if b[14..16] != [0; 2] || b[52..56] != [0; 4] {
        return Err(field("reserved", "reserved bytes are not zero".into()));
    }
    let rules = super::rule_set(b)?;
    let layer = u32_at(b, 32);
    if layer > MAX_SEEDS || layer == 47 {
        return Err(field("layer", format!("{layer} is not a layer of tables")));
    }
    let entries = u64_at(b, 40);
    let size = layer_size(layer);
    if entries != size {
        return Err(field(
            "entries",
            format!("{entries}, but layer {layer} has {size} positions"),
        ));
    }
    let block_size = u32_at(b, 36);
    check_block_size(block_size).map_err(|(f, r)| field(f, r))?;
    let model_bytes = u32_at(b, 48);
    let mut raws = [u64_at(b, 56), u64_at(b, 64), u64_at(b, 72)];
    if tables == SCORES_ONLY {
        if raws[1] != 0 || raws[2] != 0 {
            return Err(field(
                "reserved",
                "a scores-only file has envelope checksums".into(),
            ));
        }
        raws = [raws[0], 0, 0];
    }
    Ok(Header {
        rules,
        kind: Kind::Score,
        layer,
        entries,
        block_size,
        level: 0,
        dictionary: 0,
        version: 3,
        tables,
        variant,
        model_bytes,
        raws,
    })
}

/// The first 80 bytes of a version 3 header.
fn encode_header(h: &Header) -> [u8; 80] {
    let mut b = [0u8; 80];
    b[0..8].copy_from_slice(&MAGIC);
    b[8..12].copy_from_slice(&3u32.to_le_bytes());
    b[12] = h.tables;
    b[13] = h.variant;
    let tag = h.rules.tag().as_bytes();
    b[16..16 + tag.len()].copy_from_slice(tag);
    b[32..36].copy_from_slice(&h.layer.to_le_bytes());
    b[36..40].copy_from_slice(&h.block_size.to_le_bytes());
    b[40..48].copy_from_slice(&h.entries.to_le_bytes());
    b[48..52].copy_from_slice(&h.model_bytes.to_le_bytes());
    for (k, r) in h.raws.iter().enumerate() {
        b[56 + 8 * k..64 + 8 * k].copy_from_slice(&r.to_le_bytes());
    }
    b
}

/// The block index and models of a version 3 file.
#[derive(Clone, Debug)]
pub struct Layout {
    /// The shape of the layer.
    pub shape: Shape,
    /// The coarse index: where every [`SUPER`]-th block starts, and the
    /// end of the file.
    supers: Vec<u64>,
    /// Per block, the length of each stream.
    lens: Vec<u16>,
    streams: usize,
    /// The models.
    pub models: Models,
}

impl Layout {
    /// Where block `i` starts, and the lengths of its scores and envelope
    /// streams (0 for a scores-only file).
    #[inline]
    pub fn block(&self, i: u64) -> (u64, usize, usize) {
        let k = self.streams;
        let first = i - i % SUPER;
        let mut at = self.supers[(i / SUPER) as usize];
        for j in first..i {
            let j = j as usize * k;
            at += self.lens[j..j + k].iter().map(|&x| x as u64).sum::<u64>();
        }
        let (a, e) = self.stream_lens(i);
        (at, a, e)
    }

    /// The lengths of the scores and envelope streams of block `i` (0 for
    /// a scores-only file).
    #[inline]
    pub fn stream_lens(&self, i: u64) -> (usize, usize) {
        let j = i as usize * self.streams;
        let e = if self.streams == 2 {
            self.lens[j + 1] as usize
        } else {
            0
        };
        (self.lens[j] as usize, e)
    }
}

/// Reads and checks the block index and models of a version 3 file (`b`
/// holds at least its first `h.data_start()` bytes), and the checksum of
/// header, index and models.
pub fn layout(h: &Header, b: &[u8], len: u64) -> Result<Layout, CompressError> {
    let data_start = h.data_start();
    if len < data_start || (b.len() as u64) < data_start {
        return Err(CompressError::Truncated {
            part: "block index",
            needed: data_start,
            found: len,
        });
    }
    let blocks = h.blocks();
    let ns = supers(h);
    let k = streams(h.tables) as usize;
    let sup: Vec<u64> = (0..ns)
        .map(|i| u64_at(b, HEADER_BYTES + 8 * i as usize))
        .collect();
    let lens_at = HEADER_BYTES + 8 * ns as usize;
    let lens: Vec<u16> = (0..blocks as usize * k)
        .map(|i| u16::from_le_bytes([b[lens_at + 2 * i], b[lens_at + 2 * i + 1]]))
        .collect();
    super::check_span(
        sup[0],
        sup[ns as usize - 1],
        h,
        len,
        "the end of the block index and models",
    )?;
    for s in 0..ns - 1 {
        let first = s * SUPER;
        let end = (first + SUPER).min(blocks);
        let mut total = 0u64;
        for i in first..end {
            for j in 0..k {
                let l = lens[i as usize * k + j];
                if l < 8 || l % 4 != 0 {
                    return Err(CompressError::OffsetOutOfRange {
                        block: i,
                        offset: l as u64,
                        reason: "is the length of a stream, a multiple of 4 bytes and at least 8"
                            .into(),
                    });
                }
                total += l as u64;
            }
        }
        let (a, e) = (sup[s as usize], sup[s as usize + 1]);
        if e < a || e - a != total {
            return Err(CompressError::OffsetOutOfRange {
                block: end,
                offset: e,
                reason: format!("after {a}, but blocks {first}..{end} take {total} bytes"),
            });
        }
    }
    let stored = u64_at(b, 80);
    let found = meta_checksum_v3(b, &b[HEADER_BYTES..data_start as usize]);
    if stored != found {
        return Err(CompressError::IndexChecksum {
            expected: stored,
            found,
        });
    }
    let shape = Shape::new(h.layer);
    let models = Models::read(
        &b[h.index_end() as usize..data_start as usize],
        shape,
        h.variant,
        h.tables,
    )
    .map_err(|e| CompressError::HeaderField {
        field: "models",
        reason: e.to_string(),
    })?;
    Ok(Layout {
        shape,
        supers: sup,
        lens,
        streams: k,
        models,
    })
}

/// The symbols of a block: scores (`S + n`) and, with the envelope,
/// `a = S - lower` and `b = upper - S`; an entry out of range is
/// [`io::ErrorKind::InvalidInput`].
fn symbols(
    shape: Shape,
    start: u64,
    s: &[u8],
    env: Option<(&[u8], &[u8])>,
) -> io::Result<(Vec<u8>, Vec<u8>, Vec<u8>)> {
    let bad = |g: u64, what: String| {
        io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("entry {g} of layer {}: {what}", shape.n),
        )
    };
    let n = shape.n as i32;
    let mut sym = Vec::with_capacity(s.len());
    for (i, &v) in s.iter().enumerate() {
        sym.push(symbol(shape, v).ok_or_else(|| {
            bad(
                start + i as u64,
                format!("score {} outside -{n}..={n}", v as i8),
            )
        })?);
    }
    let (mut a, mut b) = (Vec::new(), Vec::new());
    if let Some((lo, hi)) = env {
        a.reserve(s.len());
        b.reserve(s.len());
        for i in 0..s.len() {
            let (sv, l, u) = (s[i] as i8 as i32, lo[i] as i8 as i32, hi[i] as i8 as i32);
            if !(-n <= l && l <= sv && sv <= u && u <= n) {
                return Err(bad(
                    start + i as u64,
                    format!("lower {l}, score {sv}, upper {u} are not in order within -{n}..={n}"),
                ));
            }
            a.push((sv - l) as u8);
            b.push((u - sv) as u8);
        }
    }
    Ok((sym, a, b))
}

/// What [`encode`] codes: the raw scores and, for the full form, the raw
/// lower and upper tables of the same layer.
#[derive(Clone, Copy)]
pub struct Tables<'a> {
    /// `scores.n`.
    pub scores: &'a [u8],
    /// `lower.n` and `upper.n`, or `None` for a scores-only file.
    pub envelope: Option<(&'a [u8], &'a [u8])>,
}

/// Writes the version 3 file of `t` (layer `layer`, built under `rules`)
/// to `out`, `block_size` entries per block: a pass to count contexts, a
/// pass to code the blocks (both in parallel on the rayon pool, a step at
/// a time); `progress` gets the blocks done in each pass, `done(start,
/// len)` the entries this pass will not read again (a step at a time, in
/// order, in each pass), so that the caller can release what it mapped.
/// Returns the bytes written. Invalid settings, tables of the wrong size
/// or values out of order are [`io::ErrorKind::InvalidInput`].
pub fn encode_to<W: Write + Seek>(
    t: Tables<'_>,
    rules: &Rules,
    layer: u32,
    block_size: u32,
    out: &mut W,
    progress: &(dyn Fn(u64) + Sync),
    done: &dyn Fn(usize, usize),
) -> io::Result<u64> {
    let invalid = |m: String| io::Error::new(io::ErrorKind::InvalidInput, m);
    check_block_size(block_size).map_err(|(f, r)| invalid(format!("{f}: {r}")))?;
    if layer > MAX_SEEDS || layer == 47 {
        return Err(invalid(format!("{layer} is not a layer of tables")));
    }
    let entries = layer_size(layer);
    let sizes_ok = t.scores.len() as u64 == entries
        && t.envelope.map_or(true, |(l, u)| {
            l.len() as u64 == entries && u.len() as u64 == entries
        });
    if !sizes_ok {
        return Err(invalid(format!(
            "layer {layer} has {entries} positions; the tables given differ"
        )));
    }
    let shape = Shape::new(layer);
    let bs = block_size as u64;
    let blocks = entries.div_ceil(bs);
    let range = |i: u64| (i * bs) as usize..((i + 1) * bs).min(entries) as usize;
    let block_syms = |i: u64| {
        let r = range(i);
        symbols(
            shape,
            i * bs,
            &t.scores[r.clone()],
            t.envelope.map(|(l, u)| (&l[r.clone()], &u[r])),
        )
    };
    // Pass 1: count, a step at a time, each step in as many contiguous
    // parts as threads (each with its counts).
    let fine = shape.score_contexts(VARIANTS - 1);
    let envelope = t.envelope.is_some();
    let parts = (rayon::current_num_threads() as u64).max(1);
    let mut counted: Vec<(Counts, Option<(Counts, Counts)>)> = (0..parts)
        .map(|_| {
            (
                Counts::new(fine, shape.alphabet),
                envelope.then(|| {
                    (
                        Counts::new(shape.a_contexts(), shape.alphabet),
                        Counts::new(shape.b_contexts(), shape.alphabet),
                    )
                }),
            )
        })
        .collect();
    let per_step = (STEP as u64 / bs).max(1);
    let mut first = 0u64;
    while first < blocks {
        let last = (first + per_step).min(blocks);
        let k = last - first;
        counted
            .par_iter_mut()
            .enumerate()
            .try_for_each(|(p, (cs, ce))| -> io::Result<()> {
                let p = p as u64;
                for i in first + p * k / parts..first + (p + 1) * k / parts {
                    let (s, a, b) = block_syms(i)?;
                    count_scores(shape, i * bs, &s, cs);
                    if let Some(ce) = ce {
                        count_envelope(shape, i * bs, &s, &a, &b, ce);
                    }
                }
                Ok(())
            })?;
        let (from, to) = ((first * bs) as usize, ((last * bs).min(entries)) as usize);
        done(from, to - from);
        progress(k);
        first = last;
    }
    let mut it = counted.into_iter();
    let (mut cs, mut ce) = it.next().expect("at least one part");
    for (c, e) in it {
        cs.merge(&c);
        if let (Some(a), Some(b)) = (&mut ce, &e) {
            a.0.merge(&b.0);
            a.1.merge(&b.1);
        }
    }
    // The scores model: the variant that makes the smallest file.
    let mut best: Option<(f64, u8, Model)> = None;
    for v in 0..VARIANTS {
        let c = cs.project(shape.score_contexts(v), |x| project(shape, x, v));
        let m = Model::from_counts(&c);
        let mut bytes = Vec::new();
        m.write(&mut bytes);
        let cost = m.cost(&c) + 8.0 * bytes.len() as f64;
        if best.as_ref().map_or(true, |(b, ..)| cost < *b) {
            best = Some((cost, v, m));
        }
    }
    let (_, variant, scores) = best.expect("four variants");
    let models = Models {
        variant,
        scores,
        envelope: ce.map(|(a, b)| (Model::from_counts(&a), Model::from_counts(&b))),
    };
    let mut model_bytes = Vec::new();
    models.write(&mut model_bytes);
    let mut h = Header {
        rules: *rules,
        kind: Kind::Score,
        layer,
        entries,
        block_size,
        level: 0,
        dictionary: 0,
        version: 3,
        tables: if envelope { FULL } else { SCORES_ONLY },
        variant,
        model_bytes: u32::try_from(model_bytes.len())
            .map_err(|_| invalid("the models take more than 4 GiB".into()))?,
        raws: [0; 3],
    };
    // Pass 2: code the blocks, a step at a time, and write them in order.
    let base = out.stream_position()?;
    let data_start = h.data_start();
    out.write_all(&vec![0u8; data_start as usize])?;
    let k = streams(h.tables) as usize;
    let mut sup = Vec::with_capacity(supers(&h) as usize);
    let mut lens: Vec<u16> = Vec::with_capacity(blocks as usize * k);
    let mut at = data_start;
    let mut hashes = [
        xxhash_rust::xxh3::Xxh3::new(),
        xxhash_rust::xxh3::Xxh3::new(),
        xxhash_rust::xxh3::Xxh3::new(),
    ];
    let mut first = 0u64;
    while first < blocks {
        let last = (first + per_step).min(blocks);
        let coded: Vec<(Vec<u8>, usize)> = (first..last)
            .into_par_iter()
            .map(|i| -> io::Result<_> {
                let (s, a, b) = block_syms(i)?;
                let r = range(i);
                let mut buf = Vec::new();
                encode_scores(shape, &models, i * bs, &s, &t.scores[r.clone()], &mut buf);
                let slen = buf.len();
                if let Some((lo, hi)) = t.envelope {
                    encode_envelope(
                        shape,
                        &models,
                        i * bs,
                        &s,
                        &a,
                        &b,
                        &lo[r.clone()],
                        &hi[r],
                        &mut buf,
                    );
                }
                Ok((buf, slen))
            })
            .collect::<io::Result<_>>()?;
        for (j, (buf, slen)) in coded.iter().enumerate() {
            let i = first + j as u64;
            if i % SUPER == 0 {
                sup.push(at);
            }
            let too_long = || invalid(format!("block {i} codes to more than 65535 bytes"));
            lens.push(u16::try_from(*slen).map_err(|_| too_long())?);
            if k == 2 {
                lens.push(u16::try_from(buf.len() - slen).map_err(|_| too_long())?);
            }
            out.write_all(buf)?;
            at += buf.len() as u64;
        }
        let (from, to) = ((first * bs) as usize, ((last * bs).min(entries)) as usize);
        hashes[0].update(&t.scores[from..to]);
        if let Some((lo, hi)) = t.envelope {
            hashes[1].update(&lo[from..to]);
            hashes[2].update(&hi[from..to]);
        }
        done(from, to - from);
        progress(last - first);
        first = last;
    }
    sup.push(at);
    h.raws[0] = hashes[0].digest();
    if envelope {
        h.raws[1] = hashes[1].digest();
        h.raws[2] = hashes[2].digest();
    }
    let mut meta = Vec::with_capacity(data_start as usize);
    meta.extend_from_slice(&encode_header(&h));
    meta.extend_from_slice(&[0u8; 8]);
    for s in &sup {
        meta.extend_from_slice(&s.to_le_bytes());
    }
    for l in &lens {
        meta.extend_from_slice(&l.to_le_bytes());
    }
    meta.extend_from_slice(&model_bytes);
    debug_assert_eq!(meta.len() as u64, data_start);
    let sum = meta_checksum_v3(&meta, &meta[HEADER_BYTES..]);
    meta[80..88].copy_from_slice(&sum.to_le_bytes());
    out.seek(SeekFrom::Start(base))?;
    out.write_all(&meta)?;
    out.seek(SeekFrom::Start(base + at))?;
    Ok(at)
}

/// The version 3 file of `t` in memory (see [`encode_to`]).
pub fn encode(t: Tables<'_>, rules: &Rules, layer: u32, block_size: u32) -> io::Result<Vec<u8>> {
    let mut out = io::Cursor::new(Vec::new());
    encode_to(t, rules, layer, block_size, &mut out, &|_| {}, &|_, _| {})?;
    Ok(out.into_inner())
}
