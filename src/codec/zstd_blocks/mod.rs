//! Formats 1 and 2: each table alone, each block a zstd frame behind a
//! block index, in version 2 against a zstd dictionary stored in the file
//! (the layout is in the docs of [`crate::codec`]). This module reads and
//! checks their header fields and block index and decodes a block; the
//! encoder is [`encode_to`].

mod encode;

pub(crate) use encode::encode_steps;
pub use encode::{encode, encode_to};

use super::header::{
    check_layer, check_span, encode_prefix, kind_code, kind_of, rule_set, u32_at, u64_at,
};
use super::{CompressError, Family, Header};
use crate::format::check_compression;
use zstd::zstd_safe;

/// Bytes before the block index in versions 1 and 2.
pub const ZSTD_HEADER_BYTES: usize = 72;
/// Entries per block of versions 1 and 2 unless told otherwise (chosen
/// from the measurements in the README: random probes cost one block's
/// decompression).
pub const ZSTD_DEFAULT_BLOCK_SIZE: u32 = 4096;
/// The zstd level unless told otherwise.
pub const DEFAULT_LEVEL: i32 = 19;

/// The header fields of versions 1 and 2.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ZstdFields {
    /// The zstd level the blocks were compressed with.
    pub level: i32,
    /// Bytes of the zstd dictionary the blocks were compressed with; 0:
    /// none (and the file is written as version 1).
    pub dictionary: u32,
}

/// Bytes of header and block index of a file of version 1 or 2.
pub(super) fn index_end(h: &Header) -> u64 {
    ZSTD_HEADER_BYTES as u64 + 8 * (h.blocks() + 1)
}

/// Checks the fields that do not depend on the rest of the file.
fn check(h: &Header, z: &ZstdFields) -> Result<(), CompressError> {
    check_layer(h.layer, h.entries)?;
    check_compression(z.level, h.block_size, z.dictionary)
        .map_err(|(field, reason)| CompressError::HeaderField { field, reason })
}

/// Reads and checks the fields of a header of version `version` (1 or 2)
/// from its first bytes `b` (at least [`ZSTD_HEADER_BYTES`]; magic and
/// version already checked).
pub(super) fn read_header(b: &[u8], version: u32) -> Result<Header, CompressError> {
    let field = |field: &'static str, reason: String| CompressError::HeaderField { field, reason };
    let kind =
        kind_of(b[12]).ok_or_else(|| field("table", format!("{} is not 0, 1 or 2", b[12])))?;
    if b[13..16] != [0; 3] || (version == 1 && b[52..56] != [0; 4]) {
        return Err(field("reserved", "reserved bytes are not zero".into()));
    }
    let rules = rule_set(b)?;
    let z = ZstdFields {
        level: u32_at(b, 48) as i32,
        dictionary: if version == 1 { 0 } else { u32_at(b, 52) },
    };
    let header = Header {
        rules,
        kind,
        layer: u32_at(b, 32),
        block_size: u32_at(b, 36),
        entries: u64_at(b, 40),
        version,
        tables: 1 << b[12],
        raws: {
            let mut r = [0; 3];
            r[b[12] as usize] = u64_at(b, 56);
            r
        },
        family: Family::Zstd(z.clone()),
    };
    check(&header, &z)?;
    if version == 2 && z.dictionary == 0 {
        return Err(field(
            "dictionary",
            "version 2 files carry a dictionary, this one has 0 bytes".into(),
        ));
    }
    Ok(header)
}

/// The first 64 bytes of a header (without the checksum of header and
/// index).
fn encode_header(h: &Header, z: &ZstdFields) -> [u8; 64] {
    let mut b = [0u8; 64];
    encode_prefix(h, &mut b);
    b[12] = kind_code(h.kind);
    b[48..52].copy_from_slice(&z.level.to_le_bytes());
    b[52..56].copy_from_slice(&z.dictionary.to_le_bytes());
    b[56..64].copy_from_slice(&h.raw_xxh3().to_le_bytes());
    b
}

/// The checksum of header, index and dictionary: `xxh3-64` of bytes 0..64
/// followed by the index and the dictionary (the stored checksum itself,
/// bytes 64..72, left out).
fn meta_checksum(head: &[u8], index_and_dictionary: &[u8]) -> u64 {
    crate::codec::header::meta_checksum(head, 64, index_and_dictionary)
}

/// What a reader of a file of version 1 or 2 keeps: header, block index
/// and dictionary, and the dictionary prepared for decompression.
pub(super) struct Frames {
    /// Header, block index and dictionary (bytes `0..data_start`).
    meta: Vec<u8>,
    /// The dictionary, prepared for decompression.
    ddict: Option<zstd_safe::DDict<'static>>,
}

impl Frames {
    /// Checks the block index and the checksum of header, index and
    /// dictionary (`meta`, the file's first `h.data_start()` bytes, of
    /// `len` in all), and prepares the dictionary.
    pub(super) fn open(h: &Header, meta: Vec<u8>, len: u64) -> Result<Frames, CompressError> {
        let blocks = h.blocks();
        let data_start = h.data_start();
        let b = &meta[..];
        let index = &b[ZSTD_HEADER_BYTES..h.index_end() as usize];
        let offset = |i: u64| u64_at(index, 8 * i as usize);
        check_span(
            offset(0),
            offset(blocks),
            h,
            len,
            "the end of the block index",
        )?;
        let most = zstd_safe::compress_bound(h.block_size as usize) as u64 + 64;
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
        let found = meta_checksum(b, &b[ZSTD_HEADER_BYTES..data_start as usize]);
        if stored != found {
            return Err(CompressError::IndexChecksum {
                expected: stored,
                found,
            });
        }
        let ddict = match h.zstd().map_or(0, |z| z.dictionary) {
            0 => None,
            _ => {
                let d = &meta[h.index_end() as usize..data_start as usize];
                Some(
                    zstd_safe::DDict::try_create(d).ok_or_else(|| CompressError::HeaderField {
                        field: "dictionary",
                        reason: "zstd cannot load it".into(),
                    })?,
                )
            }
        };
        Ok(Frames { meta, ddict })
    }

    /// Where block `i`'s frame starts and ends, if the index has it.
    pub(super) fn span(&self, i: u64) -> Option<(u64, u64)> {
        let at = ZSTD_HEADER_BYTES + 8 * i as usize;
        let m = &self.meta;
        let (s, e) = (m.get(at..at + 8)?, m.get(at + 8..at + 16)?);
        Some((u64_at(s, 0), u64_at(e, 0)))
    }

    /// Decompresses one frame (with the table's dictionary, if any) into
    /// `out`, which it must fill exactly, with this thread's context `dctx`.
    pub(super) fn decode(
        &self,
        dctx: &mut Scratch,
        frame: &[u8],
        block: u64,
        out: &mut [u8],
    ) -> Result<(), CompressError> {
        let zerr = |message: String| CompressError::Zstd { block, message };
        let dctx = &mut dctx.0;
        if dctx.is_none() {
            *dctx = Some(
                zstd_safe::DCtx::try_create()
                    .ok_or_else(|| zerr("cannot create a decompression context".into()))?,
            );
        }
        let d = dctx.as_mut().expect("just made");
        let got = match &self.ddict {
            Some(dd) => d.decompress_using_ddict(out, frame, dd),
            None => d.decompress(out, frame),
        }
        .map_err(|code| zerr(zstd_safe::get_error_name(code).to_string()))?;
        if got != out.len() {
            return Err(CompressError::BlockLength {
                block,
                expected: out.len() as u64,
                found: got as u64,
            });
        }
        Ok(())
    }
}

/// A thread's decompression context, made at its first block.
pub(super) struct Scratch(Option<zstd_safe::DCtx<'static>>);

impl Scratch {
    /// No context yet.
    pub(super) const fn new() -> Scratch {
        Scratch(None)
    }
}

#[cfg(test)]
mod tests {
    use super::encode;
    use crate::codec::{CompressError, CompressedTable, Settings};
    use crate::format::{Kind, MAX_BLOCK_SIZE};
    use crate::index::layer_size;
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
