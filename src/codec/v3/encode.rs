//! Encoding format 3: the counts of a layer's contexts, the models, and
//! the file (header, index, models, blocks) written in two passes.

use super::ans::{self, Counts, Model};
use super::contexts::{envelope_check, score_check};
use super::{
    check_block_size, encode_header, meta_checksum, project, streams, supers, symbol,
    walk_envelope, walk_scores, Models, Shape, V3Fields, FULL, SCORES_ONLY, SUPER, V3_HEADER_BYTES,
    VARIANTS,
};
use crate::codec::{Family, Header, STEP};
use crate::format::Kind;
use crate::index::layer_size;
use crate::rules::{Rules, MAX_SEEDS};
use rayon::prelude::*;
use std::io::{self, Seek, SeekFrom, Write};

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
pub struct TableSet<'a> {
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
    t: TableSet<'_>,
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
    let fields = V3Fields {
        variant,
        model_bytes: u32::try_from(model_bytes.len())
            .map_err(|_| invalid("the models take more than 4 GiB".into()))?,
    };
    let mut h = Header {
        rules: *rules,
        kind: Kind::Score,
        layer,
        entries,
        block_size,
        version: 3,
        tables: if envelope { FULL } else { SCORES_ONLY },
        raws: [0; 3],
        family: Family::V3(fields.clone()),
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
    meta.extend_from_slice(&encode_header(&h, &fields));
    meta.extend_from_slice(&[0u8; 8]);
    for s in &sup {
        meta.extend_from_slice(&s.to_le_bytes());
    }
    for l in &lens {
        meta.extend_from_slice(&l.to_le_bytes());
    }
    meta.extend_from_slice(&model_bytes);
    debug_assert_eq!(meta.len() as u64, data_start);
    let sum = meta_checksum(&meta, &meta[V3_HEADER_BYTES..]);
    meta[80..88].copy_from_slice(&sum.to_le_bytes());
    out.seek(SeekFrom::Start(base))?;
    out.write_all(&meta)?;
    out.seek(SeekFrom::Start(base + at))?;
    Ok(at)
}

/// The version 3 file of `t` in memory (see [`encode_to`]).
pub fn encode(t: TableSet<'_>, rules: &Rules, layer: u32, block_size: u32) -> io::Result<Vec<u8>> {
    let mut out = io::Cursor::new(Vec::new());
    encode_to(t, rules, layer, block_size, &mut out, &|_| {}, &|_, _| {})?;
    Ok(out.into_inner())
}
