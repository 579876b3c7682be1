//! Compressed tables under damage: `--remove-raw` keeps the originals when
//! a check fails, damaged, truncated, missing or swapped compressed files
//! are typed probe errors (never a panic) and failed checks (status 1), and
//! the file format's parser gives a typed error for every damaged header
//! field and for a few million random mutations of headers, block indexes,
//! dictionaries and blocks, and random files, in format versions 1 and 2
//! and in version 3 (its models and stream lengths too, both forms); no
//! damaged version 3 block decodes to other bytes than the raw table's.
//! The good path is in `compress_roundtrip.rs`.

mod common;

use awari_egdb::codec::{
    self, v3, Bytes, CompressError, CompressedTable, Settings, ZSTD_HEADER_BYTES,
};
use awari_egdb::format::{Kind, MAX_BLOCK_SIZE};
use awari_egdb::index::unrank;
use awari_egdb::pack::{self, Action, CompressOptions, Quiet};
use awari_egdb::probe::Database;
use awari_egdb::store::Manifest;
use awari_egdb::Error;
use common::compress::{compress_opts, copy, parse, raw_dir, raw_table, zst_dir, KINDS};
use common::{awari, s, scratch};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use std::collections::BTreeMap;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::OnceLock;

#[test]
fn remove_raw_keeps_the_originals_when_a_check_fails() {
    let dir = copy("awari-compress-keep-");
    // A damaged raw table: it is not compressed, and its layer keeps every
    // raw table.
    let victim = dir.join("lower.12");
    let mut b = std::fs::read(&victim).unwrap();
    b[1000] ^= 0x40;
    std::fs::write(&victim, &b).unwrap();
    let out = awari(
        &["compress", "--db", s(&dir), "--level", "1", "--remove-raw"],
        None,
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("lower.12"), "{stderr}");
    for kind in KINDS {
        assert!(dir.join(kind.file_name(12)).exists());
        assert!(dir.join(kind.file_name(13)).exists());
        assert!(!dir.join(kind.file_name(11)).exists(), "layer 11 was done");
    }
    let m = Manifest::load(&dir).unwrap().unwrap();
    assert!(m.compressed("lower.12").is_none());
    assert!(!dir.join("lower.12.zst").exists());
    assert!(!dir.join("lower.12.zst.tmp").exists());

    // A damaged compressed file found by a later run: compressed again from
    // the raw table before the raw table goes.
    let dir = copy("awari-compress-redo-");
    let opts = CompressOptions {
        layers: 9..=9,
        ..compress_opts(false)
    };
    pack::compress_folder(&dir, &opts, &Quiet).unwrap();
    let zst = dir.join("upper.9.zst");
    let mut z = std::fs::read(&zst).unwrap();
    let last = z.len() - 10;
    z[last] ^= 1;
    std::fs::write(&zst, &z).unwrap();
    let r = pack::compress_folder(
        &dir,
        &CompressOptions {
            remove_raw: true,
            ..opts.clone()
        },
        &Quiet,
    )
    .unwrap();
    assert_eq!(r.removed.len(), 3);
    let redone: Vec<_> = r.files.iter().map(|f| (f.raw.as_str(), f.action)).collect();
    assert!(
        redone.contains(&("upper.9", Action::Compressed)),
        "{redone:?}"
    );
    let db = Database::open(&dir).unwrap();
    assert_eq!(
        db.table(9, Kind::Upper).unwrap().unwrap(),
        &raw_table(Kind::Upper, 9)[..]
    );
    // Damaged again, now without a raw table to fall back on: an error,
    // nothing else removed or changed.
    std::fs::write(&zst, &z).unwrap();
    let e = pack::compress_folder(&dir, &opts, &Quiet).unwrap_err();
    assert!(e.is_damage(), "{e}");
    assert!(matches!(e, Error::Checksum { .. }), "{e:?}");
}

#[test]
fn damaged_compressed_files_are_typed_probe_errors() {
    let dir = copy("awari-compress-damaged-");
    let opts = CompressOptions {
        layers: 8..=8,
        ..compress_opts(true)
    };
    pack::compress_folder(&dir, &opts, &Quiet).unwrap();
    let zst = dir.join("scores.8.zst");
    let good = std::fs::read(&zst).unwrap();
    let p = unrank(8, 100).unwrap();
    // A flipped byte in the block index: the header's own checksum on
    // opening, and the file's checksum in the manifest when asked for.
    let mut bad = good.clone();
    bad[ZSTD_HEADER_BYTES + 3] ^= 1;
    std::fs::write(&zst, &bad).unwrap();
    match Database::open(&dir).unwrap().score(&p) {
        Err(Error::Compressed { path, source }) => {
            assert_eq!(path, zst);
            assert!(
                matches!(
                    source,
                    CompressError::IndexChecksum { .. } | CompressError::OffsetOutOfRange { .. }
                ),
                "{source:?}"
            );
        }
        r => panic!("want a header checksum error, got {r:?}"),
    }
    let db = Database::open(&dir).unwrap().verify_on_load(true);
    match db.score(&p) {
        Err(Error::Checksum { path, .. }) => assert_eq!(path, zst),
        r => panic!("want a checksum error, got {r:?}"),
    }
    match Database::open(&dir).unwrap().verify_layer(8) {
        Err(e) if e.is_damage() => assert!(e.to_string().contains("scores.8.zst"), "{e}"),
        r => panic!("verify_layer: want a damaged-table error, got {r:?}"),
    }
    // Truncated: the size in the manifest.
    std::fs::write(&zst, &good[..good.len() - 1]).unwrap();
    match Database::open(&dir).unwrap().score(&p) {
        Err(Error::Size { .. }) => {}
        r => panic!("want a size error, got {r:?}"),
    }
    // Missing: an I/O error naming the file.
    std::fs::remove_file(&zst).unwrap();
    let e = Database::open(&dir).unwrap().score(&p).unwrap_err();
    assert!(e.to_string().contains("scores.8.zst"), "{e}");
    // Another table's file under this name: its header says so.
    std::fs::copy(dir.join("lower.8.zst"), &zst).unwrap();
    let mut m = Manifest::load(&dir).unwrap().unwrap();
    let lower = m.compressed("lower.8").unwrap().clone();
    let mut c = m.compressed("scores.8").unwrap().clone();
    c.bytes = lower.bytes;
    c.xxh3 = lower.xxh3;
    m.put_compressed(c);
    m.store(&dir).unwrap();
    match Database::open(&dir).unwrap().score(&p) {
        Err(Error::Compressed {
            source: CompressError::Mismatch { field: "table", .. },
            ..
        }) => {}
        r => panic!("want a table mismatch, got {r:?}"),
    }
    // A manifest that lists a compressed copy of a table it does not have.
    let mut m = Manifest::load(&dir).unwrap().unwrap();
    m.compressed[0].raw = "scores.99".into();
    m.store(&dir).unwrap();
    assert!(matches!(
        Database::open(&dir),
        Err(Error::ForeignManifest { .. })
    ));
}

#[test]
fn verify_and_check_fail_with_status_1_on_a_damaged_compressed_table() {
    // A compressed-only folder whose scores.9.zst has one damaged byte: a
    // damaged table is a failed check (1), not bad input (2).
    let dir = scratch("awari-compress-damaged-");
    for e in std::fs::read_dir(zst_dir()).unwrap() {
        let e = e.unwrap();
        if e.file_name() != "build.lock" {
            std::fs::copy(e.path(), dir.join(e.file_name())).unwrap();
        }
    }
    let zst = dir.join("scores.9.zst");
    let mut z = std::fs::read(&zst).unwrap();
    let mid = z.len() / 2;
    z[mid] ^= 0x10;
    std::fs::write(&zst, &z).unwrap();
    for args in [
        vec!["check", "--db", s(&dir)],
        vec!["verify", "--db", s(&dir), "--oracle", s(raw_dir())],
    ] {
        let out = awari(&args, None);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{args:?}: {stderr}");
        assert!(stderr.contains("scores.9.zst"), "{args:?}: {stderr}");
    }
}

// ---------------------------------------------------------------------------
// The file format under bad input.

/// Layer 8's scores (75,504 entries) in 295 blocks of 256, compressed with
/// a dictionary of `dictionary` bytes (0: none): small enough to mutate
/// millions of times.
fn layer_8_sample(dictionary: u32) -> (Vec<u8>, Vec<u8>) {
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
fn sample() -> &'static (Vec<u8>, Vec<u8>) {
    static S: OnceLock<(Vec<u8>, Vec<u8>)> = OnceLock::new();
    S.get_or_init(|| layer_8_sample(0))
}

/// The sample with a dictionary of 8 KiB (format version 2).
fn sample_dict() -> &'static (Vec<u8>, Vec<u8>) {
    static S: OnceLock<(Vec<u8>, Vec<u8>)> = OnceLock::new();
    S.get_or_init(|| layer_8_sample(8192))
}

fn u64_at(b: &[u8], at: usize) -> u64 {
    u64::from_le_bytes(b[at..at + 8].try_into().unwrap())
}

/// Rewrites the checksum of header and index after a mutation, as a forger
/// would, so that the parser's other checks are reached.
fn forge(z: &mut [u8]) {
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

fn set(z: &[u8], at: usize, bytes: &[u8]) -> Vec<u8> {
    let mut z = z.to_vec();
    z[at..at + bytes.len()].copy_from_slice(bytes);
    forge(&mut z);
    z
}

#[test]
fn each_damaged_header_field_has_its_typed_error() {
    let (raw, z) = sample();
    let t = parse(z).unwrap();
    assert_eq!(t.decompress_all().unwrap(), *raw);
    let blocks = t.blocks();
    let data_start = ZSTD_HEADER_BYTES + 8 * (blocks as usize + 1);
    type Check = fn(&CompressError) -> bool;
    let cases: Vec<(&str, Vec<u8>, Check)> = vec![
        ("empty", vec![], |e| {
            matches!(e, CompressError::Truncated { part: "header", .. })
        }),
        ("short header", z[..40].to_vec(), |e| {
            matches!(e, CompressError::Truncated { part: "header", .. })
        }),
        ("magic", set(z, 0, b"AWARIZSX"), |e| {
            *e == CompressError::BadMagic
        }),
        ("version", set(z, 8, &5u32.to_le_bytes()), |e| {
            *e == CompressError::UnsupportedVersion(5)
        }),
        // Version 3's header has its tables byte where this one has its
        // table (0, not a set of tables).
        ("version 3", set(z, 8, &3u32.to_le_bytes()), |e| {
            matches!(
                e,
                CompressError::HeaderField {
                    field: "tables",
                    ..
                }
            )
        }),
        (
            "version 2 without a dictionary",
            set(z, 8, &2u32.to_le_bytes()),
            |e| {
                matches!(
                    e,
                    CompressError::HeaderField {
                        field: "dictionary",
                        ..
                    }
                )
            },
        ),
        ("dictionary in version 1", set(z, 52, &[1]), |e| {
            matches!(
                e,
                CompressError::HeaderField {
                    field: "reserved",
                    ..
                }
            )
        }),
        ("table", set(z, 12, &[3]), |e| {
            matches!(e, CompressError::HeaderField { field: "table", .. })
        }),
        ("reserved", set(z, 13, &[1]), |e| {
            matches!(
                e,
                CompressError::HeaderField {
                    field: "reserved",
                    ..
                }
            )
        }),
        ("rule set", set(z, 16, b"awari-vu2003"), |e| {
            matches!(
                e,
                CompressError::HeaderField {
                    field: "rule set",
                    ..
                }
            )
        }),
        ("layer 47", set(z, 32, &47u32.to_le_bytes()), |e| {
            matches!(e, CompressError::HeaderField { field: "layer", .. })
        }),
        ("layer 49", set(z, 32, &49u32.to_le_bytes()), |e| {
            matches!(e, CompressError::HeaderField { field: "layer", .. })
        }),
        ("other layer", set(z, 32, &9u32.to_le_bytes()), |e| {
            matches!(
                e,
                CompressError::HeaderField {
                    field: "entries",
                    ..
                }
            )
        }),
        ("entries", set(z, 40, &u64::MAX.to_le_bytes()), |e| {
            matches!(
                e,
                CompressError::HeaderField {
                    field: "entries",
                    ..
                }
            )
        }),
        ("block size 0", set(z, 36, &0u32.to_le_bytes()), |e| {
            matches!(
                e,
                CompressError::HeaderField {
                    field: "block size",
                    ..
                }
            )
        }),
        (
            "block size too large",
            set(z, 36, &(MAX_BLOCK_SIZE + 1).to_le_bytes()),
            |e| {
                matches!(
                    e,
                    CompressError::HeaderField {
                        field: "block size",
                        ..
                    }
                )
            },
        ),
        ("level", set(z, 48, &1000i32.to_le_bytes()), |e| {
            matches!(e, CompressError::HeaderField { field: "level", .. })
        }),
        (
            "block size 1: index past the end",
            set(z, 36, &1u32.to_le_bytes()),
            |e| {
                matches!(
                    e,
                    CompressError::Truncated {
                        part: "block index",
                        ..
                    }
                )
            },
        ),
        (
            "truncated index",
            z[..ZSTD_HEADER_BYTES + 100].to_vec(),
            |e| {
                matches!(
                    e,
                    CompressError::Truncated {
                        part: "block index",
                        ..
                    }
                )
            },
        ),
        ("truncated blocks", z[..z.len() - 1].to_vec(), |e| {
            matches!(e, CompressError::Truncated { part: "blocks", .. })
        }),
        ("trailing bytes", [&z[..], &[0u8]].concat(), |e| {
            matches!(e, CompressError::OffsetOutOfRange { .. })
        }),
        (
            "first offset",
            set(z, ZSTD_HEADER_BYTES, &(data_start as u64 + 1).to_le_bytes()),
            |e| matches!(e, CompressError::OffsetOutOfRange { block: 0, .. }),
        ),
        (
            "decreasing offset",
            set(
                z,
                ZSTD_HEADER_BYTES + 8 * 5,
                &(data_start as u64).to_le_bytes(),
            ),
            |e| matches!(e, CompressError::OffsetOutOfRange { block: 5, .. }),
        ),
        (
            "index checksum",
            z[..]
                .iter()
                .enumerate()
                .map(|(i, &b)| if i == 64 { b ^ 1 } else { b })
                .collect(),
            |e| matches!(e, CompressError::IndexChecksum { .. }),
        ),
    ];
    for (what, bytes, check) in cases {
        match parse(&bytes) {
            Ok(_) => panic!("{what}: parsed"),
            Err(e) => assert!(check(&e), "{what}: unexpected error {e:?}"),
        }
    }
    // A shifted offset (index checksum forged): the blocks around it fail
    // to decompress, with their number.
    let mut shifted = z.clone();
    let at = ZSTD_HEADER_BYTES + 8 * 7;
    let off = u64_at(z, at) + 3;
    shifted[at..at + 8].copy_from_slice(&off.to_le_bytes());
    forge(&mut shifted);
    let t = parse(&shifted).unwrap();
    let mut out = vec![0u8; 256];
    assert!(matches!(
        t.decompress_block(6, &mut out),
        Err(CompressError::Zstd { block: 6, .. })
    ));
    assert!(matches!(
        t.decompress_block(7, &mut out),
        Err(CompressError::Zstd { block: 7, .. })
    ));
    assert!(t.decompress_block(8, &mut out).is_ok());
    assert!(matches!(
        t.get(6 * 256 + 5),
        Err(CompressError::Zstd { block: 6, .. })
    ));
    assert!(t.decompress_all().is_err());
    // A damaged frame: zstd's checksum of the block.
    let mut flipped = z.clone();
    let at = u64_at(z, ZSTD_HEADER_BYTES + 8 * 20) as usize + 8;
    flipped[at] ^= 0x10;
    let t = parse(&flipped).unwrap();
    assert!(matches!(
        t.get(20 * 256),
        Err(CompressError::Zstd { block: 20, .. })
    ));
}

/// One mutated file: parsing and reading it must give a typed error or the
/// right bytes, never a panic. Returns the parser's error, or `Ok` when the
/// file parsed (and every read of `blocks_to_read` gave the right bytes or
/// a typed error).
fn try_mutation(z: &[u8], raw: &[u8], blocks_to_read: &[u64]) -> Result<(), CompressError> {
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
fn variant(e: &CompressError) -> String {
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
fn rounds(release: usize) -> usize {
    if cfg!(debug_assertions) {
        release / 20
    } else {
        release
    }
}

#[test]
fn millions_of_random_header_and_index_mutations_never_panic() {
    let (raw, z) = sample();
    mutate_header_and_index(raw, z, 0x2a7a1, rounds(3_000_000));
}

#[test]
fn a_million_random_header_index_and_dictionary_mutations_never_panic() {
    let (raw, z) = sample_dict();
    let h = parse(z).unwrap().header().clone();
    assert!(h.data_start() > h.index_end());
    mutate_header_and_index(raw, z, 0x2a7a3, rounds(1_000_000));
    // A damaged dictionary byte: caught by the checksum of header, index
    // and dictionary.
    let mut m = z.clone();
    m[h.index_end() as usize + 100] ^= 4;
    assert!(matches!(
        parse(&m),
        Err(CompressError::IndexChecksum { .. })
    ));
    // A version 2 header too large a dictionary.
    let big = set(
        z,
        52,
        &(awari_egdb::format::MAX_DICTIONARY + 1).to_le_bytes(),
    );
    assert!(matches!(
        parse(&big),
        Err(CompressError::HeaderField {
            field: "dictionary",
            ..
        })
    ));
}

/// `total` rounds of 1 to 4 random bytes changed among header, index (and
/// dictionary) of `z`, every other round with a forged checksum.
fn mutate_header_and_index(raw: &[u8], z: &[u8], seed: u64, total: usize) {
    let data_start = parse(z).unwrap().header().data_start() as usize;
    let mut rng = StdRng::seed_from_u64(seed);
    let mut m = z.to_vec();
    let (mut parsed, mut forged_parsed) = (0usize, 0usize);
    // The parse errors of the rounds without and with a forged checksum.
    let mut errors: [BTreeMap<String, usize>; 2] = Default::default();
    for round in 0..total {
        // 1 to 4 random bytes of header or index changed: random values,
        // single bits, or small changes to an offset.
        let mut changed = [0usize; 4];
        let k = rng.gen_range(1..=4);
        for c in changed.iter_mut().take(k) {
            let at = rng.gen_range(0..data_start);
            *c = at;
            m[at] = match rng.gen_range(0..3) {
                0 => rng.gen(),
                1 => m[at] ^ (1 << rng.gen_range(0..8)),
                _ => m[at].wrapping_add(rng.gen_range(1..4)),
            };
        }
        if changed.iter().take(k).all(|&a| m[a] == z[a]) {
            continue; // no change after all
        }
        let forged = round % 2 == 1;
        if forged {
            forge(&mut m);
        }
        // Read the blocks an index change could have moved, and one more.
        let at = changed[0];
        let near = if at >= ZSTD_HEADER_BYTES {
            ((at - ZSTD_HEADER_BYTES) / 8) as u64
        } else {
            0
        };
        let blocks = [near.saturating_sub(1), near, rng.gen_range(0..300)];
        match try_mutation(&m, raw, &blocks) {
            Ok(()) => {
                parsed += 1;
                forged_parsed += usize::from(forged);
            }
            Err(e) => *errors[usize::from(forged)].entry(variant(&e)).or_default() += 1,
        }
        for &at in changed.iter().take(k) {
            m[at] = z[at];
        }
        m[64..72].copy_from_slice(&z[64..72]);
    }
    eprintln!(
        "{total} mutations of header, index and dictionary: {parsed} parsed ({forged_parsed} with a forged checksum)"
    );
    eprintln!("  errors without a forged checksum: {:?}", errors[0]);
    eprintln!("  errors with a forged checksum: {:?}", errors[1]);
    // Without a forged checksum, a changed header or index never parses.
    assert_eq!(parsed, forged_parsed);
    // With a forged checksum the mutations reach the other checks: the
    // checksum never finds them (it is right), the checks of header fields,
    // magic, version and offsets do, and of many kinds.
    let forged = &errors[1];
    assert!(!forged.contains_key("IndexChecksum"), "{forged:?}");
    assert!(
        errors[0].get("IndexChecksum").is_some_and(|&k| k > 0),
        "{:?}",
        errors[0]
    );
    for kind in ["BadMagic", "UnsupportedVersion", "OffsetOutOfRange"] {
        assert!(
            forged.get(kind).is_some_and(|&k| k > 0),
            "no forged mutation reached {kind}: {forged:?}"
        );
    }
    // Header fields: table, layer, entries, block size, level, rule set,
    // reserved, dictionary.
    let header_fields = forged
        .keys()
        .filter(|k| k.starts_with("HeaderField"))
        .count();
    assert!(header_fields >= 5, "{forged:?}");
}

#[test]
fn random_truncations_and_block_mutations_never_panic() {
    let (raw, z) = sample();
    let t = parse(z).unwrap();
    let data_start = t.header().data_start() as usize;
    let blocks = t.blocks();
    let mut rng = StdRng::seed_from_u64(0x2a7a2);
    let total = rounds(300_000);
    for _ in 0..total {
        let len = rng.gen_range(0..z.len());
        assert!(
            try_mutation(&z[..len], raw, &[0]).is_err(),
            "truncated to {len} parsed"
        );
    }
    // Damaged block bytes: the index still parses; every read gives an
    // error or the right bytes.
    let mut m = z.clone();
    for _ in 0..rounds(100_000) {
        let at = rng.gen_range(data_start..z.len());
        m[at] = rng.gen();
        let block = (0..blocks)
            .rev()
            .find(|&b| u64_at(z, ZSTD_HEADER_BYTES + 8 * b as usize) <= at as u64)
            .unwrap();
        if let Err(e) = try_mutation(&m, raw, &[block]) {
            panic!("a damaged byte {at} in block {block} broke the index: {e:?}");
        }
        m[at] = z[at];
    }
    // Random bytes after a valid header (forged checksum), and random
    // files: every one is a typed error (a random file that parsed would
    // have had its reads checked too), counted by kind.
    let mut outcomes = [BTreeMap::<String, usize>::new(), BTreeMap::new()];
    for _ in 0..rounds(100_000) {
        let len = rng.gen_range(0..4000);
        let mut r: Vec<u8> = (0..len).map(|_| rng.gen()).collect();
        let header = len >= 64 && rng.gen_bool(0.5);
        if header {
            r[..64].copy_from_slice(&z[..64]);
            forge(&mut r);
        }
        let outcome = match try_mutation(&r, raw, &[0, 1]) {
            Ok(()) => "parsed".to_string(),
            Err(e) => variant(&e),
        };
        *outcomes[usize::from(header)].entry(outcome).or_default() += 1;
    }
    let [random, headed] = &outcomes;
    eprintln!("random files: {random:?}; random bytes after a valid header: {headed:?}");
    // Random bytes are never taken for a table: a random file has no
    // magic (or not even a header)...
    for (kind, k) in random {
        assert!(
            kind == "BadMagic" || kind == "Truncated(header)",
            "{k} random file(s): {kind}"
        );
    }
    assert!(random.get("BadMagic").is_some_and(|&k| k > 0), "{random:?}");
    // ... and behind a valid header its block index is found wrong.
    assert!(!headed.contains_key("parsed"), "{headed:?}");
    for kind in ["Truncated(block index)", "Truncated(blocks)"] {
        assert!(
            headed.get(kind).is_some_and(|&k| k > 0),
            "{kind}: {headed:?}"
        );
    }
}

// ---------------------------------------------------------------------------
// Format version 3 under bad input: every damaged header field, index entry,
// model and block is a typed error, and no damaged block ever decodes to
// other bytes than the raw table's.

type V3Sample = ([Vec<u8>; 3], Vec<u8>);

/// Layer 8 (75,504 entries) in format version 3, blocks of 64 entries:
/// 1,180 blocks in 19 super-blocks of the coarse index, small enough to
/// mutate millions of times. The raw tables (scores, lower, upper) and the
/// file: the full form, or the scores alone.
fn layer_8_v3(full: bool) -> V3Sample {
    let raws = KINDS.map(|k| raw_table(k, 8));
    let t = v3::TableSet {
        scores: &raws[0],
        envelope: full.then(|| (&raws[1][..], &raws[2][..])),
    };
    let z = v3::encode(t, &awari_egdb::rules::AWARI, 8, 64).unwrap();
    let h = parse(&z).unwrap().header().clone();
    assert_eq!((h.version, h.block_size, h.blocks()), (3, 64, 1180));
    assert_eq!(h.tables, if full { v3::FULL } else { v3::SCORES_ONLY });
    (raws, z)
}

/// The full form: scores, lower and upper of layer 8.
fn sample_v3() -> &'static V3Sample {
    static S: OnceLock<V3Sample> = OnceLock::new();
    S.get_or_init(|| layer_8_v3(true))
}

/// The scores-only form of layer 8.
fn sample_v3_scores() -> &'static V3Sample {
    static S: OnceLock<V3Sample> = OnceLock::new();
    S.get_or_init(|| layer_8_v3(false))
}

fn u32_at(b: &[u8], at: usize) -> u32 {
    u32::from_le_bytes(b[at..at + 4].try_into().unwrap())
}

/// Where the parts of a sound version 3 file start (file offsets).
#[derive(Clone, Copy, Debug)]
struct V3Parts {
    /// The coarse index (after the 88 bytes of the header).
    index: usize,
    /// The stream lengths: 2 bytes per stream, `streams` per block.
    lens: usize,
    /// The models.
    models: usize,
    /// The first block.
    data: usize,
    blocks: u64,
    streams: usize,
}

fn v3_parts(z: &[u8]) -> V3Parts {
    let h = parse(z).unwrap().header().clone();
    let blocks = h.blocks();
    V3Parts {
        index: v3::V3_HEADER_BYTES,
        lens: v3::V3_HEADER_BYTES + 8 * (blocks.div_ceil(v3::SUPER) as usize + 1),
        models: h.index_end() as usize,
        data: h.data_start() as usize,
        blocks,
        streams: v3::streams(h.tables) as usize,
    }
}

impl V3Parts {
    /// Where the length of stream `j` (0 scores, 1 envelope) of block
    /// `block` is.
    fn len_at(&self, block: u64, j: usize) -> usize {
        self.lens + 2 * (block as usize * self.streams + j)
    }

    /// Where the coarse index's entry `s` (the start of block `64 s`) is.
    fn super_at(&self, s: usize) -> usize {
        self.index + 8 * s
    }

    /// The block whose index entries hold byte `at` of header and index
    /// (block 0 for the header and the models).
    fn block_near(&self, at: usize) -> u64 {
        if (self.lens..self.models).contains(&at) {
            ((at - self.lens) / (2 * self.streams)) as u64
        } else if (self.index..self.lens).contains(&at) {
            (((at - self.index) / 8) as u64 * v3::SUPER).min(self.blocks - 1)
        } else {
            0
        }
    }
}

/// Every stream of a sound version 3 file, in file order: its block,
/// whether it is the envelope stream, and the bytes it takes.
fn v3_streams(z: &[u8]) -> Vec<(u64, bool, std::ops::Range<usize>)> {
    let p = v3_parts(z);
    let mut at = p.data;
    let mut out = Vec::new();
    for b in 0..p.blocks {
        for j in 0..p.streams {
            let l = u16::from_le_bytes([z[p.len_at(b, j)], z[p.len_at(b, j) + 1]]) as usize;
            out.push((b, j == 1, at..at + l));
            at += l;
        }
    }
    assert_eq!(at, z.len());
    out
}

/// [`forge`] for version 3: rewrites the checksum at bytes 80..88 (of
/// bytes 0..80, then the index and models as the mutated header lays them
/// out), so that the parser's other checks are reached.
fn forge3(z: &mut [u8]) {
    if z.len() < v3::V3_HEADER_BYTES {
        return;
    }
    let entries = u64_at(z, 40);
    let bs = u32_at(z, 36) as u64;
    if bs == 0 || entries > 1 << 40 {
        return;
    }
    let blocks = entries.div_ceil(bs);
    let streams = if z[12] == v3::FULL { 2 } else { 1 };
    let end = v3::V3_HEADER_BYTES as u64
        + 8 * (blocks.div_ceil(v3::SUPER) + 1)
        + 2 * streams * blocks
        + u32_at(z, 48) as u64;
    if end > z.len() as u64 {
        return;
    }
    let mut h = xxhash_rust::xxh3::Xxh3::new();
    h.update(&z[..80]);
    h.update(&z[v3::V3_HEADER_BYTES..end as usize]);
    let sum = h.digest();
    z[80..88].copy_from_slice(&sum.to_le_bytes());
}

/// `z` with `bytes` at `at`, the checksum forged.
fn set3(z: &[u8], at: usize, bytes: &[u8]) -> Vec<u8> {
    let mut z = z.to_vec();
    z[at..at + bytes.len()].copy_from_slice(bytes);
    forge3(&mut z);
    z
}

/// `z` with the stream lengths `moves` changed by (block, stream, bytes),
/// the checksum forged.
fn move_lens(z: &[u8], moves: &[(u64, usize, i32)]) -> Vec<u8> {
    let p = v3_parts(z);
    let mut z = z.to_vec();
    for &(b, j, d) in moves {
        let at = p.len_at(b, j);
        let l = u16::from_le_bytes([z[at], z[at + 1]]) as i32 + d;
        z[at..at + 2].copy_from_slice(&u16::try_from(l).unwrap().to_le_bytes());
    }
    forge3(&mut z);
    z
}

/// `z` with its models replaced by `models`: the blocks moved along, the
/// models' length and the coarse index changed to match, the checksum
/// forged.
fn with_models(z: &[u8], models: &[u8]) -> Vec<u8> {
    let p = v3_parts(z);
    let mut out = [&z[..p.models], models, &z[p.data..]].concat();
    out[48..52].copy_from_slice(&(models.len() as u32).to_le_bytes());
    let shift = models.len() as i64 - (p.data - p.models) as i64;
    for at in (p.index..p.lens).step_by(8) {
        let v = (u64_at(&out, at) as i64 + shift) as u64;
        out[at..at + 8].copy_from_slice(&v.to_le_bytes());
    }
    forge3(&mut out);
    out
}

/// One LEB128 number at `at` of `b`: its bytes and value.
fn leb128(b: &[u8], at: usize) -> (usize, u64) {
    let mut v = 0u64;
    let mut k = 0;
    loop {
        let byte = b[at + k];
        v |= ((byte & 0x7f) as u64) << (7 * k);
        k += 1;
        if byte & 0x80 == 0 {
            return (k, v);
        }
    }
}

/// A number of the models of a version 3 file (see `codec`'s docs).
#[derive(Clone, Copy, Debug)]
struct ModelNumber {
    /// `contexts`, `context gap`, `symbols`, `symbol gap` or `frequency`
    /// (each frequency less one).
    what: &'static str,
    /// Whether it is the first of its kind in its model or context (a
    /// first gap may be 0).
    first: bool,
    at: usize,
    bytes: usize,
    value: u64,
}

/// The numbers of the models of the sound version 3 file `z`, in order.
fn model_numbers(z: &[u8]) -> Vec<ModelNumber> {
    let p = v3_parts(z);
    let mut at = p.models;
    let mut out = Vec::new();
    let mut num = |what, first, at: &mut usize| {
        let (bytes, value) = leb128(z, *at);
        out.push(ModelNumber {
            what,
            first,
            at: *at,
            bytes,
            value,
        });
        *at += bytes;
        value
    };
    while at < p.data {
        let rows = num("contexts", true, &mut at);
        for r in 0..rows {
            num("context gap", r == 0, &mut at);
            let k = num("symbols", true, &mut at);
            for j in 0..k {
                num("symbol gap", j == 0, &mut at);
                num("frequency", j == 0, &mut at);
            }
        }
    }
    assert_eq!(at, p.data);
    out
}

/// A file read through `Bytes::read_at` alone, as a table read with
/// `pread` is: the reader's other path (frames read into a buffer).
struct Pread<'a>(&'a [u8]);

impl Bytes for Pread<'_> {
    fn total_len(&self) -> u64 {
        self.0.len() as u64
    }
    fn read_at(&self, at: u64, out: &mut [u8]) -> std::io::Result<()> {
        Bytes::read_at(self.0, at, out)
    }
}

/// The outcomes of reads, counted: `right`, or the error's [`variant`].
type Outcomes = BTreeMap<String, usize>;

/// Reads blocks `blocks` of every table `t` holds (whole, and one entry
/// through the cache): each gives the bytes of `raws` or a typed error.
fn read_v3_blocks<B: Bytes>(
    mut t: CompressedTable<B>,
    raws: &[Vec<u8>; 3],
    blocks: &[u64],
    reads: &mut Outcomes,
) {
    let h = t.header().clone();
    let bs = h.block_size as u64;
    for (k, kind) in KINDS.into_iter().enumerate() {
        if !h.holds(kind) {
            assert!(
                matches!(
                    t.serve(kind),
                    Err(CompressError::Mismatch { field: "table", .. })
                ),
                "serves {kind:?}, which it does not hold"
            );
            continue;
        }
        t.serve(kind).expect("a table the file holds");
        let raw = &raws[k];
        for &b in blocks.iter().filter(|&&b| b < h.blocks()) {
            let start = b * bs;
            let len = h.block_len(b);
            let mut out = vec![0u8; len];
            let whole = t.decompress_block(b, &mut out);
            let outcome = match &whole {
                Ok(()) => {
                    assert!(
                        raw.get(start as usize..start as usize + len) == Some(&out[..]),
                        "{kind:?} block {b} decoded to wrong bytes"
                    );
                    "right".to_string()
                }
                Err(e) => variant(e),
            };
            *reads.entry(outcome).or_default() += 1;
            // One entry through the per-thread cache: the same outcome.
            let g = start + (b * 7919) % len as u64;
            match t.get(g) {
                Ok(v) => {
                    assert_eq!(raw.get(g as usize), Some(&(v as u8)), "{kind:?} entry {g}");
                    assert!(
                        whole.is_ok(),
                        "{kind:?} block {b}: {whole:?}, entry {g} read"
                    );
                }
                Err(e) => assert_eq!(Err(e), whole, "{kind:?} entry {g}"),
            }
        }
    }
}

/// One damaged version 3 file (in memory or, with `pread`, read through
/// [`Pread`]): parsing gives a typed error, or a table whose every read of
/// `blocks` (of each table it holds) gives the right bytes or a typed
/// error, counted in `reads`. Never a panic.
fn try_mutation_v3(
    z: &[u8],
    raws: &[Vec<u8>; 3],
    blocks: &[u64],
    pread: bool,
    reads: &mut Outcomes,
) -> Result<(), CompressError> {
    let r = catch_unwind(AssertUnwindSafe(|| {
        if pread {
            read_v3_blocks(CompressedTable::parse(Pread(z))?, raws, blocks, reads);
        } else {
            read_v3_blocks(parse(z)?, raws, blocks, reads);
        }
        Ok(())
    }));
    r.unwrap_or_else(|_| panic!("a damaged version 3 file made the reader panic"))
}

/// Parses `z` from memory and through [`Pread`]: the same outcome.
fn parse_both(z: &[u8]) -> Result<(), CompressError> {
    let a = parse(z).map(|_| ());
    let b = CompressedTable::parse(Pread(z)).map(|_| ());
    assert_eq!(a, b, "in memory and through read_at");
    a
}

#[test]
fn each_damaged_v3_header_field_has_its_typed_error() {
    let (raws, z) = sample_v3();
    let (_, zs) = sample_v3_scores();
    // The good files, table by table.
    for (kind, raw) in KINDS.into_iter().zip(raws) {
        let mut t = parse(z).unwrap();
        t.serve(kind).unwrap();
        assert_eq!(t.decompress_all().unwrap(), *raw);
        t.verify(Some(raw), &|_| {}).unwrap();
        let mut t = CompressedTable::parse(Pread(z)).unwrap();
        t.serve(kind).unwrap();
        t.verify(Some(raw), &|_| {}).unwrap();
    }
    let mut t = parse(zs).unwrap();
    assert_eq!(t.decompress_all().unwrap(), raws[0]);
    for kind in [Kind::Lower, Kind::Upper] {
        assert!(matches!(
            t.serve(kind),
            Err(CompressError::Mismatch { field: "table", .. })
        ));
    }
    let p = v3_parts(z);
    let ps = v3_parts(zs);
    let len = z.len() as u64;
    let sup = |z: &[u8], s: usize| u64_at(z, p.super_at(s));
    let stream_len =
        |b: u64, j: usize| u16::from_le_bytes([z[p.len_at(b, j)], z[p.len_at(b, j) + 1]]);
    let numbers = model_numbers(z);
    // The first model number of a kind, one byte long, that `ok` accepts.
    let number = |what: &str, first: bool, ok: &dyn Fn(u64) -> bool| {
        *numbers
            .iter()
            .find(|n| n.what == what && n.first == first && n.bytes == 1 && ok(n.value))
            .unwrap_or_else(|| panic!("no {what} in the models"))
    };
    let models = &z[p.models..p.data];
    // A header field error of `name`; one of the models that says `what`.
    let field_is = |e: &CompressError, name: &str| match e {
        CompressError::HeaderField { field, .. } => *field == name,
        _ => false,
    };
    let models_say = |e: &CompressError, what: &str| match e {
        CompressError::HeaderField { field, reason } => *field == "models" && reason.contains(what),
        _ => false,
    };
    type Check<'a> = Box<dyn Fn(&CompressError) -> bool + 'a>;
    let field = |name: &'static str| -> Check { Box::new(move |e| field_is(e, name)) };
    let model = |what: &'static str| -> Check { Box::new(move |e| models_say(e, what)) };
    let mut cases: Vec<(String, Vec<u8>, Check)> = vec![
        (
            "header cut at 80 bytes".into(),
            z[..80].to_vec(),
            Box::new(|e| {
                matches!(
                    e,
                    CompressError::Truncated {
                        part: "header",
                        needed: 88,
                        ..
                    }
                )
            }),
        ),
        (
            "magic".into(),
            set3(z, 0, b"AWARIZSX"),
            Box::new(|e| *e == CompressError::BadMagic),
        ),
        (
            "version 5".into(),
            set3(z, 8, &5u32.to_le_bytes()),
            Box::new(|e| *e == CompressError::UnsupportedVersion(5)),
        ),
        (
            "version 0".into(),
            set3(z, 8, &0u32.to_le_bytes()),
            Box::new(|e| *e == CompressError::UnsupportedVersion(0)),
        ),
        // Read as versions 1 and 2, the tables byte 0b111 is no table.
        (
            "version 1".into(),
            set3(z, 8, &1u32.to_le_bytes()),
            field("table"),
        ),
        (
            "version 2".into(),
            set3(z, 8, &2u32.to_le_bytes()),
            field("table"),
        ),
        (
            "model variant 4".into(),
            set3(z, 13, &[4]),
            field("model variant"),
        ),
        (
            "model variant 255".into(),
            set3(z, 13, &[255]),
            field("model variant"),
        ),
        (
            "rule set".into(),
            set3(z, 16, b"awari-vu2003"),
            field("rule set"),
        ),
        (
            "rule set after its end".into(),
            set3(z, 31, b"x"),
            field("rule set"),
        ),
        (
            "rule set not UTF-8".into(),
            set3(z, 16, &[0xff]),
            field("rule set"),
        ),
        (
            "layer 47".into(),
            set3(z, 32, &47u32.to_le_bytes()),
            field("layer"),
        ),
        (
            "layer 49".into(),
            set3(z, 32, &49u32.to_le_bytes()),
            field("layer"),
        ),
        (
            "layer 2^32-1".into(),
            set3(z, 32, &u32::MAX.to_le_bytes()),
            field("layer"),
        ),
        (
            "other layer".into(),
            set3(z, 32, &9u32.to_le_bytes()),
            field("entries"),
        ),
        (
            "entries + 1".into(),
            set3(z, 40, &75_505u64.to_le_bytes()),
            field("entries"),
        ),
        (
            "entries 0".into(),
            set3(z, 40, &0u64.to_le_bytes()),
            field("entries"),
        ),
        (
            "entries 2^64-1".into(),
            set3(z, 40, &u64::MAX.to_le_bytes()),
            field("entries"),
        ),
        (
            "block size 0".into(),
            set3(z, 36, &0u32.to_le_bytes()),
            field("block size"),
        ),
        (
            "block size too large".into(),
            set3(z, 36, &(v3::V3_MAX_BLOCK_SIZE + 1).to_le_bytes()),
            field("block size"),
        ),
        (
            "block size 2^32-1".into(),
            set3(z, 36, &u32::MAX.to_le_bytes()),
            field("block size"),
        ),
        // Another sound block size: the index has another shape, and ends
        // at another offset than the file.
        (
            "block size 128".into(),
            set3(z, 36, &128u32.to_le_bytes()),
            Box::new(|e| matches!(e, CompressError::OffsetOutOfRange { .. })),
        ),
        (
            "scores-only file with a checksum of lower".into(),
            set3(zs, 64, &[1]),
            Box::new(move |e| {
                field_is(e, "reserved") && e.to_string().contains("envelope checksums")
            }),
        ),
        (
            "scores-only file with a checksum of upper".into(),
            set3(zs, 79, &[0x80]),
            field("reserved"),
        ),
        // The models' length: the blocks start elsewhere, or past the end.
        (
            "models a byte longer".into(),
            set3(z, 48, &(p.data - p.models + 1).to_le_bytes()[..4]),
            Box::new(|e| matches!(e, CompressError::OffsetOutOfRange { block: 0, .. })),
        ),
        (
            "models of 2^32-1 bytes".into(),
            set3(z, 48, &u32::MAX.to_le_bytes()),
            Box::new(|e| {
                matches!(
                    e,
                    CompressError::Truncated {
                        part: "block index",
                        ..
                    }
                )
            }),
        ),
        // The coarse index.
        (
            "first offset".into(),
            set3(z, p.super_at(0), &(p.data as u64 + 4).to_le_bytes()),
            Box::new(|e| matches!(e, CompressError::OffsetOutOfRange { block: 0, .. })),
        ),
        (
            "last offset past the end".into(),
            set3(z, p.super_at(19), &(len + 1).to_le_bytes()),
            Box::new(|e| matches!(e, CompressError::Truncated { part: "blocks", .. })),
        ),
        (
            "last offset before the end".into(),
            set3(z, p.super_at(19), &(len - 4).to_le_bytes()),
            Box::new(|e| matches!(e, CompressError::OffsetOutOfRange { block: 1180, .. })),
        ),
        (
            "a super-block 4 bytes longer than its streams".into(),
            set3(z, p.super_at(3), &(sup(z, 3) + 4).to_le_bytes()),
            Box::new(|e| matches!(e, CompressError::OffsetOutOfRange { block: 192, .. })),
        ),
        (
            "a super-block 4 bytes shorter than its streams".into(),
            set3(z, p.super_at(3), &(sup(z, 3) - 4).to_le_bytes()),
            Box::new(|e| matches!(e, CompressError::OffsetOutOfRange { block: 192, .. })),
        ),
        (
            "a super-block before the previous one".into(),
            set3(z, p.super_at(3), &(sup(z, 2) - 4).to_le_bytes()),
            Box::new(|e| matches!(e, CompressError::OffsetOutOfRange { block: 192, .. })),
        ),
        (
            "a stream longer by 4: the sum of its super-block".into(),
            move_lens(z, &[(70, 0, 4)]),
            Box::new(|e| matches!(e, CompressError::OffsetOutOfRange { block: 128, .. })),
        ),
        (
            "the last block's envelope longer by 4".into(),
            move_lens(z, &[(1179, 1, 4)]),
            Box::new(|e| matches!(e, CompressError::OffsetOutOfRange { block: 1180, .. })),
        ),
        // Stream lengths.
        (
            "a stream of 4 bytes".into(),
            set3(z, p.len_at(5, 0), &4u16.to_le_bytes()),
            Box::new(|e| {
                matches!(
                    e,
                    CompressError::OffsetOutOfRange {
                        block: 5,
                        offset: 4,
                        ..
                    }
                )
            }),
        ),
        (
            "a stream of 0 bytes".into(),
            set3(z, p.len_at(5, 1), &0u16.to_le_bytes()),
            Box::new(|e| matches!(e, CompressError::OffsetOutOfRange { block: 5, .. })),
        ),
        (
            "a stream of a length not a multiple of 4".into(),
            set3(z, p.len_at(5, 1), &(stream_len(5, 1) + 2).to_le_bytes()),
            Box::new(|e| matches!(e, CompressError::OffsetOutOfRange { block: 5, .. })),
        ),
        (
            "a stream of 65535 bytes".into(),
            set3(z, p.len_at(1000, 0), &u16::MAX.to_le_bytes()),
            Box::new(|e| matches!(e, CompressError::OffsetOutOfRange { block: 1000, .. })),
        ),
        (
            "scores alone: a stream of 9 bytes".into(),
            set3(zs, ps.len_at(1179, 0), &9u16.to_le_bytes()),
            Box::new(|e| matches!(e, CompressError::OffsetOutOfRange { block: 1179, .. })),
        ),
        // Truncated and extended files.
        (
            "truncated index".into(),
            z[..p.lens + 10].to_vec(),
            Box::new(|e| {
                matches!(
                    e,
                    CompressError::Truncated {
                        part: "block index",
                        ..
                    }
                )
            }),
        ),
        (
            "truncated models".into(),
            z[..p.data - 1].to_vec(),
            Box::new(|e| {
                matches!(
                    e,
                    CompressError::Truncated {
                        part: "block index",
                        ..
                    }
                )
            }),
        ),
        (
            "truncated blocks".into(),
            z[..z.len() - 1].to_vec(),
            Box::new(|e| matches!(e, CompressError::Truncated { part: "blocks", .. })),
        ),
        (
            "trailing bytes".into(),
            [&z[..], &[0u8; 4]].concat(),
            Box::new(|e| matches!(e, CompressError::OffsetOutOfRange { block: 1180, .. })),
        ),
        // The models, malformed (the checksum forged to match).
        ("no models".into(), with_models(z, &[]), model("ends early")),
        (
            "models a byte short".into(),
            with_models(z, &models[..models.len() - 1]),
            model("ends early"),
        ),
        (
            "a byte after the models".into(),
            with_models(z, &[models, &[0]].concat()),
            model("1 bytes after the models"),
        ),
        (
            "scores alone: the models of the full form".into(),
            with_models(zs, models),
            model("bytes after the models"),
        ),
        (
            "a number of more than 64 bits".into(),
            with_models(z, &[0xff; 12]),
            model("more than 64 bits"),
        ),
        (
            "more contexts than the model has".into(),
            with_models(z, &[0xff, 0xff, 0x7f]),
            model("contexts, at most"),
        ),
        (
            "a frequency one more".into(),
            {
                let n = number("frequency", false, &|v| v < 127);
                set3(z, n.at, &[n.value as u8 + 1])
            },
            model("do not sum to 4096"),
        ),
        (
            "a frequency one less".into(),
            {
                let n = number("frequency", false, &|v| v > 0);
                set3(z, n.at, &[n.value as u8 - 1])
            },
            model("do not sum to 4096"),
        ),
        (
            "a symbol twice".into(),
            {
                let n = number("symbol gap", false, &|_| true);
                set3(z, n.at, &[0])
            },
            model("out of order or range"),
        ),
        (
            "a symbol outside the alphabet".into(),
            {
                let n = number("symbol gap", true, &|_| true);
                set3(z, n.at, &[100])
            },
            model("out of order or range"),
        ),
        (
            "a context twice".into(),
            {
                let n = number("context gap", false, &|_| true);
                set3(z, n.at, &[0])
            },
            model("out of order or range"),
        ),
        (
            "a context with no symbols".into(),
            {
                let n = number("symbols", true, &|_| true);
                set3(z, n.at, &[0])
            },
            model("0 symbols"),
        ),
        (
            "a context with more symbols than the alphabet".into(),
            {
                let n = number("symbols", true, &|_| true);
                set3(z, n.at, &[18])
            },
            model("18 symbols"),
        ),
        // A stale checksum: the header's own, or of a changed model byte,
        // stream length or raw checksum.
        (
            "checksum".into(),
            {
                let mut m = z.clone();
                m[80] ^= 1;
                m
            },
            Box::new(|e| matches!(e, CompressError::IndexChecksum { .. })),
        ),
        (
            "a model byte, the checksum stale".into(),
            {
                let mut m = z.clone();
                m[p.models + 40] ^= 0x20;
                m
            },
            Box::new(|e| matches!(e, CompressError::IndexChecksum { .. })),
        ),
        (
            "stream lengths moved, the checksum stale".into(),
            {
                let mut m = move_lens(z, &[(5, 0, 4), (5, 1, -4)]);
                m[80..88].copy_from_slice(&z[80..88]);
                m
            },
            Box::new(|e| matches!(e, CompressError::IndexChecksum { .. })),
        ),
        (
            "the checksum of raw lower, the checksum stale".into(),
            {
                let mut m = z.clone();
                m[64] ^= 1;
                m
            },
            Box::new(|e| matches!(e, CompressError::IndexChecksum { .. })),
        ),
    ];
    // Every tables byte but the two forms.
    for b in [0u8, 0b010, 0b011, 0b100, 0b101, 0b110, 0b1111, 0xff] {
        cases.push((format!("tables {b:#b}"), set3(z, 12, &[b]), field("tables")));
    }
    // Every reserved byte.
    for at in [14, 15, 52, 53, 54, 55] {
        cases.push((
            format!("reserved byte {at}"),
            set3(z, at, &[1]),
            field("reserved"),
        ));
        cases.push((
            format!("scores alone: reserved byte {at}"),
            set3(zs, at, &[0x80]),
            field("reserved"),
        ));
    }
    for (what, bytes, check) in &cases {
        match parse_both(bytes) {
            Ok(()) => panic!("{what}: parsed"),
            Err(e) => assert!(check(&e), "{what}: unexpected error {e:?}"),
        }
    }
    eprintln!(
        "{} damaged version 3 headers: each its typed error",
        cases.len()
    );

    // Damage the parser cannot see: the file parses, and the blocks it
    // touches are stream errors of their number (of every table that
    // decodes them), never other bytes.
    let read = |m: &[u8], kind: Kind, b: u64| -> Result<Vec<u8>, CompressError> {
        let mut t = parse(m)?;
        t.serve(kind)?;
        let mut out = vec![0u8; 64];
        t.decompress_block(b, &mut out).map(|()| out)
    };
    let right = |kind: Kind, b: u64| {
        let k = KINDS.iter().position(|&x| x == kind).unwrap();
        raws[k][b as usize * 64..b as usize * 64 + 64].to_vec()
    };
    let stream_error = |r: Result<Vec<u8>, CompressError>, b: u64| match r {
        Err(CompressError::Stream { block, .. }) => block == b,
        _ => false,
    };
    // A block whose streams both have room to give 4 bytes.
    let b = (5..p.blocks)
        .find(|&b| stream_len(b, 0) >= 12 && stream_len(b, 1) >= 12)
        .unwrap();
    for d in [4, -4] {
        // 4 bytes moved between the scores and the envelope of block b: a
        // block that is no longer what it was.
        let m = move_lens(z, &[(b, 0, d), (b, 1, -d)]);
        for kind in KINDS {
            assert!(stream_error(read(&m, kind, b), b), "moved {d}: {kind:?}");
            assert_eq!(read(&m, kind, b - 1).unwrap(), right(kind, b - 1));
            assert_eq!(read(&m, kind, b + 1).unwrap(), right(kind, b + 1));
        }
        // 4 bytes moved between the envelope of block b and the scores of
        // block b + 1: b's scores are sound, its envelope not; b + 1 not.
        let m = move_lens(z, &[(b, 1, d), (b + 1, 0, -d)]);
        assert_eq!(read(&m, Kind::Score, b).unwrap(), right(Kind::Score, b));
        for kind in KINDS {
            if kind != Kind::Score {
                assert!(stream_error(read(&m, kind, b), b), "moved {d}: {kind:?}");
            }
            assert!(
                stream_error(read(&m, kind, b + 1), b + 1),
                "moved {d}: {kind:?}"
            );
            assert_eq!(read(&m, kind, b + 2).unwrap(), right(kind, b + 2));
        }
        let t = parse(&m).unwrap();
        assert!(matches!(
            t.get(b * 64 + 64 + 7),
            Err(CompressError::Stream { .. })
        ));
        assert!(matches!(
            t.verify(Some(&raws[0]), &|_| {}),
            Err(CompressError::Stream { .. })
        ));
        assert!(t.decompress_all().is_err());
    }
    // Two frequencies of a context traded: a sound model, but the wrong
    // one; some blocks do not decode, none decodes to other bytes.
    let (f1, f2) = numbers
        .windows(4)
        .find_map(|w| {
            let ok = w[1].what == "frequency"
                && w[3].what == "frequency"
                && !w[3].first
                && w[1].bytes == 1
                && w[3].bytes == 1
                && w[1].value != w[3].value;
            ok.then_some((w[1], w[3]))
        })
        .expect("two frequencies of a context");
    let mut m = set3(z, f1.at, &[f2.value as u8]);
    m[f2.at] = f1.value as u8;
    forge3(&mut m);
    let mut failed = 0;
    for kind in KINDS {
        for b in 0..p.blocks {
            match read(&m, kind, b) {
                Ok(v) => assert_eq!(v, right(kind, b), "{kind:?} block {b}"),
                Err(e) => {
                    assert!(matches!(e, CompressError::Stream { block, .. } if block == b));
                    failed += 1;
                }
            }
        }
    }
    eprintln!(
        "frequencies traded: {failed} of {} blocks fail",
        3 * p.blocks
    );
    assert!(failed > 0);
    // Another model variant: the scores model reads (its contexts are in
    // range of a larger variant), its contexts do not fit the blocks.
    let v = z[13];
    for other in (0..v3::VARIANTS).filter(|&o| o != v) {
        let m = set3(z, 13, &[other]);
        match parse(&m) {
            Err(e) => {
                assert!(models_say(&e, ""), "variant {other}: {e:?}");
                eprintln!("model variant {v} read as {other}: {e}");
            }
            Ok(t) => {
                let e = t.decompress_all().unwrap_err();
                assert!(matches!(e, CompressError::Stream { .. }), "{e:?}");
                eprintln!("model variant {v} read as {other}: parses; {e}");
            }
        }
    }
    // The checksum of a raw table forged: a sound file whose table is not
    // the one its header describes, found when the whole table is read.
    let m = set3(z, 64, &[z[64] ^ 1]);
    let mut t = parse(&m).unwrap();
    assert_eq!(t.decompress_all().unwrap(), raws[0]);
    t.serve(Kind::Lower).unwrap();
    assert!(matches!(
        t.decompress_all(),
        Err(CompressError::ChecksumMismatch { .. })
    ));
    assert!(matches!(
        t.verify(Some(&raws[1]), &|_| {}),
        Err(CompressError::ChecksumMismatch { .. })
    ));
    // And a sound file verified against other bytes.
    let mut other = raws[2].clone();
    other[1000] ^= 1;
    t.serve(Kind::Upper).unwrap();
    assert_eq!(
        t.verify(Some(&other), &|_| {}),
        Err(CompressError::DiffersFromRaw { index: 1000 })
    );
}

#[test]
fn millions_of_random_v3_header_index_and_model_mutations_never_panic() {
    let (raws, z) = sample_v3();
    mutate_v3(raws, z, 0x2a7a4, rounds(2_000_000));
}

#[test]
fn a_million_random_v3_scores_only_mutations_never_panic() {
    let (raws, z) = sample_v3_scores();
    mutate_v3(raws, z, 0x2a7a5, rounds(1_000_000));
}

/// `total` rounds of damage to header, index and models of the version 3
/// file `z`, every other round with a forged checksum: 1 to 4 random bytes
/// changed (random values, single bits, small changes), or two stream
/// lengths of one super-block changed by the same multiple of 4 in
/// opposite directions (the coarse index still adds up), or two nearby
/// bytes of the models swapped (frequencies traded keep their sum).
/// The rounds are shared by two threads (seeds `seed` and `seed + 1`).
fn mutate_v3(raws: &[Vec<u8>; 3], z: &[u8], seed: u64, total: usize) {
    let parts: Vec<V3Tally> = std::thread::scope(|sc| {
        let workers: Vec<_> = (0..2)
            .map(|w| sc.spawn(move || mutate_v3_part(raws, z, seed + w, total / 2)))
            .collect();
        workers
            .into_iter()
            .map(|h| h.join().unwrap_or_else(|e| std::panic::resume_unwind(e)))
            .collect()
    });
    let mut all = V3Tally::default();
    for t in parts {
        all.parsed += t.parsed;
        all.forged_parsed += t.forged_parsed;
        for (a, b) in all.errors.iter_mut().zip(t.errors) {
            for (kind, k) in b {
                *a.entry(kind).or_default() += k;
            }
        }
        for (kind, k) in t.reads {
            *all.reads.entry(kind).or_default() += k;
        }
        for (a, b) in all.modes.iter_mut().zip(t.modes) {
            *a += b;
        }
    }
    let V3Tally {
        parsed,
        forged_parsed,
        errors,
        reads,
        modes,
    } = all;
    eprintln!(
        "{total} mutations of a version 3 file's header, index and models \
         ({} random bytes, {} stream lengths moved, {} model bytes swapped): \
         {parsed} parsed ({forged_parsed} with a forged checksum)",
        modes[2], modes[0], modes[1]
    );
    eprintln!("  errors without a forged checksum: {:?}", errors[0]);
    eprintln!("  errors with a forged checksum: {:?}", errors[1]);
    eprintln!("  reads of the files that parsed: {reads:?}");
    // Without a forged checksum, a changed header, index or model never
    // parses.
    assert_eq!(parsed, forged_parsed);
    assert!(
        errors[0].get("IndexChecksum").is_some_and(|&k| k > 0),
        "{:?}",
        errors[0]
    );
    // With a forged checksum the checksum never finds them, the other
    // checks do: magic, version, offsets and stream lengths, every header
    // field, the models.
    let forged = &errors[1];
    assert!(!forged.contains_key("IndexChecksum"), "{forged:?}");
    for kind in [
        "BadMagic",
        "UnsupportedVersion",
        "OffsetOutOfRange",
        "HeaderField(tables)",
        "HeaderField(model variant)",
        "HeaderField(reserved)",
        "HeaderField(rule set)",
        "HeaderField(layer)",
        "HeaderField(entries)",
        "HeaderField(block size)",
        "HeaderField(models)",
    ] {
        assert!(
            forged.get(kind).is_some_and(|&k| k > 0),
            "no forged mutation reached {kind}: {forged:?}"
        );
    }
    // Some damage only the blocks find (moved stream lengths, traded
    // frequencies): those files parse, and their damaged blocks are stream
    // errors (any wrong bytes failed `read_v3_blocks`).
    assert!(forged_parsed > 0);
    assert!(reads.get("Stream").is_some_and(|&k| k > 0), "{reads:?}");
    assert!(reads.get("right").is_some_and(|&k| k > 0), "{reads:?}");
    for kind in reads.keys() {
        assert!(kind == "right" || kind == "Stream", "{reads:?}");
    }
}

/// Counts of [`mutate_v3`]'s rounds.
#[derive(Default)]
struct V3Tally {
    parsed: usize,
    forged_parsed: usize,
    /// The parse errors of the rounds without and with a forged checksum.
    errors: [BTreeMap<String, usize>; 2],
    /// The reads of the files that parsed.
    reads: Outcomes,
    /// Rounds of each kind of damage: stream lengths moved, model bytes
    /// swapped, random bytes.
    modes: [usize; 3],
}

/// `total` rounds of [`mutate_v3`] from `seed`.
fn mutate_v3_part(raws: &[Vec<u8>; 3], z: &[u8], seed: u64, total: usize) -> V3Tally {
    let p = v3_parts(z);
    let k = p.streams;
    let mut rng = StdRng::seed_from_u64(seed);
    let mut m = z.to_vec();
    let mut tally = V3Tally::default();
    let V3Tally {
        parsed,
        forged_parsed,
        errors,
        reads,
        modes,
    } = &mut tally;
    let mut changed = Vec::with_capacity(8);
    for round in 0..total {
        changed.clear();
        let mode = match rng.gen_range(0..8) {
            0 => 0,
            1 => 1,
            _ => 2,
        };
        match mode {
            0 => {
                let j = rng.gen_range(0..p.blocks as usize * k);
                let same_super =
                    |i: usize| i / k / v3::SUPER as usize == j / k / v3::SUPER as usize;
                let i = if j + 1 < p.blocks as usize * k && same_super(j + 1) {
                    j + 1
                } else {
                    j - 1
                };
                let d = 4 * rng.gen_range(1..=4) * if rng.gen() { 1 } else { -1 };
                let (aj, ai) = (p.lens + 2 * j, p.lens + 2 * i);
                let (lj, li) = (
                    u16::from_le_bytes([m[aj], m[aj + 1]]) as i32 + d,
                    u16::from_le_bytes([m[ai], m[ai + 1]]) as i32 - d,
                );
                if lj < 8 || li < 8 || lj > 65535 || li > 65535 {
                    continue;
                }
                m[aj..aj + 2].copy_from_slice(&(lj as u16).to_le_bytes());
                m[ai..ai + 2].copy_from_slice(&(li as u16).to_le_bytes());
                changed.extend([aj, aj + 1, ai, ai + 1]);
            }
            1 => {
                let a = rng.gen_range(p.models..p.data - 1);
                let b = (a + rng.gen_range(1..=6)).min(p.data - 1);
                m.swap(a, b);
                changed.extend([a, b]);
            }
            _ => {
                for _ in 0..rng.gen_range(1..=4) {
                    let at = match rng.gen_range(0..8) {
                        0 | 1 => rng.gen_range(0..v3::V3_HEADER_BYTES),
                        2 => rng.gen_range(p.index..p.lens),
                        3..=5 => rng.gen_range(p.lens..p.models),
                        _ => rng.gen_range(p.models..p.data),
                    };
                    changed.push(at);
                    m[at] = match rng.gen_range(0..3) {
                        0 => rng.gen(),
                        1 => m[at] ^ (1 << rng.gen_range(0..8)),
                        _ => m[at].wrapping_add(rng.gen_range(1..4)),
                    };
                }
            }
        }
        if changed.iter().all(|&a| m[a] == z[a]) {
            for &a in &changed {
                m[a] = z[a];
            }
            continue; // no change after all
        }
        modes[mode] += 1;
        let forged = round % 2 == 1;
        if forged {
            forge3(&mut m);
        }
        // Read the blocks a change of the index could have moved, and one
        // more; a quarter of the rounds through `read_at`.
        let near = p.block_near(changed[0]);
        let blocks = [
            near.saturating_sub(1),
            near,
            near + 1,
            rng.gen_range(0..p.blocks),
        ];
        match try_mutation_v3(&m, raws, &blocks, round % 8 < 2, reads) {
            Ok(()) => {
                *parsed += 1;
                *forged_parsed += usize::from(forged);
            }
            Err(e) => *errors[usize::from(forged)].entry(variant(&e)).or_default() += 1,
        }
        for &a in &changed {
            m[a] = z[a];
        }
        m[80..88].copy_from_slice(&z[80..88]);
    }
    debug_assert_eq!(m, z);
    tally
}

#[test]
fn damaged_v3_blocks_are_stream_errors_never_wrong_bytes() {
    let samples = [
        ("full form", sample_v3(), 0x2a7a6, rounds(100_000)),
        ("scores alone", sample_v3_scores(), 0x2a7a7, rounds(50_000)),
    ];
    for (form, (raws, z), seed, total) in samples {
        let p = v3_parts(z);
        let streams = v3_streams(z);
        let mut rng = StdRng::seed_from_u64(seed);
        let mut m = z.clone();
        // Per damaged stream (scores or envelope) and table read: right
        // bytes, or the error.
        let mut outcomes: BTreeMap<(&str, &str), Outcomes> = BTreeMap::new();
        let mut changed = Vec::with_capacity(4);
        for round in 0..total {
            // 1 to 4 bytes of one stream: single bits flipped, or bytes
            // replaced by random ones.
            let (block, envelope, range) = streams[rng.gen_range(0..streams.len())].clone();
            changed.clear();
            for _ in 0..rng.gen_range(1..=4) {
                let at = rng.gen_range(range.clone());
                changed.push(at);
                m[at] = if rng.gen() {
                    m[at] ^ (1 << rng.gen_range(0..8))
                } else {
                    rng.gen()
                };
            }
            if changed.iter().all(|&a| m[a] == z[a]) {
                continue;
            }
            let pread = round % 2 == 1;
            let r = catch_unwind(AssertUnwindSafe(|| {
                let parsed = if pread {
                    CompressedTable::parse(Pread(&m)).map(|t| Box::new(t) as Box<dyn Served>)
                } else {
                    parse(&m).map(|t| Box::new(t) as Box<dyn Served>)
                };
                let mut t = parsed.unwrap_or_else(|e| {
                    panic!(
                        "{form}, seed {seed:#x}, round {round}: \
                         damaged block {block} broke the index: {e:?}"
                    )
                });
                let mut got = Vec::new();
                for (k, kind) in KINDS.into_iter().enumerate() {
                    if !t.holds(kind) {
                        continue;
                    }
                    let raw = &raws[k]
                        [block as usize * 64..(block as usize * 64 + 64).min(raws[k].len())];
                    let g = block * 64 + rng.gen_range(0..raw.len() as u64);
                    let (whole, one) = t.read(kind, block, raw.len(), g);
                    match &whole {
                        Ok(v) => assert!(
                            v == raw,
                            "{form}, seed {seed:#x}, round {round}: damaged block {block} \
                             ({} stream, bytes {changed:?}) decoded to wrong {kind:?} bytes",
                            if envelope { "envelope" } else { "scores" }
                        ),
                        Err(e) => assert!(
                            matches!(e, CompressError::Stream { block: b, .. } if *b == block),
                            "{form}, round {round}: block {block}: {e:?}"
                        ),
                    }
                    match (&whole, one) {
                        (Ok(v), Ok(x)) => assert_eq!(v[(g - block * 64) as usize], x as u8),
                        (Err(a), Err(b)) => assert_eq!(*a, b),
                        (a, b) => panic!("block {block}: {a:?}, entry {g}: {b:?}"),
                    }
                    got.push((kind, whole.is_ok()));
                }
                got
            }));
            let got = r.unwrap_or_else(|_| {
                panic!(
                    "{form}, seed {seed:#x}, round {round}: a damaged block made the reader panic"
                )
            });
            let stream = if envelope { "envelope" } else { "scores" };
            for (kind, ok) in got {
                let outcome = if ok { "right" } else { "Stream" };
                *outcomes
                    .entry((stream, kind.stem()))
                    .or_default()
                    .entry(outcome.into())
                    .or_default() += 1;
            }
            for &a in &changed {
                m[a] = z[a];
            }
        }
        eprintln!(
            "{form}: {total} damaged blocks, per damaged stream and table read: {outcomes:?}"
        );
        // A damaged stream never decodes (rANS decoding is one to one: a
        // stream that decodes to the block's values, ends in the state
        // they call for and is read to its end is the encoder's stream);
        // an intact one always does: the scores of a block whose envelope
        // is damaged.
        for ((stream, table), o) in &outcomes {
            let damaged = *stream == "scores" || *table != "scores";
            let want = if damaged { "Stream" } else { "right" };
            assert_eq!(
                o.len(),
                1,
                "{form}: {stream} stream damaged, {table} read: {o:?}"
            );
            assert!(
                o.contains_key(want),
                "{form}: {stream} stream damaged, {table} read: {o:?}"
            );
        }

        // Random truncations: the coarse index ends at the file's end.
        let mut truncated = Outcomes::new();
        for _ in 0..rounds(100_000) {
            let len = rng.gen_range(0..z.len());
            let e = parse_both(&z[..len]).expect_err("a truncated file parsed");
            *truncated.entry(variant(&e)).or_default() += 1;
        }
        eprintln!("{form}: random truncations: {truncated:?}");
        for kind in [
            "Truncated(header)",
            "Truncated(block index)",
            "Truncated(blocks)",
        ] {
            assert!(
                truncated.get(kind).is_some_and(|&k| k > 0),
                "{kind}: {truncated:?}"
            );
        }
        assert_eq!(truncated.len(), 3, "{truncated:?}");

        // Random bytes behind a sound header (checksum forged): never a
        // table. Random blocks behind a sound header, index and models:
        // a table, every block of which is a stream error.
        let mut headed = Outcomes::new();
        for _ in 0..rounds(20_000) {
            let len = rng.gen_range(v3::V3_HEADER_BYTES..2 * p.data);
            let mut r: Vec<u8> = (0..len).map(|_| rng.gen()).collect();
            r[..v3::V3_HEADER_BYTES].copy_from_slice(&z[..v3::V3_HEADER_BYTES]);
            forge3(&mut r);
            let e = parse_both(&r).expect_err("random bytes behind a header parsed");
            *headed.entry(variant(&e)).or_default() += 1;
        }
        eprintln!("{form}: random bytes behind a sound header: {headed:?}");
        assert!(headed.get("Truncated(block index)").is_some_and(|&k| k > 0));
        let mut reads = Outcomes::new();
        for _ in 0..rounds(2_000) {
            let mut r = z.clone();
            rng.fill(&mut r[p.data..]);
            let blocks: Vec<u64> = (0..4).map(|_| rng.gen_range(0..p.blocks)).collect();
            try_mutation_v3(&r, raws, &blocks, rng.gen(), &mut reads)
                .expect("random blocks behind a sound index");
        }
        eprintln!("{form}: random blocks: {reads:?}");
        assert_eq!(reads.keys().collect::<Vec<_>>(), ["Stream"], "{reads:?}");
    }
}

/// A parsed version 3 file, from memory or through [`Pread`].
trait Served {
    fn holds(&self, kind: Kind) -> bool;
    /// Serves `kind`, then block `block` (of `len` entries) whole, and
    /// entry `g` through the cache.
    fn read(
        &mut self,
        kind: Kind,
        block: u64,
        len: usize,
        g: u64,
    ) -> (Result<Vec<u8>, CompressError>, Result<i8, CompressError>);
}

impl<B: Bytes> Served for CompressedTable<B> {
    fn holds(&self, kind: Kind) -> bool {
        self.header().holds(kind)
    }
    fn read(
        &mut self,
        kind: Kind,
        block: u64,
        len: usize,
        g: u64,
    ) -> (Result<Vec<u8>, CompressError>, Result<i8, CompressError>) {
        self.serve(kind).expect("a table the file holds");
        let mut out = vec![0u8; len];
        let whole = self.decompress_block(block, &mut out).map(|()| out);
        (whole, self.get(g))
    }
}
