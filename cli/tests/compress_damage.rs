//! Compressed folders under damage: `--remove-raw` keeps the originals
//! when a check fails; damaged, truncated, missing or swapped compressed
//! files are typed probe errors (never a panic) and failed checks (status
//! 1). The file format's parser under damage is in `compress_v4.rs`,
//! `compress_v4_damage.rs` (each damaged field of the full form) and
//! `compress_v4_mutations.rs` (random damage); the good path is in
//! `compress_roundtrip.rs`.

mod common;

use awari_egdb::codec::v4::V4_HEADER_BYTES;
use awari_egdb::codec::{CompressError, Settings};
use awari_egdb::format::Kind;
use awari_egdb::index::unrank;
use awari_egdb::pack::{self, Action, CompressOptions, Quiet};
use awari_egdb::probe::Database;
use awari_egdb::store::Manifest;
use awari_egdb::store::StoreError;
use common::compress::{compress_opts, copy, raw_dir, raw_table, zst_dir, KINDS};
use common::{awari, s, scratch};

#[test]
fn remove_raw_keeps_the_originals_when_a_check_fails() {
    let dir = copy("awari-compress-keep-");
    // A damaged raw table: it is not compressed, and its layer keeps every
    // raw table.
    let victim = dir.join("lower.12");
    let mut b = std::fs::read(&victim).unwrap();
    b[1000] ^= 0x40;
    std::fs::write(&victim, &b).unwrap();
    let out = awari(&["compress", "--db", s(&dir), "--remove-raw"], None);
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
    assert!(m.compressed("scores.12").is_none());
    let left: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|f| f.starts_with("tables.12"))
        .collect();
    assert!(left.is_empty(), "{left:?}");

    // A damaged compressed file found by a later run: compressed again from
    // the raw table before the raw table goes.
    let dir = copy("awari-compress-redo-");
    let opts = CompressOptions {
        layers: 9..=9,
        ..compress_opts(false)
    };
    pack::compress_folder(&dir, &opts, &Quiet).unwrap();
    let zst = dir.join("tables.9.zst");
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
    assert_eq!(
        redone,
        [("scores.9, lower.9, upper.9", Action::Compressed)],
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
    assert!(
        matches!(e.cause(), Some(StoreError::Checksum { .. })),
        "{e:?}"
    );
}

#[test]
fn damaged_compressed_files_are_typed_probe_errors() {
    let dir = copy("awari-compress-damaged-");
    let opts = CompressOptions {
        settings: Settings {
            block_bytes: 32,
            ..Settings::random_access()
        },
        layers: 7..=8,
        remove_raw: true,
    };
    pack::compress_folder(&dir, &opts, &Quiet).unwrap();
    let zst = dir.join("scores.8.zst");
    let good = std::fs::read(&zst).unwrap();
    let p = unrank(8, 100).unwrap();
    // A flipped byte in the sparse index: the header's own checksum on
    // opening, and the file's checksum in the manifest when asked for.
    let mut bad = good.clone();
    bad[V4_HEADER_BYTES + 3] ^= 1;
    std::fs::write(&zst, &bad).unwrap();
    match Database::open(&dir)
        .unwrap()
        .score(&p)
        .map_err(|e| e.downcast::<StoreError>())
    {
        Err(Ok(StoreError::Compressed { path, source })) => {
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
    match db.score(&p).map_err(|e| e.downcast::<StoreError>()) {
        Err(Ok(StoreError::Checksum { path, .. })) => assert_eq!(path, zst),
        r => panic!("want a checksum error, got {r:?}"),
    }
    match Database::open(&dir).unwrap().verify_layer(8) {
        Err(e) if e.is_damage() => assert!(e.to_string().contains("scores.8.zst"), "{e}"),
        r => panic!("verify_layer: want a damaged-table error, got {r:?}"),
    }
    // Truncated: the size in the manifest.
    std::fs::write(&zst, &good[..good.len() - 1]).unwrap();
    match Database::open(&dir)
        .unwrap()
        .score(&p)
        .map_err(|e| e.downcast::<StoreError>())
    {
        Err(Ok(StoreError::Size { .. })) => {}
        r => panic!("want a size error, got {r:?}"),
    }
    // Missing: an I/O error naming the file.
    std::fs::remove_file(&zst).unwrap();
    let e = Database::open(&dir).unwrap().score(&p).unwrap_err();
    assert!(e.to_string().contains("scores.8.zst"), "{e}");
    // Another layer's file under this name: its header says so.
    std::fs::copy(dir.join("scores.7.zst"), &zst).unwrap();
    let mut m = Manifest::load(&dir).unwrap().unwrap();
    let other = m.compressed("scores.7").unwrap().clone();
    let mut c = m.compressed("scores.8").unwrap().clone();
    c.bytes = other.bytes;
    c.xxh3 = other.xxh3;
    m.put_compressed(c);
    m.store(&dir).unwrap();
    match Database::open(&dir)
        .unwrap()
        .score(&p)
        .map_err(|e| e.downcast::<StoreError>())
    {
        Err(Ok(StoreError::Compressed {
            source: CompressError::Mismatch { field: "layer", .. },
            ..
        })) => {}
        r => panic!("want a layer mismatch, got {r:?}"),
    }
    // A manifest that lists a compressed copy of a table it does not have.
    let mut m = Manifest::load(&dir).unwrap().unwrap();
    m.compressed[0].raw = "scores.99".into();
    m.store(&dir).unwrap();
    assert!(Database::open(&dir)
        .is_err_and(|e| matches!(e.cause(), Some(StoreError::ForeignManifest { .. }))));
}

#[test]
fn verify_and_check_fail_with_status_1_on_a_damaged_compressed_table() {
    // A compressed-only folder whose tables.9.zst has one damaged byte (in
    // a block): a damaged table is a failed check (1), not bad input (2).
    let dir = scratch("awari-compress-damaged-");
    for e in std::fs::read_dir(zst_dir()).unwrap() {
        let e = e.unwrap();
        if e.file_name() != "build.lock" {
            std::fs::copy(e.path(), dir.join(e.file_name())).unwrap();
        }
    }
    let zst = dir.join("tables.9.zst");
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
        assert!(stderr.contains("tables.9.zst"), "{args:?}: {stderr}");
    }
}
