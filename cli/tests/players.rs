//! What a newcomer tripped on as a player, one test each, across the front
//! ends of this binary (Python's and C's are in their own suites): North's
//! moves labelled `a`..`f` everywhere the position says North moves, a
//! bad pit named in the same words everywhere, the batch route refusing
//! unknown keys and reading the notation, and a random position of the
//! smallest layers.

mod common;

use awari_egdb::game::{Board, Side};
use awari_egdb::probe::Database;
use awari_egdb::rules::Position;
use common::server::{get, post, Server};
use common::{db_dir, ok, s, usage_error};
use serde_json::Value;

/// A position with North to move, several of its pits legal.
const NORTH: &str = "1,0,2,0,0,3/0,1,2,1,0,1/N/19,18";

/// The labels of an answer's moves.
fn labels(v: &Value) -> Vec<String> {
    v["moves"]
        .as_array()
        .unwrap_or_else(|| panic!("no moves in {v}"))
        .iter()
        .map(|m| m["label"].as_str().expect("a label").to_string())
        .collect()
}

/// `query` (text and `--json`) and `/api/v1/position?pos=` label North's
/// moves `a`..`f`, as `play` and the page do; twelve pits (the mover's
/// view, no side) stay `A`..`F`.
#[test]
fn north_s_moves_are_labelled_alike_in_every_front_end() {
    let db = db_dir();
    let b = Board::from_notation(NORTH).unwrap();
    assert_eq!(b.to_move, Side::North);
    let north: Vec<String> = "abcdef".chars().map(String::from).collect();

    let text = ok(&["query", "--db", s(db), "--pos", NORTH]);
    let rows: Vec<&str> = text
        .lines()
        .skip_while(|l| !l.starts_with("pit  seeds"))
        .skip(1)
        .take(6)
        .collect();
    let shown: Vec<String> = rows
        .iter()
        .map(|r| r.split_whitespace().next().unwrap().to_string())
        .collect();
    assert_eq!(shown, north, "query's text:\n{text}");
    let best = text.lines().find(|l| l.starts_with("best: ")).unwrap();
    assert!(
        best[6..]
            .split(", ")
            .all(|l| north.contains(&l.to_string())),
        "{best}"
    );

    let json: Value =
        serde_json::from_str(&ok(&["query", "--db", s(db), "--pos", NORTH, "--json"]))
            .expect("JSON");
    assert_eq!(labels(&json), north, "query --json: {json}");

    let server = Server::start(db, &[]);
    let (status, v) = get(&server.addr, &format!("/api/v1/position?pos={NORTH}"));
    assert_eq!(status, 200, "{v}");
    assert_eq!(labels(&v), north, "/api/v1/position?pos=: {v}");
    // The page's route agrees.
    let (status, g) = get(&server.addr, &format!("/api/v1/game?pos={NORTH}"));
    assert_eq!(status, 200, "{g}");
    let options: Vec<String> = g["options"]
        .as_array()
        .unwrap()
        .iter()
        .map(|o| o["label"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(options, north, "/api/v1/game: {g}");

    // The same board as twelve pits from its mover's side: A..F.
    let pits = b.position().0.map(|c| c.to_string());
    let (status, v) = get(
        &server.addr,
        &format!("/api/v1/position?pits={}", pits.join(",")),
    );
    assert_eq!(status, 200, "{v}");
    let south: Vec<String> = "ABCDEF".chars().map(String::from).collect();
    assert_eq!(labels(&v), south, "{v}");
    let mut args = vec!["query", "--db", s(db), "--json"];
    args.extend(pits.iter().map(String::as_str));
    let v: Value = serde_json::from_str(&ok(&args)).unwrap();
    assert_eq!(labels(&v), south, "{v}");
    server.stop();
}

/// A pit that cannot hold its count is named, in the library's words, by
/// the command line and the server alike; a total over 48 names none.
#[test]
fn a_bad_pit_is_named_in_one_set_of_words() {
    let db = db_dir();
    let server = Server::start(db, &[]);
    let cases: [(&[&str; 12], &str); 4] = [
        (
            &["49", "0", "0", "0", "0", "0", "0", "0", "0", "0", "0", "0"],
            "pit A: 49 seeds; the whole board holds at most 48",
        ),
        (
            &["0", "0", "0", "0", "0", "0", "0", "0", "300", "0", "0", "0"],
            "pit c: 300 seeds; the whole board holds at most 48",
        ),
        (
            &["0", "0", "0", "0", "0", "-1", "0", "0", "0", "0", "0", "0"],
            "pit F: '-1' is not a seed count (a whole number from 0 to 48)",
        ),
        (
            &[
                "10", "10", "10", "10", "10", "10", "0", "0", "0", "0", "0", "0",
            ],
            "60 seeds on the board; awari has at most 48",
        ),
    ];
    for (pits, said) in cases {
        let mut args = vec!["query", "--db", s(db)];
        args.extend_from_slice(pits);
        let err = usage_error(&args);
        assert!(err.contains(said), "query {pits:?}: {err}");
        let (status, v) = get(
            &server.addr,
            &format!("/api/v1/position?pits={}", pits.join(",")),
        );
        assert_eq!(status, 400, "{v}");
        assert_eq!(v["error"], said, "position {pits:?}: {v}");
        let body = format!("{{\"boards\": [[{}]]}}", pits.join(","));
        let (status, v) = post(&server.addr, "/api/v1/positions", body.as_bytes());
        assert_eq!(status, 400, "{v}");
        assert_eq!(
            v["error"],
            format!("board 0: {said}"),
            "batch {pits:?}: {v}"
        );
    }
    // The library says it so, for every caller of `Position::from_counts`.
    let e = Position::from_counts(&[0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 70]).unwrap_err();
    assert_eq!(
        e.to_string(),
        "pit f: 70 seeds; the whole board holds at most 48"
    );
    server.stop();
}

/// The batch takes the notation the README promises, scores a full row
/// from its moves, and refuses a key it does not know (a typo of
/// `allow_missing` is named, not ignored).
#[test]
fn the_batch_reads_the_notation_and_refuses_unknown_keys() {
    let dir = db_dir();
    let db = Database::open(dir).unwrap();
    let server = Server::start(dir, &[]);
    let north = Board::from_notation(NORTH).unwrap().position();
    let full = Position([1, 1, 0, 1, 1, 2, 1, 1, 1, 1, 1, 1]);
    let body = format!(
        "{{\"boards\": [\"{NORTH}\", {:?}, \"0,1,0,0,2,0/1,1,1,1,1,1/S/20,19\"]}}",
        full.0
    );
    let (status, v) = post(&server.addr, "/api/v1/positions", body.as_bytes());
    assert_eq!(status, 200, "{v}");
    let from_notation = Board::from_notation("0,1,0,0,2,0/1,1,1,1,1,1/S/20,19")
        .unwrap()
        .position();
    assert!(!full.is_indexable() && !from_notation.is_indexable());
    let want = [north, full, from_notation].map(|p| db.score(&p).unwrap());
    assert_eq!(v["scores"], serde_json::json!(want), "{v}");

    for (body, said) in [
        (
            r#"{"boards": [[0,0,0,0,0,1,0,0,0,0,0,0]], "allow_mising": true}"#,
            "unknown key 'allow_mising'",
        ),
        (
            r#"{"boards": [{"pits": 1}]}"#,
            "board 0: not a board (12 pit counts, or a position in the notation)",
        ),
        (
            r#"{"boards": ["1,0,0,0,0,3/0,0,2,0,0,0/X/20,22"]}"#,
            "board 0: '1,0,0,0,0,3/0,0,2,0,0,0/X/20,22' is not a position",
        ),
    ] {
        let (status, v) = post(&server.addr, "/api/v1/positions", body.as_bytes());
        assert_eq!(status, 400, "{body}: {v}");
        let error = v["error"].as_str().unwrap();
        assert!(error.starts_with(said), "{body}: {error}");
    }
    server.stop();
}

/// Layer 1 gives a random position to play from; layer 0 (only the empty
/// board, where the game is over) says so, not "no such position found in
/// 20000 tries".
#[test]
fn a_random_position_of_the_smallest_layers() {
    let dir = db_dir();
    let db = Database::open(dir).unwrap();
    let server = Server::start(dir, &[]);
    for _ in 0..20 {
        let (status, v) = get(&server.addr, "/api/v1/random?seeds=1");
        assert_eq!(status, 200, "{v}");
        let b = Board::from_notation(v["pos"].as_str().unwrap()).unwrap();
        let p = b.position();
        assert_eq!(p.seeds(), 1);
        assert!(p.moves(db.rules()).legal().next().is_some(), "{v}");
        assert_eq!(v["score"], db.score(&p).unwrap(), "{v}");
    }
    let (status, v) = get(&server.addr, "/api/v1/random?seeds=0");
    assert_eq!(status, 404, "{v}");
    assert_eq!(
        v["error"],
        "layer 0 has no position to play from: the game is over in every one of its 1 position"
    );
    // A filter is tried on the whole of a small layer: what it says
    // agrees with the layer's positions, counted here.
    let (status, v) = get(&server.addr, "/api/v1/random?seeds=1&result=drawn");
    let drawn = (0..awari_egdb::index::layer_size(1)).any(|g| {
        let p = awari_egdb::index::unrank(1, g).unwrap();
        p.moves(db.rules()).legal().next().is_some() && db.score(&p).unwrap() == 0
    });
    match drawn {
        true => assert_eq!(status, 200, "{v}"),
        false => {
            assert_eq!(status, 404, "{v}");
            assert_eq!(
                v["error"],
                "no position of layer 1 is one to play from and matches"
            );
        }
    }
    server.stop();
}
