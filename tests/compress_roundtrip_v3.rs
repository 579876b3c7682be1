//! Compressed tables, the good path, format version 3: the round trip of
//! every table of layers 0..=14 (full form and scores alone, block sizes 1
//! to 16384), probes, `verify` and `decompress` on a format 3 folder,
//! formats 2 and 3 replacing each other, the scores-only form an engine
//! ships (no manifest), and the command line's format flags. Formats 1 and
//! 2 are in `compress_roundtrip.rs`.

mod common;

use awari_egdb::codec::{self, Settings};
use awari_egdb::format::Kind;
use awari_egdb::index::{layer_size, unrank};
use awari_egdb::pack::{self, Action, CompressOptions, Quiet};
use awari_egdb::probe::Database;
use awari_egdb::store::Manifest;
use common::compress::{
    compress_opts, copy, decompress_every_layer, parse, raw_dir, raw_table, zst_files, KINDS, MAX,
};
use common::{awari, ok, s, scratch};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use std::path::Path;

/// Format 3 settings: the full form or scores alone, with a block size.
fn models(scores_only: bool, block_size: u32) -> Settings {
    Settings {
        block_size,
        ..Settings::models(scores_only)
    }
}

#[test]
fn format_3_round_trips_every_table_of_layers_0_to_14_at_any_block_size() {
    use awari_egdb::codec::v3;
    let rules = awari_egdb::rules::AWARI;
    for n in 0..=MAX {
        let [sc, lo, hi] = KINDS.map(|k| raw_table(k, n));
        for bs in [1, 7, 64, 512, 16384] {
            for full in [true, false] {
                let t = v3::TableSet {
                    scores: &sc,
                    envelope: full.then_some((&lo[..], &hi[..])),
                };
                let z = v3::encode(t, &rules, n, bs).unwrap();
                let mut t = parse(&z).unwrap();
                let h = t.header().clone();
                assert_eq!((h.version, h.layer, h.block_size), (3, n, bs));
                assert_eq!(h.tables, if full { 0b111 } else { 0b001 });
                let kinds: &[Kind] = if full { &KINDS } else { &KINDS[..1] };
                for &kind in kinds {
                    let raw = raw_table(kind, n);
                    t.serve(kind).unwrap();
                    assert_eq!(
                        t.header().raw_checksum(),
                        awari_egdb::format::Checksum::of(&raw)
                    );
                    assert!(
                        t.decompress_all().unwrap() == raw,
                        "layer {n} {kind:?} block {bs}"
                    );
                    for g in (0..raw.len() as u64).step_by(37) {
                        assert_eq!(t.get(g).unwrap(), raw[g as usize] as i8);
                    }
                    t.verify(Some(&raw), &|_| {}).unwrap();
                }
                if !full {
                    assert!(
                        t.serve(Kind::Lower).is_err(),
                        "scores alone hold no envelope"
                    );
                }
            }
        }
    }
    // Values out of order or out of range are refused, not coded.
    let [sc, lo, hi] = KINDS.map(|k| raw_table(k, 6));
    let mut bad = lo.clone();
    let g = (0..bad.len()).find(|&g| sc[g] as i8 > -6).unwrap();
    bad[g] = sc[g].wrapping_add(1);
    let t = v3::TableSet {
        scores: &sc,
        envelope: Some((&bad, &hi)),
    };
    let e = v3::encode(t, &rules, 6, 64).unwrap_err();
    assert_eq!(e.kind(), std::io::ErrorKind::InvalidInput);
    assert!(e.to_string().contains(&format!("entry {g}")), "{e}");
    let mut out_of_range = sc.clone();
    out_of_range[3] = 7;
    let t = v3::TableSet {
        scores: &out_of_range,
        envelope: None,
    };
    assert!(v3::encode(t, &rules, 6, 64).is_err());
    assert!(v3::encode(
        v3::TableSet {
            scores: &sc[1..],
            envelope: None
        },
        &rules,
        6,
        64
    )
    .is_err());
    assert!(v3::encode(
        v3::TableSet {
            scores: &sc,
            envelope: None
        },
        &rules,
        6,
        0
    )
    .is_err());
    assert!(v3::encode(
        v3::TableSet {
            scores: &sc,
            envelope: None
        },
        &rules,
        6,
        16385
    )
    .is_err());
}

#[test]
fn a_format_3_folder_probes_verifies_and_decompresses_like_the_raw_one() {
    let dir = copy("awari-compress-v3-");
    let opts = CompressOptions {
        settings: models(false, 256),
        layers: 0..=48,
        remove_raw: true,
    };
    let r = pack::compress_folder(&dir, &opts, &Quiet).unwrap();
    assert_eq!(r.files.len(), MAX as usize + 1, "one file per layer");
    assert!(r.files.iter().all(|f| f.action == Action::Compressed));
    let mut files = zst_files(&dir);
    files.sort();
    let mut want: Vec<String> = (0..=MAX).map(codec::layer_file_name).collect();
    want.sort();
    assert_eq!(files, want);
    let m = Manifest::load(&dir).unwrap().unwrap();
    assert_eq!(m.compressed.len(), 3 * (MAX as usize + 1));
    for n in 0..=MAX {
        for kind in KINDS {
            assert!(!dir.join(kind.file_name(n)).exists());
            let c = m.compressed(&kind.file_name(n)).unwrap();
            assert_eq!((c.version, c.name.clone()), (3, codec::layer_file_name(n)));
        }
    }
    // Probes of scores and envelope equal the raw tables'.
    let raw_db = Database::open(raw_dir()).unwrap();
    let db = Database::open(&dir).unwrap();
    let mut rng = StdRng::seed_from_u64(25);
    for n in 1..=MAX {
        for _ in 0..300 {
            let g = rng.gen_range(0..layer_size(n));
            let p = unrank(n, g).unwrap();
            assert_eq!(db.score(&p).unwrap(), raw_db.score(&p).unwrap(), "{n} {g}");
            assert_eq!(
                db.envelope(&p).unwrap(),
                raw_db.envelope(&p).unwrap(),
                "{n} {g}"
            );
        }
    }
    // Compressing again verifies and keeps the files.
    let r = pack::compress_folder(&dir, &opts, &Quiet).unwrap();
    assert!(r
        .files
        .iter()
        .all(|f| f.action == Action::AlreadyCompressed));
    // The checks read v3: known-good checksums of the raw bytes, the
    // Bellman check.
    let known = Path::new(env!("CARGO_MANIFEST_DIR")).join("data/known-good.csv");
    let out = ok(&[
        "verify",
        "--db",
        s(&dir),
        "--checksums",
        s(&known),
        "--json",
    ]);
    let v: serde_json::Value = serde_json::from_str(out.trim()).unwrap();
    assert_eq!(v["ok"], true, "{out}");
    let out = ok(&["check", "--db", s(&dir), "--json"]);
    let v: serde_json::Value = serde_json::from_str(out.trim()).unwrap();
    assert_eq!(v["ok"], true, "{out}");
    let out = ok(&[
        "verify",
        "--db",
        s(&dir),
        "--oracle",
        s(raw_dir()),
        "--json",
    ]);
    let v: serde_json::Value = serde_json::from_str(out.trim()).unwrap();
    assert_eq!(v["ok"], true, "{out}");
    assert_eq!(v["compared_layers"], MAX + 1);
    ok(&["stats", "--db", s(&dir)]);
    // Back to raw, byte-identical; the shared file goes once no table
    // needs it.
    let r = decompress_every_layer(&dir, true);
    assert!(r.files.iter().all(|f| f.action == Action::Decompressed));
    assert_eq!(r.removed.len(), MAX as usize + 1);
    assert!(zst_files(&dir).is_empty());
    for n in 0..=MAX {
        for kind in KINDS {
            let back = std::fs::read(dir.join(kind.file_name(n))).unwrap();
            assert!(back == raw_table(kind, n), "{}", kind.file_name(n));
        }
    }
}

#[test]
fn format_2_and_3_replace_each_other_and_leave_no_stale_file() {
    let dir = copy("awari-compress-v2v3-");
    let layers = 10..=11;
    let v2 = CompressOptions {
        layers: layers.clone(),
        ..compress_opts(true)
    };
    pack::compress_folder(&dir, &v2, &Quiet).unwrap();
    let v3 = CompressOptions {
        settings: models(false, 512),
        layers: layers.clone(),
        remove_raw: true,
    };
    // From format 2 copies (the raw tables are gone) to format 3.
    let r = pack::compress_folder(&dir, &v3, &Quiet).unwrap();
    assert_eq!(r.removed.len(), 6, "{:?}", r.removed);
    let mut files = zst_files(&dir);
    files.sort();
    assert_eq!(files, ["tables.10.zst", "tables.11.zst"]);
    // And back.
    pack::compress_folder(&dir, &v2, &Quiet).unwrap();
    let mut files = zst_files(&dir);
    files.sort();
    assert_eq!(files.len(), 6);
    assert!(files.iter().all(|f| !f.starts_with("tables")));
    let db = Database::open(&dir).unwrap();
    let raw_db = Database::open(raw_dir()).unwrap();
    for g in (0..layer_size(11)).step_by(101) {
        let p = unrank(11, g).unwrap();
        assert_eq!(db.envelope(&p).unwrap(), raw_db.envelope(&p).unwrap());
    }
}

#[test]
fn the_scores_only_form_is_what_an_engine_ships() {
    let dir = copy("awari-compress-scores-only-");
    let opts = CompressOptions {
        settings: models(true, 512),
        layers: 0..=48,
        remove_raw: true,
    };
    pack::compress_folder(&dir, &opts, &Quiet).unwrap();
    for n in 0..=MAX {
        assert!(dir.join(format!("scores.{n}.zst")).exists());
        assert!(!dir.join(format!("scores.{n}")).exists());
        // The envelope is left as it was.
        assert!(dir.join(format!("lower.{n}")).exists());
        assert!(dir.join(format!("upper.{n}")).exists());
    }
    // An engine ships the scores files alone: a folder of them, without
    // manifest, opens and probes.
    let ship = scratch("awari-compress-ship-");
    for n in 0..=MAX {
        let f = format!("scores.{n}.zst");
        std::fs::copy(dir.join(&f), ship.join(&f)).unwrap();
    }
    let db = Database::open(&ship).unwrap();
    let raw_db = Database::open(raw_dir()).unwrap();
    let mut rng = StdRng::seed_from_u64(7);
    for n in 0..=MAX {
        for _ in 0..200 {
            let p = unrank(n, rng.gen_range(0..layer_size(n))).unwrap();
            assert_eq!(db.score(&p).unwrap(), raw_db.score(&p).unwrap());
        }
    }
    let mut args = vec!["query", "--db", s(&ship), "--json"];
    args.extend(["1", "1", "1", "1", "1", "2", "2", "2", "3", "0", "0", "0"]);
    let a = ok(&args);
    assert!(a.contains("\"score\""), "{a}");
    let known = Path::new(env!("CARGO_MANIFEST_DIR")).join("data/known-good.csv");
    let out = ok(&[
        "verify",
        "--db",
        s(&ship),
        "--checksums",
        s(&known),
        "--layers",
        "0..=14",
        "--json",
    ]);
    let v: serde_json::Value = serde_json::from_str(out.trim()).unwrap();
    assert_eq!(v["ok"], true, "{out}");
}

#[test]
fn cli_format_flags() {
    let dir = copy("awari-compress-v3-cli-");
    let d = s(&dir);
    for (args, says) in [
        (vec!["--format", "3", "--level", "3"], "--level"),
        (
            vec!["--format", "3", "--dictionary", "64KiB"],
            "--dictionary",
        ),
        (vec!["--format", "2", "--scores-only"], "--scores-only"),
        (vec!["--block-size", "16385"], "--block-size"),
        (vec!["--format", "5"], "--format"),
    ] {
        let mut a = vec!["compress", "--db", d];
        a.extend(args.iter().copied());
        let out = awari(&a, None);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.contains(says), "{args:?}: {err}");
    }
    ok(&["compress", "--db", d, "--layers", "12..=12", "-q"]);
    assert!(dir.join("tables.12.zst").exists());
    ok(&[
        "compress",
        "--db",
        d,
        "--layers",
        "13..=13",
        "--scores-only",
        "-q",
    ]);
    assert!(dir.join("scores.13.zst").exists());
    ok(&[
        "compress", "--db", d, "--layers", "14..=14", "--level", "1", "-q",
    ]);
    assert!(dir.join("lower.14.zst").exists());
    ok(&["decompress", "--db", d, "--remove-compressed", "-q"]);
    assert!(zst_files(&dir).is_empty());
}
