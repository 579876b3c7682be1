//! Compressed tables: blocks of entries coded independently, behind a
//! block index, for random access.
//!
//! Two families of files:
//!
//! * **Format version 3** (the default; [`v3`]): a layer's tables coded
//!   by context models and rANS. The full form `tables.n.zst` holds the
//!   three tables of layer `n` (scores, lower, upper) in one file: each
//!   block has a scores stream, then an envelope stream that codes `S -
//!   lower` and `upper - S` given the score. The scores-only form
//!   `scores.n.zst` (the file an engine ships) holds the scores stream
//!   alone. A probe of the scores decodes one scores stream; a probe of
//!   an envelope table decodes both streams of one block.
//! * **Format versions 1 and 2**: one table per file (`scores.n.zst`,
//!   `lower.n.zst`, `upper.n.zst`), each block a zstd frame, in version 2
//!   against a zstd dictionary stored in the file. Still read and, with
//!   `awari compress --format 2`, written.
//!
//! # Format version 3
//!
//! All integers little-endian.
//!
//! | offset | bytes | field |
//! |---|---|---|
//! | 0 | 8 | magic `AWARIZST` |
//! | 8 | 4 | format version `3` |
//! | 12 | 1 | tables held: `0b111` scores, lower and upper; `0b001` scores alone |
//! | 13 | 1 | variant of the scores model, 0..=3 (the contexts it uses, [`v3`]) |
//! | 14 | 2 | zero |
//! | 16 | 16 | rule set, ASCII, zero-padded |
//! | 32 | 4 | layer (seeds) |
//! | 36 | 4 | block size B in entries, 1 ..= 16384 |
//! | 40 | 8 | entries E, the layer's size |
//! | 48 | 4 | bytes M of the models |
//! | 52 | 4 | zero |
//! | 56 | 8 | `xxh3-64` of the raw `scores.n` |
//! | 64 | 8 | `xxh3-64` of the raw `lower.n` (0 in the scores-only form) |
//! | 72 | 8 | `xxh3-64` of the raw `upper.n` (0 in the scores-only form) |
//! | 80 | 8 | `xxh3-64` of bytes 0..80, the block index and the models |
//! | 88 | 8 (S+1) | coarse index: the file offset of every 64th block (S = ceil(K / 64), K = ceil(E / B)), then the end of the file |
//! | ... | 2 K T | per block, the byte length of each of its T streams (T = 2 in the full form, 1 alone) |
//! | ... | M | the models: scores, then (full form) `a` and `b` |
//! | ... | | K blocks, each its streams back to back |
//!
//! A model lists the contexts it holds (each as the gap from the previous
//! one, LEB128), and for each its symbols (gap, LEB128) with their
//! frequencies (LEB128, minus one) summing to 4096. A stream is a rANS
//! stream (a 64-bit state read 32 bits at a time, big-endian; its first 8
//! bytes the coder's final state): decoding ends in a state that holds 31
//! bits of the `xxh3-64` of the block's raw values and having read every
//! byte of the stream, which is checked. Opening a file checks every
//! header field, that the lengths in each stretch of 64 blocks add up to
//! the coarse index, each stream's length (a multiple of 4, at least 8),
//! every model (contexts and symbols in range and in order, frequencies
//! summing to 4096), and the checksum of header, index and models.
//! Decoding a block checks its stream; verifying a table checks the
//! header's checksum of the raw table. A block's streams must fit 16-bit
//! lengths, which bounds B.
//!
//! # Format versions 1 and 2
//!
//! A file `scores.n.zst` (likewise `lower.n.zst`, `upper.n.zst`) holds:
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
//! `offset[K]` the end of the file.
//!
//! Opening a file ([`CompressedTable::parse`]) checks the magic, version,
//! every header field, that index and dictionary lie inside the file, that
//! the offsets increase and bound frames no larger than zstd's bound for a
//! block, and the checksum of header, index and dictionary; every failure is
//! a [`CompressError`]. Decompressing a block checks its length and the
//! frame's checksum. Nothing is allocated from a size read from the file
//! before it was checked against the file's length or the layer.
//!
//! # Reading
//!
//! [`CompressedTable`] reads any version over anything that is
//! `AsRef<[u8]>` or a file read with `pread`; a version 3 file of the full
//! form serves the table that [`CompressedTable::check_table`] or
//! [`CompressedTable::serve`] asked for. The encoders write into a buffer
//! or any `Write + Seek` ([`encode`] for versions 1 and 2,
//! [`v3::encode_to`]); the folder operations that write files and
//! manifests are in [`crate::pack`].
//!
//! * `read`: [`CompressedTable`], random access through a per-thread cache
//!   of decoded blocks, and a sequential [`Reader`].
//! * `write`: the zstd encoder; `ans`: the rANS coder and its models;
//!   [`v3`]: the contexts and the version 3 file.

mod ans;
mod read;
pub mod v3;
mod write;

pub use read::{Bytes, CompressedTable, Reader};
pub(crate) use write::encode_steps;
pub use write::{encode, encode_to, Settings};

#[cfg(test)]
use crate::format::MAX_BLOCK_SIZE;
use crate::format::{check_compression, Kind};
use crate::index::layer_size;
use crate::rules::MAX_SEEDS;
use crate::rules::{Rules, PRESETS};

/// The first bytes of every compressed table.
pub const MAGIC: [u8; 8] = *b"AWARIZST";
/// The newest format version this code reads and writes (it reads and
/// writes 1 and 2 too).
pub const FORMAT_VERSION: u32 = 3;
/// Bytes before the block index.
pub const HEADER_BYTES: usize = 72;
/// Entries per block unless told otherwise (chosen from the measurements
/// in the README: random probes cost one block's decompression).
pub const DEFAULT_BLOCK_SIZE: u32 = 4096;
/// The zstd level unless told otherwise.
pub const DEFAULT_LEVEL: i32 = 19;
/// Appended to a raw table's file name.
pub const SUFFIX: &str = ".zst";
/// Bytes handled per step when (de)compressing a whole table.
pub(crate) const STEP: usize = 1 << 25;

/// The name of the compressed copy of the raw table `raw`.
pub fn file_name(raw: &str) -> String {
    format!("{raw}{SUFFIX}")
}

/// The name of the version 3 file that holds all three tables of layer
/// `n` (the full form): `tables.n.zst`.
pub fn layer_file_name(n: u32) -> String {
    format!("tables.{n}{SUFFIX}")
}

/// The names a compressed copy of table `kind` of layer `n` may have, in
/// the order a folder without manifest is searched: its own file
/// (`scores.n.zst`, any version), then the layer's full-form file.
pub fn copy_names(kind: Kind, n: u32) -> [String; 2] {
    [file_name(&kind.file_name(n)), layer_file_name(n)]
}

/// Why a compressed table cannot be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
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
    /// The file cannot be read (the operating system failed the read; a
    /// file that ended early is [`CompressError::Truncated`] or
    /// [`CompressError::OffsetOutOfRange`]).
    #[error("cannot read it: {}", std::io::Error::from(*.0))]
    Read(std::io::ErrorKind),
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
    /// A block of a version 3 file does not decode.
    #[error("block {block}: {message}")]
    Stream {
        /// The block.
        block: u64,
        /// What is wrong.
        message: String,
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
    /// The rule set the table was built under.
    pub rules: Rules,
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
    /// Bytes of the zstd dictionary the blocks were compressed with; 0:
    /// none (and the file is written as version 1).
    pub dictionary: u32,
    /// The format version: 1 (zstd), 2 (zstd with a dictionary) or 3
    /// (context models, [`v3`]).
    pub version: u32,
    /// The tables the file holds: bit 0 scores, bit 1 lower, bit 2 upper
    /// (versions 1 and 2 hold one table, `kind`).
    pub tables: u8,
    /// Version 3: the variant of the scores model.
    pub variant: u8,
    /// Version 3: bytes of the models.
    pub model_bytes: u32,
    /// The checksum of each raw table the file holds (indexed by
    /// scores, lower, upper; 0 for a table it does not hold).
    pub raws: [u64; 3],
}

impl Header {
    /// Number of blocks.
    pub fn blocks(&self) -> u64 {
        self.entries.div_ceil(self.block_size as u64)
    }

    /// Bytes of header and block index: where the dictionary (version 2)
    /// or the models (version 3) start.
    pub fn index_end(&self) -> u64 {
        if self.version == 3 {
            v3::index_end(self)
        } else {
            HEADER_BYTES as u64 + 8 * (self.blocks() + 1)
        }
    }

    /// Bytes of header, block index and dictionary or models: where the
    /// first block starts.
    pub fn data_start(&self) -> u64 {
        self.index_end()
            + if self.version == 3 {
                self.model_bytes as u64
            } else {
                self.dictionary as u64
            }
    }

    /// Whether the file holds table `kind`.
    pub fn holds(&self, kind: Kind) -> bool {
        self.tables & (1 << kind_code(kind)) != 0
    }

    /// The checksum of raw table `kind` as the manifest writes it, if the
    /// file holds it.
    pub fn raw_checksum_of(&self, kind: Kind) -> Option<String> {
        self.holds(kind)
            .then(|| format!("{:016x}", self.raws[kind_code(kind) as usize]))
    }

    /// Entries of block `i`.
    pub fn block_len(&self, i: u64) -> usize {
        let start = i * self.block_size as u64;
        (self.entries - start).min(self.block_size as u64) as usize
    }

    /// `xxh3-64` of the uncompressed table served (`kind`).
    pub fn raw_xxh3(&self) -> u64 {
        self.raws[kind_code(self.kind) as usize]
    }

    /// The checksum of the uncompressed table as the manifest writes it.
    pub fn raw_checksum(&self) -> String {
        format!("{:016x}", self.raw_xxh3())
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
        check_compression(self.level, self.block_size, self.dictionary)
            .map_err(|(name, reason)| field(name, reason))
    }

    /// The first 64 bytes (without the checksum of header and index).
    fn encode(&self) -> [u8; 64] {
        let mut h = [0u8; 64];
        h[0..8].copy_from_slice(&MAGIC);
        h[8..12].copy_from_slice(&self.version.to_le_bytes());
        h[12] = kind_code(self.kind);
        let tag = self.rules.tag().as_bytes();
        h[16..16 + tag.len()].copy_from_slice(tag);
        h[32..36].copy_from_slice(&self.layer.to_le_bytes());
        h[36..40].copy_from_slice(&self.block_size.to_le_bytes());
        h[40..48].copy_from_slice(&self.entries.to_le_bytes());
        h[48..52].copy_from_slice(&self.level.to_le_bytes());
        h[52..56].copy_from_slice(&self.dictionary.to_le_bytes());
        h[56..64].copy_from_slice(&self.raw_xxh3().to_le_bytes());
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

/// The checksum of header, index and models of a version 3 file: `xxh3-64`
/// of bytes 0..80 followed by the index and the models.
fn meta_checksum_v3(head: &[u8], index_and_models: &[u8]) -> u64 {
    let mut h = xxhash_rust::xxh3::Xxh3::new();
    h.update(&head[..80]);
    h.update(index_and_models);
    h.digest()
}

/// What a compressed table must hold to stand for a given raw table.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Expected {
    /// The rule set of the folder.
    pub rules: Rules,
    /// The table.
    pub kind: Kind,
    /// The layer.
    pub layer: u32,
    /// The checksum of the raw table, as the manifest writes it.
    pub raw_xxh3: String,
}

/// The rule set of a header (bytes 16..32 of every version): a tag this
/// program knows, zero-padded.
fn rule_set(b: &[u8]) -> Result<Rules, CompressError> {
    let rule = &b[16..32];
    let used = rule.iter().position(|&c| c == 0).unwrap_or(rule.len());
    std::str::from_utf8(&rule[..used])
        .ok()
        .and_then(Rules::by_tag)
        .filter(|_| rule[used..].iter().all(|&c| c == 0))
        .ok_or_else(|| CompressError::HeaderField {
            field: "rule set",
            reason: format!(
                "'{}', this program reads {}",
                String::from_utf8_lossy(&rule[..used]).escape_debug(),
                PRESETS.map(|r| r.tag()).join(", ")
            ),
        })
}

/// Reads and checks the header's fields from its first bytes `b` of a
/// file of `len` bytes.
fn header_fields(b: &[u8], len: u64) -> Result<Header, CompressError> {
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
    if version == 3 {
        return v3::header_fields(b, len);
    }
    let field = |field: &'static str, reason: String| CompressError::HeaderField { field, reason };
    let kind =
        kind_of(b[12]).ok_or_else(|| field("table", format!("{} is not 0, 1 or 2", b[12])))?;
    if b[13..16] != [0; 3] || (version == 1 && b[52..56] != [0; 4]) {
        return Err(field("reserved", "reserved bytes are not zero".into()));
    }
    let rules = rule_set(b)?;
    let header = Header {
        rules,
        kind,
        layer: u32_at(b, 32),
        block_size: u32_at(b, 36),
        entries: u64_at(b, 40),
        level: u32_at(b, 48) as i32,
        dictionary: if version == 1 { 0 } else { u32_at(b, 52) },
        version,
        tables: 1 << b[12],
        variant: 0,
        model_bytes: 0,
        raws: {
            let mut r = [0; 3];
            r[b[12] as usize] = u64_at(b, 56);
            r
        },
    };
    header.check()?;
    if version == 2 && header.dictionary == 0 {
        return Err(field(
            "dictionary",
            "version 2 files carry a dictionary, this one has 0 bytes".into(),
        ));
    }
    Ok(header)
}

/// Checks where a file's blocks start (`first`, which must be the end of
/// `meta`, what comes before them) and end (`last`, the end of the file of
/// `len` bytes).
fn check_span(
    first: u64,
    last: u64,
    header: &Header,
    len: u64,
    meta: &str,
) -> Result<(), CompressError> {
    if last > len {
        return Err(CompressError::Truncated {
            part: "blocks",
            needed: last,
            found: len,
        });
    }
    if last < len {
        return Err(CompressError::OffsetOutOfRange {
            block: header.blocks(),
            offset: last,
            reason: format!("ends the blocks, but the file has {len} bytes"),
        });
    }
    let data_start = header.data_start();
    if first != data_start {
        return Err(CompressError::OffsetOutOfRange {
            block: 0,
            offset: first,
            reason: format!("must be {data_start}, {meta}"),
        });
    }
    Ok(())
}

/// Reads and checks header and block index from the first bytes `b` (at
/// least the header, block index and dictionary) of a file of `len` bytes.
fn parse_header(b: &[u8], len: u64) -> Result<Header, CompressError> {
    let header = header_fields(b, len)?;
    if header.version == 3 {
        // Index, models and their checksum: checked by `v3::layout`,
        // which the reader calls next.
        if len < header.data_start() || (b.len() as u64) < header.data_start() {
            return Err(CompressError::Truncated {
                part: "block index",
                needed: header.data_start(),
                found: len,
            });
        }
        return Ok(header);
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
    check_span(
        offset(0),
        offset(blocks),
        &header,
        len,
        "the end of the block index",
    )?;
    let most = zstd::zstd_safe::compress_bound(header.block_size as usize) as u64 + 64;
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

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::{self, Read};

    /// Settings without a dictionary.
    fn plain(level: i32, block_size: u32) -> Settings {
        Settings::zstd(level, block_size)
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
            let z = encode(&raw, &crate::rules::AWARI, Kind::Lower, 6, plain(3, bs)).unwrap();
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
        let z = encode(&raw, &crate::rules::AWARI, Kind::Score, 5, plain(1, 100)).unwrap();
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
        let z = encode(&raw, &crate::rules::AWARI, Kind::Score, 5, plain(1, 512)).unwrap();
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
            let e = encode(&raw, &crate::rules::AWARI, Kind::Score, 2, s).unwrap_err();
            assert_eq!(e.kind(), io::ErrorKind::InvalidInput);
        }
        let e = encode(
            &raw[1..],
            &crate::rules::AWARI,
            Kind::Score,
            2,
            Settings::default(),
        )
        .unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::InvalidInput);
    }
}
