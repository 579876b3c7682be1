//! `awari query`, run as the built binary against a folder of layers 0..=12
//! built once per run: text and JSON answers checked against the table
//! files, `--pv`, `--stdin`, `AWARI_PATH`, and every kind of bad input
//! (exit status 2, one `awari:` line, never a panic).

mod common;

use awari_egdb::index::{self, layer_size};
use awari_egdb::rules::{Position, AWARI};
use common::{awari_in, db_dir, full_copy, scratch, text, vu_copy, MAX};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use serde_json::Value;
use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::process::Output;
use std::sync::OnceLock;

/// The keys the issue asks for.
const KEYS: [&str; 9] = [
    "seeds", "index", "score", "lower", "upper", "pinned", "moves", "best", "pv",
];
/// Keys the implementation prints on top of those (`rules_assumed` only
/// where nothing named the rule set: raw tables without manifest).
const EXTRA_KEYS: [&str; 5] = ["distance", "pits", "pv_end", "rules", "rules_assumed"];

/// `awari query` with `args`, `AWARI_PATH` unset unless given, and `input`
/// on standard input, run where no `./db` can be found by accident.
fn run(args: &[&str], awari_path: Option<&Path>, input: Option<&str>) -> Output {
    static CWD: OnceLock<PathBuf> = OnceLock::new();
    let cwd = CWD.get_or_init(|| scratch("awari-query-cwd-"));
    let mut all = vec!["query"];
    all.extend_from_slice(args);
    let env: Vec<(&str, &OsStr)> = awari_path
        .map(|p| ("AWARI_PATH", p.as_os_str()))
        .into_iter()
        .collect();
    awari_in(&all, input, &env, Some(cwd))
}

fn db_arg() -> String {
    db_dir().to_str().unwrap().to_string()
}

fn board_args(p: &Position) -> Vec<String> {
    p.0.iter().map(|x| x.to_string()).collect()
}

/// Runs a query that must succeed; returns stdout.
fn ok(args: &[&str], awari_path: Option<&Path>) -> String {
    let out = run(args, awari_path, None);
    assert!(
        out.status.success(),
        "awari query {args:?}: {:?}; stderr: {}",
        out.status,
        text(&out.stderr)
    );
    assert!(out.stderr.is_empty(), "stderr: {}", text(&out.stderr));
    text(&out.stdout)
}

/// `awari query --db DB board --json [extra]`, parsed.
fn query_json(db: &str, p: &Position, extra: &[&str]) -> Value {
    let mut args = vec!["--db", db];
    let b = board_args(p);
    args.extend(b.iter().map(String::as_str));
    args.push("--json");
    args.extend_from_slice(extra);
    let out = ok(&args, None);
    assert_eq!(out.lines().count(), 1, "one JSON line: {out}");
    serde_json::from_str(out.trim()).unwrap_or_else(|e| panic!("not JSON ({e}): {out}"))
}

/// A failure that must be reported as bad input: status 2, exactly one line
/// on stderr starting with `awari:`, nothing on stdout. Returns the line.
fn usage_error(args: &[&str], awari_path: Option<&Path>) -> String {
    failure(args, awari_path, 2)
}

/// A failure with exit status `code`, reported as [`usage_error`] describes.
fn failure(args: &[&str], awari_path: Option<&Path>, code: i32) -> String {
    let out = run(args, awari_path, None);
    let stderr = text(&out.stderr);
    assert_eq!(
        out.status.code(),
        Some(code),
        "awari query {args:?}: want status {code}, got {:?}; stderr: {stderr}",
        out.status
    );
    let lines: Vec<&str> = stderr.lines().collect();
    assert_eq!(
        lines.len(),
        1,
        "awari query {args:?}: want one stderr line: {stderr:?}"
    );
    assert!(lines[0].starts_with("awari: "), "{stderr:?}");
    assert!(out.stdout.is_empty(), "stdout: {}", text(&out.stdout));
    lines[0].to_string()
}

/// The stored score of a position, from the file bytes.
fn file_score(dir: &Path, p: &Position) -> i64 {
    let t = std::fs::read(dir.join(format!("scores.{}", p.seeds()))).unwrap();
    t[index::rank(p) as usize] as i8 as i64
}

fn random_positions(seed: u64, count: usize) -> Vec<Position> {
    let mut rng = StdRng::seed_from_u64(seed);
    (0..count)
        .map(|_| {
            let n = rng.gen_range(0..=MAX);
            index::unrank(n, rng.gen_range(0..layer_size(n))).unwrap()
        })
        .collect()
}

fn int(v: &Value) -> i64 {
    v.as_i64().unwrap_or_else(|| panic!("not an integer: {v}"))
}

/// Checks the shape and values of one JSON answer for `p` from our folder
/// (`envelope`) or a VU folder.
fn check_answer(v: &Value, p: &Position, dir: &Path, envelope: bool) {
    let obj = v
        .as_object()
        .unwrap_or_else(|| panic!("not an object: {v}"));
    for k in KEYS {
        assert!(obj.contains_key(k), "key {k} missing: {v}");
    }
    for k in obj.keys() {
        assert!(
            KEYS.contains(&k.as_str()) || EXTRA_KEYS.contains(&k.as_str()),
            "unexpected key {k}: {v}"
        );
    }
    // A VU folder names no rule set: awari's is assumed, and said to be.
    assert_eq!(v["rules"], "awari", "{v}");
    assert_eq!(
        v.get("rules_assumed"),
        (!envelope).then_some(&Value::Bool(true)),
        "{v}"
    );
    // The implementation's extra keys are always printed: the board too.
    let pits: Vec<u8> = obj
        .get("pits")
        .and_then(Value::as_array)
        .unwrap_or_else(|| panic!("no pits array: {v}"))
        .iter()
        .map(|x| int(x) as u8)
        .collect();
    assert_eq!(pits, p.0);
    assert_eq!(int(&v["seeds"]), p.seeds() as i64);
    assert_eq!(int(&v["index"]) as u64, index::rank(p));
    let score = int(&v["score"]);
    assert_eq!(score, file_score(dir, p), "{p}");
    if envelope {
        let (lo, hi) = (int(&v["lower"]), int(&v["upper"]));
        assert!(lo <= score && score <= hi, "{v}");
        assert_eq!(v["pinned"].as_bool(), Some(lo == hi), "{v}");
    } else {
        for k in ["lower", "upper", "pinned"] {
            assert!(v[k].is_null(), "{k} must be null without the envelope: {v}");
        }
    }
    let moves = v["moves"].as_array().expect("moves array");
    assert_eq!(moves.len(), 6, "{v}");
    let mut best_worth = None;
    for (i, m) in moves.iter().enumerate() {
        let mo = m.as_object().unwrap();
        for k in ["pit", "legal", "captures", "score"] {
            assert!(mo.contains_key(k), "move key {k} missing: {m}");
        }
        assert_eq!(int(&m["pit"]), i as i64);
        let legal = m["legal"].as_bool().expect("legal is a bool");
        let captures = int(&m["captures"]);
        assert!((0..=p.seeds() as i64).contains(&captures));
        if legal {
            assert!(p.0[i] > 0, "{p}: empty pit {i} legal");
            let w = int(&m["score"]);
            best_worth = best_worth.max(Some(w));
        } else {
            assert!(m["score"].is_null(), "illegal move has no score: {m}");
        }
    }
    let best: Vec<i64> = v["best"]
        .as_array()
        .expect("best array")
        .iter()
        .map(int)
        .collect();
    match best_worth {
        Some(w) => {
            assert_eq!(w, score, "{p}: the best move is worth the score");
            let argmax: Vec<i64> = moves
                .iter()
                .filter(|m| m["score"].as_i64() == Some(w))
                .map(|m| int(&m["pit"]))
                .collect();
            assert_eq!(best, argmax, "{v}");
        }
        None => assert!(best.is_empty(), "{v}"),
    }
}

// ---------------------------------------------------------------------------

#[test]
fn text_output_shows_board_score_and_best() {
    let p = Position::indexable([1, 1, 1, 1, 1, 2, 0, 2, 3, 0, 0, 0]).unwrap();
    let db = db_arg();
    let mut args = vec!["--db", db.as_str()];
    let b = board_args(&p);
    args.extend(b.iter().map(String::as_str));
    let out = ok(&args, None);
    // The diagram rows: the mover's pits 0..5 and the opponent's 11..6.
    let mover_row = "  1  1  1  1  1  2";
    let opp_row = "  0  0  0  3  2  0";
    assert!(out.contains(mover_row) && out.contains(opp_row), "{out}");
    let score = file_score(db_dir(), &p);
    assert!(out.contains(&format!("score {score:+}")), "{out}");
    assert!(out.contains(&format!("index {}", index::rank(&p))), "{out}");
    let best = query_json(&db, &p, &[])["best"].clone();
    let best: Vec<String> = best
        .as_array()
        .unwrap()
        .iter()
        .map(|b| ((b'A' + b.as_u64().unwrap() as u8) as char).to_string())
        .collect();
    assert!(out.contains(&format!("best: {}", best.join(", "))), "{out}");
    assert!(out.contains("envelope"), "{out}");
    // With --pv the line is printed too.
    args.extend(["--pv", "3"]);
    let out = ok(&args, None);
    assert!(out.contains("principal variation"), "{out}");
}

#[test]
fn json_has_the_issue_keys_with_the_right_types_and_values() {
    let db = db_arg();
    let mut positions = random_positions(7, 60);
    positions.push(Position([0; 12]));
    positions.push(Position::indexable([0, 0, 0, 0, 0, 0, 0, 3, 0, 0, 0, 1]).unwrap());
    for p in &positions {
        let v = query_json(&db, p, &[]);
        check_answer(&v, p, db_dir(), true);
        assert!(v["pv"].is_null(), "no pv without --pv: {v}");
    }
    // Game over: no legal move, no best move, score -n.
    let over = Position::indexable([0, 0, 0, 0, 0, 0, 0, 3, 0, 0, 0, 1]).unwrap();
    let v = query_json(&db, &over, &[]);
    assert_eq!(int(&v["score"]), -4);
    assert!(v["best"].as_array().unwrap().is_empty());
}

#[test]
fn pv_is_at_most_n_steps() {
    let db = db_arg();
    let mut saw_full = false;
    // How the lines end, and how many stop before their limit.
    let mut ends = std::collections::BTreeMap::<String, usize>::new();
    let mut short = 0;
    for p in random_positions(8, 25) {
        for n in [0usize, 1, 5] {
            let v = query_json(&db, &p, &["--pv", &n.to_string()]);
            check_answer(&v, &p, db_dir(), true);
            let pv = v["pv"]
                .as_array()
                .unwrap_or_else(|| panic!("pv array: {v}"));
            assert!(pv.len() <= n, "{} steps > {n}: {v}", pv.len());
            saw_full |= n == 5 && pv.len() == 5;
            // Each step is a legal move of the position before it, with
            // that move's captures, and leads to the next step's position.
            let mut at = p;
            let mut seen = vec![];
            for s in pv {
                let pits: Vec<u8> = s["pits"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|x| int(x) as u8)
                    .collect();
                let pos = Position::indexable(pits.try_into().unwrap()).unwrap();
                assert_eq!(pos, at, "{v}");
                assert_eq!(int(&s["score"]), file_score(db_dir(), &pos), "{v}");
                let pit = int(&s["pit"]);
                assert!((0..6).contains(&pit));
                let m = *pos
                    .moves(&AWARI)
                    .from_pit(pit as usize)
                    .unwrap_or_else(|| panic!("pit {pit} of [{pos}] is empty: {v}"));
                assert!(m.legal, "pit {pit} of [{pos}] is illegal: {v}");
                let captures = int(&s["captures"]);
                assert_eq!(captures, m.captured as i64, "{v}");
                assert_eq!(m.child.seeds() as i64, pos.seeds() as i64 - captures, "{v}");
                seen.push(pos);
                at = m.child;
            }
            // The line says why it stops, and that is why it stops: the game
            // is over, a position repeats, or else the limit is reached.
            let end = v["pv_end"]
                .as_str()
                .unwrap_or_else(|| panic!("pv_end string: {v}"));
            let want = if at.mover_seeds() == 0 {
                "game_over"
            } else if seen.contains(&at) {
                "repetition"
            } else {
                assert_eq!(pv.len(), n, "a line stopped early without a reason: {v}");
                "limit"
            };
            assert_eq!(end, want, "{v}");
            if pv.len() < n {
                assert_ne!(end, "limit", "{v}");
                short += 1;
            }
            *ends.entry(end.to_string()).or_default() += 1;
        }
    }
    assert!(saw_full, "some line has 5 moves");
    eprintln!("principal variations: ends {ends:?}, {short} before their limit");
    assert!(short > 0, "no line ended before its limit: {ends:?}");
    assert!(ends.contains_key("limit"), "{ends:?}");
    assert!(ends.contains_key("game_over"), "{ends:?}");
}

#[test]
fn stdin_answers_good_lines_and_reports_bad_ones_by_line_number() {
    let db = db_arg();
    let good = random_positions(9, 30);
    let mut input = String::new();
    for (i, p) in good.iter().enumerate() {
        // Spaces, commas and blank lines are all accepted.
        let line = if i % 2 == 0 {
            p.to_string()
        } else {
            board_args(p).join(",")
        };
        input.push_str(&line);
        input.push('\n');
        if i == 3 {
            input.push('\n');
        }
    }
    // All good: one JSON line per board, in order, exit 0.
    let out = run(&["--db", &db, "--stdin", "--json"], None, Some(&input));
    assert!(out.status.success(), "{}", text(&out.stderr));
    let lines: Vec<Value> = text(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), good.len());
    for (v, p) in lines.iter().zip(&good) {
        check_answer(v, p, db_dir(), true);
    }

    // Bad lines among good ones: line numbers count every input line.
    let mut input = String::new();
    let mut bad_lines = Vec::new();
    let mut want = Vec::new();
    for (i, p) in good.iter().take(8).enumerate() {
        match i {
            2 => {
                input.push_str("1 2 3\n");
                bad_lines.push(input.lines().count());
            }
            5 => {
                input.push_str("47 0 0 0 0 0 0 0 0 0 0 0\n");
                bad_lines.push(input.lines().count());
            }
            6 => {
                // Layer 13 is not in the folder.
                input.push_str("13 0 0 0 0 0 0 0 0 0 0 0\n");
                bad_lines.push(input.lines().count());
            }
            _ => {}
        }
        input.push_str(&format!("{p}\n"));
        want.push(*p);
    }
    for json in [true, false] {
        let mut args = vec!["--db", db.as_str(), "--stdin"];
        if json {
            args.push("--json");
        }
        let out = run(&args, None, Some(&input));
        let stderr = text(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "stderr: {stderr}");
        for l in &bad_lines {
            assert!(
                stderr.contains(&format!("line {l}:")),
                "line {l} not reported: {stderr}"
            );
        }
        assert!(stderr.lines().all(|l| l.starts_with("awari: ")), "{stderr}");
        assert!(stderr.contains("awari build --max-seeds 13"), "{stderr}");
        let stdout = text(&out.stdout);
        let answered: Vec<&str> = stdout.lines().collect();
        assert_eq!(
            answered.len(),
            want.len(),
            "every good line answered: {stdout}"
        );
        for (l, p) in answered.iter().zip(&want) {
            if json {
                check_answer(&serde_json::from_str(l).unwrap(), p, db_dir(), true);
            } else {
                assert!(l.starts_with(&p.to_string()), "{l}");
                assert!(
                    l.contains(&format!("score {:+}", file_score(db_dir(), p))),
                    "{l}"
                );
            }
        }
    }
}

#[test]
fn awari_path_is_used_without_db() {
    let p = random_positions(10, 1)[0];
    let b = board_args(&p);
    let mut args: Vec<&str> = b.iter().map(String::as_str).collect();
    args.push("--json");
    // Our folder through AWARI_PATH.
    let v: Value = serde_json::from_str(ok(&args, Some(db_dir())).trim()).unwrap();
    check_answer(&v, &p, db_dir(), true);
    // A VU folder through AWARI_PATH: no envelope.
    let vu = vu_copy("awari-query-vu-");
    let v: Value = serde_json::from_str(ok(&args, Some(&vu)).trim()).unwrap();
    check_answer(&v, &p, &vu, false);
    // --db wins over AWARI_PATH.
    let bogus = scratch("awari-query-bogus-").join("none");
    let db = db_arg();
    let mut with_db = vec!["--db", db.as_str()];
    with_db.extend(&args);
    let v: Value = serde_json::from_str(ok(&with_db, Some(&bogus)).trim()).unwrap();
    check_answer(&v, &p, db_dir(), true);
    // AWARI_PATH naming nothing: a clean error naming it.
    let line = usage_error(&args, Some(&bogus));
    assert!(line.contains("none"), "{line}");
}

#[test]
fn malformed_boards_are_one_line_errors() {
    let db = db_arg();
    let boards: [&[&str]; 9] = [
        &["1", "1", "1"],
        &["1"; 13],
        &["1", "1", "1", "1", "1", "x", "0", "0", "0", "0", "0", "0"],
        &["1", "1", "1", "1", "1", "-1", "0", "0", "0", "0", "0", "0"],
        &["49", "0", "0", "0", "0", "0", "0", "0", "0", "0", "0", "0"],
        &[
            "20", "20", "20", "0", "0", "0", "0", "0", "0", "0", "0", "0",
        ],
        // 47 seeds: no such layer (a full opponent row, as "1" x 12, is
        // answered from its moves).
        &["47", "0", "0", "0", "0", "0", "0", "0", "0", "0", "0", "0"],
        &["4"; 12],
        &["1.5", "1", "1", "1", "1", "1", "0", "0", "0", "0", "0", "0"],
    ];
    for b in boards {
        let mut args = vec!["--db", db.as_str()];
        args.extend_from_slice(b);
        usage_error(&args, None);
        args.push("--json");
        usage_error(&args, None);
    }
    // No board at all is refused too.
    usage_error(&["--db", &db], None);
}

#[test]
fn missing_layer_names_it_and_how_to_build_it() {
    let db = db_arg();
    for dir in [
        db.clone(),
        vu_copy("awari-query-vu13-").to_str().unwrap().to_string(),
    ] {
        let line = usage_error(
            &[
                "--db", &dir, "13", "0", "0", "0", "0", "0", "0", "0", "0", "0", "0", "0",
            ],
            None,
        );
        assert!(line.contains("layer 13"), "{line}");
        assert!(line.contains("awari build --max-seeds 13"), "{line}");
    }
    // An absent folder or an empty one: a clean one-line error.
    let base = scratch("awari-query-nodb-");
    let empty = base.join("empty");
    std::fs::create_dir(&empty).unwrap();
    for dir in [base.join("absent"), empty] {
        let d = dir.to_str().unwrap();
        usage_error(
            &[
                "--db", d, "1", "0", "0", "0", "0", "0", "0", "0", "0", "0", "0", "0",
            ],
            None,
        );
    }
}

#[test]
fn corrupt_tables_are_clean_errors() {
    let p5 = Position::indexable([2, 0, 1, 0, 0, 0, 0, 0, 2, 0, 0, 0]).unwrap();
    let b = board_args(&p5);
    for (kind, vu) in [
        ("truncated", false),
        ("truncated", true),
        ("flipped", false),
    ] {
        let dir = if vu {
            vu_copy("awari-query-corrupt-vu-")
        } else {
            full_copy("awari-query-corrupt-")
        };
        let path = dir.join("scores.5");
        if kind == "truncated" {
            std::fs::OpenOptions::new()
                .write(true)
                .open(&path)
                .unwrap()
                .set_len(1000)
                .unwrap();
        } else {
            let mut bytes = std::fs::read(&path).unwrap();
            bytes[10] ^= 1;
            std::fs::write(&path, bytes).unwrap();
        }
        let d = dir.to_str().unwrap();
        let mut args = vec!["--db", d];
        args.extend(b.iter().map(String::as_str));
        let mut verified = vec!["--verify"];
        verified.extend(args.iter().copied());
        // A damaged table is a failed check: status 1.
        if kind == "truncated" {
            let line = failure(&args, None, 1);
            assert!(line.contains("scores.5"), "{kind}: {line}");
            assert!(line.contains("1000") && line.contains("4368"), "{line}");
        } else {
            // A lookup reads only the bytes it needs; --verify reads the
            // tables whole and finds the change.
            let out = run(&args, None, None);
            assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
            let line = failure(&verified, None, 1);
            assert!(
                line.contains("scores.5") && line.contains("checksum"),
                "{line}"
            );
        }
        // With --stdin the other lines are still answered.
        let p4 = Position::indexable([2, 0, 1, 0, 0, 0, 0, 0, 1, 0, 0, 0]).unwrap();
        let input = format!("{p4}\n{p5}\n{p4}\n");
        let out = run(
            &["--db", d, "--stdin", "--json", "--verify"],
            None,
            Some(&input),
        );
        assert_eq!(out.status.code(), Some(1));
        let stderr = text(&out.stderr);
        assert!(
            stderr.contains("line 2:") && stderr.contains("scores.5"),
            "{stderr}"
        );
        assert_eq!(text(&out.stdout).lines().count(), 2);
    }
}

#[test]
fn stdin_skips_comment_lines_and_trailing_comments() {
    let db = db_arg();
    let ps = random_positions(17, 3);
    let input = format!(
        "# positions to look up\n{}\n   # indented comment\n{}  # the second\n\n{}\n",
        ps[0],
        board_args(&ps[1]).join(","),
        ps[2]
    );
    let out = run(&["--db", &db, "--stdin", "--json"], None, Some(&input));
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let lines: Vec<Value> = text(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 3);
    for (v, p) in lines.iter().zip(&ps) {
        let pits: Vec<u8> = serde_json::from_value(v["pits"].clone()).unwrap();
        assert_eq!(&pits[..], &p.0[..]);
    }
}

#[test]
fn pv_text_says_whose_scores_it_shows() {
    let p = Position::indexable([1, 1, 1, 1, 1, 2, 2, 2, 1, 0, 0, 0]).unwrap();
    let mut args = vec!["--db".to_string(), db_arg(), "--pv".into(), "4".into()];
    args.extend(board_args(&p));
    let a: Vec<&str> = args.iter().map(String::as_str).collect();
    let out = ok(&a, None);
    assert!(
        out.contains("each score is for the side to move in that row's position"),
        "{out}"
    );
}
