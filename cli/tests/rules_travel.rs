//! The rule set travels with the compressed files. A folder of
//! `scores.n.zst` without manifest (the form an engine ships) of the
//! awale, olympiad or abapa rules is read under the rule set their
//! headers name, by the library, `query`, `play` and `serve` (the C API:
//! `capi/tests/rules.rs`);
//! `--rules` agreeing with them is taken, another refused naming both;
//! files that name different rule sets are refused naming the files.
//! `awari decompress` of such a folder writes a manifest that names the
//! rule set. Raw tables without manifest name none: they are read as
//! awari's (the VU database's) only saying so, and `--rules` names
//! theirs. Layers 0..=10, so that it runs in seconds.

mod common;

use awari_egdb::build;
use awari_egdb::probe::{Answer, Database};
use awari_egdb::rules::{Position, Rules, ABAPA, AWALE, AWARI, OLYMPIAD};
use awari_egdb::solve::Silent;
use awari_egdb::store::StoreError;
use awari_egdb::store::{Manifest, RulesFrom};
use common::boards::random_indexable;
use common::server::{get, pits, Server};
use common::{awari_status, copy_folder, ok, s, scratch, usage_error};
use rand::{rngs::StdRng, Rng, SeedableRng};
use serde_json::Value;
use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

/// The layers of every folder here.
const TOP: u32 = 10;
/// The rule sets other than awari.
const OTHERS: [Rules; 3] = [AWALE, OLYMPIAD, ABAPA];

/// Layers 0..=TOP of `rules` with the envelope and the manifest, built once
/// per rule set.
fn built(rules: &Rules) -> PathBuf {
    static DIRS: Mutex<Vec<(&'static str, PathBuf)>> = Mutex::new(Vec::new());
    let mut dirs = DIRS.lock().unwrap_or_else(|e| e.into_inner());
    if let Some((_, d)) = dirs.iter().find(|(n, _)| *n == rules.name) {
        return d.clone();
    }
    let dir = scratch(&format!("awari-travel-{}-", rules.name));
    let mut o = common::options(&dir, TOP, true);
    o.rules = *rules;
    build::build(&o, &Silent).unwrap_or_else(|e| panic!("build {}: {e}", rules.name));
    dirs.push((rules.name, dir.clone()));
    dir
}

/// What an engine ships: the folder compressed in format 4, scores alone
/// (`awari compress --format 4 --scores-only`), its `scores.n.zst` files
/// copied to a folder of their own (no manifest, no envelope).
fn shipped(rules: &Rules) -> PathBuf {
    let packed = copy_folder(&built(rules), "awari-travel-packed-");
    ok(&[
        "compress",
        "--db",
        s(&packed),
        "--format",
        "4",
        "--scores-only",
        "--remove-raw",
        "-q",
    ]);
    let dir = scratch(&format!("awari-travel-shipped-{}-", rules.name));
    for n in 0..=TOP {
        let f = format!("scores.{n}.zst");
        fs::copy(packed.join(&f), dir.join(&f)).expect("copy");
    }
    dir
}

/// The raw `scores.n` of the folder `from` alone, in a new folder (no
/// manifest): what `decompress --remove-compressed` of a shipped folder
/// left before it wrote a manifest, or a VU dataset folder.
fn raw_scores(from: &Path, prefix: &str) -> PathBuf {
    let dir = scratch(prefix);
    for n in 0..=TOP {
        let f = format!("scores.{n}");
        fs::copy(from.join(&f), dir.join(&f)).expect("copy");
    }
    dir
}

/// The names of the files of `dir`.
fn files(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    v.sort();
    v
}

/// Random boards of layers 0..=TOP with a Goedel number.
fn boards(count: usize, seed: u64) -> Vec<Position> {
    let mut rng = StdRng::seed_from_u64(seed);
    (0..count)
        .map(|_| {
            let n = rng.gen_range(0..=TOP);
            random_indexable(&mut rng, n, false)
        })
        .collect()
}

/// What a folder of scores alone answers: the answer without the
/// envelope (and without saying whether the rule set was assumed, which
/// the callers check themselves).
fn scores_part(mut a: Answer) -> Answer {
    a.rules_assumed = false;
    a.lower = None;
    a.upper = None;
    a.pinned = None;
    a
}

/// `db` answers every board as the folder built under `rules` does (but
/// the envelope, which a folder of scores does not hold).
fn answers_as_built(db: &Database, rules: &Rules, what: &str) {
    let reference = Database::open(built(rules)).unwrap();
    for p in boards(300, 7) {
        let want = scores_part(reference.answer(&p, None).unwrap());
        let got = scores_part(db.answer(&p, None).unwrap());
        assert_eq!(got, want, "{what}: {p}");
    }
    for n in 0..=TOP {
        assert_eq!(
            db.read_table(n, awari_egdb::format::Kind::Score).unwrap(),
            reference
                .read_table(n, awari_egdb::format::Kind::Score)
                .unwrap(),
            "{what}: scores.{n}"
        );
    }
}

/// `awari query --json` of `p` on `dir`, with `extra` arguments.
fn query(dir: &Path, p: &Position, extra: &[&str]) -> Value {
    let mut args = vec!["query".to_string(), "--db".into(), s(dir).into()];
    args.extend(extra.iter().map(|a| a.to_string()));
    args.push("--json".into());
    args.extend(p.0.iter().map(|x| x.to_string()));
    let a: Vec<&str> = args.iter().map(String::as_str).collect();
    serde_json::from_str(ok(&a).trim()).unwrap()
}

#[test]
fn a_folder_of_compressed_scores_is_read_under_the_rules_its_headers_name() {
    for rules in &OTHERS {
        let dir = shipped(rules);
        let db = Database::open(&dir).unwrap();
        assert_eq!(db.rules(), rules);
        assert_eq!(db.rules_from(), RulesFrom::Headers);
        assert!(!db.rules_assumed());
        assert_eq!(db.layers(), (0..=TOP).collect::<Vec<_>>());
        answers_as_built(&db, rules, rules.name);
        // The same rule set asked for is taken; another is refused, naming
        // both.
        let db = db.with_rules(rules).unwrap();
        assert_eq!(db.rules(), rules);
        match db.with_rules(&AWARI) {
            Err(e) if matches!(e.cause(), Some(StoreError::RulesDiffer { .. })) => {
                let msg = e.to_string();
                assert!(msg.contains(rules.name) && msg.contains("awari"), "{msg}");
            }
            Err(e) => panic!("{}: want RulesDiffer, got {e:?}", rules.name),
            Ok(_) => panic!("{}: --rules awari taken", rules.name),
        }
    }
}

#[test]
fn query_play_and_serve_read_them_under_their_rules() {
    for rules in &OTHERS {
        let dir = shipped(rules);
        let full = built(rules);
        for p in boards(20, 3) {
            let mut want = query(&full, &p, &[]);
            for k in ["lower", "upper", "pinned"] {
                want[k] = Value::Null;
            }
            assert_eq!(query(&dir, &p, &[]), want, "{}: {p}", rules.name);
            // --rules naming the headers' rule set is taken.
            assert_eq!(
                query(&dir, &p, &["--rules", rules.name]),
                want,
                "{}",
                rules.name
            );
        }
        // Another rule set asked for is refused in one line naming both.
        let before = files(&dir);
        let e = usage_error(&[
            "query",
            "--db",
            s(&dir),
            "--rules",
            "awari",
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
        ]);
        assert!(
            e.contains(&format!("follow the {} rules, not awari", rules.name)),
            "{e}"
        );
        assert_eq!(files(&dir), before);
        // play names the rule set and plays by it.
        let out = common::awari(
            &[
                "play",
                "--db",
                s(&dir),
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
            Some("quit\n"),
        );
        let text = common::text(&out.stdout);
        assert!(out.status.success(), "{}", common::text(&out.stderr));
        assert!(
            text.starts_with(&format!("rules: {} (`awari rules", rules.name)),
            "{text}"
        );
        // serve answers under it.
        let server = Server::start(&dir, &[]);
        let reference = Database::open(&full).unwrap();
        for p in boards(10, 5) {
            let (status, v) = get(
                &server.addr,
                &format!("/api/v1/position?pits={}", pits(&p.0)),
            );
            assert_eq!(status, 200, "{v}");
            assert_eq!(v["rules"], rules.name);
            assert_eq!(v.get("rules_assumed"), None);
            assert_eq!(
                v["score"].as_i64(),
                Some(reference.score(&p).unwrap() as i64)
            );
        }
        server.stop();
    }
}

#[test]
fn files_that_name_different_rule_sets_are_refused_naming_them() {
    let (awale, abapa) = (shipped(&AWALE), shipped(&ABAPA));
    let dir = scratch("awari-travel-mixed-");
    for n in 0..=TOP {
        let (from, f) = (
            if n < 6 { &awale } else { &abapa },
            format!("scores.{n}.zst"),
        );
        fs::copy(from.join(&f), dir.join(&f)).unwrap();
    }
    let err = Database::open(&dir)
        .err()
        .expect("a folder of two rule sets refused");
    match err.cause() {
        Some(StoreError::RulesMixed { files, .. }) => {
            let named: BTreeMap<String, &str> = files.iter().cloned().collect();
            assert_eq!(named.len(), TOP as usize + 1, "{named:?}");
            assert_eq!(named["scores.5.zst"], "awale");
            assert_eq!(named["scores.6.zst"], "abapa");
        }
        _ => panic!("want RulesMixed, got {err:?}"),
    }
    let before = files(&dir);
    for args in [
        vec![
            "query",
            "--db",
            s(&dir),
            "1",
            "0",
            "0",
            "0",
            "0",
            "0",
            "1",
            "0",
            "0",
            "0",
            "0",
            "0",
        ],
        vec!["decompress", "--db", s(&dir)],
        vec!["check", "--db", s(&dir)],
        vec![
            "query",
            "--db",
            s(&dir),
            "--rules",
            "awale",
            "1",
            "0",
            "0",
            "0",
            "0",
            "0",
            "1",
            "0",
            "0",
            "0",
            "0",
            "0",
        ],
    ] {
        let e = usage_error(&args);
        assert!(
            e.contains("name different rule sets")
                && e.contains("awale: scores.0.zst")
                && e.contains("abapa: scores.6.zst"),
            "{args:?}: {e}"
        );
    }
    assert_eq!(files(&dir), before, "a refused command wrote to the folder");
}

/// The manifest of `dir`, which must name `rules` and list layers
/// 0..=TOP with the raw tables' checksums of the folder built under it.
fn check_manifest(dir: &Path, rules: &Rules) -> Manifest {
    let m = Manifest::load(dir).unwrap().expect("a manifest");
    let reference = Manifest::load(&built(rules)).unwrap().unwrap();
    assert_eq!(m.rules(), *rules);
    assert_eq!(m.rule_set, rules.tag());
    assert_eq!(m.layers.len(), TOP as usize + 1);
    for (l, r) in m.layers.iter().zip(&reference.layers) {
        assert_eq!((l.seeds, &l.scores), (r.seeds, &r.scores));
        assert!(l.lower.is_none() && l.upper.is_none());
        assert!(l.recovered.is_some(), "how the tables were trusted");
    }
    m
}

#[test]
fn decompress_writes_a_manifest_that_names_the_rule_set() {
    for rules in &OTHERS {
        // Every layer written back, the compressed files kept and listed.
        let dir = copy_folder(&shipped(rules), "awari-travel-decompress-");
        ok(&["decompress", "--db", s(&dir), "-q"]);
        let m = check_manifest(&dir, rules);
        assert_eq!(m.compressed.len(), TOP as usize + 1);
        for l in &m.layers {
            assert_eq!(
                l.score_histogram,
                Manifest::load(&built(rules)).unwrap().unwrap().layers[l.seeds as usize]
                    .score_histogram
            );
        }
        let db = Database::open(&dir).unwrap();
        assert_eq!((db.rules(), db.rules_from()), (rules, RulesFrom::Manifest));
        assert!(!db
            .is_compressed(TOP, awari_egdb::format::Kind::Score)
            .unwrap());
        answers_as_built(&db, rules, rules.name);
        // The tables pass the checksums and the Bellman check of their rules.
        let (out, _) = awari_status(&["check", "--db", s(&dir)], 0);
        assert!(
            out.contains(&format!("a folder of ours of the {} rules", rules.name)),
            "{out}"
        );
        // Again: nothing to do, the same manifest.
        let text = fs::read_to_string(dir.join("manifest.json")).unwrap();
        ok(&["decompress", "--db", s(&dir), "-q"]);
        assert_eq!(fs::read_to_string(dir.join("manifest.json")).unwrap(), text);

        // The compressed files removed: raw tables and the manifest.
        let dir = copy_folder(&shipped(rules), "awari-travel-decompress-rm-");
        ok(&["decompress", "--db", s(&dir), "--remove-compressed", "-q"]);
        let m = check_manifest(&dir, rules);
        assert!(m.compressed.is_empty());
        assert!(
            files(&dir).iter().all(|f| !f.ends_with(".zst")),
            "{:?}",
            files(&dir)
        );
        let p = boards(1, 9)[0];
        assert_eq!(query(&dir, &p, &[])["rules"], rules.name);
        awari_status(&["check", "--db", s(&dir)], 0);

        // Some layers: the others stay compressed, listed.
        let dir = copy_folder(&shipped(rules), "awari-travel-decompress-some-");
        ok(&[
            "decompress",
            "--db",
            s(&dir),
            "--layers",
            "0..=5",
            "--remove-compressed",
            "-q",
        ]);
        let m = check_manifest(&dir, rules);
        let listed: Vec<u32> = m.compressed.iter().map(|c| c.seeds).collect();
        assert_eq!(listed, (6..=TOP).collect::<Vec<_>>());
        let db = Database::open(&dir).unwrap();
        assert!(db
            .is_compressed(TOP, awari_egdb::format::Kind::Score)
            .unwrap());
        answers_as_built(&db, rules, rules.name);
        awari_status(&["check", "--db", s(&dir)], 0);

        // --rules naming another rule set than the headers' is refused.
        let dir = copy_folder(&shipped(rules), "awari-travel-decompress-other-");
        let before = files(&dir);
        let e = usage_error(&["decompress", "--db", s(&dir), "--rules", "awari"]);
        assert!(e.contains(rules.name) && e.contains("awari"), "{e}");
        assert_eq!(files(&dir), before);
    }
}

#[test]
fn raw_tables_without_manifest_are_read_as_awari_only_saying_so() {
    let awale = raw_scores(&built(&AWALE), "awari-travel-raw-awale-");
    let db = Database::open(&awale).unwrap();
    assert_eq!(db.rules(), &AWARI);
    assert_eq!(db.rules_from(), RulesFrom::Assumed);
    assert!(db.rules_assumed());
    let p = boards(1, 9)[0];
    assert!(db.answer(&p, None).unwrap().rules_assumed);
    // The caller names the rule set.
    let db = db.with_rules(&AWALE).unwrap();
    assert_eq!((db.rules(), db.rules_from()), (&AWALE, RulesFrom::Caller));
    assert!(!db.rules_assumed());
    answers_as_built(&db, &AWALE, "raw awale, --rules awale");

    // The binary says it assumed, in the text and in JSON.
    let pits: Vec<String> = p.0.iter().map(|x| x.to_string()).collect();
    let mut args = vec!["query", "--db", s(&awale)];
    args.extend(pits.iter().map(String::as_str));
    let out = ok(&args);
    assert!(
        out.contains("rules awari (assumed: no manifest.json") && out.contains("--rules NAME"),
        "{out}"
    );
    let v = query(&awale, &p, &[]);
    assert_eq!(
        (&v["rules"], &v["rules_assumed"]),
        (&"awari".into(), &true.into())
    );
    // --rules is honoured, and then nothing is assumed.
    let mut want = query(&built(&AWALE), &p, &[]);
    for k in ["lower", "upper", "pinned"] {
        want[k] = Value::Null;
    }
    assert_eq!(query(&awale, &p, &["--rules", "awale"]), want);
    // check: under the assumed rules the awale tables contradict their
    // children (and the output says what was assumed); under their own
    // they pass.
    let (out, _) = awari_status(&["check", "--db", s(&awale)], 1);
    assert!(out.contains("rules awari (assumed"), "{out}");
    let (out, _) = awari_status(&["check", "--db", s(&awale), "--rules", "awale"], 0);
    assert!(
        out.contains("read under the awale rules (--rules)"),
        "{out}"
    );
    let (out, _) = awari_status(&["stats", "--db", s(&awale), "--json"], 0);
    assert_eq!(
        serde_json::from_str::<Value>(&out).unwrap()["rules_assumed"],
        true
    );
    let out = common::awari(
        &[
            "play",
            "--db",
            s(&awale),
            "--rules",
            "awale",
            "--computer",
            "none",
        ],
        Some("quit\n"),
    );
    assert!(
        common::text(&out.stdout).starts_with("rules: awale (`awari rules awale`"),
        "{}{}",
        common::text(&out.stdout),
        common::text(&out.stderr)
    );

    // A VU dataset folder is still read as awari's, saying so.
    let vu = raw_scores(&built(&AWARI), "awari-travel-raw-vu-");
    let db = Database::open(&vu).unwrap();
    assert!(db.rules_assumed());
    answers_as_built(&db, &AWARI, "vu");
    let (out, _) = awari_status(&["check", "--db", s(&vu)], 0);
    assert!(
        out.contains("a VU dataset folder (no manifest.json)"),
        "{out}"
    );
    assert!(out.contains("rules awari (assumed"), "{out}");
}
