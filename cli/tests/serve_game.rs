//! `awari serve`'s routes for the page, against the library: a game from
//! a notation and its moves (`/api/v1/game`) ends where [`Game::end`]
//! ends it, with [`Game::result`]'s words, and every move's worth and
//! pinned flag are [`Database::moves`]' and the child's envelope; a random
//! position (`/api/v1/random`) holds the result asked for; `pos=` names a
//! board on the single route; `/api/v1/health` names a deleted and a
//! truncated table; `--listen` takes a host name and a bare port; a body
//! not sent in time is a 408.

mod common;

use awari_egdb::game::{Board, Game, Side};
use awari_egdb::probe::Database;
use common::boards::random_indexable;
use common::server::{get, pits, request, Server};
use common::{db_dir, full_copy, s, MAX};
use rand::{rngs::StdRng, Rng, SeedableRng};
use serde_json::Value;
use std::io::{BufRead, BufReader};
use std::process::Stdio;
use std::time::{Duration, Instant};

/// The path of a game: its start and the moves played.
fn game_path(start: &str, moves: &str) -> String {
    format!("/api/v1/game?pos={start}&moves={moves}&pv=5")
}

/// Checks one answer of `/api/v1/game` against the library's game `g`.
fn check(db: &Database, g: &Game, v: &Value, what: &str) {
    let b = g.board();
    assert_eq!(v["pos"], b.notation(), "{what}: {v}");
    assert_eq!(v["captured"][0], b.captured[0], "{what}");
    assert_eq!(v["captured"][1], b.captured[1], "{what}");
    match g.end() {
        Some(_) => {
            assert_eq!(v["end"]["result"], g.result().unwrap(), "{what}: {v}");
            assert_eq!(v["options"].as_array().map(Vec::len), Some(0), "{what}");
        }
        None => {
            assert!(v["end"].is_null(), "{what}: {v}");
            let p = b.position();
            assert_eq!(v["score"], db.score(&p).unwrap(), "{what}: {v}");
            let moves = db.moves(&p).unwrap();
            for (m, o) in moves.iter().zip(v["options"].as_array().unwrap()) {
                assert_eq!(
                    o["label"],
                    b.to_move.label(m.pit as usize).to_string(),
                    "{what}"
                );
                assert_eq!(o["legal"], m.legal, "{what}: {o}");
                if !m.legal {
                    continue;
                }
                assert_eq!(o["worth"], m.score.unwrap(), "{what}: {o}");
                let child = m.child.unwrap();
                let pinned = if child.mover_seeds() == 0 {
                    Some(true)
                } else {
                    db.envelope(&child).unwrap().map(|e| e.pinned())
                };
                assert_eq!(o["pinned"], serde_json::json!(pinned), "{what}: {o}");
            }
        }
    }
}

/// "Play best" until the game ends: every step as the library's game has
/// it, and an end within 400 moves (a repetition, a side past half the
/// seeds, no move); a move after the end is refused.
#[test]
fn play_best_ends_where_the_rules_end_the_game() {
    let dir = db_dir();
    let db = Database::open(dir).unwrap();
    let server = Server::start(dir, &[]);
    let a = &server.addr;
    let mut rng = StdRng::seed_from_u64(46);
    let mut ends = std::collections::BTreeSet::new();
    // Random starts, and one where South has 24 and a capture wins.
    let mut starts: Vec<Board> = (0..12)
        .map(|_| {
            let n = rng.gen_range(4..=MAX);
            let mut b = Board::new(random_indexable(&mut rng, n, false).0, None).unwrap();
            if rng.gen_bool(0.5) {
                b.to_move = Side::North;
            }
            b
        })
        .collect();
    starts.push(Board::from_notation("0,0,0,0,0,1/1,0,0,0,0,1/S/24,21").unwrap());
    for start in starts {
        let mut g = Game::new(start, *db.rules());
        let mut moves = String::new();
        loop {
            let (status, v) = get(a, &game_path(&start.notation(), &moves));
            assert_eq!(status, 200, "{moves}: {v}");
            let what = format!("{} then {moves:?}", start.notation());
            check(&db, &g, &v, &what);
            if let Some(end) = g.end() {
                ends.insert(format!("{end:?}").chars().take(6).collect::<String>());
                let (side, pit) = (g.board().to_move, 0);
                let more = format!("{moves}{}", side.label(pit));
                let (status, v) = get(a, &game_path(&start.notation(), &more));
                assert_eq!(status, 400, "a move after the end: {v}");
                break;
            }
            assert!(moves.len() < 400, "{what}: no end");
            let best = v["best"][0].as_str().unwrap().to_string();
            g.play(&best).unwrap();
            moves += &best;
        }
    }
    assert!(ends.len() >= 2, "the games ended in several ways: {ends:?}");
    assert!(ends.iter().any(|e| e.starts_with("Won")), "{ends:?}");
}

/// Above the built layers the moves are listed without their worth, and
/// the answer says why in words, naming the largest layer.
#[test]
fn a_board_above_the_built_layers_lists_its_moves_and_says_why() {
    let server = Server::start(db_dir(), &[]);
    let (status, v) = get(
        &server.addr,
        &game_path("4,4,4,4,4,4/4,4,4,4,4,4/S/0,0", ""),
    );
    assert_eq!(status, 200, "{v}");
    let why = v["unknown"].as_str().unwrap();
    assert!(
        why.contains("opening") && why.contains(&format!("up to {MAX} seeds")),
        "{why}"
    );
    let opts = v["options"].as_array().unwrap();
    assert_eq!(opts.len(), 6);
    assert!(
        opts.iter()
            .all(|o| o["legal"] == true && o["worth"].is_null()),
        "{v}"
    );
    // A bad start, and a move not the mover's, in players' words.
    let (status, v) = get(&server.addr, &game_path("1,2,3/0,0,0,0,0,0/S", ""));
    assert_eq!(status, 400);
    assert!(
        v["error"].as_str().unwrap().contains("South's row has 3"),
        "{v}"
    );
    let (status, v) = get(&server.addr, &game_path("4,4,4,4,4,4/4,4,4,4,4,4/X", ""));
    assert_eq!(status, 400);
    assert!(
        v["error"]
            .as_str()
            .unwrap()
            .contains("'X' is not the side to move"),
        "{v}"
    );
    let (status, v) = get(&server.addr, &game_path("1,0,0,0,0,0/0,0,0,0,0,1/S", "a"));
    assert_eq!(status, 400);
    assert!(v["error"].as_str().unwrap().contains("North"), "{v}");
}

#[test]
fn a_random_position_holds_its_filter() {
    let dir = db_dir();
    let db = Database::open(dir).unwrap();
    let server = Server::start(dir, &[]);
    let a = &server.addr;
    for (result, sign) in [("won", 1), ("drawn", 0), ("lost", -1)] {
        for pinned in ["", "&pinned=true", "&pinned=false"] {
            let path = format!("/api/v1/random?seeds={MAX}&result={result}{pinned}");
            let (status, v) = get(a, &path);
            assert_eq!(status, 200, "{path}: {v}");
            let b = Board::from_notation(v["pos"].as_str().unwrap()).unwrap();
            let p = b.position();
            assert_eq!(p.seeds(), MAX);
            // A position to play from, not a game already over.
            assert!(p.moves(db.rules()).legal().next().is_some(), "{path}: {v}");
            let score = db.score(&p).unwrap();
            assert_eq!(
                (score.signum(), v["score"].as_i64()),
                (sign, Some(score as i64)),
                "{path}"
            );
            let env = db.envelope(&p).unwrap().unwrap();
            match pinned {
                "&pinned=true" => assert!(env.pinned(), "{path}: {v}"),
                "&pinned=false" => assert!(!env.pinned(), "{path}: {v}"),
                _ => {}
            }
        }
    }
    // Layer 0 holds one board, the game over there: tried whole, and said
    // of the layer.
    let (status, v) = get(a, "/api/v1/random?seeds=0&result=won");
    assert_eq!(status, 404, "{v}");
    assert_eq!(
        v["error"], "no position of layer 0 is one to play from and matches",
        "{v}"
    );
    let (status, v) = get(a, &format!("/api/v1/random?seeds={}", MAX + 1));
    assert_eq!(
        (status, v["kind"].as_str()),
        (404, Some("not_built")),
        "{v}"
    );
    assert!(
        v["error"]
            .as_str()
            .unwrap()
            .contains(&format!("up to {MAX} seeds")),
        "{v}"
    );
    for bad in [
        "seeds=x",
        "seeds=3&result=maybe",
        "seeds=3&pinned=yes",
        "result=won",
    ] {
        let (status, v) = get(a, &format!("/api/v1/random?{bad}"));
        assert_eq!(
            (status, v["kind"].as_str()),
            (400, Some("bad_input")),
            "{bad}: {v}"
        );
    }
}

/// `pos=` on the single route is the board seen from its side to move.
#[test]
fn the_single_route_takes_a_notation() {
    let server = Server::start(db_dir(), &[]);
    let mut rng = StdRng::seed_from_u64(7);
    for _ in 0..10 {
        let n = rng.gen_range(2..=MAX);
        let p = random_indexable(&mut rng, n, false);
        let mut b = Board::new(p.0, None).unwrap();
        let (_, mut want) = get(
            &server.addr,
            &format!("/api/v1/position?pits={}", pits(&p.0)),
        );
        // North's moves are labelled as North writes them.
        for m in want["moves"].as_array_mut().unwrap() {
            let pit = m["pit"].as_u64().unwrap() as usize;
            m["label"] = Side::North.label(pit).to_string().into();
        }
        // The same board, North to move: its rows swapped.
        b.pits.rotate_left(6);
        b.to_move = Side::North;
        let (status, v) = get(
            &server.addr,
            &format!("/api/v1/position?pos={}", b.notation()),
        );
        assert_eq!((status, &v), (200, &want));
    }
    let (status, v) = get(&server.addr, "/api/v1/position?pos=1,2/S");
    assert_eq!(status, 400, "{v}");
}

#[test]
fn health_names_a_deleted_and_a_truncated_table() {
    let dir = full_copy("awari-serve-health-");
    let server = Server::start(&dir, &[]);
    let (status, v) = get(&server.addr, "/api/v1/health");
    assert_eq!((status, v["status"].as_str()), (200, Some("ok")), "{v}");
    std::fs::remove_file(dir.join("scores.5")).unwrap();
    let f = std::fs::OpenOptions::new()
        .write(true)
        .open(dir.join("lower.9"))
        .unwrap();
    f.set_len(10).unwrap();
    drop(f);
    let (status, v) = get(&server.addr, "/api/v1/health");
    assert_eq!(
        (status, v["status"].as_str()),
        (503, Some("damaged")),
        "{v}"
    );
    let named: Vec<(u64, String)> = v["problems"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| {
            (
                p["layer"].as_u64().unwrap(),
                p["table"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    assert_eq!(
        named,
        [(5, "scores.5".to_string()), (9, "lower.9".to_string())],
        "{v}"
    );
    assert!(!v.to_string().contains(s(&dir)), "{v}");
}

/// Starts `awari serve --listen LISTEN`; its first line.
fn first_line(listen: &str) -> String {
    let mut child = common::awari_command()
        .args(["serve", "--db", s(db_dir()), "--listen", listen])
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut line = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    let _ = child.kill();
    let _ = child.wait();
    line
}

#[test]
fn listen_takes_a_host_name_and_a_bare_port() {
    let line = first_line("localhost:0");
    assert!(
        line.contains("http://127.0.0.1:") || line.contains("http://[::1]:"),
        "{line:?}"
    );
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let line = first_line(&port.to_string());
    assert!(
        line.contains(&format!("http://127.0.0.1:{port}/")),
        "{line:?}"
    );
}

#[test]
fn a_body_not_sent_in_time_is_a_408() {
    let server = Server::start(db_dir(), &["--timeout", "1"]);
    let t = Instant::now();
    let (status, body) = request(
        &server.addr,
        b"POST /api/v1/positions HTTP/1.1\r\nHost: x\r\nContent-Length: 50\r\n\r\n",
    );
    assert_eq!(status, 408, "{body}");
    assert!(body.contains("\"timeout\""), "{body}");
    assert!(t.elapsed() < Duration::from_secs(3), "{:?}", t.elapsed());
}
