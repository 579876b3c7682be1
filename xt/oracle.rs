//! The oracle suite: layers 0..=16 built once, then `awari check` on all of
//! them, every VU fact they reach, and `awari verify` against oracle folders
//! made from our own tables, with planted disagreements.

use awari_egdb::build::{self, BuildOptions};
use awari_egdb::solve::Silent;
use awari_egdb::table::{checksum, Manifest};
use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::OnceLock;
use std::time::Instant;

/// Highest layer of the suite's database.
const MAX: u32 = 16;

/// Layers 0..=16 with the envelope, in the target's scratch folder (a rerun
/// resumes it after verifying checksums).
fn db() -> &'static Path {
    static DB: OnceLock<PathBuf> = OnceLock::new();
    DB.get_or_init(|| {
        let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("xt-oracle-db");
        let t0 = Instant::now();
        let opts = BuildOptions {
            max_seeds: MAX,
            out: dir.clone(),
            envelope: true,
            memory_limit: None,
        };
        let r = build::build(&opts, &Silent).expect("build 0..=16");
        eprintln!(
            "oracle suite: layers 0..={MAX} ({} built, {} reused) in {:.1?}",
            r.built.len(),
            r.reused.len(),
            t0.elapsed()
        );
        dir
    })
}

fn awari(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_awari"))
        .args(args)
        .output()
        .expect("run awari")
}

fn out(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn err(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

fn s(p: &Path) -> &str {
    p.to_str().expect("utf-8 path")
}

/// An oracle folder holding copies of our `scores.n` for `layers`.
fn oracle_copy(name: &str, layers: impl Iterator<Item = u32>) -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(name);
    let _ = fs::remove_dir_all(&dir);
    fs::create_dir_all(&dir).unwrap();
    for n in layers {
        let f = format!("scores.{n}");
        fs::copy(db().join(&f), dir.join(&f)).unwrap();
    }
    dir
}

fn table(dir: &Path, name: &str) -> Vec<u8> {
    fs::read(dir.join(name)).unwrap()
}

/// Indices of layer `n` where the envelope is closed (`pinned`) or open.
fn pinned_indices(n: u32, pinned: bool) -> Vec<u64> {
    let lo = table(db(), &format!("lower.{n}"));
    let hi = table(db(), &format!("upper.{n}"));
    (0..lo.len())
        .filter(|&i| (lo[i] == hi[i]) == pinned)
        .map(|i| i as u64)
        .collect()
}

#[test]
fn check_passes_on_every_layer() {
    let o = awari(&["check", "--db", s(db())]);
    assert!(o.status.success(), "{}{}", out(&o), err(&o));
    assert!(
        out(&o).contains(&format!("passes on {} layer(s)", MAX + 1)),
        "{}",
        out(&o)
    );
    for n in 0..=MAX {
        assert!(
            out(&o).contains(&format!("layer {n:>2}:")),
            "layer {n} not checked"
        );
    }
}

#[test]
fn check_finds_a_planted_error_and_a_checksum_failure() {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("xt-check-planted");
    let _ = fs::remove_dir_all(&dir);
    fs::create_dir_all(&dir).unwrap();
    for e in fs::read_dir(db()).unwrap() {
        let e = e.unwrap();
        if e.file_type().unwrap().is_file() && e.file_name() != "build.lock" {
            fs::copy(e.path(), dir.join(e.file_name())).unwrap();
        }
    }
    // Change one score of layer 9 and record the new checksum, so only the
    // Bellman check can notice.
    let g = 4321usize;
    let mut t = table(&dir, "scores.9");
    t[g] = (t[g] as i8).wrapping_add(2) as u8;
    fs::write(dir.join("scores.9"), &t).unwrap();
    let mut m = Manifest::load(&dir).unwrap().unwrap();
    m.layers
        .iter_mut()
        .find(|l| l.seeds == 9)
        .unwrap()
        .scores
        .xxh3 = checksum(&t);
    m.store(&dir).unwrap();
    let o = awari(&["check", "--db", s(&dir), "--layers", "9..=10"]);
    assert_eq!(o.status.code(), Some(1), "{}{}", out(&o), err(&o));
    assert!(out(&o).contains(&format!("index {g} ")), "{}", out(&o));

    // Now leave the checksum stale: the check must fail on it.
    t[g] = (t[g] as i8).wrapping_add(1) as u8;
    fs::write(dir.join("scores.9"), &t).unwrap();
    let o = awari(&["check", "--db", s(&dir), "--layers", "9"]);
    assert_eq!(o.status.code(), Some(1), "{}{}", out(&o), err(&o));
    assert!(err(&o).contains("checksum"), "{}", err(&o));
    assert!(!err(&o).contains("panicked"));
}

#[test]
fn every_vu_fact_up_to_16_seeds_agrees() {
    let facts = concat!(env!("CARGO_MANIFEST_DIR"), "/data/vu-move-facts.csv");
    let o = awari(&["verify", "--db", s(db()), "--facts", facts]);
    assert!(o.status.success(), "{}{}", out(&o), err(&o));
    let text = out(&o);
    // 12 facts have at most 16 seeds (shared/oracle/README.md); the rest
    // need layers that are not built.
    assert!(
        text.contains("12 fact(s) agree, 0 disagree, 83 skipped"),
        "{text}"
    );
}

#[test]
fn verify_against_our_own_tables_agrees_everywhere() {
    let oracle = oracle_copy("xt-oracle-same", 0..=MAX);
    let o = awari(&["verify", "--db", s(db()), "--oracle", s(&oracle), "--json"]);
    assert!(o.status.success(), "{}{}", out(&o), err(&o));
    let v: serde_json::Value = serde_json::from_str(&out(&o)).unwrap();
    let m = Manifest::load(db()).unwrap().unwrap();
    let pinned: u64 = m.layers.iter().map(|l| l.pinned.unwrap()).sum();
    assert_eq!(v["pinned"], pinned);
    assert_eq!(v["pinned_disagree"], 0);
    assert_eq!(v["compared_layers"], MAX + 1);
    assert_eq!(v["ok"], true);
    for l in v["layers"].as_array().unwrap() {
        assert_eq!(l["unpinned_agree"], l["unpinned"], "{l}");
        assert_eq!(l["checksums_ok"], true);
    }
}

#[test]
fn verify_names_a_planted_pinned_disagreement() {
    let n = 14;
    let oracle = oracle_copy("xt-oracle-pinned", 12..=n);
    let idx = pinned_indices(n, true);
    let g = idx[idx.len() / 2];
    let mut t = table(&oracle, &format!("scores.{n}"));
    let ours = t[g as usize] as i8;
    t[g as usize] = (ours + 1) as u8;
    fs::write(oracle.join(format!("scores.{n}")), &t).unwrap();
    let o = awari(&[
        "verify",
        "--db",
        s(db()),
        "--oracle",
        s(&oracle),
        "--layers",
        "12..=14",
    ]);
    assert_eq!(o.status.code(), Some(1), "{}{}", out(&o), err(&o));
    let board = awari_egdb::index::unrank(n, g).unwrap().to_string();
    let text = out(&o);
    assert!(
        text.contains(&format!(
            "layer {n} index {g} board {board} ours {ours:+} theirs {:+}",
            ours + 1
        )),
        "{text}"
    );
    assert!(err(&o).contains("1 of "), "{}", err(&o));
}

#[test]
fn verify_counts_a_planted_unpinned_disagreement_and_passes() {
    let n = 13;
    let oracle = oracle_copy("xt-oracle-unpinned", 13..=n);
    let idx = pinned_indices(n, false);
    let g = idx[idx.len() / 3] as usize;
    let mut t = table(&oracle, &format!("scores.{n}"));
    t[g] = (t[g] as i8).wrapping_sub(1) as u8;
    fs::write(oracle.join(format!("scores.{n}")), &t).unwrap();
    let o = awari(&[
        "verify",
        "--db",
        s(db()),
        "--oracle",
        s(&oracle),
        "--layers",
        "13",
        "--json",
    ]);
    assert!(o.status.success(), "{}{}", out(&o), err(&o));
    let v: serde_json::Value = serde_json::from_str(&out(&o)).unwrap();
    let l = &v["layers"][0];
    assert_eq!(l["pinned_disagree"], 0);
    assert_eq!(l["unpinned"], idx.len() as u64);
    assert_eq!(l["unpinned_agree"], idx.len() as u64 - 1);
}

#[test]
fn verify_reports_missing_and_wrong_size_oracle_layers() {
    let oracle = oracle_copy("xt-oracle-holes", 10..=12);
    fs::remove_file(oracle.join("scores.11")).unwrap();
    let t = table(&oracle, "scores.12");
    fs::write(oracle.join("scores.12"), &t[..t.len() - 7]).unwrap();
    let o = awari(&[
        "verify",
        "--db",
        s(db()),
        "--oracle",
        s(&oracle),
        "--layers",
        "10..=12",
    ]);
    assert!(o.status.success(), "{}{}", out(&o), err(&o));
    let text = out(&o);
    assert!(text.contains("11  skipped"), "{text}");
    assert!(
        text.contains("12  skipped") && text.contains("bytes"),
        "{text}"
    );
    assert!(text.contains("1 layer(s) compared, 2 skipped"), "{text}");
    // Nothing to compare at all is an error, not a pass.
    let o = awari(&[
        "verify",
        "--db",
        s(db()),
        "--oracle",
        s(&oracle),
        "--layers",
        "11",
    ]);
    assert_eq!(o.status.code(), Some(2), "{}", out(&o));
    assert!(!err(&o).contains("panicked"));
}
