//! The rule sets through the commands: `awari rules`, `build --rules`, a
//! folder's rule set obeyed by every command that reads it, and the
//! refusals (one line, exit 2, nothing written): an unknown rule set, a
//! folder of another rule set, the VU checks on an abapa folder.

mod common;

use common::{awari, awari_status, ok, s, scratch, usage_error};
use std::collections::BTreeMap;
use std::fs;
use std::path::Path;
use std::sync::OnceLock;

/// Every file of a folder and its bytes, except `build.lock`.
fn files(dir: &Path) -> BTreeMap<String, Vec<u8>> {
    fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.file_name().unwrap() != "build.lock")
        .map(|p| {
            (
                p.file_name().unwrap().to_string_lossy().into_owned(),
                fs::read(&p).unwrap(),
            )
        })
        .collect()
}

/// An abapa folder of layers 0..=8, built once by the binary.
fn abapa() -> &'static Path {
    static DIR: OnceLock<std::path::PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        let dir = scratch("awari-abapa-");
        ok(&[
            "build",
            "--rules",
            "abapa",
            "--db",
            s(&dir),
            "--max-seeds",
            "8",
            "-q",
        ]);
        dir
    })
}

/// A copy of the abapa folder (for commands that write).
fn abapa_copy() -> std::path::PathBuf {
    let dst = scratch("awari-abapa-copy-");
    for (name, bytes) in files(abapa()) {
        fs::write(dst.join(name), bytes).unwrap();
    }
    dst
}

/// A grand slam under abapa: pit 5 takes the opponent's only seed.
const SLAM: [&str; 12] = ["1", "0", "0", "0", "0", "1", "1", "0", "0", "0", "0", "0"];

#[test]
fn rules_prints_every_rule_set_field_by_field() {
    let out = ok(&["rules"]);
    for field in [
        "grand_slam",
        "feeding",
        "no_seeds",
        "win",
        "draw",
        "repetition",
        "no_capture_limit",
        "seeds_left",
    ] {
        assert!(out.contains(field), "{field} missing:\n{out}");
    }
    for name in ["awari", "abapa", "olympiad", "awale"] {
        assert!(
            out.contains(&format!("  {name} ")),
            "{name} missing:\n{out}"
        );
    }
    assert!(
        out.contains("never legal; a mover whose every move is one cannot play"),
        "{out}"
    );
    assert!(
        out.contains("the sowing stands and nothing is captured"),
        "{out}"
    );
    let json: serde_json::Value = serde_json::from_str(&ok(&["rules", "abapa", "--json"])).unwrap();
    assert_eq!(json["name"], "abapa");
    assert_eq!(json["grand_slam"], "no-capture");
    assert_eq!(json["feeding"], "mandatory");
    assert_eq!(json["no_capture_limit"], 500);
    let all: serde_json::Value = serde_json::from_str(&ok(&["rules", "--json"])).unwrap();
    assert_eq!(all.as_array().map(|a| a.len()), Some(4));
    let json: serde_json::Value =
        serde_json::from_str(&ok(&["rules", "olympiad", "--json"])).unwrap();
    assert_eq!(json["grand_slam"], "captures");
    assert_eq!(json["feeding"], "mandatory");
    assert_eq!((&json["win"], &json["draw"]), (&25.into(), &24.into()));
    assert_eq!(json["repetition"], 2);
    let json: serde_json::Value = serde_json::from_str(&ok(&["rules", "awale", "--json"])).unwrap();
    assert_eq!(json["grand_slam"], "never");
    assert_eq!(json["feeding"], "free");
    assert!(json["win"].is_null() && json["draw"].is_null(), "{json}");
    assert_eq!(json["seeds_left"], "not-captured");
    let e = usage_error(&["rules", "kalah"]);
    assert!(
        e.contains("kalah") && e.contains("awari, abapa, olympiad, awale"),
        "{e}"
    );
    let e = usage_error(&["build", "--rules", "kalah", "--db", "/tmp/awari-never"]);
    assert!(e.contains("awari, abapa, olympiad, awale"), "{e}");
    assert!(!Path::new("/tmp/awari-never").exists());
}

#[test]
fn an_abapa_folder_records_its_rule_set_and_every_command_obeys_it() {
    let dir = abapa();
    let m: serde_json::Value =
        serde_json::from_str(&fs::read_to_string(dir.join("manifest.json")).unwrap()).unwrap();
    assert_eq!(m["rule_set"], "abapa");
    assert_eq!(m["rules"]["grand_slam"], "no-capture");
    // The grand slam is legal and captures nothing; awari's tables say
    // otherwise about the same position.
    let mut args = vec!["query", "--db", s(dir), "--json"];
    args.extend(SLAM);
    let q: serde_json::Value = serde_json::from_str(&ok(&args)).unwrap();
    assert_eq!(q["rules"], "abapa");
    assert_eq!(q["moves"][5]["legal"], true);
    assert_eq!(q["moves"][5]["captures"], 0);
    let mut args = vec!["query", "--db", s(common::db_dir()), "--json"];
    args.extend(SLAM);
    let q: serde_json::Value = serde_json::from_str(&ok(&args)).unwrap();
    assert_eq!(q["rules"], "awari");
    assert_eq!(q["moves"][5]["legal"], false);
    // check recomputes every value under abapa.
    let out = ok(&["check", "--db", s(dir)]);
    assert!(out.contains("Bellman check passes"), "{out}");
    ok(&["stats", "--db", s(dir)]);
    // A compressed copy carries the rule set and is read back.
    let copy = abapa_copy();
    ok(&["compress", "--db", s(&copy), "--remove-raw", "-q"]);
    let mut args = vec!["query", "--db", s(&copy), "--json"];
    args.extend(SLAM);
    let q: serde_json::Value = serde_json::from_str(&ok(&args)).unwrap();
    assert_eq!(q["moves"][5]["captures"], 0);
    ok(&["check", "--db", s(&copy)]);
    ok(&["decompress", "--db", s(&copy), "-q"]);
    // A build without --rules resumes the folder's rule set.
    ok(&["build", "--db", s(&copy), "--max-seeds", "9", "-q"]);
    let m: serde_json::Value =
        serde_json::from_str(&fs::read_to_string(copy.join("manifest.json")).unwrap()).unwrap();
    assert_eq!(m["rule_set"], "abapa");
    assert_eq!(m["layers"].as_array().unwrap().len(), 10);
}

#[test]
fn another_rule_set_than_the_folders_is_refused_in_one_line_and_nothing_is_written() {
    let dir = abapa_copy();
    let before = files(&dir);
    let d = s(&dir);
    let mut query = vec!["query", "--db", d, "--rules", "awari"];
    query.extend(SLAM);
    for args in [
        vec!["build", "--db", d, "--rules", "awari", "--max-seeds", "9"],
        vec!["compress", "--db", d, "--rules", "awari"],
        vec!["decompress", "--db", d, "--rules", "awari"],
        query,
        vec!["check", "--db", d, "--rules", "awari"],
        vec!["stats", "--db", d, "--rules", "awari"],
        vec!["play", "--db", d, "--rules", "awari"],
        vec!["verify", "--db", d, "--checksums", common::KNOWN_GOOD],
        vec!["verify", "--db", d, "--oracle", s(common::db_dir())],
        vec![
            "verify",
            "--db",
            d,
            "--facts",
            concat!(
                concat!(env!("CARGO_MANIFEST_DIR"), "/.."),
                "/data/vu-move-facts.csv"
            ),
        ],
    ] {
        let e = usage_error(&args);
        assert_eq!(e.trim().lines().count(), 1, "{args:?}: {e}");
        assert!(e.contains("abapa") && e.contains("awari"), "{args:?}: {e}");
    }
    assert_eq!(files(&dir), before, "a refused command wrote to the folder");
    // The other way round: an awari folder refuses an abapa build.
    let aw = common::full_copy("awari-rules-aw-");
    let before = files(&aw);
    let e = usage_error(&[
        "build",
        "--db",
        s(&aw),
        "--rules",
        "abapa",
        "--max-seeds",
        "13",
    ]);
    assert!(e.contains("follow the awari rules, not abapa"), "{e}");
    assert_eq!(files(&aw), before);
}

#[test]
fn play_follows_the_folders_rules_and_the_record_names_them() {
    let dir = abapa();
    let rec = scratch("awari-abapa-rec-").join("g.txt");
    // South sows pit F, a grand slam of the opponent's only seed: nothing is
    // captured under abapa.
    let script = format!("F\nsave {}\nquit\n", rec.display());
    let out = awari(
        &[
            "play",
            "--db",
            s(dir),
            "--from",
            "1",
            "0",
            "0",
            "0",
            "0",
            "1",
            "1",
            "0",
            "0",
            "0",
            "0",
            "0",
            "--computer",
            "none",
        ],
        Some(&script),
    );
    let text = common::text(&out.stdout);
    assert!(out.status.success(), "{text}{}", common::text(&out.stderr));
    assert!(text.contains("rules: abapa"), "{text}");
    assert!(text.contains("South plays F\n"), "no capture: {text}");
    let record = fs::read_to_string(&rec).unwrap();
    assert!(record.contains("\nrules abapa\n"), "{record}");
    // The record replays under abapa, and is refused by an awari folder.
    let out = awari(
        &[
            "play",
            "--db",
            s(dir),
            "--game",
            s(&rec),
            "--computer",
            "none",
        ],
        Some("quit\n"),
    );
    assert!(out.status.success(), "{}", common::text(&out.stderr));
    let (_, err) = awari_status(
        &[
            "play",
            "--db",
            s(common::db_dir()),
            "--game",
            s(&rec),
            "--computer",
            "none",
        ],
        2,
    );
    assert!(
        err.contains("a game under the abapa rules; the tables follow awari"),
        "{err}"
    );
}

#[test]
fn recover_finds_the_rule_set_of_an_abapa_folder() {
    let manifest = |dir: &Path| -> serde_json::Value {
        serde_json::from_str(&fs::read_to_string(dir.join("manifest.json")).unwrap()).unwrap()
    };
    // Without --rules: the rule set under which the tables pass (the
    // Bellman check tells them apart from layer 2 on).
    let dir = abapa_copy();
    fs::remove_file(dir.join("manifest.json")).unwrap();
    let out = ok(&["recover", "--db", s(&dir)]);
    assert!(
        out.contains("manifest.json written for the abapa rules with 9 layer(s)"),
        "{out}"
    );
    assert_eq!(manifest(&dir)["rule_set"], "abapa");
    // A garbled manifest that still names its rule set.
    let dir = abapa_copy();
    fs::write(
        dir.join("manifest.json"),
        "{\"rule_set\": \"abapa\", \"layers\": 7}",
    )
    .unwrap();
    let out = ok(&["recover", "--db", s(&dir)]);
    assert!(out.contains("for the abapa rules with 9 layer(s)"), "{out}");
    // Asked for awari, the abapa tables of layers 2..=8 fail the Bellman
    // check and are left out (exit 1).
    let dir = abapa_copy();
    fs::remove_file(dir.join("manifest.json")).unwrap();
    let (out, _) = awari_status(&["recover", "--db", s(&dir), "--rules", "awari"], 1);
    assert!(out.contains("left out"), "{out}");
    // A known-good list of the other rule set is refused.
    fs::remove_file(dir.join("manifest.json")).unwrap();
    let e = usage_error(&[
        "recover",
        "--db",
        s(&dir),
        "--rules",
        "abapa",
        "--checksums",
        common::KNOWN_GOOD,
    ]);
    assert!(
        e.contains("lists the checksums of awari tables, not of abapa"),
        "{e}"
    );
}

/// An abapa folder is no oracle (the VU database follows awari): refused
/// in one line, exit 2.
#[test]
fn an_abapa_folder_is_no_oracle() {
    let ab = abapa();
    let e = usage_error(&[
        "verify",
        "--db",
        s(common::db_dir()),
        "--oracle",
        s(ab),
        "--layers",
        "0..=8",
    ]);
    assert!(e.contains(s(ab)) && e.contains("abapa"), "{e}");
}

/// `check` on an abapa folder does not point to the VU move facts (awari
/// only), and `--checksums known` takes the abapa list built into the
/// binary.
#[test]
fn abapa_hints_name_no_vu_facts_and_the_built_in_list() {
    let ab = abapa();
    let out = ok(&["check", "--db", s(ab)]);
    assert!(out.contains("--checksums known"), "{out}");
    assert!(!out.contains("--facts"), "{out}");
    let out = ok(&["verify", "--db", s(ab), "--checksums", "known"]);
    // Nine layers of four tables each: the distance is in the list too.
    assert!(out.contains("all 36 table(s) equal"), "{out}");
}
