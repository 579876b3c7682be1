//! Propagation in waves (`src/solve/waves.rs`) gives the tables
//! depth-first propagation gives: builds with every threshold in waves to
//! the end (`AWARI_WAVES=all`, so that the small layers do not end their
//! thresholds depth-first), by both solvers, on 1 and 2 threads, equal to
//! the known-good lists of awari (0..=16), abapa, olympiad and awale
//! (0..=14). A long check (`AWARI_LONG=1`) builds 0..=18 of every rule set
//! that way, by both solvers on 1 and 2 threads.

use std::path::Path;
use std::process::Command;

const ROOT: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/..");

/// Builds `0..=max` of `rules` in waves by `solver` on `threads` threads
/// and checks the tables against `list`.
fn waves_equal_the_list(rules: &str, solver: &str, max: u32, threads: usize, list: &str) {
    let dir = tempfile::tempdir().expect("a folder");
    let d = dir.path().to_str().expect("UTF-8");
    let run = |args: &[&str]| {
        let out = Command::new(env!("CARGO_BIN_EXE_awari"))
            .args(args)
            .env("AWARI_WAVES", "all")
            .output()
            .expect("awari runs");
        assert!(
            out.status.success(),
            "awari {args:?}: {}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
    };
    let (max, threads) = (max.to_string(), threads.to_string());
    run(&[
        "build",
        "--rules",
        rules,
        "--db",
        d,
        "--max-seeds",
        &max,
        "--threads",
        &threads,
        "--solver",
        solver,
        "-q",
    ]);
    let list = Path::new(ROOT).join("data").join(list);
    run(&[
        "verify",
        "--db",
        d,
        "--checksums",
        list.to_str().expect("UTF-8"),
        "--layers",
        &format!("0..={max}"),
    ]);
}

#[test]
fn awari_in_waves_on_one_and_two_threads_equals_the_known_good_list() {
    waves_equal_the_list("awari", "memory", 16, 1, "known-good.csv");
    waves_equal_the_list("awari", "memory", 16, 2, "known-good.csv");
}

#[test]
fn abapa_in_waves_equals_its_known_good_list() {
    waves_equal_the_list("abapa", "memory", 14, 2, "known-good-abapa.csv");
}

#[test]
fn olympiad_and_awale_in_waves_equal_their_known_good_lists() {
    for solver in ["memory", "compact"] {
        waves_equal_the_list("olympiad", solver, 14, 2, "known-good-olympiad.csv");
        waves_equal_the_list("awale", solver, 14, 2, "known-good-awale.csv");
    }
}

/// The rule sets and their known-good lists.
const LISTS: [(&str, &str); 4] = [
    ("awari", "known-good.csv"),
    ("abapa", "known-good-abapa.csv"),
    ("olympiad", "known-good-olympiad.csv"),
    ("awale", "known-good-awale.csv"),
];

/// A long check (`AWARI_LONG=1`, about a quarter of an hour on 2 cores): 0..=18
/// of every rule set in waves, both solvers, 1 and 2 threads.
#[test]
fn every_rule_set_in_waves_to_layer_18_equals_its_list() {
    if !std::env::var("AWARI_LONG").is_ok_and(|v| !v.is_empty() && v != "0") {
        eprintln!("skipped, a long check (set AWARI_LONG=1 to run it)");
        return;
    }
    for (rules, list) in LISTS {
        for solver in ["memory", "compact"] {
            for threads in [1, 2] {
                waves_equal_the_list(rules, solver, 18, threads, list);
            }
        }
    }
}

#[test]
fn the_compact_solver_in_waves_equals_the_known_good_lists() {
    waves_equal_the_list("awari", "compact", 16, 1, "known-good.csv");
    waves_equal_the_list("awari", "compact", 16, 2, "known-good.csv");
    waves_equal_the_list("abapa", "compact", 14, 2, "known-good-abapa.csv");
}
