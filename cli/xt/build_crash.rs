//! Builds and compressions that die: killed (SIGKILL) at random moments,
//! and aborted at each named fault point (`AWARI_FAULT`, `src/fault.rs`).
//! Whatever the manifest lists is complete at every moment, and a rerun
//! ends with the same bytes as an uninterrupted build.

use crate::builder::*;
use crate::common::{awari, awari_command, awari_in, ok, s, scratch, text, KNOWN_GOOD};

use awari_egdb::fault;
use awari_egdb::solve::Silent;
use awari_egdb::store::Manifest;

use std::collections::BTreeSet;
use std::ffi::OsStr;
use std::fs;
use std::io::{BufRead, BufReader, Read};
use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::OnceLock;
use std::time::{Duration, Instant};

/// A quiet run says nothing on stderr, except, after a run killed in the
/// middle of a layer, which layer that was: the first one the manifest did
/// not list when this run started.
fn only_interrupted_warning(stderr: &str, listed: &[u32]) -> Result<(), String> {
    if stderr.is_empty() {
        return Ok(());
    }
    let next = listed.iter().max().map_or(0, |&n| n + 1);
    let expected = format!(
        "awari: warning: the last build stopped in the middle of layer {next}; it is built again\n"
    );
    if stderr == expected {
        Ok(())
    } else {
        Err(format!(
            "stderr {stderr:?}, expected nothing or {expected:?}"
        ))
    }
}

#[test]
fn killed_build_resumes_to_same_bytes() {
    let t0 = Instant::now();
    let tmp = tempdir();
    let dir = tmp.path().join("db");
    let max = DB_MAX.to_string();
    // Without the distance, as the shared folder it is compared with.
    let args = [
        "build",
        "--max-seeds",
        &max,
        "--out",
        s(&dir),
        "--quiet",
        "--no-distance",
    ];
    let spawn = || {
        awari_command()
            .args(args)
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .expect("spawn awari build")
    };
    // Each run is killed at a named point of the work (`AWARI_PAUSE`: the
    // build says where it paused and waits for its standard input to
    // close), not at a moment of the clock:
    // mid-sweep, and with a table written but not yet renamed. Each rerun
    // resumes after the last finished layer and is killed further on.
    let moments = [
        ("mid-envelope", (DB_MAX - 3).to_string()),
        ("before-rename", format!("lower.{}", DB_MAX - 2)),
        ("mid-score", (DB_MAX - 2).to_string()),
        ("mid-envelope", (DB_MAX - 1).to_string()),
        ("mid-score", (DB_MAX - 1).to_string()),
    ];
    // The layers the manifest listed when the run started.
    let mut listed_before: Vec<u32> = Vec::new();
    for (i, (point, what)) in moments.iter().enumerate() {
        let mut child = awari_command()
            .args(args)
            .env(fault::PAUSE, format!("{point}:{what}"))
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .expect("spawn awari build");
        let start = Instant::now();
        // Held open: the build waits at the point until it is closed.
        let _hold = child.stdin.take();
        let mut err = BufReader::new(child.stderr.take().expect("piped stderr"));
        let mut stderr = String::new();
        let mut line = String::new();
        let paused = format!("awari: paused at {point}:{what}\n");
        loop {
            line.clear();
            if err.read_line(&mut line).expect("read stderr") == 0 {
                panic!("run {i}: ended before {point}:{what}: {stderr}");
            }
            if line == paused {
                break;
            }
            stderr.push_str(&line);
        }
        child.kill().expect("kill the build");
        let at = start.elapsed();
        child.wait().expect("reap the build");
        err.read_to_string(&mut stderr).expect("read stderr");
        assert!(!stderr.contains("panicked"), "run {i}: {stderr}");
        only_interrupted_warning(&stderr, &listed_before)
            .unwrap_or_else(|e| panic!("run {i}: {e}"));
        // At any moment, whatever the manifest lists is complete and correct.
        let listed = listed_files_verify(&dir);
        eprintln!(
            "builder: run {i} killed at {point}:{what} after {at:.2?}; manifest lists layers \
             {listed:?}; temporary files {:?}",
            tmp_files(&dir)
        );
        listed_before = listed;
    }
    // The last run finishes.
    let mut child = spawn();
    let start = Instant::now();
    while child.try_wait().expect("poll child").is_none() {
        if start.elapsed() > Duration::from_secs(120) {
            let _ = child.kill();
            panic!("the final build did not finish in 120 s");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let out = child.wait_with_output().expect("reap the build");
    let stderr = text(&out.stderr);
    assert!(out.status.success(), "final run: {:?} {stderr}", out.status);
    only_interrupted_warning(&stderr, &listed_before).unwrap_or_else(|e| panic!("final run: {e}"));
    eprintln!(
        "builder: kill test: final run {:.2?}, whole test {:.2?}",
        start.elapsed(),
        t0.elapsed()
    );

    // Same files, same checksums as the uninterrupted build.
    let d = db();
    listed_files_verify(&dir);
    let all = files(&dir);
    let names: BTreeSet<String> = all.keys().cloned().collect();
    let mut want = expected_names(DB_MAX, true);
    want.insert("manifest.json".into());
    assert_eq!(names, want, "files after the interrupted build");
    for n in layers(DB_MAX) {
        for (k, kind) in KINDS.iter().enumerate() {
            let name = kind.file_name(n);
            if let Some(diff) =
                first_difference(n, kind.stem(), &all[&name], &d.tables[k][n as usize])
            {
                panic!("interrupted vs uninterrupted build: {diff}");
            }
        }
    }
    let m = manifest(&dir);
    assert_eq!(checksums(&m), checksums(&d.manifest), "manifest checksums");
    check_manifest(&dir, &m, DB_MAX, true);
}

/// A build killed right after its first table is renamed into place must
/// resume (the builder claims the folder with an empty manifest first).
#[test]
fn killed_before_first_manifest_resumes() {
    for trial in 0..20 {
        let tmp = tempdir();
        let dir = tmp.path().join("db");
        let mut child = awari_command()
            .args(["build", "--max-seeds", "5", "--out", s(&dir), "--quiet"])
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        while !dir.join("scores.0").exists() && child.try_wait().unwrap().is_none() {}
        let _ = child.kill();
        let _ = child.wait();
        let had_manifest = dir.join("manifest.json").exists();
        let out = awari(
            &["build", "--max-seeds", "5", "--out", s(&dir), "--quiet"],
            None,
        );
        assert!(
            out.status.success(),
            "trial {trial}: killed with scores.0 written, manifest {had_manifest}; \
             the restart fails: {}",
            text(&out.stderr)
        );
    }
}

// ---------------------------------------------------------------------------
// Named fault points (`AWARI_FAULT`): each run dies by the abort at exactly
// the point asked for; the folder is then safe (whatever the manifest lists
// is complete; temporary files may be left), and a rerun without the fault
// ends with the known-good tables.

/// Layers the fault tests build.
const FAULT_MAX: u32 = 11;

/// `awari build` of layers 0..=FAULT_MAX into `dir`, quietly.
fn build_args(dir: &Path) -> [&str; 6] {
    ["build", "--max-seeds", "11", "--out", s(dir), "--quiet"]
}

/// Runs `awari args` with `AWARI_FAULT=fault`, in `cwd` (where a core file
/// would go), and checks that it was killed by the abort (SIGABRT) at
/// exactly the point `hit` (`POINT:WHAT`), which stderr names.
fn abort_at(args: &[&str], fault: &str, hit: &str, cwd: &Path) {
    let out = awari_in(args, None, &[(fault::VAR, OsStr::new(fault))], Some(cwd));
    let stderr = text(&out.stderr);
    let what = format!("AWARI_FAULT={fault} awari {args:?}");
    assert!(!out.status.success(), "{what}: finished; stderr: {stderr}");
    assert_eq!(
        out.status.signal(),
        Some(libc::SIGABRT),
        "{what}: {:?}; stderr: {stderr}",
        out.status
    );
    assert_eq!(
        stderr,
        format!("awari: fault injected at {hit}\n"),
        "{what}: stderr"
    );
}

/// Runs `args` (a `compress` of layers 9..=11) until it dies in the middle
/// of writing `file` (layer 10's), then checks what is left: every layer
/// listed and complete, layer 10's file unlisted and left as a temporary
/// file, the raw tables of layers 10 and 11 kept, and layer 9 (done
/// before) compressed and listed for the tables `done` (its three, or its
/// scores alone). Returns the manifest and the raw tables it lists as
/// compressed.
fn abort_mid_compress(
    args: &[&str],
    file: &str,
    dir: &Path,
    done: &[&str],
) -> (Manifest, BTreeSet<String>) {
    let fault = format!("mid-compress:{file}");
    abort_at(args, &fault, &fault, dir);
    assert_eq!(assert_listed_complete(dir), layers(FAULT_MAX));
    let m = manifest(dir);
    assert!(m.compressed("scores.10").is_none(), "{:?}", m.compressed);
    assert!(!dir.join(file).exists());
    assert!(
        dir.join(format!("{file}.tmp")).exists(),
        "{:?}",
        tmp_files(dir)
    );
    for n in [10, 11] {
        for kind in KINDS {
            assert!(
                dir.join(kind.file_name(n)).exists(),
                "raw tables of layer {n} kept"
            );
        }
    }
    let listed: BTreeSet<String> = m.compressed.iter().map(|c| c.raw.clone()).collect();
    assert_eq!(listed, done.iter().map(|t| t.to_string()).collect());
    (m, listed)
}

/// Whatever the manifest of `dir` lists is complete: every raw table it
/// lists has its size and checksum (or, if it is gone, a compressed copy is
/// listed), and every compressed file it lists has the size and checksum
/// recorded. Returns the layers listed.
fn assert_listed_complete(dir: &Path) -> Vec<u32> {
    let Some(m) = Manifest::load(dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display())) else {
        return Vec::new();
    };
    for e in &m.layers {
        for (_, f) in e.files() {
            let path = dir.join(&f.name);
            match fs::read(&path) {
                Ok(bytes) => {
                    assert_eq!(bytes.len() as u64, f.bytes, "{}: size", path.display());
                    assert_eq!(
                        xxh3(&bytes),
                        f.xxh3.to_string(),
                        "{}: checksum",
                        path.display()
                    );
                }
                Err(_) => assert!(
                    m.compressed(&f.name).is_some(),
                    "{} is listed, but neither it nor a compressed copy is there",
                    path.display()
                ),
            }
        }
    }
    for c in &m.compressed {
        let path = dir.join(&c.name);
        let bytes = fs::read(&path)
            .unwrap_or_else(|e| panic!("{}: listed in the manifest: {e}", path.display()));
        assert_eq!(bytes.len() as u64, c.bytes, "{}: size", path.display());
        assert_eq!(
            xxh3(&bytes),
            c.xxh3.to_string(),
            "{}: checksum",
            path.display()
        );
    }
    m.layers.iter().map(|e| e.seeds).collect()
}

/// The tables of `dir` (raw, or read back from their compressed copies)
/// equal `data/known-good.csv` for every layer 0..=FAULT_MAX.
fn assert_known_good(dir: &Path) {
    let out = ok(&[
        "verify",
        "--db",
        s(dir),
        "--checksums",
        KNOWN_GOOD,
        "--json",
    ]);
    let v: serde_json::Value = serde_json::from_str(out.trim()).unwrap();
    let tables = 3 * (FAULT_MAX + 1) + crate::builder::distance_tables(dir);
    assert_eq!(v["equal"], tables, "{out}");
    assert_eq!(v["failed"], 0, "{out}");
    assert_eq!(v["ok"], true, "{out}");
}

/// A build into a new folder dies at `fault`; the folder is safe and lists
/// exactly `listed`; `then` checks the files the point is about; a rerun
/// without the fault resumes and ends with the known-good tables.
fn build_dies_at(fault: &str, hit: &str, listed: &[u32], then: impl FnOnce(&Path)) {
    let tmp = tempdir();
    let dir = tmp.path().join("db");
    abort_at(&build_args(&dir), fault, hit, tmp.path());
    let found = assert_listed_complete(&dir);
    assert_eq!(found, listed, "AWARI_FAULT={fault}: layers listed");
    eprintln!(
        "builder: AWARI_FAULT={fault}: layers {found:?} listed, temporary files {:?}",
        tmp_files(&dir)
    );
    then(&dir);
    ok(&build_args(&dir));
    assert_eq!(assert_listed_complete(&dir), layers(FAULT_MAX));
    check_manifest(&dir, &manifest(&dir), FAULT_MAX, true);
    assert_known_good(&dir);
    assert!(
        tmp_files(&dir).is_empty(),
        "temporary files after the rerun: {:?}",
        tmp_files(&dir)
    );
}

#[test]
fn fault_before_a_table_is_renamed_leaves_its_layer_unlisted() {
    build_dies_at(
        "before-rename:upper.9",
        "before-rename:upper.9",
        &layers(8),
        |dir| {
            assert!(!dir.join("upper.9").exists());
            assert!(dir.join("upper.9.tmp").exists(), "{:?}", tmp_files(dir));
        },
    );
}

#[test]
fn fault_after_a_table_is_renamed_leaves_its_layer_unlisted() {
    build_dies_at(
        "after-rename:lower.10",
        "after-rename:lower.10",
        &layers(9),
        |dir| {
            assert!(dir.join("lower.10").exists());
            assert!(!dir.join("lower.10.tmp").exists());
        },
    );
}

#[test]
fn fault_before_the_manifest_lists_a_built_layer() {
    build_dies_at(
        "before-manifest:10",
        "before-manifest:10",
        &layers(9),
        |dir| {
            for kind in KINDS {
                assert!(
                    dir.join(kind.file_name(10)).exists(),
                    "{}",
                    kind.file_name(10)
                );
            }
        },
    );
}

#[test]
fn fault_point_without_a_name_fires_at_its_first_use() {
    // `AWARI_FAULT=POINT` stops where the point is first reached: layer 0.
    build_dies_at("before-manifest", "before-manifest:0", &[], |dir| {
        assert!(dir.join("scores.0").exists());
    });
}

#[test]
fn fault_at_the_first_manifest_write() {
    // The builder claims a new folder with an empty manifest before any
    // table: killed before and after that rename.
    build_dies_at(
        "before-rename:manifest.json",
        "before-rename:manifest.json",
        &[],
        |dir| {
            assert!(!dir.join("manifest.json").exists());
            assert!(dir.join("manifest.json.tmp").exists());
        },
    );
    build_dies_at(
        "after-rename:manifest.json",
        "after-rename:manifest.json",
        &[],
        |dir| {
            assert!(dir.join("manifest.json").exists());
            assert!(!dir.join("scores.0").exists());
        },
    );
}

/// Layers 0..=FAULT_MAX built once through the library, to compress.
fn fault_raw_folder() -> &'static Path {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        let dir = scratch("awari-xt-fault-raw-");
        build_ok(&opts(&dir, FAULT_MAX, true), &Silent);
        dir
    })
}

#[test]
fn fault_mid_compress_of_the_scores_alone_leaves_the_file_unlisted_and_the_raw_tables() {
    let dir = scratch("awari-xt-fault-compress-");
    for (name, bytes) in files(fault_raw_folder()) {
        fs::write(dir.join(name), bytes).unwrap();
    }
    let args = [
        "compress",
        "--db",
        s(&dir),
        "--layers",
        "9..=11",
        "--scores-only",
        "--remove-raw",
        "--quiet",
    ];
    let (_, done) = abort_mid_compress(&args, "scores.10.zst", &dir, &["scores.9"]);
    eprintln!(
        "builder: AWARI_FAULT=mid-compress:scores.10.zst: compressed {done:?}, temporary files {:?}",
        tmp_files(&dir)
    );
    // The folder is usable as it is, and the rerun finishes the job.
    assert_known_good(&dir);
    ok(&args);
    assert_eq!(assert_listed_complete(&dir), layers(FAULT_MAX));
    let m = manifest(&dir);
    assert_eq!(m.compressed.len(), 3);
    for n in 9..=FAULT_MAX {
        for kind in KINDS {
            // The envelope's tables stay raw.
            assert_eq!(
                dir.join(kind.file_name(n)).exists(),
                kind != awari_egdb::format::Kind::Score,
                "{}",
                kind.file_name(n)
            );
        }
    }
    assert_known_good(&dir);
    assert!(tmp_files(&dir).is_empty(), "{:?}", tmp_files(&dir));
}

#[test]
fn fault_mid_compress_of_the_full_form_leaves_the_layer_file_unlisted_and_the_raw_tables() {
    let dir = scratch("awari-xt-fault-compress3-");
    for (name, bytes) in files(fault_raw_folder()) {
        fs::write(dir.join(name), bytes).unwrap();
    }
    let args = [
        "compress",
        "--db",
        s(&dir),
        "--layers",
        "9..=11",
        "--remove-raw",
        "--quiet",
    ];
    let (m, _) = abort_mid_compress(
        &args,
        "tables.10.zst",
        &dir,
        &["scores.9", "lower.9", "upper.9"],
    );
    // Layer 9 was done before: one file, listed for its three tables.
    assert!(m.compressed.iter().all(|c| c.name == "tables.9.zst"));
    // The folder is usable as it is, and the rerun finishes the job.
    assert_known_good(&dir);
    ok(&args);
    assert_eq!(assert_listed_complete(&dir), layers(FAULT_MAX));
    for n in 9..=FAULT_MAX {
        assert!(dir.join(format!("tables.{n}.zst")).exists());
        for kind in KINDS {
            assert!(
                !dir.join(kind.file_name(n)).exists(),
                "{}",
                kind.file_name(n)
            );
        }
    }
    assert_known_good(&dir);
    assert!(tmp_files(&dir).is_empty(), "{:?}", tmp_files(&dir));
}
