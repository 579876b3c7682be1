//! The oracle suite: layers 0..=16 built once from scratch in a fresh folder,
//! every table compared with the published known-good checksums
//! (`data/known-good.csv`), then `awari check` on all of them, every VU fact
//! they reach, and `awari verify` against oracle folders made from our own
//! tables, with planted disagreements.

use crate::common::{awari, s, scratch, text, KNOWN_GOOD};
use awari_egdb::build;
use awari_egdb::format::Checksum;
use awari_egdb::solve::Silent;
use awari_egdb::store::Manifest;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::Output;
use std::sync::OnceLock;
use std::time::Instant;

/// Highest layer of the suite's database.
const MAX: u32 = 16;

/// Layers 0..=16 with the envelope, built from scratch by this binary into a
/// new temporary folder (never resumed, so no table of an older build is
/// tested), removed when the test binary exits.
fn db() -> &'static Path {
    static DB: OnceLock<PathBuf> = OnceLock::new();
    DB.get_or_init(|| {
        let dir = scratch("awari-xt-oracle-").join("db");
        let t0 = Instant::now();
        let opts = crate::common::options(&dir, MAX, true);
        let r = build::build(&opts, &Silent).expect("build 0..=16");
        assert!(r.reused.is_empty(), "a fresh folder reuses nothing");
        assert_eq!(r.built, build::layers_up_to(MAX));
        eprintln!(
            "oracle suite: layers 0..={MAX} built from scratch in {:.1?}",
            t0.elapsed()
        );
        dir
    })
}

#[test]
fn every_table_built_from_scratch_equals_the_known_good_checksums() {
    let known = awari_egdb::verify::read_known_good(Path::new(KNOWN_GOOD))
        .unwrap()
        .tables;
    // The list covers three tables of every layer 0..=34, and the distance
    // of 0..=28 (which this folder, built without it, does not hold).
    assert_eq!(known.len(), 3 * 35 + 29);
    // Compared here independently of the verifier: our own read of each file.
    for k in known
        .iter()
        .filter(|k| k.layer <= MAX && k.kind != awari_egdb::format::Kind::Distance)
    {
        let bytes = table(db(), &k.kind.file_name(k.layer));
        assert_eq!(bytes.len() as u64, k.bytes, "{:?}", k);
        assert_eq!(
            xxhash_rust::xxh3::xxh3_64(&bytes),
            k.xxh3.0,
            "{} of layer {}",
            k.kind.stem(),
            k.layer
        );
    }
    // And by the command a user runs.
    let o = awari(
        &["verify", "--db", s(db()), "--checksums", KNOWN_GOOD],
        None,
    );
    assert!(o.status.success(), "{}{}", out(&o), err(&o));
    let text = out(&o);
    let last = known.iter().map(|k| k.layer).max().unwrap();
    assert!(
        text.contains(&format!(
            "all {} table(s) equal the known-good checksums ({} layer(s) not built, skipped)",
            3 * (MAX + 1),
            last - MAX
        )),
        "{text}"
    );
    assert!(
        text.contains(&format!("layers 17..={last} not built")),
        "{text}"
    );
    assert_eq!(text.matches("not built in").count(), 1, "one line: {text}");
}

/// A copy of the suite's folder (files only) in a new temporary folder.
fn db_copy() -> PathBuf {
    let dir = scratch("awari-xt-oracle-copy-");
    for e in fs::read_dir(db()).unwrap() {
        let e = e.unwrap();
        if e.file_type().unwrap().is_file() && e.file_name() != "build.lock" {
            fs::copy(e.path(), dir.join(e.file_name())).unwrap();
        }
    }
    dir
}

#[test]
fn verify_checksums_finds_a_planted_byte_even_when_the_manifest_agrees_with_it() {
    let dir = db_copy();
    // One byte of lower.13 changed, and the manifest's checksum updated to
    // match: the folder is consistent with itself, so `check` passes on its
    // checksums; the known-good list is what finds the change.
    let mut t = table(&dir, "lower.13");
    t[777] = (t[777] as i8).wrapping_sub(1) as u8;
    fs::write(dir.join("lower.13"), &t).unwrap();
    let mut m = Manifest::load(&dir).unwrap().unwrap();
    let l = m.layers.iter_mut().find(|l| l.seeds == 13).unwrap();
    l.lower.as_mut().unwrap().xxh3 = Checksum::of(&t);
    m.store(&dir).unwrap();
    let o = awari(
        &["verify", "--db", s(&dir), "--checksums", KNOWN_GOOD],
        None,
    );
    assert_eq!(o.status.code(), Some(1), "{}{}", out(&o), err(&o));
    assert!(
        err(&o).contains("1 table(s) differ") && err(&o).contains("lower.13"),
        "{}",
        err(&o)
    );
    assert!(out(&o).contains("lower.13: differs"), "{}", out(&o));
    assert!(
        out(&o).contains("layer 12: scores, lower, upper equal"),
        "{}",
        out(&o)
    );
    // --layers restricts the comparison.
    let o = awari(
        &[
            "verify",
            "--db",
            s(&dir),
            "--checksums",
            KNOWN_GOOD,
            "--layers",
            "0..=12",
        ],
        None,
    );
    assert!(o.status.success(), "{}{}", out(&o), err(&o));
    // Kept only compressed, the table is read back from its blocks and
    // still found.
    let c = awari(
        &[
            "compress",
            "--db",
            s(&dir),
            "--layers",
            "13",
            "--remove-raw",
            "--quiet",
        ],
        None,
    );
    assert!(c.status.success(), "{}", err(&c));
    assert!(!dir.join("lower.13").exists());
    let o = awari(
        &[
            "verify",
            "--db",
            s(&dir),
            "--checksums",
            KNOWN_GOOD,
            "--json",
        ],
        None,
    );
    assert_eq!(o.status.code(), Some(1), "{}{}", out(&o), err(&o));
    let v: serde_json::Value = serde_json::from_str(&out(&o)).unwrap();
    assert_eq!(v["failed"], 1);
    assert_eq!(v["equal"], 3 * (MAX + 1) - 1);
    let bad: Vec<&serde_json::Value> = v["tables"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|t| t["result"] != "equal")
        .collect();
    assert_eq!(bad.len(), 1);
    assert_eq!(bad[0]["file"], "tables.13.zst");
    // A missing table the manifest lists is a failure too, not a skip.
    fs::remove_file(dir.join("tables.13.zst")).unwrap();
    let o = awari(
        &["verify", "--db", s(&dir), "--checksums", KNOWN_GOOD],
        None,
    );
    assert_eq!(o.status.code(), Some(1), "{}{}", out(&o), err(&o));
    assert!(out(&o).contains("upper.13: missing"), "{}", out(&o));
}

#[test]
fn verify_checksums_refuses_a_bad_list_with_status_2() {
    let dir = db_copy();
    let list = dir.join("list.csv");
    for (text, want) in [
        ("", "empty"),
        (
            "layer,table,bytes,xxh3\n5,scores,4368,zz\n",
            "16 hex digits",
        ),
        (
            "layer,table,bytes,xxh3\n5,scores,12,c44bdff4074eecdb\n",
            "4368 positions",
        ),
        (
            "layer,table,bytes,xxh3\n5,points,4368,c44bdff4074eecdb\n",
            "not a table",
        ),
        ("layer,kind\n", "header"),
    ] {
        fs::write(&list, text).unwrap();
        let o = awari(&["verify", "--db", s(&dir), "--checksums", s(&list)], None);
        assert_eq!(o.status.code(), Some(2), "{text:?}: {}", err(&o));
        assert!(err(&o).contains(want), "{text:?}: {}", err(&o));
        assert_eq!(err(&o).lines().count(), 1, "{}", err(&o));
    }
}

fn out(o: &Output) -> String {
    text(&o.stdout)
}

fn err(o: &Output) -> String {
    text(&o.stderr)
}

/// An oracle folder holding copies of our `scores.n` for `layers`.
/// `awari verify --db DB --oracle ORACLE --layers LAYERS EXTRA...`.
fn verify_oracle(oracle: &Path, layers: &str, extra: &[&str]) -> Output {
    let mut args = vec![
        "verify",
        "--db",
        s(db()),
        "--oracle",
        s(oracle),
        "--layers",
        layers,
    ];
    args.extend_from_slice(extra);
    awari(&args, None)
}

fn oracle_copy(name: &str, layers: impl Iterator<Item = u32>) -> PathBuf {
    let dir = scratch(&format!("awari-{name}-"));
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
    let o = awari(&["check", "--db", s(db())], None);
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
    let dir = db_copy();
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
        .xxh3 = Checksum::of(&t);
    m.store(&dir).unwrap();
    let o = awari(&["check", "--db", s(&dir), "--layers", "9..=10"], None);
    assert_eq!(o.status.code(), Some(1), "{}{}", out(&o), err(&o));
    assert!(out(&o).contains(&format!("index {g} ")), "{}", out(&o));

    // Now leave the checksum stale: the check must fail on it.
    t[g] = (t[g] as i8).wrapping_add(1) as u8;
    fs::write(dir.join("scores.9"), &t).unwrap();
    let o = awari(&["check", "--db", s(&dir), "--layers", "9"], None);
    assert_eq!(o.status.code(), Some(1), "{}{}", out(&o), err(&o));
    assert!(err(&o).contains("checksum"), "{}", err(&o));
    assert!(!err(&o).contains("panicked"));
}

#[test]
fn every_vu_fact_up_to_16_seeds_agrees() {
    let facts = concat!(
        concat!(env!("CARGO_MANIFEST_DIR"), "/.."),
        "/data/vu-move-facts.csv"
    );
    let o = awari(&["verify", "--db", s(db()), "--facts", facts], None);
    assert!(o.status.success(), "{}{}", out(&o), err(&o));
    let text = out(&o);
    // 12 facts have at most 16 seeds (data/vu-move-facts.csv); the rest
    // need layers that are not built.
    assert!(
        text.contains("12 fact(s) agree, 0 disagree, 83 skipped"),
        "{text}"
    );
}

#[test]
fn verify_against_our_own_tables_agrees_everywhere() {
    let oracle = oracle_copy("xt-oracle-same", 0..=MAX);
    let o = awari(
        &["verify", "--db", s(db()), "--oracle", s(&oracle), "--json"],
        None,
    );
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
    let o = verify_oracle(&oracle, "12..=14", &[]);
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
    let o = verify_oracle(&oracle, "13", &["--json"]);
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
    let o = verify_oracle(&oracle, "10..=12", &[]);
    assert!(o.status.success(), "{}{}", out(&o), err(&o));
    let text = out(&o);
    assert!(text.contains("11  skipped"), "{text}");
    assert!(
        text.contains("12  skipped") && text.contains("bytes"),
        "{text}"
    );
    assert!(text.contains("1 layer(s) compared, 2 skipped"), "{text}");
    // Nothing to compare at all is an error, not a pass.
    let o = verify_oracle(&oracle, "11", &[]);
    assert_eq!(o.status.code(), Some(2), "{}", out(&o));
    assert!(!err(&o).contains("panicked"));
}

#[test]
fn verify_prints_counts_one_line_for_unbuilt_layers_and_refuses_vague_input() {
    let n = 13;
    let oracle = oracle_copy("xt-oracle-text", 12..=n);
    let idx = pinned_indices(n, false);
    let mut t = table(&oracle, &format!("scores.{n}"));
    for &g in idx.iter().take(4) {
        t[g as usize] = (t[g as usize] as i8).wrapping_sub(1) as u8;
    }
    fs::write(oracle.join(format!("scores.{n}")), &t).unwrap();
    let o = verify_oracle(&oracle, "12..=40", &[]);
    assert!(o.status.success(), "{}{}", out(&o), err(&o));
    let text = out(&o);
    // Counts, not a rounded percentage: 4 unpinned positions disagree.
    assert!(
        text.contains(&format!("{} of {}", idx.len() - 4, idx.len())),
        "{text}"
    );
    assert!(!text.contains('%'), "{text}");
    // Layers 17..=40 (but 47) are not built: one line.
    assert!(text.contains("layers 17..=40 not built in"), "{text}");
    assert_eq!(text.matches("not built").count(), 1, "{text}");
    // 14..=16 are built but the oracle lacks them: a line each.
    assert!(text.contains("14  skipped"), "{text}");

    // A range must say whether it includes its end.
    for vague in ["3..5", "3-5"] {
        let o = verify_oracle(&oracle, vague, &[]);
        assert_eq!(o.status.code(), Some(2));
        assert!(err(&o).contains("A..=B"), "{}", err(&o));
    }
    // Without something to verify against, all three choices are named.
    let o = awari(&["verify", "--db", s(db())], None);
    assert_eq!(o.status.code(), Some(2));
    let e = err(&o);
    assert!(
        e.contains("--oracle") && e.contains("--facts") && e.contains("--checksums"),
        "{e}"
    );
    assert!(!e.contains("required"), "{e}");
    // Two of them at once are refused.
    let o = awari(
        &[
            "verify",
            "--db",
            s(db()),
            "--facts",
            "x",
            "--checksums",
            "y",
        ],
        None,
    );
    assert_eq!(o.status.code(), Some(2));
}
