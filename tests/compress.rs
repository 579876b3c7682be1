//! Compressed tables: the round trip of every table of layers 0..=14, probes
//! on compressed folders against the raw tables, `awari query`, `verify`
//! and `check` on a folder whose raw tables were removed, `--remove-raw`
//! keeping the originals when a check fails, and typed errors (never a
//! panic) for damaged files, including a few million random mutations of
//! headers and block indexes.

mod common;

use awari_egdb::build::{self, BuildOptions};
use awari_egdb::codec::{self, CompressError, CompressedTable, Damaged, Settings, HEADER_BYTES};
use awari_egdb::format::{Kind, MAX_BLOCK_SIZE};
use awari_egdb::index::{layer_size, unrank};
use awari_egdb::pack::{self, Action, CompressOptions, DecompressOptions, PackError, Quiet};
use awari_egdb::probe::{Database, ProbeError};
use awari_egdb::rules::Position;
use awari_egdb::solve::Silent;
use awari_egdb::table::{Manifest, MapError};
use common::scratch;
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::OnceLock;

/// Layers of the test folder.
const MAX: u32 = 14;
const KINDS: [Kind; 3] = [Kind::Score, Kind::Lower, Kind::Upper];

/// Small blocks, so that even small layers have many of them; a fast level.
const SETTINGS: Settings = Settings {
    level: 3,
    block_size: 1024,
    dictionary: 0,
};

/// Layers 0..=MAX with the envelope, built once.
fn raw_dir() -> &'static Path {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        let dir = scratch("awari-compress-raw-");
        let opts = BuildOptions {
            max_seeds: MAX,
            out: dir.clone(),
            envelope: true,
            memory_limit: None,
            reset_peak_rss: false,
        };
        build::build(&opts, &Silent).unwrap_or_else(|e| panic!("build: {e}"));
        dir
    })
}

/// A copy of the raw folder (tables and manifest).
fn copy(prefix: &str) -> PathBuf {
    let src = raw_dir();
    let dst = scratch(prefix);
    for e in std::fs::read_dir(src).unwrap() {
        let e = e.unwrap();
        if e.file_name() == "build.lock" {
            continue;
        }
        std::fs::copy(e.path(), dst.join(e.file_name())).unwrap();
    }
    dst
}

/// The names of the `.zst` files in `dir`.
fn zst_files(dir: &Path) -> Vec<String> {
    std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|name| name.ends_with(".zst"))
        .collect()
}

/// `decompress_folder` on every layer.
fn decompress_every_layer(dir: &Path, remove_compressed: bool) -> pack::PackReport {
    let opts = DecompressOptions {
        layers: 0..=48,
        remove_compressed,
    };
    pack::decompress_folder(dir, &opts, &Quiet).unwrap()
}

fn compress_opts(remove_raw: bool) -> CompressOptions {
    CompressOptions {
        settings: SETTINGS,
        layers: 0..=48,
        remove_raw,
    }
}

/// The raw folder compressed, raw tables removed: made once.
fn zst_dir() -> &'static Path {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        let dir = copy("awari-compress-zst-");
        let r = pack::compress_folder(&dir, &compress_opts(true), &Quiet).unwrap();
        assert_eq!(r.files.len(), 3 * (MAX as usize + 1));
        assert!(r.files.iter().all(|f| f.action == Action::Compressed));
        assert_eq!(r.removed.len(), 3 * (MAX as usize + 1));
        dir
    })
}

fn raw_table(kind: Kind, n: u32) -> Vec<u8> {
    std::fs::read(raw_dir().join(kind.file_name(n))).unwrap()
}

fn awari(args: &[&str]) -> Output {
    let out = Command::new(env!("CARGO_BIN_EXE_awari"))
        .args(args)
        .env_remove("AWARI_PATH")
        .output()
        .expect("run the awari binary");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!stderr.contains("panicked"), "awari {args:?}: {stderr}");
    out
}

fn ok(args: &[&str]) -> String {
    let out = awari(args);
    assert!(
        out.status.success(),
        "awari {args:?}: {:?}; stderr: {}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

#[test]
fn round_trip_is_byte_identical_for_every_table_of_layers_0_to_14() {
    let dir = copy("awari-compress-roundtrip-");
    pack::compress_folder(&dir, &compress_opts(true), &Quiet).unwrap();
    let m = Manifest::load(&dir).unwrap().unwrap();
    assert_eq!(m.compressed.len(), 3 * (MAX as usize + 1));
    for n in 0..=MAX {
        for kind in KINDS {
            let raw = kind.file_name(n);
            assert!(!dir.join(&raw).exists(), "{raw} was removed");
            let c = m.compressed(&raw).expect("listed");
            assert_eq!(c.name, format!("{raw}.zst"));
            assert_eq!(c.block_size, SETTINGS.block_size);
            assert_eq!(c.level, SETTINGS.level);
            assert_eq!(std::fs::metadata(dir.join(&c.name)).unwrap().len(), c.bytes);
        }
    }
    let r = decompress_every_layer(&dir, false);
    assert!(r.files.iter().all(|f| f.action == Action::Decompressed));
    for n in 0..=MAX {
        for kind in KINDS {
            let back = std::fs::read(dir.join(kind.file_name(n))).unwrap();
            assert!(
                back == raw_table(kind, n),
                "{} differs after the round trip",
                kind.file_name(n)
            );
        }
    }
    // Again: every raw table is there and verified; then drop the copies.
    let r = decompress_every_layer(&dir, true);
    assert!(r.files.iter().all(|f| f.action == Action::AlreadyRaw));
    assert_eq!(r.removed.len(), 3 * (MAX as usize + 1));
    let m = Manifest::load(&dir).unwrap().unwrap();
    assert!(m.compressed.is_empty());
    let text = std::fs::read_to_string(dir.join("manifest.json")).unwrap();
    assert!(!text.contains("compressed"), "an empty list is not written");
    assert_eq!(zst_files(&dir), Vec::<String>::new());
}

#[test]
fn round_trip_with_a_dictionary_for_every_table_of_layers_0_to_14() {
    let settings = Settings {
        level: 3,
        block_size: 256,
        dictionary: 8192,
    };
    let (mut with, mut without) = (0, 0);
    for n in 0..=MAX {
        for kind in KINDS {
            let raw = raw_table(kind, n);
            let z = codec::encode(&raw, kind, n, settings).unwrap();
            let t = parse(&z).unwrap();
            let h = t.header();
            // Tables too small to train a dictionary on are written without
            // one, as version 1.
            if h.dictionary > 0 {
                with += 1;
                assert!(h.dictionary <= 8192);
                assert_eq!(u32::from_le_bytes(z[8..12].try_into().unwrap()), 2);
            } else {
                without += 1;
                assert_eq!(u32::from_le_bytes(z[8..12].try_into().unwrap()), 1);
            }
            assert!(t.decompress_all().unwrap() == raw, "layer {n} {kind:?}");
            for g in [0, raw.len() as u64 / 2, raw.len() as u64 - 1] {
                assert_eq!(t.get(g).unwrap() as u8, raw[g as usize]);
            }
        }
    }
    assert!(
        with >= 3 * 6 && without >= 3 * 6,
        "{with} with, {without} without"
    );

    // Through the folder commands, the query and the verifier.
    let dir = copy("awari-compress-dict-");
    let d = s(&dir);
    ok(&[
        "compress",
        "--db",
        d,
        "--block-size",
        "256",
        "--dictionary",
        "8KiB",
        "--level",
        "3",
        "--remove-raw",
        "--quiet",
    ]);
    let m = Manifest::load(&dir).unwrap().unwrap();
    assert_eq!(m.compressed("scores.14").unwrap().dictionary, 8192);
    let out = ok(&["verify", "--db", d, "--oracle", s(raw_dir())]);
    assert!(out.contains("agree"), "{out}");
    ok(&["check", "--db", d, "--layers", "0..=12"]);
    ok(&["decompress", "--db", d, "--quiet"]);
    for n in 0..=MAX {
        for kind in KINDS {
            assert!(std::fs::read(dir.join(kind.file_name(n))).unwrap() == raw_table(kind, n));
        }
    }
    let out = awari(&["compress", "--db", d, "--dictionary", "2MiB"]);
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn compressing_twice_verifies_and_keeps_the_files() {
    let dir = copy("awari-compress-twice-");
    let opts = CompressOptions {
        layers: 10..=11,
        ..compress_opts(false)
    };
    let r = pack::compress_folder(&dir, &opts, &Quiet).unwrap();
    assert_eq!(r.files.len(), 6);
    assert!(r.removed.is_empty());
    assert!(
        dir.join("scores.10").exists(),
        "no removal without --remove-raw"
    );
    let r = pack::compress_folder(&dir, &opts, &Quiet).unwrap();
    assert!(r
        .files
        .iter()
        .all(|f| f.action == Action::AlreadyCompressed));
    // Other settings: compressed again, from the compressed copy when the
    // raw table is gone.
    std::fs::remove_file(dir.join("lower.11")).unwrap();
    let other = CompressOptions {
        settings: Settings {
            level: 1,
            block_size: 300,
            dictionary: 0,
        },
        ..opts
    };
    let r = pack::compress_folder(&dir, &other, &Quiet).unwrap();
    assert!(r.files.iter().all(|f| f.action == Action::Compressed));
    let m = Manifest::load(&dir).unwrap().unwrap();
    assert_eq!(m.compressed("lower.11").unwrap().block_size, 300);
    let db = Database::open(&dir).unwrap();
    assert!(db.is_compressed(11, Kind::Lower).unwrap());
    assert!(!db.is_compressed(11, Kind::Score).unwrap());
    assert_eq!(
        db.table(11, Kind::Lower).unwrap().unwrap(),
        &raw_table(Kind::Lower, 11)[..]
    );
}

#[test]
fn probes_on_compressed_tables_equal_the_raw_tables() {
    let raw = Database::open(raw_dir()).unwrap();
    let zst = Database::open(zst_dir()).unwrap();
    assert_eq!(zst.layers(), raw.layers());
    for n in 0..=MAX {
        for kind in KINDS {
            assert!(zst.is_compressed(n, kind).unwrap());
        }
    }
    // Every position of some layers, in index order and by position.
    for n in [0, 1, 2, 5, 9, 12] {
        let t = raw_table(Kind::Score, n);
        for g in 0..layer_size(n) {
            assert_eq!(zst.score_at(n, g).unwrap(), t[g as usize] as i8);
        }
        let (lo, hi) = (raw_table(Kind::Lower, n), raw_table(Kind::Upper, n));
        for g in (0..layer_size(n)).step_by(7) {
            let p = unrank(n, g).unwrap();
            assert_eq!(zst.score(&p).unwrap(), t[g as usize] as i8);
            let e = zst.envelope(&p).unwrap().unwrap();
            assert_eq!(
                (e.lower, e.upper),
                (lo[g as usize] as i8, hi[g as usize] as i8)
            );
        }
    }
    // Random positions of every layer: scores, envelope, moves, best play.
    let mut rng = StdRng::seed_from_u64(7);
    let ps: Vec<Position> = (0..20_000)
        .map(|_| {
            let n = rng.gen_range(1..=MAX);
            unrank(n, rng.gen_range(0..layer_size(n))).unwrap()
        })
        .collect();
    for p in &ps[..3000] {
        assert_eq!(zst.score(p).unwrap(), raw.score(p).unwrap());
        assert_eq!(zst.envelope(p).unwrap(), raw.envelope(p).unwrap());
        assert_eq!(zst.moves(p).unwrap(), raw.moves(p).unwrap());
        assert_eq!(zst.best_moves(p).unwrap(), raw.best_moves(p).unwrap());
    }
    for p in &ps[..200] {
        assert_eq!(
            zst.principal_variation(p, 40).unwrap(),
            raw.principal_variation(p, 40).unwrap()
        );
    }
    let (mut a, mut b) = (vec![0i8; ps.len()], vec![0i8; ps.len()]);
    zst.scores(&ps, &mut a).unwrap();
    raw.scores(&ps, &mut b).unwrap();
    assert_eq!(a, b);
    // Whole tables, as the Bellman check reads them.
    for kind in KINDS {
        assert_eq!(
            zst.table(MAX, kind).unwrap().unwrap(),
            &raw_table(kind, MAX)[..]
        );
    }
    // From several threads at once (each has its own block cache).
    std::thread::scope(|s| {
        for t in 0..4 {
            let (zst, raw, ps) = (&zst, &raw, &ps);
            s.spawn(move || {
                for p in ps.iter().skip(t).step_by(4) {
                    assert_eq!(zst.score(p).unwrap(), raw.score(p).unwrap());
                }
            });
        }
    });
}

#[test]
fn query_verify_and_check_work_on_a_compressed_folder_without_raw_tables() {
    let zst = zst_dir();
    let raw = raw_dir();
    for board in [
        ["1", "1", "1", "1", "1", "2", "2", "2", "3", "0", "0", "0"],
        ["0", "0", "0", "0", "0", "1", "0", "0", "0", "0", "0", "0"],
        ["3", "0", "2", "1", "1", "1", "0", "1", "2", "2", "0", "1"],
    ] {
        let mut args = vec!["query", "--db", s(zst), "--pv", "20", "--json"];
        args.extend(board);
        let a = ok(&args);
        args[2] = s(raw);
        assert_eq!(a, ok(&args), "query {board:?}");
    }
    let out = ok(&["verify", "--db", s(zst), "--oracle", s(raw), "--json"]);
    let v: serde_json::Value = serde_json::from_str(out.trim()).unwrap();
    assert_eq!(v["ok"], true, "{out}");
    assert_eq!(v["compared_layers"], MAX + 1);
    let out = ok(&["check", "--db", s(zst), "--json"]);
    let v: serde_json::Value = serde_json::from_str(out.trim()).unwrap();
    assert_eq!(v["ok"], true, "{out}");
    assert_eq!(v["mismatches"], 0);
}

#[test]
fn cli_compress_and_decompress_round_trip() {
    let dir = copy("awari-compress-cli-");
    let out = ok(&[
        "compress",
        "--db",
        s(&dir),
        "--layers",
        "11..=13",
        "--level",
        "1",
        "--block-size",
        "2KiB",
        "--remove-raw",
        "--json",
    ]);
    let v: serde_json::Value = serde_json::from_str(out.trim()).unwrap();
    assert_eq!(v["files"].as_array().unwrap().len(), 9);
    assert_eq!(v["removed"].as_array().unwrap().len(), 9);
    assert!(!dir.join("scores.12").exists());
    assert!(dir.join("scores.14").exists());
    let m = Manifest::load(&dir).unwrap().unwrap();
    assert_eq!(m.compressed("upper.13").unwrap().block_size, 2048);
    // --quiet prints nothing on stdout (and no progress on stderr).
    let quiet = awari(&["compress", "--db", s(&dir), "--layers", "14", "--quiet"]);
    assert!(quiet.status.success(), "{quiet:?}");
    assert!(
        quiet.stdout.is_empty(),
        "{}",
        String::from_utf8_lossy(&quiet.stdout)
    );
    assert!(
        quiet.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&quiet.stderr)
    );
    let out = ok(&["decompress", "--db", s(&dir), "--layers", "11..=13"]);
    assert!(out.contains("decompressed"), "{out}");
    for n in 11..=13 {
        for kind in KINDS {
            assert!(std::fs::read(dir.join(kind.file_name(n))).unwrap() == raw_table(kind, n));
        }
    }
}

#[test]
fn cli_refuses_bad_input_with_status_2() {
    let vu = scratch("awari-compress-vu-");
    std::fs::copy(raw_dir().join("scores.5"), vu.join("scores.5")).unwrap();
    let dir = copy("awari-compress-bad-");
    for args in [
        vec!["compress", "--db", s(&vu)],
        vec!["compress", "--db", "/nonexistent/folder"],
        vec!["compress", "--db", s(&dir), "--block-size", "0"],
        vec!["compress", "--db", s(&dir), "--block-size", "1GiB"],
        vec!["compress", "--db", s(&dir), "--block-size", "lots"],
        vec!["compress", "--db", s(&dir), "--level", "99"],
        vec!["compress", "--db", s(&dir), "--threads", "0"],
        vec!["decompress", "--db", s(&vu)],
    ] {
        let out = awari(&args);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {stderr}");
        assert!(stderr.starts_with("awari:"), "{args:?}: {stderr}");
    }
    assert!(
        !vu.join("build.lock").exists(),
        "nothing written to a VU folder"
    );
    assert_eq!(zst_files(&dir), Vec::<String>::new());
}

#[test]
fn remove_raw_keeps_the_originals_when_a_check_fails() {
    let dir = copy("awari-compress-keep-");
    // A damaged raw table: it is not compressed, and its layer keeps every
    // raw table.
    let victim = dir.join("lower.12");
    let mut b = std::fs::read(&victim).unwrap();
    b[1000] ^= 0x40;
    std::fs::write(&victim, &b).unwrap();
    let out = awari(&["compress", "--db", s(&dir), "--level", "1", "--remove-raw"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("lower.12"), "{stderr}");
    for kind in KINDS {
        assert!(dir.join(kind.file_name(12)).exists());
        assert!(dir.join(kind.file_name(13)).exists());
        assert!(!dir.join(kind.file_name(11)).exists(), "layer 11 was done");
    }
    let m = Manifest::load(&dir).unwrap().unwrap();
    assert!(m.compressed("lower.12").is_none());
    assert!(!dir.join("lower.12.zst").exists());
    assert!(!dir.join("lower.12.zst.tmp").exists());

    // A damaged compressed file found by a later run: compressed again from
    // the raw table before the raw table goes.
    let dir = copy("awari-compress-redo-");
    let opts = CompressOptions {
        layers: 9..=9,
        ..compress_opts(false)
    };
    pack::compress_folder(&dir, &opts, &Quiet).unwrap();
    let zst = dir.join("upper.9.zst");
    let mut z = std::fs::read(&zst).unwrap();
    let last = z.len() - 10;
    z[last] ^= 1;
    std::fs::write(&zst, &z).unwrap();
    let r = pack::compress_folder(
        &dir,
        &CompressOptions {
            remove_raw: true,
            ..opts.clone()
        },
        &Quiet,
    )
    .unwrap();
    assert_eq!(r.removed.len(), 3);
    let redone: Vec<_> = r.files.iter().map(|f| (f.raw.as_str(), f.action)).collect();
    assert!(
        redone.contains(&("upper.9", Action::Compressed)),
        "{redone:?}"
    );
    let db = Database::open(&dir).unwrap();
    assert_eq!(
        db.table(9, Kind::Upper).unwrap().unwrap(),
        &raw_table(Kind::Upper, 9)[..]
    );
    // Damaged again, now without a raw table to fall back on: an error,
    // nothing else removed or changed.
    std::fs::write(&zst, &z).unwrap();
    let e = pack::compress_folder(&dir, &opts, &Quiet).unwrap_err();
    assert!(e.is_damage(), "{e}");
    assert!(matches!(e, PackError::Checksum(_)), "{e:?}");
}

#[test]
fn damaged_compressed_files_are_typed_probe_errors() {
    let dir = copy("awari-compress-damaged-");
    let opts = CompressOptions {
        layers: 8..=8,
        ..compress_opts(true)
    };
    pack::compress_folder(&dir, &opts, &Quiet).unwrap();
    let zst = dir.join("scores.8.zst");
    let good = std::fs::read(&zst).unwrap();
    let p = unrank(8, 100).unwrap();
    // A flipped byte in the block index: the header's own checksum on
    // opening, and the file's checksum in the manifest when asked for.
    let mut bad = good.clone();
    bad[HEADER_BYTES + 3] ^= 1;
    std::fs::write(&zst, &bad).unwrap();
    match Database::open(&dir).unwrap().score(&p) {
        Err(ProbeError::Compressed(Damaged { path, source })) => {
            assert_eq!(path, zst);
            assert!(
                matches!(
                    source,
                    CompressError::IndexChecksum { .. } | CompressError::OffsetOutOfRange { .. }
                ),
                "{source:?}"
            );
        }
        r => panic!("want a header checksum error, got {r:?}"),
    }
    let db = Database::open(&dir).unwrap().verify_on_load(true);
    match db.score(&p) {
        Err(ProbeError::Checksum(e)) => assert_eq!(e.path, zst),
        r => panic!("want a checksum error, got {r:?}"),
    }
    match Database::open(&dir).unwrap().verify_layer(8) {
        Err(e) if e.is_damage() => assert!(e.to_string().contains("scores.8.zst"), "{e}"),
        r => panic!("verify_layer: want a damaged-table error, got {r:?}"),
    }
    // Truncated: the size in the manifest.
    std::fs::write(&zst, &good[..good.len() - 1]).unwrap();
    match Database::open(&dir).unwrap().score(&p) {
        Err(ProbeError::Map(MapError::Size { .. })) => {}
        r => panic!("want a size error, got {r:?}"),
    }
    // Missing: an I/O error naming the file.
    std::fs::remove_file(&zst).unwrap();
    let e = Database::open(&dir).unwrap().score(&p).unwrap_err();
    assert!(e.to_string().contains("scores.8.zst"), "{e}");
    // Another table's file under this name: its header says so.
    std::fs::copy(dir.join("lower.8.zst"), &zst).unwrap();
    let mut m = Manifest::load(&dir).unwrap().unwrap();
    let lower = m.compressed("lower.8").unwrap().clone();
    let mut c = m.compressed("scores.8").unwrap().clone();
    c.bytes = lower.bytes;
    c.xxh3 = lower.xxh3;
    m.put_compressed(c);
    m.store(&dir).unwrap();
    match Database::open(&dir).unwrap().score(&p) {
        Err(ProbeError::Compressed(Damaged {
            source: CompressError::Mismatch { field: "table", .. },
            ..
        })) => {}
        r => panic!("want a table mismatch, got {r:?}"),
    }
    // A manifest that lists a compressed copy of a table it does not have.
    let mut m = Manifest::load(&dir).unwrap().unwrap();
    m.compressed[0].raw = "scores.99".into();
    m.store(&dir).unwrap();
    assert!(matches!(Database::open(&dir), Err(ProbeError::Manifest(_))));
}

/// An observer that keeps the builder's notes.
#[derive(Default)]
struct Notes(std::sync::Mutex<Vec<String>>);
impl awari_egdb::solve::Observer for Notes {}
impl build::BuildObserver for Notes {
    fn note(&self, message: &str) {
        self.0.lock().unwrap().push(message.to_string());
    }
    fn warning(&self, message: &str) {
        self.0.lock().unwrap().push(format!("warning: {message}"));
    }
}

#[test]
fn build_on_a_compressed_folder_keeps_it_and_writes_back_only_what_it_reads() {
    let dir = scratch("awari-compress-build-");
    let mut opts = BuildOptions {
        max_seeds: 6,
        out: dir.clone(),
        envelope: true,
        memory_limit: None,
        reset_peak_rss: false,
    };
    build::build(&opts, &Silent).unwrap();
    let mut copts = compress_opts(true);
    copts.remove_raw = true;
    pack::compress_folder(&dir, &copts, &Quiet).unwrap();
    let before = zst_files(&dir);
    assert_eq!(before.len(), 21);
    // Every layer asked for is there, compressed: nothing is rebuilt or
    // written, and the builder says what it found.
    let notes = Notes::default();
    let r = build::build(&opts, &notes).unwrap();
    assert!(r.built.is_empty(), "{:?}", r.built);
    assert_eq!(r.reused, (0..=6).collect::<Vec<_>>());
    let said = notes.0.lock().unwrap().join("\n");
    assert!(said.contains("layer 3 is kept only compressed"), "{said}");
    assert!(
        !said.contains("missing") && !said.contains("warning"),
        "{said}"
    );
    assert_eq!(zst_files(&dir), before);
    assert!(!dir.join("scores.3").exists());
    // One layer more: the lower layers are written back raw from their
    // compressed copies (which stay), then layer 7 is built.
    opts.max_seeds = 7;
    let notes = Notes::default();
    let r = build::build(&opts, &notes).unwrap();
    assert_eq!(r.built, vec![7]);
    let said = notes.0.lock().unwrap().join("\n");
    assert!(said.contains("writing its raw tables back"), "{said}");
    let m = Manifest::load(&dir).unwrap().unwrap();
    assert_eq!(m.compressed.len(), 21, "the compressed copies stay listed");
    for n in 0..=7 {
        for kind in KINDS {
            assert!(std::fs::read(dir.join(kind.file_name(n))).unwrap() == raw_table(kind, n));
        }
    }
}

// ---------------------------------------------------------------------------
// The file format under bad input.

/// Layer 8's scores (75,504 entries) in 295 blocks of 256, compressed with
/// a dictionary of `dictionary` bytes (0: none): small enough to mutate
/// millions of times.
fn layer_8_sample(dictionary: u32) -> (Vec<u8>, Vec<u8>) {
    let raw = raw_table(Kind::Score, 8);
    let settings = Settings {
        level: 3,
        block_size: 256,
        dictionary,
    };
    let z = codec::encode(&raw, Kind::Score, 8, settings).unwrap();
    assert_eq!(parse(&z).unwrap().header().dictionary > 0, dictionary > 0);
    (raw, z)
}

/// The sample without a dictionary (format version 1).
fn sample() -> &'static (Vec<u8>, Vec<u8>) {
    static S: OnceLock<(Vec<u8>, Vec<u8>)> = OnceLock::new();
    S.get_or_init(|| layer_8_sample(0))
}

/// The sample with a dictionary of 8 KiB (format version 2).
fn sample_dict() -> &'static (Vec<u8>, Vec<u8>) {
    static S: OnceLock<(Vec<u8>, Vec<u8>)> = OnceLock::new();
    S.get_or_init(|| layer_8_sample(8192))
}

fn u64_at(b: &[u8], at: usize) -> u64 {
    u64::from_le_bytes(b[at..at + 8].try_into().unwrap())
}

/// Rewrites the checksum of header and index after a mutation, as a forger
/// would, so that the parser's other checks are reached.
fn forge(z: &mut [u8]) {
    if z.len() < HEADER_BYTES {
        return;
    }
    let entries = u64_at(z, 40);
    let bs = u32::from_le_bytes(z[36..40].try_into().unwrap()) as u64;
    if bs == 0 || entries > 1 << 40 {
        return;
    }
    let mut end = HEADER_BYTES as u64 + 8 * (entries.div_ceil(bs) + 1);
    if u32::from_le_bytes(z[8..12].try_into().unwrap()) == 2 {
        end += u32::from_le_bytes(z[52..56].try_into().unwrap()) as u64;
    }
    if end > z.len() as u64 {
        return;
    }
    let mut h = xxhash_rust::xxh3::Xxh3::new();
    h.update(&z[..64]);
    h.update(&z[HEADER_BYTES..end as usize]);
    let sum = h.digest();
    z[64..72].copy_from_slice(&sum.to_le_bytes());
}

fn set(z: &[u8], at: usize, bytes: &[u8]) -> Vec<u8> {
    let mut z = z.to_vec();
    z[at..at + bytes.len()].copy_from_slice(bytes);
    forge(&mut z);
    z
}

fn parse(z: &[u8]) -> Result<CompressedTable<&[u8]>, CompressError> {
    CompressedTable::parse(z)
}

#[test]
fn each_damaged_header_field_has_its_typed_error() {
    let (raw, z) = sample();
    let t = parse(z).unwrap();
    assert_eq!(t.decompress_all().unwrap(), *raw);
    let blocks = t.blocks();
    let data_start = HEADER_BYTES + 8 * (blocks as usize + 1);
    type Check = fn(&CompressError) -> bool;
    let cases: Vec<(&str, Vec<u8>, Check)> = vec![
        ("empty", vec![], |e| {
            matches!(e, CompressError::Truncated { part: "header", .. })
        }),
        ("short header", z[..40].to_vec(), |e| {
            matches!(e, CompressError::Truncated { part: "header", .. })
        }),
        ("magic", set(z, 0, b"AWARIZSX"), |e| {
            *e == CompressError::BadMagic
        }),
        ("version", set(z, 8, &3u32.to_le_bytes()), |e| {
            *e == CompressError::UnsupportedVersion(3)
        }),
        (
            "version 2 without a dictionary",
            set(z, 8, &2u32.to_le_bytes()),
            |e| {
                matches!(
                    e,
                    CompressError::HeaderField {
                        field: "dictionary",
                        ..
                    }
                )
            },
        ),
        ("dictionary in version 1", set(z, 52, &[1]), |e| {
            matches!(
                e,
                CompressError::HeaderField {
                    field: "reserved",
                    ..
                }
            )
        }),
        ("table", set(z, 12, &[3]), |e| {
            matches!(e, CompressError::HeaderField { field: "table", .. })
        }),
        ("reserved", set(z, 13, &[1]), |e| {
            matches!(
                e,
                CompressError::HeaderField {
                    field: "reserved",
                    ..
                }
            )
        }),
        ("rule set", set(z, 16, b"awari-vu2003"), |e| {
            matches!(
                e,
                CompressError::HeaderField {
                    field: "rule set",
                    ..
                }
            )
        }),
        ("layer 47", set(z, 32, &47u32.to_le_bytes()), |e| {
            matches!(e, CompressError::HeaderField { field: "layer", .. })
        }),
        ("layer 49", set(z, 32, &49u32.to_le_bytes()), |e| {
            matches!(e, CompressError::HeaderField { field: "layer", .. })
        }),
        ("other layer", set(z, 32, &9u32.to_le_bytes()), |e| {
            matches!(
                e,
                CompressError::HeaderField {
                    field: "entries",
                    ..
                }
            )
        }),
        ("entries", set(z, 40, &u64::MAX.to_le_bytes()), |e| {
            matches!(
                e,
                CompressError::HeaderField {
                    field: "entries",
                    ..
                }
            )
        }),
        ("block size 0", set(z, 36, &0u32.to_le_bytes()), |e| {
            matches!(
                e,
                CompressError::HeaderField {
                    field: "block size",
                    ..
                }
            )
        }),
        (
            "block size too large",
            set(z, 36, &(MAX_BLOCK_SIZE + 1).to_le_bytes()),
            |e| {
                matches!(
                    e,
                    CompressError::HeaderField {
                        field: "block size",
                        ..
                    }
                )
            },
        ),
        ("level", set(z, 48, &1000i32.to_le_bytes()), |e| {
            matches!(e, CompressError::HeaderField { field: "level", .. })
        }),
        (
            "block size 1: index past the end",
            set(z, 36, &1u32.to_le_bytes()),
            |e| {
                matches!(
                    e,
                    CompressError::Truncated {
                        part: "block index",
                        ..
                    }
                )
            },
        ),
        ("truncated index", z[..HEADER_BYTES + 100].to_vec(), |e| {
            matches!(
                e,
                CompressError::Truncated {
                    part: "block index",
                    ..
                }
            )
        }),
        ("truncated blocks", z[..z.len() - 1].to_vec(), |e| {
            matches!(e, CompressError::Truncated { part: "blocks", .. })
        }),
        ("trailing bytes", [&z[..], &[0u8]].concat(), |e| {
            matches!(e, CompressError::OffsetOutOfRange { .. })
        }),
        (
            "first offset",
            set(z, HEADER_BYTES, &(data_start as u64 + 1).to_le_bytes()),
            |e| matches!(e, CompressError::OffsetOutOfRange { block: 0, .. }),
        ),
        (
            "decreasing offset",
            set(z, HEADER_BYTES + 8 * 5, &(data_start as u64).to_le_bytes()),
            |e| matches!(e, CompressError::OffsetOutOfRange { block: 5, .. }),
        ),
        (
            "index checksum",
            z[..]
                .iter()
                .enumerate()
                .map(|(i, &b)| if i == 64 { b ^ 1 } else { b })
                .collect(),
            |e| matches!(e, CompressError::IndexChecksum { .. }),
        ),
    ];
    for (what, bytes, check) in cases {
        match parse(&bytes) {
            Ok(_) => panic!("{what}: parsed"),
            Err(e) => assert!(check(&e), "{what}: unexpected error {e:?}"),
        }
    }
    // A shifted offset (index checksum forged): the blocks around it fail
    // to decompress, with their number.
    let mut shifted = z.clone();
    let at = HEADER_BYTES + 8 * 7;
    let off = u64_at(z, at) + 3;
    shifted[at..at + 8].copy_from_slice(&off.to_le_bytes());
    forge(&mut shifted);
    let t = parse(&shifted).unwrap();
    let mut out = vec![0u8; 256];
    assert!(matches!(
        t.decompress_block(6, &mut out),
        Err(CompressError::Zstd { block: 6, .. })
    ));
    assert!(matches!(
        t.decompress_block(7, &mut out),
        Err(CompressError::Zstd { block: 7, .. })
    ));
    assert!(t.decompress_block(8, &mut out).is_ok());
    assert!(matches!(
        t.get(6 * 256 + 5),
        Err(CompressError::Zstd { block: 6, .. })
    ));
    assert!(t.decompress_all().is_err());
    // A damaged frame: zstd's checksum of the block.
    let mut flipped = z.clone();
    let at = u64_at(z, HEADER_BYTES + 8 * 20) as usize + 8;
    flipped[at] ^= 0x10;
    let t = parse(&flipped).unwrap();
    assert!(matches!(
        t.get(20 * 256),
        Err(CompressError::Zstd { block: 20, .. })
    ));
}

/// One mutated file: parsing and reading it must give an error or the
/// right bytes, never a panic. Returns whether it parsed.
fn try_mutation(z: &[u8], raw: &[u8], blocks_to_read: &[u64]) -> bool {
    let r = catch_unwind(AssertUnwindSafe(|| {
        let Ok(t) = parse(z) else {
            return false;
        };
        let bs = t.header().block_size as u64;
        for &b in blocks_to_read {
            let start = b.saturating_mul(bs);
            if let Ok(v) = t.get(start) {
                assert_eq!(Some(&(v as u8)), raw.get(start as usize), "entry {start}");
            }
            let len = (t.len().saturating_sub(start)).min(bs) as usize;
            let mut out = vec![0u8; len];
            if t.decompress_block(b, &mut out).is_ok() {
                assert_eq!(
                    Some(&out[..]),
                    raw.get(start as usize..start as usize + len),
                    "block {b}"
                );
            }
        }
        true
    }));
    match r {
        Ok(parsed) => parsed,
        Err(_) => panic!("a mutated file made the reader panic"),
    }
}

/// Iterations of the mutation loops (fewer without optimisation).
fn rounds(release: usize) -> usize {
    if cfg!(debug_assertions) {
        release / 20
    } else {
        release
    }
}

#[test]
fn millions_of_random_header_and_index_mutations_never_panic() {
    let (raw, z) = sample();
    mutate_header_and_index(raw, z, 0x2a7a1, rounds(3_000_000));
}

#[test]
fn a_million_random_header_index_and_dictionary_mutations_never_panic() {
    let (raw, z) = sample_dict();
    let h = parse(z).unwrap().header().clone();
    assert!(h.data_start() > h.index_end());
    mutate_header_and_index(raw, z, 0x2a7a3, rounds(1_000_000));
    // A damaged dictionary byte: caught by the checksum of header, index
    // and dictionary.
    let mut m = z.clone();
    m[h.index_end() as usize + 100] ^= 4;
    assert!(matches!(
        parse(&m),
        Err(CompressError::IndexChecksum { .. })
    ));
    // A version 2 header too large a dictionary.
    let big = set(
        z,
        52,
        &(awari_egdb::format::MAX_DICTIONARY + 1).to_le_bytes(),
    );
    assert!(matches!(
        parse(&big),
        Err(CompressError::HeaderField {
            field: "dictionary",
            ..
        })
    ));
}

/// `total` rounds of 1 to 4 random bytes changed among header, index (and
/// dictionary) of `z`, every other round with a forged checksum.
fn mutate_header_and_index(raw: &[u8], z: &[u8], seed: u64, total: usize) {
    let data_start = parse(z).unwrap().header().data_start() as usize;
    let mut rng = StdRng::seed_from_u64(seed);
    let mut m = z.to_vec();
    let (mut parsed, mut forged_parsed) = (0usize, 0usize);
    for round in 0..total {
        // 1 to 4 random bytes of header or index changed: random values,
        // single bits, or small changes to an offset.
        let mut changed = [0usize; 4];
        let k = rng.gen_range(1..=4);
        for c in changed.iter_mut().take(k) {
            let at = rng.gen_range(0..data_start);
            *c = at;
            m[at] = match rng.gen_range(0..3) {
                0 => rng.gen(),
                1 => m[at] ^ (1 << rng.gen_range(0..8)),
                _ => m[at].wrapping_add(rng.gen_range(1..4)),
            };
        }
        if changed.iter().take(k).all(|&a| m[a] == z[a]) {
            continue; // no change after all
        }
        let forged = round % 2 == 1;
        if forged {
            forge(&mut m);
        }
        // Read the blocks an index change could have moved, and one more.
        let at = changed[0];
        let near = if at >= HEADER_BYTES {
            ((at - HEADER_BYTES) / 8) as u64
        } else {
            0
        };
        let blocks = [near.saturating_sub(1), near, rng.gen_range(0..300)];
        if try_mutation(&m, raw, &blocks) {
            parsed += 1;
            forged_parsed += usize::from(forged);
        }
        for &at in changed.iter().take(k) {
            m[at] = z[at];
        }
        m[64..72].copy_from_slice(&z[64..72]);
    }
    eprintln!(
        "{total} mutations of header, index and dictionary: {parsed} parsed ({forged_parsed} with a forged checksum)"
    );
    // Without a forged checksum, a changed header or index never parses.
    assert_eq!(parsed, forged_parsed);
}

#[test]
fn random_truncations_and_block_mutations_never_panic() {
    let (raw, z) = sample();
    let t = parse(z).unwrap();
    let data_start = t.header().data_start() as usize;
    let blocks = t.blocks();
    let mut rng = StdRng::seed_from_u64(0x2a7a2);
    let total = rounds(300_000);
    for _ in 0..total {
        let len = rng.gen_range(0..z.len());
        assert!(
            !try_mutation(&z[..len], raw, &[0]),
            "truncated to {len} parsed"
        );
    }
    // Damaged block bytes: the index still parses; every read gives an
    // error or the right bytes.
    let mut m = z.clone();
    for _ in 0..rounds(100_000) {
        let at = rng.gen_range(data_start..z.len());
        m[at] = rng.gen();
        let block = (0..blocks)
            .rev()
            .find(|&b| u64_at(z, HEADER_BYTES + 8 * b as usize) <= at as u64)
            .unwrap();
        assert!(try_mutation(&m, raw, &[block]));
        m[at] = z[at];
    }
    // Random bytes after a valid header (forged checksum), and random
    // files.
    for _ in 0..rounds(100_000) {
        let len = rng.gen_range(0..4000);
        let mut r: Vec<u8> = (0..len).map(|_| rng.gen()).collect();
        if len >= 64 && rng.gen_bool(0.5) {
            r[..64].copy_from_slice(&z[..64]);
            forge(&mut r);
        }
        try_mutation(&r, raw, &[0, 1]);
    }
}

#[test]
fn verify_and_check_fail_with_status_1_on_a_damaged_compressed_table() {
    // A compressed-only folder whose scores.9.zst has one damaged byte: a
    // damaged table is a failed check (1), not bad input (2).
    let dir = scratch("awari-compress-damaged-");
    for e in std::fs::read_dir(zst_dir()).unwrap() {
        let e = e.unwrap();
        if e.file_name() != "build.lock" {
            std::fs::copy(e.path(), dir.join(e.file_name())).unwrap();
        }
    }
    let zst = dir.join("scores.9.zst");
    let mut z = std::fs::read(&zst).unwrap();
    let mid = z.len() / 2;
    z[mid] ^= 0x10;
    std::fs::write(&zst, &z).unwrap();
    for args in [
        vec!["check", "--db", s(&dir)],
        vec!["verify", "--db", s(&dir), "--oracle", s(raw_dir())],
    ] {
        let out = awari(&args);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{args:?}: {stderr}");
        assert!(stderr.contains("scores.9.zst"), "{args:?}: {stderr}");
    }
}
