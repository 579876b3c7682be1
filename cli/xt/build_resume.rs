//! Resuming a build: every verified layer reused, and only what was
//! damaged, truncated, removed or dropped from the manifest rebuilt; stray
//! temporary files tolerated; the command line's reports.

use crate::builder::*;
use crate::common::{awari, s, text};

use awari_egdb::solve::Silent;

use std::collections::BTreeSet;
use std::fs;
use std::path::Path;

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

/// A layer whose tables the folder holds but its manifest does not list
/// is not built over (the build did not write them): refused, nothing
/// changed; moved out of the folder, it is built again, same bytes.
#[test]
fn a_layer_missing_from_the_manifest_is_not_built_over() {
    let (tmp, t, m) = built_folder(10);
    let dir = tmp.path();
    let aside = tempfile::tempdir().unwrap();
    for n in [10, 4] {
        drop_manifest_entry(dir, n);
        match awari_egdb::build::build(&opts(dir, 10, true), &Silent) {
            Err(e)
                if matches!(
                    e.cause(),
                    Some(awari_egdb::store::StoreError::Unlisted { .. })
                ) =>
            {
                assert!(e.to_string().contains(&format!("scores.{n}")), "{e}");
            }
            other => panic!("layer {n}: want Unlisted, got {other:?}"),
        }
        for k in ["scores", "lower", "upper"] {
            let name = format!("{k}.{n}");
            assert!(fs::read(dir.join(&name)).unwrap() == t[&name], "{name}");
            fs::rename(dir.join(&name), aside.path().join(&name)).unwrap();
        }
        let rec = Recorder::default();
        let r = build_ok(&opts(dir, 10, true), &rec);
        assert_eq!(r.built, vec![n], "the unlisted layer is built again");
        assert_unchanged(dir, &t, &m, &format!("after rebuilding layer {n}"));
        assert!(rec.warnings().is_empty(), "{:#?}", rec.warnings());
    }
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

#[test]
fn cli_build_reports_and_resumes() {
    let tmp = tempdir();
    let dir = tmp.path().join("db");
    let out = awari(&["build", "--max-seeds", "6", "--out", s(&dir)], None);
    let (stdout, stderr) = (text(&out.stdout), text(&out.stderr));
    assert!(out.status.success(), "{stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");
    assert!(stderr.contains("built 7 layer(s), reused 0"), "{stderr}");
    assert!(stdout.lines().count() >= 8, "summary table: {stdout}");
    let out = awari(&["build", "--max-seeds", "6", "--out", s(&dir)], None);
    let stderr = text(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(stderr.contains("built 0 layer(s), reused 7"), "{stderr}");
    check_manifest(&dir, &manifest(&dir), 6, true);
    // Quiet and nothing to do: silent.
    let out = awari(&["build", "--max-seeds", "6", "--out", s(&dir), "-q"], None);
    assert!(out.status.success());
    assert!(out.stdout.is_empty() && out.stderr.is_empty());
    // A damaged table is reported on stderr even with --quiet.
    let p = dir.join("lower.5");
    let mut b = fs::read(&p).unwrap();
    b[0] ^= 0x40;
    fs::write(&p, &b).unwrap();
    let out = awari(&["build", "--max-seeds", "6", "--out", s(&dir), "-q"], None);
    let stderr = text(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(
        stderr.starts_with("awari: warning: layer 5") && stderr.contains("lower.5"),
        "{stderr}"
    );
    listed_files_verify(&dir);
}
