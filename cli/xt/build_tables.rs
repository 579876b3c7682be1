//! The bytes the layer builder (`awari_egdb::build` and `awari build`)
//! writes: equal to the naive solver and the in-memory solver, passing the
//! Bellman check, the envelope bounds and the VU facts, a manifest that
//! describes them, identical for any thread count, and scores-only builds
//! and their upgrade to the envelope.

use crate::builder::*;
use crate::common::{ok, s};
use crate::{facts, naive, tables, MAX};
use awari_egdb::rules::AWARI;

use awari_egdb::format::Kind;
use awari_egdb::index::layer_size;
use awari_egdb::solve::{self, Silent};

use rayon::prelude::*;
use std::collections::BTreeSet;
use std::fs;
use std::time::Instant;

/// Layers checked by the forward Bellman check.
const BELLMAN_MAX: u32 = 12;

/// VU facts up to this many seeds are checked.
const FACTS_MAX: u32 = 14;

/// Layers of the thread-count and no-envelope comparisons.
const MID_MAX: u32 = 12;

/// 3 bytes a position (2 without the envelope), and on the layers that
/// propagate in waves (a state of 4.5 GiB or more) their bitmap and
/// buckets: at most 0.5 bytes a position more.
#[test]
fn in_memory_cost_is_three_bytes_per_position_and_two_without_the_envelope() {
    for n in [20, 28, 32, 46] {
        for (envelope, bytes) in [(true, 3), (false, 2)] {
            let e = solve::memory::cost(n, envelope).estimate;
            let working = bytes * layer_size(n);
            let waves = if working >= 9 << 29 {
                layer_size(n) / 2
            } else {
                0
            };
            assert!(
                e >= working && e <= working + waves + working / 100 + solve::BASELINE_BYTES,
                "layer {n}, envelope {envelope}: {e} bytes"
            );
        }
    }
}

#[test]
fn built_tables_equal_naive_solver() {
    let t = tables();
    let d = db();
    let naive = [&t.score, &t.lower, &t.upper];
    let mut bad = Vec::new();
    for n in 0..=MAX {
        for k in 0..3 {
            let want: Vec<u8> = naive[k][n as usize].iter().map(|&v| v as u8).collect();
            if let Some(diff) =
                first_difference(n, KINDS[k].stem(), &d.tables[k][n as usize], &want)
            {
                bad.push(diff);
            }
        }
    }
    assert!(
        bad.is_empty(),
        "built tables differ from the naive solver:\n{}",
        bad.join("\n")
    );
}

#[test]
fn built_tables_pass_bellman_check() {
    let d = db();
    let t0 = Instant::now();
    // Largest layers first, so they do not finish last.
    let order: Vec<u32> = (0..=BELLMAN_MAX).rev().collect();
    let bad: Vec<String> = order
        .into_par_iter()
        .flat_map_iter(|n| {
            let s = |m: u32, g: u64| d.get(0, m, g);
            let l = |m: u32, g: u64| d.get(1, m, g);
            let u = |m: u32, g: u64| d.get(2, m, g);
            naive::bellman_check(n, &AWARI, &s, &l, &u)
        })
        .collect();
    eprintln!(
        "builder: Bellman check of layers 0..={BELLMAN_MAX} in {:.2?}",
        t0.elapsed()
    );
    assert!(
        bad.is_empty(),
        "{} mismatches, first: {:#?}",
        bad.len(),
        &bad[..bad.len().min(10)]
    );
}

#[test]
fn built_tables_respect_envelope() {
    let d = db();
    for n in layers(DB_MAX) {
        let ni = n as i8;
        let [s, lo, hi] = [0, 1, 2].map(|k| &d.tables[k][n as usize]);
        for g in 0..s.len() {
            let (s, lo, hi) = (s[g] as i8, lo[g] as i8, hi[g] as i8);
            assert!(
                -ni <= lo && lo <= s && s <= hi && hi <= ni,
                "layer {n} index {g}: lower {lo} score {s} upper {hi}"
            );
        }
    }
}

#[test]
fn built_tables_pass_vu_facts() {
    let d = db();
    let s = |n: u32, g: u64| d.get(0, n, g);
    let all = facts::load();
    let mut checked = 0;
    let mut fails = Vec::new();
    for f in all.iter().filter(|f| f.seeds <= FACTS_MAX) {
        match facts::check(f, &s) {
            Ok(()) => checked += 1,
            Err(e) => fails.push(e),
        }
    }
    eprintln!(
        "builder: VU facts with <= {FACTS_MAX} seeds: {checked} passed, {} failed (of {} rows)",
        fails.len(),
        all.len()
    );
    assert!(fails.is_empty(), "{fails:#?}");
    assert!(checked > 0, "no VU fact with <= {FACTS_MAX} seeds");
}

#[test]
fn built_manifest_matches_in_memory_solver() {
    // The library's in-memory solver gives the same bytes as the files.
    let d = db();
    let mem =
        solve::memory::solve_all(9, &awari_egdb::rules::AWARI, true).expect("in-memory solve");
    for n in 0..=9u32 {
        for k in 0..3 {
            if let Some(diff) = first_difference(
                n,
                KINDS[k].stem(),
                &d.tables[k][n as usize],
                &mem[n as usize][k],
            ) {
                panic!("files vs solve::memory::solve_all: {diff}");
            }
        }
    }
    // And the manifest read back names exactly those checksums.
    for e in &d.manifest.layers {
        for (kind, f) in e.files() {
            let k = KINDS.iter().position(|&x| x == kind).unwrap();
            assert_eq!(
                f.xxh3.to_string(),
                xxh3(&d.tables[k][e.seeds as usize]),
                "{}",
                f.name
            );
        }
    }
}

#[test]
fn output_identical_for_1_2_8_threads() {
    let mut runs = Vec::new();
    for k in [1usize, 2, 8] {
        let tmp = tempdir();
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(k)
            .build()
            .unwrap();
        let t0 = Instant::now();
        let r = pool.install(|| build_ok(&opts(tmp.path(), MID_MAX, true), &Silent));
        eprintln!(
            "builder: layers 0..={MID_MAX} on {k} thread(s): {:.2?}",
            t0.elapsed()
        );
        assert_eq!(r.built, layers(MID_MAX));
        for e in &r.manifest.layers {
            assert_eq!(e.threads, k, "layer {}: threads recorded", e.seeds);
        }
        let m = manifest(tmp.path());
        check_manifest(tmp.path(), &m, MID_MAX, true);
        let t = table_files(tmp.path());
        assert_eq!(
            t.keys().cloned().collect::<BTreeSet<_>>(),
            expected_names(MID_MAX, true)
        );
        runs.push((k, t, checksums(&m)));
    }
    let (_, t1, c1) = &runs[0];
    for (k, t, c) in &runs[1..] {
        for (name, bytes) in t1 {
            assert!(
                &t[name] == bytes,
                "{name}: {k} threads give other bytes than 1 thread"
            );
        }
        assert_eq!(c, c1, "manifest checksums, {k} threads vs 1");
    }
}

#[test]
fn no_envelope_builds_scores_only() {
    let d = db();
    let tmp = tempdir();
    let dir = tmp.path();
    let r = build_ok(&opts(dir, MID_MAX, false), &Silent);
    assert_eq!(r.built, layers(MID_MAX));
    let names: BTreeSet<String> = files(dir).into_keys().collect();
    let mut want = expected_names(MID_MAX, false);
    want.insert("manifest.json".into());
    assert_eq!(names, want, "files without the envelope");
    let m = manifest(dir);
    check_manifest(dir, &m, MID_MAX, false);
    for n in layers(MID_MAX) {
        let got = fs::read(dir.join(Kind::Score.file_name(n))).unwrap();
        if let Some(diff) = first_difference(n, "scores", &got, &d.tables[0][n as usize]) {
            panic!("--no-envelope vs envelope build: {diff}");
        }
    }
    // The command line too: a scores-only folder, same scores.
    let tmp2 = tempdir();
    let dir2 = tmp2.path().join("db");
    ok(&[
        "build",
        "--max-seeds",
        "8",
        "--out",
        s(&dir2),
        "--no-envelope",
        "--quiet",
    ]);
    let t = table_files(&dir2);
    let mut want = expected_names(8, false);
    want.extend(layers(8).into_iter().map(|n| Kind::Distance.file_name(n)));
    assert_eq!(t.keys().cloned().collect::<BTreeSet<_>>(), want);
    for n in layers(8) {
        assert!(
            t[&Kind::Score.file_name(n)] == d.tables[0][n as usize],
            "CLI --no-envelope scores.{n}"
        );
    }
    check_manifest(&dir2, &manifest(&dir2), 8, false);
}

#[test]
fn envelope_build_upgrades_scores_only_folder() {
    // A folder built without the envelope: an envelope build rebuilds every
    // layer (with a warning each) and ends with the envelope bytes.
    let tmp = tempdir();
    let dir = tmp.path();
    build_ok(&opts(dir, 8, false), &Silent);
    let rec = Recorder::default();
    let r = build_ok(&opts(dir, 8, true), &rec);
    assert_eq!(r.built, layers(8));
    let w = rec.warnings();
    assert_eq!(w.len(), 9, "one warning per layer: {w:#?}");
    assert!(w.iter().all(|m| m.contains("envelope")), "{w:#?}");
    let mem =
        solve::memory::solve_all(8, &awari_egdb::rules::AWARI, true).expect("in-memory solve");
    let t = table_files(dir);
    for n in layers(8) {
        for (k, kind) in KINDS.iter().enumerate() {
            assert!(
                t[&kind.file_name(n)] == mem[n as usize][k],
                "{}",
                kind.file_name(n)
            );
        }
    }
    check_manifest(dir, &manifest(dir), 8, true);
    // A scores-only build of an envelope folder reuses every layer.
    let r = build_ok(&opts(dir, 8, false), &Silent);
    assert_eq!(r.reused, layers(8));
    assert!(r.built.is_empty());
}
