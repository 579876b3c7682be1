//! The probing library (`awari_egdb::probe`) on bad input: typed errors
//! for every kind of bad folder or board (missing, truncated and corrupted
//! tables, foreign manifests, impossible layers, short buffers), and
//! `scores.48` of either documented size. The good path is in `probe.rs`.

mod common;

use awari_egdb::format::Kind;
use awari_egdb::index::IndexError;
use awari_egdb::index::{self, layer_size, LayerIter};
use awari_egdb::probe::{Database, LayerTables};
use awari_egdb::rules::Position;
use awari_egdb::rules::RulesError;
use awari_egdb::store::StoreError;
use awari_egdb::{Error, ErrorKind};
use common::probe::{db, file_score, position_with};
use common::{db_dir, full_copy, scratch, vu_copy, MAX};
use std::fs::{self, OpenOptions};

fn assert_map_size(r: Result<i8, Error>, file: &str, expected: u64, found: u64) {
    match r.map_err(|e| e.downcast::<StoreError>()) {
        Err(Ok(StoreError::Size {
            path,
            expected: e,
            found: f,
            ..
        })) => {
            assert!(
                path.ends_with(file),
                "error names {}, want {file}",
                path.display()
            );
            assert_eq!((e, f), (expected, found), "sizes in the error");
        }
        other => panic!("want StoreError::Size for {file}, got {other:?}"),
    }
}
// ---------------------------------------------------------------------------
// Errors

#[test]
fn missing_layer_is_named_with_how_to_build_it() {
    let p = position_with(MAX + 1);
    let vu_dir = vu_copy("awari-probe-vu-missing-");
    let vu = Database::open(&vu_dir).unwrap();
    for (db, dir) in [(db(), db_dir()), (&vu, vu_dir.as_path())] {
        let results = [
            db.score(&p).map(|_| ()),
            db.envelope(&p).map(|_| ()),
            db.moves(&p).map(|_| ()),
            db.best_moves(&p).map(|_| ()),
            db.principal_variation(&p, 3).map(|_| ()),
            db.score_at(MAX + 1, 0).map(|_| ()),
        ];
        for r in results {
            let e = r.expect_err("layer 13 is not in the folder");
            match e.cause() {
                Some(StoreError::MissingLayer { layer, dir: d, .. }) => {
                    assert_eq!(*layer, MAX + 1);
                    assert_eq!(d, dir);
                }
                _ => panic!("want MissingLayer, got {e:?}"),
            }
            let msg = e.to_string();
            assert!(msg.contains("layer 13"), "{msg}");
            // The library names no command-line flags; the CLI adds how to
            // build the layer (tests/query_cli.rs).
            assert!(!msg.contains("--"), "{msg}");
        }
    }
    // Layers 0..=12 still answer.
    assert!(db().score(&position_with(MAX)).is_ok());
}

#[test]
fn truncated_table_is_a_size_error_not_a_crash() {
    let size = layer_size(5);
    assert_eq!(size, 4368);
    // Ours (manifest) and a VU folder; truncated and one byte too long.
    for vu in [false, true] {
        for len in [size / 2, 0, size + 1] {
            let dir = if vu {
                vu_copy("awari-probe-trunc-vu-")
            } else {
                full_copy("awari-probe-trunc-")
            };
            OpenOptions::new()
                .write(true)
                .open(dir.join("scores.5"))
                .unwrap()
                .set_len(len)
                .unwrap();
            let db = Database::open(&dir).unwrap();
            assert_eq!(db.is_vu(), vu);
            // The other layers are unaffected (layers are mapped lazily).
            let p4 = position_with(4);
            assert_eq!(db.score(&p4).unwrap(), file_score(&p4));
            let p5 = position_with(5);
            assert_map_size(db.score(&p5), "scores.5", size, len);
            // Still an error the second time (nothing half-loaded is kept).
            assert_map_size(db.score(&p5), "scores.5", size, len);
            assert_map_size(db.score_at(5, 17), "scores.5", size, len);
            let msg = db.score(&p5).unwrap_err().to_string();
            assert!(msg.contains("scores.5") && msg.contains("4368"), "{msg}");
            match db.verify().map_err(|e| e.downcast::<StoreError>()) {
                Err(Ok(StoreError::Size { path, .. })) => {
                    assert!(path.ends_with("scores.5"))
                }
                other => panic!("verify: want StoreError::Size, got {other:?}"),
            }
        }
    }
}

#[test]
fn truncated_table_reached_through_moves_is_an_error() {
    // [0,0,0,0,0,1, 1,0,0,0,0,0] plus seeds: pit 5 sows one seed into pit 6
    // making 2, which is captured: the child has n - 2 seeds.
    let p = Position::indexable([0, 0, 0, 0, 3, 1, 1, 0, 0, 0, 0, 2]).unwrap();
    assert_eq!(p.seeds(), 7);
    let dir = full_copy("awari-probe-trunc-moves-");
    OpenOptions::new()
        .write(true)
        .open(dir.join("scores.5"))
        .unwrap()
        .set_len(100)
        .unwrap();
    let db = Database::open(&dir).unwrap();
    match db.moves(&p).map_err(|e| e.downcast::<StoreError>()) {
        Err(Ok(StoreError::Size { path, found, .. })) => {
            assert!(path.ends_with("scores.5"));
            assert_eq!(found, 100);
        }
        other => panic!("want StoreError::Size through moves(), got {other:?}"),
    }
    assert!(db.best_moves(&p).is_err());
    assert!(db.principal_variation(&p, 10).is_err());
}

#[test]
fn missing_table_file_of_our_folder_is_a_missing_table_error_naming_it() {
    let dir = full_copy("awari-probe-gone-");
    fs::remove_file(dir.join("upper.6")).unwrap();
    let db = Database::open(&dir).unwrap();
    match db.score(&position_with(6)) {
        Err(e) if matches!(e.cause(), Some(StoreError::Missing(_))) => {
            assert!(e.is_damage());
            assert!(e.to_string().contains("upper.6"), "{e}");
        }
        other => panic!("want MissingTable naming upper.6, got {other:?}"),
    }
}

#[test]
fn flipped_byte_is_found_by_verify_not_by_a_lookup() {
    for kind in [Kind::Score, Kind::Lower, Kind::Upper] {
        let dir = full_copy("awari-probe-flip-");
        let name = kind.file_name(7);
        let path = dir.join(&name);
        let mut bytes = fs::read(&path).unwrap();
        bytes[1234] ^= 0x40;
        fs::write(&path, &bytes).unwrap();
        // A lookup reads only the bytes it needs: layer 7 answers.
        let db = Database::open(&dir).unwrap();
        let p7 = position_with(7);
        assert!(db.score(&p7).is_ok());
        assert!(db.verify_layer(6).unwrap(), "layer 6 is fine");
        for r in [db.verify_layer(7).map(|_| ()), db.verify().map(|_| ())] {
            match r.map_err(|e| e.downcast::<StoreError>()) {
                Err(Ok(StoreError::Checksum {
                    path,
                    expected,
                    found,
                    ..
                })) => {
                    assert!(path.ends_with(&name), "{}", path.display());
                    assert_ne!(expected, found);
                }
                other => panic!("{name}: want a Checksum error, got {other:?}"),
            }
        }
        // A database that verifies on load refuses the layer on every probe.
        let db = Database::open(&dir).unwrap().verify_on_load(true);
        let p6 = position_with(6);
        assert_eq!(db.score(&p6).unwrap(), file_score(&p6), "layer 6 is fine");
        for _ in 0..2 {
            let e = db.score(&p7).unwrap_err();
            assert!(
                matches!(e.cause(), Some(StoreError::Checksum { .. })),
                "{e:?}"
            );
            assert!(e.is_damage());
            assert!(e.to_string().contains(&name), "{e}");
        }
    }
}

#[test]
fn absent_folder_or_file_is_not_a_folder() {
    let base = scratch("awari-probe-nofolder-");
    let absent = base.join("nothing-here");
    match Database::open(&absent) {
        Err(e) if matches!(e.cause(), Some(StoreError::NoSuchFolder(_))) => {
            assert_eq!(e.path(), Some(absent.as_path()));
            assert!(e.to_string().ends_with("no such folder"), "{e}");
        }
        other => panic!(
            "absent folder: want NoSuchFolder, got {:?}",
            other.map(|_| ())
        ),
    }
    let file = base.join("a-file");
    fs::write(&file, b"x").unwrap();
    assert!(
        Database::open(&file).is_err_and(|e| matches!(e.cause(), Some(StoreError::NotAFolder(_))))
    );
}

#[test]
fn empty_folder_is_not_a_folder() {
    // Neither ours (no manifest) nor a VU folder (no scores.N).
    let base = scratch("awari-probe-empty-");
    let empty = base.join("empty");
    fs::create_dir(&empty).unwrap();
    match Database::open(&empty).map_err(|e| e.downcast::<StoreError>()) {
        Err(Ok(StoreError::NoTables(p))) => assert_eq!(p, empty),
        other => panic!(
            "empty folder: want NoTables, got {:?}",
            other.map(|d| d.layers())
        ),
    }
}

#[test]
fn manifest_naming_an_impossible_layer_is_an_error_not_a_panic() {
    let dir = full_copy("awari-probe-layer60-");
    let path = dir.join("manifest.json");
    let mut m: serde_json::Value = serde_json::from_slice(&fs::read(&path).unwrap()).unwrap();
    m["layers"][3]["seeds"] = 60.into();
    fs::write(&path, m.to_string()).unwrap();
    let r = std::panic::catch_unwind(|| match Database::open(&dir) {
        Err(e) => format!("open: {e}"),
        Ok(db) => match db.verify() {
            Err(e) => format!("verify: {e}"),
            Ok(l) => panic!("verify accepted layers {l:?}"),
        },
    });
    let msg = r.expect("a manifest with a 60-seed layer must not panic");
    eprintln!("{msg}");
}

#[test]
fn from_tables_with_a_short_buffer_is_an_error_not_a_panic() {
    let mut l: Vec<Option<LayerTables<Vec<u8>>>> = (0..=5).map(|_| None).collect();
    l[5] = Some(LayerTables {
        score: vec![0u8; 10],
        envelope: None,
        dist: None,
    });
    let p = index::unrank(5, 4000).unwrap();
    let r = std::panic::catch_unwind(|| {
        let db = Database::from_tables(l).map_err(|e| e.to_string())?;
        db.score(&p).map(|_| ()).map_err(|e| e.to_string())
    });
    match r {
        Ok(Err(e)) => eprintln!("{e}"),
        Ok(Ok(())) => panic!("a 10-byte table for layer 5 answered index 4000"),
        Err(_) => panic!("from_tables with a 10-byte layer 5 panicked on a probe"),
    }
}

#[test]
fn folder_built_without_envelope_has_checksums_but_no_envelope() {
    let dir = scratch("awari-probe-noenv-");
    let opts = common::options(&dir, 6, false);
    awari_egdb::build::build(&opts, &awari_egdb::solve::Silent).unwrap();
    let db = Database::open(&dir).unwrap();
    assert!(!db.is_vu());
    assert_eq!(db.verify().unwrap(), (0..=6).collect::<Vec<_>>());
    for (_, p) in LayerIter::new(6) {
        assert_eq!(db.score(&p).unwrap(), file_score(&p), "{p}");
        assert_eq!(db.envelope(&p).unwrap(), None, "{p}");
    }
    let path = dir.join("scores.6");
    let mut bytes = fs::read(&path).unwrap();
    bytes[0] ^= 1;
    fs::write(&path, bytes).unwrap();
    let db = Database::open(&dir).unwrap();
    assert!(db
        .verify()
        .is_err_and(|e| matches!(e.cause(), Some(StoreError::Checksum { .. }))));
}

#[test]
fn foreign_manifest_is_a_manifest_error() {
    let dir = vu_copy("awari-probe-foreign-");
    fs::write(
        dir.join("manifest.json"),
        b"{\"format\": \"something-else\"}",
    )
    .unwrap();
    assert!(Database::open(&dir)
        .is_err_and(|e| matches!(e.cause(), Some(StoreError::ForeignManifest { .. }))));
    fs::write(dir.join("manifest.json"), b"not json").unwrap();
    assert!(Database::open(&dir)
        .is_err_and(|e| matches!(e.cause(), Some(StoreError::ForeignManifest { .. }))));
}

#[test]
fn invalid_boards_are_position_errors() {
    let db = db();
    let full = Position([0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1]);
    let too_many = Position([48, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0]);
    let absurd = Position([255; 12]);
    // A board without a Goedel number is answered from its moves by every
    // probe (its children have numbers): score, moves, best_moves,
    // envelope (the best of the moves') and the line of best play.
    let moves = db.moves(&full).unwrap();
    let best = moves.iter().filter_map(|m| m.score).max().unwrap();
    assert_eq!(db.score(&full).unwrap(), best);
    assert!(!db.best_moves(&full).unwrap().is_empty());
    let e = db
        .envelope(&full)
        .unwrap()
        .expect("built with the envelope");
    assert!(e.lower <= best && best <= e.upper, "{full}: {e:?}");
    let line = db.principal_variation(&full, 5).unwrap();
    assert_eq!(line.steps[0].position, full);
    assert_eq!(line.steps[0].score, best);
    // The opening's moves lead to layer 48, which is not built: said so.
    for e in [
        db.score(&Position::initial()).map(|_| ()),
        db.envelope(&Position::initial()).map(|_| ()),
        db.principal_variation(&Position::initial(), 5).map(|_| ()),
    ] {
        match e.map_err(|e| e.downcast::<StoreError>()) {
            Err(Ok(StoreError::MissingLayer { layer: 48, .. })) => {}
            other => panic!("the opening needs layer 48: {other:?}"),
        }
    }
    for (p, want) in [
        (too_many, RulesError::TooManySeeds(49)),
        (absurd, RulesError::TooManySeeds(255 * 12)),
    ] {
        let errs = [
            db.score(&p).map(|_| ()),
            db.envelope(&p).map(|_| ()),
            db.moves(&p).map(|_| ()),
            db.best_moves(&p).map(|_| ()),
            db.principal_variation(&p, 5).map(|_| ()),
        ];
        for e in errs {
            match e {
                Err(got) => {
                    assert_eq!(got.to_string(), want.to_string(), "{p}");
                    assert_eq!(got.kind(), ErrorKind::Input, "{p}");
                }
                other => panic!("{p}: want Position({want:?}), got {other:?}"),
            }
        }
    }
    assert!(db
        .score_at(MAX, layer_size(MAX))
        .is_err_and(|e| matches!(e.cause(), Some(IndexError::IndexOutOfRange { .. }))));
    assert!(db
        .score_at(49, 0)
        .is_err_and(|e| matches!(e.cause(), Some(IndexError::NoSuchLayer(49)))));
}

#[test]
fn scores_48_of_either_documented_size_opens_and_others_do_not() {
    let size = layer_size(48);
    assert_eq!(size, 203_648_015_935);
    let probes = [
        index::unrank(48, 0).unwrap(),
        index::unrank(48, size - 1).unwrap(),
        index::unrank(48, size / 2).unwrap(),
    ];
    for len in [size, size + 1, size - 1, size + 2, 0] {
        let dir = scratch("awari-probe-48-");
        // Sparse: no disk blocks are allocated.
        let f = fs::File::create(dir.join("scores.48")).unwrap();
        f.set_len(len).unwrap();
        drop(f);
        let db = Database::open(&dir).unwrap();
        assert!(db.is_vu());
        assert_eq!(db.layers(), vec![48]);
        if len == size || len == size + 1 {
            for p in &probes {
                assert_eq!(db.score(p).unwrap(), 0, "{p}: a sparse file reads zeros");
            }
            assert_eq!(db.score_at(48, size - 1).unwrap(), 0);
            assert!(
                db.score_at(48, size).is_err(),
                "the extra byte is not an index"
            );
            assert_eq!(db.verify().unwrap(), vec![48]);
            // The initial position has no index: never read from the file,
            // but answered from its moves (into this layer of zeros, with
            // no envelope: a VU folder has none).
            assert_eq!(db.envelope(&Position::initial()).unwrap(), None);
            assert_eq!(db.score(&Position::initial()).unwrap(), 0);
        } else {
            assert_map_size(db.score(&probes[0]), "scores.48", size, len);
            assert!(db.verify().is_err());
        }
    }
}
