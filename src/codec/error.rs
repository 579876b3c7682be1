//! Why a compressed table cannot be read: [`CompressError`], the faults of
//! a format 4 file, and the refusal of the retired formats 1, 2 and 3. A
//! leaf: it depends on no other module of the crate (`crate::error`
//! converts from it, never the other way).

use super::FORMAT_VERSION;
use crate::format::Checksum;

/// The last release that reads formats 1, 2 and 3, as the refusal of such
/// a file names it.
const LAST_RELEASE_OF_RETIRED: &str = "awari-egdb 0.1.0 (git 44b1542)";

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
    /// Written in a format version this release does not know.
    #[error("format version {0}, this release reads version {FORMAT_VERSION} only")]
    UnsupportedVersion(u32),
    /// Written in format 1, 2 or 3, which earlier releases wrote and this
    /// one no longer reads: the message says which release reads it and
    /// how to convert the file.
    #[error(
        "compressed in format {version}, which this release (awari-egdb {}) no longer reads: \
         decompress it with {LAST_RELEASE_OF_RETIRED}, then compress it with this release",
        env!("CARGO_PKG_VERSION")
    )]
    Retired {
        /// The format version of the file: 1, 2 or 3.
        version: u32,
    },
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
    /// A block does not decode.
    #[error("block {block}: {message}")]
    Stream {
        /// The block.
        block: u64,
        /// What is wrong.
        message: String,
    },
    /// The decompressed table does not have its checksum.
    #[error("the table decompresses to checksum {found}, expected {expected}")]
    ChecksumMismatch {
        /// The checksum it must have.
        expected: Checksum,
        /// The checksum it has.
        found: Checksum,
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
