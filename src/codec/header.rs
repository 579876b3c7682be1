//! The header of a compressed table: the prefix every format version
//! shares (magic, version, rule set, layer, block size, entries), the
//! fields of the format's family ([`Family`]), and the helpers the family
//! reads and writes them with. The family's module reads its header
//! ([`crate::codec::v4`], which uses this module, never the other way);
//! the reader (`read`) dispatches on the version.

use super::CompressError;
use crate::format::{Checksum, Kind};
use crate::index::layer_size;
use crate::rules::{Rules, MAX_SEEDS, PRESETS};

/// The first bytes of every compressed table.
pub const MAGIC: [u8; 8] = *b"AWARIZST";
/// The format version this release reads and writes.
pub const FORMAT_VERSION: u32 = 4;
/// The header of a compressed table.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Header {
    /// The rule set the table was built under.
    pub rules: Rules,
    /// Which table of the layer (the one served, for a file that holds
    /// several).
    pub kind: Kind,
    /// The layer.
    pub layer: u32,
    /// Entries in the table (the layer's size).
    pub entries: u64,
    /// Entries per block.
    pub block_size: u32,
    /// The format version: 4 ([`crate::codec::v4`]).
    pub version: u32,
    /// The tables the file holds: bit 0 scores, bit 1 lower, bit 2 upper.
    pub tables: u8,
    /// The checksum of each raw table the file holds (indexed by
    /// scores, lower, upper; 0 for a table it does not hold).
    pub raws: [u64; 3],
    /// The fields of the format's family.
    pub family: Family,
}

/// The header fields of the format's family: one since formats 1, 2 and 3
/// were retired (a new family is a new variant).
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Family {
    /// Version 4: fixed-size blocks for random access
    /// ([`crate::codec::v4`]).
    V4(V4Fields),
}

/// The header fields of version 4.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct V4Fields {
    /// Bytes per block.
    pub block_bytes: u32,
    /// Blocks.
    pub blocks: u64,
    /// log2 of the entries per entry of the sparse index.
    pub sparse_bits: u32,
    /// Bytes of the models (the scores' and, in the full form, the
    /// envelope's).
    pub model_bytes: u32,
    /// The full form's envelope blocks; `None` for the scores alone.
    pub envelope: Option<EnvelopeFields>,
    /// For a file that leaves "don't care" entries
    /// ([`crate::codec::v4::dont_care`]), the `xxh3-64` of the values it
    /// stores (the header's checksum of the raw scores is then that of the
    /// scores the probe resolves them to).
    pub dont_care: Option<u64>,
    /// Whether the file stores a check of every group of score blocks
    /// (see [`V4Fields::group_blocks`]), so that a probe can trust a block
    /// it decodes only up to its entry.
    pub group_checks: bool,
}

/// The header fields of the full form's envelope (`lower` and `upper`
/// coded given the scores, in blocks of their own).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct EnvelopeFields {
    /// Bytes per envelope block.
    pub block_bytes: u32,
    /// Envelope blocks.
    pub blocks: u64,
}

impl V4Fields {
    /// Entries of the sparse index of a table of `entries`.
    pub fn sparse_entries(&self, entries: u64) -> u64 {
        entries.div_ceil(1 << self.sparse_bits)
    }

    /// Bytes of the blocks: the scores' and the envelope's.
    pub fn blocks_bytes(&self) -> u64 {
        self.blocks * self.block_bytes as u64
            + self.envelope.map_or(0, |e| e.blocks * e.block_bytes as u64)
    }

    /// Score blocks a group check covers: 4 KiB of them (one block when
    /// blocks are larger).
    pub fn group_blocks(&self) -> u64 {
        (4096 / self.block_bytes as u64).max(1)
    }

    /// Groups of score blocks checked (none without group checks).
    pub fn groups(&self) -> u64 {
        if self.group_checks {
            self.blocks.div_ceil(self.group_blocks())
        } else {
            0
        }
    }

    /// Bytes of the group checks: 4 a group.
    pub fn group_check_bytes(&self) -> u64 {
        4 * self.groups()
    }
}

impl Header {
    /// Number of blocks.
    pub fn blocks(&self) -> u64 {
        self.v4().blocks
    }

    /// Whether the file holds table `kind`.
    pub fn holds(&self, kind: Kind) -> bool {
        kind != Kind::Distance && self.tables & (1 << kind_code(kind)) != 0
    }

    /// The checksum of raw table `kind` as the manifest writes it, if the
    /// file holds it.
    pub fn raw_checksum_of(&self, kind: Kind) -> Option<Checksum> {
        self.holds(kind)
            .then(|| Checksum(self.raws[kind_code(kind) as usize]))
    }

    /// The fields of version 4.
    pub fn v4(&self) -> &V4Fields {
        let Family::V4(f) = &self.family;
        f
    }

    /// `xxh3-64` of the uncompressed table served (`kind`).
    pub fn raw_xxh3(&self) -> u64 {
        self.raws[kind_code(self.kind) as usize]
    }

    /// The checksum of the uncompressed table as the manifest writes it.
    pub fn raw_checksum(&self) -> Checksum {
        Checksum(self.raw_xxh3())
    }

    /// Whether the file leaves "don't care" entries (format 4,
    /// [`crate::codec::v4::dont_care`]): its values are not the scores, which only a
    /// probe that resolves them through the lower layers gives.
    pub fn is_dont_care(&self) -> bool {
        self.v4().dont_care.is_some()
    }

    /// The checksum of the values the file decodes to, as the manifest
    /// writes it: the raw table's, or a don't-care file's stored values'.
    pub fn stored_checksum(&self) -> Checksum {
        Checksum(self.v4().dont_care.unwrap_or_else(|| self.raw_xxh3()))
    }
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
    pub raw_xxh3: Checksum,
}

/// The number of table `kind` in a header (and its bit in
/// [`Header::tables`]).
pub(super) fn kind_code(kind: Kind) -> u8 {
    match kind {
        Kind::Score => 0,
        Kind::Lower => 1,
        Kind::Upper => 2,
        // No compressed file holds a distance table: never in `tables`.
        Kind::Distance => 3,
    }
}

pub(super) fn u32_at(b: &[u8], at: usize) -> u32 {
    let mut x = [0u8; 4];
    x.copy_from_slice(&b[at..at + 4]);
    u32::from_le_bytes(x)
}

pub(super) fn u64_at(b: &[u8], at: usize) -> u64 {
    let mut x = [0u8; 8];
    x.copy_from_slice(&b[at..at + 8]);
    u64::from_le_bytes(x)
}

/// The rule set of a header (bytes 16..32): a tag this
/// program knows, zero-padded.
pub(super) fn rule_set(b: &[u8]) -> Result<Rules, CompressError> {
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

/// The checksum of what comes before a file's blocks: `xxh3-64` of the
/// header's first `fields` bytes (the fields before the stored checksum)
/// followed by `rest` (index, counts and models).
pub(super) fn meta_checksum(head: &[u8], fields: usize, rest: &[u8]) -> u64 {
    let mut h = xxhash_rust::xxh3::Xxh3::new();
    h.update(&head[..fields]);
    h.update(rest);
    h.digest()
}

/// Checks that `layer` is a layer of tables and has `entries` positions.
pub(super) fn check_layer(layer: u32, entries: u64) -> Result<(), CompressError> {
    let field = |field: &'static str, reason: String| CompressError::HeaderField { field, reason };
    if layer > MAX_SEEDS || layer == 47 {
        return Err(field("layer", format!("{layer} is not a layer of tables")));
    }
    let size = layer_size(layer);
    if entries != size {
        return Err(field(
            "entries",
            format!("{entries}, but layer {layer} has {size} positions"),
        ));
    }
    Ok(())
}

/// Writes the prefix of a header into `b`: magic, version, rule set,
/// layer, block size, entries (bytes 0..12 and 16..48; the family writes
/// bytes 12..16 and from 48 on).
pub(super) fn encode_prefix(h: &Header, b: &mut [u8]) {
    b[0..8].copy_from_slice(&MAGIC);
    b[8..12].copy_from_slice(&h.version.to_le_bytes());
    let tag = h.rules.tag().as_bytes();
    b[16..16 + tag.len()].copy_from_slice(tag);
    b[32..36].copy_from_slice(&h.layer.to_le_bytes());
    b[36..40].copy_from_slice(&h.block_size.to_le_bytes());
    b[40..48].copy_from_slice(&h.entries.to_le_bytes());
}
