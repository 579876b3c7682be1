//! Writing compressed tables: blocks compressed in parallel, with or without
//! a trained dictionary.

use super::*;
use rayon::prelude::*;
use std::cell::RefCell;
use std::io::{self, Seek, SeekFrom, Write};
use zstd::zstd_safe;

/// How to compress.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Settings {
    /// The format: 3 (context models, [`super::v3`]; the default) or 2
    /// (zstd blocks; written as version 1 without a dictionary).
    pub version: u32,
    /// zstd level (format 2).
    pub level: i32,
    /// Entries per block.
    pub block_size: u32,
    /// Bytes of a zstd dictionary trained on the table's blocks and stored
    /// in the file (format 2); 0: none. A table too small to train one on
    /// is written without.
    pub dictionary: u32,
    /// Format 3: code the scores alone (`scores.n.zst`), not the layer's
    /// three tables together (`tables.n.zst`).
    pub scores_only: bool,
}

impl Settings {
    /// The settings of format 2 (zstd blocks) with these level and block
    /// size, without a dictionary.
    pub const fn zstd(level: i32, block_size: u32) -> Settings {
        Settings {
            version: 2,
            level,
            block_size,
            dictionary: 0,
            scores_only: false,
        }
    }

    /// The default settings of format 3, scores alone or not.
    pub const fn models(scores_only: bool) -> Settings {
        Settings {
            version: 3,
            level: 0,
            block_size: v3::DEFAULT_BLOCK_SIZE,
            dictionary: 0,
            scores_only,
        }
    }

    /// Checks the settings ([`crate::format::check_compression`] for
    /// format 2); on failure, the field and why.
    pub fn check(&self) -> Result<(), (&'static str, String)> {
        match self.version {
            3 => {
                if self.dictionary != 0 {
                    return Err((
                        "dictionary",
                        "format 3 codes with context models, not a zstd dictionary".into(),
                    ));
                }
                v3::check_block_size(self.block_size)
            }
            1 | 2 => {
                if self.scores_only {
                    return Err((
                        "scores only",
                        "the scores-only form is one of format 3".into(),
                    ));
                }
                crate::format::check_compression(self.level, self.block_size, self.dictionary)
            }
            v => Err((
                "format",
                format!("{v}: this program writes formats 2 and 3"),
            )),
        }
    }
}

impl Default for Settings {
    fn default() -> Self {
        Settings::models(false)
    }
}

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
    if settings.version == 3 {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            "format 3 codes a layer's tables together (codec::v3::encode_to)",
        ));
    }
    let dict = match settings.dictionary {
        0 => None,
        size => train_dictionary(table, settings.block_size as usize, size),
    };
    let mut header = Header {
        rules: *rules,
        kind,
        layer,
        entries: table.len() as u64,
        block_size: settings.block_size,
        level: settings.level,
        dictionary: dict.as_ref().map_or(0, |d| d.len() as u32),
        version: if dict.is_some() { 2 } else { 1 },
        tables: 1 << kind_code(kind),
        variant: 0,
        model_bytes: 0,
        raws: [0; 3],
    };
    let mut raw_hash = xxhash_rust::xxh3::Xxh3::new();
    header
        .check()
        .map_err(|e| io::Error::new(io::ErrorKind::InvalidInput, e))?;
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
    let mut head = [0u8; HEADER_BYTES];
    head[..64].copy_from_slice(&header.encode());
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
