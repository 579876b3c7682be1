//! The header of format 3: its fields, where the index and the models
//! lie, and the checksum of header, index and models.

use super::{FULL, SCORES_ONLY, SUPER, VARIANTS};
use crate::codec::header::{check_layer, encode_prefix, rule_set, u32_at, u64_at};
use crate::codec::{CompressError, Family, Header};
use crate::format::Kind;

/// Bytes before the block index in version 3.
pub const V3_HEADER_BYTES: usize = 88;
/// The largest block size of version 3, in entries (a block's streams
/// must fit the index's 16-bit lengths).
pub const V3_MAX_BLOCK_SIZE: u32 = 16384;

/// The header fields of version 3.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct V3Fields {
    /// The variant of the scores model.
    pub variant: u8,
    /// Bytes of the models.
    pub model_bytes: u32,
}

/// Streams per block of a file holding `tables`.
pub fn streams(tables: u8) -> u64 {
    if tables == FULL {
        2
    } else {
        1
    }
}

/// Entries of the coarse index (one per [`SUPER`] blocks, and the end).
pub(super) fn supers(h: &Header) -> u64 {
    h.blocks().div_ceil(SUPER) + 1
}

/// Where the models start: after the header, the coarse index (8 bytes
/// each) and the stream lengths (2 bytes per stream per block).
pub fn index_end(h: &Header) -> u64 {
    V3_HEADER_BYTES as u64 + 8 * supers(h) + 2 * streams(h.tables) * h.blocks()
}

/// Checks the block size of version 3.
pub fn check_block_size(b: u32) -> Result<(), (&'static str, String)> {
    if b == 0 || b > V3_MAX_BLOCK_SIZE {
        return Err((
            "block size",
            format!("{b} is not in 1..={V3_MAX_BLOCK_SIZE} (format version 3)"),
        ));
    }
    Ok(())
}

/// Reads the fields of a version 3 header from its first bytes `b` of a
/// file of `len` bytes (magic and version already checked).
pub(in crate::codec) fn read_header(b: &[u8], len: u64) -> Result<Header, CompressError> {
    if b.len() < V3_HEADER_BYTES {
        return Err(CompressError::Truncated {
            part: "header",
            needed: V3_HEADER_BYTES as u64,
            found: len,
        });
    }
    let field = |field: &'static str, reason: String| CompressError::HeaderField { field, reason };
    let tables = b[12];
    if tables != FULL && tables != SCORES_ONLY {
        return Err(field(
            "tables",
            format!("{tables:#05b} is neither scores alone (0b001) nor all three (0b111)"),
        ));
    }
    let variant = b[13];
    if variant >= VARIANTS {
        return Err(field(
            "model variant",
            format!("{variant}, at most {}", VARIANTS - 1),
        ));
    }
    if b[14..16] != [0; 2] || b[52..56] != [0; 4] {
        return Err(field("reserved", "reserved bytes are not zero".into()));
    }
    let rules = rule_set(b)?;
    let layer = u32_at(b, 32);
    let entries = u64_at(b, 40);
    check_layer(layer, entries)?;
    let block_size = u32_at(b, 36);
    check_block_size(block_size).map_err(|(f, r)| field(f, r))?;
    let model_bytes = u32_at(b, 48);
    let mut raws = [u64_at(b, 56), u64_at(b, 64), u64_at(b, 72)];
    if tables == SCORES_ONLY {
        if raws[1] != 0 || raws[2] != 0 {
            return Err(field(
                "reserved",
                "a scores-only file has envelope checksums".into(),
            ));
        }
        raws = [raws[0], 0, 0];
    }
    Ok(Header {
        rules,
        kind: Kind::Score,
        layer,
        entries,
        block_size,
        version: 3,
        tables,
        raws,
        family: Family::V3(V3Fields {
            variant,
            model_bytes,
        }),
    })
}

/// The first 80 bytes of a version 3 header (without the checksum of
/// header, index and models).
pub(super) fn encode_header(h: &Header, f: &V3Fields) -> [u8; 80] {
    let mut b = [0u8; 80];
    encode_prefix(h, &mut b);
    b[12] = h.tables;
    b[13] = f.variant;
    b[48..52].copy_from_slice(&f.model_bytes.to_le_bytes());
    for (k, r) in h.raws.iter().enumerate() {
        b[56 + 8 * k..64 + 8 * k].copy_from_slice(&r.to_le_bytes());
    }
    b
}

/// The checksum of header (its first 80 bytes), index and model.
pub(super) fn meta_checksum(head: &[u8], rest: &[u8]) -> u64 {
    crate::codec::header::meta_checksum(head, 80, rest)
}
