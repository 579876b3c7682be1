//! Why a compressed table cannot be read: [`CompressError`], the faults of
//! every format version. A leaf: it depends on no other module of the
//! crate (`crate::error` converts from it, never the other way).

use super::FORMAT_VERSION;
use crate::format::Checksum;

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
