//! Building within a memory budget: the compact solver (one byte per
//! position, lower layers streamed) under `--memory-limit`, lower layers kept
//! only compressed (`--compress-finished`), and the tables still equal to
//! the known-good checksums.

use crate::builder::*;
use crate::common::{awari, s};
use awari_egdb::build::{self, Solver};
use awari_egdb::index::layer_size;
use awari_egdb::plan::PlanError;
use awari_egdb::solve::{self, Silent};
use awari_egdb::store::Manifest;
use awari_egdb::store::StoreError;
use awari_egdb::ErrorKind;
use std::fs;
use std::path::Path;

/// Layers 0..=20 under a memory limit smaller than half of layer 20's
/// in-memory state (3 bytes per position): the layers that do not fit are
/// built by the compact solver, every layer's peak resident memory (mapped
/// pages included) stays within the limit plus 64 MiB, and every table
/// equals the known-good list. A long check ([`long`]).
#[test]
fn layers_0_to_20_within_half_of_layer_20s_state_equal_the_known_good_checksums() {
    if !long("layers_0_to_20_within_half_of_layer_20s_state") {
        return;
    }
    let limit: u64 = 112 << 20;
    assert!(2 * limit < 3 * layer_size(20));
    let tmp = tempdir();
    let dir = tmp.path().join("db");
    let m = build_0_to_20_within(&dir, 112, &[]);
    let mut compact = Vec::new();
    for l in &m.layers {
        assert!(l.estimate_bytes <= limit, "layer {}", l.seeds);
        if l.solver.as_deref() == Some("compact") {
            compact.push(l.seeds);
            let io = l.io.as_ref().expect("the compact solver reports its I/O");
            assert!(io.scratch_written_bytes > 0 && io.lower_read_bytes > 0);
        }
    }
    // Layer 19's in-memory state (3 bytes per position) and mapped lower
    // tables exceed the limit; layer 20's state alone does.
    assert!(
        compact.contains(&19) && compact.contains(&20),
        "{compact:?}"
    );
    assert_known_good(&dir, 3 * 21);
}

/// The same budget with `--compress-finished`: compressing a layer's
/// tables (checksum, encode, verify, each a pass over the mapped raw table)
/// releases each window once it is done, so the mapped tables do not push
/// the peak past the limit plus 64 MiB (before, they took layer 20 to
/// 212 MiB). A long check ([`long`]).
#[test]
fn compress_finished_within_the_budget() {
    if !long("compress_finished_within_the_budget") {
        return;
    }
    let tmp = tempdir();
    let dir = tmp.path().join("db");
    // The guard counts the largest compressed lower file: the full form
    // of layer 19 (the three tables in one file).
    let m = build_0_to_20_within(&dir, 140, &["--compress-finished"]);
    assert!(m.layer(20).is_some() && m.compressed("scores.20").is_some());
    assert_known_good(&dir, 3 * 21);
}

/// `--compress-finished` leaves each finished layer only compressed, and the
/// layers above read them so (the compact solver streams them); a resumed
/// build goes on from the compressed layers. The tables equal the
/// known-good list.
#[test]
fn compress_finished_keeps_only_compressed_layers_and_builds_on_them() {
    let tmp = tempdir();
    let dir = tmp.path().join("db");
    let build = |max: &str| {
        let o = awari(
            &[
                "build",
                "--max-seeds",
                max,
                "--out",
                s(&dir),
                "--compress-finished",
                "--quiet",
            ],
            None,
        );
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    };
    build("13");
    build("15");
    let names: Vec<String> = fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    for n in 0..=15u32 {
        for stem in ["scores", "lower", "upper"] {
            assert!(!names.contains(&format!("{stem}.{n}")), "{stem}.{n} is raw");
        }
        // The full form: the layer's three tables in one file.
        assert!(names.contains(&format!("tables.{n}.zst")), "tables.{n}.zst");
    }
    let m = manifest(&dir);
    for n in 1..=15u32 {
        let l = m.layer(n).unwrap();
        assert_eq!(l.solver.as_deref(), Some("compact"), "layer {n}");
    }
    assert_known_good(&dir, 3 * 16);
}

/// The compact solver gives the in-memory solver's bytes for every layer,
/// with and without the envelope, whatever the thread count.
#[test]
fn compact_and_in_memory_builds_are_the_same_bytes() {
    for envelope in [true, false] {
        let mut got = Vec::new();
        for (solver, threads) in [
            (Solver::Memory, 2),
            (Solver::Compact, 1),
            (Solver::Compact, 3),
        ] {
            let tmp = tempdir();
            let dir = tmp.path().join("db");
            let mut o = opts(&dir, 14, envelope);
            o.solver = solver;
            let pool = rayon::ThreadPoolBuilder::new()
                .num_threads(threads)
                .build()
                .unwrap();
            pool.install(|| build::build(&o, &Silent)).unwrap();
            got.push(table_files(&dir));
        }
        assert!(
            got[0] == got[1],
            "compact (1 thread) differs, envelope {envelope}"
        );
        assert!(
            got[0] == got[2],
            "compact (3 threads) differs, envelope {envelope}"
        );
    }
}

/// A scratch folder that does not exist is refused before anything is
/// written, naming it.
#[test]
fn compact_solver_with_a_missing_scratch_folder_is_an_error() {
    let tmp = tempdir();
    let dir = tmp.path().join("db");
    let mut o = opts(&dir, 6, true);
    o.solver = Solver::Compact;
    o.scratch = Some(tmp.path().join("no-such-folder"));
    match build::build(&o, &Silent) {
        Err(e) if matches!(e.cause(), Some(StoreError::NoSuchFolder(_))) => {
            assert_eq!(e.kind(), ErrorKind::Input);
            assert_eq!(e.path(), Some(tmp.path().join("no-such-folder").as_path()))
        }
        other => panic!("{other:?}"),
    }
}

/// A limit below what the compact solver needs is refused before anything
/// is written, and the message says which solver and what it needs.
#[test]
fn a_limit_below_the_compact_solver_is_refused_with_its_needs() {
    let tmp = tempdir();
    let dir = tmp.path().join("db");
    let mut o = opts(&dir, 20, true);
    o.memory_limit = Some(20 << 20);
    match build::build(&o, &Silent) {
        Err(e) if matches!(e.cause(), Some(PlanError::Memory { .. })) => {
            let text = e.to_string();
            assert!(text.contains("compact solver"), "{text}");
        }
        other => panic!("{other:?}"),
    }
    assert!(!dir.exists(), "nothing written");
    assert!(
        solve::compact::cost(20, 1, false).estimate < solve::memory::cost(20, true).estimate / 2
    );
}

/// Builds layers 0..=20 into `dir` on 2 threads under `--memory-limit
/// {limit_mib}MiB` (and `extra`), and checks that every layer's peak
/// resident memory stayed within the limit plus 64 MiB.
fn build_0_to_20_within(dir: &Path, limit_mib: u64, extra: &[&str]) -> Manifest {
    let limit_arg = format!("{limit_mib}MiB");
    let mut args = vec![
        "build",
        "--max-seeds",
        "20",
        "--out",
        s(dir),
        "--memory-limit",
        &limit_arg,
        "--threads",
        "2",
        "--quiet",
        // The budgets here are below the distance pass's 2 bytes a
        // position of layer 20 (about 170 MiB): these builds check the
        // compact solver's budget, without the distance.
        "--no-distance",
    ];
    args.extend_from_slice(extra);
    let o = awari(&args, None);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let m = manifest(dir);
    let limit = limit_mib << 20;
    for l in &m.layers {
        assert!(
            l.peak_rss_bytes <= limit + (64 << 20),
            "layer {}: peak RSS {} over the limit {limit} + 64 MiB",
            l.seeds,
            l.peak_rss_bytes
        );
    }
    m
}
