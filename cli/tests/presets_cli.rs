//! The olympiad and awale presets through the commands: a folder of each
//! (layers 0..=8, built by the binary) records its rule set, and `query`,
//! `check`, `stats`, `compress`/`decompress` and `play` follow it: an
//! olympiad grand slam captures and is worth every seed left, an awale
//! one is illegal, and an awale mover whose every move is one has lost
//! the seeds left.

mod common;

use common::{awari, ok, s, scratch};
use std::fs;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

/// A folder of layers 0..=8 of `rules`, built once per rule set.
fn folder(rules: &'static str) -> &'static Path {
    static OLYMPIAD: OnceLock<PathBuf> = OnceLock::new();
    static AWALE: OnceLock<PathBuf> = OnceLock::new();
    let cell = match rules {
        "olympiad" => &OLYMPIAD,
        "awale" => &AWALE,
        other => panic!("no folder for {other}"),
    };
    cell.get_or_init(|| {
        let dir = scratch(&format!("awari-{rules}-"));
        ok(&[
            "build",
            "--rules",
            rules,
            "--db",
            s(&dir),
            "--max-seeds",
            "8",
            "-q",
        ]);
        dir
    })
}

/// `query --json` of a position in `dir`.
fn query(dir: &Path, pits: [u8; 12]) -> serde_json::Value {
    let pits: Vec<String> = pits.iter().map(u8::to_string).collect();
    let mut args = vec!["query", "--db", s(dir), "--json"];
    args.extend(pits.iter().map(String::as_str));
    serde_json::from_str(&ok(&args)).unwrap()
}

/// Pit 5 (1 seed) would take the opponent's only seed; pit 0 would not.
const SLAM: [u8; 12] = [1, 0, 0, 0, 0, 1, 1, 0, 0, 0, 0, 0];
/// Pit 5 is the only move, and it would take the opponent's only seed.
const ONLY_SLAM: [u8; 12] = [0, 0, 0, 0, 0, 1, 1, 0, 0, 0, 0, 0];
/// The opponent has no seeds; pit 5 feeds it, pit 0 does not.
const EMPTY_OPPONENT: [u8; 12] = [1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0];

#[test]
fn olympiad_folder_grand_slams_capture_and_feeding_is_mandatory() {
    let dir = folder("olympiad");
    let m: serde_json::Value =
        serde_json::from_str(&fs::read_to_string(dir.join("manifest.json")).unwrap()).unwrap();
    assert_eq!(m["rule_set"], "olympiad");
    assert_eq!(m["rules"]["grand_slam"], "captures");
    let q = query(dir, SLAM);
    assert_eq!(q["rules"], "olympiad");
    assert_eq!(q["moves"][5]["legal"], true);
    assert_eq!(q["moves"][5]["captures"], 2);
    assert_eq!(
        (&q["score"], &q["moves"][5]["score"]),
        (&3.into(), &3.into())
    );
    let q = query(dir, EMPTY_OPPONENT);
    assert_eq!(q["moves"][0]["legal"], false);
    assert_eq!(q["moves"][5]["legal"], true);
    let out = ok(&["check", "--db", s(dir)]);
    assert!(out.contains("Bellman check passes"), "{out}");
    ok(&["stats", "--db", s(dir)]);
}

#[test]
fn awale_folder_grand_slams_are_illegal_and_feeding_is_free() {
    let dir = folder("awale");
    let q = query(dir, SLAM);
    assert_eq!(q["rules"], "awale");
    assert_eq!(q["moves"][5]["legal"], false);
    assert_eq!(q["moves"][0]["legal"], true);
    // Only a grand slam: no legal move, the opponent takes the rest.
    let q = query(dir, ONLY_SLAM);
    assert_eq!(q["score"], -2);
    assert!(q["moves"]
        .as_array()
        .unwrap()
        .iter()
        .all(|m| m["legal"] == false));
    // Not feeding an empty opponent is legal and takes the rest.
    let q = query(dir, EMPTY_OPPONENT);
    assert_eq!(q["moves"][0]["legal"], true);
    assert_eq!(
        (&q["score"], &q["moves"][0]["score"]),
        (&2.into(), &2.into())
    );
    let out = ok(&["check", "--db", s(dir)]);
    assert!(out.contains("Bellman check passes"), "{out}");
}

#[test]
fn compressed_copies_keep_the_rule_set_and_play_follows_it() {
    for rules in ["olympiad", "awale"] {
        let copy = scratch(&format!("awari-{rules}-copy-"));
        for e in fs::read_dir(folder(rules)).unwrap() {
            let p = e.unwrap().path();
            if p.file_name().unwrap() != "build.lock" {
                fs::copy(&p, copy.join(p.file_name().unwrap())).unwrap();
            }
        }
        ok(&[
            "compress",
            "--db",
            s(&copy),
            "--format",
            "4",
            "--remove-raw",
            "-q",
        ]);
        let q = query(&copy, SLAM);
        assert_eq!(q["rules"], rules);
        assert_eq!(q["moves"][5]["legal"], rules == "olympiad");
        ok(&["check", "--db", s(&copy)]);
        ok(&["decompress", "--db", s(&copy), "-q"]);
        let built = folder(rules);
        for n in 0..=8 {
            let name = format!("scores.{n}");
            assert_eq!(
                fs::read(copy.join(&name)).unwrap(),
                fs::read(built.join(&name)).unwrap(),
                "{rules} {name}"
            );
        }
    }
    // South's only move takes North's only seed: olympiad plays it and
    // South takes the rest; under awale South cannot play and North does.
    let from: Vec<String> = ONLY_SLAM.iter().map(u8::to_string).collect();
    for (rules, script, want) in [
        ("olympiad", "F\nquit\n", "South has captured more than half"),
        ("awale", "quit\n", "North takes the seeds left"),
    ] {
        let mut args = vec!["play", "--db", s(folder(rules)), "--computer", "none"];
        args.push("--from");
        args.extend(from.iter().map(String::as_str));
        let out = awari(&args, Some(script));
        let text = common::text(&out.stdout);
        assert!(out.status.success(), "{text}{}", common::text(&out.stderr));
        assert!(text.contains(&format!("rules: {rules}")), "{text}");
        assert!(text.contains(want), "{rules}: {text}");
    }
}
