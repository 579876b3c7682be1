//! Tests of the layer builder (`awari_egdb::build` and `awari build`): the
//! files it writes against the naive solver, the Bellman check and the VU
//! facts; identical bytes for any thread count; resuming after damage,
//! edits and kills; clear refusals of bad folders and arguments.
//!
//! One database of layers 0..=[`DB_MAX`] is built once ([`db`]) and read into
//! memory; the tests that only need its bytes share it. Tests that change a
//! folder build their own small one.

use crate::{facts, naive, tables, MAX};

use awari_egdb::build::{self, human, BuildError, BuildObserver, BuildOptions, BuildReport};
use awari_egdb::format::Kind;
use awari_egdb::index::{layer_size, unrank};
use awari_egdb::solve::{self, Observer, Silent};
use awari_egdb::table::{LockError, Manifest, ManifestError};

use rayon::prelude::*;
use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::sync::{Mutex, OnceLock};
use std::time::{Duration, Instant};

/// Largest layer of the shared database (the kill test's target too).
const DB_MAX: u32 = 15;
/// Layers checked by the forward Bellman check.
const BELLMAN_MAX: u32 = 12;
/// VU facts up to this many seeds are checked.
const FACTS_MAX: u32 = 14;
/// Layers of the thread-count and no-envelope comparisons.
const MID_MAX: u32 = 12;

const KINDS: [Kind; 3] = [Kind::Score, Kind::Lower, Kind::Upper];

// ---------------------------------------------------------------------------
// Helpers

fn opts(out: &Path, max_seeds: u32, envelope: bool) -> BuildOptions {
    BuildOptions {
        max_seeds,
        out: out.to_path_buf(),
        envelope,
        memory_limit: None,
        reset_peak_rss: false,
    }
}

fn tempdir() -> tempfile::TempDir {
    tempfile::Builder::new()
        .prefix("awari-xt-")
        .tempdir()
        .expect("temporary folder")
}

/// Builds `0..=max` into `dir` on the current pool, silently, and checks that
/// every planned layer is either built or reused.
fn build_ok(o: &BuildOptions, obs: &dyn BuildObserver) -> BuildReport {
    let r = build::build(o, obs).unwrap_or_else(|e| panic!("build {o:?}: {e}"));
    let mut all: Vec<u32> = r.built.iter().chain(&r.reused).copied().collect();
    all.sort_unstable();
    assert_eq!(all, build::layers_up_to(o.max_seeds), "built {r:?}");
    r
}

fn layers(max: u32) -> Vec<u32> {
    build::layers_up_to(max)
}

/// Every file of a folder by name, except `build.lock`.
fn files(dir: &Path) -> BTreeMap<String, Vec<u8>> {
    fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.expect("folder entry").path())
        .filter(|p| p.file_name().unwrap() != "build.lock")
        .map(|p| {
            let name = p.file_name().unwrap().to_string_lossy().into_owned();
            let bytes = fs::read(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
            (name, bytes)
        })
        .collect()
}

/// The table files of a folder (`scores.n`, `lower.n`, `upper.n`), by name.
fn table_files(dir: &Path) -> BTreeMap<String, Vec<u8>> {
    let mut f = files(dir);
    f.retain(|name, _| is_table(name));
    f
}

fn is_table(name: &str) -> bool {
    let Some((stem, n)) = name.split_once('.') else {
        return false;
    };
    ["scores", "lower", "upper"].contains(&stem) && n.parse::<u32>().is_ok()
}

/// The names a complete build of `0..=max` has.
fn expected_names(max: u32, envelope: bool) -> BTreeSet<String> {
    layers(max)
        .into_iter()
        .flat_map(|n| {
            KINDS
                .iter()
                .filter(move |&&k| envelope || k == Kind::Score)
                .map(move |k| k.file_name(n))
        })
        .collect()
}

fn xxh3(bytes: &[u8]) -> String {
    format!("{:016x}", xxhash_rust::xxh3::xxh3_64(bytes))
}

/// (file name, checksum) of every file the manifest lists.
fn checksums(m: &Manifest) -> BTreeMap<String, String> {
    m.layers
        .iter()
        .flat_map(|e| e.files().map(|(_, f)| (f.name.clone(), f.xxh3.clone())))
        .collect()
}

/// The folder's manifest, which must be there and readable.
fn manifest(dir: &Path) -> Manifest {
    Manifest::load(dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .unwrap_or_else(|| panic!("{}: no manifest", dir.display()))
}

/// Every file the manifest of `dir` lists (if any) exists with the size and
/// checksum recorded. Returns the layers listed.
fn listed_files_verify(dir: &Path) -> Vec<u32> {
    let Some(m) = Manifest::load(dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display())) else {
        return Vec::new();
    };
    for e in &m.layers {
        for (_, f) in e.files() {
            let path = dir.join(&f.name);
            let bytes = fs::read(&path)
                .unwrap_or_else(|err| panic!("{}: listed in the manifest: {err}", path.display()));
            assert_eq!(bytes.len() as u64, f.bytes, "{}: size", path.display());
            assert_eq!(
                xxh3(&bytes),
                f.xxh3,
                "{}: checksum differs from the manifest",
                path.display()
            );
        }
    }
    m.layers.iter().map(|e| e.seeds).collect()
}

/// Checks a manifest against the files it describes: layer sizes, names,
/// checksums (recomputed), the score histogram and pinned count (recounted).
fn check_manifest(dir: &Path, m: &Manifest, max: u32, envelope: bool) {
    assert_eq!(m.format, awari_egdb::table::FORMAT);
    assert_eq!(m.version, awari_egdb::table::VERSION);
    assert_eq!(m.rule_set, awari_egdb::format::RULE_SET);
    assert_eq!(m.checksum, "xxh3-64");
    let seeds: Vec<u32> = m.layers.iter().map(|e| e.seeds).collect();
    assert_eq!(seeds, layers(max), "manifest layers");
    for e in &m.layers {
        let n = e.seeds;
        let who = format!("{}: layer {n}", dir.display());
        assert_eq!(e.positions, layer_size(n), "{who}: positions");
        assert_eq!(e.lower.is_some(), envelope, "{who}: lower entry");
        assert_eq!(e.upper.is_some(), envelope, "{who}: upper entry");
        let mut read = BTreeMap::new();
        for (kind, f) in e.files() {
            assert_eq!(f.name, kind.file_name(n), "{who}");
            assert_eq!(f.bytes, e.positions, "{who}: {} bytes", f.name);
            assert!(
                f.xxh3.len() == 16
                    && f.xxh3
                        .chars()
                        .all(|c| c.is_ascii_digit() || ('a'..='f').contains(&c)),
                "{who}: checksum {:?} is not 16 lower-case hex digits",
                f.xxh3
            );
            let bytes = fs::read(dir.join(&f.name)).expect("listed table");
            assert_eq!(bytes.len() as u64, e.positions, "{who}: {} size", f.name);
            assert_eq!(xxh3(&bytes), f.xxh3, "{who}: {} checksum", f.name);
            read.insert(f.name.clone(), bytes);
        }
        let score = &read[&Kind::Score.file_name(n)];
        // The histogram counts every score -n..=n.
        assert_eq!(
            e.score_histogram.len(),
            2 * n as usize + 1,
            "{who}: histogram"
        );
        assert_eq!(
            e.score_histogram.iter().sum::<u64>(),
            e.positions,
            "{who}: histogram sum"
        );
        let mut hist = vec![0u64; 2 * n as usize + 1];
        for &b in score {
            let v = b as i8 as i32;
            assert!(v.abs() <= n as i32, "{who}: score {v}");
            hist[(v + n as i32) as usize] += 1;
        }
        assert_eq!(e.score_histogram, hist, "{who}: histogram recount");
        if envelope {
            let (lo, hi) = (
                &read[&Kind::Lower.file_name(n)],
                &read[&Kind::Upper.file_name(n)],
            );
            let pinned = lo.iter().zip(hi).filter(|(a, b)| a == b).count() as u64;
            let p = e.pinned.unwrap_or_else(|| panic!("{who}: no pinned count"));
            assert!(p <= e.positions, "{who}: pinned {p}");
            assert_eq!(p, pinned, "{who}: pinned recount");
        } else {
            assert_eq!(e.pinned, None, "{who}: pinned without the envelope");
        }
        assert!(e.threads >= 1, "{who}: threads");
        assert!(e.wall_seconds.is_finite() && e.wall_seconds >= 0.0, "{who}");
        assert!(e.working_bytes >= e.positions, "{who}: working bytes");
        assert_eq!(
            e.estimate_bytes,
            solve::memory_estimate(n, envelope),
            "{who}: the guard's estimate"
        );
        // Both peaks are the process's, and the tests build concurrently in
        // one process: only their presence can be checked here.
        assert!(
            e.peak_anon_bytes > 0 && e.peak_rss_bytes > 0,
            "{who}: memory peaks"
        );
    }
}

#[test]
fn memory_estimate_is_three_bytes_per_position_and_layer_32_fits_in_24_gib() {
    for n in [20, 28, 32, 46] {
        let e = solve::memory_estimate(n, true);
        let working = 3 * layer_size(n);
        assert!(e >= working && e <= working + working / 100 + solve::BASELINE_BYTES);
        assert_eq!(
            solve::memory_estimate(n, false) - 2 * layer_size(n),
            e - working
        );
    }
    assert!(solve::memory_estimate(32, true) < 24 << 30);
    assert!(solve::memory_estimate(33, true) < 24 << 30);
}

/// The first differing index of two tables of layer `n`, described.
fn first_difference(n: u32, what: &str, got: &[u8], want: &[u8]) -> Option<String> {
    if got.len() != want.len() {
        return Some(format!(
            "{what}.{n}: {} bytes, want {}",
            got.len(),
            want.len()
        ));
    }
    let g = got.iter().zip(want).position(|(a, b)| a != b)?;
    let count = got.iter().zip(want).filter(|(a, b)| a != b).count();
    let p = unrank(n, g as u64).map_or("?".into(), |p| p.to_string());
    Some(format!(
        "{what}.{n}: {count} entries differ; first at index {g} [{p}]: {} vs {}",
        got[g] as i8, want[g] as i8
    ))
}

/// Records what the builder reports.
#[derive(Default)]
struct Recorder {
    warnings: Mutex<Vec<String>>,
    started: Mutex<Vec<u32>>,
}

impl Observer for Recorder {}

impl BuildObserver for Recorder {
    fn start(&self, n: u32, _positions: u64) {
        self.started.lock().unwrap().push(n);
    }
    fn warning(&self, message: &str) {
        self.warnings.lock().unwrap().push(message.to_owned());
    }
}

impl Recorder {
    fn warnings(&self) -> Vec<String> {
        self.warnings.lock().unwrap().clone()
    }
}

// --- the command line

fn awari(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_awari"))
        .args(args)
        .output()
        .expect("run the awari binary")
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

fn path_str(p: &Path) -> &str {
    p.to_str().expect("UTF-8 temporary path")
}

/// Runs a command that must succeed, without a panic.
fn cli_ok(args: &[&str]) {
    let out = awari(args);
    let stderr = text(&out.stderr);
    assert!(
        out.status.success(),
        "awari {args:?} failed with {:?}; stderr: {stderr}",
        out.status
    );
    assert!(!stderr.contains("panicked"), "awari {args:?}: {stderr}");
}

/// Runs a command that must be refused: status 2, exactly one line on stderr
/// starting with `awari:`, no panic. Returns that line.
fn usage_error(args: &[&str]) -> String {
    let out = awari(args);
    let stderr = text(&out.stderr);
    assert!(
        !stderr.contains("panicked"),
        "awari {args:?} panicked: {stderr}"
    );
    assert_eq!(
        out.status.code(),
        Some(2),
        "awari {args:?}: want exit status 2, got {:?}; stderr: {stderr}",
        out.status
    );
    let lines: Vec<&str> = stderr.lines().collect();
    assert_eq!(
        lines.len(),
        1,
        "awari {args:?}: want exactly one line on stderr, got {stderr:?}"
    );
    assert!(
        lines[0].starts_with("awari:"),
        "awari {args:?}: stderr line must start with 'awari:': {stderr:?}"
    );
    lines[0].to_owned()
}

// ---------------------------------------------------------------------------
// The shared database

/// Layers 0..=DB_MAX with the envelope, built once through the library on
/// the global pool, checked and read into memory (the folder is removed).
struct Db {
    /// `tables[kind][n]`: kind 0 scores, 1 lower, 2 upper.
    tables: [Vec<Vec<u8>>; 3],
    manifest: Manifest,
}

impl Db {
    fn get(&self, k: usize, n: u32, g: u64) -> i8 {
        self.tables[k][n as usize][g as usize] as i8
    }
}

fn db() -> &'static Db {
    static DB: OnceLock<Db> = OnceLock::new();
    DB.get_or_init(|| {
        let tmp = tempdir();
        let dir = tmp.path();
        let t0 = Instant::now();
        let r = build_ok(&opts(dir, DB_MAX, true), &Silent);
        eprintln!(
            "builder: layers 0..={DB_MAX} built in {:.2?} on {} threads",
            t0.elapsed(),
            rayon::current_num_threads()
        );
        assert_eq!(r.built, layers(DB_MAX), "a fresh folder builds every layer");
        assert!(r.reused.is_empty());
        // The manifest on disk is the one reported.
        let m = manifest(dir);
        assert_eq!(checksums(&m), checksums(&r.manifest));
        check_manifest(dir, &m, DB_MAX, true);
        let all = files(dir);
        let names: BTreeSet<String> = all.keys().cloned().collect();
        let mut want = expected_names(DB_MAX, true);
        want.insert("manifest.json".into());
        assert_eq!(names, want, "files of a finished build");
        let tables = [0, 1, 2].map(|k| {
            (0..=DB_MAX)
                .map(|n| {
                    if n == 47 {
                        Vec::new()
                    } else {
                        all[&KINDS[k].file_name(n)].clone()
                    }
                })
                .collect()
        });
        Db {
            tables,
            manifest: m,
        }
    })
}

// ---------------------------------------------------------------------------
// The bytes

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
            naive::bellman_check(n, &s, &l, &u)
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
    let mem = solve::solve_in_memory(9, true).expect("in-memory solve");
    for n in 0..=9u32 {
        for k in 0..3 {
            if let Some(diff) = first_difference(
                n,
                KINDS[k].stem(),
                &d.tables[k][n as usize],
                &mem[n as usize][k],
            ) {
                panic!("files vs solve_in_memory: {diff}");
            }
        }
    }
    // And the manifest read back names exactly those checksums.
    for e in &d.manifest.layers {
        for (kind, f) in e.files() {
            let k = KINDS.iter().position(|&x| x == kind).unwrap();
            assert_eq!(f.xxh3, xxh3(&d.tables[k][e.seeds as usize]), "{}", f.name);
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
    cli_ok(&[
        "build",
        "--max-seeds",
        "8",
        "--out",
        path_str(&dir2),
        "--no-envelope",
        "--quiet",
    ]);
    let t = table_files(&dir2);
    assert_eq!(
        t.keys().cloned().collect::<BTreeSet<_>>(),
        expected_names(8, false)
    );
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
    let mem = solve::solve_in_memory(8, true).expect("in-memory solve");
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

// ---------------------------------------------------------------------------
// Resuming

/// A folder built to `max` with the envelope, and its files.
fn built_folder(max: u32) -> (tempfile::TempDir, BTreeMap<String, Vec<u8>>, Manifest) {
    let tmp = tempdir();
    let r = build_ok(&opts(tmp.path(), max, true), &Silent);
    assert_eq!(r.built, layers(max));
    let t = table_files(tmp.path());
    let m = manifest(tmp.path());
    (tmp, t, m)
}

/// Table bytes and manifest checksums are those of before.
fn assert_unchanged(dir: &Path, t: &BTreeMap<String, Vec<u8>>, m: &Manifest, what: &str) {
    let now = table_files(dir);
    assert_eq!(
        now.keys().collect::<Vec<_>>(),
        t.keys().collect::<Vec<_>>(),
        "{what}: table files"
    );
    for (name, bytes) in t {
        assert!(&now[name] == bytes, "{what}: {name} changed");
    }
    assert_eq!(
        checksums(&manifest(dir)),
        checksums(m),
        "{what}: manifest checksums"
    );
    assert!(
        !files(dir).keys().any(|n| n.ends_with(".tmp")),
        "{what}: temporary files left: {:?}",
        files(dir).keys().collect::<Vec<_>>()
    );
}

#[test]
fn resume_reuses_every_verified_layer() {
    let (tmp, t, m) = built_folder(10);
    let dir = tmp.path();
    let rec = Recorder::default();
    let r = build_ok(&opts(dir, 10, true), &rec);
    assert_eq!(r.reused, layers(10));
    assert!(r.built.is_empty(), "rebuilt {:?}", r.built);
    assert!(rec.started.lock().unwrap().is_empty());
    assert!(rec.warnings().is_empty(), "{:#?}", rec.warnings());
    assert_unchanged(dir, &t, &m, "second build");
    // The timings of the first build are kept, not rewritten.
    let again = manifest(dir);
    for (a, b) in again.layers.iter().zip(&m.layers) {
        assert_eq!(a.wall_seconds, b.wall_seconds, "layer {}", a.seeds);
    }
    // A build to a lower max reuses the prefix and keeps the rest listed.
    let r = build_ok(&opts(dir, 6, true), &Silent);
    assert_eq!(r.reused, layers(6));
    assert_unchanged(dir, &t, &m, "build to a lower max");
}

#[test]
fn resume_rebuilds_corrupted_layer_only() {
    let (tmp, t, m) = built_folder(10);
    let dir = tmp.path();
    let path = dir.join("scores.7");
    let mut bytes = fs::read(&path).unwrap();
    let i = bytes.len() / 2;
    bytes[i] = bytes[i].wrapping_add(1);
    fs::write(&path, &bytes).unwrap();

    let rec = Recorder::default();
    let r = build_ok(&opts(dir, 10, true), &rec);
    assert_eq!(r.built, vec![7], "only layer 7 is rebuilt");
    let w = rec.warnings();
    assert_eq!(w.len(), 1, "{w:#?}");
    assert!(
        w[0].contains("layer 7") && w[0].contains("scores.7") && w[0].contains("checksum"),
        "warning: {}",
        w[0]
    );
    assert_unchanged(dir, &t, &m, "after repairing scores.7");
}

#[test]
fn resume_rebuilds_truncated_or_missing_files() {
    let (tmp, t, m) = built_folder(10);
    let dir = tmp.path();
    let upper = dir.join("upper.8");
    let len = fs::metadata(&upper).unwrap().len();
    fs::OpenOptions::new()
        .write(true)
        .open(&upper)
        .unwrap()
        .set_len(len - 1)
        .unwrap();
    fs::remove_file(dir.join("lower.9")).unwrap();
    let rec = Recorder::default();
    let r = build_ok(&opts(dir, 10, true), &rec);
    assert_eq!(r.built, vec![8, 9]);
    let w = rec.warnings();
    assert_eq!(w.len(), 2, "{w:#?}");
    assert!(
        w[0].contains("layer 8") && w[0].contains("upper.8"),
        "{w:#?}"
    );
    assert!(
        w[1].contains("layer 9") && w[1].contains("lower.9"),
        "{w:#?}"
    );
    assert_unchanged(dir, &t, &m, "after repairing upper.8 and lower.9");
}

/// Removes layer `n`'s entry from `dir/manifest.json`, as a user would.
fn drop_manifest_entry(dir: &Path, n: u32) {
    let path = dir.join("manifest.json");
    let mut v: serde_json::Value = serde_json::from_slice(&fs::read(&path).unwrap()).unwrap();
    let layers = v["layers"].as_array_mut().expect("layers array");
    let before = layers.len();
    layers.retain(|e| e["seeds"].as_u64() != Some(n as u64));
    assert_eq!(layers.len() + 1, before, "layer {n} listed once");
    fs::write(&path, serde_json::to_string_pretty(&v).unwrap()).unwrap();
}

#[test]
fn resume_rebuilds_layer_missing_from_manifest() {
    let (tmp, t, m) = built_folder(10);
    let dir = tmp.path();
    drop_manifest_entry(dir, 10);
    let rec = Recorder::default();
    let r = build_ok(&opts(dir, 10, true), &rec);
    assert_eq!(r.built, vec![10], "the unlisted last layer is rebuilt");
    assert_eq!(r.reused, layers(9));
    assert_unchanged(dir, &t, &m, "after rebuilding layer 10");
    // A layer in the middle too.
    drop_manifest_entry(dir, 4);
    let r = build_ok(&opts(dir, 10, true), &rec);
    assert_eq!(r.built, vec![4]);
    assert_unchanged(dir, &t, &m, "after rebuilding layer 4");
    assert!(rec.warnings().is_empty(), "{:#?}", rec.warnings());
}

#[test]
fn resume_tolerates_stray_temporary_file() {
    // In a finished folder.
    let (tmp, t, m) = built_folder(10);
    let dir = tmp.path();
    fs::write(dir.join("scores.11.tmp"), b"half a table").unwrap();
    let r = build_ok(&opts(dir, 10, true), &Silent);
    assert_eq!(r.reused, layers(10));
    // Building on over it: the stray file is replaced by the real table.
    let r = build_ok(&opts(dir, 11, true), &Silent);
    assert_eq!(r.built, vec![11]);
    let names: BTreeSet<String> = files(dir).into_keys().collect();
    let mut want = expected_names(11, true);
    want.insert("manifest.json".into());
    assert_eq!(names, want, "files after building layer 11");
    check_manifest(dir, &manifest(dir), 11, true);
    for (name, bytes) in &t {
        assert!(&fs::read(dir.join(name)).unwrap() == bytes, "{name}");
    }
    let c = checksums(&manifest(dir));
    for (name, sum) in checksums(&m) {
        assert_eq!(c[&name], sum, "{name}");
    }
    let d = db();
    for (k, kind) in KINDS.iter().enumerate() {
        let got = fs::read(dir.join(kind.file_name(11))).unwrap();
        assert!(got == d.tables[k][11], "{}", kind.file_name(11));
    }
    // In a fresh folder: a temporary file is not a foreign table.
    let tmp2 = tempdir();
    fs::write(tmp2.path().join("scores.11.tmp"), b"junk").unwrap();
    build_ok(&opts(tmp2.path(), 5, true), &Silent);
    check_manifest(tmp2.path(), &manifest(tmp2.path()), 5, true);
}

// --- killed builds

enum Moment {
    /// Kill after this long.
    After(Duration),
    /// Kill this long after the manifest lists the layer (or at the time
    /// limit, counted from the start).
    AfterLayer(u32, Duration, Duration),
    /// Kill as soon as a table is being written (a new or changed `.tmp`
    /// file), or after the given time.
    Writing(Duration),
}

fn tmp_files(dir: &Path) -> BTreeSet<(String, u64)> {
    let Ok(rd) = fs::read_dir(dir) else {
        return BTreeSet::new();
    };
    rd.filter_map(|e| e.ok())
        .filter_map(|e| {
            let name = e.file_name().to_string_lossy().into_owned();
            let len = e.metadata().ok()?.len();
            name.ends_with(".tmp").then_some((name, len))
        })
        .collect()
}

#[test]
fn killed_build_resumes_to_same_bytes() {
    let t0 = Instant::now();
    let tmp = tempdir();
    let dir = tmp.path().join("db");
    let max = DB_MAX.to_string();
    let args = [
        "build",
        "--max-seeds",
        &max,
        "--out",
        path_str(&dir),
        "--quiet",
    ];
    let spawn = || {
        Command::new(env!("CARGO_BIN_EXE_awari"))
            .args(args)
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .expect("spawn awari build")
    };
    let moments = [
        Moment::After(Duration::from_millis(300)),
        Moment::Writing(Duration::from_secs(8)),
        Moment::After(Duration::from_secs(1)),
        Moment::After(Duration::from_millis(2500)),
        // In the middle of the largest layer.
        Moment::AfterLayer(DB_MAX - 1, Duration::from_secs(1), Duration::from_secs(20)),
    ];
    let mut killed = 0;
    for (i, moment) in moments.iter().enumerate() {
        let before = tmp_files(&dir);
        let mut child = spawn();
        let start = Instant::now();
        let mut layer_seen: Option<Instant> = None;
        let finished = loop {
            if child.try_wait().expect("poll child").is_some() {
                break true;
            }
            let due = match moment {
                Moment::After(d) => start.elapsed() >= *d,
                Moment::Writing(d) => {
                    start.elapsed() >= *d || {
                        let now = tmp_files(&dir);
                        now.iter().any(|f| !before.contains(f))
                    }
                }
                Moment::AfterLayer(n, wait, limit) => {
                    if layer_seen.is_none() {
                        let listed = Manifest::load(&dir)
                            .ok()
                            .flatten()
                            .is_some_and(|m| m.layer(*n).is_some());
                        if listed {
                            layer_seen = Some(Instant::now());
                        } else {
                            std::thread::sleep(Duration::from_millis(10));
                        }
                    }
                    start.elapsed() >= *limit || layer_seen.is_some_and(|t| t.elapsed() >= *wait)
                }
            };
            if due {
                break false;
            }
            std::thread::sleep(Duration::from_micros(200));
        };
        if !finished {
            child.kill().expect("kill the build");
            killed += 1;
        }
        let at = start.elapsed();
        let out = child.wait_with_output().expect("reap the build");
        let stderr = text(&out.stderr);
        assert!(!stderr.contains("panicked"), "run {i}: {stderr}");
        if finished {
            assert!(out.status.success(), "run {i}: {:?} {stderr}", out.status);
        }
        assert!(stderr.is_empty(), "run {i}: stderr {stderr}");
        // At any moment, whatever the manifest lists is complete and correct.
        let listed = listed_files_verify(&dir);
        eprintln!(
            "builder: kill run {i}: {} at {at:.2?}; manifest lists layers {:?}; temporary files {:?}",
            if finished { "finished" } else { "killed" },
            listed,
            tmp_files(&dir)
        );
    }
    assert!(
        killed >= 4,
        "only {killed} runs were killed before finishing"
    );

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
    assert!(stderr.is_empty(), "final run: {stderr}");
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
        let mut child = Command::new(env!("CARGO_BIN_EXE_awari"))
            .args([
                "build",
                "--max-seeds",
                "5",
                "--out",
                path_str(&dir),
                "--quiet",
            ])
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        while !dir.join("scores.0").exists() && child.try_wait().unwrap().is_none() {}
        let _ = child.kill();
        let _ = child.wait();
        let had_manifest = dir.join("manifest.json").exists();
        let out = awari(&[
            "build",
            "--max-seeds",
            "5",
            "--out",
            path_str(&dir),
            "--quiet",
        ]);
        assert!(
            out.status.success(),
            "trial {trial}: killed with scores.0 written, manifest {had_manifest}; \
             the restart fails: {}",
            text(&out.stderr)
        );
    }
}

// ---------------------------------------------------------------------------
// Bad input

#[test]
fn foreign_manifest_is_refused() {
    for content in [&b"{\"hello\":1}"[..], b"not json at all\n", b"[1, 2, 3]"] {
        let tmp = tempdir();
        let dir = tmp.path();
        fs::write(dir.join("manifest.json"), content).unwrap();
        match build::build(&opts(dir, 3, true), &Silent) {
            Err(BuildError::Manifest(ManifestError::Foreign { .. })) => {}
            other => panic!("manifest {:?}: {other:?}", text(content)),
        }
        let line = usage_error(&["build", "--max-seeds", "3", "--out", path_str(dir)]);
        assert!(line.contains("manifest.json"), "{line}");
        assert!(line.contains("not an awari-egdb manifest"), "{line}");
        assert_eq!(fs::read(dir.join("manifest.json")).unwrap(), content);
        assert!(
            table_files(dir).is_empty() && tmp_files(dir).is_empty(),
            "tables written next to a foreign manifest: {:?}",
            files(dir).keys().collect::<Vec<_>>()
        );
    }
}

#[test]
fn vu_like_folder_is_refused() {
    let tmp = tempdir();
    let dir = tmp.path();
    let content: Vec<u8> = (0..364u32).map(|i| (i % 7) as u8).collect();
    fs::write(dir.join("scores.3"), &content).unwrap();
    let mtime = fs::metadata(dir.join("scores.3"))
        .unwrap()
        .modified()
        .unwrap();
    match build::build(&opts(dir, 5, true), &Silent) {
        Err(BuildError::ForeignFolder { file, .. }) => assert_eq!(file, "scores.3"),
        other => panic!("{other:?}"),
    }
    let line = usage_error(&["build", "--max-seeds", "5", "--out", path_str(dir)]);
    assert!(line.contains("scores.3"), "{line}");
    assert!(line.contains("no manifest.json"), "{line}");
    assert_eq!(fs::read(dir.join("scores.3")).unwrap(), content);
    assert_eq!(
        fs::metadata(dir.join("scores.3"))
            .unwrap()
            .modified()
            .unwrap(),
        mtime
    );
    // Nothing else written but (at most) the lock file.
    let names: Vec<String> = fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n != "build.lock")
        .collect();
    assert_eq!(names, vec!["scores.3".to_string()]);
}

#[test]
fn manifest_for_other_rules_is_refused() {
    let (tmp, t, m) = built_folder(4);
    let dir = tmp.path();
    let path = dir.join("manifest.json");
    let original = fs::read(&path).unwrap();
    for (field, value) in [
        ("rule_set", serde_json::json!("awari-abapa")),
        ("version", serde_json::json!(2)),
        ("checksum", serde_json::json!("md5")),
    ] {
        let mut v: serde_json::Value = serde_json::from_slice(&original).unwrap();
        v[field] = value;
        let edited = serde_json::to_vec_pretty(&v).unwrap();
        fs::write(&path, &edited).unwrap();
        match build::build(&opts(dir, 6, true), &Silent) {
            Err(BuildError::Manifest(ManifestError::Mismatch { .. })) => {}
            other => panic!("{field} changed: {other:?}"),
        }
        let line = usage_error(&["build", "--max-seeds", "6", "--out", path_str(dir)]);
        assert!(line.contains("built for"), "{field}: {line}");
        assert_eq!(
            fs::read(&path).unwrap(),
            edited,
            "{field}: manifest rewritten"
        );
        assert_eq!(
            table_files(dir).keys().collect::<Vec<_>>(),
            t.keys().collect::<Vec<_>>(),
            "{field}: tables added or removed"
        );
    }
    fs::write(&path, &original).unwrap();
    assert_unchanged(dir, &t, &m, "after the refused builds");
}

#[test]
fn memory_limit_refuses_layer_and_keeps_finished() {
    let tmp = tempdir();
    let dir = tmp.path();
    cli_ok(&[
        "build",
        "--max-seeds",
        "5",
        "--out",
        path_str(dir),
        "--quiet",
    ]);
    let t = table_files(dir);
    let m = manifest(dir);

    let mut o = opts(dir, 8, true);
    o.memory_limit = Some(1024);
    let needed = match build::build(&o, &Silent) {
        Err(BuildError::Memory {
            layer: 6,
            needed,
            available: 1024,
            from_flag: true,
        }) => needed,
        other => panic!("{other:?}"),
    };
    assert!(needed >= layer_size(6), "layer 6 needs {needed} bytes?");
    let line = usage_error(&[
        "build",
        "--max-seeds",
        "8",
        "--out",
        path_str(dir),
        "--memory-limit",
        "1KiB",
        "--quiet",
    ]);
    for part in ["layer 6", &human(needed), &human(1024), "--memory-limit"] {
        assert!(line.contains(part), "{part:?} missing from {line:?}");
    }
    // Without --quiet the progress lines come first; the error is the last
    // line and the only one starting with "awari:".
    let out = awari(&[
        "build",
        "--max-seeds",
        "8",
        "--out",
        path_str(dir),
        "--memory-limit",
        "1KiB",
    ]);
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");
    let errors: Vec<&str> = stderr.lines().filter(|l| l.starts_with("awari:")).collect();
    assert_eq!(errors, vec![line.as_str()], "{stderr}");
    assert_eq!(stderr.lines().last(), Some(line.as_str()), "{stderr}");
    // Layers 0..=5 are untouched and still verify.
    assert_unchanged(dir, &t, &m, "after the refusal");
    assert_eq!(listed_files_verify(dir), layers(5));
    assert!(!dir.join("scores.6").exists());
    // Without the limit they are reused.
    let r = build_ok(&opts(dir, 8, true), &Silent);
    assert_eq!(r.reused, layers(5));
    assert_eq!(r.built, vec![6, 7, 8]);
    check_manifest(dir, &manifest(dir), 8, true);
}

#[test]
fn unwritable_output_is_reported() {
    let tmp = tempdir();
    let file = tmp.path().join("plain-file");
    fs::write(&file, b"x").unwrap();
    let out = file.join("db");
    match build::build(&opts(&out, 3, true), &Silent) {
        Err(BuildError::Io(e)) => assert!(e.path.starts_with(&file), "{e}"),
        other => panic!("{other:?}"),
    }
    let line = usage_error(&["build", "--max-seeds", "3", "--out", path_str(&out)]);
    assert!(line.contains("plain-file"), "{line}");
    assert_eq!(fs::read(&file).unwrap(), b"x");
}

#[test]
fn bad_arguments_are_refused() {
    let tmp = tempdir();
    let dir = tmp.path().join("db");
    let d = path_str(&dir);
    match build::build(&opts(&dir, 49, true), &Silent) {
        Err(BuildError::NoSuchLayer(49)) => {}
        other => panic!("{other:?}"),
    }
    let line = usage_error(&["build", "--max-seeds", "49", "--out", d]);
    assert!(line.contains("49"), "{line}");
    let line = usage_error(&["build", "--threads", "0", "--out", d]);
    assert!(line.contains("--threads"), "{line}");
    let line = usage_error(&["build", "--memory-limit", "lots", "--out", d]);
    assert!(line.contains("--memory-limit"), "{line}");
    assert!(!dir.exists(), "a refused build created {d}");
}

#[test]
fn locked_folder_is_refused() {
    use std::os::unix::io::AsRawFd;
    let tmp = tempdir();
    let dir = tmp.path();
    let lock = fs::File::create(dir.join("build.lock")).unwrap();
    // SAFETY: flock on a descriptor we own.
    let r = unsafe { libc::flock(lock.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) };
    assert_eq!(r, 0, "take the lock");
    match build::build(&opts(dir, 3, true), &Silent) {
        Err(BuildError::Lock(LockError::Locked(_))) => {}
        other => panic!("{other:?}"),
    }
    let line = usage_error(&["build", "--max-seeds", "3", "--out", path_str(dir)]);
    assert!(line.contains("another build"), "{line}");
    assert!(table_files(dir).is_empty());
    drop(lock);
    build_ok(&opts(dir, 3, true), &Silent);
}

#[test]
fn cli_build_reports_and_resumes() {
    let tmp = tempdir();
    let dir = tmp.path().join("db");
    let out = awari(&["build", "--max-seeds", "6", "--out", path_str(&dir)]);
    let (stdout, stderr) = (text(&out.stdout), text(&out.stderr));
    assert!(out.status.success(), "{stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");
    assert!(stderr.contains("built 7 layer(s), reused 0"), "{stderr}");
    assert!(stdout.lines().count() >= 8, "summary table: {stdout}");
    let out = awari(&["build", "--max-seeds", "6", "--out", path_str(&dir)]);
    let stderr = text(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(stderr.contains("built 0 layer(s), reused 7"), "{stderr}");
    check_manifest(&dir, &manifest(&dir), 6, true);
    // Quiet and nothing to do: silent.
    let out = awari(&["build", "--max-seeds", "6", "--out", path_str(&dir), "-q"]);
    assert!(out.status.success());
    assert!(out.stdout.is_empty() && out.stderr.is_empty());
    // A damaged table is reported on stderr even with --quiet.
    let p = dir.join("lower.5");
    let mut b = fs::read(&p).unwrap();
    b[0] ^= 0x40;
    fs::write(&p, &b).unwrap();
    let out = awari(&["build", "--max-seeds", "6", "--out", path_str(&dir), "-q"]);
    let stderr = text(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(
        stderr.starts_with("awari: warning: layer 5") && stderr.contains("lower.5"),
        "{stderr}"
    );
    listed_files_verify(&dir);
}
