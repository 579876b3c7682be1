//! `awari serve`, the API: every answer is the one `awari query --json`
//! prints or the library gives, every folder kind is served, bad input is
//! a JSON 4xx, and SIGTERM stops the server cleanly.

mod common;

use awari_egdb::probe::Database;
use awari_egdb::rules::Position;
use common::boards::random_indexable;
use common::server::{get, pits, post, request, Server};
use common::{db_dir, ok, s, MAX};
use rand::{rngs::StdRng, Rng, SeedableRng};
use serde_json::{json, Value};
use std::time::Duration;

/// Random boards of layers `0..=max` with a Goedel number (47 never).
fn boards(count: usize, max: u32, seed: u64) -> Vec<Position> {
    let mut rng = StdRng::seed_from_u64(seed);
    (0..count)
        .map(|_| {
            let n = rng.gen_range(0..=max);
            random_indexable(&mut rng, n, false)
        })
        .collect()
}

#[test]
fn a_position_is_answered_as_awari_query_json_prints_it() {
    let dir = db_dir();
    let server = Server::start(dir, &[]);
    let (status, health) = get(&server.addr, "/api/v1/health");
    assert_eq!(status, 200);
    assert_eq!(health["status"], "ok");
    assert_eq!(health["rules"], "awari");
    assert_eq!(health["layers"], json!((0..=MAX).collect::<Vec<_>>()));
    for (i, p) in boards(40, MAX, 1).iter().enumerate() {
        let pv = (i % 3 == 0).then_some(i % 7);
        let mut path = format!("/api/v1/position?pits={}", pits(&p.0));
        let mut args = vec![
            "query".to_string(),
            "--db".into(),
            s(dir).into(),
            "--json".into(),
        ];
        if let Some(n) = pv {
            path += &format!("&pv={n}");
            args.extend(["--pv".into(), n.to_string()]);
        }
        args.extend(p.0.iter().map(u8::to_string));
        let (status, served) = get(&server.addr, &path);
        assert_eq!(status, 200, "{path}: {served}");
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let printed: Value = serde_json::from_str(&ok(&args)).expect("query JSON");
        assert_eq!(served, printed, "{path}");
        let labels: Vec<&str> = served["moves"]
            .as_array()
            .unwrap()
            .iter()
            .map(|m| m["label"].as_str().unwrap())
            .collect();
        assert_eq!(labels, ["A", "B", "C", "D", "E", "F"]);
    }
}

/// A board without a Goedel number (every opponent pit holds seeds, as at
/// the opening) is answered from its moves: its score is the best worth of
/// its moves, each the captures less the child's score (or plus the seeds
/// left when the opponent is left without any), and its envelope holds it.
#[test]
fn a_board_without_a_goedel_number_is_answered_from_its_moves() {
    let dir = db_dir();
    let db = Database::open(dir).unwrap();
    let rules = *db.rules();
    let server = Server::start(dir, &[]);
    let mut rng = StdRng::seed_from_u64(5);
    let mut seen = 0;
    while seen < 40 {
        let n = rng.gen_range(6..=MAX);
        let b = common::boards::random_board(&mut rng, n);
        let p = Position(b);
        if p.is_indexable() {
            continue;
        }
        seen += 1;
        let (status, v) = get(
            &server.addr,
            &format!("/api/v1/position?pits={}&pv=3", pits(&b)),
        );
        assert_eq!(status, 200, "{p}: {v}");
        assert_eq!(v["index"], Value::Null);
        let worths: Vec<i64> = p
            .moves(&rules)
            .legal()
            .map(|m| {
                let left = (n - m.captured as u32) as i64;
                let child = if m.child.mover_seeds() == 0 {
                    -left
                } else {
                    db.score(&m.child).unwrap() as i64
                };
                m.captured as i64 - child
            })
            .collect();
        let want = worths
            .iter()
            .max()
            .copied()
            .unwrap_or(p.final_score(&rules) as i64);
        assert_eq!(v["score"].as_i64(), Some(want), "{p}: {v}");
        let (lo, hi) = (v["lower"].as_i64().unwrap(), v["upper"].as_i64().unwrap());
        assert!(lo <= want && want <= hi, "{p}: {v}");
        // The batch answers it the same (one behaviour everywhere).
        let body = json!({ "boards": [b] }).to_string();
        let (status, batch) = post(&server.addr, "/api/v1/positions", body.as_bytes());
        assert_eq!(status, 200, "{p}: {batch}");
        assert_eq!(batch["scores"][0].as_i64(), Some(want), "{p}: {batch}");
        if !worths.is_empty() {
            assert_eq!(v["pv"][0]["score"].as_i64(), Some(want), "{p}: {v}");
            let pit = v["pv"][0]["pit"].as_u64().unwrap() as usize;
            assert_eq!(v["moves"][pit]["score"].as_i64(), Some(want), "{p}: {v}");
        }
    }
}

#[test]
fn a_batch_gets_the_scores_of_the_library() {
    let dir = db_dir();
    let db = Database::open(dir).unwrap();
    let server = Server::start(dir, &[]);
    let ps = boards(10_000, MAX, 2);
    let body = json!({ "boards": ps.iter().map(|p| p.0.to_vec()).collect::<Vec<_>>() });
    let (status, v) = post(
        &server.addr,
        "/api/v1/positions",
        body.to_string().as_bytes(),
    );
    assert_eq!(status, 200, "{v}");
    assert_eq!(v["rules"], "awari");
    let scores = v["scores"].as_array().expect("scores");
    assert_eq!(scores.len(), ps.len());
    for (p, got) in ps.iter().zip(scores) {
        assert_eq!(got.as_i64(), Some(db.score(p).unwrap() as i64), "{p}");
    }
    let more = json!({ "boards": vec![[0u8; 12]; 10_001] });
    let (status, v) = post(
        &server.addr,
        "/api/v1/positions",
        more.to_string().as_bytes(),
    );
    assert_eq!(
        (status, v["kind"].as_str()),
        (413, Some("too_large")),
        "{v}"
    );
}

/// `(path, status, kind)`: what each bad request gets.
const BAD_QUERIES: &[(&str, u16, &str)] = &[
    ("/api/v1/position", 400, "bad_input"),
    ("/api/v1/position?pits=1,2,3", 400, "bad_input"),
    (
        "/api/v1/position?pits=1,1,1,1,1,2,4,2,3,0,0,0,0",
        400,
        "bad_input",
    ),
    (
        "/api/v1/position?pits=-1,1,1,1,1,2,4,2,3,0,0,0",
        400,
        "bad_input",
    ),
    (
        "/api/v1/position?pits=x,1,1,1,1,2,4,2,3,0,0,0",
        400,
        "bad_input",
    ),
    (
        "/api/v1/position?pits=1.5,1,1,1,1,2,4,2,3,0,0,0",
        400,
        "bad_input",
    ),
    ("/api/v1/position?pits=,,,,,,,,,,,", 400, "bad_input"),
    (
        "/api/v1/position?pits=49,0,0,0,0,0,0,0,0,0,0,0",
        400,
        "bad_input",
    ),
    (
        "/api/v1/position?pits=9,9,9,9,9,9,0,0,0,0,0,0",
        400,
        "bad_input",
    ),
    (
        "/api/v1/position?pits=4,4,4,4,4,4,4,4,4,4,4,4",
        404,
        "not_built",
    ),
    (
        "/api/v1/position?pits=47,0,0,0,0,0,0,0,0,0,0,0",
        400,
        "bad_input",
    ),
    (
        "/api/v1/position?pits=1,0,0,0,0,0,0,0,0,0,0,0&pv=x",
        400,
        "bad_input",
    ),
    (
        "/api/v1/position?pits=1,0,0,0,0,0,0,0,0,0,0,0&pv=1001",
        400,
        "bad_input",
    ),
    (
        "/api/v1/position?pits=1,0,0,0,0,0,0,0,0,0,0,0&pits=1",
        400,
        "bad_input",
    ),
    (
        "/api/v1/position?pits=1,0,0,0,0,0,0,0,0,0,0,0&color=red",
        400,
        "bad_input",
    ),
    ("/api/v1/position?pits=%ZZ", 400, "bad_input"),
    ("/api/v1/rules?x=1", 400, "bad_input"),
    (
        "/api/v1/position?pits=13,0,0,0,0,0,0,0,0,0,0,0",
        404,
        "not_built",
    ),
    ("/api/v2/position", 404, "not_found"),
    ("/scores.12", 404, "not_found"),
    ("/api/v1/../../etc/passwd", 404, "not_found"),
];

#[test]
fn bad_input_is_a_json_error_with_its_status() {
    let dir = db_dir();
    let server = Server::start(dir, &[]);
    let a = &server.addr;
    for &(path, status, kind) in BAD_QUERIES {
        let (got, v) = get(a, path);
        assert_eq!(
            (got, v["kind"].as_str()),
            (status, Some(kind)),
            "{path}: {v}"
        );
        let message = v["error"].as_str().unwrap_or_default();
        assert!(
            !message.is_empty() && !message.contains(s(dir)),
            "{path}: {v}"
        );
    }
    let bodies: &[(&[u8], u16, &str)] = &[
        (b"", 400, "bad_input"),
        (b"not json", 400, "bad_input"),
        (b"[[1,0,0,0,0,0,0,0,0,0,0,0]]", 400, "bad_input"),
        (
            br#"{"boards": [[1,0,0,0,0,0,0,0,0,0,0,0], [1,0]]}"#,
            400,
            "bad_input",
        ),
        (
            br#"{"boards": [[-1,0,0,0,0,0,0,0,0,0,0,0]]}"#,
            400,
            "bad_input",
        ),
        (
            br#"{"boards": ["1,0,0,0,0,0,0,0,0,0,0,0"]}"#,
            400,
            "bad_input",
        ),
        (
            br#"{"boards": [[13,0,0,0,0,0,0,0,0,0,0,0]]}"#,
            404,
            "not_built",
        ),
    ];
    for &(body, status, kind) in bodies {
        let (got, v) = post(a, "/api/v1/positions", body);
        assert_eq!(
            (got, v["kind"].as_str()),
            (status, Some(kind)),
            "{}: {v}",
            String::from_utf8_lossy(body)
        );
    }
    let (got, v) = post(a, "/api/v1/position", b"{}");
    assert_eq!((got, v["kind"].as_str()), (405, Some("method")));
    let big = vec![b' '; (1 << 20) + 1];
    let (got, v) = post(a, "/api/v1/positions", &big);
    assert_eq!((got, v["kind"].as_str()), (413, Some("too_large")), "{v}");
    let header = format!(
        "GET /api/v1/health HTTP/1.1\r\nHost: x\r\nX-Big: {}\r\nConnection: close\r\n\r\n",
        "a".repeat(20_000)
    );
    assert_eq!(request(a, header.as_bytes()).0, 431);
    for garbage in [
        &b"HELLO\r\n\r\n"[..],
        b"GET / HTTP/9.9\r\n\r\n",
        b"\x00\x01\x02\r\n\r\n",
    ] {
        let (got, _) = request(a, garbage);
        assert_eq!(got, 400, "{}", String::from_utf8_lossy(garbage));
    }
    assert_eq!(get(a, "/api/v1/health").0, 200, "the server goes on");
    let err = server.stop();
    assert!(!err.contains("panicked"), "{err}");
}

#[test]
fn every_kind_of_folder_is_served() {
    let raw = db_dir();
    let db = Database::open(raw).unwrap();
    let vu = common::vu_copy("awari-serve-vu-");
    let packed = common::full_copy("awari-serve-packed-");
    ok(&[
        "compress",
        "--db",
        s(&packed),
        "--format",
        "4",
        "--remove-raw",
        "-q",
    ]);
    let scores_only = common::full_copy("awari-serve-scores-only-");
    ok(&[
        "compress",
        "--db",
        s(&scores_only),
        "--format",
        "4",
        "--scores-only",
        "--remove-raw",
        "-q",
    ]);
    for f in std::fs::read_dir(&scores_only).unwrap() {
        let p = f.unwrap().path();
        let name = p.file_name().unwrap().to_string_lossy().into_owned();
        if !name.starts_with("scores.") {
            std::fs::remove_file(&p).unwrap();
        }
    }
    for dir in [&vu, &packed, &scores_only] {
        let server = Server::start(dir, &[]);
        let (status, layers) = get(&server.addr, "/api/v1/layers");
        assert_eq!(status, 200, "{}: {layers}", dir.display());
        assert_eq!(
            layers["layers"].as_array().map(Vec::len),
            Some(MAX as usize + 1)
        );
        for p in boards(30, MAX, 3) {
            let (status, v) = get(
                &server.addr,
                &format!("/api/v1/position?pits={}", pits(&p.0)),
            );
            assert_eq!(status, 200, "{}: {v}", dir.display());
            assert_eq!(v["score"].as_i64(), Some(db.score(&p).unwrap() as i64));
        }
    }
}

#[test]
fn layers_carry_the_figures_of_awari_stats() {
    let dir = db_dir();
    let server = Server::start(dir, &[]);
    let (status, v) = get(&server.addr, "/api/v1/layers");
    assert_eq!(status, 200);
    let stats: Value = serde_json::from_str(&ok(&["stats", "--db", s(dir), "--json"])).unwrap();
    assert_eq!(v["layers"], stats["layers"]);
    let (status, rules) = get(&server.addr, "/api/v1/rules");
    assert_eq!(status, 200);
    let printed: Value = serde_json::from_str(&ok(&["rules", "awari", "--json"])).unwrap();
    assert_eq!(rules, printed);
}

#[test]
fn a_folder_of_another_rule_set_is_served_by_its_rules() {
    let dir = common::scratch("awari-serve-abapa-");
    ok(&[
        "build",
        "--rules",
        "abapa",
        "--max-seeds",
        "8",
        "--db",
        s(&dir),
        "-q",
    ]);
    let server = Server::start(&dir, &[]);
    let db = Database::open(&dir).unwrap();
    for p in boards(20, 8, 4) {
        let (status, v) = get(
            &server.addr,
            &format!("/api/v1/position?pits={}", pits(&p.0)),
        );
        assert_eq!(status, 200, "{v}");
        assert_eq!(v["rules"], "abapa");
        assert_eq!(v["score"].as_i64(), Some(db.score(&p).unwrap() as i64));
    }
}

#[test]
fn sigterm_stops_the_server_cleanly_and_the_log_has_a_line_per_request() {
    let server = Server::start(db_dir(), &["--log"]);
    for _ in 0..3 {
        assert_eq!(get(&server.addr, "/api/v1/health").0, 200);
    }
    let (status, err) = server.terminate(Duration::from_secs(10));
    let status = status.expect("the server stops within 10 s of SIGTERM");
    assert!(status.success(), "{status:?}: {err}");
    let lines: Vec<&str> = err
        .lines()
        .filter(|l| l.contains("/api/v1/health"))
        .collect();
    assert_eq!(lines.len(), 3, "{err}");
    assert!(lines.iter().all(|l| l.contains(" 200 ")), "{err}");
}

#[test]
fn a_bad_listen_address_or_timeout_is_a_usage_error() {
    for args in [
        &["serve", "--listen", "nowhere"][..],
        &["serve", "--listen", "127.0.0.1:99999"],
        &["serve", "--timeout", "0"],
        &["serve", "--threads", "0"],
    ] {
        let dir = db_dir();
        let mut all = args.to_vec();
        all.extend(["--db", s(dir)]);
        common::usage_error(&all);
    }
}

/// A batch may ask for "not available" per board: `allow_missing` gives
/// `null` for a board of a layer not built, the library's scores for the
/// rest; without it the batch fails whole (404).
#[test]
fn a_batch_can_allow_missing_layers() {
    let db = Database::open(db_dir()).unwrap();
    let server = Server::start(db_dir(), &[]);
    let mut bs: Vec<[u8; 12]> = boards(10, MAX, 9).iter().map(|p| p.0).collect();
    bs[4] = [MAX as u8 + 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0];
    let body = json!({ "boards": bs, "allow_missing": true }).to_string();
    let (status, v) = post(&server.addr, "/api/v1/positions", body.as_bytes());
    assert_eq!(status, 200, "{v}");
    for (i, b) in bs.iter().enumerate() {
        let got = &v["scores"][i];
        if i == 4 {
            assert!(got.is_null(), "{v}");
        } else {
            assert_eq!(
                got.as_i64(),
                Some(db.score(&Position(*b)).unwrap() as i64),
                "{v}"
            );
        }
    }
    let body = json!({ "boards": bs }).to_string();
    assert_eq!(
        post(&server.addr, "/api/v1/positions", body.as_bytes()).0,
        404
    );
    let body = json!({ "boards": bs, "allow_missing": "yes" }).to_string();
    assert_eq!(
        post(&server.addr, "/api/v1/positions", body.as_bytes()).0,
        400
    );
}
