//! Compressed folders, the good path: the round trip of every table of
//! layers 0..=14 through the full form (one file per layer, listed once
//! per table), the scores alone through the folder commands, compressing
//! twice, the two forms replacing each other, probes on compressed folders
//! against the raw tables, `awari query`, `verify` and `check` on a folder
//! whose raw tables were removed, the `compress` and `decompress` commands
//! and their refusals, and a build on a compressed folder. The format's
//! own round trips are in `compress_v4.rs`; damaged files in
//! `compress_damage.rs`, `compress_v4_damage.rs` and
//! `compress_v4_mutations.rs`; the retired formats' refusal in
//! `compress_retired.rs`.

mod common;

use awari_egdb::build;
use awari_egdb::codec::{self, Settings, FORMAT_VERSION};
use awari_egdb::format::Kind;
use awari_egdb::index::{layer_size, unrank};
use awari_egdb::pack::{self, Action, CompressOptions, Quiet};
use awari_egdb::probe::Database;
use awari_egdb::rules::Position;
use awari_egdb::solve::Silent;
use awari_egdb::store::Manifest;
use common::compress::{
    compress_opts, copy, decompress_every_layer, raw_dir, raw_table, zst_dir, zst_files, KINDS,
    MAX, SETTINGS,
};
use common::{awari, ok, s, scratch};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

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
            assert_eq!(c.name, codec::layer_file_name(n), "one file per layer");
            assert_eq!(c.version, FORMAT_VERSION);
            assert_eq!(
                (c.block_size, c.block_bytes),
                (SETTINGS.block_size, SETTINGS.block_bytes)
            );
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
    // Again: every raw table is there and verified; then drop the copies
    // (a layer's file once none of its tables needs it).
    let r = decompress_every_layer(&dir, true);
    assert!(r.files.iter().all(|f| f.action == Action::AlreadyRaw));
    assert_eq!(r.removed.len(), MAX as usize + 1);
    let m = Manifest::load(&dir).unwrap().unwrap();
    assert!(m.compressed.is_empty());
    let text = std::fs::read_to_string(dir.join("manifest.json")).unwrap();
    assert!(!text.contains("compressed"), "an empty list is not written");
    assert_eq!(zst_files(&dir), Vec::<String>::new());
}

#[test]
fn the_scores_alone_through_the_folder_commands() {
    // Through the folder commands, the query and the verifier; the
    // envelope's tables stay raw.
    let dir = copy("awari-compress-scores-");
    let d = s(&dir);
    ok(&[
        "compress",
        "--db",
        d,
        "--scores-only",
        "--block-size",
        "256",
        "--block-bytes",
        "48",
        "--remove-raw",
        "--quiet",
    ]);
    let m = Manifest::load(&dir).unwrap().unwrap();
    let c = m.compressed("scores.14").unwrap();
    assert_eq!((c.block_size, c.block_bytes), (256, 48));
    assert!(m.compressed("lower.14").is_none());
    assert!(dir.join("lower.14").exists() && !dir.join("scores.14").exists());
    let out = ok(&["verify", "--db", d, "--oracle", s(raw_dir())]);
    // Every pinned position of layers 0..=14 compared, all agreeing (the
    // word "agree" alone is in the table's header line).
    let raw_m = Manifest::load(raw_dir()).unwrap().unwrap();
    let pinned: u64 = raw_m.layers.iter().map(|l| l.pinned.unwrap()).sum();
    assert!(pinned > 0);
    assert!(
        out.contains(&format!(
            "all {pinned} pinned positions agree ({} layer(s) compared, {} skipped)",
            MAX + 1,
            build::layers_up_to(48).len() - (MAX as usize + 1)
        )),
        "{out}"
    );
    assert!(!out.contains("disagreement"), "{out}");
    ok(&["check", "--db", d, "--layers", "0..=12"]);
    ok(&["decompress", "--db", d, "--quiet"]);
    for n in 0..=MAX {
        for kind in KINDS {
            assert!(std::fs::read(dir.join(kind.file_name(n))).unwrap() == raw_table(kind, n));
        }
    }
}

#[test]
fn compressing_twice_verifies_and_keeps_the_files() {
    let dir = copy("awari-compress-twice-");
    let opts = CompressOptions {
        layers: 10..=11,
        ..compress_opts(false)
    };
    let r = pack::compress_folder(&dir, &opts, &Quiet).unwrap();
    assert_eq!(r.files.len(), 2, "a file per layer");
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
            block_size: 300,
            block_bytes: 128,
            ..SETTINGS
        },
        ..opts
    };
    let r = pack::compress_folder(&dir, &other, &Quiet).unwrap();
    assert!(r.files.iter().all(|f| f.action == Action::Compressed));
    let m = Manifest::load(&dir).unwrap().unwrap();
    let c = m.compressed("lower.11").unwrap();
    assert_eq!((c.block_size, c.block_bytes), (300, 128));
    let db = Database::open(&dir).unwrap();
    assert!(db.is_compressed(11, Kind::Lower).unwrap());
    assert!(!db.is_compressed(11, Kind::Score).unwrap());
    assert_eq!(
        db.table(11, Kind::Lower).unwrap().unwrap(),
        &raw_table(Kind::Lower, 11)[..]
    );
}

#[test]
fn the_full_form_and_the_scores_alone_replace_each_other_and_leave_no_stale_file() {
    let dir = copy("awari-compress-forms-");
    let layers = 10..=11;
    let alone = CompressOptions {
        settings: Settings {
            scores_only: true,
            ..SETTINGS
        },
        layers: layers.clone(),
        remove_raw: true,
    };
    pack::compress_folder(&dir, &alone, &Quiet).unwrap();
    let sorted = |dir: &std::path::Path| {
        let mut f = zst_files(dir);
        f.sort();
        f
    };
    assert_eq!(sorted(&dir), ["scores.10.zst", "scores.11.zst"]);
    // From the scores alone (the raw scores are gone) to the full form:
    // the scores' files go once nothing lists them.
    let full = CompressOptions {
        layers: layers.clone(),
        ..compress_opts(true)
    };
    let r = pack::compress_folder(&dir, &full, &Quiet).unwrap();
    assert!(r.removed.contains(&"scores.10.zst".to_string()), "{r:?}");
    assert_eq!(sorted(&dir), ["tables.10.zst", "tables.11.zst"]);
    // And back: the scores alone from the full form's scores; the
    // envelope stays in the full form's file, which keeps serving it.
    pack::compress_folder(&dir, &alone, &Quiet).unwrap();
    assert_eq!(
        sorted(&dir),
        [
            "scores.10.zst",
            "scores.11.zst",
            "tables.10.zst",
            "tables.11.zst"
        ]
    );
    let db = Database::open(&dir).unwrap();
    let raw_db = Database::open(raw_dir()).unwrap();
    for g in (0..layer_size(11)).step_by(101) {
        let p = unrank(11, g).unwrap();
        assert_eq!(db.score(&p).unwrap(), raw_db.score(&p).unwrap());
        assert_eq!(db.envelope(&p).unwrap(), raw_db.envelope(&p).unwrap());
    }
    let r = decompress_every_layer(&dir, true);
    assert!(r.files.iter().all(|f| f.action == Action::Decompressed));
    assert!(zst_files(&dir).is_empty());
    for n in layers {
        for kind in KINDS {
            assert!(std::fs::read(dir.join(kind.file_name(n))).unwrap() == raw_table(kind, n));
        }
    }
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

/// A row of the summary table of `awari compress` or `decompress`: one
/// compressed file and the tables it holds.
struct Row {
    layer: u32,
    file: String,
    tables: Vec<String>,
    raw: u64,
    bytes: u64,
    ratio: f64,
    done: String,
}

/// The rows of a summary table (the lines that start with a layer).
fn summary_rows(out: &str) -> Vec<Row> {
    out.lines()
        .filter_map(|l| {
            let w: Vec<&str> = l.split_whitespace().collect();
            let layer = w.first()?.parse().ok()?;
            if w.get(1) == Some(&"table(s)") {
                return None; // the totals
            }
            assert!(w.len() >= 8, "summary row {l:?}");
            Some(Row {
                layer,
                file: w[1].to_string(),
                raw: w[2].parse().expect("raw bytes"),
                bytes: w[3].parse().expect("compressed bytes"),
                ratio: w[4].parse().expect("ratio"),
                tables: w[6].split(',').map(str::to_string).collect(),
                done: w[7..].join(" "),
            })
        })
        .collect()
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
        "--block-size",
        "512",
        "--block-bytes",
        "128",
        "--remove-raw",
        "--json",
    ]);
    let v: serde_json::Value = serde_json::from_str(out.trim()).unwrap();
    assert_eq!(v["files"].as_array().unwrap().len(), 3, "a file per layer");
    assert_eq!(v["tables"], 9, "{v}");
    assert_eq!(v["compressed_files"], 3, "{v}");
    assert_eq!(v["removed"].as_array().unwrap().len(), 9);
    for f in v["files"].as_array().unwrap() {
        assert_eq!(f["action"], "compressed", "{f}");
        let (raw, packed) = (
            f["raw_bytes"].as_u64().unwrap(),
            f["bytes"].as_u64().unwrap(),
        );
        assert!(packed > 0 && raw > packed, "{f}");
    }
    assert!(!dir.join("scores.12").exists());
    assert!(dir.join("scores.14").exists());
    let m = Manifest::load(&dir).unwrap().unwrap();
    let c = m.compressed("upper.13").unwrap();
    assert_eq!((c.name.as_str(), c.block_size), ("tables.13.zst", 512));
    // --quiet prints nothing on stdout (and no progress on stderr).
    let quiet = awari(
        &["compress", "--db", s(&dir), "--layers", "14", "--quiet"],
        None,
    );
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
    // A row per compressed file (a layer's three tables): its layer, name,
    // sizes (smaller compressed), tables and what was done, then the
    // totals.
    let rows = summary_rows(&out);
    let want: Vec<(u32, String)> = (11..=13)
        .flat_map(|n| KINDS.map(|k| (n, k.file_name(n))))
        .collect();
    let got: Vec<(u32, String)> = rows
        .iter()
        .flat_map(|r| r.tables.iter().map(|t| (r.layer, t.clone())))
        .collect();
    assert_eq!(got, want, "{out}");
    assert_eq!(rows.len(), 3, "{out}");
    for r in &rows {
        assert_eq!(r.file, codec::layer_file_name(r.layer), "{out}");
        assert_eq!(r.done, "decompressed", "{out}");
        assert_eq!(
            r.raw,
            3 * raw_table(Kind::Score, r.layer).len() as u64,
            "{out}"
        );
        assert!(r.ratio > 1.0 && r.raw > r.bytes, "{out}");
    }
    assert!(
        out.lines()
            .last()
            .is_some_and(|l| l.starts_with("9 table(s) in 3 compressed file(s): ")
                && l.contains("; 0 file(s) removed")),
        "{out}"
    );
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
        vec!["compress", "--db", s(&dir), "--block-size", "4096"],
        vec!["compress", "--db", s(&dir), "--block-bytes", "8"],
        vec!["compress", "--db", s(&dir), "--dont-care"],
        vec!["compress", "--db", s(&dir), "--threads", "0"],
        vec!["decompress", "--db", s(&vu)],
    ] {
        let out = awari(&args, None);
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
    let mut opts = common::options(&dir, 6, true);
    build::build(&opts, &Silent).unwrap();
    let mut copts = compress_opts(true);
    copts.remove_raw = true;
    pack::compress_folder(&dir, &copts, &Quiet).unwrap();
    let before = zst_files(&dir);
    assert_eq!(before.len(), 7, "a file per layer");
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
    // One layer more: the compact solver streams the compressed lower
    // layers; nothing is written back.
    opts.max_seeds = 7;
    let notes = Notes::default();
    let r = build::build(&opts, &notes).unwrap();
    assert_eq!(r.built, vec![7]);
    let said = notes.0.lock().unwrap().join("\n");
    assert!(!said.contains("writing its raw tables back"), "{said}");
    assert!(!dir.join("scores.6").exists());
    let m = Manifest::load(&dir).unwrap().unwrap();
    assert_eq!(m.layer(7).unwrap().solver.as_deref(), Some("compact"));
    assert!(std::fs::read(dir.join("scores.7")).unwrap() == raw_table(Kind::Score, 7));
    // With the in-memory solver asked for, the lower layers are written
    // back raw from their compressed copies (which stay), then layer 8 is
    // built.
    opts.max_seeds = 8;
    opts.solver = build::Solver::Memory;
    let notes = Notes::default();
    let r = build::build(&opts, &notes).unwrap();
    assert_eq!(r.built, vec![8]);
    let said = notes.0.lock().unwrap().join("\n");
    assert!(said.contains("writing its raw tables back"), "{said}");
    let m = Manifest::load(&dir).unwrap().unwrap();
    assert_eq!(m.compressed.len(), 21, "the compressed copies stay listed");
    for n in 0..=8 {
        for kind in KINDS {
            assert!(std::fs::read(dir.join(kind.file_name(n))).unwrap() == raw_table(kind, n));
        }
    }
}
