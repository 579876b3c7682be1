//! What the layer builder tests share (`build_tables`, `build_resume`,
//! `build_crash`, `build_refusals`): build options, folder listings,
//! manifest checks, an observer that records what the builder reports, and
//! the shared database.
//!
//! One database of layers 0..=[`DB_MAX`] is built once ([`db`]) and read into
//! memory; the tests that only need its bytes share it. Tests that change a
//! folder build their own small one.

use awari_egdb::build::{self, BuildObserver, BuildOptions, BuildReport};
use awari_egdb::format::Kind;
use awari_egdb::index::{layer_size, unrank};
use awari_egdb::solve::{self, Observer, Silent};
use awari_egdb::store::Manifest;

use crate::common::{awari, s, KNOWN_GOOD};
use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::Path;
use std::sync::{Mutex, OnceLock};
use std::time::Instant;

/// Largest layer of the shared database (the kill test's target too).
pub(crate) const DB_MAX: u32 = 15;

pub(crate) const KINDS: [Kind; 3] = [Kind::Score, Kind::Lower, Kind::Upper];

pub(crate) use crate::common::options as opts;

/// Whether the long checks run (`AWARI_LONG=1`): builds of layers 0..=20
/// within a memory budget, minutes each, kept out of the test command's
/// time and run before a submission that touches the builder, the planner
/// or compression. Says so on stderr when they do not.
pub(crate) fn long(test: &str) -> bool {
    let on = std::env::var_os("AWARI_LONG").is_some_and(|v| !v.is_empty() && v != "0");
    if !on {
        eprintln!("{test}: skipped, a long check (set AWARI_LONG=1 to run it)");
    }
    on
}

pub(crate) fn tempdir() -> tempfile::TempDir {
    tempfile::Builder::new()
        .prefix("awari-xt-")
        .tempdir()
        .expect("temporary folder")
}

/// Builds `0..=max` into `dir` on the current pool, silently, and checks that
/// every planned layer is either built or reused.
pub(crate) fn build_ok(o: &BuildOptions, obs: &dyn BuildObserver) -> BuildReport {
    let r = build::build(o, obs).unwrap_or_else(|e| panic!("build {o:?}: {e}"));
    let mut all: Vec<u32> = r.built.iter().chain(&r.reused).copied().collect();
    all.sort_unstable();
    assert_eq!(all, build::layers_up_to(o.max_seeds), "built {r:?}");
    r
}

pub(crate) fn layers(max: u32) -> Vec<u32> {
    build::layers_up_to(max)
}

/// Every file of a folder by name, except `build.lock`.
pub(crate) fn files(dir: &Path) -> BTreeMap<String, Vec<u8>> {
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
pub(crate) fn table_files(dir: &Path) -> BTreeMap<String, Vec<u8>> {
    let mut f = files(dir);
    f.retain(|name, _| is_table(name));
    f
}

/// The distance tables of layers 0..=24 (those the known-good list has)
/// that `dir` holds, raw.
pub(crate) fn distance_tables(dir: &Path) -> u32 {
    (0..=24)
        .filter(|n| dir.join(Kind::Distance.file_name(*n)).exists())
        .count() as u32
}

pub(crate) fn is_table(name: &str) -> bool {
    let Some((stem, n)) = name.split_once('.') else {
        return false;
    };
    ["scores", "lower", "upper", "dist"].contains(&stem) && n.parse::<u32>().is_ok()
}

/// The names a complete build of `0..=max` has.
pub(crate) fn expected_names(max: u32, envelope: bool) -> BTreeSet<String> {
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

pub(crate) fn xxh3(bytes: &[u8]) -> String {
    format!("{:016x}", xxhash_rust::xxh3::xxh3_64(bytes))
}

/// (file name, checksum) of every file the manifest lists.
pub(crate) fn checksums(m: &Manifest) -> BTreeMap<String, String> {
    m.layers
        .iter()
        .flat_map(|e| e.files().map(|(_, f)| (f.name.clone(), f.xxh3.to_string())))
        .collect()
}

/// The folder's manifest, which must be there and readable.
pub(crate) fn manifest(dir: &Path) -> Manifest {
    Manifest::load(dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .unwrap_or_else(|| panic!("{}: no manifest", dir.display()))
}

/// Every file the manifest of `dir` lists (if any) exists with the size and
/// checksum recorded. Returns the layers listed.
pub(crate) fn listed_files_verify(dir: &Path) -> Vec<u32> {
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
                f.xxh3.to_string(),
                "{}: checksum differs from the manifest",
                path.display()
            );
        }
    }
    m.layers.iter().map(|e| e.seeds).collect()
}

/// Checks a manifest against the files it describes: layer sizes, names,
/// checksums (recomputed), the score histogram and pinned count (recounted).
pub(crate) fn check_manifest(dir: &Path, m: &Manifest, max: u32, envelope: bool) {
    assert_eq!(m.format, awari_egdb::store::FORMAT);
    assert_eq!(m.version, awari_egdb::store::VERSION);
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
            let sum = f.xxh3.to_string();
            assert!(
                sum.len() == 16
                    && sum
                        .chars()
                        .all(|c| c.is_ascii_digit() || ('a'..='f').contains(&c)),
                "{who}: checksum {sum:?} is not 16 lower-case hex digits"
            );
            let bytes = fs::read(dir.join(&f.name)).expect("listed table");
            assert_eq!(bytes.len() as u64, e.positions, "{who}: {} size", f.name);
            assert_eq!(xxh3(&bytes), sum, "{who}: {} checksum", f.name);
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
        // The phases are timed inside the layer's wall time, and the rate is
        // the positions over it.
        let p = &e.phase_seconds;
        let phases = p.exits + p.envelope + p.score + p.write;
        assert!(
            phases <= e.wall_seconds * 1.001 + 1e-6,
            "{who}: phases {phases} s"
        );
        let rate = e.positions as f64 / e.wall_seconds.max(1e-9);
        assert!(
            (e.positions_per_second / rate - 1.0).abs() < 1e-6,
            "{who}: rate"
        );
        assert_eq!(
            e.working_bytes,
            solve::memory::cost(n, envelope).working,
            "{who}: working bytes"
        );
        assert_eq!(
            e.estimate_bytes,
            solve::memory::cost(n, envelope).estimate,
            "{who}: the guard's estimate"
        );
        // The peak resident set covers the anonymous memory sampled during
        // the layer (both are the process's; the tests build concurrently).
        assert!(
            e.peak_rss_bytes >= e.peak_anon_bytes,
            "{who}: peak RSS {} below its anonymous part {}",
            e.peak_rss_bytes,
            e.peak_anon_bytes
        );
    }
}

/// The first differing index of two tables of layer `n`, described.
pub(crate) fn first_difference(n: u32, what: &str, got: &[u8], want: &[u8]) -> Option<String> {
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
pub(crate) struct Recorder {
    pub(crate) warnings: Mutex<Vec<String>>,
    pub(crate) started: Mutex<Vec<u32>>,
}

impl Observer for Recorder {}

impl BuildObserver for Recorder {
    fn start(&self, n: u32, _positions: u64, _work: u64, _compact: bool) {
        self.started.lock().unwrap().push(n);
    }
    fn warning(&self, message: &str) {
        self.warnings.lock().unwrap().push(message.to_owned());
    }
}

impl Recorder {
    pub(crate) fn warnings(&self) -> Vec<String> {
        self.warnings.lock().unwrap().clone()
    }
}

/// A folder built to `max` with the envelope, and its files.
pub(crate) fn built_folder(max: u32) -> (tempfile::TempDir, BTreeMap<String, Vec<u8>>, Manifest) {
    let tmp = tempdir();
    let r = build_ok(&opts(tmp.path(), max, true), &Silent);
    assert_eq!(r.built, layers(max));
    let t = table_files(tmp.path());
    let m = manifest(tmp.path());
    (tmp, t, m)
}

/// Table bytes and manifest checksums are those of before.
pub(crate) fn assert_unchanged(
    dir: &Path,
    t: &BTreeMap<String, Vec<u8>>,
    m: &Manifest,
    what: &str,
) {
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

pub(crate) fn tmp_files(dir: &Path) -> BTreeSet<(String, u64)> {
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

/// Layers 0..=DB_MAX with the envelope, built once through the library on
/// the global pool, checked and read into memory (the folder is removed).
pub(crate) struct Db {
    /// `tables[kind][n]`: kind 0 scores, 1 lower, 2 upper.
    pub(crate) tables: [Vec<Vec<u8>>; 3],
    pub(crate) manifest: Manifest,
}

impl Db {
    pub(crate) fn get(&self, k: usize, n: u32, g: u64) -> i8 {
        self.tables[k][n as usize][g as usize] as i8
    }
}

pub(crate) fn db() -> &'static Db {
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

/// `awari verify --checksums` on `dir` passes and says how many tables it
/// compared: `tables` and the distance tables the folder holds (the list
/// has those of layers 0..=24).
pub(crate) fn assert_known_good(dir: &Path, tables: u32) {
    let tables = tables + distance_tables(dir);
    let o = awari(&["verify", "--db", s(dir), "--checksums", KNOWN_GOOD], None);
    let out = String::from_utf8_lossy(&o.stdout).into_owned();
    assert!(
        o.status.success(),
        "{out}{}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert!(
        out.contains(&format!(
            "all {tables} table(s) equal the known-good checksums"
        )),
        "{out}"
    );
}
