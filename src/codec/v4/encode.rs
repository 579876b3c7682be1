//! The format 4 file: header, sparse index, block entry counts, model,
//! blocks; and its encoder.

use super::coded::{Coded, V4Settings, RUN};
use super::coder::{self, Tables};
use super::context::Walk;
use super::header::{
    count_bits, encode_header, meta_checksum, EnvelopeFields, V4Fields, FULL, SCORES_ONLY,
    V4_ALIGN, V4_HEADER_BYTES, V4_SPARSE_BITS,
};
use super::index;
use super::model::{Counts, Model, WEIGHT};
use super::shape::{symbol, Shape};

use crate::codec::{Family, Header};
use crate::format::Kind;
use crate::index::layer_size;
use crate::rules::{Rules, MAX_SEEDS};
use rayon::prelude::*;
use std::io;

/// The check hash of a block's raw values.
#[inline]
pub fn block_check(raw: &[u8]) -> u64 {
    xxhash_rust::xxh3::xxh3_64(raw)
}

/// The check of a group of score blocks (their bytes back to back): the
/// low 32 bits of their `xxh3-64`.
#[inline]
pub fn group_check(bytes: &[u8]) -> u32 {
    xxhash_rust::xxh3::xxh3_64(bytes) as u32
}

/// The group checks of the score blocks of `runs` (blocks of `bb`
/// bytes), `gb` blocks a group, as the file stores them.
fn group_checks(runs: &[Coded], bb: usize, gb: u64, out: &mut Vec<u8>) {
    let mut h = xxhash_rust::xxh3::Xxh3::new();
    let mut n = 0;
    for block in runs.iter().flat_map(|r| r.bytes.chunks(bb)) {
        h.update(block);
        n += 1;
        if n == gb {
            out.extend_from_slice(&(h.digest() as u32).to_le_bytes());
            h.reset();
            n = 0;
        }
    }
    if n > 0 {
        out.extend_from_slice(&(h.digest() as u32).to_le_bytes());
    }
}

/// Counts the contexts of a run of symbols starting at entry `start`: each
/// entry under its own context (weight [`WEIGHT`]) and under the contexts
/// it would have near a block's start (weight 1).
fn count_run(shape: Shape, start: u64, s: &[u8], counts: &mut Counts) {
    let mut w = Walk::at(shape.n, start);
    for i in 0..s.len() {
        counts.add(w.context(shape, s, i), s[i], WEIGHT);
        counts.add(w.context(shape, &s[i..], 0), s[i], 1);
        if i >= 1 {
            counts.add(w.context(shape, &s[i - 1..], 1), s[i], 1);
        }
        if i >= 2 {
            counts.add(w.context(shape, &s[i - 2..], 2), s[i], 1);
        }
        w.step();
    }
}

/// Blocks of coded runs.
fn blocks_of(runs: &[Coded]) -> u64 {
    runs.iter().map(|r| r.entries.len() as u64).sum()
}

/// Codes the run of symbols `s` (raw values `raw`) from entry `start` into
/// blocks.
fn code_run(
    shape: Shape,
    model: &Model,
    enc: &Tables,
    lay: V4Settings,
    start: u64,
    s: &[u8],
    raw: &[u8],
) -> Coded {
    let a = shape.alphabet as usize;
    let bb = lay.block_bytes as usize;
    // Bits a block can spend on symbols, about: its bytes less the state's.
    let budget = (bb - coder::STATE_BYTES) as f64 * 8.0 + 12.0;
    let mut out = Coded::default();
    let mut fc: Vec<(u8, u8)> = Vec::with_capacity(lay.block_cap as usize);
    let mut buf = Vec::with_capacity(bb);
    let mut e = 0usize;
    while e < s.len() {
        let avail = (s.len() - e).min(lay.block_cap as usize);
        let mut w = Walk::at(shape.n, start + e as u64);
        fc.clear();
        let mut bits = 0.0;
        let mut m = 0;
        let blk = &s[e..];
        for i in 0..avail {
            let c = model.class[w.context(shape, blk, i) as usize];
            let f = enc.freq[c as usize * a + blk[i] as usize].0;
            debug_assert!(f > 0);
            fc.push((c, blk[i]));
            bits += (super::model::SLOTS as f64 / f as f64).log2();
            if bits <= budget {
                m = i + 1;
            }
            if bits > budget + 64.0 {
                break;
            }
            w.step();
        }
        let m0 = m.max(1);
        let mut m = m0;
        let len = |m: usize| coder::encoded_len(enc, a, &fc[..m], block_check(&raw[e..e + m]));
        while m > 1 && len(m) > bb {
            m -= 1;
        }
        while m < fc.len() && len(m + 1) <= bb {
            m += 1;
        }
        coder::encode(enc, a, &fc[..m], block_check(&raw[e..e + m]), &mut buf);
        debug_assert!(buf.len() <= bb);
        buf.resize(bb, 0);
        out.push(m, &buf);
        e += m;
    }
    out
}

/// The format 4 scores-only file of the raw scores `scores` of layer
/// `layer` (built under `rules`). Values outside `-n..=n`, a table of the
/// wrong size or bad settings are [`io::ErrorKind::InvalidInput`].
pub fn encode_scores(
    scores: &[u8],
    rules: &Rules,
    layer: u32,
    lay: V4Settings,
) -> io::Result<Vec<u8>> {
    encode_file(scores, None, None, rules, layer, lay)
}

/// The format 4 file of the values `scores` of layer `layer`: the raw
/// scores, or with `dont_care` (the `xxh3-64` of the raw scores) the
/// values a don't-care file stores ([`super::dont_care`]); and, in the
/// full form, the envelope ([`super::envelope`]: the raw lower and upper
/// tables and the bytes of its blocks).
pub(super) fn encode_file(
    scores: &[u8],
    envelope: Option<(&[u8], &[u8], u32)>,
    dont_care: Option<u64>,
    rules: &Rules,
    layer: u32,
    lay: V4Settings,
) -> io::Result<Vec<u8>> {
    let invalid = |m: String| io::Error::new(io::ErrorKind::InvalidInput, m);
    lay.check().map_err(|(f, r)| invalid(format!("{f}: {r}")))?;
    if layer > MAX_SEEDS || layer == 47 {
        return Err(invalid(format!("{layer} is not a layer of tables")));
    }
    let entries = layer_size(layer);
    if scores.len() as u64 != entries {
        return Err(invalid(format!(
            "layer {layer} has {entries} positions, the table {}",
            scores.len()
        )));
    }
    let shape = Shape::new(layer);
    let n = layer as i32;
    let sym: Vec<u8> = scores
        .par_iter()
        .enumerate()
        .map(|(g, &v)| {
            symbol(shape, v).ok_or_else(|| {
                invalid(format!(
                    "entry {g} of layer {layer}: score {} outside -{n}..={n}",
                    v as i8
                ))
            })
        })
        .collect::<io::Result<_>>()?;
    let runs: Vec<u64> = (0..entries).step_by(RUN as usize).collect();
    let span = |r: u64| r as usize..(r + RUN).min(entries) as usize;
    let counts = runs
        .par_iter()
        .fold(
            || Counts::new(shape),
            |mut c, &r| {
                count_run(shape, r, &sym[span(r)], &mut c);
                c
            },
        )
        .reduce(
            || Counts::new(shape),
            |mut a, b| {
                a.merge(&b);
                a
            },
        );
    let model = Model::cluster(&counts, lay.classes);
    let enc = Tables::new(&model.freqs, shape.alphabet as usize);
    let coded: Vec<Coded> = runs
        .par_iter()
        .map(|&r| code_run(shape, &model, &enc, lay, r, &sym[span(r)], &scores[span(r)]))
        .collect();
    let blocks = blocks_of(&coded);
    let env = envelope
        .map(|(lo, hi, bytes)| super::envelope::code(shape, &sym, lo, hi, lay, bytes))
        .transpose()?;
    if blocks > u32::MAX as u64 {
        return Err(invalid(format!(
            "{blocks} blocks, format 4 holds at most {}",
            u32::MAX
        )));
    }
    // Sparse index and counts, the scores' then the envelope's.
    let mut meta = Vec::new();
    let parts = [Some(&coded[..]), env.as_ref().map(|e| &e.blocks[..])];
    for part in parts.into_iter().flatten() {
        let c: Vec<u16> = part
            .iter()
            .flat_map(|r| r.entries.iter().copied())
            .collect();
        let sparse = index::build(c.iter().copied(), V4_SPARSE_BITS);
        index::write(&sparse, c.into_iter(), count_bits(lay.block_cap), &mut meta);
    }
    let model_at = meta.len();
    model.write(&mut meta);
    if let Some(e) = &env {
        meta.extend_from_slice(&e.model);
    }
    let fields = V4Fields {
        block_bytes: lay.block_bytes,
        blocks,
        sparse_bits: V4_SPARSE_BITS,
        model_bytes: (meta.len() - model_at) as u32,
        envelope: env.as_ref().map(|e| EnvelopeFields {
            block_bytes: e.block_bytes,
            blocks: blocks_of(&e.blocks),
        }),
        dont_care: dont_care.map(|_| xxhash_rust::xxh3::xxh3_64(scores)),
        group_checks: true,
    };
    group_checks(
        &coded,
        lay.block_bytes as usize,
        fields.group_blocks(),
        &mut meta,
    );
    debug_assert_eq!(
        (meta.len() - model_at) as u64,
        fields.model_bytes as u64 + fields.group_check_bytes()
    );
    let header = Header {
        rules: *rules,
        kind: Kind::Score,
        layer,
        entries,
        block_size: lay.block_cap,
        version: 4,
        tables: if env.is_some() { FULL } else { SCORES_ONLY },
        raws: match envelope {
            Some((lo, hi, _)) => [scores, lo, hi].map(xxhash_rust::xxh3::xxh3_64),
            None => [
                dont_care.unwrap_or_else(|| xxhash_rust::xxh3::xxh3_64(scores)),
                0,
                0,
            ],
        },
        family: Family::V4(fields.clone()),
    };
    let head = encode_header(&header, &fields);
    let sum = meta_checksum(&head, &meta);
    let mut file = Vec::with_capacity(
        V4_HEADER_BYTES + meta.len() + 64 + blocks as usize * lay.block_bytes as usize,
    );
    file.extend_from_slice(&head);
    file.extend_from_slice(&sum.to_le_bytes());
    file.extend_from_slice(&meta);
    file.resize((file.len() as u64).next_multiple_of(V4_ALIGN) as usize, 0);
    for r in coded.iter().chain(env.iter().flat_map(|e| &e.blocks)) {
        file.extend_from_slice(&r.bytes);
    }
    Ok(file)
}

/// The format 4 file of the full form: the raw `scores`, `lower` and
/// `upper` of layer `layer` (built under `rules`), the scores cut as
/// `lay` says and the envelope in blocks of `envelope_bytes` bytes. Bad
/// tables or settings are [`io::ErrorKind::InvalidInput`].
pub fn encode_full(
    scores: &[u8],
    lower: &[u8],
    upper: &[u8],
    rules: &Rules,
    layer: u32,
    lay: V4Settings,
    envelope_bytes: u32,
) -> io::Result<Vec<u8>> {
    encode_file(
        scores,
        Some((lower, upper, envelope_bytes)),
        None,
        rules,
        layer,
        lay,
    )
}
