//! The position notation (`A..F/a..f/S|N/captured`) in the command line:
//! `query --pos`, notation lines on `query --stdin`, `play --pos`, and game
//! records that start with North to move.

mod common;

use awari_egdb::game::{Board, Game, Side};
use awari_egdb::probe::Database;
use awari_egdb::rules::AWARI;
use common::{awari, db_dir, ok, s, scratch, usage_error};

const NORTH: &str = "1,0,0,0,0,3/0,0,2,0,0,0/N/20,22";

#[test]
fn query_takes_a_position_in_the_notation() {
    let b = Board::from_notation(NORTH).unwrap();
    assert_eq!(b.to_move, Side::North);
    let db = Database::open(db_dir()).unwrap();
    let want = db.answer(&b.position(), None).unwrap();
    let out = ok(&["query", "--db", s(db_dir()), "--pos", NORTH, "--json"]);
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["pos"], NORTH);
    assert_eq!(v["score"], want.score);
    assert_eq!(v["pits"], serde_json::json!(b.position().0));
    // As text, North's pits are labelled as players label them (a..f).
    let out = ok(&["query", "--db", s(db_dir()), "--pos", NORTH]);
    assert!(out.starts_with(NORTH), "{out}");
    assert!(out.contains("North to move"), "{out}");
    let best = (b'a' + want.best[0]) as char;
    assert!(out.contains(&format!("best: {best}")), "{out}");
    // A bad notation says what is wrong, in players' words.
    let line = usage_error(&[
        "query",
        "--db",
        s(db_dir()),
        "--pos",
        "4,4,4,4,4,4/4,4,x,4,4,4/S",
    ]);
    assert!(line.contains("pit c: 'x'"), "{line}");
}

#[test]
fn query_stdin_reads_notation_lines() {
    let db = Database::open(db_dir()).unwrap();
    let b = Board::from_notation(NORTH).unwrap();
    let out = awari(
        &["query", "--db", s(db_dir()), "--stdin", "--json"],
        Some(&format!("{NORTH}\n0 0 0 0 0 1 0 0 0 0 0 0\n")),
    );
    assert!(out.status.success());
    let lines: Vec<serde_json::Value> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 2);
    assert_eq!(lines[0]["score"], db.score(&b.position()).unwrap());
}

#[test]
fn play_starts_from_a_notation_and_records_north_first() {
    let dir = scratch("awari-notation-play-");
    let rec = dir.join("game.txt");
    let out = awari(
        &[
            "play",
            "--db",
            s(db_dir()),
            "--computer",
            "none",
            "--pos",
            NORTH,
        ],
        Some(&format!("c\nsave {}\nquit\n", rec.display())),
    );
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{text}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(text.contains("North plays c"), "{text}");
    let record = std::fs::read_to_string(&rec).unwrap();
    assert!(record.contains(&format!("start {NORTH}")), "{record}");
    // The record reads back: the same start, the same move.
    let g = Game::from_record(&record).unwrap();
    assert_eq!(g.start(), &Board::from_notation(NORTH).unwrap());
    assert_eq!(g.moves(), &['c']);
    let mut again = Game::new(Board::from_notation(NORTH).unwrap(), AWARI);
    again.play("c").unwrap();
    assert_eq!(g.board(), again.board());
}
