//! Builds refused, with one clear line and nothing changed: foreign
//! manifests, VU-like folders, manifests of other rules, memory limits,
//! unwritable outputs, bad arguments and locked folders.

use crate::builder::*;
use crate::common::{awari, ok, s, text, usage_error};
use awari_egdb::index::IndexError;
use awari_egdb::plan::PlanError;
use awari_egdb::solve::SolveError;
use awari_egdb::store::StoreError;

use awari_egdb::build;
use awari_egdb::error::human;
use awari_egdb::index::layer_size;
use awari_egdb::solve::Silent;
use awari_egdb::{Error, ErrorKind};

use std::fs;

#[test]
fn foreign_manifest_is_refused() {
    for content in [&b"{\"hello\":1}"[..], b"not json at all\n", b"[1, 2, 3]"] {
        let tmp = tempdir();
        let dir = tmp.path();
        fs::write(dir.join("manifest.json"), content).unwrap();
        match build::build(&opts(dir, 3, true), &Silent).map_err(|e| e.downcast::<StoreError>()) {
            Err(Ok(StoreError::ForeignManifest { .. })) => {}
            other => panic!("manifest {:?}: {other:?}", text(content)),
        }
        let line = usage_error(&["build", "--max-seeds", "3", "--out", s(dir)]);
        assert!(line.contains("manifest.json"), "{line}");
        assert!(line.contains("not an awari-egdb manifest"), "{line}");
        assert_eq!(fs::read(dir.join("manifest.json")).unwrap(), content);
        assert!(
            table_files(dir).is_empty() && tmp_files(dir).is_empty(),
            "tables written next to a foreign manifest: {:?}",
            files(dir).keys().collect::<Vec<_>>()
        );
    }
}

#[test]
fn vu_like_folder_is_refused() {
    let tmp = tempdir();
    let dir = tmp.path();
    let content: Vec<u8> = (0..364u32).map(|i| (i % 7) as u8).collect();
    fs::write(dir.join("scores.3"), &content).unwrap();
    let mtime = fs::metadata(dir.join("scores.3"))
        .unwrap()
        .modified()
        .unwrap();
    match build::build(&opts(dir, 5, true), &Silent).map_err(|e| e.downcast::<StoreError>()) {
        Err(Ok(StoreError::ForeignFolder { file, .. })) => assert_eq!(file, "scores.3"),
        other => panic!("{other:?}"),
    }
    let line = usage_error(&["build", "--max-seeds", "5", "--out", s(dir)]);
    assert!(line.contains("scores.3"), "{line}");
    assert!(line.contains("no manifest.json"), "{line}");
    assert_eq!(fs::read(dir.join("scores.3")).unwrap(), content);
    assert_eq!(
        fs::metadata(dir.join("scores.3"))
            .unwrap()
            .modified()
            .unwrap(),
        mtime
    );
    // Nothing else written but (at most) the lock file.
    let names: Vec<String> = fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n != "build.lock")
        .collect();
    assert_eq!(names, vec!["scores.3".to_string()]);
}

#[test]
fn manifest_for_other_rules_is_refused() {
    let (tmp, t, m) = built_folder(4);
    let dir = tmp.path();
    let path = dir.join("manifest.json");
    let original = fs::read(&path).unwrap();
    for (field, value) in [
        ("rule_set", serde_json::json!("awari-abapa")),
        ("version", serde_json::json!(2)),
        ("checksum", serde_json::json!("md5")),
    ] {
        let mut v: serde_json::Value = serde_json::from_slice(&original).unwrap();
        v[field] = value;
        let edited = serde_json::to_vec_pretty(&v).unwrap();
        fs::write(&path, &edited).unwrap();
        match build::build(&opts(dir, 6, true), &Silent).map_err(|e| e.downcast::<StoreError>()) {
            Err(Ok(StoreError::OtherRules { .. })) => {}
            other => panic!("{field} changed: {other:?}"),
        }
        let line = usage_error(&["build", "--max-seeds", "6", "--out", s(dir)]);
        assert!(line.contains("built for"), "{field}: {line}");
        assert_eq!(
            fs::read(&path).unwrap(),
            edited,
            "{field}: manifest rewritten"
        );
        assert_eq!(
            table_files(dir).keys().collect::<Vec<_>>(),
            t.keys().collect::<Vec<_>>(),
            "{field}: tables added or removed"
        );
    }
    fs::write(&path, &original).unwrap();
    assert_unchanged(dir, &t, &m, "after the refused builds");
}

#[test]
fn memory_limit_refuses_layer_and_keeps_finished() {
    let tmp = tempdir();
    let dir = tmp.path();
    ok(&["build", "--max-seeds", "5", "--out", s(dir), "--quiet"]);
    let t = table_files(dir);
    let m = manifest(dir);

    // As the binary builds: with the distance.
    let mut o = opts(dir, 8, true);
    o.distance = true;
    o.memory_limit = Some(1024);
    let needed = match build::build(&o, &Silent) {
        Err(e) if matches!(e.cause(), Some(PlanError::Memory { .. })) => {
            assert_eq!(e.kind(), ErrorKind::Memory);
            match e.cause() {
                Some(&PlanError::Memory {
                    layer: 6,
                    needed,
                    available: 1024,
                    from_limit: true,
                    ..
                }) => needed,
                _ => panic!("{e:?}"),
            }
        }
        other => panic!("{other:?}"),
    };
    assert!(needed >= layer_size(6), "layer 6 needs {needed} bytes?");
    let line = usage_error(&[
        "build",
        "--max-seeds",
        "8",
        "--out",
        s(dir),
        "--memory-limit",
        "1KiB",
        "--quiet",
    ]);
    for part in ["layer 6", &human(needed), &human(1024), "--memory-limit"] {
        assert!(line.contains(part), "{part:?} missing from {line:?}");
    }
    // Without --quiet the progress lines come first; the error is the last
    // line and the only one starting with "awari:".
    let out = awari(
        &[
            "build",
            "--max-seeds",
            "8",
            "--out",
            s(dir),
            "--memory-limit",
            "1KiB",
        ],
        None,
    );
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");
    let errors: Vec<&str> = stderr.lines().filter(|l| l.starts_with("awari:")).collect();
    assert_eq!(errors, vec![line.as_str()], "{stderr}");
    assert_eq!(stderr.lines().last(), Some(line.as_str()), "{stderr}");
    // Layers 0..=5 are untouched and still verify.
    assert_unchanged(dir, &t, &m, "after the refusal");
    assert_eq!(listed_files_verify(dir), layers(5));
    assert!(!dir.join("scores.6").exists());
    // Without the limit they are reused.
    let r = build_ok(&opts(dir, 8, true), &Silent);
    assert_eq!(r.reused, layers(5));
    assert_eq!(r.built, vec![6, 7, 8]);
    check_manifest(dir, &manifest(dir), 8, true);
}

#[test]
fn unwritable_output_is_reported() {
    let tmp = tempdir();
    let file = tmp.path().join("plain-file");
    fs::write(&file, b"x").unwrap();
    let out = file.join("db");
    match build::build(&opts(&out, 3, true), &Silent) {
        Err(e) if e.cause::<awari_egdb::error::IoError>().is_some() => {
            assert!(e.path().unwrap().starts_with(&file), "{e}")
        }
        other => panic!("{other:?}"),
    }
    let line = usage_error(&["build", "--max-seeds", "3", "--out", s(&out)]);
    assert!(line.contains("plain-file"), "{line}");
    assert_eq!(fs::read(&file).unwrap(), b"x");
}

#[test]
fn bad_arguments_are_refused() {
    let tmp = tempdir();
    let dir = tmp.path().join("db");
    let d = s(&dir);
    match build::build(&opts(&dir, 49, true), &Silent).map_err(|e| e.downcast::<IndexError>()) {
        Err(Ok(IndexError::NoSuchLayer(49))) => {}
        other => panic!("{other:?}"),
    }
    let line = usage_error(&["build", "--max-seeds", "49", "--out", d]);
    assert!(line.contains("49"), "{line}");
    let line = usage_error(&["build", "--threads", "0", "--out", d]);
    assert!(line.contains("--threads"), "{line}");
    let line = usage_error(&["build", "--memory-limit", "lots", "--out", d]);
    assert!(line.contains("--memory-limit"), "{line}");
    assert!(!dir.exists(), "a refused build created {d}");
}

#[test]
fn locked_folder_is_refused() {
    use std::os::unix::io::AsRawFd;
    let tmp = tempdir();
    let dir = tmp.path();
    let lock = fs::File::create(dir.join("build.lock")).unwrap();
    // SAFETY: flock on a descriptor we own.
    let r = unsafe { libc::flock(lock.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) };
    assert_eq!(r, 0, "take the lock");
    match build::build(&opts(dir, 3, true), &Silent) {
        Err(e) if matches!(e.cause(), Some(StoreError::Locked(_))) => {
            assert_eq!(e.kind(), ErrorKind::Busy)
        }
        other => panic!("{other:?}"),
    }
    let line = usage_error(&["build", "--max-seeds", "3", "--out", s(dir)]);
    assert!(line.contains("another build"), "{line}");
    assert!(table_files(dir).is_empty());
    drop(lock);
    build_ok(&opts(dir, 3, true), &Silent);
}

/// The score's exits wait in a scratch file during the envelope sweep: a
/// folder where it cannot be created is an error naming the folder, not a
/// panic or a wrong table.
#[test]
fn missing_scratch_folder_is_an_error() {
    use awari_egdb::solve::memory::{solve_all, solve_layer, Solved};
    use awari_egdb::solve::Below;
    let lower = solve_all(3, &awari_egdb::rules::AWARI, true).expect("layers 0..=3");
    let below: Vec<Below> = lower
        .iter()
        .map(|t| Below {
            score: &t[0],
            lower: Some(&t[1]),
            upper: Some(&t[2]),
        })
        .collect();
    let dir = std::env::temp_dir().join("awari-no-such-folder/for-scratch");
    let mut called = false;
    let r = solve_layer(
        4,
        &awari_egdb::rules::AWARI,
        &below,
        true,
        true,
        Some(&dir),
        &Silent,
        &mut |_: &Solved| {
            called = true;
            Ok::<(), Error>(())
        },
    );
    match r {
        Err(e) if matches!(e.cause(), Some(SolveError::Scratch { .. })) => {
            assert!(e.to_string().contains("for-scratch"), "{e}");
            assert_eq!(e.kind(), ErrorKind::Io);
        }
        other => panic!("expected a scratch error, got {:?}", other.map(|_| ())),
    }
    assert!(!called, "no table handed out");
    // Without the envelope no scratch file is needed.
    let r = solve_layer(
        4,
        &awari_egdb::rules::AWARI,
        &below,
        false,
        true,
        Some(&dir),
        &Silent,
        &mut |_: &Solved| Ok::<(), Error>(()),
    );
    assert!(r.is_ok());
}
