//! The header of format 4: its fields, where the index, the counts and
//! the model lie, and the checksum of header, index, counts and model.

use super::coder::STATE_BYTES;
use super::model::{MAX_CLASSES, PROB_BITS};
use crate::codec::header::{check_layer, encode_prefix, rule_set, u32_at, u64_at};
pub use crate::codec::header::{EnvelopeFields, V4Fields};
use crate::codec::{CompressError, Family, Header};
use crate::format::Kind;

/// Bytes of the header.
pub const V4_HEADER_BYTES: usize = 96;
/// The blocks start at a multiple of this many bytes (a cache line).
pub const V4_ALIGN: u64 = 64;
/// Bytes per block unless told otherwise.
pub const V4_DEFAULT_BLOCK_BYTES: u32 = 64;
/// Bytes per score block of the full form unless told otherwise (the
/// three tables within 5.5 bits a position: docs/compression.md).
pub const V4_FULL_DEFAULT_BLOCK_BYTES: u32 = 96;
/// The smallest and largest blocks, in bytes.
pub const V4_BLOCK_BYTES: std::ops::RangeInclusive<u32> = 16..=4096;
/// The most entries a block holds unless told otherwise (bounds the
/// work of a probe, which decodes its block up to the entry).
pub const V4_DEFAULT_BLOCK_CAP: u32 = 1024;
/// The most entries any block holds (a count is 16 bits).
pub const V4_MAX_BLOCK_CAP: u32 = 4095;
/// Classes of contexts unless told otherwise.
pub const V4_DEFAULT_CLASSES: u32 = 128;
/// log2 of the entries per entry of the sparse index.
pub const V4_SPARSE_BITS: u32 = 13;

/// The tables a full-form file holds: scores, lower, upper.
pub const FULL: u8 = 0b111;
/// The tables a scores-only file holds.
pub const SCORES_ONLY: u8 = 0b001;

/// The flag of byte 81 (the flags): the file leaves "don't care" entries.
const DONT_CARE: u8 = 1;
/// The flag of byte 81: the file stores a check of every group of score
/// blocks after its models ([`V4Fields::group_blocks`]).
const GROUP_CHECKS: u8 = 2;

/// Checks the block settings of format 4: bytes per block and the most
/// entries a block holds.
pub fn check_blocks(block_bytes: u32, cap: u32) -> Result<(), (&'static str, String)> {
    if !V4_BLOCK_BYTES.contains(&block_bytes) {
        return Err((
            "block bytes",
            format!(
                "{block_bytes} is not in {}..={} (format version 4)",
                V4_BLOCK_BYTES.start(),
                V4_BLOCK_BYTES.end()
            ),
        ));
    }
    if !(1..=V4_MAX_BLOCK_CAP).contains(&cap) {
        return Err((
            "block size",
            format!("{cap} entries is not in 1..={V4_MAX_BLOCK_CAP} (format version 4)"),
        ));
    }
    Ok(())
}

/// Checks the number of classes of format 4.
pub fn check_classes(classes: u32) -> Result<(), (&'static str, String)> {
    if !(1..=MAX_CLASSES).contains(&classes) {
        return Err(("classes", format!("{classes} is not in 1..={MAX_CLASSES}")));
    }
    Ok(())
}

/// Bits of a block's entry count less one, for blocks of at most `cap`
/// entries: `ceil(log2(cap))` (0 when every block holds one entry).
pub fn count_bits(cap: u32) -> u32 {
    32 - cap.saturating_sub(1).leading_zeros()
}

/// Bytes of `blocks` packed entry counts of at most `cap` entries.
pub fn counts_bytes(blocks: u64, cap: u32) -> u64 {
    (blocks * count_bits(cap) as u64).div_ceil(8)
}

/// Where the models start: after the header, the sparse index (8 bytes an
/// entry) and the block counts (`count_bits` a block), and in the full
/// form the envelope's sparse index and block counts.
pub fn index_end(h: &Header, f: &V4Fields) -> u64 {
    let sparse = 8 * f.sparse_entries(h.entries);
    let counts = |blocks| counts_bytes(blocks, h.block_size);
    V4_HEADER_BYTES as u64
        + sparse
        + counts(f.blocks)
        + f.envelope.map_or(0, |e| sparse + counts(e.blocks))
}

/// Where the models end: after them lie the group checks, if any.
pub fn models_end(h: &Header, f: &V4Fields) -> u64 {
    index_end(h, f) + f.model_bytes as u64
}

/// Where what the header's checksum covers ends: after the models and
/// the group checks.
pub fn meta_end(h: &Header, f: &V4Fields) -> u64 {
    models_end(h, f) + f.group_check_bytes()
}

/// Where the blocks start: after the model and the group checks, at a
/// multiple of [`V4_ALIGN`].
pub fn data_start(h: &Header, f: &V4Fields) -> u64 {
    meta_end(h, f).next_multiple_of(V4_ALIGN)
}

impl Header {
    /// Bytes of header, sparse index and block counts: where the models
    /// start ([`index_end`]).
    pub fn index_end(&self) -> u64 {
        index_end(self, self.v4())
    }

    /// Bytes of header, index, counts, models and padding: where the first
    /// block starts ([`data_start`]).
    pub fn data_start(&self) -> u64 {
        data_start(self, self.v4())
    }
}

/// Reads the fields of a version 4 header from its first bytes `b` of a
/// file of `len` bytes (magic and version already checked).
pub(in crate::codec) fn read_header(b: &[u8], len: u64) -> Result<Header, CompressError> {
    if b.len() < V4_HEADER_BYTES {
        return Err(CompressError::Truncated {
            part: "header",
            needed: V4_HEADER_BYTES as u64,
            found: len,
        });
    }
    let field = |field: &'static str, reason: String| CompressError::HeaderField { field, reason };
    let tables = b[12];
    if tables != SCORES_ONLY && tables != FULL {
        return Err(field(
            "tables",
            format!(
                "{tables:#05b}, format 4 holds the scores alone (0b001) or the three tables (0b111)"
            ),
        ));
    }
    if b[13] as u32 != PROB_BITS {
        return Err(field(
            "probability bits",
            format!("{}, format 4 codes with {PROB_BITS}", b[13]),
        ));
    }
    let alone = tables == SCORES_ONLY;
    let dont_care = b[81] & DONT_CARE != 0;
    if b[81] & !(DONT_CARE | GROUP_CHECKS) != 0
        || (dont_care && !alone)
        || alone
            && (b[14..16] != [0; 2]
                || (!dont_care && b[64..72] != [0; 8])
                || b[72..80] != [0; 8]
                || b[84..88] != [0; 4])
    {
        return Err(field("reserved", "reserved bytes are not zero".into()));
    }
    let rules = rule_set(b)?;
    let layer = u32_at(b, 32);
    let entries = u64_at(b, 40);
    check_layer(layer, entries)?;
    let block_size = u32_at(b, 36);
    let block_bytes = u16::from_le_bytes([b[82], b[83]]) as u32;
    check_blocks(block_bytes, block_size).map_err(|(f, r)| field(f, r))?;
    let sparse_bits = b[80] as u32;
    if sparse_bits != V4_SPARSE_BITS {
        return Err(field(
            "sparse index",
            format!("2^{sparse_bits} entries an entry, format 4 uses 2^{V4_SPARSE_BITS}"),
        ));
    }
    let blocks = u32_at(b, 48) as u64;
    // Every block holds at least one entry and at most the cap.
    if blocks > entries || blocks * (block_size as u64) < entries {
        return Err(field(
            "blocks",
            format!("{blocks} blocks of at most {block_size} entries cannot hold {entries}"),
        ));
    }
    if (block_bytes as usize) <= STATE_BYTES {
        return Err(field("block bytes", format!("{block_bytes}")));
    }
    let envelope = if alone {
        None
    } else {
        let e = EnvelopeFields {
            block_bytes: u16::from_le_bytes([b[14], b[15]]) as u32,
            blocks: u32_at(b, 84) as u64,
        };
        check_blocks(e.block_bytes, block_size)
            .map_err(|(_, r)| field("envelope block bytes", r))?;
        if e.blocks > entries || e.blocks * (block_size as u64) < entries {
            return Err(field(
                "envelope blocks",
                format!(
                    "{} blocks of at most {block_size} entries cannot hold {entries}",
                    e.blocks
                ),
            ));
        }
        Some(e)
    };
    Ok(Header {
        rules,
        kind: Kind::Score,
        layer,
        entries,
        block_size,
        version: 4,
        tables,
        raws: [u64_at(b, 56), u64_at(b, 64), u64_at(b, 72)],
        family: Family::V4(V4Fields {
            block_bytes,
            blocks,
            sparse_bits,
            model_bytes: u32_at(b, 52),
            envelope,
            dont_care: dont_care.then(|| u64_at(b, 64)),
            group_checks: b[81] & GROUP_CHECKS != 0,
        }),
    })
}

/// The first 88 bytes of a version 4 header (without the checksum of
/// header, index, counts and model).
pub(super) fn encode_header(h: &Header, f: &V4Fields) -> [u8; 88] {
    let mut b = [0u8; 88];
    encode_prefix(h, &mut b);
    b[12] = if f.envelope.is_some() {
        FULL
    } else {
        SCORES_ONLY
    };
    b[13] = PROB_BITS as u8;
    if let Some(e) = f.envelope {
        b[14..16].copy_from_slice(&(e.block_bytes as u16).to_le_bytes());
        b[64..72].copy_from_slice(&h.raws[1].to_le_bytes());
        b[72..80].copy_from_slice(&h.raws[2].to_le_bytes());
        b[84..88].copy_from_slice(&(e.blocks as u32).to_le_bytes());
    }
    if let Some(x) = f.dont_care {
        b[81] = DONT_CARE;
        b[64..72].copy_from_slice(&x.to_le_bytes());
    }
    if f.group_checks {
        b[81] |= GROUP_CHECKS;
    }
    b[48..52].copy_from_slice(&(f.blocks as u32).to_le_bytes());
    b[52..56].copy_from_slice(&f.model_bytes.to_le_bytes());
    b[56..64].copy_from_slice(&h.raws[0].to_le_bytes());
    b[80] = f.sparse_bits as u8;
    b[82..84].copy_from_slice(&(f.block_bytes as u16).to_le_bytes());
    b
}

/// The checksum of header (its first 88 bytes), index and model.
pub(super) fn meta_checksum(head: &[u8], rest: &[u8]) -> u64 {
    crate::codec::header::meta_checksum(head, 88, rest)
}
