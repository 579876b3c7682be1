//! Writing a table in format 1 or 2: blocks compressed in parallel, with
//! or without a trained dictionary.

use super::{check, encode_header, meta_checksum, ZstdFields, ZSTD_HEADER_BYTES};
use crate::codec::header::kind_code;
use crate::codec::{Family, Header, Settings, STEP};
use crate::format::Kind;
use crate::rules::Rules;
use rayon::prelude::*;
use std::cell::RefCell;
use std::io::{self, Seek, SeekFrom, Write};
use zstd::zstd_safe;

/// A dictionary of at most `size` bytes trained on blocks spread evenly over
/// `table` (about a hundred times its size of samples), or `None` when the
/// table is too small to train one on. Deterministic.
fn train_dictionary(table: &[u8], block_size: usize, size: u32) -> Option<Vec<u8>> {
    let blocks = table.len().div_ceil(block_size);
    let budget = (size as usize * 100).clamp(1 << 20, 16 << 20);
    let want = (budget / block_size).clamp(1, blocks);
    if size == 0 || blocks < 16 || table.len() < 4 * size as usize {
        return None;
    }
    let samples: Vec<&[u8]> = (0..want)
        .map(|k| {
            let i = k * blocks / want;
            &table[i * block_size..((i + 1) * block_size).min(table.len())]
        })
        .collect();
    let d = zstd::dict::from_samples(&samples, size as usize).ok()?;
    (!d.is_empty()).then_some(d)
}

thread_local! {
    static CCTX: RefCell<Option<(i32, zstd::bulk::Compressor<'static>)>> = const { RefCell::new(None) };
}

/// Compresses one block with this thread's compressor for `level`.
fn compress_block(level: i32, data: &[u8]) -> io::Result<Vec<u8>> {
    CCTX.with(|c| {
        let mut c = c.borrow_mut();
        if c.as_ref().map(|(l, _)| *l) != Some(level) {
            let mut z = zstd::bulk::Compressor::new(level)?;
            z.set_parameter(zstd_safe::CParameter::ChecksumFlag(true))?;
            z.set_parameter(zstd_safe::CParameter::ContentSizeFlag(true))?;
            *c = Some((level, z));
        }
        let (_, z) = c.as_mut().expect("just made");
        z.compress(data)
    })
}

/// Writes the compressed form of `table` (layer `layer`, table `kind`,
/// built under `rules`) to
/// `out`, blocks compressed in parallel on the rayon pool; `progress` gets
/// the blocks done. Returns the bytes written. Invalid settings or a table
/// of the wrong size are [`io::ErrorKind::InvalidInput`].
pub fn encode_to<W: Write + Seek>(
    table: &[u8],
    rules: &Rules,
    kind: Kind,
    layer: u32,
    settings: Settings,
    out: &mut W,
    progress: &(dyn Fn(u64) + Sync),
) -> io::Result<u64> {
    encode_steps(
        table,
        rules,
        kind,
        layer,
        settings,
        out,
        progress,
        &|_, _| {},
    )
}

/// [`encode_to`], calling `done(start, len)` once the bytes
/// `start..start + len` of `table` are compressed and written and will not
/// be read again (one step of [`STEP`] bytes at a time, in order; the
/// table's checksum is computed along the way). Without a dictionary the
/// table is read once, in order.
#[allow(clippy::too_many_arguments)]
pub(crate) fn encode_steps<W: Write + Seek>(
    table: &[u8],
    rules: &Rules,
    kind: Kind,
    layer: u32,
    settings: Settings,
    out: &mut W,
    progress: &(dyn Fn(u64) + Sync),
    done: &dyn Fn(usize, usize),
) -> io::Result<u64> {
    settings.check().map_err(|(name, reason)| {
        io::Error::new(io::ErrorKind::InvalidInput, format!("{name}: {reason}"))
    })?;
    if !matches!(settings.version, 1 | 2) {
        let v = settings.version;
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("format {v} codes a layer's tables together (codec::v{v}::encode_to)"),
        ));
    }
    let dict = match settings.dictionary {
        0 => None,
        size => train_dictionary(table, settings.block_size as usize, size),
    };
    let fields = ZstdFields {
        level: settings.level,
        dictionary: dict.as_ref().map_or(0, |d| d.len() as u32),
    };
    let mut header = Header {
        rules: *rules,
        kind,
        layer,
        entries: table.len() as u64,
        block_size: settings.block_size,
        version: if dict.is_some() { 2 } else { 1 },
        tables: 1 << kind_code(kind),
        raws: [0; 3],
        family: Family::Zstd(fields.clone()),
    };
    let mut raw_hash = xxhash_rust::xxh3::Xxh3::new();
    check(&header, &fields).map_err(|e| io::Error::new(io::ErrorKind::InvalidInput, e))?;
    let cdict = dict
        .as_ref()
        .map(|d| zstd::dict::EncoderDictionary::copy(d, settings.level));
    let bs = settings.block_size as usize;
    let blocks = header.blocks() as usize;
    let base = out.stream_position()?;
    let data_start = header.data_start();
    out.write_all(&vec![0u8; data_start as usize])?;
    let mut index = Vec::with_capacity(8 * (blocks + 1));
    let mut at = data_start;
    index.extend_from_slice(&at.to_le_bytes());
    let per_step = (STEP / bs).max(1);
    for first in (0..blocks).step_by(per_step) {
        let last = (first + per_step).min(blocks);
        let block = |i: usize| &table[i * bs..((i + 1) * bs).min(table.len())];
        let frames: Vec<Vec<u8>> = match &cdict {
            None => (first..last)
                .into_par_iter()
                .map(|i| compress_block(settings.level, block(i)))
                .collect::<io::Result<_>>()?,
            Some(cd) => (first..last)
                .into_par_iter()
                .map_init(
                    || dictionary_compressor(cd),
                    |z, i| match z {
                        Ok(z) => z.compress(block(i)),
                        Err(e) => Err(io::Error::new(e.kind(), e.to_string())),
                    },
                )
                .collect::<io::Result<_>>()?,
        };
        for f in &frames {
            out.write_all(f)?;
            at += f.len() as u64;
            index.extend_from_slice(&at.to_le_bytes());
        }
        let (from, to) = (first * bs, (last * bs).min(table.len()));
        raw_hash.update(&table[from..to]);
        done(from, to - from);
        progress((last - first) as u64);
    }
    // (computed step by step above)
    header.raws[kind_code(kind) as usize] = raw_hash.digest();
    let mut head = [0u8; ZSTD_HEADER_BYTES];
    head[..64].copy_from_slice(&encode_header(&header, &fields));
    let mut meta = index;
    meta.extend_from_slice(dict.as_deref().unwrap_or_default());
    let sum = meta_checksum(&head, &meta);
    head[64..].copy_from_slice(&sum.to_le_bytes());
    out.seek(SeekFrom::Start(base))?;
    out.write_all(&head)?;
    out.write_all(&meta)?;
    out.seek(SeekFrom::Start(base + at))?;
    Ok(at)
}

/// A compressor over a prepared dictionary, with the frame settings of
/// [`compress_block`] and no dictionary id (the file says which one).
fn dictionary_compressor<'a>(
    cd: &'a zstd::dict::EncoderDictionary<'static>,
) -> io::Result<zstd::bulk::Compressor<'a>> {
    let mut z = zstd::bulk::Compressor::with_prepared_dictionary(cd)?;
    z.set_parameter(zstd_safe::CParameter::ChecksumFlag(true))?;
    z.set_parameter(zstd_safe::CParameter::ContentSizeFlag(true))?;
    z.set_parameter(zstd_safe::CParameter::DictIdFlag(false))?;
    Ok(z)
}

/// The compressed form of `table` in memory (see [`encode_to`]).
pub fn encode(
    table: &[u8],
    rules: &Rules,
    kind: Kind,
    layer: u32,
    settings: Settings,
) -> io::Result<Vec<u8>> {
    let mut out = io::Cursor::new(Vec::new());
    encode_to(table, rules, kind, layer, settings, &mut out, &|_| {})?;
    Ok(out.into_inner())
}
