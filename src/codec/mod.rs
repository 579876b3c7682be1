//! Compressed tables: blocks of entries coded independently, behind a
//! block index, for random access.
//!
//! Three families of files:
//!
//! * **Format version 4** ([`v4`], `awari compress --format 4`): the
//!   three tables (`tables.n.zst`, the envelope in blocks of its own) or
//!   the scores alone (`scores.n.zst`), cut into blocks of a fixed number
//!   of bytes (64 by default, 96 in the full form) behind a sparse index,
//!   coded by context classes and rANS, so that a probe decodes its block
//!   only up to the entry it wants. The layout, the checks and how damage is found are in
//!   the module docs of [`v4`].
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
//! `AsRef<[u8]>` or a file read with `pread`; a version 3 or 4 file of the full
//! form serves the table that [`CompressedTable::check_table`] or
//! [`CompressedTable::serve`] asked for. The encoders write into a buffer
//! or any `Write + Seek` ([`encode`] for versions 1 and 2,
//! [`v3::encode_to`]); the folder operations that write files and
//! manifests are in [`crate::pack`].
//!
//! # The modules
//!
//! One job each; the formats' families are apart, and a new family is a
//! new module plus one variant of [`Family`] (the header's fields) and of
//! the reader's dispatch:
//!
//! * `header`: [`Header`], the prefix every version shares, and the
//!   dispatch to the family that reads the rest; [`Family`].
//! * [`zstd_blocks`]: versions 1 and 2 (header fields, block index, a
//!   block's frame, the encoder [`encode_to`]).
//! * [`v3`]: version 3 (contexts, header, layout, decoding, encoding);
//!   `ans`: its rANS coder and models.
//! * `read`: [`CompressedTable`], random access through a per-thread cache
//!   of decoded blocks (`cache`), and a sequential [`Reader`]; `source`:
//!   where its bytes come from ([`Bytes`]).
//! * `settings`: [`Settings`], how to compress; `error`:
//!   [`CompressError`], why a file cannot be read.

mod ans;
mod cache;
pub mod error;
mod header;
mod read;
mod settings;
mod source;
pub mod v3;
pub mod v4;
pub mod zstd_blocks;

pub use error::CompressError;
pub use header::{Expected, Family, Header, FORMAT_VERSION, MAGIC};
pub use read::{CompressedTable, Reader};
pub use settings::Settings;
pub use source::Bytes;
pub(crate) use zstd_blocks::encode_steps;
pub use zstd_blocks::{
    encode, encode_to, ZstdFields, DEFAULT_LEVEL, ZSTD_DEFAULT_BLOCK_SIZE, ZSTD_HEADER_BYTES,
};

use crate::format::Kind;

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
