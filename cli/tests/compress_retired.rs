//! The retired formats 1, 2 and 3: a file of one of them (its header
//! written by hand here: the magic `AWARIZST` and the version) is refused
//! in one line that names the file, its version, the release that reads it
//! and how to convert it, by the library and by every command that opens
//! it; with the raw tables at hand `compress` replaces it. Asking
//! `compress` or `build --compress-finished` for a retired format or one
//! of its settings is refused in one line.

mod common;

use awari_egdb::codec::{CompressError, CompressedTable};
use awari_egdb::store::Manifest;
use awari_egdb::store::StoreError;
use awari_egdb::ErrorKind;
use common::{awari, full_copy, ok, s, scratch, text, usage_error};
use std::path::Path;

/// A file of format `version` as far as its version: the magic, the
/// version, and zeros up to `len` bytes.
fn retired(version: u32, len: usize) -> Vec<u8> {
    let mut b = vec![0u8; len.max(12)];
    b[..8].copy_from_slice(b"AWARIZST");
    b[8..12].copy_from_slice(&version.to_le_bytes());
    b
}

/// Checks the one line that refuses `file` of format `version` (and adds
/// no advice to repair or rebuild it).
fn says_retired(line: &str, file: &str, version: u32) {
    assert!(!line.contains('\n'), "{line:?}");
    assert!(line.ends_with("this release"), "{line:?}");
    for want in [
        file,
        &format!("format {version},"),
        "no longer reads",
        "awari-egdb 0.1.0 (git 44b1542)",
        "decompress it",
        "then compress it with this release",
        concat!("awari-egdb ", env!("CARGO_PKG_VERSION")),
    ] {
        assert!(line.contains(want), "{want:?} not in {line:?}");
    }
}

#[test]
fn the_library_refuses_a_retired_format_by_name() {
    for version in 1..=3u32 {
        // Whatever follows the version: a whole header's worth, or not.
        for len in [12, 72, 88, 96, 4096] {
            let e = CompressedTable::parse(retired(version, len)).unwrap_err();
            assert_eq!(e, CompressError::Retired { version }, "{len} bytes");
        }
        let e = StoreError::compressed(
            "db/tables.16.zst",
            CompressedTable::parse(retired(version, 96)).unwrap_err(),
        );
        says_retired(&e.to_string(), "db/tables.16.zst", version);
        // As any other file this release cannot read: damage to the
        // commands (exit 1), as a file of an unknown version is.
        assert_eq!(e.kind(), ErrorKind::Damaged);
        let unknown =
            StoreError::compressed("x", CompressedTable::parse(retired(5, 96)).unwrap_err());
        assert_eq!(unknown.kind(), e.kind());
    }
    for version in [0u32, 5, u32::MAX] {
        assert_eq!(
            CompressedTable::parse(retired(version, 96)).unwrap_err(),
            CompressError::UnsupportedVersion(version)
        );
    }
    // Too short to have a version, or not ours at all.
    assert!(matches!(
        CompressedTable::parse(&retired(3, 12)[..11]),
        Err(CompressError::Truncated { .. })
    ));
    let mut other = retired(3, 96);
    other[0] = b'X';
    assert_eq!(
        CompressedTable::parse(other).unwrap_err(),
        CompressError::BadMagic
    );
}

/// The one line of a command that failed with status `code`.
fn refused(args: &[&str], code: i32) -> String {
    let out = awari(args, None);
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(code), "{args:?}: {stderr}");
    assert_eq!(stderr.lines().count(), 1, "{args:?}: {stderr:?}");
    assert!(stderr.starts_with("awari:"), "{args:?}: {stderr}");
    stderr.trim_end().to_string()
}

/// Replaces the file `name` of `dir` by `bytes`, and its manifest entries
/// by those of a file of format `version` (0 for formats 1 and 2, as
/// earlier releases listed them) of that size and checksum.
fn plant(dir: &Path, name: &str, bytes: &[u8], version: u32) {
    std::fs::write(dir.join(name), bytes).unwrap();
    let mut m = Manifest::load(dir).unwrap().unwrap();
    for c in m.compressed.iter_mut().filter(|c| c.name == name) {
        c.bytes = bytes.len() as u64;
        c.xxh3 = awari_egdb::format::Checksum::of(bytes);
        c.version = version;
        c.block_bytes = 0;
        c.block_size = 512;
    }
    m.store(dir).unwrap();
}

/// A board of 5 seeds.
const P5: [&str; 12] = ["2", "0", "1", "0", "0", "0", "0", "0", "2", "0", "0", "0"];

#[test]
fn every_command_that_opens_a_retired_file_refuses_it_in_one_line() {
    // Our folder, layer 5 compressed (the full form) and its file then
    // replaced by one of format 3, as the manifest of 0.1.0 lists it.
    let dir = full_copy("awari-retired-v3-");
    let d = s(&dir);
    ok(&["compress", "--db", d, "--layers", "5", "--remove-raw", "-q"]);
    plant(&dir, "tables.5.zst", &retired(3, 4096), 3);
    let mut query = vec!["query", "--db", d];
    query.extend(P5);
    let path = dir.join("tables.5.zst");
    let file = path.to_str().unwrap();
    for args in [
        query.clone(),
        vec!["check", "--db", d, "--layers", "5"],
        vec!["decompress", "--db", d, "--layers", "5"],
        vec!["compress", "--db", d, "--layers", "5"],
    ] {
        says_retired(&refused(&args, 1), file, 3);
    }
    // The tables of the other layers still answer.
    let mut q4 = vec!["query", "--db", d];
    q4.extend(["2", "0", "1", "0", "0", "0", "0", "0", "1", "0", "0", "0"]);
    ok(&q4);

    // A folder of scores alone without manifest (an engine's): a
    // `scores.5.zst` of format 2.
    let ship = scratch("awari-retired-v2-");
    std::fs::write(ship.join("scores.5.zst"), retired(2, 200)).unwrap();
    let mut query = vec!["query", "--db", s(&ship)];
    query.extend(P5);
    let path = ship.join("scores.5.zst");
    says_retired(&refused(&query, 1), path.to_str().unwrap(), 2);
    says_retired(
        &refused(&["decompress", "--db", s(&ship)], 1),
        path.to_str().unwrap(),
        2,
    );
}

#[test]
fn with_the_raw_tables_at_hand_compress_replaces_a_retired_file() {
    // Layer 5 listed as compressed in format 1 (table by table, as 0.1.0
    // listed formats 1 and 2), its raw tables still there.
    let dir = full_copy("awari-retired-raw-");
    let d = s(&dir);
    ok(&["compress", "--db", d, "--layers", "5", "-q"]);
    let mut m = Manifest::load(&dir).unwrap().unwrap();
    for c in m.compressed.iter_mut() {
        c.name = format!("{}.zst", c.raw);
    }
    m.store(&dir).unwrap();
    std::fs::remove_file(dir.join("tables.5.zst")).unwrap();
    for t in ["scores.5", "lower.5", "upper.5"] {
        plant(&dir, &format!("{t}.zst"), &retired(1, 300), 0);
    }
    ok(&["compress", "--db", d, "--layers", "5", "-q"]);
    let mut left: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|f| f.ends_with(".zst"))
        .collect();
    left.sort();
    assert_eq!(left, ["tables.5.zst"], "the retired files are gone");
    let m = Manifest::load(&dir).unwrap().unwrap();
    assert!(m.compressed.iter().all(|c| c.version == 4), "{m:?}");
    ok(&["verify", "--db", d, "--checksums", common::KNOWN_GOOD]);
}

#[test]
fn compress_and_build_refuse_the_retired_formats_and_their_settings() {
    let dir = full_copy("awari-retired-flags-");
    let d = s(&dir);
    for (args, says) in [
        (vec!["--format", "2"], "format 2 is retired"),
        (vec!["--format", "3"], "format 3 is retired"),
        (vec!["--format", "1"], "format 1 is retired"),
        (vec!["--format", "5"], "writes format 4 only"),
        (vec!["--level", "3"], "--level"),
        (vec!["--dictionary", "64KiB"], "--dictionary"),
        (vec!["--dont-care"], "--scores-only"),
    ] {
        let mut a = vec!["compress", "--db", d];
        a.extend(args.iter().copied());
        let line = usage_error(&a);
        assert!(line.contains(says), "{args:?}: {line}");
        if args[0] != "--dont-care" && args[1] != "5" {
            assert!(line.contains("retired"), "{args:?}: {line}");
        }
    }
    let line = usage_error(&[
        "build",
        "--db",
        d,
        "--max-seeds",
        "13",
        "--compress-finished",
        "19",
    ]);
    assert!(
        line.contains("--compress-finished") && line.contains("retired"),
        "{line}"
    );
    assert!(!dir.join("scores.13").exists(), "nothing built");
    // Format 4 asked for by name, or by default: the full form, or the
    // scores alone.
    ok(&[
        "compress", "--db", d, "--layers", "11", "--format", "4", "-q",
    ]);
    ok(&[
        "compress",
        "--db",
        d,
        "--layers",
        "12",
        "--scores-only",
        "-q",
    ]);
    for (f, tables) in [("tables.11.zst", 0b111u8), ("scores.12.zst", 0b001)] {
        let b = std::fs::read(dir.join(f)).unwrap();
        assert_eq!(
            (&b[..8], &b[8..13]),
            (&b"AWARIZST"[..], &[4, 0, 0, 0, tables][..])
        );
    }
}
