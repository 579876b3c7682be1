//! A folder of scores only: the `scores.n.zst` files `awari compress
//! --scores-only --remove-raw` makes (the form an engine ships), with or
//! without the manifest, and a VU-style folder of `scores.n` files. Each
//! lists its layers and answers every command that needs only scores; a
//! command that needs the envelope says so in one line.

mod common;

use awari_egdb::probe::Database;
use common::{awari, db_dir, full_copy, ok, s, scratch, text, usage_error, vu_copy, MAX};
use std::path::{Path, PathBuf};
use std::sync::Mutex;

/// Our folder compressed with `args` (a scores-only form), raw scores
/// removed, once per set of arguments.
fn compressed(args: &'static [&'static str]) -> PathBuf {
    static DIRS: Mutex<Vec<(&'static [&'static str], PathBuf)>> = Mutex::new(Vec::new());
    let mut dirs = DIRS.lock().unwrap_or_else(|e| e.into_inner());
    if let Some((_, d)) = dirs.iter().find(|(a, _)| *a == args) {
        return d.clone();
    }
    let dir = full_copy("awari-scores-only-src-");
    let mut a = vec!["compress", "--db", s(&dir), "--remove-raw", "--quiet"];
    a.extend(args);
    ok(&a);
    dirs.push((args, dir.clone()));
    dir
}

/// The shipped form: the `scores.n.zst` files alone.
fn shipped(args: &'static [&'static str]) -> PathBuf {
    let src = compressed(args);
    let dst = scratch("awari-scores-only-");
    for n in 0..=MAX {
        let f = format!("scores.{n}.zst");
        std::fs::copy(src.join(&f), dst.join(&f)).expect("copy");
    }
    dst
}

/// Every form of a folder of scores only: the `scores.n.zst` files alone
/// (the default blocks, and small ones of at most 256 entries), and a
/// VU-style folder of `scores.n`.
fn forms() -> Vec<(&'static str, PathBuf)> {
    vec![
        ("scores alone", shipped(&["--scores-only"])),
        (
            "small blocks",
            shipped(&[
                "--scores-only",
                "--block-bytes",
                "32",
                "--block-size",
                "256",
            ]),
        ),
        ("vu", vu_copy("awari-scores-only-vu-")),
    ]
}

#[test]
fn every_form_lists_its_layers() {
    for (form, dir) in forms() {
        let db = Database::open(&dir).unwrap();
        assert_eq!(db.layers(), (0..=MAX).collect::<Vec<_>>(), "{form}");
        assert!(!db.has_envelope(MAX).unwrap(), "{form}");
    }
}

#[test]
fn match_and_play_use_the_tables() {
    let full = db_dir();
    for (form, dir) in forms() {
        let out = ok(&[
            "match",
            "--db",
            s(&dir),
            "--a",
            "depth=2,clock=none",
            "--b",
            "depth=1,clock=none",
            "--games",
            "1",
        ]);
        assert!(
            out.contains(&format!("tables: layers 0..={MAX}")),
            "{form}: {out}"
        );
        // From a position the tables hold, the search plays what it plays
        // on the full folder.
        let game = |d: &Path| {
            let out = awari(
                &[
                    "play",
                    "--db",
                    s(d),
                    "--from",
                    "1",
                    "1",
                    "1",
                    "1",
                    "1",
                    "2",
                    "0",
                    "2",
                    "1",
                    "0",
                    "0",
                    "0",
                    "--computer",
                    "both",
                    "--depth",
                    "4",
                ],
                Some(""),
            );
            assert!(out.status.success(), "{form}: {}", text(&out.stderr));
            text(&out.stdout)
        };
        // The same game; the first line names the rule set (and, for the
        // raw VU form, says it was assumed).
        let (got, want) = (game(&dir), game(full));
        let rest = |t: &str| t.lines().skip(1).collect::<Vec<_>>().join("\n");
        assert_eq!(rest(&got), rest(&want), "{form}");
        assert!(got.starts_with("rules: awari ("), "{form}: {got}");
        assert_eq!(got.contains("(assumed:"), form == "vu", "{form}: {got}");
    }
}

#[test]
fn query_and_verify_checksums_answer() {
    let known = concat!(
        concat!(env!("CARGO_MANIFEST_DIR"), "/.."),
        "/data/known-good.csv"
    );
    let pits = ["1", "1", "1", "1", "1", "2", "2", "2", "1", "0", "0", "0"];
    let query = |d: &Path| -> serde_json::Value {
        let mut a = vec!["query", "--db", s(d), "--json"];
        a.extend(pits);
        serde_json::from_str(ok(&a).trim()).unwrap()
    };
    let want = query(db_dir());
    for (form, dir) in forms() {
        assert_eq!(query(&dir)["score"], want["score"], "{form}");
        let out = ok(&["verify", "--db", s(&dir), "--checksums", known, "--json"]);
        let v: serde_json::Value = serde_json::from_str(out.trim()).unwrap();
        assert_eq!(v["ok"], true, "{form}: {out}");
    }
}

#[test]
fn stats_counts_the_scores_and_says_the_envelope_figures_are_absent() {
    let full = ok(&["stats", "--db", s(db_dir()), "--json"]);
    let full: serde_json::Value = serde_json::from_str(full.trim()).unwrap();
    for (form, dir) in forms() {
        let out = ok(&["stats", "--db", s(&dir), "--json"]);
        let v: serde_json::Value = serde_json::from_str(out.trim()).unwrap();
        let layers = v["layers"].as_array().unwrap();
        assert_eq!(layers.len() as u32, MAX + 1, "{form}");
        for (l, f) in layers.iter().zip(full["layers"].as_array().unwrap()) {
            assert_eq!(l["histogram"], f["histogram"], "{form}");
            assert!(l["pinned"].is_null(), "{form}: {l}");
        }
        let out = ok(&["stats", "--db", s(&dir)]);
        assert!(out.contains("no envelope"), "{form}: {out}");
    }
}

#[test]
fn check_checks_the_scores() {
    for (form, dir) in forms() {
        let out = ok(&["check", "--db", s(&dir), "--layers", "0..=10"]);
        assert!(out.contains("Bellman check passes"), "{form}: {out}");
        assert!(out.contains("score checked"), "{form}: {out}");
        assert!(!out.contains("score and envelope"), "{form}: {out}");
    }
    // A damaged score is found.
    let dir = vu_copy("awari-scores-only-bad-");
    let p = dir.join("scores.9");
    let mut b = std::fs::read(&p).unwrap();
    b[100] = (b[100] as i8).wrapping_add(2) as u8;
    std::fs::write(&p, b).unwrap();
    let out = awari(&["check", "--db", s(&dir), "--layers", "9..=9"], None);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stdout));
    // Damage in a lower layer is found by the layer above, whose captures
    // read it (in runs, in index order): layer 11 captures 2 into layer 9.
    let dir = vu_copy("awari-scores-only-bad-lower-");
    let p = dir.join("scores.9");
    let b: Vec<u8> = std::fs::read(&p)
        .unwrap()
        .iter()
        .map(|&v| (v as i8).wrapping_add(1) as u8)
        .collect();
    std::fs::write(&p, b).unwrap();
    let out = awari(&["check", "--db", s(&dir), "--layers", "11..=11"], None);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stdout));
    let out = ok(&["check", "--db", s(&dir), "--layers", "10..=10"]);
    assert!(out.contains("0 mismatch"), "{out}");
}

#[test]
fn decompress_writes_back_the_scores() {
    for (form, dir) in forms().into_iter().filter(|(f, _)| *f != "vu") {
        ok(&["decompress", "--db", s(&dir), "--quiet"]);
        for n in 0..=MAX {
            let f = format!("scores.{n}");
            assert_eq!(
                std::fs::read(dir.join(&f)).unwrap(),
                std::fs::read(db_dir().join(&f)).unwrap(),
                "{form}: {f}"
            );
        }
    }
}

#[test]
fn what_needs_the_envelope_says_so_in_one_line() {
    for (form, dir) in forms() {
        let line = usage_error(&[
            "build",
            "--db",
            s(&dir),
            "--max-seeds",
            &(MAX + 1).to_string(),
        ]);
        assert!(!line.is_empty(), "{form}");
        let line = usage_error(&["recover", "--db", s(&dir)]);
        assert!(line.contains("scores."), "{form}: {line}");
        if form != "vu" {
            let line = usage_error(&["compress", "--db", s(&dir), "--quiet"]);
            assert!(
                line.contains("envelope") && line.contains("manifest"),
                "{form}: {line}"
            );
        }
    }
}

#[test]
fn a_check_that_does_not_fit_is_refused_naming_its_need() {
    let line = usage_error(&[
        "check",
        "--db",
        s(db_dir()),
        "--layers",
        "12..=12",
        "--memory-limit",
        "1MiB",
    ]);
    assert!(
        line.contains("layer 12") && line.contains("--memory-limit"),
        "{line}"
    );
    let line = usage_error(&["stats", "--db", s(db_dir()), "--memory-limit", "1KiB"]);
    assert!(line.contains("--memory-limit"), "{line}");
    let dir = full_copy("awari-scores-only-recover-");
    std::fs::remove_file(dir.join("manifest.json")).unwrap();
    let line = usage_error(&["recover", "--db", s(&dir), "--memory-limit", "1MiB"]);
    assert!(line.contains("--memory-limit"), "{line}");
}

#[test]
fn with_its_manifest_the_folder_answers_and_a_missing_envelope_is_damage() {
    // Straight from `compress --scores-only --remove-raw`: the manifest,
    // the envelope's raw tables and scores.n.zst.
    let src = compressed(&["--scores-only"]);
    assert!(!src.join("scores.5").exists());
    let db = Database::open(&src).unwrap();
    assert_eq!(db.layers(), (0..=MAX).collect::<Vec<_>>());
    let out = ok(&["check", "--db", s(&src), "--layers", "0..=9"]);
    assert!(out.contains("score and envelope checked"), "{out}");
    // The manifest alone with the scores: it lists tables that are gone.
    let dir = shipped(&["--scores-only"]);
    std::fs::copy(src.join("manifest.json"), dir.join("manifest.json")).unwrap();
    let mut a = vec!["query", "--db", s(&dir)];
    a.extend(["1", "1", "1", "1", "1", "2", "2", "2", "1", "0", "0", "0"]);
    let out = awari(&a, None);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    assert!(
        text(&out.stderr).contains("lower."),
        "{}",
        text(&out.stderr)
    );
}
