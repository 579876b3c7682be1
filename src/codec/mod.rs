//! Compressed tables: format 4, blocks of a fixed number of bytes coded
//! by context classes and rANS behind a sparse index, for random access
//! near raw speed.
//!
//! One format, two forms:
//!
//! * the **full form** (`tables.n.zst`, what `awari compress` and `awari
//!   build --compress-finished` write): the three tables of layer `n`
//!   (scores, lower, upper), the envelope coded given the scores in
//!   blocks of its own, so that a probe of the scores never reads it;
//! * the **scores alone** (`scores.n.zst`, `awari compress --scores-only`,
//!   the file an engine ships), optionally leaving "don't care" entries
//!   that the probe resolves through the lower layers
//!   ([`v4::dont_care`]).
//!
//! A probe verifies its block's group of blocks (once a process) and
//! decodes the block only up to the entry it wants; decoding a whole
//! range checks every block it touches, and verifying a table
//! checks it against the header's checksum of the raw table. The layout,
//! the checks and how damage is found are in the module docs of [`v4`].
//!
//! # The header every version starts with
//!
//! All integers little-endian: the magic `AWARIZST` (bytes 0..8), the
//! format version (8..12), then the version's fields, among them the rule
//! set (16..32, ASCII, zero-padded), the layer (32..36) and the entries
//! (40..48). Version 4 is read ([`Header`], [`Family::V4`]).
//!
//! # The retired formats 1, 2 and 3
//!
//! Earlier releases wrote format versions 1 and 2 (one table per file,
//! each block a zstd frame, in version 2 against a zstd dictionary) and 3
//! (a layer's tables coded by context models and rANS in blocks of 512
//! entries). This release neither writes nor reads them: opening such a
//! file is [`CompressError::Retired`], one line that names the version,
//! the last release that reads it (awari-egdb 0.1.0, git 44b1542) and how
//! to convert it (decompress it with that release, then compress it with
//! this one). Any other version is [`CompressError::UnsupportedVersion`].
//!
//! # Reading
//!
//! [`CompressedTable`] reads a file over anything that is `AsRef<[u8]>`
//! or a file read with `pread`; a file of the full form serves the table
//! that [`CompressedTable::check_table`] or [`CompressedTable::serve`]
//! asked for. The encoders ([`v4::encode_scores`], [`v4::encode_full`],
//! [`v4::dont_care`]) write into a buffer; the folder operations that
//! write files and manifests are in [`crate::pack`].
//!
//! # The modules
//!
//! One job each; a new family of formats would be a new module plus one
//! variant of [`Family`] (the header's fields) and of the reader's
//! dispatch:
//!
//! * `header`: [`Header`], the prefix every version shares, and the
//!   dispatch on the version (format 4 read, 1 to 3 refused); [`Family`].
//! * [`v4`]: format 4 (contexts, model, coder, header, index, layout,
//!   decoding, encoding, the envelope, don't-care entries).
//! * `read`: [`CompressedTable`], random access, batches of probes, whole
//!   ranges decoded and checked, and a sequential [`Reader`]; `source`:
//!   where its bytes come from ([`Bytes`]).
//! * `settings`: [`Settings`], how to compress; `error`:
//!   [`CompressError`], why a file cannot be read.

pub mod error;
mod header;
mod read;
mod settings;
mod source;
#[doc(hidden)]
pub mod v4;

pub use error::CompressError;
#[doc(hidden)]
pub use header::{Expected, Family, Header, FORMAT_VERSION, MAGIC};
pub use read::CompressedTable;
#[doc(hidden)]
pub use read::Reader;
pub use settings::Settings;
pub use source::Bytes;

use crate::format::Kind;

/// Appended to a raw table's file name.
pub const SUFFIX: &str = ".zst";
/// Bytes handled per step when (de)compressing a whole table.
pub(crate) const STEP: usize = 1 << 25;

/// The name of the compressed copy of the raw table `raw`.
pub fn file_name(raw: &str) -> String {
    format!("{raw}{SUFFIX}")
}

/// The name of the file that holds all three tables of layer `n` (the
/// full form): `tables.n.zst`.
pub fn layer_file_name(n: u32) -> String {
    format!("tables.{n}{SUFFIX}")
}

/// The names a compressed copy of table `kind` of layer `n` may have, in
/// the order a folder without manifest is searched: its own file
/// (`scores.n.zst`, the scores alone; a `lower.n.zst` or `upper.n.zst` is
/// a file of the retired format 2, found so that it is refused by name),
/// then the layer's full-form file.
pub fn copy_names(kind: Kind, n: u32) -> [String; 2] {
    [file_name(&kind.file_name(n)), layer_file_name(n)]
}
