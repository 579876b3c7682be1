//! Compressed tables: one `.zst` file per table, cut into blocks of entries
//! that are compressed with zstd independently, with a block index for
//! random access.
//!
//! # Format (versions 1 and 2)
//!
//! All integers little-endian. A file `scores.n.zst` (likewise `lower.n.zst`,
//! `upper.n.zst`) holds:
//!
//! | offset | bytes | field |
//! |---|---|---|
//! | 0 | 8 | magic `AWARIZST` |
//! | 8 | 4 | format version: `1` without a dictionary, `2` with one |
//! | 12 | 1 | table: 0 `scores`, 1 `lower`, 2 `upper` |
//! | 13 | 3 | zero |
//! | 16 | 16 | rule set, ASCII, zero-padded (`awari-vu2002`) |
//! | 32 | 4 | layer (seeds) |
//! | 36 | 4 | block size B in entries, 1 ..= 64 Mi |
//! | 40 | 8 | entries E, the layer's size |
//! | 48 | 4 | zstd level used (information only) |
//! | 52 | 4 | version 1: zero; version 2: dictionary bytes D, 1 ..= 1 Mi |
//! | 56 | 8 | `xxh3-64` of the uncompressed table (the manifest's checksum) |
//! | 64 | 8 | `xxh3-64` of bytes 0..64, the block index and the dictionary |
//! | 72 | 8 (K+1) | block index: K+1 file offsets, K = ceil(E / B) |
//! | ... | D | version 2: the zstd dictionary the blocks were compressed with |
//! | ... | | K zstd frames |
//!
//! Block `i` holds entries `i*B .. min((i+1)*B, E)` (one signed byte per
//! Goedel index, as in the raw table) as one zstd frame with its content
//! size and content checksum (and, in version 2, compressed against the
//! dictionary, without a dictionary id), stored at `offset[i] ..
//! offset[i+1]`; `offset[0]` is the end of the index (and dictionary) and
//! `offset[K]` the end of the file. A dictionary lets small blocks reuse
//! its entropy tables: they compress a little better and decompress about
//! twice as fast.
//!
//! Opening a file ([`CompressedTable::parse`]) checks the magic, version,
//! every header field, that index and dictionary lie inside the file, that
//! the offsets increase and bound frames no larger than zstd's bound for a
//! block, and the checksum of header, index and dictionary; every failure is
//! a [`CompressError`]. Decompressing a block checks its length and the
//! frame's checksum. Nothing is allocated from a size read from the file
//! before it was checked against the file's length or the layer.
//!
//! The folder operations ([`compress_folder`], [`decompress_folder`]) work
//! on our folders, record the compressed files in the manifest
//! ([`crate::table::CompressedEntry`]) and verify every file they write
//! before they rely on it.

use crate::index::layer_size;
use crate::rules::MAX_SEEDS;
use crate::table::{
    self, AtPath, CheckedWriteError, CompressedEntry, FileEntry, FolderLock, Kind, LayerEntry,
    Manifest, ManifestError, MapError, Mapped, PathError, RULE_SET,
};
use rayon::prelude::*;
use std::cell::RefCell;
use std::fs::{self, File};
use std::io::{self, Read, Seek, SeekFrom, Write};
use std::ops::RangeInclusive;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;
use zstd::zstd_safe;

/// The first bytes of every compressed table.
pub const MAGIC: [u8; 8] = *b"AWARIZST";
/// The newest format version this code reads and writes (it reads 1 too,
/// and writes 1 for files without a dictionary).
pub const FORMAT_VERSION: u32 = 2;
/// Largest dictionary a file may carry.
pub const MAX_DICTIONARY: u32 = 1 << 20;
/// Bytes before the block index.
pub const HEADER_BYTES: usize = 72;
/// The largest block size accepted, in entries.
pub const MAX_BLOCK_SIZE: u32 = 64 << 20;
/// Entries per block unless told otherwise (chosen from the measurements
/// in the README: random probes cost one block's decompression).
pub const DEFAULT_BLOCK_SIZE: u32 = 4096;
/// The zstd level unless told otherwise.
pub const DEFAULT_LEVEL: i32 = 19;
/// Appended to a raw table's file name.
pub const SUFFIX: &str = ".zst";
/// The per-thread cache of decompressed blocks holds at most this many...
const CACHE_BLOCKS: usize = 8;
/// ... and at most this many bytes (but always one block).
const CACHE_BYTES: usize = 1 << 20;
/// Bytes handled per step when (de)compressing a whole table.
const STEP: usize = 1 << 25;

/// The name of the compressed copy of the raw table `raw`.
pub fn file_name(raw: &str) -> String {
    format!("{raw}{SUFFIX}")
}

/// Why a compressed table cannot be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CompressError {
    /// The file ends before the part it must hold.
    #[error("truncated: the {part} ends at byte {needed}, the file has {found} bytes")]
    Truncated {
        /// `header`, `block index` or `blocks`.
        part: &'static str,
        /// Bytes the file needs.
        needed: u64,
        /// Bytes it has.
        found: u64,
    },
    /// Not a compressed table.
    #[error("not a compressed awari table (bad magic)")]
    BadMagic,
    /// Written by another version of the format.
    #[error("format version {0}, this program reads versions 1 to {FORMAT_VERSION}")]
    UnsupportedVersion(u32),
    /// A header field has an impossible value.
    #[error("header field {field}: {reason}")]
    HeaderField {
        /// The field.
        field: &'static str,
        /// What is wrong.
        reason: String,
    },
    /// A block offset points where no block can be.
    #[error("block index entry {block}: offset {offset} {reason}")]
    OffsetOutOfRange {
        /// The index entry (block `block` starts there).
        block: u64,
        /// The offset found.
        offset: u64,
        /// Why it is out of range.
        reason: String,
    },
    /// Header or block index were altered.
    #[error("header and block index have checksum {found:016x}, the header says {expected:016x}")]
    IndexChecksum {
        /// From the header.
        expected: u64,
        /// Of the bytes.
        found: u64,
    },
    /// A block does not decompress.
    #[error("block {block}: zstd: {message}")]
    Zstd {
        /// The block.
        block: u64,
        /// zstd's message.
        message: String,
    },
    /// A block decompresses to the wrong number of entries.
    #[error("block {block}: {found} entries after decompression, expected {expected}")]
    BlockLength {
        /// The block.
        block: u64,
        /// Entries it must hold.
        expected: u64,
        /// Entries it gave.
        found: u64,
    },
    /// The decompressed table does not have its checksum.
    #[error("the table decompresses to checksum {found}, expected {expected}")]
    ChecksumMismatch {
        /// The checksum it must have.
        expected: String,
        /// The checksum it has.
        found: String,
    },
    /// The table decompresses to other bytes than the raw table it was
    /// made from.
    #[error("entry {index} differs from the raw table")]
    DiffersFromRaw {
        /// The first entry that differs.
        index: u64,
    },
    /// The file is sound but holds another table than the one wanted.
    #[error("it holds {field} {found}, expected {expected}")]
    Mismatch {
        /// `table`, `layer` or `checksum`.
        field: &'static str,
        /// What was wanted.
        expected: String,
        /// What the header says.
        found: String,
    },
    /// An entry outside the table was asked for.
    #[error("entry {index} is outside the table of {entries} entries")]
    OutOfRange {
        /// The entry asked for.
        index: u64,
        /// Entries in the table.
        entries: u64,
    },
}

fn kind_code(kind: Kind) -> u8 {
    match kind {
        Kind::Score => 0,
        Kind::Lower => 1,
        Kind::Upper => 2,
    }
}

fn kind_of(code: u8) -> Option<Kind> {
    match code {
        0 => Some(Kind::Score),
        1 => Some(Kind::Lower),
        2 => Some(Kind::Upper),
        _ => None,
    }
}

/// The header of a compressed table.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Header {
    /// Which table of the layer.
    pub kind: Kind,
    /// The layer.
    pub layer: u32,
    /// Entries in the table (the layer's size).
    pub entries: u64,
    /// Entries per block.
    pub block_size: u32,
    /// The zstd level the blocks were compressed with.
    pub level: i32,
    /// `xxh3-64` of the uncompressed table.
    pub raw_xxh3: u64,
    /// Bytes of the zstd dictionary the blocks were compressed with; 0:
    /// none (and the file is written as version 1).
    pub dictionary: u32,
}

impl Header {
    /// Number of blocks.
    pub fn blocks(&self) -> u64 {
        self.entries.div_ceil(self.block_size as u64)
    }

    /// Bytes of header and block index: where the dictionary starts.
    pub fn index_end(&self) -> u64 {
        HEADER_BYTES as u64 + 8 * (self.blocks() + 1)
    }

    /// Bytes of header, block index and dictionary: where the first block
    /// starts.
    pub fn data_start(&self) -> u64 {
        self.index_end() + self.dictionary as u64
    }

    /// The format version this header is written with.
    pub fn version(&self) -> u32 {
        if self.dictionary == 0 {
            1
        } else {
            2
        }
    }

    /// Entries of block `i`.
    pub fn block_len(&self, i: u64) -> usize {
        let start = i * self.block_size as u64;
        (self.entries - start).min(self.block_size as u64) as usize
    }

    /// The checksum of the uncompressed table as the manifest writes it.
    pub fn raw_checksum(&self) -> String {
        format!("{:016x}", self.raw_xxh3)
    }

    /// Checks the fields that do not depend on the rest of the file.
    fn check(&self) -> Result<(), CompressError> {
        let field =
            |field: &'static str, reason: String| CompressError::HeaderField { field, reason };
        if self.layer > MAX_SEEDS || self.layer == 47 {
            return Err(field(
                "layer",
                format!("{} is not a layer of tables", self.layer),
            ));
        }
        let size = layer_size(self.layer);
        if self.entries != size {
            return Err(field(
                "entries",
                format!(
                    "{}, but layer {} has {size} positions",
                    self.entries, self.layer
                ),
            ));
        }
        if self.block_size == 0 || self.block_size > MAX_BLOCK_SIZE {
            return Err(field(
                "block size",
                format!("{} is not in 1..={MAX_BLOCK_SIZE}", self.block_size),
            ));
        }
        let (lo, hi) = (zstd_safe::min_c_level(), zstd_safe::max_c_level());
        if !(lo..=hi).contains(&self.level) {
            return Err(field(
                "level",
                format!("{} is not a zstd level ({lo}..={hi})", self.level),
            ));
        }
        if self.dictionary > MAX_DICTIONARY {
            return Err(field(
                "dictionary",
                format!("{} bytes, at most {MAX_DICTIONARY}", self.dictionary),
            ));
        }
        Ok(())
    }

    /// The first 64 bytes (without the checksum of header and index).
    fn encode(&self) -> [u8; 64] {
        let mut h = [0u8; 64];
        h[0..8].copy_from_slice(&MAGIC);
        h[8..12].copy_from_slice(&self.version().to_le_bytes());
        h[12] = kind_code(self.kind);
        h[16..16 + RULE_SET.len()].copy_from_slice(RULE_SET.as_bytes());
        h[32..36].copy_from_slice(&self.layer.to_le_bytes());
        h[36..40].copy_from_slice(&self.block_size.to_le_bytes());
        h[40..48].copy_from_slice(&self.entries.to_le_bytes());
        h[48..52].copy_from_slice(&self.level.to_le_bytes());
        h[52..56].copy_from_slice(&self.dictionary.to_le_bytes());
        h[56..64].copy_from_slice(&self.raw_xxh3.to_le_bytes());
        h
    }
}

fn u32_at(b: &[u8], at: usize) -> u32 {
    let mut x = [0u8; 4];
    x.copy_from_slice(&b[at..at + 4]);
    u32::from_le_bytes(x)
}

fn u64_at(b: &[u8], at: usize) -> u64 {
    let mut x = [0u8; 8];
    x.copy_from_slice(&b[at..at + 8]);
    u64::from_le_bytes(x)
}

/// The checksum of header, index and dictionary: `xxh3-64` of bytes 0..64
/// followed by the index and the dictionary (the stored checksum itself,
/// bytes 64..72, left out).
fn meta_checksum(head: &[u8], index_and_dictionary: &[u8]) -> u64 {
    let mut h = xxhash_rust::xxh3::Xxh3::new();
    h.update(&head[..64]);
    h.update(index_and_dictionary);
    h.digest()
}

/// What a compressed table must hold to stand for a given raw table.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Expected {
    /// The table.
    pub kind: Kind,
    /// The layer.
    pub layer: u32,
    /// The checksum of the raw table, as the manifest writes it.
    pub raw_xxh3: String,
}

/// Source of distinct table ids for the per-thread block cache.
static NEXT_ID: AtomicU64 = AtomicU64::new(0);

/// A compressed table over its bytes (a mapping, a buffer): random access
/// by entry, one block decompressed per miss of the per-thread cache.
pub struct CompressedTable<B> {
    bytes: B,
    header: Header,
    id: u64,
    /// The dictionary, prepared for decompression.
    ddict: Option<zstd_safe::DDict<'static>>,
}

impl<B> std::fmt::Debug for CompressedTable<B> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CompressedTable")
            .field("header", &self.header)
            .finish_non_exhaustive()
    }
}

impl<B: AsRef<[u8]> + Sync> CompressedTable<B> {
    /// Reads and checks header and block index (see the module's
    /// documentation); the blocks are checked when decompressed.
    pub fn parse(bytes: B) -> Result<Self, CompressError> {
        let header = parse_header(bytes.as_ref())?;
        let ddict = match header.dictionary {
            0 => None,
            _ => {
                let d = &bytes.as_ref()[header.index_end() as usize..header.data_start() as usize];
                Some(
                    zstd_safe::DDict::try_create(d).ok_or_else(|| CompressError::HeaderField {
                        field: "dictionary",
                        reason: "zstd cannot load it".into(),
                    })?,
                )
            }
        };
        Ok(CompressedTable {
            bytes,
            header,
            id: NEXT_ID.fetch_add(1, Ordering::Relaxed),
            ddict,
        })
    }

    /// The header.
    pub fn header(&self) -> &Header {
        &self.header
    }

    /// Entries in the table.
    pub fn len(&self) -> u64 {
        self.header.entries
    }

    /// Whether the table holds no entry (never for a parsed table).
    pub fn is_empty(&self) -> bool {
        self.header.entries == 0
    }

    /// Number of blocks.
    pub fn blocks(&self) -> u64 {
        self.header.blocks()
    }

    /// The compressed file's bytes.
    pub fn bytes(&self) -> &[u8] {
        self.bytes.as_ref()
    }

    /// Checks that the table is the one described by `want`.
    pub fn check_table(&self, want: &Expected) -> Result<(), CompressError> {
        let h = &self.header;
        if h.kind != want.kind {
            return Err(CompressError::Mismatch {
                field: "table",
                expected: want.kind.stem().into(),
                found: h.kind.stem().into(),
            });
        }
        if h.layer != want.layer {
            return Err(CompressError::Mismatch {
                field: "layer",
                expected: want.layer.to_string(),
                found: h.layer.to_string(),
            });
        }
        if h.raw_checksum() != want.raw_xxh3 {
            return Err(CompressError::Mismatch {
                field: "checksum of the uncompressed table",
                expected: want.raw_xxh3.clone(),
                found: h.raw_checksum(),
            });
        }
        Ok(())
    }

    /// The compressed bytes of block `i`.
    fn frame(&self, i: u64) -> Result<&[u8], CompressError> {
        let b = self.bytes.as_ref();
        let at = HEADER_BYTES + 8 * i as usize;
        let (Some(s), Some(e)) = (b.get(at..at + 8), b.get(at + 8..at + 16)) else {
            return Err(CompressError::OutOfRange {
                index: i * self.header.block_size as u64,
                entries: self.header.entries,
            });
        };
        let (s, e) = (u64_at(s, 0), u64_at(e, 0));
        // Checked when parsed; checked again so that bytes changed since
        // (a mapping whose file was modified) cannot index out of bounds.
        usize::try_from(s)
            .ok()
            .zip(usize::try_from(e).ok())
            .and_then(|(s, e)| b.get(s..e))
            .ok_or(CompressError::OffsetOutOfRange {
                block: i,
                offset: s,
                reason: "no longer lies inside the file".into(),
            })
    }

    /// Decompresses block `i` into `out`, which must be the block's length.
    pub fn decompress_block(&self, i: u64, out: &mut [u8]) -> Result<(), CompressError> {
        if i >= self.blocks() {
            return Err(CompressError::OutOfRange {
                index: i.saturating_mul(self.header.block_size as u64),
                entries: self.header.entries,
            });
        }
        let frame = self.frame(i)?;
        with_cache(|c| decode(&mut c.dctx, self.ddict.as_ref(), frame, i, out))
    }

    /// The entry at Goedel index `g`, through the per-thread block cache.
    pub fn get(&self, g: u64) -> Result<i8, CompressError> {
        if g >= self.header.entries {
            return Err(CompressError::OutOfRange {
                index: g,
                entries: self.header.entries,
            });
        }
        let bs = self.header.block_size as u64;
        let (block, at) = (g / bs, (g % bs) as usize);
        with_cache(|c| {
            c.clock += 1;
            let now = c.clock;
            if let Some(s) = c
                .slots
                .iter_mut()
                .find(|s| s.table == self.id && s.block == block)
            {
                s.used = now;
                return Ok(s.data[at] as i8);
            }
            let len = self.header.block_len(block);
            let cap = (CACHE_BYTES / self.header.block_size as usize).clamp(1, CACHE_BLOCKS);
            let k = if c.slots.len() < cap {
                c.slots.push(Slot {
                    table: u64::MAX,
                    block: 0,
                    used: 0,
                    data: Vec::new(),
                });
                c.slots.len() - 1
            } else {
                (0..c.slots.len())
                    .min_by_key(|&k| c.slots[k].used)
                    .expect("a cache holds a slot")
            };
            let frame = self.frame(block)?;
            let Cache { dctx, slots, .. } = c;
            let s = &mut slots[k];
            s.table = u64::MAX;
            s.data.resize(len, 0);
            decode(dctx, self.ddict.as_ref(), frame, block, &mut s.data)?;
            s.table = self.id;
            s.block = block;
            s.used = now;
            Ok(s.data[at] as i8)
        })
    }

    /// Decompresses entries `start .. start + out.len()` into `out`, blocks
    /// in parallel on the rayon pool.
    pub fn decompress_range(&self, start: u64, out: &mut [u8]) -> Result<(), CompressError> {
        if out.is_empty() {
            return Ok(());
        }
        let end = start.saturating_add(out.len() as u64);
        if end > self.header.entries {
            return Err(CompressError::OutOfRange {
                index: end - 1,
                entries: self.header.entries,
            });
        }
        let bs = self.header.block_size as u64;
        // Split `out` into the parts of each block it covers.
        let mut parts: Vec<(u64, usize, &mut [u8])> = Vec::new();
        let mut rest = out;
        let mut g = start;
        while !rest.is_empty() {
            let block = g / bs;
            let at = (g - block * bs) as usize;
            let take = (self.header.block_len(block) - at).min(rest.len());
            let (part, tail) = rest.split_at_mut(take);
            parts.push((block, at, part));
            rest = tail;
            g += take as u64;
        }
        parts.into_par_iter().try_for_each(|(block, at, part)| {
            let frame = self.frame(block)?;
            let len = self.header.block_len(block);
            with_cache(|c| {
                if at == 0 && part.len() == len {
                    decode(&mut c.dctx, self.ddict.as_ref(), frame, block, part)
                } else {
                    let Cache { dctx, scratch, .. } = c;
                    scratch.resize(len, 0);
                    decode(dctx, self.ddict.as_ref(), frame, block, scratch)?;
                    part.copy_from_slice(&scratch[at..at + part.len()]);
                    Ok(())
                }
            })
        })
    }

    /// The whole table, decompressed in parallel and checked against the
    /// header's checksum.
    pub fn decompress_all(&self) -> Result<Vec<u8>, CompressError> {
        let mut out = vec![0u8; self.header.entries as usize];
        self.decompress_range(0, &mut out)?;
        let found = table::checksum(&out);
        if found != self.header.raw_checksum() {
            return Err(CompressError::ChecksumMismatch {
                expected: self.header.raw_checksum(),
                found,
            });
        }
        Ok(out)
    }

    /// Decompresses every block (a step at a time, in parallel) and checks
    /// the header's checksum of the uncompressed table; with `raw`, also
    /// compares every byte with it. `progress` gets the blocks done.
    pub fn verify(
        &self,
        raw: Option<&[u8]>,
        progress: &(dyn Fn(u64) + Sync),
    ) -> Result<(), CompressError> {
        let mut h = xxhash_rust::xxh3::Xxh3::new();
        let bs = self.header.block_size as u64;
        let step = (STEP as u64).div_ceil(bs).max(1) * bs;
        let mut buf = vec![0u8; step.min(self.header.entries) as usize];
        let mut start = 0u64;
        while start < self.header.entries {
            let k = (self.header.entries - start).min(step) as usize;
            self.decompress_range(start, &mut buf[..k])?;
            h.update(&buf[..k]);
            if let Some(raw) = raw {
                let theirs = raw.get(start as usize..).unwrap_or(&[]);
                if theirs.get(..k) != Some(&buf[..k]) {
                    let i = (0..k).find(|&i| theirs.get(i) != Some(&buf[i]));
                    return Err(CompressError::DiffersFromRaw {
                        index: start + i.unwrap_or(k) as u64,
                    });
                }
            }
            progress((k as u64).div_ceil(bs));
            start += k as u64;
        }
        let found = format!("{:016x}", h.digest());
        if found != self.header.raw_checksum() {
            return Err(CompressError::ChecksumMismatch {
                expected: self.header.raw_checksum(),
                found,
            });
        }
        Ok(())
    }

    /// A sequential reader of the uncompressed table.
    pub fn into_reader(self) -> Reader<B> {
        Reader {
            table: self,
            buf: Vec::new(),
            at: 0,
            next: 0,
        }
    }
}

/// Reads and checks header and block index.
fn parse_header(b: &[u8]) -> Result<Header, CompressError> {
    let len = b.len() as u64;
    if b.len() < HEADER_BYTES {
        return Err(CompressError::Truncated {
            part: "header",
            needed: HEADER_BYTES as u64,
            found: len,
        });
    }
    if b[0..8] != MAGIC {
        return Err(CompressError::BadMagic);
    }
    let version = u32_at(b, 8);
    if !(1..=FORMAT_VERSION).contains(&version) {
        return Err(CompressError::UnsupportedVersion(version));
    }
    let field = |field: &'static str, reason: String| CompressError::HeaderField { field, reason };
    let kind =
        kind_of(b[12]).ok_or_else(|| field("table", format!("{} is not 0, 1 or 2", b[12])))?;
    if b[13..16] != [0; 3] || (version == 1 && b[52..56] != [0; 4]) {
        return Err(field("reserved", "reserved bytes are not zero".into()));
    }
    let rule = &b[16..32];
    let used = rule.iter().position(|&c| c == 0).unwrap_or(rule.len());
    if &rule[..used] != RULE_SET.as_bytes() || rule[used..].iter().any(|&c| c != 0) {
        return Err(field(
            "rule set",
            format!(
                "'{}', this program reads {RULE_SET}",
                String::from_utf8_lossy(&rule[..used]).escape_debug()
            ),
        ));
    }
    let header = Header {
        kind,
        layer: u32_at(b, 32),
        block_size: u32_at(b, 36),
        entries: u64_at(b, 40),
        level: u32_at(b, 48) as i32,
        raw_xxh3: u64_at(b, 56),
        dictionary: if version == 1 { 0 } else { u32_at(b, 52) },
    };
    header.check()?;
    if version == 2 && header.dictionary == 0 {
        return Err(field(
            "dictionary",
            "version 2 files carry a dictionary, this one has 0 bytes".into(),
        ));
    }
    let blocks = header.blocks();
    let data_start = header.data_start();
    if len < data_start {
        return Err(CompressError::Truncated {
            part: "block index",
            needed: data_start,
            found: len,
        });
    }
    let index = &b[HEADER_BYTES..header.index_end() as usize];
    let offset = |i: u64| u64_at(index, 8 * i as usize);
    let last = offset(blocks);
    if last > len {
        return Err(CompressError::Truncated {
            part: "blocks",
            needed: last,
            found: len,
        });
    }
    if last < len {
        return Err(CompressError::OffsetOutOfRange {
            block: blocks,
            offset: last,
            reason: format!("ends the blocks, but the file has {len} bytes"),
        });
    }
    if offset(0) != data_start {
        return Err(CompressError::OffsetOutOfRange {
            block: 0,
            offset: offset(0),
            reason: format!("must be {data_start}, the end of the block index"),
        });
    }
    let most = zstd_safe::compress_bound(header.block_size as usize) as u64 + 64;
    for i in 0..blocks {
        let (s, e) = (offset(i), offset(i + 1));
        if e <= s || e - s > most {
            return Err(CompressError::OffsetOutOfRange {
                block: i + 1,
                offset: e,
                reason: format!(
                    "after {s} gives block {i} {} bytes, not 1..={most}",
                    e as i128 - s as i128
                ),
            });
        }
    }
    let stored = u64_at(b, 64);
    let found = meta_checksum(b, &b[HEADER_BYTES..data_start as usize]);
    if stored != found {
        return Err(CompressError::IndexChecksum {
            expected: stored,
            found,
        });
    }
    Ok(header)
}

/// One decompressed block in the per-thread cache.
struct Slot {
    table: u64,
    block: u64,
    used: u64,
    data: Vec<u8>,
}

/// Per thread: a zstd context, a few recently used blocks, scratch space.
struct Cache {
    dctx: Option<zstd_safe::DCtx<'static>>,
    slots: Vec<Slot>,
    clock: u64,
    scratch: Vec<u8>,
}

thread_local! {
    static CACHE: RefCell<Cache> = const {
        RefCell::new(Cache {
            dctx: None,
            slots: Vec::new(),
            clock: 0,
            scratch: Vec::new(),
        })
    };
}

/// Runs `f` on this thread's cache (on a fresh one while the thread is
/// being torn down).
fn with_cache<T>(f: impl FnOnce(&mut Cache) -> T) -> T {
    let mut f = Some(f);
    let r = CACHE.try_with(|c| match c.try_borrow_mut() {
        Ok(mut c) => Some((f.take().expect("called once"))(&mut c)),
        Err(_) => None,
    });
    match r {
        Ok(Some(t)) => t,
        _ => {
            let mut c = Cache {
                dctx: None,
                slots: Vec::new(),
                clock: 0,
                scratch: Vec::new(),
            };
            (f.take().expect("called once"))(&mut c)
        }
    }
}

/// Decompresses one frame (with the table's dictionary, if any) into `out`,
/// which it must fill exactly.
fn decode(
    dctx: &mut Option<zstd_safe::DCtx<'static>>,
    ddict: Option<&zstd_safe::DDict<'static>>,
    frame: &[u8],
    block: u64,
    out: &mut [u8],
) -> Result<(), CompressError> {
    let zerr = |message: String| CompressError::Zstd { block, message };
    if dctx.is_none() {
        *dctx = Some(
            zstd_safe::DCtx::try_create()
                .ok_or_else(|| zerr("cannot create a decompression context".into()))?,
        );
    }
    let d = dctx.as_mut().expect("just made");
    let got = match ddict {
        Some(dd) => d.decompress_using_ddict(out, frame, dd),
        None => d.decompress(out, frame),
    }
    .map_err(|code| zerr(zstd_safe::get_error_name(code).to_string()))?;
    if got != out.len() {
        return Err(CompressError::BlockLength {
            block,
            expected: out.len() as u64,
            found: got as u64,
        });
    }
    Ok(())
}

/// Reads a compressed table's entries in order ([`io::Read`]), a step of
/// blocks at a time, decompressed in parallel. Corruption is an
/// [`io::ErrorKind::InvalidData`] error wrapping the [`CompressError`].
pub struct Reader<B> {
    table: CompressedTable<B>,
    buf: Vec<u8>,
    at: usize,
    next: u64,
}

impl<B: AsRef<[u8]> + Sync> Reader<B> {
    /// The table read.
    pub fn table(&self) -> &CompressedTable<B> {
        &self.table
    }
}

impl<B: AsRef<[u8]> + Sync> Read for Reader<B> {
    fn read(&mut self, out: &mut [u8]) -> io::Result<usize> {
        if self.at == self.buf.len() {
            let entries = self.table.header.entries;
            if self.next >= entries {
                return Ok(0);
            }
            let k = (entries - self.next).min(STEP as u64) as usize;
            self.buf.resize(k, 0);
            self.table
                .decompress_range(self.next, &mut self.buf)
                .map_err(|e| io::Error::new(io::ErrorKind::InvalidData, e))?;
            self.next += k as u64;
            self.at = 0;
        }
        let k = out.len().min(self.buf.len() - self.at);
        out[..k].copy_from_slice(&self.buf[self.at..self.at + k]);
        self.at += k;
        Ok(k)
    }
}

/// How to compress.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Settings {
    /// zstd level.
    pub level: i32,
    /// Entries per block.
    pub block_size: u32,
    /// Bytes of a zstd dictionary trained on the table's blocks and stored
    /// in the file (format version 2); 0: none. A table too small to train
    /// one on is written without.
    pub dictionary: u32,
}

impl Default for Settings {
    fn default() -> Self {
        Settings {
            level: DEFAULT_LEVEL,
            block_size: DEFAULT_BLOCK_SIZE,
            dictionary: 0,
        }
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

/// Writes the compressed form of `table` (layer `layer`, table `kind`) to
/// `out`, blocks compressed in parallel on the rayon pool; `progress` gets
/// the blocks done. Returns the bytes written. Invalid settings or a table
/// of the wrong size are [`io::ErrorKind::InvalidInput`].
pub fn encode_to<W: Write + Seek>(
    table: &[u8],
    kind: Kind,
    layer: u32,
    settings: Settings,
    out: &mut W,
    progress: &(dyn Fn(u64) + Sync),
) -> io::Result<u64> {
    let dict = match settings.dictionary {
        0 => None,
        size if size > MAX_DICTIONARY => {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!("dictionary of {size} bytes: at most {MAX_DICTIONARY}"),
            ))
        }
        size if settings.block_size > 0 => {
            train_dictionary(table, settings.block_size as usize, size)
        }
        _ => None,
    };
    let header = Header {
        kind,
        layer,
        entries: table.len() as u64,
        block_size: settings.block_size,
        level: settings.level,
        raw_xxh3: xxhash_rust::xxh3::xxh3_64(table),
        dictionary: dict.as_ref().map_or(0, |d| d.len() as u32),
    };
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
        progress((last - first) as u64);
    }
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
pub fn encode(table: &[u8], kind: Kind, layer: u32, settings: Settings) -> io::Result<Vec<u8>> {
    let mut out = io::Cursor::new(Vec::new());
    encode_to(table, kind, layer, settings, &mut out, &|_| {})?;
    Ok(out.into_inner())
}

/// Why compressing or decompressing a folder stopped. Files written before
/// stay in place and recorded.
#[derive(Debug, thiserror::Error)]
pub enum PackError {
    /// File or folder trouble.
    #[error(transparent)]
    Io(#[from] PathError),
    /// The manifest cannot be used.
    #[error(transparent)]
    Manifest(#[from] ManifestError),
    /// A table cannot be mapped.
    #[error(transparent)]
    Map(#[from] MapError),
    /// The folder is not one of ours.
    #[error("{}: no manifest.json: compress works on folders made by awari build", .0.display())]
    NotOurs(PathBuf),
    /// A build or another compress holds the folder.
    #[error("{}: a build or compress is running in this folder (it holds build.lock)", .0.display())]
    Locked(PathBuf),
    /// Invalid settings.
    #[error("{0}")]
    Settings(String),
    /// A raw table does not match its checksum: it is not compressed, and
    /// nothing is removed.
    #[error("{}: checksum {found}, the manifest says {expected}; not compressing a damaged table (rebuild it with `awari build`)", path.display())]
    RawChecksum {
        /// The table.
        path: PathBuf,
        /// From the manifest.
        expected: String,
        /// Of the file.
        found: String,
    },
    /// A compressed file is damaged or is not the table it stands for.
    #[error("{}: {source}", path.display())]
    Compressed {
        /// The file.
        path: PathBuf,
        /// What is wrong.
        #[source]
        source: CompressError,
    },
    /// A compressed file does not match the checksum of the manifest.
    #[error("{}: checksum {found}, the manifest says {expected}", path.display())]
    FileChecksum {
        /// The file.
        path: PathBuf,
        /// From the manifest.
        expected: String,
        /// Of the file.
        found: String,
    },
    /// A table exists neither raw nor compressed.
    #[error("{}: missing, and the manifest lists no compressed copy of it", .0.display())]
    Missing(PathBuf),
}

impl PackError {
    /// Whether a check failed (a damaged table or file), as opposed to
    /// usage or I/O trouble.
    pub fn is_check_failure(&self) -> bool {
        matches!(
            self,
            PackError::RawChecksum { .. }
                | PackError::FileChecksum { .. }
                | PackError::Compressed { .. }
        )
    }
}

impl From<CheckedWriteError> for PackError {
    fn from(e: CheckedWriteError) -> Self {
        match e {
            CheckedWriteError::Io(e) => PackError::Io(e),
            CheckedWriteError::Checksum {
                path,
                expected,
                found,
            } => PackError::Compressed {
                path,
                source: CompressError::ChecksumMismatch { expected, found },
            },
        }
    }
}

/// What [`compress_folder`] and [`decompress_folder`] report as they work.
pub trait PackObserver: Sync {
    /// Work on a file starts: `blocks` units of progress follow.
    fn start(&self, _name: &str, _blocks: u64) {}
    /// Blocks done (compressed, verified or decompressed).
    fn advance(&self, _blocks: u64) {}
    /// A file is finished (or was found finished).
    fn done(&self, _file: &PackedFile) {}
    /// A raw or compressed file was removed.
    fn removed(&self, _name: &str) {}
    /// Something the user should know; the work goes on.
    fn warning(&self, _message: &str) {}
}

/// Reports nothing.
pub struct Quiet;
impl PackObserver for Quiet {}

/// What happened to one table.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Action {
    /// Compressed (and verified) now.
    Compressed,
    /// Its compressed file was there with these settings, and verified.
    AlreadyCompressed,
    /// Decompressed (and verified) now.
    Decompressed,
    /// Its raw file was there and matched its checksum.
    AlreadyRaw,
}

/// One table handled by [`compress_folder`] or [`decompress_folder`].
#[derive(Clone, Debug, serde::Serialize)]
pub struct PackedFile {
    /// Seeds of the layer.
    pub layer: u32,
    /// The raw table's name.
    pub raw: String,
    /// The compressed file's name.
    pub name: String,
    /// What was done.
    pub action: Action,
    /// Bytes of the raw table.
    pub raw_bytes: u64,
    /// Bytes of the compressed file.
    pub bytes: u64,
    /// Seconds spent.
    pub seconds: f64,
}

impl PackedFile {
    /// Raw bytes per compressed byte.
    pub fn ratio(&self) -> f64 {
        self.raw_bytes as f64 / self.bytes.max(1) as f64
    }
}

/// The result of [`compress_folder`] or [`decompress_folder`].
#[derive(Clone, Debug, Default, serde::Serialize)]
pub struct PackReport {
    /// The tables handled, in order.
    pub files: Vec<PackedFile>,
    /// Files removed.
    pub removed: Vec<String>,
}

/// What [`compress_folder`] does.
#[derive(Clone, Debug)]
pub struct CompressOptions {
    /// Level and block size.
    pub settings: Settings,
    /// The layers to compress (those of them that are built).
    pub layers: RangeInclusive<u32>,
    /// Remove each raw table once every table of its layer is compressed
    /// and verified.
    pub remove_raw: bool,
}

/// What [`decompress_folder`] does.
#[derive(Clone, Debug)]
pub struct DecompressOptions {
    /// The layers to decompress.
    pub layers: RangeInclusive<u32>,
    /// Remove each compressed file (and forget it in the manifest) once its
    /// raw table is in place and verified.
    pub remove_compressed: bool,
}

fn lock(dir: &Path) -> Result<FolderLock, PackError> {
    FolderLock::acquire(dir)?.ok_or_else(|| PackError::Locked(dir.to_path_buf()))
}

/// Locks one of our folders (refusing a foreign one before writing the lock
/// file), and reads its manifest under the lock with the entries of `layers`.
fn open_locked(
    dir: &Path,
    layers: &RangeInclusive<u32>,
) -> Result<(FolderLock, Manifest, Vec<LayerEntry>), PackError> {
    load_ours(dir)?;
    let lock = lock(dir)?;
    let manifest = load_ours(dir)?;
    let chosen = manifest
        .layers
        .iter()
        .filter(|l| layers.contains(&l.seeds))
        .cloned()
        .collect();
    Ok((lock, manifest, chosen))
}

fn load_ours(dir: &Path) -> Result<Manifest, PackError> {
    if !dir.is_dir() {
        return Err(PackError::Io(PathError {
            path: dir.to_path_buf(),
            source: io::Error::new(io::ErrorKind::NotFound, "not a folder"),
        }));
    }
    Manifest::load(dir)?.ok_or_else(|| PackError::NotOurs(dir.to_path_buf()))
}

/// Maps a compressed file listed in the manifest: size and checksum of the
/// file, then header and index, then that it stands for `raw`.
fn open_listed(
    dir: &Path,
    c: &CompressedEntry,
    kind: Kind,
    raw: &FileEntry,
) -> Result<CompressedTable<Mapped>, PackError> {
    let path = dir.join(&c.name);
    let map = Mapped::open(&path, c.bytes)?;
    let found = table::checksum(&map);
    if found != c.xxh3 {
        return Err(PackError::FileChecksum {
            path,
            expected: c.xxh3.clone(),
            found,
        });
    }
    let t = CompressedTable::parse(map).map_err(|source| PackError::Compressed {
        path: path.clone(),
        source,
    })?;
    t.check_table(&Expected {
        kind,
        layer: c.seeds,
        raw_xxh3: raw.xxh3.clone(),
    })
    .map_err(|source| PackError::Compressed { path, source })?;
    Ok(t)
}

/// The bytes of a raw table, mapped and checked against the manifest.
fn open_raw(dir: &Path, f: &FileEntry) -> Result<Mapped, PackError> {
    let path = dir.join(&f.name);
    let map = Mapped::open(&path, f.bytes)?;
    let found = table::checksum(&map);
    if found != f.xxh3 {
        return Err(PackError::RawChecksum {
            path,
            expected: f.xxh3.clone(),
            found,
        });
    }
    Ok(map)
}

/// Compresses the tables of our folder `dir` into `.zst` files beside
/// them, verifies each file written (every block decompressed and compared
/// with the raw table) before recording it in the manifest, and with
/// `remove_raw` removes a layer's raw tables once all of its tables are
/// compressed and verified. A table already compressed with the same
/// settings is verified and kept. Blocks are (de)compressed in parallel on
/// the rayon pool.
pub fn compress_folder(
    dir: &Path,
    opts: &CompressOptions,
    obs: &dyn PackObserver,
) -> Result<PackReport, PackError> {
    let s = opts.settings;
    if s.block_size == 0 || s.block_size > MAX_BLOCK_SIZE {
        return Err(PackError::Settings(format!(
            "block size {} is not in 1..={MAX_BLOCK_SIZE}",
            s.block_size
        )));
    }
    let (lo, hi) = (zstd_safe::min_c_level(), zstd_safe::max_c_level());
    if !(lo..=hi).contains(&s.level) {
        return Err(PackError::Settings(format!(
            "level {} is not a zstd level ({lo}..={hi})",
            s.level
        )));
    }
    if s.dictionary > MAX_DICTIONARY {
        return Err(PackError::Settings(format!(
            "a dictionary of {} bytes: at most {MAX_DICTIONARY}",
            s.dictionary
        )));
    }
    let (_lock, mut manifest, layers) = open_locked(dir, &opts.layers)?;
    let mut report = PackReport::default();
    for l in &layers {
        for (kind, f) in l.files() {
            let t0 = Instant::now();
            let name = file_name(&f.name);
            let path = dir.join(&name);
            let raw_path = dir.join(&f.name);
            let raw_present = raw_path.exists();
            let blocks = l.positions.div_ceil(s.block_size as u64);
            // A compressed file already there with these settings: verify it.
            if let Some(c) = manifest.compressed(&f.name).cloned() {
                if c.block_size == s.block_size
                    && c.level == s.level
                    && c.dictionary == s.dictionary
                {
                    obs.start(&c.name, l.positions.div_ceil(c.block_size as u64));
                    let checked = open_listed(dir, &c, kind, f).and_then(|t| {
                        t.verify(None, &|k| obs.advance(k)).map_err(|source| {
                            PackError::Compressed {
                                path: dir.join(&c.name),
                                source,
                            }
                        })
                    });
                    match checked {
                        Ok(()) => {
                            let done = PackedFile {
                                layer: l.seeds,
                                raw: f.name.clone(),
                                name: c.name.clone(),
                                action: Action::AlreadyCompressed,
                                raw_bytes: f.bytes,
                                bytes: c.bytes,
                                seconds: t0.elapsed().as_secs_f64(),
                            };
                            obs.done(&done);
                            report.files.push(done);
                            continue;
                        }
                        Err(e) if raw_present => {
                            obs.warning(&format!("{e}; compressing {} again", f.name))
                        }
                        Err(e) => return Err(e),
                    }
                }
            }
            // The bytes to compress: the raw table, else the compressed
            // copy made with other settings.
            let source: Box<dyn std::ops::Deref<Target = [u8]>> = if raw_present {
                Box::new(open_raw(dir, f)?)
            } else if let Some(c) = manifest.compressed(&f.name) {
                let old = open_listed(dir, c, kind, f)?;
                let bytes = old
                    .decompress_all()
                    .map_err(|source| PackError::Compressed {
                        path: dir.join(&c.name),
                        source,
                    })?;
                Box::new(bytes)
            } else {
                return Err(PackError::Missing(raw_path));
            };
            obs.start(&name, 2 * blocks);
            let bytes = write_compressed(&path, &source, kind, l.seeds, s, obs)?;
            let entry = CompressedEntry {
                seeds: l.seeds,
                raw: f.name.clone(),
                name: name.clone(),
                bytes,
                xxh3: table::checksum_file(&path)?,
                block_size: s.block_size,
                level: s.level,
                dictionary: s.dictionary,
            };
            manifest.put_compressed(entry);
            manifest.store(dir)?;
            let done = PackedFile {
                layer: l.seeds,
                raw: f.name.clone(),
                name,
                action: Action::Compressed,
                raw_bytes: f.bytes,
                bytes,
                seconds: t0.elapsed().as_secs_f64(),
            };
            obs.done(&done);
            report.files.push(done);
        }
        if opts.remove_raw {
            for (_, f) in l.files() {
                let p = dir.join(&f.name);
                if p.exists() {
                    fs::remove_file(&p).at(&p)?;
                    obs.removed(&f.name);
                    report.removed.push(f.name.clone());
                }
            }
            table::sync_dir(dir)?;
        }
    }
    Ok(report)
}

/// Writes the compressed file through a temporary file that is verified
/// (every block decompressed and compared with `raw`) before it is renamed
/// into place. Returns its size.
fn write_compressed(
    path: &Path,
    raw: &[u8],
    kind: Kind,
    layer: u32,
    s: Settings,
    obs: &dyn PackObserver,
) -> Result<u64, PackError> {
    let tmp = table::temp_path(path);
    let result = (|| -> Result<u64, PackError> {
        let file = File::create(&tmp).at(&tmp)?;
        let mut w = io::BufWriter::with_capacity(1 << 20, file);
        let bytes = encode_to(raw, kind, layer, s, &mut w, &|k| obs.advance(k)).at(&tmp)?;
        let file = w.into_inner().map_err(|e| e.into_error()).at(&tmp)?;
        file.sync_all().at(&tmp)?;
        drop(file);
        CompressedTable::parse(Mapped::open(&tmp, bytes)?)
            .and_then(|t| t.verify(Some(raw), &|k| obs.advance(k)))
            .map_err(|source| PackError::Compressed {
                path: tmp.clone(),
                source,
            })?;
        fs::rename(&tmp, path).at(path)?;
        table::sync_dir(path.parent().unwrap_or(Path::new(".")))?;
        Ok(bytes)
    })();
    if result.is_err() {
        let _ = fs::remove_file(&tmp);
    }
    result
}

/// Writes back the raw tables of our folder `dir` from their compressed
/// copies, where a raw table is missing or does not match its checksum;
/// each is written to a temporary file and renamed into place only when it
/// has the manifest's checksum. With `remove_compressed`, the compressed
/// files are removed (and forgotten) once their raw tables are in place.
pub fn decompress_folder(
    dir: &Path,
    opts: &DecompressOptions,
    obs: &dyn PackObserver,
) -> Result<PackReport, PackError> {
    let (_lock, mut manifest, layers) = open_locked(dir, &opts.layers)?;
    let mut report = PackReport::default();
    for l in &layers {
        decompress_layer(
            dir,
            &mut manifest,
            l,
            opts.remove_compressed,
            obs,
            &mut report,
        )?;
    }
    Ok(report)
}

/// [`decompress_folder`]'s work on one layer, for a caller that holds the
/// folder's lock and its manifest (the builder, which reads lower layers
/// raw).
pub(crate) fn decompress_layer(
    dir: &Path,
    manifest: &mut Manifest,
    l: &LayerEntry,
    remove_compressed: bool,
    obs: &dyn PackObserver,
    report: &mut PackReport,
) -> Result<(), PackError> {
    for (kind, f) in l.files() {
        let Some(c) = manifest.compressed(&f.name).cloned() else {
            continue;
        };
        let t0 = Instant::now();
        let raw_path = dir.join(&f.name);
        let raw_ok = raw_path.exists()
            && fs::metadata(&raw_path).at(&raw_path)?.len() == f.bytes
            && table::checksum_file(&raw_path)? == f.xxh3;
        let action = if raw_ok {
            Action::AlreadyRaw
        } else {
            if raw_path.exists() {
                obs.warning(&format!(
                    "{} does not match its checksum; writing it again from {}",
                    f.name, c.name
                ));
            }
            let t = open_listed(dir, &c, kind, f)?;
            obs.start(&f.name, t.blocks());
            let mut failed = None;
            table::write_atomic_checked(&raw_path, f.bytes, &f.xxh3, |start, buf| {
                if failed.is_some() {
                    return;
                }
                match t.decompress_range(start, buf) {
                    Ok(()) => obs.advance((buf.len() as u64).div_ceil(c.block_size as u64)),
                    Err(e) => failed = Some(e),
                }
            })
            .map_err(|e| match (e, failed.clone()) {
                (CheckedWriteError::Checksum { .. }, Some(source)) => PackError::Compressed {
                    path: dir.join(&c.name),
                    source,
                },
                (e, _) => e.into(),
            })?;
            Action::Decompressed
        };
        let done = PackedFile {
            layer: l.seeds,
            raw: f.name.clone(),
            name: c.name.clone(),
            action,
            raw_bytes: f.bytes,
            bytes: c.bytes,
            seconds: t0.elapsed().as_secs_f64(),
        };
        obs.done(&done);
        report.files.push(done);
        if remove_compressed {
            manifest.remove_compressed(&f.name);
            manifest.store(dir)?;
            let p = dir.join(&c.name);
            if p.exists() {
                fs::remove_file(&p).at(&p)?;
            }
            table::sync_dir(dir)?;
            obs.removed(&c.name);
            report.removed.push(c.name.clone());
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Settings without a dictionary.
    fn plain(level: i32, block_size: u32) -> Settings {
        Settings {
            level,
            block_size,
            dictionary: 0,
        }
    }

    fn sample(n: u32) -> Vec<u8> {
        (0..layer_size(n))
            .map(|g| ((g * 7 + g / 13) % 11) as u8)
            .collect()
    }

    #[test]
    fn round_trip_and_random_access() {
        for bs in [1, 7, 64, 4096] {
            let raw = sample(6);
            let z = encode(&raw, Kind::Lower, 6, plain(3, bs)).unwrap();
            let t = CompressedTable::parse(&z[..]).unwrap();
            assert_eq!(t.header().kind, Kind::Lower);
            assert_eq!(t.decompress_all().unwrap(), raw);
            for g in (0..raw.len() as u64).step_by(97) {
                assert_eq!(t.get(g).unwrap(), raw[g as usize] as i8);
            }
            assert!(matches!(
                t.get(raw.len() as u64),
                Err(CompressError::OutOfRange { .. })
            ));
            let mut back = Vec::new();
            t.into_reader().read_to_end(&mut back).unwrap();
            assert_eq!(back, raw);
        }
    }

    #[test]
    fn partial_ranges_cross_blocks() {
        let raw = sample(5);
        let z = encode(&raw, Kind::Score, 5, plain(1, 100)).unwrap();
        let t = CompressedTable::parse(z).unwrap();
        for (s, k) in [(0, 1), (99, 2), (150, 1000), (4000, 368), (4367, 1)] {
            let mut out = vec![0u8; k];
            t.decompress_range(s, &mut out).unwrap();
            assert_eq!(out, raw[s as usize..s as usize + k]);
        }
        let mut out = vec![0u8; 2];
        assert!(t.decompress_range(4367, &mut out).is_err());
    }

    #[test]
    fn verify_finds_bytes_that_differ_from_the_raw_table() {
        let raw = sample(5);
        let z = encode(&raw, Kind::Score, 5, plain(1, 512)).unwrap();
        let t = CompressedTable::parse(z).unwrap();
        t.verify(Some(&raw), &|_| {}).unwrap();
        let mut other = raw.clone();
        other[4000] ^= 1;
        assert_eq!(
            t.verify(Some(&other), &|_| {}),
            Err(CompressError::DiffersFromRaw { index: 4000 })
        );
    }

    #[test]
    fn bad_settings_are_refused() {
        let raw = sample(2);
        for s in [plain(3, 0), plain(3, MAX_BLOCK_SIZE + 1), plain(1000, 64)] {
            let e = encode(&raw, Kind::Score, 2, s).unwrap_err();
            assert_eq!(e.kind(), io::ErrorKind::InvalidInput);
        }
        let e = encode(&raw[1..], Kind::Score, 2, Settings::default()).unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::InvalidInput);
    }
}
