//! The distance table (`dist.n`) as the builder makes it: the same bytes
//! for any number of threads and either solver, added to a folder built
//! without it, checked by the forward check against its recurrence (a
//! changed entry is found), and read back as the probe's `distance`.

use awari_egdb::build::{build, BuildOptions, Silent, Solver};
use awari_egdb::format::Kind;
use awari_egdb::probe::{Database, Distance};
use awari_egdb::rules::{Rules, ABAPA, AWARI};
use awari_egdb::verify::bellman_check;
use std::path::Path;

const MAX: u32 = 13;

fn built(rules: &Rules, threads: usize, solver: Solver, distance: bool) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let opts = BuildOptions {
        rules: *rules,
        max_seeds: MAX,
        solver,
        distance,
        ..BuildOptions::new(dir.path())
    };
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()
        .unwrap();
    pool.install(|| build(&opts, &Silent)).unwrap();
    dir
}

fn dist(dir: &Path, n: u32) -> Vec<u8> {
    std::fs::read(dir.join(Kind::Distance.file_name(n))).unwrap()
}

#[test]
fn the_same_bytes_for_any_thread_count_and_either_solver() {
    for rules in [&AWARI, &ABAPA] {
        let one = built(rules, 1, Solver::Memory, true);
        for (threads, solver) in [
            (2, Solver::Memory),
            (3, Solver::Memory),
            (2, Solver::Compact),
        ] {
            let other = built(rules, threads, solver, true);
            for n in 0..=MAX {
                assert_eq!(
                    dist(one.path(), n),
                    dist(other.path(), n),
                    "{} layer {n}, {threads} threads, {solver:?}",
                    rules.name
                );
            }
        }
        // A folder built without it gets the same tables from its scores.
        let later = built(rules, 2, Solver::Auto, false);
        assert!(!later.path().join("dist.5").exists());
        let db = Database::open(later.path()).unwrap();
        assert!(!db.has_distance(5).unwrap());
        let opts = BuildOptions {
            rules: *rules,
            max_seeds: MAX,
            ..BuildOptions::new(later.path())
        };
        let r = build(&opts, &Silent).unwrap();
        assert!(r.built.is_empty(), "nothing rebuilt: {:?}", r.built);
        for n in 0..=MAX {
            assert_eq!(dist(one.path(), n), dist(later.path(), n), "layer {n}");
            let e = r.manifest.layer(n).unwrap();
            assert!(e.dist.is_some(), "layer {n} recorded with its distance");
        }
    }
}

#[test]
fn the_forward_check_finds_a_changed_distance() {
    let dir = built(&AWARI, 2, Solver::Auto, true);
    let db = Database::open(dir.path()).unwrap();
    for n in 0..=MAX {
        let v = bellman_check(&db, n, 4).unwrap();
        assert!(v.distance, "layer {n}");
        assert_eq!(v.mismatches, 0, "layer {n}: {:?}", v.first_mismatches);
    }
    // One entry of layer 11 one more: it and the position(s) whose best
    // line goes through it disagree with their children.
    let mut t = dist(dir.path(), 11);
    let g = t.iter().position(|&d| (2..100).contains(&d)).unwrap();
    t[g] += 1;
    let changed = Database::from_tables_of(
        &AWARI,
        (0..=MAX)
            .map(|n| {
                Some(awari_egdb::probe::LayerTables {
                    score: std::fs::read(dir.path().join(format!("scores.{n}"))).unwrap(),
                    envelope: None,
                    dist: Some(if n == 11 {
                        t.clone()
                    } else {
                        dist(dir.path(), n)
                    }),
                })
            })
            .collect(),
    )
    .unwrap();
    let v = bellman_check(&changed, 11, 4).unwrap();
    assert!(v.mismatches >= 1);
    let first = &v.first_mismatches[0];
    assert_eq!(first.table, "dist");
    assert!(v.first_mismatches.iter().any(|m| m.index == g as u64));
}

#[test]
fn the_probe_reads_the_distance_and_best_play_follows_it() {
    let dir = built(&AWARI, 2, Solver::Auto, true);
    let db = Database::open(dir.path()).unwrap();
    let mut seen = 0;
    for n in 1..=MAX {
        let t = dist(dir.path(), n);
        for g in (0..t.len()).step_by(97) {
            let p = awari_egdb::index::unrank(n, g as u64).unwrap();
            let d = db.distance(&p).unwrap().unwrap();
            assert_eq!(Distance::of_byte(t[g]), Some(d));
            // The best move's distance is the position's (the distance
            // falls by one a ply along best play).
            let moves = db.moves(&p).unwrap();
            if let Some(best) = db.best_move(&p).unwrap() {
                let m = moves[best as usize];
                assert_eq!(m.score, Some(db.score(&p).unwrap()));
                assert_eq!(m.distance, Some(d), "{p}");
                seen += 1;
            }
        }
    }
    assert!(seen > 1000);
    // A folder without it answers, without a distance.
    let plain = built(&AWARI, 2, Solver::Auto, false);
    let db = Database::open(plain.path()).unwrap();
    let p = awari_egdb::index::unrank(8, 100).unwrap();
    assert_eq!(db.distance(&p).unwrap(), None);
    assert!(db.moves(&p).unwrap().iter().all(|m| m.distance.is_none()));
}
