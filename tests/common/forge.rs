//! Forged damage to compressed files of format versions 1 and 2, shared by
//! the `compress_damage*` tests: layer 8's scores as a sample (with and
//! without a dictionary), the checksum rewritten as a forger would, one
//! mutated file read without a panic, parse errors named for counting, and
//! the rounds of the mutation loops. Version 3's are in [`super::forge_v3`].

use super::compress::{parse, raw_table};
use awari_egdb::codec::{self, CompressError, Settings, ZSTD_HEADER_BYTES};
use awari_egdb::format::Kind;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::OnceLock;

/// Layer 8's scores (75,504 entries) in 295 blocks of 256, compressed with
/// a dictionary of `dictionary` bytes (0: none): small enough to mutate
/// millions of times.
pub fn layer_8_sample(dictionary: u32) -> (Vec<u8>, Vec<u8>) {
    let raw = raw_table(Kind::Score, 8);
    let settings = Settings {
        version: 2,
        scores_only: false,
        dont_care: false,
        level: 3,
        block_size: 256,
        block_bytes: 0,
        dictionary,
    };
    let z = codec::encode(&raw, &awari_egdb::rules::AWARI, Kind::Score, 8, settings).unwrap();
    let h = parse(&z).unwrap().header().clone();
    assert_eq!(h.zstd().map_or(0, |f| f.dictionary) > 0, dictionary > 0);
    (raw, z)
}

/// The sample without a dictionary (format version 1).
pub fn sample() -> &'static (Vec<u8>, Vec<u8>) {
    static S: OnceLock<(Vec<u8>, Vec<u8>)> = OnceLock::new();
    S.get_or_init(|| layer_8_sample(0))
}

/// The sample with a dictionary of 8 KiB (format version 2).
pub fn sample_dict() -> &'static (Vec<u8>, Vec<u8>) {
    static S: OnceLock<(Vec<u8>, Vec<u8>)> = OnceLock::new();
    S.get_or_init(|| layer_8_sample(8192))
}

pub fn u64_at(b: &[u8], at: usize) -> u64 {
    u64::from_le_bytes(b[at..at + 8].try_into().unwrap())
}

/// Rewrites the checksum of header and index after a mutation, as a forger
/// would, so that the parser's other checks are reached.
pub fn forge(z: &mut [u8]) {
    if z.len() < ZSTD_HEADER_BYTES {
        return;
    }
    let entries = u64_at(z, 40);
    let bs = u32::from_le_bytes(z[36..40].try_into().unwrap()) as u64;
    if bs == 0 || entries > 1 << 40 {
        return;
    }
    let mut end = ZSTD_HEADER_BYTES as u64 + 8 * (entries.div_ceil(bs) + 1);
    if u32::from_le_bytes(z[8..12].try_into().unwrap()) == 2 {
        end += u32::from_le_bytes(z[52..56].try_into().unwrap()) as u64;
    }
    if end > z.len() as u64 {
        return;
    }
    let mut h = xxhash_rust::xxh3::Xxh3::new();
    h.update(&z[..64]);
    h.update(&z[ZSTD_HEADER_BYTES..end as usize]);
    let sum = h.digest();
    z[64..72].copy_from_slice(&sum.to_le_bytes());
}

pub fn set(z: &[u8], at: usize, bytes: &[u8]) -> Vec<u8> {
    let mut z = z.to_vec();
    z[at..at + bytes.len()].copy_from_slice(bytes);
    forge(&mut z);
    z
}

/// One mutated file: parsing and reading it must give a typed error or the
/// right bytes, never a panic. Returns the parser's error, or `Ok` when the
/// file parsed (and every read of `blocks_to_read` gave the right bytes or
/// a typed error).
pub fn try_mutation(z: &[u8], raw: &[u8], blocks_to_read: &[u64]) -> Result<(), CompressError> {
    let r = catch_unwind(AssertUnwindSafe(|| {
        let t = parse(z)?;
        let bs = t.header().block_size as u64;
        for &b in blocks_to_read {
            let start = b.saturating_mul(bs);
            if let Ok(v) = t.get(start) {
                assert_eq!(Some(&(v as u8)), raw.get(start as usize), "entry {start}");
            }
            let len = (t.len().saturating_sub(start)).min(bs) as usize;
            let mut out = vec![0u8; len];
            if t.decompress_block(b, &mut out).is_ok() {
                assert_eq!(
                    Some(&out[..]),
                    raw.get(start as usize..start as usize + len),
                    "block {b}"
                );
            }
        }
        Ok(())
    }));
    r.unwrap_or_else(|_| panic!("a mutated file made the reader panic"))
}

/// The kind of a parse error, for counting: the variant, with the part or
/// field where it has one.
pub fn variant(e: &CompressError) -> String {
    match e {
        CompressError::Truncated { part, .. } => format!("Truncated({part})"),
        CompressError::BadMagic => "BadMagic".into(),
        CompressError::UnsupportedVersion(_) => "UnsupportedVersion".into(),
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
