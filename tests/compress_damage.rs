//! Compressed tables under damage: `--remove-raw` keeps the originals when
//! a check fails, damaged, truncated, missing or swapped compressed files
//! are typed probe errors (never a panic) and failed checks (status 1), and
//! the file format's parser gives a typed error for every damaged header
//! field and for a few million random mutations of headers, block indexes,
//! dictionaries and blocks, and random files. The good path is in
//! `compress_roundtrip.rs`.

mod common;

use awari_egdb::codec::{self, CompressError, Settings, HEADER_BYTES};
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
    bad[HEADER_BYTES + 3] ^= 1;
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
        level: 3,
        block_size: 256,
        dictionary,
    };
    let z = codec::encode(&raw, &awari_egdb::rules::AWARI, Kind::Score, 8, settings).unwrap();
    assert_eq!(parse(&z).unwrap().header().dictionary > 0, dictionary > 0);
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
    if z.len() < HEADER_BYTES {
        return;
    }
    let entries = u64_at(z, 40);
    let bs = u32::from_le_bytes(z[36..40].try_into().unwrap()) as u64;
    if bs == 0 || entries > 1 << 40 {
        return;
    }
    let mut end = HEADER_BYTES as u64 + 8 * (entries.div_ceil(bs) + 1);
    if u32::from_le_bytes(z[8..12].try_into().unwrap()) == 2 {
        end += u32::from_le_bytes(z[52..56].try_into().unwrap()) as u64;
    }
    if end > z.len() as u64 {
        return;
    }
    let mut h = xxhash_rust::xxh3::Xxh3::new();
    h.update(&z[..64]);
    h.update(&z[HEADER_BYTES..end as usize]);
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
    let data_start = HEADER_BYTES + 8 * (blocks as usize + 1);
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
        ("version", set(z, 8, &3u32.to_le_bytes()), |e| {
            *e == CompressError::UnsupportedVersion(3)
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
        ("truncated index", z[..HEADER_BYTES + 100].to_vec(), |e| {
            matches!(
                e,
                CompressError::Truncated {
                    part: "block index",
                    ..
                }
            )
        }),
        ("truncated blocks", z[..z.len() - 1].to_vec(), |e| {
            matches!(e, CompressError::Truncated { part: "blocks", .. })
        }),
        ("trailing bytes", [&z[..], &[0u8]].concat(), |e| {
            matches!(e, CompressError::OffsetOutOfRange { .. })
        }),
        (
            "first offset",
            set(z, HEADER_BYTES, &(data_start as u64 + 1).to_le_bytes()),
            |e| matches!(e, CompressError::OffsetOutOfRange { block: 0, .. }),
        ),
        (
            "decreasing offset",
            set(z, HEADER_BYTES + 8 * 5, &(data_start as u64).to_le_bytes()),
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
    let at = HEADER_BYTES + 8 * 7;
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
    let at = u64_at(z, HEADER_BYTES + 8 * 20) as usize + 8;
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
        let near = if at >= HEADER_BYTES {
            ((at - HEADER_BYTES) / 8) as u64
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
            .find(|&b| u64_at(z, HEADER_BYTES + 8 * b as usize) <= at as u64)
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
