//! The abapa tables, which nothing outside this project checks yet: the
//! naive solver run on the abapa rules equals the builder (both solvers,
//! every table) on layers 0..=9, its tables pass the Bellman check under
//! abapa and fail it under awari, and a build into a folder of the other
//! rule set is refused before anything is written.

use crate::builder::*;
use crate::naive;
use awari_egdb::build::{self, Solver};
use awari_egdb::rules::{ABAPA, AWARI};
use awari_egdb::solve::{self, Silent};
use awari_egdb::{Error, ErrorKind};
use std::sync::OnceLock;

/// Layers solved naively under abapa.
const MAX: u32 = 9;

fn naive_abapa() -> &'static naive::NaiveTables {
    static T: OnceLock<naive::NaiveTables> = OnceLock::new();
    T.get_or_init(|| naive::solve(MAX, &ABAPA))
}

fn naive_bytes(n: u32) -> [Vec<u8>; 3] {
    let t = naive_abapa();
    [&t.score, &t.lower, &t.upper].map(|x| x[n as usize].iter().map(|&v| v as u8).collect())
}

#[test]
fn naive_abapa_tables_equal_both_solvers_and_the_builder() {
    let dir = tempdir();
    let mem = solve::memory::solve_all(MAX, &ABAPA, true).expect("in-memory solve");
    let compact =
        solve::compact::solve_all(MAX, &ABAPA, true, dir.path(), 2, 1).expect("compact solve");
    let built = tempdir();
    let mut o = opts(built.path(), MAX, true);
    o.rules = ABAPA;
    o.solver = Solver::Compact;
    build_ok(&o, &Silent);
    let mut bad = Vec::new();
    for n in 0..=MAX {
        let want = naive_bytes(n);
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
        "abapa tables differ from the naive solver:\n{}",
        bad.join("\n")
    );
    // The rule sets differ from layer 2 on (a grand slam of 2 seeds).
    let awari = solve::memory::solve_all(MAX, &AWARI, true).expect("awari solve");
    let differ = (0..=MAX)
        .filter(|&n| awari[n as usize] != mem[n as usize])
        .count();
    assert!(
        differ >= 7,
        "only {differ} abapa layers differ from awari's"
    );
    assert_eq!(manifest(built.path()).rules(), ABAPA);
}

#[test]
fn naive_abapa_tables_pass_the_bellman_check_of_abapa_only() {
    let t = naive_abapa();
    let get = |x: &'static [Vec<i8>]| move |n: u32, g: u64| x[n as usize][g as usize];
    let (s, l, u) = (get(&t.score), get(&t.lower), get(&t.upper));
    let mut awari_bad = 0;
    for n in 0..=MAX {
        let bad = naive::bellman_check(n, &ABAPA, &s, &l, &u);
        assert!(bad.is_empty(), "layer {n}: {:#?}", &bad[..bad.len().min(5)]);
        awari_bad += naive::bellman_check(n, &AWARI, &s, &l, &u).len();
    }
    assert!(
        awari_bad > 0,
        "the abapa tables satisfy awari's equations too"
    );
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
        Err(e @ Error::RulesDiffer { .. }) => {
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

#[test]
fn abapa_0_to_16_equal_the_known_good_list_and_the_published_pinned_shares() {
    let dir = tempdir();
    let mut o = opts(dir.path(), 16, true);
    o.rules = ABAPA;
    build_ok(&o, &Silent);
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
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/data/known-good-abapa.csv");
    let known = awari_egdb::verify::read_known_good(std::path::Path::new(path)).expect("list");
    assert_eq!(known.rules, ABAPA);
    assert!(
        known.tables.iter().any(|k| k.layer == 28),
        "the list reaches layer 28"
    );
    let r = awari_egdb::verify::compare_checksums(dir.path(), &known, 0..=16).expect("compare");
    assert_eq!(r.tables.len(), 51);
    let bad: Vec<_> = r.failures().collect();
    assert!(bad.is_empty(), "{bad:?}");
    // The awari list is refused for this folder.
    let awari =
        awari_egdb::verify::read_known_good(std::path::Path::new(crate::common::KNOWN_GOOD))
            .expect("list");
    assert!(matches!(
        awari_egdb::verify::compare_checksums(dir.path(), &awari, 0..=16),
        Err(Error::RulesDiffer { .. })
    ));
}
