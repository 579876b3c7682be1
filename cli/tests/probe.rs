//! The probing library (`awari_egdb::probe`) against a folder of layers
//! 0..=12 built once per run, the good path: exact scores equal to the file
//! bytes, Bellman consistency of `moves`, best moves, the envelope,
//! `verify`, VU folders and in-memory tables, and concurrent probes. Bad
//! folders and boards are in `probe_errors.rs`, principal variations in
//! `probe_pv.rs`; the shared helpers in `common/probe.rs`.

mod common;

use awari_egdb::format::Kind;
use awari_egdb::index::{layer_size, LayerIter};
use awari_egdb::probe::{lookup, Database, LayerTables, MoveInfo};
use awari_egdb::rules::Position;
use awari_egdb::store::StoreError;
use common::probe::{db, file_score, layers, position_with, random_positions, tables};
use common::{db_dir, vu_copy, MAX};

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
                dist: None,
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
                dist: None,
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
    match mem
        .score(&position_with(MAX + 1))
        .map_err(|e| e.downcast::<StoreError>())
    {
        Err(Ok(StoreError::MissingLayer { layer, .. })) => assert_eq!(layer, MAX + 1),
        other => panic!("want MissingLayer, got {other:?}"),
    }
    // Sparse layer lists: only layer 5 given, as slices of a static.
    let five: &'static [u8] = Box::leak(tables(Kind::Score)[5].clone().into_boxed_slice());
    let mut only5: Vec<Option<LayerTables<&'static [u8]>>> = (0..=5).map(|_| None).collect();
    only5[5] = Some(LayerTables {
        score: five,
        envelope: None,
        dist: None,
    });
    let m5 = Database::from_tables(only5).unwrap();
    assert_eq!(m5.layers(), vec![5]);
    let p = position_with(5);
    assert_eq!(m5.score(&p).unwrap(), file_score(&p));
    assert!(m5
        .score(&position_with(4))
        .is_err_and(|e| matches!(e.cause(), Some(StoreError::MissingLayer { layer: 4, .. }))));
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

/// The batch through `pread` (nearby entries of a table read with one
/// `pread`) equals one probe after another on the mapped tables: a dense
/// batch (every position of layers 0..=8 twice, in a shuffled order, and
/// 200,000 random ones of 0..=MAX: long runs), a sparse one (single reads)
/// and an empty one; a table overwritten with a value no score of its
/// layer takes fails the batch, naming it.
#[test]
fn batch_through_pread_reads_runs_and_equals_one_probe_at_a_time() {
    use rand::{rngs::StdRng, seq::SliceRandom, SeedableRng};
    let dir = db_dir();
    let pread = Database::open(dir).unwrap();
    // SAFETY: nothing writes to the shared folder while the tests run.
    let mapped = unsafe { Database::open_mapped(dir) }.unwrap();
    let mut dense: Vec<Position> = (0..=8)
        .flat_map(|n| LayerIter::new(n).map(|(_, p)| p))
        .collect();
    dense.extend(dense.clone());
    dense.extend(random_positions(36, 200_000, 0, MAX));
    dense.shuffle(&mut StdRng::seed_from_u64(36));
    for ps in [dense, random_positions(37, 50, 0, MAX), Vec::new()] {
        let want: Vec<i8> = ps.iter().map(|p| mapped.score(p).unwrap()).collect();
        let mut got = vec![0i8; ps.len()];
        pread.scores(&ps, &mut got).unwrap();
        assert!(got == want, "{} positions", ps.len());
    }
    let copy = common::full_copy("awari-probe-batch-bad-");
    let table = copy.join("scores.9");
    let len = std::fs::metadata(&table).unwrap().len() as usize;
    std::fs::write(&table, vec![0x7fu8; len]).unwrap();
    let bad = Database::open(&copy).unwrap();
    let ps = random_positions(38, 10_000, 0, MAX);
    let mut out = vec![0i8; ps.len()];
    let e = bad.scores(&ps, &mut out).unwrap_err();
    assert!(e.to_string().contains("scores.9"), "{e}");
}

/// A batch can ask for "not available" per board: boards of layers the
/// folder lacks get `None`, the rest the scores `score` gives (a board
/// without a Goedel number too, answered from its moves); the plain batch
/// answers that board the same and fails on the missing layer.
#[test]
fn a_batch_can_say_not_available_per_board() {
    let db = Database::open(db_dir()).unwrap();
    let full = Position([1; 12]); // 12 seeds, every opponent pit full
    let above = Position([MAX as u8 + 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]);
    let mut ps = random_positions(7, 50, 0, MAX);
    ps.insert(10, above);
    ps.insert(20, full);
    let mut out = vec![None; ps.len()];
    let missing = db.scores_where_built(&ps, &mut out).unwrap();
    assert_eq!(missing, 1);
    for (p, v) in ps.iter().zip(&out) {
        if *p == above {
            assert_eq!(*v, None);
        } else {
            assert_eq!(*v, Some(db.score(p).unwrap()), "{p}");
        }
    }
    let moves = db.moves(&full).unwrap();
    assert_eq!(out[20], moves.iter().filter_map(|m| m.score).max());
    let mut plain = vec![0i8; ps.len()];
    match db
        .scores(&ps, &mut plain)
        .map_err(|e| e.downcast::<StoreError>())
    {
        Err(Ok(StoreError::MissingLayer { layer, .. })) => assert_eq!(layer, MAX + 1),
        other => panic!("{other:?}"),
    }
    ps.remove(10);
    plain.pop();
    db.scores(&ps, &mut plain).unwrap();
    assert_eq!(plain[19], out[20].unwrap());
}
