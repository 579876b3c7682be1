//! `awari check`: it says which kind of folder it checked and what it
//! verified, and a damaged table (flipped, truncated or missing) is a failed
//! check (status 1), bad input status 2.

mod common;

use common::{awari_status, full_copy, s, vu_copy};
use std::fs;

#[test]
fn check_names_the_kind_of_folder_and_what_it_verified() {
    let ours = full_copy("awari-check-ours-");
    let (out, _) = awari_status(&["check", "--db", s(&ours), "--layers", "0..=8"], 0);
    assert!(
        out.contains(
            "a folder of ours: checksums of the tables of 9 layer(s) (0..=8) match the manifest"
        ),
        "{out}"
    );
    assert!(out.contains("consistency check"), "{out}");

    let vu = vu_copy("awari-check-vu-");
    let (out, _) = awari_status(&["check", "--db", s(&vu), "--layers", "0..=8"], 0);
    assert!(
        out.contains("a VU dataset folder (no manifest.json)"),
        "{out}"
    );
    assert!(out.contains("no checksums to verify"), "{out}");
    assert!(!out.contains("match the manifest"), "{out}");
    let (out, _) = awari_status(&["check", "--db", s(&vu), "--layers", "8", "--json"], 0);
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["folder"], "vu");
    assert_eq!(v["checksums_verified"], 0);
}

#[test]
fn a_damaged_table_is_a_failed_check() {
    for damage in ["flipped", "truncated", "missing"] {
        for vu in [false, true] {
            if vu && damage == "missing" {
                continue; // a VU folder without scores.7 simply lacks layer 7
            }
            let dir = if vu {
                vu_copy("awari-check-damage-vu-")
            } else {
                full_copy("awari-check-damage-")
            };
            let path = dir.join("scores.7");
            match damage {
                "flipped" => {
                    let mut b = fs::read(&path).unwrap();
                    b[99] = (b[99] as i8).wrapping_add(1) as u8;
                    fs::write(&path, b).unwrap();
                }
                "truncated" => fs::OpenOptions::new()
                    .write(true)
                    .open(&path)
                    .unwrap()
                    .set_len(500)
                    .unwrap(),
                _ => fs::remove_file(&path).unwrap(),
            }
            let (out, err) = awari_status(&["check", "--db", s(&dir), "--layers", "7..=8"], 1);
            assert!(
                err.contains("scores.7") || out.contains("mismatch"),
                "{damage} vu={vu}: {out}{err}"
            );
        }
    }
    // Bad input stays status 2.
    let (_, err) = awari_status(&["check", "--db", "/nonexistent/awari"], 2);
    assert!(err.contains("no such folder"), "{err}");
    let dir = full_copy("awari-check-range-");
    let (_, err) = awari_status(&["check", "--db", s(&dir), "--layers", "3..5"], 2);
    assert!(err.contains("3..=5"), "{err}");
}
