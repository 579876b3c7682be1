//! The tables of the rule sets nothing outside this project checks yet
//! (abapa, olympiad, awale): the naive solver run on each equals the
//! builder (both solvers, every table) on layers 0..=9; every rule set's
//! tables pass its own Bellman check and fail every other's from the
//! first layer where the two differ, by the naive check and the
//! library's alike; fresh builds of 0..=16 equal the known-good lists; a
//! build into a folder of another rule set is refused before anything is
//! written.

use crate::builder::*;
use crate::naive;
use awari_egdb::build::{self, Solver};
use awari_egdb::probe::Database;
use awari_egdb::rules::{Rules, ABAPA, AWALE, AWARI, OLYMPIAD, PRESETS};
use awari_egdb::solve::{self, Silent};
use awari_egdb::store::Manifest;
use awari_egdb::store::StoreError;
use awari_egdb::ErrorKind;
use std::path::Path;
use std::sync::OnceLock;

/// Layers solved naively under each rule set.
const MAX: u32 = 9;

/// The naive tables of a preset, solved once.
pub(crate) fn naive_tables(rules: &Rules) -> &'static naive::NaiveTables {
    static T: [OnceLock<naive::NaiveTables>; PRESETS.len()] =
        [const { OnceLock::new() }; PRESETS.len()];
    let i = PRESETS.iter().position(|r| r == rules).expect("a preset");
    T[i].get_or_init(|| {
        let t0 = std::time::Instant::now();
        let t = naive::solve(MAX, rules);
        eprintln!(
            "naive solve of {rules} layers 0..={MAX}: {:.2?}",
            t0.elapsed()
        );
        t
    })
}

fn naive_bytes(rules: &Rules, n: u32) -> [Vec<u8>; 3] {
    let t = naive_tables(rules);
    [&t.score, &t.lower, &t.upper].map(|x| x[n as usize].iter().map(|&v| v as u8).collect())
}

/// The naive tables of `rules` on 0..=9 equal the in-memory solver's, the
/// compact solver's on two ranks and a build's (every table); the build's
/// manifest names the rule set; and most layers differ from awari's.
fn naive_equals_both_solvers_and_the_builder(rules: Rules) {
    let dir = tempdir();
    let mem = solve::memory::solve_all(MAX, &rules, true).expect("in-memory solve");
    let compact =
        solve::compact::solve_all(MAX, &rules, true, dir.path(), 2, 1).expect("compact solve");
    let built = tempdir();
    let mut o = opts(built.path(), MAX, true);
    o.rules = rules;
    o.solver = Solver::Compact;
    build_ok(&o, &Silent);
    let mut bad = Vec::new();
    for n in 0..=MAX {
        let want = naive_bytes(&rules, n);
        for (k, kind) in KINDS.iter().enumerate() {
            let file = std::fs::read(built.path().join(kind.file_name(n))).expect("table");
            for (who, got) in [
                ("in memory", &mem[n as usize][k]),
                ("compact, 2 ranks", &compact[n as usize][k]),
                ("built", &file),
            ] {
                if let Some(d) = first_difference(n, kind.stem(), got, &want[k]) {
                    bad.push(format!("{who}: {d}"));
                }
            }
        }
    }
    assert!(
        bad.is_empty(),
        "{rules} tables differ from the naive solver:\n{}",
        bad.join("\n")
    );
    // The rule sets differ from layer 2 or 3 on (a grand slam of 2 seeds,
    // a move that does not feed).
    let awari = solve::memory::solve_all(MAX, &AWARI, true).expect("awari solve");
    let differ = (0..=MAX)
        .filter(|&n| awari[n as usize] != mem[n as usize])
        .count();
    assert!(
        differ >= 7,
        "only {differ} {rules} layers differ from awari's"
    );
    assert_eq!(manifest(built.path()).rules(), rules);
}

#[test]
fn naive_abapa_tables_equal_both_solvers_and_the_builder() {
    naive_equals_both_solvers_and_the_builder(ABAPA);
}

#[test]
fn naive_olympiad_tables_equal_both_solvers_and_the_builder() {
    naive_equals_both_solvers_and_the_builder(OLYMPIAD);
}

#[test]
fn naive_awale_tables_equal_both_solvers_and_the_builder() {
    naive_equals_both_solvers_and_the_builder(AWALE);
}

/// A copy of the folder `from` whose manifest names `rules` instead: the
/// library then checks the tables by that rule set's equations.
fn relabelled(from: &Path, rules: &Rules) -> tempfile::TempDir {
    let to = tempdir();
    for e in std::fs::read_dir(from).expect("folder") {
        let p = e.expect("entry").path();
        if p.file_name().unwrap() != "build.lock" {
            std::fs::copy(&p, to.path().join(p.file_name().unwrap())).expect("copy");
        }
    }
    let mut m = manifest(to.path());
    let fresh = Manifest::new(rules);
    (m.rule_set, m.rules) = (fresh.rule_set, fresh.rules);
    let text = serde_json::to_string_pretty(&m).expect("JSON");
    std::fs::write(to.path().join("manifest.json"), text).expect("manifest");
    to
}

/// For every pair of rule sets (tables of `a`, equations of `b`): the
/// naive Bellman check and the library's (`verify::bellman_check` on a
/// build of `a` relabelled `b`) fail on the same layers; with `a == b` on
/// none; with `a != b` on every layer from the first where the two rule
/// sets' tables differ (and on none below it).
#[test]
fn each_rule_set_passes_its_own_bellman_check_and_fails_the_others() {
    let mut report = Vec::new();
    for a in PRESETS {
        let t = naive_tables(&a);
        let get = |x: &'static [Vec<i8>]| move |n: u32, g: u64| x[n as usize][g as usize];
        let (s, l, u) = (get(&t.score), get(&t.lower), get(&t.upper));
        let built = tempdir();
        let mut o = opts(built.path(), MAX, true);
        o.rules = a;
        build_ok(&o, &Silent);
        for b in PRESETS {
            let folder = relabelled(built.path(), &b);
            let db = Database::open(folder.path()).expect("open");
            assert_eq!(db.rules(), &b);
            let first_differing = (0..=MAX).find(|&n| naive_bytes(&a, n) != naive_bytes(&b, n));
            let mut failing = Vec::new();
            for n in 0..=MAX {
                let naive_bad = naive::bellman_check(n, &b, &s, &l, &u).len() as u64;
                let lib = awari_egdb::verify::bellman_check(&db, n, 0).expect("check");
                assert_eq!(
                    lib.mismatches, naive_bad,
                    "{a} tables, {b} equations, layer {n}: the checks disagree"
                );
                if naive_bad > 0 {
                    failing.push(n);
                }
            }
            let want: Vec<u32> = match first_differing {
                _ if a == b => vec![],
                Some(d) => (d..=MAX).collect(),
                None => vec![],
            };
            report.push(format!("{a} under {b}: failing {failing:?}"));
            assert_eq!(failing, want, "{a} tables under the {b} equations");
            assert!(a == b || first_differing.is_some(), "{a} and {b} agree");
        }
    }
    eprintln!("{}", report.join("\n"));
}

#[test]
fn a_folder_of_one_rule_set_refuses_a_build_of_the_other() {
    let dir = tempdir();
    let mut o = opts(dir.path(), 4, true);
    o.rules = ABAPA;
    build_ok(&o, &Silent);
    let before = files(dir.path());
    let mut o = opts(dir.path(), 6, true);
    o.rules = AWARI;
    match build::build(&o, &Silent) {
        Err(e) if matches!(e.cause(), Some(StoreError::RulesDiffer { .. })) => {
            let msg = e.to_string();
            assert!(msg.contains("follow the abapa rules, not awari"), "{msg}");
            assert_eq!(e.kind(), ErrorKind::Input);
        }
        other => panic!("expected a refusal, got {:?}", other.map(|r| r.built)),
    }
    assert_eq!(files(dir.path()), before, "nothing written");
    // The same rule set resumes.
    let mut o = opts(dir.path(), 6, true);
    o.rules = ABAPA;
    let r = build_ok(&o, &Silent);
    assert_eq!(r.built, vec![5, 6]);
}

/// The C++ abapa solver of jh85/smallgames publishes its share of "exact"
/// positions (`gM + gN = n`: our `lower == upper`) per seed count, to one
/// decimal; layers 20 and 24 (3.8%, 2.4%) are checked in
/// docs/verification.md.
const PUBLISHED_PINNED: [(u32, f64); 4] = [(4, 72.8), (8, 61.1), (12, 18.7), (16, 6.5)];

/// A fresh build of 0..=16 of `rules` into a new folder, and its tables
/// compared with the repository's known-good list of `rules` (which
/// reaches layer `reaches`); the awari list is refused for it.
fn fresh_0_to_16_equals_the_known_good_list(rules: Rules, reaches: u32) -> tempfile::TempDir {
    let dir = tempdir();
    let mut o = opts(dir.path(), 16, true);
    o.rules = rules;
    build_ok(&o, &Silent);
    let path = format!(
        "{}/data/known-good-{}.csv",
        concat!(env!("CARGO_MANIFEST_DIR"), "/.."),
        rules.name
    );
    let known = awari_egdb::verify::read_known_good(Path::new(&path)).expect("list");
    assert_eq!(known.rules, rules);
    assert!(
        known.tables.iter().any(|k| k.layer == reaches),
        "the {rules} list reaches layer {reaches}"
    );
    let builtin = awari_egdb::verify::builtin_known_good(&rules).expect("built in");
    assert_eq!(builtin.tables, known.tables, "the built-in {rules} list");
    let r = awari_egdb::verify::compare_checksums(dir.path(), &known, 0..=16).expect("compare");
    assert_eq!(r.tables.len(), 51);
    let bad: Vec<_> = r.failures().collect();
    assert!(bad.is_empty(), "{rules}: {bad:?}");
    let awari =
        awari_egdb::verify::read_known_good(Path::new(crate::common::KNOWN_GOOD)).expect("list");
    assert!(
        awari_egdb::verify::compare_checksums(dir.path(), &awari, 0..=16)
            .is_err_and(|e| matches!(e.cause(), Some(StoreError::RulesDiffer { .. })))
    );
    dir
}

#[test]
fn olympiad_0_to_16_equal_the_known_good_list() {
    fresh_0_to_16_equals_the_known_good_list(OLYMPIAD, 24);
}

#[test]
fn awale_0_to_16_equal_the_known_good_list() {
    fresh_0_to_16_equals_the_known_good_list(AWALE, 24);
}

#[test]
fn abapa_0_to_16_equal_the_known_good_list_and_the_published_pinned_shares() {
    let dir = fresh_0_to_16_equals_the_known_good_list(ABAPA, 28);
    let m = manifest(dir.path());
    for (n, share) in PUBLISHED_PINNED {
        let l = m.layer(n).expect("built");
        let ours = 100.0 * l.pinned.expect("envelope") as f64 / l.positions as f64;
        assert_eq!(
            format!("{ours:.1}"),
            format!("{share:.1}"),
            "layer {n}: {} of {} pinned",
            l.pinned.unwrap(),
            l.positions
        );
    }
}
