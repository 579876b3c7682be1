//! Nothing in a folder is lost by following the tool's own hints: a
//! folder that lost its manifest is recovered under the rule set its
//! tables follow (or refused), a build never replaces tables the manifest
//! does not list, tables recover could not trust are kept aside, and a
//! folder at rest holds no lock file.

mod common;

use awari_egdb::build;
use awari_egdb::rules::OLYMPIAD;
use awari_egdb::solve::Silent;
use awari_egdb::store::Manifest;
use common::{awari_status, full_copy, ok, s, scratch, usage_error};
use std::fs;
use std::path::Path;

/// Every table file of a folder and its bytes.
fn tables(dir: &Path) -> Vec<(String, Vec<u8>)> {
    let mut v: Vec<(String, Vec<u8>)> = fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with("scores.") || n.starts_with("lower.") || n.starts_with("upper."))
        .map(|n| (n.clone(), fs::read(dir.join(&n)).unwrap()))
        .collect();
    v.sort();
    v
}

fn rule_set(dir: &Path) -> String {
    let m: serde_json::Value =
        serde_json::from_str(&fs::read_to_string(dir.join("manifest.json")).unwrap()).unwrap();
    m["rule_set"].as_str().unwrap().to_string()
}

/// The path of the issue: an olympiad folder without its manifest, the
/// hint of `query`, `recover --checksums known`, then `build`.
#[test]
fn an_olympiad_folder_that_lost_its_manifest_stays_olympiad() {
    let dir = scratch("awari-safety-olympiad-");
    let mut opts = common::options(&dir, 10, true);
    opts.rules = OLYMPIAD;
    build::build(&opts, &Silent).unwrap();
    let before = tables(&dir);
    fs::remove_file(dir.join("manifest.json")).unwrap();
    let mut q = vec!["query", "--db", s(&dir)];
    q.extend(["1", "0", "0", "0", "0", "0", "0", "0", "0", "0", "0", "1"]);
    let hint = usage_error(&q);
    assert!(hint.contains("awari recover"), "{hint}");
    let out = ok(&["recover", "--db", s(&dir), "--checksums", "known"]);
    assert!(
        out.contains("for the olympiad rules with 11 layer(s) (0..=10)"),
        "{out}"
    );
    assert_eq!(rule_set(&dir), "olympiad");
    // The builder goes on in the folder's rule set; one of awari is
    // refused; nothing that was there changed.
    let line = usage_error(&[
        "build",
        "--rules",
        "awari",
        "--max-seeds",
        "12",
        "--db",
        s(&dir),
    ]);
    assert!(line.contains("olympiad"), "{line}");
    ok(&["build", "--max-seeds", "11", "--db", s(&dir), "-q"]);
    assert_eq!(rule_set(&dir), "olympiad");
    fs::remove_file(dir.join("scores.11")).unwrap();
    fs::remove_file(dir.join("lower.11")).unwrap();
    fs::remove_file(dir.join("upper.11")).unwrap();
    assert_eq!(tables(&dir), before);

    // Given only the awari list, the layers that differ are kept aside,
    // not lost, and the awari build that follows writes beside them.
    fs::remove_file(dir.join("manifest.json")).unwrap();
    let (out, err) = awari_status(
        &[
            "recover",
            "--db",
            s(&dir),
            "--checksums",
            common::KNOWN_GOOD,
        ],
        1,
    );
    assert!(out.contains("scores.3.untrusted"), "{out}");
    assert!(err.contains("NAME.untrusted"), "{err}");
    let aside = fs::read(dir.join("scores.10.untrusted")).unwrap();
    let olympiad_10 = &before.iter().find(|t| t.0 == "scores.10").unwrap().1;
    assert_eq!(&aside, olympiad_10);
}

/// Tables of small layers are alike under several rule sets: recovering
/// them without a rule set is refused, naming the candidates.
#[test]
fn tables_that_fit_several_rule_sets_are_refused_without_rules() {
    let dir = scratch("awari-safety-tie-");
    build::build(&common::options(&dir, 1, true), &Silent).unwrap();
    fs::remove_file(dir.join("manifest.json")).unwrap();
    let line = usage_error(&["recover", "--db", s(&dir), "--checksums", "known"]);
    assert!(
        line.contains("awari, abapa") && line.contains("--rules"),
        "{line}"
    );
    assert!(!dir.join("manifest.json").exists());
    ok(&["recover", "--db", s(&dir), "--rules", "awari"]);
    assert!(rule_set(&dir).starts_with("awari"), "{}", rule_set(&dir));
}

/// A build does not replace tables its manifest does not list, unless the
/// lock says a build of this folder stopped in the middle of that layer.
#[test]
fn a_build_never_replaces_unlisted_tables() {
    let dir = full_copy("awari-safety-unlisted-");
    let mut m = Manifest::load(&dir).unwrap().unwrap();
    m.remove(12);
    m.store(&dir).unwrap();
    fs::write(dir.join("scores.12"), vec![0u8; 2]).unwrap();
    let before = tables(&dir);
    let line = usage_error(&["build", "--max-seeds", "12", "--db", s(&dir)]);
    assert!(
        line.contains("scores.12") && line.contains("does not list"),
        "{line}"
    );
    assert_eq!(tables(&dir), before);
    // A build killed in layer 12 left this record: its own tables.
    fs::write(dir.join("build.lock"), "building layer 12").unwrap();
    ok(&["build", "--max-seeds", "12", "--db", s(&dir), "-q"]);
    ok(&["verify", "--db", s(&dir), "--checksums", "known"]);
}

/// A folder at rest holds no `build.lock`: not after a build, a compress,
/// a decompress or a recover.
#[test]
fn no_lock_file_stays_behind() {
    let dir = scratch("awari-safety-lock-");
    ok(&["build", "--max-seeds", "8", "--db", s(&dir), "-q"]);
    assert!(!dir.join("build.lock").exists());
    ok(&["compress", "--db", s(&dir), "--remove-raw", "-q"]);
    assert!(!dir.join("build.lock").exists());
    ok(&["decompress", "--db", s(&dir), "-q"]);
    assert!(!dir.join("build.lock").exists());
    fs::remove_file(dir.join("manifest.json")).unwrap();
    ok(&["recover", "--db", s(&dir)]);
    assert!(!dir.join("build.lock").exists());
}
