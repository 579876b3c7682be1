//! The probing library (`awari_egdb::probe`) against a folder of layers
//! 0..=12 built once per run: exact scores equal to the file bytes, Bellman
//! consistency of `moves`, best moves, the envelope, `verify`, VU folders and
//! in-memory tables, typed errors for every kind of bad folder or board,
//! `scores.48` of either documented size, principal variations and
//! concurrent probes.

mod common;

use awari_egdb::format::Kind;
use awari_egdb::index::{self, layer_size, LayerIter};
use awari_egdb::probe::{lookup, Database, LayerTables, MoveInfo, Pv, PvEnd};
use awari_egdb::rules::Position;
use awari_egdb::{Error, ErrorKind};
use common::{db_dir, full_copy, scratch, vu_copy, MAX};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use std::collections::HashSet;
use std::fs::{self, OpenOptions};
use std::sync::OnceLock;

/// The shared database, opened once (its layers stay mapped).
fn db() -> &'static Database {
    static DB: OnceLock<Database> = OnceLock::new();
    DB.get_or_init(|| Database::open(db_dir()).expect("open the test folder"))
}

/// One table file of the shared folder.
fn table(kind: Kind, n: u32) -> Vec<u8> {
    fs::read(db_dir().join(kind.file_name(n))).expect("read table")
}

/// Every table file of a kind, indexed by layer.
fn tables(kind: Kind) -> &'static [Vec<u8>] {
    static T: OnceLock<[Vec<Vec<u8>>; 3]> = OnceLock::new();
    let all = T.get_or_init(|| {
        [Kind::Score, Kind::Lower, Kind::Upper].map(|k| (0..=MAX).map(|n| table(k, n)).collect())
    });
    match kind {
        Kind::Score => &all[0],
        Kind::Lower => &all[1],
        Kind::Upper => &all[2],
    }
}

/// The stored score of a position, read straight from the file bytes.
fn file_score(p: &Position) -> i8 {
    tables(Kind::Score)[p.seeds() as usize][index::rank(p) as usize] as i8
}

fn layers() -> Vec<u32> {
    (0..=MAX).collect()
}

/// `n` random positions of layers `lo..=hi`, reproducibly.
fn random_positions(seed: u64, count: usize, lo: u32, hi: u32) -> Vec<Position> {
    let mut rng = StdRng::seed_from_u64(seed);
    (0..count)
        .map(|_| {
            let n = rng.gen_range(lo..=hi);
            index::unrank(n, rng.gen_range(0..layer_size(n))).expect("in range")
        })
        .collect()
}

/// Some indexable position with `n` seeds (all in pit 0).
fn position_with(n: u32) -> Position {
    index::first(n)
}

/// The worth of each pit computed here from the rules and the file bytes,
/// independently of `Database::moves`: (nonempty, legal, captures, score).
fn expected_moves(p: &Position) -> [(bool, bool, u8, Option<i8>); 6] {
    let n = p.seeds() as i32;
    let mut out = [(false, false, 0u8, None); 6];
    let mut sown = Vec::new();
    for pit in 0..6 {
        if p.0[pit] == 0 {
            continue;
        }
        let (b, captured) = p.sow(pit);
        let feeds = b[6..].iter().any(|&x| x > 0);
        sown.push((pit, Position(b).mirror(), captured, feeds));
    }
    let any_feeds = sown.iter().any(|s| s.3);
    for (pit, child, captured, feeds) in sown {
        let legal = feeds || !any_feeds;
        let left = n - captured as i32;
        assert_eq!(child.seeds() as i32, left, "{p}: pit {pit} loses seeds");
        let score = legal.then(|| {
            let child_score = if child.mover_seeds() == 0 {
                // The table itself must say so too.
                assert_eq!(
                    file_score(&child) as i32,
                    -left,
                    "{child}: no move scores -n"
                );
                -left
            } else {
                file_score(&child) as i32
            };
            (captured as i32 - child_score) as i8
        });
        out[pit] = (true, legal, captured, score);
    }
    out
}

fn assert_map_size(r: Result<i8, Error>, file: &str, expected: u64, found: u64) {
    match r {
        Err(Error::Size {
            path,
            expected: e,
            found: f,
            ..
        }) => {
            assert!(
                path.ends_with(file),
                "error names {}, want {file}",
                path.display()
            );
            assert_eq!((e, f), (expected, found), "sizes in the error");
        }
        other => panic!("want Error::Size for {file}, got {other:?}"),
    }
}

// ---------------------------------------------------------------------------
// Scores, moves, best moves, envelope

#[test]
fn database_is_send_and_sync() {
    fn assert_send_sync<T: Send + Sync + 'static>() {}
    assert_send_sync::<Database>();
}

#[test]
fn opens_our_folder() {
    let db = Database::open(db_dir()).unwrap();
    assert!(!db.is_vu());
    assert_eq!(db.dir(), Some(db_dir()));
    let m = db.manifest().expect("our folder has a manifest");
    assert_eq!(m.layers.len(), (MAX + 1) as usize);
    assert_eq!(db.layers(), layers());
}

#[test]
fn score_equals_the_file_byte_for_every_position() {
    let db = db();
    let mut probes = 0u64;
    for n in layers() {
        let t = &tables(Kind::Score)[n as usize];
        assert_eq!(t.len() as u64, layer_size(n));
        for (g, p) in LayerIter::new(n) {
            let want = t[g as usize] as i8;
            assert_eq!(db.score(&p).unwrap(), want, "layer {n} index {g}: {p}");
            assert_eq!(db.score_at(n, g).unwrap(), want, "score_at({n}, {g})");
            assert!(
                (want as i32).abs() <= n as i32,
                "{p}: score {want} outside -n..=n"
            );
            probes += 1;
        }
    }
    eprintln!("{probes} positions of layers 0..={MAX} compared");
}

#[test]
fn moves_are_bellman_consistent_and_best_moves_are_the_argmax() {
    let db = db();
    let (mut with_move, mut over) = (0u64, 0u64);
    for n in 0..=10 {
        for (g, p) in LayerIter::new(n) {
            let moves = db.moves(&p).unwrap();
            let want = expected_moves(&p);
            for (pit, (m, w)) in moves.iter().zip(want).enumerate() {
                assert_eq!(m.pit as usize, pit, "{p}");
                assert_eq!(
                    (m.nonempty, m.legal, m.captures, m.score),
                    w,
                    "{p} (layer {n} index {g}) pit {pit}: moves() says {m:?}"
                );
                if m.nonempty {
                    let (b, _) = p.sow(pit);
                    assert_eq!(m.child, Some(Position(b).mirror()), "{p} pit {pit} child");
                } else {
                    assert_eq!(m.child, None, "{p} pit {pit}: empty pit has no child");
                }
            }
            let score = db.score(&p).unwrap();
            let best = db.best_moves(&p).unwrap();
            match moves.iter().filter_map(|m| m.score).max() {
                Some(max) => {
                    with_move += 1;
                    assert_eq!(
                        max, score,
                        "{p} (layer {n} index {g}): max over moves != score"
                    );
                    let argmax: Vec<u8> = moves
                        .iter()
                        .filter(|m| m.score == Some(max))
                        .map(|m| m.pit)
                        .collect();
                    assert_eq!(best, argmax, "{p}: best moves");
                }
                None => {
                    over += 1;
                    assert_eq!(
                        p.mover_seeds(),
                        0,
                        "{p}: a mover with seeds has a legal move"
                    );
                    assert_eq!(score as i32, -(n as i32), "{p}: no move scores -n");
                    assert!(best.is_empty(), "{p}: no best move when the game is over");
                }
            }
        }
    }
    eprintln!("Bellman: {with_move} positions with a move, {over} without, layers 0..=10");
    assert!(with_move > 600_000);
}

#[test]
fn envelope_brackets_the_score_and_matches_the_manifest() {
    let db = db();
    let m = db.manifest().unwrap();
    for n in layers() {
        let (lo, hi) = (
            &tables(Kind::Lower)[n as usize],
            &tables(Kind::Upper)[n as usize],
        );
        let mut pinned = 0u64;
        for (g, p) in LayerIter::new(n) {
            let e = db
                .envelope(&p)
                .unwrap()
                .expect("our folder has the envelope");
            let s = db.score(&p).unwrap();
            assert_eq!(
                (e.lower, e.upper),
                (lo[g as usize] as i8, hi[g as usize] as i8),
                "{p}"
            );
            assert!(e.lower <= s && s <= e.upper, "{p}: {s} outside {e:?}");
            assert_eq!(e.pinned(), e.lower == e.upper);
            pinned += e.pinned() as u64;
        }
        assert_eq!(
            Some(pinned),
            m.layer(n).unwrap().pinned,
            "layer {n}: pinned count"
        );
    }
}

#[test]
fn verify_lists_every_layer() {
    let db = Database::open(db_dir()).unwrap();
    assert_eq!(db.verify().unwrap(), layers());
    // And probes work after it, without mapping again.
    assert_eq!(
        db.score(&position_with(12)).unwrap(),
        file_score(&position_with(12))
    );
}

#[test]
fn lookup_works_on_any_byte_container() {
    let t = tables(Kind::Score)[9].clone();
    let slice: &[u8] = &t;
    let boxed: Box<[u8]> = t.clone().into_boxed_slice();
    for g in [0, 1, 777, layer_size(9) - 1] {
        let want = t[g as usize] as i8;
        assert_eq!(lookup(&t, g), want);
        assert_eq!(lookup(slice, g), want);
        assert_eq!(lookup(&boxed, g), want);
    }
}

// ---------------------------------------------------------------------------
// VU folders and in-memory tables

#[test]
fn vu_folder_gives_the_same_scores_without_envelope() {
    let dir = vu_copy("awari-probe-vu-");
    let vu = Database::open(&dir).unwrap();
    assert!(vu.is_vu());
    assert!(vu.manifest().is_none());
    assert_eq!(vu.dir(), Some(dir.as_path()));
    assert_eq!(vu.layers(), layers());
    assert_eq!(vu.verify().unwrap(), layers());
    let ours = db();
    for n in layers() {
        for (g, p) in LayerIter::new(n) {
            assert_eq!(vu.score(&p).unwrap(), ours.score(&p).unwrap(), "{p}");
            if g % 7 == 0 {
                assert_eq!(
                    vu.envelope(&p).unwrap(),
                    None,
                    "{p}: VU tables have no envelope"
                );
            }
            if n <= 9 || g % 13 == 0 {
                assert_eq!(vu.moves(&p).unwrap(), ours.moves(&p).unwrap(), "{p}");
                assert_eq!(
                    vu.best_moves(&p).unwrap(),
                    ours.best_moves(&p).unwrap(),
                    "{p}"
                );
            }
        }
    }
    let p = random_positions(3, 1, 9, 12)[0];
    assert_eq!(
        vu.principal_variation(&p, 50).unwrap(),
        ours.principal_variation(&p, 50).unwrap()
    );
}

#[test]
fn from_tables_on_buffers_gives_the_same_answers() {
    let scores_only: Vec<Option<LayerTables<Vec<u8>>>> = layers()
        .into_iter()
        .map(|n| {
            Some(LayerTables {
                score: tables(Kind::Score)[n as usize].clone(),
                envelope: None,
            })
        })
        .collect();
    let with_env: Vec<Option<LayerTables<Vec<u8>>>> = layers()
        .into_iter()
        .map(|n| {
            Some(LayerTables {
                score: tables(Kind::Score)[n as usize].clone(),
                envelope: Some((
                    tables(Kind::Lower)[n as usize].clone(),
                    tables(Kind::Upper)[n as usize].clone(),
                )),
            })
        })
        .collect();
    let mem = Database::from_tables(scores_only).unwrap();
    let mem_env = Database::from_tables(with_env).unwrap();
    for m in [&mem, &mem_env] {
        assert!(!m.is_vu());
        assert!(m.dir().is_none());
        assert!(m.manifest().is_none());
        assert_eq!(m.layers(), layers());
        assert_eq!(m.verify().unwrap(), layers());
    }
    let ours = db();
    for p in random_positions(11, 20_000, 0, MAX) {
        let want = ours.score(&p).unwrap();
        assert_eq!(mem.score(&p).unwrap(), want, "{p}");
        assert_eq!(mem_env.score(&p).unwrap(), want, "{p}");
        assert_eq!(mem.envelope(&p).unwrap(), None, "{p}");
        assert_eq!(
            mem_env.envelope(&p).unwrap(),
            ours.envelope(&p).unwrap(),
            "{p}"
        );
        assert_eq!(mem.moves(&p).unwrap(), ours.moves(&p).unwrap(), "{p}");
        assert_eq!(
            mem.best_moves(&p).unwrap(),
            ours.best_moves(&p).unwrap(),
            "{p}"
        );
    }
    // A layer not handed over is missing.
    match mem.score(&position_with(MAX + 1)) {
        Err(Error::MissingLayer { layer, .. }) => assert_eq!(layer, MAX + 1),
        other => panic!("want MissingLayer, got {other:?}"),
    }
    // Sparse layer lists: only layer 5 given, as slices of a static.
    let five: &'static [u8] = Box::leak(tables(Kind::Score)[5].clone().into_boxed_slice());
    let mut only5: Vec<Option<LayerTables<&'static [u8]>>> = (0..=5).map(|_| None).collect();
    only5[5] = Some(LayerTables {
        score: five,
        envelope: None,
    });
    let m5 = Database::from_tables(only5).unwrap();
    assert_eq!(m5.layers(), vec![5]);
    let p = position_with(5);
    assert_eq!(m5.score(&p).unwrap(), file_score(&p));
    assert!(matches!(
        m5.score(&position_with(4)),
        Err(Error::MissingLayer { layer: 4, .. })
    ));
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
            match &e {
                Error::MissingLayer { layer, dir: d, .. } => {
                    assert_eq!(*layer, MAX + 1);
                    assert_eq!(d, dir);
                }
                other => panic!("want MissingLayer, got {other:?}"),
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
            match db.verify() {
                Err(Error::Size { path, .. }) => {
                    assert!(path.ends_with("scores.5"))
                }
                other => panic!("verify: want Error::Size, got {other:?}"),
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
    match db.moves(&p) {
        Err(Error::Size { path, found, .. }) => {
            assert!(path.ends_with("scores.5"));
            assert_eq!(found, 100);
        }
        other => panic!("want Error::Size through moves(), got {other:?}"),
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
        Err(e @ Error::Missing(_)) => {
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
            match r {
                Err(Error::Checksum {
                    path,
                    expected,
                    found,
                    ..
                }) => {
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
            assert!(matches!(e, Error::Checksum { .. }), "{e:?}");
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
        Err(e @ Error::NoSuchFolder(_)) => {
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
    assert!(matches!(Database::open(&file), Err(Error::NotAFolder(_))));
}

#[test]
fn empty_folder_is_not_a_folder() {
    // Neither ours (no manifest) nor a VU folder (no scores.N).
    let base = scratch("awari-probe-empty-");
    let empty = base.join("empty");
    fs::create_dir(&empty).unwrap();
    match Database::open(&empty) {
        Err(Error::NoTables(p)) => assert_eq!(p, empty),
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
    assert!(matches!(db.verify(), Err(Error::Checksum { .. })));
}

#[test]
fn foreign_manifest_is_a_manifest_error() {
    let dir = vu_copy("awari-probe-foreign-");
    fs::write(
        dir.join("manifest.json"),
        b"{\"format\": \"something-else\"}",
    )
    .unwrap();
    assert!(matches!(
        Database::open(&dir),
        Err(Error::ForeignManifest { .. })
    ));
    fs::write(dir.join("manifest.json"), b"not json").unwrap();
    assert!(matches!(
        Database::open(&dir),
        Err(Error::ForeignManifest { .. })
    ));
}

#[test]
fn invalid_boards_are_position_errors() {
    let db = db();
    let full = Position([0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1]);
    let too_many = Position([48, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0]);
    let absurd = Position([255; 12]);
    for (p, want) in [
        (full, Error::OpponentFull),
        (Position::initial(), Error::OpponentFull),
        (too_many, Error::TooManySeeds(49)),
        (absurd, Error::TooManySeeds(255 * 12)),
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
    assert!(matches!(
        db.score_at(MAX, layer_size(MAX)),
        Err(Error::IndexOutOfRange { .. })
    ));
    assert!(matches!(db.score_at(49, 0), Err(Error::NoSuchLayer(49))));
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
            // The initial position has no index: never guessed from the file.
            assert!(matches!(
                db.score(&Position::initial()),
                Err(Error::OpponentFull)
            ));
        } else {
            assert_map_size(db.score(&probes[0]), "scores.48", size, len);
            assert!(db.verify().is_err());
        }
    }
}

// ---------------------------------------------------------------------------
// Principal variations

/// Checks one principal variation from `p` against the tables.
fn check_pv(db: &Database, p: &Position, limit: usize, pv: &Pv) {
    assert!(
        pv.steps.len() <= limit,
        "{p}: {} steps over limit {limit}",
        pv.steps.len()
    );
    let mut pos = *p;
    let mut seen = HashSet::new();
    for (i, s) in pv.steps.iter().enumerate() {
        assert_eq!(s.position, pos, "{p}: step {i} starts elsewhere");
        assert!(
            seen.insert(pos),
            "{p}: step {i} repeats a position inside the line"
        );
        assert_eq!(s.score, db.score(&pos).unwrap(), "{p}: step {i} score");
        let best = db.best_moves(&pos).unwrap();
        assert!(
            best.contains(&s.pit),
            "{p}: step {i} plays {} not in best {best:?}",
            s.pit
        );
        assert_eq!(
            s.pit, best[0],
            "{p}: step {i}: the lowest best pit is played"
        );
        let moves: [MoveInfo; 6] = db.moves(&pos).unwrap();
        let m = moves[s.pit as usize];
        assert_eq!(s.captures, m.captures);
        let next = m.child.unwrap();
        // Best play: the score is the capture minus the opponent's score.
        assert_eq!(
            s.score as i32,
            s.captures as i32 - db.score(&next).unwrap() as i32,
            "{p}: step {i}"
        );
        pos = next;
    }
    assert_eq!(pv.last, pos, "{p}: last position");
    match pv.end {
        PvEnd::GameOver => assert_eq!(pos.mover_seeds(), 0, "{p}: game over with seeds"),
        PvEnd::Repetition => {
            assert!(pos.mover_seeds() > 0);
            let first = pv
                .steps
                .iter()
                .position(|s| s.position == pos)
                .unwrap_or_else(|| panic!("{p}: repetition of a position not in the line"));
            let cycle: u32 = pv.steps[first..].iter().map(|s| s.captures as u32).sum();
            assert_eq!(cycle, 0, "{p}: a cycle cannot capture");
        }
        PvEnd::Limit => {
            assert_eq!(pv.steps.len(), limit, "{p}: limit end before the limit");
            assert!(
                pos.mover_seeds() > 0 && !seen.contains(&pos),
                "{p}: should end otherwise"
            );
        }
    }
}

#[test]
fn principal_variations_end_in_game_over_repetition_or_limit() {
    let db = db();
    let mut found: [Option<(Position, Pv)>; 2] = [None, None];
    let mut checked = 0;
    let mut rng = StdRng::seed_from_u64(48);
    for _ in 0..20_000 {
        let n = rng.gen_range(2..=MAX);
        let p = index::unrank(n, rng.gen_range(0..layer_size(n))).unwrap();
        let pv = db.principal_variation(&p, 500).unwrap();
        check_pv(db, &p, 500, &pv);
        checked += 1;
        let slot = match pv.end {
            PvEnd::GameOver => 0,
            PvEnd::Repetition => 1,
            PvEnd::Limit => panic!("{p}: 500 moves without repetition or end"),
        };
        if pv.steps.len() >= 3 && found[slot].is_none() {
            found[slot] = Some((p, pv));
        }
    }
    eprintln!("{checked} principal variations checked");
    let (over_p, over) = found[0].clone().expect("a line ending in game over");
    let (rep_p, rep) = found[1].clone().expect("a line ending in repetition");
    eprintln!("game over:  {over_p} in {} moves", over.steps.len());
    eprintln!("repetition: {rep_p} in {} moves", rep.steps.len());

    // Cutting either line short ends at the limit with the same first moves.
    for (p, full) in [(over_p, &over), (rep_p, &rep)] {
        for limit in [0, 1, 2] {
            let cut = db.principal_variation(&p, limit).unwrap();
            check_pv(db, &p, limit, &cut);
            assert_eq!(cut.end, PvEnd::Limit, "{p} limit {limit}");
            assert_eq!(cut.steps[..], full.steps[..limit]);
        }
    }
    // A position whose mover has no seeds is over at once, whatever the limit.
    let done = Position::indexable([0, 0, 0, 0, 0, 0, 0, 3, 0, 0, 0, 1]).unwrap();
    for limit in [0, 10] {
        let pv = db.principal_variation(&done, limit).unwrap();
        assert_eq!(
            (pv.steps.len(), pv.end, pv.last),
            (0, PvEnd::GameOver, done)
        );
    }
    // The empty board too.
    let empty = Position([0; 12]);
    assert_eq!(
        db.principal_variation(&empty, 5).unwrap().end,
        PvEnd::GameOver
    );
}

// ---------------------------------------------------------------------------
// Concurrency

type Answer = (i8, Option<(i8, i8)>, [MoveInfo; 6], Vec<u8>);

fn answer(db: &Database, p: &Position) -> Answer {
    (
        db.score(p).unwrap(),
        db.envelope(p).unwrap().map(|e| (e.lower, e.upper)),
        db.moves(p).unwrap(),
        db.best_moves(p).unwrap(),
    )
}

#[test]
fn four_threads_agree_with_sequential_probes() {
    let positions = random_positions(4, 40_000, 0, MAX);
    let sequential: Vec<Answer> = {
        let db = Database::open(db_dir()).unwrap();
        positions.iter().map(|p| answer(&db, p)).collect()
    };
    // A fresh database, so that the threads race to map the layers.
    let shared = Database::open(db_dir()).unwrap();
    let k = positions.len();
    std::thread::scope(|s| {
        let handles: Vec<_> = (0..4)
            .map(|t| {
                let (shared, positions) = (&shared, &positions);
                s.spawn(move || {
                    // Each thread starts at a different place and goes round.
                    (0..k)
                        .map(|i| (i + t * k / 4) % k)
                        .map(|i| (i, answer(shared, &positions[i])))
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        for h in handles {
            for (i, a) in h.join().expect("thread") {
                assert_eq!(a, sequential[i], "{}", positions[i]);
            }
        }
    });
    // The database can also be moved to another thread.
    let moved = std::thread::spawn(move || shared.score(&position_with(MAX)).unwrap())
        .join()
        .unwrap();
    assert_eq!(moved, file_score(&position_with(MAX)));
}
