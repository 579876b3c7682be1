//! Propagation in waves (`src/solve/waves.rs`) gives the tables
//! depth-first propagation gives: builds with every threshold in waves to
//! the end (`AWARI_WAVES=all`, so that the small layers do not end their
//! thresholds depth-first), by both solvers, on 1 and 2 threads, equal to
//! the known-good lists of awari (0..=16) and abapa (0..=14).

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
fn the_compact_solver_in_waves_equals_the_known_good_lists() {
    waves_equal_the_list("awari", "compact", 16, 1, "known-good.csv");
    waves_equal_the_list("awari", "compact", 16, 2, "known-good.csv");
    waves_equal_the_list("abapa", "compact", 14, 2, "known-good-abapa.csv");
}
