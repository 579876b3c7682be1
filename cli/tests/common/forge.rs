//! Forged damage to format 4 files, shared by `compress_v4_mutations.rs`:
//! layer 8 as a sample (the full form and the scores alone, in small
//! blocks and few classes, so that a file opens fast enough to be mutated
//! hundreds of thousands of times), where the parts of a file start, the
//! checksum of header, index and models rewritten as a forger would, the
//! block counts read and written, one mutated file opened and read
//! without a panic, errors named for counting, and the rounds of the
//! mutation loops.

use super::compress::{parse, raw_table, KINDS};
use awari_egdb::codec::v4::{encode_full, encode_scores, V4Settings, V4_HEADER_BYTES};
use awari_egdb::codec::{CompressError, CompressedTable};
use awari_egdb::rules::AWARI;
use std::collections::BTreeMap;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::OnceLock;

/// The layer of the samples.
pub const N: u32 = 8;

/// The raw tables (scores, lower, upper) and a file.
pub type Sample = ([Vec<u8>; 3], Vec<u8>);

/// Layer 8 (75,504 entries) in blocks of 32 bytes (the full form's
/// envelope in blocks of 64) with 16 classes.
fn layer_8(full: bool) -> Sample {
    let raws = KINDS.map(|k| raw_table(k, N));
    let lay = V4Settings {
        block_bytes: 32,
        classes: 16,
        ..V4Settings::default()
    };
    let z = if full {
        encode_full(&raws[0], &raws[1], &raws[2], &AWARI, N, lay, 64)
    } else {
        encode_scores(&raws[0], &AWARI, N, lay)
    }
    .expect("encode");
    let t = parse(&z).expect("a sound file");
    assert_eq!(t.header().v4().envelope.is_some(), full);
    (raws, z)
}

/// The full form of layer 8.
pub fn sample_full() -> &'static Sample {
    static S: OnceLock<Sample> = OnceLock::new();
    S.get_or_init(|| layer_8(true))
}

/// The scores alone of layer 8.
pub fn sample_scores() -> &'static Sample {
    static S: OnceLock<Sample> = OnceLock::new();
    S.get_or_init(|| layer_8(false))
}

pub fn u32_at(b: &[u8], at: usize) -> u32 {
    u32::from_le_bytes(b[at..at + 4].try_into().unwrap())
}

pub fn u64_at(b: &[u8], at: usize) -> u64 {
    u64::from_le_bytes(b[at..at + 8].try_into().unwrap())
}

/// Bits of a block count of blocks of at most `cap` entries.
fn count_bits(cap: u32) -> u32 {
    32 - cap.saturating_sub(1).leading_zeros()
}

/// Where the models and the group checks end, as the header `b` says
/// (`None` for fields no file can have).
fn meta_end(b: &[u8]) -> Option<usize> {
    if b.len() < V4_HEADER_BYTES {
        return None;
    }
    let (cap, entries) = (u32_at(b, 36), u64_at(b, 40));
    let (blocks, models) = (u32_at(b, 48) as u64, u32_at(b, 52) as u64);
    if cap == 0 || entries > 1 << 40 {
        return None;
    }
    let sparse = 8 * entries.div_ceil(1 << 13);
    let counts = |k: u64| (k * count_bits(cap) as u64).div_ceil(8);
    let mut end = V4_HEADER_BYTES as u64 + sparse + counts(blocks) + models;
    if b[12] == 0b111 {
        end += sparse + counts(u32_at(b, 84) as u64);
    }
    if b[81] & 2 != 0 {
        let block_bytes = u16::from_le_bytes([b[82], b[83]]).max(1) as u64;
        end += 4 * blocks.div_ceil((4096 / block_bytes).max(1));
    }
    usize::try_from(end).ok()
}

/// Rewrites the checksum of header, index, counts and models after a
/// mutation, as a forger would (over the parts the header says there
/// are), so that the reader's other checks are reached.
pub fn forge(z: &mut [u8]) {
    let Some(end) = meta_end(z).filter(|&e| e <= z.len()) else {
        return;
    };
    let mut h = xxhash_rust::xxh3::Xxh3::new();
    h.update(&z[..88]);
    h.update(&z[V4_HEADER_BYTES..end]);
    z[88..96].copy_from_slice(&h.digest().to_le_bytes());
}

/// Where the parts of a sound format 4 file start (file offsets).
#[derive(Clone, Copy, Debug)]
pub struct Parts {
    /// The sparse index (after the header).
    pub index: usize,
    /// The packed block counts.
    pub counts: usize,
    /// The full form's envelope index and counts (`models` for the scores
    /// alone).
    pub envelope: usize,
    /// The models.
    pub models: usize,
    /// The first block.
    pub data: usize,
    pub blocks: usize,
    pub cap: u32,
}

pub fn parts(z: &[u8]) -> Parts {
    let t = parse(z).unwrap();
    let h = t.header();
    let f = h.v4();
    let ns = f.sparse_entries(h.entries) as usize;
    let counts = V4_HEADER_BYTES + 8 * ns;
    let envelope = counts + (f.blocks as usize * count_bits(h.block_size) as usize).div_ceil(8);
    Parts {
        index: V4_HEADER_BYTES,
        counts,
        envelope,
        models: h.index_end() as usize,
        data: h.data_start() as usize,
        blocks: f.blocks as usize,
        cap: h.block_size,
    }
}

impl Parts {
    /// The block counts of the scores.
    pub fn read_counts(&self, z: &[u8]) -> Vec<u32> {
        let bits = count_bits(self.cap);
        (0..self.blocks)
            .map(|i| {
                let at = i * bits as usize;
                let word = u32::from_le_bytes(std::array::from_fn(|k| {
                    *z.get(self.counts + at / 8 + k).unwrap_or(&0)
                }));
                ((word >> (at % 8)) & ((1 << bits) - 1)) + 1
            })
            .collect()
    }

    /// Writes the block counts `c` of the scores; the bytes it changed.
    pub fn write_counts(&self, z: &mut [u8], c: &[u32]) -> Vec<usize> {
        let bits = count_bits(self.cap) as usize;
        let mut packed = vec![0u8; self.envelope - self.counts];
        for (i, &x) in c.iter().enumerate() {
            for b in 0..bits {
                if (x - 1) >> b & 1 == 1 {
                    packed[(i * bits + b) / 8] |= 1 << ((i * bits + b) % 8);
                }
            }
        }
        let mut changed = Vec::new();
        for (k, &p) in packed.iter().enumerate() {
            if z[self.counts + k] != p {
                z[self.counts + k] = p;
                changed.push(self.counts + k);
            }
        }
        changed
    }
}

/// What reads of the files that opened gave, by kind.
pub type Outcomes = BTreeMap<String, usize>;

/// One mutated file: opening and reading it must give a typed error or,
/// for a probe, a value within the layer's range, and decoded whole
/// (every `whole`-th time) the raw table or an error; never a panic.
/// Whole blocks `blocks` are decoded too, tallied in `reads` ("right",
/// "wrong" or the error). Returns the opening's error, or `Ok` when the
/// file opened.
pub fn try_mutation(
    z: &[u8],
    raws: &[Vec<u8>; 3],
    blocks: &[usize],
    whole: bool,
    reads: &mut Outcomes,
) -> Result<(), CompressError> {
    let r = catch_unwind(AssertUnwindSafe(|| {
        let mut t = parse(z)?;
        let n = t.header().layer as i32;
        for (k, kind) in KINDS.into_iter().enumerate() {
            if t.serve(kind).is_err() {
                continue;
            }
            let raw = &raws[k];
            for &b in blocks {
                let g = (b as u64 * 37) % t.len();
                if let Ok(v) = t.get(g) {
                    assert!((v as i32).abs() <= n, "{kind:?} entry {g}: {v}");
                }
                let at = (b * 150).min(raw.len() - 1);
                let len = 300.min(raw.len() - at);
                let mut out = vec![0u8; len];
                let outcome = match t.decompress_range(at as u64, &mut out) {
                    Ok(()) if out == raw[at..at + len] => "right".to_string(),
                    Ok(()) => "wrong".to_string(),
                    Err(e) => variant(&e),
                };
                *reads.entry(outcome).or_default() += 1;
            }
            if whole {
                if let Ok(all) = t.decompress_all() {
                    assert!(all == *raw, "{kind:?}: decoded whole to other values");
                }
            }
        }
        Ok(())
    }));
    r.unwrap_or_else(|_| panic!("a mutated file made the reader panic"))
}

/// Opening `z` from memory and from a file read with `pread` gives the
/// same result; that result.
pub fn parse_both(z: &[u8]) -> Result<(), CompressError> {
    let a = parse(z).map(|_| ());
    let b = CompressedTable::parse(Pread(z)).map(|_| ());
    assert_eq!(a, b, "in memory and by pread");
    a
}

/// Bytes read only through [`awari_egdb::codec::Bytes::read_at`], as a
/// file read with `pread` is.
pub struct Pread<'a>(pub &'a [u8]);

impl awari_egdb::codec::Bytes for Pread<'_> {
    fn total_len(&self) -> u64 {
        self.0.len() as u64
    }
    fn read_at(&self, at: u64, out: &mut [u8]) -> std::io::Result<()> {
        awari_egdb::codec::Bytes::read_at(self.0, at, out)
    }
}

/// The kind of an error, for counting: the variant, with the part or
/// field where it has one.
pub fn variant(e: &CompressError) -> String {
    match e {
        CompressError::Truncated { part, .. } => format!("Truncated({part})"),
        CompressError::BadMagic => "BadMagic".into(),
        CompressError::UnsupportedVersion(_) => "UnsupportedVersion".into(),
        CompressError::Retired { .. } => "Retired".into(),
        CompressError::HeaderField { field, .. } => format!("HeaderField({field})"),
        CompressError::OffsetOutOfRange { .. } => "OffsetOutOfRange".into(),
        CompressError::IndexChecksum { .. } => "IndexChecksum".into(),
        CompressError::Stream { .. } => "Stream".into(),
        CompressError::Mismatch { field, .. } => format!("Mismatch({field})"),
        other => format!("{other:?}"),
    }
}

/// Iterations of the mutation loops (fewer without optimisation).
pub fn rounds(release: usize) -> usize {
    if cfg!(debug_assertions) {
        release / 20
    } else {
        release
    }
}
