//! Compressed tables, the good path, format versions 1 and 2: the round
//! trip of every table of layers 0..=14 (with and without a dictionary),
//! compressing twice, probes on compressed folders against the raw tables,
//! `awari query`, `verify` and `check` on a folder whose raw tables were
//! removed, the `compress` and `decompress` commands and their refusals,
//! and a build on a compressed folder. Format version 3 is in
//! `compress_roundtrip_v3.rs`; damaged files are in `compress_damage.rs`,
//! `compress_v2_damage.rs`, `compress_v3_damage.rs` and
//! `compress_v3_mutations.rs`.

mod common;

use awari_egdb::build;
use awari_egdb::codec::{self, Settings};
use awari_egdb::format::Kind;
use awari_egdb::index::{layer_size, unrank};
use awari_egdb::pack::{self, Action, CompressOptions, Quiet};
use awari_egdb::probe::Database;
use awari_egdb::rules::Position;
use awari_egdb::solve::Silent;
use awari_egdb::store::Manifest;
use common::compress::{
    compress_opts, copy, decompress_every_layer, parse, raw_dir, raw_table, zst_dir, zst_files,
    KINDS, MAX, SETTINGS,
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
        version: 2,
        scores_only: false,
        dont_care: false,
        level: 3,
        block_size: 256,
        block_bytes: 0,
        dictionary: 8192,
    };
    let (mut with, mut without) = (0, 0);
    for n in 0..=MAX {
        for kind in KINDS {
            let raw = raw_table(kind, n);
            let z = codec::encode(&raw, &awari_egdb::rules::AWARI, kind, n, settings).unwrap();
            let t = parse(&z).unwrap();
            let h = t.header().zstd().expect("a zstd file");
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
    let out = awari(&["compress", "--db", d, "--dictionary", "2MiB"], None);
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
            version: 2,
            scores_only: false,
            dont_care: false,
            level: 1,
            block_size: 300,
            block_bytes: 0,
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
    assert_eq!(m.compressed("upper.13").unwrap().block_size, 2048);
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
    // A row per compressed file (format 2: one table each): its layer,
    // name, sizes (smaller compressed), tables and what was done, then the
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
    for r in &rows {
        assert_eq!(r.file, format!("{}.zst", r.tables[0]), "{out}");
        assert_eq!(r.done, "decompressed", "{out}");
        assert_eq!(r.raw, raw_table(Kind::Score, r.layer).len() as u64, "{out}");
        assert!(r.ratio > 1.0 && r.raw > r.bytes, "{out}");
    }
    assert!(
        out.lines()
            .last()
            .is_some_and(|l| l.starts_with("9 table(s) in 9 compressed file(s): ")
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
        vec!["compress", "--db", s(&dir), "--level", "99"],
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
