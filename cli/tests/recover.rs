//! A folder of ours whose manifest was deleted or garbled: every command
//! says what kind of folder it is, and `awari recover` rebuilds the manifest
//! from the tables, trusting only tables that equal the known-good list or
//! pass the Bellman check, and each distance table the list vouches for.

mod common;

use awari_egdb::store::Manifest;
use common::{awari_status, full_copy, s, KNOWN_GOOD};
use std::fs;
use std::path::Path;

const P5: [&str; 12] = ["2", "0", "1", "0", "0", "0", "0", "0", "2", "0", "0", "0"];

fn query(dir: &Path, code: i32) -> (String, String) {
    let mut args = vec!["query", "--db", s(dir)];
    args.extend(P5);
    awari_status(&args, code)
}

#[test]
fn a_deleted_manifest_is_named_and_recovered_from_the_known_good_list() {
    let dir = full_copy("awari-recover-deleted-");
    let original = Manifest::load(&dir).unwrap().unwrap();
    fs::remove_file(dir.join("manifest.json")).unwrap();
    // Not taken for a VU folder: every command says what is wrong.
    let (_, err) = awari_status(&["check", "--db", s(&dir)], 2);
    assert!(
        err.contains("no manifest.json") && err.contains("awari recover"),
        "{err}"
    );
    let (_, err) = query(&dir, 2);
    assert!(err.contains("awari recover"), "{err}");
    let (_, err) = awari_status(&["build", "--max-seeds", "12", "--out", s(&dir)], 2);
    assert!(err.contains("no manifest.json"), "{err}");

    let (out, _) = awari_status(&["recover", "--db", s(&dir), "--checksums", KNOWN_GOOD], 0);
    assert!(
        out.contains("manifest.json written for the awari rules with 13 layer(s) (0..=12)"),
        "{out}"
    );
    assert_eq!(
        out.matches("recovered (known-good checksums)").count(),
        13,
        "{out}"
    );
    let m = Manifest::load(&dir).unwrap().unwrap();
    assert_eq!(m.layers.len(), original.layers.len());
    for (a, b) in m.layers.iter().zip(&original.layers) {
        assert_eq!(a.scores, b.scores);
        assert_eq!(a.lower, b.lower);
        assert_eq!(a.upper, b.upper);
        assert_eq!(a.pinned, b.pinned, "layer {}", a.seeds);
        assert_eq!(a.score_histogram, b.score_histogram, "layer {}", a.seeds);
        assert_eq!(a.recovered.as_deref(), Some("known-good checksums"));
    }
    // The folder works again, and the builder resumes it.
    query(&dir, 0);
    awari_status(
        &["build", "--max-seeds", "13", "--out", s(&dir), "--quiet"],
        0,
    );
    // A second recover has nothing to do.
    let (_, err) = awari_status(&["recover", "--db", s(&dir)], 2);
    assert!(err.contains("nothing to recover"), "{err}");
}

#[test]
fn a_garbled_manifest_gets_a_clear_message_and_is_kept_aside() {
    let dir = full_copy("awari-recover-garbled-");
    fs::write(dir.join("manifest.json"), [0xff, 0xfe, 0x00, 0x41, 0x80]).unwrap();
    for (args, code) in [
        (vec!["check", "--db", s(&dir)], 2),
        (vec!["verify", "--db", s(&dir), "--facts", KNOWN_GOOD], 2),
        (vec!["build", "--max-seeds", "3", "--out", s(&dir)], 2),
    ] {
        let (_, err) = awari_status(&args, code);
        assert!(
            err.contains("not an awari-egdb manifest"),
            "{args:?}: {err}"
        );
        assert!(!err.contains("stream did not contain"), "{err}");
        assert_eq!(err.lines().count(), 1, "{err}");
    }
    let (_, err) = awari_status(&["build", "--max-seeds", "3", "--out", s(&dir)], 2);
    assert!(err.contains("awari recover"), "{err}");
    // Without a list every layer must pass the Bellman check, from layer 0 up.
    let (out, _) = awari_status(&["recover", "--db", s(&dir)], 0);
    assert!(out.contains("kept as"), "{out}");
    assert_eq!(out.matches("recovered (Bellman check").count(), 13, "{out}");
    assert_eq!(
        fs::read(dir.join("manifest.json.damaged")).unwrap(),
        [0xff, 0xfe, 0x00, 0x41, 0x80]
    );
    awari_status(&["check", "--db", s(&dir)], 0);
    awari_status(&["verify", "--db", s(&dir), "--checksums", KNOWN_GOOD], 0);
}

#[test]
fn a_damaged_table_is_left_out_of_the_recovered_manifest() {
    let dir = full_copy("awari-recover-damaged-");
    fs::remove_file(dir.join("manifest.json")).unwrap();
    // Layer 9: a changed score (in range). Layer 11: truncated.
    let mut t = fs::read(dir.join("scores.9")).unwrap();
    t[100] = (t[100] as i8).wrapping_add(1) as u8;
    fs::write(dir.join("scores.9"), &t).unwrap();
    let f = fs::OpenOptions::new()
        .write(true)
        .open(dir.join("upper.11"))
        .unwrap();
    f.set_len(10).unwrap();
    // With the list: layer 9 differs from it.
    let (out, err) = awari_status(&["recover", "--db", s(&dir), "--checksums", KNOWN_GOOD], 1);
    assert!(out.contains("layer  9: left out: scores.9 differ"), "{out}");
    assert!(
        out.contains("upper.11: 10 bytes, but the layer has"),
        "{out}"
    );
    assert!(out.contains("layer 10: recovered"), "{out}");
    assert!(err.contains("9, 11"), "{err}");
    let m = Manifest::load(&dir).unwrap().unwrap();
    let layers: Vec<u32> = m.layers.iter().map(|l| l.seeds).collect();
    assert_eq!(layers, vec![0, 1, 2, 3, 4, 5, 6, 7, 8, 10, 12]);
    // The builder rebuilds the layers left out, and the folder equals the
    // known-good list again.
    awari_status(
        &["build", "--max-seeds", "12", "--out", s(&dir), "--quiet"],
        0,
    );
    awari_status(&["verify", "--db", s(&dir), "--checksums", KNOWN_GOOD], 0);

    // Without the list, a changed score is found by the Bellman check, and
    // the layers above it cannot be checked.
    let dir = full_copy("awari-recover-bellman-");
    fs::remove_file(dir.join("manifest.json")).unwrap();
    fs::write(dir.join("scores.9"), &t).unwrap();
    let (out, _) = awari_status(&["recover", "--db", s(&dir)], 1);
    assert!(
        out.contains("layer  9: left out: 2 stored value(s) contradict"),
        "{out}"
    );
    assert!(
        out.contains("layer 10: left out: layer 9 below it is not recovered"),
        "{out}"
    );
}

/// A folder built with the distance: `recover` lists each `dist.n` again
/// where the known-good list vouches for it; a damaged one is left
/// unlisted (the layer's scores still trusted), and the next build
/// computes it again, equal to the list.
#[test]
fn distance_tables_are_recovered_where_the_list_vouches_for_them() {
    let dir = common::scratch("awari-recover-dist-");
    awari_status(&["build", "--max-seeds", "10", "--db", s(&dir), "-q"], 0);
    let original = Manifest::load(&dir).unwrap().unwrap();
    assert!(original.layers.iter().all(|l| l.dist.is_some()));
    fs::remove_file(dir.join("manifest.json")).unwrap();
    // One distance byte changed: its checksum no longer the list's.
    let path = dir.join("dist.9");
    let mut bytes = fs::read(&path).unwrap();
    bytes[1000] ^= 1;
    fs::write(&path, &bytes).unwrap();
    let (out, _) = awari_status(&["recover", "--db", s(&dir), "--checksums", KNOWN_GOOD], 0);
    assert!(out.contains("with 11 layer(s) (0..=10)"), "{out}");
    let m = Manifest::load(&dir).unwrap().unwrap();
    for (a, b) in m.layers.iter().zip(&original.layers) {
        assert_eq!(a.scores, b.scores);
        match a.seeds {
            9 => assert_eq!(a.dist, None, "the damaged dist.9 is not listed"),
            _ => assert_eq!(a.dist, b.dist, "layer {}", a.seeds),
        }
    }
    // The next build computes dist.9 again, as the list has it.
    awari_status(&["build", "--max-seeds", "10", "--db", s(&dir), "-q"], 0);
    let m = Manifest::load(&dir).unwrap().unwrap();
    assert_eq!(m.layer(9).unwrap().dist, original.layer(9).unwrap().dist);
    awari_status(&["verify", "--db", s(&dir), "--checksums", KNOWN_GOOD], 0);
}
